//! `POST` of a pod's `binding` (a `v1` `Binding`) and `eviction` (a `policy/v1` `Eviction`):
//! both answer a `Status` of success, as kube-apiserver does. Admission sees a `CREATE` of the
//! subresource whose object is the `Binding` or the `Eviction`: the mutating webhooks first,
//! then (once the body names the pod of the URL) the validating policies and webhooks, then
//! the write.

use std::sync::Arc;

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

/// `GET …/pods/{name}/log`. No kubelet runs behind the in-memory server, so no container has
/// written anything: a pod not scheduled to a node has an empty log, answered as
/// kube-apiserver answers it (204, no body), after the same checks of the options and the
/// container; a scheduled pod's node has no kubelet to ask.
pub(crate) fn serve_log(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    if t.info.verb != Verb::Get {
        return Err(ApiError::method_not_allowed());
    }
    let name = t.info.name();
    let errs = log_option_errors(&t.info.query)?;
    if !errs.is_empty() {
        return Err(ApiError::invalid("", "PodLogOptions", name, errs));
    }
    let (pod, node) = pod_and_node(&t)?;
    check_container(&pod, name, t.info.query.get("container"))?;
    match node {
        None => Ok(respond_empty()),
        Some(node) => Err(node_without_kubelet(node)),
    }
}

fn respond_empty() -> Response<ResponseBody> {
    let mut r = Response::new(ResponseBody::empty());
    *r.status_mut() = http::StatusCode::NO_CONTENT;
    r
}

/// `ValidatePodLogOptions` (without stream selection, which is behind a gate that is off).
fn log_option_errors(
    q: &crate::endpoints::request::Query,
) -> ApiResult<Vec<crate::error::FieldError>> {
    use crate::error::FieldError;
    let number = |key: &str| -> ApiResult<Option<i64>> {
        q.get(key)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "strconv.ParseInt: parsing {}: invalid syntax",
                        crate::error::go_quote(v)
                    ))
                })
            })
            .transpose()
    };
    let mut errs = Vec::new();
    if let Some(n) = number("tailLines")?
        && n < 0
    {
        errs.push(FieldError::invalid(
            "tailLines",
            n.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    if let Some(n) = number("limitBytes")?
        && n < 1
    {
        errs.push(FieldError::invalid(
            "limitBytes",
            n.to_string(),
            "must be greater than 0",
        ));
    }
    let since_seconds = number("sinceSeconds")?;
    if since_seconds.is_some() && q.get("sinceTime").is_some() {
        // Go's `field.NewPath("")` prints as `[]`.
        errs.push(FieldError::forbidden(
            "[]",
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        ));
    } else if let Some(n) = since_seconds
        && n < 1
    {
        errs.push(FieldError::invalid(
            "sinceSeconds",
            n.to_string(),
            "must be greater than 0",
        ));
    }
    if q.get("stream").is_some() {
        errs.push(FieldError::forbidden("stream", "may not be specified"));
    }
    Ok(errs)
}

/// The container a log, exec or attach request names (`validateContainer`): one of the pod's
/// containers, init or ephemeral containers; or, when none is named, its only container.
fn check_container(pod: &Value, name: &str, container: Option<&str>) -> ApiResult<()> {
    let names = |list: &str| -> Vec<String> {
        pod.pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (containers, init, ephemeral) = (
        names("containers"),
        names("initContainers"),
        names("ephemeralContainers"),
    );
    match container.filter(|c| !c.is_empty()) {
        Some(c) => {
            if containers
                .iter()
                .chain(&init)
                .chain(&ephemeral)
                .any(|n| n == c)
            {
                Ok(())
            } else {
                Err(ApiError::bad_request(format!(
                    "container {c} is not valid for pod {name}"
                )))
            }
        }
        None if containers.len() == 1 => Ok(()),
        None => {
            let mut message = format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            );
            if !init.is_empty() {
                message.push_str(&format!(
                    " or one of the init containers: [{}]",
                    init.join(" ")
                ));
            }
            if !ephemeral.is_empty() {
                message.push_str(&format!(
                    " or one of the ephemeral containers: [{}]",
                    ephemeral.join(" ")
                ));
            }
            Err(ApiError::bad_request(message))
        }
    }
}

/// `GET` or `POST` of a pod's `exec`, `attach` or `portforward` (`connect`): kube-apiserver
/// checks the pod and (but for `portforward`) the container, then needs the pod's node to
/// proxy to its kubelet. Without a kubelet, every such request ends in the error
/// kube-apiserver gives before it upgrades the connection: an unscheduled pod has no host.
pub(crate) fn serve_connect(t: Target<'_>, sub: &str) -> ApiResult<Response<ResponseBody>> {
    if !matches!(t.info.verb, Verb::Get | Verb::Create) {
        return Err(ApiError::method_not_allowed());
    }
    let name = t.info.name();
    let (pod, node) = pod_and_node(&t)?;
    if sub != "portforward" {
        check_container(&pod, name, t.info.query.get("container"))?;
    }
    match node {
        None => Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        ))),
        Some(node) => Err(node_without_kubelet(node)),
    }
}

/// The node a pod is scheduled to.
struct Scheduled {
    node: String,
    /// Whether that Node exists.
    known: bool,
}

/// The pod of the request and, if it is scheduled, its node.
fn pod_and_node(t: &Target<'_>) -> ApiResult<(Arc<Value>, Option<Scheduled>)> {
    let st = t.shared.state.lock();
    let pod = st
        .get(&t.res, t.info.namespace(), t.info.name())
        .ok_or_else(|| ApiError::not_found("", "pods", t.info.name()))?;
    let node_name = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let node = (!node_name.is_empty()).then(|| {
        let known = st
            .registry
            .get("", "v1", "nodes")
            .is_some_and(|nodes| st.get(&nodes, "", &node_name).is_some());
        Scheduled {
            node: node_name,
            known,
        }
    });
    Ok((pod, node))
}

/// The answer for a scheduled pod's kubelet: kube-apiserver looks the node up through the pods'
/// storage (and says so when it is missing); an existing node has no kubelet here.
fn node_without_kubelet(Scheduled { node, known }: Scheduled) -> ApiError {
    if known {
        ApiError::new(
            503,
            "ServiceUnavailable",
            format!("no kubelet serves node {node:?}: the in-memory server runs no containers"),
        )
    } else {
        ApiError::not_found("", "pods", &node)
    }
}
