//! Errors: [`FakeError`] for the Rust API of the fake, and the `metav1.Status` failures the
//! server answers requests with.

use std::net::SocketAddr;

use serde_json::{Map, Value, json};

/// An error from the Rust-side API of the fake server (building it, seeding objects, serving).
/// Requests made through a client get `metav1.Status` errors instead, as from a real server.
///
/// None of these is worth retrying as is: they name input to fix (an object, a file, an
/// address) or an environment problem (no Tokio runtime, a port in use).
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    /// A constructor that spawns tasks was called outside a Tokio runtime.
    #[error("the fake API server must be created inside a Tokio runtime: {0}")]
    NoRuntime(String),
    /// A seeded object has no `apiVersion` or `kind`.
    #[error("object has no apiVersion and kind: {0}")]
    MissingTypeMeta(String),
    /// No registered resource serves the object's `apiVersion` and `kind`.
    #[error("no resource is registered for kind {kind} in {api_version}")]
    UnknownKind {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// No registered resource has this group, version and plural name.
    #[error("no resource {resource} is registered")]
    UnknownResource {
        /// `plural.group/version`.
        resource: String,
    },
    /// The server refused a seeded object, as it would refuse a create.
    #[error("the object was refused ({code} {reason}): {message}")]
    Rejected {
        /// The HTTP status code.
        code: u16,
        /// The `Status.reason`.
        reason: String,
        /// The `Status.message`.
        message: String,
    },
    /// A resource description is not usable (empty plural, kind …).
    #[error("invalid resource description: {0}")]
    InvalidResource(String),
    /// JSON encoding or decoding failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// `serve` was given an address that is not loopback.
    #[error("refusing to serve on {0}: only loopback addresses are allowed")]
    NotLoopback(SocketAddr),
    /// An I/O error (binding, writing a kubeconfig).
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The kubeconfig's path names something this server will not replace: a symbolic link
    /// (which could send the token wherever it points), a directory or another non-regular
    /// file. Remove it or choose another path; retrying does not help.
    #[error("refusing to write the kubeconfig to {}: {reason}", path.display())]
    UnsafeKubeconfigPath {
        /// The path as given.
        path: std::path::PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// Making the serving certificate or the TLS configuration failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// A bearer token that is empty or has whitespace or control characters.
    #[error("the bearer token must be non-empty and free of whitespace and control characters")]
    InvalidToken,
    /// Building a client for the served server failed.
    #[error("client for the served fake API server: {0}")]
    Client(String),
    /// A data directory that is not one this server wrote, or whose snapshot cannot be read:
    /// refused rather than emptied (retrying does not help; use an empty or new directory).
    #[error("data directory {}: {reason}", path.display())]
    DataDir {
        /// The directory as given.
        path: std::path::PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// A recording could not be written, or one given to replay could not be read or is not
    /// a recording ([`record`](crate::record)): the file, the line (from 1) where one applies,
    /// and the cause.
    #[error("recording {}{}: {reason}", path.display(), line.map(|n| format!(", line {n}")).unwrap_or_default())]
    Recording {
        /// The file.
        path: std::path::PathBuf,
        /// The line, when the problem is on one.
        line: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// A file of objects or CRDs could not be read or parsed (retrying does not help).
    #[error("{path}: {message}")]
    Load {
        /// The file.
        path: String,
        /// What is wrong, with the document number where it applies.
        message: String,
    },
}

/// The kind of a field validation error, as `field.ErrorType` in Go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldErrorKind {
    Required,
    /// The offending value, already rendered as Go's `%#v` would (`"abc"`, `0x0`, `5`).
    Invalid(String),
    Forbidden,
    /// The offending value and the supported values.
    NotSupported(String, Vec<String>),
    TooLong(usize),
    /// A value of the wrong type (or format): the rendered value.
    TypeInvalid(String),
    /// Too many items: how many there are and the limit.
    TooMany(usize, usize),
    /// A duplicate item: the rendered value.
    Duplicate(String),
    /// A reference to something that does not exist: the rendered value.
    NotFound(String),
    /// `Invalid value` without the value (objects and arrays in CEL errors).
    InvalidOmitted,
}

/// One field validation error (`field.Error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) field: String,
    pub(crate) kind: FieldErrorKind,
    pub(crate) detail: String,
}

impl FieldError {
    pub(crate) fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Required,
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Invalid(value.into()),
            detail: detail.into(),
        }
    }

    /// An invalid string value, quoted as Go prints it.
    pub(crate) fn invalid_str(
        field: impl Into<String>,
        value: &str,
        detail: impl Into<String>,
    ) -> Self {
        Self::invalid(field, go_quote(value), detail)
    }

    pub(crate) fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Forbidden,
            detail: detail.into(),
        }
    }

    pub(crate) fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotSupported(
                go_quote(value),
                supported.iter().map(|s| go_quote(s)).collect(),
            ),
            detail: String::new(),
        }
    }

    pub(crate) fn too_long(field: impl Into<String>, max: usize) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TooLong(max),
            detail: String::new(),
        }
    }

    pub(crate) fn type_invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TypeInvalid(value.into()),
            detail: detail.into(),
        }
    }

    pub(crate) fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TooMany(actual, max),
            detail: String::new(),
        }
    }

    /// A string naming something that does not exist (`Not found: "v"`).
    pub(crate) fn not_found(field: impl Into<String>, value: &str) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotFound(go_quote(value)),
            detail: String::new(),
        }
    }

    pub(crate) fn duplicate(field: impl Into<String>, value: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Duplicate(value.into()),
            detail: String::new(),
        }
    }

    fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid(_) => "FieldValueInvalid",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::NotSupported(..) => "FieldValueNotSupported",
            FieldErrorKind::TooLong(_) => "FieldValueTooLong",
            FieldErrorKind::TypeInvalid(_) => "FieldValueTypeInvalid",
            FieldErrorKind::TooMany(..) => "FieldValueTooMany",
            FieldErrorKind::Duplicate(_) => "FieldValueDuplicate",
            FieldErrorKind::NotFound(_) => "FieldValueNotFound",
            FieldErrorKind::InvalidOmitted => "FieldValueInvalid",
        }
    }

    /// The message without the field path (`Required value: …`), as in a `StatusCause`.
    fn body(&self) -> String {
        let mut s = match &self.kind {
            FieldErrorKind::Required => "Required value".to_string(),
            FieldErrorKind::Invalid(v) => format!("Invalid value: {v}"),
            FieldErrorKind::Forbidden => "Forbidden".to_string(),
            FieldErrorKind::NotSupported(v, supported) => {
                format!(
                    "Unsupported value: {v}: supported values: {}",
                    supported.join(", ")
                )
            }
            FieldErrorKind::TooLong(max) => format!("Too long: may not be more than {max} bytes"),
            FieldErrorKind::TypeInvalid(v) => format!("Invalid value: {v}"),
            FieldErrorKind::TooMany(n, max) => {
                format!("Too many: {n}: must have at most {max} items")
            }
            FieldErrorKind::Duplicate(v) => format!("Duplicate value: {v}"),
            FieldErrorKind::NotFound(v) => format!("Not found: {v}"),
            FieldErrorKind::InvalidOmitted => "Invalid value".to_string(),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A string quoted as Go's `%q` would (close enough for the ASCII the API uses).
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A failed request: rendered as a `metav1.Status` body with the matching HTTP code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: String,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
    /// The `Status`'s list metadata (`metadata.continue` of a 410 for a compacted continue).
    pub(crate) list_meta: Option<Value>,
}

/// `resource.group` (or just `resource` for the core group), as `GroupResource.String()`.
pub(crate) fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut m = Map::new();
    if !name.is_empty() {
        m.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        m.insert("group".into(), json!(group));
    }
    if !kind.is_empty() {
        m.insert("kind".into(), json!(kind));
    }
    Value::Object(m)
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details: None,
            list_meta: None,
        }
    }

    pub(crate) fn with_list_meta(mut self, meta: Value) -> Self {
        self.list_meta = Some(meta);
        self
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404: `mydemos.crddemo.k8s.io "x" not found`.
    pub(crate) fn not_found(group: &str, resource: &str, name: &str) -> Self {
        ApiError::new(
            404,
            "NotFound",
            format!(
                "{} {} not found",
                qualified(group, resource),
                go_quote(name)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 404 for a path the server does not serve.
    pub(crate) fn no_route() -> Self {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// 409 AlreadyExists.
    pub(crate) fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        ApiError::new(
            409,
            "AlreadyExists",
            format!(
                "{} {} already exists",
                qualified(group, resource),
                go_quote(name)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 409 Conflict: `Operation cannot be fulfilled on <resource> "<name>": <why>`.
    pub(crate) fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} {}: {why}",
                qualified(group, resource),
                go_quote(name)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 422 Invalid with field causes: `<Kind>.<group> "<name>" is invalid: …`.
    pub(crate) fn invalid(group: &str, kind: &str, name: &str, errors: Vec<FieldError>) -> Self {
        let qualified_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let summary = match errors.as_slice() {
            [one] => one.to_string(),
            many => format!(
                "[{}]",
                many.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.reason(), "message": e.body(), "field": e.field}))
            .collect();
        let mut d = details(name, group, kind);
        if let Value::Object(m) = &mut d {
            m.insert("causes".into(), Value::Array(causes));
        }
        ApiError::new(
            422,
            "Invalid",
            format!("{qualified_kind} {} is invalid: {summary}", go_quote(name)),
        )
        .with_details(d)
    }

    /// [`ApiError::invalid`] when there are `errors`, `Ok` when there are none: how a
    /// validation's collected field errors end a request.
    pub(crate) fn invalid_if_any(
        group: &str,
        kind: &str,
        name: &str,
        errors: Vec<FieldError>,
    ) -> ApiResult<()> {
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(group, kind, name, errors))
        }
    }

    /// 400 BadRequest.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", message)
    }

    /// 403 Forbidden for a resource and name.
    pub(crate) fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError::new(
            403,
            "Forbidden",
            format!(
                "{} {} is forbidden: {why}",
                qualified(group, resource),
                go_quote(name)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 405 MethodNotAllowed.
    pub(crate) fn method_not_allowed() -> Self {
        ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    /// 410 Expired.
    pub(crate) fn expired(message: impl Into<String>) -> Self {
        ApiError::new(410, "Expired", message)
    }

    /// 415 UnsupportedMediaType.
    pub(crate) fn unsupported_media_type(message: impl Into<String>) -> Self {
        ApiError::new(415, "UnsupportedMediaType", message)
    }

    /// 500 InternalError, with the error as its one cause (Go's `errors.NewInternalError`).
    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        let message = message.to_string();
        ApiError::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
        .with_details(json!({"causes": [{"message": message}]}))
    }

    /// The `metav1.Status` body.
    pub(crate) fn to_status(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.insert(
            "metadata".into(),
            self.list_meta.clone().unwrap_or_else(|| json!({})),
        );
        m.insert("status".into(), json!("Failure"));
        m.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            m.insert("reason".into(), json!(self.reason));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        m.insert("code".into(), json!(self.code));
        Value::Object(m)
    }

    /// Builds an error from a `Status` given by a reactor.
    pub(crate) fn from_status(status: &kube::core::Status) -> Self {
        let mut e = ApiError::new(
            if status.code == 0 { 500 } else { status.code },
            &status.reason,
            status.message.clone(),
        );
        if let Some(d) = &status.details {
            e.details = serde_json::to_value(d).ok();
        }
        e
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

/// The result type of request handling.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// A failure `Status` with the given code, reason and message, as reactors answer with.
pub(crate) fn failure_status(
    code: u16,
    reason: &str,
    message: impl Into<String>,
) -> kube::core::Status {
    kube::core::Status {
        status: Some(kube::core::response::StatusSummary::Failure),
        code,
        message: message.into(),
        metadata: None,
        reason: reason.to_string(),
        details: None,
    }
}

/// Whether brackets and braces outside strings are left open at the end of the input.
fn unbalanced(body: &[u8]) -> bool {
    let (mut depth, mut in_str, mut escaped) = (0i64, false, false);
    for b in body {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    depth > 0 || in_str
}

/// A serde_json error as Go's `encoding/json` would word it, where the two can be told apart.
/// Go's error for a bad byte inside `true`, `false` or `null` (`invalid character 'o' in
/// literal null (expecting 'u')`), when the byte at `offset` is one.
fn literal_error(body: &[u8], offset: usize) -> Option<String> {
    let bad = *body.get(offset)?;
    let start = body[..offset]
        .iter()
        .rposition(|b| !b.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    let literal = ["true", "false", "null"]
        .into_iter()
        .find(|l| l.as_bytes().starts_with(&body[start..offset]) && start < offset)?;
    let expected = *literal.as_bytes().get(offset - start)?;
    (bad != expected && bad.is_ascii_graphic()).then(|| {
        format!(
            "invalid character '{}' in literal {literal} (expecting '{}')",
            bad as char, expected as char
        )
    })
}

pub(crate) fn go_json_error(e: &serde_json::Error, body: &[u8]) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "unexpected end of JSON input".to_string(),
        // Go reads 10 000 levels deep before giving up; an unclosed document ends first.
        _ if e.to_string().starts_with("recursion limit exceeded") && unbalanced(body) => {
            "unexpected end of JSON input".to_string()
        }
        serde_json::error::Category::Syntax => {
            // The byte at the error position, as Go quotes it.
            let offset = body
                .split(|b| *b == b'\n')
                .take(e.line().saturating_sub(1))
                .map(|l| l.len() + 1)
                .sum::<usize>()
                + e.column().saturating_sub(1);
            if let Some(msg) = literal_error(body, offset) {
                return msg;
            }
            match body.get(offset) {
                Some(b) if b.is_ascii_graphic() => {
                    format!(
                        "invalid character '{}' looking for beginning of value",
                        *b as char
                    )
                }
                Some(b) => format!(
                    "invalid character '\\u{:04x}' looking for beginning of value",
                    b
                ),
                None => "unexpected end of JSON input".to_string(),
            }
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_the_api_server() {
        let e = ApiError::not_found("crddemo.k8s.io", "mydemos", "x");
        assert_eq!(e.message, r#"mydemos.crddemo.k8s.io "x" not found"#);
        assert_eq!(e.to_status()["details"]["kind"], "mydemos");
        let e = ApiError::conflict(
            "",
            "configmaps",
            "c",
            "the object has been modified; please apply your changes to the latest version and try again",
        );
        assert_eq!(
            e.message,
            r#"Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again"#
        );
        let e = ApiError::invalid(
            "crddemo.k8s.io",
            "Mydemo",
            "",
            vec![FieldError::required(
                "metadata.name",
                "name or generateName is required",
            )],
        );
        assert_eq!(
            e.message,
            r#"Mydemo.crddemo.k8s.io "" is invalid: metadata.name: Required value: name or generateName is required"#
        );
        assert_eq!(
            e.to_status()["details"]["causes"][0]["reason"],
            "FieldValueRequired"
        );
        let two = ApiError::invalid(
            "",
            "ConfigMap",
            "c",
            vec![
                FieldError::invalid_str("a", "x", "bad"),
                FieldError::forbidden("b", "no"),
            ],
        );
        assert_eq!(
            two.message,
            r#"ConfigMap "c" is invalid: [a: Invalid value: "x": bad, b: Forbidden: no]"#
        );
    }
}
