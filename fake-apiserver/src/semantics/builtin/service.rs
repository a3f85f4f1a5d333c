//! Services: defaults (target ports, type), the cluster IPs the REST storage allocates, and
//! the port rules.

use serde_json::{Value, json};

use crate::error::{FieldError, go_quote};
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

/// A node port a NodePort or LoadBalancer Service asks for twice: kube-apiserver's REST
/// storage allocates node ports before it validates, and its allocator refuses the second
/// (the only error of the answer). (Ports of other Services are not checked: the in-memory
/// server allocates no node ports.)
fn node_port_taken_twice(spec: &Value, ports: &[Value]) -> Option<FieldError> {
    let kind = spec.get("type").and_then(Value::as_str);
    if !matches!(kind, Some("NodePort" | "LoadBalancer")) {
        return None;
    }
    let mut taken = std::collections::HashSet::new();
    ports.iter().enumerate().find_map(|(i, p)| {
        let n = p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        (n != 0 && !taken.insert(n)).then(|| {
            FieldError::invalid(
                format!("spec.ports[{i}].nodePort"),
                n.to_string(),
                "provided port is already allocated",
            )
        })
    })
}

/// The port rules and `type` of `ValidateService`, in its order: each port
/// (`validateServicePort`: a name when there are several, unique and a DNS-1123 label; the
/// port; the protocol; the target port, a number or a port name; `appProtocol`), the type,
/// node ports a ClusterIP Service may not have, and ports given twice.
pub(super) fn service_spec_errors(spec: &Value) -> Vec<FieldError> {
    use kube_codegen_apimachinery::validation::{
        is_dns1123_label, is_qualified_name, is_valid_port_name, is_valid_port_num,
    };
    const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
    let mut errs = Vec::new();
    let ports: &[Value] = spec
        .get("ports")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if let Some(e) = node_port_taken_twice(spec, ports) {
        return vec![e];
    }
    let mut names = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() {
            if ports.len() > 1 {
                errs.push(FieldError::required(format!("{at}.name"), ""));
            }
        } else {
            for msg in is_dns1123_label(name) {
                errs.push(FieldError::invalid_str(format!("{at}.name"), name, msg));
            }
            if !names.insert(name) {
                errs.push(FieldError::duplicate(format!("{at}.name"), go_quote(name)));
            }
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        for msg in is_valid_port_num(port) {
            errs.push(FieldError::invalid(
                format!("{at}.port"),
                port.to_string(),
                msg,
            ));
        }
        match p
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "" => errs.push(FieldError::required(format!("{at}.protocol"), "")),
            proto if !PROTOCOLS.contains(&proto) => {
                errs.push(FieldError::not_supported(
                    format!("{at}.protocol"),
                    proto,
                    PROTOCOLS,
                ));
            }
            _ => {}
        }
        match p.get("targetPort") {
            Some(Value::String(target)) => {
                for msg in is_valid_port_name(target) {
                    errs.push(FieldError::invalid_str(
                        format!("{at}.targetPort"),
                        target,
                        msg,
                    ));
                }
            }
            Some(target) => {
                let n = target.as_i64().unwrap_or(0);
                for msg in is_valid_port_num(n) {
                    errs.push(FieldError::invalid(
                        format!("{at}.targetPort"),
                        n.to_string(),
                        msg,
                    ));
                }
            }
            None => {}
        }
        if let Some(app) = p.get("appProtocol").and_then(Value::as_str) {
            for msg in is_qualified_name(app) {
                errs.push(FieldError::invalid_str(
                    format!("{at}.appProtocol"),
                    app,
                    msg,
                ));
            }
        }
    }
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    let kind = spec.get("type").and_then(Value::as_str);
    if let Some(t) = kind
        && !TYPES.contains(&t)
    {
        errs.push(FieldError::not_supported("spec.type", t, TYPES));
    }
    let node_port = |p: &Value| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
    if kind == Some("ClusterIP") {
        for (i, p) in ports.iter().enumerate() {
            if node_port(p) != 0 {
                errs.push(FieldError::forbidden(
                    format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let protocol = |p: &Value| {
        p.get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut node_ports = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let n = node_port(p);
        if n != 0 && !node_ports.insert((protocol(p), n)) {
            errs.push(FieldError::duplicate(
                format!("spec.ports[{i}].nodePort"),
                n.to_string(),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let (proto, port) = (
            protocol(p),
            p.get("port").and_then(Value::as_i64).unwrap_or(0),
        );
        if !seen.insert((proto.clone(), port)) {
            // The key, a ServicePort with only these two fields, as field errors print a struct.
            errs.push(FieldError::duplicate(
                format!("spec.ports[{i}]"),
                format!(
                    r#"{{"Name":"","Protocol":{},"AppProtocol":null,"Port":{port},"TargetPort":0,"NodePort":0}}"#,
                    serde_json::Value::from(proto)
                ),
            ));
        }
    }
    errs
}
