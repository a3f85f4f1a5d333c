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
use std::borrow::Borrow;
use std::cell::RefCell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;

use ahash::AHashMap;
use kube::Resource;
use kube::api::ObjectMeta;
use parking_lot::RwLock;

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

thread_local! {
    /// Scratch space for joining `namespace/name` before copying it into an `Arc<str>`.
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// `namespace/name` as a shared string, with one allocation.
fn joined(ns: &str, name: &str) -> Arc<str> {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            buf.push_str(ns);
            buf.push('/');
            buf.push_str(name);
            Arc::from(buf.as_str())
        }
        Err(_) => Arc::from(format!("{ns}/{name}")),
    })
}

/// A stored key: the shared `namespace/name` (or `name`) string and where the name starts.
///
/// It hashes, compares and borrows as that string.
#[derive(Clone)]
struct Key {
    full: Arc<str>,
    /// 0 for cluster-scoped keys, else `namespace.len() + 1`.
    name_at: usize,
}

impl Key {
    fn of(meta: &ObjectMeta) -> Result<Key, StoreError> {
        let name = meta
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or(StoreError::MissingName)?;
        Ok(match meta.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) => Key {
                full: joined(ns, name),
                name_at: ns.len() + 1,
            },
            None => Key {
                full: Arc::from(name),
                name_at: 0,
            },
        })
    }

    fn namespace(&self) -> &str {
        self.full
            .get(..self.name_at.saturating_sub(1))
            .unwrap_or("")
    }

    fn as_str(&self) -> &str {
        &self.full
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Must hash exactly as `str` does, for look-ups by `&str` (`Borrow<str>`).
        self.as_str().hash(state);
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.full == other.full
    }
}

impl Eq for Key {}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.full
    }
}

impl Key {
    /// (namespace, name); the namespace is empty for cluster-scoped keys.
    fn parts(&self) -> (&str, &str) {
        (
            self.namespace(),
            self.full.get(self.name_at..).unwrap_or(""),
        )
    }
}

/// The primary map: key → object, hashed by (namespace, name) so that a look-up by namespace
/// and name is one probe with no key string built, and a look-up by `namespace/name` splits
/// the string instead.
struct Items {
    hasher: ahash::RandomState,
    table: hashbrown::HashTable<(Key, Obj)>,
}

impl Items {
    fn new() -> Self {
        Items {
            hasher: ahash::RandomState::new(),
            table: hashbrown::HashTable::new(),
        }
    }

    fn hash(&self, ns: &str, name: &str) -> u64 {
        self.hasher.hash_one((ns, name))
    }

    fn get(&self, ns: &str, name: &str) -> Option<&Obj> {
        self.table
            .find(self.hash(ns, name), |(k, _)| k.parts() == (ns, name))
            .map(|(_, o)| o)
    }

    fn get_key(&self, key: &str) -> Option<&Obj> {
        let (ns, name) = split_key(key);
        self.get(ns.unwrap_or(""), name)
    }

    /// Inserts or replaces; returns the replaced object.
    fn insert(&mut self, key: Key, obj: Obj) -> Option<Obj> {
        let (ns, name) = key.parts();
        let hash = self.hash(ns, name);
        let hasher = &self.hasher;
        match self.table.entry(
            hash,
            |(k, _)| k.parts() == (ns, name),
            |(k, _)| {
                let (ns, name) = k.parts();
                hasher.hash_one((ns, name))
            },
        ) {
            hashbrown::hash_table::Entry::Occupied(mut e) => {
                Some(std::mem::replace(&mut e.get_mut().1, obj))
            }
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert((key, obj));
                None
            }
        }
    }

    fn remove(&mut self, key: &str) -> Option<Obj> {
        let (ns, name) = split_key(key);
        let ns = ns.unwrap_or("");
        let hash = self.hash(ns, name);
        let entry = self
            .table
            .find_entry(hash, |(k, _)| k.parts() == (ns, name))
            .ok()?;
        Some(entry.remove().0.1)
    }

    fn reserve(&mut self, additional: usize) {
        let hasher = &self.hasher;
        self.table.reserve(additional, |(k, _)| {
            let (ns, name) = k.parts();
            hasher.hash_one((ns, name))
        });
    }

    fn iter(&self) -> impl Iterator<Item = (&Key, &Obj)> {
        self.table.iter().map(|(k, o)| (k, o))
    }

    fn values(&self) -> impl Iterator<Item = &Obj> {
        self.table.iter().map(|(_, o)| o)
    }

    fn keys(&self) -> impl Iterator<Item = &Key> {
        self.table.iter().map(|(k, _)| k)
    }

    fn len(&self) -> usize {
        self.table.len()
    }

    fn is_empty(&self) -> bool {
        self.table.is_empty()
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

/// What a relist changed, so that an informer can tell handlers about it.
#[derive(Default)]
pub(crate) struct RawReplaced {
    /// Objects whose key was not in the cache before, in list order.
    pub(crate) added: Vec<Obj>,
    /// `(old, new)` for keys that were present with a different `resourceVersion` (or none).
    pub(crate) updated: Vec<(Obj, Obj)>,
    /// `(key, last known object)` for keys that are no longer present.
    pub(crate) removed: Vec<(String, Obj)>,
    /// How many objects were present before and after with the same `resourceVersion`.
    pub(crate) unchanged: usize,
}

/// `key → object`.
type Bucket = AHashMap<Key, Obj>;

/// `value → (key → object)`.
type Index = AHashMap<String, Bucket>;

struct Indexer {
    func: RawIndexFunc,
    index: Index,
}

struct Contents {
    items: Items,
    /// namespace (empty for cluster-scoped) → key → object; keys share `items`' allocations.
    namespaces: AHashMap<String, Bucket>,
    indexers: AHashMap<String, Indexer>,
    /// Bumped whenever the indexer set changes, so a `replace` built outside the lock can tell
    /// that it must re-index.
    indexers_generation: u64,
    resource_version: String,
}

impl Contents {
    fn empty() -> Self {
        Contents {
            items: Items::new(),
            namespaces: AHashMap::new(),
            indexers: AHashMap::new(),
            indexers_generation: 0,
            resource_version: String::new(),
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
        for (name, func) in new {
            let mut index = Index::new();
            for (key, obj) in self.items.iter() {
                insert_into(&mut index, func(obj), key, obj);
            }
            self.indexers.insert(name, Indexer { func, index });
        }
        self.indexers_generation += 1;
        Ok(())
    }

    /// Inserts or replaces `obj`; returns the object it replaced.
    fn add(&mut self, obj: Obj) -> Result<Option<Obj>, StoreError> {
        let key = Key::of(obj.object_meta())?;
        let old = self.items.insert(key.clone(), obj.clone());
        insert_in_namespace(&mut self.namespaces, &key, &obj);
        for ix in self.indexers.values_mut() {
            if let Some(old) = &old {
                remove_from(&mut ix.index, (ix.func)(old), key.as_str());
            }
            insert_into(&mut ix.index, (ix.func)(&obj), &key, &obj);
        }
        Ok(old)
    }

    /// Removes the object stored under `key`; returns it.
    fn delete_key(&mut self, key: &str) -> Option<Obj> {
        let old = self.items.remove(key)?;
        let ns = split_key(key).0.unwrap_or("");
        if let Some(bucket) = self.namespaces.get_mut(ns) {
            bucket.remove(key);
            if bucket.is_empty() {
                self.namespaces.remove(ns);
            }
        }
        for ix in self.indexers.values_mut() {
            remove_from(&mut ix.index, (ix.func)(&old), key);
        }
        Some(old)
    }

    fn index_funcs(&self) -> Vec<(String, RawIndexFunc)> {
        self.indexers
            .iter()
            .map(|(n, ix)| (n.clone(), ix.func.clone()))
            .collect()
    }

    /// Builds every index in `funcs` over the objects present.
    fn index_all(&mut self, funcs: &[(String, RawIndexFunc)]) {
        for (name, func) in funcs {
            let mut index = Index::new();
            for (key, obj) in self.items.iter() {
                insert_into(&mut index, func(obj), key, obj);
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
    objects: Vec<Obj>,
    resource_version: String,
) -> RawReplaced {
    let (funcs, generation) = {
        let s = lock.read();
        (s.index_funcs(), s.indexers_generation)
    };
    let mut order: Vec<(Key, Obj)> = Vec::with_capacity(objects.len());
    let mut new = Contents::empty();
    new.items.reserve(objects.len());
    let mut duplicates = false;
    for obj in objects {
        let key = match Key::of(obj.object_meta()) {
            Ok(k) => k,
            Err(e) => {
                tracing::warn!(error = %e, "skipping an object without a name in a list");
                continue;
            }
        };
        insert_in_namespace(&mut new.namespaces, &key, &obj);
        duplicates |= new.items.insert(key.clone(), obj.clone()).is_some();
        order.push((key, obj));
    }
    if duplicates {
        // A key listed twice keeps its last object; forget the earlier ones.
        order.retain(|(k, o)| {
            new.items
                .get_key(k.as_str())
                .is_some_and(|cur| Arc::ptr_eq(cur, o))
        });
    }
    new.index_all(&funcs);
    new.resource_version = resource_version;

    let mut old_items = {
        let mut s = lock.write();
        if s.indexers_generation != generation {
            // An indexer was added while we were building: index with the current set.
            let funcs = s.index_funcs();
            new.indexers.clear();
            new.index_all(&funcs);
        }
        new.indexers_generation = s.indexers_generation;
        let old = std::mem::replace(&mut *s, new);
        old.items
    };

    let mut diff = RawReplaced::default();
    for (key, obj) in order {
        match old_items.remove(key.as_str()) {
            None => diff.added.push(obj),
            Some(old) => {
                let (a, b) = (
                    old.object_meta().resource_version.as_deref(),
                    obj.object_meta().resource_version.as_deref(),
                );
                if a.is_some() && a == b {
                    diff.unchanged += 1;
                } else {
                    diff.updated.push((old, obj));
                }
            }
        }
    }
    diff.removed = old_items
        .table
        .into_iter()
        .map(|(k, o)| (k.as_str().to_string(), o))
        .collect();
    diff
}

/// Files `obj` under `key` in its namespace's bucket; only a new namespace allocates.
fn insert_in_namespace(namespaces: &mut AHashMap<String, Bucket>, key: &Key, obj: &Obj) {
    let ns = key.namespace();
    match namespaces.get_mut(ns) {
        Some(bucket) => {
            bucket.insert(key.clone(), obj.clone());
        }
        None => {
            let mut bucket = AHashMap::new();
            bucket.insert(key.clone(), obj.clone());
            namespaces.insert(ns.to_string(), bucket);
        }
    }
}

fn insert_into(index: &mut Index, values: Vec<String>, key: &Key, obj: &Obj) {
    for v in values {
        index.entry(v).or_default().insert(key.clone(), obj.clone());
    }
}

fn remove_from(index: &mut Index, values: Vec<String>, key: &str) {
    for v in values {
        if let Some(bucket) = index.get_mut(&v) {
            bucket.remove(key);
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
        let objects = objects.into_iter().map(|o| Arc::new(o) as Obj).collect();
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

    /// Inserts or replaces `obj`; returns the object it replaced.
    pub(crate) fn add(&self, obj: Obj) -> Result<Option<Obj>, StoreError> {
        self.inner.write().add(obj)
    }

    /// Removes the object stored under `key`; returns it.
    pub(crate) fn delete_key(&self, key: &str) -> Option<Obj> {
        self.inner.write().delete_key(key)
    }

    /// Replaces the whole contents with `objects` (the result of a list) and records
    /// `resource_version`; returns what changed. The new contents and indexes are built without
    /// holding the lock and swapped in atomically. Objects without a name are skipped (logged).
    pub(crate) fn replace(&self, objects: Vec<Obj>, resource_version: String) -> RawReplaced {
        replace_contents(&self.inner, objects, resource_version)
    }

    /// Every object, in no particular order.
    pub(crate) fn list(&self) -> Vec<Obj> {
        self.inner.read().items.values().cloned().collect()
    }
}

/// The store key of stored metadata (as [`object_key`]).
pub(crate) fn key_of(meta: &ObjectMeta) -> Result<String, StoreError> {
    Key::of(meta).map(|k| k.as_str().to_string())
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
        let old = self.raw().add(Arc::new(obj))?;
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
        let objects = objects.into_iter().map(|o| Arc::new(o) as Obj).collect();
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
        self.inner.read().items.get_key(key).and_then(typed)
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
        self.inner
            .read()
            .items
            .get(namespace.unwrap_or(""), name)
            .and_then(typed)
    }

    /// Every object, in no particular order.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list().is_empty());
    /// ```
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.values().filter_map(typed).collect()
    }

    /// Every object for which `keep` returns true (evaluated under the read lock, so keep it
    /// cheap).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_filtered(|cm| cm.data.is_some()).is_empty());
    /// ```
    pub fn list_filtered(&self, mut keep: impl FnMut(&K) -> bool) -> Vec<Arc<K>> {
        self.inner
            .read()
            .items
            .values()
            .filter_map(|o| typed_ref::<K>(o).is_some_and(&mut keep).then(|| typed(o))?)
            .collect()
    }

    /// Every key, in no particular order.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # let cache = kube_codegen_runtime::Store::<ConfigMap>::default();
    /// assert!(cache.list_keys().is_empty());
    /// ```
    pub fn list_keys(&self) -> Vec<String> {
        self.inner
            .read()
            .items
            .keys()
            .map(|k| k.as_str().to_string())
            .collect()
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
                .filter_map(|o| typed_ref::<K>(o).is_some_and(&mut keep).then(|| typed(o))?)
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

    /// The resourceVersion recorded by the last the last relist.
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
                .map(|b| b.values().filter_map(typed).collect())
                .unwrap_or_default());
        }
        let ix = s
            .indexers
            .get(index_name)
            .ok_or_else(|| StoreError::NoSuchIndex(index_name.to_string()))?;
        Ok(ix
            .index
            .get(value)
            .map(|b| b.values().filter_map(typed).collect())
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
                .map(|b| b.keys().map(|k| k.as_str().to_string()).collect())
                .unwrap_or_default());
        }
        let ix = s
            .indexers
            .get(index_name)
            .ok_or_else(|| StoreError::NoSuchIndex(index_name.to_string()))?;
        Ok(ix
            .index
            .get(value)
            .map(|b| b.keys().map(|k| k.as_str().to_string()).collect())
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
        for o in self.inner.read().items.values().filter_map(typed) {
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
        let rv = |o: &Obj| o.object_meta().resource_version.clone();
        assert_eq!(diff.unchanged, 1);
        assert_eq!(
            sorted(
                diff.added
                    .iter()
                    .filter_map(|o| o.object_meta().name.clone())
                    .collect()
            ),
            ["new", "twice"]
        );
        assert_eq!(rv(&diff.added[1]).as_deref(), Some("2"));
        assert_eq!(diff.updated.len(), 1);
        assert_eq!(rv(&diff.updated[0].0).as_deref(), Some("1"));
        assert_eq!(rv(&diff.updated[0].1).as_deref(), Some("2"));
        assert_eq!(
            diff.removed
                .iter()
                .map(|(k, _)| k.as_str())
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
