//! Event handlers (controller-runtime's `pkg/handler`): turn an informer event into zero or more
//! [`Request`]s on the controller's work queue.
//!
//! * [`EnqueueRequestForObject`] — the object itself (what `for_` uses);
//! * [`EnqueueRequestsFromMapFunc`] — whatever a function maps the object to (what `watches`
//!   uses): a Secret to the objects that mount it, an EndpointSlice to its Service …;
//! * [`EnqueueRequestForOwner`] — the object's owner of a given kind, only the controlling one
//!   or any (what `owns` uses);
//! * [`Funcs`] — closures per event type.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_codegen_runtime::workqueue::PriorityQueue;
//! use kube_controller_runtime::handler::{EnqueueRequestForObject, EventHandler, Queue};
//! use kube_controller_runtime::Request;
//!
//! let q = Queue::new(PriorityQueue::new());
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("a".into());
//! cm.metadata.namespace = Some("ns".into());
//! EnqueueRequestForObject.create(&cm, &q);
//! assert_eq!(q.try_get(), Some(Request::namespaced("ns", "a")));
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use kube::Resource;
use kube_codegen_runtime::informer::is_namespaced;
use kube_codegen_runtime::workqueue::{AddOptions, LOW_PRIORITY, NORMAL_PRIORITY, PriorityQueue};

use crate::object::Object;
use crate::reconcile::Request;

/// The queue handlers add to: the controller's [`PriorityQueue`], seen with the priority of the
/// event being handled. [`Queue::add`] queues at that priority: [`LOW_PRIORITY`] for the
/// initial list (and a handler's replay of the cache) and for resyncs, [`NORMAL_PRIORITY`] for
/// every other event (controller-runtime's `WithLowPriorityWhenUnchanged`). Every
/// [`PriorityQueue`] method is available through `Deref`.
///
/// ```
/// use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue};
/// use kube_controller_runtime::handler::Queue;
/// use kube_controller_runtime::Request;
///
/// let q = Queue::new(PriorityQueue::new());
/// q.low_priority().add(Request::namespaced("ns", "listed"));
/// q.add(Request::namespaced("ns", "changed"));
/// assert_eq!(q.try_get(), Some(Request::namespaced("ns", "changed")));
/// assert_eq!(q.try_get_with_priority(), Some((Request::namespaced("ns", "listed"), LOW_PRIORITY)));
/// ```
#[derive(Clone)]
pub struct Queue {
    queue: PriorityQueue<Request>,
    priority: i32,
    /// The events queued here are changes that count (a watch's own predicates passed them):
    /// they end a request's backoff ([`AddOptions::reset_backoff`]).
    reset_backoff: bool,
    /// With sharding: which requests this replica's queue takes in.
    admit: Option<Admit>,
}

type Admit = std::sync::Arc<dyn Fn(&Request) -> bool + Send + Sync>;

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("queue", &self.queue)
            .field("priority", &self.priority)
            .field("reset_backoff", &self.reset_backoff)
            .field("sharded", &self.admit.is_some())
            .finish()
    }
}

impl Queue {
    /// `queue` seen at [`NORMAL_PRIORITY`].
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// let q = kube_controller_runtime::handler::Queue::new(PriorityQueue::new());
    /// assert_eq!(q.priority(), 0);
    /// ```
    pub fn new(queue: PriorityQueue<Request>) -> Self {
        Queue {
            queue,
            priority: NORMAL_PRIORITY,
            reset_backoff: false,
            admit: None,
        }
    }

    /// The same queue taking in only the requests `admit` accepts (a sharded controller's:
    /// this replica's keys).
    #[must_use]
    pub(crate) fn admitting(mut self, admit: Admit) -> Self {
        self.admit = Some(admit);
        self
    }

    fn admits(&self, req: &Request) -> bool {
        self.admit.as_ref().is_none_or(|a| a(req))
    }

    /// The same queue seen at `priority`.
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// let q = kube_controller_runtime::handler::Queue::new(PriorityQueue::new()).at_priority(5);
    /// assert_eq!(q.priority(), 5);
    /// ```
    #[must_use]
    pub fn at_priority(&self, priority: i32) -> Self {
        Queue {
            priority,
            ..self.clone()
        }
    }

    /// The same queue, its adds ending backoffs: the events a watch's own predicates passed
    /// are changes that count, not mere triggers (see [`AddOptions::reset_backoff`]).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// let q = kube_controller_runtime::handler::Queue::new(PriorityQueue::new());
    /// assert!(!q.resets_backoff() && q.resetting_backoff().resets_backoff());
    /// ```
    #[must_use]
    pub fn resetting_backoff(&self) -> Self {
        Queue {
            reset_backoff: true,
            ..self.clone()
        }
    }

    /// Whether [`Queue::add`] ends a backoff (see [`resetting_backoff`](Self::resetting_backoff)).
    pub fn resets_backoff(&self) -> bool {
        self.reset_backoff
    }

    /// The same queue seen at [`LOW_PRIORITY`].
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue};
    /// let q = kube_controller_runtime::handler::Queue::new(PriorityQueue::new()).low_priority();
    /// assert_eq!(q.priority(), LOW_PRIORITY);
    /// ```
    #[must_use]
    pub fn low_priority(&self) -> Self {
        self.at_priority(LOW_PRIORITY)
    }

    /// The priority [`Queue::add`] queues at.
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// assert_eq!(kube_controller_runtime::handler::Queue::new(PriorityQueue::new()).priority(), 0);
    /// ```
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Queues `req` at the event's priority (a request already queued keeps the higher one). A
    /// request backing off after a failure stays backing off unless this queue
    /// [resets backoffs](Self::resetting_backoff).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// use kube_controller_runtime::{handler::Queue, Request};
    /// let q = Queue::new(PriorityQueue::new());
    /// q.add(Request::cluster("a"));
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn add(&self, req: Request) {
        if !self.admits(&req) {
            return;
        }
        self.queue.add_with(
            req,
            AddOptions {
                priority: self.priority,
                reset_backoff: self.reset_backoff,
                ..AddOptions::default()
            },
        );
    }

    /// Queues `req` as `opts` says, whatever the event's priority.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_codegen_runtime::workqueue::{AddOptions, PriorityQueue};
    /// use kube_controller_runtime::{handler::Queue, Request};
    /// let q = Queue::new(PriorityQueue::new());
    /// q.add_with(Request::cluster("a"), AddOptions::with_priority(10).after(Duration::from_secs(1)));
    /// assert_eq!(q.waiting(), 1);
    /// ```
    pub fn add_with(&self, req: Request, opts: AddOptions) {
        if !self.admits(&req) {
            return;
        }
        self.queue.add_with(req, opts);
    }

    /// The controller's queue itself.
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::PriorityQueue;
    /// let q = kube_controller_runtime::handler::Queue::new(PriorityQueue::new());
    /// let _inner: &PriorityQueue<_> = q.queue();
    /// ```
    pub fn queue(&self) -> &PriorityQueue<Request> {
        &self.queue
    }
}

impl Deref for Queue {
    type Target = PriorityQueue<Request>;

    fn deref(&self) -> &PriorityQueue<Request> {
        &self.queue
    }
}

/// Maps informer events to requests (controller-runtime's `handler.EventHandler`). Every method
/// defaults to doing nothing.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// An object appeared (or was first seen).
    fn create(&self, obj: &K, queue: &Queue) {
        let _ = (obj, queue);
    }

    /// An object changed from `old` to `new` (on a resync both are the same object).
    fn update(&self, old: &K, new: &K, queue: &Queue) {
        let _ = (old, new, queue);
    }

    /// An object was deleted; `state_unknown` when the deletion was missed and `obj` is the
    /// last state the cache held (client-go's `DeletedFinalStateUnknown`).
    fn delete(&self, obj: &K, state_unknown: bool, queue: &Queue) {
        let _ = (obj, state_unknown, queue);
    }

    /// Something outside the cluster asked for the object to be looked at.
    fn generic(&self, obj: &K, queue: &Queue) {
        let _ = (obj, queue);
    }
}

fn enqueue_self<K: Object + ?Sized>(obj: &K, queue: &Queue) {
    let meta = obj.meta();
    match meta.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => queue.add(Request {
            namespace: meta.namespace.clone().filter(|ns| !ns.is_empty()),
            name: name.to_string(),
        }),
        None => tracing::warn!(kind = %obj.kind(), "event for an object without a name; ignored"),
    }
}

/// Enqueues the object of every event (controller-runtime's `EnqueueRequestForObject`).
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube_codegen_runtime::workqueue::PriorityQueue;
/// # use kube_controller_runtime::handler::{EnqueueRequestForObject, EventHandler, Queue};
/// let q = Queue::new(PriorityQueue::new());
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("a".into());
/// EnqueueRequestForObject.delete(&cm, false, &q);
/// assert_eq!(q.len(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EnqueueRequestForObject;

impl<K: Object> EventHandler<K> for EnqueueRequestForObject {
    fn create(&self, obj: &K, queue: &Queue) {
        enqueue_self(obj, queue);
    }
    fn update(&self, _old: &K, new: &K, queue: &Queue) {
        enqueue_self(new, queue);
    }
    fn delete(&self, obj: &K, _state_unknown: bool, queue: &Queue) {
        enqueue_self(obj, queue);
    }
    fn generic(&self, obj: &K, queue: &Queue) {
        enqueue_self(obj, queue);
    }
}

/// Enqueues what a function maps the object to (controller-runtime's
/// `EnqueueRequestsFromMapFunc`); on updates both the old and the new object are mapped.
///
/// ```
/// # use k8s_openapi::api::core::v1::Secret;
/// # use kube_codegen_runtime::workqueue::PriorityQueue;
/// use kube_controller_runtime::handler::{EnqueueRequestsFromMapFunc, EventHandler, Queue};
/// use kube_controller_runtime::Request;
/// let h = EnqueueRequestsFromMapFunc::new(|s: &Secret| vec![Request::namespaced("ns", "app"), Request::namespaced("ns", "db")]);
/// let q = Queue::new(PriorityQueue::new());
/// h.create(&Secret::default(), &q);
/// assert_eq!(q.len(), 2);
/// ```
pub struct EnqueueRequestsFromMapFunc<K, F> {
    map: F,
    _k: PhantomData<fn(&K)>,
}

impl<K, F> fmt::Debug for EnqueueRequestsFromMapFunc<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnqueueRequestsFromMapFunc")
    }
}

impl<K, F, I> EnqueueRequestsFromMapFunc<K, F>
where
    F: Fn(&K) -> I + Send + Sync + 'static,
    I: IntoIterator<Item = Request>,
{
    /// A handler enqueueing `map(obj)`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Secret;
    /// let h = kube_controller_runtime::handler::EnqueueRequestsFromMapFunc::new(|_: &Secret| None);
    /// ```
    pub fn new(map: F) -> Self {
        EnqueueRequestsFromMapFunc {
            map,
            _k: PhantomData,
        }
    }

    fn enqueue(&self, obj: &K, queue: &Queue) {
        for req in (self.map)(obj) {
            queue.add(req);
        }
    }
}

impl<K, F, I> EventHandler<K> for EnqueueRequestsFromMapFunc<K, F>
where
    K: 'static,
    F: Fn(&K) -> I + Send + Sync + 'static,
    I: IntoIterator<Item = Request>,
{
    fn create(&self, obj: &K, queue: &Queue) {
        self.enqueue(obj, queue);
    }
    fn update(&self, old: &K, new: &K, queue: &Queue) {
        self.enqueue(old, queue);
        self.enqueue(new, queue);
    }
    fn delete(&self, obj: &K, _state_unknown: bool, queue: &Queue) {
        self.enqueue(obj, queue);
    }
    fn generic(&self, obj: &K, queue: &Queue) {
        self.enqueue(obj, queue);
    }
}

/// Enqueues the owner of the object: the owner references whose group and kind are the
/// owner type's — only the one with `controller: true`, or all of them (controller-runtime's
/// `EnqueueRequestForOwner`, with `OnlyControllerOwner()` or without). On updates the owners of
/// both the old and the new object are enqueued, so an ownership change reaches both.
///
/// ```
/// # use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
/// # use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
/// # use kube_codegen_runtime::workqueue::PriorityQueue;
/// use kube_controller_runtime::handler::{EnqueueRequestForOwner, EventHandler, Queue};
/// use kube_controller_runtime::Request;
/// let mut rs = ReplicaSet::default();
/// rs.metadata.namespace = Some("ns".into());
/// rs.metadata.owner_references = Some(vec![OwnerReference {
///     api_version: "apps/v1".into(), kind: "Deployment".into(), name: "web".into(),
///     uid: "1".into(), controller: Some(true), ..Default::default()
/// }]);
/// let q = Queue::new(PriorityQueue::new());
/// EnqueueRequestForOwner::controller_of::<Deployment>().create(&rs, &q);
/// assert_eq!(q.try_get(), Some(Request::namespaced("ns", "web")));
/// ```
#[derive(Debug, Clone)]
pub struct EnqueueRequestForOwner {
    group: String,
    kind: String,
    namespaced: bool,
    only_controller: bool,
}

impl EnqueueRequestForOwner {
    /// Enqueues the controlling owner, if it is an `Owner`.
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// let h = kube_controller_runtime::handler::EnqueueRequestForOwner::controller_of::<Deployment>();
    /// ```
    pub fn controller_of<Owner: Resource<DynamicType = ()>>() -> Self {
        Self::of::<Owner>(true)
    }

    /// Enqueues every owner that is an `Owner`.
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// let h = kube_controller_runtime::handler::EnqueueRequestForOwner::any_owner_of::<Deployment>();
    /// ```
    pub fn any_owner_of<Owner: Resource<DynamicType = ()>>() -> Self {
        Self::of::<Owner>(false)
    }

    fn of<Owner: Resource<DynamicType = ()>>(only_controller: bool) -> Self {
        EnqueueRequestForOwner {
            group: Owner::group(&()).into_owned(),
            kind: Owner::kind(&()).into_owned(),
            namespaced: is_namespaced::<Owner>(),
            only_controller,
        }
    }

    pub(crate) fn with_owner(group: String, kind: String, namespaced: bool) -> Self {
        EnqueueRequestForOwner {
            group,
            kind,
            namespaced,
            only_controller: true,
        }
    }

    fn enqueue<K: Object + ?Sized>(&self, obj: &K, queue: &Queue) {
        let meta = obj.meta();
        for r in meta.owner_references.iter().flatten() {
            if self.only_controller && r.controller != Some(true) {
                continue;
            }
            let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            if group != self.group || r.kind != self.kind || r.name.is_empty() {
                continue;
            }
            let namespace = if self.namespaced {
                match meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
                    Some(ns) => Some(ns.to_string()),
                    // A cluster-scoped object cannot have a namespaced owner.
                    None => continue,
                }
            } else {
                None
            };
            queue.add(Request {
                namespace,
                name: r.name.clone(),
            });
        }
    }
}

impl<K: Object> EventHandler<K> for EnqueueRequestForOwner {
    fn create(&self, obj: &K, queue: &Queue) {
        self.enqueue(obj, queue);
    }
    fn update(&self, old: &K, new: &K, queue: &Queue) {
        self.enqueue(old, queue);
        self.enqueue(new, queue);
    }
    fn delete(&self, obj: &K, _state_unknown: bool, queue: &Queue) {
        self.enqueue(obj, queue);
    }
    fn generic(&self, obj: &K, queue: &Queue) {
        self.enqueue(obj, queue);
    }
}

type ObjFn<K> = Box<dyn Fn(&K, &Queue) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&K, &K, &Queue) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&K, bool, &Queue) + Send + Sync>;

/// An event handler made of closures (controller-runtime's `handler.Funcs`); a missing closure
/// ignores its events.
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube_codegen_runtime::workqueue::PriorityQueue;
/// use kube_controller_runtime::handler::{EventHandler, Funcs, Queue};
/// use kube_controller_runtime::Request;
/// let h = Funcs::<ConfigMap>::new().on_create(|_, q| q.add(Request::cluster("everything")));
/// let q = Queue::new(PriorityQueue::new());
/// h.create(&ConfigMap::default(), &q);
/// assert_eq!(q.len(), 1);
/// ```
pub struct Funcs<K> {
    create: Option<ObjFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
    generic: Option<ObjFn<K>>,
}

impl<K> fmt::Debug for Funcs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Funcs")
            .field("create", &self.create.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .field("generic", &self.generic.is_some())
            .finish()
    }
}

impl<K> Default for Funcs<K> {
    fn default() -> Self {
        Funcs {
            create: None,
            update: None,
            delete: None,
            generic: None,
        }
    }
}

impl<K> Funcs<K> {
    /// A handler that ignores everything until closures are set.
    ///
    /// ```
    /// let h = kube_controller_runtime::handler::Funcs::<k8s_openapi::api::core::v1::Pod>::new();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles creates.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let h = kube_controller_runtime::handler::Funcs::<Pod>::new().on_create(|_, _| {});
    /// ```
    #[must_use]
    pub fn on_create(mut self, f: impl Fn(&K, &Queue) + Send + Sync + 'static) -> Self {
        self.create = Some(Box::new(f));
        self
    }

    /// Handles updates.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let h = kube_controller_runtime::handler::Funcs::<Pod>::new().on_update(|_, _, _| {});
    /// ```
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(&K, &K, &Queue) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Handles deletes.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let h = kube_controller_runtime::handler::Funcs::<Pod>::new().on_delete(|_, _, _| {});
    /// ```
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(&K, bool, &Queue) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }

    /// Handles generic events.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let h = kube_controller_runtime::handler::Funcs::<Pod>::new().on_generic(|_, _| {});
    /// ```
    #[must_use]
    pub fn on_generic(mut self, f: impl Fn(&K, &Queue) + Send + Sync + 'static) -> Self {
        self.generic = Some(Box::new(f));
        self
    }
}

impl<K: 'static> EventHandler<K> for Funcs<K> {
    fn create(&self, obj: &K, queue: &Queue) {
        if let Some(f) = &self.create {
            f(obj, queue);
        }
    }
    fn update(&self, old: &K, new: &K, queue: &Queue) {
        if let Some(f) = &self.update {
            f(old, new, queue);
        }
    }
    fn delete(&self, obj: &K, state_unknown: bool, queue: &Queue) {
        if let Some(f) = &self.delete {
            f(obj, state_unknown, queue);
        }
    }
    fn generic(&self, obj: &K, queue: &Queue) {
        if let Some(f) = &self.generic {
            f(obj, queue);
        }
    }
}
