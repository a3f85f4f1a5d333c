//! CustomResourceDefinitions as kube-codegen writes them: one YAML document per CRD, which the
//! generated `kube::CustomResourceExt::crd()` reads (with `include_str!`), so each CRD exists
//! once. The YAML reader is the one `kube` already uses for kubeconfig files.
//!
//! ```
//! let crd = kube_codegen_runtime::crd::from_yaml(
//!     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions: []\n",
//! )
//! .unwrap();
//! assert_eq!(crd.metadata.name.as_deref(), Some("widgets.example.com"));
//! ```

/// k8s-openapi's CustomResourceDefinition, re-exported under a short path for generated code.
pub use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Why a CRD document could not be read.
#[derive(Debug, thiserror::Error)]
#[error("invalid CustomResourceDefinition YAML: {0}")]
pub struct CrdError(#[from] serde_saphyr::Error);

/// Reads one CustomResourceDefinition from YAML (or JSON, which is YAML too).
pub fn from_yaml(yaml: &str) -> Result<CustomResourceDefinition, CrdError> {
    Ok(serde_saphyr::from_str(yaml)?)
}
