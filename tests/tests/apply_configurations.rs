//! Generated apply configurations (`applyconfiguration` generator): they serialize only what was
//! set, their setters append and merge, constructors set apiVersion and kind, `extract_*` reads
//! one manager's fields, and the typed clients' apply verbs follow the `+genclient` tags.

use std::fs;
use std::path::Path;

use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use example_crddemo::pkg::client::applyconfiguration::crddemo::v1::{
    MydemoApplyConfiguration, MydemoSpecApplyConfiguration, MydemoStatusApplyConfiguration,
    extract_mydemo, extract_mydemo_status,
};
use kube_codegen_runtime::apply::meta::{
    ConditionApplyConfiguration, OwnerReferenceApplyConfiguration,
};
use kube_codegen_runtime::apply::{ApplyConfiguration, ExtractError};
use serde_json::json;
use tests::fixtures::apply::apis::fleet::v1::Mode;
use tests::fixtures::apply::client::applyconfiguration::fleet::v1::{
    FleetApplyConfiguration, FleetSpecApplyConfiguration, PortApplyConfiguration,
};
use tests::fixtures::crd::client::applyconfiguration::example::v1::ClusterTestTypeApplyConfiguration;

#[test]
fn only_spec_port_serializes_to_exactly_the_identity_and_the_port() {
    let ac = MydemoApplyConfiguration::new("web", "prod")
        .with_spec(MydemoSpecApplyConfiguration::default().with_port(8080));
    assert_eq!(
        serde_json::to_value(&ac).unwrap(),
        json!({
            "apiVersion": "crddemo.k8s.io/v1",
            "kind": "Mydemo",
            "metadata": {"name": "web", "namespace": "prod"},
            "spec": {"port": 8080}
        })
    );
    // The typed object with its Default would claim `ip: ""` too (k8s-openapi#112).
    let whole = Mydemo {
        spec: MydemoSpec {
            port: 8080,
            ..MydemoSpec::default()
        },
        ..Mydemo::default()
    };
    assert_eq!(
        serde_json::to_value(&whole).unwrap()["spec"],
        json!({"ip": "", "port": 8080})
    );
}

#[test]
fn constructors_set_api_version_kind_and_identity() {
    let ac = MydemoApplyConfiguration::new("web", "prod");
    assert_eq!(
        (ac.api_version(), ac.kind(), ac.name(), ac.namespace()),
        (
            Some("crddemo.k8s.io/v1"),
            Some("Mydemo"),
            Some("web"),
            Some("prod")
        )
    );
    let cluster = ClusterTestTypeApplyConfiguration::new("c");
    assert_eq!(
        serde_json::to_value(&cluster).unwrap(),
        json!({"apiVersion": "example.crd.code-generator.k8s.io/v1", "kind": "ClusterTestType",
               "metadata": {"name": "c"}}),
        "cluster-scoped: no namespace"
    );
}

#[test]
fn list_setters_append_and_map_setters_merge() {
    let ac = FleetApplyConfiguration::new("f", "ns")
        .with_labels([("a", "1")])
        .with_labels([("b", "2"), ("a", "3")])
        .with_annotations([("note", "x")])
        .with_finalizers(["example.com/a"])
        .with_finalizers(["example.com/b"])
        .with_owner_references([OwnerReferenceApplyConfiguration::default().with_uid("u")])
        .with_spec(
            FleetSpecApplyConfiguration::default()
                .with_tags(["x"])
                .with_tags(["y"])
                .with_ports([PortApplyConfiguration::default().with_name("http")])
                .with_ports([PortApplyConfiguration::default()
                    .with_name("https")
                    .with_port(443)])
                .with_params([("k", "1")])
                .with_params([("k", "2"), ("l", "3")])
                .with_mode(Mode::Safe),
        );
    assert_eq!(
        serde_json::to_value(&ac).unwrap(),
        json!({
            "apiVersion": "fleet.apply.kube-codegen.dev/v1", "kind": "Fleet",
            "metadata": {"name": "f", "namespace": "ns", "labels": {"a": "3", "b": "2"},
                         "annotations": {"note": "x"},
                         "finalizers": ["example.com/a", "example.com/b"],
                         "ownerReferences": [{"uid": "u"}]},
            "spec": {"tags": ["x", "y"],
                     "ports": [{"name": "http"}, {"name": "https", "port": 443}],
                     "params": {"k": "2", "l": "3"}, "mode": "Safe"}
        })
    );
    // And back: a configuration decodes from what it serializes.
    let back: FleetApplyConfiguration =
        serde_json::from_value(serde_json::to_value(&ac).unwrap()).unwrap();
    assert_eq!(back, ac);
}

/// A Mydemo as kube-apiserver returns it after `ctrl` applied the spec and, through `/status`,
/// the status, and `kubectl` updated the port (field paths as the server writes them).
fn served_mydemo() -> Mydemo {
    serde_json::from_value(json!({
        "apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo",
        "metadata": {"name": "web", "namespace": "prod", "managedFields": [
            {"manager": "ctrl", "operation": "Apply", "apiVersion": "crddemo.k8s.io/v1",
             "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:ip": {}, "f:port": {}}}},
            {"manager": "ctrl", "operation": "Apply", "apiVersion": "crddemo.k8s.io/v1",
             "subresource": "status", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {
                 ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
                 "f:status": {}, "f:type": {}}}, "f:observedGeneration": {}}}},
            {"manager": "kubectl", "operation": "Update", "apiVersion": "crddemo.k8s.io/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}}
        ], "labels": {"app": "web", "team": "blue"}},
        "spec": {"ip": "10.0.0.1", "port": 80},
        "status": {"observedGeneration": 3, "serviceName": "web-svc", "conditions": [
            {"type": "Ready", "status": "True", "reason": "Exposed", "message": "ok",
             "lastTransitionTime": "2026-01-02T03:04:05Z"}]}
    }))
    .unwrap()
}

#[test]
fn extract_reads_what_one_manager_owns() {
    let obj = served_mydemo();
    let spec = extract_mydemo(&obj, "ctrl").unwrap();
    assert_eq!(
        spec,
        MydemoApplyConfiguration::new("web", "prod")
            .with_labels([("app", "web")])
            .with_spec(
                MydemoSpecApplyConfiguration::default()
                    .with_ip("10.0.0.1")
                    .with_port(80)
            ),
        "the label kubectl added and the status are not ctrl's main-resource fields"
    );
    let status = extract_mydemo_status(&obj, "ctrl").unwrap();
    let time = "2026-01-02T03:04:05Z".parse().unwrap();
    assert_eq!(
        status,
        MydemoApplyConfiguration::new("web", "prod").with_status(
            MydemoStatusApplyConfiguration::default()
                .with_observed_generation(3_i64)
                .with_conditions([ConditionApplyConfiguration::default()
                    .with_type("Ready")
                    .with_status("True")
                    .with_reason("Exposed")
                    .with_message("ok")
                    .with_last_transition_time(
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(time)
                    )])
        ),
        "serviceName was nobody's apply"
    );
    // An update owns fields, but extraction reads applies only.
    assert_eq!(
        extract_mydemo(&obj, "kubectl").unwrap(),
        MydemoApplyConfiguration::new("web", "prod")
    );
    // An object whose managed fields were dropped (a trimmed cache) is an error, not an empty
    // configuration that would give up every field when applied.
    let mut trimmed = obj;
    trimmed.metadata.managed_fields = None;
    assert!(matches!(
        extract_mydemo(&trimmed, "ctrl"),
        Err(ExtractError::NoManagedFields { .. })
    ));
}

/// The generated file of a typed client in a fixture.
fn typed_client(fixture: &str, path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture)
        .join("pkg/client/clientset/versioned/typed")
        .join(path);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn apply_verbs_follow_the_genclient_tags() {
    // Every verb: typed apply and apply_status.
    let all = typed_client("crd", "example/v1/test_type.rs");
    assert!(all.contains("pub async fn apply(\n        &self,\n        test_type: &crate::fixtures::crd::client::applyconfiguration::example::v1::TestTypeApplyConfiguration,"), "{all}");
    assert!(all.contains("pub async fn apply_status("), "{all}");
    // +genclient:noStatus: apply, no apply_status, and no extract_*_status.
    let no_status = typed_client("verbs", "verbs/v1/no_status_type.rs");
    assert!(no_status.contains("pub async fn apply("));
    assert!(!no_status.contains("pub async fn apply_status("));
    let ac = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/verbs/pkg/client/applyconfiguration/verbs/v1/no_status_type.rs");
    let ac = fs::read_to_string(ac).unwrap();
    assert!(ac.contains("pub fn extract_no_status_type("));
    assert!(!ac.contains("pub fn extract_no_status_type_status("));
    // +genclient:skipVerbs=…,apply,applyStatus: no verbs and no apply configuration (not a root).
    let skipped = typed_client("verbs", "verbs/v1/skip_verbs_type.rs");
    assert!(!skipped.contains("pub async fn apply"), "{skipped}");
    assert!(
        !Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/verbs/pkg/client/applyconfiguration/verbs/v1/skip_verbs_type.rs")
            .exists()
    );
}
