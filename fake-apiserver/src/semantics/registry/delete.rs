//! `delete` and `deletecollection`: preconditions, finalizers and graceful deletion, the
//! namespace lifecycle and CRD removal.

use std::sync::Arc;

use serde_json::{Value, json};

use super::effects::after_remove;
use crate::error::{ApiError, ApiResult};
use crate::semantics::builtin;
use crate::semantics::crd;
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object::{self, ensure_object};
use crate::storage::predicate::Filter;
use crate::storage::store::ListOptions;

const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

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

/// `rest.BeforeDelete`'s precondition errors name the kind, not the resource.
pub(super) fn precondition_failed(res: &Resource, name: &str, why: String) -> ApiError {
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
    builtin::check_delete(res, name)?;
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
    // Garbage-collection finalizers from the propagation policy (nothing runs them here, as on
    // an API server without kube-controller-manager).
    let before = object::finalizers(&existing);
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
    if object::is_deleting(&existing) {
        // Already being deleted: a shorter grace period, or another policy's finalizers,
        // change something; anything else answers the object as it is.
        let pending_grace = object::meta(&existing)
            .and_then(|m| m.get("deletionGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let shorten = res.builtin == Some(Builtin::Pod)
            && pending_grace > 0
            && graceful.is_none_or(|g| g < pending_grace);
        if !shorten && finalizers == before {
            return Ok(Deleted::Pending((*existing).clone()));
        }
    }
    let mut obj = (*existing).clone();
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

pub(super) fn delete_namespace(
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
    }
    Ok(match st.get(res, "", name) {
        Some(obj) => Deleted::Pending((*obj).clone()),
        None => Deleted::Gone(existing),
    })
}

pub(super) fn delete_crd(
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
pub(super) fn finalize_crd(st: &mut State, crd_name: &str) {
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
        .storage
        .store(&crate::error::qualified(&group, &plural))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::semantics::registry::fixture::{err, ok, res, state, stored_cm};

    #[test]
    fn removes_with_preconditions() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let obj = stored_cm(&mut st, "a", json!({}));
        let wrong_uid = DeleteOptions {
            uid: Some("not-it".into()),
            ..DeleteOptions::default()
        };
        assert_eq!(err(delete(&mut st, &cms, "ns", "a", &wrong_uid)).code, 409);
        let right = DeleteOptions {
            uid: Some(object::uid(&obj).to_string()),
            resource_version: Some(object::resource_version(&obj).to_string()),
            ..DeleteOptions::default()
        };
        match ok(delete(&mut st, &cms, "ns", "a", &right)) {
            Deleted::Gone(last) => assert_eq!(object::name(&last), "a"),
            Deleted::Pending(o) => panic!("no finalizers, yet pending: {o}"),
        }
        assert!(st.get(&cms, "ns", "a").is_none());
        assert_eq!(
            err(delete(&mut st, &cms, "ns", "a", &DeleteOptions::default())).code,
            404
        );
    }

    #[test]
    fn finalizers_keep_the_object_until_removed() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let mut obj = stored_cm(&mut st, "a", json!({}));
        object::set_meta(&mut obj, "finalizers", Some(json!(["example.com/hold"])));
        st.put(&cms, obj);
        match ok(delete(&mut st, &cms, "ns", "a", &DeleteOptions::default())) {
            Deleted::Pending(o) => assert!(object::is_deleting(&o)),
            Deleted::Gone(o) => panic!("a finalizer must hold the object: {o}"),
        }
        assert!(st.get(&cms, "ns", "a").is_some());
        // Orphan propagation adds the orphan finalizer.
        stored_cm(&mut st, "b", json!({}));
        let orphan = DeleteOptions {
            propagation: Some("Orphan".into()),
            ..DeleteOptions::default()
        };
        match ok(delete(&mut st, &cms, "ns", "b", &orphan)) {
            Deleted::Pending(o) => assert_eq!(object::finalizers(&o), ["orphan"]),
            Deleted::Gone(o) => panic!("orphan propagation must leave a finalizer: {o}"),
        }
    }

    #[test]
    fn collections_and_namespaces() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        for n in ["a", "b", "c"] {
            stored_cm(&mut st, n, json!({}));
        }
        let filter = Filter {
            namespace: Some("ns".into()),
            ..Filter::default()
        };
        let (_, gone) = ok(delete_collection(
            &mut st,
            &cms,
            &filter,
            &DeleteOptions::default(),
        ));
        assert_eq!(gone.len(), 3);
        assert!(st.all_objects(&cms, Some("ns")).is_empty());
        // The immortal namespaces cannot be deleted; a namespace with the `kubernetes`
        // finalizer stays `Terminating` with its content until the namespace controller
        // (`crate::controllers`, above the registry) empties and finalizes it.
        let namespaces = res(&st, "", "namespaces");
        let e = err(delete(
            &mut st,
            &namespaces,
            "",
            "default",
            &DeleteOptions::default(),
        ));
        assert_eq!(e.code, 403);
        stored_cm(&mut st, "d", json!({}));
        ok(delete(
            &mut st,
            &namespaces,
            "",
            "ns",
            &DeleteOptions::default(),
        ));
        assert_eq!(st.all_objects(&cms, Some("ns")).len(), 1);
        let ns = st.get(&namespaces, "", "ns").unwrap();
        assert_eq!(ns["status"]["phase"], "Terminating");
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    }
}
