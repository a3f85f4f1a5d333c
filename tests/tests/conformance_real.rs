//! The fake's conformance suite, unchanged, against a real kube-apiserver (v1.37.1 with etcd,
//! built from the Go module proxy by `scripts/build-kube-apiserver.sh`). Every scenario that
//! passes here and against the fake (`conformance_fake.rs`) is behaviour the two agree on; known
//! differences outside the suite are listed in `tests/CONFORMANCE.md`.

use tests::apiserver::RealApiServer;
use tests::conformance::{Ctx, run_all, scenarios};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_passes_against_a_real_kube_apiserver() {
    let server = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let ctx = Ctx {
        run_id: "real".into(),
        ..Ctx::default()
    };
    let client = server.client().unwrap_or_else(|e| panic!("client: {e}"));
    let report = run_all(client, &ctx).await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(
        report.results.len(),
        scenarios().len(),
        "every scenario ran: {report}"
    );
}
