//! `create`: a new object from the body.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::endpoints::response::with_warnings;
use crate::error::{ApiError, ApiResult};
use crate::semantics::registry;
use crate::storage::object;

pub(crate) fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let body = t.take_body()?;
    if !object::resource_version(&body).is_empty() {
        return Err(ApiError::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let opts = t.write_options(Verb::Create, None)?;
    let obj = {
        let mut st = t.shared.state.lock();
        registry::create(
            &mut st,
            &t.res,
            t.info.namespace(),
            body,
            &opts,
            registry::CreateFlags::default(),
        )?
    };
    Ok(with_warnings(t.object(201, &obj), &opts.warnings))
}
