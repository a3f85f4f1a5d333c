//! Content negotiation: request bodies in JSON or YAML (by `Content-Type`), responses in JSON
//! or YAML (by `Accept`), 406 for media types the server cannot produce, and the decode
//! errors worded as Go's decoders word them.

use bytes::Bytes;
use serde_json::Value;

use crate::error::{ApiError, go_json_error};

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
/// `streaming` is a read of a collection (a list or watch), whose 406 names the watch
/// encodings too. A wildcard of one type (`application/*`) matches nothing, as with
/// kube-apiserver.
pub(crate) fn negotiate(accept: &str, custom: bool, streaming: bool) -> Result<Media, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Media::Json);
    }
    let mut protobuf = false;
    for alt in accept.split(',') {
        match base(alt) {
            "application/json" | "*/*" | "" => return Ok(Media::Json),
            "application/yaml" => return Ok(Media::Yaml),
            "application/vnd.kubernetes.protobuf" => protobuf = true,
            _ => {}
        }
    }
    if protobuf && !custom {
        return Ok(Media::Json);
    }
    Err(not_acceptable(custom, streaming))
}

pub(crate) const ONLY_ACCEPTED: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";
const REPRESENTATIONS: &str = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// kube-apiserver's 406 (worded differently by the custom resource handler).
pub(crate) fn not_acceptable(custom: bool, streaming: bool) -> ApiError {
    let message = if custom {
        ONLY_ACCEPTED.to_string()
    } else if streaming {
        format!(
            "{REPRESENTATIONS}, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        )
    } else {
        REPRESENTATIONS.to_string()
    };
    ApiError::new(406, "NotAcceptable", message)
}

/// The discovery documents, by how kube-apiserver negotiates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Document {
    /// `/api`, `/apis/<group>`, `/apis/<group>/<version>`.
    Legacy,
    /// `/apis`.
    GroupList,
    /// `/version`: JSON only.
    Version,
}

/// The encoding of a discovery document: JSON, YAML or protobuf (answered in JSON) for
/// `/api` and `/apis…`, with aggregated discovery only at `v2` (`v2beta1` is no longer
/// served); `/version` only in JSON.
pub(crate) fn negotiate_document(accept: &str, doc: Document) -> Result<Media, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Media::Json);
    }
    let mut aggregated = false;
    for alt in accept.split(',') {
        let params: Vec<&str> = alt.split(';').skip(1).map(str::trim).collect();
        let media = match base(alt) {
            "*/*" | "" => Some(Media::Json),
            "application/*" if doc == Document::GroupList => Some(Media::Json),
            "application/json" => Some(Media::Json),
            "application/yaml" | "application/vnd.kubernetes.protobuf"
                if doc == Document::Version =>
            {
                None
            }
            "application/yaml" => Some(Media::Yaml),
            "application/vnd.kubernetes.protobuf" => Some(Media::Json),
            _ => None,
        };
        let Some(media) = media else {
            continue;
        };
        if doc != Document::Version && params.iter().any(|p| p.starts_with("as=")) {
            aggregated = true;
            let served = params.contains(&"as=APIGroupDiscoveryList")
                && params.contains(&"g=apidiscovery.k8s.io")
                && params.contains(&"v=v2");
            if !served {
                continue;
            }
        }
        return Ok(media);
    }
    let message = match doc {
        Document::Version => "406: Not Acceptable\n\nAvailable representations: application/json",
        Document::GroupList => ONLY_ACCEPTED,
        Document::Legacy if aggregated => ONLY_ACCEPTED,
        Document::Legacy => REPRESENTATIONS,
    };
    Err(ApiError::new(406, "NotAcceptable", message))
}

/// Whether a group-version's OpenAPI document (`/openapi/v2`, `/openapi/v3/<gv>`) may be
/// answered in JSON, the one encoding the fake writes them in: no `Accept`, or one naming JSON
/// or a wildcard (kube-apiserver ignores `q` here). kube-apiserver also writes them as protobuf
/// (gnostic's messages, what kubectl asks `/openapi/v2` for); asked only for that, the fake
/// answers as kube-apiserver answers a media type it cannot write: 406 with no body.
pub(crate) fn accepts_json_document(accept: &str) -> bool {
    accept.trim().is_empty()
        || accept
            .split(',')
            .any(|alt| matches!(base(alt), "*/*" | "application/*" | "application/json"))
}

/// JSON bytes re-encoded as YAML (keys sorted, as kube-apiserver's YAML serializer writes them).
pub(crate) fn to_yaml(json: &[u8]) -> Option<Vec<u8>> {
    let v: Value = serde_json::from_slice(json).ok()?;
    serde_saphyr::to_string(&v).ok().map(String::into_bytes)
}

/// `summarizeData`: a body quoted in an error, its first 30 bytes, as text when it starts
/// with `{` and in hex otherwise.
pub(crate) fn summarize(body: &[u8]) -> String {
    let head = &body[..body.len().min(30)];
    let more = if body.len() > 30 { " ..." } else { "" };
    if body.first() == Some(&b'{') {
        format!("{}{more}", String::from_utf8_lossy(head))
    } else {
        let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}{more}")
    }
}

/// A JSON value decoded as Go decodes into typed structs and maps: a duplicate key whose
/// values are both objects merges them (the second decode fills the same struct or map); any
/// other duplicate replaces.
struct GoTyped;

impl<'de> serde::de::DeserializeSeed<'de> for GoTyped {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(GoTypedVisitor)
    }
}

struct GoTypedVisitor;

impl<'de> serde::de::Visitor<'de> for GoTypedVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(GoTyped)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(GoTyped)?;
            match (out.get_mut(&k), v) {
                (Some(Value::Object(old)), Value::Object(new)) => merge_into(old, new),
                (_, v) => {
                    out.insert(k, v);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

fn merge_into(old: &mut serde_json::Map<String, Value>, new: serde_json::Map<String, Value>) {
    for (k, v) in new {
        match (old.get_mut(&k), v) {
            (Some(Value::Object(o)), Value::Object(n)) => merge_into(o, n),
            (_, v) => {
                old.insert(k, v);
            }
        }
    }
}

/// Re-decodes a JSON body with duplicate objects merged, as decoding into a built-in's Go
/// type does (custom resources decode into plain maps, where the last duplicate wins).
pub(crate) fn decode_typed(body: &[u8]) -> Option<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(body);
    GoTyped.deserialize(&mut de).ok()
}

/// A YAML document as a value, with aliases expanded as far as go-yaml (kube-apiserver's YAML
/// decoder) allows: at most 99 nodes from aliases for each node written out, and at most
/// 400,000 in all — beyond that go-yaml refuses the document for excessive aliasing, so a
/// small document cannot become a large object.
fn yaml_value(text: &str) -> Result<Value, serde_saphyr::Error> {
    use serde_saphyr::budget::{Budget, EnforcingPolicy, check_yaml_budget};
    let written = check_yaml_budget(text, Budget::default(), EnforcingPolicy::AllContent)
        .map_or(0, |report| report.nodes);
    // go-yaml checks the ratio only past 1,000 nodes; a node replayed from an alias is one
    // event for a scalar and two (start, end) for a collection.
    let allowed_nodes = written.saturating_mul(99).clamp(1_000, 400_000);
    let options = serde_saphyr::options! {
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: allowed_nodes * 2,
        },
    };
    serde_saphyr::from_str_with_options::<Value>(text, options)
}

/// Decodes a request body by its `Content-Type`: YAML for `application/yaml` and apply
/// patches, JSON otherwise. `kind` names the expected type in errors.
pub(crate) fn decode_body(
    body: &Bytes,
    content_type: &str,
    kind: &str,
) -> Result<Option<Value>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    let media = base(content_type);
    if media == "application/yaml" || media == "application/apply-patch+yaml" {
        let text = std::str::from_utf8(body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid UTF-8: {e}"))
        })?;
        return yaml_value(text).map(Some).map_err(|e| {
            // The error may come wrapped with its location: its text is what names it.
            if e.to_string().contains("alias replay limit exceeded") {
                return ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {kind}): yaml: document contains excessive aliasing ({})",
                    summarize(body)
                ));
            }
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
        // A JSON, merge or strategic merge patch that is not JSON at all.
        if matches!(
            media,
            "application/json-patch+json"
                | "application/merge-patch+json"
                | "application/strategic-merge-patch+json"
        ) {
            return ApiError::bad_request("invalid JSON patch");
        }
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

    /// `levels` lists, each of ten aliases of the one before: 10^levels scalars in all.
    fn alias_tower(levels: usize) -> String {
        let mut y = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nx:\n");
        y.push_str("  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..=levels {
            let refs = vec![format!("*l{}", i - 1); 10].join(", ");
            y.push_str(&format!("  l{i}: &l{i} [{refs}]\n"));
        }
        y
    }

    #[test]
    fn yaml_aliases_expand_only_as_far_as_go_yaml_allows() {
        let decode = |y: String| decode_body(&Bytes::from(y), "application/yaml", "ConfigMap");
        // A hundred scalars from aliases: fine.
        let small = decode(alias_tower(1)).ok().flatten();
        assert_eq!(
            small.and_then(|v| v.pointer("/x/l1/9/9").cloned()),
            Some(Value::from("x"))
        );
        // A 600-byte document that would be a billion scalars.
        let e = decode(alias_tower(9)).err();
        let e = e.map(|e| (e.code, e.message));
        assert!(
            e.as_ref().is_some_and(|(code, m)| *code == 400
                && m.starts_with("the object provided is unrecognized (must be of type ConfigMap): yaml: document contains excessive aliasing (")),
            "{e:?}"
        );
        // Past go-yaml's 400,000 alias nodes, however large the document.
        assert!(decode(alias_tower(6)).is_err());
    }

    #[test]
    fn accept_headers() {
        assert_eq!(negotiate("", false, false), Ok(Media::Json));
        assert_eq!(negotiate("application/yaml", true, false), Ok(Media::Yaml));
        assert_eq!(
            negotiate(
                "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
                false,
                false
            ),
            Ok(Media::Json)
        );
        assert_eq!(
            negotiate("text/html", false, false).map_err(|e| e.code),
            Err(406)
        );
        assert_eq!(
            negotiate("application/vnd.kubernetes.protobuf", true, false).map_err(|e| e.code),
            Err(406)
        );
    }

    #[test]
    fn go_worded_decode_errors() {
        let body =
            Bytes::from_static(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t""#);
        let e = decode_body(&body, "application/json", "ConfigMap")
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some(
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":\"v1\",\"kind\":\"Con ...)"
            )
        );
        let yaml = Bytes::from_static(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yy\n");
        let v = decode_body(&yaml, "application/yaml", "ConfigMap")
            .ok()
            .flatten();
        assert_eq!(
            v.map(|v| v["metadata"]["name"].clone()),
            Some(serde_json::json!("yy"))
        );
    }
}
