//! A rate-limiting work queue with priorities and bounded waiting.
//!
//! controller-runtime's priority queue (`pkg/controller/priorityqueue`, on by default in its
//! controllers) hands out the ready item of highest priority first, and among equal priorities
//! the one that has been ready longest. Its controllers queue the initial list and resyncs at a
//! low priority (`handler.LowPriority`, −100) and every other event at 0, so that a restart does
//! not hold real changes behind thousands of unchanged objects.
//!
//! This queue does the same, with two differences a controller notices:
//!
//! * **Bounded waiting.** Plain priority order starves: under steady high-priority work a
//!   low-priority item may never be handed out. Here an item that has been ready for
//!   [`max_wait`](PriorityQueueBuilder::max_wait) (default [`DEFAULT_MAX_WAIT`]) is *overdue*:
//!   overdue items are handed out before any other, the longest-waiting first, whatever their
//!   priority and however much higher-priority work keeps arriving. An item therefore waits at
//!   most `max_wait` plus the time the workers need for the overdue items ready before it.
//!   Waiting is judged by the queue's own clock, which a task of the runtime ticks every
//!   thirty-second of `max_wait` (see [`PriorityQueueBuilder::max_wait`]): an item may count as
//!   overdue up to a sixteenth of `max_wait` early, never late.
//! * **Backoff counts failures, not triggers.** An item sent back with
//!   [`add_rate_limited`](PriorityQueue::add_rate_limited) (its reconcile failed) is *backing
//!   off* until the rate limiter's delay has passed. A plain [`add`](PriorityQueue::add) or
//!   [`add_after`](PriorityQueue::add_after) of that item (an event) neither hands it out early
//!   (which would turn each event into one more failure, and so a longer backoff) nor restarts
//!   its backoff; it only raises the item's priority. So after `k` failures an item waits the
//!   limiter's `k`-th delay, however many events arrive in between. (client-go's and
//!   controller-runtime's queues hand such an item out at once.) Only an add that says the
//!   object really changed ([`AddOptions::reset_backoff`]; a controller's events that its
//!   predicates pass) ends the backoff: the item is ready at once and the limiter forgets its
//!   failures.
//!
//! Everything else is as in the other queues: an item is queued at most once (adds merge: the
//! highest priority and the earliest time win), is never handed to two workers at once (an item
//! added while it is processed is queued again by [`done`](PriorityQueue::done)), and a named
//! queue reports the `workqueue_*` metrics, its depth by priority when the provider supports it
//! ([`MetricsProvider::new_depth_metric_with_priority`](super::MetricsProvider::new_depth_metric_with_priority)).
//!
//! ```
//! use std::time::Duration;
//! use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let q = PriorityQueue::<&str>::builder().max_wait(Some(Duration::from_secs(10))).build();
//! q.add_with_priority("initial-list", LOW_PRIORITY);
//! q.add("changed");
//! assert_eq!(q.get_with_priority().await, Some(("changed", 0)));
//! q.done(&"changed");
//! assert_eq!(q.get_with_priority().await, Some(("initial-list", LOW_PRIORITY)));
//! # }
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::hash::Hash;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{QueueConfig, QueueMetrics, UNFINISHED_WORK_PERIOD};
use super::sleepers::{Blocked, HasSleepers, Sleepers};
use super::{RateLimiter, default_controller_rate_limiter};

/// The priority of the initial list and of resyncs (controller-runtime's `handler.LowPriority`).
pub const LOW_PRIORITY: i32 = -100;

/// The priority of an item added without one.
pub const NORMAL_PRIORITY: i32 = 0;

/// How long an item may be ready before it is handed out ahead of higher priorities, unless
/// the queue is built with another [`max_wait`](PriorityQueueBuilder::max_wait).
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(30);

/// How an item is added (controller-runtime's `AddOpts`).
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{AddOptions, LOW_PRIORITY};
///
/// let resync = AddOptions { priority: LOW_PRIORITY, ..AddOptions::default() };
/// let later = AddOptions::default().after(Duration::from_secs(5));
/// let failed = AddOptions::default().rate_limited();
/// assert!(failed.rate_limited && !later.rate_limited && resync.after.is_zero());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOptions {
    /// Higher is handed out first; a queued item keeps the highest priority it was added with.
    pub priority: i32,
    /// Not before this delay has passed (zero: at once). A queued item keeps the earliest time.
    pub after: Duration,
    /// The item failed: it waits the rate limiter's next delay (which counts one more failure)
    /// and is not handed out earlier by other adds.
    pub rate_limited: bool,
    /// The object changed in a way that counts (a controller's predicates passed it), not
    /// merely another trigger: the item's backoff ends (it is due at once, or after `after`)
    /// and the rate limiter forgets its failures, so the next failure waits the first delay.
    /// Ignored with `rate_limited`.
    pub reset_backoff: bool,
}

impl AddOptions {
    /// Options with `priority`.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::AddOptions::with_priority(5).priority, 5);
    /// ```
    pub fn with_priority(priority: i32) -> Self {
        AddOptions {
            priority,
            ..AddOptions::default()
        }
    }

    /// The same, not before `delay`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let o = kube_codegen_runtime::workqueue::AddOptions::default().after(Duration::from_secs(1));
    /// assert_eq!(o.after, Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.after = delay;
        self
    }

    /// The same, rate-limited.
    ///
    /// ```
    /// assert!(kube_codegen_runtime::workqueue::AddOptions::default().rate_limited().rate_limited);
    /// ```
    #[must_use]
    pub fn rate_limited(mut self) -> Self {
        self.rate_limited = true;
        self
    }

    /// The same, ending a backoff (see [`reset_backoff`](Self::reset_backoff)).
    ///
    /// ```
    /// assert!(kube_codegen_runtime::workqueue::AddOptions::default().reset_backoff().reset_backoff);
    /// ```
    #[must_use]
    pub fn reset_backoff(mut self) -> Self {
        self.reset_backoff = true;
        self
    }
}

/// What an add says about the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// A trigger: it does not end a backoff.
    Event,
    /// A failure: its backoff replaces whatever the item waited for.
    Failure,
    /// A change that counts: it ends a backoff.
    Change,
}

/// Where a queued item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// May be handed out: linked into its priority's list, ready since `since`.
    Ready,
    /// Waits for `due`.
    Delayed,
    /// Handed out, not re-added.
    Processing,
    /// Handed out and added again: placed by `done` from `priority`, `due` and `backoff`.
    ProcessingAgain,
}

struct Entry<T> {
    /// The item, stored once: the index finds the entry by it, `get` hands out a clone.
    item: T,
    /// While `Ready`: when it became ready. Otherwise: when it is due (not handed out before).
    /// In [`Tick`]s: a ready item's due time no longer matters (it has passed), so one field
    /// holds both and an entry stays small.
    time: Tick,
    /// Identifies the current placement (set when the item becomes ready or delayed, in
    /// increasing order): a delayed-heap entry with another stamp is stale. A ready item's
    /// list is ordered by `(time, stamp)`, so ties of time keep the order of readiness, also
    /// after a raise of priority (which keeps the stamp).
    stamp: u64,
    priority: i32,
    /// The neighbours in its priority's list (while `Ready`; [`NIL`] at an end).
    prev: u32,
    next: u32,
    place: Place,
    /// The due time was set by the rate limiter: other adds do not bring it forward.
    backoff: bool,
}

/// Nanoseconds since the queue was built (its `epoch`): half the size of an `Instant`.
type Tick = u64;

/// No slot: the end of a list.
const NIL: u32 = u32::MAX;

/// The ready items of one priority, linked through their entries, oldest first.
struct Level {
    priority: i32,
    head: u32,
    tail: u32,
}

struct State<T> {
    /// Every item queued, delayed or in hand: its slot, found by the slot's item.
    index: hashbrown::HashTable<u32>,
    /// The index's hasher, for growing the index (a copy of [`Core`]'s, which hashes items
    /// before it takes the lock).
    hasher: ahash::RandomState,
    /// Time zero of the entries' [`Tick`]s.
    epoch: Instant,
    slots: Vec<Option<Entry<T>>>,
    free: Vec<u32>,
    /// One list per priority seen, highest first.
    levels: Vec<Level>,
    /// Delayed items by due time: `(due, stamp, slot)`.
    delayed: BinaryHeap<Reverse<(Tick, u64, u32)>>,
    next_stamp: u64,
    ready: usize,
    /// The queue's clock (see [`Core::clock_started`]): the time of its last tick, `None` until
    /// it ticks (then the clock is read where the time is needed).
    coarse: Option<Tick>,
    /// How often the queue's clock ticks.
    step: Tick,
    waiting: usize,
    processing: usize,
    /// The workers blocked in `get`.
    sleepers: Sleepers,
    max_wait: Option<Duration>,
    /// `max_wait` in ticks.
    max_wait_ticks: Option<Tick>,
    shutting_down: bool,
    metrics: Option<QueueMetrics<T>>,
}

struct Core<T> {
    state: Mutex<State<T>>,
    /// The index's hasher: items are hashed before the lock is taken.
    hasher: ahash::RandomState,
    limiter: Arc<dyn RateLimiter<T>>,
    /// Wakes workers blocked in `get`.
    ready: Notify,
    /// Wakes `shut_down_with_drain` when nothing is in hand.
    drained: Notify,
    name: Option<String>,
    updater_started: AtomicBool,
    /// Whether the task ticking the queue's clock was started. Reading the system clock costs
    /// as much as the rest of an add and a get together, and aging needs a time for every item
    /// that becomes ready and for picks while several priorities are ready. So a task of the
    /// runtime reads it every [`step`](State::step) and the queue uses that time instead: an
    /// item becomes ready at most a step later than its time says, and a pick counts the time
    /// as a step later than the last tick, so no item waits longer than `max_wait` while the
    /// runtime runs its timers (an item may count as overdue up to two steps early).
    ///
    /// The task stops, and the queue reads the clock where it needs the time, when Tokio's
    /// clock is not the system's (paused, as in tests): time moved by `advance` is seen at
    /// once, not at the task's next turn.
    clock_started: AtomicBool,
    /// Tests: the queue's clock ticks also while Tokio's clock is paused.
    #[cfg(test)]
    ticks_when_paused: bool,
}

/// A work queue with priorities, bounded waiting and failure-counting backoff. See the
/// [module docs](self).
pub struct PriorityQueue<T> {
    core: Arc<Core<T>>,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        PriorityQueue {
            core: self.core.clone(),
        }
    }
}

impl<T> fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.core.state.lock();
        f.debug_struct("PriorityQueue")
            .field("ready", &s.ready)
            .field("waiting", &s.waiting)
            .field("processing", &s.processing)
            .field("max_wait", &s.max_wait)
            .field("shutting_down", &s.shutting_down)
            .field("name", &self.core.name)
            .finish()
    }
}

impl<T> Default for PriorityQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

/// Builds a [`PriorityQueue`].
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::{ItemExponentialFailureRateLimiter, PriorityQueue, QueueConfig};
///
/// let q = PriorityQueue::<String>::builder()
///     .config(QueueConfig::named("mydemo"))
///     .rate_limiter(ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(60)))
///     .max_wait(Some(Duration::from_secs(10)))
///     .build();
/// assert_eq!(q.name(), Some("mydemo"));
/// ```
pub struct PriorityQueueBuilder<T> {
    config: QueueConfig,
    limiter: Option<Arc<dyn RateLimiter<T>>>,
    max_wait: Option<Duration>,
    #[cfg(test)]
    ticks_when_paused: bool,
}

impl<T> fmt::Debug for PriorityQueueBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PriorityQueueBuilder")
            .field("config", &self.config)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

impl<T> PriorityQueueBuilder<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// The queue's name and metrics (see [`QueueConfig`]).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{PriorityQueue, QueueConfig};
    /// let q = PriorityQueue::<u8>::builder().config(QueueConfig::named("n")).build();
    /// ```
    #[must_use]
    pub fn config(mut self, config: QueueConfig) -> Self {
        self.config = config;
        self
    }

    /// The rate limiter of [`PriorityQueue::add_rate_limited`] (default
    /// [`default_controller_rate_limiter`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_codegen_runtime::workqueue::{ItemFastSlowRateLimiter, PriorityQueue};
    /// let q = PriorityQueue::<u8>::builder()
    ///     .rate_limiter(ItemFastSlowRateLimiter::new(Duration::ZERO, Duration::from_secs(1), 3))
    ///     .build();
    /// ```
    #[must_use]
    pub fn rate_limiter(self, limiter: impl RateLimiter<T> + 'static) -> Self {
        self.shared_rate_limiter(Arc::new(limiter))
    }

    /// [`rate_limiter`](Self::rate_limiter) with a limiter already behind an `Arc`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kube_codegen_runtime::workqueue::{default_controller_rate_limiter, PriorityQueue, RateLimiter};
    /// let l: Arc<dyn RateLimiter<u8>> = Arc::new(default_controller_rate_limiter());
    /// let q = PriorityQueue::builder().shared_rate_limiter(l).build();
    /// ```
    #[must_use]
    pub fn shared_rate_limiter(mut self, limiter: Arc<dyn RateLimiter<T>>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// How long an item may be ready before it is handed out ahead of every priority (default
    /// [`DEFAULT_MAX_WAIT`]); `None` is strict priority order, which can starve low priorities
    /// (controller-runtime's behaviour).
    ///
    /// Reading the system clock for every add and pick would cost as much as the rest of the
    /// queue's work, so a task of the Tokio runtime (started with the queue, or by the first
    /// [`get`](PriorityQueue::get)) ticks the queue's own clock every thirty-second of
    /// `max_wait`, at least 1 ms and at most a minute. The queue errs early: an item counts as
    /// overdue from at most two ticks before `max_wait` has passed, and no later than
    /// `max_wait` as long as the runtime runs its timers. While Tokio's clock is paused (tests),
    /// or outside a runtime, the queue reads the clock itself instead. A runtime the queue is
    /// used in needs its timers (`enable_time`), as the queue's delays and backoff do.
    ///
    /// ```
    /// use std::time::Duration;
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::<u8>::builder()
    ///     .max_wait(Some(Duration::from_secs(5)))
    ///     .build();
    /// assert_eq!(q.max_wait(), Some(Duration::from_secs(5)));
    /// ```
    #[must_use]
    pub fn max_wait(mut self, max_wait: Option<Duration>) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// Tests: the queue's clock ticks also while Tokio's clock is paused (see
    /// [`Core::clock_started`]), so that paused-clock tests cover it.
    #[cfg(test)]
    fn ticks_when_paused(mut self) -> Self {
        self.ticks_when_paused = true;
        self
    }

    /// The queue.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::<u8>::builder().build();
    /// assert!(q.is_empty());
    /// ```
    pub fn build(self) -> PriorityQueue<T> {
        let (name, metrics) = self.config.into_metrics_with(true);
        let has_metrics = metrics.is_some();
        let limiter = self
            .limiter
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter()));
        let hasher = ahash::RandomState::new();
        let q = PriorityQueue {
            core: Arc::new(Core {
                hasher: hasher.clone(),
                state: Mutex::new(State {
                    index: hashbrown::HashTable::new(),
                    hasher,
                    epoch: Instant::now(),
                    slots: Vec::new(),
                    free: Vec::new(),
                    levels: Vec::new(),
                    delayed: BinaryHeap::new(),
                    next_stamp: 0,
                    ready: 0,
                    coarse: None,
                    step: ticks(clock_step(self.max_wait)),
                    waiting: 0,
                    processing: 0,
                    sleepers: Sleepers::default(),
                    max_wait: self.max_wait,
                    max_wait_ticks: self.max_wait.map(ticks),
                    shutting_down: false,
                    metrics,
                }),
                limiter,
                ready: Notify::new(),
                drained: Notify::new(),
                name,
                updater_started: AtomicBool::new(!has_metrics),
                clock_started: AtomicBool::new(false),
                #[cfg(test)]
                ticks_when_paused: self.ticks_when_paused,
            }),
        };
        q.start_unfinished_work_updater();
        q.start_clock();
        q
    }
}

/// Whether `slot` holds `item`.
fn holds<T: Eq>(slots: &[Option<Entry<T>>], slot: u32, item: &T) -> bool {
    slots
        .get(slot as usize)
        .and_then(Option::as_ref)
        .is_some_and(|e| e.item == *item)
}

/// The hash of the item in `slot` (the index's hash of that slot).
fn hash_of<T: Hash>(slots: &[Option<Entry<T>>], hasher: &ahash::RandomState, slot: u32) -> u64 {
    slots
        .get(slot as usize)
        .and_then(Option::as_ref)
        .map_or(0, |e| hasher.hash_one(&e.item))
}

/// The due time of a waiting item (due at `old`, backing off if `backoff`) added again for
/// `due`: a failure's backoff replaces whatever it waited for, a change ends a backoff, and
/// otherwise the earlier time wins unless the item is backing off.
fn merge_due(old: Tick, backoff: &mut bool, due: Tick, why: Why) -> Tick {
    match why {
        Why::Failure => {
            *backoff = true;
            due
        }
        Why::Change => {
            *backoff = false;
            old.min(due)
        }
        Why::Event if *backoff => old,
        Why::Event => old.min(due),
    }
}

/// How often the queue's clock ticks for the bound `max_wait`: a thirty-second of it, in whole
/// milliseconds (the timer's resolution), at least one and at most a minute; a second without
/// a bound (the time then only orders items of one priority).
fn clock_step(max_wait: Option<Duration>) -> Duration {
    let step = max_wait.map_or(Duration::from_secs(1), |w| w / 32);
    let ms = u64::try_from(step.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(ms.clamp(1, 60_000))
}

/// Whether Tokio's clock reads the system's time now (it does not while paused, or after a
/// pause ended: then it is behind by the time paused, or ahead by the time advanced).
fn follows_system_clock() -> bool {
    let before = std::time::Instant::now();
    let tokio = Instant::now().into_std();
    let after = std::time::Instant::now();
    before <= tokio && tokio <= after
}

/// `d` in ticks (saturating: a bound of centuries is no bound).
fn ticks(d: Duration) -> Tick {
    d.as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()))
}

impl<T> HasSleepers for State<T> {
    fn sleepers(&mut self) -> &mut Sleepers {
        &mut self.sleepers
    }
}

impl<T: Clone + Eq + Hash> State<T> {
    fn stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    /// The time an item becoming ready now is ready since: the queue clock's last tick (not
    /// later than now), or the system clock's time while the queue's clock does not tick.
    fn now_tick(&self) -> Tick {
        self.coarse.unwrap_or_else(|| self.tick(Instant::now()))
    }

    /// The time a pick goes by: a step after the queue clock's last tick (not earlier than
    /// now), or the system clock's time while the queue's clock does not tick.
    fn pick_tick(&self) -> Tick {
        match self.coarse {
            Some(c) => c.saturating_add(self.step),
            None => self.tick(Instant::now()),
        }
    }

    /// `t` in ticks since the queue's epoch.
    fn tick(&self, t: Instant) -> Tick {
        ticks(t.saturating_duration_since(self.epoch))
    }

    /// The instant of tick `t`.
    fn instant(&self, t: Tick) -> Instant {
        self.epoch + Duration::from_nanos(t)
    }

    fn entry(&self, slot: u32) -> Option<&Entry<T>> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    fn entry_mut(&mut self, slot: u32) -> Option<&mut Entry<T>> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    fn release(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            *s = None;
            self.free.push(slot);
        }
    }

    /// Makes the item in `slot` ready since `since` and puts it into its priority's list at
    /// its place.
    fn push_ready(&mut self, slot: u32, since: Tick) {
        let stamp = self.stamp();
        let Some(e) = self.slots.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        e.place = Place::Ready;
        e.stamp = stamp;
        e.time = since;
        let priority = e.priority;
        if let Some(m) = &mut self.metrics {
            m.add_at(&e.item, Instant::now(), priority);
        }
        self.ready += 1;
        self.link(slot, priority);
    }

    /// The `(since, stamp)` of the ready item in `slot`: its place in its list.
    fn key(&self, slot: u32) -> Option<(Tick, u64)> {
        self.entry(slot).map(|e| (e.time, e.stamp))
    }

    /// Links the ready item in `slot` into the list of `priority` at its place: after the
    /// tail mostly (it became ready last), before the head if it is older than all (a raised
    /// item usually is), else found by walking back from the tail.
    fn link(&mut self, slot: u32, priority: i32) {
        let at = match self.level(priority) {
            Ok(at) => at,
            Err(at) => {
                self.levels.insert(
                    at,
                    Level {
                        priority,
                        head: NIL,
                        tail: NIL,
                    },
                );
                at
            }
        };
        let Some(key) = self.key(slot) else { return };
        let (head, tail) = (self.levels[at].head, self.levels[at].tail);
        // The item to insert after (NIL: at the head).
        let after = if tail == NIL || self.key(tail).is_none_or(|k| k <= key) {
            tail
        } else if self.key(head).is_none_or(|k| key < k) {
            NIL
        } else {
            let mut after = self.entry(tail).map_or(NIL, |e| e.prev);
            while after != NIL && self.key(after).is_some_and(|k| k > key) {
                after = self.entry(after).map_or(NIL, |e| e.prev);
            }
            after
        };
        let next = if after == NIL {
            head
        } else {
            self.entry(after).map_or(NIL, |e| e.next)
        };
        self.join(at, after, slot);
        self.join(at, slot, next);
    }

    /// Makes `right` follow `left` in the list of level `at` ([`NIL`] on either side: the
    /// other is the head or the tail).
    fn join(&mut self, at: usize, left: u32, right: u32) {
        match self.entry_mut(left) {
            Some(l) => l.next = right,
            None => self.levels[at].head = right,
        }
        match self.entry_mut(right) {
            Some(r) => r.prev = left,
            None => self.levels[at].tail = left,
        }
    }

    /// The index of the list of `priority` (`Err`: where it would go; highest first).
    fn level(&self, priority: i32) -> Result<usize, usize> {
        self.levels.binary_search_by(|l| priority.cmp(&l.priority))
    }

    /// Unlinks the ready item in `slot` from the list of `priority`.
    fn unlink(&mut self, slot: u32, priority: i32) {
        if let Ok(at) = self.level(priority) {
            self.unlink_at(at, slot);
        }
    }

    /// Unlinks the ready item in `slot` from the list of level `at`.
    fn unlink_at(&mut self, at: usize, slot: u32) {
        if let Some((prev, next)) = self.entry(slot).map(|e| (e.prev, e.next)) {
            self.join(at, prev, next);
        }
    }

    /// Makes the item in `slot` wait until `due`.
    fn push_delayed(&mut self, slot: u32, due: Tick) {
        let stamp = self.stamp();
        let Some(e) = self.entry_mut(slot) else {
            return;
        };
        e.place = Place::Delayed;
        e.stamp = stamp;
        e.time = due;
        self.waiting += 1;
        self.delayed.push(Reverse((due, stamp, slot)));
    }

    /// Places an item that is neither queued nor in hand and is due at `due`; returns whether
    /// it is ready.
    fn place(&mut self, slot: u32, due: Tick, now_tick: Tick) -> bool {
        if due <= now_tick {
            self.push_ready(slot, now_tick);
            true
        } else {
            self.push_delayed(slot, due);
            false
        }
    }

    /// Adds `item` (whose hash is `hash`) wanting to be handed out at `due` (`None`: now);
    /// returns whether a worker should wake.
    fn add(&mut self, item: T, hash: u64, priority: i32, due: Option<Instant>, why: Why) -> bool {
        if self.shutting_down {
            return false;
        }
        let backoff = why == Why::Failure;
        let now_tick = self.now_tick();
        let due = due.map_or(now_tick, |d| self.tick(d));
        let (slots, hasher) = (&self.slots, &self.hasher);
        let found = self.index.entry(
            hash,
            |&s| holds(slots, s, &item),
            |&s| hash_of(slots, hasher, s),
        );
        let slot = match found {
            hashbrown::hash_table::Entry::Occupied(o) => *o.get(),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let entry = Entry {
                    item,
                    time: due,
                    stamp: 0,
                    priority,
                    prev: NIL,
                    next: NIL,
                    place: Place::Delayed,
                    backoff,
                };
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot as usize] = Some(entry);
                        slot
                    }
                    None => {
                        self.slots.push(Some(entry));
                        // More than u32::MAX items at once do not fit in memory anyway.
                        u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
                    }
                };
                v.insert(slot);
                return self.place(slot, due, now_tick);
            }
        };
        let Some(e) = self.entry_mut(slot) else {
            return false;
        };
        let old_priority = e.priority;
        e.priority = e.priority.max(priority);
        let new_priority = e.priority;
        match e.place {
            Place::Processing => {
                // Placed by `done`, as added now.
                e.priority = priority;
                e.time = due;
                e.backoff = backoff;
                e.place = Place::ProcessingAgain;
                false
            }
            Place::ProcessingAgain => {
                e.time = merge_due(e.time, &mut e.backoff, due, why);
                false
            }
            Place::Ready => {
                // A ready item's due time has passed (it is due now): only a failure's backoff,
                // which replaces it, can send it back to wait.
                if merge_due(now_tick, &mut e.backoff, due, why) > now_tick {
                    self.unlink(slot, old_priority);
                    self.ready -= 1;
                    let held = self.slots.get(slot as usize).and_then(Option::as_ref);
                    if let (Some(m), Some(e)) = (&mut self.metrics, held) {
                        m.unready(&e.item, old_priority);
                    }
                    self.push_delayed(slot, due);
                } else if new_priority != old_priority {
                    // Into the new priority's list, keeping its time and stamp, and so the
                    // place among items ready at the same time.
                    self.unlink(slot, old_priority);
                    if let Some(m) = &mut self.metrics {
                        m.reprioritized(old_priority, new_priority);
                    }
                    self.link(slot, new_priority);
                }
                false
            }
            Place::Delayed => {
                let old_due = e.time;
                let new_due = merge_due(old_due, &mut e.backoff, due, why);
                if new_due <= now_tick {
                    self.waiting -= 1;
                    self.push_ready(slot, now_tick);
                    true
                } else {
                    if new_due != old_due {
                        self.waiting -= 1;
                        self.push_delayed(slot, new_due);
                    }
                    false
                }
            }
        }
    }

    /// Moves delayed items whose time has come to their lists. The system clock is read (only
    /// when something waits): a delayed item is due at its time, not at the queue clock's
    /// next tick.
    fn promote_due(&mut self) {
        if self.delayed.is_empty() {
            return;
        }
        let now_tick = self.tick(Instant::now());
        while let Some(&Reverse((at, stamp, slot))) = self.delayed.peek() {
            let live = self
                .entry(slot)
                .is_some_and(|e| e.stamp == stamp && e.place == Place::Delayed);
            if live && at > now_tick {
                break;
            }
            self.delayed.pop();
            if live {
                self.waiting -= 1;
                self.push_ready(slot, at);
            }
        }
    }

    /// Whether to wake a blocked worker for the items ready now (see [`Sleepers`]).
    fn wake_one(&mut self) -> bool {
        self.sleepers.wake_one(self.ready)
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.delayed
            .peek()
            .map(|Reverse((at, ..))| self.instant(*at))
    }

    /// Takes the next item: the longest-waiting overdue one, else the first of the highest
    /// priority.
    fn pop(&mut self) -> Option<(T, i32)> {
        if self.ready == 0 {
            return None;
        }
        // The first non-empty list, and the oldest first item of all (the first of each list
        // is its longest-waiting item; ties of time go to the one that became ready first).
        let mut first = None;
        let mut oldest: Option<(usize, (Tick, u64))> = None;
        let mut several = false;
        for (i, level) in self.levels.iter().enumerate() {
            let Some(key) = self.key(level.head) else {
                continue;
            };
            several = first.is_some();
            first.get_or_insert(i);
            if oldest.is_none_or(|(_, k)| key < k) {
                oldest = Some((i, key));
            }
        }
        let first = first?;
        // With one priority ready its first item is the pick whether or not it is overdue, and
        // so it is when the highest priority's first item is the oldest; else the oldest item
        // is the pick if it is overdue. Only then is the time needed.
        let other_oldest = oldest.filter(|&(i, _)| several && i != first);
        let mut level = first;
        if let (Some(max_wait), Some((i, (since, _)))) = (self.max_wait_ticks, other_oldest)
            && self.pick_tick().saturating_sub(since) >= max_wait
        {
            level = i;
        }
        let (slot, priority) = (self.levels[level].head, self.levels[level].priority);
        self.unlink_at(level, slot);
        if self.levels[level].head == NIL && self.levels.len() > 8 {
            // Many distinct priorities: drop the empty lists so that a pick stays short.
            self.levels.retain(|l| l.head != NIL);
        }
        let e = self.entry_mut(slot)?;
        let item = e.item.clone();
        e.place = Place::Processing;
        self.ready -= 1;
        self.processing += 1;
        if let Some(m) = &mut self.metrics {
            m.get_at(&item, Instant::now(), priority);
        }
        Some((item, priority))
    }

    /// `done` under the lock for `item`, whose hash is `hash`; returns (wake a worker, shut
    /// down and nothing in hand any more: wake `shut_down_with_drain`).
    fn done(&mut self, item: &T, hash: u64) -> (bool, bool) {
        // One lookup: the item leaves the index unless it was added again meanwhile.
        let slots = &self.slots;
        let Ok(found) = self.index.find_entry(hash, |&s| holds(slots, s, item)) else {
            return (false, false);
        };
        let slot = *found.get();
        let Some((place, due)) = slots
            .get(slot as usize)
            .and_then(Option::as_ref)
            .map(|e| (e.place, e.time))
        else {
            return (false, false);
        };
        let wake = match place {
            Place::Processing => {
                found.remove();
                self.release(slot);
                self.processing -= 1;
                false
            }
            Place::ProcessingAgain => {
                self.processing -= 1;
                let now = self.now_tick();
                self.place(slot, due, now)
            }
            Place::Ready | Place::Delayed => return (false, false),
        };
        if let Some(m) = &mut self.metrics {
            m.done(item, Instant::now());
        }
        (wake, self.shutting_down && self.processing == 0)
    }

    fn shut_down(&mut self) {
        self.shutting_down = true;
        let slots = &mut self.slots;
        let free = &mut self.free;
        // What is in hand stays until `done`; its re-adds and everything queued go.
        self.index.retain(|slot| {
            let Some(s) = slots.get_mut(*slot as usize) else {
                return false;
            };
            match s.as_mut() {
                Some(e) if matches!(e.place, Place::Processing | Place::ProcessingAgain) => {
                    e.place = Place::Processing;
                    true
                }
                _ => {
                    *s = None;
                    free.push(*slot);
                    false
                }
            }
        });
        self.levels.clear();
        self.delayed.clear();
        self.ready = 0;
        self.waiting = 0;
        if let Some(m) = &mut self.metrics {
            m.cleared();
        }
    }
}

impl<T> PriorityQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// A queue with [`default_controller_rate_limiter`] and [`DEFAULT_MAX_WAIT`].
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::<String>::new();
    /// assert!(q.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for a queue with other settings.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::<u8>::builder().max_wait(None).build();
    /// assert_eq!(q.max_wait(), None);
    /// ```
    pub fn builder() -> PriorityQueueBuilder<T> {
        PriorityQueueBuilder {
            config: QueueConfig::default(),
            limiter: None,
            max_wait: Some(DEFAULT_MAX_WAIT),
            #[cfg(test)]
            ticks_when_paused: false,
        }
    }

    /// The queue's name, if it has one.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::PriorityQueue::<u8>::new().name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.core.name.as_deref()
    }

    /// The bound on waiting (see the [module docs](self)).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{DEFAULT_MAX_WAIT, PriorityQueue};
    /// assert_eq!(PriorityQueue::<u8>::new().max_wait(), Some(DEFAULT_MAX_WAIT));
    /// ```
    pub fn max_wait(&self) -> Option<Duration> {
        self.core.state.lock().max_wait
    }

    /// Starts the task that ticks the queue's clock (see [`Core::clock_started`]), once, when
    /// there is a Tokio runtime. It ends with the queue, or when the queue shuts down.
    #[inline]
    fn start_clock(&self) {
        if let Some(rt) = super::runtime_to_start(&self.core.clock_started) {
            self.spawn_clock(rt);
        }
    }

    fn spawn_clock(&self, rt: tokio::runtime::Handle) {
        let weak: Weak<Core<T>> = Arc::downgrade(&self.core);
        let step = Duration::from_nanos(self.core.state.lock().step);
        rt.spawn(async move {
            let mut ticks = tokio::time::interval(step);
            // After a stall the next tick comes at once and the following ones a step apart:
            // each tick reads the time, so a late tick is not made up for by a burst.
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(core) = weak.upgrade() else { return };
                #[cfg(not(test))]
                let ticks_when_paused = false;
                #[cfg(test)]
                let ticks_when_paused = core.ticks_when_paused;
                let system = ticks_when_paused || follows_system_clock();
                let mut s = core.state.lock();
                if s.shutting_down || !system {
                    s.coarse = None;
                    return;
                }
                s.coarse = Some(s.tick(Instant::now()));
            }
        });
    }

    #[inline]
    fn start_unfinished_work_updater(&self) {
        if let Some(rt) = super::runtime_to_start(&self.core.updater_started) {
            self.spawn_unfinished_work_updater(rt);
        }
    }

    fn spawn_unfinished_work_updater(&self, rt: tokio::runtime::Handle) {
        let weak: Weak<Core<T>> = Arc::downgrade(&self.core);
        rt.spawn(async move {
            loop {
                tokio::time::sleep(UNFINISHED_WORK_PERIOD).await;
                let Some(core) = weak.upgrade() else { return };
                let mut s = core.state.lock();
                let now = Instant::now();
                let in_hand = match &mut s.metrics {
                    Some(m) => m.update_unfinished_work(now),
                    None => return,
                };
                if s.shutting_down && !in_hand {
                    return;
                }
            }
        });
    }

    /// Adds `item` as `opts` says (controller-runtime's `AddWithOpts`). Ignored after shutdown.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_codegen_runtime::workqueue::{AddOptions, PriorityQueue};
    /// let q = PriorityQueue::new();
    /// q.add_with(1, AddOptions::with_priority(10));
    /// q.add_with(2, AddOptions::default().after(Duration::from_secs(60)));
    /// assert_eq!((q.len(), q.waiting()), (1, 1));
    /// ```
    pub fn add_with(&self, item: T, opts: AddOptions) {
        let why = if opts.rate_limited {
            Why::Failure
        } else if opts.reset_backoff {
            Why::Change
        } else {
            Why::Event
        };
        let delay = match why {
            // The limiter counts this failure whatever the queue does with it.
            Why::Failure => Some(self.core.limiter.when(&item)),
            Why::Change => {
                self.core.limiter.forget(&item);
                None
            }
            Why::Event => None,
        };
        // The item is hashed before the lock is taken, so that workers wait less for it.
        let hash = self.core.hasher.hash_one(&item);
        let wake = {
            let mut s = self.core.state.lock();
            if s.shutting_down {
                return;
            }
            let wait = delay.unwrap_or(opts.after);
            if !wait.is_zero()
                && let Some(m) = &mut s.metrics
            {
                m.retry();
            }
            let due = (!wait.is_zero()).then(|| crate::time::deadline_after(wait));
            s.add(item, hash, opts.priority, due, why) && s.wake_one()
        };
        // A worker waiting for a deadline recomputes it even when nothing became ready.
        if wake || delay.is_some() || !opts.after.is_zero() {
            self.core.ready.notify_one();
        }
    }

    /// Adds `item` at [`NORMAL_PRIORITY`], ready at once unless it is backing off.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add("a");
    /// q.add("a");
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn add(&self, item: T) {
        self.add_with(item, AddOptions::default());
    }

    /// Adds `item` at `priority`.
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue};
    /// let q = PriorityQueue::new();
    /// q.add_with_priority("resync", LOW_PRIORITY);
    /// q.add("event");
    /// assert_eq!(q.try_get(), Some("event"));
    /// ```
    pub fn add_with_priority(&self, item: T, priority: i32) {
        self.add_with(item, AddOptions::with_priority(priority));
    }

    /// Adds `item` once `delay` has passed (client-go's `AddAfter`).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add_after(1, Duration::from_secs(5));
    /// assert_eq!(q.waiting(), 1);
    /// ```
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_with(item, AddOptions::default().after(delay));
    }

    /// Adds `item` after the rate limiter's next delay for it, at [`NORMAL_PRIORITY`]
    /// (client-go's `AddRateLimited`): the item failed. Until that delay has passed, other adds
    /// of the item do not hand it out.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add_rate_limited("a");
    /// q.add("a"); // an event: the backoff holds
    /// assert_eq!((q.len(), q.waiting(), q.num_requeues(&"a")), (0, 1, 1));
    /// ```
    pub fn add_rate_limited(&self, item: T) {
        self.add_with(item, AddOptions::default().rate_limited());
    }

    /// Makes the rate limiter forget `item` (its backoff starts over).
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add_rate_limited(1);
    /// q.forget(&1);
    /// assert_eq!(q.num_requeues(&1), 0);
    /// ```
    pub fn forget(&self, item: &T) {
        self.core.limiter.forget(item);
    }

    /// How many times `item` failed since it was last forgotten.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::PriorityQueue::new().num_requeues(&"x"), 0);
    /// ```
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.core.limiter.num_requeues(item)
    }

    /// Waits for the next item and marks it as being processed; `None` once the queue is shut
    /// down. Call [`done`](Self::done) with it when finished.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add("x");
    /// assert_eq!(q.get().await, Some("x"));
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        self.get_with_priority().await.map(|(item, _)| item)
    }

    /// [`get`](Self::get) with the item's priority (controller-runtime's `GetWithPriority`), to
    /// requeue it at the same priority.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add_with_priority("x", 3);
    /// assert_eq!(q.get_with_priority().await, Some(("x", 3)));
    /// # }
    /// ```
    pub async fn get_with_priority(&self) -> Option<(T, i32)> {
        self.start_unfinished_work_updater();
        self.start_clock();
        // Fast path: an item is ready, so there is nothing to wait for and no need to register
        // with the `Notify` (two locks of its waiter list per call).
        if let Ok(got) = self.take_ready() {
            return got;
        }
        let mut blocked = Blocked::new(&self.core.state);
        loop {
            let notified = self.core.ready.notified();
            tokio::pin!(notified);
            // Register before looking at the state so that no wake-up is lost in between.
            notified.as_mut().enable();
            let deadline = {
                let mut s = self.core.state.lock();
                if std::mem::take(&mut blocked.waiting) {
                    s.sleepers.unblock();
                }
                s.sleepers.looking();
                if s.shutting_down {
                    return None;
                }
                s.promote_due();
                if let Some(got) = s.pop() {
                    let wake = s.wake_one();
                    drop(s);
                    self.wake(wake);
                    return Some(got);
                }
                s.sleepers.block();
                blocked.waiting = true;
                s.next_deadline()
            };
            match deadline {
                Some(at) => {
                    tokio::select! {
                        _ = &mut notified => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// `Ok(Some(item))` if one is ready, `Ok(None)` once shut down, `Err(())` if `get` has to
    /// wait.
    fn take_ready(&self) -> Result<Option<(T, i32)>, ()> {
        let mut s = self.core.state.lock();
        if s.shutting_down {
            return Ok(None);
        }
        if s.ready == 0 && s.delayed.is_empty() {
            return Err(());
        }
        s.promote_due();
        let got = s.pop().ok_or(())?;
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        Ok(Some(got))
    }

    fn wake(&self, wake: bool) {
        if wake {
            self.core.ready.notify_one();
        }
    }

    /// Takes the next item if one is ready, without waiting.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// assert_eq!(q.try_get(), None);
    /// q.add(7);
    /// assert_eq!(q.try_get(), Some(7));
    /// ```
    pub fn try_get(&self) -> Option<T> {
        self.try_get_with_priority().map(|(item, _)| item)
    }

    /// [`try_get`](Self::try_get) with the item's priority.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add_with_priority(7, -1);
    /// assert_eq!(q.try_get_with_priority(), Some((7, -1)));
    /// ```
    pub fn try_get_with_priority(&self) -> Option<(T, i32)> {
        let mut s = self.core.state.lock();
        if s.shutting_down {
            return None;
        }
        s.promote_due();
        let got = s.pop();
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        got
    }

    /// Marks `item` as processed: if it was added meanwhile it is queued again.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add(1);
    /// let one = q.try_get().unwrap();
    /// q.add(1);
    /// assert_eq!(q.len(), 0);
    /// q.done(&one);
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn done(&self, item: &T) {
        let hash = self.core.hasher.hash_one(item);
        let (wake, drained) = {
            let mut s = self.core.state.lock();
            let (ready, drained) = s.done(item, hash);
            (ready && s.wake_one(), drained)
        };
        self.wake(wake);
        if drained {
            self.core.drained.notify_waiters();
        }
    }

    /// The number of items ready to be handed out.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add('a');
    /// q.add('b');
    /// assert_eq!(q.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        let mut s = self.core.state.lock();
        s.promote_due();
        let len = s.ready;
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        len
    }

    /// Whether no item is ready.
    ///
    /// ```
    /// assert!(kube_codegen_runtime::workqueue::PriorityQueue::<u8>::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of items handed out and not yet `done`.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add(1);
    /// q.try_get();
    /// assert_eq!(q.processing(), 1);
    /// ```
    pub fn processing(&self) -> usize {
        self.core.state.lock().processing
    }

    /// The number of items waiting for a delay or a backoff.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::PriorityQueue::<u8>::new().waiting(), 0);
    /// ```
    pub fn waiting(&self) -> usize {
        self.core.state.lock().waiting
    }

    /// Stops the queue: `get` returns `None` from now on, new items are ignored, and queued or
    /// delayed items are dropped.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add(1);
    /// q.shut_down();
    /// assert!(q.is_shutting_down());
    /// assert_eq!(q.try_get(), None);
    /// ```
    pub fn shut_down(&self) {
        self.core.state.lock().shut_down();
        self.core.ready.notify_waiters();
        self.core.drained.notify_waiters();
    }

    /// [`shut_down`](Self::shut_down), then waits until every item handed out is `done`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = kube_codegen_runtime::workqueue::PriorityQueue::new();
    /// q.add(1);
    /// let item = q.get().await.unwrap();
    /// let drain = tokio::spawn({ let q = q.clone(); async move { q.shut_down_with_drain().await } });
    /// q.done(&item);
    /// drain.await.unwrap();
    /// # }
    /// ```
    pub async fn shut_down_with_drain(&self) {
        self.shut_down();
        loop {
            let drained = self.core.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.core.state.lock().processing == 0 {
                return;
            }
            drained.await;
        }
    }

    /// Whether [`shut_down`](Self::shut_down) was called.
    ///
    /// ```
    /// assert!(!kube_codegen_runtime::workqueue::PriorityQueue::<u8>::new().is_shutting_down());
    /// ```
    pub fn is_shutting_down(&self) -> bool {
        self.core.state.lock().shutting_down
    }
}

#[cfg(test)]
mod tests;
