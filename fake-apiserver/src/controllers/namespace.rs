//! The namespace controller, as kube-controller-manager's `namespace` controller works: for a
//! namespace being deleted that still has the `kubernetes` finalizer in `spec.finalizers`, it
//! deletes the namespace's pods first and, once none is left (KEP-5080's ordered deletion),
//! everything else namespaced (background propagation); it reports its progress in the
//! namespace's five deletion conditions, with the real controller's reasons and messages; and
//! when nothing is left it removes its finalizer through `/finalize`, which deletes the
//! namespace.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::write_options;
use crate::semantics::managed::Scope;
use crate::semantics::registry::{self, DeleteOptions, UpdateInput};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object;

/// The namespace controller's finalizer in `spec.finalizers`.
const FINALIZER: &str = "kubernetes";

/// The condition types it maintains, in the order it writes them, with their reasons and
/// messages when all is well.
const CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// One pass over the namespaces being deleted.
pub(super) fn pass(st: &mut State) {
    let Some(ns_res) = st.registry.get("", "v1", "namespaces") else {
        return;
    };
    for ns in st.all_objects(&ns_res, None) {
        let spec_finalizers = object::strings(ns.pointer("/spec/finalizers"));
        if !object::is_deleting(&ns) || !spec_finalizers.iter().any(|f| f == FINALIZER) {
            continue;
        }
        let name = object::name(&ns).to_string();
        sync(st, &ns_res, &name);
    }
}

/// The namespaced resources the controller deletes: one (preferred) version per store, pods
/// first.
fn deletable(st: &State) -> Vec<Arc<Resource>> {
    let mut seen = HashSet::new();
    let mut out: Vec<Arc<Resource>> = Vec::new();
    let all: Vec<Arc<Resource>> = st.registry.all().cloned().collect();
    for r in all {
        if !r.namespaced || r.is_create_only() || !seen.insert(r.store_key()) {
            continue;
        }
        let preferred = st
            .registry
            .versions_of(&r.group, &r.plural)
            .into_iter()
            .next()
            .unwrap_or(r);
        out.push(preferred);
    }
    out.sort_by_key(|r| r.builtin != Some(Builtin::Pod));
    out
}

/// What is left in the namespace: instances by `resource.group`, and by finalizer.
#[derive(Default)]
struct Remaining {
    by_resource: BTreeMap<String, usize>,
    by_finalizer: BTreeMap<String, usize>,
}

impl Remaining {
    fn count(&mut self, res: &Resource, objs: &[Arc<Value>]) {
        if objs.is_empty() {
            return;
        }
        *self
            .by_resource
            .entry(format!("{}.{}", res.plural, res.group))
            .or_default() += objs.len();
        for o in objs {
            for f in object::finalizers(o) {
                *self.by_finalizer.entry(f).or_default() += 1;
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.by_resource.is_empty()
    }
}

fn delete_all(st: &mut State, res: &Arc<Resource>, namespace: &str) -> Vec<Arc<Value>> {
    let opts = DeleteOptions {
        propagation: Some("Background".into()),
        ..DeleteOptions::default()
    };
    for o in st.all_objects(res, Some(namespace)) {
        if let Err(e) = registry::delete(st, res, namespace, object::name(&o), &opts)
            && e.code != 404
        {
            tracing::debug!(error = %e.message, name = object::name(&o), "namespace controller: delete failed");
        }
    }
    st.all_objects(res, Some(namespace))
}

fn sync(st: &mut State, ns_res: &Arc<Resource>, namespace: &str) {
    let mut remaining = Remaining::default();
    let resources = deletable(st);
    // Pods first; the rest only once no pod is left.
    let (pods, rest): (Vec<_>, Vec<_>) = resources
        .into_iter()
        .partition(|r| r.builtin == Some(Builtin::Pod));
    for r in &pods {
        let left = delete_all(st, r, namespace);
        remaining.count(r, &left);
    }
    if remaining.is_empty() {
        for r in &rest {
            let left = delete_all(st, r, namespace);
            remaining.count(r, &left);
        }
    }
    update_conditions(st, ns_res, namespace, &remaining);
    if !remaining.is_empty() {
        return;
    }
    let Some(ns) = st.get(ns_res, "", namespace) else {
        return;
    };
    let mut body = (*ns).clone();
    let mut finalizers = object::strings(body.pointer("/spec/finalizers"));
    finalizers.retain(|f| f != FINALIZER);
    if let Some(spec) = body.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("finalizers".into(), json!(finalizers));
    }
    tracing::debug!(namespace, "namespace controller: content gone; finalizing");
    if let Err(e) = registry::finalize(st, ns_res, namespace, body, &write_options()) {
        tracing::debug!(error = %e.message, namespace, "namespace controller: finalize failed");
    }
}

/// Writes the deletion conditions through the status subresource if they changed.
fn update_conditions(st: &mut State, ns_res: &Arc<Resource>, namespace: &str, left: &Remaining) {
    let Some(ns) = st.get(ns_res, "", namespace) else {
        return;
    };
    let mut wanted: BTreeMap<&str, (&str, String, String)> = CONDITIONS
        .iter()
        .map(|(t, reason, message)| (*t, ("False", reason.to_string(), message.to_string())))
        .collect();
    if !left.by_resource.is_empty() {
        let parts: Vec<String> = left
            .by_resource
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        wanted.insert(
            "NamespaceContentRemaining",
            (
                "True",
                "SomeResourcesRemain".into(),
                format!("Some resources are remaining: {}", sorted_join(parts)),
            ),
        );
    }
    if !left.by_finalizer.is_empty() {
        let parts: Vec<String> = left
            .by_finalizer
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        wanted.insert(
            "NamespaceFinalizersRemaining",
            (
                "True",
                "SomeFinalizersRemain".into(),
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    sorted_join(parts)
                ),
            ),
        );
    }
    let now = object::now_rfc3339();
    let mut conditions: Vec<Value> = ns
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for (t, _, _) in CONDITIONS {
        let (status, reason, message) = &wanted[t];
        changed |= object::set_condition(
            &mut conditions,
            json!({"type": t, "status": status, "lastTransitionTime": now,
                   "reason": reason, "message": message}),
        );
    }
    if !changed {
        return;
    }
    let mut body = (*ns).clone();
    let status = object::ensure_object(&mut body)
        .entry("status")
        .or_insert_with(|| json!({}));
    if let Some(s) = status.as_object_mut() {
        s.insert("conditions".into(), Value::Array(conditions));
    }
    let input = UpdateInput {
        body,
        scope: Scope::Status,
        managed_done: false,
        is_put: false,
    };
    if let Err(e) = registry::update(st, ns_res, "", namespace, input, &write_options()) {
        tracing::debug!(error = %e.message, namespace, "namespace controller: status update failed");
    }
}

/// Go's `sort.Strings` then `strings.Join(", ")`.
fn sorted_join(mut parts: Vec<String>) -> String {
    parts.sort();
    parts.join(", ")
}
