//! `get`: one object, in the representation the client asked for.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, wait_for_rv};
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::conversion::converter;
use crate::storage::store::{parse_watch_rv, too_large};

pub(crate) async fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let name = t.info.name();
    if t.info.query.flag("export") == Some(true) {
        return Err(ApiError::bad_request(
            "the export parameter, deprecated since v1.14, is no longer supported",
        ));
    }
    // Any version not older than `resourceVersion` will do: the present, once the storage
    // has reached it (a bad one is the watch cache's 500, as for a watch).
    let rv = match t.info.query.get("resourceVersion") {
        Some(v) if !v.is_empty() && v != "0" => Some(parse_watch_rv(v)?),
        _ => None,
    };
    if let Some(n) = rv {
        wait_for_rv(&t.shared, &n.to_string()).await;
    }
    let (found, converter) = {
        let st = t.shared.state.lock();
        if let Some(n) = rv
            && n > st.rv()
        {
            return Err(too_large(n, st.rv()));
        }
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
