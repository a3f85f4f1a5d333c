//! The command line of a manager binary (feature `flags`, on by default): [`ManagerFlags`],
//! controller-runtime's and Kubebuilder's flag names as one [`clap::Args`] struct to
//! `#[command(flatten)]`, [`client_config`], controller-runtime's `GetConfig`, and
//! [`LogFlags`] with [`init_logging`] (`--log-format text|json` on stderr, `RUST_LOG`).
//!
//! ```no_run
//! use clap::Parser;
//! use kube_controller_runtime::flags::{ManagerFlags, client_config};
//! use kube_controller_runtime::shutdown_signal;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerFlags,
//! }
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let cli = Cli::parse();
//! let client = kube::Client::try_from(client_config(cli.manager.kubeconfig.as_deref()).await?)?;
//! let mgr = cli.manager.builder(client, "my-operator").build()?;
//! mgr.start(shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! Defaults, chosen to be safe where Kubebuilder's scaffold and controller-runtime differ:
//!
//! | flag | default | why |
//! | --- | --- | --- |
//! | `--metrics-bind-address` | `0` (off) | Kubebuilder's: nothing listens unless asked |
//! | `--metrics-secure` | `true` | Kubebuilder's: HTTPS, TokenReview + SubjectAccessReview ([`crate::filters`]); `--metrics-secure=false` for plain HTTP |
//! | `--metrics-cert-path` | none (self-signed) | a directory with `tls.crt` and `tls.key` |
//! | `--health-probe-bind-address` | `:8081` | Kubebuilder's: the kubelet must reach it; it tells only `ok` or which check failed |
//! | `--leader-elect` | `true` | never two replicas acting at once (Kubebuilder's scaffold says `false`) |
//! | `--leader-elect-lease-duration` / `-renew-deadline` / `-retry-period` | `15s` / `10s` / `2s` | client-go's |
//! | `--leader-election-namespace` | in-cluster namespace, else `--namespace`, else the kubeconfig's | |
//! | `--leader-elect-coordinated` | `false` | coordinated leader election (KEP-4355, client-go's `Coordinated`): kube-apiserver picks the leader among the replicas' LeaseCandidates |
//! | `--leader-elect-binary-version` / `-emulation-version` | none / the binary version | what this replica's LeaseCandidate declares; the binary version is required with `--leader-elect-coordinated` |
//! | `--sharded` | `false` | split the controllers' objects across every replica of `--shard-ring` ([`crate::sharding`]); leader-election runnables stay on the leader |
//! | `--shard-ring` | the leader election id | the ring's name: the `alpha.sharding.timebertt.dev/controllerring` label of every shard Lease |
//! | `--shard-lease-namespace` | `--leader-election-namespace`'s default | where the shard Leases live |
//! | `--graceful-shutdown-timeout` | `30s` | controller-runtime's |
//! | `--kubeconfig` | see [`client_config`] | |
//! | `--namespace` | all namespaces | the cache (and so the controllers) watch only this one |
//! | `--webhook-port` | `9443` | controller-runtime's; the server runs only once a webhook is registered |
//! | `--webhook-cert-dir` | `/tmp/k8s-webhook-server/serving-certs` | controller-runtime's; `tls.crt` and `tls.key`, reloaded when they change |
//!
//! A binary that runs against an in-process server (`--embedded`) calls
//! [`ManagerFlags::without_default_listeners`] so that neither server binds a port unless its
//! flag was given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube_codegen_runtime::informer::InformerOptions;

use crate::manager::{Manager, ManagerBuilder};

/// `--log-format`: how [`init_logging`] writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, the event's fields at the top level.
    Json,
}

/// The logging flag of a manager binary, to `#[command(flatten)]`.
#[derive(Debug, Clone, clap::Args)]
pub struct LogFlags {
    /// Log format (the filter is RUST_LOG's, else the binary's default).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// A global tracing subscriber was already installed ([`init_logging`]).
#[derive(Debug, thiserror::Error)]
#[error("cannot install the log subscriber: {0}")]
pub struct LoggingError(String);

/// Installs the process's tracing subscriber: to stderr, filtered by `RUST_LOG` when it is set
/// and valid, else by `default_filter` (`"info,kube_client=warn"`; a target matches by prefix, so `kube=warn` would cover `kube_controller_runtime` too), with colours only on a terminal,
/// as text or JSON. Fails if a subscriber is already installed.
pub fn init_logging(format: LogFormat, default_filter: &str) -> Result<(), LoggingError> {
    use std::io::IsTerminal;
    // An empty RUST_LOG (exported but blank) means "not set", not "errors only".
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| tracing_subscriber::EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    }
    .map_err(|e| LoggingError(e.to_string()))
}

/// The default of `--health-probe-bind-address`: every interface, port 8081.
pub const DEFAULT_HEALTH_PROBE_BIND_ADDRESS: &str = ":8081";
/// The default of `--metrics-bind-address`: off.
pub const DEFAULT_METRICS_BIND_ADDRESS: &str = "0";

/// Parses a duration as Go's `time.ParseDuration` writes the common ones: `500ms`, `15s`,
/// `5m`, `1h`, a bare number of seconds, `0`; a sum such as `1m30s` too.
///
/// ```
/// use std::time::Duration;
/// use kube_controller_runtime::flags::parse_duration;
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert!(parse_duration("5 parsecs").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    if text.is_empty() {
        return Err("invalid duration \"\": expected e.g. 30s, 5m, 1h".into());
    }
    let mut rest = text;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let n: f64 = num
            .parse()
            .map_err(|_| format!("invalid duration {text:?}: expected e.g. 30s, 5m, 1h"))?;
        let scale = match unit {
            "" if next.is_empty() && total == 0.0 => 1.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            "m" => 60.0,
            "h" => 3600.0,
            _ => {
                return Err(format!(
                    "invalid duration unit in {text:?}: use ns, us, ms, s, m or h"
                ));
            }
        };
        total += n * scale;
        rest = next;
    }
    Duration::try_from_secs_f64(total).map_err(|_| format!("invalid duration {text:?}: too long"))
}

/// controller-runtime's manager flags, to `#[command(flatten)]` into a binary's clap parser;
/// see the [module docs](self) for the defaults. [`builder`](Self::builder) turns them into a
/// [`ManagerBuilder`].
#[derive(Debug, Clone, clap::Args)]
pub struct ManagerFlags {
    /// Path to a kubeconfig. Only required if out-of-cluster; otherwise $KUBECONFIG, the
    /// in-cluster configuration, then ~/.kube/config.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Watch only this namespace (operator-sdk's WATCH_NAMESPACE); default: all namespaces.
    #[arg(long, value_name = "NS", env = "WATCH_NAMESPACE")]
    pub namespace: Option<String>,

    /// The address the metrics endpoint binds to: ":8443" for HTTPS (see --metrics-secure),
    /// "127.0.0.1:8080", or "0" to disable. [default: 0]
    #[arg(long, value_name = "ADDR")]
    pub metrics_bind_address: Option<String>,

    /// Serve metrics over HTTPS, each request authenticated (TokenReview) and authorized
    /// (SubjectAccessReview for get on /metrics); --metrics-secure=false serves plain HTTP.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub metrics_secure: bool,

    /// A directory holding the metrics server's tls.crt and tls.key (default: a self-signed
    /// certificate made at start-up).
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// The address the probe endpoints (/healthz, /readyz) bind to ("0" disables).
    /// [default: :8081]
    #[arg(long, value_name = "ADDR")]
    pub health_probe_bind_address: Option<String>,

    /// Enable leader election: only the replica holding the Lease runs the controllers
    /// (--leader-elect=false to turn it off).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub leader_elect: bool,

    /// The name of the Lease used for leader election (default: the binary's).
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: Option<String>,

    /// The namespace of the Lease (default: the in-cluster namespace, else --namespace, else
    /// the kubeconfig context's).
    #[arg(long, value_name = "NS", env = "POD_NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// This replica's identity in the Lease (default: $POD_NAME, else the host name and a
    /// random suffix).
    #[arg(long, value_name = "ID", env = "POD_NAME")]
    pub leader_election_identity: Option<String>,

    /// How long followers wait on an unchanged Lease before taking over.
    #[arg(long, default_value = "15s", value_name = "DURATION", value_parser = parse_duration)]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader tries to renew the Lease before it gives up leading.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    pub leader_elect_renew_deadline: Duration,

    /// Time between leader election attempts.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    pub leader_elect_retry_period: Duration,

    /// Coordinated leader election (KEP-4355): declare this replica in a LeaseCandidate and
    /// lead only when kube-apiserver names it holder (needs the CoordinatedLeaderElection
    /// feature gate; the oldest emulation version leads).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub leader_elect_coordinated: bool,

    /// The binary version this replica's LeaseCandidate declares (semver without a leading
    /// v; required with --leader-elect-coordinated).
    #[arg(long, value_name = "VERSION")]
    pub leader_elect_binary_version: Option<String>,

    /// The version this replica emulates (default: the binary version).
    #[arg(long, value_name = "VERSION")]
    pub leader_elect_emulation_version: Option<String>,

    /// Shard the controllers across every replica: each holds a shard Lease of the ring and
    /// reconciles only its keys (controller-runtime has no such flag; the names follow the
    /// reference sharder's terms).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub sharded: bool,

    /// The ring's name (default: the leader election id).
    #[arg(long, value_name = "NAME")]
    pub shard_ring: Option<String>,

    /// Where the shard Leases live (default: as --leader-election-namespace).
    #[arg(long, value_name = "NS")]
    pub shard_lease_namespace: Option<String>,

    /// How long a graceful stop waits for the controllers to finish the work in hand.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    pub graceful_shutdown_timeout: Duration,

    /// The port the webhook server listens on (when a webhook is registered).
    #[arg(long, default_value_t = crate::webhook::server::DEFAULT_PORT, value_name = "PORT")]
    pub webhook_port: u16,

    /// The directory holding the webhook server's tls.crt and tls.key (reloaded when they
    /// change).
    #[arg(long, default_value = crate::webhook::server::DEFAULT_CERT_DIR, value_name = "DIR")]
    pub webhook_cert_dir: PathBuf,
}

impl ManagerFlags {
    /// `--metrics-bind-address`, or its default (off).
    pub fn metrics_bind_address(&self) -> &str {
        self.metrics_bind_address
            .as_deref()
            .unwrap_or(DEFAULT_METRICS_BIND_ADDRESS)
    }

    /// `--health-probe-bind-address`, or its default (`:8081`).
    pub fn health_probe_bind_address(&self) -> &str {
        self.health_probe_bind_address
            .as_deref()
            .unwrap_or(DEFAULT_HEALTH_PROBE_BIND_ADDRESS)
    }

    /// For a run against an in-process API server: the probe and metrics servers listen only
    /// where their flags say, never on a default port (so two such runs do not collide).
    pub fn without_default_listeners(mut self) -> Self {
        self.health_probe_bind_address
            .get_or_insert_with(|| "0".to_string());
        self.metrics_bind_address
            .get_or_insert_with(|| "0".to_string());
        self
    }

    /// The informer options these flags ask for: the `--namespace` scope, over `base`.
    pub fn informer_options(&self, base: InformerOptions) -> InformerOptions {
        match &self.namespace {
            Some(ns) => base.namespace(ns.clone()),
            None => base,
        }
    }

    /// A [`ManagerBuilder`] over `client` configured by the flags: leader election (Lease
    /// `--leader-election-id`, else `default_leader_election_id`), probes, metrics (secure or
    /// not), timings, and the cache scoped to `--namespace`. Add informer options of your
    /// own with [`ManagerBuilder::informer_options`] after [`informer_options`](Self::informer_options).
    pub fn builder(
        &self,
        client: kube::Client,
        default_leader_election_id: &str,
    ) -> ManagerBuilder {
        let mut b = Manager::builder(client)
            .leader_election(self.leader_elect)
            .leader_election_id(
                self.leader_election_id
                    .clone()
                    .unwrap_or_else(|| default_leader_election_id.to_string()),
            )
            .lease_duration(self.leader_elect_lease_duration)
            .renew_deadline(self.leader_elect_renew_deadline)
            .retry_period(self.leader_elect_retry_period)
            .health_probe_bind_address(self.health_probe_bind_address())
            .metrics_bind_address(self.metrics_bind_address())
            .metrics_secure(self.metrics_secure)
            .graceful_shutdown_timeout(self.graceful_shutdown_timeout)
            .webhook_port(self.webhook_port)
            .webhook_cert_dir(self.webhook_cert_dir.clone())
            .informer_options(self.informer_options(InformerOptions::default()));
        if let Some(dir) = &self.metrics_cert_path {
            b = b.metrics_cert_dir(dir.clone());
        }
        if let Some(id) = &self.leader_election_identity {
            b = b.leader_election_identity(id.clone());
        }
        if self.leader_elect_coordinated {
            let binary = self.leader_elect_binary_version.clone().unwrap_or_default();
            let emulation = self
                .leader_elect_emulation_version
                .clone()
                .unwrap_or_else(|| binary.clone());
            b = b.coordinated_leader_election(
                crate::leaderelection::CoordinatedConfig::oldest_emulation_version(
                    binary, emulation,
                ),
            );
        }
        if let Some(ns) = self
            .leader_election_namespace
            .as_ref()
            .or(self.namespace.as_ref())
        {
            b = b.leader_election_namespace(ns.clone());
        }
        if self.sharded {
            let mut s = crate::sharding::ShardingConfig::new(
                self.shard_ring
                    .clone()
                    .or_else(|| self.leader_election_id.clone())
                    .unwrap_or_else(|| default_leader_election_id.to_string()),
            );
            s.lease_namespace = self
                .shard_lease_namespace
                .clone()
                .or_else(|| self.leader_election_namespace.clone())
                .or_else(|| self.namespace.clone());
            s.lease.lease_duration = self.leader_elect_lease_duration;
            s.lease.renew_deadline = self.leader_elect_renew_deadline;
            s.lease.retry_period = self.leader_elect_retry_period;
            b = b.sharding(s);
        }
        b
    }

    /// The flag a [`ManagerError`](crate::ManagerError) from [`builder`](Self::builder)'s
    /// manager is about, if one is to blame: `--metrics-bind-address` for a metrics address
    /// that is invalid or in use, and so on.
    pub fn flag_for(error: &crate::ManagerError) -> Option<&'static str> {
        use crate::LeaderElectionError as L;
        use crate::ManagerError as E;
        match error {
            E::InvalidOption { option, .. } => match *option {
                "metrics bind address" => Some("--metrics-bind-address"),
                "metrics certificate" => Some("--metrics-cert-path"),
                "health probe bind address" => Some("--health-probe-bind-address"),
                "leader election id" => Some("--leader-election-id"),
                "leader election namespace" => Some("--leader-election-namespace"),
                "sharding" => Some("--shard-ring, --shard-lease-namespace"),
                _ => None,
            },
            E::Bind { what, .. } if *what == "metrics" => Some("--metrics-bind-address"),
            E::Bind { .. } => Some("--health-probe-bind-address"),
            E::LeaderElection(L::InvalidConfig(_)) => Some(
                "--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period",
            ),
            E::LeaderElection(L::NamespaceNotFound { .. }) => Some("--leader-election-namespace"),
            E::Runnable { source, .. } => {
                use crate::webhook::WebhookError as W;
                match source.downcast_ref::<W>() {
                    Some(W::Bind { .. } | W::InvalidAddress(_)) => Some("--webhook-port"),
                    Some(W::Certificate { .. }) => Some("--webhook-cert-dir"),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Why no client configuration could be loaded ([`client_config`]). Not retryable as is: a
/// file to fix or a flag to pass.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The kubeconfig named by `--kubeconfig` or `$KUBECONFIG`, or `~/.kube/config`, could not
    /// be read or used.
    #[error("kubeconfig {source_name}: {source}")]
    Kubeconfig {
        /// Where it came from: the path, or `$KUBECONFIG`.
        source_name: String,
        /// Why.
        #[source]
        source: KubeconfigError,
    },
    /// Nothing to load: no flag, no `$KUBECONFIG`, not in a cluster, no `~/.kube/config`.
    #[error(
        "no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG, run inside a cluster or create ~/.kube/config{}",
        in_cluster.as_ref().map(|e| format!(" (in-cluster: {e})")).unwrap_or_default()
    )]
    NotFound {
        /// Why the in-cluster configuration was not usable, when `KUBERNETES_SERVICE_HOST` was
        /// set.
        in_cluster: Option<kube::config::InClusterError>,
    },
}

async fn from_file(kc: Kubeconfig, name: String) -> Result<kube::Config, ConfigError> {
    kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|source| ConfigError::Kubeconfig {
            source_name: name,
            source,
        })
}

/// The client configuration, found as controller-runtime's `GetConfig` finds it: the
/// `kubeconfig` path (the `--kubeconfig` flag) if given, then `$KUBECONFIG` (a list of files,
/// merged), then the in-cluster service account (when `KUBERNETES_SERVICE_HOST` is set), then
/// `~/.kube/config`. Unlike [`kube::Config::infer`], a set `$KUBECONFIG` wins over the
/// in-cluster configuration and a broken one is an error, not skipped.
pub async fn client_config(kubeconfig: Option<&Path>) -> Result<kube::Config, ConfigError> {
    if let Some(path) = kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|source| ConfigError::Kubeconfig {
            source_name: path.display().to_string(),
            source,
        })?;
        return from_file(kc, path.display().to_string()).await;
    }
    let from_env = Kubeconfig::from_env().map_err(|source| ConfigError::Kubeconfig {
        source_name: "$KUBECONFIG".into(),
        source,
    })?;
    if let Some(kc) = from_env {
        return from_file(kc, "$KUBECONFIG".into()).await;
    }
    let mut in_cluster = None;
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        match kube::Config::incluster() {
            Ok(config) => return Ok(config),
            Err(e) => {
                tracing::debug!(error = %e, "in-cluster configuration not usable");
                in_cluster = Some(e);
            }
        }
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".kube").join("config"));
    match home {
        Some(path) if path.exists() => {
            let kc = Kubeconfig::read_from(&path).map_err(|source| ConfigError::Kubeconfig {
                source_name: path.display().to_string(),
                source,
            })?;
            from_file(kc, path.display().to_string()).await
        }
        _ => Err(ConfigError::NotFound { in_cluster }),
    }
}
