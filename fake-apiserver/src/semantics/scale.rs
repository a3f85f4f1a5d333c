//! The scale subresource (`autoscaling/v1` `Scale`): of custom resources through their CRD's
//! `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath`, and of Deployments,
//! ReplicaSets, StatefulSets and ReplicationControllers through `spec.replicas`,
//! `status.replicas` and their label selector.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::semantics::resources::{Builtin, Resource, ScalePaths};
use crate::semantics::{builtin_schema, fields};
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

/// A `Scale` sent to be written, as kube-apiserver decodes it: in the request's namespace,
/// with a status of 0 replicas when it has none (Go's `ScaleStatus.Replicas` is always
/// encoded). Admission sees this.
pub(crate) fn decoded(scale: &Value, namespace: &str) -> Value {
    let mut out = scale.clone();
    if !namespace.is_empty() && object::namespace(&out).is_empty() {
        object::set_meta(&mut out, "namespace", Some(Value::from(namespace)));
    }
    if let Some(m) = out.as_object_mut() {
        let status = m.entry("status").or_insert(Value::Null);
        if !status.is_object() {
            *status = Value::Object(Map::new());
        }
        if let Some(st) = status.as_object_mut() {
            st.entry("replicas").or_insert(Value::from(0));
        }
    }
    out
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
    // `spec.replicas` is `omitempty` in Go's `Scale`; `status.replicas` is not.
    let spec = if spec_replicas == 0 {
        json!({})
    } else {
        json!({"replicas": spec_replicas})
    };
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
           "spec": spec, "status": status})
}

/// The path of the field a `Scale`'s `spec.replicas` maps to: the CRD's `specReplicasPath`,
/// `spec.replicas` for the built-in kinds.
pub(crate) fn spec_replicas_path(res: &Resource) -> Vec<String> {
    segments(spec_replicas_json_path(res))
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// [`spec_replicas_path`] as the CRD writes it: `.spec.replicas`.
fn spec_replicas_json_path(res: &Resource) -> &str {
    match res.custom.as_ref().and_then(|c| c.scale.as_ref()) {
        Some(p) => p.spec_replicas.as_str(),
        None => ".spec.replicas",
    }
}

/// A `Scale`'s `spec.replicas`, checked as kube-apiserver decodes and validates a `Scale`:
/// `None` when it has none.
pub(crate) fn replicas_of(scale: &Value, name: &str) -> ApiResult<Option<i64>> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => return Ok(None),
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
            name,
            vec![FieldError::invalid(
                "spec.replicas",
                replicas.to_string(),
                "must be greater than or equal to 0",
            )],
        ));
    }
    Ok(Some(replicas))
}

/// Sets the field `spec.replicas` maps to (see [`spec_replicas_path`]) in `obj`.
pub(crate) fn set_replicas(res: &Resource, obj: &mut Value, replicas: i64) {
    let path = spec_replicas_path(res);
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = obj;
    for s in parents {
        cur = object::ensure_object(cur)
            .entry(s.clone())
            .or_insert_with(|| json!({}));
    }
    object::ensure_object(cur).insert(last.clone(), json!(replicas));
}

/// The object with its replicas set from a `Scale` (an update or a patch of `/scale`); a
/// `Scale` without replicas sets 0, as Go decodes it.
pub(crate) fn with_replicas(res: &Resource, obj: &Value, scale: &Value) -> ApiResult<Value> {
    let replicas = replicas_of(scale, object::name(obj))?.unwrap_or(0);
    let mut out = obj.clone();
    set_replicas(res, &mut out, replicas);
    // The scale's resourceVersion is the object's precondition.
    let rv = object::resource_version(scale);
    if !rv.is_empty() {
        object::set_meta(&mut out, "resourceVersion", Some(json!(rv)));
    }
    Ok(out)
}

/// kube-apiserver answers a read of a custom resource's `Scale` with a 500 while the object
/// has no replicas field.
pub(crate) fn check_readable(res: &Resource, obj: &Value) -> ApiResult<()> {
    let path = spec_replicas_json_path(res);
    if res.is_custom() && get(obj, path).is_none() {
        return Err(ApiError::internal(format!(
            "the spec replicas field {} does not exist",
            crate::error::go_quote(path)
        )));
    }
    Ok(())
}

/// An applied `Scale` checked against `Scale`'s schema, as the typed patch that server-side
/// apply builds checks it: an undeclared field or a value of the wrong type is a 500.
pub(crate) fn check_typed(scale: &Value) -> ApiResult<()> {
    let def = builtin_schema::scale_definition();
    let bytes = serde_json::to_vec(scale).unwrap_or_default();
    let problem = fields::scan(&bytes, Some(&fields::builtin_root(&def)))
        .unknown_paths()
        .first()
        .map(|first| format!(".{first}: field not declared in schema"))
        .or_else(|| fields::typed_patch_error(scale, &def));
    match problem {
        Some(problem) => Err(ApiError::new(
            500,
            "",
            format!(
                "failed to create typed patch object (/{}; autoscaling/v1, Kind=Scale): {problem}",
                object::name(scale)
            ),
        )),
        None => Ok(()),
    }
}

/// The apply configuration of the object that an applied `Scale` (already
/// [typed](check_typed)) stands for: the URL's name, the `Scale`'s resourceVersion
/// precondition if it has one, and its replicas if it sets them.
pub(crate) fn apply_config(res: &Resource, scale: &Value, name: &str) -> Value {
    let mut config = json!({"apiVersion": res.api_version(), "kind": res.kind,
                            "metadata": {"name": name}});
    if let Some(rv) = object::meta(scale).and_then(|m| m.get("resourceVersion")) {
        object::set_meta(&mut config, "resourceVersion", Some(rv.clone()));
    }
    // A `spec` of its own, even empty, is a field the applier keeps on the `Scale`
    // (`managed::through_scale`).
    if scale.get("spec").is_some_and(Value::is_object) {
        config["spec"] = json!({});
    }
    if let Some(replicas) = scale.pointer("/spec/replicas").and_then(Value::as_i64) {
        set_replicas(res, &mut config, replicas);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_resource_without_its_replicas_field_has_no_readable_scale() {
        let res = Resource {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            namespaced: true,
            subresources: vec!["scale".into()],
            short_names: Vec::new(),
            categories: Vec::new(),
            builtin: None,
            custom: Some(std::sync::Arc::new(
                crate::semantics::resources::CustomInfo {
                    scale: Some(ScalePaths {
                        spec_replicas: ".spec.size".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )),
        };
        let err = check_readable(&res, &json!({"spec": {}})).err();
        assert_eq!(
            err.map(|e| (e.code, e.message)),
            Some((
                500,
                "Internal error occurred: the spec replicas field \".spec.size\" does not exist"
                    .to_string()
            ))
        );
        assert!(check_readable(&res, &json!({"spec": {"size": 2}})).is_ok());
    }

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
