//! The Go-style layout the generator expects: API types under `apis/<group>/<version>/`, the
//! generated client under `client/`.

pub mod apis;
#[rustfmt::skip]
pub mod client;
