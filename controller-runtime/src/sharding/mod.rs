//! Active-active controllers: one controller's objects split across replicas, each replica a
//! member (a *shard*) of a **ring**, with no central sharder.
//!
//! * **Membership**: each replica holds its own `coordination.k8s.io/v1` Lease, named after
//!   the shard, held by the shard (`holderIdentity` = the Lease's name) and labelled
//!   [`RING_LABEL`]`: <ring>` — the reference sharder's (timebertt/kubernetes-controller-sharding)
//!   shard Leases, so its tooling reads ours, with the states [`ShardState`] names. The Lease is
//!   acquired and renewed by the [`leaderelection`](crate::leaderelection) machinery with its
//!   defaults (15 s / 10 s / 2 s), and a replica that cannot renew stops reconciling at its
//!   renew deadline, before any other replica may take its keys (running reconciles are
//!   aborted then).
//! * **Partitioning**: a consistent-hash [`Ring`] (100 virtual nodes per member) over the live
//!   members, keyed by group/kind/namespace/name of the object the controller is `for_`
//!   ([`key`]); requests for owned objects are their controller owner's requests, so an owner
//!   and its children land on one replica. Informers still see every object; the controller's
//!   queue takes in only this replica's keys.
//! * **Handover without overlap**: a replica publishes the member list it works by in its
//!   Lease ([`MEMBERS_ANNOTATION`]); it publishes a list that gives a key away only once no
//!   reconcile of that key runs on it, and reconciles a key only after reading every Lease of
//!   the ring *after* its own claim and seeing no live member claim that key — the drain
//!   handshake, through the Leases (see [`Membership`] for the rules and why they exclude two
//!   reconciles of one key at once). A released Lease (graceful stop) hands over at the others'
//!   next read; a crashed replica's keys move once its Lease stayed unchanged for
//!   `leaseDurationSeconds` on the reader's clock: within lease duration + 2 × retry period of
//!   its last renewal, as a leader-election takeover.
//!
//! * **Server-side filtering** (KEP-5866 `shardSelector`): the ring above keeps every
//!   replica's informers complete, because a uid range does not follow the ring's keys nor
//!   owner links; [`uid_range_selector`] and [`server_supports_shard_selector`] serve *static*
//!   uid-range partitioning instead, through
//!   [`InformerOptions::shard_selector`](kube_codegen_runtime::informer::InformerOptions::shard_selector)
//!   (see `server_side.rs` for the trade-off).
//!
//! Turn it on with [`ManagerBuilder::sharding`](crate::ManagerBuilder::sharding); every
//! controller the manager's [`Builder`](crate::Builder) makes is then sharded (unless
//! [`sharded(false)`](crate::Builder::sharded)) and runs on every replica, while runnables that
//! need leader election still run on the leader only.

mod membership;
mod ring;
mod server_side;
mod shard;

use std::time::Duration;

pub use membership::{LeaseObservation, Membership};
pub use ring::{DEFAULT_VIRTUAL_NODES, Ring};
pub use server_side::{server_supports_shard_selector, uid_range_selector};
pub use shard::{Running, Shard};

use crate::leaderelection::LeaderElectionConfig;

/// The label naming a shard Lease's ring (the reference sharder's).
pub const RING_LABEL: &str = "alpha.sharding.timebertt.dev/controllerring";

/// The annotation holding the member list a shard works by (comma-separated shard names;
/// empty: it claims nothing).
pub const MEMBERS_ANNOTATION: &str = "sharding.kube-codegen.dev/members";

/// The annotation holding the virtual nodes per member of the shard's ring.
pub const VIRTUAL_NODES_ANNOTATION: &str = "sharding.kube-codegen.dev/virtual-nodes";

/// The reference sharder's per-object shard label for `ring` (`shard.alpha.sharding.timebertt.dev/<ring>`).
/// This framework assigns keys by hashing and does not write it; it is named here for tools
/// that read both.
///
/// ```
/// assert_eq!(kube_controller_runtime::sharding::shard_label("web"), "shard.alpha.sharding.timebertt.dev/web");
/// ```
pub fn shard_label(ring: &str) -> String {
    format!("shard.alpha.sharding.timebertt.dev/{ring}")
}

/// The reference sharder's per-object drain label for `ring` (`drain.alpha.sharding.timebertt.dev/<ring>`);
/// the drain handshake here goes through the shard Leases instead (see the [module docs](self)).
///
/// ```
/// assert_eq!(kube_controller_runtime::sharding::drain_label("web"), "drain.alpha.sharding.timebertt.dev/web");
/// ```
pub fn drain_label(ring: &str) -> String {
    format!("drain.alpha.sharding.timebertt.dev/{ring}")
}

/// The key a request is sharded by: `group/kind/namespace/name` of the controller's `for_`
/// object (the core group is empty, a cluster-scoped object's namespace too).
///
/// ```
/// use kube_controller_runtime::sharding::key;
/// assert_eq!(key("apps", "Deployment", Some("default"), "web"), "apps/Deployment/default/web");
/// assert_eq!(key("", "Namespace", None, "kube-system"), "/Namespace//kube-system");
/// ```
pub fn key(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> String {
    format!("{group}/{kind}/{}/{name}", namespace.unwrap_or_default())
}

/// A shard Lease's state, as the reference sharder defines it (from `spec.renewTime`,
/// `spec.leaseDurationSeconds` and the holder, on the reader's wall clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShardState {
    /// The Lease misses the fields needed to tell.
    Unknown,
    /// Dead for at least a minute.
    Orphaned,
    /// Released by the shard (or held by another identity).
    Dead,
    /// Expired at least a lease duration ago.
    Uncertain,
    /// Expired less than a lease duration ago.
    Expired,
    /// Held by the shard and not expired.
    Ready,
}

impl ShardState {
    /// The state's name in the reference sharder (`ready`, `expired`, `uncertain`, `dead`,
    /// `orphaned`, `unknown`).
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::sharding::ShardState::Ready.as_str(), "ready");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ShardState::Unknown => "unknown",
            ShardState::Orphaned => "orphaned",
            ShardState::Dead => "dead",
            ShardState::Uncertain => "uncertain",
            ShardState::Expired => "expired",
            ShardState::Ready => "ready",
        }
    }

    /// The state of `lease` at `now`.
    ///
    /// ```
    /// use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    /// use kube_controller_runtime::sharding::ShardState;
    /// let now = jiff::Timestamp::now();
    /// let mut lease = Lease::default();
    /// lease.metadata.name = Some("shard-a".into());
    /// lease.spec = Some(LeaseSpec {
    ///     holder_identity: Some("shard-a".into()),
    ///     lease_duration_seconds: Some(15),
    ///     renew_time: Some(MicroTime(now - jiff::SignedDuration::from_secs(20))),
    ///     ..LeaseSpec::default()
    /// });
    /// assert_eq!(ShardState::of(&lease, now), ShardState::Expired);
    /// ```
    pub fn of(lease: &k8s_openapi::api::coordination::v1::Lease, now: jiff::Timestamp) -> Self {
        let Some(spec) = &lease.spec else {
            return ShardState::Unknown;
        };
        let (Some(renew), Some(secs)) = (&spec.renew_time, spec.lease_duration_seconds) else {
            return ShardState::Unknown;
        };
        let duration = jiff::SignedDuration::from_secs(i64::from(secs));
        let since_renew = now.duration_since(renew.0);
        let held = spec
            .holder_identity
            .as_deref()
            .is_some_and(|h| !h.is_empty())
            && spec.holder_identity == lease.metadata.name;
        if !held {
            return if since_renew >= duration + jiff::SignedDuration::from_secs(60) {
                ShardState::Orphaned
            } else {
                ShardState::Dead
            };
        }
        if since_renew < duration {
            ShardState::Ready
        } else if since_renew < duration * 2 {
            ShardState::Expired
        } else {
            ShardState::Uncertain
        }
    }
}

impl std::fmt::Display for ShardState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a manager shards its controllers ([`ManagerBuilder::sharding`](crate::ManagerBuilder::sharding)).
///
/// ```
/// use kube_controller_runtime::sharding::ShardingConfig;
/// let c = ShardingConfig::new("crddemo");
/// assert_eq!(c.virtual_nodes, 100);
/// assert_eq!(c.lease.lease_duration.as_secs(), 15);
/// ```
#[derive(Debug, Clone)]
pub struct ShardingConfig {
    /// The ring's name: the value of every member Lease's [`RING_LABEL`].
    pub ring: String,
    /// Where the shard Leases live (default: the leader-election namespace's rule — the
    /// in-cluster namespace, else the client's default namespace).
    pub lease_namespace: Option<String>,
    /// This replica's shard name, its Lease's name and holder (default: derived from the
    /// manager's identity, made a valid Lease name). Unique per live replica.
    pub shard_name: Option<String>,
    /// Virtual nodes per member (default 100).
    pub virtual_nodes: usize,
    /// The Lease timings (default: leader election's, 15 s / 10 s / 2 s); the Lease is
    /// released at a graceful stop.
    pub lease: LeaderElectionConfig,
}

impl ShardingConfig {
    /// The defaults for `ring`.
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::sharding::ShardingConfig::new("r").ring, "r");
    /// ```
    pub fn new(ring: impl Into<String>) -> Self {
        ShardingConfig {
            ring: ring.into(),
            lease_namespace: None,
            shard_name: None,
            virtual_nodes: DEFAULT_VIRTUAL_NODES,
            lease: LeaderElectionConfig {
                release_on_cancel: true,
                ..LeaderElectionConfig::default()
            },
        }
    }
}

/// Why sharding could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ShardingError {
    /// The ring's name is no valid label value.
    #[error("invalid shard ring {ring:?}: {message}")]
    InvalidRing {
        /// The name given.
        ring: String,
        /// Why.
        message: String,
    },
    /// The shard name is no valid Lease name.
    #[error("invalid shard name {name:?}: {message}")]
    InvalidShardName {
        /// The name given.
        name: String,
        /// Why.
        message: String,
    },
    /// A static uid range outside `0..count` ([`uid_range_selector`]).
    #[error(
        "invalid shard range {index} of {count}: the index must be below the count, and the count above 0"
    )]
    InvalidRange {
        /// The range's index.
        index: u32,
        /// How many ranges.
        count: u32,
    },
    /// The shard Lease's timings are inconsistent, or it cannot be used.
    #[error("shard lease: {0}")]
    Lease(#[from] crate::LeaderElectionError),
}

/// A shard name from any identity: lower-cased, every character a Lease name may not hold
/// turned to `-`, trimmed to 63 characters.
pub(crate) fn shard_name_from(identity: &str) -> String {
    let mut s: String = identity
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.len() > 63 {
        // Keep the end: the random part of the default identity.
        s = s[s.len() - 63..].to_string();
    }
    s.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// How long after a crash a key may wait for a new owner at most: the others see the last
/// renewal within a retry period, wait a lease duration on it, and read again within a retry
/// period.
///
/// ```
/// let c = kube_controller_runtime::LeaderElectionConfig::default();
/// assert_eq!(kube_controller_runtime::sharding::takeover_bound(&c).as_secs(), 19);
/// ```
pub fn takeover_bound(config: &LeaderElectionConfig) -> Duration {
    config.lease_duration + config.retry_period * 2
}
