//! The handover rules without I/O: [`Membership`].

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use super::ring::Ring;

/// How many of its own published lists a replica remembers to find where a claim began (an
/// older start counts as the oldest remembered: later, so stricter).
const HISTORY: usize = 8;

/// One Lease of the ring as a consistent list returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseObservation {
    /// The Lease's name: the member's shard name.
    pub name: String,
    /// `spec.holderIdentity` (a live shard holds its own Lease: holder == name).
    pub holder: Option<String>,
    /// `spec.leaseDurationSeconds`.
    pub lease_duration: Duration,
    /// What changes whenever the Lease is written: its `resourceVersion`.
    pub fingerprint: String,
    /// The member's published list, if it published one.
    pub members: Option<Vec<String>>,
    /// The virtual nodes its ring uses.
    pub virtual_nodes: usize,
}

#[derive(Debug, Clone)]
struct Peer {
    fingerprint: String,
    holds: bool,
    lease_duration: Duration,
    /// When this replica first saw `fingerprint` (after the read returned).
    first_seen: Duration,
    live: bool,
    claim: Option<Ring>,
}

#[derive(Debug, Clone)]
struct Published {
    ring: Ring,
    version: u64,
}

/// The handover rules, without I/O: what one replica knows of the ring's Leases and which keys it
/// may reconcile. [`Shard`](super::Shard) drives it against the API server; the property test
/// drives it against a simulated one with simulated clocks.
///
/// A replica's **claim** is the member list it published last in its own Lease (annotation
/// [`MEMBERS_ANNOTATION`](super::MEMBERS_ANNOTATION)): it claims the keys the ring over that
/// list gives it. It reconciles key `k` only when
///
/// 1. its claim gives it `k`, and so does the list it is moving to, if it is handing keys over;
/// 2. it has read every Lease of the ring (a consistent list) *after* the write that began its
///    unbroken claim on `k`, and in that read no live other member's claim gives it `k`.
///
/// A replica publishes a list without `k` only once no reconcile of `k` is running on it. Of two
/// replicas that both claim `k`, each published before it read, so at least one read the
/// other's claim (the writes and reads are linearizable): at most one reconciles `k`. A member
/// is *live* until its Lease is released (empty holder, or a holder that is not the Lease's
/// name) or its record stayed unchanged for its `leaseDurationSeconds` on the reader's clock —
/// the rule a leader-election follower applies, and the holder stops reconciling at its renew
/// deadline, before then.
///
/// Times are any monotonic clock as a [`Duration`] since an origin of the caller's choosing.
#[derive(Debug, Clone)]
pub struct Membership {
    me: String,
    virtual_nodes: usize,
    peers: BTreeMap<String, Peer>,
    /// The resourceVersion of the last consistent read.
    read_version: Option<u64>,
    history: VecDeque<Published>,
    handing_over_to: Option<Ring>,
    closed: bool,
}

impl Membership {
    /// A member named `me` whose rings use `virtual_nodes`; it claims nothing yet.
    ///
    /// ```
    /// use kube_controller_runtime::sharding::Membership;
    /// let m = Membership::new("shard-a", 100);
    /// assert!(!m.admits("g/K/ns/n"));
    /// assert_eq!(m.live_members(), ["shard-a"]);
    /// ```
    pub fn new(me: impl Into<String>, virtual_nodes: usize) -> Self {
        Membership {
            me: me.into(),
            virtual_nodes,
            peers: BTreeMap::new(),
            read_version: None,
            history: VecDeque::new(),
            handing_over_to: None,
            closed: false,
        }
    }

    /// This member's name.
    pub fn name(&self) -> &str {
        &self.me
    }

    /// Takes in a consistent list of the ring's Leases read at resourceVersion `version`; the
    /// read started at `started` and returned at `finished`. A read older than the last one is
    /// ignored. Leases missing from the list keep their last state (and so expire by the same
    /// rule: a deleted Lease is no proof that its holder stopped).
    pub fn observe(
        &mut self,
        leases: Vec<LeaseObservation>,
        version: u64,
        started: Duration,
        finished: Duration,
    ) {
        if self.read_version.is_some_and(|v| version < v) {
            return;
        }
        self.read_version = Some(version);
        for lease in leases {
            if lease.name == self.me {
                continue;
            }
            let holds = lease.holder.as_deref() == Some(lease.name.as_str());
            let claim = lease
                .members
                .as_ref()
                .map(|m| Ring::new(m, lease.virtual_nodes));
            match self.peers.get_mut(&lease.name) {
                Some(p) if p.fingerprint == lease.fingerprint => {}
                Some(p) => {
                    p.fingerprint = lease.fingerprint;
                    p.holds = holds;
                    p.lease_duration = lease.lease_duration;
                    p.first_seen = finished;
                    if p.claim != claim {
                        p.claim = claim;
                    }
                }
                None => {
                    self.peers.insert(
                        lease.name.clone(),
                        Peer {
                            fingerprint: lease.fingerprint,
                            holds,
                            lease_duration: lease.lease_duration,
                            first_seen: finished,
                            live: holds,
                            claim,
                        },
                    );
                }
            }
        }
        for p in self.peers.values_mut() {
            p.live = p.holds && started < p.first_seen + p.lease_duration;
        }
    }

    /// The members this replica would publish now: itself and every live member, sorted.
    pub fn live_members(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .peers
            .iter()
            .filter(|(_, p)| p.live)
            .map(|(n, _)| n.clone())
            .collect();
        v.push(self.me.clone());
        v.sort();
        v.dedup();
        v
    }

    /// The list this replica claims by (its last publication), if any.
    pub fn published_members(&self) -> Option<&[String]> {
        self.history.back().map(|p| p.ring.members())
    }

    /// Whether the live members differ from the published list: a handover is due.
    pub fn handover_due(&self) -> bool {
        !self.closed && self.published_members() != Some(self.live_members().as_slice())
    }

    /// Starts moving to `members`: from now on only keys the ring over `members` also gives
    /// this replica are admitted. Publish the list once [`drained`](Self::drained).
    pub fn begin_handover(&mut self, members: &[String]) {
        self.handing_over_to = Some(Ring::new(members, self.virtual_nodes));
    }

    /// Whether a reconcile of `key` running now keeps the handover waiting (it is not this
    /// replica's under the list it moves to).
    pub fn must_drain(&self, key: &str) -> bool {
        match &self.handing_over_to {
            Some(r) => r.owner(key) != Some(self.me.as_str()),
            None => self.closed,
        }
    }

    /// Whether no running key (given) keeps the handover waiting.
    pub fn drained<'a>(&self, mut running: impl Iterator<Item = &'a str>) -> bool {
        !running.any(|k| self.must_drain(k))
    }

    /// The list the handover moves to, if one is under way.
    pub fn handover_target(&self) -> Option<&[String]> {
        self.handing_over_to.as_ref().map(|r| r.members())
    }

    /// Records that this replica's Lease now says `members`, written at resourceVersion
    /// `version`; ends the handover.
    pub fn published(&mut self, members: &[String], version: u64) {
        let ring = Ring::new(members, self.virtual_nodes);
        self.history.push_back(Published { ring, version });
        while self.history.len() > HISTORY {
            self.history.pop_front();
        }
        self.handing_over_to = None;
    }

    /// The Lease was lost (or is being re-acquired): nothing is admitted until a new list is
    /// published and read back.
    pub fn reset(&mut self) {
        self.history.clear();
        self.handing_over_to = None;
    }

    /// Admits nothing any more (a graceful stop); [`must_drain`](Self::must_drain) is true
    /// of every key.
    pub fn close(&mut self) {
        self.closed = true;
        self.handing_over_to = None;
    }

    /// Whether this replica's current claim gives it `key` (what its queue takes in).
    pub fn owns(&self, key: &str) -> bool {
        !self.closed
            && self
                .history
                .back()
                .is_some_and(|p| p.ring.owner(key) == Some(self.me.as_str()))
    }

    /// Whether this replica may start reconciling `key` now (the rules above).
    pub fn admits(&self, key: &str) -> bool {
        if !self.owns(key) {
            return false;
        }
        if let Some(to) = &self.handing_over_to
            && to.owner(key) != Some(self.me.as_str())
        {
            return false;
        }
        // Where the unbroken claim on `key` began.
        let mut since = None;
        for p in self.history.iter().rev() {
            if p.ring.owner(key) == Some(self.me.as_str()) {
                since = Some(p.version);
            } else {
                break;
            }
        }
        let (Some(since), Some(read)) = (since, self.read_version) else {
            return false;
        };
        if read <= since {
            return false;
        }
        !self.peers.iter().any(|(name, p)| {
            p.live
                && p.claim
                    .as_ref()
                    .is_some_and(|c| c.owner(key) == Some(name.as_str()))
        })
    }

    /// What [`admits`](Self::admits) depends on, to tell when to look at the keys again.
    pub fn signature(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.closed.hash(&mut h);
        for p in &self.history {
            p.version.hash(&mut h);
        }
        self.handover_target().hash(&mut h);
        let verified = match (self.history.back(), self.read_version) {
            (Some(p), Some(r)) => r > p.version,
            _ => false,
        };
        verified.hash(&mut h);
        for (name, p) in &self.peers {
            name.hash(&mut h);
            p.live.hash(&mut h);
            p.claim.as_ref().map(|c| c.members()).hash(&mut h);
        }
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(name: &str, rv: u64, members: Option<&[&str]>) -> LeaseObservation {
        LeaseObservation {
            name: name.into(),
            holder: Some(name.into()),
            lease_duration: Duration::from_secs(15),
            fingerprint: rv.to_string(),
            members: members.map(|m| m.iter().map(|s| s.to_string()).collect()),
            virtual_nodes: 100,
        }
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_key_is_admitted_only_after_a_read_that_follows_the_claim() {
        let mut a = Membership::new("a", 100);
        a.observe(vec![lease("a", 1, None)], 1, S, S);
        assert!(a.handover_due());
        let members = a.live_members();
        a.begin_handover(&members);
        a.published(&members, 2);
        assert!(a.owns("k"));
        assert!(!a.admits("k"), "not read back yet");
        a.observe(vec![lease("a", 2, Some(&["a"]))], 2, S, S);
        assert!(
            !a.admits("k"),
            "a read at the claim's own version is not after it"
        );
        a.observe(vec![lease("a", 2, Some(&["a"]))], 3, S, S);
        assert!(a.admits("k"));
    }

    #[test]
    fn a_live_peer_claiming_the_key_blocks_it_until_it_hands_over() {
        let mut a = Membership::new("a", 100);
        a.observe(vec![lease("b", 1, Some(&["b"]))], 1, S, S);
        let both = a.live_members();
        assert_eq!(both, ["a", "b"]);
        a.begin_handover(&both);
        a.published(&both, 2);
        let mine = (0..100)
            .map(|i| format!("k{i}"))
            .find(|k| a.owns(k))
            .unwrap();
        a.observe(vec![lease("b", 1, Some(&["b"]))], 3, S, S);
        assert!(!a.admits(&mine), "b still claims every key");
        a.observe(vec![lease("b", 4, Some(&["a", "b"]))], 5, S, S);
        assert!(a.admits(&mine));
        // b's lease is not renewed for 15 s on a's clock: b is gone, a takes everything.
        let later = Duration::from_secs(17);
        a.observe(vec![lease("b", 4, Some(&["a", "b"]))], 6, later, later);
        assert_eq!(a.live_members(), ["a"]);
    }
}
