//! Informers syncing with a WatchList (`InformerOptions::watch_list`) against the in-memory
//! API server: one watch with `sendInitialEvents=true` fills the cache and goes on as the
//! informer's watch, no list is made; a server refusing it is listed instead, once and for all.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use kube::core::Status;
use kube_codegen_runtime::fake::{Action, FakeApiServer, WatchReaction};
use kube_codegen_runtime::{InformerOptions, SharedIndexInformer};

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// The collection GETs of ConfigMaps: ("list" | "watch", sendInitialEvents).
fn collection_reads(actions: &[Action]) -> Vec<(String, Option<String>)> {
    actions
        .iter()
        .filter(|a| a.resource == "configmaps" && (a.verb == "list" || a.verb == "watch"))
        .map(|a| {
            (
                a.verb.clone(),
                a.query_param("sendInitialEvents").map(str::to_string),
            )
        })
        .collect()
}

async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn an_informer_syncs_with_one_watch_and_keeps_watching_on_it() {
    let fake = FakeApiServer::new();
    let client = fake.client().unwrap_or_else(|e| panic!("{e}"));
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["a", "b", "c"] {
        api.create(&PostParams::default(), &cm(name))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    fake.handle().clear_actions();

    let informer = SharedIndexInformer::<ConfigMap>::builder(client)
        .options(
            InformerOptions::default()
                .namespace("default")
                .watch_list(true),
        )
        .build();
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut keys = informer.store().list_keys();
    keys.sort();
    assert_eq!(keys, ["default/a", "default/b", "default/c"]);

    // The stream that synced the cache delivers what happens next.
    api.create(&PostParams::default(), &cm("d"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let store = informer.store();
    eventually("d in the cache", || store.get_by_key("default/d").is_some()).await;
    assert_eq!(
        collection_reads(&fake.handle().actions()),
        [("watch".to_string(), Some("true".to_string()))],
        "one WatchList, no list"
    );
    let watch = fake
        .handle()
        .actions()
        .into_iter()
        .find(|a| a.verb == "watch")
        .unwrap_or_else(|| panic!("no watch"));
    assert_eq!(
        watch.query_param("resourceVersionMatch"),
        Some("NotOlderThan")
    );
    assert_eq!(watch.query_param("allowWatchBookmarks"), Some("true"));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_server_refusing_watch_list_is_listed_instead_from_then_on() {
    let fake = FakeApiServer::new();
    let client = fake.client().unwrap_or_else(|e| panic!("{e}"));
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &cm("a"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // As a server without the feature answers the parameters.
    let handle = fake.handle();
    handle.prepend_watch_reactor("configmaps", |action| {
        if action.query_param("sendInitialEvents") == Some("true") {
            WatchReaction::Error(Box::new(
                Status::failure("sendInitialEvents is not supported", "BadRequest").with_code(400),
            ))
        } else {
            WatchReaction::PassThrough
        }
    });
    handle.clear_actions();

    let informer = SharedIndexInformer::<ConfigMap>::builder(client)
        .options(
            InformerOptions::default()
                .namespace("default")
                .watch_list(true)
                .watch_timeout(Duration::from_secs(1)),
        )
        .build();
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(informer.store().list_keys(), ["default/a"]);
    api.create(&PostParams::default(), &cm("b"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let store = informer.store();
    eventually("b in the cache", || store.get_by_key("default/b").is_some()).await;
    // The server ends each watch after a second: the informer watches again, never asking for
    // a WatchList again.
    eventually("a second plain watch", || {
        collection_reads(&handle.actions())
            .iter()
            .filter(|(verb, initial)| verb == "watch" && initial.is_none())
            .count()
            >= 2
    })
    .await;
    let reads = collection_reads(&handle.actions());
    assert_eq!(
        reads[..3],
        [
            ("watch".to_string(), Some("true".to_string())),
            ("list".to_string(), None),
            ("watch".to_string(), None),
        ]
    );
    assert_eq!(
        reads
            .iter()
            .filter(|(_, initial)| initial.is_some())
            .count(),
        1,
        "{reads:?}"
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
