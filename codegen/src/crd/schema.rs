//! A structural OpenAPI v3 schema as plain data ([`Schema`], with its CEL rules as
//! [`Validation`]s) and its JSON form: what the walk ([`super::walk`]) builds from the type
//! table, the markers ([`super::markers`]) refine, and the CRD carries.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

/// An `x-kubernetes-validations` rule (`+kubebuilder:validation:XValidation:rule=…,message=…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// The CEL expression.
    pub rule: String,
    /// The message shown when the rule fails.
    pub message: Option<String>,
}

/// One node of a structural OpenAPI v3 schema: the subset of `JSONSchemaProps` the generator
/// writes. Every field has the JSON type k8s-openapi's `JSONSchemaProps` expects, so the JSON of
/// a [`Schema`] always deserializes into it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    /// `type`: `object`, `array`, `string`, `integer`, `number` or `boolean`.
    pub type_: Option<String>,
    /// `format` (`int32`, `date-time` …).
    pub format: Option<String>,
    /// `description`, from doc comments.
    pub description: Option<String>,
    /// `properties` of an object.
    pub properties: BTreeMap<String, Schema>,
    /// `required` properties, in declaration order.
    pub required: Vec<String>,
    /// `additionalProperties` of a map.
    pub additional_properties: Option<Box<Schema>>,
    /// `items` of an array.
    pub items: Option<Box<Schema>>,
    /// `enum` values.
    pub enum_values: Vec<Value>,
    /// `default`.
    pub default: Option<Value>,
    /// `nullable`.
    pub nullable: bool,
    /// `minimum`.
    pub minimum: Option<Number>,
    /// `maximum`.
    pub maximum: Option<Number>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<Number>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `pattern` (an RE2 regular expression).
    pub pattern: Option<String>,
    /// `anyOf` (only the int-or-string pair is written here).
    pub any_of: Vec<Schema>,
    /// `oneOf` (only `required`-only branches, for externally tagged enums).
    pub one_of: Vec<Schema>,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type` (`atomic`, `set`, `map`).
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`atomic`, `granular`).
    pub map_type: Option<String>,
    /// `x-kubernetes-validations`.
    pub validations: Vec<Validation>,
}

impl Schema {
    /// A node of one type.
    pub fn typed(t: &str) -> Schema {
        Schema {
            type_: Some(t.to_string()),
            ..Schema::default()
        }
    }

    /// A node of one type and format.
    pub fn formatted(t: &str, format: &str) -> Schema {
        Schema {
            format: Some(format.to_string()),
            ..Schema::typed(t)
        }
    }

    /// `x-kubernetes-int-or-string: true` with `anyOf: [integer, string]`.
    pub fn int_or_string() -> Schema {
        Schema {
            any_of: vec![Schema::typed("integer"), Schema::typed("string")],
            int_or_string: true,
            ..Schema::default()
        }
    }

    pub(super) fn with_description(mut self, d: &str) -> Schema {
        self.description = Some(d.to_string());
        self
    }

    /// The type the node validates as, for marker checks: its `type`, or `int-or-string`.
    pub(crate) fn kind(&self) -> &str {
        if self.int_or_string {
            "int-or-string"
        } else {
            self.type_.as_deref().unwrap_or("any")
        }
    }

    /// The node as `JSONSchemaProps` JSON.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        if let Some(t) = &self.type_ {
            put("type", Value::String(t.clone()));
        }
        if let Some(f) = &self.format {
            put("format", Value::String(f.clone()));
        }
        if let Some(d) = &self.description {
            put("description", Value::String(d.clone()));
        }
        if !self.properties.is_empty() {
            put(
                "properties",
                Value::Object(
                    self.properties
                        .iter()
                        .map(|(k, v)| (k.clone(), v.to_json()))
                        .collect(),
                ),
            );
        }
        if !self.required.is_empty() {
            put("required", strings(&self.required));
        }
        if let Some(a) = &self.additional_properties {
            put("additionalProperties", a.to_json());
        }
        if let Some(i) = &self.items {
            put("items", i.to_json());
        }
        if !self.enum_values.is_empty() {
            put("enum", Value::Array(self.enum_values.clone()));
        }
        if let Some(d) = &self.default {
            put("default", d.clone());
        }
        if self.nullable {
            put("nullable", Value::Bool(true));
        }
        if let Some(n) = &self.minimum {
            put("minimum", Value::Number(n.clone()));
        }
        if let Some(n) = &self.maximum {
            put("maximum", Value::Number(n.clone()));
        }
        if self.exclusive_minimum {
            put("exclusiveMinimum", Value::Bool(true));
        }
        if self.exclusive_maximum {
            put("exclusiveMaximum", Value::Bool(true));
        }
        if let Some(n) = &self.multiple_of {
            put("multipleOf", Value::Number(n.clone()));
        }
        for (k, v) in [
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minItems", self.min_items),
            ("maxItems", self.max_items),
            ("minProperties", self.min_properties),
            ("maxProperties", self.max_properties),
        ] {
            if let Some(v) = v {
                put(k, Value::from(v));
            }
        }
        if let Some(p) = &self.pattern {
            put("pattern", Value::String(p.clone()));
        }
        if !self.any_of.is_empty() {
            put(
                "anyOf",
                Value::Array(self.any_of.iter().map(Schema::to_json).collect()),
            );
        }
        if !self.one_of.is_empty() {
            put(
                "oneOf",
                Value::Array(self.one_of.iter().map(Schema::to_json).collect()),
            );
        }
        if self.int_or_string {
            put("x-kubernetes-int-or-string", Value::Bool(true));
        }
        if self.preserve_unknown_fields {
            put("x-kubernetes-preserve-unknown-fields", Value::Bool(true));
        }
        if self.embedded_resource {
            put("x-kubernetes-embedded-resource", Value::Bool(true));
        }
        if let Some(t) = &self.list_type {
            put("x-kubernetes-list-type", Value::String(t.clone()));
        }
        if !self.list_map_keys.is_empty() {
            put("x-kubernetes-list-map-keys", strings(&self.list_map_keys));
        }
        if let Some(t) = &self.map_type {
            put("x-kubernetes-map-type", Value::String(t.clone()));
        }
        if !self.validations.is_empty() {
            let rules = self
                .validations
                .iter()
                .map(|v| {
                    let mut r = Map::new();
                    r.insert("rule".into(), Value::String(v.rule.clone()));
                    if let Some(msg) = &v.message {
                        r.insert("message".into(), Value::String(msg.clone()));
                    }
                    Value::Object(r)
                })
                .collect();
            put("x-kubernetes-validations", Value::Array(rules));
        }
        Value::Object(m)
    }
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().cloned().map(Value::String).collect())
}
