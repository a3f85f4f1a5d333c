//! Memory-cached discovery (client-go's `discovery/cached/memory`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
use k8s_openapi::apimachinery::pkg::version::Info;

use super::{Discovered, DiscoveryClient, DiscoveryError, RestMapper};

/// What the cache holds after a refresh.
#[derive(Debug, Clone)]
struct Cache {
    groups: APIGroupList,
    resources: BTreeMap<String, Result<APIResourceList, Arc<DiscoveryError>>>,
}

/// A discovery client that asks the server once and then answers from memory until
/// [`invalidate`](Self::invalidate)d (client-go's `memory.NewMemCacheClient`). The first
/// question fills the cache with every group and the resources of every group-version; a
/// group-version whose discovery failed transiently (no answer, 429, 5xx) is asked again when
/// it is next wanted. The server version is never cached. Clones share the cache.
///
/// ```no_run
/// # async fn demo(client: kube::Client) -> Result<(), kube_codegen_runtime::discovery::DiscoveryError> {
/// use kube_codegen_runtime::discovery::CachedDiscoveryClient;
/// let cached = CachedDiscoveryClient::new(client);
/// let groups = cached.server_groups().await?; // asks the server
/// let again = cached.server_groups().await?; // from memory
/// assert!(cached.fresh().await);
/// cached.invalidate().await; // e.g. after installing a CRD
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CachedDiscoveryClient {
    delegate: DiscoveryClient,
    cache: Arc<tokio::sync::Mutex<Option<Cache>>>,
}

impl fmt::Debug for CachedDiscoveryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedDiscoveryClient")
            .finish_non_exhaustive()
    }
}

impl From<DiscoveryClient> for CachedDiscoveryClient {
    fn from(delegate: DiscoveryClient) -> Self {
        CachedDiscoveryClient {
            delegate,
            cache: Arc::default(),
        }
    }
}

impl CachedDiscoveryClient {
    /// A cached discovery client over `client`.
    pub fn new(client: kube::Client) -> Self {
        DiscoveryClient::new(client).into()
    }

    /// The uncached client underneath.
    pub fn delegate(&self) -> &DiscoveryClient {
        &self.delegate
    }

    /// Fills the cache if it is empty, under the lock.
    async fn filled(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Cache>>, DiscoveryError> {
        let mut slot = self.cache.lock().await;
        if slot.is_none() {
            let discovered = self.delegate.server_groups_and_resources().await?;
            let mut resources: BTreeMap<String, Result<APIResourceList, Arc<DiscoveryError>>> =
                discovered
                    .resources
                    .into_iter()
                    .map(|(gv, l)| (gv, Ok(l)))
                    .collect();
            for (gv, e) in discovered.failed {
                resources.insert(gv, Err(e));
            }
            *slot = Some(Cache {
                groups: APIGroupList {
                    groups: discovered.groups,
                },
                resources,
            });
        }
        Ok(slot)
    }

    /// Whether the cache holds a complete discovery (client-go's `Fresh`): true from the first
    /// fill until [`invalidate`](Self::invalidate).
    pub async fn fresh(&self) -> bool {
        self.cache.lock().await.is_some()
    }

    /// Drops everything cached; the next question asks the server again.
    pub async fn invalidate(&self) {
        *self.cache.lock().await = None;
    }

    /// [`DiscoveryClient::server_groups`], from the cache.
    pub async fn server_groups(&self) -> Result<APIGroupList, DiscoveryError> {
        let slot = self.filled().await?;
        Ok(slot.as_ref().map(|c| c.groups.clone()).unwrap_or_default())
    }

    /// [`DiscoveryClient::server_resources_for_group_version`], from the cache; a
    /// group-version the server did not list is [`DiscoveryError::NotInCache`], and one that
    /// failed transiently is asked again.
    pub async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, DiscoveryError> {
        if group_version.is_empty() {
            return Err(DiscoveryError::EmptyGroupVersion);
        }
        let mut slot = self.filled().await?;
        let Some(cache) = slot.as_mut() else {
            return Err(DiscoveryError::NotInCache(group_version.to_string()));
        };
        match cache.resources.get(group_version) {
            None => Err(DiscoveryError::NotInCache(group_version.to_string())),
            Some(Ok(list)) => Ok(list.clone()),
            Some(Err(e)) if e.is_retryable() => {
                let again = self
                    .delegate
                    .server_resources_for_group_version(group_version)
                    .await;
                match again {
                    Ok(list) => {
                        cache
                            .resources
                            .insert(group_version.to_string(), Ok(list.clone()));
                        Ok(list)
                    }
                    Err(e) => {
                        let e = Arc::new(e);
                        cache
                            .resources
                            .insert(group_version.to_string(), Err(e.clone()));
                        Err(DiscoveryError::GroupDiscoveryFailed(BTreeMap::from([(
                            group_version.to_string(),
                            e,
                        )])))
                    }
                }
            }
            Some(Err(e)) => Err(DiscoveryError::GroupDiscoveryFailed(BTreeMap::from([(
                group_version.to_string(),
                e.clone(),
            )]))),
        }
    }

    /// [`DiscoveryClient::server_groups_and_resources`], from the cache.
    pub async fn server_groups_and_resources(&self) -> Result<Discovered, DiscoveryError> {
        let slot = self.filled().await?;
        let Some(cache) = slot.as_ref() else {
            return Ok(Discovered::default());
        };
        let mut discovered = Discovered {
            groups: cache.groups.groups.clone(),
            ..Discovered::default()
        };
        for (gv, r) in &cache.resources {
            match r {
                Ok(list) => {
                    discovered.resources.insert(gv.clone(), list.clone());
                }
                Err(e) => {
                    discovered.failed.insert(gv.clone(), e.clone());
                }
            }
        }
        Ok(discovered)
    }

    /// [`DiscoveryClient::server_preferred_resources`], from the cache.
    pub async fn server_preferred_resources(&self) -> Result<Vec<APIResourceList>, DiscoveryError> {
        self.server_groups_and_resources()
            .await?
            .into_complete()
            .map(|d| d.preferred_resources())
    }

    /// The server's version, always asked (as in client-go).
    pub async fn server_version(&self) -> Result<Info, DiscoveryError> {
        self.delegate.server_version().await
    }

    /// A [`RestMapper`] over the cached discovery.
    pub async fn rest_mapper(&self) -> Result<RestMapper, DiscoveryError> {
        Ok(self.server_groups_and_resources().await?.rest_mapper())
    }
}
