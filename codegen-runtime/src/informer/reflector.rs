//! The list-then-watch loop that feeds an informer (client-go's `Reflector`).
//!
//! Written directly over [`kube::Client`] rather than on `kube::runtime::watcher` so that every
//! failure mode has the recovery client-go gives it:
//!
//! | what happens | what the loop does |
//! | --- | --- |
//! | list fails | back off, list again |
//! | a `continue` token expires (410) mid-way through a paginated list | list again in one request |
//! | watch **start** answered with HTTP 410 Gone | relist (kube's watcher retries the same version) |
//! | watch `ERROR` event with code 410 | relist |
//! | other watch start failure: 429, 5xx, connection error | back off, watch again from the same version |
//! | other watch start failure: 4xx (403, 404 …) | back off, relist |
//! | watch stream error, or `ERROR` event other than 410 | back off, watch again from the last version seen |
//! | server ends the watch (its `timeoutSeconds`) | watch again at once from the last version seen |
//! | nothing received for `timeoutSeconds + 5 s` (dead connection) | watch again from the last version seen |
//! | a watch ends within 1 s having delivered nothing | treated as a failure (backoff), as client-go's "very short watch" |
//! | 410 again right after a relist | back off before relisting again, so a broken server is not hammered |
//!
//! Bookmarks are requested (`allowWatchBookmarks=true`) and keep the resume version fresh.

use std::fmt::Debug;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use kube::api::{ListParams, ObjectList, WatchEvent, WatchParams};
use kube::core::Request;
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backoff::{Backoff, BackoffConfig};
use crate::api_status::is_gone;

/// A change the watch reported.
pub(crate) enum Delta<K> {
    /// `ADDED` or `MODIFIED`.
    Upsert(K),
    /// `DELETED`.
    Delete(K),
}

/// Where the reflector puts what it learns.
pub(crate) trait Sink<K>: Send + Sync {
    /// A complete list at `resource_version`.
    fn replace(&self, items: Vec<K>, resource_version: String);
    /// One watch event.
    fn apply(&self, delta: Delta<K>, resource_version: Option<String>);
    /// A bookmark moved the resume version.
    fn bookmark(&self, resource_version: String);
}

/// Why a list failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListError {
    #[error(transparent)]
    Api(#[from] kube::Error),
    #[error("the list response has no metadata.resourceVersion to watch from")]
    NoResourceVersion,
}

enum WatchEnd {
    Cancelled,
    /// 410 Gone: the version is too old; relist.
    Gone,
    /// Failed; back off, then relist or watch again from the last version.
    Failed {
        relist: bool,
    },
    /// The server closed the stream.
    Ended {
        events: usize,
    },
}

/// The settings of one list/watch loop.
#[derive(Clone)]
pub(crate) struct Reflector {
    pub(crate) client: kube::Client,
    pub(crate) request: Request,
    /// Selectors and other list options; pagination fields are managed by the loop.
    pub(crate) list_params: ListParams,
    pub(crate) page_size: Option<u32>,
    /// The server-side watch timeout; `None` picks 240–290 s at random for each watch.
    pub(crate) watch_timeout: Option<Duration>,
    pub(crate) backoff: BackoffConfig,
    /// For logs.
    pub(crate) name: String,
}

/// Transient failures are worth retrying the same watch for; others call for a relist.
fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        _ => true,
    }
}

async fn sleep_or_cancel(d: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        _ = cancel.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

impl Reflector {
    /// Lists and watches until `cancel` fires.
    pub(crate) async fn run<K>(&self, sink: &dyn Sink<K>, cancel: &CancellationToken)
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let mut backoff = Backoff::new(self.backoff);
        let mut resume: Option<String> = None;
        let mut listed_at = Instant::now();
        while !cancel.is_cancelled() {
            let from = match resume.clone() {
                Some(rv) => rv,
                None => {
                    let listed = tokio::select! {
                        _ = cancel.cancelled() => return,
                        r = self.list::<K>() => r,
                    };
                    match listed {
                        Ok((items, rv)) => {
                            tracing::debug!(informer = %self.name, count = items.len(), resource_version = %rv, "listed");
                            sink.replace(items, rv.clone());
                            listed_at = Instant::now();
                            resume = Some(rv.clone());
                            rv
                        }
                        Err(e) => {
                            tracing::warn!(informer = %self.name, error = %e, "list failed; retrying after backoff");
                            if !sleep_or_cancel(backoff.next_delay(), cancel).await {
                                return;
                            }
                            continue;
                        }
                    }
                }
            };
            let started = Instant::now();
            match self.watch(sink, &from, &mut resume, cancel).await {
                WatchEnd::Cancelled => return,
                WatchEnd::Gone => {
                    resume = None;
                    let right_after_list = listed_at.elapsed() < Duration::from_secs(1);
                    tracing::info!(informer = %self.name, resource_version = %from, "resource version expired (410 Gone); relisting");
                    if right_after_list && !sleep_or_cancel(backoff.next_delay(), cancel).await {
                        return;
                    }
                }
                WatchEnd::Failed { relist } => {
                    if relist {
                        resume = None;
                    }
                    if !sleep_or_cancel(backoff.next_delay(), cancel).await {
                        return;
                    }
                }
                WatchEnd::Ended { events } => {
                    if events == 0 && started.elapsed() < Duration::from_secs(1) {
                        tracing::warn!(informer = %self.name, "very short watch: it ended at once without an event; backing off");
                        if !sleep_or_cancel(backoff.next_delay(), cancel).await {
                            return;
                        }
                    } else {
                        tracing::debug!(informer = %self.name, events, "watch ended; resuming");
                    }
                }
            }
        }
    }

    /// A complete, paginated list and its resourceVersion.
    async fn list<K>(&self) -> Result<(Vec<K>, String), ListError>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let mut lp = self.list_params.clone();
        lp.continue_token = None;
        if lp.limit.is_none() {
            lp.limit = self.page_size;
        }
        let mut items = Vec::new();
        let mut unpaginated_retry = false;
        loop {
            let mut req = self.request.list(&lp).map_err(kube::Error::BuildRequest)?;
            req.extensions_mut().insert("list");
            match self.client.request::<ObjectList<K>>(req).await {
                Ok(page) => {
                    if items.is_empty() {
                        items = page.items;
                    } else {
                        items.extend(page.items);
                    }
                    match page.metadata.continue_.filter(|c| !c.is_empty()) {
                        Some(token) => lp.continue_token = Some(token),
                        None => {
                            let rv = page
                                .metadata
                                .resource_version
                                .filter(|rv| !rv.is_empty())
                                .ok_or(ListError::NoResourceVersion)?;
                            return Ok((items, rv));
                        }
                    }
                }
                Err(e) if is_gone(&e) && lp.continue_token.is_some() && !unpaginated_retry => {
                    tracing::info!(informer = %self.name, "list continue token expired; listing again in one request");
                    items.clear();
                    lp.continue_token = None;
                    lp.limit = None;
                    unpaginated_retry = true;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn watch_params(&self) -> WatchParams {
        let timeout = self
            .watch_timeout
            .unwrap_or_else(|| Duration::from_secs(fastrand::u64(240..=290)));
        WatchParams {
            label_selector: self.list_params.label_selector.clone(),
            field_selector: self.list_params.field_selector.clone(),
            timeout: Some(u32::try_from(timeout.as_secs()).unwrap_or(u32::MAX).max(1)),
            bookmarks: true,
            send_initial_events: false,
        }
    }

    async fn watch<K>(
        &self,
        sink: &dyn Sink<K>,
        from: &str,
        resume: &mut Option<String>,
        cancel: &CancellationToken,
    ) -> WatchEnd
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let wp = self.watch_params();
        let idle =
            Duration::from_secs(u64::from(wp.timeout.unwrap_or(290))) + Duration::from_secs(5);
        let mut req = match self.request.watch(&wp, from) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(informer = %self.name, error = %e, "cannot build the watch request");
                return WatchEnd::Failed { relist: true };
            }
        };
        req.extensions_mut().insert("watch");
        let started = tokio::select! {
            _ = cancel.cancelled() => return WatchEnd::Cancelled,
            r = self.client.request_events::<K>(req) => r,
        };
        let stream = match started {
            Ok(s) => s,
            Err(e) if is_gone(&e) => return WatchEnd::Gone,
            Err(e) => {
                let relist = !is_transient(&e);
                tracing::warn!(informer = %self.name, error = %e, relist, "watch failed to start; retrying after backoff");
                return WatchEnd::Failed { relist };
            }
        };
        futures::pin_mut!(stream);
        let mut events = 0usize;
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return WatchEnd::Cancelled,
                n = tokio::time::timeout(idle, stream.next()) => n,
            };
            let event = match next {
                Err(_) => {
                    tracing::warn!(informer = %self.name, ?idle, "watch idle for too long; reconnecting");
                    return WatchEnd::Failed { relist: false };
                }
                Ok(None) => return WatchEnd::Ended { events },
                Ok(Some(Err(e))) => {
                    tracing::warn!(informer = %self.name, error = %e, "watch stream failed; resuming after backoff");
                    return WatchEnd::Failed { relist: false };
                }
                Ok(Some(Ok(event))) => event,
            };
            events += 1;
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                    let rv = o.meta().resource_version.clone();
                    if let Some(rv) = &rv {
                        *resume = Some(rv.clone());
                    }
                    sink.apply(Delta::Upsert(o), rv);
                }
                WatchEvent::Deleted(o) => {
                    let rv = o.meta().resource_version.clone();
                    if let Some(rv) = &rv {
                        *resume = Some(rv.clone());
                    }
                    sink.apply(Delta::Delete(o), rv);
                }
                WatchEvent::Bookmark(b) => {
                    let rv = b.metadata.resource_version;
                    if !rv.is_empty() {
                        *resume = Some(rv.clone());
                        sink.bookmark(rv);
                    }
                }
                WatchEvent::Error(status)
                    if status.code == 410
                        || status.reason == "Expired"
                        || status.reason == "Gone" =>
                {
                    return WatchEnd::Gone;
                }
                WatchEvent::Error(status) => {
                    tracing::warn!(informer = %self.name, code = status.code, reason = %status.reason, message = %status.message, "watch error event; resuming after backoff");
                    return WatchEnd::Failed { relist: false };
                }
            }
        }
    }
}
