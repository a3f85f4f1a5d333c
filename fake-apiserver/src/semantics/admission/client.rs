//! The HTTPS call to one admission webhook: a POST of the `AdmissionReview` to its URL, its
//! certificate checked against the webhook's `caBundle`, within its `timeoutSeconds`.
//! Failures are worded as kube-apiserver's Go client words them where the cause is the
//! same (`Post "<url>": dial tcp <addr>: connect: connection refused`,
//! `context deadline exceeded`, `tls: failed to verify certificate: x509: certificate
//! signed by unknown authority`); other causes keep the Rust library's description.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// Why a call failed: the text after `failed to call webhook: ` in kube-apiserver's error.
#[derive(Debug, thiserror::Error)]
#[error("Post {}: {cause}", crate::error::go_quote(url))]
pub(crate) struct CallError {
    pub(crate) url: String,
    pub(crate) cause: String,
}

/// An answer of the webhook: its HTTP status and body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Bytes,
}

/// POSTs `body` (JSON) to `url`, trusting the certificates of `ca_bundle` (PEM).
pub(crate) async fn post(
    url: &str,
    ca_bundle: &[u8],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Answer, CallError> {
    let fail = |cause: String| CallError {
        url: url.to_string(),
        cause,
    };
    match tokio::time::timeout(timeout, call(url, ca_bundle, body)).await {
        Ok(r) => r.map_err(fail),
        Err(_) => Err(fail("context deadline exceeded".into())),
    }
}

async fn call(url: &str, ca_bundle: &[u8], body: Vec<u8>) -> Result<Answer, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("invalid URL: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!(
            "unsupported protocol scheme {}",
            crate::error::go_quote(uri.scheme_str().unwrap_or(""))
        ));
    }
    let host = uri.host().ok_or("no host in URL")?.to_string();
    let bare_host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(443);
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_bundle) {
        let cert = cert.map_err(|e| format!("caBundle: {e}"))?;
        roots.add(cert).map_err(|e| format!("caBundle: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let addr_text = format!("{host}:{port}");
    let addrs: Vec<std::net::SocketAddr> = match tokio::net::lookup_host(&addr_text).await {
        Ok(a) => a.collect(),
        Err(_) => {
            return Err(format!("dial tcp: lookup {bare_host}: no such host"));
        }
    };
    let Some(addr) = addrs.first().copied() else {
        return Err(format!("dial tcp: lookup {bare_host}: no such host"));
    };
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            format!("dial tcp {addr}: connect: connection refused")
        } else {
            format!("dial tcp {addr}: {e}")
        }
    })?;
    let server_name = ServerName::try_from(bare_host.clone()).map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server_name, tcp)
        .await
        .map_err(|e| tls_error(&e))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "admission webhook connection closed");
        }
    });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let req = http::Request::post(path)
        .header(http::header::HOST, addr_text.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok(Answer { status, body })
}

/// A TLS failure in Go's words where the cause is the same.
fn tls_error(e: &std::io::Error) -> String {
    let unknown_issuer = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer
                        | rustls::CertificateError::BadSignature
                )
            )
        });
    if unknown_issuer {
        "tls: failed to verify certificate: x509: certificate signed by unknown authority".into()
    } else {
        format!("tls: {e}")
    }
}
