//! `POST` of a pod's `binding` (a `v1` `Binding`) and `eviction` (a `policy/v1` `Eviction`):
//! both answer a `Status` of success, as kube-apiserver does.

use http::Response;
use serde_json::json;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::handlers::delete::delete_options;
use crate::endpoints::request::Verb;
use crate::endpoints::response::json_response;
use crate::error::{ApiError, ApiResult};
use crate::semantics::registry;

/// Serves `…/pods/{name}/binding`, or `…/eviction` if `eviction`.
pub(crate) fn serve(mut t: Target<'_>, eviction: bool) -> ApiResult<Response<ResponseBody>> {
    if t.info.verb != Verb::Create {
        return Err(ApiError::method_not_allowed());
    }
    let body = t.take_body()?;
    let (namespace, name) = (t.info.namespace(), t.info.name());
    {
        let mut st = t.shared.state.lock();
        if eviction {
            let opts = delete_options(&t.info.query, body.get("deleteOptions"))?;
            registry::evict(&mut st, &t.res, namespace, name, &body, &opts)?;
        } else {
            let dry_run = t.info.query.dry_run()?;
            registry::bind(&mut st, &t.res, namespace, name, &body, dry_run)?;
        }
    }
    Ok(json_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "code": 201}),
    ))
}
