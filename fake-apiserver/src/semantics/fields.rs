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
    let mut cur = schema;
    for _ in 0..32 {
        let target = cur
            .get("$ref")
            .or_else(|| cur.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next());
        match target.and_then(|t| defs.get(t)) {
            Some(next) => cur = next,
            None => break,
        }
    }
    cur
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
    out: &'a mut Problems,
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
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
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
                out: &mut *self.out,
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let schema = self.schema.map(|s| resolve(s, self.defs));
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
            map.next_value_seed(Scan {
                schema: next,
                defs: self.defs,
                path,
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
        out: &mut out,
    }
    .deserialize(&mut de);
    out
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

    #[test]
    fn directives() {
        assert_eq!(
            Directive::parse(Some("Bogus"), "CreateOptions").map_err(|e| e.message),
            Err("CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"".to_string())
        );
        let e = enforce(Directive::Strict, "ConfigMap", "v1", vec!["unknown field \"x\"".into()]);
        assert_eq!(
            e.map_err(|e| e.message),
            Err("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"x\"".to_string())
        );
    }
}
