//! The side effects of a stored write: a CRD registers or unregisters its resources, a
//! removal may finish a namespace or a CRD that waits for it to empty.

use serde_json::Value;

use super::delete::finalize_crd;
use crate::semantics::crd;
use crate::semantics::managed::{self, SERVER_MANAGER, Scope};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object::{self, ensure_object};

/// Side effects of a stored write.
pub(super) fn after_put(st: &mut State, res: &Resource, old: Option<&Value>, new: &Value) {
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
    // The naming and establishing controllers (a moment later on a real server), whose
    // status writes kube-apiserver records as the manager `kube-apiserver`.
    let Some(crd_res) = st
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let now = object::now_rfc3339();
    let mut established = new.clone();
    ensure_object(&mut established).insert("status".into(), crd::established_status(new, &now));
    if object::same_content(new, &established) {
        return;
    }
    let mut entries = managed::read_entries(new);
    managed::record_update(
        &crd_res,
        &mut entries,
        Some(new),
        &established,
        SERVER_MANAGER,
        Scope::Status,
        &now,
    );
    managed::write_entries(&mut established, &entries);
    st.put(&crd_res, established);
}

/// Side effects of a removal.
pub(super) fn after_remove(st: &mut State, res: &Resource, gone: &Value) {
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
}
