//! Workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, ReplicationControllers) and
//! Jobs: their defaults, spec and strategy rules, and selectors.

use serde_json::{Map, Value, json};

use crate::error::{FieldError, go_quote};
use crate::semantics::resources::Builtin;
use crate::semantics::str_at;
use crate::storage::object::{self, ensure_object};
use kube_codegen_apimachinery::validation;

use super::pod::{default_pod_spec, pod_spec_errors};
use super::set_default;

/// apps/v1's rule that a workload's selector never changes.
pub(super) fn selector_update_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let (before, after) = (old.pointer("/spec/selector"), new.pointer("/spec/selector"));
    if before == after {
        return Vec::new();
    }
    let value = after.map_or_else(|| "null".to_string(), Value::to_string);
    vec![FieldError::invalid(
        "spec.selector",
        value,
        "field is immutable",
    )]
}

pub(super) fn deployment_like_defaults(obj: &mut Value, kind: Builtin) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    if matches!(
        kind,
        Builtin::Deployment
            | Builtin::ReplicaSet
            | Builtin::StatefulSet
            | Builtin::ReplicationController
    ) {
        set_default(spec, "replicas", json!(1));
    }
    let mut rc_labels = None;
    if kind == Builtin::ReplicationController {
        // `SetDefaults_ReplicationController`: an empty selector, and the RC's own empty
        // labels, are the template's labels.
        let template_labels = spec
            .get("template")
            .and_then(|t| t.pointer("/metadata/labels"))
            .filter(|l| !l.is_null())
            .cloned();
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
        if let Some(l) = template_labels {
            if empty(spec.get("selector")) {
                spec.insert("selector".into(), l.clone());
            }
            rc_labels = Some(l);
        }
    } else if kind != Builtin::ReplicaSet {
        // Deployments, StatefulSets and DaemonSets keep old revisions; a ReplicaSet has none.
        set_default(spec, "revisionHistoryLimit", json!(10));
    }
    // A strategy given without a type (Go clients send `strategy: {}`) is defaulted inside.
    let strategy = |spec: &mut Map<String, Value>, key: &str, rolling: Value| {
        let st = ensure_object(spec.entry(key).or_insert_with(|| json!({})));
        set_default(st, "type", json!("RollingUpdate"));
        if st.get("type") == Some(&json!("RollingUpdate")) {
            let ru = ensure_object(st.entry("rollingUpdate").or_insert_with(|| json!({})));
            if let Value::Object(d) = rolling {
                for (k, v) in d {
                    set_default(ru, &k, v);
                }
            }
        }
    };
    match kind {
        Builtin::Deployment => {
            set_default(spec, "progressDeadlineSeconds", json!(600));
            strategy(
                spec,
                "strategy",
                json!({"maxUnavailable": "25%", "maxSurge": "25%"}),
            );
        }
        Builtin::StatefulSet => {
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            strategy(
                spec,
                "updateStrategy",
                json!({"partition": 0, "maxUnavailable": 1}),
            );
            let retention = ensure_object(
                spec.entry("persistentVolumeClaimRetentionPolicy")
                    .or_insert_with(|| json!({})),
            );
            set_default(retention, "whenDeleted", json!("Retain"));
            set_default(retention, "whenScaled", json!("Retain"));
            // Each claim template is a whole PersistentVolumeClaim to Go, defaulted as one.
            if let Some(Value::Array(claims)) = spec.get_mut("volumeClaimTemplates") {
                for claim in claims.iter_mut().map(ensure_object) {
                    set_default(claim, "apiVersion", json!("v1"));
                    set_default(claim, "kind", json!("PersistentVolumeClaim"));
                    let claim_spec =
                        ensure_object(claim.entry("spec").or_insert_with(|| json!({})));
                    set_default(claim_spec, "volumeMode", json!("Filesystem"));
                    let status = ensure_object(claim.entry("status").or_insert_with(|| json!({})));
                    set_default(status, "phase", json!("Pending"));
                }
            }
        }
        Builtin::DaemonSet => {
            strategy(
                spec,
                "updateStrategy",
                json!({"maxUnavailable": 1, "maxSurge": 0}),
            );
        }
        _ => {}
    }
    if let Some(template_spec) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
        default_pod_spec(template_spec);
    }
    if let Some(labels) = rc_labels {
        let meta = object::meta_mut(obj);
        if meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        {
            meta.insert("labels".into(), labels);
        }
    }
}

/// A workload's spec as `ValidateDeploymentSpec` and its siblings check it, in their order:
/// replicas, selector, template labels against the selector, the pod template (whose restart
/// policy must be `Always`), then a Deployment's strategy.
pub(super) fn workload_errors(obj: &Value, kind: Builtin) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if kind != Builtin::DaemonSet
        && let Some(n) = obj.pointer("/spec/replicas").and_then(Value::as_i64)
        && n < 0
    {
        errs.push(FieldError::invalid(
            "spec.replicas",
            n.to_string(),
            NONNEGATIVE,
        ));
    }
    let selector = obj.pointer("/spec/selector");
    let have = object::string_map(obj.pointer("/spec/template/metadata/labels"));
    // A missing selector selects nothing, so no template matches it either.
    let matches = match selector {
        None => {
            errs.push(FieldError::required("spec.selector", ""));
            false
        }
        Some(sel) => {
            let want = if kind == Builtin::ReplicationController {
                object::string_map(Some(sel))
            } else {
                object::string_map(sel.get("matchLabels"))
            };
            want.iter().all(|(k, v)| have.get(k) == Some(v))
        }
    };
    if !matches {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            serde_json::to_string(&have).unwrap_or_default(),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(pod_spec_errors(
        obj.pointer("/spec/template/spec"),
        "spec.template.spec",
    ));
    let policy = str_at(obj, "/spec/template/spec/restartPolicy");
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if kind == Builtin::Deployment {
        errs.extend(deployment_strategy_errors(obj.pointer("/spec/strategy")));
    }
    errs
}

pub(super) const NONNEGATIVE: &str = "must be greater than or equal to 0";

/// `ValidateDeploymentStrategy` with `ValidateRollingUpdateDeployment`.
pub(super) fn deployment_strategy_errors(strategy: Option<&Value>) -> Vec<FieldError> {
    let rolling = strategy.and_then(|s| s.get("rollingUpdate"));
    match strategy.map(|s| str_at(s, "/type")).unwrap_or("") {
        "Recreate" if rolling.is_some() => vec![FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" => rolling.map(rolling_update_errors).unwrap_or_default(),
        other => {
            // Go prints the internal struct: `{"Type":"Blue","RollingUpdate":null}`.
            let ru = rolling.map_or_else(
                || "null".to_string(),
                |r| {
                    let field = |k: &str| r.get(k).map_or_else(|| "null".into(), Value::to_string);
                    format!(
                        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                        field("maxUnavailable"),
                        field("maxSurge")
                    )
                },
            );
            vec![FieldError {
                field: "spec.strategy".into(),
                kind: crate::error::FieldErrorKind::NotSupported(
                    format!("{{\"Type\":{},\"RollingUpdate\":{ru}}}", go_quote(other)),
                    vec![go_quote("Recreate"), go_quote("RollingUpdate")],
                ),
                detail: String::new(),
            }]
        }
    }
}

/// A rolling update's `maxUnavailable` and `maxSurge`: non-negative numbers or percentages,
/// not both zero, `maxUnavailable` at most 100%.
pub(super) fn rolling_update_errors(ru: &Value) -> Vec<FieldError> {
    const AT: &str = "spec.strategy.rollingUpdate";
    let mut errs = Vec::new();
    // The value as Go renders an IntOrString, and as a number (a percentage's number).
    let value = |k: &str| {
        ru.get(k).map(|v| match v {
            Value::String(s) => (
                go_quote(s),
                s.strip_suffix('%').and_then(|n| n.parse::<i64>().ok()),
                true,
            ),
            other => (other.to_string(), other.as_i64(), false),
        })
    };
    for key in ["maxUnavailable", "maxSurge"] {
        let Some((shown, number, percent)) = value(key) else {
            continue;
        };
        let field = format!("{AT}.{key}");
        if percent && number.is_none_or(|n| n < 0) {
            errs.push(FieldError::invalid(
                field,
                shown,
                validation::regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    "[0-9]+%",
                    &["1%", "93%"],
                ),
            ));
        } else if !percent && number.is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid(field, shown, NONNEGATIVE));
        }
    }
    let zero = |k: &str| value(k).is_none_or(|(_, n, _)| n == Some(0));
    if zero("maxUnavailable")
        && zero("maxSurge")
        && let Some((shown, ..)) = value("maxUnavailable")
    {
        errs.push(FieldError::invalid(
            format!("{AT}.maxUnavailable"),
            shown,
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    if let Some((shown, Some(n), true)) = value("maxUnavailable")
        && n > 100
    {
        errs.push(FieldError::invalid(
            format!("{AT}.maxUnavailable"),
            shown,
            "must not be greater than 100%",
        ));
    }
    errs
}

/// `SetDefaults_Job` (the labels copied from the template are what a read returns, as
/// kube-apiserver defaults the stored object again when it decodes it).
pub(super) fn job_defaults(obj: &mut Value) {
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let unset = |m: &Map<String, Value>, k: &str| m.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_default(spec, "podReplacementPolicy", json!(replacement));
    set_default(spec, "manualSelector", json!(false));
    if let Some(Value::Object(labels)) = template_labels {
        labels_from_template(obj, labels);
    }
}

/// `SetDefaults_Job`: a Job without labels of its own gets its pod template's.
fn labels_from_template(obj: &mut Value, labels: Map<String, Value>) {
    if labels.is_empty() {
        return;
    }
    let meta = object::meta_mut(obj);
    if meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), Value::Object(labels));
    }
}

/// The Job strategy's `generateSelector`: unless `spec.manualSelector`, the pod template gets
/// the job-name and controller-uid labels and the selector the controller-uid one.
pub(super) fn job_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let name = object::name(obj).to_string();
    let uid = object::uid(obj).to_string();
    let generated = [
        ("job-name", &name),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("batch.kubernetes.io/controller-uid", &uid),
    ];
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let template = ensure_object(spec.entry("template").or_insert_with(|| json!({})));
    let meta = ensure_object(template.entry("metadata").or_insert_with(|| json!({})));
    let labels = ensure_object(meta.entry("labels").or_insert_with(|| json!({})));
    for (k, v) in generated {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    let labels = labels.clone();
    let selector = ensure_object(spec.entry("selector").or_insert_with(|| json!({})));
    let match_labels = ensure_object(selector.entry("matchLabels").or_insert_with(|| json!({})));
    match_labels
        .entry("batch.kubernetes.io/controller-uid")
        .or_insert_with(|| json!(uid));
    labels_from_template(obj, labels);
}

/// A Job's pods may only restart `OnFailure` or `Never`.
pub(super) fn job_restart_policy_errors(obj: &Value) -> Vec<FieldError> {
    restart_policy_errors(
        obj.pointer("/spec/template/spec/restartPolicy"),
        "spec.template.spec.restartPolicy",
    )
}

/// The restart policy of a Job's pod template (`policy`, at `field`): `OnFailure` or `Never`.
pub(super) fn restart_policy_errors(policy: Option<&Value>, field: &str) -> Vec<FieldError> {
    const DETAIL: &str = "valid values: \"OnFailure\", \"Never\"";
    match policy.and_then(Value::as_str).unwrap_or_default() {
        "OnFailure" | "Never" => Vec::new(),
        "" | "Always" => vec![FieldError::required(field, DETAIL)],
        other => vec![FieldError::not_supported(
            field,
            other,
            &["OnFailure", "Never"],
        )],
    }
}

/// The annotation apps/v1 keeps a DaemonSet's template generation in (the internal
/// `spec.templateGeneration`): 1 on creation, one more each time the template changes.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// A DaemonSet's template generation, from its annotation (0 without one).
pub(super) fn template_generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

/// Sets a DaemonSet's template generation annotation.
pub(super) fn set_template_generation(obj: &mut Value, generation: i64) {
    let annotations = ensure_object(
        object::meta_mut(obj)
            .entry("annotations")
            .or_insert_with(|| json!({})),
    );
    annotations.insert(TEMPLATE_GENERATION.into(), json!(generation.to_string()));
}
