//! The review kinds: `tokenreviews` and `selfsubjectreviews` (authentication.k8s.io/v1),
//! `subjectaccessreviews`, `selfsubjectaccessreviews`, `selfsubjectrulesreviews` and the
//! namespaced `localsubjectaccessreviews` (authorization.k8s.io/v1).
//!
//! As in kube-apiserver they are create-only virtual resources: a `POST` to the collection is
//! answered with the request object and a computed `status`; nothing is stored (no name is
//! needed, no watch event is sent, nothing can be listed). A `GET`, `DELETE` or watch of the
//! collection answers 405 MethodNotAllowed, any path below it 404 (the real server registers no
//! route there), and discovery lists the one verb `create`.
//!
//! The answers are computed from what the fake knows:
//!
//! * **Who is asking.** Every request the fake serves is treated as [`USER_NAME`] (uid
//!   [`USER_UID`], groups [`USER_GROUPS`]) — the bearer-token user of a served fake, and the
//!   in-process clients' too. It is the identity the repository's real-server harness gives its
//!   token (`admin` in `system:masters`), so the answers compare one to one.
//! * **Authentication.** A TokenReview authenticates only the server's own bearer token (the
//!   one [`ServedApiServer::token`](crate::ServedApiServer::token) returns), for the audience
//!   [`API_AUDIENCE`]; any other token — and every token when the fake is not served over HTTP
//!   and so has no token — answers `authenticated: false` with kube-apiserver's error
//!   `invalid bearer token`.
//! * **Authorization.** The fake authorizes every request, so access reviews answer
//!   `allowed: true` (with a reason saying so) and a rules review lists rules allowing
//!   everything (`*`), `incomplete: false`.
//!
//! The validation kube-apiserver does before answering holds too, with its messages.

use crate::semantics::str_at;
use kube_codegen_apimachinery::resource::ResourceInfo;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::managed::{self, Scope};
use crate::semantics::resources::Resource;
use crate::storage::object;

/// The review kinds kube-apiserver serves, for [`FakeApiServerBuilder::resources`](crate::FakeApiServerBuilder::resources)
/// (the `kube-fake-apiserver` program serves them; a library server only when registered).
pub const REVIEW_KINDS: &[ResourceInfo] = &[
    review(
        "authentication.k8s.io",
        "TokenReview",
        "tokenreviews",
        false,
    ),
    review(
        "authentication.k8s.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
        false,
    ),
    review(
        "authorization.k8s.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
        false,
    ),
    review(
        "authorization.k8s.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
    ),
    review(
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
    ),
    review(
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
    ),
];

const fn review(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> ResourceInfo {
    ResourceInfo {
        group,
        version: "v1",
        kind,
        list_kind: "",
        plural,
        singular: "",
        namespaced,
        subresources: &[],
        short_names: &[],
    }
}

/// The user name every request to the fake is treated as.
pub const USER_NAME: &str = "admin";
/// The uid of [`USER_NAME`].
pub const USER_UID: &str = "admin";
/// The groups of [`USER_NAME`] (`system:authenticated` is added by kube-apiserver to every
/// authenticated user).
pub const USER_GROUPS: &[&str] = &["system:masters", "system:authenticated"];
/// The audience the fake's token is good for: kube-apiserver's default API audience, its
/// service-account issuer (`https://kubernetes.default.svc`).
pub const API_AUDIENCE: &str = "https://kubernetes.default.svc";

/// Why an access review is allowed.
pub(crate) const ALLOWED_REASON: &str =
    "the in-memory API server (kube-fake-apiserver) authorizes every request";

/// kube-apiserver's TokenReview error for a token no authenticator accepts.
const INVALID_TOKEN: &str = "invalid bearer token";

/// The bearer token a served fake accepts, handed to the handler as a request extension.
#[derive(Debug, Clone)]
pub(crate) struct ServerToken(pub(crate) std::sync::Arc<str>);

/// One of the review kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReviewKind {
    Token,
    SelfSubject,
    SubjectAccess,
    LocalSubjectAccess,
    SelfSubjectAccess,
    SelfSubjectRules,
}

impl ReviewKind {
    /// The review kind a served resource is, if it is one (a custom resource never is).
    pub(crate) fn of(res: &Resource) -> Option<Self> {
        if res.custom.is_some() || res.version != "v1" {
            return None;
        }
        match (res.group.as_str(), res.plural.as_str(), res.namespaced) {
            ("authentication.k8s.io", "tokenreviews", false) => Some(Self::Token),
            ("authentication.k8s.io", "selfsubjectreviews", false) => Some(Self::SelfSubject),
            ("authorization.k8s.io", "subjectaccessreviews", false) => Some(Self::SubjectAccess),
            ("authorization.k8s.io", "localsubjectaccessreviews", true) => {
                Some(Self::LocalSubjectAccess)
            }
            ("authorization.k8s.io", "selfsubjectaccessreviews", false) => {
                Some(Self::SelfSubjectAccess)
            }
            ("authorization.k8s.io", "selfsubjectrulesreviews", false) => {
                Some(Self::SelfSubjectRules)
            }
            _ => None,
        }
    }
}

/// What a review's answer depends on besides the request object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// The bearer token the server accepts (`None`: not served over HTTP, no token).
    pub(crate) server_token: Option<&'a str>,
    /// The namespace of the request's URL (empty for cluster-scoped paths).
    pub(crate) url_namespace: &'a str,
    /// The field manager of the request (its `managedFields` entry).
    pub(crate) manager: &'a str,
}

/// The requesting user as a `UserInfo`.
fn user_info() -> Value {
    json!({"username": USER_NAME, "uid": USER_UID, "groups": USER_GROUPS})
}

/// Answers a review `create`: the request object with its computed `status`.
pub(crate) fn create(
    kind: ReviewKind,
    res: &Resource,
    body: Value,
    ctx: &Context<'_>,
) -> ApiResult<Value> {
    let Value::Object(_) = body else {
        return Err(ApiError::bad_request(format!(
            "the request body is not a {} object",
            res.kind
        )));
    };
    let mut obj = body;
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(res.api_version()));
        m.insert("kind".into(), json!(res.kind));
    }
    let now = object::now_rfc3339();
    match kind {
        ReviewKind::Token => {
            record_managed_fields(res, &mut obj, ctx.manager, &now);
            token_review(obj, ctx)
        }
        ReviewKind::SelfSubject => Ok(json!({
            "apiVersion": res.api_version(),
            "kind": res.kind,
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user_info()},
        })),
        ReviewKind::SubjectAccess | ReviewKind::SelfSubjectAccess => {
            record_managed_fields(res, &mut obj, ctx.manager, &now);
            let mut errs = access_spec_errors(&obj, kind == ReviewKind::SubjectAccess);
            if let Some(meta) = metadata_beyond(&obj, &[]) {
                errs.push(FieldError::invalid("metadata", meta, "must be empty"));
            }
            invalid(errs)?;
            Ok(allowed(obj))
        }
        ReviewKind::LocalSubjectAccess => {
            let namespace = object::namespace(&obj).to_string();
            if namespace.is_empty() {
                object::set_meta(&mut obj, "namespace", Some(json!(ctx.url_namespace)));
            } else if namespace != ctx.url_namespace {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            record_managed_fields(res, &mut obj, ctx.manager, &now);
            let mut errs = access_spec_errors(&obj, true);
            if let Some(meta) = metadata_beyond(&obj, &["namespace"]) {
                errs.push(FieldError::invalid(
                    "metadata",
                    meta,
                    "must be empty except for namespace",
                ));
            }
            if let Some(attrs) = obj
                .pointer("/spec/resourceAttributes")
                .filter(|v| !v.is_null())
            {
                let ns = attrs.get("namespace").and_then(Value::as_str).unwrap_or("");
                if ns != ctx.url_namespace {
                    errs.push(FieldError::invalid_str(
                        "spec.resourceAttributes.namespace",
                        ns,
                        "must match metadata.namespace",
                    ));
                }
            }
            if let Some(attrs) = obj
                .pointer("/spec/nonResourceAttributes")
                .filter(|v| !v.is_null())
            {
                errs.push(FieldError::invalid(
                    "spec.nonResourceAttributes",
                    non_resource_attributes(attrs),
                    "disallowed on this kind of request",
                ));
            }
            invalid(errs)?;
            Ok(allowed(obj))
        }
        ReviewKind::SelfSubjectRules => {
            let namespace = str_at(&obj, "/spec/namespace");
            if namespace.is_empty() {
                return Err(ApiError::bad_request("no namespace on request"));
            }
            // kube-apiserver answers with a new object: empty metadata and spec.
            Ok(json!({
                "apiVersion": res.api_version(),
                "kind": res.kind,
                "metadata": {},
                "spec": {},
                "status": {
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    "incomplete": false,
                },
            }))
        }
    }
}

/// The `managedFields` entry kube-apiserver records for the request before the review runs:
/// every leaf the request sets, and (`.`) every optional struct or map below the top-level
/// fields (`spec.resourceAttributes`, `metadata.labels`), as for any update. The review
/// kinds' top-level structs (`spec`) are not pointers in Go, so neither they nor an empty one
/// are anybody's field.
fn record_managed_fields(res: &Resource, obj: &mut Value, manager: &str, now: &str) {
    let mut entries = Vec::new();
    managed::record_update(res, &mut entries, None, obj, manager, Scope::Main, now);
    for e in &mut entries {
        e.fields
            .retain(|p| p.len() > 1 || !managed::get_at(obj, p).is_some_and(Value::is_object));
    }
    entries.retain(|e| !e.fields.is_empty());
    managed::write_entries(obj, &entries);
}

fn token_review(mut obj: Value, ctx: &Context<'_>) -> ApiResult<Value> {
    let token = str_at(&obj, "/spec/token");
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let is_server_token = ctx
        .server_token
        .is_some_and(|t| !t.is_empty() && constant_time_eq(t.as_bytes(), token.as_bytes()));
    // An audience-agnostic token is good for the API audience only.
    let requested: Vec<&str> = object::strs(obj.pointer("/spec/audiences")).collect();
    let audience_ok = requested.is_empty() || requested.contains(&API_AUDIENCE);
    let status = if is_server_token && audience_ok {
        json!({"authenticated": true, "user": user_info(), "audiences": [API_AUDIENCE]})
    } else {
        json!({"user": {}, "error": INVALID_TOKEN})
    };
    if let Some(m) = obj.as_object_mut() {
        m.insert("status".into(), status);
    }
    Ok(obj)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `ValidateSubjectAccessReviewSpec` (and its self-review variant, which has no user).
fn access_spec_errors(obj: &Value, needs_subject: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let attrs = |name: &str| {
        obj.get("spec")
            .and_then(|s| s.get(name))
            .filter(|v| !v.is_null())
    };
    let resource = attrs("resourceAttributes");
    let non_resource = attrs("nonResourceAttributes");
    if resource.is_some() == non_resource.is_some() {
        errs.push(FieldError::invalid(
            "spec",
            non_resource.map_or_else(|| "null".to_string(), non_resource_attributes),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    if needs_subject {
        let user = str_at(obj, "/spec/user");
        let has_groups = obj
            .pointer("/spec/groups")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty());
        if user.is_empty() && !has_groups {
            errs.push(FieldError::invalid_str(
                "spec.user",
                user,
                "at least one of user or group must be specified",
            ));
        }
    }
    errs
}

/// `NonResourceAttributes` as Go prints the internal struct (`{"Path":"/x","Verb":"get"}`).
fn non_resource_attributes(v: &Value) -> String {
    let field = |k: &str| go_quote(v.get(k).and_then(Value::as_str).unwrap_or(""));
    format!("{{\"Path\":{},\"Verb\":{}}}", field("path"), field("verb"))
}

/// The `ManagedFieldsEntry` fields in their Go order.
const MANAGED_ENTRY_ORDER: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// The object's metadata printed as Go prints it, when it sets anything but `allowed` (and
/// `managedFields`, which the server itself records): reviews must come with empty metadata.
fn metadata_beyond(obj: &Value, allowed: &[&str]) -> Option<String> {
    let meta = object::meta(obj)?;
    let set = |k: &str, v: &Value| match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Bool(b) => *b && k != "managedFields",
    };
    let offending = meta
        .iter()
        .any(|(k, v)| k != "managedFields" && !allowed.contains(&k.as_str()) && set(k, v));
    if !offending {
        return None;
    }
    Some(ordered(
        meta,
        crate::semantics::schema::OBJECT_META_FIELDS,
        |k, v| {
            if k == "managedFields"
                && let Value::Array(entries) = v
            {
                let items: Vec<String> = entries
                    .iter()
                    .map(|e| match e {
                        Value::Object(m) => ordered(m, MANAGED_ENTRY_ORDER, |_, v| compact(v)),
                        other => compact(other),
                    })
                    .collect();
                format!("[{}]", items.join(","))
            } else {
                compact(v)
            }
        },
    ))
}

/// A JSON object with the keys of `order` first, in that order, then the others.
fn ordered(
    m: &Map<String, Value>,
    order: &[&str],
    render: impl Fn(&str, &Value) -> String,
) -> String {
    let mut keys: Vec<&str> = order
        .iter()
        .copied()
        .filter(|k| m.contains_key(*k))
        .collect();
    keys.extend(m.keys().map(String::as_str).filter(|k| !order.contains(k)));
    let fields: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            m.get(k)
                .map(|v| format!("{}:{}", go_quote(k), render(k, v)))
        })
        .collect();
    format!("{{{}}}", fields.join(","))
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The group-less `Invalid` error kube-apiserver's review storage returns
/// (`.authorization.k8s.io "" is invalid: …`).
fn invalid(errs: Vec<FieldError>) -> ApiResult<()> {
    ApiError::invalid_if_any("authorization.k8s.io", "", "", errs)
}

/// An access review's answer: everything is allowed.
fn allowed(mut obj: Value) -> Value {
    if let Some(m) = obj.as_object_mut() {
        m.insert(
            "status".into(),
            json!({"allowed": true, "reason": ALLOWED_REASON}),
        );
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_prints_in_go_order() {
        let obj = json!({"metadata": {"name": "x", "labels": {"a": "b"}, "managedFields": [
            {"time": "t", "manager": "m", "operation": "Update", "fieldsType": "FieldsV1",
             "apiVersion": "authorization.k8s.io/v1", "fieldsV1": {"f:spec": {}}}]}});
        assert_eq!(
            metadata_beyond(&obj, &[]).as_deref(),
            Some(
                r#"{"name":"x","labels":{"a":"b"},"managedFields":[{"manager":"m","operation":"Update","apiVersion":"authorization.k8s.io/v1","time":"t","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}"#
            )
        );
        let local = json!({"metadata": {"namespace": "default"}});
        assert_eq!(metadata_beyond(&local, &["namespace"]), None);
    }

    #[test]
    fn non_resource_attributes_print_as_the_go_struct() {
        assert_eq!(
            non_resource_attributes(&json!({"verb": "get", "path": "/x"})),
            r#"{"Path":"/x","Verb":"get"}"#
        );
    }
}
