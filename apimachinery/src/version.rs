//! Kubernetes' API version priority (`k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings`):
//! GA before beta before alpha, higher numbers first, and anything that is not shaped like a
//! Kubernetes version last, alphabetically. Discovery lists versions in this order, a CRD's
//! preferred version is the first, and the generator sorts a kind's versions with it.
//!
//! ```
//! use kube_codegen_apimachinery::version::sort_by_priority;
//!
//! let mut v = vec!["v1alpha1", "foo10", "v1", "v2beta1", "v10", "v11beta2", "foo1", "v10beta3", "v2", "v12alpha1"];
//! sort_by_priority(&mut v);
//! assert_eq!(v, ["v10", "v2", "v1", "v11beta2", "v10beta3", "v2beta1", "v12alpha1", "v1alpha1", "foo1", "foo10"]);
//! ```

use std::cmp::Ordering;

/// The stability level of a Kubernetes version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stability {
    /// `v1alpha1`
    Alpha,
    /// `v1beta1`
    Beta,
    /// `v1`
    Ga,
}

/// A version shaped like Kubernetes' (`v<major>[alpha|beta<minor>]`), taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KubeVersion {
    /// The major number.
    pub major: u64,
    /// GA, beta or alpha.
    pub stability: Stability,
    /// The number after `alpha`/`beta` (0 for GA).
    pub minor: u64,
}

/// Parses `v1`, `v2beta3`, `v1alpha1`; `None` for anything else.
///
/// ```
/// use kube_codegen_apimachinery::version::{parse, Stability};
/// assert_eq!(parse("v2beta3").map(|v| (v.major, v.stability, v.minor)), Some((2, Stability::Beta, 3)));
/// assert!(parse("v1gamma1").is_none());
/// assert!(parse("1").is_none());
/// ```
pub fn parse(version: &str) -> Option<KubeVersion> {
    let rest = version.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some(KubeVersion {
            major,
            stability: Stability::Ga,
            minor: 0,
        });
    }
    let (stability, n) = if let Some(n) = tail.strip_prefix("beta") {
        (Stability::Beta, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (Stability::Alpha, n)
    } else {
        return None;
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(KubeVersion {
        major,
        stability,
        minor: n.parse().ok()?,
    })
}

/// Compares two versions by priority: [`Ordering::Less`] means `a` comes first (is preferred).
///
/// ```
/// use std::cmp::Ordering;
/// use kube_codegen_apimachinery::version::compare_priority;
/// assert_eq!(compare_priority("v1", "v1beta1"), Ordering::Less);
/// assert_eq!(compare_priority("v1beta1", "v2alpha1"), Ordering::Less);
/// ```
pub fn compare_priority(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y
            .stability
            .cmp(&x.stability)
            .then(y.major.cmp(&x.major))
            .then(y.minor.cmp(&x.minor)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Sorts versions, most preferred first.
pub fn sort_by_priority<S: AsRef<str>>(versions: &mut [S]) {
    versions.sort_by(|a, b| compare_priority(a.as_ref(), b.as_ref()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_versions_sort_last_alphabetically() {
        let mut v = vec!["zeta", "v2", "v1beta", "alpha", "v1"];
        sort_by_priority(&mut v);
        assert_eq!(v, ["v2", "v1", "alpha", "v1beta", "zeta"]);
        // Go's regular expression takes leading zeros.
        assert_eq!(parse("v01").map(|v| v.major), Some(1));
    }
}
