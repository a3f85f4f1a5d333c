//! Field ownership for server-side apply: `metadata.managedFields` entries, `fieldsV1`
//! encoding, the apply merge, and conflicts between managers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::error::{ApiError, go_quote};
use crate::semantics::list_type::{ListType, is_atomic_map, item_key, item_matches, list_type};
use crate::semantics::resources::Resource;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Seg {
    /// `f:name`: a field of an object.
    Field(String),
    /// `k:{"name":"x"}`: an item of a keyed list (canonical JSON of its key).
    Key(String),
    /// `v:"x"`: an item of a set.
    Value(String),
    /// `i:0`: an item of a list by position.
    Index(usize),
}

pub(crate) type FieldPath = Vec<Seg>;
pub(crate) type FieldSet = BTreeSet<FieldPath>;

/// Which part of an object a request writes: the main resource, the status subresource, or
/// the scale subresource (the replicas field alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Main,
    Status,
    Scale,
}

impl Scope {
    pub(crate) fn subresource(self) -> &'static str {
        match self {
            Scope::Main => "",
            Scope::Status => "status",
            Scope::Scale => "scale",
        }
    }

    /// The time recorded in an entry written at `now`: none for a write through `/scale`,
    /// whose entries kube-apiserver v1.37 stores without a `time` (so they sort before the
    /// other entries of their operation).
    pub(crate) fn entry_time(self, now: &str) -> &str {
        match self {
            Scope::Scale => "",
            Scope::Main | Scope::Status => now,
        }
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) time: String,
    pub(crate) subresource: String,
    pub(crate) fields: FieldSet,
}

impl Entry {
    fn same_id(&self, manager: &str, operation: &str, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }

    /// kube-apiserver's identity of a manager (`BuildManagerIdentifier`): an updater's
    /// version counts, an applier's does not.
    fn identity(&self) -> (&str, &str, &str, &str) {
        let version = if self.operation == "Apply" {
            ""
        } else {
            &self.api_version
        };
        (&self.manager, &self.operation, version, &self.subresource)
    }
}

/// The field manager of the API server's own writes (its controllers' status updates, its
/// leader election).
pub(crate) const SERVER_MANAGER: &str = "kube-apiserver";

/// The version of the `Scale` that the scale subresource reads and writes.
pub(crate) const SCALE_API_VERSION: &str = "autoscaling/v1";

/// The manager kube-apiserver gives the fields an object had before its first apply, when
/// nobody owns them.
pub(crate) const BEFORE_FIRST_APPLY: &str = "before-first-apply";

const META_TRACKED: &[&str] = &["labels", "annotations", "finalizers", "ownerReferences"];

/// The field a `Scale`'s replicas map to, the one field a [`Scope::Scale`] write owns.
pub(crate) fn scale_replicas_path(resource: &Resource) -> FieldPath {
    crate::semantics::scale::spec_replicas_path(resource)
        .into_iter()
        .map(Seg::Field)
        .collect()
}

/// Where the fields a manager of `scope` can own start in an object: its top-level fields in
/// the scope, and of its metadata those a manager owns (labels, annotations, finalizers,
/// owner references). Each as (field names, path, value).
fn tracked_roots<'a>(
    resource: &Resource,
    root: &'a Map<String, Value>,
    scope: Scope,
) -> Vec<(Vec<String>, FieldPath, &'a Value)> {
    let mut out = Vec::new();
    for (k, child) in root {
        let in_scope = match scope {
            Scope::Status => k == "status",
            Scope::Main | Scope::Scale => !(k == "status" && resource.has_status()),
        };
        if !in_scope || k == "apiVersion" || k == "kind" {
            continue;
        }
        if k == "metadata" {
            for (mk, mv) in child.as_object().into_iter().flatten() {
                if META_TRACKED.contains(&mk.as_str()) {
                    let names = vec!["metadata".to_string(), mk.clone()];
                    let path = vec![Seg::Field("metadata".into()), Seg::Field(mk.clone())];
                    out.push((names, path, mv));
                }
            }
            continue;
        }
        out.push((vec![k.clone()], vec![Seg::Field(k.clone())], child));
    }
    out
}

/// The leaf fields of `v` a manager of `scope` can own.
pub(crate) fn leaves(resource: &Resource, v: &Value, scope: Scope) -> FieldSet {
    let mut out = FieldSet::new();
    let Some(root) = v.as_object() else {
        return out;
    };
    if scope == Scope::Scale {
        // A scale writer owns the one field a `Scale` maps to, as kube-apiserver's scale
        // handler converts its managed fields to the parent's.
        let path = scale_replicas_path(resource);
        if get_at(v, &path).is_some() {
            out.insert(path);
        }
        return out;
    }
    for (mut names, mut path, child) in tracked_roots(resource, root, scope) {
        walk(resource, child, &mut names, &mut path, &mut out);
    }
    out
}

fn walk(
    resource: &Resource,
    v: &Value,
    names: &mut Vec<String>,
    path: &mut FieldPath,
    out: &mut FieldSet,
) {
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let atomic = v.is_object() && is_atomic_map(resource, &name_refs);
    match v {
        Value::Object(m) if !m.is_empty() && !atomic => {
            for (k, child) in m {
                names.push(k.clone());
                path.push(Seg::Field(k.clone()));
                walk(resource, child, names, path, out);
                path.pop();
                names.pop();
            }
        }
        Value::Array(items) => {
            let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
            match list_type(resource, &name_refs) {
                ListType::Atomic => {
                    out.insert(path.clone());
                }
                ListType::Set => {
                    for item in items {
                        path.push(Seg::Value(item.to_string()));
                        out.insert(path.clone());
                        path.pop();
                    }
                }
                ListType::Map(keys) => {
                    for item in items {
                        let Some(key) = item_key(item, &keys) else {
                            continue;
                        };
                        path.push(Seg::Key(key.to_string()));
                        out.insert(path.clone());
                        walk(resource, item, names, path, out);
                        path.pop();
                    }
                }
            }
        }
        _ => {
            out.insert(path.clone());
        }
    }
}

/// The value at a field path.
pub(crate) fn get_at<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path {
        cur = step(cur, seg)?;
    }
    Some(cur)
}

fn step<'a>(cur: &'a Value, seg: &Seg) -> Option<&'a Value> {
    match seg {
        Seg::Field(f) => cur.get(f),
        Seg::Key(k) => {
            let key: Value = serde_json::from_str(k).ok()?;
            cur.as_array()?.iter().find(|i| item_matches(i, &key))
        }
        Seg::Value(s) => {
            let want: Value = serde_json::from_str(s).ok()?;
            cur.as_array()?.iter().find(|i| **i == want)
        }
        Seg::Index(i) => cur.as_array()?.get(*i),
    }
}

/// Removes the field at `path` (no-op when absent).
pub(crate) fn remove_at(v: &mut Value, path: &[Seg]) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for seg in parent_path {
        let next = match seg {
            Seg::Field(f) => cur.get_mut(f),
            Seg::Key(k) => match serde_json::from_str::<Value>(k) {
                Ok(key) => cur
                    .as_array_mut()
                    .and_then(|a| a.iter_mut().find(|i| item_matches(i, &key))),
                Err(_) => None,
            },
            Seg::Value(s) => match serde_json::from_str::<Value>(s) {
                Ok(want) => cur
                    .as_array_mut()
                    .and_then(|a| a.iter_mut().find(|i| **i == want)),
                Err(_) => None,
            },
            Seg::Index(i) => cur.as_array_mut().and_then(|a| a.get_mut(*i)),
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    match last {
        Seg::Field(f) => {
            if let Some(m) = cur.as_object_mut() {
                m.remove(f);
            }
        }
        Seg::Key(k) => {
            if let (Ok(key), Some(a)) = (serde_json::from_str::<Value>(k), cur.as_array_mut()) {
                a.retain(|i| !item_matches(i, &key));
            }
        }
        Seg::Value(s) => {
            if let (Ok(want), Some(a)) = (serde_json::from_str::<Value>(s), cur.as_array_mut()) {
                a.retain(|i| *i != want);
            }
        }
        Seg::Index(i) => {
            if let Some(a) = cur.as_array_mut()
                && *i < a.len()
            {
                a.remove(*i);
            }
        }
    }
}

/// Renders a path as the API server does in conflict messages (`.spec.containers[name="c"]`).
pub(crate) fn render_path(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Field(f) => {
                s.push('.');
                s.push_str(f);
            }
            Seg::Key(k) => {
                let inner = serde_json::from_str::<Map<String, Value>>(k)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_else(|_| k.clone());
                s.push_str(&format!("[{inner}]"));
            }
            Seg::Value(v) => s.push_str(&format!("[={v}]")),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[derive(Default)]
struct Node {
    leaf: bool,
    children: BTreeMap<String, Node>,
}

fn seg_key(seg: &Seg) -> String {
    match seg {
        Seg::Field(f) => format!("f:{f}"),
        Seg::Key(k) => format!("k:{k}"),
        Seg::Value(v) => format!("v:{v}"),
        Seg::Index(i) => format!("i:{i}"),
    }
}

fn render_node(n: &Node) -> Value {
    let mut m = Map::new();
    if n.leaf && !n.children.is_empty() {
        m.insert(".".into(), json!({}));
    }
    for (k, c) in &n.children {
        m.insert(k.clone(), render_node(c));
    }
    Value::Object(m)
}

/// Encodes a field set as `fieldsV1`.
pub(crate) fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Node::default();
    for path in set {
        let mut cur = &mut root;
        for seg in path {
            cur = cur.children.entry(seg_key(seg)).or_default();
        }
        cur.leaf = true;
    }
    render_node(&root)
}

/// Decodes `fieldsV1`.
pub(crate) fn from_fields_v1(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    let mut path = Vec::new();
    parse_node(v, &mut path, &mut out);
    out
}

fn parse_node(v: &Value, path: &mut FieldPath, out: &mut FieldSet) {
    let Some(m) = v.as_object() else {
        return;
    };
    if m.is_empty() && !path.is_empty() {
        out.insert(path.clone());
        return;
    }
    for (k, child) in m {
        if k == "." {
            if !path.is_empty() {
                out.insert(path.clone());
            }
            continue;
        }
        let seg = if let Some(f) = k.strip_prefix("f:") {
            Seg::Field(f.to_string())
        } else if let Some(key) = k.strip_prefix("k:") {
            Seg::Key(key.to_string())
        } else if let Some(val) = k.strip_prefix("v:") {
            Seg::Value(val.to_string())
        } else if let Some(i) = k.strip_prefix("i:").and_then(|i| i.parse().ok()) {
            Seg::Index(i)
        } else {
            continue;
        };
        path.push(seg);
        parse_node(child, path, out);
        path.pop();
    }
}

/// Reads `metadata.managedFields` as kube-apiserver decodes them: of two entries of one
/// manager (see [`through_scale`]), the later one is kept.
pub(crate) fn read_entries(obj: &Value) -> Vec<Entry> {
    let mut entries = stored_entries(obj);
    keep_latest(&mut entries);
    entries
}

/// Of two entries of one manager, keeps the later one.
fn keep_latest(entries: &mut Vec<Entry>) {
    let mut i = 0;
    while i < entries.len() {
        let id = entries[i].identity();
        if entries[i + 1..].iter().any(|later| later.identity() == id) {
            entries.remove(i);
        } else {
            i += 1;
        }
    }
}

/// What the `metadata.managedFields` of a create, update or non-apply patch ask for, read as
/// kube-apiserver's field manager reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Requested {
    /// Absent, `null`, or not decodable (an entry whose `operation` is neither `Apply` nor
    /// `Update`, without `apiVersion`, or whose `fieldsType` is not `FieldsV1`): the live
    /// object's entries stand (none on a create).
    Keep,
    /// `[]` or `[{}]`, the documented way to clear them: an update leaves the object without
    /// managed fields, and does not record itself (a create still does).
    Reset,
    /// The entries to start from instead of the live object's.
    Entries(Vec<Entry>),
}

/// Reads the `metadata.managedFields` of a request's object (see [`Requested`]). A custom
/// resource's `[]` is no reset: its metadata drops an empty list before the field manager
/// sees it.
pub(crate) fn requested_entries(resource: &Resource, managed_fields: Option<&Value>) -> Requested {
    let Some(list) = managed_fields.and_then(Value::as_array) else {
        return Requested::Keep;
    };
    // Go's zero `ManagedFieldsEntry`: every field empty or null.
    let zero = |e: &Value| {
        e.as_object().is_some_and(|m| {
            m.iter().all(|(k, v)| match k.as_str() {
                "manager" | "operation" | "apiVersion" | "fieldsType" | "subresource" => {
                    v.is_null() || v == ""
                }
                "time" | "fieldsV1" => v.is_null(),
                _ => true,
            })
        })
    };
    if list.is_empty() {
        return if resource.is_custom() {
            Requested::Keep
        } else {
            Requested::Reset
        };
    }
    if list.len() == 1 && zero(&list[0]) {
        return Requested::Reset;
    }
    let text = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut entries = Vec::new();
    for e in list {
        let operation = text(e, "operation");
        let fields = e.get("fieldsV1").filter(|f| f.is_object());
        if !matches!(operation.as_str(), "Apply" | "Update")
            || text(e, "apiVersion").is_empty()
            || text(e, "fieldsType") != "FieldsV1"
            || fields.is_none()
        {
            return Requested::Keep;
        }
        entries.push(Entry {
            manager: text(e, "manager"),
            operation,
            api_version: text(e, "apiVersion"),
            time: text(e, "time"),
            subresource: text(e, "subresource"),
            fields: fields.map(from_fields_v1).unwrap_or_default(),
        });
    }
    keep_latest(&mut entries);
    Requested::Entries(entries)
}

/// The entries of `metadata.managedFields`, as stored.
fn stored_entries(obj: &Value) -> Vec<Entry> {
    crate::storage::object::meta(obj)
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| {
                    Some(Entry {
                        manager: e.get("manager")?.as_str()?.to_string(),
                        operation: e
                            .get("operation")
                            .and_then(Value::as_str)
                            .unwrap_or("Update")
                            .to_string(),
                        api_version: e
                            .get("apiVersion")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        time: e
                            .get("time")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        subresource: e
                            .get("subresource")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of a write through `/scale` as kube-apiserver v1.37 stores them, from the
/// entries `before` the write and those the write left (`entries`). Its scale handler
/// converts the replicas' owners to the `Scale`'s version and back, and an updater's
/// identity holds its version, so that no updater is recognised on the way back: each one
/// that still owns the replicas keeps the rest of its fields in its entry and the replicas
/// in a second entry of the same manager, without a time. (That second entry is lost at the
/// next write, when [`read_entries`] keeps the later of the two.) An applier of the replicas
/// that is still a manager of the `Scale` keeps its entry as it was, even when it no longer
/// applies the replicas: `applier`, the manager of an apply whose `Scale` kept fields of its
/// own (an empty `spec`).
fn through_scale(
    resource: &Resource,
    before: &[Entry],
    entries: &mut Vec<Entry>,
    applier: Option<&str>,
) {
    let replicas = scale_replicas_path(resource);
    let kept = applier.and_then(|m| {
        before
            .iter()
            .find(|b| b.same_id(m, "Apply", Scope::Scale.subresource()))
            .filter(|b| b.fields.contains(&replicas))
    });
    if let Some(kept) = kept {
        entries.retain(|e| e.identity() != kept.identity());
        entries.push(kept.clone());
    }
    let mut out = Vec::with_capacity(entries.len() + 1);
    for e in entries.drain(..) {
        if !e.fields.contains(&replicas) {
            out.push(e);
            continue;
        }
        let kept_applier = before
            .iter()
            .find(|b| b.identity() == e.identity() && b.fields.contains(&replicas))
            .filter(|_| e.operation == "Apply");
        if let Some(b) = kept_applier {
            out.push(b.clone());
            continue;
        }
        let rest: FieldSet = e
            .fields
            .iter()
            .filter(|p| **p != replicas)
            .cloned()
            .collect();
        out.push(Entry {
            api_version: resource.api_version(),
            time: String::new(),
            fields: [replicas.clone()].into(),
            ..e.clone()
        });
        if !rest.is_empty() {
            out.push(Entry { fields: rest, ..e });
        }
    }
    *entries = out;
}

/// Writes `metadata.managedFields` (removed when there are no entries).
pub(crate) fn write_entries(obj: &mut Value, entries: &[Entry]) {
    // kube-apiserver's order: operation (Apply before Update), time, manager, version,
    // subresource.
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let list: Vec<Value> = sorted
        .into_iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            if !e.time.is_empty() {
                m.insert("time".into(), json!(e.time));
            }
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), to_fields_v1(&e.fields));
            if !e.subresource.is_empty() {
                m.insert("subresource".into(), json!(e.subresource));
            }
            Value::Object(m)
        })
        .collect();
    let meta = crate::storage::object::meta_mut(obj);
    if list.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

/// Records a non-apply write by `manager`: it takes ownership of every field it changed. A
/// write through `/scale` then has its entries converted as kube-apiserver's scale handler
/// converts them ([`through_scale`]).
pub(crate) fn record_update(
    resource: &Resource,
    entries: &mut Vec<Entry>,
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    scope: Scope,
    time: &str,
) {
    let before = (scope == Scope::Scale).then(|| entries.clone());
    // The field manager reads a built-in object as Go encodes it: without the zero values of
    // `omitempty` scalars a strategy's defaults may have set (a ReplicationController's
    // `minReadySeconds: 0`), and with the structs Go writes even when absent. Those the write
    // left out are no field of its writer (a new container's `resources: {}`).
    let raw = new;
    let encoded;
    let new = match resource
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    {
        Some(def) => {
            let mut v = new.clone();
            crate::semantics::fields::stored_as_go(&mut v, def);
            encoded = v;
            &encoded
        }
        None => new,
    };
    let new_leaves: FieldSet = leaves(resource, new, scope)
        .into_iter()
        .filter(|p| {
            get_at(raw, p).is_some()
                || !get_at(new, p)
                    .is_some_and(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
        })
        .collect();
    let mut changed: FieldSet = match old {
        // An empty struct Go writes for the kind's zero value too (a template's `metadata`),
        // and the zero value of a scalar it writes there (a StatefulSet's `serviceName: ""`),
        // are no change.
        None => new_leaves
            .into_iter()
            .filter(|p| {
                !(get_at(new, p).is_some_and(|v| {
                    v.as_object().is_some_and(Map::is_empty)
                        || crate::semantics::fields::is_zero_scalar(v)
                }) && present_before(resource, &json!({}), p))
            })
            .collect(),
        Some(old) => {
            let old_leaves = leaves(resource, old, scope);
            // A map or struct present before and after is no field of its own that changed
            // (an empty one is a leaf in one of the two): its fields are.
            let both_maps = |p: &FieldPath| {
                let names: Vec<&str> = p
                    .iter()
                    .filter_map(|s| match s {
                        Seg::Field(f) => Some(f.as_str()),
                        _ => None,
                    })
                    .collect();
                get_at(old, p).is_some_and(Value::is_object)
                    && get_at(new, p).is_some_and(Value::is_object)
                    && !is_atomic_map(resource, &names)
            };
            new_leaves
                .union(&old_leaves)
                .filter(|p| get_at(old, p) != get_at(new, p) && !both_maps(p))
                .cloned()
                .collect()
        }
    };
    if scope != Scope::Scale {
        changed.extend(added_composites(resource, old, new, scope));
    }
    if !changed.is_empty() {
        take(resource, entries, changed, new, manager, scope, time);
        // Fields the write removed belong to nobody. (A field an entry names that the object
        // never had, as a request may set, stays.)
        let has = |p: &FieldPath| present(resource, get_at(new, p));
        let had = |p: &FieldPath| old.is_some_and(|o| get_at(o, p).is_some());
        for e in entries.iter_mut() {
            e.fields.retain(|p| has(p) || !had(p));
        }
        entries.retain(|e| !e.fields.is_empty());
    }
    if let Some(before) = before {
        through_scale(resource, &before, entries, None);
    }
}

/// The maps, structs and non-atomic lists of `new` that `old` lacks: server-side apply's
/// comparison of an update counts them as added, which `fieldsV1` shows as `".": {}` (a
/// Namespace's `f:labels` when the server adds the first label, a custom resource's `f:spec`
/// on creation). `old` is taken as Go holds it: a built-in object before its first write is
/// its kind's zero value, and Go writes the struct fields that are not pointers (as `{}`)
/// and the slices, maps and pointers without `omitempty` (as `null`) of every struct it
/// holds, so those are never added.
fn added_composites(
    resource: &Resource,
    old: Option<&Value>,
    new: &Value,
    scope: Scope,
) -> FieldSet {
    let mut out = FieldSet::new();
    let Some(root) = new.as_object() else {
        return out;
    };
    let empty = json!({});
    let old = old.unwrap_or(&empty);
    for (mut names, mut path, child) in tracked_roots(resource, root, scope) {
        walk_added(resource, old, child, &mut names, &mut path, &mut out);
    }
    out
}

fn walk_added(
    resource: &Resource,
    old: &Value,
    v: &Value,
    names: &mut Vec<String>,
    path: &mut FieldPath,
    out: &mut FieldSet,
) {
    let (atomic, list) = {
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        (
            is_atomic_map(resource, &name_refs),
            v.is_array().then(|| list_type(resource, &name_refs)),
        )
    };
    match v {
        Value::Object(m) if !m.is_empty() && !atomic => {
            if !present_before(resource, old, path) {
                out.insert(path.clone());
            }
            walk_added_fields(resource, old, m, names, path, out);
        }
        Value::Array(items) if !items.is_empty() => {
            let keys = match list {
                None | Some(ListType::Atomic) => return,
                Some(ListType::Set) => None,
                Some(ListType::Map(keys)) => Some(keys),
            };
            if !present_before(resource, old, path) {
                out.insert(path.clone());
            }
            for item in items.iter().filter(|i| i.is_object()) {
                let Some(key) = keys.as_ref().and_then(|k| item_key(item, k)) else {
                    continue;
                };
                path.push(Seg::Key(key.to_string()));
                if let Some(m) = item.as_object().filter(|_| !atomic) {
                    walk_added_fields(resource, old, m, names, path, out);
                }
                path.pop();
            }
        }
        _ => {}
    }
}

/// [`walk_added`] into each field of the object `m` at `path`.
fn walk_added_fields(
    resource: &Resource,
    old: &Value,
    m: &Map<String, Value>,
    names: &mut Vec<String>,
    path: &mut FieldPath,
    out: &mut FieldSet,
) {
    for (k, child) in m {
        names.push(k.clone());
        path.push(Seg::Field(k.clone()));
        walk_added(resource, old, child, names, path, out);
        path.pop();
        names.pop();
    }
}

/// Whether `old`, as Go holds it (see [`added_composites`]), has the field at `path`.
fn present_before(resource: &Resource, old: &Value, path: &[Seg]) -> bool {
    let mut cur = old;
    for (i, seg) in path.iter().enumerate() {
        if let Some(next) = step(cur, seg) {
            cur = next;
            continue;
        }
        // Missing from the JSON: a built-in struct may still write it.
        let Some(definition) = resource
            .builtin
            .and_then(crate::semantics::builtin_schema::definition_of)
        else {
            return false;
        };
        let mut names: Vec<&str> = Vec::new();
        for s in &path[..i] {
            if let Seg::Field(f) = s {
                names.push(f);
            }
        }
        for (j, s) in path.iter().enumerate().skip(i) {
            let Seg::Field(f) = s else {
                return false;
            };
            names.push(f);
            match crate::semantics::fields::builtin_zero_field(definition, &names) {
                Some(true) => {}
                Some(false) if j + 1 == path.len() => {}
                _ => return false,
            }
        }
        return true;
    }
    true
}

/// [`record_update`]'s ownership change: `manager` takes the `changed` fields from every other
/// entry.
fn take(
    resource: &Resource,
    entries: &mut Vec<Entry>,
    changed: FieldSet,
    new: &Value,
    manager: &str,
    scope: Scope,
    time: &str,
) {
    let time = scope.entry_time(time);
    let sub = scope.subresource();
    for e in entries.iter_mut() {
        if !e.same_id(manager, "Update", sub) {
            e.fields.retain(|p| !changed.contains(p));
        }
    }
    let idx = match entries
        .iter()
        .position(|e| e.same_id(manager, "Update", sub))
    {
        Some(i) => i,
        None => {
            entries.push(Entry {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: resource.api_version(),
                time: String::new(),
                subresource: sub.to_string(),
                fields: FieldSet::new(),
            });
            entries.len() - 1
        }
    };
    let e = &mut entries[idx];
    e.time = time.to_string();
    e.api_version = resource.api_version();
    for p in changed {
        if present(resource, get_at(new, &p)) {
            e.fields.insert(p);
        } else {
            e.fields.remove(&p);
        }
    }
}

/// Whether a value found at a field path is a field anyone can own: a built-in object's
/// `null` is a Go field left empty (`rules` of a Role without rules), not one.
fn present(resource: &Resource, v: Option<&Value>) -> bool {
    v.is_some_and(|v| !(v.is_null() && resource.builtin.is_some()))
}

/// Merges an applied configuration into the live object.
fn apply_merge(
    resource: &Resource,
    live: &Value,
    config: &Value,
    names: &mut Vec<String>,
) -> Value {
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    if config.is_object() && is_atomic_map(resource, &name_refs) {
        return config.clone();
    }
    match (live, config) {
        (Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                if cv.is_null() {
                    out.remove(k);
                    continue;
                }
                names.push(k.clone());
                let merged = match out.get(k) {
                    Some(lv) => apply_merge(resource, lv, cv, names),
                    None => cv.clone(),
                };
                names.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) => {
            let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
            match list_type(resource, &name_refs) {
                ListType::Atomic => config.clone(),
                ListType::Set => Value::Array(merge_items(
                    l,
                    c,
                    |live, applied| live == applied,
                    |_, applied| applied.clone(),
                )),
                ListType::Map(keys) => Value::Array(merge_items(
                    l,
                    c,
                    |live, applied| {
                        item_key(applied, &keys).is_some_and(|k| item_matches(live, &k))
                    },
                    |live, applied| match live {
                        Some(live) => apply_merge(resource, live, applied, names),
                        None => applied.clone(),
                    },
                )),
            }
        }
        _ => config.clone(),
    }
}

/// Merges the items of a set or keyed list as structured-merge-diff orders them: a live item
/// the configuration does not name keeps its place; the configuration's items come in the
/// configuration's order, each merged with its live namesake, and new ones are placed before the
/// next live item the configuration also names (`[metrics, http]` applied over `[http, https]`
/// gives `[metrics, http, https]`). `same(live, applied)` says whether two items are one.
fn merge_items(
    live: &[Value],
    applied: &[Value],
    same: impl Fn(&Value, &Value) -> bool,
    mut merge: impl FnMut(Option<&Value>, &Value) -> Value,
) -> Vec<Value> {
    // For each live item, the configuration item it is (if any); for each configuration item,
    // the live item it is (if any).
    let live_match: Vec<Option<usize>> = live
        .iter()
        .map(|l| applied.iter().position(|a| same(l, a)))
        .collect();
    let applied_match: Vec<Option<usize>> = applied
        .iter()
        .map(|a| live.iter().position(|l| same(l, a)))
        .collect();
    // The configuration items that are also live, in the configuration's order.
    let mut shared = applied_match
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_some())
        .map(|(a, _)| a);
    let mut next_shared = shared.next();
    let mut placed = vec![false; applied.len()];
    let mut out = Vec::with_capacity(live.len().max(applied.len()));
    let (mut li, mut ai) = (0, 0);
    while li < live.len() || ai < applied.len() {
        if li < live.len() && ai < applied.len() {
            if live_match[li] == Some(ai) {
                out.push(merge(Some(&live[li]), &applied[ai]));
                placed[ai] = true;
                li += 1;
                ai += 1;
                next_shared = shared.next();
                continue;
            }
            // A live item the configuration names later: it is placed when its turn comes.
            if live_match[li].is_some() && next_shared.is_some_and(|n| live_match[li] != Some(n)) {
                li += 1;
                continue;
            }
        }
        if li < live.len() {
            match live_match[li] {
                None => {
                    out.push(live[li].clone());
                    li += 1;
                    continue;
                }
                Some(a) if placed[a] => li += 1,
                Some(_) => {}
            }
        }
        if ai < applied.len() {
            out.push(merge(applied_match[ai].map(|l| &live[l]), &applied[ai]));
            placed[ai] = true;
            if next_shared == Some(ai) {
                next_shared = shared.next();
            }
            ai += 1;
        }
    }
    out
}

/// One field another manager owns with a different value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conflict {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) subresource: String,
    pub(crate) path: FieldPath,
}

impl Conflict {
    /// The manager as conflict messages name it: `"alice"`, `"bob" with subresource
    /// "status"`, `"kubectl" using v1` (updates name their version; kube-apiserver's manager
    /// identifiers carry no time, so no time is printed).
    fn who(&self) -> String {
        let mut s = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                go_quote(&self.subresource)
            ));
        }
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// The order structured-merge-diff iterates a field set in: at each level the fields that end
/// there first, then the deeper ones, each group sorted.
fn smd_order(a: &FieldPath, b: &FieldPath) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    for i in 0..n {
        let a_member = a.len() == i + 1;
        let b_member = b.len() == i + 1;
        if a[i] != b[i] || a_member != b_member {
            return match (a_member, b_member) {
                (true, false) => std::cmp::Ordering::Less,
                (false, true) => std::cmp::Ordering::Greater,
                _ => a[i].cmp(&b[i]),
            };
        }
    }
    a.len().cmp(&b.len())
}

/// The 409 for apply conflicts, worded as the API server words it.
pub(crate) fn conflict_error(
    group: &str,
    plural: &str,
    name: &str,
    conflicts: &[Conflict],
) -> ApiError {
    let mut conflicts: Vec<&Conflict> = conflicts.iter().collect();
    conflicts.sort_by(|a, b| a.who().cmp(&b.who()).then(smd_order(&a.path, &b.path)));
    let text = match conflicts.as_slice() {
        [one] => format!("conflict with {}: {}", one.who(), render_path(&one.path)),
        many => {
            let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for c in many {
                by.entry(c.who()).or_default().push(render_path(&c.path));
            }
            by.iter()
                .map(|(w, paths)| {
                    if paths.len() == 1 {
                        format!("conflict with {w}: {}", paths[0])
                    } else {
                        let list: Vec<String> = paths.iter().map(|p| format!("- {p}")).collect();
                        format!("conflicts with {w}:\n{}", list.join("\n"))
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    let n = conflicts.len();
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", c.who()), "field": render_path(&c.path)})
        })
        .collect();
    let _ = (group, plural, name);
    let mut details = Map::new();
    details.insert("causes".into(), Value::Array(causes));
    ApiError::new(
        409,
        "Conflict",
        format!(
            "Apply failed with {n} conflict{}: {text}",
            if n == 1 { "" } else { "s" }
        ),
    )
    .with_details(Value::Object(details))
}

/// The manager `kubectl apply --server-side` uses, the only one that upgrades a client-side
/// apply.
pub(crate) const KUBECTL_MANAGER: &str = "kubectl";
/// The annotation client-side `kubectl apply` keeps its configuration in.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether an object carries a non-empty last-applied annotation.
pub(crate) fn has_last_applied(obj: &Value) -> bool {
    crate::storage::object::meta(obj)
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// The fields the last-applied annotation of `live` sets to their live values (those a
/// client-side apply can be said to own); `None` without a usable annotation.
pub(crate) fn last_applied_fields(
    resource: &Resource,
    live: &Value,
    scope: Scope,
) -> Option<FieldSet> {
    let text = crate::storage::object::meta(live)?
        .get("annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(resource.api_version().as_str()) {
        return None;
    }
    Some(
        leaves(resource, &last, scope)
            .into_iter()
            .filter(|p| get_at(&last, p) == get_at(live, p))
            .collect(),
    )
}

/// Writes the applied configuration (without the annotation itself, keys sorted, as Go
/// encodes a map, with Go's trailing newline) into the last-applied annotation of `obj`.
pub(crate) fn set_last_applied(obj: &mut Value, config: &Value) {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut config = config.clone();
    if let Some(annotations) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        annotations.remove(LAST_APPLIED);
    }
    if let Some(m) = config.get_mut("metadata").and_then(Value::as_object_mut)
        && m.get("annotations")
            .is_some_and(|a| a.as_object().is_some_and(Map::is_empty))
    {
        m.remove("annotations");
    }
    let text = format!("{}\n", sorted(&config));
    let meta = crate::storage::object::meta_mut(obj);
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(LAST_APPLIED.into(), Value::String(text));
    }
}

/// Server-side apply of `config` by `manager` over `live` (or over nothing, to create).
/// Returns the merged object with its managed fields updated, or the conflicts.
pub(crate) fn apply(
    resource: &Resource,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    scope: Scope,
    time: &str,
) -> Result<Value, Vec<Conflict>> {
    let mut entries = live.map(read_entries).unwrap_or_default();
    // An existing object without managed fields (they were reset): everything it has goes to
    // `before-first-apply`, as an update from its kind's empty object would record it.
    if let Some(live) = live.filter(|_| entries.is_empty() && scope == Scope::Main) {
        record_update(
            resource,
            &mut entries,
            None,
            live,
            BEFORE_FIRST_APPLY,
            Scope::Main,
            time,
        );
    }
    let before = (scope == Scope::Scale).then(|| entries.clone());
    let time = scope.entry_time(time);
    let sub = scope.subresource();
    let config_set = leaves(resource, config, scope);
    let empty = Value::Object(Map::new());
    let live_v = live.unwrap_or(&empty);

    // Conflicts: fields other managers own with a different value.
    let mut conflicts = Vec::new();
    for e in &entries {
        if e.same_id(manager, "Apply", sub) {
            continue;
        }
        for p in e.fields.intersection(&config_set) {
            if matches!(p.last(), Some(Seg::Key(_))) {
                continue;
            }
            if get_at(live_v, p) != get_at(config, p) {
                conflicts.push(Conflict {
                    manager: e.manager.clone(),
                    operation: e.operation.clone(),
                    api_version: e.api_version.clone(),
                    subresource: e.subresource.clone(),
                    path: p.clone(),
                });
            }
        }
    }
    if !conflicts.is_empty() && !force {
        if scope == Scope::Scale {
            // kube-apiserver applies a `Scale` against the managed fields converted to the
            // `Scale`'s own: the conflict is on its `.spec.replicas`, and an updater's
            // version is the `Scale`'s.
            for c in &mut conflicts {
                c.path = vec![Seg::Field("spec".into()), Seg::Field("replicas".into())];
                c.api_version = SCALE_API_VERSION.into();
            }
        }
        return Err(conflicts);
    }
    if force {
        for c in &conflicts {
            for e in entries.iter_mut() {
                if e.manager == c.manager && !e.same_id(manager, "Apply", sub) {
                    e.fields.remove(&c.path);
                }
            }
        }
    }

    let mut merged = apply_merge(resource, live_v, config, &mut Vec::new());

    // Fields this manager applied before but no longer does are removed, unless another
    // manager also owns them.
    let previous: FieldSet = entries
        .iter()
        .find(|e| e.same_id(manager, "Apply", sub))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let owned_by_others = |p: &FieldPath| {
        entries
            .iter()
            .filter(|e| !e.same_id(manager, "Apply", sub))
            .any(|e| e.fields.iter().any(|q| q.starts_with(p)))
    };
    // Shallowest first: a keyed item nobody else owns goes as a whole (removing its key fields
    // first would leave an unfindable `{}` behind); the fields of an item another manager keeps
    // are removed one by one, and its key fields stay, since that manager owns them too.
    let mut dropped: Vec<&FieldPath> = previous.difference(&config_set).collect();
    dropped.sort_by_key(|p| p.len());
    for p in dropped {
        if !owned_by_others(p) {
            remove_at(&mut merged, p);
        }
    }

    match entries
        .iter_mut()
        .find(|e| e.same_id(manager, "Apply", sub))
    {
        Some(e) => {
            e.fields = config_set;
            e.time = time.to_string();
            e.api_version = resource.api_version();
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Apply".into(),
            api_version: resource.api_version(),
            time: time.to_string(),
            subresource: sub.to_string(),
            fields: config_set,
        }),
    }
    for e in entries.iter_mut() {
        e.fields.retain(|p| get_at(&merged, p).is_some());
    }
    entries.retain(|e| !e.fields.is_empty());
    if let Some(before) = before {
        let keeps_spec = config.get("spec").is_some_and(Value::is_object);
        let applier = keeps_spec.then_some(manager);
        through_scale(resource, &before, &mut entries, applier);
    }
    write_entries(&mut merged, &entries);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::resources::builtins;

    fn cm() -> Resource {
        builtins()
            .into_iter()
            .find(|r| r.kind == "ConfigMap")
            .unwrap_or_else(|| panic!("no ConfigMap"))
    }

    fn deploy() -> Resource {
        builtins()
            .into_iter()
            .find(|r| r.kind == "Deployment")
            .unwrap_or_else(|| panic!("no Deployment"))
    }

    /// The fields an update by `m` of `old` into `new` gives `m`, as `fieldsV1`.
    fn updated(r: &Resource, old: Option<&Value>, new: &Value) -> Value {
        let mut entries = Vec::new();
        record_update(r, &mut entries, old, new, "m", Scope::Main, "t");
        entries
            .first()
            .map_or(Value::Null, |e| to_fields_v1(&e.fields))
    }

    #[test]
    fn updates_own_the_maps_and_pointer_structs_they_add() {
        // kube-apiserver v1.37.1's answer to this create.
        let d = json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "x"}},
            "strategy": {"rollingUpdate": {"maxSurge": 1}},
            "template": {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"runAsUser": 1}}]}}}});
        assert_eq!(
            updated(&deploy(), None, &d),
            json!({"f:spec": {"f:selector": {}, "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}},
                "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {
                    "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {},
                        "f:securityContext": {".": {}, "f:runAsUser": {}}}}}}}})
        );
        // A map the object already had is not added again; a custom resource's spec is.
        let old = json!({"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}});
        let mut new = old.clone();
        new["metadata"]["labels"]["b"] = json!("2");
        new["metadata"]["annotations"] = json!({"n": "1"});
        assert_eq!(
            updated(&cm(), Some(&old), &new),
            json!({"f:metadata": {"f:annotations": {".": {}, "f:n": {}}, "f:labels": {"f:b": {}}}})
        );
        let custom = Resource {
            builtin: None,
            ..cm()
        };
        assert_eq!(
            updated(
                &custom,
                None,
                &json!({"metadata": {"name": "w"}, "spec": {"a": 1}})
            ),
            json!({"f:spec": {".": {}, "f:a": {}}})
        );
    }

    #[test]
    fn requested_managed_fields_are_read_as_go_reads_them() {
        let entry = json!({"manager": "x", "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}});
        assert_eq!(requested_entries(&cm(), None), Requested::Keep);
        assert_eq!(
            requested_entries(&cm(), Some(&Value::Null)),
            Requested::Keep
        );
        for reset in [
            json!([]),
            json!([{}]),
            json!([{"manager": "", "time": null}]),
        ] {
            assert_eq!(
                requested_entries(&cm(), Some(&reset)),
                Requested::Reset,
                "{reset}"
            );
        }
        let mut bogus = entry.clone();
        bogus["operation"] = json!("Bogus");
        let mut untyped = entry.clone();
        untyped["fieldsType"] = json!("");
        for keep in [
            json!([bogus]),
            json!([untyped]),
            json!([entry.clone(), {"fieldsV1": {}}]),
        ] {
            assert_eq!(
                requested_entries(&cm(), Some(&keep)),
                Requested::Keep,
                "{keep}"
            );
        }
        let mut later = entry.clone();
        later["fieldsV1"] = json!({"f:data": {"f:j": {}}});
        let Requested::Entries(got) = requested_entries(&cm(), Some(&json!([entry, later]))) else {
            panic!("entries expected");
        };
        assert_eq!(got.len(), 1, "the later of one manager's two entries");
        assert_eq!(to_fields_v1(&got[0].fields), json!({"f:data": {"f:j": {}}}));
        assert_eq!(got[0].time, "");
    }

    #[test]
    fn fields_v1_round_trips() {
        let r = deploy();
        let obj = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"replicas": 1,
            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}, "status": {"replicas": 0}});
        let set = leaves(&r, &obj, Scope::Main);
        let v1 = to_fields_v1(&set);
        assert_eq!(
            v1,
            json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
        );
        assert_eq!(from_fields_v1(&v1), set);
        let status = leaves(&r, &obj, Scope::Status);
        assert_eq!(
            to_fields_v1(&status),
            json!({"f:status": {"f:replicas": {}}})
        );
    }

    fn ok(r: Result<Value, Vec<Conflict>>) -> Value {
        r.unwrap_or_else(|c| panic!("conflicts: {c:?}"))
    }

    #[test]
    fn apply_merges_removes_and_conflicts() {
        let r = cm();
        let a1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        let live = ok(apply(&r, None, &a1, "alice", false, Scope::Main, "t"));
        assert_eq!(live["data"], json!({"a": "1", "b": "2"}));
        // bob applies a different field: no conflict, both owned
        let b1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"c": "3"}});
        let live = ok(apply(&r, Some(&live), &b1, "bob", false, Scope::Main, "t"));
        assert_eq!(live["data"], json!({"a": "1", "b": "2", "c": "3"}));
        // alice drops b: removed
        let a2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let live = ok(apply(
            &r,
            Some(&live),
            &a2,
            "alice",
            false,
            Scope::Main,
            "t",
        ));
        assert_eq!(live["data"], json!({"a": "1", "c": "3"}));
        // bob sets a to another value: conflict
        let b2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "9", "c": "3"}});
        let conflicts = apply(&r, Some(&live), &b2, "bob", false, Scope::Main, "t");
        let Err(c) = conflicts else {
            panic!("expected a conflict")
        };
        let e = conflict_error("", "configmaps", "c", &c);
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"alice\": .data.a"
        );
        // with force bob takes it over
        let live = ok(apply(&r, Some(&live), &b2, "bob", true, Scope::Main, "t"));
        assert_eq!(live["data"]["a"], "9");
        let entries = read_entries(&live);
        let alice = entries.iter().find(|e| e.manager == "alice");
        assert!(alice.is_none(), "alice lost her only field: {entries:?}");
    }

    #[test]
    fn updates_take_ownership() {
        let r = cm();
        let a1 = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
        let live = ok(apply(&r, None, &a1, "alice", false, Scope::Main, "t"));
        let mut edited = live.clone();
        edited["data"]["a"] = json!("2");
        let mut entries = read_entries(&live);
        record_update(
            &r,
            &mut entries,
            Some(&live),
            &edited,
            "kubectl-edit",
            Scope::Main,
            "t",
        );
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].manager, "kubectl-edit");
        // A conflict with an updater names its version but no time, as kube-apiserver does.
        write_entries(&mut edited, &entries);
        let b = json!({"metadata": {"name": "c"}, "data": {"a": "3"}});
        let Err(c) = apply(&r, Some(&edited), &b, "bob", false, Scope::Main, "t") else {
            panic!("expected a conflict")
        };
        assert_eq!(
            conflict_error("", "configmaps", "c", &c).message,
            "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.a"
        );
    }

    fn containers(obj: &Value) -> Value {
        obj["spec"]["template"]["spec"]["containers"].clone()
    }

    #[test]
    fn keyed_items_follow_the_applied_order_and_go_whole() {
        let r = deploy();
        let with = |c: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"template": {"spec": {"containers": c}}}})
        };
        let http = json!({"name": "http", "image": "a"});
        let https = json!({"name": "https", "image": "b"});
        let metrics = json!({"name": "metrics", "image": "m"});
        let live = ok(apply(
            &r,
            None,
            &with(json!([http, https])),
            "alice",
            false,
            Scope::Main,
            "t",
        ));
        // bob applies a new item before one alice also has: it is placed in bob's order.
        let live = ok(apply(
            &r,
            Some(&live),
            &with(json!([metrics, http])),
            "bob",
            false,
            Scope::Main,
            "t",
        ));
        assert_eq!(containers(&live), json!([metrics, http, https]));
        // alice stops applying `https`, which only she owned: the item goes, not just its fields.
        let live = ok(apply(
            &r,
            Some(&live),
            &with(json!([http])),
            "alice",
            false,
            Scope::Main,
            "t",
        ));
        assert_eq!(containers(&live), json!([metrics, http]));
        // alice stops applying `http`, which bob also applied: it stays, with bob's fields.
        let live = ok(apply(
            &r,
            Some(&live),
            &with(json!([])),
            "alice",
            false,
            Scope::Main,
            "t",
        ));
        assert_eq!(containers(&live), json!([metrics, http]));
    }

    #[test]
    fn set_items_follow_the_applied_order() {
        assert_eq!(
            merge_items(
                &[json!("b"), json!("c")],
                &[json!("a"), json!("b"), json!("d")],
                |l, a| l == a,
                |_, a| a.clone()
            ),
            [json!("a"), json!("b"), json!("c"), json!("d")]
        );
        // Shared items in another order: the live order of the rest is kept around them.
        assert_eq!(
            merge_items(
                &[json!("x"), json!("b"), json!("a")],
                &[json!("a"), json!("b")],
                |l, a| l == a,
                |_, a| a.clone()
            ),
            [json!("x"), json!("a"), json!("b")]
        );
    }
}
