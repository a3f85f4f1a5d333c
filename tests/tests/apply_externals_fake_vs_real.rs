//! A user's kind that embeds built-in types (`tests/fixtures/externals`: a `Runner` whose spec
//! holds a k8s-openapi `PodTemplateSpec` and `Toleration`s), generated with
//! `--external-applyconfigurations kube-codegen-kubernetes`: its apply configuration is built
//! from kube-codegen-kubernetes' `PodTemplateSpecApplyConfiguration` and
//! `TolerationApplyConfiguration`, so two managers can each own single fields of one container.
//! The same steps on the in-memory server and on kube-apiserver v1.37.1, each step's answer
//! (containers, managed fields, the conflict and its cause, the extraction) recorded and the two
//! transcripts compared.

use std::time::Duration;

use kube_codegen_kubernetes::Clientset as Builtins;
use kube_codegen_kubernetes::applyconfiguration::core::v1::{
    ContainerApplyConfiguration, NamespaceApplyConfiguration, PodSpecApplyConfiguration,
    PodTemplateSpecApplyConfiguration, TolerationApplyConfiguration,
};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::apply::conflicts;
use kube_codegen_runtime::fake::FakeApiServer;
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::conformance::install_crd;
use tests::fake_vs_real::transcript_differences;
use tests::fixtures::externals::client::applyconfiguration::jobs::v1::{
    RunnerApplyConfiguration, RunnerSpecApplyConfiguration, extract_runner,
};
use tests::fixtures::externals::client::clientset::versioned::Clientset;

const NS: &str = "externals";
const GROUP: &str = "jobs.externals.kube-codegen.dev";

/// The Runner CRD, with the schema of the parts of a Pod template the steps use as
/// kube-apiserver's own has them: containers merged by name.
fn runner_crd() -> Value {
    let string = json!({"type": "string"});
    let loose = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let container = json!({
        "type": "object", "required": ["name"], "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"name": string, "image": string}
    });
    let spec = json!({
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "template": {
                "type": "object",
                "properties": {
                    "metadata": loose,
                    "spec": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"containers": {
                            "type": "array", "items": container,
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"]
                        }}
                    }
                }
            },
            "tolerations": {"type": "array", "items": loose}
        }
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("runners.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": "Runner", "listKind": "RunnerList", "plural": "runners",
                      "singular": "runner"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": spec, "status": loose}
                }}
            }]
        }
    })
}

fn container(name: &str) -> ContainerApplyConfiguration {
    ContainerApplyConfiguration::default().with_name(name)
}

/// A Runner configuration whose template holds `containers`.
fn runner(
    containers: Vec<ContainerApplyConfiguration>,
    spec: RunnerSpecApplyConfiguration,
) -> RunnerApplyConfiguration {
    RunnerApplyConfiguration::new("r", NS).with_spec(
        spec.with_template(
            PodTemplateSpecApplyConfiguration::default()
                .with_spec(PodSpecApplyConfiguration::default().with_containers(containers)),
        ),
    )
}

/// The managers' fieldsV1, by manager.
fn owners(obj: &impl serde::Serialize) -> Value {
    let v = serde_json::to_value(obj).unwrap();
    let mut out = serde_json::Map::new();
    for e in v["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let manager = e["manager"].as_str().unwrap_or_default().to_string();
        out.insert(manager, e["fieldsV1"].clone());
    }
    Value::Object(out)
}

/// The steps, against one server; returns the transcript.
async fn transcript(client: kube::Client) -> Vec<(&'static str, Value)> {
    let ci = ApplyOptions::new("ci");
    let mesh = ApplyOptions::new("mesh");
    let mut t: Vec<(&'static str, Value)> = Vec::new();
    install_crd(&client, runner_crd(), Duration::from_secs(30))
        .await
        .unwrap();
    Builtins::new(client.clone())
        .core_v1()
        .namespaces()
        .apply(&NamespaceApplyConfiguration::new(NS), &ci)
        .await
        .unwrap();
    let runners = Clientset::new(client).jobs_v1().runners(NS);

    // ci: one replica, container `app` and a toleration.
    let ci_config = runner(
        vec![container("app").with_image("nginx:1")],
        RunnerSpecApplyConfiguration::default()
            .with_replicas(1)
            .with_tolerations([TolerationApplyConfiguration::default()
                .with_key("dedicated")
                .with_operator("Exists")]),
    )
    .with_labels([("app", "r")]);
    let body = serde_json::to_value(&ci_config).unwrap();
    assert_eq!(
        body["spec"]["template"],
        json!({"spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}),
        "the template's configuration sends only what was set"
    );
    let r = runners.apply(&ci_config, &ci).await.unwrap();
    assert_eq!(r.spec.replicas, Some(1));
    assert_eq!(r.spec.tolerations[0].key.as_deref(), Some("dedicated"));
    t.push(("ci applies", owners(&r)));

    // mesh: a second container, merged by name; ci keeps `app`.
    let mesh_config = runner(
        vec![container("proxy").with_image("envoy:1")],
        RunnerSpecApplyConfiguration::default(),
    );
    let r = runners.apply(&mesh_config, &mesh).await.unwrap();
    let spec = r.spec.template.spec.as_ref().unwrap();
    let names: Vec<&str> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["app", "proxy"]);
    let owned = owners(&r);
    let containers = |m: &str| owned[m]["f:spec"]["f:template"]["f:spec"]["f:containers"].clone();
    assert_eq!(
        containers("ci")[r#"k:{"name":"app"}"#]["f:image"],
        json!({}),
        "ci owns app's image: {owned}"
    );
    assert!(
        containers("ci").get(r#"k:{"name":"proxy"}"#).is_none(),
        "{owned}"
    );
    assert_eq!(
        containers("mesh")[r#"k:{"name":"proxy"}"#]["f:image"],
        json!({}),
        "mesh owns proxy's image: {owned}"
    );
    t.push((
        "mesh merges",
        json!({"containers": spec.containers.iter().map(|c| json!([c.name, c.image])).collect::<Vec<_>>(), "owners": owned}),
    ));

    // mesh changes app's image, which ci owns: a conflict naming the nested field and ci.
    let err = runners
        .apply(
            &runner(
                vec![container("app").with_image("nginx:2")],
                RunnerSpecApplyConfiguration::default(),
            ),
            &mesh,
        )
        .await
        .unwrap_err();
    let causes: Vec<Value> = conflicts(&err)
        .into_iter()
        .map(|c| json!([c.field, c.manager]))
        .collect();
    assert_eq!(
        causes,
        [json!([
            r#".spec.template.spec.containers[name="app"].image"#,
            "ci"
        ])]
    );
    t.push(("mesh conflicts", Value::Array(causes)));

    // What ci owns comes back as ci's configuration, built-in parts included.
    let extracted = extract_runner(&r, "ci").unwrap();
    assert_eq!(extracted, ci_config);
    t.push(("extract ci", serde_json::to_value(&extracted).unwrap()));
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_embedding_builtins_applies_them_typed_fake_vs_real() {
    let fake = FakeApiServer::new();
    let fake_t = transcript(fake.client().unwrap()).await;
    let real = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let real_t = transcript(real.client().unwrap()).await;
    assert_eq!(fake_t.len(), real_t.len());
    let diffs = transcript_differences(&fake_t, &real_t);
    assert!(
        diffs.is_empty(),
        "the fake differs from kube-apiserver:\n{}",
        diffs.join("\n")
    );
}
