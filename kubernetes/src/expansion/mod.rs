//! The hand-written methods client-go adds to its generated clients (its `*_expansion.go`
//! files), as functions over a client and a namespace: what the generated `PodClient` and
//! `ServiceAccountClient` call, and what any `kube::Client` can use directly.
//!
//! * [`core_v1::get_logs`] / [`core_v1::stream_logs`] — a container's log (`follow`, `container`,
//!   `tail_lines`, `since_seconds` … as kube's [`LogParams`](kube::api::LogParams));
//! * [`core_v1::evict`] — a `policy/v1` Eviction (honours PodDisruptionBudgets);
//! * [`core_v1::bind`] — a Binding (what a scheduler does);
//! * [`core_v1::create_token`] — a service account token (TokenRequest).
//!
//! Every group-version's `rest_client()` is [`kube_codegen_runtime::rest::RestClient`].

#[cfg(feature = "core")]
pub mod core_v1;
