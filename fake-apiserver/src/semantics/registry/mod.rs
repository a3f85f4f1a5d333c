//! The registry: the write verbs with the generic registry's semantics
//! (`genericregistry.Store` and `rest.BeforeCreate`/`BeforeUpdate`/`BeforeDelete`), one file
//! per verb — `create`, `update`, `patch` (with server-side apply), `delete` (with
//! deletecollection and the namespace and CRD finalizers), a Pod's `binding` and `eviction`
//! (`pods`) — over the checks they share
//! (`checks`) and the side effects of a stored write (`effects`).

use std::sync::Arc;

use crate::semantics::fields;

mod checks;
mod create;
mod delete;
mod effects;
mod finalize;
#[cfg(test)]
mod fixture;
mod patch;
mod pods;
mod update;

pub(crate) use create::{CreateFlags, create};
pub(crate) use delete::{DeleteOptions, Deleted, delete, delete_collection};
pub(crate) use finalize::finalize;
pub(crate) use patch::{Applied, applied, check_patch_options, patch, patched_object};
pub(crate) use pods::{bind, check_subresource_name, evict};
pub(crate) use update::{UpdateInput, check_body_names, check_name, update};

/// The message of a 409 on a stale resourceVersion.
pub(crate) const OPTIMISTIC_LOCK_MSG: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// Options of a write request.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOptions {
    pub(crate) dry_run: bool,
    /// `fieldManager`, or what the API server derives from the User-Agent.
    pub(crate) manager: String,
    /// Whether `fieldManager` was given explicitly.
    pub(crate) explicit_manager: bool,
    pub(crate) force: Option<bool>,
    /// `fieldValidation`.
    pub(crate) field_validation: fields::Directive,
    /// Duplicate fields of the request body, and its unknown fields where the handler could
    /// tell them from the raw body (built-ins; custom resources' metadata).
    pub(crate) body_problems: fields::Problems,
    /// Set for non-apply patches: field problems are reported in the patch's shape.
    pub(crate) patch: bool,
    /// Warnings for the response's `Warning` headers.
    pub(crate) warnings: Arc<parking_lot::Mutex<Vec<String>>>,
}
