//! A request's way in: the route its path names, the non-resource paths (discovery, OpenAPI,
//! health, version), and for a resource request the parse into a [`RequestInfo`], the body's
//! decoding, the action record and reactor chain, then the verb's handler in `handlers/`.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::discovery;
use crate::endpoints::handlers::watch::WatchFault;
use crate::endpoints::handlers::{self, Target};
use crate::endpoints::negotiation::{Document, Media};
use crate::endpoints::protobuf;
use crate::endpoints::request::{Query, RequestInfo, ResourcePath, Route, Verb, route};
use crate::endpoints::response::{
    error_response, json_response, not_served, respond, stream_response, to_yaml_response,
};
use crate::error::{ApiError, ApiResult};
use crate::semantics::patch::PatchType;
use crate::semantics::resources::Resource;
use crate::testing::reactor::{Action, Reaction, WatchReaction};

/// The 403 kube-apiserver's RBAC gives an anonymous request outside the public paths.
pub(crate) fn anonymous_forbidden(method: &Method, path: &str, query: Option<&str>) -> ApiError {
    const USER: &str = "\"system:anonymous\"";
    let method_verb = method.as_str().to_ascii_lowercase();
    match route(path) {
        Route::Resource(p) => {
            let q = Query::parse(query);
            let verb = Verb::of(method, &p, &q, false).map_or(method_verb, |v| v.to_string());
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

fn content_type(req: &Request<Bytes>) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
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

/// Handles any request to the fake server: from the recording it replays, if any, otherwise
/// from the state; and records the answer, if recording.
pub(crate) async fn handle(shared: Arc<Shared>, req: Request<Bytes>) -> Response<ResponseBody> {
    let pending = shared.recorder.as_ref().map(|r| r.begin(&req));
    let resp = match &shared.replay {
        Some(replay) => replay.answer(&req),
        None => answer(shared.clone(), req).await,
    };
    match (&shared.recorder, pending) {
        (Some(r), Some(p)) => r.finish(p, resp),
        _ => resp,
    }
}

/// Answers a request from the server's state.
async fn answer(shared: Arc<Shared>, req: Request<Bytes>) -> Response<ResponseBody> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let req_user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let query = req.uri().query().map(str::to_string);
    // kube-apiserver serves `/version`, `/api` and each group-version's resource list to `GET`
    // only (`/apis` and `/apis/<group>` answer any method).
    if method != Method::GET
        && matches!(
            route(&path),
            Route::Version | Route::Api | Route::GroupVersion(..)
        )
    {
        return error_response(&ApiError::method_not_allowed());
    }
    let document = match route(&path) {
        Route::Api | Route::Group(_) | Route::GroupVersion(..) => Some(Document::Legacy),
        Route::Apis => Some(Document::GroupList),
        Route::Version => Some(Document::Version),
        _ => None,
    };
    let mut document_yaml = false;
    if let Some(doc) = document {
        match crate::endpoints::negotiation::negotiate_document(&accept, doc) {
            Ok(media) => document_yaml = media == Media::Yaml,
            Err(e) => return error_response(&e),
        }
    }
    let resp = match route(&path) {
        Route::Root => json_response(
            200,
            &json!({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]}),
        ),
        Route::Version => json_response(200, &discovery::version()),
        Route::Health { endpoint, check } => health(&endpoint, &check, query.as_deref()),
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
        Route::OpenApiV2 | Route::OpenApiV3(_)
            if !crate::endpoints::negotiation::accepts_json_document(&accept) =>
        {
            let mut r = Response::new(ResponseBody::empty());
            *r.status_mut() = StatusCode::NOT_ACCEPTABLE;
            r
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
            let served = shared
                .state
                .lock()
                .registry
                .get(&p.group, &p.version, &p.plural);
            let custom = served.as_ref().is_some_and(|r| r.is_custom());
            // A deprecated version of a custom resource warns on every request to it, answered
            // or refused, as kube-apiserver's deprecation filter does.
            let deprecation = served.as_ref().and_then(|r| r.deprecation_warning());
            let streaming = p.name.is_none() && req.method() == Method::GET;
            let q = Query::parse(req.uri().query());
            let is_watch = q.watches(&p);
            let read_check = match served.as_ref().map(|r| r.kind.clone()) {
                Some(kind)
                    if req.method() == Method::GET && p.subresource.is_none() && !is_watch =>
                {
                    crate::endpoints::render::Format::check_read(
                        &accept,
                        q.get("includeObject"),
                        &p.group,
                        &kind,
                        custom,
                        p.name.is_none(),
                    )
                }
                _ => Ok(()),
            };
            let negotiated = read_check.and_then(|()| {
                crate::endpoints::negotiation::negotiate(&accept, custom, streaming)
            });
            match negotiated {
                Err(e) => error_response(&e),
                Ok(media) => {
                    let resp = match resource_request(shared, req, p).await {
                        Ok(r) => r,
                        Err(e) => error_response(&e),
                    };
                    let resp = match deprecation {
                        Some(w) => crate::endpoints::response::with_warnings(
                            resp,
                            &parking_lot::Mutex::new(vec![w]),
                        ),
                        None => resp,
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
    let resp = if document_yaml {
        to_yaml_response(resp).await
    } else {
        resp
    };
    let user_agent = req_user_agent;
    let resp = if crate::endpoints::response::wants_pretty(query.as_deref(), &user_agent) {
        crate::endpoints::response::to_pretty_response(resp).await
    } else {
        resp
    };
    tracing::debug!(%method, %path, status = resp.status().as_u16(), "fake api request");
    resp
}

async fn resource_request(
    shared: Arc<Shared>,
    req: Request<Bytes>,
    path: ResourcePath,
) -> ApiResult<Response<ResponseBody>> {
    let query = Query::parse(req.uri().query());
    let res = shared
        .state
        .lock()
        .registry
        .get(&path.group, &path.version, &path.plural);
    if res.as_deref().is_some_and(Resource::is_create_only) {
        // Create-only: kube-apiserver registers only `POST` on the collection.
        if path.name.is_some() || path.watch_prefix || path.subresource.is_some() {
            return Err(ApiError::no_route());
        }
        if req.method() != Method::POST {
            return Err(ApiError::method_not_allowed());
        }
    }
    let custom = res.as_ref().is_some_and(|r| r.is_custom());
    let verb = Verb::of(req.method(), &path, &query, custom)?;
    let info = RequestInfo { path, query, verb };
    let ct = content_type(&req);
    // A patch's media type names its type; any other is refused before the body is read, as
    // kube-apiserver's router refuses it (a resource it does not serve has no route: 404).
    let patch_type = match verb {
        Verb::Patch if res.is_some() => Some(
            PatchType::from_content_type(&ct)
                .ok_or_else(|| ApiError::unsupported_media_type("415: Unsupported Media Type"))?,
        ),
        _ => None,
    };
    let body = if verb.has_body() {
        decode_body(&req, verb, res.as_deref(), &ct)?
    } else {
        None
    };
    let action = Action {
        verb: verb.to_string(),
        group: info.path.group.clone(),
        version: info.path.version.clone(),
        resource: info.path.plural.clone(),
        subresource: info.path.subresource.clone(),
        namespace: info.path.namespace.clone(),
        name: info.path.name.clone(),
        body: body.clone(),
        patch_type,
        query: info.query.pairs.clone(),
    };
    shared.actions.lock().push(action.clone(), req.body().len());

    // Reactors, in order; the store is the end of the chain.
    let fault = match react(&shared, &action, res.as_deref()).await {
        Chain::Next(fault) => fault,
        Chain::Answered(resp) => return Ok(resp),
        Chain::Failed(e) => return Err(e),
    };
    let Some(res) = res else {
        return Err(not_served(&info.path.group));
    };
    check_scope(&res, &info)?;
    let writes = !matches!(verb, Verb::Get | Verb::List | Verb::Watch);
    let warnings: Arc<parking_lot::Mutex<Vec<String>>> = Arc::default();
    let answer = handlers::serve(Target {
        shared: shared.clone(),
        req: &req,
        info: &info,
        res,
        body,
        patch_type,
        fault,
        warnings: warnings.clone(),
    })
    .await;
    // The warnings go with the answer, whether it succeeds or fails.
    let answer = if warnings.lock().is_empty() {
        answer
    } else {
        let resp = answer.unwrap_or_else(|e| crate::endpoints::response::error_response(&e));
        Ok(crate::endpoints::response::with_warnings(resp, &warnings))
    };
    // kube-controller-manager's controllers react to what the write stored (after its
    // answer is made, as theirs come after the API server's).
    if writes {
        shared.run_controllers();
    }
    answer
}

/// The request body decoded by its content type; built-in objects created or replaced from
/// JSON decode as Go's typed decoding does (duplicate objects merge), and built-in objects sent
/// as protobuf (client-go's typed clients, kubectl's generators) are read into the JSON Go
/// writes for them.
fn decode_body(
    req: &Request<Bytes>,
    verb: Verb,
    res: Option<&Resource>,
    ct: &str,
) -> ApiResult<Option<Value>> {
    let replaces = matches!(verb, Verb::Create | Verb::Update);
    // Custom resources have no protobuf encoding (kube-apiserver: 415); resources registered
    // from generated code for built-in kinds (the review kinds) do.
    let encoded =
        res.is_none_or(|r| !r.is_custom() || protobuf::has_encoding(&r.api_version(), &r.kind));
    if protobuf::is_protobuf(ct) && verb != Verb::Patch && encoded {
        if req.body().is_empty() {
            return Ok(None);
        }
        let expected = match (verb, res) {
            (Verb::Create | Verb::Update, Some(r)) => r.kind.as_str(),
            _ => "DeleteOptions",
        };
        return protobuf::decode(req.body())
            .map(Some)
            .map_err(|e| protobuf_error(&e, req.body(), replaces, expected));
    }
    if replaces
        && !ct.is_empty()
        && !ct.starts_with("application/json")
        && !ct.starts_with("application/yaml")
        && !ct.starts_with("*/*")
    {
        let accepted = if !encoded {
            "application/json, application/yaml"
        } else {
            "application/json, application/yaml, application/vnd.kubernetes.protobuf"
        };
        return Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: {accepted}"
        )));
    }
    let kind = res.map_or("Object", |r| r.kind.as_str());
    let decoded = crate::endpoints::negotiation::decode_body(req.body(), ct, kind)?;
    let typed = res.is_some_and(|r| r.builtin.is_some());
    Ok(if typed && replaces && ct.starts_with("application/json") {
        crate::endpoints::negotiation::decode_typed(req.body()).or(decoded)
    } else {
        decoded
    })
}

/// kube-apiserver's 400 for a protobuf body that does not decode as `expected` (the kind a
/// create or update writes, or `DeleteOptions`).
fn protobuf_error(
    e: &protobuf::ProtobufError,
    body: &[u8],
    replaces: bool,
    expected: &str,
) -> ApiError {
    use protobuf::ProtobufError as E;
    let message = match e {
        E::NoEnvelope | E::EmptyBody if replaces => format!(
            "the object provided is unrecognized (must be of type {expected}): {e} ({})",
            crate::endpoints::negotiation::summarize(body)
        ),
        E::NoEnvelope | E::EmptyBody => e.to_string(),
        E::UnknownKind { api_version, kind } => {
            format!("{kind} in version {api_version:?} cannot be handled as a {expected}: {e}")
        }
        E::Malformed {
            api_version,
            kind,
            path,
            cause,
        } => {
            // Go's words for a message cut short name no field; other causes say where.
            let at = if cause == "unexpected EOF" {
                String::new()
            } else {
                format!(" (at {path})")
            };
            format!(
                "{kind} in version {api_version:?} cannot be handled as a {expected}: {cause}{at}"
            )
        }
    };
    ApiError::bad_request(message)
}

/// Where the reactor chain left a request.
enum Chain {
    /// On to the store, with the faults a watch reactor asked for.
    Next(WatchFault),
    /// A reactor answered.
    Answered(Response<ResponseBody>),
    /// A reactor answered with events for a resource nothing serves.
    Failed(ApiError),
}

/// Runs the reactors registered for the action, in order.
async fn react(shared: &Shared, action: &Action, res: Option<&Resource>) -> Chain {
    let mut fault = WatchFault::default();
    if action.verb == Verb::Watch.as_str() {
        let reactors = shared.watch_reactors.read().clone();
        for r in reactors
            .iter()
            .filter(|r| action.matches("watch", &r.resource))
        {
            match (r.f)(action) {
                WatchReaction::PassThrough => {}
                WatchReaction::Delay(d) => tokio::time::sleep(d).await,
                WatchReaction::Error(s) => {
                    return Chain::Answered(error_response(&ApiError::from_status(&s)));
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
                    return match res {
                        Some(res) => {
                            Chain::Answered(stream_response(handlers::watch::canned(res, events)))
                        }
                        None => Chain::Failed(not_served(&action.group)),
                    };
                }
            }
        }
        return Chain::Next(fault);
    }
    let reactors = shared.reactors.read().clone();
    for r in reactors
        .iter()
        .filter(|r| action.matches(&r.verb, &r.resource))
    {
        match (r.f)(action) {
            Reaction::PassThrough => {}
            Reaction::Delay(d) => {
                tracing::debug!(verb = %action.verb, resource = %action.resource, delay = ?d, "reactor delays the request");
                tokio::time::sleep(d).await
            }
            Reaction::Object(v) => return Chain::Answered(json_response(200, &v)),
            Reaction::Response { code, body } => {
                return Chain::Answered(json_response(code, &body));
            }
            Reaction::Error(s) => {
                return Chain::Answered(error_response(&ApiError::from_status(&s)));
            }
        }
    }
    Chain::Next(fault)
}

/// Namespaced resources need a namespace for object requests; cluster-scoped ones refuse one.
fn check_scope(res: &Resource, info: &RequestInfo) -> ApiResult<()> {
    let p = &info.path;
    if res.namespaced {
        if p.namespace.is_none() && !matches!(info.verb, Verb::List | Verb::Watch) {
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

/// The checks the fake reports, by endpoint: the in-memory store stands for etcd, and the
/// server is ready and live as soon as it answers.
fn health_checks(endpoint: &str) -> &'static [&'static str] {
    match endpoint {
        "readyz" => &[
            "ping",
            "log",
            "etcd",
            "etcd-readiness",
            "informer-sync",
            "shutdown",
        ],
        _ => &["ping", "log", "etcd"],
    }
}

/// `/healthz`, `/livez`, `/readyz` as kube-apiserver answers them: `ok`, the checks one per
/// line with `?verbose`, one check by its path, and 404 for a check it does not have.
fn health(endpoint: &str, check: &str, query: Option<&str>) -> Response<ResponseBody> {
    let checks = health_checks(endpoint);
    const TEXT: &str = "text/plain; charset=utf-8";
    if !check.is_empty() {
        return if checks.contains(&check) {
            respond(200, TEXT, b"ok".to_vec())
        } else {
            respond(404, TEXT, b"404 page not found\n".to_vec())
        };
    }
    let verbose = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .any(|kv| kv == "verbose" || kv.starts_with("verbose="));
    if !verbose {
        return respond(200, TEXT, b"ok".to_vec());
    }
    let mut out = String::new();
    for c in checks {
        out.push_str(&format!("[+]{c} ok\n"));
    }
    out.push_str(&format!("{endpoint} check passed\n"));
    respond(200, TEXT, out.into_bytes())
}
