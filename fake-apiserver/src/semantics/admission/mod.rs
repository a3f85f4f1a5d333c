//! Admission webhooks, called as kube-apiserver's `MutatingAdmissionWebhook` and
//! `ValidatingAdmissionWebhook` plugins call them: the registered
//! `MutatingWebhookConfiguration`s in name order, their webhooks in order (and again, once,
//! those with `reinvocationPolicy: IfNeeded` when a later one changed the object), before the
//! write's validation; the `ValidatingWebhookConfiguration`s' webhooks all at once after it.
//!
//! A webhook is called when its `rules` (with `matchPolicy: Equivalent`, another served version
//! of the same resource), `namespaceSelector`, `objectSelector` and `matchConditions` (CEL,
//! through `kube-cel`, with `object`, `oldObject` and `request`) match. It receives an
//! `admission.k8s.io/v1` `AdmissionReview` with the fields kube-apiserver fills; its answer
//! allows, denies (kube-apiserver's `admission webhook "<name>" denied the request: <message>`
//! with the webhook's code, reason and causes) or, for a mutating webhook, patches (a JSON
//! patch); its `warnings` reach the client. A webhook that cannot be called, times out or
//! answers nonsense fails the request with a 500 under `failurePolicy: Fail` and is skipped
//! under `Ignore`. A dry run refuses a webhook whose `sideEffects` is not `None` or
//! `NoneOnDryRun`.
//!
//! `clientConfig.url` is called as given; `clientConfig.service` becomes
//! `https://<name>.<namespace>.svc:<port><path>`, or the address the server's builder maps
//! that Service to (`FakeApiServerBuilder::webhook_service`, envtest's technique): without a
//! mapping the name does not resolve and the call fails as kube-apiserver's would with no
//! Service behind it.
//!
//! `ValidatingAdmissionPolicy`s with their bindings ([`policy`]) are evaluated in the same
//! place, before the validating webhooks, as kube-apiserver's plugin order has them.
//!
//! Nothing here runs when no webhook configuration and no policy binding is stored:
//! [`prepare`] answers `None`.

mod client;
pub(crate) mod conversion;
pub(crate) mod policy;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, go_quote};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object;

const GROUP: &str = "admissionregistration.k8s.io";

/// The operation of a request, as admission names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// One webhook of a stored configuration.
#[derive(Debug, Clone)]
struct Hook {
    spec: Value,
}

impl Hook {
    fn name(&self) -> &str {
        self.spec.get("name").and_then(Value::as_str).unwrap_or("")
    }

    fn str_field(&self, field: &str, default: &'static str) -> String {
        self.spec
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_string()
    }

    fn ignores_failures(&self) -> bool {
        self.str_field("failurePolicy", "Fail") == "Ignore"
    }
}

/// What admission needs from the state, read under its lock: the webhooks, the labels of the
/// request's namespace, the other served versions of the resource.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    mutating: Vec<Hook>,
    validating: Vec<Hook>,
    /// The bindings of stored policies, with their policies and parameters.
    policies: Vec<policy::Bound>,
    /// The request's namespace (`namespaceObject` of the policies).
    namespace_object: Option<Value>,
    namespace_labels: BTreeMap<String, String>,
    versions: Vec<Arc<Resource>>,
    services: Arc<BTreeMap<(String, String, i64), String>>,
    /// The CRD's conversion webhook, through which a webhook registered for another version
    /// (`matchPolicy: Equivalent`) sees the object.
    conversion: Option<conversion::Converter>,
}

/// The webhooks of every stored configuration of `plural` whose rules could match `target`,
/// configurations in name order.
fn hooks_of(st: &State, plural: &str, target: &Resource) -> Vec<Hook> {
    let Some(res) = st.registry.get(GROUP, "v1", plural) else {
        return Vec::new();
    };
    let mut configs = st.all_objects(&res, None);
    if configs.is_empty() {
        return Vec::new();
    }
    configs.sort_by(|a, b| object::name(a).cmp(object::name(b)));
    configs
        .iter()
        .filter_map(|c| c.get("webhooks").and_then(Value::as_array))
        .flatten()
        .filter(|spec| may_match(spec.get("rules"), target))
        .map(|spec| Hook { spec: spec.clone() })
        .collect()
}

/// Whether any of `rules` (a webhook's `rules`, a policy's `resourceRules`) names the group
/// and the resource of `res`, whatever the version, operation, scope or subresource — the
/// cheap part of matching, so that what cannot match is not prepared for.
fn may_match(rules: Option<&Value>, res: &Resource) -> bool {
    let Some(rules) = rules.and_then(Value::as_array) else {
        return false;
    };
    let names = |rule: &Value, field: &str, wanted: &str, whole: bool| {
        rule.get(field).and_then(Value::as_array).is_some_and(|a| {
            a.iter().filter_map(Value::as_str).any(|x| {
                let x = if whole {
                    x
                } else {
                    x.split('/').next().unwrap_or(x)
                };
                x == "*" || x == wanted
            })
        })
    };
    rules.iter().any(|rule| {
        names(rule, "apiGroups", &res.group, true) && names(rule, "resources", &res.plural, false)
    })
}

/// What admission needs for a write of `res` in `namespace`, or `None` when no webhook is
/// registered (the cheap check every write makes) or the resource is one admission never
/// sees (the webhook configurations themselves).
pub(crate) fn prepare(st: &State, res: &Arc<Resource>, namespace: &str) -> Option<Admission> {
    if res.group == GROUP {
        return None;
    }
    // Only what could match the resource at all (its group and resource, at any version,
    // operation or subresource): a write nothing can match costs no dry run.
    let mutating = hooks_of(st, "mutatingwebhookconfigurations", res);
    let validating = hooks_of(st, "validatingwebhookconfigurations", res);
    let mut policies = policy::bound(st, namespace);
    policies.retain(|b| may_match(b.policy.pointer("/matchConstraints/resourceRules"), res));
    if mutating.is_empty() && validating.is_empty() && policies.is_empty() {
        return None;
    }
    let namespace_object = if res.namespaced && !namespace.is_empty() {
        st.registry
            .get("", "v1", "namespaces")
            .and_then(|ns| st.get(&ns, "", namespace))
            .map(|ns| (*ns).clone())
    } else {
        None
    };
    let namespace_labels = namespace_object.as_ref().map(labels_of).unwrap_or_default();
    Some(Admission {
        mutating,
        validating,
        policies,
        namespace_object,
        namespace_labels,
        versions: st.registry.versions_of(&res.group, &res.plural),
        services: st.config.webhook_services.clone(),
        conversion: conversion::webhook_converter(st, res),
    })
}

fn labels_of(obj: &Value) -> BTreeMap<String, String> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// One request as admission sees it (`admission.Attributes`).
#[derive(Debug, Clone)]
pub(crate) struct Attributes {
    pub(crate) operation: Operation,
    pub(crate) res: Arc<Resource>,
    pub(crate) subresource: Option<String>,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) object: Option<Value>,
    pub(crate) old_object: Option<Value>,
    pub(crate) dry_run: bool,
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions`, as the review's `options`.
    pub(crate) options: Value,
}

impl Attributes {
    /// The group, version and kind of the objects as `res` (the request's resource or an
    /// equivalent one) names them: a write through `/scale` carries `autoscaling/v1`
    /// `Scale`s, whatever the resource, a pod's `binding` a `v1` `Binding` and its
    /// `eviction` a `policy/v1` `Eviction`.
    pub(crate) fn kind_in(&self, res: &Resource) -> (String, String, String) {
        let (api_version, kind) = match self.subresource.as_deref() {
            Some("scale") => (crate::semantics::managed::SCALE_API_VERSION, "Scale"),
            Some("binding") if res.builtin == Some(Builtin::Pod) => ("v1", "Binding"),
            Some("eviction") if res.builtin == Some(Builtin::Pod) => ("policy/v1", "Eviction"),
            _ => return (res.group.clone(), res.version.clone(), res.kind.clone()),
        };
        let (group, version) = crate::semantics::resources::split_api_version(api_version);
        (group.into(), version.into(), kind.into())
    }
}

/// Whether `obj` is an object of a subresource's own kind, not of `res`: an
/// `autoscaling/v1` `Scale` (the same in every version of the resource it scales), a
/// `Binding`, an `Eviction`. Such an object is never converted.
fn is_subresource_object(obj: &Value, res: &Resource) -> bool {
    let kind = obj.get("kind").and_then(Value::as_str);
    let is_scale = kind == Some("Scale")
        && obj.get("apiVersion").and_then(Value::as_str)
            == Some(crate::semantics::managed::SCALE_API_VERSION);
    is_scale || kind.is_some_and(|k| k != res.kind)
}

/// The resource a webhook is called for: the request's own, or under `matchPolicy:
/// Equivalent` another served version of it.
struct Invocation {
    res: Arc<Resource>,
}

/// A webhook that failed to be called (kube-apiserver's `ErrCallingWebhook`).
#[derive(Debug)]
struct CallFailure {
    webhook: String,
    reason: String,
}

impl CallFailure {
    fn into_error(self) -> ApiError {
        let message = format!(
            "failed calling webhook {}: {}",
            go_quote(&self.webhook),
            self.reason
        );
        ApiError::internal(&message)
    }
}

/// What one call of a webhook came to.
enum Outcome {
    Allowed { patch: Option<Value> },
    Denied(ApiError),
}

impl Admission {
    /// Calls the matching mutating webhooks in order; the object of `attrs` is patched.
    pub(crate) async fn mutate(
        &self,
        attrs: &mut Attributes,
        warnings: &parking_lot::Mutex<Vec<String>>,
    ) -> ApiResult<()> {
        // For each webhook called: whether the object changed after its call.
        let mut called: Vec<(usize, bool)> = Vec::new();
        for (i, hook) in self.mutating.iter().enumerate() {
            let changed = self.call_mutating(hook, attrs, warnings).await?;
            if let Some(changed) = changed {
                if changed {
                    for c in &mut called {
                        c.1 = true;
                    }
                }
                called.push((i, false));
            }
        }
        // reinvocationPolicy IfNeeded: once more for webhooks that saw an object a later
        // webhook changed.
        for (i, changed_after) in called {
            let hook = &self.mutating[i];
            if changed_after && hook.str_field("reinvocationPolicy", "Never") == "IfNeeded" {
                self.call_mutating(hook, attrs, warnings).await?;
            }
        }
        Ok(())
    }

    /// One mutating webhook: `None` when it does not match, else whether it changed the
    /// object.
    async fn call_mutating(
        &self,
        hook: &Hook,
        attrs: &mut Attributes,
        warnings: &parking_lot::Mutex<Vec<String>>,
    ) -> ApiResult<Option<bool>> {
        let Some((inv, seen)) = self.matches(hook, attrs).await? else {
            return Ok(None);
        };
        match self.call(hook, &inv, &seen, true, warnings).await {
            Ok(Outcome::Denied(e)) => Err(e),
            Ok(Outcome::Allowed { patch: None }) => Ok(Some(false)),
            Ok(Outcome::Allowed { patch: Some(p) }) => {
                let (Some(before), Some(mut patched)) = (attrs.object.clone(), seen.object) else {
                    return Ok(Some(false));
                };
                let ops: json_patch::Patch = serde_json::from_value(p)
                    .map_err(|e| ApiError::internal(format!("JSON Patch: {e}")))?;
                json_patch::patch(&mut patched, &ops)
                    .map_err(|e| ApiError::internal(format!("JSON Patch: {e}")))?;
                let after = if inv.res.version == attrs.res.version {
                    convert(&patched, &attrs.res)
                } else {
                    self.in_version(patched, &attrs.res).await?
                };
                let changed = after != before;
                attrs.object = Some(after);
                Ok(Some(changed))
            }
            Err(f) if hook.ignores_failures() => {
                tracing::warn!(webhook = %f.webhook, reason = %f.reason, "failed calling webhook, failing open");
                Ok(Some(false))
            }
            Err(f) => Err(f.into_error()),
        }
    }

    /// Calls the matching validating webhooks, all at once; the first denial or failure (in
    /// the webhooks' order) is the answer.
    pub(crate) async fn validate(
        &self,
        attrs: &Attributes,
        warnings: &parking_lot::Mutex<Vec<String>>,
    ) -> ApiResult<()> {
        if !self.policies.is_empty() {
            let verdict = policy::evaluate(
                &self.policies,
                attrs,
                &policy::Input {
                    namespace_object: self.namespace_object.as_ref(),
                    versions: &self.versions,
                },
            );
            warnings.lock().extend(verdict.warnings);
            if let Some(e) = verdict.denial {
                return Err(e);
            }
        }
        let mut calls = Vec::new();
        for hook in &self.validating {
            if let Some((inv, seen)) = self.matches(hook, attrs).await? {
                calls.push(
                    async move { (hook, self.call(hook, &inv, &seen, false, warnings).await) },
                );
            }
        }
        for (hook, result) in futures::future::join_all(calls).await {
            match result {
                Ok(Outcome::Allowed { .. }) => {}
                Ok(Outcome::Denied(e)) => return Err(e),
                Err(f) if hook.ignores_failures() => {
                    tracing::warn!(webhook = %f.webhook, reason = %f.reason, "failed calling webhook, failing open");
                }
                Err(f) => return Err(f.into_error()),
            }
        }
        Ok(())
    }

    /// Whether `hook` is called for `attrs`: rules, selectors, then match conditions (whose
    /// errors follow the failure policy); if so, the version it is called for and the request
    /// with its objects in that version.
    async fn matches(
        &self,
        hook: &Hook,
        attrs: &Attributes,
    ) -> ApiResult<Option<(Invocation, Attributes)>> {
        let Some(inv) = self.rule_match(hook, attrs) else {
            return Ok(None);
        };
        if !self.namespace_selected(hook, attrs) || !object_selected(hook, attrs) {
            return Ok(None);
        }
        let mut seen = attrs.clone();
        if inv.res.version != attrs.res.version {
            if let Some(o) = seen.object.take() {
                seen.object = Some(self.in_version(o, &inv.res).await?);
            }
            if let Some(o) = seen.old_object.take() {
                seen.old_object = Some(self.in_version(o, &inv.res).await?);
            }
        }
        match match_conditions(hook, &seen, &inv) {
            Ok(true) => Ok(Some((inv, seen))),
            Ok(false) => Ok(None),
            Err(reason) if hook.ignores_failures() => {
                tracing::warn!(webhook = hook.name(), %reason, "match conditions failed, failing open");
                Ok(None)
            }
            Err(reason) => Err(ApiError::forbidden(
                &attrs.res.group,
                &attrs.res.plural,
                &attrs.name,
                &reason,
            )),
        }
    }

    /// `obj` in `to`'s version: through the CRD's conversion webhook when it has one, else
    /// with its `apiVersion` rewritten (the same schema-less object, as strategy `None`).
    async fn in_version(&self, obj: Value, to: &Arc<Resource>) -> ApiResult<Value> {
        if is_subresource_object(&obj, to) {
            return Ok(obj);
        }
        match &self.conversion {
            Some(c) => c.to_version(obj, to).await,
            None => Ok(convert(&obj, to)),
        }
    }

    fn rule_match(&self, hook: &Hook, attrs: &Attributes) -> Option<Invocation> {
        let rules = hook.spec.get("rules").and_then(Value::as_array)?;
        let matches = |res: &Resource| rules.iter().any(|r| rule_matches(r, attrs, res));
        if matches(&attrs.res) {
            return Some(Invocation {
                res: attrs.res.clone(),
            });
        }
        if hook.str_field("matchPolicy", "Equivalent") != "Equivalent" {
            return None;
        }
        self.versions
            .iter()
            .find(|v| v.version != attrs.res.version && matches(v))
            .map(|v| Invocation { res: v.clone() })
    }

    fn namespace_selected(&self, hook: &Hook, attrs: &Attributes) -> bool {
        let labels = if attrs.res.group.is_empty() && attrs.res.plural == "namespaces" {
            labels_of(
                attrs
                    .object
                    .as_ref()
                    .or(attrs.old_object.as_ref())
                    .unwrap_or(&Value::Null),
            )
        } else if attrs.res.namespaced {
            self.namespace_labels.clone()
        } else {
            return true;
        };
        selector_matches(hook.spec.get("namespaceSelector"), &labels)
    }

    /// Calls one webhook: `Err` when the call itself failed.
    async fn call(
        &self,
        hook: &Hook,
        inv: &Invocation,
        attrs: &Attributes,
        mutating: bool,
        warnings: &parking_lot::Mutex<Vec<String>>,
    ) -> Result<Outcome, CallFailure> {
        let name = hook.name().to_string();
        let fail = |reason: String| CallFailure {
            webhook: name.clone(),
            reason,
        };
        if attrs.dry_run {
            let effects = hook.str_field("sideEffects", "Unknown");
            if effects != "None" && effects != "NoneOnDryRun" {
                return Ok(Outcome::Denied(ApiError::bad_request(format!(
                    "admission webhook {} does not support dry run",
                    go_quote(&name)
                ))));
            }
        }
        let timeout_seconds = hook
            .spec
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(10);
        let url = match self.url(hook, timeout_seconds) {
            Ok(u) => u,
            Err(e) => return Err(fail(e)),
        };
        let ca = hook
            .spec
            .pointer("/clientConfig/caBundle")
            .and_then(Value::as_str)
            .map(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let uid = uuid::Uuid::new_v4().to_string();
        let review = review(&uid, inv, attrs);
        let body = serde_json::to_vec(&review).unwrap_or_default();
        tracing::debug!(webhook = %name, %url, operation = attrs.operation.as_str(), "calling admission webhook");
        let answer = client::post(&url, &ca, body, Duration::from_secs(timeout_seconds))
            .await
            .map_err(|e| fail(format!("failed to call webhook: {e}")))?;
        if !(200..300).contains(&answer.status) {
            return Err(fail(format!(
                "failed to call webhook: the server responded with the status code {} but did not return more information",
                answer.status
            )));
        }
        let parsed: Value = serde_json::from_slice(&answer.body).map_err(|e| {
            fail(format!(
                "failed to call webhook: couldn't get version/kind; json parse error: {e}"
            ))
        })?;
        let response = verify(&parsed, &uid, mutating)
            .map_err(|e| fail(format!("received invalid webhook response: {e}")))?;
        if let Some(ws) = response.get("warnings").and_then(Value::as_array) {
            let mut w = warnings.lock();
            w.extend(ws.iter().filter_map(Value::as_str).map(str::to_string));
        }
        if response.get("allowed").and_then(Value::as_bool) != Some(true) {
            return Ok(Outcome::Denied(denial(&name, response.get("status"))));
        }
        // A `[]byte` as Go decodes it: a base64 string, or an array of numbers.
        let patch_bytes = match response.get("patch") {
            Some(Value::String(p)) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(p)
                    .map_err(|e| fail(format!("received invalid webhook response: {e}")))?,
            ),
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| {
                        fail("received invalid webhook response: patch is no []byte".into())
                    })?,
            ),
            _ => None,
        };
        let patch = match patch_bytes {
            Some(bytes) if mutating => Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| fail(format!("received invalid webhook response: {e}")))?,
            ),
            _ => None,
        };
        Ok(Outcome::Allowed { patch })
    }

    /// The URL the webhook is called at, with kube-apiserver's `?timeout=` query.
    fn url(&self, hook: &Hook, timeout_seconds: u64) -> Result<String, String> {
        let cc = hook.spec.get("clientConfig").unwrap_or(&Value::Null);
        let base = if let Some(url) = cc.get("url").and_then(Value::as_str) {
            url.to_string()
        } else if let Some(svc) = cc.get("service") {
            let s = |f: &str| svc.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
            let (ns, name) = (s("namespace"), s("name"));
            let host = self
                .services
                .get(&(ns.clone(), name.clone(), port))
                .cloned()
                .unwrap_or_else(|| format!("{name}.{ns}.svc:{port}"));
            format!("https://{host}{}", s("path"))
        } else {
            return Err(
                "failed to call webhook: no clientConfig.url or clientConfig.service".into(),
            );
        };
        let sep = if base.contains('?') { '&' } else { '?' };
        Ok(format!("{base}{sep}timeout={timeout_seconds}s"))
    }
}

/// The object as a version's webhook sees it (custom resources convert by their apiVersion).
fn convert(obj: &Value, to: &Resource) -> Value {
    let mut out = obj.clone();
    if is_subresource_object(obj, to) {
        return out;
    }
    if let Some(m) = out.as_object_mut()
        && m.contains_key("apiVersion")
    {
        m.insert("apiVersion".into(), json!(to.api_version()));
    }
    out
}

fn rule_matches(rule: &Value, attrs: &Attributes, res: &Resource) -> bool {
    let list = |f: &str| -> Vec<&str> {
        rule.get(f)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let has = |f: &str, v: &str| list(f).iter().any(|x| *x == "*" || *x == v);
    if !has("operations", attrs.operation.as_str())
        || !has("apiGroups", &res.group)
        || !has("apiVersions", &res.version)
    {
        return false;
    }
    let scope = rule.get("scope").and_then(Value::as_str).unwrap_or("*");
    let scope_ok = match scope {
        "Cluster" => !res.namespaced,
        "Namespaced" => res.namespaced,
        _ => true,
    };
    if !scope_ok {
        return false;
    }
    // `<resource>/*` names the resource and every subresource of it, as kube-apiserver's
    // matcher has it (`"*"` alone: every resource, no subresource).
    let sub = attrs.subresource.as_deref().unwrap_or("");
    list("resources").iter().any(|r| {
        let (rr, rs) = r.split_once('/').unwrap_or((r, ""));
        (rr == "*" || rr == res.plural) && (rs == "*" || rs == sub)
    })
}

fn selector_matches(selector: Option<&Value>, labels: &BTreeMap<String, String>) -> bool {
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return true;
    };
    let parsed: Result<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector, _> =
        serde_json::from_value(sel.clone());
    match parsed
        .ok()
        .and_then(|ls| kube_codegen_apimachinery::labels::Selector::try_from(&ls).ok())
    {
        Some(s) => s.matches(labels),
        None => false,
    }
}

/// Whether a label selector selects everything (absent, or no labels and no expressions).
fn selector_is_empty(sel: Option<&Value>) -> bool {
    let count = |f: &str| {
        sel.and_then(|s| s.get(f)).map_or(0, |v| match v {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        })
    };
    count("matchLabels") == 0 && count("matchExpressions") == 0
}

fn object_selected(hook: &Hook, attrs: &Attributes) -> bool {
    let sel = hook.spec.get("objectSelector");
    if attrs.object.is_none() && attrs.old_object.is_none() {
        // No object (a deletecollection as a whole): only an empty selector selects it.
        return selector_is_empty(sel);
    }
    [attrs.object.as_ref(), attrs.old_object.as_ref()]
        .into_iter()
        .flatten()
        .any(|o| selector_matches(sel, &labels_of(o)))
}

/// `matchConditions`: all must be true. An error (kube-apiserver's wording: `expression
/// '<expression>' resulted in error: <cause>`) is reported for the failure policy.
fn match_conditions(hook: &Hook, attrs: &Attributes, inv: &Invocation) -> Result<bool, String> {
    let Some(conds) = hook.spec.get("matchConditions").and_then(Value::as_array) else {
        return Ok(true);
    };
    if conds.is_empty() {
        return Ok(true);
    }
    let exprs: Vec<kube_cel::VapExpression> = conds
        .iter()
        .map(|c| kube_cel::VapExpression {
            expression: c
                .get("expression")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            message: None,
            message_expression: None,
        })
        .collect();
    let request = kube_cel::AdmissionRequest {
        operation: attrs.operation.as_str().into(),
        username: USER.into(),
        groups: GROUPS.iter().map(|g| g.to_string()).collect(),
        name: attrs.name.clone(),
        namespace: attrs.namespace.clone(),
        dry_run: attrs.dry_run,
        kind: {
            let (group, version, kind) = attrs.kind_in(&inv.res);
            kube_cel::GroupVersionKind {
                group,
                version,
                kind,
            }
        },
        resource: kube_cel::GroupVersionResource {
            group: inv.res.group.clone(),
            version: inv.res.version.clone(),
            resource: inv.res.plural.clone(),
        },
        ..Default::default()
    };
    let mut builder = kube_cel::VapEvaluator::builder().request(request).object(
        attrs
            .object
            .as_ref()
            .map(|o| convert(o, &inv.res))
            .unwrap_or(Value::Null),
    );
    if let Some(old) = &attrs.old_object {
        builder = builder.old_object(convert(old, &inv.res));
    }
    let results = builder.build().evaluate(&exprs);
    let mut error = None;
    for (expr, r) in exprs.iter().zip(&results) {
        if r.passed {
            continue;
        }
        let message = r.message.clone().unwrap_or_default();
        let cause = ["evaluation error: ", "expression returned non-boolean: "]
            .iter()
            .find_map(|p| message.strip_prefix(p).map(str::to_string))
            .or_else(|| {
                message
                    .starts_with("failed to compile")
                    .then(|| message.clone())
            });
        match cause {
            // Go's errors start in lower case.
            Some(cause) if error.is_none() => {
                let mut chars = cause.chars();
                let cause = match chars.next() {
                    Some(c) => c.to_lowercase().chain(chars).collect(),
                    None => cause,
                };
                error = Some(format!(
                    "expression '{}' resulted in error: {cause}",
                    expr.expression
                ));
            }
            Some(_) => {}
            // A false condition: the webhook is not called, whatever errors others had.
            None => return Ok(false),
        }
    }
    match error {
        None => Ok(true),
        Some(e) => Err(e),
    }
}

/// The user the in-memory server's requests run as (it has no authentication).
const USER: &str = "system:admin";
const GROUPS: &[&str] = &["system:masters", "system:authenticated"];

/// The `AdmissionReview` request kube-apiserver sends.
fn review(uid: &str, inv: &Invocation, attrs: &Attributes) -> Value {
    let gvk = |r: &Resource| {
        let (group, version, kind) = attrs.kind_in(r);
        json!({"group": group, "version": version, "kind": kind})
    };
    let gvr = |r: &Resource| json!({"group": r.group, "version": r.version, "resource": r.plural});
    let mut req = serde_json::Map::new();
    req.insert("uid".into(), json!(uid));
    req.insert("kind".into(), gvk(&inv.res));
    req.insert("resource".into(), gvr(&inv.res));
    if let Some(s) = &attrs.subresource {
        req.insert("subResource".into(), json!(s));
    }
    req.insert("requestKind".into(), gvk(&attrs.res));
    req.insert("requestResource".into(), gvr(&attrs.res));
    if let Some(s) = &attrs.subresource {
        req.insert("requestSubResource".into(), json!(s));
    }
    if !attrs.name.is_empty() {
        req.insert("name".into(), json!(attrs.name));
    }
    if !attrs.namespace.is_empty() {
        req.insert("namespace".into(), json!(attrs.namespace));
    }
    req.insert("operation".into(), json!(attrs.operation.as_str()));
    req.insert(
        "userInfo".into(),
        json!({"username": USER, "groups": GROUPS}),
    );
    req.insert(
        "object".into(),
        attrs
            .object
            .as_ref()
            .map_or(Value::Null, |o| convert(o, &inv.res)),
    );
    req.insert(
        "oldObject".into(),
        attrs
            .old_object
            .as_ref()
            .map_or(Value::Null, |o| convert(o, &inv.res)),
    );
    req.insert("dryRun".into(), json!(attrs.dry_run));
    req.insert("options".into(), attrs.options.clone());
    json!({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req})
}

/// The review's `response`, checked as kube-apiserver checks it.
fn verify<'a>(review: &'a Value, uid: &str, mutating: bool) -> Result<&'a Value, String> {
    let api_version = review
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {api_version}, Kind={kind}"
        ));
    }
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!(
            "expected response.uid={}, got {}",
            go_quote(uid),
            go_quote(got)
        ));
    }
    let has_patch = response.get("patch").is_some_and(|p| !p.is_null());
    let patch_type = response.get("patchType").and_then(Value::as_str);
    if mutating && has_patch && patch_type != Some("JSONPatch") {
        return Err(match patch_type {
            None => "webhook returned response.patch but not response.patchType".into(),
            Some(t) => format!(
                "webhook returned invalid response.patchType of {}",
                go_quote(t)
            ),
        });
    }
    if !mutating && (has_patch || patch_type.is_some()) {
        return Err(
            "validating webhook may not return response.patch or response.patchType".into(),
        );
    }
    Ok(response)
}

/// kube-apiserver's error for a denial: the webhook's status, its message prefixed.
fn denial(webhook: &str, status: Option<&Value>) -> ApiError {
    let status = status.cloned().unwrap_or(Value::Null);
    let denied_by = format!("admission webhook {} denied the request", go_quote(webhook));
    let message = status.get("message").and_then(Value::as_str).unwrap_or("");
    let reason = status.get("reason").and_then(Value::as_str).unwrap_or("");
    let text = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let code = status
        .get("code")
        .and_then(Value::as_u64)
        .filter(|c| *c >= 400)
        .unwrap_or(400) as u16;
    let mut err = ApiError::new(code, reason, text);
    if let Some(d) = status.get("details").filter(|d| !d.is_null()) {
        err = err.with_details(d.clone());
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denial_is_worded_as_kube_apiserver_words_it() {
        let e = denial(
            "v.example.com",
            Some(&json!({"message": "no", "code": 422, "reason": "Invalid",
                "details": {"causes": [{"field": "data.x", "message": "bad"}]}})),
        );
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "admission webhook \"v.example.com\" denied the request: no"
        );
        assert_eq!(
            e.details,
            Some(json!({"causes": [{"field": "data.x", "message": "bad"}]}))
        );
        let e = denial("v.example.com", None);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "admission webhook \"v.example.com\" denied the request without explanation"
            )
        );
    }

    #[test]
    fn a_response_for_another_request_or_of_another_kind_is_refused() {
        let r = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "b", "allowed": true}});
        assert!(verify(&r, "a", false).is_err_and(|e| e.contains("expected response.uid")));
        assert!(verify(&r, "b", false).is_ok());
        let r = json!({"apiVersion": "v1", "kind": "Status"});
        assert!(verify(&r, "b", false).is_err());
        let r = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "b", "allowed": true, "patch": "W10="}});
        assert!(verify(&r, "b", true).is_err_and(|e| e.contains("patchType")));
        assert!(verify(&r, "b", false).is_err());
    }
}
