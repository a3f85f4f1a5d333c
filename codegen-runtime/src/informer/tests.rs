//! Informer behaviour against the scripted API server in `mock`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use parking_lot::Mutex;
use tokio::sync::mpsc;

use super::mock::{LiveWatch, MockApi, bookmark, cm, cm_labels, event, gone_event};
use super::*;
use crate::labels::Selector;
use crate::store::object_key;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// key, resourceVersion, is_in_initial_list
    Add(String, String, bool),
    /// key, old resourceVersion, new resourceVersion
    Update(String, String, String),
    /// key, tombstone
    Delete(String, bool),
}

fn key(o: &ConfigMap) -> String {
    object_key(o).unwrap_or_default()
}

fn rv(o: &ConfigMap) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

struct Recorder(mpsc::UnboundedSender<Ev>);

impl EventHandler<ConfigMap> for Recorder {
    fn on_add(&self, obj: Arc<ConfigMap>, initial: bool) {
        let _ = self.0.send(Ev::Add(key(&obj), rv(&obj), initial));
    }
    fn on_update(&self, old: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        let _ = self.0.send(Ev::Update(key(&new), rv(&old), rv(&new)));
    }
    fn on_delete(&self, obj: DeletedObject<ConfigMap>) {
        let _ = self.0.send(Ev::Delete(
            obj.key().unwrap_or_default(),
            obj.is_tombstone(),
        ));
    }
}

struct Events(mpsc::UnboundedReceiver<Ev>);

impl Events {
    async fn next(&mut self) -> Ev {
        match tokio::time::timeout(Duration::from_secs(10), self.0.recv()).await {
            Ok(Some(e)) => e,
            Ok(None) => panic!("handler dropped"),
            Err(_) => panic!("no event within 10 s"),
        }
    }

    async fn take(&mut self, n: usize) -> Vec<Ev> {
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.next().await);
        }
        v
    }

    /// Asserts that nothing more arrives for a while.
    async fn assert_quiet(&mut self) {
        if let Ok(Some(e)) = tokio::time::timeout(Duration::from_millis(300), self.0.recv()).await {
            panic!("unexpected event {e:?}");
        }
    }
}

fn recorder() -> (Recorder, Events) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx), Events(rx))
}

fn fast_backoff() -> BackoffConfig {
    BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(50),
        ..BackoffConfig::default()
    }
}

fn informer(api: &MockApi) -> SharedIndexInformer<ConfigMap> {
    SharedIndexInformer::builder(api.client())
        .options(InformerOptions::default().backoff(fast_backoff()))
        .build()
}

fn add(k: &str, rv: &str, initial: bool) -> Ev {
    Ev::Add(k.into(), rv.into(), initial)
}

fn sorted(mut v: Vec<Ev>) -> Vec<Ev> {
    v.sort();
    v
}

fn cache_keys(i: &SharedIndexInformer<ConfigMap>) -> Vec<String> {
    let mut k = i.store().list_keys();
    k.sort();
    k
}

async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn synced(i: &SharedIndexInformer<ConfigMap>) {
    match tokio::time::timeout(Duration::from_secs(10), i.wait_for_sync()).await {
        Ok(Ok(())) => {}
        other => panic!("not synced: {other:?}"),
    }
}

/// Panics on the object named "boom", records every other.
struct Panicky(Recorder);

impl EventHandler<ConfigMap> for Panicky {
    fn on_add(&self, obj: Arc<ConfigMap>, initial: bool) {
        assert_ne!(obj.metadata.name.as_deref(), Some("boom"), "handler bug");
        self.0.on_add(obj, initial);
    }
}

#[tokio::test]
async fn a_handler_that_panics_keeps_receiving_later_notifications() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "boom", "1")], "10");
    let watch = api.push_live_watch();
    let inf = informer(&api);
    let (rec, mut events) = recorder();
    let other = recorder();
    inf.add_event_handler(Panicky(rec))
        .unwrap_or_else(|e| panic!("{e}"));
    inf.add_event_handler(other.0)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut other_events = other.1;
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    watch.send(event("ADDED", cm("a", "fine", "11")));
    assert_eq!(events.next().await, add("a/fine", "11", false));
    // The other handler got both, the panic notwithstanding.
    assert_eq!(other_events.next().await, add("a/boom", "1", true));
    assert_eq!(other_events.next().await, add("a/fine", "11", false));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn initial_list_is_paginated_and_delivered_as_initial_adds() {
    let api = MockApi::new();
    let items: Vec<_> = (0..1200)
        .map(|i| cm("a", &format!("o{i:04}"), "5"))
        .collect();
    api.push_list(items, "100");
    let inf = informer(&api);
    let (rec, mut events) = recorder();
    let reg = inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    assert!(!inf.has_synced());
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert!(inf.has_synced());
    let got = events.take(1200).await;
    assert!(
        got.iter()
            .all(|e| matches!(e, Ev::Add(_, rv, true) if rv == "5")),
        "{:?}",
        &got[..3]
    );
    assert_eq!(got.iter().collect::<BTreeSet<_>>().len(), 1200);
    events.assert_quiet().await;
    eventually("registration synced", || reg.has_synced()).await;
    assert_eq!(inf.store().len(), 1200);
    assert_eq!(inf.last_sync_resource_version(), "100");

    let lists = api.list_requests();
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert_eq!(lists[0].path, "/api/v1/configmaps");
    assert!(lists.iter().all(|r| r.q("limit") == Some("500")));
    assert_eq!(
        lists.iter().map(|r| r.q("continue")).collect::<Vec<_>>(),
        [None, Some("500"), Some("1000")]
    );
    eventually("watch started", || !api.watch_requests().is_empty()).await;
    let w = &api.watch_requests()[0];
    assert_eq!(w.q("resourceVersion"), Some("100"));
    assert_eq!(w.q("allowWatchBookmarks"), Some("true"));
    assert!(w.q("timeoutSeconds").is_some());
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn watch_events_become_adds_updates_and_deletes() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "1");
    let live = api.push_live_watch();
    let inf = informer(&api);
    let (rec, mut events) = recorder();
    inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert_eq!(events.next().await, add("a/x", "1", true));

    live.send(event("MODIFIED", cm("a", "x", "2")));
    assert_eq!(
        events.next().await,
        Ev::Update("a/x".into(), "1".into(), "2".into())
    );
    live.send(event("ADDED", cm("a", "y", "3")));
    assert_eq!(events.next().await, add("a/y", "3", false));
    // ADDED for a known object is an update; MODIFIED for an unknown one an add.
    live.send(event("ADDED", cm("a", "y", "4")));
    assert_eq!(
        events.next().await,
        Ev::Update("a/y".into(), "3".into(), "4".into())
    );
    live.send(event("MODIFIED", cm("b", "z", "5")));
    assert_eq!(events.next().await, add("b/z", "5", false));
    live.send(event("DELETED", cm("a", "x", "6")));
    assert_eq!(events.next().await, Ev::Delete("a/x".into(), false));
    live.send(bookmark("9"));
    eventually("bookmark seen", || inf.last_sync_resource_version() == "9").await;
    events.assert_quiet().await;

    assert_eq!(cache_keys(&inf), ["a/y", "b/z"]);
    let y = inf
        .lister()
        .namespaced("a")
        .get("y")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(y.metadata.resource_version.as_deref(), Some("4"));
    assert!(crate::api_status::is_not_found(
        &inf.lister()
            .namespaced("a")
            .get("x")
            .err()
            .unwrap_or_else(|| panic!("x still cached"))
    ));
    assert_eq!(api.list_requests().len(), 1);
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// The gap scenario shared by both forms of 410: before the gap x, y, z exist; after it x is
/// unchanged, y changed, z vanished and w appeared.
async fn assert_relist_reconciles_the_gap(api: &MockApi) {
    let inf = informer(api);
    let (rec, mut events) = recorder();
    inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert_eq!(
        sorted(events.take(3).await),
        [
            add("a/x", "1", true),
            add("a/y", "1", true),
            add("a/z", "1", true)
        ]
    );
    let after = sorted(events.take(3).await);
    assert_eq!(
        after,
        [
            add("a/w", "6", false),
            Ev::Update("a/y".into(), "1".into(), "5".into()),
            Ev::Delete("a/z".into(), true),
        ]
    );
    events.assert_quiet().await;
    assert_eq!(cache_keys(&inf), ["a/w", "a/x", "a/y"]);
    assert_eq!(inf.last_sync_resource_version(), "20");

    let reqs = api.requests();
    let shape: Vec<(bool, Option<&str>)> = reqs
        .iter()
        .map(|r| (r.watch, r.q("resourceVersion")))
        .collect();
    assert_eq!(
        shape,
        [
            (false, None),
            (true, Some("10")),
            (false, None),
            (true, Some("20"))
        ],
        "requests: {reqs:?}"
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

fn script_gap(api: &MockApi) {
    api.push_list(
        vec![cm("a", "x", "1"), cm("a", "y", "1"), cm("a", "z", "1")],
        "10",
    );
    api.push_list(
        vec![cm("a", "x", "1"), cm("a", "y", "5"), cm("a", "w", "6")],
        "20",
    );
}

#[tokio::test]
async fn gone_watch_event_relists_and_reconciles_the_gap() {
    let api = MockApi::new();
    script_gap(&api);
    api.push_watch_events(vec![gone_event()]);
    let second = api.push_live_watch();
    assert_relist_reconciles_the_gap(&api).await;
    assert!(second.is_closed());
}

#[tokio::test]
async fn gone_at_watch_start_relists_and_reconciles_the_gap() {
    let api = MockApi::new();
    script_gap(&api);
    api.push_watch_status(410);
    let second = api.push_live_watch();
    assert_relist_reconciles_the_gap(&api).await;
    assert!(second.is_closed());
}

#[tokio::test]
async fn watch_resumes_from_the_last_version_seen_without_relisting() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "10");
    api.push_watch_events(vec![event("MODIFIED", cm("a", "x", "11")), bookmark("15")]);
    api.push_watch_events(vec![event("MODIFIED", cm("a", "x", "16"))]);
    let _live = api.push_live_watch();
    let inf = informer(&api);
    let (rec, mut events) = recorder();
    inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert_eq!(
        events.take(3).await,
        [
            add("a/x", "1", true),
            Ev::Update("a/x".into(), "1".into(), "11".into()),
            Ev::Update("a/x".into(), "11".into(), "16".into()),
        ]
    );
    eventually("third watch", || api.watch_requests().len() == 3).await;
    let versions: Vec<Option<String>> = api
        .watch_requests()
        .iter()
        .map(|r| r.q("resourceVersion").map(String::from))
        .collect();
    assert_eq!(
        versions,
        [Some("10".into()), Some("15".into()), Some("16".into())]
    );
    assert_eq!(api.list_requests().len(), 1);
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn transient_failures_back_off_and_keep_the_resource_version() {
    let api = MockApi::new();
    api.push_list_status(500);
    api.push_list_status(429);
    api.push_list(vec![cm("a", "x", "1")], "10");
    api.push_watch_status(500);
    api.push_watch_events(vec![crate::informer::mock::event(
        "ERROR",
        crate::informer::mock::status_json(500),
    )]);
    let _live = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    eventually("third watch", || api.watch_requests().len() == 3).await;
    assert_eq!(api.list_requests().len(), 3);
    assert!(
        api.watch_requests()
            .iter()
            .all(|r| r.q("resourceVersion") == Some("10"))
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn expired_continue_token_lists_again_in_one_request() {
    let api = MockApi::new();
    api.push_list(
        (0..7).map(|i| cm("a", &format!("o{i}"), "1")).collect(),
        "10",
    );
    api.fail_next_continue();
    let inf = SharedIndexInformer::<ConfigMap>::builder(api.client())
        .options(
            InformerOptions::default()
                .page_size(Some(3))
                .backoff(fast_backoff()),
        )
        .build();
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert_eq!(inf.store().len(), 7);
    let lists = api.list_requests();
    let shape: Vec<(Option<&str>, Option<&str>)> = lists
        .iter()
        .map(|r| (r.q("limit"), r.q("continue")))
        .collect();
    assert_eq!(
        shape,
        [(Some("3"), None), (Some("3"), Some("3")), (None, None)]
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn handler_added_late_first_receives_current_contents() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1"), cm("b", "y", "1")], "1");
    let live = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;

    let (rec, mut events) = recorder();
    let reg = inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        sorted(events.take(2).await),
        [add("a/x", "1", true), add("b/y", "1", true)]
    );
    eventually("late registration synced", || reg.has_synced()).await;
    live.send(event("MODIFIED", cm("a", "x", "2")));
    assert_eq!(
        events.next().await,
        Ev::Update("a/x".into(), "1".into(), "2".into())
    );
    events.assert_quiet().await;

    assert!(inf.remove_event_handler(&reg));
    assert!(!inf.remove_event_handler(&reg));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A handler that checks that its own view stays consistent: no add of a key it already has,
/// no update or delete of a key it does not have.
struct Mirror {
    keys: Arc<Mutex<BTreeSet<String>>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl EventHandler<ConfigMap> for Mirror {
    fn on_add(&self, obj: Arc<ConfigMap>, _: bool) {
        if !self.keys.lock().insert(key(&obj)) {
            self.errors
                .lock()
                .push(format!("doubled add {}", key(&obj)));
        }
    }
    fn on_update(&self, _: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        if !self.keys.lock().contains(&key(&new)) {
            self.errors
                .lock()
                .push(format!("update of unknown {}", key(&new)));
        }
    }
    fn on_delete(&self, obj: DeletedObject<ConfigMap>) {
        let k = obj.key().unwrap_or_default();
        if !self.keys.lock().remove(&k) {
            self.errors.lock().push(format!("delete of unknown {k}"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_subscription_is_atomic_with_the_event_stream() {
    let api = MockApi::new();
    api.push_list(
        (0..50).map(|i| cm("a", &format!("pre{i}"), "1")).collect(),
        "1",
    );
    let live = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;

    // Stream a mix of adds, updates and deletes while handlers subscribe.
    let feeder = tokio::spawn({
        let live = live.clone();
        async move {
            for i in 0..400 {
                live.send(event("ADDED", cm("a", &format!("n{i}"), "2")));
                if i % 3 == 0 {
                    live.send(event(
                        "MODIFIED",
                        cm("a", &format!("pre{}", i % 50), &format!("{}", 3 + i)),
                    ));
                }
                if i % 7 == 0 {
                    live.send(event("DELETED", cm("a", &format!("n{}", i / 2), "9")));
                }
                if i % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }
    });
    let mut mirrors = Vec::new();
    for _ in 0..8 {
        let m = Mirror {
            keys: Arc::default(),
            errors: Arc::default(),
        };
        let (keys, errors) = (m.keys.clone(), m.errors.clone());
        inf.add_event_handler(m).unwrap_or_else(|e| panic!("{e}"));
        mirrors.push((keys, errors));
        tokio::task::yield_now().await;
    }
    feeder.await.unwrap_or_else(|e| panic!("{e}"));
    let deleted: BTreeSet<usize> = (0..400).filter(|i| i % 7 == 0).map(|i| i / 2).collect();
    let expected = 50 + 400 - deleted.len();
    eventually("cache caught up", || inf.store().len() == expected).await;
    let want: BTreeSet<String> = inf.store().list_keys().into_iter().collect();
    for (keys, errors) in mirrors {
        eventually("mirror caught up", || *keys.lock() == want).await;
        assert!(errors.lock().is_empty(), "{:?}", errors.lock());
    }
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn resync_redelivers_every_cached_object() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1"), cm("a", "y", "2")], "1");
    let _live = api.push_live_watch();
    let inf = SharedIndexInformer::<ConfigMap>::builder(api.client())
        .options(
            InformerOptions::default()
                .resync(Duration::from_millis(200))
                .backoff(fast_backoff()),
        )
        .build();
    let (rec, mut events) = recorder();
    inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    events.take(2).await;
    for _ in 0..2 {
        assert_eq!(
            sorted(events.take(2).await),
            [
                Ev::Update("a/x".into(), "1".into(), "1".into()),
                Ev::Update("a/y".into(), "2".into(), "2".into()),
            ]
        );
    }
    // Resync does not hit the API.
    assert_eq!(api.list_requests().len(), 1);
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn shutdown_ends_the_watch_and_the_handler_tasks() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "1");
    let live = api.push_live_watch();
    let inf = informer(&api);
    let (rec, _events) = recorder();
    inf.add_event_handler(rec).unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    eventually("watch open", || !api.watch_requests().is_empty()).await;
    assert!(!live.is_closed());
    assert_eq!(inf.start().err(), Some(InformerError::AlreadyStarted));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(live.is_closed(), "the watch stream is still held");
    assert!(inf.is_stopped());
    assert!(
        inf.has_synced(),
        "a stopped informer keeps its cache and synced state"
    );
    let (rec, _e) = recorder();
    assert_eq!(
        inf.add_event_handler(rec).err(),
        Some(InformerError::Stopped)
    );
    assert_eq!(inf.start().err(), Some(InformerError::Stopped));
    let requests = api.requests().len();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(api.requests().len(), requests, "requests after shutdown");
}

#[tokio::test]
async fn wait_for_sync_fails_when_stopped_before_syncing() {
    let api = MockApi::new();
    for _ in 0..100 {
        api.push_list_status(500);
    }
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    let waiter = tokio::spawn({
        let inf = inf.clone();
        async move { inf.wait_for_sync().await }
    });
    eventually("a failed list", || !api.list_requests().is_empty()).await;
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        waiter.await.ok(),
        Some(Err(InformerError::StoppedBeforeSync))
    );
}

#[tokio::test]
async fn namespace_selectors_and_transform_are_applied() {
    let api = MockApi::new();
    api.push_list(vec![cm_labels("a", "x", "1", &[("app", "web")])], "1");
    let live = api.push_live_watch();
    let inf = SharedIndexInformer::<ConfigMap>::builder(api.client())
        .options(
            InformerOptions::default()
                .namespace("a")
                .tweak_list_params(|lp| lp.label_selector = Some("app=web".into()))
                .tweak_list_params(|lp| lp.field_selector = Some("metadata.name!=skip".into()))
                .backoff(fast_backoff()),
        )
        .transform(|mut o: ConfigMap| {
            o.metadata.managed_fields = None;
            o.metadata.annotations = Some([("transformed".to_string(), "yes".to_string())].into());
            o
        })
        .build();
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    live.send(event("ADDED", cm_labels("a", "y", "2", &[("app", "web")])));
    eventually("y cached", || inf.store().len() == 2).await;
    for o in inf.store().list() {
        assert!(o.metadata.managed_fields.is_none());
        assert!(
            o.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("transformed"))
        );
    }
    assert_eq!(
        inf.lister()
            .list(&Selector::parse("app=web").unwrap_or_default())
            .len(),
        2
    );
    for r in api.requests() {
        assert_eq!(r.path, "/api/v1/namespaces/a/configmaps");
        assert_eq!(r.q("labelSelector"), Some("app=web"), "{r:?}");
        assert_eq!(r.q("fieldSelector"), Some("metadata.name!=skip"), "{r:?}");
    }
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn cluster_scoped_kinds_ignore_the_namespace() {
    let api = MockApi::new();
    api.push_list(
        vec![serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "resourceVersion": "1"}})],
        "1",
    );
    let inf = SharedIndexInformer::<Namespace>::builder(api.client())
        .options(
            InformerOptions::default()
                .namespace("a")
                .backoff(fast_backoff()),
        )
        .build();
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    match tokio::time::timeout(Duration::from_secs(10), inf.wait_for_sync()).await {
        Ok(Ok(())) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(api.requests()[0].path, "/api/v1/namespaces");
    assert!(inf.lister().get("default").is_ok());
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_panicking_handler_keeps_receiving() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "1");
    let live = api.push_live_watch();
    let inf = informer(&api);
    let (tx, rx) = mpsc::unbounded_channel();
    let mut events = Events(rx);
    inf.add_event_handler(
        EventHandlerFuncs::new().add_func(move |o: Arc<ConfigMap>, initial| {
            let _ = tx.send(Ev::Add(key(&o), rv(&o), initial));
            if key(&o) == "a/x" {
                panic!("handler bug");
            }
        }),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert_eq!(events.next().await, add("a/x", "1", true));
    live.send(event("ADDED", cm("a", "y", "2")));
    assert_eq!(events.next().await, add("a/y", "2", false));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// Starts an informer whose first watch delivers resourceVersion 12, has `end` end that watch,
/// and checks that the informer watches again from 12 without relisting.
async fn resumes_from_the_last_event_without_relisting(end: impl FnOnce(&LiveWatch)) {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "10");
    let first = api.push_live_watch();
    let _second = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    first.send(event("MODIFIED", cm("a", "x", "12")));
    eventually("event applied", || inf.last_sync_resource_version() == "12").await;
    tokio::time::sleep(Duration::from_millis(1100)).await; // not a "very short watch"
    end(&first);
    eventually("second watch", || api.watch_requests().len() == 2).await;
    assert_eq!(api.watch_requests()[1].q("resourceVersion"), Some("12"));
    assert_eq!(api.list_requests().len(), 1);
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_watch_closed_by_the_server_resumes_from_the_last_event() {
    resumes_from_the_last_event_without_relisting(LiveWatch::close).await;
}

#[tokio::test]
async fn a_line_that_is_no_event_resumes_the_watch_from_the_last_event() {
    resumes_from_the_last_event_without_relisting(|w| {
        w.send(serde_json::json!({"type": "SURPRISE", "object": {}}));
    })
    .await;
}

#[tokio::test]
async fn an_event_split_across_chunks_is_applied_once_whole() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "10");
    let watch = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    let line = event("MODIFIED", cm("a", "x", "12")).to_string();
    let (head, tail) = line.split_at(line.len() / 2);
    watch.send_raw(head);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        inf.last_sync_resource_version(),
        "10",
        "half an event applied"
    );
    watch.send_raw(&format!("{tail}\n\n"));
    eventually("event applied", || inf.last_sync_resource_version() == "12").await;
    assert_eq!(api.watch_requests().len(), 1, "{:?}", api.watch_requests());
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_bare_gone_status_in_the_stream_relists() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "10");
    api.push_list(vec![cm("a", "x", "20")], "20");
    let first = api.push_live_watch();
    let _second = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    tokio::time::sleep(Duration::from_millis(1100)).await; // past "410 right after a list"
    first.send(
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": "Expired", "code": 410, "message": "too old resource version"}),
    );
    eventually("relisted", || api.list_requests().len() == 2).await;
    eventually("cache replaced", || {
        inf.last_sync_resource_version() == "20"
    })
    .await;
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// Documents why the informer has its own list/watch loop: kube-runtime's `watcher` answers an
/// HTTP 410 at watch start by retrying the same expired version, never relisting.
#[tokio::test]
async fn kube_watcher_retries_an_expired_version_at_watch_start() {
    use futures::StreamExt;
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "1")], "10");
    for _ in 0..3 {
        api.push_watch_status(410);
    }
    let stream = kube::runtime::watcher(
        kube::Api::<ConfigMap>::all(api.client()),
        kube::runtime::watcher::Config::default(),
    );
    let mut stream = std::pin::pin!(stream);
    // Init, InitApply, InitDone, then three failed watch starts.
    for _ in 0..6 {
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
    }
    let versions: Vec<Option<String>> = api
        .watch_requests()
        .iter()
        .map(|r| r.q("resourceVersion").map(String::from))
        .collect();
    assert_eq!(
        versions,
        [
            Some("10".to_string()),
            Some("10".to_string()),
            Some("10".to_string())
        ]
    );
    assert_eq!(
        api.list_requests().len(),
        1,
        "kube's watcher did not relist"
    );
}

#[tokio::test]
async fn waiting_for_a_store_version_ends_once_an_event_or_bookmark_reaches_it() {
    let api = MockApi::new();
    api.push_list(vec![cm("a", "x", "10")], "10");
    let live = api.push_live_watch();
    let inf = informer(&api);
    let running = inf.start().unwrap_or_else(|e| panic!("{e}"));
    synced(&inf).await;
    assert!(matches!(
        inf.wait_for_store_resource_version("07").await,
        Err(NotComparable(rv)) if rv == "07"
    ));
    // Already reached: at once.
    inf.wait_for_store_resource_version("9")
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let written = tokio::spawn({
        let inf = inf.clone();
        async move { inf.wait_for_store_resource_version("12").await }
    });
    live.send(event("MODIFIED", cm("a", "x", "11")));
    eventually("event seen", || inf.last_sync_resource_version() == "11").await;
    assert!(!written.is_finished(), "11 is not 12");
    live.send(event("ADDED", cm("a", "y", "12")));
    let done = tokio::time::timeout(Duration::from_secs(10), written).await;
    assert!(matches!(done, Ok(Ok(Ok(())))), "{done:?}");
    // The object of the awaited write is in the store by then.
    assert_eq!(cache_keys(&inf), ["a/x", "a/y"]);

    // A bookmark moves the store's version too (nothing changed up to it).
    let later = tokio::spawn({
        let inf = inf.clone();
        async move { inf.wait_for_store_resource_version("100").await }
    });
    live.send(bookmark("100"));
    let done = tokio::time::timeout(Duration::from_secs(10), later).await;
    assert!(matches!(done, Ok(Ok(Ok(())))), "{done:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
