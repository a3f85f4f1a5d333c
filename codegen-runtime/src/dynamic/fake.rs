//! The dynamic client and informer factory over the in-memory API server (client-go's
//! `dynamic/fake.NewSimpleDynamicClient`): the real [`DynamicClient`], so code under test runs
//! unchanged, plus the server's [`FakeHandle`] for recorded actions, reactors and direct
//! object access.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kube::api::ListParams;
//! use kube::core::GroupVersionResource;
//! use kube_codegen_runtime::dynamic::fake;
//!
//! let cm = serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "default"}, "data": {"mode": "fast"}
//! });
//! let (dynamic, handle) = fake::new_client(&[], [cm])?;
//! let cms = dynamic.resource(&GroupVersionResource::gvr("", "v1", "configmaps"));
//! let list = cms.namespace("default").list(&ListParams::default()).await?;
//! assert_eq!(list.items[0].data["data"]["mode"], "fast");
//! assert_eq!(handle.actions()[0].verb, "list");
//! # Ok(()) }
//! ```

use serde_json::Value;

use super::DynamicClient;
use crate::fake::{FakeError, FakeHandle};
use crate::resource::ResourceInfo;

/// A dynamic client over a new in-memory API server that serves the built-ins and
/// `resources` (generated kinds' registries, such as a package's `RESOURCES`), seeded with
/// `objects` (each with `apiVersion` and `kind`). Needs a Tokio runtime.
pub fn new_client(
    resources: &[ResourceInfo],
    objects: impl IntoIterator<Item = Value>,
) -> Result<(DynamicClient, FakeHandle), FakeError> {
    let (client, handle) = crate::fake::new_client(resources, objects)?;
    Ok((DynamicClient::new(client), handle))
}
