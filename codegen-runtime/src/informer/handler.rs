//! What an informer tells its consumers: add, update (with the old object) and delete (with a
//! tombstone when the final state was missed).

use std::fmt;
use std::sync::Arc;

use kube::Resource;

use crate::store::object_key;

/// The object an `on_delete` handler receives.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::informer::DeletedObject;
///
/// let gone: DeletedObject<ConfigMap> = DeletedObject::Tombstone { key: "ns/a".into(), last_known: None };
/// assert_eq!(gone.key().as_deref(), Some("ns/a"));
/// assert!(gone.object().is_none());
/// ```
pub enum DeletedObject<K> {
    /// The object as the watch reported it when it was deleted.
    Obj(Arc<K>),
    /// The object disappeared while the informer was not watching (it was found missing by a
    /// relist): client-go's `DeletedFinalStateUnknown`. `last_known` is the state the cache
    /// held, which may be stale.
    Tombstone {
        /// The store key (`namespace/name` or `name`).
        key: String,
        /// The last state the informer saw, if any.
        last_known: Option<Arc<K>>,
    },
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            DeletedObject::Obj(o) => DeletedObject::Obj(o.clone()),
            DeletedObject::Tombstone { key, last_known } => DeletedObject::Tombstone {
                key: key.clone(),
                last_known: last_known.clone(),
            },
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for DeletedObject<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeletedObject::Obj(o) => f.debug_tuple("Obj").field(o).finish(),
            DeletedObject::Tombstone { key, last_known } => f
                .debug_struct("Tombstone")
                .field("key", key)
                .field("last_known", last_known)
                .finish(),
        }
    }
}

impl<K> DeletedObject<K> {
    /// The deleted object, or the tombstone's last known state.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::informer::DeletedObject;
    /// let d = DeletedObject::Obj(Arc::new(ConfigMap::default()));
    /// assert!(d.object().is_some());
    /// ```
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeletedObject::Obj(o) => Some(o),
            DeletedObject::Tombstone { last_known, .. } => last_known.as_ref(),
        }
    }

    /// Whether this is a tombstone (the final state is unknown).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube_codegen_runtime::informer::DeletedObject;
    /// assert!(!DeletedObject::Obj(Arc::new(ConfigMap::default())).is_tombstone());
    /// ```
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeletedObject::Tombstone { .. })
    }
}

impl<K: Resource> DeletedObject<K> {
    /// The store key of the deleted object (what a controller puts on its work queue; Go's
    /// `DeletionHandlingMetaNamespaceKeyFunc`).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube::api::ObjectMeta;
    /// # use kube_codegen_runtime::informer::DeletedObject;
    /// let cm = ConfigMap { metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() }, ..Default::default() };
    /// assert_eq!(DeletedObject::Obj(Arc::new(cm)).key().as_deref(), Some("ns/a"));
    /// ```
    pub fn key(&self) -> Option<String> {
        match self {
            DeletedObject::Obj(o) => object_key(o.as_ref()).ok(),
            DeletedObject::Tombstone { key, .. } => Some(key.clone()),
        }
    }
}

/// Receives an informer's notifications (client-go's `ResourceEventHandler`).
///
/// Each handler runs on its own task and receives notifications in order; a slow handler
/// delays only itself. Handlers should be quick — typically they put a key on a
/// [work queue](crate::workqueue). Objects are shared with the cache: treat them as read-only.
/// A panicking handler is logged and keeps receiving later notifications.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::informer::{DeletedObject, EventHandler};
///
/// struct Log;
/// impl EventHandler<ConfigMap> for Log {
///     fn on_add(&self, obj: Arc<ConfigMap>, is_in_initial_list: bool) {
///         println!("add {:?} (initial: {is_in_initial_list})", obj.metadata.name);
///     }
/// }
/// ```
pub trait EventHandler<K>: Send + Sync + 'static {
    /// An object appeared: from the initial list (`is_in_initial_list`), a watch, a relist, or
    /// the replay of the cache for a handler added after the informer started.
    fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }

    /// An object changed from `old` to `new`. On a resync `old` and `new` are the same object.
    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        let _ = (old, new);
    }

    /// An object was deleted.
    fn on_delete(&self, obj: DeletedObject<K>) {
        let _ = obj;
    }
}

type AddFn<K> = Box<dyn Fn(Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(Arc<K>, Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(DeletedObject<K>) + Send + Sync>;

/// An [`EventHandler`] made of closures (client-go's `ResourceEventHandlerFuncs`); missing
/// closures ignore their notification.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::informer::EventHandlerFuncs;
/// use kube_codegen_runtime::workqueue::RateLimitingQueue;
///
/// let queue = RateLimitingQueue::<String>::new();
/// let (q1, q2) = (queue.clone(), queue.clone());
/// let handler = EventHandlerFuncs::<ConfigMap>::new()
///     .add_func(move |obj, _| q1.add(kube_codegen_runtime::store::object_key(obj.as_ref()).unwrap_or_default()))
///     .delete_func(move |d| if let Some(k) = d.key() { q2.add(k) });
/// ```
pub struct EventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for EventHandlerFuncs<K> {
    fn default() -> Self {
        EventHandlerFuncs {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> fmt::Debug for EventHandlerFuncs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> EventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    ///
    /// ```
    /// let h = kube_codegen_runtime::informer::EventHandlerFuncs::<k8s_openapi::api::core::v1::Pod>::new();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the closure for adds: `(object, is_in_initial_list)`.
    ///
    /// ```
    /// # use kube_codegen_runtime::informer::EventHandlerFuncs;
    /// let h = EventHandlerFuncs::<k8s_openapi::api::core::v1::Pod>::new().add_func(|pod, initial| {});
    /// ```
    #[must_use]
    pub fn add_func(mut self, f: impl Fn(Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the closure for updates: `(old, new)`.
    ///
    /// ```
    /// # use kube_codegen_runtime::informer::EventHandlerFuncs;
    /// let h = EventHandlerFuncs::<k8s_openapi::api::core::v1::Pod>::new().update_func(|old, new| {});
    /// ```
    #[must_use]
    pub fn update_func(mut self, f: impl Fn(Arc<K>, Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the closure for deletes.
    ///
    /// ```
    /// # use kube_codegen_runtime::informer::EventHandlerFuncs;
    /// let h = EventHandlerFuncs::<k8s_openapi::api::core::v1::Pod>::new().delete_func(|gone| {});
    /// ```
    #[must_use]
    pub fn delete_func(mut self, f: impl Fn(DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for EventHandlerFuncs<K> {
    fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }

    fn on_delete(&self, obj: DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}
