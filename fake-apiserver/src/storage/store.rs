//! The object store: one global resourceVersion counter, objects per resource in etcd key
//! order, a bounded per-resource event history (the watch cache), and point-in-time reads of
//! that history for consistent paginated lists.
//!
//! Storage knows keys, not resources: a resource's objects live under its store key
//! (`plural.group`, shared by all its versions), each object under `namespace/name` (or `name`
//! when cluster-scoped). What a resource is, and which rules its writes follow, is decided
//! above, in `semantics`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::storage::object;
use crate::storage::predicate::Filter;

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One write, as the watch cache keeps it.
#[derive(Debug)]
pub(crate) struct HistEvent {
    pub(crate) rv: u64,
    pub(crate) kind: EventType,
    pub(crate) key: String,
    /// The object after the write (for a delete: its last state, carrying the delete's rv).
    pub(crate) object: Arc<Value>,
    /// The object before the write.
    pub(crate) prev: Option<Arc<Value>>,
    /// The bytes of `object` encoded, counted against the history's byte budget.
    pub(crate) size: usize,
}

/// The objects and history of one resource (all its versions).
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) objects: BTreeMap<String, Arc<Value>>,
    pub(crate) history: VecDeque<Arc<HistEvent>>,
    /// The encoded bytes of the objects `history` holds.
    history_bytes: usize,
    /// Every event with an rv above this one is still in `history`.
    pub(crate) compacted: u64,
    /// The resourceVersion when the resource started being served: like the watch cache of
    /// a real server, watches cannot start before it.
    pub(crate) created: u64,
    /// Objects per namespace (`""` for cluster-scoped), for `remainingItemCount`.
    pub(crate) counts: HashMap<String, usize>,
    pub(crate) tx: tokio::sync::watch::Sender<u64>,
}

impl Store {
    fn new(compacted: u64) -> Self {
        let (tx, _rx) = tokio::sync::watch::channel(compacted);
        Store {
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            history_bytes: 0,
            compacted: 0,
            created: compacted,
            counts: HashMap::new(),
            tx,
        }
    }
}

/// The etcd-style key of an object: `namespace/name`, or `name` when cluster-scoped.
pub(crate) fn obj_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// Every resource's objects and history, and the global resourceVersion.
#[derive(Debug)]
pub(crate) struct Storage {
    /// The resourceVersion of the last write.
    pub(crate) rv: u64,
    pub(crate) stores: HashMap<String, Store>,
    /// Events kept per resource for watches and paginated lists.
    pub(crate) history_capacity: usize,
    /// The encoded bytes of the objects a resource's history may hold: past it the oldest
    /// events are dropped (compacted), however few there are, so large objects written often
    /// cannot grow memory without bound.
    pub(crate) history_max_bytes: usize,
    /// Carries `rv` after every write, for requests that wait for a resourceVersion.
    rv_tx: tokio::sync::watch::Sender<u64>,
}

/// How long a read at a resourceVersion the storage has not reached waits for it before
/// answering "Too large resource version" (the watch cache's `blockTimeout`).
pub(crate) const FUTURE_RV_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The default byte budget of one resource's history.
pub(crate) const HISTORY_MAX_BYTES: usize = 256 * 1024 * 1024;

/// One page of a list.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) items: Vec<Arc<Value>>,
    pub(crate) resource_version: u64,
    pub(crate) continue_token: Option<String>,
    pub(crate) remaining: Option<u64>,
}

/// A list request's paging and consistency options.
#[derive(Debug, Default, Clone)]
pub(crate) struct ListOptions {
    pub(crate) filter: Filter,
    pub(crate) limit: Option<usize>,
    pub(crate) continue_token: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) resource_version_match: Option<String>,
}

/// A continue token: the API server's `{"v","rv","start"}`, plus the number of objects before
/// `start` (for `remainingItemCount`).
pub(crate) fn encode_continue(rv: u64, start: &str, offset: u64) -> String {
    encode_continue_at(Some(rv), start, offset)
}

/// A continue token; `None` reads the present (`"rv": -1`, what a 410 for a compacted token
/// offers to go on with).
fn encode_continue_at(rv: Option<u64>, start: &str, offset: u64) -> String {
    let rv = rv.map_or(json!(-1), |rv| json!(rv));
    let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": start, "i": offset});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

/// Decodes a continue token: the resourceVersion to read at (`None` for a token made after
/// its resourceVersion was compacted, `"rv": -1`: read the present), the start key and the
/// number of objects before it.
pub(crate) fn decode_continue(token: &str) -> Result<(Option<u64>, String, u64), String> {
    // Go's RawURLEncoding: no padding, and stray bits at the end are tolerated.
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
    );
    let bytes = engine
        .decode(token)
        .map_err(|e| format!("continue key is not valid: {e}"))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "continue key is not valid: {}",
            crate::error::go_json_error(&e, &bytes)
        )
    })?;
    if v.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into());
    }
    let rv = match v.get("rv").and_then(Value::as_i64) {
        Some(-1) => None,
        Some(n) if n > 0 => Some(n as u64),
        _ => {
            return Err(
                "continue key is not valid: incorrect encoded start resourceVersion".into(),
            );
        }
    };
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if start.is_empty() || start.contains("..") || start.starts_with('/') {
        return Err("continue key is not valid: encoded start key is invalid".into());
    }
    let offset = v.get("i").and_then(Value::as_u64).unwrap_or(0);
    Ok((rv, start, offset))
}

/// `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`.
pub(crate) fn rv_parse_message(s: &str) -> String {
    let q = crate::error::go_quote(s);
    format!("resourceVersion: Invalid value: {q}: strconv.ParseUint: parsing {q}: invalid syntax")
}

/// Parses a resourceVersion parameter of a list (400 as the storage layer words it).
pub(crate) fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!("invalid resource version: {}", rv_parse_message(s)))
    })
}

/// Parses a resourceVersion parameter of a watch: the watch cache answers a bad one with a
/// 500 without a reason.
pub(crate) fn parse_watch_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>()
        .map_err(|_| ApiError::new(500, "", rv_parse_message(s)))
}

impl Storage {
    pub(crate) fn new(history_capacity: usize) -> Self {
        Storage {
            rv: 0,
            stores: HashMap::new(),
            history_capacity,
            history_max_bytes: HISTORY_MAX_BYTES,
            rv_tx: tokio::sync::watch::channel(0).0,
        }
    }

    /// Follows the global resourceVersion: the receiver sees every write's.
    pub(crate) fn subscribe_rv(&self) -> tokio::sync::watch::Receiver<u64> {
        self.rv_tx.subscribe()
    }

    /// Creates the store under `key` if there is none: watches of it start now.
    pub(crate) fn ensure(&mut self, key: &str) {
        self.store_mut(key);
    }

    /// Drops the store under `key` with its objects and history; open watches of it end.
    pub(crate) fn drop_store(&mut self, key: &str) {
        self.stores.remove(key);
    }

    pub(crate) fn store(&self, key: &str) -> Option<&Store> {
        self.stores.get(key)
    }

    fn store_mut(&mut self, key: &str) -> &mut Store {
        let rv = self.rv;
        self.stores
            .entry(key.to_string())
            .or_insert_with(|| Store::new(rv))
    }

    pub(crate) fn get(&self, key: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.store(key)?
            .objects
            .get(&obj_key(namespace, name))
            .cloned()
    }

    fn push_event(&mut self, key: &str, ev: HistEvent) {
        let cap = self.history_capacity.max(1);
        let max_bytes = self.history_max_bytes;
        let rv = ev.rv;
        let store = self.store_mut(key);
        while store.history.len() >= cap
            || (!store.history.is_empty() && store.history_bytes + ev.size > max_bytes)
        {
            let Some(old) = store.history.pop_front() else {
                break;
            };
            store.compacted = old.rv;
            store.history_bytes -= old.size;
        }
        store.history_bytes += ev.size;
        store.history.push_back(Arc::new(ev));
        store.tx.send_replace(rv);
        self.rv_tx.send_replace(self.rv);
    }

    /// Stores `obj` (created or replaced) with the next resourceVersion.
    pub(crate) fn put(&mut self, store_key: &str, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        object::set_meta(&mut obj, "resourceVersion", Some(json!(rv.to_string())));
        let ns = object::namespace(&obj).to_string();
        let key = obj_key(&ns, object::name(&obj));
        let size = crate::storage::size::encoded_len(&obj);
        let obj = Arc::new(obj);
        let store = self.store_mut(store_key);
        let prev = store.objects.insert(key.clone(), obj.clone());
        if prev.is_none() {
            *store.counts.entry(ns).or_default() += 1;
        }
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.push_event(
            store_key,
            HistEvent {
                rv,
                kind,
                key,
                object: obj.clone(),
                prev,
                size,
            },
        );
        obj
    }

    /// Removes an object; returns its last stored state.
    pub(crate) fn remove(
        &mut self,
        store_key: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        let key = obj_key(namespace, name);
        let store = self.store_mut(store_key);
        let prev = store.objects.remove(&key)?;
        if let Some(n) = store.counts.get_mut(namespace) {
            *n = n.saturating_sub(1);
        }
        self.rv += 1;
        let rv = self.rv;
        let mut tomb = (*prev).clone();
        object::set_meta(&mut tomb, "resourceVersion", Some(json!(rv.to_string())));
        let size = crate::storage::size::encoded_len(&tomb);
        self.push_event(
            store_key,
            HistEvent {
                rv,
                kind: EventType::Deleted,
                key,
                object: Arc::new(tomb),
                prev: Some(prev.clone()),
                size,
            },
        );
        Some(prev)
    }

    /// Every store's objects, now (cheap: the objects are shared, not copied).
    pub(crate) fn contents(&self) -> Vec<(String, Vec<Arc<Value>>)> {
        self.stores
            .iter()
            .map(|(key, s)| (key.clone(), s.objects.values().cloned().collect()))
            .collect()
    }

    /// Puts back objects saved at resourceVersion `rv`, each with its own resourceVersion, and
    /// continues the counter from `rv`. No history is made: a watch or continue token from
    /// before `rv` is answered 410 Gone, as after a compaction, and one from `rv` resumes.
    pub(crate) fn restore(&mut self, rv: u64, contents: Vec<(String, Vec<Value>)>) {
        self.rv = self.rv.max(rv);
        self.rv_tx.send_replace(self.rv);
        for (key, objects) in contents {
            let store = self.store_mut(&key);
            for obj in objects {
                let ns = object::namespace(&obj).to_string();
                let obj_key = obj_key(&ns, object::name(&obj));
                if store.objects.insert(obj_key, Arc::new(obj)).is_none() {
                    *store.counts.entry(ns).or_default() += 1;
                }
            }
        }
        let rv = self.rv;
        for store in self.stores.values_mut() {
            store.compacted = rv;
            store.created = 0;
        }
    }

    /// Drops all retained history of every resource: any watch or continue token from before
    /// now is answered with 410 Gone.
    pub(crate) fn compact_all(&mut self) {
        let rv = self.rv;
        for s in self.stores.values_mut() {
            s.history.clear();
            s.history_bytes = 0;
            s.compacted = rv;
        }
    }

    /// The oldest resourceVersion a watch of `res_key` may start from.
    pub(crate) fn watch_floor(&self, res_key: &str) -> u64 {
        self.stores
            .get(res_key)
            .map_or(0, |s| s.compacted.max(s.created))
    }

    /// The version history was compacted to under `key` (0 for a store there is not).
    #[cfg(test)]
    fn compacted_of(&self, key: &str) -> u64 {
        self.stores.get(key).map_or(0, |s| s.compacted)
    }

    /// Events under `res_key` after `cursor`, at most `max`; `Err(compacted)` when some were dropped.
    pub(crate) fn events_after(
        &self,
        res_key: &str,
        cursor: u64,
        max: usize,
    ) -> Result<Vec<Arc<HistEvent>>, u64> {
        let Some(store) = self.stores.get(res_key) else {
            return Ok(Vec::new());
        };
        let floor = store.compacted.max(store.created);
        if cursor < floor {
            return Err(floor);
        }
        let start = store.history.partition_point(|e| e.rv <= cursor);
        Ok(store
            .history
            .iter()
            .skip(start)
            .take(max)
            .cloned()
            .collect())
    }

    /// The objects under `store_key` and `prefix` from `start` on, as they were at `at` (or now),
    /// in key order; lazy when reading the present.
    fn scan<'a>(
        &'a self,
        store_key: &str,
        prefix: &'a str,
        start: &str,
        at: Option<u64>,
    ) -> ApiResult<Box<dyn Iterator<Item = (String, Arc<Value>)> + 'a>> {
        let Some(store) = self.store(store_key) else {
            return Ok(Box::new(std::iter::empty()));
        };
        let lower = format!("{prefix}{start}");
        let last_rv = store.history.back().map_or(store.compacted, |e| e.rv);
        let current = store
            .objects
            .range::<String, _>((Bound::Included(&lower), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix));
        let at = match at {
            Some(at) if at < last_rv => at,
            _ => return Ok(Box::new(current.map(|(k, v)| (k.clone(), v.clone())))),
        };
        if at < store.compacted {
            return Err(ApiError::expired(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
            ));
        }
        // Undo, newest first, every write after `at`.
        let mut overlay: BTreeMap<String, Option<Arc<Value>>> = BTreeMap::new();
        for e in store.history.iter().rev().take_while(|e| e.rv > at) {
            if e.key.starts_with(prefix) && e.key.as_str() >= lower.as_str() {
                overlay.insert(e.key.clone(), e.prev.clone());
            }
        }
        let mut merged: BTreeMap<String, Arc<Value>> = current
            .filter(|(k, _)| !overlay.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in overlay {
            if let Some(v) = v {
                merged.insert(k, v);
            }
        }
        Ok(Box::new(merged.into_iter()))
    }

    /// A list request: selectors, namespace, limit/continue and resourceVersion semantics.
    /// The filter's namespace (set only for namespaced resources) is the key prefix read.
    pub(crate) fn list(&self, store_key: &str, opts: &ListOptions) -> ApiResult<Page> {
        let rv_param = opts.resource_version.as_deref().unwrap_or("");
        let rv_match = opts.resource_version_match.as_deref().unwrap_or("");
        // The request handler validated the combination (`validate_list_options`).
        let prefix = match &opts.filter.namespace {
            Some(ns) => format!("{ns}/"),
            None => String::new(),
        };
        let mut limit = opts.limit;
        let (at, start, list_rv, offset) = if let Some(token) = opts.continue_token.as_deref() {
            if !rv_param.is_empty() && rv_param != "0" {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            if rv_param == "0" {
                // Served from the watch cache, which has no pages: the rest in one.
                limit = None;
            }
            let (rv, start, offset) = decode_continue(token)
                .map_err(|e| ApiError::bad_request(format!("invalid continue token: {e}")))?;
            let start = start.trim_end_matches('\0').to_string() + "\0";
            match rv {
                Some(rv) => (Some(rv), start, rv, offset),
                None => (None, start, self.rv, offset),
            }
        } else {
            match (rv_param, rv_match) {
                ("", _) => (None, String::new(), self.rv, 0),
                // Any version will do: the watch cache answers whole, ignoring the limit.
                ("0", _) => {
                    limit = None;
                    (None, String::new(), self.rv, 0)
                }
                // With a limit and no match, a resourceVersion is read exactly (etcd pages
                // at one revision).
                (v, m) if m == "Exact" || (m.is_empty() && limit.is_some()) => {
                    let n = parse_rv(v)?;
                    if n > self.rv {
                        return Err(too_large(n, self.rv));
                    }
                    if let Some(store) = self.store(store_key)
                        && n < store.compacted
                    {
                        return Err(ApiError::expired(format!(
                            "too old resource version: {n} ({})",
                            store.compacted + 1
                        )));
                    }
                    (Some(n), String::new(), n, 0)
                }
                (v, _) => {
                    let n = parse_rv(v)?;
                    if n > self.rv {
                        return Err(too_large(n, self.rv));
                    }
                    (None, String::new(), self.rv, 0)
                }
            }
        };
        // A start key carries a trailing NUL: everything strictly after the last key returned.
        let mut rows = match self.scan(store_key, &prefix, &start, at) {
            Ok(rows) => rows.peekable(),
            // A continue token from compacted history: the 410 carries a token that goes on
            // from the same key in the present (`inconsistentContinue`).
            Err(e) if e.code == 410 && opts.continue_token.is_some() => {
                let go_on = encode_continue_at(None, &start, offset);
                return Err(e.with_list_meta(json!({"continue": go_on})));
            }
            Err(e) => return Err(e),
        };
        let mut items = Vec::new();
        let mut last_key: Option<String> = None;
        let mut consumed = 0u64;
        while let Some((k, v)) = rows.next_if(|_| limit.is_none_or(|l| items.len() < l)) {
            consumed += 1;
            if opts.filter.matches(&v) {
                items.push(v);
                last_key = Some(k);
            }
        }
        let more = rows.peek().is_some();
        let (continue_token, remaining) = match (limit, last_key) {
            (Some(_), Some(last)) if more => {
                let rel = last.strip_prefix(prefix.as_str()).unwrap_or(&last);
                let remaining = if opts.filter.has_selectors() {
                    None
                } else {
                    let total = self
                        .store(store_key)
                        .map_or(0, |s| match &opts.filter.namespace {
                            Some(ns) => s.counts.get(ns).copied().unwrap_or(0),
                            None => s.objects.len(),
                        }) as u64;
                    Some(total.saturating_sub(offset + consumed).max(1))
                };
                (
                    Some(encode_continue(
                        list_rv,
                        &format!("{rel}\0"),
                        offset + consumed,
                    )),
                    remaining,
                )
            }
            _ => (None, None),
        };
        Ok(Page {
            items,
            resource_version: list_rv,
            continue_token,
            remaining,
        })
    }

    /// Every object under `store_key` (optionally in one namespace), now.
    pub(crate) fn all_objects(&self, store_key: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
        let Some(store) = self.store(store_key) else {
            return Vec::new();
        };
        match namespace {
            Some(ns) => {
                let prefix = format!("{ns}/");
                store
                    .objects
                    .range::<String, _>((Bound::Included(&prefix), Bound::Unbounded))
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v.clone())
                    .collect()
            }
            None => store.objects.values().cloned().collect(),
        }
    }
}

/// 504 for a read at a resourceVersion the storage has not reached (after waiting
/// [`FUTURE_RV_WAIT`] for it).
pub(crate) fn too_large(n: u64, current: u64) -> ApiError {
    ApiError::new(
        504,
        "Timeout",
        format!("Timeout: Too large resource version: {n}, current: {current}"),
    )
    .with_details(json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CM: &str = "configmaps";

    fn cm(ns: &str, name: &str, v: i64) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}, "data": {"v": v.to_string()}})
    }

    fn state(cap: usize) -> (Storage, &'static str) {
        let mut st = Storage::new(cap);
        st.ensure(CM);
        (st, CM)
    }

    fn ok<T>(r: ApiResult<T>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue(42, "ns/name\0", 7);
        assert_eq!(
            decode_continue(&t),
            Ok((Some(42), "ns/name\0".to_string(), 7))
        );
        let latest = encode_continue_at(None, "ns/name\0", 7);
        assert_eq!(
            decode_continue(&latest),
            Ok((None, "ns/name\0".to_string(), 7))
        );
        assert!(decode_continue("!!!").is_err());
        let bad = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"v":"x","rv":1,"start":"a"}"#);
        assert!(decode_continue(&bad).is_err());
    }

    #[test]
    fn pages_are_a_consistent_snapshot() {
        let (mut st, r) = state(100);
        for i in 0..5 {
            st.put(r, cm("a", &format!("c{i}"), i));
        }
        let opts = ListOptions {
            limit: Some(2),
            ..Default::default()
        };
        let p1 = ok(st.list(r, &opts));
        assert_eq!(p1.items.len(), 2);
        assert_eq!(p1.remaining, Some(3));
        let snapshot_rv = p1.resource_version;
        // Writes after the first page are invisible to the following pages.
        st.put(r, cm("a", "c9", 9));
        st.remove(r, "a", "c3");
        st.put(r, cm("a", "c2", 22));
        let mut names = Vec::new();
        let mut token = p1.continue_token.clone();
        while let Some(t) = token {
            let p = ok(st.list(
                r,
                &ListOptions {
                    limit: Some(2),
                    continue_token: Some(t),
                    ..Default::default()
                },
            ));
            assert_eq!(p.resource_version, snapshot_rv);
            names.extend(p.items.iter().map(|o| object::name(o).to_string()));
            for o in &p.items {
                if object::name(o) == "c2" {
                    assert_eq!(o["data"]["v"], "2");
                }
            }
            token = p.continue_token;
        }
        assert_eq!(names, vec!["c2", "c3", "c4"]);
    }

    #[test]
    fn expired_continue_and_history_are_410() {
        let (mut st, r) = state(2);
        for i in 0..3 {
            st.put(r, cm("a", &format!("c{i}"), i));
        }
        let p1 = ok(st.list(
            r,
            &ListOptions {
                limit: Some(1),
                ..Default::default()
            },
        ));
        for i in 0..3 {
            st.put(r, cm("a", &format!("c{i}"), i + 10));
        }
        let e = st.list(
            r,
            &ListOptions {
                limit: Some(1),
                continue_token: p1.continue_token,
                ..Default::default()
            },
        );
        let e = e.expect_err("a compacted continue token is refused");
        assert_eq!(e.code, 410);
        // `inconsistentContinue`: the 410 offers a token that reads the rest in the present.
        let token = e.list_meta.as_ref().and_then(|m| m["continue"].as_str());
        let token = token.expect("the 410 carries a continue token").to_string();
        assert_eq!(decode_continue(&token), Ok((None, "a/c0\0".to_string(), 1)));
        let rest = ok(st.list(
            r,
            &ListOptions {
                continue_token: Some(token),
                ..Default::default()
            },
        ));
        assert_eq!(rest.resource_version, st.rv);
        let names: Vec<_> = rest
            .items
            .iter()
            .map(|o| object::name(o).to_string())
            .collect();
        assert_eq!(names, ["c1", "c2"]);
        // An Exact read of compacted history is 410 too.
        let e = st.list(
            r,
            &ListOptions {
                resource_version: Some("1".into()),
                resource_version_match: Some("Exact".into()),
                ..Default::default()
            },
        );
        assert_eq!(e.map_err(|e| e.code).err(), Some(410));
        // The watch history keeps only the last two events.
        assert!(st.events_after(r, 1, 10).is_err());
        let recent = st.events_after(r, st.rv - 2, 10);
        assert_eq!(recent.map(|v| v.len()), Ok(2));
    }

    #[test]
    fn history_is_bounded_in_bytes_too() {
        let (mut st, r) = state(100);
        st.history_max_bytes = 10_000;
        let big = |i: i64| json!({"metadata": {"namespace": "a", "name": "big"}, "data": {"v": "x".repeat(3_000), "i": i}});
        for i in 0..10 {
            st.put(r, big(i));
        }
        let kept = st.events_after(r, st.compacted_of(r), 100).map(|v| v.len());
        assert_eq!(kept, Ok(3), "three 3 KB events fit in 10 KB");
        // Watches from before what is kept are told so.
        assert!(st.events_after(r, 1, 100).is_err());
        // The latest event is always kept, however large.
        st.put(r, json!({"metadata": {"namespace": "a", "name": "huge"}, "data": {"v": "x".repeat(20_000)}}));
        assert_eq!(st.events_after(r, st.rv - 1, 100).map(|v| v.len()), Ok(1));
    }

    #[test]
    fn namespaces_and_exact_reads() {
        let (mut st, r) = state(100);
        st.put(r, cm("a", "x", 1));
        st.put(r, cm("a-b", "x", 1));
        st.put(r, cm("b", "x", 1));
        let at = st.rv;
        st.remove(r, "b", "x");
        let p = ok(st.list(
            r,
            &ListOptions {
                filter: Filter {
                    namespace: Some("a".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ));
        assert_eq!(p.items.len(), 1);
        let exact = ok(st.list(
            r,
            &ListOptions {
                resource_version: Some(at.to_string()),
                resource_version_match: Some("Exact".into()),
                ..Default::default()
            },
        ));
        assert_eq!(exact.items.len(), 3);
        assert_eq!(exact.resource_version, at);
        let e = st.list(
            r,
            &ListOptions {
                resource_version: Some("999".into()),
                ..Default::default()
            },
        );
        assert_eq!(e.map_err(|e| e.code).err(), Some(504));
    }
}
