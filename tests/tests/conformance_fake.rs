//! Runs every API-server conformance scenario against kube-codegen's in-memory fake server,
//! once through the `tower::Service` client and once over HTTP on loopback.

use kube_codegen_runtime::fake::FakeApiServer;
use tests::conformance::{Ctx, run_all, scenarios};

fn ctx() -> Ctx {
    Ctx {
        run_id: "fake".into(),
        ..Ctx::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_passes_against_the_fake() {
    let server = FakeApiServer::new();
    let client = server.client().unwrap_or_else(|e| panic!("client: {e}"));
    let report = run_all(client, &ctx()).await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(report.results.len(), scenarios().len(), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_passes_against_the_served_fake() {
    let server = FakeApiServer::new();
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let client = served
        .client()
        .await
        .unwrap_or_else(|e| panic!("client: {e}"));
    let report = run_all(client, &ctx()).await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(report.results.len(), scenarios().len(), "{report}");
}
