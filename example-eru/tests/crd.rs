//! The CRD manifest under `deploy/crds/` is the one `build.rs` generates from the types, and
//! `Eru::crd()` is the same document.

use std::path::Path;

use example_eru::CRD_YAML;
use example_eru::pkg::apis::mtsre::v1::Eru;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

const CHECKED_IN: &str = "deploy/crds/mtsre.meitu.com_erus_crd.yaml";

#[test]
fn the_checked_in_crd_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CHECKED_IN);
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        on_disk == CRD_YAML,
        "{} is stale: the API types changed. Regenerate it from the repository root with\n\n    \
         cargo run -p example-eru -- crd > example-eru/{CHECKED_IN}\n",
        path.display()
    );
}

#[test]
fn crd_matches_the_yaml_and_has_the_printer_columns() {
    let crd = Eru::crd();
    assert_eq!(crd.metadata.name.as_deref(), Some("erus.mtsre.meitu.com"));
    assert_eq!(crd.spec.group, "mtsre.meitu.com");
    assert_eq!(crd.spec.names.kind, "Eru");
    assert_eq!(crd.spec.scope, "Namespaced");
    let version = &crd.spec.versions[0];
    let columns: Vec<&str> = version
        .additional_printer_columns
        .iter()
        .flatten()
        .filter(|c| c.priority.unwrap_or(0) == 0)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        columns,
        ["DEPLOYMENT", "SCHEDULE", "LAST", "NEXT", "SUSPENDED", "AGE"]
    );
    assert!(
        version
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some()),
        "status subresource"
    );
    let from_yaml: CustomResourceDefinition = serde_saphyr::from_str(CRD_YAML)
        .unwrap_or_else(|e| panic!("the generated YAML does not parse: {e}"));
    assert_eq!(from_yaml, crd, "Eru::crd() and the YAML differ");
}
