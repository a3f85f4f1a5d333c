use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::time::Duration;

use ahash::AHashSet;
use parking_lot::Mutex;
use proptest::prelude::*;
use tokio::time::Instant;

use super::*;
use crate::workqueue::{
    ItemExponentialFailureRateLimiter, MetricsProvider, PriorityGaugeMetric, RateLimitingQueue,
};

fn paused_runtime() -> Result<tokio::runtime::Runtime, TestCaseError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))
}

fn exp(base_ms: u64, max_ms: u64) -> ItemExponentialFailureRateLimiter<u32> {
    ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(base_ms),
        Duration::from_millis(max_ms),
    )
}

#[test]
fn higher_priority_first_then_fifo_within_a_priority() {
    let q = PriorityQueue::<u32>::builder().max_wait(None).build();
    q.add_with_priority(1, LOW_PRIORITY);
    q.add(2);
    q.add_with_priority(3, 5);
    q.add(4);
    q.add_with_priority(5, LOW_PRIORITY);
    let got: Vec<(u32, i32)> = std::iter::from_fn(|| q.try_get_with_priority()).collect();
    assert_eq!(
        got,
        [(3, 5), (2, 0), (4, 0), (1, LOW_PRIORITY), (5, LOW_PRIORITY)]
    );
}

#[test]
fn adds_merge_to_the_highest_priority_and_keep_their_place_in_time() {
    let q = PriorityQueue::<u32>::builder().max_wait(None).build();
    q.add_with_priority(1, LOW_PRIORITY);
    q.add(2);
    q.add(3);
    // 1 was ready first: raised to 0 it goes ahead of 2 and 3.
    q.add(1);
    q.add_with_priority(1, LOW_PRIORITY); // never lowered
    assert_eq!(q.len(), 3);
    let got: Vec<(u32, i32)> = std::iter::from_fn(|| q.try_get_with_priority()).collect();
    assert_eq!(got, [(1, 0), (2, 0), (3, 0)]);
}

#[test]
fn an_item_in_hand_is_not_handed_out_again_until_done() {
    let q = PriorityQueue::<u32>::new();
    q.add(1);
    assert_eq!(q.try_get(), Some(1));
    q.add_with_priority(1, 7);
    q.add(1);
    assert_eq!((q.len(), q.processing()), (0, 1));
    assert_eq!(q.try_get(), None);
    q.done(&1);
    assert_eq!((q.len(), q.processing()), (1, 0));
    assert_eq!(q.try_get_with_priority(), Some((1, 7)));
    q.done(&1);
    assert_eq!((q.len(), q.processing(), q.waiting()), (0, 0, 0));
    // `done` of an item not in hand changes nothing.
    q.add(2);
    q.done(&2);
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn delayed_items_join_when_due_and_the_earliest_time_wins() {
    let q = PriorityQueue::<u32>::new();
    q.add_after(1, Duration::from_secs(10));
    q.add_after(1, Duration::from_secs(2));
    q.add_after(1, Duration::from_secs(30));
    q.add_after(2, Duration::from_secs(5));
    assert_eq!((q.len(), q.waiting()), (0, 2));
    let start = Instant::now();
    assert_eq!(q.get().await, Some(1));
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert_eq!(q.get().await, Some(2));
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    q.done(&1);
    q.done(&2);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        (q.len(), q.waiting()),
        (0, 0),
        "stale deadlines bring nothing back"
    );
}

#[tokio::test(start_paused = true)]
async fn an_event_brings_a_delayed_item_forward_but_not_a_backing_off_one() {
    let q = PriorityQueue::<u32>::builder()
        .rate_limiter(exp(1000, 60_000))
        .build();
    q.add_after(1, Duration::from_secs(10));
    q.add(1);
    assert_eq!(q.try_get(), Some(1), "a requeue-after is brought forward");
    q.done(&1);

    let start = Instant::now();
    q.add_rate_limited(2);
    q.add(2);
    q.add_after(2, Duration::from_millis(1));
    q.add_with_priority(2, 9);
    assert_eq!((q.len(), q.waiting()), (0, 1));
    assert_eq!(q.get_with_priority().await, Some((2, 9)));
    assert_eq!(start.elapsed(), Duration::from_secs(1), "the backoff held");
    assert_eq!(q.num_requeues(&2), 1, "events counted no failure");
}

#[tokio::test(start_paused = true)]
async fn a_change_that_counts_ends_a_backoff_and_the_failures_start_over() {
    let q = PriorityQueue::<u32>::builder()
        .rate_limiter(exp(1000, 60_000))
        .build();
    // Two failures: the item backs off 2 s.
    q.add_rate_limited(1);
    q.add_rate_limited(1);
    q.add(1);
    assert_eq!((q.len(), q.waiting(), q.num_requeues(&1)), (0, 1, 2));
    let start = Instant::now();
    q.add_with(1, AddOptions::default().reset_backoff());
    assert_eq!((q.len(), q.waiting(), q.num_requeues(&1)), (1, 0, 0));
    assert_eq!(q.get().await, Some(1));
    assert_eq!(start.elapsed(), Duration::ZERO, "handed out at once");
    // The next failure waits the first delay, and an event does not end it.
    q.add_rate_limited(1);
    q.done(&1);
    q.add(1);
    assert_eq!(q.get().await, Some(1));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    q.done(&1);

    // In hand: a failure after the change still backs off; a change after the failure ends it.
    q.add(2);
    assert_eq!(q.get().await, Some(2));
    q.add_rate_limited(2);
    q.add_with(2, AddOptions::with_priority(3).reset_backoff());
    q.done(&2);
    assert_eq!(q.try_get_with_priority(), Some((2, 3)));
    q.done(&2);

    // A ready item a failure left ready (a zero delay) is not sent back by a later event.
    let z = PriorityQueue::<u32>::builder()
        .rate_limiter(exp(0, 0))
        .build();
    z.add_rate_limited(3);
    z.add_with(3, AddOptions::default().reset_backoff());
    assert_eq!((z.len(), z.waiting()), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_failure_while_an_event_is_pending_backs_off() {
    let q = PriorityQueue::<u32>::builder()
        .rate_limiter(exp(1000, 60_000))
        .build();
    q.add(1);
    let one = q.get().await;
    assert_eq!(one, Some(1));
    q.add(1); // an event during the reconcile …
    q.add_rate_limited(1); // … which then fails
    q.done(&1);
    assert_eq!((q.len(), q.waiting()), (0, 1));
    let start = Instant::now();
    assert_eq!(q.get().await, Some(1));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_delay_of_centuries_waits_without_overflow_and_an_event_still_brings_it_forward() {
    let q = PriorityQueue::<u32>::new();
    q.add_after(1, Duration::MAX);
    q.add_after(2, Duration::from_secs(86_400 * 365 * 500));
    assert_eq!((q.len(), q.waiting()), (0, 2));
    tokio::time::advance(Duration::from_secs(86_400 * 365)).await;
    assert_eq!((q.len(), q.waiting()), (0, 2));
    q.add(1);
    assert_eq!(q.try_get(), Some(1));
    assert_eq!((q.len(), q.waiting()), (0, 1));
}

#[test]
fn a_queued_small_key_takes_forty_bytes() {
    // Times are ticks, and a ready item's due time shares its field with its ready time: an
    // entry of a `u64` key is 40 bytes (it was 64 with two `Instant`s).
    assert_eq!(std::mem::size_of::<Option<Entry<u64>>>(), 40);
}

#[test]
fn without_a_bound_low_priorities_starve() {
    // The check the bounded-waiting property relies on: strict priority order never hands the
    // low item out while higher work keeps coming.
    let rt = paused_runtime().unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let q = PriorityQueue::<u32>::builder().max_wait(None).build();
        q.add_with_priority(0, LOW_PRIORITY);
        for i in 1..=1000 {
            q.add(i);
            let (got, _) = q
                .get_with_priority()
                .await
                .unwrap_or_else(|| panic!("shut down"));
            assert_ne!(got, 0, "handed out after {i} high items");
            tokio::time::sleep(Duration::from_secs(1)).await;
            q.done(&got);
        }
    });
}

#[tokio::test(start_paused = true)]
async fn an_overdue_item_goes_ahead_of_higher_priorities() {
    let q = PriorityQueue::<u32>::builder()
        .max_wait(Some(Duration::from_secs(10)))
        .build();
    q.add_with_priority(0, LOW_PRIORITY);
    let mut handed = Vec::new();
    for i in 1..=20 {
        q.add(i);
        let (got, _) = q
            .get_with_priority()
            .await
            .unwrap_or_else(|| panic!("shut down"));
        handed.push((got, Instant::now()));
        tokio::time::sleep(Duration::from_secs(1)).await;
        q.done(&got);
    }
    let low = handed.iter().position(|(k, _)| *k == 0);
    assert_eq!(low, Some(10), "after 10 s of high work: {handed:?}");
}

/// A test's own aging check, as a user writes it: with Tokio's clock paused, time moved by
/// `advance` counts at once (the queue reads the clock), not at its clock task's next turn.
#[tokio::test(start_paused = true)]
async fn with_a_paused_clock_an_advance_makes_an_item_overdue_at_once() {
    let q = PriorityQueue::<u32>::builder()
        .max_wait(Some(Duration::from_secs(10)))
        .build();
    // The clock task runs, sees the paused clock and ends.
    tokio::time::sleep(Duration::from_millis(1)).await;
    q.add_with_priority(0, LOW_PRIORITY);
    q.add(1);
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(q.get().await, Some(0));
    assert!(q.core.state.lock().coarse.is_none());
}

/// On the system's clock the queue runs on its own clock: the task ticks it, an add takes
/// its time and needs no clock read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_system_clock_the_queue_runs_on_its_own_clock() {
    assert!(follows_system_clock());
    let q = PriorityQueue::<u32>::builder()
        .max_wait(Some(Duration::from_millis(320)))
        .build();
    // The first tick comes at once; give it ample time on a loaded machine.
    let mut waited = Duration::ZERO;
    while q.core.state.lock().coarse.is_none() && waited < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        waited += Duration::from_millis(5);
    }
    let first = q.core.state.lock().coarse;
    assert!(first.is_some(), "the clock did not tick within {waited:?}");
    assert_eq!(q.core.state.lock().step, ticks(Duration::from_millis(10)));
    q.add(1);
    let key = q.core.state.lock().key(0);
    assert!(key.is_some_and(|(since, _)| Some(since) >= first));
    // It ticks on: the time moves.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(q.core.state.lock().coarse > first);
    // Shut down, the task ends and the queue reads the clock again.
    q.shut_down();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(q.core.state.lock().coarse.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_paused_clock_is_not_the_systems() {
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(!follows_system_clock());
}

#[test]
fn the_clock_ticks_in_thirty_seconds_of_the_bound_in_whole_milliseconds_up_to_a_minute() {
    assert_eq!(
        clock_step(Some(Duration::from_secs(30))),
        Duration::from_millis(937)
    );
    assert_eq!(
        clock_step(Some(Duration::from_millis(20))),
        Duration::from_millis(1)
    );
    assert_eq!(clock_step(Some(Duration::ZERO)), Duration::from_millis(1));
    assert_eq!(clock_step(None), Duration::from_secs(1));
    assert_eq!(
        clock_step(Some(Duration::from_secs(3600))),
        Duration::from_secs(60)
    );
    assert_eq!(clock_step(Some(Duration::MAX)), Duration::from_secs(60));
}

#[test]
fn shut_down_drops_queued_items_and_keeps_those_in_hand() {
    let q = PriorityQueue::<u32>::new();
    q.add(1);
    q.add(2);
    q.add_after(3, Duration::from_secs(1));
    assert_eq!(q.try_get(), Some(1));
    q.add(1);
    q.shut_down();
    assert_eq!((q.len(), q.waiting(), q.processing()), (0, 0, 1));
    q.add(4);
    assert_eq!(q.try_get(), None);
    q.done(&1);
    assert_eq!(
        (q.len(), q.processing()),
        (0, 0),
        "a re-add during shutdown is dropped"
    );
}

#[derive(Default, Clone)]
struct DepthByPriority(Arc<Mutex<HashMap<i32, i64>>>);

impl PriorityGaugeMetric for DepthByPriority {
    fn inc(&self, priority: i32) {
        *self.0.lock().entry(priority).or_default() += 1;
    }
    fn dec(&self, priority: i32) {
        *self.0.lock().entry(priority).or_default() -= 1;
    }
}

struct Nop;
impl crate::workqueue::GaugeMetric for Nop {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl crate::workqueue::CounterMetric for Nop {
    fn inc(&self) {}
}
impl crate::workqueue::HistogramMetric for Nop {
    fn observe(&self, _: f64) {}
}
impl crate::workqueue::SettableGaugeMetric for Nop {
    fn set(&self, _: f64) {}
}

struct Provider(DepthByPriority);
impl MetricsProvider for Provider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn crate::workqueue::GaugeMetric> {
        panic!("a priority queue asks for the depth by priority")
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn crate::workqueue::CounterMetric> {
        Box::new(Nop)
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn crate::workqueue::HistogramMetric> {
        Box::new(Nop)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn crate::workqueue::HistogramMetric> {
        Box::new(Nop)
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn crate::workqueue::SettableGaugeMetric> {
        Box::new(Nop)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn crate::workqueue::SettableGaugeMetric> {
        Box::new(Nop)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn crate::workqueue::CounterMetric> {
        Box::new(Nop)
    }
    fn new_depth_metric_with_priority(&self, _: &str) -> Option<Box<dyn PriorityGaugeMetric>> {
        Some(Box::new(self.0.clone()))
    }
}

#[tokio::test(start_paused = true)]
async fn depth_is_reported_by_priority_for_ready_items() {
    let depth = DepthByPriority::default();
    let q = PriorityQueue::<u32>::builder()
        .config(QueueConfig::named("q").metrics_provider(Arc::new(Provider(depth.clone()))))
        .rate_limiter(exp(1000, 60_000))
        .build();
    let at = |p: i32| depth.0.lock().get(&p).copied().unwrap_or(0);
    q.add_with_priority(1, LOW_PRIORITY);
    q.add_with_priority(2, LOW_PRIORITY);
    q.add(3);
    q.add_after(4, Duration::from_secs(5));
    assert_eq!(
        (at(LOW_PRIORITY), at(0)),
        (2, 1),
        "a delayed item is not counted"
    );
    q.add(2); // raised
    assert_eq!((at(LOW_PRIORITY), at(0)), (1, 2));
    // Sent back to wait, at its own priority (a plain `add_rate_limited` would raise it to 0).
    q.add_with(1, AddOptions::with_priority(LOW_PRIORITY).rate_limited());
    assert_eq!(at(LOW_PRIORITY), 0);
    assert_eq!(q.try_get(), Some(2));
    assert_eq!(at(0), 1);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(q.len(), 3);
    assert_eq!((at(LOW_PRIORITY), at(0)), (1, 2));
    q.shut_down();
    assert_eq!((at(LOW_PRIORITY), at(0)), (0, 0));
}

/// One run of the bounded-waiting scenario: `low` items at [`LOW_PRIORITY`] from the start,
/// and a feeder adding `high_per_tick` new items of priorities 0..10 every `work` (more than
/// the workers can take, so high-priority work never runs out). Returns, per low item, when it
/// was handed out, and the number of items ready at the start. With `ticking`, the queue runs
/// on its own clock (as with Tokio's clock unpaused).
#[allow(clippy::too_many_arguments)]
async fn bounded_waiting_run(
    workers: usize,
    work: Duration,
    max_wait: Duration,
    low: u32,
    high_per_tick: u32,
    priorities: Vec<i32>,
    horizon: Duration,
    ticking: bool,
) -> HashMap<u32, Duration> {
    let mut builder = PriorityQueue::<u32>::builder().max_wait(Some(max_wait));
    if ticking {
        builder = builder.ticks_when_paused();
    }
    let q = builder.build();
    let start = Instant::now();
    for k in 0..low {
        q.add_with_priority(k, LOW_PRIORITY);
    }
    let handed = Arc::new(Mutex::new(HashMap::<u32, Duration>::new()));
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (q, handed) = (q.clone(), handed.clone());
            tokio::spawn(async move {
                while let Some(k) = q.get().await {
                    if k < low {
                        handed.lock().entry(k).or_insert(start.elapsed());
                    }
                    tokio::time::sleep(work).await;
                    q.done(&k);
                }
            })
        })
        .collect();
    let mut next = low;
    let mut tick = 0usize;
    while start.elapsed() < horizon && handed.lock().len() < low as usize {
        for _ in 0..high_per_tick {
            q.add_with_priority(next, priorities[tick % priorities.len()]);
            next += 1;
            tick += 1;
        }
        tokio::time::sleep(work).await;
    }
    q.shut_down();
    for t in tasks {
        let _ = t.await;
    }
    handed.lock().clone()
}

/// The wait the bounded-waiting guarantee allows an item ready at the start: `max_wait`, then
/// the round the workers are in, then the items ready at the start (all overdue together,
/// handed out in turn, `workers` at a time).
fn bound(max_wait: Duration, work: Duration, workers: usize, ready_at_start: u32) -> Duration {
    let rounds = (ready_at_start as usize).div_ceil(workers) as u32 + 1;
    max_wait + work * rounds
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every queued key is processed within T under sustained high-priority load.
    #[test]
    fn every_key_is_handed_out_within_the_bound_under_sustained_high_priority_load(
        workers in 1usize..5,
        work_ms in 1u64..40,
        max_wait_ms in 1u64..2_000,
        low in 1u32..40,
        extra in 1u32..4,
        priorities in proptest::collection::vec(0i32..10, 1..6),
        ticking in proptest::bool::ANY,
    ) {
        let rt = paused_runtime()?;
        let work = Duration::from_millis(work_ms);
        let max_wait = Duration::from_millis(max_wait_ms);
        let high_per_tick = workers as u32 + extra;
        // Ready at the start: the low items and the feeder's first batch.
        let t = bound(max_wait, work, workers, low + high_per_tick);
        // Run well past the bound: a late item would be seen late, not missed.
        let horizon = t * 2 + Duration::from_secs(1);
        let handed = rt.block_on(bounded_waiting_run(
            workers, work, max_wait, low, high_per_tick, priorities, horizon, ticking,
        ));
        for k in 0..low {
            let at = handed.get(&k).copied();
            prop_assert!(at.is_some_and(|at| at <= t), "low key {} handed out at {:?}, bound {:?}", k, at, t);
        }
    }

    /// A key's backoff after k failures is the limiter's k-th delay whatever the number of
    /// events in between.
    #[test]
    fn backoff_after_k_failures_is_the_limiters_kth_delay_whatever_the_events(
        failures in 1usize..8,
        base_ms in 1u64..50,
        cap_ms in 50u64..2_000,
        work_ms in 0u64..20,
        events in proptest::collection::vec((0u64..3_000, 0u8..3, -5i32..5), 0..60),
    ) {
        let rt = paused_runtime()?;
        let (hand_outs, fails) = rt.block_on(async move {
            let q = PriorityQueue::<u32>::builder().rate_limiter(exp(base_ms, cap_ms)).build();
            let start = Instant::now();
            let hand_outs = Arc::new(Mutex::new(Vec::<Duration>::new()));
            let fails = Arc::new(Mutex::new(Vec::<Duration>::new()));
            let worker = {
                let (q, hand_outs, fails) = (q.clone(), hand_outs.clone(), fails.clone());
                tokio::spawn(async move {
                    while let Some(k) = q.get().await {
                        hand_outs.lock().push(start.elapsed());
                        if work_ms > 0 {
                            tokio::time::sleep(Duration::from_millis(work_ms)).await;
                        }
                        let failed_so_far = fails.lock().len();
                        if failed_so_far < failures {
                            fails.lock().push(start.elapsed());
                            q.add_rate_limited(k);
                        } else {
                            q.forget(&k);
                        }
                        q.done(&k);
                    }
                })
            };
            q.add(7);
            let mut events = events;
            events.sort_by_key(|e| e.0);
            for (at, kind, priority) in events {
                tokio::time::sleep_until(start + Duration::from_millis(at)).await;
                match kind {
                    0 => q.add(7),
                    1 => q.add_with_priority(7, priority),
                    _ => q.add_after(7, Duration::from_millis(u64::from(priority.unsigned_abs()))),
                }
            }
            // Let every backoff run out (the longest is the cap, `failures` times).
            tokio::time::sleep(Duration::from_millis(cap_ms * (failures as u64 + 1) + 100)).await;
            q.shut_down_with_drain().await;
            let _ = worker.await;
            let h = hand_outs.lock().clone();
            let f = fails.lock().clone();
            (h, f)
        });
        let reference = exp(base_ms, cap_ms);
        prop_assert_eq!(fails.len(), failures);
        for (i, failed_at) in fails.iter().enumerate() {
            let kth = reference.when(&7);
            // The first hand-out after the failure.
            let next = hand_outs.iter().find(|&&h| h > *failed_at).copied();
            prop_assert_eq!(next, Some(*failed_at + kth), "failure {} at {:?}: {:?}", i + 1, failed_at, hand_outs);
        }
    }

    /// Every pick is the one the rules give, checked against a model of them over random adds
    /// (new items, raises, re-adds of items in hand), gets, dones and the passing of time: the
    /// oldest item if it is overdue and another priority is ready, else the highest priority's
    /// oldest (ties of time in the order the items became ready).
    ///
    /// With `ticking`, the queue runs on its own clock, ticked by the test after every move of
    /// time as its task ticks it; it ticks every millisecond for these bounds (under 32 ms),
    /// and a pick counts the time as a step after the last tick: an item is overdue once it has
    /// been ready for `max_wait` less a millisecond. Without, the queue reads Tokio's paused
    /// clock.
    #[test]
    fn every_pick_is_the_one_the_rules_give(
        ops in proptest::collection::vec((0u8..4, 0u8..10, -2i32..3, 0u64..40), 1..200),
        max_wait_ms in proptest::option::of(1u64..32),
        ticking in proptest::bool::ANY,
    ) {
        struct Ready { priority: i32, since: u64, seq: u64 }
        let rt = paused_runtime()?;
        rt.block_on(async move {
            let q = PriorityQueue::<u8>::builder()
                .max_wait(max_wait_ms.map(Duration::from_millis))
                .build();
            let tick = || {
                let mut s = q.core.state.lock();
                s.coarse = Some(s.tick(Instant::now()));
            };
            if ticking {
                tick();
            }
            // How much later than the last tick a pick counts the time.
            let ahead = u64::from(ticking);
            let (mut now, mut seq) = (0u64, 0u64);
            let mut ready: HashMap<u8, Ready> = HashMap::new();
            // Items in hand, with the priority of a re-add made meanwhile.
            let mut in_hand: HashMap<u8, Option<i32>> = HashMap::new();
            for (op, k, priority, ms) in ops {
                match op {
                    0 => {
                        q.add_with_priority(k, priority);
                        if let Some(again) = in_hand.get_mut(&k) {
                            *again = Some(again.map_or(priority, |p| p.max(priority)));
                        } else if let Some(r) = ready.get_mut(&k) {
                            r.priority = r.priority.max(priority);
                        } else {
                            seq += 1;
                            ready.insert(k, Ready { priority, since: now, seq });
                        }
                    }
                    1 => {
                        let several = ready.values().map(|r| r.priority).collect::<AHashSet<_>>().len() > 1;
                        let oldest = ready.iter().min_by_key(|(_, r)| (r.since, r.seq));
                        let overdue = oldest.filter(|(_, r)| {
                            several && max_wait_ms.is_some_and(|w| now + ahead - r.since >= w)
                        });
                        let want = overdue
                            .or_else(|| ready.iter().min_by_key(|(_, r)| (std::cmp::Reverse(r.priority), r.since, r.seq)))
                            .map(|(k, r)| (*k, r.priority));
                        let got = q.try_get_with_priority();
                        prop_assert_eq!(got, want, "at {} ms", now);
                        if let Some((k, _)) = got {
                            ready.remove(&k);
                            in_hand.insert(k, None);
                        }
                    }
                    2 => {
                        // `done` of an item in hand (the k-th, in key order), if any.
                        let mut keys: Vec<u8> = in_hand.keys().copied().collect();
                        keys.sort_unstable();
                        if let Some(&k) = keys.get(usize::from(k) % keys.len().max(1)) {
                            q.done(&k);
                            if let Some(Some(priority)) = in_hand.remove(&k) {
                                seq += 1;
                                ready.insert(k, Ready { priority, since: now, seq });
                            }
                        }
                    }
                    _ => {
                        tokio::time::advance(Duration::from_millis(ms)).await;
                        now += ms;
                        if ticking {
                            tick();
                        }
                    }
                }
                prop_assert_eq!(q.len(), ready.len());
                prop_assert_eq!(q.processing(), in_hand.len());
            }
            Ok(())
        })?;
    }

    /// No key is handed to two workers at once, and every add is followed by a hand-out of
    /// its key (as the plain queue's property, with priorities and aging in the mix).
    #[test]
    fn workers_never_share_a_key_and_every_add_is_handed_out(
        ops in proptest::collection::vec((0u8..12, -3i32..3, 0u16..100, 0u8..4), 1..150),
        workers in 1usize..5,
        work_ms in proptest::collection::vec(0u16..30, 1..5),
        max_wait_ms in proptest::option::of(1u64..200),
    ) {
        let rt = paused_runtime()?;
        rt.block_on(async move {
            let q = PriorityQueue::<u8>::builder()
                .max_wait(max_wait_ms.map(Duration::from_millis))
                .rate_limiter(ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_millis(50)))
                .build();
            let seq = Arc::new(AtomicU64::new(0));
            let active = Arc::new(Mutex::new(AHashSet::<u8>::new()));
            let starts = Arc::new(Mutex::new(Vec::<(u8, u64)>::new()));
            let violation = Arc::new(Mutex::new(None::<String>));
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (q, seq, active, starts, violation) =
                        (q.clone(), seq.clone(), active.clone(), starts.clone(), violation.clone());
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
                            tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
                            active.lock().remove(&k);
                            q.done(&k);
                        }
                    })
                })
                .collect();
            let mut last_add: HashMap<u8, u64> = HashMap::new();
            for (k, priority, after, kind) in ops {
                match kind {
                    0 => q.add_with_priority(k, priority),
                    1 => q.add_with(k, AddOptions { priority, after: Duration::from_millis(u64::from(after)), rate_limited: false, reset_backoff: false }),
                    2 => q.add_with(k, AddOptions { priority, after: Duration::ZERO, rate_limited: true, reset_backoff: false }),
                    _ => tokio::time::sleep(Duration::from_millis(u64::from(after))).await,
                }
                if kind < 3 {
                    last_add.insert(k, seq.fetch_add(1, AtomicOrdering::SeqCst));
                }
            }
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
                    "key {} last added at {} was not handed out afterwards: {:?}", k, added, starts
                );
            }
            Ok(())
        })?;
    }
}

/// Producers on threads of their own (as an informer's handlers are) and workers on a
/// multi-threaded runtime: no add is lost, no worker sleeps while items are ready, and no key
/// is handed to two workers at once. The test waits without calling the queue, so that only
/// the producers' adds wake the workers.
#[test]
fn adds_from_other_threads_all_reach_the_workers() {
    const KEYS: u32 = 2_000;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let q = PriorityQueue::<u32>::new();
    let active = Arc::new(Mutex::new(AHashSet::<u32>::new()));
    let seen = Arc::new(Mutex::new(AHashSet::<u32>::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (q, active, seen) = (q.clone(), active.clone(), seen.clone());
            rt.spawn(async move {
                while let Some(k) = q.get().await {
                    assert!(active.lock().insert(k), "key {k} given to two workers");
                    seen.lock().insert(k);
                    tokio::task::yield_now().await;
                    active.lock().remove(&k);
                    q.done(&k);
                }
            })
        })
        .collect();
    let produce = |round: u32| {
        let producers: Vec<_> = (0..2u32)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for k in 0..KEYS {
                        let priority = if (k + p + round).is_multiple_of(3) {
                            LOW_PRIORITY
                        } else {
                            0
                        };
                        q.add_with_priority(k, priority);
                    }
                })
            })
            .collect();
        for p in producers {
            p.join().unwrap_or_else(|_| panic!("a producer panicked"));
        }
    };
    let all_seen = |round: u32| {
        rt.block_on(async {
            let wait = async {
                while seen.lock().len() < KEYS as usize {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            };
            if tokio::time::timeout(Duration::from_secs(30), wait)
                .await
                .is_err()
            {
                panic!(
                    "round {round}: only {} of {KEYS} keys were handed out",
                    seen.lock().len()
                );
            }
        });
    };
    produce(0);
    all_seen(0);
    // Now nothing may be in hand or queued: each add of the second round must be handed out
    // after it was made.
    rt.block_on(async {
        while q.processing() > 0 || !q.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    seen.lock().clear();
    produce(1);
    all_seen(1);
    rt.block_on(async {
        q.shut_down_with_drain().await;
        for w in workers {
            w.await.unwrap_or_else(|e| panic!("worker: {e}"));
        }
    });
    assert_eq!((q.len(), q.processing()), (0, 0));
}

#[test]
fn the_plain_rate_limiting_queue_hands_a_backing_off_key_out_on_an_event() {
    // Why the backoff property needs this queue: client-go's semantics fail it.
    let rt = paused_runtime().unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let q = RateLimitingQueue::<u32>::with_rate_limiter(exp(1000, 60_000));
        q.add_rate_limited(7);
        q.add(7);
        assert_eq!(q.try_get(), Some(7), "handed out before its 1 s backoff");
    });
}
