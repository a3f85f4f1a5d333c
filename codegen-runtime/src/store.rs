//! The informer's thread-safe, indexed object store (client-go's `cache.Indexer`), split as
//! kube-rs splits its reflector: the informer alone writes; listers and users get a [`Store`],
//! which only reads.
//!
//! Objects are kept as shared pointers under the key `namespace/name` (`name` for
//! cluster-scoped objects); reads hand out `Arc<K>` clones and never copy an object. The maps,
//! indexes and relist are written once for all kinds over type-erased objects
//! ([`GenericObject`]s: `Any` with their metadata reachable), and a [`Store<K>`] gives each
//! object back its type on the way out (a type check, no copy): a program that caches 100 kinds
//! compiles them once, not 100 times. Every store has a built-in namespace index
//! ([`NAMESPACE_INDEX`]), so listing one namespace touches only that namespace's objects, and
//! takes custom indexers (`SharedIndexInformer::add_indexer`) that map an object to any number of
//! index values ([`Store::by_index`], [`Store::index_keys`], [`Store::list_index_values`]).
//!
//! All operations take one [`parking_lot::RwLock`]: reads share it, writes are short (a few hash
//! map updates per index), and a relist builds the new contents *outside* the lock and swaps
//! them in, so readers are not blocked while a 100k-object relist is indexed.
//! (`parking_lot` was measured against `std::sync::RwLock` in `benches/cache.rs`: uncontended
//! reads cost the same, and `parking_lot`'s lock is smaller and never poisoned, which removes an
//! error path from every read.)
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::ObjectMeta;
//! use kube_codegen_runtime::Store;
//!
//! let cm = ConfigMap {
//!     metadata: ObjectMeta { name: Some("settings".into()), namespace: Some("default".into()), ..Default::default() },
//!     ..Default::default()
//! };
//! let store = Store::from_objects([cm], [])?;
//! assert!(store.get(Some("default"), "settings").is_some());
//! assert_eq!(store.list_namespace("default").len(), 1);
//! # Ok::<(), kube_codegen_runtime::store::StoreError>(())
//! ```

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use ahash::AHashMap;
use kube::Resource;
use kube::api::ObjectMeta;
use parking_lot::RwLock;

use crate::labels::Selector;

/// The name of the built-in index from namespace to objects (`cache.NamespaceIndex` in Go).
/// Cluster-scoped objects are indexed under the empty namespace.
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::store::{Store, NAMESPACE_INDEX};
/// let cache = Store::<ConfigMap>::default();
/// assert!(cache.by_index(NAMESPACE_INDEX, "default")?.is_empty());
/// # Ok::<(), kube_codegen_runtime::store::StoreError>(())
/// ```
pub const NAMESPACE_INDEX: &str = "namespace";

/// A function from an object to the index values it is filed under.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kube_codegen_runtime::store::IndexFunc;
/// let by_node: IndexFunc<Pod> = Arc::new(|p: &Pod| p.spec.iter().filter_map(|s| s.node_name.clone()).collect());
/// ```
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Why a cache operation failed.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::store::{Store, StoreError};
/// let err = Store::from_objects([ConfigMap::default()], []).unwrap_err();
/// assert_eq!(err, StoreError::MissingName);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// An indexer added with a name that is already taken (including [`NAMESPACE_INDEX`]).
    #[error("an indexer named {0:?} already exists")]
    IndexerExists(String),
    /// A look-up in an index that was never added.
    #[error("index with name {0:?} does not exist")]
    NoSuchIndex(String),
    /// An object without `metadata.name` cannot be keyed.
    #[error("object has no metadata.name; it cannot be stored")]
    MissingName,
}

/// The store key of an object: `namespace/name`, or `name` when it has no namespace — the key
/// client-go's `MetaNamespaceKeyFunc` produces.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::ObjectMeta;
/// use kube_codegen_runtime::store::object_key;
///
/// let mut cm = ConfigMap::default();
/// assert!(object_key(&cm).is_err());
/// cm.metadata = ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() };
/// assert_eq!(object_key(&cm)?, "ns/a");
/// # Ok::<(), kube_codegen_runtime::store::StoreError>(())
/// ```
pub fn object_key<K: Resource>(obj: &K) -> Result<String, StoreError> {
    key_of(obj.meta())
}

/// The process-wide hash seed of every object table (random per process, as `ahash`'s
/// `RandomState::new` is).
static HASHER: std::sync::LazyLock<ahash::RandomState> =
    std::sync::LazyLock::new(ahash::RandomState::new);

#[path = "store/compact.rs"]
mod compact;

pub(crate) use compact::{Codec, Compact, ExpandError};

/// `(namespace, name)` of a decoded object: its key's parts, read from its own metadata, so no
/// key string is stored beside it (the namespace is empty for cluster-scoped objects).
fn parts(obj: &Obj) -> (&str, &str) {
    let meta = obj.object_meta();
    (
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or(""),
    )
}

/// What a store holds for one object: the decoded object, or (in a compact store) its JSON
/// text, decoded again by each read.
#[derive(Clone)]
pub(crate) enum Entry {
    Full(Obj),
    Compact(Arc<Compact>),
}

impl Entry {
    fn parts(&self) -> (&str, &str) {
        match self {
            Entry::Full(o) => parts(o),
            Entry::Compact(c) => c.parts(),
        }
    }

    fn resource_version(&self) -> Option<&str> {
        match self {
            Entry::Full(o) => o.object_meta().resource_version.as_deref(),
            Entry::Compact(c) => c.resource_version(),
        }
    }

    /// Whether the object's labels match `selector` (a compact entry's are kept in the clear:
    /// nothing is decoded).
    fn matches(&self, selector: &Selector) -> bool {
        match self {
            Entry::Full(o) => selector.matches_opt(o.object_meta().labels.as_ref()),
            Entry::Compact(c) => selector.matches_by(|key| c.label(key)),
        }
    }

    fn ptr_eq(&self, other: &Entry) -> bool {
        match (self, other) {
            (Entry::Full(a), Entry::Full(b)) => Arc::ptr_eq(a, b),
            (Entry::Compact(a), Entry::Compact(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Decodes a compact entry into the object the informer would have cached (its decompression,
/// decode and transforms).
pub(crate) type Expand = Arc<dyn Fn(&Compact) -> Result<Obj, ExpandError> + Send + Sync>;

/// The decoded object of `entry` (`None` only if a compact entry no longer decodes, which its
/// text having decoded once rules out; logged).
fn expand(expand: Option<&Expand>, entry: &Entry) -> Option<Obj> {
    match entry {
        Entry::Full(o) => Some(o.clone()),
        Entry::Compact(c) => match expand.map(|f| f(c)) {
            Some(Ok(o)) => Some(o),
            Some(Err(e)) => {
                tracing::warn!(error = %e, "a compact cache entry no longer decodes");
                None
            }
            None => {
                tracing::warn!("a compact cache entry in a store without a decoder");
                None
            }
        },
    }
}

/// An object on its way into a store: decoded, or in its compact form when the store keeps
/// objects compact (with the decoded object too when the informer has it at hand for handlers;
/// a list's objects come without, so that a sync never holds every object decoded at once).
#[derive(Clone)]
pub(crate) struct Incoming {
    obj: Option<Obj>,
    compact: Option<Arc<Compact>>,
}

impl Incoming {
    /// An object kept decoded.
    pub(crate) fn full(obj: Obj) -> Self {
        Incoming {
            obj: Some(obj),
            compact: None,
        }
    }

    /// An object kept compact; `obj` is its decoded form if at hand.
    pub(crate) fn compact(compact: Compact, obj: Option<Obj>) -> Self {
        Incoming {
            obj,
            compact: Some(Arc::new(compact)),
        }
    }

    fn entry(&self) -> Option<Entry> {
        match (&self.compact, &self.obj) {
            (Some(c), _) => Some(Entry::Compact(c.clone())),
            (None, Some(o)) => Some(Entry::Full(o.clone())),
            (None, None) => None,
        }
    }

    /// `(namespace, name)` (the namespace empty for cluster-scoped objects).
    pub(crate) fn parts(&self) -> (&str, &str) {
        match (&self.compact, &self.obj) {
            (Some(c), _) => c.parts(),
            (None, Some(o)) => parts(o),
            (None, None) => ("", ""),
        }
    }
}

fn hash_parts(ns: &str, name: &str) -> u64 {
    HASHER.hash_one((ns, name))
}

fn hash_entry(entry: &Entry) -> u64 {
    let (ns, name) = entry.parts();
    hash_parts(ns, name)
}

/// A set of objects hashed by `(namespace, name)` as their metadata says: the primary map
/// (key → object) and every index bucket. An entry is the object's pointer alone (16 bytes);
/// a look-up by namespace and name is one probe with no key string built, and a look-up by
/// `namespace/name` splits the string instead.
#[derive(Default)]
struct ObjTable {
    table: hashbrown::HashTable<Entry>,
}

impl ObjTable {
    fn get(&self, ns: &str, name: &str) -> Option<&Entry> {
        self.table
            .find(hash_parts(ns, name), |o| o.parts() == (ns, name))
    }

    fn get_key(&self, key: &str) -> Option<&Entry> {
        let (ns, name) = split_key(key);
        self.get(ns.unwrap_or(""), name)
    }

    /// Inserts or replaces (the object must have a name); returns the replaced object.
    fn insert(&mut self, obj: Entry) -> Option<Entry> {
        let hash = hash_entry(&obj);
        let (ns, name) = obj.parts();
        match self
            .table
            .entry(hash, |o| o.parts() == (ns, name), hash_entry)
        {
            hashbrown::hash_table::Entry::Occupied(mut e) => {
                Some(std::mem::replace(e.get_mut(), obj))
            }
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(obj);
                None
            }
        }
    }

    fn remove_key(&mut self, key: &str) -> Option<Entry> {
        let (ns, name) = split_key(key);
        self.remove(ns.unwrap_or(""), name)
    }

    fn remove(&mut self, ns: &str, name: &str) -> Option<Entry> {
        let entry = self
            .table
            .find_entry(hash_parts(ns, name), |o| o.parts() == (ns, name))
            .ok()?;
        Some(entry.remove().0)
    }

    fn reserve(&mut self, additional: usize) {
        self.table.reserve(additional, hash_entry);
    }

    fn values(&self) -> impl Iterator<Item = &Entry> {
        self.table.iter()
    }

    /// The store keys of the objects (built on demand).
    fn keys(&self) -> impl Iterator<Item = String> + '_ {
        self.table.iter().map(|o| {
            let (ns, name) = o.parts();
            if ns.is_empty() {
                name.to_string()
            } else {
                format!("{ns}/{name}")
            }
        })
    }

    fn len(&self) -> usize {
        self.table.len()
    }

    fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    fn into_values(self) -> impl Iterator<Item = Entry> {
        self.table.into_iter()
    }
}

/// Splits a store key into its namespace (if any) and name.
///
/// ```
/// use kube_codegen_runtime::store::split_key;
/// assert_eq!(split_key("ns/a"), (Some("ns"), "a"));
/// assert_eq!(split_key("node-1"), (None, "node-1"));
/// ```
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// An object of any resource type: what a store holds and a
/// [`GenericLister`](crate::lister::GenericLister) returns. Its metadata can be read without
/// knowing its kind, so the store's maps and indexes are built once for all kinds over
/// `Arc<dyn GenericObject>`, and [`Store<K>`] only converts on the way out: a kind adds almost no
/// compiled code.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::lister::{GenericObject, downcast_arc};
///
/// let obj: Arc<dyn GenericObject> = Arc::new(ConfigMap::default());
/// assert!(obj.object_meta().name.is_none());
/// assert!(downcast_arc::<ConfigMap>(obj).is_some());
/// ```
pub trait GenericObject: Any + Send + Sync + fmt::Debug {
    /// The object's metadata.
    fn object_meta(&self) -> &ObjectMeta;
    /// For downcasting by reference.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting a shared object
    /// ([`downcast_arc`](crate::lister::downcast_arc)).
    fn into_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<K: Resource + fmt::Debug + Send + Sync + 'static> GenericObject for K {
    fn object_meta(&self) -> &ObjectMeta {
        self.meta()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// A stored object.
pub(crate) type Obj = Arc<dyn GenericObject>;

/// `obj` as the `K` it was stored as (no copy); `None` only if it is another type, which a
/// `Store<K>` never holds.
pub(crate) fn typed<K: Send + Sync + 'static>(obj: &Obj) -> Option<Arc<K>> {
    let any: Arc<dyn Any + Send + Sync> = obj.clone();
    any.downcast::<K>().ok()
}

/// `obj` as a `&K`, under the same condition as [`typed`].
fn typed_ref<K: 'static>(obj: &Obj) -> Option<&K> {
    let any: &dyn Any = &**obj;
    any.downcast_ref::<K>()
}

/// An index function over stored objects (an [`IndexFunc`] behind a type check).
pub(crate) type RawIndexFunc = Arc<dyn Fn(&Obj) -> Vec<String> + Send + Sync>;

pub(crate) fn raw_index_func<K: 'static>(func: IndexFunc<K>) -> RawIndexFunc {
    Arc::new(move |o: &Obj| typed_ref::<K>(o).map(|k| func(k)).unwrap_or_default())
}

/// What a relist changed, so that an informer can tell handlers about it. The objects are
/// entries as stored, decoded one at a time by [`RawReplaced::obj`] only when there are handlers
/// to tell (so a compact store's sync never holds every object decoded at once).
#[derive(Default)]
pub(crate) struct RawReplaced {
    /// Objects whose key was not in the cache before, in list order.
    pub(crate) added: Vec<Entry>,
    /// `(old, new)` for keys that were present with a different `resourceVersion` (or none).
    pub(crate) updated: Vec<(Entry, Entry)>,
    /// Last known objects of keys that are no longer present.
    pub(crate) removed: Vec<Entry>,
    /// How many objects were present before and after with the same `resourceVersion`.
    pub(crate) unchanged: usize,
    /// How the old and the new store decode compact entries.
    expand: (Option<Expand>, Option<Expand>),
}

impl RawReplaced {
    /// The decoded object of an entry of this relist's new contents (`added`, the second of
    /// `updated`).
    pub(crate) fn obj(&self, entry: &Entry) -> Option<Obj> {
        expand(self.expand.1.as_ref(), entry)
    }

    /// The decoded object of an entry of the contents replaced (`removed`, the first of
    /// `updated`).
    pub(crate) fn old_obj(&self, entry: &Entry) -> Option<Obj> {
        expand(self.expand.0.as_ref(), entry)
    }

    /// The store key of an entry.
    pub(crate) fn key(entry: &Entry) -> String {
        let (ns, name) = entry.parts();
        if ns.is_empty() {
            name.to_string()
        } else {
            format!("{ns}/{name}")
        }
    }
}

/// `key → object`.
type Bucket = ObjTable;

/// `value → (key → object)`.
type Index = AHashMap<String, Bucket>;

struct Indexer {
    func: RawIndexFunc,
    index: Index,
}

struct Contents {
    items: ObjTable,
    /// namespace (empty for cluster-scoped) → key → object.
    namespaces: AHashMap<String, Bucket>,
    indexers: AHashMap<String, Indexer>,
    /// Bumped whenever the indexer set changes, so a `replace` built outside the lock can tell
    /// that it must re-index.
    indexers_generation: u64,
    resource_version: String,
    /// How compact entries are decoded (a compact store's informer's decode).
    expand: Option<Expand>,
}

impl Contents {
    fn empty() -> Self {
        Contents {
            items: ObjTable::default(),
            namespaces: AHashMap::new(),
            indexers: AHashMap::new(),
            indexers_generation: 0,
            resource_version: String::new(),
            expand: None,
        }
    }

    /// The decoded object of `entry` (see [`expand`]).
    fn full(&self, entry: &Entry) -> Option<Obj> {
        expand(self.expand.as_ref(), entry)
    }

    /// `entry` as a `K` (decoded if compact).
    fn typed<K: Send + Sync + 'static>(&self, entry: &Entry) -> Option<Arc<K>> {
        match entry {
            Entry::Full(o) => typed(o),
            Entry::Compact(_) => typed(&self.full(entry)?),
        }
    }

    /// `entry` as a `K` if `keep` accepts it; a decoded entry is only cloned if it does.
    fn typed_if<K: Send + Sync + 'static>(
        &self,
        entry: &Entry,
        keep: &mut impl FnMut(&K) -> bool,
    ) -> Option<Arc<K>> {
        match entry {
            Entry::Full(o) => typed_ref::<K>(o)
                .is_some_and(&mut *keep)
                .then(|| typed(o))?,
            Entry::Compact(_) => self.typed::<K>(entry).filter(|k| keep(k)),
        }
    }

    /// Adds indexers and indexes every object present; nothing is added if a name is taken.
    fn add_indexers(&mut self, new: Vec<(String, RawIndexFunc)>) -> Result<(), StoreError> {
        for (i, (name, _)) in new.iter().enumerate() {
            if name == NAMESPACE_INDEX
                || self.indexers.contains_key(name)
                || new[..i].iter().any(|(n, _)| n == name)
            {
                return Err(StoreError::IndexerExists(name.clone()));
            }
        }
        let mut built = Vec::with_capacity(new.len());
        for (name, func) in new {
            let mut index = Index::new();
            for entry in self.items.values() {
                if let Some(obj) = self.full(entry) {
                    insert_into(&mut index, func(&obj), entry);
                }
            }
            built.push((name, Indexer { func, index }));
        }
        self.indexers.extend(built);
        self.indexers_generation += 1;
        Ok(())
    }

    /// Inserts or replaces `item`; returns the (decoded) object it replaced.
    fn add(&mut self, item: Incoming) -> Result<Option<Obj>, StoreError> {
        let entry = item.entry().ok_or(StoreError::MissingName)?;
        if entry.parts().1.is_empty() {
            return Err(StoreError::MissingName);
        }
        let old = self.items.insert(entry.clone());
        insert_in_namespace(&mut self.namespaces, &entry);
        let old = old.and_then(|o| self.full(&o));
        if !self.indexers.is_empty() {
            let obj = match item.obj {
                Some(o) => Some(o),
                None => self.full(&entry),
            };
            for ix in self.indexers.values_mut() {
                if let Some(old) = &old {
                    let (ns, name) = parts(old);
                    remove_from(&mut ix.index, (ix.func)(old), ns, name);
                }
                if let Some(obj) = &obj {
                    insert_into(&mut ix.index, (ix.func)(obj), &entry);
                }
            }
        }
        Ok(old)
    }

    /// Removes the object stored under `key`; returns it (decoded).
    fn delete_key(&mut self, key: &str) -> Option<Obj> {
        let old = self.items.remove_key(key)?;
        let (ns, name) = old.parts();
        if let Some(bucket) = self.namespaces.get_mut(ns) {
            bucket.remove(ns, name);
            if bucket.is_empty() {
                self.namespaces.remove(ns);
            }
        }
        let old = self.full(&old)?;
        let (ns, name) = parts(&old);
        for ix in self.indexers.values_mut() {
            remove_from(&mut ix.index, (ix.func)(&old), ns, name);
        }
        Some(old)
    }

    fn index_funcs(&self) -> Vec<(String, RawIndexFunc)> {
        self.indexers
            .iter()
            .map(|(n, ix)| (n.clone(), ix.func.clone()))
            .collect()
    }

    /// Builds every index in `funcs` over `objects` (entries, with their decoded objects when
    /// at hand; others are decoded one at a time).
    fn index_all<'a>(
        &mut self,
        funcs: &[(String, RawIndexFunc)],
        objects: impl Iterator<Item = (Option<&'a Obj>, &'a Entry)> + Clone,
    ) {
        for (name, func) in funcs {
            let mut index = Index::new();
            for (obj, entry) in objects.clone() {
                let decoded;
                let obj = match obj {
                    Some(o) => o,
                    None => match self.full(entry) {
                        Some(o) => {
                            decoded = o;
                            &decoded
                        }
                        None => continue,
                    },
                };
                insert_into(&mut index, func(obj), entry);
            }
            self.indexers.insert(
                name.clone(),
                Indexer {
                    func: func.clone(),
                    index,
                },
            );
        }
    }
}

/// Replaces the contents of `lock` with `objects`: built outside the lock, swapped in.
fn replace_contents(
    lock: &RwLock<Contents>,
    objects: Vec<Incoming>,
    resource_version: String,
) -> RawReplaced {
    let (funcs, generation, expander) = {
        let s = lock.read();
        (s.index_funcs(), s.indexers_generation, s.expand.clone())
    };
    let mut order: Vec<(Option<Obj>, Entry)> = Vec::with_capacity(objects.len());
    let mut new = Contents::empty();
    new.expand = expander;
    new.items.reserve(objects.len());
    let mut duplicates = false;
    for item in objects {
        let Some(entry) = item.entry().filter(|e| !e.parts().1.is_empty()) else {
            tracing::warn!(error = %StoreError::MissingName, "skipping an object without a name in a list");
            continue;
        };
        insert_in_namespace(&mut new.namespaces, &entry);
        duplicates |= new.items.insert(entry.clone()).is_some();
        // A compact entry is all the store keeps: its decoded object is not held on.
        let obj = item.obj.filter(|_| matches!(entry, Entry::Full(_)));
        order.push((obj, entry));
    }
    if duplicates {
        // A key listed twice keeps its last object; forget the earlier ones.
        order.retain(|(_, e)| {
            let (ns, name) = e.parts();
            new.items.get(ns, name).is_some_and(|cur| cur.ptr_eq(e))
        });
    }
    new.index_all(&funcs, order.iter().map(|(o, e)| (o.as_ref(), e)));
    new.resource_version = resource_version;
    let new_expand = new.expand.clone();

    let mut old_items = {
        let mut s = lock.write();
        if s.indexers_generation != generation {
            // An indexer was added while we were building: index with the current set.
            let funcs = s.index_funcs();
            new.indexers.clear();
            new.index_all(&funcs, order.iter().map(|(o, e)| (o.as_ref(), e)));
        }
        new.indexers_generation = s.indexers_generation;
        let old = std::mem::replace(&mut *s, new);
        (old.items, old.expand)
    };

    let mut diff = RawReplaced {
        expand: (old_items.1.clone(), new_expand),
        ..RawReplaced::default()
    };
    for (_, entry) in order {
        let (ns, name) = entry.parts();
        match old_items.0.remove(ns, name) {
            None => diff.added.push(entry),
            Some(old) => {
                let (a, b) = (old.resource_version(), entry.resource_version());
                if a.is_some() && a == b {
                    diff.unchanged += 1;
                } else {
                    diff.updated.push((old, entry));
                }
            }
        }
    }
    diff.removed = old_items.0.into_values().collect();
    diff
}

/// Files `entry` in its namespace's bucket; only a new namespace allocates a name.
fn insert_in_namespace(namespaces: &mut AHashMap<String, Bucket>, entry: &Entry) {
    let ns = entry.parts().0;
    match namespaces.get_mut(ns) {
        Some(bucket) => {
            bucket.insert(entry.clone());
        }
        None => {
            let mut bucket = Bucket::default();
            bucket.insert(entry.clone());
            namespaces.insert(ns.to_string(), bucket);
        }
    }
}

fn insert_into(index: &mut Index, values: Vec<String>, entry: &Entry) {
    for v in values {
        index.entry(v).or_default().insert(entry.clone());
    }
}

fn remove_from(index: &mut Index, values: Vec<String>, ns: &str, name: &str) {
    for v in values {
        if let Some(bucket) = index.get_mut(&v) {
            bucket.remove(ns, name);
            if bucket.is_empty() {
                index.remove(&v);
            }
        }
    }
}

/// A read-only view of an informer's objects: what listers and users read, while only the
/// informer writes (kube-rs's `reflector::Store`).
///
/// Cloning a `Store` is cheap and yields a handle to the same contents; reads take a shared
/// lock and hand out `Arc<K>` clones, never copies of objects.
///
/// ```
/// use k8s_openapi::api::core::v1::Node;
/// use kube_codegen_runtime::Store;
///
/// let store = Store::<Node>::default();
/// assert!(store.is_empty());
/// assert_eq!(store.clone().len(), 0);
/// ```
pub struct Store<K> {
    inner: Arc<RwLock<Contents>>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            inner: self.inner.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.inner.read();
        f.debug_struct("Store")
            .field("len", &s.items.len())
            .field("indexers", &s.indexers.keys().collect::<Vec<_>>())
            .field("resource_version", &s.resource_version)
            .finish()
    }
}

impl<K> Default for Store<K> {
    /// An empty store with only the namespace index.
    fn default() -> Self {
        Store {
            inner: Arc::new(RwLock::new(Contents::empty())),
            kind: PhantomData,
        }
    }
}

impl<K: Resource + fmt::Debug + Send + Sync + 'static> Store<K> {
    /// A store holding `objects` and filed under `indexers`: for tests, and for a lister over
    /// a fixed set of objects. Fails on an object without a name or a taken indexer name.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::ObjectMeta;
    /// use kube_codegen_runtime::store::{IndexFunc, Store};
    ///
    /// let cm = ConfigMap {
    ///     metadata: ObjectMeta {
    ///         name: Some("settings".into()),
    ///         namespace: Some("default".into()),
    ///         labels: Some([("app".to_string(), "web".to_string())].into()),
    ///         ..Default::default()
    ///     },
    ///     ..Default::default()
    /// };
    /// let by_app: IndexFunc<ConfigMap> = Arc::new(|cm: &ConfigMap| {
    ///     cm.metadata.labels.iter().flatten().filter(|(k, _)| *k == "app").map(|(_, v)| v.clone()).collect()
    /// });
    /// let store = Store::from_objects([cm], [("by-app".to_string(), by_app)])?;
    /// assert!(store.get_by_key("default/settings").is_some());
    /// assert_eq!(store.by_index("by-app", "web")?.len(), 1);
    /// assert_eq!(store.list_namespace("default").len(), 1);
    /// # Ok::<(), kube_codegen_runtime::store::StoreError>(())
    /// ```
    pub fn from_objects(
        objects: impl IntoIterator<Item = K>,
        indexers: impl IntoIterator<Item = (String, IndexFunc<K>)>,
    ) -> Result<Self, StoreError> {
        let objects: Vec<K> = objects.into_iter().collect();
        for obj in &objects {
            object_key(obj)?;
        }
        let writer = Writer::new();
        writer.add_indexers(indexers)?;
        let objects = objects
            .into_iter()
            .map(|o| Incoming::full(Arc::new(o)))
            .collect();
        writer.raw().replace(objects, String::new());
        Ok(writer.store())
    }
}

/// The writing side of a store, for objects of whatever kind it holds: only the informer that
/// owns the store holds one. Its operations are compiled once for all kinds.
#[derive(Clone)]
pub(crate) struct RawWriter {
    inner: Arc<RwLock<Contents>>,
}

impl fmt::Debug for RawWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.store::<()>().fmt(f)
    }
}

impl RawWriter {
    /// An empty store with only the namespace index.
    pub(crate) fn new() -> Self {
        RawWriter {
            inner: Arc::new(RwLock::new(Contents::empty())),
        }
    }

    /// An empty store that keeps the objects given with their compact form as that form,
    /// decoding it with `expand` on each read.
    pub(crate) fn compact(expand: Expand) -> Self {
        let mut contents = Contents::empty();
        contents.expand = Some(expand);
        RawWriter {
            inner: Arc::new(RwLock::new(contents)),
        }
    }

    /// A read-only handle to the same contents, reading them as `K`s.
    pub(crate) fn store<K>(&self) -> Store<K> {
        Store {
            inner: self.inner.clone(),
            kind: PhantomData,
        }
    }

    /// Adds indexers and indexes every object present; nothing is added if a name is taken
    /// (`namespace` always is).
    pub(crate) fn add_indexers(&self, new: Vec<(String, RawIndexFunc)>) -> Result<(), StoreError> {
        self.inner.write().add_indexers(new)
    }

    /// Inserts or replaces `item`; returns the (decoded) object it replaced.
    pub(crate) fn add(&self, item: Incoming) -> Result<Option<Obj>, StoreError> {
        self.inner.write().add(item)
    }

    /// Removes the object stored under `key`; returns it.
    pub(crate) fn delete_key(&self, key: &str) -> Option<Obj> {
        self.inner.write().delete_key(key)
    }

    /// Replaces the whole contents with `objects` (the result of a list) and records
    /// `resource_version`; returns what changed. The new contents and indexes are built without
    /// holding the lock and swapped in atomically. Objects without a name are skipped (logged).
    pub(crate) fn replace(&self, objects: Vec<Incoming>, resource_version: String) -> RawReplaced {
        replace_contents(&self.inner, objects, resource_version)
    }

    /// Every object (decoded), in no particular order.
    pub(crate) fn list(&self) -> Vec<Obj> {
        let s = self.inner.read();
        s.items.values().filter_map(|e| s.full(e)).collect()
    }
}

/// The store key of stored metadata (as [`object_key`]).
pub(crate) fn key_of(meta: &ObjectMeta) -> Result<String, StoreError> {
    let name = name_of(meta)?;
    Ok(match meta.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    })
}

/// The object's name; an object without one cannot be keyed.
fn name_of(meta: &ObjectMeta) -> Result<&str, StoreError> {
    meta.name
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or(StoreError::MissingName)
}

/// A [`RawWriter`] for objects of type `K` (for tests and [`Store::from_objects`]).
pub(crate) struct Writer<K> {
    store: Store<K>,
}

impl<K: Resource + fmt::Debug + Send + Sync + 'static> Writer<K> {
    /// An empty store with only the namespace index.
    pub(crate) fn new() -> Self {
        Writer {
            store: RawWriter::new().store(),
        }
    }

    fn raw(&self) -> RawWriter {
        RawWriter {
            inner: self.store.inner.clone(),
        }
    }

    /// A read-only handle to the same contents.
    pub(crate) fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// Adds an indexer and indexes every object already present. Fails if `name` is taken
    /// (`namespace` is always taken).
    #[cfg(test)]
    pub(crate) fn add_indexer<F>(&self, name: impl Into<String>, func: F) -> Result<(), StoreError>
    where
        F: Fn(&K) -> Vec<String> + Send + Sync + 'static,
    {
        self.add_indexers([(name.into(), Arc::new(func) as IndexFunc<K>)])
    }

    /// Adds several indexers at once (Go's `AddIndexers`); nothing is added if any name is taken.
    pub(crate) fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFunc<K>)>,
    ) -> Result<(), StoreError> {
        let new = indexers
            .into_iter()
            .map(|(n, f)| (n, raw_index_func(f)))
            .collect();
        self.raw().add_indexers(new)
    }

    /// Inserts or replaces `obj`; returns the object it replaced.
    #[cfg(test)]
    pub(crate) fn add(&self, obj: K) -> Result<Option<Arc<K>>, StoreError> {
        let old = self.raw().add(Incoming::full(Arc::new(obj)))?;
        Ok(old.as_ref().and_then(typed))
    }

    /// Removes the object stored under `key`; returns it.
    #[cfg(test)]
    pub(crate) fn delete_key(&self, key: &str) -> Option<Arc<K>> {
        typed(&self.raw().delete_key(key)?)
    }

    /// [`RawWriter::replace`] for `K`s.
    #[cfg(test)]
    pub(crate) fn replace(
        &self,
        objects: Vec<K>,
        resource_version: impl Into<String>,
    ) -> RawReplaced {
        let objects = objects
            .into_iter()
            .map(|o| Incoming::full(Arc::new(o)))
            .collect();
        self.raw().replace(objects, resource_version.into())
    }
}

impl<K> std::ops::Deref for Writer<K> {
    type Target = Store<K>;

    fn deref(&self) -> &Store<K> {
        &self.store
    }
}

impl<K: Send + Sync + 'static> Store<K> {
    /// The object stored under `key` (`namespace/name` or `name`).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.get_by_key("default/missing").is_none());
    /// ```
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        let s = self.inner.read();
        s.items.get_key(key).and_then(|e| s.typed(e))
    }

    /// The object `name` in `namespace` (`None` for cluster-scoped objects), without building
    /// a key string.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube::api::ObjectMeta;
    /// let cache = kube_codegen_runtime::Store::from_objects(
    ///     [ConfigMap { metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() }, ..Default::default() }],
    ///     [],
    /// )?;
    /// assert!(cache.get(Some("ns"), "a").is_some());
    /// assert!(cache.get(None, "a").is_none());
    /// # Ok::<(), kube_codegen_runtime::store::StoreError>(())
    /// ```
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let s = self.inner.read();
        s.items
            .get(namespace.unwrap_or(""), name)
            .and_then(|e| s.typed(e))
    }

    /// Every object, in no particular order.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list().is_empty());
    /// ```
    pub fn list(&self) -> Vec<Arc<K>> {
        let s = self.inner.read();
        s.items.values().filter_map(|e| s.typed(e)).collect()
    }

    /// Every object for which `keep` returns true (evaluated under the read lock, so keep it
    /// cheap). In a compact store every object is decoded for `keep`; to select by labels,
    /// [`Store::list_selected`] decodes only the matches.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_filtered(|cm| cm.data.is_some()).is_empty());
    /// ```
    pub fn list_filtered(&self, mut keep: impl FnMut(&K) -> bool) -> Vec<Arc<K>> {
        let s = self.inner.read();
        s.items
            .values()
            .filter_map(|e| s.typed_if(e, &mut keep))
            .collect()
    }

    /// The objects whose labels match `selector`, in `namespace` (through the namespace index;
    /// the empty namespace holds the cluster-scoped objects) or in all of them (`None`). In a
    /// compact store (the informer default) the selector is evaluated on labels kept in the
    /// clear and only the objects that match are decoded.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube::api::ObjectMeta;
    /// use kube_codegen_runtime::{Selector, Store};
    /// let web = ConfigMap {
    ///     metadata: ObjectMeta {
    ///         name: Some("a".into()),
    ///         namespace: Some("ns".into()),
    ///         labels: Some([("app".to_string(), "web".to_string())].into()),
    ///         ..Default::default()
    ///     },
    ///     ..Default::default()
    /// };
    /// let cache = Store::from_objects([web], [])?;
    /// assert_eq!(cache.list_selected(None, &Selector::parse("app=web")?).len(), 1);
    /// assert_eq!(cache.list_selected(Some("ns"), &Selector::parse("app!=web")?).len(), 0);
    /// assert_eq!(cache.list_selected(Some("other"), &Selector::everything()).len(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn list_selected(&self, namespace: Option<&str>, selector: &Selector) -> Vec<Arc<K>> {
        let s = self.inner.read();
        let pick = |e: &Entry| {
            if e.matches(selector) {
                s.typed(e)
            } else {
                None
            }
        };
        match namespace {
            None => s.items.values().filter_map(pick).collect(),
            Some(ns) => s
                .namespaces
                .get(ns)
                .map(|b| b.values().filter_map(pick).collect())
                .unwrap_or_default(),
        }
    }

    /// Every key, in no particular order.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_keys().is_empty());
    /// ```
    pub fn list_keys(&self) -> Vec<String> {
        self.inner.read().items.keys().collect()
    }

    /// The objects in `namespace` (through the namespace index; the empty namespace holds the
    /// cluster-scoped objects).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_namespace("kube-system").is_empty());
    /// ```
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.list_namespace_filtered(namespace, |_| true)
    }

    /// The objects in `namespace` for which `keep` returns true.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_namespace_filtered("a", |_| true).is_empty());
    /// ```
    pub fn list_namespace_filtered(
        &self,
        namespace: &str,
        mut keep: impl FnMut(&K) -> bool,
    ) -> Vec<Arc<K>> {
        let s = self.inner.read();
        match s.namespaces.get(namespace) {
            Some(bucket) => bucket
                .values()
                .filter_map(|e| s.typed_if(e, &mut keep))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The number of objects.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert_eq!(cache.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the cache holds no object.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.read().items.is_empty()
    }

    /// The resourceVersion recorded by the last relist.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert_eq!(cache.resource_version(), "");
    /// ```
    pub fn resource_version(&self) -> String {
        self.inner.read().resource_version.clone()
    }

    /// The objects filed under `value` in index `index_name` (Go's `ByIndex`).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::store::{Store, StoreError};
    /// # let cache = Store::<ConfigMap>::default();
    /// assert!(cache.by_index("namespace", "default")?.is_empty());
    /// assert_eq!(cache.by_index("nope", "x"), Err(StoreError::NoSuchIndex("nope".into())));
    /// # Ok::<(), StoreError>(())
    /// ```
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let s = self.inner.read();
        if index_name == NAMESPACE_INDEX {
            return Ok(s
                .namespaces
                .get(value)
                .map(|b| b.values().filter_map(|e| s.typed(e)).collect())
                .unwrap_or_default());
        }
        let ix = s
            .indexers
            .get(index_name)
            .ok_or_else(|| StoreError::NoSuchIndex(index_name.to_string()))?;
        Ok(ix
            .index
            .get(value)
            .map(|b| b.values().filter_map(|e| s.typed(e)).collect())
            .unwrap_or_default())
    }

    /// The keys filed under `value` in index `index_name` (Go's `IndexKeys`).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube::api::ObjectMeta;
    /// let cache = kube_codegen_runtime::Store::from_objects(
    ///     [ConfigMap { metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() }, ..Default::default() }],
    ///     [],
    /// )?;
    /// assert_eq!(cache.index_keys("namespace", "ns")?, ["ns/a"]);
    /// # Ok::<(), kube_codegen_runtime::store::StoreError>(())
    /// ```
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        let s = self.inner.read();
        if index_name == NAMESPACE_INDEX {
            return Ok(s
                .namespaces
                .get(value)
                .map(|b| b.keys().collect())
                .unwrap_or_default());
        }
        let ix = s
            .indexers
            .get(index_name)
            .ok_or_else(|| StoreError::NoSuchIndex(index_name.to_string()))?;
        Ok(ix
            .index
            .get(value)
            .map(|b| b.keys().collect())
            .unwrap_or_default())
    }

    /// Every value that index `index_name` holds (empty for an unknown index, as in Go).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_index_values("unknown").is_empty());
    /// ```
    pub fn list_index_values(&self, index_name: &str) -> Vec<String> {
        let s = self.inner.read();
        if index_name == NAMESPACE_INDEX {
            return s.namespaces.keys().cloned().collect();
        }
        s.indexers
            .get(index_name)
            .map(|ix| ix.index.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The names of the indexes, [`NAMESPACE_INDEX`] first.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert_eq!(cache.index_names(), ["namespace"]);
    /// ```
    pub fn index_names(&self) -> Vec<String> {
        let s = self.inner.read();
        let mut names: Vec<String> = s.indexers.keys().cloned().collect();
        names.sort();
        names.insert(0, NAMESPACE_INDEX.to_string());
        names
    }

    /// Calls `f` on every object while holding the read lock (no `Vec` is built).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// let mut n = 0;
    /// cache.for_each(|_| n += 1);
    /// assert_eq!(n, 0);
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&Arc<K>)) {
        let s = self.inner.read();
        for o in s.items.values().filter_map(|e| s.typed(e)) {
            f(&o);
        }
    }
}

// The number of entries per index, for tests.
impl<K> Store<K> {
    #[cfg(test)]
    fn index_entry_count(&self) -> std::collections::HashMap<String, usize> {
        let s = self.inner.read();
        let mut m = std::collections::HashMap::new();
        m.insert(
            NAMESPACE_INDEX.to_string(),
            s.namespaces.values().map(|b| b.len()).sum(),
        );
        for (n, ix) in &s.indexers {
            m.insert(n.clone(), ix.index.values().map(|b| b.len()).sum());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn cm(ns: Option<&str>, name: &str, rv: &str, app: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: ns.map(Into::into),
                resource_version: Some(rv.into()),
                labels: Some([("app".to_string(), app.to_string())].into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn app_index(c: &ConfigMap) -> Vec<String> {
        c.metadata
            .labels
            .iter()
            .flatten()
            .filter(|(k, _)| *k == "app")
            .map(|(_, v)| v.clone())
            .collect()
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    fn names(v: Vec<Arc<ConfigMap>>) -> Vec<String> {
        sorted(v.iter().filter_map(|o| o.metadata.name.clone()).collect())
    }

    #[test]
    fn add_update_delete_keep_indexes_consistent() -> Result<(), StoreError> {
        let c = Writer::new();
        c.add_indexer("app", app_index)?;
        c.add(cm(Some("a"), "x", "1", "web"))?;
        c.add(cm(Some("a"), "y", "1", "web"))?;
        c.add(cm(Some("b"), "x", "1", "db"))?;
        c.add(cm(None, "cluster", "1", "web"))?;
        assert_eq!(c.len(), 4);
        assert_eq!(sorted(c.list_keys()), ["a/x", "a/y", "b/x", "cluster"]);
        assert_eq!(names(c.by_index("app", "web")?), ["cluster", "x", "y"]);
        assert_eq!(names(c.list_namespace("a")), ["x", "y"]);
        assert_eq!(names(c.list_namespace("")), ["cluster"]);
        assert_eq!(sorted(c.index_keys("namespace", "a")?), ["a/x", "a/y"]);
        assert_eq!(c.index_keys("namespace", "")?, ["cluster"]);
        assert_eq!(sorted(c.list_index_values("app")), ["db", "web"]);
        assert_eq!(sorted(c.list_index_values("namespace")), ["", "a", "b"]);

        // Re-labelling moves the object between index values, and the old value disappears.
        let old = c.add(cm(Some("b"), "x", "2", "cache"))?;
        assert_eq!(
            old.and_then(|o| o.metadata.resource_version.clone())
                .as_deref(),
            Some("1")
        );
        assert_eq!(sorted(c.list_index_values("app")), ["cache", "web"]);
        assert_eq!(
            c.by_index("app", "cache")?[0]
                .metadata
                .resource_version
                .as_deref(),
            Some("2")
        );
        assert_eq!(
            c.get(Some("b"), "x")
                .and_then(|o| o.metadata.resource_version.clone())
                .as_deref(),
            Some("2")
        );

        assert!(
            c.delete_key(&object_key(&cm(Some("a"), "x", "9", "web"))?)
                .is_some()
        );
        assert!(c.delete_key("a/x").is_none());
        assert_eq!(names(c.by_index("app", "web")?), ["cluster", "y"]);
        assert!(c.delete_key("a/y").is_some());
        assert!(c.list_namespace("a").is_empty());
        assert_eq!(sorted(c.list_index_values("namespace")), ["", "b"]);
        assert_eq!(c.index_entry_count().get("app"), Some(&2));
        Ok(())
    }

    #[test]
    fn add_indexer_indexes_existing_objects_and_rejects_duplicates() -> Result<(), StoreError> {
        let c = Writer::new();
        c.add(cm(Some("a"), "x", "1", "web"))?;
        c.add_indexer("app", app_index)?;
        assert_eq!(c.by_index("app", "web")?.len(), 1);
        assert_eq!(
            c.add_indexer("app", app_index),
            Err(StoreError::IndexerExists("app".into()))
        );
        assert_eq!(
            c.add_indexer(NAMESPACE_INDEX, app_index),
            Err(StoreError::IndexerExists("namespace".into()))
        );
        let f: IndexFunc<ConfigMap> = Arc::new(app_index);
        assert_eq!(
            c.add_indexers([("dup".to_string(), f.clone()), ("dup".to_string(), f)]),
            Err(StoreError::IndexerExists("dup".into()))
        );
        assert_eq!(
            c.by_index("missing", "x"),
            Err(StoreError::NoSuchIndex("missing".into()))
        );
        assert_eq!(c.index_names(), ["namespace", "app"]);
        Ok(())
    }

    #[test]
    fn replace_reports_added_updated_removed_and_reindexes() -> Result<(), StoreError> {
        let c = Writer::new();
        c.add_indexer("app", app_index)?;
        c.add(cm(Some("a"), "keep", "1", "web"))?;
        c.add(cm(Some("a"), "change", "1", "web"))?;
        c.add(cm(Some("a"), "gone", "1", "web"))?;
        let diff = c.replace(
            vec![
                cm(Some("a"), "keep", "1", "web"),
                cm(Some("a"), "change", "2", "db"),
                cm(Some("b"), "new", "1", "web"),
                cm(Some("b"), "twice", "1", "web"),
                cm(Some("b"), "twice", "2", "web"),
                ConfigMap::default(),
            ],
            "77",
        );
        let rv = |o: Option<Obj>| o.and_then(|o| o.object_meta().resource_version.clone());
        assert_eq!(diff.unchanged, 1);
        assert_eq!(
            sorted(
                diff.added
                    .iter()
                    .filter_map(|e| diff.obj(e)?.object_meta().name.clone())
                    .collect()
            ),
            ["new", "twice"]
        );
        assert_eq!(rv(diff.obj(&diff.added[1])).as_deref(), Some("2"));
        assert_eq!(diff.updated.len(), 1);
        assert_eq!(rv(diff.old_obj(&diff.updated[0].0)).as_deref(), Some("1"));
        assert_eq!(rv(diff.obj(&diff.updated[0].1)).as_deref(), Some("2"));
        assert_eq!(
            diff.removed
                .iter()
                .map(RawReplaced::key)
                .collect::<Vec<_>>(),
            ["a/gone"]
        );
        assert_eq!(c.len(), 4);
        assert_eq!(c.resource_version(), "77");
        assert_eq!(names(c.by_index("app", "db")?), ["change"]);
        assert_eq!(names(c.by_index("app", "web")?), ["keep", "new", "twice"]);
        assert_eq!(names(c.list_namespace("b")), ["new", "twice"]);
        Ok(())
    }

    #[test]
    fn long_keys_are_found_too() -> Result<(), StoreError> {
        let c = Writer::new();
        let name = "n".repeat(253);
        c.add(cm(Some("some-namespace"), &name, "1", "web"))?;
        assert!(c.get(Some("some-namespace"), &name).is_some());
        assert!(c.get_by_key(&format!("some-namespace/{name}")).is_some());
        assert!(c.get(Some("other"), &name).is_none());
        Ok(())
    }

    #[test]
    fn reads_share_the_stored_object() -> Result<(), StoreError> {
        let c = Writer::new();
        c.add(cm(Some("a"), "x", "1", "web"))?;
        let (a, b) = (c.get_by_key("a/x"), c.get(Some("a"), "x"));
        assert!(matches!((a, b), (Some(a), Some(b)) if Arc::ptr_eq(&a, &b)));
        Ok(())
    }

    #[test]
    fn concurrent_readers_and_writers() {
        let c = Writer::<ConfigMap>::new();
        std::thread::scope(|s| {
            for t in 0..4 {
                let c = &c;
                s.spawn(move || {
                    for i in 0..500 {
                        let _ = c.add(cm(Some(&format!("ns{t}")), &format!("o{i}"), "1", "web"));
                        let _ = c.list_namespace(&format!("ns{t}"));
                    }
                });
            }
        });
        assert_eq!(c.len(), 2000);
        assert_eq!(c.list_namespace("ns3").len(), 500);
    }
}
