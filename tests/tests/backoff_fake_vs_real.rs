//! A backing-off request and the events that arrive meanwhile, against the in-memory server and
//! kube-apiserver v1.37.1: the same Builder controller, whose reconciles of one Deployment
//! always fail and back off an hour, sees a label patch and then a spec patch.
//!
//! * Without predicates of its own, neither patch ends the backoff: one reconcile in all
//!   (client-go's and controller-runtime's queues would reconcile at each event, each one more
//!   failure and a longer backoff).
//! * With `GenerationChanged`, the label patch does not pass the predicate and changes nothing;
//!   the spec patch passes it, ends the backoff, and is reconciled at once.
//!
//! Both servers must give the same counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::workqueue::ItemExponentialFailureRateLimiter;
use kube_controller_runtime::predicate::GenerationChanged;
use kube_controller_runtime::{Action, Context, Controller, Manager, Request};
use tests::apiserver::RealApiServer;
use tests::e2e::{create_namespace, init_tracing, run_id};
use tokio_util::sync::CancellationToken;

/// How long an event that must not bring a reconcile is given to bring one anyway.
const QUIET: Duration = Duration::from_millis(1500);

/// The Deployment "web": one nginx container, no controller to roll it out.
fn web() -> Deployment {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}
            }
        }
    }))
    .unwrap_or_else(|e| panic!("web: {e}"))
}

/// Waits until `count` is `want` (or `limit` passed); returns the count then.
async fn count_reaches(count: &AtomicUsize, want: usize, limit: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + limit;
    while count.load(Ordering::SeqCst) < want && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    count.load(Ordering::SeqCst)
}

/// Runs the failing controller in namespace `ns`, with `GenerationChanged` or without
/// predicates; returns how many times "web" was reconciled after the label patch and after the
/// spec patch.
async fn failing_controller_under_patches(
    client: kube::Client,
    ns: &str,
    generation_changed: bool,
) -> (usize, usize) {
    create_namespace(&client, ns)
        .await
        .unwrap_or_else(|e| panic!("namespace {ns}: {e}"));
    let mgr = Manager::builder(client.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let ns_owned = ns.to_string();
    let reconcile = move |req: Request, _ctx: Context| {
        let count = count.clone();
        let mine = req.namespace.as_deref() == Some(ns_owned.as_str()) && req.name == "web";
        async move {
            if !mine {
                return Ok(Action::done());
            }
            count.fetch_add(1, Ordering::SeqCst);
            Err(std::io::Error::other("always fails"))
        }
    };
    let hour = Duration::from_secs(3600);
    let builder = Controller::builder(&mgr)
        .named(format!("backoff-{ns}"))
        .rate_limiter(ItemExponentialFailureRateLimiter::new(hour, hour));
    let builder = if generation_changed {
        builder.for_with::<Deployment>(GenerationChanged)
    } else {
        builder.for_::<Deployment>()
    };
    builder
        .complete(reconcile)
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(mgr.start(async move { token.cancelled().await }));

    let api = Api::<Deployment>::namespaced(client, ns);
    api.create(&PostParams::default(), &web())
        .await
        .unwrap_or_else(|e| panic!("create web: {e}"));
    assert_eq!(
        count_reaches(&seen, 1, Duration::from_secs(30)).await,
        1,
        "{ns}: the first reconcile"
    );
    let patch = |p: serde_json::Value| {
        let api = api.clone();
        async move {
            api.patch("web", &PatchParams::default(), &Patch::Merge(p))
                .await
                .unwrap_or_else(|e| panic!("patch web: {e}"))
        }
    };
    let labelled = patch(serde_json::json!({"metadata": {"labels": {"x": "y"}}})).await;
    assert_eq!(
        labelled.metadata.generation,
        Some(1),
        "a label patch keeps the generation"
    );
    let after_label = count_reaches(&seen, 2, QUIET).await;
    let spec_changed = patch(serde_json::json!({"spec": {"replicas": 5}})).await;
    assert_eq!(
        spec_changed.metadata.generation,
        Some(2),
        "a spec patch raises it"
    );
    let after_spec = count_reaches(&seen, after_label + 1, QUIET).await;
    stop.cancel();
    let stopped = task.await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
    (after_label, after_spec)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_change_the_predicates_pass_ends_a_backoff_on_both_servers() {
    init_tracing();
    let fake = FakeApiServer::builder()
        .build()
        .unwrap_or_else(|e| panic!("fake server: {e}"));
    let real = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let real_client = real.client().unwrap_or_else(|e| panic!("{e}"));
    for (server, client) in [
        ("in-memory", fake.client().unwrap_or_else(|e| panic!("{e}"))),
        ("kube-apiserver", real_client),
    ] {
        for (generation_changed, want) in [(false, (1, 1)), (true, (1, 2))] {
            let ns = format!("backoff-{}-{generation_changed}", run_id());
            let got =
                failing_controller_under_patches(client.clone(), &ns, generation_changed).await;
            assert_eq!(
                got, want,
                "{server}, GenerationChanged {generation_changed}: reconciles after the label \
                 patch and after the spec patch"
            );
        }
    }
}
