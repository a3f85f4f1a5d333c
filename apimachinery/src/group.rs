//! Rules about API group names.

/// Whether kube-apiserver protects `group`: `k8s.io`, `kubernetes.io` and their subdomains.
/// A CustomResourceDefinition in such a group needs the [`API_APPROVED_ANNOTATION`].
///
/// ```
/// use kube_codegen_apimachinery::group::is_protected_group;
/// assert!(is_protected_group("crddemo.k8s.io"));
/// assert!(is_protected_group("kubernetes.io"));
/// assert!(!is_protected_group("example.com"));
/// assert!(!is_protected_group("notk8s.io"));
/// ```
pub fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

/// The annotation a CRD of a protected group must carry: the URL of the API review that
/// approved it, or a value starting with `unapproved`.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";
