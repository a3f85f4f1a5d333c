//! A namespace's `/finalize` subresource (`PUT` only): it replaces `spec.finalizers` and
//! nothing else, and deletes the namespace when that empties the last finalizer of a namespace
//! being deleted (the namespace store's `ShouldDeleteDuringUpdate`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::WriteOptions;
use crate::error::{ApiError, ApiResult};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::storage::object;

/// PUT `/api/v1/namespaces/{name}/finalize`.
pub(crate) fn finalize(
    st: &mut State,
    res: &Arc<Resource>,
    name: &str,
    body: Value,
    opts: &WriteOptions,
) -> ApiResult<Value> {
    if !body.is_object() {
        return Err(ApiError::bad_request("the body must be a Namespace object"));
    }
    let body_name = object::name(&body);
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let Some(old) = st.get(res, "", name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let rv = object::resource_version(&body);
    if !rv.is_empty() && rv != object::resource_version(&old) {
        return Err(ApiError::conflict(
            &res.group,
            &res.plural,
            name,
            super::OPTIMISTIC_LOCK_MSG,
        ));
    }
    let finalizers = object::strings(body.pointer("/spec/finalizers"));
    let mut new = (*old).clone();
    let spec = object::ensure_object(&mut new)
        .entry("spec")
        .or_insert_with(|| json!({}));
    if let Some(s) = spec.as_object_mut() {
        if finalizers.is_empty() {
            s.remove("finalizers");
        } else {
            s.insert("finalizers".into(), json!(finalizers));
        }
    }
    if opts.dry_run {
        return Ok(new);
    }
    let grace_zero = object::meta(&old)
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64)
        == Some(0);
    if object::is_deleting(&old)
        && grace_zero
        && finalizers.is_empty()
        && object::finalizers(&old).is_empty()
    {
        st.remove(res, "", name);
        let rv = st.rv();
        object::set_meta(&mut new, "resourceVersion", Some(json!(rv.to_string())));
        return Ok(new);
    }
    if object::same_content(&old, &new) {
        return Ok((*old).clone());
    }
    Ok((*st.put(res, new)).clone())
}
