use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ListMeta, ObjectMeta};
use serde::{Deserialize, Serialize};

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:printcolumn:name=Address,type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

/// A `Mydemo` as version `v1alpha1` spells it: the address to expose in one string.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Mydemo {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: MydemoSpec,
    /// The observed state, written by the controller through the status subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MydemoStatus>,
}

/// The desired state of a [`Mydemo`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MydemoSpec {
    /// The address to expose, `<ip>:<port>`; an IPv6 address in brackets (`[::1]:8080`).
    // +kubebuilder:validation:MinLength=3
    pub address: String,
}

/// The observed state of a [`Mydemo`]: as in `v1`.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MydemoStatus {
    /// The `metadata.generation` the controller last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The `Ready` condition and its reason.
    // +listType=map
    // +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The Service the controller created for this Mydemo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

/// A list of [`Mydemo`] objects.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MydemoList {
    /// Standard list metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects.
    pub items: Vec<Mydemo>,
}
