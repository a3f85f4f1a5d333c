//! The non-apply patch types: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
//! strategic merge patch (built-in types only).

use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::semantics::list_type::{ListType, item_key, item_matches, patch_list_type};
use crate::semantics::resources::Resource;
use crate::storage::object;
use crate::storage::size::encoded_len;

/// The patch types of the `Content-Type` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`
    Json,
    /// `application/merge-patch+json`
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply)
    Apply,
}

impl PatchType {
    /// From a `Content-Type` (parameters ignored).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                Some(PatchType::Apply)
            }
            _ => None,
        }
    }

    /// The media type.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// The 415 for a patch type the resource does not accept.
pub(crate) fn unsupported_patch(resource: &Resource) -> ApiError {
    let mut accepted = vec![
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    if resource.supports_strategic_merge() {
        accepted.push("application/strategic-merge-patch+json");
    }
    accepted.push("application/apply-patch+yaml");
    ApiError::unsupported_media_type(format!(
        "the body of the request was in an unknown format - accepted media types include: {}",
        accepted.join(", ")
    ))
}

/// The JSON kind of a value as Go's decoder names it in unmarshal errors.
fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// JSON merge patch.
pub(crate) fn merge_patch(original: &Value, patch: &Value) -> ApiResult<Value> {
    // The patch library's own refusal of a `null` patch.
    if patch.is_null() {
        return Err(ApiError::bad_request("Invalid JSON Patch"));
    }
    if !patch.is_object() {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(patch)
        )));
    }
    let mut doc = original.clone();
    json_patch::merge(&mut doc, patch);
    Ok(doc)
}

/// kube-apiserver's `maxJSONPatchOperations`: a longer JSON patch is a 413.
pub(crate) const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB), which arms the patch library's
/// `AccumulatedCopySizeLimit`: the bytes that `copy` operations may add to a document in all.
pub(crate) const JSON_PATCH_MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// JSON patch: a bad document is a 400, more than [`MAX_JSON_PATCH_OPERATIONS`] operations a
/// 413, an operation that fails — or `copy` operations that together copy more than
/// [`JSON_PATCH_MAX_COPY_BYTES`], the way a patch doubles a document with each operation — a
/// 422.
///
/// As kube-apiserver's patch library (`evanphx/json-patch` v4) reads and applies it rather
/// than as RFC 6902 has it: a `null` patch changes nothing, an `add`, `replace` or `test`
/// without `value` has a `null` one, a `replace` of a key an object lacks adds it, and a key
/// an object lacks tests equal to `null`.
pub(crate) fn json_patch(original: &Value, patch: &Value) -> ApiResult<Value> {
    if patch.is_null() {
        return Ok(original.clone());
    }
    let Some(raw_ops) = patch.as_array() else {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
            go_json_kind(patch)
        )));
    };
    // An operation Go cannot decode into its struct (`null` decodes to an empty one).
    if let Some(op) = raw_ops.iter().find(|op| !op.is_object() && !op.is_null()) {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
            go_json_kind(op)
        )));
    }
    if raw_ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!(
                "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                raw_ops.len()
            ),
        ));
    }
    // An operation the patch library cannot read or apply is a 422 without causes, as
    // kube-apiserver answers it.
    let rejected = || {
        ApiError::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
    };
    let mut patch = patch.clone();
    for op in patch.as_array_mut().into_iter().flatten() {
        if let Some(op) = op.as_object_mut()
            && matches!(
                op.get("op").and_then(Value::as_str),
                Some("add" | "replace" | "test")
            )
        {
            op.entry("value").or_insert(Value::Null);
        }
    }
    let ops: json_patch::Patch = serde_json::from_value(patch).map_err(|e| {
        tracing::debug!(error = %e, "unreadable JSON patch operation");
        rejected()
    })?;
    let mut doc = original.clone();
    let mut copied = 0usize;
    for op in &ops.0 {
        if let json_patch::PatchOperation::Copy(c) = op {
            // Measured before the copy is made, so a patch that doubles the document stops
            // at the limit instead of growing without bound.
            let size = doc.pointer(c.from.as_str()).map_or(0, encoded_len);
            copied = copied.saturating_add(size);
            if copied > JSON_PATCH_MAX_COPY_BYTES {
                tracing::debug!(
                    copied,
                    limit = JSON_PATCH_MAX_COPY_BYTES,
                    "JSON patch copies exceed the limit"
                );
                return Err(rejected());
            }
        }
        let op = match op {
            json_patch::PatchOperation::Replace(r) if lacks_key(&doc, r.path.as_str()) => {
                json_patch::PatchOperation::Add(json_patch::AddOperation {
                    path: r.path.clone(),
                    value: r.value.clone(),
                })
            }
            // A missing key reads as `null`, so a test of it against `null` passes.
            json_patch::PatchOperation::Test(t)
                if t.value.is_null() && lacks_key(&doc, t.path.as_str()) =>
            {
                continue;
            }
            op => op.clone(),
        };
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(&op)).map_err(|e| {
            tracing::debug!(error = %e, "JSON patch failed");
            rejected()
        })?;
    }
    Ok(doc)
}

/// Whether `path` names a key its parent, an object, does not have.
fn lacks_key(doc: &Value, path: &str) -> bool {
    let Some((parent, token)) = path.rsplit_once('/') else {
        return false;
    };
    let key = token.replace("~1", "/").replace("~0", "~");
    doc.pointer(parent)
        .and_then(Value::as_object)
        .is_some_and(|m| !m.contains_key(&key))
}

/// Strategic merge patch with the directives `$patch` (replace, delete, merge),
/// `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`.
pub(crate) fn strategic_merge(
    resource: &Resource,
    original: &Value,
    patch: &Value,
) -> ApiResult<Value> {
    // Go decodes a `null` patch to an empty map: nothing changes.
    if patch.is_null() {
        return Ok(original.clone());
    }
    let Some(p) = patch.as_object() else {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(patch)
        )));
    };
    let Some(orig) = original.as_object() else {
        return Err(ApiError::bad_request(
            "strategic merge patch must be applied to a JSON object",
        ));
    };
    let mut path = Vec::new();
    match merge_map(resource, orig, p, &mut path).map_err(ApiError::bad_request)? {
        Some(m) => Ok(Value::Object(m)),
        None => Ok(Value::Object(Map::new())),
    }
}

/// Merges a patch map into an original map; `None` deletes the map.
fn merge_map(
    resource: &Resource,
    orig: &Map<String, Value>,
    patch: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<Option<Map<String, Value>>, String> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => {
            let mut m = patch.clone();
            m.remove("$patch");
            return Ok(Some(m));
        }
        Some("merge") | None => {}
        Some(other) => return Err(format!("unknown patch type: {other}")),
    }
    let mut out = orig.clone();
    // Deletions from primitive lists come first, as in Kubernetes.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let remove = v.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(list)) = out.get_mut(field) {
                list.retain(|x| !remove.contains(x));
            }
        }
    }
    let orders: Vec<(String, Vec<Value>)> = patch
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("$setElementOrder/")
                .map(|f| (f.to_string(), v.as_array().cloned().unwrap_or_default()))
        })
        .collect();
    let order_of = |field: &str| {
        orders
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, o)| o.as_slice())
    };
    let mut retain: Option<Vec<String>> = None;
    for (k, v) in patch {
        if k == "$patch" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if k == "$retainKeys" {
            retain = Some(object::strings(Some(v)));
            continue;
        }
        if k.starts_with("$deleteFromPrimitiveList/") {
            continue;
        }
        if k.starts_with('$') {
            return Err(format!("unknown directive {k}"));
        }
        if v.is_null() {
            out.remove(k);
            continue;
        }
        path.push(k.clone());
        let merged = match (out.get(k), v) {
            (Some(Value::Object(o)), Value::Object(pm)) => {
                merge_map(resource, o, pm, path)?.map(Value::Object)
            }
            (_, Value::Object(pm)) => {
                merge_map(resource, &Map::new(), pm, path)?.map(Value::Object)
            }
            (orig_list, Value::Array(pl)) => {
                let o = orig_list
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                Some(Value::Array(merge_list(
                    resource,
                    &o,
                    pl,
                    order_of(k),
                    path,
                )?))
            }
            (_, other) => Some(other.clone()),
        };
        path.pop();
        match merged {
            Some(m) => {
                out.insert(k.clone(), m);
            }
            None => {
                out.remove(k);
            }
        }
    }
    // An order for a list the patch does not otherwise touch.
    for (field, order) in &orders {
        if patch.contains_key(field) {
            continue;
        }
        path.push(field.clone());
        let names: Vec<&str> = path.iter().map(String::as_str).collect();
        let identity = identity_for(patch_list_type(resource, &names));
        if let (Some(identity), Some(Value::Array(list))) = (identity, out.get_mut(field)) {
            let original = list.clone();
            *list = normalize(std::mem::take(list), &original, order, &identity);
        }
        path.pop();
    }
    if let Some(keep) = retain {
        out.retain(|k, _| keep.contains(k));
    }
    Ok(Some(out))
}

/// How list items are identified for ordering: by merge key, or by value for sets.
type Identity = Box<dyn Fn(&Value) -> Option<Value>>;

fn identity_for(lt: ListType) -> Option<Identity> {
    match lt {
        ListType::Atomic => None,
        ListType::Set => Some(Box::new(|v: &Value| Some(v.clone()))),
        ListType::Map(keys) => {
            let merge_keys: Vec<String> = keys.into_iter().take(1).collect();
            Some(Box::new(move |v: &Value| item_key(v, &merge_keys)))
        }
    }
}

/// Orders a merged list as the API server does (`normalizeElementOrder`): the items the patch
/// names, in the patch's order (or `$setElementOrder`'s), merged with the server-only items in
/// their server order; of two items both on the server, the earlier one comes first,
/// otherwise the patch's item does.
fn normalize(merged: Vec<Value>, original: &[Value], order: &[Value], id: &Identity) -> Vec<Value> {
    let order_keys: Vec<Value> = order.iter().filter_map(id).collect();
    let server_keys: Vec<Value> = original.iter().filter_map(id).collect();
    let pos = |keys: &[Value], k: &Option<Value>| -> Option<usize> {
        k.as_ref()
            .and_then(|k| keys.iter().position(|x| item_matches_or_eq(x, k)))
    };
    let mut in_patch: Vec<(usize, Value)> = Vec::new();
    let mut server_only: Vec<Value> = Vec::new();
    for item in merged {
        let k = id(&item);
        match pos(&order_keys, &k) {
            Some(p) => in_patch.push((p, item)),
            None => server_only.push(item),
        }
    }
    in_patch.sort_by_key(|(p, _)| *p);
    let right: Vec<Value> = in_patch.into_iter().map(|(_, v)| v).collect();
    let mut out = Vec::with_capacity(server_only.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < server_only.len() || j < right.len() {
        if i >= server_only.len() {
            out.push(right[j].clone());
            j += 1;
        } else if j >= right.len() {
            out.push(server_only[i].clone());
            i += 1;
        } else {
            let li = pos(&server_keys, &id(&server_only[i]));
            let ri = pos(&server_keys, &id(&right[j]));
            match (li, ri) {
                (Some(l), Some(r)) if l < r => {
                    out.push(server_only[i].clone());
                    i += 1;
                }
                _ => {
                    out.push(right[j].clone());
                    j += 1;
                }
            }
        }
    }
    out
}

fn item_matches_or_eq(a: &Value, b: &Value) -> bool {
    a == b || (a.is_object() && item_matches(a, b))
}

fn merge_list(
    resource: &Resource,
    orig: &[Value],
    patch: &[Value],
    order: Option<&[Value]>,
    path: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    let names: Vec<&str> = path.iter().map(String::as_str).collect();
    let lt = patch_list_type(resource, &names);
    let merged = match &lt {
        ListType::Atomic => {
            return Ok(patch
                .iter()
                .filter(|v| v.get("$patch").is_none())
                .cloned()
                .collect());
        }
        ListType::Set => {
            let mut out = orig.to_vec();
            for v in patch {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
            out
        }
        ListType::Map(keys) => {
            // `patchMergeKey` is a single field: the first key.
            let merge_keys: Vec<String> = keys.iter().take(1).cloned().collect();
            if patch
                .iter()
                .any(|v| v.get("$patch").and_then(Value::as_str) == Some("replace"))
            {
                return Ok(patch
                    .iter()
                    .filter(|v| v.get("$patch").is_none())
                    .cloned()
                    .collect());
            }
            let mut out = orig.to_vec();
            for item in patch {
                let Some(key) = item_key(item, &merge_keys) else {
                    return Err(format!(
                        "map: {item} does not contain declared merge key: {}",
                        merge_keys.join(",")
                    ));
                };
                let pos = out.iter().position(|o| item_matches(o, &key));
                if item.get("$patch").and_then(Value::as_str) == Some("delete") {
                    if let Some(i) = pos {
                        out.remove(i);
                    }
                    continue;
                }
                match (pos, item.as_object()) {
                    (Some(i), Some(pm)) => {
                        let base = out[i].as_object().cloned().unwrap_or_default();
                        match merge_map(resource, &base, pm, path)? {
                            Some(m) => out[i] = Value::Object(m),
                            None => {
                                out.remove(i);
                            }
                        }
                    }
                    (None, Some(pm)) => {
                        if let Some(m) = merge_map(resource, &Map::new(), pm, path)? {
                            out.push(Value::Object(m));
                        }
                    }
                    (_, None) => out.push(item.clone()),
                }
            }
            out
        }
    };
    let Some(identity) = identity_for(lt) else {
        return Ok(merged);
    };
    let patch_items: Vec<Value> = patch
        .iter()
        .filter(|v| v.get("$patch").is_none())
        .cloned()
        .collect();
    Ok(normalize(
        merged,
        orig,
        order.unwrap_or(&patch_items),
        &identity,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::resources::builtins;
    use serde_json::json;

    fn deployment() -> Resource {
        builtins()
            .into_iter()
            .find(|r| r.kind == "Deployment")
            .unwrap_or_else(|| panic!("no Deployment"))
    }

    fn ok<T>(r: ApiResult<T>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_json_patch_that_doubles_the_document_stops_at_the_copy_limit() {
        let doc = json!({"metadata": {"finalizers": ["example.com/a"]}});
        let double =
            json!({"op": "copy", "from": "/metadata/finalizers", "path": "/metadata/finalizers/-"});
        // 40 doublings would be a document of 2^40 entries; the copies stop near 3 MiB.
        let bomb = Value::Array(vec![double.clone(); 40]);
        let e = json_patch(&doc, &bomb).err().map(|e| (e.code, e.reason));
        assert_eq!(e, Some((422, "Invalid".to_string())));
        // A few doublings are a patch like any other.
        let out = ok(json_patch(&doc, &Value::Array(vec![double; 3])));
        // Each copy appends the whole list to itself: one entry more, twice the bytes.
        assert_eq!(
            out["metadata"]["finalizers"].as_array().map(Vec::len),
            Some(4)
        );
        assert!(encoded_len(&out) > 8 * encoded_len(&doc["metadata"]["finalizers"]));
    }

    #[test]
    fn a_json_patch_of_more_than_ten_thousand_operations_is_a_413() {
        let doc = json!({"data": {"k": "v"}});
        let test = json!({"op": "test", "path": "/data/k", "value": "v"});
        assert!(json_patch(&doc, &Value::Array(vec![test.clone(); 10_000])).is_ok());
        let e = json_patch(&doc, &Value::Array(vec![test; 10_001])).err();
        assert_eq!(
            e.map(|e| (e.code, e.message)),
            Some((
                413,
                "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001".to_string()
            ))
        );
        assert_eq!(
            encoded_len(&json!({"a": [1, "x"]})),
            r#"{"a":[1,"x"]}"#.len()
        );
    }

    #[test]
    fn merge_patch_deletes_with_null() {
        let out = ok(merge_patch(
            &json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2]}),
            &json!({"a": null, "b": {"c": 5}, "l": [3]}),
        ));
        assert_eq!(out, json!({"b": {"c": 5, "d": 3}, "l": [3]}));
        assert!(merge_patch(&json!({}), &json!([1])).is_err());
    }

    #[test]
    fn json_patch_ops_and_failures() {
        let doc = json!({"spec": {"a": 1, "l": [1, 2]}});
        let out = ok(json_patch(
            &doc,
            &json!([
                {"op": "replace", "path": "/spec/a", "value": 2},
                {"op": "add", "path": "/spec/l/-", "value": 3},
                {"op": "remove", "path": "/spec/l/0"},
                {"op": "copy", "from": "/spec/a", "path": "/spec/b"},
                {"op": "move", "from": "/spec/b", "path": "/spec/c"},
                {"op": "test", "path": "/spec/c", "value": 2}
            ]),
        ));
        assert_eq!(out, json!({"spec": {"a": 2, "l": [2, 3], "c": 2}}));
        let e = json_patch(
            &doc,
            &json!([{"op": "test", "path": "/spec/a", "value": 9}]),
        );
        assert_eq!(e.map_err(|e| e.code), Err(422));
        let e = json_patch(&doc, &json!({"op": "add"}));
        assert_eq!(e.map_err(|e| e.code), Err(400));
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let d = deployment();
        let orig = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ]}}}});
        let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}],
        "containers": [
            {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}]},
            {"name": "c", "image": "c:1"}
        ]}}}});
        let out = ok(strategic_merge(&d, &orig, &patch));
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers[0]["name"], "b");
        assert_eq!(containers[1]["image"], "a:2");
        assert_eq!(
            containers[1]["env"],
            // As the API server orders it: the patch's new item before the server-only one.
            json!([{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}])
        );
        assert_eq!(containers[2]["name"], "c");

        let del = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}});
        let out = ok(strategic_merge(&d, &orig, &del));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b", "image": "b:1"}])
        );

        let replace =
            json!({"spec": {"template": {"spec": {"$patch": "replace", "containers": []}}}});
        let out = ok(strategic_merge(&d, &orig, &replace));
        assert_eq!(out["spec"]["template"]["spec"], json!({"containers": []}));
    }

    #[test]
    fn strategic_merge_finalizers_are_a_set() {
        let d = deployment();
        let out = ok(strategic_merge(
            &d,
            &json!({"metadata": {"finalizers": ["a"], "labels": {"x": "1", "y": "2"}}}),
            &json!({"metadata": {"finalizers": ["b"], "labels": {"x": null}, "$deleteFromPrimitiveList/finalizers": ["a"]}}),
        ));
        assert_eq!(
            out,
            json!({"metadata": {"finalizers": ["b"], "labels": {"y": "2"}}})
        );
    }
}
