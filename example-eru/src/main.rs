//! `eru-operator`: rolls Deployments on cron schedules (ERU, "elegant rolling updates").
//!
//! ```text
//! eru-operator --namespace prod                # against a cluster, from $KUBECONFIG or in-cluster
//! eru-operator --embedded --demo               # against an in-memory API server, playing the story
//! eru-operator crd                             # print the CustomResourceDefinition
//! ```

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use example_eru::controller::{self, Options};
use example_eru::embedded::{Embedded, run_demo};
use example_eru::webhook::DefaultTimeZone;
use kube_codegen_runtime::InformerOptions;
use kube_controller_runtime::flags::{LogFlags, ManagerFlags, init_logging};
use kube_controller_runtime::operator::{load_config, refuse_foreign_kubeconfig};
use kube_controller_runtime::webhook::local::EmbeddedWebhooks;
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

    /// controller-runtime's flags: --kubeconfig, --namespace (or WATCH_NAMESPACE), leader
    /// election, probes, metrics. With --embedded, --kubeconfig is where to write the embedded
    /// server's kubeconfig (a file that exists must be one --embedded wrote; others are never
    /// overwritten), and neither probes nor metrics listen unless their address is given.
    #[command(flatten)]
    manager: ManagerFlags,

    /// The address of the Kubernetes API server. Overrides any value in kubeconfig.
    #[arg(long, value_name = "URL")]
    master: Option<String>,

    /// The schedule of Erus made for annotated Deployments that have no
    /// mtsre.meitu.com/eru-schedule annotation.
    #[arg(long, value_name = "CRON", default_value = "0 3 * * *")]
    default_schedule: String,

    /// The time zone (IANA, e.g. Asia/Shanghai) the defaulting webhook gives an Eru created or
    /// updated without spec.timeZone.
    #[arg(long, value_name = "ZONE", default_value = "UTC")]
    default_time_zone: String,

    /// Serve the defaulting webhook (Kubebuilder's ENABLE_WEBHOOKS). In a cluster it needs the
    /// certificate in --webhook-cert-dir and deploy/webhook.yaml; with --embedded the
    /// certificate is made and the webhook registered in the in-memory server.
    #[arg(long, env = "ENABLE_WEBHOOKS", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    enable_webhooks: bool,

    /// Reconciles running at once.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    max_concurrent_reconciles: u16,

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

    /// --log-format.
    #[command(flatten)]
    log: LogFlags,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the CustomResourceDefinition of the Eru kind (what
    /// deploy/crds/mtsre.meitu.com_erus_crd.yaml holds) and exit.
    Crd,
}

/// What kube-apiserver needs to call the defaulting webhook (`--embedded` installs the
/// MutatingWebhookConfiguration pointing at this process; the Service and the certificate's
/// documents are for a cluster).
const WEBHOOK_MANIFESTS: &str = include_str!("../deploy/webhook.yaml");

/// The Lease's name unless --leader-election-id says otherwise.
const LEADER_ELECTION_ID: &str = "eru-operator";

/// controller-runtime's `GetConfig` for `--kubeconfig`, then `--master` ([`load_config`]).
async fn config(cli: &Cli) -> anyhow::Result<kube::Config> {
    Ok(load_config(cli.manager.kubeconfig.as_deref(), cli.master.as_deref()).await?)
}

/// The manager the operator runs under: leader election, probes, metrics, the cache scoped to
/// `--namespace`, managed fields stripped; with `webhook`, the defaulting webhook (on
/// loopback with a certificate made for the run when `local`).
fn manager(
    flags: &ManagerFlags,
    client: kube::Client,
    webhook: Option<DefaultTimeZone>,
    local: Option<&EmbeddedWebhooks>,
) -> anyhow::Result<Manager> {
    let mut builder = flags.builder(client, LEADER_ELECTION_ID).informer_options(
        flags.informer_options(InformerOptions::default().strip_managed_fields()),
    );
    if let Some(local) = local {
        builder = local.configure(builder);
    }
    let mgr = builder
        .build()
        .map_err(|e| match ManagerFlags::flag_for(&e) {
            Some(flag) => anyhow::Error::from(e).context(flag),
            None => anyhow::Error::from(e).context("invalid manager settings"),
        })?;
    if let Some(zone) = webhook {
        example_eru::webhook::register(&mgr, zone).context("registering the defaulting webhook")?;
    }
    Ok(mgr)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let opts = Options {
        default_schedule: cli.default_schedule.clone(),
        max_concurrent_reconciles: usize::from(cli.max_concurrent_reconciles),
        instance: String::new(),
    };
    opts.validate().context("--default-schedule")?;
    let zone = DefaultTimeZone::new(&cli.default_time_zone).context("--default-time-zone")?;
    let webhook = cli.enable_webhooks.then_some(zone);
    if !cli.embedded {
        let config = config(&cli).await?;
        let client = kube::Client::try_from(config).context("cannot build a Kubernetes client")?;
        let mgr = manager(&cli.manager, client, webhook, None)?;
        controller::setup(&mgr, &opts, controller::system_clock())?;
        log_addresses(&mgr);
        mgr.start(shutdown_signal()).await?;
        return Ok(());
    }

    let kubeconfig = match &cli.manager.kubeconfig {
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
    // Against the in-process server: no probe or metrics port unless asked for, so two
    // embedded runs never collide.
    let mut flags = cli.manager.clone().without_default_listeners();
    if flags.leader_election_namespace.is_none() && flags.namespace.is_none() {
        flags.leader_election_namespace = Some("default".into());
    }
    // A free loopback port and a certificate made here, as envtest runs webhooks.
    let local = webhook
        .is_some()
        .then(|| EmbeddedWebhooks::generate("eru"))
        .transpose()?;
    let mgr = manager(&flags, client.clone(), webhook, local.as_ref())?;
    controller::setup(&mgr, &opts, controller::system_clock())?;
    log_addresses(&mgr);
    if let Some(local) = &local {
        // Registered in the in-memory server once the webhook server listens.
        local.spawn_install(&mgr, &client, WEBHOOK_MANIFESTS);
    }
    let result = if cli.demo {
        let namespace = flags.namespace.clone().unwrap_or_else(|| "default".into());
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
    if cli.manager.kubeconfig.is_none() {
        let _ = std::fs::remove_file(&kubeconfig);
    }
    result
}

fn log_addresses(mgr: &Manager) {
    for (what, addr) in mgr.bound_addresses() {
        tracing::info!(%addr, "serving {what}");
    }
}

/// The log filter unless `RUST_LOG` says otherwise.
const LOG_FILTER: &str = "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn";

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
    if let Err(e) = init_logging(cli.log.log_format, LOG_FILTER) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
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
    fn flags_parse_with_defaults() {
        let cli = Cli::try_parse_from(["eru-operator"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(cli.manager.leader_elect);
        assert_eq!(cli.default_schedule, "0 3 * * *");
        assert_eq!(cli.default_time_zone, "UTC");
        assert!(cli.enable_webhooks);
        assert_eq!(cli.manager.metrics_bind_address(), "0");
        let cli = Cli::try_parse_from([
            "eru-operator",
            "--leader-elect=false",
            "--leader-elect-lease-duration=4s",
            "--embedded",
            "--demo",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!cli.manager.leader_elect && cli.embedded && cli.demo);
        assert_eq!(
            cli.manager.leader_elect_lease_duration,
            std::time::Duration::from_secs(4)
        );
        assert!(
            Cli::try_parse_from(["eru-operator", "--demo"]).is_err(),
            "--demo needs --embedded"
        );
        assert!(
            Cli::try_parse_from(["eru-operator", "--lease-duration=4s"]).is_err(),
            "the old name is gone: --leader-elect-lease-duration"
        );
    }
}
