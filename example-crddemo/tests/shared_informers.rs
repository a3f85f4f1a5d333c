//! One factory for both: the crddemo controller takes its Service and EndpointSlice informers
//! from the built-in accessors of the manager's factory (`factory.core().v1().services()`,
//! `factory.discovery().v1().endpoint_slices()`), so every other consumer of those kinds in the
//! process — a Builder's `owns::<Service>()`, `mgr.informer::<Service>()`, the built-in
//! accessors — shares their one list, one watch and one cache.

use std::time::{Duration, Instant};

use example_crddemo::controller::status::ready_condition;
use example_crddemo::controller::{Controller, Options, informer_options};
use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::fake;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;
use kube_codegen_kubernetes::InformerGroups;
use kube_controller_runtime::Manager;

const WAIT: Duration = Duration::from_secs(30);

async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controllers_service_and_slice_informers_are_the_factorys_shared_ones() {
    // A Service the controller does not own: the shared cache holds it for whoever asks.
    let other = serde_json::json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "other", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]}});
    let (clientset, handle) = fake::Clientset::new([other]).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        workers: 1,
        namespace: None,
        resync: None,
        instance: "test".into(),
        reconcile_delay: std::time::Duration::ZERO,
    };
    let mgr = Manager::builder(clientset.client().clone())
        .informer_options(informer_options(&opts))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let controller = Controller::with_manager(&mgr, opts).unwrap_or_else(|e| panic!("{e}"));
    mgr.add(controller).unwrap_or_else(|e| panic!("{e}"));

    // Other consumers in the same process, asking every way there is.
    let services = mgr.factory().core().v1().services();
    let slices = mgr.factory().discovery().v1().endpoint_slices();
    assert!(services.informer().ptr_eq(&mgr.informer::<Service>()));
    assert!(slices.informer().ptr_eq(&mgr.informer::<EndpointSlice>()));
    let ids = mgr.factory().informer_ids();
    let per = |resource: &str| ids.iter().filter(|id| id.resource == resource).count();
    assert_eq!(
        (per("services"), per("endpointslices"), per("mydemos")),
        (1, 1, 1),
        "{ids:?}"
    );

    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(mgr.start(async move {
        let _ = rx.await;
    }));
    let demo = Mydemo {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "10.0.0.7".into(),
            port: 8080,
        },
        status: None,
    };
    clientset
        .crddemo_v1()
        .mydemos("default")
        .create(&demo, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // The controller did its work through the shared caches …
    eventually("the Mydemo to be Ready", || {
        handle
            .get::<Mydemo>("default", "web")
            .ok()
            .flatten()
            .and_then(|m| ready_condition(&m).map(|c| c.status == "True"))
            .unwrap_or(false)
    })
    .await;
    // … which the other consumers' listers read too.
    eventually(
        "the Service and EndpointSlice in the other consumers' caches",
        || {
            services.lister().namespaced("default").get("web").is_ok()
                && services.lister().namespaced("default").get("other").is_ok()
                && !slices
                    .lister()
                    .namespaced("default")
                    .list(&kube_codegen_runtime::labels::Selector::everything())
                    .is_empty()
        },
    )
    .await;
    let count = |verb: &str, resource: &str| {
        handle
            .actions()
            .iter()
            .filter(|a| a.verb == verb && a.resource == resource && a.name.is_none())
            .count()
    };
    for resource in ["services", "endpointslices"] {
        assert_eq!(
            (count("list", resource), count("watch", resource)),
            (1, 1),
            "one list and one watch of {resource} for every consumer"
        );
    }
    let _ = tx.send(());
    task.await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
}
