//! The `Ready` condition and the status the operator writes.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::pkg::apis::mtsre::v1::{Eru, EruStatus};

/// The condition type the operator maintains.
pub const READY: &str = "Ready";
/// `Ready=True`: the schedule is valid, the Deployment exists and slots are rolled out.
pub const REASON_SCHEDULED: &str = "Scheduled";
/// `Ready=False`: `spec.suspend` is set.
pub const REASON_SUSPENDED: &str = "Suspended";
/// `Ready=False`: `spec.schedule` is not a usable cron expression.
pub const REASON_INVALID_SCHEDULE: &str = "InvalidSchedule";
/// `Ready=False`: `spec.timeZone` is not an IANA time zone.
pub const REASON_UNKNOWN_TIME_ZONE: &str = "UnknownTimeZone";
/// `Ready=False`: `spec.deployment` is not the name of a Deployment of the Eru's namespace.
pub const REASON_INVALID_DEPLOYMENT: &str = "InvalidDeployment";
/// `Ready=False`: the Deployment does not exist (yet); slots that pass meanwhile are missed.
pub const REASON_DEPLOYMENT_NOT_FOUND: &str = "DeploymentNotFound";

/// What the `Ready` condition should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// `True` or `False`.
    pub ready: bool,
    /// The condition's reason (one of the `REASON_*` constants).
    pub reason: &'static str,
    /// The condition's message.
    pub message: String,
}

impl Readiness {
    /// `Ready=True` with `reason` and `message`.
    pub fn ready(reason: &'static str, message: impl Into<String>) -> Self {
        Readiness {
            ready: true,
            reason,
            message: message.into(),
        }
    }

    /// `Ready=False` with `reason` and `message`.
    pub fn not_ready(reason: &'static str, message: impl Into<String>) -> Self {
        Readiness {
            ready: false,
            reason,
            message: message.into(),
        }
    }
}

/// `status` with the `Ready` condition set to `readiness` for `eru`'s current generation (as
/// `meta.SetStatusCondition` does: `lastTransitionTime` moves only when the status flips) and
/// `observedGeneration` updated.
pub fn with_readiness(
    eru: &Eru,
    mut status: EruStatus,
    readiness: &Readiness,
    now: Timestamp,
) -> EruStatus {
    let generation = eru.metadata.generation;
    let value = if readiness.ready { "True" } else { "False" };
    let last_transition_time = match status.conditions.iter().find(|c| c.type_ == READY) {
        Some(previous) if previous.status == value => previous.last_transition_time.clone(),
        _ => Time(now),
    };
    status.conditions.retain(|c| c.type_ != READY);
    status.conditions.push(Condition {
        type_: READY.into(),
        status: value.into(),
        reason: readiness.reason.into(),
        message: readiness.message.clone(),
        observed_generation: generation,
        last_transition_time,
    });
    status.observed_generation = generation;
    status
}

/// The `Ready` condition of `eru`, if any.
pub fn ready_condition(eru: &Eru) -> Option<&Condition> {
    eru.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == READY)
}

/// Whether `eru` already carries `readiness` for its current generation: then neither the
/// status nor an Event needs writing again.
pub fn already_reported(eru: &Eru, readiness: &Readiness) -> bool {
    ready_condition(eru).is_some_and(|c| {
        c.status == if readiness.ready { "True" } else { "False" }
            && c.reason == readiness.reason
            && c.message == readiness.message
            && c.observed_generation == eru.metadata.generation
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn transition_time_moves_only_when_the_status_flips() {
        let mut eru = Eru {
            metadata: ObjectMeta {
                generation: Some(2),
                ..ObjectMeta::default()
            },
            ..Eru::default()
        };
        let ok = Readiness::ready(REASON_SCHEDULED, "next at a");
        let s1 = with_readiness(&eru, EruStatus::default(), &ok, t("2026-01-01T00:00:00Z"));
        assert_eq!(s1.observed_generation, Some(2));
        assert_eq!(s1.conditions.len(), 1);
        eru.status = Some(s1.clone());
        assert!(already_reported(&eru, &ok));

        let ok2 = Readiness::ready(REASON_SCHEDULED, "next at b");
        assert!(!already_reported(&eru, &ok2), "a new message is news");
        let s2 = with_readiness(&eru, s1.clone(), &ok2, t("2026-01-01T00:01:00Z"));
        assert_eq!(
            s2.conditions[0].last_transition_time,
            Time(t("2026-01-01T00:00:00Z")),
            "still True: the transition time stays"
        );
        let bad = Readiness::not_ready(REASON_INVALID_SCHEDULE, "no");
        let s3 = with_readiness(&eru, s2, &bad, t("2026-01-01T00:02:00Z"));
        assert_eq!(s3.conditions.len(), 1);
        assert_eq!(s3.conditions[0].status, "False");
        assert_eq!(
            s3.conditions[0].last_transition_time,
            Time(t("2026-01-01T00:02:00Z"))
        );

        eru.metadata.generation = Some(3);
        assert!(
            !already_reported(&eru, &ok),
            "a new generation is observed again"
        );
    }
}
