//! Read-your-own-writes against the in-memory API server behind a slowed watch: a reconcile
//! never reads, from the cache, an object older than the last write its request made through
//! the Manager's client; and with the feature off it does (so the check can fail).

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::{create_cm, eventually, fake};
use futures::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::PostParams;
use kube_controller_runtime::{Action, Context, Controller, Manager, ManagerError, Request};
use parking_lot::Mutex;
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `client` with every chunk of every watch response held back `delay`: the cache learns of
/// each write late, as from a slow or distant API server.
fn slowed_watch(client: kube::Client, delay: Duration) -> kube::Client {
    let ns = client.default_namespace().to_string();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let client = client.clone();
        async move {
            let watch = req.uri().query().is_some_and(|q| q.contains("watch=true"));
            let res = client
                .send(req)
                .await
                .map_err(|e| Box::new(e) as BoxError)?;
            let (parts, body) = res.into_parts();
            let frames = body.into_data_stream().then(move |chunk| async move {
                if watch {
                    tokio::time::sleep(delay).await;
                }
                chunk.map(Frame::data)
            });
            Ok::<_, BoxError>(http::Response::from_parts(
                parts,
                StreamBody::new(frames.boxed()),
            ))
        }
    });
    kube::Client::new(svc, ns)
}

/// What the reconciles saw: per key, the counter of the last write and every stale read; and
/// the Manager's metrics when it stopped.
#[derive(Clone, Default)]
struct Seen {
    last_written: Arc<Mutex<HashMap<String, u64>>>,
    stale: Arc<Mutex<Vec<String>>>,
    reads: Arc<Mutex<usize>>,
    metrics: Arc<Mutex<String>>,
}

impl Seen {
    /// `controller_runtime_read_your_writes_live_checks_total` for `result`.
    fn live_checks(&self, result: &str) -> f64 {
        let text = self.metrics.lock().clone();
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .unwrap_or_else(|e| panic!("{e}"));
        scrape
            .samples
            .iter()
            .filter(|s| {
                s.metric == "controller_runtime_read_your_writes_live_checks_total"
                    && s.labels.get("result") == Some(result)
            })
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v,
                ref other => panic!("not a counter: {other:?}"),
            })
            .sum()
    }
}

fn counter(cm: &ConfigMap) -> u64 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("n"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A controller that counts each ConfigMap's `data.n` up to `target`, one write per reconcile,
/// and asks to be reconciled again at once: the read after each write is the one a slow watch
/// makes stale. `bound` is the read-your-own-writes timeout.
async fn run(
    read_your_writes: bool,
    delay: Duration,
    keys: usize,
    target: u64,
    workers: usize,
    bound: Duration,
) -> Seen {
    let (client, _handle) = fake();
    for i in 0..keys {
        create_cm(&client, &format!("cm-{i}")).await;
    }
    let client = slowed_watch(client, delay);
    let mgr = Manager::builder(client)
        .read_your_own_writes(read_your_writes)
        .read_your_own_writes_timeout(bound)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = Seen::default();
    let metrics = mgr.metrics().clone();
    let lister = mgr.lister::<ConfigMap>();
    let api: Api<ConfigMap> = Api::namespaced(mgr.client(), "ns");
    let s = seen.clone();
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(workers)
        .complete(move |req: Request, _ctx: Context| {
            let (lister, api, s) = (lister.clone(), api.clone(), s.clone());
            async move {
                let Ok(cm) = lister.namespaced("ns").get(&req.name) else {
                    return Ok(Action::done());
                };
                let n = counter(&cm);
                *s.reads.lock() += 1;
                let written = s.last_written.lock().get(&req.name).copied().unwrap_or(0);
                if n < written {
                    s.stale
                        .lock()
                        .push(format!("{req}: read {n} after writing {written}"));
                    // Writing from a stale copy would conflict; look again soon.
                    return Ok(Action::requeue_after(Duration::from_millis(5)));
                }
                if n >= target {
                    return Ok(Action::done());
                }
                let mut next = (*cm).clone();
                next.data
                    .get_or_insert_default()
                    .insert("n".into(), (n + 1).to_string());
                api.replace(&req.name, &PostParams::default(), &next)
                    .await?;
                s.last_written.lock().insert(req.name.clone(), n + 1);
                Ok::<_, kube::Error>(Action::requeue_after(Duration::ZERO))
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    let done = seen.clone();
    eventually("every ConfigMap counted to its target", 60, || {
        let w = done.last_written.lock();
        ((0..keys).all(|i| w.get(&format!("cm-{i}")).copied() == Some(target))).then_some(())
    })
    .await;
    stop.cancel();
    let stopped: Result<Result<(), ManagerError>, _> = task.await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
    *seen.metrics.lock() = metrics.encode();
    seen
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// No reconcile ever reads an object older than that key's last write through the
    /// Manager's client.
    #[test]
    fn no_reconcile_reads_an_object_older_than_its_requests_last_write(
        delay_ms in 0u64..80,
        keys in 1usize..4,
        target in 2u64..6,
        workers in 1usize..4,
    ) {
        let seen = runtime().block_on(run(true, Duration::from_millis(delay_ms), keys, target, workers, Duration::from_secs(60)));
        let stale = seen.stale.lock().clone();
        prop_assert!(stale.is_empty(), "stale reads: {:?}", stale);
        prop_assert!(*seen.reads.lock() >= keys * target as usize);
    }
}

#[test]
fn without_it_a_slow_watch_makes_reconciles_read_their_old_writes() {
    // The same controller with the feature off: the requeue right after each write reads the
    // cache before the slowed watch delivered that write.
    let seen = runtime().block_on(run(
        false,
        Duration::from_millis(300),
        1,
        3,
        1,
        Duration::from_secs(60),
    ));
    assert!(
        !seen.stale.lock().is_empty(),
        "no stale read in {} reads",
        seen.reads.lock()
    );
}

#[test]
fn past_the_bound_a_live_read_keeps_the_stale_copy_from_the_reconcile() {
    // The watch lags 400 ms, the bound is 100 ms: every wait reaches the bound. The live read
    // finds the cache's copy older than the write, so the request waits another bound instead
    // of being reconciled from it; it is reconciled once the watch has delivered the write.
    let seen = runtime().block_on(run(
        true,
        Duration::from_millis(400),
        1,
        3,
        1,
        Duration::from_millis(100),
    ));
    assert!(
        seen.stale.lock().is_empty(),
        "stale reads: {:?}",
        seen.stale.lock()
    );
    assert!(
        seen.live_checks("stale") >= 1.0,
        "no live read found a stale copy:\n{}",
        seen.metrics.lock()
    );
    assert_eq!(seen.live_checks("failed"), 0.0);
}
