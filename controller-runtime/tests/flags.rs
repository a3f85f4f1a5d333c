//! `ManagerFlags` (controller-runtime's flag names, flattened into a binary's parser) and
//! `client_config` (controller-runtime's `GetConfig`), through their public interface.

use std::time::Duration;

use clap::Parser;
use kube_controller_runtime::flags::{
    ConfigError, LogFlags, LogFormat, ManagerFlags, client_config, init_logging,
};

#[derive(Parser, Debug)]
struct Cli {
    #[command(flatten)]
    manager: ManagerFlags,
    #[command(flatten)]
    log: LogFlags,
    /// A flag of the binary's own beside them.
    #[arg(long, default_value_t = 1)]
    workers: u16,
}

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("operator").chain(args.iter().copied()))
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn defaults_are_the_documented_safe_ones() {
    let cli = ok(parse(&[]));
    let f = &cli.manager;
    assert_eq!(
        f.metrics_bind_address(),
        "0",
        "metrics off unless asked for"
    );
    assert!(f.metrics_secure, "secure once on");
    assert_eq!(f.health_probe_bind_address(), ":8081");
    assert!(f.leader_elect);
    assert_eq!(f.leader_elect_lease_duration, Duration::from_secs(15));
    assert_eq!(f.leader_elect_renew_deadline, Duration::from_secs(10));
    assert_eq!(f.leader_elect_retry_period, Duration::from_secs(2));
    assert_eq!(f.graceful_shutdown_timeout, Duration::from_secs(30));
    assert_eq!(cli.workers, 1);
    let quiet = f.clone().without_default_listeners();
    assert_eq!(
        (
            quiet.health_probe_bind_address(),
            quiet.metrics_bind_address()
        ),
        ("0", "0")
    );
}

#[test]
fn controller_runtime_flag_names_parse() {
    let cli = ok(parse(&[
        "--metrics-bind-address=:8443",
        "--metrics-secure=false",
        "--health-probe-bind-address",
        "127.0.0.1:9000",
        "--leader-elect=false",
        "--leader-elect-lease-duration=4s",
        "--leader-elect-renew-deadline=3s",
        "--leader-elect-retry-period=500ms",
        "--leader-election-id=my-lease",
        "--kubeconfig=/tmp/kc",
        "--namespace=prod",
        "--workers=3",
    ]));
    let f = &cli.manager;
    assert_eq!(f.metrics_bind_address(), ":8443");
    assert!(!f.metrics_secure);
    assert_eq!(f.health_probe_bind_address(), "127.0.0.1:9000");
    assert!(!f.leader_elect);
    assert_eq!(f.leader_elect_lease_duration, Duration::from_secs(4));
    assert_eq!(f.leader_elect_retry_period, Duration::from_millis(500));
    assert_eq!(f.leader_election_id.as_deref(), Some("my-lease"));
    assert_eq!(f.namespace.as_deref(), Some("prod"));
    assert_eq!(cli.workers, 3);
    // Given addresses survive the embedded defaults.
    let quiet = f.clone().without_default_listeners();
    assert_eq!(quiet.metrics_bind_address(), ":8443");
    // Bare boolean flags mean true; old names and bad durations are refused.
    assert!(ok(parse(&["--leader-elect"])).manager.leader_elect);
    assert!(parse(&["--lease-duration=4s"]).is_err());
    assert!(parse(&["--leader-elect-renew-deadline=5 parsecs"]).is_err());
}

#[tokio::test]
async fn the_builder_carries_the_flags_into_the_manager() {
    let server = kube_codegen_runtime::fake::FakeApiServer::new();
    let client = ok(server.client());
    // A metrics address that is no host:port is reported against its flag.
    let cli = ok(parse(&[
        "--metrics-bind-address=8080",
        "--leader-elect=false",
    ]));
    let err = cli
        .manager
        .builder(client.clone(), "demo")
        .build()
        .err()
        .unwrap_or_else(|| panic!("8080 is no host:port"));
    assert_eq!(ManagerFlags::flag_for(&err), Some("--metrics-bind-address"));
    // Leader election on, with the binary's default Lease name.
    let cli = ok(parse(&["--namespace=ns"]));
    let mgr = ok(cli.manager.builder(client, "demo-lease").build());
    let lease = mgr
        .elector()
        .map(|e| e.lock().describe())
        .unwrap_or_default();
    assert!(lease.contains("ns/demo-lease"), "{lease}");
}

#[tokio::test]
async fn client_config_reads_the_kubeconfig_flag_first() {
    let dir = std::env::temp_dir().join(format!("flags-kc-{}", std::process::id()));
    ok(std::fs::create_dir_all(&dir));
    let path = dir.join("kc.yaml");
    ok(std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.1.2.3:6443\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: team\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    ));
    let config = ok(client_config(Some(&path)).await);
    assert_eq!(config.cluster_url.to_string(), "https://10.1.2.3:6443/");
    assert_eq!(config.default_namespace, "team");

    let missing = dir.join("missing.yaml");
    match client_config(Some(&missing)).await {
        Err(e @ ConfigError::Kubeconfig { .. }) => {
            assert!(e.to_string().contains("missing.yaml"), "{e}")
        }
        other => panic!("a missing --kubeconfig must be an error naming it: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn logging_is_installed_once_and_a_second_install_is_an_error() {
    let cli = ok(parse(&["--log-format=json"]));
    assert_eq!(cli.log.log_format, LogFormat::Json);
    assert_eq!(ok(parse(&[])).log.log_format, LogFormat::Text);
    assert!(parse(&["--log-format=yaml"]).is_err());
    ok(init_logging(cli.log.log_format, "info"));
    let again = init_logging(LogFormat::Text, "info");
    assert!(again.is_err(), "a second subscriber must be refused");
}

#[tokio::test]
async fn webhook_flags_have_controller_runtimes_defaults_and_reach_the_server() {
    let f = ok(parse(&[])).manager;
    assert_eq!(f.webhook_port, 9443);
    assert_eq!(
        f.webhook_cert_dir,
        std::path::PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
    );
    let f = ok(parse(&[
        "--webhook-port=10250",
        "--webhook-cert-dir",
        "/certs",
        "--leader-elect=false",
    ]))
    .manager;
    let server = kube_codegen_runtime::fake::FakeApiServer::new();
    let mgr = ok(f.builder(ok(server.client()), "op").build());
    let webhooks = ok(mgr.webhook_server());
    assert_eq!(webhooks.options().port, 10250);
    assert_eq!(
        webhooks.options().cert_dir,
        std::path::PathBuf::from("/certs")
    );
    assert!(parse(&["--webhook-port=70000"]).is_err());
}

/// `--leader-elect-coordinated`: the Manager's replica declares itself in a LeaseCandidate
/// with the flags' versions and leads once the (in-memory) server's coordinated election names
/// it holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinated_leader_election_flags_make_a_candidate_the_server_elects() {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::coordination::v1beta1::LeaseCandidate;
    use kube_codegen_runtime::fake::{Controller, FakeApiServer};

    let server = ok(FakeApiServer::builder()
        .with_controllers([Controller::CoordinatedLeaderElection])
        .build());
    let client = ok(server.client());
    let base = [
        "--leader-elect-coordinated",
        "--leader-election-namespace=default",
        "--leader-election-identity=replica-1",
        "--health-probe-bind-address=0",
        "--leader-elect-lease-duration=4s",
        "--leader-elect-renew-deadline=3s",
        "--leader-elect-retry-period=500ms",
    ];
    // Without a binary version the Manager refuses to start, naming the flag.
    let e = match ok(parse(&base))
        .manager
        .builder(client.clone(), "demo")
        .build()
    {
        Ok(_) => panic!("a Manager without a binary version"),
        Err(e) => e,
    };
    assert!(
        e.to_string().contains("--leader-elect-binary-version"),
        "{e}"
    );

    let mut args = base.to_vec();
    args.push("--leader-elect-binary-version=1.4.0");
    let flags = ok(parse(&args)).manager;
    assert!(flags.leader_elect_coordinated);
    let mgr = ok(flags.builder(client.clone(), "demo").build());
    assert!(mgr.elector().is_some_and(|e| e.is_coordinated()));
    let stop = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn({
        let (mgr, stop) = (mgr.clone(), stop.clone());
        async move { mgr.start(stop.cancelled_owned()).await }
    });
    ok(tokio::time::timeout(Duration::from_secs(30), mgr.elected()).await);
    assert!(mgr.is_leader());
    let lease = ok(kube::Api::<Lease>::namespaced(client.clone(), "default")
        .get("demo")
        .await);
    let spec = lease.spec.unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("replica-1"));
    assert_eq!(spec.strategy.as_deref(), Some("OldestEmulationVersion"));
    let candidate = ok(kube::Api::<LeaseCandidate>::namespaced(client, "default")
        .get("replica-1")
        .await);
    assert_eq!(candidate.spec.lease_name, "demo");
    assert_eq!(candidate.spec.binary_version, "1.4.0");
    assert_eq!(candidate.spec.emulation_version.as_deref(), Some("1.4.0"));
    stop.cancel();
    ok(ok(run.await));
}
