//! Coordinated leader election (KEP-4355) through `LeaderElector::coordinated`, on the
//! in-memory server (with its `coordinatedleaderelection` controller) and on kube-apiserver
//! v1.37.1 started with `--feature-gates=CoordinatedLeaderElection=true` and
//! `--runtime-config=coordination.k8s.io/v1beta1=true`.
//!
//! Three candidates of one Lease, in the order they start: `b` (binary 1.36.0, emulation
//! 1.36.0), `c` (1.37.0, 1.36.0: the same emulation version, a higher binary version, so worse
//! than `b`) and `a` (1.37.0, emulation 1.35.0: the best). `b` leads first; `c` changes
//! nothing; `a`'s arrival makes the server name it `preferredHolder`, `b` stops renewing and
//! the server hands the Lease to `a` once it has run out; when `a` stops, `b` leads again.
//! A monitor samples every elector's `is_leader` and the Lease every 50 ms: never two leaders,
//! and a leader is always the Lease's holder. A watch records every version of the Lease, so
//! what the server itself wrote (creation, end of term, hand-over) is compared between the
//! servers, with the order of leaders and which candidates were pinged.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::coordination::v1beta1::LeaseCandidate;
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube_codegen_runtime::fake::{Controller, FakeApiServer};
use kube_controller_runtime::leaderelection::{
    CoordinatedConfig, LeaderElectionConfig, LeaderElector, LeaseLock, RenewOutcome,
};
use tests::apiserver::{Options, RealApiServer};
use tests::e2e::init_tracing;
use tokio_util::sync::CancellationToken;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

const NAMESPACE: &str = "default";
const LEASE: &str = "coordinated-demo";

/// Short terms, so that the scenario takes seconds: a Lease written by a leader runs out 4 s
/// after its last renewal.
fn timings() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
        ..LeaderElectionConfig::default()
    }
}

struct Candidate {
    elector: LeaderElector,
    stop: CancellationToken,
}

/// A replica: acquires, renews, and after losing its term campaigns again until stopped.
fn start(client: &kube::Client, id: &str, binary: &str, emulation: &str) -> Candidate {
    let lock = LeaseLock::new(client.clone(), NAMESPACE, LEASE, id);
    let elector = ok(LeaderElector::coordinated(
        lock,
        timings(),
        CoordinatedConfig::oldest_emulation_version(binary, emulation),
    ));
    let stop = CancellationToken::new();
    let (e, cancel) = (elector.clone(), stop.clone());
    tokio::spawn(async move {
        while e.acquire(&cancel).await {
            match e.renew(&cancel).await {
                RenewOutcome::Cancelled => break,
                RenewOutcome::Lost(why) => {
                    tracing::info!(identity = %e.lock().identity(), %why, "lost; campaigning again")
                }
            }
        }
    });
    Candidate { elector, stop }
}

#[derive(Default)]
struct Observed {
    /// Who led, in order (consecutive repeats dropped).
    leaders: Vec<String>,
    max_leaders: usize,
    /// Samples where a leader was not the Lease's holder.
    mismatches: Vec<String>,
}

async fn wait_for(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn text(v: Option<&str>) -> String {
    v.unwrap_or("<none>").to_string()
}

/// Runs the scenario against `client`; what the servers should agree on, by step.
async fn scenario(client: kube::Client) -> BTreeMap<String, String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    // Every version of the Lease, from before it exists.
    let versions: Arc<Mutex<Vec<Lease>>> = Arc::default();
    // The candidates start once the server has answered the watch: before that, the server's
    // first version of the Lease could be written, renewed and missed.
    let (watching, watch_open) = tokio::sync::oneshot::channel::<()>();
    let watch = {
        let (leases, versions) = (leases.clone(), versions.clone());
        tokio::spawn(async move {
            let wp = WatchParams::default()
                .fields(&format!("metadata.name={LEASE}"))
                .timeout(280);
            let mut stream = ok(leases.watch(&wp, "0").await).boxed();
            let _ = watching.send(());
            while let Some(ev) = stream.next().await {
                if let Ok(WatchEvent::Added(l) | WatchEvent::Modified(l)) = ev {
                    versions.lock().unwrap().push(l);
                }
            }
        })
    };
    let all: Arc<Mutex<Vec<(String, LeaderElector)>>> = Arc::default();
    let observed: Arc<Mutex<Observed>> = Arc::default();
    let monitor = {
        let (all, observed, leases) = (all.clone(), observed.clone(), leases.clone());
        tokio::spawn(async move {
            loop {
                let leading: Vec<String> = all
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(_, e)| e.is_leader())
                    .map(|(id, _)| id.clone())
                    .collect();
                let holder = leases
                    .get_opt(LEASE)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|l| l.spec.and_then(|s| s.holder_identity));
                // Still leading after the read: the read saw its term.
                let still: Vec<String> = all
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(id, e)| leading.contains(id) && e.is_leader())
                    .map(|(id, _)| id.clone())
                    .collect();
                {
                    let mut o = observed.lock().unwrap();
                    o.max_leaders = o.max_leaders.max(leading.len());
                    if let [one] = still.as_slice()
                        && holder.as_deref() != Some(one.as_str())
                    {
                        o.mismatches
                            .push(format!("{one} leads, the Lease names {holder:?}"));
                    }
                    if let [one] = leading.as_slice()
                        && o.leaders.last() != Some(one)
                    {
                        o.leaders.push(one.clone());
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    ok(watch_open.await);
    let limit = Duration::from_secs(60);
    let add = |c: &Candidate, id: &str| all.lock().unwrap().push((id.into(), c.elector.clone()));

    let b = start(&client, "b", "1.36.0", "1.36.0");
    add(&b, "b");
    wait_for("b to lead", limit, || b.elector.is_leader()).await;
    let c = start(&client, "c", "1.37.0", "1.36.0");
    add(&c, "c");
    // c is worse than b: b keeps leading through the next election steps.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(b.elector.is_leader() && !c.elector.is_leader());
    let a = start(&client, "a", "1.37.0", "1.35.0");
    add(&a, "a");
    wait_for("a to lead", limit, || a.elector.is_leader()).await;
    assert_eq!(b.elector.end_of_term().as_deref(), Some("a"));
    a.stop.cancel();
    wait_for("b to lead again", limit, || b.elector.is_leader()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    monitor.abort();
    watch.abort();
    for x in [&b, &c] {
        x.stop.cancel();
    }

    let observed = std::mem::take(&mut *observed.lock().unwrap());
    let versions = versions.lock().unwrap().clone();
    let mut out = BTreeMap::new();
    out.insert("leaders in order".into(), observed.leaders.join(","));
    out.insert(
        "most leaders at once".into(),
        observed.max_leaders.to_string(),
    );
    out.insert(
        "leaders not named by the Lease".into(),
        observed.mismatches.len().to_string(),
    );
    let spec = |l: &Lease| l.spec.clone().unwrap_or_default();
    let first = versions.first().map(spec).unwrap_or_default();
    out.insert(
        "the Lease as the server created it".into(),
        format!(
            "holder={} strategy={} leaseDurationSeconds={:?} acquireTime={} preferredHolder={}",
            text(first.holder_identity.as_deref()),
            text(first.strategy.as_deref()),
            first.lease_duration_seconds,
            first.acquire_time.is_some(),
            text(first.preferred_holder.as_deref()),
        ),
    );
    let mut holders: Vec<String> = Vec::new();
    for l in &versions {
        let h = text(spec(l).holder_identity.as_deref());
        if holders.last() != Some(&h) {
            holders.push(h);
        }
    }
    out.insert("holders in order".into(), holders.join(","));
    let end_of_term: BTreeSet<String> = versions
        .iter()
        .map(spec)
        .filter(|s| s.preferred_holder.is_some())
        .map(|s| {
            format!(
                "holder={} preferredHolder={}",
                text(s.holder_identity.as_deref()),
                text(s.preferred_holder.as_deref())
            )
        })
        .collect();
    out.insert(
        "end of term marks".into(),
        end_of_term.into_iter().collect::<Vec<_>>().join("; "),
    );
    let handed = versions
        .iter()
        .map(spec)
        .find(|s| s.holder_identity.as_deref() == Some("a"))
        .unwrap_or_default();
    out.insert(
        "the Lease as handed to a".into(),
        format!(
            "strategy={} leaseDurationSeconds={:?} acquireTime={} preferredHolder={}",
            text(handed.strategy.as_deref()),
            handed.lease_duration_seconds,
            handed.acquire_time.is_some(),
            text(handed.preferred_holder.as_deref()),
        ),
    );
    let candidates: Api<LeaseCandidate> = Api::namespaced(client.clone(), NAMESPACE);
    let list = ok(candidates.list(&ListParams::default()).await);
    let mut pinged = Vec::new();
    let mut shapes = BTreeSet::new();
    for lc in &list.items {
        let name = lc.metadata.name.clone().unwrap_or_default();
        if lc.spec.ping_time.is_some() {
            pinged.push(name.clone());
        }
        let v = ok(serde_json::to_value(&lc.spec));
        let keys: Vec<String> = v
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        shapes.insert(format!("{}: {}", lc.spec.lease_name, keys.join(",")));
    }
    pinged.sort();
    out.insert("candidates pinged".into(), pinged.join(","));
    out.insert(
        "candidate spec fields".into(),
        shapes.into_iter().collect::<Vec<_>>().join("; "),
    );
    out
}

fn fake() -> FakeApiServer {
    ok(FakeApiServer::builder()
        .with_controllers([Controller::Namespace, Controller::CoordinatedLeaderElection])
        .build())
}

/// What holds on any server that elects as kube-apiserver does.
fn check(o: &BTreeMap<String, String>) {
    assert_eq!(o["leaders in order"], "b,a,b", "{o:#?}");
    assert_eq!(o["most leaders at once"], "1", "{o:#?}");
    assert_eq!(o["leaders not named by the Lease"], "0", "{o:#?}");
    assert_eq!(o["holders in order"], "b,a,b", "{o:#?}");
    assert_eq!(
        o["end of term marks"], "holder=b preferredHolder=a",
        "{o:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinated_election_on_the_in_memory_server() {
    init_tracing();
    let server = fake();
    let o = scenario(ok(server.client())).await;
    check(&o);
    assert_eq!(
        o["the Lease as the server created it"],
        "holder=b strategy=OldestEmulationVersion leaseDurationSeconds=Some(5) acquireTime=false preferredHolder=<none>"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinated_election_fake_vs_real() {
    init_tracing();
    let real = {
        let server = ok(RealApiServer::start_with(Options {
            extra_apiserver_args: vec![
                "--feature-gates=CoordinatedLeaderElection=true".into(),
                "--runtime-config=coordination.k8s.io/v1beta1=true".into(),
            ],
            ..Options::default()
        })
        .await);
        scenario(ok(server.client())).await
    };
    let server = fake();
    let fake = scenario(ok(server.client())).await;
    let mut table = String::from("| step | kube-apiserver | in-memory |\n|---|---|---|\n");
    let mut disagree = Vec::new();
    for (step, r) in &real {
        let f = fake.get(step).map_or("<missing>", String::as_str);
        table.push_str(&format!("| {step} | {r} | {f} |\n"));
        if r != f {
            disagree.push(step.clone());
        }
    }
    println!("{table}");
    check(&real);
    assert!(
        disagree.is_empty(),
        "the servers disagree on {disagree:?}:\n{table}"
    );
}
