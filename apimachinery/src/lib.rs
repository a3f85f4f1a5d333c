//! Kubernetes' API machinery rules, kept once for the whole project: the generator, the
//! runtime and the in-memory API server all use these, so a name the generator accepts is a
//! name the server accepts, and the same selector means the same thing everywhere.
//!
//! * [`validation`] — object names (RFC 1123/1035) and label keys and values, with
//!   kube-apiserver's messages;
//! * [`labels`] — label selectors: parser, matcher, canonical printing;
//! * [`version`] — API version priority (`v2` > `v1` > `v1beta1` > `v1alpha1`);
//! * [`group`] — protected API groups;
//! * [`resource_version`] — comparing resourceVersions (KEP-5504);
//! * [`resource`] — group/version/resource types and the resource entries the register
//!   generator emits.
//!
//! The crate has no heavy dependencies; the `kube` feature adds conversions to and from kube's
//! and k8s-openapi's types (`LabelSelector`, `ApiResource`, `GroupVersionKind`).
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod group;
pub mod labels;
pub mod resource;
pub mod resource_version;
pub mod validation;
pub mod version;
