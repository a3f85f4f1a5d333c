//! The annotation rule: a Deployment annotated `mtsre.meitu.com/eru: "true"` gets an `Eru` of
//! the same name that it controls (an ownerReference with `controller: true`), with the
//! schedule of its `mtsre.meitu.com/eru-schedule` annotation or the operator's default;
//! removing the annotation deletes that `Eru`. An `Eru` without a controlling Deployment
//! (made by hand) is never touched.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource as _;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::events::EventType;
use kube_codegen_runtime::api_status::{is_already_exists, is_conflict, is_invalid, is_not_found};
use serde_json::json;

use super::{EruReconciler, ReconcileError};
use crate::pkg::apis::mtsre::v1::{Eru, EruSpec};
use crate::{ERU_ANNOTATION, MANAGED_BY_LABEL, OPERATOR_NAME, SCHEDULE_ANNOTATION};

/// Whether `deployment` asks for an Eru (`mtsre.meitu.com/eru: "true"`, case-insensitive) and is
/// not being deleted.
pub fn wants_eru(deployment: &Deployment) -> bool {
    deployment.metadata.deletion_timestamp.is_none()
        && deployment
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(ERU_ANNOTATION))
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The controlling ownerReference of `eru` when it is a Deployment's (`apps/v1`): such an Eru
/// was made by the annotation rule.
pub fn controlling_deployment(eru: &Eru) -> Option<&OwnerReference> {
    eru.metadata.owner_references.iter().flatten().find(|r| {
        r.controller == Some(true) && r.kind == "Deployment" && r.api_version == "apps/v1"
    })
}

/// The schedule the rule gives `deployment`'s Eru.
pub fn desired_schedule<'a>(deployment: &'a Deployment, default: &'a str) -> &'a str {
    deployment
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SCHEDULE_ANNOTATION))
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or(default)
}

/// The Eru the rule makes for `deployment`.
pub fn desired_eru(deployment: &Deployment, schedule: &str) -> Eru {
    let name = deployment.metadata.name.clone().unwrap_or_default();
    Eru {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: deployment.metadata.namespace.clone(),
            labels: Some(BTreeMap::from([(
                MANAGED_BY_LABEL.to_string(),
                OPERATOR_NAME.to_string(),
            )])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name,
                uid: deployment.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: EruSpec {
            deployment: deployment.metadata.name.clone().unwrap_or_default(),
            schedule: schedule.to_string(),
            ..EruSpec::default()
        },
        status: None,
    }
}

impl EruReconciler {
    /// Applies the rule to the Deployment `namespace/name` and the Eru of the same name (both
    /// as the cache has them). Returns whether it wrote anything.
    pub(super) async fn annotation_rule(
        &self,
        namespace: &str,
        name: &str,
        deployment: Option<&Deployment>,
        eru: Option<&Eru>,
    ) -> Result<bool, ReconcileError> {
        let erus = self.clientset.mtsre_v1().erus(namespace);
        let owner = eru.and_then(controlling_deployment);
        let Some(deployment) = deployment else {
            // The Deployment is gone: the garbage collector deletes the Erus it controlled.
            return Ok(false);
        };
        let uid = deployment.metadata.uid.as_deref().unwrap_or_default();
        if let (Some(eru), Some(owner)) = (eru, owner)
            && owner.uid != uid
        {
            // Controlled by an earlier Deployment of this name that was deleted: garbage the
            // collector has not reached yet (or never will, without one). Delete it, so that
            // this Deployment's own Eru can be made.
            self.delete_eru(namespace, name, eru, "its Deployment was replaced")
                .await?;
            return Ok(true);
        }
        if !wants_eru(deployment) {
            return match (eru, owner) {
                (Some(eru), Some(_)) => {
                    self.delete_eru(namespace, name, eru, "the annotation was removed")
                        .await?;
                    self.publish(
                        &deployment.object_ref(&()),
                        EventType::Normal,
                        "EruDeleted",
                        "DeleteEru",
                        format!(
                            "Deleted Eru {namespace}/{name}: the Deployment is no longer annotated {ERU_ANNOTATION}=true"
                        ),
                    )
                    .await;
                    Ok(true)
                }
                _ => Ok(false),
            };
        }
        let schedule = desired_schedule(deployment, &self.default_schedule);
        match (eru, owner) {
            (None, _) => {
                let want = desired_eru(deployment, schedule);
                match erus.create(&want, &PostParams::default()).await {
                    Ok(_) => {
                        tracing::info!(eru = %format!("{namespace}/{name}"), schedule, "created Eru for the annotated Deployment");
                        self.publish(
                            &deployment.object_ref(&()),
                            EventType::Normal,
                            "EruCreated",
                            "CreateEru",
                            format!("Created Eru {namespace}/{name} with schedule {schedule:?}"),
                        )
                        .await;
                        Ok(true)
                    }
                    // The cache has not seen it yet: the watch brings it.
                    Err(e) if is_already_exists(&e) => Ok(false),
                    Err(e) if is_invalid(&e) => {
                        self.refused(deployment, namespace, name, schedule, &e)
                            .await;
                        Ok(false)
                    }
                    Err(e) => Err(ReconcileError::api("creating the Eru", e)),
                }
            }
            (Some(eru), Some(_)) => {
                if eru.spec.schedule == schedule && eru.spec.deployment == name {
                    return Ok(false);
                }
                let patch = json!({
                    "metadata": {"resourceVersion": eru.metadata.resource_version},
                    "spec": {"schedule": schedule, "deployment": name},
                });
                match erus
                    .patch(name, &Patch::Merge(patch), &PatchParams::default())
                    .await
                {
                    Ok(_) => {
                        tracing::info!(eru = %format!("{namespace}/{name}"), schedule, "updated the Eru's schedule from the Deployment's annotation");
                        Ok(true)
                    }
                    Err(e) if is_invalid(&e) => {
                        self.refused(deployment, namespace, name, schedule, &e)
                            .await;
                        Ok(false)
                    }
                    Err(e) if is_conflict(&e) => {
                        Err(ReconcileError::conflict("updating the Eru's schedule", e))
                    }
                    Err(e) if is_not_found(&e) => Ok(false),
                    Err(e) => Err(ReconcileError::api("updating the Eru's schedule", e)),
                }
            }
            (Some(_), None) => {
                // Made by hand: never touched. Say so once per version of the Deployment.
                let rv = deployment
                    .metadata
                    .resource_version
                    .clone()
                    .unwrap_or_default();
                let key = format!("{namespace}/{name}");
                let first = self.warned.lock().insert(key, rv.clone()) != Some(rv);
                if first {
                    self.publish(
                        &deployment.object_ref(&()),
                        EventType::Warning,
                        "EruNotControlled",
                        "CreateEru",
                        format!(
                            "Eru {namespace}/{name} exists and is not controlled by this Deployment; the operator leaves it alone"
                        ),
                    )
                    .await;
                }
                Ok(false)
            }
        }
    }

    /// The API server refused the Eru (an annotation schedule the CRD's validation rejects):
    /// a Warning Event on the Deployment, no retry until the Deployment changes.
    async fn refused(
        &self,
        deployment: &Deployment,
        namespace: &str,
        name: &str,
        schedule: &str,
        e: &kube::Error,
    ) {
        tracing::warn!(deployment = %format!("{namespace}/{name}"), schedule, error = %e, "the API server refused the Eru");
        self.publish(
            &deployment.object_ref(&()),
            EventType::Warning,
            "InvalidEru",
            "CreateEru",
            format!(
                "The Eru for this Deployment (schedule {schedule:?} from {SCHEDULE_ANNOTATION} or --default-schedule) was refused: {}",
                super::api_message(e)
            ),
        )
        .await;
    }

    async fn delete_eru(
        &self,
        namespace: &str,
        name: &str,
        eru: &Eru,
        why: &str,
    ) -> Result<(), ReconcileError> {
        let dp = DeleteParams {
            preconditions: Some(Preconditions {
                uid: eru.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match self
            .clientset
            .mtsre_v1()
            .erus(namespace)
            .delete(name, &dp)
            .await
        {
            Ok(_) => {
                tracing::info!(eru = %format!("{namespace}/{name}"), why, "deleted the Eru");
                Ok(())
            }
            Err(e) if is_not_found(&e) => Ok(()),
            // Another Eru of that name by now (the uid precondition failed): not ours to delete.
            Err(e) if is_conflict(&e) => Ok(()),
            Err(e) => Err(ReconcileError::api("deleting the Eru", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(annotations: &[(&str, &str)]) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("prod".into()),
                uid: Some("u-1".into()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    #[test]
    fn the_annotation_and_the_schedule() {
        type Annotations = &'static [(&'static str, &'static str)];
        let cases: [(Annotations, bool, &str); 7] = [
            (&[], false, "0 3 * * *"),
            (&[(ERU_ANNOTATION, "true")], true, "0 3 * * *"),
            (&[(ERU_ANNOTATION, "True")], true, "0 3 * * *"),
            (&[(ERU_ANNOTATION, "false")], false, "0 3 * * *"),
            (&[(ERU_ANNOTATION, "yes")], false, "0 3 * * *"),
            (
                &[
                    (ERU_ANNOTATION, "true"),
                    (SCHEDULE_ANNOTATION, "*/5 * * * *"),
                ],
                true,
                "*/5 * * * *",
            ),
            (
                &[(ERU_ANNOTATION, "true"), (SCHEDULE_ANNOTATION, "  ")],
                true,
                "0 3 * * *",
            ),
        ];
        for (annotations, wants, schedule) in cases {
            let d = deployment(annotations);
            assert_eq!(wants_eru(&d), wants, "{annotations:?}");
            assert_eq!(
                desired_schedule(&d, "0 3 * * *"),
                schedule,
                "{annotations:?}"
            );
        }
    }

    #[test]
    fn the_eru_is_controlled_by_its_deployment() {
        let d = deployment(&[(ERU_ANNOTATION, "true")]);
        let eru = desired_eru(&d, "@daily");
        assert_eq!(eru.metadata.name.as_deref(), Some("web"));
        assert_eq!(eru.metadata.namespace.as_deref(), Some("prod"));
        assert_eq!(eru.spec.deployment, "web");
        assert_eq!(eru.spec.schedule, "@daily");
        let owner = controlling_deployment(&eru).unwrap_or_else(|| panic!("no controller"));
        assert_eq!(
            (owner.uid.as_str(), owner.block_owner_deletion),
            ("u-1", Some(true))
        );
        let hand_made = Eru::default();
        assert!(controlling_deployment(&hand_made).is_none());
    }
}
