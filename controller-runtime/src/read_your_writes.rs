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
//!    (default 10 s) it reconciles anyway, logs it and counts it in
//!    `controller_runtime_read_your_writes_timeouts_total`.
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
            Written::Version(rv) => {
                let newer = match &w.version {
                    None => true,
                    Some(cur) => kube_codegen_runtime::resource_version::compare(&rv, cur)
                        .is_ok_and(|o| o.is_gt()),
                };
                if newer {
                    w.version = Some(rv);
                }
            }
            Written::Deleted { key, version } => w.deleted.push((key, version)),
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
    Version(String),
    Deleted { key: String, version: String },
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
    if *method == http::Method::DELETE && answer.metadata.deletion_timestamp.is_none() {
        let name = answer.metadata.name.or(name)?;
        let key = match answer.metadata.namespace.or(namespace) {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name,
        };
        return Some((resource, Written::Deleted { key, version: rv }));
    }
    Some((resource, Written::Version(rv)))
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
        assert!(matches!(w, Written::Version(v) if v == "42"));

        let (_, w) = written(
            &http::Method::DELETE,
            "/api/v1/namespaces/ns/configmaps/a",
            body,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(w, Written::Deleted { key, version } if key == "ns/a" && version == "42"));

        // Deleted with finalizers pending: an update like any other.
        let pending = br#"{"metadata":{"name":"a","namespace":"ns","resourceVersion":"43","deletionTimestamp":"2026-01-01T00:00:00Z"}}"#;
        let (_, w) = written(
            &http::Method::DELETE,
            "/api/v1/namespaces/ns/configmaps/a",
            pending,
        )
        .unwrap_or_else(|| panic!("nothing recorded"));
        assert!(matches!(w, Written::Version(v) if v == "43"));

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
            log.record(&scope, id("", "configmaps"), Written::Version(rv.into()));
        }
        let taken = log.take(&scope.controller, &scope.request);
        assert_eq!(
            taken
                .get(&id("", "configmaps"))
                .and_then(|w| w.version.clone()),
            Some("11".into())
        );
        assert!(log.take(&scope.controller, &scope.request).is_empty());
    }
}
