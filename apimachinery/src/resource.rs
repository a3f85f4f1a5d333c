//! Group, version and resource names (Go's `k8s.io/apimachinery/pkg/runtime/schema`), and the
//! [`ResourceInfo`] entries the register generator emits for every kind it registers: what the
//! in-memory API server serves and what discovery reports.

#[cfg(feature = "kube")]
use kube::core::{ApiResource, GroupVersionKind};

/// An API group and version, as `SchemeGroupVersion` is in Go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupVersion {
    /// The API group; empty for the legacy core group.
    pub group: &'static str,
    /// The version (`v1`).
    pub version: &'static str,
}

impl GroupVersion {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group and a resource of it, as `Resource("mydemos")` is in Go.
    pub fn resource(&self, resource: &str) -> GroupResource {
        GroupResource {
            group: self.group.to_string(),
            resource: resource.to_string(),
        }
    }
}

/// A resource qualified by its group (`mydemos.crddemo.k8s.io`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// The API group.
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl std::fmt::Display for GroupResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// One resource served by an API group-version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceInfo {
    /// The API group (empty for core).
    pub group: &'static str,
    /// The version.
    pub version: &'static str,
    /// The kind (`Mydemo`).
    pub kind: &'static str,
    /// The list kind (`MydemoList`).
    pub list_kind: &'static str,
    /// The plural resource (`mydemos`).
    pub plural: &'static str,
    /// The singular name (`mydemo`).
    pub singular: &'static str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Subresources the server serves (`status`, `scale`).
    pub subresources: &'static [&'static str],
    /// Short names for kubectl (`md`).
    pub short_names: &'static [&'static str],
}

impl ResourceInfo {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        GroupVersion {
            group: self.group,
            version: self.version,
        }
        .api_version()
    }

    /// The group-version-kind.
    #[cfg(feature = "kube")]
    #[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(self.group, self.version, self.kind)
    }

    /// Whether the server serves `subresource` (such as `status`) for this resource.
    pub fn has_subresource(&self, subresource: &str) -> bool {
        self.subresources.contains(&subresource)
    }

    /// The dynamic `ApiResource` for `kube::Api<DynamicObject>`.
    #[cfg(feature = "kube")]
    #[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_string(),
            version: self.version.to_string(),
            api_version: self.api_version(),
            kind: self.kind.to_string(),
            plural: self.plural.to_string(),
        }
    }
}
