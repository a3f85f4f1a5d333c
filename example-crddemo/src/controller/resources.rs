//! The objects a `Mydemo` owns: a selector-less Service and the EndpointSlice that gives it
//! the Mydemo's address. Both carry a controller owner reference to the Mydemo, so the garbage
//! collector removes them with it.

use std::collections::BTreeMap;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::discovery::v1::{
    Endpoint as SliceEndpoint, EndpointConditions, EndpointPort, EndpointSlice,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;

use super::validate::Endpoint;
use crate::pkg::apis::crddemo::v1::Mydemo;

/// The `app.kubernetes.io/managed-by` value on owned objects.
pub const MANAGED_BY: &str = "crddemo";
/// The EndpointSlice controller name, so kube-controller-manager leaves our slices alone.
pub const SLICE_MANAGED_BY: &str = "crddemo.k8s.io";
/// The name of the Service and EndpointSlice port.
pub const PORT_NAME: &str = "demo";

/// The controller owner reference that ties an object to `mydemo`.
pub fn owner_reference(mydemo: &Mydemo) -> Option<OwnerReference> {
    let mut r = mydemo.controller_owner_ref(&())?;
    r.block_owner_deletion = Some(true);
    Some(r)
}

/// Whether `meta` names `mydemo` (by UID) as its controller.
pub fn is_owned_by(meta: &ObjectMeta, mydemo: &Mydemo) -> bool {
    let uid = mydemo.metadata.uid.as_deref();
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && Some(r.uid.as_str()) == uid)
}

/// The Mydemo that controls an owned object: its name, if the controller owner reference is a
/// `crddemo.k8s.io` `Mydemo`.
pub fn controlling_mydemo(meta: &ObjectMeta) -> Option<&str> {
    meta.owner_references.iter().flatten().find_map(|r| {
        let ours = r.controller == Some(true)
            && r.kind == Mydemo::kind(&())
            && r.api_version == Mydemo::api_version(&());
        ours.then_some(r.name.as_str())
    })
}

fn labels(mydemo_name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_string(),
            MANAGED_BY.to_string(),
        ),
        (
            "app.kubernetes.io/instance".to_string(),
            mydemo_name.to_string(),
        ),
    ])
}

fn owned_meta(mydemo: &Mydemo, name: String, extra_labels: &[(&str, &str)]) -> ObjectMeta {
    let mydemo_name = mydemo.metadata.name.clone().unwrap_or_default();
    let mut labels = labels(&mydemo_name);
    for (k, v) in extra_labels {
        labels.insert((*k).to_string(), (*v).to_string());
    }
    ObjectMeta {
        name: Some(name),
        namespace: mydemo.metadata.namespace.clone(),
        labels: Some(labels),
        owner_references: owner_reference(mydemo).map(|r| vec![r]),
        ..ObjectMeta::default()
    }
}

/// The Service's name: the Mydemo's.
pub fn service_name(mydemo: &Mydemo) -> String {
    mydemo.metadata.name.clone().unwrap_or_default()
}

/// The desired Service: no selector (its endpoints come from our EndpointSlice), one TCP port.
pub fn desired_service(mydemo: &Mydemo, ep: Endpoint) -> Service {
    Service {
        metadata: owned_meta(mydemo, service_name(mydemo), &[]),
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.into()),
                port: i32::from(ep.port),
                target_port: Some(
                    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(i32::from(
                        ep.port,
                    )),
                ),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

/// The desired EndpointSlice: the Mydemo's address and port, linked to the Service by the
/// `kubernetes.io/service-name` label.
pub fn desired_endpoint_slice(mydemo: &Mydemo, ep: Endpoint) -> EndpointSlice {
    let svc = service_name(mydemo);
    let address_type = match ep.ip {
        IpAddr::V4(_) => "IPv4",
        IpAddr::V6(_) => "IPv6",
    };
    EndpointSlice {
        metadata: owned_meta(
            mydemo,
            svc.clone(),
            &[
                ("kubernetes.io/service-name", &svc),
                ("endpointslice.kubernetes.io/managed-by", SLICE_MANAGED_BY),
            ],
        ),
        address_type: address_type.into(),
        endpoints: Some(vec![SliceEndpoint {
            addresses: vec![ep.ip.to_string()],
            conditions: Some(EndpointConditions {
                ready: Some(true),
                serving: Some(true),
                terminating: Some(false),
            }),
            ..SliceEndpoint::default()
        }]),
        ports: Some(vec![EndpointPort {
            name: Some(PORT_NAME.into()),
            port: Some(i32::from(ep.port)),
            protocol: Some("TCP".into()),
            app_protocol: None,
        }]),
    }
}

/// Whether the live Service already has what we want (labels we set, owner, ports); fields the
/// API server defaults (clusterIP, sessionAffinity …) are left alone.
pub fn service_matches(live: &Service, want: &Service) -> bool {
    let ports = |s: &Service| -> Vec<(Option<String>, i32, Option<String>)> {
        s.spec
            .iter()
            .flat_map(|spec| spec.ports.iter().flatten())
            .map(|p| {
                (
                    p.name.clone(),
                    p.port,
                    p.protocol.clone().or(Some("TCP".into())),
                )
            })
            .collect()
    };
    let target =
        |s: &Service| -> Vec<Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>> {
            s.spec
                .iter()
                .flat_map(|spec| spec.ports.iter().flatten())
                .map(|p| p.target_port.clone())
                .collect()
        };
    let no_selector = live
        .spec
        .as_ref()
        .is_none_or(|s| s.selector.as_ref().is_none_or(BTreeMap::is_empty));
    ports(live) == ports(want)
        && target(live) == target(want)
        && no_selector
        && labels_contain(&live.metadata, &want.metadata)
}

/// Whether the live EndpointSlice already has the desired address type, endpoints and ports.
pub fn endpoint_slice_matches(live: &EndpointSlice, want: &EndpointSlice) -> bool {
    let addrs = |s: &EndpointSlice| -> Vec<Vec<String>> {
        s.endpoints
            .iter()
            .flatten()
            .map(|e| e.addresses.clone())
            .collect()
    };
    let ready = |s: &EndpointSlice| -> Vec<Option<bool>> {
        s.endpoints
            .iter()
            .flatten()
            .map(|e| e.conditions.as_ref().and_then(|c| c.ready))
            .collect()
    };
    let ports = |s: &EndpointSlice| -> Vec<(Option<String>, Option<i32>)> {
        s.ports
            .iter()
            .flatten()
            .map(|p| (p.name.clone(), p.port))
            .collect()
    };
    live.address_type == want.address_type
        && addrs(live) == addrs(want)
        && ready(live) == ready(want)
        && ports(live) == ports(want)
        && labels_contain(&live.metadata, &want.metadata)
}

fn labels_contain(live: &ObjectMeta, want: &ObjectMeta) -> bool {
    let live = live.labels.clone().unwrap_or_default();
    want.labels
        .iter()
        .flatten()
        .all(|(k, v)| live.get(k) == Some(v))
}

/// `live` corrected to `want`: our labels and owner reference merged in, the spec replaced,
/// everything else (resourceVersion, clusterIP, other labels) kept.
pub fn corrected_service(live: &Service, want: &Service) -> Service {
    let mut out = live.clone();
    merge_meta(&mut out.metadata, &want.metadata);
    let mut spec = out.spec.take().unwrap_or_default();
    let want_spec = want.spec.clone().unwrap_or_default();
    spec.ports = want_spec.ports;
    spec.selector = None;
    out.spec = Some(spec);
    out
}

/// `live` corrected to `want`, keeping its metadata otherwise.
pub fn corrected_endpoint_slice(live: &EndpointSlice, want: &EndpointSlice) -> EndpointSlice {
    let mut out = want.clone();
    out.metadata = live.metadata.clone();
    merge_meta(&mut out.metadata, &want.metadata);
    out
}

fn merge_meta(live: &mut ObjectMeta, want: &ObjectMeta) {
    let labels = live.labels.get_or_insert_with(BTreeMap::new);
    for (k, v) in want.labels.iter().flatten() {
        labels.insert(k.clone(), v.clone());
    }
    if let Some(want_refs) = &want.owner_references {
        let refs = live.owner_references.get_or_insert_with(Vec::new);
        for r in want_refs {
            if !refs.iter().any(|x| x.uid == r.uid) {
                refs.push(r.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pkg::apis::crddemo::v1::MydemoSpec;

    fn mydemo() -> Mydemo {
        Mydemo {
            metadata: ObjectMeta {
                name: Some("demo".into()),
                namespace: Some("ns".into()),
                uid: Some("u-1".into()),
                ..ObjectMeta::default()
            },
            spec: MydemoSpec {
                ip: "10.1.2.3".into(),
                port: 8080,
            },
            status: None,
        }
    }

    fn ep(ip: &str, port: u16) -> Endpoint {
        Endpoint {
            ip: ip.parse().unwrap(),
            port,
        }
    }

    #[test]
    fn owned_objects_point_back_at_the_mydemo() {
        let m = mydemo();
        let svc = desired_service(&m, ep("10.1.2.3", 8080));
        assert!(is_owned_by(&svc.metadata, &m));
        assert_eq!(controlling_mydemo(&svc.metadata), Some("demo"));
        let r = &svc.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (r.kind.as_str(), r.api_version.as_str()),
            ("Mydemo", "crddemo.k8s.io/v1")
        );
        assert!(
            svc.spec.as_ref().unwrap().selector.is_none(),
            "selector-less"
        );
        let slice = desired_endpoint_slice(&m, ep("fd00::1", 9090));
        assert_eq!(slice.address_type, "IPv6");
        assert_eq!(
            slice.metadata.labels.as_ref().unwrap()["kubernetes.io/service-name"],
            "demo"
        );
        assert_eq!(slice.ports.as_ref().unwrap()[0].port, Some(9090));
    }

    #[test]
    fn edits_are_detected_and_corrected_keeping_server_fields() {
        let m = mydemo();
        let want = desired_service(&m, ep("10.1.2.3", 8080));
        let mut live = want.clone();
        live.metadata.resource_version = Some("5".into());
        live.spec.as_mut().unwrap().cluster_ip = Some("10.0.0.7".into());
        assert!(service_matches(&live, &want));
        live.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].port = 1;
        assert!(!service_matches(&live, &want));
        let fixed = corrected_service(&live, &want);
        assert!(service_matches(&fixed, &want));
        assert_eq!(
            fixed.spec.as_ref().unwrap().cluster_ip.as_deref(),
            Some("10.0.0.7")
        );
        assert_eq!(fixed.metadata.resource_version.as_deref(), Some("5"));

        let want = desired_endpoint_slice(&m, ep("10.1.2.3", 8080));
        let mut live = want.clone();
        live.endpoints.as_mut().unwrap()[0].addresses = vec!["10.9.9.9".into()];
        assert!(!endpoint_slice_matches(&live, &want));
        assert!(endpoint_slice_matches(
            &corrected_endpoint_slice(&live, &want),
            &want
        ));
    }
}
