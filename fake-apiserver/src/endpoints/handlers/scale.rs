//! `get`, `update` and `patch` of `<object>/scale`: an `autoscaling/v1` `Scale` read from and
//! written to the object's replicas. A write is an update of the object; its managed fields
//! record the replicas alone, with `subresource: scale`.

use http::Response;
use serde_json::Value;

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::Target;
use crate::endpoints::request::Verb;
use crate::endpoints::response::{respond, with_warnings};
use crate::error::{ApiError, ApiResult};
use crate::semantics::managed::{self, Scope};
use crate::semantics::patch::{self, PatchType};
use crate::semantics::registry::{self, UpdateInput, WriteOptions};
use crate::semantics::resources::{Resource, split_api_version};
use crate::semantics::scale;
use crate::semantics::state::State;
use crate::storage::object;

pub(crate) fn serve(mut t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    // Before the object is looked up: a missing object's scale refuses the verb too.
    super::subresource_verb(&t.res, t.info.verb)?;
    let res = t.res.clone();
    let shared = t.shared.clone();
    let mut st = shared.state.lock();
    let name = t.info.name().to_string();
    let Some(current) = st.get(&res, t.key_namespace(), &name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, &name));
    };
    let scale_body = |obj: &Value| {
        respond(
            200,
            "application/json",
            serde_json::to_vec(&scale::to_scale(&res, obj)).unwrap_or_default(),
        )
    };
    let (obj, opts) = match (t.info.verb, t.patch_type.flatten()) {
        (Verb::Get, _) => {
            scale::check_readable(&res, &current)?;
            return Ok(scale_body(&current));
        }
        (Verb::Patch, Some(PatchType::Apply)) => {
            let body = t.take_body()?;
            apply(&mut t, &mut st, &body, &current)?
        }
        (Verb::Update, _) => {
            let body = t.take_body()?;
            // The update handler's checks of the body against the URL.
            registry::check_body_names(&res, &body, t.info.namespace(), &name)?;
            update(&t, &mut st, &current, &body)?
        }
        (Verb::Patch, None) => return Err(patch::unsupported_patch(&res)),
        (Verb::Patch, Some(ptype)) => {
            registry::check_patch_options(&res, ptype, &options(&t)?)?;
            let body = t.take_body()?;
            let doc = scale::to_scale(&res, &current);
            let wanted = match ptype {
                PatchType::Json => patch::json_patch(&doc, &body)?,
                _ => patch::merge_patch(&doc, &body)?,
            };
            update(&t, &mut st, &current, &wanted)?
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    Ok(with_warnings(scale_body(&obj), &opts.warnings))
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
fn update(
    t: &Target<'_>,
    st: &mut State,
    current: &Value,
    wanted: &Value,
) -> ApiResult<(Value, WriteOptions)> {
    let res = &t.res;
    let mut new = scale::with_replicas(res, current, wanted)?;
    // The object is written through the version of the request, whichever version it was
    // stored in.
    object::set_type_meta(&mut new, &res.api_version(), &res.kind);
    let opts = options(t)?;
    // kube-apiserver tracks a `Scale`'s managed fields only once somebody owns its replicas
    // (as it tracks no updates of an object without managed fields): until then an update
    // through `/scale` leaves them as they were.
    let managed_done = !replicas_owned(res, current);
    let (obj, _) = registry::update(
        st,
        res,
        t.info.namespace(),
        t.info.name(),
        UpdateInput {
            body: new,
            scope: Scope::Scale,
            managed_done,
            is_put: false,
        },
        &opts,
    )?;
    Ok((obj, opts))
}

/// Server-side apply of a `Scale`, in kube-apiserver v1.37's order: the `Scale` typed, then
/// the conflicts with the replicas' other owners, then the name, the validation and the
/// resourceVersion precondition. The apply is recorded with `subresource: scale`.
fn apply(
    t: &mut Target<'_>,
    st: &mut State,
    body: &Value,
    current: &Value,
) -> ApiResult<(Value, WriteOptions)> {
    let opts = options(t)?;
    registry::check_patch_options(&t.res, PatchType::Apply, &opts)?;
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
            time: object::now_rfc3339(),
            subresource: Scope::Scale.subresource().into(),
            fields: [replicas.clone()].into(),
        });
        managed::write_entries(&mut live, &entries);
    }
    let config = scale::apply_config(&res, body, name);
    let registry::Applied { mut object, .. } =
        registry::applied(&res, name, &config, Scope::Scale, &opts, Some(&live))?;
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
            return Ok((object, opts));
        }
        return Err(custom_resource_failure("convert new object", name));
    }
    // An apply that gives up the replicas leaves the `Scale` without them: zero.
    if managed::get_at(&object, &replicas).is_none() {
        scale::set_replicas(&res, &mut object, 0);
    }
    let (obj, _) = registry::update(
        st,
        &res,
        t.info.namespace(),
        name,
        UpdateInput {
            body: object,
            scope: Scope::Scale,
            managed_done: true,
            is_put: false,
        },
        &opts,
    )?;
    Ok((obj, opts))
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
