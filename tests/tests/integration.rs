//! Every integration test of this package that does not need to be a crate root of its own,
//! compiled into one test binary: one link of the dependency graph instead of one per file.
//! Each file keeps its own module (so `cargo test -p tests --test integration conformance_fake`
//! runs one file's tests). `front_doors.rs` and `build_script.rs` stay separate binaries:
//! the code they generate names `crate::apis` and `crate::client`, as a user's crate root would.

// e2e_real_apiserver's json! bodies nest deeper than the default limit.
#![recursion_limit = "256"]

mod admission_fake_vs_real;
mod admission_policy_fake_vs_real;
mod apply_configurations;
mod apply_externals_fake_vs_real;
mod apply_fake;
mod apply_real;
mod backoff_fake_vs_real;
mod builtin_apply_fake_vs_real;
mod builtin_informers;
mod builtin_real;
mod builtin_requests;
mod conformance_clients;
mod conformance_fake;
mod conformance_real;
mod controllers_real;
mod coordinated_election_fake_vs_real;
mod crd_schema;
mod dynamic_discovery;
mod e2e_crddemo;
mod e2e_eru;
mod e2e_informers;
mod e2e_real_apiserver;
mod e2e_scaffold;
mod kube_codegen_script;
mod kubectl_fake;
mod operator;
mod rbac_fake_vs_real;
mod read_your_writes_real;
mod readme_clients;
mod readme_examples;
mod rustfmt_clean;
mod shard_selector_fake_vs_real;
mod sharding_processes;
mod typed_client_requests;
mod watchlist_clients;
mod webhooks_real;
