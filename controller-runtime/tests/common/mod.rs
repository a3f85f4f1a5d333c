//! Helpers shared by the controller-runtime tests: a fake API server, polling, an HTTP GET.
#![allow(dead_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;
use kube_codegen_runtime::fake::{FakeApiServer, FakeHandle, to_value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A fake API server with namespaces `ns` and `kube-system`; a client and the handle.
pub fn fake() -> (kube::Client, FakeHandle) {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("ns".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let server = FakeApiServer::builder()
        .objects([to_value(&ns).unwrap_or_else(|e| panic!("{e}"))])
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        server.client().unwrap_or_else(|e| panic!("{e}")),
        server.handle(),
    )
}

/// Polls `check` every 20 ms until it is `Some`, or panics after `secs` seconds.
pub async fn eventually<T>(what: &str, secs: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {secs} s waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// As [`eventually`], with an async check.
pub async fn eventually_async<T, F: Future<Output = Option<T>>>(
    what: &str,
    secs: u64,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {secs} s waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `GET path` over HTTP/1.1: the status code and the body.
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    http_response(&buf)
}

/// A TLS connection to `addr` for server name `localhost`, trusting only the CAs in `ca_pem`.
pub async fn tls_connect(
    addr: SocketAddr,
    ca_pem: &str,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use std::sync::Arc;
    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        ok(roots.add(ok(cert)));
    }
    let config = ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions())
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = ok(tokio::net::TcpStream::connect(addr).await);
    ok(connector
        .connect(ok(ServerName::try_from("localhost")), tcp)
        .await)
}

/// A whole HTTP/1.1 response as read from the connection: the status code and the body.
pub fn http_response(bytes: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(bytes).to_string();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP response: {text:?}"));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (code, body.to_string())
}

/// Creates ConfigMap `ns/name` with `data`.
pub async fn create_cm(client: &kube::Client, name: &str) -> ConfigMap {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), "ns")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap_or_else(|e| panic!("create {name}: {e}"))
}

/// Logs to the test output when `RUST_LOG` is set.
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}
