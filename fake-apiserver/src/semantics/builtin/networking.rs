//! Ingresses and NetworkPolicies (`networking.k8s.io/v1`): `SetDefaults_NetworkPolicy`, an
//! Ingress's initial status, and `ValidateIngressSpec` and `ValidateNetworkPolicySpec`.

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use crate::error::{FieldError, go_quote};
use crate::semantics::validation::label_selector_errors;
use crate::storage::object::ensure_object;
use kube_codegen_apimachinery::validation;

use super::set_default;

/// A NetworkPolicy's defaults: `policyTypes` (`Ingress`, and `Egress` with egress rules) and
/// each port's `protocol` (TCP).
pub(super) fn network_policy_defaults(obj: &mut Value) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let has_egress = spec
        .get("egress")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    if spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        let mut types = vec![json!("Ingress")];
        if has_egress {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
    for rules in ["ingress", "egress"] {
        let rules = spec.get_mut(rules).and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten() {
            let ports = rule.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
                set_default(port, "protocol", json!("TCP"));
            }
        }
    }
}

/// `ValidateNetworkPolicySpec`, in its order.
pub(super) fn network_policy_errors(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut errs = label_selector_errors(spec.get("podSelector"), "spec.podSelector");
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        let list = spec.get(rules).and_then(Value::as_array);
        for (i, rule) in list.into_iter().flatten().enumerate() {
            let at = format!("spec.{rules}[{i}]");
            let ports = rule.get("ports").and_then(Value::as_array);
            for (j, port) in ports.into_iter().flatten().enumerate() {
                errs.extend(port_errors(port, &format!("{at}.ports[{j}]")));
            }
            let list = rule.get(peers).and_then(Value::as_array);
            for (j, peer) in list.into_iter().flatten().enumerate() {
                errs.extend(peer_errors(peer, &format!("{at}.{peers}[{j}]")));
            }
        }
    }
    const TYPES: &[&str] = &["Ingress", "Egress"];
    let types = spec.get("policyTypes").and_then(Value::as_array);
    if types.is_some_and(|t| t.len() > TYPES.len()) {
        let shown = types
            .map(|t| Value::Array(t.clone()).to_string())
            .unwrap_or_default();
        errs.push(FieldError::invalid(
            "spec.policyTypes",
            shown,
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.into_iter().flatten().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if !TYPES.contains(&t) {
            errs.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                t,
                TYPES,
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPort`.
fn port_errors(port: &Value, at: &str) -> Vec<FieldError> {
    const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
    let mut errs = Vec::new();
    if let Some(p) = port.get("protocol").and_then(Value::as_str)
        && !PROTOCOLS.contains(&p)
    {
        errs.push(FieldError::not_supported(
            format!("{at}.protocol"),
            p,
            PROTOCOLS,
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    format!("{at}.endPort"),
                    end.to_string(),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in validation::is_valid_port_name(name) {
                errs.push(FieldError::invalid_str(format!("{at}.port"), name, msg));
            }
        }
        Some(n) => {
            let n = n.as_i64().unwrap_or_default();
            for msg in validation::is_valid_port_num(n) {
                errs.push(FieldError::invalid(
                    format!("{at}.port"),
                    n.to_string(),
                    msg,
                ));
            }
            if let Some(end) = end {
                if end < n {
                    errs.push(FieldError::invalid(
                        format!("{at}.endPort"),
                        end.to_string(),
                        "must be greater than or equal to `port`",
                    ));
                }
                for msg in validation::is_valid_port_num(end) {
                    errs.push(FieldError::invalid(
                        format!("{at}.endPort"),
                        end.to_string(),
                        msg,
                    ));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    format!("{at}.endPort"),
                    end.to_string(),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`.
fn peer_errors(peer: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|s| !s.is_null()) {
            peers += 1;
            errs.extend(label_selector_errors(Some(sel), &format!("{at}.{key}")));
        }
    }
    let ip_block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = ip_block {
        peers += 1;
        errs.extend(ip_block_errors(block, &format!("{at}.ipBlock")));
    }
    if peers == 0 {
        errs.push(FieldError::required(at, "must specify a peer"));
    } else if peers > 1 && ip_block.is_some() {
        errs.push(FieldError::forbidden(
            at,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

const CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// An address and prefix length, as `ParseCIDRSloppy` reads them.
fn parse_cidr(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, len) = s.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    let len: u8 = len.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((ip, len))
}

/// Whether `inner` lies within `outer` with a longer prefix.
fn strict_subset(outer: (IpAddr, u8), inner: (IpAddr, u8)) -> bool {
    let bits = |ip: IpAddr| -> (u128, u8) {
        match ip {
            IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
            IpAddr::V6(a) => (u128::from(a), 128),
        }
    };
    let ((o, width), (i, iwidth)) = (bits(outer.0), bits(inner.0));
    if width != iwidth || inner.1 <= outer.1 {
        return false;
    }
    let shift = u32::from(width - outer.1);
    shift >= 128 || (o >> shift) == (i >> shift)
}

/// `ValidateIPBlock`.
fn ip_block_errors(block: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cidr = block
        .get("cidr")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if cidr.is_empty() {
        errs.push(FieldError::required(format!("{at}.cidr"), ""));
        return errs;
    }
    let Some(outer) = parse_cidr(cidr) else {
        errs.push(FieldError::invalid_str(format!("{at}.cidr"), cidr, CIDR));
        return errs;
    };
    let except = block.get("except").and_then(Value::as_array);
    for (i, e) in except.into_iter().flatten().enumerate() {
        let e = e.as_str().unwrap_or_default();
        let field = format!("{at}.except[{i}]");
        match parse_cidr(e) {
            None => errs.push(FieldError::invalid_str(field, e, CIDR)),
            Some(inner) if !strict_subset(outer, inner) => errs.push(FieldError::invalid_str(
                field,
                e,
                "must be a strict subset of `cidr`",
            )),
            Some(_) => {}
        }
    }
    errs
}

/// The status a new Ingress gets.
pub(super) fn ingress_initial_status() -> Value {
    json!({"loadBalancer": {}})
}

/// `ValidateIngressSpec`, in its order.
pub(super) fn ingress_errors(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut errs = Vec::new();
    let rules = spec
        .get("rules")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty());
    let default_backend = spec.get("defaultBackend").filter(|b| !b.is_null());
    if rules.is_none() && default_backend.is_none() {
        errs.push(FieldError::invalid(
            "spec",
            "null",
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = default_backend {
        errs.extend(backend_errors(b, "spec.defaultBackend"));
    }
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = rule.get("host").and_then(Value::as_str).unwrap_or_default();
        if !host.is_empty() {
            if host.parse::<IpAddr>().is_ok() {
                errs.push(FieldError::invalid_str(
                    format!("{at}.host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            errs.extend(host_errors(host, &format!("{at}.host")));
        }
        if let Some(http) = rule.get("http").filter(|h| !h.is_null()) {
            let paths = http.get("paths").and_then(Value::as_array);
            if paths.is_none_or(Vec::is_empty) {
                errs.push(FieldError::required(format!("{at}.http.paths"), ""));
            }
            for (j, p) in paths.into_iter().flatten().enumerate() {
                errs.extend(path_errors(p, &format!("{at}.http.paths[{j}]")));
            }
        }
    }
    let tls = spec.get("tls").and_then(Value::as_array);
    for (i, t) in tls.into_iter().flatten().enumerate() {
        let hosts = t.get("hosts").and_then(Value::as_array);
        for (j, h) in hosts.into_iter().flatten().enumerate() {
            let h = h.as_str().unwrap_or_default();
            errs.extend(host_errors(h, &format!("spec.tls[{i}].hosts[{j}]")));
        }
        let secret = t
            .get("secretName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !secret.is_empty() {
            for msg in validation::is_dns1123_subdomain(secret) {
                errs.push(FieldError::invalid_str(
                    format!("spec.tls[{i}].secretName"),
                    secret,
                    msg,
                ));
            }
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for msg in validation::is_dns1123_subdomain(class) {
            errs.push(FieldError::invalid_str("spec.ingressClassName", class, msg));
        }
    }
    errs
}

/// A host: a wildcard subdomain if it has a `*`, else a subdomain.
fn host_errors(host: &str, field: &str) -> Vec<FieldError> {
    let msgs = if host.contains('*') {
        validation::is_wildcard_dns1123_subdomain(host)
    } else {
        validation::is_dns1123_subdomain(host)
    };
    msgs.into_iter()
        .map(|msg| FieldError::invalid_str(field, host, msg))
        .collect()
}

/// `validateHTTPIngressPath`.
fn path_errors(p: &Value, at: &str) -> Vec<FieldError> {
    const TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
    let mut errs = Vec::new();
    let Some(kind) = p.get("pathType").and_then(Value::as_str) else {
        errs.push(FieldError::required(
            format!("{at}.pathType"),
            "pathType must be specified",
        ));
        return errs;
    };
    let path = p.get("path").and_then(Value::as_str).unwrap_or_default();
    let field = format!("{at}.path");
    match kind {
        "Exact" | "Prefix" => {
            if !path.starts_with('/') {
                errs.push(FieldError::invalid_str(
                    &field,
                    path,
                    "must be an absolute path",
                ));
            }
            for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                if path.contains(seq) {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        format!("must not contain '{seq}'"),
                    ));
                }
            }
            for suffix in ["/..", "/."] {
                if path.ends_with(suffix) {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        format!("cannot end with '{suffix}'"),
                    ));
                }
            }
        }
        "ImplementationSpecific" => {
            if !path.is_empty() && !path.starts_with('/') {
                errs.push(FieldError::invalid_str(
                    &field,
                    path,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{at}.pathType"),
            other,
            TYPES,
        )),
    }
    errs.extend(backend_errors(
        p.get("backend").unwrap_or(&Value::Null),
        &format!("{at}.backend"),
    ));
    errs
}

/// `validateIngressBackend`.
fn backend_errors(b: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let service = b.get("service").filter(|s| !s.is_null());
    let resource = b.get("resource").filter(|r| !r.is_null());
    match (service, resource) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            at,
            go_quote(""),
            "cannot set both resource and service backends",
        )),
        (None, Some(r)) => {
            let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            if kind.is_empty() {
                errs.push(FieldError::required(format!("{at}.resource.kind"), ""));
            }
            if name.is_empty() {
                errs.push(FieldError::required(format!("{at}.resource.name"), ""));
            }
        }
        (Some(s), None) => {
            let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty() {
                errs.push(FieldError::required(format!("{at}.service.name"), ""));
            } else {
                // kube-apiserver 1.37 relaxes Service names to RFC 1123 labels here.
                for msg in validation::is_dns1123_label(name) {
                    errs.push(FieldError::invalid_str(
                        format!("{at}.service.name"),
                        name,
                        msg,
                    ));
                }
            }
            let empty = Map::new();
            let port = s.get("port").and_then(Value::as_object).unwrap_or(&empty);
            let port_name = port.get("name").and_then(Value::as_str).unwrap_or_default();
            let number = port
                .get("number")
                .and_then(Value::as_i64)
                .unwrap_or_default();
            match (port_name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    at,
                    go_quote(""),
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for msg in validation::is_valid_port_name(port_name) {
                        errs.push(FieldError::invalid_str(
                            format!("{at}.service.port.name"),
                            port_name,
                            msg,
                        ));
                    }
                }
                (true, false) => {
                    for msg in validation::is_valid_port_num(number) {
                        errs.push(FieldError::invalid(
                            format!("{at}.service.port.number"),
                            number.to_string(),
                            msg,
                        ));
                    }
                }
                (true, true) => {
                    errs.push(FieldError::required(at, "port name or number is required"))
                }
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            at,
            go_quote(""),
            "resource or service backend is required",
        )),
    }
    errs
}
