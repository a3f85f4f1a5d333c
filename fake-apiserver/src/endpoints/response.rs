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

/// A complete JSON response taken apart (its head and whole body), or the response itself
/// when it is anything else: a stream (a watch), or not JSON.
async fn complete_json(
    resp: Response<ResponseBody>,
) -> Result<(http::response::Parts, Bytes), Response<ResponseBody>> {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v == "application/json");
    if !is_json || !resp.body().is_complete() {
        return Err(resp);
    }
    let (parts, body) = resp.into_parts();
    let bytes = http_body_util::BodyExt::collect(body)
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    Ok((parts, bytes))
}

/// Re-encodes a complete JSON response as YAML (watch streams and other types pass).
pub(crate) async fn to_yaml_response(resp: Response<ResponseBody>) -> Response<ResponseBody> {
    let (mut parts, bytes) = match complete_json(resp).await {
        Ok(taken) => taken,
        Err(other) => return other,
    };
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

/// Whether kube-apiserver indents its JSON answer to this request: `?pretty=` when given
/// (any value `strconv.ParseBool` does not read as true is false), otherwise for the user
/// agents of browsers and command-line HTTP tools.
pub(crate) fn wants_pretty(query: Option<&str>, user_agent: &str) -> bool {
    let given = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
        .find(|(k, _)| *k == "pretty")
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty());
    match given {
        Some(v) => matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True"),
        None => ["curl", "Wget", "Mozilla/5.0"]
            .iter()
            .any(|p| user_agent.starts_with(p)),
    }
}

/// Compact JSON indented as Go's `json.MarshalIndent(v, "", "  ")` writes it, keys kept in
/// their order: a line per member and item, `": "` after keys, `{}` and `[]` for empty ones,
/// no final newline.
pub(crate) fn indent_json(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', depth * 2));
    };
    let mut i = 0;
    while i < compact.len() {
        let b = compact[i];
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                if compact.get(i + 1) == Some(&close) {
                    out.extend([b, close]);
                    i += 2;
                    continue;
                }
                out.push(b);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => out.extend(b": "),
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

/// Indents a complete JSON response (watch streams and other types pass).
pub(crate) async fn to_pretty_response(resp: Response<ResponseBody>) -> Response<ResponseBody> {
    let (mut parts, bytes) = match complete_json(resp).await {
        Ok(taken) => taken,
        Err(other) => return other,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, ResponseBody::full(indent_json(&bytes)))
}

#[cfg(test)]
mod pretty_tests {
    use super::*;

    #[test]
    fn indents_like_go() {
        let compact = br#"{"kind":"A","m":{},"l":[],"s":"a,b:{\"c\"}","n":[1,{"x":null}]}"#;
        let want = "{\n  \"kind\": \"A\",\n  \"m\": {},\n  \"l\": [],\n  \"s\": \"a,b:{\\\"c\\\"}\",\n  \"n\": [\n    1,\n    {\n      \"x\": null\n    }\n  ]\n}";
        assert_eq!(String::from_utf8_lossy(&indent_json(compact)), want);
    }

    #[test]
    fn pretty_by_parameter_then_user_agent() {
        assert!(wants_pretty(Some("pretty=true"), "kubectl/v1"));
        assert!(!wants_pretty(Some("pretty=false"), "curl/8"));
        assert!(!wants_pretty(Some("pretty=yes"), "kubectl/v1"));
        assert!(wants_pretty(Some("pretty="), "curl/8"));
        assert!(wants_pretty(None, "Mozilla/5.0 (X11)"));
        assert!(!wants_pretty(Some("limit=1"), "kube-rs/1"));
    }
}
