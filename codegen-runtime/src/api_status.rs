//! The `metav1.Status` of a failed request: read it out of a [`kube::Error`] and classify it as
//! `k8s.io/apimachinery/pkg/api/errors` does (`is_not_found`, `is_conflict` …), or build one
//! locally, so that a lister's NotFound looks exactly like the server's.
//!
//! ```
//! use kube_codegen_runtime::api_status;
//! let err = api_status::new_not_found("crddemo.k8s.io", "mydemos", "example");
//! assert!(api_status::is_not_found(&err));
//! assert_eq!(api_status::reason(&err), Some("NotFound"));
//! ```

use kube::core::{Status, response::StatusDetails, response::StatusSummary};

/// The API `Status` carried by `err`, if the server (or a local cache) produced one.
pub fn status(err: &kube::Error) -> Option<&Status> {
    match err {
        kube::Error::Api(s) => Some(s),
        _ => None,
    }
}

/// The `Status.reason` of an API error (`NotFound`, `Conflict` …).
pub fn reason(err: &kube::Error) -> Option<&str> {
    status(err)
        .map(|s| s.reason.as_str())
        .filter(|r| !r.is_empty())
}

/// The HTTP status code of an API error.
pub fn code(err: &kube::Error) -> Option<u16> {
    status(err).map(|s| s.code)
}

fn is(err: &kube::Error, reason_: &str, code_: u16) -> bool {
    match status(err) {
        Some(s) if !s.reason.is_empty() => s.reason == reason_,
        Some(s) => s.code == code_,
        None => false,
    }
}

/// 404 NotFound.
pub fn is_not_found(err: &kube::Error) -> bool {
    is(err, "NotFound", 404)
}

/// 409 AlreadyExists (a create of an existing name).
pub fn is_already_exists(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.reason == "AlreadyExists")
}

/// 409 Conflict (a stale resourceVersion).
pub fn is_conflict(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.reason == "Conflict" || (s.reason.is_empty() && s.code == 409))
}

/// 410 Gone / Expired (a resourceVersion older than the server's history).
pub fn is_gone(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.code == 410 || s.reason == "Gone" || s.reason == "Expired")
}

/// 422 Invalid.
pub fn is_invalid(err: &kube::Error) -> bool {
    is(err, "Invalid", 422)
}

/// 400 BadRequest.
pub fn is_bad_request(err: &kube::Error) -> bool {
    is(err, "BadRequest", 400)
}

/// 401 Unauthorized.
pub fn is_unauthorized(err: &kube::Error) -> bool {
    is(err, "Unauthorized", 401)
}

/// 403 Forbidden.
pub fn is_forbidden(err: &kube::Error) -> bool {
    is(err, "Forbidden", 403)
}

/// 405 MethodNotAllowed.
pub fn is_method_not_supported(err: &kube::Error) -> bool {
    is(err, "MethodNotAllowed", 405)
}

/// 429 TooManyRequests.
pub fn is_too_many_requests(err: &kube::Error) -> bool {
    is(err, "TooManyRequests", 429)
}

/// 504 / `Timeout` and `ServerTimeout`.
pub fn is_timeout(err: &kube::Error) -> bool {
    status(err)
        .is_some_and(|s| s.reason == "Timeout" || s.reason == "ServerTimeout" || s.code == 504)
}

/// A failure `Status` with the given code, reason and message.
pub fn status_failure(code: u16, reason: &str, message: impl Into<String>) -> Status {
    Status {
        status: Some(StatusSummary::Failure),
        code,
        message: message.into(),
        metadata: None,
        reason: reason.to_string(),
        details: None,
    }
}

/// The error the API server returns for a missing object:
/// `<resource>.<group> "<name>" not found` (group omitted for the core group).
pub fn new_not_found(group: &str, resource: &str, name: &str) -> kube::Error {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let mut s = status_failure(404, "NotFound", format!("{qualified} \"{name}\" not found"));
    s.details = Some(StatusDetails {
        name: name.to_string(),
        group: group.to_string(),
        kind: resource.to_string(),
        uid: String::new(),
        causes: Vec::new(),
        retry_after_seconds: 0,
    });
    kube::Error::Api(s.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(status_failure(code, reason, "m").boxed())
    }

    #[test]
    fn classifies_by_reason_then_code() {
        assert!(is_not_found(&api(404, "NotFound")));
        assert!(is_not_found(&api(404, "")));
        assert!(!is_not_found(&api(409, "Conflict")));
        assert!(is_conflict(&api(409, "Conflict")));
        assert!(!is_conflict(&api(409, "AlreadyExists")));
        assert!(is_already_exists(&api(409, "AlreadyExists")));
        assert!(is_gone(&api(410, "Expired")));
        assert!(is_invalid(&api(422, "Invalid")));
        assert!(!is_not_found(&kube::Error::LinesCodecMaxLineLengthExceeded));
        assert_eq!(code(&api(403, "Forbidden")), Some(403));
    }

    #[test]
    fn not_found_message_matches_the_api_server() {
        let e = new_not_found("crddemo.k8s.io", "mydemos", "x");
        assert_eq!(
            status(&e).map(|s| s.message.as_str()),
            Some("mydemos.crddemo.k8s.io \"x\" not found")
        );
        let e = new_not_found("", "pods", "p");
        assert_eq!(
            status(&e).map(|s| s.message.as_str()),
            Some("pods \"p\" not found")
        );
    }
}
