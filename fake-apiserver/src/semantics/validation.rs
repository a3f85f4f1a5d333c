//! Object metadata validation (`ValidateObjectMeta`), with the API server's wording.

use serde_json::Value;

use crate::error::{FieldError, go_quote};
use kube_codegen_apimachinery::validation::{self, NameRule};

/// The errors for a name under a rule (empty when valid), one per problem, as
/// `ValidateObjectMeta` reports them.
pub(crate) fn name_errors(field: &str, name: &str, rule: NameRule) -> Vec<FieldError> {
    rule.check(name, false)
        .into_iter()
        .map(|msg| FieldError::invalid_str(field, name, msg))
        .collect()
}

/// `IsDNS1123Label` as a yes/no question.
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    validation::is_dns1123_label(s).is_empty()
}

/// `ValidateObjectMeta` for a create or update: name (unless `generated`), namespace
/// presence, labels, annotations, owner references and finalizers (with the built-in kinds'
/// extra finalizer rule when `builtin`).
pub(crate) fn object_meta_errors(
    obj: &Value,
    rule: NameRule,
    namespaced: bool,
    builtin: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::storage::object::name(obj);
    let generate_name = crate::storage::object::meta_str(obj, "generateName");
    // The prefix is checked as a name prefix (a trailing '-' allowed), before the name.
    if !generate_name.is_empty() {
        errs.extend(
            rule.check(generate_name, true)
                .into_iter()
                .map(|msg| FieldError::invalid_str("metadata.generateName", generate_name, msg)),
        );
    }
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        errs.extend(name_errors("metadata.name", name, rule));
    }
    let ns = crate::storage::object::namespace(obj);
    if namespaced && ns.is_empty() {
        errs.push(FieldError::required("metadata.namespace", ""));
    } else if !namespaced && !ns.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(meta) = crate::storage::object::meta(obj) {
        if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
            for (k, v) in labels {
                for msg in validation::is_qualified_name(k) {
                    errs.push(FieldError::invalid_str("metadata.labels", k, msg));
                }
                match v.as_str() {
                    Some(s) => {
                        for msg in validation::is_label_value(s) {
                            errs.push(FieldError::invalid_str("metadata.labels", s, msg));
                        }
                    }
                    None => errs.push(FieldError::invalid(
                        "metadata.labels",
                        v.to_string(),
                        "label values must be strings",
                    )),
                }
            }
        }
        if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
            let mut total = 0usize;
            for (k, v) in annotations {
                total += k.len() + v.as_str().map_or(0, str::len);
                for msg in validation::is_qualified_name(&k.to_lowercase()) {
                    errs.push(FieldError::invalid_str("metadata.annotations", k, msg));
                }
            }
            if total > 256 * 1024 {
                errs.push(FieldError::too_long("metadata.annotations", 256 * 1024));
            }
        }
        if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
            errs.extend(owner_reference_errors(refs));
        }
        if let Some(finalizers) = meta.get("finalizers").and_then(Value::as_array) {
            errs.extend(finalizer_errors(finalizers, builtin));
        }
    }
    errs
}

/// The finalizers' errors in kube-apiserver's order: every name that is not a qualified name
/// (on `metadata.finalizers`, without an index), `orphan` beside `foregroundDeletion`, then for
/// a built-in kind every name that is neither standard nor domain-qualified (with its index;
/// custom resources get a warning for those instead).
fn finalizer_errors(finalizers: &[Value], builtin: bool) -> Vec<FieldError> {
    const FIELD: &str = "metadata.finalizers";
    const STANDARD: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];
    let mut errs = Vec::new();
    let names: Vec<&str> = finalizers.iter().filter_map(Value::as_str).collect();
    for (i, f) in finalizers.iter().enumerate() {
        match f.as_str() {
            Some(s) => errs.extend(
                validation::is_qualified_name(s)
                    .into_iter()
                    .map(|msg| FieldError::invalid_str(FIELD, s, msg)),
            ),
            None => errs.push(FieldError::invalid(
                format!("{FIELD}[{i}]"),
                f.to_string(),
                "must be a string",
            )),
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errs.push(FieldError::invalid(
            FIELD,
            Value::from(names.clone()).to_string(),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    if builtin {
        for (i, f) in finalizers.iter().enumerate() {
            if let Some(s) = f.as_str()
                && !s.contains('/')
                && !STANDARD.contains(&s)
            {
                errs.push(FieldError::invalid_str(
                    format!("{FIELD}[{i}]"),
                    s,
                    "name is neither a standard finalizer name nor is it fully qualified",
                ));
            }
        }
    }
    errs
}

/// An owner reference as Go's `%v` of the struct prints it in errors (JSON, field order).
fn owner_reference_json(r: &Value) -> String {
    let mut m = serde_json::Map::new();
    for k in [
        "apiVersion",
        "kind",
        "name",
        "uid",
        "controller",
        "blockOwnerDeletion",
    ] {
        if let Some(v) = r.get(k) {
            m.insert(k.to_string(), v.clone());
        }
    }
    // serde_json sorts keys: write them in the struct's order instead.
    let parts: Vec<String> = [
        "apiVersion",
        "kind",
        "name",
        "uid",
        "controller",
        "blockOwnerDeletion",
    ]
    .iter()
    .filter_map(|k| m.get(*k).map(|v| format!("{}:{v}", go_quote(k))))
    .collect();
    format!("{{{}}}", parts.join(","))
}

/// `ValidateOwnerReferences`.
fn owner_reference_errors(refs: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut controllers = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let field = |f: &str| format!("metadata.ownerReferences[{i}].{f}");
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let api_version = s("apiVersion");
        let version = api_version.rsplit('/').next().unwrap_or("");
        if api_version.is_empty() {
            errs.push(FieldError::required(
                field("apiVersion"),
                "must not be empty",
            ));
        } else if version.is_empty() {
            errs.push(FieldError::invalid_str(
                field("apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if s("kind").is_empty() {
            errs.push(FieldError::required(field("kind"), "must not be empty"));
        }
        if s("name").is_empty() {
            errs.push(FieldError::required(field("name"), "must not be empty"));
        }
        if s("uid").is_empty() {
            errs.push(FieldError::required(field("uid"), "must not be empty"));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            controllers.push(format!("{}/{}", s("kind"), s("name")));
        }
    }
    if controllers.len() > 1 {
        let all: Vec<String> = refs.iter().map(owner_reference_json).collect();
        errs.push(FieldError::invalid(
            "metadata.ownerReferences",
            format!("[{}]", all.join(",")),
            format!(
                "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                controllers.join(" and ")
            ),
        ));
    }
    errs
}

/// `ValidateObjectMetaUpdate`: immutable fields.
pub(crate) fn object_meta_update_errors(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["name", "namespace", "uid", "creationTimestamp"] {
        let a = crate::storage::object::meta_str(new, field);
        let b = crate::storage::object::meta_str(old, field);
        if a != b {
            errs.push(FieldError::invalid_str(
                format!("metadata.{field}"),
                a,
                "field is immutable",
            ));
        }
    }
    // Only a delete sets these; an update of an object being deleted keeps its
    // deletionTimestamp (rest.BeforeUpdate) but may not change its grace period.
    for field in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        let of = |o: &Value| {
            crate::storage::object::meta(o)
                .and_then(|m| m.get(field))
                .filter(|v| !v.is_null())
                .cloned()
        };
        let a = of(new);
        if a != of(old) {
            errs.push(FieldError::invalid(
                format!("metadata.{field}"),
                a.as_ref().map_or_else(|| "null".to_string(), render),
                "field is immutable",
            ));
        }
    }
    errs
}

/// `ValidateLabels` of a map of labels at `field` (a selector's `matchLabels`, a pod's
/// `nodeSelector`): each key a qualified name, each value a label value.
pub(crate) fn label_map_errors(labels: Option<&Value>, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels.and_then(Value::as_object).into_iter().flatten() {
        for msg in validation::is_qualified_name(k) {
            errs.push(FieldError::invalid_str(field, k, msg));
        }
        let v = v.as_str().unwrap_or_default();
        for msg in validation::is_label_value(v) {
            errs.push(FieldError::invalid_str(field, v, msg));
        }
    }
    errs
}

/// Renders any JSON value as Go's `%#v` roughly would in an error.
/// `ValidateLabelSelector` of a `metav1.LabelSelector` at `field`: its labels, then each
/// expression's operator, values and key.
pub(crate) fn label_selector_errors(selector: Option<&Value>, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return errs;
    };
    errs.extend(label_map_errors(
        sel.get("matchLabels"),
        &format!("{field}.matchLabels"),
    ));
    let exprs = sel.get("matchExpressions").and_then(Value::as_array);
    for (i, e) in exprs.into_iter().flatten().enumerate() {
        let at = format!("{field}.matchExpressions[{i}]");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(FieldError::invalid_str(
                format!("{at}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        for msg in validation::is_qualified_name(key) {
            errs.push(FieldError::invalid_str(format!("{at}.key"), key, msg));
        }
        for (j, v) in values.iter().enumerate() {
            for msg in validation::is_label_value(v) {
                errs.push(FieldError::invalid_str(format!("{at}.values[{j}]"), v, msg));
            }
        }
    }
    errs
}

pub(crate) fn render(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_errors() {
        let errs = object_meta_errors(
            &json!({"metadata": {"namespace": "n"}}),
            NameRule::Subdomain,
            true,
            true,
        );
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
        let errs = object_meta_errors(
            &json!({"metadata": {"name": "Bad", "namespace": "n", "labels": {"a": "b c"}}}),
            NameRule::Subdomain,
            true,
            true,
        );
        assert_eq!(errs.len(), 2);
        assert!(
            errs[0].to_string().starts_with(
                "metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain"
            )
        );
    }

    /// kube-apiserver v1.37.1's answer for a ConfigMap with these finalizers, in its order.
    #[test]
    fn finalizer_errors_in_kube_apiservers_order() {
        let finalizers = json!([
            "bad",
            "kubernetes",
            "orphan",
            "foregroundDeletion",
            "a/b",
            "Bad/x"
        ]);
        let obj = json!({"metadata": {"name": "a", "namespace": "n", "finalizers": finalizers}});
        let fields = |builtin| {
            object_meta_errors(&obj, NameRule::Subdomain, true, builtin)
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        };
        let builtin = fields(true);
        assert_eq!(builtin.len(), 3, "{builtin:#?}");
        assert!(
            builtin[0].starts_with("metadata.finalizers: Invalid value: \"Bad/x\": prefix part")
        );
        assert_eq!(
            builtin[1],
            "metadata.finalizers: Invalid value: [\"bad\",\"kubernetes\",\"orphan\",\"foregroundDeletion\",\"a/b\",\"Bad/x\"]: finalizer orphan and foregroundDeletion cannot be both set"
        );
        assert_eq!(
            builtin[2],
            "metadata.finalizers[0]: Invalid value: \"bad\": name is neither a standard finalizer name nor is it fully qualified"
        );
        // A custom resource's unqualified names are warnings, not errors.
        assert_eq!(fields(false), builtin[..2].to_vec());
    }
}
