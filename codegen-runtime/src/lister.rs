//! Listers: read-only, namespace-aware views of an informer's [`Store`] (client-go's
//! `listers.ResourceIndexer`), the type every generated `MydemoLister` wraps.
//!
//! * [`Lister::list`] — every object matching a label selector, across namespaces;
//! * [`Lister::namespaced`] → [`NamespaceLister`] — `get(name)` and `list(selector)` within
//!   one namespace, through the cache's namespace index (never a scan of other namespaces);
//! * [`Lister::get`] — by name, for cluster-scoped kinds.
//!
//! A missing object is the same [`kube::Error`] the API server returns
//! ([`api_status::new_not_found`], `mydemos.crddemo.k8s.io "x" not found`), so code written against
//! a lister and against a client handles it alike with [`api_status::is_not_found`]. Results are
//! `Arc<K>` shared with the cache: no copies, and they must be treated as read-only.
//!
//! [`GenericLister`] is the type-erased form used by the generated informer factory's
//! lookup by group-version-resource.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::ObjectMeta;
//! use kube_codegen_runtime::{Lister, Selector, Store, api_status};
//!
//! let store = Store::from_objects(
//!     [ConfigMap {
//!         metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() },
//!         ..Default::default()
//!     }],
//!     [],
//! )?;
//! let lister = Lister::for_resource(store);
//! assert!(lister.namespaced("ns").get("a").is_ok());
//! let err = lister.namespaced("ns").get("b").unwrap_err();
//! assert!(api_status::is_not_found(&err));
//! assert_eq!(api_status::status(&err).map(|s| s.message.as_str()), Some("configmaps \"b\" not found"));
//! assert_eq!(lister.list(&Selector::everything()).len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Debug};
use std::sync::Arc;

use kube::Resource;

use crate::api_status;
use crate::labels::Selector;
pub use crate::store::GenericObject;
use crate::store::Store;

/// Lists and gets objects of one resource from a [`Store`].
///
/// ```
/// use k8s_openapi::api::core::v1::Node;
/// use kube_codegen_runtime::{Lister, Store};
///
/// let nodes = Lister::<Node>::for_resource(Store::default());
/// assert!(nodes.get("node-1").is_err());
/// ```
pub struct Lister<K> {
    store: Store<K>,
    group: Arc<str>,
    resource: Arc<str>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            store: self.store.clone(),
            group: self.group.clone(),
            resource: self.resource.clone(),
        }
    }
}

impl<K> Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("group", &self.group)
            .field("resource", &self.resource)
            .finish()
    }
}

impl<K: Resource + Send + Sync + 'static> Lister<K> {
    /// A lister over `store` whose NotFound errors name `resource` in `group`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// let l = Lister::<ConfigMap>::new(Store::default(), "", "configmaps");
    /// ```
    pub fn new(store: Store<K>, group: &str, resource: &str) -> Self {
        Lister {
            store,
            group: Arc::from(group),
            resource: Arc::from(resource),
        }
    }

    /// A lister over `store` whose NotFound errors use `K`'s group and plural.
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// let l = Lister::<Deployment>::for_resource(Store::default());
    /// let err = l.get("x").unwrap_err();
    /// assert_eq!(kube_codegen_runtime::api_status::status(&err).map(|s| s.message.as_str()), Some("deployments.apps \"x\" not found"));
    /// ```
    pub fn for_resource(store: Store<K>) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        Self::new(store, &K::group(&()), &K::plural(&()))
    }

    /// The objects in every namespace whose labels match `selector`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Selector, Store};
    /// let l = Lister::<ConfigMap>::for_resource(Store::default());
    /// assert!(l.list(&"app=web".parse::<Selector>()?).is_empty());
    /// # Ok::<(), kube_codegen_runtime::labels::SelectorError>(())
    /// ```
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.store.list_selected(None, selector)
    }

    /// The cluster-scoped object `name` (for namespaced kinds use [`Lister::namespaced`]).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Namespace;
    /// # use kube_codegen_runtime::{Lister, Store, api_status};
    /// let l = Lister::<Namespace>::for_resource(Store::default());
    /// assert!(api_status::is_not_found(&l.get("default").unwrap_err()));
    /// ```
    pub fn get(&self, name: &str) -> Result<Arc<K>, kube::Error> {
        self.store
            .get(None, name)
            .ok_or_else(|| api_status::new_not_found(&self.group, &self.resource, name))
    }

    /// The objects of one namespace.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// let l = Lister::<ConfigMap>::for_resource(Store::default());
    /// let in_default = l.namespaced("default");
    /// assert_eq!(in_default.namespace(), "default");
    /// ```
    pub fn namespaced<'a>(&'a self, namespace: &'a str) -> NamespaceLister<'a, K> {
        NamespaceLister {
            lister: self,
            namespace,
        }
    }

    /// The store this lister reads.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// let l = Lister::<ConfigMap>::for_resource(Store::default());
    /// assert!(l.store().is_empty());
    /// ```
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// The API group NotFound errors name.
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// assert_eq!(Lister::<Deployment>::for_resource(Store::default()).group(), "apps");
    /// ```
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The plural resource NotFound errors name.
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// assert_eq!(Lister::<Deployment>::for_resource(Store::default()).resource(), "deployments");
    /// ```
    pub fn resource(&self) -> &str {
        &self.resource
    }
}

/// Gets and lists objects of one namespace (client-go's `NamespaceLister`).
///
/// ```
/// # use k8s_openapi::api::core::v1::Pod;
/// # use kube_codegen_runtime::{Lister, Selector, Store};
/// let l = Lister::<Pod>::for_resource(Store::default());
/// let pods = l.namespaced("kube-system").list(&Selector::everything());
/// assert!(pods.is_empty());
/// ```
pub struct NamespaceLister<'a, K> {
    lister: &'a Lister<K>,
    namespace: &'a str,
}

impl<K> Clone for NamespaceLister<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for NamespaceLister<'_, K> {}

impl<K> Debug for NamespaceLister<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("resource", &self.lister.resource)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Resource + Send + Sync + 'static> NamespaceLister<'_, K> {
    /// The object `name` in this namespace, or the API's NotFound error.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # use kube_codegen_runtime::{Lister, Store, api_status};
    /// let l = Lister::<Pod>::for_resource(Store::default());
    /// let err = l.namespaced("ns").get("web-0").unwrap_err();
    /// assert_eq!(api_status::code(&err), Some(404));
    /// ```
    pub fn get(&self, name: &str) -> Result<Arc<K>, kube::Error> {
        self.lister
            .store
            .get(Some(self.namespace), name)
            .ok_or_else(|| {
                api_status::new_not_found(&self.lister.group, &self.lister.resource, name)
            })
    }

    /// The objects in this namespace whose labels match `selector` (through the namespace
    /// index).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # use kube_codegen_runtime::{Lister, Selector, Store};
    /// let l = Lister::<Pod>::for_resource(Store::default());
    /// assert!(l.namespaced("ns").list(&Selector::parse("app")?).is_empty());
    /// # Ok::<(), kube_codegen_runtime::labels::SelectorError>(())
    /// ```
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.lister
            .store
            .list_selected(Some(self.namespace), selector)
    }

    /// The namespace.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # use kube_codegen_runtime::{Lister, Store};
    /// let l = Lister::<Pod>::for_resource(Store::default());
    /// assert_eq!(l.namespaced("a").namespace(), "a");
    /// ```
    pub fn namespace(&self) -> &str {
        self.namespace
    }
}

/// The concrete object behind a [`GenericObject`], if it is a `K` (no copy).
///
/// ```
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # use kube_codegen_runtime::lister::{GenericObject, downcast_arc};
/// let obj: Arc<dyn GenericObject> = Arc::new(Secret::default());
/// assert!(downcast_arc::<ConfigMap>(obj).is_none());
/// ```
pub fn downcast_arc<K: Send + Sync + 'static>(obj: Arc<dyn GenericObject>) -> Option<Arc<K>> {
    obj.into_any_arc().downcast::<K>().ok()
}

trait ErasedStore: Send + Sync {
    fn list(&self, namespace: Option<&str>, selector: &Selector) -> Vec<Arc<dyn GenericObject>>;
    fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<dyn GenericObject>>;
}

impl<K: Resource + Debug + Send + Sync + 'static> ErasedStore for Store<K> {
    fn list(&self, namespace: Option<&str>, selector: &Selector) -> Vec<Arc<dyn GenericObject>> {
        self.list_selected(namespace, selector)
            .into_iter()
            .map(|o| o as Arc<dyn GenericObject>)
            .collect()
    }

    fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<dyn GenericObject>> {
        Store::get(self, namespace, name).map(|o| o as Arc<dyn GenericObject>)
    }
}

/// A lister for a resource whose type is known only at run time (client-go's
/// `cache.GenericLister`), as the informer factory's lookup by group-version-resource returns.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::{Lister, Selector, Store, lister::GenericLister};
///
/// let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
/// assert!(generic.list(&Selector::everything()).is_empty());
/// assert!(generic.namespaced("ns").get("x").is_err());
/// ```
#[derive(Clone)]
pub struct GenericLister {
    store: Arc<dyn ErasedStore>,
    group: Arc<str>,
    resource: Arc<str>,
}

impl Debug for GenericLister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericLister")
            .field("group", &self.group)
            .field("resource", &self.resource)
            .finish()
    }
}

impl<K: Resource + Debug + Send + Sync + 'static> From<Lister<K>> for GenericLister {
    fn from(l: Lister<K>) -> Self {
        GenericLister {
            store: Arc::new(l.store),
            group: l.group,
            resource: l.resource,
        }
    }
}

impl GenericLister {
    /// The objects in every namespace whose labels match `selector`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Selector, Store, lister::GenericLister};
    /// # let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
    /// let all = generic.list(&Selector::everything());
    /// ```
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn GenericObject>> {
        self.store.list(None, selector)
    }

    /// The cluster-scoped object `name`, or the API's NotFound error.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Node;
    /// # use kube_codegen_runtime::{Lister, Store, lister::GenericLister};
    /// # let generic = GenericLister::from(Lister::<Node>::for_resource(Store::default()));
    /// assert!(generic.get("n1").is_err());
    /// ```
    pub fn get(&self, name: &str) -> Result<Arc<dyn GenericObject>, kube::Error> {
        self.store
            .get(None, name)
            .ok_or_else(|| api_status::new_not_found(&self.group, &self.resource, name))
    }

    /// The objects of one namespace.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Selector, Store, lister::GenericLister};
    /// # let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
    /// assert!(generic.namespaced("ns").list(&Selector::everything()).is_empty());
    /// ```
    pub fn namespaced<'a>(&'a self, namespace: &'a str) -> GenericNamespaceLister<'a> {
        GenericNamespaceLister {
            lister: self,
            namespace,
        }
    }
}

/// [`GenericLister`] restricted to one namespace.
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube_codegen_runtime::{Lister, Store, lister::GenericLister};
/// # let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
/// let ns = generic.namespaced("default");
/// assert!(ns.get("missing").is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GenericNamespaceLister<'a> {
    lister: &'a GenericLister,
    namespace: &'a str,
}

impl GenericNamespaceLister<'_> {
    /// The object `name` in this namespace, or the API's NotFound error.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Store, api_status, lister::GenericLister};
    /// # let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
    /// assert!(api_status::is_not_found(&generic.namespaced("a").get("b").unwrap_err()));
    /// ```
    pub fn get(&self, name: &str) -> Result<Arc<dyn GenericObject>, kube::Error> {
        self.lister
            .store
            .get(Some(self.namespace), name)
            .ok_or_else(|| {
                api_status::new_not_found(&self.lister.group, &self.lister.resource, name)
            })
    }

    /// The objects in this namespace whose labels match `selector`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::{Lister, Selector, Store, lister::GenericLister};
    /// # let generic = GenericLister::from(Lister::<ConfigMap>::for_resource(Store::default()));
    /// assert!(generic.namespaced("a").list(&Selector::everything()).is_empty());
    /// ```
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn GenericObject>> {
        self.lister.store.list(Some(self.namespace), selector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::ObjectMeta;

    fn cm(ns: &str, name: &str, labels: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn names(v: &[Arc<ConfigMap>]) -> Vec<String> {
        let mut n: Vec<String> = v.iter().filter_map(|o| o.metadata.name.clone()).collect();
        n.sort();
        n
    }

    fn sel(s: &str) -> Selector {
        Selector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn fixture() -> Lister<ConfigMap> {
        let store = Store::from_objects(
            [
                cm("a", "web", &[("app", "web"), ("tier", "front")]),
                cm("a", "db", &[("app", "db")]),
                cm("b", "web", &[("app", "web")]),
                cm("b", "cache", &[]),
            ],
            [],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Lister::for_resource(store)
    }

    #[test]
    fn namespaced_get_and_list() {
        let l = fixture();
        let a = l.namespaced("a");
        assert_eq!(
            a.get("web")
                .ok()
                .and_then(|o| o.metadata.namespace.clone())
                .as_deref(),
            Some("a")
        );
        assert_eq!(names(&a.list(&Selector::everything())), ["db", "web"]);
        assert_eq!(names(&a.list(&sel("app=web"))), ["web"]);
        assert_eq!(names(&a.list(&sel("app in (web,db),tier!=front"))), ["db"]);
        assert_eq!(names(&l.namespaced("b").list(&sel("!app"))), ["cache"]);
        assert!(l.namespaced("zzz").list(&Selector::everything()).is_empty());
        assert!(l.namespaced("b").list(&Selector::nothing()).is_empty());
    }

    #[test]
    fn list_across_namespaces_filters_by_selector() {
        let l = fixture();
        assert_eq!(l.list(&Selector::everything()).len(), 4);
        assert_eq!(names(&l.list(&sel("app=web"))), ["web", "web"]);
        assert_eq!(names(&l.list(&sel("app"))), ["db", "web", "web"]);
        assert!(l.list(&Selector::nothing()).is_empty());
    }

    #[test]
    fn not_found_has_the_api_servers_shape() {
        let l = fixture();
        let err = match l.namespaced("a").get("missing") {
            Ok(o) => panic!("found {o:?}"),
            Err(e) => e,
        };
        assert!(api_status::is_not_found(&err));
        let status = api_status::status(&err)
            .cloned()
            .unwrap_or_else(|| panic!("not an API error: {err}"));
        assert_eq!(status.code, 404);
        assert_eq!(status.reason, "NotFound");
        assert_eq!(status.message, "configmaps \"missing\" not found");
        let details = status.details.unwrap_or_else(|| panic!("no details"));
        assert_eq!(
            (
                details.name.as_str(),
                details.group.as_str(),
                details.kind.as_str()
            ),
            ("missing", "", "configmaps")
        );
        // The object exists in another namespace: still not found here.
        assert!(api_status::is_not_found(
            &l.namespaced("b")
                .get("db")
                .err()
                .unwrap_or_else(|| panic!("found"))
        ));

        let crd_like = Lister::<ConfigMap>::new(Store::default(), "crddemo.k8s.io", "mydemos");
        let err = crd_like
            .namespaced("ns")
            .get("x")
            .err()
            .map(|e| api_status::status(&e).map(|s| s.message.clone()));
        assert_eq!(
            err.flatten().as_deref(),
            Some("mydemos.crddemo.k8s.io \"x\" not found")
        );
    }

    #[test]
    fn cluster_scoped_get() {
        let store = Store::from_objects(
            [Namespace {
                metadata: ObjectMeta {
                    name: Some("kube-system".into()),
                    ..Default::default()
                },
                ..Default::default()
            }],
            [],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let l = Lister::for_resource(store);
        assert!(l.get("kube-system").is_ok());
        let err = l.get("other").err();
        assert_eq!(
            err.as_ref()
                .and_then(api_status::status)
                .map(|s| s.message.as_str()),
            Some("namespaces \"other\" not found")
        );
        assert_eq!(l.list(&Selector::everything()).len(), 1);
    }

    #[test]
    fn generic_lister_downcasts_without_copying() {
        let l = fixture();
        let typed = l
            .namespaced("a")
            .get("web")
            .unwrap_or_else(|e| panic!("{e}"));
        let g = GenericLister::from(l.clone());
        let obj = g
            .namespaced("a")
            .get("web")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(obj.object_meta().name.as_deref(), Some("web"));
        let back = downcast_arc::<ConfigMap>(obj).unwrap_or_else(|| panic!("wrong type"));
        assert!(Arc::ptr_eq(&back, &typed));
        assert_eq!(g.list(&sel("app=web")).len(), 2);
        assert_eq!(g.namespaced("b").list(&Selector::everything()).len(), 2);
        assert!(api_status::is_not_found(
            &g.get("web").err().unwrap_or_else(|| panic!("found"))
        ));
    }
}
