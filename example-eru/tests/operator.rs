//! The operator against the in-memory API server (the CRD installed through the API, so the
//! server prunes, defaults and validates Erus by its schema, CEL rules included): the full
//! story, the hand-made Eru rule, suspend, a missing Deployment, bad input, CronJob's missed-slot
//! rule, no polling between slots, one shared Deployment informer, and at most one rollout per
//! slot when the operator restarts in the middle of one, and the status written by typed server-side
//! apply.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use example_eru::controller::status::{ready_condition, status_apply_configuration};
use example_eru::controller::{self, Options};
use example_eru::pkg::apis::mtsre::v1::{Eru, EruSpec};
use example_eru::pkg::client::applyconfiguration::mtsre::v1::{
    EruApplyConfiguration, EruStatusApplyConfiguration, extract_eru_status,
};
use example_eru::pkg::client::clientset::versioned::Clientset;
use example_eru::schedule::format_slot;
use example_eru::{ERU_ANNOTATION, RESTARTED_AT_ANNOTATION, SCHEDULE_ANNOTATION};
use jiff::{SignedDuration, Timestamp, ToSpan as _, Unit};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResourceExt};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::api_status::{is_not_found, status_failure};
use kube_codegen_runtime::apply::meta::ConditionApplyConfiguration;
use kube_codegen_runtime::fake::{FakeApiServer, FakeHandle, Reaction};
use kube_controller_runtime::{Manager, ManagerError};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A fake API server with the Eru CRD installed: a client and the handle.
async fn server() -> (kube::Client, FakeHandle) {
    let server = FakeApiServer::new();
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &Eru::crd())
        .await
        .unwrap_or_else(|e| panic!("installing the CRD: {e}"));
    (client, server.handle())
}

/// One operator: a Manager with leader election and the ERU controller, running until stopped.
struct Operator {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ManagerError>>>,
}

impl Operator {
    fn start(client: &kube::Client, default_schedule: &str) -> Operator {
        let mgr = Manager::builder(client.clone())
            .leader_election_id("eru-operator")
            .leader_election_namespace("default")
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let opts = Options {
            default_schedule: default_schedule.into(),
            ..Options::default()
        };
        controller::setup(&mgr, &opts, controller::system_clock())
            .unwrap_or_else(|e| panic!("{e}"));
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(mgr.start(async move {
            let _ = rx.await;
        }));
        Operator {
            stop: Some(tx),
            task: Some(task),
        }
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let result = tokio::time::timeout(Duration::from_secs(30), task)
                .await
                .unwrap_or_else(|_| panic!("the manager did not stop in 30 s"))
                .unwrap_or_else(|e| panic!("the manager task failed: {e}"));
            result.unwrap_or_else(|e| panic!("the manager returned an error: {e}"));
        }
    }

    fn assert_running(&self) {
        assert!(
            self.task.as_ref().is_some_and(|t| !t.is_finished()),
            "the operator stopped (crashed?)"
        );
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Polls `check` every 50 ms until it is `Some`, or panics after `secs` seconds.
async fn eventually<T, F: Future<Output = Option<T>>>(
    what: &str,
    secs: u64,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {secs} s waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn deployment(name: &str, annotations: serde_json::Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
            },
        },
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn eru(name: &str, spec: serde_json::Value) -> Eru {
    Eru {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: serde_json::from_value::<EruSpec>(spec).unwrap_or_else(|e| panic!("{e}")),
        status: None,
    }
}

fn restarted_at(d: &Deployment) -> Option<String> {
    d.spec
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(RESTARTED_AT_ANNOTATION)
        .cloned()
}

async fn get_eru(client: &kube::Client, name: &str) -> Option<Eru> {
    match Clientset::new(client.clone())
        .mtsre_v1()
        .erus("default")
        .get(name, &GetParams::default())
        .await
    {
        Ok(e) => Some(e),
        Err(e) if is_not_found(&e) => None,
        Err(e) => panic!("reading Eru {name}: {e}"),
    }
}

async fn get_deployment(client: &kube::Client, name: &str) -> Deployment {
    Api::<Deployment>::namespaced(client.clone(), "default")
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("reading Deployment {name}: {e}"))
}

/// Waits until Eru `name` has a `Ready` condition with `reason`; returns the Eru.
async fn wait_reason(client: &kube::Client, name: &str, reason: &str) -> Eru {
    eventually(&format!("Eru {name} Ready reason {reason}"), 30, || async {
        get_eru(client, name)
            .await
            .filter(|e| ready_condition(e).is_some_and(|c| c.reason == reason))
    })
    .await
}

/// Waits until Eru `name` recorded at least `n` rollouts; returns the Eru.
async fn wait_rollouts(client: &kube::Client, name: &str, n: i64) -> Eru {
    eventually(&format!("{n} rollouts of Eru {name}"), 30, || async {
        get_eru(client, name)
            .await
            .filter(|e| e.status.as_ref().is_some_and(|s| s.rollouts >= n))
    })
    .await
}

/// The events.k8s.io Events about `kind` `name`, as (type, reason, note).
async fn events(client: &kube::Client, kind: &str, name: &str) -> Vec<(String, String, String)> {
    Api::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("listing Events: {e}"))
        .items
        .into_iter()
        .filter(|e| {
            e.regarding
                .as_ref()
                .is_some_and(|r| r.kind.as_deref() == Some(kind) && r.name.as_deref() == Some(name))
        })
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default(),
            )
        })
        .collect()
}

async fn wait_event(client: &kube::Client, kind: &str, name: &str, reason: &str) -> String {
    eventually(
        &format!("a {reason} Event about {kind} {name}"),
        30,
        || async {
            events(client, kind, name)
                .await
                .into_iter()
                .find(|(_, r, _)| r == reason)
                .map(|(_, _, note)| note)
        },
    )
    .await
}

/// The `restartedAt` values of every patch of Deployment `name` the server received.
fn patched_slots(handle: &FakeHandle, name: &str) -> Vec<String> {
    handle
        .actions()
        .into_iter()
        .filter(|a| {
            a.verb == "patch" && a.resource == "deployments" && a.name.as_deref() == Some(name)
        })
        .filter_map(|a| {
            a.body?
                .pointer(&format!(
                    "/spec/template/metadata/annotations/{}",
                    RESTARTED_AT_ANNOTATION.replace('/', "~1")
                ))?
                .as_str()
                .map(String::from)
        })
        .collect()
}

async fn merge_deployment(client: &kube::Client, name: &str, patch: serde_json::Value) {
    Api::<Deployment>::namespaced(client.clone(), "default")
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap_or_else(|e| panic!("patching Deployment {name}: {e}"));
}

async fn merge_eru(client: &kube::Client, name: &str, patch: serde_json::Value) {
    Clientset::new(client.clone())
        .mtsre_v1()
        .erus("default")
        .patch(name, &Patch::Merge(patch), &PatchParams::default())
        .await
        .unwrap_or_else(|e| panic!("patching Eru {name}: {e}"));
}

#[tokio::test]
async fn the_story_annotated_deployment_eru_rollouts_annotation_removed() {
    let (client, handle) = server().await;
    let op = Operator::start(&client, "0 3 * * *");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let created = deployments
        .create(
            &PostParams::default(),
            &deployment(
                "web",
                json!({ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: "* * * * * *"}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // The Eru appears, controlled by the Deployment, with the annotation's schedule.
    let eru = eventually("the Eru", 30, || get_eru(&client, "web")).await;
    let owner = eru.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(owner.len(), 1, "{owner:?}");
    assert_eq!(
        (
            owner[0].kind.as_str(),
            owner[0].name.as_str(),
            owner[0].controller,
            owner[0].block_owner_deletion
        ),
        ("Deployment", "web", Some(true), Some(true))
    );
    assert_eq!(Some(&owner[0].uid), created.metadata.uid.as_ref());
    assert_eq!(eru.spec.deployment, "web");
    assert_eq!(eru.spec.schedule, "* * * * * *");
    assert!(!eru.spec.suspend, "defaulted by the schema");
    let note = wait_event(&client, "Deployment", "web", "EruCreated").await;
    assert!(
        note.contains("default/web") && note.contains("* * * * * *"),
        "{note}"
    );

    // Two rollouts on the per-second schedule: the pod template carries the slot, the status
    // records it, an Event says so.
    let eru = wait_rollouts(&client, "web", 2).await;
    let status = eru.status.clone().unwrap_or_default();
    let last = status
        .last_schedule_time
        .clone()
        .unwrap_or_else(|| panic!("no lastScheduleTime: {status:?}"));
    let next = status
        .next_schedule_time
        .clone()
        .unwrap_or_else(|| panic!("no nextScheduleTime"));
    let rolled_at = status
        .last_rollout_time
        .clone()
        .unwrap_or_else(|| panic!("no lastRolloutTime"));
    assert_eq!(last.0.subsec_nanosecond(), 0, "slots are whole seconds");
    assert!(next.0 > last.0, "{next:?} after {last:?}");
    assert!(rolled_at.0 >= last.0, "patched at or after the slot");
    assert_eq!(status.observed_generation, eru.metadata.generation);
    let ready = ready_condition(&eru).unwrap_or_else(|| panic!("no Ready condition"));
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Scheduled")
    );
    assert!(
        ready.message.contains("next rollout at"),
        "{}",
        ready.message
    );
    let d = get_deployment(&client, "web").await;
    let slots = patched_slots(&handle, "web");
    let distinct: BTreeSet<&String> = slots.iter().collect();
    assert_eq!(
        distinct.len(),
        slots.len(),
        "a slot patched twice: {slots:?}"
    );
    assert!(slots.len() >= 2, "{slots:?}");
    assert!(
        slots.windows(2).all(|w| w[0] < w[1]),
        "slots in order: {slots:?}"
    );
    assert!(
        restarted_at(&d).is_some_and(|r| r >= format_slot(last.0)),
        "the Deployment carries the last recorded slot (or a newer one): {:?} vs {}",
        restarted_at(&d),
        format_slot(last.0)
    );
    let note = wait_event(&client, "Eru", "web", "RolledOut").await;
    assert!(note.contains(RESTARTED_AT_ANNOTATION), "{note}");
    wait_event(&client, "Deployment", "web", "RolledOut").await;

    // Removing the annotation deletes the Eru, and the rollouts stop.
    merge_deployment(
        &client,
        "web",
        json!({"metadata": {"annotations": {ERU_ANNOTATION: null}}}),
    )
    .await;
    eventually("the Eru to be deleted", 30, || async {
        get_eru(&client, "web").await.is_none().then_some(())
    })
    .await;
    wait_event(&client, "Deployment", "web", "EruDeleted").await;
    let before = get_deployment(&client, "web").await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let after = get_deployment(&client, "web").await;
    assert_eq!(
        restarted_at(&after),
        restarted_at(&before),
        "no rollout without an Eru"
    );
    op.assert_running();
    op.stop().await;
}

#[tokio::test]
async fn a_hand_made_eru_is_never_touched_by_the_annotation_rule() {
    let (client, _handle) = server().await;
    let erus = Clientset::new(client.clone()).mtsre_v1().erus("default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    // A hand-made Eru named like a Deployment, rolling another Deployment, suspended.
    deployments
        .create(&PostParams::default(), &deployment("target", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    erus.create(
        &eru(
            "api",
            json!({"deployment": "target", "schedule": "0 3 * * *", "suspend": true}),
        ),
        &PostParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let op = Operator::start(&client, "* * * * * *");
    wait_reason(&client, "api", "Suspended").await;

    // The Deployment of the same name is annotated: the rule finds an Eru it does not control.
    deployments
        .create(
            &PostParams::default(),
            &deployment("api", json!({ERU_ANNOTATION: "true"})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let note = wait_event(&client, "Deployment", "api", "EruNotControlled").await;
    assert!(note.contains("leaves it alone"), "{note}");
    let e = get_eru(&client, "api")
        .await
        .unwrap_or_else(|| panic!("gone"));
    assert_eq!(
        e.spec.schedule, "0 3 * * *",
        "the default schedule was not applied"
    );
    assert_eq!(e.spec.deployment, "target");
    assert!(e.metadata.owner_references.is_none(), "no owner added");

    // The annotation is removed: the hand-made Eru stays.
    merge_deployment(
        &client,
        "api",
        json!({"metadata": {"annotations": {ERU_ANNOTATION: "false"}}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        get_eru(&client, "api").await.is_some(),
        "the hand-made Eru was deleted"
    );
    // And the Deployment `api` was never rolled.
    assert_eq!(restarted_at(&get_deployment(&client, "api").await), None);
    op.assert_running();
    op.stop().await;
}

#[tokio::test]
async fn suspend_stops_rollouts_and_a_missing_deployment_is_waited_for() {
    let (client, handle) = server().await;
    let erus = Clientset::new(client.clone()).mtsre_v1().erus("default");
    let op = Operator::start(&client, "0 3 * * *");

    // An Eru whose Deployment does not exist yet: a condition and an Event, slots missed.
    erus.create(
        &eru(
            "later",
            json!({"deployment": "later", "schedule": "* * * * * *"}),
        ),
        &PostParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let waiting = wait_reason(&client, "later", "DeploymentNotFound").await;
    assert_eq!(
        ready_condition(&waiting).map(|c| c.status.as_str()),
        Some("False")
    );
    let note = wait_event(&client, "Eru", "later", "DeploymentNotFound").await;
    assert!(note.contains("\"later\" not found"), "{note}");
    let missed = eventually(
        "a missed slot while the Deployment is missing",
        30,
        || async {
            get_eru(&client, "later").await.filter(|e| {
                e.status
                    .as_ref()
                    .is_some_and(|s| s.last_missed_time.is_some())
            })
        },
    )
    .await;
    assert_eq!(missed.status.as_ref().map(|s| s.rollouts), Some(0));
    wait_event(&client, "Eru", "later", "MissSchedule").await;

    // The Deployment appears: the watch maps it back, rollouts begin.
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment("later", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_rollouts(&client, "later", 1).await;
    wait_reason(&client, "later", "Scheduled").await;

    // Suspended: Ready=False, no next slot, and no patch while suspended.
    merge_eru(&client, "later", json!({"spec": {"suspend": true}})).await;
    let suspended = wait_reason(&client, "later", "Suspended").await;
    assert!(
        suspended
            .status
            .as_ref()
            .is_some_and(|s| s.next_schedule_time.is_none())
    );
    let patches = patched_slots(&handle, "later").len();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        patched_slots(&handle, "later").len(),
        patches,
        "patched while suspended"
    );

    // Resumed: rollouts go on (without deadline, CronJob's rule runs the most recent slot).
    let before = get_eru(&client, "later")
        .await
        .and_then(|e| e.status)
        .map_or(0, |s| s.rollouts);
    merge_eru(&client, "later", json!({"spec": {"suspend": false}})).await;
    wait_rollouts(&client, "later", before + 1).await;
    op.assert_running();
    op.stop().await;
}

#[tokio::test]
async fn bad_input_sets_clear_conditions_and_events_and_rolls_nothing() {
    let (client, handle) = server().await;
    let erus = Clientset::new(client.clone()).mtsre_v1().erus("default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let op = Operator::start(&client, "0 3 * * *");

    // Refused at admission by the CRD's CEL rule and pattern: the in-memory server runs them as
    // kube-apiserver does (tests/tests/e2e_eru.rs asserts the same against a real one).
    for (name, spec, field, words) in [
        (
            "three-fields",
            json!({"deployment": "web", "schedule": "* * *"}),
            "spec.schedule",
            "must be a cron expression of 5 fields",
        ),
        (
            "elsewhere",
            json!({"deployment": "other/web", "schedule": "* * * * * *"}),
            "spec.deployment",
            "should match",
        ),
    ] {
        let err = erus
            .create(&eru(name, spec), &PostParams::default())
            .await
            .err()
            .unwrap_or_else(|| panic!("{name}: the server accepted it"));
        let message = err.to_string();
        assert!(
            message.contains(field) && message.contains(words),
            "{name}: {message}"
        );
        assert!(get_eru(&client, name).await.is_none(), "{name}");
    }
    // (name, spec, reason, words the message must have): accepted by the schema, judged by the
    // operator.
    let cases = [
        (
            "minute-61",
            json!({"deployment": "web", "schedule": "61 * * * *"}),
            "InvalidSchedule",
            "\"61 * * * *\"",
        ),
        (
            "never",
            json!({"deployment": "web", "schedule": "0 0 30 2 *"}),
            "InvalidSchedule",
            "matches no time",
        ),
        (
            "mars",
            json!({"deployment": "web", "schedule": "* * * * * *", "timeZone": "Mars/Olympus_Mons"}),
            "UnknownTimeZone",
            "\"Mars/Olympus_Mons\"",
        ),
    ];
    for (name, spec, _, _) in &cases {
        erus.create(&eru(name, spec.clone()), &PostParams::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for (name, _, reason, words) in &cases {
        let e = wait_reason(&client, name, reason).await;
        let c = ready_condition(&e).unwrap_or_else(|| panic!("{name}: no condition"));
        assert_eq!(c.status, "False", "{name}");
        assert!(
            c.message.contains(words),
            "{name}: {:?} lacks {words}",
            c.message
        );
        assert!(
            e.status
                .as_ref()
                .is_some_and(|s| s.next_schedule_time.is_none() && s.rollouts == 0)
        );
        let note = wait_event(&client, "Eru", name, reason).await;
        assert_eq!(&note, &c.message, "{name}");
    }
    // Nothing was rolled, and the operator is alive and well: a good Eru works.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        patched_slots(&handle, "web").is_empty(),
        "a bad Eru rolled the Deployment"
    );
    assert_eq!(restarted_at(&get_deployment(&client, "web").await), None);
    // One Warning Event per problem, not one per reconcile.
    let repeats = events(&client, "Eru", "minute-61").await.len();
    assert_eq!(
        repeats,
        1,
        "{:?}",
        events(&client, "Eru", "minute-61").await
    );
    op.assert_running();

    // Fixing the schedule fixes the Eru.
    merge_eru(
        &client,
        "minute-61",
        json!({"spec": {"schedule": "* * * * * *"}}),
    )
    .await;
    wait_rollouts(&client, "minute-61", 1).await;
    wait_reason(&client, "minute-61", "Scheduled").await;

    // A schedule annotation the CRD refuses: a Warning Event on the Deployment, no Eru (as on a
    // real server).
    deployments
        .create(
            &PostParams::default(),
            &deployment(
                "bad-annotation",
                json!({ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: "every day"}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let note = wait_event(&client, "Deployment", "bad-annotation", "InvalidEru").await;
    assert!(
        note.contains("must be a cron expression of 5 fields"),
        "{note}"
    );
    assert!(get_eru(&client, "bad-annotation").await.is_none());
    op.assert_running();
    op.stop().await;
}

/// The next whole second that is at least `lead` from now.
fn slot_after(lead: SignedDuration) -> Timestamp {
    let t = Timestamp::now()
        .checked_add(lead)
        .unwrap_or_else(|e| panic!("{e}"));
    t.round(Unit::Second)
        .unwrap_or_else(|e| panic!("{e}"))
        .checked_add(1.second())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A 6-field cron expression that matches `t` (UTC) once a year.
fn once_at(t: Timestamp) -> String {
    let z = t.to_zoned(jiff::tz::TimeZone::UTC);
    format!(
        "{} {} {} {} {} *",
        z.second(),
        z.minute(),
        z.hour(),
        z.day(),
        z.month()
    )
}

#[tokio::test]
async fn missed_slots_follow_cronjobs_rule_without_a_burst() {
    let (client, handle) = server().await;
    let erus = Clientset::new(client.clone()).mtsre_v1().erus("default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    for name in ["late-ok", "late-missed", "burst"] {
        deployments
            .create(&PostParams::default(), &deployment(name, json!({})))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // While the operator is down: a one-off slot two seconds ahead for two Erus, one with a
    // deadline of 60 s, one with 1 s; and a per-second Eru without a deadline.
    let slot = slot_after(SignedDuration::from_secs(2));
    let cron = once_at(slot);
    for (name, deadline) in [("late-ok", 60), ("late-missed", 1)] {
        erus.create(
            &eru(
                name,
                json!({"deployment": name, "schedule": cron, "startingDeadlineSeconds": deadline}),
            ),
            &PostParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }
    erus.create(
        &eru(
            "burst",
            json!({"deployment": "burst", "schedule": "* * * * * *"}),
        ),
        &PostParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // The operator starts 4 s after the slot.
    let start_at = slot
        .checked_add(4.seconds())
        .unwrap_or_else(|e| panic!("{e}"));
    let wait = start_at.duration_since(Timestamp::now());
    tokio::time::sleep(Duration::try_from(wait).unwrap_or_default()).await;
    let op = Operator::start(&client, "0 3 * * *");

    // Within the deadline: rolled once, late.
    let ok = wait_rollouts(&client, "late-ok", 1).await;
    let st = ok.status.clone().unwrap_or_default();
    assert_eq!(st.last_schedule_time.map(|t| t.0), Some(slot));
    assert_eq!(patched_slots(&handle, "late-ok"), [format_slot(slot)]);

    // Past the deadline: recorded as missed, not rolled.
    let missed = eventually("the miss to be recorded", 30, || async {
        get_eru(&client, "late-missed").await.filter(|e| {
            e.status
                .as_ref()
                .is_some_and(|s| s.last_missed_time.is_some())
        })
    })
    .await;
    let st = missed.status.clone().unwrap_or_default();
    assert_eq!(st.last_missed_time.map(|t| t.0), Some(slot));
    assert_eq!((st.rollouts, st.last_schedule_time), (0, None));
    let note = wait_event(&client, "Eru", "late-missed", "MissSchedule").await;
    assert!(
        note.contains(&format_slot(slot)) && note.contains("startingDeadlineSeconds (1)"),
        "{note}"
    );
    assert!(patched_slots(&handle, "late-missed").is_empty());

    // Per second, no deadline, six slots passed while down: the first patch is the most recent
    // slot only (no burst), and the skipped ones are reported.
    wait_rollouts(&client, "burst", 1).await;
    let first = patched_slots(&handle, "burst")
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("no patch"));
    assert!(
        first >= format_slot(start_at),
        "first patch {first} is older than the operator's start"
    );
    let note = wait_event(&client, "Eru", "burst", "MissedSlots").await;
    assert!(note.contains("only the most recent"), "{note}");
    op.assert_running();
    op.stop().await;
}

#[tokio::test]
async fn idle_between_slots_no_requests_at_all() {
    let (client, handle) = server().await;
    let op = Operator::start(&client, "0 3 * * *");
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &deployment("web", json!({ERU_ANNOTATION: "true"})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let e = wait_reason(&client, "web", "Scheduled").await;
    assert!(
        e.status
            .as_ref()
            .is_some_and(|s| s.next_schedule_time.is_some())
    );
    // Let the status write's own event settle, then watch the wire for a while.
    tokio::time::sleep(Duration::from_millis(500)).await;
    handle.clear_actions();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let busy: Vec<String> = handle
        .actions()
        .into_iter()
        .filter(|a| a.verb != "watch" && a.resource != "leases")
        .map(|a| {
            format!(
                "{} {}{}",
                a.verb,
                a.resource,
                a.subresource.map(|s| format!("/{s}")).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        busy.is_empty(),
        "requests while waiting for a slot hours away: {busy:?}"
    );
    op.stop().await;
}

#[tokio::test]
async fn a_slot_is_rolled_at_most_once_when_the_operator_restarts_in_the_middle_of_it() {
    let (client, handle) = server().await;
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment("web", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // One slot, two seconds ahead.
    let slot = slot_after(SignedDuration::from_secs(2));
    Clientset::new(client.clone())
        .mtsre_v1()
        .erus("default")
        .create(
            &eru(
                "web",
                json!({"deployment": "web", "schedule": once_at(slot)}),
            ),
            &PostParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The first operator dies between the Deployment patch and the status write: every status
    // write fails, and it is stopped once a status write was tried after the patch.
    let (patched_tx, mut patched_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (status_tx, mut status_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    handle.prepend_reactor("patch", "deployments", move |_a| {
        let _ = patched_tx.send(());
        Reaction::PassThrough
    });
    handle.prepend_reactor("patch", "erus/status", move |_a| {
        let _ = status_tx.send(());
        Reaction::Error(Box::new(status_failure(
            500,
            "InternalError",
            "injected: the operator died here",
        )))
    });
    let first = Operator::start(&client, "0 3 * * *");
    tokio::time::timeout(Duration::from_secs(30), patched_rx.recv())
        .await
        .unwrap_or_else(|_| panic!("the first operator never patched the Deployment"));
    while status_rx.try_recv().is_ok() {}
    tokio::time::timeout(Duration::from_secs(30), status_rx.recv())
        .await
        .unwrap_or_else(|_| panic!("the first operator never tried to record the slot"));
    first.stop().await;
    assert_eq!(
        patched_slots(&handle, "web"),
        [format_slot(slot)],
        "the first operator patched once"
    );
    let generation = get_deployment(&client, "web").await.metadata.generation;
    let e = get_eru(&client, "web")
        .await
        .unwrap_or_else(|| panic!("gone"));
    assert_eq!(
        e.status.map(|s| s.rollouts).unwrap_or_default(),
        0,
        "not recorded"
    );

    // The second operator finds the slot on the Deployment: no second patch, recorded once.
    handle.clear_reactors();
    let second = Operator::start(&client, "0 3 * * *");
    let e = wait_rollouts(&client, "web", 1).await;
    let st = e.status.clone().unwrap_or_default();
    assert_eq!(st.rollouts, 1);
    assert_eq!(st.last_schedule_time.map(|t| t.0), Some(slot));
    let note = wait_event(&client, "Eru", "web", "RolloutRecorded").await;
    assert!(note.contains(&format_slot(slot)), "{note}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        patched_slots(&handle, "web"),
        [format_slot(slot)],
        "patched again after the restart"
    );
    assert_eq!(
        get_deployment(&client, "web").await.metadata.generation,
        generation,
        "rolled again"
    );
    assert_eq!(
        get_eru(&client, "web")
            .await
            .and_then(|e| e.status)
            .map(|s| s.rollouts),
        Some(1)
    );
    second.stop().await;

    // Deleting the Eru through the API leaves the Deployment alone.
    Clientset::new(client.clone())
        .mtsre_v1()
        .erus("default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn the_status_is_applied_by_the_operator_and_other_managers_conditions_stay() {
    let (client, _handle) = server().await;
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment("web", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let erus = Clientset::new(client.clone()).mtsre_v1().erus("default");
    erus.create(
        &eru("web", json!({"deployment": "web", "schedule": "0 3 * * *"})),
        &PostParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let op = Operator::start(&client, "0 3 * * *");
    let scheduled = wait_reason(&client, "web", "Scheduled").await;
    let status_owners: Vec<_> = scheduled
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| e.subresource.as_deref() == Some("status"))
        .map(|e| (e.manager.clone(), e.operation.clone()))
        .collect();
    assert_eq!(
        status_owners,
        [(Some("eru".to_string()), Some("Apply".to_string()))],
        "the status is written by apply, as the operator"
    );
    // What the operator owns is what it applies (resourceVersion aside: no field of the status).
    let owned = extract_eru_status(&scheduled, "eru").unwrap_or_else(|e| panic!("{e}"));
    let mut applied = status_apply_configuration(&scheduled, scheduled.status.as_ref().unwrap());
    applied.metadata.as_mut().unwrap().resource_version = None;
    assert_eq!(owned, applied);
    assert!(
        owned
            .status
            .as_ref()
            .is_some_and(|s| s.next_schedule_time.is_some())
    );

    // An apply over a newer Eru than the one it was computed from is refused (409): the
    // resourceVersion is a precondition, so a stale writer cannot record a slot twice.
    let auditor = EruApplyConfiguration::new("web", "default").with_status(
        EruStatusApplyConfiguration::default().with_conditions([
            ConditionApplyConfiguration::default()
                .with_type("Audited")
                .with_status("True")
                .with_reason("Checked")
                .with_message("checked by the auditor")
                .with_last_transition_time(Time(Timestamp::now())),
        ]),
    );
    erus.apply_status(&auditor, &ApplyOptions::new("auditor"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let stale = erus
        .apply_status(
            &status_apply_configuration(&scheduled, scheduled.status.as_ref().unwrap()),
            &ApplyOptions::new("eru").force(),
        )
        .await;
    assert!(
        stale
            .as_ref()
            .is_err_and(kube_codegen_runtime::api_status::is_conflict),
        "{stale:?}"
    );

    // Suspended: the operator stops applying nextScheduleTime, so the server removes it; the
    // auditor's condition stays the auditor's.
    merge_eru(&client, "web", json!({"spec": {"suspend": true}})).await;
    let suspended = wait_reason(&client, "web", "Suspended").await;
    let status = suspended.status.clone().unwrap_or_default();
    assert_eq!(status.next_schedule_time, None, "{status:?}");
    let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert!(
        types.contains(&"Audited") && types.contains(&"Ready"),
        "{types:?}"
    );
    let audited = extract_eru_status(&suspended, "auditor").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        audited.status.and_then(|s| s.conditions).map(|c| c.len()),
        Some(1)
    );
    op.assert_running();
}

/// The operator's Deployment cache is the manager's one informer: the built-in accessor
/// (`mgr.factory().apps().v1().deployments()`, which the reconciler reads through), the Builder's
/// `watches_with::<Deployment>` and any other consumer share one list and one watch.
#[tokio::test]
async fn the_deployment_informer_is_the_managers_one_shared_by_every_consumer() {
    use kube_codegen_kubernetes::InformerGroups;

    let (client, handle) = server().await;
    let mgr = Manager::builder(client.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    controller::setup(&mgr, &Options::default(), controller::system_clock())
        .unwrap_or_else(|e| panic!("{e}"));
    // Another consumer in the same process, asking both ways.
    let accessor = mgr.factory().apps().v1().deployments();
    let by_type = mgr.informer::<Deployment>();
    assert!(accessor.informer().ptr_eq(&by_type));
    let deployment_informers = mgr
        .factory()
        .informer_ids()
        .into_iter()
        .filter(|id| id.resource == "deployments")
        .count();
    assert_eq!(
        deployment_informers,
        1,
        "{:?}",
        mgr.factory().informer_ids()
    );

    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(mgr.start(async move {
        let _ = rx.await;
    }));
    let op = Operator {
        stop: Some(tx),
        task: Some(task),
    };
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &deployment("shared", json!({ERU_ANNOTATION: "true"})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The annotation rule read the Deployment from the shared cache and created the Eru …
    eventually("the Eru", 30, || get_eru(&client, "shared")).await;
    // … and the other consumer's lister sees the same object.
    let cached = accessor
        .lister()
        .namespaced("default")
        .get("shared")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(cached.metadata.uid.is_some());
    let count = |verb: &str| {
        handle
            .actions()
            .iter()
            .filter(|a| a.verb == verb && a.resource == "deployments" && a.name.is_none())
            .count()
    };
    assert_eq!(
        (count("list"), count("watch")),
        (1, 1),
        "one list, one watch"
    );
    op.stop().await;
}
