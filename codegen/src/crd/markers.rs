//! What controller-gen's markers (`+kubebuilder:…`, `+listType=…` …) mean to a CRD: for a CRD
//! version ([`kind_markers`]), for CRD metadata ([`metadata_markers`]), and for a schema node
//! ([`apply_markers`]). Their syntax is read where tags are parsed ([`crate::tags::markers`]);
//! `+kubebuilder:resource` (names and scope every generator agrees on) by the model
//! ([`crate::model::markers`]).

use std::collections::BTreeMap;

use serde_json::{Number, Value};

use super::schema::{Schema, Validation};
use super::{Conversion, PrinterColumn, Scale};
use crate::error::{Error, Location, Result};
use crate::model::Kind;
use crate::tags::Tag;
use crate::tags::markers::{args_of, is_flag, is_quoted, list, list_raw, parse_args, unquote};

// ---------------------------------------------------------------------------------------------
// Markers.

/// What field markers decide besides the schema.
#[derive(Debug, Default, Clone, Copy)]
pub struct MarkerFlags {
    /// `Some(true)` for `+kubebuilder:validation:Required`/`+required`, `Some(false)` for
    /// `…:Optional`/`+optional` (which wins when both are given).
    pub required: Option<bool>,
}

fn number(raw: &str) -> std::result::Result<Number, String> {
    let raw = raw.trim();
    if let Ok(i) = raw.parse::<i64>() {
        return Ok(Number::from(i));
    }
    raw.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
        .ok_or_else(|| format!("{raw:?} is not a number"))
}

fn count(raw: &str) -> std::result::Result<i64, String> {
    raw.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("{raw:?} is not a non-negative integer"))
}

fn boolean(raw: Option<&str>) -> std::result::Result<bool, String> {
    match raw.map(str::trim) {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(v) => Err(format!("expected true or false, found {v:?}")),
    }
}

/// Parses one value for the node `s` (`Enum` items, `default`): JSON if it parses, else a
/// string for string-like nodes.
fn typed_value(raw: &str, s: &Schema) -> std::result::Result<Value, String> {
    let raw = raw.trim();
    let v = if raw.starts_with('`') {
        Value::String(unquote(raw)?)
    } else {
        match serde_json::from_str::<Value>(raw) {
            Ok(v) => v,
            Err(_) if matches!(s.kind(), "string" | "int-or-string" | "any") => {
                Value::String(raw.to_string())
            }
            Err(_) => return Err(format!("{raw} is not a valid {} value", s.kind())),
        }
    };
    // A bare word for a string node (`Enum=True;False`) is a string, not a JSON boolean.
    let v = match (&v, s.kind()) {
        (Value::Bool(_) | Value::Number(_) | Value::Null, "string") if !is_quoted(raw) => {
            Value::String(raw.to_string())
        }
        _ => v,
    };
    let ok = match (s.kind(), &v) {
        ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("number", Value::Number(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("object", Value::Object(_)) => true,
        ("array", Value::Array(_)) => true,
        ("int-or-string", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("int-or-string", Value::String(_)) => true,
        ("any", _) => true,
        _ => false,
    };
    if ok {
        Ok(v)
    } else {
        Err(format!(
            "{raw} does not match the field's type ({})",
            s.kind()
        ))
    }
}

/// Applies the controller-gen field and type markers among `tags` to `s`:
///
/// | marker | effect |
/// | --- | --- |
/// | `+kubebuilder:validation:Minimum=N` / `Maximum=N` / `MultipleOf=N` | numbers |
/// | `+kubebuilder:validation:ExclusiveMinimum` / `ExclusiveMaximum` (`=true`) | numbers |
/// | `+kubebuilder:validation:MinLength=N` / `MaxLength=N` / `Pattern=re` / `Format=f` | strings |
/// | `+kubebuilder:validation:MinItems=N` / `MaxItems=N` | arrays |
/// | `+kubebuilder:validation:MinProperties=N` / `MaxProperties=N` | objects |
/// | `+kubebuilder:validation:Enum=a;b;c` | `enum` |
/// | `+kubebuilder:validation:Type=t` | `type` |
/// | `+kubebuilder:validation:Required` / `Optional` (or `+required` / `+optional`) | required-ness |
/// | `+kubebuilder:validation:Nullable` (or `+nullable`) | `nullable: true` |
/// | `+kubebuilder:default=V` (or `+default=V`) | `default` (JSON, or a bare string) |
/// | `+kubebuilder:pruning:PreserveUnknownFields` (or `…:validation:XPreserveUnknownFields`) | `x-kubernetes-preserve-unknown-fields` |
/// | `+kubebuilder:validation:XEmbeddedResource` / `XIntOrString` | `x-kubernetes-embedded-resource` / `-int-or-string` |
/// | `+kubebuilder:validation:XValidation:rule="…",message="…"` | `x-kubernetes-validations` |
/// | `+listType=atomic\|set\|map`, `+listMapKey=k`, `+mapType=`/`+structType=atomic\|granular` | list and map types |
///
/// A marker that does not fit the node's type, or an unknown `+kubebuilder:validation:` marker,
/// is an error at the marker.
pub fn apply_markers(s: &mut Schema, tags: &[Tag]) -> Result<MarkerFlags> {
    let mut flags = MarkerFlags::default();
    let mut optional = false;
    for tag in tags {
        let key = tag.key.trim_end_matches(':');
        let raw = tag.value.as_deref().unwrap_or_default();
        let err = |msg: String| Error::at(tag.location.clone(), format!("+{key}: {msg}"));
        let need = |s: &Schema, kinds: &[&str]| -> Result<()> {
            if kinds.contains(&s.kind()) {
                Ok(())
            } else {
                Err(err(format!(
                    "applies to {} fields, but this field is {}",
                    kinds.join(" or "),
                    s.kind()
                )))
            }
        };
        let validation = key.starts_with("kubebuilder:validation:");
        let name = key.strip_prefix("kubebuilder:validation:").unwrap_or(key);
        match (validation, name) {
            (true, "Minimum" | "Maximum" | "MultipleOf") => {
                need(s, &["integer", "number"])?;
                let n = number(raw).map_err(err)?;
                match name {
                    "Minimum" => s.minimum = Some(n),
                    "Maximum" => s.maximum = Some(n),
                    _ => {
                        if n.as_f64().is_some_and(|f| f <= 0.0) {
                            return Err(err("must be greater than 0".into()));
                        }
                        s.multiple_of = Some(n);
                    }
                }
            }
            (true, "ExclusiveMinimum" | "ExclusiveMaximum") => {
                need(s, &["integer", "number"])?;
                let b = boolean(tag.value.as_deref()).map_err(err)?;
                if name == "ExclusiveMinimum" {
                    s.exclusive_minimum = b;
                } else {
                    s.exclusive_maximum = b;
                }
            }
            (true, "MinLength" | "MaxLength") => {
                need(s, &["string", "int-or-string"])?;
                let n = count(raw).map_err(err)?;
                if name == "MinLength" {
                    s.min_length = Some(n);
                } else {
                    s.max_length = Some(n);
                }
            }
            (true, "Pattern") => {
                need(s, &["string", "int-or-string"])?;
                s.pattern = Some(unquote(raw).map_err(err)?);
            }
            (true, "Format") => {
                s.format = Some(unquote(raw).map_err(err)?);
            }
            (true, "MinItems" | "MaxItems") => {
                need(s, &["array"])?;
                let n = count(raw).map_err(err)?;
                if name == "MinItems" {
                    s.min_items = Some(n);
                } else {
                    s.max_items = Some(n);
                }
            }
            (true, "MinProperties" | "MaxProperties") => {
                need(s, &["object"])?;
                let n = count(raw).map_err(err)?;
                if name == "MinProperties" {
                    s.min_properties = Some(n);
                } else {
                    s.max_properties = Some(n);
                }
            }
            (true, "Enum") => {
                let items = list_raw(raw).map_err(err)?;
                if items.is_empty() {
                    return Err(err("needs at least one value".into()));
                }
                s.enum_values = items
                    .iter()
                    .map(|i| typed_value(i, s))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(err)?;
            }
            (true, "Type") => {
                let t = unquote(raw).map_err(err)?;
                if !["object", "array", "string", "integer", "number", "boolean"]
                    .contains(&t.as_str())
                {
                    return Err(err(format!("unknown type {t:?}")));
                }
                s.type_ = Some(t);
                s.int_or_string = false;
                s.any_of.clear();
            }
            (true, "Required") => flags.required = Some(true),
            (true, "Optional") => optional = true,
            (true, "Nullable") => s.nullable = true,
            (true, "XPreserveUnknownFields") => s.preserve_unknown_fields = true,
            (true, "XEmbeddedResource") => {
                need(s, &["object"])?;
                s.embedded_resource = true;
            }
            (true, "XIntOrString") => {
                *s = Schema {
                    description: s.description.take(),
                    ..Schema::int_or_string()
                };
            }
            (true, n) if n == "XValidation" || n.starts_with("XValidation:") => {
                let args = args_of(tag, "kubebuilder:validation:XValidation").unwrap_or_default();
                let args = parse_args(tag, &args)?;
                let mut v = Validation {
                    rule: String::new(),
                    message: None,
                };
                for (k, val) in args {
                    let val = unquote(&val).map_err(err)?;
                    match k.as_str() {
                        "rule" => v.rule = val,
                        "message" => v.message = Some(val),
                        other => {
                            return Err(err(format!(
                                "unknown argument {other:?} (known: rule, message)"
                            )));
                        }
                    }
                }
                if v.rule.is_empty() {
                    return Err(err("rule= is required".into()));
                }
                s.validations.push(v);
            }
            (true, other) => {
                return Err(err(format!(
                    "unknown marker +kubebuilder:validation:{other} (known: Minimum, Maximum, ExclusiveMinimum, ExclusiveMaximum, MultipleOf, MinLength, MaxLength, Pattern, Format, MinItems, MaxItems, MinProperties, MaxProperties, Enum, Type, Required, Optional, Nullable, XPreserveUnknownFields, XEmbeddedResource, XIntOrString, XValidation)"
                )));
            }
            (false, _) => match key {
                "required" => flags.required = Some(true),
                "optional" => optional = true,
                "nullable" => s.nullable = true,
                "kubebuilder:default" | "default" => {
                    if tag.value.is_none() {
                        return Err(err("needs a value, e.g. +kubebuilder:default=1".into()));
                    }
                    s.default = Some(typed_value(raw, s).map_err(err)?);
                }
                "kubebuilder:pruning:PreserveUnknownFields" => s.preserve_unknown_fields = true,
                "listType" => {
                    need(s, &["array"])?;
                    if !["atomic", "set", "map"].contains(&raw) {
                        return Err(err(format!("expected atomic, set or map, found {raw:?}")));
                    }
                    s.list_type = Some(raw.to_string());
                }
                "listMapKey" => {
                    need(s, &["array"])?;
                    s.list_map_keys.push(raw.to_string());
                }
                "mapType" | "structType" => {
                    need(s, &["object"])?;
                    if !["atomic", "granular"].contains(&raw) {
                        return Err(err(format!("expected atomic or granular, found {raw:?}")));
                    }
                    s.map_type = Some(raw.to_string());
                }
                _ => {}
            },
        }
    }
    if optional {
        flags.required = Some(false);
    }
    if (s.exclusive_minimum && s.minimum.is_none() || s.exclusive_maximum && s.maximum.is_none())
        && let Some(t) = tags.iter().find(|t| t.key.contains("Exclusive"))
    {
        return Err(Error::at(
            t.location.clone(),
            format!("+{}: needs the matching Minimum/Maximum", t.key),
        ));
    }
    if s.list_type.as_deref() == Some("map")
        && s.list_map_keys.is_empty()
        && let Some(t) = tags.iter().find(|t| t.key == "listType")
    {
        return Err(Error::at(
            t.location.clone(),
            "+listType=map needs at least one +listMapKey=",
        ));
    }
    Ok(flags)
}

// ---------------------------------------------------------------------------------------------
// CRD versions and metadata.

/// Kind-level markers of one version.
#[derive(Debug, Default)]
pub(crate) struct KindMarkers {
    pub(crate) storage: Option<Location>,
    pub(crate) served: bool,
    pub(crate) deprecated: bool,
    pub(crate) deprecation_warning: Option<String>,
    pub(crate) scale: Option<Scale>,
    pub(crate) columns: Vec<PrinterColumn>,
    /// `+kube-codegen:webhook:conversion[:serviceName=…,serviceNamespace=…,path=…]`.
    pub(crate) conversion: Option<(Conversion, Location)>,
}

/// The marker asking for a conversion webhook in a kind's CRD.
pub(crate) const CONVERSION_MARKER: &str = "kube-codegen:webhook:conversion";

fn parse_conversion(tag: &Tag, args: &str) -> Result<Conversion> {
    let mut c = Conversion::default();
    for (k, raw) in parse_args(tag, args)? {
        let v = unquote(&raw).map_err(|e| tag_err(tag, format!("{k}: {e}")))?;
        match k.as_str() {
            "serviceName" | "serviceNamespace" => {
                if let Some(p) = kube_codegen_apimachinery::validation::is_dns1123_label(&v)
                    .into_iter()
                    .next()
                {
                    return Err(tag_err(tag, format!("{k} {v:?}: {p}")));
                }
                if k == "serviceName" {
                    c.service_name = v;
                } else {
                    c.service_namespace = v;
                }
            }
            "path" => {
                if !v.starts_with('/') {
                    return Err(tag_err(tag, format!("path {v:?}: must start with /")));
                }
                c.path = v;
            }
            other => {
                return Err(tag_err(
                    tag,
                    format!(
                        "unknown argument {other:?} (known: serviceName, serviceNamespace, path)"
                    ),
                ));
            }
        }
    }
    Ok(c)
}

fn tag_err(tag: &Tag, msg: impl std::fmt::Display) -> Error {
    Error::at(tag.location.clone(), format!("+{}: {msg}", tag.key))
}

pub(crate) fn kind_markers(kind: &Kind) -> Result<KindMarkers> {
    let mut m = KindMarkers {
        served: true,
        ..KindMarkers::default()
    };
    for tag in &kind.tags {
        if is_flag(tag, "kubebuilder:storageversion")? {
            m.storage = Some(tag.location.clone());
        } else if is_flag(tag, "kubebuilder:unservedversion")? {
            m.served = false;
        } else if let Some(args) = args_of(tag, "kubebuilder:deprecatedversion") {
            m.deprecated = true;
            for (k, v) in parse_args(tag, &args)? {
                match k.as_str() {
                    "warning" => {
                        m.deprecation_warning = Some(unquote(&v).map_err(|e| tag_err(tag, e))?)
                    }
                    other => {
                        return Err(tag_err(
                            tag,
                            format!("unknown argument {other:?} (known: warning)"),
                        ));
                    }
                }
            }
        } else if let Some(args) = args_of(tag, CONVERSION_MARKER) {
            m.conversion = Some((parse_conversion(tag, &args)?, tag.location.clone()));
        } else if let Some(args) = args_of(tag, "kubebuilder:subresource:scale") {
            m.scale = Some(parse_scale(tag, &args)?);
        } else if tag.key == "kubebuilder:subresource:status" {
            // The status subresource follows the `status` field and +genclient:noStatus.
        } else if tag.key.starts_with("kubebuilder:subresource") {
            return Err(tag_err(
                tag,
                "unknown subresource marker (known: +kubebuilder:subresource:status, +kubebuilder:subresource:scale:…)",
            ));
        } else if let Some(args) = args_of(tag, "kubebuilder:printcolumn") {
            let col = parse_column(tag, &args)?;
            if m.columns.iter().any(|c| c.name == col.name) {
                return Err(tag_err(
                    tag,
                    format!("printer column {:?} is defined twice", col.name),
                ));
            }
            m.columns.push(col);
        }
    }
    Ok(m)
}

pub(crate) fn parse_scale(tag: &Tag, args: &str) -> Result<Scale> {
    let mut spec = None;
    let mut status = None;
    let mut selector = None;
    for (k, v) in parse_args(tag, args)? {
        let v = unquote(&v).map_err(|e| tag_err(tag, e))?;
        let (slot, prefixes): (&mut Option<String>, &[&str]) = match k.as_str() {
            "specpath" => (&mut spec, &[".spec."]),
            "statuspath" => (&mut status, &[".status."]),
            "selectorpath" => (&mut selector, &[".status.", ".spec."]),
            other => {
                return Err(tag_err(
                    tag,
                    format!(
                        "unknown argument {other:?} (known: specpath, statuspath, selectorpath)"
                    ),
                ));
            }
        };
        if !prefixes
            .iter()
            .any(|p| v.starts_with(p) && v.len() > p.len())
        {
            return Err(tag_err(
                tag,
                format!("{k}={v:?} must be a path under {}", prefixes.join(" or ")),
            ));
        }
        *slot = Some(v);
    }
    match (spec, status) {
        (Some(spec), Some(status)) => Ok(Scale {
            spec_replicas_path: spec,
            status_replicas_path: status,
            label_selector_path: selector,
        }),
        _ => Err(tag_err(tag, "specpath= and statuspath= are required")),
    }
}

pub(crate) fn parse_column(tag: &Tag, args: &str) -> Result<PrinterColumn> {
    let mut name = None;
    let mut type_ = None;
    let mut path = None;
    let mut description = None;
    let mut priority = None;
    let mut format = None;
    for (k, raw) in parse_args(tag, args)? {
        let v = unquote(&raw).map_err(|e| tag_err(tag, e))?;
        match k.as_str() {
            "name" => name = Some(v),
            "type" => {
                if !["integer", "number", "string", "boolean", "date"].contains(&v.as_str()) {
                    return Err(tag_err(
                        tag,
                        format!("type={v:?}: expected integer, number, string, boolean or date"),
                    ));
                }
                type_ = Some(v);
            }
            "JSONPath" | "jsonPath" => {
                if !v.starts_with('.') {
                    return Err(tag_err(tag, format!("JSONPath={v:?} must start with '.'")));
                }
                path = Some(v);
            }
            "description" => description = Some(v),
            "priority" => {
                priority = Some(v.parse::<i32>().ok().filter(|p| *p >= 0).ok_or_else(|| {
                    tag_err(tag, format!("priority={v:?} is not a non-negative integer"))
                })?)
            }
            "format" => {
                if ![
                    "int32",
                    "int64",
                    "float",
                    "double",
                    "byte",
                    "date",
                    "date-time",
                    "password",
                ]
                .contains(&v.as_str())
                {
                    return Err(tag_err(tag, format!("unknown format {v:?}")));
                }
                format = Some(v);
            }
            other => {
                return Err(tag_err(
                    tag,
                    format!(
                        "unknown argument {other:?} (known: name, type, JSONPath, description, priority, format)"
                    ),
                ));
            }
        }
    }
    match (name, type_, path) {
        (Some(name), Some(type_), Some(json_path)) if !name.is_empty() => Ok(PrinterColumn {
            name,
            type_,
            json_path,
            description,
            priority,
            format,
        }),
        _ => Err(tag_err(tag, "name=, type= and JSONPath= are required")),
    }
}

/// `+kubebuilder:metadata:annotations="k=v"` and `labels="k=v"` among `tags`.
pub(crate) fn metadata_markers(tags: &[Tag], into: &mut Metadata) -> Result<()> {
    for tag in tags {
        let (which, args) = if let Some(a) = args_of(tag, "kubebuilder:metadata:annotations") {
            (&mut into.annotations, a)
        } else if let Some(a) = args_of(tag, "kubebuilder:metadata:labels") {
            (&mut into.labels, a)
        } else {
            if tag.key.starts_with("kubebuilder:metadata") {
                return Err(tag_err(
                    tag,
                    "unknown marker (known: +kubebuilder:metadata:annotations=\"k=v\", +kubebuilder:metadata:labels=\"k=v\")",
                ));
            }
            continue;
        };
        let items = list(&args).map_err(|e| tag_err(tag, e))?;
        if items.is_empty() {
            return Err(tag_err(tag, "expected \"key=value\""));
        }
        for item in items {
            let Some((k, v)) = item.split_once('=') else {
                return Err(tag_err(tag, format!("{item:?} is not key=value")));
            };
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if k.is_empty() {
                return Err(tag_err(tag, format!("{item:?} has an empty key")));
            }
            if let Some((prev, _)) = which.get(&k)
                && *prev != v
            {
                return Err(tag_err(
                    tag,
                    format!("{k} is already set to {prev:?} elsewhere"),
                ));
            }
            which.insert(k, (v, tag.location.clone()));
        }
    }
    Ok(())
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Metadata {
    pub(crate) annotations: BTreeMap<String, (String, Location)>,
    pub(crate) labels: BTreeMap<String, (String, Location)>,
}
