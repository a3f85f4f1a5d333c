//! Sharding between managers sharing one fake API server: three replicas split 300 objects,
//! every reconcile's start and end is logged with the replica and key and a checker asserts
//! that no two windows of one key overlap; a replica that dies (its task aborted, its Lease
//! left to expire) has its keys reconciled by the others within the takeover bound; a graceful
//! stop hands over at once; a new replica takes keys over with the drain; a leader-election
//! runnable runs on one replica beside the sharded controllers.
//!
//! Timings are short (lease 3 s, renew deadline 2 s, retry period 0.5 s). The figures are
//! printed (run with `--nocapture`), bounds asserted loosely: they are invariants, not
//! performance.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{eventually, fake, init_tracing};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use kube_controller_runtime::sharding::{ShardingConfig, takeover_bound};
use kube_controller_runtime::{
    Action, Context, Controller, LeaderElectionConfig, Manager, ManagerError, Request, RunnableFn,
};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const OBJECTS: usize = 300;

fn timings() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(500),
        release_on_cancel: true,
    }
}

/// One reconcile: which shard, which object, when it started and ended.
#[derive(Debug, Clone)]
struct Window {
    shard: String,
    name: String,
    start: Instant,
    end: Instant,
}

type Log = Arc<Mutex<Vec<Window>>>;

struct Replica {
    name: String,
    mgr: Manager,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<Result<(), ManagerError>>>,
}

fn replica(
    client: &kube::Client,
    name: &str,
    log: &Log,
    leader_ticks: &Arc<AtomicUsize>,
) -> Replica {
    let mut sharding = ShardingConfig::new("demo");
    sharding.lease_namespace = Some("kube-system".into());
    sharding.shard_name = Some(name.into());
    sharding.lease = timings();
    let t = timings();
    let mgr = Manager::builder(client.clone())
        .leader_election_id("demo-leader")
        .leader_election_namespace("kube-system")
        .leader_election_identity(name)
        .lease_duration(t.lease_duration)
        .renew_deadline(t.renew_deadline)
        .retry_period(t.retry_period)
        .sharding(sharding)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (log, client, shard) = (log.clone(), mgr.client(), name.to_string());
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(4)
        .complete(move |req: Request, _ctx: Context| {
            let (log, client, shard) = (log.clone(), client.clone(), shard.clone());
            async move {
                let start = Instant::now();
                tokio::time::sleep(Duration::from_millis(20)).await;
                let api = Api::<ConfigMap>::namespaced(client, "ns");
                let patch =
                    serde_json::json!({"metadata": {"annotations": {"reconciled-by": shard}}});
                let r = api
                    .patch(&req.name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await;
                log.lock().push(Window {
                    shard,
                    name: req.name.clone(),
                    start,
                    end: Instant::now(),
                });
                match r {
                    Ok(_) => Ok(Action::done()),
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(Action::done()),
                    Err(e) => Err(e),
                }
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let ticks = leader_ticks.clone();
    mgr.add(RunnableFn::new(move |shutdown| async move {
        ticks.fetch_add(1, Ordering::SeqCst);
        shutdown.cancelled().await;
        Ok(())
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let mut r = Replica {
        name: name.to_string(),
        mgr,
        stop: CancellationToken::new(),
        task: None,
    };
    let token = r.stop.clone();
    r.task = Some(tokio::spawn(
        r.mgr.clone().start(async move { token.cancelled().await }),
    ));
    r
}

/// The checker: every key's windows, sorted by start, must not overlap. Returns the number of
/// windows checked.
fn assert_no_overlap(log: &Log) -> usize {
    let mut by_key: HashMap<String, Vec<Window>> = HashMap::new();
    for w in log.lock().iter() {
        by_key.entry(w.name.clone()).or_default().push(w.clone());
    }
    let mut n = 0;
    for (key, mut ws) in by_key {
        ws.sort_by_key(|w| w.start);
        for pair in ws.windows(2) {
            assert!(
                pair[1].start >= pair[0].end,
                "{key} reconciled by {} and {} at once",
                pair[0].shard,
                pair[1].shard
            );
        }
        n += ws.len();
    }
    n
}

/// Who reconciled each object last, from the API server.
async fn owners(client: &kube::Client) -> BTreeMap<String, String> {
    Api::<ConfigMap>::namespaced(client.clone(), "ns")
        .list(&Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .items
        .into_iter()
        .filter_map(|cm| {
            let by = cm.metadata.annotations?.get("reconciled-by")?.clone();
            Some((cm.metadata.name?, by))
        })
        .collect()
}

async fn touch(client: &kube::Client, names: &[String], round: usize) {
    let api = Api::<ConfigMap>::namespaced(client.clone(), "ns");
    for n in names {
        let patch = serde_json::json!({"data": {"round": round.to_string()}});
        api.patch(n, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn reconciled_after(
    log: &Log,
    names: &[String],
    since: Instant,
) -> Option<(Instant, BTreeMap<String, usize>)> {
    let log = log.lock();
    let mut last = since;
    let mut by = BTreeMap::new();
    for n in names {
        let w = log
            .iter()
            .filter(|w| &w.name == n && w.start > since)
            .min_by_key(|w| w.end)?;
        last = last.max(w.end);
        *by.entry(w.shard.clone()).or_default() += 1;
    }
    Some((last, by))
}

fn spread(owners: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for s in owners.values() {
        *by.entry(s.clone()).or_default() += 1;
    }
    by
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_split_the_objects_hand_over_without_overlap_and_take_over_a_dead_ones_keys()
{
    init_tracing();
    let (client, _handle) = fake();
    let log: Log = Arc::default();
    let leader_ticks = Arc::new(AtomicUsize::new(0));
    let mut replicas: Vec<Replica> = ["shard-a", "shard-b", "shard-c"]
        .iter()
        .map(|n| replica(&client, n, &log, &leader_ticks))
        .collect();
    let api = Api::<ConfigMap>::namespaced(client.clone(), "ns");
    let names: Vec<String> = (0..OBJECTS).map(|i| format!("demo-{i:03}")).collect();
    for n in &names {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(n.clone()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }

    // 1. Every object reconciled; each replica roughly a third.
    let started = Instant::now();
    let mut all = BTreeMap::new();
    for _ in 0..600 {
        all = owners(&client).await;
        if all.len() == OBJECTS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(all.len(), OBJECTS, "objects reconciled: {}", all.len());
    let by = spread(&all);
    println!(
        "300 objects reconciled in {:?}; spread {by:?}",
        started.elapsed()
    );
    assert_eq!(by.len(), 3, "{by:?}");
    for (shard, n) in &by {
        assert!(
            (50..=150).contains(n),
            "{shard} reconciled {n} of {OBJECTS}"
        );
    }
    for r in &replicas {
        assert!(
            r.mgr.shard().is_some_and(|s| s.holds_lease()),
            "{} holds its shard lease",
            r.name
        );
        let metrics = r.mgr.metrics().encode();
        assert!(
            metrics.contains("shard_ring_members{ring=\"demo\"} 3"),
            "{metrics}"
        );
        assert!(metrics.contains("shard_owned_keys{"), "{metrics}");
        assert!(
            metrics.contains("shard_handovers_total{ring=\"demo\"}"),
            "{metrics}"
        );
    }
    eventually(
        "the leader-election runnable runs on one replica",
        10,
        || (leader_ticks.load(Ordering::SeqCst) == 1).then_some(()),
    )
    .await;

    // 2. A dead replica (task aborted: nothing renews, nothing is released).
    let dead = replicas.remove(0);
    let dead_keys: Vec<String> = all
        .iter()
        .filter(|(_, s)| **s == dead.name)
        .map(|(n, _)| n.clone())
        .collect();
    if let Some(t) = &dead.task {
        t.abort();
    }
    let killed = Instant::now();
    touch(&client, &dead_keys, 1).await;
    let bound = takeover_bound(&timings());
    let (last, by) = loop {
        if let Some(done) = reconciled_after(&log, &dead_keys, killed) {
            break done;
        }
        assert!(
            killed.elapsed() < bound + Duration::from_secs(10),
            "{} of {}'s keys not reconciled {:?} after it died",
            dead_keys.len(),
            dead.name,
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let took = last - killed;
    println!(
        "{} died: its {} keys reconciled by {by:?} within {took:?} (bound: lease + 2 × retry = {bound:?})",
        dead.name,
        dead_keys.len()
    );
    assert!(!by.contains_key(&dead.name));
    assert!(took < bound + Duration::from_secs(5), "{took:?}");

    // 3. A fourth replica: keys move to it through the drain, without any object changing.
    let before_join = Instant::now();
    replicas.push(replica(&client, "shard-d", &log, &leader_ticks));
    let joined: usize = eventually("shard-d reconciles its keys", 30, || {
        let n = log
            .lock()
            .iter()
            .filter(|w| w.shard == "shard-d" && w.start > before_join)
            .map(|w| w.name.clone())
            .collect::<std::collections::HashSet<_>>()
            .len();
        (n >= 60).then_some(n)
    })
    .await;
    println!(
        "shard-d joined: reconciled {joined} keys handed over to it in {:?}",
        before_join.elapsed()
    );

    // 4. A graceful stop hands over at once.
    let leaving = replicas.remove(0);
    let leaving_name = leaving.name.clone();
    let theirs: Vec<String> = owners(&client)
        .await
        .into_iter()
        .filter(|(_, s)| *s == leaving_name)
        .map(|(n, _)| n)
        .collect();
    leaving.stop.cancel();
    let stopped = Instant::now();
    if let Some(t) = leaving.task {
        t.await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    touch(&client, &theirs, 2).await;
    let (last, by) = loop {
        if let Some(done) = reconciled_after(&log, &theirs, stopped) {
            break done;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(20),
            "{leaving_name}'s keys not taken over"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!(
        "{leaving_name} stopped gracefully: its {} keys reconciled by {by:?} within {:?}",
        theirs.len(),
        last - stopped
    );
    assert!(!by.contains_key(&leaving_name));

    // 5. Everything still reconciled, and never two windows of one key at once.
    let since = Instant::now();
    touch(&client, &names, 3).await;
    eventually("every object reconciled after the changes", 60, || {
        reconciled_after(&log, &names, since).map(|_| ())
    })
    .await;
    let final_spread = spread(&owners(&client).await);
    println!("final spread over the two replicas left: {final_spread:?}");
    let windows = assert_no_overlap(&log);
    println!("overlap checker: {windows} reconcile windows over {OBJECTS} keys, 0 overlapping");
    for r in replicas {
        r.stop.cancel();
        if let Some(t) = r.task {
            let _ = t.await;
        }
    }
}
