//! What a request asks for, parsed once (kube-apiserver's `RequestInfo`): the route its path
//! names, and for a resource request the group, version, namespace, resource, name and
//! subresource, the query parameters, and the verb its method and parameters make.

use http::Method;

use crate::error::{ApiError, ApiResult};

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
    /// `/healthz`, `/livez`, `/readyz`, or one check below them.
    Health {
        endpoint: String,
        check: String,
    },
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
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        [] => Route::Root,
        ["version"] => Route::Version,
        [endpoint @ ("healthz" | "livez" | "readyz"), rest @ ..] => Route::Health {
            endpoint: endpoint.to_string(),
            check: rest.join("/"),
        },
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

/// Query parameters.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query {
    pub(crate) pairs: Vec<(String, String)>,
}

impl Query {
    pub(crate) fn parse(q: Option<&str>) -> Self {
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

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean parameter as kube-apiserver decodes one (`Convert_Slice_string_To_bool`):
    /// `0` and `false` in any case are false, any other value (the empty one too) is true.
    pub(crate) fn flag(&self, k: &str) -> Option<bool> {
        self.get(k)
            .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false")))
    }

    /// Whether a `GET` of `path` with this query is a watch: the `/watch/` prefix, or `?watch`
    /// on a collection (on an object's path it is a GET, as kube-apiserver reads it).
    pub(crate) fn watches(&self, path: &ResourcePath) -> bool {
        path.watch_prefix || (path.name.is_none() && self.flag("watch").unwrap_or(false))
    }

    pub(crate) fn int(&self, k: &str) -> ApiResult<Option<i64>> {
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

    pub(crate) fn dry_run(&self) -> ApiResult<bool> {
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

/// The verb of a resource request, as RBAC and audit name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    /// The verb's name: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }

    /// Whether the request carries a body the server decodes.
    pub(crate) fn has_body(self) -> bool {
        matches!(
            self,
            Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::DeleteCollection
        )
    }

    /// The verb of `method` on `path`; `custom` is true for custom resources, whose handler
    /// creates on `POST` to an object path and needs a name for `PUT` and `PATCH`.
    pub(crate) fn of(
        method: &Method,
        path: &ResourcePath,
        query: &Query,
        custom: bool,
    ) -> ApiResult<Verb> {
        let watch = query.watches(path);
        if custom {
            match (method, &path.name) {
                (&Method::POST, Some(_)) if path.subresource.is_none() => return Ok(Verb::Create),
                (&Method::PUT | &Method::PATCH, None) => {
                    return Err(ApiError::bad_request("name must be provided"));
                }
                _ => {}
            }
        }
        Ok(match (method, &path.name) {
            (&Method::GET, _) if watch => Verb::Watch,
            (&Method::GET, None) => Verb::List,
            (&Method::GET, Some(_)) => Verb::Get,
            (&Method::POST, None) => Verb::Create,
            // A subresource's create (a pod's `binding`, `eviction`); its handler refuses it
            // where the subresource has no create.
            (&Method::POST, Some(_)) if path.subresource.is_some() => Verb::Create,
            (&Method::PUT, Some(_)) => Verb::Update,
            (&Method::PATCH, Some(_)) => Verb::Patch,
            (&Method::DELETE, Some(_)) => Verb::Delete,
            (&Method::DELETE, None) => Verb::DeleteCollection,
            _ => return Err(ApiError::method_not_allowed()),
        })
    }
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resource request, parsed once: its path, query and verb.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    pub(crate) path: ResourcePath,
    pub(crate) query: Query,
    pub(crate) verb: Verb,
}

impl RequestInfo {
    /// The namespace of the request, `""` for none.
    pub(crate) fn namespace(&self) -> &str {
        self.path.namespace.as_deref().unwrap_or("")
    }

    /// The object name of the request, `""` for a collection.
    pub(crate) fn name(&self) -> &str {
        self.path.name.as_deref().unwrap_or("")
    }
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

    fn verb(method: Method, path: &str, query: &str, custom: bool) -> ApiResult<Verb> {
        Verb::of(&method, &res(path), &Query::parse(Some(query)), custom)
    }

    #[test]
    fn verbs() {
        let ok = |m: Method, path: &str, q: &str| {
            verb(m, path, q, false).unwrap_or_else(|e| panic!("{path}?{q}: {e}"))
        };
        assert_eq!(ok(Method::GET, "/api/v1/pods", ""), Verb::List);
        assert_eq!(ok(Method::GET, "/api/v1/pods", "watch=true"), Verb::Watch);
        assert_eq!(ok(Method::GET, "/api/v1/watch/pods", ""), Verb::Watch);
        assert_eq!(
            ok(Method::GET, "/api/v1/namespaces/n/pods/p", ""),
            Verb::Get
        );
        // As kube-apiserver: `?watch` on an object's path is a GET, the `/watch/` prefix a
        // watch of the one object.
        assert_eq!(
            ok(Method::GET, "/api/v1/namespaces/n/pods/p", "watch=1"),
            Verb::Get
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/watch/namespaces/n/pods/p", ""),
            Verb::Watch
        );
        // Go's boolean parameters: only `0` and `false` (any case) are false.
        for (q, want) in [
            ("watch=", Verb::Watch),
            ("watch=yes", Verb::Watch),
            ("watch=F", Verb::Watch),
            ("watch=0", Verb::List),
            ("watch=FALSE", Verb::List),
        ] {
            assert_eq!(ok(Method::GET, "/api/v1/pods", q), want, "{q}");
        }
        assert_eq!(
            ok(Method::POST, "/api/v1/namespaces/n/pods", ""),
            Verb::Create
        );
        assert_eq!(
            ok(Method::PUT, "/api/v1/namespaces/n/pods/p", ""),
            Verb::Update
        );
        assert_eq!(
            ok(Method::PATCH, "/api/v1/namespaces/n/pods/p", ""),
            Verb::Patch
        );
        assert_eq!(
            ok(Method::DELETE, "/api/v1/namespaces/n/pods/p", ""),
            Verb::Delete
        );
        assert_eq!(
            ok(Method::DELETE, "/api/v1/namespaces/n/pods", ""),
            Verb::DeleteCollection
        );
        // Method and path that make no verb, and a watch flag that is not a boolean.
        for (m, path, q) in [
            (Method::PUT, "/api/v1/namespaces/n/pods", ""),
            (Method::POST, "/api/v1/namespaces/n/pods/p", ""),
            (Method::OPTIONS, "/api/v1/pods", ""),
        ] {
            assert_eq!(
                verb(m, path, q, false).map_err(|e| e.code),
                Err(405),
                "{path}"
            );
        }
        // The custom resource handler's own rules.
        let crs = "/apis/g.example/v1/namespaces/n/widgets";
        assert_eq!(
            verb(Method::POST, &format!("{crs}/w"), "", true).ok(),
            Some(Verb::Create)
        );
        assert_eq!(
            verb(Method::PUT, crs, "", true).map_err(|e| e.code),
            Err(400)
        );
        assert_eq!(Verb::DeleteCollection.to_string(), "deletecollection");
        assert!(Verb::Patch.has_body() && !Verb::Watch.has_body());
    }

    #[test]
    fn query_values() {
        let q = Query::parse(Some("limit=5&watch=true&dryRun=All&x=&x=2"));
        assert_eq!(q.int("limit").ok().flatten(), Some(5));
        assert_eq!(q.flag("watch"), Some(true));
        assert_eq!(q.get("x"), Some(""));
        assert_eq!(q.dry_run().ok(), Some(true));
        assert!(Query::parse(Some("limit=x")).int("limit").is_err());
        assert!(Query::parse(Some("dryRun=Some")).dry_run().is_err());
        assert_eq!(Query::parse(None).get("limit"), None);
    }
}
