// +k8s:deepcopy-gen=package
// +groupName=crddemo.k8s.io
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"

//! Version `v1alpha1` of the `crddemo.k8s.io` API: the `Mydemo` kind with its address in one
//! field, `address: "<ip>:<port>"`. Served beside the storage version [`v1`](super::v1) and
//! converted to and from it by crddemo's conversion webhook (`crate::webhook`).

mod types;
#[rustfmt::skip]
mod zz_generated_crd;
#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_register;

pub use types::*;
pub use zz_generated_register::*;
