//! Every integration test of this package in one test binary: one link of the dependency
//! graph instead of one per file. Each file is a module of its own, so
//! `cargo test -p kube-fake-apiserver --test integration <file>` runs one file's tests.
//! `fuzz.rs` stays a binary of its own: it is run alone, in release mode.

mod controllers;
mod kubeconfig;
mod layers;
mod persistence;
mod readme;
mod record_replay;
mod serving;
mod soak;
