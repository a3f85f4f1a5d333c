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
//! | the connection cut mid-stream (unexpected end of file, read timeout) | watch again at once from the last version seen |
//! | a line that is no event (unknown type, undecodable object) | back off, watch again from the last version seen |
//! | server ends the watch (its `timeoutSeconds`) | watch again at once from the last version seen |
//! | nothing received for `timeoutSeconds + 5 s` (dead connection) | watch again from the last version seen |
//! | a watch ends within 1 s having delivered nothing | treated as a failure (backoff), as client-go's "very short watch" |
//! | 410 again right after a relist | back off before relisting again, so a broken server is not hammered |
//!
//! Bookmarks are requested (`allowWatchBookmarks=true`) and keep the resume version fresh.
//!
//! **WatchList** ([`InformerOptions::watch_list`](super::InformerOptions::watch_list), KEP-3157,
//! as client-go ≥ 1.35's reflector): instead of a list, one watch with `sendInitialEvents=true`,
//! `resourceVersionMatch=NotOlderThan` and `resourceVersion=""` (a consistent read) streams the
//! objects as `ADDED` events; each is decoded as it arrives, and the bookmark annotated
//! `k8s.io/initial-events-end: "true"` replaces the cache at its resourceVersion, after which
//! the same stream goes on as an ordinary watch. No list response is ever held whole. A server
//! that refuses it (an error other than 410, 429 or 5xx before that bookmark — a server without
//! the feature answers 400, or 422 for the parameters) is listed instead, from then on.
//!
//! Nothing here is generic over the object type: pages and watch lines are decoded as envelopes
//! whose objects stay raw JSON, and a [`Sink`] decodes each object into the cache's type as
//! soon as it is read (a page is freed before the next is requested).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{ListParams, WatchParams};
use kube::core::Request;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backoff::{Backoff, BackoffConfig};
use crate::api_status::is_gone;
use crate::store::Incoming;

/// Where the reflector puts what it learns. Objects reach it as the server's JSON: the loop
/// (list, watch, backoff) is compiled once in this crate, and only this trait's small
/// implementation is compiled for each object type a program informs on.
pub(crate) trait Sink: Send + Sync {
    /// Decodes one object of a list (a page's item, or an initial event of a WatchList).
    fn decode(&self, object: &RawValue) -> serde_json::Result<Incoming>;
    /// A complete list at `resource_version` replaces the cache.
    fn replace(&self, items: Vec<Incoming>, resource_version: String);
    /// One `ADDED`/`MODIFIED` (`deleted` false) or `DELETED` object; returns its
    /// resourceVersion.
    fn apply(&self, object: &RawValue, deleted: bool) -> serde_json::Result<Option<String>>;
    /// A bookmark moved the resume version.
    fn bookmark(&self, resource_version: String);
}

/// One page of a list, its items left undecoded.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PageMeta {
    #[serde(default, rename = "continue")]
    continue_: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
}

/// One line of a watch stream, its object left undecoded.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// The object of a `BOOKMARK` event: only its resourceVersion is meaningful.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BookmarkObject {
    metadata: BookmarkMeta,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BookmarkMeta {
    #[serde(default)]
    resource_version: String,
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

/// The annotation of the bookmark that ends a WatchList's initial events.
pub(crate) const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

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
    /// Sync with a WatchList rather than a list, while the server has not refused one.
    pub(crate) watch_list: bool,
    /// KEP-5866's `shardSelector`, added to every list and watch request.
    pub(crate) shard_selector: Option<String>,
    /// The server refused a WatchList: list from now on.
    pub(crate) watch_list_refused: Arc<AtomicBool>,
    /// List and watch `PartialObjectMetadata` (the `Accept` header asks for it).
    pub(crate) metadata_only: bool,
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
    pub(crate) async fn run(&self, sink: &dyn Sink, cancel: &CancellationToken) {
        let mut backoff = Backoff::new(self.backoff);
        let mut resume: Option<String> = None;
        let mut listed_at = Instant::now();
        while !cancel.is_cancelled() {
            let from = match resume.clone() {
                Some(rv) => rv,
                None if self.watch_list && !self.watch_list_refused.load(Ordering::Acquire) => {
                    // The initial events, then the watch goes on in the same stream.
                    let started = Instant::now();
                    let end = self.watch(sink, "", &mut resume, cancel).await;
                    if resume.is_some() {
                        listed_at = started;
                    }
                    match end {
                        WatchEnd::Cancelled => return,
                        // Refused at the start (400, 403, 422 …): list, now and from now on.
                        WatchEnd::Failed { relist: true } if resume.is_none() => {
                            tracing::info!(informer = %self.name, "the server refused a WatchList; listing instead");
                            self.watch_list_refused.store(true, Ordering::Release);
                        }
                        // Synced, then the stream ended: watch on from where it was.
                        WatchEnd::Ended { .. } if resume.is_some() => {}
                        WatchEnd::Gone => {
                            resume = None;
                            if !sleep_or_cancel(backoff.next_delay(), cancel).await {
                                return;
                            }
                        }
                        // Failed before or after the sync: back off, then go on from where it
                        // was (or open a new WatchList).
                        _ => {
                            if !sleep_or_cancel(backoff.next_delay(), cancel).await {
                                return;
                            }
                        }
                    }
                    continue;
                }
                None => {
                    let listed = tokio::select! {
                        _ = cancel.cancelled() => return,
                        r = self.list(sink) => r,
                    };
                    let listed = listed.map(|(items, rv)| {
                        let count = items.len();
                        sink.replace(items, rv.clone());
                        (count, rv)
                    });
                    match listed {
                        Ok((count, rv)) => {
                            tracing::debug!(informer = %self.name, count, resource_version = %rv, "listed");
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

    /// A complete, paginated list and its resourceVersion, each page's items decoded before
    /// the next page is requested.
    async fn list(&self, sink: &dyn Sink) -> Result<(Vec<Incoming>, String), ListError> {
        let mut lp = self.list_params.clone();
        lp.continue_token = None;
        if lp.limit.is_none() {
            lp.limit = self.page_size;
        }
        let mut items = Vec::new();
        let mut unpaginated_retry = false;
        loop {
            let req = if self.metadata_only {
                self.request.list_metadata(&lp)
            } else {
                self.request.list(&lp)
            };
            let mut req = req.map_err(kube::Error::BuildRequest)?;
            self.add_shard_selector(&mut req)?;
            req.extensions_mut().insert("list");
            let body = self.client.request_text(req).await.and_then(|text| {
                let page: Page<'_> =
                    serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
                for item in page.items.unwrap_or_default() {
                    items.push(sink.decode(item).map_err(kube::Error::SerdeError)?);
                }
                Ok(page.metadata)
            });
            match body {
                Ok(page) => match page.continue_.filter(|c| !c.is_empty()) {
                    Some(token) => lp.continue_token = Some(token),
                    None => {
                        let rv = page
                            .resource_version
                            .filter(|rv| !rv.is_empty())
                            .ok_or(ListError::NoResourceVersion)?;
                        return Ok((items, rv));
                    }
                },
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

    /// Appends `shardSelector` (KEP-5866) to a list or watch request's query, which kube's
    /// parameter types do not know.
    fn add_shard_selector<B>(&self, req: &mut http::Request<B>) -> Result<(), kube::Error> {
        let Some(selector) = &self.shard_selector else {
            return Ok(());
        };
        let encoded: String = form_urlencoded::byte_serialize(selector.as_bytes()).collect();
        let uri = req.uri().to_string();
        let sep = if uri.contains('?') { '&' } else { '?' };
        let uri = format!("{uri}{sep}shardSelector={encoded}");
        *req.uri_mut() = uri.parse().map_err(|e: http::uri::InvalidUri| {
            kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e.into()))
        })?;
        Ok(())
    }

    fn watch_params(&self, initial_events: bool) -> WatchParams {
        let timeout = self
            .watch_timeout
            .unwrap_or_else(|| Duration::from_secs(fastrand::u64(240..=290)));
        WatchParams {
            label_selector: self.list_params.label_selector.clone(),
            field_selector: self.list_params.field_selector.clone(),
            timeout: Some(u32::try_from(timeout.as_secs()).unwrap_or(u32::MAX).max(1)),
            bookmarks: true,
            send_initial_events: initial_events,
        }
    }

    /// Watches from `from`; from `""`, a WatchList: the initial events are collected in
    /// `initial` until the bookmark that ends them replaces the cache and sets `resume`.
    async fn watch(
        &self,
        sink: &dyn Sink,
        from: &str,
        resume: &mut Option<String>,
        cancel: &CancellationToken,
    ) -> WatchEnd {
        let mut initial: Option<Vec<Incoming>> = from.is_empty().then(Vec::new);
        let wp = self.watch_params(initial.is_some());
        let idle =
            Duration::from_secs(u64::from(wp.timeout.unwrap_or(290))) + Duration::from_secs(5);
        let req = if self.metadata_only {
            self.request.watch_metadata(&wp, from)
        } else {
            self.request.watch(&wp, from)
        };
        let mut req = match req {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(informer = %self.name, error = %e, "cannot build the watch request");
                return WatchEnd::Failed { relist: true };
            }
        };
        if let Err(e) = self.add_shard_selector(&mut req) {
            tracing::error!(informer = %self.name, error = %e, "cannot add the shard selector to the watch request");
            return WatchEnd::Failed { relist: true };
        }
        req.extensions_mut().insert("watch");
        // kube-apiserver ≥ 1.37 gzips a watch one member per event, which the client's
        // decompression does not follow past the first: ask for the stream uncompressed.
        req.headers_mut()
            .entry(http::header::ACCEPT_ENCODING)
            .or_insert(http::HeaderValue::from_static("identity"));
        let started = tokio::select! {
            _ = cancel.cancelled() => return WatchEnd::Cancelled,
            r = self.client.request_stream(req) => r,
        };
        let mut lines = match started {
            Ok(body) => body.lines(),
            Err(e) if is_gone(&e) => return WatchEnd::Gone,
            Err(e) => {
                let relist = !is_transient(&e);
                tracing::warn!(informer = %self.name, error = %e, relist, "watch failed to start; retrying after backoff");
                return WatchEnd::Failed { relist };
            }
        };
        let mut events = 0usize;
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return WatchEnd::Cancelled,
                n = tokio::time::timeout(idle, lines.next()) => n,
            };
            let line = match next {
                Err(_) => {
                    tracing::warn!(informer = %self.name, ?idle, "watch idle for too long; reconnecting");
                    return WatchEnd::Failed { relist: false };
                }
                Ok(None) => return WatchEnd::Ended { events },
                // A connection cut mid-stream (a proxy, the server's own timeout): resume at once.
                Ok(Some(Err(e))) if is_cut(&e) => {
                    tracing::debug!(informer = %self.name, error = %e, "watch stream cut; resuming");
                    return WatchEnd::Ended { events };
                }
                Ok(Some(Err(e))) => {
                    tracing::warn!(informer = %self.name, error = %e, "watch stream failed; resuming after backoff");
                    return WatchEnd::Failed { relist: false };
                }
                Ok(Some(Ok(line))) => line,
            };
            if line.trim().is_empty() {
                continue;
            }
            events += 1;
            let event = match initial.as_mut() {
                Some(staged) => self.initial_event(sink, &line, staged),
                None => self.event(sink, &line),
            };
            match event {
                Ok(Event::Synced(rv)) => {
                    let items = initial.take().unwrap_or_default();
                    tracing::debug!(informer = %self.name, count = items.len(), resource_version = %rv, "initial events received (WatchList)");
                    sink.replace(items, rv.clone());
                    *resume = Some(rv);
                }
                Ok(Event::Resume(rv)) => {
                    if let Some(rv) = rv.filter(|_| initial.is_none()) {
                        *resume = Some(rv);
                    }
                }
                Ok(Event::Error(status)) if is_gone_status(&status) => return WatchEnd::Gone,
                Ok(Event::Error(status)) => {
                    tracing::warn!(informer = %self.name, code = status.code, reason = status.reason.as_deref().unwrap_or_default(), message = status.message.as_deref().unwrap_or_default(), "watch error event; resuming after backoff");
                    return WatchEnd::Failed { relist: false };
                }
                // The last line of a stream cut mid-event.
                Err(e) if e.is_eof() => {}
                Err(e) => {
                    tracing::warn!(informer = %self.name, error = %e, "undecodable watch event; resuming after backoff");
                    return WatchEnd::Failed { relist: false };
                }
            }
        }
    }

    /// Decodes one line of a WatchList's initial events into `staged`; the bookmark that ends
    /// them is [`Event::Synced`].
    fn initial_event(
        &self,
        sink: &dyn Sink,
        line: &str,
        staged: &mut Vec<Incoming>,
    ) -> serde_json::Result<Event> {
        let Ok(parsed) = serde_json::from_str::<Line<'_>>(line) else {
            return self.event(sink, line);
        };
        match parsed.kind {
            "ADDED" | "MODIFIED" => {
                staged.push(sink.decode(parsed.object)?);
                Ok(Event::Resume(None))
            }
            "DELETED" => {
                let gone = sink.decode(parsed.object)?;
                staged.retain(|o| o.parts() != gone.parts());
                Ok(Event::Resume(None))
            }
            "BOOKMARK" => {
                let b: BookmarkObject = serde_json::from_str(parsed.object.get())?;
                let end = b
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(INITIAL_EVENTS_END))
                    .is_some_and(|v| v == "true");
                if end && !b.metadata.resource_version.is_empty() {
                    Ok(Event::Synced(b.metadata.resource_version))
                } else {
                    Ok(Event::Resume(None))
                }
            }
            _ => self.event(sink, line),
        }
    }

    /// Decodes one line of a watch stream and hands its object to `sink`.
    fn event(&self, sink: &dyn Sink, line: &str) -> serde_json::Result<Event> {
        let line = match serde_json::from_str::<Line<'_>>(line) {
            Ok(line) => line,
            // Not an event: a bare Status is how a server reports a failure mid-stream.
            Err(e) => {
                return match serde_json::from_str::<Status>(line) {
                    Ok(status) if status.code.is_some() => Ok(Event::Error(Box::new(status))),
                    _ => Err(e),
                };
            }
        };
        match line.kind {
            "ADDED" | "MODIFIED" => sink.apply(line.object, false).map(Event::Resume),
            "DELETED" => sink.apply(line.object, true).map(Event::Resume),
            "BOOKMARK" => {
                let b: BookmarkObject = serde_json::from_str(line.object.get())?;
                let rv = b.metadata.resource_version;
                if rv.is_empty() {
                    return Ok(Event::Resume(None));
                }
                sink.bookmark(rv.clone());
                Ok(Event::Resume(Some(rv)))
            }
            "ERROR" => serde_json::from_str(line.object.get()).map(|s| Event::Error(Box::new(s))),
            other => Err(serde::de::Error::custom(format_args!(
                "unknown watch event type {other:?}"
            ))),
        }
    }
}

/// What one watch line was.
enum Event {
    /// The bookmark ending a WatchList's initial events, at this resourceVersion.
    Synced(String),
    /// An object added, modified or deleted, or a bookmark: the resourceVersion to resume
    /// from, if it carried one.
    Resume(Option<String>),
    /// An `ERROR` event.
    Error(Box<Status>),
}

/// 410 Gone (or its reasons): the resourceVersion is too old.
fn is_gone_status(s: &Status) -> bool {
    s.code == Some(410) || matches!(s.reason.as_deref(), Some("Expired" | "Gone"))
}

/// Whether a stream error is the connection ending early rather than a failure: an unexpected
/// end of file anywhere in the error's chain (TLS and chunked decoding report it so), or the
/// client's own read timeout.
fn is_cut(e: &std::io::Error) -> bool {
    if matches!(
        e.kind(),
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::TimedOut
    ) {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|e| e as _);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::UnexpectedEof
        {
            return true;
        }
        if err.to_string().contains("unexpected EOF during chunk") {
            return true;
        }
        source = err.source();
    }
    false
}
