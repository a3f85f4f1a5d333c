//! Admission webhooks (controller-runtime's `pkg/webhook/admission`): typed [`Validator`]s and
//! [`Defaulter`]s of one kind, and the object-safe [`Handler`] they are served as.
//!
//! Each request is answered with an `AdmissionReview` of the request's own `apiVersion`, with
//! its `uid`:
//!
//! | what happened | answer |
//! | --- | --- |
//! | the validator returned warnings | allowed, with the warnings |
//! | the validator (or the defaulter) returned a [`Denial`] | not allowed: its code (403 by default), reason, message, causes and warnings |
//! | the defaulter changed the object | allowed, with the JSON patch from the object received to the defaulted one |
//! | the body is empty or no `AdmissionReview`, or the object does not decode as the kind | not allowed, code 400 |
//! | the review is for another kind than the webhook's | not allowed, code 400, naming both kinds |
//! | the validator or defaulter panicked | not allowed, code 500; the server keeps serving |
//!
//! `dryRun` is in the request each method receives ([`Request::dry_run`]): a validator or
//! defaulter with side effects (a webhook configuration's `sideEffects: NoneOnDryRun`) must
//! make none when it is true.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::core::response::{StatusCause, StatusDetails, StatusSummary};
use kube::core::{DynamicObject, Status, TypeMeta};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::WebhookKind;

/// What every admission method receives: the review's request (operation, user, `dryRun`,
/// options, kind, resource, name, namespace, and the objects untyped).
pub type Request = AdmissionRequest<DynamicObject>;

/// Warnings returned to the client that made the request (kubectl prints them).
pub type Warnings = Vec<String>;

/// What a [`Validator`] method returns: allowed with warnings, or denied.
pub type ValidationResult = Result<Warnings, Denial>;

/// A request refused by a [`Validator`] or a [`Defaulter`]: the `status` of the answer. The API
/// server returns it to the client as `admission webhook "<name>" denied the request:
/// <message>`, with its code, reason and causes.
///
/// ```
/// use kube_controller_runtime::webhook::admission::Denial;
/// let d = Denial::invalid("spec.port is out of range")
///     .with_cause("spec.port", "must be between 1 and 65535")
///     .with_warning("spec.ip is deprecated");
/// assert_eq!(d.code, 422);
/// assert_eq!(d.causes[0].field, "spec.port");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Denial {
    /// Why, for a person.
    pub message: String,
    /// The machine-readable reason (`Forbidden`, `Invalid` …).
    pub reason: String,
    /// The HTTP code the API server answers the client with.
    pub code: u16,
    /// The fields at fault, each with its own message.
    pub causes: Vec<StatusCause>,
    /// Warnings returned with the denial.
    pub warnings: Warnings,
}

impl Denial {
    /// Refused: code 403, reason `Forbidden` (what controller-runtime answers for a plain
    /// error).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Denial {
            message: message.into(),
            reason: "Forbidden".into(),
            code: 403,
            causes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The object is invalid: code 422, reason `Invalid` (add the fields at fault with
    /// [`with_cause`](Self::with_cause)).
    pub fn invalid(message: impl Into<String>) -> Self {
        Denial {
            code: 422,
            reason: "Invalid".into(),
            ..Denial::forbidden(message)
        }
    }

    /// Adds a field at fault (`field` as the API names it, `spec.port`), with reason
    /// `FieldValueInvalid`.
    pub fn with_cause(self, field: impl Into<String>, message: impl Into<String>) -> Self {
        self.with_cause_reason("FieldValueInvalid", field, message)
    }

    /// Adds a field at fault with a reason of one's own (`FieldValueDuplicate`,
    /// `FieldValueRequired` …).
    pub fn with_cause_reason(
        mut self,
        reason: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        self.causes.push(StatusCause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        });
        self
    }

    /// Adds a warning.
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Sets the HTTP code (default 403, or 422 for [`invalid`](Self::invalid)).
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }
}

/// Validates objects of kind `K` (controller-runtime's `CustomValidator`). Each method
/// defaults to allowing; the webhook configuration's `operations` decide which are called.
///
/// ```
/// use kube_controller_runtime::webhook::admission::{Denial, Request, ValidationResult, Validator};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct NoEmpty;
/// impl Validator<ConfigMap> for NoEmpty {
///     async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
///         match &cm.data {
///             Some(d) if !d.is_empty() => Ok(vec![]),
///             _ => Err(Denial::invalid("a ConfigMap needs data").with_cause("data", "empty")),
///         }
///     }
///     async fn validate_update(&self, req: &Request, _old: &ConfigMap, new: &ConfigMap) -> ValidationResult {
///         self.validate_create(req, new).await
///     }
/// }
/// ```
pub trait Validator<K>: Send + Sync + 'static {
    /// A `CREATE` of `obj`.
    fn validate_create(
        &self,
        req: &Request,
        obj: &K,
    ) -> impl Future<Output = ValidationResult> + Send {
        let _ = (req, obj);
        async { Ok(Vec::new()) }
    }

    /// An `UPDATE` from `old` to `new`.
    fn validate_update(
        &self,
        req: &Request,
        old: &K,
        new: &K,
    ) -> impl Future<Output = ValidationResult> + Send {
        let _ = (req, old, new);
        async { Ok(Vec::new()) }
    }

    /// A `DELETE` of `obj` (the object as stored).
    fn validate_delete(
        &self,
        req: &Request,
        obj: &K,
    ) -> impl Future<Output = ValidationResult> + Send {
        let _ = (req, obj);
        async { Ok(Vec::new()) }
    }
}

/// Sets defaults on objects of kind `K` (controller-runtime's `CustomDefaulter`), on `CREATE`
/// and `UPDATE` (never on `DELETE` or `CONNECT`, which are allowed unchanged). The answer is the
/// JSON patch from the object received to the object after `default`.
///
/// ```
/// use kube_controller_runtime::webhook::admission::{Defaulter, Denial, Request};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct Team(String);
/// impl Defaulter<ConfigMap> for Team {
///     async fn default(&self, _req: &Request, cm: &mut ConfigMap) -> Result<(), Denial> {
///         cm.metadata.labels.get_or_insert_default()
///             .entry("team".into()).or_insert_with(|| self.0.clone());
///         Ok(())
///     }
/// }
/// ```
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Sets the defaults on `obj`; a [`Denial`] refuses the request.
    fn default(
        &self,
        req: &Request,
        obj: &mut K,
    ) -> impl Future<Output = Result<(), Denial>> + Send;
}

/// An admission handler of any kind (controller-runtime's `admission.Handler`): the typed
/// [`Validator`]s and [`Defaulter`]s are served as one, and a handler of one's own can be
/// registered at any path with [`WebhookServer::register`](super::WebhookServer::register).
/// Panics are caught by the server and answered as errors.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request (the response's `uid` is filled in by the server).
    fn handle<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, AdmissionResponse>;
}

/// An allowed response to `req`.
pub fn allowed(req: &Request) -> AdmissionResponse {
    AdmissionResponse::from(req)
}

/// A response refusing `req` with `denial`.
pub fn denied(req: &Request, denial: Denial) -> AdmissionResponse {
    let mut resp = AdmissionResponse::from(req);
    resp.allowed = false;
    resp.result = Status {
        status: Some(StatusSummary::Failure),
        code: denial.code,
        message: denial.message,
        metadata: None,
        reason: denial.reason,
        // As apimachinery's NewInvalid fills them, so kubectl says `The Mydemo "b" is invalid`.
        details: (!denial.causes.is_empty()).then(|| StatusDetails {
            name: req.name.clone(),
            group: req.kind.group.clone(),
            kind: req.kind.kind.clone(),
            uid: String::new(),
            causes: denial.causes,
            retry_after_seconds: 0,
        }),
    };
    if !denial.warnings.is_empty() {
        resp.warnings = Some(denial.warnings);
    }
    resp
}

/// A response saying `req` could not be handled (controller-runtime's `Errored`): not allowed,
/// with `code` and `message`.
pub fn errored(req: &Request, code: u16, message: impl Into<String>) -> AdmissionResponse {
    let mut resp = AdmissionResponse::from(req);
    resp.allowed = false;
    resp.result = Status::failure(&message.into(), "").with_code(code);
    resp
}

/// Serves a [`Validator`] of `K` as a [`Handler`].
pub(crate) struct ValidatingHandler<K, V> {
    validator: Arc<V>,
    kind: WebhookKind,
    _k: PhantomData<fn() -> K>,
}

impl<K, V> ValidatingHandler<K, V> {
    pub(crate) fn new(validator: Arc<V>, kind: WebhookKind) -> Self {
        ValidatingHandler {
            validator,
            kind,
            _k: PhantomData,
        }
    }
}

/// Serves a [`Defaulter`] of `K` as a [`Handler`].
pub(crate) struct DefaultingHandler<K, D> {
    defaulter: Arc<D>,
    kind: WebhookKind,
    _k: PhantomData<fn() -> K>,
}

impl<K, D> DefaultingHandler<K, D> {
    pub(crate) fn new(defaulter: Arc<D>, kind: WebhookKind) -> Self {
        DefaultingHandler {
            defaulter,
            kind,
            _k: PhantomData,
        }
    }
}

/// The object of `field` (`object` or `oldObject`) decoded as `K`, with its JSON as received;
/// or why not (a code-400 answer).
fn decode<K: DeserializeOwned>(
    req: &Request,
    obj: Option<&DynamicObject>,
    field: &str,
) -> Result<(K, Value), String> {
    let Some(obj) = obj else {
        return Err(format!(
            "the {} request has no {field}",
            operation_name(&req.operation)
        ));
    };
    let raw = serde_json::to_value(obj).map_err(|e| format!("cannot read {field}: {e}"))?;
    let typed =
        serde_json::from_value(raw.clone()).map_err(|e| format!("cannot decode {field}: {e}"))?;
    Ok((typed, raw))
}

fn operation_name(op: &Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

impl<K, V> Handler for ValidatingHandler<K, V>
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: Validator<K>,
{
    fn handle<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, AdmissionResponse> {
        async move {
            if let Some(wrong) = self.kind.refuse(req) {
                return wrong;
            }
            let result = match req.operation {
                Operation::Create => {
                    let obj: K = match decode(req, req.object.as_ref(), "object") {
                        Ok((o, _)) => o,
                        Err(e) => return errored(req, 400, e),
                    };
                    self.validator.validate_create(req, &obj).await
                }
                Operation::Update => {
                    let new: K = match decode(req, req.object.as_ref(), "object") {
                        Ok((o, _)) => o,
                        Err(e) => return errored(req, 400, e),
                    };
                    let old: K = match decode(req, req.old_object.as_ref(), "oldObject") {
                        Ok((o, _)) => o,
                        Err(e) => return errored(req, 400, e),
                    };
                    self.validator.validate_update(req, &old, &new).await
                }
                Operation::Delete => {
                    let old: K = match decode(req, req.old_object.as_ref(), "oldObject") {
                        Ok((o, _)) => o,
                        Err(e) => return errored(req, 400, e),
                    };
                    self.validator.validate_delete(req, &old).await
                }
                Operation::Connect => {
                    return errored(req, 400, "unknown operation \"CONNECT\"");
                }
            };
            match result {
                Ok(warnings) => {
                    let mut resp = allowed(req);
                    if !warnings.is_empty() {
                        resp.warnings = Some(warnings);
                    }
                    resp
                }
                Err(denial) => denied(req, denial),
            }
        }
        .boxed()
    }
}

impl<K, D> Handler for DefaultingHandler<K, D>
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: Defaulter<K>,
{
    fn handle<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, AdmissionResponse> {
        async move {
            if let Some(wrong) = self.kind.refuse(req) {
                return wrong;
            }
            if !matches!(req.operation, Operation::Create | Operation::Update) {
                return allowed(req);
            }
            let (mut obj, raw): (K, Value) = match decode(req, req.object.as_ref(), "object") {
                Ok(d) => d,
                Err(e) => return errored(req, 400, e),
            };
            // The object as the type sees it, before any default: what the type alone changes
            // (fields it does not know, values it writes differently) is no default.
            let typed_before = match serde_json::to_value(&obj) {
                Ok(v) => v,
                Err(e) => return errored(req, 500, format!("cannot encode object: {e}")),
            };
            if let Err(denial) = self.defaulter.default(req, &mut obj).await {
                return denied(req, denial);
            }
            let after = match serde_json::to_value(&obj) {
                Ok(v) => v,
                Err(e) => return errored(req, 500, format!("cannot encode object: {e}")),
            };
            let as_typed = |v: &Value| {
                serde_json::from_value::<K>(v.clone())
                    .ok()
                    .and_then(|k| serde_json::to_value(&k).ok())
            };
            let patch = defaulting_patch(&raw, &typed_before, &after, as_typed);
            if patch.0.is_empty() {
                return allowed(req);
            }
            match allowed(req).with_patch(patch) {
                Ok(resp) => resp,
                Err(e) => errored(req, 500, e.to_string()),
            }
        }
        .boxed()
    }
}

/// The JSON patch from `raw` (the object received) to `after` (the defaulted object), without
/// the operations that only the typed view accounts for (`raw` → `typed_before`: fields the
/// type does not know, values it writes differently) when the rest gives `after` as the type
/// reads it (`as_typed`, a decode and encode through the type). Otherwise the whole diff but
/// its removals of what the type does not know — controller-runtime's `dropSchemeRemovals`:
/// a field the type lacks (`apiVersion` and `kind` of a type without `TypeMeta`, a newer
/// schema's field) is never removed by a defaulter.
pub(crate) fn defaulting_patch(
    raw: &Value,
    typed_before: &Value,
    after: &Value,
    as_typed: impl Fn(&Value) -> Option<Value>,
) -> json_patch::Patch {
    let full = json_patch::diff(raw, after);
    let typed_only = json_patch::diff(raw, typed_before);
    if typed_only.0.is_empty() {
        return full;
    }
    let kept: Vec<_> = full
        .0
        .iter()
        .filter(|op| !typed_only.0.contains(op))
        .cloned()
        .collect();
    let mut patched = raw.clone();
    if json_patch::patch(&mut patched, &kept).is_ok()
        && (strip_unknown(&patched, after) == *after || as_typed(&patched).as_ref() == Some(after))
    {
        return json_patch::Patch(kept);
    }
    json_patch::Patch(
        full.0
            .into_iter()
            .filter(|op| {
                !(matches!(op, json_patch::PatchOperation::Remove(_)) && typed_only.0.contains(op))
            })
            .collect(),
    )
}

/// `v` restricted to the object keys `shape` has (arrays element-wise): `v` as a type that
/// wrote `shape` would read it, for comparing a patched raw object with a typed one.
fn strip_unknown(v: &Value, shape: &Value) -> Value {
    match (v, shape) {
        (Value::Object(m), Value::Object(s)) => Value::Object(
            m.iter()
                .filter_map(|(k, x)| s.get(k).map(|sx| (k.clone(), strip_unknown(x, sx))))
                .collect(),
        ),
        (Value::Array(a), Value::Array(s)) if a.len() == s.len() => Value::Array(
            a.iter()
                .zip(s)
                .map(|(x, sx)| strip_unknown(x, sx))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// The review's `apiVersion` and `kind`, defaulting to `admission.k8s.io/v1`.
pub(crate) fn review_types(types: Option<TypeMeta>) -> TypeMeta {
    match types {
        Some(t) if !t.api_version.is_empty() => TypeMeta {
            kind: if t.kind.is_empty() {
                kube::core::admission::META_KIND.into()
            } else {
                t.kind
            },
            api_version: t.api_version,
        },
        _ => TypeMeta {
            api_version: kube::core::admission::META_API_VERSION_V1.into(),
            kind: kube::core::admission::META_KIND.into(),
        },
    }
}

/// An answer to a body that holds no request: not allowed, code 400, no `uid`.
fn invalid_review(types: TypeMeta, message: String) -> Vec<u8> {
    let mut resp = AdmissionResponse::invalid(&message);
    resp.result = Status::failure(&message, "").with_code(400);
    resp.types = types;
    encode(resp)
}

fn encode(resp: AdmissionResponse) -> Vec<u8> {
    // kube serialises the patch (`Vec<u8>`) as an array of numbers, which Go's decoder reads
    // as a `[]byte` as well as base64 (and kube-rs's own review types read only that).
    match serde_json::to_vec(&resp.into_review()) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "cannot encode an AdmissionReview");
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":500,"message":"cannot encode the response"}}}"#.to_vec()
        }
    }
}

/// Answers one HTTP body: an `AdmissionReview` in, an `AdmissionReview` out. A panic of the
/// handler is answered as code 500 and counted by `on_panic`.
pub(crate) async fn review(handler: &dyn Handler, body: &[u8], on_panic: impl Fn()) -> Vec<u8> {
    if body.is_empty() {
        return invalid_review(review_types(None), "request body is empty".into());
    }
    #[derive(serde::Deserialize)]
    struct Envelope {
        #[serde(flatten)]
        types: Option<TypeMeta>,
        request: Option<Value>,
    }
    let envelope: Envelope = match serde_json::from_slice(body) {
        Ok(e) => e,
        Err(e) => {
            return invalid_review(
                review_types(None),
                format!("cannot decode the AdmissionReview: {e}"),
            );
        }
    };
    let types = review_types(envelope.types);
    if types.kind != kube::core::admission::META_KIND
        || !types.api_version.starts_with("admission.k8s.io/")
    {
        return invalid_review(
            types.clone(),
            format!(
                "expected an admission.k8s.io AdmissionReview, got {} {}",
                types.api_version, types.kind
            ),
        );
    }
    let Some(request) = envelope.request else {
        return invalid_review(types, "the AdmissionReview has no request".into());
    };
    let mut req: Request = match serde_json::from_value(request) {
        Ok(r) => r,
        Err(e) => {
            return invalid_review(
                types,
                format!("cannot decode the AdmissionReview request: {e}"),
            );
        }
    };
    req.types = types;
    let answered = std::panic::AssertUnwindSafe(handler.handle(&req))
        .catch_unwind()
        .await;
    let mut resp = match answered {
        Ok(r) => r,
        Err(panic) => {
            on_panic();
            let what = panic_message(&*panic);
            tracing::error!(uid = %req.uid, kind = %req.kind.kind, name = %req.name, panic = %what, "admission handler panicked");
            errored(&req, 500, format!("panic: {what} [recovered]"))
        }
    };
    resp.uid.clone_from(&req.uid);
    resp.types.clone_from(&req.types);
    tracing::debug!(uid = %req.uid, kind = %req.kind.kind, name = %req.name, allowed = resp.allowed, code = resp.result.code, "admission request answered");
    encode(resp)
}

/// What a panic carried, when it is a string.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_patch_keeps_fields_the_type_does_not_know() {
        let raw = json!({"metadata": {"name": "a"}, "spec": {"x": 1, "unknown": true}});
        let typed = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        let after = json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": 2}});
        let patch = defaulting_patch(&raw, &typed, &after, |_| None);
        let mut patched = raw.clone();
        json_patch::patch(&mut patched, &patch.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            patched,
            json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": 2, "unknown": true}})
        );
    }

    #[test]
    fn a_type_without_type_meta_never_removes_api_version_and_kind() {
        // The object as a server sends it before its own defaults: `suspend` missing, which the
        // type writes (`false`), and `apiVersion`/`kind`, which it does not hold.
        let raw = json!({"apiVersion": "x.io/v1", "kind": "Eru", "spec": {"s": "a"}});
        let typed = json!({"spec": {"s": "a", "suspend": false}});
        let after = json!({"spec": {"s": "a", "suspend": false, "zone": "UTC"}});
        let as_typed = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
            if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
                spec.entry("suspend").or_insert(json!(false));
            }
            Some(v)
        };
        let patch = defaulting_patch(&raw, &typed, &after, as_typed);
        let mut patched = raw.clone();
        json_patch::patch(&mut patched, &patch.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            patched,
            json!({"apiVersion": "x.io/v1", "kind": "Eru", "spec": {"s": "a", "zone": "UTC"}})
        );
        // Without a typed reading that accounts for it, still no removal.
        let patch = defaulting_patch(&raw, &typed, &after, |_| None);
        let mut patched = raw.clone();
        json_patch::patch(&mut patched, &patch.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(patched["apiVersion"], "x.io/v1");
        assert_eq!(patched["spec"]["zone"], "UTC");
    }

    #[test]
    fn a_patch_with_nothing_typed_only_is_the_diff() {
        let raw = json!({"spec": {"x": 1}});
        let after = json!({"spec": {"x": 2}});
        assert_eq!(
            defaulting_patch(&raw, &raw, &after, |_| None),
            json_patch::diff(&raw, &after)
        );
    }
}
