//! Response encodings: objects with the requested version's type meta, typed lists (items
//! without type meta for built-ins, as on the wire), `PartialObjectMetadata` and `Table`.

use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value, json};

use crate::semantics::resources::Resource;
use crate::storage::object;

/// The representation a client asked for in `Accept`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Format {
    Full,
    /// `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`
    Metadata,
    /// `as=Table;g=meta.k8s.io;v=v1|v1beta1`, with `includeObject`.
    Table {
        version: String,
        include: String,
    },
}

/// One alternative of an `Accept` header: its media type and the `as`, `g` and `v` of a
/// representation (empty when not given).
struct Alternative<'a> {
    media: &'a str,
    as_: &'a str,
    g: &'a str,
    v: &'a str,
}

impl<'a> Alternative<'a> {
    fn parse(alt: &'a str) -> Self {
        let mut parts = alt.split(';').map(str::trim);
        let mut out = Alternative {
            media: parts.next().unwrap_or(""),
            as_: "",
            g: "",
            v: "",
        };
        for p in parts {
            match p.split_once('=') {
                Some(("as", x)) => out.as_ = x,
                Some(("g", x)) => out.g = x,
                Some(("v", x)) => out.v = x,
                _ => {}
            }
        }
        out
    }
}

impl Format {
    /// Picks the first alternative of an `Accept` header the server can produce.
    pub(crate) fn from_accept(accept: &str, include_object: Option<&str>) -> Format {
        for alt in accept.split(',') {
            let Alternative { media, as_, g, v } = Alternative::parse(alt);
            if media != "application/json" && media != "*/*" && !media.is_empty() {
                continue;
            }
            match (as_, g) {
                ("", _) => return Format::Full,
                ("Table", "meta.k8s.io") if v == "v1" || v == "v1beta1" => {
                    return Format::Table {
                        version: v.to_string(),
                        include: include_object.unwrap_or("Metadata").to_string(),
                    };
                }
                ("PartialObjectMetadata" | "PartialObjectMetadataList", "meta.k8s.io")
                    if v == "v1" || v == "v1beta1" =>
                {
                    return Format::Metadata;
                }
                _ => {}
            }
        }
        Format::Full
    }

    /// kube-apiserver's refusals of a representation for a read: metadata of one object asked
    /// of a list (or the reverse) is 406, a Table's `includeObject` must be one it knows.
    /// `kind` is the resource's kind and `list` whether the read is a list.
    pub(crate) fn check_read(
        accept: &str,
        include_object: Option<&str>,
        group: &str,
        kind: &str,
        custom: bool,
        list: bool,
    ) -> Result<(), crate::error::ApiError> {
        // Every alternative asks for a representation (`as=`) the server does not make.
        let alternatives: Vec<&str> = accept
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        let unknown = |alt: &str| {
            let Alternative { media, as_, g, v } = Alternative::parse(alt);
            let known = matches!(media, "application/json" | "*/*" | "")
                && matches!(
                    as_,
                    "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList"
                )
                && g == "meta.k8s.io"
                && matches!(v, "v1" | "v1beta1");
            !as_.is_empty() && !known
        };
        if !alternatives.is_empty() && alternatives.iter().all(|a| unknown(a)) {
            return Err(crate::error::ApiError::new(
                406,
                "NotAcceptable",
                crate::endpoints::negotiation::ONLY_ACCEPTED,
            ));
        }
        let asked = accept
            .split(',')
            .map(|alt| {
                let mut parts = alt.split(';').map(str::trim);
                let media = parts.next().unwrap_or("");
                let as_ = parts
                    .find_map(|p| p.strip_prefix("as="))
                    .unwrap_or("")
                    .to_string();
                (media, as_)
            })
            .find(|(media, _)| matches!(*media, "application/json" | "*/*" | ""))
            .map(|(_, as_)| as_)
            .unwrap_or_default();
        // The Go type a Go client would name: the internal type of a built-in, unstructured
        // for a custom resource.
        let go_type = |list: bool| {
            let suffix = if list { "List" } else { "" };
            if custom {
                return format!("*unstructured.Unstructured{suffix}");
            }
            let package = match group {
                "" | "events.k8s.io" => "core",
                g => g.split('.').next().unwrap_or(g),
            };
            format!("*{package}.{kind}{suffix}")
        };
        let mismatch = match (asked.as_str(), list) {
            ("PartialObjectMetadata", true) => Some("a list"),
            ("PartialObjectMetadataList", false) => Some("not a list"),
            _ => None,
        };
        if let Some(what) = mismatch {
            return Err(crate::error::ApiError::new(
                406,
                "NotAcceptable",
                format!(
                    "you requested {asked}, but the requested object is {what} ({})",
                    go_type(list)
                ),
            ));
        }
        if asked == "Table"
            && let Some(v) = include_object
            && !matches!(v, "" | "Metadata" | "Object" | "None")
        {
            return Err(crate::error::ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                crate::error::go_quote(v)
            )));
        }
        Ok(())
    }

    /// The `Content-Type` of a response in this format.
    pub(crate) fn content_type(&self, list: bool) -> String {
        match self {
            Format::Full => "application/json".into(),
            Format::Metadata => format!(
                "application/json;as=PartialObjectMetadata{};g=meta.k8s.io;v=v1",
                if list { "List" } else { "" }
            ),
            Format::Table { version, .. } => {
                format!("application/json;as=Table;g=meta.k8s.io;v={version}")
            }
        }
    }
}

/// An object serialized with `apiVersion`/`kind` replaced (or removed), without copying it.
pub(crate) struct View<'a> {
    pub(crate) obj: &'a Value,
    pub(crate) type_meta: Option<(&'a str, &'a str)>,
}

impl Serialize for View<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(m) = self.obj else {
            return self.obj.serialize(s);
        };
        let mut map = s.serialize_map(None)?;
        if let Some((av, k)) = self.type_meta {
            map.serialize_entry("apiVersion", av)?;
            map.serialize_entry("kind", k)?;
        }
        for (k, v) in m {
            if k == "apiVersion" || k == "kind" {
                continue;
            }
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// `PartialObjectMetadata` of an object.
pub(crate) fn partial_metadata(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
           "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))})
}

/// One object in the requested format.
pub(crate) fn object_body(res: &Resource, obj: &Value, format: &Format) -> Vec<u8> {
    let obj = &*res.read_view(obj);
    let av = res.api_version();
    let v = match format {
        Format::Full => {
            return serde_json::to_vec(&View {
                obj,
                type_meta: Some((&av, &res.kind)),
            })
            .unwrap_or_default();
        }
        Format::Metadata => partial_metadata(obj),
        Format::Table { version, include } => {
            table(res, &[Arc::new(obj.clone())], version, include, None)
        }
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

/// List metadata.
pub(crate) struct ListMeta {
    pub(crate) resource_version: u64,
    pub(crate) continue_token: Option<String>,
    pub(crate) remaining: Option<u64>,
    /// KEP-5866: the canonical `shardSelector` the list was selected with, echoed as
    /// `shardInfo.selector`.
    pub(crate) shard_selector: Option<String>,
}

impl ListMeta {
    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "resourceVersion".into(),
            json!(self.resource_version.to_string()),
        );
        if let Some(c) = &self.continue_token {
            m.insert("continue".into(), json!(c));
        }
        if let Some(r) = self.remaining {
            m.insert("remainingItemCount".into(), json!(r));
        }
        if let Some(s) = &self.shard_selector {
            m.insert("shardInfo".into(), json!({ "selector": s }));
        }
        Value::Object(m)
    }
}

#[derive(Serialize)]
struct ListBody<'a> {
    kind: &'a str,
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    metadata: Value,
    items: Vec<View<'a>>,
}

/// A list in the requested format.
pub(crate) fn list_body(
    res: &Resource,
    items: &[Arc<Value>],
    meta: &ListMeta,
    format: &Format,
) -> Vec<u8> {
    let av = res.api_version();
    match format {
        Format::Full => {
            let custom = res.is_custom();
            let views: Vec<std::borrow::Cow<'_, Value>> =
                items.iter().map(|o| res.read_view(o)).collect();
            let body = ListBody {
                kind: &res.list_kind,
                api_version: &av,
                metadata: meta.to_value(),
                items: views
                    .iter()
                    .map(|o| View {
                        obj: o,
                        // Typed lists carry no type meta per item; unstructured ones do.
                        type_meta: if custom { Some((&av, &res.kind)) } else { None },
                    })
                    .collect(),
            };
            serde_json::to_vec(&body).unwrap_or_default()
        }
        Format::Metadata => {
            let v = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": meta.to_value(),
                "items": items.iter().map(|o| partial_metadata(o)).collect::<Vec<_>>()});
            serde_json::to_vec(&v).unwrap_or_default()
        }
        Format::Table { version, include } => {
            serde_json::to_vec(&table(res, items, version, include, Some(meta))).unwrap_or_default()
        }
    }
}

/// Evaluates the simple JSONPath of printer columns: `.a.b`, `.a[0]`,
/// `.a[?(@.type=="Ready")].status`.
pub(crate) fn json_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut rest = path.trim_start_matches('$');
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let field = &rest[..end];
        if !field.is_empty() {
            cur = cur.get(field)?;
        }
        rest = &rest[end..];
        while let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            let inner = &after[..close];
            rest = &after[close + 1..];
            if let Some(filter) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                let (k, v) = filter.split_once("==")?;
                let v = v.trim().trim_matches('"').trim_matches('\'');
                cur = cur
                    .as_array()?
                    .iter()
                    .find(|i| i.get(k.trim()).and_then(Value::as_str) == Some(v))?;
            } else if inner == "*" {
                // Printer columns show the first of several results.
                cur = match cur {
                    Value::Array(a) => a.first()?,
                    Value::Object(m) => m.values().next()?,
                    _ => return None,
                };
            } else {
                let i: usize = inner.parse().ok()?;
                cur = cur.get(i)?;
            }
        }
    }
    Some(cur)
}

fn cell(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            v.cloned().unwrap_or(Value::Null)
        }
        Some(other) => json!(other.to_string()),
    }
}

/// Go's `duration.HumanDuration`, as kubectl shows ages.
pub(crate) fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// A timestamp cell as its age (`5m`), `<unknown>` when missing.
fn age(v: Option<&Value>) -> Value {
    match v.and_then(Value::as_str) {
        None => json!("<unknown>"),
        Some(s) => match s.parse::<jiff::Timestamp>() {
            Ok(t) => {
                let secs = jiff::Timestamp::now().duration_since(t).as_secs();
                json!(human_duration(secs))
            }
            Err(_) => json!(s),
        },
    }
}

/// A `meta.k8s.io` Table: `Name`, then the CRD's printer columns, or `Age`.
pub(crate) fn table(
    res: &Resource,
    items: &[Arc<Value>],
    version: &str,
    include: &str,
    meta: Option<&ListMeta>,
) -> Value {
    let printer: Vec<Value> = res
        .custom
        .as_ref()
        .map(|c| c.printer_columns.clone())
        .unwrap_or_default();
    let mut columns = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
        "priority": 0})];
    if printer.is_empty() {
        columns.push(json!({"name": "Age", "type": if res.is_custom() { "date" } else { "string" }, "format": "",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            "priority": 0}));
    } else {
        for c in &printer {
            let path = c.get("jsonPath").and_then(Value::as_str).unwrap_or("");
            let description = c
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| {
                    format!("Custom resource definition column (in JSONPath format): {path}")
                });
            columns.push(json!({
                "name": c.get("name").cloned().unwrap_or(json!("")),
                "type": c.get("type").cloned().unwrap_or(json!("string")),
                "format": c.get("format").cloned().unwrap_or(json!("")),
                "description": description,
                "priority": c.get("priority").cloned().unwrap_or(json!(0)),
            }));
        }
    }
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut cells = vec![json!(object::name(o))];
            if printer.is_empty() {
                cells.push(age(o.pointer("/metadata/creationTimestamp")));
            } else {
                for c in &printer {
                    let path = c.get("jsonPath").and_then(Value::as_str).unwrap_or("");
                    let v = json_path(o, path);
                    if c.get("type").and_then(Value::as_str) == Some("date") && v.is_some() {
                        cells.push(age(v));
                    } else {
                        cells.push(cell(v));
                    }
                }
            }
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells));
            match include {
                // kube-apiserver's row keeps the field, empty.
                "None" => {
                    row.insert("object".into(), Value::Null);
                }
                "Object" => {
                    let av = res.api_version();
                    row.insert(
                        "object".into(),
                        serde_json::to_value(View {
                            obj: o,
                            type_meta: Some((&av, &res.kind)),
                        })
                        .unwrap_or(Value::Null),
                    );
                }
                _ => {
                    row.insert("object".into(), partial_metadata(o));
                }
            }
            Value::Object(row)
        })
        .collect();
    let metadata = meta.map_or(json!({}), ListMeta::to_value);
    json!({"kind": "Table", "apiVersion": format!("meta.k8s.io/{version}"), "metadata": metadata,
           "columnDefinitions": columns, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            Format::from_accept(kubectl, None),
            Format::Table {
                version: "v1".into(),
                include: "Metadata".into()
            }
        );
        assert_eq!(
            Format::from_accept(
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                None
            ),
            Format::Metadata
        );
        assert_eq!(
            Format::from_accept(
                "application/vnd.kubernetes.protobuf, application/json",
                None
            ),
            Format::Full
        );
        assert_eq!(Format::from_accept("", None), Format::Full);
    }

    #[test]
    fn views_replace_type_meta() {
        let obj = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {}});
        let s = serde_json::to_string(&View {
            obj: &obj,
            type_meta: Some(("g/v2", "K")),
        })
        .unwrap_or_default();
        assert_eq!(s, r#"{"apiVersion":"g/v2","kind":"K","metadata":{}}"#);
        let s = serde_json::to_string(&View {
            obj: &obj,
            type_meta: None,
        })
        .unwrap_or_default();
        assert_eq!(s, r#"{"metadata":{}}"#);
    }

    #[test]
    fn printer_column_paths() {
        let o = json!({"spec": {"port": 80, "l": [1, 2]}, "status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}});
        assert_eq!(json_path(&o, ".spec.port"), Some(&json!(80)));
        assert_eq!(json_path(&o, ".spec.l[1]"), Some(&json!(2)));
        assert_eq!(
            json_path(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            Some(&json!("True"))
        );
        assert_eq!(json_path(&o, ".spec.missing"), None);
        assert_eq!(json_path(&o, ".spec.l[*]"), Some(&json!(1)));
        for (secs, want) in [
            (5, "5s"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600 + 60, "3h1m"),
            (30 * 3600, "30h"),
            (3 * 86400 + 3600, "3d1h"),
            (400 * 86400, "400d"),
            (3 * 365 * 86400, "3y"),
        ] {
            assert_eq!(human_duration(secs), want);
        }
    }
}
