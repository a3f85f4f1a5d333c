//! The server-side apply scenarios (`tests/src/server_side_apply.rs`) against the in-memory
//! fake, one test per scenario; `apply_real.rs` runs the same bodies against kube-apiserver.
//! Every scenario passes on both.

use kube_codegen_runtime::fake::FakeApiServer;
use tests::server_side_apply::run_one;

async fn run(name: &str) {
    let server = FakeApiServer::new();
    let client = server.client().unwrap_or_else(|e| panic!("client: {e}"));
    run_one(client, name)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[tokio::test]
async fn crd_two_managers() {
    run("crd_two_managers").await;
}

#[tokio::test]
async fn crd_conflicts_and_force() {
    run("crd_conflicts_and_force").await;
}

#[tokio::test]
async fn conflict_messages() {
    run("conflict_messages").await;
}

#[tokio::test]
async fn crd_list_map_merge() {
    run("crd_list_map_merge").await;
}

#[tokio::test]
async fn crd_list_map_order() {
    run("crd_list_map_order").await;
}

#[tokio::test]
async fn crd_atomic_map() {
    run("crd_atomic_map").await;
}

#[tokio::test]
async fn crd_status_subresource() {
    run("crd_status_subresource").await;
}

#[tokio::test]
async fn extract_modify_apply() {
    run("extract_modify_apply").await;
}

#[tokio::test]
async fn builtin_deployment() {
    run("builtin_deployment").await;
}

#[tokio::test]
async fn builtin_configmap() {
    run("builtin_configmap").await;
}

#[tokio::test]
async fn typed_two_managers() {
    run("typed_two_managers").await;
}

#[tokio::test]
async fn typed_status() {
    run("typed_status").await;
}

#[test]
fn every_scenario_has_a_test() {
    let names: Vec<&str> = tests::server_side_apply::scenarios()
        .iter()
        .map(|s| s.name)
        .collect();
    let source = include_str!("apply_fake.rs");
    for name in names {
        assert!(
            source.contains(&format!("async fn {name}()")),
            "no fake test for scenario {name}"
        );
    }
}
