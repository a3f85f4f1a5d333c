//! Server-side apply with typed apply configurations: [`ApplyOptions`], the
//! [`ApplyConfiguration`] trait that generated `<Kind>ApplyConfiguration` types implement,
//! [`extract`] (read-modify-apply without taking other managers' fields), the conflicts of
//! a refused apply ([`conflicts`]), and the apply configurations of the `meta/v1` types every
//! object carries ([`meta`]).
//!
//! An apply configuration says which fields its field manager wants to own, so it must hold
//! **only** those: every field is optional and serializes only when set. A full object (such as
//! a `k8s-openapi` struct with its `Default`s) would claim every field it carries, zero values
//! included, and take them from their owners.
//!
//! [`extract`] is client-go's `Extract<Kind>`: it reads `metadata.managedFields`, takes the
//! `fieldsV1` set of one manager's `Apply` entry (per subresource), and copies those fields out
//! of the object. The set names list items by their keys (`k:{"name":"http"}`), set items by
//! value and the rest by path, so no OpenAPI document is needed.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_codegen_runtime::apply::{self, ApplyOptions};
//! use serde_json::json;
//!
//! // What a server returns after managers `ctrl` and `editor` applied to a ConfigMap.
//! let cm: ConfigMap = serde_json::from_value(json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "web", "namespace": "prod", "managedFields": [
//!         {"manager": "ctrl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
//!          "fieldsV1": {"f:data": {"f:mode": {}}}},
//!         {"manager": "editor", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
//!          "fieldsV1": {"f:data": {"f:colour": {}}}}
//!     ]},
//!     "data": {"mode": "fast", "colour": "blue"}
//! }))?;
//! let mine = apply::extract_fields(&serde_json::to_value(&cm)?, "ctrl", "")?;
//! assert_eq!(mine, json!({"apiVersion": "v1", "kind": "ConfigMap",
//!                         "metadata": {"name": "web", "namespace": "prod"},
//!                         "data": {"mode": "fast"}}));
//! let opts = ApplyOptions::new("ctrl").force();
//! assert_eq!(opts.patch_params().field_manager.as_deref(), Some("ctrl"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod fields_v1;
pub mod meta;

use kube::Resource;
use kube::api::PatchParams;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use fields_v1::FieldSet;

/// The query parameters of an apply request: client-go's `metav1.ApplyOptions`.
///
/// The field manager is required (it is the constructor's argument); `force` takes fields
/// that other managers own instead of failing with a conflict; `dry_run` has the server
/// validate and answer without storing anything.
///
/// ```
/// use kube_codegen_runtime::ApplyOptions;
/// let opts = ApplyOptions::new("mydemo-controller").force();
/// assert!(opts.force && !opts.dry_run);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyOptions {
    /// The manager that will own the applied fields (`fieldManager`); at most 128 printable
    /// characters, as the API server requires.
    pub field_manager: String,
    /// Take fields owned by other managers instead of failing with a 409 conflict (`force`).
    pub force: bool,
    /// Validate and answer without persisting (`dryRun=All`).
    pub dry_run: bool,
}

impl ApplyOptions {
    /// Options for `field_manager`, without force or dry run.
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions {
            field_manager: field_manager.into(),
            force: false,
            dry_run: false,
        }
    }

    /// Sets `force`: conflicting fields are taken from their managers.
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    /// Sets `dry_run`: nothing is persisted.
    #[must_use]
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// The equivalent `kube` patch parameters (for `Patch::Apply`).
    pub fn patch_params(&self) -> PatchParams {
        PatchParams {
            dry_run: self.dry_run,
            force: self.force,
            field_manager: Some(self.field_manager.clone()),
            field_validation: None,
        }
    }
}

impl From<&ApplyOptions> for PatchParams {
    fn from(opts: &ApplyOptions) -> Self {
        opts.patch_params()
    }
}

/// A declarative configuration of an API object for server-side apply: client-go's
/// `<Kind>ApplyConfiguration`.
///
/// Implementations serialize **only** the fields that were set (every field is an `Option`,
/// skipped when `None`; lists and maps are skipped when unset), so applying one claims exactly
/// those fields. Generated configurations implement it for every `+genclient` kind; the typed
/// clients' `apply`/`apply_status` take them, and [`extract`] builds them from an object.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::apply::ApplyConfiguration;
/// use serde::{Deserialize, Serialize};
/// use std::collections::BTreeMap;
///
/// /// A hand-written apply configuration of a ConfigMap (generated ones look the same).
/// #[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct ConfigMapApply {
///     #[serde(skip_serializing_if = "Option::is_none")]
///     api_version: Option<String>,
///     #[serde(skip_serializing_if = "Option::is_none")]
///     kind: Option<String>,
///     #[serde(skip_serializing_if = "Option::is_none")]
///     metadata: Option<Meta>,
///     #[serde(skip_serializing_if = "Option::is_none")]
///     data: Option<BTreeMap<String, String>>,
/// }
///
/// #[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
/// struct Meta {
///     #[serde(skip_serializing_if = "Option::is_none")]
///     name: Option<String>,
///     #[serde(skip_serializing_if = "Option::is_none")]
///     namespace: Option<String>,
/// }
///
/// impl ApplyConfiguration for ConfigMapApply {
///     type Object = ConfigMap;
///     fn name(&self) -> Option<&str> {
///         self.metadata.as_ref()?.name.as_deref()
///     }
///     fn namespace(&self) -> Option<&str> {
///         self.metadata.as_ref()?.namespace.as_deref()
///     }
///     fn api_version(&self) -> Option<&str> {
///         self.api_version.as_deref()
///     }
///     fn kind(&self) -> Option<&str> {
///         self.kind.as_deref()
///     }
/// }
///
/// let ac = ConfigMapApply {
///     metadata: Some(Meta { name: Some("web".into()), namespace: Some("prod".into()) }),
///     ..Default::default()
/// };
/// assert_eq!(serde_json::to_string(&ac)?, r#"{"metadata":{"name":"web","namespace":"prod"}}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub trait ApplyConfiguration: Serialize + DeserializeOwned {
    /// The API object this configures (`Mydemo` for `MydemoApplyConfiguration`).
    type Object: Resource<DynamicType = ()>;

    /// `metadata.name`, which names the object to apply to.
    fn name(&self) -> Option<&str>;

    /// `metadata.namespace`.
    fn namespace(&self) -> Option<&str>;

    /// `apiVersion`.
    fn api_version(&self) -> Option<&str>;

    /// `kind`.
    fn kind(&self) -> Option<&str>;
}

/// Why [`extract`] or [`extract_fields`] failed. None of these is retryable: the same object
/// gives the same error.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The object could not be serialized to JSON.
    #[error("cannot serialize the object to JSON: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The object is not a JSON object.
    #[error("the object is not a JSON object (found {found})")]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// The object has no `metadata.managedFields` at all, so nothing can be known about
    /// ownership; typically it comes from a cache that strips them. (An object read from an
    /// API server always has them; extracting from it never fails this way.)
    #[error(
        "{kind} {name:?} has no metadata.managedFields (was it read from a cache that drops them?)"
    )]
    NoManagedFields {
        /// The object's kind.
        kind: String,
        /// The object's name.
        name: String,
    },
    /// A `managedFields` entry is malformed.
    #[error("managedFields entry of manager {manager:?} ({subresource}): {reason}")]
    InvalidManagedFields {
        /// The entry's manager.
        manager: String,
        /// The entry's subresource (`main resource` for the main resource).
        subresource: String,
        /// What is wrong, with the path into `fieldsV1` where it applies.
        reason: String,
    },
    /// The extracted fields do not decode into the apply configuration type.
    #[error("the fields of manager {manager:?} do not decode into {target}: {source}")]
    Decode {
        /// The manager whose fields were extracted.
        manager: String,
        /// The apply configuration type.
        target: &'static str,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The fields that `field_manager` owns in `object` (the object's JSON, `metadata.managedFields`
/// included) through `Apply` operations on `subresource` (`""` for the main resource,
/// `"status"` for the status subresource), as the apply configuration JSON that claims exactly
/// them: `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` from the object, plus
/// the owned fields with their current values.
///
/// A manager with no `Apply` entry (it never applied, or others took all its fields) gets the
/// identity fields only, as in client-go. Fields written by `Update` operations (`create`,
/// `update`, merge patches) are never included: client-go's extract ignores them as well.
pub fn extract_fields(
    object: &Value,
    field_manager: &str,
    subresource: &str,
) -> Result<Value, ExtractError> {
    let Value::Object(root) = object else {
        return Err(ExtractError::NotAnObject {
            found: json_type(object),
        });
    };
    let meta = root.get("metadata").and_then(Value::as_object);
    let text = |m: Option<&Map<String, Value>>, key: &str| {
        m.and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let Some(entries) = meta
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    else {
        return Err(ExtractError::NoManagedFields {
            kind: text(Some(root), "kind").unwrap_or_default(),
            name: text(meta, "name").unwrap_or_default(),
        });
    };
    let entry = entries.iter().find(|e| {
        e["manager"].as_str() == Some(field_manager)
            && e["operation"].as_str() == Some("Apply")
            && e["subresource"].as_str().unwrap_or("") == subresource
    });
    let invalid = |reason: String| ExtractError::InvalidManagedFields {
        manager: field_manager.to_string(),
        subresource: if subresource.is_empty() {
            "main resource".to_string()
        } else {
            format!("subresource {subresource:?}")
        },
        reason,
    };
    let mut out = match entry {
        None => Map::new(),
        Some(entry) => {
            let fields_type = entry["fieldsType"].as_str().unwrap_or("FieldsV1");
            if fields_type != "FieldsV1" {
                return Err(invalid(format!(
                    "fieldsType {fields_type:?} is not FieldsV1"
                )));
            }
            let set = match entry.get("fieldsV1") {
                None | Some(Value::Null) => FieldSet::default(),
                Some(doc) => FieldSet::parse(doc)
                    .map_err(|e| invalid(format!("fieldsV1 at {}: {}", e.path, e.reason)))?,
            };
            match set.extract(object) {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            }
        }
    };
    for key in ["apiVersion", "kind"] {
        if let Some(v) = root.get(key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    let out_meta = out
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = out_meta {
        for key in ["name", "namespace"] {
            if let Some(v) = text(meta, key).filter(|v| !v.is_empty()) {
                m.insert(key.to_string(), Value::String(v));
            }
        }
    }
    Ok(Value::Object(out))
}

/// client-go's `Extract<Kind>From`: the apply configuration holding exactly the fields
/// `field_manager` owns in `object` through `Apply` operations on `subresource` (`""` for the
/// main resource, `"status"` for the status subresource), with their current values, plus
/// apiVersion, kind, name and namespace. See [`extract_fields`].
///
/// Use it for read-modify-apply: extract what your manager owns, change it, apply it back,
/// and no field of another manager is claimed or dropped. `object` must be as the API server
/// returned it (with `metadata.managedFields`).
pub fn extract<A>(
    object: &A::Object,
    field_manager: &str,
    subresource: &str,
) -> Result<A, ExtractError>
where
    A: ApplyConfiguration,
    A::Object: Serialize,
{
    let value = serde_json::to_value(object).map_err(ExtractError::Serialize)?;
    let mut fields = extract_fields(&value, field_manager, subresource)?;
    if let Value::Object(m) = &mut fields {
        m.insert(
            "apiVersion".into(),
            Value::String(A::Object::api_version(&()).into_owned()),
        );
        m.insert(
            "kind".into(),
            Value::String(A::Object::kind(&()).into_owned()),
        );
    }
    serde_json::from_value(fields).map_err(|source| ExtractError::Decode {
        manager: field_manager.to_string(),
        target: std::any::type_name::<A>(),
        source,
    })
}

/// One field of a refused apply and the manager that owns it: a `FieldManagerConflict` cause of
/// the server's 409.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    /// The field path, as the server prints it (`.spec.replicas`,
    /// `.spec.ports[name="http"].port`).
    pub field: String,
    /// The manager that owns it.
    pub manager: String,
    /// The cause's message (`conflict with "other"`, `conflict with "kubectl" using apps/v1`
    /// for a manager that updated rather than applied).
    pub message: String,
}

/// The field conflicts of an apply refused with 409 (`FieldManagerConflict` causes); empty for
/// any other error. Resolve them by dropping the fields from the configuration, or take them
/// with [`ApplyOptions::force`].
pub fn conflicts(err: &kube::Error) -> Vec<FieldConflict> {
    let kube::Error::Api(status) = err else {
        return Vec::new();
    };
    if status.code != 409 {
        return Vec::new();
    }
    status
        .details
        .iter()
        .flat_map(|d| d.causes.iter())
        .filter(|c| c.reason == "FieldManagerConflict")
        .map(|c| FieldConflict {
            field: c.field.clone(),
            manager: quoted_manager(&c.message).unwrap_or_default(),
            message: c.message.clone(),
        })
        .collect()
}

/// The manager in `conflict with "name"…`: the Go-quoted string after the prefix.
fn quoted_manager(message: &str) -> Option<String> {
    let rest = message.strip_prefix("conflict with \"")?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'v' => out.push('\u{b}'),
                esc @ ('x' | 'u' | 'U') => {
                    let len = match esc {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = chars.by_ref().take(len).collect();
                    let code = u32::from_str_radix(&hex, 16).ok()?;
                    out.push(char::from_u32(code)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests;
