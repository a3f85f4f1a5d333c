//! The `crddemo` binary as a user runs it: the walkthrough of `--embedded --demo` (under the
//! Manager, with leader election, probes and metrics on), the error without any configuration,
//! `--embedded` keeping its hands off a user's kubeconfig, and bad Manager flags failing with
//! exit 1 before anything starts.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs `crddemo` with `args` in a clean environment (`HOME` = `home`, nothing else from the
/// caller's Kubernetes setup), killing it after `limit`.
fn crddemo(home: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crddemo"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start crddemo: {e}"));
    let started = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            panic!(
                "crddemo {args:?} still running after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn without_any_configuration_the_error_suggests_embedded() {
    let home = tempdir();
    let out = crddemo(home.path(), &[], Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: no Kubernetes configuration found") && last.contains("--embedded"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn embedded_demo_walks_through_the_seed_and_exits() {
    let home = tempdir();
    let kubeconfig = home.path().join("embedded.kubeconfig");
    let kc = kubeconfig.to_string_lossy().into_owned();
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--demo",
            "--namespace",
            "walkthrough",
            "--kubeconfig",
            &kc,
            "--log-format",
            "json",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
        ],
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("successfully acquired lease"),
        "leader election is on by default:\n{stderr}"
    );
    assert!(
        stderr.contains(r#""what":"health probes""#) && stderr.contains(r#""what":"metrics""#),
        "the servers asked for are bound and logged:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("export KUBECONFIG={kc}")),
        "the kubectl instructions are printed:\n{stderr}"
    );
    let written = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
    assert!(
        written.contains("current-context: kube-codegen-fake"),
        "{written}"
    );

    let events: Vec<Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let message = |e: &Value| e["message"].as_str().unwrap_or_default().to_string();
    let position = |needle: &str| {
        events
            .iter()
            .position(|e| message(e).contains(needle))
            .unwrap_or_else(|| panic!("no log line containing {needle:?} in:\n{stderr}"))
    };
    // The seed's three steps, in order, each with what the controller made of it.
    let steps = [
        position("demo: creating Mydemo walkthrough/example-mydemo with ip 127.0.0.1, port 8080"),
        position("created Service"),
        position("demo: Mydemo is Ready"),
        position("demo: changing the port to 9090"),
        position("demo: EndpointSlice now exposes 127.0.0.1:9090"),
        position("demo: deleting the Mydemo"),
        position("Mydemo deleted: its Service and EndpointSlice go with it"),
        position("demo: Mydemo deleted; walkthrough complete"),
        position("Controller stopped"),
    ];
    assert!(steps.is_sorted(), "steps out of order {steps:?}:\n{stderr}");
    let synced = events
        .iter()
        .filter(|e| message(e) == "Successfully synced" && e["key"] == "walkthrough/example-mydemo")
        .count();
    assert!(
        synced >= 2,
        "the create and the port change were synced:\n{stderr}"
    );
}

#[test]
fn embedded_never_overwrites_a_foreign_kubeconfig() {
    let home = tempdir();
    let mine = home.path().join("config");
    let original = "apiVersion: v1\nkind: Config\ncurrent-context: production\n";
    std::fs::write(&mine, original).unwrap_or_else(|e| panic!("{e}"));
    let out = crddemo(
        home.path(),
        &["--embedded", "--kubeconfig", &mine.to_string_lossy()],
        Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refusing to overwrite"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap_or_default(),
        original,
        "the user's kubeconfig is untouched"
    );
}

#[test]
fn a_metrics_address_in_use_fails_before_anything_starts() {
    let home = tempdir();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = taken
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--demo",
            "--metrics-bind-address",
            &addr,
            "--health-probe-bind-address",
            "0",
        ],
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!(
            "error: --metrics-bind-address {addr}: cannot listen for metrics: "
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("attempting to acquire leader lease"),
        "nothing started:\n{stderr}"
    );
    assert!(
        !stderr.contains("demo: creating"),
        "nothing started:\n{stderr}"
    );
}

#[test]
fn embedded_binds_no_default_port() {
    // Hold the default probe port (or find it held by something else): an embedded run that
    // names no address must not need it, nor 8080.
    let _held = std::net::TcpListener::bind(("0.0.0.0", 8081));
    let home = tempdir();
    let out = crddemo(
        home.path(),
        &["--embedded", "--demo", "--log-format", "json"],
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("walkthrough complete"), "{stderr}");
    // The manager logs `serving` with `what` for each server it binds.
    assert!(
        !stderr.contains(r#""what":"health probes""#) && !stderr.contains(r#""what":"metrics""#),
        "no default listener:\n{stderr}"
    );
}

#[test]
fn a_missing_leader_election_namespace_fails_before_anything_starts() {
    let home = tempdir();
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--demo",
            "--leader-election-namespace",
            "nowhere",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ],
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.lines().last().unwrap_or_default(),
        "error: --leader-election-namespace: leader election namespace \"nowhere\" does not exist (Lease nowhere/crddemo-controller)",
        "{stderr}"
    );
    assert!(
        !stderr.contains("demo: creating"),
        "nothing started:\n{stderr}"
    );
}

#[test]
fn leader_election_can_be_turned_off_and_bad_timings_are_refused() {
    let home = tempdir();
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--leader-elect-lease-duration",
            "5s",
            "--leader-elect-renew-deadline",
            "5s",
        ],
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap_or_default()
            .ends_with("leaseDuration must be greater than renewDeadline"),
        "{stderr}"
    );
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--demo",
            "--leader-elect=false",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ],
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("leader lease"), "{stderr}");
    assert!(stderr.contains("walkthrough complete"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_held_by_another_identity_with_a_garbage_renew_time_fails_with_exit_1() {
    // An API server (the in-memory one, served on loopback) whose Lease cannot be decoded: the
    // renewTime is no time. kube-apiserver itself would refuse to store it; a corrupt backup
    // restore or another tool's bug can still leave one behind.
    let server = kube_codegen_runtime::fake::FakeApiServer::builder()
        .object(serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "crddemo-controller", "namespace": "default"},
            "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 15,
                     "renewTime": "not a time"}
        }))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempdir();
    let kubeconfig = home.path().join("kubeconfig");
    served
        .write_kubeconfig(&kubeconfig)
        .unwrap_or_else(|e| panic!("{e}"));
    let kc = kubeconfig.to_string_lossy().into_owned();
    let home_path = home.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        crddemo(
            &home_path,
            &[
                "--kubeconfig",
                &kc,
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0",
            ],
            Duration::from_secs(60),
        )
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "error: leader election: Lease default/crddemo-controller cannot be decoded: spec.renewTime: \"not a time\" is no MicroTime"
        ),
        "{stderr}"
    );
    assert!(
        !stderr.contains("Starting Mydemo control loop"),
        "nothing started:\n{stderr}"
    );
    served.shutdown().await;
}

#[test]
fn embedded_demo_runs_sharded() {
    // One replica of a ring: it holds its shard Lease, publishes itself as the only member and
    // reconciles every key; the walkthrough completes as without sharding.
    let home = tempdir();
    let out = crddemo(
        home.path(),
        &[
            "--embedded",
            "--demo",
            "--sharded",
            "--shard-ring",
            "crddemo",
            "--log-format",
            "json",
        ],
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for needle in [
        "holding the shard lease",
        "published the ring's members",
        "reconcile start",
        "reconcile end",
        "demo: Mydemo is Ready",
        "demo: Mydemo deleted; walkthrough complete",
    ] {
        assert!(stderr.contains(needle), "no {needle:?} in:\n{stderr}");
    }
}
