//! Persistence, opt-in: the state saved to a data directory as one snapshot file and restored
//! from it at start, so a long-lived development server keeps its objects across restarts.
//!
//! A snapshot (`snapshot.json`) holds every stored object with its resourceVersion and the
//! global resourceVersion; it is written whole to a temporary file (mode 0600, since Secrets
//! are in it) and renamed into place, so a crash leaves the previous snapshot intact. Restoring
//! puts the objects back, registers the resources of the CustomResourceDefinitions among them
//! and continues the resourceVersion counter, so clients resume their watches from the last
//! version they saw. A directory that holds anything else, or a snapshot that cannot be read,
//! is refused with [`FakeError::DataDir`]: nothing is ever silently emptied.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::FakeError;
use crate::semantics::crd;
use crate::semantics::state::State;

/// The snapshot's file name in the data directory.
pub(crate) const SNAPSHOT_FILE: &str = "snapshot.json";
const KIND: &str = "KubeFakeApiServerSnapshot";
const API_VERSION: &str = "kube-codegen.dev/v1";
const CRDS: &str = "customresourcedefinitions.apiextensions.k8s.io";

fn refused(dir: &Path, reason: impl Into<String>) -> FakeError {
    FakeError::DataDir {
        path: dir.to_path_buf(),
        reason: reason.into(),
    }
}

/// A snapshot read from disk.
#[derive(Debug)]
pub(crate) struct Snapshot {
    rv: u64,
    stores: Vec<(String, Vec<Value>)>,
}

impl Snapshot {
    /// How many objects it holds.
    pub(crate) fn len(&self) -> usize {
        self.stores.iter().map(|(_, o)| o.len()).sum()
    }
}

/// Whether `name` is what a save leaves in a data directory (the snapshot, or a temporary
/// file of a save that was interrupted).
fn ours(name: &str) -> bool {
    name == SNAPSHOT_FILE
        || (name.starts_with(&format!(".{SNAPSHOT_FILE}.")) && name.ends_with(".tmp"))
}

/// Reads the snapshot of `dir`: `None` for a directory that does not exist or is empty (a
/// first start), an error for a directory that holds anything but our files or a snapshot
/// that is not one.
pub(crate) fn load(dir: &Path) -> Result<Option<Snapshot>, FakeError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(dir, format!("cannot read it: {e}"))),
    };
    let mut foreign = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| refused(dir, format!("cannot read it: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !ours(&name) {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        return Err(refused(
            dir,
            format!(
                "it is not a kube-fake-apiserver data directory: it holds {} (use an empty or new directory)",
                foreign.join(", ")
            ),
        ));
    }
    let path = dir.join(SNAPSHOT_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(dir, format!("cannot read {SNAPSHOT_FILE}: {e}"))),
    };
    parse(&bytes).map(Some).map_err(|reason| {
        refused(
            dir,
            format!("{SNAPSHOT_FILE} is not a snapshot this server can restore: {reason}"),
        )
    })
}

fn parse(bytes: &[u8]) -> Result<Snapshot, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let kind = (
        v.get("apiVersion").and_then(Value::as_str),
        v.get("kind").and_then(Value::as_str),
    );
    if kind != (Some(API_VERSION), Some(KIND)) {
        return Err(format!(
            "its apiVersion and kind are {kind:?}, not {API_VERSION} {KIND}"
        ));
    }
    let rv = v
        .get("resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or("resourceVersion is missing or not a number")?;
    let Some(Value::Object(stores)) = v.get("stores") else {
        return Err("stores is missing or not an object".into());
    };
    let mut out = Vec::new();
    for (key, objects) in stores {
        let Value::Array(objects) = objects else {
            return Err(format!("stores.{key} is not a list"));
        };
        for (i, o) in objects.iter().enumerate() {
            let meta = o.get("metadata");
            let name = meta.and_then(|m| m.get("name")).and_then(Value::as_str);
            let obj_rv = meta
                .and_then(|m| m.get("resourceVersion"))
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<u64>().ok());
            match (name, obj_rv) {
                (Some(n), Some(r)) if !n.is_empty() && r <= rv => {}
                _ => {
                    return Err(format!(
                        "stores.{key}[{i}] has no name, or no resourceVersion at or below the snapshot's {rv}"
                    ));
                }
            }
        }
        out.push((key.clone(), objects.clone()));
    }
    Ok(Snapshot { rv, stores: out })
}

/// Puts a snapshot's objects back and serves the resources of its CRDs.
pub(crate) fn restore(st: &mut State, snapshot: Snapshot) {
    let crds: Vec<Value> = snapshot
        .stores
        .iter()
        .filter(|(key, _)| key == CRDS)
        .flat_map(|(_, objects)| objects.iter().cloned())
        .collect();
    st.storage.restore(snapshot.rv, snapshot.stores);
    for crd_obj in &crds {
        for r in crd::resources(crd_obj) {
            st.register(r);
        }
    }
}

/// What a save wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    /// The resourceVersion the snapshot is at.
    pub resource_version: u64,
    /// How many objects it holds.
    pub objects: usize,
}

/// The state as it is now, encoded as a snapshot. The objects are taken under the lock (a
/// cheap copy of shared pointers) and encoded after it is released.
pub(crate) fn encode(state: &parking_lot::Mutex<State>) -> Result<(Vec<u8>, Saved), FakeError> {
    let (rv, contents) = {
        let st = state.lock();
        (st.rv(), st.storage.contents())
    };
    let mut stores = serde_json::Map::new();
    let mut objects = 0;
    for (key, objs) in contents {
        if objs.is_empty() {
            continue;
        }
        objects += objs.len();
        let list: Vec<&Value> = objs.iter().map(|o| o.as_ref()).collect();
        stores.insert(key, json!(list));
    }
    let doc = json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "resourceVersion": rv.to_string(),
        "stores": stores,
    });
    Ok((
        serde_json::to_vec(&doc)?,
        Saved {
            resource_version: rv,
            objects,
        },
    ))
}

/// Writes a snapshot of the state into `dir` (created if missing), all or nothing.
pub(crate) fn save(state: &parking_lot::Mutex<State>, dir: &Path) -> Result<Saved, FakeError> {
    // Refuse a foreign directory before writing anything into it.
    load(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| refused(dir, format!("cannot create it: {e}")))?;
    let (bytes, saved) = encode(state)?;
    let path: PathBuf = dir.join(SNAPSHOT_FILE);
    crate::private_file::write_private_file(&path, &bytes)?;
    Ok(saved)
}
