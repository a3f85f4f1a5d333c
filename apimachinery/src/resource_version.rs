//! Comparing resourceVersions (KEP-5504, client-go's `CompareResourceVersion`).
//!
//! A resourceVersion is opaque to clients, with one guarantee since Kubernetes 1.35: a
//! resourceVersion kube-apiserver hands out is a decimal integer without leading zeros, and a
//! later write has a greater one. Two of them compare as numbers of any length (by length, then
//! digit by digit). A string of another shape (another server's) is not comparable.
//!
//! ```
//! use std::cmp::Ordering;
//! use kube_codegen_apimachinery::resource_version::compare;
//!
//! assert_eq!(compare("9", "10"), Ok(Ordering::Less));
//! assert_eq!(compare("123456789012345678901234567890", "99"), Ok(Ordering::Greater));
//! assert!(compare("007", "7").is_err());
//! ```

use std::cmp::Ordering;

/// A resourceVersion that is not a decimal integer without leading zeros.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("resourceVersion {0:?} is not comparable: not a decimal integer without leading zeros")]
pub struct NotComparable(pub String);

/// Whether `rv` has the comparable shape: digits only, no leading zero (but `"0"` itself).
///
/// ```
/// use kube_codegen_apimachinery::resource_version::is_comparable;
/// assert!(is_comparable("0") && is_comparable("1042"));
/// assert!(!is_comparable("") && !is_comparable("01") && !is_comparable("12a"));
/// ```
pub fn is_comparable(rv: &str) -> bool {
    let b = rv.as_bytes();
    !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1)
}

/// Compares two resourceVersions as the numbers they are.
///
/// ```
/// use std::cmp::Ordering;
/// use kube_codegen_apimachinery::resource_version::compare;
/// assert_eq!(compare("42", "42"), Ok(Ordering::Equal));
/// assert!(compare("", "1").is_err());
/// ```
pub fn compare(a: &str, b: &str) -> Result<Ordering, NotComparable> {
    for rv in [a, b] {
        if !is_comparable(rv) {
            return Err(NotComparable(rv.to_string()));
        }
    }
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn agrees_with_integer_order(a in any::<u64>(), b in any::<u64>()) {
            prop_assert_eq!(compare(&a.to_string(), &b.to_string()), Ok(a.cmp(&b)));
        }

        #[test]
        fn anything_else_is_not_comparable(s in "[0-9]{0,3}[^0-9][0-9]{0,3}|0[0-9]{1,5}|") {
            prop_assert!(compare(&s, "1").is_err());
            prop_assert!(compare("1", &s).is_err());
        }
    }
}
