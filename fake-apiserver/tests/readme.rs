//! The README's example of the in-memory API server with a plain `kube::Client`, compiled and
//! run (`tests/tests/readme_examples.rs` checks the README quotes these lines).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

#[tokio::test]
async fn a_plain_kube_client_creates_and_the_handle_records_it()
-> Result<(), Box<dyn std::error::Error>> {
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "settings"}, "data": {"mode": "fast"}
    }))?;
    use kube_fake_apiserver::FakeApiServer;
    let server = FakeApiServer::new();
    let client = server.client()?; // a kube::Client, no generated code needed
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &cm).await?;
    assert_eq!(server.handle().actions()[0].verb, "create");
    Ok(())
}
