//! The webhook server (controller-runtime's `pkg/webhook` `Server`): HTTPS on
//! `--webhook-port` (9443) with the certificate of `--webhook-cert-dir`
//! (`/tmp/k8s-webhook-server/serving-certs`), `tls.crt` and `tls.key`, **reloaded when the files
//! change**; a [`Runnable`] of the manager that runs on every replica (no leader election).
//!
//! The certificate is checked at each TLS handshake: when the modification time, size or inode
//! of either file differs from the pair loaded, both are read again and, if the key matches
//! the certificate, used from this handshake on. A pair caught half-written (a new
//! certificate with the old key) is not used: the previous pair keeps serving until both files
//! agree, so a rotation (cert-manager writing the Secret, the kubelet swapping the volume's
//! files) fails no request.
//!
//! Each registered path counts `controller_runtime_webhook_requests_total{webhook,code}`,
//! `controller_runtime_webhook_latency_seconds{webhook}` and
//! `controller_runtime_webhook_requests_in_flight{webhook}` (`webhook` is the path), in the
//! manager's registry. `/readyz` of the manager has a `webhook` check, passing once the server
//! listens with a certificate.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parking_lot::{Mutex, RwLock};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::WebhookError;
use super::admission::{self, Handler};
use super::conversion;
use crate::metrics::{Metrics, WebhookMetrics};
use crate::{BoxError, Runnable};

/// controller-runtime's default `--webhook-port`.
pub const DEFAULT_PORT: u16 = 9443;
/// controller-runtime's default certificate directory.
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// The path the conversion webhook is served at.
pub const CONVERT_PATH: &str = "/convert";

/// The largest request body read (controller-runtime's limit, 7 MiB).
const MAX_BODY: usize = 7 * 1024 * 1024;
/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how the webhook server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookServerOptions {
    /// The address to bind (default: every interface, `0.0.0.0`).
    pub host: String,
    /// The port (default [`DEFAULT_PORT`]; 0 picks one, see
    /// [`WebhookServer::local_addr`]).
    pub port: u16,
    /// The directory of the certificate files (default [`DEFAULT_CERT_DIR`]).
    pub cert_dir: PathBuf,
    /// The certificate chain's file name in `cert_dir` (default `tls.crt`).
    pub cert_name: String,
    /// The private key's file name in `cert_dir` (default `tls.key`).
    pub key_name: String,
}

impl Default for WebhookServerOptions {
    fn default() -> Self {
        WebhookServerOptions {
            host: String::new(),
            port: DEFAULT_PORT,
            cert_dir: PathBuf::from(DEFAULT_CERT_DIR),
            cert_name: "tls.crt".into(),
            key_name: "tls.key".into(),
        }
    }
}

#[derive(Clone)]
enum Route {
    Admission(Arc<dyn Handler>),
    Conversion(conversion::Registry),
}

struct Inner {
    options: WebhookServerOptions,
    routes: RwLock<HashMap<String, (Route, WebhookMetrics)>>,
    conversions: conversion::Registry,
    metrics: Metrics,
    serving: AtomicBool,
    local_addr: Mutex<Option<SocketAddr>>,
    started: AtomicBool,
}

/// The manager's webhook server ([`Manager::webhook_server`](crate::Manager::webhook_server)):
/// paths to handlers, served over HTTPS. Cheap to clone (a handle).
#[derive(Clone)]
pub struct WebhookServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("options", &self.inner.options)
            .field("paths", &self.paths())
            .finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// A server with `options`, counting into `metrics`. Add it to a manager to run it (the
    /// manager's own, [`Manager::webhook_server`](crate::Manager::webhook_server), is added
    /// for you).
    pub fn new(options: WebhookServerOptions, metrics: Metrics) -> Self {
        WebhookServer {
            inner: Arc::new(Inner {
                options,
                routes: RwLock::new(HashMap::new()),
                conversions: conversion::Registry::default(),
                metrics,
                serving: AtomicBool::new(false),
                local_addr: Mutex::new(None),
                started: AtomicBool::new(false),
            }),
        }
    }

    /// The options it was made with.
    pub fn options(&self) -> &WebhookServerOptions {
        &self.inner.options
    }

    /// Serves `handler` at `path` (controller-runtime's `Register`); paths are unique and
    /// start with `/`. May be called while the server runs.
    pub fn register(&self, path: &str, handler: impl Handler) -> Result<(), WebhookError> {
        self.insert(path, Route::Admission(Arc::new(handler)))
    }

    pub(crate) fn register_arc(
        &self,
        path: &str,
        handler: Arc<dyn Handler>,
    ) -> Result<(), WebhookError> {
        self.insert(path, Route::Admission(handler))
    }

    fn insert(&self, path: &str, route: Route) -> Result<(), WebhookError> {
        if !path.starts_with('/') || path.contains(['?', '#', ' ']) {
            return Err(WebhookError::InvalidPath(path.to_string()));
        }
        let mut routes = self.inner.routes.write();
        if routes.contains_key(path) {
            return Err(WebhookError::DuplicatePath(path.to_string()));
        }
        tracing::info!(path, "registering webhook");
        routes.insert(path.to_string(), (route, self.inner.metrics.webhook(path)));
        Ok(())
    }

    /// The conversion registry, with `/convert` registered on first use.
    pub(crate) fn conversions(&self) -> conversion::Registry {
        let mut routes = self.inner.routes.write();
        if !routes.contains_key(CONVERT_PATH) {
            tracing::info!(path = CONVERT_PATH, "registering conversion webhook");
            routes.insert(
                CONVERT_PATH.to_string(),
                (
                    Route::Conversion(self.inner.conversions.clone()),
                    self.inner.metrics.webhook(CONVERT_PATH),
                ),
            );
        }
        self.inner.conversions.clone()
    }

    /// The registered paths, sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut p: Vec<String> = self.inner.routes.read().keys().cloned().collect();
        p.sort();
        p
    }

    /// The address it listens on, once started (useful with port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        *self.inner.local_addr.lock()
    }

    /// Whether it listens with a certificate loaded (the `webhook` readiness check).
    pub fn is_serving(&self) -> bool {
        self.inner.serving.load(Ordering::Acquire)
    }

    /// The readiness check: `Ok` once serving (controller-runtime's `StartedChecker`).
    pub fn started_check(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        let server = self.clone();
        move || {
            if server.is_serving() {
                Ok(())
            } else {
                Err("webhook server has not started yet".into())
            }
        }
    }

    /// Binds, loads the certificate and serves until `shutdown`.
    pub async fn serve(&self, shutdown: CancellationToken) -> Result<(), WebhookError> {
        if self.inner.started.swap(true, Ordering::AcqRel) {
            return Err(WebhookError::AlreadyStarted);
        }
        let o = &self.inner.options;
        let resolver = Arc::new(CertWatcher::new(
            o.cert_dir.join(&o.cert_name),
            o.cert_dir.join(&o.key_name),
        )?);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WebhookError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        // HTTP/1.1 only, as controller-runtime serves webhooks by default (CVE-2023-44487).
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let tls = tokio_rustls::TlsAcceptor::from(Arc::new(config));

        let host = if o.host.is_empty() {
            "0.0.0.0"
        } else {
            &o.host
        };
        let addr = crate::manager::parse_bind_address(&format!("{host}:{}", o.port))
            .map_err(WebhookError::InvalidAddress)?
            .ok_or_else(|| WebhookError::InvalidAddress(format!("{host}:{}", o.port)))?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| WebhookError::Bind { addr, source })?;
        let local = listener.local_addr().unwrap_or(addr);
        *self.inner.local_addr.lock() = Some(local);
        self.inner.serving.store(true, Ordering::Release);
        tracing::info!(addr = %local, cert_dir = %o.cert_dir.display(), paths = ?self.paths(), "serving webhooks");
        self.accept_loop(listener, tls, shutdown).await;
        self.inner.serving.store(false, Ordering::Release);
        tracing::info!(addr = %local, "webhook server stopped");
        Ok(())
    }

    async fn accept_loop(
        &self,
        listener: TcpListener,
        tls: tokio_rustls::TlsAcceptor,
        cancel: CancellationToken,
    ) {
        let mut conns = tokio::task::JoinSet::new();
        loop {
            let accepted = tokio::select! {
                () = cancel.cancelled() => break,
                a = listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook server: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let (tls, cancel, server) = (tls.clone(), cancel.clone(), self.clone());
            conns.spawn(async move {
                let handshake = tokio::select! {
                    () = cancel.cancelled() => return,
                    h = tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)) => h,
                };
                let stream = match handshake {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        tracing::debug!(%peer, error = %e, "webhook TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "webhook TLS handshake timed out");
                        return;
                    }
                };
                let svc = service_fn(move |req: http::Request<Incoming>| {
                    let server = server.clone();
                    async move { Ok::<_, std::convert::Infallible>(server.answer(req).await) }
                });
                let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
                tokio::pin!(conn);
                tokio::select! {
                    r = conn.as_mut() => if let Err(e) = r {
                        tracing::debug!(%peer, error = %e, "webhook connection ended");
                    },
                    () = cancel.cancelled() => {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                }
            });
            while conns.try_join_next().is_some() {}
        }
        conns.shutdown().await;
    }

    async fn answer(&self, req: http::Request<Incoming>) -> Response<Full<Bytes>> {
        let path = req.uri().path().to_string();
        let Some((route, metrics)) = self.inner.routes.read().get(&path).cloned() else {
            return plain(StatusCode::NOT_FOUND, "404 page not found\n");
        };
        // Lowered when the answer is ready or the request is dropped (the client went away).
        let in_flight = InFlight::enter(&metrics);
        let start = Instant::now();
        let resp = self.dispatch(route, &metrics, req).await;
        metrics.latency.observe(start.elapsed().as_secs_f64());
        drop(in_flight);
        metrics.answered(resp.status().as_u16());
        resp
    }

    async fn dispatch(
        &self,
        route: Route,
        metrics: &WebhookMetrics,
        req: http::Request<Incoming>,
    ) -> Response<Full<Bytes>> {
        if req.method() != Method::POST {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "only POST\n");
        }
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(';').next().map(str::trim) == Some("application/json"));
        if !json {
            let got = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("contentType={got}, expected application/json\n"),
            );
        }
        let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    &format!("cannot read the request body: {e}\n"),
                );
            }
        };
        match route {
            Route::Admission(handler) => {
                let panics = metrics.panics.clone();
                let out = admission::review(&*handler, &body, move || {
                    panics.inc();
                })
                .await;
                json_response(StatusCode::OK, out)
            }
            Route::Conversion(registry) => {
                // Conversion is CPU work over every object of the review (a list can hold
                // thousands): off the async workers.
                let reviewed = tokio::task::spawn_blocking(move || registry.review(&body)).await;
                match reviewed {
                    Ok((code, out)) => {
                        json_response(StatusCode::from_u16(code).unwrap_or(StatusCode::OK), out)
                    }
                    Err(failed) => {
                        metrics.panics.inc();
                        let what = if failed.is_panic() {
                            admission::panic_message(&*failed.into_panic())
                        } else {
                            "the conversion task was cancelled".to_string()
                        };
                        tracing::error!(panic = %what, "conversion panicked");
                        let status = kube::core::Status::failure(
                            &format!("panic: {what} [recovered]"),
                            "ConversionFailed",
                        );
                        let review = kube::core::conversion::ConversionResponse::invalid(status)
                            .into_review();
                        json_response(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            serde_json::to_vec(&review).unwrap_or_default(),
                        )
                    }
                }
            }
        }
    }
}

/// One request counted in `controller_runtime_webhook_requests_in_flight` while it lives.
struct InFlight(prometheus_client::metrics::gauge::Gauge);

impl InFlight {
    fn enter(metrics: &WebhookMetrics) -> Self {
        metrics.in_flight.inc();
        InFlight(metrics.in_flight.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Runnable for WebhookServer {
    async fn start(self, shutdown: CancellationToken) -> Result<(), BoxError> {
        self.serve(shutdown)
            .await
            .map_err(|e| Box::new(e) as BoxError)
    }

    fn needs_leader_election(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        "webhook server".into()
    }
}

fn plain(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body.to_string())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// What identifies one version of a file: a changed file has another.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: (u64, u64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: m.modified().ok(),
        len: m.len(),
        #[cfg(unix)]
        inode: {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        },
    })
}

#[derive(Debug)]
struct Loaded {
    stamps: (Option<Stamp>, Option<Stamp>),
    key: Arc<CertifiedKey>,
    /// The stamps of a pair that could not be used, not read again until they change.
    refused: Option<(Option<Stamp>, Option<Stamp>)>,
}

/// The certificate resolver: the pair of files, reloaded at a handshake when they changed.
#[derive(Debug)]
pub(crate) struct CertWatcher {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: Mutex<Loaded>,
}

impl CertWatcher {
    /// Loads the pair now (an error if it cannot be used).
    pub(crate) fn new(cert: PathBuf, key: PathBuf) -> Result<Self, WebhookError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let stamps = (stamp(&cert), stamp(&key));
        let loaded = load(&cert, &key, &provider)?;
        Ok(CertWatcher {
            cert,
            key,
            provider,
            current: Mutex::new(Loaded {
                stamps,
                key: Arc::new(loaded),
                refused: None,
            }),
        })
    }

    /// The pair to use now, reloaded first if either file changed.
    fn current(&self) -> Arc<CertifiedKey> {
        let stamps = (stamp(&self.cert), stamp(&self.key));
        let mut current = self.current.lock();
        if stamps == current.stamps || current.refused.as_ref() == Some(&stamps) {
            return current.key.clone();
        }
        match load(&self.cert, &self.key, &self.provider) {
            Ok(k) => {
                tracing::info!(cert = %self.cert.display(), "webhook certificate reloaded");
                current.key = Arc::new(k);
                current.stamps = stamps;
                current.refused = None;
            }
            Err(e) => {
                tracing::warn!(error = %e, "webhook certificate not reloaded: serving the previous one");
                current.refused = Some(stamps);
            }
        }
        current.key.clone()
    }
}

impl ResolvesServerCert for CertWatcher {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, WebhookError> {
    let bad = |path: &Path, message: String| WebhookError::Certificate {
        path: path.to_path_buf(),
        message,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad(cert, "no certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, e.to_string()))?;
    let certified = CertifiedKey::from_der(chain, private, provider)
        .map_err(|e| bad(key, format!("does not go with {}: {e}", cert.display())))?;
    Ok(certified)
}
