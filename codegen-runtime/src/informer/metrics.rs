//! The informer's metrics hook (client-go's `InformerMetricsProvider`, KEP-4346).
//!
//! An informer given a provider ([`InformerOptions::metrics_provider`](super::InformerOptions::metrics_provider))
//! reports, under its [`InformerId`]:
//!
//! | metric (client-go's name) | what |
//! | --- | --- |
//! | queued items (`informer_queued_items`) | notifications waiting in the handlers' queues, summed over the informer's handlers (client-go counts the deltas in its FIFO; ours has no FIFO: the store is written as events arrive, and notifications queue per handler) |
//! | processing latency (`informer_processing_latency_seconds`) | time to process one watch event, or one list, from its decoded JSON to every handler's queue (decode, transforms, store write, fan-out) |
//! | store resourceVersion (`informer_store_resource_version`) | the 15 least significant digits of the resourceVersion the store has reached (events, lists and bookmarks) |
//!
//! The informer knows nothing about Prometheus: a backend implements the small metric traits
//! of the [work queue's hook](crate::workqueue::metrics).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use kube_codegen_runtime::informer::{InformerId, InformerMetricsProvider};
//! use kube_codegen_runtime::workqueue::{HistogramMetric, SettableGaugeMetric};
//!
//! struct Rv(Arc<AtomicU64>);
//! impl SettableGaugeMetric for Rv {
//!     fn set(&self, v: f64) { self.0.store(v as u64, Ordering::Relaxed) }
//! }
//! struct Nop;
//! impl SettableGaugeMetric for Nop { fn set(&self, _: f64) {} }
//! impl HistogramMetric for Nop { fn observe(&self, _: f64) {} }
//!
//! struct Provider(Arc<AtomicU64>);
//! impl InformerMetricsProvider for Provider {
//!     fn new_queued_item_metric(&self, _: &InformerId) -> Box<dyn SettableGaugeMetric> { Box::new(Nop) }
//!     fn new_processing_latency_metric(&self, _: &InformerId) -> Box<dyn HistogramMetric> { Box::new(Nop) }
//!     fn new_store_resource_version_metric(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
//!         assert_eq!(id.resource, "configmaps");
//!         Box::new(Rv(self.0.clone()))
//!     }
//! }
//! let options = kube_codegen_runtime::InformerOptions::default()
//!     .metrics_provider(Arc::new(Provider(Arc::default())));
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use crate::workqueue::{HistogramMetric, SettableGaugeMetric};

/// Which informer a metric is about (client-go's `InformerNameAndResource`): its name and the
/// group, version and resource it serves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InformerId {
    /// The informer's name ([`SharedIndexInformer::name`](super::SharedIndexInformer::name)).
    pub name: String,
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

/// Creates an informer's metrics (client-go's `InformerMetricsProvider`).
pub trait InformerMetricsProvider: Send + Sync {
    /// Notifications queued for the informer's handlers.
    fn new_queued_item_metric(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric>;
    /// Seconds to process one event (or one list) up to the handlers' queues.
    fn new_processing_latency_metric(&self, id: &InformerId) -> Box<dyn HistogramMetric>;
    /// The store's resourceVersion (its 15 least significant digits).
    fn new_store_resource_version_metric(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric>;
}

/// The queued-items gauge and its count, shared by the informer's handler queues.
pub(crate) struct Queued {
    count: AtomicI64,
    gauge: Box<dyn SettableGaugeMetric>,
}

impl Queued {
    pub(crate) fn inc(&self) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        self.gauge.set(n as f64);
    }

    pub(crate) fn dec(&self) {
        let n = self.count.fetch_sub(1, Ordering::Relaxed) - 1;
        self.gauge.set(n as f64);
    }
}

/// Decrements the queued count when the notification it travels with is delivered or dropped.
pub(crate) struct QueuedGuard(pub(crate) Arc<Queued>);

impl Drop for QueuedGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// One informer's metrics, resolved once.
pub(crate) struct InformerMetrics {
    pub(crate) queued: Arc<Queued>,
    latency: Box<dyn HistogramMetric>,
    store_rv: Box<dyn SettableGaugeMetric>,
}

impl InformerMetrics {
    pub(crate) fn new(provider: &dyn InformerMetricsProvider, id: &InformerId) -> Self {
        InformerMetrics {
            queued: Arc::new(Queued {
                count: AtomicI64::new(0),
                gauge: provider.new_queued_item_metric(id),
            }),
            latency: provider.new_processing_latency_metric(id),
            store_rv: provider.new_store_resource_version_metric(id),
        }
    }

    pub(crate) fn processed_since(&self, start: Instant) {
        self.latency.observe(start.elapsed().as_secs_f64());
    }

    pub(crate) fn store_resource_version(&self, rv: &str) {
        if let Some(v) = least_significant_digits(rv) {
            self.store_rv.set(v as f64);
        }
    }
}

/// The value of the last 15 digits of a resourceVersion (client-go's gauge holds these so the
/// number survives a float); `None` for one that is not a decimal number.
pub(crate) fn least_significant_digits(rv: &str) -> Option<u64> {
    if rv.is_empty() || !rv.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let tail = &rv[rv.len().saturating_sub(15)..];
    tail.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::least_significant_digits;

    #[test]
    fn resource_versions_keep_their_last_fifteen_digits() {
        assert_eq!(least_significant_digits("42"), Some(42));
        assert_eq!(
            least_significant_digits("1234567890123456789"),
            Some(567890123456789)
        );
        assert_eq!(least_significant_digits(""), None);
        assert_eq!(least_significant_digits("abc"), None);
    }
}
