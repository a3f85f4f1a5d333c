//! A scripted API server for informer tests: a `tower::Service` under a real `kube::Client`
//! that serves scripted list responses (paginated by the request's `limit`) and watch
//! responses (an HTTP status, a finite newline-delimited stream, or a live stream the test
//! feeds), and records every request.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::channel::mpsc;
use http::{Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use parking_lot::Mutex;
use serde_json::{Value, json};

pub(crate) type MockBody = UnsyncBoxBody<Bytes, Infallible>;

/// One request the mock saw.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) path: String,
    pub(crate) query: BTreeMap<String, String>,
    pub(crate) watch: bool,
}

impl Recorded {
    pub(crate) fn q(&self, key: &str) -> Option<&str> {
        self.query.get(key).map(String::as_str)
    }
}

enum ListReply {
    Items { items: Vec<Value>, rv: String },
    Status(u16),
}

enum WatchReply {
    Status(u16),
    Events(Vec<Value>),
    Live(mpsc::UnboundedReceiver<Bytes>),
}

#[derive(Default)]
struct State {
    requests: Vec<Recorded>,
    lists: VecDeque<ListReply>,
    last_list: Option<(Vec<Value>, String)>,
    fail_next_continue: bool,
    watches: VecDeque<WatchReply>,
    idle_watches: Vec<mpsc::UnboundedSender<Bytes>>,
}

/// The scripted server; clones share the script.
#[derive(Clone, Default)]
pub(crate) struct MockApi {
    state: Arc<Mutex<State>>,
}

/// The test's end of a live watch stream.
#[derive(Clone)]
pub(crate) struct LiveWatch {
    tx: mpsc::UnboundedSender<Bytes>,
}

impl LiveWatch {
    pub(crate) fn send(&self, event: Value) {
        let mut line = event.to_string().into_bytes();
        line.push(b'\n');
        let _ = self.tx.unbounded_send(Bytes::from(line));
    }

    /// Sends `bytes` as one chunk, as they are (a part of a line, several lines …).
    pub(crate) fn send_raw(&self, bytes: &str) {
        let _ = self
            .tx
            .unbounded_send(Bytes::copy_from_slice(bytes.as_bytes()));
    }

    /// Whether the client dropped the stream (the watch ended on the client's side).
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Ends the stream from the server's side.
    pub(crate) fn close(&self) {
        self.tx.close_channel();
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn status_json(code: u16) -> Value {
    let reason = match code {
        410 => "Expired",
        404 => "NotFound",
        403 => "Forbidden",
        429 => "TooManyRequests",
        _ => "InternalError",
    };
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("scripted {code}"), "reason": reason, "code": code,
    })
}

fn full(status: StatusCode, body: Vec<u8>) -> Response<MockBody> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *r.status_mut() = status;
    r
}

fn live(rx: mpsc::UnboundedReceiver<Bytes>) -> Response<MockBody> {
    let body = StreamBody::new(rx.map(|b| Ok::<_, Infallible>(Frame::data(b))));
    Response::new(BodyExt::boxed_unsync(body))
}

impl MockApi {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A `kube::Client` talking to this mock. Must be called inside a Tokio runtime.
    pub(crate) fn client(&self) -> kube::Client {
        let api = self.clone();
        let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
            let api = api.clone();
            async move { Ok::<_, Infallible>(api.handle(&req)) }
        });
        kube::Client::new(svc, "default")
    }

    pub(crate) fn push_list(&self, items: Vec<Value>, rv: &str) {
        self.state.lock().lists.push_back(ListReply::Items {
            items,
            rv: rv.to_string(),
        });
    }

    pub(crate) fn push_list_status(&self, code: u16) {
        self.state.lock().lists.push_back(ListReply::Status(code));
    }

    /// The next `continue` request fails with 410 (an expired continue token).
    pub(crate) fn fail_next_continue(&self) {
        self.state.lock().fail_next_continue = true;
    }

    pub(crate) fn push_watch_status(&self, code: u16) {
        self.state
            .lock()
            .watches
            .push_back(WatchReply::Status(code));
    }

    pub(crate) fn push_watch_events(&self, events: Vec<Value>) {
        self.state
            .lock()
            .watches
            .push_back(WatchReply::Events(events));
    }

    pub(crate) fn push_live_watch(&self) -> LiveWatch {
        let (tx, rx) = mpsc::unbounded();
        self.state.lock().watches.push_back(WatchReply::Live(rx));
        LiveWatch { tx }
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.lock().requests.clone()
    }

    pub(crate) fn list_requests(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(|r| !r.watch).collect()
    }

    pub(crate) fn watch_requests(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(|r| r.watch).collect()
    }

    /// Unscripted watches (served as silent live streams) the client still holds open.
    pub(crate) fn open_idle_watches(&self) -> usize {
        self.state
            .lock()
            .idle_watches
            .iter()
            .filter(|t| !t.is_closed())
            .count()
    }

    fn handle(&self, req: &Request<kube::client::Body>) -> Response<MockBody> {
        let path = req.uri().path().to_string();
        let query: BTreeMap<String, String> = req
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        let watch = query.get("watch").is_some_and(|w| w == "true");
        let mut st = self.state.lock();
        st.requests.push(Recorded {
            path,
            query: query.clone(),
            watch,
        });
        if watch {
            return match st.watches.pop_front() {
                Some(WatchReply::Status(code)) => full(
                    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    status_json(code).to_string().into_bytes(),
                ),
                Some(WatchReply::Events(events)) => {
                    let mut body = Vec::new();
                    for e in events {
                        body.extend_from_slice(e.to_string().as_bytes());
                        body.push(b'\n');
                    }
                    full(StatusCode::OK, body)
                }
                Some(WatchReply::Live(rx)) => live(rx),
                None => {
                    let (tx, rx) = mpsc::unbounded();
                    st.idle_watches.push(tx);
                    live(rx)
                }
            };
        }
        let limit: Option<usize> = query.get("limit").and_then(|l| l.parse().ok());
        let offset = match query.get("continue") {
            Some(c) => {
                if std::mem::take(&mut st.fail_next_continue) {
                    return full(StatusCode::GONE, status_json(410).to_string().into_bytes());
                }
                c.parse::<usize>().unwrap_or(0)
            }
            None => {
                match st.lists.pop_front() {
                    Some(ListReply::Items { items, rv }) => st.last_list = Some((items, rv)),
                    Some(ListReply::Status(code)) => {
                        return full(
                            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                            status_json(code).to_string().into_bytes(),
                        );
                    }
                    None => {}
                }
                0
            }
        };
        let (items, rv) = st.last_list.clone().unwrap_or_default();
        let end = limit.map_or(items.len(), |l| (offset + l).min(items.len()));
        let page: Vec<Value> = items
            .get(offset..end)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let mut metadata = json!({ "resourceVersion": rv });
        if end < items.len() {
            metadata["continue"] = json!(end.to_string());
        }
        let body =
            json!({ "apiVersion": "v1", "kind": "List", "metadata": metadata, "items": page });
        full(StatusCode::OK, body.to_string().into_bytes())
    }
}

/// A ConfigMap as the API server would serialize it.
pub(crate) fn cm(ns: &str, name: &str, rv: &str) -> Value {
    cm_labels(ns, name, rv, &[])
}

pub(crate) fn cm_labels(ns: &str, name: &str, rv: &str, labels: &[(&str, &str)]) -> Value {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": name, "namespace": ns, "resourceVersion": rv, "labels": labels,
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
        },
        "data": { "k": rv },
    })
}

pub(crate) fn event(kind: &str, obj: Value) -> Value {
    json!({ "type": kind, "object": obj })
}

pub(crate) fn bookmark(rv: &str) -> Value {
    json!({ "type": "BOOKMARK", "object": { "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "resourceVersion": rv } } })
}

pub(crate) fn gone_event() -> Value {
    json!({ "type": "ERROR", "object": status_json(410) })
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn decodes_queries() {
        assert_eq!(percent_decode("app%3Dweb%2Cx+y"), "app=web,x y");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
