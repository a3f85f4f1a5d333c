//! `patch`: a JSON, merge, strategic-merge or apply patch of the object.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::endpoints::response::with_warnings;
use crate::error::ApiResult;
use crate::semantics::managed::Scope;
use crate::semantics::registry;

pub(crate) fn serve(mut t: Target<'_>, scope: Scope) -> ApiResult<Response<ResponseBody>> {
    let Some(Some(ptype)) = t.patch_type else {
        return Err(crate::semantics::patch::unsupported_patch(&t.res));
    };
    let body = t.take_body()?;
    let opts = t.write_options(Verb::Patch, Some(ptype))?;
    let (obj, created) = {
        let mut st = t.shared.state.lock();
        registry::patch(
            &mut st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            ptype,
            &body,
            scope,
            &opts,
        )?
    };
    let code = if created { 201 } else { 200 };
    Ok(with_warnings(t.object(code, &obj), &opts.warnings))
}
