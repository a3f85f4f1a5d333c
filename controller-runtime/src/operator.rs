//! The `main` of an operator binary, so that each binary does not repeat it: [`OperatorFlags`]
//! (controller-runtime's [`ManagerFlags`], `--master`, `--log-format` and, with feature
//! `embedded`, `--embedded`) and [`Operator::run`], which loads the client configuration
//! ([`client_config`], then `--master`), builds the [`Manager`] from the flags, lets the caller
//! register its controllers, and runs until SIGTERM or Ctrl-C.
//!
//! With `--embedded` (feature `embedded`) the operator runs against an in-memory API server on
//! loopback instead of a cluster: the server gets the operator's CRDs, a kubeconfig is written
//! for kubectl (`--kubeconfig PATH`, else a file in the temporary directory, removed at exit),
//! and neither probes nor metrics bind a port unless their flags are given.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use clap::Parser;
//! use kube_controller_runtime::operator::{Operator, OperatorFlags};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     operator: OperatorFlags,
//! }
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     let cli = Cli::parse();
//!     let result = Operator::new("my-operator")
//!         .run(cli.operator, |_mgr| {
//!             // register controllers here: Controller::builder(mgr).for_::<K>()…
//!             Ok(())
//!         })
//!         .await;
//!     match result {
//!         Ok(()) => ExitCode::SUCCESS,
//!         Err(e) => {
//!             eprintln!("error: {e}");
//!             ExitCode::FAILURE
//!         }
//!     }
//! }
//! ```

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::BoxError;
use crate::flags::{
    ConfigError, LogFlags, LoggingError, ManagerFlags, client_config, init_logging,
};
use crate::manager::{Manager, ManagerError, shutdown_signal};

/// The log filter unless `RUST_LOG` says otherwise.
pub const DEFAULT_LOG_FILTER: &str =
    "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn";

/// The command line of an operator binary, to `#[command(flatten)]` into its clap parser.
#[derive(Debug, Clone, clap::Args)]
pub struct OperatorFlags {
    /// controller-runtime's flags: --kubeconfig, --namespace, leader election, probes,
    /// metrics. With --embedded, --kubeconfig is where the in-memory server's kubeconfig is
    /// written.
    #[command(flatten)]
    pub manager: ManagerFlags,

    /// The address of the Kubernetes API server; overrides the kubeconfig's.
    #[arg(long, value_name = "URL")]
    pub master: Option<String>,

    /// Run against an in-memory API server on loopback (with this operator's CRDs installed
    /// and a kubeconfig written for kubectl) instead of a cluster.
    #[cfg(feature = "embedded")]
    #[arg(long)]
    pub embedded: bool,

    /// With --embedded: the port the in-memory server listens on (0 picks a free one).
    #[cfg(feature = "embedded")]
    #[arg(long, value_name = "PORT", default_value_t = 0, requires = "embedded")]
    pub embedded_port: u16,

    /// --log-format.
    #[command(flatten)]
    pub log: LogFlags,
}

/// Why [`Operator::run`] stopped. Each names the flag or the step to blame.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The log subscriber could not be installed.
    #[error(transparent)]
    Logging(#[from] LoggingError),
    /// No usable client configuration.
    #[error("{source}{hint}")]
    Config {
        /// Why.
        #[source]
        source: ConfigError,
        /// What else the user could do.
        hint: &'static str,
    },
    /// `--master` is not a URL.
    #[error("--master {url:?}: {reason}")]
    Master {
        /// The value given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The client could not be built from the configuration.
    #[error("cannot build a Kubernetes client: {0}")]
    Client(#[source] kube::Error),
    /// The manager could not be built or failed while running; `flag` names the flag to
    /// blame when there is one.
    #[error("{}{source}", flag.map(|f| format!("{f}: ")).unwrap_or_default())]
    Manager {
        /// The flag behind the error, if any.
        flag: Option<&'static str>,
        /// The error.
        #[source]
        source: ManagerError,
    },
    /// The caller's controller set-up failed.
    #[error("setting up the controllers: {0}")]
    Setup(#[source] BoxError),
    /// The in-memory API server could not start or serve.
    #[cfg(feature = "embedded")]
    #[error("--embedded: in-memory API server: {0}")]
    Embedded(#[from] kube_codegen_runtime::fake::FakeError),
    /// With [`Operator::webhooks`], the certificate for the webhooks `--embedded` serves could
    /// not be made.
    #[cfg(feature = "embedded")]
    #[error("--embedded: the local webhook certificate: {0}")]
    Webhooks(#[from] crate::webhook::local::LocalWebhookError),
    /// A CRD could not be installed in the in-memory API server.
    #[cfg(feature = "embedded")]
    #[error("--embedded: installing the CRD {name}: {source}")]
    InstallCrd {
        /// The CRD's name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// `--embedded --kubeconfig PATH` names a file that an earlier `--embedded` run did not
    /// write; it is never overwritten.
    #[error(
        "--kubeconfig {}: the file exists and was not written by --embedded; refusing to overwrite it (name a new file)",
        path.display()
    )]
    ForeignKubeconfig {
        /// The file.
        path: PathBuf,
    },
    /// `--kubeconfig PATH` could not be read to check it.
    #[error("--kubeconfig {}: {source}", path.display())]
    KubeconfigFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The current context of every kubeconfig `--embedded` writes; a file holding it may be
/// overwritten by a later run, any other is refused.
pub const EMBEDDED_KUBECONFIG_MARKER: &str = "current-context: kube-codegen-fake";

/// An operator binary: its name (the leader-election Lease's default name) and its CRDs (what
/// `--embedded` installs).
#[derive(Debug, Clone)]
pub struct Operator {
    name: String,
    crds: Vec<CustomResourceDefinition>,
    webhooks: Option<String>,
    log_filter: String,
}

/// The bounds of [`Operator::run_until`]'s `setup` and `stop`, named once for the private steps
/// it goes through.
trait Setup: FnOnce(&Manager) -> Result<(), BoxError> {}
impl<F: FnOnce(&Manager) -> Result<(), BoxError>> Setup for F {}

trait Stop: std::future::Future<Output = ()> + Send + 'static {}
impl<S: std::future::Future<Output = ()> + Send + 'static> Stop for S {}

impl Operator {
    /// An operator named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Operator {
            name: name.into(),
            crds: Vec::new(),
            webhooks: None,
            log_filter: DEFAULT_LOG_FILTER.into(),
        }
    }

    /// The CRDs of the operator's own kinds (installed by `--embedded`; against a cluster they
    /// are applied from `deploy/crds/`).
    pub fn crds(mut self, crds: impl IntoIterator<Item = CustomResourceDefinition>) -> Self {
        self.crds.extend(crds);
        self
    }

    /// The webhook configurations of the operator (`deploy/webhooks.yaml`, as `kube-codegen
    /// manifests` writes it). With `--embedded`, when `setup` registers webhooks, they are
    /// served on loopback with a certificate made for the run, and these configurations —
    /// and the conversion webhooks of [`crds`](Self::crds) — are installed in the in-memory
    /// server pointing at them, as envtest installs webhooks. Against a cluster they are
    /// applied from `deploy/` with the certificate cert-manager issues.
    pub fn webhooks(mut self, manifests: impl Into<String>) -> Self {
        self.webhooks = Some(manifests.into());
        self
    }

    /// The log filter unless `RUST_LOG` is set (default [`DEFAULT_LOG_FILTER`]).
    pub fn log_filter(mut self, filter: impl Into<String>) -> Self {
        self.log_filter = filter.into();
        self
    }

    /// Installs logging, connects (or starts the in-memory server with `--embedded`), builds
    /// the manager from `flags`, calls `setup` to register the controllers, and runs until
    /// SIGTERM or Ctrl-C.
    pub async fn run<F>(self, flags: OperatorFlags, setup: F) -> Result<(), OperatorError>
    where
        F: FnOnce(&Manager) -> Result<(), BoxError>,
    {
        init_logging(flags.log.log_format, &self.log_filter)?;
        self.run_until(flags, setup, shutdown_signal()).await
    }

    /// [`run`](Self::run) without installing logging, until `stop` completes.
    pub async fn run_until<F, S>(
        self,
        flags: OperatorFlags,
        setup: F,
        stop: S,
    ) -> Result<(), OperatorError>
    where
        F: FnOnce(&Manager) -> Result<(), BoxError>,
        S: std::future::Future<Output = ()> + Send + 'static,
    {
        #[cfg(feature = "embedded")]
        if flags.embedded {
            return self.run_embedded(flags, setup, stop).await;
        }
        let config =
            load_config(flags.manager.kubeconfig.as_deref(), flags.master.as_deref()).await?;
        let client = kube::Client::try_from(config).map_err(OperatorError::Client)?;
        self.manage(&flags.manager, client, setup, stop, None).await
    }

    /// Builds the manager, lets `setup` register with it, and runs it until `stop`; with
    /// `local`, its webhooks are served on loopback and installed in the in-process server.
    async fn manage(
        &self,
        flags: &ManagerFlags,
        client: kube::Client,
        setup: impl Setup,
        stop: impl Stop,
        local: Option<&crate::webhook::local::EmbeddedWebhooks>,
    ) -> Result<(), OperatorError> {
        let manager_error = |source: ManagerError| OperatorError::Manager {
            flag: ManagerFlags::flag_for(&source),
            source,
        };
        let mut builder = flags.builder(client.clone(), &self.name);
        if let Some(local) = local {
            builder = local.configure(builder);
        }
        let mgr = builder.build().map_err(manager_error)?;
        setup(&mgr).map_err(OperatorError::Setup)?;
        if let Some(local) = local.filter(|_| mgr.has_webhook_server()) {
            local.spawn_install_documents(&mgr, &client, self.webhook_documents());
        }
        for (what, addr) in mgr.bound_addresses() {
            tracing::info!(%addr, "serving {what}");
        }
        mgr.start(stop).await.map_err(manager_error)
    }

    #[cfg(feature = "embedded")]
    async fn run_embedded(
        self,
        flags: OperatorFlags,
        setup: impl Setup,
        stop: impl Stop,
    ) -> Result<(), OperatorError> {
        use kube::Api;
        use kube::api::PostParams;
        use kube_codegen_runtime::api_status::is_already_exists;
        use kube_codegen_runtime::fake::{Controller, FakeApiServer};

        let kubeconfig = match &flags.manager.kubeconfig {
            Some(path) => {
                refuse_foreign_kubeconfig(path)?;
                path.clone()
            }
            None => std::env::temp_dir().join(format!(
                "{}-embedded-{}.kubeconfig",
                self.name,
                std::process::id()
            )),
        };
        // The review kinds too, so that secure metrics can authenticate and authorize scrapes;
        // the garbage collector and the namespace controller, as kube-controller-manager runs
        // them beside a cluster's API server, so owner references and namespace deletion work.
        let server = FakeApiServer::builder()
            .resources(crate::filters::REVIEW_RESOURCES)
            .with_controllers([Controller::GarbageCollector, Controller::Namespace])
            .build()?;
        let served = server
            .serve(std::net::SocketAddr::from((
                [127, 0, 0, 1],
                flags.embedded_port,
            )))
            .await?;
        served.write_kubeconfig(&kubeconfig)?;
        let client = served.client().await?;
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in &self.crds {
            let mut crd = crd.clone();
            if self.webhooks.is_some() {
                // Its conversion webhook is installed once the webhook server listens (a
                // service reference is not reachable from the in-memory server).
                crd.spec.conversion = None;
            }
            match crds.create(&PostParams::default(), &crd).await {
                Ok(_) => {}
                Err(e) if is_already_exists(&e) => {}
                Err(source) => {
                    return Err(OperatorError::InstallCrd {
                        name: crd.metadata.name.clone().unwrap_or_default(),
                        source,
                    });
                }
            }
        }
        tracing::info!(
            server = %served.url(),
            kubeconfig = %kubeconfig.display(),
            crds = self.crds.len(),
            "in-memory API server running; use it with: export KUBECONFIG={}",
            kubeconfig.display()
        );
        let mut manager = flags.manager.clone().without_default_listeners();
        if manager.leader_election_namespace.is_none() && manager.namespace.is_none() {
            manager.leader_election_namespace = Some("default".into());
        }
        let local = match &self.webhooks {
            Some(_) => Some(crate::webhook::local::EmbeddedWebhooks::generate(
                &self.name,
            )?),
            None => None,
        };
        let result = self
            .manage(&manager, client, setup, stop, local.as_ref())
            .await;
        served.shutdown().await;
        if flags.manager.kubeconfig.is_none() {
            let _ = std::fs::remove_file(&kubeconfig);
        }
        result
    }
}

impl Operator {
    /// What `--embedded` installs for the webhooks: the documents of
    /// [`webhooks`](Self::webhooks) and the CRDs with a conversion webhook.
    fn webhook_documents(
        &self,
    ) -> Result<Vec<serde_json::Value>, crate::webhook::local::LocalWebhookError> {
        use crate::webhook::local::LocalWebhookError;
        let mut docs: Vec<serde_json::Value> = match &self.webhooks {
            Some(yaml) => crate::webhook::local::parse_manifests(yaml)?,
            None => Vec::new(),
        };
        for crd in &self.crds {
            let webhook = crd
                .spec
                .conversion
                .as_ref()
                .is_some_and(|c| c.webhook.is_some());
            if webhook {
                let mut doc = serde_json::to_value(crd)
                    .map_err(|e| LocalWebhookError::Manifest(e.to_string()))?;
                doc["apiVersion"] = "apiextensions.k8s.io/v1".into();
                doc["kind"] = "CustomResourceDefinition".into();
                docs.push(doc);
            }
        }
        Ok(docs)
    }
}

/// controller-runtime's `GetConfig` ([`client_config`]) for `--kubeconfig`, then `--master`
/// over it; with only `--master`, a configuration for that URL. Errors name the flag.
pub async fn load_config(
    kubeconfig: Option<&Path>,
    master: Option<&str>,
) -> Result<kube::Config, OperatorError> {
    let master = match master {
        Some(m) => Some(m.parse::<http::Uri>().map_err(|e| OperatorError::Master {
            url: m.to_string(),
            reason: e.to_string(),
        })?),
        None => None,
    };
    let hint = if cfg!(feature = "embedded") {
        "; or try --embedded to use an in-memory API server"
    } else {
        ""
    };
    match (client_config(kubeconfig).await, master) {
        (Ok(mut config), Some(url)) => {
            config.cluster_url = url;
            Ok(config)
        }
        (Ok(config), None) => Ok(config),
        (Err(ConfigError::NotFound { .. }), Some(url)) => Ok(kube::Config::new(url)),
        (Err(source), _) => Err(OperatorError::Config { source, hint }),
    }
}

/// `--embedded --kubeconfig PATH` writes PATH: refused when the file holds a kubeconfig an
/// earlier `--embedded` run did not write (a user's `~/.kube/config`, say), which is never
/// overwritten.
pub fn refuse_foreign_kubeconfig(path: &Path) -> Result<(), OperatorError> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.contains(EMBEDDED_KUBECONFIG_MARKER) => {
            Err(OperatorError::ForeignKubeconfig {
                path: path.to_path_buf(),
            })
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OperatorError::KubeconfigFile {
            path: path.to_path_buf(),
            source,
        }),
    }
}
