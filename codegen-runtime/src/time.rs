//! Deadlines that cannot overflow.
//!
//! `Instant + Duration` panics when the sum does not fit, and durations here come from input: a
//! rate limiter with `qps = 0` answers `Duration::MAX`, a user may ask for a resync period of
//! centuries, a watch for `timeoutSeconds=9223372036854775807`. Such deadlines mean "never", which
//! tokio's own `sleep(Duration::MAX)` spells as thirty years from now.

use std::time::Duration;

use tokio::time::Instant;

/// How far away "never" is: tokio's own far-future horizon.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `now + after`, capped at thirty years from now.
pub(crate) fn deadline_after(after: Duration) -> Instant {
    Instant::now() + after.min(FAR_FUTURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_durations_saturate_instead_of_panicking() {
        let now = Instant::now();
        let never = deadline_after(Duration::MAX);
        assert!(never >= now + FAR_FUTURE);
        let soon = deadline_after(Duration::from_millis(5));
        assert!(soon >= now + Duration::from_millis(5) && soon < never);
    }
}
