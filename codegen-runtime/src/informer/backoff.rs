//! The reflector's retry delay: client-go's `ExponentialBackoffManager` as the reflector
//! configures it (800 ms doubling to 30 s, up to 100 % jitter, reset after 2 min of quiet).

use std::time::Duration;

use tokio::time::Instant;

/// How long an informer waits before retrying a failed list or watch.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::informer::BackoffConfig;
///
/// let fast = BackoffConfig { initial: Duration::from_millis(10), max: Duration::from_millis(100), ..BackoffConfig::default() };
/// assert_eq!(BackoffConfig::default().max, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// The first delay (client-go: 800 ms).
    pub initial: Duration,
    /// The longest delay before jitter (client-go: 30 s).
    pub max: Duration,
    /// The growth factor per retry (client-go: 2).
    pub factor: f64,
    /// Up to this fraction of the delay is added at random (client-go: 1.0).
    pub jitter: f64,
    /// A retry after this much time without one starts over from `initial` (client-go: 2 min).
    pub reset_after: Duration,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// The state of one informer's backoff.
#[derive(Debug)]
pub(crate) struct Backoff {
    config: BackoffConfig,
    current: Duration,
    last: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: BackoffConfig) -> Self {
        Backoff {
            config,
            current: config.initial,
            last: None,
        }
    }

    /// The next delay (jitter included).
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last
            .is_none_or(|l| now.saturating_duration_since(l) > self.config.reset_after)
        {
            self.current = self.config.initial;
        }
        self.last = Some(now);
        let base = self.current.min(self.config.max);
        let grown = base.as_secs_f64() * self.config.factor.max(1.0);
        self.current =
            Duration::try_from_secs_f64(grown).map_or(self.config.max, |d| d.min(self.config.max));
        let extra = base.as_secs_f64() * self.config.jitter.max(0.0) * fastrand::f64();
        base + Duration::try_from_secs_f64(extra).unwrap_or(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn doubles_caps_jitters_and_resets_after_quiet() {
        let mut b = Backoff::new(BackoffConfig::default());
        let bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0];
        for want in bases {
            let d = b.next_delay().as_secs_f64();
            assert!(
                d >= want && d <= want * 2.0,
                "{d} not in [{want}, {}]",
                want * 2.0
            );
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        tokio::time::advance(Duration::from_secs(121)).await;
        let d = b.next_delay().as_secs_f64();
        assert!((0.8..=1.6).contains(&d), "{d} after reset");

        let mut exact = Backoff::new(BackoffConfig {
            jitter: 0.0,
            ..BackoffConfig::default()
        });
        assert_eq!(exact.next_delay(), Duration::from_millis(800));
        assert_eq!(exact.next_delay(), Duration::from_millis(1600));
    }
}
