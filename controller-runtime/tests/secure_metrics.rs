//! Secure metrics (`ManagerBuilder::metrics_secure`): `/metrics` over HTTPS, the bearer token
//! authenticated by a TokenReview and the user authorized by a SubjectAccessReview, against the
//! in-memory API server served over HTTPS (only its own token authenticates).

use crate::common;

use std::net::SocketAddr;

use common::{eventually, http_get, http_response, init_tracing, tls_connect};
use kube_codegen_runtime::fake::{FakeApiServer, REVIEW_KINDS, Reaction, ServedApiServer};
use kube_controller_runtime::{Manager, ManagerBuilder, ManagerError};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A served in-memory API server that answers the review kinds (the token and access reviews
/// the secure metrics endpoint sends), and a client of it.
async fn api_server() -> (FakeApiServer, ServedApiServer, kube::Client) {
    let server = ok(FakeApiServer::with_resources(REVIEW_KINDS));
    let served = ok(server
        .serve_with_token(([127, 0, 0, 1], 0).into(), "scraper-token")
        .await);
    let client = ok(served.client().await);
    (server, served, client)
}

/// Starts `builder`'s manager with secure metrics and plain probes on loopback; the manager,
/// the metrics and probe addresses and what stops it.
async fn start(builder: ManagerBuilder) -> (Manager, SocketAddr, SocketAddr, CancellationToken) {
    let mgr = ok(builder
        .metrics_bind_address("127.0.0.1:0")
        .health_probe_bind_address("127.0.0.1:0")
        .metrics_secure(true)
        .build());
    let stop = CancellationToken::new();
    let (m, s) = (mgr.clone(), stop.clone());
    tokio::spawn(async move { m.start(s.cancelled_owned()).await });
    let bound = eventually("the servers are bound", 10, || {
        let b = mgr.bound_addresses();
        (b.len() == 2).then_some(b)
    })
    .await;
    let addr = |what: &str| {
        bound
            .iter()
            .find(|(w, _)| *w == what)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("no {what} address"))
    };
    (mgr.clone(), addr("metrics"), addr("health probes"), stop)
}

/// `GET /metrics` over HTTPS trusting `ca_pem`, with `Authorization: Bearer <token>` when
/// given: the status code and the body.
async fn https_get(addr: SocketAddr, ca_pem: &str, token: Option<&str>) -> (u16, String) {
    let mut tls = tls_connect(addr, ca_pem).await;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req =
        format!("GET /metrics HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    ok(tls.write_all(req.as_bytes()).await);
    let mut buf = Vec::new();
    // A server may close without close_notify after `Connection: close`; what was read counts.
    let _ = tls.read_to_end(&mut buf).await;
    http_response(&buf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_metrics_need_an_authenticated_and_authorized_token() {
    init_tracing();
    let (server, _served, client) = api_server().await;
    let (mgr, metrics, probes, stop) = start(Manager::builder(client)).await;
    let ca = mgr
        .metrics_ca_pem()
        .unwrap_or_else(|| panic!("a self-signed certificate"))
        .to_string();

    // No token, a token in another scheme, a token the API server does not know: 401.
    let (code, body) = https_get(metrics, &ca, None).await;
    assert_eq!((code, body.as_str()), (401, "Unauthorized\n"));
    let (code, _) = https_get(metrics, &ca, Some("not-the-token")).await;
    assert_eq!(code, 401);

    // The API server's token: its user is reviewed for `get` on `/metrics`, and allowed.
    server.handle().clear_actions();
    let (code, body) = https_get(metrics, &ca, Some("scraper-token")).await;
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("leader_election") || body.contains("# EOF"),
        "{body}"
    );
    let actions = server.handle().actions();
    let sar = actions
        .iter()
        .find(|a| a.resource == "subjectaccessreviews")
        .and_then(|a| a.body.clone())
        .unwrap_or_else(|| panic!("no SubjectAccessReview in {actions:?}"));
    assert_eq!(sar["spec"]["user"], "admin");
    assert_eq!(
        sar["spec"]["nonResourceAttributes"],
        json!({"path": "/metrics", "verb": "get"})
    );
    assert!(actions.iter().any(|a| a.resource == "tokenreviews"));

    // Plain HTTP on the metrics port gets no metrics; the probes stay plain HTTP.
    let plain = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        let mut s = ok(tokio::net::TcpStream::connect(metrics).await);
        let _ = s
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await;
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf).await;
        String::from_utf8_lossy(&buf).to_string()
    })
    .await
    .unwrap_or_default();
    assert!(!plain.contains("200 OK"), "{plain}");
    let (code, _) = http_get(probes, "/healthz").await;
    assert_eq!(code, 200);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_metrics_answer_403_when_the_access_review_denies() {
    init_tracing();
    let (server, _served, client) = api_server().await;
    server
        .handle()
        .prepend_reactor("create", "subjectaccessreviews", |action| {
            let mut review = action.body.clone().unwrap_or_default();
            review["status"] = json!({"allowed": false, "reason": "no RBAC rule"});
            Reaction::Object(review)
        });
    let (mgr, metrics, _, stop) = start(Manager::builder(client)).await;
    let ca = mgr.metrics_ca_pem().unwrap_or_default().to_string();
    let (code, body) = https_get(metrics, &ca, Some("scraper-token")).await;
    assert_eq!(
        (code, body.as_str()),
        (403, "Authorization denied for user admin\n")
    );
    let (code, _) = https_get(metrics, &ca, None).await;
    assert_eq!(code, 401);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_that_fails_is_a_500_and_plain_metrics_stay_plain() {
    init_tracing();
    // Without the review kinds registered, the TokenReview itself fails (404): 500.
    let server = FakeApiServer::new();
    let client = ok(server.client());
    let (mgr, metrics, _, stop) = start(Manager::builder(client.clone())).await;
    let ca = mgr.metrics_ca_pem().unwrap_or_default().to_string();
    let (code, body) = https_get(metrics, &ca, Some("any")).await;
    assert_eq!((code, body.as_str()), (500, "Authentication failed\n"));
    stop.cancel();

    // Not asked for: plain HTTP as before, no certificate.
    let plain = ok(Manager::builder(client)
        .metrics_bind_address("127.0.0.1:0")
        .build());
    assert!(plain.metrics_ca_pem().is_none());
}

#[tokio::test]
async fn a_certificate_directory_without_its_files_is_refused_at_build() {
    let server = FakeApiServer::new();
    let dir = std::env::temp_dir().join(format!("no-such-cert-dir-{}", std::process::id()));
    let err = Manager::builder(ok(server.client()))
        .metrics_bind_address("127.0.0.1:0")
        .metrics_secure(true)
        .metrics_cert_dir(&dir)
        .build()
        .err()
        .unwrap_or_else(|| panic!("a missing tls.crt must be refused"));
    match err {
        ManagerError::InvalidOption { option, message } => {
            assert_eq!(option, "metrics certificate");
            assert!(message.contains("tls.crt"), "{message}");
        }
        other => panic!("wrong error: {other}"),
    }
}
