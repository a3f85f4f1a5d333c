//! The Builder through the public API against the fake API server: what reaches the
//! reconciler for `for_`, `owns`, `watches` and predicates, how many reconciles run at once,
//! and that controllers share one watch per kind.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use common::{create_cm, eventually, fake, init_tracing};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, PodSpec, PodTemplateSpec, Secret, ServiceAccount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use kube_codegen_runtime::fake::FakeHandle;
use kube_controller_runtime::predicate::GenerationChanged;
use kube_controller_runtime::{
    Action, BuilderError, Context, Controller, Manager, ManagerError, Request,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

/// Every reconcile the recorder saw, and how many ran at once.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<Request>>>,
    in_flight: Arc<Mutex<HashSet<Request>>>,
    max_in_flight: Arc<Mutex<usize>>,
    overlap: Arc<Mutex<Option<String>>>,
}

impl Recorder {
    fn reconciler(
        &self,
        work: Duration,
    ) -> impl Fn(
        Request,
        Context,
    ) -> futures::future::BoxFuture<'static, Result<Action, std::io::Error>>
    + Send
    + Sync
    + 'static {
        let rec = self.clone();
        move |req: Request, _ctx: Context| {
            let rec = rec.clone();
            Box::pin(async move {
                {
                    let mut f = rec.in_flight.lock();
                    if !f.insert(req.clone()) {
                        *rec.overlap.lock() = Some(format!("{req} reconciled twice at once"));
                    }
                    let mut m = rec.max_in_flight.lock();
                    *m = (*m).max(f.len());
                }
                rec.seen.lock().push(req.clone());
                tokio::time::sleep(work).await;
                rec.in_flight.lock().remove(&req);
                Ok(Action::done())
            })
        }
    }

    fn count(&self, name: &str) -> usize {
        self.seen.lock().iter().filter(|r| r.name == name).count()
    }
}

struct Running {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), ManagerError>>,
}

fn run(mgr: Manager) -> Running {
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));
    Running { stop, task }
}

impl Running {
    async fn stop(self) {
        self.stop.cancel();
        self.task
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn manager(client: kube::Client) -> Manager {
    Manager::builder(client)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn watches_of(handle: &FakeHandle, resource: &str) -> usize {
    handle
        .actions()
        .iter()
        .filter(|a| a.verb == "watch" && a.resource == resource)
        .count()
}

fn owned_secret(name: &str, owner: &ConfigMap, controller: bool) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner.metadata.name.clone().unwrap_or_default(),
                uid: owner.metadata.uid.clone().unwrap_or_default(),
                controller: Some(controller),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_enqueues_the_controlling_owner_and_watches_maps() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = manager(client.clone());
    let rec = Recorder::default();
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .owns::<Secret>()
        // A ServiceAccount labelled `config=<name>` stands for the ConfigMap of that name.
        .watches::<ServiceAccount>(|svc: &ServiceAccount| {
            let ns = svc.metadata.namespace.clone().unwrap_or_default();
            svc.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "config")
                .map(|(_, v)| Request::namespaced(ns.clone(), v.clone()))
                .collect()
        })
        .complete(rec.reconciler(Duration::ZERO))
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(mgr);

    let owner = create_cm(&client, "owner").await;
    eventually("the owner reconciled", 20, || {
        (rec.count("owner") == 1).then_some(())
    })
    .await;

    // A Secret the owner controls: the owner is reconciled again, not the Secret.
    let secrets = Api::<Secret>::namespaced(client.clone(), "ns");
    secrets
        .create(&PostParams::default(), &owned_secret("s1", &owner, true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the owner reconciled for its Secret", 20, || {
        (rec.count("owner") == 2).then_some(())
    })
    .await;
    // A Secret with a non-controller owner reference does not reach the owner.
    secrets
        .create(&PostParams::default(), &owned_secret("s2", &owner, false))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // The map function: a labelled ServiceAccount maps to the ConfigMap it names.
    let svc = ServiceAccount {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            labels: Some(BTreeMap::from([(
                "config".to_string(),
                "mapped".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    Api::<ServiceAccount>::namespaced(client.clone(), "ns")
        .create(&PostParams::default(), &svc)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the mapped request", 20, || {
        (rec.count("mapped") == 1).then_some(())
    })
    .await;
    // Quiet for a moment: nothing else arrives (the s2 Secret enqueued nothing).
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rec.count("owner"), 2, "{:?}", rec.seen.lock());
    assert!(
        rec.seen
            .lock()
            .iter()
            .all(|r| r.name != "s1" && r.name != "s2" && r.name != "web")
    );
    running.stop().await;
}

fn deployment(name: &str, image: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some(image.into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

/// Creates the Deployment "web" in "ns"; returns the API of Deployments there.
async fn create_web(client: &kube::Client) -> Api<Deployment> {
    let api = Api::<Deployment>::namespaced(client.clone(), "ns");
    api.create(&PostParams::default(), &deployment("web", "nginx:1"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    api
}

/// Merge-patches the Deployment "web".
async fn patch_web(api: &Api<Deployment>, patch: serde_json::Value) -> Deployment {
    api.patch("web", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generation_changed_drops_status_only_updates() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = manager(client.clone());
    let rec = Recorder::default();
    Controller::builder(&mgr)
        .for_with::<Deployment>(GenerationChanged)
        .complete(rec.reconciler(Duration::ZERO))
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(mgr);
    let api = create_web(&client).await;
    eventually("created", 20, || (rec.count("web") == 1).then_some(())).await;

    // Status-only: the generation stays, the update is dropped.
    let status = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(3),
        ..DeploymentStatus::default()
    };
    let patched = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "status": status })),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(patched.metadata.generation, Some(1));
    // Metadata-only (a label): also no new generation.
    patch_web(
        &api,
        serde_json::json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .await;
    // A spec change: a new generation, reconciled.
    let spec = patch_web(&api, serde_json::json!({"spec": {"replicas": 5}})).await;
    assert_eq!(spec.metadata.generation, Some(2));
    eventually("the spec change", 20, || {
        (rec.count("web") == 2).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rec.count("web"), 2, "status and label updates were dropped");
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_reconciles_is_honoured_and_a_key_is_never_reconciled_twice_at_once() {
    init_tracing();
    let (client, _handle) = fake();
    let mgr = manager(client.clone());
    let rec = Recorder::default();
    let controller = Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(3)
        .build(rec.reconciler(Duration::from_millis(50)))
        .unwrap_or_else(|e| panic!("{e}"));
    let queue = controller.queue().clone();
    mgr.add(controller).unwrap_or_else(|e| panic!("{e}"));
    let running = run(mgr);
    for i in 0..12 {
        create_cm(&client, &format!("cm-{i}")).await;
    }
    // Hammer the same keys while they are being reconciled.
    for round in 0..20 {
        for i in 0..12 {
            queue.add(Request::namespaced(
                "ns",
                format!("cm-{}", (i + round) % 12),
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eventually("every ConfigMap reconciled", 30, || {
        ((0..12).all(|i| rec.count(&format!("cm-{i}")) >= 1)
            && queue.is_empty()
            && queue.processing() == 0)
            .then_some(())
    })
    .await;
    assert_eq!(*rec.overlap.lock(), None);
    assert_eq!(
        *rec.max_in_flight.lock(),
        3,
        "three workers, all used, never more"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_of_a_manager_share_one_watch_per_kind() {
    init_tracing();
    let (client, handle) = fake();
    let mgr = manager(client.clone());
    let (a, b) = (Recorder::default(), Recorder::default());
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .named("first")
        .complete(a.reconciler(Duration::ZERO))
        .unwrap_or_else(|e| panic!("{e}"));
    Controller::builder(&mgr)
        .for_::<Secret>()
        .watches::<ConfigMap>(|cm: &ConfigMap| {
            vec![Request::namespaced(
                "ns",
                cm.metadata.name.clone().unwrap_or_default(),
            )]
        })
        .named("second")
        .complete(b.reconciler(Duration::ZERO))
        .unwrap_or_else(|e| panic!("{e}"));
    let lister = mgr.lister::<ConfigMap>();
    let running = run(mgr);
    create_cm(&client, "one").await;
    eventually("both controllers saw it", 20, || {
        (a.count("one") == 1 && b.count("one") == 1 && !lister.store().is_empty()).then_some(())
    })
    .await;
    assert_eq!(watches_of(&handle, "configmaps"), 1, "one ConfigMap watch");
    assert_eq!(watches_of(&handle, "secrets"), 1, "one Secret watch");
    running.stop().await;
}

#[tokio::test]
async fn builder_mistakes_are_clear_errors() {
    let (client, _handle) = fake();
    let mgr = manager(client);
    let ok = |_r: Request, _c: Context| async { Ok::<_, std::io::Error>(Action::done()) };
    let e = Controller::builder(&mgr)
        .owns::<Secret>()
        .named("x")
        .build(ok);
    assert!(matches!(e, Err(BuilderError::OwnsWithoutFor(_))), "{e:?}");
    let e = Controller::builder(&mgr).owns::<Secret>().build(ok);
    assert_eq!(
        e.err().map(|e| e.to_string()).as_deref(),
        Some("one of for_() or named() must be called")
    );
    let e = Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .for_::<Secret>()
        .build(ok);
    assert_eq!(
        e.err().map(|e| e.to_string()).as_deref(),
        Some("for_() may only be called once: already v1/ConfigMap, now v1/Secret")
    );
    let e = Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .named("Bad Name")
        .build(ok);
    assert!(matches!(e, Err(BuilderError::InvalidName(_))));
    let e = Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(0)
        .build(ok);
    assert!(matches!(e, Err(BuilderError::NoWorkers(_))));
    Controller::builder(&mgr)
        .for_::<ConfigMap>()
        .complete(ok)
        .unwrap_or_else(|e| panic!("{e}"));
    let e = Controller::builder(&mgr)
        .for_::<Secret>()
        .named("configmap")
        .build(ok);
    assert!(
        matches!(&e, Err(BuilderError::DuplicateName(n)) if n == "configmap"),
        "{e:?}"
    );
}
