//! Compact informer caches (`InformerOptions::compact`, the default) against the in-memory API
//! server: every read decompresses and decodes the kept JSON, and must give back what the server sent minus what the
//! informer's transforms drop — through `get`, lists, namespaces, custom indexes, handlers'
//! old objects, watch updates and deletes — with managedFields dropped or kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::{
    EventHandlerFuncs, InformerOptions, Lister, Selector, SharedIndexInformer,
};
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

/// Configuration text that differs in each object (so that no two compress alike).
fn config(i: usize) -> String {
    (0..12)
        .map(|j| {
            format!(
                "service{j}.endpoint = svc-{}.{}.internal:{}\n",
                (i * 31 + j * 7) % 1000,
                ["prod", "dev"][(i + j) % 2],
                8000 + (i * 13 + j) % 997
            )
        })
        .collect()
}

/// Many objects in three namespaces through a cache with the default options: each object
/// read back — by key, by lister with a label selector, through an index, and as the handlers'
/// initial adds — is exactly what the server lists; then updates and deletes.
async fn many_objects_read_back_exactly(keep_managed_fields: bool, watch_list: bool) {
    const N: usize = 90;
    let fake = FakeApiServer::new();
    let client = fake.client().unwrap_or_else(|e| panic!("{e}"));
    for ns in ["a", "b", "c"] {
        let api: Api<Namespace> = Api::all(client.clone());
        let nsobj =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        api.patch(ns, &PatchParams::apply("test"), &Patch::Apply(nsobj))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    for i in 0..N {
        let (ns, name) = (["a", "b", "c"][i % 3], format!("cm-{i:03}"));
        let app = ["web", "db"][i % 2];
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"app": app, "shard": format!("{}", i % 5)},
                         "annotations": {"example.com/owner": format!("team-{}", i % 4)}},
            "data": {"app.properties": config(i), "index": i.to_string()},
        });
        api.patch(
            &name,
            &PatchParams::apply(&format!("manager-{}", i % 3)),
            &Patch::Apply(cm),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let options = InformerOptions::default().watch_list(watch_list);
    assert!(options.get_compact(), "compact is the default");
    let options = if keep_managed_fields {
        options
    } else {
        options.strip_managed_fields()
    };
    let informer = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .options(options)
        .build();
    informer
        .add_indexer("app", by_app)
        .unwrap_or_else(|e| panic!("{e}"));
    let added = Arc::new(Mutex::new(Vec::new()));
    let a = added.clone();
    informer
        .add_event_handler(
            EventHandlerFuncs::new()
                .add_func(move |cm: Arc<ConfigMap>, _initial| a.lock().push((*cm).clone())),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let store = informer.store();

    let all: Api<ConfigMap> = Api::all(client.clone());
    let mut listed: Vec<ConfigMap> = all
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .items;
    for cm in &mut listed {
        assert!(cm.metadata.managed_fields.is_some());
        if !keep_managed_fields {
            cm.metadata.managed_fields = None;
        }
    }
    assert_eq!(store.len(), N);
    for want in &listed {
        let (ns, name) = (
            want.metadata.namespace.as_deref(),
            want.metadata.name.as_deref().unwrap_or_default(),
        );
        let got = store
            .get(ns, name)
            .unwrap_or_else(|| panic!("{ns:?}/{name} cached"));
        assert_eq!(*got, *want, "{ns:?}/{name}");
    }
    let sorted = |mut v: Vec<ConfigMap>| {
        v.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        v
    };
    eventually("the initial adds handled", || added.lock().len() == N).await;
    assert_eq!(sorted(added.lock().clone()), sorted(listed.clone()));

    let lister = Lister::for_resource(store.clone());
    let selector: Selector = "app=db,shard in (1,3)"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<ConfigMap> = listed
        .iter()
        .filter(|cm| {
            let l = cm.metadata.labels.clone().unwrap_or_default();
            l.get("app").map(String::as_str) == Some("db")
                && matches!(l.get("shard").map(String::as_str), Some("1" | "3"))
        })
        .cloned()
        .collect();
    assert!(!want.is_empty());
    let got: Vec<ConfigMap> = lister
        .list(&selector)
        .into_iter()
        .map(|c| (*c).clone())
        .collect();
    assert_eq!(sorted(got), sorted(want.clone()));
    let got_b: Vec<ConfigMap> = lister
        .namespaced("b")
        .list(&selector)
        .into_iter()
        .map(|c| (*c).clone())
        .collect();
    let want_b: Vec<ConfigMap> = want
        .into_iter()
        .filter(|c| c.metadata.namespace.as_deref() == Some("b"))
        .collect();
    assert_eq!(sorted(got_b), sorted(want_b));
    assert_eq!(
        store
            .by_index("app", "web")
            .unwrap_or_else(|e| panic!("{e}"))
            .len(),
        N / 2
    );

    // An update moves the object between index values; a delete removes it everywhere.
    apply(&client, "a", "cm-000", "db", "changed").await;
    let after = served(&client, "a", "cm-000", keep_managed_fields).await;
    eventually("the update cached", || {
        store.get(Some("a"), "cm-000").is_some_and(|c| *c == after)
    })
    .await;
    assert_eq!(
        store
            .by_index("app", "web")
            .unwrap_or_else(|e| panic!("{e}"))
            .len(),
        N / 2 - 1
    );
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "b");
    api.delete("cm-001", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the delete cached", || {
        store.get(Some("b"), "cm-001").is_none()
    })
    .await;
    assert_eq!(store.len(), N - 1);
    assert!(
        !store
            .by_index("app", "db")
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("cm-001"))
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn the_default_cache_reads_many_objects_back_exactly() {
    many_objects_read_back_exactly(false, false).await;
}

#[tokio::test]
async fn the_default_cache_keeps_many_objects_managed_fields_exactly() {
    many_objects_read_back_exactly(true, false).await;
}

#[tokio::test]
async fn the_default_cache_reads_back_exactly_after_a_watch_list_sync() {
    many_objects_read_back_exactly(false, true).await;
    many_objects_read_back_exactly(true, true).await;
}

/// `compact(false)` keeps objects decoded: every read hands out the same shared object, where
/// a compact cache decodes a new one, equal to it, on each read.
#[tokio::test]
async fn a_decoded_cache_is_the_opt_out() {
    let (_fake, client) = seeded().await;
    let decoded = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .options(InformerOptions::default().compact(false))
        .build();
    let compact = SharedIndexInformer::<ConfigMap>::builder(client.clone()).build();
    let mut running = Vec::new();
    for informer in [&decoded, &compact] {
        running.push(informer.start().unwrap_or_else(|e| panic!("{e}")));
        informer
            .wait_for_sync()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let read = |informer: &SharedIndexInformer<ConfigMap>| {
        informer
            .store()
            .get(Some("a"), "one")
            .unwrap_or_else(|| panic!("a/one cached"))
    };
    assert!(Arc::ptr_eq(&read(&decoded), &read(&decoded)));
    assert!(!Arc::ptr_eq(&read(&compact), &read(&compact)));
    assert_eq!(read(&compact), read(&decoded));
    assert_eq!(*read(&decoded), served(&client, "a", "one", true).await);
    for r in running {
        r.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Labels drawn from a small vocabulary, so that selectors match some objects, all or none;
/// one object in five has none.
fn random_labels(rng: &mut fastrand::Rng) -> serde_json::Value {
    const KEYS: [&str; 4] = ["app", "tier", "shard", "example.com/zone"];
    const VALUES: [&str; 4] = ["a", "b", "c", "7"];
    let mut labels = serde_json::Map::new();
    if rng.u8(..5) > 0 {
        for key in KEYS {
            if rng.bool() {
                labels.insert(key.into(), VALUES[rng.usize(..VALUES.len())].into());
            }
        }
    }
    labels.into()
}

/// A selector of up to three requirements of every kind over the vocabulary of
/// [`random_labels`] and the `seen` label the transform adds.
fn random_selector(rng: &mut fastrand::Rng) -> String {
    const KEYS: [&str; 5] = ["app", "tier", "shard", "example.com/zone", "seen"];
    const VALUES: [&str; 5] = ["a", "b", "c", "7", "yes"];
    let mut parts = Vec::new();
    for _ in 0..rng.usize(..4) {
        let key = KEYS[rng.usize(..KEYS.len())];
        let (v, w) = (
            VALUES[rng.usize(..VALUES.len())],
            VALUES[rng.usize(..VALUES.len())],
        );
        parts.push(match rng.u8(..8) {
            0 => format!("{key}={v}"),
            1 => format!("{key}!={v}"),
            2 => format!("{key} in ({v},{w})"),
            3 => format!("{key} notin ({v},{w})"),
            4 => key.to_string(),
            5 => format!("!{key}"),
            6 => format!("{key}>5"),
            _ => format!("{key}=={v}"),
        });
    }
    parts.join(",")
}

async fn apply_labels(client: &kube::Client, ns: &str, name: &str, labels: serde_json::Value) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "data": {"config": config(name.len())},
    });
    api.patch(name, &PatchParams::apply("test").force(), &Patch::Apply(cm))
        .await
        .unwrap_or_else(|e| panic!("apply {ns}/{name}: {e}"));
}

fn by_key(v: Vec<Arc<ConfigMap>>) -> Vec<ConfigMap> {
    let mut v: Vec<ConfigMap> = v.iter().map(|o| (**o).clone()).collect();
    v.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    v
}

/// The objects a compact and a decoded informer of the same objects return, for many random
/// selectors, all namespaces and each: equal, and the compact one decoded only what matched.
fn compare_selector_lists(
    rng: &mut fastrand::Rng,
    compact: &Lister<ConfigMap>,
    decoded: &Lister<ConfigMap>,
    decodes: &AtomicUsize,
) {
    let mut selectors: Vec<String> = (0..300).map(|_| random_selector(rng)).collect();
    selectors
        .extend(["", "seen=yes", "seen!=yes", "!app", "app", "!nope", "nope"].map(String::from));
    let mut matched = 0;
    for text in &selectors {
        let selector: Selector = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        for ns in [None, Some("a"), Some("b"), Some("missing")] {
            let before = decodes.load(Ordering::SeqCst);
            let (got, want) = match ns {
                None => (compact.list(&selector), decoded.list(&selector)),
                Some(ns) => (
                    compact.namespaced(ns).list(&selector),
                    decoded.namespaced(ns).list(&selector),
                ),
            };
            assert_eq!(
                decodes.load(Ordering::SeqCst) - before,
                got.len(),
                "{text:?} in {ns:?}: only the matching objects are decoded"
            );
            matched += got.len();
            assert_eq!(by_key(got), by_key(want), "{text:?} in {ns:?}");
        }
    }
    assert!(matched > 0, "some selectors match");
}

/// Label-selector lists of a compact cache evaluate the selector on labels kept in the clear
/// (as the informer's transforms leave them) and decode only the objects that match: for many
/// random selectors they return exactly what a decoded cache returns, before and after updates
/// that move objects in and out of selections, and a delete; an index list decodes only the
/// objects under its value.
#[tokio::test]
async fn selector_and_index_lists_decode_only_what_they_return() {
    const N: usize = 120;
    let mut rng = fastrand::Rng::with_seed(33);
    let (_fake, client) = seeded().await;
    let mut labels = Vec::new();
    for i in 0..N {
        let (ns, name) = (["a", "b"][i % 2], format!("sel-{i:03}"));
        let l = random_labels(&mut rng);
        apply_labels(&client, ns, &name, l.clone()).await;
        labels.push((ns, name, l));
    }
    let decodes = Arc::new(AtomicUsize::new(0));
    let counted = decodes.clone();
    // Both caches get the same transform, which adds a label: selectors see it on both.
    let seen = |mut cm: ConfigMap| {
        cm.metadata
            .labels
            .get_or_insert_default()
            .insert("seen".into(), "yes".into());
        cm
    };
    let compact = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .transform(move |cm| {
            counted.fetch_add(1, Ordering::SeqCst);
            seen(cm)
        })
        .build();
    let decoded = SharedIndexInformer::<ConfigMap>::builder(client.clone())
        .options(InformerOptions::default().compact(false))
        .transform(seen)
        .build();
    for informer in [&compact, &decoded] {
        informer
            .add_indexer("app", by_app)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let running = [&compact, &decoded].map(|i| i.start().unwrap_or_else(|e| panic!("{e}")));
    for informer in [&compact, &decoded] {
        informer
            .wait_for_sync()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let (cl, dl) = (
        Lister::for_resource(compact.store()),
        Lister::for_resource(decoded.store()),
    );
    compare_selector_lists(&mut rng, &cl, &dl, &decodes);
    for app in ["a", "b", "c", "web", "none"] {
        let before = decodes.load(Ordering::SeqCst);
        let got = compact
            .store()
            .by_index("app", app)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decodes.load(Ordering::SeqCst) - before, got.len(), "{app}");
        let want = decoded
            .store()
            .by_index("app", app)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(by_key(got), by_key(want), "index app={app}");
    }

    // Re-label a third of the objects (some lose every label), delete one, then compare again.
    for (ns, name, l) in labels.iter_mut().step_by(3) {
        *l = random_labels(&mut rng);
        apply_labels(&client, ns, name, l.clone()).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "b");
    api.delete("sel-001", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let all: Api<ConfigMap> = Api::all(client.clone());
    let served = all
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let versions = |l: &Lister<ConfigMap>| {
        let mut v: Vec<_> = l
            .store()
            .list()
            .iter()
            .map(|o| (o.metadata.name.clone(), o.metadata.resource_version.clone()))
            .collect();
        v.sort();
        v
    };
    let mut want: Vec<_> = served
        .items
        .iter()
        .map(|o| (o.metadata.name.clone(), o.metadata.resource_version.clone()))
        .collect();
    want.sort();
    eventually("both caches caught up", || {
        versions(&cl) == want && versions(&dl) == want
    })
    .await;
    let relabelled = &labels[3];
    let selector: Selector = format!(
        "shard notin (zz),tier={}",
        relabelled.2["tier"].as_str().unwrap_or("none")
    )
    .parse()
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(by_key(cl.list(&selector)), by_key(dl.list(&selector)));
    assert!(
        cl.namespaced("b")
            .list(&Selector::everything())
            .iter()
            .all(|o| o.metadata.name.as_deref() != Some("sel-001")),
        "the deleted object is gone from selector lists"
    );
    compare_selector_lists(&mut rng, &cl, &dl, &decodes);
    for r in running {
        r.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
