//! `get`, `update` and `patch` of `<object>/scale`: an `autoscaling/v1` `Scale` read from and
//! written to the object's replicas. A write is an update of the object; its managed fields
//! record the replicas alone, with `subresource: scale`. Admission sees the write as an
//! `UPDATE` of the subresource whose objects are `Scale`s.

use http::Response;
use serde_json::Value;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, dry_run_of};
use crate::endpoints::request::Verb;
use crate::endpoints::response::respond;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::{self, Admission};
use crate::semantics::managed::{self, Scope};
use crate::semantics::patch::{self, PatchType};
use crate::semantics::registry::{self, UpdateInput, WriteOptions};
use crate::semantics::resources::{Resource, split_api_version};
use crate::semantics::scale;
use crate::semantics::state::State;
use crate::storage::object;

pub(crate) async fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    // Before the object is looked up: a missing object's scale refuses the verb too.
    super::subresource_verb(&t.res, t.info.verb)?;
    let write = match (t.info.verb, t.patch_type) {
        (Verb::Get, _) => {
            let st = t.shared.state.lock();
            let current = current(&t, &st)?;
            scale::check_readable(&t.res, &current)?;
            return Ok(scale_body(&t.res, &current));
        }
        (Verb::Update, _) => Write::Update(t.take_body()?),
        (Verb::Patch, None) => return Err(patch::unsupported_patch(&t.res)),
        (Verb::Patch, Some(PatchType::Apply)) => Write::Apply(t.take_body()?),
        (Verb::Patch, Some(ptype)) => {
            registry::check_patch_options(&t.res, ptype, &options(&t)?)?;
            Write::Patch(ptype, t.take_body()?)
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let opts = options(&t)?;
    let adm = admission::prepare(&t.shared.state.lock(), &t.res, t.info.namespace());
    let admitted = match adm {
        Some(adm) => admit(&t, &adm, &write, &opts).await?,
        None => None,
    };
    let obj = {
        let mut st = t.shared.state.lock();
        let current = current(&t, &st)?;
        match plan(&t, &current, &write, &opts)? {
            Planned::Unchanged(obj) => obj,
            Planned::Write { mut input, .. } => {
                if let Some(s) = &admitted {
                    input.body = scale::with_replicas(&t.res, &input.body, s)?;
                }
                let (res, ns, name) = (&t.res, t.info.namespace(), t.info.name());
                registry::update(&mut st, res, ns, name, input, &opts)?.0
            }
        }
    };
    Ok(scale_body(&t.res, &obj))
}

/// A write through `/scale`, with its body.
enum Write {
    Update(Value),
    /// A JSON or merge patch of the `Scale`.
    Patch(PatchType, Value),
    Apply(Value),
}

/// What a scale write does to the object.
enum Planned {
    /// The object with the `Scale` written: the update to make, and the `Scale` the request
    /// asks for, as admission sees it.
    Write {
        input: UpdateInput,
        requested: Value,
    },
    /// Nothing to write (an apply that changes nothing): the object as it is.
    Unchanged(Value),
}

fn current(t: &Target<'_>, st: &State) -> ApiResult<Value> {
    let name = t.info.name();
    st.get(&t.res, t.key_namespace(), name)
        .map(|o| (*o).clone())
        .ok_or_else(|| ApiError::not_found(&t.res.group, &t.res.plural, name))
}

fn scale_body(res: &Resource, obj: &Value) -> Response<ResponseBody> {
    respond(
        200,
        "application/json",
        serde_json::to_vec(&scale::to_scale(res, obj)).unwrap_or_default(),
    )
}

/// The update a scale write makes of `current`.
fn plan(t: &Target<'_>, current: &Value, write: &Write, opts: &WriteOptions) -> ApiResult<Planned> {
    match write {
        Write::Update(body) => {
            // The update handler's checks of the body against the URL.
            registry::check_body_names(&t.res, body, t.info.namespace(), t.info.name())?;
            update(t, current, &scale::decoded(body, t.key_namespace()))
        }
        Write::Patch(ptype, body) => {
            let doc = scale::to_scale(&t.res, current);
            let wanted = match ptype {
                PatchType::Json => patch::json_patch(&doc, body)?,
                _ => patch::merge_patch(&doc, body)?,
            };
            update(t, current, &wanted)
        }
        Write::Apply(body) => apply(t, body, current, opts),
    }
}

/// Admission of a scale write, when any webhook or policy could match: the mutating webhooks
/// see the `Scale` the request asks for, the validating ones and the policies the `Scale` of
/// the object as it would be written (after a dry run of the write). Both are `UPDATE`s of
/// the subresource `scale`, with `autoscaling/v1` `Scale`s as objects. Returns the `Scale` a
/// mutating webhook changed, if one did.
async fn admit(
    t: &Target<'_>,
    adm: &Admission,
    write: &Write,
    opts: &WriteOptions,
) -> ApiResult<Option<Value>> {
    let (old, requested, mut input) = {
        let st = t.shared.state.lock();
        let current = current(t, &st)?;
        match plan(t, &current, write, opts)? {
            Planned::Unchanged(_) => return Ok(None),
            Planned::Write { input, requested } => {
                (scale::to_scale(&t.res, &current), requested, input)
            }
        }
    };
    let mut attrs = t.update_attributes(requested.clone(), Some(old), opts);
    adm.mutate(&mut attrs, &opts.warnings).await?;
    let mutated = attrs.object.take().unwrap_or(Value::Null);
    let changed = mutated != requested;
    if changed {
        input.body = scale::with_replicas(&t.res, &input.body, &mutated)?;
    }
    let validated = {
        let mut st = t.shared.state.lock();
        let (res, ns, name) = (&t.res, t.info.namespace(), t.info.name());
        registry::update(&mut st, res, ns, name, input, &dry_run_of(opts))?.0
    };
    attrs.object = Some(scale::to_scale(&t.res, &validated));
    adm.validate(&attrs, &opts.warnings).await?;
    Ok(changed.then_some(mutated))
}

/// The write options of a scale write: an update of the object, whose body (a `Scale`) has
/// nothing unknown to the object.
fn options(t: &Target<'_>) -> ApiResult<WriteOptions> {
    let opts = t.write_options_for_other_body(t.info.verb)?;
    Ok(WriteOptions {
        patch: false,
        body_problems: Default::default(),
        ..opts
    })
}

/// An update or a (non-apply) patch of the `Scale`: the object with the wanted replicas.
fn update(t: &Target<'_>, current: &Value, wanted: &Value) -> ApiResult<Planned> {
    let res = &t.res;
    let mut new = scale::with_replicas(res, current, wanted)?;
    // The object is written through the version of the request, whichever version it was
    // stored in.
    object::set_type_meta(&mut new, &res.api_version(), &res.kind);
    // kube-apiserver tracks a `Scale`'s managed fields only once somebody owns its replicas
    // (as it tracks no updates of an object without managed fields): until then an update
    // through `/scale` leaves them as they were.
    let managed_done = !replicas_owned(res, current);
    Ok(Planned::Write {
        input: UpdateInput {
            body: new,
            scope: Scope::Scale,
            managed_done,
            is_put: false,
        },
        requested: wanted.clone(),
    })
}

/// Server-side apply of a `Scale`, in kube-apiserver v1.37's order: the `Scale` typed, then
/// the conflicts with the replicas' other owners, then the name, the validation and the
/// resourceVersion precondition. The apply is recorded with `subresource: scale`.
fn apply(t: &Target<'_>, body: &Value, current: &Value, opts: &WriteOptions) -> ApiResult<Planned> {
    registry::check_patch_options(&t.res, PatchType::Apply, opts)?;
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = body.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if (kind, api_version) != ("Scale", managed::SCALE_API_VERSION) {
        let (g, v) = split_api_version(api_version);
        return Err(ApiError::bad_request(format!(
            "invalid object type: {g}/{v}, Kind={kind}"
        )));
    }
    let res = t.res.clone();
    let name = t.info.name();
    scale::check_typed(body)?;
    let replicas = managed::scale_replicas_path(&res);
    // With nobody owning the replicas, kube-apiserver first gives them to
    // `before-first-apply` (as an update through `/scale`), so an apply that changes them
    // conflicts with it.
    let mut live = current.clone();
    if !replicas_owned(&res, &live) {
        if res.is_custom() {
            return Err(custom_resource_failure(
                "create manager for existing fields: failed to convert live object",
                "",
            ));
        }
        let mut entries = managed::read_entries(&live);
        entries.push(managed::Entry {
            manager: managed::BEFORE_FIRST_APPLY.into(),
            operation: "Update".into(),
            api_version: res.api_version(),
            time: String::new(),
            subresource: Scope::Scale.subresource().into(),
            fields: [replicas.clone()].into(),
        });
        managed::write_entries(&mut live, &entries);
    }
    let config = scale::apply_config(&res, body, name);
    let registry::Applied { mut object, .. } =
        registry::applied(&res, name, &config, Scope::Scale, opts, Some(&live))?;
    if !object::name(body).is_empty() {
        registry::check_name(object::name(body), name)?;
    }
    scale::replicas_of(body, name)?;
    if res.is_custom() {
        // kube-apiserver v1.37 cannot convert the applied `Scale` back to a custom resource:
        // every apply that would change the object fails once its conflicts are checked.
        object::set_meta(
            &mut object,
            "resourceVersion",
            object::meta(current)
                .and_then(|m| m.get("resourceVersion"))
                .cloned(),
        );
        if object == *current {
            return Ok(Planned::Unchanged(object));
        }
        return Err(custom_resource_failure("convert new object", name));
    }
    // An apply that gives up the replicas leaves the `Scale` without them: zero.
    if managed::get_at(&object, &replicas).is_none() {
        scale::set_replicas(&res, &mut object, 0);
    }
    let requested = scale::to_scale(&res, &object);
    Ok(Planned::Write {
        input: UpdateInput {
            body: object,
            scope: Scope::Scale,
            managed_done: true,
            is_put: false,
        },
        requested,
    })
}

/// Whether a managed-fields entry of `obj` owns its replicas.
fn replicas_owned(res: &Resource, obj: &Value) -> bool {
    let replicas = managed::scale_replicas_path(res);
    managed::read_entries(obj)
        .iter()
        .any(|e| e.fields.contains(&replicas))
}

/// kube-apiserver's 500 for an apply through a custom resource's `/scale`: its field manager
/// converts the `Scale` (`name`d or not) as if it were the custom resource.
fn custom_resource_failure(step: &str, name: &str) -> ApiError {
    let scale = managed::SCALE_API_VERSION;
    ApiError::new(
        500,
        "",
        format!(
            "failed to {step} (/{name}; {scale}, Kind=Scale) to proper version: request to convert CR to an invalid group/version: {scale}"
        ),
    )
}
