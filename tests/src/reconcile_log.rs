//! Reading what a controller process logged (JSON lines, one per event, as crddemo and
//! eru-operator write them with `--log-format=json`): the entries, their timestamps and the
//! windows in which each worker reconciled a key, which the failover and sharding tests check
//! for overlaps.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// A log that cannot be read as windows.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An entry has no RFC 3339 `timestamp`.
    #[error("no timestamp in log entry {0}")]
    NoTimestamp(Value),
    /// A worker logged a start while its previous window was still open.
    #[error("worker {worker} started a reconcile of {key} before ending its reconcile of {open}")]
    StartedTwice {
        /// The worker's number.
        worker: u64,
        /// The key of the window still open.
        open: String,
        /// The key of the new start.
        key: String,
    },
}

/// Every JSON line of the log at `path` so far (lines that are not JSON are skipped; a log not
/// written yet has none).
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// An entry's `timestamp`.
pub fn timestamp(e: &Value) -> Result<jiff::Timestamp, LogError> {
    e["timestamp"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| LogError::NoTimestamp(e.clone()))
}

/// One reconcile of a key by a process, as its log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The process's identity (its `identity` field).
    pub identity: String,
    /// The key reconciled (`namespace/name`).
    pub key: String,
    /// When the reconcile started.
    pub start: jiff::Timestamp,
    /// When it ended; `None` when it had not (yet, or the process was killed).
    pub end: Option<jiff::Timestamp>,
}

/// The windows of one process's log: each `start` message of a worker paired with the same
/// worker's next message among `ends`. Windows still open come last.
pub fn windows(entries: &[Value], start: &str, ends: &[&str]) -> Result<Vec<Window>, LogError> {
    let mut open: BTreeMap<u64, Window> = BTreeMap::new();
    let mut done = Vec::new();
    for e in entries {
        let Some(worker) = e["worker"].as_u64() else {
            continue;
        };
        let message = e["message"].as_str().unwrap_or_default();
        if message == start {
            let w = Window {
                identity: e["identity"].as_str().unwrap_or_default().to_string(),
                key: e["key"].as_str().unwrap_or_default().to_string(),
                start: timestamp(e)?,
                end: None,
            };
            if let Some(prev) = open.get(&worker) {
                return Err(LogError::StartedTwice {
                    worker,
                    open: prev.key.clone(),
                    key: w.key,
                });
            }
            open.insert(worker, w);
        } else if ends.contains(&message)
            && let Some(mut w) = open.remove(&worker)
        {
            w.end = Some(timestamp(e)?);
            done.push(w);
        }
    }
    done.extend(open.into_values());
    Ok(done)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(worker: u64, message: &str, key: &str, t: &str) -> Value {
        json!({"worker": worker, "message": message, "key": key, "identity": "a", "timestamp": t})
    }

    #[test]
    fn pairs_each_start_with_the_same_workers_next_end() {
        let log = [
            entry(0, "reconcile start", "ns/x", "2026-01-01T00:00:00Z"),
            entry(1, "reconcile start", "ns/y", "2026-01-01T00:00:01Z"),
            entry(0, "reconcile end", "ns/x", "2026-01-01T00:00:02Z"),
            entry(1, "something else", "ns/y", "2026-01-01T00:00:03Z"),
        ];
        let ws = windows(&log, "reconcile start", &["reconcile end"]).unwrap();
        assert_eq!(ws.len(), 2);
        assert_eq!(ws[0].key, "ns/x");
        assert_eq!(ws[0].end, Some("2026-01-01T00:00:02Z".parse().unwrap()));
        assert_eq!((ws[1].key.as_str(), ws[1].end), ("ns/y", None));
    }

    #[test]
    fn a_second_start_before_an_end_is_an_error() {
        let log = [
            entry(0, "reconcile start", "ns/x", "2026-01-01T00:00:00Z"),
            entry(0, "reconcile start", "ns/y", "2026-01-01T00:00:01Z"),
        ];
        let err = windows(&log, "reconcile start", &["reconcile end"]).unwrap_err();
        assert!(
            matches!(err, LogError::StartedTwice { worker: 0, .. }),
            "{err}"
        );
    }
}
