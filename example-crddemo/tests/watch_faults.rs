//! The crddemo controller (under a Manager, its informers the runtime's) facing a 410 Gone
//! injected into its Mydemo watch after the caches synced (`kube_fake_apiserver::faults`): the
//! informer relists — counted in the server's recorded requests — and the controller
//! converges on a change made after it.

use crate::common;

use std::time::Duration;

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube_codegen_runtime::fake::{Action, FakeApiServer};

/// How many times the Mydemo informer listed: LISTs, and WatchLists (`sendInitialEvents`).
fn mydemo_lists(actions: &[Action]) -> usize {
    actions
        .iter()
        .filter(|a| a.resource == "mydemos" && a.subresource.is_none())
        .filter(|a| {
            a.verb == "list"
                || (a.verb == "watch" && a.query_param("sendInitialEvents") == Some("true"))
        })
        .count()
}

#[tokio::test]
async fn a_410_mid_watch_makes_the_informer_relist_and_the_controller_converge() {
    let server = FakeApiServer::builder()
        .resources(&fake::Clientset::resources())
        .build()
        .unwrap();
    let handle = server.handle();
    let client = server.client().unwrap();
    let clientset = Clientset::new(client.clone());
    let (mgr, controller) = common::one_worker_controller(client, "faults");
    let lister = controller.mydemos().clone();
    mgr.add(controller).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(mgr.start(async move {
        let _ = stop_rx.await;
    }));

    let demos = clientset.crddemo_v1().mydemos("default");
    let mydemo = Mydemo {
        metadata: ObjectMeta {
            name: Some("faulty".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "127.0.0.1".into(),
            port: 8080,
        },
        status: None,
    };
    demos.create(&mydemo, &PostParams::default()).await.unwrap();
    let service_port = || {
        handle
            .get::<Service>("default", "faulty")
            .unwrap()
            .and_then(|s| s.spec?.ports?.first().map(|p| p.port))
    };
    eventually("the Service at 8080", || service_port() == Some(8080)).await;
    eventually("the Mydemo in the cache", || {
        lister.namespaced("default").get("faulty").is_ok()
    })
    .await;
    let faults = handle.faults();
    eventually("the Mydemo watch open", || faults.watchers("mydemos") == 1).await;
    let lists_before = mydemo_lists(&handle.actions());
    assert!(lists_before >= 1);

    // The watch the informer holds is expired: it must relist, then see the change made after
    // it through the relist or the watch that follows.
    faults.expire("mydemos");
    demos
        .patch(
            "faulty",
            &Patch::Merge(serde_json::json!({"spec": {"port": 9090}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    eventually("the Service at 9090", || service_port() == Some(9090)).await;
    let lists_after = mydemo_lists(&handle.actions());
    assert!(
        lists_after > lists_before,
        "the informer relisted after the 410: {lists_before} lists before, {lists_after} after"
    );

    let _ = stop_tx.send(());
    task.await.unwrap().unwrap();
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
