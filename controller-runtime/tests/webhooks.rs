//! Webhooks through the public interface: a manager's webhook server over HTTPS with a CA and
//! certificate made by the test, typed validators and defaulters, conversion, rotation of the
//! certificate files, readiness and metrics.

use crate::common;

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{eventually, http_get, http_response, init_tracing, tls_connect};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionResponse, AdmissionReview};
use kube_controller_runtime::webhook::admission::{
    Defaulter, Denial, Request, ValidationResult, Validator,
};
use kube_controller_runtime::webhook::conversion::{
    ConversionError, Convertible, Hub, LOST_FIELDS_ANNOTATION, LossPolicy,
};
use kube_controller_runtime::webhook::{Webhook, WebhookError, mutate_path, validate_path};
use kube_controller_runtime::{Manager, ManagerError};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------------------------------------
// Certificates and an HTTPS client

/// A CA that signs serving certificates for `localhost` and `127.0.0.1`.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new() -> Ca {
        let key = ok(KeyPair::generate());
        let mut params = ok(CertificateParams::new(Vec::<String>::new()));
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "webhook-test-ca");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = ok(params.self_signed(&key));
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A fresh serving certificate and key, PEM.
    fn serving(&self) -> (String, String) {
        let key = ok(KeyPair::generate());
        let mut params = ok(CertificateParams::new(vec!["localhost".to_string()]));
        params
            .distinguished_name
            .push(DnType::CommonName, "webhook-test");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let cert = ok(params.signed_by(&key, &self.issuer));
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes `tls.crt` and `tls.key` into `dir`, each by a rename (as the kubelet swaps a Secret
/// volume's files), the certificate first.
fn write_pair(dir: &Path, (cert, key): &(String, String), between: impl FnOnce()) {
    let replace = |name: &str, text: &str| {
        let tmp = dir.join(format!(".{name}.tmp"));
        ok(std::fs::write(&tmp, text));
        ok(std::fs::rename(&tmp, dir.join(name)));
    };
    replace("tls.crt", cert);
    between();
    replace("tls.key", key);
}

/// One POST over a new TLS connection: the status, the body and the server's certificate.
async fn post(
    addr: SocketAddr,
    ca_pem: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut tls = tls_connect(addr, ca_pem).await;
    let peer = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    ok(tls.write_all(head.as_bytes()).await);
    ok(tls.write_all(body).await);
    let mut buf = Vec::new();
    let _ = tls.read_to_end(&mut buf).await;
    let (code, body) = http_response(&buf);
    (code, body, peer)
}

// ---------------------------------------------------------------------------------------------
// A manager with a webhook server

struct Running {
    mgr: Manager,
    addr: SocketAddr,
    probes: SocketAddr,
    ca: Ca,
    dir: tempfile::TempDir,
    stop: CancellationToken,
}

impl Running {
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (code, text, _) = post(
            self.addr,
            &self.ca.pem,
            path,
            "application/json",
            &ok(serde_json::to_vec(body)),
        )
        .await;
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (code, v)
    }

    async fn admit(&self, path: &str, review: &Value) -> AdmissionResponse {
        let (code, v) = self.post(path, review).await;
        assert_eq!(code, 200, "{v}");
        let review: AdmissionReview<DynamicObject> = ok(serde_json::from_value(v));
        review
            .response
            .unwrap_or_else(|| panic!("an AdmissionReview without a response"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A manager over an in-memory API server, with certificates in a fresh directory; `setup`
/// registers the webhooks; started, its webhook server serving.
async fn start(setup: impl FnOnce(&Manager)) -> Running {
    let ca = Ca::new();
    let dir = ok(tempfile::tempdir());
    write_pair(dir.path(), &ca.serving(), || {});
    start_in(ca, dir, setup).await
}

/// As [`start`], with the certificate files already in `dir`.
async fn start_in(ca: Ca, dir: tempfile::TempDir, setup: impl FnOnce(&Manager)) -> Running {
    init_tracing();
    let (client, _handle) = common::fake();
    let mgr = ok(Manager::builder(client)
        .webhook_host("127.0.0.1")
        .webhook_port(0)
        .webhook_cert_dir(dir.path())
        .health_probe_bind_address("127.0.0.1:0")
        .build());
    setup(&mgr);
    let stop = CancellationToken::new();
    let (m, s) = (mgr.clone(), stop.clone());
    tokio::spawn(async move { m.start(s.cancelled_owned()).await });
    let bound = eventually("the webhook server listens", 10, || {
        let b = mgr.bound_addresses();
        (b.len() == 2).then_some(b)
    })
    .await;
    let find = |what: &str| {
        bound
            .iter()
            .find(|(w, _)| *w == what)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("no {what} address in {bound:?}"))
    };
    Running {
        addr: find("webhook"),
        probes: find("health probes"),
        mgr,
        ca,
        dir,
        stop,
    }
}

// ---------------------------------------------------------------------------------------------
// Admission

struct ConfigMapRules {
    dry_runs: Arc<AtomicUsize>,
}

impl Validator<ConfigMap> for ConfigMapRules {
    async fn validate_create(&self, req: &Request, cm: &ConfigMap) -> ValidationResult {
        if req.dry_run {
            self.dry_runs.fetch_add(1, Ordering::SeqCst);
        }
        let data = cm.data.clone().unwrap_or_default();
        if cm.metadata.name.as_deref() == Some("boom") {
            panic!("validator exploded on purpose");
        }
        if data.contains_key("password") {
            return Err(Denial::invalid("ConfigMaps hold no passwords")
                .with_cause("data.password", "use a Secret")
                .with_warning("see the security guide"));
        }
        let mut warnings = Vec::new();
        if data.is_empty() {
            warnings.push("an empty ConfigMap".to_string());
        }
        if req.dry_run {
            warnings.push("dry run: nothing recorded".to_string());
        }
        Ok(warnings)
    }

    async fn validate_update(
        &self,
        _req: &Request,
        old: &ConfigMap,
        new: &ConfigMap,
    ) -> ValidationResult {
        if old.data.as_ref().and_then(|d| d.get("owner"))
            != new.data.as_ref().and_then(|d| d.get("owner"))
        {
            return Err(Denial::forbidden("data.owner is immutable"));
        }
        Ok(vec![])
    }

    async fn validate_delete(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
        if cm.metadata.labels.as_ref().and_then(|l| l.get("protected")) == Some(&"true".into()) {
            return Err(Denial::forbidden("protected"));
        }
        Ok(vec![])
    }
}

struct TeamDefaults(String);

impl Defaulter<ConfigMap> for TeamDefaults {
    async fn default(&self, req: &Request, cm: &mut ConfigMap) -> Result<(), Denial> {
        if cm.metadata.name.as_deref() == Some("refused") {
            return Err(Denial::forbidden("no defaults for this one"));
        }
        cm.metadata
            .labels
            .get_or_insert_default()
            .entry("team".into())
            .or_insert_with(|| self.0.clone());
        let data = cm.data.get_or_insert_default();
        data.entry("mode".into())
            .or_insert_with(|| "standard".into());
        if req.dry_run {
            data.insert("dry-run".into(), "seen".into());
        }
        Ok(())
    }
}

fn cm(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "uid": "u-1", "creationTimestamp": null},
        "data": data,
    })
}

fn review(operation: &str, object: Option<Value>, old: Option<Value>, dry_run: bool) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "3f5c-uid",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "x", "namespace": "ns",
            "operation": operation,
            "userInfo": {"username": "alice"},
            "object": object, "oldObject": old,
            "dryRun": dry_run,
        }
    })
}

async fn admission_server() -> (Running, Arc<AtomicUsize>) {
    let dry_runs = Arc::new(AtomicUsize::new(0));
    let d = dry_runs.clone();
    let running = start(move |mgr| {
        ok(Webhook::builder(mgr)
            .for_::<ConfigMap>()
            .with_defaulter(TeamDefaults("platform".into()))
            .with_validator(ConfigMapRules { dry_runs: d })
            .complete());
    })
    .await;
    (running, dry_runs)
}

#[test]
fn paths_are_kubebuilders() {
    assert_eq!(validate_path::<ConfigMap>(), "/validate--v1-configmap");
    assert_eq!(mutate_path::<ConfigMap>(), "/mutate--v1-configmap");
    assert_eq!(mutate_path::<V1>(), "/mutate-demo-example-com-v1-mydemo");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_validator_allows_with_warnings_and_denies_with_causes() {
    let (s, _) = admission_server().await;
    let path = validate_path::<ConfigMap>();

    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("a", json!({}))), None, false),
        )
        .await;
    assert!(resp.allowed);
    assert_eq!(resp.uid, "3f5c-uid");
    assert_eq!(resp.warnings, Some(vec!["an empty ConfigMap".to_string()]));

    let resp = s
        .admit(
            &path,
            &review(
                "CREATE",
                Some(cm("a", json!({"password": "x"}))),
                None,
                false,
            ),
        )
        .await;
    assert!(!resp.allowed);
    assert_eq!(resp.result.code, 422);
    assert_eq!(resp.result.reason, "Invalid");
    assert_eq!(resp.result.message, "ConfigMaps hold no passwords");
    let causes = resp.result.details.map(|d| d.causes).unwrap_or_default();
    assert_eq!(causes.len(), 1);
    assert_eq!(
        (causes[0].field.as_str(), causes[0].message.as_str()),
        ("data.password", "use a Secret")
    );
    assert_eq!(
        resp.warnings,
        Some(vec!["see the security guide".to_string()])
    );

    // UPDATE sees old and new; DELETE sees the stored object.
    let old = cm("a", json!({"owner": "alice"}));
    let resp = s
        .admit(
            &path,
            &review(
                "UPDATE",
                Some(cm("a", json!({"owner": "bob"}))),
                Some(old.clone()),
                false,
            ),
        )
        .await;
    assert!(!resp.allowed);
    assert_eq!(
        (resp.result.code, resp.result.message.as_str()),
        (403, "data.owner is immutable")
    );
    let resp = s
        .admit(
            &path,
            &review("UPDATE", Some(old.clone()), Some(old.clone()), false),
        )
        .await;
    assert!(resp.allowed);
    let mut protected = cm("a", json!({}));
    protected["metadata"]["labels"] = json!({"protected": "true"});
    let resp = s
        .admit(&path, &review("DELETE", None, Some(protected), false))
        .await;
    assert!(!resp.allowed);
    assert_eq!(resp.result.message, "protected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_reaches_the_validator_and_the_defaulter() {
    let (s, dry_runs) = admission_server().await;
    let resp = s
        .admit(
            &validate_path::<ConfigMap>(),
            &review("CREATE", Some(cm("a", json!({"k": "v"}))), None, true),
        )
        .await;
    assert!(resp.allowed);
    assert_eq!(
        resp.warnings,
        Some(vec!["dry run: nothing recorded".to_string()])
    );
    assert_eq!(dry_runs.load(Ordering::SeqCst), 1);

    let object = cm("a", json!({"k": "v"}));
    let resp = s
        .admit(
            &mutate_path::<ConfigMap>(),
            &review("CREATE", Some(object.clone()), None, true),
        )
        .await;
    let patched = apply(&object, &resp);
    assert_eq!(patched["data"]["dry-run"], "seen");
}

fn apply(object: &Value, resp: &AdmissionResponse) -> Value {
    assert!(resp.allowed, "{resp:?}");
    let patch: json_patch::Patch = ok(serde_json::from_slice(
        resp.patch.as_deref().unwrap_or(b"[]"),
    ));
    let mut doc = object.clone();
    ok(json_patch::patch(&mut doc, &patch.0));
    doc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_defaulters_patch_applied_gives_the_defaulted_object() {
    let (s, _) = admission_server().await;
    let path = mutate_path::<ConfigMap>();
    // A field ConfigMap does not know, and metadata the type writes differently
    // (`creationTimestamp: null`), stay as they are: the patch holds only the defaults.
    let mut object = cm("a", json!({"k": "v"}));
    object["futureField"] = json!({"kept": true});
    let resp = s
        .admit(&path, &review("CREATE", Some(object.clone()), None, false))
        .await;
    let v: Value = ok(serde_json::to_value(&resp));
    assert_eq!(v["patchType"], "JSONPatch", "{v}");
    let patched = apply(&object, &resp);
    let mut expected = object.clone();
    expected["metadata"]["labels"] = json!({"team": "platform"});
    expected["data"]["mode"] = json!("standard");
    assert_eq!(patched, expected);

    // Nothing to default: no patch at all.
    let mut done = cm("b", json!({"mode": "custom"}));
    done["metadata"]["labels"] = json!({"team": "other"});
    let resp = s
        .admit(
            &path,
            &review("UPDATE", Some(done.clone()), Some(done), false),
        )
        .await;
    assert!(resp.allowed);
    assert_eq!(resp.patch, None);

    // A defaulter's denial; DELETE is allowed untouched.
    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("refused", json!({}))), None, false),
        )
        .await;
    assert!(!resp.allowed);
    assert_eq!(resp.result.message, "no defaults for this one");
    let resp = s
        .admit(
            &path,
            &review("DELETE", None, Some(cm("a", json!({}))), false),
        )
        .await;
    assert!(resp.allowed && resp.patch.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_an_error_answer_and_the_server_keeps_serving() {
    let (s, _) = admission_server().await;
    let path = validate_path::<ConfigMap>();
    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("boom", json!({}))), None, false),
        )
        .await;
    assert!(!resp.allowed);
    assert_eq!(resp.result.code, 500);
    assert!(
        resp.result
            .message
            .contains("validator exploded on purpose"),
        "{}",
        resp.result.message
    );
    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("fine", json!({"k": "v"}))), None, false),
        )
        .await;
    assert!(resp.allowed);
    assert!(
        s.mgr
            .metrics()
            .encode()
            .contains("controller_runtime_webhook_panics_total 1"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_reviews_and_unserved_kinds_get_clear_errors() {
    let (s, _) = admission_server().await;
    let path = validate_path::<ConfigMap>();

    // Not JSON: an AdmissionReview saying so, code 400.
    let (code, text, _) = post(s.addr, &s.ca.pem, &path, "application/json", b"{not json").await;
    assert_eq!(code, 200);
    let v: Value = ok(serde_json::from_str(&text));
    assert_eq!(v["response"]["allowed"], false, "{v}");
    assert_eq!(v["response"]["status"]["code"], 400, "{v}");
    assert!(
        v["response"]["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot decode the AdmissionReview"),
        "{v}"
    );
    // No request, an empty body, another kind of review.
    for body in [
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
        json!({"apiVersion": "v1", "kind": "ConfigMap"}),
    ] {
        let (_, v) = s.post(&path, &body).await;
        assert_eq!(v["response"]["status"]["code"], 400, "{v}");
    }
    let (_, text, _) = post(s.addr, &s.ca.pem, &path, "application/json", b"").await;
    assert!(text.contains("request body is empty"), "{text}");
    // Not JSON by its content type: refused before decoding.
    let (code, text, _) = post(s.addr, &s.ca.pem, &path, "text/plain", b"{}").await;
    assert_eq!(code, 400, "{text}");
    assert!(text.contains("expected application/json"), "{text}");
    // An object that does not decode as a ConfigMap.
    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("a", json!("not a map"))), None, false),
        )
        .await;
    assert_eq!(resp.result.code, 400);
    assert!(
        resp.result.message.contains("cannot decode object"),
        "{}",
        resp.result.message
    );

    // A review of a Secret sent to the ConfigMap webhook.
    let mut secret = review("CREATE", Some(cm("a", json!({}))), None, false);
    secret["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "Secret"});
    let resp = s.admit(&path, &secret).await;
    assert!(!resp.allowed);
    assert_eq!(resp.result.code, 400);
    assert_eq!(
        resp.result.message,
        "this webhook serves v1, Kind=ConfigMap, not v1, Kind=Secret"
    );

    // An unknown path, and GET: no review.
    let (code, _, _) = post(
        s.addr,
        &s.ca.pem,
        "/validate-nothing",
        "application/json",
        b"{}",
    )
    .await;
    assert_eq!(code, 404);
    // Still serving.
    let resp = s
        .admit(
            &path,
            &review("CREATE", Some(cm("a", json!({"k": "v"}))), None, false),
        )
        .await;
    assert!(resp.allowed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_metrics_have_controller_runtimes_names() {
    let (s, _) = admission_server().await;
    let (code, body) = http_get(s.probes, "/readyz/webhook").await;
    assert_eq!((code, body.as_str()), (200, "ok"));
    let (_, body) = http_get(s.probes, "/readyz?verbose").await;
    assert!(body.contains("[+]webhook ok"), "{body}");

    let path = validate_path::<ConfigMap>();
    for _ in 0..3 {
        s.admit(
            &path,
            &review("CREATE", Some(cm("a", json!({}))), None, false),
        )
        .await;
    }
    let text = s.mgr.metrics().encode();
    let families = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("{e}"));
    let value = |name: &str, labels: &[(&str, &str)]| {
        families
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| s.value.clone())
    };
    assert!(
        matches!(
            value("controller_runtime_webhook_requests_total", &[("webhook", &path), ("code", "200")]),
            Some(prometheus_parse::Value::Counter(n) | prometheus_parse::Value::Untyped(n)) if n == 3.0
        ),
        "{text}"
    );
    assert!(
        matches!(
            value(
                "controller_runtime_webhook_latency_seconds",
                &[("webhook", &path)]
            ),
            Some(prometheus_parse::Value::Histogram(_))
        ),
        "{text}"
    );
    assert!(
        matches!(
            value("controller_runtime_webhook_requests_in_flight", &[("webhook", &path)]),
            Some(prometheus_parse::Value::Gauge(n)) if n == 0.0
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_are_checked() {
    let (client, _h) = common::fake();
    let mgr = ok(Manager::builder(client).build());
    let empty = Webhook::builder(&mgr).for_::<ConfigMap>().complete();
    assert!(matches!(empty, Err(WebhookError::Empty(_))), "{empty:?}");
    ok(Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_validator(ConfigMapRules {
            dry_runs: Arc::default(),
        })
        .complete());
    let again = Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_validator(ConfigMapRules {
            dry_runs: Arc::default(),
        })
        .complete();
    assert!(
        matches!(&again, Err(WebhookError::DuplicatePath(p)) if p == "/validate--v1-configmap"),
        "{again:?}"
    );
    let server = ok(mgr.webhook_server());
    assert_eq!(server.paths(), vec!["/validate--v1-configmap".to_string()]);
    assert_eq!(server.options().port, 9443);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_certificate_stops_the_manager_with_the_flag_to_fix() {
    let (client, _h) = common::fake();
    let dir = ok(tempfile::tempdir());
    let mgr = ok(Manager::builder(client)
        .webhook_host("127.0.0.1")
        .webhook_port(0)
        .webhook_cert_dir(dir.path())
        .build());
    ok(Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_validator(ConfigMapRules {
            dry_runs: Arc::default(),
        })
        .complete());
    let err = mgr
        .start(std::future::pending())
        .await
        .err()
        .unwrap_or_else(|| panic!("a missing tls.crt must stop the manager"));
    assert!(err.to_string().contains("tls.crt"), "{err}");
    #[cfg(feature = "flags")]
    assert_eq!(
        kube_controller_runtime::flags::ManagerFlags::flag_for(&err),
        Some("--webhook-cert-dir")
    );
    assert!(matches!(err, ManagerError::Runnable { .. }));
}

// ---------------------------------------------------------------------------------------------
// Certificate rotation

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_certificates_are_served_and_no_request_fails() {
    let (s, _) = admission_server().await;
    let path = validate_path::<ConfigMap>();
    let body = ok(serde_json::to_vec(&review(
        "CREATE",
        Some(cm("a", json!({"k": "v"}))),
        None,
        false,
    )));
    let stop = CancellationToken::new();
    let (addr, ca, st, b, p) = (
        s.addr,
        s.ca.pem.clone(),
        stop.clone(),
        body.clone(),
        path.clone(),
    );
    let caller = tokio::spawn(async move {
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let mut calls = 0usize;
        while !st.is_cancelled() {
            let (code, text, peer) = post(addr, &ca, &p, "application/json", &b).await;
            assert_eq!(code, 200, "{text}");
            let v: Value = ok(serde_json::from_str(&text));
            assert_eq!(v["response"]["allowed"], true, "{v}");
            if seen.last() != Some(&peer) {
                seen.push(peer);
            }
            calls += 1;
        }
        (calls, seen)
    });
    let mut served = Vec::new();
    for _ in 0..3 {
        let pair = s.ca.serving();
        let der = ok(CertificateDer::from_pem_slice(pair.0.as_bytes())).to_vec();
        // Between the two renames the certificate is new and the key old: that pair must
        // not be used.
        write_pair(s.dir.path(), &pair, || {
            std::thread::sleep(std::time::Duration::from_millis(50))
        });
        let (addr, ca, p, b) = (s.addr, s.ca.pem.clone(), path.clone(), body.clone());
        common::eventually_async("the new certificate is served", 10, || {
            let (ca, p, b, der) = (ca.clone(), p.clone(), b.clone(), der.clone());
            async move {
                let (_, _, peer) = post(addr, &ca, &p, "application/json", &b).await;
                (peer == der).then_some(())
            }
        })
        .await;
        served.push(der);
    }
    stop.cancel();
    let (calls, seen) = ok(caller.await);
    assert!(calls > 0);
    // The caller only ever saw whole pairs, each rotation in order.
    for der in &seen[1..] {
        assert!(
            served.contains(der),
            "a certificate that was never written whole"
        );
    }
}

/// A Secret volume as the kubelet writes it: the files are symlinks through `..data`, itself a
/// symlink to a timestamped directory that an update replaces in one rename.
#[cfg(unix)]
fn secret_volume(dir: &Path, generation: u32, (cert, key): &(String, String)) {
    let data = format!("..2026_11_26_{generation}");
    ok(std::fs::create_dir(dir.join(&data)));
    ok(std::fs::write(dir.join(&data).join("tls.crt"), cert));
    ok(std::fs::write(dir.join(&data).join("tls.key"), key));
    ok(std::os::unix::fs::symlink(&data, dir.join("..data_tmp")));
    ok(std::fs::rename(dir.join("..data_tmp"), dir.join("..data")));
    for name in ["tls.crt", "tls.key"] {
        if std::fs::symlink_metadata(dir.join(name)).is_err() {
            ok(std::os::unix::fs::symlink(
                format!("..data/{name}"),
                dir.join(name),
            ));
        }
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_volume_update_is_served() {
    let ca = Ca::new();
    let dir = ok(tempfile::tempdir());
    secret_volume(dir.path(), 1, &ca.serving());
    let s = start_in(ca, dir, |mgr| {
        ok(Webhook::builder(mgr)
            .for_::<ConfigMap>()
            .with_validator(ConfigMapRules {
                dry_runs: Arc::default(),
            })
            .complete());
    })
    .await;
    let path = validate_path::<ConfigMap>();
    let body = ok(serde_json::to_vec(&review(
        "CREATE",
        Some(cm("a", json!({"k": "v"}))),
        None,
        false,
    )));
    let (code, _, first) = post(s.addr, &s.ca.pem, &path, "application/json", &body).await;
    assert_eq!(code, 200);
    let pair = s.ca.serving();
    let der = ok(CertificateDer::from_pem_slice(pair.0.as_bytes())).to_vec();
    assert_ne!(first, der);
    secret_volume(s.dir.path(), 2, &pair);
    // The files' paths are unchanged; what they resolve to is new.
    let (code, text, served) = post(s.addr, &s.ca.pem, &path, "application/json", &body).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(served, der, "the next handshake uses the new pair");
}

// ---------------------------------------------------------------------------------------------
// Conversion

macro_rules! resource {
    ($t:ident, $version:literal) => {
        impl kube::Resource for $t {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                "Mydemo".into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                "demo.example.com".into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
                "mydemos".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// The hub: `ip`, `port` and a `weight` the spoke cannot hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct V1 {
    metadata: ObjectMeta,
    spec: V1Spec,
}
#[derive(Debug, Clone, Serialize, Deserialize)]
struct V1Spec {
    ip: String,
    port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    weight: Option<u32>,
}
resource!(V1, "v1");
impl Hub for V1 {}

/// The spoke: `address: "<ip>:<port>"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct V1alpha1 {
    metadata: ObjectMeta,
    spec: V1alpha1Spec,
}
#[derive(Debug, Clone, Serialize, Deserialize)]
struct V1alpha1Spec {
    address: String,
}
resource!(V1alpha1, "v1alpha1");

impl Convertible<V1> for V1alpha1 {
    fn convert_to(&self) -> Result<V1, ConversionError> {
        assert_ne!(self.spec.address, "panic", "a conversion that panics");
        let (ip, port) = self.spec.address.rsplit_once(':').ok_or_else(|| {
            ConversionError::new(format!("address {:?} is no ip:port", self.spec.address))
        })?;
        let port = port
            .parse()
            .map_err(|e| ConversionError::new(format!("port {port:?}: {e}")))?;
        Ok(V1 {
            metadata: self.metadata.clone(),
            spec: V1Spec {
                ip: ip.into(),
                port,
                weight: None,
            },
        })
    }

    fn convert_from(hub: &V1) -> Result<Self, ConversionError> {
        Ok(V1alpha1 {
            metadata: hub.metadata.clone(),
            spec: V1alpha1Spec {
                address: format!("{}:{}", hub.spec.ip, hub.spec.port),
            },
        })
    }
}

fn v1(name: &str, weight: Option<u32>) -> Value {
    let mut o = json!({
        "apiVersion": "demo.example.com/v1", "kind": "Mydemo",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"ip": "10.0.0.1", "port": 80},
    });
    if let Some(w) = weight {
        o["spec"]["weight"] = json!(w);
    }
    o
}

fn v1alpha1(name: &str, address: &str) -> Value {
    json!({
        "apiVersion": "demo.example.com/v1alpha1", "kind": "Mydemo",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"address": address},
    })
}

fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": desired, "objects": objects},
    })
}

async fn conversion_server(policy: LossPolicy) -> Running {
    start(move |mgr| {
        ok(Webhook::builder(mgr)
            .for_::<V1>()
            .with_spoke::<V1alpha1>()
            .with_loss_policy(policy)
            .complete());
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversion_round_trips_every_object_through_the_hub() {
    let s = conversion_server(LossPolicy::Refuse).await;
    let (code, v) = s
        .post(
            "/convert",
            &conversion_review(
                "demo.example.com/v1alpha1",
                vec![v1("a", None), v1("b", None)],
            ),
        )
        .await;
    assert_eq!(code, 200);
    let r = &v["response"];
    assert_eq!(r["uid"], "conv-1");
    assert_eq!(r["result"]["status"], "Success", "{v}");
    assert_eq!(r["convertedObjects"][0], v1alpha1("a", "10.0.0.1:80"));
    assert_eq!(r["convertedObjects"][1]["metadata"]["name"], "b");

    // And back.
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1", vec![v1alpha1("a", "10.0.0.1:80")]),
        )
        .await;
    assert_eq!(v["response"]["convertedObjects"][0], v1("a", None), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_object_that_fails_fails_the_whole_review() {
    let s = conversion_server(LossPolicy::Refuse).await;
    let failed = |v: &Value| {
        let r = &v["response"];
        assert_eq!(r["result"]["status"], "Failure", "{v}");
        assert!(
            r["convertedObjects"].as_array().is_none_or(Vec::is_empty),
            "{v}"
        );
        r["result"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    // A conversion function's error.
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review(
                "demo.example.com/v1",
                vec![v1alpha1("good", "10.0.0.1:80"), v1alpha1("bad", "nowhere")],
            ),
        )
        .await;
    let m = failed(&v);
    assert!(
        m.contains("ns/bad") && m.contains("\"nowhere\" is no ip:port"),
        "{m}"
    );

    // An unknown version, as source and as desired.
    let mut v2 = v1("a", None);
    v2["apiVersion"] = json!("demo.example.com/v2");
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1alpha1", vec![v2]),
        )
        .await;
    let m = failed(&v);
    assert!(
        m.contains("unknown version \"v2\"") && m.contains("v1, v1alpha1"),
        "{m}"
    );
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v3", vec![v1("a", None)]),
        )
        .await;
    assert!(failed(&v).contains("unknown desired version \"v3\""));

    // A kind nobody registered.
    let mut other = v1("a", None);
    other["kind"] = json!("Other");
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1alpha1", vec![other]),
        )
        .await;
    assert!(failed(&v).contains("no conversion is registered for kind Other"));

    // Round-trip loss is refused by default, naming the field.
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1alpha1", vec![v1("heavy", Some(7))]),
        )
        .await;
    let m = failed(&v);
    assert!(m.contains("loses /spec/weight"), "{m}");

    // A conversion that panics: a failed review, code 500, and the server keeps serving.
    let (code, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1", vec![v1alpha1("p", "panic")]),
        )
        .await;
    assert_eq!(code, 500, "{v}");
    assert!(failed(&v).contains("a conversion that panics"), "{v}");
    assert!(
        s.mgr
            .metrics()
            .encode()
            .contains("controller_runtime_webhook_panics_total 1")
    );

    // Not a ConversionReview: 400.
    let (code, text, _) = post(s.addr, &s.ca.pem, "/convert", "application/json", b"[1,2]").await;
    assert_eq!(code, 400, "{text}");
    assert!(
        text.contains("cannot decode the ConversionReview"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_annotate_what_the_spoke_cannot_hold_comes_back() {
    let s = conversion_server(LossPolicy::Annotate).await;
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1alpha1", vec![v1("heavy", Some(7))]),
        )
        .await;
    assert_eq!(v["response"]["result"]["status"], "Success", "{v}");
    let mut spoke = v["response"]["convertedObjects"][0].clone();
    assert_eq!(spoke["spec"], json!({"address": "10.0.0.1:80"}));
    let note = spoke["metadata"]["annotations"][LOST_FIELDS_ANNOTATION]
        .as_str()
        .unwrap_or_else(|| panic!("no {LOST_FIELDS_ANNOTATION} in {spoke}"))
        .to_string();
    assert!(note.contains("/spec/weight"), "{note}");

    // Written back unchanged: the weight is restored and the annotation gone.
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1", vec![spoke.clone()]),
        )
        .await;
    assert_eq!(
        v["response"]["convertedObjects"][0],
        v1("heavy", Some(7)),
        "{v}"
    );

    // Changed through the spoke: the change and the weight both survive.
    spoke["spec"]["address"] = json!("10.0.0.2:81");
    let (_, v) = s
        .post(
            "/convert",
            &conversion_review("demo.example.com/v1", vec![spoke]),
        )
        .await;
    let hub = &v["response"]["convertedObjects"][0];
    assert_eq!(
        hub["spec"],
        json!({"ip": "10.0.0.2", "port": 81, "weight": 7}),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spokes_of_another_kind_are_refused() {
    #[derive(Debug, Clone, Serialize, Deserialize)]
    struct Stray {
        metadata: ObjectMeta,
    }
    impl kube::Resource for Stray {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;
        fn kind(_: &()) -> Cow<'_, str> {
            "Stray".into()
        }
        fn group(_: &()) -> Cow<'_, str> {
            "demo.example.com".into()
        }
        fn version(_: &()) -> Cow<'_, str> {
            "v2".into()
        }
        fn plural(_: &()) -> Cow<'_, str> {
            "strays".into()
        }
        fn meta(&self) -> &ObjectMeta {
            &self.metadata
        }
        fn meta_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }
    impl Convertible<V1> for Stray {
        fn convert_to(&self) -> Result<V1, ConversionError> {
            Err(ConversionError::new("never"))
        }
        fn convert_from(_: &V1) -> Result<Self, ConversionError> {
            Err(ConversionError::new("never"))
        }
    }
    let (client, _h) = common::fake();
    let mgr = ok(Manager::builder(client).build());
    let r = Webhook::builder(&mgr)
        .for_::<V1>()
        .with_spoke::<Stray>()
        .complete();
    assert!(
        matches!(r, Err(WebhookError::InvalidConversion(_))),
        "{r:?}"
    );
}
