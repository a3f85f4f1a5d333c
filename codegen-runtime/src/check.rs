//! Compile-time checks that generated code runs in `const` items: a re-exported kind's tags
//! (scope, resource name) must agree with the type they describe, or the crate does not build.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Namespace, Pod};
//! use kube_codegen_runtime::check;
//!
//! const _: () = {
//!     check::namespaced::<Pod>();
//!     check::cluster_scoped::<Namespace>();
//!     assert!(check::same_str(<Pod as k8s_openapi::Resource>::URL_PATH_SEGMENT, "pods"));
//! };
//! ```
//!
//! ```compile_fail
//! const _: () = kube_codegen_runtime::check::cluster_scoped::<k8s_openapi::api::core::v1::Pod>();
//! ```

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope, Resource};

/// Compiles only for a namespaced resource type.
pub const fn namespaced<K: Resource<Scope = NamespaceResourceScope>>() {}

/// Compiles only for a cluster-scoped resource type.
pub const fn cluster_scoped<K: Resource<Scope = ClusterResourceScope>>() {}

/// Whether two strings are equal, in a `const` context.
///
/// ```
/// assert!(kube_codegen_runtime::check::same_str("pods", "pods"));
/// assert!(!kube_codegen_runtime::check::same_str("pods", "pod"));
/// ```
pub const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
