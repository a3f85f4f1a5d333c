//! The in-memory server's create throughput (ConfigMaps through a `kube::Client`) with no
//! admission webhook registered, with one ValidatingWebhookConfiguration whose rules do not
//! match the request (the cost of looking), and with one validating webhook called on every
//! create (an HTTPS round trip to a loopback webhook that allows).
//!
//! `cargo bench -p kube-fake-apiserver --bench admission`

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube_fake_apiserver::FakeApiServer;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn must<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A CA (PEM) and a serving certificate and key (PEM) for 127.0.0.1.
fn certificates() -> (String, String, String) {
    let ca_key = must(KeyPair::generate());
    let mut ca = must(CertificateParams::new(Vec::<String>::new()));
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = must(ca.self_signed(&ca_key));
    let issuer = Issuer::new(ca, ca_key);
    let key = must(KeyPair::generate());
    let mut params = must(CertificateParams::new(Vec::<String>::new()));
    params
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    let cert = must(params.signed_by(&key, &issuer));
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// A webhook on 127.0.0.1 that allows every review; its address.
async fn allow_all(cert: &str, key: &str) -> std::net::SocketAddr {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .map(must)
        .collect();
    let key = must(PrivateKeyDer::from_pem_slice(key.as_bytes()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = must(
        must(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions(),
        )
        .with_no_client_auth()
        .with_single_cert(certs, key),
    );
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = must(tokio::net::TcpListener::bind("127.0.0.1:0").await);
    let addr = must(listener.local_addr());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(
                    |req: hyper::Request<hyper::body::Incoming>| async move {
                        let body = req
                            .into_body()
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let uid = review
                            .pointer("/request/uid")
                            .cloned()
                            .unwrap_or(Value::Null);
                        let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                            "response": {"uid": uid, "allowed": true}});
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(
                            out.to_string(),
                        ))))
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    addr
}

fn configuration(url: &str, ca: &str, resource: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bench"},
        "webhooks": [{"name": "bench.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"url": url, "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": [resource]}]}]})
}

fn cm(name: &str) -> ConfigMap {
    must(serde_json::from_value(
        json!({"metadata": {"name": name}, "data": {"k": "v"}}),
    ))
}

fn bench(c: &mut Criterion) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = runtime();
    let (ca, cert, key) = certificates();
    let addr = rt.block_on(allow_all(&cert, &key));
    let url = format!("https://{addr}/validate");
    let counter = AtomicU64::new(0);
    let mut g = c.benchmark_group("admission/create");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    for (label, config) in [
        ("no webhook", None),
        (
            "webhook not matching",
            Some(configuration(&url, &ca, "secrets")),
        ),
        (
            "one validating webhook",
            Some(configuration(&url, &ca, "configmaps")),
        ),
    ] {
        let server = {
            let _guard = rt.enter();
            let mut b = FakeApiServer::builder().object(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}),
            );
            if let Some(config) = config {
                b = b.object(config);
            }
            must(b.build())
        };
        let client = {
            let _guard = rt.enter();
            must(server.client())
        };
        let api: Api<ConfigMap> = Api::namespaced(client, "bench");
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        must(
                            api.create(&PostParams::default(), &cm(&format!("cm-{n}")))
                                .await,
                        );
                    }
                    start.elapsed()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
