//! Integration-test support for kube-codegen.
//!
//! [`fixtures`] compiles the generated code of every golden fixture under
//! `#![deny(warnings, missing_docs)]` (and `cargo clippy -D warnings` lints it); the tests under
//! `tests/tests/` exercise it.

#[deny(warnings, missing_docs)]
pub mod fixtures;

#[deny(missing_docs)]
pub mod crds;

#[deny(missing_docs)]
pub mod conformance;

#[deny(missing_docs)]
pub mod apiserver;

#[deny(missing_docs)]
pub mod e2e;

#[deny(missing_docs)]
pub mod controllers;

pub mod request_mock;
#[deny(missing_docs)]
pub mod server_side_apply;

#[deny(missing_docs)]
pub mod builtin_objects;

#[deny(missing_docs)]
pub mod fake_vs_real;

#[deny(missing_docs)]
pub mod reconcile_log;
