//! The dynamic and discovery clients (`kube_codegen_runtime::{dynamic, discovery}`) and their
//! fakes: the same test bodies against the in-memory API server and a real kube-apiserver
//! v1.37.1, and the answers of both compared.
//!
//! * `discovery_answers_agree`: server version, groups, preferred versions, every resource the
//!   fake serves (kind, scope, singular name, short names, subresources), preferred resources
//!   and REST-mapper answers are the same on both servers, normalised to what the fake serves
//!   (the real server serves more groups and resources; verbs and categories are not compared).
//! * `discovery_*`: the REST mapper (short names, priorities, scope, errors), the memory-cached
//!   client (one discovery round, then none until invalidated; a CRD appears after
//!   invalidation), the deferred mapper's reset.
//! * `dynamic_client_*`: every verb of the dynamic client on config maps, deployments (status)
//!   and namespaces (cluster scope), watch, errors; the dynamic informer factory with its
//!   listers, restricted to a namespace, with a cluster-scoped informer from a REST mapping.
//!
//! The real-server tests share one kube-apiserver per test binary.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchEvent};
use kube::core::{DynamicObject, GroupVersionResource};
use kube_codegen_runtime::api_status::{is_already_exists, is_conflict, is_not_found, status};
use kube_codegen_runtime::discovery::{
    CachedDiscoveryClient, DeferredRestMapper, Discovered, DiscoveryClient, GroupKind,
};
use kube_codegen_runtime::dynamic::{DynamicClient, DynamicSharedInformerFactory};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::informer::{EventHandlerFuncs, InformerOptions};
use kube_codegen_runtime::labels::Selector;
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::e2e::{create_namespace, init_tracing, run_id};
use tokio::sync::OnceCell;
use tower::util::MapRequestLayer;

const WAIT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Environments: the fake and the real server, each with a request-counting client
// ---------------------------------------------------------------------------------------------

/// The paths of the requests a client sent.
#[derive(Clone, Default)]
struct Requests(Arc<Mutex<Vec<String>>>);

impl Requests {
    fn record(&self, req: &http::Request<kube::client::Body>) {
        self.0.lock().unwrap().push(req.uri().path().to_string());
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

struct Env {
    name: &'static str,
    client: kube::Client,
    counted: kube::Client,
    requests: Requests,
}

fn fake_env() -> Env {
    let server = FakeApiServer::new();
    let requests = Requests::default();
    let recorder = requests.clone();
    let counted = kube::Client::new(
        tower::ServiceBuilder::new()
            .layer(MapRequestLayer::new(
                move |req: http::Request<kube::client::Body>| {
                    recorder.record(&req);
                    req
                },
            ))
            .service(server.clone()),
        "default",
    );
    Env {
        name: "fake",
        client: server.client().unwrap_or_else(|e| panic!("{e}")),
        counted,
        requests,
    }
}

static SHARED: OnceCell<Result<RealApiServer, String>> = OnceCell::const_new();

async fn real_server() -> &'static RealApiServer {
    let started = SHARED
        .get_or_init(|| async {
            init_tracing();
            RealApiServer::start()
                .await
                .map_err(|e| format!("starting kube-apiserver: {e}"))
        })
        .await;
    match started {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

async fn real_env() -> Env {
    let server = real_server().await;
    let requests = Requests::default();
    let recorder = requests.clone();
    let counted = kube::client::ClientBuilder::try_from(server.config().clone())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_layer(&MapRequestLayer::new(
            move |req: http::Request<kube::client::Body>| {
                recorder.record(&req);
                req
            },
        ))
        .build();
    Env {
        name: "real",
        client: server.client().unwrap_or_else(|e| panic!("{e}")),
        counted,
        requests,
    }
}

/// A fresh namespace `dyn-<run>-<test>` (never deleted: a bare kube-apiserver never finishes).
async fn namespace(env: &Env, test: &str) -> String {
    let ns = format!("dyn-{}-{test}", run_id());
    create_namespace(&env.client, &ns)
        .await
        .unwrap_or_else(|e| panic!("[{}] namespace {ns}: {e}", env.name));
    ns
}

async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(t0.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn obj(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

fn gvr(g: &str, v: &str, r: &str) -> GroupVersionResource {
    GroupVersionResource::gvr(g, v, r)
}

// ---------------------------------------------------------------------------------------------
// Discovery: what both servers answer, normalised
// ---------------------------------------------------------------------------------------------

/// One resource as discovery describes it, minus verbs and categories.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResourceFacts {
    kind: String,
    namespaced: bool,
    singular: String,
    short_names: BTreeSet<String>,
    subresources: BTreeSet<String>,
}

#[derive(Debug)]
struct DiscoverySummary {
    major_minor: (String, String),
    /// group → (versions, preferred version)
    groups: BTreeMap<String, (Vec<String>, String)>,
    /// (group-version, plural) → facts
    resources: BTreeMap<(String, String), ResourceFacts>,
    /// group-version → preferred resource names
    preferred: BTreeMap<String, BTreeSet<String>>,
    /// question → answer, from the REST mapper
    mapper: BTreeMap<&'static str, String>,
}

async fn summarize(env: &Env) -> DiscoverySummary {
    let d = DiscoveryClient::new(env.client.clone());
    let version = d
        .server_version()
        .await
        .unwrap_or_else(|e| panic!("[{}] {e}", env.name));
    let discovered = d
        .server_groups_and_resources()
        .await
        .unwrap_or_else(|e| panic!("[{}] {e}", env.name))
        .into_complete()
        .unwrap_or_else(|e| panic!("[{}] {e}", env.name));
    let groups = discovered
        .groups()
        .iter()
        .map(|g| {
            (
                g.name.clone(),
                (
                    g.versions.iter().map(|v| v.version.clone()).collect(),
                    g.preferred_version
                        .as_ref()
                        .map(|v| v.version.clone())
                        .unwrap_or_default(),
                ),
            )
        })
        .collect();
    let mut resources = BTreeMap::new();
    for list in discovered.resources() {
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            let subresources = list
                .resources
                .iter()
                .filter_map(|s| s.name.strip_prefix(&format!("{}/", r.name)))
                .map(String::from)
                .collect();
            resources.insert(
                (list.group_version.clone(), r.name.clone()),
                ResourceFacts {
                    kind: r.kind.clone(),
                    namespaced: r.namespaced,
                    singular: r.singular_name.clone(),
                    short_names: r.short_names.iter().flatten().cloned().collect(),
                    subresources,
                },
            );
        }
    }
    let preferred = discovered
        .preferred_resources()
        .into_iter()
        .map(|l| {
            (
                l.group_version,
                l.resources.into_iter().map(|r| r.name).collect(),
            )
        })
        .collect();
    DiscoverySummary {
        major_minor: (version.major, version.minor),
        groups,
        resources,
        preferred,
        mapper: mapper_answers(&discovered),
    }
}

/// The same REST-mapper questions, answered as strings.
fn mapper_answers(discovered: &Discovered) -> BTreeMap<&'static str, String> {
    let m = discovered.rest_mapper();
    let show_gvk = |r: Result<kube::core::GroupVersionKind, _>| match r {
        Ok(g) => format!("{}/{} {}", g.group, g.version, g.kind),
        Err(e) => format!("error: {e}"),
    };
    let show_gvr = |r: Result<GroupVersionResource, _>| match r {
        Ok(g) => format!("{}/{} {}", g.group, g.version, g.resource),
        Err(e) => format!("error: {e}"),
    };
    let show_mapping = |gk: GroupKind| match m.rest_mapping(&gk, &[]) {
        Ok(mp) => format!(
            "{}/{} {} namespaced={}",
            mp.resource.group,
            mp.resource.version,
            mp.resource.resource,
            mp.namespaced()
        ),
        Err(e) => format!("error: {e}"),
    };
    BTreeMap::from([
        (
            "kind of deploy",
            show_gvk(m.kind_for(&gvr("", "", "deploy"))),
        ),
        ("kind of po", show_gvk(m.kind_for(&gvr("", "", "po")))),
        (
            "kind of events",
            show_gvk(m.kind_for(&gvr("", "", "events"))),
        ),
        (
            "kind of events.events.k8s.io",
            show_gvk(m.kind_for(&gvr("events.k8s.io", "", "events"))),
        ),
        (
            "resource of crd",
            show_gvr(m.resource_for(&gvr("", "", "crd"))),
        ),
        (
            "resource of Lease",
            show_gvr(m.resource_for(&gvr("", "", "lease"))),
        ),
        (
            "resource of nothing",
            show_gvr(m.resource_for(&gvr("", "", "no-such-things"))),
        ),
        (
            "mapping of Namespace",
            show_mapping(GroupKind::new("", "Namespace")),
        ),
        (
            "mapping of Deployment",
            show_mapping(GroupKind::new("apps", "Deployment")),
        ),
        (
            "mapping of EndpointSlice",
            show_mapping(GroupKind::new("discovery.k8s.io", "EndpointSlice")),
        ),
        (
            "mapping of Deployment in core",
            show_mapping(GroupKind::new("", "Deployment")),
        ),
        (
            "singular of endpointslices",
            m.resource_singularizer("endpointslices")
                .unwrap_or_else(|e| format!("error: {e}")),
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_agree() {
    let fake = summarize(&fake_env()).await;
    let real = summarize(&real_env().await).await;

    assert_eq!(
        fake.major_minor, real.major_minor,
        "major and minor version"
    );
    assert_eq!(fake.mapper, real.mapper, "REST mapper answers");

    // Every group the fake serves, the real server serves, with the same preferred version and
    // at least the fake's versions.
    let common: BTreeSet<&String> = fake
        .groups
        .keys()
        .filter(|g| real.groups.contains_key(*g))
        .collect();
    for (g, (versions, preferred)) in &fake.groups {
        let Some((real_versions, real_preferred)) = real.groups.get(g) else {
            panic!("the fake serves group {g:?}, the real server does not");
        };
        assert_eq!(preferred, real_preferred, "preferred version of {g:?}");
        for v in versions {
            assert!(real_versions.contains(v), "{g:?} {v} only on the fake");
        }
    }
    for g in [
        "",
        "apps",
        "batch",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(common.contains(&g.to_string()), "{g:?} served by both");
    }

    // Every resource of the fake, described the same by the real server.
    for ((gv, name), facts) in &fake.resources {
        let Some(real_facts) = real.resources.get(&(gv.clone(), name.clone())) else {
            panic!("the fake serves {gv} {name}, the real server does not");
        };
        assert_eq!(facts.kind, real_facts.kind, "{gv} {name}: kind");
        assert_eq!(
            facts.namespaced, real_facts.namespaced,
            "{gv} {name}: scope"
        );
        assert_eq!(facts.singular, real_facts.singular, "{gv} {name}: singular");
        assert_eq!(
            facts.short_names, real_facts.short_names,
            "{gv} {name}: short names"
        );
        assert!(
            facts.subresources.is_subset(&real_facts.subresources),
            "{gv} {name}: subresources {:?} not all on the real server ({:?})",
            facts.subresources,
            real_facts.subresources
        );
    }
    // Preferred resources of the fake's groups: the fake's are among the real server's.
    for (gv, names) in &fake.preferred {
        let real_names = real.preferred.get(gv).cloned().unwrap_or_default();
        assert!(
            names.is_subset(&real_names),
            "preferred resources of {gv}: {names:?} vs {real_names:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery: mapper, cache, deferred mapper — the same body on both servers
// ---------------------------------------------------------------------------------------------

fn widget_crd(group: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Cluster",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wdg"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    })
}

async fn discovery_cache_and_deferred_mapper(env: Env) {
    let name = env.name;
    let cached = CachedDiscoveryClient::new(env.counted.clone());
    assert!(!cached.fresh().await);
    env.requests.take();

    // One full discovery round fills the cache: /api, /apis and every group-version.
    let groups = cached
        .server_groups()
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    let round = env.requests.take();
    assert!(cached.fresh().await);
    let gvs: usize = groups.groups.iter().map(|g| g.versions.len()).sum();
    assert!(round.contains(&"/api".to_string()) && round.contains(&"/apis".to_string()));
    assert_eq!(
        round.len(),
        2 + gvs,
        "[{name}] one request per document: {round:?}"
    );

    // Later questions are answered from memory.
    let apps = cached
        .server_resources_for_group_version("apps/v1")
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    assert!(apps.resources.iter().any(|r| r.name == "deployments"));
    let all = cached
        .server_groups_and_resources()
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    assert!(all.failed().is_empty());
    let mapper = cached
        .rest_mapper()
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    assert_eq!(
        mapper
            .rest_mapping(&GroupKind::new("apps", "Deployment"), &["v1"])
            .map(|m| m.resource.resource)
            .ok()
            .as_deref(),
        Some("deployments")
    );
    assert!(
        env.requests.take().is_empty(),
        "[{name}] answered from the cache"
    );
    let missing = cached
        .server_resources_for_group_version("nothing.example.com/v1")
        .await
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "group version nothing.example.com/v1 not found in the discovery cache"
    );
    // The version is never cached.
    let v = cached
        .server_version()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.major, "1");
    assert_eq!(env.requests.take(), ["/version"]);

    // A CRD installed now is invisible to the cache and the deferred mapper until reset.
    let group = format!("{}.{}.dyn.example.com", run_id(), name);
    let deferred = DeferredRestMapper::new(cached.clone());
    let widget = GroupKind::new(&group, "Widget");
    let before = deferred.rest_mapping(&widget, &[]).await.unwrap_err();
    assert!(before.is_no_match(), "[{name}] {before}");
    assert_eq!(
        before.to_string(),
        format!("no matches for kind \"Widget\" in group \"{group}\"")
    );
    DynamicClient::new(env.client.clone())
        .resource(&gvr(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
        ))
        .create(&obj(widget_crd(&group)), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] creating the CRD: {e}"));
    assert!(
        deferred.rest_mapping(&widget, &[]).await.is_err(),
        "[{name}] still cached"
    );
    let mapping = eventually(
        "the deferred mapper to find Widget after a reset",
        async || {
            deferred.reset().await;
            deferred.rest_mapping(&widget, &[]).await.ok()
        },
    )
    .await;
    assert_eq!(mapping.resource, gvr(&group, "v1", "widgets"));
    assert!(!mapping.namespaced());
    let short = deferred
        .resource_for(&gvr("", "", "wdg"))
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    assert_eq!(short.group, group);
    assert_eq!(
        deferred
            .kind_for(&gvr(&group, "", "widget"))
            .await
            .map(|k| k.kind)
            .ok()
            .as_deref(),
        Some("Widget")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_cache_and_deferred_mapper_fake() {
    discovery_cache_and_deferred_mapper(fake_env()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_cache_and_deferred_mapper_real() {
    discovery_cache_and_deferred_mapper(real_env().await).await;
}

// ---------------------------------------------------------------------------------------------
// The dynamic client and informer factory — the same body on both servers
// ---------------------------------------------------------------------------------------------

fn configmap(ns: &str, name: &str, mode: &str) -> DynamicObject {
    obj(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "dyn"}},
        "data": {"mode": mode}
    }))
}

fn deployment(ns: &str, name: &str) -> DynamicObject {
    obj(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
            }
        }
    }))
}

async fn dynamic_client_verbs(env: Env) {
    let name = env.name;
    let ns = namespace(&env, "verbs").await;
    let dynamic = DynamicClient::new(env.client.clone());
    let cms_all = dynamic.resource(&gvr("", "v1", "configmaps"));
    let cms = cms_all.namespace(&ns);
    assert_eq!(
        cms.url_path(),
        format!("/api/v1/namespaces/{ns}/configmaps")
    );

    // create, get, conflict on a second create
    let created = cms
        .create(&configmap(&ns, "a", "fast"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] create: {e}"));
    assert_eq!(created.data["data"]["mode"], "fast");
    assert!(created.metadata.uid.is_some());
    let types = created.types.clone().unwrap_or_default();
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("v1", "ConfigMap")
    );
    let again = cms
        .create(&configmap(&ns, "a", "fast"), &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_already_exists(&again), "[{name}] {again}");
    let got = cms
        .get("a", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] get: {e}"));
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );
    let missing = cms.get("nope", &GetParams::default()).await.unwrap_err();
    assert!(is_not_found(&missing), "[{name}] {missing}");
    assert_eq!(
        status(&missing).map(|s| s.message.as_str()),
        Some("configmaps \"nope\" not found")
    );

    // Without apiVersion/kind, a built-in resource takes them from the path, on both servers.
    let untyped = obj(json!({"metadata": {"name": "untyped"}, "data": {"k": "v"}}));
    let typed = cms
        .create(&untyped, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] untyped create: {e}"));
    let types = typed.types.clone().unwrap_or_default();
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("v1", "ConfigMap")
    );
    // An update needs a name (checked before sending).
    let nameless = cms
        .update(&configmap(&ns, "", "x"), &PostParams::default())
        .await
        .unwrap_err();
    assert!(
        nameless.to_string().contains("name is required"),
        "{nameless}"
    );

    // watch from the current version
    let list = cms
        .list(&ListParams::default().labels("app=dyn"))
        .await
        .unwrap_or_else(|e| panic!("[{name}] list: {e}"));
    assert_eq!(list.items.len(), 1);
    let rv = list.metadata.resource_version.clone().unwrap_or_default();
    let mut watch = cms
        .watch(&kube::api::WatchParams::default().labels("app=dyn"), &rv)
        .await
        .unwrap_or_else(|e| panic!("[{name}] watch: {e}"));

    // update with the current version, then a stale one
    let mut changed = got.clone();
    changed.data["data"]["mode"] = json!("slow");
    let updated = cms
        .update(&changed, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] update: {e}"));
    assert_eq!(updated.data["data"]["mode"], "slow");
    let stale = cms
        .update(&changed, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&stale), "[{name}] {stale}");

    // merge patch, JSON patch, server-side apply
    let patched = cms
        .patch(
            "a",
            &Patch::Merge(json!({"data": {"extra": "1"}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("[{name}] patch: {e}"));
    assert_eq!(patched.data["data"]["extra"], "1");
    let json_patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": "/data/extra"}]))
            .unwrap_or_else(|e| panic!("{e}"));
    let patched = cms
        .patch("a", &Patch::Json::<()>(json_patch), &PatchParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] json patch: {e}"));
    assert!(patched.data["data"].get("extra").is_none());
    let applied = cms
        .apply(
            "b",
            &configmap(&ns, "b", "applied"),
            &PatchParams::apply("dyn-test"),
        )
        .await
        .unwrap_or_else(|e| panic!("[{name}] apply: {e}"));
    assert_eq!(applied.data["data"]["mode"], "applied");
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(managers.contains(&"dyn-test".to_string()), "{managers:?}");

    // the watch saw the changes of `a` and the creation of `b`
    let mut seen: Vec<(String, String)> = Vec::new();
    while seen.len() < 4 {
        let next = tokio::time::timeout(WAIT, watch.next())
            .await
            .unwrap_or_else(|_| panic!("[{name}] watch events: {seen:?}"));
        match next {
            Some(Ok(WatchEvent::Added(o))) => {
                seen.push(("ADDED".into(), o.metadata.name.unwrap_or_default()))
            }
            Some(Ok(WatchEvent::Modified(o))) => {
                seen.push(("MODIFIED".into(), o.metadata.name.unwrap_or_default()))
            }
            Some(Ok(WatchEvent::Bookmark(_))) => {}
            other => panic!("[{name}] unexpected watch item {other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("MODIFIED".to_string(), "a".to_string()),
            ("MODIFIED".into(), "a".into()),
            ("MODIFIED".into(), "a".into()),
            ("ADDED".into(), "b".into()),
        ]
    );

    // across namespaces: the cluster-wide client lists ours among others
    let everywhere = cms_all
        .list(&ListParams::default().labels("app=dyn"))
        .await
        .unwrap_or_else(|e| panic!("[{name}] list all: {e}"));
    let ours = everywhere
        .items
        .iter()
        .filter(|o| o.metadata.namespace.as_deref() == Some(ns.as_str()))
        .count();
    assert_eq!(ours, 2);

    // status subresource through the dynamic client, on a deployment
    let deployments = dynamic
        .resource(&gvr("apps", "v1", "deployments"))
        .namespace(&ns);
    let d = deployments
        .create(&deployment(&ns, "web"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] create deployment: {e}"));
    let mut with_status = d.clone();
    with_status.data["status"] = json!({"observedGeneration": 1, "replicas": 0});
    with_status.data["spec"]["replicas"] = json!(5); // ignored by the status endpoint
    let st = deployments
        .update_status(&with_status, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] update_status: {e}"));
    assert_eq!(st.data["status"]["observedGeneration"], 1);
    assert_eq!(st.data["spec"]["replicas"], 1, "[{name}] spec untouched");
    let applied_status = deployments
        .apply_status(
            "web",
            &obj(json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": ns},
                "status": {"observedGeneration": 2}
            })),
            &PatchParams::apply("dyn-status").force(),
        )
        .await
        .unwrap_or_else(|e| panic!("[{name}] apply_status: {e}"));
    assert_eq!(applied_status.data["status"]["observedGeneration"], 2);
    let merged = deployments
        .patch_subresource(
            "status",
            "web",
            &Patch::Merge(json!({"status": {"observedGeneration": 3}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("[{name}] patch status: {e}"));
    assert_eq!(merged.data["status"]["observedGeneration"], 3);
    let status_doc: DynamicObject = deployments
        .get_subresource("status", "web", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] get status: {e}"));
    assert_eq!(status_doc.data["status"]["observedGeneration"], 3);

    // cluster scope: namespaces
    let namespaces = dynamic.resource(&gvr("", "v1", "namespaces"));
    let this = namespaces
        .get(&ns, &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] get namespace: {e}"));
    assert_eq!(this.metadata.name.as_deref(), Some(ns.as_str()));

    // delete one, then the collection
    let deleted = cms
        .delete("a", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] delete: {e}"));
    assert!(deleted.is_right(), "[{name}] a config map is gone at once");
    let gone = cms.get("a", &GetParams::default()).await.unwrap_err();
    assert!(is_not_found(&gone));
    for i in 0..3 {
        cms.create(
            &configmap(&ns, &format!("c{i}"), "bulk"),
            &PostParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("[{name}] create c{i}: {e}"));
    }
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=dyn"),
    )
    .await
    .unwrap_or_else(|e| panic!("[{name}] delete_collection: {e}"));
    let left = cms
        .list(&ListParams::default().labels("app=dyn"))
        .await
        .unwrap_or_else(|e| panic!("[{name}] list: {e}"));
    assert!(left.items.is_empty(), "[{name}] {:?}", left.items);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_client_verbs_fake() {
    dynamic_client_verbs(fake_env()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_client_verbs_real() {
    dynamic_client_verbs(real_env().await).await;
}

async fn dynamic_informers(env: Env) {
    let name = env.name;
    let ns = namespace(&env, "informers").await;
    let other = namespace(&env, "informers-other").await;
    let dynamic = DynamicClient::new(env.client.clone());
    let cms = dynamic.resource(&gvr("", "v1", "configmaps"));
    cms.namespace(&ns)
        .create(&configmap(&ns, "first", "1"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    cms.namespace(&other)
        .create(&configmap(&other, "elsewhere", "1"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));

    let mapper = DiscoveryClient::new(env.client.clone())
        .rest_mapper()
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    let factory = DynamicSharedInformerFactory::builder(env.client.clone())
        .options(InformerOptions::default().namespace(ns.clone()))
        .build();
    let configmaps = factory.for_resource(&gvr("", "v1", "configmaps"));
    let same = factory.for_resource(&gvr("", "v1", "configmaps"));
    assert!(
        configmaps.informer().ptr_eq(same.informer()),
        "one informer per resource"
    );
    // Namespaces are cluster-scoped: the mapping says so, and the namespace does not apply.
    let namespaces = factory.for_mapping(
        &mapper
            .rest_mapping(&GroupKind::new("", "Namespace"), &[])
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let ids: Vec<String> = factory
        .informer_ids()
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(
        ids,
        [
            format!("v1, Resource=configmaps in {ns}"),
            "v1, Kind=Namespace".to_string()
        ]
    );

    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = events.clone();
    let log2 = events.clone();
    let log3 = events.clone();
    configmaps
        .informer()
        .add_event_handler(
            EventHandlerFuncs::<DynamicObject>::new()
                .add_func(move |o, initial| {
                    log.lock().unwrap().push(format!(
                        "add {} {initial}",
                        o.metadata.name.as_deref().unwrap_or("")
                    ))
                })
                .update_func(move |old, new| {
                    log2.lock().unwrap().push(format!(
                        "update {} {}->{}",
                        new.metadata.name.as_deref().unwrap_or(""),
                        old.data["data"]["mode"].as_str().unwrap_or(""),
                        new.data["data"]["mode"].as_str().unwrap_or("")
                    ))
                })
                .delete_func(move |d| {
                    log3.lock().unwrap().push(format!(
                        "delete {}",
                        d.object()
                            .and_then(|o| o.metadata.name.clone())
                            .unwrap_or_default()
                    ))
                }),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    factory.start();
    let synced = tokio::time::timeout(WAIT, factory.wait_for_cache_sync())
        .await
        .unwrap_or_else(|_| panic!("[{name}] no sync"));
    assert!(synced.all_synced(), "[{name}] {synced:?}");

    let lister = configmaps.lister();
    let first = lister
        .namespaced(&ns)
        .get("first")
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    assert_eq!(first.data["data"]["mode"], "1");
    assert!(
        lister.namespaced(&other).get("elsewhere").is_err(),
        "[{name}] restricted to {ns}"
    );
    let nf = lister.namespaced(&ns).get("nope").unwrap_err();
    assert_eq!(
        status(&nf).map(|s| s.message.as_str()),
        Some("configmaps \"nope\" not found")
    );
    assert!(
        namespaces.lister().get(&other).is_ok(),
        "[{name}] the cluster-scoped informer sees every namespace"
    );

    let ours = cms.namespace(&ns);
    ours.create(&configmap(&ns, "second", "2"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    ours.patch(
        "first",
        &Patch::Merge(json!({"data": {"mode": "changed"}})),
        &PatchParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("[{name}] {e}"));
    ours.delete("second", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("[{name}] {e}"));
    let want = [
        "add first true",
        "add second false",
        "update first 1->changed",
        "delete second",
    ];
    eventually("the handler to see add, update and delete", async || {
        (events.lock().unwrap().clone() == want).then_some(())
    })
    .await;
    assert_eq!(
        lister
            .list(&Selector::parse("app=dyn").unwrap_or_else(|e| panic!("{e}")))
            .len(),
        1
    );
    factory.shutdown().await;
    assert!(configmaps.informer().is_stopped() && namespaces.informer().is_stopped());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informers_fake() {
    dynamic_informers(fake_env()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informers_real() {
    dynamic_informers(real_env().await).await;
}

/// The fake constructors of both modules: the real clients over the in-memory server.
#[tokio::test]
async fn fakes_are_the_real_clients_over_the_in_memory_server() {
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "seeded", "namespace": "default"}, "data": {"k": "v"}
    });
    let (dynamic, handle) = kube_codegen_runtime::dynamic::fake::new_client(&[], [cm])
        .unwrap_or_else(|e| panic!("{e}"));
    let got = dynamic
        .resource(&gvr("", "v1", "configmaps"))
        .namespace("default")
        .get("seeded", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.data["data"]["k"], "v");
    let actions = handle.actions();
    assert_eq!(
        (actions[0].verb.as_str(), actions[0].resource.as_str()),
        ("get", "configmaps")
    );

    let (discovery, _) =
        kube_codegen_runtime::discovery::fake::new_client(&[]).unwrap_or_else(|e| panic!("{e}"));
    let mapper = discovery
        .rest_mapper()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        mapper
            .kind_for(&gvr("", "", "leases"))
            .map(|k| k.group)
            .ok()
            .as_deref(),
        Some("coordination.k8s.io")
    );
}
