//! `update`: `rest.BeforeUpdate` — preconditions, immutable fields, the status/main split,
//! validation — then the replaced object (or a create, where the resource allows it).

use std::sync::Arc;

use serde_json::{Value, json};

use super::checks::{
    builtin_type_meta_problem, check_storage_size, check_type_meta, field_problems, prune_builtin,
    prune_custom, require_object, validate_custom,
};
use super::create::{CreateFlags, create};
use super::effects::{after_put, after_remove};
use super::{OPTIMISTIC_LOCK_MSG, WriteOptions};
use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::builtin;
use crate::semantics::managed::{self, Scope};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::semantics::validation;
use crate::storage::object::{self, ensure_object};

/// What a PUT or patch writes: a full object for one scope.
pub(crate) struct UpdateInput {
    pub(crate) body: Value,
    pub(crate) scope: Scope,
    /// Set when managed fields were already computed (apply).
    pub(crate) managed_done: bool,
    /// PUT semantics (body names must match the URL; may create).
    pub(crate) is_put: bool,
}

/// The name an object written to `name`'s URL carries (a PUT body, or a patched object: the
/// update handler's and the patcher's `checkName`) must be that name: a 400 otherwise.
pub(crate) fn check_name(found: &str, name: &str) -> ApiResult<()> {
    if found.is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        )));
    }
    if found != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({found}) does not match the name on the URL ({name})"
        )));
    }
    Ok(())
}

/// A PUT body's checks against the URL (kube-apiserver's update handler): the body names the
/// object, the same one as the URL, and no other namespace. The scale subresource checks its
/// Scale body the same way.
pub(crate) fn check_body_names(
    res: &Resource,
    body: &Value,
    url_namespace: &str,
    name: &str,
) -> ApiResult<()> {
    check_name(object::name(body), name)?;
    let body_ns = object::namespace(body);
    if res.namespaced && !body_ns.is_empty() && body_ns != url_namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
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
        mut body,
        scope,
        managed_done,
        is_put,
    } = input;
    require_object(&body)?;
    // Managed fields the request sets replace the live ones (a write through a subresource
    // keeps the live ones). Read before Go's decoding drops an empty list.
    let requested = if managed_done || scope != Scope::Main {
        managed::Requested::Keep
    } else {
        managed::requested_entries(
            res,
            object::meta(&body).and_then(|m| m.get("managedFields")),
        )
    };
    object::whole_floats_to_integers(&mut body);
    if let Some(def) = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    {
        crate::semantics::fields::canonical_bytes(&mut body, def);
    }
    // A patch that changes a built-in object's `apiVersion` or `kind` is refused as the
    // patched object kube-apiserver could not decode (422 on `patch`), a body as a bad request.
    if opts.patch
        && res.builtin.is_some()
        && let Some((_, problem)) = builtin_type_meta_problem(res, &body)
    {
        return Err(ApiError::invalid(
            "",
            "",
            "",
            vec![FieldError::invalid(
                "patch",
                go_quote(&body.to_string()),
                problem,
            )],
        ));
    }
    check_type_meta(res, &body)?;
    if is_put {
        check_body_names(res, &body, url_namespace, name)?;
    }
    let ns = if res.namespaced { url_namespace } else { "" };
    let Some(old) = st.get(res, ns, name) else {
        if is_put && scope == Scope::Main && res.allow_create_on_update() {
            let created = create(st, res, url_namespace, body, opts, CreateFlags::default())?;
            return Ok((created, true));
        }
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    // Storage preconditions (the UID of a PUT's body) come before the resourceVersion check;
    // a patch that changes the UID is refused by validation (`metadata.uid` is immutable).
    let body_uid = object::uid(&body);
    if !opts.patch && !body_uid.is_empty() && body_uid != object::uid(&old) {
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
        crate::storage::store::parse_rv(&body_rv)?;
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
        // A scale write's body is the whole object with its replicas set.
        Scope::Main | Scope::Scale => {
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
        for field in ["generation", "creationTimestamp"] {
            match old_meta.get(field) {
                Some(v) => m.insert(field.into(), v.clone()),
                None => m.remove(field),
            };
        }
        // An update never changes a deletion timestamp once set; setting one is refused by
        // validation (object_meta_update_errors).
        if let Some(v) = old_meta.get("deletionTimestamp").filter(|v| !v.is_null()) {
            m.insert("deletionTimestamp".into(), v.clone());
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
    if scope == Scope::Status {
        builtin::prepare_status_update(res, &mut new);
    } else {
        builtin::prepare_update(st, res, &old, &mut new)?;
    }
    if res.is_custom() {
        validate_custom(res, &new, Some(&old), opts)?;
    }
    let mut errs = validation::object_meta_errors(
        &new,
        res.name_rule(),
        res.namespaced,
        res.builtin.is_some(),
    );
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
    res.invalid_if_any(&new, errs)?;
    if scope != Scope::Status {
        builtin::validating_admission(st, res, &new, Some(&old))?;
    }
    if res.tracks_generation() && scope != Scope::Status {
        let changed =
            object::spec_part(&old, res.has_status()) != object::spec_part(&new, res.has_status());
        // Deployments also count annotation changes (apps/deployment's PrepareForUpdate keeps
        // the rollback annotation of extensions/v1beta1 meaningful).
        let annotations_changed = res.group == "apps"
            && res.plural == "deployments"
            && object::meta(&old).and_then(|m| m.get("annotations"))
                != object::meta(&new).and_then(|m| m.get("annotations"));
        // An EndpointSlice's labels count too (its strategy compares them with the rest).
        let labels_changed = res.builtin == Some(Builtin::EndpointSlice)
            && object::meta(&old).and_then(|m| m.get("labels"))
                != object::meta(&new).and_then(|m| m.get("labels"));
        if changed || annotations_changed || labels_changed {
            let g = object::generation(&old).unwrap_or(0) + 1;
            object::set_meta(&mut new, "generation", Some(json!(g)));
        }
    }
    let now = object::now_rfc3339();
    if !managed_done {
        let entries = match requested {
            managed::Requested::Keep => managed::read_entries(&old),
            managed::Requested::Entries(entries) => entries,
            managed::Requested::Reset => Vec::new(),
        };
        if entries.is_empty() {
            // kube-apiserver does not start tracking an existing object's fields on an update:
            // an object without managed fields stays without them.
            object::meta_mut(&mut new).remove("managedFields");
        } else {
            let mut entries = entries;
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
    }
    // The last finalizer of an object being deleted (with no grace period left) deletes it.
    let grace_zero = old_meta
        .get("deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        == Some(0);
    // A namespace also waits for its `spec.finalizers` (`ShouldDeleteNamespaceDuringUpdate`).
    let spec_finalizers = res.builtin == Some(crate::semantics::resources::Builtin::Namespace)
        && !object::strings(new.pointer("/spec/finalizers")).is_empty();
    if object::is_deleting(&old)
        && grace_zero
        && object::finalizers(&new).is_empty()
        && !spec_finalizers
    {
        if opts.dry_run {
            return Ok((new, false));
        }
        st.remove(res, ns, name);
        after_remove(st, res, &new);
        let rv = st.rv();
        object::set_meta(&mut new, "resourceVersion", Some(json!(rv.to_string())));
        return Ok((new, false));
    }
    if object::same_content(&old, &new) {
        return Ok(((*old).clone(), false));
    }
    if opts.dry_run {
        return Ok((new, false));
    }
    check_storage_size(&new)?;
    let stored = st.put(res, new);
    after_put(st, res, Some(&old), &stored);
    Ok(((*stored).clone(), false))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::semantics::registry::fixture::{cm, err, ok, opts, res, state, stored_cm};

    fn put(body: Value) -> UpdateInput {
        UpdateInput {
            body,
            scope: Scope::Main,
            managed_done: false,
            is_put: true,
        }
    }

    #[test]
    fn replaces_with_optimistic_concurrency() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let first = stored_cm(&mut st, "a", json!({"k": "1"}));
        let mut next = first.clone();
        next["data"]["k"] = json!("2");
        let (obj, created) = ok(update(&mut st, &cms, "ns", "a", put(next.clone()), &opts()));
        assert!(!created);
        assert_eq!(obj["data"]["k"], "2");
        assert_eq!(object::uid(&obj), object::uid(&first));
        assert_ne!(
            object::resource_version(&obj),
            object::resource_version(&first)
        );
        // The same stale resourceVersion again: 409 with the optimistic-lock message.
        let e = err(update(&mut st, &cms, "ns", "a", put(next), &opts()));
        assert_eq!(e.code, 409);
        assert!(e.message.contains(OPTIMISTIC_LOCK_MSG), "{}", e.message);
    }

    #[test]
    fn a_missing_object_is_created_only_where_the_resource_allows() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        // ConfigMaps do not allow create on update: a PUT of a missing one is a 404.
        let e = err(update(
            &mut st,
            &cms,
            "ns",
            "new",
            put(cm("new", json!({}))),
            &opts(),
        ));
        assert_eq!(e.code, 404);
        // Endpoints do.
        let endpoints = res(&st, "", "endpoints");
        let ep = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "new"}});
        let (obj, created) = ok(update(&mut st, &endpoints, "ns", "new", put(ep), &opts()));
        assert!(created);
        assert_eq!(object::name(&obj), "new");
        // A name in the body different from the URL's is refused.
        let other = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "other"}});
        let e = err(update(
            &mut st,
            &endpoints,
            "ns",
            "new",
            put(other),
            &opts(),
        ));
        assert_eq!(e.code, 400);
    }

    #[test]
    fn no_op_update_keeps_the_resource_version() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let first = stored_cm(&mut st, "a", json!({"k": "1"}));
        let rv = st.rv();
        let (obj, _) = ok(update(
            &mut st,
            &cms,
            "ns",
            "a",
            put(first.clone()),
            &opts(),
        ));
        assert_eq!(
            object::resource_version(&obj),
            object::resource_version(&first)
        );
        assert_eq!(st.rv(), rv);
    }
}
