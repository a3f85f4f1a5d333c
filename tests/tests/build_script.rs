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
