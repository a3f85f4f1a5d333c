//! The informers' KEP-4346 metrics (`informer_queued_items`,
//! `informer_processing_latency_seconds`, `informer_store_resource_version`) of a running
//! Manager, scraped from its `/metrics` and parsed with a Prometheus text parser.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{create_cm, eventually_async, fake, http_get, init_tracing};
use k8s_openapi::api::core::v1::ConfigMap;
use kube_codegen_runtime::informer::EventHandlerFuncs;
use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
use prometheus_parse::{Scrape, Value};
use tokio_util::sync::CancellationToken;

async fn scrape(addr: SocketAddr) -> Scrape {
    let (code, body) = http_get(addr, "/metrics").await;
    assert_eq!(code, 200);
    Scrape::parse(body.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("unparsable metrics: {e}\n{body}"))
}

const LABELS: [(&str, &str); 4] = [
    ("name", "ConfigMap"),
    ("group", ""),
    ("version", "v1"),
    ("resource", "configmaps"),
];

/// The ConfigMap informer's sample of `name` (a histogram's observation count).
fn value(s: &Scrape, name: &str) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| x.metric == name && LABELS.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match &x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            Value::Histogram(h) => h.iter().map(|b| b.count).fold(0.0, f64::max),
            Value::Summary(_) => f64::NAN,
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn informer_metrics_report_queued_items_latency_and_the_store_version() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = Manager::builder(client.clone())
        .metrics_bind_address("127.0.0.1:0")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(|_req: Request, _ctx: Context| async { Ok::<_, kube::Error>(Action::done()) })
        .unwrap_or_else(|e| panic!("{e}"));
    // A handler that stops while the gate is closed: its notifications queue up.
    let gate = Arc::new(AtomicBool::new(false));
    let g = gate.clone();
    mgr.informer::<ConfigMap>()
        .add_event_handler(EventHandlerFuncs::<ConfigMap>::new().add_func(move |_, _| {
            while g.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let m2 = mgr.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    let addr = eventually_async("the metrics server bound", 10, || async {
        m2.bound_addresses()
            .into_iter()
            .find(|(w, _)| *w == "metrics")
            .map(|(_, a)| a)
    })
    .await;
    eventually_async("the informer synced", 10, || async {
        value(&scrape(addr).await, "informer_store_resource_version")
    })
    .await;

    gate.store(true, Ordering::Release);
    let mut last = None;
    for i in 0..5 {
        last = Some(create_cm(&client, &format!("cm-{i}")).await);
    }
    let rv: f64 = last
        .and_then(|cm| cm.metadata.resource_version)
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion"));
    // The first add is in the handler (blocked); the other four wait in its queue.
    eventually_async("four notifications queued", 10, || async {
        let s = scrape(addr).await;
        value(&s, "informer_queued_items")
            .filter(|&q| q >= 4.0)
            .and(value(&s, "informer_store_resource_version").filter(|&v| v == rv))
    })
    .await;
    gate.store(false, Ordering::Release);
    let s = eventually_async("the queue drained", 10, || async {
        let s = scrape(addr).await;
        (value(&s, "informer_queued_items") == Some(0.0)).then_some(s)
    })
    .await;
    // One observation per list and per watch event: at least the five creates.
    let processed = value(&s, "informer_processing_latency_seconds").unwrap_or(0.0);
    assert!(processed >= 5.0, "{processed} events processed");
    stop.cancel();
    let stopped = task.await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
}
