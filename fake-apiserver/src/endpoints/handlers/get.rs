//! `get`: one object, in the representation the client asked for.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::error::{ApiError, ApiResult};

pub(crate) fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let name = t.info.name();
    let found = t.shared.state.lock().get(&t.res, t.key_namespace(), name);
    match found {
        Some(obj) => Ok(t.object(200, &obj)),
        None => Err(ApiError::not_found(&t.res.group, &t.res.plural, name)),
    }
}
