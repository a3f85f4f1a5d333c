//! Serving the fake over HTTP on loopback, with bearer-token authentication, and a kubeconfig
//! for `kubectl` and other clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::BodyExt;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::handler::{error_response, handle};
use crate::error::{ApiError, FakeError};

/// A fake API server listening on a loopback address. Dropping it stops the server.
#[derive(Debug)]
pub struct ServedApiServer {
    addr: SocketAddr,
    token: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The path prefix that authenticates like the bearer token: `kubectl` (client-go) sends no
/// credentials to a plain-HTTP server, so its kubeconfig points at `http://…/t/<token>`.
fn token_prefix(token: &str) -> String {
    format!("/t/{token}")
}

/// Strips the token prefix from a request URI; `None` when the path does not carry it.
fn strip_token_prefix(uri: &http::Uri, token: &str) -> Option<http::Uri> {
    let prefix = token_prefix(token);
    let path = uri.path();
    if path.len() < prefix.len()
        || !constant_time_eq(&path.as_bytes()[..prefix.len()], prefix.as_bytes())
    {
        return None;
    }
    let rest = &path[prefix.len()..];
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let rest = if rest.is_empty() { "/" } else { rest };
    let pq = match uri.query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest.to_string(),
    };
    http::Uri::builder().path_and_query(pq).build().ok()
}

async fn served(
    shared: Arc<Shared>,
    token: Arc<str>,
    req: Request<hyper::body::Incoming>,
) -> Response<ResponseBody> {
    let (mut parts, body) = req.into_parts();
    let public = matches!(parts.uri.path(), "/healthz" | "/livez" | "/readyz");
    let by_header = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| constant_time_eq(t.trim().as_bytes(), token.as_bytes()));
    let by_path = match strip_token_prefix(&parts.uri, &token) {
        Some(uri) => {
            parts.uri = uri;
            true
        }
        None => false,
    };
    if !(by_header || by_path || public) {
        return error_response(&ApiError::new(401, "Unauthorized", "Unauthorized"));
    }
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            return error_response(&ApiError::bad_request(format!(
                "reading the request body: {e}"
            )));
        }
    };
    handle(shared, Request::from_parts(parts, bytes)).await
}

pub(crate) async fn serve(
    shared: Arc<Shared>,
    addr: SocketAddr,
    token: String,
) -> Result<ServedApiServer, FakeError> {
    if !addr.ip().is_loopback() {
        return Err(FakeError::NotLoopback(addr));
    }
    let listener = TcpListener::bind(addr).await?;
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
                        conns.spawn(async move {
                            let svc = hyper::service::service_fn(move |req| {
                                let shared = shared.clone();
                                let token = token.clone();
                                async move { Ok::<_, Infallible>(served(shared, token, req).await) }
                            });
                            if let Err(e) = http1::Builder::new()
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

    /// `http://127.0.0.1:<port>` (requests need the bearer token).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bearer token clients must send.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// A kubeconfig (YAML) with one cluster, user and context named `kube-codegen-fake`,
    /// default namespace `default`. The server URL carries the token as a path prefix
    /// (`http://127.0.0.1:<port>/t/<token>`), because client-go (`kubectl`) sends no
    /// credentials over plain HTTP; the user entry has the bearer token for clients that do.
    pub fn kubeconfig(&self) -> String {
        let name = "kube-codegen-fake";
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {server}\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\ncurrent-context: {name}\nusers:\n- name: {name}\n  user:\n    token: {token}\npreferences: {{}}\n",
            server = yaml_str(&format!("{}{}", self.url(), token_prefix(&self.token))),
            token = yaml_str(&self.token),
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) to `path` (mode 0600 on Unix).
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), FakeError> {
        let path = path.as_ref();
        std::fs::write(path, self.kubeconfig())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }

    /// A `kube::Client` talking HTTP to this server with the token.
    pub async fn client(&self) -> Result<kube::Client, FakeError> {
        let kc = kube::config::Kubeconfig::from_yaml(&self.kubeconfig())
            .map_err(|e| FakeError::InvalidResource(format!("kubeconfig: {e}")))?;
        let config =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| FakeError::InvalidResource(format!("kubeconfig: {e}")))?;
        kube::Client::try_from(config)
            .map_err(|e| FakeError::InvalidResource(format!("client: {e}")))
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

/// Collects any request body into bytes (the `tower::Service` path).
pub(crate) async fn collect<B>(body: B) -> Result<Bytes, String>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    body.collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| e.to_string())
}
