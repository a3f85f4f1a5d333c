//! The controller a [`Builder`](crate::Builder) assembles (controller-runtime's
//! `pkg/controller` and `pkg/internal/controller`): watches that feed a priority work queue
//! of [`Request`]s, and `max_concurrent_reconciles` workers that run the [`Reconciler`].
//!
//! The queue is a [`PriorityQueue`] (controller-runtime's, on by default there too): events
//! of the initial list and resyncs are queued at
//! [`LOW_PRIORITY`](kube_codegen_runtime::workqueue::LOW_PRIORITY), other events at 0, so a
//! restart does not hold real changes behind every unchanged object; a request that has waited
//! [`queue_max_wait`](crate::Builder::queue_max_wait) goes ahead of every priority, so none
//! starves. A requeue keeps the request's priority unless the [`Action`] sets another; a
//! request backing off after a failure waits out its backoff whatever events arrive.
//!
//! A controller is a [`Runnable`] that needs leader election (unless told
//! otherwise). When it starts it adds its event handlers to the manager's shared informers (a
//! handler added to a running informer first receives its cache as creates), waits for those
//! informers to sync (at most `cache_sync_timeout`), then starts its workers. When it is
//! stopped it stops taking work, lets every reconcile in hand finish, and removes its handlers.
//!
//! Each worker, per key:
//!
//! 1. with leader election, checks that this replica still holds the lease (else it stops);
//! 2. runs the reconcile with a [`Context`] (catching panics, bounded by `reconcile_timeout`);
//! 3. acts on the outcome as the [`reconcile`](crate::reconcile) module's table says, and
//!    counts it in the `controller_runtime_*` metrics.
//!
//! A key is never reconciled by two workers at once (the work queue's guarantee).

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::informer::{
    DeletedObject, EventHandler as InformerEventHandler, HandlerRegistration, InformerError,
    InformerObject, SharedIndexInformer,
};
use kube_codegen_runtime::workqueue::{AddOptions, PriorityQueue};
use tokio_util::sync::CancellationToken;

use crate::handler::{EventHandler, Queue};
use crate::leaderelection::LeaderElector;
use crate::metrics::LiveChecks;
use crate::metrics::{ReconcileRecorder, ReconcileResult};
use crate::predicate::Predicate;
use crate::read_your_writes::{ResourceId, Scope, WriteLog, Writes};
use crate::reconcile::{Action, Context, Reconciler, Request};
use crate::sharding::Shard;
use crate::{BoxError, Runnable};

/// Why a controller stopped with an error.
///
/// [`CacheSyncTimeout`](Self::CacheSyncTimeout) may pass on a later start (the API server was
/// slow, a CRD was not installed yet); [`Handler`](Self::Handler) means the informers were shut
/// down under the controller and is not retryable.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The informers did not sync within the cache sync timeout.
    #[error(
        "controller {controller}: timed out after {timeout:?} waiting for caches to sync: {informers}"
    )]
    CacheSyncTimeout {
        /// The controller.
        controller: String,
        /// The timeout.
        timeout: Duration,
        /// The informers still not synced.
        informers: String,
    },
    /// An informer refused the event handler, or stopped before it synced.
    #[error("controller {controller}: {source}")]
    Handler {
        /// The controller.
        controller: String,
        /// Why.
        #[source]
        source: InformerError,
    },
}

/// A type-erased reconciler.
pub(crate) trait ErasedReconciler: Send + Sync {
    fn reconcile(&self, req: Request, ctx: Context) -> BoxFuture<'_, Result<Action, BoxError>>;
}

pub(crate) struct Erased<R>(pub(crate) R);

impl<R: Reconciler> ErasedReconciler for Erased<R> {
    fn reconcile(&self, req: Request, ctx: Context) -> BoxFuture<'_, Result<Action, BoxError>> {
        Box::pin(async move {
            self.0
                .reconcile(req, ctx)
                .await
                .map_err(|e| Box::new(e) as BoxError)
        })
    }
}

/// A watched kind: an informer, the handler that maps its events to requests, and the
/// predicates that filter them.
pub(crate) trait Source: Send + Sync {
    /// Adds the event handler; returns what removes it.
    fn start(&self, queue: &Queue) -> Result<Box<dyn FnOnce() + Send>, InformerError>;
    fn wait_for_sync(&self) -> BoxFuture<'static, Result<(), InformerError>>;
    fn has_synced(&self) -> bool;
    fn describe(&self) -> String;
    /// The resource the informer serves, what waits until its store holds some writes, and
    /// what its store holds.
    fn cache_view(&self) -> CacheView;
}

/// Waits until an informer's store holds the given writes.
pub(crate) type Waiter = Arc<dyn Fn(Writes) -> BoxFuture<'static, ()> + Send + Sync>;

/// The version of the object an informer's store holds under a key, if any.
pub(crate) type Held = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What read-your-own-writes sees of one informer.
pub(crate) struct CacheView {
    resource: ResourceId,
    wait: Waiter,
    held: Held,
}

/// Waits until `informer`'s store holds `writes`: it has reached their version, and holds none
/// of the deleted objects at (or before) the version they were deleted at.
async fn wait_for_writes<K: InformerObject>(informer: SharedIndexInformer<K>, writes: Writes) {
    use kube_codegen_runtime::resource_version::compare;
    if let Some(rv) = &writes.version
        && let Err(e) = informer.wait_for_store_resource_version(rv).await
    {
        tracing::debug!(informer = %informer.name(), error = %e, "cannot wait for a write");
        return;
    }
    for (key, version) in &writes.deleted {
        loop {
            let held = informer
                .store()
                .get_by_key(key)
                .and_then(|o| o.meta().resource_version.clone());
            let gone = held.is_none_or(|h| compare(&h, version).is_ok_and(|o| o.is_gt()));
            if gone {
                break;
            }
            // Wait for the store to move past where it is.
            let now = informer.last_sync_resource_version();
            let Some(next) = now.parse::<u64>().ok().and_then(|n| n.checked_add(1)) else {
                return;
            };
            if informer
                .wait_for_store_resource_version(&next.to_string())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

pub(crate) struct KindSource<K: InformerObject> {
    pub(crate) informer: SharedIndexInformer<K>,
    pub(crate) handler: Arc<dyn EventHandler<K>>,
    pub(crate) predicates: Vec<Arc<dyn Predicate<K>>>,
}

/// Feeds one watch's events through its predicates to its handler, with the queue seen at the
/// event's priority: low for the initial list (and the cache replayed to a new handler) and for
/// resyncs (an update that leaves the resourceVersion as it was), normal otherwise
/// (controller-runtime's `WithLowPriorityWhenUnchanged`). When the watch has predicates of the
/// user's, the other events they pass are changes that count: they end a backoff (`changed`).
struct Adapter<K> {
    handler: Arc<dyn EventHandler<K>>,
    predicates: Vec<Arc<dyn Predicate<K>>>,
    queue: Queue,
    low: Queue,
    changed: Option<Queue>,
}

impl<K> Adapter<K> {
    fn new(
        handler: Arc<dyn EventHandler<K>>,
        predicates: Vec<Arc<dyn Predicate<K>>>,
        queue: &Queue,
    ) -> Self {
        let changed = (!predicates.is_empty()).then(|| queue.resetting_backoff());
        Adapter {
            handler,
            predicates,
            queue: queue.clone(),
            low: queue.low_priority(),
            changed,
        }
    }

    /// The queue of an event that is not a listing or a resync.
    fn normal(&self) -> &Queue {
        self.changed.as_ref().unwrap_or(&self.queue)
    }
}

impl<K: InformerObject> InformerEventHandler<K> for Adapter<K> {
    fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) {
        if self.predicates.iter().all(|p| p.create(&obj)) {
            let q = if is_in_initial_list {
                &self.low
            } else {
                self.normal()
            };
            self.handler.create(&obj, q);
        }
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        if self.predicates.iter().all(|p| p.update(&old, &new)) {
            let unchanged = old.meta().resource_version.is_some()
                && old.meta().resource_version == new.meta().resource_version;
            let q = if unchanged { &self.low } else { self.normal() };
            self.handler.update(&old, &new, q);
        }
    }

    fn on_delete(&self, obj: DeletedObject<K>) {
        let Some(o) = obj.object() else {
            tracing::debug!(key = ?obj.key(), "delete without a last known state; ignored");
            return;
        };
        if self.predicates.iter().all(|p| p.delete(o)) {
            self.handler.delete(o, obj.is_tombstone(), self.normal());
        }
    }
}

impl<K: InformerObject> Source for KindSource<K> {
    fn start(&self, queue: &Queue) -> Result<Box<dyn FnOnce() + Send>, InformerError> {
        let reg: HandlerRegistration = self.informer.add_event_handler(Adapter::new(
            self.handler.clone(),
            self.predicates.clone(),
            queue,
        ))?;
        let informer = self.informer.clone();
        Ok(Box::new(move || {
            informer.remove_event_handler(&reg);
        }))
    }

    fn wait_for_sync(&self) -> BoxFuture<'static, Result<(), InformerError>> {
        let informer = self.informer.clone();
        Box::pin(async move { informer.wait_for_sync().await })
    }

    fn has_synced(&self) -> bool {
        self.informer.has_synced()
    }

    fn describe(&self) -> String {
        self.informer.name().to_string()
    }

    fn cache_view(&self) -> CacheView {
        let informer = self.informer.clone();
        let store = self.informer.store();
        CacheView {
            resource: ResourceId {
                group: K::group(&()).into_owned(),
                plural: K::plural(&()).into_owned(),
            },
            wait: Arc::new(move |writes: Writes| {
                Box::pin(wait_for_writes(informer.clone(), writes)) as BoxFuture<'static, ()>
            }),
            held: Arc::new(move |key: &str| {
                store
                    .get_by_key(key)
                    .and_then(|o| o.meta().resource_version.clone())
            }),
        }
    }
}

/// The settings of a controller (controller-runtime's `controller.Options`).
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Workers reconciling concurrently (default 1).
    pub max_concurrent_reconciles: usize,
    /// A reconcile running longer is stopped and counted as an error (default: none).
    pub reconcile_timeout: Option<Duration>,
    /// How long to wait for the informers to sync when starting (default 2 min).
    pub cache_sync_timeout: Duration,
    /// Whether the controller runs only on the leader (default true).
    pub need_leader_election: bool,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            max_concurrent_reconciles: 1,
            reconcile_timeout: None,
            cache_sync_timeout: Duration::from_secs(120),
            need_leader_election: true,
        }
    }
}

/// A controller: watches, a work queue and workers. Made by a [`Builder`](crate::Builder);
/// run by the manager (or by [`Runnable::start`] yourself). See the [module docs](self).
pub struct Controller {
    pub(crate) name: Arc<str>,
    pub(crate) identity: Arc<str>,
    pub(crate) queue: PriorityQueue<Request>,
    pub(crate) reconciler: Arc<dyn ErasedReconciler>,
    pub(crate) sources: Vec<Box<dyn Source>>,
    pub(crate) options: ControllerOptions,
    pub(crate) metrics: ReconcileRecorder,
    pub(crate) fence: Option<LeaderElector>,
    pub(crate) factory: SharedInformerFactory,
    pub(crate) read_your_writes: Option<(WriteLog, Duration)>,
    pub(crate) read_your_writes_timeouts: prometheus_client::metrics::counter::Counter,
    pub(crate) read_your_writes_live_checks: LiveChecks,
    /// The Manager's client, for read-your-own-writes' live reads.
    pub(crate) live_client: kube::Client,
    pub(crate) sharding: Option<Sharding>,
}

/// Lists the requests of every `for_` object in the cache.
pub(crate) type ListKeys = Arc<dyn Fn() -> Vec<Request> + Send + Sync>;

/// A sharded controller's part of its replica's [`Shard`]: how its requests are keyed and
/// where its `for_` objects are listed from (to queue the keys it takes over).
#[derive(Clone)]
pub(crate) struct Sharding {
    pub(crate) shard: Shard,
    /// The `for_` kind's group and kind (or `""` and the controller's name without `for_`).
    pub(crate) group: Arc<str>,
    pub(crate) kind: Arc<str>,
    pub(crate) list_keys: Option<ListKeys>,
}

impl Sharding {
    pub(crate) fn key(&self, req: &Request) -> String {
        crate::sharding::key(&self.group, &self.kind, req.namespace.as_deref(), &req.name)
    }

    /// Queues every cached key this replica is now admitted to and was not at the last look;
    /// sets `shard_owned_keys`. Returns the admitted set.
    fn rescan(
        &self,
        queue: &PriorityQueue<Request>,
        before: &std::collections::HashSet<Request>,
        owned: &prometheus_client::metrics::gauge::Gauge,
    ) -> std::collections::HashSet<Request> {
        let Some(list) = &self.list_keys else {
            return std::collections::HashSet::new();
        };
        let mut admitted = std::collections::HashSet::new();
        let mut owns = 0i64;
        for req in list() {
            let key = self.key(&req);
            if self.shard.owns(&key) {
                owns += 1;
            }
            if self.shard.admits(&key) {
                if !before.contains(&req) {
                    queue.add(req.clone());
                }
                admitted.insert(req);
            }
        }
        owned.set(owns);
        admitted
    }
}

impl fmt::Debug for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field(
                "watches",
                &self
                    .sources
                    .iter()
                    .map(|s| s.describe())
                    .collect::<Vec<_>>(),
            )
            .field("options", &self.options)
            .finish()
    }
}

impl Controller {
    /// A builder for a controller run by `mgr` (controller-runtime's
    /// `ctrl.NewControllerManagedBy(mgr)`).
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
    /// # fn demo(mgr: &Manager) -> Result<(), kube_controller_runtime::BuilderError> {
    /// Controller::builder(mgr)
    ///     .for_::<ConfigMap>()
    ///     .complete(|_req: Request, _ctx: Context| async { Ok::<_, kube::Error>(Action::done()) })
    /// # }
    /// ```
    pub fn builder(mgr: &crate::Manager) -> crate::Builder {
        crate::Builder::new(mgr)
    }

    /// The controller's name (its metrics label and queue name).
    ///
    /// ```no_run
    /// # fn demo(c: kube_controller_runtime::Controller) { println!("{}", c.name()); }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The work queue, for tests and for enqueueing requests from outside the cluster
    /// (controller-runtime's generic events, the channel source).
    ///
    /// ```no_run
    /// # fn demo(c: kube_controller_runtime::Controller) {
    /// c.queue().add(kube_controller_runtime::Request::namespaced("default", "demo"));
    /// # }
    /// ```
    pub fn queue(&self) -> &PriorityQueue<Request> {
        &self.queue
    }

    /// Runs until `shutdown`: see the [module docs](self).
    async fn run(self, shutdown: CancellationToken) -> Result<(), ControllerError> {
        let name = self.name.to_string();
        tracing::info!(controller = %name, "Starting EventSource");
        // Handlers come off again however this future ends (dropped on a lost election too).
        let mut guard = Cleanup {
            removers: Vec::new(),
            queue: self.queue.clone(),
        };
        let mut events = Queue::new(self.queue.clone());
        if let Some(sh) = &self.sharding {
            let sh = sh.clone();
            events = events.admitting(Arc::new(move |req: &Request| sh.shard.owns(&sh.key(req))));
        }
        for s in &self.sources {
            let remove = s
                .start(&events)
                .map_err(|source| ControllerError::Handler {
                    controller: name.clone(),
                    source,
                })?;
            guard.removers.push(remove);
        }
        self.factory.start();
        tracing::info!(controller = %name, "Waiting for caches to sync");
        let waits = futures::future::try_join_all(self.sources.iter().map(|s| s.wait_for_sync()));
        tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            r = tokio::time::timeout(self.options.cache_sync_timeout, waits) => match r {
                Ok(Ok(_)) => {}
                Ok(Err(source)) => return Err(ControllerError::Handler { controller: name, source }),
                Err(_) => {
                    let informers = self.sources.iter().filter(|s| !s.has_synced()).map(|s| s.describe()).collect::<Vec<_>>().join(", ");
                    return Err(ControllerError::CacheSyncTimeout { controller: name, timeout: self.options.cache_sync_timeout, informers });
                }
            }
        }
        // Sharded: queue the keys this replica takes over whenever its membership changes.
        let _rescan = self.sharding.clone().map(|sh| {
            let queue = self.queue.clone();
            let owned = sh.shard.owned_keys_gauge(&name);
            let mut changes = sh.shard.subscribe();
            let stop = shutdown.clone();
            AbortOnDrop(tokio::spawn(async move {
                let mut admitted = std::collections::HashSet::new();
                loop {
                    changes.borrow_and_update();
                    admitted = sh.rescan(&queue, &admitted, &owned);
                    tokio::select! {
                        () = stop.cancelled() => return,
                        r = changes.changed() => if r.is_err() { return },
                    }
                }
            }))
        });
        let workers = self.options.max_concurrent_reconciles.max(1);
        self.metrics.set_max_concurrent_reconciles(workers);
        tracing::info!(controller = %name, worker_count = workers, "Starting workers");
        let hard_stop = CancellationToken::new();
        let mut tasks = tokio::task::JoinSet::new();
        let shared = Arc::new(Worker {
            name: self.name.clone(),
            identity: self.identity.clone(),
            queue: self.queue.clone(),
            reconciler: self.reconciler.clone(),
            timeout: self.options.reconcile_timeout,
            metrics: self.metrics.clone(),
            fence: self.fence.clone(),
            sharding: self.sharding.clone(),
            hard_stop: hard_stop.clone(),
            own_writes: self.read_your_writes.clone().map(|(log, bound)| OwnWrites {
                log,
                bound,
                views: self.sources.iter().map(|s| s.cache_view()).collect(),
                timeouts: self.read_your_writes_timeouts.clone(),
                live_checks: self.read_your_writes_live_checks.clone(),
                client: self.live_client.clone(),
            }),
        });
        for _ in 0..workers {
            let w = shared.clone();
            tasks.spawn(async move { w.run().await });
        }
        // A worker that finds the lease gone stops early; the manager stops the rest.
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = async { while tasks.join_next().await.is_some() {} } => {}
        }
        tracing::info!(controller = %name, "Shutdown signal received, waiting for all workers to finish");
        self.queue.shut_down_with_drain().await;
        while let Some(r) = tasks.join_next().await {
            if let Err(e) = r {
                tracing::error!(controller = %name, error = %e, "worker task failed");
            }
        }
        hard_stop.cancel();
        tracing::info!(controller = %name, "All workers finished");
        Ok(())
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Removes the event handlers and shuts the queue down when the controller's future ends or
/// is dropped.
struct Cleanup {
    removers: Vec<Box<dyn FnOnce() + Send>>,
    queue: PriorityQueue<Request>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for r in self.removers.drain(..) {
            r();
        }
        self.queue.shut_down();
    }
}

impl Runnable for Controller {
    async fn start(self, shutdown: CancellationToken) -> Result<(), BoxError> {
        self.run(shutdown)
            .await
            .map_err(|e| Box::new(e) as BoxError)
    }

    fn needs_leader_election(&self) -> bool {
        self.options.need_leader_election
    }

    fn name(&self) -> String {
        format!("controller {}", self.name)
    }
}

struct Worker {
    name: Arc<str>,
    identity: Arc<str>,
    queue: PriorityQueue<Request>,
    reconciler: Arc<dyn ErasedReconciler>,
    timeout: Option<Duration>,
    metrics: ReconcileRecorder,
    fence: Option<LeaderElector>,
    sharding: Option<Sharding>,
    hard_stop: CancellationToken,
    own_writes: Option<OwnWrites>,
}

/// Read-your-own-writes of one controller: the manager's write log, the bound, and a waiter
/// per watched informer.
struct OwnWrites {
    log: WriteLog,
    bound: Duration,
    views: Vec<CacheView>,
    timeouts: prometheus_client::metrics::counter::Counter,
    live_checks: LiveChecks,
    client: kube::Client,
}

impl OwnWrites {
    /// Waits (at most the bound) until the informers hold what `req`'s reconciles wrote; past
    /// the bound, a live read of each written object decides. False when the cache is still
    /// stale and the request must wait for another bound (its writes are kept for it).
    async fn wait(&self, controller: &Arc<str>, req: &Request) -> bool {
        let writes = self.log.take(controller, req);
        if writes.is_empty() {
            return true;
        }
        let waits: Vec<_> = self
            .views
            .iter()
            .filter_map(|v| writes.get(&v.resource).map(|w| (v.wait)(w.clone())))
            .collect();
        if waits.is_empty() {
            return true;
        }
        if tokio::time::timeout(self.bound, futures::future::join_all(waits))
            .await
            .is_ok()
        {
            return true;
        }
        self.timeouts.inc();
        match self.live_check(&writes).await {
            Ok(true) => {
                self.live_checks.current.inc();
                tracing::info!(controller = %controller, request = %req, bound = ?self.bound,
                    "the informer has not reached this request's own writes, but a live read finds the cached copies current; reconciling");
                true
            }
            Ok(false) => {
                self.live_checks.stale.inc();
                tracing::warn!(controller = %controller, request = %req, bound = ?self.bound,
                    "the cache still holds an object older than this request's own write; waiting another bound before reconciling");
                self.log.restore(controller, req, writes);
                false
            }
            Err(e) => {
                self.live_checks.failed.inc();
                tracing::warn!(controller = %controller, request = %req, bound = ?self.bound, error = %e,
                    "the cache has not caught up with this request's own writes and the live read failed; reconciling anyway");
                true
            }
        }
    }

    /// Whether the cache's copy of every object in `writes` is current (see
    /// [`read_your_writes`](crate::read_your_writes)).
    async fn live_check(
        &self,
        writes: &std::collections::HashMap<ResourceId, Writes>,
    ) -> Result<bool, kube::Error> {
        for view in &self.views {
            let Some(w) = writes.get(&view.resource) else {
                continue;
            };
            for object in &w.objects {
                let held = (view.held)(&object.key);
                if !crate::read_your_writes::is_current(&self.client, object, held.as_deref())
                    .await?
                {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

enum Outcome {
    Ok(Action),
    Err(BoxError),
    Panic(String),
    Timeout(Duration),
}

fn panic_message(p: &Box<dyn Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

impl Worker {
    async fn run(&self) {
        while let Some((req, priority)) = self.queue.get_with_priority().await {
            if let Some(f) = &self.fence
                && !f.is_leader()
            {
                // The lease is gone (or its deadline passed): no reconcile may start.
                tracing::warn!(controller = %self.name, request = %req, "not the leader any more; not reconciling");
                self.queue.done(&req);
                return;
            }
            if let Some(sh) = &self.sharding {
                let key = sh.key(&req);
                let Some(running) = sh.shard.begin(&key) else {
                    // Not this replica's key now: its owner queues it (or this replica again,
                    // once admitted).
                    tracing::debug!(controller = %self.name, request = %req, shard = %sh.shard.name(), "not admitted by the shard; dropped");
                    self.queue.forget(&req);
                    self.queue.done(&req);
                    continue;
                };
                tracing::info!(controller = %self.name, request = %req, key = %key, shard = %sh.shard.name(), "shard reconcile start");
                let finished = tokio::select! {
                    () = self.reconcile_one(req.clone(), priority) => true,
                    () = sh.shard.fenced() => false,
                };
                if finished {
                    tracing::info!(controller = %self.name, request = %req, key = %key, shard = %sh.shard.name(), "shard reconcile end");
                } else {
                    tracing::error!(controller = %self.name, request = %req, key = %key, shard = %sh.shard.name(), "shard lease lost: reconcile aborted");
                    self.queue.done(&req);
                }
                drop(running);
                continue;
            }
            self.reconcile_one(req, priority).await;
        }
    }

    /// An error, panic or timeout: logged, requeued at its priority with the key's backoff.
    fn failed(&self, req: &Request, priority: i32, retries: u32, error: String) {
        tracing::error!(controller = %self.name, request = %req, retries, %error, "Reconciler error");
        self.queue.add_with(
            req.clone(),
            AddOptions::with_priority(priority).rate_limited(),
        );
    }

    async fn reconcile_one(&self, req: Request, priority: i32) {
        if let Some(own) = &self.own_writes
            && !own.wait(&self.name, &req).await
        {
            // Still stale past the bound: not reconciled from the old copy; back in a bound.
            self.queue.add_with(
                req.clone(),
                AddOptions::with_priority(priority).after(own.bound),
            );
            self.queue.done(&req);
            return;
        }
        let retries = self.queue.num_requeues(&req);
        let token = self.hard_stop.child_token();
        let ctx = Context::new(self.name.clone(), self.identity.clone(), retries)
            .with_token(token.clone());
        tracing::debug!(controller = %self.name, request = %req, identity = %self.identity, retries, "Reconciling");
        let timer = self.metrics.start();
        let reconcile = self.reconciler.reconcile(req.clone(), ctx);
        let reconcile: BoxFuture<'_, Result<Action, BoxError>> = match &self.own_writes {
            Some(own) => Box::pin(crate::read_your_writes::scoped(
                Scope {
                    controller: self.name.clone(),
                    request: req.clone(),
                    log: own.log.clone(),
                },
                reconcile,
            )),
            None => reconcile,
        };
        let fut = AssertUnwindSafe(reconcile).catch_unwind();
        let outcome = match self.timeout {
            Some(d) => match tokio::time::timeout(d, fut).await {
                Ok(r) => r.map_or_else(
                    |p| Outcome::Panic(panic_message(&p)),
                    |r| r.map_or_else(Outcome::Err, Outcome::Ok),
                ),
                Err(_) => Outcome::Timeout(d),
            },
            None => fut.await.map_or_else(
                |p| Outcome::Panic(panic_message(&p)),
                |r| r.map_or_else(Outcome::Err, Outcome::Ok),
            ),
        };
        token.cancel();
        match outcome {
            Outcome::Ok(action) => {
                let again = AddOptions::with_priority(action.priority().unwrap_or(priority));
                if let Some(d) = action.requeue_after_duration() {
                    self.queue.forget(&req);
                    self.queue.add_with(req.clone(), again.after(d));
                    timer.finish(ReconcileResult::RequeueAfter);
                } else if action.is_requeue() {
                    self.queue.add_with(req.clone(), again.rate_limited());
                    timer.finish(ReconcileResult::Requeue);
                } else {
                    self.queue.forget(&req);
                    timer.finish(ReconcileResult::Success);
                }
                tracing::debug!(controller = %self.name, request = %req, ?action, "Reconcile successful");
            }
            Outcome::Err(e) => {
                timer.finish(ReconcileResult::Error);
                self.failed(&req, priority, retries, e.to_string());
            }
            Outcome::Panic(msg) => {
                timer.finish(ReconcileResult::Panic);
                self.failed(&req, priority, retries, format!("panic: {msg} [recovered]"));
            }
            Outcome::Timeout(d) => {
                timer.finish(ReconcileResult::Timeout);
                self.failed(
                    &req,
                    priority,
                    retries,
                    format!("reconcile timed out after {d:?}"),
                );
            }
        }
        self.queue.done(&req);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube_codegen_runtime::workqueue::{LOW_PRIORITY, NORMAL_PRIORITY};

    use super::*;
    use crate::handler::EnqueueRequestForObject;

    fn cm(name: &str, rv: &str) -> Arc<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.name = Some(name.into());
        cm.metadata.resource_version = Some(rv.into());
        Arc::new(cm)
    }

    /// Passes every event, but is the user's own predicate.
    struct Passes;
    impl Predicate<ConfigMap> for Passes {}

    /// A queue in which "ns/a" backs off for an hour after one failure, and an adapter feeding
    /// it, with a predicate of the user's (`own`) or none.
    fn backing_off(own: bool) -> (Queue, Adapter<ConfigMap>, crate::Request) {
        use kube_codegen_runtime::workqueue::ItemExponentialFailureRateLimiter;
        let hour = std::time::Duration::from_secs(3600);
        let queue = Queue::new(
            PriorityQueue::builder()
                .rate_limiter(ItemExponentialFailureRateLimiter::new(hour, hour))
                .build(),
        );
        let predicates: Vec<Arc<dyn Predicate<ConfigMap>>> = if own {
            vec![Arc::new(Passes)]
        } else {
            Vec::new()
        };
        let adapter =
            Adapter::<ConfigMap>::new(Arc::new(EnqueueRequestForObject), predicates, &queue);
        let req = crate::Request::namespaced("ns", "a");
        queue.add_rate_limited(req.clone());
        (queue, adapter, req)
    }

    /// (ready, waiting, failures counted) of `req`'s queue.
    fn backoff_state(queue: &Queue, req: &crate::Request) -> (usize, usize, u32) {
        (queue.len(), queue.waiting(), queue.num_requeues(req))
    }

    #[test]
    fn events_a_watchs_own_predicates_pass_end_a_backoff_other_events_do_not() {
        for own in [false, true] {
            let (queue, adapter, req) = backing_off(own);
            // A listing and a resync never end it.
            adapter.on_add(cm("a", "1"), true);
            adapter.on_update(cm("a", "1"), cm("a", "1"));
            assert_eq!(backoff_state(&queue, &req), (0, 1, 1));
            adapter.on_update(cm("a", "1"), cm("a", "2"));
            let want = if own { (1, 0, 0) } else { (0, 1, 1) };
            assert_eq!(backoff_state(&queue, &req), want, "own predicates: {own}");
        }
    }

    /// A create (not from the initial list) and a delete are events too: with the watch's own
    /// predicates passing them they end a backoff, without they do not.
    #[test]
    fn creates_and_deletes_the_predicates_pass_end_a_backoff_too() {
        use kube_codegen_runtime::informer::DeletedObject;
        type Event = fn(&Adapter<ConfigMap>);
        let events: [(&str, Event); 3] = [
            ("create", |a| a.on_add(cm("a", "2"), false)),
            ("delete", |a| a.on_delete(DeletedObject::Obj(cm("a", "2")))),
            ("tombstone", |a| {
                a.on_delete(DeletedObject::Tombstone {
                    key: "ns/a".into(),
                    last_known: Some(cm("a", "1")),
                })
            }),
        ];
        for (what, event) in events {
            for own in [false, true] {
                let (queue, adapter, req) = backing_off(own);
                event(&adapter);
                let want = if own { (1, 0, 0) } else { (0, 1, 1) };
                assert_eq!(
                    backoff_state(&queue, &req),
                    want,
                    "{what}, own predicates: {own}"
                );
            }
        }
    }

    #[test]
    fn initial_list_and_resyncs_are_low_priority_other_events_normal() {
        let queue = Queue::new(PriorityQueue::new());
        let adapter =
            Adapter::<ConfigMap>::new(Arc::new(EnqueueRequestForObject), Vec::new(), &queue);
        adapter.on_add(cm("listed", "1"), true);
        adapter.on_add(cm("created", "2"), false);
        adapter.on_update(cm("resynced", "3"), cm("resynced", "3"));
        adapter.on_update(cm("changed", "4"), cm("changed", "5"));
        let got: Vec<(String, i32)> = std::iter::from_fn(|| queue.try_get_with_priority())
            .map(|(r, p)| (r.name, p))
            .collect();
        assert_eq!(
            got,
            [
                ("created".to_string(), NORMAL_PRIORITY),
                ("changed".to_string(), NORMAL_PRIORITY),
                ("listed".to_string(), LOW_PRIORITY),
                ("resynced".to_string(), LOW_PRIORITY),
            ]
        );
        // A change to an object still queued from the list raises it.
        adapter.on_add(cm("again", "6"), true);
        adapter.on_update(cm("again", "6"), cm("again", "7"));
        assert_eq!(
            queue.try_get_with_priority(),
            Some((Request::namespaced("ns", "again"), NORMAL_PRIORITY))
        );
    }

    fn worker(queue: &PriorityQueue<Request>, action: Option<Action>) -> Worker {
        let reconcile = move |_req: Request, _ctx: Context| async move {
            action.ok_or_else(|| std::io::Error::other("failed"))
        };
        Worker {
            name: Arc::from("test"),
            identity: Arc::from("me"),
            queue: queue.clone(),
            reconciler: Arc::new(Erased(reconcile)),
            timeout: None,
            metrics: crate::Metrics::new().reconcile_recorder("test"),
            fence: None,
            sharding: None,
            hard_stop: CancellationToken::new(),
            own_writes: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_requeue_keeps_the_requests_priority_unless_the_action_sets_one() {
        let q = PriorityQueue::<Request>::new();
        let req = Request::namespaced("ns", "a");
        for (action, want) in [
            (
                Some(Action::requeue_after(Duration::from_secs(1))),
                LOW_PRIORITY,
            ),
            (Some(Action::requeue()), LOW_PRIORITY),
            (None, LOW_PRIORITY),
            (
                Some(Action::requeue_after(Duration::from_secs(1)).with_priority(7)),
                7,
            ),
            (Some(Action::requeue().with_priority(-3)), -3),
        ] {
            q.add_with_priority(req.clone(), LOW_PRIORITY);
            let (got, priority) = q
                .get_with_priority()
                .await
                .unwrap_or_else(|| panic!("shut down"));
            worker(&q, action).reconcile_one(got, priority).await;
            let again = q.get_with_priority().await;
            assert_eq!(again, Some((req.clone(), want)), "{action:?}");
            q.forget(&req);
            q.done(&req);
        }
    }
}
