//! The REST mapper: kinds ↔ resources, singular and short names, scope, preferred versions
//! (client-go's `restmapper.NewDiscoveryRESTMapper` behind a `ShortcutExpander`, and
//! `DeferredDiscoveryRESTMapper`).
//!
//! Priorities follow client-go: the core `v1` group-version first, then every group in the
//! server's order, its preferred version before its others. A partial resource (any of
//! group, version, resource may be empty: "any") that matches several resources resolves to
//! the one of highest priority, so `events` is the core `v1` Event and `horizontalpodautoscalers`
//! is `autoscaling/v2`; short names (`deploy`, `po`) expand to their resource first, unless a
//! resource or singular name matches exactly.

use std::fmt;
use std::sync::Arc;

use kube::core::discovery::Scope;
use kube::core::{ApiResource, GroupVersionKind, GroupVersionResource};

use super::{CachedDiscoveryClient, Discovered, DiscoveryError, split_group_version};

/// A group and kind without a version (`Deployment.apps`).
///
/// ```
/// use kube_codegen_runtime::discovery::GroupKind;
/// assert_eq!(GroupKind::new("apps", "Deployment").to_string(), "Deployment.apps");
/// assert_eq!(GroupKind::new("", "Pod").to_string(), "Pod");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKind {
    /// The API group (`""` for core).
    pub group: String,
    /// The kind.
    pub kind: String,
}

impl GroupKind {
    /// A group and kind.
    pub fn new(group: &str, kind: &str) -> Self {
        GroupKind {
            group: group.to_string(),
            kind: kind.to_string(),
        }
    }
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// Go's `GroupVersionResource.String()`: `apps/v1, Resource=deployments`.
fn gvr_string(gvr: &GroupVersionResource) -> String {
    format!("{}/{}, Resource={}", gvr.group, gvr.version, gvr.resource)
}

/// Go's `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`.
fn gvk_string(gvk: &GroupVersionKind) -> String {
    format!("{}/{}, Kind={}", gvk.group, gvk.version, gvk.kind)
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    format!("[{}]", items.iter().map(f).collect::<Vec<_>>().join(" "))
}

/// Why a mapping failed; the messages are apimachinery's.
///
/// ```
/// use kube_codegen_runtime::discovery::{GroupKind, MapperError};
/// let e = MapperError::NoKindMatch { group_kind: GroupKind::new("example.com", "Widget"), searched_versions: vec![] };
/// assert_eq!(e.to_string(), r#"no matches for kind "Widget" in group "example.com""#);
/// assert!(e.is_no_match());
/// ```
#[derive(Debug, thiserror::Error)]
pub enum MapperError {
    /// No served resource matches. Not retryable as is: a CRD may be installed later, after
    /// which a new discovery (or [`DeferredRestMapper::reset`]) finds it.
    #[error("no matches for {}", gvr_string(.0))]
    NoResourceMatch(GroupVersionResource),
    /// No served kind matches (in the versions searched, if any). Not retryable as is (see
    /// [`MapperError::NoResourceMatch`]).
    #[error("{}", no_kind_message(.group_kind, .searched_versions))]
    NoKindMatch {
        /// What was looked for.
        group_kind: GroupKind,
        /// The versions the search was restricted to.
        searched_versions: Vec<String>,
    },
    /// Several resources match with the same priority. Not retryable: be more specific.
    #[error("{} matches multiple resources {}", gvr_string(.partial), list(.matching, gvr_string))]
    AmbiguousResource {
        /// The partial resource asked for.
        partial: GroupVersionResource,
        /// The resources it matches.
        matching: Vec<GroupVersionResource>,
    },
    /// Several kinds match with the same priority. Not retryable: be more specific.
    #[error("{} matches multiple kinds {}", gvr_string(.partial), list(.matching, gvk_string))]
    AmbiguousKind {
        /// The partial resource asked for.
        partial: GroupVersionResource,
        /// The kinds it matches.
        matching: Vec<GroupVersionKind>,
    },
    /// Discovery failed (deferred mapper); retryable as [`DiscoveryError::is_retryable`] says.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
}

fn no_kind_message(gk: &GroupKind, versions: &[String]) -> String {
    let mut searched: Vec<String> = versions
        .iter()
        .map(|v| {
            if gk.group.is_empty() {
                v.clone()
            } else {
                format!("{}/{v}", gk.group)
            }
        })
        .collect();
    searched.sort();
    searched.dedup();
    match searched.as_slice() {
        [] => format!("no matches for kind {:?} in group {:?}", gk.kind, gk.group),
        [one] => format!("no matches for kind {:?} in version {one:?}", gk.kind),
        many => format!(
            "no matches for kind {:?} in versions [{}]",
            gk.kind,
            many.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

impl MapperError {
    /// Whether nothing matched ([`MapperError::NoKindMatch`] or
    /// [`MapperError::NoResourceMatch`]), apimachinery's `IsNoMatchError`.
    pub fn is_no_match(&self) -> bool {
        matches!(
            self,
            MapperError::NoKindMatch { .. } | MapperError::NoResourceMatch(_)
        )
    }
}

/// How a kind is served: its resource, its kind and its scope (client-go's `RESTMapping`).
///
/// ```
/// # use kube::core::discovery::Scope;
/// # use kube::core::{GroupVersionKind, GroupVersionResource};
/// use kube_codegen_runtime::discovery::RestMapping;
/// let m = RestMapping {
///     resource: GroupVersionResource::gvr("apps", "v1", "deployments"),
///     gvk: GroupVersionKind::gvk("apps", "v1", "Deployment"),
///     scope: Scope::Namespaced,
/// };
/// assert!(m.namespaced());
/// assert_eq!(m.api_resource().plural, "deployments");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestMapping {
    /// The resource.
    pub resource: GroupVersionResource,
    /// The kind.
    pub gvk: GroupVersionKind,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
}

impl RestMapping {
    /// Whether the resource lives in namespaces.
    pub fn namespaced(&self) -> bool {
        matches!(self.scope, Scope::Namespaced)
    }

    /// The resource as kube's `ApiResource` (for `kube::Api::<DynamicObject>`, dynamic
    /// informers).
    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&self.gvk, &self.resource.resource)
    }
}

/// One served resource.
#[derive(Debug, Clone)]
struct Entry {
    group: String,
    version: String,
    kind: String,
    plural: String,
    singular: String,
    namespaced: bool,
    /// Lower is preferred.
    priority: usize,
}

impl Entry {
    fn gvr(&self) -> GroupVersionResource {
        GroupVersionResource::gvr(&self.group, &self.version, &self.plural)
    }

    fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(&self.group, &self.version, &self.kind)
    }

    fn matches_resource(&self, partial: &GroupVersionResource) -> bool {
        let resource = partial.resource.to_lowercase();
        (partial.group.is_empty() || partial.group == self.group)
            && (partial.version.is_empty() || partial.version == self.version)
            && (resource == self.plural || resource == self.singular)
    }

    fn matches_kind(&self, kind: &str) -> bool {
        self.kind == kind || self.kind.to_lowercase() == kind
    }

    fn mapping(&self) -> RestMapping {
        RestMapping {
            resource: self.gvr(),
            gvk: self.gvk(),
            scope: if self.namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            },
        }
    }
}

/// A short name and what it stands for.
#[derive(Debug, Clone)]
struct Shortcut {
    short: String,
    group: String,
    resource: String,
}

/// Maps kinds to resources and back over one discovery result. See the [module docs](super).
///
/// ```no_run
/// # use kube::core::GroupVersionResource;
/// # use kube_codegen_runtime::discovery::{DiscoveryClient, GroupKind};
/// # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let mapper = DiscoveryClient::new(client).rest_mapper().await?;
/// let gvk = mapper.kind_for(&GroupVersionResource::gvr("", "", "po"))?;
/// assert_eq!((gvk.version.as_str(), gvk.kind.as_str()), ("v1", "Pod"));
/// let m = mapper.rest_mapping(&GroupKind::new("", "Namespace"), &["v1"])?;
/// assert!(!m.namespaced());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct RestMapper {
    /// By priority, then in discovery order.
    entries: Vec<Entry>,
    /// Every (group, resource) name in discovery order: an exact name is never expanded.
    names: Vec<(String, String, String)>,
    shortcuts: Vec<Shortcut>,
}

impl RestMapper {
    /// A mapper over `discovered` (subresources are not mapped).
    pub fn new(discovered: &Discovered) -> Self {
        // Priority: core v1 first, then each group's preferred version, then its others.
        let mut order: Vec<(String, String)> = vec![(String::new(), "v1".to_string())];
        for g in discovered.groups() {
            let preferred = g.preferred_version.as_ref().map(|v| v.version.as_str());
            let mut versions: Vec<&str> = Vec::new();
            if let Some(p) = preferred
                && discovered
                    .resources_for(&group_version(&g.name, p))
                    .is_some()
            {
                versions.push(p);
            }
            for v in &g.versions {
                if Some(v.version.as_str()) != preferred {
                    versions.push(&v.version);
                }
            }
            for v in versions {
                let key = (g.name.clone(), v.to_string());
                if !order.contains(&key) {
                    order.push(key);
                }
            }
        }
        let mut entries = Vec::new();
        let mut names = Vec::new();
        for list in discovered.resources() {
            let (group, version) = split_group_version(&list.group_version);
            let priority = order
                .iter()
                .position(|(g, v)| g == group && v == version)
                .unwrap_or(usize::MAX);
            for r in &list.resources {
                names.push((group.to_string(), r.name.clone(), r.singular_name.clone()));
                if r.name.contains('/') {
                    continue;
                }
                let singular = if r.singular_name.is_empty() {
                    r.kind.to_lowercase()
                } else {
                    r.singular_name.clone()
                };
                entries.push(Entry {
                    group: group.to_string(),
                    version: version.to_string(),
                    kind: r.kind.clone(),
                    plural: r.name.clone(),
                    singular,
                    namespaced: r.namespaced,
                    priority,
                });
            }
        }
        entries.sort_by_key(|e| e.priority);
        let mut shortcuts = Vec::new();
        for list in discovered.preferred_resources() {
            let (group, _) = split_group_version(&list.group_version);
            for r in &list.resources {
                for s in r.short_names.iter().flatten() {
                    shortcuts.push(Shortcut {
                        short: s.clone(),
                        group: group.to_string(),
                        resource: r.name.clone(),
                    });
                }
            }
        }
        RestMapper {
            entries,
            names,
            shortcuts,
        }
    }

    /// Expands a short name (`deploy` → `deployments` in `apps`), client-go's
    /// `ShortcutExpander`: an exact resource or singular name is kept as is; a short name
    /// becomes its resource and group (the version is dropped); the first match in discovery
    /// order wins.
    ///
    /// ```
    /// # use kube::core::GroupVersionResource;
    /// let mapper = kube_codegen_runtime::discovery::RestMapper::default();
    /// let same = mapper.expand(&GroupVersionResource::gvr("", "", "widgets"));
    /// assert_eq!(same.resource, "widgets");
    /// ```
    pub fn expand(&self, partial: &GroupVersionResource) -> GroupVersionResource {
        let exact = self.names.iter().any(|(g, name, singular)| {
            (partial.group.is_empty() || partial.group == *g)
                && (partial.resource == *name || partial.resource == *singular)
        });
        if exact {
            return partial.clone();
        }
        self.shortcuts
            .iter()
            .find(|s| {
                (partial.group.is_empty() || partial.group == s.group)
                    && partial.resource == s.short
            })
            .map(|s| GroupVersionResource::gvr(&s.group, "", &s.resource))
            .unwrap_or_else(|| partial.clone())
    }

    fn matching(&self, partial: &GroupVersionResource) -> Vec<&Entry> {
        let expanded = self.expand(partial);
        self.entries
            .iter()
            .filter(|e| e.matches_resource(&expanded))
            .collect()
    }

    /// The matches of the highest priority, or an error.
    fn best(&self, partial: &GroupVersionResource) -> Result<Vec<&Entry>, MapperError> {
        let all = self.matching(partial);
        let Some(top) = all.first().map(|e| e.priority) else {
            return Err(MapperError::NoResourceMatch(partial.clone()));
        };
        Ok(all.into_iter().filter(|e| e.priority == top).collect())
    }

    /// Every match of `partial`, preferred first, as `view` shows an entry.
    fn all_as<T>(
        &self,
        partial: &GroupVersionResource,
        view: fn(&Entry) -> T,
    ) -> Result<Vec<T>, MapperError> {
        let all: Vec<T> = self.matching(partial).into_iter().map(view).collect();
        if all.is_empty() {
            return Err(MapperError::NoResourceMatch(partial.clone()));
        }
        Ok(all)
    }

    /// The one best match of `partial` as `view` shows an entry; several distinct ones are
    /// ambiguous (`Err` with them all).
    fn one_as<T: PartialEq>(
        &self,
        partial: &GroupVersionResource,
        view: fn(&Entry) -> T,
    ) -> Result<Result<T, Vec<T>>, MapperError> {
        let mut best: Vec<T> = self.best(partial)?.into_iter().map(view).collect();
        best.dedup();
        Ok(if best.len() == 1 {
            Ok(best.remove(0))
        } else {
            Err(best)
        })
    }

    /// Every resource `partial` matches, preferred first (client-go's `ResourcesFor`).
    pub fn resources_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionResource>, MapperError> {
        self.all_as(partial, Entry::gvr)
    }

    /// The one resource `partial` stands for (client-go's `ResourceFor`); several of the same
    /// priority are ambiguous.
    pub fn resource_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<GroupVersionResource, MapperError> {
        self.one_as(partial, Entry::gvr)?
            .map_err(|matching| MapperError::AmbiguousResource {
                partial: partial.clone(),
                matching,
            })
    }

    /// Every kind `partial` matches, preferred first (client-go's `KindsFor`).
    pub fn kinds_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionKind>, MapperError> {
        self.all_as(partial, Entry::gvk)
    }

    /// The one kind `partial` stands for (client-go's `KindFor`).
    pub fn kind_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<GroupVersionKind, MapperError> {
        self.one_as(partial, Entry::gvk)?
            .map_err(|matching| MapperError::AmbiguousKind {
                partial: partial.clone(),
                matching,
            })
    }

    /// Every mapping of `group_kind` (client-go's `RESTMappings`): in the first of `versions`
    /// that serves it, or, with no versions, in every version, preferred first. The group
    /// must match exactly (`""` is core). The kind may be given in lower case.
    pub fn rest_mappings(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<Vec<RestMapping>, MapperError> {
        let candidates: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.group == group_kind.group && e.matches_kind(&group_kind.kind))
            .collect();
        let versions: Vec<&str> = versions.iter().copied().filter(|v| !v.is_empty()).collect();
        let found: Vec<RestMapping> = if versions.is_empty() {
            candidates.iter().map(|e| e.mapping()).collect()
        } else {
            versions
                .iter()
                .find_map(|v| candidates.iter().find(|e| e.version == *v))
                .map(|e| vec![e.mapping()])
                .unwrap_or_default()
        };
        if found.is_empty() {
            return Err(MapperError::NoKindMatch {
                group_kind: group_kind.clone(),
                searched_versions: versions.iter().map(|v| v.to_string()).collect(),
            });
        }
        Ok(found)
    }

    /// The preferred mapping of `group_kind` (client-go's `RESTMapping`), in the first of
    /// `versions` that serves it when versions are given.
    pub fn rest_mapping(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<RestMapping, MapperError> {
        let mut all = self.rest_mappings(group_kind, versions)?;
        Ok(all.remove(0))
    }

    /// The singular name of a plural resource (client-go's `ResourceSingularizer`).
    pub fn resource_singularizer(&self, resource: &str) -> Result<String, MapperError> {
        self.entries
            .iter()
            .find(|e| e.plural == resource)
            .map(|e| e.singular.clone())
            .ok_or_else(|| {
                MapperError::NoResourceMatch(GroupVersionResource::gvr("", "", resource))
            })
    }

    /// Every mapping, preferred first: one per served group-version-kind.
    pub fn mappings(&self) -> Vec<RestMapping> {
        self.entries.iter().map(Entry::mapping).collect()
    }
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// A [`RestMapper`] built on first use from a [`CachedDiscoveryClient`] (client-go's
/// `DeferredDiscoveryRESTMapper`). A lookup that fails while the cache is not fresh resets it
/// and tries once more; [`reset`](Self::reset) invalidates the cache, so the next lookup
/// sees resources (CRDs) installed since.
///
/// ```no_run
/// # use kube_codegen_runtime::discovery::{CachedDiscoveryClient, DeferredRestMapper, GroupKind};
/// # async fn demo(client: kube::Client) -> Result<(), kube_codegen_runtime::discovery::MapperError> {
/// let mapper = DeferredRestMapper::new(CachedDiscoveryClient::new(client));
/// let widgets = GroupKind::new("example.com", "Widget");
/// if let Err(e) = mapper.rest_mapping(&widgets, &[]).await {
///     if e.is_no_match() {
///         mapper.reset().await; // the CRD may have been installed since
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct DeferredRestMapper {
    discovery: CachedDiscoveryClient,
    mapper: Arc<tokio::sync::Mutex<Option<Arc<RestMapper>>>>,
}

impl DeferredRestMapper {
    /// A mapper over `discovery`'s cache.
    pub fn new(discovery: CachedDiscoveryClient) -> Self {
        DeferredRestMapper {
            discovery,
            mapper: Arc::default(),
        }
    }

    /// The cached discovery client.
    pub fn discovery(&self) -> &CachedDiscoveryClient {
        &self.discovery
    }

    /// The current mapper, discovering first if needed.
    pub async fn mapper(&self) -> Result<Arc<RestMapper>, MapperError> {
        let mut slot = self.mapper.lock().await;
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let discovered = self.discovery.server_groups_and_resources().await?;
        let m = Arc::new(discovered.rest_mapper());
        *slot = Some(m.clone());
        Ok(m)
    }

    /// Forgets the mapper and invalidates the discovery cache: the next lookup discovers again.
    pub async fn reset(&self) {
        let mut slot = self.mapper.lock().await;
        self.discovery.invalidate().await;
        *slot = None;
    }

    async fn with<T>(
        &self,
        f: impl Fn(&RestMapper) -> Result<T, MapperError>,
    ) -> Result<T, MapperError> {
        let first = f(&*self.mapper().await?);
        match first {
            Err(_) if !self.discovery.fresh().await => {
                self.reset().await;
                f(&*self.mapper().await?)
            }
            other => other,
        }
    }

    /// [`RestMapper::kind_for`].
    pub async fn kind_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<GroupVersionKind, MapperError> {
        self.with(|m| m.kind_for(partial)).await
    }

    /// [`RestMapper::kinds_for`].
    pub async fn kinds_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionKind>, MapperError> {
        self.with(|m| m.kinds_for(partial)).await
    }

    /// [`RestMapper::resource_for`].
    pub async fn resource_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<GroupVersionResource, MapperError> {
        self.with(|m| m.resource_for(partial)).await
    }

    /// [`RestMapper::resources_for`].
    pub async fn resources_for(
        &self,
        partial: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionResource>, MapperError> {
        self.with(|m| m.resources_for(partial)).await
    }

    /// [`RestMapper::rest_mapping`].
    pub async fn rest_mapping(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<RestMapping, MapperError> {
        self.with(|m| m.rest_mapping(group_kind, versions)).await
    }

    /// [`RestMapper::rest_mappings`].
    pub async fn rest_mappings(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<Vec<RestMapping>, MapperError> {
        self.with(|m| m.rest_mappings(group_kind, versions)).await
    }

    /// [`RestMapper::resource_singularizer`].
    pub async fn resource_singularizer(&self, resource: &str) -> Result<String, MapperError> {
        self.with(|m| m.resource_singularizer(resource)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        APIGroup, APIResource, APIResourceList, GroupVersionForDiscovery,
    };

    fn group(name: &str, versions: &[&str], preferred: &str) -> APIGroup {
        let gv = |v: &str| GroupVersionForDiscovery {
            group_version: group_version(name, v),
            version: v.to_string(),
        };
        APIGroup {
            name: name.to_string(),
            versions: versions.iter().map(|v| gv(v)).collect(),
            preferred_version: Some(gv(preferred)),
            server_address_by_client_cidrs: None,
        }
    }

    fn res(name: &str, kind: &str, namespaced: bool, short: &[&str]) -> APIResource {
        APIResource {
            name: name.to_string(),
            singular_name: if name.contains('/') {
                String::new()
            } else {
                kind.to_lowercase()
            },
            kind: kind.to_string(),
            namespaced,
            verbs: vec!["get".into(), "list".into()],
            short_names: (!short.is_empty()).then(|| short.iter().map(|s| s.to_string()).collect()),
            ..APIResource::default()
        }
    }

    fn list(gv: &str, resources: Vec<APIResource>) -> APIResourceList {
        APIResourceList {
            group_version: gv.to_string(),
            resources,
        }
    }

    /// A small server: core, apps, events.k8s.io, autoscaling (v2 preferred, v1 too) and a CRD
    /// group whose short name collides with nothing.
    fn discovered() -> Discovered {
        Discovered::new(
            vec![
                group("", &["v1"], "v1"),
                group("apps", &["v1"], "v1"),
                group("events.k8s.io", &["v1"], "v1"),
                group("autoscaling", &["v2", "v1"], "v2"),
                group("example.com", &["v1beta1", "v1"], "v1"),
            ],
            vec![
                list(
                    "v1",
                    vec![
                        res("pods", "Pod", true, &["po"]),
                        res("pods/status", "Pod", true, &[]),
                        res("events", "Event", true, &["ev"]),
                        res("namespaces", "Namespace", false, &["ns"]),
                    ],
                ),
                list(
                    "apps/v1",
                    vec![res("deployments", "Deployment", true, &["deploy"])],
                ),
                list(
                    "events.k8s.io/v1",
                    vec![res("events", "Event", true, &["ev"])],
                ),
                list(
                    "autoscaling/v2",
                    vec![res(
                        "horizontalpodautoscalers",
                        "HorizontalPodAutoscaler",
                        true,
                        &["hpa"],
                    )],
                ),
                list(
                    "autoscaling/v1",
                    vec![res(
                        "horizontalpodautoscalers",
                        "HorizontalPodAutoscaler",
                        true,
                        &["hpa"],
                    )],
                ),
                list(
                    "example.com/v1beta1",
                    vec![res("widgets", "Widget", false, &["wd"])],
                ),
                list(
                    "example.com/v1",
                    vec![res("widgets", "Widget", false, &["wd"])],
                ),
            ],
        )
    }

    fn gvr(g: &str, v: &str, r: &str) -> GroupVersionResource {
        GroupVersionResource::gvr(g, v, r)
    }

    #[test]
    fn kinds_and_resources_prefer_core_then_preferred_versions() {
        let m = discovered().rest_mapper();
        // `events` exists in core and events.k8s.io: core v1 wins.
        let ev = m.kind_for(&gvr("", "", "events")).unwrap();
        assert_eq!((ev.group.as_str(), ev.version.as_str()), ("", "v1"));
        let all = m.kinds_for(&gvr("", "", "events")).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].group, "events.k8s.io");
        // A group given narrows it.
        let ev2 = m.resource_for(&gvr("events.k8s.io", "", "events")).unwrap();
        assert_eq!(ev2.group, "events.k8s.io");
        // Two versions: the preferred one, unless a version is given.
        let hpa = m
            .resource_for(&gvr("", "", "horizontalpodautoscalers"))
            .unwrap();
        assert_eq!(hpa.version, "v2");
        let hpa1 = m
            .resource_for(&gvr("", "v1", "horizontalpodautoscalers"))
            .unwrap();
        assert_eq!(
            (hpa1.group.as_str(), hpa1.version.as_str()),
            ("autoscaling", "v1")
        );
        // Singular names and upper case resources match too.
        assert_eq!(
            m.resource_for(&gvr("", "", "Pod")).unwrap().resource,
            "pods"
        );
        assert_eq!(
            m.kind_for(&gvr("", "", "deployment")).unwrap().kind,
            "Deployment"
        );
        // A CRD group whose preferred version is not the first listed.
        assert_eq!(
            m.resource_for(&gvr("", "", "widgets")).unwrap().version,
            "v1"
        );
    }

    #[test]
    fn short_names_expand_unless_a_name_matches_exactly() {
        let m = discovered().rest_mapper();
        let d = m.resource_for(&gvr("", "", "deploy")).unwrap();
        assert_eq!(
            (d.group.as_str(), d.resource.as_str()),
            ("apps", "deployments")
        );
        assert_eq!(m.kind_for(&gvr("", "", "po")).unwrap().kind, "Pod");
        assert_eq!(m.kind_for(&gvr("", "", "hpa")).unwrap().version, "v2");
        // `ev` is a short name of both Events: the first in discovery order (core).
        assert_eq!(m.resource_for(&gvr("", "", "ev")).unwrap().group, "");
        assert_eq!(
            m.resource_for(&gvr("events.k8s.io", "", "ev"))
                .unwrap()
                .group,
            "events.k8s.io"
        );
        assert_eq!(m.expand(&gvr("", "", "pods")).resource, "pods");
        let e = m.resource_for(&gvr("", "", "nope")).unwrap_err();
        assert_eq!(e.to_string(), "no matches for /, Resource=nope");
        assert!(e.is_no_match());
    }

    #[test]
    fn rest_mappings_follow_versions_then_priority() {
        let m = discovered().rest_mapper();
        let d = m
            .rest_mapping(&GroupKind::new("apps", "Deployment"), &[])
            .unwrap();
        assert_eq!(d.resource, gvr("apps", "v1", "deployments"));
        assert!(d.namespaced());
        let ns = m
            .rest_mapping(&GroupKind::new("", "namespace"), &[])
            .unwrap();
        assert_eq!(
            (ns.gvk.kind.as_str(), ns.namespaced()),
            ("Namespace", false)
        );
        let hpas = m
            .rest_mappings(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &[],
            )
            .unwrap();
        let versions: Vec<&str> = hpas.iter().map(|h| h.gvk.version.as_str()).collect();
        assert_eq!(versions, ["v2", "v1"]);
        let v1 = m
            .rest_mapping(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &["v3", "v1"],
            )
            .unwrap();
        assert_eq!(v1.gvk.version, "v1");
        let missing = m
            .rest_mapping(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &["v3"],
            )
            .unwrap_err();
        assert_eq!(
            missing.to_string(),
            r#"no matches for kind "HorizontalPodAutoscaler" in version "autoscaling/v3""#
        );
        // The group must match exactly: Deployment is not in core.
        let e = m
            .rest_mapping(&GroupKind::new("", "Deployment"), &[])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"no matches for kind "Deployment" in group """#
        );
        let w = m
            .rest_mapping(&GroupKind::new("example.com", "Widget"), &[])
            .unwrap();
        assert_eq!((w.gvk.version.as_str(), w.namespaced()), ("v1", false));
        assert_eq!(w.api_resource().api_version, "example.com/v1");
    }

    #[test]
    fn singularizer_and_ambiguity() {
        let m = discovered().rest_mapper();
        assert_eq!(
            m.resource_singularizer("deployments").unwrap(),
            "deployment"
        );
        assert!(m.resource_singularizer("pods/status").is_err());
        // Two groups with the same resource at the same priority level cannot happen through
        // discovery order, but a mapper over one group-version with two kinds for one name can.
        let d = Discovered::new(
            vec![group("x.io", &["v1"], "v1")],
            vec![list(
                "x.io/v1",
                vec![res("things", "Thing", true, &[]), {
                    let mut r = res("others", "Thing2", true, &[]);
                    r.singular_name = "things".into();
                    r
                }],
            )],
        );
        let e = d
            .rest_mapper()
            .kind_for(&gvr("", "", "things"))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/, Resource=things matches multiple kinds [x.io/v1, Kind=Thing x.io/v1, Kind=Thing2]"
        );
    }

    #[test]
    fn preferred_resources_pick_one_version_per_resource() {
        let d = discovered();
        let lists = d.preferred_resources();
        let names: Vec<(String, Vec<String>)> = lists
            .iter()
            .map(|l| {
                (
                    l.group_version.clone(),
                    l.resources.iter().map(|r| r.name.clone()).collect(),
                )
            })
            .collect();
        let find = |gv: &str| {
            names
                .iter()
                .find(|(g, _)| g == gv)
                .map(|(_, r)| r.clone())
                .unwrap_or_default()
        };
        assert_eq!(find("v1"), ["events", "namespaces", "pods"]);
        assert_eq!(find("autoscaling/v2"), ["horizontalpodautoscalers"]);
        assert!(
            find("autoscaling/v1").is_empty(),
            "the preferred version took it"
        );
        assert_eq!(find("example.com/v1"), ["widgets"]);
        assert!(find("example.com/v1beta1").is_empty());
        let namespaced = d.preferred_namespaced_resources();
        assert!(
            namespaced
                .iter()
                .all(|l| l.resources.iter().all(|r| r.namespaced))
        );
        assert_eq!(
            namespaced
                .iter()
                .find(|l| l.group_version == "v1")
                .map(|l| l.resources.len()),
            Some(2)
        );
    }
}
