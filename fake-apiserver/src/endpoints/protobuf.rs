//! Built-in objects sent as protobuf, read into the JSON the rest of the server works on.
//!
//! client-go's typed clients and kubectl's generators (`kubectl create configmap`, `kubectl
//! create deployment`, …) send built-in objects to kube-apiserver as protobuf
//! (`application/vnd.kubernetes.protobuf`). kube-apiserver decodes the body into the kind's Go
//! type; what it then does is what it does for a JSON body decoded into the same type. So the
//! body is turned into the JSON Go's `encoding/json` writes for that value: the JSON the same
//! client sends when told to use JSON. Empty fields come out as Go writes them (`omitempty`
//! fields left out, a zero number that was set through a pointer kept, `null` for an empty
//! list without `omitempty`, `"creationTimestamp": null`).
//!
//! The body is kube-apiserver's envelope: the bytes `k8s\0`, then a `runtime.Unknown` message
//! with the object's `apiVersion` and `kind` and the object's own message. The fields of every
//! built-in type (number, JSON name, Go type, pointer, `omitempty`, inline) come from
//! `builtin_protobuf.json`, which `tests/kube-apiserver/goprotobuf` writes from the Go types'
//! struct tags (`scripts/update-openapi-extensions.sh` runs it). The wire format is read with
//! the `protobuf` crate.

use std::collections::HashMap;
use std::sync::LazyLock;

use base64::Engine as _;
use protobuf::CodedInputStream;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The magic bytes before kube-apiserver's protobuf envelope.
const MAGIC: &[u8] = b"k8s\x00";

/// How deep messages may nest. Decoding recurses once per level, so a body of nothing but
/// nesting must end in an error, not in a stack overflow. JSON bodies stop at 128 levels
/// (serde_json's limit); a protobuf map entry adds a level of its own, so twice that here.
const MAX_DEPTH: usize = 256;

/// Why a protobuf body could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ProtobufError {
    /// The body does not start with kube-apiserver's envelope.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NoEnvelope,
    /// Nothing follows the envelope's prefix.
    #[error("empty body")]
    EmptyBody,
    /// The envelope names a kind that has no protobuf encoding (a custom resource's, or one
    /// this server does not know).
    #[error(
        "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/runtime/scheme.go:111\""
    )]
    UnknownKind { api_version: String, kind: String },
    /// The bytes are not a valid message of the kind the envelope names (`path`: where).
    #[error("{cause} (at {path})")]
    Malformed {
        api_version: String,
        kind: String,
        path: String,
        cause: String,
    },
}

/// The Go facts of the built-in types (see the module docs).
#[derive(Deserialize)]
struct Schema {
    custom: Vec<String>,
    kinds: HashMap<String, String>,
    types: HashMap<String, Vec<(u32, String, String, String)>>,
}

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    serde_json::from_str(include_str!("builtin_protobuf.json")).unwrap_or_else(|e| {
        // The file is part of the build: a broken one is a bug caught by the tests.
        tracing::error!("builtin_protobuf.json does not parse: {e}");
        Schema {
            custom: Vec::new(),
            kinds: HashMap::new(),
            types: HashMap::new(),
        }
    })
});

/// Whether `content_type` is kube-apiserver's protobuf media type.
pub(crate) fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|m| m.trim() == "application/vnd.kubernetes.protobuf")
}

/// Whether objects of `kind` in `api_version` (`v1`, `apps/v1`) have a protobuf encoding: the
/// built-in kinds, also when served through generated resources (the review kinds).
pub(crate) fn has_encoding(api_version: &str, kind: &str) -> bool {
    SCHEMA.kinds.contains_key(&format!("{api_version}/{kind}"))
}

/// The object in a protobuf body, as the JSON Go writes for it, with the envelope's `kind` and
/// `apiVersion`.
pub(crate) fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let envelope = body.strip_prefix(MAGIC).ok_or(ProtobufError::NoEnvelope)?;
    if envelope.is_empty() {
        return Err(ProtobufError::EmptyBody);
    }
    let with_kind = |api_version: String, kind: String| {
        move |e: Malformed| ProtobufError::Malformed {
            api_version,
            kind,
            path: e.path,
            cause: e.cause,
        }
    };
    let unknown = Fields::read(envelope, "runtime.Unknown")
        .map_err(with_kind(String::new(), String::new()))?;
    let type_meta = Fields::read(&unknown.bytes(1), "runtime.TypeMeta")
        .map_err(with_kind(String::new(), String::new()))?;
    let api_version = type_meta.string(1);
    let kind = type_meta.string(2);
    let key = format!("{api_version}/{kind}");
    let Some(type_name) = SCHEMA.kinds.get(&key) else {
        return Err(ProtobufError::UnknownKind { api_version, kind });
    };
    let mut object = Map::new();
    object.insert("kind".into(), Value::String(kind.clone()));
    object.insert("apiVersion".into(), Value::String(api_version.clone()));
    let fields = message(&unknown.bytes(2), type_name, &kind, 0)
        .map_err(with_kind(api_version.clone(), kind.clone()))?;
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    Ok(Value::Object(object))
}

/// Where and why a message did not decode.
struct Malformed {
    path: String,
    cause: String,
}

impl Malformed {
    fn at(path: &str, cause: impl Into<String>) -> Malformed {
        Malformed {
            path: path.to_string(),
            cause: cause.into(),
        }
    }

    /// A wire-level error in Go's words where they are known (gogo's generated decoders
    /// report a message cut short as `unexpected EOF`).
    fn wire(path: &str, e: &protobuf::Error) -> Malformed {
        let text = e.to_string();
        let cause =
            if text.to_ascii_lowercase().contains("unexpected eof") || text.contains("truncated") {
                "unexpected EOF".to_string()
            } else {
                text
            };
        Malformed::at(path, cause)
    }
}

/// One value as the wire carries it.
enum Wire {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(Vec<u8>),
}

/// A message's fields by number, each with its values in the order sent.
struct Fields(HashMap<u32, Vec<Wire>>);

impl Fields {
    fn read(bytes: &[u8], path: &str) -> Result<Fields, Malformed> {
        let malformed = |e: protobuf::Error| Malformed::wire(path, &e);
        let mut input = CodedInputStream::from_bytes(bytes);
        let mut fields: HashMap<u32, Vec<Wire>> = HashMap::new();
        while let Some(tag) = input.read_raw_tag_or_eof().map_err(malformed)? {
            let value = match tag & 7 {
                0 => Wire::Varint(input.read_raw_varint64().map_err(malformed)?),
                1 => Wire::Fixed64(input.read_fixed64().map_err(malformed)?),
                2 => Wire::Bytes(input.read_bytes().map_err(malformed)?),
                5 => Wire::Fixed32(input.read_fixed32().map_err(malformed)?),
                other => {
                    return Err(Malformed::at(
                        path,
                        format!("proto: wrong wireType = {other} for field {}", tag >> 3),
                    ));
                }
            };
            fields.entry(tag >> 3).or_default().push(value);
        }
        Ok(Fields(fields))
    }

    fn values(&self, number: u32) -> &[Wire] {
        self.0.get(&number).map_or(&[], Vec::as_slice)
    }

    /// A message field's bytes: its occurrences joined, which protobuf reads as one merged
    /// message.
    fn bytes(&self, number: u32) -> Vec<u8> {
        let mut out = Vec::new();
        for v in self.values(number) {
            if let Wire::Bytes(b) = v {
                out.extend_from_slice(b);
            }
        }
        out
    }

    fn string(&self, number: u32) -> String {
        match self.values(number).last() {
            Some(Wire::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        }
    }

    fn varint(&self, number: u32) -> Option<u64> {
        match self.values(number).last() {
            Some(Wire::Varint(v)) => Some(*v),
            _ => None,
        }
    }
}

/// The message of `type_name` in `bytes`, as Go's JSON for the decoded value. `path` names it
/// in errors.
fn message(bytes: &[u8], type_name: &str, path: &str, depth: usize) -> Result<Value, Malformed> {
    if depth > MAX_DEPTH {
        return Err(Malformed::at(
            path,
            format!("messages nest deeper than {MAX_DEPTH} levels"),
        ));
    }
    let depth = depth + 1;
    let fields = Fields::read(bytes, path)?;
    if SCHEMA.custom.iter().any(|c| c == type_name) {
        return custom(&fields, type_name, path, depth);
    }
    let Some(layout) = SCHEMA.types.get(type_name) else {
        return Err(Malformed::at(
            path,
            format!("no fields are known for {type_name}"),
        ));
    };
    let mut out = Map::new();
    for (number, name, ty, flags) in layout {
        let values = fields.values(*number);
        let field_path = if name.is_empty() {
            path.to_string()
        } else {
            format!("{path}.{name}")
        };
        let pointer = flags.contains('p');
        let omitempty = flags.contains('o');
        if name.is_empty() && !flags.contains('i') {
            // A list with a message of its own (ExtraValue): its JSON is the list.
            return list(
                values,
                ty.strip_prefix("[]").unwrap_or(ty),
                &field_path,
                depth,
            );
        }
        let value = if values.is_empty() && (pointer || is_list(ty)) {
            // nil: left out with `omitempty`, else `null`.
            if omitempty {
                continue;
            }
            Value::Null
        } else if let Some(elem) = ty.strip_prefix("[]") {
            list(values, elem, &field_path, depth)?
        } else if let Some((key, value)) = map_types(ty) {
            map(values, key, value, &field_path, depth)?
        } else if let Some(v) = scalar(values, ty, &field_path)? {
            if omitempty && !pointer && is_zero(&v) {
                continue;
            }
            v
        } else {
            let nested = message(&fields.bytes(*number), ty, &field_path, depth)?;
            if flags.contains('i') {
                if let Value::Object(inner) = nested {
                    out.extend(inner);
                }
                continue;
            }
            nested
        };
        out.insert(name.clone(), value);
    }
    Ok(Value::Object(out))
}

fn is_list(ty: &str) -> bool {
    ty.starts_with("[]") || ty.starts_with("map[") || ty == "bytes"
}

/// `("K", "V")` of `map[K]V`.
fn map_types(ty: &str) -> Option<(&str, &str)> {
    let inner = ty.strip_prefix("map[")?;
    let close = inner.find(']')?;
    Some((&inner[..close], &inner[close + 1..]))
}

/// Whether Go's `omitempty` leaves `v` out.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

/// A scalar field's value (`None`: `ty` is not a scalar). An absent field is Go's zero value.
fn scalar(values: &[Wire], ty: &str, path: &str) -> Result<Option<Value>, Malformed> {
    let last = values.last();
    let wrong = || Malformed::at(path, format!("proto: wrong wireType for a {ty} field"));
    let varint = || match last {
        None => Ok(0),
        Some(Wire::Varint(v)) => Ok(*v),
        Some(_) => Err(wrong()),
    };
    Ok(Some(match ty {
        "string" => match last {
            None => Value::String(String::new()),
            Some(Wire::Bytes(b)) => Value::String(String::from_utf8_lossy(b).into_owned()),
            Some(_) => return Err(wrong()),
        },
        "bytes" => match last {
            None => Value::Null,
            Some(Wire::Bytes(b)) => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Some(_) => return Err(wrong()),
        },
        "bool" => Value::Bool(varint()? != 0),
        // Two's complement on the wire: the low bits are the value.
        "int32" => Value::from(varint()? as i32),
        "int64" => Value::from(varint()? as i64),
        "uint32" => Value::from(varint()? as u32),
        "uint64" => Value::from(varint()?),
        "float64" => match last {
            None => Value::from(0.0),
            Some(Wire::Fixed64(b)) => Value::from(f64::from_bits(*b)),
            Some(_) => return Err(wrong()),
        },
        "float32" => match last {
            None => Value::from(0.0),
            Some(Wire::Fixed32(b)) => Value::from(f64::from(f32::from_bits(*b))),
            Some(_) => return Err(wrong()),
        },
        _ => return Ok(None),
    }))
}

/// A repeated field: one element per value, numbers also packed into one value.
fn list(values: &[Wire], elem: &str, path: &str, depth: usize) -> Result<Value, Malformed> {
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        match (v, elem) {
            (Wire::Bytes(b), "int32" | "int64" | "uint32" | "uint64" | "bool") => {
                let mut input = CodedInputStream::from_bytes(b);
                while !input.eof().map_err(|e| Malformed::wire(&item_path, &e))? {
                    let n = input
                        .read_raw_varint64()
                        .map_err(|e| Malformed::wire(&item_path, &e))?;
                    let one = [Wire::Varint(n)];
                    out.extend(scalar(&one, elem, &item_path)?);
                }
            }
            (Wire::Bytes(b), _) if !matches!(elem, "string" | "bytes") && !is_scalar(elem) => {
                out.push(message(b, elem, &item_path, depth)?);
            }
            _ => {
                let one = std::slice::from_ref(v);
                match scalar(one, elem, &item_path)? {
                    Some(s) => out.push(s),
                    None => {
                        return Err(Malformed::at(
                            &item_path,
                            format!("proto: wrong wireType for a {elem} element"),
                        ));
                    }
                }
            }
        }
    }
    Ok(Value::Array(out))
}

fn is_scalar(ty: &str) -> bool {
    matches!(
        ty,
        "string"
            | "bytes"
            | "bool"
            | "int32"
            | "int64"
            | "uint32"
            | "uint64"
            | "float32"
            | "float64"
    )
}

/// A map field: each value is an entry message with the key at 1 and the value at 2.
fn map(
    values: &[Wire],
    key: &str,
    value: &str,
    path: &str,
    depth: usize,
) -> Result<Value, Malformed> {
    let mut out = Map::new();
    for v in values {
        let Wire::Bytes(b) = v else {
            return Err(Malformed::at(path, "proto: wrong wireType for a map entry"));
        };
        let entry = Fields::read(b, path)?;
        let k = match scalar(entry.values(1), key, path)? {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let item_path = format!("{path}[{k}]");
        let v = match scalar(entry.values(2), value, &item_path)? {
            Some(s) => s,
            None => message(&entry.bytes(2), value, &item_path, depth + 1)?,
        };
        out.insert(k, v);
    }
    Ok(Value::Object(out))
}

/// A type that writes its own JSON (Go's `MarshalJSON`), from its protobuf fields.
fn custom(fields: &Fields, type_name: &str, path: &str, depth: usize) -> Result<Value, Malformed> {
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    let raw_json = |number: u32| -> Result<Value, Malformed> {
        let raw = fields.bytes(number);
        if raw.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&raw)
            .map_err(|e| Malformed::at(path, format!("its raw bytes are not JSON: {e}")))
    };
    let schema = |number: u32| -> Result<Option<Value>, Malformed> {
        if fields.values(number).is_empty() {
            return Ok(None);
        }
        let props = type_name
            .rsplit_once('.')
            .map_or(String::new(), |(p, _)| format!("{p}.JSONSchemaProps"));
        message(&fields.bytes(number), &props, path, depth).map(Some)
    };
    Ok(match short {
        "Time" | "MicroTime" => {
            let Some(seconds) = fields.varint(1) else {
                return Ok(Value::Null); // the zero time
            };
            let nanos = if short == "MicroTime" {
                fields.varint(2).unwrap_or(0) as i32
            } else {
                0 // metav1.Time keeps seconds only
            };
            let t = jiff::Timestamp::new(seconds as i64, nanos)
                .map_err(|e| Malformed::at(path, e.to_string()))?;
            let format = if short == "MicroTime" {
                "%Y-%m-%dT%H:%M:%S%.6fZ"
            } else {
                "%Y-%m-%dT%H:%M:%SZ"
            };
            Value::String(t.strftime(format).to_string())
        }
        "Quantity" => {
            let s = fields.string(1);
            Value::String(if s.is_empty() { "0".into() } else { s })
        }
        "IntOrString" => {
            if fields.varint(1) == Some(1) {
                Value::String(fields.string(3))
            } else {
                Value::from(fields.varint(2).unwrap_or(0) as i32)
            }
        }
        "RawExtension" | "FieldsV1" | "JSON" => raw_json(1)?,
        "JSONSchemaPropsOrBool" => match schema(2)? {
            Some(s) => s,
            None => Value::Bool(fields.varint(1).unwrap_or(0) != 0),
        },
        "JSONSchemaPropsOrArray" => {
            let items = fields.values(2);
            if items.is_empty() {
                schema(1)?.unwrap_or(Value::Null)
            } else {
                let props = type_name
                    .rsplit_once('.')
                    .map_or(String::new(), |(p, _)| format!("{p}.JSONSchemaProps"));
                list(items, &props, path, depth)?
            }
        }
        "JSONSchemaPropsOrStringArray" => {
            let items = fields.values(2);
            if items.is_empty() {
                schema(1)?.unwrap_or(Value::Null)
            } else {
                list(items, "string", path, depth)?
            }
        }
        _ => {
            return Err(Malformed::at(
                path,
                format!("{type_name} writes its own JSON, and this server does not know how"),
            ));
        }
    })
}

#[cfg(test)]
mod tests;
