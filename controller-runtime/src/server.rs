//! The small HTTP/1 server behind `/metrics` and the probes: GET only, plain text; for secure
//! metrics, HTTPS with every request authenticated and authorized first
//! ([`crate::filters`]).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::filters::AuthenticationAndAuthorization;

/// What a route answers: status, content type, body.
pub(crate) type Reply = (StatusCode, &'static str, String);

/// Routes a request path and query to a reply (`None`: 404).
pub(crate) type Router = Arc<dyn Fn(&str, Option<&str>) -> Option<Reply> + Send + Sync>;

pub(crate) const TEXT: &str = "text/plain; charset=utf-8";

/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// HTTPS and the authentication and authorization filter, for secure metrics.
#[derive(Clone)]
pub(crate) struct Secure {
    pub(crate) tls: tokio_rustls::TlsAcceptor,
    pub(crate) filter: Arc<AuthenticationAndAuthorization>,
}

/// Binds `addr` now (so that "address in use" is reported before anything starts).
pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// Serves `router` on `listener` until `cancel` (over TLS, each request filtered, when
/// `secure`); connections in progress are closed gracefully.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    cancel: CancellationToken,
    what: &'static str,
    secure: Option<Secure>,
) {
    let local = listener.local_addr().ok();
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(server = what, error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let router = router.clone();
        let cancel = cancel.clone();
        let secure = secure.clone();
        conns.spawn(async move {
            match secure {
                None => connection(stream, router, None, cancel, peer).await,
                Some(Secure { tls, filter }) => {
                    let handshake = tokio::select! {
                        () = cancel.cancelled() => return,
                        h = tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)) => h,
                    };
                    match handshake {
                        Ok(Ok(stream)) => {
                            connection(stream, router, Some(filter), cancel, peer).await
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
        });
        while conns.try_join_next().is_some() {}
    }
    conns.shutdown().await;
    tracing::info!(server = what, addr = ?local, "server stopped");
}

/// One HTTP/1 connection.
async fn connection<I>(
    io: I,
    router: Router,
    filter: Option<Arc<AuthenticationAndAuthorization>>,
    cancel: CancellationToken,
    peer: SocketAddr,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req: http::Request<Incoming>| {
        let router = router.clone();
        let filter = filter.clone();
        async move {
            if let Some(filter) = filter {
                let checked = filter
                    .check(
                        req.method(),
                        req.uri().path(),
                        req.headers().get(header::AUTHORIZATION),
                    )
                    .await;
                if let Err(refused) = checked {
                    match refused.status() {
                        StatusCode::INTERNAL_SERVER_ERROR => {
                            tracing::error!(%peer, error = %refused, source = ?std::error::Error::source(&refused), "metrics request not checked")
                        }
                        status => {
                            tracing::debug!(%peer, %status, error = %refused, "metrics request refused")
                        }
                    }
                    return Ok::<_, std::convert::Infallible>(response((
                        refused.status(),
                        TEXT,
                        format!("{refused}\n"),
                    )));
                }
            }
            Ok::<_, std::convert::Infallible>(answer(&router, &req))
        }
    });
    let conn = http1::Builder::new().serve_connection(TokioIo::new(io), svc);
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => if let Err(e) = r { tracing::debug!(%peer, error = %e, "connection ended") },
        () = cancel.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

fn answer(router: &Router, req: &http::Request<Incoming>) -> Response<Full<Bytes>> {
    let reply = if req.method() != Method::GET && req.method() != Method::HEAD {
        (
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "only GET\n".to_string(),
        )
    } else {
        router(req.uri().path(), req.uri().query()).unwrap_or((
            StatusCode::NOT_FOUND,
            TEXT,
            "404 page not found\n".into(),
        ))
    };
    response(reply)
}

fn response((status, ctype, body): Reply) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(ctype),
    );
    resp.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    resp
}
