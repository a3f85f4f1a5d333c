//! One apply configuration per API group, with one field set, serializes to exactly
//! apiVersion, kind, metadata.name (and namespace) and that field: nothing else is claimed.

use kube_codegen_kubernetes::applyconfiguration as ac;
use kube_codegen_runtime::apply::ApplyConfiguration;
use kube_codegen_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::GroupResource;
use kube_codegen_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

/// The JSON of `ac`, checked against `want` (the field), with the identity fields added.
fn check<A: ApplyConfiguration>(
    ac: A,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    want: Value,
) {
    let got = serde_json::to_value(&ac).unwrap();
    let mut meta = json!({ "name": "n" });
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    let mut expected = json!({ "apiVersion": api_version, "kind": kind, "metadata": meta });
    for (k, v) in want.as_object().unwrap() {
        expected[k] = v.clone();
    }
    assert_eq!(got, expected, "{kind}");
    assert_eq!(ac.api_version(), Some(api_version));
    assert_eq!(ac.kind(), Some(kind));
    assert_eq!(ac.name(), Some("n"));
    assert_eq!(ac.namespace(), namespace);
    // And it reads back as it was written.
    let back: A = serde_json::from_value(got.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), got);
}

#[test]
fn admissionregistration() {
    use ac::admissionregistration::v1::*;
    check(
        ValidatingAdmissionPolicyApplyConfiguration::new("n").with_spec(
            ValidatingAdmissionPolicySpecApplyConfiguration::default().with_failure_policy("Fail"),
        ),
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        None,
        json!({ "spec": { "failurePolicy": "Fail" } }),
    );
}

#[test]
fn apiextensions() {
    use ac::apiextensions::v1::*;
    check(
        CustomResourceDefinitionApplyConfiguration::new("n").with_spec(
            CustomResourceDefinitionSpecApplyConfiguration::default().with_group("example.io"),
        ),
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        json!({ "spec": { "group": "example.io" } }),
    );
}

#[test]
fn apiregistration() {
    use ac::apiregistration::v1::*;
    check(
        APIServiceApplyConfiguration::new("n").with_spec(
            APIServiceSpecApplyConfiguration::default().with_group_priority_minimum(100),
        ),
        "apiregistration.k8s.io/v1",
        "APIService",
        None,
        json!({ "spec": { "groupPriorityMinimum": 100 } }),
    );
}

#[test]
fn apiserverinternal() {
    use ac::apiserverinternal::v1alpha1::*;
    check(
        StorageVersionApplyConfiguration::new("n").with_status(
            StorageVersionStatusApplyConfiguration::default().with_common_encoding_version("v1"),
        ),
        "internal.apiserver.k8s.io/v1alpha1",
        "StorageVersion",
        None,
        json!({ "status": { "commonEncodingVersion": "v1" } }),
    );
}

#[test]
fn apps() {
    use ac::apps::v1::*;
    check(
        DeploymentApplyConfiguration::new("n", "prod")
            .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(3)),
        "apps/v1",
        "Deployment",
        Some("prod"),
        json!({ "spec": { "replicas": 3 } }),
    );
}

#[test]
fn authentication() {
    use ac::authentication::v1::*;
    check(
        TokenReviewApplyConfiguration::new("n")
            .with_spec(TokenReviewSpecApplyConfiguration::default().with_token("t")),
        "authentication.k8s.io/v1",
        "TokenReview",
        None,
        json!({ "spec": { "token": "t" } }),
    );
}

#[test]
fn authorization() {
    use ac::authorization::v1::*;
    check(
        LocalSubjectAccessReviewApplyConfiguration::new("n", "prod")
            .with_spec(SubjectAccessReviewSpecApplyConfiguration::default().with_user("alice")),
        "authorization.k8s.io/v1",
        "LocalSubjectAccessReview",
        Some("prod"),
        json!({ "spec": { "user": "alice" } }),
    );
}

#[test]
fn autoscaling() {
    use ac::autoscaling::v2::*;
    check(
        HorizontalPodAutoscalerApplyConfiguration::new("n", "prod").with_spec(
            HorizontalPodAutoscalerSpecApplyConfiguration::default().with_max_replicas(5),
        ),
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        Some("prod"),
        json!({ "spec": { "maxReplicas": 5 } }),
    );
}

#[test]
fn batch() {
    use ac::batch::v1::*;
    check(
        CronJobApplyConfiguration::new("n", "prod")
            .with_spec(CronJobSpecApplyConfiguration::default().with_schedule("*/5 * * * *")),
        "batch/v1",
        "CronJob",
        Some("prod"),
        json!({ "spec": { "schedule": "*/5 * * * *" } }),
    );
}

#[test]
fn certificates() {
    use ac::certificates::v1::*;
    check(
        CertificateSigningRequestApplyConfiguration::new("n").with_spec(
            CertificateSigningRequestSpecApplyConfiguration::default()
                .with_signer_name("example.io/signer"),
        ),
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        None,
        json!({ "spec": { "signerName": "example.io/signer" } }),
    );
}

#[test]
fn coordination() {
    use ac::coordination::v1::*;
    check(
        LeaseApplyConfiguration::new("n", "prod")
            .with_spec(LeaseSpecApplyConfiguration::default().with_holder_identity("me")),
        "coordination.k8s.io/v1",
        "Lease",
        Some("prod"),
        json!({ "spec": { "holderIdentity": "me" } }),
    );
}

#[test]
fn core() {
    use ac::core::v1::*;
    check(
        ConfigMapApplyConfiguration::new("n", "prod").with_data([("k", "v")]),
        "v1",
        "ConfigMap",
        Some("prod"),
        json!({ "data": { "k": "v" } }),
    );
}

#[test]
fn discovery() {
    use ac::discovery::v1::*;
    check(
        EndpointSliceApplyConfiguration::new("n", "prod").with_address_type("IPv4"),
        "discovery.k8s.io/v1",
        "EndpointSlice",
        Some("prod"),
        json!({ "addressType": "IPv4" }),
    );
}

#[test]
fn events() {
    use ac::events::v1::*;
    check(
        EventApplyConfiguration::new("n", "prod").with_reason("Started"),
        "events.k8s.io/v1",
        "Event",
        Some("prod"),
        json!({ "reason": "Started" }),
    );
}

#[test]
fn flowcontrol() {
    use ac::flowcontrol::v1::*;
    check(
        FlowSchemaApplyConfiguration::new("n")
            .with_spec(FlowSchemaSpecApplyConfiguration::default().with_matching_precedence(500)),
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema",
        None,
        json!({ "spec": { "matchingPrecedence": 500 } }),
    );
}

#[test]
fn lifecycle() {
    use ac::lifecycle::v1alpha1::*;
    check(
        EvictionRequestApplyConfiguration::new("n", "prod")
            .with_spec(EvictionRequestSpecApplyConfiguration::default().with_intent("Evict")),
        "lifecycle.k8s.io/v1alpha1",
        "EvictionRequest",
        Some("prod"),
        json!({ "spec": { "intent": "Evict" } }),
    );
}

#[test]
fn networking() {
    use ac::networking::v1::*;
    check(
        IngressClassApplyConfiguration::new("n").with_spec(
            IngressClassSpecApplyConfiguration::default().with_controller("example.io/ingress"),
        ),
        "networking.k8s.io/v1",
        "IngressClass",
        None,
        json!({ "spec": { "controller": "example.io/ingress" } }),
    );
}

#[test]
fn node() {
    use ac::node::v1::*;
    check(
        RuntimeClassApplyConfiguration::new("n").with_handler("runc"),
        "node.k8s.io/v1",
        "RuntimeClass",
        None,
        json!({ "handler": "runc" }),
    );
}

#[test]
fn policy() {
    use ac::policy::v1::*;
    check(
        PodDisruptionBudgetApplyConfiguration::new("n", "prod").with_spec(
            PodDisruptionBudgetSpecApplyConfiguration::default()
                .with_min_available(IntOrString::Int(1)),
        ),
        "policy/v1",
        "PodDisruptionBudget",
        Some("prod"),
        json!({ "spec": { "minAvailable": 1 } }),
    );
}

#[test]
fn rbac() {
    use ac::rbac::v1::*;
    check(
        RoleApplyConfiguration::new("n", "prod")
            .with_rules([PolicyRuleApplyConfiguration::default().with_verbs(["get"])]),
        "rbac.authorization.k8s.io/v1",
        "Role",
        Some("prod"),
        json!({ "rules": [{ "verbs": ["get"] }] }),
    );
}

#[test]
fn resource() {
    use ac::resource::v1::*;
    check(
        DeviceClassApplyConfiguration::new("n").with_spec(
            DeviceClassSpecApplyConfiguration::default()
                .with_extended_resource_name("example.io/gpu"),
        ),
        "resource.k8s.io/v1",
        "DeviceClass",
        None,
        json!({ "spec": { "extendedResourceName": "example.io/gpu" } }),
    );
}

#[test]
fn scheduling() {
    use ac::scheduling::v1::*;
    check(
        PriorityClassApplyConfiguration::new("n").with_value(1000),
        "scheduling.k8s.io/v1",
        "PriorityClass",
        None,
        json!({ "value": 1000 }),
    );
}

#[test]
fn storage() {
    use ac::storage::v1::*;
    check(
        StorageClassApplyConfiguration::new("n").with_provisioner("example.io/disk"),
        "storage.k8s.io/v1",
        "StorageClass",
        None,
        json!({ "provisioner": "example.io/disk" }),
    );
}

#[test]
fn storagemigration() {
    use ac::storagemigration::v1::*;
    check(
        StorageVersionMigrationApplyConfiguration::new("n").with_spec(
            StorageVersionMigrationSpecApplyConfiguration::default().with_resource(GroupResource {
                group: "apps".into(),
                resource: "deployments".into(),
            }),
        ),
        "storagemigration.k8s.io/v1",
        "StorageVersionMigration",
        None,
        json!({ "spec": { "resource": { "group": "apps", "resource": "deployments" } } }),
    );
}

/// A list-map keyed by two fields (k8s.io/api's markers: containerPort and protocol) and an
/// atomic list keep their items as set; `apps` reaches `core`'s configurations.
#[test]
fn deployment_reaches_core_pod_template() {
    use ac::apps::v1::*;
    use ac::core::v1::*;
    let d = DeploymentApplyConfiguration::new("web", "prod").with_spec(
        DeploymentSpecApplyConfiguration::default().with_template(
            PodTemplateSpecApplyConfiguration::default().with_spec(
                PodSpecApplyConfiguration::default().with_containers([
                    ContainerApplyConfiguration::default()
                        .with_name("app")
                        .with_args(["--v=2"])
                        .with_ports([ContainerPortApplyConfiguration::default()
                            .with_container_port(8080)
                            .with_protocol("TCP")]),
                ]),
            ),
        ),
    );
    assert_eq!(
        serde_json::to_value(&d).unwrap(),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web", "namespace": "prod" },
            "spec": { "template": { "spec": { "containers": [{
                "name": "app", "args": ["--v=2"],
                "ports": [{ "containerPort": 8080, "protocol": "TCP" }],
            }] } } },
        })
    );
}
