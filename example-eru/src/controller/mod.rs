//! The ERU controller: one reconciler for the key `namespace/name`, which serves both
//!
//! * the **annotation rule** for the Deployment `namespace/name` ([`annotation`]): an annotated
//!   Deployment gets an Eru of its name, controlled by it; removing the annotation deletes it;
//! * the **schedule** of the Eru `namespace/name` ([`rollout`]): at each slot its Deployment is
//!   rolled (pod-template annotation `mtsre.meitu.com/restartedAt`), status and Events are
//!   recorded, and the next wake-up is a `requeue_after` to the next slot.
//!
//! [`setup`] builds it on the framework's Builder (`for_::<Eru>()`, and a watch on Deployments
//! that maps each Deployment back to the Erus that roll it and to its own annotation rule).

pub mod annotation;
pub mod metrics;
pub mod rollout;
pub mod status;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource as _;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube_codegen_kubernetes::listers::apps::v1::DeploymentLister;
use parking_lot::Mutex;

use crate::OPERATOR_NAME;
use crate::pkg::apis::mtsre::v1::Eru;
use crate::pkg::client::clientset::versioned::Clientset;
use crate::pkg::client::listers::mtsre::v1::EruLister;
use crate::schedule::{Schedule, ScheduleError};

pub use metrics::EruMetrics;

/// The name of the index of Erus by the Deployment they roll (`namespace/deployment`).
pub const BY_DEPLOYMENT_INDEX: &str = "by-deployment";

/// Where "now" comes from: the system clock, or a controlled one in tests.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(Timestamp::now)
}

/// What can fail in a reconcile. Every variant is retryable: the framework requeues the key with
/// per-key exponential backoff.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// A write lost an optimistic-concurrency race (409): someone else changed the object, or
    /// the cache was behind. The next attempt reads again.
    #[error("{action}: conflict: {source}")]
    Conflict {
        /// What the reconciler was doing.
        action: &'static str,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What the reconciler was doing.
        action: &'static str,
        /// The error.
        #[source]
        source: kube::Error,
    },
}

impl ReconcileError {
    fn api(action: &'static str, source: kube::Error) -> Self {
        ReconcileError::Api { action, source }
    }

    fn conflict(action: &'static str, source: kube::Error) -> Self {
        ReconcileError::Conflict { action, source }
    }
}

/// The controller's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The schedule of Erus made for annotated Deployments without
    /// `mtsre.meitu.com/eru-schedule` (checked by [`Options::validate`]).
    pub default_schedule: String,
    /// Reconciles running at once.
    pub max_concurrent_reconciles: usize,
    /// The Event reporter's instance (the pod name); empty: `$POD_NAME`, `$HOSTNAME` or the
    /// operator's name.
    pub instance: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            default_schedule: "0 3 * * *".into(),
            max_concurrent_reconciles: 2,
            instance: String::new(),
        }
    }
}

impl Options {
    /// Checks the default schedule (in UTC), so that a bad flag fails at start-up.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        Schedule::parse(&self.default_schedule, None).map(|_| ())
    }
}

/// The reconciler: clients, caches and the Event recorder.
pub struct EruReconciler {
    clientset: Clientset,
    client: kube::Client,
    erus: EruLister,
    deployments: DeploymentLister,
    recorder: Recorder,
    default_schedule: String,
    clock: Clock,
    metrics: EruMetrics,
    /// Deployments already warned about a hand-made Eru of their name, by key → resourceVersion.
    warned: Mutex<HashMap<String, String>>,
}

impl EruReconciler {
    /// A reconciler writing through `client` (the manager's), reading Erus from `erus` and
    /// Deployments from `deployments`.
    pub fn new(
        client: kube::Client,
        erus: EruLister,
        deployments: DeploymentLister,
        opts: &Options,
        clock: Clock,
        metrics: EruMetrics,
    ) -> Self {
        let instance = if opts.instance.is_empty() {
            std::env::var("POD_NAME")
                .or_else(|_| std::env::var("HOSTNAME"))
                .unwrap_or_else(|_| OPERATOR_NAME.into())
        } else {
            opts.instance.clone()
        };
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: OPERATOR_NAME.into(),
                instance: Some(instance),
            },
        );
        EruReconciler {
            clientset: Clientset::new(client.clone()),
            client,
            erus,
            deployments,
            recorder,
            default_schedule: opts.default_schedule.clone(),
            clock,
            metrics,
            warned: Mutex::new(HashMap::new()),
        }
    }

    fn now(&self) -> Timestamp {
        (self.clock)()
    }

    fn deployment(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        self.deployments.namespaced(namespace).get(name).ok()
    }

    /// Reconciles the key `namespace/name`: the annotation rule of the Deployment of that name,
    /// then the schedule of the Eru of that name. Returns when to look again (`None`: when
    /// something changes).
    pub async fn reconcile(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Duration>, ReconcileError> {
        let deployment = self.deployment(namespace, name);
        let eru = self.erus.namespaced(namespace).get(name).ok();
        if self
            .annotation_rule(namespace, name, deployment.as_deref(), eru.as_deref())
            .await?
        {
            // The rule wrote an Eru; its watch event brings the new version.
            return Ok(None);
        }
        match eru {
            Some(eru) => self.sync_schedule(&eru).await,
            None => Ok(None),
        }
    }

    /// Publishes an Event about `eru`. Events are best effort, as client-go's recorder is: a
    /// failure is logged and never fails the reconcile.
    async fn publish_about(
        &self,
        eru: &Eru,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        self.publish(&eru.object_ref(&()), type_, reason, action, note)
            .await;
    }

    async fn publish(
        &self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(truncate_note(note)),
            action: action.into(),
            secondary: None,
        };
        if let Err(e) = self.recorder.publish(&event, regarding).await {
            tracing::warn!(error = %e, reason, "could not publish an Event");
        }
    }
}

/// The API server's limit on an Event's note, in bytes.
pub const MAX_NOTE_BYTES: usize = 1024;

/// `note` cut to [`MAX_NOTE_BYTES`] (at a character boundary, ending in `…`).
pub fn truncate_note(mut note: String) -> String {
    if note.len() <= MAX_NOTE_BYTES {
        return note;
    }
    let mut end = MAX_NOTE_BYTES - '…'.len_utf8();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push('…');
    note
}

/// The message of an API error: the server's own words for a `Status`, else the error.
pub fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// The keys a change of `deployment` concerns: its own (for the annotation rule) when it is
/// annotated or an Eru of its name exists, and every Eru that rolls it.
pub fn deployment_keys(deployment: &Deployment, erus: &EruLister) -> Vec<(String, String)> {
    let namespace = deployment.metadata.namespace.clone().unwrap_or_default();
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let mut keys = Vec::new();
    let same_name = erus.namespaced(&namespace).get(&name).is_ok();
    if annotation::wants_eru(deployment) || same_name {
        keys.push((namespace.clone(), name.clone()));
    }
    let index_value = format!("{namespace}/{name}");
    if let Ok(rolling) = erus
        .generic()
        .store()
        .by_index(BY_DEPLOYMENT_INDEX, &index_value)
    {
        for eru in rolling {
            let key = (
                namespace.clone(),
                eru.metadata.name.clone().unwrap_or_default(),
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// The index function of [`BY_DEPLOYMENT_INDEX`].
pub fn index_by_deployment(eru: &Eru) -> Vec<String> {
    vec![format!(
        "{}/{}",
        eru.metadata.namespace.as_deref().unwrap_or_default(),
        eru.spec.deployment
    )]
}

/// The controller's name (logs, metrics labels).
pub const CONTROLLER_NAME: &str = "eru";

/// What [`setup`] could not do.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `--default-schedule` is not usable.
    #[error("--default-schedule: {0}")]
    DefaultSchedule(#[from] ScheduleError),
    /// The Eru informer refused the index.
    #[error("indexing Erus by Deployment: {0}")]
    Index(#[from] kube_codegen_runtime::store::StoreError),
    /// The Builder refused the controller.
    #[error(transparent)]
    Builder(#[from] kube_controller_runtime::BuilderError),
}

/// Adds the ERU controller to `mgr`: `for_::<Eru>()` (spec changes: the `GenerationChanged`
/// predicate, so the operator's own status writes do not wake it), and a watch on Deployments
/// (created, deleted, or changed in spec or annotations) mapped by [`deployment_keys`]. Reads come
/// from the manager's shared caches through the generated Eru informer and lister; writes go
/// through the manager's (fenced) client with the generated clientset.
///
/// Returns the reconciler's metrics (also registered in the manager's registry).
pub fn setup(
    mgr: &kube_controller_runtime::Manager,
    opts: &Options,
    clock: Clock,
) -> Result<EruMetrics, SetupError> {
    use crate::pkg::client::informers::externalversions::mtsre::v1::EruInformer;
    use kube_codegen_kubernetes::InformerGroups;
    use kube_controller_runtime::predicate::{AnnotationsChanged, GenerationChanged, or};
    use kube_controller_runtime::{Action, Context, Controller, Request};

    opts.validate()?;
    let erus_informer = EruInformer::new(mgr.factory());
    erus_informer
        .informer()
        .add_indexer(BY_DEPLOYMENT_INDEX, index_by_deployment)?;
    let erus = erus_informer.lister();
    // The built-in accessor of the manager's one factory: the same informer (watch and cache)
    // the Builder's `watches_with::<Deployment>` below uses, and any other consumer's.
    let deployments = mgr.factory().apps().v1().deployments().lister();
    let metrics = EruMetrics::default();
    mgr.metrics().with_registry(|r| metrics.register(r));
    let reconciler = Arc::new(EruReconciler::new(
        mgr.client(),
        erus.clone(),
        deployments,
        opts,
        clock,
        metrics.clone(),
    ));
    let map = move |d: &Deployment| {
        deployment_keys(d, &erus)
            .into_iter()
            .map(|(ns, name)| Request::namespaced(ns, name))
            .collect()
    };
    Controller::builder(mgr)
        .for_with::<Eru>(GenerationChanged)
        .watches_with::<Deployment>(map, or(GenerationChanged, AnnotationsChanged))
        .named(CONTROLLER_NAME)
        .max_concurrent_reconciles(opts.max_concurrent_reconciles.max(1))
        .complete(move |req: Request, _ctx: Context| {
            let reconciler = reconciler.clone();
            async move {
                let namespace = req.namespace.clone().unwrap_or_default();
                match reconciler.reconcile(&namespace, &req.name).await {
                    Ok(Some(after)) => Ok(Action::requeue_after(after)),
                    Ok(None) => Ok(Action::done()),
                    // Expected when the cache is a step behind a write (the operator's own,
                    // or another replica's): read again, with backoff, without an error.
                    Err(e @ ReconcileError::Conflict { .. }) => {
                        tracing::debug!(request = %req, error = %e, "conflict; trying again");
                        Ok(Action::requeue())
                    }
                    Err(e) => Err(e),
                }
            }
        })?;
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_fit_the_api_servers_limit() {
        assert_eq!(truncate_note("short".into()), "short");
        let long = "é".repeat(700); // 1400 bytes
        let cut = truncate_note(long);
        assert!(cut.len() <= MAX_NOTE_BYTES, "{}", cut.len());
        assert!(cut.ends_with('…'));
        let exact = "a".repeat(MAX_NOTE_BYTES);
        assert_eq!(truncate_note(exact.clone()), exact);
    }
}
