//! The Go-style layout the generator expects: API types under `apis/<group>/<version>/`; the
//! client that `build.rs` generates is included as [`client`].

pub mod apis;

/// The generated client tree (`clientset::versioned`, `listers`, `informers::externalversions`,
/// `clientset::versioned::fake`), written to `OUT_DIR` by `build.rs`.
#[allow(missing_docs)]
pub mod client {
    kube_codegen_runtime::include_client!();
}
