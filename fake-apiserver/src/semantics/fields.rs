//! Field validation (`fieldValidation=Ignore|Warn|Strict`, Warn by default): duplicate fields
//! of a JSON body and fields the type does not declare. Built-in objects are checked against
//! their schemas (and such fields dropped, as decoding into Go structs drops them); custom
//! resources get their metadata checked here and the rest by structural pruning
//! (`schema::prune_and_default`).

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::semantics::builtin_schema::{META, builtin_schemas};

/// What to do with unknown and duplicate fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Directive {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl Directive {
    /// Parses the query parameter; `options` names the options kind in the 422
    /// (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
    pub(crate) fn parse(value: Option<&str>, options: &str) -> ApiResult<Directive> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(Directive::Warn),
            "Ignore" => Ok(Directive::Ignore),
            "Strict" => Ok(Directive::Strict),
            other => Err(ApiError::invalid(
                "meta.k8s.io",
                options,
                "",
                vec![FieldError::not_supported(
                    "fieldValidation",
                    other,
                    &["", "Ignore", "Strict", "Warn"],
                )],
            )),
        }
    }
}

/// Unknown and duplicate fields of a body, each as the message kube-apiserver uses
/// (`unknown field "spec.foo"`, `duplicate field "spec.port"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Problems {
    pub(crate) unknown: Vec<String>,
    pub(crate) duplicate: Vec<String>,
    /// The first value Go's decoder would refuse (it keeps the first error in document order).
    pub(crate) decode_error: Option<DecodeError>,
}

/// A value Go's JSON decoder refuses for the field it lands in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A value of the wrong JSON type: `json: cannot unmarshal string into Go struct field
    /// ConfigMap.data of type map[string]string`.
    WrongType(String),
    /// A string in a `[]byte` field (`format: byte`, a ConfigMap's `binaryData`) that is not
    /// base64: `illegal base64 data at input byte 2`.
    Base64(String),
}

impl DecodeError {
    /// Go's message.
    pub(crate) fn message(&self) -> &str {
        match self {
            DecodeError::WrongType(m) | DecodeError::Base64(m) => m,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl Problems {
    /// The paths of the unknown fields (`spec.bogus`), without the decoder's wording.
    pub(crate) fn unknown_paths(&self) -> Vec<String> {
        self.unknown
            .iter()
            .map(|m| {
                m.trim_start_matches("unknown field ")
                    .trim_matches('"')
                    .to_string()
            })
            .collect()
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Follows `$ref` and a lone `allOf` reference to the schema they name.
fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    resolve_named(schema, defs).0
}

/// [`resolve`], with the name of the last definition followed.
fn resolve_named<'a>(
    schema: &'a Value,
    defs: &'a Map<String, Value>,
) -> (&'a Value, Option<&'a str>) {
    let mut cur = schema;
    let mut name = None;
    for _ in 0..32 {
        let target = cur
            .get("$ref")
            .or_else(|| cur.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next());
        match target.and_then(|t| defs.get_key_value(t)) {
            Some((k, next)) => {
                cur = next;
                name = Some(k.as_str());
            }
            None => break,
        }
    }
    (cur, name)
}

/// Types with their own JSON decoding, which take several JSON kinds.
fn custom_decoded(def: Option<&str>, schema: &Value) -> bool {
    def.is_some_and(|d| {
        d.ends_with(".Quantity")
            || d.ends_with(".IntOrString")
            || d.ends_with(".Time")
            || d.ends_with(".MicroTime")
            || d.ends_with(".RawExtension")
            || d.ends_with(".FieldsV1")
            || d.ends_with(".JSON")
            || d.ends_with(".Patch")
    }) || schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || schema.get("format").and_then(Value::as_str) == Some("int-or-string")
}

/// The Go type a schema decodes into (`string`, `int32`, `[]v1.Container`,
/// `map[string]string`).
fn go_type(schema: &Value, defs: &Map<String, Value>) -> String {
    let (s, def) = resolve_named(schema, defs);
    if let Some(d) = def
        && s.get("properties").is_some()
    {
        let mut parts = d.rsplit('.');
        let name = parts.next().unwrap_or(d);
        let pkg = parts.next().unwrap_or("");
        return format!("{pkg}.{name}");
    }
    match s.get("type").and_then(Value::as_str).unwrap_or("") {
        "string" => "string".into(),
        "boolean" => "bool".into(),
        "integer" => match s.get("format").and_then(Value::as_str) {
            Some("int64") => "int64".into(),
            _ => "int32".into(),
        },
        "number" => "float64".into(),
        "array" => format!(
            "[]{}",
            s.get("items")
                .map_or("interface {}".into(), |i| go_type(i, defs))
        ),
        "object" => match s.get("additionalProperties") {
            Some(ap) if ap.is_object() => format!("map[string]{}", go_type(ap, defs)),
            _ => "map[string]interface {}".into(),
        },
        _ => "interface {}".into(),
    }
}

/// What the schema wants of a JSON value, if the value is not it: Go's name for the value.
fn mismatch(schema: &Value, def: Option<&str>, got: &GotValue) -> Option<String> {
    if custom_decoded(def, schema) {
        return None;
    }
    let want = schema.get("type").and_then(Value::as_str)?;
    // Go decodes an integer into an int32 or int64 field only when it fits.
    let fits = |n: i128| match schema.get("format").and_then(Value::as_str) {
        Some("int32") => i32::try_from(n).is_ok(),
        _ => i64::try_from(n).is_ok(),
    };
    let ok = matches!(
        (want, got),
        (_, GotValue::Null)
            | ("string", GotValue::String)
            | ("boolean", GotValue::Bool)
            | ("number", GotValue::Int(_) | GotValue::Float(_))
            | ("array", GotValue::Array)
            | ("object", GotValue::Object)
    ) || matches!((want, got), ("integer", GotValue::Int(n)) if fits(*n));
    if ok {
        return None;
    }
    Some(match got {
        GotValue::String => "string".into(),
        GotValue::Bool => "bool".into(),
        GotValue::Int(n) if want == "integer" => format!("number {n}"),
        GotValue::Int(_) => "number".into(),
        GotValue::Float(f) => format!("number {f}"),
        GotValue::Array => "array".into(),
        GotValue::Object => "object".into(),
        GotValue::Null => "null".into(),
    })
}

enum GotValue {
    Null,
    Bool,
    /// A whole number (one past `i64`'s range as `i64::MAX + 1`, which fits no Go integer).
    Int(i128),
    Float(f64),
    String,
    Array,
    Object,
}

/// The schema of `key` in an object of `schema`: `Some(None)` when anything is allowed,
/// `None` when the key is unknown.
fn child<'a>(schema: &'a Value, key: &str) -> Option<Option<&'a Value>> {
    if schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        return Some(schema.get("properties").and_then(|p| p.get(key)));
    }
    if let Some(p) = schema.get("properties").and_then(|p| p.get(key)) {
        return Some(Some(p));
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => None,
        Some(ap) if ap.is_object() => Some(Some(ap)),
        Some(_) => Some(None),
        // An object schema without properties (RawExtension, FieldsV1, JSON) takes anything.
        None if schema.get("properties").is_none() => Some(None),
        None => None,
    }
}

struct Scan<'a> {
    schema: Option<&'a Value>,
    defs: &'a Map<String, Value>,
    path: String,
    /// The innermost named struct and the dotted path without indices, for type errors.
    struct_name: &'a str,
    go_path: String,
    out: &'a mut Problems,
}

impl Scan<'_> {
    fn check(&mut self, got: GotValue) {
        if self.out.decode_error.is_some() {
            return;
        }
        let Some(schema) = self.schema else {
            return;
        };
        let (resolved, def) = resolve_named(schema, self.defs);
        if let Some(what) = mismatch(resolved, def, &got) {
            self.out.decode_error = Some(DecodeError::WrongType(format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {}",
                self.struct_name,
                self.go_path,
                go_type(schema, self.defs)
            )));
        }
    }

    /// A string in a `[]byte` field must be base64 as Go decodes it.
    fn check_bytes(&mut self, s: &str) {
        if self.out.decode_error.is_some() {
            return;
        }
        let Some(schema) = self.schema else {
            return;
        };
        let (resolved, _) = resolve_named(schema, self.defs);
        if resolved.get("format").and_then(Value::as_str) != Some("byte") {
            return;
        }
        if let Some(at) = crate::semantics::formats::go_base64_error(s) {
            self.out.decode_error = Some(DecodeError::Base64(format!(
                "illegal base64 data at input byte {at}"
            )));
        }
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(mut self, _: bool) -> Result<(), E> {
        self.check(GotValue::Bool);
        Ok(())
    }
    fn visit_i64<E>(mut self, n: i64) -> Result<(), E> {
        self.check(GotValue::Int(n.into()));
        Ok(())
    }
    fn visit_u64<E>(mut self, n: u64) -> Result<(), E> {
        self.check(GotValue::Int(n.into()));
        Ok(())
    }
    fn visit_f64<E>(mut self, f: f64) -> Result<(), E> {
        self.check(if f.fract() == 0.0 {
            // saturating: anything past i64 fits no Go integer field
            GotValue::Int((f as i128).clamp(i128::from(i64::MIN) - 1, i128::from(i64::MAX) + 1))
        } else {
            GotValue::Float(f)
        });
        Ok(())
    }
    fn visit_str<E>(mut self, s: &str) -> Result<(), E> {
        self.check(GotValue::String);
        self.check_bytes(s);
        Ok(())
    }
    fn visit_unit<E>(mut self) -> Result<(), E> {
        self.check(GotValue::Null);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.check(GotValue::Array);
        let items = self
            .schema
            .map(|s| resolve(s, self.defs))
            .and_then(|s| s.get("items"));
        let mut i = 0usize;
        loop {
            let seed = Scan {
                schema: items,
                defs: self.defs,
                path: format!("{}[{i}]", self.path),
                struct_name: self.struct_name,
                go_path: self.go_path.clone(),
                out: &mut *self.out,
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.check(GotValue::Object);
        let named = self.schema.map(|s| resolve_named(s, self.defs));
        let schema = named.map(|(s, _)| s);
        let struct_name = match named {
            Some((s, Some(def))) if s.get("properties").is_some() => {
                def.rsplit('.').next().unwrap_or(def)
            }
            _ => self.struct_name,
        };
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = join(&self.path, &key);
            if !seen.insert(key.clone()) {
                self.out
                    .duplicate
                    .push(format!("duplicate field {}", crate::error::go_quote(&path)));
            }
            let next = match schema {
                None => None,
                Some(s) => match child(s, &key) {
                    Some(c) => c,
                    None => {
                        self.out
                            .unknown
                            .push(format!("unknown field {}", crate::error::go_quote(&path)));
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                },
            };
            // Go's decoder names the fields it went through, not a map's keys
            // (`Secret.stringData`, not `Secret.stringData.x`).
            let in_map = schema.is_some_and(|s| {
                s.get("properties").is_none()
                    && s.get("additionalProperties").is_some_and(Value::is_object)
            });
            let go_path = if in_map {
                self.go_path.clone()
            } else {
                join(&self.go_path, &key)
            };
            map.next_value_seed(Scan {
                schema: next,
                defs: self.defs,
                path,
                struct_name,
                go_path,
                out: &mut *self.out,
            })?;
        }
        Ok(())
    }
}

/// Scans a JSON body: duplicates everywhere, unknown fields where `schema` (resolved against
/// the built-in definitions) describes the object. Unparseable bodies yield nothing (the
/// decoder reports them).
pub(crate) fn scan(body: &[u8], schema: Option<&Value>) -> Problems {
    let defs = &builtin_schemas().definitions;
    let mut out = Problems::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Scan {
        schema,
        defs,
        path: String::new(),
        struct_name: "",
        go_path: String::new(),
        out: &mut out,
    }
    .deserialize(&mut de);
    out
}

/// Rewrites a built-in object as kube-apiserver stores it once Go has decoded it into its type
/// and encoded it again: every string of a `[]byte` field (`format: byte`) as Go encodes the
/// bytes (`"a\nGk="` and `"aGl="` read back as `"aGk="`; strings that do not decode are left to
/// the decode check), a `null` in a map or list of scalars as the type's zero value (a
/// ConfigMap's `data: {a: null}` is stored as `a: ""`), and a `null` field as absent.
pub(crate) fn canonical_bytes(obj: &mut Value, definition: &str) {
    let defs = &builtin_schemas().definitions;
    canonical_walk(obj, &builtin_root(definition), defs, Pass::Decode);
}

/// Rewrites a built-in object as Go encodes it for storage, after the strategies and admission
/// have changed it: the zero value of an `omitempty` bool, number or string is left out, one
/// without `omitempty` is written even when absent (a StatefulSet's `status.replicas: 0`), and
/// so is a struct that is not a pointer (an Event's `source: {}`).
pub(crate) fn stored_as_go(obj: &mut Value, definition: &str) {
    let defs = &builtin_schemas().definitions;
    canonical_walk(obj, &builtin_root(definition), defs, Pass::Store);
}

/// What [`canonical_walk`] models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// A request body decoded into the Go type and encoded again ([`canonical_bytes`]).
    Decode,
    /// An apply configuration, whose `null` fields the merge reads ([`canonical_apply_config`]).
    ApplyConfig,
    /// An object encoded for storage ([`stored_as_go`]): only the scalars' and structs' rules.
    Store,
}

/// [`canonical_bytes`] for an apply configuration: `null` scalars in maps and lists become the
/// zero value Go decodes them to (so the applier owns `data.a` holding `""`, as with
/// kube-apiserver), while `null` fields stay for the merge to read.
pub(crate) fn canonical_apply_config(config: &mut Value, definition: &str) {
    let defs = &builtin_schemas().definitions;
    canonical_walk(config, &builtin_root(definition), defs, Pass::ApplyConfig);
}

/// Whether `v` is the zero value of a JSON scalar: `false`, `0` or `""`.
pub(crate) fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// The zero value Go gives a scalar of `schema`'s type, if it is a scalar.
fn go_zero(schema: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let (schema, def) = resolve_named(schema, defs);
    if custom_decoded(def, schema) {
        return None;
    }
    match schema.get("type").and_then(Value::as_str)? {
        "string" => Some(json!("")),
        "integer" | "number" => Some(json!(0)),
        "boolean" => Some(json!(false)),
        _ => None,
    }
}

fn canonical_walk(v: &mut Value, schema: &Value, defs: &Map<String, Value>, pass: Pass) {
    let (schema, def) = resolve_named(schema, defs);
    if custom_decoded(def, schema) {
        return;
    }
    let is_map = schema.get("properties").is_none()
        && schema
            .get("additionalProperties")
            .is_some_and(Value::is_object);
    match v {
        Value::Object(m)
            if pass != Pass::ApplyConfig && !is_map && schema.get("properties").is_some() =>
        {
            // The zero value of an `omitempty` bool, number or string is not encoded again.
            m.retain(|key, value| {
                !(is_zero_scalar(value)
                    && def.is_some_and(|d| crate::semantics::builtin_schema::go_omits_zero(d, key)))
            });
            // A null field decodes to nothing (a nil pointer or an omitted zero value), and an
            // empty map or list of an optional (`omitempty`) field is not encoded again.
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            m.retain(|key, value| {
                if pass == Pass::Store {
                    return true;
                }
                let empty = match value {
                    Value::Null => return false,
                    Value::Object(o) => o.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    _ => false,
                };
                if !empty || required.contains(&key.as_str()) {
                    return true;
                }
                let Some(field) = schema.get("properties").and_then(|p| p.get(key)) else {
                    return true;
                };
                let (field, def) = resolve_named(field, defs);
                if custom_decoded(def, field) {
                    return true;
                }
                let map_field = field.get("properties").is_none()
                    && field
                        .get("additionalProperties")
                        .is_some_and(Value::is_object);
                let list_field = field.get("type").and_then(Value::as_str) == Some("array");
                !(value.is_object() && map_field || value.is_array() && list_field)
            });
            // A bool, number or string without `omitempty` is written whatever it holds: the
            // zero value when the body left it out.
            let written = def.and_then(crate::semantics::builtin_schema::go_scalar_fields);
            if pass == Pass::Store {
                // So is a struct that is not a pointer, `omitempty` or not: an Event's absent
                // `source` is stored as `{}`, its `firstTimestamp` as `null`.
                for (name, zero) in written.map(|f| &f.structs).into_iter().flatten() {
                    if m.get(name).is_none_or(Value::is_null) {
                        m.insert(name.clone(), zero.clone());
                    }
                }
            }
            for name in written.map(|f| f.written.as_slice()).unwrap_or_default() {
                if !m.contains_key(name)
                    && let Some(zero) = schema
                        .get("properties")
                        .and_then(|p| p.get(name))
                        .and_then(|field| go_zero(field, defs))
                {
                    m.insert(name.clone(), zero);
                }
            }
        }
        _ => {}
    }
    match v {
        Value::String(s) if schema.get("format").and_then(Value::as_str) == Some("byte") => {
            if let Some(canonical) = crate::semantics::formats::go_base64_canonical(s) {
                *s = canonical;
            }
        }
        Value::Object(m) => {
            for (key, child_value) in m.iter_mut() {
                if let Some(Some(child_schema)) = child(schema, key) {
                    if is_map
                        && child_value.is_null()
                        && let Some(zero) = go_zero(child_schema, defs)
                    {
                        *child_value = zero;
                    }
                    canonical_walk(child_value, child_schema, defs, pass);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    if item.is_null()
                        && let Some(zero) = go_zero(item_schema, defs)
                    {
                        *item = zero;
                    }
                    canonical_walk(item, item_schema, defs, pass);
                }
            }
        }
        _ => {}
    }
}

/// The first value of `obj` whose type its built-in `definition` does not allow, worded as
/// server-side apply's typed patch object words it (`.data: expected map, got &{str}`,
/// `.spec.replicas: expected numeric (int or float), got string`): what kube-apiserver answers
/// an apply of such an object with.
pub(crate) fn typed_patch_error(obj: &Value, definition: &str) -> Option<String> {
    let defs = &builtin_schemas().definitions;
    typed_walk(obj, &builtin_root(definition), defs, &mut String::new())
}

fn typed_walk(
    v: &Value,
    schema: &Value,
    defs: &Map<String, Value>,
    path: &mut String,
) -> Option<String> {
    let (schema, def) = resolve_named(schema, defs);
    if v.is_null() || custom_decoded(def, schema) {
        return None;
    }
    // Go's `%v` of the value, and of the value wrapped as the typed patch holds a scalar.
    let plain = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => other.to_string(),
    };
    // Go's `%#v` of what a wrapped scalar position holds, for the shapes a client sends.
    fn go_syntax(v: &Value) -> String {
        match v {
            Value::String(s) => crate::error::go_quote(s),
            Value::Array(items) => format!(
                "[]interface {{}}{{{}}}",
                items.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(m) => format!(
                "map[string]interface {{}}{{{}}}",
                m.iter()
                    .map(|(k, v)| format!("{}:{}", crate::error::go_quote(k), go_syntax(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Null => "interface {}(nil)".into(),
            other => other.to_string(),
        }
    }
    let wrapped = |v: &Value| format!("&value.valueUnstructured{{Value:{}}}", go_syntax(v));
    let kind = |v: &Value| match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(_) => "numeric",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
        Value::Null => "null",
    };
    let fail = |what: String| Some(format!("{path}: {what}"));
    match (schema.get("type").and_then(Value::as_str), v) {
        (Some("object"), Value::Object(m)) => {
            for (key, child_value) in m {
                let Some(Some(child_schema)) = child(schema, key) else {
                    continue;
                };
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let found = typed_walk(child_value, child_schema, defs, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Some("object"), other) => fail(format!("expected map, got &{{{}}}", plain(other))),
        (Some("array"), Value::Array(items)) => {
            let item_schema = schema.get("items")?;
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = typed_walk(item, item_schema, defs, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Some("array"), other) => fail(format!("expected list, got &{{{}}}", plain(other))),
        (Some("string"), Value::String(_))
        | (Some("integer" | "number"), Value::Number(_))
        | (Some("boolean"), Value::Bool(_)) => None,
        (Some("string"), other) => fail(format!("expected string, got {}", wrapped(other))),
        (Some("integer" | "number"), other) => fail(format!(
            "expected numeric (int or float), got {}",
            kind(other)
        )),
        (Some("boolean"), other) => fail(format!("expected boolean, got {}", wrapped(other))),
        _ => None,
    }
}

/// The schema of the field of a built-in kind's object at `path` (field names from the object
/// root; list items add no segment): the property as its struct declares it (where
/// kube-apiserver's list, map and patch extensions are), its type with references followed
/// and, for a list, down to its items, and the definition name of the struct holding it.
struct BuiltinField {
    property: &'static Value,
    ty: &'static Value,
    holder: &'static str,
}

fn builtin_field(definition: &str, path: &[&str]) -> Option<BuiltinField> {
    let defs = &builtin_schemas().definitions;
    // Follows references and a list's items, keeping the name of the last definition reached.
    let follow = |mut schema: &'static Value, name: &mut &'static str| loop {
        let (next, found) = resolve_named(schema, defs);
        if let Some(found) = found {
            *name = found;
        }
        if next.get("type").and_then(Value::as_str) != Some("array") {
            return Some(next);
        }
        schema = next.get("items")?;
    };
    let (mut name, root) = defs
        .get_key_value(definition)
        .map(|(k, v)| (k.as_str(), v))?;
    let mut cur = follow(root, &mut name)?;
    let mut found = None;
    for seg in path {
        let property = child(cur, seg)??;
        let holder = name;
        cur = follow(property, &mut name)?;
        found = Some((property, holder));
    }
    let (property, holder) = found?;
    Some(BuiltinField {
        property,
        ty: cur,
        holder,
    })
}

/// Whether the map or struct of a built-in kind's object at `path` (a list's items, for a
/// list) is `x-kubernetes-map-type: atomic` (`+mapType=atomic`, `+structType=atomic`), on
/// the field or on its type.
pub(crate) fn builtin_atomic_map(definition: &str, path: &[&str]) -> bool {
    let atomic =
        |s: &Value| s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
    builtin_field(definition, path).is_some_and(|f| atomic(f.property) || atomic(f.ty))
}

/// The list extensions kube-apiserver's documents give a field of a built-in kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListExtensions {
    /// `x-kubernetes-list-type` (server-side apply): `atomic`, `set`, `map` or empty.
    pub(crate) list_type: &'static str,
    /// `x-kubernetes-list-map-keys`.
    pub(crate) map_keys: Vec<String>,
    /// `x-kubernetes-patch-strategy` (strategic merge patch): `merge`, `retainKeys`, … or
    /// empty.
    pub(crate) patch_strategy: &'static str,
    /// `x-kubernetes-patch-merge-key`.
    pub(crate) merge_key: &'static str,
}

/// The list extensions of the field of a built-in kind's object at `path`.
pub(crate) fn builtin_list_extensions(definition: &str, path: &[&str]) -> Option<ListExtensions> {
    let field = builtin_field(definition, path)?.property;
    let text = |k: &str| field.get(k).and_then(Value::as_str).unwrap_or("");
    Some(ListExtensions {
        list_type: text("x-kubernetes-list-type"),
        map_keys: field
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        patch_strategy: text("x-kubernetes-patch-strategy"),
        merge_key: text("x-kubernetes-patch-merge-key"),
    })
}

/// How the Go zero value of the struct holding the field at `path` (field names from a
/// built-in kind's object root; list items add no segment) writes that field: `Some(true)`
/// for a struct field that is not a pointer (its schema's `default` is `{}`, as
/// kube-apiserver's OpenAPI documents mark them), written as `{}`; `Some(false)` for a field
/// written empty: a slice, map or pointer without `omitempty` (as `null`) and a bool, number
/// or string without it (as its zero value); `None` when it is left out. Server-side apply's
/// comparison of an update counts a written field as present.
pub(crate) fn builtin_zero_field(definition: &str, path: &[&str]) -> Option<bool> {
    let field = builtin_field(definition, path)?;
    if field.property.get("default") == Some(&json!({})) {
        return Some(true);
    }
    let name = path.last()?;
    (crate::semantics::builtin_schema::go_writes_null(field.holder, name)
        || crate::semantics::builtin_schema::go_writes_zero(field.holder, name))
    .then_some(false)
}

/// The schema the body of a built-in kind is checked against.
pub(crate) fn builtin_root(definition: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{definition}")})
}

/// What custom-resource bodies are checked against here: their metadata (the rest is pruned
/// by the CRD schema).
pub(crate) fn custom_root() -> Value {
    json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
           "properties": {"metadata": {"$ref": format!("#/components/schemas/{META}ObjectMeta")}}})
}

/// Drops the fields `schema` does not declare, as decoding into the Go type does.
pub(crate) fn prune(v: &mut Value, schema: &Value) {
    let defs = &builtin_schemas().definitions;
    prune_in(v, schema, defs);
}

fn prune_in(v: &mut Value, schema: &Value, defs: &Map<String, Value>) {
    let schema = resolve(schema, defs);
    match v {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                match child(schema, &k) {
                    None => {
                        m.remove(&k);
                    }
                    Some(Some(cs)) => {
                        if let Some(c) = m.get_mut(&k) {
                            prune_in(c, cs, defs);
                        }
                    }
                    Some(None) => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = schema.get("items") {
                for i in items {
                    prune_in(i, is, defs);
                }
            }
        }
        _ => {}
    }
}

/// Applies the directive: `Strict` fails with kube-apiserver's 400 (`<Kind> in version "<v>"
/// cannot be handled as a <Kind>: strict decoding error: …`), `Warn` returns the warnings.
pub(crate) fn enforce(
    directive: Directive,
    kind: &str,
    version: &str,
    messages: Vec<String>,
) -> ApiResult<Vec<String>> {
    if messages.is_empty() {
        return Ok(Vec::new());
    }
    match directive {
        Directive::Ignore => Ok(Vec::new()),
        Directive::Warn => Ok(messages),
        Directive::Strict => Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {kind}: strict decoding error: {}",
            crate::error::go_quote(version),
            messages.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::builtin_schema::definition_of;
    use crate::semantics::resources::Builtin;

    #[test]
    fn finds_unknown_and_duplicate_fields_in_document_order() {
        let root = builtin_root(definition_of(Builtin::ConfigMap).unwrap_or_default());
        let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","bogus":1},"data":{"a":"b"},"extra":true,"data":{"c":"d"}}"#;
        let p = scan(body, Some(&root));
        assert_eq!(
            p.unknown,
            vec![
                r#"unknown field "metadata.bogus""#,
                r#"unknown field "extra""#
            ]
        );
        assert_eq!(p.duplicate, vec![r#"duplicate field "data""#]);
        let p = scan(
            br#"{"metadata":{"name":"a"},"data":"notamap"}"#,
            Some(&root),
        );
        assert_eq!(
            p.decode_error.as_ref().map(DecodeError::message),
            Some(
                "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"
            )
        );
        let dep = builtin_root(definition_of(Builtin::Deployment).unwrap_or_default());
        let body = br#"{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i","bogus":1}]}}}}"#;
        assert_eq!(
            scan(body, Some(&dep)).unknown,
            vec![r#"unknown field "spec.template.spec.containers[0].bogus""#]
        );
        let mut v: Value = serde_json::from_slice(body).unwrap_or_default();
        prune(&mut v, &dep);
        assert_eq!(
            v,
            json!({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}})
        );
    }

    /// Found by `tests/fuzz.rs` (patch_application): a merge patch setting a Deployment's
    /// `spec.replicas` (an int32) to 2^53 was stored, and no client could decode it.
    #[test]
    fn an_integer_out_of_its_go_range_is_a_type_error() {
        let dep = builtin_root(definition_of(Builtin::Deployment).unwrap_or_default());
        let replicas = |n: &str| {
            scan(
                format!(r#"{{"spec":{{"replicas":{n}}}}}"#).as_bytes(),
                Some(&dep),
            )
            .decode_error
        };
        for fits in ["0", "-2147483648", "2147483647", "3.0"] {
            assert_eq!(replicas(fits), None, "{fits}");
        }
        for n in [
            "2147483648",
            "-2147483649",
            "9007199254740992",
            "18446744073709551615",
        ] {
            assert_eq!(
                replicas(n).as_ref().map(DecodeError::message),
                Some(
                    format!("json: cannot unmarshal number {n} into Go struct field DeploymentSpec.spec.replicas of type int32")
                        .as_str()
                ),
            );
        }
        // int64 fields take all of i64, and nothing past it
        let meta = |n: &str| {
            scan(
                format!(r#"{{"metadata":{{"generation":{n}}}}}"#).as_bytes(),
                Some(&dep),
            )
            .decode_error
        };
        assert_eq!(meta("9223372036854775807"), None);
        assert!(meta("9223372036854775808").is_some());
        assert!(meta("1e300").is_some());
    }

    /// Found by `tests/fuzz.rs` (patch_application): a merge patch giving a ConfigMap's
    /// `binaryData` a value that is not base64 was stored; kube-apiserver's decoder refuses it.
    #[test]
    fn a_byte_field_must_hold_base64() {
        let root = builtin_root(definition_of(Builtin::ConfigMap).unwrap_or_default());
        let binary = |v: &str| {
            scan(
                json!({"binaryData": {"k": v}}).to_string().as_bytes(),
                Some(&root),
            )
            .decode_error
        };
        assert_eq!(binary("aGk="), None);
        assert_eq!(binary("a\nGk="), None);
        assert_eq!(
            binary("ab!"),
            Some(DecodeError::Base64(
                "illegal base64 data at input byte 2".into()
            ))
        );
        // `data` is plain strings
        let p = scan(br#"{"data":{"k":"ab!"}}"#, Some(&root));
        assert_eq!(p.decode_error, None);
        // the first refusal in document order is the one reported
        let p = scan(br#"{"binaryData":{"k":"!"},"data":{"k":1}}"#, Some(&root));
        assert!(matches!(p.decode_error, Some(DecodeError::Base64(_))));
    }

    /// Found by `tests/fuzz.rs` (patch_application): an apply of a ConfigMap with
    /// `data: {a: null}` stored the null, which no client decodes; kube-apiserver stores `""`.
    #[test]
    fn nulls_are_stored_as_go_decodes_them() {
        let mut cm =
            json!({"data": {"a": null, "b": "2"}, "metadata": {"name": "x", "labels": null}});
        canonical_bytes(
            &mut cm,
            definition_of(Builtin::ConfigMap).unwrap_or_default(),
        );
        assert_eq!(
            cm,
            json!({"data": {"a": "", "b": "2"}, "metadata": {"name": "x"}})
        );
        let mut dep = json!({"spec": {"replicas": null, "template": {"spec": {"containers": [
            {"name": "c", "args": ["a", null]}]}}}});
        canonical_bytes(
            &mut dep,
            definition_of(Builtin::Deployment).unwrap_or_default(),
        );
        assert_eq!(
            dep,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "args": ["a", ""]}]}}}})
        );
    }

    /// Go's `omitempty` drops a bool, number or string at its zero value; a field without it
    /// (a PriorityClass's `value`), a pointer (`replicas`) and a map value keep theirs, and a
    /// field without it that the body left out is written with its zero value.
    #[test]
    fn scalars_are_written_as_go_writes_them() {
        let mut dep = json!({"spec": {"paused": false, "minReadySeconds": 0, "replicas": 0,
            "template": {"metadata": {"labels": {"a": ""}}, "spec": {"hostNetwork": false,
            "containers": [{"name": "c", "image": "", "stdin": false, "tty": true}]}}}});
        canonical_bytes(
            &mut dep,
            definition_of(Builtin::Deployment).unwrap_or_default(),
        );
        assert_eq!(
            dep,
            json!({"spec": {"replicas": 0, "template": {"metadata": {"labels": {"a": ""}},
                "spec": {"containers": [{"name": "c", "tty": true}]}}}})
        );
        let mut pc = json!({"globalDefault": false, "description": ""});
        canonical_bytes(
            &mut pc,
            definition_of(Builtin::PriorityClass).unwrap_or_default(),
        );
        assert_eq!(pc, json!({"value": 0}));
        let mut ss = json!({"spec": {"template": {"spec": {"containers": [{"name": "c",
            "ports": [{"protocol": "TCP"}]}]}}}});
        canonical_bytes(
            &mut ss,
            definition_of(Builtin::StatefulSet).unwrap_or_default(),
        );
        assert_eq!(
            ss,
            json!({"spec": {"serviceName": "", "template": {"spec": {"containers": [{"name": "c",
                "ports": [{"containerPort": 0, "protocol": "TCP"}]}]}}}})
        );
    }

    #[test]
    fn byte_fields_read_back_as_go_encodes_them() {
        let mut cm =
            json!({"binaryData": {"a": "a\nGk=", "b": "aGl=", "c": "aGk="}, "data": {"d": "aGl="}});
        canonical_bytes(
            &mut cm,
            definition_of(Builtin::ConfigMap).unwrap_or_default(),
        );
        assert_eq!(
            cm,
            json!({"binaryData": {"a": "aGk=", "b": "aGk=", "c": "aGk="}, "data": {"d": "aGl="}})
        );
    }

    #[test]
    fn directives() {
        assert_eq!(
            Directive::parse(Some("Bogus"), "CreateOptions").map_err(|e| e.message),
            Err("CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"".to_string())
        );
        let e = enforce(
            Directive::Strict,
            "ConfigMap",
            "v1",
            vec!["unknown field \"x\"".into()],
        );
        assert_eq!(
            e.map_err(|e| e.message),
            Err("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"x\"".to_string())
        );
    }
}
