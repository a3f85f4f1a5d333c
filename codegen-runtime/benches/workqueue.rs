//! Work queue throughput: add + get + done per second for 10,000 distinct keys with 1 and 4
//! workers, beside a plain tokio-mpsc queue with a de-dup set and kube-rs's `scheduler`.
//! `scripts/bench-queue.sh` runs it beside client-go's queues and controller-runtime's priority
//! queue (`scripts/bench/queue/`) in the same run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ahash::AHashSet;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use kube::runtime::scheduler::{ScheduleRequest, scheduler};
use kube_codegen_runtime::workqueue::{LOW_PRIORITY, PriorityQueue, Queue, RateLimitingQueue};
use tokio::sync::Notify;

const KEYS: usize = 10_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// Spawns `workers` tasks running `work` and, once every worker waits for its first item, a
/// task running `add_all` until `n` items were processed; returns the time from the first add
/// to the last `done`.
///
/// A worker counts itself in `started` just before its first `get`, which then waits in the
/// same poll; the short sleep after the last has counted itself covers the Go peer's goroutines,
/// which do the same. Without the wait, some runs began their adds before every worker had run,
/// and a worker's first poll found items ready instead of waiting: a start-up race, not the
/// queue, decided whether the workers were woken or found the adds in flight.
async fn drive<W, F>(
    n: usize,
    workers: usize,
    spawn_worker: W,
    add_all: impl FnOnce() + Send + 'static,
) -> Duration
where
    W: Fn(Arc<AtomicUsize>, Arc<Notify>, Arc<AtomicUsize>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let count = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(Notify::new());
    let started = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            tokio::spawn(spawn_worker(
                count.clone(),
                finished.clone(),
                started.clone(),
            ))
        })
        .collect();
    while started.load(Ordering::Acquire) < workers {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(1)).await;
    let notified = finished.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    let start = Instant::now();
    // The adds run as a task of the runtime, as a controller's event handlers do (and as the
    // Go peer's adding goroutine runs on its GOMAXPROCS threads), not on a third thread that
    // competes with the runtime's two for the machine's two cores.
    let adder = tokio::spawn(async move { add_all() });
    if count.load(Ordering::Acquire) < n {
        notified.await;
    }
    let elapsed = start.elapsed();
    if let Err(e) = adder.await {
        panic!("the adding task: {e}");
    }
    for h in handles {
        h.abort();
    }
    elapsed
}

fn mark(count: &AtomicUsize, finished: &Notify, n: usize) {
    if count.fetch_add(1, Ordering::AcqRel) + 1 == n {
        finished.notify_one();
    }
}

async fn ours(workers: usize) -> Duration {
    let q = Queue::<u64>::new();
    let worker = |count: Arc<AtomicUsize>, finished: Arc<Notify>, started: Arc<AtomicUsize>| {
        let q = q.clone();
        async move {
            started.fetch_add(1, Ordering::Release);
            while let Some(k) = q.get().await {
                q.done(&k);
                mark(&count, &finished, KEYS);
            }
        }
    };
    let adder = q.clone();
    let d = drive(KEYS, workers, worker, move || {
        for k in 0..KEYS as u64 {
            adder.add(k);
        }
    })
    .await;
    q.shut_down();
    d
}

async fn ours_rate_limited(workers: usize) -> Duration {
    let q = RateLimitingQueue::<u64>::new();
    let worker = |count: Arc<AtomicUsize>, finished: Arc<Notify>, started: Arc<AtomicUsize>| {
        let q = q.clone();
        async move {
            started.fetch_add(1, Ordering::Release);
            while let Some(k) = q.get().await {
                q.forget(&k);
                q.done(&k);
                mark(&count, &finished, KEYS);
            }
        }
    };
    let adder = q.clone();
    let d = drive(KEYS, workers, worker, move || {
        for k in 0..KEYS as u64 {
            adder.add(k);
        }
    })
    .await;
    q.shut_down();
    d
}

/// Every other key at the low priority (as a controller's initial list mixed with events),
/// with bounded waiting on (the default).
async fn ours_priority(workers: usize) -> Duration {
    let q = PriorityQueue::<u64>::new();
    let worker = |count: Arc<AtomicUsize>, finished: Arc<Notify>, started: Arc<AtomicUsize>| {
        let q = q.clone();
        async move {
            started.fetch_add(1, Ordering::Release);
            while let Some((k, _)) = q.get_with_priority().await {
                q.forget(&k);
                q.done(&k);
                mark(&count, &finished, KEYS);
            }
        }
    };
    let adder = q.clone();
    let d = drive(KEYS, workers, worker, move || {
        for k in 0..KEYS as u64 {
            if k % 2 == 0 {
                adder.add_with_priority(k, LOW_PRIORITY);
            } else {
                adder.add(k);
            }
        }
    })
    .await;
    q.shut_down();
    d
}

/// The simple peer: an unbounded tokio mpsc channel plus a de-dup set; workers share the
/// receiver behind an async mutex. (No per-key exclusivity: it does less than `Queue`.)
async fn mpsc_dedup(workers: usize) -> Duration {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let dirty = Arc::new(parking_lot::Mutex::new(AHashSet::<u64>::new()));
    let worker = |count: Arc<AtomicUsize>, finished: Arc<Notify>, started: Arc<AtomicUsize>| {
        let (rx, dirty) = (rx.clone(), dirty.clone());
        async move {
            started.fetch_add(1, Ordering::Release);
            loop {
                let k = rx.lock().await.recv().await;
                let Some(k) = k else { return };
                dirty.lock().remove(&k);
                mark(&count, &finished, KEYS);
            }
        }
    };
    let d2 = dirty.clone();
    drive(KEYS, workers, worker, move || {
        for k in 0..KEYS as u64 {
            if d2.lock().insert(k) {
                let _ = tx.send(k);
            }
        }
    })
    .await
}

/// kube-rs's de-duplicating `scheduler` stream (the queue inside `Controller`), one consumer.
async fn kube_scheduler() -> Duration {
    let (tx, rx) = futures::channel::mpsc::unbounded::<ScheduleRequest<u64>>();
    let start = Instant::now();
    let now = tokio::time::Instant::now();
    for k in 0..KEYS as u64 {
        let _ = tx.unbounded_send(ScheduleRequest {
            message: k,
            run_at: now,
        });
    }
    let mut s = std::pin::pin!(scheduler(rx));
    let mut got = 0;
    while got < KEYS {
        if s.next().await.is_none() {
            break;
        }
        got += 1;
    }
    start.elapsed()
}

fn throughput(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("workqueue add+get+done, 10k keys");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.sample_size(20);
    for workers in [1usize, 4] {
        g.bench_function(BenchmarkId::new("kube-codegen Queue", workers), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| rt.block_on(ours(workers))).sum())
        });
        g.bench_function(
            BenchmarkId::new("kube-codegen RateLimitingQueue (+forget)", workers),
            |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| rt.block_on(ours_rate_limited(workers)))
                        .sum()
                })
            },
        );
        g.bench_function(
            BenchmarkId::new("kube-codegen PriorityQueue (+forget)", workers),
            |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| rt.block_on(ours_priority(workers)))
                        .sum()
                })
            },
        );
        g.bench_function(BenchmarkId::new("tokio mpsc + dedup set", workers), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| rt.block_on(mpsc_dedup(workers))).sum())
        });
    }
    g.bench_function(BenchmarkId::new("kube-rs scheduler (1 consumer)", 1), |b| {
        b.iter_custom(|iters| (0..iters).map(|_| rt.block_on(kube_scheduler())).sum())
    });
    g.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
