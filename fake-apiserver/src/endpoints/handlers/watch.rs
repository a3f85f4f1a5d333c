//! `watch`: initial events, events from a resourceVersion out of the storage's bounded
//! history (seen through the request's selection predicate), bookmarks, `sendInitialEvents`,
//! timeouts, 410 Gone, slow watchers cut, and injected faults.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::Shared;
use crate::endpoints::body::ResponseBody;
use crate::endpoints::handlers::{Target, filter, validate_list_options, wait_for_rv};
use crate::endpoints::render::{Format, View, partial_metadata, table};
use crate::endpoints::response::stream_response;
use crate::endpoints::serve::Stopping;
use crate::error::{ApiError, ApiResult};
use crate::faults::{Tap, Verdict};
use crate::semantics::admission::conversion::{Converter, converter};
use crate::semantics::resources::Resource;
use crate::storage::predicate::{FieldTerm, Filter};
use crate::storage::store::{parse_watch_rv, too_large};

/// Faults a watch reactor asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct WatchFault {
    pub(crate) cut_after: Option<usize>,
    pub(crate) error_after: Option<(usize, ApiError)>,
}

/// A watch request.
#[derive(Debug, Clone)]
pub(crate) struct WatchRequest {
    pub(crate) res: Arc<Resource>,
    pub(crate) filter: Filter,
    pub(crate) resource_version: Option<String>,
    pub(crate) allow_bookmarks: bool,
    pub(crate) send_initial_events: Option<bool>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) format: Format,
    pub(crate) fault: WatchFault,
    /// The CRD's conversion webhook, when the watch is through a version that is not stored:
    /// every object of an event goes through it, as kube-apiserver's watch does.
    pub(crate) converter: Option<Converter>,
    /// Set when served over the network: the stream ends when the server stops.
    pub(crate) stopping: Option<Stopping>,
}

const BATCH: usize = 512;

/// Encodes a watch's events in the format it asked for. As kube-apiserver sends them, a
/// Table's column definitions go with the stream's first event only (later Tables carry
/// `columnDefinitions: null`), and a bookmark is a one-row Table too.
struct Encoder<'a> {
    res: &'a Resource,
    format: &'a Format,
    /// Whether a Table with the column definitions was sent.
    headed: bool,
}

impl<'a> Encoder<'a> {
    fn new(res: &'a Resource, format: &'a Format) -> Self {
        Encoder {
            res,
            format,
            headed: false,
        }
    }

    /// One event line.
    fn line(&mut self, kind: &str, obj: &Value) -> Bytes {
        let obj = &*self.res.read_view(obj);
        let object = match self.format {
            Format::Metadata => partial_metadata(obj),
            Format::Table { .. } => self.table(obj),
            Format::Full => {
                let av = self.res.api_version();
                serde_json::to_value(View {
                    obj,
                    type_meta: Some((&av, &self.res.kind)),
                })
                .unwrap_or(Value::Null)
            }
        };
        encode(kind, object)
    }

    /// A bookmark at `rv` (annotated as the end of the initial events if `initial_end`).
    fn bookmark(&mut self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end && let Value::Object(m) = &mut meta {
            m.insert(
                "annotations".into(),
                json!({"k8s.io/initial-events-end": "true"}),
            );
        }
        let object = match self.format {
            Format::Metadata => json!({"kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1", "metadata": meta}),
            Format::Table { .. } => self.table(&json!({"kind": self.res.kind,
                "apiVersion": self.res.api_version(), "metadata": meta})),
            Format::Full => json!({"kind": self.res.kind,
                "apiVersion": self.res.api_version(), "metadata": meta}),
        };
        encode("BOOKMARK", object)
    }

    /// `obj` as a one-row Table at the object's version; the column definitions only in the
    /// first.
    fn table(&mut self, obj: &Value) -> Value {
        let Format::Table { version, include } = self.format else {
            return Value::Null;
        };
        let mut t = table(self.res, &[Arc::new(obj.clone())], version, include, None);
        if let Some(rv) = obj.pointer("/metadata/resourceVersion") {
            t["metadata"] = json!({"resourceVersion": rv});
        }
        if std::mem::replace(&mut self.headed, true) {
            t["columnDefinitions"] = Value::Null;
        }
        t
    }
}

/// The line of a watch event.
fn encode(kind: &str, object: Value) -> Bytes {
    let mut out = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

/// [`Encoder::line`] for an object converted to the watched version first (by the conversion
/// webhook, when there is one); a failed conversion is the error that ends the watch.
async fn event_line(
    enc: &mut Encoder<'_>,
    kind: &str,
    obj: &Value,
    req: &WatchRequest,
) -> ApiResult<Bytes> {
    match &req.converter {
        Some(c) if !matches!(req.format, Format::Metadata) => {
            let converted = c.read(obj.clone()).await?;
            Ok(enc.line(kind, &converted))
        }
        _ => Ok(enc.line(kind, obj)),
    }
}

/// The ERROR event carrying a Status.
pub(crate) fn error_line(e: &ApiError) -> Bytes {
    let mut out =
        serde_json::to_vec(&json!({"type": "ERROR", "object": e.to_status()})).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

struct Start {
    initial: Vec<Arc<Value>>,
    initial_end_bookmark: Option<u64>,
    cursor: u64,
    immediate_error: Option<ApiError>,
    rx: Option<tokio::sync::watch::Receiver<u64>>,
}

fn plan(shared: &Shared, req: &WatchRequest) -> ApiResult<Start> {
    let st = shared.state.lock();
    let rv_param = req.resource_version.as_deref().unwrap_or("");
    // The request handler validated the options (`validate_list_options`).
    let key = req.res.store_key();
    let rx = st.storage.store(&key).map(|s| s.tx.subscribe());
    let snapshot = || -> Vec<Arc<Value>> {
        st.all_objects(&req.res, req.filter.namespace.as_deref())
            .into_iter()
            .filter(|o| req.filter.matches(o))
            .collect()
    };
    let mut start = Start {
        initial: Vec::new(),
        initial_end_bookmark: None,
        cursor: st.rv(),
        immediate_error: None,
        rx,
    };
    match (req.send_initial_events, rv_param) {
        (Some(true), v) => {
            if !v.is_empty() && v != "0" {
                let n = parse_watch_rv(v)?;
                if n > st.rv() {
                    // Still ahead after the wait (`serve`): the stream opens and says so.
                    start.immediate_error = Some(too_large(n, st.rv()));
                    return Ok(start);
                }
            }
            start.initial = snapshot();
            // The end of the initial events is a bookmark, sent only to a client that takes
            // bookmarks.
            if req.allow_bookmarks {
                start.initial_end_bookmark = Some(st.rv());
            }
        }
        (Some(false), "" | "0") => {}
        (None, "" | "0") => start.initial = snapshot(),
        (_, v) => {
            let n = parse_watch_rv(v)?;
            let floor = st.storage.watch_floor(&key);
            if n < floor {
                start.immediate_error = Some(ApiError::expired(format!(
                    "too old resource version: {n} ({})",
                    floor + 1
                )));
            } else {
                // A version from the future: the stream waits for it, as the watch cache does.
                start.cursor = n;
            }
        }
    }
    Ok(start)
}

/// Starts a watch; the receiver yields the lines of the response body.
pub(crate) fn start(shared: Arc<Shared>, req: WatchRequest) -> ApiResult<mpsc::Receiver<Bytes>> {
    let plan = plan(&shared, &req)?;
    tracing::debug!(
        resource = %req.res.store_key(),
        namespace = ?req.filter.namespace,
        from = plan.cursor,
        initial = plan.initial.len(),
        "watch started"
    );
    // One slot more than a watcher may fill: kept for the 410 that cuts a slow watcher.
    let (tx, rx) = mpsc::channel::<Bytes>(WATCH_BUFFER + 1);
    let slow_timeout = shared.state.lock().config.slow_watcher_timeout;
    // Counted as open from now on: a test that sees it open can inject a fault into it.
    let tap = shared.faults.tap(&req.res.plural);
    shared
        .active_watches
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::spawn(async move {
        let counters = shared.clone();
        run(shared, req, plan, tx, slow_timeout, tap).await;
        counters
            .active_watches
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    });
    Ok(rx)
}

/// How many encoded events a watch buffers for a client that reads slowly.
const WATCH_BUFFER: usize = 256;

struct Emitter {
    tx: mpsc::Sender<Bytes>,
    sent: usize,
    fault: WatchFault,
    slow_timeout: Duration,
    /// The resourceVersion of the last event sent.
    last_rv: u64,
    shared: Arc<Shared>,
    /// The faults a test injects ([`crate::faults`]).
    tap: Tap,
}

impl Emitter {
    /// Ends the stream as an injected fault asks: a 410 as kube-apiserver's watch cache sends
    /// it, or a dropped connection.
    async fn fault(&mut self, v: Verdict) {
        match v {
            Verdict::Go => {}
            Verdict::Expire => {
                let current = self.shared.state.lock().rv();
                let e = ApiError::expired(format!(
                    "too old resource version: {} ({current})",
                    self.last_rv
                ));
                let _ = self.tx.send(error_line(&e)).await;
            }
            Verdict::Drop => {
                let _ = self.tx.send(crate::endpoints::body::dropped_marker()).await;
            }
        }
    }

    /// Waits for room for one event while keeping the reserved slot free; a client that does
    /// not make room within the timeout gets a 410 in that slot and its watch ends.
    async fn room(&mut self) -> bool {
        match tokio::time::timeout(self.slow_timeout, self.tx.reserve_many(2)).await {
            Ok(Ok(_permits)) => true,
            Ok(Err(_)) => false,
            Err(_) => {
                let current = self.shared.state.lock().rv();
                tracing::debug!(
                    last_rv = self.last_rv,
                    current,
                    "watcher too slow: cut with 410"
                );
                let e = ApiError::expired(format!(
                    "too old resource version: {} ({current})",
                    self.last_rv
                ));
                let _ = self.tx.try_send(error_line(&e));
                self.shared
                    .slow_watchers_cut
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                false
            }
        }
    }

    /// Sends an event; `false` when the stream must end (client gone or too slow, or a fault
    /// fired).
    async fn event(&mut self, bytes: Bytes) -> bool {
        let v = self.tap.before_event().await;
        if v != Verdict::Go {
            self.fault(v).await;
            return false;
        }
        if !self.room().await {
            return false;
        }
        if self.tx.send(bytes).await.is_err() {
            return false;
        }
        self.sent += 1;
        if let Some(n) = self.fault.cut_after
            && self.sent >= n
        {
            return false;
        }
        if let Some((n, e)) = &self.fault.error_after
            && self.sent >= *n
        {
            let _ = self.tx.send(error_line(e)).await;
            return false;
        }
        true
    }

    async fn raw(&mut self, bytes: Bytes) -> bool {
        if !self.room().await {
            return false;
        }
        self.tx.send(bytes).await.is_ok()
    }
}

async fn run(
    shared: Arc<Shared>,
    req: WatchRequest,
    plan: Start,
    tx: mpsc::Sender<Bytes>,
    slow_timeout: Duration,
    tap: Tap,
) {
    let mut out = Emitter {
        tx,
        sent: 0,
        fault: req.fault.clone(),
        slow_timeout,
        last_rv: plan.cursor,
        shared: shared.clone(),
        tap,
    };
    if let Some((0, e)) = &out.fault.error_after {
        let _ = out.raw(error_line(e)).await;
        return;
    }
    if let Some(e) = plan.immediate_error {
        let _ = out.raw(error_line(&e)).await;
        return;
    }
    let deadline = req.timeout.map(deadline_after);
    let res = req.res.clone();
    let mut enc = Encoder::new(&res, &req.format);
    for obj in &plan.initial {
        let bytes = match event_line(&mut enc, "ADDED", obj, &req).await {
            Ok(bytes) => bytes,
            Err(e) => {
                let _ = out.raw(error_line(&e)).await;
                return;
            }
        };
        if !out.event(bytes).await {
            return;
        }
    }
    if let Some(rv) = plan.initial_end_bookmark
        && !out.raw(enc.bookmark(rv, true)).await
    {
        return;
    }
    let Some(mut rx) = plan.rx else {
        return;
    };
    let key = res.store_key();
    let mut cursor = plan.cursor;
    let interval = shared
        .state
        .lock()
        .config
        .bookmark_interval
        .max(Duration::from_millis(10));
    let mut ticker = tokio::time::interval_at(deadline_after(interval), interval);
    let mut want_bookmark = false;
    let mut stopping = req.stopping.clone();
    loop {
        rx.borrow_and_update();
        let v = out.tap.verdict();
        if v != Verdict::Go {
            out.fault(v).await;
            return;
        }
        let (batch, global_rv) = {
            let st = shared.state.lock();
            if st.storage.store(&key).is_none() {
                // The resource went away (its CRD was deleted).
                return;
            }
            (st.storage.events_after(&key, cursor, BATCH), st.rv())
        };
        let batch = match batch {
            Ok(b) => b,
            Err(compacted) => {
                let e = ApiError::expired(format!(
                    "too old resource version: {cursor} ({})",
                    compacted + 1
                ));
                let _ = out.raw(error_line(&e)).await;
                return;
            }
        };
        let full = batch.len() == BATCH;
        for ev in &batch {
            cursor = ev.rv;
            out.last_rv = ev.rv;
            let Some((kind, obj)) = req.filter.event(ev) else {
                continue;
            };
            let bytes = match event_line(&mut enc, kind.as_str(), &obj, &req).await {
                Ok(bytes) => bytes,
                Err(e) => {
                    let _ = out.raw(error_line(&e)).await;
                    return;
                }
            };
            if !out.event(bytes).await {
                return;
            }
        }
        if full {
            continue;
        }
        if want_bookmark {
            want_bookmark = false;
            let rv = global_rv.max(cursor);
            if !out.raw(enc.bookmark(rv, false)).await {
                return;
            }
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        let server_stops = async {
            match stopping.as_mut() {
                Some(s) => s.wait().await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = server_stops => {
                // As kube-apiserver ends a watch when it stops: a last bookmark at the current
                // version (annotated as the end of initial events), so the client resumes from
                // it instead of relisting.
                if req.allow_bookmarks {
                    let rv = shared.state.lock().rv().max(cursor);
                    let _ = out.raw(enc.bookmark(rv, true)).await;
                }
                tracing::debug!(resource = %key, "server stopping: watch ended");
                return;
            }
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = sleep => return,
            // An injected fault: the loop's next turn acts on it.
            () = out.tap.changed() => {}
            _ = ticker.tick() => {
                if req.allow_bookmarks {
                    want_bookmark = true;
                }
            }
            _ = out.tx.closed() => return,
        }
    }
}

/// Streams canned events (a watch reactor's `Events`).
pub(crate) fn canned(res: &Resource, events: Vec<(String, Value)>) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel::<Bytes>(events.len().max(1));
    let mut enc = Encoder::new(res, &Format::Full);
    for (kind, obj) in events {
        let l = enc.line(&kind, &obj);
        if tx.try_send(l).is_err() {
            break;
        }
    }
    rx
}

/// `now + after`, capped at thirty years (tokio's own far future): a watch may ask for
/// `timeoutSeconds=9223372036854775807`, and `Instant + Duration` panics on overflow.
fn deadline_after(after: Duration) -> tokio::time::Instant {
    const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);
    tokio::time::Instant::now() + after.min(FAR_FUTURE)
}

/// Serves a watch: the stream's lines come from a task that follows the storage.
pub(crate) async fn serve(t: Target<'_>) -> ApiResult<http::Response<ResponseBody>> {
    let q = &t.info.query;
    validate_list_options(q, true)?;
    let sharding = t.shared.state.lock().config.sharded_list_and_watch;
    let mut f = filter(&t.res, t.info.path.namespace.as_deref(), q, sharding)?;
    if let Some(name) = &t.info.path.name {
        // `/watch/.../<name>`: a watch of one object.
        f.fields.terms.push(FieldTerm {
            label: "metadata.name".into(),
            path: "metadata.name".into(),
            value: name.clone(),
            negate: false,
        });
    }
    let format = Format::from_accept(t.accept(), q.get("includeObject"));
    let timeout = q
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map(|t| Duration::from_secs(u64::try_from(t).unwrap_or(0)));
    let wr = WatchRequest {
        res: t.res.clone(),
        filter: f,
        resource_version: q.get("resourceVersion").map(str::to_string),
        allow_bookmarks: q.flag("allowWatchBookmarks").unwrap_or(false),
        send_initial_events: q.flag("sendInitialEvents"),
        timeout,
        format,
        fault: t.fault.clone(),
        converter: converter(&t.shared.state.lock(), &t.res),
        stopping: t.req.extensions().get::<Stopping>().cloned(),
    };
    if wr.send_initial_events == Some(true)
        && let Some(rv) = &wr.resource_version
    {
        wait_for_rv(&t.shared, rv).await;
    }
    let rx = start(t.shared.clone(), wr)?;
    Ok(stream_response(rx))
}
