//! What the API server does with a CRD's structural schema on every write of a custom
//! resource: prune unknown fields, drop nulls of non-nullable fields, apply defaults, and
//! validate (type, required, enum, bounds, lengths, item counts).

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::semantics::validation::render;
use crate::storage::object;

fn preserves_unknown(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn is_embedded(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn nullable(schema: &Value) -> bool {
    schema
        .get("nullable")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Prunes, drops nulls and defaults an object in place. `root` is the CRD's
/// `openAPIV3Schema`; `apiVersion`, `kind` and `metadata` are always kept at the root.
/// Returns the paths of the pruned (unknown) fields, sorted, as `unknown field` warnings
/// name them.
pub(crate) fn prune_and_default(obj: &mut Value, root: &Value) -> Vec<String> {
    let mut pruned = Vec::new();
    walk(obj, root, true, "", &mut pruned, true);
    pruned.sort();
    pruned
}

/// Prunes what `root` does not declare, without defaulting (converting an object to the
/// storage version's schema).
pub(crate) fn prune(obj: &mut Value, root: &Value) {
    walk(obj, root, true, "", &mut Vec::new(), false);
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(
    v: &mut Value,
    schema: &Value,
    keep_type_meta: bool,
    path: &str,
    pruned: &mut Vec<String>,
    defaults: bool,
) {
    match v {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            let preserve = preserves_unknown(schema);
            let embedded = keep_type_meta || is_embedded(schema);
            // Defaults for missing properties.
            if let Some(props) = props.filter(|_| defaults) {
                for (k, ps) in props {
                    if !m.contains_key(k)
                        && let Some(d) = ps.get("default")
                    {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata"
                        && let Some(meta) = m.get_mut("metadata")
                    {
                        prune_meta(meta);
                        // An embedded object's metadata is decoded into `ObjectMeta` and
                        // encoded again: a null `creationTimestamp` is omitted.
                        if !keep_type_meta
                            && let Value::Object(mm) = meta
                            && mm.get("creationTimestamp").is_some_and(Value::is_null)
                        {
                            mm.remove("creationTimestamp");
                        }
                    }
                    continue;
                }
                let child_schema = props
                    .and_then(|p| p.get(&k))
                    .or_else(|| additional.filter(|a| a.is_object()));
                match child_schema {
                    Some(cs) => {
                        let is_null = m.get(&k).is_some_and(Value::is_null);
                        if is_null && !nullable(cs) {
                            match cs.get("default").filter(|_| defaults) {
                                Some(d) => {
                                    m.insert(k.clone(), d.clone());
                                }
                                None => {
                                    m.remove(&k);
                                    continue;
                                }
                            }
                        }
                        if let Some(child) = m.get_mut(&k) {
                            walk(child, cs, false, &child_path(path, &k), pruned, defaults);
                        }
                    }
                    None => {
                        let keep = preserve || additional.and_then(Value::as_bool).unwrap_or(false);
                        if !keep {
                            m.remove(&k);
                            pruned.push(child_path(path, &k));
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(
                        item,
                        item_schema,
                        false,
                        &format!("{path}[{i}]"),
                        pruned,
                        defaults,
                    );
                }
            }
        }
        _ => {}
    }
}

/// Whether a schema declares any default.
pub(crate) fn has_defaults(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => m.contains_key("default") || m.values().any(has_defaults),
        Value::Array(a) => a.iter().any(has_defaults),
        _ => false,
    }
}

/// Applies the schema's defaults to an object as read from storage (nothing is pruned):
/// objects stored before a default was added to the CRD get it when read, as from etcd.
pub(crate) fn default_on_read(obj: &mut Value, schema: &Value) {
    match obj {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                for (k, ps) in props {
                    if !m.contains_key(k)
                        && let Some(d) = ps.get("default")
                    {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in m.iter_mut() {
                if let Some(cs) = props.and_then(|p| p.get(k)).or(additional) {
                    default_on_read(child, cs);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = schema.get("items") {
                for i in items {
                    default_on_read(i, is);
                }
            }
        }
        _ => {}
    }
}

/// The fields of `ObjectMeta`, in Go's declaration order.
pub(crate) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Drops fields `ObjectMeta` does not have (the typed decoding of metadata does that).
pub(crate) fn prune_meta(meta: &mut Value) {
    if let Value::Object(m) = meta {
        m.retain(|k, _| OBJECT_META_FIELDS.contains(&k.as_str()));
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_ok(v: &Value, want: &str, schema: &Value) -> bool {
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        return matches!(type_name(v), "integer" | "string");
    }
    match want {
        "number" => matches!(type_name(v), "integer" | "number"),
        other => type_name(v) == other,
    }
}

/// A value as Go's `%v` prints it in field errors: strings quoted, numbers plain.
pub(crate) fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => crate::error::go_quote(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Validates `obj` against the root schema (after [`prune_and_default`]), in the order
/// kube-apiserver reports: OpenAPI value validations, then list-type invariants.
#[cfg(test)]
pub(crate) fn validate(obj: &Value, root: &Value) -> Vec<FieldError> {
    let mut errs = validate_values(obj, root);
    errs.extend(list_errors(obj, root));
    errs
}

/// The list-type invariants alone (`x-kubernetes-list-type` set and map uniqueness).
pub(crate) fn list_errors(obj: &Value, root: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    list_invariants(obj, root, "", &mut errs);
    errs
}

/// The OpenAPI value validations alone.
pub(crate) fn validate_values(obj: &Value, root: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let (Some(m), Some(props)) = (
        obj.as_object(),
        root.get("properties").and_then(Value::as_object),
    ) {
        for (k, v) in m {
            if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(ps) = props.get(k) {
                check(v, ps, k, &mut errs);
            }
        }
        required(m, root, "", &mut errs);
    }
    errs
}

/// Validates a single value (a default) against its schema node, with an empty path.
pub(crate) fn validate_value(v: &Value, schema: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    check(v, schema, "", &mut errs);
    errs
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn required(m: &Map<String, Value>, schema: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for r in object::strs(schema.get("required")) {
        if !m.contains_key(r) {
            errs.push(FieldError::required(join(path, r), ""));
        }
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn u64_at(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn is_multiple(n: f64, of: f64) -> bool {
    if of <= 0.0 {
        return true;
    }
    let q = n / of;
    (q - q.round()).abs() < 1e-9
}

/// The value validations of one schema node (`check` without descending), for the
/// `allOf`/`anyOf`/`oneOf`/`not` branches.
fn node_errors(v: &Value, schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    check(v, schema, path, &mut errs);
    errs
}

fn check(v: &Value, schema: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if v.is_null() && nullable(schema) {
        return;
    }
    // `x-kubernetes-int-or-string` stands for `anyOf: [integer, string]` without a `type`.
    let int_or_string = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let want = match schema.get("type").and_then(Value::as_str) {
        Some(t) => Some(t),
        None if int_or_string => Some("integer,string"),
        None => None,
    };
    if let Some(want) = want
        && !type_ok(v, want, schema)
    {
        let actual = type_name(v);
        errs.push(FieldError::type_invalid(
            path,
            crate::error::go_quote(actual),
            format!("{path} in body must be of type {want}: \"{actual}\""),
        ));
        return;
    }
    if want == Some("integer")
        && schema.get("format").and_then(Value::as_str) == Some("int32")
        && v.as_i64().is_none_or(|i| i32::try_from(i).is_err())
        && v.is_number()
    {
        // kube-openapi's format check; the apiextensions strategy reports it without a field.
        errs.push(FieldError::invalid(
            "<nil>",
            "\"\"",
            format!("Checked value must be of type integer with format int32 in {path}"),
        ));
    }
    if let Some(n) = num(v)
        && v.is_number()
    {
        if let Some(of) = schema.get("multipleOf").and_then(Value::as_f64)
            && !is_multiple(n, of)
        {
            errs.push(FieldError::invalid(
                path,
                render_value(v),
                format!(
                    "{path} in body should be a multiple of {}",
                    render_value(&schema["multipleOf"])
                ),
            ));
        }
        let excl_min = schema
            .get("exclusiveMinimum")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let excl_max = schema
            .get("exclusiveMaximum")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(max) = schema.get("maximum") {
            let m = num(max).unwrap_or(f64::MAX);
            if n > m || (excl_max && n == m) {
                errs.push(FieldError::invalid(
                    path,
                    render_value(v),
                    format!(
                        "{path} in body should be less than {}{}",
                        if excl_max { "" } else { "or equal to " },
                        render_value(max)
                    ),
                ));
            }
        }
        if let Some(min) = schema.get("minimum") {
            let m = num(min).unwrap_or(f64::MIN);
            if n < m || (excl_min && n == m) {
                errs.push(FieldError::invalid(
                    path,
                    render_value(v),
                    format!(
                        "{path} in body should be greater than {}{}",
                        if excl_min { "" } else { "or equal to " },
                        render_value(min)
                    ),
                ));
            }
        }
    }
    match v {
        Value::String(s) => {
            // kube-openapi reports the first failing of maxLength, minLength and pattern.
            let len = s.chars().count() as u64;
            if let Some(max) = u64_at(schema, "maxLength")
                && len > max
            {
                errs.push(FieldError::too_long(
                    path,
                    usize::try_from(max).unwrap_or(usize::MAX),
                ));
            } else if let Some(min) = u64_at(schema, "minLength")
                && len < min
            {
                errs.push(FieldError::invalid_str(
                    path,
                    s,
                    format!("{path} in body should be at least {min} chars long"),
                ));
            } else if let Some(p) = schema.get("pattern").and_then(Value::as_str)
                && crate::semantics::patterns::compiled(p).is_some_and(|re| !re.is_match(s))
            {
                errs.push(FieldError::invalid_str(
                    path,
                    s,
                    format!("{path} in body should match '{p}'"),
                ));
            }
            if let Some(f) = schema.get("format").and_then(Value::as_str)
                && !crate::semantics::formats::check(f, s)
            {
                errs.push(FieldError::type_invalid(
                    path,
                    crate::error::go_quote(s),
                    format!(
                        "{path} in body must be of type {f}: {}",
                        crate::error::go_quote(s)
                    ),
                ));
            }
        }
        Value::Array(items) => {
            if let Some(max) = u64_at(schema, "maxItems")
                && (items.len() as u64) > max
            {
                errs.push(FieldError::too_many(
                    path,
                    items.len(),
                    usize::try_from(max).unwrap_or(usize::MAX),
                ));
            }
            if let Some(min) = u64_at(schema, "minItems")
                && (items.len() as u64) < min
            {
                errs.push(FieldError::invalid(
                    path,
                    items.len().to_string(),
                    format!("{path} in body should have at least {min} items"),
                ));
            }
            if let Some(is) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, is, &format!("{path}[{i}]"), errs);
                }
            }
        }
        Value::Object(m) => {
            if let Some(max) = u64_at(schema, "maxProperties")
                && (m.len() as u64) > max
            {
                errs.push(FieldError::too_many(
                    path,
                    m.len(),
                    usize::try_from(max).unwrap_or(usize::MAX),
                ));
            }
            if let Some(min) = u64_at(schema, "minProperties")
                && (m.len() as u64) < min
            {
                errs.push(FieldError::invalid(
                    path,
                    m.len().to_string(),
                    format!("{path} in body should have at least {min} properties"),
                ));
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in m {
                if is_embedded(schema) && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(cs) = props.and_then(|p| p.get(k)).or(additional) {
                    check(child, cs, &join(path, k), errs);
                }
            }
            required(m, schema, path, errs);
        }
        _ => {}
    }
    // kube-openapi checks `enum` after the string, format, number and list validations.
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        errs.push(FieldError {
            field: path.to_string(),
            kind: crate::error::FieldErrorKind::NotSupported(
                render(v),
                allowed.iter().map(render).collect(),
            ),
            detail: String::new(),
        });
    }
    // Value validations that combine schemas (no structure of their own).
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            errs.extend(node_errors(v, s, path));
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && !any.is_empty()
        && !any.iter().any(|s| node_errors(v, s, path).is_empty())
    {
        errs.push(FieldError::invalid(
            path,
            render_value(v),
            format!("{path} in body must be of type anyOf"),
        ));
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array)
        && !one.is_empty()
        && one
            .iter()
            .filter(|s| node_errors(v, s, path).is_empty())
            .count()
            != 1
    {
        errs.push(FieldError::invalid(
            path,
            render_value(v),
            format!("{path} in body must validate one and only one schema (oneOf)"),
        ));
    }
    if let Some(not) = schema.get("not")
        && node_errors(v, not, path).is_empty()
    {
        errs.push(FieldError::invalid(
            path,
            render_value(v),
            format!("{path} in body should not validate the schema"),
        ));
    }
}

/// `x-kubernetes-list-type: set` items and `map` keys must be unique
/// (`structurallisttype.ValidateListSetsAndMaps`).
fn list_invariants(v: &Value, schema: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::Array(items) => {
            match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => {
                    for (i, item) in items.iter().enumerate() {
                        if items[..i].contains(item) {
                            errs.push(FieldError::duplicate(
                                format!("{path}[{i}]"),
                                render_value(item),
                            ));
                        }
                    }
                }
                Some("map") => {
                    let keys = object::strings(schema.get("x-kubernetes-list-map-keys"));
                    let key_of = |item: &Value| -> Value {
                        let mut m = Map::new();
                        for k in &keys {
                            if let Some(x) = item.get(k) {
                                m.insert(k.clone(), x.clone());
                            }
                        }
                        Value::Object(m)
                    };
                    let all: Vec<Value> = items.iter().map(key_of).collect();
                    for (i, key) in all.iter().enumerate() {
                        if all[..i].contains(key) {
                            errs.push(FieldError::duplicate(
                                format!("{path}[{i}]"),
                                key.to_string(),
                            ));
                        }
                    }
                }
                _ => {}
            }
            if let Some(is) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    list_invariants(item, is, &format!("{path}[{i}]"), errs);
                }
            }
        }
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in m {
                if path.is_empty() && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(cs) = props.and_then(|p| p.get(k)).or(additional) {
                    list_invariants(child, cs, &join(path, k), errs);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["ip", "port"], "properties": {
                "ip": {"type": "string", "minLength": 1},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "maxItems": 1, "items": {"type": "object", "properties": {"x": {"type": "integer"}}}}
            }},
            "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        }})
    }

    #[test]
    fn prunes_and_defaults() {
        let mut obj = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x", "bogus": 1},
            "spec": {"ip": "1.2.3.4", "port": 80, "unknown": true, "labels": {"a": "b"}, "free": {"any": 1},
                     "list": [{"x": 1, "y": 2}]},
            "extra": 1, "status": null});
        let pruned = prune_and_default(&mut obj, &schema());
        assert_eq!(pruned, vec!["extra", "spec.list[0].y", "spec.unknown"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"},
            "spec": {"ip": "1.2.3.4", "port": 80, "mode": "a", "labels": {"a": "b"}, "free": {"any": 1}, "list": [{"x": 1}]}})
        );
        assert!(validate(&obj, &schema()).is_empty());
    }

    #[test]
    fn validates_like_the_api_server() {
        let obj = json!({"spec": {"ip": "", "port": "80", "mode": "c", "list": [{}, {}]}});
        let errs: Vec<String> = validate(&obj, &schema())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.ip: Invalid value: \"\": spec.ip in body should be at least 1 chars long",
                "spec.list: Too many: 2: must have at most 1 items",
                "spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\"",
                "spec.port: Invalid value: \"string\": spec.port in body must be of type integer: \"string\"",
            ]
        );
        let obj = json!({"spec": {"ip": "x", "port": 70000}});
        let errs: Vec<String> = validate(&obj, &schema())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535"
            ]
        );
        let errs: Vec<String> = validate(&json!({"spec": {}}), &schema())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec!["spec.ip: Required value", "spec.port: Required value"]
        );
    }
}
