//! The guide's "client-go's four clients" examples (`docs/guide/builtin-clients.md`), run
//! against the in-memory API server: the REST client, the dynamic client and its informers, the
//! discovery client and REST mapper.
//! (The guide quotes these lines; `readme_examples.rs` checks that it does so verbatim.)

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, ObjectList, Patch, PatchParams, PostParams};
use kube::core::{DynamicObject, GroupVersionResource};
use kube_codegen_runtime::InformerOptions;
use kube_codegen_runtime::discovery::{CachedDiscoveryClient, DeferredRestMapper, GroupKind};
use kube_codegen_runtime::dynamic::{DynamicClient, DynamicSharedInformerFactory};
use kube_codegen_runtime::labels::Selector;
use kube_codegen_runtime::rest::RestClient;
use serde_json::json;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn pod(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    })
}

#[tokio::test]
async fn rest_client() -> Result<(), Error> {
    let (client, _handle) = kube_codegen_runtime::fake::new_client(&[], [pod("web-0")])?;
    let rest = RestClient::new(client, "", "v1"); // /api/v1
    let pods: ObjectList<Pod> = rest
        .get()
        .namespace("default")
        .resource("pods")
        .list_params(&ListParams::default().limit(100))
        .send()
        .await?;
    for p in &pods {
        println!(
            "NAMESPACE: {:?} \t NAME: {:?}",
            p.metadata.namespace, p.metadata.name
        );
    }
    assert_eq!(pods.items.len(), 1);
    Ok(())
}

#[tokio::test]
async fn dynamic_client_and_informers() -> Result<(), Error> {
    let (client, _handle) = kube_codegen_runtime::fake::new_client(&[], [])?;
    let dynamic = DynamicClient::new(client.clone());
    let gvr = GroupVersionResource::gvr("apps", "v1", "deployments");
    let deployments = dynamic.resource(&gvr).namespace("default");

    let web: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
        }
    }))?;
    deployments.create(&web, &PostParams::default()).await?;
    let scaled = deployments
        .patch(
            "web",
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(scaled.data["spec"]["replicas"], 3);

    let factory = DynamicSharedInformerFactory::builder(client)
        .options(
            InformerOptions::default()
                .namespace("default")
                .resync(Duration::from_secs(60)),
        )
        .build();
    let informer = factory.for_resource(&gvr); // one informer per resource and namespace
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    for d in informer
        .lister()
        .namespaced("default")
        .list(&Selector::parse("app=web")?)
    {
        println!(
            "{:?} wants {} replicas",
            d.metadata.name, d.data["spec"]["replicas"]
        );
    }
    factory.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn discovery_client_and_rest_mapper() -> Result<(), Error> {
    let (client, _handle) = kube_codegen_runtime::fake::new_client(&[], [])?;
    let discovery = CachedDiscoveryClient::new(client); // asks once, then answers from memory
    for group in discovery.server_groups().await?.groups {
        let versions: Vec<String> = group.versions.into_iter().map(|v| v.version).collect();
        println!("{:?}: {versions:?}", group.name);
    }
    let apps = discovery
        .server_resources_for_group_version("apps/v1")
        .await?;
    assert!(
        apps.resources
            .iter()
            .any(|r| r.name == "deployments/status")
    );

    let mapper = DeferredRestMapper::new(discovery.clone());
    let deploy = mapper
        .resource_for(&GroupVersionResource::gvr("", "", "deploy"))
        .await?;
    assert_eq!(
        (deploy.group.as_str(), deploy.version.as_str()),
        ("apps", "v1")
    );
    let lease = mapper
        .rest_mapping(&GroupKind::new("coordination.k8s.io", "Lease"), &[])
        .await?;
    assert_eq!(
        (lease.resource.resource.as_str(), lease.namespaced()),
        ("leases", true)
    );
    mapper.reset().await; // after installing a CRD: the next lookup discovers again
    Ok(())
}
