//! Serving the fake over HTTPS, with bearer-token authentication as kube-apiserver does it
//! (`--token-auth-file`, anonymous requests allowed only where RBAC's
//! `system:public-info-viewer` allows them), and a kubeconfig for `kubectl` and other clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt, Limited};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::handler::{anonymous_forbidden, handle};
use crate::endpoints::response::error_response;
use crate::endpoints::tls;
use crate::error::{ApiError, FakeError};
use crate::semantics::review::ServerToken;

/// kube-apiserver's limit on a request body (`MaxRequestBodyBytes`, 3 MiB): larger bodies get
/// 413 RequestEntityTooLarge.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// How to serve a [`FakeApiServer`](crate::FakeApiServer) over the network.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to bind (`127.0.0.1:0` picks a free loopback port).
    pub addr: SocketAddr,
    /// The bearer token clients must send (`None`: a random one).
    pub token: Option<String>,
    /// Bind addresses that are not loopback too (default `false`: only loopback, so nothing
    /// outside the machine can reach the server).
    pub allow_non_loopback: bool,
    /// How many connections are served at once (default 512); a connection beyond is closed
    /// as soon as it is accepted, with a warning in the log, so idle or slow clients cannot
    /// use up the process's file descriptors and make the server unreachable.
    pub max_connections: usize,
    /// How long a request may take to send its body (default 60 s, kube-apiserver's
    /// `--request-timeout`): a body trickled slower is answered 504 and its connection closed.
    pub request_timeout: Duration,
    /// How long a graceful stop waits for requests in flight (default 30 s) before it closes
    /// the connections still open. Watches end at once.
    pub shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            allow_non_loopback: false,
            max_connections: 512,
            request_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// How long a client may take to send a request's headers (the first request's, and each
/// next one's on a kept-alive connection, so an idle connection closes after it too):
/// kube-apiserver's `ReadHeaderTimeout`, 32 s.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Tells watches served over a connection that the server is stopping: they end their
/// stream, so a graceful stop does not wait for them.
#[derive(Debug, Clone)]
pub(crate) struct Stopping(pub(crate) tokio::sync::watch::Receiver<bool>);

impl Stopping {
    /// Resolves once the server stops (at once if it has).
    pub(crate) async fn wait(&mut self) {
        // An error means the server is gone: stopped as well.
        let _ = self.0.wait_for(|stopping| *stopping).await;
    }
}

/// A fake API server listening on an address, over HTTPS with a self-signed CA. Dropping it
/// stops the server.
#[derive(Debug)]
pub struct ServedApiServer {
    addr: SocketAddr,
    token: String,
    ca_pem: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The non-resource paths RBAC's `system:public-info-viewer` opens to anonymous requests.
fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    )
}

/// Who a request is, from its `Authorization` header only.
enum Caller {
    Authenticated,
    Anonymous,
    /// A header that names no valid token: 401.
    Rejected,
}

fn authenticate(headers: &http::HeaderMap, token: &str) -> Caller {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Caller::Anonymous;
    };
    let given = value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .unwrap_or("");
    if !given.is_empty() && constant_time_eq(given.as_bytes(), token.as_bytes()) {
        Caller::Authenticated
    } else {
        Caller::Rejected
    }
}

/// Reads a request body up to kube-apiserver's limit.
pub(crate) async fn collect_limited<B>(body: B) -> Result<Bytes, ApiError>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, MAX_REQUEST_BODY_BYTES).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "reading the request body: {e}"
        ))),
    }
}

/// What every connection of one served server shares.
#[derive(Clone)]
struct Conn {
    shared: Arc<Shared>,
    token: Arc<str>,
    request_timeout: Duration,
    stopping: tokio::sync::watch::Receiver<bool>,
}

async fn served(conn: Conn, req: Request<hyper::body::Incoming>) -> Response<ResponseBody> {
    let Conn {
        shared,
        token,
        request_timeout,
        stopping,
    } = conn;
    let (parts, body) = req.into_parts();
    match authenticate(&parts.headers, &token) {
        Caller::Authenticated => {}
        Caller::Anonymous if is_public(parts.uri.path()) => {}
        Caller::Anonymous => {
            return error_response(&anonymous_forbidden(
                &parts.method,
                parts.uri.path(),
                parts.uri.query(),
            ));
        }
        Caller::Rejected => {
            return error_response(&ApiError::new(401, "Unauthorized", "Unauthorized"));
        }
    }
    let bytes = match tokio::time::timeout(request_timeout, collect_limited(body)).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return error_response(&e),
        Err(_) => {
            tracing::debug!(path = parts.uri.path(), "request body not sent in time");
            let mut resp = error_response(
                &ApiError::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within the allotted timeout",
                )
                .with_details(serde_json::json!({"retryAfterSeconds": 1})),
            );
            resp.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return resp;
        }
    };
    let mut parts = parts;
    // TokenReviews authenticate against the served token.
    parts.extensions.insert(ServerToken(token));
    parts.extensions.insert(Stopping(stopping));
    handle(shared, Request::from_parts(parts, bytes)).await
}

/// One connection: the TLS handshake, then HTTP/1.1 until the client leaves, a timeout fires
/// or the server stops (gracefully: the request in flight is answered first).
async fn serve_connection(
    conn: Conn,
    acceptor: tokio_rustls::TlsAcceptor,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let mut stopping = Stopping(conn.stopping.clone());
    let svc = hyper::service::service_fn(move |req| {
        let conn = conn.clone();
        async move { Ok::<_, Infallible>(served(conn, req).await) }
    });
    let http = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), svc);
    tokio::pin!(http);
    let ended = tokio::select! {
        ended = http.as_mut() => ended,
        () = stopping.wait() => {
            http.as_mut().graceful_shutdown();
            http.await
        }
    };
    if let Err(e) = ended {
        tracing::debug!(%peer, error = %e, "fake api connection ended");
    }
}

fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

pub(crate) async fn serve(
    shared: Arc<Shared>,
    opts: ServeOptions,
) -> Result<ServedApiServer, FakeError> {
    if !opts.addr.ip().is_loopback() && !opts.allow_non_loopback {
        return Err(FakeError::NotLoopback(opts.addr));
    }
    let token = match opts.token {
        Some(t) if t.is_empty() || t.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            return Err(FakeError::InvalidToken);
        }
        Some(t) => t,
        None => random_token(),
    };
    let cert = tls::generate(opts.addr.ip())?;
    let acceptor = tokio_rustls::TlsAcceptor::from(cert.config.clone());
    let listener = TcpListener::bind(opts.addr).await?;
    let local = listener.local_addr()?;
    let (tx, mut rx) = oneshot::channel::<()>();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let conn = Conn {
        shared,
        token: Arc::from(token.as_str()),
        request_timeout: opts.request_timeout,
        stopping: stop_rx,
    };
    let limit = Arc::new(tokio::sync::Semaphore::new(opts.max_connections));
    let (max_connections, grace) = (opts.max_connections, opts.shutdown_grace);
    let task = tokio::spawn(async move {
        let mut conns = JoinSet::new();
        let mut last_refusal: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                _ = &mut rx => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let Ok(permit) = limit.clone().try_acquire_owned() else {
                            if last_refusal.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                                tracing::warn!(%peer, max_connections, "connection limit reached: closing new connections until some end");
                                last_refusal = Some(tokio::time::Instant::now());
                            }
                            drop(stream);
                            continue;
                        };
                        conns.spawn(serve_connection(conn.clone(), acceptor.clone(), stream, peer, permit));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "fake api server: accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                },
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
            }
        }
        // Stop accepting, let requests in flight finish (watches end), then close the rest.
        drop(listener);
        let _ = stop_tx.send(true);
        let open = conns.len();
        let drained =
            tokio::time::timeout(grace, async { while conns.join_next().await.is_some() {} }).await;
        if drained.is_err() {
            tracing::warn!(
                open = conns.len(),
                "connections still open after the grace period: closed"
            );
        }
        tracing::info!(connections = open, "fake api server stopped");
        conns.abort_all();
    });
    tracing::info!(addr = %local, "fake api server listening");
    Ok(ServedApiServer {
        addr: local,
        token,
        ca_pem: cert.ca_pem,
        shutdown: Some(tx),
        task,
    })
}

fn yaml_str(s: &str) -> String {
    crate::error::go_quote(s)
}

impl ServedApiServer {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:<port>` (`https://[::1]:<port>` for IPv6).
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The bearer token clients must send in `Authorization: Bearer <token>`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The PEM certificate of the CA that signed the serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A kubeconfig (YAML) with one cluster, user and context named `kube-codegen-fake`,
    /// default namespace `default`: the server URL, the CA to trust and the bearer token.
    pub fn kubeconfig(&self) -> String {
        let name = "kube-codegen-fake";
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes());
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\ncurrent-context: {name}\nusers:\n- name: {name}\n  user:\n    token: {token}\npreferences: {{}}\n",
            server = yaml_str(&self.url()),
            token = yaml_str(&self.token),
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) to `path`, which holds the bearer token: to a
    /// new temporary file beside it, created exclusively (`O_EXCL`, so no planted file or link
    /// is followed) with mode 0600 from the start on Unix, then renamed into place, so a reader
    /// never sees half a file. A `path` that is a symbolic link, a directory or another
    /// non-regular file is refused with [`FakeError::UnsafeKubeconfigPath`]; a regular file is
    /// replaced.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), FakeError> {
        crate::private_file::write_private_file(path.as_ref(), self.kubeconfig().as_bytes())
    }

    /// A `kube::Client` talking HTTPS to this server with the token.
    pub async fn client(&self) -> Result<kube::Client, FakeError> {
        let kc = kube::config::Kubeconfig::from_yaml(&self.kubeconfig())
            .map_err(|e| FakeError::Client(format!("kubeconfig: {e}")))?;
        let config =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| FakeError::Client(format!("kubeconfig: {e}")))?;
        kube::Client::try_from(config).map_err(|e| FakeError::Client(e.to_string()))
    }

    /// Stops gracefully: no new connections, watches end, requests in flight are answered
    /// (for up to [`ServeOptions::shutdown_grace`]), then the connections still open close.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let task = std::mem::replace(&mut self.task, tokio::spawn(async {}));
        let _ = task.await;
    }
}

impl Drop for ServedApiServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.task.abort();
    }
}
