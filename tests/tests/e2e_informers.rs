//! The generated informers and listers of the crddemo example against a real kube-apiserver
//! v1.37 ([`tests::apiserver::RealApiServer`]), on the generated CRD (`Mydemo::crd()`).
//!
//! * `generated_informer_and_lister_see_create_update_delete`: the generated
//!   `SharedInformerFactory` (`factory.crddemo().v1().mydemos()`) reports the initial list,
//!   create, update (old and new object) and delete; its lister answers `namespaced(ns).get` and
//!   label-selected `list`s from the cache; `informer_for::<Service>()` does the same for a
//!   built-in kind.
//! * `two_informers_on_one_factory_share_one_watch`: the client's requests are counted by a tower
//!   layer; two informers of one kind from one factory (and two of `Service`) cost exactly one
//!   LIST and one WATCH per resource, while a second factory opens its own.
//! * `watch_list_syncs_with_one_watch`: with `InformerOptions::watch_list`, the informer's only
//!   collection request is one WATCH with `sendInitialEvents=true` (kube-apiserver v1.37 serves
//!   WatchList): the cache holds what existed, and later changes arrive on the same stream.
//! * `informer_converges_after_an_apiserver_restart`: kube-apiserver is stopped while an informer
//!   runs and started again; a change made right after it is back reaches the informer and its
//!   lister.
//!
//! The first two tests share one server (started on first use, like `e2e_real_apiserver`, and
//! stopped when the test process exits); the restart test runs its own. Every test works in a
//! namespace of its own (`e2e-inf-<run>-<test>`), never deleted: namespaces do not finish
//! deleting on a bare kube-apiserver.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::clientset::versioned::Clientset;
use example_crddemo::pkg::client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::client::ClientBuilder;
use kube::{CustomResourceExt, Resource};
use kube_codegen_runtime::api_status::is_not_found;
use kube_codegen_runtime::informer::{DeletedObject, EventHandlerFuncs, InformerOptions};
use kube_codegen_runtime::labels::Selector;
use serde_json::json;
use tests::apiserver::{RealApiServer, apply_crd, wait_crd_established};
use tests::e2e::{Timer, init_tracing, run_id};
use tokio::sync::{OnceCell, mpsc};
use tower::util::MapRequestLayer;

const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Servers, namespaces, timing
// ---------------------------------------------------------------------------------------------

/// Starts a server and installs the generated `Mydemo` CRD.
async fn start_server() -> Result<RealApiServer, String> {
    init_tracing();
    let server = RealApiServer::start()
        .await
        .map_err(|e| format!("starting the real API server: {e}"))?;
    eprintln!(
        "[e2e] kube-apiserver {} ready in {:.2?}",
        server.url(),
        server.started_in()
    );
    let client = server.client().map_err(|e| e.to_string())?;
    apply_crd(&client, &Mydemo::crd())
        .await
        .map_err(|e| format!("applying the generated Mydemo CRD: {e}"))?;
    wait_crd_established(&client, Mydemo::crd_name())
        .await
        .map_err(|e| e.to_string())?;
    Ok(server)
}

static SHARED: OnceCell<Result<RealApiServer, String>> = OnceCell::const_new();

async fn shared() -> &'static RealApiServer {
    match SHARED.get_or_init(start_server).await {
        Ok(server) => server,
        Err(e) => panic!("{e}"),
    }
}

/// Creates the namespace `e2e-inf-<run>-<test>`.
async fn namespace(client: &kube::Client, test: &str) -> String {
    let ns = format!("e2e-inf-{}-{}", run_id(), test.replace('_', "-"));
    let ns = ns[..ns.len().min(63)].trim_end_matches('-').to_string();
    tests::e2e::create_namespace(client, &ns).await.unwrap();
    ns
}

// ---------------------------------------------------------------------------------------------
// Objects, what the handlers saw, request counting
// ---------------------------------------------------------------------------------------------

fn mydemo(name: &str, port: i32, labels: &[(&str, &str)]) -> Mydemo {
    Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>(),
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

fn service(name: &str, port: i32) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                port,
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

/// One notification of an event handler: `(kind, name, port or 0, detail)`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    /// `on_add(obj, is_in_initial_list)`.
    Add {
        name: String,
        port: i32,
        initial: bool,
    },
    /// `on_update(old, new)`, with both resourceVersions.
    Update {
        name: String,
        old_port: i32,
        new_port: i32,
        old_rv: String,
        new_rv: String,
    },
    /// `on_delete`, with the last state known and whether it came as a tombstone.
    Delete {
        name: String,
        port: i32,
        tombstone: bool,
    },
}

impl Seen {
    fn name(&self) -> &str {
        match self {
            Seen::Add { name, .. } | Seen::Update { name, .. } | Seen::Delete { name, .. } => name,
        }
    }
}

/// An event handler that forwards every notification to a channel; `port` reads the object.
fn recorder<K: Resource + Send + Sync + 'static>(
    port: fn(&K) -> i32,
) -> (EventHandlerFuncs<K>, mpsc::UnboundedReceiver<Seen>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (t1, t2, t3) = (tx.clone(), tx.clone(), tx);
    let name = |k: &K| k.meta().name.clone().unwrap_or_default();
    let rv = |k: &K| k.meta().resource_version.clone().unwrap_or_default();
    let handler = EventHandlerFuncs::new()
        .add_func(move |obj: Arc<K>, initial| {
            let _ = t1.send(Seen::Add {
                name: name(&obj),
                port: port(&obj),
                initial,
            });
        })
        .update_func(move |old: Arc<K>, new: Arc<K>| {
            let _ = t2.send(Seen::Update {
                name: name(&new),
                old_port: port(&old),
                new_port: port(&new),
                old_rv: rv(&old),
                new_rv: rv(&new),
            });
        })
        .delete_func(move |gone: DeletedObject<K>| {
            let last = gone.object().cloned();
            let _ = t3.send(Seen::Delete {
                name: last.as_deref().map(name).unwrap_or_default(),
                port: last.as_deref().map_or(0, port),
                tombstone: gone.is_tombstone(),
            });
        });
    (handler, rx)
}

fn mydemo_port(m: &Mydemo) -> i32 {
    m.spec.port
}

fn service_port(s: &Service) -> i32 {
    s.spec
        .as_ref()
        .and_then(|spec| spec.ports.as_ref())
        .and_then(|p| p.first())
        .map_or(0, |p| p.port)
}

/// Receives until a notification matches `want`, skipping resync updates (same
/// resourceVersion); fails after `timeout` with everything seen meanwhile.
async fn expect(
    rx: &mut mpsc::UnboundedReceiver<Seen>,
    timeout: Duration,
    what: &str,
    want: impl Fn(&Seen) -> bool,
) -> Seen {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let next = tokio::time::timeout_at(deadline, rx.recv()).await;
        match next {
            Ok(Some(s)) if want(&s) => return s,
            Ok(Some(s)) => seen.push(s),
            Ok(None) => panic!("handler channel closed while waiting for {what}; saw {seen:?}"),
            Err(_) => panic!("no {what} within {timeout:?}; saw {seen:?}"),
        }
    }
}

/// What the client sent: `(method, path, query)` for every request.
#[derive(Clone, Default)]
struct Requests(Arc<Mutex<Vec<(http::Method, String, String)>>>);

impl Requests {
    fn record<B>(&self, req: &http::Request<B>) {
        let uri = req.uri();
        let entry = (
            req.method().clone(),
            uri.path().to_string(),
            uri.query().unwrap_or("").to_string(),
        );
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
    }

    /// `(lists, watches)` of the collection at `path` (GETs with and without `watch=true`).
    fn list_watch(&self, path: &str) -> (usize, usize) {
        let all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let gets = all
            .iter()
            .filter(|(m, p, _)| m == http::Method::GET && p == path);
        let (mut lists, mut watches) = (0, 0);
        for (_, _, query) in gets {
            if query
                .split('&')
                .any(|kv| kv == "watch=true" || kv == "watch=1")
            {
                watches += 1;
            } else {
                lists += 1;
            }
        }
        (lists, watches)
    }

    /// Every LIST or WATCH (a GET of a collection), as `METHOD path?query`.
    fn collection_gets(&self) -> Vec<String> {
        let all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.iter()
            .filter(|(m, p, _)| {
                m == http::Method::GET && (p.ends_with("/mydemos") || p.ends_with("/services"))
            })
            .map(|(m, p, q)| format!("{m} {p}?{q}"))
            .collect()
    }
}

/// A client of `server` whose every request is recorded in the returned [`Requests`] by a
/// tower layer on the client's service stack.
fn counting_client(server: &RealApiServer) -> (kube::Client, Requests) {
    let requests = Requests::default();
    let recorder = requests.clone();
    let client = ClientBuilder::try_from(server.config().clone())
        .unwrap()
        .with_layer(&MapRequestLayer::new(
            move |req: http::Request<kube::client::Body>| {
                recorder.record(&req);
                req
            },
        ))
        .build();
    (client, requests)
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_informer_and_lister_see_create_update_delete() {
    let _timer = Timer::new("informer_and_lister");
    let server = shared().await;
    let client = server.client().unwrap();
    let ns = namespace(&client, "crud").await;
    let clientset = Clientset::new(client.clone());
    let demos = clientset.crddemo_v1().mydemos(&ns);
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);

    // Present before the informer starts: delivered by the initial list.
    demos
        .create(&mydemo("pre", 1, &[("tier", "a")]), &PostParams::default())
        .await
        .unwrap();

    let factory = SharedInformerFactory::builder(&clientset)
        .options(InformerOptions::default().namespace(ns.clone()))
        .build();
    let mydemo_informer = factory.crddemo().v1().mydemos();
    let (handler, mut seen) = recorder::<Mydemo>(mydemo_port);
    mydemo_informer
        .informer()
        .add_event_handler(handler)
        .unwrap();
    let service_informer = factory.informer_for::<Service>();
    let (handler, mut seen_services) = recorder::<Service>(service_port);
    service_informer.add_event_handler(handler).unwrap();

    factory.start();
    let synced = tokio::time::timeout(WAIT, factory.wait_for_cache_sync())
        .await
        .expect("caches did not sync in time");
    assert!(synced.all_synced(), "{:?}", synced.failed());

    let initial = expect(&mut seen, WAIT, "initial add of pre", |s| s.name() == "pre").await;
    assert_eq!(
        initial,
        Seen::Add {
            name: "pre".into(),
            port: 1,
            initial: true
        }
    );
    let lister = mydemo_informer.lister();
    assert_eq!(lister.namespaced(&ns).get("pre").unwrap().spec.port, 1);

    // create
    let a = demos
        .create(&mydemo("a", 8080, &[("tier", "a")]), &PostParams::default())
        .await
        .unwrap();
    demos
        .create(&mydemo("b", 8081, &[("tier", "b")]), &PostParams::default())
        .await
        .unwrap();
    for (name, port) in [("a", 8080), ("b", 8081)] {
        let add = expect(&mut seen, WAIT, &format!("add of {name}"), |s| {
            s.name() == name
        })
        .await;
        assert_eq!(
            add,
            Seen::Add {
                name: name.into(),
                port,
                initial: false
            }
        );
    }

    // update: the handler gets the old and the new object
    let updated = demos
        .patch(
            "a",
            &Patch::Merge(json!({"spec": {"port": 9090}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    let update = expect(&mut seen, WAIT, "update of a", |s| {
        matches!(s, Seen::Update { name, old_rv, new_rv, .. } if name == "a" && old_rv != new_rv)
    })
    .await;
    assert_eq!(
        update,
        Seen::Update {
            name: "a".into(),
            old_port: 8080,
            new_port: 9090,
            old_rv: a.metadata.resource_version.clone().unwrap(),
            new_rv: updated.metadata.resource_version.clone().unwrap(),
        }
    );
    // The cache is written before the handlers hear of it.
    let cached = lister.namespaced(&ns).get("a").unwrap();
    assert_eq!(cached.spec.port, 9090);
    assert_eq!(
        cached.metadata.resource_version,
        updated.metadata.resource_version
    );

    // the lister: get and label-selected lists, from the cache
    let names = |items: Vec<Arc<Mydemo>>| {
        let mut n: Vec<String> = items
            .iter()
            .filter_map(|m| m.metadata.name.clone())
            .collect();
        n.sort();
        n
    };
    let ns_lister = lister.namespaced(&ns);
    let sel = |s: &str| Selector::parse(s).unwrap();
    assert_eq!(names(ns_lister.list(&sel("tier=a"))), ["a", "pre"]);
    assert_eq!(
        names(ns_lister.list(&sel("tier in (a,b)"))),
        ["a", "b", "pre"]
    );
    assert_eq!(names(ns_lister.list(&sel("tier!=a"))), ["b"]);
    assert_eq!(names(ns_lister.list(&sel("tier=c"))), Vec::<String>::new());
    assert_eq!(
        names(ns_lister.list(&Selector::everything())),
        ["a", "b", "pre"]
    );
    assert_eq!(names(lister.list(&sel("tier=b"))), ["b"]);
    let err = lister.namespaced("elsewhere").get("a").unwrap_err();
    assert!(is_not_found(&err), "{err:?}");

    // delete
    demos.delete("b", &DeleteParams::default()).await.unwrap();
    let delete = expect(
        &mut seen,
        WAIT,
        "delete of b",
        |s| matches!(s, Seen::Delete { name, .. } if name == "b"),
    )
    .await;
    assert_eq!(
        delete,
        Seen::Delete {
            name: "b".into(),
            port: 8081,
            tombstone: false
        }
    );
    let err = ns_lister.get("b").unwrap_err();
    assert!(is_not_found(&err), "{err:?}");
    assert_eq!(names(ns_lister.list(&Selector::everything())), ["a", "pre"]);

    // a built-in kind through the same factory: informer_for::<Service>()
    services
        .create(&PostParams::default(), &service("web", 80))
        .await
        .unwrap();
    let add = expect(&mut seen_services, WAIT, "add of Service web", |s| {
        s.name() == "web"
    })
    .await;
    assert_eq!(
        add,
        Seen::Add {
            name: "web".into(),
            port: 80,
            initial: false
        }
    );
    let svc_lister = factory.lister_for::<Service>();
    let cached = svc_lister.namespaced(&ns).get("web").unwrap();
    assert!(
        cached
            .spec
            .as_ref()
            .and_then(|s| s.cluster_ip.as_deref())
            .is_some_and(|ip| ip.starts_with("10.0.")),
        "the apiserver allocated a ClusterIP: {cached:?}"
    );
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ports": [{"port": 81}]}})),
        )
        .await
        .unwrap();
    let update = expect(&mut seen_services, WAIT, "update of Service web", |s| {
        matches!(s, Seen::Update { name, old_rv, new_rv, .. } if name == "web" && old_rv != new_rv)
    })
    .await;
    assert!(
        matches!(
            update,
            Seen::Update {
                old_port: 80,
                new_port: 81,
                ..
            }
        ),
        "{update:?}"
    );
    services
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let delete = expect(&mut seen_services, WAIT, "delete of Service web", |s| {
        matches!(s, Seen::Delete { .. })
    })
    .await;
    assert_eq!(
        delete,
        Seen::Delete {
            name: "web".into(),
            port: 81,
            tombstone: false
        }
    );
    let err = svc_lister.namespaced(&ns).get("web").unwrap_err();
    assert!(is_not_found(&err), "{err:?}");

    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_informers_on_one_factory_share_one_watch() {
    let _timer = Timer::new("shared_watch");
    let server = shared().await;
    let ns = namespace(&server.client().unwrap(), "shared_watch").await;
    let (client, requests) = counting_client(server);
    let clientset = Clientset::new(client.clone());
    let mydemos_path = format!("/apis/crddemo.k8s.io/v1/namespaces/{ns}/mydemos");
    let services_path = format!("/api/v1/namespaces/{ns}/services");

    let factory = SharedInformerFactory::builder(&clientset)
        .options(InformerOptions::default().namespace(ns.clone()))
        .build();
    // Two callers of the generated accessor and one of the generic one: one informer.
    let first = factory.crddemo().v1().mydemos();
    let second = factory.crddemo().v1().mydemos();
    let generic = factory.informer_for::<Mydemo>();
    assert!(first.informer().ptr_eq(second.informer()));
    assert!(first.informer().ptr_eq(&generic));
    let (h1, mut seen1) = recorder::<Mydemo>(mydemo_port);
    let (h2, mut seen2) = recorder::<Mydemo>(mydemo_port);
    first.informer().add_event_handler(h1).unwrap();
    second.informer().add_event_handler(h2).unwrap();
    // Two Service informers from the same factory: one informer too.
    let svc1 = factory.informer_for::<Service>();
    let svc2 = factory.informer_for::<Service>();
    assert!(svc1.ptr_eq(&svc2));
    let (h3, mut seen3) = recorder::<Service>(service_port);
    let (h4, mut seen4) = recorder::<Service>(service_port);
    svc1.add_event_handler(h3).unwrap();
    svc2.add_event_handler(h4).unwrap();

    factory.start();
    factory.start(); // starting again starts nothing new
    let synced = tokio::time::timeout(WAIT, factory.wait_for_cache_sync())
        .await
        .expect("caches did not sync in time");
    assert!(synced.all_synced(), "{:?}", synced.failed());

    // Both handlers of each kind see the same changes.
    let demos = clientset.crddemo_v1().mydemos(&ns);
    demos
        .create(&mydemo("x", 80, &[]), &PostParams::default())
        .await
        .unwrap();
    demos
        .patch(
            "x",
            &Patch::Merge(json!({"spec": {"port": 81}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    services
        .create(&PostParams::default(), &service("s", 80))
        .await
        .unwrap();
    for rx in [&mut seen1, &mut seen2] {
        expect(rx, WAIT, "add of x", |s| s.name() == "x").await;
        expect(rx, WAIT, "update of x to 81", |s| {
            matches!(s, Seen::Update { new_port: 81, .. })
        })
        .await;
    }
    for rx in [&mut seen3, &mut seen4] {
        expect(rx, WAIT, "add of s", |s| s.name() == "s").await;
    }
    // Give a duplicate watch, if there were one, time to show up.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let gets = requests.collection_gets();
    eprintln!("[e2e] list/watch requests of one factory: {gets:#?}");
    assert_eq!(
        requests.list_watch(&mydemos_path),
        (1, 1),
        "one LIST and one WATCH of mydemos: {gets:#?}"
    );
    assert_eq!(
        requests.list_watch(&services_path),
        (1, 1),
        "one LIST and one WATCH of services: {gets:#?}"
    );
    assert_eq!(gets.len(), 4, "no other list or watch: {gets:#?}");

    // The counter does see every watch: a second factory opens its own.
    let other = SharedInformerFactory::builder(&clientset)
        .options(InformerOptions::default().namespace(ns.clone()))
        .build();
    let _third = other.crddemo().v1().mydemos();
    other.start();
    let synced = tokio::time::timeout(WAIT, other.wait_for_cache_sync())
        .await
        .expect("the second factory did not sync in time");
    assert!(synced.all_synced());
    let deadline = Instant::now() + WAIT;
    while requests.list_watch(&mydemos_path) != (2, 2) {
        assert!(
            Instant::now() < deadline,
            "the second factory's watch was not counted: {:#?}",
            requests.collection_gets()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(requests.list_watch(&services_path), (1, 1));

    other.shutdown().await;
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_converges_after_an_apiserver_restart() {
    let _timer = Timer::new("informer_across_restart");
    let mut server = start_server().await.unwrap();
    let admin = server.client().unwrap();
    let ns = namespace(&admin, "restart").await;
    let (client, requests) = counting_client(&server);
    let clientset = Clientset::new(client);
    let mydemos_path = format!("/apis/crddemo.k8s.io/v1/namespaces/{ns}/mydemos");

    let factory = SharedInformerFactory::builder(&clientset)
        .options(InformerOptions::default().namespace(ns.clone()))
        .build();
    let informer = factory.crddemo().v1().mydemos();
    let (handler, mut seen) = recorder::<Mydemo>(mydemo_port);
    informer.informer().add_event_handler(handler).unwrap();
    factory.start();
    let synced = tokio::time::timeout(WAIT, factory.wait_for_cache_sync())
        .await
        .expect("caches did not sync in time");
    assert!(synced.all_synced());

    let demos = Clientset::new(admin.clone()).crddemo_v1().mydemos(&ns);
    demos
        .create(&mydemo("a", 8080, &[]), &PostParams::default())
        .await
        .unwrap();
    demos
        .create(&mydemo("gone", 1, &[]), &PostParams::default())
        .await
        .unwrap();
    expect(&mut seen, WAIT, "add of a", |s| s.name() == "a").await;
    expect(&mut seen, WAIT, "add of gone", |s| s.name() == "gone").await;
    let before = requests.list_watch(&mydemos_path);

    // Stop kube-apiserver while the informer runs; its watch breaks and it backs off.
    let t_stop = Instant::now();
    server.stop_apiserver().await.unwrap();
    eprintln!("[e2e] kube-apiserver stopped in {:.2?}", t_stop.elapsed());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        informer.informer().has_synced(),
        "a synced cache stays synced"
    );
    assert_eq!(
        informer
            .lister()
            .namespaced(&ns)
            .get("a")
            .unwrap()
            .spec
            .port,
        8080,
        "the cache keeps serving while the server is down"
    );
    server.start_apiserver().await.unwrap();
    let t_back = Instant::now();
    eprintln!("[e2e] kube-apiserver down for {:.2?}", t_back - t_stop);

    // Right after it is back (and before the informer reconnects): change, create, delete.
    let deadline = Instant::now() + WAIT;
    loop {
        let patched = demos
            .patch(
                "a",
                &Patch::Merge(json!({"spec": {"port": 9090}})),
                &PatchParams::default(),
            )
            .await;
        match patched {
            Ok(_) => break,
            Err(e) => {
                // The CRD's handler may need a moment after /readyz.
                assert!(Instant::now() < deadline, "patch after restart: {e:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    demos
        .create(&mydemo("b", 7070, &[]), &PostParams::default())
        .await
        .unwrap();
    demos
        .delete("gone", &DeleteParams::default())
        .await
        .unwrap();
    let t_changed = Instant::now();

    let limit = Duration::from_secs(60);
    let mut pending = vec!["update of a", "add of b", "delete of gone"];
    while !pending.is_empty() {
        let s = expect(
            &mut seen,
            limit,
            &format!("{pending:?}"),
            |s| !matches!(s, Seen::Update { old_rv, new_rv, .. } if old_rv == new_rv),
        )
        .await;
        match &s {
            Seen::Update {
                name,
                old_port: 8080,
                new_port: 9090,
                ..
            } if name == "a" => pending.retain(|p| *p != "update of a"),
            Seen::Add {
                name,
                port: 7070,
                initial: false,
            } if name == "b" => pending.retain(|p| *p != "add of b"),
            Seen::Delete { name, port: 1, .. } if name == "gone" => {
                pending.retain(|p| *p != "delete of gone")
            }
            other => panic!("unexpected notification after the restart: {other:?}"),
        }
    }
    let converged = t_changed.elapsed();
    let lister = informer.lister();
    assert_eq!(lister.namespaced(&ns).get("a").unwrap().spec.port, 9090);
    assert_eq!(lister.namespaced(&ns).get("b").unwrap().spec.port, 7070);
    assert!(is_not_found(
        &lister.namespaced(&ns).get("gone").unwrap_err()
    ));
    let after = requests.list_watch(&mydemos_path);
    eprintln!(
        "[e2e] informer converged {converged:.2?} after the changes ({:.2?} after the server was \
         back); mydemos (lists, watches) before the restart {before:?}, after {after:?}",
        t_back.elapsed()
    );
    eprintln!(
        "[e2e] requests since the restart: {:#?}",
        &requests.collection_gets()[before.0 + before.1..]
    );
    assert_eq!(before, (1, 1));
    // The restarted server's watch cache starts after the informer's last resourceVersion, so
    // the watch from it is answered 410 Gone and the informer relists.
    assert!(after.0 >= 2, "the informer relisted: {after:?}");
    assert!(after.1 > before.1, "the informer watched again: {after:?}");

    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_syncs_with_one_watch() {
    let _timer = Timer::new("watch_list");
    let server = shared().await;
    let ns = namespace(&server.client().unwrap(), "watch_list").await;
    let (client, requests) = counting_client(server);
    let clientset = Clientset::new(client.clone());
    let demos = clientset.crddemo_v1().mydemos(&ns);
    for (name, port) in [("a", 1), ("b", 2)] {
        demos
            .create(&mydemo(name, port, &[]), &PostParams::default())
            .await
            .unwrap();
    }
    let factory = SharedInformerFactory::builder(&clientset)
        .options(
            InformerOptions::default()
                .namespace(ns.clone())
                .watch_list(true),
        )
        .build();
    let informer = factory.crddemo().v1().mydemos();
    factory.start();
    let synced = tokio::time::timeout(WAIT, factory.wait_for_cache_sync())
        .await
        .expect("caches did not sync in time");
    assert!(synced.all_synced(), "{:?}", synced.failed());
    let mut keys = informer.informer().store().list_keys();
    keys.sort();
    assert_eq!(keys, [format!("{ns}/a"), format!("{ns}/b")]);

    demos
        .create(&mydemo("c", 3, &[]), &PostParams::default())
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    while informer
        .informer()
        .store()
        .get_by_key(&format!("{ns}/c"))
        .is_none()
    {
        assert!(Instant::now() < deadline, "c never reached the cache");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let path = format!("/apis/crddemo.k8s.io/v1/namespaces/{ns}/mydemos");
    let reads: Vec<String> = requests
        .collection_gets()
        .into_iter()
        .filter(|r| r.starts_with(&format!("GET {path}?")))
        .collect();
    assert_eq!(reads.len(), 1, "{reads:#?}");
    assert!(
        reads[0].contains("watch=true") && reads[0].contains("sendInitialEvents=true"),
        "{reads:#?}"
    );
    factory.shutdown().await;
}
