//! `eru-operator`: rolls Deployments on cron schedules (ERU, "elegant rolling updates").
//!
//! ```text
//! eru-operator --namespace prod                # against a cluster, from $KUBECONFIG or in-cluster
//! eru-operator --embedded --demo               # against an in-memory API server, playing the story
//! eru-operator crd                             # print the CustomResourceDefinition
//! ```

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::{Parser, Subcommand, ValueEnum};
use example_eru::controller::{self, Options};
use example_eru::embedded::{Embedded, KUBECONFIG_MARKER, run_demo};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_codegen_runtime::InformerOptions;
use kube_controller_runtime::{Manager, shutdown_signal};

/// Rolls Deployments on cron schedules: a Deployment annotated mtsre.meitu.com/eru: "true" gets
/// an Eru (mtsre.meitu.com/v1) of its name, and at each slot of the Eru's schedule the operator
/// sets the pod-template annotation mtsre.meitu.com/restartedAt, as `kubectl rollout restart`
/// does.
#[derive(Parser, Debug)]
#[command(name = "eru-operator", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Path to a kubeconfig. Only required if out-of-cluster and $KUBECONFIG / ~/.kube/config
    /// are not set. With --embedded: where to write the embedded server's kubeconfig (a file
    /// that exists must be one --embedded wrote; others are never overwritten).
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,

    /// The address of the Kubernetes API server. Overrides any value in kubeconfig.
    #[arg(long, value_name = "URL")]
    master: Option<String>,

    /// Watch only this namespace (operator-sdk's WATCH_NAMESPACE); default: all namespaces.
    #[arg(long, value_name = "NS", env = "WATCH_NAMESPACE")]
    namespace: Option<String>,

    /// The schedule of Erus made for annotated Deployments that have no
    /// mtsre.meitu.com/eru-schedule annotation.
    #[arg(long, value_name = "CRON", default_value = "0 3 * * *")]
    default_schedule: String,

    /// Reconciles running at once.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    max_concurrent_reconciles: u16,

    /// Elect a leader through a Lease, so that only one replica rolls Deployments.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    leader_elect: bool,

    /// The name of the leader-election Lease.
    #[arg(long, default_value = "eru-operator", value_name = "NAME")]
    leader_election_id: String,

    /// The namespace of the leader-election Lease (default: the pod's namespace in a
    /// cluster, else --namespace, else the kubeconfig's).
    #[arg(long, value_name = "NS", env = "POD_NAMESPACE")]
    leader_election_namespace: Option<String>,

    /// This replica's identity in the Lease (default: $POD_NAME, else the host name and a
    /// random suffix).
    #[arg(long, value_name = "ID", env = "POD_NAME")]
    leader_election_identity: Option<String>,

    /// How long a leader's Lease is valid without renewal (followers wait this long).
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DURATION")]
    lease_duration: Duration,

    /// How long the leader keeps trying to renew before it gives up leading.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    renew_deadline: Duration,

    /// How often candidates try to acquire or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
    retry_period: Duration,

    /// Where /healthz and /readyz are served ("0" disables). Default: ":8081", or disabled
    /// with --embedded.
    #[arg(long, value_name = "ADDR")]
    health_probe_bind_address: Option<String>,

    /// Where /metrics is served ("0" disables). Default: ":8080", or disabled with --embedded.
    #[arg(long, value_name = "ADDR")]
    metrics_bind_address: Option<String>,

    /// Start an in-memory API server on loopback, install the CRD, write a kubeconfig and
    /// print how to use kubectl against it.
    #[arg(long)]
    embedded: bool,

    /// With --embedded: play the story (annotated Deployment, Eru, two rollouts on a
    /// per-second schedule, annotation removed, Eru gone) in --namespace (default "default"),
    /// then exit.
    #[arg(long, requires = "embedded")]
    demo: bool,

    /// With --embedded: the port to serve on (0 picks a free one).
    #[arg(long, default_value_t = 0, requires = "embedded")]
    port: u16,

    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the CustomResourceDefinition of the Eru kind (what
    /// deploy/crds/mtsre.meitu.com_erus_crd.yaml holds) and exit.
    Crd,
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
        .map_err(|_| format!("invalid duration {s:?}: expected e.g. 15s, 500ms, 1m"))?;
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
        Ok(text) if !text.contains(KUBECONFIG_MARKER) => Err(anyhow!(
            "--kubeconfig {}: the file exists and was not written by --embedded; refusing to overwrite it (name a new file)",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow!("--kubeconfig {}: {e}", path.display())),
    }
}

/// The manager the operator runs under: leader election, probes, metrics, the cache scoped to
/// `--namespace`.
fn manager(
    cli: &Cli,
    client: kube::Client,
    probes: &str,
    metrics: &str,
) -> anyhow::Result<Manager> {
    let mut informer_options = InformerOptions::default().strip_managed_fields();
    if let Some(ns) = &cli.namespace {
        informer_options = informer_options.namespace(ns.clone());
    }
    let mut builder = Manager::builder(client)
        .leader_election_id(cli.leader_election_id.clone())
        .leader_election(cli.leader_elect)
        .lease_duration(cli.lease_duration)
        .renew_deadline(cli.renew_deadline)
        .retry_period(cli.retry_period)
        .health_probe_bind_address(probes)
        .metrics_bind_address(metrics)
        .informer_options(informer_options);
    if let Some(id) = &cli.leader_election_identity {
        builder = builder.leader_election_identity(id.clone());
    }
    if let Some(ns) = cli
        .leader_election_namespace
        .as_ref()
        .or(cli.namespace.as_ref())
    {
        builder = builder.leader_election_namespace(ns.clone());
    }
    builder.build().context("invalid manager settings")
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let opts = Options {
        default_schedule: cli.default_schedule.clone(),
        max_concurrent_reconciles: usize::from(cli.max_concurrent_reconciles),
        instance: String::new(),
    };
    opts.validate().context("--default-schedule")?;
    if !cli.embedded {
        let config = client_config(&cli).await?;
        let client = kube::Client::try_from(config).context("cannot build a Kubernetes client")?;
        let probes = cli.health_probe_bind_address.as_deref().unwrap_or(":8081");
        let metrics = cli.metrics_bind_address.as_deref().unwrap_or(":8080");
        let mgr = manager(&cli, client, probes, metrics)?;
        controller::setup(&mgr, &opts, controller::system_clock())?;
        log_addresses(&mgr);
        mgr.start(shutdown_signal()).await?;
        return Ok(());
    }

    let kubeconfig = match &cli.kubeconfig {
        Some(path) => {
            refuse_foreign_kubeconfig(path)?;
            path.clone()
        }
        None => {
            std::env::temp_dir().join(format!("eru-embedded-{}.kubeconfig", std::process::id()))
        }
    };
    let embedded = Embedded::start(cli.port, &kubeconfig).await?;
    eprintln!("{}", embedded.usage());
    let client = embedded.client().await?;
    let mut cli = cli;
    if cli.leader_election_namespace.is_none() && cli.namespace.is_none() {
        cli.leader_election_namespace = Some("default".into());
    }
    let probes = cli.health_probe_bind_address.as_deref().unwrap_or("0");
    let metrics = cli.metrics_bind_address.as_deref().unwrap_or("0");
    let mgr = manager(&cli, client.clone(), probes, metrics)?;
    controller::setup(&mgr, &opts, controller::system_clock())?;
    log_addresses(&mgr);
    let result = if cli.demo {
        let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let demo = tokio::spawn(async move {
            let result = run_demo(&client, &namespace).await;
            let _ = done_tx.send(());
            result
        });
        let stop = async move {
            tokio::select! {
                _ = done_rx => {}
                () = shutdown_signal() => {}
            }
        };
        let managed = mgr.start(stop).await;
        let demo = demo.await.context("the demo task failed")?;
        managed?;
        demo.map_err(anyhow::Error::from)
    } else {
        mgr.start(shutdown_signal())
            .await
            .map_err(anyhow::Error::from)
    };
    embedded.shutdown().await;
    if cli.kubeconfig.is_none() {
        let _ = std::fs::remove_file(&kubeconfig);
    }
    result
}

fn log_addresses(mgr: &Manager) {
    for (what, addr) in mgr.bound_addresses() {
        tracing::info!(%addr, "serving {what}");
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Crd) = cli.command {
        let mut out = std::io::stdout().lock();
        return match out
            .write_all(example_eru::CRD_YAML.as_bytes())
            .and_then(|()| out.flush())
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: writing the CRD: {e}");
                ExitCode::FAILURE
            }
        };
    }
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
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("1e30h").is_err());
    }

    #[test]
    fn flags_parse_with_defaults() {
        let cli = Cli::try_parse_from(["eru-operator"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(cli.leader_elect);
        assert_eq!(cli.default_schedule, "0 3 * * *");
        let cli = Cli::try_parse_from([
            "eru-operator",
            "--leader-elect=false",
            "--embedded",
            "--demo",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!cli.leader_elect && cli.embedded && cli.demo);
        assert!(
            Cli::try_parse_from(["eru-operator", "--demo"]).is_err(),
            "--demo needs --embedded"
        );
    }
}
