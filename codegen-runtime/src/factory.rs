//! The shared informer factory: one informer (one watch) per resource type however many
//! consumers ask, started, synced and shut down together (client-go's
//! `SharedInformerFactory`).
//!
//! The generated `informers::externalversions::SharedInformerFactory` wraps this one and adds
//! the typed accessors (`factory.crddemo().v1().mydemos()`), each a thin call to
//! [`SharedInformerFactory::informer_for`]; its generic lookup by group-version-resource is
//! [`SharedInformerFactory::for_resource`], fed by [`SharedInformerFactory::register`] (the
//! generated factory matches its own kinds first, through
//! [`SharedInformerFactory::generic_informer_for`], so nothing is registered up front). Any
//! `kube::Resource` works, generated or not (Services, EndpointSlices, Deployments …).
//!
//! Informers are keyed by Rust type and namespace; a type fixes its group-version-kind, so
//! this is one informer per GVK and namespace (two Rust types for one GVK, such as `K` and
//! `PartialObjectMeta<K>`, get separate informers because their caches hold different things).
//!
//! ```no_run
//! use std::time::Duration;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::Service;
//! use kube_codegen_runtime::{InformerOptions, SharedInformerFactory};
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let factory = SharedInformerFactory::builder(client)
//!     .options(
//!         InformerOptions::default()
//!             .namespace("prod")
//!             .resync(Duration::from_secs(600))
//!             .strip_managed_fields(),
//!     )
//!     .build();
//! let services = factory.informer_for::<Service>();
//! let same = factory.informer_for::<Service>(); // the same informer, the same watch
//! let deployments = factory.informer_for::<Deployment>().lister();
//! factory.start();
//! assert!(factory.wait_for_cache_sync().await.all_synced());
//! // …
//! factory.shutdown().await;
//! # Ok(()) }
//! ```

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use kube::Resource;
use kube::core::GroupVersionResource;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::informer::{
    CacheObject, InformerBuilder, InformerError, InformerObject, InformerOptions, InformerTarget,
    SharedIndexInformer, TransformFn, is_namespaced,
};
use crate::lister::{GenericLister, Lister};

/// Why a factory look-up failed.
///
/// ```
/// use kube_codegen_runtime::factory::FactoryError;
/// let e = FactoryError::NoInformerFound("example.com/v1, Resource=widgets".into());
/// assert_eq!(e.to_string(), "no informer found for example.com/v1, Resource=widgets");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactoryError {
    /// [`SharedInformerFactory::for_resource`] for a resource nobody registered.
    #[error("no informer found for {0}")]
    NoInformerFound(String),
}

/// Identifies one informer of a factory: the resource's group, version, kind and plural, the
/// namespace it watches (`None`: all namespaces, or cluster-scoped) and the Rust type.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube_codegen_runtime::factory::InformerId;
///
/// let id = InformerId::of::<Deployment>(Some("prod"));
/// assert_eq!(id.to_string(), "apps/v1, Kind=Deployment in prod");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerId {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind (empty for a dynamic informer created from a group-version-resource alone).
    pub kind: String,
    /// The plural resource (`deployments`).
    pub resource: String,
    /// The watched namespace, if restricted.
    pub namespace: Option<String>,
    /// The Rust type (`std::any::type_name`).
    pub type_name: &'static str,
}

impl InformerId {
    /// The id of `K`'s informer restricted to `namespace`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let id = kube_codegen_runtime::factory::InformerId::of::<Pod>(None);
    /// assert_eq!((id.group.as_str(), id.kind.as_str()), ("", "Pod"));
    /// ```
    pub fn of<K: Resource<DynamicType = ()>>(namespace: Option<&str>) -> Self {
        InformerId {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            resource: K::plural(&()).into_owned(),
            namespace: namespace.map(String::from),
            type_name: std::any::type_name::<K>(),
        }
    }

    /// The id of a dynamic informer (objects of type `K`, usually
    /// [`DynamicObject`](kube::core::DynamicObject)) of `target` restricted to `namespace`.
    ///
    /// ```
    /// use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    /// use kube_codegen_runtime::factory::InformerId;
    /// use kube_codegen_runtime::informer::InformerTarget;
    ///
    /// let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", ""), "deployments");
    /// let id = InformerId::dynamic::<DynamicObject>(&InformerTarget::new(ar, true), Some("prod"));
    /// assert_eq!(id.to_string(), "apps/v1, Resource=deployments in prod");
    /// ```
    pub fn dynamic<K>(target: &InformerTarget, namespace: Option<&str>) -> Self {
        InformerId {
            group: target.resource.group.clone(),
            version: target.resource.version.clone(),
            kind: target.resource.kind.clone(),
            resource: target.resource.plural.clone(),
            namespace: namespace.map(String::from),
            type_name: std::any::type_name::<K>(),
        }
    }
}

impl fmt::Display for InformerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, name) = if self.kind.is_empty() {
            ("Resource", &self.resource)
        } else {
            ("Kind", &self.kind)
        };
        if self.group.is_empty() {
            write!(f, "{}, {what}={name}", self.version)?;
        } else {
            write!(f, "{}/{}, {what}={name}", self.group, self.version)?;
        }
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        Ok(())
    }
}

/// Which informers synced, as [`SharedInformerFactory::wait_for_cache_sync`] reports it
/// (client-go's `map[reflect.Type]bool`). Derefs to the map.
///
/// ```
/// let r = kube_codegen_runtime::factory::CacheSyncResult::default();
/// assert!(r.all_synced() && r.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheSyncResult(BTreeMap<InformerId, bool>);

impl CacheSyncResult {
    /// Whether every started informer synced.
    ///
    /// ```
    /// assert!(kube_codegen_runtime::factory::CacheSyncResult::default().all_synced());
    /// ```
    pub fn all_synced(&self) -> bool {
        self.0.values().all(|s| *s)
    }

    /// The informers that did not sync (stopped first).
    ///
    /// ```
    /// assert!(kube_codegen_runtime::factory::CacheSyncResult::default().failed().is_empty());
    /// ```
    pub fn failed(&self) -> Vec<&InformerId> {
        self.0
            .iter()
            .filter(|(_, s)| !**s)
            .map(|(id, _)| id)
            .collect()
    }

    /// The map itself.
    ///
    /// ```
    /// let m = kube_codegen_runtime::factory::CacheSyncResult::default().into_inner();
    /// ```
    pub fn into_inner(self) -> BTreeMap<InformerId, bool> {
        self.0
    }
}

impl Deref for CacheSyncResult {
    type Target = BTreeMap<InformerId, bool>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// An informer of any type, as the factory stores it.
trait ErasedInformer: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn has_synced(&self) -> bool;
    fn wait_for_sync(&self) -> BoxFuture<'static, Result<(), InformerError>>;
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, Result<(), InformerError>>;
    fn generic_lister(&self) -> GenericLister;
    fn name(&self) -> String;
}

impl<K: CacheObject> ErasedInformer for SharedIndexInformer<K> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn wait_for_sync(&self) -> BoxFuture<'static, Result<(), InformerError>> {
        let this = self.clone();
        async move { SharedIndexInformer::wait_for_sync(&this).await }.boxed()
    }

    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, Result<(), InformerError>> {
        let this = self.clone();
        async move { SharedIndexInformer::run(&this, cancel).await }.boxed()
    }

    fn generic_lister(&self) -> GenericLister {
        GenericLister::from(self.lister())
    }

    fn name(&self) -> String {
        SharedIndexInformer::name(self).to_string()
    }
}

/// A type-erased informer for a resource known by its group-version-resource (client-go's
/// `GenericInformer`).
///
/// ```no_run
/// # use kube::core::GroupVersionResource;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube_codegen_runtime::factory::SharedInformerFactory;
/// # fn demo(factory: SharedInformerFactory) -> Result<(), kube_codegen_runtime::factory::FactoryError> {
/// factory.register::<ConfigMap>();
/// let generic = factory.for_resource(&GroupVersionResource::gvr("", "v1", "configmaps"))?;
/// let typed = generic.downcast::<ConfigMap>().expect("registered as ConfigMap");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct GenericInformer {
    gvr: GroupVersionResource,
    informer: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericInformer")
            .field("gvr", &self.gvr)
            .field("informer", &self.informer.name())
            .finish()
    }
}

impl GenericInformer {
    /// The resource.
    ///
    /// ```no_run
    /// # fn demo(g: kube_codegen_runtime::factory::GenericInformer) { let r = &g.gvr().resource; }
    /// ```
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// Whether the informer's cache has synced.
    ///
    /// ```no_run
    /// # fn demo(g: kube_codegen_runtime::factory::GenericInformer) { let s = g.has_synced(); }
    /// ```
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced()
    }

    /// Waits for the informer's cache to sync.
    ///
    /// ```no_run
    /// # async fn demo(g: kube_codegen_runtime::factory::GenericInformer) { let _ = g.wait_for_sync().await; }
    /// ```
    pub async fn wait_for_sync(&self) -> Result<(), InformerError> {
        self.informer.wait_for_sync().await
    }

    /// A lister returning [`GenericObject`](crate::lister::GenericObject)s.
    ///
    /// ```no_run
    /// # fn demo(g: kube_codegen_runtime::factory::GenericInformer) { let l = g.lister(); }
    /// ```
    pub fn lister(&self) -> GenericLister {
        self.informer.generic_lister()
    }

    /// The typed informer, if it is one for `K`.
    ///
    /// ```no_run
    /// # fn demo(g: kube_codegen_runtime::factory::GenericInformer) {
    /// let typed = g.downcast::<k8s_openapi::api::core::v1::Pod>();
    /// # }
    /// ```
    pub fn downcast<K: CacheObject>(&self) -> Option<SharedIndexInformer<K>> {
        self.informer
            .as_any()
            .downcast_ref::<SharedIndexInformer<K>>()
            .cloned()
    }
}

type GvrKey = (String, String, String);

/// How the factory finds an informer again: by Rust type for typed informers, by
/// group-version-resource (and Rust type) for dynamic ones; both with the watched namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Type(TypeId, Option<String>),
    Resource(TypeId, GvrKey, Option<String>),
}
type Constructor = Arc<dyn Fn(&SharedInformerFactory) -> GenericInformer + Send + Sync>;

struct Entry {
    id: InformerId,
    informer: Arc<dyn ErasedInformer>,
    started: bool,
}

#[derive(Default)]
struct State {
    /// Insertion order is start order.
    informers: Vec<Entry>,
    index: HashMap<Key, usize>,
    constructors: HashMap<GvrKey, Constructor>,
    tasks: Vec<Shared<BoxFuture<'static, ()>>>,
    shut_down: bool,
}

struct Inner {
    client: kube::Client,
    options: InformerOptions,
    resync_for: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    state: Mutex<State>,
    cancel: CancellationToken,
}

/// Creates, shares, starts and stops informers. Cloning is cheap and yields a handle to the
/// same factory. See the [module docs](self).
///
/// ```no_run
/// # use k8s_openapi::api::discovery::v1::EndpointSlice;
/// # async fn demo(client: kube::Client) {
/// let factory = kube_codegen_runtime::factory::SharedInformerFactory::new(client);
/// let slices = factory.informer_for::<EndpointSlice>();
/// factory.start();
/// factory.wait_for_cache_sync().await;
/// factory.shutdown().await;
/// # }
/// ```
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.inner.state.lock();
        f.debug_struct("SharedInformerFactory")
            .field("options", &self.inner.options)
            .field(
                "informers",
                &st.informers
                    .iter()
                    .map(|e| e.id.to_string())
                    .collect::<Vec<_>>(),
            )
            .field("shut_down", &st.shut_down)
            .finish()
    }
}

/// Configures a [`SharedInformerFactory`]: [`InformerOptions`] for every informer, and
/// per-type resync periods and transforms (client-go's `WithCustomResyncConfig`).
///
/// ```no_run
/// # use std::time::Duration;
/// # use k8s_openapi::api::core::v1::Pod;
/// use kube_codegen_runtime::{InformerOptions, SharedInformerFactory};
/// # fn demo(client: kube::Client) {
/// let factory = SharedInformerFactory::builder(client)
///     .options(
///         InformerOptions::default()
///             .namespace("default")
///             .tweak_list_params(|lp| lp.label_selector = Some("team=a".into()))
///             .resync(Duration::from_secs(300))
///             .strip_managed_fields(),
///     )
///     .resync_for::<Pod>(Duration::from_secs(30))
///     .transform_for::<Pod>(|mut p| { p.status = None; p })
///     .build();
/// # }
/// ```
///
/// The type parameter is what [`build`](FactoryBuilder::build) returns: this factory, or a
/// generated `SharedInformerFactory` that wraps it (see [`typed`](FactoryBuilder::typed)).
pub struct FactoryBuilder<F = SharedInformerFactory> {
    client: kube::Client,
    options: InformerOptions,
    resync_for: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    into: std::marker::PhantomData<fn() -> F>,
}

impl<F> fmt::Debug for FactoryBuilder<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactoryBuilder")
            .field("options", &self.options)
            .field("resync_for", &self.resync_for.len())
            .field("transforms", &self.transforms.len())
            .finish()
    }
}

impl<F> FactoryBuilder<F> {
    /// The same options, building a `G` (a generated factory that wraps this one, through its
    /// `From<SharedInformerFactory>` impl).
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// use kube_codegen_runtime::factory::SharedInformerFactory;
    /// struct Mine(SharedInformerFactory);
    /// impl From<SharedInformerFactory> for Mine {
    ///     fn from(f: SharedInformerFactory) -> Self { Mine(f) }
    /// }
    /// let mine: Mine = SharedInformerFactory::builder(client).typed::<Mine>().build();
    /// # }
    /// ```
    pub fn typed<G>(self) -> FactoryBuilder<G> {
        FactoryBuilder {
            client: self.client,
            options: self.options,
            resync_for: self.resync_for,
            transforms: self.transforms,
            into: std::marker::PhantomData,
        }
    }

    /// How every informer lists and watches (replacing the default options): namespace, list
    /// tweaks, resync, metadata transforms, page size, watch timeout, backoff.
    #[must_use]
    pub fn options(mut self, options: InformerOptions) -> Self {
        self.options = options;
        self
    }

    /// The resync period for `K`'s informer, instead of the options' (client-go's
    /// `WithCustomResyncConfig`; zero: no resync).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # fn demo(client: kube::Client) {
    /// let b = kube_codegen_runtime::SharedInformerFactory::builder(client)
    ///     .resync_for::<k8s_openapi::api::core::v1::Service>(Duration::from_secs(10));
    /// # }
    /// ```
    #[must_use]
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.resync_for.insert(TypeId::of::<K>(), period);
        self
    }

    /// Rewrites every `K` before it is cached (applied before the options' metadata
    /// transforms).
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::Secret;
    /// # fn demo(client: kube::Client) {
    /// let b = kube_codegen_runtime::SharedInformerFactory::builder(client)
    ///     .transform_for::<Secret>(|mut s| { s.data = None; s });
    /// # }
    /// ```
    #[must_use]
    pub fn transform_for<K: CacheObject>(
        mut self,
        transform: impl Fn(K) -> K + Send + Sync + 'static,
    ) -> Self {
        let f: TransformFn<K> = Arc::new(transform);
        self.transforms.insert(TypeId::of::<K>(), Box::new(f));
        self
    }

    /// The factory.
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// let factory = kube_codegen_runtime::SharedInformerFactory::builder(client).build();
    /// # }
    /// ```
    pub fn build(self) -> F
    where
        F: From<SharedInformerFactory>,
    {
        F::from(SharedInformerFactory {
            inner: Arc::new(Inner {
                client: self.client,
                options: self.options,
                resync_for: self.resync_for,
                transforms: self.transforms,
                state: Mutex::new(State::default()),
                cancel: CancellationToken::new(),
            }),
        })
    }
}

fn gvr_of<K: Resource<DynamicType = ()>>() -> GroupVersionResource {
    GroupVersionResource::gvr(&K::group(&()), &K::version(&()), &K::plural(&()))
}

fn gvr_key(gvr: &GroupVersionResource) -> GvrKey {
    (gvr.group.clone(), gvr.version.clone(), gvr.resource.clone())
}

impl SharedInformerFactory {
    /// A factory over all namespaces with default settings (client-go's
    /// `NewSharedInformerFactory(client, 0)`).
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// let factory = kube_codegen_runtime::factory::SharedInformerFactory::new(client);
    /// # }
    /// ```
    pub fn new(client: impl Into<kube::Client>) -> Self {
        Self::builder(client).build()
    }

    /// A builder; generated clientsets convert into a `kube::Client` (or pass `cs.client().clone()`).
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// let b = kube_codegen_runtime::factory::SharedInformerFactory::builder(client);
    /// # }
    /// ```
    pub fn builder(client: impl Into<kube::Client>) -> FactoryBuilder {
        FactoryBuilder {
            client: client.into(),
            options: InformerOptions::default(),
            resync_for: HashMap::new(),
            transforms: HashMap::new(),
            into: std::marker::PhantomData,
        }
    }

    /// The client informers list and watch with.
    ///
    /// ```no_run
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) { let c = f.client().clone(); }
    /// ```
    pub fn client(&self) -> &kube::Client {
        &self.inner.client
    }

    /// The namespace namespaced informers are restricted to, if any.
    ///
    /// ```no_run
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) { let ns = f.namespace(); }
    /// ```
    pub fn namespace(&self) -> Option<&str> {
        self.inner.options.get_namespace()
    }

    /// The shared informer for `K`, created on first request with the factory's settings.
    /// Every caller gets the same informer (and so the same watch and cache).
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::Service;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let services = f.informer_for::<Service>();
    /// # }
    /// ```
    pub fn informer_for<K: InformerObject>(&self) -> SharedIndexInformer<K> {
        self.informer_for_custom::<K>(|b| b)
    }

    /// Like [`SharedInformerFactory::informer_for`], with `resync` if the informer is created
    /// now (an existing informer keeps its settings, as in client-go).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use k8s_openapi::api::core::v1::Service;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let services = f.informer_for_with::<Service>(Duration::from_secs(30));
    /// # }
    /// ```
    pub fn informer_for_with<K: InformerObject>(&self, resync: Duration) -> SharedIndexInformer<K> {
        self.informer_for_custom::<K>(|b| b.map_options(|o| o.resync(resync)))
    }

    /// Like [`SharedInformerFactory::informer_for`]; if the informer is created now,
    /// `configure` adjusts the builder the factory prepared (client-go's `InformerFor` with a
    /// custom `newFunc`).
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let pods = f.informer_for_custom::<Pod>(|b| b.map_options(|o| o.page_size(Some(100))));
    /// # }
    /// ```
    pub fn informer_for_custom<K: InformerObject>(
        &self,
        configure: impl FnOnce(InformerBuilder<K>) -> InformerBuilder<K>,
    ) -> SharedIndexInformer<K> {
        let namespace = self
            .inner
            .options
            .get_namespace()
            .map(String::from)
            .filter(|_| is_namespaced::<K>());
        let key = Key::Type(TypeId::of::<K>(), namespace.clone());
        let id = InformerId::of::<K>(namespace.as_deref());
        let informer = self.shared_informer(key, id, || {
            configure(self.prepare::<K>(InformerTarget::of::<K>())).build()
        });
        self.inner
            .state
            .lock()
            .constructors
            .entry(gvr_key(&gvr_of::<K>()))
            .or_insert_with(|| constructor::<K>());
        informer
    }

    /// The shared informer of a resource chosen at run time (client-go's dynamic informers):
    /// objects of type `K` (usually [`DynamicObject`](kube::core::DynamicObject)) from
    /// `target`, one informer per group-version-resource and namespace, created on first
    /// request with the factory's options (and `K`'s resync period and transform, if set). It
    /// starts, syncs and stops with the factory's typed informers. The `dynamic` module's
    /// `DynamicSharedInformerFactory` is the usual way in.
    ///
    /// ```no_run
    /// use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    /// use kube_codegen_runtime::informer::InformerTarget;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    /// let target = InformerTarget::new(ApiResource::from_gvk_with_plural(&gvk, "deployments"), true);
    /// let deployments = f.dynamic_informer_for::<DynamicObject>(target);
    /// # }
    /// ```
    pub fn dynamic_informer_for<K: CacheObject>(
        &self,
        target: InformerTarget,
    ) -> SharedIndexInformer<K> {
        let namespace = self
            .inner
            .options
            .get_namespace()
            .map(String::from)
            .filter(|_| target.namespaced);
        let gvr = (
            target.resource.group.clone(),
            target.resource.version.clone(),
            target.resource.plural.clone(),
        );
        let key = Key::Resource(TypeId::of::<K>(), gvr, namespace.clone());
        let id = InformerId::dynamic::<K>(&target, namespace.as_deref());
        self.shared_informer(key, id, || self.prepare::<K>(target).build())
    }

    /// The informer under `key`, or a new one from `make` (built without the lock, so that it
    /// may use the factory) registered under `key` and `id`.
    fn shared_informer<K: CacheObject>(
        &self,
        key: Key,
        id: InformerId,
        make: impl FnOnce() -> SharedIndexInformer<K>,
    ) -> SharedIndexInformer<K> {
        let existing = |st: &State| {
            st.index
                .get(&key)
                .and_then(|&i| st.informers.get(i))
                .and_then(|e| e.informer.as_any().downcast_ref::<SharedIndexInformer<K>>())
                .cloned()
        };
        if let Some(found) = existing(&self.inner.state.lock()) {
            return found;
        }
        let informer = make();
        let mut st = self.inner.state.lock();
        if let Some(found) = existing(&st) {
            return found;
        }
        tracing::debug!(informer = %informer.name(), "informer created");
        let at = st.informers.len();
        st.index.insert(key, at);
        st.informers.push(Entry {
            id,
            informer: Arc::new(informer.clone()),
            started: false,
        });
        informer
    }

    /// The builder [`SharedInformerFactory::informer_for`] uses for `K`: the factory's client
    /// and options, with `K`'s own resync period and transform if it has them.
    fn prepare<K: CacheObject>(&self, target: InformerTarget) -> InformerBuilder<K> {
        let inner = &self.inner;
        let mut options = inner.options.clone();
        if let Some(d) = inner.resync_for.get(&TypeId::of::<K>()) {
            options = options.with_resync(Some(*d));
        }
        let typed = inner
            .transforms
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<TransformFn<K>>())
            .cloned();
        SharedIndexInformer::<K>::builder_for(inner.client.clone(), target)
            .options(options)
            .transform_arc(typed)
    }

    /// A lister over `K`'s shared informer.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let deployments = f.lister_for::<Deployment>();
    /// # }
    /// ```
    pub fn lister_for<K: InformerObject>(&self) -> Lister<K> {
        self.informer_for::<K>().lister()
    }

    /// Makes `K` available to [`SharedInformerFactory::for_resource`] under its
    /// group-version-resource, without creating its informer yet. (Informers created with
    /// `informer_for` are registered automatically.)
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// f.register::<ConfigMap>();
    /// # }
    /// ```
    pub fn register<K: InformerObject>(&self) {
        let mut st = self.inner.state.lock();
        st.constructors
            .entry(gvr_key(&gvr_of::<K>()))
            .or_insert_with(|| constructor::<K>());
    }

    /// `K`'s shared informer as a [`GenericInformer`] (created on first request, like
    /// [`SharedInformerFactory::informer_for`]). Generated factories answer `for_resource` with
    /// it, one match arm per kind, so a kind's informer is compiled only where it is asked for.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let generic = f.generic_informer_for::<ConfigMap>();
    /// assert_eq!(generic.gvr().resource, "configmaps");
    /// # }
    /// ```
    pub fn generic_informer_for<K: InformerObject>(&self) -> GenericInformer {
        GenericInformer {
            gvr: gvr_of::<K>(),
            informer: Arc::new(self.informer_for::<K>()),
        }
    }

    /// The informer for a resource by group-version-resource (client-go's `ForResource`);
    /// creates it if its type was registered.
    ///
    /// ```no_run
    /// # use kube::core::GroupVersionResource;
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let err = f.for_resource(&GroupVersionResource::gvr("example.com", "v1", "widgets")).unwrap_err();
    /// assert_eq!(err.to_string(), "no informer found for example.com/v1, Resource=widgets");
    /// # }
    /// ```
    pub fn for_resource(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<GenericInformer, FactoryError> {
        let ctor = self
            .inner
            .state
            .lock()
            .constructors
            .get(&gvr_key(gvr))
            .cloned();
        match ctor {
            Some(c) => Ok(c(self)),
            None => {
                let name = if gvr.group.is_empty() {
                    format!("{}, Resource={}", gvr.version, gvr.resource)
                } else {
                    format!("{}/{}, Resource={}", gvr.group, gvr.version, gvr.resource)
                };
                Err(FactoryError::NoInformerFound(name))
            }
        }
    }

    /// The informers created so far.
    ///
    /// ```no_run
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// for id in f.informer_ids() { println!("{id}"); }
    /// # }
    /// ```
    pub fn informer_ids(&self) -> Vec<InformerId> {
        self.inner
            .state
            .lock()
            .informers
            .iter()
            .map(|e| e.id.clone())
            .collect()
    }

    /// Starts every informer not started yet, each on its own task; calling it again starts
    /// informers requested since. Does nothing after [`SharedInformerFactory::shutdown`], and
    /// (with an error logged) outside a Tokio runtime.
    ///
    /// ```no_run
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) { f.start(); }
    /// ```
    pub fn start(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::error!(
                "SharedInformerFactory::start called outside a Tokio runtime; nothing started"
            );
            return;
        };
        let mut st = self.inner.state.lock();
        if st.shut_down {
            return;
        }
        let mut spawned = Vec::new();
        for e in st.informers.iter_mut().filter(|e| !e.started) {
            e.started = true;
            let run = e.informer.run(self.inner.cancel.child_token());
            let name = e.id.to_string();
            let task = rt.spawn(async move {
                if let Err(err) = run.await {
                    tracing::warn!(informer = %name, error = %err, "informer did not run");
                }
            });
            spawned.push(
                async move {
                    if let Err(e) = task.await {
                        tracing::error!(error = %e, "informer task failed");
                    }
                }
                .boxed()
                .shared(),
            );
        }
        st.tasks.extend(spawned);
    }

    /// Waits until every started informer has synced (or stopped) and reports each one.
    ///
    /// ```no_run
    /// # async fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) {
    /// let synced = f.wait_for_cache_sync().await;
    /// if !synced.all_synced() { eprintln!("not synced: {:?}", synced.failed()); }
    /// # }
    /// ```
    pub async fn wait_for_cache_sync(&self) -> CacheSyncResult {
        let started: Vec<(InformerId, Arc<dyn ErasedInformer>)> = {
            let st = self.inner.state.lock();
            st.informers
                .iter()
                .filter(|e| e.started)
                .map(|e| (e.id.clone(), e.informer.clone()))
                .collect()
        };
        let waits = started.into_iter().map(|(id, inf)| async move {
            let ok = inf.wait_for_sync().await.is_ok();
            (id, ok)
        });
        CacheSyncResult(futures::future::join_all(waits).await.into_iter().collect())
    }

    /// Stops every informer (ending its watch) and waits until all their tasks have ended.
    /// Safe to call several times and from several tasks; each call returns once everything
    /// has stopped. Informers cannot be started again afterwards.
    ///
    /// ```no_run
    /// # async fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) { f.shutdown().await; }
    /// ```
    pub async fn shutdown(&self) {
        let tasks = {
            let mut st = self.inner.state.lock();
            st.shut_down = true;
            st.tasks.clone()
        };
        self.inner.cancel.cancel();
        futures::future::join_all(tasks).await;
    }

    /// Whether [`SharedInformerFactory::shutdown`] was called.
    ///
    /// ```no_run
    /// # fn demo(f: kube_codegen_runtime::factory::SharedInformerFactory) { assert!(!f.is_shut_down()); }
    /// ```
    pub fn is_shut_down(&self) -> bool {
        self.inner.state.lock().shut_down
    }
}

fn constructor<K: InformerObject>() -> Constructor {
    Arc::new(|factory: &SharedInformerFactory| factory.generic_informer_for::<K>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::BackoffConfig;
    use crate::informer::mock::{MockApi, cm, event};
    use crate::labels::Selector;
    use crate::lister::downcast_arc;
    use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret};

    fn fast() -> BackoffConfig {
        BackoffConfig {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(50),
            ..BackoffConfig::default()
        }
    }

    async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
        for _ in 0..1000 {
            if cond() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("timed out waiting for {what}");
    }

    #[tokio::test]
    async fn consumers_share_one_informer_and_one_watch() {
        let api = MockApi::new();
        api.push_list(vec![cm("a", "x", "1"), cm("b", "y", "1")], "5");
        let live = api.push_live_watch();
        let factory = SharedInformerFactory::builder(api.client())
            .options(InformerOptions::default().backoff(fast()))
            .build();
        let first = factory.informer_for::<ConfigMap>();
        let second = factory.clone().informer_for::<ConfigMap>();
        let lister = factory.lister_for::<ConfigMap>();
        assert!(first.ptr_eq(&second));
        assert_eq!(factory.informer_ids().len(), 1);
        factory.start();
        factory.start(); // idempotent
        let synced =
            tokio::time::timeout(Duration::from_secs(10), factory.wait_for_cache_sync()).await;
        let synced = synced.unwrap_or_else(|_| panic!("no sync"));
        assert!(synced.all_synced());
        assert_eq!(synced.len(), 1);
        assert_eq!(
            lister.namespaced("a").list(&Selector::everything()).len(),
            1
        );
        live.send(event("ADDED", cm("a", "z", "6")));
        eventually("z seen by both", || {
            first.store().len() == 3 && second.store().len() == 3
        })
        .await;
        assert_eq!(api.list_requests().len(), 1, "one list");
        assert_eq!(api.watch_requests().len(), 1, "one watch");
        factory.shutdown().await;
        assert!(live.is_closed());
    }

    #[tokio::test]
    async fn start_again_starts_newly_requested_informers_and_shutdown_stops_all() {
        let api = MockApi::new();
        api.push_list(vec![cm("a", "x", "1")], "5");
        let factory = SharedInformerFactory::builder(api.client())
            .options(
                InformerOptions::default()
                    .namespace("a")
                    .tweak_list_params(|lp| lp.label_selector = Some("team=x".into()))
                    .backoff(fast()),
            )
            .build();
        let cms = factory.informer_for::<ConfigMap>();
        factory.start();
        assert!(factory.wait_for_cache_sync().await.all_synced());
        // Secrets are requested after start; a second start starts them.
        api.push_list(Vec::new(), "7");
        let secrets = factory.informer_for::<Secret>();
        assert!(!secrets.is_started());
        factory.start();
        let synced = factory.wait_for_cache_sync().await;
        assert_eq!(synced.len(), 2);
        assert!(synced.all_synced());
        // Nodes are cluster-scoped: the namespace does not apply.
        api.push_list(Vec::new(), "8");
        let nodes = factory.informer_for::<Node>();
        factory.start();
        assert!(factory.wait_for_cache_sync().await.all_synced());
        let ids = factory.informer_ids();
        assert_eq!(
            ids.iter()
                .map(|i| i.namespace.as_deref())
                .collect::<Vec<_>>(),
            [Some("a"), Some("a"), None]
        );
        let paths: Vec<String> = api.list_requests().iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            [
                "/api/v1/namespaces/a/configmaps",
                "/api/v1/namespaces/a/secrets",
                "/api/v1/nodes"
            ]
        );
        assert!(
            api.requests()
                .iter()
                .all(|r| r.q("labelSelector") == Some("team=x"))
        );
        eventually("three watches", || api.open_idle_watches() == 3).await;

        let (f1, f2) = (factory.clone(), factory.clone());
        tokio::join!(f1.shutdown(), f2.shutdown());
        assert_eq!(api.open_idle_watches(), 0, "every watch ended");
        assert!(cms.is_stopped() && secrets.is_stopped() && nodes.is_stopped());
        // Nothing starts after shutdown.
        let _late = factory.informer_for::<k8s_openapi::api::core::v1::Service>();
        factory.start();
        assert!(factory.wait_for_cache_sync().await.len() == 3);
    }

    #[tokio::test]
    async fn resync_and_transforms_follow_the_factory_settings() {
        let api = MockApi::new();
        api.push_list(vec![cm("a", "x", "1")], "5");
        let factory = SharedInformerFactory::builder(api.client())
            .options(
                InformerOptions::default()
                    .resync(Duration::from_secs(3600))
                    .strip_managed_fields()
                    .backoff(fast()),
            )
            .resync_for::<ConfigMap>(Duration::from_millis(100))
            .transform_for::<ConfigMap>(|mut c| {
                c.data = None;
                c
            })
            .build();
        let updates = Arc::new(Mutex::new(0usize));
        let counter = updates.clone();
        let informer = factory.informer_for::<ConfigMap>();
        informer
            .add_event_handler(
                crate::informer::EventHandlerFuncs::new()
                    .update_func(move |_, _| *counter.lock() += 1),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        factory.start();
        assert!(factory.wait_for_cache_sync().await.all_synced());
        let x = informer
            .lister()
            .namespaced("a")
            .get("x")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(x.metadata.managed_fields.is_none() && x.data.is_none());
        eventually("two resyncs", || *updates.lock() >= 2).await;
        factory.shutdown().await;
    }

    #[tokio::test]
    async fn generic_lookup_by_group_version_resource() {
        let api = MockApi::new();
        api.push_list(vec![cm("a", "x", "1")], "5");
        let factory = SharedInformerFactory::builder(api.client())
            .options(InformerOptions::default().backoff(fast()))
            .build();
        let gvr = GroupVersionResource::gvr("", "v1", "configmaps");
        assert_eq!(
            factory.for_resource(&gvr).err(),
            Some(FactoryError::NoInformerFound(
                "v1, Resource=configmaps".into()
            ))
        );
        factory.register::<ConfigMap>();
        assert!(
            factory.informer_ids().is_empty(),
            "register does not create"
        );
        let generic = factory.for_resource(&gvr).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(generic.gvr().resource, "configmaps");
        let typed = generic
            .downcast::<ConfigMap>()
            .unwrap_or_else(|| panic!("not a ConfigMap informer"));
        assert!(generic.downcast::<Secret>().is_none());
        assert!(typed.ptr_eq(&factory.informer_for::<ConfigMap>()));
        factory.start();
        generic
            .wait_for_sync()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(generic.has_synced());
        let obj = generic
            .lister()
            .namespaced("a")
            .get("x")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(downcast_arc::<ConfigMap>(obj).is_some());
        assert!(crate::api_status::is_not_found(
            &generic
                .lister()
                .namespaced("a")
                .get("nope")
                .err()
                .unwrap_or_else(|| panic!("found"))
        ));
        factory.shutdown().await;
    }
}
