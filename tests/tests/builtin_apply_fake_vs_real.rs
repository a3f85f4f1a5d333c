//! Typed server-side apply of built-in kinds (`kube-codegen-kubernetes`' apply configurations
//! and its clients' `apply`) with two field managers, on the in-memory server and on
//! kube-apiserver v1.37.1: the same steps on both, each step's answer (the fields it is about,
//! the managed fields, 409 conflicts with their causes, extractions) recorded and the two
//! transcripts compared. Deployments (containers merged by name, container ports by
//! containerPort and protocol, replicas conflicts and force, extract round trip), Services
//! (ports by port and protocol, a granular selector map), an autoscaler's apply of a
//! Deployment's `Scale` (conflict, force, ownership with `subresource: scale`), ConfigMaps (data merged key by key,
//! a conflict) and a Pod template (an atomic list: a container's args).

use kube_codegen_kubernetes::Clientset;
use kube_codegen_kubernetes::applyconfiguration::apps::v1::{
    DeploymentApplyConfiguration, DeploymentSpecApplyConfiguration, extract_deployment,
};
use kube_codegen_kubernetes::applyconfiguration::core::v1::{
    ConfigMapApplyConfiguration, ContainerApplyConfiguration, ContainerPortApplyConfiguration,
    NamespaceApplyConfiguration, PodSpecApplyConfiguration, PodTemplateSpecApplyConfiguration,
    ServiceApplyConfiguration, ServicePortApplyConfiguration, ServiceSpecApplyConfiguration,
    extract_config_map,
};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::apply::meta::{
    LabelSelectorApplyConfiguration, ObjectMetaApplyConfiguration,
};
use kube_codegen_runtime::apply::{conflicts, extract_fields};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};
use kube_codegen_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;

const NS: &str = "typed-apply";

/// What the transcript keeps of an object: `paths` (JSON pointers) and the managed fields
/// (manager, operation, subresource, fieldsV1; times dropped, sorted).
fn view<T: Serialize>(obj: &T, paths: &[&str]) -> Value {
    let v = serde_json::to_value(obj).unwrap();
    let mut out = serde_json::Map::new();
    for p in paths {
        out.insert(
            (*p).to_string(),
            v.pointer(p).cloned().unwrap_or(Value::Null),
        );
    }
    let mut managed: Vec<Value> = v["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            json!({
                "manager": e["manager"], "operation": e["operation"],
                "subresource": e.get("subresource").cloned().unwrap_or(Value::Null),
                "fieldsV1": e["fieldsV1"],
            })
        })
        .collect();
    managed.sort_by_key(|e| e["manager"].as_str().unwrap_or_default().to_string());
    out.insert("managedFields".into(), Value::Array(managed));
    Value::Object(out)
}

/// A refused apply as the transcript keeps it: status code and conflict causes.
fn refused(e: &kube::Error) -> Value {
    let code = match e {
        kube::Error::Api(s) => s.code,
        other => panic!("not an API error: {other}"),
    };
    let mut causes: Vec<Value> = conflicts(e)
        .into_iter()
        .map(|c| json!({ "field": c.field, "manager": c.manager }))
        .collect();
    causes.sort_by_key(|c| c["field"].as_str().unwrap_or_default().to_string());
    json!({ "code": code, "conflicts": causes })
}

fn app_container(name: &str) -> ContainerApplyConfiguration {
    ContainerApplyConfiguration::default().with_name(name)
}

fn port(n: i32, protocol: &str) -> ContainerPortApplyConfiguration {
    ContainerPortApplyConfiguration::default()
        .with_container_port(n)
        .with_protocol(protocol)
}

fn deployment(spec: DeploymentSpecApplyConfiguration) -> DeploymentApplyConfiguration {
    DeploymentApplyConfiguration::new("web", NS).with_spec(spec)
}

fn template(containers: Vec<ContainerApplyConfiguration>) -> PodTemplateSpecApplyConfiguration {
    PodTemplateSpecApplyConfiguration::default()
        .with_metadata(ObjectMetaApplyConfiguration::default().with_labels([("app", "web")]))
        .with_spec(PodSpecApplyConfiguration::default().with_containers(containers))
}

/// The steps, against one server; returns the transcript.
async fn transcript(cs: Clientset) -> Vec<(&'static str, Value)> {
    let a = ApplyOptions::new("manager-a");
    let b = ApplyOptions::new("manager-b");
    let mut t: Vec<(&'static str, Value)> = Vec::new();
    cs.core_v1()
        .namespaces()
        .apply(&NamespaceApplyConfiguration::new(NS), &a)
        .await
        .unwrap();

    // Deployments: A owns replicas, the selector and container `app` with port 8080/TCP.
    let deployments = cs.apps_v1().deployments(NS);
    let d = deployments
        .apply(
            &deployment(
                DeploymentSpecApplyConfiguration::default()
                    .with_replicas(2)
                    .with_selector(
                        LabelSelectorApplyConfiguration::default()
                            .with_match_labels([("app", "web")]),
                    )
                    .with_template(template(vec![
                        app_container("app")
                            .with_image("nginx:1")
                            .with_ports([port(8080, "TCP")]),
                    ])),
            ),
            &a,
        )
        .await
        .unwrap();
    assert_eq!(d.spec.replicas, Some(2));
    t.push((
        "deployment a",
        view(&d, &["/spec/replicas", "/spec/template/spec/containers"]),
    ));

    // B adds a container (merged by name) and port 8080/UDP to `app` (merged by
    // containerPort and protocol: 8080/TCP stays).
    let d = deployments
        .apply(
            &deployment(DeploymentSpecApplyConfiguration::default().with_template(
                PodTemplateSpecApplyConfiguration::default().with_spec(
                    PodSpecApplyConfiguration::default().with_containers([
                        app_container("app").with_ports([port(8080, "UDP")]),
                        app_container("sidecar").with_image("busybox:1"),
                    ]),
                ),
            )),
            &b,
        )
        .await
        .unwrap();
    let containers = &d.spec.template.spec.as_ref().unwrap().containers;
    assert_eq!(
        containers
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["app", "sidecar"]
    );
    let ports: Vec<(i32, Option<&str>)> = containers[0]
        .ports
        .iter()
        .flatten()
        .map(|p| (p.container_port, p.protocol.as_deref()))
        .collect();
    assert_eq!(ports, [(8080, Some("TCP")), (8080, Some("UDP"))]);
    t.push((
        "deployment b merges",
        view(&d, &["/spec/template/spec/containers"]),
    ));

    // B sets replicas, which A owns: a conflict naming the field and A.
    let want_replicas = deployment(DeploymentSpecApplyConfiguration::default().with_replicas(5));
    let err = deployments.apply(&want_replicas, &b).await.unwrap_err();
    let r = refused(&err);
    assert_eq!(
        r,
        json!({ "code": 409, "conflicts": [{ "field": ".spec.replicas", "manager": "manager-a" }] })
    );
    t.push(("deployment b conflicts", r));

    // With force B takes it; A no longer owns replicas.
    let d = deployments
        .apply(&want_replicas, &b.clone().force())
        .await
        .unwrap();
    assert_eq!(d.spec.replicas, Some(5));
    t.push(("deployment b forces", view(&d, &["/spec/replicas"])));

    // Extract: what A owns now, applied back unchanged as A, changes nothing.
    let ac_a = extract_deployment(&d, "manager-a").unwrap();
    let ac_json = serde_json::to_value(&ac_a).unwrap();
    assert!(ac_json.pointer("/spec/replicas").is_none(), "{ac_json}");
    assert_eq!(
        ac_json.pointer("/spec/template/spec/containers/0/image"),
        Some(&json!("nginx:1"))
    );
    t.push(("deployment extract a", ac_json));
    let again = deployments.apply(&ac_a, &a).await.unwrap();
    assert_eq!(
        again.metadata.resource_version, d.metadata.resource_version,
        "re-applying an extraction is a no-op"
    );
    let ac_b = extract_deployment(&again, "manager-b").unwrap();
    t.push(("deployment extract b", serde_json::to_value(&ac_b).unwrap()));

    // An autoscaler applies the Scale: it conflicts with B over the replicas, takes them with
    // force, and owns them with `subresource: scale`.
    let scale = Scale {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..ObjectMeta::default()
        },
        spec: Some(ScaleSpec { replicas: Some(7) }),
        status: None,
    };
    let hpa = ApplyOptions::new("autoscaler");
    let err = deployments
        .apply_scale("web", &scale, &hpa)
        .await
        .unwrap_err();
    let r = refused(&err);
    assert_eq!(
        r,
        json!({ "code": 409, "conflicts": [{ "field": ".spec.replicas", "manager": "manager-b" }] })
    );
    t.push(("scale apply conflicts", r));
    let s = deployments
        .apply_scale("web", &scale, &hpa.clone().force())
        .await
        .unwrap();
    assert_eq!(s.spec.and_then(|s| s.replicas), Some(7));
    let d = deployments
        .get("web", &kube::api::GetParams::default())
        .await
        .unwrap();
    t.push(("scale apply forces", view(&d, &["/spec/replicas"])));

    // Services: ports merged by port and protocol; the selector is an atomic map
    // (`+mapType=atomic`), owned whole: another manager's selector conflicts.
    let services = cs.core_v1().services(NS);
    let svc = |ports: Vec<ServicePortApplyConfiguration>| {
        ServiceApplyConfiguration::new("web", NS)
            .with_spec(ServiceSpecApplyConfiguration::default().with_ports(ports))
    };
    let sport = |p: i32, protocol: &str| {
        ServicePortApplyConfiguration::default()
            .with_name(format!("p{p}-{}", protocol.to_lowercase()))
            .with_port(p)
            .with_protocol(protocol)
    };
    let mut first = svc(vec![sport(53, "TCP")]);
    if let Some(spec) = first.spec.take() {
        first.spec = Some(spec.with_selector([("app", "dns")]));
    }
    services.apply(&first, &a).await.unwrap();
    let s = services
        .apply(&svc(vec![sport(53, "UDP")]), &b)
        .await
        .unwrap();
    let spec = s.spec.as_ref().unwrap();
    assert_eq!(spec.ports.as_ref().map(Vec::len), Some(2));
    t.push((
        "service ports merged",
        view(&s, &["/spec/ports", "/spec/selector"]),
    ));
    let mut other_selector = svc(vec![sport(53, "UDP")]);
    if let Some(spec) = other_selector.spec.take() {
        other_selector.spec = Some(spec.with_selector([("tier", "infra")]));
    }
    let err = services.apply(&other_selector, &b).await.unwrap_err();
    let r = refused(&err);
    assert_eq!(
        r,
        json!({ "code": 409, "conflicts": [{ "field": ".spec.selector", "manager": "manager-a" }] })
    );
    t.push(("service atomic selector conflict", r));

    // ConfigMaps: data merged key by key; B changing A's key conflicts.
    let cms = cs.core_v1().config_maps(NS);
    cms.apply(
        &ConfigMapApplyConfiguration::new("cfg", NS).with_data([("a", "1")]),
        &a,
    )
    .await
    .unwrap();
    let cm = cms
        .apply(
            &ConfigMapApplyConfiguration::new("cfg", NS).with_data([("b", "2")]),
            &b,
        )
        .await
        .unwrap();
    assert_eq!(cm.data.as_ref().map(|m| m.len()), Some(2));
    t.push(("configmap merged", view(&cm, &["/data"])));
    let err = cms
        .apply(
            &ConfigMapApplyConfiguration::new("cfg", NS).with_data([("a", "changed")]),
            &b,
        )
        .await
        .unwrap_err();
    t.push(("configmap conflict", refused(&err)));
    let ac = extract_config_map(&cm, "manager-b").unwrap();
    assert_eq!(
        serde_json::to_value(&ac).unwrap(),
        json!({ "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": "cfg", "namespace": NS }, "data": { "b": "2" } })
    );
    let fields = extract_fields(&serde_json::to_value(&cm).unwrap(), "manager-a", "").unwrap();
    t.push(("configmap extract a", fields));

    // A Pod template (the Deployment's): container args are an atomic list, owned whole.
    let tpl = |args: &[&str]| {
        DeploymentApplyConfiguration::new("tpl", NS).with_spec(
            DeploymentSpecApplyConfiguration::default()
                .with_selector(
                    LabelSelectorApplyConfiguration::default().with_match_labels([("app", "web")]),
                )
                .with_template(template(vec![
                    app_container("app")
                        .with_image("nginx:1")
                        .with_args(args.iter().copied()),
                ])),
        )
    };
    deployments.apply(&tpl(&["--a", "--b"]), &a).await.unwrap();
    let err = deployments.apply(&tpl(&["--c"]), &b).await.unwrap_err();
    let r = refused(&err);
    assert_eq!(r["code"], json!(409));
    t.push(("pod template atomic conflict", r));
    let p = deployments
        .apply(&tpl(&["--c"]), &b.clone().force())
        .await
        .unwrap();
    let args = &p.spec.template.spec.as_ref().unwrap().containers[0].args;
    assert_eq!(
        args.as_deref(),
        Some(&["--c".to_string()][..]),
        "replaced whole"
    );
    t.push((
        "pod template atomic forced",
        view(&p, &["/spec/template/spec/containers"]),
    ));
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_apply_of_builtins_fake_vs_real() {
    let fake = FakeApiServer::new();
    let fake_t = transcript(Clientset::new(fake.client().unwrap())).await;
    let real = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let real_t = transcript(Clientset::new(real.client().unwrap())).await;
    let mut diffs = Vec::new();
    // The scenario table (run with --nocapture to see it).
    eprintln!("| scenario | in-memory server | kube-apiserver v1.37.1 | agree |");
    eprintln!("| --- | --- | --- | --- |");
    for ((step, f), (_, r)) in fake_t.iter().zip(&real_t) {
        eprintln!(
            "| {step} | `{f}` | `{r}` | {} |",
            if f == r { "yes" } else { "NO" }
        );
        if f != r {
            diffs.push(format!("{step}:\n  fake: {f}\n  real: {r}"));
        }
    }
    assert_eq!(fake_t.len(), real_t.len());
    assert!(
        diffs.is_empty(),
        "the fake differs from kube-apiserver:\n{}",
        diffs.join("\n")
    );
}
