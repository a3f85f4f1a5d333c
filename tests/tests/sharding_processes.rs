//! Sharding with processes: `crddemo --sharded` replicas (the real binary, each its own
//! process) against the in-memory server ([`FakeApiServer`] served over HTTPS) and against
//! kube-apiserver v1.37.1 ([`RealApiServer`]).
//!
//! One scenario, run against each server:
//!
//! 1. three replicas of one ring; 300 Mydemos all become Ready; each replica's share of the
//!    keys is printed (the spread);
//! 2. SIGKILL one replica and change every Mydemo it owned: the others take its keys over
//!    (their `shard keys admitted` lines) within lease duration + 2 × retry period of the kill
//!    ([`takeover_bound`], plus 1 s for a busy machine's scheduling), and reconcile each of them
//!    (the time to each key's first reconcile, which adds the survivors' queue, is printed);
//! 3. start a fourth replica and change every Mydemo while it joins: keys move to it through
//!    the drain handshake;
//! 4. SIGTERM one replica: it exits 0 and releases its Lease, and the others own its keys
//!    well before its Lease could have expired (the immediate handover).
//!
//! Every replica logs each reconcile's start and end with its identity and key (`reconcile
//! start` / `reconcile end`, JSON); the checker reads all logs and asserts that no two
//! reconcile windows of one key overlap, across replicas, over the whole run (an unfinished
//! window of the killed replica ends at its kill), and prints reconciles per replica, the
//! overlaps (0) and the largest unowned gap (from a kill or stop to the moment the last of the
//! replica's keys was admitted elsewhere).
//!
//! The Lease timings are short (4 s / 3 s / 500 ms) so that the test stays short; the two
//! scenarios run one after the other (a lock), not at once.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_controller_runtime::LeaderElectionConfig;
use kube_controller_runtime::sharding::{
    MEMBERS_ANNOTATION, RING_LABEL, ShardState, takeover_bound,
};
use rustix::process::Signal;
use serde_json::{Value, json};
use tests::apiserver::{Options, RealApiServer, SupervisedProcess, log_tail, wait_crd_established};
use tests::crds::example_crd_file;
use tests::e2e::{Timer, init_tracing, run_id};
use tests::reconcile_log::{self, Window};

/// The Lease timings every replica runs with.
const LEASE_FLAGS: [&str; 3] = [
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=500ms",
];
/// The same timings, for the bound.
fn lease_timings() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
        ..LeaderElectionConfig::default()
    }
}
/// How many Mydemos.
const OBJECTS: usize = 300;
/// What a process on a busy machine may add to the bound: the survivor's rescan and its log
/// line run after the Lease read that ends the wait (CI has 2 cores for the server, four
/// replicas and the test).
const SCHEDULING: Duration = Duration::from_secs(1);
/// How long anything may take to converge.
const CONVERGE: Duration = Duration::from_secs(60);
const CONTROLLER_LOG: &str = "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn";

/// The `crddemo` binary, built once per test process.
fn crddemo_binary() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| tests::e2e::build_bin("example-crddemo", "crddemo")) {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

/// The two scenarios run one after the other: each starts several processes.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One `crddemo --sharded` process, its JSON log in a temporary directory.
struct Replica {
    name: String,
    process: SupervisedProcess,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Replica {
    fn start(name: &str, kubeconfig: &Path, namespace: &str, ring: &str) -> Replica {
        let dir = tempfile::Builder::new()
            .prefix("crddemo-shard.")
            .tempdir()
            .unwrap();
        let log = dir.path().join("crddemo.log");
        let mut args: Vec<OsString> = [
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
            "--workers",
            "2",
            "--log-format",
            "json",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--enable-webhooks=false",
            "--namespace",
            namespace,
            "--sharded",
            "--shard-ring",
            ring,
            "--leader-election-identity",
            name,
        ]
        .iter()
        .map(OsString::from)
        .collect();
        args.extend(LEASE_FLAGS.iter().map(OsString::from));
        let env = [
            (OsString::from("RUST_LOG"), OsString::from(CONTROLLER_LOG)),
            ("NO_COLOR".into(), "1".into()),
        ];
        let process =
            SupervisedProcess::spawn("crddemo", crddemo_binary(), &args, &env, &log).unwrap();
        eprintln!(
            "[sharding] replica {name} pid {} logging to {}",
            process.pid(),
            log.display()
        );
        Replica {
            name: name.into(),
            process,
            log,
            _dir: dir,
        }
    }

    fn entries(&self) -> Vec<Value> {
        reconcile_log::json_lines(&self.log)
    }

    fn assert_running(&mut self) {
        if let Some(status) = self.process.try_wait().unwrap() {
            panic!(
                "replica {} exited ({status}):\n{}",
                self.name,
                log_tail(&self.log)
            );
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "[sharding] replica {} log ({}), last lines:\n{}",
                self.name,
                self.log.display(),
                log_tail(&self.log)
            );
        }
    }
}

fn timestamp(e: &Value) -> jiff::Timestamp {
    reconcile_log::timestamp(e).unwrap_or_else(|err| panic!("{err}"))
}

/// A replica's reconcile windows: each `reconcile start` paired with the same worker's next
/// `reconcile end` (or `shard lease lost: reconcile aborted`).
fn windows(replica: &Replica) -> Vec<Window> {
    let ends = ["reconcile end", "shard lease lost: reconcile aborted"];
    reconcile_log::windows(&replica.entries(), "reconcile start", &ends)
        .unwrap_or_else(|err| panic!("{err}"))
}

/// What the checker found over all replicas' logs.
#[derive(Debug)]
struct Check {
    reconciles: BTreeMap<String, usize>,
    overlaps: Vec<(Window, Window)>,
}

/// Every pair of windows of one key, in start order, must be disjoint; a window that never
/// ended belongs to a killed replica (it ends at the kill) — anything else fails.
fn check(all: &[Window], killed: &BTreeMap<String, jiff::Timestamp>) -> Check {
    let mut by_key: BTreeMap<&str, Vec<&Window>> = BTreeMap::new();
    let mut reconciles = BTreeMap::new();
    for w in all {
        by_key.entry(&w.key).or_default().push(w);
        *reconciles.entry(w.identity.clone()).or_default() += 1;
    }
    let end = |w: &Window| {
        w.end
            .or_else(|| killed.get(&w.identity).copied())
            .unwrap_or_else(|| panic!("a reconcile that never ended: {w:?}"))
    };
    let mut overlaps = Vec::new();
    for ws in by_key.values_mut() {
        ws.sort_by_key(|w| w.start);
        // Against the latest end so far, not just the previous window.
        let mut latest: Option<&Window> = None;
        for w in ws.iter() {
            if let Some(l) = latest
                && end(l) > w.start
            {
                overlaps.push(((*l).clone(), (*w).clone()));
            }
            if latest.is_none_or(|l| end(w) > end(l)) {
                latest = Some(w);
            }
        }
    }
    Check {
        reconciles,
        overlaps,
    }
}

/// The keys (namespace/name) each identity reconciled in `all` at or after `since`.
fn keys_by_identity(all: &[Window], since: jiff::Timestamp) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for w in all.iter().filter(|w| w.start >= since) {
        out.entry(w.identity.clone())
            .or_default()
            .insert(w.key.clone());
    }
    out
}

/// For each of `keys`: the first reconcile start after `after` by someone other than `gone`,
/// as a duration from `after`. Panics naming a key nobody reconciled.
fn takeover_gaps(
    all: &[Window],
    keys: &BTreeSet<String>,
    gone: &str,
    after: jiff::Timestamp,
) -> Vec<Duration> {
    keys.iter()
        .map(|k| {
            let first = all
                .iter()
                .filter(|w| &w.key == k && w.identity != gone && w.start >= after)
                .map(|w| w.start)
                .min()
                .unwrap_or_else(|| panic!("{k} of {gone} was never reconciled by another"));
            Duration::try_from(first.duration_since(after)).unwrap_or_default()
        })
        .collect()
}

/// When the keys of existing objects changed hands: the `shard keys admitted` lines of
/// `replicas` in `[after, until]` that took keys over — the last one's time (the moment the
/// last moved key was owned again) and how many keys they took in all.
fn admissions(
    replicas: &[&Replica],
    after: jiff::Timestamp,
    until: jiff::Timestamp,
) -> (Option<jiff::Timestamp>, u64) {
    let mut last = None;
    let mut taken = 0;
    for r in replicas {
        for e in r.entries() {
            if e["message"] != "shard keys admitted" {
                continue;
            }
            let t = timestamp(&e);
            let newly = e["newly"].as_u64().unwrap_or_default();
            if t >= after && t <= until && newly > 0 {
                taken += newly;
                last = last.max(Some(t));
            }
        }
    }
    (last, taken)
}

fn since(t: jiff::Timestamp, from: jiff::Timestamp) -> Duration {
    Duration::try_from(t.duration_since(from)).unwrap_or_default()
}

fn mydemo(i: usize) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(format!("demo-{i:03}")),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: format!("192.0.2.{}", i % 250 + 1),
            port: 10000 + i as i32,
        },
        status: None,
    }
}

/// Waits until every Mydemo in the namespace is Ready at its current generation.
async fn wait_all_ready(
    client: &kube::Client,
    ns: &str,
    what: &str,
    replicas: &mut [&mut Replica],
) {
    let api: Api<Mydemo> = Api::namespaced(client.clone(), ns);
    let deadline = Instant::now() + CONVERGE;
    loop {
        let list = api.list(&ListParams::default()).await.unwrap();
        let ready = list
            .items
            .iter()
            .filter(|m| {
                let st = m.status.clone().unwrap_or_default();
                st.observed_generation == m.metadata.generation
                    && st
                        .conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
            })
            .count();
        if ready == OBJECTS && list.items.len() == OBJECTS {
            return;
        }
        for r in replicas.iter_mut() {
            r.assert_running();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: only {ready} of {OBJECTS} Mydemos Ready within {CONVERGE:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until the live (ready) shard Leases of `ring` are exactly `members`' and each publishes
/// exactly `members` as the ring it works by.
async fn wait_members(client: &kube::Client, ns: &str, ring: &str, members: &[&str]) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    let want: BTreeSet<String> = members.iter().map(|s| s.to_string()).collect();
    let deadline = Instant::now() + CONVERGE;
    loop {
        let list = leases
            .list(&ListParams::default().labels(&format!("{RING_LABEL}={ring}")))
            .await
            .unwrap();
        let published: BTreeMap<String, BTreeSet<String>> = list
            .items
            .iter()
            .filter(|l| ShardState::of(l, jiff::Timestamp::now()) == ShardState::Ready)
            .map(|l| {
                let members = l
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(MEMBERS_ANNOTATION))
                    .map(|m| {
                        m.split(',')
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default();
                (l.metadata.name.clone().unwrap_or_default(), members)
            })
            .collect();
        let held: BTreeSet<String> = published.keys().cloned().collect();
        if held == want && published.values().all(|m| *m == want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "ring {ring}: members {want:?} not agreed within {CONVERGE:?}: {published:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Changes the port of each Mydemo in `keys` (namespace/name), 16 at a time.
async fn bump_ports(client: &kube::Client, ns: &str, keys: &BTreeSet<String>, by: i32) {
    let demos = Clientset::new(client.clone()).crddemo_v1().mydemos(ns);
    let demos = &demos;
    futures::stream::iter(keys.iter().map(|k| {
        let name = k.rsplit('/').next().unwrap_or_default().to_string();
        async move {
            let m = demos.get(&name, &Default::default()).await.unwrap();
            let port = m.spec.port + by;
            demos
                .patch(
                    &name,
                    &Patch::Merge(json!({"spec": {"port": port}})),
                    &PatchParams::default(),
                )
                .await
                .unwrap();
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<()>>()
    .await;
}

fn spread(keys: &BTreeMap<String, BTreeSet<String>>) -> String {
    keys.iter()
        .map(|(id, ks)| format!("{id}: {} keys", ks.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The scenario against any server: `client` and `kubeconfig` reach it, the CRD is installed.
async fn scenario(server: &str, client: kube::Client, kubeconfig: &Path) {
    let ns = format!("shard-{}", run_id());
    tests::e2e::create_namespace(&client, &ns).await.unwrap();
    let ring = "crddemo-e2e";
    let bound = takeover_bound(&lease_timings());

    // 1. Three replicas agree on the ring; 300 Mydemos.
    let mut a = Replica::start("replica-a", kubeconfig, &ns, ring);
    let mut b = Replica::start("replica-b", kubeconfig, &ns, ring);
    let mut c = Replica::start("replica-c", kubeconfig, &ns, ring);
    wait_members(&client, &ns, ring, &["replica-a", "replica-b", "replica-c"]).await;
    let t_create = jiff::Timestamp::now();
    let demos = Clientset::new(client.clone()).crddemo_v1().mydemos(&ns);
    let demos = &demos;
    futures::stream::iter((0..OBJECTS).map(|i| async move {
        demos
            .create(&mydemo(i), &PostParams::default())
            .await
            .unwrap();
    }))
    .buffer_unordered(16)
    .collect::<Vec<()>>()
    .await;
    let created = Instant::now();
    wait_all_ready(
        &client,
        &ns,
        "three replicas",
        &mut [&mut a, &mut b, &mut c],
    )
    .await;
    eprintln!(
        "[sharding] {server}: {OBJECTS} Mydemos Ready {:.2?} after the last create",
        created.elapsed()
    );
    let all = [windows(&a), windows(&b), windows(&c)].concat();
    let phase1 = keys_by_identity(&all, t_create);
    eprintln!(
        "[sharding] {server}: three replicas' shares: {}",
        spread(&phase1)
    );
    let union: BTreeSet<&String> = phase1.values().flatten().collect();
    assert_eq!(union.len(), OBJECTS, "every Mydemo reconciled");
    assert_eq!(phase1.len(), 3, "every replica reconciled some: {phase1:?}");
    for (id, ks) in &phase1 {
        // 100 virtual nodes: each share within a factor of two of a third.
        assert!(
            ks.len() >= OBJECTS / 6 && ks.len() <= OBJECTS * 2 / 3,
            "{id}'s share {} of {OBJECTS}",
            ks.len()
        );
    }
    let disjoint: usize = phase1.values().map(BTreeSet::len).sum();
    assert_eq!(
        disjoint, OBJECTS,
        "a key reconciled by two replicas: {phase1:?}"
    );

    // 2. SIGKILL c, change each of its Mydemos: a and b take them over.
    let c_keys = phase1["replica-c"].clone();
    let killed_at = jiff::Timestamp::now();
    c.process.signal(Signal::KILL).unwrap();
    c.process.wait_timeout(CONVERGE).await.unwrap();
    bump_ports(&client, &ns, &c_keys, 1).await;
    wait_all_ready(&client, &ns, "after the SIGKILL", &mut [&mut a, &mut b]).await;
    wait_members(&client, &ns, ring, &["replica-a", "replica-b"]).await;
    let (owned_at, taken) = admissions(&[&a, &b], killed_at, jiff::Timestamp::now());
    let kill_owned = since(
        owned_at.expect("the survivors took no keys over"),
        killed_at,
    );
    let all = [windows(&a), windows(&b), windows(&c)].concat();
    let kill_gaps = takeover_gaps(&all, &c_keys, "replica-c", killed_at);
    let kill_first = kill_gaps.iter().min().copied().unwrap_or_default();
    let kill_last = kill_gaps.iter().max().copied().unwrap_or_default();
    eprintln!(
        "[sharding] {server}: SIGKILL → its {} keys owned by the survivors after {kill_owned:.2?} (bound {bound:?}); first reconciled after {kill_first:.2?}, the last after {kill_last:.2?} (queued behind each other)",
        c_keys.len()
    );
    // A survivor may briefly pause its own keys while it publishes the new member list (and
    // admit them again): at least the dead replica's keys are taken.
    assert!(
        taken >= c_keys.len() as u64,
        "the survivors took {taken} keys, the killed replica had {}",
        c_keys.len()
    );
    assert!(
        kill_owned <= bound + SCHEDULING,
        "the killed replica's keys were unowned for {kill_owned:?} (bound {bound:?} + {SCHEDULING:?})"
    );

    // 3. A fourth replica joins while every Mydemo changes: keys move to it by the drain.
    let joined_at = jiff::Timestamp::now();
    let mut d = Replica::start("replica-d", kubeconfig, &ns, ring);
    let everything: BTreeSet<String> = (0..OBJECTS).map(|i| format!("{ns}/demo-{i:03}")).collect();
    bump_ports(&client, &ns, &everything, 1).await;
    wait_members(&client, &ns, ring, &["replica-a", "replica-b", "replica-d"]).await;
    wait_all_ready(
        &client,
        &ns,
        "with the fourth replica",
        &mut [&mut a, &mut b, &mut d],
    )
    .await;
    let members_at = jiff::Timestamp::now();
    // Once agreed, one more change of everything: only the new owners reconcile.
    bump_ports(&client, &ns, &everything, 1).await;
    wait_all_ready(
        &client,
        &ns,
        "with the fourth replica",
        &mut [&mut a, &mut b, &mut d],
    )
    .await;
    let all = [windows(&a), windows(&b), windows(&c), windows(&d)].concat();
    let phase3 = keys_by_identity(&all, members_at);
    eprintln!(
        "[sharding] {server}: after the join ({} keys reconciled by d since it started): {}",
        keys_by_identity(&all, joined_at)
            .get("replica-d")
            .map_or(0, BTreeSet::len),
        spread(&phase3)
    );
    let d_keys = phase3.get("replica-d").cloned().unwrap_or_default();
    assert!(!d_keys.is_empty(), "the new replica owns no keys");
    let moved = d_keys
        .iter()
        .filter(|k| phase1["replica-a"].contains(*k) || phase1["replica-b"].contains(*k))
        .count();
    assert!(moved > 0, "no key moved from a or b to d");
    let disjoint: usize = phase3.values().map(BTreeSet::len).sum();
    assert_eq!(
        disjoint, OBJECTS,
        "a key reconciled by two replicas: {phase3:?}"
    );

    // 4. SIGTERM a: it exits 0, releasing its Lease; b and d take its keys over at once.
    let a_keys = phase3["replica-a"].clone();
    let termed_at = jiff::Timestamp::now();
    a.process.signal(Signal::TERM).unwrap();
    bump_ports(&client, &ns, &a_keys, 1).await;
    let status = a.process.wait_timeout(CONVERGE).await.unwrap();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "replica-a's exit status"
    );
    wait_all_ready(&client, &ns, "after the SIGTERM", &mut [&mut b, &mut d]).await;
    let (owned_at, taken) = admissions(&[&b, &d], termed_at, jiff::Timestamp::now());
    let term_owned = since(
        owned_at.expect("nobody took the stopped replica's keys"),
        termed_at,
    );
    let all = [windows(&a), windows(&b), windows(&c), windows(&d)].concat();
    let term_gaps = takeover_gaps(&all, &a_keys, "replica-a", termed_at);
    let term_first = term_gaps.iter().min().copied().unwrap_or_default();
    let term_last = term_gaps.iter().max().copied().unwrap_or_default();
    eprintln!(
        "[sharding] {server}: SIGTERM → its {} keys owned by the others after {term_owned:.2?} (its Lease would have expired after {:?}); first reconciled after {term_first:.2?}, the last after {term_last:.2?}",
        a_keys.len(),
        lease_timings().lease_duration
    );
    assert!(
        taken >= a_keys.len() as u64,
        "the others took {taken} keys, the stopped replica had {}",
        a_keys.len()
    );
    assert!(
        term_owned < lease_timings().lease_duration,
        "a graceful stop handed over only after {term_owned:?}: not before the Lease expired"
    );

    // Stop the rest gracefully, then check every window of the run.
    for r in [&mut b, &mut d] {
        r.process.signal(Signal::TERM).unwrap();
        let status = r.process.wait_timeout(CONVERGE).await.unwrap();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "{}'s exit status",
            r.name
        );
    }
    let all = [windows(&a), windows(&b), windows(&c), windows(&d)].concat();
    let killed = BTreeMap::from([("replica-c".to_string(), killed_at)]);
    let found = check(&all, &killed);
    let max_gap = kill_owned.max(term_owned);
    eprintln!(
        "[sharding] {server}: checker: reconciles per replica {:?}, {} windows, overlaps {}, max unowned gap {max_gap:.2?} (SIGKILL {kill_owned:.2?}, SIGTERM {term_owned:.2?}; bound {bound:?})",
        found.reconciles,
        all.len(),
        found.overlaps.len()
    );
    assert!(
        found.overlaps.is_empty(),
        "overlapping reconciles of one key: {:#?}",
        found.overlaps
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_replicas_on_the_in_memory_server() {
    let _one = ONE_AT_A_TIME.lock().await;
    let _timer = Timer::new("sharded_replicas_on_the_in_memory_server");
    init_tracing();
    tokio::task::spawn_blocking(crddemo_binary).await.unwrap();
    let server = FakeApiServer::builder()
        .manifests(example_crd_file())
        .unwrap()
        .build()
        .unwrap();
    let served = server.serve(([127, 0, 0, 1], 0).into()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    served.write_kubeconfig(&kubeconfig).unwrap();
    let client = served.client().await.unwrap();
    scenario("in-memory server", client, &kubeconfig).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_replicas_on_kube_apiserver() {
    let _one = ONE_AT_A_TIME.lock().await;
    let _timer = Timer::new("sharded_replicas_on_kube_apiserver");
    init_tracing();
    tokio::task::spawn_blocking(crddemo_binary).await.unwrap();
    let server = RealApiServer::start_with(Options::default()).await.unwrap();
    server.kubectl_apply(&example_crd_file()).await.unwrap();
    let client = server.client().unwrap();
    wait_crd_established(&client, "mydemos.crddemo.k8s.io")
        .await
        .unwrap();
    scenario("kube-apiserver", client, server.kubeconfig_path()).await;
}
