//! The run's thread pool: one worker per core, taking work items by index until none are left
//! (or a failure stops them), results handed back in order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many workers to run for `items` work items: one per core, at most one per item.
pub(super) fn workers(items: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(items).max(1)
}

/// Runs `f` over `0..n` on `workers` threads (in this thread when one), results in order.
/// `f` gets the index; a worker stops taking items once `stop` is set.
pub(super) fn parallel<T: Send>(
    n: usize,
    workers: usize,
    stop: &AtomicBool,
    f: &(dyn Fn(usize) -> T + Sync),
) -> Vec<Option<T>> {
    if workers <= 1 {
        return (0..n)
            .map(|i| (!stop.load(Ordering::Relaxed)).then(|| f(i)))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n || stop.load(Ordering::Relaxed) {
                            break;
                        }
                        mine.push((i, f(i)));
                    }
                    mine
                })
            })
            .collect();
        for h in handles {
            // A worker only panics on a bug; pass the panic on rather than hide it.
            let mine = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            for (i, t) in mine {
                out[i] = Some(t);
            }
        }
    });
    out
}
