//! Issue 31: reconcile capacity of `crddemo --sharded` with 1, 2, 3 and 4 replicas, and of one
//! leader-elected replica, under the same churn (the reference sharder's method: a churn that
//! one replica cannot keep up with, then what each setup gets done).
//!
//! Per setup, on a fresh in-memory API server (this process, served over HTTPS on loopback):
//! 1. start the replicas — the release `crddemo` binary, each its own process, with
//!    `--reconcile-delay` (every reconcile first waits that long, standing in for a call to a
//!    slow external system), `--workers` fixed (`max_concurrent_reconciles`), `--resync 0`,
//!    plain-HTTP metrics on a loopback port; sharded ones agree on the ring first;
//! 2. create the Mydemos and wait until all are Ready;
//! 3. churn: change one Mydemo's port every 1/rate seconds, round-robin, for the churn time,
//!    recording when each change was answered; an observer (a watch of its own) records when
//!    each Mydemo is Ready at the generation a change made;
//! 4. scrape every replica's `/metrics` at the churn's start and end.
//!
//! Reported per setup: reconciles per second over the churn
//! (`controller_runtime_reconcile_total`, summed over replicas), that throughput against one
//! sharded replica's, p99 of `workqueue_queue_duration_seconds` over the churn (the histogram's
//! buckets summed over replicas, linear inside a bucket as Prometheus' `histogram_quantile`),
//! and p99 time from a change to Ready (changes not Ready within the drain time after the
//! churn count as slower than any).
//!
//! ```text
//! scripts/bench-sharding.sh          # or: cargo bench -p example-crddemo --bench sharding_capacity
//! ```
//!
//! Environment: `SHARDBENCH_REPLICAS=1,2,3,4` (sharded setups; `SHARDBENCH_LEADER=0` skips the
//! leader-elected one), `SHARDBENCH_WORKERS=1`, `SHARDBENCH_DELAY_MS=50`, `SHARDBENCH_RATE=100`
//! (changes per second), `SHARDBENCH_SECS=20` (churn), `SHARDBENCH_OBJECTS=200`,
//! `SHARDBENCH_DRAIN_SECS=60`.
//! Run without `--bench` (as `cargo test --benches` does) it is a smoke test: 1 and 2 replicas,
//! 40 Mydemos, 3 s of churn at 20 changes per second.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_controller_runtime::sharding::{MEMBERS_ANNOTATION, RING_LABEL, ShardState};

const NS: &str = "bench";
const RING: &str = "crddemo-bench";

/// What to measure.
#[derive(Debug, Clone)]
struct Settings {
    replicas: Vec<usize>,
    leader: bool,
    workers: usize,
    delay: Duration,
    rate: f64,
    churn: Duration,
    objects: usize,
    drain: Duration,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: not a valid value")),
        Err(_) => default,
    }
}

impl Settings {
    fn from_env(smoke: bool) -> Settings {
        let replicas = std::env::var("SHARDBENCH_REPLICAS")
            .unwrap_or_else(|_| if smoke { "1,2" } else { "1,2,3,4" }.into());
        Settings {
            replicas: replicas
                .split(',')
                .map(|n| {
                    n.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("SHARDBENCH_REPLICAS: {n:?} is no number"))
                })
                .collect(),
            leader: env_or("SHARDBENCH_LEADER", 1u8) != 0,
            workers: env_or("SHARDBENCH_WORKERS", 1),
            delay: Duration::from_millis(env_or("SHARDBENCH_DELAY_MS", 50)),
            rate: env_or("SHARDBENCH_RATE", if smoke { 20.0 } else { 100.0 }),
            churn: Duration::from_secs(env_or("SHARDBENCH_SECS", if smoke { 3 } else { 20 })),
            objects: env_or("SHARDBENCH_OBJECTS", if smoke { 40 } else { 200 }),
            drain: Duration::from_secs(env_or("SHARDBENCH_DRAIN_SECS", 60)),
        }
    }
}

/// One replica process; stopped (SIGTERM, then SIGKILL) when dropped.
struct Replica {
    child: Child,
    metrics: SocketAddr,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    l.local_addr().unwrap_or_else(|e| panic!("{e}"))
}

fn start_replica(
    s: &Settings,
    kubeconfig: &Path,
    log_dir: &Path,
    name: &str,
    sharded: bool,
) -> Replica {
    let metrics = free_port();
    let log = std::fs::File::create(log_dir.join(format!("{name}.log")))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crddemo"));
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args([
            "--namespace",
            NS,
            "--resync",
            "0",
            "--enable-webhooks=false",
        ])
        .args(["--workers", &s.workers.to_string()])
        .arg(format!("--reconcile-delay={}ms", s.delay.as_millis()))
        .arg(format!("--metrics-bind-address={metrics}"))
        .args([
            "--metrics-secure=false",
            "--health-probe-bind-address=127.0.0.1:0",
        ])
        .args(["--leader-election-identity", name])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap_or_else(|e| panic!("{e}")))
        .stderr(log);
    if sharded {
        cmd.args(["--sharded", "--shard-ring", RING]);
    }
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("starting crddemo: {e}"));
    Replica { child, metrics }
}

/// `GET /metrics` over plain HTTP/1.1 (a blocking socket on a blocking thread): the parsed body.
async fn scrape(addr: SocketAddr) -> Option<prometheus_parse::Scrape> {
    let text = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let req = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).ok()?;
        Some(String::from_utf8_lossy(&buf).into_owned())
    })
    .await
    .ok()??;
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).ok()
}

/// The sums over replicas of what the table needs.
#[derive(Debug, Default, Clone)]
struct Counts {
    reconciles: f64,
    /// `le` → cumulative count of `workqueue_queue_duration_seconds{name="mydemo"}`.
    queue_buckets: BTreeMap<u64, f64>,
}

/// `le` as an orderable key (bits of a non-negative f64 order as the number does).
fn le_key(le: f64) -> u64 {
    le.to_bits()
}

async fn counts(replicas: &[Replica]) -> Counts {
    let mut c = Counts::default();
    for r in replicas {
        let Some(scrape) = scrape(r.metrics).await else {
            panic!("no metrics from {}", r.metrics);
        };
        for s in &scrape.samples {
            match (&s.value, s.metric.as_str()) {
                // The OpenMetrics family is `…_reconcile` (its sample `…_reconcile_total`).
                (
                    prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v),
                    "controller_runtime_reconcile_total" | "controller_runtime_reconcile",
                ) if s.labels.get("controller") == Some("mydemo") => {
                    c.reconciles += v;
                }
                (prometheus_parse::Value::Histogram(h), "workqueue_queue_duration_seconds")
                    if s.labels.get("name") == Some("mydemo") =>
                {
                    for b in h {
                        *c.queue_buckets.entry(le_key(b.less_than)).or_default() += b.count;
                    }
                }
                _ => {}
            }
        }
    }
    c
}

/// The `q` quantile of a cumulative histogram, Prometheus' way: linear inside the bucket.
fn histogram_quantile(q: f64, buckets: &BTreeMap<u64, f64>) -> Option<f64> {
    let total = buckets.values().copied().fold(0.0, f64::max);
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let mut prev_le = 0.0;
    let mut prev_count = 0.0;
    for (&le, &count) in buckets {
        let le = f64::from_bits(le);
        if count >= rank {
            if le.is_infinite() {
                return Some(prev_le);
            }
            let inside = count - prev_count;
            let frac = if inside > 0.0 {
                (rank - prev_count) / inside
            } else {
                1.0
            };
            return Some(prev_le + (le - prev_le) * frac);
        }
        prev_le = le;
        prev_count = count;
    }
    Some(prev_le)
}

fn mydemo(i: usize) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(format!("demo-{i:04}")),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: format!("192.0.2.{}", i % 250 + 1),
            port: 10000,
        },
        status: None,
    }
}

fn ready_generation(m: &Mydemo) -> Option<i64> {
    let st = m.status.as_ref()?;
    let ready = st
        .conditions
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    if ready { st.observed_generation } else { None }
}

/// Changes waiting for Ready: name → (generation, when the change was answered).
type Pending = Arc<Mutex<BTreeMap<String, Vec<(i64, Instant)>>>>;

/// One setup's figures.
#[derive(Debug)]
struct Row {
    setup: String,
    replicas: usize,
    throughput: f64,
    queue_p99: Option<f64>,
    ready_p99: Option<Duration>,
    changes: usize,
    not_ready: usize,
}

async fn wait_members(client: &kube::Client, names: &[String]) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NS);
    let want: std::collections::BTreeSet<String> = names.iter().cloned().collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = leases
            .list(&ListParams::default().labels(&format!("{RING_LABEL}={RING}")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let agreed = list
            .items
            .iter()
            .filter(|l| ShardState::of(l, jiff::Timestamp::now()) == ShardState::Ready)
            .map(|l| {
                let members: std::collections::BTreeSet<String> = l
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(MEMBERS_ANNOTATION))
                    .map(|m| m.split(',').map(String::from).collect())
                    .unwrap_or_default();
                (l.metadata.name.clone().unwrap_or_default(), members)
            })
            .collect::<BTreeMap<_, _>>();
        if agreed
            .keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            == want
            && agreed.values().all(|m| *m == want)
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the ring did not agree on {want:?}: {agreed:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run_setup(s: &Settings, n: usize, sharded: bool) -> Row {
    let crd = Path::new(env!("CARGO_MANIFEST_DIR")).join("crd/mydemo.yaml");
    let server = FakeApiServer::builder()
        .manifests(&crd)
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = dir.path().join("kubeconfig");
    served
        .write_kubeconfig(&kubeconfig)
        .unwrap_or_else(|e| panic!("{e}"));
    let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NS.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let names: Vec<String> = (0..n).map(|i| format!("replica-{i}")).collect();
    let replicas: Vec<Replica> = names
        .iter()
        .map(|name| start_replica(s, &kubeconfig, dir.path(), name, sharded))
        .collect();
    if sharded {
        wait_members(&client, &names).await;
    }

    // The observer: resolves pending changes when their generation is Ready.
    let api: Api<Mydemo> = Api::namespaced(client.clone(), NS);
    let pending: Pending = Arc::default();
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let ready_now: Arc<Mutex<BTreeMap<String, i64>>> = Arc::default();
    let observer = {
        let (pending, latencies, ready_now) =
            (pending.clone(), latencies.clone(), ready_now.clone());
        let stream = watcher(api.clone(), watcher::Config::default()).default_backoff();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(ev) = stream.next().await {
                let (Ok(watcher::Event::Apply(m)) | Ok(watcher::Event::InitApply(m))) = ev else {
                    continue;
                };
                let (Some(name), Some(g)) = (m.metadata.name.clone(), ready_generation(&m)) else {
                    continue;
                };
                let now = Instant::now();
                ready_now
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.clone(), g);
                let mut p = pending.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(list) = p.get_mut(&name) {
                    let mut l = latencies.lock().unwrap_or_else(|e| e.into_inner());
                    list.retain(|(gen_, at)| {
                        if *gen_ <= g {
                            l.push(now - *at);
                            false
                        } else {
                            true
                        }
                    });
                }
            }
        })
    };

    // The Mydemos, all Ready before the churn.
    // Through the generated client, which sends apiVersion and kind.
    let demos = Clientset::new(client.clone()).crddemo_v1().mydemos(NS);
    let demos = &demos;
    futures::stream::iter((0..s.objects).map(|i| async move {
        demos
            .create(&mydemo(i), &PostParams::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }))
    .buffer_unordered(16)
    .collect::<Vec<()>>()
    .await;
    let deadline = Instant::now() + Duration::from_secs(300);
    while ready_now.lock().unwrap_or_else(|e| e.into_inner()).len() < s.objects {
        assert!(
            Instant::now() < deadline,
            "the Mydemos never all became Ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The churn.
    let before = counts(&replicas).await;
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / s.rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut sent = 0usize;
    let mut writes = tokio::task::JoinSet::new();
    while started.elapsed() < s.churn {
        tick.tick().await;
        let name = format!("demo-{:04}", sent % s.objects);
        let port = 10001 + (sent / s.objects) as i32;
        sent += 1;
        let (api, pending) = (api.clone(), pending.clone());
        writes.spawn(async move {
            let m = api
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"spec": {"port": port}})),
                )
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let at = Instant::now();
            if let Some(g) = m.metadata.generation {
                pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(name)
                    .or_default()
                    .push((g, at));
            }
        });
    }
    let churned = started.elapsed();
    let after = counts(&replicas).await;
    while writes.join_next().await.is_some() {}

    // The drain: until every change is Ready, or the drain time is up.
    let deadline = Instant::now() + s.drain;
    loop {
        let left: usize = pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(Vec::len)
            .sum();
        if left == 0 || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    observer.abort();
    let not_ready: usize = pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .map(Vec::len)
        .sum();
    let mut lat = latencies.lock().unwrap_or_else(|e| e.into_inner()).clone();
    lat.sort();
    let total = lat.len() + not_ready;
    let rank = ((total as f64) * 0.99).ceil() as usize;
    let ready_p99 = (rank >= 1 && rank <= lat.len()).then(|| lat[rank - 1]);

    let mut buckets = after.queue_buckets.clone();
    for (le, c) in &before.queue_buckets {
        if let Some(v) = buckets.get_mut(le) {
            *v -= c;
        }
    }
    drop(replicas);
    Row {
        setup: if sharded {
            format!("sharded × {n}")
        } else {
            "leader-elected × 1".into()
        },
        replicas: n,
        throughput: (after.reconciles - before.reconciles) / churned.as_secs_f64(),
        queue_p99: histogram_quantile(0.99, &buckets),
        ready_p99,
        changes: total,
        not_ready,
    }
}

fn main() {
    let smoke = !std::env::args().any(|a| a == "--bench");
    let s = Settings::from_env(smoke);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("sharding_capacity: {s:?}");
    let mut rows = Vec::new();
    for &n in &s.replicas {
        eprintln!("sharding_capacity: sharded × {n}");
        rows.push(rt.block_on(run_setup(&s, n, true)));
    }
    if s.leader {
        eprintln!("sharding_capacity: leader-elected × 1");
        rows.push(rt.block_on(run_setup(&s, 1, false)));
    }
    let one = rows
        .iter()
        .find(|r| r.setup == "sharded × 1")
        .map(|r| r.throughput);
    println!(
        "\nchurn {} changes/s for {:?} over {} Mydemos; reconcile = {:?} wait + the sync; --workers {} per replica\n",
        s.rate, s.churn, s.objects, s.delay, s.workers
    );
    println!(
        "| setup | reconciles/s | × one replica | ideal | p99 queue wait (s) | p99 change → Ready | changes (not Ready after drain) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &rows {
        let ratio = one.map_or("–".into(), |o| format!("{:.2}", r.throughput / o));
        let ideal = f64::from(s.workers as u32) * r.replicas as f64 / s.delay.as_secs_f64();
        let q = r.queue_p99.map_or("–".into(), |q| format!("{q:.3}"));
        let ready = r.ready_p99.map_or(format!("> {:?} drain", s.drain), |d| {
            format!("{:.2} s", d.as_secs_f64())
        });
        println!(
            "| {} | {:.1} | {ratio} | {ideal:.0} | {q} | {ready} | {} ({}) |",
            r.setup, r.throughput, r.changes, r.not_ready
        );
        if smoke {
            assert!(r.throughput > 0.0, "{}: nothing reconciled", r.setup);
        }
    }
}
