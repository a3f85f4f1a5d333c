//! Integration-test support for kube-codegen.
//!
//! [`fixtures`] compiles the generated code of every golden fixture under
//! `#![deny(warnings, missing_docs)]` (and `cargo clippy -D warnings` lints it); the tests under
//! `tests/tests/` exercise it.

#[deny(warnings, missing_docs)]
pub mod fixtures;

/// The generated CustomResourceDefinition files, for the schema and real-apiserver tests.
#[deny(missing_docs)]
pub mod crds;

/// API-server conformance scenarios run against the fake and a real kube-apiserver.
#[deny(missing_docs)]
pub mod conformance;

/// A real kube-apiserver and etcd as child processes, for end-to-end tests.
#[deny(missing_docs)]
pub mod apiserver;

/// Logging, unique names and timings for the end-to-end tests.
#[deny(missing_docs)]
pub mod e2e;
