//! The controllers the in-memory server runs (`with_controllers`), through a `kube::Client`:
//! the garbage collector's background, foreground and orphan propagation, dangling and
//! cross-namespace owner references, for built-ins and custom resources; the namespace
//! controller's Terminating phase, refusal of new content, conditions and `/finalize`; and the
//! binary's `--controllers` flag. The same scenarios run against kube-apiserver +
//! kube-controller-manager in `tests/tests/controllers_real.rs`.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube_fake_apiserver::{Controller, FakeApiServer, parse_controllers};
use serde_json::json;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn server() -> FakeApiServer {
    ok(FakeApiServer::builder()
        .with_controllers([Controller::GarbageCollector, Controller::Namespace])
        .build())
}

fn owned_by(uid: &str, name: &str, kind: &str, api_version: &str, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        block_owner_deletion: Some(block),
        controller: None,
    }
}

fn cm(name: &str, owners: Vec<OwnerReference>, finalizers: &[&str]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: (!owners.is_empty()).then_some(owners),
            finalizers: (!finalizers.is_empty())
                .then(|| finalizers.iter().map(|f| f.to_string()).collect()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

async fn create(api: &Api<ConfigMap>, obj: ConfigMap) -> ConfigMap {
    ok(api.create(&PostParams::default(), &obj).await)
}

fn uid(o: &ConfigMap) -> String {
    o.metadata.uid.clone().unwrap_or_default()
}

fn owner_of(o: &ConfigMap, block: bool) -> OwnerReference {
    owned_by(
        &uid(o),
        o.metadata.name.as_deref().unwrap_or(""),
        "ConfigMap",
        "v1",
        block,
    )
}

fn dp(policy: kube::api::PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(policy),
        ..DeleteParams::default()
    }
}

#[test]
fn controller_names_are_kube_controller_managers() {
    assert_eq!(
        ok(parse_controllers(
            "garbagecollector,namespace,coordinatedleaderelection"
        )),
        Controller::ALL
    );
    let e = parse_controllers("garbagecollector,replicaset").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown controller \"replicaset\" (known: garbagecollector, namespace, coordinatedleaderelection)"
    );
    // The default is the namespace controller alone, as before the garbage collector existed.
    assert_eq!(FakeApiServer::new().controllers(), [Controller::Namespace]);
    let none = ok(FakeApiServer::builder().with_controllers([]).build());
    assert!(none.controllers().is_empty());
}

#[tokio::test]
async fn background_deletion_collects_dependents_and_watches_see_it() {
    let server = server();
    let cms: Api<ConfigMap> = Api::default_namespaced(ok(server.client()));
    let owner = create(&cms, cm("owner", vec![], &[])).await;
    let child = create(&cms, cm("child", vec![owner_of(&owner, false)], &[])).await;
    let grandchild = create(&cms, cm("grandchild", vec![owner_of(&child, false)], &[])).await;
    let from = owner.metadata.resource_version.clone().unwrap_or_default();
    let mut events = ok(cms.watch(&WatchParams::default(), &from).await).boxed();
    ok(cms.delete("owner", &DeleteParams::default()).await);
    assert!(ok(cms.get_opt("child").await).is_none());
    assert!(ok(cms.get_opt("grandchild").await).is_none());
    // The collector's deletes reach watchers with their own resourceVersions.
    let mut deleted = Vec::new();
    let mut last_rv = 0u64;
    while deleted.len() < 3 {
        let Some(e) =
            ok(tokio::time::timeout(std::time::Duration::from_secs(5), events.try_next()).await)
                .unwrap_or_else(|e| panic!("{e}"))
        else {
            break;
        };
        if let WatchEvent::Deleted(o) = e {
            let rv: u64 = o
                .metadata
                .resource_version
                .unwrap_or_default()
                .parse()
                .unwrap_or(0);
            assert!(rv > last_rv, "resourceVersions increase");
            last_rv = rv;
            deleted.push(o.metadata.name.unwrap_or_default());
        }
    }
    assert_eq!(deleted, ["owner", "child", "grandchild"]);
    let _ = grandchild;
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let server = server();
    let cms: Api<ConfigMap> = Api::default_namespaced(ok(server.client()));
    let owner = create(&cms, cm("owner", vec![], &[])).await;
    create(
        &cms,
        cm(
            "blocker",
            vec![owner_of(&owner, true)],
            &["example.com/hold"],
        ),
    )
    .await;
    create(&cms, cm("free", vec![owner_of(&owner, false)], &[])).await;
    let answer = ok(cms
        .delete("owner", &dp(kube::api::PropagationPolicy::Foreground))
        .await);
    let pending = answer
        .left()
        .unwrap_or_else(|| panic!("the owner must stay"));
    assert_eq!(
        pending.metadata.finalizers,
        Some(vec!["foregroundDeletion".into()])
    );
    // The free dependent is gone; the blocking one is being deleted and holds the owner.
    assert!(ok(cms.get_opt("free").await).is_none());
    let blocker = ok(cms.get("blocker").await);
    assert!(blocker.metadata.deletion_timestamp.is_some());
    let owner_now = ok(cms.get("owner").await);
    assert_eq!(
        owner_now.metadata.finalizers,
        Some(vec!["foregroundDeletion".into()])
    );
    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    ok(cms.patch("blocker", &PatchParams::default(), &patch).await);
    assert!(ok(cms.get_opt("blocker").await).is_none());
    assert!(ok(cms.get_opt("owner").await).is_none());
}

#[tokio::test]
async fn orphan_deletion_strips_owner_references() {
    let server = server();
    let cms: Api<ConfigMap> = Api::default_namespaced(ok(server.client()));
    let owner = create(&cms, cm("owner", vec![], &[])).await;
    let other = create(&cms, cm("other", vec![], &[])).await;
    create(
        &cms,
        cm(
            "child",
            vec![owner_of(&owner, true), owner_of(&other, false)],
            &[],
        ),
    )
    .await;
    ok(cms
        .delete("owner", &dp(kube::api::PropagationPolicy::Orphan))
        .await);
    assert!(ok(cms.get_opt("owner").await).is_none());
    let child = ok(cms.get("child").await);
    let owners: Vec<String> = child
        .metadata
        .owner_references
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(owners, ["other"]);
}

#[tokio::test]
async fn dangling_and_stale_references_and_partial_owners() {
    let server = server();
    let cms: Api<ConfigMap> = Api::default_namespaced(ok(server.client()));
    let owner = create(&cms, cm("owner", vec![], &[])).await;
    let missing = owned_by(
        "00000000-0000-0000-0000-000000000001",
        "never",
        "ConfigMap",
        "v1",
        false,
    );
    let stale = owned_by(
        "00000000-0000-0000-0000-000000000002",
        "owner",
        "ConfigMap",
        "v1",
        false,
    );
    create(&cms, cm("dangling", vec![missing.clone()], &[])).await;
    create(&cms, cm("stale", vec![stale], &[])).await;
    create(
        &cms,
        cm("partial", vec![missing, owner_of(&owner, false)], &[]),
    )
    .await;
    assert!(ok(cms.get_opt("dangling").await).is_none());
    assert!(ok(cms.get_opt("stale").await).is_none());
    let partial = ok(cms.get("partial").await);
    let owners: Vec<String> = partial
        .metadata
        .owner_references
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(owners, ["owner"]);
    // An owner of a kind nothing serves: left alone (the real collector keeps retrying).
    let unknown = owned_by(
        "00000000-0000-0000-0000-000000000003",
        "x",
        "Nothing",
        "example.com/v1",
        false,
    );
    create(&cms, cm("unresolvable", vec![unknown], &[])).await;
    assert!(ok(cms.get_opt("unresolvable").await).is_some());
}

#[tokio::test]
async fn owners_across_namespaces_and_scopes() {
    let server = server();
    let client = ok(server.client());
    let nss: Api<Namespace> = Api::all(client.clone());
    for n in ["one", "two"] {
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(n.into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        ok(nss.create(&PostParams::default(), &ns).await);
    }
    let one: Api<ConfigMap> = Api::namespaced(client.clone(), "one");
    let two: Api<ConfigMap> = Api::namespaced(client.clone(), "two");
    let roles: Api<Node> = Api::all(client.clone());
    let owner = create(&one, cm("owner", vec![], &[])).await;
    // A namespaced owner is looked up in the dependent's namespace: absent there.
    create(&two, cm("elsewhere", vec![owner_of(&owner, false)], &[])).await;
    assert!(ok(two.get_opt("elsewhere").await).is_none());
    assert!(ok(one.get_opt("owner").await).is_some());
    // A cluster-scoped dependent naming a namespaced owner is left alone.
    let invalid = Node {
        metadata: ObjectMeta {
            name: Some("invalid".into()),
            owner_references: Some(vec![owner_of(&owner, false)]),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    ok(roles.create(&PostParams::default(), &invalid).await);
    ok(one.delete("owner", &DeleteParams::default()).await);
    assert!(ok(roles.get_opt("invalid").await).is_some());
    // A cluster-scoped owner of namespaced dependents.
    let cluster_owner = ok(roles
        .create(
            &PostParams::default(),
            &Node {
                metadata: ObjectMeta {
                    name: Some("owner".into()),
                    ..ObjectMeta::default()
                },
                ..Node::default()
            },
        )
        .await);
    let r = owned_by(
        cluster_owner.metadata.uid.as_deref().unwrap_or(""),
        "owner",
        "Node",
        "v1",
        false,
    );
    create(&two, cm("of-cluster", vec![r], &[])).await;
    assert!(ok(two.get_opt("of-cluster").await).is_some());
    ok(roles.delete("owner", &DeleteParams::default()).await);
    assert!(ok(two.get_opt("of-cluster").await).is_none());
}

#[tokio::test]
async fn custom_resources_own_and_are_owned() {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.gc.example.com"},
        "spec": {"group": "gc.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let server = ok(FakeApiServer::builder()
        .with_controllers([Controller::GarbageCollector])
        .object(crd)
        .build());
    let client = ok(server.client());
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("gc.example.com", "v1", "Gadget"),
        "gadgets",
    );
    let gadgets: Api<DynamicObject> = Api::default_namespaced_with(client.clone(), &ar);
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let g: DynamicObject = ok(serde_json::from_value(json!({
        "apiVersion": "gc.example.com/v1", "kind": "Gadget", "metadata": {"name": "owner"}})));
    let g = ok(gadgets.create(&PostParams::default(), &g).await);
    let r = owned_by(
        g.metadata.uid.as_deref().unwrap_or(""),
        "owner",
        "Gadget",
        "gc.example.com/v1",
        true,
    );
    create(&cms, cm("of-gadget", vec![r], &["example.com/hold"])).await;
    ok(gadgets
        .delete("owner", &dp(kube::api::PropagationPolicy::Foreground))
        .await);
    assert!(
        ok(gadgets.get_opt("owner").await).is_some(),
        "held by its blocking dependent"
    );
    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    ok(cms
        .patch("of-gadget", &PatchParams::default(), &patch)
        .await);
    assert!(ok(gadgets.get_opt("owner").await).is_none());
    // A custom resource owned by a ConfigMap.
    let cmo = create(&cms, cm("cm-owner", vec![], &[])).await;
    let g: DynamicObject = ok(serde_json::from_value(json!({
        "apiVersion": "gc.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "of-cm", "ownerReferences": [owner_of(&cmo, false)]}})));
    ok(gadgets.create(&PostParams::default(), &g).await);
    ok(cms.delete("cm-owner", &DeleteParams::default()).await);
    assert!(ok(gadgets.get_opt("of-cm").await).is_none());
}

#[tokio::test]
async fn without_the_collector_nothing_is_collected() {
    let server = ok(FakeApiServer::builder().with_controllers([]).build());
    let cms: Api<ConfigMap> = Api::default_namespaced(ok(server.client()));
    let owner = create(&cms, cm("owner", vec![], &[])).await;
    create(&cms, cm("child", vec![owner_of(&owner, false)], &[])).await;
    let answer = ok(cms
        .delete("owner", &dp(kube::api::PropagationPolicy::Orphan))
        .await);
    assert!(
        answer.is_left(),
        "the orphan finalizer holds it: nothing removes it"
    );
    assert!(ok(cms.get_opt("child").await).is_some());
}

#[tokio::test]
async fn namespace_deletion_empties_reports_and_finalizes() {
    let server = server();
    let client = ok(server.client());
    let nss: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("doomed".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    ok(nss.create(&PostParams::default(), &ns).await);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    create(&cms, cm("plain", vec![], &[])).await;
    create(&cms, cm("held", vec![], &["example.com/hold"])).await;
    let answer = ok(nss.delete("doomed", &DeleteParams::default()).await);
    let pending = answer
        .left()
        .unwrap_or_else(|| panic!("the namespace must stay"));
    assert_eq!(
        pending.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert_eq!(
        pending.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_string()])
    );
    let refused = cms
        .create(&PostParams::default(), &cm("late", vec![], &[]))
        .await;
    match refused {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403);
            assert_eq!(
                s.message,
                "configmaps \"late\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
            );
        }
        other => panic!("expected a 403, got {other:?}"),
    }
    assert!(ok(cms.get_opt("plain").await).is_none());
    let now = ok(nss.get("doomed").await);
    let conditions: Vec<(String, String, String, String)> = now
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            (
                c.type_,
                c.status,
                c.reason.unwrap_or_default(),
                c.message.unwrap_or_default(),
            )
        })
        .collect();
    let c = |t: &str, s: &str, r: &str, m: &str| {
        (t.to_string(), s.to_string(), r.to_string(), m.to_string())
    };
    assert_eq!(
        conditions,
        [
            c(
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered"
            ),
            c(
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed"
            ),
            c(
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization"
            ),
            c(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 1 resource instances"
            ),
            c(
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
            ),
        ]
    );
    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    ok(cms.patch("held", &PatchParams::default(), &patch).await);
    assert!(ok(nss.get_opt("doomed").await).is_none());
}

#[tokio::test]
async fn finalize_by_hand_without_the_namespace_controller() {
    let server = ok(FakeApiServer::builder().with_controllers([]).build());
    let client = ok(server.client());
    let nss: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("stuck".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    ok(nss.create(&PostParams::default(), &ns).await);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "stuck");
    create(&cms, cm("left", vec![], &[])).await;
    ok(nss.delete("stuck", &DeleteParams::default()).await);
    let mut stuck = ok(nss.get("stuck").await);
    assert_eq!(
        stuck.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Terminating")
    );
    // `kubectl replace --raw /api/v1/namespaces/stuck/finalize`: the namespace goes at once.
    stuck.spec = Some(Default::default());
    let body = ok(serde_json::to_vec(&stuck));
    let req = ok(http::Request::put("/api/v1/namespaces/stuck/finalize")
        .header("content-type", "application/json")
        .body(body));
    let answer: serde_json::Value = ok(client.request(req).await);
    assert_eq!(answer["metadata"]["name"], "stuck");
    assert!(ok(nss.get_opt("stuck").await).is_none());
    // Only PUT is served there.
    let req = ok(http::Request::get("/api/v1/namespaces/default/finalize").body(Vec::new()));
    match client.request::<serde_json::Value>(req).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 405),
        other => panic!("expected a 405, got {other:?}"),
    }
}

#[test]
fn the_binary_names_the_flag_of_an_unknown_controller() {
    let out = ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_kube-fake-apiserver"))
            .args(["--controllers=garbagecollector,deployment", "--port", "0"])
            .output(),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--controllers") && stderr.contains("unknown controller \"deployment\""),
        "{stderr}"
    );
}

#[tokio::test]
async fn lease_candidate_names_are_config_map_keys() {
    // kube-apiserver validates LeaseCandidate names as ConfigMap keys (`ValidLeaseCandidateName`),
    // so `<lease>-<hostname>_<uuid>` is a valid name there, though not a DNS subdomain.
    let server = ok(FakeApiServer::builder()
        .with_controllers([Controller::CoordinatedLeaderElection])
        .build());
    let client = ok(server.client());
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("coordination.k8s.io", "v1beta1", "LeaseCandidate"),
        "leasecandidates",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let candidate = |name: &str| -> DynamicObject {
        ok(serde_json::from_value(json!({
            "apiVersion": "coordination.k8s.io/v1beta1",
            "kind": "LeaseCandidate",
            "metadata": {"name": name},
            "spec": {
                "leaseName": "demo",
                "binaryVersion": "1.37.0",
                "emulationVersion": "1.37.0",
                "strategy": "OldestEmulationVersion",
                "renewTime": "2026-11-27T00:00:00.000000Z"
            }
        })))
    };
    let made = ok(api
        .create(&PostParams::default(), &candidate("demo-Host_0f3c.1"))
        .await);
    assert_eq!(made.metadata.name.as_deref(), Some("demo-Host_0f3c.1"));
    match api
        .create(&PostParams::default(), &candidate("demo/x"))
        .await
    {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422);
            assert!(
                s.message
                    .contains("a valid config key must consist of alphanumeric characters"),
                "{}",
                s.message
            );
        }
        other => panic!("expected a 422, got {other:?}"),
    }
}
