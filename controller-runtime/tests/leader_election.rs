//! Leader election between managers sharing one fake API server: exactly one reconciles, a
//! dropped leader is replaced, a graceful stop hands the Lease over at once, a leader that
//! cannot renew stops before its Lease can expire, and bad input fails before anything starts.
//!
//! Timings are short (lease 3 s, renew deadline 2 s, retry period 0.5 s) to keep the suite
//! quick; the bounds asserted follow client-go's algorithm: a follower notices a change of the
//! record at its next attempt (at most `retry × 2.2` later, jitter included) and takes over one
//! lease duration after it last saw the record change, at its next attempt.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{create_cm, eventually, fake, init_tracing};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::PostParams;
use kube_codegen_runtime::fake::{FakeHandle, Reaction};
use kube_controller_runtime::leaderelection::JITTER_FACTOR;
use kube_controller_runtime::{
    Action, Context, Controller, LeaderElectionError, Manager, ManagerError, Request, RunnableFn,
};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const LEASE: Duration = Duration::from_secs(3);
const RENEW: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(500);
const LEASE_NAME: &str = "demo-leader";

type Log = Arc<Mutex<Vec<(String, String)>>>;

struct Replica {
    identity: String,
    mgr: Manager,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<Result<(), ManagerError>>>,
}

fn replica(client: &kube::Client, identity: &str, log: &Log) -> Replica {
    let mgr = Manager::builder(client.clone())
        .leader_election_id(LEASE_NAME)
        .leader_election_namespace("kube-system")
        .leader_election_identity(identity)
        .lease_duration(LEASE)
        .renew_deadline(RENEW)
        .retry_period(RETRY)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let log = log.clone();
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(move |req: Request, ctx: Context| {
            let log = log.clone();
            async move {
                log.lock()
                    .push((ctx.identity().to_string(), req.name.clone()));
                Ok::<_, std::io::Error>(Action::done())
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    Replica {
        identity: identity.to_string(),
        mgr,
        stop: CancellationToken::new(),
        task: None,
    }
}

impl Replica {
    fn start(&mut self) {
        let token = self.stop.clone();
        self.task = Some(tokio::spawn(
            self.mgr
                .clone()
                .start(async move { token.cancelled().await }),
        ));
    }

    fn leads(&self) -> bool {
        self.mgr.is_leader()
    }

    async fn join(&mut self) -> Result<(), ManagerError> {
        match self.task.take() {
            Some(t) => t.await.unwrap_or_else(|e| panic!("{e}")),
            None => Ok(()),
        }
    }
}

fn reconciled_by(log: &Log, name: &str) -> Vec<String> {
    log.lock()
        .iter()
        .filter(|(_, n)| n == name)
        .map(|(i, _)| i.clone())
        .collect()
}

fn lease(handle: &FakeHandle) -> Option<Lease> {
    handle
        .get::<Lease>("kube-system", LEASE_NAME)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The longest a follower can take to notice a change and act on it: two attempts.
fn two_attempts() -> Duration {
    RETRY.mul_f64(1.0 + JITTER_FACTOR) * 2
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_reconciles_and_a_dropped_leader_is_replaced() {
    init_tracing();
    let (client, handle) = fake();
    let log: Log = Arc::default();
    let mut a = replica(&client, "replica-a", &log);
    let mut b = replica(&client, "replica-b", &log);
    a.start();
    b.start();
    eventually("a leader", 20, || (a.leads() || b.leads()).then_some(())).await;
    let (leader, follower) = if a.leads() {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    let l = lease(&handle).unwrap_or_else(|| panic!("no Lease"));
    let spec = l.spec.clone().unwrap_or_default();
    assert_eq!(
        spec.holder_identity.as_deref(),
        Some(leader.identity.as_str())
    );
    assert_eq!(spec.lease_duration_seconds, Some(3));
    assert!(spec.acquire_time.is_some() && spec.renew_time.is_some());

    create_cm(&client, "one").await;
    eventually("one reconciled", 20, || {
        (!reconciled_by(&log, "one").is_empty()).then_some(())
    })
    .await;
    // Both replicas have warm caches, but only the leader reconciles.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        reconciled_by(&log, "one"),
        std::slice::from_ref(&leader.identity)
    );
    assert!(!follower.leads());
    assert!(
        !follower.mgr.lister::<ConfigMap>().store().is_empty(),
        "the follower's cache is warm"
    );

    // Drop the leader without any goodbye: its Lease stays until it expires.
    let t0 = Instant::now();
    if let Some(t) = leader.task.take() {
        t.abort();
        let _ = t.await;
    }
    eventually("the follower leads", 20, || follower.leads().then_some(())).await;
    let took = t0.elapsed();
    assert!(
        took <= LEASE + two_attempts() + Duration::from_millis(500),
        "takeover took {took:?}"
    );
    let spec = lease(&handle).and_then(|l| l.spec).unwrap_or_default();
    assert_eq!(
        spec.holder_identity.as_deref(),
        Some(follower.identity.as_str())
    );
    assert_eq!(spec.lease_transitions, Some(1));

    create_cm(&client, "two").await;
    eventually("two reconciled", 20, || {
        (!reconciled_by(&log, "two").is_empty()).then_some(())
    })
    .await;
    assert_eq!(
        reconciled_by(&log, "two"),
        std::slice::from_ref(&follower.identity)
    );
    follower.stop.cancel();
    follower.join().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_releases_the_lease_and_the_follower_takes_over_in_under_2s() {
    init_tracing();
    let (client, handle) = fake();
    let log: Log = Arc::default();
    let mut a = replica(&client, "replica-a", &log);
    a.start();
    eventually("a leads", 20, || a.leads().then_some(())).await;
    let mut b = replica(&client, "replica-b", &log);
    b.start();
    // b has seen a's record: it is a follower now.
    eventually("b follows a", 20, || {
        (b.mgr.elector().and_then(|e| e.leader()).as_deref() == Some("replica-a")).then_some(())
    })
    .await;

    a.stop.cancel();
    a.join().await.unwrap_or_else(|e| panic!("{e}"));
    let released = Instant::now();
    let spec = lease(&handle).and_then(|l| l.spec).unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some(""), "released");
    assert_eq!(spec.lease_duration_seconds, Some(1));
    eventually("b leads", 20, || b.leads().then_some(())).await;
    let took = released.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "takeover after release took {took:?}"
    );
    b.stop.cancel();
    b.join().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_stops_before_its_lease_can_expire() {
    init_tracing();
    let (client, handle) = fake();
    let log: Log = Arc::default();
    let mut a = replica(&client, "replica-a", &log);
    // A leader-election runnable that records when it is stopped (dropped at once on loss).
    let stopped_at: Arc<Mutex<Option<jiff::Timestamp>>> = Arc::default();
    struct StopGuard(Arc<Mutex<Option<jiff::Timestamp>>>);
    impl Drop for StopGuard {
        fn drop(&mut self) {
            *self.0.lock() = Some(jiff::Timestamp::now());
        }
    }
    let s = stopped_at.clone();
    a.mgr
        .add(RunnableFn::new(move |shutdown| async move {
            let _guard = StopGuard(s);
            shutdown.cancelled().await;
            Ok(())
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    a.start();
    eventually("a leads", 20, || a.leads().then_some(())).await;
    let mut b = replica(&client, "replica-b", &log);
    b.start();
    eventually("b follows a", 20, || {
        (b.mgr.elector().and_then(|e| e.leader()).as_deref() == Some("replica-a")).then_some(())
    })
    .await;

    // From now on every write of replica-a to the Lease fails.
    handle.prepend_reactor("update", "leases", |action| {
        let holder = action
            .body
            .as_ref()
            .and_then(|b| b.pointer("/spec/holderIdentity"))
            .and_then(|h| h.as_str());
        if holder == Some("replica-a") {
            Reaction::Error(Box::new(kube_codegen_runtime::api_status::status_failure(
                500,
                "InternalError",
                "etcd is having a bad day",
            )))
        } else {
            Reaction::PassThrough
        }
    });
    let last = lease(&handle).and_then(|l| l.spec).unwrap_or_default();
    let result = a.join().await;
    assert!(
        matches!(&result, Err(ManagerError::LeaderElectionLost(_))),
        "{result:?}"
    );
    let stopped = stopped_at
        .lock()
        .unwrap_or_else(|| panic!("the runnable was not stopped"));
    // The Lease that replica-a last wrote (any later write failed) is valid until
    // renewTime + leaseDuration (the record may have been renewed once more after `last`).
    let renewed = lease(&handle)
        .and_then(|l| l.spec)
        .and_then(|s| s.renew_time)
        .map(|t| t.0)
        .unwrap_or_else(|| panic!("no renewTime"));
    assert!(renewed >= last.renew_time.map(|t| t.0).unwrap_or_default());
    let expiry = renewed + jiff::SignedDuration::try_from(LEASE).unwrap_or_default();
    assert!(
        stopped < expiry,
        "stopped at {stopped}, lease valid until {expiry}"
    );

    // Its fenced client refuses writes; nothing reaches the server.
    let before = handle.actions().len();
    let e = Api::<ConfigMap>::namespaced(a.mgr.client(), "ns")
        .create(&PostParams::default(), &ConfigMap::default())
        .await
        .err()
        .unwrap_or_else(|| panic!("a write went through"));
    assert!(
        e.to_string()
            .contains("not the leader of Lease kube-system/demo-leader"),
        "{e}"
    );
    assert_eq!(
        handle.actions().len(),
        before,
        "the refused write was not sent"
    );

    eventually("b leads", 20, || b.leads().then_some(())).await;
    let b_leads = jiff::Timestamp::now();
    assert!(stopped < b_leads);
    create_cm(&client, "after").await;
    eventually("b reconciles", 20, || {
        (reconciled_by(&log, "after") == ["replica-b"]).then_some(())
    })
    .await;
    b.stop.cancel();
    b.join().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A manager with leader election on `client`, a runnable that records whether it started.
fn checked_manager(
    client: &kube::Client,
    namespace: &str,
    metrics: &str,
) -> (Manager, Arc<Mutex<bool>>) {
    let mgr = Manager::builder(client.clone())
        .leader_election_id(LEASE_NAME)
        .leader_election_namespace(namespace)
        .leader_election_identity("me")
        .metrics_bind_address(metrics)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Arc::new(Mutex::new(false));
    let s = started.clone();
    mgr.add(
        RunnableFn::new(move |_shutdown| async move {
            *s.lock() = true;
            Ok(())
        })
        .without_leader_election(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (mgr, started)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_fails_before_anything_starts() {
    init_tracing();
    let (client, handle) = fake();

    // A metrics address in use.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = taken
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    let (mgr, started) = checked_manager(&client, "kube-system", &addr);
    let e = mgr
        .start(async {})
        .await
        .err()
        .unwrap_or_else(|| panic!("started"));
    assert!(
        matches!(
            e,
            ManagerError::Bind {
                what: "metrics",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("cannot listen on {addr} for metrics: ")),
        "{e}"
    );
    assert!(!*started.lock(), "nothing started");
    assert!(lease(&handle).is_none(), "no Lease written");

    // A leader-election namespace that does not exist.
    let (mgr, started) = checked_manager(&client, "nowhere", "0");
    let e = mgr
        .start(async {})
        .await
        .err()
        .unwrap_or_else(|| panic!("started"));
    assert_eq!(
        e.to_string(),
        "leader election: leader election namespace \"nowhere\" does not exist (Lease nowhere/demo-leader)"
    );
    assert!(!*started.lock());

    // No permission on Leases.
    handle.prepend_reactor("*", "leases", |a| {
        Reaction::Error(Box::new(kube_codegen_runtime::api_status::status_failure(
            403,
            "Forbidden",
            format!("leases.coordination.k8s.io \"demo-leader\" is forbidden: User \"me\" cannot {} resource \"leases\"", a.verb),
        )))
    });
    let (mgr, started) = checked_manager(&client, "kube-system", "0");
    let e = mgr
        .start(async {})
        .await
        .err()
        .unwrap_or_else(|| panic!("started"));
    assert!(
        matches!(
            &e,
            ManagerError::LeaderElection(LeaderElectionError::Forbidden { verb: "get", .. })
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("needs get, create and update on coordination.k8s.io leases")
    );
    assert!(!*started.lock());
    handle.clear_reactors();

    // A Lease held by someone else, with a renewTime that is no time.
    handle
        .add_value(serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": "kube-system"},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15, "renewTime": "last tuesday"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let (mgr, started) = checked_manager(&client, "kube-system", "0");
    let e = mgr
        .start(async {})
        .await
        .err()
        .unwrap_or_else(|| panic!("started"));
    assert!(
        e.to_string().starts_with(
            "leader election: Lease kube-system/demo-leader cannot be decoded: spec.renewTime: \"last tuesday\" is no MicroTime"
        ),
        "{e}"
    );
    assert!(!*started.lock());

    // Inconsistent timings are refused when building.
    let e = Manager::builder(client.clone())
        .leader_election_id(LEASE_NAME)
        .lease_duration(Duration::from_secs(10))
        .renew_deadline(Duration::from_secs(10))
        .build()
        .err()
        .unwrap_or_else(|| panic!("built"));
    assert_eq!(
        e.to_string(),
        "leader election: invalid leader election configuration: leaseDuration must be greater than renewDeadline"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_with_a_far_future_renew_time_is_taken_after_one_lease_duration() {
    // client-go does not compare clocks: the record must stay unchanged for leaseDurationSeconds
    // on the candidate's own clock, whatever renewTime says.
    init_tracing();
    let (client, handle) = fake();
    handle
        .add_value(serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": "kube-system"},
            "spec": {"holderIdentity": "ghost", "leaseDurationSeconds": 2,
                     "renewTime": "2999-01-01T00:00:00.000000Z", "leaseTransitions": 4}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let log: Log = Arc::default();
    let mut a = replica(&client, "replica-a", &log);
    let t0 = Instant::now();
    a.start();
    eventually("a leads", 20, || a.leads().then_some(())).await;
    assert!(
        t0.elapsed() >= Duration::from_secs(2),
        "took it before the lease duration"
    );
    let spec = lease(&handle).and_then(|l| l.spec).unwrap_or_default();
    assert_eq!(spec.lease_transitions, Some(5));
    a.stop.cancel();
    a.join().await.unwrap_or_else(|e| panic!("{e}"));
}
