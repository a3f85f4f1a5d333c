//! The scale subresource (`autoscaling/v1` `Scale`): of custom resources through their CRD's
//! `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath`, and of Deployments,
//! ReplicaSets, StatefulSets and ReplicationControllers through `spec.replicas`,
//! `status.replicas` and their label selector.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::semantics::resources::{Builtin, Resource, ScalePaths};
use crate::storage::object;

/// `.spec.replicas` → `["spec", "replicas"]`.
fn segments(path: &str) -> Vec<&str> {
    path.split('.').filter(|s| !s.is_empty()).collect()
}

fn get<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for s in segments(path) {
        cur = cur.get(s)?;
    }
    Some(cur)
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the custom resource validator says when a replicas path holds no integer.
pub(crate) fn path_errors(obj: &Value, paths: &ScalePaths) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for path in [&paths.spec_replicas, &paths.status_replicas] {
        if path.is_empty() {
            continue;
        }
        if let Some(v) = get(obj, path)
            && !v.is_i64()
            && !v.is_u64()
        {
            errs.push(FieldError::invalid(
                path.clone(),
                "0",
                format!(
                    "{path} accessor error: {} is of the type {}, expected int64",
                    go_value(v),
                    go_type(v)
                ),
            ));
        }
    }
    errs
}

/// `matchLabels` and `matchExpressions` as a selector string (`app=x,tier in (a,b)`).
fn selector_string(sel: &Value, rc: bool) -> String {
    let mut parts = Vec::new();
    let labels = if rc {
        Some(sel)
    } else {
        sel.get("matchLabels")
    };
    if let Some(Value::Object(m)) = labels {
        for (k, v) in m {
            parts.push(format!("{k}={}", v.as_str().unwrap_or("")));
        }
    }
    if let Some(Value::Array(exprs)) = sel.get("matchExpressions").filter(|_| !rc) {
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = object::strs(e.get("values")).collect();
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => parts.push(format!("{key} in ({})", values.join(","))),
                "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.sort();
    parts.join(",")
}

/// The `Scale` of an object.
pub(crate) fn to_scale(res: &Resource, obj: &Value) -> Value {
    let mut meta = Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = object::meta(obj).and_then(|m| m.get(k)) {
            meta.insert(k.into(), v.clone());
        }
    }
    let int = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap_or(0);
    let (spec_replicas, status_replicas, selector) = match (&res.custom, res.builtin) {
        (Some(c), _) => {
            let paths = c.scale.clone().unwrap_or_default();
            let selector = if paths.label_selector.is_empty() {
                None
            } else {
                get(obj, &paths.label_selector)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            (
                int(get(obj, &paths.spec_replicas)),
                int(get(obj, &paths.status_replicas)),
                selector,
            )
        }
        (None, b) => (
            int(obj.pointer("/spec/replicas")),
            int(obj.pointer("/status/replicas")),
            obj.pointer("/spec/selector")
                .map(|s| selector_string(s, b == Some(Builtin::ReplicationController))),
        ),
    };
    let mut status = Map::new();
    status.insert("replicas".into(), json!(status_replicas));
    if let Some(s) = selector {
        status.insert("selector".into(), json!(s));
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
           "spec": {"replicas": spec_replicas}, "status": status})
}

/// The object with `spec.replicas` (or the CRD's path) set from a `Scale`.
pub(crate) fn with_replicas(res: &Resource, obj: &Value, scale: &Value) -> ApiResult<Value> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                go_type(v).replace("float64", "number")
            ))
        })?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            object::name(obj),
            vec![FieldError::invalid(
                "spec.replicas",
                replicas.to_string(),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let path = match &res.custom {
        Some(c) => c
            .scale
            .as_ref()
            .map(|p| p.spec_replicas.clone())
            .unwrap_or_else(|| ".spec.replicas".into()),
        None => ".spec.replicas".into(),
    };
    let mut out = obj.clone();
    let segs = segments(&path);
    let Some((last, parents)) = segs.split_last() else {
        return Ok(out);
    };
    let mut cur = &mut out;
    for s in parents {
        let m = crate::storage::object::ensure_object(cur);
        cur = m.entry(s.to_string()).or_insert_with(|| json!({}));
    }
    crate::storage::object::ensure_object(cur).insert(last.to_string(), json!(replicas));
    // The scale's resourceVersion is the object's precondition.
    let rv = object::resource_version(scale);
    if !rv.is_empty() {
        object::set_meta(&mut out, "resourceVersion", Some(json!(rv)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_render_like_label_selectors() {
        let sel = json!({"matchLabels": {"tier": "y", "app": "x"}, "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]});
        assert_eq!(selector_string(&sel, false), "app=x,env in (a,b),tier=y");
        let errs = path_errors(
            &json!({"spec": {"replicas": "x"}}),
            &ScalePaths {
                spec_replicas: ".spec.replicas".into(),
                ..Default::default()
            },
        );
        assert_eq!(
            errs[0].to_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64"
        );
    }
}
