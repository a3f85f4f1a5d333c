//! client-go's `EvictionExpansion` (`policy/v1/eviction_expansion.go`).

use k8s_openapi::api::policy::v1::Eviction;
use kube::api::PostParams;
use kube::core::Status;

use crate::client::clientset::versioned::typed::policy::v1::EvictionClient;

impl EvictionClient {
    /// Evicts the pod `eviction.metadata.name` in `eviction.metadata.namespace` (client-go's
    /// `Evict`, which takes the namespace from the eviction, not from the client): POST the
    /// `policy/v1` Eviction to `/api/v1/namespaces/<ns>/pods/<name>/eviction`.
    pub async fn evict(&self, eviction: &Eviction, params: &PostParams) -> kube::Result<Status> {
        let namespace = eviction.metadata.namespace.as_deref().unwrap_or_default();
        crate::expansion::core_v1::evict(self.client(), namespace, eviction, params).await
    }
}
