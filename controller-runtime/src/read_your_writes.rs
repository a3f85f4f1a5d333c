//! Read-your-own-writes: a reconcile never reads, from the cache, an object older than what an
//! earlier reconcile of the same request wrote through the Manager's client.
//!
//! The classic failure: a reconcile creates a child, the next reconcile of the same request
//! starts before the watch has delivered that create, finds no child in the cache, and creates
//! a second one (or updates from a stale copy and conflicts, or flaps a status).
//!
//! How it is prevented:
//!
//! 1. Each worker runs its reconcile with the request it reconciles in scope. Every write the
//!    reconcile makes through [`Manager::client`](crate::Manager::client) — create, update,
//!    patch, apply, the `status` and `scale` subresources, delete — is seen by the client on
//!    its way back, and the resourceVersion the server answered with is recorded for the
//!    request, per resource (the highest one). A delete that removed the object records that
//!    object and its last version instead: it counts as seen once the cache no longer holds
//!    that version.
//! 2. Each informer knows the version its store has reached, from events, lists and bookmarks
//!    ([`SharedIndexInformer::wait_for_store_resource_version`](kube_codegen_runtime::SharedIndexInformer::wait_for_store_resource_version)).
//! 3. Before a request is reconciled again, its worker waits until every informer of the
//!    controller that serves a written resource has reached that request's writes. After
//!    [`read_your_own_writes_timeout`](crate::ManagerBuilder::read_your_own_writes_timeout)
//!    (default 10 s) the wait ends, counted in
//!    `controller_runtime_read_your_writes_timeouts_total`, and a live read decides.
//! 4. The live read: each object the request wrote is read from the API server (a `GET`
//!    through the Manager's client). The cache's copy is *current* when it holds the written
//!    version or a later one, or is the same as the server's (the same version, or both gone);
//!    the informer's resourceVersion may lag behind a write the store already holds (a quiet
//!    resource the server sends no bookmarks for), and an object someone else deleted will
//!    never reach the written version. When every copy is current the request is reconciled;
//!    when one is not, the request goes back to the queue for another bound, its writes still
//!    waited for, and is not reconciled from the stale copy. A live read that fails (the
//!    server unreachable) lets the reconcile go ahead, logged. Each decision is counted in
//!    `controller_runtime_read_your_writes_live_checks_total` by `result` (`current`,
//!    `stale`, `failed`).
//!
//! Writes made from other tasks than the reconcile's (a spawned task), or to resources no
//! informer of the controller watches, are not waited for. It is on by default; switch it off
//! with [`ManagerBuilder::read_your_own_writes(false)`](crate::ManagerBuilder::read_your_own_writes).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::reconcile::Request;

tokio::task_local! {
    /// The request the current task reconciles, and the log its writes go to.
    static RECONCILING: Scope;
}

/// What a reconcile's writes are recorded under.
#[derive(Clone)]
pub(crate) struct Scope {
    pub(crate) controller: Arc<str>,
    pub(crate) request: Request,
    pub(crate) log: WriteLog,
}

/// Runs `fut` with its writes recorded for `scope`.
pub(crate) async fn scoped<F: Future>(scope: Scope, fut: F) -> F::Output {
    RECONCILING.scope(scope, fut).await
}

/// A resource: API group (empty for the core group) and plural name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ResourceId {
    pub(crate) group: String,
    pub(crate) plural: String,
}

/// What one request's reconciles wrote to one resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Writes {
    /// The highest resourceVersion a write answered with.
    pub(crate) version: Option<String>,
    /// Objects deleted, by store key, with the last version they had.
    pub(crate) deleted: Vec<(String, String)>,
    /// Every object written or deleted, for the live read past the bound.
    pub(crate) objects: Vec<WrittenObject>,
}

/// One object a request's reconciles wrote, with the version the last write answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenObject {
    /// Its key in an informer's store (`namespace/name`, or `name`).
    pub(crate) key: String,
    /// Its path on the API server (`/api/v1/namespaces/ns/configmaps/a`).
    pub(crate) path: String,
    /// The version the write answered with (for a delete: the object's last).
    pub(crate) version: String,
    /// Whether the write deleted it.
    pub(crate) deleted: bool,
}

impl Writes {
    fn note(&mut self, object: WrittenObject) {
        match self.objects.iter_mut().find(|o| o.key == object.key) {
            Some(o) => {
                if kube_codegen_runtime::resource_version::compare(&object.version, &o.version)
                    .is_ok_and(|c| c.is_ge())
                {
                    *o = object;
                }
            }
            None => self.objects.push(object),
        }
    }

    fn merge(&mut self, other: Writes) {
        if let Some(v) = other.version {
            let newer = self.version.as_ref().is_none_or(|cur| {
                kube_codegen_runtime::resource_version::compare(&v, cur).is_ok_and(|c| c.is_gt())
            });
            if newer {
                self.version = Some(v);
            }
        }
        self.deleted.extend(other.deleted);
        for o in other.objects {
            self.note(o);
        }
    }
}

type Log = HashMap<(Arc<str>, Request), HashMap<ResourceId, Writes>>;

/// The writes of every controller's requests not yet waited for.
#[derive(Clone, Default)]
pub(crate) struct WriteLog {
    inner: Arc<Mutex<Log>>,
}

impl WriteLog {
    fn record(&self, scope: &Scope, resource: ResourceId, written: Written) {
        let mut log = self.inner.lock();
        let w = log
            .entry((scope.controller.clone(), scope.request.clone()))
            .or_default()
            .entry(resource)
            .or_default();
        match written {
            Written::Version(rv, object) => {
                if let Some(o) = object {
                    w.note(o);
                }
                let newer = match &w.version {
                    None => true,
                    Some(cur) => kube_codegen_runtime::resource_version::compare(&rv, cur)
                        .is_ok_and(|o| o.is_gt()),
                };
                if newer {
                    w.version = Some(rv);
                }
            }
            Written::Deleted { key, version, path } => {
                w.note(WrittenObject {
                    key: key.clone(),
                    path,
                    version: version.clone(),
                    deleted: true,
                });
                w.deleted.push((key, version));
            }
        }
    }

    /// Puts back writes taken with [`take`](Self::take) that are still to be waited for,
    /// beside any the request made since.
    pub(crate) fn restore(
        &self,
        controller: &Arc<str>,
        request: &Request,
        writes: HashMap<ResourceId, Writes>,
    ) {
        let mut log = self.inner.lock();
        let entry = log
            .entry((controller.clone(), request.clone()))
            .or_default();
        for (resource, w) in writes {
            entry.entry(resource).or_default().merge(w);
        }
    }

    /// Takes what `request` of `controller` wrote.
    pub(crate) fn take(
        &self,
        controller: &Arc<str>,
        request: &Request,
    ) -> HashMap<ResourceId, Writes> {
        self.inner
            .lock()
            .remove(&(controller.clone(), request.clone()))
            .unwrap_or_default()
    }
}

enum Written {
    /// A write that left the object at a version; the object, when the answer names it.
    Version(String, Option<WrittenObject>),
    /// A delete that removed the object.
    Deleted {
        key: String,
        version: String,
        path: String,
    },
}

/// The path of the object named `name` that a write to `path` (the object, one of its
/// subresources, or its collection) wrote.
fn object_path(path: &str, name: &str) -> String {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let prefix = if parts.first() == Some(&"api") { 2 } else { 3 }.min(parts.len());
    // How many segments after the prefix name the collection.
    let collection = match &parts[prefix..] {
        // A Namespace itself, or the namespaces.
        ["namespaces"] | ["namespaces", _] => 1,
        ["namespaces", _, _, ..] => 3,
        [_, ..] => 1,
        [] => 0,
    };
    format!("/{}/{name}", parts[..prefix + collection].join("/"))
}

/// Parses `/api/v1[/namespaces/{ns}]/{plural}[/{name}[/{sub}]]` and
/// `/apis/{group}/{version}[/namespaces/{ns}]/{plural}[/{name}[/{sub}]]`: the resource, the
/// namespace and the name (when the path names an object).
fn parse_path(path: &str) -> Option<(ResourceId, Option<String>, Option<String>)> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (namespace, plural, name) = match rest {
        // A Namespace itself.
        ["namespaces", name] => (None, "namespaces", Some(*name)),
        ["namespaces", ns, plural, rest @ ..] => (Some(*ns), *plural, rest.first().copied()),
        [plural, rest @ ..] => (None, *plural, rest.first().copied()),
        [] => return None,
    };
    Some((
        ResourceId {
            group: group.to_string(),
            plural: plural.to_string(),
        },
        namespace.map(str::to_string),
        name.map(str::to_string),
    ))
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: AnswerMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AnswerMeta {
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    deletion_timestamp: Option<serde_json::Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
}

/// What the answer to a successful write says was written.
fn written(method: &http::Method, path: &str, body: &[u8]) -> Option<(ResourceId, Written)> {
    let (resource, namespace, name) = parse_path(path)?;
    let answer: Answer = serde_json::from_slice(body).ok()?;
    if answer.kind.as_deref() == Some("Status") {
        // A delete answered with a Status (a collection, or an older server): nothing to
        // wait for that the answer names.
        return None;
    }
    let rv = answer.metadata.resource_version.filter(|v| !v.is_empty())?;
    let object = answer.metadata.name.or(name).map(|name| {
        let key = match answer.metadata.namespace.or(namespace) {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.clone(),
        };
        WrittenObject {
            key,
            path: object_path(path, &name),
            version: rv.clone(),
            deleted: false,
        }
    });
    if *method == http::Method::DELETE && answer.metadata.deletion_timestamp.is_none() {
        let o = object?;
        return Some((
            resource,
            Written::Deleted {
                key: o.key,
                version: rv,
                path: o.path,
            },
        ));
    }
    Some((resource, Written::Version(rv, object)))
}

/// What a live read of `object` says about the cache's copy, whose version is `held`.
pub(crate) async fn is_current(
    client: &kube::Client,
    object: &WrittenObject,
    held: Option<&str>,
) -> Result<bool, kube::Error> {
    use kube_codegen_runtime::resource_version::compare;
    let holds_the_write = match held {
        // A deleted object: gone from the store, or there again at a later version.
        _ if object.deleted => {
            held.is_none_or(|h| compare(h, &object.version).is_ok_and(|c| c.is_gt()))
        }
        Some(h) => compare(h, &object.version).is_ok_and(|c| c.is_ge()),
        None => false,
    };
    if holds_the_write {
        // Only the informer's version lags behind what its store holds.
        return Ok(true);
    }
    let req = http::Request::get(&object.path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    let live = match client.request::<Answer>(req).await {
        Ok(a) => a.metadata.resource_version,
        Err(kube::Error::Api(s)) if s.code == 404 => None,
        Err(e) => return Err(e),
    };
    Ok(live.as_deref() == held)
}

fn is_write(m: &http::Method) -> bool {
    matches!(
        *m,
        http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
    )
}

/// A client over `inner` that records, for the request being reconciled, what its writes
/// answered with.
pub(crate) fn recording_client(inner: kube::Client) -> kube::Client {
    let default_namespace = inner.default_namespace().to_string();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        async move {
            let scope = RECONCILING.try_with(Scope::clone).ok();
            let (method, path) = (req.method().clone(), req.uri().path().to_string());
            let res = inner
                .send(req)
                .await
                .map_err(|e| Box::new(e) as crate::BoxError)?;
            let Some(scope) = scope.filter(|_| is_write(&method) && res.status().is_success())
            else {
                return Ok::<_, crate::BoxError>(res);
            };
            let (parts, body) = res.into_parts();
            let bytes: Bytes = body
                .collect_bytes()
                .await
                .map_err(|e| Box::new(e) as crate::BoxError)?;
            match written(&method, &path, &bytes) {
                Some((resource, w)) => scope.log.record(&scope, resource, w),
                None => tracing::debug!(%method, %path, "a write whose answer names no version"),
            }
            Ok(http::Response::from_parts(
                parts,
                kube::client::Body::from(bytes.to_vec()),
            ))
        }
    });
    kube::Client::new(svc, default_namespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(group: &str, plural: &str) -> ResourceId {
        ResourceId {
            group: group.into(),
            plural: plural.into(),
        }
    }

    #[test]
    fn paths_name_the_resource_namespace_and_object() {
        assert_eq!(
            parse_path("/api/v1/namespaces/ns/configmaps/a"),
            Some((id("", "configmaps"), Some("ns".into()), Some("a".into())))
        );
        assert_eq!(
            parse_path("/apis/apps/v1/namespaces/ns/deployments/web/status"),
            Some((
                id("apps", "deployments"),
                Some("ns".into()),
                Some("web".into())
            ))
        );
        assert_eq!(
            parse_path("/apis/apps/v1/namespaces/ns/deployments"),
            Some((id("apps", "deployments"), Some("ns".into()), None))
        );
        assert_eq!(
            parse_path("/api/v1/nodes/n1"),
            Some((id("", "nodes"), None, Some("n1".into())))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/ns"),
            Some((id("", "namespaces"), None, Some("ns".into())))
        );
        assert_eq!(parse_path("/version"), None);
    }

    #[test]
    fn answers_give_the_version_or_the_deleted_object() {
        let body = br#"{"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"42"}}"#;
        let (r, w) = written(
            &http::Method::PUT,
            "/api/v1/namespaces/ns/configmaps/a",
            body,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert_eq!(r, id("", "configmaps"));
        assert!(matches!(&w, Written::Version(v, Some(o))
            if v == "42" && o.key == "ns/a" && o.path == "/api/v1/namespaces/ns/configmaps/a"));
        let (_, w) = written(
            &http::Method::POST,
            "/api/v1/namespaces/ns/configmaps",
            body,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(&w, Written::Version(_, Some(o))
            if o.path == "/api/v1/namespaces/ns/configmaps/a"));
        let (_, w) = written(
            &http::Method::PATCH,
            "/api/v1/namespaces/ns/configmaps/a/status",
            body,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(&w, Written::Version(_, Some(o))
            if o.path == "/api/v1/namespaces/ns/configmaps/a"));

        let (_, w) = written(
            &http::Method::DELETE,
            "/api/v1/namespaces/ns/configmaps/a",
            body,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(w, Written::Deleted { key, version, path }
            if key == "ns/a" && version == "42" && path == "/api/v1/namespaces/ns/configmaps/a"));

        // Deleted with finalizers pending: an update like any other.
        let pending = br#"{"metadata":{"name":"a","namespace":"ns","resourceVersion":"43","deletionTimestamp":"2026-01-01T00:00:00Z"}}"#;
        let (_, w) = written(
            &http::Method::DELETE,
            "/api/v1/namespaces/ns/configmaps/a",
            pending,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(w, Written::Version(v, _) if v == "43"));

        let status = br#"{"kind":"Status","status":"Success"}"#;
        assert!(
            written(
                &http::Method::DELETE,
                "/api/v1/namespaces/ns/configmaps",
                status
            )
            .is_none()
        );
    }

    #[test]
    fn the_log_keeps_the_highest_version_per_request_and_resource() {
        let log = WriteLog::default();
        let scope = Scope {
            controller: Arc::from("c"),
            request: Request::namespaced("ns", "a"),
            log: log.clone(),
        };
        for rv in ["9", "11", "10"] {
            log.record(
                &scope,
                id("", "configmaps"),
                Written::Version(rv.into(), None),
            );
        }
        let taken = log.take(&scope.controller, &scope.request);
        assert_eq!(
            taken
                .get(&id("", "configmaps"))
                .and_then(|w| w.version.clone()),
            Some("11".into())
        );
        assert!(log.take(&scope.controller, &scope.request).is_empty());

        // Restored writes are waited for again, beside newer ones.
        log.restore(&scope.controller, &scope.request, taken);
        log.record(
            &scope,
            id("", "configmaps"),
            Written::Version("12".into(), None),
        );
        let again = log.take(&scope.controller, &scope.request);
        assert_eq!(
            again
                .get(&id("", "configmaps"))
                .and_then(|w| w.version.clone()),
            Some("12".into())
        );
    }
}
