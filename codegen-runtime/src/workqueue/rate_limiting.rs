//! A delaying work queue with per-item rate limiting: the queue controllers use.

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use super::{DelayingQueue, QueueConfig, RateLimiter, default_controller_rate_limiter};

/// A [`DelayingQueue`] that asks a [`RateLimiter`] how long to hold an item back
/// (client-go's `RateLimitingInterface`). Every [`DelayingQueue`] and [`Queue`](super::Queue)
/// method is available through `Deref`.
///
/// The usual worker: on success `forget(&key)` (reset its backoff) and `done(&key)`; on failure
/// `add_rate_limited(key)` and `done(&key)`.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::RateLimitingQueue;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = RateLimitingQueue::new();
/// q.add_rate_limited("ns/a"); // 5 ms
/// q.add_rate_limited("ns/a"); // still waiting: the earlier deadline wins
/// assert_eq!(q.num_requeues(&"ns/a"), 2);
/// let key = q.get().await.unwrap();
/// q.forget(&key);
/// q.done(&key);
/// assert_eq!(q.num_requeues(&"ns/a"), 0);
/// # }
/// ```
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RateLimitingQueue")
            .field(&self.queue)
            .finish()
    }
}

impl<T> Default for RateLimitingQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T> RateLimitingQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// A queue with [`default_controller_rate_limiter`].
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::RateLimitingQueue::<String>::new();
    /// assert!(q.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_rate_limiter(default_controller_rate_limiter())
    }

    /// A queue with the given rate limiter.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_codegen_runtime::workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};
    ///
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1));
    /// let q = RateLimitingQueue::<u32>::with_rate_limiter(limiter);
    /// ```
    pub fn with_rate_limiter(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_rate_limiter_and_config(limiter, QueueConfig::default())
    }

    /// A named queue (with metrics, see [`QueueConfig`]) and [`default_controller_rate_limiter`].
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{QueueConfig, RateLimitingQueue};
    /// let q = RateLimitingQueue::<String>::with_config(QueueConfig::named("mydemo"));
    /// assert_eq!(q.name(), Some("mydemo"));
    /// ```
    pub fn with_config(config: QueueConfig) -> Self {
        Self::with_rate_limiter_and_config(default_controller_rate_limiter(), config)
    }

    /// A queue with the given rate limiter, name and metrics (client-go's
    /// `NewTypedRateLimitingQueueWithConfig`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_codegen_runtime::workqueue::{ItemExponentialFailureRateLimiter, QueueConfig, RateLimitingQueue};
    /// let q = RateLimitingQueue::<u32>::with_rate_limiter_and_config(
    ///     ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1)),
    ///     QueueConfig::named("numbers"),
    /// );
    /// ```
    pub fn with_rate_limiter_and_config(
        limiter: impl RateLimiter<T> + 'static,
        config: QueueConfig,
    ) -> Self {
        Self::with_shared_rate_limiter_and_config(Arc::new(limiter), config)
    }

    /// As [`RateLimitingQueue::with_rate_limiter_and_config`], with a limiter already behind an
    /// `Arc` (a boxed or shared limiter).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kube_codegen_runtime::workqueue::{default_controller_rate_limiter, QueueConfig, RateLimiter, RateLimitingQueue};
    /// let limiter: Arc<dyn RateLimiter<String>> = Arc::new(default_controller_rate_limiter());
    /// let q = RateLimitingQueue::with_shared_rate_limiter_and_config(limiter, QueueConfig::default());
    /// ```
    pub fn with_shared_rate_limiter_and_config(
        limiter: Arc<dyn RateLimiter<T>>,
        config: QueueConfig,
    ) -> Self {
        RateLimitingQueue {
            queue: DelayingQueue::with_config(config),
            limiter,
        }
    }

    /// Queues `item` after the delay the rate limiter asks for (which also counts a requeue).
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::RateLimitingQueue::new();
    /// q.add_rate_limited(1);
    /// assert_eq!(q.waiting(), 1);
    /// ```
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Makes the rate limiter forget `item` (its backoff starts over). It does not remove the
    /// item from the queue.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::RateLimitingQueue::new();
    /// q.add_rate_limited(1);
    /// q.forget(&1);
    /// assert_eq!(q.num_requeues(&1), 0);
    /// ```
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate-limited since it was last forgotten.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::RateLimitingQueue::new();
    /// assert_eq!(q.num_requeues(&"x"), 0);
    /// ```
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// The delaying queue this one extends.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::RateLimitingQueue::<u8>::new();
    /// let _delaying = q.delaying_queue();
    /// ```
    pub fn delaying_queue(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::RateLimitingQueue;
    use crate::workqueue::{BucketRateLimiter, ItemExponentialFailureRateLimiter};

    #[tokio::test(start_paused = true)]
    async fn failures_back_off_exponentially_until_forgotten() {
        let q = RateLimitingQueue::with_rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        ));
        let start = tokio::time::Instant::now();
        let mut seen = Vec::new();
        for _ in 0..4 {
            q.add_rate_limited("ns/a");
            let key = q.get().await.expect("the queue is running");
            seen.push(start.elapsed());
            q.done(&key);
        }
        // 5, 10, 20 and 40 ms after each previous hand-out: 5, 15, 35, 75 ms in all.
        let ms: Vec<u128> = seen.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [5, 15, 35, 75]);
        assert_eq!(q.num_requeues(&"ns/a"), 4);

        q.forget(&"ns/a");
        assert_eq!(q.num_requeues(&"ns/a"), 0);
        let before = tokio::time::Instant::now();
        q.add_rate_limited("ns/a");
        assert_eq!(q.get().await, Some("ns/a"));
        assert_eq!(
            before.elapsed(),
            Duration::from_millis(5),
            "backoff starts over"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_limiter_that_never_grants_holds_items_back_without_panicking() {
        // qps 0: `rate.Limiter` never grants a reservation; the limiter answers Duration::MAX.
        let q = RateLimitingQueue::with_rate_limiter(BucketRateLimiter::new(0.0, 1));
        q.add_rate_limited(1u8); // the one token of the burst
        q.add_rate_limited(2u8); // waits "forever"
        assert_eq!(q.get().await, Some(1));
        assert_eq!(q.waiting(), 1);
        assert_eq!(q.try_get(), None);
        tokio::time::advance(Duration::from_secs(86_400 * 365)).await;
        assert_eq!(q.try_get(), None, "a year later item 2 is still held back");
        q.shut_down();
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_a_huge_delay_does_not_panic() {
        let q = RateLimitingQueue::<&str>::new();
        q.add_after("x", Duration::MAX);
        assert_eq!(q.waiting(), 1);
        q.add_after("x", Duration::from_millis(1));
        assert_eq!(q.get().await, Some("x"), "the earlier deadline wins");
    }
}
