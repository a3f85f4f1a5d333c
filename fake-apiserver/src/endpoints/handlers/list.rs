//! `list`: a page of a collection, with selectors, limit and continue, and the
//! resourceVersion semantics of the request.

use http::Response;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, filter, validate_list_options, wait_for_rv};
use crate::endpoints::render::{self, ListMeta};
use crate::endpoints::response::respond;
use crate::error::ApiResult;
use crate::semantics::admission::conversion::converter;
use crate::storage::store::ListOptions;

pub(crate) async fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let q = &t.info.query;
    validate_list_options(q, false)?;
    let opts = ListOptions {
        filter: filter(
            &t.res,
            t.info.path.namespace.as_deref(),
            q,
            t.shared.state.lock().config.sharded_list_and_watch,
        )?,
        limit: q
            .int("limit")?
            .filter(|l| *l > 0)
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
        continue_token: q
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_string),
        resource_version: q.get("resourceVersion").map(str::to_string),
        resource_version_match: q
            .get("resourceVersionMatch")
            .filter(|m| !m.is_empty())
            .map(str::to_string),
    };
    if opts.continue_token.is_none()
        && let Some(rv) = &opts.resource_version
    {
        wait_for_rv(&t.shared, rv).await;
    }
    let (mut page, converter) = {
        let st = t.shared.state.lock();
        (st.list(&t.res, &opts)?, converter(&st, &t.res))
    };
    if let Some(c) = converter
        && !page.items.is_empty()
    {
        let items = page.items.iter().map(|o| (**o).clone()).collect();
        page.items = c
            .read_list(items)
            .await?
            .into_iter()
            .map(std::sync::Arc::new)
            .collect();
    }
    let meta = ListMeta {
        shard_selector: opts.filter.shard.as_ref().map(|s| s.canonical()),
        resource_version: page.resource_version,
        continue_token: page.continue_token,
        remaining: page.remaining,
    };
    let format = t.format();
    Ok(respond(
        200,
        &format.content_type(true),
        render::list_body(&t.res, &page.items, &meta, &format),
    ))
}
