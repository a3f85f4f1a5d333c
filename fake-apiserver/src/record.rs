//! Record and replay: every request the server answers and its answer, one JSON object per
//! line, and a server that answers from such a file.
//!
//! [`FakeApiServerBuilder::record`](crate::FakeApiServerBuilder::record) (`--record FILE` on the
//! binary) writes a recording; [`FakeApiServerBuilder::replay`](crate::FakeApiServerBuilder::replay)
//! (`--replay FILE`) serves one.
//!
//! # The format (version 1)
//!
//! JSON lines (one [`Record`] per line, `kind` naming which):
//!
//! * the first line is a `header`: `{"kind":"header","format":"kube-fake-apiserver/record","version":1}`;
//! * an `exchange` per request answered: its `id` (from 1, in the order answers were made),
//!   `atMs` (milliseconds since the recording began), `writesBefore` (how many write requests
//!   — `POST`, `PUT`, `PATCH`, `DELETE` — had arrived by then, this one included), the
//!   `request` (`method`, `path`, `query` as sent, the `accept` and `content-type` headers,
//!   `body`) and the `response` (`status`, the `content-type`, `warning` and `retry-after`
//!   headers, and `body`, or `"stream": true` for a watch);
//! * for a watch, an `event` per line of its stream, in order (`id` is the exchange's,
//!   `writesBefore` counts the writes that had arrived when the event was sent, `event` the
//!   watch event itself), then an `end` when the server ended the stream (`dropped: true` when
//!   it ended as a dropped connection). A stream the client closed, or still open when the
//!   recording stopped, has no `end`.
//!
//! A body is `{"json": …}` when it is JSON, `{"text": "…"}` for other UTF-8 text (YAML, plain
//! text), `{"base64": "…"}` otherwise. Each line is written whole with one write and flushed,
//! so a recording cut short (the process killed) ends with whole records, and lines of
//! concurrent requests never interleave.
//!
//! # Replay
//!
//! A replaying server answers each request with the next recorded answer of the same *request
//! key* — method, path, the query parameters sorted (without `timeoutSeconds`, which clients
//! choose at random) and the `Accept` header — in the order they were recorded; bodies are not
//! compared. A watch replays its events in order, each once the requests that came before it in
//! the recording have arrived (counted as write requests, [`writesBefore`](Record::Event)), or
//! after the replay's wait ([`FakeApiServerBuilder::replay_wait`](crate::FakeApiServerBuilder::replay_wait),
//! default 5 s) if they never do; then it ends as it ended in the recording, or stays open and
//! quiet. Once a key's answers are used up, a `GET` gets its last answer again (clients poll),
//! a watch an open, quiet stream; any other request, and one the recording never saw, is
//! answered `500 InternalError` naming the request, and counted in
//! [`FakeHandle::replay_misses`](crate::FakeHandle::replay_misses).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::endpoints::body::{ResponseBody, dropped_marker};
use crate::error::FakeError;

/// The `format` of a recording's header.
pub const FORMAT: &str = "kube-fake-apiserver/record";

/// The version of the format this crate writes and reads.
pub const VERSION: u32 = 1;

/// The request headers a recording keeps.
const REQUEST_HEADERS: [&str; 2] = ["accept", "content-type"];

/// The response headers a recording keeps (and a replay sends).
const RESPONSE_HEADERS: [&str; 3] = ["content-type", "warning", "retry-after"];

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Record {
    /// The first line.
    Header {
        /// [`FORMAT`].
        format: String,
        /// [`VERSION`].
        version: u32,
    },
    /// A request and its answer.
    Exchange {
        /// The exchange's number, from 1.
        id: u64,
        /// Milliseconds since the recording began, when the answer was made.
        at_ms: u64,
        /// How many write requests had arrived when this one did, itself included.
        writes_before: u64,
        /// The request.
        request: RecordedRequest,
        /// The answer.
        response: RecordedResponse,
    },
    /// One event of a watch's stream.
    Event {
        /// The watch's exchange.
        id: u64,
        /// Milliseconds since the recording began, when the event was sent.
        at_ms: u64,
        /// How many write requests had arrived when the event was sent.
        writes_before: u64,
        /// The watch event (`{"type": …, "object": …}`).
        event: Body,
    },
    /// The end of a watch's stream.
    End {
        /// The watch's exchange.
        id: u64,
        /// Milliseconds since the recording began.
        at_ms: u64,
        /// Whether it ended as a dropped connection (otherwise the server ended it cleanly).
        dropped: bool,
    },
}

/// A recorded request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedRequest {
    /// `GET`, `POST` …
    pub method: String,
    /// The path.
    pub path: String,
    /// The query string as sent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The kept headers, by lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, Vec<String>>,
    /// The body, if not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
}

/// A recorded answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The kept headers, by lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, Vec<String>>,
    /// The body, if complete and not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// A watch stream: its events follow as [`Record::Event`] lines.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

/// A body in a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Body {
    /// A JSON document.
    Json(Value),
    /// UTF-8 text that is not JSON.
    Text(String),
    /// Anything else, base64-encoded.
    Base64(String),
}

impl Body {
    fn of(bytes: &[u8]) -> Option<Body> {
        if bytes.is_empty() {
            return None;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
            return Some(Body::Json(v));
        }
        Some(match std::str::from_utf8(bytes) {
            Ok(s) => Body::Text(s.to_string()),
            Err(_) => Body::Base64(base64::engine::general_purpose::STANDARD.encode(bytes)),
        })
    }

    fn to_bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Body::Json(v) => serde_json::to_vec(v).map_err(|e| e.to_string()),
            Body::Text(s) => Ok(s.clone().into_bytes()),
            Body::Base64(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| format!("bad base64 body: {e}")),
        }
    }
}

fn kept_headers(headers: &HeaderMap, names: &[&str]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for name in names {
        let values: Vec<String> = headers
            .get_all(*name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        if !values.is_empty() {
            out.insert((*name).to_string(), values);
        }
    }
    out
}

fn is_write(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

// ---------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------

/// Writes a recording as the server answers.
#[derive(Debug)]
pub(crate) struct Recorder {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    start: Instant,
    next_id: AtomicU64,
    writes: AtomicU64,
    /// Set after the first failed write (logged once; the server keeps serving).
    failed: AtomicBool,
}

/// A request on its way, to be recorded with its answer.
pub(crate) struct Pending {
    writes_before: u64,
    request: RecordedRequest,
}

impl Recorder {
    /// Creates (or truncates) `path` and writes the header.
    pub(crate) fn create(path: &Path) -> Result<Arc<Recorder>, FakeError> {
        let fail = |e: std::io::Error| FakeError::Recording {
            path: path.to_path_buf(),
            line: None,
            reason: e.to_string(),
        };
        let file = std::fs::File::create(path).map_err(fail)?;
        let recorder = Recorder {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            start: Instant::now(),
            next_id: AtomicU64::new(1),
            writes: AtomicU64::new(0),
            failed: AtomicBool::new(false),
        };
        recorder
            .write_line(&Record::Header {
                format: FORMAT.into(),
                version: VERSION,
            })
            .map_err(fail)?;
        Ok(Arc::new(recorder))
    }

    fn write_line(&self, rec: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(rec).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut file = self.file.lock();
        file.write_all(&line)?;
        file.flush()
    }

    fn write(&self, rec: &Record) {
        if let Err(e) = self.write_line(rec)
            && !self.failed.swap(true, Ordering::SeqCst)
        {
            tracing::error!(path = %self.path.display(), error = %e, "writing the recording failed; later records may be missing");
        }
    }

    fn at_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Notes a request as it arrives.
    pub(crate) fn begin(&self, req: &Request<Bytes>) -> Pending {
        let writes_before = if is_write(req.method()) {
            self.writes.fetch_add(1, Ordering::SeqCst) + 1
        } else {
            self.writes.load(Ordering::SeqCst)
        };
        Pending {
            writes_before,
            request: RecordedRequest {
                method: req.method().to_string(),
                path: req.uri().path().to_string(),
                query: req.uri().query().map(str::to_string),
                headers: kept_headers(req.headers(), &REQUEST_HEADERS),
                body: Body::of(req.body()),
            },
        }
    }

    /// Records the answer to `pending` and returns it (a watch's stream passes through a task
    /// that records each event as it goes).
    pub(crate) fn finish(
        self: &Arc<Self>,
        pending: Pending,
        resp: Response<ResponseBody>,
    ) -> Response<ResponseBody> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (parts, body) = resp.into_parts();
        let headers = kept_headers(&parts.headers, &RESPONSE_HEADERS);
        let body = body.into_parts();
        let status = parts.status.as_u16();
        let response = match &body {
            Ok(bytes) => RecordedResponse {
                status,
                headers,
                body: Body::of(bytes),
                stream: false,
            },
            Err(_) => RecordedResponse {
                status,
                headers,
                body: None,
                stream: true,
            },
        };
        self.write(&Record::Exchange {
            id,
            at_ms: self.at_ms(),
            writes_before: pending.writes_before,
            request: pending.request,
            response,
        });
        match body {
            Ok(bytes) => Response::from_parts(parts, ResponseBody::full(bytes)),
            Err(inner) => {
                let (tx, rx) = mpsc::channel(16);
                tokio::spawn(self.clone().tee(id, inner, tx));
                Response::from_parts(parts, ResponseBody::stream(rx))
            }
        }
    }

    /// Records each line of a watch stream on its way to the client.
    async fn tee(
        self: Arc<Self>,
        id: u64,
        mut inner: mpsc::Receiver<Bytes>,
        tx: mpsc::Sender<Bytes>,
    ) {
        loop {
            let line = tokio::select! {
                line = inner.recv() => line,
                // The client left: the watch task sees its receiver go.
                () = tx.closed() => return,
            };
            let Some(line) = line else {
                // The server ended the stream (its timeout, an error event, the server stopping).
                self.write(&Record::End {
                    id,
                    at_ms: self.at_ms(),
                    dropped: false,
                });
                return;
            };
            if line.is_empty() {
                self.write(&Record::End {
                    id,
                    at_ms: self.at_ms(),
                    dropped: true,
                });
                let _ = tx.send(line).await;
                return;
            }
            let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
            if let Some(event) = Body::of(trimmed) {
                self.write(&Record::Event {
                    id,
                    at_ms: self.at_ms(),
                    writes_before: self.writes.load(Ordering::SeqCst),
                    event,
                });
            }
            if tx.send(line).await.is_err() {
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------

/// One recorded answer, ready to serve.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    /// For a watch: its events with the writes each waits for.
    events: Vec<(u64, Bytes)>,
    stream: bool,
    /// For a watch: `Some(dropped)` if its stream ended in the recording.
    end: Option<bool>,
}

/// A request key: what answers are matched by.
fn key(method: &str, path: &str, query: Option<&str>, accept: &str) -> String {
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k != "timeoutSeconds")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    pairs.sort();
    let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{method} {path}?{} accept={accept}", query.join("&"))
}

/// A recorded run, served.
#[derive(Debug)]
pub(crate) struct Replay {
    path: PathBuf,
    queues: Mutex<HashMap<String, VecDeque<Arc<Answer>>>>,
    last: Mutex<HashMap<String, Arc<Answer>>>,
    writes: tokio::sync::watch::Sender<u64>,
    misses: Mutex<Vec<String>>,
    wait: Duration,
}

impl Replay {
    /// Reads and checks a recording.
    pub(crate) fn load(path: &Path, wait: Duration) -> Result<Replay, FakeError> {
        let fail = |line: Option<usize>, reason: String| FakeError::Recording {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(None, e.to_string()))?;
        let mut answers: Vec<(String, Answer)> = Vec::new();
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        let mut header_seen = false;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            if raw.trim().is_empty() {
                return Err(fail(Some(n), "empty line".into()));
            }
            let rec: Record =
                serde_json::from_str(raw).map_err(|e| fail(Some(n), e.to_string()))?;
            match rec {
                Record::Header { format, version } => {
                    if n != 1 {
                        return Err(fail(Some(n), "a header after the first line".into()));
                    }
                    if format != FORMAT {
                        return Err(fail(
                            Some(n),
                            format!("format {format:?} is not {FORMAT:?}"),
                        ));
                    }
                    if version != VERSION {
                        return Err(fail(
                            Some(n),
                            format!(
                                "version {version} is not supported (this reader knows {VERSION})"
                            ),
                        ));
                    }
                    header_seen = true;
                }
                _ if !header_seen => {
                    return Err(fail(
                        Some(n),
                        format!(
                            "the first line must be the header {{\"kind\":\"header\",\"format\":{FORMAT:?},\"version\":{VERSION}}}"
                        ),
                    ));
                }
                Record::Exchange {
                    id,
                    request,
                    response,
                    ..
                } => {
                    if by_id.contains_key(&id) {
                        return Err(fail(Some(n), format!("exchange {id} recorded twice")));
                    }
                    let status = StatusCode::from_u16(response.status).map_err(|_| {
                        fail(
                            Some(n),
                            format!("status {} is not an HTTP status", response.status),
                        )
                    })?;
                    let mut headers = Vec::new();
                    for (name, values) in &response.headers {
                        let name = HeaderName::from_bytes(name.as_bytes())
                            .map_err(|e| fail(Some(n), format!("header {name:?}: {e}")))?;
                        for v in values {
                            let value = HeaderValue::from_str(v)
                                .map_err(|e| fail(Some(n), format!("header {name}: {e}")))?;
                            headers.push((name.clone(), value));
                        }
                    }
                    let body = match &response.body {
                        Some(b) => b.to_bytes().map_err(|e| fail(Some(n), e))?,
                        None => Vec::new(),
                    };
                    let accept = request
                        .headers
                        .get("accept")
                        .and_then(|v| v.first())
                        .map_or("", String::as_str);
                    let k = key(
                        &request.method,
                        &request.path,
                        request.query.as_deref(),
                        accept,
                    );
                    by_id.insert(id, answers.len());
                    answers.push((
                        k,
                        Answer {
                            status,
                            headers,
                            body: Bytes::from(body),
                            events: Vec::new(),
                            stream: response.stream,
                            end: None,
                        },
                    ));
                }
                Record::Event {
                    id,
                    writes_before,
                    event,
                    ..
                } => {
                    let a = stream_of(&mut answers, &by_id, id).map_err(|e| fail(Some(n), e))?;
                    let mut line = event.to_bytes().map_err(|e| fail(Some(n), e))?;
                    if line.is_empty() {
                        return Err(fail(Some(n), "an empty event".into()));
                    }
                    line.push(b'\n');
                    a.events.push((writes_before, Bytes::from(line)));
                }
                Record::End { id, dropped, .. } => {
                    let a = stream_of(&mut answers, &by_id, id).map_err(|e| fail(Some(n), e))?;
                    a.end = Some(dropped);
                }
            }
        }
        if !header_seen {
            return Err(fail(None, "the file is empty: no header".into()));
        }
        let mut queues: HashMap<String, VecDeque<Arc<Answer>>> = HashMap::new();
        for (k, a) in answers {
            queues.entry(k).or_default().push_back(Arc::new(a));
        }
        Ok(Replay {
            path: path.to_path_buf(),
            queues: Mutex::new(queues),
            last: Mutex::new(HashMap::new()),
            writes: tokio::sync::watch::Sender::new(0),
            misses: Mutex::new(Vec::new()),
            wait,
        })
    }

    /// The requests no recorded answer was left for, as their keys.
    pub(crate) fn misses(&self) -> Vec<String> {
        self.misses.lock().clone()
    }

    /// Answers a request from the recording.
    pub(crate) fn answer(&self, req: &Request<Bytes>) -> Response<ResponseBody> {
        if is_write(req.method()) {
            self.writes.send_modify(|n| *n += 1);
        }
        let accept = req
            .headers()
            .get(http::header::ACCEPT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let k = key(
            req.method().as_str(),
            req.uri().path(),
            req.uri().query(),
            &accept,
        );
        let next = self.queues.lock().get_mut(&k).and_then(VecDeque::pop_front);
        let answer = match next {
            Some(a) => {
                self.last.lock().insert(k.clone(), a.clone());
                a
            }
            None => {
                let last = self.last.lock().get(&k).cloned();
                match last {
                    Some(a) if a.stream => return self.quiet_stream(&a),
                    Some(a) if req.method() == Method::GET => a,
                    _ => {
                        tracing::warn!(request = %k, recording = %self.path.display(), "replay: no recorded answer");
                        self.misses.lock().push(k.clone());
                        let e = crate::error::ApiError::new(
                            500,
                            "InternalError",
                            format!(
                                "replay of {}: no recorded answer left for {k}",
                                self.path.display()
                            ),
                        );
                        return crate::endpoints::response::error_response(&e);
                    }
                }
            }
        };
        let mut resp = if answer.stream {
            Response::new(ResponseBody::stream(self.play(answer.clone())))
        } else {
            Response::new(ResponseBody::full(answer.body.clone()))
        };
        *resp.status_mut() = answer.status;
        for (name, value) in &answer.headers {
            resp.headers_mut().append(name.clone(), value.clone());
        }
        resp
    }

    /// A watch whose recorded answers are used up: open and quiet until the client leaves.
    fn quiet_stream(&self, a: &Answer) -> Response<ResponseBody> {
        let (tx, rx) = mpsc::channel::<Bytes>(1);
        tokio::spawn(async move { tx.closed().await });
        let mut resp = Response::new(ResponseBody::stream(rx));
        *resp.status_mut() = a.status;
        for (name, value) in &a.headers {
            resp.headers_mut().append(name.clone(), value.clone());
        }
        resp
    }

    /// Plays a recorded watch stream.
    fn play(&self, a: Arc<Answer>) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        let mut writes = self.writes.subscribe();
        let wait = self.wait;
        let path = self.path.clone();
        tokio::spawn(async move {
            for (needed, line) in &a.events {
                let arrived = tokio::time::timeout(wait, writes.wait_for(|n| *n >= *needed))
                    .await
                    .is_ok();
                if !arrived {
                    let seen = *writes.borrow();
                    tracing::warn!(recording = %path.display(), writes_needed = needed, writes = seen, "replay: an event's earlier requests did not come; sending it anyway");
                }
                if tx.send(line.clone()).await.is_err() {
                    return;
                }
            }
            match a.end {
                Some(true) => {
                    let _ = tx.send(dropped_marker()).await;
                }
                Some(false) => {}
                None => tx.closed().await,
            }
        });
        rx
    }
}

fn stream_of<'a>(
    answers: &'a mut [(String, Answer)],
    by_id: &HashMap<u64, usize>,
    id: u64,
) -> Result<&'a mut Answer, String> {
    let i = by_id
        .get(&id)
        .ok_or_else(|| format!("event of exchange {id}, which no earlier line records"))?;
    let a = &mut answers[*i].1;
    if !a.stream {
        return Err(format!("exchange {id} is not a watch stream"));
    }
    if a.end.is_some() {
        return Err(format!("exchange {id} already ended"));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Replay, FakeError> {
        let dir = std::env::temp_dir().join(format!("fake-record-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.jsonl");
        std::fs::write(&path, text).unwrap();
        let r = Replay::load(&path, Duration::from_secs(1));
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    const HEADER: &str = r#"{"kind":"header","format":"kube-fake-apiserver/record","version":1}"#;

    fn reason(r: Result<Replay, FakeError>) -> (Option<usize>, String) {
        match r {
            Err(FakeError::Recording { line, reason, .. }) => (line, reason),
            other => panic!("expected a recording error, got {other:?}"),
        }
    }

    #[test]
    fn bad_recordings_name_the_line_and_cause() {
        assert_eq!(reason(load("")).1, "the file is empty: no header");
        let (line, why) = reason(load(r#"{"kind":"end","id":1,"atMs":0,"dropped":false}"#));
        assert_eq!(line, Some(1));
        assert!(
            why.starts_with("the first line must be the header"),
            "{why}"
        );
        let (line, why) = reason(load(&format!("{HEADER}\n{{\"kind\":\"exchange\"")));
        assert_eq!(line, Some(2));
        assert!(why.contains("EOF"), "{why}");
        let (line, why) = reason(load(&format!(
            "{HEADER}\n{{\"kind\":\"event\",\"id\":9,\"atMs\":0,\"writesBefore\":0,\"event\":{{\"json\":{{}}}}}}"
        )));
        assert_eq!(
            (line, why.as_str()),
            (
                Some(2),
                "event of exchange 9, which no earlier line records"
            )
        );
        let (line, why) = reason(load(
            r#"{"kind":"header","format":"kube-fake-apiserver/record","version":2}"#,
        ));
        assert_eq!(line, Some(1));
        assert!(why.contains("version 2 is not supported"), "{why}");
        let exchange = r#"{"kind":"exchange","id":1,"atMs":0,"writesBefore":0,"request":{"method":"GET","path":"/api"},"response":{"status":200}}"#;
        let (line, why) = reason(load(&format!(
            "{HEADER}\n{exchange}\n{{\"kind\":\"end\",\"id\":1,\"atMs\":0,\"dropped\":false}}"
        )));
        assert_eq!(
            (line, why.as_str()),
            (Some(3), "exchange 1 is not a watch stream")
        );
    }

    #[test]
    fn keys_ignore_timeouts_and_parameter_order() {
        assert_eq!(
            key(
                "GET",
                "/api/v1/pods",
                Some("watch=1&timeoutSeconds=31&resourceVersion=5"),
                ""
            ),
            key(
                "GET",
                "/api/v1/pods",
                Some("resourceVersion=5&timeoutSeconds=400&watch=1"),
                ""
            )
        );
        assert_ne!(
            key("GET", "/api/v1/pods", None, "application/json"),
            key("GET", "/api/v1/pods", None, "application/yaml")
        );
    }
}
