//! Compact informer caches (`InformerOptions::compact`) against the in-memory API server:
//! every read decodes the kept JSON, and must give back what the server sent minus what the
//! informer's transforms drop — through `get`, lists, namespaces, custom indexes, handlers'
//! old objects, watch updates and deletes — with managedFields dropped or kept.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::{EventHandlerFuncs, InformerOptions, SharedIndexInformer};
use parking_lot::Mutex;

async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn apply(client: &kube::Client, ns: &str, name: &str, app: &str, value: &str) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "data": {"value": value},
    });
    api.patch(name, &PatchParams::apply("test").force(), &Patch::Apply(cm))
        .await
        .unwrap_or_else(|e| panic!("apply {ns}/{name}: {e}"));
}

/// What the server holds for `ns/name`, as the cache should give it back.
async fn served(
    client: &kube::Client,
    ns: &str,
    name: &str,
    keep_managed_fields: bool,
) -> ConfigMap {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let mut cm = api.get(name).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        cm.metadata.managed_fields.is_some(),
        "server-side apply records managedFields"
    );
    if !keep_managed_fields {
        cm.metadata.managed_fields = None;
    }
    cm
}

async fn seeded() -> (FakeApiServer, kube::Client) {
    let fake = FakeApiServer::new();
    let client = fake.client().unwrap_or_else(|e| panic!("{e}"));
    for ns in ["a", "b"] {
        let api: Api<Namespace> = Api::all(client.clone());
        let nsobj =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        api.patch(ns, &PatchParams::apply("test"), &Patch::Apply(nsobj))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    apply(&client, "a", "one", "web", "1").await;
    apply(&client, "a", "two", "db", "2").await;
    apply(&client, "b", "three", "web", "3").await;
    (fake, client)
}

fn by_app(cm: &ConfigMap) -> Vec<String> {
    cm.metadata
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| *k == "app")
        .map(|(_, v)| v.clone())
        .collect()
}

fn names(mut v: Vec<Arc<ConfigMap>>) -> Vec<String> {
    let mut n: Vec<String> = v
        .drain(..)
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    n.sort();
    n
}

async fn reads_give_back_what_the_server_sent(keep_managed_fields: bool) {
    let (_fake, client) = seeded().await;
    let options = if keep_managed_fields {
        InformerOptions::default()
    } else {
        InformerOptions::default().strip_managed_fields()
    };
    let informer = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .options(options.compact(true))
        .build();
    informer
        .add_indexer("app", by_app)
        .unwrap_or_else(|e| panic!("{e}"));
    let updates = Arc::new(Mutex::new(Vec::new()));
    let deletes = Arc::new(Mutex::new(Vec::new()));
    let (u, d) = (updates.clone(), deletes.clone());
    informer
        .add_event_handler(
            EventHandlerFuncs::new()
                .update_func(move |old: Arc<ConfigMap>, new: Arc<ConfigMap>| {
                    u.lock().push(((*old).clone(), (*new).clone()))
                })
                .delete_func(move |gone| d.lock().push(gone.object().map(|o| (**o).clone()))),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let store = informer.store();

    for (ns, name) in [("a", "one"), ("a", "two"), ("b", "three")] {
        let want = served(&client, ns, name, keep_managed_fields).await;
        let got = store
            .get(Some(ns), name)
            .unwrap_or_else(|| panic!("{ns}/{name} cached"));
        assert_eq!(*got, want, "get {ns}/{name}");
        let by_key = store
            .get_by_key(&format!("{ns}/{name}"))
            .unwrap_or_else(|| panic!("{ns}/{name} by key"));
        assert_eq!(*by_key, want);
    }
    assert_eq!(store.len(), 3);
    assert_eq!(names(store.list()), ["one", "three", "two"]);
    assert_eq!(names(store.list_namespace("a")), ["one", "two"]);
    assert_eq!(
        names(store.list_filtered(|cm| by_app(cm) == ["web"])),
        ["one", "three"]
    );
    assert_eq!(
        names(
            store
                .by_index("app", "web")
                .unwrap_or_else(|e| panic!("{e}"))
        ),
        ["one", "three"]
    );
    let mut keys = store.list_keys();
    keys.sort();
    assert_eq!(keys, ["a/one", "a/two", "b/three"]);
    let mut seen = 0;
    store.for_each(|_| seen += 1);
    assert_eq!(seen, 3);

    // A watch update: the store holds the new object, the index moved, and the handler's old
    // object (decoded from the compact entry) is the one the server sent before.
    let before = served(&client, "a", "two", keep_managed_fields).await;
    apply(&client, "a", "two", "web", "22").await;
    let after = served(&client, "a", "two", keep_managed_fields).await;
    eventually("the update cached", || {
        store.get(Some("a"), "two").is_some_and(|c| *c == after)
    })
    .await;
    assert_eq!(
        names(
            store
                .by_index("app", "web")
                .unwrap_or_else(|e| panic!("{e}"))
        ),
        ["one", "three", "two"]
    );
    assert!(
        store
            .by_index("app", "db")
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    eventually("the update handled", || !updates.lock().is_empty()).await;
    assert_eq!(updates.lock()[0], (before, after));

    // A watch delete.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "b");
    api.delete("three", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the delete cached", || {
        store.get(Some("b"), "three").is_none()
    })
    .await;
    assert!(store.list_namespace("b").is_empty());
    assert_eq!(
        names(
            store
                .by_index("app", "web")
                .unwrap_or_else(|e| panic!("{e}"))
        ),
        ["one", "two"]
    );
    eventually("the delete handled", || !deletes.lock().is_empty()).await;
    assert_eq!(
        deletes.lock()[0]
            .as_ref()
            .and_then(|c| c.metadata.name.clone())
            .as_deref(),
        Some("three")
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_compact_cache_without_managed_fields_reads_back_what_the_server_sent() {
    reads_give_back_what_the_server_sent(false).await;
}

#[tokio::test]
async fn a_compact_cache_keeps_managed_fields_when_asked() {
    reads_give_back_what_the_server_sent(true).await;
}

#[tokio::test]
async fn a_compact_cache_applies_the_informers_transforms_on_every_read() {
    let (_fake, client) = seeded().await;
    let informer = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .options(InformerOptions::default().compact(true))
        .transform(|mut cm: ConfigMap| {
            cm.data = None;
            cm
        })
        .build();
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut want = served(&client, "a", "one", true).await;
    want.data = None;
    let got = informer
        .store()
        .get(Some("a"), "one")
        .unwrap_or_else(|| panic!("cached"));
    assert_eq!(*got, want);
    // Cluster-scoped objects are keyed by name alone.
    let namespaces = SharedIndexInformer::<Namespace>::builder(client.clone())
        .options(
            InformerOptions::default()
                .strip_managed_fields()
                .compact(true),
        )
        .build();
    let ns_running = namespaces.start().unwrap_or_else(|e| panic!("{e}"));
    namespaces
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let a = namespaces
        .store()
        .get(None, "a")
        .unwrap_or_else(|| panic!("namespace a"));
    assert_eq!(a.metadata.name.as_deref(), Some("a"));
    assert!(a.metadata.managed_fields.is_none());
    assert!(namespaces.store().get_by_key("a").is_some());
    ns_running
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
