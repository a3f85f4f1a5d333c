//! Content negotiation: request bodies in JSON or YAML (by `Content-Type`), responses in JSON
//! or YAML (by `Accept`), 406 for media types the server cannot produce, and the decode
//! errors worded as Go's decoders word them.

use bytes::Bytes;
use serde_json::Value;

use crate::error::ApiError;

/// A response encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Yaml,
}

fn base(media_range: &str) -> &str {
    media_range.split(';').next().unwrap_or("").trim()
}

/// The encoding an `Accept` header asks for: the first alternative the server produces.
/// `custom` resources cannot be served as protobuf (a 406, as from kube-apiserver); built-in
/// ones are answered in JSON, which clients that asked for protobuf decode by the response's
/// `Content-Type`.
pub(crate) fn negotiate(accept: &str, custom: bool) -> Result<Media, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Media::Json);
    }
    let mut protobuf = false;
    for alt in accept.split(',') {
        match base(alt) {
            "application/json" | "*/*" | "application/*" | "" => return Ok(Media::Json),
            "application/yaml" => return Ok(Media::Yaml),
            "application/vnd.kubernetes.protobuf" => protobuf = true,
            _ => {}
        }
    }
    if protobuf && !custom {
        return Ok(Media::Json);
    }
    Err(not_acceptable(custom))
}

/// kube-apiserver's 406 (worded differently by the custom resource handler).
pub(crate) fn not_acceptable(custom: bool) -> ApiError {
    if custom {
        ApiError::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )
    } else {
        ApiError::new(
            406,
            "NotAcceptable",
            "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        )
    }
}

/// JSON bytes re-encoded as YAML (keys sorted, as kube-apiserver's YAML serializer writes them).
pub(crate) fn to_yaml(json: &[u8]) -> Option<Vec<u8>> {
    let v: Value = serde_json::from_slice(json).ok()?;
    serde_saphyr::to_string(&v).ok().map(String::into_bytes)
}

/// `summarizeData`: a body quoted in an error, its first 30 bytes, as text when it starts
/// with `{` and in hex otherwise.
fn summarize(body: &[u8]) -> String {
    let head = &body[..body.len().min(30)];
    let more = if body.len() > 30 { " ..." } else { "" };
    if body.first() == Some(&b'{') {
        format!("{}{more}", String::from_utf8_lossy(head))
    } else {
        let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}{more}")
    }
}

/// Whether brackets and braces outside strings are left open at the end of the input.
fn unbalanced(body: &[u8]) -> bool {
    let (mut depth, mut in_str, mut escaped) = (0i64, false, false);
    for b in body {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    depth > 0 || in_str
}

/// A serde_json error as Go's `encoding/json` would word it, where the two can be told apart.
pub(crate) fn go_json_error(e: &serde_json::Error, body: &[u8]) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "unexpected end of JSON input".to_string(),
        // Go reads 10 000 levels deep before giving up; an unclosed document ends first.
        _ if e.to_string().starts_with("recursion limit exceeded") && unbalanced(body) => {
            "unexpected end of JSON input".to_string()
        }
        serde_json::error::Category::Syntax => {
            // The byte at the error position, as Go quotes it.
            let offset = body
                .split(|b| *b == b'\n')
                .take(e.line().saturating_sub(1))
                .map(|l| l.len() + 1)
                .sum::<usize>()
                + e.column().saturating_sub(1);
            match body.get(offset) {
                Some(b) if b.is_ascii_graphic() => {
                    format!("invalid character '{}' looking for beginning of value", *b as char)
                }
                Some(b) => format!("invalid character '\\u{:04x}' looking for beginning of value", b),
                None => "unexpected end of JSON input".to_string(),
            }
        }
        _ => e.to_string(),
    }
}

/// Decodes a request body by its `Content-Type`: YAML for `application/yaml` and apply
/// patches, JSON otherwise. `kind` names the expected type in errors.
pub(crate) fn decode_body(body: &Bytes, content_type: &str, kind: &str) -> Result<Option<Value>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    let media = base(content_type);
    if media == "application/yaml" || media == "application/apply-patch+yaml" {
        let text = std::str::from_utf8(body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid UTF-8: {e}"))
        })?;
        return serde_saphyr::from_str::<Value>(text).map(Some).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("").to_string();
            if media == "application/apply-patch+yaml" {
                ApiError::bad_request(format!("error encoding patch: yaml: {first}"))
            } else {
                ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; yaml: {first}"
                ))
            }
        });
    }
    serde_json::from_slice(body).map(Some).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {} ({})",
            go_json_error(&e, body),
            summarize(body)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers() {
        assert_eq!(negotiate("", false), Ok(Media::Json));
        assert_eq!(negotiate("application/yaml", true), Ok(Media::Yaml));
        assert_eq!(
            negotiate("application/json;as=Table;v=v1;g=meta.k8s.io, application/json", false),
            Ok(Media::Json)
        );
        assert_eq!(negotiate("text/html", false).map_err(|e| e.code), Err(406));
        assert_eq!(
            negotiate("application/vnd.kubernetes.protobuf", true).map_err(|e| e.code),
            Err(406)
        );
    }

    #[test]
    fn go_worded_decode_errors() {
        let body = Bytes::from_static(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t""#);
        let e = decode_body(&body, "application/json", "ConfigMap").err().map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":\"v1\",\"kind\":\"Con ...)")
        );
        let yaml = Bytes::from_static(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yy\n");
        let v = decode_body(&yaml, "application/yaml", "ConfigMap").ok().flatten();
        assert_eq!(v.map(|v| v["metadata"]["name"].clone()), Some(serde_json::json!("yy")));
    }
}
