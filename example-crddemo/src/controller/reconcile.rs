//! The sync handler: one pass over one `Mydemo`, reading it from the lister and making the
//! world match it. Level-triggered: it never asks what event brought the key here.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{DeleteParams, GetParams, PostParams};
use kube::runtime::events::{Event, EventType};
use kube::{Api, Resource};
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::api_status::{is_already_exists, is_conflict, is_invalid, is_not_found};

use super::resources::{
    corrected_endpoint_slice, corrected_service, desired_endpoint_slice, desired_service,
    endpoint_slice_matches, is_owned_by, service_matches, service_name,
};
use super::status::{
    Desired, REASON_INVALID, REASON_RESOURCE_EXISTS, REASON_SYNCED, differs, next_status,
    ready_condition, status_apply_configuration,
};
use super::validate::{Endpoint, validate};
use super::{CONTROLLER_NAME, Context};
use crate::pkg::apis::crddemo::v1::Mydemo;

/// Why a sync failed; the key is requeued with backoff.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The work queue held something that is not a `namespace/name` key.
    #[error("invalid key {0:?}")]
    InvalidKey(String),
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What the controller was doing.
        action: String,
        /// The error.
        #[source]
        source: kube::Error,
    },
    /// An object of the same name exists and is not controlled by this Mydemo.
    #[error("{kind} {name} already exists and is not managed by Mydemo {mydemo}")]
    NotOwned {
        /// `Service` or `EndpointSlice`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The Mydemo that wanted it.
        mydemo: String,
    },
}

fn api(action: impl Into<String>) -> impl FnOnce(kube::Error) -> SyncError {
    let action = action.into();
    move |source| SyncError::Api { action, source }
}

/// What a sync did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The Mydemo is gone.
    Deleted,
    /// The Mydemo is being deleted (finalizers pending); nothing to do.
    Terminating,
    /// The spec is invalid: Ready=False, no Service.
    Invalid,
    /// Service, EndpointSlice and status are as the spec asks.
    Synced,
}

/// Syncs the Mydemo behind `key` (`namespace/name`).
pub async fn sync(ctx: &Context, key: &str) -> Result<Outcome, SyncError> {
    let (Some(namespace), name) = kube_codegen_runtime::store::split_key(key) else {
        return Err(SyncError::InvalidKey(key.to_string()));
    };
    let mydemo = match ctx.mydemos.namespaced(namespace).get(name) {
        Ok(m) => m,
        Err(e) if is_not_found(&e) => {
            tracing::info!(
                mydemo = key,
                "Mydemo deleted: its Service and EndpointSlice go with it through their owner references"
            );
            return Ok(Outcome::Deleted);
        }
        Err(e) => return Err(api(format!("reading Mydemo {key} from the cache"))(e)),
    };
    if mydemo.metadata.deletion_timestamp.is_some() {
        tracing::debug!(mydemo = key, "being deleted; waiting for its finalizers");
        return Ok(Outcome::Terminating);
    }
    tracing::debug!(mydemo = key, generation = ?mydemo.metadata.generation, "processing");
    match validate(&mydemo.spec) {
        Err(invalid) => mark_invalid(ctx, &mydemo, namespace, name, invalid.to_string()).await,
        // The server refused this very generation already; only a spec change retries it.
        Ok(_) if judged_invalid(&mydemo) => Ok(Outcome::Invalid),
        Ok(endpoint) => {
            let owned = async {
                let svc = ensure_service(ctx, &mydemo, namespace, endpoint).await?;
                let slice = ensure_endpoint_slice(ctx, &mydemo, namespace, endpoint).await?;
                Ok::<_, SyncError>(svc || slice)
            };
            let changed = match owned.await {
                Ok(changed) => changed,
                Err(e @ SyncError::NotOwned { .. }) => {
                    // Surface the clash, then keep retrying with backoff until the name is free.
                    let desired = Desired {
                        ready: false,
                        reason: REASON_RESOURCE_EXISTS,
                        message: e.to_string(),
                        service_name: None,
                    };
                    if write_status(ctx, &mydemo, &desired).await? {
                        publish(
                            ctx,
                            &mydemo,
                            EventType::Warning,
                            REASON_RESOURCE_EXISTS,
                            &e.to_string(),
                        )
                        .await;
                    }
                    return Err(e);
                }
                // The server refused what the spec asks for (a loopback or link-local IP in an
                // EndpointSlice, say): as permanent as a spec that fails validation here.
                Err(e) => {
                    return match rejection(&e) {
                        Some(message) => mark_invalid(ctx, &mydemo, namespace, name, message).await,
                        None => Err(e),
                    };
                }
            };
            let desired = Desired {
                ready: true,
                reason: REASON_SYNCED,
                message: format!(
                    "Service {} exposes {}",
                    service_name(&mydemo),
                    socket(endpoint)
                ),
                service_name: Some(service_name(&mydemo)),
            };
            let status_changed = write_status(ctx, &mydemo, &desired).await?;
            if changed || status_changed {
                publish(
                    ctx,
                    &mydemo,
                    EventType::Normal,
                    REASON_SYNCED,
                    "Mydemo synced successfully",
                )
                .await;
            }
            Ok(Outcome::Synced)
        }
    }
}

/// Ready=False with reason `InvalidSpec`, nothing exposed, a Warning event when something
/// changed; no requeue: the next spec change brings the key back.
async fn mark_invalid(
    ctx: &Context,
    mydemo: &Arc<Mydemo>,
    namespace: &str,
    name: &str,
    message: String,
) -> Result<Outcome, SyncError> {
    let removed = remove_owned(ctx, mydemo, namespace, name).await?;
    let desired = Desired {
        ready: false,
        reason: REASON_INVALID,
        message,
        service_name: None,
    };
    let status_changed = write_status(ctx, mydemo, &desired).await?;
    if status_changed || removed {
        tracing::warn!(mydemo = %format!("{namespace}/{name}"), reason = %desired.message, "invalid spec");
        publish(
            ctx,
            mydemo,
            EventType::Warning,
            REASON_INVALID,
            &desired.message,
        )
        .await;
    }
    Ok(Outcome::Invalid)
}

/// Whether the status already says `InvalidSpec` for the current generation.
fn judged_invalid(mydemo: &Mydemo) -> bool {
    let observed = mydemo.status.as_ref().and_then(|s| s.observed_generation);
    observed.is_some()
        && observed == mydemo.metadata.generation
        && ready_condition(mydemo)
            .is_some_and(|c| c.status == "False" && c.reason == REASON_INVALID)
}

/// The message of a 422 Invalid answer to writing an owned object: the API server's own
/// validation refused what the spec asks for.
fn rejection(e: &SyncError) -> Option<String> {
    match e {
        SyncError::Api { action, source } if is_invalid(source) => {
            let detail = kube_codegen_runtime::api_status::status(source)
                .map(|s| s.message.clone())
                .unwrap_or_default();
            Some(format!("the API server refused it ({action}): {detail}"))
        }
        _ => None,
    }
}

fn socket(ep: Endpoint) -> String {
    std::net::SocketAddr::new(ep.ip, ep.port).to_string()
}

/// Publishes an Event about `mydemo`. Events are best effort, as client-go's recorder is: a
/// failure is logged, never fails the sync.
async fn publish(ctx: &Context, mydemo: &Mydemo, type_: EventType, reason: &str, note: &str) {
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note.into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &mydemo.object_ref(&())).await {
        tracing::warn!(error = %e, reason, "could not publish event");
    }
}

/// Creates, or corrects, the Service; returns whether it wrote anything.
async fn ensure_service(
    ctx: &Context,
    mydemo: &Mydemo,
    namespace: &str,
    ep: Endpoint,
) -> Result<bool, SyncError> {
    let api: Api<Service> = Api::namespaced(ctx.client.clone(), namespace);
    let want = desired_service(mydemo, ep);
    let name = service_name(mydemo);
    let live = match ctx.services.namespaced(namespace).get(&name) {
        Ok(s) => Some(s),
        Err(e) if is_not_found(&e) => None,
        Err(e) => return Err(api_err("reading Service", e)),
    };
    let live = match live {
        Some(s) => (*s).clone(),
        None => match api.create(&PostParams::default(), &want).await {
            Ok(_) => {
                tracing::info!(service = %format!("{namespace}/{name}"), "created Service");
                return Ok(true);
            }
            // The cache lags behind a Service created moments ago (or it lost our label).
            Err(e) if is_already_exists(&e) => api
                .get_with(&name, &GetParams::default())
                .await
                .map_err(|e| api_err("reading Service", e))?,
            Err(e) => return Err(api_err("creating Service", e)),
        },
    };
    if !is_owned_by(&live.metadata, mydemo) {
        return Err(SyncError::NotOwned {
            kind: "Service",
            name,
            mydemo: mydemo.metadata.name.clone().unwrap_or_default(),
        });
    }
    if service_matches(&live, &want) {
        return Ok(false);
    }
    let fixed = corrected_service(&live, &want);
    match api.replace(&name, &PostParams::default(), &fixed).await {
        Ok(_) => {
            tracing::info!(service = %format!("{namespace}/{name}"), "corrected Service");
            Ok(true)
        }
        // Someone else wrote it meanwhile; the informer brings the new version and a new sync.
        Err(e) if is_conflict(&e) => Err(api_err("updating Service (conflict, will retry)", e)),
        Err(e) => Err(api_err("updating Service", e)),
    }
}

/// Creates, or corrects, the EndpointSlice; returns whether it wrote anything.
async fn ensure_endpoint_slice(
    ctx: &Context,
    mydemo: &Mydemo,
    namespace: &str,
    ep: Endpoint,
) -> Result<bool, SyncError> {
    let api: Api<EndpointSlice> = Api::namespaced(ctx.client.clone(), namespace);
    let want = desired_endpoint_slice(mydemo, ep);
    let name = want.metadata.name.clone().unwrap_or_default();
    let live = match ctx.slices.namespaced(namespace).get(&name) {
        Ok(s) => Some(s),
        Err(e) if is_not_found(&e) => None,
        Err(e) => return Err(api_err("reading EndpointSlice", e)),
    };
    let live = match live {
        Some(s) => (*s).clone(),
        None => match api.create(&PostParams::default(), &want).await {
            Ok(_) => {
                tracing::info!(endpointslice = %format!("{namespace}/{name}"), "created EndpointSlice");
                return Ok(true);
            }
            Err(e) if is_already_exists(&e) => api
                .get_with(&name, &GetParams::default())
                .await
                .map_err(|e| api_err("reading EndpointSlice", e))?,
            Err(e) => return Err(api_err("creating EndpointSlice", e)),
        },
    };
    if !is_owned_by(&live.metadata, mydemo) {
        return Err(SyncError::NotOwned {
            kind: "EndpointSlice",
            name,
            mydemo: mydemo.metadata.name.clone().unwrap_or_default(),
        });
    }
    if endpoint_slice_matches(&live, &want) {
        return Ok(false);
    }
    // The address type of an EndpointSlice is immutable: IPv4 ↔ IPv6 needs a new slice.
    if live.address_type != want.address_type {
        api.delete(&name, &DeleteParams::default())
            .await
            .map_err(|e| api_err("replacing EndpointSlice", e))?;
        api.create(&PostParams::default(), &want)
            .await
            .map_err(|e| api_err("creating EndpointSlice", e))?;
        return Ok(true);
    }
    let fixed = corrected_endpoint_slice(&live, &want);
    api.replace(&name, &PostParams::default(), &fixed)
        .await
        .map_err(|e| api_err("updating EndpointSlice", e))?;
    tracing::info!(endpointslice = %format!("{namespace}/{name}"), port = ep.port, "updated EndpointSlice");
    Ok(true)
}

/// Deletes the Service and EndpointSlice this Mydemo owns (an invalid spec exposes nothing);
/// returns whether anything was deleted.
async fn remove_owned(
    ctx: &Context,
    mydemo: &Mydemo,
    namespace: &str,
    name: &str,
) -> Result<bool, SyncError> {
    let mut removed = false;
    if let Ok(svc) = ctx.services.namespaced(namespace).get(name)
        && is_owned_by(&svc.metadata, mydemo)
    {
        let api: Api<Service> = Api::namespaced(ctx.client.clone(), namespace);
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => removed = true,
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(api_err("deleting Service", e)),
        }
    }
    if let Ok(slice) = ctx.slices.namespaced(namespace).get(name)
        && is_owned_by(&slice.metadata, mydemo)
    {
        let api: Api<EndpointSlice> = Api::namespaced(ctx.client.clone(), namespace);
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => removed = true,
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(api_err("deleting EndpointSlice", e)),
        }
    }
    Ok(removed)
}

fn api_err(action: &str, source: kube::Error) -> SyncError {
    SyncError::Api {
        action: action.into(),
        source,
    }
}

/// Writes the status when it would change, by server-side apply to the status subresource as
/// the field manager [`CONTROLLER_NAME`] with `force` (client-go's `ApplyStatus`; the controller
/// is the only author of its fields, so it takes them back from anyone who edited them). Only
/// the controller's fields are applied ([`status_apply_configuration`]): other managers'
/// conditions stay. Apply needs no `resourceVersion`, so there are no conflicts to retry; a
/// Mydemo deleted meanwhile is nothing to write.
async fn write_status(
    ctx: &Context,
    mydemo: &Arc<Mydemo>,
    desired: &Desired,
) -> Result<bool, SyncError> {
    let next = next_status(mydemo, desired);
    if !differs(mydemo, &next) {
        return Ok(false);
    }
    let namespace = mydemo.metadata.namespace.clone().unwrap_or_default();
    let name = mydemo.metadata.name.clone().unwrap_or_default();
    let config = status_apply_configuration(mydemo, &next);
    match ctx
        .clientset
        .crddemo_v1()
        .mydemos(&namespace)
        .apply_status(&config, &ApplyOptions::new(CONTROLLER_NAME).force())
        .await
    {
        Ok(_) => {
            tracing::debug!(mydemo = %format!("{namespace}/{name}"), ready = desired.ready, "status applied");
            Ok(true)
        }
        Err(e) if is_not_found(&e) => Ok(false),
        Err(e) => Err(api_err("applying Mydemo status", e)),
    }
}
