//! Work queues with client-go's guarantees (`k8s.io/client-go/util/workqueue`).
//!
//! * [`Queue`] — FIFO with de-duplication (an item waiting in the queue is stored once however
//!   often it is added: the *dirty* set) and exclusivity (an item handed out by
//!   [`Queue::get`] is in the *processing* set and is not handed out again until [`Queue::done`];
//!   if it was re-added meanwhile it is queued again by `done`).
//! * [`DelayingQueue`] — adds [`DelayingQueue::add_after`]: the item joins the queue after a
//!   delay (an item waiting twice keeps the earlier deadline).
//! * [`RateLimitingQueue`] — adds [`RateLimitingQueue::add_rate_limited`],
//!   [`RateLimitingQueue::forget`] and [`RateLimitingQueue::num_requeues`] over a
//!   [`RateLimiter`]; the default is client-go's `DefaultControllerRateLimiter`
//!   ([`default_controller_rate_limiter`]): per-item exponential backoff 5 ms → 1000 s, and an
//!   overall 10 qps / burst 100 token bucket, whichever asks for the longer wait.
//! * [`PriorityQueue`] — controller-runtime's priority queue (the one `kube-controller-runtime`'s
//!   controllers use): the highest priority first, [`LOW_PRIORITY`] for the initial list and
//!   resyncs; with **bounded waiting** (an item ready for [`DEFAULT_MAX_WAIT`] goes ahead of
//!   every priority) and backoff that counts failures, not events (module [`priority`]).
//!
//! A queue made with a name ([`QueueConfig`]) reports depth, adds, latencies, unfinished work
//! and retries to a [`MetricsProvider`] (client-go's metrics hook, module [`metrics`]); the
//! Prometheus implementation lives in `kube-controller-runtime`, any other can be plugged in.
//!
//! All three are cheap to clone (an `Arc` inside): give each worker its own clone. Delayed items
//! need no background task — whichever worker is waiting in [`Queue::get`] also waits for the
//! next deadline — so a queue can be created outside a Tokio runtime. Workers waiting in `get`
//! are woken one at a time: an add wakes one, and a worker that takes an item and leaves more
//! ready wakes the next, so a burst of adds does not wake every idle worker at once.
//!
//! Shutdown differs from client-go in one documented way: after [`Queue::shut_down`] `get`
//! returns `None` at once and items still waiting in the queue are dropped (client-go hands them
//! out first). [`Queue::shut_down_with_drain`] additionally waits until every item already
//! handed out is `done`.
//!
//! ```
//! use kube_codegen_runtime::workqueue::RateLimitingQueue;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let queue = RateLimitingQueue::<String>::new();
//! queue.add("default/a".to_string());
//! queue.add("default/a".to_string()); // collapses with the first
//! assert_eq!(queue.len(), 1);
//!
//! let worker = {
//!     let queue = queue.clone();
//!     tokio::spawn(async move {
//!         while let Some(key) = queue.get().await {
//!             // reconcile(key) … on error: queue.add_rate_limited(key.clone());
//!             queue.forget(&key);
//!             queue.done(&key);
//!         }
//!     })
//! };
//! queue.shut_down_with_drain().await;
//! worker.await.unwrap();
//! # }
//! ```

mod delaying;
pub mod metrics;
pub mod priority;
mod queue;
mod rate_limiter;
mod rate_limiting;
mod sleepers;

pub use delaying::DelayingQueue;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, PriorityGaugeMetric, QueueConfig,
    SettableGaugeMetric, set_provider,
};
pub use priority::{
    AddOptions, DEFAULT_MAX_WAIT, LOW_PRIORITY, NORMAL_PRIORITY, PriorityQueue,
    PriorityQueueBuilder,
};
pub use queue::Queue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, controller_rate_limiter, default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;

/// The runtime to start a queue's background task on, if this call is the one to start it:
/// the first call while `started` is unset, made inside a Tokio runtime (the task is started
/// later, by a call made in one, if not).
///
/// Every `get` asks, so the answer once started is a load, inlined.
#[inline]
fn runtime_to_start(started: &std::sync::atomic::AtomicBool) -> Option<tokio::runtime::Handle> {
    use std::sync::atomic::Ordering;
    if started.load(Ordering::Relaxed) {
        return None;
    }
    start_on_runtime(started)
}

#[cold]
fn start_on_runtime(started: &std::sync::atomic::AtomicBool) -> Option<tokio::runtime::Handle> {
    use std::sync::atomic::Ordering;
    let rt = tokio::runtime::Handle::try_current().ok()?;
    (!started.swap(true, Ordering::AcqRel)).then_some(rt)
}
