//! Recorded actions and reactors: client-go's `testing.Fake` chain for the fake server.

use std::sync::Arc;
use std::time::Duration;

use kube::core::Status;
use serde_json::Value;

use crate::semantics::patch::PatchType;

/// One API request the server received, as client-go's `testing.Action`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: String,
    /// The API group (empty for core).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The plural resource (`mydemos`).
    pub resource: String,
    /// The subresource (`status`), if any.
    pub subresource: Option<String>,
    /// The namespace of the request, if namespaced.
    pub namespace: Option<String>,
    /// The object name, for requests on one object.
    pub name: Option<String>,
    /// The request body, parsed as JSON (the patch itself for `patch`).
    pub body: Option<Value>,
    /// The patch type, for `patch`.
    pub patch_type: Option<PatchType>,
    /// The query parameters, in order.
    pub query: Vec<(String, String)>,
}

impl Action {
    /// Whether a reactor registered for `verb` and `resource` handles this action: `"*"`
    /// matches anything, `"mydemos"` matches the resource and its subresources,
    /// `"mydemos/status"` only that subresource.
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        (verb == "*" || verb == self.verb) && self.covers(resource)
    }

    fn covers(&self, resource: &str) -> bool {
        if resource == "*" || resource == self.resource {
            return true;
        }
        match (resource.split_once('/'), &self.subresource) {
            (Some((r, s)), Some(sub)) => r == self.resource && s == sub,
            _ => false,
        }
    }

    /// The value of a query parameter.
    pub fn query_param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What a reactor decides for a request.
#[derive(Debug, Clone)]
pub enum Reaction {
    /// Not handled: the next reactor, and finally the object store, decide.
    PassThrough,
    /// Answer 200 with this body.
    Object(Value),
    /// Answer with this status code and body.
    Response {
        /// The HTTP status code.
        code: u16,
        /// The JSON body.
        body: Value,
    },
    /// Answer with this `metav1.Status` failure (its `code` is the HTTP status).
    Error(Box<Status>),
    /// Wait, then continue down the chain.
    Delay(Duration),
}

impl WatchReaction {
    /// `ErrorAfter(n, status)` with a failure `Status` of the given code, reason and message
    /// (`WatchReaction::error_after(0, 410, "Expired", "too old resource version")`).
    pub fn error_after(n: usize, code: u16, reason: &str, message: impl Into<String>) -> Self {
        WatchReaction::ErrorAfter(
            n,
            crate::error::failure_status(code, reason, message).boxed(),
        )
    }
}

impl Reaction {
    /// A failure `Status` with the given code, reason and message.
    pub fn error(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Reaction::Error(crate::error::failure_status(code, reason, message).boxed())
    }
}

/// What a watch reactor decides for a watch request (fault injection).
#[derive(Debug, Clone)]
pub enum WatchReaction {
    /// Not handled: the next watch reactor, and finally the store, decide.
    PassThrough,
    /// Refuse the watch with this `Status` (an HTTP error, not a watch event).
    Error(Box<Status>),
    /// Wait before answering, then continue down the chain.
    Delay(Duration),
    /// Serve the watch but end the stream after this many events.
    CutAfter(usize),
    /// Serve the watch, and after this many events send an `ERROR` event with the status and
    /// end the stream (`ErrorAfter(0, gone)` simulates a 410 right away).
    ErrorAfter(usize, Box<Status>),
    /// Stream these `(type, object)` events and end.
    Events(Vec<(String, Value)>),
}

/// A reaction function.
pub type ReactionFn = dyn Fn(&Action) -> Reaction + Send + Sync;
/// A watch reaction function.
pub type WatchReactionFn = dyn Fn(&Action) -> WatchReaction + Send + Sync;

#[derive(Clone)]
pub(crate) struct Reactor {
    pub(crate) verb: String,
    pub(crate) resource: String,
    pub(crate) f: Arc<ReactionFn>,
}

#[derive(Clone)]
pub(crate) struct WatchReactor {
    pub(crate) resource: String,
    pub(crate) f: Arc<WatchReactionFn>,
}

impl std::fmt::Debug for Reactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactor")
            .field("verb", &self.verb)
            .field("resource", &self.resource)
            .finish()
    }
}

impl std::fmt::Debug for WatchReactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchReactor")
            .field("resource", &self.resource)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_follows_client_go() {
        let a = Action {
            verb: "update".into(),
            group: "g".into(),
            version: "v1".into(),
            resource: "mydemos".into(),
            subresource: Some("status".into()),
            namespace: Some("n".into()),
            name: Some("x".into()),
            body: None,
            patch_type: None,
            query: vec![("dryRun".into(), "All".into())],
        };
        assert!(a.matches("*", "*"));
        assert!(a.matches("update", "mydemos"));
        assert!(a.matches("update", "mydemos/status"));
        assert!(!a.matches("update", "mydemos/scale"));
        assert!(!a.matches("get", "mydemos"));
        assert_eq!(a.query_param("dryRun"), Some("All"));
    }
}
