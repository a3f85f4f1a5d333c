//! The seed-003 workflow through the `kube-codegen` binary: `new`, `add api`, `add controller`,
//! `add webhook`, the generated project's own `cargo test` (its controller sets `Ready` on the
//! in-memory API server, its webhooks default, validate and convert), `cargo fmt --check` and
//! `cargo clippy -D warnings` on it; and every bad input refused with a clear error and nothing
//! written.
//!
//! The project is built with this workspace's `Cargo.lock` and target directory, so only the
//! new crate (and dependencies whose features differ) compile.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kube_codegen(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running kube-codegen: {e}"))
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = kube_codegen(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "kube-codegen {args:?} failed:\n{stderr}"
    );
    stderr
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            if path.is_dir() {
                // folders count too: an empty one left behind is something written
                out.insert(path.join(""), Vec::new());
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(path, bytes);
            }
        }
    }
    out
}

fn new_project(parent: &Path) -> PathBuf {
    let path = workspace();
    let path = path.to_str().unwrap_or_default();
    ok(
        parent,
        &[
            "new",
            "eru-operator",
            "--domain",
            "meitu.com",
            "--kube-codegen-path",
            path,
        ],
    );
    parent.join("eru-operator")
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (args, want) in [
        (
            vec!["new", "Eru_Operator"],
            "error: NAME \"Eru_Operator\": a lowercase RFC 1123 label",
        ),
        (
            vec!["new", "1op"],
            "error: NAME \"1op\": a crate name must start with a letter",
        ),
        (
            vec!["new", "op", "--colour"],
            "unexpected argument '--colour'",
        ),
        (
            vec!["new", "op", "--domain", "Meitu.com"],
            "error: --domain \"Meitu.com\"",
        ),
    ] {
        let out = kube_codegen(tmp.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(snapshot(tmp.path()).is_empty(), "{args:?} wrote files");
    }

    let project = new_project(tmp.path());
    ok(
        &project,
        &[
            "add",
            "api",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=Eru",
        ],
    );
    let before = snapshot(&project);
    for (args, want) in [
        (
            vec!["add", "api", "--api-version=v1", "--kind=Eru"],
            "error: --api-version \"v1\": expected GROUP/VERSION",
        ),
        (
            vec!["add", "api", "--api-version=mtsre/v1", "--kind=Eru"],
            "must contain a dot",
        ),
        (
            vec![
                "add",
                "api",
                "--api-version=mtsre.meitu.com/one",
                "--kind=Eru",
            ],
            "error: --api-version \"mtsre.meitu.com/one\": version \"one\"",
        ),
        (
            vec![
                "add",
                "api",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=eru",
            ],
            "error: --kind \"eru\": expected an UpperCamelCase name",
        ),
        (
            vec![
                "add",
                "api",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=Eru",
            ],
            "error: --kind Eru: mtsre.meitu.com/v1 Eru exists already",
        ),
        (
            vec![
                "add",
                "api",
                "--api-version=mtsre.example.com/v1",
                "--kind=Other",
            ],
            "its folder src/pkg/apis/mtsre holds the group mtsre.meitu.com already",
        ),
        (
            vec![
                "add",
                "controller",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=Nope",
            ],
            "is not an API of this project; add it first",
        ),
        (
            vec![
                "add",
                "api",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=X",
                "--bogus",
            ],
            "unexpected argument '--bogus'",
        ),
        (
            vec![
                "add",
                "webhook",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=Eru",
            ],
            "error: add webhook: give at least one of --defaulting, --validation, --conversion",
        ),
        (
            vec![
                "add",
                "webhook",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=Nope",
                "--validation",
            ],
            "error: --kind Nope: mtsre.meitu.com/v1 Nope is not an API of this project",
        ),
        (
            vec![
                "add",
                "webhook",
                "--api-version=mtsre.meitu.com/v1",
                "--kind=Eru",
                "--conversion",
            ],
            "error: --conversion: mtsre.meitu.com/v1 Eru is the only version of Eru",
        ),
    ] {
        let out = kube_codegen(&project, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(snapshot(&project), before, "{args:?} changed the project");
    }

    // A type the generator refuses is reported at its file and line, and the command is
    // undone: the project is as it was.
    let types = project.join("src/pkg/apis/mtsre/v1/eru_types.rs");
    let original = std::fs::read_to_string(&types).unwrap_or_default();
    std::fs::write(
        &types,
        original.replace("// +kubebuilder:storageversion\n", ""),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let before = snapshot(&project);
    let out = kube_codegen(
        &project,
        &[
            "add",
            "api",
            "--api-version=mtsre.meitu.com/v2",
            "--kind=Eru",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("eru_types.rs:") && stderr.contains("+kubebuilder:storageversion"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&project),
        before,
        "a failed add api left files behind"
    );

    // `new` into a non-empty folder needs --force.
    let out = kube_codegen(tmp.path(), &["new", "eru-operator"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the folder exists and is not empty (pass --force"),
    );

    // RBAC: a bad marker names its file and line; --verify-only sees a stale role.yaml.
    let main = project.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap_or_default();
    std::fs::write(
        &main,
        format!("{text}// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=fly\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = kube_codegen(&project, &["rbac"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let line = text.lines().count() + 1;
    assert!(
        stderr.contains(&format!(
            "main.rs:{line}:1: error: +kubebuilder:rbac: unknown verb \"fly\""
        )),
        "{stderr}"
    );
    std::fs::write(
        &main,
        format!("{text}// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = kube_codegen(&project, &["rbac", "--verify-only"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("role.yaml: out of date"));
    ok(&project, &["rbac"]);
    let role = std::fs::read_to_string(project.join("deploy/role.yaml")).unwrap_or_default();
    assert!(
        role.contains("  - deployments\n  verbs:\n  - get\n"),
        "{role}"
    );
    ok(&project, &["manifests", "--verify-only"]);

    // Webhooks: once per kind and version; a bad marker names its file, line and cause;
    // --verify-only sees a stale deploy/webhooks.yaml.
    let webhook = [
        "add",
        "webhook",
        "--api-version=mtsre.meitu.com/v1",
        "--kind=Eru",
        "--validation",
    ];
    ok(&project, &webhook);
    let manifests =
        std::fs::read_to_string(project.join("deploy/webhooks.yaml")).unwrap_or_default();
    assert!(
        manifests.contains("kind: ValidatingWebhookConfiguration\n")
            && manifests.contains("      path: /validate-mtsre-meitu-com-v1-eru\n")
            && manifests.contains("  name: veru-v1.kb.io\n")
            && !manifests.contains("MutatingWebhookConfiguration"),
        "{manifests}"
    );
    let before = snapshot(&project);
    let out = kube_codegen(&project, &webhook);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "error: --kind Eru: mtsre.meitu.com/v1 Eru has webhooks already (./src/webhook/mtsre_v1_eru.rs)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot(&project), before, "a refused add webhook wrote");
    let file = project.join("src/webhook/mtsre_v1_eru.rs");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let (line, _) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("// +kubebuilder:webhook:"))
        .unwrap_or_else(|| panic!("no marker in {text}"));
    std::fs::write(&file, text.replace("sideEffects=None", "sideEffects=Some"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = kube_codegen(&project, &["manifests"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "mtsre_v1_eru.rs:{}:1: error: +kubebuilder:webhook: sideEffects: \"Some\" (expected one of None, NoneOnDryRun)",
            line + 1
        )),
        "{stderr}"
    );
    std::fs::write(
        &file,
        text.replace("verbs=create;update", "verbs=create;update;delete"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = kube_codegen(&project, &["manifests", "--verify-only"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("webhooks.yaml: out of date"));
    ok(&project, &["manifests"]);
    let manifests =
        std::fs::read_to_string(project.join("deploy/webhooks.yaml")).unwrap_or_default();
    assert!(manifests.contains("    - DELETE\n"), "{manifests}");
    ok(&project, &["manifests", "--verify-only"]);
}

fn cargo(dir: &Path, args: &[&str]) {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let out = kube_codegen::scaffold::cargo_command()
        .current_dir(dir)
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap_or_else(|e| panic!("running cargo: {e}"));
    assert!(
        out.status.success(),
        "cargo {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The seed's story: a namespaced kind with its controller, a cluster-scoped kind with its
/// controller, a second version, a second group, webhooks (defaulting, validation and
/// conversion between the two versions; validation of the cluster-scoped kind); the project
/// builds, is rustfmt- and clippy-clean, and its generated tests pass.
#[test]
fn the_seed_workflow_builds_and_its_controllers_set_ready() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let project = new_project(tmp.path());
    for args in [
        vec![
            "add",
            "api",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=Eru",
        ],
        vec![
            "add",
            "controller",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=Eru",
        ],
        vec![
            "add",
            "api",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=ClusterThing",
            "--namespaced=false",
        ],
        vec![
            "add",
            "controller",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=ClusterThing",
        ],
        vec![
            "add",
            "api",
            "--api-version=mtsre.meitu.com/v2",
            "--kind=Eru",
        ],
        vec![
            "add",
            "api",
            "--api-version=other.meitu.com/v1alpha1",
            "--kind=Widget",
        ],
        vec![
            "add",
            "webhook",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=Eru",
            "--defaulting",
            "--validation",
            "--conversion",
        ],
        vec![
            "add",
            "webhook",
            "--api-version=mtsre.meitu.com/v1",
            "--kind=ClusterThing",
            "--validation",
        ],
    ] {
        let mut args = args;
        args.push("--quiet");
        let stderr = ok(&project, &args);
        assert!(stderr.is_empty(), "--quiet printed: {stderr}");
    }
    for file in [
        "deploy/crds/mtsre.meitu.com_erus_crd.yaml",
        "deploy/crds/mtsre.meitu.com_clusterthings_crd.yaml",
        "deploy/crds/other.meitu.com_widgets_crd.yaml",
        "deploy/samples/mtsre.meitu.com_v1_eru.yaml",
        "deploy/service_account.yaml",
        "deploy/role.yaml",
        "deploy/role_binding.yaml",
        "deploy/operator.yaml",
        "deploy/webhooks.yaml",
        "src/webhook/mtsre_v1_eru.rs",
        "src/webhook/mtsre_v1_cluster_thing.rs",
        "tests/mtsre_v1_eru_webhook.rs",
        "tests/mtsre_v1_cluster_thing_webhook.rs",
        "Dockerfile",
        "README.md",
        "PROJECT",
    ] {
        assert!(project.join(file).is_file(), "{file} missing");
    }
    let crd = std::fs::read_to_string(project.join("deploy/crds/mtsre.meitu.com_erus_crd.yaml"))
        .unwrap_or_default();
    assert!(
        crd.contains("name: v1\n") && crd.contains("name: v2\n"),
        "{crd}"
    );
    assert!(
        crd.contains("  conversion:\n    strategy: Webhook\n"),
        "{crd}"
    );
    let manifests =
        std::fs::read_to_string(project.join("deploy/webhooks.yaml")).unwrap_or_default();
    for name in ["meru-v1.kb.io", "veru-v1.kb.io", "vclusterthing-v1.kb.io"] {
        assert!(
            manifests.contains(&format!("  name: {name}\n")),
            "{manifests}"
        );
    }
    let record = std::fs::read_to_string(project.join("PROJECT")).unwrap_or_default();
    assert!(
        record.contains("  webhooks:\n    conversion: true\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"),
        "{record}"
    );
    let role = std::fs::read_to_string(project.join("deploy/role.yaml")).unwrap_or_default();
    for rule in [
        "  - erus\n",
        "  - erus/status\n",
        "  - clusterthings/status\n",
        "  - leases\n",
    ] {
        assert!(role.contains(rule), "role.yaml lacks {rule}: {role}");
    }
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock"))
        .unwrap_or_else(|e| panic!("{e}"));
    cargo(&project, &["fmt", "--check"]);
    cargo(&project, &["test"]);
    cargo(
        &project,
        &["clippy", "--all-targets", "--", "-D", "warnings"],
    );

    // The generated code in a private module: a crate uses part of it, and is not warned
    // about the rest (register constants, extract functions, listers it does not call).
    let lib = project.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap_or_default();
    assert!(text.contains("\npub mod pkg;\n"), "{text}");
    std::fs::write(&lib, text.replace("\npub mod pkg;\n", "\nmod pkg;\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    cargo(&project, &["rustc", "--lib", "--", "-D", "warnings"]);
}
