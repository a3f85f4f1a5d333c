//! The guide's "The in-memory API server" example (`docs/guide/in-memory-server.md`), as
//! compiled and run code: any `kube::Client` against the in-process server, and the recorded
//! action.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

#[tokio::test]
async fn any_kube_client_against_the_in_process_server() -> Result<(), Box<dyn std::error::Error>> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        data: Some([("mode".to_string(), "fast".to_string())].into()),
        ..ConfigMap::default()
    };
    use kube_fake_apiserver::FakeApiServer;

    let server = FakeApiServer::new();
    let client = server.client()?; // a kube::Client, no generated code needed
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &cm).await?;
    assert_eq!(server.handle().actions()[0].verb, "create");

    let stored = server
        .handle()
        .get::<ConfigMap>("default", "settings")?
        .ok_or("the ConfigMap was not stored")?;
    assert_eq!(stored.data, cm.data);
    Ok(())
}
