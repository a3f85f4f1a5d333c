//! Serving the fake over HTTPS, with bearer-token authentication as kube-apiserver does it
//! (`--token-auth-file`, anonymous requests allowed only where RBAC's
//! `system:public-info-viewer` allows them), and a kubeconfig for `kubectl` and other clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            allow_non_loopback: false,
        }
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

async fn served(
    shared: Arc<Shared>,
    token: Arc<str>,
    req: Request<hyper::body::Incoming>,
) -> Response<ResponseBody> {
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
    let bytes = match collect_limited(body).await {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    let mut parts = parts;
    // TokenReviews authenticate against the served token.
    parts.extensions.insert(ServerToken(token));
    handle(shared, Request::from_parts(parts, bytes)).await
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
    let shared_token: Arc<str> = Arc::from(token.as_str());
    let task = tokio::spawn(async move {
        let mut conns = JoinSet::new();
        loop {
            tokio::select! {
                _ = &mut rx => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let shared = shared.clone();
                        let token = shared_token.clone();
                        let acceptor = acceptor.clone();
                        conns.spawn(async move {
                            let handshake = tokio::time::timeout(
                                std::time::Duration::from_secs(10),
                                acceptor.accept(stream),
                            )
                            .await;
                            let stream = match handshake {
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
                            let svc = hyper::service::service_fn(move |req| {
                                let shared = shared.clone();
                                let token = token.clone();
                                async move { Ok::<_, Infallible>(served(shared, token, req).await) }
                            });
                            if let Err(e) = http1::Builder::new()
                                .timer(hyper_util::rt::TokioTimer::new())
                                .header_read_timeout(std::time::Duration::from_secs(30))
                                .serve_connection(TokioIo::new(stream), svc)
                                .await
                            {
                                tracing::debug!(%peer, error = %e, "fake api connection ended");
                            }
                        });
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "fake api server: accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    }
                },
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
            }
        }
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

    /// Stops accepting connections and closes open ones.
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
