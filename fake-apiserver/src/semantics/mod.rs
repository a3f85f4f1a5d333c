//! API semantics: what kube-apiserver does to a request between HTTP and storage — the
//! served resources and the state they live in (`state`), the write verbs' registry rules
//! (`registry`), metadata and schema validation, CRDs, patches, server-side apply and field
//! ownership, field selector parsing, built-in strategies.

pub(crate) mod admission;
pub(crate) mod builtin;
pub(crate) mod builtin_schema;
pub(crate) mod cel;
pub(crate) mod crd;
pub(crate) mod field_selector;
pub(crate) mod fields;
pub(crate) mod formats;
pub(crate) mod list_type;
pub(crate) mod managed;
pub(crate) mod patch;
pub(crate) mod patterns;
pub(crate) mod registry;
pub(crate) mod resources;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod schema;
pub(crate) mod state;
pub(crate) mod validation;

/// The string at JSON pointer `ptr` in `v`, or `""` where it is missing or not a string.
pub(crate) fn str_at<'a>(v: &'a serde_json::Value, ptr: &str) -> &'a str {
    v.pointer(ptr)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}
