//! Issue 4's figures: the in-memory fake API server beside a real kube-apiserver v1.37 with etcd,
//! measured in the same run with the same `kube::Client` code.
//!
//! Three targets: the fake in process (its `tower::Service` under the client), the fake served
//! over HTTP on loopback, and kube-apiserver + etcd (HTTPS on loopback, from
//! `tests::apiserver::RealApiServer`). On each, in a fresh namespace:
//!
//! * create 10,000 ConfigMaps, then get each of them, then update each (PUT with its
//!   resourceVersion), all with `CONCURRENCY` tasks: operations per second;
//! * list the 10,000 (no paging) `LISTS` times in a row: lists per second;
//! * one watch fanned out to 10 watchers: 10 watches of a second namespace, then 1,000 creates
//!   there; events delivered per second (10 × 1,000 / time from the first create until every
//!   watcher has seen every ADDED).
//!
//! ```text
//! cargo bench -p tests --bench fake_vs_apiserver              # prints a markdown table
//! FAKEBENCH_OBJECTS=2000 cargo bench -p tests --bench fake_vs_apiserver
//! ```
//!
//! The real server comes from `$KUBE_CODEGEN_K8S_BIN` or `scripts/build-kube-apiserver.sh`.
//! Run without `--bench` (as `cargo test --benches` does) it is a smoke run with 200 objects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, ObjectMeta, PostParams, WatchEvent, WatchParams};
use kube_codegen_runtime::fake::FakeApiServer;
use tests::apiserver::RealApiServer;

const CONCURRENCY: usize = 8;
const LISTS: usize = 10;
const WATCHERS: usize = 10;
const WATCH_EVENTS: usize = 1_000;

/// One target's figures, in operations (or events) per second.
struct Row {
    target: &'static str,
    create: f64,
    get: f64,
    update: f64,
    list: f64,
    watch: f64,
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("app".to_string(), "bench".to_string())].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            [
                ("key".to_string(), "value".to_string()),
                ("other".to_string(), "0123456789abcdef".to_string()),
            ]
            .into(),
        ),
        ..ConfigMap::default()
    }
}

async fn namespace(client: &kube::Client, name: &str) {
    tests::e2e::create_namespace(client, name)
        .await
        .unwrap_or_else(|e| panic!("creating namespace {name}: {e}"));
}

/// Runs `op(i)` for every `i < n` on `CONCURRENCY` tasks; returns operations per second.
async fn rate<F, Fut>(n: usize, op: F) -> f64
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (next, op) = (next.clone(), op.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    op(i).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap_or_else(|e| panic!("worker: {e}"));
    }
    n as f64 / started.elapsed().as_secs_f64()
}

async fn measure(target: &'static str, client: kube::Client, objects: usize) -> Row {
    let ns = format!("bench-{}", target.split_whitespace().next().unwrap_or("x"));
    namespace(&client, &ns).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let name = |i: usize| format!("cm-{i:05}");

    let created: Arc<Vec<std::sync::Mutex<Option<ConfigMap>>>> =
        Arc::new((0..objects).map(|_| std::sync::Mutex::new(None)).collect());
    let create = {
        let (api, created) = (api.clone(), created.clone());
        rate(objects, move |i| {
            let (api, created) = (api.clone(), created.clone());
            async move {
                let cm = api
                    .create(&PostParams::default(), &config_map(&name(i)))
                    .await
                    .unwrap_or_else(|e| panic!("create: {e}"));
                *created[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(cm);
            }
        })
        .await
    };
    let get = {
        let api = api.clone();
        rate(objects, move |i| {
            let api = api.clone();
            async move {
                // A fixed stride visits every object once, not in creation order.
                let j = (i * 7_919) % objects;
                api.get(&name(j))
                    .await
                    .unwrap_or_else(|e| panic!("get: {e}"));
            }
        })
        .await
    };
    let update = {
        let (api, created) = (api.clone(), created.clone());
        rate(objects, move |i| {
            let (api, created) = (api.clone(), created.clone());
            async move {
                let mut cm = created[i]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_else(|| panic!("object {i} was not created"));
                cm.data
                    .get_or_insert_default()
                    .insert("key".into(), "updated".into());
                api.replace(&name(i), &PostParams::default(), &cm)
                    .await
                    .unwrap_or_else(|e| panic!("update: {e}"));
            }
        })
        .await
    };
    let started = Instant::now();
    for _ in 0..LISTS {
        let list = api
            .list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("list: {e}"));
        assert_eq!(list.items.len(), objects, "{target}: list length");
    }
    let list = LISTS as f64 / started.elapsed().as_secs_f64();
    let watch = fan_out(&client, target).await;
    eprintln!(
        "  {target}: create {create:.0}/s, get {get:.0}/s, update {update:.0}/s, list {list:.2}/s, watch {watch:.0} events/s"
    );
    Row {
        target,
        create,
        get,
        update,
        list,
        watch,
    }
}

/// 10 watchers of one namespace, 1,000 creates: events delivered per second.
async fn fan_out(client: &kube::Client, target: &str) -> f64 {
    let ns = format!("watch-{}", target.split_whitespace().next().unwrap_or("x"));
    namespace(client, &ns).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let rv = api
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("list: {e}"))
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let stream = api
            .watch(&WatchParams::default().timeout(290), &rv)
            .await
            .unwrap_or_else(|e| panic!("watch: {e}"));
        watchers.push(tokio::spawn(async move {
            let mut stream = Box::pin(stream);
            let mut seen = 0;
            while seen < WATCH_EVENTS {
                match stream.next().await {
                    Some(Ok(WatchEvent::Added(_))) => seen += 1,
                    Some(Ok(_)) => {}
                    Some(Err(e)) => panic!("watch stream: {e}"),
                    None => panic!("watch ended after {seen} events"),
                }
            }
            Instant::now()
        }));
    }
    let started = Instant::now();
    rate(WATCH_EVENTS, move |i| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &config_map(&format!("w-{i:05}")))
                .await
                .unwrap_or_else(|e| panic!("create: {e}"));
        }
    })
    .await;
    let mut last = started;
    for w in watchers {
        let done = tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .unwrap_or_else(|_| panic!("{target}: watchers did not see every event in 120 s"))
            .unwrap_or_else(|e| panic!("watcher: {e}"));
        last = last.max(done);
    }
    (WATCHERS * WATCH_EVENTS) as f64 / (last - started).as_secs_f64()
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let objects: usize = std::env::var("FAKEBENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { 10_000 } else { 200 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let rows = rt.block_on(async {
        eprintln!(
            "fake_vs_apiserver: {objects} objects, {CONCURRENCY} concurrent requests, {WATCHERS} watchers x {WATCH_EVENTS} events"
        );
        let mut rows = Vec::new();

        let fake = FakeApiServer::builder()
            .history_capacity(objects * 4 + WATCH_EVENTS * 2)
            .build()
            .unwrap_or_else(|e| panic!("fake: {e}"));
        let client = fake.client().unwrap_or_else(|e| panic!("{e}"));
        rows.push(measure("fake (in process)", client, objects).await);

        let fake = FakeApiServer::builder()
            .history_capacity(objects * 4 + WATCH_EVENTS * 2)
            .build()
            .unwrap_or_else(|e| panic!("fake: {e}"));
        let served = fake
            .serve(([127, 0, 0, 1], 0).into())
            .await
            .unwrap_or_else(|e| panic!("serve: {e}"));
        let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
        rows.push(measure("fake (HTTP, loopback)", client, objects).await);
        served.shutdown().await;

        let real = RealApiServer::start()
            .await
            .unwrap_or_else(|e| panic!("kube-apiserver: {e}"));
        let client = real.client().unwrap_or_else(|e| panic!("{e}"));
        rows.push(measure("kube-apiserver + etcd (HTTPS, loopback)", client, objects).await);
        drop(real);
        rows
    });
    println!();
    println!(
        "### Fake API server vs kube-apiserver v1.37 + etcd ({objects} ConfigMaps, {CONCURRENCY} concurrent requests, {} CPUs)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "| target | create/s | get/s | update/s | list of {objects}/s | watch fan-out to {WATCHERS}: events/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.0} |",
            r.target, r.create, r.get, r.update, r.list, r.watch
        );
    }
}
