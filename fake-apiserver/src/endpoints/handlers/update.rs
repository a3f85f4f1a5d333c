//! `update`: the object replaced by the body (`PUT`), or created when the resource allows
//! create on update.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::endpoints::response::with_warnings;
use crate::error::ApiResult;
use crate::semantics::managed::Scope;
use crate::semantics::registry::{self, UpdateInput};

pub(crate) fn serve(mut t: Target<'_>, scope: Scope) -> ApiResult<Response<ResponseBody>> {
    let body = t.take_body()?;
    let opts = t.write_options(Verb::Update, None)?;
    let (obj, created) = {
        let mut st = t.shared.state.lock();
        registry::update(
            &mut st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            UpdateInput {
                body,
                scope,
                managed_done: false,
                is_put: true,
            },
            &opts,
        )?
    };
    let code = if created { 201 } else { 200 };
    Ok(with_warnings(t.object(code, &obj), &opts.warnings))
}
