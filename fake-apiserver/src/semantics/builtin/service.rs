//! Services: defaults (target ports, type), the cluster IPs the REST storage allocates, and
//! the port rules.

use serde_json::{Value, json};

use crate::error::FieldError;
use crate::semantics::state::State;
use crate::storage::object::ensure_object;

use super::set_default;

/// `SetDefaults_Endpoints`: a port's protocol is TCP unless given.
pub(super) fn endpoints_defaults(obj: &mut Value) {
    let Some(Value::Array(subsets)) = ensure_object(obj).get_mut("subsets") else {
        return;
    };
    for subset in subsets {
        if let Some(Value::Array(ports)) = ensure_object(subset).get_mut("ports") {
            for p in ports {
                set_default(ensure_object(p), "protocol", json!("TCP"));
            }
        }
    }
}

/// discovery/v1's `SetDefaults_EndpointPort`: an EndpointSlice port's name is `""` and its
/// protocol TCP unless given.
pub(super) fn endpoint_slice_defaults(obj: &mut Value) {
    if let Some(Value::Array(ports)) = ensure_object(obj).get_mut("ports") {
        for p in ports {
            let p = ensure_object(p);
            set_default(p, "name", json!(""));
            set_default(p, "protocol", json!("TCP"));
        }
    }
}

/// `SetDefaults_Service`.
pub(super) fn service_defaults(obj: &mut Value) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    let is_external_name = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for p in ports {
            let p = ensure_object(p);
            set_default(p, "protocol", json!("TCP"));
            // `SetDefaults_Service`: a target port of 0 or "" is no target port.
            if matches!(p.get("targetPort"), Some(t) if *t == json!(0) || *t == json!("")) {
                p.remove("targetPort");
            }
            if let Some(port) = p.get("port").cloned() {
                set_default(p, "targetPort", port);
            }
        }
    }
    if !is_external_name {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
}

/// What kube-apiserver's Service storage allocates when it stores a Service, after the field
/// manager ran (so the writer does not own them unless it set them): a cluster IP (kept from
/// `old` on an update), `clusterIPs`, the IP families and their policy.
pub(super) fn allocate_cluster_ips(st: &mut State, obj: &mut Value, old: Option<&Value>) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        return;
    }
    let have_ip = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if !have_ip {
        let previous = old.and_then(|o| o.pointer("/spec/clusterIP")).cloned();
        let ip = match previous {
            Some(ip) => ip,
            None => {
                let n = st.next_cluster_ip;
                st.next_cluster_ip += 1;
                json!(format!("10.0.{}.{}", (n / 254) % 256, n % 254 + 1))
            }
        };
        spec.insert("clusterIP".into(), ip);
    }
    let ip = spec.get("clusterIP").cloned().unwrap_or(json!("None"));
    set_default(spec, "clusterIPs", json!([ip]));
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
}

/// The port rules and `type` of `ValidateService` (kube-apiserver reports ports first).
pub(super) fn service_spec_errors(spec: &Value) -> Vec<FieldError> {
    const RANGE: &str = "must be between 1 and 65535, inclusive";
    let mut errs = Vec::new();
    let in_range = |v: i64| (1..=65535).contains(&v);
    if let Some(ports) = spec.get("ports").and_then(Value::as_array) {
        for (i, p) in ports.iter().enumerate() {
            // A named target port (a string) has no range to check here.
            for field in ["port", "targetPort"] {
                if let Some(n) = p.get(field).and_then(Value::as_i64)
                    && !in_range(n)
                {
                    errs.push(FieldError::invalid(
                        format!("spec.ports[{i}].{field}"),
                        n.to_string(),
                        RANGE,
                    ));
                }
            }
        }
    }
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if let Some(t) = spec.get("type").and_then(Value::as_str)
        && !TYPES.contains(&t)
    {
        errs.push(FieldError::not_supported("spec.type", t, TYPES));
    }
    errs
}
