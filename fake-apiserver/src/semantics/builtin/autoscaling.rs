//! HorizontalPodAutoscalers (`autoscaling/v2`): `SetDefaults_HorizontalPodAutoscaler`, their
//! initial status, and the replica bounds and scale target of `validateHorizontalPodAutoscalerSpec`.
//! No autoscaler runs, so the status stays as created unless a client writes it.

use serde_json::{Map, Value, json};

use crate::error::FieldError;
use crate::storage::object::ensure_object;
use kube_codegen_apimachinery::validation;

use super::set_default;

/// The status a new HorizontalPodAutoscaler gets (Go writes its nil `currentMetrics`).
pub(super) fn initial_status() -> Value {
    json!({"currentMetrics": null, "desiredReplicas": 0})
}

/// `minReplicas` 1, a CPU utilisation target of 80% without metrics, and with `behavior` every
/// unset scaling rule filled in.
pub(super) fn hpa_defaults(obj: &mut Value) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    set_default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) else {
        return;
    };
    let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    // Scale-down's stabilization window stays unset: the controller reads its own flag then.
    let down = json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    for (key, defaults) in [("scaleUp", up), ("scaleDown", down)] {
        let rules = behavior.entry(key).or_insert_with(|| json!({}));
        if !rules.is_object() {
            *rules = json!({});
        }
        let rules: &mut Map<String, Value> = ensure_object(rules);
        if let Value::Object(d) = defaults {
            for (k, v) in d {
                set_default(rules, &k, v);
            }
        }
    }
}

/// The replica bounds, `ValidateCrossVersionObjectReference` of the scale target and the
/// scale-to-zero rule, in kube-apiserver 1.37's order (`HPAScaleToZero` is on, so `minReplicas`
/// may be 0; its declarative validation reports a missing `maxReplicas` after the rest).
pub(super) fn hpa_errors(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut errs = Vec::new();
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if let Some(min) = min
        && min < 0
    {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            min.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    if max < 0 {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            max.to_string(),
            "must be greater than or equal to 1",
        ));
    }
    if let Some(min) = min
        && max != 0
        && max < min
    {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            max.to_string(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec
        .get("scaleTargetRef")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for key in ["kind", "name"] {
        let field = format!("spec.scaleTargetRef.{key}");
        let v = target.get(key).and_then(Value::as_str).unwrap_or_default();
        if v.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else {
            for msg in validation::is_path_segment_name(v, false) {
                errs.push(FieldError::invalid_str(&field, v, msg));
            }
        }
    }
    let api_version = target
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let problem = match api_version.split('/').count() {
        1 => Some("apiVersion must specify API group".to_string()),
        2 if api_version.starts_with('/') => Some("apiVersion must specify API group".to_string()),
        2 => None,
        _ => Some(format!("unexpected GroupVersion string: {api_version}")),
    };
    if let Some(msg) = problem {
        errs.push(FieldError::invalid_str(
            "spec.scaleTargetRef.apiVersion",
            api_version,
            msg,
        ));
    }
    let scales_on_objects = spec
        .get("metrics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|m| {
            matches!(
                m.get("type").and_then(Value::as_str),
                Some("Object" | "External")
            )
        });
    if min == Some(0) && !scales_on_objects {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    if max == 0 {
        errs.push(FieldError::required("spec.maxReplicas", ""));
    }
    errs
}
