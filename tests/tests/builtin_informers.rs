//! The built-in clientset's informers and listers, and "one factory for both": a user's
//! generated factory (crddemo's) and the built-in one share a single informer — one list, one
//! watch, one cache — per kind, because both wrap the runtime's `SharedInformerFactory`, and the
//! built-in group accessors (`InformerGroups`) are available on any runtime factory, so on a
//! user's factory through its `Deref` too. Runs on the fake clientset, whose recorded actions
//! count the lists and watches.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use example_crddemo::pkg::client::clientset::versioned::fake as crddemo_fake;
use example_crddemo::pkg::client::informers::externalversions::SharedInformerFactory as CrddemoFactory;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube_codegen_kubernetes::{InformerGroups, SharedInformerFactory};
use kube_codegen_runtime::api_status::{is_not_found, status};
use kube_codegen_runtime::informer::{EventHandlerFuncs, InformerOptions};
use kube_codegen_runtime::labels::Selector;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn service(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
           "spec": {"ports": [{"port": 80}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_factory_and_the_builtin_one_share_one_informer_per_kind() {
    let (cs, handle) =
        crddemo_fake::Clientset::new([service("web")]).unwrap_or_else(|e| panic!("{e}"));
    // The user's generated factory, as crddemo's controller builds it.
    let user = CrddemoFactory::builder(&cs)
        .options(InformerOptions::default().namespace("default"))
        .build();
    // The built-in group accessors through the user's factory's Deref …
    let via_user = user.core().v1().services();
    // … the built-in factory over the same runtime factory …
    let builtin = SharedInformerFactory::from(user.factory().clone());
    let via_builtin = builtin.core().v1().services();
    // … and the runtime's own by-type lookup: all one informer.
    let by_type = user.informer_for::<Service>();
    assert!(via_user.informer().ptr_eq(via_builtin.informer()));
    assert!(via_user.informer().ptr_eq(&by_type));
    let mydemos = user.crddemo().v1().mydemos();
    assert_eq!(user.informer_ids().len(), 2, "{:?}", user.informer_ids());

    user.start();
    assert!(user.wait_for_cache_sync().await.all_synced());
    let web = via_builtin
        .lister()
        .namespaced("default")
        .get("web")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(web.metadata.name.as_deref(), Some("web"));
    assert!(mydemos.lister().list(&Selector::everything()).is_empty());

    let watches = |resource: &str| {
        handle
            .actions()
            .iter()
            .filter(|a| a.verb == "watch" && a.resource == resource)
            .count()
    };
    let lists = |resource: &str| {
        handle
            .actions()
            .iter()
            .filter(|a| a.verb == "list" && a.resource == resource)
            .count()
    };
    eventually("the services watch", || watches("services") == 1).await;
    assert_eq!(
        lists("services"),
        1,
        "one list for every consumer of Service"
    );
    builtin.start(); // the same informers: nothing new starts
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!((lists("services"), watches("services")), (1, 1));
    user.shutdown().await;
    assert!(builtin.is_shut_down());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_informers_and_listers_see_changes() {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    });
    let (cs, _handle) =
        kube_codegen_kubernetes::client::clientset::versioned::fake::Clientset::new([
            deployment.clone()
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    let factory = SharedInformerFactory::builder(&cs)
        .options(InformerOptions::default().namespace("default"))
        .build();
    let deployments = factory.apps().v1().deployments();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let (a, u, d) = (seen.clone(), seen.clone(), seen.clone());
    deployments
        .informer()
        .add_event_handler(
            EventHandlerFuncs::<Deployment>::new()
                .add_func(move |o, initial| {
                    a.lock()
                        .unwrap()
                        .push(format!("add {:?} {initial}", o.metadata.name))
                })
                .update_func(move |old, new| {
                    u.lock().unwrap().push(format!(
                        "update {:?}->{:?}",
                        old.spec.replicas, new.spec.replicas
                    ))
                })
                .delete_func(move |_| d.lock().unwrap().push("delete".into())),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());

    let client = cs.apps_v1().deployments("default");
    client
        .patch(
            "web",
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut second: Deployment =
        serde_json::from_value(deployment).unwrap_or_else(|e| panic!("{e}"));
    second.metadata.name = Some("api".into());
    client
        .create(&second, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .delete("api", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let want = [
        "add Some(\"web\") true",
        "update Some(1)->Some(3)",
        "add Some(\"api\") false",
        "delete",
    ];
    eventually("add, update, add, delete", || *seen.lock().unwrap() == want).await;

    let lister = deployments.lister();
    let web = lister
        .namespaced("default")
        .get("web")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(web.spec.replicas, Some(3));
    assert_eq!(
        lister
            .list(&Selector::parse("app=web").unwrap_or_else(|e| panic!("{e}")))
            .len(),
        1
    );
    let missing = lister.namespaced("default").get("api").unwrap_err();
    assert!(is_not_found(&missing));
    assert_eq!(
        status(&missing).map(|s| s.message.as_str()),
        Some("deployments.apps \"api\" not found")
    );
    // The generic lookup by group-version-resource finds the same informer.
    let generic = factory
        .for_resource(&kube::core::GroupVersionResource::gvr(
            "apps",
            "v1",
            "deployments",
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        generic
            .downcast::<Deployment>()
            .is_some_and(|i| i.ptr_eq(deployments.informer()))
    );
    factory.shutdown().await;
}
