//! [`InformerOptions`]: how an informer lists and watches, defined once for a single informer
//! ([`InformerBuilder::options`](super::InformerBuilder::options)) and for every informer of a
//! factory ([`FactoryBuilder::options`](crate::factory::FactoryBuilder::options)), as kube-rs's
//! `watcher::Config` serves every watcher.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{ListParams, ObjectMeta};

use super::BackoffConfig;
use super::metrics::InformerMetricsProvider;

/// Adjusts the list and watch options of an informer (selectors …), as client-go's
/// `TweakListOptionsFunc` does.
///
/// ```
/// use std::sync::Arc;
/// use kube_codegen_runtime::informer::TweakListParams;
/// let tweak: TweakListParams = Arc::new(|lp| lp.label_selector = Some("app=web".into()));
/// ```
pub type TweakListParams = Arc<dyn Fn(&mut ListParams) + Send + Sync>;

/// Rewrites the metadata of each object before it is cached (client-go's `WithTransform`).
///
/// ```
/// use std::sync::Arc;
/// use kube_codegen_runtime::informer::MetadataTransform;
/// let drop_annotations: MetadataTransform = Arc::new(|meta| meta.annotations = None);
/// ```
pub type MetadataTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// The default list page size, client-go's.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// How informers list and watch. Every option is set with a method that returns the options,
/// so they read as a sentence; the defaults are client-go's: all namespaces, no tweaks, no
/// resync, no transform, pages of 500, a server-side watch timeout of 240–290 s at random, and
/// client-go's retry backoff.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::InformerOptions;
///
/// let options = InformerOptions::default()
///     .namespace("prod")
///     .tweak_list_params(|lp| lp.label_selector = Some("team=a".into()))
///     .resync(Duration::from_secs(300))
///     .strip_managed_fields()
///     .page_size(Some(1000));
/// assert_eq!(options.get_namespace(), Some("prod"));
/// assert_eq!(options.get_resync(), Some(Duration::from_secs(300)));
/// ```
#[derive(Clone)]
pub struct InformerOptions {
    namespace: Option<String>,
    tweaks: Vec<TweakListParams>,
    resync: Option<Duration>,
    metadata_transforms: Vec<MetadataTransform>,
    page_size: Option<u32>,
    watch_timeout: Option<Duration>,
    backoff: BackoffConfig,
    watch_list: bool,
    shard_selector: Option<String>,
    compact: bool,
    strips_managed_fields: bool,
    metrics_provider: Option<Arc<dyn InformerMetricsProvider>>,
}

impl Default for InformerOptions {
    fn default() -> Self {
        InformerOptions {
            namespace: None,
            tweaks: Vec::new(),
            resync: None,
            metadata_transforms: Vec::new(),
            page_size: Some(DEFAULT_PAGE_SIZE),
            watch_timeout: None,
            backoff: BackoffConfig::default(),
            watch_list: false,
            shard_selector: None,
            compact: true,
            strips_managed_fields: false,
            metrics_provider: None,
        }
    }
}

impl fmt::Debug for InformerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerOptions")
            .field("namespace", &self.namespace)
            .field("tweaks", &self.tweaks.len())
            .field("resync", &self.resync)
            .field("metadata_transforms", &self.metadata_transforms.len())
            .field("page_size", &self.page_size)
            .field("watch_timeout", &self.watch_timeout)
            .field("backoff", &self.backoff)
            .field("watch_list", &self.watch_list)
            .field("shard_selector", &self.shard_selector)
            .field("compact", &self.compact)
            .field("strips_managed_fields", &self.strips_managed_fields)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .finish()
    }
}

impl InformerOptions {
    /// Restricts informers to `namespace` (client-go's `WithNamespace`); cluster-scoped kinds
    /// ignore it, and the empty string means all namespaces.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into()).filter(|ns: &String| !ns.is_empty());
        self
    }

    /// Adjusts the list and watch parameters (client-go's `WithTweakListOptions`); may be
    /// called several times, the tweaks run in order.
    #[must_use]
    pub fn tweak_list_params(
        self,
        tweak: impl Fn(&mut ListParams) + Send + Sync + 'static,
    ) -> Self {
        self.tweak_list_params_arc(Arc::new(tweak))
    }

    /// [`InformerOptions::tweak_list_params`] with a shared function.
    #[must_use]
    pub fn tweak_list_params_arc(mut self, tweak: TweakListParams) -> Self {
        self.tweaks.push(tweak);
        self
    }

    /// Re-delivers every cached object as `on_update(obj, obj)` this often (zero: never).
    #[must_use]
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period).filter(|d| !d.is_zero());
        self
    }

    /// Rewrites the metadata of every object before it is cached and handed to handlers
    /// (client-go's `WithTransform`); may be called several times. A type-specific transform
    /// (`InformerBuilder::transform`, `FactoryBuilder::transform_for`) runs first.
    #[must_use]
    pub fn transform_metadata(
        mut self,
        transform: impl Fn(&mut ObjectMeta) + Send + Sync + 'static,
    ) -> Self {
        self.metadata_transforms.push(Arc::new(transform));
        self
    }

    /// Drops `metadata.managedFields` from every cached object: usually the largest part of an
    /// object, and rarely needed by controllers.
    #[must_use]
    pub fn strip_managed_fields(mut self) -> Self {
        self.strips_managed_fields = true;
        self.transform_metadata(|meta| meta.managed_fields = None)
    }

    /// Whether informers keep each cached object compact — on by default — or decoded
    /// (`compact(false)`). Compact: the JSON text the server sent (without `managedFields` when
    /// [`strip_managed_fields`](Self::strip_managed_fields) drops them), LZ4-compressed against a
    /// dictionary made of the store's first object, beside its namespace, name and
    /// resourceVersion; each read decompresses and decodes it again, transforms included. A
    /// fraction of a decoded object's memory (see the guide's informer page for measured
    /// figures), for a decode per object read: a `get` costs microseconds instead of
    /// nanoseconds, a `list` a decode per object. Event handlers still receive the decoded
    /// objects of events. `compact(false)` suits controllers that list thousands of objects
    /// often.
    ///
    /// ```
    /// use kube_codegen_runtime::InformerOptions;
    /// assert!(InformerOptions::default().get_compact());
    /// let decoded = InformerOptions::default().compact(false);
    /// assert!(!decoded.get_compact());
    /// ```
    #[must_use]
    pub fn compact(mut self, on: bool) -> Self {
        self.compact = on;
        self
    }

    /// Whether informers keep objects compact ([`compact`](Self::compact)).
    pub fn get_compact(&self) -> bool {
        self.compact
    }

    /// Whether [`strip_managed_fields`](Self::strip_managed_fields) was asked for.
    pub(crate) fn strips_managed_fields(&self) -> bool {
        self.strips_managed_fields
    }

    /// The list page size (default 500, as client-go's; `None` lists in one request). A
    /// `limit` set by a tweak wins.
    #[must_use]
    pub fn page_size(mut self, page_size: Option<u32>) -> Self {
        self.page_size = page_size.filter(|n| *n > 0);
        self
    }

    /// The server-side timeout of each watch request (default: 240–290 s at random, so that a
    /// fleet of informers does not reconnect at once).
    #[must_use]
    pub fn watch_timeout(mut self, timeout: Duration) -> Self {
        self.watch_timeout = Some(timeout);
        self
    }

    /// The retry backoff after a failed list or watch (default: client-go's, 800 ms doubling
    /// to 30 s with jitter).
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }

    /// Syncs with a WatchList instead of a list (KEP-3157; client-go's `WatchListClient`): one
    /// watch streams the objects, each decoded as it arrives, and goes on as the informer's
    /// watch, so no list response is ever held whole and the sync costs one request. A server
    /// that refuses it is listed instead, from then on (kube-apiserver serves it from 1.32;
    /// the in-memory server too). Off by default.
    #[must_use]
    pub fn watch_list(mut self, on: bool) -> Self {
        self.watch_list = on;
        self
    }

    /// Caches only the objects a KEP-5866 `shardSelector` selects (for example
    /// `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`; see
    /// `kube_controller_runtime::sharding::uid_range_selector`): sent with every list and watch,
    /// so the server filters and this process holds and decodes only its share. Only servers
    /// with kube-apiserver's `ShardedListAndWatch` feature gate (alpha in 1.36) filter; others
    /// ignore the parameter and send everything, so check first
    /// (`kube_controller_runtime::sharding::server_supports_shard_selector`). An empty
    /// selector is none.
    #[must_use]
    pub fn shard_selector(mut self, selector: impl Into<String>) -> Self {
        self.shard_selector = Some(selector.into()).filter(|s| !s.is_empty());
        self
    }

    /// The KEP-5866 shard selector, if any ([`shard_selector`](Self::shard_selector)).
    pub fn get_shard_selector(&self) -> Option<&str> {
        self.shard_selector.as_deref()
    }

    /// Reports each informer's KEP-4346 metrics (queued items, processing latency, store
    /// resourceVersion) through `provider` (client-go's `InformerMetricsProvider`; see
    /// [`metrics`](super::metrics)). None by default; a Manager gives its registry's.
    #[must_use]
    pub fn metrics_provider(mut self, provider: Arc<dyn InformerMetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// The metrics provider, if any ([`metrics_provider`](Self::metrics_provider)).
    pub fn get_metrics_provider(&self) -> Option<&Arc<dyn InformerMetricsProvider>> {
        self.metrics_provider.as_ref()
    }

    /// Whether the informers list with WatchList ([`watch_list`](Self::watch_list)).
    pub fn get_watch_list(&self) -> bool {
        self.watch_list
    }

    /// The namespace informers are restricted to, if any.
    pub fn get_namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The resync period, if any.
    pub fn get_resync(&self) -> Option<Duration> {
        self.resync
    }

    /// The list page size.
    pub fn get_page_size(&self) -> Option<u32> {
        self.page_size
    }

    /// The watch timeout, if set.
    pub fn get_watch_timeout(&self) -> Option<Duration> {
        self.watch_timeout
    }

    /// The retry backoff.
    pub fn get_backoff(&self) -> BackoffConfig {
        self.backoff
    }

    /// The list parameters after every tweak.
    pub(crate) fn list_params(&self) -> ListParams {
        let mut lp = ListParams::default();
        for t in &self.tweaks {
            t(&mut lp);
        }
        lp
    }

    /// The metadata transforms, composed; `None` when there are none.
    pub(crate) fn metadata_transform(&self) -> Option<MetadataTransform> {
        match self.metadata_transforms.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => {
                let many = many.to_vec();
                Some(Arc::new(move |meta: &mut ObjectMeta| {
                    for t in &many {
                        t(meta);
                    }
                }))
            }
        }
    }

    /// These options with `resync` replaced (a factory's per-type period).
    pub(crate) fn with_resync(mut self, period: Option<Duration>) -> Self {
        self.resync = period.filter(|d| !d.is_zero());
        self
    }

    /// These options with the namespace dropped (a cluster-scoped kind).
    pub(crate) fn without_namespace(mut self) -> Self {
        self.namespace = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_client_gos() {
        let o = InformerOptions::default();
        assert_eq!(o.get_namespace(), None);
        assert_eq!(o.get_resync(), None);
        assert_eq!(o.get_page_size(), Some(500));
        assert_eq!(o.get_watch_timeout(), None);
        assert!(o.metadata_transform().is_none());
        assert_eq!(o.list_params().label_selector, None);
    }

    #[test]
    fn zero_and_empty_mean_unset() {
        let o = InformerOptions::default()
            .namespace("")
            .resync(Duration::ZERO)
            .page_size(Some(0));
        assert_eq!(
            (o.get_namespace(), o.get_resync(), o.get_page_size()),
            (None, None, None)
        );
    }

    #[test]
    fn tweaks_and_transforms_compose_in_order() {
        let o = InformerOptions::default()
            .tweak_list_params(|lp| lp.label_selector = Some("a=1".into()))
            .tweak_list_params(|lp| {
                let prev = lp.label_selector.take().unwrap_or_default();
                lp.label_selector = Some(format!("{prev},b=2"));
            })
            .transform_metadata(|m| m.name = Some("x".into()))
            .transform_metadata(|m| m.name = m.name.take().map(|n| format!("{n}y")));
        assert_eq!(o.list_params().label_selector.as_deref(), Some("a=1,b=2"));
        let mut meta = ObjectMeta::default();
        if let Some(t) = o.metadata_transform() {
            t(&mut meta);
        }
        assert_eq!(meta.name.as_deref(), Some("xy"));
    }
}
