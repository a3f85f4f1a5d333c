//! Which workers are blocked in a queue's `get`, so that the queue wakes one only when none is
//! already on its way.
//!
//! Waking a blocked worker for every item that becomes ready (what the queues did before, and
//! what client-go's `cond.Signal` per `Add` does) sends one wake-up across threads per item while
//! the woken workers have yet to run, and brings every idle worker onto the queue's lock at
//! once. Instead a queue wakes one blocked worker and no other until that one has looked at the
//! queue; a worker that takes an item and leaves more behind wakes the next (a chain, like Go's
//! and Tokio's schedulers waking one searching thread at a time). As long as items are ready
//! and workers blocked, one worker is always on its way, so no item waits for a worker that
//! sleeps:
//!
//! * a worker blocks only after it found nothing ready, under the queue's lock;
//! * whatever makes an item ready while workers are blocked and none is on its way wakes one
//!   ([`Sleepers::wake_one`]);
//! * a worker that takes the lock after waiting (woken, timed out, or registered afresh)
//!   counts as the one on its way ([`Sleepers::looking`]): it takes an item, and wakes the next
//!   if more are ready, or finds none.
//!
//! A wake-up that reaches a worker whose `get` was dropped meanwhile is handed by
//! [`tokio::sync::Notify`] to another waiting worker (or kept for the next one), which then
//! looks in its stead.

use parking_lot::Mutex;

/// A queue's state, which keeps its [`Sleepers`] under the queue's lock.
pub(super) trait HasSleepers {
    fn sleepers(&mut self) -> &mut Sleepers;
}

/// A worker blocked in a queue's `get`: counted out again if its `get` is dropped while it
/// waits (set `waiting` when it blocks, take it when it looks again).
pub(super) struct Blocked<'a, S: HasSleepers> {
    state: &'a Mutex<S>,
    pub(super) waiting: bool,
}

impl<'a, S: HasSleepers> Blocked<'a, S> {
    pub(super) fn new(state: &'a Mutex<S>) -> Self {
        Blocked {
            state,
            waiting: false,
        }
    }
}

impl<S: HasSleepers> Drop for Blocked<'_, S> {
    fn drop(&mut self) {
        if self.waiting {
            self.state.lock().sleepers().unblock();
        }
    }
}

/// The blocked workers of one queue; kept under the queue's lock.
#[derive(Debug, Default)]
pub(super) struct Sleepers {
    /// Workers in `get` that found nothing ready and wait.
    blocked: usize,
    /// A worker was woken and has not yet looked at the queue.
    on_its_way: bool,
}

impl Sleepers {
    /// Items are ready (`ready` of them): whether the caller wakes one blocked worker (with
    /// `notify_one` once it let go of the lock).
    pub(super) fn wake_one(&mut self, ready: usize) -> bool {
        let wake = ready > 0 && self.blocked > 0 && !self.on_its_way;
        self.on_its_way |= wake;
        wake
    }

    /// A worker that waited (or registered to wait) has the lock and looks at the queue.
    pub(super) fn looking(&mut self) {
        self.on_its_way = false;
    }

    /// A worker found nothing ready and waits.
    pub(super) fn block(&mut self) {
        self.blocked += 1;
    }

    /// A waiting worker stopped waiting (woken, timed out, or its `get` was dropped).
    pub(super) fn unblock(&mut self) {
        self.blocked = self.blocked.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::Sleepers;
    use crate::workqueue::{LOW_PRIORITY, PriorityQueue, Queue};

    #[test]
    fn one_worker_is_woken_until_it_looks() {
        let mut s = Sleepers::default();
        assert!(!s.wake_one(1), "nobody waits");
        s.block();
        s.block();
        assert!(!s.wake_one(0), "nothing ready");
        assert!(s.wake_one(1));
        assert!(!s.wake_one(2), "one is on its way");
        s.unblock();
        s.looking();
        assert!(s.wake_one(1), "the next of the chain");
        s.unblock();
        s.looking();
        assert!(!s.wake_one(1), "nobody waits any more");
    }

    /// What the tests need of a queue: both queues wake their workers through [`Sleepers`].
    trait TestQueue: Clone + Send + Sync + 'static {
        fn add(&self, k: u32);
        fn get(&self) -> impl Future<Output = Option<u32>> + Send;
        fn done(&self, k: &u32);
    }

    impl TestQueue for Queue<u32> {
        fn add(&self, k: u32) {
            Queue::add(self, k);
        }
        fn get(&self) -> impl Future<Output = Option<u32>> + Send {
            Queue::get(self)
        }
        fn done(&self, k: &u32) {
            Queue::done(self, k);
        }
    }

    /// Every other item at the low priority.
    impl TestQueue for PriorityQueue<u32> {
        fn add(&self, k: u32) {
            self.add_with_priority(k, if k.is_multiple_of(2) { LOW_PRIORITY } else { 0 });
        }
        fn get(&self) -> impl Future<Output = Option<u32>> + Send {
            PriorityQueue::get(self)
        }
        fn done(&self, k: &u32) {
            PriorityQueue::done(self, k);
        }
    }

    /// Workers blocked in `get`, then a burst of adds: each worker must take one item while the
    /// others still hold theirs (a barrier of all four), so the wake-up chain reaches them all.
    async fn a_burst_reaches_every_blocked_worker(q: impl TestQueue) {
        let all_busy = Arc::new(tokio::sync::Barrier::new(4));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (q, all_busy) = (q.clone(), all_busy.clone());
                tokio::spawn(async move {
                    let k = q.get().await?;
                    all_busy.wait().await;
                    q.done(&k);
                    Some(k)
                })
            })
            .collect();
        tokio::task::yield_now().await;
        for k in 0..4 {
            q.add(k);
        }
        let mut got = Vec::new();
        for w in workers {
            let k = tokio::time::timeout(Duration::from_secs(60), w)
                .await
                .map_err(|_| "a worker was never woken")
                .and_then(|r| r.map_err(|_| "a worker panicked"));
            got.push(k);
        }
        got.sort();
        assert_eq!(got, [Ok(Some(0)), Ok(Some(1)), Ok(Some(2)), Ok(Some(3))]);
    }

    /// A woken worker whose `get` is dropped before it ran passes the wake-up on: the other
    /// blocked worker takes the item, and the dropped one no longer counts as waiting.
    async fn a_wake_up_for_a_dropped_get_reaches_another_worker(q: impl TestQueue) {
        let spawn_get = || {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        };
        let first = spawn_get();
        tokio::task::yield_now().await;
        let second = spawn_get();
        tokio::task::yield_now().await;
        q.add(1);
        // The first to wait was woken; it is dropped before it runs.
        first.abort();
        let got = tokio::time::timeout(Duration::from_secs(60), second).await;
        assert!(matches!(got, Ok(Ok(Some(1)))), "{got:?}");
        q.done(&1);
        let third = spawn_get();
        tokio::task::yield_now().await;
        q.add(3);
        let got = tokio::time::timeout(Duration::from_secs(60), third).await;
        assert!(matches!(got, Ok(Ok(Some(3)))), "{got:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_reaches_every_blocked_worker_of_a_queue() {
        a_burst_reaches_every_blocked_worker(Queue::<u32>::new()).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_reaches_every_blocked_worker_of_a_priority_queue() {
        a_burst_reaches_every_blocked_worker(PriorityQueue::<u32>::new()).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_wake_up_for_a_dropped_get_of_a_queue_reaches_another_worker() {
        a_wake_up_for_a_dropped_get_reaches_another_worker(Queue::<u32>::new()).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_wake_up_for_a_dropped_get_of_a_priority_queue_reaches_another_worker() {
        a_wake_up_for_a_dropped_get_reaches_another_worker(PriorityQueue::<u32>::new()).await;
    }
}
