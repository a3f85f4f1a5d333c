//! The guide's client, informer and fake-clientset examples (`docs/guide/client.md`,
//! `informers.md`, `in-memory-server.md`), run against the fake clientset. The guide quotes
//! these functions line for line (`tests/tests/readme_examples.rs` checks that every excerpt is
//! in a compiled file), so edit them here and copy them there.

use std::time::Duration;

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use example_crddemo::pkg::client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::api::core::v1::Service;
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube_codegen_runtime::api_status::{is_conflict, is_not_found, status_failure};
use kube_codegen_runtime::fake::Reaction;
use kube_codegen_runtime::store::object_key;
use kube_codegen_runtime::{
    EventHandlerFuncs, InformerOptions, RateLimitingQueue, Selector, api_status,
};

type Result<T, E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

fn demo(name: &str) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some([("app".to_string(), "demo".to_string())].into()),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "10.0.0.1".into(),
            port: 8080,
        },
        status: None,
    }
}

/// docs/guide/client.md: "Using the client".
async fn using_the_client(cs: &Clientset, my_demo: &Mydemo) -> Result<usize> {
    let demos = cs.crddemo_v1().mydemos("default");
    let created = demos.create(my_demo, &PostParams::default()).await?;
    let list = demos
        .list(&ListParams::default().labels("app=demo"))
        .await?;
    if let Err(e) = demos.get("missing", &Default::default()).await {
        assert!(api_status::is_not_found(&e));
    }
    assert_eq!(created.metadata.generation, Some(1));
    Ok(list.items.len())
}

/// docs/guide/informers.md: "Informers, listers and the work queue".
async fn informers_listers_and_a_work_queue(cs: &Clientset) -> Result<Vec<String>> {
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
    mydemos.informer().add_event_handler(
        EventHandlerFuncs::<Mydemo>::new()
            .add_func(move |obj, _initial| q.add(object_key(obj.as_ref()).unwrap_or_default())),
    )?;
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
                    // an Arc<Mydemo> straight from the store
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

    let mut synced = Vec::new();
    while synced.len() < 2 {
        synced.extend(rx.recv().await);
    }
    synced.sort();
    let selected = mydemos.lister().list(&Selector::parse("app!=legacy")?);
    assert_eq!(selected.len(), 2);
    assert!(services.lister().list(&Selector::everything()).is_empty());
    queue.shut_down_with_drain().await; // workers finish the item in hand
    worker.await?;
    factory.shutdown().await; // stops every watch and waits for it
    Ok(synced)
}

/// docs/guide/in-memory-server.md: "Testing with the fake clientset".
async fn testing_with_the_fake_clientset() -> Result<()> {
    let (cs, handle) = fake::Clientset::new([])?;
    handle.prepend_reactor("create", "mydemos", |_action| {
        Reaction::Error(Box::new(status_failure(409, "Conflict", "injected")))
    });
    let demos = cs.crddemo_v1().mydemos("default");
    let err = demos.create(&demo("x"), &PostParams::default()).await;
    assert!(err.is_err_and(|e| is_conflict(&e)));

    handle.clear_reactors();
    demos.create(&demo("x"), &PostParams::default()).await?;
    let stored: Option<Mydemo> = handle.get("default", "x")?;
    assert_eq!(stored.and_then(|d| d.metadata.generation), Some(1));
    let verbs: Vec<String> = handle.actions().into_iter().map(|a| a.verb).collect();
    assert_eq!(verbs, ["create", "create"]);
    Ok(())
}

#[tokio::test]
async fn readme_using_the_client() -> Result<()> {
    let (cs, _handle) = fake::Clientset::new([])?;
    assert_eq!(using_the_client(&cs, &demo("first")).await?, 1);
    assert_eq!(using_the_client(&cs, &demo("second")).await?, 2);
    Ok(())
}

#[tokio::test]
async fn readme_informers_listers_and_work_queue() -> Result<()> {
    let seeded = [
        kube_codegen_runtime::fake::to_value(&demo("a"))?,
        kube_codegen_runtime::fake::to_value(&demo("b"))?,
    ];
    let (cs, _handle) = fake::Clientset::new(seeded)?;
    let synced = informers_listers_and_a_work_queue(&cs).await?;
    assert_eq!(
        synced,
        ["default/a -> 10.0.0.1:8080", "default/b -> 10.0.0.1:8080"]
    );
    Ok(())
}

#[tokio::test]
async fn readme_fake_clientset() -> Result<()> {
    testing_with_the_fake_clientset().await
}
