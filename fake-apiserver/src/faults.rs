//! Deterministic faults for watches, for tests of how a client reacts to each: a 410 Gone in
//! the middle of a watch, a dropped connection, a slow watcher, and delivery a test steps by
//! hand — so that events of different resources can be delivered in an order the test chooses.
//!
//! [`FakeHandle::faults`](crate::FakeHandle::faults) gives the server's [`Faults`]. Each call
//! names a resource by its plural (`"mydemos"`; `"*"` for every resource) and acts on the
//! watches of that resource open now and, for the lasting ones ([`slow`](Faults::slow),
//! [`hold`](Faults::hold)), on those opened later, until [`release`](Faults::release) or
//! [`clear`](Faults::clear):
//!
//! * [`expire`](Faults::expire): every open watch gets the `ERROR` event kube-apiserver sends
//!   when its watch cache has moved past a watcher's version — a `Status` with code 410, reason
//!   `Expired`, message `too old resource version: <last sent> (<current>)` — and ends. A
//!   client must relist.
//! * [`drop_connections`](Faults::drop_connections): every open watch ends as a dropped
//!   connection does (over HTTPS the connection closes mid-body; an in-process client reads
//!   [`ConnectionDropped`](crate::ConnectionDropped)). A client watches again from the last
//!   version it saw.
//! * [`slow`](Faults::slow): each event waits this long before it is sent.
//! * [`hold`](Faults::hold), [`step`](Faults::step), [`release`](Faults::release): events
//!   (initial ones included; bookmarks and errors are not held) wait until the test lets
//!   them through, `n` at a time or all.
//!
//! Within one watch, events always arrive in resourceVersion order, as the API promises; the
//! order *between* watches is not promised, and holding one resource while stepping another
//! is how a test delivers them in the order it wants. Watches whose events are held still
//! answer expiry and dropped connections at once.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use futures::{StreamExt, TryStreamExt};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams, WatchEvent, WatchParams};
//! use kube_fake_apiserver::FakeApiServer;
//!
//! let server = FakeApiServer::new();
//! let faults = server.handle().faults();
//! let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
//! let mut events = cms.watch(&WatchParams::default(), "0").await?.boxed();
//! let cm: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": "a"}}))?;
//! cms.create(&PostParams::default(), &cm).await?;
//! assert!(matches!(events.try_next().await?, Some(WatchEvent::Added(_))));
//!
//! faults.expire("configmaps");
//! match events.try_next().await? {
//!     Some(WatchEvent::Error(status)) => assert_eq!((status.code, status.reason.as_str()), (410, "Expired")),
//!     other => panic!("expected a 410, got {other:?}"),
//! }
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

/// What a test has asked of one resource's watches.
#[derive(Debug, Clone, Default)]
struct Rule {
    /// Events wait for [`Faults::step`] or [`Faults::release`].
    held: bool,
    /// Events the held watches may still send.
    credits: u64,
    /// How long each event waits before it is sent.
    delay: Duration,
    /// Bumped by [`Faults::expire`]: watches that saw an older value end with a 410.
    expired: u64,
    /// Bumped by [`Faults::drop_connections`].
    dropped: u64,
}

#[derive(Debug)]
struct Inner {
    rules: Mutex<HashMap<String, Rule>>,
    /// How many watches of each resource are open.
    open: Mutex<HashMap<String, usize>>,
    /// Bumped on every change, so waiting watches look again.
    changed: tokio::sync::watch::Sender<u64>,
}

/// The watch faults of one server (see the [module](self)). Cheap to clone: clones act on the
/// same server.
#[derive(Debug, Clone)]
pub struct Faults {
    inner: Arc<Inner>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            inner: Arc::new(Inner {
                rules: Mutex::new(HashMap::new()),
                open: Mutex::new(HashMap::new()),
                changed: tokio::sync::watch::Sender::new(0),
            }),
        }
    }
}

impl Faults {
    fn update(&self, resource: &str, f: impl FnOnce(&mut Rule)) {
        f(self
            .inner
            .rules
            .lock()
            .entry(resource.to_string())
            .or_default());
        self.inner.changed.send_modify(|n| *n += 1);
    }

    /// Every open watch of `resource` gets a 410 Gone `ERROR` event (reason `Expired`) and
    /// ends, as when kube-apiserver's watch cache no longer holds the watcher's version.
    pub fn expire(&self, resource: &str) {
        tracing::debug!(resource, "fault: expiring open watches");
        self.update(resource, |r| r.expired += 1);
    }

    /// Every open watch of `resource` ends as a dropped connection does.
    pub fn drop_connections(&self, resource: &str) {
        tracing::debug!(resource, "fault: dropping open watches");
        self.update(resource, |r| r.dropped += 1);
    }

    /// Each event of `resource`'s watches (open and later ones) waits `per_event` before it is
    /// sent: a slow watcher's view (`Duration::ZERO` ends it).
    pub fn slow(&self, resource: &str, per_event: Duration) {
        self.update(resource, |r| r.delay = per_event);
    }

    /// Events of `resource`'s watches (open and later ones) wait until
    /// [`step`](Self::step) or [`release`](Self::release).
    pub fn hold(&self, resource: &str) {
        self.update(resource, |r| {
            r.held = true;
            r.credits = 0;
        });
    }

    /// Lets `n` more held events of `resource` through (counted over all its watches).
    pub fn step(&self, resource: &str, n: u64) {
        self.update(resource, |r| r.credits += n);
    }

    /// Ends [`hold`](Self::hold) and [`slow`](Self::slow) for `resource`: waiting events go
    /// out at once.
    pub fn release(&self, resource: &str) {
        self.update(resource, |r| {
            r.held = false;
            r.credits = 0;
            r.delay = Duration::ZERO;
        });
    }

    /// Ends every hold and slow-down.
    pub fn clear(&self) {
        let mut rules = self.inner.rules.lock();
        for r in rules.values_mut() {
            r.held = false;
            r.credits = 0;
            r.delay = Duration::ZERO;
        }
        drop(rules);
        self.inner.changed.send_modify(|n| *n += 1);
    }

    /// How many watches of `resource` are open now (`"*"`: of every resource): a test waits
    /// for its client's watch to be open before it injects a fault into it.
    pub fn watchers(&self, resource: &str) -> usize {
        let open = self.inner.open.lock();
        if resource == "*" {
            open.values().sum()
        } else {
            open.get(resource).copied().unwrap_or(0)
        }
    }

    /// The tap one watch of `resource` (a plural) reads faults through, counted among the
    /// open watches until it is dropped.
    pub(crate) fn tap(&self, resource: &str) -> Tap {
        *self
            .inner
            .open
            .lock()
            .entry(resource.to_string())
            .or_default() += 1;
        let rules = self.inner.rules.lock();
        let seen = |key: &str| rules.get(key).map_or((0, 0), |r| (r.expired, r.dropped));
        Tap {
            faults: self.clone(),
            resource: resource.to_string(),
            seen: [seen(resource), seen("*")],
            rx: self.inner.changed.subscribe(),
        }
    }
}

/// What a watch must do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Go on.
    Go,
    /// End with a 410 `ERROR` event.
    Expire,
    /// End as a dropped connection.
    Drop,
}

/// One watch's view of the faults.
#[derive(Debug)]
pub(crate) struct Tap {
    faults: Faults,
    resource: String,
    /// `(expired, dropped)` of the resource's rule and of `"*"` when the watch started.
    seen: [(u64, u64); 2],
    rx: tokio::sync::watch::Receiver<u64>,
}

impl Drop for Tap {
    fn drop(&mut self) {
        if let Some(n) = self.faults.inner.open.lock().get_mut(&self.resource) {
            *n = n.saturating_sub(1);
        }
    }
}

impl Tap {
    fn keys(&self) -> [&str; 2] {
        [self.resource.as_str(), "*"]
    }

    /// Whether an expiry or a drop was asked for since the watch started.
    pub(crate) fn verdict(&self) -> Verdict {
        let rules = self.faults.inner.rules.lock();
        for (key, (expired, dropped)) in self.keys().into_iter().zip(self.seen) {
            if let Some(r) = rules.get(key) {
                if r.dropped > dropped {
                    return Verdict::Drop;
                }
                if r.expired > expired {
                    return Verdict::Expire;
                }
            }
        }
        Verdict::Go
    }

    /// The delay before the next event, and whether it may go now (taking a credit if held).
    fn admit(&self) -> (Duration, bool) {
        let mut rules = self.faults.inner.rules.lock();
        let mut delay = Duration::ZERO;
        for key in self.keys() {
            if let Some(r) = rules.get_mut(key) {
                delay = delay.max(r.delay);
                if r.held {
                    if r.credits == 0 {
                        return (delay, false);
                    }
                    r.credits -= 1;
                }
            }
        }
        (delay, true)
    }

    /// Waits until the next event may be sent (its delay, its hold), or until an expiry or a
    /// drop ends the watch.
    pub(crate) async fn before_event(&mut self) -> Verdict {
        loop {
            self.rx.borrow_and_update();
            let v = self.verdict();
            if v != Verdict::Go {
                return v;
            }
            let (delay, go) = self.admit();
            if go {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                    let v = self.verdict();
                    if v != Verdict::Go {
                        return v;
                    }
                }
                return Verdict::Go;
            }
            if self.rx.changed().await.is_err() {
                return Verdict::Go;
            }
        }
    }

    /// Resolves when a fault is asked for after this watch's last look.
    pub(crate) async fn changed(&mut self) {
        if self.rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn holds_and_steps_count_events() {
        let f = Faults::default();
        f.hold("pods");
        let mut tap = f.tap("pods");
        let waiting = tokio::time::timeout(Duration::from_millis(30), tap.before_event()).await;
        assert!(waiting.is_err(), "a held event must wait");
        f.step("pods", 2);
        assert_eq!(tap.before_event().await, Verdict::Go);
        assert_eq!(tap.before_event().await, Verdict::Go);
        let waiting = tokio::time::timeout(Duration::from_millis(30), tap.before_event()).await;
        assert!(waiting.is_err(), "two credits let two events through");
        f.release("pods");
        assert_eq!(tap.before_event().await, Verdict::Go);
    }

    #[tokio::test]
    async fn expiry_and_drops_reach_watches_open_when_asked() {
        let f = Faults::default();
        let before = f.tap("pods");
        let other = f.tap("services");
        assert_eq!((f.watchers("pods"), f.watchers("*")), (1, 2));
        f.expire("pods");
        let after = f.tap("pods");
        assert_eq!(before.verdict(), Verdict::Expire);
        assert_eq!(other.verdict(), Verdict::Go);
        assert_eq!(after.verdict(), Verdict::Go, "a later watch is not expired");
        f.drop_connections("*");
        assert_eq!(other.verdict(), Verdict::Drop);
        let mut held = f.tap("services");
        f.hold("services");
        f.drop_connections("services");
        assert_eq!(held.before_event().await, Verdict::Drop);
    }
}
