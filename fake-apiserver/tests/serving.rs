//! Serving under careless and hostile clients: a body trickled too slowly is cut, connections
//! beyond the limit are closed at once without making the server unreachable, and a graceful
//! stop answers the request in flight, ends watches and returns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube_fake_apiserver::{FakeApiServer, Reaction, ServeOptions, ServedApiServer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn served(opts: ServeOptions) -> (FakeApiServer, ServedApiServer) {
    let server = FakeApiServer::builder()
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let served = server
        .serve_with(opts)
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    (server, served)
}

/// A TLS connection to the served server, trusting its CA.
async fn tls(served: &ServedApiServer) -> tokio_rustls::client::TlsStream<TcpStream> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(served.ca_pem().as_bytes())
        .unwrap_or_else(|e| panic!("CA: {e}"));
    roots.add(ca).unwrap_or_else(|e| panic!("CA: {e}"));
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(served.addr())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    connector
        .connect(
            ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}")),
            tcp,
        )
        .await
        .unwrap_or_else(|e| panic!("TLS: {e}"))
}

#[tokio::test]
async fn a_body_trickled_too_slowly_is_cut_with_a_504() {
    let (_server, served) = served(ServeOptions {
        request_timeout: Duration::from_secs(1),
        ..ServeOptions::default()
    })
    .await;
    let mut conn = tls(&served).await;
    let head = format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
        served.token()
    );
    let started = Instant::now();
    conn.write_all(head.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("write: {e}"));
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), conn.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the server kept the connection open");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("\"reason\":\"Timeout\""), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn connections_beyond_the_limit_are_closed_and_the_server_stays_reachable() {
    let (_server, served) = served(ServeOptions {
        max_connections: 3,
        ..ServeOptions::default()
    })
    .await;
    // Three idle connections hold every slot.
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(
            TcpStream::connect(served.addr())
                .await
                .unwrap_or_else(|e| panic!("connect: {e}")),
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = TcpStream::connect(served.addr())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let mut buf = [0u8; 1];
    let closed = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0) | Err(_))),
        "a connection over the limit must be closed at once: {closed:?}"
    );
    // Once the idle ones go, clients are served again.
    drop(idle);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    assert!(cms.list(&Default::default()).await.is_ok());
}

#[tokio::test]
async fn a_graceful_stop_answers_the_write_in_flight_and_ends_watches() {
    let (server, served) = served(ServeOptions::default()).await;
    // Every create takes a while: the stop begins while one is in flight.
    server
        .handle()
        .prepend_reactor("create", "configmaps", |_| {
            Reaction::Delay(Duration::from_millis(700))
        });
    let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut watch = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"))
        .boxed();
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "in-flight"}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let write = tokio::spawn({
        let cms = cms.clone();
        async move { cms.create(&PostParams::default(), &cm).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let at_stop = server.handle().resource_version();
    served.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stop waited for the watch"
    );
    let created = write.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        created.is_ok(),
        "the write in flight got no answer: {created:?}"
    );
    assert!(
        server
            .handle()
            .get::<ConfigMap>("default", "in-flight")
            .ok()
            .flatten()
            .is_some()
    );
    // The watch saw the write, then, as kube-apiserver ends a watch when it stops, a last
    // bookmark at the current version; then its stream ended.
    let rest: Vec<_> = tokio::time::timeout(Duration::from_secs(5), async {
        let mut events = Vec::new();
        while let Some(e) = watch.next().await {
            events.push(e);
        }
        events
    })
    .await
    .unwrap_or_else(|_| panic!("the watch did not end"));
    let last = rest.last();
    let Some(Ok(WatchEvent::Bookmark(b))) = last else {
        panic!("expected a last bookmark, got {rest:?}");
    };
    assert_eq!(
        b.metadata
            .annotations
            .get("k8s.io/initial-events-end")
            .map(String::as_str),
        Some("true")
    );
    // The version when the server began to stop (the write in flight lands after it).
    assert_eq!(b.metadata.resource_version, at_stop.to_string());
}
