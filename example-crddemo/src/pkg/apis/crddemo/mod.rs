//! The `crddemo.k8s.io` API group.

pub mod v1;
