//! Prometheus metrics with controller-runtime's and client-go's names, so existing dashboards
//! and alerts work (controller-runtime's `pkg/metrics`).
//!
//! A [`Metrics`] is one [`prometheus_client`] registry (each manager has its own, so several
//! managers in one process do not mix) holding:
//!
//! | family | labels | what |
//! | --- | --- | --- |
//! | `controller_runtime_reconcile_total` | `controller`, `result` | reconciles by outcome: `success`, `error`, `requeue`, `requeue_after` |
//! | `controller_runtime_reconcile_errors_total` | `controller` | reconciles that failed (errors, panics, timeouts) |
//! | `controller_runtime_reconcile_panics_total` | `controller` | reconciles that panicked |
//! | `controller_runtime_reconcile_timeouts_total` | `controller` | reconciles stopped by the reconcile timeout |
//! | `controller_runtime_reconcile_time_seconds` | `controller` | how long reconciles take |
//! | `controller_runtime_active_workers` | `controller` | workers reconciling right now |
//! | `controller_runtime_max_concurrent_reconciles` | `controller` | the configured worker count |
//! | `workqueue_depth` | `name`, `controller`, and `priority` for a controller's priority queue | items ready in the work queue, by priority ([`Metrics::workqueue_provider`]) |
//! | `workqueue_adds_total` … `workqueue_retries_total` | `name`, `controller` | the work queue ([`Metrics::workqueue_provider`]) |
//! | `controller_runtime_read_your_writes_timeouts_total` | `controller` | waits for the cache to catch up with a request's own writes that reached the bound ([`read_your_writes`](crate::read_your_writes)) |
//! | `controller_runtime_read_your_writes_live_checks_total` | `controller`, `result` | what the live read past the bound decided: `current` (reconciled), `stale` (requeued), `failed` (the read failed; reconciled) |
//! | `informer_queued_items` | `name`, `group`, `version`, `resource` | notifications waiting in an informer's handler queues ([`Metrics::informer_provider`]; client-go's KEP-4346 name) |
//! | `informer_processing_latency_seconds` | `name`, `group`, `version`, `resource` | time to process one watch event or list, up to the handlers' queues |
//! | `informer_store_resource_version` | `name`, `group`, `version`, `resource` | the 15 least significant digits of the resourceVersion an informer's store has reached |
//! | `leader_election_master_status` | `name` | 1 while this replica leads the named lease |
//! | `leader_election_slowpath_total` | `name` | renewals that had to re-read the lease |
//! | `controller_runtime_webhook_requests_total` | `webhook`, `code` | webhook requests by path and HTTP status code |
//! | `controller_runtime_webhook_latency_seconds` | `webhook` | how long webhook requests take |
//! | `controller_runtime_webhook_requests_in_flight` | `webhook` | webhook requests being served |
//! | `controller_runtime_webhook_panics_total` | | webhook handlers that panicked |
//!
//! [`Metrics::encode`] renders the OpenMetrics text format that `/metrics` serves; register
//! your own metrics with [`Metrics::register`].
//!
//! ```
//! use prometheus_client::metrics::counter::Counter;
//! use kube_controller_runtime::Metrics;
//!
//! let metrics = Metrics::new();
//! let widgets: Counter = Counter::default();
//! metrics.register("widgets_made", "Widgets made", widgets.clone());
//! widgets.inc();
//! assert!(metrics.encode().contains("widgets_made_total 1"));
//! ```

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use kube_codegen_runtime::informer::{InformerId, InformerMetricsProvider};
use kube_codegen_runtime::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, PriorityGaugeMetric,
    SettableGaugeMetric,
};
use parking_lot::Mutex;
use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

pub use prometheus_client;

/// Why metrics could not be served. Not retryable: the configuration must change.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The metrics address could not be bound (in use, or not a local address).
    #[error("cannot serve metrics on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: String,
    controller: String,
}

/// `workqueue_depth`'s labels: a priority queue's series also carry controller-runtime's
/// `priority`; a plain queue's do not, so their series stay as client-go names them.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct DepthLabels {
    name: String,
    controller: String,
    priority: Option<i32>,
}

impl EncodeLabelSet for DepthLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        [
            ("name", self.name.as_str()),
            ("controller", self.controller.as_str()),
        ]
        .encode(encoder)?;
        if let Some(p) = self.priority {
            [("priority", p.to_string())].encode(encoder)?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InformerLabels {
    name: String,
    group: String,
    version: String,
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookCodeLabels {
    webhook: String,
    code: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;
type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// controller-runtime's `controller_runtime_reconcile_time_seconds` buckets.
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_BUCKETS)
}

/// Prometheus' default buckets, which `controller_runtime_webhook_latency_seconds` uses.
const WEBHOOK_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn webhook_histogram() -> Histogram {
    Histogram::new(WEBHOOK_BUCKETS)
}

/// client-go's `informer_processing_latency_seconds` buckets.
const INFORMER_BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn informer_histogram() -> Histogram {
    Histogram::new(INFORMER_BUCKETS)
}

/// controller-runtime's workqueue latency buckets: 10 ns × 10ⁱ, twelve of them.
fn queue_histogram() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        10e-9, 10.0, 12,
    ))
}

struct Families {
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_panics: Family<ControllerLabels, Counter>,
    reconcile_timeouts: Family<ControllerLabels, Counter>,
    reconcile_time: HistogramFamily<ControllerLabels>,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent: Family<ControllerLabels, Gauge>,
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    queue_latency: HistogramFamily<QueueLabels>,
    work_duration: HistogramFamily<QueueLabels>,
    unfinished: Family<QueueLabels, FloatGauge>,
    longest: Family<QueueLabels, FloatGauge>,
    retries: Family<QueueLabels, Counter>,
    leader_status: Family<NameLabels, Gauge>,
    leader_slowpath: Family<NameLabels, Counter>,
    webhook_requests: Family<WebhookCodeLabels, Counter>,
    webhook_latency: HistogramFamily<WebhookLabels>,
    webhook_in_flight: Family<WebhookLabels, Gauge>,
    webhook_panics: Counter,
    ryow_timeouts: Family<ControllerLabels, Counter>,
    ryow_live_checks: Family<ResultLabels, Counter>,
    informer_queued: Family<InformerLabels, FloatGauge>,
    informer_latency: HistogramFamily<InformerLabels>,
    informer_store_rv: Family<InformerLabels, FloatGauge>,
}

struct Inner {
    registry: Mutex<Registry>,
    families: Families,
}

/// A Prometheus registry with controller-runtime's metric families. Cheap to clone (a handle).
/// See the [module docs](self).
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every controller-runtime family registered (and empty).
    ///
    /// ```
    /// let m = kube_controller_runtime::Metrics::new();
    /// assert!(m.encode().ends_with("# EOF\n"));
    /// ```
    pub fn new() -> Self {
        let families = Families {
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_timeouts: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_histogram),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            depth: Family::default(),
            adds: Family::default(),
            queue_latency: Family::new_with_constructor(queue_histogram),
            work_duration: Family::new_with_constructor(queue_histogram),
            unfinished: Family::default(),
            longest: Family::default(),
            retries: Family::default(),
            leader_status: Family::default(),
            leader_slowpath: Family::default(),
            webhook_requests: Family::default(),
            webhook_latency: Family::new_with_constructor(webhook_histogram),
            webhook_in_flight: Family::default(),
            webhook_panics: Counter::default(),
            ryow_timeouts: Family::default(),
            ryow_live_checks: Family::default(),
            informer_queued: Family::default(),
            informer_latency: Family::new_with_constructor(informer_histogram),
            informer_store_rv: Family::default(),
        };
        let mut r = Registry::default();
        let f = &families;
        // Counters get their `_total` suffix from the OpenMetrics encoder.
        r.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            f.reconcile_total.clone(),
        );
        r.register(
            "controller_runtime_read_your_writes_timeouts",
            "Total number of waits for the cache to catch up with a request's own writes that reached the bound",
            f.ryow_timeouts.clone(),
        );
        r.register(
            "controller_runtime_read_your_writes_live_checks",
            "Total number of live reads past the bound by what they decided (current, stale, failed)",
            f.ryow_live_checks.clone(),
        );
        r.register(
            "informer_queued_items",
            "Number of items currently queued in the FIFO.",
            f.informer_queued.clone(),
        );
        r.register(
            "informer_processing_latency_seconds",
            "Time taken to process events after popping from the queue.",
            f.informer_latency.clone(),
        );
        r.register(
            "informer_store_resource_version",
            "The 15 least significant digits of the resource version of the store.",
            f.informer_store_rv.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            f.reconcile_errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            f.reconcile_panics.clone(),
        );
        r.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            f.reconcile_timeouts.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            f.reconcile_time.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            f.active_workers.clone(),
        );
        r.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            f.max_concurrent.clone(),
        );
        r.register(
            "workqueue_depth",
            "Current depth of workqueue",
            f.depth.clone(),
        );
        r.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            f.adds.clone(),
        );
        r.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            f.queue_latency.clone(),
        );
        r.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            f.work_duration.clone(),
        );
        r.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
            f.unfinished.clone(),
        );
        r.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            f.longest.clone(),
        );
        r.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            f.retries.clone(),
        );
        r.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            f.leader_status.clone(),
        );
        r.register(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
            f.leader_slowpath.clone(),
        );
        r.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            f.webhook_requests.clone(),
        );
        r.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            f.webhook_latency.clone(),
        );
        r.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            f.webhook_in_flight.clone(),
        );
        r.register(
            "controller_runtime_webhook_panics",
            "Total number of webhook panics",
            f.webhook_panics.clone(),
        );
        Metrics {
            inner: Arc::new(Inner {
                registry: Mutex::new(r),
                families,
            }),
        }
    }

    /// Registers one of your own metrics (see [`prometheus_client::registry::Registry::register`];
    /// counters get a `_total` suffix).
    ///
    /// ```
    /// use prometheus_client::metrics::gauge::Gauge;
    /// let m = kube_controller_runtime::Metrics::new();
    /// let g: Gauge = Gauge::default();
    /// m.register("things", "Things", g.clone());
    /// g.set(3);
    /// assert!(m.encode().contains("things 3"));
    /// ```
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        self.inner.registry.lock().register(name, help, metric);
    }

    /// Runs `f` on the registry (sub-registries, collectors, units).
    ///
    /// ```
    /// let m = kube_controller_runtime::Metrics::new();
    /// m.with_registry(|r| { let _sub = r.sub_registry_with_prefix("mine"); });
    /// ```
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> T {
        f(&mut self.inner.registry.lock())
    }

    /// The registry in the OpenMetrics text format (what `/metrics` serves).
    ///
    /// ```
    /// let text = kube_controller_runtime::Metrics::new().encode();
    /// assert!(text.ends_with("# EOF\n"));
    /// ```
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = self.inner.registry.lock();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &registry) {
            tracing::error!(error = %e, "cannot encode metrics");
        }
        out
    }

    /// A work queue metrics provider that reports into this registry's `workqueue_*` families
    /// with `name` and `controller` set to the queue's name (as controller-runtime does).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{QueueConfig, RateLimitingQueue};
    /// let m = kube_controller_runtime::Metrics::new();
    /// let q = RateLimitingQueue::<String>::with_config(QueueConfig::named("demo").metrics_provider(m.workqueue_provider()));
    /// q.add("a".into());
    /// assert!(m.encode().contains(r#"workqueue_depth{name="demo",controller="demo"} 1"#));
    /// ```
    ///
    /// A [`PriorityQueue`](kube_codegen_runtime::workqueue::PriorityQueue) (a Builder's
    /// controller's queue) reports its depth by priority, with controller-runtime's `priority`
    /// label:
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue, QueueConfig};
    /// let m = kube_controller_runtime::Metrics::new();
    /// let q = PriorityQueue::<String>::builder()
    ///     .config(QueueConfig::named("demo").metrics_provider(m.workqueue_provider()))
    ///     .build();
    /// q.add_with_priority("default/listed".into(), LOW_PRIORITY);
    /// q.add("default/changed".into());
    /// let text = m.encode();
    /// assert!(text.contains(r#"workqueue_depth{name="demo",controller="demo",priority="-100"} 1"#));
    /// assert!(text.contains(r#"workqueue_depth{name="demo",controller="demo",priority="0"} 1"#));
    /// ```
    pub fn workqueue_provider(&self) -> Arc<dyn MetricsProvider> {
        Arc::new(Provider(self.clone()))
    }

    /// An informer metrics provider (KEP-4346) that reports into this registry's
    /// `informer_queued_items`, `informer_processing_latency_seconds` and
    /// `informer_store_resource_version`, labelled with the informer's name, group, version
    /// and resource. A [`Manager`](crate::Manager) gives it to every informer it makes.
    ///
    /// ```
    /// use kube_codegen_runtime::informer::InformerId;
    /// let m = kube_controller_runtime::Metrics::new();
    /// let id = InformerId { name: "ConfigMap".into(), group: "".into(), version: "v1".into(), resource: "configmaps".into() };
    /// m.informer_provider().new_store_resource_version_metric(&id).set(42.0);
    /// assert!(m.encode().contains(
    ///     r#"informer_store_resource_version{name="ConfigMap",group="",version="v1",resource="configmaps"} 42"#
    /// ));
    /// ```
    pub fn informer_provider(&self) -> Arc<dyn InformerMetricsProvider> {
        Arc::new(Provider(self.clone()))
    }

    pub(crate) fn controller(&self, name: &str) -> ControllerMetrics {
        let f = &self.inner.families;
        let c = ControllerLabels {
            controller: name.to_string(),
        };
        let result = |r: &str| {
            f.reconcile_total.get_or_create_owned(&ResultLabels {
                controller: name.to_string(),
                result: r.to_string(),
            })
        };
        ControllerMetrics {
            success: result("success"),
            error: result("error"),
            requeue: result("requeue"),
            requeue_after: result("requeue_after"),
            errors: f.reconcile_errors.get_or_create_owned(&c),
            panics: f.reconcile_panics.get_or_create_owned(&c),
            timeouts: f.reconcile_timeouts.get_or_create_owned(&c),
            time: f.reconcile_time.get_or_create_owned(&c),
            active_workers: f.active_workers.get_or_create_owned(&c),
            max_concurrent: f.max_concurrent.get_or_create_owned(&c),
        }
    }

    /// The `controller_runtime_*` metrics of the controller `name`, for a hand-written
    /// reconcile loop: the same recorder a [`Builder`](crate::Builder)'s controller counts
    /// with, so a loop of one's own reports `controller_runtime_reconcile_total` and its
    /// siblings under the same names and labels.
    ///
    /// ```
    /// use kube_controller_runtime::Metrics;
    /// use kube_controller_runtime::metrics::ReconcileResult;
    ///
    /// let metrics = Metrics::new();
    /// let recorder = metrics.reconcile_recorder("mydemo");
    /// recorder.set_max_concurrent_reconciles(2);
    /// let reconcile = recorder.start(); // one worker busy from here …
    /// // … sync one key …
    /// reconcile.finish(ReconcileResult::Success); // … to here, timed and counted
    /// assert!(metrics.encode().contains(
    ///     r#"controller_runtime_reconcile_total{controller="mydemo",result="success"} 1"#
    /// ));
    /// ```
    pub fn reconcile_recorder(&self, name: &str) -> ReconcileRecorder {
        ReconcileRecorder {
            metrics: self.controller(name),
        }
    }

    /// `controller_runtime_read_your_writes_timeouts_total` of the controller `name`.
    pub(crate) fn read_your_writes_timeouts(&self, name: &str) -> Counter {
        self.inner
            .families
            .ryow_timeouts
            .get_or_create_owned(&ControllerLabels {
                controller: name.to_string(),
            })
    }

    /// `controller_runtime_read_your_writes_live_checks_total` of the controller `name`: the
    /// counters for `current`, `stale` and `failed`.
    pub(crate) fn read_your_writes_live_checks(&self, name: &str) -> LiveChecks {
        let get = |result: &str| {
            self.inner
                .families
                .ryow_live_checks
                .get_or_create_owned(&ResultLabels {
                    controller: name.to_string(),
                    result: result.to_string(),
                })
        };
        LiveChecks {
            current: get("current"),
            stale: get("stale"),
            failed: get("failed"),
        }
    }

    pub(crate) fn leader(&self, name: &str) -> LeaderMetrics {
        let l = NameLabels {
            name: name.to_string(),
        };
        LeaderMetrics {
            status: self.inner.families.leader_status.get_or_create_owned(&l),
            slowpath: self.inner.families.leader_slowpath.get_or_create_owned(&l),
        }
    }
}

/// The metrics of one webhook path.
#[derive(Clone, Debug)]
pub(crate) struct WebhookMetrics {
    webhook: String,
    requests: Family<WebhookCodeLabels, Counter>,
    pub(crate) latency: Histogram,
    pub(crate) in_flight: Gauge,
    pub(crate) panics: Counter,
}

impl WebhookMetrics {
    /// Counts one answered request with its HTTP status code.
    pub(crate) fn answered(&self, code: u16) {
        self.requests
            .get_or_create(&WebhookCodeLabels {
                webhook: self.webhook.clone(),
                code: code.to_string(),
            })
            .inc();
    }
}

impl Metrics {
    /// The `controller_runtime_webhook_*` metrics of the webhook served at `path`.
    pub(crate) fn webhook(&self, path: &str) -> WebhookMetrics {
        let f = &self.inner.families;
        let l = WebhookLabels {
            webhook: path.to_string(),
        };
        WebhookMetrics {
            webhook: path.to_string(),
            requests: f.webhook_requests.clone(),
            latency: f.webhook_latency.get_or_create_owned(&l),
            in_flight: f.webhook_in_flight.get_or_create_owned(&l),
            panics: f.webhook_panics.clone(),
        }
    }
}

/// The metrics of one controller, resolved once (no label look-ups on the hot path).
#[derive(Clone, Debug)]
pub(crate) struct ControllerMetrics {
    pub(crate) success: Counter,
    pub(crate) error: Counter,
    pub(crate) requeue: Counter,
    pub(crate) requeue_after: Counter,
    pub(crate) errors: Counter,
    pub(crate) panics: Counter,
    pub(crate) timeouts: Counter,
    pub(crate) time: Histogram,
    pub(crate) active_workers: Gauge,
    pub(crate) max_concurrent: Gauge,
}

/// How one reconcile ended, as `controller_runtime_reconcile_total{result}` and its sibling
/// counters count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Done, nothing to requeue: `result="success"`.
    Success,
    /// Requeued with the rate limiter's backoff: `result="requeue"`.
    Requeue,
    /// Requeued after a fixed delay: `result="requeue_after"`.
    RequeueAfter,
    /// Failed: `result="error"` and `reconcile_errors_total`.
    Error,
    /// Panicked: `result="error"`, `reconcile_errors_total` and `reconcile_panics_total`.
    Panic,
    /// Ran past its timeout: `result="error"`, `reconcile_errors_total` and
    /// `reconcile_timeouts_total`.
    Timeout,
}

/// Records the reconciles of one controller ([`Metrics::reconcile_recorder`]). Cheap to clone:
/// give each worker one.
#[derive(Clone, Debug)]
pub struct ReconcileRecorder {
    metrics: ControllerMetrics,
}

impl ReconcileRecorder {
    /// Sets `controller_runtime_max_concurrent_reconciles` (the worker count).
    pub fn set_max_concurrent_reconciles(&self, n: usize) {
        self.metrics
            .max_concurrent
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// A reconcile begins: `controller_runtime_active_workers` goes up until the returned
    /// guard is finished or dropped.
    pub fn start(&self) -> ReconcileTimer {
        self.metrics.active_workers.inc();
        ReconcileTimer {
            metrics: self.metrics.clone(),
            start: std::time::Instant::now(),
            done: false,
        }
    }
}

/// One reconcile in progress ([`ReconcileRecorder::start`]).
#[derive(Debug)]
#[must_use = "finish() counts the reconcile's result"]
pub struct ReconcileTimer {
    metrics: ControllerMetrics,
    start: std::time::Instant,
    done: bool,
}

impl ReconcileTimer {
    /// The reconcile ended with `result`: observes `controller_runtime_reconcile_time_seconds`,
    /// counts the result and releases the worker.
    pub fn finish(mut self, result: ReconcileResult) {
        self.release();
        let m = &self.metrics;
        match result {
            ReconcileResult::Success => m.success.inc(),
            ReconcileResult::Requeue => m.requeue.inc(),
            ReconcileResult::RequeueAfter => m.requeue_after.inc(),
            ReconcileResult::Error => m.error.inc(),
            ReconcileResult::Panic => {
                m.panics.inc();
                m.error.inc()
            }
            ReconcileResult::Timeout => {
                m.timeouts.inc();
                m.error.inc()
            }
        };
        if matches!(
            result,
            ReconcileResult::Error | ReconcileResult::Panic | ReconcileResult::Timeout
        ) {
            m.errors.inc();
        }
    }

    fn release(&mut self) {
        if !self.done {
            self.done = true;
            self.metrics
                .time
                .observe(self.start.elapsed().as_secs_f64());
            self.metrics.active_workers.dec();
        }
    }
}

impl Drop for ReconcileTimer {
    /// Not finished (the reconcile was aborted): the time is observed and the worker released,
    /// no result counted.
    fn drop(&mut self) {
        self.release();
    }
}

/// The leader-election metrics of one lease.
#[derive(Clone, Debug)]
pub(crate) struct LeaderMetrics {
    pub(crate) status: Gauge,
    pub(crate) slowpath: Counter,
}

struct Provider(Metrics);

struct C(Counter);
impl CounterMetric for C {
    fn inc(&self) {
        self.0.inc();
    }
}
struct G(Gauge);
impl GaugeMetric for G {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}
struct S(FloatGauge);
impl SettableGaugeMetric for S {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}
struct H(Histogram);
impl HistogramMetric for H {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

fn informer_labels(id: &InformerId) -> InformerLabels {
    InformerLabels {
        name: id.name.clone(),
        group: id.group.clone(),
        version: id.version.clone(),
        resource: id.resource.clone(),
    }
}

impl InformerMetricsProvider for Provider {
    fn new_queued_item_metric(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
        let f = &self.0.inner.families;
        Box::new(S(f
            .informer_queued
            .get_or_create_owned(&informer_labels(id))))
    }

    fn new_processing_latency_metric(&self, id: &InformerId) -> Box<dyn HistogramMetric> {
        let f = &self.0.inner.families;
        Box::new(H(f
            .informer_latency
            .get_or_create_owned(&informer_labels(id))))
    }

    fn new_store_resource_version_metric(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
        let f = &self.0.inner.families;
        Box::new(S(f
            .informer_store_rv
            .get_or_create_owned(&informer_labels(id))))
    }
}

/// The depth of one priority queue by priority; a priority's series is made on first use.
struct DepthByPriority {
    family: Family<DepthLabels, Gauge>,
    name: String,
}

impl DepthByPriority {
    fn gauge(&self, priority: i32) -> Gauge {
        self.family.get_or_create_owned(&DepthLabels {
            name: self.name.clone(),
            controller: self.name.clone(),
            priority: Some(priority),
        })
    }
}

impl PriorityGaugeMetric for DepthByPriority {
    fn inc(&self, priority: i32) {
        self.gauge(priority).inc();
    }
    fn dec(&self, priority: i32) {
        self.gauge(priority).dec();
    }
}

fn queue_labels(name: &str) -> QueueLabels {
    QueueLabels {
        name: name.to_string(),
        controller: name.to_string(),
    }
}

impl MetricsProvider for Provider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        Box::new(G(self.0.inner.families.depth.get_or_create_owned(
            &DepthLabels {
                name: name.to_string(),
                controller: name.to_string(),
                priority: None,
            },
        )))
    }
    fn new_depth_metric_with_priority(&self, name: &str) -> Option<Box<dyn PriorityGaugeMetric>> {
        Some(Box::new(DepthByPriority {
            family: self.0.inner.families.depth.clone(),
            name: name.to_string(),
        }))
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(C(self
            .0
            .inner
            .families
            .adds
            .get_or_create_owned(&queue_labels(name))))
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(H(self
            .0
            .inner
            .families
            .queue_latency
            .get_or_create_owned(&queue_labels(name))))
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(H(self
            .0
            .inner
            .families
            .work_duration
            .get_or_create_owned(&queue_labels(name))))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(S(self
            .0
            .inner
            .families
            .unfinished
            .get_or_create_owned(&queue_labels(name))))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(S(self
            .0
            .inner
            .families
            .longest
            .get_or_create_owned(&queue_labels(name))))
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(C(self
            .0
            .inner
            .families
            .retries
            .get_or_create_owned(&queue_labels(name))))
    }
}

/// A controller's counters of live reads past the read-your-own-writes bound.
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveChecks {
    pub(crate) current: Counter,
    pub(crate) stale: Counter,
    pub(crate) failed: Counter,
}
