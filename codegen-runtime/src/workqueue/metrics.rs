//! The work queue's metrics hook (client-go's `workqueue.MetricsProvider`).
//!
//! A *named* queue reports what happens to it through seven metrics that a [`MetricsProvider`]
//! creates for the name: depth, adds, queue latency, work duration, unfinished work, the longest
//! running processor and retries — the `workqueue_*` families controller-runtime exports. The
//! queue knows nothing about Prometheus: any backend implements the four small metric traits.
//!
//! The provider comes from [`QueueConfig::metrics_provider`], else from the process-wide one set
//! with [`set_provider`] (once, as client-go's `SetProvider`), else there are no metrics. A queue
//! without a name never reports (client-go does the same).
//!
//! What is reported, as client-go reports it:
//!
//! | event | metrics |
//! | --- | --- |
//! | an item becomes dirty (`add` of an item not already waiting) | adds +1, depth +1, its add time is remembered |
//! | `get` hands it out | depth −1, queue latency observed (now − add time), its start time is remembered |
//! | `done` | work duration observed (now − start time) |
//! | `add_after` / `add_rate_limited` | retries +1 |
//! | every 500 ms while items are in hand | unfinished work = Σ (now − start), longest running = max (now − start) |
//! | `shut_down` drops waiting items | depth back to 0 |
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicI64, Ordering};
//! use kube_codegen_runtime::workqueue::{
//!     CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, QueueConfig, RateLimitingQueue,
//!     SettableGaugeMetric,
//! };
//!
//! #[derive(Default)]
//! struct Depth(Arc<AtomicI64>);
//! impl GaugeMetric for Depth {
//!     fn inc(&self) { self.0.fetch_add(1, Ordering::Relaxed); }
//!     fn dec(&self) { self.0.fetch_sub(1, Ordering::Relaxed); }
//! }
//! struct Nop;
//! impl CounterMetric for Nop { fn inc(&self) {} }
//! impl HistogramMetric for Nop { fn observe(&self, _: f64) {} }
//! impl SettableGaugeMetric for Nop { fn set(&self, _: f64) {} }
//!
//! struct Provider(Arc<AtomicI64>);
//! impl MetricsProvider for Provider {
//!     fn new_depth_metric(&self, _name: &str) -> Box<dyn GaugeMetric> { Box::new(Depth(self.0.clone())) }
//!     fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> { Box::new(Nop) }
//!     fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> { Box::new(Nop) }
//!     fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> { Box::new(Nop) }
//!     fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> { Box::new(Nop) }
//!     fn new_longest_running_processor_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> { Box::new(Nop) }
//!     fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> { Box::new(Nop) }
//! }
//!
//! let depth = Arc::new(AtomicI64::new(0));
//! let queue = RateLimitingQueue::<String>::with_config(
//!     QueueConfig::named("mydemo").metrics_provider(Arc::new(Provider(depth.clone()))),
//! );
//! queue.add("default/a".into());
//! queue.add("default/a".into());
//! queue.add("default/b".into());
//! assert_eq!(depth.load(Ordering::Relaxed), 2);
//! ```

use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ahash::AHashMap;
use tokio::time::Instant;

/// A gauge that goes up and down by one (client-go's `GaugeMetric`).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge set to a value (client-go's `SettableGaugeMetric`).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A gauge per priority that goes up and down by one (controller-runtime's
/// `DepthMetricWithPriority`): the depth of a [`PriorityQueue`](super::PriorityQueue) by the
/// priority of its ready items.
pub trait PriorityGaugeMetric: Send + Sync {
    /// Adds one at `priority`.
    fn inc(&self, priority: i32);
    /// Subtracts one at `priority`.
    fn dec(&self, priority: i32);
}

/// A monotonic counter (client-go's `CounterMetric`).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A distribution of observed values, in seconds here (client-go's `HistogramMetric`).
pub trait HistogramMetric: Send + Sync {
    /// Records one value.
    fn observe(&self, value: f64);
}

/// Creates the metrics of a named queue (client-go's `MetricsProvider`). Each method is called
/// once per queue, with the queue's name.
pub trait MetricsProvider: Send + Sync {
    /// Items waiting to be handed out (`workqueue_depth`).
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// Items added (`workqueue_adds_total`).
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Seconds an item waited before it was handed out (`workqueue_queue_duration_seconds`).
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Seconds between hand-out and `done` (`workqueue_work_duration_seconds`).
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Seconds of work in progress that has not been observed by the work duration yet
    /// (`workqueue_unfinished_work_seconds`): large values hint at stuck workers.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Seconds the longest-running item has been in hand
    /// (`workqueue_longest_running_processor_seconds`).
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// Delayed (rate-limited) re-adds (`workqueue_retries_total`).
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// The depth by priority of a [`PriorityQueue`](super::PriorityQueue) (`workqueue_depth`
    /// with controller-runtime's `priority` label). `None`, the default, makes such a queue
    /// report its depth through [`MetricsProvider::new_depth_metric`] instead.
    fn new_depth_metric_with_priority(&self, name: &str) -> Option<Box<dyn PriorityGaugeMetric>> {
        let _ = name;
        None
    }
}

static GLOBAL_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Sets the process-wide provider used by named queues created without one. Only the first call
/// has an effect (client-go's `SetProvider`); returns whether this call set it.
///
/// ```
/// # use std::sync::Arc;
/// # use kube_codegen_runtime::workqueue::{set_provider, MetricsProvider};
/// # fn demo(p: Arc<dyn MetricsProvider>) {
/// let first = set_provider(p);
/// # }
/// ```
pub fn set_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    GLOBAL_PROVIDER.set(provider).is_ok()
}

/// How a queue is made: its name (for metrics) and metrics provider (client-go's
/// `QueueConfig`).
///
/// ```
/// use kube_codegen_runtime::workqueue::{QueueConfig, Queue};
/// let q = Queue::<String>::with_config(QueueConfig::named("pods"));
/// assert_eq!(q.name(), Some("pods"));
/// ```
#[derive(Clone, Default)]
pub struct QueueConfig {
    name: Option<String>,
    provider: Option<Arc<dyn MetricsProvider>>,
}

impl fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.provider.is_some())
            .finish()
    }
}

impl QueueConfig {
    /// A configuration with a name; metrics come from the global provider, if any.
    ///
    /// ```
    /// let c = kube_codegen_runtime::workqueue::QueueConfig::named("mydemo");
    /// ```
    pub fn named(name: impl Into<String>) -> Self {
        QueueConfig {
            name: Some(name.into()),
            provider: None,
        }
    }

    /// Reports to `provider` instead of the global one.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # fn demo(p: Arc<dyn kube_codegen_runtime::workqueue::MetricsProvider>) {
    /// let c = kube_codegen_runtime::workqueue::QueueConfig::named("mydemo").metrics_provider(p);
    /// # }
    /// ```
    #[must_use]
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The name.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::QueueConfig::default().name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub(crate) fn into_metrics<T>(self) -> (Option<String>, Option<QueueMetrics<T>>) {
        self.into_metrics_with(false)
    }

    /// As `into_metrics`; `by_priority` asks the provider for a depth by priority first.
    pub(crate) fn into_metrics_with<T>(
        self,
        by_priority: bool,
    ) -> (Option<String>, Option<QueueMetrics<T>>) {
        let provider = self.provider.or_else(|| GLOBAL_PROVIDER.get().cloned());
        let metrics = match (&self.name, provider) {
            (Some(name), Some(p)) if !name.is_empty() => {
                Some(QueueMetrics::new(name, p.as_ref(), by_priority))
            }
            _ => None,
        };
        (self.name, metrics)
    }
}

/// The metrics of one queue and the bookkeeping they need, kept under the queue's lock.
pub(crate) struct QueueMetrics<T> {
    depth: Depth,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished: Box<dyn SettableGaugeMetric>,
    longest: Box<dyn SettableGaugeMetric>,
    retries: Box<dyn CounterMetric>,
    add_times: AHashMap<T, Instant>,
    processing_start: AHashMap<T, Instant>,
    depth_now: usize,
}

/// The depth gauge: one number, or one per priority (with how many items each priority holds,
/// so that a shutdown can bring every one of them back to zero).
enum Depth {
    Plain(Box<dyn GaugeMetric>),
    ByPriority(Box<dyn PriorityGaugeMetric>, AHashMap<i32, usize>),
}

impl Depth {
    fn inc(&mut self, priority: i32) {
        match self {
            Depth::Plain(g) => g.inc(),
            Depth::ByPriority(g, n) => {
                g.inc(priority);
                *n.entry(priority).or_default() += 1;
            }
        }
    }

    fn dec(&mut self, priority: i32) {
        match self {
            Depth::Plain(g) => g.dec(),
            Depth::ByPriority(g, n) => {
                if let Some(c) = n.get_mut(&priority)
                    && *c > 0
                {
                    *c -= 1;
                    g.dec(priority);
                }
            }
        }
    }
}

/// How often unfinished work is recomputed (client-go: 500 ms).
pub(crate) const UNFINISHED_WORK_PERIOD: Duration = Duration::from_millis(500);

impl<T> QueueMetrics<T> {
    fn new(name: &str, p: &dyn MetricsProvider, by_priority: bool) -> Self {
        let by_priority = if by_priority {
            p.new_depth_metric_with_priority(name)
        } else {
            None
        };
        let depth = match by_priority {
            Some(g) => Depth::ByPriority(g, AHashMap::new()),
            None => Depth::Plain(p.new_depth_metric(name)),
        };
        QueueMetrics {
            depth,
            adds: p.new_adds_metric(name),
            latency: p.new_latency_metric(name),
            work_duration: p.new_work_duration_metric(name),
            unfinished: p.new_unfinished_work_seconds_metric(name),
            longest: p.new_longest_running_processor_seconds_metric(name),
            retries: p.new_retries_metric(name),
            add_times: AHashMap::new(),
            processing_start: AHashMap::new(),
            depth_now: 0,
        }
    }
}

impl<T: Clone + Eq + Hash> QueueMetrics<T> {
    /// An item became dirty.
    pub(crate) fn add(&mut self, item: &T, now: Instant) {
        self.add_at(item, now, 0);
    }

    /// An item became ready at `priority`.
    pub(crate) fn add_at(&mut self, item: &T, now: Instant, priority: i32) {
        self.adds.inc();
        self.depth.inc(priority);
        self.depth_now += 1;
        self.add_times.entry(item.clone()).or_insert(now);
    }

    /// A ready item moved from one priority to another.
    pub(crate) fn reprioritized(&mut self, from: i32, to: i32) {
        if from != to {
            self.depth.dec(from);
            self.depth.inc(to);
        }
    }

    /// A ready item is no longer ready without being handed out (it was sent back to wait).
    pub(crate) fn unready(&mut self, item: &T, priority: i32) {
        if self.depth_now > 0 {
            self.depth.dec(priority);
            self.depth_now -= 1;
        }
        self.add_times.remove(item);
    }

    /// An item was handed out.
    pub(crate) fn get(&mut self, item: &T, now: Instant) {
        self.get_at(item, now, 0);
    }

    /// An item of `priority` was handed out.
    pub(crate) fn get_at(&mut self, item: &T, now: Instant, priority: i32) {
        if self.depth_now > 0 {
            self.depth.dec(priority);
            self.depth_now -= 1;
        }
        self.processing_start.insert(item.clone(), now);
        if let Some(added) = self.add_times.remove(item) {
            self.latency
                .observe(now.saturating_duration_since(added).as_secs_f64());
        }
    }

    /// An item is done.
    pub(crate) fn done(&mut self, item: &T, now: Instant) {
        if let Some(start) = self.processing_start.remove(item) {
            self.work_duration
                .observe(now.saturating_duration_since(start).as_secs_f64());
        }
    }

    /// A delayed add.
    pub(crate) fn retry(&mut self) {
        self.retries.inc();
    }

    /// The queue dropped every waiting item.
    pub(crate) fn cleared(&mut self) {
        match &mut self.depth {
            Depth::Plain(g) => {
                for _ in 0..self.depth_now {
                    g.dec();
                }
            }
            Depth::ByPriority(g, n) => {
                for (p, c) in n.iter_mut() {
                    for _ in 0..*c {
                        g.dec(*p);
                    }
                    *c = 0;
                }
            }
        }
        self.depth_now = 0;
        self.add_times.clear();
    }

    /// Recomputes unfinished work and the longest running processor; returns whether items are
    /// still in hand.
    pub(crate) fn update_unfinished_work(&mut self, now: Instant) -> bool {
        let mut total = 0.0;
        let mut longest = 0.0f64;
        for start in self.processing_start.values() {
            let secs = now.saturating_duration_since(*start).as_secs_f64();
            total += secs;
            longest = longest.max(secs);
        }
        self.unfinished.set(total);
        self.longest.set(longest);
        !self.processing_start.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use parking_lot::Mutex;

    use super::*;
    use crate::workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};

    /// Every metric records into one shared map: `name/metric` → value (histograms: the list
    /// of observations).
    #[derive(Default, Clone)]
    struct Recorder {
        values: Arc<Mutex<AHashMap<String, f64>>>,
        observations: Arc<Mutex<AHashMap<String, Vec<f64>>>>,
    }

    struct Metric {
        key: String,
        rec: Recorder,
    }

    impl GaugeMetric for Metric {
        fn inc(&self) {
            *self.rec.values.lock().entry(self.key.clone()).or_default() += 1.0;
        }
        fn dec(&self) {
            *self.rec.values.lock().entry(self.key.clone()).or_default() -= 1.0;
        }
    }
    impl CounterMetric for Metric {
        fn inc(&self) {
            *self.rec.values.lock().entry(self.key.clone()).or_default() += 1.0;
        }
    }
    impl SettableGaugeMetric for Metric {
        fn set(&self, v: f64) {
            self.rec.values.lock().insert(self.key.clone(), v);
        }
    }
    impl HistogramMetric for Metric {
        fn observe(&self, v: f64) {
            self.rec
                .observations
                .lock()
                .entry(self.key.clone())
                .or_default()
                .push(v);
        }
    }

    impl Recorder {
        fn metric(&self, name: &str, what: &str) -> Box<Metric> {
            Box::new(Metric {
                key: format!("{name}/{what}"),
                rec: self.clone(),
            })
        }
        fn value(&self, key: &str) -> f64 {
            self.values.lock().get(key).copied().unwrap_or_default()
        }
        fn observed(&self, key: &str) -> Vec<f64> {
            self.observations
                .lock()
                .get(key)
                .cloned()
                .unwrap_or_default()
        }
    }

    impl MetricsProvider for Recorder {
        fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
            self.metric(name, "depth")
        }
        fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
            self.metric(name, "adds")
        }
        fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
            self.metric(name, "latency")
        }
        fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
            self.metric(name, "work")
        }
        fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
            self.metric(name, "unfinished")
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            name: &str,
        ) -> Box<dyn SettableGaugeMetric> {
            self.metric(name, "longest")
        }
        fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
            self.metric(name, "retries")
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_named_queue_reports_what_client_go_reports() {
        let rec = Recorder::default();
        let q = RateLimitingQueue::<&str>::with_rate_limiter_and_config(
            ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(100),
                Duration::from_secs(10),
            ),
            QueueConfig::named("q").metrics_provider(Arc::new(rec.clone())),
        );
        q.add("a");
        q.add("a"); // de-duplicated: not an add
        q.add("b");
        assert_eq!(rec.value("q/adds"), 2.0);
        assert_eq!(rec.value("q/depth"), 2.0);

        tokio::time::advance(Duration::from_secs(3)).await;
        let a = q.get().await.unwrap_or_else(|| panic!("queue shut down"));
        assert_eq!(rec.value("q/depth"), 1.0);
        assert_eq!(rec.observed("q/latency"), [3.0]);

        // Work in hand shows up in the unfinished-work gauges within 500 ms.
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        assert!(
            (2.0..=2.1).contains(&rec.value("q/unfinished")),
            "unfinished {}",
            rec.value("q/unfinished")
        );
        assert_eq!(rec.value("q/unfinished"), rec.value("q/longest"));
        q.done(&a);
        assert_eq!(rec.observed("q/work").len(), 1);
        assert!((2.1..2.2).contains(&rec.observed("q/work")[0]));
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(rec.value("q/unfinished"), 0.0);

        // A rate-limited re-add is a retry, and an add once it is due.
        q.add_rate_limited("a");
        assert_eq!(rec.value("q/retries"), 1.0);
        assert_eq!(rec.value("q/adds"), 2.0, "not due yet");
        let b = q.get().await.unwrap_or_else(|| panic!("queue shut down"));
        assert_eq!(b, "b");
        q.done(&b);
        let a = q.get().await.unwrap_or_else(|| panic!("queue shut down"));
        assert_eq!(a, "a");
        assert_eq!(rec.value("q/adds"), 3.0);
        assert_eq!(rec.value("q/depth"), 0.0);
        q.done(&a);

        // Shutdown drops waiting items: depth back to 0.
        q.add("c");
        q.add("d");
        assert_eq!(rec.value("q/depth"), 2.0);
        q.shut_down();
        assert_eq!(rec.value("q/depth"), 0.0);
    }

    #[tokio::test]
    async fn unnamed_queues_and_queues_without_provider_report_nothing() {
        let rec = Recorder::default();
        let unnamed = RateLimitingQueue::<u8>::with_config(
            QueueConfig::default().metrics_provider(Arc::new(rec.clone())),
        );
        unnamed.add(1);
        assert!(rec.values.lock().is_empty());
        let named = RateLimitingQueue::<u8>::with_config(QueueConfig::named("x"));
        named.add(1);
        assert_eq!(named.name(), Some("x"));
        assert!(rec.values.lock().is_empty());
    }
}
