//! Admission webhooks on the in-memory server against kube-apiserver v1.37.1, the envtest
//! way: the test makes a CA and a serving certificate for 127.0.0.1 and runs its own HTTPS
//! webhook on loopback (answers that allow with a warning, deny with a message and causes,
//! patch, hang past the timeout, or are not JSON, and a record of every review it gets). Both
//! servers get the same Mutating- and ValidatingWebhookConfigurations, one webhook per
//! scenario selected by its namespace's label, and the same requests; the answers (status,
//! reason, message, causes, `Warning` headers, the object's labels and data) and the reviews
//! the webhook received are normalised (ports, uids, times) and compared scenario by scenario.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use kube_codegen_runtime::fake::FakeApiServer;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::e2e::{init_tracing, run_id};
use tests::fake_vs_real::{
    self, Answer, LoopbackCertificates, loopback_certificates, refusal_summary, warnings_summary,
};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// The reviews the webhook received, by scenario tag.
type Seen = Arc<Mutex<BTreeMap<String, Vec<Value>>>>;

/// The test's webhook: `/<behaviour>/<scenario>`.
async fn answer(
    path: String,
    body: Bytes,
    seen: Seen,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let behaviour = parts.next().unwrap_or("").to_string();
    let tag = parts.next().unwrap_or("").to_string();
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let request = review.get("request").cloned().unwrap_or(Value::Null);
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(tag)
        .or_default()
        .push(request.clone());
    let uid = request.get("uid").cloned().unwrap_or(Value::Null);
    let respond = |response: Value| {
        let mut r = response;
        r["uid"] = uid.clone();
        let out =
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r});
        Ok(hyper::Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(out.to_string())))
            .unwrap_or_default())
    };
    let has_password = request.pointer("/object/data/password").is_some();
    match behaviour.as_str() {
        "validate" if has_password => respond(json!({"allowed": false, "status": {
            "message": "ConfigMaps hold no passwords", "code": 422, "reason": "Invalid",
            "details": {"causes": [{"field": "data.password", "message": "use a Secret", "reason": "FieldValueForbidden"}]}}})),
        "validate" => {
            respond(json!({"allowed": true, "warnings": ["checked by the test webhook"]}))
        }
        "deny" => respond(json!({"allowed": false, "status": {"message": "denied by the test"}})),
        // A `Scale`: at most 5 replicas.
        "validate-scale" => match request
            .pointer("/object/spec/replicas")
            .and_then(Value::as_i64)
        {
            Some(n) if n > 5 => respond(json!({"allowed": false, "status": {
                "message": format!("{n} replicas: at most 5"), "code": 422, "reason": "Invalid"}})),
            _ => {
                respond(json!({"allowed": true, "warnings": ["scale checked by the test webhook"]}))
            }
        },
        // A `Scale`: more than 3 replicas are capped to 3.
        "cap-scale" => match request
            .pointer("/object/spec/replicas")
            .and_then(Value::as_i64)
        {
            Some(n) if n > 3 => {
                let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]);
                let patch = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
                respond(
                    json!({"allowed": true, "patchType": "JSONPatch", "patch": patch,
                    "warnings": [format!("{n} replicas capped to 3 by the test webhook")]}),
                )
            }
            _ => respond(json!({"allowed": true})),
        },
        "deny-bare" => respond(json!({"allowed": false})),
        // A `Binding` or an `Eviction`: refused when its metadata has the annotation `deny`.
        "deny-marked"
            if request
                .pointer("/object/metadata/annotations/deny")
                .is_some() =>
        {
            respond(json!({"allowed": false, "status": {
                "message": "marked to be denied", "code": 403, "reason": "Forbidden"}}))
        }
        "deny-marked" => respond(json!({"allowed": true, "warnings": [format!(
            "{} checked by the test webhook",
            request.pointer("/object/kind").and_then(Value::as_str).unwrap_or("?")
        )]})),
        // Adds the annotation `mutated-by: test`.
        "annotate" => {
            let ops = if request.pointer("/object/metadata/annotations").is_some() {
                json!([{"op": "add", "path": "/metadata/annotations/mutated-by", "value": "test"}])
            } else {
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"mutated-by": "test"}}])
            };
            let patch = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
            respond(json!({"allowed": true, "patchType": "JSONPatch", "patch": patch}))
        }
        "patch" => {
            let has_labels = request.pointer("/object/metadata/labels").is_some();
            let ops = if has_labels {
                json!([{"op": "add", "path": "/metadata/labels/team", "value": "platform"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "platform"}}])
            };
            let patch = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
            respond(
                json!({"allowed": true, "patchType": "JSONPatch", "patch": patch,
                "warnings": ["defaulted by the test webhook"]}),
            )
        }
        "slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            respond(json!({"allowed": true}))
        }
        "convert" | "convert-fail" => {
            let desired = request
                .get("desiredAPIVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut converted = Vec::new();
            for mut o in request
                .get("objects")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                let spec = o.get_mut("spec").and_then(Value::as_object_mut);
                if let Some(spec) = spec {
                    let (from, to) = if desired.ends_with("/v2") {
                        ("size", "replicas")
                    } else {
                        ("replicas", "size")
                    };
                    if let Some(v) = spec.remove(from) {
                        spec.insert(to.into(), v);
                    }
                }
                o["apiVersion"] = json!(desired);
                converted.push(o);
            }
            let result = if behaviour == "convert" {
                json!({"status": "Success"})
            } else {
                json!({"status": "Failure", "message": "the test refuses to convert"})
            };
            let out = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": uid, "convertedObjects": converted, "result": result}});
            Ok(hyper::Response::builder()
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(out.to_string())))
                .unwrap_or_default())
        }
        "garbage" => Ok(hyper::Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(b"this is not a review")))
            .unwrap_or_default()),
        _ => respond(json!({"allowed": true})),
    }
}

/// Serves the test's webhook on 127.0.0.1; its address.
async fn serve_webhook(cert_pem: &str, key_pem: &str, seen: Seen) -> std::net::SocketAddr {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .map(ok)
        .collect();
    let key = ok(PrivateKeyDer::from_pem_slice(key_pem.as_bytes()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config =
        ok(ok(rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions())
        .with_no_client_auth()
        .with_single_cert(certs, key));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = ok(tokio::net::TcpListener::bind("127.0.0.1:0").await);
    let addr = ok(listener.local_addr());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let seen = seen.clone();
                    async move {
                        let path = req.uri().path().to_string();
                        let body = req
                            .into_body()
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        answer(path, body, seen).await
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    addr
}

/// One webhook of the configurations: `scenario` selects namespaces labelled with it.
struct Hook {
    scenario: &'static str,
    mutating: bool,
    url: String,
    ca: String,
    extra: Value,
}

fn webhook(i: usize, h: &Hook, run: &str) -> Value {
    let mut w = json!({
        "name": format!("{}-{i}.fvr.example.com", h.scenario),
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"url": h.url, "caBundle": base64::engine::general_purpose::STANDARD.encode(&h.ca)},
        "namespaceSelector": {"matchLabels": {"fvr-run": run, "fvr-scenario": h.scenario}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
        "failurePolicy": "Fail",
    });
    if let (Some(w), Some(extra)) = (w.as_object_mut(), h.extra.as_object()) {
        for (k, v) in extra {
            w.insert(k.clone(), v.clone());
        }
    }
    w
}

/// Ports, uids and times out of a text.
fn normalise(s: &str, run: &str) -> String {
    let re_port = |s: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("127.0.0.1:") {
            out.push_str(&rest[..i + "127.0.0.1:".len()]);
            rest = &rest[i + "127.0.0.1:".len()..];
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            out.push_str("PORT");
            rest = &rest[digits..];
        }
        out.push_str(rest);
        out
    };
    let mut out = re_port(s).replace(run, "RUN");
    // A stored object's revision (its resourceVersion) differs between the servers.
    while let Some(i) = out.find("revision=") {
        let start = i + "revision=".len();
        let digits = out[start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        if digits == 0 {
            break;
        }
        out.replace_range(i..start + digits, "revision#N");
    }
    out
}

fn summary(a: &Answer, run: &str) -> String {
    summary_of(a, run, &[("labels", "/metadata/labels"), ("data", "/data")])
}

/// The refusal, or the status, the fields at `parts` (`(label, JSON pointer)`) and the
/// warnings.
fn summary_of(a: &Answer, run: &str, parts: &[(&str, &str)]) -> String {
    let norm = |s: &str| normalise(s, run);
    refusal_summary(a, norm).unwrap_or_else(|| {
        let fields: Vec<String> = parts
            .iter()
            .map(|(label, at)| {
                let v = a.body.pointer(at).map(Value::to_string).unwrap_or_default();
                format!("{label}={v}")
            })
            .collect();
        format!(
            "{} {} warnings=[{}]",
            a.status,
            fields.join(" "),
            warnings_summary(a, norm)
        )
    })
}

/// Sends a request, panicking when no answer comes.
async fn send(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> Answer {
    ok(fake_vs_real::send(client, method, path, content_type, body).await)
}

/// A review as compared: without its uid, the user, the object's server-set fields.
fn review_summary(r: &Value, run: &str) -> String {
    let mut r = r.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("uid");
        m.remove("userInfo");
        for o in ["object", "oldObject"] {
            if let Some(meta) = m
                .get_mut(o)
                .and_then(|o| o.get_mut("metadata"))
                .and_then(Value::as_object_mut)
            {
                for f in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "managedFields",
                ] {
                    meta.remove(f);
                }
            }
        }
    }
    normalise(&r.to_string(), run)
}

const SCENARIOS: &[&str] = &[
    "validate",
    "deny",
    "patch",
    "down-fail",
    "down-ignore",
    "slow-fail",
    "slow-ignore",
    "garbage",
    "bad-ca",
    "objsel",
    "cond",
    "cond-error",
    "dry",
    "delete",
    "reinvoke",
    "scale-validate",
    "scale-mutate",
    "pod-subresources",
];

fn hooks(addr: std::net::SocketAddr, ca: &str, other_ca: &str, down: u16) -> Vec<Hook> {
    let url = |b: &str, s: &str| format!("https://{addr}/{b}/{s}");
    let h = |scenario: &'static str, mutating: bool, url: String, ca: &str, extra: Value| Hook {
        scenario,
        mutating,
        url,
        ca: ca.to_string(),
        extra,
    };
    let down_url = format!("https://127.0.0.1:{down}/validate/down");
    vec![
        h(
            "validate",
            false,
            url("validate", "validate"),
            ca,
            json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["configmaps"]}]}),
        ),
        h("deny", false, url("deny-bare", "deny"), ca, json!({})),
        h("patch", true, url("patch", "patch"), ca, json!({})),
        h("patch", false, url("validate", "patch-v"), ca, json!({})),
        h("down-fail", false, down_url.clone(), ca, json!({})),
        h(
            "down-ignore",
            false,
            down_url,
            ca,
            json!({"failurePolicy": "Ignore"}),
        ),
        h(
            "slow-fail",
            false,
            url("slow", "slow-fail"),
            ca,
            json!({"timeoutSeconds": 1}),
        ),
        h(
            "slow-ignore",
            false,
            url("slow", "slow-ignore"),
            ca,
            json!({"timeoutSeconds": 1, "failurePolicy": "Ignore"}),
        ),
        h("garbage", false, url("garbage", "garbage"), ca, json!({})),
        h("bad-ca", false, url("allow", "bad-ca"), other_ca, json!({})),
        h(
            "objsel",
            false,
            url("deny", "objsel"),
            ca,
            json!({"objectSelector": {"matchLabels": {"check": "yes"}}}),
        ),
        h(
            "cond",
            false,
            url("deny", "cond"),
            ca,
            json!({"matchConditions": [
            {"name": "only-x", "expression": "object.metadata.name.startsWith('x')"}]}),
        ),
        h(
            "cond-error",
            false,
            url("deny", "cond-error"),
            ca,
            json!({"matchConditions": [
            {"name": "missing-key", "expression": "object.data.missing == 'a'"}]}),
        ),
        h(
            "dry",
            true,
            url("patch", "dry"),
            ca,
            json!({"sideEffects": "NoneOnDryRun"}),
        ),
        h(
            "delete",
            false,
            url("deny", "delete"),
            ca,
            json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["DELETE"], "resources": ["configmaps"]}]}),
        ),
        h(
            "reinvoke",
            true,
            url("allow", "reinvoke-first"),
            ca,
            json!({"reinvocationPolicy": "IfNeeded"}),
        ),
        h(
            "reinvoke",
            true,
            url("patch", "reinvoke-second"),
            ca,
            json!({}),
        ),
        // Writes through a Deployment's `/scale`: webhooks of `deployments/scale`,
        // `deployments/*` and `*/scale` see `Scale`s; one of `deployments` alone is not called.
        h(
            "scale-validate",
            false,
            url("validate-scale", "scale-validate"),
            ca,
            scale_rules("deployments/scale"),
        ),
        h(
            "scale-validate",
            false,
            url("deny", "scale-unseen"),
            ca,
            scale_rules("deployments"),
        ),
        h(
            "scale-mutate",
            true,
            url("cap-scale", "scale-mutate"),
            ca,
            scale_rules("deployments/*"),
        ),
        h(
            "scale-mutate",
            false,
            url("validate-scale", "scale-mutate-v"),
            ca,
            scale_rules("*/scale"),
        ),
        // A Pod's `binding` and `eviction`: webhooks of the subresources see the `Binding` or
        // the `Eviction`; one of the Pod's own updates and deletes is not called by either.
        h(
            "pod-subresources",
            true,
            url("annotate", "pod-annotate"),
            ca,
            pod_rules(&["CREATE"], &["pods/binding", "pods/eviction"]),
        ),
        h(
            "pod-subresources",
            false,
            url("deny-marked", "pod-validate"),
            ca,
            pod_rules(&["CREATE"], &["pods/*"]),
        ),
        h(
            "pod-subresources",
            false,
            url("deny", "pod-unseen"),
            ca,
            pod_rules(&["UPDATE", "DELETE"], &["pods"]),
        ),
    ]
}

/// Rules for `operations` of `resources` in the core group.
fn pod_rules(operations: &[&str], resources: &[&str]) -> Value {
    json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": operations, "resources": resources}]})
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}})
}

/// A `Binding` of `pod` to `node`, with `annotations`.
fn binding(pod: &str, node: &str, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": pod, "annotations": annotations},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}

/// An `Eviction` of `pod`, with `annotations`.
fn eviction(pod: &str, annotations: Value) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": pod, "annotations": annotations}})
}

/// An answer about a Pod: the refusal, or its node, annotations, deletion grace period and
/// warnings.
fn pod_summary(a: &Answer, run: &str) -> String {
    summary_of(
        a,
        run,
        &[
            ("node", "/spec/nodeName"),
            ("annotations", "/metadata/annotations"),
            ("grace", "/metadata/deletionGracePeriodSeconds"),
        ],
    )
}

/// Rules for updates of `resource` in `apps/v1`.
fn scale_rules(resource: &str) -> Value {
    json!({"rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
        "operations": ["UPDATE"], "resources": [resource]}]})
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}}})
}

fn scale(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name},
        "spec": {"replicas": replicas}})
}

/// An answer about a `Scale` or a Deployment: the refusal, or the replicas and warnings.
fn replicas_summary(a: &Answer, run: &str) -> String {
    summary_of(a, run, &[("replicas", "/spec/replicas")])
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

/// Every scenario on one server: answers by step.
async fn run_scenarios(
    client: &kube::Client,
    run: &str,
    prefix: &str,
    hooks: &[Hook],
) -> BTreeMap<String, String> {
    for s in SCENARIOS {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": format!("{prefix}-{s}"), "labels": {"fvr-run": run, "fvr-scenario": s}}});
        let a = send(
            client,
            "POST",
            "/api/v1/namespaces",
            "application/json",
            Some(ns),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    for (mutating, kind, plural) in [
        (
            true,
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        ),
        (
            false,
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
    ] {
        let webhooks: Vec<Value> = hooks
            .iter()
            .filter(|h| h.mutating == mutating)
            .enumerate()
            .map(|(i, h)| webhook(i, h, run))
            .collect();
        let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": format!("{prefix}-{plural}")}, "webhooks": webhooks});
        let a = send(
            client,
            "POST",
            &format!("/apis/admissionregistration.k8s.io/v1/{plural}"),
            "application/json",
            Some(config),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    // kube-apiserver picks configurations up from its informer: wait until the first acts.
    let probe_path = format!("/api/v1/namespaces/{prefix}-deny/configmaps");
    for i in 0..100 {
        let a = send(
            client,
            "POST",
            &probe_path,
            "application/json",
            Some(cm(&format!("probe-{i}"), json!({}), json!({}))),
        )
        .await;
        if a.status == 403 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut out = BTreeMap::new();
    let path = |s: &str| format!("/api/v1/namespaces/{prefix}-{s}/configmaps");
    let mut step = async |name: &str, method: &str, p: String, ct: &str, body: Option<Value>| {
        let a = send(client, method, &p, ct, body).await;
        out.insert(name.to_string(), summary(&a, run));
    };
    step(
        "validate: allowed, warning",
        "POST",
        path("validate"),
        "application/json",
        Some(cm("a", json!({}), json!({"k": "v"}))),
    )
    .await;
    step(
        "validate: denied, message and causes",
        "POST",
        path("validate"),
        "application/json",
        Some(cm("b", json!({}), json!({"password": "x"}))),
    )
    .await;
    step(
        "validate: update denied",
        "PUT",
        format!("{}/a", path("validate")),
        "application/json",
        Some(cm("a", json!({}), json!({"password": "x"}))),
    )
    .await;
    step(
        "validate: merge patch denied",
        "PATCH",
        format!("{}/a", path("validate")),
        "application/merge-patch+json",
        Some(json!({"data": {"password": "x"}})),
    )
    .await;
    step(
        "validate: delete allowed, warning",
        "DELETE",
        format!("{}/a", path("validate")),
        "application/json",
        None,
    )
    .await;
    step(
        "deny: without a message",
        "POST",
        path("deny"),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "patch: create patched",
        "POST",
        path("patch"),
        "application/json",
        Some(cm("a", json!({}), json!({"k": "v"}))),
    )
    .await;
    step(
        "patch: merge patch patched again",
        "PATCH",
        format!("{}/a", path("patch")),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"team": null, "x": "y"}}})),
    )
    .await;
    // A patch the mutating webhook makes valid: validation comes after the webhooks.
    step(
        "patch: merge patch made valid by the webhook",
        "PATCH",
        format!("{}/a", path("patch")),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"team": "not a valid label!"}}})),
    )
    .await;
    step(
        "patch: apply patched",
        "PATCH",
        format!("{}/b?fieldManager=fvr", path("patch")),
        "application/apply-patch+yaml",
        Some(cm("b", json!({"app": "b"}), json!({"k": "v"}))),
    )
    .await;
    step(
        "patch: stored",
        "GET",
        format!("{}/a", path("patch")),
        "application/json",
        None,
    )
    .await;
    for s in [
        "down-fail",
        "down-ignore",
        "slow-fail",
        "slow-ignore",
        "garbage",
        "bad-ca",
    ] {
        step(
            &format!("{s}: create"),
            "POST",
            path(s),
            "application/json",
            Some(cm("a", json!({}), json!({}))),
        )
        .await;
    }
    step(
        "objsel: unlabelled allowed",
        "POST",
        path("objsel"),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "objsel: labelled denied",
        "POST",
        path("objsel"),
        "application/json",
        Some(cm("b", json!({"check": "yes"}), json!({}))),
    )
    .await;
    step(
        "cond: y allowed",
        "POST",
        path("cond"),
        "application/json",
        Some(cm("y", json!({}), json!({}))),
    )
    .await;
    step(
        "cond: x denied",
        "POST",
        path("cond"),
        "application/json",
        Some(cm("x", json!({}), json!({}))),
    )
    .await;
    step(
        "cond-error: create",
        "POST",
        path("cond-error"),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "dry: dry-run create patched",
        "POST",
        format!("{}?dryRun=All", path("dry")),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "dry: not stored",
        "GET",
        format!("{}/a", path("dry")),
        "application/json",
        None,
    )
    .await;
    step(
        "delete: create",
        "POST",
        path("delete"),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "delete: denied",
        "DELETE",
        format!("{}/a", path("delete")),
        "application/json",
        None,
    )
    .await;
    step(
        "reinvoke: create",
        "POST",
        path("reinvoke"),
        "application/json",
        Some(cm("a", json!({}), json!({}))),
    )
    .await;
    step(
        "unselected namespace: not called",
        "POST",
        "/api/v1/namespaces/default/configmaps".to_string(),
        "application/json",
        Some(cm(
            &format!("{prefix}-plain"),
            json!({"check": "yes"}),
            json!({"password": "x"}),
        )),
    )
    .await;
    for (s, n) in [("scale-validate", 1), ("scale-mutate", 1)] {
        let a = send(
            client,
            "POST",
            &format!("/apis/apps/v1/namespaces/{prefix}-{s}/deployments"),
            "application/json",
            Some(deployment("d", n)),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    let scale_path = |s: &str| format!("/apis/apps/v1/namespaces/{prefix}-{s}/deployments/d/scale");
    let (merge, apply, json_patch) = (
        "application/merge-patch+json",
        "application/apply-patch+yaml",
        "application/json-patch+json",
    );
    let put = "application/json";
    let (v, m) = (scale_path("scale-validate"), scale_path("scale-mutate"));
    let forced = |p: &str| format!("{p}?fieldManager=fvr&force=true");
    // A `Scale`'s status is the server's: what the body says of it is not what webhooks see.
    let mut with_status = scale("d", 5);
    with_status["status"] = json!({"replicas": 7, "selector": "x=y"});
    with_status["metadata"]["labels"] = json!({"a": "b"});
    let replicas = |n: i64| json!({"spec": {"replicas": n}});
    #[rustfmt::skip]
    let scale_steps: Vec<(&str, &str, String, &str, Value)> = vec![
        ("scale: update allowed", "PUT", v.clone(), put, scale("d", 3)),
        ("scale: update denied", "PUT", v.clone(), put, scale("d", 7)),
        ("scale: merge patch denied", "PATCH", v.clone(), merge, replicas(9)),
        ("scale: merge patch allowed", "PATCH", v.clone(), merge, replicas(4)),
        ("scale: JSON patch denied", "PATCH", v.clone(), json_patch,
            json!([{"op": "replace", "path": "/spec/replicas", "value": 6}])),
        ("scale: forced apply denied", "PATCH", forced(&v), apply, scale("d", 8)),
        ("scale: forced apply allowed", "PATCH", forced(&v), apply, scale("d", 2)),
        ("scale: dry-run update denied", "PUT", format!("{v}?dryRun=All"), put, scale("d", 10)),
        ("scale: update with a status", "PUT", v.clone(), put, with_status),
        ("scale: invalid replicas", "PUT", v.clone(), put, scale("d", -1)),
        ("scale: update capped", "PUT", m.clone(), put, scale("d", 5)),
        ("scale: merge patch capped", "PATCH", m.clone(), merge, replicas(9)),
        ("scale: merge patch uncapped", "PATCH", m.clone(), merge, replicas(2)),
        ("scale: forced apply capped", "PATCH", forced(&m), apply, scale("d", 6)),
    ];
    for (name, method, p, ct, body) in scale_steps {
        let a = send(client, method, &p, ct, Some(body)).await;
        out.insert(name.to_string(), replicas_summary(&a, run));
    }
    for s in ["scale-validate", "scale-mutate"] {
        let a = send(
            client,
            "GET",
            &format!("/apis/apps/v1/namespaces/{prefix}-{s}/deployments/d"),
            "application/json",
            None,
        )
        .await;
        let fvr = entries_summary(
            &a.body,
            "/metadata/managedFields",
            ["manager", "operation", "subresource"],
        );
        out.insert(
            format!("{s}: the Deployment"),
            format!("{} managers={fvr}", replicas_summary(&a, run)),
        );
    }
    out.extend(pod_subresource_steps(client, run, &format!("{prefix}-pod-subresources")).await);
    let _ = send(
        client,
        "DELETE",
        &format!("/api/v1/namespaces/default/configmaps/{prefix}-plain"),
        "application/json",
        None,
    )
    .await;
    for plural in [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    ] {
        let _ = send(
            client,
            "DELETE",
            &format!("/apis/admissionregistration.k8s.io/v1/{plural}/{prefix}-{plural}"),
            "application/json",
            None,
        )
        .await;
    }
    out
}

/// The entries of the list at `pointer` in `body`, each as its three string `fields` joined
/// by `/`, joined by `,`.
fn entries_summary(body: &Value, pointer: &str, fields: [&str; 3]) -> String {
    body.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            fields
                .map(|f| e.get(f).and_then(Value::as_str).unwrap_or(""))
                .join("/")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Bindings and evictions of Pods in namespace `ns`, whose webhooks `hooks` registered:
/// answers by step, with the Pods they changed.
async fn pod_subresource_steps(
    client: &kube::Client,
    run: &str,
    ns: &str,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for p in ["p1", "p2"] {
        let a = send(
            client,
            "POST",
            &format!("/api/v1/namespaces/{ns}/pods"),
            "application/json",
            Some(pod(p)),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    let sub = |p: &str, s: &str| format!("/api/v1/namespaces/{ns}/pods/{p}/{s}");
    let deny = json!({"deny": "yes"});
    let team = json!({"team": "a"});
    #[rustfmt::skip]
    let steps: Vec<(&str, String, Value)> = vec![
        ("pods: binding denied", sub("p1", "binding"), binding("p1", "n1", deny.clone())),
        ("pods: binding of another name", sub("p1", "binding"), binding("p9", "n1", team.clone())),
        ("pods: binding dry run", format!("{}?dryRun=All", sub("p1", "binding")),
            binding("p1", "n1", team.clone())),
        ("pods: binding allowed", sub("p1", "binding"), binding("p1", "n1", team.clone())),
        ("pods: binding again", sub("p1", "binding"), binding("p1", "n2", json!({}))),
        ("pods: eviction denied", sub("p2", "eviction"), eviction("p2", deny)),
        ("pods: eviction of another name", sub("p2", "eviction"), eviction("p9", json!({}))),
        ("pods: eviction dry run", format!("{}?dryRun=All", sub("p2", "eviction")),
            eviction("p2", json!({}))),
        ("pods: eviction of an unbound pod", sub("p2", "eviction"), eviction("p2", team.clone())),
        ("pods: eviction of a bound pod", sub("p1", "eviction"), eviction("p1", team)),
        ("pods: eviction of a missing pod", sub("p3", "eviction"), eviction("p3", json!({}))),
    ];
    for (name, p, body) in steps {
        let a = send(client, "POST", &p, "application/json", Some(body)).await;
        let status = summary_of(&a, run, &[("status", "/status")]);
        out.insert(name.to_string(), status);
        // The Pods after each step.
        for pod in ["p1", "p2"] {
            let a = send(
                client,
                "GET",
                &format!("/api/v1/namespaces/{ns}/pods/{pod}"),
                "application/json",
                None,
            )
            .await;
            let mut pod_status = pod_summary(&a, run);
            // The server's conditions, without their times.
            if a.body.pointer("/status/conditions").is_some() {
                let conditions =
                    entries_summary(&a.body, "/status/conditions", ["type", "status", "reason"]);
                pod_status = format!("{pod_status} conditions={conditions}");
            }
            out.insert(format!("{name}: then {pod}"), pod_status);
        }
    }
    out
}

/// A CRD with v1 (stored, `spec.size`) and v2 (`spec.replicas`) converted by the test's
/// webhook at `behaviour`.
fn crd(plural: &str, kind: &str, url: &str, ca: &str) -> Value {
    let version = |name: &str, field: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object", "properties": {
                field: {"type": "integer"}}}}}}})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.fvr.example.com")},
        "spec": {"group": "fvr.example.com", "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
            "versions": [version("v1", "size", true), version("v2", "replicas", false)],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": url, "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)}}}}})
}

fn conversion_summary(a: &Answer, run: &str) -> String {
    if a.body.get("kind") == Some(&json!("Status")) && a.status >= 400 {
        return summary(a, run);
    }
    let one = |o: &Value| {
        format!(
            "{} {} spec={}",
            o.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
            o.get("spec").map(Value::to_string).unwrap_or_default()
        )
    };
    match a.body.get("items").and_then(Value::as_array) {
        Some(items) => format!(
            "{} [{}]",
            a.status,
            items.iter().map(one).collect::<Vec<_>>().join(", ")
        ),
        None => format!("{} {}", a.status, one(&a.body)),
    }
}

/// Each managedFields entry as `manager operation apiVersion fields`.
fn managers_summary(o: &Value) -> String {
    o.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    format!(
                        "{} {} {} {}",
                        e["manager"].as_str().unwrap_or(""),
                        e["operation"].as_str().unwrap_or(""),
                        e["apiVersion"].as_str().unwrap_or(""),
                        e["fieldsV1"]
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

/// The events of a watch that ends by itself (`timeoutSeconds`), each as a conversion
/// summary's object, sorted (the real server's initial events come in no set order).
async fn watch_summary(client: &kube::Client, path: &str, run: &str) -> String {
    let req = ok(http::Request::builder()
        .method("GET")
        .uri(path)
        .header("accept", "application/json")
        .body(kube::client::Body::empty()));
    let resp = ok(client.send(req).await);
    let status = resp.status().as_u16();
    let bytes = ok(resp.into_body().collect().await).to_bytes();
    let mut events: Vec<String> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let event: Value = serde_json::from_str(l).unwrap_or(Value::Null);
            let object = Answer {
                status,
                warnings: Vec::new(),
                body: event.get("object").cloned().unwrap_or(Value::Null),
            };
            format!(
                "{} {}",
                event.get("type").and_then(Value::as_str).unwrap_or(""),
                conversion_summary(&object, run)
            )
        })
        .collect();
    events.sort();
    format!("{status} [{}]", events.join(", "))
}

/// The conversion scenarios on one server.
async fn run_conversion(
    client: &kube::Client,
    run: &str,
    addr: std::net::SocketAddr,
    ca: &str,
) -> BTreeMap<String, String> {
    let ns = format!("{run}-conv");
    let a = send(
        client,
        "POST",
        "/api/v1/namespaces",
        "application/json",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
    )
    .await;
    assert_eq!(a.status, 201, "{a:?}");
    for (plural, kind, behaviour) in [
        ("widgets", "Widget", "convert"),
        ("gadgets", "Gadget", "convert-fail"),
    ] {
        let body = crd(
            plural,
            kind,
            &format!("https://{addr}/{behaviour}/{plural}"),
            ca,
        );
        let a = send(
            client,
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            Some(body),
        )
        .await;
        assert_eq!(a.status, 201, "{a:?}");
        // Served once established.
        for _ in 0..100 {
            let a = send(
                client,
                "GET",
                &format!("/apis/fvr.example.com/v1/namespaces/{ns}/{plural}"),
                "application/json",
                None,
            )
            .await;
            if a.status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let mut out = BTreeMap::new();
    let p = |v: &str, plural: &str| format!("/apis/fvr.example.com/{v}/namespaces/{ns}/{plural}");
    let w = |v: &str, name: &str, field: &str, n: i64| {
        json!({"apiVersion": format!("fvr.example.com/{v}"), "kind": "Widget",
        "metadata": {"name": name}, "spec": {field: n}})
    };
    let mut step = async |name: &str, method: &str, path: String, ct: &str, body: Option<Value>| {
        let a = send(client, method, &path, ct, body).await;
        out.insert(format!("conversion: {name}"), conversion_summary(&a, run));
        a
    };
    step(
        "create through v2",
        "POST",
        p("v2", "widgets"),
        "application/json",
        Some(w("v2", "a", "replicas", 3)),
    )
    .await;
    step(
        "get through v1",
        "GET",
        format!("{}/a", p("v1", "widgets")),
        "application/json",
        None,
    )
    .await;
    let current = step(
        "get through v2",
        "GET",
        format!("{}/a", p("v2", "widgets")),
        "application/json",
        None,
    )
    .await;
    step(
        "create through v1",
        "POST",
        p("v1", "widgets"),
        "application/json",
        Some(w("v1", "b", "size", 7)),
    )
    .await;
    step(
        "list through v2",
        "GET",
        p("v2", "widgets"),
        "application/json",
        None,
    )
    .await;
    step(
        "list through v1",
        "GET",
        p("v1", "widgets"),
        "application/json",
        None,
    )
    .await;
    step(
        "merge patch through v2",
        "PATCH",
        format!("{}/a", p("v2", "widgets")),
        "application/merge-patch+json",
        Some(json!({"spec": {"replicas": 5}})),
    )
    .await;
    step(
        "patched, through v1",
        "GET",
        format!("{}/a", p("v1", "widgets")),
        "application/json",
        None,
    )
    .await;
    let mut put = w("v2", "a", "replicas", 9);
    put["metadata"]["resourceVersion"] = current
        .body
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    step(
        "stale update through v2",
        "PUT",
        format!("{}/a", p("v2", "widgets")),
        "application/json",
        Some(put.clone()),
    )
    .await;
    let fresh = send(
        client,
        "GET",
        &format!("{}/a", p("v2", "widgets")),
        "application/json",
        None,
    )
    .await;
    put["metadata"]["resourceVersion"] = fresh
        .body
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    step(
        "update through v2",
        "PUT",
        format!("{}/a", p("v2", "widgets")),
        "application/json",
        Some(put),
    )
    .await;
    step(
        "updated, through v1",
        "GET",
        format!("{}/a", p("v1", "widgets")),
        "application/json",
        None,
    )
    .await;
    // Server-side apply through the version that is not stored: applied in v2 (the
    // manager's entry records v2), stored as v1.
    let apply = "application/apply-patch+yaml";
    let apply_path =
        |name: &str, manager: &str| format!("{}/{name}?fieldManager={manager}", p("v2", "widgets"));
    step(
        "apply creates through v2",
        "PATCH",
        apply_path("c", "alice"),
        apply,
        Some(w("v2", "c", "replicas", 4)),
    )
    .await;
    step(
        "apply updates through v2",
        "PATCH",
        apply_path("c", "alice"),
        apply,
        Some(w("v2", "c", "replicas", 6)),
    )
    .await;
    step(
        "apply conflicts through v2",
        "PATCH",
        apply_path("c", "bob"),
        apply,
        Some(w("v2", "c", "replicas", 8)),
    )
    .await;
    let applied = step(
        "applied, through v1",
        "GET",
        format!("{}/c", p("v1", "widgets")),
        "application/json",
        None,
    )
    .await;
    let applied_managers = managers_summary(&applied.body);
    let g = |v: &str, field: &str| {
        json!({"apiVersion": format!("fvr.example.com/{v}"), "kind": "Gadget",
        "metadata": {"name": "a"}, "spec": {field: 1}})
    };
    step(
        "failing: create through v2",
        "POST",
        p("v2", "gadgets"),
        "application/json",
        Some(g("v2", "replicas")),
    )
    .await;
    step(
        "failing: create through v1",
        "POST",
        p("v1", "gadgets"),
        "application/json",
        Some(g("v1", "size")),
    )
    .await;
    step(
        "failing: get through v2",
        "GET",
        format!("{}/a", p("v2", "gadgets")),
        "application/json",
        None,
    )
    .await;
    step(
        "failing: list through v2",
        "GET",
        p("v2", "gadgets"),
        "application/json",
        None,
    )
    .await;
    out.insert("conversion: apply's managedFields".into(), applied_managers);
    // A watch through each version from the start: every event's object converted.
    for v in ["v2", "v1"] {
        let path = format!(
            "{}?watch=1&resourceVersion=0&timeoutSeconds=1",
            p(v, "widgets")
        );
        out.insert(
            format!("conversion: watch through {v}"),
            watch_summary(client, &path, run).await,
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_webhooks_answer_as_kube_apiserver() {
    init_tracing();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let run = format!("fvr{}", run_id());
    let LoopbackCertificates { ca, cert, key } = ok(loopback_certificates("admission-fvr-ca"));
    let other_ca = ok(loopback_certificates("another-ca")).ca;
    let seen_real: Seen = Arc::default();
    let seen_fake: Seen = Arc::default();
    let addr_real = serve_webhook(&cert, &key, seen_real.clone()).await;
    let addr_fake = serve_webhook(&cert, &key, seen_fake.clone()).await;
    // A port nothing listens on.
    let down = {
        let l = ok(std::net::TcpListener::bind("127.0.0.1:0"));
        ok(l.local_addr()).port()
    };

    let server = ok(RealApiServer::start().await);
    let real = ok(server.client());
    let mut real_answers =
        run_scenarios(&real, &run, &run, &hooks(addr_real, &ca, &other_ca, down)).await;
    real_answers.extend(run_conversion(&real, &run, addr_real, &ca).await);

    let fake = ok(FakeApiServer::new().client());
    let mut fake_answers =
        run_scenarios(&fake, &run, &run, &hooks(addr_fake, &ca, &other_ca, down)).await;
    fake_answers.extend(run_conversion(&fake, &run, addr_fake, &ca).await);

    let mut table =
        String::from("| scenario | kube-apiserver | in-memory | agree |\n|---|---|---|---|\n");
    let mut disagree = Vec::new();
    for (k, r) in &real_answers {
        let f = fake_answers.get(k).cloned().unwrap_or_default();
        let same = normalise_timeouts(r) == normalise_timeouts(&f);
        table.push_str(&format!(
            "| {k} | {r} | {f} | {} |\n",
            if same { "yes" } else { "NO" }
        ));
        if !same {
            disagree.push(k.clone());
        }
    }
    // The reviews the webhook received.
    let real_seen = seen_real.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let fake_seen = seen_fake.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for tag in [
        "validate",
        "patch",
        "patch-v",
        "delete",
        "dry",
        "reinvoke-first",
        "reinvoke-second",
        "scale-validate",
        "scale-unseen",
        "scale-mutate",
        "scale-mutate-v",
        "pod-annotate",
        "pod-validate",
        "pod-unseen",
    ] {
        let r: Vec<String> = real_seen
            .get(tag)
            .into_iter()
            .flatten()
            .map(|v| review_summary(v, &run))
            .collect();
        let f: Vec<String> = fake_seen
            .get(tag)
            .into_iter()
            .flatten()
            .map(|v| review_summary(v, &run))
            .collect();
        let same = r == f;
        table.push_str(&format!(
            "| reviews sent to {tag} | {} | {} | {} |\n",
            r.join("<br>"),
            f.join("<br>"),
            if same { "yes" } else { "NO" }
        ));
        if !same {
            disagree.push(format!("reviews {tag}"));
        }
    }
    println!("{table}");
    if let Ok(path) = std::env::var("KUBE_CODEGEN_ADMISSION_TABLE") {
        ok(std::fs::write(path, &table));
    }
    assert!(
        disagree.is_empty(),
        "the servers disagree on {disagree:?}:\n{table}"
    );
}

/// An answer that is not JSON: Go's decoder words its error after a deterministic prefix,
/// which is kept; the rest, to the end of the quoted message, is not compared.
fn normalise_timeouts(s: &str) -> String {
    const PARSE: &str = "json parse error: ";
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(PARSE) {
        out.push_str(&rest[..i + PARSE.len()]);
        out.push('…');
        rest = &rest[i + PARSE.len()..];
        let bytes = rest.as_bytes();
        let end = (0..bytes.len())
            .find(|&j| bytes[j] == b'"' && (j == 0 || bytes[j - 1] != b'\\'))
            .unwrap_or(bytes.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
