//! Issue 28's admission figures: the round trip kube-apiserver v1.37 → validating webhook →
//! answer, with our webhook server (`kube_controller_runtime::webhook`) beside a minimal Go
//! controller-runtime v0.25 webhook doing the same check (`scripts/bench/webhook`), and beside
//! the same request with no webhook — all measured in one run against one kube-apiserver.
//!
//! Each webhook runs as its own process on loopback (ours: this program re-run with
//! `--serve-webhook`), with a certificate made here; one ValidatingWebhookConfiguration per
//! webhook selects its own namespace (`namespaceSelector`), so the three cases differ only in
//! the webhook called. Each case creates ConfigMaps one at a time (latency p50/p99 per create)
//! and then with 8 at once (creates per second); the cases take turns, `ROUNDS` times.
//!
//! ```text
//! scripts/bench-webhook.sh                                   # builds the Go peer, prints a table
//! WEBHOOK_BENCH_GO=/path/to/webhookbench cargo bench -p tests --bench admission
//! ```
//!
//! Without `--bench` (as `cargo test --benches` runs it) it is a smoke run of 20 requests per
//! case, and the Go case is skipped unless `WEBHOOK_BENCH_GO` names the binary.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use kube_controller_runtime::Manager;
use kube_controller_runtime::webhook::Webhook;
use kube_controller_runtime::webhook::admission::{Denial, Request, ValidationResult, Validator};
use kube_controller_runtime::webhook::local::LocalWebhooks;
use tests::apiserver::RealApiServer;

const CONCURRENCY: usize = 8;

/// The check both webhooks make: no `password` key.
struct NoPasswords;

impl Validator<ConfigMap> for NoPasswords {
    async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
        if cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
            return Err(Denial::forbidden("ConfigMaps hold no passwords"));
        }
        Ok(Vec::new())
    }
}

/// `--serve-webhook PORT CERT_DIR KUBECONFIG`: our webhook server alone, until stdin closes.
async fn serve_webhook(port: u16, cert_dir: PathBuf, kubeconfig: PathBuf) {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).unwrap_or_else(|e| panic!("{e}")),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let client = kube::Client::try_from(config).unwrap_or_else(|e| panic!("{e}"));
    let mgr = Manager::builder(client)
        .leader_election(false)
        .webhook_host("127.0.0.1")
        .webhook_port(port)
        .webhook_cert_dir(cert_dir)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_validator(NoPasswords)
        .complete()
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = async {
        // The parent holds our stdin: when it exits, so do we.
        let _ = tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        })
        .await;
    };
    println!("serving");
    mgr.start(stop).await.unwrap_or_else(|e| panic!("{e}"));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A webhook process, killed on drop.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &Path, args: &[String]) -> Peer {
    Peer(
        Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display())),
    )
}

fn config_map(name: &str, password: bool) -> ConfigMap {
    let key = if password { "password" } else { "k" };
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some([(key.to_string(), "v".to_string())].into()),
        ..ConfigMap::default()
    }
}

/// A ValidatingWebhookConfiguration for ConfigMaps of namespace `ns` (its URL's address and CA
/// are set by `LocalWebhooks::install`).
fn configuration(name: &str, ns: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {name}
webhooks:
  - name: {name}.bench.kube-codegen.io
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    clientConfig:
      url: https://127.0.0.1/validate--v1-configmap
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: {ns}
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [configmaps]
"#
    )
}

/// Waits until a ConfigMap with a password is refused in `ns` (the webhook is called).
async fn wait_called(client: &kube::Client, ns: &str) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut i = 0;
    loop {
        i += 1;
        match api
            .create(
                &PostParams::default(),
                &config_map(&format!("probe-{i}"), true),
            )
            .await
        {
            Err(kube::Error::Api(s)) if s.message.contains("ConfigMaps hold no passwords") => {
                return;
            }
            other => {
                assert!(
                    Instant::now() < deadline,
                    "the webhook of {ns} is not called: {other:?}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Latencies of `n` creates one at a time, then the rate of `n` creates `CONCURRENCY` at once.
async fn measure(client: &kube::Client, ns: &str, round: usize, n: usize) -> (Vec<f64>, f64) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let pp = PostParams::default();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let cm = config_map(&format!("seq-{round}-{i}"), false);
        let t = Instant::now();
        api.create(&pp, &cm)
            .await
            .unwrap_or_else(|e| panic!("{ns}: {e}"));
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (api, next) = (api.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    let cm = config_map(&format!("par-{round}-{i}"), false);
                    api.create(&PostParams::default(), &cm)
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap_or_else(|e| panic!("{e}"));
    }
    (lat, n as f64 / t.elapsed().as_secs_f64())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn run(bench: bool) {
    let n: usize = std::env::var("WEBHOOK_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { 500 } else { 20 });
    let rounds = if bench { 3 } else { 1 };
    let go = std::env::var_os("WEBHOOK_BENCH_GO").map(PathBuf::from);
    let server = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cert_dir = dir.path().join("certs");
    let local = LocalWebhooks::generate(&cert_dir).unwrap_or_else(|e| panic!("{e}"));

    let mut cases: Vec<(&str, String)> = vec![("no webhook", "bench-none".into())];
    let mut peers = Vec::new();
    let mut configurations = Vec::new();
    let ours = free_port();
    let me = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    peers.push(spawn(
        &me,
        &[
            "--serve-webhook".into(),
            ours.to_string(),
            cert_dir.display().to_string(),
            server.kubeconfig_path().display().to_string(),
        ],
    ));
    configurations.push((configuration("rust", "bench-rust"), ours));
    cases.push(("kube-codegen webhook", "bench-rust".into()));
    if let Some(go) = &go {
        let port = free_port();
        peers.push(spawn(
            go,
            &[
                format!("-port={port}"),
                format!("-cert-dir={}", cert_dir.display()),
            ],
        ));
        configurations.push((configuration("go", "bench-go"), port));
        cases.push(("controller-runtime webhook (Go)", "bench-go".into()));
    } else {
        eprintln!("admission: WEBHOOK_BENCH_GO not set, the Go peer is skipped");
    }
    for (_, ns) in &cases {
        tests::e2e::create_namespace(&client, ns)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    for (yaml, port) in &configurations {
        local
            .install(&client, yaml, SocketAddr::from(([127, 0, 0, 1], *port)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    for (_, ns) in cases.iter().skip(1) {
        wait_called(&client, ns).await;
    }

    let mut results: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); cases.len()];
    for round in 0..rounds {
        for (i, (_, ns)) in cases.iter().enumerate() {
            let (lat, rate) = measure(&client, ns, round, n).await;
            results[i].0.extend(lat);
            results[i].1.push(rate);
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nadmission round trip on kube-apiserver v1.37.1, {n} creates × {rounds} rounds per case (load average {})\n",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("| case | p50 ms | p99 ms | creates/s ({CONCURRENCY} at once, median of rounds) |");
    println!("| --- | ---: | ---: | ---: |");
    for ((name, _), (mut lat, mut rates)) in cases.iter().zip(results) {
        lat.sort_by(f64::total_cmp);
        rates.sort_by(f64::total_cmp);
        println!(
            "| {name} | {:.2} | {:.2} | {:.0} |",
            percentile(&lat, 0.5),
            percentile(&lat, 0.99),
            percentile(&rates, 0.5)
        );
    }
    drop(peers);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    if let Some(i) = args.iter().position(|a| a == "--serve-webhook") {
        let arg = |k: usize| args.get(i + k).cloned().unwrap_or_default();
        let port = arg(1).parse().unwrap_or_else(|e| panic!("port: {e}"));
        rt.block_on(serve_webhook(
            port,
            PathBuf::from(arg(2)),
            PathBuf::from(arg(3)),
        ));
        return;
    }
    let bench = args.iter().any(|a| a == "--bench");
    rt.block_on(run(bench));
}
