//! `crddemo`: the Mydemo controller.
//!
//! ```text
//! crddemo --kubeconfig ~/.kube/config          # against a cluster
//! crddemo --embedded --demo                    # against an in-memory API server, with the walkthrough
//! ```
//!
//! It runs under a `kube_controller_runtime::Manager`: Lease leader election (on by default),
//! `/healthz` and `/readyz` on `--health-probe-bind-address`, `/metrics` on
//! `--metrics-bind-address`, graceful shutdown on SIGTERM/SIGINT.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::{Parser, ValueEnum};
use example_crddemo::controller::{Controller, Options, informer_options};
use example_crddemo::embedded::{DEMO_NAME, Embedded, run_demo, wait_controller_idle};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_controller_runtime::{Manager, ManagerError};

/// The Mydemo controller: for each Mydemo (crddemo.k8s.io/v1) it keeps a selector-less Service
/// and an EndpointSlice exposing spec.ip:spec.port, and reports a Ready condition and Events.
#[derive(Parser, Debug)]
#[command(name = "crddemo", version)]
struct Cli {
    /// Path to a kubeconfig. Only required if out-of-cluster and $KUBECONFIG / ~/.kube/config
    /// are not set. With --embedded: where to write the embedded server's kubeconfig (a file
    /// that exists must be one --embedded wrote; others are never overwritten).
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,

    /// The address of the Kubernetes API server. Overrides any value in kubeconfig.
    #[arg(long, value_name = "URL")]
    master: Option<String>,

    /// Worker tasks processing the queue concurrently.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,

    /// Watch only this namespace (default: all namespaces).
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,

    /// Resync period: re-deliver every cached object this often ("30s", "5m", "0" to disable).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    resync: Duration,

    /// Start an in-memory API server on loopback, install the CRD, write a kubeconfig and print
    /// how to use kubectl against it.
    #[arg(long)]
    embedded: bool,

    /// With --embedded: run the walkthrough (create example-mydemo at 127.0.0.1:8080, change the
    /// port to 9090, delete it) in --namespace (default "default"), then exit.
    #[arg(long, requires = "embedded")]
    demo: bool,

    /// With --embedded: the port to serve on (0 picks a free one).
    #[arg(long, default_value_t = 0, requires = "embedded")]
    port: u16,

    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,

    /// Enable leader election: only the replica holding the Lease runs the controller
    /// (--leader-elect=false to turn it off).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    leader_elect: bool,

    /// The name of the Lease used for leader election.
    #[arg(long, default_value = "crddemo-controller", value_name = "NAME")]
    leader_election_id: String,

    /// The namespace of the Lease (default: the in-cluster namespace, else the kubeconfig
    /// context's, else "default").
    #[arg(long, value_name = "NS")]
    leader_election_namespace: Option<String>,

    /// How long followers wait on an unchanged Lease before taking over.
    #[arg(long, default_value = "15s", value_name = "DURATION", value_parser = parse_duration)]
    leader_elect_lease_duration: Duration,

    /// How long the leader tries to renew the Lease before it gives up.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    leader_elect_renew_deadline: Duration,

    /// Time between leader election attempts.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    leader_elect_retry_period: Duration,

    /// The address the probe endpoints (/healthz, /readyz) bind to ("0" disables).
    #[arg(long, default_value = ":8081", value_name = "ADDR")]
    health_probe_bind_address: String,

    /// The address the metrics endpoint (/metrics) binds to ("0" disables).
    #[arg(long, default_value = ":8080", value_name = "ADDR")]
    metrics_bind_address: String,

    /// How long a graceful stop waits for syncs in progress.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    graceful_shutdown_timeout: Duration,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?}: expected e.g. 30s, 5m, 1h"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("invalid duration unit in {s:?}: use ms, s, m or h")),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("invalid duration {s:?}: too long"))
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(
            "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn",
        )
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}

use kube_controller_runtime::shutdown_signal;

async fn client_config(cli: &Cli) -> anyhow::Result<kube::Config> {
    let hint = "pass --kubeconfig (or set $KUBECONFIG), run inside a cluster, or try --embedded to use an in-memory API server";
    let mut config = match &cli.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("invalid kubeconfig {}", path.display()))?
        }
        None => match kube::Config::infer().await {
            Ok(c) => c,
            Err(e) => match &cli.master {
                Some(master) => kube::Config::new(
                    master
                        .parse()
                        .with_context(|| format!("invalid --master {master:?}"))?,
                ),
                None => return Err(anyhow!("no Kubernetes configuration found ({e}): {hint}")),
            },
        },
    };
    if let Some(master) = &cli.master {
        config.cluster_url = master
            .parse()
            .with_context(|| format!("invalid --master {master:?}"))?;
    }
    Ok(config)
}

/// `--embedded --kubeconfig PATH` writes PATH: refuse when it holds a kubeconfig that an
/// earlier `--embedded` run did not write (a user's `~/.kube/config`, say).
fn refuse_foreign_kubeconfig(path: &std::path::Path) -> anyhow::Result<()> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.contains(example_crddemo::embedded::KUBECONFIG_MARKER) => Err(anyhow!(
            "--kubeconfig {}: the file exists and was not written by --embedded; refusing to overwrite it (name a new file)",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow!("--kubeconfig {}: {e}", path.display())),
    }
}

/// The manager the controller runs under, configured by the flags.
fn manager(cli: &Cli, client: kube::Client, opts: &Options) -> anyhow::Result<Manager> {
    let mut b = Manager::builder(client)
        .leader_election(cli.leader_elect)
        .leader_election_id(&cli.leader_election_id)
        .lease_duration(cli.leader_elect_lease_duration)
        .renew_deadline(cli.leader_elect_renew_deadline)
        .retry_period(cli.leader_elect_retry_period)
        .health_probe_bind_address(&cli.health_probe_bind_address)
        .metrics_bind_address(&cli.metrics_bind_address)
        .graceful_shutdown_timeout(cli.graceful_shutdown_timeout)
        .informer_options(informer_options(opts));
    if let Some(ns) = &cli.leader_election_namespace {
        b = b.leader_election_namespace(ns);
    }
    let mgr = b.build().map_err(flag_error)?;
    mgr.add_healthz_check("ping", kube_controller_runtime::healthz::ping)?;
    Ok(mgr)
}

/// A manager error, naming the flag to change where one is to blame.
fn flag_error(e: ManagerError) -> anyhow::Error {
    match e {
        ManagerError::InvalidOption { option, message } => {
            let flag = match option {
                "metrics bind address" => "--metrics-bind-address",
                "health probe bind address" => "--health-probe-bind-address",
                _ => option,
            };
            anyhow!("{flag}: {message}")
        }
        ManagerError::Bind { what, addr, source } => {
            let flag = if what == "metrics" {
                "--metrics-bind-address"
            } else {
                "--health-probe-bind-address"
            };
            anyhow!("{flag} {addr}: cannot listen for {what}: {source}")
        }
        ManagerError::LeaderElection(
            le @ kube_controller_runtime::LeaderElectionError::InvalidConfig(_),
        ) => anyhow!(
            "--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period: {le}"
        ),
        ManagerError::LeaderElection(
            le @ kube_controller_runtime::LeaderElectionError::NamespaceNotFound { .. },
        ) => anyhow!("--leader-election-namespace: {le}"),
        other => anyhow::Error::from(other),
    }
}

/// Runs the controller under `mgr` until `stop`; a lost election or a failure is an error.
async fn run_managed(
    mgr: Manager,
    opts: Options,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let controller = Controller::with_manager(&mgr, opts)?;
    mgr.add(controller)?;
    let identity = mgr.identity().to_string();
    tracing::info!(%identity, "starting manager");
    mgr.start(stop).await.map_err(flag_error)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let opts = Options {
        workers: usize::from(cli.workers),
        namespace: cli.namespace.clone(),
        resync: (!cli.resync.is_zero()).then_some(cli.resync),
        instance: String::new(),
    };
    if !cli.embedded {
        let config = client_config(&cli).await?;
        let client = kube::Client::try_from(config).context("cannot build a Kubernetes client")?;
        let mgr = manager(&cli, client, &opts)?;
        return run_managed(mgr, opts, shutdown_signal()).await;
    }

    let kubeconfig = match &cli.kubeconfig {
        Some(path) => {
            refuse_foreign_kubeconfig(path)?;
            path.clone()
        }
        None => std::env::temp_dir().join(format!(
            "crddemo-embedded-{}.kubeconfig",
            std::process::id()
        )),
    };
    let embedded = Embedded::start(cli.port, &kubeconfig).await?;
    eprintln!("{}", embedded.usage());
    // Whatever happens, the embedded server stops and its temporary kubeconfig goes.
    let result = run_embedded(&cli, &embedded, opts).await;
    embedded.shutdown().await;
    if cli.kubeconfig.is_none() {
        let _ = std::fs::remove_file(&kubeconfig);
    }
    result
}

/// `--embedded`: the controller (and with `--demo` the walkthrough) against the in-memory
/// server.
async fn run_embedded(cli: &Cli, embedded: &Embedded, opts: Options) -> anyhow::Result<()> {
    let client = embedded.client().await?;
    let clientset = Clientset::new(client.clone());
    let mgr = manager(cli, client, &opts)?;
    if cli.demo {
        let controller = Controller::with_manager(&mgr, opts)?;
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
        let (lister, queue) = (controller.mydemos().clone(), controller.queue().clone());
        let elected = mgr.clone();
        let demo = tokio::spawn(async move {
            // Nothing before the manager has passed its preflight and started the controller.
            elected.elected().await;
            let mut result = run_demo(&clientset, &namespace).await;
            if result.is_ok() {
                result = wait_controller_idle(&lister, &queue, &namespace, DEMO_NAME).await;
            }
            if result.is_ok() {
                // Only once the controller has handled the deletion, so the log reads in order.
                tracing::info!(step = 3, "demo: Mydemo deleted; walkthrough complete");
            }
            let _ = done_tx.send(());
            result
        });
        let stop = async move {
            tokio::select! {
                _ = done_rx => {}
                () = shutdown_signal() => {}
            }
        };
        mgr.add(controller)?;
        mgr.start(stop).await.map_err(flag_error)?;
        demo.await.context("demo task failed")??;
    } else {
        run_managed(mgr, opts, shutdown_signal()).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_format);
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("1e30h").is_err(), "no panic on overflow");
        assert!(parse_duration("99999999999999999999999h").is_err());
    }
}
