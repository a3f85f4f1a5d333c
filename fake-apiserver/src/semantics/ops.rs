//! The write verbs with the generic registry's semantics (`genericregistry.Store` and
//! `rest.BeforeCreate`/`BeforeUpdate`/`BeforeDelete`): create, update, patch, apply, delete,
//! deletecollection, plus the side effects of CRDs and namespaces.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::builtin;
use crate::semantics::crd;
use crate::semantics::field_selector::Filter;
use crate::semantics::fields;
use crate::semantics::managed::{self, Scope};
use crate::semantics::patch::{self, PatchType};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::schema;
use crate::semantics::validation;
use crate::storage::object::{self, ensure_object};
use crate::storage::state::{ListOptions, State};

/// The message of a 409 on a stale resourceVersion.
pub(crate) const OPTIMISTIC_LOCK_MSG: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// Options of a write request.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOptions {
    pub(crate) dry_run: bool,
    /// `fieldManager`, or what the API server derives from the User-Agent.
    pub(crate) manager: String,
    /// Whether `fieldManager` was given explicitly.
    pub(crate) explicit_manager: bool,
    pub(crate) force: Option<bool>,
    /// `fieldValidation`.
    pub(crate) field_validation: fields::Directive,
    /// Duplicate fields of the request body, and its unknown fields where the handler could
    /// tell them from the raw body (built-ins; custom resources' metadata).
    pub(crate) body_problems: fields::Problems,
    /// Set for non-apply patches: field problems are reported in the patch's shape.
    pub(crate) patch: bool,
    /// Warnings for the response's `Warning` headers.
    pub(crate) warnings: Arc<parking_lot::Mutex<Vec<String>>>,
}

/// Options of a delete request (query parameters and `DeleteOptions` body merged).
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) propagation: Option<String>,
    pub(crate) grace_period_seconds: Option<i64>,
    pub(crate) dry_run: bool,
}

/// The outcome of a delete.
#[derive(Debug)]
pub(crate) enum Deleted {
    /// Removed from storage; the last state.
    Gone(Arc<Value>),
    /// Still present (finalizers, graceful deletion); the current state.
    Pending(Value),
}

/// `summarizeData`: the first 30 bytes of a body, as error messages quote it.
fn summarize(body: &str) -> String {
    if body.len() <= 30 {
        return body.to_string();
    }
    let mut end = 30;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &body[..end])
}

fn missing_field_err(res: &Resource, field: &str, body: &Value) -> ApiError {
    let text = body.to_string();
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {}): Object '{field}' is missing in '{text}' ({})",
        res.kind,
        summarize(&text)
    ))
}

/// Checks `apiVersion`/`kind` of a request body against the resource, as the decoders do:
/// custom resources must carry both; built-ins default them.
fn check_type_meta(res: &Resource, body: &Value) -> ApiResult<()> {
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
    let version = crate::semantics::resources::split_api_version(api_version).1;
    if !api_version.is_empty() && api_version != res.api_version() {
        return Err(ApiError::bad_request(format!(
            "{} in version {} cannot be handled as a {}: no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:111\"",
            if kind.is_empty() { &res.kind } else { kind },
            go_quote(version),
            res.kind,
            go_quote(if kind.is_empty() { &res.kind } else { kind }),
            go_quote(api_version)
        )));
    }
    if !kind.is_empty() && kind != res.kind {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {}: converting ({}.{kind}) to ({}.{}): unknown conversion",
            go_quote(&res.version),
            res.kind,
            res.version,
            if res.group.is_empty() {
                "core"
            } else {
                res.group.split('.').next().unwrap_or("")
            },
            res.kind
        )));
    }
    Ok(())
}

fn require_object(body: &Value) -> ApiResult<()> {
    if body.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be an object): {body}"
        )))
    }
}

/// `NamespaceLifecycle` admission for creates.
fn check_namespace(st: &State, res: &Resource, namespace: &str, name: &str) -> ApiResult<()> {
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
fn crd_of(st: &State, res: &Resource) -> Option<(Arc<Resource>, Arc<Value>)> {
    let name = &res.custom.as_ref()?.crd_name;
    let crd_res = st
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let obj = st.get(&crd_res, "", name)?;
    Some((crd_res, obj))
}

/// Reports the unknown and duplicate fields of a write as `fieldValidation` asks: a 400 (a 422
/// in a patch's shape for patches) for `Strict`, warnings for `Warn`.
fn field_problems(
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
fn prune_builtin(res: &Resource, obj: &mut Value, report: bool) -> Vec<String> {
    let Some(def) = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    else {
        return Vec::new();
    };
    let root = fields::builtin_root(def);
    let unknown = if report {
        let bytes = serde_json::to_vec(obj).unwrap_or_default();
        fields::scan(&bytes, Some(&root))
            .unknown
            .into_iter()
            .map(|m| {
                m.trim_start_matches("unknown field ")
                    .trim_matches('"')
                    .to_string()
            })
            .collect()
    } else {
        Vec::new()
    };
    fields::prune(obj, &root);
    unknown
}

/// Custom resources: prune and default by the CRD schema (as decoding does, before anything
/// is validated); returns the pruned paths.
fn prune_custom(res: &Resource, obj: &mut Value) -> Vec<String> {
    if let Some(meta) = obj.get_mut("metadata") {
        schema::prune_meta(meta);
    }
    match res.custom.as_ref().and_then(|c| c.schema.as_ref()) {
        Some(schema_v) => schema::prune_and_default(obj, schema_v),
        None => Vec::new(),
    }
}

/// Custom resources: validate against the CRD schema (OpenAPI value validations, scale
/// paths, list-type invariants, then CEL rules unless an earlier error blocks them), as the
/// custom resource strategy does.
fn validate_custom(
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
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &res.group,
            &res.kind,
            object::name(obj),
            errs,
        ))
    }
}

fn meta_invalid(res: &Resource, obj: &Value, errs: Vec<FieldError>) -> ApiResult<()> {
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &res.group,
            &res.kind,
            object::name(obj),
            errs,
        ))
    }
}

/// How a create is made.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CreateFlags {
    /// `managedFields` were computed by an apply.
    pub(crate) preset_managed_fields: bool,
    /// Seeding from a test: no namespace admission, the given `status` is kept.
    pub(crate) seed: bool,
}

/// POST: creates an object.
pub(crate) fn create(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    mut obj: Value,
    opts: &WriteOptions,
    flags: CreateFlags,
) -> ApiResult<Value> {
    let preset_managed_fields = flags.preset_managed_fields;
    require_object(&obj)?;
    let given_status = if flags.seed {
        obj.get("status").cloned()
    } else {
        None
    };
    check_type_meta(res, &obj)?;
    let body_ns = object::namespace(&obj).to_string();
    if res.namespaced {
        if body_ns.is_empty() {
            object::set_meta(&mut obj, "namespace", Some(json!(url_namespace)));
        } else if body_ns != url_namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else {
        object::set_meta(&mut obj, "namespace", None);
    }
    object::set_type_meta(&mut obj, &res.api_version(), &res.kind);
    let meta = object::meta_mut(&mut obj);
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "selfLink",
    ] {
        meta.remove(field);
    }
    if !preset_managed_fields {
        meta.remove("managedFields");
    }
    // Generate the name first: validation sees the generated one.
    let generate_name = object::meta_str(&obj, "generateName").to_string();
    let mut generated = false;
    if object::name(&obj).is_empty() && !generate_name.is_empty() {
        let candidate = format!("{generate_name}{}", object::random_suffix(5));
        object::set_meta(&mut obj, "name", Some(json!(candidate)));
        generated = true;
    }
    if res.is_custom() && res.has_status() {
        ensure_object(&mut obj).remove("status");
    }
    // Decoding first (pruning, strict-decoding errors), validation after.
    let unknown = if res.is_custom() {
        prune_custom(res, &mut obj)
    } else {
        prune_builtin(res, &mut obj, opts.patch)
    };
    if !preset_managed_fields {
        field_problems(res, opts, &obj, unknown)?;
    }
    builtin::prepare_create(st, res, &mut obj)?;
    if let Some(s) = given_status {
        ensure_object(&mut obj).insert("status".into(), s);
    }
    if res.is_custom() {
        validate_custom(res, &obj, None, opts)?;
    }
    meta_invalid(
        res,
        &obj,
        validation::object_meta_errors(&obj, res.name_rule(), res.namespaced),
    )?;
    let namespace = object::namespace(&obj).to_string();
    if !flags.seed {
        check_namespace(st, res, &namespace, object::name(&obj))?;
    }
    if res.is_custom()
        && let Some((_, crd_obj)) = crd_of(st, res)
        && object::is_deleting(&crd_obj)
    {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
        ));
    }
    if st.get(res, &namespace, object::name(&obj)).is_some() {
        if generated {
            // Retry with another suffix, as the API server does for generated names.
            for _ in 0..16 {
                let candidate = format!("{generate_name}{}", object::random_suffix(5));
                if st.get(res, &namespace, &candidate).is_none() {
                    object::set_meta(&mut obj, "name", Some(json!(candidate)));
                    break;
                }
            }
        }
        if st.get(res, &namespace, object::name(&obj)).is_some() {
            return Err(ApiError::already_exists(
                &res.group,
                &res.plural,
                object::name(&obj),
            ));
        }
    }
    let now = object::now_rfc3339();
    object::set_meta(&mut obj, "uid", Some(json!(object::new_uid())));
    object::set_meta(&mut obj, "creationTimestamp", Some(json!(now)));
    if res.tracks_generation() {
        object::set_meta(&mut obj, "generation", Some(json!(1)));
    }
    if !preset_managed_fields {
        let mut entries = Vec::new();
        managed::record_update(
            res,
            &mut entries,
            None,
            &obj,
            &opts.manager,
            Scope::Main,
            &now,
        );
        managed::write_entries(&mut obj, &entries);
    }
    if opts.dry_run {
        return Ok(obj);
    }
    let stored = st.put(res, obj);
    after_put(st, res, None, &stored);
    Ok((*stored).clone())
}

/// What a PUT or patch writes: a full object for one scope.
pub(crate) struct UpdateInput {
    pub(crate) body: Value,
    pub(crate) scope: Scope,
    /// Set when managed fields were already computed (apply).
    pub(crate) managed_done: bool,
    /// PUT semantics (body names must match the URL; may create).
    pub(crate) is_put: bool,
}

/// PUT (and the common path of patches): returns the object and whether it was created.
pub(crate) fn update(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    input: UpdateInput,
    opts: &WriteOptions,
) -> ApiResult<(Value, bool)> {
    let UpdateInput {
        body,
        scope,
        managed_done,
        is_put,
    } = input;
    require_object(&body)?;
    check_type_meta(res, &body)?;
    if is_put {
        let body_name = object::name(&body);
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = object::namespace(&body);
        if res.namespaced && !body_ns.is_empty() && body_ns != url_namespace {
            return Err(ApiError::bad_request(format!(
                "the namespace of the object ({body_ns}) does not match the namespace on the request ({url_namespace})"
            )));
        }
    }
    let ns = if res.namespaced { url_namespace } else { "" };
    let Some(old) = st.get(res, ns, name) else {
        if is_put && scope == Scope::Main && res.allow_create_on_update() {
            let created = create(st, res, url_namespace, body, opts, CreateFlags::default())?;
            return Ok((created, true));
        }
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    // Storage preconditions (the UID) come before the resourceVersion check.
    let body_uid = object::uid(&body);
    if !body_uid.is_empty() && body_uid != object::uid(&old) {
        return Err(ApiError::conflict(
            &res.group,
            &res.plural,
            name,
            &format!(
                "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {body_uid}, UID in object meta: {}",
                crate::semantics::resources::storage_key(res, ns, name),
                object::uid(&old)
            ),
        ));
    }
    let body_rv = object::resource_version(&body).to_string();
    if body_rv.is_empty() {
        if !res.allow_unconditional_update() {
            return Err(ApiError::invalid(
                &res.group,
                &res.plural,
                name,
                vec![FieldError::invalid(
                    "metadata.resourceVersion",
                    "0",
                    "must be specified for an update",
                )],
            ));
        }
    } else {
        crate::storage::state::parse_rv(&body_rv)?;
        if body_rv != object::resource_version(&old) {
            return Err(ApiError::conflict(
                &res.group,
                &res.plural,
                name,
                OPTIMISTIC_LOCK_MSG,
            ));
        }
    }

    let mut new = match scope {
        Scope::Main => {
            let mut new = body;
            if res.has_status() {
                match old.get("status") {
                    Some(s) => {
                        ensure_object(&mut new).insert("status".into(), s.clone());
                    }
                    None => {
                        ensure_object(&mut new).remove("status");
                    }
                }
            }
            new
        }
        Scope::Status => {
            let mut new = (*old).clone();
            match body.get("status") {
                Some(s) => {
                    ensure_object(&mut new).insert("status".into(), s.clone());
                }
                None => {
                    ensure_object(&mut new).remove("status");
                }
            }
            if managed_done
                && let Some(mf) = object::meta(&body).and_then(|m| m.get("managedFields"))
            {
                object::set_meta(&mut new, "managedFields", Some(mf.clone()));
            }
            new
        }
    };
    object::set_type_meta(&mut new, &res.api_version(), &res.kind);
    // rest.BeforeUpdate: the server owns these.
    object::set_meta(
        &mut new,
        "namespace",
        if res.namespaced {
            Some(json!(url_namespace))
        } else {
            None
        },
    );
    let old_meta = object::meta(&old).cloned().unwrap_or_default();
    {
        let m = object::meta_mut(&mut new);
        for field in ["generation", "creationTimestamp", "deletionTimestamp"] {
            match old_meta.get(field) {
                Some(v) => m.insert(field.into(), v.clone()),
                None => m.remove(field),
            };
        }
        if m.get("uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && let Some(u) = old_meta.get("uid")
        {
            m.insert("uid".into(), u.clone());
        }
        if !m.contains_key("deletionGracePeriodSeconds")
            && let Some(g) = old_meta.get("deletionGracePeriodSeconds")
        {
            m.insert("deletionGracePeriodSeconds".into(), g.clone());
        }
        if !managed_done {
            match old_meta.get("managedFields") {
                Some(v) => m.insert("managedFields".into(), v.clone()),
                None => m.remove("managedFields"),
            };
        }
        m.remove("selfLink");
        m.insert(
            "resourceVersion".into(),
            json!(object::resource_version(&old)),
        );
    }
    // A patch's strict error shows the patched object before anything is dropped.
    let as_patched = if opts.patch { Some(new.clone()) } else { None };
    let unknown = if res.is_custom() {
        prune_custom(res, &mut new)
    } else {
        prune_builtin(res, &mut new, opts.patch)
    };
    if !managed_done {
        field_problems(res, opts, as_patched.as_ref().unwrap_or(&new), unknown)?;
    }
    if scope == Scope::Main {
        builtin::prepare_update(st, res, &old, &mut new)?;
    }
    if res.is_custom() {
        validate_custom(res, &new, Some(&old), opts)?;
    }
    let mut errs = validation::object_meta_errors(&new, res.name_rule(), res.namespaced);
    errs.extend(validation::object_meta_update_errors(&new, &old));
    if object::is_deleting(&old) {
        let before = object::finalizers(&old);
        let added: Vec<String> = object::finalizers(&new)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            errs.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    added.iter().map(|f| go_quote(f)).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    meta_invalid(res, &new, errs)?;
    if res.tracks_generation() && scope == Scope::Main {
        let changed =
            object::spec_part(&old, res.has_status()) != object::spec_part(&new, res.has_status());
        // Deployments also count annotation changes (apps/deployment's PrepareForUpdate keeps
        // the rollback annotation of extensions/v1beta1 meaningful).
        let annotations_changed = res.group == "apps"
            && res.plural == "deployments"
            && object::meta(&old).and_then(|m| m.get("annotations"))
                != object::meta(&new).and_then(|m| m.get("annotations"));
        if changed || annotations_changed {
            let g = object::generation(&old).unwrap_or(0) + 1;
            object::set_meta(&mut new, "generation", Some(json!(g)));
        }
    }
    let now = object::now_rfc3339();
    if !managed_done {
        let mut entries = managed::read_entries(&old);
        managed::record_update(
            res,
            &mut entries,
            Some(&old),
            &new,
            &opts.manager,
            scope,
            &now,
        );
        managed::write_entries(&mut new, &entries);
    }
    // The last finalizer of an object being deleted (with no grace period left) deletes it.
    let grace_zero = old_meta
        .get("deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        == Some(0);
    if object::is_deleting(&old) && grace_zero && object::finalizers(&new).is_empty() {
        if opts.dry_run {
            return Ok((new, false));
        }
        st.remove(res, ns, name);
        after_remove(st, res, &new);
        let rv = st.rv;
        object::set_meta(&mut new, "resourceVersion", Some(json!(rv.to_string())));
        return Ok((new, false));
    }
    if object::same_content(&old, &new) {
        return Ok(((*old).clone(), false));
    }
    if opts.dry_run {
        return Ok((new, false));
    }
    let stored = st.put(res, new);
    after_put(st, res, Some(&old), &stored);
    Ok(((*stored).clone(), false))
}

fn patch_options_invalid(field: FieldError) -> ApiError {
    ApiError::invalid("meta.k8s.io", "PatchOptions", "", vec![field])
}

/// PATCH: returns the object and whether it was created (apply only).
#[allow(clippy::too_many_arguments)] // the REST verb's own parameters
pub(crate) fn patch(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    ptype: PatchType,
    body: &Value,
    scope: Scope,
    opts: &WriteOptions,
) -> ApiResult<(Value, bool)> {
    if ptype != PatchType::Apply && opts.force.is_some() {
        return Err(patch_options_invalid(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )));
    }
    if ptype == PatchType::Apply && !opts.explicit_manager {
        return Err(patch_options_invalid(FieldError::required(
            "fieldManager",
            "is required for apply patch",
        )));
    }
    if ptype == PatchType::Strategic && !res.supports_strategic_merge() {
        return Err(patch::unsupported_patch(res));
    }
    let ns = if res.namespaced { url_namespace } else { "" };
    let current = st.get(res, ns, name);
    if ptype == PatchType::Apply {
        return apply(st, res, url_namespace, name, body, scope, opts, current);
    }
    let Some(current) = current else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let patched = match ptype {
        PatchType::Merge => patch::merge_patch(&current, body)?,
        PatchType::Json => patch::json_patch(&current, body)?,
        PatchType::Strategic => patch::strategic_merge(res, &current, body)?,
        PatchType::Apply => return Err(ApiError::internal("unreachable patch type")),
    };
    if object::name(&patched) != name {
        return Err(ApiError::invalid(
            &res.group,
            &res.kind,
            name,
            vec![FieldError::invalid_str(
                "metadata.name",
                object::name(&patched),
                "field is immutable",
            )],
        ));
    }
    update(
        st,
        res,
        url_namespace,
        name,
        UpdateInput {
            body: patched,
            scope,
            managed_done: false,
            is_put: false,
        },
        opts,
    )
}

#[allow(clippy::too_many_arguments)]
fn apply(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    config: &Value,
    scope: Scope,
    opts: &WriteOptions,
    current: Option<Arc<Value>>,
) -> ApiResult<(Value, bool)> {
    require_object(config)?;
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if kind.is_empty() || api_version.is_empty() {
        let (g, v) = crate::semantics::resources::split_api_version(api_version);
        return Err(ApiError::bad_request(format!(
            "invalid object type: {g}/{v}, Kind={kind}"
        )));
    }
    check_type_meta(res, config)?;
    if object::meta(config).is_some_and(|m| m.get("managedFields").is_some_and(|v| !v.is_null())) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    // The typed patch is built from the schema: a field it does not declare fails the apply,
    // whatever fieldValidation says.
    let unknown = if res.is_custom() {
        let mut probe = config.clone();
        match res.custom.as_ref().and_then(|c| c.schema.as_ref()) {
            Some(schema_v) => schema::prune_and_default(&mut probe, schema_v),
            None => Vec::new(),
        }
    } else {
        match res
            .builtin
            .and_then(crate::semantics::builtin_schema::definition_of)
        {
            Some(def) => {
                let bytes = serde_json::to_vec(config).unwrap_or_default();
                fields::scan(&bytes, Some(&fields::builtin_root(def)))
                    .unknown
                    .into_iter()
                    .map(|m| {
                        m.trim_start_matches("unknown field ")
                            .trim_matches('"')
                            .to_string()
                    })
                    .collect()
            }
            None => Vec::new(),
        }
    };
    if let Some(first) = unknown.first() {
        return Err(ApiError::new(
            500,
            "",
            format!(
                "failed to create typed patch object ({}/{}; {}/{}, Kind={}): .{first}: field not declared in schema",
                object::namespace(config),
                object::name(config),
                res.group,
                res.version,
                res.kind
            ),
        ));
    }
    let mut config = config.clone();
    match object::name(&config) {
        "" => object::set_meta(&mut config, "name", Some(json!(name))),
        n if n != name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        _ => {}
    }
    let now = object::now_rfc3339();
    let force = opts.force.unwrap_or(false);
    match current {
        None => {
            if scope == Scope::Status {
                return Err(ApiError::not_found(&res.group, &res.plural, name));
            }
            let merged = managed::apply(res, None, &config, &opts.manager, force, scope, &now)
                .map_err(|c| managed::conflict_error(&res.group, &res.plural, name, &c))?;
            let created = create(
                st,
                res,
                url_namespace,
                merged,
                opts,
                CreateFlags {
                    preset_managed_fields: true,
                    seed: false,
                },
            )?;
            Ok((created, true))
        }
        Some(live) => {
            let mut merged =
                managed::apply(res, Some(&live), &config, &opts.manager, force, scope, &now)
                    .map_err(|c| managed::conflict_error(&res.group, &res.plural, name, &c))?;
            // The applied configuration is no precondition unless it carries one.
            let rv = match object::resource_version(&config) {
                "" => object::resource_version(&live).to_string(),
                rv => rv.to_string(),
            };
            object::set_meta(&mut merged, "resourceVersion", Some(json!(rv)));
            update(
                st,
                res,
                url_namespace,
                name,
                UpdateInput {
                    body: merged,
                    scope,
                    managed_done: true,
                    is_put: false,
                },
                opts,
            )
        }
    }
}

/// `rest.BeforeDelete`'s precondition errors name the kind, not the resource.
fn precondition_failed(res: &Resource, name: &str, why: String) -> ApiError {
    ApiError::conflict(&res.group, &res.kind, name, &why)
}

/// DELETE of one object.
pub(crate) fn delete(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    opts: &DeleteOptions,
) -> ApiResult<Deleted> {
    let ns = if res.namespaced { url_namespace } else { "" };
    let Some(existing) = st.get(res, ns, name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    if let Some(uid) = &opts.uid
        && uid != object::uid(&existing)
    {
        return Err(precondition_failed(
            res,
            name,
            format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                object::uid(&existing)
            ),
        ));
    }
    if let Some(rv) = &opts.resource_version
        && rv != object::resource_version(&existing)
    {
        return Err(precondition_failed(
            res,
            name,
            format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                object::resource_version(&existing)
            ),
        ));
    }
    if res.builtin == Some(Builtin::Namespace) {
        return delete_namespace(st, res, name, existing, opts);
    }
    if res.builtin == Some(Builtin::Crd) {
        return delete_crd(st, res, name, existing, opts);
    }
    let now = object::now_rfc3339();
    let is_pod = res.builtin == Some(Builtin::Pod);
    let graceful = if is_pod {
        builtin::pod_grace_period(&existing, opts.grace_period_seconds)
    } else {
        None
    };
    if object::is_deleting(&existing) {
        // Already being deleted: only a shorter grace period changes anything.
        let pending_grace = object::meta(&existing)
            .and_then(|m| m.get("deletionGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let shorten = res.builtin == Some(Builtin::Pod)
            && pending_grace > 0
            && graceful.is_none_or(|g| g < pending_grace);
        if !shorten {
            return Ok(Deleted::Pending((*existing).clone()));
        }
    }
    let mut obj = (*existing).clone();
    // Garbage-collection finalizers from the propagation policy (nothing runs them here, as on
    // an API server without kube-controller-manager).
    let before = object::finalizers(&obj);
    let mut finalizers = before.clone();
    let wanted = match opts.propagation.as_deref() {
        Some("Orphan") => Some(Some("orphan")),
        Some("Foreground") => Some(Some("foregroundDeletion")),
        Some(_) => Some(None),
        // No policy: the object's own GC finalizers (if any) stay.
        None => None,
    };
    if let Some(wanted) = wanted {
        finalizers.retain(|f| f != "orphan" && f != "foregroundDeletion");
        if let Some(f) = wanted {
            finalizers.push(f.to_string());
        }
    }
    if finalizers != before {
        object::set_meta(&mut obj, "finalizers", Some(json!(finalizers)));
    }
    // Pods always take the graceful path: their deletion is first written (MODIFIED, with a
    // zero grace period for unbound pods) and then carried out.
    if !finalizers.is_empty() || graceful.is_some() || is_pod {
        let m = object::meta_mut(&mut obj);
        if m.get("deletionTimestamp").is_none_or(Value::is_null)
            && let Some(g) = m.get("generation").and_then(Value::as_i64)
            && g > 0
        {
            m.insert("generation".into(), json!(g + 1));
        }
        match graceful {
            Some(grace) => {
                let at = jiff::Timestamp::now()
                    .checked_add(jiff::SignedDuration::from_secs(grace))
                    .unwrap_or_else(|_| jiff::Timestamp::now());
                m.insert("deletionTimestamp".into(), json!(object::format_time(at)));
                m.insert("deletionGracePeriodSeconds".into(), json!(grace));
            }
            None => {
                if m.get("deletionTimestamp").is_none_or(Value::is_null) {
                    m.insert("deletionTimestamp".into(), json!(now));
                }
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
            }
        }
        if opts.dry_run {
            return Ok(Deleted::Pending(obj));
        }
        let stored = st.put(res, obj);
        if finalizers.is_empty() && graceful.is_none() {
            let gone = st.remove(res, ns, name).unwrap_or(stored.clone());
            after_remove(st, res, &gone);
            return Ok(Deleted::Gone(stored));
        }
        return Ok(Deleted::Pending((*stored).clone()));
    }
    if opts.dry_run {
        return Ok(Deleted::Gone(existing));
    }
    let gone = st.remove(res, ns, name).unwrap_or(existing);
    after_remove(st, res, &gone);
    Ok(Deleted::Gone(gone))
}

fn delete_namespace(
    st: &mut State,
    res: &Arc<Resource>,
    name: &str,
    existing: Arc<Value>,
    opts: &DeleteOptions,
) -> ApiResult<Deleted> {
    if IMMORTAL_NAMESPACES.contains(&name) {
        return Err(ApiError::forbidden(
            "",
            "namespaces",
            name,
            "this namespace may not be deleted",
        ));
    }
    if opts.dry_run {
        return Ok(Deleted::Pending((*existing).clone()));
    }
    if !object::is_deleting(&existing) {
        let mut obj = (*existing).clone();
        object::set_meta(
            &mut obj,
            "deletionTimestamp",
            Some(json!(object::now_rfc3339())),
        );
        object::set_meta(&mut obj, "deletionGracePeriodSeconds", Some(json!(0)));
        ensure_object(&mut obj).insert("status".into(), json!({"phase": "Terminating"}));
        let spec_finalizers = obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if !spec_finalizers && object::finalizers(&obj).is_empty() {
            let gone = st.remove(res, "", name).unwrap_or(existing);
            return Ok(Deleted::Gone(gone));
        }
        st.put(res, obj);
        if st.config.namespace_controller {
            let namespaced: Vec<Arc<Resource>> = st
                .registry
                .all()
                .filter(|r| r.namespaced)
                .cloned()
                .collect();
            let mut seen = std::collections::HashSet::new();
            for r in namespaced {
                if !seen.insert(r.store_key()) {
                    continue;
                }
                for o in st.all_objects(&r, Some(name)) {
                    let del = DeleteOptions {
                        grace_period_seconds: Some(0),
                        ..DeleteOptions::default()
                    };
                    // NotFound is fine: an earlier cascade may have removed it.
                    let _ = delete(st, &r, name, object::name(&o), &del);
                }
            }
            finalize_namespace(st, name);
        }
    }
    Ok(match st.get(res, "", name) {
        Some(obj) => Deleted::Pending((*obj).clone()),
        None => Deleted::Gone(existing),
    })
}

/// The namespace controller's last step: once a terminating namespace is empty, drop the
/// `kubernetes` finalizer and delete it.
fn finalize_namespace(st: &mut State, namespace: &str) {
    if !st.config.namespace_controller {
        return;
    }
    let Some(ns_res) = st.registry.get("", "v1", "namespaces") else {
        return;
    };
    let Some(ns) = st.get(&ns_res, "", namespace) else {
        return;
    };
    if !object::is_deleting(&ns) || st.namespace_has_content(namespace) {
        return;
    }
    if object::finalizers(&ns).is_empty() {
        st.remove(&ns_res, "", namespace);
    } else {
        let mut obj = (*ns).clone();
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("finalizers".into(), json!([]));
        }
        st.put(&ns_res, obj);
    }
}

fn delete_crd(
    st: &mut State,
    res: &Arc<Resource>,
    name: &str,
    existing: Arc<Value>,
    opts: &DeleteOptions,
) -> ApiResult<Deleted> {
    if opts.dry_run {
        return Ok(Deleted::Pending((*existing).clone()));
    }
    if !object::is_deleting(&existing) {
        let now = object::now_rfc3339();
        let mut obj = (*existing).clone();
        object::set_meta(&mut obj, "deletionTimestamp", Some(json!(now)));
        object::set_meta(&mut obj, "deletionGracePeriodSeconds", Some(json!(0)));
        let mut finalizers = object::finalizers(&obj);
        if !finalizers.iter().any(|f| f == crd::CLEANUP_FINALIZER) {
            finalizers.push(crd::CLEANUP_FINALIZER.to_string());
        }
        object::set_meta(&mut obj, "finalizers", Some(json!(finalizers)));
        if let Some(Value::Array(conds)) = obj.pointer_mut("/status/conditions") {
            conds.retain(|c| c.get("type").and_then(Value::as_str) != Some("Terminating"));
            conds.push(crd::terminating_condition(&now));
        }
        let marked = st.put(res, obj);
        // The finalizing controller deletes every instance (a moment later on a real server;
        // the response shows the CRD as marked).
        let (group, plural) = crd::group_plural(&existing);
        if let Some(cr) = st.registry.any_version(&group, &plural) {
            for o in st.all_objects(&cr, None) {
                let _ = delete(
                    st,
                    &cr,
                    object::namespace(&o),
                    object::name(&o),
                    &DeleteOptions::default(),
                );
            }
        }
        finalize_crd(st, name);
        return Ok(Deleted::Pending((*marked).clone()));
    }
    Ok(match st.get(res, "", name) {
        Some(obj) => Deleted::Pending((*obj).clone()),
        None => Deleted::Gone(existing),
    })
}

/// Once a terminating CRD has no instances left, its cleanup finalizer goes and it is deleted.
fn finalize_crd(st: &mut State, crd_name: &str) {
    let Some(crd_res) = st
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let Some(crd_obj) = st.get(&crd_res, "", crd_name) else {
        return;
    };
    if !object::is_deleting(&crd_obj) {
        return;
    }
    let (group, plural) = crd::group_plural(&crd_obj);
    let remaining = st
        .stores
        .get(&crate::error::qualified(&group, &plural))
        .is_some_and(|s| !s.objects.is_empty());
    if remaining {
        return;
    }
    let mut finalizers = object::finalizers(&crd_obj);
    finalizers.retain(|f| f != crd::CLEANUP_FINALIZER);
    if finalizers.is_empty() {
        if let Some(gone) = st.remove(&crd_res, "", crd_name) {
            after_remove(st, &crd_res, &gone);
        }
    } else {
        let mut obj = (*crd_obj).clone();
        object::set_meta(&mut obj, "finalizers", Some(json!(finalizers)));
        st.put(&crd_res, obj);
    }
}

/// DELETE on a collection: deletes every matching object; returns them.
pub(crate) fn delete_collection(
    st: &mut State,
    res: &Arc<Resource>,
    filter: &Filter,
    opts: &DeleteOptions,
) -> ApiResult<(u64, Vec<Value>)> {
    let page = st.list(
        res,
        &ListOptions {
            filter: filter.clone(),
            ..ListOptions::default()
        },
    )?;
    let mut out = Vec::new();
    for o in page.items {
        match delete(st, res, object::namespace(&o), object::name(&o), opts) {
            Ok(_) => out.push((*o).clone()),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok((page.resource_version, out))
}

/// Side effects of a stored write.
fn after_put(st: &mut State, res: &Resource, old: Option<&Value>, new: &Value) {
    if res.builtin != Some(Builtin::Crd) || object::is_deleting(new) {
        return;
    }
    let (group, plural) = crd::group_plural(new);
    let relevant = |v: &Value| {
        (
            v.get("spec").cloned(),
            object::meta(v).and_then(|m| m.get("annotations")).cloned(),
        )
    };
    if old.is_some_and(|o| relevant(o) == relevant(new)) {
        return;
    }
    st.registry.remove_all_versions(&group, &plural);
    let served = crd::resources(new);
    tracing::debug!(
        crd = object::name(new),
        versions = ?served.iter().map(|r| r.version.as_str()).collect::<Vec<_>>(),
        "custom resource registered"
    );
    for r in served {
        st.register(r);
    }
    // The naming and establishing controllers (a moment later on a real server).
    let mut established = new.clone();
    let status = crd::established_status(new, &object::now_rfc3339());
    ensure_object(&mut established).insert("status".into(), status);
    if let Some(crd_res) =
        st.registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        && !object::same_content(new, &established)
    {
        st.put(&crd_res, established);
    }
}

/// Side effects of a removal.
fn after_remove(st: &mut State, res: &Resource, gone: &Value) {
    match res.builtin {
        Some(Builtin::Crd) => {
            let (group, plural) = crd::group_plural(gone);
            st.unregister(&group, &plural);
            tracing::debug!(crd = object::name(gone), "custom resource unregistered");
        }
        None => {
            if let Some(c) = res.custom.as_ref() {
                let name = c.crd_name.clone();
                finalize_crd(st, &name);
            }
        }
        _ => {}
    }
    if res.namespaced {
        let ns = object::namespace(gone).to_string();
        finalize_namespace(st, &ns);
    }
}
