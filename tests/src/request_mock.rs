//! A `kube::Client` over a mock `tower` service that records every request (method, path,
//! query, content type, JSON body) and answers with a function of it: the tool of the
//! request-shape tests.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `GET`, `POST` …
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The decoded query.
    pub query: BTreeMap<String, String>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The body, if it is JSON.
    pub body: Option<Value>,
}

impl Seen {
    /// The query as sorted `(key, value)` pairs, to assert it whole.
    pub fn query(&self) -> Vec<(&str, &str)> {
        self.query
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// The requests a [`mock`] client sent, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    /// The last request.
    pub fn last(&self) -> Seen {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .cloned()
            .unwrap_or_else(|| panic!("no request was sent"))
    }

    /// Every request so far.
    pub fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A client whose requests are recorded and answered with `respond(&seen)` (status 200).
pub fn mock(respond: impl Fn(&Seen) -> String + Send + Sync + 'static) -> (kube::Client, Recorder) {
    let recorder = Recorder::default();
    let log = recorder.clone();
    let respond = Arc::new(respond);
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let log = log.clone();
        let respond = respond.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let query = form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let seen = Seen {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
                query,
                content_type: parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from),
                body: serde_json::from_slice(&bytes).ok(),
            };
            let answer = respond(&seen);
            log.0.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(answer))))
        }
    });
    (kube::Client::new(svc, "default"), recorder)
}
