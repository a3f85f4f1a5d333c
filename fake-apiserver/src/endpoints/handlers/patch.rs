//! `patch`: a JSON, merge, strategic-merge or apply patch of the object.

use std::sync::Arc;

use http::Response;
use serde_json::Value;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, admission_options, dry_run_of};
use crate::endpoints::request::Verb;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::conversion::{Converter, converter};
use crate::semantics::admission::{self, Attributes, Operation};
use crate::semantics::managed::Scope;
use crate::semantics::patch::PatchType;
use crate::semantics::registry::{self, UpdateInput, WriteOptions};
use crate::storage::object;

pub(crate) async fn serve(mut t: Target<'_>, scope: Scope) -> ApiResult<Response<ResponseBody>> {
    let Some(ptype) = t.patch_type else {
        return Err(crate::semantics::patch::unsupported_patch(&t.res));
    };
    let body = t.take_body()?;
    let opts = t.write_options(Verb::Patch, Some(ptype))?;
    let (current, converter) = {
        let st = t.shared.state.lock();
        (
            st.get(&t.res, t.key_namespace(), t.info.name()),
            converter(&st, &t.res),
        )
    };
    if let Some(c) = converter {
        return converted(&t, &c, ptype, &body, current, scope, &opts).await;
    }
    let mutated = admit(&t, ptype, &body, scope, &opts).await?;
    let (obj, created) = {
        let mut st = t.shared.state.lock();
        match mutated {
            None => registry::patch(
                &mut st,
                &t.res,
                t.info.namespace(),
                t.info.name(),
                ptype,
                &body,
                scope,
                &opts,
            )?,
            Some((obj, true, _)) => (
                registry::create(
                    &mut st,
                    &t.res,
                    t.info.namespace(),
                    obj,
                    &opts,
                    registry::CreateFlags {
                        preset_managed_fields: true,
                        seed: false,
                    },
                )?,
                true,
            ),
            Some((obj, false, managed_done)) => registry::update(
                &mut st,
                &t.res,
                t.info.namespace(),
                t.info.name(),
                UpdateInput {
                    body: obj,
                    scope,
                    managed_done,
                    is_put: false,
                },
                &opts,
            )?,
        }
    };
    let code = if created { 201 } else { 200 };
    Ok(t.object(code, &obj))
}

/// A patch of a version a webhook converts: made on the stored object converted to that
/// version, then written through the update (or, for an apply that creates, the create)
/// path, which converts it back.
async fn converted(
    t: &Target<'_>,
    c: &Converter,
    ptype: PatchType,
    body: &Value,
    current: Option<Arc<Value>>,
    scope: Scope,
    opts: &WriteOptions,
) -> ApiResult<Response<ResponseBody>> {
    registry::check_patch_options(&t.res, ptype, opts)?;
    let served = match current {
        Some(stored) => Some(c.read((*stored).clone()).await?),
        None => None,
    };
    if ptype == PatchType::Apply {
        let applied = registry::applied(&t.res, t.info.name(), body, scope, opts, served.as_ref())?;
        if applied.creates {
            let flags = registry::CreateFlags {
                preset_managed_fields: true,
                seed: false,
            };
            return super::create::write(t, applied.object, opts, flags).await;
        }
        let input = UpdateInput {
            body: applied.object,
            scope,
            managed_done: true,
            is_put: false,
        };
        return super::update::write(t, input, opts).await;
    }
    let Some(served) = served else {
        return Err(ApiError::not_found(
            &t.res.group,
            &t.res.plural,
            t.info.name(),
        ));
    };
    let patched = match ptype {
        PatchType::Merge => crate::semantics::patch::merge_patch(&served, body)?,
        PatchType::Json => crate::semantics::patch::json_patch(&served, body)?,
        _ => return Err(crate::semantics::patch::unsupported_patch(&t.res)),
    };
    let input = UpdateInput {
        body: patched,
        scope,
        managed_done: false,
        is_put: true,
    };
    super::update::write(t, input, opts).await
}

/// Admission webhooks and policies, when any is registered: the mutating webhooks see the
/// patched object (the stored one as the old), then the write is validated in a dry run and
/// the validating policies and webhooks see the result. Returns the object to write, whether
/// it is created and whether its managed fields are already recorded, when a mutating webhook
/// changed it; `None` when the patch is written as it is.
///
/// JSON, merge and strategic-merge patches are validated only after the mutating webhooks,
/// as kube-apiserver does (a patch a webhook makes valid is accepted). An apply patch is
/// still applied in a dry run (validated) before the mutating webhooks see it.
async fn admit(
    t: &Target<'_>,
    ptype: PatchType,
    body: &Value,
    scope: Scope,
    opts: &WriteOptions,
) -> ApiResult<Option<(Value, bool, bool)>> {
    if ptype != PatchType::Apply {
        return admit_patch(t, ptype, body, scope, opts).await;
    }
    let (adm, old, (patched, created)) = {
        let mut st = t.shared.state.lock();
        let Some(adm) = admission::prepare(&st, &t.res, t.info.namespace()) else {
            return Ok(None);
        };
        let old = st.get(&t.res, t.key_namespace(), t.info.name());
        let patched = registry::patch(
            &mut st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            ptype,
            body,
            scope,
            &dry_run_of(opts),
        )?;
        (adm, old, patched)
    };
    let mut attrs = Attributes {
        operation: if created {
            Operation::Create
        } else {
            Operation::Update
        },
        res: t.res.clone(),
        subresource: t.info.path.subresource.clone(),
        namespace: t.key_namespace().to_string(),
        name: t.info.name().to_string(),
        object: Some(patched.clone()),
        old_object: old.map(|o| (*o).clone()),
        dry_run: opts.dry_run,
        options: admission_options(
            &t.info.query,
            if created {
                "CreateOptions"
            } else {
                "UpdateOptions"
            },
        ),
    };
    adm.mutate(&mut attrs, &opts.warnings).await?;
    let mutated = attrs.object.take().unwrap_or(Value::Null);
    if mutated == patched {
        attrs.object = Some(patched);
        adm.validate(&attrs, &opts.warnings).await?;
        return Ok(None);
    }
    let validated = {
        let mut st = t.shared.state.lock();
        if created {
            registry::create(
                &mut st,
                &t.res,
                t.info.namespace(),
                mutated.clone(),
                &dry_run_of(opts),
                registry::CreateFlags {
                    preset_managed_fields: true,
                    seed: false,
                },
            )?
        } else {
            registry::update(
                &mut st,
                &t.res,
                t.info.namespace(),
                t.info.name(),
                UpdateInput {
                    body: mutated.clone(),
                    scope,
                    managed_done: true,
                    is_put: false,
                },
                &dry_run_of(opts),
            )?
            .0
        }
    };
    attrs.name = object::name(&validated).to_string();
    attrs.object = Some(validated);
    adm.validate(&attrs, &opts.warnings).await?;
    Ok(Some((mutated, created, true)))
}

/// [`admit`] for a JSON, merge or strategic-merge patch: the patch applied without validation,
/// the mutating webhooks, then the write validated in a dry run, then the validating policies
/// and webhooks.
async fn admit_patch(
    t: &Target<'_>,
    ptype: PatchType,
    body: &Value,
    scope: Scope,
    opts: &WriteOptions,
) -> ApiResult<Option<(Value, bool, bool)>> {
    let (adm, old, patched) = {
        let st = t.shared.state.lock();
        let Some(adm) = admission::prepare(&st, &t.res, t.info.namespace()) else {
            return Ok(None);
        };
        let old = st.get(&t.res, t.key_namespace(), t.info.name());
        let patched = registry::patched_object(
            &st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            ptype,
            body,
            opts,
        )?;
        (adm, old, patched)
    };
    let mut attrs = t.update_attributes(patched.clone(), old.map(|o| (*o).clone()), opts);
    adm.mutate(&mut attrs, &opts.warnings).await?;
    let mutated = attrs.object.take().unwrap_or(Value::Null);
    let (validated, _) = {
        let mut st = t.shared.state.lock();
        registry::update(
            &mut st,
            &t.res,
            t.info.namespace(),
            t.info.name(),
            UpdateInput {
                body: mutated.clone(),
                scope,
                managed_done: false,
                is_put: false,
            },
            &dry_run_of(opts),
        )?
    };
    attrs.object = Some(validated);
    adm.validate(&attrs, &opts.warnings).await?;
    Ok((mutated != patched).then_some((mutated, false, false)))
}
