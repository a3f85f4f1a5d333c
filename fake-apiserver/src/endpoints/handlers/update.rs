//! `update`: the object replaced by the body (`PUT`), or created when the resource allows
//! create on update.

use http::Response;

use crate::endpoints::body::ResponseBody;
use serde_json::Value;

use crate::endpoints::handlers::{Target, admission_options, dry_run_of};
use crate::endpoints::request::Verb;
use crate::error::ApiResult;
use crate::semantics::admission::conversion::converter;
use crate::semantics::admission::{self, Attributes, Operation};
use crate::semantics::managed::Scope;
use crate::semantics::registry::{self, UpdateInput, WriteOptions};
use crate::storage::object;

pub(crate) async fn serve(mut t: Target<'_>, scope: Scope) -> ApiResult<Response<ResponseBody>> {
    let body = t.take_body()?;
    let opts = t.write_options(Verb::Update, None)?;
    let input = UpdateInput {
        body,
        scope,
        managed_done: false,
        is_put: true,
    };
    write(&t, input, &opts).await
}

/// Writes a whole object through the update path: admission, conversion to the storage
/// version where a webhook converts, the registry's update. A patch or an apply of a version
/// converted by a webhook is made on the converted object and written here.
pub(crate) async fn write(
    t: &Target<'_>,
    input: UpdateInput,
    opts: &WriteOptions,
) -> ApiResult<Response<ResponseBody>> {
    let opts = opts.clone();
    let UpdateInput {
        body,
        scope,
        managed_done,
        is_put,
    } = input;
    let body = admit(t, body, (scope, managed_done, is_put), &opts).await?;
    let converter = converter(&t.shared.state.lock(), &t.res);
    let (res, body) = match &converter {
        None => (t.res.clone(), body),
        Some(c) => (c.storage.clone(), c.to_storage(body).await?),
    };
    let (obj, created) = {
        let mut st = t.shared.state.lock();
        registry::update(
            &mut st,
            &res,
            t.info.namespace(),
            t.info.name(),
            UpdateInput {
                body,
                scope,
                managed_done,
                is_put,
            },
            &opts,
        )?
    };
    let obj = match &converter {
        None => obj,
        Some(c) => c.written(obj).await?,
    };
    let code = if created { 201 } else { 200 };
    Ok(t.object(code, &obj))
}

/// Admission webhooks, when any is registered: the mutating ones on the body with the stored
/// object as the old one, then a dry run of the update (or of the create a PUT may be) for
/// the validating ones. Returns the body to write.
async fn admit(
    t: &Target<'_>,
    body: Value,
    (scope, managed_done, is_put): (Scope, bool, bool),
    opts: &WriteOptions,
) -> ApiResult<Value> {
    let (adm, old) = {
        let st = t.shared.state.lock();
        let Some(adm) = admission::prepare(&st, &t.res, t.info.namespace()) else {
            return Ok(body);
        };
        (adm, st.get(&t.res, t.key_namespace(), t.info.name()))
    };
    let creates = is_put && old.is_none() && scope == Scope::Main && t.res.allow_create_on_update();
    let mut attrs = Attributes {
        operation: if creates {
            Operation::Create
        } else {
            Operation::Update
        },
        res: t.res.clone(),
        subresource: t.info.path.subresource.clone(),
        namespace: t.key_namespace().to_string(),
        name: t.info.name().to_string(),
        object: Some(body),
        old_object: old.map(|o| (*o).clone()),
        dry_run: opts.dry_run,
        options: admission_options(
            &t.info.query,
            if creates {
                "CreateOptions"
            } else {
                "UpdateOptions"
            },
        ),
    };
    if attrs.old_object.is_some() || creates {
        adm.mutate(&mut attrs, &opts.warnings).await?;
    }
    let body = attrs.object.take().unwrap_or(Value::Null);
    let (validated, _) = {
        let mut st = t.shared.state.lock();
        registry::update(
            &mut st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            UpdateInput {
                body: body.clone(),
                scope,
                managed_done,
                is_put,
            },
            &dry_run_of(opts),
        )?
    };
    attrs.name = object::name(&validated).to_string();
    attrs.object = Some(validated);
    adm.validate(&attrs, &opts.warnings).await?;
    Ok(body)
}
