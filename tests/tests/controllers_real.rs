//! Garbage collection and namespace deletion, compared: the scenarios of
//! `tests::controllers` run against the in-memory server with `Controller::GarbageCollector`
//! and `Controller::Namespace`, and against kube-apiserver v1.37.1 with kube-controller-manager
//! running `garbage-collector-controller` and `namespace-controller`; their normalised
//! transcripts (answers and final states) must be equal. How long each side's controllers took
//! is printed, never asserted.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_codegen_runtime::fake::{Controller, FakeApiServer};
use tests::apiserver::{ControllerManagerOptions, RealApiServer, apply_crd, wait_crd_established};
use tests::controllers::{Outcome, SCENARIOS, crd, run_all};
use tests::e2e::{init_tracing, run_id};

/// How long a scenario may wait for the real controllers (the namespace controller retries
/// with back-off; a cold kube-controller-manager needs its informers synced).
const DEADLINE: Duration = Duration::from_secs(90);

async fn fake_outcomes() -> Vec<Outcome> {
    let server = FakeApiServer::builder()
        .with_controllers([Controller::GarbageCollector, Controller::Namespace])
        .object(crd())
        .build()
        .unwrap_or_else(|e| panic!("fake server: {e}"));
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    run_all(client, "gc-fake", DEADLINE).await
}

async fn real_outcomes() -> Vec<Outcome> {
    let mut server = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    let crd: CustomResourceDefinition =
        serde_json::from_value(crd()).unwrap_or_else(|e| panic!("{e}"));
    apply_crd(&client, &crd)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_crd_established(&client, "gadgets.gc.example.com")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // After the CRD, so that the garbage collector watches Gadgets from the start.
    server
        .start_controller_manager(&ControllerManagerOptions {
            controllers: vec![
                "garbage-collector-controller".into(),
                "namespace-controller".into(),
            ],
            ..ControllerManagerOptions::default()
        })
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-controller-manager: {e}"));
    let prefix = format!("gc-{}", run_id());
    run_all(client, &prefix, DEADLINE).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_collection_and_namespace_deletion_match_kube_controller_manager() {
    init_tracing();
    let fake = fake_outcomes().await;
    let real = real_outcomes().await;
    assert_eq!(fake.len(), SCENARIOS.len());
    assert_eq!(real.len(), SCENARIOS.len());
    let mut differences = Vec::new();
    println!(
        "{:<18} {:>12} {:>12}",
        "scenario", "fake waited", "real waited"
    );
    for (f, r) in fake.iter().zip(&real) {
        println!("{:<18} {:>12.3?} {:>12.3?}", f.name, f.waited, r.waited);
        if f.transcript != r.transcript {
            differences.push(format!(
                "{}:\n  fake: {}\n  real: {}",
                f.name,
                serde_json::to_string(&f.transcript).unwrap_or_default(),
                serde_json::to_string(&r.transcript).unwrap_or_default()
            ));
        } else {
            println!(
                "  agreed: {}",
                serde_json::to_string(&f.transcript).unwrap_or_default()
            );
        }
    }
    assert!(
        differences.is_empty(),
        "the in-memory server differs from kube-apiserver + kube-controller-manager:\n{}",
        differences.join("\n")
    );
}
