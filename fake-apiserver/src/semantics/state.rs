//! The server's state behind its one lock: the registry of served resources over the storage
//! of their objects, with the server's settings. Its methods are storage's, addressed by
//! resource rather than by store key.

use std::sync::Arc;

use serde_json::Value;

use crate::config::Config;
use crate::error::ApiResult;
use crate::semantics::resources::{Registry, Resource};
use crate::storage::store::{ListOptions, Page, Storage};

/// The whole server state, behind one lock.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) registry: Registry,
    pub(crate) storage: Storage,
    pub(crate) config: Config,
    /// The next Service ClusterIP to hand out.
    pub(crate) next_cluster_ip: u32,
}

impl State {
    pub(crate) fn new(config: Config) -> Self {
        State {
            registry: Registry::default(),
            storage: Storage::new(config.history_capacity),
            config,
            next_cluster_ip: 1,
        }
    }

    /// The resourceVersion of the last write.
    pub(crate) fn rv(&self) -> u64 {
        self.storage.rv
    }

    /// Registers a resource version (creating its store on first use).
    pub(crate) fn register(&mut self, r: Resource) {
        self.storage.ensure(&r.store_key());
        self.registry.insert(r);
    }

    /// Unregisters every version of `plural.group` and drops its objects; open watches end.
    pub(crate) fn unregister(&mut self, group: &str, plural: &str) {
        self.registry.remove_all_versions(group, plural);
        self.storage
            .drop_store(&crate::error::qualified(group, plural));
    }

    pub(crate) fn get(&self, res: &Resource, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.storage.get(&res.store_key(), namespace, name)
    }

    /// Stores `obj` (created or replaced) with the next resourceVersion; a built-in object as
    /// Go encodes its type ([`stored_as_go`](crate::semantics::fields::stored_as_go)).
    pub(crate) fn put(&mut self, res: &Resource, mut obj: Value) -> Arc<Value> {
        if let Some(def) = res
            .builtin
            .and_then(crate::semantics::builtin_schema::definition_of)
        {
            crate::semantics::fields::stored_as_go(&mut obj, def);
        }
        self.storage.put(&res.store_key(), obj)
    }

    /// Removes an object; returns its last stored state.
    pub(crate) fn remove(
        &mut self,
        res: &Resource,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.storage.remove(&res.store_key(), namespace, name)
    }

    /// A list of `res`; the filter's namespace counts only for namespaced resources.
    pub(crate) fn list(&self, res: &Resource, opts: &ListOptions) -> ApiResult<Page> {
        if opts.filter.namespace.is_some() && !res.namespaced {
            let mut opts = opts.clone();
            opts.filter.namespace = None;
            return self.storage.list(&res.store_key(), &opts);
        }
        self.storage.list(&res.store_key(), opts)
    }

    /// Every object of a resource (optionally in one namespace, for namespaced ones), now.
    pub(crate) fn all_objects(&self, res: &Resource, namespace: Option<&str>) -> Vec<Arc<Value>> {
        let namespace = namespace.filter(|_| res.namespaced);
        self.storage.all_objects(&res.store_key(), namespace)
    }
}
