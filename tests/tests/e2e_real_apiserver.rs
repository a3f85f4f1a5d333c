//! End to end against a real kube-apiserver v1.37 with its own etcd, started by
//! [`tests::apiserver::RealApiServer`].
//!
//! The typed-client tests share one server, started on first use and kept in a static
//! [`OnceCell`]: a start costs ~3–5 s and ~400 MB of memory, and on two cores one server per test
//! would dominate the run. Each test makes its own `kube::Client` (a client belongs to the Tokio
//! runtime it was made in, and every `#[tokio::test]` has its own) and its own namespace
//! (`e2e-<run>-<test>`; namespaces never finish deleting on a bare apiserver, so none is deleted).
//! Cluster-scoped objects carry the labels `e2e-run=<run>` and `test=<test>`, and every list or
//! delete_collection selects on them. A static is never dropped: the shared server stops when the
//! test process exits, because its supervisors see their stdin pipes close (the same mechanism
//! that `a_killed_test_process_leaves_no_server_behind` proves for SIGKILL).
//!
//! The tests of the harness itself (CRD manifests plus a restart, teardown in a panicking task,
//! a SIGKILLed test process) start servers of their own.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use either::Either;
use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec, MydemoStatus};
use example_crddemo::pkg::client::applyconfiguration::crddemo::v1::{
    MydemoApplyConfiguration, MydemoSpecApplyConfiguration, MydemoStatusApplyConfiguration,
    extract_mydemo,
};
use example_crddemo::pkg::client::clientset::versioned::Clientset as DemoClientset;
use example_crddemo::pkg::client::clientset::versioned::typed::crddemo::v1::mydemo::MydemoClient;
use futures::StreamExt;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use kube::CustomResourceExt;
use kube::api::{
    Api, DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::api_status::{code, is_already_exists, is_conflict, is_not_found};
use serde_json::json;
use tests::apiserver::{
    self, BIN_DIR_ENV, RealApiServer, apply_crd, process_alive, wait_crd_established,
};
use tests::e2e::{Timer, init_tracing, run_id};
use tests::fixtures::crd::apis::example::v1::{
    ClusterTestType, ClusterTestTypeSpec, ClusterTestTypeStatus,
};
use tests::fixtures::crd::client::applyconfiguration::example::v1::{
    ClusterTestTypeApplyConfiguration, ClusterTestTypeSpecApplyConfiguration,
};
use tests::fixtures::crd::client::clientset::versioned::Clientset as CrdClientset;
use tokio::sync::OnceCell;

const MYDEMO_CRD: &str = "mydemos.crddemo.k8s.io";
const CLUSTER_TEST_TYPE_CRD: &str = "clustertesttypes.example.crd.code-generator.k8s.io";
const CHILD_ENV: &str = "KUBE_CODEGEN_E2E_CHILD";
const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Shared server, namespaces, timing
// ---------------------------------------------------------------------------------------------

static SHARED: OnceCell<Result<RealApiServer, String>> = OnceCell::const_new();

/// The shared server, with the generated `Mydemo` and `ClusterTestType` CRDs established.
async fn shared() -> &'static RealApiServer {
    let server = SHARED
        .get_or_init(|| async {
            init_tracing();
            let server = RealApiServer::start()
                .await
                .map_err(|e| format!("starting the real API server: {e}"))?;
            eprintln!(
                "[e2e] shared kube-apiserver {} ready in {:.2?}",
                server.url(),
                server.started_in()
            );
            let client = server.client().map_err(|e| e.to_string())?;
            for crd in generated_crds() {
                let name = crd.metadata.name.clone().unwrap_or_default();
                apply_crd(&client, &crd)
                    .await
                    .map_err(|e| format!("applying CRD {name}: {e}"))?;
                wait_crd_established(&client, &name)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok(server)
        })
        .await;
    match server {
        Ok(server) => server,
        Err(e) => panic!("{e}"),
    }
}

/// A client of the shared server and a fresh namespace for one test.
struct Env {
    client: kube::Client,
    ns: String,
    _timer: Timer,
}

async fn env(test: &'static str) -> Env {
    let timer = Timer::new(test);
    let server = shared().await;
    let client = server.client().unwrap();
    let ns = format!("e2e-{}-{}", run_id(), test.replace('_', "-"));
    let ns = ns[..ns.len().min(63)].trim_end_matches('-').to_string();
    tests::e2e::create_namespace(&client, &ns).await.unwrap();
    Env {
        client,
        ns,
        _timer: timer,
    }
}

impl Env {
    fn mydemos(&self) -> MydemoClient {
        DemoClientset::new(self.client.clone())
            .crddemo_v1()
            .mydemos(&self.ns)
    }
}

// ---------------------------------------------------------------------------------------------
// CRDs and objects
// ---------------------------------------------------------------------------------------------

/// The CRDs the typed-client tests run on, as kube-codegen generated them (`K::crd()`, the same
/// documents as `example-crddemo/crd/mydemo.yaml` and
/// `tests/fixtures/crd/crd/clustertesttypes.example.crd.code-generator.k8s.io.yaml`): the
/// namespaced `Mydemo` with a status subresource, and the `crd` fixture's cluster-scoped
/// `ClusterTestType` with status and scale subresources. Running every verb against them proves
/// the generator's schema, scope, subresources and approval annotation on the real server.
fn generated_crds() -> [CustomResourceDefinition; 2] {
    let crds = [Mydemo::crd(), ClusterTestType::crd()];
    assert_eq!(
        crds.each_ref().map(|c| c.metadata.name.as_deref()),
        [Some(MYDEMO_CRD), Some(CLUSTER_TEST_TYPE_CRD)]
    );
    let scale = crds[1].spec.versions[0]
        .subresources
        .as_ref()
        .and_then(|s| s.scale.as_ref())
        .expect("the generated ClusterTestType CRD has a scale subresource");
    assert_eq!(
        (
            scale.spec_replicas_path.as_str(),
            scale.status_replicas_path.as_str()
        ),
        (".spec.replicas", ".status.replicas")
    );
    crds
}

fn labels(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn mydemo(name: &str, port: i32, label_pairs: &[(&str, &str)]) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: labels(label_pairs),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "10.0.0.1".into(),
            port,
        },
        status: None,
    }
}

fn ready(reason: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: reason.into(),
        message: "e2e".into(),
        observed_generation: Some(1),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
    }
}

fn names(items: &[Mydemo]) -> Vec<String> {
    let mut names: Vec<String> = items
        .iter()
        .filter_map(|d| d.metadata.name.clone())
        .collect();
    names.sort();
    names
}

fn rv(meta: &ObjectMeta) -> String {
    meta.resource_version.clone().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Mydemo (namespaced, status subresource): every verb of the generated client
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_create_get_delete() {
    let env = env("create_get_delete").await;
    let demos = env.mydemos();

    let created = demos
        .create(&mydemo("one", 8080, &[]), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some(env.ns.as_str()));
    assert!(created.metadata.uid.is_some(), "{created:?}");
    assert!(!rv(&created.metadata).is_empty());
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.spec.port, 8080);

    let got = demos.get("one", &GetParams::default()).await.unwrap();
    assert_eq!(got, created);

    let err = demos
        .create(&mydemo("one", 1, &[]), &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_already_exists(&err), "{err:?}");

    // A dry run is validated and answered, but nothing is stored.
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    demos.create(&mydemo("dry", 9, &[]), &dry).await.unwrap();
    let err = demos.get("dry", &GetParams::default()).await.unwrap_err();
    assert!(is_not_found(&err), "{err:?}");

    // The schema is enforced: port must be 1..=65535.
    let err = demos
        .create(&mydemo("bad", 70000, &[]), &PostParams::default())
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(422), "{err:?}");

    // A custom resource without finalizers is gone at once; kube-apiserver answers with a
    // `Success` Status naming it (not with the object, as it does for e.g. pods).
    let deleted = demos.delete("one", &DeleteParams::default()).await.unwrap();
    match deleted {
        Either::Right(status) => {
            assert!(status.is_success(), "{status:?}");
            let details = status.details.unwrap();
            assert_eq!(details.name, "one");
            assert_eq!(Some(details.uid), created.metadata.uid);
        }
        Either::Left(obj) => panic!("expected a Status, got the object {obj:?}"),
    }
    let err = demos.get("one", &GetParams::default()).await.unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
    let err = demos
        .delete("one", &DeleteParams::default())
        .await
        .unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_list_with_label_selectors_and_pagination() {
    let env = env("list").await;
    let demos = env.mydemos();
    for (name, tier) in [
        ("d0", "a"),
        ("d1", "a"),
        ("d2", "a"),
        ("d3", "b"),
        ("d4", "b"),
    ] {
        let d = mydemo(name, 80, &[("app", "demo"), ("tier", tier)]);
        demos.create(&d, &PostParams::default()).await.unwrap();
    }
    let d5 = mydemo("d5", 80, &[("app", "other")]);
    demos.create(&d5, &PostParams::default()).await.unwrap();

    let select = |selector: &'static str| {
        let demos = demos.clone();
        async move {
            let list = demos
                .list(&ListParams::default().labels(selector))
                .await
                .unwrap();
            names(&list.items)
        }
    };
    assert_eq!(select("tier=a").await, ["d0", "d1", "d2"]);
    assert_eq!(
        select("tier in (a,b)").await,
        ["d0", "d1", "d2", "d3", "d4"]
    );
    assert_eq!(select("app=demo,tier!=a").await, ["d3", "d4"]);
    assert_eq!(select("!tier").await, ["d5"]);
    assert_eq!(select("app notin (demo)").await, ["d5"]);
    assert!(select("tier=c").await.is_empty());

    // Field selectors on custom resources: metadata.name and metadata.namespace.
    let by_name = demos
        .list(&ListParams::default().fields("metadata.name=d4"))
        .await
        .unwrap();
    assert_eq!(names(&by_name.items), ["d4"]);

    // Pagination: limit + continue, until the server returns no continue token.
    let mut pages = Vec::new();
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(2);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = demos.list(&lp).await.unwrap();
        assert!(page.items.len() <= 2, "{page:?}");
        if pages.is_empty() {
            assert_eq!(page.metadata.remaining_item_count, Some(4));
        }
        pages.push(page.items.len());
        seen.extend(names(&page.items));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
        assert!(pages.len() < 10, "pagination does not end: {pages:?}");
    }
    assert_eq!(pages, [2, 2, 2]);
    assert_eq!(seen, ["d0", "d1", "d2", "d3", "d4", "d5"]);

    // All namespaces (""), narrowed by a label.
    let all = DemoClientset::new(env.client.clone())
        .crddemo_v1()
        .mydemos("");
    let list = all
        .list(&ListParams::default().labels("tier=b"))
        .await
        .unwrap();
    let ours: Vec<_> = list
        .items
        .iter()
        .filter(|d| d.metadata.namespace.as_deref() == Some(env.ns.as_str()))
        .collect();
    assert_eq!(ours.len(), 2);
    assert!(!rv_of_list(&list.metadata).is_empty());
}

fn rv_of_list(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta) -> String {
    meta.resource_version.clone().unwrap_or_default()
}

/// Reads `(type, name, port)` from `stream` until the `DELETED` of `last`, or fails after [`WAIT`].
async fn collect_until_deleted(
    stream: &mut kube_codegen_runtime::client::WatchStream<Mydemo>,
    last: &str,
) -> Vec<(String, String, i32)> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let ev = tokio::time::timeout_at(deadline, stream.next())
            .await
            .unwrap_or_else(|_| panic!("no DELETED of {last} within {WAIT:?}; saw {seen:?}"))
            .unwrap_or_else(|| panic!("watch ended early; saw {seen:?}"))
            .unwrap();
        let (kind, obj) = match ev {
            WatchEvent::Added(o) => ("ADDED", o),
            WatchEvent::Modified(o) => ("MODIFIED", o),
            WatchEvent::Deleted(o) => ("DELETED", o),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        };
        let name = obj.metadata.name.clone().unwrap_or_default();
        let done = kind == "DELETED" && name == last;
        seen.push((kind.to_string(), name, obj.spec.port));
        if done {
            return seen;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_watch_sees_changes_after_a_resource_version() {
    let env = env("watch").await;
    let demos = env.mydemos();
    demos
        .create(&mydemo("before", 1, &[]), &PostParams::default())
        .await
        .unwrap();
    let list_rv = rv_of_list(&demos.list(&ListParams::default()).await.unwrap().metadata);

    let wp = WatchParams::default().timeout(60);
    let mut stream = demos.watch(&wp, &list_rv).await.unwrap();
    let created = demos
        .create(&mydemo("w", 100, &[]), &PostParams::default())
        .await
        .unwrap();
    let mut changed = created.clone();
    changed.spec.port = 101;
    demos
        .update(&changed, &PostParams::default())
        .await
        .unwrap();
    demos.delete("w", &DeleteParams::default()).await.unwrap();

    let seen = collect_until_deleted(&mut stream, "w").await;
    let expected = [("ADDED", 100), ("MODIFIED", 101), ("DELETED", 101)]
        .map(|(t, p)| (t.to_string(), "w".to_string(), p));
    assert_eq!(
        seen, expected,
        "'before' predates the watch's resourceVersion"
    );

    // From the creation's resourceVersion: only what happened after it.
    let mut stream = demos.watch(&wp, &rv(&created.metadata)).await.unwrap();
    let seen = collect_until_deleted(&mut stream, "w").await;
    assert_eq!(seen, expected[1..]);

    // Label-selected watch: only matching objects.
    let selected = WatchParams::default().timeout(60).labels("watched=yes");
    let mut stream = demos.watch(&selected, &list_rv).await.unwrap();
    demos
        .create(&mydemo("unwatched", 5, &[]), &PostParams::default())
        .await
        .unwrap();
    demos
        .create(
            &mydemo("watched", 6, &[("watched", "yes")]),
            &PostParams::default(),
        )
        .await
        .unwrap();
    demos
        .delete("watched", &DeleteParams::default())
        .await
        .unwrap();
    let seen = collect_until_deleted(&mut stream, "watched").await;
    assert!(
        seen.iter().all(|(_, name, _)| name == "watched"),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_update_and_conflict_on_a_stale_resource_version() {
    let env = env("update").await;
    let demos = env.mydemos();
    let created = demos
        .create(&mydemo("u", 8080, &[]), &PostParams::default())
        .await
        .unwrap();

    let mut change = created.clone();
    change.spec.port = 9090;
    change
        .metadata
        .labels
        .get_or_insert_default()
        .insert("updated".into(), "yes".into());
    let updated = demos.update(&change, &PostParams::default()).await.unwrap();
    assert_eq!(updated.spec.port, 9090);
    assert_eq!(
        updated.metadata.generation,
        Some(2),
        "a spec change bumps it"
    );
    assert_ne!(rv(&updated.metadata), rv(&created.metadata));
    assert_eq!(
        updated
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("updated")),
        Some(&"yes".to_string())
    );

    // The same change again on the stale copy: 409 Conflict, nothing stored.
    let mut stale = created.clone();
    stale.spec.port = 7070;
    let err = demos
        .update(&stale, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&err), "{err:?}");
    assert_eq!(code(&err), Some(409));
    let got = demos.get("u", &GetParams::default()).await.unwrap();
    assert_eq!(got, updated);

    // A label-only change leaves the generation alone.
    let mut relabel = got.clone();
    relabel
        .metadata
        .labels
        .get_or_insert_default()
        .insert("again".into(), "yes".into());
    let relabeled = demos
        .update(&relabel, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(relabeled.metadata.generation, Some(2));

    // Updating a missing object is NotFound.
    let mut missing = mydemo("missing", 1, &[]);
    missing.metadata.resource_version = Some(rv(&relabeled.metadata));
    let err = demos
        .update(&missing, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_status_changes_only_through_the_status_subresource() {
    let env = env("status").await;
    let demos = env.mydemos();
    let mut with_status = mydemo("s", 8080, &[]);
    with_status.status = Some(MydemoStatus {
        service_name: Some("ignored-on-create".into()),
        ..MydemoStatus::default()
    });
    let created = demos
        .create(&with_status, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.status, None, "create drops status");

    // update: the spec changes, the status does not.
    let mut both = created.clone();
    both.spec.port = 1111;
    both.status = Some(MydemoStatus {
        service_name: Some("ignored-on-update".into()),
        ..MydemoStatus::default()
    });
    let updated = demos.update(&both, &PostParams::default()).await.unwrap();
    assert_eq!(updated.spec.port, 1111);
    assert_eq!(updated.status, None, "update ignores status");
    assert_eq!(updated.metadata.generation, Some(2));

    // update_status: the status changes, the spec does not, nor the generation.
    let mut both = updated.clone();
    both.spec.port = 2222;
    both.status = Some(MydemoStatus {
        observed_generation: Some(2),
        conditions: vec![ready("Exposed")],
        service_name: Some("svc-s".into()),
    });
    let st = demos
        .update_status(&both, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(st.spec.port, 1111, "update_status ignores spec");
    assert_eq!(st.metadata.generation, Some(2));
    let status = st.status.clone().unwrap();
    assert_eq!(status.service_name.as_deref(), Some("svc-s"));
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(status.conditions.len(), 1);
    assert_eq!(
        (
            status.conditions[0].type_.as_str(),
            status.conditions[0].reason.as_str()
        ),
        ("Ready", "Exposed")
    );
    assert_eq!(demos.get("s", &GetParams::default()).await.unwrap(), st);

    // A stale update_status conflicts too.
    let err = demos
        .update_status(&updated, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&err), "{err:?}");

    // apply_status: server-side apply to the status subresource only.
    let status = MydemoApplyConfiguration::new("s", &env.ns)
        .with_status(MydemoStatusApplyConfiguration::default().with_service_name("svc-applied"));
    let applied = demos
        .apply_status(&status, &ApplyOptions::new("e2e-status").force())
        .await
        .unwrap();
    assert_eq!(
        applied
            .status
            .as_ref()
            .and_then(|s| s.service_name.as_deref()),
        Some("svc-applied")
    );
    assert_eq!(applied.spec.port, 1111);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_merge_and_json_patch() {
    let env = env("patch").await;
    let demos = env.mydemos();
    demos
        .create(
            &mydemo("p", 8080, &[("keep", "me")]),
            &PostParams::default(),
        )
        .await
        .unwrap();

    let merge = Patch::Merge(json!({
        "metadata": {"labels": {"patched": "merge"}},
        "spec": {"port": 8443},
    }));
    let merged = demos
        .patch("p", &merge, &PatchParams::default())
        .await
        .unwrap();
    assert_eq!(merged.spec.port, 8443);
    let l = merged.metadata.labels.clone().unwrap_or_default();
    assert_eq!((l["keep"].as_str(), l["patched"].as_str()), ("me", "merge"));

    // A merge patch with null removes the key.
    let remove = Patch::Merge(json!({"metadata": {"labels": {"keep": null}}}));
    let removed = demos
        .patch("p", &remove, &PatchParams::default())
        .await
        .unwrap();
    assert!(
        !removed
            .metadata
            .labels
            .unwrap_or_default()
            .contains_key("keep")
    );

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/port", "value": 8443},
        {"op": "replace", "path": "/spec/ip", "value": "10.0.0.9"},
        {"op": "add", "path": "/metadata/labels/jsonpatch", "value": "yes"},
    ]))
    .unwrap();
    let patched = demos
        .patch("p", &Patch::Json::<()>(ops), &PatchParams::default())
        .await
        .unwrap();
    assert_eq!(patched.spec.ip, "10.0.0.9");
    assert_eq!(
        patched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("jsonpatch")),
        Some(&"yes".to_string())
    );

    // A failing `test` op rejects the whole patch.
    let failing: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/port", "value": 1},
        {"op": "replace", "path": "/spec/ip", "value": "10.9.9.9"},
    ]))
    .unwrap();
    let err = demos
        .patch("p", &Patch::Json::<()>(failing), &PatchParams::default())
        .await
        .unwrap_err();
    eprintln!("[e2e] failing JSON patch test op: {:?}", code(&err));
    let got = demos.get("p", &GetParams::default()).await.unwrap();
    assert_eq!(got.spec.ip, "10.0.0.9");

    // Custom resources do not support strategic merge patch: 415.
    let smp = Patch::Strategic(json!({"spec": {"port": 1}}));
    let err = demos
        .patch("p", &smp, &PatchParams::default())
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(415), "{err:?}");

    // Patching a missing object is NotFound.
    let err = demos
        .patch("nope", &merge, &PatchParams::default())
        .await
        .unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_server_side_apply_with_field_managers() {
    let env = env("apply").await;
    let demos = env.mydemos();

    // Manager a applies a typed configuration: apply creates it.
    let spec = |ip: Option<&str>, port: Option<i32>| {
        let mut s = MydemoSpecApplyConfiguration::default();
        if let Some(ip) = ip {
            s = s.with_ip(ip);
        }
        if let Some(port) = port {
            s = s.with_port(port);
        }
        s
    };
    let config_a = MydemoApplyConfiguration::new("ssa", &env.ns)
        .with_labels([("owner", "a")])
        .with_spec(spec(Some("10.0.0.1"), Some(8080)));
    let created = demos
        .apply(&config_a, &ApplyOptions::new("e2e-manager-a"))
        .await
        .unwrap();
    assert_eq!(created.spec.port, 8080);
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| (m.manager.clone().unwrap_or_default(), m.operation.clone()))
        .collect();
    assert_eq!(
        managers,
        [("e2e-manager-a".to_string(), Some("Apply".to_string()))]
    );

    // Manager b wants another port: a conflict unless forced.
    let config_b = MydemoApplyConfiguration::new("ssa", &env.ns).with_spec(spec(None, Some(9090)));
    let err = demos
        .apply(&config_b, &ApplyOptions::new("e2e-manager-b"))
        .await
        .unwrap_err();
    assert!(is_conflict(&err), "{err:?}");
    let conflicts = kube_codegen_runtime::apply::conflicts(&err);
    assert_eq!(
        conflicts
            .iter()
            .map(|c| (c.manager.as_str(), c.field.as_str()))
            .collect::<Vec<_>>(),
        [("e2e-manager-a", ".spec.port")]
    );
    let forced = demos
        .apply(&config_b, &ApplyOptions::new("e2e-manager-b").force())
        .await
        .unwrap();
    assert_eq!(forced.spec.port, 9090);
    assert_eq!(forced.spec.ip, "10.0.0.1", "a still owns ip");
    assert_eq!(
        extract_mydemo(&forced, "e2e-manager-b").unwrap(),
        config_b,
        "b owns exactly what it applied"
    );

    // a drops its label and changes ip; b's port stays.
    let config_a2 =
        MydemoApplyConfiguration::new("ssa", &env.ns).with_spec(spec(Some("10.0.0.2"), None));
    let reapplied = demos
        .apply(&config_a2, &ApplyOptions::new("e2e-manager-a"))
        .await
        .unwrap();
    assert_eq!(reapplied.spec.ip, "10.0.0.2");
    assert_eq!(reapplied.spec.port, 9090);
    assert!(
        !reapplied
            .metadata
            .labels
            .unwrap_or_default()
            .contains_key("owner"),
        "a field its manager stopped applying is removed"
    );

    // A dry-run apply changes nothing.
    let preview = demos
        .apply(
            &MydemoApplyConfiguration::new("ssa", &env.ns).with_spec(spec(None, Some(1234))),
            &ApplyOptions::new("e2e-manager-b").force().dry_run(),
        )
        .await
        .unwrap();
    assert_eq!(preview.spec.port, 1234);
    let got = demos.get("ssa", &GetParams::default()).await.unwrap();
    assert_eq!(got.spec.port, 9090);

    // Read-modify-apply: a extracts what it owns, changes it and applies it back; b's port is
    // neither claimed nor dropped.
    let current = demos.get("ssa", &GetParams::default()).await.unwrap();
    let mine = extract_mydemo(&current, "e2e-manager-a")
        .unwrap()
        .with_labels([("tier", "web")]);
    let after = demos
        .apply(&mine, &ApplyOptions::new("e2e-manager-a"))
        .await
        .unwrap();
    assert_eq!(after.spec.port, 9090, "b's port untouched");
    assert_eq!(extract_mydemo(&after, "e2e-manager-a").unwrap(), mine);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mydemo_delete_collection_by_label() {
    let env = env("delete_collection").await;
    let demos = env.mydemos();
    for (name, group) in [("x0", "x"), ("x1", "x"), ("x2", "x"), ("y0", "y")] {
        let d = mydemo(name, 80, &[("group", group)]);
        demos.create(&d, &PostParams::default()).await.unwrap();
    }
    let res = demos
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("group=x"),
        )
        .await
        .unwrap();
    match res {
        Either::Left(list) => assert_eq!(names(&list.items), ["x0", "x1", "x2"]),
        Either::Right(status) => eprintln!("[e2e] delete_collection answered {status:?}"),
    }
    let left = demos.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&left.items), ["y0"]);
}

// ---------------------------------------------------------------------------------------------
// ClusterTestType (cluster-scoped, status + scale subresources)
// ---------------------------------------------------------------------------------------------

fn ctt(name: &str, replicas: i32, test: &str) -> ClusterTestType {
    ClusterTestType {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: labels(&[("e2e-run", run_id()), ("test", test)]),
            ..ObjectMeta::default()
        },
        spec: ClusterTestTypeSpec { replicas },
        status: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_test_type_every_verb_and_the_scale_subresource() {
    let env = env("cluster_scoped").await;
    let ctts = CrdClientset::new(env.client.clone())
        .example_v1()
        .cluster_test_types();
    let run = run_id();
    let name = format!("ctt-{run}-a");
    let mine = format!("e2e-run={run},test=ctt");

    // create, get, list
    let created = ctts
        .create(&ctt(&name, 2, "ctt"), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace, None, "cluster-scoped");
    assert_eq!(created.spec.replicas, 2);
    assert_eq!(
        ctts.get(&name, &GetParams::default()).await.unwrap(),
        created
    );
    let list = ctts
        .list(&ListParams::default().labels(&mine))
        .await
        .unwrap();
    assert_eq!(list.items, std::slice::from_ref(&created));

    // watch from the creation's resourceVersion
    let mut events = ctts
        .watch(
            &WatchParams::default().labels(&mine).timeout(60),
            &rv(&created.metadata),
        )
        .await
        .unwrap();

    // get_scale / update_scale
    let scale: Scale = ctts.get_scale(&name, &GetParams::default()).await.unwrap();
    assert_eq!(scale.metadata.name.as_deref(), Some(name.as_str()));
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(0));
    let mut up = scale.clone();
    up.spec.get_or_insert_default().replicas = Some(5);
    let scaled = ctts
        .update_scale(&name, &up, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(scaled.spec.as_ref().and_then(|s| s.replicas), Some(5));
    let after_scale = ctts.get(&name, &GetParams::default()).await.unwrap();
    assert_eq!(
        after_scale.spec.replicas, 5,
        "the scale writes .spec.replicas"
    );
    assert_eq!(after_scale.metadata.generation, Some(2));
    let err = ctts
        .update_scale(&name, &up, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&err), "stale scale: {err:?}");

    // update (and a stale one), update_status
    let mut change = after_scale.clone();
    change.spec.replicas = 6;
    let updated = ctts.update(&change, &PostParams::default()).await.unwrap();
    assert_eq!(updated.spec.replicas, 6);
    let err = ctts
        .update(&after_scale, &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&err), "{err:?}");
    let mut st = updated.clone();
    st.status = Some(ClusterTestTypeStatus {
        ready: true,
        replicas: 2,
    });
    st.spec.replicas = 99;
    let with_status = ctts
        .update_status(&st, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(
        with_status.status,
        Some(ClusterTestTypeStatus {
            ready: true,
            replicas: 2
        })
    );
    assert_eq!(with_status.spec.replicas, 6, "update_status ignores spec");
    // The generated CRD's `statusReplicasPath` (.status.replicas) feeds the scale's status.
    let scale = ctts.get_scale(&name, &GetParams::default()).await.unwrap();
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(2));

    // A status merge patch through the raw Api reaches the typed status and the scale.
    ctts.api()
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 3}})),
        )
        .await
        .unwrap();
    let scale = ctts.get_scale(&name, &GetParams::default()).await.unwrap();
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(3));
    let got = ctts.get(&name, &GetParams::default()).await.unwrap();
    assert_eq!(got.status.map(|s| (s.ready, s.replicas)), Some((true, 3)));

    // patch (merge, JSON), apply
    let merged = ctts
        .patch(
            &name,
            &Patch::Merge(json!({"spec": {"replicas": 7}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.replicas, 7);
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/spec/replicas", "value": 8}]))
            .unwrap();
    let jp = ctts
        .patch(&name, &Patch::Json::<()>(ops), &PatchParams::default())
        .await
        .unwrap();
    assert_eq!(jp.spec.replicas, 8);
    let applied = ctts
        .apply(
            &ClusterTestTypeApplyConfiguration::new(&name)
                .with_spec(ClusterTestTypeSpecApplyConfiguration::default().with_replicas(9)),
            &ApplyOptions::new("e2e-ctt").force(),
        )
        .await
        .unwrap();
    assert_eq!(applied.spec.replicas, 9);

    // delete, then NotFound; the watch saw every step
    ctts.delete(&name, &DeleteParams::default()).await.unwrap();
    let err = ctts.get(&name, &GetParams::default()).await.unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
    let mut replicas = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let ev = tokio::time::timeout_at(deadline, events.next())
            .await
            .unwrap_or_else(|_| panic!("no DELETED within {WAIT:?}; saw {replicas:?}"))
            .unwrap()
            .unwrap();
        match ev {
            WatchEvent::Modified(o) => replicas.push(o.spec.replicas),
            WatchEvent::Deleted(_) => break,
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(replicas.first(), Some(&5));
    assert_eq!(replicas.last(), Some(&9));

    // delete_collection by label: only the selected ones go
    for (n, test) in [("b", "ctt-dc"), ("c", "ctt-dc"), ("d", "ctt-keep")] {
        ctts.create(
            &ctt(&format!("ctt-{run}-{n}"), 1, test),
            &PostParams::default(),
        )
        .await
        .unwrap();
    }
    ctts.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels(&format!("e2e-run={run},test=ctt-dc")),
    )
    .await
    .unwrap();
    let left = ctts
        .list(&ListParams::default().labels(&format!("e2e-run={run}")))
        .await
        .unwrap();
    let left: Vec<_> = left
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    assert_eq!(left, [format!("ctt-{run}-d")]);
    ctts.delete(&format!("ctt-{run}-d"), &DeleteParams::default())
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// The harness: CRD manifests and restart, teardown after a panic, a killed test process
// ---------------------------------------------------------------------------------------------

/// A CRD of a protected group (`*.k8s.io`, `*.kubernetes.io`) with an `unapproved…` annotation
/// is served, and flagged `KubernetesAPIApprovalPolicyConformant=False` (by a controller that
/// runs after `Established`, hence the wait).
async fn assert_approval_flagged(client: &kube::Client, crd: &CustomResourceDefinition) {
    let group = &crd.spec.group;
    if !(group.ends_with(".k8s.io") || group.ends_with(".kubernetes.io")) {
        return;
    }
    let name = crd.metadata.name.clone().unwrap_or_default();
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + WAIT;
    loop {
        let crd = api.get(&name).await.unwrap();
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        let approval = conditions
            .iter()
            .find(|c| c.type_ == "KubernetesAPIApprovalPolicyConformant");
        if let Some(c) = approval {
            assert_eq!(c.status, "False", "{name}: {conditions:?}");
            return;
        }
        assert!(Instant::now() < deadline, "{name}: {conditions:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_manifests_are_established_and_survive_an_apiserver_restart() {
    init_tracing();
    let _timer = Timer::new("crd_manifests_and_restart");
    let mut server = RealApiServer::start().await.unwrap();
    eprintln!(
        "[e2e] own kube-apiserver ready in {:.2?}",
        server.started_in()
    );
    let client = server.client().unwrap();

    // Each manifest is applied and its CRDs become Established before the next one: manifests
    // of different fixtures may define the same CRD (the same kind and group).
    let files = apiserver::crd_files();
    let mut crds = Vec::new();
    for file in &files {
        let applied = server.kubectl_apply(file).await.unwrap();
        assert!(!applied.is_empty(), "{} holds no object", file.display());
        for obj in applied {
            let name = obj
                .strip_prefix("customresourcedefinition.apiextensions.k8s.io/")
                .unwrap_or_else(|| panic!("{} holds {obj}, not a CRD", file.display()));
            let crd = wait_crd_established(&client, name)
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert_approval_flagged(&client, &crd).await;
            crds.push(name.to_string());
        }
    }
    eprintln!(
        "[e2e] {} CRD manifests, {} CRDs established",
        files.len(),
        crds.len()
    );
    assert!(
        !files.is_empty(),
        "no generated CRD manifest found (example-crddemo/crd/, tests/fixtures/*/crd/)"
    );
    // The generated `K::crd()` documents the typed-client tests use (with a scale subresource),
    // applied through the API rather than kubectl.
    for crd in generated_crds() {
        let applied = apply_crd(&client, &crd).await.unwrap();
        let name = applied.metadata.name.unwrap_or_default();
        let crd = wait_crd_established(&client, &name).await.unwrap();
        assert_approval_flagged(&client, &crd).await;
        crds.push(name);
    }
    crds.sort();
    crds.dedup();

    // An object written before the restart is read after it through the same client.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("before-restart".into()),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_string(), "v".to_string())].into()),
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let (url, ca, before) = (
        server.url().to_string(),
        server.ca_pem().to_string(),
        server.pids(),
    );
    let t0 = Instant::now();
    server.restart_apiserver().await.unwrap();
    eprintln!("[e2e] kube-apiserver restarted in {:.2?}", t0.elapsed());
    let after = server.pids();
    assert_eq!(server.url(), url);
    assert_eq!(server.ca_pem(), ca, "the serving certificate is reused");
    assert_eq!(after.etcd, before.etcd);
    assert_ne!(after.apiserver, before.apiserver);
    assert!(before.apiserver.is_some_and(|pid| !process_alive(pid)));
    let got = cms.get("before-restart").await.unwrap();
    assert_eq!(got.data, cm.data);
    for name in &crds {
        wait_crd_established(&client, name).await.unwrap();
    }

    // Normal teardown: every process gone, the data directory removed.
    let dir = server.dir().to_path_buf();
    let t0 = Instant::now();
    drop(server);
    eprintln!("[e2e] teardown took {:.2?}", t0.elapsed());
    for pid in after.all() {
        assert!(!process_alive(pid), "pid {pid} survived the drop");
    }
    assert!(!dir.exists(), "{} survived the drop", dir.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_test_leaves_no_server_behind() {
    init_tracing();
    let _timer = Timer::new("panic_teardown");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let server = RealApiServer::start().await.unwrap();
        let _ = tx.send((server.pids(), server.dir().to_path_buf()));
        panic!("deliberate panic while a real API server runs (expected by this test)");
    });
    let err = task.await.unwrap_err();
    assert!(err.is_panic(), "{err:?}");
    let (pids, dir) = rx.await.unwrap();
    assert_eq!(pids.all().len(), 4, "{pids:?}");
    // Drop ran during unwinding and waited for the processes: nothing is left right away.
    for pid in pids.all() {
        assert!(!process_alive(pid), "pid {pid} survived the panic");
    }
    assert!(!dir.exists(), "{} survived the panic", dir.display());
}

/// The child half of [`a_killed_test_process_leaves_no_server_behind`]: starts a server, prints
/// its PIDs and data directory, and waits to be killed (or for its stdin, a pipe from the
/// parent, to close: then it returns and stops the server normally, so that a parent killed
/// in the middle leaves nothing behind either).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper: runs only as the child process of a_killed_test_process_leaves_no_server_behind"]
async fn child_holds_a_server_until_killed() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let server = RealApiServer::start().await.unwrap();
    let pids: Vec<String> = server.pids().all().iter().map(u32::to_string).collect();
    println!("E2E-CHILD {} {}", pids.join(","), server.dir().display());
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink)
    });
    let _ = tokio::time::timeout(Duration::from_secs(300), stdin_closed).await;
}

/// The helper's name as the test harness lists it: its module path without the crate's name.
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::child_holds_a_server_until_killed"),
        None => "child_holds_a_server_until_killed".to_string(),
    }
}

#[test]
fn a_killed_test_process_leaves_no_server_behind() {
    let _timer = Timer::new("killed_runner");
    let bin = apiserver::bin_dir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &child_test_name(),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env(BIN_DIR_ENV, &bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut found = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest prints `test <name> ... ` without a newline before the test's own output.
        if let Some((_, rest)) = line.split_once("E2E-CHILD ") {
            found = rest.split_once(' ').map(|(p, d)| {
                let pids: Vec<u32> = p.split(',').map(|s| s.parse().unwrap()).collect();
                (pids, PathBuf::from(d))
            });
            break;
        }
    }
    let Some((pids, dir)) = found else {
        let _ = child.kill();
        panic!(
            "the child test process exited without starting a server: {:?}",
            child.wait()
        );
    };
    assert_eq!(pids.len(), 4);
    for &pid in &pids {
        assert!(process_alive(pid), "pid {pid} is not running");
    }

    // SIGKILL (while its stdin stays open): no destructor, no unwinding, no signal handler runs
    // in the test process.
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = Instant::now();
    while pids.iter().any(|&pid| process_alive(pid)) || dir.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "still alive after 20 s: {:?}, data dir exists: {}",
            pids.iter()
                .filter(|&&p| process_alive(p))
                .collect::<Vec<_>>(),
            dir.exists()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "[e2e] after SIGKILL of the test process, its servers were gone in {:.2?}",
        t0.elapsed()
    );
}
