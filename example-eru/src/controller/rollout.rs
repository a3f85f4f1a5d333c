//! The schedule of one Eru: validate it, decide what the clock says ([`crate::schedule`]),
//! roll the Deployment at a slot, record status and Events, and say when to wake up next.
//!
//! A slot is executed at most once, across restarts and leader failover:
//!
//! 1. the slot's time is what the pod template gets (`mtsre.meitu.com/restartedAt`), read
//!    fresh from the API server first: a Deployment that already carries this slot (or a later
//!    one) is not patched again, so a repeat is a no-op;
//! 2. the annotation is applied (typed server-side apply of the pod template's annotation
//!    alone, as manager `eru`, forced: the operator owns its annotation and nothing else of the
//!    Deployment) with the Deployment's `resourceVersion`, so it applies only to the version that
//!    was read (409 otherwise, and the next attempt reads again);
//! 3. the status is applied (server-side apply) with the Eru's `resourceVersion` as a
//!    precondition, so two writers can never both record a slot or both count a rollout.
//!
//! A rollout that was patched but not recorded (the process died in between) is found on the
//! Deployment by the next attempt and recorded then, counted once.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource as _;
use kube::api::Api;
use kube::runtime::events::EventType;
use kube_codegen_kubernetes::Clientset;
use kube_codegen_kubernetes::applyconfiguration::apps::v1::{
    DeploymentApplyConfiguration, DeploymentSpecApplyConfiguration,
};
use kube_codegen_kubernetes::applyconfiguration::core::v1::PodTemplateSpecApplyConfiguration;
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::api_status::{is_conflict, is_not_found};
use kube_codegen_runtime::apply::meta::ObjectMetaApplyConfiguration;
use kube_codegen_runtime::validation::is_dns1123_subdomain;

use super::status::{
    REASON_DEPLOYMENT_NOT_FOUND, REASON_INVALID_DEPLOYMENT, REASON_SCHEDULED, REASON_SUSPENDED,
    Readiness, already_reported, status_apply_configuration, with_readiness,
};
use super::{CONTROLLER_NAME, EruReconciler, ReconcileError};
use crate::RESTARTED_AT_ANNOTATION;
use crate::pkg::apis::mtsre::v1::{Eru, EruStatus};
use crate::schedule::{Decision, Schedule, SlotState, decide, format_slot, parse_slot, wait_until};

/// Why `spec.deployment` cannot name a Deployment of the Eru's namespace, if it cannot.
pub fn invalid_deployment_name(name: &str, namespace: &str) -> Option<String> {
    if let Some((other, _)) = name.split_once('/') {
        return Some(format!(
            "spec.deployment {name:?} names a Deployment in namespace {other:?}: an Eru rolls only a Deployment of its own namespace ({namespace:?}); give just its name"
        ));
    }
    let errors = is_dns1123_subdomain(name);
    (!errors.is_empty()).then(|| format!("spec.deployment {name:?}: {}", errors.join("; ")))
}

/// What the operator applies to roll the Deployment `name` at `slot`: the pod template's
/// `mtsre.meitu.com/restartedAt` annotation and nothing else, so the operator owns that one
/// field.
pub fn restart_configuration(
    name: &str,
    namespace: &str,
    slot: Timestamp,
) -> DeploymentApplyConfiguration {
    DeploymentApplyConfiguration::new(name, namespace).with_spec(
        DeploymentSpecApplyConfiguration::default().with_template(
            PodTemplateSpecApplyConfiguration::default().with_metadata(
                ObjectMetaApplyConfiguration::default()
                    .with_annotations([(RESTARTED_AT_ANNOTATION, format_slot(slot))]),
            ),
        ),
    )
}

/// The pod-template annotation `mtsre.meitu.com/restartedAt` of `deployment`, as a time.
pub fn restarted_at(deployment: &Deployment) -> Option<Timestamp> {
    deployment
        .spec
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(RESTARTED_AT_ANNOTATION)
        .and_then(|v| parse_slot(v))
}

impl EruReconciler {
    /// Runs the schedule of `eru`; returns how long to wait before looking again (`None`: until
    /// something changes).
    pub(super) async fn sync_schedule(
        &self,
        eru: &Eru,
    ) -> Result<Option<Duration>, ReconcileError> {
        if eru.metadata.deletion_timestamp.is_some() {
            return Ok(None);
        }
        let namespace = eru.metadata.namespace.clone().unwrap_or_default();
        let now = self.now();
        let status = eru.status.clone().unwrap_or_default();

        if let Some(message) = invalid_deployment_name(&eru.spec.deployment, &namespace) {
            let r = Readiness::not_ready(REASON_INVALID_DEPLOYMENT, message);
            let next = EruStatus {
                next_schedule_time: None,
                ..status
            };
            self.report_problem(eru, next, &r).await?;
            return Ok(None);
        }
        let schedule = match Schedule::parse(&eru.spec.schedule, eru.spec.time_zone.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                let r = Readiness::not_ready(e.reason(), e.to_string());
                let next = EruStatus {
                    next_schedule_time: None,
                    ..status
                };
                self.report_problem(eru, next, &r).await?;
                return Ok(None);
            }
        };
        let state = SlotState {
            created: eru
                .metadata
                .creation_timestamp
                .as_ref()
                .map_or(now, |t| t.0),
            last_schedule_time: status.last_schedule_time.as_ref().map(|t| t.0),
            last_missed_time: status.last_missed_time.as_ref().map(|t| t.0),
            starting_deadline_seconds: eru.spec.starting_deadline_seconds,
            suspend: eru.spec.suspend,
        };
        let decision = decide(&schedule, &state, now);
        let wake = decision.next().map(|n| wait_until(now, n));
        let next_time = decision.next().map(Time);
        let deployment = self.deployment(&namespace, &eru.spec.deployment);

        match decision {
            Decision::Suspended => {
                let r = Readiness::not_ready(
                    REASON_SUSPENDED,
                    "spec.suspend is true: no rollouts until it is false",
                );
                let next = EruStatus {
                    next_schedule_time: None,
                    ..status
                };
                self.write_status(eru, next, &r, now).await?;
                Ok(None)
            }
            Decision::Wait { .. } => {
                let r = match &deployment {
                    Some(_) => scheduled(&schedule, next_time.as_ref()),
                    None => not_found(&eru.spec.deployment),
                };
                let next = EruStatus {
                    next_schedule_time: next_time,
                    ..status
                };
                if deployment.is_none() && !already_reported(eru, &r) {
                    self.publish_about(
                        eru,
                        EventType::Warning,
                        r.reason,
                        "Rollout",
                        r.message.clone(),
                    )
                    .await;
                }
                self.write_status(eru, next, &r, now).await?;
                Ok(wake)
            }
            Decision::Missed { slot, late_by, .. } => {
                let note = format!(
                    "Missed the slot {} by {:.0}s, more than startingDeadlineSeconds ({}): not rolled out",
                    format_slot(slot),
                    late_by.as_secs_f64(),
                    eru.spec.starting_deadline_seconds.unwrap_or_default(),
                );
                self.record_missed(
                    eru,
                    status,
                    slot,
                    next_time,
                    deployment.is_some(),
                    &schedule,
                    &note,
                    now,
                )
                .await?;
                Ok(wake)
            }
            Decision::Run { slot, skipped, .. } => {
                if deployment.is_none() {
                    let note = format!(
                        "Missed the slot {}: Deployment {:?} not found",
                        format_slot(slot),
                        eru.spec.deployment
                    );
                    self.record_missed(eru, status, slot, next_time, false, &schedule, &note, now)
                        .await?;
                    return Ok(wake);
                }
                match self
                    .roll(eru, &namespace, status, slot, skipped, &schedule, next_time)
                    .await?
                {
                    Rolled::Done => Ok(wake),
                    // The Deployment went away between the cache and the API: the watch
                    // brings the news; look again at once.
                    Rolled::DeploymentGone => Ok(Some(Duration::ZERO)),
                }
            }
        }
    }

    /// Records `slot` as missed (`status.lastMissedTime`) with a Warning Event.
    #[allow(clippy::too_many_arguments)]
    async fn record_missed(
        &self,
        eru: &Eru,
        status: EruStatus,
        slot: Timestamp,
        next_time: Option<Time>,
        deployment_found: bool,
        schedule: &Schedule,
        note: &str,
        now: Timestamp,
    ) -> Result<(), ReconcileError> {
        let r = if deployment_found {
            scheduled(schedule, next_time.as_ref())
        } else {
            not_found(&eru.spec.deployment)
        };
        let next = EruStatus {
            last_missed_time: Some(Time(slot)),
            next_schedule_time: next_time,
            ..status
        };
        self.write_status(eru, next, &r, now).await?;
        tracing::warn!(eru = %key(eru), slot = %format_slot(slot), "{note}");
        self.publish_about(
            eru,
            EventType::Warning,
            "MissSchedule",
            "Rollout",
            note.to_string(),
        )
        .await;
        Ok(())
    }

    /// Rolls the Deployment for `slot` (unless it already carries it) and records it.
    #[allow(clippy::too_many_arguments)]
    async fn roll(
        &self,
        eru: &Eru,
        namespace: &str,
        status: EruStatus,
        slot: Timestamp,
        skipped: u32,
        schedule: &Schedule,
        next_time: Option<Time>,
    ) -> Result<Rolled, ReconcileError> {
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), namespace);
        let name = &eru.spec.deployment;
        // A fresh read: whether this slot was rolled already must not come from a cache.
        let live = match api.get(name).await {
            Ok(d) => d,
            Err(e) if is_not_found(&e) => return Ok(Rolled::DeploymentGone),
            Err(e) => return Err(ReconcileError::api("reading the Deployment", e)),
        };
        let current = restarted_at(&live);
        // Slots up to this instant are recorded in the status (or predate the Eru).
        let recorded_until = status
            .last_schedule_time
            .as_ref()
            .map(|t| t.0)
            .into_iter()
            .fold(
                eru.metadata
                    .creation_timestamp
                    .as_ref()
                    .map_or(slot, |t| t.0),
                Timestamp::max,
            );
        // Another Eru rolling the same Deployment writes the same annotation: then a newer
        // value may be its rollout, not an unrecorded one of ours.
        let sole = self
            .erus
            .generic()
            .store()
            .by_index(super::BY_DEPLOYMENT_INDEX, &format!("{namespace}/{name}"))
            .map_or(true, |erus| erus.len() <= 1);
        let unrecorded = current.filter(|t| sole && *t > recorded_until);
        let mut rollouts = status.rollouts;
        let mut last_rollout_time = status.last_rollout_time.clone();
        let patched = if current.is_some_and(|c| c >= slot) {
            tracing::debug!(eru = %key(eru), slot = %format_slot(slot), "the Deployment already carries this slot: not patched again");
            false
        } else {
            let mut config = restart_configuration(name, namespace, slot);
            if let Some(rv) = &live.metadata.resource_version {
                config = config.with_resource_version(rv.clone());
            }
            match Clientset::new(self.client.clone())
                .apps_v1()
                .deployments(namespace)
                .apply(&config, &ApplyOptions::new(CONTROLLER_NAME).force())
                .await
            {
                Ok(_) => {}
                Err(e) if is_conflict(&e) => {
                    return Err(ReconcileError::conflict(
                        "applying the Deployment's restartedAt annotation",
                        e,
                    ));
                }
                Err(e) if is_not_found(&e) => return Ok(Rolled::DeploymentGone),
                Err(e) => {
                    return Err(ReconcileError::api(
                        "applying the Deployment's restartedAt annotation",
                        e,
                    ));
                }
            }
            let patched_at = self.now();
            let late = patched_at.duration_since(slot);
            self.metrics.observe_rollout(late);
            last_rollout_time = Some(Time(patched_at));
            tracing::info!(
                eru = %key(eru),
                deployment = %name,
                slot = %format_slot(slot),
                late_ms = late.as_secs_f64() * 1000.0,
                "patched the pod template"
            );
            true
        };
        if unrecorded.is_some() {
            rollouts += 1;
        }
        if patched {
            rollouts += 1;
        }
        let recorded_slot = current.filter(|c| *c > slot).unwrap_or(slot);
        let next = EruStatus {
            last_schedule_time: Some(Time(recorded_slot)),
            next_schedule_time: next_time.clone(),
            last_rollout_time,
            rollouts,
            ..status
        };
        let r = scheduled(schedule, next_time.as_ref());
        let now = self.now();
        self.write_status(eru, next, &r, now).await?;

        if patched {
            tracing::info!(eru = %key(eru), deployment = %name, slot = %format_slot(slot), rollouts, "rolled out");
            self.publish_about(
                eru,
                EventType::Normal,
                "RolledOut",
                "Rollout",
                format!(
                    "Rolled Deployment {name} for the slot {slot}: {RESTARTED_AT_ANNOTATION}={slot}",
                    slot = format_slot(slot)
                ),
            )
            .await;
            self.publish(
                &live.object_ref(&()),
                EventType::Normal,
                "RolledOut",
                "Rollout",
                format!(
                    "Eru {} rolled the pods for the slot {}",
                    key(eru),
                    format_slot(slot)
                ),
            )
            .await;
        }
        if let Some(earlier) = unrecorded {
            tracing::info!(eru = %key(eru), slot = %format_slot(earlier), "recorded a rollout made before a restart");
            self.publish_about(
                eru,
                EventType::Normal,
                "RolloutRecorded",
                "Rollout",
                format!(
                    "The slot {} had been rolled out before the operator restarted; recorded it",
                    format_slot(earlier)
                ),
            )
            .await;
        }
        if skipped > 0 {
            let count = if skipped >= crate::schedule::MISSED_COUNT_LIMIT {
                format!("more than {skipped}")
            } else {
                skipped.to_string()
            };
            self.publish_about(
                eru,
                EventType::Warning,
                "MissedSlots",
                "Rollout",
                format!("{count} earlier slots passed unhandled; only the most recent ({}) was rolled out", format_slot(slot)),
            )
            .await;
        }
        Ok(Rolled::Done)
    }

    /// Writes an error condition (once per generation and message) with a Warning Event.
    async fn report_problem(
        &self,
        eru: &Eru,
        status: EruStatus,
        r: &Readiness,
    ) -> Result<(), ReconcileError> {
        if already_reported(eru, r) && eru.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let now = self.now();
        self.write_status(eru, status, r, now).await?;
        tracing::warn!(eru = %key(eru), reason = r.reason, "{}", r.message);
        self.publish_about(
            eru,
            EventType::Warning,
            r.reason,
            "Validate",
            r.message.clone(),
        )
        .await;
        Ok(())
    }

    /// Writes `status` with `readiness` by server-side apply to the status subresource, as the
    /// field manager [`CONTROLLER_NAME`] with `force` (client-go's `ApplyStatus`), with the
    /// Eru's `resourceVersion` as a precondition ([`status_apply_configuration`]); skips the
    /// write when nothing changes.
    async fn write_status(
        &self,
        eru: &Eru,
        status: EruStatus,
        readiness: &Readiness,
        now: Timestamp,
    ) -> Result<(), ReconcileError> {
        let status = with_readiness(eru, status, readiness, now);
        if eru.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let config = status_apply_configuration(eru, &status);
        let namespace = eru.metadata.namespace.as_deref().unwrap_or_default();
        let name = eru.metadata.name.as_deref().unwrap_or_default();
        match self
            .clientset
            .mtsre_v1()
            .erus(namespace)
            .apply_status(&config, &ApplyOptions::new(CONTROLLER_NAME).force())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_conflict(&e) => {
                Err(ReconcileError::conflict("writing the Eru's status", e))
            }
            // Deleted meanwhile: nothing to record.
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(ReconcileError::api("writing the Eru's status", e)),
        }
        .inspect(|()| tracing::debug!(eru = %format!("{namespace}/{name}"), "status written"))
    }
}

/// How a rollout attempt ended.
enum Rolled {
    /// Patched (or found patched) and recorded.
    Done,
    /// The Deployment is gone.
    DeploymentGone,
}

fn scheduled(schedule: &Schedule, next: Option<&Time>) -> Readiness {
    let zone = schedule.time_zone().iana_name().unwrap_or("UTC");
    let message = match next {
        Some(t) => format!(
            "schedule {:?} in {zone}: next rollout at {}",
            schedule.expression(),
            format_slot(t.0)
        ),
        None => format!(
            "schedule {:?} in {zone}: no further slot",
            schedule.expression()
        ),
    };
    Readiness::ready(REASON_SCHEDULED, message)
}

fn not_found(deployment: &str) -> Readiness {
    Readiness::not_ready(
        REASON_DEPLOYMENT_NOT_FOUND,
        format!(
            "Deployment {deployment:?} not found in the Eru's namespace: waiting for it; slots that pass meanwhile are missed"
        ),
    )
}

fn key(eru: &Eru) -> String {
    format!(
        "{}/{}",
        eru.metadata.namespace.as_deref().unwrap_or_default(),
        eru.metadata.name.as_deref().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rollout's apply claims the restartedAt annotation and nothing else of the Deployment.
    #[test]
    fn the_restart_configuration_holds_only_the_annotation() {
        let slot: Timestamp = "2026-11-27T10:00:00Z".parse().unwrap();
        let body = serde_json::to_value(restart_configuration("web", "prod", slot)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "prod"},
                "spec": {"template": {"metadata": {"annotations": {
                    RESTARTED_AT_ANNOTATION: format_slot(slot)
                }}}}
            })
        );
        assert_eq!(
            parse_slot(&format_slot(slot)),
            Some(slot),
            "read back as the slot"
        );
    }

    #[test]
    fn deployment_names() {
        assert_eq!(invalid_deployment_name("web", "prod"), None);
        assert_eq!(invalid_deployment_name("web.v2", "prod"), None);
        let other = invalid_deployment_name("other/web", "prod").unwrap_or_default();
        assert!(
            other.contains("namespace \"other\"") && other.contains("own namespace (\"prod\")"),
            "{other}"
        );
        let bad = invalid_deployment_name("Web_1", "prod").unwrap_or_default();
        assert!(bad.contains("RFC 1123 subdomain"), "{bad}");
        assert!(invalid_deployment_name("", "prod").is_some());
    }
}
