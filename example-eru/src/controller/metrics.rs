//! The operator's own metrics, served beside the framework's on `/metrics`:
//!
//! | family | type | what |
//! | --- | --- | --- |
//! | `eru_rollouts_total` | counter | Deployments patched for a slot |
//! | `eru_slot_lateness_seconds` | histogram | from a slot's time to the end of its Deployment patch |

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The histogram's buckets, in seconds: 1 ms to about 16 s, doubling.
fn buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(0.001, 2.0, 15)
}

/// Rollouts and their lateness. Cheap to clone; clones share the values.
#[derive(Clone, Debug)]
pub struct EruMetrics {
    rollouts: Counter,
    lateness: Histogram,
}

impl Default for EruMetrics {
    fn default() -> Self {
        EruMetrics {
            rollouts: Counter::default(),
            lateness: Histogram::new(buckets()),
        }
    }
}

impl EruMetrics {
    /// Registers both families in `registry` (the manager's: `mgr.metrics().with_registry(…)`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "eru_rollouts",
            "Deployments patched for a slot",
            self.rollouts.clone(),
        );
        registry.register(
            "eru_slot_lateness_seconds",
            "From a slot's time to the end of its Deployment patch",
            self.lateness.clone(),
        );
    }

    /// Counts a rollout made `late` after its slot (negative values count as zero).
    pub fn observe_rollout(&self, late: jiff::SignedDuration) {
        self.rollouts.inc();
        self.lateness.observe(late.as_secs_f64().max(0.0));
    }

    /// Rollouts counted so far.
    pub fn rollouts(&self) -> u64 {
        self.rollouts.get()
    }
}
