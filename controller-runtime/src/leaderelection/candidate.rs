//! A candidate of coordinated leader election (KEP-4355): the `coordination.k8s.io/v1beta1`
//! `LeaseCandidate` that tells the API server's election controller this replica may lead a
//! Lease, with its binary and emulation versions and the strategy it asks for (client-go's
//! `leaderelection.NewCandidate`).
//!
//! The candidate creates its object if it is missing and renews it (`spec.renewTime`) when the
//! server pings it — sets `spec.pingTime` after the last renewal, which the election controller
//! does before each election and waits up to five seconds for — and every
//! [`RENEW_INTERVAL`] otherwise (client-go's requeue interval), so that the server never
//! garbage-collects a live candidate (it drops those not renewed for 30 minutes).
//!
//! ```no_run
//! use kube_controller_runtime::leaderelection::{CoordinatedConfig, LeaseCandidate};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let config = CoordinatedConfig::oldest_emulation_version("1.2.0", "1.1.0");
//! let candidate = LeaseCandidate::new(client, "kube-system", "pod-a", "my-controller", &config)?;
//! candidate.ensure().await?; // create or renew once
//! let stop = CancellationToken::new();
//! tokio::spawn(async move { candidate.run(stop, std::time::Duration::from_secs(2)).await });
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1beta1::{
    LeaseCandidate as LeaseCandidateObject, LeaseCandidateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::{PostParams, WatchEvent, WatchParams};
use kube_codegen_runtime::api_status::{is_conflict, is_forbidden, is_not_found};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::LeaderElectionError;

/// The only strategy kube-apiserver's election controller carries out: the candidate with the
/// lowest emulation version leads, then the lowest binary version, then the oldest candidate.
pub const OLDEST_EMULATION_VERSION: &str = "OldestEmulationVersion";

/// How often a candidate renews its `LeaseCandidate` when not pinged (client-go's 5 minutes).
pub const RENEW_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// What a candidate of coordinated leader election declares about itself
/// (client-go's `CandidateConfig` minus the names).
///
/// ```
/// use kube_controller_runtime::leaderelection::CoordinatedConfig;
/// let c = CoordinatedConfig::oldest_emulation_version("1.37.1", "1.36.0");
/// assert_eq!(c.strategy, "OldestEmulationVersion");
/// assert!(c.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatedConfig {
    /// The candidate's binary version, semver without a leading `v` (`spec.binaryVersion`).
    pub binary_version: String,
    /// The version it emulates, at most `binary_version` (`spec.emulationVersion`; required
    /// with [`OLDEST_EMULATION_VERSION`]).
    pub emulation_version: String,
    /// The strategy it asks the election to use (`spec.strategy`).
    pub strategy: String,
}

impl CoordinatedConfig {
    /// A candidate asking for [`OLDEST_EMULATION_VERSION`].
    ///
    /// ```
    /// let c = kube_controller_runtime::leaderelection::CoordinatedConfig::oldest_emulation_version("1.2.0", "1.2.0");
    /// assert_eq!(c.binary_version, "1.2.0");
    /// ```
    pub fn oldest_emulation_version(
        binary_version: impl Into<String>,
        emulation_version: impl Into<String>,
    ) -> Self {
        CoordinatedConfig {
            binary_version: binary_version.into(),
            emulation_version: emulation_version.into(),
            strategy: OLDEST_EMULATION_VERSION.to_string(),
        }
    }

    /// client-go's checks of `NewCandidateWithConfig`: a binary version and a strategy, and an
    /// emulation version when the strategy is [`OLDEST_EMULATION_VERSION`].
    ///
    /// ```
    /// let mut c = kube_controller_runtime::leaderelection::CoordinatedConfig::oldest_emulation_version("1.2.0", "");
    /// assert_eq!(c.validate().unwrap_err().to_string(),
    ///     "invalid leader election configuration: coordinated leader election: the emulation version is required with strategy OldestEmulationVersion");
    /// ```
    pub fn validate(&self) -> Result<(), LeaderElectionError> {
        let bad = |m: &str| {
            Err(LeaderElectionError::InvalidConfig(format!(
                "coordinated leader election: {m}"
            )))
        };
        if self.binary_version.is_empty() {
            return bad("the binary version is required (--leader-elect-binary-version)");
        }
        if self.strategy.is_empty() {
            return bad("the strategy is required");
        }
        if self.emulation_version.is_empty() && self.strategy == OLDEST_EMULATION_VERSION {
            return bad("the emulation version is required with strategy OldestEmulationVersion");
        }
        Ok(())
    }
}

/// A `LeaseCandidate` kept alive for one Lease (client-go's `LeaseCandidate`). Cheap to clone.
#[derive(Clone)]
pub struct LeaseCandidate {
    client: kube::Client,
    namespace: String,
    name: String,
    lease_name: String,
    config: CoordinatedConfig,
}

impl fmt::Debug for LeaseCandidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaseCandidate")
            .field("candidate", &self.describe())
            .field("lease", &self.lease_name)
            .field("config", &self.config)
            .finish()
    }
}

impl LeaseCandidate {
    /// The candidate `namespace/name` for the Lease `namespace/lease_name`. `name` must be a
    /// valid LeaseCandidate name (kube-apiserver's rule is a ConfigMap key's: letters, digits,
    /// `-`, `_` and `.`, at most 253): the election controller writes it into the Lease's
    /// `holderIdentity`, so it is also the identity the elector must lead as.
    ///
    /// ```
    /// # use kube_controller_runtime::leaderelection::{CoordinatedConfig, LeaseCandidate};
    /// # fn demo(client: kube::Client) {
    /// let c = CoordinatedConfig::oldest_emulation_version("1.0.0", "1.0.0");
    /// let e = LeaseCandidate::new(client, "ns", "host 1", "lease", &c).unwrap_err();
    /// assert!(e.to_string().contains("LeaseCandidate name \"host 1\""));
    /// # }
    /// ```
    pub fn new(
        client: kube::Client,
        namespace: impl Into<String>,
        name: impl Into<String>,
        lease_name: impl Into<String>,
        config: &CoordinatedConfig,
    ) -> Result<Self, LeaderElectionError> {
        config.validate()?;
        let (namespace, name, lease_name) = (namespace.into(), name.into(), lease_name.into());
        for (what, value) in [
            ("namespace", &namespace),
            ("name", &name),
            ("lease name", &lease_name),
        ] {
            if value.is_empty() {
                return Err(LeaderElectionError::InvalidConfig(format!(
                    "coordinated leader election: the LeaseCandidate {what} is required"
                )));
            }
        }
        if let Some(why) = config_map_key_error(&name) {
            return Err(LeaderElectionError::InvalidConfig(format!(
                "coordinated leader election: LeaseCandidate name {name:?} (the leader election identity) is invalid: {why}"
            )));
        }
        Ok(LeaseCandidate {
            client,
            namespace,
            name,
            lease_name,
            config: config.clone(),
        })
    }

    /// `namespace/name` of the `LeaseCandidate`.
    ///
    /// ```no_run
    /// # fn demo(c: kube_controller_runtime::leaderelection::LeaseCandidate) { println!("{}", c.describe()); }
    /// ```
    pub fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn api(&self) -> Api<LeaseCandidateObject> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn api_error(&self, verb: &'static str, e: kube::Error) -> LeaderElectionError {
        let lease = format!("{} (LeaseCandidate)", self.describe());
        if is_forbidden(&e) {
            let message = match &e {
                kube::Error::Api(s) => s.message.clone(),
                other => other.to_string(),
            };
            return LeaderElectionError::Forbidden {
                lease,
                verb,
                message,
            };
        }
        if is_conflict(&e) {
            return LeaderElectionError::Conflict(lease);
        }
        LeaderElectionError::Api { lease, source: e }
    }

    /// Creates the `LeaseCandidate` if it does not exist, else renews it (`spec.renewTime`
    /// set to now): client-go's `ensureLease`. Returns the object written.
    pub async fn ensure(&self) -> Result<LeaseCandidateObject, LeaderElectionError> {
        let api = self.api();
        let now = MicroTime(jiff::Timestamp::now());
        match api.get_opt(&self.name).await {
            Ok(None) => {
                let obj = LeaseCandidateObject {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        namespace: Some(self.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: LeaseCandidateSpec {
                        lease_name: self.lease_name.clone(),
                        binary_version: self.config.binary_version.clone(),
                        emulation_version: Some(self.config.emulation_version.clone())
                            .filter(|v| !v.is_empty()),
                        strategy: self.config.strategy.clone(),
                        renew_time: Some(now),
                        ping_time: None,
                    },
                };
                let created = api
                    .create(&PostParams::default(), &obj)
                    .await
                    .map_err(|e| {
                        if is_not_found(&e) {
                            LeaderElectionError::NamespaceNotFound {
                                namespace: self.namespace.clone(),
                                lease: self.describe(),
                            }
                        } else {
                            self.api_error("create", e)
                        }
                    })?;
                tracing::info!(candidate = %self.describe(), lease = %self.lease_name, "created lease candidate");
                Ok(created)
            }
            Ok(Some(mut current)) => {
                current.spec.renew_time = Some(now);
                let renewed = api
                    .replace(&self.name, &PostParams::default(), &current)
                    .await
                    .map_err(|e| self.api_error("update", e))?;
                tracing::debug!(candidate = %self.describe(), "renewed lease candidate");
                Ok(renewed)
            }
            Err(e) => Err(self.api_error("get", e)),
        }
    }

    /// Keeps the candidate alive until `cancel` fires: [`ensure`](Self::ensure) now, then
    /// again whenever the server pings it (a watch on the object) and every
    /// [`RENEW_INTERVAL`]. Failures are logged and retried after `retry`.
    pub async fn run(&self, cancel: CancellationToken, retry: Duration) {
        let desc = self.describe();
        let api = self.api();
        let mut renew_due = true;
        let mut next_renew = Instant::now();
        let mut rv = String::new();
        while !cancel.is_cancelled() {
            if renew_due {
                match self.ensure().await {
                    Ok(obj) => {
                        rv = obj.metadata.resource_version.unwrap_or_default();
                        renew_due = false;
                        next_renew = Instant::now() + RENEW_INTERVAL;
                    }
                    Err(e) => {
                        tracing::warn!(candidate = %desc, error = %e, "failed to ensure lease candidate; retrying");
                        pause(&cancel, retry).await;
                        continue;
                    }
                }
            }
            let secs = next_renew
                .saturating_duration_since(Instant::now())
                .as_secs()
                .clamp(1, 290);
            let wp = WatchParams::default()
                .fields(&format!("metadata.name={}", self.name))
                .timeout(u32::try_from(secs).unwrap_or(290));
            let stream = tokio::select! {
                () = cancel.cancelled() => return,
                s = api.watch(&wp, &rv) => s,
            };
            let mut stream = match stream {
                Ok(s) => s.boxed(),
                Err(e) => {
                    tracing::debug!(candidate = %desc, error = %e, "lease candidate watch failed; retrying");
                    rv.clear();
                    pause(&cancel, retry).await;
                    continue;
                }
            };
            loop {
                let event = tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep_until(next_renew) => {
                        renew_due = true;
                        break;
                    }
                    ev = stream.next() => ev,
                };
                match event {
                    Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o))) => {
                        rv = o.metadata.resource_version.clone().unwrap_or_default();
                        if pinged(&o) {
                            tracing::debug!(candidate = %desc, "pinged by the election controller");
                            renew_due = true;
                            break;
                        }
                    }
                    Some(Ok(WatchEvent::Deleted(_))) => {
                        renew_due = true;
                        break;
                    }
                    Some(Ok(WatchEvent::Bookmark(b))) => rv = b.metadata.resource_version,
                    Some(Ok(WatchEvent::Error(e))) => {
                        tracing::debug!(candidate = %desc, error = %e.message, "lease candidate watch ended");
                        rv.clear();
                        break;
                    }
                    Some(Err(e)) => {
                        tracing::debug!(candidate = %desc, error = %e, "lease candidate watch failed");
                        rv.clear();
                        pause(&cancel, retry).await;
                        break;
                    }
                    None => break,
                }
            }
        }
    }
}

/// What is wrong with `name` as a LeaseCandidate name: kube-apiserver validates it as a
/// ConfigMap key (`IsConfigMapKey`), so host-name-and-UUID identities with `_` are fine.
fn config_map_key_error(name: &str) -> Option<String> {
    if name.len() > 253 {
        return Some("must be no more than 253 characters".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Some(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'".into(),
        );
    }
    if name == "." || name == ".." || name.starts_with("..") {
        return Some("must not be '.' or '..', nor start with '..'".into());
    }
    None
}

/// Whether the server asked for a renewal the candidate has not made yet.
fn pinged(o: &LeaseCandidateObject) -> bool {
    let spec = &o.spec;
    match (&spec.ping_time, &spec.renew_time) {
        (Some(ping), Some(renew)) => ping.0 > renew.0,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

async fn pause(cancel: &CancellationToken, d: Duration) {
    tokio::select! {
        () = cancel.cancelled() => {}
        () = tokio::time::sleep(d) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(ping: Option<&str>, renew: Option<&str>) -> LeaseCandidateObject {
        let t = |s: &str| MicroTime(s.parse().unwrap());
        LeaseCandidateObject {
            metadata: ObjectMeta::default(),
            spec: LeaseCandidateSpec {
                ping_time: ping.map(t),
                renew_time: renew.map(t),
                ..LeaseCandidateSpec::default()
            },
        }
    }

    #[test]
    fn a_ping_after_the_last_renewal_asks_for_one() {
        assert!(pinged(&obj(
            Some("2026-01-01T00:00:02Z"),
            Some("2026-01-01T00:00:01Z")
        )));
        assert!(!pinged(&obj(
            Some("2026-01-01T00:00:01Z"),
            Some("2026-01-01T00:00:02Z")
        )));
        assert!(!pinged(&obj(None, Some("2026-01-01T00:00:02Z"))));
        assert!(pinged(&obj(Some("2026-01-01T00:00:02Z"), None)));
    }

    #[test]
    fn config_checks_are_client_go_s() {
        let ok = CoordinatedConfig::oldest_emulation_version("1.2.0", "1.1.0");
        assert!(ok.validate().is_ok());
        let no_binary = CoordinatedConfig {
            binary_version: String::new(),
            ..ok.clone()
        };
        assert!(
            no_binary
                .validate()
                .unwrap_err()
                .to_string()
                .contains("binary version is required")
        );
        let other = CoordinatedConfig {
            emulation_version: String::new(),
            strategy: "example.com/custom".into(),
            ..ok
        };
        assert!(other.validate().is_ok());
    }
}
