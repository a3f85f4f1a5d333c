//! The crddemo controller, in the shape of the seed's walkthrough: an informer for `Mydemo` and
//! informers for the kinds it owns (Service, EndpointSlice — the built-in accessors of the same
//! factory, `factory.core().v1().services()`, so any other consumer shares their watch and
//! cache); event handlers that put
//! `namespace/name` keys on a rate-limited work queue; N workers running the sync handler, which
//! reads from listers.
//!
//! For each valid `Mydemo` the controller keeps a selector-less Service and an EndpointSlice
//! exposing `spec.ip:spec.port`, both owned by the Mydemo, and reports a `Ready` condition,
//! `observedGeneration` and `serviceName` in the status, plus Events (`Synced`, `InvalidSpec`).
//!
//! It runs on its own ([`Controller::run`]) or as a [`Runnable`] under a
//! [`Manager`] ([`Controller::with_manager`]): then it shares
//! the manager's informer factory and leader-fenced client, its queue reports the `workqueue_*`
//! metrics, its workers the `controller_runtime_reconcile_*` metrics (through the manager's
//! [`ReconcileRecorder`], as a Builder's controller does), and it runs only on the elected
//! leader.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use example_crddemo::controller::{Controller, Options};
//! use example_crddemo::pkg::client::clientset::versioned::Clientset;
//!
//! let clientset = Clientset::try_default().await?;
//! let controller = Controller::new(clientset, Options::default())?;
//! controller.run(async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```

pub mod reconcile;
pub mod resources;
pub mod status;
pub mod validate;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kube::Resource;
use kube::runtime::events::{Recorder, Reporter};
use kube_codegen_kubernetes::InformerGroups;
use kube_codegen_kubernetes::listers::core::v1::ServiceLister;
use kube_codegen_kubernetes::listers::discovery::v1::EndpointSliceLister;
use kube_codegen_runtime::informer::{
    DeletedObject, EventHandlerFuncs, InformerError, InformerObject, InformerOptions,
    SharedIndexInformer,
};
use kube_codegen_runtime::store::object_key;
use kube_codegen_runtime::workqueue::{QueueConfig, RateLimitingQueue};
use kube_controller_runtime::metrics::{ReconcileRecorder, ReconcileResult};
use kube_controller_runtime::sharding::Shard;
use kube_controller_runtime::{BoxError, CancellationToken, LeaderElector, Manager, Runnable};

use crate::pkg::apis::crddemo::v1::Mydemo;
use crate::pkg::client::clientset::versioned::Clientset;
use crate::pkg::client::informers::externalversions::SharedInformerFactory;
use crate::pkg::client::listers::crddemo::v1::MydemoLister;

/// The controller's name, in Events (`reportingController`) and field managers.
pub const CONTROLLER_NAME: &str = "crddemo-controller";

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Worker tasks running the sync handler (the seed's `threadiness`).
    pub workers: usize,
    /// Watch only this namespace (`None`: all namespaces).
    pub namespace: Option<String>,
    /// Re-deliver every cached object this often (`None`: never).
    pub resync: Option<Duration>,
    /// The `reportingInstance` of Events (defaults to the host name when empty).
    pub instance: String,
    /// A wait at the start of every reconcile, standing in for a call to a slow external
    /// system (`--reconcile-delay`; the sharding benchmark, `scripts/bench-sharding.sh`).
    /// Zero (the default): no wait.
    pub reconcile_delay: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            workers: 2,
            namespace: None,
            resync: Some(Duration::from_secs(30)),
            instance: String::new(),
            reconcile_delay: Duration::ZERO,
        }
    }
}

/// Why the controller could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Registering an event handler failed.
    #[error("cannot register event handler: {0}")]
    Handler(#[from] InformerError),
    /// An informer never synced (the factory shut down first).
    #[error("informer caches did not sync: {0}")]
    CacheSync(String),
}

/// What the sync handler needs: clients, listers and the event recorder.
pub struct Context {
    /// The generated clientset (Mydemo status writes).
    pub clientset: Clientset,
    /// The raw client (Services, EndpointSlices).
    pub client: kube::Client,
    /// Mydemos, from the informer cache.
    pub mydemos: MydemoLister,
    /// Services, from the factory's shared cache (`factory.core().v1().services()`); whether
    /// one is this Mydemo's is checked on read (its controller owner reference).
    pub services: ServiceLister,
    /// EndpointSlices, from the factory's shared cache
    /// (`factory.discovery().v1().endpoint_slices()`), ownership checked on read.
    pub slices: EndpointSliceLister,
    /// Publishes Events (events.k8s.io/v1).
    pub recorder: Recorder,
}

/// The controller: informers, queue and workers. See the [module docs](self).
pub struct Controller {
    ctx: Arc<Context>,
    factory: SharedInformerFactory,
    /// Whether `run` starts and stops the factory (not when it is the manager's).
    owns_factory: bool,
    queue: RateLimitingQueue<String>,
    workers: usize,
    syncs: Arc<AtomicU64>,
    identity: Arc<str>,
    leader: Option<LeaderElector>,
    /// The `controller_runtime_*` metrics, under a manager.
    recorder: Option<ReconcileRecorder>,
    /// With `--sharded`: this replica's shard; only its keys are reconciled.
    shard: Option<Shard>,
    /// [`Options::reconcile_delay`].
    reconcile_delay: Duration,
}

impl Controller {
    /// Builds the informers and registers the event handlers; nothing runs until
    /// [`Controller::run`].
    pub fn new(clientset: Clientset, opts: Options) -> Result<Self, ControllerError> {
        let factory = SharedInformerFactory::builder(&clientset)
            .options(informer_options(&opts))
            .build();
        let queue = RateLimitingQueue::<String>::new();
        Self::assemble(clientset, factory, true, queue, opts, String::new(), None)
    }

    /// The controller as a [`Runnable`] of `mgr`: the manager's informer factory (its
    /// [`informer_options`] apply, not `opts.namespace`/`opts.resync`), its client (leader-
    /// fenced), a queue named `mydemo` reporting to the manager's metrics, and the manager's
    /// identity in logs. Add it with `mgr.add(controller)`.
    pub fn with_manager(mgr: &Manager, opts: Options) -> Result<Self, ControllerError> {
        let clientset = Clientset::new(mgr.client());
        let factory = SharedInformerFactory::from(mgr.factory().clone());
        let queue = RateLimitingQueue::<String>::with_config(
            QueueConfig::named(QUEUE_NAME).metrics_provider(mgr.metrics().workqueue_provider()),
        );
        let mut controller = Self::assemble(
            clientset,
            factory,
            false,
            queue,
            opts,
            mgr.identity().to_string(),
            // Sharded, every replica works (on its keys): the shard Lease fences it instead.
            if mgr.shard().is_some() {
                None
            } else {
                mgr.elector().cloned()
            },
        )?;
        controller.shard = mgr.shard().cloned();
        let recorder = mgr.metrics().reconcile_recorder(QUEUE_NAME);
        recorder.set_max_concurrent_reconciles(controller.workers);
        controller.recorder = Some(recorder);
        Ok(controller)
    }

    fn assemble(
        clientset: Clientset,
        factory: SharedInformerFactory,
        owns_factory: bool,
        queue: RateLimitingQueue<String>,
        opts: Options,
        identity: String,
        leader: Option<LeaderElector>,
    ) -> Result<Self, ControllerError> {
        let mydemos = factory.crddemo().v1().mydemos();
        let enqueue = queue.clone();
        let on_update = queue.clone();
        let on_delete = queue.clone();
        mydemos.informer().add_event_handler(
            EventHandlerFuncs::<Mydemo>::new()
                .add_func(move |obj, _| enqueue_object(&enqueue, obj.as_ref()))
                .update_func(move |old, new| {
                    // A resync re-delivers an unchanged object: nothing to do (as in the seed).
                    if old.metadata.resource_version != new.metadata.resource_version {
                        enqueue_object(&on_update, new.as_ref());
                    }
                })
                .delete_func(move |deleted| {
                    if let Some(key) = deleted.key() {
                        on_delete.add(key);
                    }
                }),
        )?;

        // The built-in accessors of the same factory: one informer (one watch, one cache) per
        // kind, shared with every other consumer of the factory — another controller under the
        // manager, a Builder's `owns::<Service>()`, `informer_for::<Service>()`.
        let services = factory.core().v1().services();
        enqueue_owners(services.informer(), &queue)?;
        let slices = factory.discovery().v1().endpoint_slices();
        enqueue_owners(slices.informer(), &queue)?;

        let client = clientset.client().clone();
        let instance = if opts.instance.is_empty() {
            std::env::var("HOSTNAME").unwrap_or_else(|_| CONTROLLER_NAME.into())
        } else {
            opts.instance.clone()
        };
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: CONTROLLER_NAME.into(),
                instance: Some(instance),
            },
        );
        let ctx = Context {
            mydemos: mydemos.lister(),
            services: services.lister(),
            slices: slices.lister(),
            clientset,
            client,
            recorder,
        };
        Ok(Controller {
            ctx: Arc::new(ctx),
            factory,
            owns_factory,
            queue,
            workers: opts.workers.max(1),
            syncs: Arc::default(),
            identity: Arc::from(identity.as_str()),
            leader,
            recorder: None,
            shard: None,
            reconcile_delay: opts.reconcile_delay,
        })
    }

    /// The work queue (for tests and metrics).
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    /// How many times the sync handler has run so far (a metric; it keeps counting while the
    /// controller runs).
    pub fn sync_count(&self) -> Arc<AtomicU64> {
        self.syncs.clone()
    }

    /// The Mydemo lister over the controller's informer cache.
    pub fn mydemos(&self) -> &MydemoLister {
        &self.ctx.mydemos
    }

    /// Runs until `shutdown` completes: starts the informers, waits for their caches, starts the
    /// workers; then stops taking new work, lets every worker finish the item in hand, and stops
    /// the informers.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ControllerError> {
        tracing::info!(identity = %self.identity, "Starting Mydemo control loop");
        self.factory.start();
        tracing::info!("Waiting for informer caches to sync");
        tokio::pin!(shutdown);
        // Until the caches sync (which may wait for the CRD to be installed, as in the seed's
        // log) a shutdown signal still stops everything.
        let synced = tokio::select! {
            synced = self.factory.wait_for_cache_sync() => synced,
            () = &mut shutdown => {
                tracing::info!("Shutdown requested before the caches synced");
                self.stop_factory().await;
                return Ok(());
            }
        };
        if !synced.all_synced() {
            let failed: Vec<String> = synced.failed().iter().map(|id| id.to_string()).collect();
            self.stop_factory().await;
            return Err(ControllerError::CacheSync(failed.join(", ")));
        }
        tracing::info!(workers = self.workers, "Starting workers");
        // Dropped (a lost election aborts this future): the workers go with it.
        let mut tasks = tokio::task::JoinSet::new();
        for id in 0..self.workers {
            tasks.spawn(worker(
                self.ctx.clone(),
                self.queue.clone(),
                self.syncs.clone(),
                id,
                self.identity.clone(),
                Fences {
                    leader: self.leader.clone(),
                    shard: self.shard.clone(),
                    delay: self.reconcile_delay,
                },
                self.recorder.clone(),
            ));
        }
        // Sharded: queue the keys this replica takes over whenever its membership changes.
        let rescan = self.shard.clone().map(|shard| {
            let (queue, mydemos) = (self.queue.clone(), self.ctx.mydemos.clone());
            let identity = self.identity.clone();
            tokio::spawn(async move {
                let mut changes = shard.subscribe();
                let mut admitted = std::collections::HashSet::new();
                loop {
                    changes.borrow_and_update();
                    let mut now = std::collections::HashSet::new();
                    let mut newly = 0usize;
                    for m in mydemos.list(&Default::default()) {
                        let Ok(key) = object_key(m.as_ref()) else {
                            continue;
                        };
                        if shard.admits(&shard_key(&key)) {
                            if !admitted.contains(&key) {
                                queue.add(key.clone());
                                newly += 1;
                            }
                            now.insert(key);
                        }
                    }
                    let released = admitted.difference(&now).count();
                    if newly > 0 || released > 0 {
                        // When keys of existing objects change hands (the handover's moment).
                        tracing::info!(identity = %identity, admitted = now.len(), newly, released, "shard keys admitted");
                    }
                    admitted = now;
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            })
        });
        tracing::info!("Started workers");
        shutdown.await;
        if let Some(r) = rescan {
            r.abort();
        }
        tracing::info!("Shutting down workers: finishing the items in hand");
        self.queue.shut_down_with_drain().await;
        while let Some(t) = tasks.join_next().await {
            if let Err(e) = t {
                tracing::error!(error = %e, "worker task failed");
            }
        }
        self.stop_factory().await;
        tracing::info!("Controller stopped");
        Ok(())
    }

    /// Stops the informers if they are this controller's own (a manager stops its own).
    async fn stop_factory(&self) {
        if self.owns_factory {
            self.factory.shutdown().await;
        }
    }
}

/// The name of the work queue (and its `workqueue_*` metrics) under a manager.
pub const QUEUE_NAME: &str = "mydemo";

/// The informer options `opts` ask for: `managedFields` stripped, the namespace, the resync.
pub fn informer_options(opts: &Options) -> InformerOptions {
    let mut options = InformerOptions::default().strip_managed_fields();
    if let Some(ns) = &opts.namespace {
        options = options.namespace(ns.clone());
    }
    if let Some(resync) = opts.resync {
        options = options.resync(resync);
    }
    options
}

impl Runnable for Controller {
    async fn start(self, shutdown: CancellationToken) -> Result<(), BoxError> {
        self.run(async move { shutdown.cancelled().await })
            .await
            .map_err(|e| Box::new(e) as BoxError)
    }

    /// Sharded, the controller runs on every replica; otherwise on the leader.
    fn needs_leader_election(&self) -> bool {
        self.shard.is_none()
    }

    fn name(&self) -> String {
        "controller mydemo".into()
    }
}

/// What a worker checks before each sync: the leader Lease, or (sharded) the shard's gate;
/// and the simulated external call each sync starts with ([`Options::reconcile_delay`]).
struct Fences {
    leader: Option<LeaderElector>,
    shard: Option<Shard>,
    delay: Duration,
}

/// The shard key of a Mydemo's `namespace/name`.
fn shard_key(key: &str) -> String {
    let (namespace, name) = match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    };
    kube_controller_runtime::sharding::key("crddemo.k8s.io", "Mydemo", namespace, name)
}

fn enqueue_object<K: Resource>(queue: &RateLimitingQueue<String>, obj: &K) {
    match object_key(obj) {
        Ok(key) => queue.add(key),
        Err(e) => tracing::warn!(error = %e, "cannot enqueue object without a key"),
    }
}

/// Puts the controlling Mydemo of every `K` the informer sees on the queue. Objects without a
/// Mydemo as controller owner (anything else in the shared cache) enqueue nothing.
fn enqueue_owners<K>(
    informer: &SharedIndexInformer<K>,
    queue: &RateLimitingQueue<String>,
) -> Result<(), ControllerError>
where
    K: InformerObject,
{
    let (q1, q2, q3) = (queue.clone(), queue.clone(), queue.clone());
    informer.add_event_handler(
        EventHandlerFuncs::new()
            .add_func(move |obj: Arc<K>, _| enqueue_owner(&q1, obj.meta()))
            .update_func(move |old: Arc<K>, new: Arc<K>| {
                if old.meta().resource_version != new.meta().resource_version {
                    enqueue_owner(&q2, new.meta());
                }
            })
            .delete_func(move |deleted: DeletedObject<K>| {
                if let Some(obj) = deleted.object() {
                    enqueue_owner(&q3, obj.meta());
                }
            }),
    )?;
    Ok(())
}

fn enqueue_owner(queue: &RateLimitingQueue<String>, meta: &kube::api::ObjectMeta) {
    if let (Some(owner), Some(ns)) = (
        resources::controlling_mydemo(meta),
        meta.namespace.as_deref(),
    ) {
        queue.add(format!("{ns}/{owner}"));
    }
}

/// One worker: takes keys until the queue shuts down; successes are forgotten by the rate
/// limiter, failures come back with per-key exponential backoff.
///
/// Under a manager with leader election, a worker checks before each sync that this replica
/// still holds the Lease (within its renew deadline); if not, it stops without syncing (the
/// manager stops the controller). Each sync logs `reconcile start` and its end with the
/// identity.
async fn worker(
    ctx: Arc<Context>,
    queue: RateLimitingQueue<String>,
    syncs: Arc<AtomicU64>,
    id: usize,
    identity: Arc<str>,
    fences: Fences,
    recorder: Option<ReconcileRecorder>,
) {
    let Fences {
        leader,
        shard,
        delay,
    } = fences;
    while let Some(key) = queue.get().await {
        if let Some(l) = &leader
            && !l.is_leader()
        {
            tracing::warn!(worker = id, key = %key, identity = %identity, "not the leader any more: not syncing");
            queue.done(&key);
            return;
        }
        let running = match &shard {
            Some(s) => match s.begin(&shard_key(&key)) {
                Some(r) => Some(r),
                None => {
                    // Another replica's key (or not yet admitted here): its owner syncs it.
                    queue.forget(&key);
                    queue.done(&key);
                    continue;
                }
            },
            None => None,
        };
        tracing::info!(worker = id, key = %key, identity = %identity, "reconcile start");
        let timer = recorder.as_ref().map(ReconcileRecorder::start);
        // The simulated external call (`Options::reconcile_delay`) is part of the reconcile.
        let sync = async {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            reconcile::sync(&ctx, &key).await
        };
        let result = match &shard {
            Some(s) => tokio::select! {
                r = sync => r,
                () = s.fenced() => {
                    tracing::error!(worker = id, key = %key, identity = %identity, "shard lease lost: reconcile aborted");
                    queue.done(&key);
                    continue;
                }
            },
            None => sync.await,
        };
        tracing::info!(worker = id, key = %key, identity = %identity, "reconcile end");
        drop(running);
        syncs.fetch_add(1, Ordering::Relaxed);
        if let Some(timer) = timer {
            timer.finish(if result.is_ok() {
                ReconcileResult::Success
            } else {
                ReconcileResult::Error
            });
        }
        match result {
            Ok(outcome) => {
                queue.forget(&key);
                tracing::info!(worker = id, key = %key, identity = %identity, ?outcome, "Successfully synced");
            }
            Err(e) => {
                let requeues = queue.num_requeues(&key);
                tracing::warn!(worker = id, key = %key, identity = %identity, error = %e, requeues, "sync failed; requeued with backoff");
                queue.add_rate_limited(key.clone());
            }
        }
        queue.done(&key);
    }
}
