//! `eru-operator` (example-eru) as separate processes against a real kube-apiserver v1.37 **and
//! kube-controller-manager** (Deployment, ReplicaSet and garbage-collector controllers), with the
//! least privilege of `example-eru/deploy/` (a token of its ServiceAccount, nothing else).
//!
//! * `rollouts_failover_gc_and_least_privilege`: the CRD, `service_account.yaml`, `role.yaml`,
//!   `role_binding.yaml` applied, `operator.yaml` checked by a server-side dry run; two
//!   operators with leader election; an annotated Deployment gets its Eru, and a slot makes the
//!   Deployment controller create a new ReplicaSet whose pod template carries the slot; the
//!   leader is SIGKILLed right after a slot, the other one takes over; afterwards the
//!   ReplicaSets show that no slot was rolled twice (one ReplicaSet per recorded rollout,
//!   revisions in slot order, the Deployment's generation moved once per rollout); deleting the
//!   Deployment garbage-collects its Eru; the audit log shows every request the operators made
//!   was allowed and every rule of the Role was used.
//! * `bad_input_is_refused_or_reported`: unknown fields, a Deployment in another namespace, a
//!   time zone that does not exist, `schedule: "* * *"`, a cron string that passes the CRD's rule
//!   but no parser, a bad schedule annotation: refused by the schema with a clear message, or a
//!   clear condition and Event, never a rollout or a crash.
//! * `defaulting_webhook_sets_the_time_zone`: the operator serves its defaulting webhook with a
//!   certificate the test made, `deploy/webhook.yaml` is installed pointing at it (envtest's
//!   way, `kube_controller_runtime::webhook::local`): an Eru created without `spec.timeZone`
//!   gets `--default-time-zone`, one with a zone keeps it, a dry run shows the default too.
//! * `slot_accuracy` (ignored; run it with `--ignored --nocapture`): 100 slots on a per-second
//!   schedule, scheduled time → patch time, p50/p99, beside a bare client patching at the same
//!   slots.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use base64::Engine as _;
use example_eru::controller::status::ready_condition;
use example_eru::pkg::apis::mtsre::v1::Eru;
use example_eru::pkg::client::clientset::versioned::Clientset;
use example_eru::{ERU_ANNOTATION, RESTARTED_AT_ANNOTATION, SCHEDULE_ANNOTATION};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_runtime::api_status::is_not_found;
use rustix::process::Signal;
use serde_json::{Value, json};
use tests::apiserver::{
    ControllerManagerOptions, Options, RealApiServer, SupervisedProcess, log_tail, repo_root,
    wait_crd_established,
};
use tests::e2e::{Permission, Timer, audit_requests, create_namespace, init_tracing, rbac_rules};

/// The CRD's name.
const CRD: &str = "erus.mtsre.meitu.com";
/// How long a step may take to converge.
const CONVERGE: Duration = Duration::from_secs(60);
/// The operators' `RUST_LOG`.
const OPERATOR_LOG: &str = "info,kube_client=warn,kube_runtime=warn,tower=warn,hyper=warn";

// ---------------------------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------------------------

/// The `eru-operator` binary, built once per test process.
fn eru_binary() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(build_eru) {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

fn build_eru() -> Result<PathBuf, String> {
    tests::e2e::build_bin("example-eru", "eru-operator")
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("picking a port: {e}"))
}

/// A running `eru-operator`, its JSON log in a temporary directory (printed if the test fails).
struct Operator {
    identity: String,
    process: SupervisedProcess,
    log: PathBuf,
    probes: u16,
    metrics: u16,
    _dir: tempfile::TempDir,
}

impl Operator {
    /// Starts `eru-operator --namespace <ns>` with `kubeconfig`, leader election with a short
    /// lease (4 s, renew deadline 3 s, retry 500 ms) so that a takeover happens within seconds.
    fn start(identity: &str, kubeconfig: &Path, namespace: &str, extra: &[&str]) -> Operator {
        let dir = tempfile::Builder::new()
            .prefix("eru-e2e.")
            .tempdir()
            .unwrap_or_else(|e| panic!("{e}"));
        let log = dir.path().join(format!("{identity}.log"));
        let (probes, metrics) = (free_port(), free_port());
        let mut args: Vec<OsString> = [
            "--kubeconfig".into(),
            kubeconfig.as_os_str().to_os_string(),
            format!("--namespace={namespace}").into(),
            format!("--leader-election-identity={identity}").into(),
            "--leader-elect-lease-duration=4s".into(),
            "--leader-elect-renew-deadline=3s".into(),
            "--leader-elect-retry-period=500ms".into(),
            format!("--health-probe-bind-address=127.0.0.1:{probes}").into(),
            format!("--metrics-bind-address=127.0.0.1:{metrics}").into(),
            // Scraped below over plain HTTP on loopback.
            "--metrics-secure=false".into(),
            "--log-format=json".into(),
        ]
        .into();
        // A bare kube-apiserver has no cert-manager: the webhook only where a test sets it up.
        if !extra.iter().any(|a| a.starts_with("--enable-webhooks")) {
            args.push("--enable-webhooks=false".into());
        }
        args.extend(extra.iter().map(OsString::from));
        let env = [
            (OsString::from("RUST_LOG"), OsString::from(OPERATOR_LOG)),
            ("NO_COLOR".into(), "1".into()),
        ];
        let process = SupervisedProcess::spawn("eru-operator", eru_binary(), &args, &env, &log)
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "[e2e] eru-operator {identity}: pid {}, probes :{probes}, metrics :{metrics}, log {}",
            process.pid(),
            log.display()
        );
        Operator {
            identity: identity.into(),
            process,
            log,
            probes,
            metrics,
            _dir: dir,
        }
    }

    /// Every JSON line of the log so far.
    fn entries(&self) -> Vec<Value> {
        tests::reconcile_log::json_lines(&self.log)
    }

    fn assert_running(&mut self) {
        if let Some(status) = self.process.try_wait().unwrap_or_else(|e| panic!("{e}")) {
            panic!(
                "eru-operator {} exited: {status}\n{}",
                self.identity,
                log_tail(&self.log)
            );
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "[e2e] eru-operator {} log ({}), last lines:\n{}",
                self.identity,
                self.log.display(),
                log_tail(&self.log)
            );
        }
    }
}

/// `GET http://127.0.0.1:<port><path>`: the status code and body.
async fn http_get(port: u16, path: &str) -> Result<(u16, String), String> {
    let path = path.to_string();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read as _, Write as _};
        let mut s =
            std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&buf).into_owned();
        let code = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("no status line in {text:?}"))?;
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        Ok((code, body))
    })
    .await
    .map_err(|e| e.to_string())?
}

// ---------------------------------------------------------------------------------------------
// Cluster helpers
// ---------------------------------------------------------------------------------------------

/// Polls `probe` every 100 ms until it returns `Ok`, failing after `timeout` with its last
/// complaint.
async fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        let last = match probe().await {
            Ok(v) => return v,
            Err(e) => e,
        };
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}; last: {last}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `kubectl` against `server`; returns (success, stdout, stderr).
fn kubectl(server: &RealApiServer, args: &[&str]) -> (bool, String, String) {
    let out = server
        .kubectl()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn deploy_file(name: &str) -> PathBuf {
    repo_root().join("example-eru/deploy").join(name)
}

/// A server (with `extra_apiserver_args`) and the CRD of `deploy/crds/` applied and established.
async fn start_server(extra_apiserver_args: Vec<String>) -> RealApiServer {
    init_tracing();
    let server = RealApiServer::start_with(Options {
        extra_apiserver_args,
        ..Options::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let applied = server
        .kubectl_apply(&deploy_file("crds/mtsre.meitu.com_erus_crd.yaml"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        applied,
        [format!(
            "customresourcedefinition.apiextensions.k8s.io/{CRD}"
        )]
    );
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));
    wait_crd_established(&admin, CRD)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    server
}

/// Applies `service_account.yaml`, `role.yaml` and `role_binding.yaml` into `namespace` and
/// writes a kubeconfig with a token of the ServiceAccount (TokenRequest API) to `path`.
async fn operator_identity(server: &RealApiServer, namespace: &str, path: &Path) {
    for (file, applied) in [
        ("service_account.yaml", "serviceaccount/eru-operator"),
        ("role.yaml", "role.rbac.authorization.k8s.io/eru-operator"),
        (
            "role_binding.yaml",
            "rolebinding.rbac.authorization.k8s.io/eru-operator",
        ),
    ] {
        let f = deploy_file(file);
        let (ok, out, err) = kubectl(
            server,
            &[
                "apply",
                "--server-side",
                "-n",
                namespace,
                "-o",
                "name",
                "-f",
                &f.to_string_lossy(),
            ],
        );
        assert!(ok, "kubectl apply {file}: {err}");
        assert_eq!(out.trim(), applied);
    }
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let token = Api::<ServiceAccount>::namespaced(admin, namespace)
        .create_token_request("eru-operator", &PostParams::default(), &request)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .status
        .and_then(|s| s.token)
        .unwrap_or_else(|| panic!("no token"));
    let ca = base64::engine::general_purpose::STANDARD.encode(server.ca_pem());
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {url}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: eru-operator\n  user:\n    token: {token}\n\
         contexts:\n- name: eru-operator\n  context:\n    cluster: e2e\n    user: eru-operator\n    namespace: {namespace}\n\
         current-context: eru-operator\n",
        url = server.url()
    );
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

fn deployment(name: &str, annotations: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "replicas": 1,
            // Keep every ReplicaSet: the test counts them.
            "revisionHistoryLimit": 1000,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
            },
        },
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn restarted_at_of(template_annotations: Option<&BTreeMap<String, String>>) -> Option<String> {
    template_annotations?.get(RESTARTED_AT_ANNOTATION).cloned()
}

/// The ReplicaSets of Deployment `name`, as (revision, restartedAt) sorted by revision.
async fn replica_sets(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Vec<(u64, Option<String>)> {
    let mut out: Vec<(u64, Option<String>)> =
        Api::<ReplicaSet>::namespaced(client.clone(), namespace)
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .items
            .into_iter()
            .map(|rs| {
                let revision = rs
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("deployment.kubernetes.io/revision"))
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let slot = restarted_at_of(
                    rs.spec
                        .template
                        .as_ref()
                        .and_then(|t| t.metadata.as_ref())
                        .and_then(|m| m.annotations.as_ref()),
                );
                (revision, slot)
            })
            .collect();
    out.sort();
    out
}

async fn get_eru(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<Eru>, String> {
    match Clientset::new(client.clone())
        .mtsre_v1()
        .erus(namespace)
        .get(name, &Default::default())
        .await
    {
        Ok(e) => Ok(Some(e)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The Events about `kind` `name` in `namespace`: (type, reason, note).
async fn events(
    client: &kube::Client,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Vec<(String, String, String)> {
    Api::<Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .items
        .into_iter()
        .filter(|e| {
            e.regarding
                .as_ref()
                .is_some_and(|r| r.kind.as_deref() == Some(kind) && r.name.as_deref() == Some(name))
        })
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default(),
            )
        })
        .collect()
}

async fn wait_event(
    client: &kube::Client,
    namespace: &str,
    kind: &str,
    name: &str,
    reason: &str,
) -> String {
    eventually(
        &format!("a {reason} Event about {kind} {name}"),
        CONVERGE,
        async || {
            let all = events(client, namespace, kind, name).await;
            all.iter()
                .find(|(_, r, _)| r == reason)
                .map(|(_, _, n)| n.clone())
                .ok_or_else(|| format!("{all:?}"))
        },
    )
    .await
}

async fn lease_holder(client: &kube::Client, namespace: &str) -> Option<String> {
    Api::<Lease>::namespaced(client.clone(), namespace)
        .get_opt("eru-operator")
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

// ---------------------------------------------------------------------------------------------
// Rollouts, failover, garbage collection, least privilege
// ---------------------------------------------------------------------------------------------

/// The audit policy: every request of the operator's ServiceAccount, at Metadata level.
fn audit_policy(namespace: &str) -> String {
    format!(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n\
         - level: Metadata\n  users: [\"system:serviceaccount:{namespace}:eru-operator\"]\n\
         - level: None\n"
    )
}

/// The Role's rules as (group, resource[/subresource], verb) triples.
fn role_rules() -> BTreeSet<Permission> {
    let text = std::fs::read_to_string(deploy_file("role.yaml")).unwrap_or_else(|e| panic!("{e}"));
    rbac_rules(&text).unwrap_or_else(|e| panic!("role.yaml: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollouts_failover_gc_and_least_privilege() {
    let _timer = Timer::new("eru_rollouts_failover_gc_rbac");
    tokio::task::spawn_blocking(eru_binary)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = format!("eru-{}", tests::e2e::run_id());
    let audit_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = audit_dir.path().join("policy.yaml");
    let audit_log = audit_dir.path().join("audit.log");
    std::fs::write(&policy, audit_policy(&ns)).unwrap_or_else(|e| panic!("{e}"));
    // OwnerReferencesPermissionEnforcement: an Eru with blockOwnerDeletion needs the Role's
    // deployments/finalizers rule, as on hardened clusters.
    let mut server = start_server(vec![
        "--enable-admission-plugins=OwnerReferencesPermissionEnforcement".into(),
        format!("--audit-policy-file={}", policy.display()),
        format!("--audit-log-path={}", audit_log.display()),
    ])
    .await;
    // After the CRD, so that the garbage collector watches Erus from the start.
    server
        .start_controller_manager(&ControllerManagerOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));
    create_namespace(&admin, &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // deploy/: the operator's identity, and operator.yaml through the server's validation.
    let kubeconfig = audit_dir.path().join("eru-operator.kubeconfig");
    operator_identity(&server, &ns, &kubeconfig).await;
    let (ok, out, err) = kubectl(
        &server,
        &[
            "apply",
            "--dry-run=server",
            "-n",
            &ns,
            "-f",
            &deploy_file("operator.yaml").to_string_lossy(),
        ],
    );
    assert!(
        ok && out.contains("deployment.apps/eru-operator created (server dry run)"),
        "{out}{err}"
    );
    let manifest: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(deploy_file("operator.yaml")).unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(manifest["spec"]["replicas"], 2);
    let container = &manifest["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        args.contains(&"--leader-elect=true")
            && args.contains(&"--health-probe-bind-address=:8081"),
        "{args:?}"
    );
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    let probe_port = container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == container["livenessProbe"]["httpGet"]["port"])
        .map(|p| p["containerPort"].clone());
    assert_eq!(
        probe_port,
        Some(json!(8081)),
        "the probes' port is the probe bind address"
    );

    // Two operators with leader election, on the ServiceAccount's token only.
    let mut a = Operator::start("op-a", &kubeconfig, &ns, &[]);
    let mut b = Operator::start("op-b", &kubeconfig, &ns, &[]);
    for op in [&a, &b] {
        let port = op.probes;
        eventually(
            &format!("{} /readyz", op.identity),
            CONVERGE,
            async || match http_get(port, "/readyz").await? {
                (200, _) => Ok(()),
                other => Err(format!("{other:?}")),
            },
        )
        .await;
        assert_eq!(http_get(port, "/healthz").await.map(|r| r.0), Ok(200));
    }
    let leader = eventually("a leader", CONVERGE, async || {
        lease_holder(&admin, &ns)
            .await
            .ok_or_else(|| "no holder".to_string())
    })
    .await;
    eprintln!("[e2e] leader: {leader}");

    // An annotated Deployment (daily at first): its Eru, controlled by it. Then the schedule
    // annotation changes to every two seconds, and the Eru follows.
    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), &ns);
    let created = deployments
        .create(
            &PostParams::default(),
            &deployment(
                "web",
                json!({ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: "0 3 * * *"}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let eru = eventually("the Eru", CONVERGE, async || {
        get_eru(&admin, &ns, "web")
            .await?
            .ok_or_else(|| "not yet".to_string())
    })
    .await;
    let owner = eru.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(owner.len(), 1);
    assert_eq!(Some(&owner[0].uid), created.metadata.uid.as_ref());
    assert_eq!(owner[0].controller, Some(true));
    assert_eq!(owner[0].block_owner_deletion, Some(true));
    assert_eq!(eru.spec.schedule, "0 3 * * *");
    // (A Deployment's generation moves with its annotations too: count from here.)
    let base_generation = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {SCHEDULE_ANNOTATION: "*/2 * * * * *"}}}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .metadata
        .generation
        .unwrap_or_default();
    eventually("the Eru to follow the annotation", CONVERGE, async || {
        let e = get_eru(&admin, &ns, "web").await?.ok_or("gone")?;
        if e.spec.schedule == "*/2 * * * * *" {
            Ok(())
        } else {
            Err(e.spec.schedule)
        }
    })
    .await;

    // Another one loses its annotation: the operator deletes that Eru.
    deployments
        .create(
            &PostParams::default(),
            &deployment("worker", json!({ERU_ANNOTATION: "true"})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the worker's Eru", CONVERGE, async || {
        get_eru(&admin, &ns, "worker")
            .await?
            .map(drop)
            .ok_or_else(|| "not yet".to_string())
    })
    .await;
    deployments
        .patch(
            "worker",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {ERU_ANNOTATION: null}}})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually(
        "the worker's Eru to be deleted",
        CONVERGE,
        async || match get_eru(&admin, &ns, "worker").await? {
            None => Ok(()),
            Some(_) => Err("still there".to_string()),
        },
    )
    .await;
    wait_event(&admin, &ns, "Deployment", "worker", "EruDeleted").await;

    // The rollout is real: the Deployment controller makes a ReplicaSet with the slot.
    let first = eventually("a ReplicaSet carrying a slot", CONVERGE, async || {
        let sets = replica_sets(&admin, &ns, "web").await;
        sets.iter()
            .find_map(|(_, slot)| slot.clone())
            .ok_or_else(|| format!("{sets:?}"))
    })
    .await;
    eprintln!(
        "[e2e] first rolled slot {first}: {:?}",
        replica_sets(&admin, &ns, "web").await
    );
    let rolled = wait_event(&admin, &ns, "Eru", "web", "RolledOut").await;
    assert!(rolled.contains(RESTARTED_AT_ANNOTATION), "{rolled}");

    // The leader is SIGKILLed right after a slot: as soon as a new slot is on the Deployment.
    let (leader_op, other) = if leader == "op-a" {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    let seen = deployments
        .get("web")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = restarted_at_of(
        seen.spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.as_ref()),
    );
    let killed_after = eventually("the next slot", CONVERGE, async || {
        let d = deployments.get("web").await.map_err(|e| e.to_string())?;
        let now = restarted_at_of(
            d.spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.annotations.as_ref()),
        );
        if now != seen && now.is_some() {
            Ok(now)
        } else {
            Err(format!("{now:?}"))
        }
    })
    .await;
    leader_op
        .process
        .signal(Signal::KILL)
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "[e2e] SIGKILLed {} right after slot {killed_after:?}",
        leader_op.identity
    );
    let t_kill = Instant::now();
    let other_id = other.identity.clone();
    eventually(
        "the other operator to take over",
        CONVERGE,
        async || match lease_holder(&admin, &ns).await {
            Some(h) if h == other_id => Ok(()),
            h => Err(format!("holder {h:?}")),
        },
    )
    .await;
    eprintln!(
        "[e2e] {other_id} leads {:.1?} after the kill",
        t_kill.elapsed()
    );
    // It rolls on: two more slots after the takeover.
    let after_takeover = replica_sets(&admin, &ns, "web").await.len();
    eventually(
        "two more rollouts after the takeover",
        CONVERGE,
        async || {
            let n = replica_sets(&admin, &ns, "web").await.len();
            if n >= after_takeover + 2 {
                Ok(())
            } else {
                Err(format!("{n} ReplicaSets"))
            }
        },
    )
    .await;
    other.assert_running();

    // Stop the rollouts (suspend sticks: the annotation rule owns only schedule and
    // deployment), let everything settle, then count.
    Clientset::new(admin.clone())
        .mtsre_v1()
        .erus(&ns)
        .patch(
            "web",
            &Patch::Merge(json!({"spec": {"suspend": true}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let eru = eventually("the Eru to be Suspended", CONVERGE, async || {
        let e = get_eru(&admin, &ns, "web").await?.ok_or("gone")?;
        match ready_condition(&e) {
            Some(c) if c.reason == "Suspended" => Ok(e),
            c => Err(format!("{c:?}")),
        }
    })
    .await;
    let deployment = deployments
        .get("web")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = eru.status.clone().unwrap_or_default();
    let sets = eventually("the ReplicaSets of every rollout", CONVERGE, async || {
        let sets = replica_sets(&admin, &ns, "web").await;
        let d = deployments.get("web").await.map_err(|e| e.to_string())?;
        let newest = restarted_at_of(
            d.spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.annotations.as_ref()),
        );
        if sets.last().map(|(_, s)| s) == Some(&newest) {
            Ok(sets)
        } else {
            Err(format!("{sets:?}"))
        }
    })
    .await;
    eprintln!(
        "[e2e] ReplicaSets (revision, slot): {sets:?}; Eru status rollouts {}",
        status.rollouts
    );
    let slots: Vec<&String> = sets.iter().filter_map(|(_, s)| s.as_ref()).collect();
    assert_eq!(
        sets[0].1, None,
        "the first ReplicaSet is the unrolled template"
    );
    assert_eq!(
        slots.len(),
        sets.len() - 1,
        "every later ReplicaSet carries a slot: {sets:?}"
    );
    assert!(
        slots.windows(2).all(|w| w[0] < w[1]),
        "ReplicaSets in revision order carry strictly increasing slots (no slot rolled twice, none rolled back): {sets:?}"
    );
    let revisions: Vec<u64> = sets.iter().map(|(r, _)| *r).collect();
    assert_eq!(
        revisions,
        (1..=sets.len() as u64).collect::<Vec<_>>(),
        "no revision reused: {sets:?}"
    );
    assert_eq!(
        status.rollouts as usize,
        slots.len(),
        "each rollout recorded exactly once, the one around the SIGKILL included: {status:?}"
    );
    assert_eq!(
        deployment.metadata.generation,
        Some(base_generation + slots.len() as i64),
        "the pod template changed once per rollout"
    );
    assert_eq!(
        status
            .last_schedule_time
            .map(|t| example_eru::schedule::format_slot(t.0))
            .as_ref(),
        slots.last().copied()
    );
    // The leader's own metrics count its rollouts.
    let (code, text) = http_get(other.metrics, "/metrics")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code, 200);
    assert!(
        text.contains("eru_rollouts_total")
            && text.contains("eru_slot_lateness_seconds_bucket")
            && text.contains("controller_runtime_reconcile_total"),
        "{text}"
    );

    // Deleting the Deployment garbage-collects its Eru.
    deployments
        .delete("web", &DeleteParams::background())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually(
        "the garbage collector to delete the Eru",
        CONVERGE,
        async || match get_eru(&admin, &ns, "web").await? {
            None => Ok(()),
            Some(e) => Err(format!(
                "still there, owners {:?}",
                e.metadata.owner_references
            )),
        },
    )
    .await;
    other.assert_running();

    // Least privilege: every request the operators made was allowed, and used every rule.
    let (mut used, denied) = audit_requests(&audit_log);
    assert!(
        denied.is_empty(),
        "requests denied to the operator: {denied:?}"
    );
    assert!(!used.is_empty(), "the audit log recorded nothing");
    // Requests that need no rule: every authenticated user may review itself.
    used.retain(|(_, resource, _)| resource != "selfsubjectreviews");
    let rules = role_rules();
    let unused: Vec<_> = rules
        .difference(&used)
        // An authorization check of the admission plugin, never a request of its own.
        .filter(|(g, r, v)| !(g == "apps" && r == "deployments/finalizers" && v == "update"))
        .collect();
    assert!(
        unused.is_empty(),
        "rules of role.yaml that were never needed: {unused:?}\nused: {used:?}"
    );
    let beyond: Vec<_> = used.difference(&rules).collect();
    assert!(
        beyond.is_empty(),
        "requests outside role.yaml (should have been denied): {beyond:?}"
    );
    eprintln!("[e2e] the operators' requests, all allowed: {used:?}");
}

// ---------------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------------

/// `kubectl create -n <ns> -f <yaml>` (after writing `yaml` to a file in `dir`) with `extra`
/// flags: (success, stdout + stderr).
fn kubectl_create(
    server: &RealApiServer,
    dir: &Path,
    ns: &str,
    name: &str,
    yaml: &str,
    extra: &[&str],
) -> (bool, String) {
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, yaml).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().into_owned();
    let mut args = vec!["create", "-n", ns, "-f", file.as_str()];
    args.extend_from_slice(extra);
    let (ok, out, err) = kubectl(server, &args);
    (ok, format!("{out}{err}"))
}

fn eru_yaml(name: &str, spec: &str) -> String {
    format!("apiVersion: mtsre.meitu.com/v1\nkind: Eru\nmetadata:\n  name: {name}\nspec:\n{spec}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_or_reported() {
    let _timer = Timer::new("eru_bad_input");
    let (server, admin, ns, dir) = bare_setup("eru-bad").await;
    let kubeconfig = dir.path().join("eru-operator.kubeconfig");
    operator_identity(&server, &ns, &kubeconfig).await;
    let mut op = Operator::start("op", &kubeconfig, &ns, &[]);
    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), &ns);
    deployments
        .create(&PostParams::default(), &deployment("web", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // Unknown fields: refused by kubectl's default strict field validation, pruned otherwise.
    let unknown = eru_yaml(
        "unknown",
        "  deployment: web\n  schedule: \"0 3 * * *\"\n  deploymentNamespace: other\n",
    );
    let (ok, out) = kubectl_create(&server, dir.path(), &ns, "unknown", &unknown, &[]);
    assert!(
        !ok && out.contains("unknown field \"spec.deploymentNamespace\""),
        "{out}"
    );
    let (ok, out) = kubectl_create(
        &server,
        dir.path(),
        &ns,
        "unknown",
        &unknown,
        &["--validate=false"],
    );
    assert!(ok, "{out}");
    let stored: Value = serde_json::to_value(
        get_eru(&admin, &ns, "unknown")
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        stored["spec"].get("deploymentNamespace").is_none(),
        "pruned: {stored}"
    );

    // Refused by the schema, with the reason: another namespace's Deployment, a schedule of
    // three fields.
    let (ok, out) = kubectl_create(
        &server,
        dir.path(),
        &ns,
        "elsewhere",
        &eru_yaml(
            "elsewhere",
            "  deployment: other/web\n  schedule: \"* * * * * *\"\n",
        ),
        &[],
    );
    assert!(
        !ok && out.contains("spec.deployment") && out.contains("should match"),
        "{out}"
    );
    let (ok, out) = kubectl_create(
        &server,
        dir.path(),
        &ns,
        "three",
        &eru_yaml("three", "  deployment: web\n  schedule: \"* * *\"\n"),
        &[],
    );
    assert!(
        !ok && out.contains("spec.schedule")
            && out.contains("must be a cron expression of 5 fields"),
        "{out}"
    );
    for name in ["elsewhere", "three"] {
        assert_eq!(get_eru(&admin, &ns, name).await, Ok(None));
    }

    // Accepted by the schema, reported by the operator: a time zone that does not exist, a cron
    // string of the right shape that no parser takes.
    let cases = [
        (
            "mars",
            "  deployment: web\n  schedule: \"* * * * * *\"\n  timeZone: Mars/Olympus_Mons\n",
            "UnknownTimeZone",
            "unknown time zone \"Mars/Olympus_Mons\"",
        ),
        (
            "minute61",
            "  deployment: web\n  schedule: \"61 * * * *\"\n",
            "InvalidSchedule",
            "invalid schedule \"61 * * * *\": minute field \"61\"",
        ),
    ];
    for (name, spec, _, _) in cases {
        let (ok, out) = kubectl_create(&server, dir.path(), &ns, name, &eru_yaml(name, spec), &[]);
        assert!(ok, "{out}");
    }
    for (name, _, reason, words) in cases {
        let eru = eventually(
            &format!("{name}: Ready=False {reason}"),
            CONVERGE,
            async || {
                let e = get_eru(&admin, &ns, name).await?.ok_or("gone")?;
                match ready_condition(&e) {
                    Some(c) if c.reason == reason => Ok(e),
                    c => Err(format!("{c:?}")),
                }
            },
        )
        .await;
        let c = ready_condition(&eru)
            .cloned()
            .unwrap_or_else(|| panic!("no condition"));
        assert_eq!(c.status, "False");
        assert!(c.message.contains(words), "{}", c.message);
        let note = wait_event(&admin, &ns, "Eru", name, reason).await;
        assert_eq!(note, c.message);
        let (_, table, _) = kubectl(&server, &["get", "eru", name, "-n", &ns]);
        eprintln!("[e2e] {}", table.trim().replace('\n', "\n[e2e] "));
    }

    // A schedule annotation the CRD refuses: a Warning Event on the Deployment, no Eru.
    deployments
        .create(
            &PostParams::default(),
            &deployment(
                "bad-annotation",
                json!({ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: "* * *"}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let note = wait_event(&admin, &ns, "Deployment", "bad-annotation", "InvalidEru").await;
    assert!(
        note.contains("must be a cron expression of 5 fields"),
        "{note}"
    );
    assert_eq!(get_eru(&admin, &ns, "bad-annotation").await, Ok(None));

    // No rollout happened, and the operator is alive: fixing the time zone makes it roll.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let web = deployments
        .get("web")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        restarted_at_of(
            web.spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.annotations.as_ref())
        ),
        None,
        "a bad Eru rolled the Deployment"
    );
    op.assert_running();
    Clientset::new(admin.clone())
        .mtsre_v1()
        .erus(&ns)
        .patch(
            "mars",
            &Patch::Merge(json!({"spec": {"timeZone": "Asia/Shanghai"}})),
            &PatchParams::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually(
        "a rollout once the time zone is fixed",
        CONVERGE,
        async || {
            let e = get_eru(&admin, &ns, "mars").await?.ok_or("gone")?;
            let rollouts = e.status.as_ref().map_or(0, |s| s.rollouts);
            if rollouts >= 1 {
                Ok(())
            } else {
                Err(format!("{:?}", ready_condition(&e)))
            }
        },
    )
    .await;
    op.assert_running();
}

/// The binary built, a server (no kube-controller-manager) with the CRD, a namespace
/// `<prefix>-<run>` and a temporary directory.
async fn bare_setup(prefix: &str) -> (RealApiServer, kube::Client, String, tempfile::TempDir) {
    tokio::task::spawn_blocking(eru_binary)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = format!("{prefix}-{}", tests::e2e::run_id());
    let server = start_server(Vec::new()).await;
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));
    create_namespace(&admin, &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    (server, admin, ns, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaulting_webhook_sets_the_time_zone() {
    use kube_controller_runtime::webhook::local::LocalWebhooks;

    let _timer = Timer::new("eru_defaulting_webhook");
    let (server, admin, ns, dir) = bare_setup("eru-webhook").await;
    let cert_dir = dir.path().join("certs");
    let local = LocalWebhooks::generate(&cert_dir).unwrap_or_else(|e| panic!("{e}"));
    let port = free_port();
    let mut op = Operator::start(
        "op",
        server.kubeconfig_path(),
        &ns,
        &[
            "--enable-webhooks=true",
            "--default-time-zone=Asia/Shanghai",
            &format!("--webhook-port={port}"),
            &format!("--webhook-cert-dir={}", cert_dir.display()),
        ],
    );
    eventually(
        "the webhook server to listen",
        Duration::from_secs(30),
        async || {
            op.assert_running();
            if op
                .entries()
                .iter()
                .any(|e| e["message"] == "serving webhooks")
            {
                Ok(())
            } else {
                Err("not yet".to_string())
            }
        },
    )
    .await;
    let manifests =
        std::fs::read_to_string(deploy_file("webhook.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let installed = local
        .install(
            &admin,
            &manifests,
            std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        installed,
        ["MutatingWebhookConfiguration/eru-operator-mutating-webhook-configuration"]
    );

    // The configuration reaches the API server's webhook cache within a moment: retry with new
    // names until an Eru comes back defaulted.
    let mut attempt = 0;
    let name = eventually(
        "an Eru defaulted by the webhook",
        Duration::from_secs(30),
        async || {
            attempt += 1;
            let name = format!("nightly-{attempt}");
            let yaml = eru_yaml(&name, "  deployment: web\n  schedule: \"0 3 * * *\"\n");
            let (ok, out) = kubectl_create(&server, dir.path(), &ns, &name, &yaml, &[]);
            if !ok {
                return Err(out);
            }
            let eru = get_eru(&admin, &ns, &name).await?.ok_or("not stored")?;
            match eru.spec.time_zone.as_deref() {
                Some("Asia/Shanghai") => Ok(name),
                other => Err(format!("{name}: timeZone {other:?}")),
            }
        },
    )
    .await;
    eprintln!("[e2e] {name} defaulted after {attempt} attempt(s)");

    // A zone given is kept; a dry run shows the default without storing anything.
    let yaml = eru_yaml(
        "paris",
        "  deployment: web\n  schedule: \"0 3 * * *\"\n  timeZone: Europe/Paris\n",
    );
    let (ok, out) = kubectl_create(&server, dir.path(), &ns, "paris", &yaml, &[]);
    assert!(ok, "{out}");
    let paris = get_eru(&admin, &ns, "paris")
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("paris not stored"));
    assert_eq!(paris.spec.time_zone.as_deref(), Some("Europe/Paris"));
    let yaml = eru_yaml("dry", "  deployment: web\n  schedule: \"0 3 * * *\"\n");
    let (ok, out) = kubectl_create(
        &server,
        dir.path(),
        &ns,
        "dry",
        &yaml,
        &["--dry-run=server", "-o", "jsonpath={.spec.timeZone}"],
    );
    assert!(ok && out == "Asia/Shanghai", "{out}");
    assert!(
        matches!(get_eru(&admin, &ns, "dry").await, Ok(None)),
        "a dry run stores nothing"
    );
    op.assert_running();
}

// ---------------------------------------------------------------------------------------------
// Slot accuracy (a measurement, not a test: ignored by default)
// ---------------------------------------------------------------------------------------------

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(name: &str, mut ms: Vec<f64>) -> String {
    ms.sort_by(f64::total_cmp);
    format!(
        "| {name} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        ms.len(),
        ms.first().copied().unwrap_or(f64::NAN),
        percentile(&ms, 50.0),
        percentile(&ms, 90.0),
        percentile(&ms, 99.0),
        ms.last().copied().unwrap_or(f64::NAN),
    )
}

/// Scheduled time → patch time over 100 slots of a per-second schedule against a real
/// kube-apiserver: `eru-operator` (from its `late_ms` log field: the moment its Deployment patch
/// returned, minus the slot) beside a bare client in this process that sleeps until each slot
/// and patches another Deployment the same way (the floor: one API round trip, no cache, no
/// queue, no status). Both run at the same time on the same machine.
///
/// `cargo test -p tests --test integration e2e_eru::slot_accuracy -- --ignored --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (about 2 minutes): run with --ignored --nocapture"]
async fn slot_accuracy() {
    const SLOTS: usize = 100;
    tokio::task::spawn_blocking(eru_binary)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = format!("eru-acc-{}", tests::e2e::run_id());
    let server = start_server(Vec::new()).await;
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));
    create_namespace(&admin, &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let op = Operator::start("op", server.kubeconfig_path(), &ns, &[]);
    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), &ns);
    deployments
        .create(&PostParams::default(), &deployment("peer", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    deployments
        .create(
            &PostParams::default(),
            &deployment(
                "acc",
                json!({ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: "* * * * * *"}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Let the operator settle on its first slots, then measure both side by side.
    eventually("the first rollouts", CONVERGE, async || {
        let e = get_eru(&admin, &ns, "acc").await?.ok_or("no Eru yet")?;
        let n = e.status.map_or(0, |s| s.rollouts);
        if n >= 3 {
            Ok(())
        } else {
            Err(format!("{n} rollouts"))
        }
    })
    .await;
    let skip = op
        .entries()
        .iter()
        .filter(|e| e["message"] == "patched the pod template")
        .count();

    let mut peer_ms = Vec::with_capacity(SLOTS);
    for _ in 0..SLOTS {
        let now = k8s_openapi::jiff::Timestamp::now();
        let slot = k8s_openapi::jiff::Timestamp::from_second(now.as_second() + 1)
            .unwrap_or_else(|e| panic!("{e}"));
        let wait = slot.duration_since(now);
        tokio::time::sleep(Duration::try_from(wait).unwrap_or_default()).await;
        let value = example_eru::schedule::format_slot(slot);
        deployments
            .patch(
                "peer",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT_ANNOTATION: value}}}}})),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        peer_ms.push(
            k8s_openapi::jiff::Timestamp::now()
                .duration_since(slot)
                .as_secs_f64()
                * 1000.0,
        );
    }
    // The operator's line for the last slot may come a moment after the peer's patch.
    eventually(
        "the operator's log of every measured slot",
        CONVERGE,
        async || {
            let n = op
                .entries()
                .iter()
                .filter(|e| e["message"] == "patched the pod template")
                .count();
            if n >= skip + SLOTS {
                Ok(())
            } else {
                Err(format!("{n} lines"))
            }
        },
    )
    .await;
    let op_ms: Vec<f64> = op
        .entries()
        .iter()
        .filter(|e| e["message"] == "patched the pod template")
        .skip(skip)
        .take(SLOTS)
        .filter_map(|e| e["late_ms"].as_f64())
        .collect();
    let eru = get_eru(&admin, &ns, "acc")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rollouts = eru.and_then(|e| e.status).map_or(0, |s| s.rollouts);
    println!(
        "\nslot accuracy: scheduled time -> Deployment patch returned, {SLOTS} per-second slots, real kube-apiserver v1.37.1 on loopback\n"
    );
    println!("| who | slots | min ms | p50 ms | p90 ms | p99 ms | max ms |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    println!(
        "{}",
        summary(
            "eru-operator (Manager + Builder, requeue_after to the slot)",
            op_ms.clone()
        )
    );
    println!(
        "{}",
        summary("bare client: sleep to the slot, patch (the floor)", peer_ms)
    );
    println!(
        "\nthe Eru recorded {rollouts} rollouts in all (every slot once: {})",
        rollouts as usize >= skip + op_ms.len()
    );
    assert_eq!(
        op_ms.len(),
        SLOTS,
        "the operator patched fewer slots than measured"
    );
}
