//! `create`: a new object from the body.

use http::Response;

use crate::endpoints::body::ResponseBody;
use serde_json::{Value, json};

use crate::endpoints::handlers::{Target, admission_options, dry_run_of};
use crate::endpoints::request::Verb;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::conversion::converter;
use crate::semantics::admission::{self, Attributes, Operation};
use crate::semantics::registry::{self, WriteOptions};
use crate::storage::object;

pub(crate) async fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let body = t.take_body()?;
    if !object::resource_version(&body).is_empty() {
        return Err(ApiError::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let opts = t.write_options(Verb::Create, None)?;
    write(&t, body, &opts, registry::CreateFlags::default()).await
}

/// Writes a new object through the create path: admission, conversion to the storage version
/// where a webhook converts, the registry's create. An apply that creates through a version
/// converted by a webhook is made in that version and written here.
pub(crate) async fn write(
    t: &Target<'_>,
    body: Value,
    opts: &WriteOptions,
    flags: registry::CreateFlags,
) -> ApiResult<Response<ResponseBody>> {
    let body = admit(t, body, opts, flags).await?;
    let converter = converter(&t.shared.state.lock(), &t.res);
    let (res, body) = match &converter {
        None => (t.res.clone(), body),
        Some(c) => (c.storage.clone(), c.to_storage(body).await?),
    };
    let obj = {
        let mut st = t.shared.state.lock();
        registry::create(&mut st, &res, t.info.namespace(), body, opts, flags)?
    };
    let obj = match &converter {
        None => obj,
        Some(c) => c.written(obj).await?,
    };
    Ok(t.object(201, &obj))
}

/// Admission webhooks, when any is registered: the mutating ones on the body, then a dry run
/// of the create (defaults, validation) for the validating ones. Returns the body to store.
async fn admit(
    t: &Target<'_>,
    mut body: Value,
    opts: &WriteOptions,
    flags: registry::CreateFlags,
) -> ApiResult<Value> {
    let namespace = t.info.namespace();
    let Some(adm) = admission::prepare(&t.shared.state.lock(), &t.res, namespace) else {
        return Ok(body);
    };
    if t.res.namespaced && object::namespace(&body).is_empty() {
        object::set_meta(&mut body, "namespace", Some(json!(namespace)));
    }
    let mut attrs = Attributes {
        operation: Operation::Create,
        res: t.res.clone(),
        subresource: None,
        namespace: if t.res.namespaced {
            namespace.to_string()
        } else {
            String::new()
        },
        name: object::name(&body).to_string(),
        object: Some(body),
        old_object: None,
        dry_run: opts.dry_run,
        options: admission_options(&t.info.query, "CreateOptions"),
    };
    adm.mutate(&mut attrs, &opts.warnings).await?;
    let mut body = attrs.object.take().unwrap_or(Value::Null);
    let validated = {
        let mut st = t.shared.state.lock();
        registry::create(
            &mut st,
            &t.res,
            namespace,
            body.clone(),
            &dry_run_of(opts),
            flags,
        )?
    };
    // The name validating webhooks see is the one stored.
    if object::name(&body).is_empty() {
        object::set_meta(&mut body, "name", Some(json!(object::name(&validated))));
    }
    attrs.name = object::name(&validated).to_string();
    attrs.object = Some(validated);
    adm.validate(&attrs, &opts.warnings).await?;
    Ok(body)
}
