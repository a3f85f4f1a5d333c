//! The discovery client: which groups, versions and resources the API server serves, its
//! version, and a REST mapper between kinds and resources (client-go's `discovery` and
//! `restmapper` packages).
//!
//! * [`DiscoveryClient`] asks the server every time: [`server_groups`](DiscoveryClient::server_groups),
//!   [`server_resources_for_group_version`](DiscoveryClient::server_resources_for_group_version),
//!   [`server_groups_and_resources`](DiscoveryClient::server_groups_and_resources) (every
//!   group-version at once, in parallel), [`server_preferred_resources`](Discovered::preferred_resources),
//!   [`server_version`](DiscoveryClient::server_version);
//! * [`CachedDiscoveryClient`] (client-go's memory-cached discovery) answers from memory after
//!   the first full discovery until [`invalidate`](CachedDiscoveryClient::invalidate);
//! * [`RestMapper`] maps kinds to resources and back, with singular names, short names (`deploy`)
//!   and scope, preferring the versions the server prefers; [`DeferredRestMapper`] builds one
//!   lazily over a cached client and can be [`reset`](DeferredRestMapper::reset) when new
//!   resources (CRDs) appear;
//! * `fake` (feature `fake`): the same clients over the in-memory API server.
//!
//! The legacy discovery documents are used (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`),
//! which every API server serves, the in-memory one included.
//!
//! ```no_run
//! use kube::core::GroupVersionResource;
//! use kube_codegen_runtime::discovery::{DiscoveryClient, GroupKind};
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let discovery = DiscoveryClient::new(client);
//! println!("server {}", discovery.server_version().await?.git_version);
//! let discovered = discovery.server_groups_and_resources().await?;
//! for group in discovered.groups() {
//!     println!("{} prefers {:?}", group.name, group.preferred_version.as_ref().map(|v| &v.version));
//! }
//! let mapper = discovered.rest_mapper();
//! let mapping = mapper.rest_mapping(&GroupKind::new("apps", "Deployment"), &[])?;
//! assert_eq!(mapping.resource.resource, "deployments");
//! let deploy = mapper.resource_for(&GroupVersionResource::gvr("", "", "deploy"))?;
//! assert_eq!(deploy.group, "apps");
//! # Ok(()) }
//! ```

mod cached;
mod mapper;

#[cfg(feature = "fake")]
#[cfg_attr(docsrs, doc(cfg(feature = "fake")))]
pub mod fake;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
};
use k8s_openapi::apimachinery::pkg::version::Info;

pub use cached::CachedDiscoveryClient;
pub use mapper::{DeferredRestMapper, GroupKind, MapperError, RestMapper, RestMapping};

/// Why discovery failed.
///
/// ```
/// use kube_codegen_runtime::discovery::DiscoveryError;
/// assert_eq!(DiscoveryError::EmptyGroupVersion.to_string(), "groupVersion shouldn't be empty");
/// assert!(!DiscoveryError::EmptyGroupVersion.is_retryable());
/// ```
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// A discovery document could not be read. Retryable when the server could not be
    /// reached, was overloaded (429) or failed (5xx); see [`DiscoveryError::is_retryable`].
    #[error("discovery request {path} failed: {source}")]
    Request {
        /// The document's path (`/apis/apps/v1`).
        path: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// An empty group-version was asked for (client-go's wording). Not retryable.
    #[error("groupVersion shouldn't be empty")]
    EmptyGroupVersion,
    /// The cached client has no entry for this group-version: the server did not list it when
    /// the cache was filled. Not retryable as is; invalidate the cache to look again.
    #[error("group version {0} not found in the discovery cache")]
    NotInCache(String),
    /// Some group-versions could not be discovered (client-go's `ErrGroupDiscoveryFailed`);
    /// the others were. Retryable if every failure is.
    #[error("unable to retrieve the complete list of server APIs: {}", join_failures(.0))]
    GroupDiscoveryFailed(BTreeMap<String, Arc<DiscoveryError>>),
}

fn join_failures(failed: &BTreeMap<String, Arc<DiscoveryError>>) -> String {
    failed
        .iter()
        .map(|(gv, e)| format!("{gv}: {e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl DiscoveryError {
    /// Whether trying again may succeed: the server was unreachable, answered 429 or 5xx.
    ///
    /// ```
    /// # use kube_codegen_runtime::discovery::DiscoveryError;
    /// assert!(!DiscoveryError::NotInCache("example.com/v1".into()).is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            DiscoveryError::Request { source, .. } => is_transient(source),
            DiscoveryError::GroupDiscoveryFailed(failed) => {
                failed.values().all(|e| e.is_retryable())
            }
            DiscoveryError::EmptyGroupVersion | DiscoveryError::NotInCache(_) => false,
        }
    }
}

/// Transient failures: no answer, 429, 5xx (client-go's memory cache retries these).
fn is_transient(e: &kube::Error) -> bool {
    match crate::api_status::code(e) {
        Some(code) => code == 429 || code >= 500,
        None => matches!(e, kube::Error::HyperError(_) | kube::Error::Service(_)),
    }
}

/// A 404 by code: a group the server does not serve answers with plain text, not a `Status`.
fn is_not_found(e: &kube::Error) -> bool {
    crate::api_status::code(e) == Some(404)
}

/// The path of a group-version's resource list: `/api/v1` for the core group, else
/// `/apis/<group>/<version>`.
fn resources_path(group_version: &str) -> String {
    if group_version == "v1" {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group_version}")
    }
}

/// Splits `apps/v1` into (`apps`, `v1`) and `v1` into (``, `v1`).
pub fn split_group_version(group_version: &str) -> (&str, &str) {
    match group_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", group_version),
    }
}

/// Asks the API server what it serves (client-go's `DiscoveryClient`). Cheap to clone.
///
/// ```no_run
/// # async fn demo(client: kube::Client) -> Result<(), kube_codegen_runtime::discovery::DiscoveryError> {
/// let discovery = kube_codegen_runtime::discovery::DiscoveryClient::new(client);
/// let apps = discovery.server_resources_for_group_version("apps/v1").await?;
/// for r in &apps.resources { println!("{} ({})", r.name, r.kind); }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DiscoveryClient {
    client: kube::Client,
}

impl fmt::Debug for DiscoveryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiscoveryClient").finish_non_exhaustive()
    }
}

impl From<kube::Client> for DiscoveryClient {
    fn from(client: kube::Client) -> Self {
        Self::new(client)
    }
}

impl DiscoveryClient {
    /// A discovery client over `client`.
    pub fn new(client: kube::Client) -> Self {
        DiscoveryClient { client }
    }

    /// The underlying client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, kube::Error> {
        let req = http::Request::get(path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e)))?;
        self.client.request(req).await
    }

    /// The server's version (`/version`).
    pub async fn server_version(&self) -> Result<Info, DiscoveryError> {
        self.get("/version")
            .await
            .map_err(|source| DiscoveryError::Request {
                path: "/version".into(),
                source,
            })
    }

    /// Every served group with its versions and preferred version, the legacy core group
    /// (name `""`, from `/api`) first, then `/apis` in the server's order. A server without
    /// one of the two documents (404) simply has no such groups.
    pub async fn server_groups(&self) -> Result<APIGroupList, DiscoveryError> {
        let mut groups = Vec::new();
        match self.get::<APIVersions>("/api").await {
            Ok(core) if !core.versions.is_empty() => {
                let versions: Vec<GroupVersionForDiscovery> = core
                    .versions
                    .iter()
                    .map(|v| GroupVersionForDiscovery {
                        group_version: v.clone(),
                        version: v.clone(),
                    })
                    .collect();
                groups.push(APIGroup {
                    name: String::new(),
                    preferred_version: versions.first().cloned(),
                    server_address_by_client_cidrs: None,
                    versions,
                });
            }
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(source) => {
                return Err(DiscoveryError::Request {
                    path: "/api".into(),
                    source,
                });
            }
        }
        match self.get::<APIGroupList>("/apis").await {
            Ok(list) => groups.extend(list.groups),
            Err(e) if is_not_found(&e) => {}
            Err(source) => {
                return Err(DiscoveryError::Request {
                    path: "/apis".into(),
                    source,
                });
            }
        }
        Ok(APIGroupList { groups })
    }

    /// The resources (and subresources, as `pods/status`) of one group-version: `v1` for the
    /// core group, `apps/v1` otherwise. A missing core `v1` is an empty list, as in client-go.
    pub async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, DiscoveryError> {
        if group_version.is_empty() {
            return Err(DiscoveryError::EmptyGroupVersion);
        }
        let path = resources_path(group_version);
        match self.get::<APIResourceList>(&path).await {
            Ok(mut list) => {
                if list.group_version.is_empty() {
                    list.group_version = group_version.to_string();
                }
                Ok(list)
            }
            Err(e) if group_version == "v1" && is_not_found(&e) => Ok(APIResourceList {
                group_version: group_version.to_string(),
                resources: Vec::new(),
            }),
            Err(source) => Err(DiscoveryError::Request { path, source }),
        }
    }

    /// Every group and the resources of every served group-version, fetched in parallel
    /// (client-go's `ServerGroupsAndResources`). Group-versions that failed are in
    /// [`Discovered::failed`]; the call fails only when the group lists cannot be read.
    pub async fn server_groups_and_resources(&self) -> Result<Discovered, DiscoveryError> {
        let groups = self.server_groups().await?;
        let gvs: Vec<String> = groups
            .groups
            .iter()
            .flat_map(|g| g.versions.iter().map(|v| v.group_version.clone()))
            .collect();
        let fetched = futures::future::join_all(gvs.iter().map(|gv| async move {
            (
                gv.clone(),
                self.server_resources_for_group_version(gv).await,
            )
        }))
        .await;
        let mut resources = BTreeMap::new();
        let mut failed = BTreeMap::new();
        for (gv, r) in fetched {
            match r {
                Ok(list) => {
                    resources.insert(gv, list);
                }
                Err(e) => {
                    tracing::warn!(group_version = %gv, error = %e, "discovery of a group version failed");
                    failed.insert(gv, Arc::new(e));
                }
            }
        }
        Ok(Discovered {
            groups: groups.groups,
            resources,
            failed,
        })
    }

    /// The resources of every group in the version the server prefers (client-go's
    /// `ServerPreferredResources`); see [`Discovered::preferred_resources`].
    pub async fn server_preferred_resources(&self) -> Result<Vec<APIResourceList>, DiscoveryError> {
        self.server_groups_and_resources()
            .await?
            .into_complete()
            .map(|d| d.preferred_resources())
    }

    /// A [`RestMapper`] over what the server serves now.
    pub async fn rest_mapper(&self) -> Result<RestMapper, DiscoveryError> {
        Ok(self.server_groups_and_resources().await?.rest_mapper())
    }
}

/// What discovery found: the groups in the server's order and the resources of each
/// group-version, plus the group-versions that could not be read.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, APIResource, APIResourceList, GroupVersionForDiscovery};
/// use kube_codegen_runtime::discovery::Discovered;
///
/// let v1 = GroupVersionForDiscovery { group_version: "apps/v1".into(), version: "v1".into() };
/// let apps = APIGroup { name: "apps".into(), versions: vec![v1.clone()], preferred_version: Some(v1), server_address_by_client_cidrs: None };
/// let deployments = APIResource {
///     name: "deployments".into(), singular_name: "deployment".into(), kind: "Deployment".into(),
///     namespaced: true, verbs: vec!["get".into()], short_names: Some(vec!["deploy".into()]),
///     ..Default::default()
/// };
/// let d = Discovered::new(vec![apps], vec![APIResourceList { group_version: "apps/v1".into(), resources: vec![deployments] }]);
/// assert_eq!(d.preferred_version("apps"), Some("v1"));
/// assert_eq!(d.rest_mapper().resource_singularizer("deployments")?, "deployment");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    groups: Vec<APIGroup>,
    resources: BTreeMap<String, APIResourceList>,
    failed: BTreeMap<String, Arc<DiscoveryError>>,
}

impl Discovered {
    /// A result from documents obtained elsewhere (a test, a file).
    pub fn new(groups: Vec<APIGroup>, resources: Vec<APIResourceList>) -> Self {
        Discovered {
            groups,
            resources: resources
                .into_iter()
                .map(|l| (l.group_version.clone(), l))
                .collect(),
            failed: BTreeMap::new(),
        }
    }

    /// The served groups, core (`""`) first, in the server's order.
    pub fn groups(&self) -> &[APIGroup] {
        &self.groups
    }

    /// The group named `name` (`""` for core).
    pub fn group(&self, name: &str) -> Option<&APIGroup> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// The version the server prefers for `group`.
    pub fn preferred_version(&self, group: &str) -> Option<&str> {
        self.group(group)
            .and_then(|g| g.preferred_version.as_ref())
            .map(|v| v.version.as_str())
    }

    /// The resources of `group_version` (`v1`, `apps/v1`), if it was discovered.
    pub fn resources_for(&self, group_version: &str) -> Option<&APIResourceList> {
        self.resources.get(group_version)
    }

    /// Every discovered resource list, in group then version order (client-go's order).
    pub fn resources(&self) -> Vec<&APIResourceList> {
        self.group_versions()
            .filter_map(|(_, _, gv)| self.resources.get(gv))
            .collect()
    }

    /// The group-versions that could not be discovered, with the reason.
    pub fn failed(&self) -> &BTreeMap<String, Arc<DiscoveryError>> {
        &self.failed
    }

    /// `self` if every group-version was discovered, else
    /// [`DiscoveryError::GroupDiscoveryFailed`].
    pub fn into_complete(self) -> Result<Self, DiscoveryError> {
        if self.failed.is_empty() {
            Ok(self)
        } else {
            Err(DiscoveryError::GroupDiscoveryFailed(self.failed))
        }
    }

    /// `(group, version, group_version)` of every served group-version, in order.
    fn group_versions(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.groups.iter().flat_map(|g| {
            g.versions.iter().map(move |v| {
                (
                    g.name.as_str(),
                    v.version.as_str(),
                    v.group_version.as_str(),
                )
            })
        })
    }

    /// Every resource (not subresource) of every group in one version: the preferred version
    /// where it has the resource, else the first version listing it (client-go's
    /// `ServerPreferredResources`). One list per discovered group-version, in order; lists of
    /// versions that contributed nothing are empty, as in client-go.
    pub fn preferred_resources(&self) -> Vec<APIResourceList> {
        let mut chosen: BTreeMap<(String, String), (String, APIResource)> = BTreeMap::new();
        let mut lists: Vec<APIResourceList> = Vec::new();
        for (group, version, gv) in self.group_versions() {
            let Some(list) = self.resources.get(gv) else {
                continue;
            };
            lists.push(APIResourceList {
                group_version: gv.to_string(),
                resources: Vec::new(),
            });
            let preferred = self.preferred_version(group);
            for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
                let key = (group.to_string(), r.name.clone());
                if chosen.contains_key(&key) && preferred != Some(version) {
                    continue;
                }
                chosen.insert(key, (gv.to_string(), r.clone()));
            }
        }
        for (_, (gv, r)) in chosen {
            if let Some(list) = lists.iter_mut().find(|l| l.group_version == gv) {
                list.resources.push(r);
            }
        }
        for l in &mut lists {
            l.resources.sort_by(|a, b| a.name.cmp(&b.name));
        }
        lists
    }

    /// [`Discovered::preferred_resources`] restricted to namespaced resources (client-go's
    /// `ServerPreferredNamespacedResources`).
    pub fn preferred_namespaced_resources(&self) -> Vec<APIResourceList> {
        let mut lists = self.preferred_resources();
        for l in &mut lists {
            l.resources.retain(|r| r.namespaced);
        }
        lists
    }

    /// The names of the served groups (`""` for core), as a set.
    pub fn group_names(&self) -> BTreeSet<&str> {
        self.groups.iter().map(|g| g.name.as_str()).collect()
    }

    /// A [`RestMapper`] over these resources.
    pub fn rest_mapper(&self) -> RestMapper {
        RestMapper::new(self)
    }
}
