//! The README's "Informers, listers and the work queue" and "Testing with the fake clientset"
//! snippets, compiled and run as written there (keep the two in step).

use std::time::Duration;

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use example_crddemo::pkg::client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::api::core::v1::Service;
use kube::api::{ObjectMeta, PostParams};
use kube_codegen_runtime::api_status::{is_conflict, is_not_found, status_failure};
use kube_codegen_runtime::fake::Reaction;
use kube_codegen_runtime::informer::{EventHandlerFuncs, InformerOptions};
use kube_codegen_runtime::labels::Selector;
use kube_codegen_runtime::store::object_key;
use kube_codegen_runtime::workqueue::RateLimitingQueue;

fn demo(name: &str) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "10.0.0.1".into(),
            port: 8080,
        },
        status: None,
    }
}

/// README: "Informers, listers and the work queue".
async fn informers_listers_and_a_work_queue(cs: &Clientset) -> Vec<String> {
    let factory = SharedInformerFactory::builder(cs)
        .options(
            InformerOptions::default()
                .namespace("default")
                .resync(Duration::from_secs(30))
                .strip_managed_fields(),
        )
        .build();
    let mydemos = factory.crddemo().v1().mydemos(); // one watch, however many callers
    let services = factory.informer_for::<Service>(); // any kube::Resource

    let queue = RateLimitingQueue::<String>::new();
    let q = queue.clone();
    mydemos
        .informer()
        .add_event_handler(
            EventHandlerFuncs::<Mydemo>::new()
                .add_func(move |obj, _initial| q.add(object_key(obj.as_ref()).unwrap_or_default())),
        )
        .expect("handler");
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());

    // A worker: take a key, read the object from the lister, forget its backoff, mark it done.
    let lister = mydemos.lister();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move {
            while let Some(key) = queue.get().await {
                let (ns, name) = key.split_once('/').unwrap_or(("", &key));
                match lister.namespaced(ns).get(name) {
                    // an Arc<Mydemo> straight from the cache
                    Ok(demo) => {
                        let _ = tx.send(format!("{key} -> {}:{}", demo.spec.ip, demo.spec.port));
                    }
                    Err(e) if is_not_found(&e) => {} // deleted meanwhile
                    Err(_) => {
                        queue.add_rate_limited(key.clone()); // retry with backoff
                        queue.done(&key);
                        continue;
                    }
                }
                queue.forget(&key);
                queue.done(&key);
            }
        })
    };

    let mut synced = vec![
        rx.recv().await.unwrap_or_default(),
        rx.recv().await.unwrap_or_default(),
    ];
    synced.sort();
    let selected = mydemos
        .lister()
        .list(&Selector::parse("app!=legacy").expect("selector"));
    assert_eq!(selected.len(), 2);
    assert!(services.lister().list(&Selector::everything()).is_empty());
    queue.shut_down_with_drain().await; // workers finish the item in hand
    worker.await.expect("worker");
    factory.shutdown().await; // stops every watch and waits for it
    synced
}

#[tokio::test]
async fn readme_informers_listers_and_work_queue() {
    let seeded = [
        kube_codegen_runtime::fake::to_value(&demo("a")).expect("json"),
        kube_codegen_runtime::fake::to_value(&demo("b")).expect("json"),
    ];
    let (cs, _handle) = fake::Clientset::new(seeded).expect("fake");
    let synced = informers_listers_and_a_work_queue(&cs).await;
    assert_eq!(
        synced,
        ["default/a -> 10.0.0.1:8080", "default/b -> 10.0.0.1:8080"]
    );
}

/// README: "Testing with the fake clientset".
#[tokio::test]
async fn readme_fake_clientset() {
    let (cs, handle) = fake::Clientset::new([]).expect("fake");
    handle.prepend_reactor("create", "mydemos", |_action| {
        Reaction::Error(Box::new(status_failure(409, "Conflict", "injected")))
    });
    let demos = cs.crddemo_v1().mydemos("default");
    let err = demos
        .create(&demo("x"), &PostParams::default())
        .await
        .unwrap_err();
    assert!(is_conflict(&err));

    handle.clear_reactors();
    demos
        .create(&demo("x"), &PostParams::default())
        .await
        .expect("create");
    let stored: Mydemo = handle.get("default", "x").expect("typed").expect("stored");
    assert_eq!(stored.metadata.generation, Some(1));
    let verbs: Vec<String> = handle.actions().into_iter().map(|a| a.verb).collect();
    assert_eq!(verbs, ["create", "create"]);
}
