//! The de-duplicating FIFO at the core of every work queue.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};
use std::time::Duration;

use ahash::AHashMap;
use parking_lot::Mutex;
use std::collections::hash_map::Entry;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{QueueConfig, QueueMetrics, UNFINISHED_WORK_PERIOD};
use super::sleepers::{Blocked, HasSleepers, Sleepers};

/// An item that joins the queue at `at`. Entries are never removed from the heap early; an entry
/// whose `seq` no longer matches `State::waiting` is stale and skipped.
struct Waiting<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Waiting<T> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<T> Eq for Waiting<T> {}
impl<T> PartialOrd for Waiting<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Waiting<T> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest deadline first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// Where an item known to the queue is: client-go's *dirty* set holds the queued items and the
/// ones added again while processing, its *processing* set the ones in hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// In `queue`, once.
    Queued,
    /// Handed out by `get` and not yet `done`.
    Processing,
    /// Handed out, and added again since: `done` queues it.
    ProcessingAgain,
}

struct State<T> {
    queue: VecDeque<T>,
    /// Every item queued or in hand (one lookup per `add`, `get` and `done`).
    items: AHashMap<T, Mark>,
    /// How many items are in hand.
    processing: usize,
    /// Delayed items: the heap orders them, the map de-duplicates (item → live entry).
    heap: BinaryHeap<Waiting<T>>,
    waiting: AHashMap<T, (Instant, u64)>,
    seq: u64,
    /// The workers blocked in `get`.
    sleepers: Sleepers,
    shutting_down: bool,
    /// Present for a named queue with a metrics provider.
    metrics: Option<QueueMetrics<T>>,
}

pub(crate) struct Core<T> {
    state: Mutex<State<T>>,
    /// Wakes workers blocked in `get`.
    ready: Notify,
    /// Wakes `shut_down_with_drain` when the processing set empties.
    drained: Notify,
    name: Option<String>,
    /// Whether the task recomputing unfinished work runs (metrics only).
    updater_started: AtomicBool,
}

/// A de-duplicating work queue: an item is queued at most once, and never handed to two
/// workers at once. See the [module docs](crate::workqueue).
///
/// ```
/// use kube_codegen_runtime::workqueue::Queue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let q = Queue::new();
/// q.add("a");
/// let a = q.get().await.unwrap();
/// q.add("a"); // re-added while processing: comes back after `done`
/// assert_eq!(q.len(), 0);
/// q.done(&a);
/// assert_eq!(q.len(), 1);
/// # }
/// ```
pub struct Queue<T> {
    core: Arc<Core<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            core: self.core.clone(),
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.core.state.lock();
        f.debug_struct("Queue")
            .field("queued", &s.queue.len())
            .field("processing", &s.processing)
            .field("waiting", &s.waiting.len())
            .field("shutting_down", &s.shutting_down)
            .field("name", &self.core.name)
            .finish()
    }
}

impl<T> Default for Queue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<T> HasSleepers for State<T> {
    fn sleepers(&mut self) -> &mut Sleepers {
        &mut self.sleepers
    }
}

impl<T> State<T>
where
    T: Clone + Eq + Hash,
{
    /// `add` under the lock; returns whether a worker should be woken.
    fn add(&mut self, item: T) -> bool {
        if self.shutting_down {
            return false;
        }
        match self.items.entry(item) {
            Entry::Occupied(mut o) => {
                if *o.get() != Mark::Processing {
                    return false;
                }
                o.insert(Mark::ProcessingAgain);
                if let Some(m) = &mut self.metrics {
                    m.add(o.key(), Instant::now());
                }
                false
            }
            Entry::Vacant(v) => {
                if let Some(m) = &mut self.metrics {
                    m.add(v.key(), Instant::now());
                }
                self.queue.push_back(v.key().clone());
                v.insert(Mark::Queued);
                true
            }
        }
    }

    /// Moves delayed items whose time has come into the queue.
    fn promote_due(&mut self, now: Instant) {
        while self.heap.peek().is_some_and(|w| w.at <= now) {
            let Some(w) = self.heap.pop() else { break };
            if self
                .waiting
                .get(&w.item)
                .is_some_and(|&(_, seq)| seq == w.seq)
            {
                self.waiting.remove(&w.item);
                self.add(w.item);
            }
        }
    }

    /// [`State::promote_due`] at the current time; the clock is not read when nothing waits.
    fn promote_due_now(&mut self) {
        if !self.heap.is_empty() {
            self.promote_due(Instant::now());
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|w| w.at)
    }

    /// Whether to wake a blocked worker for the items ready now (see [`Sleepers`]).
    fn wake_one(&mut self) -> bool {
        self.sleepers.wake_one(self.queue.len())
    }

    /// Hands out the first queued item.
    fn pop(&mut self) -> Option<T> {
        let item = self.queue.pop_front()?;
        if let Some(mark) = self.items.get_mut(&item) {
            *mark = Mark::Processing;
        }
        self.processing += 1;
        if let Some(m) = &mut self.metrics {
            m.get(&item, Instant::now());
        }
        Some(item)
    }

    /// `done` under the lock; returns (wake a worker, shut down and nothing in hand any more).
    fn done(&mut self, item: &T) -> (bool, bool) {
        let queued = match self.items.get_mut(item) {
            Some(Mark::Queued) | None => return (false, false),
            Some(Mark::Processing) => {
                self.items.remove(item);
                false
            }
            Some(mark @ Mark::ProcessingAgain) => {
                *mark = Mark::Queued;
                self.queue.push_back(item.clone());
                true
            }
        };
        self.processing -= 1;
        if let Some(m) = &mut self.metrics {
            m.done(item, Instant::now());
        }
        (queued, self.shutting_down && self.processing == 0)
    }
}

impl<T> Queue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// An empty queue.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::<u32>::new();
    /// assert!(q.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A queue with a name and, through it, metrics (see [`QueueConfig`] and the
    /// [metrics hook](super::MetricsProvider)).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{Queue, QueueConfig};
    /// let q = Queue::<u32>::with_config(QueueConfig::named("numbers"));
    /// assert_eq!(q.name(), Some("numbers"));
    /// ```
    pub fn with_config(config: QueueConfig) -> Self {
        let (name, metrics) = config.into_metrics();
        let has_metrics = metrics.is_some();
        let queue = Queue {
            core: Arc::new(Core {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    items: AHashMap::new(),
                    processing: 0,
                    heap: BinaryHeap::new(),
                    waiting: AHashMap::new(),
                    seq: 0,
                    sleepers: Sleepers::default(),
                    shutting_down: false,
                    metrics,
                }),
                ready: Notify::new(),
                drained: Notify::new(),
                name,
                updater_started: AtomicBool::new(!has_metrics),
            }),
        };
        queue.start_unfinished_work_updater();
        queue
    }

    /// The queue's name, if it has one.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::Queue::<u8>::new().name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.core.name.as_deref()
    }

    /// Starts the task that recomputes the unfinished-work gauges every 500 ms (client-go's
    /// `updateUnfinishedWorkLoop`), once, when there are metrics and a Tokio runtime.
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

    /// Marks `item` as needing processing. It is queued unless it is already queued, or is
    /// being processed (then it is queued by [`Queue::done`]). Ignored after shutdown.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add(1);
    /// q.add(1);
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn add(&self, item: T) {
        let wake = {
            let mut s = self.core.state.lock();
            s.add(item) && {
                let ready = s.queue.len();
                s.sleepers.wake_one(ready)
            }
        };
        if wake {
            self.core.ready.notify_one();
        }
    }

    /// Queues `item` after `delay` (at once if `delay` is zero). If the item is already waiting,
    /// the earlier deadline wins.
    pub(crate) fn add_after(&self, item: T, delay: Duration) {
        {
            let mut s = self.core.state.lock();
            if s.shutting_down {
                return;
            }
            if let Some(m) = &mut s.metrics {
                m.retry();
            }
        }
        if delay.is_zero() {
            return self.add(item);
        }
        let at = crate::time::deadline_after(delay);
        {
            let mut s = self.core.state.lock();
            if s.shutting_down {
                return;
            }
            if s.waiting.get(&item).is_some_and(|&(cur, _)| cur <= at) {
                return;
            }
            s.seq += 1;
            let seq = s.seq;
            s.waiting.insert(item.clone(), (at, seq));
            s.heap.push(Waiting { at, seq, item });
        }
        // A waiting worker re-computes its timer.
        self.core.ready.notify_one();
    }

    /// Waits for the next item and marks it as being processed; `None` once the queue is shut
    /// down. Call [`Queue::done`] with the item when finished with it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add("x");
    /// assert_eq!(q.get().await, Some("x"));
    /// q.shut_down();
    /// assert_eq!(q.get().await, None);
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        self.start_unfinished_work_updater();
        // Fast path: an item is ready, so there is nothing to wait for and no need to register
        // with the `Notify` (two locks of its waiter list per call).
        if let Ok(item) = self.take_ready() {
            return item;
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
                s.promote_due_now();
                if let Some(item) = s.pop() {
                    let wake = s.wake_one();
                    drop(s);
                    self.wake(wake);
                    return Some(item);
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
    fn take_ready(&self) -> Result<Option<T>, ()> {
        let mut s = self.core.state.lock();
        if s.shutting_down {
            return Ok(None);
        }
        s.promote_due_now();
        let item = s.pop().ok_or(())?;
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        Ok(Some(item))
    }

    fn wake(&self, wake: bool) {
        if wake {
            self.core.ready.notify_one();
        }
    }

    /// Takes the next item if one is ready, without waiting.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// assert_eq!(q.try_get(), None);
    /// q.add(7);
    /// assert_eq!(q.try_get(), Some(7));
    /// ```
    pub fn try_get(&self) -> Option<T> {
        let mut s = self.core.state.lock();
        if s.shutting_down {
            return None;
        }
        s.promote_due_now();
        let item = s.pop();
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        item
    }

    /// Marks `item` as processed. If it was added again while being processed, it is queued.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add(1);
    /// let one = q.try_get().unwrap();
    /// q.done(&one);
    /// assert!(q.is_empty());
    /// ```
    pub fn done(&self, item: &T) {
        let (wake, drained) = {
            let mut s = self.core.state.lock();
            let (queued, drained) = s.done(item);
            (queued && s.wake_one(), drained)
        };
        self.wake(wake);
        if drained {
            self.core.drained.notify_waiters();
        }
    }

    /// The number of items ready to be handed out (not counting items being processed or still
    /// delayed).
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add('a');
    /// q.add('b');
    /// assert_eq!(q.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        let mut s = self.core.state.lock();
        s.promote_due_now();
        let len = s.queue.len();
        let wake = s.wake_one();
        drop(s);
        self.wake(wake);
        len
    }

    /// Whether no item is ready to be handed out.
    ///
    /// ```
    /// assert!(kube_codegen_runtime::workqueue::Queue::<u8>::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of items handed out and not yet `done`.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add(1);
    /// q.try_get();
    /// assert_eq!(q.processing(), 1);
    /// ```
    pub fn processing(&self) -> usize {
        self.core.state.lock().processing
    }

    /// The number of delayed items not yet due.
    ///
    /// ```
    /// assert_eq!(kube_codegen_runtime::workqueue::Queue::<u8>::new().waiting(), 0);
    /// ```
    pub fn waiting(&self) -> usize {
        self.core.state.lock().waiting.len()
    }

    /// Stops the queue: [`Queue::get`] returns `None` from now on (waking every blocked
    /// worker), new items are ignored, and queued or delayed items are dropped.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
    /// q.add(1);
    /// q.shut_down();
    /// assert!(q.is_shutting_down());
    /// assert_eq!(q.try_get(), None);
    /// ```
    pub fn shut_down(&self) {
        {
            let mut s = self.core.state.lock();
            s.shutting_down = true;
            s.queue.clear();
            // What is in hand stays until `done` (which no longer queues it); the rest goes.
            s.items.retain(|_, mark| {
                *mark = match mark {
                    Mark::Queued => return false,
                    Mark::Processing | Mark::ProcessingAgain => Mark::Processing,
                };
                true
            });
            s.heap.clear();
            s.waiting.clear();
            if let Some(m) = &mut s.metrics {
                m.cleared();
            }
        }
        self.core.ready.notify_waiters();
        self.core.drained.notify_waiters();
    }

    /// [`Queue::shut_down`], then waits until every item handed out before is `done`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = kube_codegen_runtime::workqueue::Queue::new();
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

    /// Whether [`Queue::shut_down`] was called.
    ///
    /// ```
    /// assert!(!kube_codegen_runtime::workqueue::Queue::<u8>::new().is_shutting_down());
    /// ```
    pub fn is_shutting_down(&self) -> bool {
        self.core.state.lock().shutting_down
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

    use ahash::AHashSet;
    use proptest::prelude::*;

    #[tokio::test]
    async fn dedups_and_keeps_fifo_order() {
        let q = Queue::new();
        for i in [1, 2, 1, 3, 2] {
            q.add(i);
        }
        assert_eq!(q.len(), 3);
        assert_eq!(q.get().await, Some(1));
        assert_eq!(q.get().await, Some(2));
        assert_eq!(q.get().await, Some(3));
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn re_add_while_processing_comes_back_after_done() {
        let q = Queue::new();
        q.add("k");
        let k = q.get().await;
        assert_eq!(k, Some("k"));
        q.add("k");
        q.add("k");
        // Not handed out again while processing.
        assert_eq!(q.try_get(), None);
        q.done(&"k");
        assert_eq!(q.len(), 1);
        assert_eq!(q.try_get(), Some("k"));
        q.done(&"k");
        assert!(q.is_empty());
        assert_eq!(q.processing(), 0);
    }

    #[test]
    fn done_of_an_item_not_handed_out_does_not_queue_it_twice() {
        let q = Queue::new();
        q.add(1);
        q.done(&1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.try_get(), Some(1));
        assert_eq!(q.try_get(), None);
        assert_eq!(q.processing(), 1);
        q.done(&1);
        q.done(&1);
        assert_eq!((q.len(), q.processing()), (0, 0));
    }

    #[tokio::test]
    async fn get_wakes_on_add() {
        let q = Queue::new();
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.add(5);
        assert_eq!(waiter.await.ok().flatten(), Some(5));
    }

    #[tokio::test]
    async fn shut_down_wakes_all_waiters_and_drops_pending() {
        let q = Queue::<u32>::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        tokio::task::yield_now().await;
        q.shut_down();
        for w in waiters {
            assert_eq!(w.await.ok().flatten(), None);
        }
        q.add(1);
        assert_eq!(q.len(), 0);
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_with_drain_waits_for_in_flight_items() {
        let q = Queue::new();
        q.add(1);
        q.add(2);
        let one = q.get().await;
        assert_eq!(one, Some(1));
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !drain.is_finished(),
            "drain returned while an item was in flight"
        );
        assert!(q.is_shutting_down());
        // The queued item was dropped; nothing more is handed out.
        assert_eq!(q.try_get(), None);
        q.done(&1);
        tokio::time::timeout(Duration::from_secs(1), drain)
            .await
            .map(|r| r.is_ok())
            .map_err(|_| "drain did not finish")
            .unwrap_or_else(|e| panic!("{e}"));
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_items_join_after_their_delay_and_earliest_wins() {
        let q = Queue::new();
        q.add_after("a", Duration::from_secs(10));
        q.add_after("a", Duration::from_secs(2));
        q.add_after("a", Duration::from_secs(30));
        q.add_after("b", Duration::from_secs(5));
        assert_eq!(q.waiting(), 2);
        assert_eq!(q.len(), 0);
        let start = Instant::now();
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert_eq!(q.get().await, Some("b"));
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        // The stale 10 s and 30 s entries for "a" do not bring it back.
        q.done(&"a");
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(q.len(), 0);
        assert_eq!(q.waiting(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_add_of_a_queued_item_collapses() {
        let q = Queue::new();
        q.add(1);
        q.add_after(1, Duration::from_millis(10));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(q.len(), 1);
        q.add_after(2, Duration::ZERO);
        assert_eq!(q.len(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stress_many_workers_never_share_a_key() {
        let q = Queue::<u32>::new();
        let active = Arc::new(Mutex::new(AHashSet::new()));
        let processed = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (q, active, processed) = (q.clone(), active.clone(), processed.clone());
                tokio::spawn(async move {
                    while let Some(k) = q.get().await {
                        assert!(active.lock().insert(k), "key {k} handed to two workers");
                        tokio::task::yield_now().await;
                        active.lock().remove(&k);
                        processed.fetch_add(1, AtomicOrdering::Relaxed);
                        q.done(&k);
                    }
                })
            })
            .collect();
        for round in 0..200u32 {
            for k in 0..20 {
                q.add((k * 7 + round) % 20);
            }
            tokio::task::yield_now().await;
        }
        while !q.is_empty() || q.processing() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        q.shut_down_with_drain().await;
        for w in workers {
            assert!(w.await.is_ok());
        }
        assert!(processed.load(AtomicOrdering::Relaxed) >= 20);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u8),
        AddAfter(u8, u16),
        Yield,
        Sleep(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..12).prop_map(Op::Add),
            2 => (0u8..12, 1u16..200).prop_map(|(k, d)| Op::AddAfter(k, d)),
            2 => Just(Op::Yield),
            1 => (1u16..100).prop_map(Op::Sleep),
        ]
    }

    /// Runs `ops` against `workers` workers whose processing takes `work_ms[i % len]` ms, and
    /// checks that no key is ever held by two workers and that every add is followed by a
    /// processing start of that key.
    fn run_schedule(ops: Vec<Op>, workers: usize, work_ms: Vec<u16>) -> Result<(), TestCaseError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        rt.block_on(async move {
            let q = Queue::<u8>::new();
            let seq = Arc::new(AtomicU64::new(0));
            let active = Arc::new(Mutex::new(AHashSet::<u8>::new()));
            let starts = Arc::new(Mutex::new(Vec::<(u8, u64)>::new()));
            let violation = Arc::new(Mutex::new(None::<String>));
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (q, seq, active, starts, violation) = (
                        q.clone(),
                        seq.clone(),
                        active.clone(),
                        starts.clone(),
                        violation.clone(),
                    );
                    let work_ms = work_ms.clone();
                    tokio::spawn(async move {
                        let mut n = 0usize;
                        while let Some(k) = q.get().await {
                            let s = seq.fetch_add(1, AtomicOrdering::SeqCst);
                            if !active.lock().insert(k) {
                                *violation.lock() = Some(format!("key {k} given to two workers"));
                            }
                            starts.lock().push((k, s));
                            let ms = work_ms[(w + n) % work_ms.len()];
                            n += 1;
                            if ms > 0 {
                                tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
                            } else {
                                tokio::task::yield_now().await;
                            }
                            active.lock().remove(&k);
                            q.done(&k);
                        }
                    })
                })
                .collect();
            // key → sequence number of its last `add`/`add_after` call: a delayed add is
            // queued later, so it too must be followed by a processing start.
            let mut last_add: HashMap<u8, u64> = HashMap::new();
            for op in ops {
                match op {
                    Op::Add(k) => {
                        q.add(k);
                        last_add.insert(k, seq.fetch_add(1, AtomicOrdering::SeqCst));
                    }
                    Op::AddAfter(k, d) => {
                        q.add_after(k, Duration::from_millis(u64::from(d)));
                        last_add.insert(k, seq.fetch_add(1, AtomicOrdering::SeqCst));
                    }
                    Op::Yield => tokio::task::yield_now().await,
                    Op::Sleep(ms) => tokio::time::sleep(Duration::from_millis(u64::from(ms))).await,
                }
            }
            // Let everything settle: the paused clock jumps over the workers' sleeps.
            for _ in 0..10_000 {
                if q.is_empty() && q.processing() == 0 && q.waiting() == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            q.shut_down_with_drain().await;
            for h in handles {
                h.await.map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            if let Some(v) = violation.lock().take() {
                return Err(TestCaseError::fail(v));
            }
            let starts = starts.lock().clone();
            for (k, added) in &last_add {
                prop_assert!(
                    starts.iter().any(|(sk, s)| sk == k && s > added),
                    "key {} last added at {} was not processed afterwards: {:?}",
                    k,
                    added,
                    starts
                );
            }
            // Nothing is processed that was never added.
            for (k, _) in &starts {
                prop_assert!(last_add.contains_key(k));
            }
            Ok(())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn workers_never_share_a_key_and_every_add_is_processed(
            ops in proptest::collection::vec(op(), 1..120),
            workers in 1usize..5,
            work_ms in proptest::collection::vec(0u16..30, 1..5),
        ) {
            run_schedule(ops, workers, work_ms)?;
        }

        #[test]
        fn duplicates_collapse_before_processing(keys in proptest::collection::vec(0u8..20, 0..200)) {
            let q = Queue::<u8>::new();
            for k in &keys {
                q.add(*k);
            }
            let distinct: AHashSet<u8> = keys.iter().copied().collect();
            prop_assert_eq!(q.len(), distinct.len());
            let mut seen = Vec::new();
            while let Some(k) = q.try_get() {
                seen.push(k);
            }
            // Each distinct key exactly once, in first-add order.
            let mut first_order = Vec::new();
            for k in &keys {
                if !first_order.contains(k) {
                    first_order.push(*k);
                }
            }
            prop_assert_eq!(seen, first_order);
        }
    }
}
