//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics and defaults
//! (`k8s.io/client-go/tools/leaderelection`). Usable without the [`Manager`](crate::Manager).
//!
//! Candidates race to write their identity into one Lease. Every write is an update with the
//! Lease's `resourceVersion` as a precondition (or a create), so of two candidates that read the
//! same Lease at most one can write it. A holder renews every `retry_period`; a candidate takes
//! over only after it has seen the same record, unchanged, for `leaseDurationSeconds` **on its
//! own clock** (`renewTime` is informational, clocks are not compared).
//!
//! | setting | default | meaning |
//! | --- | --- | --- |
//! | `lease_duration` | 15 s | how long followers wait on an unchanged record before taking over |
//! | `renew_deadline` | 10 s | how long the leader keeps trying to renew before it gives up |
//! | `retry_period` | 2 s | between attempts (with jitter ×1.2 while acquiring) |
//!
//! The leader's deadline is measured from the **start** of its last successful renewal, so it
//! gives up at least `lease_duration − renew_deadline` (5 s) before any follower may take over;
//! [`LeaderElector::is_leader`] turns false at that deadline even if no task got to run (a
//! process stopped with SIGSTOP and resumed later sees its deadline passed and does not write).
//!
//! ## Coordinated leader election (KEP-4355)
//!
//! [`LeaderElector::coordinated`] makes a candidate that does not race for the Lease: it keeps a
//! `coordination.k8s.io/v1beta1` [`LeaseCandidate`] (its binary and emulation versions, see
//! [`candidate`]) and lets kube-apiserver's election controller (feature gate
//! `CoordinatedLeaderElection`) pick the holder — with [`OLDEST_EMULATION_VERSION`], the
//! candidate with the lowest emulation version, then the lowest binary version, then the oldest.
//! The elector waits until the server writes its identity into `spec.holderIdentity`, then renews
//! the Lease as usual (client-go's `tryCoordinatedRenew`). When the server names a better
//! candidate in `spec.preferredHolder`, the leader stops renewing at once ([`RenewOutcome::Lost`]
//! with the reason "end of term") and the Lease runs out, after which the server hands it to the
//! preferred holder. The elector never creates the Lease, and a Lease past its duration is left to
//! the server, so two holders cannot overlap.
//!
//! ```no_run
//! use kube_controller_runtime::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock, RenewOutcome};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let lock = LeaseLock::new(client, "kube-system", "my-controller", "pod-a_1234");
//! let elector = LeaderElector::new(lock, LeaderElectionConfig::default())?;
//! let cancel = CancellationToken::new();
//! if elector.acquire(&cancel).await {
//!     // … lead …
//!     match elector.renew(&cancel).await {
//!         RenewOutcome::Cancelled => { elector.release().await?; }
//!         RenewOutcome::Lost(why) => eprintln!("lost the lease: {why}"),
//!     }
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use kube_codegen_runtime::api_status::{is_conflict, is_forbidden, is_not_found};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::metrics::LeaderMetrics;

pub mod candidate;

pub use candidate::{CoordinatedConfig, LeaseCandidate, OLDEST_EMULATION_VERSION};

/// client-go's `JitterFactor`: acquisition attempts wait `retry_period × (1 + rand × 1.2)`.
pub const JITTER_FACTOR: f64 = 1.2;

/// Why leader election failed.
///
/// Retryable: [`Api`](Self::Api) with a 5xx, 429 or connection error, and
/// [`Conflict`](Self::Conflict) (another candidate wrote first — the election loop retries by
/// itself). Not retryable, the configuration or the cluster must change:
/// [`InvalidConfig`](Self::InvalidConfig), [`Forbidden`](Self::Forbidden),
/// [`NamespaceNotFound`](Self::NamespaceNotFound), [`InvalidLease`](Self::InvalidLease).
/// [`NotLeader`](Self::NotLeader) is what a fenced client answers to a write after this
/// replica's lease deadline: the write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum LeaderElectionError {
    /// The timings or identity are inconsistent (client-go's `NewLeaderElector` checks).
    #[error("invalid leader election configuration: {0}")]
    InvalidConfig(String),
    /// The identity may not read or write Leases in the namespace.
    #[error(
        "no permission to {verb} Lease {lease}: {message} (the controller's RBAC needs get, create and update on coordination.k8s.io leases)"
    )]
    Forbidden {
        /// `namespace/name`.
        lease: String,
        /// The verb refused.
        verb: &'static str,
        /// The server's message.
        message: String,
    },
    /// The leader-election namespace does not exist.
    #[error("leader election namespace {namespace:?} does not exist (Lease {lease})")]
    NamespaceNotFound {
        /// The namespace.
        namespace: String,
        /// `namespace/name`.
        lease: String,
    },
    /// The Lease exists but cannot be read as a Lease (a field that is no valid value).
    #[error("Lease {lease} cannot be decoded: {field}: {message}")]
    InvalidLease {
        /// `namespace/name`.
        lease: String,
        /// The JSON path of the bad field, `spec.renewTime` say.
        field: String,
        /// Why it is invalid.
        message: String,
    },
    /// Another candidate updated the Lease first.
    #[error("Lease {0} was updated concurrently")]
    Conflict(String),
    /// A write refused by the leader fence: this replica's lease deadline passed (or it never
    /// led). Nothing was sent to the server.
    #[error("not the leader of Lease {lease}: write refused ({method} {path})")]
    NotLeader {
        /// `namespace/name`.
        lease: String,
        /// The HTTP method refused.
        method: String,
        /// The request path.
        path: String,
    },
    /// Any other API error.
    #[error("Lease {lease}: {source}")]
    Api {
        /// `namespace/name`.
        lease: String,
        /// The error.
        #[source]
        source: kube::Error,
    },
}

/// How leader election is timed (client-go's `LeaderElectionConfig` minus the lock and
/// callbacks). See the [module docs](self) for the defaults.
///
/// ```
/// let c = kube_controller_runtime::LeaderElectionConfig::default();
/// assert_eq!(c.lease_duration.as_secs(), 15);
/// assert!(c.validate().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct LeaderElectionConfig {
    /// How long followers wait on an unchanged record before taking over.
    pub lease_duration: Duration,
    /// How long the leader tries to renew before giving up.
    pub renew_deadline: Duration,
    /// How long to wait between attempts.
    pub retry_period: Duration,
    /// Whether [`LeaderElector::run`] releases the lease when cancelled.
    pub release_on_cancel: bool,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
        }
    }
}

impl LeaderElectionConfig {
    /// client-go's checks: lease duration > renew deadline > retry period × 1.2, all positive;
    /// and the lease duration a whole number of seconds of at least one (it is written as
    /// `leaseDurationSeconds`).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let mut c = kube_controller_runtime::LeaderElectionConfig::default();
    /// c.renew_deadline = Duration::from_secs(20);
    /// assert_eq!(c.validate().unwrap_err().to_string(),
    ///     "invalid leader election configuration: leaseDuration must be greater than renewDeadline");
    /// ```
    pub fn validate(&self) -> Result<(), LeaderElectionError> {
        let bad = |m: &str| Err(LeaderElectionError::InvalidConfig(m.to_string()));
        if self.lease_duration.is_zero() {
            return bad("leaseDuration must be greater than zero");
        }
        if self.renew_deadline.is_zero() {
            return bad("renewDeadline must be greater than zero");
        }
        if self.retry_period.is_zero() {
            return bad("retryPeriod must be greater than zero");
        }
        if self.lease_duration <= self.renew_deadline {
            return bad("leaseDuration must be greater than renewDeadline");
        }
        if self.renew_deadline <= self.retry_period.mul_f64(JITTER_FACTOR) {
            return bad("renewDeadline must be greater than retryPeriod*JitterFactor");
        }
        if self.lease_duration.subsec_nanos() != 0
            || self.lease_duration.as_secs() > i32::MAX as u64
        {
            return bad("leaseDuration must be a whole number of seconds");
        }
        Ok(())
    }
}

/// What a Lease says, as client-go's `LeaderElectionRecord` has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// The holder; empty when released.
    pub holder_identity: String,
    /// `leaseDurationSeconds`.
    pub lease_duration_seconds: i32,
    /// When the holder acquired it.
    pub acquire_time: Option<jiff::Timestamp>,
    /// When the holder last renewed it.
    pub renew_time: Option<jiff::Timestamp>,
    /// How often the holder changed.
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    fn from_lease(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        LeaderElectionRecord {
            holder_identity: spec.holder_identity.unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    fn apply_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder_identity.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.leader_transitions);
    }
}

/// The Lease a [`LeaderElector`] competes for (client-go's `resourcelock.LeaseLock`).
///
/// ```no_run
/// # fn demo(client: kube::Client) {
/// let lock = kube_controller_runtime::LeaseLock::new(client, "kube-system", "crddemo", "host_uuid");
/// assert_eq!(lock.describe(), "kube-system/crddemo");
/// # }
/// ```
#[derive(Clone)]
pub struct LeaseLock {
    client: kube::Client,
    namespace: String,
    name: String,
    identity: String,
    /// Labels the Lease is created with (and kept on updates): a shard Lease's ring label.
    labels: std::collections::BTreeMap<String, String>,
    /// Annotations every write sets (a shard's published member list); shared so the owner can
    /// change them between writes.
    annotations: Arc<Mutex<std::collections::BTreeMap<String, String>>>,
}

impl fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaseLock")
            .field("lease", &self.describe())
            .field("identity", &self.identity)
            .finish()
    }
}

impl LeaseLock {
    /// The Lease `namespace/name`, competed for as `identity`. The client must not be a
    /// leader-fenced one.
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// let lock = kube_controller_runtime::LeaseLock::new(client, "ns", "lease", "me");
    /// # }
    /// ```
    pub fn new(
        client: kube::Client,
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaseLock {
            client,
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            labels: Default::default(),
            annotations: Default::default(),
        }
    }

    /// The Lease carries `labels` (set at create, restored by every update).
    pub(crate) fn with_labels(
        mut self,
        labels: std::collections::BTreeMap<String, String>,
    ) -> Self {
        self.labels = labels;
        self
    }

    /// Sets an annotation every later write carries.
    pub(crate) fn set_annotation(&self, key: &str, value: String) {
        self.annotations.lock().insert(key.to_string(), value);
    }

    /// The Lease's namespace.
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    fn stamp(&self, meta: &mut ObjectMeta) {
        if !self.labels.is_empty() {
            let labels = meta.labels.get_or_insert_with(Default::default);
            for (k, v) in &self.labels {
                labels.insert(k.clone(), v.clone());
            }
        }
        let annotations = self.annotations.lock();
        if !annotations.is_empty() {
            let to = meta.annotations.get_or_insert_with(Default::default);
            for (k, v) in annotations.iter() {
                to.insert(k.clone(), v.clone());
            }
        }
    }

    /// `namespace/name`.
    ///
    /// ```no_run
    /// # fn demo(l: kube_controller_runtime::LeaseLock) { println!("{}", l.describe()); }
    /// ```
    pub fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// This candidate's identity.
    ///
    /// ```no_run
    /// # fn demo(l: kube_controller_runtime::LeaseLock) { println!("{}", l.identity()); }
    /// ```
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The Lease's name.
    ///
    /// ```no_run
    /// # fn demo(l: kube_controller_runtime::LeaseLock) { println!("{}", l.name()); }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    fn api(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn api_error(&self, verb: &'static str, e: kube::Error) -> LeaderElectionError {
        if is_forbidden(&e) {
            let message = match &e {
                kube::Error::Api(s) => s.message.clone(),
                other => other.to_string(),
            };
            return LeaderElectionError::Forbidden {
                lease: self.describe(),
                verb,
                message,
            };
        }
        if is_conflict(&e) {
            return LeaderElectionError::Conflict(self.describe());
        }
        LeaderElectionError::Api {
            lease: self.describe(),
            source: e,
        }
    }

    /// Reads the Lease (`None` if it does not exist). A Lease that cannot be decoded is an
    /// [`InvalidLease`](LeaderElectionError::InvalidLease) error naming the field.
    pub async fn get(&self) -> Result<Option<Lease>, LeaderElectionError> {
        let req = http::Request::get(format!(
            "/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
            self.namespace, self.name
        ))
        .body(Vec::new())
        .map_err(|e| LeaderElectionError::InvalidConfig(format!("lease path: {e}")))?;
        match self.client.request::<Value>(req).await {
            Ok(v) => decode_lease(&self.describe(), v).map(Some),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(self.api_error("get", e)),
        }
    }

    async fn create(
        &self,
        record: &LeaderElectionRecord,
        dry_run: bool,
    ) -> Result<Lease, LeaderElectionError> {
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        let mut lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        self.stamp(&mut lease.metadata);
        let pp = PostParams {
            dry_run,
            ..PostParams::default()
        };
        self.api().create(&pp, &lease).await.map_err(|e| {
            if is_not_found(&e) {
                LeaderElectionError::NamespaceNotFound {
                    namespace: self.namespace.clone(),
                    lease: self.describe(),
                }
            } else {
                self.api_error("create", e)
            }
        })
    }

    /// Writes `record` over `current`, with `current`'s resourceVersion as precondition.
    async fn update(
        &self,
        current: &Lease,
        record: &LeaderElectionRecord,
        dry_run: bool,
    ) -> Result<Lease, LeaderElectionError> {
        let mut lease = current.clone();
        record.apply_to(lease.spec.get_or_insert_with(LeaseSpec::default));
        if !dry_run {
            self.stamp(&mut lease.metadata);
        }
        let pp = PostParams {
            dry_run,
            ..PostParams::default()
        };
        self.api()
            .replace(&self.name, &pp, &lease)
            .await
            .map_err(|e| self.api_error("update", e))
    }

    /// Checks, without changing anything, that the Lease can be used: its namespace exists,
    /// this identity may get, create (or update) it, and an existing one decodes. Errors that
    /// may pass by themselves (5xx, connection) are not reported here; the election retries
    /// them.
    pub async fn preflight(&self) -> Result<(), LeaderElectionError> {
        let probe = LeaderElectionRecord {
            holder_identity: self.identity.clone(),
            lease_duration_seconds: 1,
            ..LeaderElectionRecord::default()
        };
        let result = match self.get().await {
            Ok(None) => self.create(&probe, true).await.map(drop),
            Ok(Some(current)) => {
                // The same content: a no-op update, dry-run; only permissions matter.
                let record = LeaderElectionRecord::from_lease(&current);
                self.update(&current, &record, true).await.map(drop)
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(()) | Err(LeaderElectionError::Conflict(_)) => Ok(()),
            Err(LeaderElectionError::Api { ref source, .. }) if matches!(source, kube::Error::Api(s) if s.code == 409) => {
                Ok(())
            }
            Err(e @ LeaderElectionError::Api { .. }) => {
                tracing::warn!(error = %e, "leader election preflight could not check the Lease; the election will retry");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// Decodes a Lease from JSON, naming the field that is wrong if it cannot be.
fn decode_lease(lease: &str, v: Value) -> Result<Lease, LeaderElectionError> {
    let invalid = |field: &str, message: String| LeaderElectionError::InvalidLease {
        lease: lease.to_string(),
        field: field.to_string(),
        message,
    };
    if let Some(spec) = v.get("spec").and_then(Value::as_object) {
        for field in ["acquireTime", "renewTime"] {
            if let Some(t) = spec.get(field).filter(|t| !t.is_null()) {
                serde_json::from_value::<MicroTime>(t.clone()).map_err(|e| {
                    invalid(
                        &format!("spec.{field}"),
                        format!("{t} is no MicroTime ({e})"),
                    )
                })?;
            }
        }
        for field in ["leaseDurationSeconds", "leaseTransitions"] {
            if let Some(n) = spec.get(field).filter(|t| !t.is_null()) {
                serde_json::from_value::<i32>(n.clone()).map_err(|e| {
                    invalid(&format!("spec.{field}"), format!("{n} is no int32 ({e})"))
                })?;
            }
        }
        for field in ["holderIdentity", "strategy", "preferredHolder"] {
            if let Some(s) = spec.get(field).filter(|t| !t.is_null())
                && !s.is_string()
            {
                return Err(invalid(
                    &format!("spec.{field}"),
                    format!("{s} is no string"),
                ));
            }
        }
    }
    serde_json::from_value::<Lease>(v).map_err(|e| invalid("(object)", e.to_string()))
}

/// How [`LeaderElector::renew`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewOutcome {
    /// The token was cancelled while leading.
    Cancelled,
    /// Leadership was lost: the lease could not be renewed before the deadline, or another
    /// holder has it.
    Lost(String),
}

/// Where this candidate stands, as [`LeaderElector::subscribe`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaderState {
    /// Not leading; the last observed holder, if any.
    Following(Option<String>),
    /// Leading.
    Leading,
}

type NewLeaderFn = Box<dyn Fn(&str) + Send + Sync>;

struct Observed {
    record: LeaderElectionRecord,
    time: Instant,
    lease: Option<Lease>,
    /// When the last successful acquire/renew *started*; the fence deadline counts from here.
    renewed_at: Option<Instant>,
    reported_leader: String,
    /// Coordinated election: the preferred holder the server named while this candidate held
    /// the Lease (its term has ended).
    end_of_term: Option<String>,
}

struct Shared {
    lock: LeaseLock,
    config: LeaderElectionConfig,
    observed: Mutex<Observed>,
    state: watch::Sender<LeaderState>,
    metrics: Mutex<Option<LeaderMetrics>>,
    on_new_leader: Mutex<Option<NewLeaderFn>>,
    /// One attempt at a time: the renew loop and [`LeaderElector::renew_now`] take turns.
    writing: tokio::sync::Mutex<()>,
    /// Coordinated election: this candidate's `LeaseCandidate`.
    candidate: Option<LeaseCandidate>,
    /// The token of the running candidate task, if one runs.
    candidate_task: Mutex<Option<CancellationToken>>,
}

/// A leader election candidate (client-go's `LeaderElector`). Cheap to clone (a handle).
/// See the [module docs](self).
#[derive(Clone)]
pub struct LeaderElector {
    shared: Arc<Shared>,
}

impl fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lock", &self.shared.lock)
            .field("config", &self.shared.config)
            .field("leader", &self.leader())
            .finish()
    }
}

/// Callbacks of [`LeaderElector::run`] (client-go's `LeaderCallbacks`).
#[derive(Default)]
pub struct LeaderCallbacks {
    /// Called when this candidate starts leading, with a token cancelled when it stops.
    pub on_started_leading: Option<Box<dyn FnOnce(CancellationToken) + Send>>,
    /// Called when [`LeaderElector::run`] ends, whether or not it led.
    pub on_stopped_leading: Option<Box<dyn FnOnce() + Send>>,
}

impl fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderCallbacks")
            .field("on_started_leading", &self.on_started_leading.is_some())
            .field("on_stopped_leading", &self.on_stopped_leading.is_some())
            .finish()
    }
}

impl LeaderElector {
    /// A candidate for `lock` (validates the configuration and identity).
    ///
    /// ```no_run
    /// # use kube_controller_runtime::{LeaderElectionConfig, LeaderElector, LeaseLock};
    /// # fn demo(lock: LeaseLock) -> Result<(), kube_controller_runtime::LeaderElectionError> {
    /// let elector = LeaderElector::new(lock, LeaderElectionConfig::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(lock: LeaseLock, config: LeaderElectionConfig) -> Result<Self, LeaderElectionError> {
        Self::with_candidate(lock, config, None)
    }

    /// A candidate of coordinated leader election (client-go's `Coordinated` with
    /// `NewCandidate`; see the [module docs](self#coordinated-leader-election-kep-4355)): it
    /// keeps a `LeaseCandidate` named after the lock's identity in the Lease's namespace and
    /// leads only once the API server has named it holder. The identity must therefore be a
    /// valid LeaseCandidate name (letters, digits, `-`, `_`, `.`). The server must run with the `CoordinatedLeaderElection` feature gate
    /// and serve `coordination.k8s.io/v1beta1`.
    ///
    /// ```no_run
    /// # use kube_controller_runtime::leaderelection::{CoordinatedConfig, LeaderElectionConfig, LeaderElector, LeaseLock};
    /// # fn demo(client: kube::Client) -> Result<(), kube_controller_runtime::LeaderElectionError> {
    /// let lock = LeaseLock::new(client, "kube-system", "my-controller", "pod-a");
    /// let elector = LeaderElector::coordinated(
    ///     lock,
    ///     LeaderElectionConfig::default(),
    ///     CoordinatedConfig::oldest_emulation_version("1.2.0", "1.1.0"),
    /// )?;
    /// # Ok(()) }
    /// ```
    pub fn coordinated(
        lock: LeaseLock,
        config: LeaderElectionConfig,
        coordinated: CoordinatedConfig,
    ) -> Result<Self, LeaderElectionError> {
        let candidate = LeaseCandidate::new(
            lock.client.clone(),
            lock.namespace.clone(),
            lock.identity.clone(),
            lock.name.clone(),
            &coordinated,
        )?;
        Self::with_candidate(lock, config, Some(candidate))
    }

    fn with_candidate(
        lock: LeaseLock,
        config: LeaderElectionConfig,
        candidate: Option<LeaseCandidate>,
    ) -> Result<Self, LeaderElectionError> {
        config.validate()?;
        if lock.identity.is_empty() {
            return Err(LeaderElectionError::InvalidConfig(
                "Lock identity is empty".into(),
            ));
        }
        if lock.name.is_empty() || lock.namespace.is_empty() {
            return Err(LeaderElectionError::InvalidConfig(
                "the Lease needs a namespace and a name".into(),
            ));
        }
        let (state, _) = watch::channel(LeaderState::Following(None));
        Ok(LeaderElector {
            shared: Arc::new(Shared {
                lock,
                config,
                observed: Mutex::new(Observed {
                    record: LeaderElectionRecord::default(),
                    time: Instant::now(),
                    lease: None,
                    renewed_at: None,
                    reported_leader: String::new(),
                    end_of_term: None,
                }),
                state,
                metrics: Mutex::new(None),
                on_new_leader: Mutex::new(None),
                writing: tokio::sync::Mutex::new(()),
                candidate,
                candidate_task: Mutex::new(None),
            }),
        })
    }

    pub(crate) fn set_metrics(&self, metrics: LeaderMetrics) {
        metrics.status.set(0);
        *self.shared.metrics.lock() = Some(metrics);
    }

    /// Calls `f` with the identity of each new leader observed (client-go's `OnNewLeader`),
    /// including the first one.
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) {
    /// e.on_new_leader(|id| println!("new leader: {id}"));
    /// # }
    /// ```
    pub fn on_new_leader(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        *self.shared.on_new_leader.lock() = Some(Box::new(f));
    }

    /// The lock.
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { println!("{}", e.lock().describe()); }
    /// ```
    pub fn lock(&self) -> &LeaseLock {
        &self.shared.lock
    }

    /// The configuration.
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { println!("{:?}", e.config().retry_period); }
    /// ```
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.shared.config
    }

    /// Whether this candidate holds the lease now: the last record it wrote names it, and its
    /// renew deadline (counted from the start of its last successful renewal) has not passed.
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { if e.is_leader() { /* write */ } }
    /// ```
    pub fn is_leader(&self) -> bool {
        let o = self.shared.observed.lock();
        o.record.holder_identity == self.shared.lock.identity
            && o.renewed_at
                .is_some_and(|t| Instant::now() < t + self.shared.config.renew_deadline)
    }

    /// When this candidate stops holding the lease unless it renews first (the start of its
    /// last successful renewal plus the renew deadline); `None` when it does not hold it.
    pub(crate) fn lease_deadline(&self) -> Option<Instant> {
        let o = self.shared.observed.lock();
        if o.record.holder_identity != self.shared.lock.identity {
            return None;
        }
        o.renewed_at
            .map(|t| t + self.shared.config.renew_deadline)
            .filter(|d| Instant::now() < *d)
    }

    /// Completes once this candidate no longer holds the lease (its renew deadline passed
    /// without a renewal, or it released it).
    pub(crate) async fn until_not_leader(&self) {
        while let Some(deadline) = self.lease_deadline() {
            tokio::time::sleep_until(deadline).await;
        }
    }

    /// Renews once, now, while holding the lease (writing the lock's current annotations):
    /// the written Lease's resourceVersion, or `None` when the write failed or the lease is
    /// not held.
    pub(crate) async fn renew_now(&self) -> Option<String> {
        if !self.is_leader() {
            return None;
        }
        if !self.attempt().await || !self.is_leader() {
            return None;
        }
        self.shared
            .observed
            .lock()
            .lease
            .as_ref()
            .and_then(|l| l.metadata.resource_version.clone())
    }

    /// The last observed holder (`None` before any was seen, or after a release).
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { println!("{:?}", e.leader()); }
    /// ```
    pub fn leader(&self) -> Option<String> {
        Some(self.shared.observed.lock().record.holder_identity.clone()).filter(|h| !h.is_empty())
    }

    /// Changes of [`LeaderState`].
    ///
    /// ```no_run
    /// # async fn demo(e: kube_controller_runtime::LeaderElector) {
    /// let mut rx = e.subscribe();
    /// while rx.changed().await.is_ok() { println!("{:?}", *rx.borrow()); }
    /// # }
    /// ```
    pub fn subscribe(&self) -> watch::Receiver<LeaderState> {
        self.shared.state.subscribe()
    }

    /// client-go's watchdog (`Check`): an error when this candidate believes it leads but has
    /// not renewed for `lease_duration + tolerance` (a stuck renew loop).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { assert!(e.check(Duration::from_secs(20)).is_ok()); }
    /// ```
    pub fn check(&self, tolerance: Duration) -> Result<(), LeaderElectionError> {
        let o = self.shared.observed.lock();
        if o.record.holder_identity != self.shared.lock.identity {
            return Ok(());
        }
        if o.time.elapsed() > self.shared.config.lease_duration + tolerance {
            return Err(LeaderElectionError::InvalidConfig(format!(
                "failed election to renew leadership on lease {}",
                self.shared.lock.describe()
            )));
        }
        Ok(())
    }

    fn set_observed(
        &self,
        record: LeaderElectionRecord,
        lease: Option<Lease>,
        renewed_at: Option<Instant>,
    ) {
        let mut o = self.shared.observed.lock();
        o.record = record;
        o.time = Instant::now();
        o.lease = lease;
        if renewed_at.is_some() {
            o.renewed_at = renewed_at;
        }
    }

    fn maybe_report_transition(&self) {
        let holder = {
            let mut o = self.shared.observed.lock();
            if o.record.holder_identity == o.reported_leader {
                return;
            }
            o.reported_leader = o.record.holder_identity.clone();
            o.reported_leader.clone()
        };
        if holder.is_empty() {
            return;
        }
        if holder != self.shared.lock.identity {
            tracing::info!(lease = %self.shared.lock.describe(), leader = %holder, "new leader elected");
            self.shared
                .state
                .send_replace(LeaderState::Following(Some(holder.clone())));
        }
        if let Some(f) = &*self.shared.on_new_leader.lock() {
            f(&holder);
        }
    }

    /// One attempt (client-go's `tryAcquireOrRenew`): true when this candidate holds the lease
    /// afterwards.
    async fn try_acquire_or_renew(&self) -> bool {
        let _turn = self.shared.writing.lock().await;
        let started = Instant::now();
        let wall = jiff::Timestamp::now();
        let lock = &self.shared.lock;
        let desc = lock.describe();
        let duration_secs =
            i32::try_from(self.shared.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let mut record = LeaderElectionRecord {
            holder_identity: lock.identity.clone(),
            lease_duration_seconds: duration_secs,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: 0,
        };

        // 1. Fast path: the leader updates optimistically over the record it wrote last.
        let fast = {
            let o = self.shared.observed.lock();
            let valid = o.time + Duration::from_secs(o.record.lease_duration_seconds.max(0) as u64)
                > started;
            (o.record.holder_identity == lock.identity && valid)
                .then(|| o.lease.clone().map(|l| (l, o.record.clone())))
                .flatten()
        };
        if let Some((lease, old)) = fast {
            record.acquire_time = old.acquire_time;
            record.leader_transitions = old.leader_transitions;
            match lock.update(&lease, &record, false).await {
                Ok(updated) => {
                    self.set_observed(record, Some(updated), Some(started));
                    return true;
                }
                Err(e) => {
                    tracing::debug!(lease = %desc, error = %e, "failed to update lease optimistically, falling back to slow path");
                }
            }
        }

        // 2. Get or create.
        let current = match lock.get().await {
            Ok(Some(l)) => l,
            Ok(None) => match lock.create(&record, false).await {
                Ok(created) => {
                    self.set_observed(record, Some(created), Some(started));
                    return true;
                }
                Err(e) => {
                    tracing::warn!(lease = %desc, error = %e, "error initially creating lease lock");
                    return false;
                }
            },
            Err(e) => {
                tracing::warn!(lease = %desc, error = %e, "error retrieving lease lock");
                return false;
            }
        };

        // 3. Record obtained: check identity and time.
        let old = LeaderElectionRecord::from_lease(&current);
        let (held_by_other, is_me) = {
            let mut o = self.shared.observed.lock();
            if o.record != old {
                o.record = old.clone();
                o.time = Instant::now();
            }
            o.lease = Some(current.clone());
            let valid =
                o.time + Duration::from_secs(old.lease_duration_seconds.max(0) as u64) > started;
            (
                !old.holder_identity.is_empty() && valid && old.holder_identity != lock.identity,
                old.holder_identity == lock.identity,
            )
        };
        if held_by_other {
            tracing::debug!(lease = %desc, holder = %old.holder_identity, "lease is held and has not yet expired");
            return false;
        }

        // 4. Take it (or renew it over the freshly read version).
        if is_me {
            record.acquire_time = old.acquire_time;
            record.leader_transitions = old.leader_transitions;
            if let Some(m) = &*self.shared.metrics.lock() {
                m.slowpath.inc();
            }
        } else {
            record.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        match lock.update(&current, &record, false).await {
            Ok(updated) => {
                self.set_observed(record, Some(updated), Some(started));
                true
            }
            Err(e) => {
                tracing::warn!(lease = %desc, error = %e, "failed to update lease");
                false
            }
        }
    }

    /// Coordinated election (client-go's `tryCoordinatedRenew`): true when the server has named
    /// this candidate holder of a Lease that has not run out and this candidate renewed it. It
    /// never creates the Lease nor takes it from another holder; when the server prefers another
    /// candidate (`spec.preferredHolder`), it does not renew and records the end of its term.
    async fn try_coordinated_renew(&self) -> bool {
        let _turn = self.shared.writing.lock().await;
        let started = Instant::now();
        let wall = jiff::Timestamp::now();
        let lock = &self.shared.lock;
        let desc = lock.describe();
        let current = match lock.get().await {
            Ok(Some(l)) => l,
            Ok(None) => {
                tracing::debug!(lease = %desc, "lease not found; waiting for the election controller to create it");
                return false;
            }
            Err(e) => {
                tracing::warn!(lease = %desc, error = %e, "error retrieving lease lock");
                return false;
            }
        };
        let old = LeaderElectionRecord::from_lease(&current);
        let preferred = current
            .spec
            .as_ref()
            .and_then(|s| s.preferred_holder.clone())
            .filter(|p| !p.is_empty());
        let expired = {
            let mut o = self.shared.observed.lock();
            if o.record != old {
                o.record = old.clone();
                o.time = Instant::now();
            }
            o.lease = Some(current.clone());
            o.time + Duration::from_secs(old.lease_duration_seconds.max(0) as u64) <= started
        };
        if expired {
            tracing::debug!(lease = %desc, holder = %old.holder_identity, "lease has expired; waiting for the election controller");
            return false;
        }
        if old.holder_identity != lock.identity {
            tracing::trace!(lease = %desc, holder = %old.holder_identity, "lease is held by another candidate");
            return false;
        }
        if let Some(p) = preferred.filter(|p| *p != lock.identity) {
            tracing::info!(lease = %desc, preferred_holder = %p, "lease is marked as end of term; not renewing");
            self.shared.observed.lock().end_of_term = Some(p);
            return false;
        }
        let duration_secs =
            i32::try_from(self.shared.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let record = LeaderElectionRecord {
            holder_identity: lock.identity.clone(),
            lease_duration_seconds: duration_secs,
            acquire_time: old.acquire_time.or(Some(wall)),
            renew_time: Some(wall),
            leader_transitions: old.leader_transitions,
        };
        match lock.update(&current, &record, false).await {
            Ok(updated) => {
                self.set_observed(record, Some(updated), Some(started));
                true
            }
            Err(e) => {
                tracing::warn!(lease = %desc, error = %e, "failed to update lease");
                false
            }
        }
    }

    /// One attempt of the configured kind.
    async fn attempt(&self) -> bool {
        if self.shared.candidate.is_some() {
            self.try_coordinated_renew().await
        } else {
            self.try_acquire_or_renew().await
        }
    }

    /// Starts this elector's `LeaseCandidate` (coordinated election), unless it runs already;
    /// it stops when `cancel` fires.
    fn ensure_candidate(&self, cancel: &CancellationToken) {
        let Some(candidate) = self.shared.candidate.clone() else {
            return;
        };
        let mut task = self.shared.candidate_task.lock();
        if task.as_ref().is_some_and(|t| !t.is_cancelled()) {
            return;
        }
        let token = cancel.child_token();
        *task = Some(token.clone());
        let retry = self.shared.config.retry_period;
        tokio::spawn(async move { candidate.run(token, retry).await });
    }

    /// Whether this elector takes part in coordinated leader election
    /// ([`LeaderElector::coordinated`]).
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { assert!(!e.is_coordinated()); }
    /// ```
    pub fn is_coordinated(&self) -> bool {
        self.shared.candidate.is_some()
    }

    /// The preferred holder the server named when this candidate's term ended (coordinated
    /// election), if it did.
    ///
    /// ```no_run
    /// # fn demo(e: kube_controller_runtime::LeaderElector) { println!("{:?}", e.end_of_term()); }
    /// ```
    pub fn end_of_term(&self) -> Option<String> {
        self.shared.observed.lock().end_of_term.clone()
    }

    fn leading(&self, on: bool) {
        if let Some(m) = &*self.shared.metrics.lock() {
            m.status.set(i64::from(on));
        }
        if on {
            self.shared.state.send_replace(LeaderState::Leading);
        } else {
            self.shared
                .state
                .send_replace(LeaderState::Following(self.leader()));
        }
    }

    /// Tries every `retry_period` (with jitter) until this candidate holds the lease (`true`)
    /// or `cancel` fires (`false`). A [coordinated](Self::coordinated) elector starts its
    /// `LeaseCandidate` (kept until `cancel` fires) and waits for the server to name it holder.
    pub async fn acquire(&self, cancel: &CancellationToken) -> bool {
        let desc = self.shared.lock.describe();
        tracing::info!(lease = %desc, identity = %self.shared.lock.identity, coordinated = self.is_coordinated(), "attempting to acquire leader lease");
        self.ensure_candidate(cancel);
        self.shared.observed.lock().end_of_term = None;
        loop {
            let ok = tokio::select! {
                () = cancel.cancelled() => return false,
                ok = self.attempt() => ok,
            };
            self.maybe_report_transition();
            if ok && !cancel.is_cancelled() {
                tracing::info!(lease = %desc, identity = %self.shared.lock.identity, "successfully acquired lease");
                self.leading(true);
                return true;
            }
            let retry = self.shared.config.retry_period;
            let wait = retry + retry.mul_f64(fastrand::f64() * JITTER_FACTOR);
            tokio::select! {
                () = cancel.cancelled() => return false,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Renews every `retry_period` while leading; returns when `cancel` fires or leadership is
    /// lost. Leadership is lost when the renew deadline (from the start of the last successful
    /// renewal) passes without a successful renewal, or another holder is seen; no write is
    /// attempted after the deadline.
    pub async fn renew(&self, cancel: &CancellationToken) -> RenewOutcome {
        let cfg = &self.shared.config;
        let desc = self.shared.lock.describe();
        self.ensure_candidate(cancel);
        let outcome = 'outer: loop {
            tokio::select! {
                () = cancel.cancelled() => break RenewOutcome::Cancelled,
                () = tokio::time::sleep(cfg.retry_period) => {}
            }
            loop {
                let Some(deadline) = self
                    .shared
                    .observed
                    .lock()
                    .renewed_at
                    .map(|t| t + cfg.renew_deadline)
                else {
                    break 'outer RenewOutcome::Lost("never acquired".into());
                };
                let now = Instant::now();
                if now >= deadline {
                    break 'outer RenewOutcome::Lost(format!(
                        "failed to renew lease {desc} within the renew deadline of {:?}",
                        cfg.renew_deadline
                    ));
                }
                let attempt = tokio::select! {
                    () = cancel.cancelled() => break 'outer RenewOutcome::Cancelled,
                    r = tokio::time::timeout(deadline - now, self.attempt()) => r,
                };
                self.maybe_report_transition();
                match attempt {
                    Ok(true) => {
                        tracing::trace!(lease = %desc, "successfully renewed lease");
                        break;
                    }
                    Ok(false) => {
                        if let Some(preferred) = self.end_of_term() {
                            break 'outer RenewOutcome::Lost(format!(
                                "end of term on lease {desc}: the election prefers {preferred}"
                            ));
                        }
                        if let Some(other) =
                            self.leader().filter(|l| *l != self.shared.lock.identity)
                        {
                            break 'outer RenewOutcome::Lost(format!(
                                "lease {desc} is now held by {other}"
                            ));
                        }
                    }
                    Err(_) => {} // the deadline passed during the attempt: the check above ends it
                }
                let now = Instant::now();
                let pause = cfg
                    .retry_period
                    .min(deadline.saturating_duration_since(now));
                tokio::select! {
                    () = cancel.cancelled() => break 'outer RenewOutcome::Cancelled,
                    () = tokio::time::sleep(pause) => {}
                }
            }
        };
        self.leading(false);
        if let RenewOutcome::Lost(why) = &outcome {
            tracing::error!(lease = %desc, identity = %self.shared.lock.identity, reason = %why, "leader election lost");
            // Whatever the record says, this replica must not act as leader any more.
            self.shared.observed.lock().renewed_at = None;
        }
        outcome
    }

    /// Gives the lease up if this candidate holds it (client-go's `release`): writes an empty
    /// holder with `leaseDurationSeconds: 1` over the current version, so a follower takes over
    /// at its next attempt. Retries conflicts within the renew deadline. `Ok(true)` when the
    /// lease is no longer this candidate's.
    pub async fn release(&self) -> Result<bool, LeaderElectionError> {
        let lock = &self.shared.lock;
        let deadline = Instant::now() + self.shared.config.renew_deadline;
        loop {
            let current = match lock.get().await? {
                Some(l) => l,
                None => return Ok(true),
            };
            let old = LeaderElectionRecord::from_lease(&current);
            if old.holder_identity != lock.identity {
                return Ok(true);
            }
            let now = jiff::Timestamp::now();
            let record = LeaderElectionRecord {
                holder_identity: String::new(),
                lease_duration_seconds: 1,
                acquire_time: Some(now),
                renew_time: Some(now),
                leader_transitions: old.leader_transitions,
            };
            match lock.update(&current, &record, false).await {
                Ok(updated) => {
                    self.set_observed(record, Some(updated), None);
                    self.shared.observed.lock().renewed_at = None;
                    self.leading(false);
                    tracing::info!(lease = %lock.describe(), identity = %lock.identity, "released leader lease");
                    return Ok(true);
                }
                Err(LeaderElectionError::Conflict(_)) if Instant::now() < deadline => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// client-go's `Run`: acquire, call `on_started_leading`, renew until `cancel` or lost,
    /// release if `release_on_cancel` and cancelled, call `on_stopped_leading`. Returns how
    /// renewal ended (`None` when cancelled before leading).
    pub async fn run(
        &self,
        cancel: CancellationToken,
        callbacks: LeaderCallbacks,
    ) -> Option<RenewOutcome> {
        let LeaderCallbacks {
            on_started_leading,
            on_stopped_leading,
        } = callbacks;
        let outcome = if self.acquire(&cancel).await {
            let leading = cancel.child_token();
            if let Some(f) = on_started_leading {
                f(leading.clone());
            }
            let outcome = self.renew(&cancel).await;
            leading.cancel();
            if outcome == RenewOutcome::Cancelled
                && self.shared.config.release_on_cancel
                && let Err(e) = self.release().await
            {
                tracing::error!(error = %e, "failed to release lease");
            }
            Some(outcome)
        } else {
            None
        };
        if let Some(f) = on_stopped_leading {
            f();
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_checks_are_client_go_s() {
        let ok = LeaderElectionConfig::default();
        assert!(ok.validate().is_ok());
        let msg = |c: LeaderElectionConfig| c.validate().unwrap_err().to_string();
        assert!(
            msg(LeaderElectionConfig {
                renew_deadline: Duration::from_millis(2400),
                ..ok.clone()
            })
            .contains("renewDeadline must be greater than retryPeriod*JitterFactor")
        );
        assert!(
            msg(LeaderElectionConfig {
                retry_period: Duration::ZERO,
                ..ok.clone()
            })
            .contains("retryPeriod must be greater than zero")
        );
        assert!(
            msg(LeaderElectionConfig {
                lease_duration: Duration::from_millis(15_500),
                ..ok
            })
            .contains("whole number of seconds")
        );
    }

    #[test]
    fn undecodable_leases_name_the_field() {
        let v = serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l", "namespace": "ns"},
            "spec": {"holderIdentity": "other", "renewTime": "yesterday-ish", "leaseDurationSeconds": 15}
        });
        let e = decode_lease("ns/l", v).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "Lease ns/l cannot be decoded: spec.renewTime: \"yesterday-ish\" is no MicroTime"
            ),
            "{e}"
        );
        let v =
            serde_json::json!({"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": "15"}});
        assert!(
            decode_lease("ns/l", v)
                .unwrap_err()
                .to_string()
                .contains("spec.leaseDurationSeconds")
        );
    }
}
