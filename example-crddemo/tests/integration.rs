//! Every integration test of this package in one test binary: one link of the dependency
//! graph instead of one per file. Each file is a module of its own, so
//! `cargo test -p example-crddemo --test integration <file>` runs one file's tests.

mod cli;
mod common;
mod controller;
mod embedded_reviews;
mod informers;
mod readme;
mod record_replay;
mod shared_informers;
mod watch_faults;
