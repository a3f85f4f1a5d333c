//! Building responses: a body with its status and content type, a `Status` for an error (or
//! the plain-text 404 outside the built-in groups), warning headers, watch streams, and the
//! YAML re-encoding of a JSON response.

use bytes::Bytes;
use http::{Response, StatusCode, header};
use serde_json::Value;

use crate::endpoints::body::ResponseBody;
use crate::error::ApiError;

pub(crate) fn respond(code: u16, content_type: &str, body: Vec<u8>) -> Response<ResponseBody> {
    let mut r = Response::new(ResponseBody::full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

pub(crate) fn json_response(code: u16, v: &Value) -> Response<ResponseBody> {
    respond(
        code,
        "application/json",
        serde_json::to_vec(v).unwrap_or_default(),
    )
}

pub(crate) fn error_response(e: &ApiError) -> Response<ResponseBody> {
    if e.reason == PAGE_NOT_FOUND {
        return respond(
            404,
            "text/plain; charset=utf-8",
            b"404 page not found\n".to_vec(),
        );
    }
    let mut r = json_response(e.code, &e.to_status());
    // As kube-apiserver's response writer: a Status asking for a retry says when in a header.
    if let Some(secs) = e
        .details
        .as_ref()
        .and_then(|d| d.get("retryAfterSeconds"))
        .and_then(Value::as_u64)
        .filter(|s| *s > 0)
    {
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    r
}

/// Marks the plain-text 404 that paths outside the built-in groups get.
const PAGE_NOT_FOUND: &str = "page not found";

/// The 404 for a path nothing serves: a JSON `Status` under the core and built-in groups, the
/// plain-text `404 page not found` elsewhere (the apiextensions server's not-found handler).
pub(crate) fn not_served(group: &str) -> ApiError {
    if crate::semantics::resources::is_builtin_group(group) {
        ApiError::no_route()
    } else {
        ApiError::new(404, PAGE_NOT_FOUND, "404 page not found")
    }
}

/// Adds a `Warning: 299 - "<message>"` header per warning.
pub(crate) fn with_warnings(
    mut resp: Response<ResponseBody>,
    warnings: &parking_lot::Mutex<Vec<String>>,
) -> Response<ResponseBody> {
    for w in warnings.lock().iter() {
        let value = format!("299 - {}", crate::error::go_quote(w));
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

/// A watch response: its lines as the receiver yields them.
pub(crate) fn stream_response(rx: tokio::sync::mpsc::Receiver<Bytes>) -> Response<ResponseBody> {
    let mut r = Response::new(ResponseBody::stream(rx));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache, private"),
    );
    r
}

/// Re-encodes a complete JSON response as YAML (watch streams and other types pass).
pub(crate) async fn to_yaml_response(resp: Response<ResponseBody>) -> Response<ResponseBody> {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v == "application/json");
    if !is_json || !resp.body().is_complete() {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = http_body_util::BodyExt::collect(body)
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    match crate::endpoints::negotiation::to_yaml(&bytes) {
        Some(y) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/yaml"),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, ResponseBody::full(y))
        }
        None => Response::from_parts(parts, ResponseBody::full(bytes)),
    }
}
