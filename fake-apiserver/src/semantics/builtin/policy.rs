//! PodDisruptionBudgets (`policy/v1`): their initial status and `ValidatePodDisruptionBudgetSpec`.
//! No disruption controller runs, so the status stays at its zeros unless a client writes it.

use serde_json::{Value, json};

use crate::error::{FieldError, go_quote};
use crate::semantics::validation::label_selector_errors;
use kube_codegen_apimachinery::validation;

use super::workload::NONNEGATIVE;

/// The status a new PodDisruptionBudget gets (its counts are not `omitempty` in Go).
pub(super) fn initial_status() -> Value {
    json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0})
}

/// `ValidatePodDisruptionBudgetSpec`, in its order.
pub(super) fn pdb_errors(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut errs = Vec::new();
    let min = spec.get("minAvailable").filter(|v| !v.is_null());
    let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
    if min.is_some() && max.is_some() {
        errs.push(FieldError::invalid(
            "spec",
            go_spec(&spec),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (key, v) in [("minAvailable", min), ("maxUnavailable", max)] {
        if let Some(v) = v {
            errs.extend(int_or_percent_errors(v, &format!("spec.{key}")));
        }
    }
    errs.extend(label_selector_errors(spec.get("selector"), "spec.selector"));
    const POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];
    if let Some(p) = spec
        .get("unhealthyPodEvictionPolicy")
        .and_then(Value::as_str)
        && !POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            p,
            POLICIES,
        ));
    }
    errs
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of an IntOrString.
pub(super) fn int_or_percent_errors(v: &Value, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match v {
        Value::String(s) => {
            let percent = s
                .strip_suffix('%')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            match percent {
                None => errs.push(FieldError::invalid(
                    field,
                    go_quote(s),
                    validation::regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        &["1%", "93%"],
                    ),
                )),
                Some(n) if n.parse::<u64>().map_or(true, |n| n > 100) => errs.push(
                    FieldError::invalid(field, go_quote(s), "must not be greater than 100%"),
                ),
                Some(_) => {}
            }
        }
        other => {
            if other.as_i64().is_some_and(|n| n < 0) {
                errs.push(FieldError::invalid(field, other.to_string(), NONNEGATIVE));
            }
        }
    }
    errs
}

/// The internal spec as Go prints it in the error: its fields by their Go names, the selector
/// (which has JSON tags) as JSON.
fn go_spec(spec: &Value) -> String {
    let field = |k: &str| {
        spec.get(k)
            .filter(|v| !v.is_null())
            .map_or_else(|| "null".to_string(), Value::to_string)
    };
    let selector = spec.get("selector").filter(|v| !v.is_null()).map_or_else(
        || "null".to_string(),
        |s| {
            let mut parts = Vec::new();
            for key in ["matchLabels", "matchExpressions"] {
                if let Some(v) = s.get(key).filter(|v| {
                    !v.is_null()
                        && v.as_object().is_none_or(|m| !m.is_empty())
                        && v.as_array().is_none_or(|a| !a.is_empty())
                }) {
                    parts.push(format!("\"{key}\":{v}"));
                }
            }
            format!("{{{}}}", parts.join(","))
        },
    );
    format!(
        "{{\"MinAvailable\":{},\"Selector\":{selector},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
        field("minAvailable"),
        field("maxUnavailable"),
        field("unhealthyPodEvictionPolicy"),
    )
}
