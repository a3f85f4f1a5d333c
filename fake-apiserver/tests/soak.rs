//! Load: 50 writers and 20 watchers on one kind for 30 s (`KUBE_FAKE_SOAK_SECS` changes it),
//! over HTTPS on loopback. Every watcher must see every event in resourceVersion order, no
//! acknowledged write may be lost, and a watcher whose client stops reading is cut with a 410
//! instead of being buffered without bound. Prints the figures.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube_fake_apiserver::FakeApiServer;
use serde_json::json;

const WRITERS: usize = 50;
const WATCHERS: usize = 20;
const NS: &str = "soak";

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn count_of(cm: &ConfigMap) -> u64 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("count"))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn rv(cm: &ConfigMap) -> u64 {
    cm.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// What one watcher saw: per object, the counts in order; and whether rvs only increased.
#[derive(Debug, Default)]
struct Seen {
    events: usize,
    ordered: bool,
    last_count: BTreeMap<String, u64>,
    other: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_writers_twenty_watchers_and_a_slow_one() {
    let secs: u64 = std::env::var("KUBE_FAKE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    // A reading watcher is never cut: on a loaded 2-core runner the 50 writers and the server
    // can keep a watcher's task unscheduled for seconds, so the cut waits long enough that only
    // a client that stopped reading meets it.
    let server = ok(FakeApiServer::builder()
        .history_capacity(200_000)
        .slow_watcher_timeout(Duration::from_secs(15))
        .max_recorded_actions(0)
        .build());
    let handle = server.handle();
    let served = ok(server.serve(([127, 0, 0, 1], 0).into()).await);
    let client = ok(served.client().await);
    let rss_start = rss_kib();
    let ns: Namespace = ok(serde_json::from_value(json!({"metadata": {"name": NS}})));
    ok(Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let start_rv = handle.resource_version().to_string();

    // Watchers, from before the first write.
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let cms = cms.clone();
        let from = start_rv.clone();
        watchers.push(tokio::spawn(async move {
            let mut seen = Seen {
                ordered: true,
                ..Seen::default()
            };
            let mut last_rv = 0u64;
            let mut stream =
                ok(cms.watch(&WatchParams::default().timeout(290), &from).await).boxed();
            let mut expected: Option<usize> = None;
            while let Some(ev) = stream.next().await {
                match ok(ev) {
                    WatchEvent::Added(cm) | WatchEvent::Modified(cm) => {
                        let r = rv(&cm);
                        seen.ordered &= r > last_rv;
                        last_rv = r;
                        seen.events += 1;
                        let name = cm.metadata.name.clone().unwrap_or_default();
                        if name == "stop" {
                            expected = cm
                                .data
                                .as_ref()
                                .and_then(|d| d.get("events"))
                                .and_then(|e| e.parse().ok());
                        } else {
                            seen.last_count.insert(name, count_of(&cm));
                        }
                    }
                    // Bookmarks (every 60 s) carry no object change.
                    WatchEvent::Bookmark(_) => {}
                    other => seen.other.push(format!("{other:?}")),
                }
                if expected.is_some_and(|e| seen.events >= e) {
                    break;
                }
            }
            seen
        }));
    }

    // A watcher whose client never reads: its stream is held, not polled.
    let slow_stream = ok(cms.watch(&WatchParams::default(), &start_rv).await);

    // Writers: each owns a ConfigMap and increments its counter with optimistic concurrency.
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut writers = Vec::new();
    for i in 0..WRITERS {
        let cms = cms.clone();
        writers.push(tokio::spawn(async move {
            let name = format!("w-{i}");
            let cm: ConfigMap = ok(serde_json::from_value(
                json!({"metadata": {"name": name}, "data": {"count": "0"}}),
            ));
            ok(cms.create(&PostParams::default(), &cm).await);
            let (mut acked, mut conflicts) = (0u64, 0u64);
            while Instant::now() < deadline {
                let mut cur = ok(cms.get(&name).await);
                let next = count_of(&cur) + 1;
                cur.data
                    .get_or_insert_with(Default::default)
                    .insert("count".into(), next.to_string());
                match cms.replace(&name, &PostParams::default(), &cur).await {
                    Ok(_) => acked += 1,
                    Err(kube::Error::Api(s)) if s.code == 409 => conflicts += 1,
                    Err(e) => panic!("write {name}: {e}"),
                }
            }
            (name, acked, conflicts)
        }));
    }
    let mut acked = BTreeMap::new();
    let mut conflicts = 0;
    for w in writers {
        let (name, n, c) = ok(w.await);
        acked.insert(name, n);
        conflicts += c;
    }
    let total_acked: u64 = acked.values().sum();
    // Every create and acknowledged update is one event; a last object says how many.
    let events = WRITERS as u64 + total_acked + 1;
    let stop: ConfigMap = ok(serde_json::from_value(
        json!({"metadata": {"name": "stop"}, "data": {"events": events.to_string()}}),
    ));
    ok(cms.create(&PostParams::default(), &stop).await);

    // No acknowledged write is lost.
    for (name, n) in &acked {
        let stored = ok(cms.get(name).await);
        assert_eq!(
            count_of(&stored),
            *n,
            "{name}: stored count vs acknowledged writes"
        );
    }
    // Every watcher saw every event, in order.
    let seen_all = Instant::now();
    for w in watchers {
        let seen = ok(tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .map_err(|_| "a watcher did not finish"));
        let seen = ok(seen);
        assert!(seen.other.is_empty(), "unexpected events: {:?}", seen.other);
        assert!(seen.ordered, "events out of resourceVersion order");
        assert_eq!(seen.events as u64, events, "events seen by a watcher");
        for (name, n) in &acked {
            assert_eq!(
                seen.last_count.get(name),
                Some(n),
                "{name}: last count a watcher saw"
            );
        }
    }
    let drain = seen_all.elapsed();

    // The slow watcher was cut with a 410 rather than buffered: large events fill whatever
    // the socket buffers hold first.
    let ballast = "x".repeat(64 * 1024);
    let cut_deadline = Instant::now() + Duration::from_secs(60);
    let mut ballast_writes = 0;
    while handle.slow_watchers_cut() == 0 && Instant::now() < cut_deadline {
        let cm: ConfigMap = ok(serde_json::from_value(
            json!({"metadata": {"name": "ballast"},
            "data": {"n": ballast_writes.to_string(), "x": ballast}}),
        ));
        if ballast_writes == 0 {
            ok(cms.create(&PostParams::default(), &cm).await);
        } else {
            ok(cms.replace("ballast", &PostParams::default(), &cm).await);
        }
        ballast_writes += 1;
        if ballast_writes % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    assert!(
        handle.slow_watchers_cut() >= 1,
        "the slow watcher was not cut"
    );
    let slow: Vec<WatchEvent<ConfigMap>> = ok(ok(tokio::time::timeout(
        Duration::from_secs(60),
        slow_stream.try_collect::<Vec<_>>(),
    )
    .await
    .map_err(|_| "the slow watcher's stream did not end")));
    match slow.last() {
        Some(WatchEvent::Error(e)) => assert_eq!(e.code, 410, "{e:?}"),
        other => panic!("the slow watcher's stream must end with a 410: {other:?}"),
    }
    let rss_end = rss_kib();
    println!(
        "soak: {secs} s, {WRITERS} writers, {WATCHERS} watchers: {total_acked} writes acknowledged \
         ({:.0}/s), {conflicts} conflicts, {events} events seen in order by every watcher \
         (last ones {drain:?} after the writers stopped); slow watcher cut after {} buffered \
         events ({ballast_writes} 64 KiB writes); RSS {} MiB -> {} MiB",
        total_acked as f64 / secs as f64,
        slow.len().saturating_sub(1),
        rss_start / 1024,
        rss_end / 1024
    );
    served.shutdown().await;
}
