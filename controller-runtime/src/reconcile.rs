//! What a controller asks of its reconciler, and what the reconciler answers
//! (controller-runtime's `pkg/reconcile`).
//!
//! A [`Reconciler`] gets a [`Request`] — the namespace and name of one object of the
//! controller's kind, never the event that brought it there (level-triggered) — and a
//! [`Context`], and answers with an [`Action`] or an error:
//!
//! | reconcile returns | the controller |
//! | --- | --- |
//! | `Ok(Action::done())` | forgets the key's backoff |
//! | `Ok(Action::requeue_after(d))` | forgets the backoff, reconciles again after `d` |
//! | `Ok(Action::requeue())` | reconciles again after the key's backoff |
//! | `Err(e)` | logs `e`, reconciles again after the key's backoff (5 ms doubling to 1000 s) |
//! | a panic | the same as an error; the panic is counted, the worker keeps running |
//!
//! Every error is retried: the reconciler decides what is worth retrying by returning `Ok` for
//! what is not.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use tokio_util::sync::CancellationToken;

/// The object a reconcile is about: its namespace (`None` for cluster-scoped kinds) and name
/// (controller-runtime's `reconcile.Request{NamespacedName}`).
///
/// ```
/// use kube_controller_runtime::Request;
/// let r = Request::namespaced("default", "demo");
/// assert_eq!(r.to_string(), "default/demo");
/// assert_eq!(Request::cluster("node-1").to_string(), "node-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl Request {
    /// A request for a namespaced object.
    ///
    /// ```
    /// let r = kube_controller_runtime::Request::namespaced("ns", "a");
    /// assert_eq!(r.namespace.as_deref(), Some("ns"));
    /// ```
    pub fn namespaced(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Request {
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// A request for a cluster-scoped object.
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::Request::cluster("n").namespace, None);
    /// ```
    pub fn cluster(name: impl Into<String>) -> Self {
        Request {
            namespace: None,
            name: name.into(),
        }
    }

    /// The request for `obj` (`None` if it has no name).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("a".into());
    /// cm.metadata.namespace = Some("ns".into());
    /// assert_eq!(kube_controller_runtime::Request::from_object(&cm).unwrap().to_string(), "ns/a");
    /// ```
    pub fn from_object<K: Resource>(obj: &K) -> Option<Self> {
        let meta = obj.meta();
        Some(Request {
            namespace: meta.namespace.clone().filter(|ns| !ns.is_empty()),
            name: meta.name.clone().filter(|n| !n.is_empty())?,
        })
    }

    /// Parses a store key (`namespace/name` or `name`).
    ///
    /// ```
    /// let r = kube_controller_runtime::Request::from_key("ns/a");
    /// assert_eq!(r, kube_controller_runtime::Request::namespaced("ns", "a"));
    /// ```
    pub fn from_key(key: &str) -> Self {
        match key.split_once('/') {
            Some((ns, name)) => Request::namespaced(ns, name),
            None => Request::cluster(key),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What to do after a successful reconcile (controller-runtime's `reconcile.Result`).
///
/// ```
/// use std::time::Duration;
/// use kube_controller_runtime::Action;
/// assert_eq!(Action::done().requeue_after_duration(), None);
/// assert_eq!(Action::requeue_after(Duration::from_secs(5)).requeue_after_duration(), Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Action {
    kind: ActionKind,
    priority: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ActionKind {
    #[default]
    Done,
    Requeue,
    RequeueAfter(Duration),
}

impl Action {
    /// Nothing more to do until the object (or something watched) changes.
    ///
    /// ```
    /// assert!(kube_controller_runtime::Action::done().is_done());
    /// ```
    pub fn done() -> Self {
        Action {
            kind: ActionKind::Done,
            priority: None,
        }
    }

    /// Reconcile again after the key's rate-limited backoff.
    ///
    /// ```
    /// assert!(kube_controller_runtime::Action::requeue().is_requeue());
    /// ```
    pub fn requeue() -> Self {
        Action {
            kind: ActionKind::Requeue,
            priority: None,
        }
    }

    /// Reconcile again after `delay` (a zero delay: at once).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let a = kube_controller_runtime::Action::requeue_after(Duration::from_secs(60));
    /// assert!(!a.is_done());
    /// ```
    pub fn requeue_after(delay: Duration) -> Self {
        Action {
            kind: ActionKind::RequeueAfter(delay),
            priority: None,
        }
    }

    /// Whether this is [`Action::done`].
    ///
    /// ```
    /// assert!(!kube_controller_runtime::Action::requeue().is_done());
    /// ```
    pub fn is_done(&self) -> bool {
        self.kind == ActionKind::Done
    }

    /// Whether this is [`Action::requeue`].
    ///
    /// ```
    /// assert!(!kube_controller_runtime::Action::done().is_requeue());
    /// ```
    pub fn is_requeue(&self) -> bool {
        self.kind == ActionKind::Requeue
    }

    /// The same, with the priority the request is queued again at (controller-runtime's
    /// `Result.Priority`); without it a requeue keeps the priority the request had. Higher is
    /// handed out first; the initial list and resyncs are
    /// [`LOW_PRIORITY`](kube_codegen_runtime::workqueue::LOW_PRIORITY), events 0. It has no
    /// effect on [`Action::done`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// use kube_controller_runtime::Action;
    /// let a = Action::requeue_after(Duration::from_secs(60)).with_priority(-100);
    /// assert_eq!(a.priority(), Some(-100));
    /// assert_eq!(Action::requeue().priority(), None);
    /// ```
    #[must_use]
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The priority set by [`Action::with_priority`].
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::Action::done().priority(), None);
    /// ```
    pub fn priority(&self) -> Option<i32> {
        self.priority
    }

    /// The delay of [`Action::requeue_after`].
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::Action::requeue().requeue_after_duration(), None);
    /// ```
    pub fn requeue_after_duration(&self) -> Option<Duration> {
        match self.kind {
            ActionKind::RequeueAfter(d) => Some(d),
            _ => None,
        }
    }
}

/// What the framework tells a reconcile besides the request: which controller runs it, on
/// behalf of which replica, how often this key failed in a row, and a token cancelled when the
/// reconcile should give up (its timeout passed, or the controller is being stopped).
///
/// ```
/// use kube_controller_runtime::reconcile::Context;
/// let ctx = Context::new("mydemo", "replica-1", 0);
/// assert_eq!(ctx.controller(), "mydemo");
/// assert!(!ctx.cancellation_token().is_cancelled());
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    controller: Arc<str>,
    identity: Arc<str>,
    retries: u32,
    cancel: CancellationToken,
}

impl Context {
    /// A context (the controller makes one per reconcile; tests may make their own).
    ///
    /// ```
    /// let ctx = kube_controller_runtime::reconcile::Context::new("c", "me", 3);
    /// assert_eq!(ctx.retries(), 3);
    /// ```
    pub fn new(
        controller: impl Into<Arc<str>>,
        identity: impl Into<Arc<str>>,
        retries: u32,
    ) -> Self {
        Context {
            controller: controller.into(),
            identity: identity.into(),
            retries,
            cancel: CancellationToken::new(),
        }
    }

    pub(crate) fn with_token(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The controller's name.
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::reconcile::Context::new("c", "me", 0).controller(), "c");
    /// ```
    pub fn controller(&self) -> &str {
        &self.controller
    }

    /// The manager's identity (the leader-election identity).
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::reconcile::Context::new("c", "me", 0).identity(), "me");
    /// ```
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// How many times in a row this key was requeued with backoff before this reconcile.
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::reconcile::Context::new("c", "me", 0).retries(), 0);
    /// ```
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Cancelled when the reconcile should stop: its timeout passed or the controller stops.
    ///
    /// ```
    /// let t = kube_controller_runtime::reconcile::Context::new("c", "me", 0).cancellation_token();
    /// ```
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// Makes the world match one object (controller-runtime's `reconcile.Reconciler`). Implemented
/// for every `Fn(Request, Context) -> impl Future<Output = Result<Action, E>>`.
///
/// ```
/// use kube_controller_runtime::{Action, Context, Reconciler, Request};
///
/// struct Demo;
/// impl Reconciler for Demo {
///     type Error = std::io::Error;
///     async fn reconcile(&self, req: Request, _ctx: Context) -> Result<Action, Self::Error> {
///         println!("reconciling {req}");
///         Ok(Action::done())
///     }
/// }
/// ```
pub trait Reconciler: Send + Sync + 'static {
    /// Why a reconcile failed. Every error is retried with the key's backoff.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Reconciles the object `req` names.
    fn reconcile(
        &self,
        req: Request,
        ctx: Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;
}

impl<F, Fut, E> Reconciler for F
where
    F: Fn(Request, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    type Error = E;

    fn reconcile(
        &self,
        req: Request,
        ctx: Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        self(req, ctx)
    }
}
