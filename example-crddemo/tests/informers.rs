//! The generated informers and listers through their public paths, against the fake clientset:
//! `factory.crddemo().v1().mydemos()` sees create, update and delete; every caller shares one
//! watch; listers read through the namespace index and answer NotFound like the API server; the
//! generic lookup by group-version-resource finds the same informer.

use std::time::Duration;

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::fake;
use example_crddemo::pkg::client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionResource;
use kube_codegen_runtime::api_status::is_not_found;
use kube_codegen_runtime::informer::{EventHandlerFuncs, InformerOptions};
use kube_codegen_runtime::labels::Selector;
use tokio::sync::mpsc;

fn mydemo(ns: &str, name: &str, port: i32, labels: &[(&str, &str)]) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "10.0.0.1".into(),
            port,
        },
        status: None,
    }
}

async fn next<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an event within 10 s")
        .expect("the channel is open")
}

#[derive(Debug)]
enum Seen {
    Add(String, i32, bool),
    Update(i32, i32),
    Delete(String),
}

#[tokio::test]
async fn generated_informer_sees_create_update_delete_and_lister_reads_the_cache() {
    let seeded =
        kube_codegen_runtime::fake::to_value(&mydemo("default", "seeded", 1, &[("app", "demo")]))
            .unwrap();
    let (cs, handle) = fake::Clientset::new([seeded]).unwrap();
    let factory = SharedInformerFactory::new(&cs);
    let informer = factory.crddemo().v1().mydemos();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (t1, t2, t3) = (tx.clone(), tx.clone(), tx);
    informer
        .informer()
        .add_event_handler(
            EventHandlerFuncs::<Mydemo>::new()
                .add_func(move |o, initial| {
                    let _ = t1.send(Seen::Add(
                        o.metadata.name.clone().unwrap_or_default(),
                        o.spec.port,
                        initial,
                    ));
                })
                .update_func(move |old, new| {
                    let _ = t2.send(Seen::Update(old.spec.port, new.spec.port));
                })
                .delete_func(move |d| {
                    let _ = t3.send(Seen::Delete(d.key().unwrap_or_default()));
                }),
        )
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    assert!(matches!(next(&mut rx).await, Seen::Add(ref n, 1, true) if n == "seeded"));

    let demos = cs.crddemo_v1().mydemos("default");
    demos
        .create(
            &mydemo("default", "new", 8080, &[("app", "other")]),
            &PostParams::default(),
        )
        .await
        .unwrap();
    assert!(matches!(next(&mut rx).await, Seen::Add(ref n, 8080, false) if n == "new"));
    demos
        .patch(
            "new",
            &Patch::Merge(serde_json::json!({"spec": {"port": 9090}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    assert!(matches!(next(&mut rx).await, Seen::Update(8080, 9090)));

    // The lister reads the same cache: namespace-indexed, selector-filtered. The cache is
    // compact by default, so each read decodes an equal copy of the stored object.
    let lister = informer.lister();
    let got = lister.namespaced("default").get("new").unwrap();
    assert_eq!(got.spec.port, 9090);
    let again = lister.namespaced("default").get("new").unwrap();
    assert_eq!(*got, *again, "every read gives the same object");
    let demo = Selector::parse("app=demo").unwrap();
    let names: Vec<_> = lister
        .list(&demo)
        .iter()
        .map(|m| m.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["seeded"]);
    assert_eq!(
        lister
            .namespaced("default")
            .list(&Selector::everything())
            .len(),
        2
    );
    assert!(
        lister
            .namespaced("elsewhere")
            .list(&Selector::everything())
            .is_empty()
    );
    let missing = lister.namespaced("default").get("nope").unwrap_err();
    assert!(is_not_found(&missing));
    assert!(
        missing
            .to_string()
            .contains("mydemos.crddemo.k8s.io \"nope\" not found"),
        "{missing}"
    );

    demos.delete("new", &DeleteParams::default()).await.unwrap();
    assert!(matches!(next(&mut rx).await, Seen::Delete(ref k) if k == "default/new"));
    assert!(lister.namespaced("default").get("new").is_err());

    // Any number of callers share the one informer, hence one list and one watch.
    let again = factory.crddemo().v1().mydemos();
    assert!(again.informer().ptr_eq(informer.informer()));
    let generic = factory
        .for_resource(&GroupVersionResource::gvr(
            "crddemo.k8s.io",
            "v1",
            "mydemos",
        ))
        .unwrap();
    assert!(
        generic
            .downcast::<Mydemo>()
            .unwrap()
            .ptr_eq(informer.informer())
    );
    assert!(
        factory
            .for_resource(&GroupVersionResource::gvr(
                "crddemo.k8s.io",
                "v1",
                "nothings"
            ))
            .is_err()
    );
    let watches = handle
        .actions()
        .into_iter()
        .filter(|a| a.resource == "mydemos" && a.verb == "watch")
        .count();
    let lists = handle
        .actions()
        .into_iter()
        .filter(|a| a.resource == "mydemos" && a.verb == "list")
        .count();
    assert_eq!(
        (lists, watches),
        (1, 1),
        "one list and one watch for every consumer"
    );
    factory.shutdown().await;
}

#[tokio::test]
async fn factory_options_namespace_and_tweak_apply_to_generated_informers() {
    let objects = [
        mydemo("a", "x", 1, &[("tier", "front")]),
        mydemo("a", "y", 2, &[("tier", "back")]),
        mydemo("b", "z", 3, &[("tier", "front")]),
    ]
    .iter()
    .map(|m| kube_codegen_runtime::fake::to_value(m).unwrap())
    .collect::<Vec<_>>();
    let (cs, _handle) = fake::Clientset::new(objects).unwrap();
    let factory = SharedInformerFactory::builder(&cs)
        .options(
            InformerOptions::default()
                .namespace("a")
                .tweak_list_params(|lp| lp.label_selector = Some("tier=front".into())),
        )
        .build();
    let lister = factory.crddemo().v1().mydemos().lister();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    let all: Vec<_> = lister
        .list(&Selector::everything())
        .iter()
        .map(|m| m.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(all, ["x"], "namespace a, tier=front only");
    factory.shutdown().await;
}
