//! Controllers the in-memory server can run, as kube-controller-manager runs them beside
//! kube-apiserver: the garbage collector (`garbage_collector`) and the namespace controller
//! (`namespace`); and kube-apiserver's own coordinated leader election (`leader_election`,
//! KEP-4355), which also runs on the server's ticker since leases run out with time. They sit above the registry and act only through its write verbs — deletes
//! with preconditions and propagation policies, updates that drop owner references or
//! finalizers, the namespace's `/finalize` — so every change they make gets a resourceVersion,
//! managed fields and watch events like a client's.
//!
//! They run after every write the server stores (under its lock, once the write's answer is
//! made), until a pass changes nothing: a deleted owner's dependents are gone by the time the
//! next request is served, where kube-controller-manager takes some milliseconds.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::semantics::registry::WriteOptions;
use crate::semantics::state::State;

mod garbage_collector;
mod leader_election;
mod namespace;

/// A controller of kube-controller-manager that the in-memory server can run
/// (see [`FakeApiServerBuilder::with_controllers`](crate::FakeApiServerBuilder::with_controllers)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Controller {
    /// `garbagecollector`: deletes objects whose owners are gone (background propagation),
    /// holds an owner deleted with `propagationPolicy: Foreground` until its blocking
    /// dependents are gone, and strips the owner references of an owner deleted with
    /// `Orphan`.
    GarbageCollector,
    /// `namespace`: empties a deleted namespace (pods first), reports its progress in the
    /// namespace's conditions, then removes the `kubernetes` finalizer through `/finalize`.
    Namespace,
    /// `coordinatedleaderelection`: kube-apiserver's coordinated leader election (KEP-4355,
    /// gate `CoordinatedLeaderElection`). With it the server also serves
    /// `coordination.k8s.io/v1beta1` `leasecandidates` (as `--runtime-config` enables them),
    /// and for each Lease its candidates name it picks the holder (oldest emulation version,
    /// then binary version, then age), pings candidates before an election, sets the Lease's
    /// `holderIdentity` and `strategy` — or `preferredHolder` while another holds it — and
    /// hands over a Lease that has run out. It runs after each write and every
    /// [`CONTROLLER_TICK`](crate::CONTROLLER_TICK) while the server lives.
    CoordinatedLeaderElection,
}

impl Controller {
    /// Every controller, in the order they run.
    pub const ALL: [Controller; 3] = [
        Controller::GarbageCollector,
        Controller::Namespace,
        Controller::CoordinatedLeaderElection,
    ];

    /// kube-controller-manager's name for it (`--controllers`).
    pub fn name(self) -> &'static str {
        match self {
            Controller::GarbageCollector => "garbagecollector",
            Controller::Namespace => "namespace",
            Controller::CoordinatedLeaderElection => "coordinatedleaderelection",
        }
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A controller name that is not one of [`Controller::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown controller {name:?} (known: garbagecollector, namespace, coordinatedleaderelection)"
)]
pub struct UnknownController {
    /// The name given.
    pub name: String,
}

impl FromStr for Controller {
    type Err = UnknownController;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Controller::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownController {
                name: s.to_string(),
            })
    }
}

/// A comma-separated list of controller names, as kube-controller-manager's `--controllers`
/// takes it (empty items are skipped, so `""` is none).
pub fn parse_controllers(list: &str) -> Result<Vec<Controller>, UnknownController> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Controller::from_str)
        .collect()
}

/// The controllers a server runs, and the resourceVersion they last saw.
#[derive(Debug, Default)]
pub(crate) struct Controllers {
    enabled: BTreeSet<Controller>,
    seen_rv: AtomicU64,
    /// Off while the builder seeds objects, so that seeds in any order are seen whole.
    started: AtomicBool,
}

/// How many passes one round may take before it gives up (a cycle of owners, say); the next
/// write starts another round.
const MAX_PASSES: usize = 256;

/// The field manager of the controllers' writes, as kube-controller-manager's user agent
/// makes it.
const MANAGER: &str = "kube-controller-manager";

impl Controllers {
    pub(crate) fn new(enabled: impl IntoIterator<Item = Controller>) -> Self {
        Controllers {
            enabled: enabled.into_iter().collect(),
            seen_rv: AtomicU64::new(0),
            started: AtomicBool::new(false),
        }
    }

    /// Lets [`run`](Self::run) work from now on.
    pub(crate) fn start(&self) {
        self.started.store(true, Ordering::Relaxed);
    }

    pub(crate) fn enabled(&self) -> impl Iterator<Item = Controller> + '_ {
        self.enabled.iter().copied()
    }

    /// Runs the enabled controllers until they change nothing more, if anything was written
    /// since they last ran.
    pub(crate) fn run(&self, st: &mut State) {
        if self.enabled.is_empty()
            || !self.started.load(Ordering::Relaxed)
            || st.rv() == self.seen_rv.load(Ordering::Relaxed)
        {
            return;
        }
        for pass in 0.. {
            let before = st.rv();
            for c in &self.enabled {
                match c {
                    Controller::GarbageCollector => garbage_collector::pass(st),
                    Controller::Namespace => namespace::pass(st),
                    Controller::CoordinatedLeaderElection => leader_election::pass(st),
                }
            }
            if st.rv() == before {
                break;
            }
            if pass + 1 == MAX_PASSES {
                tracing::warn!(
                    passes = MAX_PASSES,
                    "controllers still writing after the pass limit; continuing after the next write"
                );
                break;
            }
        }
        self.seen_rv.store(st.rv(), Ordering::Relaxed);
    }

    /// Whether a controller that acts with the passing of time is enabled (the server then
    /// runs [`tick`](Self::tick) every [`CONTROLLER_TICK`]).
    pub(crate) fn needs_ticker(&self) -> bool {
        self.enabled
            .contains(&Controller::CoordinatedLeaderElection)
    }

    /// What time alone makes due: an election step for every Lease (a lease that ran out, a
    /// ping unanswered for long enough), then the controllers over what it wrote.
    pub(crate) fn tick(&self, st: &mut State) {
        if !self.started.load(Ordering::Relaxed) {
            return;
        }
        if self
            .enabled
            .contains(&Controller::CoordinatedLeaderElection)
        {
            leader_election::pass(st);
        }
        self.run(st);
    }
}

/// How often the server runs controllers that act with time (coordinated leader election).
pub const CONTROLLER_TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// The options of a controller's write.
fn write_options() -> WriteOptions {
    WriteOptions {
        manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_as_kube_controller_manager_spells_them() {
        assert_eq!(
            parse_controllers("garbagecollector, namespace,"),
            Ok(vec![Controller::GarbageCollector, Controller::Namespace])
        );
        assert_eq!(parse_controllers(""), Ok(vec![]));
        let e = parse_controllers("namespace,gc").unwrap_err();
        assert_eq!(e.name, "gc");
        assert!(e.to_string().contains("known: garbagecollector, namespace"));
    }
}
