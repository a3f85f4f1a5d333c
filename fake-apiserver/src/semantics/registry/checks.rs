//! The checks every write shares: type meta, the object shape, the namespace it goes to,
//! field problems and pruning, and the validation of custom resources.

use std::sync::Arc;

use serde_json::{Value, json};

use super::WriteOptions;
use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::fields;
use crate::semantics::resources::Resource;
use crate::semantics::schema;
use crate::semantics::state::State;
use crate::storage::object::{self};

/// `summarizeData`: the first 30 bytes of a body, as error messages quote it.
pub(super) fn summarize(body: &str) -> String {
    if body.len() <= 30 {
        return body.to_string();
    }
    let mut end = 30;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &body[..end])
}

pub(super) fn missing_field_err(res: &Resource, field: &str, body: &Value) -> ApiError {
    let text = body.to_string();
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {}): Object '{field}' is missing in '{text}' ({})",
        res.kind,
        summarize(&text)
    ))
}

/// Checks `apiVersion`/`kind` of a request body against the resource, as the decoders do:
/// custom resources must carry both; built-ins default them.
pub(super) fn check_type_meta(res: &Resource, body: &Value) -> ApiResult<()> {
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = body.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if res.is_custom() {
        if kind.is_empty() {
            return Err(missing_field_err(res, "Kind", body));
        }
        if api_version != res.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                res.api_version()
            )));
        }
        if kind != res.kind {
            return Err(ApiError::invalid(
                &res.group,
                kind,
                object::name(body),
                vec![FieldError::invalid_str(
                    "kind",
                    kind,
                    format!("must be {}", res.kind),
                )],
            ));
        }
        return Ok(());
    }
    match builtin_type_meta_problem(res, body) {
        Some((kind, problem)) => Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {}: {problem}",
            go_quote(if api_version.is_empty() {
                &res.version
            } else {
                crate::semantics::resources::split_api_version(api_version).1
            }),
            res.kind
        ))),
        None => Ok(()),
    }
}

/// Why a built-in resource's decoder cannot take a body with its `apiVersion` and `kind`:
/// the kind the body names (the resource's when it names none) and the scheme's error.
pub(super) fn builtin_type_meta_problem(res: &Resource, body: &Value) -> Option<(String, String)> {
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = body.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let named = if kind.is_empty() { &res.kind } else { kind };
    if !api_version.is_empty() && api_version != res.api_version() {
        return Some((
            named.to_string(),
            format!(
                "no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:111\"",
                go_quote(named),
                go_quote(api_version)
            ),
        ));
    }
    if !kind.is_empty() && kind != res.kind {
        let package = if res.group.is_empty() {
            "core"
        } else {
            res.group.split('.').next().unwrap_or("")
        };
        return Some((
            kind.to_string(),
            format!(
                "converting ({}.{kind}) to ({package}.{}): unknown conversion",
                res.version, res.kind
            ),
        ));
    }
    None
}

pub(super) fn require_object(body: &Value) -> ApiResult<()> {
    if body.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be an object): {body}"
        )))
    }
}

/// `NamespaceLifecycle` admission for creates.
pub(super) fn check_namespace(
    st: &State,
    res: &Resource,
    namespace: &str,
    name: &str,
) -> ApiResult<()> {
    if !res.namespaced || !st.config.namespace_lifecycle {
        return Ok(());
    }
    let Some(ns_res) = st.registry.get("", "v1", "namespaces") else {
        return Ok(());
    };
    match st.get(&ns_res, "", namespace) {
        None => Err(ApiError::not_found("", "namespaces", namespace)),
        Some(ns) if object::is_deleting(&ns) => {
            let mut e = ApiError::forbidden(
                &res.group,
                &res.plural,
                name,
                &format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            );
            if let Some(Value::Object(d)) = &mut e.details {
                d.insert(
                    "causes".into(),
                    json!([{"reason": "NamespaceTerminating", "message": format!("namespace {namespace} is being terminated"), "field": "metadata.namespace"}]),
                );
            }
            Err(e)
        }
        Some(_) => Ok(()),
    }
}

/// The CRD object behind a custom resource, if it was registered by one.
pub(super) fn crd_of(st: &State, res: &Resource) -> Option<(Arc<Resource>, Arc<Value>)> {
    let name = &res.custom.as_ref()?.crd_name;
    let crd_res = st
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let obj = st.get(&crd_res, "", name)?;
    Some((crd_res, obj))
}

/// Reports the unknown and duplicate fields of a write as `fieldValidation` asks: a 400 (a 422
/// in a patch's shape for patches) for `Strict`, warnings for `Warn`.
pub(super) fn field_problems(
    res: &Resource,
    opts: &WriteOptions,
    obj: &Value,
    unknown: Vec<String>,
) -> ApiResult<()> {
    let p = &opts.body_problems;
    let unknown = unknown
        .into_iter()
        .map(|u| format!("unknown field {}", go_quote(&u)));
    let messages: Vec<String> = if opts.patch || res.is_custom() {
        p.duplicate
            .iter()
            .cloned()
            .chain(p.unknown.iter().cloned())
            .chain(unknown)
            .collect()
    } else {
        p.unknown
            .iter()
            .cloned()
            .chain(unknown)
            .chain(p.duplicate.iter().cloned())
            .collect()
    };
    if opts.patch && opts.field_validation == fields::Directive::Strict && !messages.is_empty() {
        let shown = serde_json::to_string(obj).unwrap_or_default();
        return Err(ApiError::invalid(
            "",
            "",
            "",
            vec![FieldError::invalid_str(
                "patch",
                &shown,
                format!("strict decoding error: {}", messages.join(", ")),
            )],
        ));
    }
    let warnings = fields::enforce(opts.field_validation, &res.kind, &res.version, messages)?;
    opts.warnings.lock().extend(warnings);
    Ok(())
}

/// Built-ins: drops what the type does not declare; returns those paths when the handler
/// could not see them in the body (patches).
pub(super) fn prune_builtin(res: &Resource, obj: &mut Value, report: bool) -> Vec<String> {
    let Some(def) = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    else {
        return Vec::new();
    };
    let root = fields::builtin_root(def);
    let unknown = if report {
        let bytes = serde_json::to_vec(obj).unwrap_or_default();
        fields::scan(&bytes, Some(&root)).unknown_paths()
    } else {
        Vec::new()
    };
    fields::prune(obj, &root);
    unknown
}

/// Custom resources: prune and default by the CRD schema (as decoding does, before anything
/// is validated); returns the pruned paths.
pub(super) fn prune_custom(res: &Resource, obj: &mut Value) -> Vec<String> {
    if let Some(meta) = obj.get_mut("metadata") {
        schema::prune_meta(meta);
    }
    let pruned = match res.custom.as_ref().and_then(|c| c.schema.as_ref()) {
        Some(schema_v) => schema::prune_and_default(obj, schema_v),
        None => Vec::new(),
    };
    // Written through another version than the storage version: converting it prunes what
    // the storage version's schema does not have, silently.
    if let Some(storage_schema) = res.custom.as_ref().and_then(|c| c.storage_schema.as_ref()) {
        schema::prune(obj, storage_schema);
    }
    pruned
}

/// Custom resources: validate against the CRD schema (OpenAPI value validations, scale
/// paths, list-type invariants, then CEL rules unless an earlier error blocks them), as the
/// custom resource strategy does.
pub(super) fn validate_custom(
    res: &Resource,
    obj: &Value,
    old: Option<&Value>,
    opts: &WriteOptions,
) -> ApiResult<()> {
    validate_custom_schema(res, obj, old, opts)?;
    if res.is_custom() {
        opts.warnings.lock().extend(finalizer_warnings(obj, old));
    }
    Ok(())
}

/// The custom resource strategy's warnings: finalizer names new to the object that are
/// neither standard (`kubernetes`, `orphan`, `foregroundDeletion`) nor domain-qualified.
fn finalizer_warnings(obj: &Value, old: Option<&Value>) -> Vec<String> {
    let before: std::collections::BTreeSet<String> = old
        .map(object::finalizers)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let added: std::collections::BTreeSet<String> = object::finalizers(obj)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    added
        .into_iter()
        .filter(|f| !f.contains('/') && !matches!(f.as_str(), "kubernetes" | "orphan" | "foregroundDeletion"))
        .map(|f| {
            format!(
                "metadata.finalizers: {}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
                crate::error::go_quote(&f)
            )
        })
        .collect()
}

fn validate_custom_schema(
    res: &Resource,
    obj: &Value,
    old: Option<&Value>,
    opts: &WriteOptions,
) -> ApiResult<()> {
    let Some(custom) = res.custom.as_ref() else {
        return Ok(());
    };
    let Some(schema_v) = custom.schema.as_ref() else {
        return Ok(());
    };
    let mut errs = schema::validate_values(obj, schema_v);
    if let Some(old) = old {
        // Validation ratcheting: an update may keep a value the schema no longer accepts.
        errs.retain(|e| !ratcheted(e, obj, old));
    }
    if let Some(scale) = &custom.scale {
        errs.extend(crate::semantics::scale::path_errors(obj, scale));
    }
    errs.extend(schema::list_errors(obj, schema_v));
    if let Some(rules) = &custom.cel {
        let blocking = errs.iter().any(|e| {
            matches!(
                e.kind,
                crate::error::FieldErrorKind::NotSupported(..)
                    | crate::error::FieldErrorKind::Required
                    | crate::error::FieldErrorKind::TooLong(_)
                    | crate::error::FieldErrorKind::TooMany(..)
                    | crate::error::FieldErrorKind::TypeInvalid(_)
            )
        });
        if blocking {
            errs.push(FieldError::invalid(
                "<nil>",
                "null",
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            let (cel_errs, warnings) = crate::semantics::cel::validate(rules, obj, old);
            errs.extend(cel_errs);
            opts.warnings.lock().extend(warnings);
        }
    }
    res.invalid_if_any(obj, errs)
}

/// Whether a value validation error of an update is ratcheted, as kube-apiserver's CRD
/// validation ratcheting does: the value it is about is the same in the old object (for a
/// missing required field, the object that should hold it is).
fn ratcheted(e: &FieldError, new: &Value, old: &Value) -> bool {
    use crate::semantics::cel::value_at;
    if e.field == "<nil>" {
        return false;
    }
    let path = match e.kind {
        crate::error::FieldErrorKind::Required => match e.field.rfind('.') {
            Some(i) => &e.field[..i],
            None => "",
        },
        _ => e.field.as_str(),
    };
    let now = value_at(new, path);
    now.is_some() && now == value_at(old, path)
}

/// The largest object storage takes: etcd's default `--max-request-bytes` (1.5 MiB), which
/// kube-apiserver's storage answers with a 500 (measured here on the object's JSON encoding;
/// kube-apiserver stores built-in kinds as protobuf, a little smaller).
pub(crate) const MAX_STORED_OBJECT_BYTES: usize = 1536 * 1024;

/// Refuses an object storage would refuse, before it is written.
pub(super) fn check_storage_size(obj: &Value) -> ApiResult<()> {
    if crate::storage::size::encoded_len(obj) > MAX_STORED_OBJECT_BYTES {
        return Err(ApiError::new(500, "", "etcdserver: request is too large"));
    }
    Ok(())
}
