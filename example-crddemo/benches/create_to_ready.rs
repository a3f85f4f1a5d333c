//! Issues 5 and 13: time from create to Ready for N Mydemos against the fake API server, for
//! three stacks running the same reconcile in the same run:
//!
//! * `ours` — the hand-written loop (generated informers + listers + rate-limited work queue,
//!   `Options { workers }`), on its own;
//! * `builder` — `examples/builder.rs`: the same sync handler assembled by the
//!   kube-controller-runtime Builder (`for_`/`owns`, `max_concurrent_reconciles(workers)`) under
//!   a Manager (leader election off, metrics registry on);
//! * `builder-ryow-off` — the same Builder controller with read-your-own-writes switched off
//!   (`ManagerBuilder::read_your_own_writes(false)`), to measure what it costs (issue 33);
//! * `kube-runtime` — kube-rs's own `kube::runtime::Controller` (`.owns(..)`,
//!   `Config::concurrency(workers)`).
//!
//! Per cell (stack × N × workers), on a fresh Tokio runtime and a fresh fake clientset seeded
//! with 10 namespaces:
//! 1. start the controller and wait until its three list+watch pairs (Mydemos, Services,
//!    EndpointSlices) have reached their watch (the peer also waits for its Mydemo store);
//! 2. start an observer (a `kube::runtime::watcher` on Mydemos, its own client) and wait for its
//!    initial list;
//! 3. create N Mydemos over the 10 namespaces with 16 concurrent creators (their own client),
//!    recording when each create returns;
//! 4. record, per object, the first watch event where `Ready=True` for its generation.
//!
//! Reported: first create → last Ready, Ready/s, per-object create (returned) → Ready
//! p50/p99/max, and the API requests each stack made per Mydemo until it settled; for the two
//! Builder stacks also reconciles/s (`controller_runtime_reconcile_total` over the same window)
//! and `controller_runtime_read_your_writes_timeouts_total` (reconciles that started before the
//! cache had caught up with their own writes).
//!
//! ```text
//! cargo bench -p example-crddemo --bench create_to_ready               # N 1000, 10000 × workers 1, 2, 4
//! cargo bench -p example-crddemo --bench create_to_ready -- --quick    # N 1000 × workers 1, 4
//! ```
//!
//! Environment: `CTRLBENCH_QUICK=1` (as `--quick`), `CTRLBENCH_N=1000,10000`,
//! `CTRLBENCH_WORKERS=1,2,4`, `CTRLBENCH_STACKS=ours,builder,builder-ryow-off,kube-runtime`,
//! `CTRLBENCH_CREATORS=16`,
//! `CTRLBENCH_CELL_TIMEOUT_SECS=600` (a cell that runs longer reports its partial numbers).
//! Run without `--bench` (as `cargo test --benches` does) it is a smoke test: N=200, 2 workers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use example_crddemo::controller::reconcile::SyncError;
use example_crddemo::controller::resources::{
    self, corrected_endpoint_slice, corrected_service, desired_endpoint_slice, desired_service,
    endpoint_slice_matches, is_owned_by, service_matches, service_name,
};
use example_crddemo::controller::status::{
    Desired, REASON_INVALID, REASON_SYNCED, differs, next_status, ready_condition,
};
use example_crddemo::controller::validate::validate;
use example_crddemo::controller::{Controller as OurController, ControllerError, Options};
use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::{
    Action, Config as KubeControllerConfig, Controller as KubeController,
};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use kube_codegen_runtime::api_status::{is_already_exists, is_conflict};
use kube_codegen_runtime::fake::{FakeHandle, to_value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const NAMESPACES: usize = 10;

#[allow(dead_code)] // its `main` is the example's
#[path = "../examples/builder.rs"]
mod builder_example;

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// `example_crddemo::controller::Controller`: generated informers, listers, work queue.
    Ours,
    /// `examples/builder.rs` under a Manager.
    Builder,
    /// `examples/builder.rs` under a Manager with read-your-own-writes off.
    BuilderRyowOff,
    /// `kube::runtime::Controller` with the same reconcile, through `kube::Api`.
    KubeRuntime,
}

impl Stack {
    fn name(self) -> &'static str {
        match self {
            Stack::Ours => "ours (informers + workqueue)",
            Stack::Builder => "ours (Builder + Manager)",
            Stack::BuilderRyowOff => "ours (Builder + Manager, read-your-own-writes off)",
            Stack::KubeRuntime => "kube-runtime Controller",
        }
    }

    fn parse(s: &str) -> Option<Stack> {
        match s.trim() {
            "ours" => Some(Stack::Ours),
            "builder" => Some(Stack::Builder),
            "builder-ryow-off" => Some(Stack::BuilderRyowOff),
            "kube-runtime" | "kube" | "peer" => Some(Stack::KubeRuntime),
            _ => None,
        }
    }
}

struct Config {
    mode: &'static str,
    sizes: Vec<usize>,
    workers: Vec<usize>,
    stacks: Vec<Stack>,
    creators: usize,
    repeats: usize,
    cell_timeout: Duration,
}

fn env_list<T: std::str::FromStr>(name: &str) -> Option<Vec<T>> {
    let v = std::env::var(name).ok()?;
    let parsed: Vec<T> = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    (!parsed.is_empty()).then_some(parsed)
}

impl Config {
    fn from_env_and_args() -> Config {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "--quick")
            || std::env::var("CTRLBENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        // `cargo bench` passes `--bench`; `cargo test --benches` does not: a smoke run then.
        let bench = args.iter().any(|a| a == "--bench");
        let (mode, sizes, workers, repeats) = if quick {
            ("quick", vec![1_000], vec![1, 4], 3)
        } else if bench {
            ("full", vec![1_000, 10_000], vec![1, 2, 4], 5)
        } else {
            ("smoke (no --bench)", vec![200], vec![2], 1)
        };
        let stacks = std::env::var("CTRLBENCH_STACKS")
            .ok()
            .map(|v| v.split(',').filter_map(Stack::parse).collect::<Vec<_>>())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| vec![Stack::Ours, Stack::Builder, Stack::KubeRuntime]);
        Config {
            mode,
            sizes: env_list("CTRLBENCH_N").unwrap_or(sizes),
            workers: env_list("CTRLBENCH_WORKERS").unwrap_or(workers),
            stacks,
            creators: env_list("CTRLBENCH_CREATORS")
                .and_then(|v: Vec<usize>| v.first().copied())
                .unwrap_or(16)
                .max(1),
            repeats: env_list("CTRLBENCH_REPEATS")
                .and_then(|v: Vec<usize>| v.first().copied())
                .unwrap_or(repeats)
                .max(1),
            cell_timeout: Duration::from_secs(
                env_list("CTRLBENCH_CELL_TIMEOUT_SECS")
                    .and_then(|v: Vec<u64>| v.first().copied())
                    .unwrap_or(600),
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The peer: the same reconcile on kube::runtime::Controller
// ---------------------------------------------------------------------------------------------

struct PeerCtx {
    client: kube::Client,
    recorder: Recorder,
    errors: AtomicUsize,
}

fn api_err(action: &str) -> impl FnOnce(kube::Error) -> SyncError + '_ {
    move |source| SyncError::Api {
        action: action.into(),
        source,
    }
}

/// Create-or-update without a cache: what our `ensure_service` / `ensure_endpoint_slice` do on a
/// lister miss (create; on AlreadyExists read it, check ownership, correct it if it drifted).
async fn create_or_update<K>(
    api: &Api<K>,
    owner: &Mydemo,
    want: &K,
    kind: &'static str,
    matches: fn(&K, &K) -> bool,
    correct: fn(&K, &K) -> K,
) -> Result<bool, SyncError>
where
    K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = want.meta().name.clone().unwrap_or_default();
    let live = match api.create(&PostParams::default(), want).await {
        Ok(_) => return Ok(true),
        Err(e) if is_already_exists(&e) => api
            .get(&name)
            .await
            .map_err(api_err("reading owned object"))?,
        Err(e) => return Err(api_err("creating owned object")(e)),
    };
    if !is_owned_by(live.meta(), owner) {
        return Err(SyncError::NotOwned {
            kind,
            name,
            mydemo: owner.metadata.name.clone().unwrap_or_default(),
        });
    }
    if matches(&live, want) {
        return Ok(false);
    }
    api.replace(&name, &PostParams::default(), &correct(&live, want))
        .await
        .map_err(api_err("updating owned object"))?;
    Ok(true)
}

const STATUS_CONFLICT_RETRIES: usize = 5;

/// Our `write_status`, through `kube::Api`: a JSON merge patch on `/status` carrying the whole
/// status and the cached `resourceVersion` (optimistic concurrency, like our PUT: `kube::Api`'s
/// `replace_status` would serialize a `Mydemo` without `apiVersion`/`kind`, which our generated
/// client adds), when it would change; on a conflict re-read and retry.
async fn peer_write_status(
    api: &Api<Mydemo>,
    mydemo: &Mydemo,
    desired: &Desired,
) -> Result<bool, SyncError> {
    let name = mydemo.metadata.name.clone().unwrap_or_default();
    let mut current = mydemo.clone();
    let mut attempt = 0;
    loop {
        let next = next_status(&current, desired);
        if !differs(&current, &next) {
            return Ok(attempt > 0);
        }
        let patch = serde_json::json!({
            "metadata": {"resourceVersion": current.metadata.resource_version},
            "status": next,
        });
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(true),
            Err(e) if is_conflict(&e) && attempt < STATUS_CONFLICT_RETRIES => {
                let fresh = api
                    .get(&name)
                    .await
                    .map_err(api_err("re-reading Mydemo after a conflict"))?;
                if fresh.metadata.generation != mydemo.metadata.generation {
                    return Ok(false);
                }
                current = fresh;
                attempt += 1;
            }
            Err(e) => return Err(api_err("updating Mydemo status")(e)),
        }
    }
}

/// The peer's reconcile: validate, create-or-update Service and EndpointSlice (owner references
/// from `resources`), write the Ready status, publish `Synced` when something changed.
async fn peer_reconcile(mydemo: Arc<Mydemo>, ctx: Arc<PeerCtx>) -> Result<Action, SyncError> {
    if mydemo.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let ns = mydemo.metadata.namespace.clone().unwrap_or_default();
    let mydemos: Api<Mydemo> = Api::namespaced(ctx.client.clone(), &ns);
    let (desired, changed) = match validate(&mydemo.spec) {
        // (Our controller also deletes owned objects here; the benchmark never takes this path.)
        Err(invalid) => (
            Desired {
                ready: false,
                reason: REASON_INVALID,
                message: invalid.to_string(),
                service_name: None,
            },
            false,
        ),
        Ok(ep) => {
            let services: Api<Service> = Api::namespaced(ctx.client.clone(), &ns);
            let slices: Api<EndpointSlice> = Api::namespaced(ctx.client.clone(), &ns);
            let svc = create_or_update(
                &services,
                &mydemo,
                &desired_service(&mydemo, ep),
                "Service",
                service_matches,
                corrected_service,
            )
            .await?;
            let slice = create_or_update(
                &slices,
                &mydemo,
                &desired_endpoint_slice(&mydemo, ep),
                "EndpointSlice",
                endpoint_slice_matches,
                corrected_endpoint_slice,
            )
            .await?;
            let desired = Desired {
                ready: true,
                reason: REASON_SYNCED,
                message: format!(
                    "Service {} exposes {}",
                    service_name(&mydemo),
                    SocketAddr::new(ep.ip, ep.port)
                ),
                service_name: Some(service_name(&mydemo)),
            };
            (desired, svc || slice)
        }
    };
    let status_changed = peer_write_status(&mydemos, &mydemo, &desired).await?;
    if changed || status_changed {
        let (type_, reason, note) = if desired.ready {
            (
                EventType::Normal,
                REASON_SYNCED,
                "Mydemo synced successfully".to_string(),
            )
        } else {
            (EventType::Warning, REASON_INVALID, desired.message.clone())
        };
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        // Best effort, as in ours.
        let _ = ctx.recorder.publish(&event, &mydemo.object_ref(&())).await;
    }
    Ok(Action::await_change())
}

fn peer_error_policy(mydemo: Arc<Mydemo>, error: &SyncError, ctx: Arc<PeerCtx>) -> Action {
    if ctx.errors.fetch_add(1, Ordering::Relaxed) == 0 {
        let name = mydemo.metadata.name.as_deref().unwrap_or_default();
        eprintln!("  first kube-runtime reconcile error ({name}): {error}");
    }
    // Our queue's per-item limiter starts at 5 ms.
    Action::requeue(Duration::from_millis(5))
}

// ---------------------------------------------------------------------------------------------
// Running a stack
// ---------------------------------------------------------------------------------------------

enum Running {
    Ours {
        stop: oneshot::Sender<()>,
        task: JoinHandle<Result<(), ControllerError>>,
    },
    Builder {
        stop: oneshot::Sender<()>,
        task: JoinHandle<Result<(), kube_controller_runtime::ManagerError>>,
        metrics: kube_controller_runtime::Metrics,
    },
    Peer {
        stop: oneshot::Sender<()>,
        task: JoinHandle<()>,
        store: Store<Mydemo>,
        ctx: Arc<PeerCtx>,
    },
}

fn start_ours(clientset: Clientset, workers: usize) -> Running {
    let controller = OurController::new(
        clientset,
        Options {
            workers,
            namespace: None,
            resync: None,
            instance: "bench".into(),
            reconcile_delay: std::time::Duration::ZERO,
        },
    )
    .unwrap_or_else(|e| panic!("controller: {e}"));
    let (stop, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = rx.await;
    }));
    Running::Ours { stop, task }
}

fn start_builder(clientset: Clientset, workers: usize, read_your_own_writes: bool) -> Running {
    let opts = Options {
        workers,
        namespace: None,
        resync: None,
        instance: "bench".into(),
        reconcile_delay: std::time::Duration::ZERO,
    };
    let mgr = kube_controller_runtime::Manager::builder(clientset.client().clone())
        .informer_options(example_crddemo::controller::informer_options(&opts))
        .read_your_own_writes(read_your_own_writes)
        .build()
        .unwrap_or_else(|e| panic!("manager: {e}"));
    let controller =
        builder_example::controller(&mgr, workers).unwrap_or_else(|e| panic!("controller: {e}"));
    mgr.add(controller)
        .unwrap_or_else(|e| panic!("manager: {e}"));
    let metrics = mgr.metrics().clone();
    let (stop, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(mgr.start(async move {
        let _ = rx.await;
    }));
    Running::Builder {
        stop,
        task,
        metrics,
    }
}

fn start_peer(client: kube::Client, workers: usize) -> Running {
    let ctx = Arc::new(PeerCtx {
        recorder: Recorder::new(
            client.clone(),
            Reporter {
                controller: "crddemo-kube-runtime".into(),
                instance: Some("bench".into()),
            },
        ),
        client: client.clone(),
        errors: AtomicUsize::new(0),
    });
    let owned = format!("app.kubernetes.io/managed-by={}", resources::MANAGED_BY);
    let controller = KubeController::new(
        Api::<Mydemo>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns(
        Api::<Service>::all(client.clone()),
        watcher::Config::default().labels(&owned),
    )
    .owns(
        Api::<EndpointSlice>::all(client),
        watcher::Config::default().labels(&owned),
    )
    .with_config(
        KubeControllerConfig::default().concurrency(u16::try_from(workers).unwrap_or(u16::MAX)),
    );
    let store = controller.store();
    let (stop, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(
        controller
            .graceful_shutdown_on(async move {
                let _ = rx.await;
            })
            .run(peer_reconcile, peer_error_policy, ctx.clone())
            .for_each(|_| async {}),
    );
    Running::Peer {
        stop,
        task,
        store,
        ctx,
    }
}

/// Waits until the stack's list+watch pairs on Mydemos, Services and EndpointSlices have each
/// reached the watch (the informers' initial lists are in their caches).
async fn wait_for_sync(handle: &FakeHandle, running: &Running) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let actions = handle.actions();
        let watching = |res: &str| {
            actions
                .iter()
                .any(|a| a.verb == "watch" && a.resource == res)
        };
        if watching("mydemos") && watching("services") && watching("endpointslices") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the controller's informers did not sync within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    if let Running::Peer { store, .. } = running {
        store
            .wait_until_ready()
            .await
            .unwrap_or_else(|e| panic!("peer store: {e}"));
    }
}

async fn stop(running: Running) -> usize {
    let limit = Duration::from_secs(30);
    match running {
        Running::Ours { stop, task } => {
            let _ = stop.send(());
            match tokio::time::timeout(limit, task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => eprintln!("  our controller stopped with an error: {e}"),
                Ok(Err(e)) => eprintln!("  our controller task failed: {e}"),
                Err(_) => eprintln!("  our controller did not stop within {limit:?}"),
            }
            0
        }
        Running::Builder { stop, task, .. } => {
            let _ = stop.send(());
            match tokio::time::timeout(limit, task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => eprintln!("  the manager stopped with an error: {e}"),
                Ok(Err(e)) => eprintln!("  the manager task failed: {e}"),
                Err(_) => eprintln!("  the manager did not stop within {limit:?}"),
            }
            0
        }
        Running::Peer {
            stop, task, ctx, ..
        } => {
            let _ = stop.send(());
            if tokio::time::timeout(limit, task).await.is_err() {
                eprintln!("  kube-runtime controller did not stop within {limit:?}");
            }
            ctx.errors.load(Ordering::Relaxed)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Creators and the Ready observer
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Progress {
    created: Vec<Option<Instant>>,
    ready: Vec<Option<Instant>>,
    n_created: usize,
    n_ready: usize,
    create_errors: usize,
}

type Shared = Arc<Mutex<Progress>>;

fn mydemo(i: usize) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(format!("demo-{i}")),
            namespace: Some(format!("ns-{}", i % NAMESPACES)),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255),
            port: 1024 + (i % 60_000) as i32,
        },
        status: None,
    }
}

fn index_of(m: &Mydemo) -> Option<usize> {
    m.metadata
        .name
        .as_deref()?
        .strip_prefix("demo-")?
        .parse()
        .ok()
}

fn is_ready(m: &Mydemo) -> bool {
    let generation = m.metadata.generation;
    let observed = m.status.as_ref().and_then(|s| s.observed_generation) == generation;
    observed
        && ready_condition(m)
            .is_some_and(|c| c.status == "True" && c.observed_generation == generation)
}

async fn create_all(clientset: Clientset, n: usize, creators: usize, progress: Shared) {
    futures::stream::iter(0..n)
        .map(|i| {
            let clientset = clientset.clone();
            async move {
                let m = mydemo(i);
                let ns = m.metadata.namespace.clone().unwrap_or_default();
                let res = clientset
                    .crddemo_v1()
                    .mydemos(&ns)
                    .create(&m, &PostParams::default())
                    .await;
                (i, res.map(|_| Instant::now()))
            }
        })
        .buffer_unordered(creators)
        .for_each(|(i, res)| {
            let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
            match res {
                Ok(at) => {
                    p.created[i] = Some(at);
                    p.n_created += 1;
                }
                Err(e) => {
                    if p.create_errors == 0 {
                        eprintln!("  create demo-{i} failed: {e}");
                    }
                    p.create_errors += 1;
                }
            }
            futures::future::ready(())
        })
        .await;
}

/// Watches Mydemos and records when each first reports Ready=True for its generation; returns
/// once all `n` have.
async fn observe(api: Api<Mydemo>, n: usize, progress: Shared, synced: oneshot::Sender<()>) {
    let mut synced = Some(synced);
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    let mut stream = std::pin::pin!(stream);
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(watcher::Event::InitDone) => {
                if let Some(tx) = synced.take() {
                    let _ = tx.send(());
                }
            }
            Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) if is_ready(&m) => {
                let now = Instant::now();
                let Some(i) = index_of(&m).filter(|i| *i < n) else {
                    continue;
                };
                let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
                if p.ready[i].is_none() {
                    p.ready[i] = Some(now);
                    p.n_ready += 1;
                    if p.n_ready == n {
                        return;
                    }
                }
            }
            Ok(_) => {}
            Err(e) => eprintln!("  observer watch error (retrying): {e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One cell
// ---------------------------------------------------------------------------------------------

struct CellResult {
    stack: Stack,
    n: usize,
    workers: usize,
    load_start: String,
    load_end: String,
    created: usize,
    ready: usize,
    create_errors: usize,
    /// First create issued → last create returned.
    creates_done: Option<Duration>,
    /// First create issued → last Ready seen (or the time-out).
    total: Duration,
    latencies: Vec<Duration>,
    timed_out: bool,
    /// API requests from the first create until the stack settled, by `verb resource[/sub]`.
    requests: BTreeMap<String, usize>,
    owned_ok: bool,
    reconcile_errors: usize,
    /// Builder stacks: reconciles from the first create to the last Ready, and until settled.
    reconciles: Option<(u64, u64)>,
    /// Builder stacks: reconciles that started before the cache caught up with their own
    /// writes (until settled).
    ryow_timeouts: Option<u64>,
}

/// The sum of the samples of counter `name` in the Manager's registry.
fn counter_sum(metrics: &kube_controller_runtime::Metrics, name: &str) -> u64 {
    let text = metrics.encode();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("the Manager's metrics do not parse: {e}"));
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v as u64,
            ref other => panic!("{name} is no counter: {other:?}"),
        })
        .sum()
}

const RECONCILES: &str = "controller_runtime_reconcile_total";
const RYOW_TIMEOUTS: &str = "controller_runtime_read_your_writes_timeouts_total";

fn builder_metrics(running: &Running) -> Option<&kube_controller_runtime::Metrics> {
    match running {
        Running::Builder { metrics, .. } => Some(metrics),
        _ => None,
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn request_counts(handle: &FakeHandle) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for a in handle.actions() {
        let sub = a.subresource.map(|s| format!("/{s}")).unwrap_or_default();
        *out.entry(format!("{} {}{sub}", a.verb, a.resource))
            .or_insert(0) += 1;
    }
    out
}

/// Waits (outside the timed window) until the server's resourceVersion has not moved for
/// 500 ms, so the request counts include the reconciles that follow Ready (polling the
/// resourceVersion, not the recorded actions, which would clone them all each time).
async fn settle(handle: &FakeHandle) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut last, mut since) = (handle.resource_version(), Instant::now());
    while Instant::now() < deadline && since.elapsed() < Duration::from_millis(500) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let rv = handle.resource_version();
        if rv != last {
            (last, since) = (rv, Instant::now());
        }
    }
}

async fn cell(stack: Stack, n: usize, workers: usize, cfg: &Config) -> CellResult {
    let load_start = loadavg();
    let seed: Vec<_> = (0..NAMESPACES)
        .map(|i| {
            to_value(&Namespace {
                metadata: ObjectMeta {
                    name: Some(format!("ns-{i}")),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            })
            .unwrap_or_else(|e| panic!("namespace: {e}"))
        })
        .collect();
    let (clientset, handle) =
        fake::Clientset::new(seed).unwrap_or_else(|e| panic!("fake clientset: {e}"));
    let running = match stack {
        Stack::Ours => start_ours(clientset.clone(), workers),
        Stack::Builder => start_builder(clientset.clone(), workers, true),
        Stack::BuilderRyowOff => start_builder(clientset.clone(), workers, false),
        Stack::KubeRuntime => start_peer(clientset.client().clone(), workers),
    };
    wait_for_sync(&handle, &running).await;

    let progress: Shared = Arc::new(Mutex::new(Progress {
        created: vec![None; n],
        ready: vec![None; n],
        ..Progress::default()
    }));
    let client = |what: &str| {
        handle
            .client()
            .unwrap_or_else(|e| panic!("{what} client: {e}"))
    };
    let (synced_tx, synced_rx) = oneshot::channel();
    let mut observer = tokio::spawn(observe(
        Api::all(client("observer")),
        n,
        progress.clone(),
        synced_tx,
    ));
    let _ = synced_rx.await;
    handle.clear_actions();
    let reconciles_before = builder_metrics(&running).map(|m| counter_sum(m, RECONCILES));

    let creators = Clientset::new(client("creator"));
    let t0 = Instant::now();
    let create_task = tokio::spawn(create_all(creators, n, cfg.creators, progress.clone()));
    let timed_out = tokio::time::timeout(cfg.cell_timeout, &mut observer)
        .await
        .is_err();
    let end = Instant::now();
    let reconciles_at_end = builder_metrics(&running).map(|m| counter_sum(m, RECONCILES));
    if timed_out {
        observer.abort();
        create_task.abort();
    } else {
        let _ = create_task.await;
    }

    let (result_core, load_end) = {
        let p = progress.lock().unwrap_or_else(|e| e.into_inner());
        let last_ready = p.ready.iter().flatten().max().copied();
        let total = if timed_out {
            end - t0
        } else {
            last_ready.map_or(end - t0, |r| r - t0)
        };
        let creates_done = (p.n_created == n)
            .then(|| p.created.iter().flatten().max().map(|c| *c - t0))
            .flatten();
        let mut latencies: Vec<Duration> = p
            .created
            .iter()
            .zip(&p.ready)
            .filter_map(|(c, r)| Some(r.as_ref()?.saturating_duration_since(*c.as_ref()?)))
            .collect();
        latencies.sort_unstable();
        (
            (
                p.n_created,
                p.n_ready,
                p.create_errors,
                creates_done,
                total,
                latencies,
            ),
            loadavg(),
        )
    };
    let (created, ready, create_errors, creates_done, total, latencies) = result_core;

    if !timed_out {
        settle(&handle).await;
    }
    let requests = request_counts(&handle);
    let reconciles = match (
        reconciles_before,
        reconciles_at_end,
        builder_metrics(&running),
    ) {
        (Some(before), Some(at_end), Some(m)) => Some((
            at_end.saturating_sub(before),
            counter_sum(m, RECONCILES).saturating_sub(before),
        )),
        _ => None,
    };
    let ryow_timeouts = builder_metrics(&running).map(|m| counter_sum(m, RYOW_TIMEOUTS));
    let owned_ok = !timed_out
        && handle.list::<Service>().map(|v| v.len()).unwrap_or(0) == n
        && handle.list::<EndpointSlice>().map(|v| v.len()).unwrap_or(0) == n;
    let reconcile_errors = stop(running).await;
    CellResult {
        stack,
        n,
        workers,
        load_start,
        load_end,
        created,
        ready,
        create_errors,
        creates_done,
        total,
        latencies,
        timed_out,
        requests,
        owned_ok,
        reconcile_errors,
        reconciles,
        ryow_timeouts,
    }
}

fn run_cell(stack: Stack, n: usize, workers: usize, cfg: &Config) -> CellResult {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let r = rt.block_on(cell(stack, n, workers, cfg));
    rt.shutdown_timeout(Duration::from_secs(5));
    r
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn per_object(r: &CellResult) -> String {
    let total: usize = r.requests.values().sum();
    let n = r.n.max(1) as f64;
    let mut parts: Vec<String> = r
        .requests
        .iter()
        .filter(|(_, c)| **c > 0)
        .map(|(k, c)| format!("{k} {:.2}", *c as f64 / n))
        .collect();
    parts.insert(0, format!("**{:.2}** total", total as f64 / n));
    parts.join(", ")
}

/// The runs of one stack × N × workers: the run with the median total stands for the cell.
struct Cell {
    median: CellResult,
    totals: Vec<Duration>,
}

impl Cell {
    fn from_runs(mut runs: Vec<CellResult>) -> Cell {
        let totals = runs.iter().map(|r| r.total).collect();
        // A timed-out run stands for the cell; otherwise the median by total time.
        runs.sort_by_key(|r| (!r.timed_out, r.total));
        let pick = if runs[0].timed_out { 0 } else { runs.len() / 2 };
        Cell {
            median: runs.swap_remove(pick),
            totals,
        }
    }
}

fn print_report(cfg: &Config, cells: &[Cell]) {
    println!();
    println!(
        "### create → Ready against the fake API server ({} mode, {} creators, {} namespaces, {} CPUs, median of {} runs)",
        cfg.mode,
        cfg.creators,
        NAMESPACES,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cfg.repeats,
    );
    println!();
    println!(
        "| N | workers | stack | first create → last Ready (s) | creates returned (s) | Ready/s | p50 (ms) | p99 (ms) | max (ms) | Ready | all runs: total (s) | load avg start → end |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|");
    for c in cells {
        let r = &c.median;
        let secs = r.total.as_secs_f64();
        let ready = if r.timed_out {
            format!(
                "**timed out**: {}/{} Ready, {} created",
                r.ready, r.n, r.created
            )
        } else {
            format!("{}/{}", r.ready, r.n)
        };
        let runs: Vec<String> = c
            .totals
            .iter()
            .map(|t| format!("{:.2}", t.as_secs_f64()))
            .collect();
        println!(
            "| {} | {} | {} | {:.2} | {} | {:.0} | {} | {} | {} | {} | {} | {} → {} |",
            r.n,
            r.workers,
            r.stack.name(),
            secs,
            r.creates_done
                .map_or("—".into(), |d| format!("{:.2}", d.as_secs_f64())),
            if secs > 0.0 {
                r.ready as f64 / secs
            } else {
                0.0
            },
            ms(pct(&r.latencies, 50.0)),
            ms(pct(&r.latencies, 99.0)),
            ms(r.latencies.last().copied().unwrap_or_default()),
            ready,
            runs.join(", "),
            r.load_start,
            r.load_end,
        );
    }
    println!();
    println!(
        "Each row is the run with the median total (its latencies, its load). API requests per Mydemo from the first create until the stack settled (creators included), same run:"
    );
    println!();
    for c in cells {
        let r = &c.median;
        let mut notes = Vec::new();
        if r.create_errors > 0 {
            notes.push(format!("{} create errors", r.create_errors));
        }
        if r.reconcile_errors > 0 {
            notes.push(format!("{} reconcile errors", r.reconcile_errors));
        }
        if !r.owned_ok && !r.timed_out {
            notes.push("Service/EndpointSlice count ≠ N".into());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        println!(
            "- N={} workers={} {}: {}{notes}",
            r.n,
            r.workers,
            r.stack.name(),
            per_object(r)
        );
    }
    let builders: Vec<&CellResult> = cells
        .iter()
        .map(|c| &c.median)
        .filter(|r| r.reconciles.is_some())
        .collect();
    if builders.is_empty() {
        return;
    }
    println!();
    println!(
        "Builder stacks, read-your-own-writes on and off (same runs as above; reconciles from `controller_runtime_reconcile_total`, GETs are the live GETs the server answered):"
    );
    println!();
    println!(
        "| N | workers | stack | reconciles to last Ready | reconciles/s | reconciles until settled | live GETs | GETs per Mydemo | read-your-writes timeouts |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for r in builders {
        let (to_ready, settled) = r.reconciles.unwrap_or_default();
        let secs = r.total.as_secs_f64();
        let gets: usize = r
            .requests
            .iter()
            .filter(|(k, _)| k.starts_with("get "))
            .map(|(_, c)| c)
            .sum();
        println!(
            "| {} | {} | {} | {} | {:.0} | {} | {} | {:.2} | {} |",
            r.n,
            r.workers,
            r.stack.name(),
            to_ready,
            if secs > 0.0 {
                to_ready as f64 / secs
            } else {
                0.0
            },
            settled,
            gets,
            gets as f64 / r.n.max(1) as f64,
            r.ryow_timeouts.unwrap_or_default(),
        );
    }
}

fn main() -> std::process::ExitCode {
    let cfg = Config::from_env_and_args();
    eprintln!(
        "create_to_ready: {} mode, N {:?}, workers {:?}, stacks {:?}, {} runs per cell, load avg {}",
        cfg.mode,
        cfg.sizes,
        cfg.workers,
        cfg.stacks,
        cfg.repeats,
        loadavg()
    );
    let mut cells = Vec::new();
    for &n in &cfg.sizes {
        for &workers in &cfg.workers {
            let mut runs: Vec<Vec<CellResult>> = cfg.stacks.iter().map(|_| Vec::new()).collect();
            for run in 1..=cfg.repeats {
                // The stacks alternate run by run, so drifting machine load hits both alike.
                for (i, &stack) in cfg.stacks.iter().enumerate() {
                    // A stack over the time limit is not repeated (its partial numbers stand).
                    if runs[i].last().is_some_and(|r| r.timed_out) {
                        continue;
                    }
                    let r = run_cell(stack, n, workers, &cfg);
                    eprintln!(
                        "  N={n} workers={workers} {} run {run}/{}: {:.2} s, {}/{} Ready{}, p50 {} ms, p99 {} ms, load {}",
                        stack.name(),
                        cfg.repeats,
                        r.total.as_secs_f64(),
                        r.ready,
                        r.n,
                        if r.timed_out { " (TIMED OUT)" } else { "" },
                        ms(pct(&r.latencies, 50.0)),
                        ms(pct(&r.latencies, 99.0)),
                        r.load_end
                    );
                    runs[i].push(r);
                }
            }
            cells.extend(
                runs.into_iter()
                    .filter(|r| !r.is_empty())
                    .map(Cell::from_runs),
            );
        }
    }
    print_report(&cfg, &cells);
    // A cell that timed out or left the wrong number of owned objects is a failed run, not a
    // figure: say so in the exit status too (the table above still shows it).
    let failed: Vec<String> = cells
        .iter()
        .map(|c| &c.median)
        .filter(|r| r.timed_out || !r.owned_ok)
        .map(|r| format!("N={} workers={} {}", r.n, r.workers, r.stack.name()))
        .collect();
    if failed.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!(
            "create_to_ready: failed runs (timed out or wrong Service/EndpointSlice count): {failed:?}"
        );
        std::process::ExitCode::FAILURE
    }
}
