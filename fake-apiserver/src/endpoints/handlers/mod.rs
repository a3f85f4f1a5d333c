//! One handler per verb, as kube-apiserver's `endpoints/handlers`: `get`, `list`, `watch`,
//! `create`, `update`, `patch`, `delete` (and `deletecollection`), plus the subresources with
//! handlers of their own (`scale`, a namespace's `finalize`, a pod's `binding` and `eviction`) and the create-only review kinds (`review`). Each reads the
//! parsed request ([`Target`]) and calls the registry operation of its verb in
//! `semantics::registry`.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, header};
use serde_json::{Value, json};

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::render::{self, Format};
use crate::endpoints::request::{Query, RequestInfo, Verb};
use crate::endpoints::response::respond;
use crate::error::{ApiError, ApiResult};
use crate::semantics::admission::{Attributes, Operation};
use crate::semantics::managed::Scope;
use crate::semantics::patch::PatchType;
use crate::semantics::registry::WriteOptions;
use crate::semantics::resources::Resource;
use crate::semantics::review::ReviewKind;
use crate::storage::predicate::{FieldSelector, Filter};

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod finalize;
pub(crate) mod get;
pub(crate) mod list;
pub(crate) mod patch;
pub(crate) mod pods;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod update;
pub(crate) mod watch;

/// A resource request on its way to its handler: the parsed request, the resource it names,
/// its decoded body and what the reactor chain left for it.
pub(crate) struct Target<'a> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) req: &'a Request<Bytes>,
    pub(crate) info: &'a RequestInfo,
    pub(crate) res: Arc<Resource>,
    pub(crate) body: Option<Value>,
    /// For a patch: its type (a patch of another media type was refused on the way in).
    pub(crate) patch_type: Option<PatchType>,
    /// Faults a watch reactor asked for.
    pub(crate) fault: watch::WatchFault,
    /// The warnings of the response's `Warning` headers (admission webhooks', field
    /// validation's): sent with whatever the request comes to, an error included, as
    /// kube-apiserver's warning recorder sends them.
    pub(crate) warnings: Arc<parking_lot::Mutex<Vec<String>>>,
}

impl Target<'_> {
    /// The body, or the 400 kube-apiserver gives a write without one.
    pub(crate) fn take_body(&mut self) -> ApiResult<Value> {
        self.body
            .take()
            .ok_or_else(|| ApiError::bad_request("the request body is empty"))
    }

    /// The options of a write with `verb`'s options kind.
    pub(crate) fn write_options(
        &self,
        verb: Verb,
        patch_type: Option<PatchType>,
    ) -> ApiResult<WriteOptions> {
        write_options(self.req, &self.info.query, verb, &self.res, patch_type)
            .map(|o| self.warned(o))
    }

    /// `opts` recording their warnings into the response's.
    fn warned(&self, opts: WriteOptions) -> WriteOptions {
        WriteOptions {
            warnings: self.warnings.clone(),
            ..opts
        }
    }

    /// [`Self::write_options`] for a body that is not the resource's own type (a `Scale`):
    /// it is scanned for duplicates and syntax only.
    pub(crate) fn write_options_for_other_body(&self, verb: Verb) -> ApiResult<WriteOptions> {
        write_options_scanning(self.req, &self.info.query, verb, &self.res, None, false)
            .map(|o| self.warned(o))
    }

    /// The representation the client asked for (`Accept`, `includeObject`).
    pub(crate) fn format(&self) -> Format {
        Format::from_accept(self.accept(), self.info.query.get("includeObject"))
    }

    pub(crate) fn accept(&self) -> &str {
        self.req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// One object in the representation the client asked for.
    pub(crate) fn object(&self, code: u16, obj: &Value) -> Response<ResponseBody> {
        let format = self.format();
        respond(
            code,
            &format.content_type(false),
            render::object_body(&self.res, obj, &format),
        )
    }

    /// This request as admission sees an `UPDATE` of `object` over `old`.
    pub(crate) fn update_attributes(
        &self,
        object: Value,
        old: Option<Value>,
        opts: &WriteOptions,
    ) -> Attributes {
        Attributes {
            operation: Operation::Update,
            res: self.res.clone(),
            subresource: self.info.path.subresource.clone(),
            namespace: self.key_namespace().to_string(),
            name: self.info.name().to_string(),
            object: Some(object),
            old_object: old,
            dry_run: opts.dry_run,
            options: admission_options(&self.info.query, "UpdateOptions"),
        }
    }

    /// The namespace under which the object is stored: `""` for cluster-scoped resources.
    pub(crate) fn key_namespace(&self) -> &str {
        if self.res.namespaced {
            self.info.namespace()
        } else {
            ""
        }
    }
}

/// Serves a resource request with its verb's handler.
pub(crate) async fn serve(t: Target<'_>) -> ApiResult<Response<ResponseBody>> {
    if t.info.verb == Verb::Watch {
        return watch::serve(t).await;
    }
    if let Some(kind) = ReviewKind::of(&t.res) {
        return review::serve(t, kind);
    }
    let scope = match t.info.path.subresource.as_deref() {
        None => Scope::Main,
        Some("status") if t.res.has_status() => {
            subresource_verb(&t.res, t.info.verb)?;
            Scope::Status
        }
        Some("scale") if t.res.subresources.iter().any(|s| s == "scale") => {
            return scale::serve(t).await;
        }
        Some("finalize")
            if t.res.builtin == Some(crate::semantics::resources::Builtin::Namespace) =>
        {
            return finalize::serve(t);
        }
        Some(sub @ ("binding" | "eviction"))
            if t.res.builtin == Some(crate::semantics::resources::Builtin::Pod) =>
        {
            return pods::serve(t, sub == "eviction").await;
        }
        Some("log") if t.res.builtin == Some(crate::semantics::resources::Builtin::Pod) => {
            return pods::serve_log(t);
        }
        Some(sub @ ("exec" | "attach" | "portforward"))
            if t.res.builtin == Some(crate::semantics::resources::Builtin::Pod) =>
        {
            return pods::serve_connect(t, sub);
        }
        // The custom resource handler answers a subresource it does not serve as the object
        // not found, whether or not the object exists.
        Some(_) if t.res.is_custom() => {
            return Err(ApiError::not_found(
                &t.res.group,
                &t.res.plural,
                t.info.name(),
            ));
        }
        Some(_) => return Err(ApiError::no_route()),
    };
    match t.info.verb {
        Verb::Get => get::serve(t).await,
        Verb::List => list::serve(t).await,
        Verb::Create => create::serve(t).await,
        Verb::Update => update::serve(t, scope).await,
        Verb::Patch => patch::serve(t, scope).await,
        Verb::Delete => delete::serve(t).await,
        // Namespaces are deleted one at a time (their registry has no deletecollection).
        Verb::DeleteCollection
            if t.res.builtin == Some(crate::semantics::resources::Builtin::Namespace) =>
        {
            Err(ApiError::method_not_allowed())
        }
        Verb::DeleteCollection => delete::serve_collection(t).await,
        Verb::Watch => watch::serve(t).await,
    }
}

/// The status and scale subresources serve `get`, `update` and `patch` only; a custom
/// resource's handler names the verb and the resource when it refuses one.
pub(crate) fn subresource_verb(res: &Resource, verb: Verb) -> ApiResult<()> {
    if matches!(verb, Verb::Get | Verb::Update | Verb::Patch) {
        return Ok(());
    }
    if res.is_custom() {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!(
                "{verb} is not supported on resources of kind {}",
                crate::error::go_quote(&res.store_key())
            ),
        )
        .with_details(json!({"group": res.group, "kind": res.plural})));
    }
    Err(ApiError::method_not_allowed())
}

/// The selection of a list, watch or deletecollection. `sharding` is the `ShardedListAndWatch`
/// feature gate: on, a non-empty `shardSelector` is parsed (kube-apiserver refuses a bad one
/// with a reason-less 500 from its storage layer, after the label and field selectors have
/// been accepted); off, it is ignored.
pub(crate) fn filter(
    res: &Resource,
    namespace: Option<&str>,
    q: &Query,
    sharding: bool,
) -> ApiResult<Filter> {
    let labels = match q.get("labelSelector") {
        // The parser's errors are Go's, word for word.
        Some(s) => kube_codegen_apimachinery::labels::Selector::parse(s)
            .map_err(|e| ApiError::bad_request(e.to_string()))?,
        None => kube_codegen_apimachinery::labels::Selector::everything(),
    };
    let fields = match q.get("fieldSelector") {
        Some(s) => FieldSelector::parse(s, res).map_err(ApiError::bad_request)?,
        None => FieldSelector::default(),
    };
    let shard = match q.get("shardSelector").filter(|s| sharding && !s.is_empty()) {
        Some(s) => Some(
            crate::storage::shard_selector::ShardSelector::parse(s)
                .map_err(|e| ApiError::new(500, "", format!("invalid shard selector: {e}")))?,
        ),
        None => None,
    };
    Ok(Filter {
        namespace: namespace.filter(|_| res.namespaced).map(str::to_string),
        labels,
        fields,
        shard,
    })
}

/// The options of a write: `verb` is `create`, `update` or `patch`; the body's duplicate
/// fields (and, for built-ins, unknown fields) are found here, from the raw bytes.
pub(crate) fn write_options(
    req: &Request<Bytes>,
    q: &Query,
    verb: Verb,
    res: &Resource,
    patch_type: Option<PatchType>,
) -> ApiResult<WriteOptions> {
    write_options_scanning(req, q, verb, res, patch_type, true)
}

/// [`write_options`]; `typed` scans a create or update body against the resource's schema.
fn write_options_scanning(
    req: &Request<Bytes>,
    q: &Query,
    verb: Verb,
    res: &Resource,
    patch_type: Option<PatchType>,
    typed: bool,
) -> ApiResult<WriteOptions> {
    let options_kind = match verb {
        Verb::Create => "CreateOptions",
        Verb::Update => "UpdateOptions",
        _ => "PatchOptions",
    };
    let field_validation =
        crate::semantics::fields::Directive::parse(q.get("fieldValidation"), options_kind)?;
    if let Some(m) = q.get("fieldManager") {
        let mut errs = Vec::new();
        if m.len() > 128 {
            errs.push(crate::error::FieldError::too_long("fieldManager", 128));
        }
        for (i, c) in m.chars().enumerate() {
            if c.is_control() {
                errs.push(crate::error::FieldError::invalid_str(
                    "fieldManager",
                    m,
                    format!("invalid character U+{:04X} (at position {i})", c as u32),
                ));
            }
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", options_kind, "", errs));
        }
    }
    let is_apply = patch_type == Some(PatchType::Apply);
    // The body is scanned whatever fieldValidation says: Ignore drops the unknown and
    // duplicate fields, but a value Go cannot decode is refused all the same.
    let body_problems = if is_apply {
        crate::semantics::fields::Problems::default()
    } else if verb == Verb::Patch || !typed {
        crate::semantics::fields::scan(req.body(), None)
    } else {
        let root = match res
            .builtin
            .and_then(crate::semantics::builtin_schema::definition_of)
        {
            Some(def) => crate::semantics::fields::builtin_root(def),
            None => crate::semantics::fields::custom_root(),
        };
        crate::semantics::fields::scan(req.body(), Some(&root))
    };
    if res.builtin.is_some()
        && let Some(e) = &body_problems.decode_error
    {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {kind}: {e}",
            crate::error::go_quote(&res.version),
            kind = res.kind
        )));
    }
    let explicit = q.get("fieldManager").filter(|m| !m.is_empty());
    let manager = match explicit {
        Some(m) => m.to_string(),
        None => req
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|ua| ua.split('/').next())
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_string(),
    };
    Ok(WriteOptions {
        dry_run: q.dry_run()?,
        manager,
        explicit_manager: explicit.is_some(),
        force: q.flag("force"),
        field_validation,
        body_problems,
        patch: verb == Verb::Patch && !is_apply,
        warnings: Default::default(),
    })
}

/// A read at resourceVersion `rv` (a request's parameter, `""` and `"0"` meaning any) that the
/// storage has not reached waits for it, as the watch cache does, at most
/// [`FUTURE_RV_WAIT`](crate::storage::store::FUTURE_RV_WAIT); the read then answers with what
/// is there (504 when still too large). Unparsable versions are the read's to refuse.
pub(crate) async fn wait_for_rv(shared: &crate::Shared, rv: &str) {
    let Ok(n) = rv.parse::<u64>() else {
        return;
    };
    let mut rx = {
        let st = shared.state.lock();
        if st.rv() >= n {
            return;
        }
        st.storage.subscribe_rv()
    };
    let reached = tokio::time::timeout(
        crate::storage::store::FUTURE_RV_WAIT,
        rx.wait_for(|v| *v >= n),
    )
    .await;
    tracing::debug!(
        rv = n,
        reached = reached.is_ok(),
        "waited for a resourceVersion"
    );
}

/// `ValidateListOptions` of kube-apiserver, for a list or a watch.
pub(crate) fn validate_list_options(q: &Query, watch: bool) -> ApiResult<()> {
    use crate::error::FieldError;
    let rv = q.get("resourceVersion").unwrap_or("");
    let rvm = q.get("resourceVersionMatch").unwrap_or("");
    let cont = q.get("continue").unwrap_or("");
    let send_initial = q.get("sendInitialEvents").is_some();
    let mut errs = Vec::new();
    if watch {
        if send_initial && rvm != "NotOlderThan" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !rvm.is_empty() {
            if !send_initial {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if rvm != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    rvm,
                    &["NotOlderThan"],
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !rvm.is_empty() {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if rvm != "Exact" && rvm != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    rvm,
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if rvm == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    ApiError::invalid_if_any("meta.k8s.io", "ListOptions", "", errs)
}

/// The options an admission review carries for a write (`CreateOptions` or `UpdateOptions`),
/// from the request's query as kube-apiserver decodes them.
pub(crate) fn admission_options(q: &Query, kind: &str) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("kind".into(), json!(kind));
    o.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    if q.get("dryRun").is_some_and(|d| d == "All") {
        o.insert("dryRun".into(), json!(["All"]));
    }
    for field in ["fieldManager", "fieldValidation"] {
        if let Some(v) = q.get(field).filter(|v| !v.is_empty()) {
            o.insert(field.into(), json!(v));
        }
    }
    Value::Object(o)
}

/// The write options of an admission step that must not be stored nor warn twice: a dry run
/// of the same write.
pub(crate) fn dry_run_of(opts: &WriteOptions) -> WriteOptions {
    WriteOptions {
        dry_run: true,
        warnings: Default::default(),
        ..opts.clone()
    }
}
