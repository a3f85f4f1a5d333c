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
    use super::Sleepers;

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
}
