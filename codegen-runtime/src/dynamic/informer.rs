//! Dynamic shared informers (client-go's `dynamicinformer` and `dynamiclister`): informers and
//! listers of [`DynamicObject`]s for resources chosen at run time, one per
//! group-version-resource and namespace, on the runtime's informer, store and lister.
//!
//! [`DynamicSharedInformerFactory`] is a thin front over the runtime's
//! [`SharedInformerFactory`], which it derefs to: `start`, `wait_for_cache_sync`, `shutdown` and
//! the options are that factory's, and a dynamic factory made `From` a typed one (or a generated
//! one, through its `Deref`) starts and stops its dynamic informers together with the typed ones.
//!
//! ```no_run
//! use std::time::Duration;
//! use kube::core::GroupVersionResource;
//! use kube_codegen_runtime::InformerOptions;
//! use kube_codegen_runtime::dynamic::DynamicSharedInformerFactory;
//! use kube_codegen_runtime::labels::Selector;
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let factory = DynamicSharedInformerFactory::builder(client)
//!     .options(InformerOptions::default().namespace("default").resync(Duration::from_secs(60)))
//!     .build();
//! let deployments = factory.for_resource(&GroupVersionResource::gvr("apps", "v1", "deployments"));
//! factory.start();
//! assert!(factory.wait_for_cache_sync().await.all_synced());
//! for d in deployments.lister().namespaced("default").list(&Selector::parse("app=web")?) {
//!     println!("{:?} wants {:?} replicas", d.metadata.name, d.data["spec"]["replicas"]);
//! }
//! factory.shutdown().await;
//! # Ok(()) }
//! ```

use std::ops::Deref;

use kube::core::{ApiResource, DynamicObject, GroupVersionKind, GroupVersionResource};

use crate::discovery::RestMapping;
use crate::factory::{FactoryBuilder, SharedInformerFactory};
use crate::informer::{InformerTarget, SharedIndexInformer};
use crate::lister::Lister;

/// The informer and lister of one resource (client-go's `GenericInformer` as the dynamic
/// factory returns it).
///
/// ```no_run
/// # fn demo(i: kube_codegen_runtime::dynamic::DynamicInformer) {
/// let store_len = i.informer().store().len();
/// let got = i.lister().namespaced("default").get("web");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct DynamicInformer {
    gvr: GroupVersionResource,
    informer: SharedIndexInformer<DynamicObject>,
}

impl DynamicInformer {
    /// The resource.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// The shared informer (event handlers, indexers, sync state).
    pub fn informer(&self) -> &SharedIndexInformer<DynamicObject> {
        &self.informer
    }

    /// A lister over the informer's cache; NotFound errors name the resource and group as the
    /// API server does (`deployments.apps "x" not found`).
    pub fn lister(&self) -> Lister<DynamicObject> {
        self.informer.lister()
    }
}

/// Shares one dynamic informer per group-version-resource and namespace (client-go's
/// `DynamicSharedInformerFactory`). Derefs to the runtime factory it wraps. See the
/// [module docs](self).
///
/// ```no_run
/// # use kube::core::GroupVersionResource;
/// # fn demo(client: kube::Client) {
/// use kube_codegen_runtime::dynamic::DynamicSharedInformerFactory;
/// let factory = DynamicSharedInformerFactory::new(client);
/// let gvr = GroupVersionResource::gvr("", "v1", "configmaps");
/// let a = factory.for_resource(&gvr);
/// let b = factory.for_resource(&gvr);
/// assert!(a.informer().ptr_eq(b.informer())); // one informer, one watch
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct DynamicSharedInformerFactory {
    factory: SharedInformerFactory,
}

impl From<SharedInformerFactory> for DynamicSharedInformerFactory {
    fn from(factory: SharedInformerFactory) -> Self {
        DynamicSharedInformerFactory { factory }
    }
}

impl Deref for DynamicSharedInformerFactory {
    type Target = SharedInformerFactory;

    fn deref(&self) -> &SharedInformerFactory {
        &self.factory
    }
}

impl DynamicSharedInformerFactory {
    /// A factory over all namespaces with default options (client-go's
    /// `NewDynamicSharedInformerFactory(client, 0)`).
    pub fn new(client: impl Into<kube::Client>) -> Self {
        Self::builder(client).build()
    }

    /// A builder with the runtime factory's options (namespace, list tweaks, resync,
    /// transforms): client-go's `NewFilteredDynamicSharedInformerFactory`.
    pub fn builder(client: impl Into<kube::Client>) -> FactoryBuilder<Self> {
        SharedInformerFactory::builder(client).typed::<Self>()
    }

    /// The runtime factory this one fronts (shared by any typed front made from it).
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The informer of `gvr` (client-go's `ForResource`), created on first request. The
    /// factory's namespace applies, as in client-go: for a cluster-scoped resource on a
    /// namespace-restricted factory, use [`Self::for_api_resource`] with `namespaced: false`
    /// (or a discovery `RestMapping`, which knows the scope).
    pub fn for_resource(&self, gvr: &GroupVersionResource) -> DynamicInformer {
        let gvk = GroupVersionKind::gvk(&gvr.group, &gvr.version, "");
        self.for_api_resource(
            &ApiResource::from_gvk_with_plural(&gvk, &gvr.resource),
            true,
        )
    }

    /// The informer of a resource as discovery maps it (with its kind and scope): the way in
    /// for a resource whose scope is not known in advance.
    ///
    /// ```no_run
    /// # use kube_codegen_runtime::discovery::{DiscoveryClient, GroupKind};
    /// # use kube_codegen_runtime::dynamic::DynamicSharedInformerFactory;
    /// # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let mapper = DiscoveryClient::new(client.clone()).rest_mapper().await?;
    /// let factory = DynamicSharedInformerFactory::new(client);
    /// let nodes = factory.for_mapping(&mapper.rest_mapping(&GroupKind::new("", "Node"), &[])?);
    /// # Ok(()) }
    /// ```
    pub fn for_mapping(&self, mapping: &RestMapping) -> DynamicInformer {
        self.for_api_resource(&mapping.api_resource(), mapping.namespaced())
    }

    /// The informer of `resource` (its `kind` may be empty), namespaced or cluster-scoped:
    /// the factory's namespace applies to namespaced resources only.
    pub fn for_api_resource(&self, resource: &ApiResource, namespaced: bool) -> DynamicInformer {
        let gvr = GroupVersionResource::gvr(&resource.group, &resource.version, &resource.plural);
        let informer = self
            .factory
            .dynamic_informer_for::<DynamicObject>(InformerTarget::new(
                resource.clone(),
                namespaced,
            ));
        DynamicInformer { gvr, informer }
    }
}
