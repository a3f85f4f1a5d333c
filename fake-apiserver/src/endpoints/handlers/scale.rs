//! `get`, `update` and `patch` of `<object>/scale`: an `autoscaling/v1` `Scale` read from and
//! written to the object's replicas.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::endpoints::response::{respond, with_warnings};
use crate::error::{ApiError, ApiResult};
use crate::semantics::managed::Scope;
use crate::semantics::patch::{self, PatchType};
use crate::semantics::registry::{self, UpdateInput};
use crate::semantics::scale;

pub(crate) fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    // Before the object is looked up: a missing object's scale refuses the verb too.
    super::subresource_verb(&t.res, t.info.verb)?;
    let res = t.res.clone();
    let scale_body = |obj: &serde_json::Value| {
        respond(
            200,
            "application/json",
            serde_json::to_vec(&scale::to_scale(&res, obj)).unwrap_or_default(),
        )
    };
    let shared = t.shared.clone();
    let mut st = shared.state.lock();
    let name = t.info.name();
    let Some(current) = st.get(&res, t.key_namespace(), name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let wanted = match t.info.verb {
        Verb::Get => return Ok(scale_body(&current)),
        Verb::Update => {
            let body = t.take_body()?;
            // The update handler's checks of the body against the URL.
            registry::check_body_names(&res, &body, t.info.namespace(), name)?;
            body
        }
        Verb::Patch => {
            let body = t.take_body()?;
            let doc = scale::to_scale(&res, &current);
            match t.patch_type.flatten() {
                Some(PatchType::Json) => patch::json_patch(&doc, &body)?,
                Some(_) => patch::merge_patch(&doc, &body)?,
                None => return Err(patch::unsupported_patch(&res)),
            }
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let mut new = scale::with_replicas(&res, &current, &wanted)?;
    // The object is written through the version of the request, whichever version it was
    // stored in.
    if let Some(m) = new.as_object_mut() {
        m.insert("apiVersion".into(), res.api_version().into());
    }
    let mut opts = t.write_options_for_other_body(t.info.verb)?;
    // A scale write is an update of the object for managed fields and admission.
    opts.patch = false;
    // The body is a Scale, not the object: nothing in it is unknown to the object.
    opts.body_problems = Default::default();
    let (obj, _) = registry::update(
        &mut st,
        &res,
        t.info.namespace(),
        name,
        UpdateInput {
            body: new,
            scope: Scope::Main,
            managed_done: false,
            is_put: false,
        },
        &opts,
    )?;
    Ok(with_warnings(scale_body(&obj), &opts.warnings))
}
