//! The fourth seed's workflow against a real kube-apiserver v1.37.1, as its user ran it with
//! operator-sdk: `new eru-operator`, `add api --api-version=mtsre.meitu.com/v1 --kind=Eru`,
//! `add controller …`; `kubectl apply -f deploy/service_account.yaml,role.yaml,
//! role_binding.yaml,crds/`; the operator run locally **as that ServiceAccount** (a token from
//! the TokenRequest API, nothing else) with `--namespace X`; a sample Eru becomes `Ready=True`.
//! The audit log shows every request the operator made was allowed and every rule of the
//! generated `deploy/role.yaml` was used: the markers give least privilege.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use kube_codegen::scaffold::{self, ApiOptions, ControllerOptions, NewOptions};
use serde_json::Value;
use tests::apiserver::{Options, RealApiServer, repo_root, wait_crd_established};
use tests::e2e::{Timer, audit_requests, create_namespace, init_tracing, rbac_rules};

const CONVERGE: Duration = Duration::from_secs(60);

/// Runs `kubectl` against `server`; (success, stdout + stderr).
fn kubectl(server: &RealApiServer, args: &[&str]) -> (bool, String) {
    let out = server
        .kubectl()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `cargo build --bin eru-operator` in the scaffolded project, with this workspace's lock file
/// and target directory; the executable cargo names.
fn build(project: &Path) -> PathBuf {
    std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock"))
        .unwrap_or_else(|e| panic!("{e}"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let t0 = Instant::now();
    let out = kube_codegen::scaffold::cargo_command()
        .current_dir(project)
        .env("CARGO_TARGET_DIR", target)
        .args([
            "build",
            "--bin",
            "eru-operator",
            "--message-format=json-render-diagnostics",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cargo: {e}"));
    assert!(
        out.status.success(),
        "cargo build failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("[e2e] scaffolded operator built in {:.2?}", t0.elapsed());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "eru-operator")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo named no eru-operator executable"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_workflow_runs_as_its_service_account_with_least_privilege() {
    let _timer = Timer::new("scaffold_seed_workflow");
    init_tracing();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    scaffold::new_project(
        work.path(),
        &NewOptions {
            name: "eru-operator".into(),
            domain: Some("meitu.com".into()),
            kube_codegen_path: Some(repo_root()),
            force: false,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let project = work.path().join("eru-operator");
    scaffold::add_api(
        &project,
        &ApiOptions {
            api_version: "mtsre.meitu.com/v1".into(),
            kind: "Eru".into(),
            namespaced: true,
            plural: None,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    scaffold::add_controller(
        &project,
        &ControllerOptions {
            api_version: "mtsre.meitu.com/v1".into(),
            kind: "Eru".into(),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let binary = tokio::task::spawn_blocking({
        let project = project.clone();
        move || build(&project)
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    let audit = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = audit.path().join("policy.yaml");
    let audit_log = audit.path().join("audit.log");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n\
         - level: Metadata\n  users: [\"system:serviceaccount:default:eru-operator\"]\n\
         - level: None\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let server = RealApiServer::start_with(Options {
        extra_apiserver_args: vec![
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", audit_log.display()),
        ],
        ..Options::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let admin = server.client().unwrap_or_else(|e| panic!("{e}"));

    // The seed's kubectl commands, file names as it gives them.
    let deploy = project.join("deploy");
    let files: Vec<String> = [
        "service_account.yaml",
        "role.yaml",
        "role_binding.yaml",
        "crds",
    ]
    .iter()
    .map(|f| deploy.join(f).to_string_lossy().into_owned())
    .collect();
    let mut args = vec!["apply", "-o", "name"];
    for f in &files {
        args.extend(["-f", f.as_str()]);
    }
    let (ok, out) = kubectl(&server, &args);
    assert!(ok, "kubectl apply: {out}");
    for applied in [
        "serviceaccount/eru-operator",
        "clusterrole.rbac.authorization.k8s.io/eru-operator",
        "clusterrolebinding.rbac.authorization.k8s.io/eru-operator",
        "customresourcedefinition.apiextensions.k8s.io/erus.mtsre.meitu.com",
    ] {
        assert!(out.contains(applied), "{applied} not in: {out}");
    }
    wait_crd_established(&admin, "erus.mtsre.meitu.com")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = format!("scaffold-{}", tests::e2e::run_id());
    create_namespace(&admin, &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // A kubeconfig holding only the ServiceAccount's token.
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let token = Api::<ServiceAccount>::namespaced(admin.clone(), "default")
        .create_token_request("eru-operator", &PostParams::default(), &request)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .status
        .and_then(|s| s.token)
        .unwrap_or_else(|| panic!("no token"));
    let kubeconfig = audit.path().join("eru-operator.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {url}\n    \
             certificate-authority-data: {ca}\nusers:\n- name: eru-operator\n  user:\n    token: {token}\n\
             contexts:\n- name: eru-operator\n  context:\n    cluster: e2e\n    user: eru-operator\n\
             current-context: eru-operator\n",
            url = server.url(),
            ca = base64::engine::general_purpose::STANDARD.encode(server.ca_pem()),
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    // `run --local --namespace X`: the operator's process, as that ServiceAccount.
    let log = audit.path().join("operator.log");
    let mut operator = Command::new(&binary)
        .args([
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
            "--namespace",
            &ns,
            "--health-probe-bind-address=0",
        ])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}")))
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));

    let sample = deploy.join("samples/mtsre.meitu.com_v1_eru.yaml");
    let (ok, out) = kubectl(
        &server,
        &["apply", "-n", &ns, "-f", &sample.to_string_lossy()],
    );
    assert!(ok, "kubectl apply sample: {out}");
    let deadline = Instant::now() + CONVERGE;
    let mut last = String::new();
    loop {
        let (_, out) = kubectl(
            &server,
            &[
                "get",
                "eru",
                "eru-sample",
                "-n",
                &ns,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.observedGeneration}",
            ],
        );
        if out.trim() == "True/1" {
            break;
        }
        last = out;
        assert!(
            Instant::now() < deadline,
            "the sample never became Ready: {last}\noperator log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        if let Ok(Some(status)) = operator.try_wait() {
            panic!(
                "the operator exited ({status}):\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = last;
    let _ = operator.kill();
    let _ = operator.wait();

    // Least privilege: every request allowed, every rule used.
    let (mut used, denied) = audit_requests(&audit_log);
    used.retain(|(_, resource, _)| resource != "selfsubjectreviews");
    assert!(
        denied.is_empty(),
        "requests denied to the operator: {denied:?}"
    );
    let role =
        std::fs::read_to_string(project.join("deploy/role.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(role.contains("kind: ClusterRole\n"), "{role}");
    let rules = rbac_rules(&role).unwrap_or_else(|e| panic!("role.yaml: {e}"));
    let unused: Vec<_> = rules.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "rules of role.yaml never needed: {unused:?}\nused: {used:?}"
    );
    let beyond: Vec<_> = used.difference(&rules).collect();
    assert!(beyond.is_empty(), "requests outside role.yaml: {beyond:?}");
    eprintln!("[e2e] the scaffolded operator's requests, all allowed: {used:?}");
}
