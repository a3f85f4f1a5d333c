//! ConfigMaps and Secrets: the size and key rules of their data, the keys each Secret type
//! needs, `stringData`, and data made immutable.

use base64::Engine;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::resources::{Builtin, Resource};
use crate::storage::object::ensure_object;
use kube_codegen_apimachinery::validation;

use super::set_default;

/// kube-apiserver's `MaxSecretSize`: the bytes a ConfigMap's `data` and `binaryData`, or a
/// Secret's `data`, may hold together.
pub(super) const MAX_DATA_SIZE: usize = 1024 * 1024;

/// The bytes a base64 value decodes to (three for every four symbols; newlines and padding
/// carry none). Values that do not decode were refused when the body was decoded.
pub(super) fn decoded_len(v: &Value) -> usize {
    let s = v.as_str().unwrap_or("");
    s.bytes()
        .filter(|b| !matches!(b, b'\n' | b'\r' | b'='))
        .count()
        * 3
        / 4
}

/// `ValidateConfigMap`'s and `ValidateSecret`'s size rule: at most [`MAX_DATA_SIZE`] bytes of
/// data, reported on `[]` for a ConfigMap and on `data` for a Secret, as kube-apiserver does.
pub(super) fn data_size_errors(kind: Builtin, obj: &Value) -> Vec<FieldError> {
    let values = |field: &str| {
        obj.get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
    };
    let (field, total) = match kind {
        Builtin::ConfigMap => (
            "[]",
            values("data")
                .map(|v| v.as_str().map_or(0, str::len))
                .sum::<usize>()
                + values("binaryData").map(decoded_len).sum::<usize>(),
        ),
        Builtin::Secret => ("data", values("data").map(decoded_len).sum()),
        _ => return Vec::new(),
    };
    if total > MAX_DATA_SIZE {
        vec![FieldError::too_long(field, MAX_DATA_SIZE)]
    } else {
        Vec::new()
    }
}

/// `ValidateConfigMap`'s and `ValidateSecret`'s key rules: every key of `data` (and a
/// ConfigMap's `binaryData`) is a config key, and a ConfigMap key is in one map only.
pub(super) fn data_key_errors(kind: Builtin, obj: &Value) -> Vec<FieldError> {
    let keys = |field: &str| {
        obj.get(field)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let bad_keys = |field: &str, keys: &[String]| {
        keys.iter()
            .flat_map(|k| {
                validation::is_config_map_key(k)
                    .into_iter()
                    .map(move |msg| FieldError::invalid_str(format!("{field}[{k}]"), k, msg))
            })
            .collect::<Vec<_>>()
    };
    let data = keys("data");
    match kind {
        Builtin::ConfigMap => {
            let binary = keys("binaryData");
            let mut errs = Vec::new();
            for k in &data {
                errs.extend(bad_keys("data", std::slice::from_ref(k)));
                if binary.contains(k) {
                    errs.push(FieldError::invalid_str(
                        format!("data[{k}]"),
                        k,
                        "duplicate of key present in binaryData",
                    ));
                }
            }
            errs.extend(bad_keys("binaryData", &binary));
            errs
        }
        Builtin::Secret => bad_keys("data", &data),
        _ => Vec::new(),
    }
}

/// `ValidateSecret`'s rules for the well-known secret types: the keys (or annotation) each
/// needs, and docker configurations that are JSON objects.
pub(super) fn secret_type_errors(obj: &Value) -> Vec<FieldError> {
    let data = obj.get("data").and_then(Value::as_object);
    let has = |key: &str| data.is_some_and(|d| d.contains_key(key));
    let bytes = |key: &str| {
        data.and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            .unwrap_or_default()
    };
    let required = |key: &str| FieldError::required(format!("data[{key}]"), "");
    let docker_config = |key: &str| {
        if !has(key) {
            return vec![required(key)];
        }
        let raw = bytes(key);
        let problem = match serde_json::from_slice::<Value>(&raw) {
            Err(e) => Some(crate::error::go_json_error(&e, &raw)),
            Ok(Value::Object(_)) => None,
            Ok(other) => Some(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                match other {
                    Value::Array(_) => "array",
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "bool",
                    _ => "null",
                }
            )),
        };
        // `null` unmarshals into a map without error in Go.
        let problem = problem.filter(|_| raw.trim_ascii() != b"null");
        problem
            .map(|p| {
                vec![FieldError::invalid(
                    format!("data[{key}]"),
                    go_quote("<secret contents redacted>"),
                    p,
                )]
            })
            .unwrap_or_default()
    };
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let named = obj
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if named {
                Vec::new()
            } else {
                vec![FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                )]
            }
        }
        "kubernetes.io/dockercfg" => docker_config(".dockercfg"),
        "kubernetes.io/dockerconfigjson" => docker_config(".dockerconfigjson"),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            vec![required("username"), required("password")]
        }
        "kubernetes.io/ssh-auth" if bytes("ssh-privatekey").is_empty() => {
            vec![required("ssh-privatekey")]
        }
        "kubernetes.io/tls" => ["tls.crt", "tls.key"]
            .into_iter()
            .filter(|k| !has(k))
            .map(required)
            .collect(),
        _ => Vec::new(),
    }
}

pub(super) fn secret_string_data(res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let m = ensure_object(obj);
    if let Some(Value::Object(sd)) = m.remove("stringData") {
        let data = ensure_object(m.entry("data").or_insert_with(|| json!({})));
        for (k, v) in sd {
            let s = v.as_str().unwrap_or("").as_bytes().to_vec();
            data.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(s)),
            );
        }
    }
    if let Some(Value::Object(data)) = m.get("data") {
        for v in data.values() {
            let problem = match v.as_str() {
                None => Some(0),
                Some(s) => crate::semantics::formats::go_base64_error(s),
            }
            .map(|at| format!("illegal base64 data at input byte {at}"));
            if let Some(problem) = problem {
                return Err(ApiError::bad_request(format!(
                    "{} in version \"{}\" cannot be handled as a {}: {problem}",
                    res.kind, res.version, res.kind
                )));
            }
        }
    }
    set_default(m, "type", json!("Opaque"));
    Ok(())
}

/// `ValidateConfigMapUpdate`'s and `ValidateSecretUpdate`'s rule for an object created with
/// `immutable: true`: `immutable` may not be unset and `fields` may not change.
pub(super) fn immutable_data_errors(old: &Value, new: &Value, fields: &[&str]) -> Vec<FieldError> {
    const WHY: &str = "field is immutable when `immutable` is set";
    let mut errs = Vec::new();
    if old.get("immutable") != Some(&json!(true)) {
        return errs;
    }
    if new.get("immutable") != Some(&json!(true)) {
        errs.push(FieldError::forbidden("immutable", WHY));
    }
    for field in fields {
        if old.get(*field) != new.get(*field) {
            errs.push(FieldError::forbidden(*field, WHY));
        }
    }
    errs
}
