//! `scripts/kube_codegen.sh`, code-generator's `kube_codegen.sh` interface over kube-codegen:
//! sourced and called as a Go project's `hack/update-codegen.sh` calls the Go script, it
//! generates the crddemo example exactly as `scripts/generate-groups.sh all` does; its flags mean
//! what Go's do, and unknown ones are refused by name.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A crate in a temporary folder holding a copy of the crddemo API types (without generated
/// files): `<tmp>/Cargo.toml`, `<tmp>/src/pkg/apis/crddemo/v1/{mod,types}.rs`.
fn example_crate() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    copy_sources(
        &repo().join("example-crddemo/src/pkg/apis"),
        &dir.path().join("src/pkg/apis"),
    );
    dir
}

/// Copies `from` to `to`, leaving out generated files.
fn copy_sources(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            copy_sources(&e.path(), &to.join(&name));
        } else if !name.starts_with("zz_generated") {
            fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// Every file under `dir` (relative path → content).
fn tree(dir: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `script` with bash in `dir` after sourcing `scripts/kube_codegen.sh`.
fn sourced(dir: &Path, script: &str) -> Run {
    let full = format!(
        "source {}\n{script}",
        repo().join("scripts/kube_codegen.sh").display()
    );
    let out = Command::new("bash")
        .args(["-c", &full])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("bash: {e}"));
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn generates_the_example_exactly_as_generate_groups_does() {
    let header = repo().join("scripts/boilerplate.rs.txt");
    // scripts/update-codegen.sh's command for the example.
    let by_groups = example_crate();
    let status = Command::new(repo().join("scripts/generate-groups.sh"))
        .args([
            "all",
            "src/pkg/client",
            "src/pkg/apis",
            "crddemo:v1,v1alpha1",
        ])
        .arg("--header-file")
        .arg(&header)
        .args(["--crd-dir", "crd", "--crd-file-name", "{singular}.yaml"])
        .current_dir(by_groups.path())
        .status()
        .unwrap();
    assert!(status.success());

    // A Go project's hack/update-codegen.sh, with the source line changed (and gen_crd, which
    // Go projects get from controller-gen).
    let by_script = example_crate();
    let run = sourced(
        by_script.path(),
        &format!(
            "kube::codegen::gen_helpers --boilerplate {h} src/pkg/apis\n\
             kube::codegen::gen_crd --boilerplate {h} --crd-dir crd --crd-file-name '{{singular}}.yaml' src/pkg/apis\n\
             kube::codegen::gen_client --with-watch --with-applyconfig --output-dir src/pkg/client \
               --output-pkg crate::pkg::client --boilerplate {h} src/pkg/apis\n",
            h = header.display()
        ),
    );
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "Generating deepcopy code for 2 targets\n\
         Generating register code for 2 targets\n\
         Generating CRDs for 2 targets\n\
         Generating applyconfig code for 2 targets\n\
         Generating client code for 2 targets\n\
         Generating lister code for 2 targets\n\
         Generating informer code for 2 targets\n"
    );
    let (a, b) = (tree(by_groups.path()), tree(by_script.path()));
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, want), (_, got)) in a.iter().zip(&b) {
        assert_eq!(got, want, "{path}");
    }
    // … which is the checked-in example (scripts/verify-codegen.sh keeps it so).
    let example = repo().join("example-crddemo");
    let mut checked_in: Vec<String> = tree(&example.join("src/pkg"))
        .into_iter()
        .filter(|(_, text)| text.starts_with("// @generated by kube-codegen"))
        .map(|(p, _)| format!("src/pkg/{p}"))
        .collect();
    checked_in.push("crd/mydemo.yaml".into());
    checked_in.sort();
    let sources = tree(&example_crate().path().join("src")).len();
    assert_eq!(b.len(), checked_in.len() + sources + 1, "generated files");
    for path in &checked_in {
        let got = b.iter().find(|(p, _)| p == path).map(|(_, t)| t.as_str());
        let want = fs::read_to_string(example.join(path)).unwrap();
        assert_eq!(got, Some(want.as_str()), "{path}");
    }
}

#[test]
fn without_with_watch_only_the_clientset_is_generated() {
    let dir = example_crate();
    let run = sourced(
        dir.path(),
        "kube::codegen::gen_helpers src/pkg/apis >/dev/null\n\
         kube::codegen::gen_client --output-dir src/pkg/client src/pkg/apis",
    );
    assert!(run.ok, "{}", run.stderr);
    // v1 and v1alpha1.
    assert_eq!(run.stdout, "Generating client code for 2 targets\n");
    let client = dir.path().join("src/pkg/client");
    assert!(client.join("clientset/versioned/mod.rs").is_file());
    assert!(!client.join("listers").exists());
    assert!(!client.join("informers").exists());
    // --output-pkg was derived from where --output-dir sits in the crate.
    let root = fs::read_to_string(client.join("mod.rs")).unwrap();
    assert!(root.contains("pub mod clientset;"), "{root}");
    // No apply configurations: no apply verbs, as client-gen without an apply-configuration
    // package.
    let typed = client.join("clientset/versioned/typed/crddemo/v1/mydemo.rs");
    let code = fs::read_to_string(&typed).unwrap();
    assert!(!code.contains("pub async fn apply"), "{code}");
    assert!(!client.join("applyconfiguration").exists());

    let run = sourced(
        dir.path(),
        "kube::codegen::gen_client --with-applyconfig --output-dir src/pkg/client src/pkg/apis",
    );
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "Generating applyconfig code for 2 targets\nGenerating client code for 2 targets\n"
    );
    let code = fs::read_to_string(&typed).unwrap();
    assert!(
        code.contains("pub async fn apply(") && code.contains("MydemoApplyConfiguration"),
        "{code}"
    );
    assert!(
        client
            .join("applyconfiguration/crddemo/v1/mydemo.rs")
            .is_file()
    );
}

#[test]
fn plural_exceptions_and_one_input_api_reach_the_generator() {
    let dir = example_crate();
    // A second API group that --one-input-api leaves out.
    copy_sources(
        &repo().join("example-crddemo/src/pkg/apis/crddemo"),
        &dir.path().join("src/pkg/apis/other"),
    );
    let run = sourced(
        dir.path(),
        "kube::codegen::gen_client --plural-exceptions Mydemo:mydemoes --one-input-api crddemo \
           --output-dir src/pkg/client --output-pkg crate::pkg::client src/pkg/apis",
    );
    assert!(run.ok, "{}", run.stderr);
    let typed = dir.path().join("src/pkg/client/clientset/versioned/typed");
    let client = fs::read_to_string(typed.join("crddemo/v1/mod.rs")).unwrap();
    assert!(client.contains("fn mydemoes("), "{client}");
    assert!(!typed.join("other").exists(), "--one-input-api crddemo");
}

#[test]
fn unknown_flags_are_refused_with_the_flag_named() {
    let dir = example_crate();
    for function in [
        "gen_helpers",
        "gen_register",
        "gen_client --output-dir out",
        "gen_crd",
    ] {
        let run = sourced(
            dir.path(),
            &format!("kube::codegen::{function} --frobnicate src/pkg/apis"),
        );
        assert!(!run.ok, "{function}");
        assert_eq!(run.stderr, "unknown argument: --frobnicate\n", "{function}");
    }
}

#[test]
fn bad_arguments_are_errors_that_say_why() {
    let dir = example_crate();
    let cases = [
        (
            "kube::codegen::gen_client src/pkg/apis",
            "--output-dir is required\n",
        ),
        (
            "kube::codegen::gen_client --output-dir out",
            "input-dir argument is required\n",
        ),
        (
            "kube::codegen::gen_helpers src/pkg/apis other",
            "too many arguments: other (already have src/pkg/apis)\n",
        ),
        (
            "kube::codegen::gen_helpers nowhere",
            "input-dir nowhere: no such directory\n",
        ),
        (
            "kube::codegen::gen_client src/pkg/apis --output-dir",
            "--output-dir needs a value\n",
        ),
        (
            "kube::codegen::gen_client --output-dir src/pkg/client \
               --output-pkg k8s.io/sample-controller/pkg/generated src/pkg/apis",
            "--output-pkg k8s.io/sample-controller/pkg/generated: expected a Rust module path \
             such as crate::pkg::client (not a Go import path)\n",
        ),
        (
            "kube::codegen::gen_client --output-dir /tmp/kube-codegen-script-test src/pkg/apis",
            "--output-pkg is required (the Rust module path of /tmp/kube-codegen-script-test, \
             such as crate::pkg::client)\n",
        ),
        (
            "kube::codegen::gen_client --clientset-name=clients --output-dir out src/pkg/apis",
            "--clientset-name clients: kube-codegen writes this folder as \"clientset\" only\n",
        ),
        (
            "kube::codegen::gen_client --listers-name l --output-dir out src/pkg/apis",
            "--listers-name l: kube-codegen writes this folder as \"listers\" only\n",
        ),
        (
            "kube::codegen::gen_client --one-input-api nope --output-dir src/pkg/client src/pkg/apis",
            "--one-input-api nope: no such directory under src/pkg/apis\n",
        ),
        (
            "kube::codegen::gen_openapi --output-dir x --output-pkg y src/pkg/apis",
            "kube::codegen::gen_openapi: kube-codegen has no OpenAPI generator (CRD schemas come \
             from kube::codegen::gen_crd)\n",
        ),
    ];
    for (script, want) in cases {
        let run = sourced(dir.path(), script);
        assert!(!run.ok, "{script}");
        assert_eq!(run.stderr, want, "{script}");
    }
    assert!(
        !dir.path().join("out/clientset").exists(),
        "nothing generated"
    );
}

#[test]
fn applyconfig_externals_reach_the_generator_which_names_a_bad_entry() {
    let dir = example_crate();
    // Go's `<pkg>.<Type>:<pkg>` is not a Rust mapping: kube-codegen's error names its flag.
    let run = sourced(
        dir.path(),
        "kube::codegen::gen_client --with-applyconfig --applyconfig-externals a.B:c \
           --output-dir src/pkg/client --output-pkg crate::pkg::client src/pkg/apis",
    );
    assert!(!run.ok, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error: --external-applyconfigurations: \"a.B:c\": expected <type path>=<apply configuration module>"
        ),
        "{}",
        run.stderr
    );
    // A Rust mapping is passed on and accepted.
    let run = sourced(
        dir.path(),
        "kube::codegen::gen_client --with-applyconfig \
           --applyconfig-externals 'k8s_openapi::api::*=::kube_codegen_kubernetes::applyconfiguration' \
           --output-dir src/pkg/client --output-pkg crate::pkg::client src/pkg/apis",
    );
    assert!(run.ok, "{}", run.stderr);
}

#[test]
fn flags_only_go_uses_are_accepted_with_a_note() {
    let dir = example_crate();
    let run = sourced(
        dir.path(),
        "kube::codegen::gen_helpers --extra-peer-dir k8s.io/x src/pkg/apis\n\
         kube::codegen::gen_client --prefers-protobuf --applyconfig-openapi-schema s.json \
           --output-dir src/pkg/client src/pkg/apis",
    );
    assert!(run.ok, "{}", run.stderr);
    for flag in [
        "--extra-peer-dir",
        "--prefers-protobuf",
        "--applyconfig-openapi-schema",
    ] {
        assert!(
            run.stderr.contains(&format!(
                "note: {flag} is accepted for compatibility with k8s.io/code-generator and changes nothing here"
            )),
            "{flag}: {}",
            run.stderr
        );
    }
}
