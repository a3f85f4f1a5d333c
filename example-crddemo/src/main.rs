//! `crddemo`: the Mydemo controller.
//!
//! ```text
//! crddemo --kubeconfig ~/.kube/config          # against a cluster
//! crddemo --embedded --demo                    # against an in-memory API server, with the walkthrough
//! ```
//!
//! It runs under a `kube_controller_runtime::Manager` with controller-runtime's flags
//! (`kube_controller_runtime::flags::ManagerFlags`): Lease leader election (on by default),
//! `/healthz` and `/readyz` on `--health-probe-bind-address` (`:8081`; off with `--embedded`
//! unless given), `/metrics` on `--metrics-bind-address` (off unless given; HTTPS with
//! TokenReview/SubjectAccessReview unless `--metrics-secure=false`), graceful shutdown on
//! SIGTERM/SIGINT.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::Parser;
use example_crddemo::controller::{Controller, Options, informer_options};
use example_crddemo::embedded::{DEMO_NAME, Embedded, run_demo, wait_controller_idle};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use kube_controller_runtime::flags::{LogFlags, ManagerFlags, init_logging, parse_duration};
use kube_controller_runtime::operator::{load_config, refuse_foreign_kubeconfig};
use kube_controller_runtime::webhook::local::EmbeddedWebhooks;
use kube_controller_runtime::{Manager, ManagerError};

/// The Mydemo controller: for each Mydemo (crddemo.k8s.io/v1) it keeps a selector-less Service
/// and an EndpointSlice exposing spec.ip:spec.port, and reports a Ready condition and Events.
#[derive(Parser, Debug)]
#[command(name = "crddemo", version)]
struct Cli {
    /// controller-runtime's flags: --kubeconfig, --namespace, leader election, probes, metrics.
    /// With --embedded, --kubeconfig is where to write the embedded server's kubeconfig (a
    /// file that exists must be one --embedded wrote; others are never overwritten), and
    /// neither probes nor metrics listen unless their address is given.
    #[command(flatten)]
    manager: ManagerFlags,

    /// The address of the Kubernetes API server. Overrides any value in kubeconfig.
    #[arg(long, value_name = "URL")]
    master: Option<String>,

    /// Worker tasks processing the queue concurrently.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,

    /// Resync period: re-deliver every cached object this often ("30s", "5m", "0" to disable).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    resync: Duration,

    /// Wait this long at the start of every reconcile, as if calling a slow external system
    /// ("50ms"; default "0": no wait). For benchmarks of reconcile capacity
    /// (scripts/bench-sharding.sh); it slows the controller down and nothing else.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_duration)]
    reconcile_delay: Duration,

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

    /// Serve crddemo's webhooks: the validating webhook (one address per Mydemo in a namespace)
    /// and the conversion of v1alpha1 (Kubebuilder's ENABLE_WEBHOOKS). In a cluster they need
    /// the certificate in --webhook-cert-dir and deploy/webhook.yaml; with --embedded the
    /// certificate is made and the webhooks registered in the in-memory server.
    #[arg(long, env = "ENABLE_WEBHOOKS", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    enable_webhooks: bool,

    /// --log-format.
    #[command(flatten)]
    log: LogFlags,
}

/// What kube-apiserver needs to call crddemo's webhooks: the ValidatingWebhookConfiguration and
/// the CRD's conversion webhook (`--embedded` installs them pointing at this process; the
/// Service and the certificate's documents are for a cluster).
const WEBHOOK_MANIFESTS: &str = include_str!("../deploy/webhook.yaml");

/// The Lease's name unless --leader-election-id says otherwise.
const LEADER_ELECTION_ID: &str = "crddemo-controller";

use kube_controller_runtime::shutdown_signal;

/// controller-runtime's `GetConfig` for `--kubeconfig`, then `--master` ([`load_config`]).
async fn config(cli: &Cli) -> anyhow::Result<kube::Config> {
    Ok(load_config(cli.manager.kubeconfig.as_deref(), cli.master.as_deref()).await?)
}

/// Whether and where crddemo's webhooks are served.
#[derive(Clone, Copy)]
enum Webhooks<'a> {
    /// `--enable-webhooks=false`.
    Off,
    /// On every interface, at `--webhook-port` (a cluster's Service reaches the pod).
    Served,
    /// On loopback only, with a certificate made for the run (`--embedded`: the in-process
    /// server calls them).
    Local(&'a EmbeddedWebhooks),
}

/// The manager the controller runs under, configured by the flags, serving crddemo's webhooks
/// unless they are off.
fn manager(
    flags: &ManagerFlags,
    client: kube::Client,
    opts: &Options,
    webhooks: Webhooks<'_>,
) -> anyhow::Result<Manager> {
    let mut builder = flags
        .builder(client, LEADER_ELECTION_ID)
        .informer_options(informer_options(opts));
    if let Webhooks::Local(local) = webhooks {
        builder = local.configure(builder);
    }
    let mgr = builder.build().map_err(flag_error)?;
    mgr.add_healthz_check("ping", kube_controller_runtime::healthz::ping)?;
    if !matches!(webhooks, Webhooks::Off) {
        example_crddemo::webhook::register(&mgr).context("registering crddemo's webhooks")?;
    }
    Ok(mgr)
}

/// A manager error, naming the flag to change where one is to blame.
fn flag_error(e: ManagerError) -> anyhow::Error {
    match ManagerFlags::flag_for(&e) {
        Some(flag) => match e {
            ManagerError::InvalidOption { message, .. } => anyhow!("{flag}: {message}"),
            ManagerError::Bind { what, addr, source } => {
                anyhow!("{flag} {addr}: cannot listen for {what}: {source}")
            }
            ManagerError::LeaderElection(le) => anyhow!("{flag}: {le}"),
            other => anyhow!("{flag}: {other}"),
        },
        None => anyhow::Error::from(e),
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
        namespace: cli.manager.namespace.clone(),
        resync: (!cli.resync.is_zero()).then_some(cli.resync),
        instance: String::new(),
        reconcile_delay: cli.reconcile_delay,
    };
    if !cli.embedded {
        let config = config(&cli).await?;
        let client = kube::Client::try_from(config).context("cannot build a Kubernetes client")?;
        let webhooks = if cli.enable_webhooks {
            Webhooks::Served
        } else {
            Webhooks::Off
        };
        let mgr = manager(&cli.manager, client, &opts, webhooks)?;
        return run_managed(mgr, opts, shutdown_signal()).await;
    }

    let kubeconfig = match &cli.manager.kubeconfig {
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
    // Whatever happens, the embedded server stops and its temporary files go.
    let result = run_embedded(&cli, &embedded, opts).await;
    embedded.shutdown().await;
    if cli.manager.kubeconfig.is_none() {
        let _ = std::fs::remove_file(&kubeconfig);
    }
    result
}

/// `--embedded`: the controller (and with `--demo` the walkthrough) against the in-memory
/// server; the webhooks, unless disabled, on a loopback port the server calls with a
/// certificate made for the run.
async fn run_embedded(cli: &Cli, embedded: &Embedded, opts: Options) -> anyhow::Result<()> {
    let client = embedded.client().await?;
    let clientset = Clientset::new(client.clone());
    // Against the in-process server: no probe or metrics port unless asked for, so two
    // embedded runs never collide on 8080/8081.
    let mut flags = cli.manager.clone().without_default_listeners();
    // The walkthrough's --namespace is made by the demo itself: the Lease stays in `default`.
    flags
        .leader_election_namespace
        .get_or_insert_with(|| "default".into());
    // A free loopback port and a certificate made here, as envtest runs webhooks.
    let local = cli
        .enable_webhooks
        .then(|| EmbeddedWebhooks::generate("crddemo"))
        .transpose()?;
    let webhooks = local.as_ref().map_or(Webhooks::Off, Webhooks::Local);
    let mgr = manager(&flags, client.clone(), &opts, webhooks)?;
    if let Some(local) = &local {
        // Registered in the in-memory server once the webhook server listens.
        local.spawn_install(&mgr, &client, WEBHOOK_MANIFESTS);
    }
    if cli.demo {
        let controller = Controller::with_manager(&mgr, opts)?;
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let namespace = cli
            .manager
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
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

/// The log filter unless `RUST_LOG` says otherwise.
const LOG_FILTER: &str = "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn";

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
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
    fn flags_parse_with_controller_runtime_names_and_safe_defaults() {
        let cli = Cli::try_parse_from(["crddemo"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(cli.manager.leader_elect);
        assert_eq!(cli.manager.metrics_bind_address(), "0");
        assert!(cli.manager.metrics_secure);
        assert_eq!(cli.manager.health_probe_bind_address(), ":8081");
        let cli = Cli::try_parse_from([
            "crddemo",
            "--embedded",
            "--leader-elect-lease-duration=4s",
            "--leader-elect-renew-deadline=3s",
            "--leader-elect-retry-period=500ms",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            cli.manager.leader_elect_lease_duration,
            Duration::from_secs(4)
        );
        let embedded = cli.manager.without_default_listeners();
        assert_eq!(embedded.health_probe_bind_address(), "0");
        assert_eq!(embedded.metrics_bind_address(), "0");
        assert!(Cli::try_parse_from(["crddemo", "--lease-duration=4s"]).is_err());
    }
}
