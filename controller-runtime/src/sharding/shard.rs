//! One replica's membership in a ring, against the API server: its Lease (held and renewed
//! by a [`LeaderElector`]), the loop that reads the ring's Leases and hands keys over, and the
//! gate its controllers' workers pass before each reconcile.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::ListParams;
use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::membership::{LeaseObservation, Membership};
use super::{
    MEMBERS_ANNOTATION, RING_LABEL, ShardState, ShardingConfig, ShardingError,
    VIRTUAL_NODES_ANNOTATION,
};
use crate::leaderelection::{LeaderElector, LeaseLock, RenewOutcome};
use crate::metrics::Metrics;
use crate::{BoxError, Runnable};

type Labels = Vec<(String, String)>;

struct Gate {
    membership: Membership,
    /// Keys being reconciled on this replica, with how many workers (of all its controllers).
    running: HashMap<String, usize>,
}

struct Inner {
    ring: String,
    name: String,
    client: kube::Client,
    elector: LeaderElector,
    gate: Mutex<Gate>,
    finished: Notify,
    changes: watch::Sender<u64>,
    origin: Instant,
    members_gauge: Gauge,
    handovers: Counter,
    owned: Family<Labels, Gauge>,
}

/// This replica's membership in a ring (see the [module docs](super)). Cheap to clone.
#[derive(Clone)]
pub struct Shard {
    inner: Arc<Inner>,
}

impl fmt::Debug for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shard")
            .field("ring", &self.inner.ring)
            .field("name", &self.inner.name)
            .field("lease", &self.inner.elector.lock().describe())
            .finish()
    }
}

/// A reconcile of a key under way on this replica ([`Shard::begin`]); a handover that gives the
/// key away waits until it is dropped.
#[must_use = "the key counts as running until this is dropped"]
pub struct Running {
    shard: Shard,
    key: String,
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running").field("key", &self.key).finish()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut g = self.shard.inner.gate.lock();
        if let Some(n) = g.running.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                g.running.remove(&self.key);
            }
        }
        drop(g);
        self.shard.inner.finished.notify_waiters();
    }
}

impl Shard {
    /// A member of `config.ring` named `name` (already a valid Lease name), its Lease in
    /// `namespace`; registers `shard_ring_members`, `shard_handovers_total` and
    /// `shard_owned_keys` in `metrics`.
    pub(crate) fn new(
        client: kube::Client,
        namespace: String,
        name: String,
        config: &ShardingConfig,
        metrics: &Metrics,
    ) -> Result<Self, ShardingError> {
        use kube_codegen_runtime::validation::{is_dns1123_subdomain, is_label_value};
        let bad = is_label_value(&config.ring);
        if config.ring.is_empty() || !bad.is_empty() {
            return Err(ShardingError::InvalidRing {
                ring: config.ring.clone(),
                message: if config.ring.is_empty() {
                    "must not be empty".into()
                } else {
                    bad.join("; ")
                },
            });
        }
        let bad = is_dns1123_subdomain(&name);
        if !bad.is_empty() {
            return Err(ShardingError::InvalidShardName {
                name,
                message: bad.join("; "),
            });
        }
        let labels = BTreeMap::from([(RING_LABEL.to_string(), config.ring.clone())]);
        let lock = LeaseLock::new(client.clone(), namespace, name.clone(), name.clone())
            .with_labels(labels);
        lock.set_annotation(MEMBERS_ANNOTATION, String::new());
        lock.set_annotation(VIRTUAL_NODES_ANNOTATION, config.virtual_nodes.to_string());
        let elector = LeaderElector::new(lock, config.lease.clone())?;
        let ring_label = vec![("ring".to_string(), config.ring.clone())];
        let members = Family::<Labels, Gauge>::default();
        let handovers = Family::<Labels, Counter>::default();
        let owned = Family::<Labels, Gauge>::default();
        metrics.register(
            "shard_ring_members",
            "Live members of the ring as this replica sees them",
            members.clone(),
        );
        metrics.register(
            "shard_handovers",
            "Member lists this replica published (each one a handover of keys)",
            handovers.clone(),
        );
        metrics.register(
            "shard_owned_keys",
            "Keys of a sharded controller this replica may reconcile now",
            owned.clone(),
        );
        let (changes, _) = watch::channel(0);
        Ok(Shard {
            inner: Arc::new(Inner {
                ring: config.ring.clone(),
                client,
                elector,
                gate: Mutex::new(Gate {
                    membership: Membership::new(name.clone(), config.virtual_nodes),
                    running: HashMap::new(),
                }),
                name,
                finished: Notify::new(),
                changes,
                origin: Instant::now(),
                members_gauge: members.get_or_create(&ring_label).clone(),
                handovers: handovers.get_or_create(&ring_label).clone(),
                owned,
            }),
        })
    }

    /// The ring's name.
    pub fn ring(&self) -> &str {
        &self.inner.ring
    }

    /// This replica's shard name (its Lease's name and holder).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The elector renewing this replica's shard Lease.
    pub fn elector(&self) -> &LeaderElector {
        &self.inner.elector
    }

    /// Whether this replica holds its shard Lease within its renew deadline.
    pub fn holds_lease(&self) -> bool {
        self.inner.elector.is_leader()
    }

    /// The live members as this replica last read them (itself included).
    pub fn members(&self) -> Vec<String> {
        self.inner.gate.lock().membership.live_members()
    }

    /// Whether this replica's published claim gives it `key` (see [`super::key`]).
    pub fn owns(&self, key: &str) -> bool {
        self.inner.gate.lock().membership.owns(key)
    }

    /// Whether this replica may start reconciling `key` now.
    pub fn admits(&self, key: &str) -> bool {
        self.holds_lease() && self.inner.gate.lock().membership.admits(key)
    }

    /// Changes whenever what [`admits`](Self::admits) answers may have changed.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// The `shard_owned_keys` gauge of `controller`.
    pub(crate) fn owned_keys_gauge(&self, controller: &str) -> Gauge {
        self.inner
            .owned
            .get_or_create(&vec![
                ("ring".to_string(), self.inner.ring.clone()),
                ("controller".to_string(), controller.to_string()),
            ])
            .clone()
    }

    /// Marks `key` running if it is admitted now (checked and marked at once, so a handover
    /// waits for it): what a hand-written controller's worker calls before each reconcile
    /// (a [`Builder`](crate::Builder)'s controller does it itself). `None`: not this replica's
    /// key now — drop the request; its owner reconciles it.
    pub fn begin(&self, key: &str) -> Option<Running> {
        if !self.holds_lease() {
            return None;
        }
        let mut g = self.inner.gate.lock();
        if !g.membership.admits(key) {
            return None;
        }
        *g.running.entry(key.to_string()).or_default() += 1;
        Some(Running {
            shard: self.clone(),
            key: key.to_string(),
        })
    }

    /// Completes when this replica stops holding its shard Lease (its renew deadline passed):
    /// every reconcile still running must stop then (race it against the reconcile).
    pub async fn fenced(&self) {
        self.inner.elector.until_not_leader().await;
    }

    fn bump(&self, before: u64) {
        let after = self.inner.gate.lock().membership.signature();
        if after != before {
            self.inner.changes.send_modify(|v| *v = v.wrapping_add(1));
        }
        let live = self.inner.gate.lock().membership.live_members().len();
        self.inner
            .members_gauge
            .set(i64::try_from(live).unwrap_or(i64::MAX));
    }

    fn signature(&self) -> u64 {
        self.inner.gate.lock().membership.signature()
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.inner.origin)
    }

    /// One consistent list of the ring's Leases.
    async fn read(&self) -> Result<(), kube::Error> {
        let started = self.now();
        let api: Api<Lease> = Api::namespaced(
            self.inner.client.clone(),
            self.inner.elector.lock().namespace(),
        );
        let list = api
            .list(&ListParams::default().labels(&format!("{RING_LABEL}={}", self.inner.ring)))
            .await?;
        let finished = self.now();
        let Some(version) = list
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            tracing::warn!(ring = %self.inner.ring, "the Lease list has no numeric resourceVersion; ignored");
            return Ok(());
        };
        let now = jiff::Timestamp::now();
        let leases: Vec<LeaseObservation> = list
            .items
            .iter()
            .filter_map(|l| {
                let name = l.metadata.name.clone()?;
                let spec = l.spec.clone().unwrap_or_default();
                let annotations = l.metadata.annotations.clone().unwrap_or_default();
                let members = annotations
                    .get(MEMBERS_ANNOTATION)
                    .filter(|m| !m.is_empty())
                    .map(|m| m.split(',').map(str::to_string).collect());
                let virtual_nodes = annotations
                    .get(VIRTUAL_NODES_ANNOTATION)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(super::DEFAULT_VIRTUAL_NODES);
                tracing::trace!(ring = %self.inner.ring, shard = %name, state = %ShardState::of(l, now), "shard lease");
                Some(LeaseObservation {
                    name,
                    holder: spec.holder_identity,
                    lease_duration: Duration::from_secs(
                        u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
                    ),
                    fingerprint: l.metadata.resource_version.clone().unwrap_or_default(),
                    members,
                    virtual_nodes,
                })
            })
            .collect();
        let before = self.signature();
        self.inner
            .gate
            .lock()
            .membership
            .observe(leases, version, started, finished);
        self.bump(before);
        Ok(())
    }

    /// Hands over if the live members changed: stop taking keys that move away, wait (at most
    /// `wait`) until none of them runs here, publish the new list. True when published.
    async fn hand_over(&self, wait: Duration) -> bool {
        let (target, before) = {
            let mut g = self.inner.gate.lock();
            if !g.membership.handover_due() {
                return false;
            }
            let before = g.membership.signature();
            let target = g.membership.live_members();
            g.membership.begin_handover(&target);
            (target, before)
        };
        self.bump(before);
        let deadline = Instant::now() + wait;
        loop {
            let notified = self.inner.finished.notified();
            let drained = {
                let g = self.inner.gate.lock();
                g.membership.drained(g.running.keys().map(String::as_str))
            };
            if drained {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                tracing::info!(ring = %self.inner.ring, shard = %self.inner.name, "reconciles of keys that move away are still running; handover waits");
                return false;
            }
        }
        let lock = self.inner.elector.lock();
        lock.set_annotation(MEMBERS_ANNOTATION, target.join(","));
        let Some(version) = self.inner.elector.renew_now().await else {
            tracing::warn!(ring = %self.inner.ring, shard = %self.inner.name, "could not publish the member list; retrying");
            return false;
        };
        let Ok(version) = version.parse::<u64>() else {
            tracing::warn!(ring = %self.inner.ring, %version, "the shard Lease's resourceVersion is not numeric");
            return false;
        };
        let before = self.signature();
        self.inner
            .gate
            .lock()
            .membership
            .published(&target, version);
        self.inner.handovers.inc();
        tracing::info!(ring = %self.inner.ring, shard = %self.inner.name, members = ?target, "published the ring's members");
        self.bump(before);
        true
    }

    /// Reads and hands over every retry period while the Lease is held; returns on `stop`.
    async fn members_loop(&self, stop: &CancellationToken) {
        let retry = self.inner.elector.config().retry_period;
        loop {
            match self.read().await {
                Ok(()) => {
                    if self.hand_over(retry).await {
                        // Read back at once: keys newly claimed are admitted after a read.
                        continue;
                    }
                }
                Err(e) => {
                    tracing::warn!(ring = %self.inner.ring, error = %e, "cannot list the ring's Leases")
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(retry) => {}
            }
        }
    }

    fn reset(&self) {
        let before = self.signature();
        self.inner.gate.lock().membership.reset();
        self.inner
            .elector
            .lock()
            .set_annotation(MEMBERS_ANNOTATION, String::new());
        self.bump(before);
    }

    /// Holds the Lease and keeps the membership current until `shutdown`; then admits nothing
    /// more, waits for running reconciles (still renewing) and releases the Lease.
    async fn run(self, shutdown: CancellationToken) -> Result<(), BoxError> {
        let elector = self.inner.elector.clone();
        loop {
            self.reset();
            if !elector.acquire(&shutdown).await {
                return Ok(());
            }
            tracing::info!(ring = %self.inner.ring, shard = %self.inner.name, "holding the shard lease");
            let renew_stop = CancellationToken::new();
            let renew = elector.renew(&renew_stop);
            tokio::pin!(renew);
            let lost = tokio::select! {
                outcome = &mut renew => outcome,
                () = self.members_loop(&shutdown) => {
                    // Graceful stop: no new reconciles, let running ones end, then release.
                    let before = self.signature();
                    self.inner.gate.lock().membership.close();
                    self.bump(before);
                    let lost = loop {
                        let notified = self.inner.finished.notified();
                        if self.inner.gate.lock().running.is_empty() {
                            break None;
                        }
                        tokio::select! {
                            () = notified => {}
                            outcome = &mut renew => break Some(outcome),
                        }
                    };
                    match lost {
                        Some(outcome) => outcome,
                        None => {
                            renew_stop.cancel();
                            let _ = renew.await;
                            if let Err(e) = elector.release().await {
                                tracing::error!(ring = %self.inner.ring, error = %e, "failed to release the shard lease");
                            }
                            return Ok(());
                        }
                    }
                }
            };
            if let RenewOutcome::Lost(why) = lost {
                tracing::error!(ring = %self.inner.ring, shard = %self.inner.name, reason = %why, "shard lease lost: reconciling nothing until it is held again");
            }
            self.reset();
            if shutdown.is_cancelled() {
                return Ok(());
            }
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                () = tokio::time::sleep(elector.config().retry_period) => {}
            }
        }
    }

    /// The runnable that holds the Lease (every replica runs it).
    pub(crate) fn runnable(&self) -> ShardRunnable {
        ShardRunnable(self.clone())
    }
}

/// [`Shard::run`] as a [`Runnable`] of every replica.
pub(crate) struct ShardRunnable(Shard);

impl Runnable for ShardRunnable {
    async fn start(self, shutdown: CancellationToken) -> Result<(), BoxError> {
        self.0.run(shutdown).await
    }

    fn needs_leader_election(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        format!("shard {}/{}", self.0.inner.ring, self.0.inner.name)
    }
}
