//! `kube-fake-apiserver`: the in-memory Kubernetes API server as a program, for tests in any
//! language (a stand-in for envtest's kube-apiserver + etcd). It serves HTTPS on loopback with
//! a bearer token and writes a kubeconfig for kubectl and client libraries.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kube_fake_apiserver::{
    Controller, FakeApiServer, REVIEW_KINDS, ServeOptions, UnknownController,
};

/// An in-memory Kubernetes API server (kube-apiserver semantics, no etcd).
#[derive(Debug, Parser)]
#[command(name = "kube-fake-apiserver", version, about)]
struct Args {
    /// The port to serve HTTPS on (0 picks a free one; the kubeconfig names it).
    #[arg(long, default_value_t = 6443)]
    port: u16,
    /// The address to bind. Anything but a loopback address makes the server reachable from
    /// other machines; it is refused unless given here explicitly.
    #[arg(long, default_value = "127.0.0.1")]
    bind_address: IpAddr,
    /// The bearer token clients must send (default: a random one, written to the kubeconfig).
    #[arg(long, env = "KUBE_FAKE_APISERVER_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Where to write a kubeconfig for the server (mode 0600 from creation, replaced
    /// atomically; a symbolic link or other non-regular file there is refused).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// CustomResourceDefinitions to install at start: a YAML/JSON file or a directory of them
    /// (repeatable).
    #[arg(long = "crd", value_name = "FILE_OR_DIR")]
    crds: Vec<PathBuf>,
    /// Objects to store at start: a YAML/JSON file or a directory of them (repeatable; after
    /// the CRDs).
    #[arg(long = "objects", value_name = "FILE_OR_DIR")]
    objects: Vec<PathBuf>,
    /// Keep the objects across restarts in this directory: restored at start (resourceVersions
    /// continue, so watches resume), saved every `--snapshot-interval` while they change and
    /// on a clean stop. A directory holding anything else is refused, never emptied.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Seconds between snapshots to `--data-dir` while objects change.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    snapshot_interval: u64,
    /// The controllers of kube-controller-manager to run beside the server, comma-separated
    /// (`garbagecollector`, `namespace`, and kube-apiserver's `coordinatedleaderelection`;
    /// empty for none, as a bare kube-apiserver).
    #[arg(long, value_name = "NAMES", default_value = "namespace", value_parser = controllers)]
    controllers: Controllers,
    /// Record every request and its answer (a watch's events as they are sent) to this file,
    /// one JSON object per line (the crate's `record` module documents the format).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Answer every request from this recording (made with --record) instead of from stored
    /// objects: the same answers to the same requests, in order; watches replay their events.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["crds", "objects", "data_dir"])]
    replay: Option<PathBuf>,
    /// Log filter (`RUST_LOG` syntax), for example `info` or `kube_fake_apiserver=debug`.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    log: String,
}

/// The `--controllers` list.
#[derive(Debug, Clone)]
struct Controllers(Vec<Controller>);

fn controllers(s: &str) -> Result<Controllers, UnknownController> {
    kube_fake_apiserver::parse_controllers(s).map(Controllers)
}

async fn run(args: Args) -> Result<(), String> {
    // Nothing reads the recorded requests of a served binary: keep none of them.
    // The review kinds, as kube-apiserver always serves them (`kubectl auth can-i`, `kubectl
    // auth whoami`).
    let mut builder = FakeApiServer::builder()
        .resources(REVIEW_KINDS)
        .max_recorded_actions(0)
        .with_controllers(args.controllers.0.iter().copied());
    if let Some(dir) = &args.data_dir {
        builder = builder.data_dir(dir);
    }
    if let Some(file) = &args.record {
        builder = builder.record(file);
    }
    if let Some(file) = &args.replay {
        builder = builder.replay(file);
    }
    for path in args.crds.iter().chain(&args.objects) {
        builder = builder
            .manifests(path)
            .map_err(|e| format!("loading {}: {e}", path.display()))?;
    }
    let server = builder
        .build()
        .map_err(|e| format!("starting the server: {e}"))?;
    let addr = SocketAddr::new(args.bind_address, args.port);
    let served = server
        .serve_with(ServeOptions {
            addr,
            token: args.token,
            allow_non_loopback: true,
            ..ServeOptions::default()
        })
        .await
        .map_err(|e| format!("serving on {addr}: {e}"))?;
    if let Some(path) = &args.kubeconfig {
        served
            .write_kubeconfig(path)
            .map_err(|e| format!("writing the kubeconfig: {e}"))?;
    }
    tracing::info!(
        url = %served.url(),
        kubeconfig = ?args.kubeconfig,
        "serving; stop with Ctrl-C or SIGTERM"
    );
    println!("{}", served.url());
    let snapshots = args.data_dir.clone().map(|dir| {
        let server = server.clone();
        let every = std::time::Duration::from_secs(args.snapshot_interval);
        tokio::spawn(async move {
            let mut saved_at = server.resource_version();
            loop {
                tokio::time::sleep(every).await;
                if server.resource_version() == saved_at {
                    continue;
                }
                let (s, d) = (server.clone(), dir.clone());
                match tokio::task::spawn_blocking(move || s.save_snapshot(d)).await {
                    Ok(Ok(saved)) => saved_at = saved.resource_version,
                    Ok(Err(e)) => tracing::warn!(error = %e, "periodic snapshot failed"),
                    Err(e) => tracing::warn!(error = %e, "periodic snapshot failed"),
                }
            }
        })
    });
    wait_for_signal().await;
    tracing::info!("shutting down");
    served.shutdown().await;
    if let Some(task) = snapshots {
        task.abort();
    }
    if let Some(dir) = &args.data_dir {
        let saved = server
            .save_snapshot(dir)
            .map_err(|e| format!("saving the last snapshot: {e}"))?;
        tracing::info!(
            objects = saved.objects,
            resource_version = saved.resource_version,
            dir = %dir.display(),
            "snapshot saved"
        );
    }
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C still stops");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&args.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kube-fake-apiserver: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kube-fake-apiserver: {e}");
            ExitCode::FAILURE
        }
    }
}
