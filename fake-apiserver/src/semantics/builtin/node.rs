//! Nodes: what decoding a v1 Node defaults (its pod CIDRs, its allocatable resources) and the
//! `TaintNodesByCondition` admission plugin's taint on a new Node.

use serde_json::{Value, json};

use crate::storage::object::ensure_object;

/// What decoding a v1 Node sets: `spec.podCIDRs` from `spec.podCIDR` when it is missing or
/// starts with another CIDR (`Convert_v1_NodeSpec_To_core_NodeSpec`: `podCIDR` is
/// authoritative for older clients), and `status.allocatable` as the capacity when missing
/// (`SetDefaults_NodeStatus`).
pub(super) fn node_defaults(obj: &mut Value) {
    let node = ensure_object(obj);
    if let Some(spec) = node.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(cidr) = spec
            .get("podCIDR")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
    {
        let first = spec
            .get("podCIDRs")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(Value::as_str);
        if first != Some(cidr) {
            let cidrs = json!([cidr]);
            spec.insert("podCIDRs".into(), cidrs);
        }
    }
    if let Some(status) = node.get_mut("status").and_then(Value::as_object_mut)
        && status.get("allocatable").is_none_or(Value::is_null)
        && let Some(capacity) = status.get("capacity").filter(|c| !c.is_null()).cloned()
    {
        status.insert("allocatable".into(), capacity);
    }
}

/// The `TaintNodesByCondition` admission plugin: a new Node is not ready until a node
/// controller says so, so it gets the `node.kubernetes.io/not-ready:NoSchedule` taint unless
/// it has one with that key and effect.
pub(super) fn add_not_ready_taint(obj: &mut Value) {
    const KEY: &str = "node.kubernetes.io/not-ready";
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let taints = super::ensure_array(spec.entry("taints").or_insert_with(|| json!([])));
    let present = taints.iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(KEY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if !present {
        taints.push(json!({"key": KEY, "effect": "NoSchedule"}));
    }
}
