//! Event filters (controller-runtime's `pkg/predicate`): which informer events reach a
//! controller's event handlers.
//!
//! A [`Predicate`] answers, per event, whether to pass it on. The built-in ones look only at
//! metadata and work on every kind, also as `Predicate<dyn Object>` (what
//! [`Builder::with_event_filter`](crate::Builder::with_event_filter) takes):
//!
//! * [`GenerationChanged`] — updates pass only when `metadata.generation` changed: status-only
//!   updates (and resyncs) are dropped. Kinds without a generation pass every update;
//! * [`ResourceVersionChanged`] — drops resyncs (the same object re-delivered);
//! * [`LabelsChanged`], [`AnnotationsChanged`] — updates pass when labels/annotations changed;
//! * [`and`], [`or`], [`not`] combine them; [`from_fn`] and [`Funcs`] build one from closures.
//!
//! Predicates other than `update` pass every create, delete and generic event, as in
//! controller-runtime.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_controller_runtime::predicate::{GenerationChanged, LabelsChanged, Predicate, or};
//!
//! let p = or(GenerationChanged, LabelsChanged);
//! let old = ConfigMap::default();
//! let mut new = old.clone();
//! new.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
//! assert!(Predicate::<ConfigMap>::update(&p, &old, &new));
//! ```

use std::fmt;
use std::marker::PhantomData;

use crate::object::Object;

/// Filters events (controller-runtime's `predicate.Predicate`). Every method defaults to
/// passing the event.
///
/// `K` is the object type; the default, `dyn Object`, is a predicate for any kind.
pub trait Predicate<K: ?Sized = dyn Object>: Send + Sync + 'static {
    /// Whether an object's creation (or its first sight) passes.
    fn create(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }

    /// Whether an update from `old` to `new` passes.
    fn update(&self, old: &K, new: &K) -> bool {
        let _ = (old, new);
        true
    }

    /// Whether a deletion passes.
    fn delete(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }

    /// Whether a generic event passes.
    fn generic(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }
}

/// Passes every event (the default of a watch without predicates).
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kube_controller_runtime::predicate::{Everything, Predicate};
/// assert!(Predicate::<Pod>::update(&Everything, &Pod::default(), &Pod::default()));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Everything;

impl<K: ?Sized> Predicate<K> for Everything {}

/// Passes updates whose `metadata.generation` changed (controller-runtime's
/// `GenerationChangedPredicate`): spec changes pass, status-only and metadata-only updates and
/// resyncs do not. An update of a kind without a generation passes.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube_controller_runtime::predicate::{GenerationChanged, Predicate};
/// let mut old = Deployment::default();
/// old.metadata.generation = Some(1);
/// let mut status_only = old.clone();
/// status_only.status = Some(Default::default());
/// assert!(!GenerationChanged.update(&old, &status_only));
/// let mut spec = old.clone();
/// spec.metadata.generation = Some(2);
/// assert!(GenerationChanged.update(&old, &spec));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GenerationChanged;

impl<K: Object + ?Sized> Predicate<K> for GenerationChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        match (old.meta().generation, new.meta().generation) {
            (None, None) => true,
            (a, b) => a != b,
        }
    }
}

/// Passes updates whose `metadata.resourceVersion` changed (controller-runtime's
/// `ResourceVersionChangedPredicate`): drops resyncs.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{Predicate, ResourceVersionChanged};
/// let mut cm = ConfigMap::default();
/// cm.metadata.resource_version = Some("5".into());
/// assert!(!ResourceVersionChanged.update(&cm, &cm));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceVersionChanged;

impl<K: Object + ?Sized> Predicate<K> for ResourceVersionChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().resource_version != new.meta().resource_version
    }
}

/// Passes updates whose labels changed (controller-runtime's `LabelChangedPredicate`).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{LabelsChanged, Predicate};
/// let cm = ConfigMap::default();
/// assert!(!LabelsChanged.update(&cm, &cm));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct LabelsChanged;

impl<K: Object + ?Sized> Predicate<K> for LabelsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        non_empty(&old.meta().labels) != non_empty(&new.meta().labels)
    }
}

/// Passes updates whose annotations changed (controller-runtime's
/// `AnnotationChangedPredicate`).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{AnnotationsChanged, Predicate};
/// let old = ConfigMap::default();
/// let mut new = old.clone();
/// new.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
/// assert!(AnnotationsChanged.update(&old, &new));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationsChanged;

impl<K: Object + ?Sized> Predicate<K> for AnnotationsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        non_empty(&old.meta().annotations) != non_empty(&new.meta().annotations)
    }
}

/// An absent map and an empty one are the same.
fn non_empty<V>(
    m: &Option<std::collections::BTreeMap<String, V>>,
) -> Option<&std::collections::BTreeMap<String, V>> {
    m.as_ref().filter(|m| !m.is_empty())
}

/// Both predicates must pass ([`and`]).
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(pub A, pub B);

/// Either predicate passes ([`or`]).
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(pub A, pub B);

/// The predicate must not pass ([`not`]).
#[derive(Debug, Clone, Copy)]
pub struct Not<P>(pub P);

/// Passes an event when both `a` and `b` pass it (controller-runtime's `predicate.And`).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{and, GenerationChanged, LabelsChanged, Predicate};
/// let p = and(GenerationChanged, LabelsChanged);
/// let cm = ConfigMap::default();
/// assert!(!Predicate::<ConfigMap>::update(&p, &cm, &cm));
/// ```
pub fn and<A, B>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// Passes an event when `a` or `b` passes it (controller-runtime's `predicate.Or`).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{or, AnnotationsChanged, LabelsChanged, Predicate};
/// let p = or(LabelsChanged, AnnotationsChanged);
/// let cm = ConfigMap::default();
/// assert!(!Predicate::<ConfigMap>::update(&p, &cm, &cm));
/// ```
pub fn or<A, B>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// Passes an event when `p` does not (controller-runtime's `predicate.Not`).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{not, LabelsChanged, Predicate};
/// let cm = ConfigMap::default();
/// assert!(Predicate::<ConfigMap>::update(&not(LabelsChanged), &cm, &cm));
/// ```
pub fn not<P>(p: P) -> Not<P> {
    Not(p)
}

impl<K: ?Sized, A: Predicate<K>, B: Predicate<K>> Predicate<K> for And<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) && self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) && self.1.delete(obj)
    }
    fn generic(&self, obj: &K) -> bool {
        self.0.generic(obj) && self.1.generic(obj)
    }
}

impl<K: ?Sized, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Or<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) || self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) || self.1.delete(obj)
    }
    fn generic(&self, obj: &K) -> bool {
        self.0.generic(obj) || self.1.generic(obj)
    }
}

impl<K: ?Sized, P: Predicate<K>> Predicate<K> for Not<P> {
    fn create(&self, obj: &K) -> bool {
        !self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        !self.0.delete(obj)
    }
    fn generic(&self, obj: &K) -> bool {
        !self.0.generic(obj)
    }
}

/// A predicate applying one test to the object of every event (controller-runtime's
/// `NewPredicateFuncs`); updates test the new object. See [`from_fn`].
pub struct FromFn<K: ?Sized, F> {
    f: F,
    _k: PhantomData<fn(&K)>,
}

impl<K: ?Sized, F> fmt::Debug for FromFn<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

/// A predicate that passes the events whose object passes `f` (for updates: the new object).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{from_fn, Predicate};
/// let labelled = from_fn(|cm: &ConfigMap| cm.metadata.labels.is_some());
/// assert!(!labelled.create(&ConfigMap::default()));
/// ```
pub fn from_fn<K: ?Sized, F>(f: F) -> FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    FromFn { f, _k: PhantomData }
}

impl<K: ?Sized + 'static, F> Predicate<K> for FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    fn create(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        (self.f)(new)
    }
    fn delete(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
    fn generic(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
}

type ObjFn<K> = Box<dyn Fn(&K) -> bool + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// A predicate made of closures, one per event type (controller-runtime's `predicate.Funcs`);
/// a missing closure passes its events.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_controller_runtime::predicate::{Funcs, Predicate};
/// let no_deletes = Funcs::<ConfigMap>::new().on_delete(|_| false);
/// assert!(!no_deletes.delete(&ConfigMap::default()));
/// assert!(no_deletes.create(&ConfigMap::default()));
/// ```
pub struct Funcs<K: ?Sized> {
    create: Option<ObjFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<ObjFn<K>>,
    generic: Option<ObjFn<K>>,
}

impl<K: ?Sized> fmt::Debug for Funcs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Funcs")
            .field("create", &self.create.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .field("generic", &self.generic.is_some())
            .finish()
    }
}

impl<K: ?Sized> Default for Funcs<K> {
    fn default() -> Self {
        Funcs {
            create: None,
            update: None,
            delete: None,
            generic: None,
        }
    }
}

impl<K: ?Sized> Funcs<K> {
    /// A predicate passing everything until closures are set.
    ///
    /// ```
    /// let p = kube_controller_runtime::predicate::Funcs::<k8s_openapi::api::core::v1::Pod>::new();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides creates.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let p = kube_controller_runtime::predicate::Funcs::<Pod>::new().on_create(|p| p.spec.is_some());
    /// ```
    #[must_use]
    pub fn on_create(mut self, f: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        self.create = Some(Box::new(f));
        self
    }

    /// Decides updates.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let p = kube_controller_runtime::predicate::Funcs::<Pod>::new().on_update(|old, new| old.spec != new.spec);
    /// ```
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Decides deletes.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let p = kube_controller_runtime::predicate::Funcs::<Pod>::new().on_delete(|_| false);
    /// ```
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }

    /// Decides generic events.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let p = kube_controller_runtime::predicate::Funcs::<Pod>::new().on_generic(|_| true);
    /// ```
    #[must_use]
    pub fn on_generic(mut self, f: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        self.generic = Some(Box::new(f));
        self
    }
}

impl<K: ?Sized + 'static> Predicate<K> for Funcs<K> {
    fn create(&self, obj: &K) -> bool {
        self.create.as_ref().is_none_or(|f| f(obj))
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.update.as_ref().is_none_or(|f| f(old, new))
    }
    fn delete(&self, obj: &K) -> bool {
        self.delete.as_ref().is_none_or(|f| f(obj))
    }
    fn generic(&self, obj: &K) -> bool {
        self.generic.as_ref().is_none_or(|f| f(obj))
    }
}

/// A type-erased predicate for any kind, applied to a `K` (how the builder applies the event
/// filter to every watch).
pub(crate) struct AnyKind(pub(crate) std::sync::Arc<dyn Predicate<dyn Object>>);

impl<K: Object> Predicate<K> for AnyKind {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj)
    }
    fn generic(&self, obj: &K) -> bool {
        self.0.generic(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(generation: Option<i64>, rv: &str) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.generation = generation;
        c.metadata.resource_version = Some(rv.into());
        c
    }

    #[test]
    fn generation_changed_passes_creates_and_spec_changes_only() {
        let p = GenerationChanged;
        assert!(Predicate::<ConfigMap>::create(&p, &cm(Some(1), "1")));
        assert!(Predicate::<ConfigMap>::delete(&p, &cm(Some(1), "1")));
        assert!(!p.update(&cm(Some(1), "1"), &cm(Some(1), "2")));
        assert!(p.update(&cm(Some(1), "1"), &cm(Some(2), "2")));
        assert!(
            p.update(&cm(None, "1"), &cm(None, "2")),
            "no generation: pass"
        );
        // As a predicate for any kind.
        let erased: &dyn Predicate<dyn Object> = &GenerationChanged;
        assert!(!erased.update(&cm(Some(1), "1"), &cm(Some(1), "2")));
    }

    #[test]
    fn combinators() {
        let (a, b) = (cm(Some(1), "1"), cm(Some(1), "2"));
        assert!(Predicate::<ConfigMap>::update(
            &ResourceVersionChanged,
            &a,
            &b
        ));
        assert!(!Predicate::<ConfigMap>::update(
            &and(ResourceVersionChanged, GenerationChanged),
            &a,
            &b
        ));
        assert!(Predicate::<ConfigMap>::update(
            &or(ResourceVersionChanged, GenerationChanged),
            &a,
            &b
        ));
        assert!(Predicate::<ConfigMap>::update(
            &not(GenerationChanged),
            &a,
            &b
        ));
        let mut labelled = b.clone();
        labelled.metadata.labels = Some([("k".to_string(), "v".to_string())].into());
        assert!(Predicate::<ConfigMap>::update(
            &LabelsChanged,
            &a,
            &labelled
        ));
        let mut empty = a.clone();
        empty.metadata.labels = Some(Default::default());
        assert!(!Predicate::<ConfigMap>::update(&LabelsChanged, &a, &empty));
        let f = from_fn(|c: &ConfigMap| c.metadata.labels.is_some());
        assert!(f.update(&a, &labelled) && !f.update(&labelled, &a));
    }
}
