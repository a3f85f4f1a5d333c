//! The `build.rs` front door end to end: `build.rs` runs `kube_codegen::Builder` over the
//! `single` fixture, and this crate pulls the output in with the runtime's include macros —
//! package code (deep copy, register, CRD) into the types' module, the client tree into its own.

use std::path::Path;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResourceExt;
use kube::api::{ListParams, PostParams};
use kube_codegen_runtime::labels::Selector;

/// The fixture's types, with the generated package code from `OUT_DIR`. (Private modules of a
/// test binary: what this test does not call is dead code here, unlike in a library.)
#[allow(missing_docs, dead_code)]
mod apis {
    pub mod api {
        pub mod v1 {
            include!("../fixtures/single/pkg/apis/api/v1/types.rs");
            kube_codegen_runtime::include_package!("api", "v1");
        }
    }
}

/// The client tree from `OUT_DIR`.
#[allow(dead_code, unused_imports)]
mod client {
    kube_codegen_runtime::include_client!();
}

use apis::api::v1::{ClusterTestType, TestType};
use client::clientset::versioned::fake;
use client::informers::externalversions::SharedInformerFactory;

fn test_type(name: &str, replicas: i32) -> TestType {
    TestType {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: apis::api::v1::TestTypeSpec { replicas },
        status: None,
    }
}

#[test]
fn the_builder_wrote_its_files_to_out_dir() {
    let out = Path::new(env!("OUT_DIR")).join("kube-codegen");
    for f in [
        "client.rs",
        "apis/api/v1.rs",
        "crd/testtypes.example.crd.code-generator.k8s.io.yaml",
        "crd/clustertesttypes.example.crd.code-generator.k8s.io.yaml",
    ] {
        assert!(out.join(f).is_file(), "{f} missing under {}", out.display());
    }
    // The package constants and the generated CRD of the included code.
    assert_eq!(
        apis::api::v1::GROUP_NAME,
        "example.crd.code-generator.k8s.io"
    );
    let crd = ClusterTestType::crd();
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("clustertesttypes.example.crd.code-generator.k8s.io")
    );
    assert_eq!(crd.spec.scope, "Cluster");
}

#[tokio::test]
async fn the_included_client_informers_and_listers_work() {
    let (cs, handle) = fake::Clientset::new([]).unwrap_or_else(|e| panic!("{e}"));
    let types = cs.example_v1().test_types("default");
    let created = types
        .create(&test_type("a", 2), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(created.spec.replicas, 2);
    assert!(
        created.metadata.uid.is_some(),
        "the fake API server assigned a uid"
    );
    let listed = types
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.items.len(), 1);
    assert_eq!(handle.actions().len(), 2, "create and list were recorded");

    let factory = SharedInformerFactory::new(&cs);
    let informer = factory.example().v1().test_types();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    let got = informer
        .lister()
        .namespaced("default")
        .get("a")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.spec.replicas, 2);
    assert_eq!(informer.lister().list(&Selector::everything()).len(), 1);
    factory.shutdown().await;
}

#[tokio::test]
async fn the_generated_factory_finds_its_kinds_by_resource_without_registering_them() {
    use kube::core::GroupVersionResource;
    use kube_codegen_runtime::factory::FactoryError;

    let (cs, _handle) = fake::Clientset::new([]).unwrap_or_else(|e| panic!("{e}"));
    let factory = SharedInformerFactory::new(&cs);
    assert!(
        factory.informer_ids().is_empty(),
        "nothing is created (or registered) up front"
    );
    let gvr = GroupVersionResource::gvr("example.crd.code-generator.k8s.io", "v1", "testtypes");
    let generic = factory.for_resource(&gvr).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(generic.gvr(), &gvr);
    let typed = generic
        .downcast::<TestType>()
        .expect("the informer of TestType");
    // The same informer the typed accessor hands out: one watch per kind.
    assert_eq!(factory.informer_ids().len(), 1);
    let _ = factory.example().v1().test_types();
    assert_eq!(factory.informer_ids().len(), 1);
    drop(typed);
    let cluster = GroupVersionResource::gvr(
        "example.crd.code-generator.k8s.io",
        "v1",
        "clustertesttypes",
    );
    assert!(
        factory
            .for_resource(&cluster)
            .unwrap_or_else(|e| panic!("{e}"))
            .downcast::<ClusterTestType>()
            .is_some()
    );
    let unknown = GroupVersionResource::gvr("example.com", "v1", "widgets");
    assert_eq!(
        factory.for_resource(&unknown).err(),
        Some(FactoryError::NoInformerFound(
            "example.com/v1, Resource=widgets".into()
        ))
    );
}

// ---------------------------------------------------------------------------------------------
// Reruns: the build.rs front door writes only what changed, and Cargo reruns it only when an
// input changed.

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
    for e in std::fs::read_dir(from)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else if !e.file_name().to_string_lossy().starts_with("zz_generated") {
            std::fs::copy(&p, to.join(e.file_name())).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Every file under `dir` with its modification time.
fn mtimes(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, std::time::SystemTime> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let m = e.metadata().and_then(|m| m.modified());
                out.insert(p, m.unwrap_or_else(|e| panic!("{e}")));
            }
        }
    }
    out
}

const SPEC_FIELD: &str = "    pub replicas: i32,\n";
const NEW_FIELD: &str = "    pub replicas: i32,\n    /// Added by the test.\n    #[serde(default)]\n    pub paused: bool,\n";

#[test]
fn an_edit_to_one_types_file_rewrites_only_the_files_it_changes() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let apis = tmp.path().join("apis");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crd/pkg/apis"),
        &apis,
    );
    let compile = || {
        kube_codegen::Builder::new()
            .apis_dir(&apis)
            .groups("example:v1 example2:v1 extensions:v1")
            .apis_module("crate::apis")
            .client_module("crate::client")
            .emit_rerun_if_changed(false)
            .out_dir(tmp.path().join("out"))
            .compile()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let files = compile();
    let out = tmp.path().join("out");
    let before = mtimes(&out);
    assert_eq!(before.len(), files.len(), "{files:?}");
    assert_eq!(compile(), files, "the same files");
    assert_eq!(
        mtimes(&out),
        before,
        "a run with no change rewrites nothing"
    );

    let types = apis.join("example2/v1/types.rs");
    let text = std::fs::read_to_string(&types).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains(SPEC_FIELD));
    std::fs::write(&types, text.replacen(SPEC_FIELD, NEW_FIELD, 1))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(compile(), files);
    let after = mtimes(&out);
    let changed: Vec<String> = before
        .iter()
        .filter(|(p, t)| after.get(*p) != Some(t))
        .map(|(p, _)| p.strip_prefix(&out).unwrap().display().to_string())
        .collect();
    // The new field changes the deep copy of example2's spec, its apply configuration and its
    // CRD (the schema), nothing else: no other package, no client, lister or informer file.
    assert_eq!(
        changed,
        [
            "kube-codegen/apis/example2/v1/zz_generated_deepcopy.rs",
            "kube-codegen/client/applyconfiguration/example2/v1/test_type_spec.rs",
            "kube-codegen/crd/testtypes.example.test.crd.code-generator.k8s.io.yaml",
        ],
        "{changed:#?}"
    );
}

/// A crate whose `build.rs` runs the builder (and counts its runs), built with Cargo: the build
/// script runs again only when an input of the generator changes.
#[test]
fn cargo_reruns_the_build_script_only_when_an_input_changes() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let krate = tmp.path().join("demo");
    copy_dir(
        &workspace.join("tests/fixtures/single/pkg/apis"),
        &krate.join("apis"),
    );
    let runs = tmp.path().join("runs.log");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rerun-demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[build-dependencies]\nkube-codegen = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
            workspace.join("codegen")
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        krate.join("build.rs"),
        format!(
            "use std::io::Write;\nfn main() {{\n    let mut log = std::fs::OpenOptions::new().create(true).append(true).open({runs:?}).unwrap();\n    writeln!(log, \"run\").unwrap();\n    kube_codegen::Builder::new().apis_dir(\"apis\").groups(\"api:v1\").compile().unwrap_or_else(|e| panic!(\"{{e}}\"));\n}}\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(krate.join("src")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(krate.join("src/lib.rs"), "//! Demo.\n").unwrap_or_else(|e| panic!("{e}"));
    // The workspace's lock and a target dir kept between runs: the generator is built once.
    std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock"))
        .unwrap_or_else(|e| panic!("{e}"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("rerun-demo");
    let build = || {
        let out = kube_codegen::scaffold::cargo_command()
            .args(["build", "--quiet", "--offline", "--manifest-path"])
            .arg(krate.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.status.success(),
            "cargo build: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&runs)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(build(), 1, "the first build runs the build script");
    assert_eq!(build(), 1, "nothing changed: no rerun");
    std::fs::write(krate.join("src/lib.rs"), "//! Demo, edited.\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(build(), 1, "a source file that is no input: no rerun");
    let types = krate.join("apis/api/v1/types.rs");
    let text = std::fs::read_to_string(&types).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        &types,
        format!("{text}\n/// Added by the test.\npub struct Extra;\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(build(), 2, "an input changed: the build script reran");
    assert_eq!(build(), 2, "and not again");
}
