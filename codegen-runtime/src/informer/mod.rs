//! Shared informers: a watched, indexed cache of one resource type that notifies any number of
//! event handlers (client-go's `SharedIndexInformer`).
//!
//! An informer lists its resource (paginated, 500 a page), fills its [`Store`], then watches from
//! the list's resourceVersion and applies each change to the cache before telling the handlers.
//! It recovers from every failure by itself (see the table below), so consumers only ever see a consistent sequence of adds, updates and deletes:
//!
//! * initial list → `on_add(obj, true)` for each object, then [`SharedIndexInformer::has_synced`];
//! * `ADDED`/`MODIFIED` → `on_add(obj, false)` or `on_update(old, new)` (depending on whether
//!   the cache had the object); `DELETED` → `on_delete(DeletedObject::Obj(obj))`;
//! * relist after a gap (410 Gone) → the cache is replaced atomically; objects that vanished
//!   during the gap arrive as `on_delete(DeletedObject::Tombstone { key, last_known })`, objects
//!   that changed as `on_update(old, new)`, new ones as `on_add(obj, false)`; unchanged objects
//!   (same resourceVersion) are not re-announced, and nothing is added twice;
//! * every resync period → `on_update(obj, obj)` for every cached object;
//! * a handler added while the informer runs first receives the cache's current contents as
//!   `on_add(obj, true)`, atomically with its subscription: it misses nothing and sees nothing
//!   twice. Each handler has its own queue and task.
//!
//! # Why not `kube::runtime::watcher`
//!
//! kube's watcher is a fine list/watch engine, but a failed watch *start* keeps retrying the same
//! resourceVersion (kube-runtime 5.0 `watcher.rs`, state `InitListed`), so an HTTP 410 at
//! watch start is retried with the expired version for ever instead of causing a relist — the
//! test `kube_watcher_retries_an_expired_version_at_watch_start` shows it — and its events
//! carry no old object. The informer needs both a reliable relist and the previous state, and it keeps the
//! cache itself, so the loop (module `reflector`, about 300 lines) is written directly over
//! [`kube::Client`] and [`kube::core::Request`]. It follows client-go's reflector:
//!
//! | what happens | what the informer does |
//! | --- | --- |
//! | list fails | back off, list again |
//! | a `continue` token expires mid-way through a paginated list | list again in one request |
//! | watch start answered with HTTP 410 Gone | relist |
//! | watch `ERROR` event 410 | relist |
//! | watch start fails with 429, 5xx or a connection error | back off, watch again from the same version |
//! | watch start fails with another 4xx | back off, relist |
//! | stream error or non-410 `ERROR` event | back off, watch again from the last version seen |
//! | the server ends the watch | watch again at once from the last version seen (bookmarks keep it fresh) |
//! | nothing received for `timeoutSeconds + 5 s` | reconnect from the last version seen |
//!
//! Backoff is client-go's ([`BackoffConfig`]): 800 ms doubling to 30 s, with jitter, reset after
//! two quiet minutes.
//!
//! Only decoding knows the object type: the informer proper (reflector, cache, handler queues,
//! run loop) is one type for every kind, and each handler gets its objects typed by a small
//! function made when it is added. A kind a program watches therefore adds a decode function and
//! its handlers' glue to the build, not a copy of the informer.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_codegen_runtime::{EventHandlerFuncs, InformerOptions, SharedIndexInformer};
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let informer = SharedIndexInformer::<ConfigMap>::builder(client)
//!     .options(
//!         InformerOptions::default()
//!             .namespace("default")
//!             .tweak_list_params(|lp| lp.label_selector = Some("app=web".into())),
//!     )
//!     .transform(|mut cm: ConfigMap| {
//!         cm.metadata.managed_fields = None;
//!         cm
//!     })
//!     .build();
//! informer.add_event_handler(EventHandlerFuncs::new().add_func(|cm: std::sync::Arc<ConfigMap>, _| {
//!     println!("{:?}", cm.metadata.name);
//! }))?;
//! let running = informer.start()?;
//! informer.wait_for_sync().await?;
//! let lister = informer.lister();
//! # let _ = lister;
//! running.shutdown().await?;
//! # Ok(()) }
//! ```

mod backoff;
mod handler;
pub mod metrics;
mod options;
mod processor;
mod reflector;

#[cfg(test)]
pub(crate) mod mock;
#[cfg(test)]
mod tests;

use std::fmt::{self, Debug};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::Resource;
use kube::core::Request;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use backoff::BackoffConfig;
pub use handler::{DeletedObject, EventHandler, EventHandlerFuncs};
pub use metrics::{InformerId, InformerMetricsProvider};
pub use options::{DEFAULT_PAGE_SIZE, InformerOptions, MetadataTransform, TweakListParams};

use crate::lister::Lister;
use crate::resource_version::{self, NotComparable};
use crate::store::{
    Codec, Incoming, Obj, RawReplaced, RawWriter, Store, StoreError, key_of, raw_index_func, typed,
};
use processor::{Deleted, Deliver, Listener, Notification};
use reflector::{Reflector, Sink};

/// What an informer needs of the objects it caches, whether their type fixes the resource
/// (`Pod`, generated kinds) or the resource is chosen at run time
/// ([`kube::core::DynamicObject`], see [`SharedIndexInformer::builder_for`]).
///
/// ```
/// use kube_codegen_runtime::informer::CacheObject;
/// fn cacheable<K: CacheObject>() {}
/// cacheable::<kube::core::DynamicObject>();
/// cacheable::<k8s_openapi::api::core::v1::Pod>();
/// ```
pub trait CacheObject: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static {}

impl<K> CacheObject for K where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// What an informer needs of its object type when the type alone names the resource;
/// implemented for every type that qualifies (k8s-openapi types, `#[derive(CustomResource)]`
/// types, generated kinds).
///
/// ```
/// use kube_codegen_runtime::informer::InformerObject;
/// fn informable<K: InformerObject>() {}
/// informable::<k8s_openapi::api::apps::v1::Deployment>();
/// ```
pub trait InformerObject: CacheObject + Resource<DynamicType = ()> {}

impl<K> InformerObject for K where K: CacheObject + Resource<DynamicType = ()> {}

/// The resource an informer lists and watches: its group, version, kind, plural and scope.
/// Taken from the type for [`InformerObject`]s, given explicitly for dynamic objects.
///
/// ```
/// use kube::core::{ApiResource, GroupVersionKind};
/// use kube_codegen_runtime::informer::InformerTarget;
///
/// let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
/// let target = InformerTarget::new(ApiResource::from_gvk_with_plural(&gvk, "widgets"), true);
/// assert_eq!(target.url_path(Some("ns")), "/apis/example.com/v1/namespaces/ns/widgets");
/// assert_eq!(target.url_path(None), "/apis/example.com/v1/widgets");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformerTarget {
    /// Group, version, kind and plural.
    pub resource: kube::core::ApiResource,
    /// Whether objects live in namespaces (an informer's namespace applies only then).
    pub namespaced: bool,
    /// Whether to list and watch only metadata (`PartialObjectMetadata`, asked for in the
    /// `Accept` header): set by [`of`](Self::of) for [`kube::core::PartialObjectMeta`]`<K>`.
    pub metadata_only: bool,
}

impl InformerTarget {
    /// A target for `resource`, namespaced or cluster-scoped.
    pub fn new(resource: kube::core::ApiResource, namespaced: bool) -> Self {
        InformerTarget {
            resource,
            namespaced,
            metadata_only: false,
        }
    }

    /// The target of `K`'s informer.
    ///
    /// ```
    /// # use kube_codegen_runtime::informer::InformerTarget;
    /// let t = InformerTarget::of::<k8s_openapi::api::core::v1::Node>();
    /// assert_eq!((t.resource.plural.as_str(), t.namespaced), ("nodes", false));
    /// ```
    ///
    /// The informer of [`kube::core::PartialObjectMeta`]`<K>` lists and watches `K`'s resource
    /// as `PartialObjectMetadata`: its cache holds each object's metadata only (client-go's
    /// metadata informer, controller-runtime's `OnlyMetadata`).
    ///
    /// ```
    /// # use kube_codegen_runtime::informer::InformerTarget;
    /// use k8s_openapi::api::core::v1::Secret;
    /// use kube::core::PartialObjectMeta;
    /// let t = InformerTarget::of::<PartialObjectMeta<Secret>>();
    /// assert_eq!((t.resource.plural.as_str(), t.metadata_only), ("secrets", true));
    /// assert!(!InformerTarget::of::<Secret>().metadata_only);
    /// ```
    pub fn of<K: Resource<DynamicType = ()>>() -> Self {
        InformerTarget {
            resource: kube::core::ApiResource::erase::<K>(&()),
            namespaced: is_namespaced::<K>(),
            metadata_only: K::metadata_api(),
        }
    }

    /// The collection's URL path in `namespace` (ignored for cluster-scoped resources).
    pub fn url_path(&self, namespace: Option<&str>) -> String {
        let namespace = namespace.filter(|ns| self.namespaced && !ns.is_empty());
        kube::core::DynamicObject::url_path(&self.resource, namespace)
    }
}

/// Rewrites each object before it is cached (for example to drop `managedFields`).
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kube_codegen_runtime::informer::TransformFn;
/// let strip: TransformFn<Pod> = Arc::new(|mut p: Pod| { p.metadata.managed_fields = None; p });
/// ```
pub type TransformFn<K> = Arc<dyn Fn(K) -> K + Send + Sync>;

/// Why an informer operation failed.
///
/// ```no_run
/// # use kube_codegen_runtime::informer::{InformerError, SharedIndexInformer};
/// # async fn demo(i: SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
/// let _running = i.start();
/// assert_eq!(i.start().err(), Some(InformerError::AlreadyStarted));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InformerError {
    /// [`SharedIndexInformer::run`] or `start` was called on an informer that already runs.
    #[error("the informer was already started")]
    AlreadyStarted,
    /// The informer has stopped; it cannot be restarted or take new handlers.
    #[error("the informer has stopped")]
    Stopped,
    /// The informer stopped before its first list completed.
    #[error("the informer stopped before its cache synced")]
    StoppedBeforeSync,
    /// The informer's task panicked or was aborted.
    #[error("the informer task failed: {0}")]
    TaskFailed(String),
    /// `start` was called outside a Tokio runtime.
    #[error("no Tokio runtime to run the informer on")]
    NoRuntime,
}

/// Whether values of `K` live in namespaces, from its `Resource::Scope`. Cluster-scoped types
/// ignore an informer's namespace, as they do in client-go.
///
/// ```
/// use k8s_openapi::api::core::v1::{ConfigMap, Node};
/// use kube_codegen_runtime::informer::is_namespaced;
/// assert!(is_namespaced::<ConfigMap>());
/// assert!(!is_namespaced::<Node>());
/// ```
pub fn is_namespaced<K: Resource>() -> bool {
    !std::any::type_name::<K::Scope>().ends_with("ClusterResourceScope")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncState {
    Pending,
    Synced,
    StoppedBeforeSync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Running,
    Stopped,
}

/// Everything that must change atomically with handler delivery (client-go's `blockDeltas`).
struct State {
    phase: Phase,
    listeners: Vec<Listener>,
    next_id: u64,
    tasks: Vec<JoinHandle<()>>,
    runtime: Option<tokio::runtime::Handle>,
    /// Parent of every listener's token; cancelled when the informer stops.
    listeners_token: CancellationToken,
}

/// Decodes one object and applies the informer's transforms; also returns the
/// resourceVersion the object had before them.
type Decode = Arc<dyn Fn(&str) -> serde_json::Result<(Obj, Option<String>)> + Send + Sync>;

/// The informer proper, the same type for every object type: only [`Decode`] knows `K`.
struct Inner {
    name: String,
    /// Group and plural, for the lister's NotFound errors.
    group: Arc<str>,
    plural: Arc<str>,
    writer: RawWriter,
    reflector: Reflector,
    decode: Decode,
    /// In a compact store, how objects are made compact and read back.
    compact: Option<Arc<Codec>>,
    resync: Option<Duration>,
    state: Mutex<State>,
    synced: AtomicBool,
    sync_tx: watch::Sender<SyncState>,
    /// The resourceVersion the store has reached: moved after the store is written.
    store_rv: watch::Sender<String>,
    /// KEP-4346's metrics, when the options name a provider.
    metrics: Option<metrics::InformerMetrics>,
}

/// A shared, indexed informer for `K`. Cloning is cheap and yields a handle to the same
/// informer. See the [module docs](self).
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::Pod;
/// # use kube_codegen_runtime::informer::SharedIndexInformer;
/// # async fn demo(client: kube::Client) -> Result<(), kube_codegen_runtime::informer::InformerError> {
/// let pods = SharedIndexInformer::<Pod>::new(client);
/// let running = pods.start()?;
/// pods.wait_for_sync().await?;
/// println!("{} pods", pods.store().len());
/// running.shutdown().await
/// # }
/// ```
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        SharedIndexInformer {
            inner: self.inner.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.inner.name)
            .field("synced", &self.inner.synced.load(Ordering::Acquire))
            .field("store", &self.inner.writer)
            .finish()
    }
}

/// Builds a [`SharedIndexInformer`]: [`InformerOptions`] for how it lists and watches, and a
/// transform of the objects it caches.
///
/// ```
/// # use std::time::Duration;
/// # use k8s_openapi::api::apps::v1::Deployment;
/// # use kube_codegen_runtime::{InformerOptions, SharedIndexInformer};
/// # fn demo(client: kube::Client) {
/// let informer = SharedIndexInformer::<Deployment>::builder(client)
///     .options(InformerOptions::default().namespace("prod").resync(Duration::from_secs(300)))
///     .transform(|mut d: Deployment| { d.status = None; d })
///     .build();
/// # }
/// ```
pub struct InformerBuilder<K> {
    client: kube::Client,
    target: InformerTarget,
    options: InformerOptions,
    transform: Option<TransformFn<K>>,
}

impl<K> Debug for InformerBuilder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerBuilder")
            .field("target", &self.target)
            .field("options", &self.options)
            .field("transform", &self.transform.is_some())
            .finish()
    }
}

impl<K: CacheObject> InformerBuilder<K> {
    /// How the informer lists and watches (replacing the default options).
    #[must_use]
    pub fn options(mut self, options: InformerOptions) -> Self {
        self.options = options;
        self
    }

    /// Changes the options in place, keeping the rest (what a factory's
    /// `informer_for_custom` uses to adjust the options it prepared).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # fn demo(client: kube::Client) {
    /// let b = kube_codegen_runtime::SharedIndexInformer::<k8s_openapi::api::core::v1::Pod>::builder(client)
    ///     .map_options(|o| o.resync(Duration::from_secs(30)));
    /// # }
    /// ```
    #[must_use]
    pub fn map_options(mut self, f: impl FnOnce(InformerOptions) -> InformerOptions) -> Self {
        self.options = f(self.options);
        self
    }

    /// Rewrites every object before it is cached and handed to handlers (before the options'
    /// metadata transforms).
    ///
    /// ```
    /// # fn demo(client: kube::Client) {
    /// use k8s_openapi::api::core::v1::Pod;
    /// let b = kube_codegen_runtime::SharedIndexInformer::<Pod>::builder(client)
    ///     .transform(|mut p: Pod| { p.status = None; p });
    /// # }
    /// ```
    #[must_use]
    pub fn transform(mut self, transform: impl Fn(K) -> K + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }

    /// [`InformerBuilder::transform`] with a shared function (`None` removes it).
    #[must_use]
    pub fn transform_arc(mut self, transform: Option<TransformFn<K>>) -> Self {
        self.transform = transform;
        self
    }

    /// The informer (not yet running).
    ///
    /// ```
    /// # fn demo(client: kube::Client) {
    /// let informer = kube_codegen_runtime::SharedIndexInformer::<k8s_openapi::api::core::v1::Pod>::builder(client).build();
    /// # }
    /// ```
    pub fn build(self) -> SharedIndexInformer<K> {
        let metadata = self.options.metadata_transform();
        let transform = self.transform;
        let decode: Decode = Arc::new(move |raw: &str| {
            let obj: K = serde_json::from_str(raw)?;
            let resource_version = obj.meta().resource_version.clone();
            let mut obj = match &transform {
                Some(t) => t(obj),
                None => obj,
            };
            if let Some(meta) = &metadata {
                meta(obj.meta_mut());
            }
            Ok((Arc::new(obj) as Obj, resource_version))
        });
        SharedIndexInformer {
            inner: Arc::new(Inner::new(self.client, self.target, self.options, decode)),
            kind: PhantomData,
        }
    }
}

impl Inner {
    /// A new informer (not yet running) of `target`, decoding objects with `decode`.
    fn new(
        client: kube::Client,
        target: InformerTarget,
        options: InformerOptions,
        decode: Decode,
    ) -> Inner {
        let options = if target.namespaced {
            options
        } else {
            options.without_namespace()
        };
        let namespace = options.get_namespace().map(String::from);
        let list_params = options.list_params();
        let kind = if target.resource.kind.is_empty() {
            target.resource.plural.as_str()
        } else {
            target.resource.kind.as_str()
        };
        let name = match &namespace {
            Some(ns) => format!("{kind} in {ns}"),
            None => kind.to_string(),
        };
        let (sync_tx, _) = watch::channel(SyncState::Pending);
        let metrics = options.get_metrics_provider().map(|p| {
            metrics::InformerMetrics::new(
                &**p,
                &InformerId {
                    name: name.clone(),
                    group: target.resource.group.clone(),
                    version: target.resource.version.clone(),
                    resource: target.resource.plural.clone(),
                },
            )
        });
        let compact = options
            .get_compact()
            .then(|| Arc::new(Codec::new(options.strips_managed_fields())));
        let writer = match &compact {
            Some(codec) => {
                let (decode, codec) = (decode.clone(), codec.clone());
                RawWriter::compact(Arc::new(move |c| codec.read(c, |text| Ok(decode(text)?.0))))
            }
            None => RawWriter::new(),
        };
        Inner {
            writer,
            compact,
            reflector: Reflector {
                client,
                request: Request::new(target.url_path(namespace.as_deref())),
                list_params,
                page_size: options.get_page_size(),
                watch_timeout: options.get_watch_timeout(),
                backoff: options.get_backoff(),
                watch_list: options.get_watch_list(),
                shard_selector: options.get_shard_selector().map(str::to_string),
                watch_list_refused: Default::default(),
                metadata_only: target.metadata_only,
                name: name.clone(),
            },
            name,
            group: Arc::from(target.resource.group.as_str()),
            plural: Arc::from(target.resource.plural.as_str()),
            decode,
            resync: options.get_resync(),
            state: Mutex::new(State {
                phase: Phase::Idle,
                listeners: Vec::new(),
                next_id: 0,
                tasks: Vec::new(),
                runtime: None,
                listeners_token: CancellationToken::new(),
            }),
            synced: AtomicBool::new(false),
            sync_tx,
            store_rv: watch::Sender::new(String::new()),
            metrics,
        }
    }

    /// Registers a handler (see [`SharedIndexInformer::add_event_handler`]).
    fn register(&self, deliver: Deliver) -> Result<HandlerRegistration, InformerError> {
        let mut st = self.state.lock();
        if st.phase == Phase::Stopped {
            return Err(InformerError::Stopped);
        }
        let id = st.next_id;
        st.next_id += 1;
        let mut listener = Listener::new(
            id,
            deliver,
            &st.listeners_token,
            self.metrics.as_ref().map(|m| m.queued.clone()),
        );
        // Under the state lock no event can be delivered, so the snapshot and the events that
        // follow are exactly consecutive.
        for obj in self.writer.list() {
            listener.send(Notification::Add(obj, true));
        }
        if self.synced.load(Ordering::Acquire) {
            listener.send(Notification::Synced);
        }
        let registration = HandlerRegistration {
            id,
            synced: listener.synced.clone(),
        };
        if st.phase == Phase::Running
            && let Some(rt) = st.runtime.clone()
            && let Some(task) = listener.take_task()
        {
            st.tasks.push(task.spawn(&rt));
        }
        st.listeners.push(listener);
        Ok(registration)
    }
}

/// The handle [`SharedIndexInformer::add_event_handler`] returns.
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::Pod;
/// # use kube_codegen_runtime::informer::{EventHandlerFuncs, SharedIndexInformer};
/// # fn demo(informer: SharedIndexInformer<Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
/// let reg = informer.add_event_handler(EventHandlerFuncs::new())?;
/// if reg.has_synced() { /* this handler has seen the whole initial state */ }
/// informer.remove_event_handler(&reg);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HandlerRegistration {
    id: u64,
    synced: Arc<AtomicBool>,
}

impl HandlerRegistration {
    /// Whether this handler has processed the informer's initial list (or, for a handler added
    /// later, the replay of the cache).
    ///
    /// ```no_run
    /// # fn demo(reg: kube_codegen_runtime::informer::HandlerRegistration) {
    /// while !reg.has_synced() {}
    /// # }
    /// ```
    pub fn has_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }
}

/// A running informer started with [`SharedIndexInformer::start`].
///
/// ```no_run
/// # async fn demo(informer: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
/// let running = informer.start()?;
/// running.shutdown().await // stops the watch and waits for the task and its handlers
/// # }
/// ```
#[derive(Debug)]
pub struct InformerHandle {
    cancel: CancellationToken,
    join: JoinHandle<Result<(), InformerError>>,
}

impl InformerHandle {
    /// Asks the informer to stop without waiting.
    ///
    /// ```no_run
    /// # fn demo(h: kube_codegen_runtime::informer::InformerHandle) { h.stop(); }
    /// ```
    pub fn stop(&self) {
        self.cancel.cancel();
    }

    /// Stops the informer and waits until its watch and handler tasks have ended.
    ///
    /// ```no_run
    /// # async fn demo(h: kube_codegen_runtime::informer::InformerHandle) { let _ = h.shutdown().await; }
    /// ```
    pub async fn shutdown(self) -> Result<(), InformerError> {
        self.cancel.cancel();
        self.join
            .await
            .map_err(|e| InformerError::TaskFailed(e.to_string()))?
    }

    /// The token that stops the informer when cancelled.
    ///
    /// ```no_run
    /// # fn demo(h: kube_codegen_runtime::informer::InformerHandle) { let t = h.cancellation_token(); }
    /// ```
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

impl<K: InformerObject> SharedIndexInformer<K> {
    /// An informer over all namespaces with default settings.
    ///
    /// ```
    /// # fn demo(client: kube::Client) {
    /// let informer = kube_codegen_runtime::informer::SharedIndexInformer::<k8s_openapi::api::core::v1::Node>::new(client);
    /// # }
    /// ```
    pub fn new(client: kube::Client) -> Self {
        Self::builder(client).build()
    }

    /// A builder with the default [`InformerOptions`].
    ///
    /// ```
    /// # fn demo(client: kube::Client) {
    /// let b = kube_codegen_runtime::informer::SharedIndexInformer::<k8s_openapi::api::core::v1::Node>::builder(client);
    /// # }
    /// ```
    pub fn builder(client: kube::Client) -> InformerBuilder<K> {
        Self::builder_for(client, InformerTarget::of::<K>())
    }
}

impl<K: CacheObject> SharedIndexInformer<K> {
    /// A builder for an informer of `target`, for object types that do not fix their resource
    /// (client-go's dynamic informers). `K` is usually [`kube::core::DynamicObject`].
    ///
    /// ```
    /// use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    /// use kube_codegen_runtime::informer::{InformerTarget, SharedIndexInformer};
    /// # fn demo(client: kube::Client) {
    /// let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    /// let target = InformerTarget::new(ApiResource::from_gvk_with_plural(&gvk, "deployments"), true);
    /// let deployments = SharedIndexInformer::<DynamicObject>::builder_for(client, target).build();
    /// # }
    /// ```
    pub fn builder_for(client: kube::Client, target: InformerTarget) -> InformerBuilder<K> {
        InformerBuilder {
            client,
            target,
            options: InformerOptions::default(),
            transform: None,
        }
    }

    /// Whether `self` and `other` are handles to the same informer.
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// assert!(i.ptr_eq(&i.clone()));
    /// # }
    /// ```
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The informer's objects, read-only (client-go's `GetIndexer()`/`GetStore()`): reads are
    /// cheap and return shared `Arc<K>`s; only the informer writes.
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// let n = i.store().len();
    /// # }
    /// ```
    pub fn store(&self) -> Store<K> {
        self.inner.writer.store()
    }

    /// A lister over the cache, with NotFound errors naming `K`'s group and plural resource.
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// let pod = i.lister().namespaced("default").get("web-0");
    /// # }
    /// ```
    pub fn lister(&self) -> Lister<K> {
        Lister::new(
            self.inner.writer.store(),
            &self.inner.group,
            &self.inner.plural,
        )
    }

    /// Adds an index to the cache (also allowed while running: existing objects are indexed).
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::store::StoreError> {
    /// i.add_indexer("node", |p| p.spec.iter().filter_map(|s| s.node_name.clone()).collect())?;
    /// # Ok(()) }
    /// ```
    pub fn add_indexer(
        &self,
        name: impl Into<String>,
        func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), StoreError> {
        let func: crate::store::IndexFunc<K> = Arc::new(func);
        self.inner
            .writer
            .add_indexers(vec![(name.into(), raw_index_func(func))])
    }

    /// Registers a handler. It receives the cache's current contents as `on_add(obj, true)`
    /// first (nothing if the informer has not listed yet), then every later change. Fails once
    /// the informer has stopped.
    ///
    /// ```no_run
    /// # use kube_codegen_runtime::informer::EventHandlerFuncs;
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
    /// let reg = i.add_event_handler(EventHandlerFuncs::new().update_func(|old, new| {}))?;
    /// # Ok(()) }
    /// ```
    pub fn add_event_handler(
        &self,
        handler: impl EventHandler<K>,
    ) -> Result<HandlerRegistration, InformerError> {
        self.add_event_handler_arc(Arc::new(handler))
    }

    /// [`SharedIndexInformer::add_event_handler`] for a shared handler.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use kube_codegen_runtime::informer::{EventHandler, EventHandlerFuncs};
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
    /// let h: Arc<dyn EventHandler<_>> = Arc::new(EventHandlerFuncs::new());
    /// i.add_event_handler_arc(h)?;
    /// # Ok(()) }
    /// ```
    pub fn add_event_handler_arc(
        &self,
        handler: Arc<dyn EventHandler<K>>,
    ) -> Result<HandlerRegistration, InformerError> {
        let deliver: Deliver = Arc::new(move |n: Notification| match n {
            Notification::Add(o, initial) => {
                if let Some(o) = typed(&o) {
                    handler.on_add(o, initial)
                }
            }
            Notification::Update(old, new) => {
                if let (Some(old), Some(new)) = (typed(&old), typed(&new)) {
                    handler.on_update(old, new)
                }
            }
            Notification::Delete(d) => {
                if let Some(d) = d.typed() {
                    handler.on_delete(d)
                }
            }
            Notification::Synced => {}
        });
        self.inner.register(deliver)
    }

    /// Unregisters a handler; its task ends after the notification it is handling. Returns
    /// whether it was registered.
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>, reg: kube_codegen_runtime::informer::HandlerRegistration) {
    /// assert!(i.remove_event_handler(&reg));
    /// # }
    /// ```
    pub fn remove_event_handler(&self, registration: &HandlerRegistration) -> bool {
        let mut st = self.inner.state.lock();
        let before = st.listeners.len();
        st.listeners.retain(|l| {
            let keep = l.id != registration.id;
            if !keep {
                l.cancel.cancel();
            }
            keep
        });
        st.listeners.len() != before
    }

    /// Whether the first list has been stored in the cache (and handed to the handlers'
    /// queues).
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// if i.has_synced() { /* the cache is complete */ }
    /// # }
    /// ```
    pub fn has_synced(&self) -> bool {
        self.inner.synced.load(Ordering::Acquire)
    }

    /// Waits until [`SharedIndexInformer::has_synced`]; fails if the informer stops first.
    /// (Waits forever if the informer is never started.)
    ///
    /// ```no_run
    /// # async fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
    /// i.wait_for_sync().await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_sync(&self) -> Result<(), InformerError> {
        wait_synced(self.inner.sync_tx.subscribe()).await
    }

    /// The resourceVersion of the last list, event or bookmark seen (client-go's
    /// `LastSyncResourceVersion`). It moves only after the store holds what came with it, so
    /// it is also the version the store has reached (client-go's
    /// `LastStoreSyncResourceVersion`, KEP-5647).
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// let rv = i.last_sync_resource_version();
    /// # }
    /// ```
    pub fn last_sync_resource_version(&self) -> String {
        self.inner.store_rv.borrow().clone()
    }

    /// Waits until the store has reached `resource_version`: every write with that version or
    /// an earlier one is in the store (or gone from it), learnt from an event, a list or a
    /// bookmark. Written for read-your-own-writes: wait for the version a write returned before
    /// reading the cache. It waits as long as it is polled — bound it with
    /// `tokio::time::timeout`. Versions compare as KEP-5504 says; one that is not comparable
    /// (not a decimal integer) is an error at once.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// let written = "1042"; // the resourceVersion an update returned
    /// match tokio::time::timeout(Duration::from_secs(5), i.wait_for_store_resource_version(written)).await {
    ///     Ok(Ok(())) => { /* the lister shows that write, or something newer */ }
    ///     Ok(Err(not_comparable)) => eprintln!("{not_comparable}"),
    ///     Err(_) => { /* not there yet: read from the server instead */ }
    /// }
    /// # }
    /// ```
    pub async fn wait_for_store_resource_version(
        &self,
        resource_version: &str,
    ) -> Result<(), NotComparable> {
        if !resource_version::is_comparable(resource_version) {
            return Err(NotComparable(resource_version.to_string()));
        }
        let mut rx = self.inner.store_rv.subscribe();
        loop {
            let reached = {
                let now = rx.borrow_and_update();
                resource_version::compare(&now, resource_version).is_ok_and(|o| o.is_ge())
            };
            if reached {
                return Ok(());
            }
            if rx.changed().await.is_err() {
                // The sender lives as long as the informer, which `self` keeps alive.
                std::future::pending::<()>().await;
            }
        }
    }

    /// Whether the informer has stopped (it cannot be restarted).
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// assert!(!i.is_stopped());
    /// # }
    /// ```
    pub fn is_stopped(&self) -> bool {
        self.inner.state.lock().phase == Phase::Stopped
    }

    /// Whether the informer has been started (it may have stopped since).
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// assert!(!i.is_started());
    /// # }
    /// ```
    pub fn is_started(&self) -> bool {
        self.inner.state.lock().phase != Phase::Idle
    }

    /// A short description (`Kind` or `Kind in namespace`) for logs.
    ///
    /// ```no_run
    /// # fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// println!("{}", i.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Spawns [`SharedIndexInformer::run`] on the current Tokio runtime; the handle stops it.
    /// Fails outside a runtime.
    ///
    /// ```no_run
    /// # async fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), kube_codegen_runtime::informer::InformerError> {
    /// let running = i.start()?;
    /// # Ok(()) }
    /// ```
    pub fn start(&self) -> Result<InformerHandle, InformerError> {
        let rt = tokio::runtime::Handle::try_current().map_err(|_| InformerError::NoRuntime)?;
        self.claim()?;
        let cancel = CancellationToken::new();
        let this = self.clone();
        let token = cancel.clone();
        let join = rt.spawn(run_to_end(this.inner, token));
        Ok(InformerHandle { cancel, join })
    }

    /// Marks the informer as running, once.
    fn claim(&self) -> Result<(), InformerError> {
        let mut st = self.inner.state.lock();
        match st.phase {
            Phase::Idle => {
                st.phase = Phase::Running;
                Ok(())
            }
            Phase::Running => Err(InformerError::AlreadyStarted),
            Phase::Stopped => Err(InformerError::Stopped),
        }
    }

    /// Lists, watches and notifies until `cancel` fires; then stops every handler task and
    /// returns once they have ended. An informer runs once.
    ///
    /// ```no_run
    /// # async fn demo(i: kube_codegen_runtime::informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) {
    /// let stop = tokio_util::sync::CancellationToken::new();
    /// tokio::spawn({ let i = i.clone(); let stop = stop.clone(); async move { i.run(stop).await } });
    /// // …
    /// stop.cancel();
    /// # }
    /// ```
    pub async fn run(&self, cancel: CancellationToken) -> Result<(), InformerError> {
        self.claim()?;
        self.run_claimed(cancel).await;
        Ok(())
    }

    async fn run_claimed(&self, cancel: CancellationToken) {
        drive(self.inner.clone(), cancel).await;
    }
}

/// Waits for the first list to be stored, or for the informer to stop first (one copy of the
/// wait for every object type).
async fn wait_synced(mut rx: watch::Receiver<SyncState>) -> Result<(), InformerError> {
    let state = rx
        .wait_for(|s| *s != SyncState::Pending)
        .await
        .map(|s| *s)
        .unwrap_or(SyncState::StoppedBeforeSync);
    match state {
        SyncState::Synced => Ok(()),
        _ => Err(InformerError::StoppedBeforeSync),
    }
}

/// [`drive`] as a task's future (spawned once for every object type).
async fn run_to_end(core: Arc<dyn Core>, cancel: CancellationToken) -> Result<(), InformerError> {
    drive(core, cancel).await;
    Ok(())
}

/// What [`drive`] needs of an informer, so that the run loop is compiled once rather than
/// for each object type.
trait Core: Sink {
    fn name(&self) -> &str;
    fn reflector(&self) -> &Reflector;
    fn resync_period(&self) -> Option<Duration>;
    /// Redelivers every cached object to every handler as an update.
    fn resync(&self);
    /// Spawns the handler tasks registered before the start on the current runtime.
    fn begin(&self);
    /// Marks the informer stopped and hands over its handler tasks to wait for.
    fn end(&self) -> Vec<JoinHandle<()>>;
}

/// Lists, watches and resyncs until `cancel` fires, then waits for the handler tasks.
async fn drive(core: Arc<dyn Core>, cancel: CancellationToken) {
    core.begin();
    tracing::debug!(informer = %core.name(), "informer started");
    let reflect = core.reflector().run(&*core, &cancel);
    let resync = async {
        let Some(period) = core.resync_period() else {
            return;
        };
        let mut tick = tokio::time::interval_at(crate::time::deadline_after(period), period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => core.resync(),
            }
        }
    };
    futures::join!(reflect, resync);
    for t in core.end() {
        if let Err(e) = t.await {
            tracing::error!(informer = %core.name(), error = %e, "an event handler task failed");
        }
    }
    tracing::debug!(informer = %core.name(), "informer stopped");
}

impl Core for Inner {
    fn name(&self) -> &str {
        &self.name
    }

    fn reflector(&self) -> &Reflector {
        &self.reflector
    }

    fn resync_period(&self) -> Option<Duration> {
        self.resync
    }

    fn resync(&self) {
        Inner::resync(self);
    }

    fn begin(&self) {
        let mut st = self.state.lock();
        let rt = tokio::runtime::Handle::current();
        let tasks: Vec<_> = st
            .listeners
            .iter_mut()
            .filter_map(|l| l.take_task())
            .collect();
        for t in tasks {
            st.tasks.push(t.spawn(&rt));
        }
        st.runtime = Some(rt);
    }

    fn end(&self) -> Vec<JoinHandle<()>> {
        let tasks = {
            let mut st = self.state.lock();
            st.phase = Phase::Stopped;
            st.listeners_token.cancel();
            st.runtime = None;
            std::mem::take(&mut st.tasks)
        };
        self.sync_tx.send_if_modified(|s| {
            if *s == SyncState::Pending {
                *s = SyncState::StoppedBeforeSync;
                true
            } else {
                false
            }
        });
        tasks
    }
}

impl Inner {
    /// The store has reached `rv`: wakes who waits for it, and sets the gauge.
    fn store_reached(&self, rv: String) {
        if let Some(m) = &self.metrics {
            m.store_resource_version(&rv);
        }
        self.store_rv.send_replace(rv);
    }

    fn broadcast(st: &State, n: Notification) {
        for l in &st.listeners {
            l.send(n.clone());
        }
    }

    fn resync(&self) {
        if !self.synced.load(Ordering::Acquire) {
            return;
        }
        let st = self.state.lock();
        if st.listeners.is_empty() {
            return;
        }
        let objects = self.writer.list();
        tracing::trace!(informer = %self.name, count = objects.len(), "resync");
        for o in objects {
            Self::broadcast(&st, Notification::Update(o.clone(), o));
        }
    }
}

impl Inner {
    /// `obj`, decoded from `raw`, on its way into the store: with its compact form if the
    /// store keeps objects compact (an object whose key cannot be read from its text as is
    /// stays decoded).
    fn incoming(&self, raw: &str, obj: Obj) -> Incoming {
        let labels = obj.object_meta().labels.as_ref();
        match self
            .compact
            .as_ref()
            .and_then(|codec| codec.compact(raw, labels))
        {
            Some(c) => Incoming::compact(c, Some(obj)),
            None => Incoming::full(obj),
        }
    }
}

impl Sink for Inner {
    /// A listed object: decoded (so that an object the informer cannot read fails the list),
    /// then in a compact store kept compact alone, its decoded form dropped at once.
    fn decode(&self, object: &serde_json::value::RawValue) -> serde_json::Result<Incoming> {
        let (obj, _) = (self.decode)(object.get())?;
        Ok(
            match self
                .compact
                .as_ref()
                .and_then(|codec| codec.compact(object.get(), obj.object_meta().labels.as_ref()))
            {
                Some(c) => Incoming::compact(c, None),
                None => Incoming::full(obj),
            },
        )
    }

    fn replace(&self, items: Vec<Incoming>, resource_version: String) {
        let start = std::time::Instant::now();
        let st = self.state.lock();
        let diff = self.writer.replace(items, resource_version.clone());
        self.store_reached(resource_version);
        let initial = !self.synced.load(Ordering::Acquire);
        tracing::debug!(
            informer = %self.name,
            added = diff.added.len(),
            updated = diff.updated.len(),
            removed = diff.removed.len(),
            unchanged = diff.unchanged,
            initial,
            "cache replaced"
        );
        if !st.listeners.is_empty() {
            for e in &diff.added {
                if let Some(o) = diff.obj(e) {
                    Self::broadcast(&st, Notification::Add(o, initial));
                }
            }
            for (old, new) in &diff.updated {
                if let (Some(old), Some(new)) = (diff.old_obj(old), diff.obj(new)) {
                    Self::broadcast(&st, Notification::Update(old, new));
                }
            }
            for e in &diff.removed {
                Self::broadcast(
                    &st,
                    Notification::Delete(Deleted::Tombstone {
                        key: RawReplaced::key(e),
                        last_known: diff.old_obj(e),
                    }),
                );
            }
        }
        if initial {
            self.synced.store(true, Ordering::Release);
            Self::broadcast(&st, Notification::Synced);
            self.sync_tx.send_replace(SyncState::Synced);
        }
        drop(st);
        if let Some(m) = &self.metrics {
            m.processed_since(start);
        }
    }

    fn apply(
        &self,
        object: &serde_json::value::RawValue,
        deleted: bool,
    ) -> serde_json::Result<Option<String>> {
        let start = std::time::Instant::now();
        let (obj, resource_version) = (self.decode)(object.get())?;
        if !deleted {
            let st = self.state.lock();
            match self.writer.add(self.incoming(object.get(), obj.clone())) {
                Ok(Some(old)) => Self::broadcast(&st, Notification::Update(old, obj)),
                Ok(None) => Self::broadcast(&st, Notification::Add(obj, false)),
                Err(e) => {
                    tracing::warn!(informer = %self.name, error = %e, "ignoring a watch event")
                }
            }
        } else {
            match key_of(obj.object_meta()) {
                Ok(key) => {
                    let st = self.state.lock();
                    self.writer.delete_key(&key);
                    Self::broadcast(&st, Notification::Delete(Deleted::Obj(obj)));
                }
                Err(e) => {
                    tracing::warn!(informer = %self.name, error = %e, "ignoring a watch event")
                }
            }
        }
        if let Some(rv) = &resource_version {
            self.store_reached(rv.clone());
        }
        if let Some(m) = &self.metrics {
            m.processed_since(start);
        }
        Ok(resource_version)
    }

    fn bookmark(&self, resource_version: String) {
        self.store_reached(resource_version);
    }
}
