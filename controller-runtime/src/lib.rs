//! controller-runtime for Rust: a [`Manager`] that runs controllers and other [`Runnable`]s with
//! Lease leader election, health probes, Prometheus metrics and graceful shutdown, and a
//! controller [`Builder`] (`for_`, `owns`, `watches`, predicates) — on kube-codegen-runtime's
//! shared informers, listers and rate-limiting work queue.
//!
//! One module per concept, as controller-runtime has them:
//!
//! * [`manager`] — [`Manager`], [`Runnable`], [`shutdown_signal`];
//! * [`leaderelection`] — Lease leader election with client-go's semantics, usable alone;
//! * [`healthz`] — named `/healthz` and `/readyz` checks;
//! * [`metrics`] — the `controller_runtime_*`, `workqueue_*` and `leader_election_*` families;
//! * [`filters`] — `TokenReview`/`SubjectAccessReview` checks for secure metrics;
//! * `flags` (feature `flags`, on by default) — `ManagerFlags`, controller-runtime's flags as one
//!   clap struct, and `client_config`, its `GetConfig`;
//! * [`reconcile`] — [`Request`], [`Action`], [`Reconciler`];
//! * [`read_your_writes`] — a reconcile never reads, from the cache, an object older than its
//!   request's own last write;
//! * [`handler`] — the four event handlers that map events to requests;
//! * [`predicate`] — event filters: [`GenerationChanged`](predicate::GenerationChanged) …;
//! * [`controller`] and [`builder`] — the controller a builder assembles;
//! * [`object`] — [`Object`], what handlers and predicates see of any kind;
//! * [`webhook`] — admission (typed validators and defaulters) and CRD conversion (hub and
//!   spokes), served over HTTPS by the manager's [`WebhookServer`](webhook::WebhookServer).
//!
//! ```no_run
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::{ConfigMap, Service};
//! use kube_controller_runtime::predicate::GenerationChanged;
//! use kube_controller_runtime::{Action, Context, Controller, Manager, Request, shutdown_signal};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mgr = Manager::builder(kube::Client::try_default().await?)
//!     .leader_election_id("demo-controller")
//!     .leader_election_namespace("kube-system")
//!     .health_probe_bind_address(":8081")
//!     .metrics_bind_address(":8080")
//!     .build()?;
//! let services = mgr.lister::<Service>();
//! Controller::builder(&mgr)
//!     .for_with::<ConfigMap>(GenerationChanged)
//!     .owns::<Service>()
//!     .max_concurrent_reconciles(4)
//!     .complete(move |req: Request, _ctx: Context| {
//!         let services = services.clone();
//!         async move {
//!             let ns = req.namespace.as_deref().unwrap_or_default();
//!             let _svc = services.namespaced(ns).get(&req.name);
//!             Ok::<_, kube::Error>(Action::requeue_after(Duration::from_secs(300)))
//!         }
//!     })?;
//! mgr.start(shutdown_signal()).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod builder;
pub mod controller;
pub mod filters;
#[cfg(feature = "flags")]
pub mod flags;
pub mod handler;
pub mod healthz;
pub mod leaderelection;
pub mod manager;
pub mod metrics;
pub mod object;
#[cfg(feature = "flags")]
pub mod operator;
pub mod predicate;
pub mod read_your_writes;
pub mod reconcile;
mod server;
pub mod sharding;
mod tls;
pub mod webhook;

pub use builder::{Builder, BuilderError};
pub use controller::{Controller, ControllerError};
pub use healthz::Checker;
pub use leaderelection::{LeaderElectionConfig, LeaderElectionError, LeaderElector, LeaseLock};
pub use manager::{Manager, ManagerBuilder, ManagerError, Runnable, RunnableFn, shutdown_signal};
pub use metrics::Metrics;
pub use object::Object;
pub use predicate::Predicate;
pub use reconcile::{Action, Context, Reconciler, Request};
pub use webhook::{Webhook, WebhookError};

pub use kube_codegen_runtime;
pub use tokio_util::sync::CancellationToken;

// The guide's examples are doc tests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/controllers-queue.md")]
struct GuideControllersQueue;

/// The error type of [`Runnable::start`]: anything that says what went wrong.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;
