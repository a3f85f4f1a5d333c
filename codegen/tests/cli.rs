//! The `kube-codegen` binary: bad input gives one `path:line:col: error: …` line, exit 1, no
//! panic, and nothing written; `--verify-only` reports drift; `--help` documents every flag.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MOD_RS: &str = "// +groupName=demo.example.com\n// +k8s:deepcopy-gen=package\n\n//! Demo.\n\nmod types;\nmod zz_generated_deepcopy;\nmod zz_generated_register;\npub use types::*;\n";

const TYPES_RS: &str = r#"use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

/// A demo.
pub struct Demo {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Status.
    pub status: Option<String>,
}

/// Demos.
pub struct DemoList {
    /// Metadata.
    pub metadata: ListMeta,
    /// Items.
    pub items: Vec<Demo>,
}
"#;

/// A scratch project: `apis/demo/v1/{mod,types}.rs` and an output dir `client`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
        };
        p.write("apis/demo/v1/mod.rs", MOD_RS);
        p.write("apis/demo/v1/types.rs", TYPES_RS);
        p
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn run(&self, extra: &[&str]) -> Output {
        self.run_cmd("all", extra)
    }

    fn run_cmd(&self, subcommand: &str, extra: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kube-codegen"));
        cmd.current_dir(self.dir.path()).args([
            subcommand,
            "--apis-dir",
            "apis",
            "--output-dir",
            "client",
        ]);
        cmd.args(extra);
        cmd.output().unwrap()
    }

    /// Every file under the project, with content, to prove nothing was written.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            let Ok(rd) = fs::read_dir(d) else { return };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.push((p.clone(), fs::read(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), &mut out);
        out.sort();
        out
    }
}

/// Runs with `extra`, expects exit 1, one error line starting with `prefix` and containing
/// `cause`, no panic, and no file changed.
fn fails(p: &Project, extra: &[&str], prefix: &str, cause: &str) {
    let before = p.snapshot();
    let out = p.run(extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {stderr}");
    assert!(
        lines[0].starts_with(prefix),
        "{:?} should start with {prefix:?}",
        lines[0]
    );
    assert!(lines[0].contains(": error: "), "{stderr}");
    assert!(
        lines[0].contains(cause),
        "{:?} should mention {cause:?}",
        lines[0]
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    assert_eq!(before, p.snapshot(), "nothing may be written");
}

fn with_types(types: &str) -> Project {
    let p = Project::new();
    p.write("apis/demo/v1/types.rs", types);
    p
}

#[test]
fn good_input_generates_and_verifies() {
    let p = Project::new();
    let out = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.path("apis/demo/v1/zz_generated_deepcopy.rs").exists());
    assert!(
        p.path("client/clientset/versioned/typed/demo/v1/demo.rs")
            .exists()
    );
    let verify = p.run(&["--verify-only"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[test]
fn verify_only_reports_stale_output_with_a_diff() {
    let p = Project::new();
    assert!(p.run(&[]).status.success());
    let file = "client/clientset/versioned/typed/demo/v1/demo.rs";
    let text = fs::read_to_string(p.path(file)).unwrap();
    p.write(
        file,
        &text.replace("pub async fn get(", "pub async fn fetch("),
    );
    let before = p.snapshot();
    let out = p.run(&["--verify-only"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("out of date (1 file(s) differ)"),
        "{stderr}"
    );
    assert!(stderr.contains("-    pub async fn fetch("), "{stderr}");
    assert!(stderr.contains("+    pub async fn get("), "{stderr}");
    assert_eq!(before, p.snapshot(), "--verify-only never writes");
}

#[test]
fn unparseable_rust() {
    let p = with_types("pub struct Demo {\n    a: u8,,\n}\n");
    fails(&p, &[], "apis/demo/v1/types.rs:2:", "cannot parse Rust");
}

#[test]
fn unknown_genclient_option() {
    let p = with_types(&TYPES_RS.replace(
        "// +genclient\n",
        "// +genclient\n// +genclient:nonNamespace\n",
    ));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:4:4",
        "unknown tag +genclient:nonNamespace",
    );
}

#[test]
fn no_verbs_with_only_verbs() {
    let p = with_types(&TYPES_RS.replace(
        "// +genclient\n",
        "// +genclient\n// +genclient:noVerbs\n// +genclient:onlyVerbs=get\n",
    ));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:4:4",
        "noVerbs conflicts with +genclient:onlyVerbs",
    );
}

#[test]
fn unknown_verb() {
    let p = with_types(&TYPES_RS.replace(
        "// +genclient\n",
        "// +genclient\n// +genclient:skipVerbs=get,frobnicate\n",
    ));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:4:4",
        "unknown verb \"frobnicate\"",
    );
}

#[test]
fn no_group_name_tag() {
    let p = Project::new();
    p.write(
        "apis/demo/v1/mod.rs",
        &MOD_RS.replace("// +groupName=demo.example.com\n", ""),
    );
    fails(
        &p,
        &[],
        "apis/demo/v1/mod.rs:1:1",
        "missing +groupName= tag",
    );
}

#[test]
fn empty_group_name_is_the_core_group() {
    let p = Project::new();
    p.write(
        "apis/demo/v1/mod.rs",
        &MOD_RS.replace("demo.example.com", ""),
    );
    let out = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deepcopy = fs::read_to_string(p.path("apis/demo/v1/zz_generated_deepcopy.rs")).unwrap();
    assert!(
        deepcopy.contains(r#"const API_VERSION: &'static str = "v1";"#),
        "{deepcopy}"
    );
}

#[test]
fn genclient_type_without_object_meta() {
    let p = with_types(&TYPES_RS.replace("pub metadata: ObjectMeta,", "pub meta: ObjectMeta,"));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:7:12",
        "needs a `metadata: ObjectMeta` field",
    );
}

#[test]
fn two_kinds_with_the_same_plural() {
    let second = TYPES_RS
        .replace("pub struct Demo {", "pub struct Other {")
        .replace("pub struct DemoList", "pub struct OtherList")
        .replace("Vec<Demo>", "Vec<Other>")
        .replace("// +genclient\n", "// +genclient\n// +resourceName=demos\n")
        .replace(
            "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};\n",
            "",
        );
    let p = with_types(&format!("{TYPES_RS}\n{second}"));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:",
        "same plural resource \"demos\"",
    );
}

#[test]
fn a_plural_exception_that_is_no_name() {
    let p = Project::new();
    let before = p.snapshot();
    for bad in ["Demo:9lives", "Demo:my-demos", "Demo"] {
        let out = p.run(&["--plural-exceptions", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad}: {stderr}");
        assert!(
            stderr.starts_with("error: --plural-exceptions: invalid plural exception"),
            "{bad}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert_eq!(before, p.snapshot());
}

#[test]
fn a_group_folder_starting_with_a_digit_becomes_a_module_name() {
    let p = Project::new();
    fs::rename(p.path("apis/demo"), p.path("apis/3d")).unwrap();
    let out = p.run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let clientset = fs::read_to_string(p.path("client/clientset/versioned/typed/mod.rs")).unwrap();
    assert!(clientset.contains("pub mod _3d;"), "{clientset}");
    syn::parse_file(&clientset).unwrap();
}

#[test]
fn missing_apis_dir() {
    let p = Project::new();
    let before = p.snapshot();
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(p.dir.path())
        .args(["all", "--apis-dir", "nowhere", "--output-dir", "client"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "nowhere:1:1: error: apis directory does not exist or is not a directory"
    );
    assert_eq!(before, p.snapshot());
}

#[test]
fn unwritable_output_dir() {
    let p = Project::new();
    // A regular file where a folder must go: no user, not even root, can create it.
    p.write("blocked", "a file, not a folder");
    let before = p.snapshot();
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(p.dir.path())
        .args([
            "all",
            "--apis-dir",
            "apis",
            "--output-dir",
            "blocked/client",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("blocked"), "{stderr}");
    assert!(
        stderr.contains(":1:1: error: cannot create output directory"),
        "{stderr}"
    );
    assert_eq!(
        before,
        p.snapshot(),
        "the deepcopy files beside the types were not written either"
    );
}

#[test]
fn non_utf8_file() {
    let p = Project::new();
    let mut bytes = b"// ok\npub struct A;\n// caf".to_vec();
    bytes.extend([0xE9, b'\n']);
    fs::write(p.path("apis/demo/v1/extra.rs"), bytes).unwrap();
    fails(
        &p,
        &[],
        "apis/demo/v1/extra.rs:3:7",
        "file is not valid UTF-8",
    );
}

#[test]
fn earlier_output_survives_a_failed_run() {
    let p = Project::new();
    assert!(p.run(&[]).status.success());
    let before = p.snapshot();
    p.write(
        "apis/demo/v1/types.rs",
        &TYPES_RS.replace("// +genclient\n", "// +genclient=false\n"),
    );
    let out = p.run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let after: Vec<_> = p
        .snapshot()
        .into_iter()
        .filter(|(f, _)| !f.ends_with("types.rs"))
        .collect();
    let before: Vec<_> = before
        .into_iter()
        .filter(|(f, _)| !f.ends_with("types.rs"))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn help_documents_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(["all", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--apis-dir",
        "--groups",
        "--output-dir",
        "--apis-module",
        "--output-module",
        "--runtime-crate",
        "--header-file",
        "--plural-exceptions",
        "--crd-dir",
        "--crd-file-name",
        "--fake-clientset",
        "--apply-configurations",
        "--apply-configurations-feature",
        "--external-applyconfigurations",
        "--crd-impls",
        "--verify-only",
        "--verbose",
    ] {
        let line = help
            .lines()
            .find(|l| l.contains(flag))
            .unwrap_or_else(|| panic!("{flag} missing:\n{help}"));
        let idx = help.find(line).unwrap();
        let after = &help[idx + line.len()..];
        // Beside the flag, or (clap's layout for long flags) on the line below it.
        let below = after.strip_prefix('\n').and_then(|a| a.lines().next());
        let described = line.trim().len() > flag.len() + 12
            || below.is_some_and(|l| !l.trim().is_empty() && !l.trim_start().starts_with('-'));
        assert!(described, "{flag} has no description:\n{help}");
    }
    let top = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .arg("--help")
        .output()
        .unwrap();
    let top = String::from_utf8_lossy(&top.stdout);
    for cmd in [
        "all", "deepcopy", "register", "client", "lister", "informer", "crd",
    ] {
        assert!(top.contains(cmd), "{cmd} missing:\n{top}");
    }
}

#[test]
fn crd_of_a_type_the_schema_cannot_express() {
    let p = with_types(&TYPES_RS.replace(
        "pub status: Option<String>,",
        "pub status: Option<other_pkg::Status>,",
    ));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:11:9",
        "field `Demo.status`: type `other_pkg::Status` is not declared in this package",
    );
    let p = with_types(&TYPES_RS.replace(
        "pub status: Option<String>,",
        "pub status: Option<(i32, String)>,",
    ));
    fails(
        &p,
        &["--crd-dir", "manifests"],
        "apis/demo/v1/types.rs:11:9",
        "tuple",
    );
    // The crd generator alone fails the same way.
    let out = p.run_cmd("crd", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!p.path("crd").exists() && !p.path("apis/demo/v1/zz_generated_crd.rs").exists());
}

#[test]
fn crd_bad_marker_points_at_the_marker() {
    let p = with_types(&TYPES_RS.replace(
        "    /// Status.\n",
        "    /// Status.\n    // +kubebuilder:validation:Minimum=1\n",
    ));
    fails(
        &p,
        &[],
        "apis/demo/v1/types.rs:11:8",
        "+kubebuilder:validation:Minimum: applies to integer or number fields",
    );
}

#[test]
fn crd_manifests_are_written_verified_and_renamed() {
    let p = Project::new();
    p.write(
        "apis/demo/v1/mod.rs",
        &MOD_RS.replace("demo.example.com", "demo.k8s.io"),
    );
    let out = p.run(&["--crd-dir", "manifests"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("WARN") && stderr.contains("api-approved.kubernetes.io"),
        "the default approval is announced: {stderr}"
    );
    let yaml = std::fs::read_to_string(p.path("manifests/demos.demo.k8s.io.yaml")).unwrap();
    assert!(
        yaml.starts_with("# @generated by kube-codegen. DO NOT EDIT.\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("    api-approved.kubernetes.io: unapproved, experimental-only\n"),
        "{yaml}"
    );
    assert!(yaml.contains("  name: demos.demo.k8s.io\n"), "{yaml}");
    assert!(p.path("apis/demo/v1/zz_generated_crd.rs").exists());
    let verify = p.run(&["--crd-dir", "manifests", "--verify-only"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );

    // A drifted manifest is reported; a renamed one replaces the old (generated) file.
    p.write(
        "manifests/demos.demo.k8s.io.yaml",
        &yaml.replace("Namespaced", "Cluster"),
    );
    let verify = p.run(&["--crd-dir", "manifests", "--verify-only"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&verify.stderr).contains("+  scope: Namespaced"));
    p.write("manifests/hand-written.yaml", "kind: Namespace\n");
    p.write(
        "manifests/others.other.example.com.yaml",
        "# @generated by kube-codegen. DO NOT EDIT.\nspec:\n  group: other.example.com\n",
    );
    let out = p.run_cmd(
        "crd",
        &[
            "--crd-dir",
            "manifests",
            "--crd-file-name",
            "{singular}.yaml",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.path("manifests/demo.yaml").exists());
    assert!(
        !p.path("manifests/demos.demo.k8s.io.yaml").exists(),
        "stale manifest removed"
    );
    assert!(
        p.path("manifests/hand-written.yaml").exists(),
        "hand-written files stay"
    );
    assert!(
        p.path("manifests/others.other.example.com.yaml").exists(),
        "CRDs of groups this run does not generate stay"
    );

    let out = p.run_cmd("crd", &["--crd-file-name", "{plural}/{nope}.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown placeholder"));
}

/// The apply-configuration stage reports what it cannot follow at the field, with the cause.
#[test]
fn apply_configuration_of_a_field_it_cannot_follow() {
    for (field, cause) in [
        (
            "    /// Status.\n    #[serde(with = \"x\")]\n    pub status: Option<String>,",
            "#[serde(with)] changes the serialized form",
        ),
        (
            "    /// Status.\n    pub status: Option<Unknown>,",
            "cannot resolve type `Unknown`",
        ),
        (
            "    /// Status.\n    pub status: Option<&'static str>,",
            "is not supported (use a named type)",
        ),
    ] {
        let p = Project::new();
        p.write(
            "apis/demo/v1/types.rs",
            &TYPES_RS.replace("    /// Status.\n    pub status: Option<String>,", field),
        );
        let out = p.run_cmd("applyconfiguration", &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with("apis/demo/v1/types.rs:")
                && stderr.contains(": error: apply configuration of field `Demo.status`: "),
            "{stderr}"
        );
        assert!(stderr.contains(cause), "{cause}: {stderr}");
    }
}

#[test]
fn the_fake_clientset_installs_the_crds_when_their_impls_exist() {
    let fake = "client/clientset/versioned/fake.rs";
    // One run with the crd generator: the fake seeds each kind's CRD.
    let p = Project::new();
    let out = p.run(&["--groups", "demo:v1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(p.path(fake)).unwrap();
    assert!(text.contains("pub fn crds()"), "{text}");
    assert!(
        text.contains("Self::crds()?.into_iter().chain(objects)"),
        "{text}"
    );

    // The client alone: no CRD impls to call, so none are installed …
    let q = Project::new();
    let out = q.run_cmd("client", &["--groups", "demo:v1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(q.path(fake)).unwrap();
    assert!(!text.contains("crds()"), "{text}");
    // … unless told that another run writes them; the client run writes no CRD file itself.
    let out = q.run_cmd("client", &["--groups", "demo:v1", "--crd-impls", "true"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(q.path(fake)).unwrap();
    assert!(text.contains("pub fn crds()"), "{text}");
    assert!(
        !q.path("client/crd").exists(),
        "the client run wrote CRD files"
    );
}

/// `--external-applyconfigurations`: built-in types get kube-codegen-kubernetes'
/// configurations with the preset, an exact type's rule wins over a module's, a longer module
/// over a shorter one, and unmapped types stay themselves.
#[test]
fn external_apply_configurations_map_embedded_types() {
    let p = Project::new();
    p.write(
        "apis/demo/v1/types.rs",
        &TYPES_RS.replace(
            "    /// Status.\n    pub status: Option<String>,",
            "    /// A template.\n    pub template: Option<k8s_openapi::api::core::v1::PodTemplateSpec>,\n\
             \x20   /// Tolerations.\n    pub tolerations: Vec<k8s_openapi::api::core::v1::Toleration>,\n\
             \x20   /// A policy.\n    pub policy: Option<k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec>,\n\
             \x20   /// A node.\n    pub node: Option<::kube_codegen_kubernetes::apis::core::v1::Node>,\n\
             \x20   /// A quantity.\n    pub size: Option<k8s_openapi::apimachinery::pkg::api::resource::Quantity>,",
        ),
    );
    let out = p.run_cmd(
        "applyconfiguration",
        &[
            "--external-applyconfigurations",
            "kube-codegen-kubernetes",
            "--external-applyconfigurations",
            "k8s_openapi::api::core::v1::Toleration=::mine::MyTolerationApplyConfiguration,k8s_openapi::api::policy::*=::policy_acs",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = fs::read_to_string(p.path("client/applyconfiguration/demo/v1/demo.rs")).unwrap();
    let flat: String = text.split_whitespace().collect();
    for want in [
        "::kube_codegen_kubernetes::applyconfiguration::core::v1::PodTemplateSpecApplyConfiguration",
        "::std::vec::Vec<::mine::MyTolerationApplyConfiguration>",
        "::policy_acs::v1::PodDisruptionBudgetSpecApplyConfiguration",
        "::kube_codegen_kubernetes::applyconfiguration::core::v1::NodeApplyConfiguration",
        "::kube_codegen_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity",
    ] {
        assert!(flat.contains(want), "{want} missing:\n{text}");
    }
}

/// A bad `--external-applyconfigurations` entry is one error line naming the flag, the entry
/// and the cause, and nothing is written.
#[test]
fn a_bad_external_apply_configuration_names_the_flag_and_the_entry() {
    let p = Project::new();
    let before = p.snapshot();
    for (bad, cause) in [
        (
            "k8s.io/api/core/v1.PodSpec:k8s.io/client-go/applyconfigurations/core/v1",
            "expected <type path>=<apply configuration module>",
        ),
        ("k8s_openapi::api::core::v1=::acs", "names no type"),
        (
            "k8s_openapi::api::*=::acs::PodApplyConfiguration",
            "is a type, but",
        ),
        ("a::B=not a path", "is not a Rust path"),
        ("a::B=::x,,c::D=::y", "has an empty entry"),
        ("a::B=::x,a::B=::y", "is mapped twice"),
        ("", "is empty"),
    ] {
        let out = p.run(&["--external-applyconfigurations", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad}: {stderr}");
        assert!(
            stderr.starts_with("error: --external-applyconfigurations: "),
            "{bad}: {stderr}"
        );
        assert!(stderr.contains(cause), "{bad}: {cause}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert_eq!(before, p.snapshot());
}

#[test]
fn apply_configurations_and_apply_verbs_can_sit_behind_a_feature() {
    let client = "client/clientset/versioned/typed/demo/v1/demo.rs";
    let configs = "client/applyconfiguration/mod.rs";
    // Without the flag: ungated, as before.
    let p = Project::new();
    let out = p.run(&["--groups", "demo:v1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(p.path(client)).unwrap();
    assert!(text.contains("pub async fn apply("), "{text}");
    assert!(!text.contains("cfg(feature"), "{text}");
    assert!(
        !fs::read_to_string(p.path(configs))
            .unwrap()
            .contains("cfg(")
    );

    // With it: the whole configuration tree and each apply verb, and nothing else.
    let q = Project::new();
    let out = q.run(&[
        "--groups",
        "demo:v1",
        "--apply-configurations-feature",
        "apply",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        fs::read_to_string(q.path(configs))
            .unwrap()
            .contains("#![cfg(feature = \"apply\")]")
    );
    let text = fs::read_to_string(q.path(client)).unwrap();
    let gates = text.matches("#[cfg(feature = \"apply\")]").count();
    let applies = text.matches("pub async fn apply").count();
    assert!(applies >= 2, "{text}");
    assert_eq!(gates, applies, "{text}");
    for verb in ["pub async fn apply(", "pub async fn apply_status("] {
        let at = text.find(verb).unwrap();
        let before = &text[..at];
        let gate = before.rfind("#[cfg(feature = \"apply\")]").unwrap();
        assert!(
            !before[gate..].contains("pub async fn"),
            "{verb} is not gated:\n{text}"
        );
    }
}
