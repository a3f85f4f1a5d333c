//! `create` of the review kinds (TokenReview, SubjectAccessReview and the rest): answered
//! from the request, never stored.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::response::json_response;
use crate::error::ApiResult;
use crate::semantics::review::{self, ReviewKind, ServerToken};

pub(crate) fn serve(mut t: Target<'_>, kind: ReviewKind) -> ApiResult<Response<ResponseBody>> {
    let body = t.take_body()?;
    let opts = t.write_options(t.info.verb, None)?;
    let server_token = t.req.extensions().get::<ServerToken>().map(|t| t.0.clone());
    let ctx = review::Context {
        server_token: server_token.as_deref(),
        url_namespace: t.info.namespace(),
        manager: &opts.manager,
    };
    let answer = review::create(kind, &t.res, body, &ctx)?;
    Ok(json_response(201, &answer))
}
