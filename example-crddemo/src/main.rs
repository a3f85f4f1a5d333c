//! `crddemo`: the Mydemo controller.
//!
//! ```text
//! crddemo --kubeconfig ~/.kube/config          # against a cluster
//! crddemo --embedded --demo                    # against an in-memory API server, with the walkthrough
//! ```

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::{Parser, ValueEnum};
use example_crddemo::controller::{Controller, Options};
use example_crddemo::embedded::{DEMO_NAME, Embedded, run_demo, wait_controller_idle};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use kube::config::{KubeConfigOptions, Kubeconfig};

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
        tracing_subscriber::EnvFilter::new("info,kube=warn,tower=warn,hyper=warn")
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

/// Completes on the first SIGINT or SIGTERM; a second one exits the process at once.
async fn shutdown_signal() {
    let first = wait_signal().await;
    tracing::info!(
        signal = first,
        "shutting down gracefully (send it again to exit at once)"
    );
    tokio::spawn(async {
        let second = wait_signal().await;
        tracing::warn!(signal = second, "second signal: exiting now");
        std::process::exit(130);
    });
}

#[cfg(unix)]
async fn wait_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut int), Ok(mut term)) => tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        },
        _ => {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

#[cfg(not(unix))]
async fn wait_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

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
        let controller = Controller::new(Clientset::new(client), opts)?;
        controller.run(shutdown_signal()).await?;
        return Ok(());
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
    let clientset = Clientset::new(embedded.client().await?);
    let controller = Controller::new(clientset.clone(), opts)?;
    if cli.demo {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
        let (lister, queue) = (controller.mydemos().clone(), controller.queue().clone());
        let demo = tokio::spawn(async move {
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
        controller.run(stop).await?;
        demo.await.context("demo task failed")??;
    } else {
        controller.run(shutdown_signal()).await?;
    }
    embedded.shutdown().await;
    if cli.kubeconfig.is_none() {
        let _ = std::fs::remove_file(&kubeconfig);
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
