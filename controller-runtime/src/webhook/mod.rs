//! Webhooks (controller-runtime's `pkg/webhook` and `pkg/builder`'s `WebhookManagedBy`):
//! admission — a typed [`Validator`] and [`Defaulter`] per kind — and CRD conversion — a
//! [`Hub`] version and [`Convertible`] spokes — served over HTTPS by the manager's
//! [`WebhookServer`] (a runnable of every replica, no leader election).
//!
//! * [`admission`] — the typed traits, [`Denial`](admission::Denial), the object-safe
//!   [`Handler`];
//! * [`conversion`] — hub and spokes at `/convert`, all-or-nothing, round-trip loss reported;
//! * [`server`] — the HTTPS server, its certificate reloaded when the files change, its metrics;
//! * [`local`] — webhooks called by an API server on loopback (tests, `--embedded`): a
//!   certificate made here and the manifests installed pointing at this process (envtest's way).
//!
//! A [`Webhook::builder`] registers a kind's webhooks at Kubebuilder's paths:
//! `/mutate-<group>-<version>-<kind>` for the defaulter and `/validate-<group>-<version>-<kind>`
//! for the validator (lower case, the group's dots as `-`; [`mutate_path`], [`validate_path`]),
//! and the kind's versions at `/convert`.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_controller_runtime::webhook::Webhook;
//! use kube_controller_runtime::webhook::admission::{
//!     Defaulter, Denial, Request, ValidationResult, Validator,
//! };
//! use kube_controller_runtime::{Manager, shutdown_signal};
//!
//! struct Checks;
//! impl Validator<ConfigMap> for Checks {
//!     async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
//!         if cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
//!             return Err(Denial::invalid("no passwords in ConfigMaps")
//!                 .with_cause("data.password", "use a Secret"));
//!         }
//!         Ok(vec![])
//!     }
//! }
//! impl Defaulter<ConfigMap> for Checks {
//!     async fn default(&self, _req: &Request, cm: &mut ConfigMap) -> Result<(), Denial> {
//!         cm.metadata.labels.get_or_insert_default().entry("owner".into()).or_insert("me".into());
//!         Ok(())
//!     }
//! }
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mgr = Manager::builder(kube::Client::try_default().await?)
//!     .webhook_port(9443)
//!     .webhook_cert_dir("/tmp/k8s-webhook-server/serving-certs")
//!     .build()?;
//! Webhook::builder(&mgr)
//!     .for_::<ConfigMap>()
//!     .with_defaulter(Checks)
//!     .with_validator(Checks)
//!     .complete()?; // /mutate--v1-configmap and /validate--v1-configmap
//! mgr.start(shutdown_signal()).await?;
//! # Ok(()) }
//! ```

pub mod admission;
pub mod conversion;
pub mod local;
pub mod server;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use server::{WebhookServer, WebhookServerOptions};

use crate::Manager;
use admission::{Defaulter, Handler, Validator};
use conversion::{Convertible, Hub, KindConversion, LossPolicy, VersionFns};

/// Why a webhook could not be registered or served.
///
/// Not retryable without a change: every variant names what to fix — a path, a flag
/// (`--webhook-port` for [`Bind`](Self::Bind) and [`InvalidAddress`](Self::InvalidAddress),
/// `--webhook-cert-dir` for [`Certificate`](Self::Certificate)), or the order of calls.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// A path is served already.
    #[error("a webhook is already registered at {0}")]
    DuplicatePath(String),
    /// A path does not start with `/` or has a query.
    #[error("invalid webhook path {0:?}: it must start with '/' and have no query")]
    InvalidPath(String),
    /// The builder was completed without a defaulter, a validator or a spoke.
    #[error("the webhook of {0} has nothing to serve: add a defaulter, a validator or a spoke")]
    Empty(String),
    /// A spoke is of another group or kind than its hub, or of the hub's version.
    #[error("invalid conversion: {0}")]
    InvalidConversion(String),
    /// The kind's conversions are registered already.
    #[error("conversions of {0} are already registered")]
    DuplicateConversion(String),
    /// The host and port are no address.
    #[error("invalid webhook server address: {0}")]
    InvalidAddress(String),
    /// The port could not be bound.
    #[error("cannot listen on {addr} for webhooks: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why (address in use …).
        #[source]
        source: std::io::Error,
    },
    /// The certificate or key cannot be read or used.
    #[error("webhook certificate {}: {message}", path.display())]
    Certificate {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The TLS configuration could not be made.
    #[error("webhook TLS: {0}")]
    Tls(String),
    /// The server was started twice.
    #[error("the webhook server has already been started")]
    AlreadyStarted,
    /// The manager's webhook server was first asked for after the manager started.
    #[error(transparent)]
    Manager(#[from] crate::ManagerError),
}

/// `group/version, Kind=kind` of the kind a typed webhook serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WebhookKind {
    group: String,
    version: String,
    kind: String,
}

impl WebhookKind {
    fn of<K: Resource<DynamicType = ()>>() -> Self {
        WebhookKind {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
        }
    }

    /// An error answer when `req` is not a review of this kind.
    pub(crate) fn refuse(
        &self,
        req: &admission::Request,
    ) -> Option<kube::core::admission::AdmissionResponse> {
        let k = &req.kind;
        if k.group == self.group && k.version == self.version && k.kind == self.kind {
            return None;
        }
        Some(admission::errored(
            req,
            400,
            format!(
                "this webhook serves {}, not {}",
                gvk_text(&self.group, &self.version, &self.kind),
                gvk_text(&k.group, &k.version, &k.kind)
            ),
        ))
    }
}

impl std::fmt::Display for WebhookKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&gvk_text(&self.group, &self.version, &self.kind))
    }
}

fn gvk_text(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("{version}, Kind={kind}")
    } else {
        format!("{group}/{version}, Kind={kind}")
    }
}

fn path_of(prefix: &str, group: &str, version: &str, kind: &str) -> String {
    format!(
        "/{prefix}-{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// Kubebuilder's path of `K`'s defaulting webhook: `/mutate-<group>-<version>-<kind>`.
///
/// ```
/// use kube_controller_runtime::webhook::mutate_path;
/// use k8s_openapi::api::apps::v1::Deployment;
/// assert_eq!(mutate_path::<Deployment>(), "/mutate-apps-v1-deployment");
/// ```
pub fn mutate_path<K: Resource<DynamicType = ()>>() -> String {
    path_of("mutate", &K::group(&()), &K::version(&()), &K::kind(&()))
}

/// Kubebuilder's path of `K`'s validating webhook: `/validate-<group>-<version>-<kind>`.
///
/// ```
/// use kube_controller_runtime::webhook::validate_path;
/// use k8s_openapi::api::networking::v1::Ingress;
/// assert_eq!(validate_path::<Ingress>(), "/validate-networking-k8s-io-v1-ingress");
/// ```
pub fn validate_path<K: Resource<DynamicType = ()>>() -> String {
    path_of("validate", &K::group(&()), &K::version(&()), &K::kind(&()))
}

/// Where webhook builders start (controller-runtime's `ctrl.NewWebhookManagedBy`).
#[derive(Debug)]
pub struct Webhook;

impl Webhook {
    /// A builder registering webhooks on `mgr`'s [`WebhookServer`].
    pub fn builder(mgr: &Manager) -> WebhookBuilder {
        WebhookBuilder { mgr: mgr.clone() }
    }
}

/// Picks the kind ([`for_`](Self::for_)).
#[must_use = "a builder does nothing until complete()"]
#[derive(Debug)]
pub struct WebhookBuilder {
    mgr: Manager,
}

impl WebhookBuilder {
    /// The kind the webhooks are for.
    pub fn for_<K>(self) -> TypedWebhookBuilder<K>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        TypedWebhookBuilder {
            mgr: self.mgr,
            defaulter: None,
            validator: None,
            hub: None,
            spokes: HashMap::new(),
            problems: Vec::new(),
            loss_policy: LossPolicy::default(),
            _k: PhantomData,
        }
    }
}

/// The webhooks of kind `K`: a defaulter, a validator, and (for a [`Hub`]) its spokes.
#[must_use = "a builder does nothing until complete()"]
pub struct TypedWebhookBuilder<K> {
    mgr: Manager,
    defaulter: Option<Arc<dyn Handler>>,
    validator: Option<Arc<dyn Handler>>,
    hub: Option<VersionFns>,
    spokes: HashMap<String, VersionFns>,
    problems: Vec<String>,
    loss_policy: LossPolicy,
    _k: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for TypedWebhookBuilder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedWebhookBuilder")
            .field("kind", &std::any::type_name::<K>())
            .field("defaulter", &self.defaulter.is_some())
            .field("validator", &self.validator.is_some())
            .field("spokes", &self.spokes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<K> TypedWebhookBuilder<K>
where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// Serves `defaulter` at [`mutate_path`]`::<K>()`.
    pub fn with_defaulter(mut self, defaulter: impl Defaulter<K>) -> Self {
        self.defaulter = Some(Arc::new(admission::DefaultingHandler::<K, _>::new(
            Arc::new(defaulter),
            WebhookKind::of::<K>(),
        )));
        self
    }

    /// Serves `validator` at [`validate_path`]`::<K>()`.
    pub fn with_validator(mut self, validator: impl Validator<K>) -> Self {
        self.validator = Some(Arc::new(admission::ValidatingHandler::<K, _>::new(
            Arc::new(validator),
            WebhookKind::of::<K>(),
        )));
        self
    }

    /// Registers the webhooks on the manager's server (which the manager then runs).
    pub fn complete(self) -> Result<(), WebhookError> {
        let kind = WebhookKind::of::<K>();
        if self.defaulter.is_none() && self.validator.is_none() && self.hub.is_none() {
            return Err(WebhookError::Empty(kind.to_string()));
        }
        if !self.problems.is_empty() {
            return Err(WebhookError::InvalidConversion(self.problems.join("; ")));
        }
        let server = self.mgr.webhook_server()?;
        let paths = [
            (mutate_path::<K>(), self.defaulter),
            (validate_path::<K>(), self.validator),
        ];
        if let Some((taken, _)) = paths
            .iter()
            .find(|(p, h)| h.is_some() && server.paths().contains(p))
        {
            return Err(WebhookError::DuplicatePath(taken.clone()));
        }
        if let Some(hub) = self.hub {
            let registry = server.conversions();
            if registry.contains(&kind.group, &kind.kind) {
                return Err(WebhookError::DuplicateConversion(kind.to_string()));
            }
            let mut versions = self.spokes;
            versions.insert(kind.version.clone(), hub);
            registry.insert(
                &kind.group,
                &kind.kind,
                KindConversion {
                    versions,
                    policy: self.loss_policy,
                },
            );
        }
        for (path, handler) in paths {
            if let Some(h) = handler {
                server.register_arc(&path, h)?;
            }
        }
        Ok(())
    }
}

impl<K: Hub> TypedWebhookBuilder<K> {
    /// Converts version `S` to and from `K`, the hub, at `/convert` (every spoke of the kind
    /// is added the same way; any version converts to any other through the hub).
    pub fn with_spoke<S: Convertible<K>>(mut self) -> Self {
        let (hub, spoke) = (WebhookKind::of::<K>(), WebhookKind::of::<S>());
        if (&hub.group, &hub.kind) != (&spoke.group, &spoke.kind) {
            self.problems
                .push(format!("{spoke} is no version of the same kind as {hub}"));
        } else if hub.version == spoke.version || self.spokes.contains_key(&spoke.version) {
            self.problems
                .push(format!("{spoke}: version {} given twice", spoke.version));
        }
        self.hub = Some(VersionFns::hub::<K>());
        self.spokes
            .insert(spoke.version.clone(), VersionFns::spoke::<K, S>());
        self
    }

    /// What a conversion that loses data does (default [`LossPolicy::Refuse`]; see
    /// [`conversion`]).
    pub fn with_loss_policy(mut self, policy: LossPolicy) -> Self {
        self.loss_policy = policy;
        self
    }
}
