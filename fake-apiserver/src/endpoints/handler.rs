//! Request routing and dispatch: path → resource and verb, query parameters, the action
//! record and reactor chain, then the store.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::discovery;
use crate::endpoints::render::{self, Format, ListMeta};
use crate::error::{ApiError, ApiResult};
use crate::semantics::field_selector::{FieldSelector, Filter};
use crate::semantics::managed::Scope;
use crate::semantics::ops::{self, DeleteOptions, Deleted, UpdateInput, WriteOptions};
use crate::semantics::patch::PatchType;
use crate::semantics::resources::Resource;
use crate::semantics::review::{ReviewKind, ServerToken};
use crate::storage::object;
use crate::storage::state::ListOptions;
use crate::storage::watch::{self, WatchFault, WatchRequest};
use crate::testing::reactor::{Action, Reaction, WatchReaction};

/// A parsed resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
    pub(crate) watch_prefix: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Root,
    Version,
    Health,
    Api,
    Apis,
    Group(String),
    GroupVersion(String, String),
    Resource(ResourcePath),
    OpenApiV2,
    OpenApiV3Index,
    OpenApiV3(String),
    NotFound,
}

fn decode(seg: &str) -> String {
    percent_decode(seg)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn route(path: &str) -> Route {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        [] => Route::Root,
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiV3Index,
        ["openapi", "v3", rest @ ..] => Route::OpenApiV3(rest.join("/")),
        ["api"] => Route::Api,
        ["api", v] => Route::GroupVersion(String::new(), v.to_string()),
        ["api", v, rest @ ..] => resource_route("", v, rest),
        ["apis"] => Route::Apis,
        ["apis", g] => Route::Group(g.to_string()),
        ["apis", g, v] => Route::GroupVersion(g.to_string(), v.to_string()),
        ["apis", g, v, rest @ ..] => resource_route(g, v, rest),
        _ => Route::NotFound,
    }
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    let (watch_prefix, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let (namespace, rest) = match rest {
        // `/api/v1/namespaces/<name>/status` is the namespace's own subresource.
        ["namespaces", _, "status" | "finalize"] if group.is_empty() => (None, rest),
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(ns.to_string()), tail),
        _ => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some(n.to_string()), None),
        [p, n, sub] => (*p, Some(n.to_string()), Some(sub.to_string())),
        _ => return Route::NotFound,
    };
    Route::Resource(ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        plural: plural.to_string(),
        name,
        subresource,
        watch_prefix,
    })
}

fn respond(code: u16, content_type: &str, body: Vec<u8>) -> Response<ResponseBody> {
    let mut r = Response::new(ResponseBody::full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

pub(crate) fn json_response(code: u16, v: &Value) -> Response<ResponseBody> {
    respond(
        code,
        "application/json",
        serde_json::to_vec(v).unwrap_or_default(),
    )
}

pub(crate) fn error_response(e: &ApiError) -> Response<ResponseBody> {
    if e.reason == PAGE_NOT_FOUND {
        return respond(
            404,
            "text/plain; charset=utf-8",
            b"404 page not found\n".to_vec(),
        );
    }
    json_response(e.code, &e.to_status())
}

/// Marks the plain-text 404 that paths outside the built-in groups get.
const PAGE_NOT_FOUND: &str = "page not found";

/// The 404 for a path nothing serves: a JSON `Status` under the core and built-in groups, the
/// plain-text `404 page not found` elsewhere (the apiextensions server's not-found handler).
fn not_served(group: &str) -> ApiError {
    if crate::semantics::resources::is_builtin_group(group) {
        ApiError::no_route()
    } else {
        ApiError::new(404, PAGE_NOT_FOUND, "404 page not found")
    }
}

/// The 403 kube-apiserver's RBAC gives an anonymous request outside the public paths.
pub(crate) fn anonymous_forbidden(method: &Method, path: &str, query: Option<&str>) -> ApiError {
    const USER: &str = "\"system:anonymous\"";
    let method_verb = method.as_str().to_ascii_lowercase();
    match route(path) {
        Route::Resource(p) => {
            let q = Query::parse(query);
            let verb = verb_of(method, &p, &q, false).map_or(method_verb, str::to_string);
            let resource = match &p.subresource {
                Some(s) => format!("{}/{s}", p.plural),
                None => p.plural.clone(),
            };
            let scope = match &p.namespace {
                Some(ns) => format!("in the namespace {}", crate::error::go_quote(ns)),
                None => "at the cluster scope".to_string(),
            };
            let why = format!(
                "User {USER} cannot {verb} resource {} in API group {} {scope}",
                crate::error::go_quote(&resource),
                crate::error::go_quote(&p.group)
            );
            let name = p.name.clone().unwrap_or_default();
            let gr = crate::error::qualified(&p.group, &p.plural);
            let message = if name.is_empty() {
                format!("{gr} is forbidden: {why}")
            } else {
                format!("{gr} {} is forbidden: {why}", crate::error::go_quote(&name))
            };
            let mut details = serde_json::Map::new();
            if !name.is_empty() {
                details.insert("name".into(), json!(name));
            }
            if !p.group.is_empty() {
                details.insert("group".into(), json!(p.group));
            }
            details.insert("kind".into(), json!(p.plural));
            ApiError::new(403, "Forbidden", message).with_details(Value::Object(details))
        }
        _ => ApiError::new(
            403,
            "Forbidden",
            format!(
                "forbidden: User {USER} cannot {method_verb} path {}",
                crate::error::go_quote(path)
            ),
        )
        .with_details(json!({})),
    }
}

/// Query parameters.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query {
    pub(crate) pairs: Vec<(String, String)>,
}

impl Query {
    fn parse(q: Option<&str>) -> Self {
        Query {
            pairs: q
                .map(|q| {
                    form_urlencoded::parse(q.as_bytes())
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    fn flag(&self, k: &str) -> ApiResult<Option<bool>> {
        match self.get(k) {
            None => Ok(None),
            Some("true" | "1" | "True") => Ok(Some(true)),
            Some("false" | "0" | "False" | "") => Ok(Some(false)),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid value {} for boolean parameter {k}",
                crate::error::go_quote(other)
            ))),
        }
    }

    fn int(&self, k: &str) -> ApiResult<Option<i64>> {
        match self.get(k) {
            None | Some("") => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "strconv.ParseInt: parsing {}: invalid syntax",
                    crate::error::go_quote(v)
                ))
            }),
        }
    }

    fn dry_run(&self) -> ApiResult<bool> {
        let mut dry = false;
        for (k, v) in &self.pairs {
            if k == "dryRun" {
                if v == "All" {
                    dry = true;
                } else if !v.is_empty() {
                    return Err(ApiError::invalid(
                        "meta.k8s.io",
                        "CreateOptions",
                        "",
                        vec![crate::error::FieldError::not_supported(
                            "dryRun",
                            v,
                            &["All"],
                        )],
                    ));
                }
            }
        }
        Ok(dry)
    }
}

fn filter(res: &Resource, namespace: Option<&str>, q: &Query) -> ApiResult<Filter> {
    let labels = match q.get("labelSelector") {
        Some(s) => kube_codegen_apimachinery::labels::Selector::parse(s)
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?,
        None => kube_codegen_apimachinery::labels::Selector::everything(),
    };
    let fields = match q.get("fieldSelector") {
        Some(s) => FieldSelector::parse(s, res).map_err(ApiError::bad_request)?,
        None => FieldSelector::default(),
    };
    Ok(Filter {
        namespace: namespace.filter(|_| res.namespaced).map(str::to_string),
        labels,
        fields,
    })
}

fn content_type(req: &Request<Bytes>) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// Re-encodes a complete JSON response as YAML (watch streams and other types pass).
async fn to_yaml_response(resp: Response<ResponseBody>) -> Response<ResponseBody> {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v == "application/json");
    if !is_json || !resp.body().is_complete() {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = http_body_util::BodyExt::collect(body)
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    match crate::endpoints::negotiation::to_yaml(&bytes) {
        Some(y) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/yaml"),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, ResponseBody::full(y))
        }
        None => Response::from_parts(parts, ResponseBody::full(bytes)),
    }
}

/// The OpenAPI documents of the registry as it is now (rebuilt when a CRD changed it).
fn openapi_documents(shared: &Shared) -> Arc<crate::endpoints::openapi::Documents> {
    let (generation, cached) = {
        let st = shared.state.lock();
        (st.registry.generation(), shared.openapi.lock().clone())
    };
    if let Some((g, docs)) = cached
        && g == generation
    {
        return docs;
    }
    let registry = shared.state.lock().registry.clone();
    let docs = Arc::new(crate::endpoints::openapi::build(&registry));
    *shared.openapi.lock() = Some((registry.generation(), docs.clone()));
    docs
}

/// Handles any request to the fake server.
pub(crate) async fn handle(shared: Arc<Shared>, req: Request<Bytes>) -> Response<ResponseBody> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let resp = match route(&path) {
        Route::Root => json_response(
            200,
            &json!({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]}),
        ),
        Route::Version => json_response(200, &discovery::version()),
        Route::Health => respond(200, "text/plain; charset=utf-8", b"ok".to_vec()),
        Route::Api | Route::Apis
            if discovery::wants_aggregated(
                req.headers()
                    .get(header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or(""),
            ) =>
        {
            let doc = discovery::aggregated(
                &shared.state.lock().registry,
                matches!(route(&path), Route::Api),
            );
            respond(
                200,
                discovery::AGGREGATED,
                serde_json::to_vec(&doc).unwrap_or_default(),
            )
        }
        Route::Api => {
            let host = req
                .headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("127.0.0.1")
                .to_string();
            json_response(200, &discovery::api_versions(&host))
        }
        Route::Apis => {
            let doc = discovery::api_group_list(&shared.state.lock().registry);
            json_response(200, &doc)
        }
        Route::Group(g) => {
            let doc = discovery::api_group(&shared.state.lock().registry, &g);
            match doc {
                Some(d) => json_response(200, &d),
                None => error_response(&not_served(&g)),
            }
        }
        Route::GroupVersion(g, v) => {
            let doc = discovery::api_resource_list(&shared.state.lock().registry, &g, &v);
            match doc {
                Some(d) => json_response(200, &d),
                None => error_response(&not_served(&g)),
            }
        }
        Route::OpenApiV2 => {
            let docs = openapi_documents(&shared);
            respond(200, "application/json", docs.v2.clone())
        }
        Route::OpenApiV3Index => {
            let docs = openapi_documents(&shared);
            respond(200, "application/json", docs.v3_index.clone())
        }
        Route::OpenApiV3(gv) => {
            let docs = openapi_documents(&shared);
            match docs.v3.get(&gv) {
                Some(d) => respond(200, "application/json", d.clone()),
                None => {
                    let mut r = Response::new(ResponseBody::empty());
                    *r.status_mut() = StatusCode::NOT_FOUND;
                    r
                }
            }
        }
        Route::Resource(p) => {
            let accept = req
                .headers()
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let custom = shared
                .state
                .lock()
                .registry
                .get(&p.group, &p.version, &p.plural)
                .is_some_and(|r| r.is_custom());
            match crate::endpoints::negotiation::negotiate(&accept, custom) {
                Err(e) => error_response(&e),
                Ok(media) => {
                    let resp = match resource_request(shared, req, p).await {
                        Ok(r) => r,
                        Err(e) => error_response(&e),
                    };
                    if media == crate::endpoints::negotiation::Media::Yaml {
                        to_yaml_response(resp).await
                    } else {
                        resp
                    }
                }
            }
        }
        Route::NotFound => error_response(&not_served(if path.starts_with("/api/") {
            ""
        } else {
            "-"
        })),
    };
    tracing::debug!(%method, %path, status = resp.status().as_u16(), "fake api request");
    resp
}

fn verb_of(method: &Method, p: &ResourcePath, q: &Query, custom: bool) -> ApiResult<&'static str> {
    let watch = p.watch_prefix || q.flag("watch")?.unwrap_or(false);
    if custom {
        // The custom resource handler: POST to an object path creates, PUT and PATCH need a
        // name.
        match (method, &p.name) {
            (&Method::POST, Some(_)) if p.subresource.is_none() => return Ok("create"),
            (&Method::PUT | &Method::PATCH, None) => {
                return Err(ApiError::bad_request("name must be provided"));
            }
            _ => {}
        }
    }
    Ok(match (method, &p.name) {
        (&Method::GET, None) if watch => "watch",
        (&Method::GET, Some(_)) if watch => "watch",
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, None) => "create",
        (&Method::PUT, Some(_)) => "update",
        (&Method::PATCH, Some(_)) => "patch",
        (&Method::DELETE, Some(_)) => "delete",
        (&Method::DELETE, None) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    })
}

/// The options of a write: `verb` is `create`, `update` or `patch`; the body's duplicate
/// fields (and, for built-ins, unknown fields) are found here, from the raw bytes.
fn write_options(
    req: &Request<Bytes>,
    q: &Query,
    verb: &str,
    res: &Resource,
    patch_type: Option<PatchType>,
) -> ApiResult<WriteOptions> {
    let options_kind = match verb {
        "create" => "CreateOptions",
        "update" => "UpdateOptions",
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
    let body_problems =
        if field_validation == crate::semantics::fields::Directive::Ignore || is_apply {
            crate::semantics::fields::Problems::default()
        } else if verb == "patch" {
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
        && let Some(e) = &body_problems.type_error
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
        force: q.flag("force")?,
        field_validation,
        body_problems,
        patch: verb == "patch" && !is_apply,
        warnings: Default::default(),
    })
}

/// `ValidateListOptions` of kube-apiserver, for a list or a watch.
fn validate_list_options(q: &Query, watch: bool) -> ApiResult<()> {
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
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", errs))
    }
}

/// Adds a `Warning: 299 - "<message>"` header per warning.
fn with_warnings(
    mut resp: Response<ResponseBody>,
    warnings: &parking_lot::Mutex<Vec<String>>,
) -> Response<ResponseBody> {
    for w in warnings.lock().iter() {
        let value = format!("299 - {}", crate::error::go_quote(w));
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

fn delete_options(q: &Query, body: Option<&Value>) -> ApiResult<DeleteOptions> {
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
        if let Some(d) = b.get("dryRun").and_then(Value::as_array)
            && d.iter().any(|x| x == "All")
        {
            o.dry_run = true;
        }
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

async fn resource_request(
    shared: Arc<Shared>,
    req: Request<Bytes>,
    p: ResourcePath,
) -> ApiResult<Response<ResponseBody>> {
    let q = Query::parse(req.uri().query());
    let res = shared
        .state
        .lock()
        .registry
        .get(&p.group, &p.version, &p.plural);
    let custom = res.as_ref().is_some_and(|r| r.is_custom());
    let review = res.as_deref().and_then(ReviewKind::of);
    if res.as_deref().is_some_and(Resource::is_create_only) {
        // Create-only: kube-apiserver registers only `POST` on the collection.
        if p.name.is_some() || p.watch_prefix || p.subresource.is_some() {
            return Err(ApiError::no_route());
        }
        if req.method() != Method::POST {
            return Err(ApiError::method_not_allowed());
        }
    }
    let verb = verb_of(req.method(), &p, &q, custom)?;
    let ct = content_type(&req);
    let patch_type = if verb == "patch" {
        Some(PatchType::from_content_type(&ct))
    } else {
        None
    };
    let kind_name = res
        .as_ref()
        .map_or("Object", |r| r.kind.as_str())
        .to_string();
    let body = match verb {
        "create" | "update" | "patch" | "delete" | "deletecollection" => {
            if matches!(verb, "create" | "update")
                && !ct.is_empty()
                && !ct.starts_with("application/json")
                && !ct.starts_with("application/yaml")
                && !ct.starts_with("*/*")
            {
                let mut message = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf".to_string();
                if ct.starts_with("application/vnd.kubernetes.protobuf") {
                    message.push_str(" (this in-memory server decodes JSON and YAML only: set the client's content type to application/json)");
                }
                return Err(ApiError::unsupported_media_type(message));
            }
            let decoded = crate::endpoints::negotiation::decode_body(req.body(), &ct, &kind_name)?;
            // Duplicate objects merge in Go's typed decoding (built-ins, not patches).
            let typed = res.as_ref().is_some_and(|r| r.builtin.is_some());
            if typed && matches!(verb, "create" | "update") && ct.starts_with("application/json") {
                crate::endpoints::negotiation::decode_typed(req.body()).or(decoded)
            } else {
                decoded
            }
        }
        _ => None,
    };
    let action = Action {
        verb: verb.to_string(),
        group: p.group.clone(),
        version: p.version.clone(),
        resource: p.plural.clone(),
        subresource: p.subresource.clone(),
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        body: body.clone(),
        patch_type: patch_type.flatten(),
        query: q.pairs.clone(),
    };
    shared.actions.lock().push(action.clone());

    // Reactors, in order; the store is the end of the chain.
    if verb == "watch" {
        let reactors = shared.watch_reactors.read().clone();
        let mut fault = WatchFault::default();
        for r in reactors
            .iter()
            .filter(|r| action.matches("watch", &r.resource))
        {
            match (r.f)(&action) {
                WatchReaction::PassThrough => {}
                WatchReaction::Delay(d) => tokio::time::sleep(d).await,
                WatchReaction::Error(s) => {
                    return Ok(error_response(&ApiError::from_status(&s)));
                }
                WatchReaction::CutAfter(n) => {
                    fault.cut_after = Some(n);
                    break;
                }
                WatchReaction::ErrorAfter(n, s) => {
                    fault.error_after = Some((n, ApiError::from_status(&s)));
                    break;
                }
                WatchReaction::Events(events) => {
                    let Some(res) = &res else {
                        return Err(not_served(&p.group));
                    };
                    return Ok(stream_response(watch::canned(res, events)));
                }
            }
        }
        let Some(res) = res else {
            return Err(not_served(&p.group));
        };
        check_scope(&res, &p, verb)?;
        return watch_request(shared, &req, &q, res, &p, fault);
    }
    let reactors = shared.reactors.read().clone();
    for r in reactors
        .iter()
        .filter(|r| action.matches(&r.verb, &r.resource))
    {
        match (r.f)(&action) {
            Reaction::PassThrough => {}
            Reaction::Delay(d) => {
                tracing::debug!(verb, resource = %p.plural, delay = ?d, "reactor delays the request");
                tokio::time::sleep(d).await
            }
            Reaction::Object(v) => return Ok(json_response(200, &v)),
            Reaction::Response { code, body } => return Ok(json_response(code, &body)),
            Reaction::Error(s) => return Ok(error_response(&ApiError::from_status(&s))),
        }
    }
    let Some(res) = res else {
        return Err(not_served(&p.group));
    };
    check_scope(&res, &p, verb)?;
    if let Some(kind) = review {
        let body = body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?;
        let opts = write_options(&req, &q, verb, &res, None)?;
        let server_token = req.extensions().get::<ServerToken>().map(|t| t.0.clone());
        let ctx = crate::semantics::review::Context {
            server_token: server_token.as_deref(),
            url_namespace: p.namespace.as_deref().unwrap_or(""),
            manager: &opts.manager,
        };
        let answer = crate::semantics::review::create(kind, &res, body, &ctx)?;
        return Ok(with_warnings(json_response(201, &answer), &opts.warnings));
    }
    let scope = match p.subresource.as_deref() {
        None => Scope::Main,
        Some("status") if res.has_status() => {
            if !matches!(verb, "get" | "update" | "patch") {
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
                return Err(ApiError::method_not_allowed());
            }
            Scope::Status
        }
        Some("scale") if res.subresources.iter().any(|s| s == "scale") => {
            let ns = p.namespace.clone().unwrap_or_default();
            let name = p.name.clone().unwrap_or_default();
            return scale_request(&shared, &req, &q, &res, verb, &ns, &name, body, patch_type);
        }
        // The custom resource handler looks the object up first.
        Some(_) if res.is_custom() => {
            let st = shared.state.lock();
            let key_ns = p.namespace.as_deref().unwrap_or("");
            let name = p.name.as_deref().unwrap_or("");
            return Err(match st.get(&res, key_ns, name) {
                None => ApiError::not_found(&res.group, &res.plural, name),
                Some(_) => not_served(&res.group),
            });
        }
        Some(_) => return Err(ApiError::no_route()),
    };
    let format = Format::from_accept(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
        q.get("includeObject"),
    );
    let ns = p.namespace.clone().unwrap_or_default();
    let name = p.name.clone().unwrap_or_default();
    let one = |code: u16, obj: &Value| {
        respond(
            code,
            &format.content_type(false),
            render::object_body(&res, obj, &format),
        )
    };
    match verb {
        "get" => {
            let st = shared.state.lock();
            let key_ns = if res.namespaced { ns.as_str() } else { "" };
            match st.get(&res, key_ns, &name) {
                Some(obj) => Ok(one(200, &obj)),
                None => Err(ApiError::not_found(&res.group, &res.plural, &name)),
            }
        }
        "list" => {
            validate_list_options(&q, false)?;
            let opts = ListOptions {
                filter: filter(&res, p.namespace.as_deref(), &q)?,
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
            let page = shared.state.lock().list(&res, &opts)?;
            let meta = ListMeta {
                resource_version: page.resource_version,
                continue_token: page.continue_token,
                remaining: page.remaining,
            };
            Ok(respond(
                200,
                &format.content_type(true),
                render::list_body(&res, &page.items, &meta, &format),
            ))
        }
        "create" => {
            let body = body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?;
            if !object::resource_version(&body).is_empty() {
                return Err(ApiError::new(
                    500,
                    "",
                    "resourceVersion should not be set on objects to be created",
                ));
            }
            let opts = write_options(&req, &q, verb, &res, None)?;
            let obj = {
                let mut st = shared.state.lock();
                ops::create(&mut st, &res, &ns, body, &opts, ops::CreateFlags::default())?
            };
            Ok(with_warnings(one(201, &obj), &opts.warnings))
        }
        "update" => {
            let body = body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?;
            let opts = write_options(&req, &q, verb, &res, None)?;
            let (obj, created) = {
                let mut st = shared.state.lock();
                ops::update(
                    &mut st,
                    &res,
                    &ns,
                    &name,
                    UpdateInput {
                        body,
                        scope,
                        managed_done: false,
                        is_put: true,
                    },
                    &opts,
                )?
            };
            Ok(with_warnings(
                one(if created { 201 } else { 200 }, &obj),
                &opts.warnings,
            ))
        }
        "patch" => {
            let Some(Some(ptype)) = patch_type else {
                return Err(crate::semantics::patch::unsupported_patch(&res));
            };
            let body = body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?;
            let opts = write_options(&req, &q, verb, &res, Some(ptype))?;
            let (obj, created) = {
                let mut st = shared.state.lock();
                ops::patch(&mut st, &res, &ns, &name, ptype, &body, scope, &opts)?
            };
            Ok(with_warnings(
                one(if created { 201 } else { 200 }, &obj),
                &opts.warnings,
            ))
        }
        "delete" => {
            let opts = delete_options(&q, body.as_ref())?;
            let outcome = {
                let mut st = shared.state.lock();
                ops::delete(&mut st, &res, &ns, &name, &opts)?
            };
            Ok(match outcome {
                Deleted::Pending(obj) => one(200, &obj),
                Deleted::Gone(obj) if res.returns_deleted_object() => one(200, &obj),
                Deleted::Gone(obj) => {
                    let mut details = serde_json::Map::new();
                    details.insert("name".into(), json!(object::name(&obj)));
                    if !res.group.is_empty() {
                        details.insert("group".into(), json!(res.group));
                    }
                    details.insert("kind".into(), json!(res.plural));
                    details.insert("uid".into(), json!(object::uid(&obj)));
                    json_response(
                        200,
                        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Success", "details": details}),
                    )
                }
            })
        }
        "deletecollection" => {
            let opts = delete_options(&q, body.as_ref())?;
            let f = filter(&res, p.namespace.as_deref(), &q)?;
            let (rv, items) = {
                let mut st = shared.state.lock();
                ops::delete_collection(&mut st, &res, &f, &opts)?
            };
            let items: Vec<Arc<Value>> = items.into_iter().map(Arc::new).collect();
            let meta = ListMeta {
                resource_version: rv,
                continue_token: None,
                remaining: None,
            };
            Ok(respond(
                200,
                "application/json",
                render::list_body(&res, &items, &meta, &Format::Full),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `GET`, `PUT` and `PATCH` of `<object>/scale`: an `autoscaling/v1` `Scale` read from and
/// written to the object's replicas.
#[allow(clippy::too_many_arguments)] // the request's parts
fn scale_request(
    shared: &Shared,
    req: &Request<Bytes>,
    q: &Query,
    res: &Arc<Resource>,
    verb: &str,
    ns: &str,
    name: &str,
    body: Option<Value>,
    patch_type: Option<Option<PatchType>>,
) -> ApiResult<Response<ResponseBody>> {
    use crate::semantics::scale;
    let key_ns = if res.namespaced { ns } else { "" };
    let scale_body = |obj: &Value| {
        respond(
            200,
            "application/json",
            serde_json::to_vec(&scale::to_scale(res, obj)).unwrap_or_default(),
        )
    };
    let mut st = shared.state.lock();
    let Some(current) = st.get(res, key_ns, name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let wanted = match verb {
        "get" => return Ok(scale_body(&current)),
        "update" => body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?,
        "patch" => {
            let patch = body.ok_or_else(|| ApiError::bad_request("the request body is empty"))?;
            let doc = scale::to_scale(res, &current);
            match patch_type.flatten() {
                Some(PatchType::Json) => crate::semantics::patch::json_patch(&doc, &patch)?,
                Some(_) => crate::semantics::patch::merge_patch(&doc, &patch)?,
                None => return Err(crate::semantics::patch::unsupported_patch(res)),
            }
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let new = scale::with_replicas(res, &current, &wanted)?;
    let mut opts = write_options(req, q, "update", res, None)?;
    // The body is a Scale, not the object: nothing in it is unknown to the object.
    opts.body_problems = Default::default();
    let (obj, _) = ops::update(
        &mut st,
        res,
        ns,
        name,
        UpdateInput {
            body: new,
            scope: Scope::Main,
            managed_done: false,
            is_put: false,
        },
        &opts,
    )?;
    Ok(with_warnings(scale_body(&obj), &opts.warnings))
}

/// Namespaced resources need a namespace for object requests; cluster-scoped ones refuse one.
fn check_scope(res: &Resource, p: &ResourcePath, verb: &str) -> ApiResult<()> {
    if res.namespaced {
        if p.namespace.is_none() && !matches!(verb, "list" | "watch") {
            return Err(if p.name.is_some() || res.is_custom() {
                not_served(&res.group)
            } else {
                ApiError::method_not_allowed()
            });
        }
    } else if p.namespace.is_some() {
        return Err(not_served(&p.group));
    }
    Ok(())
}

fn stream_response(rx: tokio::sync::mpsc::Receiver<Bytes>) -> Response<ResponseBody> {
    let mut r = Response::new(ResponseBody::stream(rx));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache, private"),
    );
    r
}

fn watch_request(
    shared: Arc<Shared>,
    req: &Request<Bytes>,
    q: &Query,
    res: Arc<Resource>,
    p: &ResourcePath,
    fault: WatchFault,
) -> ApiResult<Response<ResponseBody>> {
    validate_list_options(q, true)?;
    let mut f = filter(&res, p.namespace.as_deref(), q)?;
    if let Some(name) = &p.name {
        // `/watch/.../<name>`: a watch of one object.
        f.fields
            .terms
            .push(crate::semantics::field_selector::FieldTerm {
                label: "metadata.name".into(),
                path: "metadata.name".into(),
                value: name.clone(),
                negate: false,
            });
    }
    let format = match Format::from_accept(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
        None,
    ) {
        Format::Metadata => Format::Metadata,
        _ => Format::Full,
    };
    let timeout = q
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map(|t| Duration::from_secs(u64::try_from(t).unwrap_or(0)));
    let wr = WatchRequest {
        res,
        filter: f,
        resource_version: q.get("resourceVersion").map(str::to_string),
        allow_bookmarks: q.flag("allowWatchBookmarks")?.unwrap_or(false),
        send_initial_events: q.flag("sendInitialEvents")?,
        timeout,
        format,
        fault,
    };
    let rx = watch::start(shared, wr)?;
    Ok(stream_response(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match route(path) {
            Route::Resource(p) => p,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn routes() {
        let p = res("/apis/crddemo.k8s.io/v1/namespaces/ns/mydemos/x/status");
        assert_eq!(p.group, "crddemo.k8s.io");
        assert_eq!(p.namespace.as_deref(), Some("ns"));
        assert_eq!(p.name.as_deref(), Some("x"));
        assert_eq!(p.subresource.as_deref(), Some("status"));
        let p = res("/apis/crddemo.k8s.io/v1/mydemos");
        assert_eq!(p.namespace, None);
        let p = res("/api/v1/namespaces/foo");
        assert_eq!(
            (p.plural.as_str(), p.name.as_deref()),
            ("namespaces", Some("foo"))
        );
        let p = res("/api/v1/namespaces/foo/status");
        assert_eq!(p.plural, "namespaces");
        assert_eq!(p.subresource.as_deref(), Some("status"));
        let p = res("/api/v1/namespaces/foo/pods");
        assert_eq!(
            (p.namespace.as_deref(), p.plural.as_str()),
            (Some("foo"), "pods")
        );
        let p = res("/api/v1/watch/namespaces/foo/pods/p");
        assert!(p.watch_prefix);
        assert_eq!(route("/apis"), Route::Apis);
        assert_eq!(
            route("/api/v1"),
            Route::GroupVersion(String::new(), "v1".into())
        );
        assert_eq!(route("/openapi/v2"), Route::OpenApiV2);
        assert_eq!(
            route("/openapi/v3/apis/apps/v1"),
            Route::OpenApiV3("apis/apps/v1".into())
        );
        assert_eq!(route("/api/v1/a/b/c/d"), Route::NotFound);
        assert_eq!(percent_decode("a%3Ab"), "a:b");
    }
}
