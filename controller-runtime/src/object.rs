//! What event handlers and predicates see of an object of any kind (controller-runtime's
//! `client.Object`): its metadata, its kind, and a way back to the concrete type.

use std::any::Any;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;

/// Any Kubernetes object: implemented for every `kube::Resource` with a static type
/// (k8s-openapi types, generated kinds, `#[derive(CustomResource)]` types), and usable as
/// `&dyn Object` by predicates that apply to every kind.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::Object;
///
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("a".into());
/// let obj: &dyn Object = &cm;
/// assert_eq!(obj.meta().name.as_deref(), Some("a"));
/// assert_eq!(obj.kind(), "ConfigMap");
/// assert!(obj.downcast_ref::<ConfigMap>().is_some());
/// ```
pub trait Object: Any + Send + Sync {
    /// The object's metadata.
    fn meta(&self) -> &ObjectMeta;
    /// The object's kind (`ConfigMap`, `Mydemo`).
    fn kind(&self) -> String;
    /// The object's API group (empty for core).
    fn group(&self) -> String;
    /// The object as `Any`, to downcast.
    fn as_any(&self) -> &dyn Any;
}

impl<K> Object for K
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    fn meta(&self) -> &ObjectMeta {
        Resource::meta(self)
    }

    fn kind(&self) -> String {
        K::kind(&()).into_owned()
    }

    fn group(&self) -> String {
        K::group(&()).into_owned()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl dyn Object {
    /// The concrete object, if it is a `K`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # use kube_controller_runtime::Object;
    /// let cm = ConfigMap::default();
    /// let obj: &dyn Object = &cm;
    /// assert!(obj.downcast_ref::<Secret>().is_none());
    /// ```
    pub fn downcast_ref<K: Any>(&self) -> Option<&K> {
        self.as_any().downcast_ref::<K>()
    }
}
