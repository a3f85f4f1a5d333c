//! The server-side apply scenarios (`tests/src/server_side_apply.rs`) against a real
//! kube-apiserver v1.37.1; the same bodies run against the fake in `apply_fake.rs`.
//!
//! Every extraction the scenarios check is also recorded with the object the server returned;
//! those captures are the runtime's extract unit-test data
//! (`codegen-runtime/testdata/managed-fields.json`). This test fails when the file differs from
//! what the server returns now; `KUBE_CODEGEN_UPDATE_CAPTURES=1` rewrites it.

use tests::apiserver::RealApiServer;
use tests::server_side_apply::{Capture, Env, captures_path, scenarios};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_scenarios_against_a_real_kube_apiserver() {
    let server = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let client = server.client().unwrap_or_else(|e| panic!("client: {e}"));
    let env = Env::setup(client)
        .await
        .unwrap_or_else(|e| panic!("setup: {e}"));
    let mut failures = Vec::new();
    for s in scenarios() {
        match s.run(&env).await {
            Ok(()) => println!("ok    {}", s.name),
            Err(e) => {
                println!("FAIL  {}: {e}", s.name);
                failures.push(format!("{}: {e}", s.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    let captures = env.captures();
    let path = captures_path();
    let text = serde_json::to_string_pretty(&captures).unwrap() + "\n";
    if std::env::var_os("KUBE_CODEGEN_UPDATE_CAPTURES").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("wrote {}", path.display());
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (KUBE_CODEGEN_UPDATE_CAPTURES=1 writes it)",
            path.display()
        )
    });
    let stored: Vec<Capture> =
        serde_json::from_str(&stored).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for (now, then) in captures.iter().zip(&stored) {
        // Captures written before entries were sorted compare in the same order.
        let then = &Capture {
            object: tests::server_side_apply::scrub(then.object.clone()),
            ..then.clone()
        };
        assert_eq!(
            now,
            then,
            "{} differs from what kube-apiserver returns now: rerun with KUBE_CODEGEN_UPDATE_CAPTURES=1 and review the diff",
            path.display()
        );
    }
    assert_eq!(
        captures.len(),
        stored.len(),
        "number of captures in {}",
        path.display()
    );
}
