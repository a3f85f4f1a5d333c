//! Every integration test of this package in one test binary: one link of the dependency
//! graph instead of one per file. Each file is a module of its own, so
//! `cargo test -p kube-controller-runtime --test integration <file>` runs one file's tests.
//! `flags.rs` stays a binary of its own: it installs the process's global log subscriber.

mod builder;
mod common;
mod informer_metrics;
mod leader_election;
mod manager;
mod metadata_only;
mod probes_and_metrics;
mod read_your_writes;
mod secure_metrics;
mod sharding;
mod sharding_sim;
mod webhooks;
