//! `ValidatingAdmissionPolicy` and `ValidatingAdmissionPolicyBinding`
//! (`admissionregistration.k8s.io/v1`), evaluated as kube-apiserver's
//! `ValidatingAdmissionPolicy` plugin evaluates them: after the write's schema validation,
//! before the validating webhooks.
//!
//! Every binding whose policy exists is considered, policies in name order, then their
//! bindings in name order. A pair applies when the policy's `matchConstraints` and the
//! binding's `matchResources` both match (namespace and object selectors, `resourceRules`
//! with `resourceNames`, `excludeResourceRules`, `matchPolicy` Exact or Equivalent). With a
//! `paramKind`, the binding's `paramRef` names one parameter object or selects several (each
//! evaluated); none found is a configuration error under `parameterNotFoundAction: Deny`
//! and no evaluation under `Allow`. The policy's `matchConditions` decide whether it applies,
//! its `variables` are computed in order, then its `validations` are evaluated with CEL
//! (through `kube-cel`'s Kubernetes function library) over `object`, `oldObject`, `request`,
//! `params`, `namespaceObject` and `variables`. A false validation is a decision with its
//! `message` (or `messageExpression`, or `failed expression: …`) and `reason`; an
//! evaluation error is one under `failurePolicy: Fail` and nothing under `Ignore`. Each
//! decision is acted on by the binding's `validationActions`: `Deny` refuses the request with
//! kube-apiserver's words (`ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
//! request: <message>`, the code of the reason), `Warn` adds a `Warning` header, `Audit`
//! only records (the in-memory server has no audit log).
//!
//! The CEL variable `authorizer` is not offered: the in-memory server has no authorizer (its
//! requests run as `system:admin`), so an expression using it fails to evaluate.
//!
//! The policy and binding objects are defaulted and validated on create and update as
//! kube-apiserver does, with expressions that do not compile refused at their field.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube_cel::KubeCelExt;
use kube_cel::cel::{Context, Program, Value as Cel};
use serde_json::{Value, json};

use crate::error::{ApiError, FieldError, go_quote};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::storage::object;

use super::{
    Attributes, GROUP, GROUPS, USER, labels_of, rule_matches, selector_is_empty, selector_matches,
};

/// A binding with its policy and the parameters it refers to, read under the state lock.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    policy_name: String,
    binding_name: String,
    pub(crate) policy: Value,
    binding: Value,
    params: Params,
}

/// The parameters of a binding.
#[derive(Debug, Clone)]
enum Params {
    /// The policy has no `paramKind` (or the binding no `paramRef`): evaluated once, with
    /// `params` null.
    Unused,
    /// The parameter objects found (evaluated once each).
    Found(Vec<Value>),
    /// None found, with the binding's `parameterNotFoundAction`.
    NotFound { deny: bool },
    /// The parameters cannot be looked up (an unknown `paramKind`).
    Error(String),
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// The bindings of stored policies, or none when no binding is stored (the cheap check every
/// write makes).
pub(crate) fn bound(st: &State, namespace: &str) -> Vec<Bound> {
    let Some(bres) = st
        .registry
        .get(GROUP, "v1", "validatingadmissionpolicybindings")
    else {
        return Vec::new();
    };
    let bindings = st.all_objects(&bres, None);
    if bindings.is_empty() {
        return Vec::new();
    }
    let Some(pres) = st.registry.get(GROUP, "v1", "validatingadmissionpolicies") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for b in bindings {
        let policy_name = str_at(&b, "/spec/policyName");
        let Some(policy) = st.get(&pres, "", policy_name) else {
            continue;
        };
        let pspec = policy.get("spec").cloned().unwrap_or(Value::Null);
        let bspec = b.get("spec").cloned().unwrap_or(Value::Null);
        let params = params_of(st, &pspec, &bspec, namespace);
        out.push(Bound {
            policy_name: policy_name.to_string(),
            binding_name: object::name(&b).to_string(),
            policy: pspec,
            binding: bspec,
            params,
        });
    }
    out.sort_by(|a, b| (&a.policy_name, &a.binding_name).cmp(&(&b.policy_name, &b.binding_name)));
    out
}

fn params_of(st: &State, policy: &Value, binding: &Value, namespace: &str) -> Params {
    let Some(kind) = policy.get("paramKind").filter(|k| k.is_object()) else {
        return Params::Unused;
    };
    let Some(pref) = binding.get("paramRef").filter(|r| r.is_object()) else {
        return Params::Error(
            "paramKind is set but paramRef is not (missing paramRef on a policy binding)".into(),
        );
    };
    let api_version = str_at(kind, "/apiVersion");
    let kind_name = str_at(kind, "/kind");
    let Some(res) = st.registry.by_kind(api_version, kind_name) else {
        return Params::Error(format!(
            "failed to find resource referenced by paramKind: '{api_version}, Kind={kind_name}'"
        ));
    };
    let ns = match pref.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => ns,
        _ if res.namespaced => namespace,
        _ => "",
    };
    let ns = if res.namespaced { ns } else { "" };
    let found: Vec<Value> = match pref.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => st
            .get(&res, ns, name)
            .map(|o| vec![(*o).clone()])
            .unwrap_or_default(),
        _ => {
            let sel = pref.get("selector");
            let scope = res.namespaced.then_some(ns);
            let mut objs: Vec<Value> = st
                .all_objects(&res, scope)
                .into_iter()
                .filter(|o| selector_matches(sel, &labels_of(o)))
                .map(|o| (*o).clone())
                .collect();
            objs.sort_by(|a, b| object::name(a).cmp(object::name(b)));
            objs
        }
    };
    if found.is_empty() {
        Params::NotFound {
            deny: str_at(pref, "/parameterNotFoundAction") != "Allow",
        }
    } else {
        Params::Found(found)
    }
}

/// What evaluating the bindings came to: warnings for the client and the first denial.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) warnings: Vec<String>,
    pub(crate) denial: Option<ApiError>,
}

/// One decision of a policy: a validation that was false or failed.
struct Decision {
    message: String,
    reason: String,
}

/// The request as the policies see it: the namespace's labels and object, the served
/// versions of the resource (for `matchPolicy: Equivalent`).
pub(crate) struct Input<'a> {
    pub(crate) namespace_object: Option<&'a Value>,
    pub(crate) versions: &'a [Arc<Resource>],
}

/// Evaluates every binding for `attrs`.
pub(crate) fn evaluate(bound: &[Bound], attrs: &Attributes, cx: &Input<'_>) -> Verdict {
    let mut verdict = Verdict::default();
    for b in bound {
        let Some(res) = matched(&b.policy, &b.binding, attrs, cx) else {
            continue;
        };
        let fail_closed = str_at(&b.policy, "/failurePolicy") != "Ignore";
        let actions: Vec<&str> = b
            .binding
            .get("validationActions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let decisions: Vec<Decision> = match &b.params {
            Params::Unused => run(&b.policy, attrs, &res, cx, None, fail_closed),
            Params::Found(ps) => ps
                .iter()
                .flat_map(|p| run(&b.policy, attrs, &res, cx, Some(p), fail_closed))
                .collect(),
            Params::NotFound { deny: false } => Vec::new(),
            Params::NotFound { deny: true } | Params::Error(_) => {
                // A configuration error: denied under failurePolicy Fail, whatever the
                // binding's actions.
                let why = match &b.params {
                    Params::Error(e) => e.clone(),
                    _ => "no params found for policy binding with `Deny` parameterNotFoundAction"
                        .into(),
                };
                if fail_closed && verdict.denial.is_none() {
                    verdict.denial = Some(denial(
                        b,
                        attrs,
                        &Decision {
                            message: format!("failed to configure binding: {why}"),
                            reason: "Invalid".into(),
                        },
                    ));
                }
                continue;
            }
        };
        for d in decisions {
            for action in &actions {
                match *action {
                    "Deny" if verdict.denial.is_none() => {
                        verdict.denial = Some(denial(b, attrs, &d));
                    }
                    "Warn" => verdict.warnings.push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                        b.policy_name, b.binding_name, d.message
                    )),
                    _ => {}
                }
            }
        }
    }
    verdict
}

fn denial(b: &Bound, attrs: &Attributes, d: &Decision) -> ApiError {
    let text = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
        b.policy_name, b.binding_name, d.message
    );
    // As admission.NewForbidden names it: the request's name, else the object's, else
    // "Unknown" (a deletecollection's objects are admitted without a name).
    let name = [
        Some(attrs.name.as_str()),
        attrs.object.as_ref().map(object::name),
    ]
    .into_iter()
    .flatten()
    .find(|n| !n.is_empty())
    .unwrap_or("Unknown");
    let mut e = ApiError::forbidden(&attrs.res.group, &attrs.res.plural, name, &text);
    let (code, reason) = match d.reason.as_str() {
        "Forbidden" => (403, "Forbidden"),
        "RequestEntityTooLarge" => (413, "RequestEntityTooLarge"),
        "Unauthorized" => (401, "Unauthorized"),
        _ => (422, "Invalid"),
    };
    e.code = code;
    e.reason = reason.to_string();
    if let Some(Value::Object(m)) = e.details.as_mut() {
        m.insert("causes".into(), json!([{"message": text}]));
    }
    e
}

/// The resource the pair matches `attrs` as (the request's own, or under `matchPolicy:
/// Equivalent` another served version), if both the policy and the binding match.
fn matched(
    policy: &Value,
    binding: &Value,
    attrs: &Attributes,
    cx: &Input<'_>,
) -> Option<Arc<Resource>> {
    let res = criteria_match(policy.get("matchConstraints")?, attrs, cx)?;
    match binding.get("matchResources").filter(|m| m.is_object()) {
        Some(m) => criteria_match(m, attrs, cx).map(|_| res),
        None => Some(res),
    }
}

/// `MatchResources`: selectors, exclusions, then rules (none: everything).
fn criteria_match(m: &Value, attrs: &Attributes, cx: &Input<'_>) -> Option<Arc<Resource>> {
    let ns_labels = if attrs.res.group.is_empty() && attrs.res.plural == "namespaces" {
        Some(labels_of(
            attrs
                .object
                .as_ref()
                .or(attrs.old_object.as_ref())
                .unwrap_or(&Value::Null),
        ))
    } else if attrs.res.namespaced {
        Some(cx.namespace_object.map(labels_of).unwrap_or_default())
    } else {
        None
    };
    if let Some(labels) = ns_labels
        && !selector_matches(m.get("namespaceSelector"), &labels)
    {
        return None;
    }
    let obj_sel = m.get("objectSelector");
    let objects = [attrs.object.as_ref(), attrs.old_object.as_ref()];
    let selected = if objects.iter().all(Option::is_none) {
        selector_is_empty(obj_sel)
    } else {
        objects
            .into_iter()
            .flatten()
            .any(|o| selector_matches(obj_sel, &labels_of(o)))
    };
    if !selected {
        return None;
    }
    let rules_of = |f: &str| -> Vec<Value> {
        m.get(f)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let equivalent = str_at(m, "/matchPolicy") != "Exact";
    let find = |rules: &[Value]| -> Option<Arc<Resource>> {
        let hit = |res: &Resource| {
            rules
                .iter()
                .any(|r| rule_matches(r, attrs, res) && names_match(r, &attrs.name))
        };
        if hit(&attrs.res) {
            return Some(attrs.res.clone());
        }
        if !equivalent {
            return None;
        }
        cx.versions
            .iter()
            .find(|v| v.version != attrs.res.version && hit(v))
            .cloned()
    };
    if find(&rules_of("excludeResourceRules")).is_some() {
        return None;
    }
    let rules = rules_of("resourceRules");
    if rules.is_empty() {
        return Some(attrs.res.clone());
    }
    find(&rules)
}

fn names_match(rule: &Value, name: &str) -> bool {
    match rule.get("resourceNames").and_then(Value::as_array) {
        Some(names) if !names.is_empty() => names.iter().any(|n| n.as_str() == Some(name)),
        _ => true,
    }
}

fn to_cel(v: &Value) -> Cel {
    kube_cel::cel::to_value(v).unwrap_or(Cel::Null)
}

/// The object as `res`'s version sees it (custom resources convert by their apiVersion).
fn in_version(obj: Option<&Value>, res: &Resource) -> Value {
    obj.map_or(Value::Null, |o| super::convert(o, res))
}

/// The `request` variable.
fn request(attrs: &Attributes, res: &Resource) -> Value {
    let gvk = |r: &Resource| {
        let (group, version, kind) = attrs.kind_in(r);
        json!({"group": group, "version": version, "kind": kind})
    };
    let gvr = |r: &Resource| json!({"group": r.group, "version": r.version, "resource": r.plural});
    let mut req = json!({
        "kind": gvk(res), "resource": gvr(res),
        "requestKind": gvk(&attrs.res), "requestResource": gvr(&attrs.res),
        "name": attrs.name, "namespace": attrs.namespace,
        "operation": attrs.operation.as_str(),
        "userInfo": {"username": USER, "groups": GROUPS},
        "dryRun": attrs.dry_run, "options": attrs.options,
    });
    if let Some(s) = &attrs.subresource {
        req["subResource"] = json!(s);
        req["requestSubResource"] = json!(s);
    }
    req
}

/// Go's errors start in lower case.
fn go_error(e: &impl std::fmt::Display) -> String {
    let s = e.to_string();
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => s,
    }
}

/// Runs one policy with one parameter: its decisions (none when its match conditions are
/// false).
fn run(
    policy: &Value,
    attrs: &Attributes,
    res: &Resource,
    cx: &Input<'_>,
    params: Option<&Value>,
    fail_closed: bool,
) -> Vec<Decision> {
    let mut ctx = Context::default();
    ctx.register_all();
    ctx.add_variable_from_value("object", to_cel(&in_version(attrs.object.as_ref(), res)));
    ctx.add_variable_from_value(
        "oldObject",
        to_cel(&in_version(attrs.old_object.as_ref(), res)),
    );
    ctx.add_variable_from_value("request", to_cel(&request(attrs, res)));
    ctx.add_variable_from_value("params", params.map_or(Cel::Null, to_cel));
    ctx.add_variable_from_value(
        "namespaceObject",
        cx.namespace_object.map_or(Cel::Null, to_cel),
    );
    let eval = |ctx: &Context, expr: &str| -> Result<Cel, String> {
        let program = Program::compile(expr).map_err(|e| go_error(&e))?;
        program.execute(ctx).map_err(|e| go_error(&e))
    };
    let error_decision = |expr: &str, cause: &str| Decision {
        message: format!("expression '{expr}' resulted in error: {cause}"),
        reason: "Invalid".into(),
    };
    // matchConditions: all true to apply; a false one wins over errors.
    let mut cond_error = None;
    for c in policy
        .get("matchConditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let expr = str_at(c, "/expression");
        match eval(&ctx, expr) {
            Ok(Cel::Bool(true)) => {}
            Ok(Cel::Bool(false)) => return Vec::new(),
            Ok(other) => {
                cond_error.get_or_insert_with(|| {
                    error_decision(expr, &format!("no matching overload: {other:?}"))
                });
            }
            Err(e) => {
                cond_error.get_or_insert_with(|| error_decision(expr, &e));
            }
        }
    }
    if let Some(d) = cond_error {
        return if fail_closed { vec![d] } else { Vec::new() };
    }
    // variables, in order, each seeing those before it.
    let mut var_values: std::collections::HashMap<kube_cel::cel::objects::Key, Cel> =
        std::collections::HashMap::new();
    let mut var_errors: BTreeMap<String, String> = BTreeMap::new();
    for v in policy
        .get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = str_at(v, "/name").to_string();
        let expr = str_at(v, "/expression");
        ctx.add_variable_from_value(
            "variables",
            Cel::Map(kube_cel::cel::objects::Map {
                map: Arc::new(var_values.clone()),
            }),
        );
        match eval(&ctx, expr) {
            Ok(value) => {
                var_values.insert(kube_cel::cel::objects::Key::String(Arc::new(name)), value);
            }
            Err(e) => {
                var_errors.insert(name, error_decision(expr, &e).message);
            }
        }
    }
    ctx.add_variable_from_value(
        "variables",
        Cel::Map(kube_cel::cel::objects::Map {
            map: Arc::new(var_values),
        }),
    );
    let mut decisions = Vec::new();
    for v in policy
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let expr = str_at(v, "/expression");
        let reason = v
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("Invalid")
            .to_string();
        // An expression using a variable that failed fails with that variable's error.
        if let Some(msg) = var_errors
            .iter()
            .find(|(n, _)| expr.contains(&format!("variables.{n}")))
            .map(|(_, m)| m.clone())
        {
            if fail_closed {
                decisions.push(Decision {
                    message: msg,
                    reason: "Invalid".into(),
                });
            }
            continue;
        }
        match eval(&ctx, expr) {
            Ok(Cel::Bool(true)) => {}
            Ok(Cel::Bool(false)) => {
                let from_expression = v
                    .get("messageExpression")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .and_then(|m| match eval(&ctx, m) {
                        Ok(Cel::String(s)) if !s.trim().is_empty() && !s.contains('\n') => {
                            Some(s.to_string())
                        }
                        _ => None,
                    });
                let message = from_expression
                    .or_else(|| {
                        v.get("message")
                            .and_then(Value::as_str)
                            .filter(|m| !m.is_empty())
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| format!("failed expression: {}", expr.trim()));
                decisions.push(Decision { message, reason });
            }
            Ok(other) => {
                if fail_closed {
                    decisions.push(error_decision(
                        expr,
                        &format!("expected bool, got {}", cel_type(&other)),
                    ));
                }
            }
            Err(e) => {
                if fail_closed {
                    decisions.push(error_decision(expr, &e));
                }
            }
        }
    }
    decisions
}

fn cel_type(v: &Cel) -> &'static str {
    match v {
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::String(_) => "string",
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Null => "null_type",
        _ => "value",
    }
}

// --- The objects themselves: defaults and validation on create and update. ---

fn default_rules(rules: Option<&mut Value>) {
    if let Some(Value::Array(rules)) = rules {
        for r in rules.iter_mut().filter_map(Value::as_object_mut) {
            r.entry("scope").or_insert(json!("*"));
        }
    }
}

fn default_match_resources(m: &mut serde_json::Map<String, Value>) {
    m.entry("namespaceSelector").or_insert(json!({}));
    m.entry("objectSelector").or_insert(json!({}));
    m.entry("matchPolicy").or_insert(json!("Equivalent"));
    default_rules(m.get_mut("resourceRules"));
    default_rules(m.get_mut("excludeResourceRules"));
}

/// kube-apiserver's defaults of a `ValidatingAdmissionPolicy` (`SetDefaults_*`).
pub(crate) fn policy_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.entry("failurePolicy").or_insert(json!("Fail"));
    if let Some(Value::Object(m)) = spec.get_mut("matchConstraints") {
        default_match_resources(m);
    }
}

/// kube-apiserver's defaults of a `ValidatingAdmissionPolicyBinding`.
pub(crate) fn binding_defaults(obj: &mut Value) {
    if let Some(Value::Object(m)) = obj.pointer_mut("/spec/matchResources") {
        default_match_resources(m);
    }
}

/// A CEL expression at `field`: required, and it must compile.
fn check_expression(field: &str, expr: Option<&Value>, errs: &mut Vec<FieldError>) {
    let expr = expr.and_then(Value::as_str).unwrap_or("");
    if expr.trim().is_empty() {
        errs.push(FieldError::required(field, "expression is not specified"));
        return;
    }
    if let Err(e) = Program::compile(expr) {
        let source = e.to_string().replace("\n| ", "\n | ");
        let source = if source.starts_with("ERROR: ") {
            source
        } else {
            format!("ERROR: {source}")
        };
        errs.push(FieldError::invalid_str(
            field,
            expr,
            format!("compilation failed: {source}"),
        ));
    }
}

fn check_one_of(field: &str, v: Option<&Value>, allowed: &[&str], errs: &mut Vec<FieldError>) {
    if let Some(s) = v.and_then(Value::as_str)
        && !allowed.contains(&s)
    {
        errs.push(FieldError::not_supported(field, s, allowed));
    }
}

fn items<'a>(v: &'a Value, field: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    v.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

/// kube-apiserver's validation of a `ValidatingAdmissionPolicy`'s spec.
pub(crate) fn validate_policy(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    check_one_of(
        "spec.failurePolicy",
        spec.get("failurePolicy"),
        &["Fail", "Ignore"],
        &mut errs,
    );
    if spec.get("matchConstraints").is_none_or(Value::is_null) {
        errs.push(FieldError::required("spec.matchConstraints", ""));
    }
    for (i, c) in items(spec, "matchConditions") {
        check_expression(
            &format!("spec.matchConditions[{i}].expression"),
            c.get("expression"),
            &mut errs,
        );
    }
    for (i, v) in items(spec, "variables") {
        check_expression(
            &format!("spec.variables[{i}].expression"),
            v.get("expression"),
            &mut errs,
        );
    }
    let has = |f: &str| {
        spec.get(f)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    if !has("validations") && !has("auditAnnotations") {
        for f in ["spec.validations", "spec.auditAnnotations"] {
            errs.push(FieldError::required(
                f,
                "validations or auditAnnotations must contain at least one item",
            ));
        }
    }
    for (i, v) in items(spec, "validations") {
        check_expression(
            &format!("spec.validations[{i}].expression"),
            v.get("expression"),
            &mut errs,
        );
        if let Some(me) = v
            .get("messageExpression")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            check_expression(
                &format!("spec.validations[{i}].messageExpression"),
                Some(&json!(me)),
                &mut errs,
            );
        }
        check_one_of(
            &format!("spec.validations[{i}].reason"),
            v.get("reason"),
            &["Forbidden", "Invalid", "RequestEntityTooLarge"],
            &mut errs,
        );
    }
    errs
}

/// kube-apiserver's validation of a `ValidatingAdmissionPolicyBinding`'s spec.
pub(crate) fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    if str_at(spec, "/policyName").is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    }
    if let Some(pr) = spec.get("paramRef").filter(|p| p.is_object()) {
        let named = !str_at(pr, "/name").is_empty();
        if named && pr.get("selector").is_some_and(|s| !s.is_null()) {
            for f in ["spec.paramRef.name", "spec.paramRef.selector"] {
                errs.push(FieldError::forbidden(
                    f,
                    "name and selector are mutually exclusive",
                ));
            }
        }
        match pr.get("parameterNotFoundAction").and_then(Value::as_str) {
            None => errs.push(FieldError::required(
                "spec.paramRef.parameterNotFoundAction",
                "",
            )),
            Some(a) => check_one_of(
                "spec.paramRef.parameterNotFoundAction",
                Some(&json!(a)),
                &["Deny", "Allow"],
                &mut errs,
            ),
        }
    }
    let actions: Vec<&Value> = items(spec, "validationActions").map(|(_, a)| a).collect();
    if actions.is_empty() {
        errs.push(FieldError::required("spec.validationActions", ""));
    }
    let mut seen = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let s = a.as_str().unwrap_or("");
        let field = format!("spec.validationActions[{i}]");
        if !["Audit", "Deny", "Warn"].contains(&s) {
            errs.push(FieldError::not_supported(
                field,
                s,
                &["Audit", "Deny", "Warn"],
            ));
        } else if seen.contains(&s) {
            errs.push(FieldError::duplicate(field, go_quote(s)));
        }
        seen.push(s);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        let rendered = format!(
            "[{}]",
            seen.iter()
                .map(|s| go_quote(s))
                .collect::<Vec<_>>()
                .join(",")
        );
        errs.push(FieldError::invalid(
            "spec.validationActions",
            rendered,
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_that_do_not_compile_are_refused_at_their_field() {
        let p = json!({"spec": {"matchConstraints": {}, "validations": [
            {"expression": "object.x =="}, {"expression": "true", "messageExpression": "'a' +"},
            {"expression": "", "reason": "Teapot"}]}});
        let got: Vec<String> = validate_policy(&p)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        assert_eq!(
            got,
            vec![
                "spec.validations[0].expression",
                "spec.validations[1].messageExpression",
                "spec.validations[2].expression",
                "spec.validations[2].reason",
            ]
        );
    }

    #[test]
    fn a_binding_may_not_both_deny_and_warn() {
        let b = json!({"spec": {"policyName": "p", "validationActions": ["Deny", "Warn"]}});
        let errs = validate_binding(&b);
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0]
                .to_string()
                .contains("must not contain both Deny and Warn")
        );
    }
}
