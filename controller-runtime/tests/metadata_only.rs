//! `Builder::owns_metadata` / `watches_metadata` against the in-memory API server: the owned
//! kind is listed and watched as `PartialObjectMetadata` (the server answers with that kind,
//! so the `Accept` header asked for it), its cache holds metadata only, and its events still
//! reach the owner's reconcile.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{create_cm, eventually, fake, init_tracing};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube_codegen_runtime::Selector;
use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_objects_are_cached_as_metadata_and_still_trigger_their_owner() {
    init_tracing();
    let (client, _handle) = fake();
    let parent = create_cm(&client, "parent").await;
    let mgr = Manager::builder(client.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let reconciled = Arc::new(Mutex::new(Vec::<String>::new()));
    let mapped = Arc::new(Mutex::new(Vec::<String>::new()));
    let (r, m) = (reconciled.clone(), mapped.clone());
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .owns_metadata::<Secret>()
        .watches_metadata::<ConfigMap>(move |cm: &PartialObjectMeta<ConfigMap>| {
            m.lock().extend(cm.metadata.name.clone());
            Vec::new()
        })
        .complete(move |req: Request, _ctx: Context| {
            let r = r.clone();
            async move {
                r.lock().push(req.name.clone());
                Ok::<_, kube::Error>(Action::done())
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let secrets = mgr.lister::<PartialObjectMeta<Secret>>();
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    eventually("the parent reconciled", 10, || {
        reconciled
            .lock()
            .contains(&"parent".to_string())
            .then_some(())
    })
    .await;
    eventually("watches_metadata mapped the parent", 10, || {
        mapped.lock().contains(&"parent".to_string()).then_some(())
    })
    .await;
    let before = reconciled.lock().len();

    let child = Secret {
        metadata: ObjectMeta {
            name: Some("child".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: "parent".into(),
                uid: parent.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "key".to_string(),
            ByteString(vec![7; 4096]),
        )])),
        ..Secret::default()
    };
    let api: Api<Secret> = Api::namespaced(client.clone(), "ns");
    api.create(&PostParams::default(), &child)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the child's create reconciled its owner", 10, || {
        (reconciled.lock().len() > before).then_some(())
    })
    .await;
    let cached = eventually("the child cached", 10, || {
        secrets.namespaced("ns").get("child").ok()
    })
    .await;
    // What the server sent: metadata only.
    assert_eq!(
        cached.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata"),
        "{cached:?}"
    );
    assert_eq!(cached.metadata.owner_references.iter().flatten().count(), 1);

    // A watch event (not only the list) arrives as metadata, and triggers the owner.
    let before = reconciled.lock().len();
    api.patch(
        "child",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"metadata": {"labels": {"tier": "db"}}})),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let cached = eventually("the label in the cache", 10, || {
        secrets.list(&Selector::everything()).into_iter().find(|s| {
            s.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("tier"))
        })
    })
    .await;
    assert_eq!(
        cached.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    eventually("the child's update reconciled its owner", 10, || {
        (reconciled.lock().len() > before).then_some(())
    })
    .await;
    stop.cancel();
    let stopped = task.await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
}
