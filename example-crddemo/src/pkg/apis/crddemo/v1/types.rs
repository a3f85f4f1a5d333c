use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ListMeta, ObjectMeta};
use serde::{Deserialize, Serialize};

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name=IP,type=string,JSONPath=`.spec.ip`
// +kubebuilder:printcolumn:name=Port,type=integer,JSONPath=`.spec.port`
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

/// A `Mydemo` asks for an address, `ip:port`, to be exposed in the cluster: the crddemo
/// controller answers with a selector-less Service and an EndpointSlice pointing at it.
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
    /// The IPv4 or IPv6 address to expose.
    ///
    /// The schema checks its shape (a dotted quad, or hexadecimal groups and colons that may end
    /// in a dotted quad, as in `::ffff:192.0.2.1`); the controller parses it exactly. No single
    /// OpenAPI `format` accepts both families.
    // +kubebuilder:validation:Pattern=`^(((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){1,5}:((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))$`
    pub ip: String,
    /// The port, 1–65535.
    // +kubebuilder:validation:Minimum=1
    // +kubebuilder:validation:Maximum=65535
    pub port: i32,
}

/// The observed state of a [`Mydemo`].
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
