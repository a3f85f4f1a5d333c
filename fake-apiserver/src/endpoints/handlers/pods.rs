//! `POST` of a pod's `binding` (a `v1` `Binding`) and `eviction` (a `policy/v1` `Eviction`):
//! both answer a `Status` of success, as kube-apiserver does. Admission sees a `CREATE` of the
//! subresource whose object is the `Binding` or the `Eviction`: the mutating webhooks first,
//! then (once the body names the pod of the URL) the validating policies and webhooks, then
//! the write.

use http::Response;
use serde_json::{Value, json};

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::delete::delete_options;
use crate::endpoints::handlers::{Target, admission_options};
use crate::endpoints::request::Verb;
use crate::endpoints::response::json_response;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::{self, Attributes, Operation};
use crate::semantics::builtin_schema::pod_subresource_definition;
use crate::semantics::fields;
use crate::semantics::registry;
use crate::storage::object;

/// Serves `…/pods/{name}/binding`, or `…/eviction` if `eviction`.
pub(crate) async fn serve(mut t: Target<'_>, eviction: bool) -> ApiResult<Response<ResponseBody>> {
    if t.info.verb != Verb::Create {
        return Err(ApiError::method_not_allowed());
    }
    let mut body = t.take_body()?;
    let (namespace, name) = (t.info.namespace(), t.info.name());
    // The body's namespace is the URL's, as the create handler has it.
    let body_ns = object::namespace(&body);
    if body_ns.is_empty() {
        object::set_meta(&mut body, "namespace", Some(json!(namespace)));
    } else if body_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let kind = if eviction { "Eviction" } else { "Binding" };
    // As Go decodes the body into its type and encodes it again (an empty map omitted, …),
    // for admission, and again after the mutating webhooks.
    let definition = pod_subresource_definition(eviction);
    fields::canonical_bytes(&mut body, &definition);
    let dry_run = t.info.query.dry_run()?;
    let adm = admission::prepare(&t.shared.state.lock(), &t.res, namespace);
    if let Some(adm) = adm {
        let mut attrs = Attributes {
            operation: Operation::Create,
            res: t.res.clone(),
            subresource: Some(if eviction { "eviction" } else { "binding" }.into()),
            namespace: namespace.to_string(),
            name: name.to_string(),
            object: Some(body),
            old_object: None,
            dry_run,
            options: admission_options(&t.info.query, "CreateOptions"),
        };
        adm.mutate(&mut attrs, &t.warnings).await?;
        if let Some(o) = attrs.object.as_mut() {
            fields::canonical_bytes(o, &definition);
        }
        // The storage checks the name before it calls the validating admission.
        registry::check_subresource_name(
            attrs.object.as_ref().unwrap_or(&Value::Null),
            name,
            kind,
        )?;
        adm.validate(&attrs, &t.warnings).await?;
        body = attrs.object.take().unwrap_or(Value::Null);
    } else {
        registry::check_subresource_name(&body, name, kind)?;
    }
    {
        let mut st = t.shared.state.lock();
        if eviction {
            let opts = delete_options(&t.info.query, body.get("deleteOptions"))?;
            registry::evict(&mut st, &t.res, namespace, name, &opts)?;
        } else {
            registry::bind(&mut st, &t.res, namespace, name, &body, dry_run)?;
        }
    }
    Ok(json_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "code": 201}),
    ))
}
