//! Discovery over the in-memory API server (client-go's `discovery/fake`): the real
//! [`DiscoveryClient`] asking a server that serves the built-ins, the given generated
//! resources and every CRD created through the API, so tests see what a cluster would show.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kube_codegen_runtime::discovery::{GroupKind, fake};
//!
//! let (discovery, _handle) = fake::new_client(&[])?;
//! let mapper = discovery.rest_mapper().await?;
//! let m = mapper.rest_mapping(&GroupKind::new("apps", "Deployment"), &[])?;
//! assert_eq!(m.resource.resource, "deployments");
//! # Ok(()) }
//! ```

use super::DiscoveryClient;
use crate::fake::{FakeError, FakeHandle};
use crate::resource::ResourceInfo;

/// A discovery client over a new in-memory API server serving the built-ins and `resources`.
/// Needs a Tokio runtime.
pub fn new_client(resources: &[ResourceInfo]) -> Result<(DiscoveryClient, FakeHandle), FakeError> {
    let (client, handle) = crate::fake::new_client(resources, [])?;
    Ok((DiscoveryClient::new(client), handle))
}
