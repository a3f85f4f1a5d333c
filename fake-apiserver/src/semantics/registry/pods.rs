//! A Pod's `binding` and `eviction` subresources (create only): what a scheduler calls to
//! place a pod on a node, and what `kubectl drain` calls to move one away.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::delete::{DeleteOptions, delete};
use crate::error::{ApiError, ApiResult, go_quote};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::semantics::str_at;
use crate::storage::object;

/// The 400 of a `Binding` or an `Eviction` (`kind`) whose name is not the pod's of the URL,
/// `name`: the storage's first check, before the validating admission.
pub(crate) fn check_subresource_name(body: &Value, name: &str, kind: &str) -> ApiResult<()> {
    if object::name(body) == name {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "name in URL does not match name in {kind} object"
        )))
    }
}

/// `POST …/pods/{name}/binding` of a `Binding` whose name [`check_subresource_name`]
/// checked: sets the pod's node, takes the binding's annotations and marks the pod
/// `PodScheduled`. As kube-apiserver's binding storage, the write records no managed fields.
pub(crate) fn bind(
    st: &mut State,
    res: &Arc<Resource>,
    namespace: &str,
    name: &str,
    binding: &Value,
    dry_run: bool,
) -> ApiResult<()> {
    // kube-apiserver reports a bad binding as a 500 without a reason.
    let target_kind = str_at(binding, "/target/kind");
    if !target_kind.is_empty() && target_kind != "Node" {
        return Err(ApiError::new(
            500,
            "",
            format!(
                "target.kind: Unsupported value: {}: supported values: \"Node\", \"<empty>\"",
                go_quote(target_kind)
            ),
        ));
    }
    let node = str_at(binding, "/target/name");
    if node.is_empty() {
        return Err(ApiError::new(500, "", "target.name: Required value"));
    }
    let Some(old) = st.get(res, namespace, name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let conflict = |why: String| ApiError::conflict("", "pods/binding", name, &why);
    if object::is_deleting(&old) {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    let current = str_at(&old, "/spec/nodeName");
    if !current.is_empty() {
        return Err(conflict(format!(
            "pod {name} is already assigned to node {}",
            go_quote(current)
        )));
    }
    let mut pod = (*old).clone();
    if let Some(Value::Object(annotations)) = binding.pointer("/metadata/annotations")
        && !annotations.is_empty()
    {
        let meta = object::meta_mut(&mut pod);
        let into = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(into) = into {
            into.extend(annotations.clone());
        }
    }
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), json!(node));
    }
    set_condition(&mut pod, json!({"type": "PodScheduled", "status": "True"}));
    if !dry_run {
        st.put(res, pod);
    }
    Ok(())
}

/// `POST …/pods/{name}/eviction` of an `Eviction` whose name [`check_subresource_name`]
/// checked: marks the pod `DisruptionTarget` and deletes it with the eviction's delete options
/// (gracefully, as a DELETE would, if it is bound and running). No PodDisruptionBudgets are
/// served, so none refuses an eviction.
pub(crate) fn evict(
    st: &mut State,
    res: &Arc<Resource>,
    namespace: &str,
    name: &str,
    opts: &DeleteOptions,
) -> ApiResult<()> {
    let Some(old) = st.get(res, namespace, name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    if opts.dry_run {
        return delete(st, res, namespace, name, opts).map(drop);
    }
    let mut pod = (*old).clone();
    let changed = set_condition(
        &mut pod,
        json!({"type": "DisruptionTarget", "status": "True",
               "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
    );
    if changed {
        st.put(res, pod);
    }
    delete(st, res, namespace, name, opts).map(drop)
}

/// `podutil.UpdatePodCondition`: adds `condition` to the pod's status, or updates the one of
/// its type (its transition time only when the status changes); returns whether anything
/// changed.
fn set_condition(pod: &mut Value, mut condition: Value) -> bool {
    let Some(pod) = pod.as_object_mut() else {
        return false;
    };
    let status = pod.entry("status").or_insert_with(|| json!({}));
    let Some(status) = status.as_object_mut() else {
        return false;
    };
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    if let Some(c) = condition.as_object_mut() {
        c.insert("lastProbeTime".into(), Value::Null);
        c.insert("lastTransitionTime".into(), json!(object::now_rfc3339()));
    }
    object::set_condition(list, condition)
}
