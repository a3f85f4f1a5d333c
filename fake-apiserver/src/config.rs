//! The server's settings, as the builder sets them.

use std::time::Duration;

/// Server settings.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Events kept per resource for watches and paginated lists.
    pub(crate) history_capacity: usize,
    /// Interval of BOOKMARK events on watches that allow them.
    pub(crate) bookmark_interval: Duration,
    /// How long a watcher whose client does not read may hold up its stream before it is
    /// cut with a 410 (the watch cache's protection against slow watchers).
    pub(crate) slow_watcher_timeout: Duration,
    /// NamespaceLifecycle admission: creates need an existing, non-terminating namespace.
    pub(crate) namespace_lifecycle: bool,
    /// Where admission webhooks named by a Service (`clientConfig.service`) are called:
    /// (namespace, name, port) → `host:port`.
    pub(crate) webhook_services:
        std::sync::Arc<std::collections::BTreeMap<(String, String, i64), String>>,
    /// kube-apiserver's `ShardedListAndWatch` feature gate (alpha, off by default): list,
    /// watch and deletecollection honour `shardSelector` (KEP-5866); off, it is ignored.
    pub(crate) sharded_list_and_watch: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            history_capacity: 10_000,
            bookmark_interval: Duration::from_secs(60),
            slow_watcher_timeout: Duration::from_secs(10),
            namespace_lifecycle: true,
            webhook_services: Default::default(),
            sharded_list_and_watch: false,
        }
    }
}
