//! The dynamic client: any resource, built-in or custom, addressed by its
//! group-version-resource and read and written as [`DynamicObject`]s (client-go's
//! `dynamic.Interface` over `unstructured.Unstructured`).
//!
//! * [`DynamicClient::resource`] → [`ResourceClient`] for a [`GroupVersionResource`], across all
//!   namespaces (or cluster-scoped); [`ResourceClient::namespace`] narrows it to one namespace;
//! * verbs as client-go names them: `create`, `update`, `update_status`, `delete`,
//!   `delete_collection`, `get`, `list`, `watch`, `patch`, `apply`, `apply_status`, and the
//!   `*_subresource` forms of client-go's variadic `subresources ...string`;
//! * [`DynamicSharedInformerFactory`] (module [`informer`]): one informer per
//!   group-version-resource and namespace over the runtime's informer, store and lister;
//! * `fake` (feature `fake`): the same client and factory over the in-memory API server.
//!
//! Nothing is known about a resource beyond its path, so objects are sent as they are: a
//! `create` needs `apiVersion` and `kind` in the object (the API server refuses it otherwise),
//! and a `DynamicObject` answer keeps every field the server sent.
//!
//! ```no_run
//! use kube::api::{ListParams, PatchParams, PostParams};
//! use kube::core::{DynamicObject, GroupVersionResource};
//! use kube_codegen_runtime::dynamic::DynamicClient;
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let dynamic = DynamicClient::new(client);
//! let gvr = GroupVersionResource::gvr("apps", "v1", "deployments");
//! let deployments = dynamic.resource(&gvr).namespace("default");
//! for d in deployments.list(&ListParams::default().labels("app=web")).await? {
//!     let replicas = d.data["spec"]["replicas"].as_i64();
//!     println!("{:?}: {replicas:?}", d.metadata.name);
//! }
//! let cm: DynamicObject = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings"}, "data": {"mode": "fast"}
//! }))?;
//! let configmaps = dynamic.resource(&GroupVersionResource::gvr("", "v1", "configmaps"));
//! configmaps.namespace("default").create(&cm, &PostParams::default()).await?;
//! # Ok(()) }
//! ```

pub mod informer;

#[cfg(feature = "fake")]
#[cfg_attr(docsrs, doc(cfg(feature = "fake")))]
pub mod fake;

use std::fmt::{self, Debug};

use either::Either;
use futures::StreamExt;
use kube::api::{
    DeleteParams, GetParams, ListParams, ObjectList, Patch, PatchParams, PostParams, Request,
    WatchParams,
};
use kube::core::{DynamicObject, GroupVersionResource, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::WatchStream;

pub use informer::{DynamicInformer, DynamicSharedInformerFactory};

/// The collection path of `gvr` in `namespace` (`None`: all namespaces, or cluster scope):
/// `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`.
///
/// ```
/// use kube::core::GroupVersionResource;
/// use kube_codegen_runtime::dynamic::collection_path;
/// let pods = GroupVersionResource::gvr("", "v1", "pods");
/// assert_eq!(collection_path(&pods, Some("ns")), "/api/v1/namespaces/ns/pods");
/// let crds = GroupVersionResource::gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions");
/// assert_eq!(collection_path(&crds, None), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
/// ```
pub fn collection_path(gvr: &GroupVersionResource, namespace: Option<&str>) -> String {
    let base = if gvr.group.is_empty() {
        format!("/api/{}", gvr.version)
    } else {
        format!("/apis/{}/{}", gvr.group, gvr.version)
    };
    match namespace.filter(|ns| !ns.is_empty()) {
        Some(ns) => format!("{base}/namespaces/{ns}/{}", gvr.resource),
        None => format!("{base}/{}", gvr.resource),
    }
}

/// `Ok(bytes)` of `value`'s JSON.
fn to_body<T: Serialize>(value: &T) -> kube::Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(kube::Error::SerdeError)
}

fn build(
    r: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
) -> kube::Result<http::Request<Vec<u8>>> {
    r.map_err(kube::Error::BuildRequest)
}

fn invalid(message: impl Into<String>) -> kube::Error {
    kube::Error::BuildRequest(kube::core::request::Error::Validation(message.into()))
}

/// The name of an object to update, which must be set (client-go: "name is required").
fn name_of(obj: &DynamicObject) -> kube::Result<&str> {
    match obj.metadata.name.as_deref() {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(invalid("name is required")),
    }
}

/// A client for every resource the API server serves, addressed by group-version-resource
/// (client-go's `dynamic.NewForConfig`). Cheap to clone.
///
/// ```no_run
/// # async fn demo(client: kube::Client) -> kube::Result<()> {
/// use kube::core::GroupVersionResource;
/// let dynamic = kube_codegen_runtime::dynamic::DynamicClient::new(client);
/// let nodes = dynamic.resource(&GroupVersionResource::gvr("", "v1", "nodes"));
/// let n = nodes.get("node-1", &Default::default()).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DynamicClient {
    client: kube::Client,
}

impl Debug for DynamicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicClient").finish_non_exhaustive()
    }
}

impl DynamicClient {
    /// A dynamic client over `client`.
    pub fn new(client: kube::Client) -> Self {
        DynamicClient { client }
    }

    /// A dynamic client configured from the environment (the kubeconfig or, inside a cluster,
    /// the service account), as `kube::Client::try_default`.
    pub async fn try_default() -> kube::Result<Self> {
        Ok(Self::new(kube::Client::try_default().await?))
    }

    /// The client for `gvr` across all namespaces (or cluster-scoped); narrow it with
    /// [`ResourceClient::namespace`] (client-go's `Resource(gvr)`).
    pub fn resource(&self, gvr: &GroupVersionResource) -> ResourceClient {
        ResourceClient::new(self.client.clone(), gvr.clone(), None)
    }

    /// The underlying client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }
}

impl From<kube::Client> for DynamicClient {
    fn from(client: kube::Client) -> Self {
        Self::new(client)
    }
}

/// The verbs of one resource, in one namespace or across all (client-go's
/// `NamespaceableResourceInterface` and `ResourceInterface` in one type).
///
/// ```no_run
/// # async fn demo(d: kube_codegen_runtime::dynamic::DynamicClient) -> kube::Result<()> {
/// use kube::api::{DeleteParams, Patch, PatchParams};
/// use kube::core::GroupVersionResource;
/// let cms = d.resource(&GroupVersionResource::gvr("", "v1", "configmaps")).namespace("default");
/// cms.patch("settings", &Patch::Merge(serde_json::json!({"data": {"mode": "slow"}})), &PatchParams::default()).await?;
/// cms.delete("settings", &DeleteParams::default()).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ResourceClient {
    client: kube::Client,
    gvr: GroupVersionResource,
    namespace: Option<String>,
    request: Request,
}

impl Debug for ResourceClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceClient")
            .field("url_path", &self.request.url_path)
            .finish_non_exhaustive()
    }
}

impl ResourceClient {
    fn new(client: kube::Client, gvr: GroupVersionResource, namespace: Option<String>) -> Self {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let request = Request::new(collection_path(&gvr, namespace.as_deref()));
        ResourceClient {
            client,
            gvr,
            namespace,
            request,
        }
    }

    /// The same resource in `namespace` (`""`: all namespaces), client-go's `Namespace(ns)`.
    #[must_use]
    pub fn namespace(&self, namespace: &str) -> Self {
        Self::new(
            self.client.clone(),
            self.gvr.clone(),
            Some(namespace.to_string()),
        )
    }

    /// The resource.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// The namespace requests go to, if any.
    pub fn namespace_name(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The collection's URL path (`/apis/apps/v1/namespaces/default/deployments`).
    pub fn url_path(&self) -> &str {
        &self.request.url_path
    }

    async fn send<T: DeserializeOwned>(
        &self,
        req: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> kube::Result<T> {
        self.client.request(build(req)?).await
    }

    /// POSTs `obj` to the collection (it needs `apiVersion` and `kind`).
    pub async fn create(
        &self,
        obj: &DynamicObject,
        params: &PostParams,
    ) -> kube::Result<DynamicObject> {
        self.send(self.request.create(params, to_body(obj)?)).await
    }

    /// POSTs `body` to `subresource` of the object `name` (client-go's `Create(…, "sub")`),
    /// decoding the answer as `R`.
    pub async fn create_subresource<B: Serialize, R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        body: &B,
        params: &PostParams,
    ) -> kube::Result<R> {
        self.send(
            self.request
                .create_subresource(subresource, name, params, to_body(body)?),
        )
        .await
    }

    /// PUTs `obj` to the object its `metadata.name` names; `metadata.resourceVersion` makes the
    /// update conditional.
    pub async fn update(
        &self,
        obj: &DynamicObject,
        params: &PostParams,
    ) -> kube::Result<DynamicObject> {
        let name = name_of(obj)?;
        self.send(self.request.replace(name, params, to_body(obj)?))
            .await
    }

    /// PUTs `obj` to the `status` subresource of the object it names.
    pub async fn update_status(
        &self,
        obj: &DynamicObject,
        params: &PostParams,
    ) -> kube::Result<DynamicObject> {
        self.update_subresource("status", obj, params).await
    }

    /// PUTs `obj` to `subresource` of the object it names (client-go's `Update(…, "sub")`).
    pub async fn update_subresource(
        &self,
        subresource: &str,
        obj: &DynamicObject,
        params: &PostParams,
    ) -> kube::Result<DynamicObject> {
        let name = name_of(obj)?;
        self.send(
            self.request
                .replace_subresource(subresource, name, params, to_body(obj)?),
        )
        .await
    }

    /// DELETEs the object `name`: `Left` with the object while finalizers keep it (or when the
    /// resource answers with the deleted object), `Right` with the server's `Status`.
    pub async fn delete(
        &self,
        name: &str,
        params: &DeleteParams,
    ) -> kube::Result<Either<DynamicObject, Status>> {
        self.client
            .request_status(build(self.request.delete(name, params))?)
            .await
    }

    /// DELETEs every object that `list` selects.
    pub async fn delete_collection(
        &self,
        params: &DeleteParams,
        list: &ListParams,
    ) -> kube::Result<Either<ObjectList<DynamicObject>, Status>> {
        self.client
            .request_status(build(self.request.delete_collection(params, list))?)
            .await
    }

    /// GETs the object `name`.
    pub async fn get(&self, name: &str, params: &GetParams) -> kube::Result<DynamicObject> {
        self.send(self.request.get(name, params)).await
    }

    /// GETs `subresource` of the object `name` (client-go's `Get(…, "sub")`), decoded as `R`
    /// (`DynamicObject`, or a typed value such as `autoscaling/v1` `Scale`).
    pub async fn get_subresource<R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        params: &GetParams,
    ) -> kube::Result<R> {
        let req =
            Request::new(format!("{}/{name}", self.request.url_path)).get(subresource, params);
        self.send(req).await
    }

    /// GETs the collection (label and field selectors, pagination).
    pub async fn list(&self, params: &ListParams) -> kube::Result<ObjectList<DynamicObject>> {
        self.send(self.request.list(params)).await
    }

    /// Watches the collection from `resource_version` (`"0"` or `""`: any).
    pub async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> kube::Result<WatchStream<DynamicObject>> {
        let events = self
            .client
            .request_events::<DynamicObject>(build(self.request.watch(params, resource_version))?)
            .await?;
        Ok(events.boxed())
    }

    /// PATCHes the object `name` (merge, JSON, strategic or apply patch).
    pub async fn patch<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> kube::Result<DynamicObject> {
        self.send(self.request.patch(name, params, patch)).await
    }

    /// PATCHes `subresource` of the object `name` (client-go's `Patch(…, "sub")`).
    pub async fn patch_subresource<P: Serialize + Debug>(
        &self,
        subresource: &str,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> kube::Result<DynamicObject> {
        self.send(
            self.request
                .patch_subresource(subresource, name, params, patch),
        )
        .await
    }

    /// Server-side applies `obj` (which carries `apiVersion` and `kind`) to the object `name`;
    /// `params` names the field manager (`PatchParams::apply("manager")`).
    pub async fn apply(
        &self,
        name: &str,
        obj: &DynamicObject,
        params: &PatchParams,
    ) -> kube::Result<DynamicObject> {
        self.patch(name, &Patch::Apply(obj), params).await
    }

    /// Server-side applies `obj` to the `status` subresource of the object `name`.
    pub async fn apply_status(
        &self,
        name: &str,
        obj: &DynamicObject,
        params: &PatchParams,
    ) -> kube::Result<DynamicObject> {
        self.patch_subresource("status", name, &Patch::Apply(obj), params)
            .await
    }
}
