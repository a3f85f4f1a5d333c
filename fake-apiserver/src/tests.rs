//! Tests of the fake server through a `kube::Client`: the test handle (seeding, typed access,
//! actions, reactors, watch faults), history and 410s, bookmarks, namespace and CRD
//! lifecycles, graceful pod deletion, tables and serving.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

use super::*;

const MYDEMO: ResourceInfo = ResourceInfo {
    group: "crddemo.k8s.io",
    version: "v1",
    kind: "Mydemo",
    list_kind: "MydemoList",
    plural: "mydemos",
    singular: "mydemo",
    namespaced: true,
    subresources: &["status"],
    short_names: &["md"],
};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn cm(ns: &str, name: &str) -> ConfigMap {
    ok(serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}}),
    ))
}

fn mydemos(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("crddemo.k8s.io", "v1", "Mydemo"),
        "mydemos",
    );
    Api::namespaced_with(client.clone(), ns, &ar)
}

fn mydemo(name: &str) -> DynamicObject {
    ok(serde_json::from_value(json!({
        "apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo",
        "metadata": {"name": name}, "spec": {"ip": "10.0.0.1", "port": 80}
    })))
}

fn code<T: std::fmt::Debug>(r: kube::Result<T>) -> Option<u16> {
    match r {
        Err(kube::Error::Api(s)) => Some(s.code),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn seeded_objects_are_stored_like_creates() {
    let seed = ok(to_value(&cm("team", "settings")));
    let (client, handle) = ok(new_client(&[MYDEMO], [seed]));
    let got: Option<ConfigMap> = ok(handle.get("team", "settings"));
    let got = got.unwrap_or_else(|| panic!("seeded object missing"));
    assert!(got.metadata.uid.is_some() && got.metadata.resource_version.is_some());
    // The namespace was created for it.
    assert!(ok(handle.get::<Namespace>("", "team")).is_some());
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    assert_eq!(ok(api.get("settings").await).metadata.uid, got.metadata.uid);
    // Seeding keeps the status a create would drop.
    let with_status = json!({"apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo",
        "metadata": {"name": "m", "namespace": "team"}, "spec": {"ip": "1.2.3.4", "port": 1},
        "status": {"serviceName": "svc"}});
    ok(handle.add_value(with_status));
    let m = ok(mydemos(&client, "team").get("m").await);
    assert_eq!(m.data["status"]["serviceName"], "svc");
    assert_eq!(ok(handle.list::<ConfigMap>()).len(), 1);
    assert!(matches!(
        handle.add_value(json!({"metadata": {"name": "x"}})),
        Err(FakeError::MissingTypeMeta(_))
    ));
    assert!(matches!(
        handle.add_value(json!({"apiVersion": "nope/v1", "kind": "X", "metadata": {"name": "x"}})),
        Err(FakeError::UnknownKind { .. })
    ));
}

#[tokio::test]
async fn actions_are_recorded() {
    let (client, handle) = ok(new_client(&[MYDEMO], []));
    let api = mydemos(&client, "default");
    ok(api.create(&PostParams::default(), &mydemo("a")).await);
    ok(api
        .patch_status(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"serviceName": "s"}})),
        )
        .await);
    let _ = api.get("missing").await;
    let actions = handle.actions();
    let summary: Vec<(String, String, Option<String>, Option<String>)> = actions
        .iter()
        .map(|a| {
            (
                a.verb.clone(),
                a.resource.clone(),
                a.subresource.clone(),
                a.name.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("create".into(), "mydemos".into(), None, None),
            (
                "patch".into(),
                "mydemos".into(),
                Some("status".into()),
                Some("a".into())
            ),
            ("get".into(), "mydemos".into(), None, Some("missing".into())),
        ]
    );
    assert_eq!(actions[0].namespace.as_deref(), Some("default"));
    assert_eq!(
        actions[0].body.as_ref().map(|b| b["spec"]["port"].clone()),
        Some(json!(80))
    );
    assert_eq!(actions[1].patch_type, Some(PatchType::Merge));
    handle.clear_actions();
    assert!(handle.actions().is_empty());
}

#[tokio::test]
async fn reactors_answer_fail_and_pass_through() {
    let (client, handle) = ok(new_client(&[MYDEMO], []));
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    handle.prepend_reactor("create", "configmaps", |a| {
        if a.body.as_ref().and_then(|b| b["metadata"]["name"].as_str()) == Some("boom") {
            Reaction::error(500, "InternalError", "injected")
        } else {
            Reaction::PassThrough
        }
    });
    assert_eq!(
        code(
            api.create(&PostParams::default(), &cm("default", "boom"))
                .await
        ),
        Some(500)
    );
    ok(api
        .create(&PostParams::default(), &cm("default", "fine"))
        .await);
    assert!(ok(handle.get::<ConfigMap>("default", "fine")).is_some());
    assert!(ok(handle.get::<ConfigMap>("default", "boom")).is_none());
    // A canned answer for every get, from a wildcard reactor put first.
    handle.prepend_reactor("get", "*", |a| {
        Reaction::Object(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": a.name.clone().unwrap_or_default()}, "data": {"canned": "yes"}}))
    });
    let got = ok(api.get("anything").await);
    assert_eq!(
        got.data.and_then(|d| d.get("canned").cloned()),
        Some("yes".to_string())
    );
    handle.clear_reactors();
    assert_eq!(code(api.get("anything").await), Some(404));
    // A delay, then the store.
    handle.add_reactor("list", "configmaps", |_| {
        Reaction::Delay(Duration::from_millis(50))
    });
    let started = std::time::Instant::now();
    ok(api.list(&ListParams::default()).await);
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[tokio::test]
async fn watch_reactors_inject_faults() {
    let (client, handle) = ok(new_client(&[MYDEMO], []));
    let api = mydemos(&client, "default");
    for n in ["a", "b", "c"] {
        ok(api.create(&PostParams::default(), &mydemo(n)).await);
    }
    handle.prepend_watch_reactor("mydemos", |_| WatchReaction::CutAfter(2));
    let events: Vec<WatchEvent<DynamicObject>> =
        ok(ok(api.watch(&WatchParams::default(), "0").await)
            .try_collect()
            .await);
    assert_eq!(events.len(), 2, "the stream is cut after two events");

    handle.clear_reactors();
    handle.prepend_watch_reactor("*", |_| {
        WatchReaction::error_after(1, 410, "Expired", "injected")
    });
    let events: Vec<WatchEvent<DynamicObject>> =
        ok(ok(api.watch(&WatchParams::default(), "0").await)
            .try_collect()
            .await);
    assert!(matches!(events.last(), Some(WatchEvent::Error(s)) if s.code == 410));

    handle.clear_reactors();
    handle.prepend_watch_reactor("mydemos", |_| {
        WatchReaction::Error(
            crate::error::failure_status(503, "ServiceUnavailable", "down").boxed(),
        )
    });
    assert!(api.watch(&WatchParams::default(), "0").await.is_err());

    handle.clear_reactors();
    handle.prepend_watch_reactor("mydemos", |_| {
        WatchReaction::Events(vec![(
            "ADDED".into(),
            json!({"apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo", "metadata": {"name": "ghost"}}),
        )])
    });
    let events: Vec<WatchEvent<DynamicObject>> =
        ok(ok(api.watch(&WatchParams::default(), "0").await)
            .try_collect()
            .await);
    assert!(
        matches!(&events[..], [WatchEvent::Added(o)] if o.metadata.name.as_deref() == Some("ghost"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_watch_delay_reactor_holds_the_watch_back_then_passes_through() {
    let (client, handle) = ok(new_client(&[MYDEMO], []));
    let api = mydemos(&client, "default");
    ok(api.create(&PostParams::default(), &mydemo("a")).await);
    handle.prepend_watch_reactor("mydemos", |_| WatchReaction::Delay(Duration::from_secs(7)));
    let started = tokio::time::Instant::now();
    let mut stream = Box::pin(ok(api.watch(&WatchParams::default(), "0").await));
    let first = stream.next().await;
    assert!(
        started.elapsed() >= Duration::from_secs(7),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(&first, Some(Ok(WatchEvent::Added(o))) if o.metadata.name.as_deref() == Some("a")),
        "after the delay the store serves the watch: {first:?}"
    );
}

#[tokio::test]
async fn a_huge_watch_timeout_means_no_timeout() {
    let server = ok(FakeApiServer::with_resources(&[MYDEMO]));
    ok(server
        .handle()
        .add_value(json!({"apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo",
        "metadata": {"name": "m", "namespace": "default"}, "spec": {"ip": "1.2.3.4", "port": 1}})));
    let mut svc = server.clone();
    let req = ok(http::Request::get(format!(
        "/apis/crddemo.k8s.io/v1/namespaces/default/mydemos?watch=true&resourceVersion=0&timeoutSeconds={}",
        i64::MAX
    ))
    .body(http_body_util::Full::new(bytes::Bytes::new())));
    let resp = ok(tower_service::Service::call(&mut svc, req).await);
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let frame = tokio::time::timeout(
        Duration::from_secs(5),
        http_body_util::BodyExt::frame(&mut body),
    )
    .await;
    let data = match frame {
        Ok(Some(Ok(f))) => f.into_data().unwrap_or_default(),
        other => panic!("expected the ADDED event, got {other:?}"),
    };
    let event: Value = ok(serde_json::from_slice(&data));
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "m");
}

#[tokio::test]
async fn compaction_expires_watches_and_continue_tokens() {
    let server = ok(FakeApiServer::builder()
        .resources(&[MYDEMO])
        .history_capacity(3)
        .build());
    let client = ok(server.client());
    let handle = server.handle();
    let api = mydemos(&client, "default");
    let first = ok(api.create(&PostParams::default(), &mydemo("a")).await);
    ok(api.create(&PostParams::default(), &mydemo("b")).await);
    let page = ok(api.list(&ListParams::default().limit(1)).await);
    let token = page.metadata.continue_.unwrap_or_default();
    for n in ["c", "d", "e", "f"] {
        ok(api.create(&PostParams::default(), &mydemo(n)).await);
    }
    // Four writes with a history of three: the first create's version is gone.
    let rv = first.metadata.resource_version.unwrap_or_default();
    let events: Vec<WatchEvent<DynamicObject>> =
        ok(ok(api.watch(&WatchParams::default().timeout(1), &rv).await)
            .try_collect()
            .await);
    assert!(
        matches!(events.first(), Some(WatchEvent::Error(s)) if s.code == 410 && s.reason == "Expired"),
        "{events:?}"
    );
    assert_eq!(
        code(
            api.list(&ListParams::default().limit(1).continue_token(&token))
                .await
        ),
        Some(410)
    );
    // A recent version still works; after `compact` it does not.
    let recent = handle.resource_version().to_string();
    let events: Vec<WatchEvent<DynamicObject>> = ok(ok(api
        .watch(&WatchParams::default().timeout(1), &recent)
        .await)
    .try_collect()
    .await);
    assert!(events.is_empty(), "{events:?}");
    handle.compact();
    let events: Vec<WatchEvent<DynamicObject>> = ok(ok(api
        .watch(
            &WatchParams::default().timeout(1),
            &(handle.resource_version() - 1).to_string(),
        )
        .await)
    .try_collect()
    .await);
    assert!(matches!(events.first(), Some(WatchEvent::Error(s)) if s.code == 410));
}

#[tokio::test]
async fn bookmarks_arrive_periodically() {
    let server = ok(FakeApiServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .build());
    let client = ok(server.client());
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let rv = server.handle().resource_version().to_string();
    let mut stream = Box::pin(ok(api.watch(&WatchParams::default().timeout(5), &rv).await));
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next()).await;
    assert!(
        matches!(next, Ok(Some(Ok(WatchEvent::Bookmark(ref b)))) if b.metadata.resource_version == rv),
        "{next:?}"
    );
    // Without allowWatchBookmarks, none.
    let wp = WatchParams {
        bookmarks: false,
        ..WatchParams::default().timeout(1)
    };
    let events: Vec<WatchEvent<ConfigMap>> = ok(ok(api.watch(&wp, &rv).await).try_collect().await);
    assert!(events.is_empty());
}

#[tokio::test]
async fn kube_runtime_watcher_syncs_and_follows() {
    use kube::runtime::watcher::{self, Event};
    let (client, _handle) = ok(new_client(&[MYDEMO], []));
    let api = mydemos(&client, "default");
    ok(api.create(&PostParams::default(), &mydemo("a")).await);
    for config in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut stream = Box::pin(watcher::watcher(api.clone(), config));
        let mut seen_init_done = false;
        let mut applied = Vec::new();
        while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(2), stream.next()).await {
            match ok(e) {
                Event::InitDone => {
                    seen_init_done = true;
                    ok(api
                        .create(
                            &PostParams::default(),
                            &mydemo(&format!("n{}", applied.len())),
                        )
                        .await);
                }
                Event::InitApply(o) | Event::Apply(o) => {
                    applied.push(o.metadata.name.unwrap_or_default());
                    if seen_init_done {
                        break;
                    }
                }
                _ => {}
            }
        }
        assert!(seen_init_done);
        assert!(
            applied.contains(&"a".to_string()) && applied.len() >= 2,
            "{applied:?}"
        );
    }
}

#[tokio::test]
async fn namespace_deletion_is_emulated_or_left_terminating() {
    let (client, handle) = ok(new_client(&[], [ok(to_value(&cm("doomed", "c")))]));
    let nss: Api<Namespace> = Api::all(client.clone());
    ok(nss.delete("doomed", &DeleteParams::default()).await);
    assert!(ok(handle.get::<Namespace>("", "doomed")).is_none());
    assert!(ok(handle.get::<ConfigMap>("doomed", "c")).is_none());
    assert_eq!(
        code(nss.delete("default", &DeleteParams::default()).await),
        Some(403)
    );

    let server = ok(FakeApiServer::builder()
        .namespace_controller(false)
        .object(ok(to_value(&cm("stuck", "c"))))
        .build());
    let client = ok(server.client());
    let nss: Api<Namespace> = Api::all(client.clone());
    ok(nss.delete("stuck", &DeleteParams::default()).await);
    let ns = ok(nss.get("stuck").await);
    assert_eq!(
        ns.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    let cms: Api<ConfigMap> = Api::namespaced(client, "stuck");
    assert_eq!(
        code(cms.create(&PostParams::default(), &cm("stuck", "d")).await),
        Some(403)
    );
}

#[tokio::test]
async fn crd_deletion_waits_for_instance_finalizers() {
    let (client, handle) = ok(new_client(&[], []));
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    let crd = ok(serde_json::from_value(json!({
        "metadata": {"name": "mydemos.crddemo.k8s.io", "annotations": {"api-approved.kubernetes.io": "unapproved, test"}},
        "spec": {"group": "crddemo.k8s.io", "scope": "Namespaced",
            "names": {"kind": "Mydemo", "plural": "mydemos"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"ip": {"type": "string"}, "port": {"type": "integer", "minimum": 1, "maximum": 65535}}}}}}}]}
    })));
    ok(crds.create(&PostParams::default(), &crd).await);
    let api = mydemos(&client, "default");
    let mut held = mydemo("held");
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    ok(api.create(&PostParams::default(), &held).await);
    let mut bad = mydemo("bad");
    bad.data["spec"]["port"] = json!(70000);
    assert_eq!(
        code(api.create(&PostParams::default(), &bad).await),
        Some(422)
    );
    ok(crds
        .delete("mydemos.crddemo.k8s.io", &DeleteParams::default())
        .await);
    // The CRD waits for the instance's finalizer; new instances are refused meanwhile.
    assert!(
        ok(crds.get("mydemos.crddemo.k8s.io").await)
            .metadata
            .deletion_timestamp
            .is_some()
    );
    assert_eq!(
        code(api.create(&PostParams::default(), &mydemo("new")).await),
        Some(405)
    );
    ok(api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await);
    assert_eq!(code(crds.get("mydemos.crddemo.k8s.io").await), Some(404));
    assert_eq!(code(api.list(&ListParams::default()).await), Some(404));
    assert!(
        handle
            .actions()
            .iter()
            .any(|a| a.resource == "customresourcedefinitions")
    );
}

#[tokio::test]
async fn bound_pods_are_deleted_gracefully() {
    let (client, _handle) = ok(new_client(&[], []));
    let pods: Api<Pod> = Api::default_namespaced(client);
    let pod: Pod = ok(serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})));
    ok(pods.create(&PostParams::default(), &pod).await);
    ok(pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await);
    ok(pods.delete("p", &DeleteParams::default()).await);
    let p = ok(pods.get("p").await);
    assert_eq!(p.metadata.deletion_grace_period_seconds, Some(30));
    ok(pods
        .delete("p", &DeleteParams::default().grace_period(0))
        .await);
    assert_eq!(code(pods.get("p").await), Some(404));
}

#[tokio::test]
async fn tables_for_kubectl() {
    let server = ok(FakeApiServer::with_resources(&[MYDEMO]));
    let handle = server.handle();
    ok(
        handle.add_value(json!({"apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo",
        "metadata": {"name": "m", "namespace": "default"}, "spec": {"ip": "1.2.3.4", "port": 1}})),
    );
    let mut svc = server.clone();
    let req = ok(
        http::Request::get("/apis/crddemo.k8s.io/v1/namespaces/default/mydemos")
            .header(
                "accept",
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            )
            .body(http_body_util::Full::new(bytes::Bytes::new())),
    );
    let resp = ok(tower_service::Service::call(&mut svc, req).await);
    let body = ok(http_body_util::BodyExt::collect(resp.into_body()).await).to_bytes();
    let table: Value = ok(serde_json::from_slice(&body));
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["columnDefinitions"][0]["name"], "Name");
    assert_eq!(table["rows"][0]["cells"][0], "m");
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[tokio::test]
async fn serving_needs_loopback_and_a_token_in_the_header() {
    let server = FakeApiServer::new();
    assert!(matches!(
        server.serve(([0, 0, 0, 0], 0).into()).await,
        Err(FakeError::NotLoopback(_))
    ));
    assert!(matches!(
        server
            .serve_with_token(([127, 0, 0, 1], 0).into(), "has space")
            .await,
        Err(FakeError::InvalidToken)
    ));
    let served = ok(server
        .serve_with_token(([127, 0, 0, 1], 0).into(), "secret")
        .await);
    let kubeconfig = served.kubeconfig();
    // The URL carries no token; the user entry does, and the CA is trusted.
    assert!(kubeconfig.contains(&format!("server: \"https://{}\"", served.addr())));
    assert!(!kubeconfig.contains("/t/"));
    assert!(kubeconfig.contains("token: \"secret\""));
    assert!(kubeconfig.contains("certificate-authority-data: "));
    let client = ok(served.client().await);
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    ok(cms
        .create(&PostParams::default(), &cm("default", "c"))
        .await);
    let kc = ok(kube::config::Kubeconfig::from_yaml(&kubeconfig));
    let with_token = |token: Option<&str>| {
        let mut kc = kc.clone();
        for u in &mut kc.auth_infos {
            if let Some(a) = u.auth_info.as_mut() {
                a.token = token.map(|t| t.to_string().into());
            }
        }
        kc
    };
    // A wrong token is 401; no token is the anonymous user, whom RBAC forbids all but the
    // public paths (403, worded as kube-apiserver words it).
    let config = ok(kube::Config::from_custom_kubeconfig(
        with_token(Some("wrong")),
        &Default::default(),
    )
    .await);
    let wrong: Api<ConfigMap> = Api::default_namespaced(ok(kube::Client::try_from(config)));
    assert_eq!(code(wrong.get("c").await), Some(401));
    let config =
        ok(kube::Config::from_custom_kubeconfig(with_token(None), &Default::default()).await);
    let anonymous_client = ok(kube::Client::try_from(config));
    let anonymous: Api<ConfigMap> = Api::default_namespaced(anonymous_client.clone());
    match anonymous.get("c").await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
            assert_eq!(
                s.message,
                r#"configmaps "c" is forbidden: User "system:anonymous" cannot get resource "configmaps" in API group "" in the namespace "default""#
            );
        }
        other => panic!("anonymous get: {other:?}"),
    }
    let version = ok(anonymous_client.apiserver_version().await);
    assert_eq!(version.major, "1");
    // The token is never read from the path.
    let raw =
        ok(http::Request::get("/t/secret/api/v1/namespaces/default/configmaps/c").body(Vec::new()));
    assert!(anonymous_client.request::<Value>(raw).await.is_err());
    served.shutdown().await;
}

/// Sends a raw JSON request; the status code and the body.
async fn send(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let req = ok(http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map(|b| ok(serde_json::to_vec(&b))).unwrap_or_default()));
    match client.request::<Value>(req).await {
        Ok(v) => (200, v),
        Err(kube::Error::Api(s)) => (s.code, ok(serde_json::to_value(&s))),
        Err(e) => panic!("{method} {path}: {e}"),
    }
}

const AUTHN: &str = "/apis/authentication.k8s.io/v1";
const AUTHZ: &str = "/apis/authorization.k8s.io/v1";

#[tokio::test]
async fn reviews_are_computed_not_stored() {
    let server = ok(FakeApiServer::with_resources(REVIEW_KINDS));
    let served = ok(server
        .serve_with_token(([127, 0, 0, 1], 0).into(), "the-token")
        .await);
    let client = ok(served.client().await);
    let user = json!({"username": "admin", "uid": "admin",
                      "groups": ["system:masters", "system:authenticated"]});

    // TokenReview: only the server's token authenticates, for the API audience.
    let tr = |token: &str| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                  "spec": {"token": token}})
    };
    let (code, answer) = send(
        &client,
        "POST",
        &format!("{AUTHN}/tokenreviews"),
        Some(tr("the-token")),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(
        answer["status"],
        json!({"authenticated": true, "user": user, "audiences": [API_AUDIENCE]})
    );
    assert_eq!(answer["spec"]["token"], "the-token");
    assert_eq!(
        answer["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:token": {}}})
    );
    let (_, answer) = send(
        &client,
        "POST",
        &format!("{AUTHN}/tokenreviews"),
        Some(tr("other")),
    )
    .await;
    assert_eq!(
        answer["status"],
        json!({"user": {}, "error": "invalid bearer token"})
    );
    let mut wrong_audience = tr("the-token");
    wrong_audience["spec"]["audiences"] = json!(["elsewhere"]);
    let (_, answer) = send(
        &client,
        "POST",
        &format!("{AUTHN}/tokenreviews"),
        Some(wrong_audience),
    )
    .await;
    assert_eq!(answer["status"]["error"], "invalid bearer token");
    let (code, status) = send(
        &client,
        "POST",
        &format!("{AUTHN}/tokenreviews"),
        Some(json!({"spec": {}})),
    )
    .await;
    assert_eq!(
        (code, status["message"].as_str()),
        (
            400,
            Some("token is required for TokenReview in authentication")
        )
    );

    // In process there is no token: none authenticates.
    let in_process = ok(server.client());
    let (_, answer) = send(
        &in_process,
        "POST",
        &format!("{AUTHN}/tokenreviews"),
        Some(tr("the-token")),
    )
    .await;
    assert_eq!(answer["status"]["error"], "invalid bearer token");

    // SelfSubjectReview: who is asking.
    let (code, answer) = send(
        &client,
        "POST",
        &format!("{AUTHN}/selfsubjectreviews"),
        Some(json!({})),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(answer["status"]["userInfo"], user);
    assert_eq!(answer["kind"], "SelfSubjectReview");

    // Access reviews: everything is allowed; the real validation holds.
    let sar = json!({"spec": {"user": "someone", "resourceAttributes": {"verb": "list", "resource": "nodes"}}});
    let (code, answer) = send(
        &client,
        "POST",
        &format!("{AUTHZ}/subjectaccessreviews"),
        Some(sar),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(answer["status"]["allowed"], true);
    assert!(
        answer["status"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("authorizes every request"))
    );
    let (code, status) = send(
        &client,
        "POST",
        &format!("{AUTHZ}/subjectaccessreviews"),
        Some(json!({"spec": {"user": "someone"}})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#".authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"#
    );
    let (code, status) = send(&client, "POST", &format!("{AUTHZ}/subjectaccessreviews"),
        Some(json!({"metadata": {"name": "n"}, "spec": {"groups": ["g"], "nonResourceAttributes": {"path": "/x", "verb": "get"}}}))).await;
    assert_eq!(code, 422);
    let message = status["message"].as_str().unwrap_or("");
    assert!(message.starts_with(r#".authorization.k8s.io "" is invalid: metadata: Invalid value: {"name":"n","managedFields":[{"manager":"#), "{message}");
    assert!(message.ends_with(r#""fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:groups":{},"f:nonResourceAttributes":{".":{},"f:path":{},"f:verb":{}}}}}]}: must be empty"#), "{message}");
    let ssar = json!({"spec": {"resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}}});
    let (code, answer) = send(
        &client,
        "POST",
        &format!("{AUTHZ}/selfsubjectaccessreviews"),
        Some(ssar),
    )
    .await;
    assert_eq!((code, &answer["status"]["allowed"]), (200, &json!(true)));

    // LocalSubjectAccessReview: the namespaces must agree.
    let lsar = |ns: &str| json!({"spec": {"user": "someone", "resourceAttributes": {"namespace": ns, "verb": "get", "resource": "pods"}}});
    let local = format!("{AUTHZ}/namespaces/default/localsubjectaccessreviews");
    let (code, answer) = send(&client, "POST", &local, Some(lsar("default"))).await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["metadata"]["namespace"], "default");
    assert_eq!(answer["status"]["allowed"], true);
    let (code, status) = send(&client, "POST", &local, Some(lsar("other"))).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#".authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace"#
    );
    let mut elsewhere = lsar("other");
    elsewhere["metadata"] = json!({"namespace": "other"});
    let (code, _) = send(&client, "POST", &local, Some(elsewhere)).await;
    assert_eq!(code, 400);

    // SelfSubjectRulesReview: everything, complete.
    let (code, answer) = send(
        &client,
        "POST",
        &format!("{AUTHZ}/selfsubjectrulesreviews"),
        Some(json!({"spec": {"namespace": "default"}})),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(answer["status"]["incomplete"], false);
    assert_eq!(
        answer["status"]["resourceRules"],
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
    );
    let (code, status) = send(
        &client,
        "POST",
        &format!("{AUTHZ}/selfsubjectrulesreviews"),
        Some(json!({"spec": {}})),
    )
    .await;
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some("no namespace on request"))
    );

    // Nothing is stored or listable; only create is served.
    for (method, path, want) in [
        ("GET", format!("{AUTHN}/tokenreviews"), 405),
        ("GET", format!("{AUTHN}/tokenreviews?watch=true"), 405),
        ("DELETE", format!("{AUTHN}/tokenreviews"), 405),
        ("GET", format!("{AUTHN}/tokenreviews/x"), 404),
        ("DELETE", format!("{AUTHN}/tokenreviews/x"), 404),
        ("GET", format!("{AUTHN}/watch/tokenreviews"), 404),
        ("POST", format!("{AUTHN}/tokenreviews/x"), 404),
    ] {
        let (code, _) = send(&client, method, &path, (method == "POST").then(|| tr("x"))).await;
        assert_eq!(code, want, "{method} {path}");
    }
    let (_, discovery) = send(&client, "GET", AUTHZ, None).await;
    for r in discovery["resources"].as_array().into_iter().flatten() {
        assert_eq!(r["verbs"], json!(["create"]), "{r}");
    }
    served.shutdown().await;
}

#[test]
fn the_action_log_is_bounded_in_requests_and_in_body_bytes() {
    let action = |name: &str| Action {
        verb: "create".into(),
        group: String::new(),
        version: "v1".into(),
        resource: "configmaps".into(),
        subresource: None,
        namespace: Some("default".into()),
        name: Some(name.into()),
        body: Some(serde_json::json!({"metadata": {"name": name}})),
        patch_type: None,
        query: Vec::new(),
    };
    let names = |log: &crate::ActionLog| -> Vec<String> {
        log.actions().into_iter().filter_map(|a| a.name).collect()
    };
    let mut log = crate::ActionLog::new(3, 100);
    for (name, size) in [("a", 10), ("b", 10), ("c", 10), ("d", 10)] {
        log.push(action(name), size);
    }
    assert_eq!(
        names(&log),
        ["b", "c", "d"],
        "the oldest beyond the count go"
    );
    log.push(action("e"), 90);
    assert_eq!(
        names(&log),
        ["d", "e"],
        "the oldest beyond the byte budget go"
    );
    log.push(action("huge"), 101);
    let kept = log.actions();
    let huge = kept.last().cloned();
    assert_eq!(huge.as_ref().and_then(|a| a.name.as_deref()), Some("huge"));
    assert_eq!(
        huge.and_then(|a| a.body),
        None,
        "a body over the whole budget is not kept"
    );
    assert_eq!(names(&log), ["d", "e", "huge"]);
    log.clear();
    log.push(action("f"), 100);
    assert_eq!(names(&log), ["f"]);
    let mut off = crate::ActionLog::new(0, 100);
    off.push(action("g"), 1);
    assert!(off.actions().is_empty());
}
