//! Coordinated leader election (KEP-4355), as kube-apiserver's `leader-election-controller`
//! (feature gate `CoordinatedLeaderElection`) runs it over `coordination.k8s.io/v1beta1`
//! LeaseCandidates and `coordination.k8s.io/v1` Leases.
//!
//! For each Lease named by live candidates (renewed in the last 30 minutes; older ones are
//! deleted, as its garbage collector does) it decides whether an election is needed — the Lease
//! is missing, has run out (`renewTime + leaseDurationSeconds` passed) or has no holder, a
//! candidate has not renewed for 15 minutes, or the best candidate is not the holder — then
//! steps through one:
//!
//! 1. it pings every candidate that has not renewed in the last 5 s (`spec.pingTime` = now),
//!    unless it pinged it already and the candidate has not answered since, and waits;
//! 2. once no ping of the last 5 s is unanswered, the candidates that renewed in the last 5 s
//!    vote: the strategy is that of the candidate with the highest binary version (two at the
//!    same binary version asking for different strategies stop the election);
//!    with `OldestEmulationVersion` the electee is the lowest emulation version, then the lowest
//!    binary version, then the oldest candidate;
//! 3. it creates the Lease for the electee (`holderIdentity`, `strategy`,
//!    `leaseDurationSeconds: 5`, `renewTime` now), or, when the Lease exists, sets its
//!    `strategy`, and hands it to the electee if it has no holder or has run out (clearing
//!    `preferredHolder` and `acquireTime`), else names the electee in `spec.preferredHolder`,
//!    which tells the holder its term has ended.
//!
//! The real controller re-runs a step on every change of a Lease or candidate and five seconds
//! after the last; here it runs after every write and on the server's ticker. Where the real
//! one would panic (a Lease whose `holderIdentity` is null), this one treats the holder as
//! empty.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::semantics::managed::Scope;
use crate::semantics::registry::{self, CreateFlags, DeleteOptions, UpdateInput, WriteOptions};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::storage::object;

/// The strategy the controller carries out.
const OLDEST_EMULATION_VERSION: &str = "OldestEmulationVersion";
/// How long it waits for candidates to answer a ping, and how fresh a renewal must be to vote.
const ELECTION_DURATION: SignedDuration = SignedDuration::from_secs(5);
/// `leaseDurationSeconds` of the Leases it writes.
const LEASE_DURATION_SECONDS: i64 = 5;
/// A candidate not renewed for this long is dropped (and garbage-collected).
const CANDIDATE_VALID: SignedDuration = SignedDuration::from_secs(30 * 60);

/// Its writes' field manager: the API server's own loopback client.
fn write_options() -> WriteOptions {
    WriteOptions {
        manager: crate::semantics::managed::SERVER_MANAGER.into(),
        ..WriteOptions::default()
    }
}

/// A candidate as the election reads it.
struct Candidate {
    namespace: String,
    name: String,
    obj: Arc<Value>,
    ping: Option<Timestamp>,
    renew: Option<Timestamp>,
    binary: Option<semver::Version>,
    emulation: Option<semver::Version>,
    strategy: String,
    created: Option<Timestamp>,
}

fn time_at(v: &Value, pointer: &str) -> Option<Timestamp> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

/// blang/semver's `ParseTolerant`: surrounding spaces and a leading `v` dropped, a missing
/// minor or patch taken as 0.
fn parse_tolerant(s: &str) -> Option<semver::Version> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let core_end = s.find(['-', '+']).unwrap_or(s.len());
    let dots = s[..core_end].matches('.').count();
    let padded = match dots {
        0 => format!("{}.0.0{}", &s[..core_end], &s[core_end..]),
        1 => format!("{}.0{}", &s[..core_end], &s[core_end..]),
        _ => s.to_string(),
    };
    semver::Version::parse(&padded).ok()
}

impl Candidate {
    fn read(obj: Arc<Value>) -> Candidate {
        let text = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Candidate {
            namespace: object::namespace(&obj).to_string(),
            name: object::name(&obj).to_string(),
            ping: time_at(&obj, "/spec/pingTime"),
            renew: time_at(&obj, "/spec/renewTime"),
            binary: parse_tolerant(&text("/spec/binaryVersion")),
            emulation: parse_tolerant(&text("/spec/emulationVersion")),
            strategy: text("/spec/strategy"),
            created: time_at(&obj, "/metadata/creationTimestamp"),
            obj,
        }
    }

    fn expired(&self, now: Timestamp) -> bool {
        self.renew.is_none_or(|r| r + CANDIDATE_VALID < now)
    }

    /// Pinged in the last election duration and not answered since.
    fn awaiting_answer(&self, now: Timestamp) -> bool {
        matches!((self.ping, self.renew), (Some(p), Some(r)) if p + ELECTION_DURATION > now && r < p)
    }

    fn renewed_recently(&self, now: Timestamp) -> bool {
        self.renew.is_some_and(|r| r + ELECTION_DURATION > now)
    }
}

/// The election's order: lower emulation version, then lower binary version, then older.
/// True when `c` beats `best`.
fn better(c: &Candidate, best: &Candidate) -> bool {
    let zero = semver::Version::new(0, 0, 0);
    let key = |x: &Candidate| {
        (
            x.emulation.clone().unwrap_or(zero.clone()),
            x.binary.clone().unwrap_or(zero.clone()),
        )
    };
    match key(c).cmp(&key(best)) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        // Equal versions: the candidate created first wins; `best` keeps a tie.
        std::cmp::Ordering::Equal => best.created > c.created,
    }
}

fn pick_best<'a>(candidates: &[&'a Candidate]) -> Option<&'a Candidate> {
    let mut best: Option<&Candidate> = None;
    for c in candidates
        .iter()
        .copied()
        .filter(|c| c.binary.is_some() && c.emulation.is_some())
    {
        if best.is_none_or(|b| better(c, b)) {
            best = Some(c);
        }
    }
    best
}

/// The strategy of the candidate with the highest binary version.
fn pick_strategy(candidates: &[&Candidate]) -> Result<String, String> {
    let zero = semver::Version::new(0, 0, 0);
    let Some(first) = candidates.first() else {
        return Err("no candidates".into());
    };
    let (mut name, mut strategy, mut highest) = (
        &first.name,
        &first.strategy,
        first.binary.clone().unwrap_or(zero.clone()),
    );
    for c in &candidates[1..] {
        let bv = c.binary.clone().unwrap_or(zero.clone());
        match highest.cmp(&bv) {
            std::cmp::Ordering::Less => {
                (name, strategy, highest) = (&c.name, &c.strategy, bv);
            }
            std::cmp::Ordering::Equal if c.strategy != *strategy => {
                return Err(format!(
                    "candidates {name:?}, {:?} at same binary version but received differing strategies {strategy}, {}",
                    c.name, c.strategy
                ));
            }
            _ => {}
        }
    }
    Ok(strategy.clone())
}

fn lease_expired(lease: &Value, now: Timestamp) -> bool {
    let renew = time_at(lease, "/spec/renewTime");
    let secs = lease
        .pointer("/spec/leaseDurationSeconds")
        .and_then(Value::as_i64);
    match (renew, secs) {
        (Some(r), Some(s)) => r + SignedDuration::from_secs(s) < now,
        _ => true,
    }
}

fn holder(lease: &Value) -> &str {
    lease
        .pointer("/spec/holderIdentity")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn election_needed(candidates: &[&Candidate], lease: Option<&Value>, now: Timestamp) -> bool {
    let Some(lease) = lease else { return true };
    if lease_expired(lease, now) || holder(lease).is_empty() {
        return true;
    }
    if candidates
        .iter()
        .any(|c| c.renew.is_some_and(|r| r + CANDIDATE_VALID / 2 < now))
    {
        return true;
    }
    match pick_strategy(candidates) {
        Ok(s) if s == OLDEST_EMULATION_VERSION => {}
        Ok(s) => {
            tracing::trace!(strategy = %s, "strategy is not carried out by the election controller");
            return false;
        }
        Err(e) => {
            tracing::debug!(error = %e, "coordinated leader election: no strategy");
            return false;
        }
    }
    pick_best(candidates).is_some_and(|best| best.name != holder(lease))
}

/// One pass: candidates garbage-collected, one election step per Lease.
pub(super) fn pass(st: &mut State) {
    let (Some(lc_res), Some(lease_res)) = (
        st.registry
            .get("coordination.k8s.io", "v1beta1", "leasecandidates"),
        st.registry.get("coordination.k8s.io", "v1", "leases"),
    ) else {
        return;
    };
    let now = Timestamp::now();
    let mut groups: BTreeMap<(String, String), Vec<Candidate>> = BTreeMap::new();
    for obj in st.all_objects(&lc_res, None) {
        let c = Candidate::read(obj);
        if c.expired(now) {
            tracing::info!(candidate = %c.name, namespace = %c.namespace, "lease candidate expired; deleting it");
            if let Err(e) = registry::delete(
                st,
                &lc_res,
                &c.namespace,
                &c.name,
                &DeleteOptions::default(),
            ) {
                tracing::debug!(error = %e.message, "deleting an expired lease candidate failed");
            }
            continue;
        }
        let lease = c
            .obj
            .pointer("/spec/leaseName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        groups
            .entry((c.namespace.clone(), lease))
            .or_default()
            .push(c);
    }
    for ((namespace, lease), candidates) in groups {
        step(
            st,
            &lc_res,
            &lease_res,
            &namespace,
            &lease,
            &candidates,
            now,
        );
    }
}

fn step(
    st: &mut State,
    lc_res: &Arc<Resource>,
    lease_res: &Arc<Resource>,
    namespace: &str,
    lease_name: &str,
    candidates: &[Candidate],
    now: Timestamp,
) {
    let all: Vec<&Candidate> = candidates.iter().collect();
    let existing = st.get(lease_res, namespace, lease_name);
    if !election_needed(&all, existing.as_deref(), now) {
        return;
    }
    // 1. Ping those that have not renewed lately.
    let mut can_vote = true;
    for c in &all {
        if c.awaiting_answer(now) {
            can_vote = false;
            continue;
        }
        if c.renewed_recently(now) {
            continue;
        }
        let stale_answered =
            matches!((c.ping, c.renew), (Some(p), Some(r)) if p + ELECTION_DURATION < now && p < r);
        if c.ping.is_none() || stale_answered {
            let mut body = (*c.obj).clone();
            body["spec"]["pingTime"] = json!(object::format_micro_time(now));
            write(st, lc_res, &c.namespace, &c.name, body);
            tracing::debug!(candidate = %c.name, lease = %lease_name, "pinged lease candidate");
            can_vote = false;
        }
    }
    if !can_vote {
        return;
    }
    if all.iter().any(|c| c.awaiting_answer(now)) {
        return;
    }
    // 2. Vote among those that answered.
    let acked: Vec<&Candidate> = all
        .iter()
        .copied()
        .filter(|c| c.renewed_recently(now))
        .collect();
    if acked.is_empty() {
        tracing::debug!(lease = %lease_name, "coordinated leader election: no available candidates");
        return;
    }
    let strategy = match pick_strategy(&acked) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(lease = %lease_name, error = %e, "coordinated leader election: no strategy");
            return;
        }
    };
    let electee = if strategy == OLDEST_EMULATION_VERSION {
        match pick_best(&acked) {
            Some(c) => Some(c.name.clone()),
            None => return,
        }
    } else {
        None
    };
    // 3. Create or update the Lease.
    let now_text = object::format_micro_time(now);
    let Some(existing) = existing else {
        let mut spec = json!({
            "strategy": strategy,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": now_text,
        });
        if let Some(e) = &electee {
            spec["holderIdentity"] = json!(e);
        }
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": lease_name, "namespace": namespace},
            "spec": spec,
        });
        match registry::create(
            st,
            lease_res,
            namespace,
            lease,
            &write_options(),
            CreateFlags::default(),
        ) {
            Ok(_) => {
                tracing::info!(lease = %lease_name, holder = ?electee, "created lease for the elected candidate")
            }
            Err(e) => tracing::debug!(error = %e.message, "creating the elected lease failed"),
        }
        return;
    };
    let mut body = (*existing).clone();
    let current_holder = holder(&existing).to_string();
    let expired = lease_expired(&existing, now);
    let spec = &mut body["spec"];
    spec["strategy"] = json!(strategy);
    let no_holder = current_holder.is_empty();
    let expired_new_holder = expired && electee.as_ref().is_some_and(|e| *e != current_holder);
    if no_holder || expired_new_holder {
        tracing::info!(lease = %lease_name, holder = ?electee, expired, "handing the lease to the elected candidate");
        if let Some(map) = spec.as_object_mut() {
            map.remove("preferredHolder");
            map.remove("acquireTime");
        }
        spec["holderIdentity"] = electee.as_ref().map_or(Value::Null, |e| json!(e));
        spec["renewTime"] = json!(now_text);
        spec["leaseDurationSeconds"] = json!(LEASE_DURATION_SECONDS);
    } else if let Some(e) = electee.as_ref().filter(|e| **e != current_holder) {
        tracing::info!(lease = %lease_name, from = %current_holder, to = %e, "marking the lease's end of term");
        spec["preferredHolder"] = json!(e);
    }
    if body != *existing {
        write(st, lease_res, namespace, lease_name, body);
    }
}

fn write(st: &mut State, res: &Arc<Resource>, namespace: &str, name: &str, body: Value) {
    let input = UpdateInput {
        body,
        scope: Scope::Main,
        managed_done: false,
        is_put: true,
    };
    if let Err(e) = registry::update(st, res, namespace, name, input, &write_options()) {
        tracing::debug!(error = %e.message, name, "coordinated leader election: update failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(name: &str, binary: &str, emulation: &str, created: &str) -> Candidate {
        Candidate::read(Arc::new(json!({
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
            "spec": {"leaseName": "l", "binaryVersion": binary, "emulationVersion": emulation,
                     "strategy": OLDEST_EMULATION_VERSION, "renewTime": "2026-01-01T00:00:00.000000Z"},
        })))
    }

    #[test]
    fn the_oldest_emulation_version_wins_then_binary_then_age() {
        let a = cand("a", "1.3.0", "1.2.0", "2026-01-01T00:00:00Z");
        let b = cand("b", "1.2.0", "1.2.0", "2026-01-01T00:00:05Z");
        let c = cand("c", "1.2.0", "1.2.0", "2026-01-01T00:00:01Z");
        let d = cand("d", "1.4.0", "1.3.0", "2025-01-01T00:00:00Z");
        assert_eq!(pick_best(&[&a, &b, &c, &d]).unwrap().name, "c");
        assert_eq!(pick_best(&[&a, &d]).unwrap().name, "a");
        let bad = cand("e", "not-a-version", "1.0.0", "2020-01-01T00:00:00Z");
        assert_eq!(pick_best(&[&bad, &d]).unwrap().name, "d");
    }

    #[test]
    fn the_highest_binary_version_names_the_strategy() {
        let a = cand("a", "1.3.0", "1.2.0", "2026-01-01T00:00:00Z");
        let mut b = cand("b", "1.4", "1.2.0", "2026-01-01T00:00:00Z");
        b.strategy = "example.com/other".into();
        assert_eq!(pick_strategy(&[&a, &b]).unwrap(), "example.com/other");
        let mut c = cand("c", "v1.4.0", "1.2.0", "2026-01-01T00:00:00Z");
        c.strategy = OLDEST_EMULATION_VERSION.into();
        assert!(
            pick_strategy(&[&a, &b, &c])
                .unwrap_err()
                .contains("at same binary version but received differing strategies")
        );
    }

    #[test]
    fn versions_parse_tolerantly() {
        assert_eq!(parse_tolerant("v1.2"), Some(semver::Version::new(1, 2, 0)));
        assert_eq!(parse_tolerant(" 1 "), Some(semver::Version::new(1, 0, 0)));
        assert!(parse_tolerant("1.2.3-alpha.1").is_some());
        assert_eq!(parse_tolerant("x"), None);
    }
}
