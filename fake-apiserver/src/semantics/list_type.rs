//! How lists merge: the `patchMergeKey`/`listType` knowledge strategic merge patch and
//! server-side apply need. Built-in types read the extensions of kube-apiserver's own OpenAPI
//! documents (`builtin_openapi_extensions.json`); custom resources read
//! `x-kubernetes-list-type` and `x-kubernetes-list-map-keys` from the CRD schema.

use serde_json::Value;

use crate::semantics::resources::Resource;
use crate::storage::object;

/// How a list field merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced as a whole.
    Atomic,
    /// A set of scalars: merged by union.
    Set,
    /// A list of objects identified by the given key fields.
    Map(Vec<String>),
}

/// The list type of the field at `path` (field names from the object root; list items add no
/// segment) of an object of `resource`, as server-side apply merges and owns it: built-in
/// kinds read `x-kubernetes-list-type` and `-list-map-keys` from kube-apiserver's own schema
/// extensions, custom resources from their CRD's schema.
pub(crate) fn list_type(resource: &Resource, path: &[&str]) -> ListType {
    lookup(resource, path, Merge::Apply)
}

/// The list type of the field at `path` as strategic merge patch merges it: built-in kinds
/// read `x-kubernetes-patch-strategy` and `-patch-merge-key` (a Service's ports merge by
/// `port` alone, where server-side apply keys them by port and protocol). Custom resources,
/// which strategic merge patch does not serve, follow their schema's list types.
pub(crate) fn patch_list_type(resource: &Resource, path: &[&str]) -> ListType {
    lookup(resource, path, Merge::Patch)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Merge {
    Apply,
    Patch,
}

fn lookup(resource: &Resource, path: &[&str], merge: Merge) -> ListType {
    // ObjectMeta's lists, which a CRD's schema does not describe.
    if let ["metadata", field] = path {
        return match *field {
            "finalizers" => ListType::Set,
            "ownerReferences" => ListType::Map(vec!["uid".into()]),
            _ => ListType::Atomic,
        };
    }
    match resource.builtin {
        Some(b) => crate::semantics::builtin_schema::definition_of(b)
            .and_then(|d| crate::semantics::fields::builtin_list_extensions(d, path))
            .map_or(ListType::Atomic, |ext| match merge {
                Merge::Apply => match ext.list_type {
                    "set" => ListType::Set,
                    "map" => ListType::Map(ext.map_keys),
                    _ => ListType::Atomic,
                },
                Merge::Patch => {
                    let merges = ext.patch_strategy.split(',').any(|s| s == "merge");
                    match (merges, ext.merge_key) {
                        (false, _) => ListType::Atomic,
                        (true, "") => ListType::Set,
                        (true, key) => ListType::Map(vec![key.to_string()]),
                    }
                }
            }),
        None => resource
            .custom
            .as_ref()
            .and_then(|c| c.schema.as_ref())
            .map_or(ListType::Atomic, |schema| schema_list_type(schema, path)),
    }
}

/// Whether the object field at `path` is atomic (`x-kubernetes-map-type: atomic`): replaced
/// and owned as a whole by server-side apply. Custom resources read their CRD schema; built-in
/// kinds read the extensions kube-apiserver's own OpenAPI documents carry (`+mapType=atomic`
/// maps such as a Service's `spec.selector`, `+structType=atomic` structs such as
/// `LabelSelector`, `OwnerReference`, a binding's `RoleRef` and `Subject`), which
/// `builtin_schema` merges into the built-in schemas.
pub(crate) fn is_atomic_map(resource: &Resource, path: &[&str]) -> bool {
    if path.is_empty() {
        return false;
    }
    if let Some(b) = resource.builtin {
        return crate::semantics::builtin_schema::definition_of(b)
            .is_some_and(|d| crate::semantics::fields::builtin_atomic_map(d, path));
    }
    resource
        .custom
        .as_ref()
        .and_then(|c| c.schema.as_ref())
        .and_then(|schema| schema_at(schema, path))
        .and_then(|s| s.get("x-kubernetes-map-type"))
        .and_then(Value::as_str)
        == Some("atomic")
}

/// The schema node at `path` (list items add no segment).
fn schema_at<'a>(schema: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = schema;
    for seg in path {
        while cur.get("type").and_then(Value::as_str) == Some("array") {
            cur = cur.get("items")?;
        }
        cur = match cur.get("properties").and_then(|p| p.get(*seg)) {
            Some(next) => next,
            None => cur.get("additionalProperties").filter(|a| a.is_object())?,
        };
    }
    Some(cur)
}

/// Follows `path` through an OpenAPI v3 schema (`properties`, `items`,
/// `additionalProperties`) and reads the list extensions at the end.
fn schema_list_type(schema: &Value, path: &[&str]) -> ListType {
    let mut cur = schema;
    for seg in path {
        // Step into list items transparently.
        while cur.get("type").and_then(Value::as_str) == Some("array") {
            match cur.get("items") {
                Some(items) => cur = items,
                None => return ListType::Atomic,
            }
        }
        match cur.get("properties").and_then(|p| p.get(*seg)) {
            Some(next) => cur = next,
            None => match cur.get("additionalProperties") {
                Some(ap) if ap.is_object() => cur = ap,
                _ => return ListType::Atomic,
            },
        }
    }
    match cur.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(object::strings(cur.get("x-kubernetes-list-map-keys"))),
        _ => ListType::Atomic,
    }
}

/// The key of a keyed-list item: the key fields present in it, and a missing `protocol` as
/// `TCP` when it is one of the keys. Server-side apply fills a missing key field with its
/// schema default, and of the built-in types' list keys only `protocol` (of container and
/// Service ports) has a default other than its zero value: an applied Service port without
/// a protocol is owned as `k:{"port":80,"protocol":"TCP"}`.
pub(crate) fn item_key(item: &Value, keys: &[String]) -> Option<Value> {
    let obj = item.as_object()?;
    let mut m = serde_json::Map::new();
    for k in keys {
        if let Some(v) = obj.get(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    if !m.is_empty() && keys.iter().any(|k| k == "protocol") && !m.contains_key("protocol") {
        m.insert("protocol".into(), Value::from("TCP"));
    }
    if m.is_empty() {
        None
    } else {
        Some(Value::Object(m))
    }
}

/// Whether `item` has the given key. Missing key fields match their defaults loosely: a
/// missing `protocol` matches `TCP`, as the server defaults it.
pub(crate) fn item_matches(item: &Value, key: &Value) -> bool {
    let Some(k) = key.as_object() else {
        return false;
    };
    k.iter().all(|(field, want)| match item.get(field) {
        Some(have) => have == want,
        None => field == "protocol" && want == "TCP",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_extensions_are_read() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                      "items": {"type": "object", "properties": {"tags": {"type": "array", "x-kubernetes-list-type": "set"}}}}
        }}}});
        assert_eq!(
            schema_list_type(&schema, &["spec", "items"]),
            ListType::Map(vec!["id".into()])
        );
        assert_eq!(
            schema_list_type(&schema, &["spec", "items", "tags"]),
            ListType::Set
        );
        assert_eq!(
            schema_list_type(&schema, &["spec", "other"]),
            ListType::Atomic
        );
    }

    #[test]
    fn builtin_keys() {
        let kind = |k: &str| {
            crate::semantics::resources::builtins()
                .into_iter()
                .find(|r| r.kind == k)
                .unwrap_or_else(|| panic!("no {k}"))
        };
        let (deploy, svc) = (kind("Deployment"), kind("Service"));
        let containers = ["spec", "template", "spec", "containers"];
        assert_eq!(
            list_type(&deploy, &containers),
            ListType::Map(vec!["name".into()])
        );
        let ports = ["spec", "template", "spec", "containers", "ports"];
        assert_eq!(
            list_type(&deploy, &ports),
            ListType::Map(vec!["containerPort".into(), "protocol".into()])
        );
        assert_eq!(
            patch_list_type(&deploy, &ports),
            ListType::Map(vec!["containerPort".into()])
        );
        assert_eq!(
            list_type(&svc, &["spec", "ports"]),
            ListType::Map(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(
            patch_list_type(&svc, &["spec", "ports"]),
            ListType::Map(vec!["port".into()])
        );
        assert_eq!(
            list_type(&deploy, &["metadata", "finalizers"]),
            ListType::Set
        );
        assert_eq!(
            list_type(&deploy, &["metadata", "ownerReferences"]),
            ListType::Map(vec!["uid".into()])
        );
        let args = ["spec", "template", "spec", "containers", "args"];
        assert_eq!(list_type(&deploy, &args), ListType::Atomic);
        assert_eq!(patch_list_type(&deploy, &args), ListType::Atomic);
        assert!(item_matches(
            &json!({"containerPort": 80}),
            &json!({"containerPort": 80, "protocol": "TCP"})
        ));
    }
}
