//! ValidatingAdmissionPolicies and their bindings on the in-memory server against
//! kube-apiserver v1.37.1: both servers get the same policies (one per scenario, matching the
//! namespaces labelled with that scenario), the same bindings, parameter ConfigMaps and
//! requests; the answers (status, reason, message, causes, `Warning` headers, the object's
//! data) are normalised and compared scenario by scenario. Policies that kube-apiserver refuses
//! to store (an expression that does not compile, Deny with Warn) are compared too.
//!
//! kube-apiserver applies a new policy or binding once its informers have seen it: the test
//! creates a sentinel policy and binding after all others and polls (bounded) with a dry-run
//! create until the sentinel denies, by which time the earlier ones are in effect as well.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube_codegen_runtime::fake::FakeApiServer;
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::e2e::{init_tracing, run_id};
use tests::fake_vs_real::{self, Answer, refusal_summary, warnings_summary};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// Sends a request (a merge patch for PATCH), panicking when no answer comes.
async fn send(client: &kube::Client, method: &str, path: &str, body: Option<Value>) -> Answer {
    let content_type = if method == "PATCH" {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    ok(fake_vs_real::send(client, method, path, content_type, body).await)
}

/// The run id out of a text, and the detail of a CEL compiler's error (cel-go's and the
/// in-memory server's parsers word syntax errors differently; the field, the expression and
/// "compilation failed" are compared): from "compilation failed: " to the end of the quoted
/// JSON string or of the text.
fn normalise(s: &str, run: &str) -> String {
    const COMPILE: &str = "compilation failed: ";
    let s = s.replace(run, "RUN");
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find(COMPILE) {
        out.push_str(&rest[..i + COMPILE.len()]);
        out.push('…');
        rest = &rest[i + COMPILE.len()..];
        let bytes = rest.as_bytes();
        let end = (0..bytes.len())
            .find(|&j| bytes[j] == b'"' && (j == 0 || bytes[j - 1] != b'\\'))
            .unwrap_or(bytes.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn summary(a: &Answer, run: &str) -> String {
    let norm = |s: &str| normalise(s, run);
    if let Some(refusal) = refusal_summary(a, norm) {
        return refusal;
    }
    let w = warnings_summary(a, norm);
    if let Some(items) = a.body.get("items").and_then(Value::as_array) {
        let names: Vec<&str> = items
            .iter()
            .filter_map(|i| i.pointer("/metadata/name").and_then(Value::as_str))
            .collect();
        format!("{} items={names:?} warnings=[{w}]", a.status)
    } else {
        format!(
            "{} data={} spec={} warnings=[{w}]",
            a.status,
            a.body.get("data").map(Value::to_string).unwrap_or_default(),
            a.body.get("spec").map(Value::to_string).unwrap_or_default(),
        )
    }
}

/// One scenario: its policy's spec (without `matchConstraints`' namespace selector, which the
/// test adds) and its binding's spec (without `policyName`).
struct Scenario {
    name: &'static str,
    policy: Value,
    binding: Value,
}

fn configmap_rules(ops: &[&str]) -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["configmaps"]}])
}

fn scenarios() -> Vec<Scenario> {
    let cm_rules = configmap_rules(&["CREATE", "UPDATE"]);
    let s = |name: &'static str, policy: Value, binding: Value| Scenario {
        name,
        policy,
        binding,
    };
    let deny = json!({"validationActions": ["Deny"]});
    vec![
        s(
            "deny",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            deny.clone(),
        ),
        s(
            "nomessage",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'"}]}),
            deny.clone(),
        ),
        s(
            "warn",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x should be ok"}]}),
            json!({"validationActions": ["Warn"]}),
        ),
        s(
            "audit",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x should be ok"}]}),
            json!({"validationActions": ["Audit"]}),
        ),
        s(
            "warn-audit",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x should be ok"}]}),
            json!({"validationActions": ["Warn", "Audit"]}),
        ),
        s(
            "msgexpr",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'",
                    "messageExpression": "'x is ' + object.data.x + ', not ok'", "message": "static"}]}),
            deny.clone(),
        ),
        s(
            "reason",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok", "reason": "Forbidden"},
                    {"expression": "object.data.y == 'ok'", "message": "y must be ok", "reason": "RequestEntityTooLarge"}]}),
            deny.clone(),
        ),
        s(
            "params-name",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.data.x == params.data.want",
                    "messageExpression": "'x must be ' + params.data.want"}]}),
            json!({"validationActions": ["Deny"], "paramRef": {"name": "limits", "namespace": "NS",
                "parameterNotFoundAction": "Deny"}}),
        ),
        s(
            "params-selector",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.data.x != params.data.forbid",
                    "messageExpression": "'x may not be ' + params.data.forbid"}]}),
            json!({"validationActions": ["Deny"], "paramRef": {"namespace": "NS",
                "selector": {"matchLabels": {"vap-param": "yes"}}, "parameterNotFoundAction": "Deny"}}),
        ),
        s(
            "param-missing-deny",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.data.x == params.data.want"}]}),
            json!({"validationActions": ["Deny"], "paramRef": {"name": "absent", "namespace": "NS",
                "parameterNotFoundAction": "Deny"}}),
        ),
        s(
            "param-missing-allow",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.data.x == params.data.want"}]}),
            json!({"validationActions": ["Deny"], "paramRef": {"name": "absent", "namespace": "NS",
                "parameterNotFoundAction": "Allow"}}),
        ),
        s(
            "param-local",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.data.x == params.data.want",
                    "messageExpression": "'x must be ' + params.data.want"}]}),
            json!({"validationActions": ["Deny"], "paramRef": {"name": "limits",
                "parameterNotFoundAction": "Deny"}}),
        ),
        s(
            "objsel",
            json!({"matchConstraints": {"resourceRules": cm_rules, "objectSelector": {"matchLabels": {"check": "yes"}}},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            deny.clone(),
        ),
        s(
            "binding-sel",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            json!({"validationActions": ["Deny"], "matchResources": {
                "objectSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}}}),
        ),
        s(
            "exclude",
            json!({"matchConstraints": {"resourceRules": cm_rules,
                "excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                    "resources": ["configmaps"], "resourceNames": ["skipped"]}]},
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            deny.clone(),
        ),
        s(
            "cond",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "matchConditions": [{"name": "only-x", "expression": "object.metadata.name.startsWith('x')"}],
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            deny.clone(),
        ),
        s(
            "vars",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "variables": [{"name": "x", "expression": "object.data.x"},
                    {"name": "okay", "expression": "variables.x == 'ok' || variables.x == 'fine'"}],
                "validations": [{"expression": "variables.okay", "messageExpression": "'x is ' + variables.x"}]}),
            deny.clone(),
        ),
        s(
            "update",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "oldObject == null || object.data.x == oldObject.data.x",
                    "message": "x is immutable"},
                    {"expression": "request.operation == 'CREATE' || has(object.data.changed)",
                    "messageExpression": "request.operation + ' needs changed'"}]}),
            deny.clone(),
        ),
        s(
            "delete",
            json!({"matchConstraints": {"resourceRules": configmap_rules(&["DELETE"])},
                "validations": [{"expression": "object == null && oldObject.data.keep != 'yes'",
                    "messageExpression": "oldObject.metadata.name + ' is kept'"}]}),
            deny.clone(),
        ),
        s(
            "deletecollection",
            json!({"matchConstraints": {"resourceRules": configmap_rules(&["DELETE"])},
                "validations": [{"expression": "object == null && oldObject.data.keep != 'yes'",
                    "messageExpression": "oldObject.metadata.name + ' is kept'"}]}),
            deny.clone(),
        ),
        s(
            "error-fail",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.missing == 'a'", "message": "missing"}]}),
            deny.clone(),
        ),
        s(
            "cond-error",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "matchConditions": [{"name": "missing", "expression": "object.data.missing == 'a'"}],
                "validations": [{"expression": "object.data.x == 'ok'", "message": "x must be ok"}]}),
            deny.clone(),
        ),
        s(
            "error-warn",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "object.data.missing == 'a'", "message": "missing"}]}),
            json!({"validationActions": ["Warn"]}),
        ),
        s(
            "request",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "request.name != 'c-bad' && !request.dryRun",
                    "messageExpression": "request.operation + ' of ' + request.kind.kind + ' ' + request.resource.version + '/' + request.resource.resource + ' ' + request.name + ' in ' + request.namespace"}]}),
            deny.clone(),
        ),
        s(
            "error-ignore",
            json!({"matchConstraints": {"resourceRules": cm_rules}, "failurePolicy": "Ignore",
                "validations": [{"expression": "object.data.missing == 'a'", "message": "missing"}]}),
            deny.clone(),
        ),
        s(
            "nsobject",
            json!({"matchConstraints": {"resourceRules": cm_rules},
                "validations": [{"expression": "namespaceObject.metadata.labels['vap-tier'] == object.data.x",
                    "messageExpression": "'x must be the namespace tier ' + namespaceObject.metadata.labels['vap-tier']"}]}),
            deny.clone(),
        ),
        s(
            "crd",
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["vap.example.com"], "apiVersions": ["*"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["gizmos"]}]},
                "validations": [{"expression": "object.spec.size <= 10", "messageExpression": "'size ' + string(object.spec.size) + ' is over 10'",
                    "reason": "Invalid"}]}),
            deny.clone(),
        ),
        s(
            "secret",
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["secrets"]}]},
                "validations": [{"expression": "object.type != 'Opaque' || has(object.data) && 'token' in object.data",
                    "message": "an Opaque Secret needs a token"}]}),
            deny.clone(),
        ),
    ]
}

fn cm(name: &str, labels: Value, data: Value) -> Value {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    if labels.as_object().is_some_and(|l| !l.is_empty()) {
        cm["metadata"]["labels"] = labels;
    }
    if data.as_object().is_some_and(|d| !d.is_empty()) {
        cm["data"] = data;
    }
    cm
}

fn gizmo_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.vap.example.com"},
        "spec": {"group": "vap.example.com", "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}})
}

/// The namespace of a scenario.
fn ns_of(run: &str, scenario: &str) -> String {
    format!("{run}-{scenario}")
}

fn policy_name(run: &str, scenario: &str) -> String {
    format!("{run}-{scenario}.vap.example.com")
}

const VAP: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const VAPB: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

/// Creates a policy and its binding, for `scenario`, selecting the namespaces labelled with it.
async fn register(client: &kube::Client, run: &str, sc: &Scenario) {
    let ns = ns_of(run, sc.name);
    let mut policy = sc.policy.clone();
    policy["matchConstraints"]["namespaceSelector"] =
        json!({"matchLabels": {"vap-run": run, "vap-scenario": sc.name}});
    let name = policy_name(run, sc.name);
    let a = send(
        client,
        "POST",
        VAP,
        Some(json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": policy})),
    )
    .await;
    assert_eq!(a.status, 201, "policy {}: {a:?}", sc.name);
    let binding = ok(serde_json::to_string(&sc.binding)).replace("\"NS\"", &format!("{ns:?}"));
    let mut binding: Value = ok(serde_json::from_str(&binding));
    binding["policyName"] = json!(name);
    let a = send(
        client,
        "POST",
        VAPB,
        Some(json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": format!("{name}-binding")},
            "spec": binding})),
    )
    .await;
    assert_eq!(a.status, 201, "binding {}: {a:?}", sc.name);
}

/// Every scenario on one server: answers by step.
async fn run_scenarios(client: &kube::Client, run: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let a = send(
        client,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        Some(gizmo_crd()),
    )
    .await;
    assert!(a.status == 201 || a.status == 409, "{a:?}");
    let scs = scenarios();
    for sc in &scs {
        let mut labels = json!({"vap-run": run, "vap-scenario": sc.name});
        if sc.name == "nsobject" {
            labels["vap-tier"] = json!("gold");
        }
        let a = send(
            client,
            "POST",
            "/api/v1/namespaces",
            Some(json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns_of(run, sc.name), "labels": labels}})),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    // Parameters.
    for (sc, name, labels, data) in [
        ("params-name", "limits", json!({}), json!({"want": "ok"})),
        ("param-local", "limits", json!({}), json!({"want": "local"})),
        (
            "params-selector",
            "p1",
            json!({"vap-param": "yes"}),
            json!({"forbid": "bad"}),
        ),
        (
            "params-selector",
            "p2",
            json!({"vap-param": "yes"}),
            json!({"forbid": "worse"}),
        ),
        (
            "params-selector",
            "p3",
            json!({"vap-param": "no"}),
            json!({"forbid": "ok"}),
        ),
    ] {
        let a = send(
            client,
            "POST",
            &format!("/api/v1/namespaces/{}/configmaps", ns_of(run, sc)),
            Some(cm(name, labels, data)),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    for sc in &scs {
        register(client, run, sc).await;
    }
    // The sentinel: in effect once kube-apiserver's informers have seen all the above.
    let sentinel = Scenario {
        name: "sentinel",
        policy: json!({"matchConstraints": {"resourceRules": configmap_rules(&["CREATE"])},
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "object.metadata.name != params.data.refuse"}]}),
        binding: json!({"validationActions": ["Deny"], "paramRef": {"name": "limits",
            "namespace": ns_of(run, "params-name"), "parameterNotFoundAction": "Deny"}}),
    };
    let a = send(
        client,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns_of(run, "sentinel"), "labels": {"vap-run": run, "vap-scenario": "sentinel"}}})),
    )
    .await;
    assert_eq!(a.status, 201, "{a:?}");
    register(client, run, &sentinel).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = send(
            client,
            "POST",
            &format!(
                "/api/v1/namespaces/{}/configmaps?dryRun=All",
                ns_of(run, "sentinel")
            ),
            Some(cm("probe", json!({}), json!({}))),
        )
        .await;
        // The sentinel's params refuse nothing by that name: "want" is "ok", "refuse" absent,
        // so the expression fails with an error — any refusal means the policy is in effect.
        if a.status >= 400 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the sentinel policy never took effect: {a:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let cms = |sc: &str| format!("/api/v1/namespaces/{}/configmaps", ns_of(run, sc));
    let mut step = |k: &str, a: Answer| {
        out.insert(k.to_string(), summary(&a, run));
    };
    let data = |x: &str| json!({"x": x});
    // Simple create scenarios: a good and a bad value.
    for sc in [
        "deny",
        "nomessage",
        "warn",
        "audit",
        "warn-audit",
        "msgexpr",
        "params-name",
        "params-selector",
        "param-missing-deny",
        "param-missing-allow",
        "param-local",
        "vars",
        "error-fail",
        "error-ignore",
        "error-warn",
        "request",
        "cond-error",
        "nsobject",
    ] {
        for x in ["ok", "bad", "gold"] {
            let a = send(
                client,
                "POST",
                &cms(sc),
                Some(cm(&format!("c-{x}"), json!({}), data(x))),
            )
            .await;
            step(&format!("{sc} create x={x}"), a);
        }
    }
    // Both failing validations, each with its reason.
    for (name, d) in [
        ("both", json!({"x": "bad", "y": "bad"})),
        ("y", json!({"x": "ok", "y": "bad"})),
        ("none", json!({"x": "ok", "y": "ok"})),
    ] {
        let a = send(
            client,
            "POST",
            &cms("reason"),
            Some(cm(&format!("r-{name}"), json!({}), d)),
        )
        .await;
        step(&format!("reason create {name}"), a);
    }
    // A dry run is checked as well.
    let a = send(
        client,
        "POST",
        &format!("{}?dryRun=All", cms("deny")),
        Some(cm("dry", json!({}), data("bad"))),
    )
    .await;
    step("deny dry-run create x=bad", a);
    // Selectors.
    for (sc, name, labels) in [
        ("objsel", "unlabelled", json!({})),
        ("objsel", "checked", json!({"check": "yes"})),
        ("binding-sel", "silver", json!({"tier": "silver"})),
        ("binding-sel", "gold", json!({"tier": "gold"})),
        ("exclude", "skipped", json!({})),
        ("exclude", "other", json!({})),
        ("cond", "xray", json!({})),
        ("cond", "yak", json!({})),
    ] {
        let a = send(
            client,
            "POST",
            &cms(sc),
            Some(cm(name, labels, data("bad"))),
        )
        .await;
        step(&format!("{sc} create {name} x=bad"), a);
    }
    // Updates: oldObject.
    let a = send(
        client,
        "POST",
        &cms("update"),
        Some(cm("u", json!({}), data("one"))),
    )
    .await;
    step("update create", a);
    for (label, d) in [
        ("same x without changed", json!({"x": "one"})),
        ("other x", json!({"x": "two", "changed": "1"})),
        ("same x with changed", json!({"x": "one", "changed": "1"})),
    ] {
        let a = send(
            client,
            "PUT",
            &format!("{}/u", cms("update")),
            Some(cm("u", json!({}), d)),
        )
        .await;
        step(&format!("update put {label}"), a);
    }
    let a = send(
        client,
        "PATCH",
        &format!("{}/u", cms("update")),
        Some(json!({"data": {"x": "three"}})),
    )
    .await;
    step("update merge-patch other x", a);
    // Deletes: object null, oldObject set.
    for (name, keep) in [("kept", "yes"), ("gone", "no")] {
        let a = send(
            client,
            "POST",
            &cms("delete"),
            Some(cm(name, json!({}), json!({"keep": keep}))),
        )
        .await;
        step(&format!("delete create {name}"), a);
        let a = send(client, "DELETE", &format!("{}/{name}", cms("delete")), None).await;
        step(&format!("delete delete {name}"), a);
    }
    // deletecollection: each object's DELETE is admitted in turn; the first refusal stops it.
    for (name, keep) in [("a", "no"), ("b", "yes"), ("c", "no")] {
        let a = send(
            client,
            "POST",
            &cms("deletecollection"),
            Some(cm(name, json!({"keep": keep}), json!({"keep": keep}))),
        )
        .await;
        step(&format!("deletecollection create {name}"), a);
    }
    let a = send(client, "DELETE", &cms("deletecollection"), None).await;
    step("deletecollection all", a);
    let a = send(client, "GET", &cms("deletecollection"), None).await;
    step("deletecollection left after refusal", a);
    let a = send(
        client,
        "DELETE",
        &format!("{}?labelSelector=keep%3Dno", cms("deletecollection")),
        None,
    )
    .await;
    step("deletecollection keep=no", a);
    let a = send(client, "GET", &cms("deletecollection"), None).await;
    step("deletecollection left", a);
    // A custom resource and a Secret.
    for size in [3, 30] {
        let a = send(
            client,
            "POST",
            &format!(
                "/apis/vap.example.com/v1/namespaces/{}/gizmos",
                ns_of(run, "crd")
            ),
            Some(json!({"apiVersion": "vap.example.com/v1", "kind": "Gizmo",
                "metadata": {"name": format!("g{size}")}, "spec": {"size": size}})),
        )
        .await;
        step(&format!("crd create size={size}"), a);
    }
    for (name, d) in [
        ("with-token", json!({"token": "dA=="})),
        ("without", json!({})),
    ] {
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "type": "Opaque"});
        if d.as_object().is_some_and(|d| !d.is_empty()) {
            secret["data"] = d;
        }
        let a = send(
            client,
            "POST",
            &format!("/api/v1/namespaces/{}/secrets", ns_of(run, "secret")),
            Some(secret),
        )
        .await;
        step(&format!("secret create {name}"), a);
    }
    // The stored policies and bindings, with their defaults.
    for sc in ["deny", "binding-sel", "params-selector"] {
        let name = policy_name(run, sc);
        let a = send(client, "GET", &format!("{VAP}/{name}"), None).await;
        step(&format!("{sc} stored policy"), a);
        let a = send(client, "GET", &format!("{VAPB}/{name}-binding"), None).await;
        step(&format!("{sc} stored binding"), a);
    }
    // Policies and bindings kube-apiserver refuses to store.
    let bad = |spec: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": format!("{run}-bad.vap.example.com")}, "spec": spec})
    };
    let rules = json!({"resourceRules": configmap_rules(&["CREATE"])});
    for (label, spec) in [
        (
            "syntax error",
            json!({"matchConstraints": rules, "validations": [{"expression": "object.data.x =="}]}),
        ),
        (
            "bad messageExpression",
            json!({"matchConstraints": rules, "validations": [{"expression": "true", "messageExpression": "'a' +"}]}),
        ),
        (
            "bad variable",
            json!({"matchConstraints": rules, "variables": [{"name": "v", "expression": "object.("}],
                "validations": [{"expression": "true"}]}),
        ),
        (
            "bad matchCondition",
            json!({"matchConstraints": rules, "matchConditions": [{"name": "c", "expression": ")"}],
                "validations": [{"expression": "true"}]}),
        ),
        ("no validations", json!({"matchConstraints": rules})),
        (
            "no matchConstraints",
            json!({"validations": [{"expression": "true"}]}),
        ),
        (
            "bad failurePolicy",
            json!({"matchConstraints": rules, "failurePolicy": "Sometimes", "validations": [{"expression": "true"}]}),
        ),
        (
            "bad reason",
            json!({"matchConstraints": rules, "validations": [{"expression": "true", "reason": "Teapot"}]}),
        ),
        (
            "empty expression",
            json!({"matchConstraints": rules, "validations": [{"expression": ""}]}),
        ),
    ] {
        let a = send(client, "POST", VAP, Some(bad(spec))).await;
        step(&format!("refused policy: {label}"), a);
    }
    let bad_binding = |spec: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": format!("{run}-bad-binding")}, "spec": spec})
    };
    for (label, spec) in [
        (
            "Deny and Warn",
            json!({"policyName": "p", "validationActions": ["Deny", "Warn"]}),
        ),
        ("no actions", json!({"policyName": "p"})),
        (
            "unknown action",
            json!({"policyName": "p", "validationActions": ["Shout"]}),
        ),
        ("no policyName", json!({"validationActions": ["Deny"]})),
        (
            "paramRef name and selector",
            json!({"policyName": "p", "validationActions": ["Deny"],
                "paramRef": {"name": "a", "selector": {}, "parameterNotFoundAction": "Deny"}}),
        ),
        (
            "paramRef without action",
            json!({"policyName": "p", "validationActions": ["Deny"], "paramRef": {"name": "a"}}),
        ),
    ] {
        let a = send(client, "POST", VAPB, Some(bad_binding(spec))).await;
        step(&format!("refused binding: {label}"), a);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_policies_answer_as_kube_apiserver() {
    init_tracing();
    let run = format!("vap{}", run_id());

    let server = ok(RealApiServer::start().await);
    let real = ok(server.client());
    let real_answers = run_scenarios(&real, &run).await;

    let fake = ok(FakeApiServer::new().client());
    let fake_answers = run_scenarios(&fake, &run).await;

    let mut table =
        String::from("| step | kube-apiserver | in-memory | agree |\n|---|---|---|---|\n");
    let mut disagree = Vec::new();
    for (k, r) in &real_answers {
        let f = fake_answers.get(k).cloned().unwrap_or_default();
        let same = *r == f;
        table.push_str(&format!(
            "| {k} | {r} | {f} | {} |\n",
            if same { "yes" } else { "NO" }
        ));
        if !same {
            disagree.push(k.clone());
        }
    }
    println!("{table}");
    if let Ok(path) = std::env::var("KUBE_CODEGEN_POLICY_TABLE") {
        ok(std::fs::write(path, &table));
    }
    assert!(
        disagree.is_empty(),
        "the servers disagree on {} of {} steps: {disagree:?}:\n{table}",
        disagree.len(),
        real_answers.len()
    );
}
