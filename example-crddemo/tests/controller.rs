//! The crddemo controller against the generated fake clientset: the scenarios of the seed's
//! walkthrough and the ways the world can drift from it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use example_crddemo::controller::status::{ready_condition, status_apply_configuration};
use example_crddemo::controller::{CONTROLLER_NAME, Controller, Options, informer_options};
use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::applyconfiguration::crddemo::v1::{
    MydemoApplyConfiguration, MydemoStatusApplyConfiguration, extract_mydemo_status,
};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, GetParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::apply::meta::ConditionApplyConfiguration;
use kube_codegen_runtime::fake::{FakeHandle, Reaction, to_value};
use kube_controller_runtime::{Manager, ManagerError, Request};

#[allow(dead_code)] // its `main` is the example's
#[path = "../examples/builder.rs"]
mod builder_example;

/// The two implementations every scenario runs against: the hand-written informer → queue →
/// worker controller (as the `crddemo` binary runs it, under a Manager), and the Builder
/// variant of `examples/builder.rs`.
#[derive(Debug, Clone, Copy)]
enum Variant {
    HandWritten,
    Builder,
}

type Probe<T> = Box<dyn Fn() -> T + Send + Sync>;
type KeyProbe = Box<dyn Fn(&str) -> u32 + Send + Sync>;

struct Running {
    clientset: Clientset,
    handle: FakeHandle,
    /// Nothing queued, waiting or in hand.
    idle: Probe<bool>,
    /// How often a key was requeued with backoff.
    requeues: KeyProbe,
    /// How many times the sync handler ran.
    syncs: Probe<u64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), ManagerError>>>,
}

/// `controller_runtime_reconcile_total` of the `mydemo` controller, all results.
fn reconciles(metrics: &kube_controller_runtime::Metrics) -> u64 {
    let text = metrics.encode();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("{e}"));
    scrape
        .samples
        .iter()
        .filter(|s| {
            s.metric == "controller_runtime_reconcile_total"
                && s.labels.get("controller") == Some("mydemo")
        })
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v as u64,
            ref other => panic!("controller_runtime_reconcile_total is no counter: {other:?}"),
        })
        .sum()
}

impl Running {
    async fn start(v: Variant, workers: usize, namespaces: &[&str]) -> Running {
        Self::start_with(v, workers, namespaces, None).await
    }

    async fn start_with(
        v: Variant,
        workers: usize,
        namespaces: &[&str],
        resync: Option<Duration>,
    ) -> Running {
        // The fake, like kube-apiserver, starts with `default`, `kube-system` … in place.
        let objects = namespaces.iter().filter(|ns| **ns != "default").map(|ns| {
            to_value(&Namespace {
                metadata: ObjectMeta {
                    name: Some((*ns).into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            })
            .unwrap()
        });
        let (clientset, handle) = fake::Clientset::new(objects.collect::<Vec<_>>()).unwrap();
        let opts = Options {
            workers,
            namespace: None,
            resync,
            instance: "test".into(),
            reconcile_delay: std::time::Duration::ZERO,
        };
        let mgr = Manager::builder(clientset.client().clone())
            .informer_options(informer_options(&opts))
            .build()
            .unwrap();
        let (idle, requeues, syncs): (Probe<bool>, KeyProbe, Probe<u64>) = match v {
            Variant::HandWritten => {
                let controller = Controller::with_manager(&mgr, opts).unwrap();
                let (q, counter) = (controller.queue().clone(), controller.sync_count());
                let q2 = q.clone();
                mgr.add(controller).unwrap();
                let metrics = mgr.metrics().clone();
                (
                    Box::new(move || q.is_empty() && q.processing() == 0 && q.waiting() == 0),
                    Box::new(move |key: &str| q2.num_requeues(&key.to_string())),
                    // The hand-written loop reports controller-runtime's reconcile metrics, one
                    // per run of the sync handler, as the Builder's controller does.
                    Box::new(move || {
                        let (recorded, ran) =
                            (reconciles(&metrics), counter.load(Ordering::SeqCst));
                        assert!(
                            recorded <= ran,
                            "controller_runtime_reconcile_total {recorded}, syncs {ran}"
                        );
                        recorded
                    }),
                )
            }
            Variant::Builder => {
                let controller = builder_example::controller(&mgr, workers).unwrap();
                let q = controller.queue().clone();
                let q2 = q.clone();
                mgr.add(controller).unwrap();
                let metrics = mgr.metrics().clone();
                (
                    Box::new(move || q.is_empty() && q.processing() == 0 && q.waiting() == 0),
                    Box::new(move |key: &str| q2.num_requeues(&Request::from_key(key))),
                    Box::new(move || reconciles(&metrics)),
                )
            }
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(mgr.start(async move {
            let _ = rx.await;
        }));
        Running {
            clientset,
            handle,
            idle,
            requeues,
            syncs,
            stop: Some(tx),
            task: Some(task),
        }
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
    }

    async fn create(&self, ns: &str, name: &str, ip: &str, port: i32) -> Mydemo {
        let m = Mydemo {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                ..ObjectMeta::default()
            },
            spec: MydemoSpec {
                ip: ip.into(),
                port,
            },
            status: None,
        };
        self.clientset
            .crddemo_v1()
            .mydemos(ns)
            .create(&m, &PostParams::default())
            .await
            .unwrap()
    }

    fn mydemo(&self, ns: &str, name: &str) -> Option<Mydemo> {
        self.handle.get::<Mydemo>(ns, name).unwrap()
    }

    fn events(&self, ns: &str, reason: &str) -> Vec<Event> {
        self.handle
            .list_in::<Event>(Some(ns))
            .unwrap()
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect()
    }
}

/// Polls `check` until it returns `Some`, or fails after 20 s with `what`.
async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the controller's queue is idle (nothing queued, waiting or in hand) for a few
/// polls in a row, and returns the sync count then.
async fn settle(r: &Running) -> u64 {
    let mut idle = 0;
    eventually("the queue idle", || {
        idle = if (r.idle)() { idle + 1 } else { 0 };
        (idle >= 10).then(|| (r.syncs)())
    })
    .await
}

fn is_ready(m: &Mydemo) -> bool {
    let observed = m.status.as_ref().and_then(|s| s.observed_generation) == m.metadata.generation;
    observed && ready_condition(m).is_some_and(|c| c.status == "True")
}

fn slice_port(s: &EndpointSlice) -> Option<i32> {
    s.ports.iter().flatten().find_map(|p| p.port)
}

async fn create_makes_service_endpoint_slice_status_and_event(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    let created = r.create("default", "demo", "10.1.2.3", 8080).await;

    let m = eventually("Ready", || r.mydemo("default", "demo").filter(is_ready)).await;
    let status = m.status.clone().unwrap();
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.service_name.as_deref(), Some("demo"));
    let cond = ready_condition(&m).unwrap();
    assert_eq!(cond.reason, "Synced");
    assert_eq!(cond.message, "Service demo exposes 10.1.2.3:8080");

    let svc = r
        .handle
        .get::<Service>("default", "demo")
        .unwrap()
        .expect("Service");
    let spec = svc.spec.clone().unwrap();
    assert!(spec.selector.is_none(), "selector-less Service");
    assert_eq!(spec.ports.unwrap()[0].port, 8080);
    let owner = &svc.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Mydemo", "demo")
    );
    assert_eq!(Some(owner.uid.as_str()), created.metadata.uid.as_deref());
    assert_eq!(owner.controller, Some(true));

    let slice = r
        .handle
        .get::<EndpointSlice>("default", "demo")
        .unwrap()
        .expect("EndpointSlice");
    assert_eq!(slice.address_type, "IPv4");
    assert_eq!(slice.endpoints.as_ref().unwrap()[0].addresses, ["10.1.2.3"]);
    assert_eq!(slice_port(&slice), Some(8080));
    assert_eq!(
        slice.metadata.labels.as_ref().unwrap()["kubernetes.io/service-name"],
        "demo"
    );

    let synced = eventually("a Synced event", || {
        Some(r.events("default", "Synced")).filter(|e| !e.is_empty())
    })
    .await;
    assert_eq!(synced[0].type_.as_deref(), Some("Normal"));
    assert_eq!(
        synced[0].note.as_deref(),
        Some("Mydemo synced successfully")
    );
    assert_eq!(
        synced[0].regarding.as_ref().and_then(|o| o.name.as_deref()),
        Some("demo")
    );
    r.stop().await;
}

async fn a_port_change_updates_the_endpoint_slice_and_observed_generation(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    r.create("default", "demo", "127.0.0.1", 8080).await;
    eventually("Ready", || r.mydemo("default", "demo").filter(is_ready)).await;
    r.clientset
        .crddemo_v1()
        .mydemos("default")
        .patch(
            "demo",
            &Patch::Merge(serde_json::json!({"spec": {"port": 9090}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    let m = eventually("observedGeneration 2", || {
        r.mydemo("default", "demo")
            .filter(|m| is_ready(m) && m.metadata.generation == Some(2))
    })
    .await;
    assert_eq!(m.status.unwrap().observed_generation, Some(2));
    let slice = eventually("port 9090", || {
        r.handle
            .get::<EndpointSlice>("default", "demo")
            .unwrap()
            .filter(|s| slice_port(s) == Some(9090))
    })
    .await;
    assert_eq!(slice.endpoints.unwrap()[0].addresses, ["127.0.0.1"]);
    let svc = r.handle.get::<Service>("default", "demo").unwrap().unwrap();
    assert_eq!(svc.spec.unwrap().ports.unwrap()[0].port, 9090);
    r.stop().await;
}

async fn an_invalid_ip_is_reported_without_a_service_and_without_requeues(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    r.create("default", "bad", "1::2::3", 8080).await;
    let m = eventually("Ready=False", || {
        r.mydemo("default", "bad")
            .filter(|m| ready_condition(m).is_some_and(|c| c.status == "False"))
    })
    .await;
    let cond = ready_condition(&m).unwrap();
    assert_eq!(cond.reason, "InvalidSpec");
    assert!(cond.message.contains("1::2::3"), "{}", cond.message);
    let warnings = eventually("an InvalidSpec event", || {
        Some(r.events("default", "InvalidSpec")).filter(|e| !e.is_empty())
    })
    .await;
    assert_eq!(warnings[0].type_.as_deref(), Some("Warning"));
    assert!(
        r.handle.get::<Service>("default", "bad").unwrap().is_none(),
        "no Service"
    );
    assert!(
        r.handle
            .get::<EndpointSlice>("default", "bad")
            .unwrap()
            .is_none()
    );

    // Settled: nothing more is written until the spec changes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    r.handle.clear_actions();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let writes: Vec<_> = r
        .handle
        .actions()
        .into_iter()
        .filter(|a| a.verb != "get" && a.verb != "list" && a.verb != "watch")
        .collect();
    assert!(
        writes.is_empty(),
        "no requeue while the spec is unchanged: {writes:?}"
    );

    // Fixing the spec brings the Service.
    r.clientset
        .crddemo_v1()
        .mydemos("default")
        .patch(
            "bad",
            &Patch::Merge(serde_json::json!({"spec": {"ip": "10.0.0.30"}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    eventually("Ready after the fix", || {
        r.mydemo("default", "bad").filter(is_ready)
    })
    .await;
    assert!(r.handle.get::<Service>("default", "bad").unwrap().is_some());
    r.stop().await;
}

async fn an_endpoint_slice_the_server_refuses_is_reported_as_an_invalid_spec(v: Variant) {
    // kube-apiserver refuses loopback and link-local endpoint addresses with 422 Invalid; the
    // fake does not validate them, so a reactor plays the real server's part here.
    let r = Running::start(v, 2, &["default"]).await;
    let refused = Arc::new(AtomicUsize::new(0));
    let seen = refused.clone();
    r.handle.prepend_reactor("create", "endpointslices", move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        Reaction::error(
            422,
            "Invalid",
            "EndpointSlice.discovery.k8s.io \"lo\" is invalid: endpoints[0].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
        )
    });
    r.create("default", "lo", "127.0.0.1", 8080).await;
    let m = eventually("Ready=False", || {
        r.mydemo("default", "lo")
            .filter(|m| ready_condition(m).is_some_and(|c| c.status == "False"))
    })
    .await;
    let cond = ready_condition(&m).unwrap();
    assert_eq!(cond.reason, "InvalidSpec");
    assert!(cond.message.contains("loopback range"), "{}", cond.message);
    let warnings = eventually("an InvalidSpec event", || {
        Some(r.events("default", "InvalidSpec")).filter(|e| !e.is_empty())
    })
    .await;
    assert!(
        warnings[0]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("loopback")),
        "{warnings:?}"
    );
    eventually("the Service created before the refusal is removed", || {
        r.handle
            .get::<Service>("default", "lo")
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;

    // No requeue: the refusal is permanent until the spec changes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = refused.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(refused.load(Ordering::SeqCst), before, "no retries");
    assert_eq!(before, 1, "one refused create");
    r.stop().await;
}

async fn a_deleted_service_is_recreated_and_an_edited_one_corrected(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    r.create("default", "demo", "10.1.2.3", 8080).await;
    eventually("Ready", || r.mydemo("default", "demo").filter(is_ready)).await;
    let services: Api<Service> = Api::namespaced(r.clientset.client().clone(), "default");
    let first = services.get("demo").await.unwrap();
    services
        .delete("demo", &DeleteParams::default())
        .await
        .unwrap();
    let again = eventually("the Service recreated", || {
        r.handle
            .get::<Service>("default", "demo")
            .unwrap()
            .filter(|s| s.metadata.uid != first.metadata.uid)
    })
    .await;
    assert_eq!(again.spec.unwrap().ports.unwrap()[0].port, 8080);

    services
        .patch(
            "demo",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"ports": [{"name": "demo", "port": 1234, "protocol": "TCP"}]}})),
        )
        .await
        .unwrap();
    eventually("the Service corrected", || {
        r.handle
            .get::<Service>("default", "demo")
            .unwrap()
            .filter(|s| {
                s.spec
                    .as_ref()
                    .and_then(|s| s.ports.as_ref())
                    .is_some_and(|p| p[0].port == 8080)
            })
    })
    .await;

    let slices: Api<EndpointSlice> = Api::namespaced(r.clientset.client().clone(), "default");
    slices
        .patch(
            "demo",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"endpoints": [{"addresses": ["10.9.9.9"]}], "ports": [{"name": "demo", "port": 1, "protocol": "TCP"}]})),
        )
        .await
        .unwrap();
    eventually("the EndpointSlice corrected", || {
        r.handle
            .get::<EndpointSlice>("default", "demo")
            .unwrap()
            .filter(|s| {
                s.endpoints
                    .as_ref()
                    .and_then(|e| e.first())
                    .map(|e| e.addresses.clone())
                    == Some(vec!["10.1.2.3".to_string()])
                    && slice_port(s) == Some(8080)
            })
    })
    .await;
    slices
        .delete("demo", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the EndpointSlice recreated", || {
        r.handle.get::<EndpointSlice>("default", "demo").unwrap()
    })
    .await;
    r.stop().await;
}

async fn a_deleted_mydemo_is_handled_and_the_controller_keeps_working(v: Variant) {
    let r = Running::start(v, 1, &["default"]).await;
    r.create("default", "gone", "10.1.2.3", 8080).await;
    eventually("Ready", || r.mydemo("default", "gone").filter(is_ready)).await;
    r.clientset
        .crddemo_v1()
        .mydemos("default")
        .delete("gone", &DeleteParams::default())
        .await
        .unwrap();
    eventually("deleted", || {
        r.mydemo("default", "gone").is_none().then_some(())
    })
    .await;
    // The sync of the deleted key succeeded (no error, so no backoff requeue) ...
    settle(&r).await;
    assert_eq!((r.requeues)("default/gone"), 0);
    // ... and the owned objects, which only a garbage collector removes (the fake has none, like
    // a bare kube-apiserver), point at the deleted owner as their controller.
    for owners in [
        r.handle
            .get::<Service>("default", "gone")
            .unwrap()
            .map(|s| s.metadata.owner_references),
        r.handle
            .get::<EndpointSlice>("default", "gone")
            .unwrap()
            .map(|s| s.metadata.owner_references),
    ] {
        let owner = owners.flatten().and_then(|o| o.into_iter().next());
        assert!(
            owner
                .as_ref()
                .is_some_and(|o| o.name == "gone" && o.controller == Some(true)),
            "{owner:?}"
        );
    }
    r.create("default", "next", "10.1.2.4", 8081).await;
    eventually("the next one Ready", || {
        r.mydemo("default", "next").filter(is_ready)
    })
    .await;
    r.stop().await;
}

async fn the_status_is_applied_as_the_controller_and_other_managers_conditions_stay(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    r.create("default", "demo", "10.1.2.3", 8080).await;
    let ready = eventually("Ready", || r.mydemo("default", "demo").filter(is_ready)).await;
    let status_owners: Vec<_> = ready
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| e.subresource.as_deref() == Some("status"))
        .map(|e| (e.manager.clone(), e.operation.clone()))
        .collect();
    assert_eq!(
        status_owners,
        [(Some(CONTROLLER_NAME.to_string()), Some("Apply".to_string()))],
        "the status is written by apply, as the controller"
    );
    // What the controller owns is exactly what it applies (an extract round trip).
    let extracted =
        extract_mydemo_status(&ready, CONTROLLER_NAME).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        extracted,
        status_apply_configuration(&ready, ready.status.as_ref().unwrap())
    );

    // Another manager adds its own condition to the same keyed list.
    let audited = MydemoApplyConfiguration::new("demo", "default").with_status(
        MydemoStatusApplyConfiguration::default().with_conditions([
            ConditionApplyConfiguration::default()
                .with_type("Audited")
                .with_status("True")
                .with_reason("Checked")
                .with_message("checked by the auditor")
                .with_last_transition_time(Time(Timestamp::now())),
        ]),
    );
    let mydemos = r.clientset.crddemo_v1().mydemos("default");
    mydemos
        .apply_status(&audited, &ApplyOptions::new("auditor"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // A new generation the controller cannot expose: its status changes (Ready=False, and the
    // serviceName it no longer applies is gone); the auditor's condition stays the auditor's.
    mydemos
        .patch(
            "demo",
            &Patch::Merge(serde_json::json!({"spec": {"ip": "1::2::3"}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let invalid = eventually("Ready=False for generation 2", || {
        r.mydemo("default", "demo").filter(|m| {
            m.status.as_ref().and_then(|s| s.observed_generation) == Some(2)
                && ready_condition(m).is_some_and(|c| c.status == "False")
        })
    })
    .await;
    let status = invalid.status.as_ref().unwrap();
    assert_eq!(status.service_name, None, "{status:?}");
    let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready", "Audited"], "{status:?}");
    let auditor = extract_mydemo_status(&invalid, "auditor").unwrap_or_else(|e| panic!("{e}"));
    let auditor_conditions = auditor
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(auditor_conditions.len(), 1);
    assert_eq!(auditor_conditions[0].type_.as_deref(), Some("Audited"));

    // Someone edits the controller's condition by hand: the next sync takes it back (force).
    mydemos
        .apply_status(
            &MydemoApplyConfiguration::new("demo", "default").with_status(
                MydemoStatusApplyConfiguration::default().with_conditions([
                    ConditionApplyConfiguration::default()
                        .with_type("Ready")
                        .with_status("True")
                        .with_reason("HandEdited")
                        .with_message("edited")
                        .with_last_transition_time(Time(Timestamp::now())),
                ]),
            ),
            &ApplyOptions::new("someone").force(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    mydemos
        .patch(
            "demo",
            &Patch::Merge(serde_json::json!({"spec": {"ip": "10.0.0.30"}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let fixed = eventually("Ready again", || {
        r.mydemo("default", "demo").filter(is_ready)
    })
    .await;
    assert_eq!(ready_condition(&fixed).unwrap().reason, "Synced");
    assert_eq!(
        fixed.status.as_ref().unwrap().service_name.as_deref(),
        Some("demo")
    );
    r.stop().await;
}

async fn a_failed_status_apply_is_retried_and_converges(v: Variant) {
    let r = Running::start(v, 2, &["default"]).await;
    let failures = Arc::new(AtomicUsize::new(0));
    let seen = failures.clone();
    r.handle
        .prepend_reactor("patch", "mydemos/status", move |_| {
            if seen.fetch_add(1, Ordering::SeqCst) < 3 {
                Reaction::Error(Box::new(kube_codegen_runtime::api_status::status_failure(
                    500,
                    "InternalError",
                    "Internal error occurred: injected",
                )))
            } else {
                Reaction::PassThrough
            }
        });
    r.create("default", "demo", "10.1.2.3", 8080).await;
    eventually("Ready despite failed writes", || {
        r.mydemo("default", "demo").filter(is_ready)
    })
    .await;
    assert!(
        failures.load(Ordering::SeqCst) >= 4,
        "the injected failures were hit and the write retried"
    );
    r.stop().await;
}

async fn a_hundred_mydemos_across_ten_namespaces_all_become_ready(v: Variant) {
    let namespaces: Vec<String> = (0..10).map(|i| format!("ns-{i}")).collect();
    let ns_refs: Vec<&str> = namespaces.iter().map(String::as_str).collect();
    let r = Running::start(v, 4, &ns_refs).await;
    for (i, ns) in namespaces.iter().cycle().take(100).enumerate() {
        r.create(
            ns,
            &format!("demo-{i}"),
            &format!("10.0.{}.{}", i / 250, i % 250 + 1),
            8000 + i as i32,
        )
        .await;
    }
    eventually("100 Ready", || {
        let all = r.handle.list::<Mydemo>().unwrap();
        (all.len() == 100 && all.iter().all(is_ready)).then_some(())
    })
    .await;
    assert_eq!(r.handle.list::<Service>().unwrap().len(), 100);
    assert_eq!(r.handle.list::<EndpointSlice>().unwrap().len(), 100);
    r.stop().await;
}

async fn an_unowned_service_of_the_same_name_is_not_taken_over(v: Variant) {
    let r = Running::start(v, 1, &["default"]).await;
    let services: Api<Service> = Api::namespaced(r.clientset.client().clone(), "default");
    let theirs = Service {
        metadata: ObjectMeta {
            name: Some("taken".into()),
            ..ObjectMeta::default()
        },
        spec: Some(k8s_openapi::api::core::v1::ServiceSpec {
            ports: Some(vec![k8s_openapi::api::core::v1::ServicePort {
                port: 80,
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Service::default()
    };
    services
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    r.create("default", "taken", "10.1.2.3", 8080).await;
    let m = eventually("Ready=False ErrResourceExists", || {
        r.mydemo("default", "taken")
            .filter(|m| ready_condition(m).is_some_and(|c| c.reason == "ErrResourceExists"))
    })
    .await;
    assert!(
        ready_condition(&m)
            .unwrap()
            .message
            .contains("not managed by Mydemo taken")
    );
    eventually("an ErrResourceExists event", || {
        Some(r.events("default", "ErrResourceExists")).filter(|e| !e.is_empty())
    })
    .await;
    let svc = services
        .get_with("taken", &GetParams::default())
        .await
        .unwrap();
    assert!(
        svc.metadata.owner_references.is_none(),
        "someone else's Service is left alone"
    );
    let m = r.mydemo("default", "taken").unwrap();
    assert!(!is_ready(&m), "not Ready while its Service name is taken");
    assert_eq!(
        svc.spec.unwrap().ports.unwrap()[0].port,
        80,
        "their port is untouched"
    );
    assert_eq!(Mydemo::kind(&()), "Mydemo");
    r.stop().await;
}

async fn resyncs_of_unchanged_objects_do_not_run_the_sync_handler(v: Variant) {
    let r = Running::start_with(v, 2, &["default"], Some(Duration::from_millis(50))).await;
    r.create("default", "demo", "10.1.2.3", 8080).await;
    eventually("Ready", || r.mydemo("default", "demo").filter(is_ready)).await;
    let quiet = settle(&r).await;
    // Ten resync periods re-deliver the Mydemo, its Service and its EndpointSlice unchanged.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        (r.syncs)(),
        quiet,
        "an update with an unchanged resourceVersion is ignored"
    );
    // A real change (a new resourceVersion) is synced.
    r.clientset
        .crddemo_v1()
        .mydemos("default")
        .patch(
            "demo",
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"touched": "yes"}}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    eventually("the change synced", || ((r.syncs)() > quiet).then_some(())).await;
    r.stop().await;
}

/// crddemo's hand-written loop counts `controller_runtime_reconcile_total{controller="mydemo"}`
/// through the manager's recorder (the `syncs` probe of the hand-written variant reads it).
#[tokio::test]
async fn the_hand_written_loop_reports_controller_runtime_reconcile_metrics() {
    let r = Running::start(Variant::HandWritten, 2, &["default"]).await;
    r.create("default", "counted", "127.0.0.1", 80).await;
    eventually("a reconcile in controller_runtime_reconcile_total", || {
        ((r.syncs)() >= 1).then_some(())
    })
    .await;
    assert!(settle(&r).await >= 1);
    r.stop().await;
}

/// Each scenario against each implementation.
macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        mod hand_written {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Variant::HandWritten).await
            })*
        }
        mod builder {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Variant::Builder).await
            })*
        }
    };
}

scenarios!(
    create_makes_service_endpoint_slice_status_and_event,
    a_port_change_updates_the_endpoint_slice_and_observed_generation,
    an_invalid_ip_is_reported_without_a_service_and_without_requeues,
    an_endpoint_slice_the_server_refuses_is_reported_as_an_invalid_spec,
    a_deleted_service_is_recreated_and_an_edited_one_corrected,
    a_deleted_mydemo_is_handled_and_the_controller_keeps_working,
    the_status_is_applied_as_the_controller_and_other_managers_conditions_stay,
    a_failed_status_apply_is_retried_and_converges,
    a_hundred_mydemos_across_ten_namespaces_all_become_ready,
    an_unowned_service_of_the_same_name_is_not_taken_over,
    resyncs_of_unchanged_objects_do_not_run_the_sync_handler,
);
