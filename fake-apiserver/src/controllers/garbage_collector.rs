//! The garbage collector, as kube-controller-manager's `garbagecollector` controller decides:
//!
//! * an object none of whose owners exists any more (not found, or found with another uid —
//!   a namespaced owner is looked up in its dependent's namespace) is deleted, with the
//!   propagation its own GC finalizers ask for (background otherwise);
//! * an object with some owners present drops its references to the absent ones and to those
//!   being deleted in the foreground;
//! * an owner being deleted in the foreground (`foregroundDeletion` finalizer) has its
//!   dependents deleted (in the foreground themselves if they have dependents) and loses the
//!   finalizer once no dependent with `blockOwnerDeletion: true` is left;
//! * an owner being deleted with `orphan` has its references removed from its dependents, then
//!   loses the finalizer;
//! * a cluster-scoped object that names a namespaced kind as its owner, or an owner of a kind
//!   the server does not serve, is left alone (the real collector gives up on it, or retries).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::write_options;
use crate::semantics::managed::Scope;
use crate::semantics::registry::{self, DeleteOptions, UpdateInput};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::storage::object;

const ORPHAN: &str = "orphan";
const FOREGROUND: &str = "foregroundDeletion";

/// An object seen at the start of a pass.
struct Node {
    res: Arc<Resource>,
    namespace: String,
    name: String,
    uid: String,
}

/// One owner reference of an object.
struct OwnerRef {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    block: bool,
}

fn owner_refs(obj: &Value) -> Vec<OwnerRef> {
    object::meta(obj)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .map(|r| {
                    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    OwnerRef {
                        api_version: s("apiVersion"),
                        kind: s("kind"),
                        name: s("name"),
                        uid: s("uid"),
                        block: r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What an owner reference points at, now.
enum Owner {
    /// Present and not waiting for its dependents.
    Solid,
    /// Absent: not found, or another object of that name.
    Dangling,
    /// Present, being deleted in the foreground.
    Waiting,
    /// Unresolvable (a kind nothing serves) or invalid (a namespaced owner of a
    /// cluster-scoped object): the dependent is left alone.
    Unusable,
}

fn lookup(st: &State, r: &OwnerRef, dependent: &Node) -> Owner {
    let Some(res) = st.registry.by_kind(&r.api_version, &r.kind) else {
        tracing::debug!(
            api_version = %r.api_version,
            kind = %r.kind,
            dependent = %dependent.name,
            "garbage collector: owner kind not served; dependent left alone"
        );
        return Owner::Unusable;
    };
    if res.namespaced && !dependent.res.namespaced {
        tracing::debug!(
            dependent = %dependent.name,
            owner_kind = %r.kind,
            "garbage collector: a cluster-scoped object refers to a namespaced owner; left alone"
        );
        return Owner::Unusable;
    }
    let ns = if res.namespaced {
        dependent.namespace.as_str()
    } else {
        ""
    };
    match st.get(&res, ns, &r.name) {
        None => Owner::Dangling,
        Some(o) if object::uid(&o) != r.uid => Owner::Dangling,
        Some(o)
            if object::is_deleting(&o)
                && object::finalizers(&o).iter().any(|f| f == FOREGROUND) =>
        {
            Owner::Waiting
        }
        Some(_) => Owner::Solid,
    }
}

/// The node's object now, if it is still the same object.
fn current(st: &State, n: &Node) -> Option<Arc<Value>> {
    st.get(&n.res, &n.namespace, &n.name)
        .filter(|o| object::uid(o) == n.uid)
}

/// Every object of every served resource, once per store.
fn snapshot(st: &State) -> Vec<Node> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let resources: Vec<Arc<Resource>> = st.registry.all().cloned().collect();
    for r in resources {
        if !seen.insert(r.store_key()) {
            continue;
        }
        for o in st.all_objects(&r, None) {
            let api_version = o.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
            let res = st
                .registry
                .by_kind(api_version, kind)
                .filter(|x| x.store_key() == r.store_key())
                .unwrap_or_else(|| r.clone());
            out.push(Node {
                res,
                namespace: object::namespace(&o).to_string(),
                name: object::name(&o).to_string(),
                uid: object::uid(&o).to_string(),
            });
        }
    }
    out
}

/// The indexes of the nodes whose owner references name `uid`.
fn index_dependents(st: &State, nodes: &[Node]) -> HashMap<String, Vec<usize>> {
    let mut out: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(o) = current(st, n) {
            for r in owner_refs(&o) {
                out.entry(r.uid).or_default().push(i);
            }
        }
    }
    out
}

/// The dependents of `owner` now (those whose reference to it resolves to it), each with
/// whether its reference blocks the owner's deletion.
fn dependents<'a>(
    st: &State,
    nodes: &'a [Node],
    index: &HashMap<String, Vec<usize>>,
    owner: &Node,
) -> Vec<(&'a Node, bool)> {
    let Some(candidates) = index.get(&owner.uid) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &i in candidates {
        let d = &nodes[i];
        // A namespaced owner owns only dependents of its namespace.
        if owner.res.namespaced && (!d.res.namespaced || d.namespace != owner.namespace) {
            continue;
        }
        let Some(o) = current(st, d) else { continue };
        if let Some(r) = owner_refs(&o).into_iter().find(|r| r.uid == owner.uid) {
            out.push((d, r.block));
        }
    }
    out
}

/// One pass over every object.
pub(super) fn pass(st: &mut State) {
    let nodes = snapshot(st);
    let index = index_dependents(st, &nodes);
    // Owners being deleted with the collector's finalizers.
    for n in &nodes {
        let Some(o) = current(st, n) else { continue };
        if !object::is_deleting(&o) {
            continue;
        }
        let finalizers = object::finalizers(&o);
        if finalizers.iter().any(|f| f == ORPHAN) {
            for (d, _) in dependents(st, &nodes, &index, n) {
                remove_owner_refs(st, d, &[n.uid.as_str()]);
            }
            remove_finalizer(st, n, ORPHAN);
        } else if finalizers.iter().any(|f| f == FOREGROUND) {
            for (d, _) in dependents(st, &nodes, &index, n) {
                if current(st, d).is_some_and(|o| !object::is_deleting(&o)) {
                    attempt_to_delete(st, &nodes, &index, d);
                }
            }
            let blocking = dependents(st, &nodes, &index, n)
                .into_iter()
                .any(|(_, block)| block);
            if !blocking {
                remove_finalizer(st, n, FOREGROUND);
            }
        }
    }
    // Dependents whose owners may be gone.
    for n in &nodes {
        let Some(o) = current(st, n) else { continue };
        if object::is_deleting(&o) || owner_refs(&o).is_empty() {
            continue;
        }
        attempt_to_delete(st, &nodes, &index, n);
    }
}

/// `attemptToDeleteItem`: classifies the object's owners and deletes it, or drops references,
/// as kube-controller-manager does.
fn attempt_to_delete(
    st: &mut State,
    nodes: &[Node],
    index: &HashMap<String, Vec<usize>>,
    n: &Node,
) {
    let Some(o) = current(st, n) else { return };
    let refs = owner_refs(&o);
    if refs.is_empty() {
        return;
    }
    let (mut solid, mut gone) = (0usize, Vec::new());
    let mut waiting = false;
    for r in &refs {
        match lookup(st, r, n) {
            Owner::Unusable => return,
            Owner::Solid => solid += 1,
            Owner::Dangling => gone.push(r.uid.as_str()),
            Owner::Waiting => {
                waiting = true;
                gone.push(r.uid.as_str());
            }
        }
    }
    if solid > 0 {
        if !gone.is_empty() {
            remove_owner_refs(st, n, &gone);
        }
        return;
    }
    let has_dependents = index
        .get(&n.uid)
        .is_some_and(|c| c.iter().any(|&i| current(st, &nodes[i]).is_some()));
    let policy = if waiting && has_dependents {
        "Foreground"
    } else {
        let finalizers = object::finalizers(&o);
        if finalizers.iter().any(|f| f == ORPHAN) {
            "Orphan"
        } else if finalizers.iter().any(|f| f == FOREGROUND) {
            "Foreground"
        } else {
            "Background"
        }
    };
    tracing::debug!(
        kind = %n.res.kind,
        namespace = %n.namespace,
        name = %n.name,
        policy,
        "garbage collector: deleting an object whose owners are gone"
    );
    let opts = DeleteOptions {
        uid: Some(n.uid.clone()),
        propagation: Some(policy.to_string()),
        ..DeleteOptions::default()
    };
    if let Err(e) = registry::delete(st, &n.res, &n.namespace, &n.name, &opts) {
        tracing::debug!(error = %e.message, name = %n.name, "garbage collector: delete failed");
    }
}

/// Removes the owner references with these uids (an update, as the collector's patch).
fn remove_owner_refs(st: &mut State, n: &Node, uids: &[&str]) {
    let Some(o) = current(st, n) else { return };
    let mut obj = (*o).clone();
    let meta = object::meta_mut(&mut obj);
    let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") else {
        return;
    };
    let before = refs.len();
    refs.retain(|r| !uids.contains(&r.get("uid").and_then(Value::as_str).unwrap_or("")));
    if refs.len() == before {
        return;
    }
    if refs.is_empty() {
        meta.remove("ownerReferences");
    }
    write(st, n, obj);
}

/// Removes one finalizer (the collector's own, once its work is done).
fn remove_finalizer(st: &mut State, n: &Node, finalizer: &str) {
    let Some(o) = current(st, n) else { return };
    let mut finalizers = object::finalizers(&o);
    finalizers.retain(|f| f != finalizer);
    let mut obj = (*o).clone();
    object::set_meta(
        &mut obj,
        "finalizers",
        (!finalizers.is_empty()).then(|| json!(finalizers)),
    );
    write(st, n, obj);
}

fn write(st: &mut State, n: &Node, body: Value) {
    let input = UpdateInput {
        body,
        scope: Scope::Main,
        managed_done: false,
        is_put: false,
    };
    if let Err(e) = registry::update(st, &n.res, &n.namespace, &n.name, input, &write_options()) {
        tracing::debug!(error = %e.message, name = %n.name, "garbage collector: update failed");
    }
}
