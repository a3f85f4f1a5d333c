//! client-go's `PodExpansion` (`core/v1/pod_expansion.go`): functions over a client and a
//! namespace (always compiled: they need only k8s-openapi), and the same as methods of the
//! generated `PodClient` (feature `core`).
//!
//! ```no_run
//! use futures::{AsyncBufReadExt, StreamExt};
//! use kube::api::LogParams;
//! use kube_codegen_kubernetes::expansion::core_v1;
//!
//! # async fn demo(client: kube::Client) -> kube::Result<()> {
//! let last = core_v1::get_logs(&client, "default", "web-0", &LogParams {
//!     container: Some("app".into()),
//!     tail_lines: Some(20),
//!     ..LogParams::default()
//! }).await?;
//! let mut lines = core_v1::stream_logs(&client, "default", "web-0", &LogParams {
//!     follow: true,
//!     since_seconds: Some(60),
//!     ..LogParams::default()
//! }).await?.lines();
//! while let Some(line) = lines.next().await {
//!     println!("{}", line.map_err(kube::Error::ReadEvents)?);
//! }
//! # Ok(()) }
//! ```

use futures::AsyncBufRead;
use k8s_openapi::api::core::v1::{Binding, Pod};
use k8s_openapi::api::policy::v1::Eviction;
use kube::Resource;
use kube::api::{LogParams, PostParams};
use kube::core::{Request, Status};

fn build(
    r: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
) -> kube::Result<http::Request<Vec<u8>>> {
    r.map_err(kube::Error::BuildRequest)
}

fn pods(namespace: &str) -> kube::Result<Request> {
    if namespace.is_empty() {
        return Err(kube::Error::BuildRequest(
            kube::core::request::Error::Validation(
                "pods are namespaced: this request needs a namespace".into(),
            ),
        ));
    }
    Ok(Request::new(Pod::url_path(&(), Some(namespace))))
}

fn named<'a>(what: &str, name: Option<&'a str>) -> kube::Result<&'a str> {
    match name {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(kube::Error::BuildRequest(
            kube::core::request::Error::Validation(format!("the {what} has no metadata.name")),
        )),
    }
}

fn body<T: serde::Serialize>(obj: &T) -> kube::Result<Vec<u8>> {
    serde_json::to_vec(obj).map_err(kube::Error::SerdeError)
}

/// The log of a pod's container as text (client-go's `GetLogs(name, opts).Do()`): GET
/// `…/pods/<name>/log` with `params` as the query.
pub async fn get_logs(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    params: &LogParams,
) -> kube::Result<String> {
    client
        .request_text(build(pods(namespace)?.logs(name, params))?)
        .await
}

/// The log of a pod's container as a stream of bytes (client-go's `GetLogs(name,
/// opts).Stream()`); with `follow: true` it stays open while the container runs. Read it
/// line by line with `futures::AsyncBufReadExt::lines`.
pub async fn stream_logs(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    params: &LogParams,
) -> kube::Result<impl AsyncBufRead + Send + use<>> {
    client
        .request_stream(build(pods(namespace)?.logs(name, params))?)
        .await
}

/// Evicts the pod `eviction.metadata.name` (client-go's `EvictV1`): POST the `policy/v1`
/// Eviction to `…/pods/<name>/eviction`. A PodDisruptionBudget that forbids it answers 429.
pub async fn evict(
    client: &kube::Client,
    namespace: &str,
    eviction: &Eviction,
    params: &PostParams,
) -> kube::Result<Status> {
    let name = named("eviction", eviction.metadata.name.as_deref())?;
    let req = pods(namespace)?.create_subresource("eviction", name, params, body(eviction)?);
    client.request(build(req)?).await
}

/// Binds the pod `binding.metadata.name` to `binding.target` (client-go's `Bind`): POST the
/// Binding to `…/pods/<name>/binding`.
pub async fn bind(
    client: &kube::Client,
    namespace: &str,
    binding: &Binding,
    params: &PostParams,
) -> kube::Result<Status> {
    let name = named("binding", binding.metadata.name.as_deref())?;
    let req = pods(namespace)?.create_subresource("binding", name, params, body(binding)?);
    client.request(build(req)?).await
}

/// client-go's `PodExpansion`: logs, eviction and binding, in this client's namespace.
#[cfg(feature = "core")]
#[cfg_attr(docsrs, doc(cfg(feature = "core")))]
impl crate::client::clientset::versioned::typed::core::v1::PodClient {
    fn expansion_namespace(&self) -> &str {
        self.namespace().unwrap_or_default()
    }

    /// The log of the pod `name`'s container as text; see [`get_logs`].
    pub async fn get_logs(&self, name: &str, params: &LogParams) -> kube::Result<String> {
        get_logs(self.client(), self.expansion_namespace(), name, params).await
    }

    /// The log of the pod `name`'s container as a stream; see [`stream_logs`].
    pub async fn stream_logs(
        &self,
        name: &str,
        params: &LogParams,
    ) -> kube::Result<impl AsyncBufRead + Send + use<>> {
        stream_logs(self.client(), self.expansion_namespace(), name, params).await
    }

    /// Evicts the pod `eviction.metadata.name` (client-go's `EvictV1`); see [`evict`].
    pub async fn evict(&self, eviction: &Eviction, params: &PostParams) -> kube::Result<Status> {
        evict(self.client(), self.expansion_namespace(), eviction, params).await
    }

    /// Binds the pod `binding.metadata.name` to its target (client-go's `Bind`); see [`bind`].
    pub async fn bind(&self, binding: &Binding, params: &PostParams) -> kube::Result<Status> {
        bind(self.client(), self.expansion_namespace(), binding, params).await
    }
}
