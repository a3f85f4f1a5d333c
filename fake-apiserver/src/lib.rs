//! An in-memory Kubernetes API server with the semantics of kube-apiserver, for tests: a
//! [`kube::Client`] talks to it in process, and `kubectl` or any other language's client talks to
//! it over HTTPS — a stand-in for envtest's kube-apiserver + etcd that starts in milliseconds.
//!
//! # With a plain `kube::Client`
//!
//! No generated code is needed: [`FakeApiServer::new`] serves the built-in kinds, and custom
//! resources appear as soon as their CRD is created through the API (or seeded).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams, PostParams};
//! use kube_fake_apiserver::FakeApiServer;
//!
//! let server = FakeApiServer::new();
//! let client = server.client()?; // a kube::Client; needs a Tokio runtime
//! let cms: Api<ConfigMap> = Api::default_namespaced(client);
//! let cm: ConfigMap = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "settings"}, "data": {"mode": "fast"}
//! }))?;
//! let created = cms.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.uid.is_some());
//!
//! // Server-side apply with field managers and conflicts, as kube-apiserver does it: the
//! // creator owns `data.mode`, so taking it over needs `force`.
//! let config = Patch::Apply(serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings"}, "data": {"mode": "slow"}
//! }));
//! let conflict = cms.patch("settings", &PatchParams::apply("my-controller"), &config).await;
//! assert!(matches!(conflict, Err(kube::Error::Api(s)) if s.code == 409));
//! let applied = cms
//!     .patch("settings", &PatchParams::apply("my-controller").force(), &config)
//!     .await?;
//! assert_eq!(applied.data.unwrap_or_default()["mode"], "slow");
//!
//! // The test side: recorded requests, fault-injecting reactors, direct store access.
//! let handle = server.handle();
//! assert_eq!(handle.actions().len(), 3);
//! let stored: Option<ConfigMap> = handle.get("default", "settings")?;
//! assert!(stored.is_some());
//! # Ok(()) }
//! ```
//!
//! # Over HTTPS, for kubectl and other languages
//!
//! [`FakeApiServer::serve`] listens on loopback with a fresh self-signed CA and a bearer token
//! (taken only from the `Authorization` header; anonymous requests get kube-apiserver's 403
//! except on `/healthz`, `/livez`, `/readyz` and `/version`), and writes a kubeconfig:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kube_fake_apiserver::FakeApiServer;
//!
//! let server = FakeApiServer::builder()
//!     .manifests("crds/")? // CRDs (and any other objects) to start with
//!     .build()?;
//! let served = server.serve(([127, 0, 0, 1], 0).into()).await?;
//! served.write_kubeconfig("/tmp/fake.kubeconfig")?; // KUBECONFIG for kubectl
//! let client = served.client().await?; // or a kube::Client over HTTPS
//! # Ok(()) }
//! ```
//!
//! The `kube-fake-apiserver` binary (feature `cli`, on by default) does the same from the
//! command line: `kube-fake-apiserver --port 0 --kubeconfig kc.yaml --crd crds/ --objects
//! seed.yaml`.
//!
//! # What it implements
//!
//! * one global `resourceVersion`; `uid`, `creationTimestamp`, `generation`, `generateName`;
//!   optimistic concurrency, no-op updates, the status and scale subresources (custom
//!   resources, Deployments, ReplicaSets, StatefulSets, ReplicationControllers);
//! * finalizers, `deletionTimestamp`, delete preconditions, propagation policies, graceful pod
//!   deletion, deletecollection, namespace and CRD lifecycles;
//! * label and field selectors, pagination with continue tokens over a consistent snapshot,
//!   `resourceVersion`/`resourceVersionMatch`, list options validated as kube-apiserver does;
//! * watches from a bounded history (410 Gone), initial events, bookmarks,
//!   `sendInitialEvents`, timeouts;
//! * JSON merge, JSON and strategic merge patches, and server-side apply with managed fields,
//!   conflicts and `force`, following a CRD's `x-kubernetes-list-type`,
//!   `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`;
//! * CRDs: structural-schema checks, pruning, defaulting (also on read), validation of types,
//!   formats, patterns, bounds, enums and list types with kube-apiserver's field paths and
//!   reasons, CEL `x-kubernetes-validations` (transition rules, cost checks) through the kube-rs
//!   project's `kube-cel`, printer columns;
//! * `fieldValidation` (Ignore/Warn/Strict) with `Warning` headers, for built-ins too;
//! * legacy and aggregated discovery, OpenAPI v2 and v3 documents (so `kubectl apply`
//!   validates server-side and `kubectl explain` works), JSON and YAML bodies and responses,
//!   `Table` and `PartialObjectMetadata`, kube-apiserver's `Status` errors, its 3 MiB body
//!   limit;
//! * the review kinds (TokenReview, SelfSubjectReview, SubjectAccessReview,
//!   LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview), when
//!   registered: create-only, nothing stored, answered with a computed `status` — every request
//!   is [`USER_NAME`] in [`USER_GROUPS`], only the server's own bearer token authenticates, and
//!   every request is allowed (see the `reviews` section of `tests/CONFORMANCE.md`).
//!
//! `tests/CONFORMANCE.md` in the repository lists what differs from kube-apiserver v1.37, and
//! why; the conformance suite runs the same scenarios against both.

mod config;
mod controllers;
mod endpoints;
mod error;
pub mod faults;
mod manifests;
mod persist;
mod private_file;
pub mod record;
mod semantics;
mod storage;
mod testing;

#[cfg(test)]
mod tests;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use kube::Resource as KubeResource;
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use controllers::{CONTROLLER_TICK, Controller, UnknownController, parse_controllers};
pub use endpoints::body::{ConnectionDropped, ResponseBody};
pub use endpoints::serve::{MAX_REQUEST_BODY_BYTES, ServeOptions, ServedApiServer};
pub use error::FakeError;
pub use kube_codegen_apimachinery::resource::ResourceInfo;
pub use manifests::{parse_manifests, read_manifests};
pub use persist::Saved;
pub use semantics::patch::PatchType;
pub use semantics::review::{API_AUDIENCE, REVIEW_KINDS, USER_GROUPS, USER_NAME, USER_UID};
pub use testing::reactor::{Action, Reaction, ReactionFn, WatchReaction, WatchReactionFn};

use config::Config;
use semantics::registry;
use semantics::resources::Resource;
use semantics::state::State;
use storage::object;
use testing::reactor::{Reactor, WatchReactor};

/// The recorded requests, the oldest dropped beyond `capacity` requests or `max_body_bytes` of
/// request bodies; a body larger than the whole budget is not kept (its request is).
#[derive(Debug)]
pub(crate) struct ActionLog {
    /// Each action with the size of its request body.
    entries: std::collections::VecDeque<(Action, usize)>,
    capacity: usize,
    max_body_bytes: usize,
    body_bytes: usize,
}

impl ActionLog {
    fn new(capacity: usize, max_body_bytes: usize) -> Self {
        ActionLog {
            entries: std::collections::VecDeque::new(),
            capacity,
            max_body_bytes,
            body_bytes: 0,
        }
    }

    /// Records `a`, whose request body was `body_len` bytes.
    pub(crate) fn push(&mut self, mut a: Action, mut body_len: usize) {
        if self.capacity == 0 {
            return;
        }
        if body_len > self.max_body_bytes {
            a.body = None;
            body_len = 0;
        }
        while self.entries.len() >= self.capacity
            || self.body_bytes + body_len > self.max_body_bytes
        {
            let Some((_, n)) = self.entries.pop_front() else {
                break;
            };
            self.body_bytes -= n;
        }
        self.body_bytes += body_len;
        self.entries.push_back((a, body_len));
    }

    fn actions(&self) -> Vec<Action> {
        self.entries.iter().map(|(a, _)| a.clone()).collect()
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.body_bytes = 0;
    }
}

/// State shared by the server, its clients and handles.
pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    pub(crate) actions: Mutex<ActionLog>,
    pub(crate) reactors: RwLock<Vec<Reactor>>,
    pub(crate) watch_reactors: RwLock<Vec<WatchReactor>>,
    /// Watches being served now.
    pub(crate) active_watches: std::sync::atomic::AtomicUsize,
    /// Watches cut because their client did not keep up.
    pub(crate) slow_watchers_cut: std::sync::atomic::AtomicU64,
    /// The OpenAPI documents, with the registry generation they were built for.
    #[allow(clippy::type_complexity)]
    pub(crate) openapi: Mutex<Option<(u64, Arc<endpoints::openapi::Documents>)>>,
    /// The controllers the server runs after each write.
    pub(crate) controllers: controllers::Controllers,
    /// The watch faults tests inject.
    pub(crate) faults: faults::Faults,
    /// Where every request and answer is recorded, if anywhere.
    pub(crate) recorder: Option<Arc<record::Recorder>>,
    /// The recorded run answered instead of the state, if any.
    pub(crate) replay: Option<record::Replay>,
}

/// Runs the controllers that act with time every [`controllers::CONTROLLER_TICK`] while the server lives
/// (the task holds the server weakly and ends with it). Without a Tokio runtime there is no
/// ticker and they act only after writes.
fn start_ticker(shared: &Arc<Shared>) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no Tokio runtime: controllers that act with time run only after writes");
        return;
    };
    let weak = Arc::downgrade(shared);
    rt.spawn(async move {
        let mut every = tokio::time::interval(controllers::CONTROLLER_TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let Some(shared) = weak.upgrade() else { return };
            let mut st = shared.state.lock();
            shared.controllers.tick(&mut st);
        }
    });
}

impl Shared {
    /// Runs the enabled controllers over what the last writes left (see `controllers`).
    pub(crate) fn run_controllers(&self) {
        let mut st = self.state.lock();
        self.controllers.run(&mut st);
    }
}

/// The in-memory API server. Cheap to clone: clones share state.
#[derive(Clone)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("resource_version", &self.shared.state.lock().rv())
            .finish()
    }
}

/// Builds a [`FakeApiServer`].
#[derive(Debug)]
pub struct FakeApiServerBuilder {
    resources: Vec<ResourceInfo>,
    objects: Vec<Value>,
    config: Config,
    max_actions: usize,
    max_action_body_bytes: usize,
    data_dir: Option<std::path::PathBuf>,
    controllers: std::collections::BTreeSet<Controller>,
    record: Option<std::path::PathBuf>,
    replay: Option<std::path::PathBuf>,
    replay_wait: Duration,
}

impl Default for FakeApiServerBuilder {
    fn default() -> Self {
        FakeApiServerBuilder {
            resources: Vec::new(),
            objects: Vec::new(),
            config: Config::default(),
            max_actions: 100_000,
            max_action_body_bytes: 64 * 1024 * 1024,
            data_dir: None,
            controllers: [Controller::Namespace].into(),
            record: None,
            replay: None,
            replay_wait: Duration::from_secs(5),
        }
    }
}

impl FakeApiServerBuilder {
    /// Serves these generated resources (as if their CRDs were installed), besides the
    /// built-ins.
    pub fn resources(mut self, infos: &[ResourceInfo]) -> Self {
        self.resources.extend_from_slice(infos);
        self
    }

    /// Seeds an object (with `apiVersion` and `kind`; see [`to_value`]).
    pub fn object(mut self, obj: Value) -> Self {
        self.objects.push(obj);
        self
    }

    /// Seeds every object of a manifest file or of the manifest files of a directory (YAML or
    /// JSON, several documents per file, `kind: List` expanded); CRDs among them are installed
    /// before anything else is seeded.
    pub fn manifests(mut self, path: impl AsRef<std::path::Path>) -> Result<Self, FakeError> {
        self.objects.extend(manifests::read_manifests(path)?);
        Ok(self)
    }

    /// Seeds objects.
    pub fn objects(mut self, objs: impl IntoIterator<Item = Value>) -> Self {
        self.objects.extend(objs);
        self
    }

    /// How many events each resource keeps for watches and continue tokens (default 10 000);
    /// older resourceVersions get 410 Gone.
    pub fn history_capacity(mut self, n: usize) -> Self {
        self.config.history_capacity = n.max(1);
        self
    }

    /// How often watches that allow bookmarks get one (default 60 s, as the real server).
    pub fn bookmark_interval(mut self, d: Duration) -> Self {
        self.config.bookmark_interval = d;
        self
    }

    /// How long a watch may wait for a client that does not read before it is cut with a 410
    /// Gone `ERROR` event (default 10 s), so that slow watchers cannot make the server buffer
    /// without bound.
    pub fn slow_watcher_timeout(mut self, d: Duration) -> Self {
        self.config.slow_watcher_timeout = d;
        self
    }

    /// NamespaceLifecycle admission (default on): creating in a missing namespace is a 404,
    /// in a terminating one a 403. Seeded objects create their namespace.
    pub fn namespace_lifecycle(mut self, on: bool) -> Self {
        self.config.namespace_lifecycle = on;
        self
    }

    /// kube-apiserver's `ShardedListAndWatch` feature gate (default off, as there, where it is
    /// alpha): on, list, watch and deletecollection take KEP-5866's `shardSelector`
    /// (`shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`, ranges
    /// of the 64-bit FNV-1a hash of the uid or the namespace joined with `||`), refuse a bad
    /// one with kube-apiserver's 500 and words, and echo the selector in a list's
    /// `metadata.shardInfo`; off, the parameter is ignored, as there.
    pub fn sharded_list_and_watch(mut self, on: bool) -> Self {
        self.config.sharded_list_and_watch = on;
        self
    }

    /// Runs the namespace controller (default on) or not: shorthand for adding
    /// [`Controller::Namespace`] to, or removing it from, the controllers
    /// ([`with_controllers`](Self::with_controllers)). Off, a deleted namespace stays
    /// `Terminating` as on an API server without kube-controller-manager.
    pub fn namespace_controller(mut self, on: bool) -> Self {
        if on {
            self.controllers.insert(Controller::Namespace);
        } else {
            self.controllers.remove(&Controller::Namespace);
        }
        self
    }

    /// The controllers of kube-controller-manager the server runs (replacing the default,
    /// which is the namespace controller alone): [`Controller::GarbageCollector`] deletes
    /// objects whose owners are gone and carries out `Foreground` and `Orphan` propagation;
    /// [`Controller::Namespace`] empties and then removes deleted namespaces. They act through
    /// the server's own write paths after each write (watches see their changes, with
    /// resourceVersions), and finish before the next request is served. An empty list runs
    /// none, as a bare kube-apiserver.
    ///
    /// ```
    /// use kube_fake_apiserver::{Controller, FakeApiServer};
    ///
    /// let server = FakeApiServer::builder()
    ///     .with_controllers([Controller::GarbageCollector, Controller::Namespace])
    ///     .build()?;
    /// assert_eq!(
    ///     server.controllers(),
    ///     [Controller::GarbageCollector, Controller::Namespace]
    /// );
    /// # Ok::<(), kube_fake_apiserver::FakeError>(())
    /// ```
    pub fn with_controllers(mut self, controllers: impl IntoIterator<Item = Controller>) -> Self {
        self.controllers = controllers.into_iter().collect();
        self
    }

    /// Admission webhooks whose `clientConfig.service` names `namespace`/`name` on `port` are
    /// called at `address` (`host:port`, e.g. the loopback address of a test's webhook
    /// server), as envtest rewrites services to URLs. Without it such a webhook is called at
    /// `https://<name>.<namespace>.svc:<port>`, a name that does not resolve, so the call
    /// fails and the webhook's `failurePolicy` decides.
    pub fn webhook_service(
        mut self,
        namespace: &str,
        name: &str,
        port: u16,
        address: impl Into<String>,
    ) -> Self {
        std::sync::Arc::make_mut(&mut self.config.webhook_services).insert(
            (namespace.to_string(), name.to_string(), i64::from(port)),
            address.into(),
        );
        self
    }

    /// How many requests [`FakeHandle::actions`] keeps (default 100 000, the oldest are
    /// dropped; 0 records nothing): bounds memory for long-running servers.
    pub fn max_recorded_actions(mut self, n: usize) -> Self {
        self.max_actions = n;
        self
    }

    /// How many bytes of request bodies [`FakeHandle::actions`] keeps in all (default 64 MiB;
    /// the oldest actions are dropped to make room, and a body larger than the whole budget
    /// is recorded as `None`): bounds memory however large the requests are.
    pub fn max_recorded_body_bytes(mut self, n: usize) -> Self {
        self.max_action_body_bytes = n;
        self
    }

    /// Starts from the snapshot in `dir` if it holds one (see
    /// [`FakeApiServer::save_snapshot`]): every object with its resourceVersion, the
    /// resources of the CRDs among them, and the resourceVersion counter where it was, so
    /// watches resume. An empty or missing directory starts fresh; one that holds anything
    /// else, or an unreadable snapshot, fails the build with [`FakeError::DataDir`]. Objects
    /// given to the builder that the snapshot already has are left as the snapshot has them.
    pub fn data_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Records every request the server answers and the answer — a watch's events as they
    /// are sent — to `path`, in the line-oriented format of [`record`] (created, or
    /// truncated, when the server is built).
    pub fn record(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.record = Some(path.into());
        self
    }

    /// Answers every request from the recording at `path` (see [`record`] for how requests
    /// are matched and watches replayed) instead of from stored objects; seeds and
    /// controllers are then left unused. A file that is not a recording fails the build with
    /// [`FakeError::Recording`], naming the line and the cause.
    pub fn replay(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.replay = Some(path.into());
        self
    }

    /// How long a replayed watch event waits for the requests that came before it in the
    /// recording (default 5 s) before it is sent anyway.
    pub fn replay_wait(mut self, d: Duration) -> Self {
        self.replay_wait = d;
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<FakeApiServer, FakeError> {
        let replay = match &self.replay {
            Some(path) => Some(record::Replay::load(path, self.replay_wait)?),
            None => None,
        };
        let recorder = match &self.record {
            Some(path) => Some(record::Recorder::create(path)?),
            None => None,
        };
        let snapshot = match &self.data_dir {
            Some(dir) => persist::load(dir)?,
            None => None,
        };
        let restored = snapshot.is_some();
        let mut st = State::new(self.config);
        for r in semantics::resources::builtins() {
            st.register(r);
        }
        for info in &self.resources {
            st.register(Resource::from_info(info)?);
        }
        if self
            .controllers
            .contains(&Controller::CoordinatedLeaderElection)
        {
            st.register(semantics::resources::lease_candidates());
        }
        if let Some(snapshot) = snapshot {
            tracing::info!(
                objects = snapshot.len(),
                "restoring the data directory's snapshot"
            );
            persist::restore(&mut st, snapshot);
        }
        let server = FakeApiServer {
            shared: Arc::new(Shared {
                state: Mutex::new(st),
                actions: Mutex::new(ActionLog::new(self.max_actions, self.max_action_body_bytes)),
                reactors: RwLock::new(Vec::new()),
                watch_reactors: RwLock::new(Vec::new()),
                openapi: Mutex::new(None),
                active_watches: Default::default(),
                slow_watchers_cut: Default::default(),
                controllers: controllers::Controllers::new(self.controllers),
                faults: faults::Faults::default(),
                recorder,
                replay,
            }),
        };
        let handle = server.handle();
        let seed_as = |obj: Value, manager: &str| match handle.add_value_as(obj, manager) {
            // What a restored snapshot already has stays as it is.
            Err(FakeError::Rejected { code: 409, .. }) if restored => Ok(()),
            other => other.map(drop),
        };
        let seed = |obj: Value| seed_as(obj, "kube-codegen-fake");
        // What kube-apiserver creates at start, written as it writes them: the system
        // namespaces and PriorityClasses.
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            seed_as(
                serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                "kube-apiserver",
            )?;
        }
        for class in semantics::builtin::system_priority_classes() {
            seed_as(class, "kube-apiserver")?;
        }
        // CRDs first, then namespaces, so that custom resources and namespaced objects given
        // in any order find what they need.
        let rank = |o: &Value| match o.get("kind").and_then(Value::as_str) {
            Some("CustomResourceDefinition") => 0,
            Some("Namespace") => 1,
            _ => 2,
        };
        let mut objects = self.objects;
        objects.sort_by_key(rank);
        for obj in objects {
            seed(obj)?;
        }
        // What the seed (or a restored snapshot) leaves for the controllers, as
        // kube-controller-manager's first sync would find it.
        server.shared.controllers.start();
        server.shared.run_controllers();
        if server.shared.controllers.needs_ticker() {
            start_ticker(&server.shared);
        }
        Ok(server)
    }
}

impl FakeApiServer {
    /// A builder.
    pub fn builder() -> FakeApiServerBuilder {
        FakeApiServerBuilder::default()
    }

    /// A server for the built-in resources, with default settings. Custom resources appear
    /// when their CRDs are created through the API (or seeded, or given to the builder).
    pub fn new() -> Self {
        Self::builder()
            .build()
            .unwrap_or_else(|e| unreachable!("the built-in namespaces are always accepted: {e}"))
    }

    /// A server for the built-ins and these generated resources (as if their CRDs were
    /// installed, without schemas), with default settings.
    pub fn with_resources(resources: &[ResourceInfo]) -> Result<Self, FakeError> {
        Self::builder().resources(resources).build()
    }

    /// Saves every object, with its resourceVersion, to `dir/snapshot.json` (mode 0600,
    /// written whole and renamed into place), for [`FakeApiServerBuilder::data_dir`] to
    /// restore. `dir` is created if missing; one that holds files of anything else is refused
    /// with [`FakeError::DataDir`].
    pub fn save_snapshot(&self, dir: impl AsRef<std::path::Path>) -> Result<Saved, FakeError> {
        persist::save(&self.shared.state, dir.as_ref())
    }

    /// The current (global) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.state.lock().rv()
    }

    /// The controllers the server runs (see [`FakeApiServerBuilder::with_controllers`]).
    pub fn controllers(&self) -> Vec<Controller> {
        self.shared.controllers.enabled().collect()
    }

    /// The test handle (actions, reactors, direct object access).
    pub fn handle(&self) -> FakeHandle {
        FakeHandle {
            shared: self.shared.clone(),
        }
    }

    /// A `kube::Client` whose requests this server answers (default namespace `default`).
    /// Needs a Tokio runtime (the client spawns a buffer task).
    pub fn client(&self) -> Result<kube::Client, FakeError> {
        tokio::runtime::Handle::try_current().map_err(|e| FakeError::NoRuntime(e.to_string()))?;
        Ok(kube::Client::new(self.clone(), "default"))
    }

    /// Serves over HTTPS on a loopback address (`127.0.0.1:0` picks a free port) with a random
    /// bearer token and a fresh self-signed CA; [`ServedApiServer::kubeconfig`] has both.
    pub async fn serve(&self, addr: SocketAddr) -> Result<ServedApiServer, FakeError> {
        self.serve_with(ServeOptions {
            addr,
            ..ServeOptions::default()
        })
        .await
    }

    /// [`serve`](Self::serve) with a chosen token.
    pub async fn serve_with_token(
        &self,
        addr: SocketAddr,
        token: impl Into<String>,
    ) -> Result<ServedApiServer, FakeError> {
        self.serve_with(ServeOptions {
            addr,
            token: Some(token.into()),
            ..ServeOptions::default()
        })
        .await
    }

    /// Serves with explicit [`ServeOptions`] (for example on a non-loopback address, which
    /// must be allowed explicitly).
    pub async fn serve_with(&self, opts: ServeOptions) -> Result<ServedApiServer, FakeError> {
        endpoints::serve::serve(self.shared.clone(), opts).await
    }
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl<B> tower_service::Service<http::Request<B>> for FakeApiServer
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let bytes = match endpoints::serve::collect_limited(body).await {
                Ok(b) => b,
                Err(e) => return Ok(endpoints::response::error_response(&e)),
            };
            Ok(endpoints::handler::handle(shared, http::Request::from_parts(parts, bytes)).await)
        })
    }
}

/// A fake server with the built-ins and `resources`, seeded with `objects`, and a client for
/// it: what a generated `fake::Clientset::new(objects)` is built on.
pub fn new_client(
    resources: &[ResourceInfo],
    objects: impl IntoIterator<Item = Value>,
) -> Result<(kube::Client, FakeHandle), FakeError> {
    let server = FakeApiServer::builder()
        .resources(resources)
        .objects(objects)
        .build()?;
    Ok((server.client()?, server.handle()))
}

/// Serializes a `kube::Resource` with its `apiVersion` and `kind` (which generated types do
/// not always write themselves), for seeding.
pub fn to_value<K>(obj: &K) -> Result<Value, FakeError>
where
    K: KubeResource<DynamicType = ()> + Serialize,
{
    let mut v = serde_json::to_value(obj)?;
    object::set_type_meta(&mut v, &K::api_version(&()), &K::kind(&()));
    Ok(v)
}

/// The test side of a fake server: recorded actions, reactors, and direct object access.
#[derive(Clone)]
pub struct FakeHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeHandle").finish_non_exhaustive()
    }
}

impl FakeHandle {
    /// The requests received so far, oldest first (at most the builder's
    /// [`max_recorded_actions`](FakeApiServerBuilder::max_recorded_actions)).
    pub fn actions(&self) -> Vec<Action> {
        self.shared.actions.lock().actions()
    }

    /// The server's watch faults ([`faults`]): 410s, dropped connections, slow and stepped
    /// delivery, for the watches of a resource.
    pub fn faults(&self) -> faults::Faults {
        self.shared.faults.clone()
    }

    /// For a server built with [`FakeApiServerBuilder::replay`]: the requests that found no
    /// recorded answer (as their request keys, see [`record`]), oldest first; empty otherwise.
    pub fn replay_misses(&self) -> Vec<String> {
        self.shared
            .replay
            .as_ref()
            .map(record::Replay::misses)
            .unwrap_or_default()
    }

    /// Forgets the recorded requests.
    pub fn clear_actions(&self) {
        self.shared.actions.lock().clear();
    }

    /// Puts a reactor first in the chain. `verb` and `resource` select the requests it sees
    /// (`"*"` for any; `"mydemos/status"` for a subresource).
    pub fn prepend_reactor<F>(&self, verb: &str, resource: &str, f: F)
    where
        F: Fn(&Action) -> Reaction + Send + Sync + 'static,
    {
        self.shared.reactors.write().insert(
            0,
            Reactor {
                verb: verb.to_string(),
                resource: resource.to_string(),
                f: Arc::new(f),
            },
        );
    }

    /// Adds a reactor at the end of the chain (still before the object store).
    pub fn add_reactor<F>(&self, verb: &str, resource: &str, f: F)
    where
        F: Fn(&Action) -> Reaction + Send + Sync + 'static,
    {
        self.shared.reactors.write().push(Reactor {
            verb: verb.to_string(),
            resource: resource.to_string(),
            f: Arc::new(f),
        });
    }

    /// Puts a watch reactor first in the watch chain.
    pub fn prepend_watch_reactor<F>(&self, resource: &str, f: F)
    where
        F: Fn(&Action) -> WatchReaction + Send + Sync + 'static,
    {
        self.shared.watch_reactors.write().insert(
            0,
            WatchReactor {
                resource: resource.to_string(),
                f: Arc::new(f),
            },
        );
    }

    /// Removes every reactor and watch reactor.
    pub fn clear_reactors(&self) {
        self.shared.reactors.write().clear();
        self.shared.watch_reactors.write().clear();
    }

    /// Stores an object directly, bypassing reactors and namespace admission (a missing
    /// namespace is created), assigning `uid`, `resourceVersion` and the rest as a create
    /// does, and keeping the given `status`. Returns the stored object.
    pub fn add<K>(&self, obj: &K) -> Result<Value, FakeError>
    where
        K: KubeResource<DynamicType = ()> + Serialize,
    {
        self.add_value(to_value(obj)?)
    }

    /// [`add`](Self::add) for an untyped object with `apiVersion` and `kind`.
    pub fn add_value(&self, obj: Value) -> Result<Value, FakeError> {
        self.add_value_as(obj, "kube-codegen-fake")
    }

    /// [`add_value`](Self::add_value) with `manager` as the writer of its managed fields.
    fn add_value_as(&self, obj: Value, manager: &str) -> Result<Value, FakeError> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        if api_version.is_empty() || kind.is_empty() {
            return Err(FakeError::MissingTypeMeta(obj.to_string()));
        }
        let mut st = self.shared.state.lock();
        let res = st
            .registry
            .by_kind(api_version, kind)
            .ok_or_else(|| FakeError::UnknownKind {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
            })?;
        let reject = |e: error::ApiError| FakeError::Rejected {
            code: e.code,
            reason: e.reason,
            message: e.message,
        };
        let opts = registry::WriteOptions {
            manager: manager.into(),
            ..Default::default()
        };
        let mut ns = object::namespace(&obj).to_string();
        if res.namespaced && ns.is_empty() {
            ns = "default".into();
        }
        if res.namespaced
            && let Some(ns_res) = st.registry.get("", "v1", "namespaces")
            && st.get(&ns_res, "", &ns).is_none()
        {
            let ns_obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            registry::create(
                &mut st,
                &ns_res,
                "",
                ns_obj,
                &opts,
                registry::CreateFlags::default(),
            )
            .map_err(reject)?;
        }
        let seed = registry::CreateFlags {
            preset_managed_fields: false,
            seed: true,
        };
        let created = registry::create(&mut st, &res, &ns, obj, &opts, seed).map_err(reject)?;
        self.shared.controllers.run(&mut st);
        Ok(created)
    }

    fn resource_of<K: KubeResource<DynamicType = ()>>(
        st: &State,
    ) -> Result<Arc<Resource>, FakeError> {
        let (g, v, p) = (K::group(&()), K::version(&()), K::plural(&()));
        st.registry
            .get(&g, &v, &p)
            .ok_or_else(|| FakeError::UnknownResource {
                resource: format!("{}/{v}", error::qualified(&g, &p)),
            })
    }

    /// The stored object `namespace/name` (`namespace` empty for cluster-scoped kinds).
    pub fn get<K>(&self, namespace: &str, name: &str) -> Result<Option<K>, FakeError>
    where
        K: KubeResource<DynamicType = ()> + DeserializeOwned,
    {
        let st = self.shared.state.lock();
        let res = Self::resource_of::<K>(&st)?;
        let ns = if res.namespaced { namespace } else { "" };
        match st.get(&res, ns, name) {
            Some(v) => {
                let mut v = (*v).clone();
                object::set_type_meta(&mut v, &res.api_version(), &res.kind);
                Ok(Some(serde_json::from_value(v)?))
            }
            None => Ok(None),
        }
    }

    /// Every stored object of kind `K`, in all namespaces, in key order.
    pub fn list<K>(&self) -> Result<Vec<K>, FakeError>
    where
        K: KubeResource<DynamicType = ()> + DeserializeOwned,
    {
        self.list_in::<K>(None)
    }

    /// Stored objects of kind `K` in one namespace (or all, with `None`).
    pub fn list_in<K>(&self, namespace: Option<&str>) -> Result<Vec<K>, FakeError>
    where
        K: KubeResource<DynamicType = ()> + DeserializeOwned,
    {
        let st = self.shared.state.lock();
        let res = Self::resource_of::<K>(&st)?;
        st.all_objects(&res, namespace)
            .into_iter()
            .map(|o| {
                let mut v = (*o).clone();
                object::set_type_meta(&mut v, &res.api_version(), &res.kind);
                serde_json::from_value(v).map_err(FakeError::from)
            })
            .collect()
    }

    /// The stored object of any served resource, untyped.
    pub fn get_value(
        &self,
        resource: &kube::core::ApiResource,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let st = self.shared.state.lock();
        let res = st
            .registry
            .get(&resource.group, &resource.version, &resource.plural)?;
        let ns = if res.namespaced { namespace } else { "" };
        st.get(&res, ns, name).map(|v| (*v).clone())
    }

    /// Stored objects of any served resource, untyped.
    pub fn list_values(
        &self,
        resource: &kube::core::ApiResource,
        namespace: Option<&str>,
    ) -> Vec<Value> {
        let st = self.shared.state.lock();
        match st
            .registry
            .get(&resource.group, &resource.version, &resource.plural)
        {
            Some(res) => st
                .all_objects(&res, namespace)
                .into_iter()
                .map(|o| (*o).clone())
                .collect(),
            None => Vec::new(),
        }
    }

    /// Serves another generated resource.
    pub fn register(&self, info: &ResourceInfo) -> Result<(), FakeError> {
        let r = Resource::from_info(info)?;
        self.shared.state.lock().register(r);
        Ok(())
    }

    /// How many watches the server is streaming now.
    pub fn active_watches(&self) -> usize {
        self.shared
            .active_watches
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many watches were cut (410) because their client did not read fast enough.
    pub fn slow_watchers_cut(&self) -> u64 {
        self.shared
            .slow_watchers_cut
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The current (global) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.state.lock().rv()
    }

    /// Drops the retained event history of every resource, as an etcd compaction does: a
    /// watch or continue token from before now is answered with 410 Gone.
    pub fn compact(&self) {
        self.shared.state.lock().storage.compact_all();
    }

    /// Changes how many events each resource keeps.
    pub fn set_history_capacity(&self, n: usize) {
        let mut st = self.shared.state.lock();
        st.config.history_capacity = n.max(1);
        st.storage.history_capacity = n.max(1);
    }

    /// Changes the bookmark interval of watches started from now on.
    pub fn set_bookmark_interval(&self, d: Duration) {
        self.shared.state.lock().config.bookmark_interval = d;
    }

    /// A new `kube::Client` on the same server.
    pub fn client(&self) -> Result<kube::Client, FakeError> {
        FakeApiServer {
            shared: self.shared.clone(),
        }
        .client()
    }
}
