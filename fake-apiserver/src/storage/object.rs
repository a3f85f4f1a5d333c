//! Small accessors over objects held as `serde_json::Value`: the server keeps every object
//! untyped, as the real API server's unstructured path does.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// `metadata` of an object, if it is a JSON object.
pub(crate) fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// `metadata` of an object, created when missing (or replaced when not an object).
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    let entry = ensure_object(obj)
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    ensure_object(entry)
}

/// Makes `v` a JSON object (replacing anything else) and returns its map.
pub(crate) fn ensure_object(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(m) => m,
        // `v` was made an object just above.
        _ => unreachable!("value was just made a JSON object"),
    }
}

/// A string field of `metadata` (empty when absent).
pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Sets (or, with `None`, removes) a field of `metadata`.
pub(crate) fn set_meta(obj: &mut Value, field: &str, value: Option<Value>) {
    let m = meta_mut(obj);
    match value {
        Some(v) => {
            m.insert(field.to_string(), v);
        }
        None => {
            m.remove(field);
        }
    }
}

/// `metadata.name`.
pub(crate) fn name(obj: &Value) -> &str {
    meta_str(obj, "name")
}

/// `metadata.namespace`.
pub(crate) fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

/// `metadata.resourceVersion`.
pub(crate) fn resource_version(obj: &Value) -> &str {
    meta_str(obj, "resourceVersion")
}

/// `metadata.uid`.
pub(crate) fn uid(obj: &Value) -> &str {
    meta_str(obj, "uid")
}

/// `metadata.generation`, when set.
pub(crate) fn generation(obj: &Value) -> Option<i64> {
    meta(obj)
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
}

/// Whether `metadata.deletionTimestamp` is set.
pub(crate) fn is_deleting(obj: &Value) -> bool {
    meta(obj)
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|v| !v.is_null())
}

/// `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    strings(meta(obj).and_then(|m| m.get("finalizers")))
}

/// `metadata.labels` as a map (non-string values are skipped).
pub(crate) fn labels(obj: &Value) -> BTreeMap<String, String> {
    string_map(meta(obj).and_then(|m| m.get("labels")))
}

/// A JSON object of strings as a map.
pub(crate) fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The strings of a JSON array, in order: other items are skipped, and a missing value or one
/// that is not an array has none.
pub(crate) fn strs(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// [`strs`], owned.
pub(crate) fn strings(v: Option<&Value>) -> Vec<String> {
    strs(v).map(str::to_string).collect()
}

/// The value at a dotted path (`spec.nodeName`).
pub(crate) fn get_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        cur = cur.get(seg)?;
    }
    Some(cur)
}

/// The value at a dotted path as the API server renders it for field selectors: strings as
/// is, booleans and numbers printed, anything missing as the empty string.
pub(crate) fn field_string(obj: &Value, path: &str) -> String {
    match get_path(obj, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// A copy of `obj` without `metadata` and (when `drop_status`) `status`: what
/// `metadata.generation` tracks.
pub(crate) fn spec_part(obj: &Value, drop_status: bool) -> Value {
    match obj {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    k.as_str() != "metadata"
                        && !(drop_status && k.as_str() == "status")
                        && k.as_str() != "apiVersion"
                        && k.as_str() != "kind"
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether two objects are equal once `metadata.resourceVersion` and the managed-fields
/// timestamps are ignored: a write that changes nothing else is a no-op for the server.
/// Writes every whole, finite number held as a float (`3.0`) as the integer it is, as
/// kube-apiserver's Go encoding does when it stores and returns an object: a client decoding
/// the field as an integer then reads it.
pub(crate) fn whole_floats_to_integers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            // 2^63: the first float past i64's range.
            const LIMIT: f64 = 9_223_372_036_854_775_808.0;
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.is_finite()
                && f.abs() < LIMIT
            {
                // A whole float below 2^63 in magnitude is exactly an i64.
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_to_integers),
        Value::Object(m) => m.values_mut().for_each(whole_floats_to_integers),
        _ => {}
    }
}

pub(crate) fn same_content(a: &Value, b: &Value) -> bool {
    strip_volatile(a) == strip_volatile(b)
}

fn strip_volatile(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(Value::Object(m)) = v.get_mut("metadata") {
        m.remove("resourceVersion");
        if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
            for e in entries {
                if let Value::Object(e) = e {
                    e.remove("time");
                }
            }
        }
    }
    v
}

/// Sets `condition` in a status's `conditions` (matched by `type`), as Kubernetes'
/// controllers do: a new type is appended; an existing one with the same status, reason and
/// message is left alone; otherwise it is replaced, keeping its `lastTransitionTime` unless
/// the status changed (`condition` carries the time of now). Returns whether anything changed.
pub(crate) fn set_condition(conditions: &mut Vec<Value>, mut condition: Value) -> bool {
    let Some(old) = conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    else {
        conditions.push(condition);
        return true;
    };
    if ["status", "reason", "message"]
        .iter()
        .all(|k| old.get(*k) == condition.get(*k))
    {
        return false;
    }
    if old.get("status") == condition.get("status")
        && let (Some(c), Some(t)) = (
            condition.as_object_mut(),
            old.get("lastTransitionTime").cloned(),
        )
    {
        c.insert("lastTransitionTime".into(), t);
    }
    *old = condition;
    true
}

/// Current time as the API server writes `metav1.Time` (RFC 3339, whole seconds, UTC).
pub(crate) fn now_rfc3339() -> String {
    format_time(jiff::Timestamp::now())
}

/// Formats a timestamp as `metav1.Time` does.
pub(crate) fn format_time(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Formats a timestamp as `metav1.MicroTime` does (microseconds, UTC).
pub(crate) fn format_micro_time(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// A fresh random UID (UUID v4).
pub(crate) fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `n` random characters from the alphabet of Kubernetes' name generator
/// (`k8s.io/apimachinery/pkg/util/rand.String`: no vowels, no confusable digits).
pub(crate) fn random_suffix(n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut out = String::with_capacity(n);
    while out.len() < n {
        for b in uuid::Uuid::new_v4().as_bytes() {
            if out.len() == n {
                break;
            }
            // 27 letters: reject the top of the byte range so that every letter is equally likely.
            if usize::from(*b) < 27 * 9 {
                out.push(char::from(ALPHABET[usize::from(*b) % 27]));
            }
        }
    }
    out
}

/// Sets `apiVersion` and `kind` on an object.
pub(crate) fn set_type_meta(obj: &mut Value, api_version: &str, kind: &str) {
    if let Value::Object(m) = obj {
        m.insert("apiVersion".into(), Value::String(api_version.into()));
        m.insert("kind".into(), Value::String(kind.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_floats_become_integers_as_go_encodes_them() {
        let mut v = json!({"a": 3.0, "b": [1.5, -2.0, 7], "c": {"d": 1e300, "e": "3.0", "f": 0.0}});
        whole_floats_to_integers(&mut v);
        assert_eq!(
            v.to_string(),
            r#"{"a":3,"b":[1.5,-2,7],"c":{"d":1e+300,"e":"3.0","f":0}}"#
        );
        assert!(v["a"].is_i64());
    }

    #[test]
    fn a_condition_moves_its_transition_time_only_when_its_status_changes() {
        let cond = |status: &str, reason: &str, at: &str| json!({"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": at});
        let mut list = Vec::new();
        assert!(set_condition(&mut list, cond("False", "a", "t1")));
        assert!(
            !set_condition(&mut list, cond("False", "a", "t2")),
            "unchanged"
        );
        assert_eq!(list, vec![cond("False", "a", "t1")]);
        assert!(
            set_condition(&mut list, cond("False", "b", "t3")),
            "a new reason"
        );
        assert_eq!(list, vec![cond("False", "b", "t1")]);
        assert!(
            set_condition(&mut list, cond("True", "b", "t4")),
            "a new status"
        );
        assert_eq!(list, vec![cond("True", "b", "t4")]);
        let other = json!({"type": "Other", "status": "True", "lastTransitionTime": "t5"});
        assert!(set_condition(&mut list, other.clone()));
        assert_eq!(list, vec![cond("True", "b", "t4"), other]);
    }

    #[test]
    fn suffix_uses_the_name_generator_alphabet() {
        let s = random_suffix(5);
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
        assert_ne!(random_suffix(12), random_suffix(12));
    }

    #[test]
    fn same_content_ignores_rv_and_managed_field_times() {
        let a = json!({"metadata": {"resourceVersion": "1", "managedFields": [{"manager": "m", "time": "x"}]}, "spec": 1});
        let b = json!({"metadata": {"resourceVersion": "2", "managedFields": [{"manager": "m", "time": "y"}]}, "spec": 1});
        assert!(same_content(&a, &b));
        let c = json!({"metadata": {"resourceVersion": "2"}, "spec": 2});
        assert!(!same_content(&a, &c));
    }

    #[test]
    fn time_format_is_whole_seconds_utc() {
        let ts: jiff::Timestamp = "2024-05-01T12:34:56.789Z".parse().unwrap_or_default();
        assert_eq!(format_time(ts), "2024-05-01T12:34:56Z");
    }
}
