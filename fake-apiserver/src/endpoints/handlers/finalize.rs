//! `PUT /api/v1/namespaces/{name}/finalize`: replaces a namespace's `spec.finalizers` (what
//! the namespace controller calls once the namespace is empty).

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::error::{ApiError, ApiResult};
use crate::semantics::registry;

pub(crate) fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    if t.info.verb != Verb::Update {
        return Err(ApiError::method_not_allowed());
    }
    let body = t.take_body()?;
    let opts = t.write_options(Verb::Update, None)?;
    let obj = {
        let mut st = t.shared.state.lock();
        registry::finalize(&mut st, &t.res, t.info.name(), body, &opts)?
    };
    Ok(t.object(200, &obj))
}
