//! Assembles a [`Controller`] and adds it to a [`Manager`] (controller-runtime's
//! `pkg/builder`), read as a sentence:
//!
//! ```no_run
//! # use std::time::Duration;
//! # use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_controller_runtime::predicate::GenerationChanged;
//! use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
//!
//! # fn demo(mgr: &Manager) -> Result<(), kube_controller_runtime::BuilderError> {
//! Controller::builder(mgr)
//!     .for_with::<Deployment>(GenerationChanged)       // reconcile Deployments on spec changes
//!     .owns::<ReplicaSet>()                            // … and when a ReplicaSet they control changes
//!     .watches::<ConfigMap>(|cm: &ConfigMap| {         // … and when their config changes
//!         cm.metadata.labels.as_ref().and_then(|l| l.get("app")).map(|app| {
//!             Request::namespaced(cm.metadata.namespace.clone().unwrap_or_default(), app.clone())
//!         }).into_iter().collect()
//!     })
//!     .named("deployments")
//!     .max_concurrent_reconciles(4)
//!     .reconcile_timeout(Duration::from_secs(60))
//!     .complete(|req: Request, _ctx: Context| async move {
//!         println!("reconcile {req}");
//!         Ok::<_, kube::Error>(Action::done())
//!     })
//! # }
//! ```
//!
//! Mistakes are reported by [`complete`](Builder::complete)/[`build`](Builder::build) as a
//! [`BuilderError`], so the chain reads without `?` at every step.

use std::sync::Arc;
use std::time::Duration;

use kube::core::PartialObjectMeta;
use kube_codegen_runtime::informer::{InformerObject, is_namespaced};
use kube_codegen_runtime::workqueue::{
    DEFAULT_MAX_WAIT, PriorityQueue, QueueConfig, RateLimiter, default_controller_rate_limiter,
};

use crate::Manager;
use crate::controller::{Controller, ControllerOptions, Erased, KindSource, Source};
use crate::handler::{
    EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc, EventHandler,
};
use crate::manager::ManagerError;
use crate::object::Object;
use crate::predicate::{AnyKind, Everything, Predicate};
use crate::reconcile::{Reconciler, Request};

/// Why a controller could not be built. None is retryable: the builder chain must change.
#[derive(Debug, thiserror::Error)]
pub enum BuilderError {
    /// Neither `for_` nor `named` was called: the controller has no name.
    #[error("one of for_() or named() must be called")]
    NoName,
    /// `for_` was called twice.
    #[error("for_() may only be called once: already {0}, now {1}")]
    ForTwice(String, String),
    /// `owns` needs the owner kind `for_` sets.
    #[error("owns::<{0}>() needs for_() (the owner kind)")]
    OwnsWithoutFor(String),
    /// The controller watches nothing.
    #[error("controller {0} watches nothing: call for_(), owns() or watches()")]
    NoWatches(String),
    /// `max_concurrent_reconciles(0)`.
    #[error("controller {0}: max_concurrent_reconciles must be at least 1")]
    NoWorkers(String),
    /// The name is not a valid metric label / queue name.
    #[error("invalid controller name {0:?}: use lower-case letters, digits, '-', '_' and '.'")]
    InvalidName(String),
    /// Another controller of this manager has the same name (they would share metrics).
    #[error(
        "controller with name {0:?} already exists; controller names must be unique to avoid multiple controllers reporting the same metric"
    )]
    DuplicateName(String),
    /// `sharded(true)` on a manager without sharding.
    #[error(
        "controller {0}: sharded(true) needs a manager with sharding (ManagerBuilder::sharding)"
    )]
    NotSharded(String),
    /// The manager refused the controller.
    #[error(transparent)]
    Manager(#[from] ManagerError),
}

type MakeSource = Box<dyn FnOnce(&BuildContext<'_>) -> Box<dyn Source>>;

struct BuildContext<'a> {
    mgr: &'a Manager,
    filter: Option<Arc<dyn Predicate<dyn Object>>>,
    owner: Option<(String, String, bool)>,
}

/// `predicate` as a watch's own predicate: [`Everything`] is none (it filters nothing, and
/// only a watch with predicates of the user's counts the events they pass as changes that end
/// a backoff).
fn own_predicate<K: ?Sized, P: Predicate<K>>(predicate: P) -> Option<Arc<dyn Predicate<K>>> {
    (std::any::TypeId::of::<P>() != std::any::TypeId::of::<Everything>())
        .then(|| Arc::new(predicate) as Arc<dyn Predicate<K>>)
}

fn predicates<K: InformerObject>(
    ctx: &BuildContext<'_>,
    own: Option<Arc<dyn Predicate<K>>>,
) -> Vec<Arc<dyn Predicate<K>>> {
    let mut v: Vec<Arc<dyn Predicate<K>>> = Vec::new();
    if let Some(f) = &ctx.filter {
        v.push(Arc::new(AnyKind(f.clone())));
    }
    if let Some(p) = own {
        v.push(p);
    }
    v
}

fn kind_of<K: InformerObject>() -> String {
    let group = K::group(&());
    if group.is_empty() {
        format!("{}/{}", K::version(&()), K::kind(&()))
    } else {
        format!("{group}/{}/{}", K::version(&()), K::kind(&()))
    }
}

/// Builds a controller. See the [module docs](self).
#[must_use = "a builder does nothing until complete() or build()"]
pub struct Builder {
    mgr: Manager,
    for_kind: Option<(String, String, String, bool)>,
    errors: Vec<BuilderError>,
    sources: Vec<MakeSource>,
    owns: Vec<(String, MakeSource)>,
    filter: Option<Arc<dyn Predicate<dyn Object>>>,
    name: Option<String>,
    options: ControllerOptions,
    limiter: Option<Arc<dyn RateLimiter<Request>>>,
    max_wait: Option<Duration>,
    sharded: Option<bool>,
    list_keys: Option<MakeListKeys>,
}

type MakeListKeys = Box<dyn FnOnce(&Manager) -> crate::controller::ListKeys>;

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("for", &self.for_kind)
            .field("name", &self.name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Builder {
    pub(crate) fn new(mgr: &Manager) -> Self {
        Builder {
            mgr: mgr.clone(),
            for_kind: None,
            errors: Vec::new(),
            sources: Vec::new(),
            owns: Vec::new(),
            filter: None,
            name: None,
            options: ControllerOptions::default(),
            limiter: None,
            max_wait: Some(DEFAULT_MAX_WAIT),
            sharded: None,
            list_keys: None,
        }
    }

    /// Reconciles objects of kind `K`: every event of a `K` enqueues the object itself
    /// (controller-runtime's `For`). The default name is the lower-cased kind.
    pub fn for_<K: InformerObject>(self) -> Self {
        self.for_with::<K>(Everything)
    }

    /// [`for_`](Self::for_) with a predicate for `K`'s events.
    pub fn for_with<K: InformerObject>(mut self, predicate: impl Predicate<K>) -> Self {
        let kind = kind_of::<K>();
        if let Some((prev, ..)) = &self.for_kind {
            self.errors.push(BuilderError::ForTwice(prev.clone(), kind));
            return self;
        }
        self.for_kind = Some((
            kind,
            K::group(&()).into_owned(),
            K::kind(&()).into_owned(),
            is_namespaced::<K>(),
        ));
        self.list_keys = Some(Box::new(|mgr: &Manager| {
            let store = mgr.informer::<K>().store();
            Arc::new(move || {
                store
                    .list()
                    .iter()
                    .filter_map(|o| {
                        let meta = o.meta();
                        Some(Request {
                            namespace: meta.namespace.clone().filter(|n| !n.is_empty()),
                            name: meta.name.clone()?,
                        })
                    })
                    .collect()
            }) as crate::controller::ListKeys
        }));
        let p = own_predicate::<K, _>(predicate);
        self.sources.insert(
            0,
            Box::new(move |ctx: &BuildContext<'_>| {
                Box::new(KindSource::<K> {
                    informer: ctx.mgr.informer::<K>(),
                    handler: Arc::new(EnqueueRequestForObject),
                    predicates: predicates(ctx, p),
                }) as Box<dyn Source>
            }),
        );
        self
    }

    /// Also reconciles the `For` object that controls an `O` (its owner reference with
    /// `controller: true` names a `For` kind) when the `O` changes (controller-runtime's
    /// `Owns`).
    pub fn owns<O: InformerObject>(self) -> Self {
        self.owns_with::<O>(Everything)
    }

    /// [`owns`](Self::owns) with a predicate for `O`'s events.
    pub fn owns_with<O: InformerObject>(mut self, predicate: impl Predicate<O>) -> Self {
        let p = own_predicate::<O, _>(predicate);
        self.owns.push((
            kind_of::<O>(),
            Box::new(move |ctx: &BuildContext<'_>| {
                let (group, kind, namespaced) = ctx.owner.clone().unwrap_or_default();
                Box::new(KindSource::<O> {
                    informer: ctx.mgr.informer::<O>(),
                    handler: Arc::new(EnqueueRequestForOwner::with_owner(group, kind, namespaced)),
                    predicates: predicates(ctx, p),
                }) as Box<dyn Source>
            }),
        ));
        self
    }

    /// [`owns`](Self::owns) with a metadata-only informer (controller-runtime's
    /// `Owns(obj, builder.OnlyMetadata)`): `O`s are listed and watched as
    /// `PartialObjectMetadata`, and the cache holds their metadata only — enough to find the
    /// owner, at a fraction of the memory. The same as `owns::<PartialObjectMeta<O>>()`; read
    /// them with `mgr.lister::<PartialObjectMeta<O>>()`.
    pub fn owns_metadata<O>(self) -> Self
    where
        O: kube::Resource<DynamicType = ()> + Send + Sync + std::fmt::Debug + 'static,
        PartialObjectMeta<O>: InformerObject,
    {
        self.owns::<PartialObjectMeta<O>>()
    }

    /// [`watches`](Self::watches) with a metadata-only informer (controller-runtime's
    /// `Watches(obj, handler, builder.OnlyMetadata)`): `map` sees each `W`'s metadata.
    pub fn watches_metadata<W>(
        self,
        map: impl Fn(&PartialObjectMeta<W>) -> Vec<Request> + Send + Sync + 'static,
    ) -> Self
    where
        W: kube::Resource<DynamicType = ()> + Send + Sync + std::fmt::Debug + 'static,
        PartialObjectMeta<W>: InformerObject,
    {
        self.watches::<PartialObjectMeta<W>>(map)
    }

    /// Also reconciles whatever `map` maps a changed `W` to (controller-runtime's `Watches`
    /// with `EnqueueRequestsFromMapFunc`).
    pub fn watches<W: InformerObject>(
        self,
        map: impl Fn(&W) -> Vec<Request> + Send + Sync + 'static,
    ) -> Self {
        self.watches_with::<W>(map, Everything)
    }

    /// [`watches`](Self::watches) with a predicate for `W`'s events.
    pub fn watches_with<W: InformerObject>(
        self,
        map: impl Fn(&W) -> Vec<Request> + Send + Sync + 'static,
        predicate: impl Predicate<W>,
    ) -> Self {
        self.watches_handler::<W>(EnqueueRequestsFromMapFunc::new(map), predicate)
    }

    /// Watches `W` with any [`EventHandler`] (the four of the [`handler`](crate::handler)
    /// module or your own) and a predicate.
    pub fn watches_handler<W: InformerObject>(
        mut self,
        handler: impl EventHandler<W>,
        predicate: impl Predicate<W>,
    ) -> Self {
        let h: Arc<dyn EventHandler<W>> = Arc::new(handler);
        let p = own_predicate::<W, _>(predicate);
        self.sources.push(Box::new(move |ctx: &BuildContext<'_>| {
            Box::new(KindSource::<W> {
                informer: ctx.mgr.informer::<W>(),
                handler: h,
                predicates: predicates(ctx, p),
            }) as Box<dyn Source>
        }));
        self
    }

    /// A predicate every watch applies (controller-runtime's `WithEventFilter`); several calls
    /// must all pass.
    pub fn with_event_filter(mut self, predicate: impl Predicate) -> Self {
        let p: Arc<dyn Predicate<dyn Object>> = Arc::new(predicate);
        self.filter = Some(match self.filter.take() {
            None => p,
            Some(prev) => Arc::new(crate::predicate::And(ArcPredicate(prev), ArcPredicate(p))),
        });
        self
    }

    /// The controller's name: its metrics label, queue name and log field.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// How many reconciles may run at once (default 1). A key is never reconciled twice at
    /// once whatever the number.
    pub fn max_concurrent_reconciles(mut self, n: usize) -> Self {
        self.options.max_concurrent_reconciles = n;
        self
    }

    /// Stops a reconcile that runs longer than `timeout` (it counts as an error and is
    /// requeued with backoff).
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.options.reconcile_timeout = Some(timeout);
        self
    }

    /// The rate limiter of the work queue (default client-go's `DefaultControllerRateLimiter`:
    /// per-key 5 ms doubling to 1000 s, overall 10 qps / burst 100).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<Request> + 'static) -> Self {
        self.limiter = Some(Arc::new(limiter));
        self
    }

    /// How long a request may wait in the work queue before it goes ahead of every priority
    /// (default [`DEFAULT_MAX_WAIT`], 30 s); `None` is strict priority order, in which the
    /// initial list and resyncs may wait as long as higher-priority events keep coming
    /// (controller-runtime's behaviour). See
    /// [`PriorityQueue`].
    pub fn queue_max_wait(mut self, max_wait: Option<Duration>) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// How long the controller waits for its informers to sync when it starts (default 2 min).
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.options.cache_sync_timeout = timeout;
        self
    }

    /// Whether the controller runs only on the elected leader (default true).
    pub fn need_leader_election(mut self, on: bool) -> Self {
        self.options.need_leader_election = on;
        self
    }

    /// Whether the controller is sharded across the replicas of the manager's ring (default:
    /// yes when the manager has [`sharding`](crate::ManagerBuilder::sharding)). A sharded
    /// controller runs on every replica, each reconciling only its keys (see
    /// [`sharding`](crate::sharding)); `sharded(false)` keeps it on the leader.
    pub fn sharded(mut self, on: bool) -> Self {
        self.sharded = Some(on);
        self
    }

    /// Builds the controller and adds it to the manager (controller-runtime's `Complete`).
    pub fn complete<R: Reconciler>(self, reconciler: R) -> Result<(), BuilderError> {
        let mgr = self.mgr.clone();
        let controller = self.build(reconciler)?;
        mgr.add(controller)?;
        Ok(())
    }

    /// Builds the controller without adding it (controller-runtime's `Build`): run it with
    /// `mgr.add(controller)` or [`Runnable::start`](crate::Runnable::start).
    pub fn build<R: Reconciler>(mut self, reconciler: R) -> Result<Controller, BuilderError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        let name = match (&self.name, &self.for_kind) {
            (Some(n), _) => n.clone(),
            (None, Some((_, _, kind, _))) => kind.to_lowercase(),
            (None, None) => return Err(BuilderError::NoName),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
        {
            return Err(BuilderError::InvalidName(name));
        }
        if self.for_kind.is_none()
            && let Some((kind, _)) = self.owns.first()
        {
            return Err(BuilderError::OwnsWithoutFor(kind.clone()));
        }
        if self.sources.is_empty() && self.owns.is_empty() {
            return Err(BuilderError::NoWatches(name));
        }
        if self.options.max_concurrent_reconciles == 0 {
            return Err(BuilderError::NoWorkers(name));
        }
        self.mgr
            .claim_controller_name(&name)
            .then_some(())
            .ok_or_else(|| BuilderError::DuplicateName(name.clone()))?;
        let ctx = BuildContext {
            mgr: &self.mgr,
            filter: self.filter.clone(),
            owner: self
                .for_kind
                .as_ref()
                .map(|(_, g, k, ns)| (g.clone(), k.clone(), *ns)),
        };
        let mut sources: Vec<Box<dyn Source>> = Vec::new();
        for make in self.sources.drain(..) {
            sources.push(make(&ctx));
        }
        for (_, make) in self.owns.drain(..) {
            sources.push(make(&ctx));
        }
        let limiter = self
            .limiter
            .take()
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter()));
        let queue = PriorityQueue::builder()
            .shared_rate_limiter(limiter)
            .max_wait(self.max_wait)
            .config(
                QueueConfig::named(name.clone())
                    .metrics_provider(self.mgr.metrics().workqueue_provider()),
            )
            .build();
        let sharding = match (self.mgr.shard(), self.sharded) {
            (Some(shard), None | Some(true)) => {
                let (group, kind) = match &self.for_kind {
                    Some((_, g, k, _)) => (g.clone(), k.clone()),
                    None => (String::new(), name.clone()),
                };
                Some(crate::controller::Sharding {
                    shard: shard.clone(),
                    group: Arc::from(group.as_str()),
                    kind: Arc::from(kind.as_str()),
                    list_keys: self.list_keys.take().map(|make| make(&self.mgr)),
                })
            }
            (None, Some(true)) => return Err(BuilderError::NotSharded(name)),
            _ => None,
        };
        let mut options = self.options;
        if sharding.is_some() {
            options.need_leader_election = false;
        }
        Ok(Controller {
            metrics: self.mgr.metrics().reconcile_recorder(&name),
            name: Arc::from(name.as_str()),
            identity: Arc::from(self.mgr.identity()),
            queue,
            reconciler: Arc::new(Erased(reconciler)),
            sources,
            fence: if sharding.is_some() {
                None
            } else {
                self.mgr.elector().cloned()
            },
            sharding,
            options,
            factory: self.mgr.factory().clone(),
            read_your_writes: self.mgr.read_your_writes(),
            read_your_writes_timeouts: self.mgr.metrics().read_your_writes_timeouts(&name),
            read_your_writes_live_checks: self.mgr.metrics().read_your_writes_live_checks(&name),
            live_client: self.mgr.client(),
        })
    }
}

/// A shared predicate for any kind, itself a predicate for any kind.
struct ArcPredicate(Arc<dyn Predicate<dyn Object>>);

impl Predicate<dyn Object> for ArcPredicate {
    fn create(&self, obj: &dyn Object) -> bool {
        self.0.create(obj)
    }
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        self.0.update(old, new)
    }
    fn delete(&self, obj: &dyn Object) -> bool {
        self.0.delete(obj)
    }
    fn generic(&self, obj: &dyn Object) -> bool {
        self.0.generic(obj)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::predicate::GenerationChanged;

    #[test]
    fn everything_is_no_predicate_of_the_users_any_other_is() {
        assert!(own_predicate::<ConfigMap, _>(Everything).is_none());
        assert!(own_predicate::<ConfigMap, _>(GenerationChanged).is_some());
    }
}
