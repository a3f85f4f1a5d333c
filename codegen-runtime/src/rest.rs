//! The REST client of one API group-version (client-go's `rest.RESTClient`, what every
//! generated group client's `rest_client()` returns): requests built segment by segment —
//! namespace, resource, name, subresource, parameters, body — for anything the typed clients do
//! not cover.
//!
//! The seed's example, listing pods with a page size of 100:
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::api::{ListParams, ObjectList};
//! use kube_codegen_runtime::rest::RestClient;
//!
//! # async fn demo(client: kube::Client) -> kube::Result<()> {
//! let rest = RestClient::new(client, "", "v1"); // /api/v1
//! let pods: ObjectList<Pod> = rest
//!     .get()
//!     .namespace("default")
//!     .resource("pods")
//!     .list_params(&ListParams::default().limit(100))
//!     .send()
//!     .await?;
//! for p in &pods {
//!     println!("{:?} {:?}", p.metadata.name, p.status.as_ref().and_then(|s| s.phase.as_deref()));
//! }
//! # Ok(()) }
//! ```

use std::fmt::{self, Debug};

use either::Either;
use futures::{AsyncBufRead, StreamExt};
use kube::api::{ListParams, Patch, WatchParams};
use kube::core::Status;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::WatchStream;

/// A client for the resources of one group-version, rooted at `/api/v1` or
/// `/apis/<group>/<version>`. Cheap to clone.
///
/// ```
/// # fn demo(client: kube::Client) {
/// use kube_codegen_runtime::rest::RestClient;
/// assert_eq!(RestClient::new(client.clone(), "", "v1").base_path(), "/api/v1");
/// assert_eq!(RestClient::new(client, "apps", "v1").base_path(), "/apis/apps/v1");
/// # }
/// ```
#[derive(Clone)]
pub struct RestClient {
    client: kube::Client,
    base: String,
}

impl Debug for RestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl RestClient {
    /// The client of `group`/`version` (`""` for the core group).
    pub fn new(client: kube::Client, group: &str, version: &str) -> Self {
        let base = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        RestClient { client, base }
    }

    /// The group-version's path (`/apis/apps/v1`).
    pub fn base_path(&self) -> &str {
        &self.base
    }

    /// The underlying client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    fn verb(&self, method: http::Method) -> RestRequest {
        RestRequest {
            client: self.client.clone(),
            method,
            path: self.base.clone(),
            namespace: None,
            resource: None,
            name: None,
            subresource: None,
            suffix: Vec::new(),
            query: Vec::new(),
            body: None,
            content_type: None,
            error: None,
        }
    }

    /// A GET request.
    pub fn get(&self) -> RestRequest {
        self.verb(http::Method::GET)
    }

    /// A POST request.
    pub fn post(&self) -> RestRequest {
        self.verb(http::Method::POST)
    }

    /// A PUT request.
    pub fn put(&self) -> RestRequest {
        self.verb(http::Method::PUT)
    }

    /// A PATCH request; give the patch with [`RestRequest::patch_body`].
    pub fn patch(&self) -> RestRequest {
        self.verb(http::Method::PATCH)
    }

    /// A DELETE request.
    pub fn delete(&self) -> RestRequest {
        self.verb(http::Method::DELETE)
    }
}

/// Why a path segment is refused (apimachinery's `IsValidPathSegmentName`).
fn segment_problem(segment: &str) -> Option<String> {
    if segment == "." || segment == ".." {
        return Some(format!("may not be '{segment}'"));
    }
    ['/', '%']
        .into_iter()
        .find(|c| segment.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
}

/// One request of a [`RestClient`], built step by step and sent with one of the `send*`
/// methods. Mistakes (an invalid namespace or name, a body that cannot be serialized) are
/// reported when it is sent.
///
/// ```
/// # fn demo(client: kube::Client) {
/// use kube_codegen_runtime::rest::RestClient;
/// let req = RestClient::new(client, "", "v1")
///     .get()
///     .namespace("default")
///     .resource("pods")
///     .name("web-0")
///     .sub_resource("log")
///     .param("tailLines", "10");
/// assert_eq!(req.url(), "/api/v1/namespaces/default/pods/web-0/log?tailLines=10");
/// # }
/// ```
pub struct RestRequest {
    client: kube::Client,
    method: http::Method,
    path: String,
    namespace: Option<String>,
    resource: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
    suffix: Vec<String>,
    query: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    content_type: Option<String>,
    error: Option<kube::Error>,
}

impl Debug for RestRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestRequest")
            .field("method", &self.method)
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

fn invalid(message: String) -> kube::Error {
    kube::Error::BuildRequest(kube::core::request::Error::Validation(message))
}

impl RestRequest {
    fn fail(mut self, e: kube::Error) -> Self {
        self.error.get_or_insert(e);
        self
    }

    fn segment(self, what: &str, value: &str, set: impl FnOnce(&mut Self, String)) -> Self {
        if let Some(problem) = segment_problem(value) {
            return self.fail(invalid(format!("invalid {what} {value:?}: {problem}")));
        }
        let mut this = self;
        set(&mut this, value.to_string());
        this
    }

    /// The namespace (`""`: none, as in client-go).
    #[must_use]
    pub fn namespace(self, namespace: &str) -> Self {
        if namespace.is_empty() {
            return self;
        }
        self.segment("namespace", namespace, |r, v| r.namespace = Some(v))
    }

    /// The resource (`pods`).
    #[must_use]
    pub fn resource(self, resource: &str) -> Self {
        self.segment("resource", resource, |r, v| r.resource = Some(v))
    }

    /// The object's name.
    #[must_use]
    pub fn name(self, name: &str) -> Self {
        if name.is_empty() {
            return self.fail(invalid("resource name may not be empty".into()));
        }
        self.segment("name", name, |r, v| r.name = Some(v))
    }

    /// The subresource (`status`, `log`, `scale`).
    #[must_use]
    pub fn sub_resource(self, subresource: &str) -> Self {
        self.segment("subresource", subresource, |r, v| r.subresource = Some(v))
    }

    /// Path segments after everything else (client-go's `Suffix`).
    #[must_use]
    pub fn suffix(mut self, segments: &[&str]) -> Self {
        self.suffix.extend(segments.iter().map(|s| s.to_string()));
        self
    }

    /// An absolute path instead of the group-version's (client-go's `AbsPath`): `/version`,
    /// `/apis`.
    #[must_use]
    pub fn abs_path(mut self, path: &str) -> Self {
        self.path = path.trim_end_matches('/').to_string();
        if self.path.is_empty() {
            self.path = "/".into();
        }
        self
    }

    /// A query parameter (repeatable).
    #[must_use]
    pub fn param(mut self, key: &str, value: &str) -> Self {
        self.query.push((key.to_string(), value.to_string()));
        self
    }

    /// The query parameters a list sends (selectors, limit, continue, resourceVersion), as
    /// kube's `Api::list` writes them (client-go's `VersionedParams(&ListOptions{…})`).
    #[must_use]
    pub fn list_params(self, params: &ListParams) -> Self {
        match kube::core::Request::new("/").list(params) {
            Ok(req) => self.params_of(&req),
            Err(e) => self.fail(kube::Error::BuildRequest(e)),
        }
    }

    /// The query parameters of a watch from `resource_version`, as kube's `Api::watch`
    /// writes them (`watch=true`, `timeoutSeconds`, selectors, bookmarks).
    #[must_use]
    pub fn watch_params(self, params: &WatchParams, resource_version: &str) -> Self {
        match kube::core::Request::new("/").watch(params, resource_version) {
            Ok(req) => self.params_of(&req),
            Err(e) => self.fail(kube::Error::BuildRequest(e)),
        }
    }

    fn params_of(mut self, req: &http::Request<Vec<u8>>) -> Self {
        let query = req.uri().query().unwrap_or_default();
        self.query.extend(
            form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
        self
    }

    /// A JSON body.
    #[must_use]
    pub fn body<T: Serialize>(mut self, body: &T) -> Self {
        match serde_json::to_vec(body) {
            Ok(b) => {
                self.body = Some(b);
                self.content_type = Some("application/json".into());
                self
            }
            Err(e) => self.fail(kube::Error::SerdeError(e)),
        }
    }

    /// A patch body with its content type (merge, JSON, strategic or apply patch).
    #[must_use]
    pub fn patch_body<P: Serialize>(mut self, patch: &Patch<P>) -> Self {
        // kube's own encoding and content type, from a request built for the purpose (a field
        // manager only satisfies its check for apply patches; it is not sent).
        let params = if matches!(patch, Patch::Apply(_)) {
            kube::api::PatchParams::apply("rest-client")
        } else {
            kube::api::PatchParams::default()
        };
        match kube::core::Request::new("/").patch("body", &params, patch) {
            Ok(req) => {
                self.content_type = req
                    .headers()
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from);
                self.body = Some(req.into_body());
                self
            }
            Err(e) => self.fail(kube::Error::BuildRequest(e)),
        }
    }

    /// The path and query the request goes to.
    pub fn url(&self) -> String {
        let mut url = self.path.clone();
        if let Some(ns) = &self.namespace {
            url.push_str("/namespaces/");
            url.push_str(ns);
        }
        for seg in [&self.resource, &self.name, &self.subresource]
            .into_iter()
            .flatten()
        {
            url.push('/');
            url.push_str(seg);
        }
        for seg in &self.suffix {
            url.push('/');
            url.push_str(seg.trim_matches('/'));
        }
        if !self.query.is_empty() {
            let mut q = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &self.query {
                q.append_pair(k, v);
            }
            url.push('?');
            url.push_str(&q.finish());
        }
        url
    }

    fn build(mut self) -> kube::Result<(kube::Client, http::Request<Vec<u8>>)> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.name.is_some() && self.resource.is_none() {
            return Err(invalid("a name needs a resource".into()));
        }
        let mut builder = http::Request::builder()
            .method(self.method.clone())
            .uri(self.url());
        if let Some(ct) = &self.content_type {
            builder = builder.header(http::header::CONTENT_TYPE, ct.as_str());
        }
        let req = builder
            .body(self.body.take().unwrap_or_default())
            .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e)))?;
        Ok((self.client, req))
    }

    /// Sends the request and decodes the JSON answer as `T`; a failure is the server's
    /// `Status` as a [`kube::Error`].
    pub async fn send<T: DeserializeOwned>(self) -> kube::Result<T> {
        let (client, req) = self.build()?;
        client.request(req).await
    }

    /// Sends the request and returns the answer as text (pod logs, `/healthz`).
    pub async fn send_text(self) -> kube::Result<String> {
        let (client, req) = self.build()?;
        client.request_text(req).await
    }

    /// Sends the request and streams the answer (`follow`ed logs).
    pub async fn send_stream(self) -> kube::Result<impl AsyncBufRead + Send + use<>> {
        let (client, req) = self.build()?;
        client.request_stream(req).await
    }

    /// Sends the request and decodes either `T` or a `Status` (deletes).
    pub async fn send_status<T: DeserializeOwned>(self) -> kube::Result<Either<T, Status>> {
        let (client, req) = self.build()?;
        client.request_status(req).await
    }

    /// Sends a watch request (add [`RestRequest::watch_params`]) and streams its events.
    pub async fn watch<T>(self) -> kube::Result<WatchStream<T>>
    where
        T: Clone + DeserializeOwned + Send + 'static,
    {
        let (client, req) = self.build()?;
        Ok(client.request_events::<T>(req).await?.boxed())
    }
}
