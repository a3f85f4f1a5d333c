//! `get`: one object, in the representation the client asked for.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::conversion::converter;

pub(crate) async fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let name = t.info.name();
    let (found, converter) = {
        let st = t.shared.state.lock();
        (
            st.get(&t.res, t.key_namespace(), name),
            converter(&st, &t.res),
        )
    };
    match (found, converter) {
        (Some(obj), None) => Ok(t.object(200, &obj)),
        (Some(obj), Some(c)) => Ok(t.object(200, &c.read((*obj).clone()).await?)),
        (None, _) => Err(ApiError::not_found(&t.res.group, &t.res.plural, name)),
    }
}
