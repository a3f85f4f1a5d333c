//! crddemo's webhooks, served by the manager's webhook server:
//!
//! * a **validating** webhook ([`UniqueAddress`]) refusing a Mydemo whose `ip`:`port` another
//!   Mydemo of its namespace already asks for — a rule over several objects, which no schema
//!   or CEL rule can express;
//! * the **conversion** webhook of the two versions: `v1` (the storage version) is the hub and
//!   `v1alpha1`, whose spec is one `address: "<ip>:<port>"`, converts to and from it.
//!
//! What kube-apiserver needs to call them is in `deploy/webhook.yaml` (the configuration, from
//! the marker on [`register`]) and in the CRD (`spec.conversion`).

use std::net::IpAddr;

use kube::Api;
use kube::api::ListParams;
use kube_controller_runtime::Manager;
use kube_controller_runtime::webhook::admission::{Denial, Request, ValidationResult, Validator};
use kube_controller_runtime::webhook::conversion::{ConversionError, Convertible, Hub};
use kube_controller_runtime::webhook::{Webhook, WebhookError};

use crate::pkg::apis::crddemo::{v1, v1alpha1};

// +kubebuilder:webhook:path=/validate-crddemo-k8s-io-v1-mydemo,mutating=false,failurePolicy=fail,sideEffects=None,groups=crddemo.k8s.io,resources=mydemos,verbs=create;update,versions=v1,name=vmydemo.crddemo.k8s.io,admissionReviewVersions=v1

/// Registers crddemo's webhooks on `mgr`'s webhook server: the validator at
/// `/validate-crddemo-k8s-io-v1-mydemo` and the conversion of `v1alpha1` at `/convert`.
pub fn register(mgr: &Manager) -> Result<(), WebhookError> {
    Webhook::builder(mgr)
        .for_::<v1::Mydemo>()
        .with_validator(UniqueAddress::new(mgr.client()))
        .with_spoke::<v1alpha1::Mydemo>()
        .complete()
}

/// Refuses a Mydemo whose address (`spec.ip`, `spec.port`) another Mydemo in its namespace has.
///
/// The other Mydemos are listed from the API server at each request, not from a cache, so two
/// creates in quick succession see each other. Addresses are compared as addresses: `::1` and
/// `0:0::1` are the same. A Mydemo being deleted no longer holds its address.
pub struct UniqueAddress {
    client: kube::Client,
}

impl UniqueAddress {
    /// A validator listing Mydemos through `client`.
    pub fn new(client: kube::Client) -> Self {
        UniqueAddress { client }
    }

    async fn check(&self, obj: &v1::Mydemo) -> ValidationResult {
        let namespace = obj.metadata.namespace.as_deref().unwrap_or("default");
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        let api: Api<v1::Mydemo> = Api::namespaced(self.client.clone(), namespace);
        let others = api.list(&ListParams::default()).await.map_err(|e| {
            Denial::forbidden(format!("cannot list the Mydemos of {namespace}: {e}")).with_code(500)
        })?;
        let clash = others.items.iter().find(|other| {
            other.metadata.name.as_deref() != Some(name)
                && other.metadata.deletion_timestamp.is_none()
                && same_address(&other.spec, &obj.spec)
        });
        let Some(other) = clash else {
            return Ok(Vec::new());
        };
        let address = display_address(&obj.spec.ip, obj.spec.port);
        let owner = format!(
            "Mydemo {namespace}/{}",
            other.metadata.name.as_deref().unwrap_or_default()
        );
        // As a field.Duplicate error reads: kubectl prints the causes of an Invalid answer.
        Err(
            Denial::invalid(format!("address {address} is already used by {owner}"))
                .with_cause_reason(
                    "FieldValueDuplicate",
                    "spec.port",
                    format!("Duplicate value: {address:?}: already used by {owner}"),
                ),
        )
    }
}

impl Validator<v1::Mydemo> for UniqueAddress {
    async fn validate_create(&self, _req: &Request, obj: &v1::Mydemo) -> ValidationResult {
        self.check(obj).await
    }

    async fn validate_update(
        &self,
        _req: &Request,
        old: &v1::Mydemo,
        new: &v1::Mydemo,
    ) -> ValidationResult {
        // A status update, or one of labels, does not move the address: nothing to check, and
        // an address shared before this webhook existed does not block the controller.
        if old.spec == new.spec {
            return Ok(Vec::new());
        }
        self.check(new).await
    }
}

/// Whether two specs ask for one address.
fn same_address(a: &v1::MydemoSpec, b: &v1::MydemoSpec) -> bool {
    if a.port != b.port {
        return false;
    }
    match (a.ip.parse::<IpAddr>(), b.ip.parse::<IpAddr>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.ip == b.ip,
    }
}

/// `ip:port`, an IPv6 address in brackets.
fn display_address(ip: &str, port: i32) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

impl Hub for v1::Mydemo {}

impl Convertible<v1::Mydemo> for v1alpha1::Mydemo {
    fn convert_to(&self) -> Result<v1::Mydemo, ConversionError> {
        let (ip, port) = parse_address(&self.spec.address)?;
        Ok(v1::Mydemo {
            metadata: self.metadata.clone(),
            spec: v1::MydemoSpec { ip, port },
            status: self.status.as_ref().map(|s| v1::MydemoStatus {
                observed_generation: s.observed_generation,
                conditions: s.conditions.clone(),
                service_name: s.service_name.clone(),
            }),
        })
    }

    fn convert_from(hub: &v1::Mydemo) -> Result<Self, ConversionError> {
        Ok(v1alpha1::Mydemo {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::MydemoSpec {
                address: display_address(&hub.spec.ip, hub.spec.port),
            },
            status: hub.status.as_ref().map(|s| v1alpha1::MydemoStatus {
                observed_generation: s.observed_generation,
                conditions: s.conditions.clone(),
                service_name: s.service_name.clone(),
            }),
        })
    }
}

/// `<ip>:<port>` or `[<ipv6>]:<port>` into the `v1` fields; the IP is kept as written (the
/// schema of `v1` and the controller check it), so a conversion round-trips exactly.
fn parse_address(address: &str) -> Result<(String, i32), ConversionError> {
    let bad = |why: &str| {
        ConversionError::new(format!(
            "spec.address {address:?} is no <ip>:<port> ({why})"
        ))
    };
    let (ip, port) = address.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let ip = match ip.strip_prefix('[') {
        Some(rest) => rest
            .strip_suffix(']')
            .ok_or_else(|| bad("an unclosed '['"))?,
        None if ip.contains(':') => return Err(bad("an IPv6 address needs brackets")),
        None => ip,
    };
    if ip.is_empty() {
        return Err(bad("no IP"));
    }
    let port = port
        .parse::<i32>()
        .map_err(|e| bad(&format!("port: {e}")))?;
    Ok((ip.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn spoke(address: &str) -> v1alpha1::Mydemo {
        v1alpha1::Mydemo {
            metadata: ObjectMeta {
                name: Some("a".into()),
                ..ObjectMeta::default()
            },
            spec: v1alpha1::MydemoSpec {
                address: address.into(),
            },
            status: None,
        }
    }

    #[test]
    fn addresses_round_trip_through_the_hub() {
        for address in ["127.0.0.1:8080", "[::1]:9090", "[::ffff:192.0.2.1]:1"] {
            let hub = spoke(address)
                .convert_to()
                .unwrap_or_else(|e| panic!("{e}"));
            let back = v1alpha1::Mydemo::convert_from(&hub).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back.spec.address, address);
        }
        let hub = spoke("[::1]:9090")
            .convert_to()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((hub.spec.ip.as_str(), hub.spec.port), ("::1", 9090));
    }

    #[test]
    fn bad_addresses_are_refused_with_the_reason() {
        for (address, why) in [
            ("127.0.0.1", "no port"),
            ("::1:80", "an IPv6 address needs brackets"),
            ("[::1:80", "an unclosed '['"),
            (":80", "no IP"),
            ("1.2.3.4:http", "port: invalid digit"),
        ] {
            let err = spoke(address).convert_to().err().map(|e| e.to_string());
            let err = err.unwrap_or_else(|| panic!("{address} converted"));
            assert!(err.contains(why), "{address}: {err}");
        }
    }

    #[test]
    fn addresses_compare_as_addresses() {
        let spec = |ip: &str, port| v1::MydemoSpec {
            ip: ip.into(),
            port,
        };
        assert!(same_address(&spec("::1", 80), &spec("0:0::1", 80)));
        assert!(!same_address(&spec("::1", 80), &spec("::1", 81)));
        assert!(!same_address(&spec("10.0.0.1", 80), &spec("10.0.0.2", 80)));
    }
}
