//! The hand-written methods client-go adds to its generated clients (its `*_expansion.go`
//! files): inherent methods of the generated clients, and the same as functions over any
//! `kube::Client` and a namespace.
//!
//! * `PodClient::get_logs` / `stream_logs` — a container's log (`follow`, `container`,
//!   `tail_lines`, `since_seconds` … as kube's [`LogParams`](kube::api::LogParams));
//! * `PodClient::evict` and `EvictionClient::evict` — a `policy/v1` Eviction (honours
//!   PodDisruptionBudgets);
//! * `PodClient::bind` — a Binding (what a scheduler does).
//!
//! `ServiceAccountClient::create_token` (TokenRequest) and `get_scale`/`update_scale` come from
//! the kinds' `+genclient:method` tags; every group-version client's `rest_client()` is
//! [`kube_codegen_runtime::rest::RestClient`].

pub mod core_v1;
#[cfg(feature = "policy")]
#[cfg_attr(docsrs, doc(cfg(feature = "policy")))]
pub mod policy_v1;
