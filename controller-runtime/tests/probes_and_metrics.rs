//! `/metrics`, `/healthz` and `/readyz` of a running Manager, scraped over HTTP and parsed with
//! a Prometheus text parser.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{create_cm, eventually, eventually_async, fake, http_get, init_tracing};
use k8s_openapi::api::core::v1::ConfigMap;
use kube_codegen_runtime::fake::Reaction;
use kube_codegen_runtime::workqueue::ItemExponentialFailureRateLimiter;
use kube_controller_runtime::{Action, Context, Controller, Manager, ManagerError, Request};
use parking_lot::Mutex;
use prometheus_parse::{Scrape, Value};
use tokio_util::sync::CancellationToken;

fn addr_of(mgr: &Manager, what: &str) -> SocketAddr {
    mgr.bound_addresses()
        .into_iter()
        .find(|(w, _)| *w == what)
        .map(|(_, a)| a)
        .unwrap_or_else(|| panic!("no {what} address"))
}

async fn scrape(addr: SocketAddr) -> Scrape {
    let (code, body) = http_get(addr, "/metrics").await;
    assert_eq!(code, 200);
    Scrape::parse(body.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("unparsable metrics: {e}\n{body}"))
}

/// The value of `name` with exactly these labels.
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| x.metric == name && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match &x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            Value::Histogram(h) => h.iter().map(|b| b.count).fold(0.0, f64::max),
            Value::Summary(_) => f64::NAN,
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_after_a_known_sequence() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = Manager::builder(client.clone())
        .metrics_bind_address("127.0.0.1:0")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // `err` fails once, `boom` panics once; both succeed when retried; the rest succeed.
    let failed = Arc::new(Mutex::new(Vec::<String>::new()));
    let f = failed.clone();
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .named("demo")
        .max_concurrent_reconciles(2)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(10),
            Duration::from_secs(1),
        ))
        .complete(move |req: Request, _ctx: Context| {
            let f = f.clone();
            async move {
                let first = {
                    let mut f = f.lock();
                    let first = !f.contains(&req.name);
                    f.push(req.name.clone());
                    first
                };
                match req.name.as_str() {
                    "err" if first => Err(std::io::Error::other("first attempt fails")),
                    "boom" if first => panic!("first attempt panics"),
                    _ => Ok(Action::done()),
                }
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let m2 = mgr.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    let addr = eventually("metrics bound", 10, || {
        m2.bound_addresses()
            .first()
            .map(|_| addr_of(&m2, "metrics"))
    })
    .await;

    const N: usize = 5;
    for i in 0..N {
        create_cm(&client, &format!("ok-{i}")).await;
    }
    create_cm(&client, "err").await;
    create_cm(&client, "boom").await;
    let c = [("controller", "demo")];
    let q = [("name", "demo"), ("controller", "demo")];
    // Unfinished work is recomputed every 500 ms (as client-go does): wait for the tick after
    // the last reconcile too.
    let s = eventually_async("every reconcile counted", 20, || async {
        let s = scrape(addr).await;
        let success = value(
            &s,
            "controller_runtime_reconcile_total",
            &[("controller", "demo"), ("result", "success")],
        );
        let unfinished = value(&s, "workqueue_unfinished_work_seconds", &q);
        (success == Some((N + 2) as f64) && unfinished == Some(0.0)).then_some(s)
    })
    .await;
    assert_eq!(
        value(
            &s,
            "controller_runtime_reconcile_total",
            &[("controller", "demo"), ("result", "error")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value(&s, "controller_runtime_reconcile_errors_total", &c),
        Some(2.0),
        "the error and the panic"
    );
    assert_eq!(
        value(&s, "controller_runtime_reconcile_panics_total", &c),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "controller_runtime_reconcile_timeouts_total", &c),
        Some(0.0)
    );
    assert_eq!(
        value(&s, "controller_runtime_max_concurrent_reconciles", &c),
        Some(2.0)
    );
    assert_eq!(
        value(&s, "controller_runtime_active_workers", &c),
        Some(0.0)
    );
    assert_eq!(
        value(&s, "controller_runtime_reconcile_time_seconds_count", &c),
        Some((N + 4) as f64)
    );
    assert_eq!(
        value(&s, "workqueue_depth", &q),
        Some(0.0),
        "queue depth back to 0"
    );
    assert_eq!(
        value(&s, "workqueue_adds_total", &q),
        Some((N + 4) as f64),
        "N + 2 creates, 2 retries"
    );
    assert_eq!(value(&s, "workqueue_retries_total", &q), Some(2.0));
    assert_eq!(
        value(&s, "workqueue_queue_duration_seconds_count", &q),
        Some((N + 4) as f64)
    );
    assert_eq!(
        value(&s, "workqueue_work_duration_seconds_count", &q),
        Some((N + 4) as f64)
    );
    assert_eq!(
        value(&s, "workqueue_unfinished_work_seconds", &q),
        Some(0.0)
    );
    assert_eq!(
        value(&s, "workqueue_longest_running_processor_seconds", &q),
        Some(0.0)
    );
    assert_eq!(failed.lock().len(), N + 4);

    // Unknown paths are 404, and the metrics server stops with the manager.
    assert_eq!(http_get(addr, "/nope").await.0, 404);
    stop.cancel();
    task.await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "server stopped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_waits_for_the_caches_and_healthz_fails_with_a_check() {
    init_tracing();
    let (client, handle) = fake();
    // ConfigMap lists fail until `ready` is set: the informer cannot sync.
    let ready = Arc::new(AtomicBool::new(false));
    let r = ready.clone();
    handle.prepend_reactor("list", "configmaps", move |_| {
        if r.load(Ordering::SeqCst) {
            Reaction::PassThrough
        } else {
            Reaction::Error(Box::new(kube_codegen_runtime::api_status::status_failure(
                500,
                "InternalError",
                "not yet",
            )))
        }
    });
    let mgr = Manager::builder(client.clone())
        .health_probe_bind_address("127.0.0.1:0")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let healthy = Arc::new(AtomicBool::new(true));
    let h = healthy.clone();
    mgr.add_healthz_check("ping", kube_controller_runtime::healthz::ping)
        .unwrap_or_else(|e| panic!("{e}"));
    mgr.add_healthz_check("database", move || {
        if h.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("connection refused")
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        mgr.add_healthz_check("ping", kube_controller_runtime::healthz::ping),
        Err(ManagerError::Healthz(_))
    ));
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(|_r: Request, _c: Context| async { Ok::<_, std::io::Error>(Action::done()) })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let m2 = mgr.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    let addr = eventually("probes bound", 10, || {
        m2.bound_addresses()
            .first()
            .map(|_| addr_of(&m2, "health probes"))
    })
    .await;

    let (code, body) = http_get(addr, "/readyz").await;
    assert_eq!(code, 503, "{body}");
    assert_eq!(
        body,
        "[-]informer-sync failed: reason withheld\nreadyz check failed\n"
    );
    let (code, body) = http_get(addr, "/readyz/informer-sync").await;
    assert_eq!(
        (code, body.as_str()),
        (
            503,
            "internal server error: informer caches have not synced yet\n"
        )
    );
    assert_eq!(http_get(addr, "/healthz").await, (200, "ok".to_string()));

    ready.store(true, Ordering::SeqCst);
    eventually_async("ready", 20, || async {
        (http_get(addr, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    assert_eq!(
        http_get(addr, "/readyz?verbose").await,
        (
            200,
            "[+]informer-sync ok\nreadyz check passed\n".to_string()
        )
    );

    healthy.store(false, Ordering::SeqCst);
    let (code, body) = http_get(addr, "/healthz?verbose").await;
    assert_eq!(code, 503);
    assert_eq!(
        body,
        "[+]ping ok\n[-]database failed: connection refused\nhealthz check failed\n"
    );
    assert_eq!(http_get(addr, "/healthz/ping").await.0, 200);
    assert_eq!(http_get(addr, "/healthz/database").await.0, 503);
    assert_eq!(http_get(addr, "/healthz?exclude=database").await.0, 200);
    assert_eq!(http_get(addr, "/healthz/nope").await.0, 404);
    stop.cancel();
    task.await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
}
