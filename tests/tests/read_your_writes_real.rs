//! Read-your-own-writes against kube-apiserver v1.37.1: the classic duplicate-create bug.
//!
//! A controller on the Manager reconciles parent ConfigMaps and owns Secrets; each reconcile
//! looks in its cache for the parent's child and creates one (`generateName`) when it sees
//! none, then asks to be reconciled again at once. The informers' watch streams are slowed on
//! the client side (every chunk of a watch response is held back), so the cache learns of each
//! create late. With read-your-own-writes on, no parent ever gets a second child; with it off
//! the same controller creates duplicates (so the test can fail). A third run keeps it on with
//! a bound shorter than the watch delay: the waits that reach the bound are counted in
//! `controller_runtime_read_your_writes_timeouts_total`, the live reads past it find the
//! cache's copy stale (`controller_runtime_read_your_writes_live_checks_total{result="stale"}`)
//! and requeue the parent instead of reconciling it, so still no parent gets a second child.
//! Both counters are scraped from the Manager's metrics registry.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Api;
use kube::api::{ListParams, PostParams};
use kube_codegen_runtime::Selector;
use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
use tests::apiserver::RealApiServer;
use tests::e2e::{create_namespace, init_tracing, run_id};
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Parents per run, and reconciles per parent.
const PARENTS: usize = 3;
const ROUNDS: usize = 4;

/// `client` with every chunk of every watch response held back `delay`.
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
                chunk.map(hyper::body::Frame::data)
            });
            Ok::<_, BoxError>(http::Response::from_parts(
                parts,
                StreamBody::new(frames.boxed()),
            ))
        }
    });
    kube::Client::new(svc, ns)
}

struct Run {
    /// Children per parent, listed live from kube-apiserver after the run.
    children: HashMap<String, usize>,
    /// `controller_runtime_read_your_writes_timeouts_total` of the controller.
    timeouts: f64,
    /// `controller_runtime_read_your_writes_live_checks_total{result="stale"}` of the controller.
    stale: f64,
}

/// The sum of `metric`'s samples of `controller` whose labels include `label` (or all).
fn scrape(text: &str, metric: &str, controller: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(metric) && l.contains(&format!("controller=\"{controller}\"")))
        .filter(|l| l.contains(label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn run(
    server: &RealApiServer,
    ns: &str,
    read_your_writes: bool,
    delay: Duration,
    bound: Duration,
) -> Run {
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    create_namespace(&client, ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let parents: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    for i in 0..PARENTS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("parent-{i}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        parents
            .create(&PostParams::default(), &cm)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mgr = Manager::builder(slowed_watch(client.clone(), delay))
        .read_your_own_writes(read_your_writes)
        .read_your_own_writes_timeout(bound)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (parent_lister, child_lister) = (mgr.lister::<ConfigMap>(), mgr.lister::<Secret>());
    let secrets: Api<Secret> = Api::namespaced(mgr.client(), ns);
    let rounds: Arc<std::sync::Mutex<HashMap<String, usize>>> = Arc::default();
    let r = rounds.clone();
    let name = format!("dup-{ns}");
    let ns_owned = ns.to_string();
    Controller::builder(&mgr)
        .named(&name)
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .complete(move |req: Request, _ctx: Context| {
            let (parent_lister, child_lister) = (parent_lister.clone(), child_lister.clone());
            let (secrets, r, ns) = (secrets.clone(), r.clone(), ns_owned.clone());
            async move {
                // Earlier runs' parents (same names, other namespaces) are in the cache too.
                if req.namespace.as_deref() != Some(ns.as_str()) {
                    return Ok(Action::done());
                }
                let Ok(parent) = parent_lister.namespaced(&ns).get(&req.name) else {
                    return Ok(Action::done());
                };
                let Some(uid) = parent.metadata.uid.clone() else {
                    return Ok(Action::done());
                };
                {
                    let mut rounds = r.lock().unwrap_or_else(|e| e.into_inner());
                    let n = rounds.entry(req.name.clone()).or_default();
                    if *n >= ROUNDS {
                        return Ok(Action::done());
                    }
                    *n += 1;
                }
                let has_child = child_lister
                    .namespaced(&ns)
                    .list(&Selector::everything())
                    .iter()
                    .any(|s| {
                        s.metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .any(|o| o.uid == uid)
                    });
                if !has_child {
                    let child = Secret {
                        metadata: ObjectMeta {
                            generate_name: Some(format!("{}-", req.name)),
                            owner_references: Some(vec![OwnerReference {
                                api_version: "v1".into(),
                                kind: "ConfigMap".into(),
                                name: req.name.clone(),
                                uid,
                                controller: Some(true),
                                ..OwnerReference::default()
                            }]),
                            ..ObjectMeta::default()
                        },
                        ..Secret::default()
                    };
                    secrets.create(&PostParams::default(), &child).await?;
                }
                Ok::<_, kube::Error>(Action::requeue_after(Duration::ZERO))
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let metrics = mgr.metrics().clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !(0..PARENTS).all(|i| {
        rounds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&format!("parent-{i}"))
            == Some(&ROUNDS)
    }) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "reconciles did not finish: {:?}",
            rounds.lock().unwrap_or_else(|e| e.into_inner())
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let text = metrics.encode();
    let timeouts = scrape(
        &text,
        "controller_runtime_read_your_writes_timeouts_total",
        &name,
        "",
    );
    let stale = scrape(
        &text,
        "controller_runtime_read_your_writes_live_checks_total",
        &name,
        "result=\"stale\"",
    );
    stop.cancel();
    let stopped = task.await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
    let mut children = HashMap::new();
    let live: Api<Secret> = Api::namespaced(client, ns);
    for s in live
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    {
        for o in s.metadata.owner_references.iter().flatten() {
            *children.entry(o.name.clone()).or_default() += 1;
        }
    }
    Run {
        children,
        timeouts,
        stale,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_watch_never_makes_a_controller_create_a_duplicate_child() {
    init_tracing();
    let server = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let id = run_id();
    let delay = Duration::from_millis(400);

    let on = run(
        &server,
        &format!("ryw-on-{id}"),
        true,
        delay,
        Duration::from_secs(30),
    )
    .await;
    for i in 0..PARENTS {
        assert_eq!(
            on.children.get(&format!("parent-{i}")),
            Some(&1),
            "with read-your-own-writes: {:?}",
            on.children
        );
    }
    assert_eq!(on.timeouts, 0.0);

    let off = run(
        &server,
        &format!("ryw-off-{id}"),
        false,
        delay,
        Duration::from_secs(30),
    )
    .await;
    assert!(
        off.children.values().any(|&n| n > 1),
        "without read-your-own-writes a slowed watch should let a reconcile create a duplicate: {:?}",
        off.children
    );

    // On, with a bound shorter than the watch delay: the waits that reach it are counted, and
    // the live read past it keeps the parent from being reconciled from the stale cache.
    let bounded = run(
        &server,
        &format!("ryw-bound-{id}"),
        true,
        Duration::from_millis(1500),
        Duration::from_millis(100),
    )
    .await;
    assert!(
        bounded.timeouts >= 1.0,
        "no wait counted as reaching the bound (children {:?})",
        bounded.children
    );
    assert!(
        bounded.stale >= 1.0,
        "no live read past the bound found the cache stale (children {:?})",
        bounded.children
    );
    assert!(
        bounded.children.values().all(|&n| n == 1),
        "past the bound a parent got a second child: {:?}",
        bounded.children
    );
}
