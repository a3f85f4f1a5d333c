//! `delete` of one object (gone, or pending on finalizers or graceful deletion) and
//! `deletecollection`, with kube-apiserver's `DeleteOptions`.

use std::sync::Arc;

use http::Response;
use serde_json::{Value, json};

use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, filter};
use crate::endpoints::render::{self, Format, ListMeta};
use crate::endpoints::request::Query;
use crate::endpoints::response::{json_response, respond};
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::{self, Attributes, Operation};
use crate::semantics::registry::{self, DeleteOptions, Deleted};
use crate::storage::object;
use crate::storage::predicate::Filter;
use crate::storage::store::ListOptions;

pub(crate) async fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let opts = delete_options(&t.info.query, t.body.as_ref())?;
    admit(&t, &opts).await?;
    let outcome = {
        let mut st = t.shared.state.lock();
        registry::delete(&mut st, &t.res, t.info.namespace(), t.info.name(), &opts)?
    };
    Ok(match outcome {
        Deleted::Pending(obj) => t.object(200, &obj),
        Deleted::Gone(obj) if t.res.returns_deleted_object() => t.object(200, &obj),
        Deleted::Gone(obj) => {
            let mut details = serde_json::Map::new();
            details.insert("name".into(), json!(object::name(&obj)));
            if !t.res.group.is_empty() {
                details.insert("group".into(), json!(t.res.group));
            }
            details.insert("kind".into(), json!(t.res.plural));
            details.insert("uid".into(), json!(object::uid(&obj)));
            json_response(
                200,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Success", "details": details}),
            )
        }
    })
}

pub(crate) async fn serve_collection(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    let opts = delete_options(&t.info.query, t.body.as_ref())?;
    let sharding = t.shared.state.lock().config.sharded_list_and_watch;
    let f = filter(
        &t.res,
        t.info.path.namespace.as_deref(),
        &t.info.query,
        sharding,
    )?;
    let (rv, items) = match admit_collection(&t, &f, &opts).await? {
        Some(done) => done,
        None => {
            let mut st = t.shared.state.lock();
            registry::delete_collection(&mut st, &t.res, &f, &opts)?
        }
    };
    let items: Vec<Arc<Value>> = items.into_iter().map(Arc::new).collect();
    let meta = ListMeta {
        shard_selector: f.shard.as_ref().map(|s| s.canonical()),
        resource_version: rv,
        continue_token: None,
        remaining: None,
    };
    Ok(respond(
        200,
        "application/json",
        render::list_body(&t.res, &items, &meta, &Format::Full),
    ))
}

/// `deletecollection` when admission webhooks or policies are registered, as kube-apiserver's
/// registry does it (one delete worker): the mutating webhooks see the collection once (no
/// name, no object), then the listed objects are deleted in order, each once the validating
/// policies and webhooks allowed its DELETE; the first refusal answers, the objects deleted
/// before it stay deleted. `None` when nothing is registered.
async fn admit_collection(
    t: &Target<'_>,
    f: &Filter,
    opts: &DeleteOptions,
) -> ApiResult<Option<(u64, Vec<Value>)>> {
    let (adm, page) = {
        let st = t.shared.state.lock();
        let Some(adm) = admission::prepare(&st, &t.res, t.info.namespace()) else {
            return Ok(None);
        };
        let page = st.list(
            &t.res,
            &ListOptions {
                filter: f.clone(),
                ..ListOptions::default()
            },
        )?;
        (adm, page)
    };
    let mut collection = delete_attributes(t, opts, t.key_namespace(), "", None);
    adm.mutate(&mut collection, &t.warnings).await?;
    let mut out = Vec::new();
    for o in page.items {
        let ns = object::namespace(&o).to_string();
        // A collection across namespaces: each object's namespace is its own.
        let own = if ns == t.key_namespace() {
            None
        } else {
            admission::prepare(&t.shared.state.lock(), &t.res, &ns)
        };
        // As kube-apiserver's: the request's attributes (no name), the object as the old one.
        let attrs = delete_attributes(t, opts, &ns, "", Some((*o).clone()));
        own.as_ref()
            .unwrap_or(&adm)
            .validate(&attrs, &t.warnings)
            .await?;
        let mut st = t.shared.state.lock();
        match registry::delete(&mut st, &t.res, &ns, object::name(&o), opts) {
            Ok(_) => out.push((*o).clone()),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some((page.resource_version, out)))
}

/// Admission webhooks, when any is registered: a DELETE with the stored object as the old
/// one (a missing object is the registry's 404).
async fn admit(t: &Target<'_>, opts: &DeleteOptions) -> ApiResult<()> {
    let (adm, old) = {
        let st = t.shared.state.lock();
        let Some(adm) = admission::prepare(&st, &t.res, t.info.namespace()) else {
            return Ok(());
        };
        let Some(old) = st.get(&t.res, t.key_namespace(), t.info.name()) else {
            return Ok(());
        };
        (adm, old)
    };
    let mut attrs = delete_attributes(
        t,
        opts,
        t.key_namespace(),
        t.info.name(),
        Some((*old).clone()),
    );
    adm.mutate(&mut attrs, &t.warnings).await?;
    adm.validate(&attrs, &t.warnings).await?;
    Ok(())
}

/// A DELETE as admission sees it, with the `DeleteOptions` of the review.
fn delete_attributes(
    t: &Target<'_>,
    opts: &DeleteOptions,
    namespace: &str,
    name: &str,
    old: Option<Value>,
) -> Attributes {
    let mut options = serde_json::Map::new();
    options.insert("kind".into(), json!("DeleteOptions"));
    options.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    if let Some(g) = opts.grace_period_seconds {
        options.insert("gracePeriodSeconds".into(), json!(g));
    }
    let mut pre = serde_json::Map::new();
    if let Some(u) = &opts.uid {
        pre.insert("uid".into(), json!(u));
    }
    if let Some(rv) = &opts.resource_version {
        pre.insert("resourceVersion".into(), json!(rv));
    }
    if !pre.is_empty() {
        options.insert("preconditions".into(), Value::Object(pre));
    }
    if let Some(p) = &opts.propagation {
        options.insert("propagationPolicy".into(), json!(p));
    }
    if opts.dry_run {
        options.insert("dryRun".into(), json!(["All"]));
    }
    Attributes {
        operation: Operation::Delete,
        res: t.res.clone(),
        subresource: None,
        namespace: namespace.to_string(),
        name: name.to_string(),
        object: None,
        old_object: old,
        dry_run: opts.dry_run,
        options: Value::Object(options),
    }
}

/// The options of a delete, from the query and the body (`DeleteOptions`).
pub(crate) fn delete_options(q: &Query, body: Option<&Value>) -> ApiResult<DeleteOptions> {
    let mut orphan = q.flag("orphanDependents");
    let mut o = DeleteOptions {
        dry_run: q.dry_run()?,
        grace_period_seconds: q.int("gracePeriodSeconds")?,
        propagation: q.get("propagationPolicy").map(str::to_string),
        ..DeleteOptions::default()
    };
    if let Some(b) = body {
        if let Some(uid) = b.pointer("/preconditions/uid").and_then(Value::as_str) {
            o.uid = Some(uid.to_string());
        }
        if let Some(rv) = b
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
        {
            o.resource_version = Some(rv.to_string());
        }
        if let Some(p) = b.get("propagationPolicy").and_then(Value::as_str) {
            o.propagation = Some(p.to_string());
        }
        if let Some(g) = b.get("gracePeriodSeconds").and_then(Value::as_i64) {
            o.grace_period_seconds = Some(g);
        }
        if let Some(b) = b.get("orphanDependents").and_then(Value::as_bool) {
            orphan = Some(b);
        }
        if let Some(d) = b.get("dryRun").and_then(Value::as_array)
            && d.iter().any(|x| x == "All")
        {
            o.dry_run = true;
        }
    }
    // The deprecated `orphanDependents` is the Orphan (true) or Background (false) policy,
    // and may not come with a policy of its own (kube-apiserver's `ValidateDeleteOptions`).
    if let Some(orphan) = orphan {
        if let Some(p) = &o.propagation {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                vec![crate::error::FieldError::invalid_str(
                    "propagationPolicy",
                    p,
                    "orphanDependents and deletionPropagation cannot be both set",
                )],
            ));
        }
        o.propagation = Some(if orphan { "Orphan" } else { "Background" }.to_string());
    }
    if let Some(p) = &o.propagation
        && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
    {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![crate::error::FieldError::not_supported(
                "propagationPolicy",
                p,
                &["Background", "Foreground", "Orphan", "nil"],
            )],
        ));
    }
    Ok(o)
}
