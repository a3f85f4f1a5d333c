//! The `Ready` condition and the status the controller writes, as a typed apply configuration.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube_codegen_runtime::apply::meta::ConditionApplyConfiguration;

use crate::pkg::apis::crddemo::v1::{Mydemo, MydemoStatus};
use crate::pkg::client::applyconfiguration::crddemo::v1::{
    MydemoApplyConfiguration, MydemoStatusApplyConfiguration,
};

/// The condition type the controller maintains.
pub const READY: &str = "Ready";
/// Reason when the Service and EndpointSlice expose the address.
pub const REASON_SYNCED: &str = "Synced";
/// Reason when the spec cannot be exposed.
pub const REASON_INVALID: &str = "InvalidSpec";
/// Reason when a Service or EndpointSlice of the same name exists and is not ours.
pub const REASON_RESOURCE_EXISTS: &str = "ErrResourceExists";

/// What the status should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    /// Whether the Mydemo is exposed.
    pub ready: bool,
    /// The condition's reason.
    pub reason: &'static str,
    /// The condition's message.
    pub message: String,
    /// The Service exposing it, when ready.
    pub service_name: Option<String>,
}

/// The status `mydemo` should have: `desired` for its current generation, keeping the
/// condition's `lastTransitionTime` when its status does not change.
pub fn next_status(mydemo: &Mydemo, desired: &Desired) -> MydemoStatus {
    let generation = mydemo.metadata.generation;
    let current = mydemo.status.clone().unwrap_or_default();
    let status = if desired.ready { "True" } else { "False" };
    let previous = current.conditions.iter().find(|c| c.type_ == READY);
    let last_transition_time = match previous {
        Some(p) if p.status == status => p.last_transition_time.clone(),
        _ => Time(Timestamp::now()),
    };
    let mut conditions: Vec<Condition> = current
        .conditions
        .iter()
        .filter(|c| c.type_ != READY)
        .cloned()
        .collect();
    conditions.push(Condition {
        type_: READY.into(),
        status: status.into(),
        reason: desired.reason.into(),
        message: desired.message.clone(),
        observed_generation: generation,
        last_transition_time,
    });
    MydemoStatus {
        observed_generation: generation,
        conditions,
        service_name: desired.service_name.clone(),
    }
}

/// Whether writing `next` would change anything (`lastTransitionTime` aside, which `next_status`
/// keeps when nothing else changes).
pub fn differs(mydemo: &Mydemo, next: &MydemoStatus) -> bool {
    mydemo.status.as_ref() != Some(next)
}

/// The part of `next` the controller owns, as the apply configuration it server-side applies to
/// the status subresource: `observedGeneration`, the `Ready` condition and `serviceName` when
/// there is one. Nothing else: conditions of other types stay their managers' (the list is
/// keyed by `type`), and a `serviceName` left out (not ready) is removed by the server, since
/// the controller owned it.
pub fn status_apply_configuration(
    mydemo: &Mydemo,
    next: &MydemoStatus,
) -> MydemoApplyConfiguration {
    let mut status = MydemoStatusApplyConfiguration::default().with_conditions(
        next.conditions
            .iter()
            .filter(|c| c.type_ == READY)
            .map(ConditionApplyConfiguration::from),
    );
    if let Some(g) = next.observed_generation {
        status = status.with_observed_generation(g);
    }
    if let Some(service) = &next.service_name {
        status = status.with_service_name(service.clone());
    }
    MydemoApplyConfiguration::new(
        mydemo.metadata.name.clone().unwrap_or_default(),
        mydemo.metadata.namespace.clone().unwrap_or_default(),
    )
    .with_status(status)
}

/// The Ready condition of `mydemo`, if any.
pub fn ready_condition(mydemo: &Mydemo) -> Option<&Condition> {
    mydemo
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == READY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn unchanged_status_is_not_rewritten_and_keeps_its_transition_time() {
        let mut m = Mydemo {
            metadata: ObjectMeta {
                generation: Some(3),
                ..ObjectMeta::default()
            },
            ..Mydemo::default()
        };
        let want = Desired {
            ready: true,
            reason: REASON_SYNCED,
            message: "ok".into(),
            service_name: Some("s".into()),
        };
        let first = next_status(&m, &want);
        assert!(differs(&m, &first));
        assert_eq!(first.observed_generation, Some(3));
        m.status = Some(first.clone());
        let again = next_status(&m, &want);
        assert_eq!(
            again, first,
            "same desired state, same status (transition time kept)"
        );
        assert!(!differs(&m, &again));
        m.metadata.generation = Some(4);
        assert!(
            differs(&m, &next_status(&m, &want)),
            "a new generation is observed"
        );
        let bad = Desired {
            ready: false,
            reason: REASON_INVALID,
            message: "bad ip".into(),
            service_name: None,
        };
        let s = next_status(&m, &bad);
        assert_eq!(s.conditions[0].status, "False");
        assert_eq!(s.conditions[0].reason, "InvalidSpec");
    }

    #[test]
    fn the_apply_configuration_holds_only_the_controllers_fields() {
        let mut m = Mydemo {
            metadata: ObjectMeta {
                name: Some("demo".into()),
                namespace: Some("ns".into()),
                generation: Some(2),
                ..ObjectMeta::default()
            },
            ..Mydemo::default()
        };
        m.status = Some(MydemoStatus {
            observed_generation: Some(1),
            conditions: vec![Condition {
                type_: "Audited".into(),
                status: "True".into(),
                reason: "Checked".into(),
                message: "by the auditor".into(),
                observed_generation: None,
                last_transition_time: Time(Timestamp::UNIX_EPOCH),
            }],
            service_name: Some("demo".into()),
        });
        let bad = Desired {
            ready: false,
            reason: REASON_INVALID,
            message: "bad ip".into(),
            service_name: None,
        };
        let next = next_status(&m, &bad);
        let time = next.conditions[1].last_transition_time.clone();
        let ac = status_apply_configuration(&m, &next);
        assert_eq!(
            serde_json::to_value(&ac).unwrap_or_else(|e| panic!("{e}")),
            serde_json::json!({
                "apiVersion": "crddemo.k8s.io/v1",
                "kind": "Mydemo",
                "metadata": {"name": "demo", "namespace": "ns"},
                "status": {
                    "observedGeneration": 2,
                    "conditions": [{
                        "type": "Ready",
                        "status": "False",
                        "reason": "InvalidSpec",
                        "message": "bad ip",
                        "observedGeneration": 2,
                        "lastTransitionTime": serde_json::to_value(&time).unwrap_or_else(|e| panic!("{e}")),
                    }],
                }
            }),
            "the auditor's condition and the old serviceName are not claimed"
        );
    }
}
