//! Rate limiters for [`RateLimitingQueue`](super::RateLimitingQueue), as in
//! `k8s.io/client-go/util/workqueue/default_rate_limiters.go`.

use std::fmt;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ahash::AHashMap;
use parking_lot::Mutex;
use tokio::time::Instant;

/// Decides how long an item waits before it is queued again.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{RateLimiter, RateLimitingQueue};
///
/// /// Always one second, never counting.
/// struct Fixed;
/// impl<T> RateLimiter<T> for Fixed {
///     fn when(&self, _: &T) -> Duration { Duration::from_secs(1) }
///     fn forget(&self, _: &T) {}
///     fn num_requeues(&self, _: &T) -> u32 { 0 }
/// }
/// let q = RateLimitingQueue::<u32>::with_rate_limiter(Fixed);
/// ```
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now; counts as one more requeue of `item`.
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item` (its next `when` starts from scratch).
    fn forget(&self, item: &T);
    /// How many times `item` has been requeued since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

/// Per-item exponential backoff: `base * 2^failures`, capped at `max`.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{ItemExponentialFailureRateLimiter, RateLimiter};
///
/// let r = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
/// assert_eq!(r.when(&"a"), Duration::from_millis(5));
/// assert_eq!(r.when(&"a"), Duration::from_millis(10));
/// assert_eq!(r.when(&"b"), Duration::from_millis(5));
/// r.forget(&"a");
/// assert_eq!(r.when(&"a"), Duration::from_millis(5));
/// ```
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<AHashMap<T, u32>>,
    /// How many items `failures` holds, written under its lock: `forget` of an item that
    /// never failed (every successful reconcile) skips the lock while nothing is tracked.
    tracked: AtomicUsize,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("tracked", &self.failures.lock().len())
            .finish()
    }
}

impl<T: Eq + Hash> ItemExponentialFailureRateLimiter<T> {
    /// Backoff starting at `base` and doubling up to `max`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let r = kube_codegen_runtime::workqueue::ItemExponentialFailureRateLimiter::<u8>::new(Duration::from_millis(5), Duration::from_secs(1));
    /// ```
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            base,
            max,
            failures: Mutex::new(AHashMap::new()),
            tracked: AtomicUsize::new(0),
        }
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = {
            let mut failures = self.failures.lock();
            let n = failures.entry(item.clone()).or_insert(0);
            let exp = *n;
            *n = n.saturating_add(1);
            self.tracked.store(failures.len(), Ordering::Release);
            exp
        };
        // base · 2^exp in whole nanoseconds; anything beyond the cap (or overflowing) is the cap.
        if exp >= 100 {
            return self.max;
        }
        let nanos = self.base.as_nanos().saturating_mul(1u128 << exp);
        if nanos >= self.max.as_nanos() {
            return self.max;
        }
        u64::try_from(nanos).map_or(self.max, Duration::from_nanos)
    }

    fn forget(&self, item: &T) {
        // A `when` that happened before this call (the item's failure, seen through the queue
        // that handed it out) stored a non-zero count before it let go of the lock.
        if self.tracked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut failures = self.failures.lock();
        failures.remove(item);
        self.tracked.store(failures.len(), Ordering::Release);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

/// `fast` delay for the first `max_fast_attempts` requeues of an item, `slow` afterwards.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{ItemFastSlowRateLimiter, RateLimiter};
///
/// let r = ItemFastSlowRateLimiter::new(Duration::from_millis(1), Duration::from_secs(10), 2);
/// assert_eq!(r.when(&1), Duration::from_millis(1));
/// assert_eq!(r.when(&1), Duration::from_millis(1));
/// assert_eq!(r.when(&1), Duration::from_secs(10));
/// ```
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    attempts: Mutex<AHashMap<T, u32>>,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

impl<T: Eq + Hash> ItemFastSlowRateLimiter<T> {
    /// A limiter that waits `fast` for the first `max_fast_attempts` requeues, then `slow`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let r = kube_codegen_runtime::workqueue::ItemFastSlowRateLimiter::<u8>::new(Duration::ZERO, Duration::from_secs(1), 3);
    /// ```
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter {
            fast,
            slow,
            max_fast_attempts,
            attempts: Mutex::new(AHashMap::new()),
        }
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut attempts = self.attempts.lock();
        let n = attempts.entry(item.clone()).or_insert(0);
        *n = n.saturating_add(1);
        if *n <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.attempts.lock().get(item).copied().unwrap_or(0)
    }
}

/// An overall token bucket (`golang.org/x/time/rate`'s `Limiter` used through `Reserve`):
/// `qps` tokens a second, at most `burst` saved up; each `when` reserves one token and returns
/// how long until it is available. It does not track items.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{BucketRateLimiter, RateLimiter};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let r = BucketRateLimiter::new(10.0, 2);
/// assert_eq!(r.when(&()), Duration::ZERO);
/// assert_eq!(r.when(&()), Duration::ZERO);
/// assert_eq!(r.when(&()), Duration::from_millis(100));
/// assert_eq!(r.when(&()), Duration::from_millis(200));
/// # }
/// ```
pub struct BucketRateLimiter {
    qps: f64,
    burst: u32,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish()
    }
}

impl BucketRateLimiter {
    /// A full bucket of `burst` tokens refilled at `qps` tokens a second.
    ///
    /// ```
    /// let r = kube_codegen_runtime::workqueue::BucketRateLimiter::new(10.0, 100);
    /// ```
    pub fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter {
            qps,
            burst,
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                last: Instant::now(),
            }),
        }
    }

    fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut b = self.bucket.lock();
        let elapsed = now.saturating_duration_since(b.last).as_secs_f64();
        b.last = b.last.max(now);
        b.tokens = (b.tokens + elapsed * self.qps).min(f64::from(self.burst));
        b.tokens -= 1.0;
        if b.tokens >= 0.0 {
            return Duration::ZERO;
        }
        if self.qps <= 0.0 || self.burst == 0 {
            // `rate.Limiter` with no rate (or no burst) never grants a reservation; wait "forever".
            b.tokens += 1.0;
            return Duration::MAX;
        }
        let nanos = (-b.tokens / self.qps * 1e9).round();
        if nanos >= u64::MAX as f64 {
            return Duration::MAX;
        }
        // `nanos` is positive, finite and below u64::MAX here.
        Duration::from_nanos(nanos as u64)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The longest wait any of several limiters asks for (`MaxOfRateLimiter`); every limiter is
/// consulted on each `when`, so each keeps counting.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::*;
///
/// let r = MaxOfRateLimiter::new(vec![
///     Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1))),
///     Box::new(ItemFastSlowRateLimiter::new(Duration::from_millis(3), Duration::from_secs(3), 1)),
/// ]);
/// assert_eq!(r.when(&"a"), Duration::from_millis(3));
/// assert_eq!(r.when(&"a"), Duration::from_secs(3));
/// assert_eq!(r.num_requeues(&"a"), 2);
/// ```
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`.
    ///
    /// ```
    /// let r = kube_codegen_runtime::workqueue::MaxOfRateLimiter::<u8>::new(Vec::new());
    /// ```
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the larger of a per-item exponential backoff
/// from 5 ms to 1000 s and an overall bucket of 10 qps with a burst of 100.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{RateLimiter, default_controller_rate_limiter};
///
/// let r = default_controller_rate_limiter::<String>();
/// assert_eq!(r.when(&"a".to_string()), Duration::from_millis(5));
/// ```
pub fn default_controller_rate_limiter<T: Clone + Eq + Hash + Send + Sync + 'static>()
-> MaxOfRateLimiter<T> {
    controller_rate_limiter(
        Duration::from_millis(5),
        Duration::from_secs(1000),
        10.0,
        100,
    )
}

/// The controller rate limiter with other numbers: per-item backoff from `base_delay` to
/// `max_delay`, and an overall bucket of `qps` with `burst`.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{RateLimiter, controller_rate_limiter};
///
/// let r = controller_rate_limiter::<u32>(Duration::from_millis(50), Duration::from_secs(60), 50.0, 300);
/// assert_eq!(r.when(&1), Duration::from_millis(50));
/// ```
pub fn controller_rate_limiter<T: Clone + Eq + Hash + Send + Sync + 'static>(
    base_delay: Duration,
    max_delay: Duration,
    qps: f64,
    burst: u32,
) -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            base_delay, max_delay,
        )),
        Box::new(BucketRateLimiter::new(qps, burst)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_doubles_from_5ms_and_caps_at_1000s() {
        let r = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        );
        let mut want = Duration::from_millis(5);
        for i in 0..40u32 {
            let got = r.when(&"k");
            let expect = want.min(Duration::from_secs(1000));
            assert_eq!(got, expect, "requeue {i}");
            want *= 2;
            assert_eq!(r.num_requeues(&"k"), i + 1);
        }
        // 5 ms · 2^17 = 655.36 s, 2^18 would exceed the cap.
        let r2 = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        );
        let seq: Vec<Duration> = (0..19).map(|_| r2.when(&1)).collect();
        assert_eq!(seq[..4], [5, 10, 20, 40].map(Duration::from_millis));
        assert_eq!(seq[17], Duration::from_micros(655_360_000));
        assert_eq!(seq[18], Duration::from_secs(1000));
        // Many more failures never overflow.
        for _ in 0..2000 {
            r2.when(&1);
        }
        assert_eq!(r2.when(&1), Duration::from_secs(1000));
        r.forget(&"k");
        assert_eq!(r.num_requeues(&"k"), 0);
        assert_eq!(r.when(&"k"), Duration::from_millis(5));
    }

    #[test]
    fn forget_forgets_only_its_item_also_after_the_tracked_set_emptied() {
        let r = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        );
        // Nothing tracked: forget is a no-op.
        r.forget(&"a");
        assert_eq!(r.num_requeues(&"a"), 0);
        r.when(&"a");
        r.when(&"a");
        r.when(&"b");
        r.forget(&"c");
        assert_eq!((r.num_requeues(&"a"), r.num_requeues(&"b")), (2, 1));
        r.forget(&"a");
        assert_eq!((r.num_requeues(&"a"), r.num_requeues(&"b")), (0, 1));
        r.forget(&"b");
        assert_eq!(r.num_requeues(&"b"), 0);
        // Tracked again after the set emptied: forget still reaches it.
        assert_eq!(r.when(&"b"), Duration::from_millis(5));
        assert_eq!(r.when(&"b"), Duration::from_millis(10));
        r.forget(&"b");
        assert_eq!(r.when(&"b"), Duration::from_millis(5));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_burst_then_paces_at_qps() {
        let r = BucketRateLimiter::new(10.0, 100);
        for _ in 0..100 {
            assert_eq!(RateLimiter::<u8>::when(&r, &0), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<u8>::when(&r, &0), Duration::from_millis(100));
        assert_eq!(RateLimiter::<u8>::when(&r, &0), Duration::from_millis(200));
        tokio::time::advance(Duration::from_secs(1)).await;
        // 10 tokens came back, 2 were owed.
        assert_eq!(RateLimiter::<u8>::when(&r, &0), Duration::ZERO);
        tokio::time::advance(Duration::from_secs(100)).await;
        for _ in 0..100 {
            assert_eq!(RateLimiter::<u8>::when(&r, &0), Duration::ZERO);
        }
        assert!(RateLimiter::<u8>::when(&r, &0) > Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_is_max_of_both() {
        let r = default_controller_rate_limiter::<u32>();
        // Distinct items: per-item backoff is 5 ms each; the bucket kicks in after 100.
        for i in 0..100 {
            assert_eq!(r.when(&i), Duration::from_millis(5));
        }
        assert_eq!(r.when(&100), Duration::from_millis(100));
        // One item failing repeatedly grows past the bucket.
        tokio::time::advance(Duration::from_secs(60)).await;
        let got: Vec<Duration> = (0..5).map(|_| r.when(&7)).collect();
        assert_eq!(got, [10, 20, 40, 80, 160].map(Duration::from_millis));
        assert_eq!(r.num_requeues(&7), 6);
        r.forget(&7);
        assert_eq!(r.num_requeues(&7), 0);
        assert_eq!(r.when(&7), Duration::from_millis(5));
    }

    #[test]
    fn fast_slow() {
        let r = ItemFastSlowRateLimiter::new(Duration::from_millis(5), Duration::from_secs(10), 3);
        let got: Vec<Duration> = (0..5).map(|_| r.when(&"x")).collect();
        assert_eq!(got, [5, 5, 5, 10_000, 10_000].map(Duration::from_millis));
        assert_eq!(r.num_requeues(&"x"), 5);
        r.forget(&"x");
        assert_eq!(r.when(&"x"), Duration::from_millis(5));
    }
}
