//! The Manager's lifecycle through its public API: graceful stop lets reconciles in hand
//! finish, bounded by the timeout; a failing runnable stops the manager; non-leader runnables run
//! on followers; the leader-election gauge.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{create_cm, eventually, fake, init_tracing};
use k8s_openapi::api::core::v1::ConfigMap;
use kube_controller_runtime::{
    Action, Context, Controller, Manager, ManagerError, Request, RunnableFn,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_lets_the_reconcile_in_hand_finish() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = Manager::builder(client.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (started, finished) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (s, f) = (started.clone(), finished.clone());
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(move |_r: Request, _c: Context| {
            let (s, f) = (s.clone(), f.clone());
            async move {
                s.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(700)).await;
                f.store(true, Ordering::SeqCst);
                Ok::<_, std::io::Error>(Action::done())
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    create_cm(&client, "slow").await;
    eventually("the reconcile started", 20, || {
        started.load(Ordering::SeqCst).then_some(())
    })
    .await;
    stop.cancel();
    task.await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        finished.load(Ordering::SeqCst),
        "stopped before the reconcile finished"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_is_bounded_by_the_timeout() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = Manager::builder(client.clone())
        .graceful_shutdown_timeout(Duration::from_millis(500))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Arc::new(AtomicBool::new(false));
    let s = started.clone();
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(move |_r: Request, _c: Context| {
            let s = s.clone();
            async move {
                s.store(true, Ordering::SeqCst);
                std::future::pending::<()>().await;
                Ok::<_, std::io::Error>(Action::done())
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    create_cm(&client, "stuck").await;
    eventually("the reconcile started", 20, || {
        started.load(Ordering::SeqCst).then_some(())
    })
    .await;
    let t0 = Instant::now();
    stop.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .unwrap_or_else(|_| panic!("the manager did not stop"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(result, Err(ManagerError::GracefulShutdownTimeout(d, _)) if d == Duration::from_millis(500)),
        "{result:?}"
    );
    assert!(t0.elapsed() >= Duration::from_millis(500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_runnable_stops_the_manager_and_is_reported() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = Manager::builder(client)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let other_stopped = Arc::new(AtomicBool::new(false));
    let o = other_stopped.clone();
    mgr.add(
        RunnableFn::new(move |shutdown| async move {
            shutdown.cancelled().await;
            o.store(true, Ordering::SeqCst);
            Ok(())
        })
        .named("patient"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    mgr.add(
        RunnableFn::new(|_shutdown| async { Err("the disk is full".into()) })
            .without_leader_election()
            .named("cron"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let result = mgr.clone().start(std::future::pending()).await;
    assert_eq!(
        result.err().map(|e| e.to_string()).as_deref(),
        Some("cron failed: the disk is full")
    );
    assert!(
        other_stopped.load(Ordering::SeqCst),
        "the other runnable was stopped"
    );
    assert!(matches!(
        mgr.add(RunnableFn::new(|_s| async { Ok(()) })),
        Err(ManagerError::AlreadyStarted)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_run_non_leader_runnables_and_report_leader_status() {
    init_tracing();
    let (client, _handle) = fake();
    let build = |identity: &str| {
        Manager::builder(client.clone())
            .leader_election_id("status")
            .leader_election_namespace("kube-system")
            .leader_election_identity(identity)
            .lease_duration(Duration::from_secs(3))
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_millis(500))
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (build("a"), build("b"));
    let runs = Arc::new(AtomicUsize::new(0));
    for m in [&a, &b] {
        let r = runs.clone();
        m.add(
            RunnableFn::new(move |shutdown| async move {
                r.fetch_add(1, Ordering::SeqCst);
                shutdown.cancelled().await;
                Ok(())
            })
            .without_leader_election(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let stop = CancellationToken::new();
    let (ta, tb) = (stop.clone(), stop.clone());
    let ja = tokio::spawn(a.clone().start(async move { ta.cancelled().await }));
    let jb = tokio::spawn(b.clone().start(async move { tb.cancelled().await }));
    eventually("one leader, both runnables", 20, || {
        ((a.is_leader() ^ b.is_leader()) && runs.load(Ordering::SeqCst) == 2).then_some(())
    })
    .await;
    let status = |m: &Manager| {
        let text = m.metrics().encode();
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .unwrap_or_else(|e| panic!("{e}"));
        scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "leader_election_master_status"
                    && s.labels.get("name") == Some("status")
            })
            .map(|s| match s.value {
                prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
                _ => f64::NAN,
            })
    };
    let (leader, follower) = if a.is_leader() { (&a, &b) } else { (&b, &a) };
    assert_eq!(status(leader), Some(1.0));
    assert_eq!(status(follower), Some(0.0));
    stop.cancel();
    for j in [ja, jb] {
        j.await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[tokio::test]
async fn the_managers_cache_drops_managed_fields_unless_asked_to_keep_them() {
    let (client, _handle) = fake();
    // Applied, so that the object has a managedFields entry.
    let applied = kube::Api::<ConfigMap>::namespaced(client.clone(), "ns")
        .patch(
            "a",
            &kube::api::PatchParams::apply("test"),
            &kube::api::Patch::Apply(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "ns"},
                "data": {"k": "v"}
            })),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        applied
            .metadata
            .managed_fields
            .is_some_and(|m| !m.is_empty())
    );
    let held = |keep: bool| {
        let client = client.clone();
        async move {
            let mgr = Manager::builder(client)
                .keep_managed_fields(keep)
                .build()
                .unwrap_or_else(|e| panic!("{e}"));
            let lister = mgr.lister::<ConfigMap>();
            mgr.factory().start();
            assert!(mgr.factory().wait_for_cache_sync().await.all_synced());
            let cm = lister
                .namespaced("ns")
                .get("a")
                .unwrap_or_else(|e| panic!("{e}"));
            cm.metadata.managed_fields.as_ref().map_or(0, Vec::len)
        }
    };
    assert_eq!(held(false).await, 0, "dropped by default");
    assert!(held(true).await > 0, "kept when asked");
}
