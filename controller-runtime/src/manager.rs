//! The Manager (controller-runtime's `pkg/manager`): one client, one shared informer factory,
//! one metrics registry, health probes, leader election, and the [`Runnable`]s it starts and
//! stops — controllers, servers, anything with a `start`.
//!
//! Runnables are split by [`Runnable::needs_leader_election`] (default true, as controller-
//! runtime's `LeaderElectionRunnable`): the others (servers, the cache) run on every replica at
//! once; these run only on the elected leader.
//!
//! [`Manager::start`] runs them all until `shutdown` completes:
//!
//! 1. **preflight, nothing started yet**: binds the metrics and probe addresses; with leader
//!    election, checks the Lease — its namespace exists, this identity may get and update or
//!    create it (a `dryRun=All` write), an existing one decodes. A failure is returned as a
//!    [`ManagerError`] before anything runs;
//! 2. starts the non-leader-election runnables and the informer factory (every informer
//!    controllers asked for: followers keep warm caches, so a takeover needs no relist);
//! 3. campaigns for the Lease; once leading, starts the leader-election runnables;
//! 4. on `shutdown`: stops the leader-election runnables (they finish the work in hand) while
//!    still renewing the Lease, bounded by the graceful shutdown timeout (then aborted, and
//!    `start` returns [`ManagerError::GracefulShutdownTimeout`]); releases the Lease
//!    (`release_on_cancel`); stops the servers, the other runnables and the informers;
//! 5. a runnable that fails stops the manager the same way and is returned as
//!    [`ManagerError::Runnable`];
//! 6. if leadership is lost, the leader-election runnables are aborted at once (no grace,
//!    as in controller-runtime) and `start` returns [`ManagerError::LeaderElectionLost`]; a
//!    binary should exit non-zero.
//!
//! With leader election, [`Manager::client`] is **fenced**: writes (POST, PUT, PATCH, DELETE)
//! fail in the client with [`LeaderElectionError::NotLeader`] when this replica does not hold
//! the Lease within its renew deadline, so a leader that was paused past its deadline cannot
//! write when it resumes. Runnables that do not need leader election should write through
//! [`Manager::raw_client`].
//!
//! ```no_run
//! use kube_controller_runtime::{Manager, RunnableFn, shutdown_signal};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mgr = Manager::builder(kube::Client::try_default().await?)
//!     .leader_election_id("my-operator")
//!     .leader_election_namespace("operators")
//!     .metrics_bind_address(":8080")
//!     .health_probe_bind_address(":8081")
//!     .build()?;
//! mgr.add(RunnableFn::new(|shutdown| async move {
//!     shutdown.cancelled().await; // a cron loop, a webhook server …
//!     Ok(())
//! }))?;
//! mgr.start(shutdown_signal()).await?;
//! # Ok(()) }
//! ```

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::informer::{InformerObject, InformerOptions, SharedIndexInformer};
use kube_codegen_runtime::lister::Lister;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::BoxError;
use crate::healthz::{Checker, Checks, HealthzError};
use crate::leaderelection::{
    LeaderElectionConfig, LeaderElectionError, LeaderElector, LeaseLock, RenewOutcome,
};
use crate::metrics::Metrics;
use crate::server::{self, Router, TEXT};

/// Something the manager starts and stops (controller-runtime's `manager.Runnable` and
/// `LeaderElectionRunnable`).
///
/// `start` runs until `shutdown` is cancelled (then it should finish what it has in hand and
/// return `Ok`), or fails with an error, which stops the manager.
///
/// ```
/// use kube_controller_runtime::{BoxError, CancellationToken, Runnable};
///
/// struct Heartbeat;
/// impl Runnable for Heartbeat {
///     async fn start(self, shutdown: CancellationToken) -> Result<(), BoxError> {
///         loop {
///             tokio::select! {
///                 () = shutdown.cancelled() => return Ok(()),
///                 () = tokio::time::sleep(std::time::Duration::from_secs(10)) => println!("alive"),
///             }
///         }
///     }
///     fn needs_leader_election(&self) -> bool { false }
/// }
/// ```
pub trait Runnable: Send + 'static {
    /// Runs until `shutdown` is cancelled or something fails.
    fn start(
        self,
        shutdown: CancellationToken,
    ) -> impl Future<Output = Result<(), BoxError>> + Send + 'static;

    /// Whether this runs only on the elected leader (default true).
    fn needs_leader_election(&self) -> bool {
        true
    }

    /// A name for logs and errors (default: the type name).
    fn name(&self) -> String {
        std::any::type_name::<Self>().to_string()
    }
}

/// A [`Runnable`] from a closure (controller-runtime's `RunnableFunc`).
///
/// ```
/// use kube_controller_runtime::RunnableFn;
/// let r = RunnableFn::new(|shutdown| async move { shutdown.cancelled().await; Ok(()) })
///     .without_leader_election()
///     .named("ticker");
/// ```
pub struct RunnableFn<F> {
    f: F,
    leader_election: bool,
    name: String,
}

impl<F> fmt::Debug for RunnableFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnableFn")
            .field("name", &self.name)
            .field("leader_election", &self.leader_election)
            .finish()
    }
}

impl<F, Fut> RunnableFn<F>
where
    F: FnOnce(CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    /// A runnable that needs leader election.
    ///
    /// ```
    /// let r = kube_controller_runtime::RunnableFn::new(|_shutdown| async { Ok(()) });
    /// ```
    pub fn new(f: F) -> Self {
        RunnableFn {
            f,
            leader_election: true,
            name: "RunnableFn".into(),
        }
    }

    /// Runs on every replica, leader or not.
    ///
    /// ```
    /// let r = kube_controller_runtime::RunnableFn::new(|_s| async { Ok(()) }).without_leader_election();
    /// ```
    pub fn without_leader_election(mut self) -> Self {
        self.leader_election = false;
        self
    }

    /// Names it in logs and errors.
    ///
    /// ```
    /// let r = kube_controller_runtime::RunnableFn::new(|_s| async { Ok(()) }).named("cron");
    /// ```
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

impl<F, Fut> Runnable for RunnableFn<F>
where
    F: FnOnce(CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    fn start(
        self,
        shutdown: CancellationToken,
    ) -> impl Future<Output = Result<(), BoxError>> + Send + 'static {
        (self.f)(shutdown)
    }

    fn needs_leader_election(&self) -> bool {
        self.leader_election
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// Why the manager could not be built or stopped with an error.
///
/// Not retryable without a change: [`InvalidOption`](Self::InvalidOption),
/// [`Bind`](Self::Bind) (free the address or pick another), [`LeaderElection`](Self::LeaderElection)
/// from the preflight (namespace, RBAC, a corrupt Lease), [`AlreadyStarted`](Self::AlreadyStarted),
/// [`Healthz`](Self::Healthz). After [`LeaderElectionLost`](Self::LeaderElectionLost) a new
/// process (or a new manager) may lead again; [`Runnable`](Self::Runnable) is whatever the
/// runnable's error says.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// A builder option is invalid.
    #[error("invalid manager option {option}: {message}")]
    InvalidOption {
        /// The option (`metrics bind address`, `leader election id` …).
        option: &'static str,
        /// Why.
        message: String,
    },
    /// An address could not be bound.
    #[error("cannot listen on {addr} for {what}: {source}")]
    Bind {
        /// `metrics` or `health probes`.
        what: &'static str,
        /// The address.
        addr: SocketAddr,
        /// Why (address in use …).
        #[source]
        source: std::io::Error,
    },
    /// Leader election cannot work (preflight) or failed.
    #[error("leader election: {0}")]
    LeaderElection(#[from] LeaderElectionError),
    /// This replica lost the Lease; its leader-election runnables were stopped.
    #[error("leader election lost: {0}")]
    LeaderElectionLost(String),
    /// A runnable failed.
    #[error("{name} failed: {source}")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// Its error.
        #[source]
        source: BoxError,
    },
    /// Runnables were still running when the graceful shutdown timeout passed; they were
    /// aborted.
    #[error("failed waiting for all runnables to end within grace period of {0:?}: {1}")]
    GracefulShutdownTimeout(Duration, String),
    /// `start` was called twice, or `add` after `start`.
    #[error("the manager has already been started")]
    AlreadyStarted,
    /// A health check could not be added.
    #[error(transparent)]
    Healthz(#[from] HealthzError),
}

type StartFn =
    Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, Result<(), BoxError>> + Send>;

struct Entry {
    name: String,
    leader_election: bool,
    start: StartFn,
}

type Callback = Box<dyn Fn() + Send + Sync>;
type NewLeaderCallback = Box<dyn Fn(&str) + Send + Sync>;

struct Inner {
    raw_client: kube::Client,
    client: kube::Client,
    factory: SharedInformerFactory,
    metrics: Metrics,
    healthz: Checks,
    readyz: Checks,
    runnables: Mutex<Vec<Entry>>,
    controller_names: Mutex<HashSet<String>>,
    elector: Option<LeaderElector>,
    release_on_cancel: bool,
    identity: String,
    metrics_addr: Option<SocketAddr>,
    metrics_secure: Option<server::Secure>,
    metrics_ca_pem: Option<String>,
    probe_addr: Option<SocketAddr>,
    graceful_shutdown_timeout: Duration,
    /// Read-your-own-writes: the writes of reconciles, and how long a worker waits for them.
    read_your_writes: Option<(crate::read_your_writes::WriteLog, Duration)>,
    started: AtomicBool,
    elected: watch::Sender<bool>,
    on_started_leading: Option<Callback>,
    on_stopped_leading: Option<Callback>,
    bound: Mutex<Vec<(&'static str, SocketAddr)>>,
    webhook_options: crate::webhook::WebhookServerOptions,
    webhook_server: Mutex<Option<crate::webhook::WebhookServer>>,
    shard: Option<crate::sharding::Shard>,
}

/// Runs controllers and other runnables; see the [module docs](self). Cheap to clone (a
/// handle): builders and runnables keep one.
#[derive(Clone)]
pub struct Manager {
    inner: Arc<Inner>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("identity", &self.inner.identity)
            .field(
                "leader_election",
                &self.inner.elector.as_ref().map(|e| e.lock().describe()),
            )
            .field("metrics_addr", &self.inner.metrics_addr)
            .field("metrics_secure", &self.inner.metrics_secure.is_some())
            .field("probe_addr", &self.inner.probe_addr)
            .finish_non_exhaustive()
    }
}

/// Configures a [`Manager`]; defaults are controller-runtime's (see each method).
#[must_use = "a builder does nothing until build()"]
pub struct ManagerBuilder {
    client: kube::Client,
    leader_election: Option<bool>,
    id: Option<String>,
    namespace: Option<String>,
    identity: Option<String>,
    config: LeaderElectionConfig,
    metrics_addr: Option<String>,
    metrics_secure: bool,
    metrics_cert_dir: Option<std::path::PathBuf>,
    probe_addr: Option<String>,
    graceful_shutdown_timeout: Duration,
    read_your_writes: bool,
    read_your_writes_timeout: Duration,
    keep_managed_fields: bool,
    informer_options: InformerOptions,
    on_started_leading: Option<Callback>,
    on_stopped_leading: Option<Callback>,
    on_new_leader: Option<NewLeaderCallback>,
    webhook: crate::webhook::WebhookServerOptions,
    sharding: Option<crate::sharding::ShardingConfig>,
    coordinated: Option<crate::leaderelection::CoordinatedConfig>,
}

impl fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("leader_election", &self.leader_election)
            .field("id", &self.id)
            .field("namespace", &self.namespace)
            .field("config", &self.config)
            .field("metrics_addr", &self.metrics_addr)
            .field("metrics_secure", &self.metrics_secure)
            .field("metrics_cert_dir", &self.metrics_cert_dir)
            .field("probe_addr", &self.probe_addr)
            .field("webhook", &self.webhook)
            .field("sharding", &self.sharding)
            .finish_non_exhaustive()
    }
}

/// Parses a bind address as controller-runtime's flags take it: `"0"` or `""` disables,
/// `":8080"` is every interface, `"127.0.0.1:8080"`, `"[::1]:8080"` and `"localhost:8080"` as
/// usual.
///
/// ```
/// use kube_controller_runtime::manager::parse_bind_address;
/// assert_eq!(parse_bind_address("0").unwrap(), None);
/// assert_eq!(parse_bind_address(":8081").unwrap().unwrap().to_string(), "0.0.0.0:8081");
/// assert!(parse_bind_address("8080").is_err());
/// ```
pub fn parse_bind_address(addr: &str) -> Result<Option<SocketAddr>, String> {
    let addr = addr.trim();
    if addr.is_empty() || addr == "0" {
        return Ok(None);
    }
    let full = if addr.starts_with(':') {
        format!("0.0.0.0{addr}")
    } else {
        addr.to_string()
    };
    if !full.contains(':') {
        return Err(format!(
            "{addr:?} is no host:port (use \":{addr}\" for a port on every interface, or \"0\" to disable)"
        ));
    }
    full.to_socket_addrs()
        .map_err(|e| format!("{addr:?}: {e}"))?
        .next()
        .map(Some)
        .ok_or_else(|| format!("{addr:?} resolves to no address"))
}

/// The in-cluster namespace (the service account's), as controller-runtime reads it.
fn in_cluster_namespace() -> Option<String> {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// client-go's and controller-runtime's default identity: the host name, `_`, a random UUID.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

impl ManagerBuilder {
    /// Turns leader election on or off (default: on once a
    /// [`leader_election_id`](Self::leader_election_id) is set, as with `--leader-elect`).
    pub fn leader_election(mut self, on: bool) -> Self {
        self.leader_election = Some(on);
        self
    }

    /// The Lease's name (controller-runtime's `LeaderElectionID`; required with leader
    /// election).
    pub fn leader_election_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The Lease's namespace (default: the in-cluster namespace, else the client's default
    /// namespace).
    pub fn leader_election_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// This replica's identity in the Lease (default: `<hostname>_<uuid>`; with
    /// [coordinated leader election](Self::coordinated_leader_election) it also names the
    /// replica's LeaseCandidate).
    pub fn leader_election_identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Coordinated leader election (KEP-4355; client-go's `Coordinated`, which
    /// controller-runtime lacks): the replica declares itself in a `LeaseCandidate` with
    /// these versions and leads only when kube-apiserver's election controller names it
    /// holder (see [`LeaderElector::coordinated`]). The cluster needs the
    /// `CoordinatedLeaderElection` feature gate and `coordination.k8s.io/v1beta1`; the identity
    /// must be a valid LeaseCandidate name. `ManagerFlags` sets it with `--leader-elect-coordinated`.
    ///
    /// ```no_run
    /// # use kube_controller_runtime::{Manager, leaderelection::CoordinatedConfig};
    /// # fn demo(client: kube::Client) {
    /// let builder = Manager::builder(client)
    ///     .leader_election_id("crddemo")
    ///     .coordinated_leader_election(CoordinatedConfig::oldest_emulation_version("1.4.0", "1.3.0"));
    /// # }
    /// ```
    pub fn coordinated_leader_election(
        mut self,
        config: crate::leaderelection::CoordinatedConfig,
    ) -> Self {
        self.coordinated = Some(config);
        self
    }

    /// How long followers wait on an unchanged Lease before taking over (default 15 s).
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.config.lease_duration = d;
        self
    }

    /// How long the leader tries to renew before giving up (default 10 s).
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.config.renew_deadline = d;
        self
    }

    /// Time between leader election attempts (default 2 s).
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.config.retry_period = d;
        self
    }

    /// Whether a graceful stop releases the Lease so a follower takes over at once (default
    /// true: the Lease is released only after every leader-election runnable has stopped).
    pub fn leader_election_release_on_cancel(mut self, on: bool) -> Self {
        self.config.release_on_cancel = on;
        self
    }

    /// Where `/metrics` is served (`":8080"`; `"0"` disables; default disabled). `":8080"`
    /// is every interface: bind `"127.0.0.1:8080"` to keep plain metrics on the host, or turn
    /// on [`metrics_secure`](Self::metrics_secure).
    pub fn metrics_bind_address(mut self, addr: &str) -> Self {
        self.metrics_addr = Some(addr.to_string());
        self
    }

    /// Serves `/metrics` over HTTPS, every request authenticated by a `TokenReview` and
    /// authorized by a `SubjectAccessReview` (`get` on the non-resource URL `/metrics`) — 401
    /// without a valid bearer token, 403 when not allowed (controller-runtime's
    /// `SecureServing` with `filters.WithAuthenticationAndAuthorization`; see
    /// [`filters`](crate::filters)). The manager's client needs `create` on `tokenreviews` and
    /// `subjectaccessreviews`. The certificate is [`metrics_cert_dir`](Self::metrics_cert_dir)'s,
    /// else a self-signed one made at build ([`Manager::metrics_ca_pem`]). Default off.
    pub fn metrics_secure(mut self, on: bool) -> Self {
        self.metrics_secure = on;
        self
    }

    /// The directory holding the secure metrics server's `tls.crt` (the certificate chain,
    /// PEM) and `tls.key` (its private key), read at [`build`](Self::build) (default: none, a
    /// self-signed certificate). Only used with [`metrics_secure`](Self::metrics_secure).
    pub fn metrics_cert_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.metrics_cert_dir = Some(dir.into());
        self
    }

    /// Where `/healthz` and `/readyz` are served (`":8081"`; `"0"` disables; default disabled).
    pub fn health_probe_bind_address(mut self, addr: &str) -> Self {
        self.probe_addr = Some(addr.to_string());
        self
    }

    /// The webhook server's port (controller-runtime's default 9443; 0 picks a free one). The
    /// server runs only once a webhook is registered
    /// ([`Webhook::builder`](crate::webhook::Webhook::builder)).
    pub fn webhook_port(mut self, port: u16) -> Self {
        self.webhook.port = port;
        self
    }

    /// The webhook server's bind host (default: every interface; `"127.0.0.1"` keeps it on
    /// the host).
    pub fn webhook_host(mut self, host: impl Into<String>) -> Self {
        self.webhook.host = host.into();
        self
    }

    /// The directory of the webhook server's `tls.crt` and `tls.key` (default
    /// `/tmp/k8s-webhook-server/serving-certs`), read when the server starts and again
    /// whenever the files change.
    pub fn webhook_cert_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.webhook.cert_dir = dir.into();
        self
    }

    /// All the webhook server's options at once (file names too).
    pub fn webhook_server_options(mut self, options: crate::webhook::WebhookServerOptions) -> Self {
        self.webhook = options;
        self
    }

    /// How long a graceful stop waits for runnables (default 30 s).
    pub fn graceful_shutdown_timeout(mut self, d: Duration) -> Self {
        self.graceful_shutdown_timeout = d;
        self
    }

    /// Whether a request is reconciled only once the cache holds what its previous reconciles
    /// wrote through [`Manager::client`] (default on; see
    /// [`read_your_writes`](crate::read_your_writes)). Off, a reconcile may read its own
    /// writes' previous state from the cache, as in controller-runtime.
    pub fn read_your_own_writes(mut self, on: bool) -> Self {
        self.read_your_writes = on;
        self
    }

    /// How long a worker waits for the cache to catch up with a request's own writes before
    /// it reconciles anyway (default 10 s; counted in
    /// `controller_runtime_read_your_writes_timeouts_total`).
    pub fn read_your_own_writes_timeout(mut self, d: Duration) -> Self {
        self.read_your_writes_timeout = d;
        self
    }

    /// Whether the shared informers keep `metadata.managedFields` (default no: they drop them
    /// as objects arrive, a client-side transform, since a controller reading from the cache
    /// rarely needs them and they are often the largest part of an object — kubernetes#115699).
    /// Keep them to extract apply configurations from cached objects. A `GET` through
    /// [`Manager::client`] always returns them.
    pub fn keep_managed_fields(mut self, keep: bool) -> Self {
        self.keep_managed_fields = keep;
        self
    }

    /// How the shared informers list and watch (namespace, resync, label selectors …); the
    /// manager adds dropping `managedFields` unless
    /// [`keep_managed_fields`](Self::keep_managed_fields) says otherwise.
    pub fn informer_options(mut self, options: InformerOptions) -> Self {
        self.informer_options = options;
        self
    }

    /// Called when this replica starts leading (after the leader-election runnables started).
    pub fn on_started_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_started_leading = Some(Box::new(f));
        self
    }

    /// Called when this replica stops leading (lost, or released at shutdown).
    pub fn on_stopped_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stopped_leading = Some(Box::new(f));
        self
    }

    /// Called with each new leader's identity observed (including this replica's).
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Box::new(f));
        self
    }

    /// Shards this manager's controllers across the replicas of `config.ring` (see
    /// [`sharding`](crate::sharding)): each replica holds a shard Lease, and every controller
    /// the [`Builder`](crate::Builder) makes runs on every replica for its keys only (unless
    /// [`sharded(false)`](crate::Builder::sharded)). Runnables that need leader election still
    /// run on the leader. With sharding, [`Manager::client`] is fenced by this replica's shard
    /// Lease instead of the leader Lease: writes are refused once it is not held within its
    /// renew deadline. `/readyz` checks `shard-lease`.
    pub fn sharding(mut self, config: crate::sharding::ShardingConfig) -> Self {
        self.sharding = Some(config);
        self
    }

    /// Validates the options and builds the manager. Must run inside a Tokio runtime (the
    /// fenced client has a background task).
    pub fn build(self) -> Result<Manager, ManagerError> {
        let invalid =
            |option: &'static str, message: String| ManagerError::InvalidOption { option, message };
        let metrics_addr = match &self.metrics_addr {
            Some(a) => parse_bind_address(a).map_err(|m| invalid("metrics bind address", m))?,
            None => None,
        };
        let probe_addr = match &self.probe_addr {
            Some(a) => {
                parse_bind_address(a).map_err(|m| invalid("health probe bind address", m))?
            }
            None => None,
        };
        if let (Some(m), Some(p)) = (metrics_addr, probe_addr)
            && m == p
            && m.port() != 0
        {
            return Err(invalid(
                "health probe bind address",
                format!("{p} is also the metrics bind address"),
            ));
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(invalid(
                "runtime",
                "Manager::build needs a Tokio runtime".into(),
            ));
        }
        let leader_election = self.leader_election.unwrap_or(self.id.is_some());
        let identity = self.identity.clone().unwrap_or_else(default_identity);
        let raw_client = self.client.clone();
        let metrics = Metrics::new();
        let shard = match &self.sharding {
            Some(config) => {
                let namespace = config
                    .lease_namespace
                    .clone()
                    .or_else(|| self.namespace.clone())
                    .or_else(in_cluster_namespace)
                    .unwrap_or_else(|| raw_client.default_namespace().to_string());
                let name = config
                    .shard_name
                    .clone()
                    .unwrap_or_else(|| crate::sharding::shard_name_from(&identity));
                Some(
                    crate::sharding::Shard::new(
                        raw_client.clone(),
                        namespace,
                        name,
                        config,
                        &metrics,
                    )
                    .map_err(|e| invalid("sharding", e.to_string()))?,
                )
            }
            None => None,
        };
        let (elector, client) = if leader_election {
            let id = self.id.clone().filter(|i| !i.is_empty()).ok_or_else(|| {
                invalid(
                    "leader election id",
                    "LeaderElectionID must be configured".into(),
                )
            })?;
            let namespace = self
                .namespace
                .clone()
                .or_else(in_cluster_namespace)
                .unwrap_or_else(|| raw_client.default_namespace().to_string());
            if namespace.is_empty() {
                return Err(invalid(
                    "leader election namespace",
                    "unable to find leader election namespace: not running in-cluster, please specify it".into(),
                ));
            }
            let lock = LeaseLock::new(raw_client.clone(), namespace, id, identity.clone());
            let elector = match &self.coordinated {
                Some(c) => LeaderElector::coordinated(lock, self.config.clone(), c.clone())?,
                None => LeaderElector::new(lock, self.config.clone())?,
            };
            if let Some(f) = self.on_new_leader {
                elector.on_new_leader(f);
            }
            let client = fenced_client(&raw_client, elector.clone());
            (Some(elector), client)
        } else {
            (None, raw_client.clone())
        };
        let client = match &shard {
            Some(s) => fenced_client(&raw_client, s.elector().clone()),
            None => client,
        };
        let (metrics_secure, metrics_ca_pem) = match (self.metrics_secure, metrics_addr) {
            (true, Some(_)) => {
                let serving = match &self.metrics_cert_dir {
                    Some(dir) => crate::tls::from_dir(dir),
                    None => crate::tls::self_signed(),
                }
                .map_err(|m| invalid("metrics certificate", m))?;
                let secure = server::Secure {
                    tls: tokio_rustls::TlsAcceptor::from(serving.config),
                    // Reviews are POSTs made on every replica: never through the fence.
                    filter: Arc::new(crate::filters::AuthenticationAndAuthorization::new(
                        raw_client.clone(),
                    )),
                };
                (Some(secure), serving.ca_pem)
            }
            _ => (None, None),
        };
        let (client, read_your_writes) = if self.read_your_writes {
            (
                crate::read_your_writes::recording_client(client),
                Some((
                    crate::read_your_writes::WriteLog::default(),
                    self.read_your_writes_timeout,
                )),
            )
        } else {
            (client, None)
        };
        if let Some(e) = &elector {
            e.set_metrics(metrics.leader(e.lock().name()));
        }
        let informer_options = if self.keep_managed_fields {
            self.informer_options
        } else {
            self.informer_options.strip_managed_fields()
        };
        // Unless the caller chose a provider, the informers report into this registry.
        let informer_options = if informer_options.get_metrics_provider().is_some() {
            informer_options
        } else {
            informer_options.metrics_provider(metrics.informer_provider())
        };
        let factory = SharedInformerFactory::builder(client.clone())
            .options(informer_options)
            .build();
        let readyz = Checks::new("readyz");
        let synced_factory = factory.clone();
        readyz.add(
            "informer-sync",
            Arc::new(move || -> Result<(), String> {
                match synced_factory.wait_for_cache_sync().now_or_never() {
                    Some(r) if r.all_synced() => Ok(()),
                    Some(r) => Err(format!(
                        "informers stopped before they synced: {}",
                        r.failed()
                            .iter()
                            .map(|i| i.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                    None => Err("informer caches have not synced yet".into()),
                }
            }),
        )?;
        if let Some(s) = &shard {
            let s = s.clone();
            readyz.add(
                "shard-lease",
                Arc::new(move || -> Result<(), String> {
                    if s.holds_lease() {
                        Ok(())
                    } else {
                        Err(format!(
                            "shard lease {} of ring {} is not held",
                            s.elector().lock().describe(),
                            s.ring()
                        ))
                    }
                }),
            )?;
        }
        let healthz = Checks::new("healthz");
        if let Some(e) = &elector {
            let e = e.clone();
            healthz.add(
                "leader-election",
                Arc::new(move || e.check(Duration::from_secs(20)).map_err(|e| e.to_string())),
            )?;
        }
        let (elected, _) = watch::channel(false);
        Ok(Manager {
            inner: Arc::new(Inner {
                raw_client,
                client,
                factory,
                metrics,
                healthz,
                readyz,
                runnables: Mutex::new(Vec::new()),
                controller_names: Mutex::new(HashSet::new()),
                release_on_cancel: self.config.release_on_cancel,
                elector,
                identity,
                metrics_addr,
                metrics_secure,
                metrics_ca_pem,
                probe_addr,
                graceful_shutdown_timeout: self.graceful_shutdown_timeout,
                read_your_writes,
                started: AtomicBool::new(false),
                elected,
                on_started_leading: self.on_started_leading,
                on_stopped_leading: self.on_stopped_leading,
                bound: Mutex::new(Vec::new()),
                webhook_options: self.webhook,
                webhook_server: Mutex::new(None),
                shard,
            }),
        })
    }
}

fn is_write(m: &http::Method) -> bool {
    !matches!(
        *m,
        http::Method::GET | http::Method::HEAD | http::Method::OPTIONS
    )
}

/// A client that refuses writes unless `elector` holds the Lease within its deadline.
fn fenced_client(raw: &kube::Client, elector: LeaderElector) -> kube::Client {
    let inner = raw.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        let elector = elector.clone();
        async move {
            if is_write(req.method()) && !elector.is_leader() {
                let e = LeaderElectionError::NotLeader {
                    lease: elector.lock().describe(),
                    method: req.method().to_string(),
                    path: req.uri().path().to_string(),
                };
                tracing::warn!(error = %e, "write refused by the leader fence");
                return Err(Box::new(e) as BoxError);
            }
            inner.send(req).await.map_err(|e| Box::new(e) as BoxError)
        }
    });
    kube::Client::new(svc, raw.default_namespace().to_string())
}

impl Manager {
    /// A builder over `client` (not leader-fenced itself: the manager fences the client it
    /// hands out).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let mgr = kube_controller_runtime::Manager::builder(kube::Client::try_default().await?).build()?;
    /// # Ok(()) }
    /// ```
    pub fn builder(client: kube::Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            leader_election: None,
            id: None,
            namespace: None,
            identity: None,
            config: LeaderElectionConfig {
                release_on_cancel: true,
                ..LeaderElectionConfig::default()
            },
            metrics_addr: None,
            metrics_secure: false,
            metrics_cert_dir: None,
            probe_addr: None,
            graceful_shutdown_timeout: Duration::from_secs(30),
            read_your_writes: true,
            read_your_writes_timeout: Duration::from_secs(10),
            keep_managed_fields: false,
            informer_options: InformerOptions::default(),
            on_started_leading: None,
            on_stopped_leading: None,
            on_new_leader: None,
            webhook: crate::webhook::WebhookServerOptions::default(),
            sharding: None,
            coordinated: None,
        }
    }

    /// Adds a runnable; it starts with the manager (leader-election runnables once elected).
    /// Fails after [`Manager::start`].
    pub fn add<R: Runnable>(&self, runnable: R) -> Result<(), ManagerError> {
        if self.inner.started.load(Ordering::Acquire) {
            return Err(ManagerError::AlreadyStarted);
        }
        let entry = Entry {
            name: runnable.name(),
            leader_election: runnable.needs_leader_election(),
            start: Box::new(move |shutdown| runnable.start(shutdown).boxed()),
        };
        self.inner.runnables.lock().push(entry);
        Ok(())
    }

    /// Adds a liveness check served at `/healthz` and `/healthz/<name>`.
    pub fn add_healthz_check(&self, name: &str, check: impl Checker) -> Result<(), ManagerError> {
        Ok(self.inner.healthz.add(name, Arc::new(check))?)
    }

    /// Adds a readiness check served at `/readyz` and `/readyz/<name>` (`informer-sync` is
    /// built in).
    pub fn add_readyz_check(&self, name: &str, check: impl Checker) -> Result<(), ManagerError> {
        Ok(self.inner.readyz.add(name, Arc::new(check))?)
    }

    /// The client controllers use: with leader election, writes are refused unless this
    /// replica holds the Lease (see the [module docs](self)).
    pub fn client(&self) -> kube::Client {
        self.inner.client.clone()
    }

    /// The client as given to the builder, without the leader fence: for runnables that do not
    /// need leader election.
    pub fn raw_client(&self) -> kube::Client {
        self.inner.raw_client.clone()
    }

    /// The shared informer factory: every controller's informers come from it, one per kind.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.inner.factory
    }

    /// The shared informer of `K` (created on first request, started with the manager).
    pub fn informer<K: InformerObject>(&self) -> SharedIndexInformer<K> {
        self.inner.factory.informer_for::<K>()
    }

    /// A lister over the shared informer of `K`.
    pub fn lister<K: InformerObject>(&self) -> Lister<K> {
        self.informer::<K>().lister()
    }

    /// The metrics registry (`/metrics`): register your own metrics here.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// This replica's identity (its leader-election holder identity).
    pub fn identity(&self) -> &str {
        &self.inner.identity
    }

    /// This replica's shard, when sharding is on.
    pub fn shard(&self) -> Option<&crate::sharding::Shard> {
        self.inner.shard.as_ref()
    }

    /// The leader elector, when leader election is on.
    pub fn elector(&self) -> Option<&LeaderElector> {
        self.inner.elector.as_ref()
    }

    /// Whether this replica leads (always true without leader election, once started).
    pub fn is_leader(&self) -> bool {
        match &self.inner.elector {
            Some(e) => e.is_leader(),
            None => true,
        }
    }

    /// Completes once this replica has been elected and its leader-election runnables started
    /// (without leader election: once the manager has started them; controller-runtime's
    /// `Elected()`). Never completes if `start` fails its preflight.
    pub async fn elected(&self) {
        let mut rx = self.inner.elected.subscribe();
        let _ = rx.wait_for(|e| *e).await;
    }

    /// The addresses the metrics, probe and webhook servers listen on, once started (useful
    /// with port 0): `("metrics", addr)`, `("health probes", addr)`, `("webhook", addr)`.
    pub fn bound_addresses(&self) -> Vec<(&'static str, SocketAddr)> {
        let mut bound = self.inner.bound.lock().clone();
        if let Some(addr) = self
            .inner
            .webhook_server
            .lock()
            .as_ref()
            .and_then(|s| s.local_addr())
        {
            bound.push(("webhook", addr));
        }
        bound
    }

    /// Whether a webhook server was asked for (a webhook registered).
    pub(crate) fn has_webhook_server(&self) -> bool {
        self.inner.webhook_server.lock().is_some()
    }

    /// The webhook server (controller-runtime's `GetWebhookServer`): made on first call with
    /// the builder's webhook options, added to the manager as a runnable of every replica,
    /// and checked by `/readyz` as `webhook`. The first call must come before
    /// [`start`](Self::start) ([`ManagerError::AlreadyStarted`]); later ones return the same
    /// server.
    pub fn webhook_server(&self) -> Result<crate::webhook::WebhookServer, ManagerError> {
        let mut slot = self.inner.webhook_server.lock();
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let server = crate::webhook::WebhookServer::new(
            self.inner.webhook_options.clone(),
            self.inner.metrics.clone(),
        );
        self.add(server.clone())?;
        self.inner
            .readyz
            .add("webhook", Arc::new(server.started_check()))?;
        *slot = Some(server.clone());
        Ok(server)
    }

    /// The PEM of the self-signed CA that signed the secure metrics server's certificate
    /// (with [`ManagerBuilder::metrics_secure`] and no certificate directory): what a scraper
    /// outside the cluster trusts. `None` when metrics are plain or use the given certificate.
    pub fn metrics_ca_pem(&self) -> Option<&str> {
        self.inner.metrics_ca_pem.as_deref()
    }

    /// The write log and wait bound of read-your-own-writes, when it is on.
    pub(crate) fn read_your_writes(&self) -> Option<(crate::read_your_writes::WriteLog, Duration)> {
        self.inner.read_your_writes.clone()
    }

    pub(crate) fn claim_controller_name(&self, name: &str) -> bool {
        self.inner.controller_names.lock().insert(name.to_string())
    }

    fn router(&self) -> Router {
        let metrics = self.inner.metrics.clone();
        Arc::new(move |path: &str, _query: Option<&str>| {
            (path == "/metrics").then(|| {
                (
                    http::StatusCode::OK,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    metrics.encode(),
                )
            })
        })
    }

    fn probe_router(&self) -> Router {
        let (healthz, readyz) = (self.inner.healthz.clone(), self.inner.readyz.clone());
        Arc::new(move |path: &str, query: Option<&str>| {
            let (status, body) = if let Some(rest) = path.strip_prefix("/healthz") {
                healthz.serve(rest, query)
            } else if let Some(rest) = path.strip_prefix("/readyz") {
                readyz.serve(rest, query)
            } else {
                return None;
            };
            Some((status, TEXT, body))
        })
    }

    /// Runs everything until `shutdown` completes; see the [module docs](self) for the order
    /// of things and what each error means.
    pub async fn start(self, shutdown: impl Future<Output = ()>) -> Result<(), ManagerError> {
        if self.inner.started.swap(true, Ordering::AcqRel) {
            return Err(ManagerError::AlreadyStarted);
        }
        let inner = self.inner.clone();

        // 1. Preflight: nothing runs yet.
        let mut listeners = Vec::new();
        for (what, addr) in [
            ("metrics", inner.metrics_addr),
            ("health probes", inner.probe_addr),
        ] {
            if let Some(addr) = addr {
                let l = server::bind(addr)
                    .await
                    .map_err(|source| ManagerError::Bind { what, addr, source })?;
                let local = l.local_addr().unwrap_or(addr);
                inner.bound.lock().push((what, local));
                let secure = what == "metrics" && inner.metrics_secure.is_some();
                tracing::info!(what, addr = %local, secure, "serving");
                listeners.push((what, l));
            }
        }
        if let Some(e) = &inner.elector {
            e.lock().preflight().await?;
        }
        if let Some(s) = &inner.shard {
            s.elector().lock().preflight().await?;
        }

        // 2. Non-leader-election runnables: servers, the cache, the rest.
        let servers_cancel = CancellationToken::new();
        let mut servers = JoinSet::new();
        for (what, listener) in listeners {
            let (router, secure) = if what == "metrics" {
                (self.router(), inner.metrics_secure.clone())
            } else {
                (self.probe_router(), None)
            };
            servers.spawn(server::serve(
                listener,
                router,
                servers_cancel.clone(),
                what,
                secure,
            ));
        }
        inner.factory.start();
        let mut entries: Vec<Entry> = std::mem::take(&mut *inner.runnables.lock());
        if let Some(s) = &inner.shard {
            let r = s.runnable();
            entries.push(Entry {
                name: r.name(),
                leader_election: false,
                start: Box::new(move |shutdown| r.start(shutdown).boxed()),
            });
        }
        let (le_entries, other): (Vec<Entry>, Vec<Entry>) =
            entries.into_iter().partition(|e| e.leader_election);
        let others_cancel = CancellationToken::new();
        let mut others: JoinSet<(String, Result<(), BoxError>)> = JoinSet::new();
        for e in other {
            let (name, run) = (e.name, (e.start)(others_cancel.child_token()));
            others.spawn(async move { (name, run.await) });
        }

        // 3. Leader election.
        let election_cancel = CancellationToken::new();
        let (ev_tx, mut ev_rx) = tokio::sync::mpsc::unbounded_channel::<Result<(), String>>();
        let mut election = inner.elector.clone().map(|e| {
            let cancel = election_cancel.clone();
            AbortOnDrop(tokio::spawn(async move {
                if e.acquire(&cancel).await {
                    let _ = ev_tx.send(Ok(()));
                    if let RenewOutcome::Lost(why) = e.renew(&cancel).await {
                        let _ = ev_tx.send(Err(why));
                    }
                }
            }))
        });
        let le_cancel = CancellationToken::new();
        let mut leaders: JoinSet<(String, Result<(), BoxError>)> = JoinSet::new();
        let mut pending_le = Some(le_entries);
        let start_leading =
            |pending: &mut Option<Vec<Entry>>,
             set: &mut JoinSet<(String, Result<(), BoxError>)>| {
                for e in pending.take().unwrap_or_default() {
                    let (name, run) = (e.name, (e.start)(le_cancel.child_token()));
                    set.spawn(async move { (name, run.await) });
                }
                inner.elected.send_replace(true);
            };
        if election.is_none() {
            start_leading(&mut pending_le, &mut leaders);
        }

        enum Stop {
            Shutdown,
            Lost(String),
            Failed(String, BoxError),
        }
        tokio::pin!(shutdown);
        let stop = loop {
            tokio::select! {
                () = &mut shutdown => break Stop::Shutdown,
                Some(ev) = ev_rx.recv() => match ev {
                    Ok(()) => {
                        start_leading(&mut pending_le, &mut leaders);
                        if let Some(f) = &inner.on_started_leading { f(); }
                    }
                    Err(why) => break Stop::Lost(why),
                },
                Some(r) = leaders.join_next() => if let Some(s) = finished(r) { break s; },
                Some(r) = others.join_next() => if let Some(s) = finished(r) { break s; },
            }
        };
        fn finished(
            r: Result<(String, Result<(), BoxError>), tokio::task::JoinError>,
        ) -> Option<Stop> {
            match r {
                Ok((_, Ok(()))) => None,
                Ok((name, Err(e))) => Some(Stop::Failed(name, e)),
                Err(e) => Some(Stop::Failed("a runnable".into(), Box::new(e))),
            }
        }

        // 4. Stop.
        let deadline = tokio::time::Instant::now() + inner.graceful_shutdown_timeout;
        let mut result: Result<(), ManagerError> = Ok(());
        match &stop {
            Stop::Lost(why) => {
                tracing::error!(identity = %inner.identity, reason = %why, "leader election lost: stopping leader-election runnables at once");
                le_cancel.cancel();
                leaders.abort_all();
                while leaders.join_next().await.is_some() {}
                result = Err(ManagerError::LeaderElectionLost(why.clone()));
            }
            Stop::Shutdown | Stop::Failed(..) => {
                if let Stop::Failed(name, e) = &stop {
                    tracing::error!(runnable = %name, error = %e, "runnable failed: stopping the manager");
                } else {
                    tracing::info!("Stopping and waiting for leader election runnables");
                }
                le_cancel.cancel();
                // Keep renewing while they drain; a loss meanwhile aborts them.
                let drained = loop {
                    tokio::select! {
                        r = leaders.join_next() => match r {
                            None => break true,
                            Some(Ok((name, Err(e)))) => tracing::error!(runnable = %name, error = %e, "runnable failed while stopping"),
                            Some(_) => {}
                        },
                        Some(Err(why)) = ev_rx.recv() => {
                            tracing::error!(reason = %why, "leader election lost while stopping");
                            leaders.abort_all();
                            while leaders.join_next().await.is_some() {}
                            result = Err(ManagerError::LeaderElectionLost(why));
                            break true;
                        }
                        () = tokio::time::sleep_until(deadline) => break false,
                    }
                };
                if !drained {
                    let left = leaders.len();
                    leaders.abort_all();
                    while leaders.join_next().await.is_some() {}
                    result = Err(ManagerError::GracefulShutdownTimeout(
                        inner.graceful_shutdown_timeout,
                        format!("{left} leader election runnable(s) still running were aborted"),
                    ));
                }
            }
        }
        election_cancel.cancel();
        if let Some(task) = election.as_mut() {
            let _ = (&mut task.0).await;
        }
        if let Some(e) = &inner.elector {
            let was_leading = *inner.elected.borrow();
            // Every leader-election runnable has ended (or was aborted and joined): nothing of
            // this replica acts as leader any more, so the Lease can go — unless it was lost.
            let lost = matches!(stop, Stop::Lost(_))
                || matches!(result, Err(ManagerError::LeaderElectionLost(_)));
            // `release` re-reads the Lease and writes only if this replica holds it (it may have
            // acquired it just as the shutdown began, before leading anything).
            if inner.release_on_cancel && !lost {
                match e.release().await {
                    Ok(_) => {}
                    Err(err) => tracing::error!(error = %err, "failed to release the leader lease"),
                }
            }
            if was_leading && let Some(f) = &inner.on_stopped_leading {
                f();
            }
        }
        tracing::info!("Stopping and waiting for non leader election runnables");
        others_cancel.cancel();
        let grace = if matches!(stop, Stop::Lost(_)) {
            Duration::ZERO
        } else {
            deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .max(Duration::from_secs(1))
        };
        let others_done = tokio::time::timeout(grace, async {
            while let Some(r) = others.join_next().await {
                if let Ok((name, Err(e))) = r {
                    tracing::error!(runnable = %name, error = %e, "runnable failed while stopping");
                }
            }
        })
        .await;
        if others_done.is_err() {
            others.abort_all();
            while others.join_next().await.is_some() {}
        }
        inner.factory.shutdown().await;
        servers_cancel.cancel();
        while servers.join_next().await.is_some() {}
        tracing::info!("manager stopped");
        match stop {
            Stop::Failed(name, source) if result.is_ok() => {
                Err(ManagerError::Runnable { name, source })
            }
            _ => result,
        }
    }
}

/// Aborts the task when dropped: the election must not outlive a dropped `start` future.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Completes on the first SIGTERM or SIGINT (controller-runtime's `SetupSignalHandler`); a
/// second one exits the process at once with status 130.
///
/// ```no_run
/// # async fn demo(mgr: kube_controller_runtime::Manager) -> Result<(), kube_controller_runtime::ManagerError> {
/// mgr.start(kube_controller_runtime::shutdown_signal()).await
/// # }
/// ```
pub async fn shutdown_signal() {
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
