//! The selection predicate of a list or a watch (kube-apiserver's `SelectionPredicate`): a
//! namespace, a label selector and a parsed field selector, and what a stored event looks like
//! to a watcher that selects with them. Parsing a field selector needs to know the resource's
//! field labels, so it lives above, in `semantics::field_selector`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::storage::object;
use crate::storage::store::{EventType, HistEvent};

/// One term of a field selector: `path=value` or `path!=value`, with the JSON path resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldTerm {
    pub(crate) label: String,
    pub(crate) path: String,
    pub(crate) value: String,
    pub(crate) negate: bool,
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector {
    pub(crate) terms: Vec<FieldTerm>,
}

impl FieldSelector {
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let mut have = object::field_string(obj, &t.path);
            if have.is_empty() {
                have = absent_value(&t.path).to_string();
            }
            (have == t.value) != t.negate
        })
    }
}

/// What a selectable field reads as when the object leaves it out: kube-apiserver selects on
/// the Go structs, whose absent booleans are `false` and absent counts `0`.
fn absent_value(path: &str) -> &'static str {
    match path {
        "spec.hostNetwork" | "spec.unschedulable" => "false",
        "status.succeeded" | "status.replicas" => "0",
        _ => "",
    }
}

/// Label and field selectors plus the namespace of a request: what an object must satisfy to
/// be listed or watched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub(crate) namespace: Option<String>,
    pub(crate) labels: kube_codegen_apimachinery::labels::Selector,
    pub(crate) fields: FieldSelector,
    /// KEP-5866's `shardSelector`, where the feature gate is on and the request has one.
    pub(crate) shard: Option<crate::storage::shard_selector::ShardSelector>,
}

impl Filter {
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && object::namespace(obj) != ns
        {
            return false;
        }
        (self.labels.is_empty() || self.labels.matches(&object::labels(obj)))
            && (self.fields.is_empty() || self.fields.matches(obj))
            && self.shard.as_ref().is_none_or(|s| s.matches(obj))
    }

    pub(crate) fn has_selectors(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty() || self.shard.is_some()
    }

    /// The event a watcher selecting with this filter sees for a stored event, if any: an
    /// object entering the selection is ADDED, one leaving it is DELETED at the event's version.
    pub(crate) fn event(&self, ev: &HistEvent) -> Option<(EventType, Arc<Value>)> {
        match ev.kind {
            EventType::Added => self
                .matches(&ev.object)
                .then(|| (EventType::Added, ev.object.clone())),
            EventType::Deleted => {
                let was = ev.prev.as_deref().unwrap_or(&ev.object);
                self.matches(was)
                    .then(|| (EventType::Deleted, ev.object.clone()))
            }
            EventType::Modified => {
                let now = self.matches(&ev.object);
                let before = ev.prev.as_deref().is_some_and(|p| self.matches(p));
                match (before, now) {
                    (true, true) => Some((EventType::Modified, ev.object.clone())),
                    (false, true) => Some((EventType::Added, ev.object.clone())),
                    (true, false) => {
                        let mut last = ev.prev.as_deref().cloned().unwrap_or(Value::Null);
                        object::set_meta(
                            &mut last,
                            "resourceVersion",
                            Some(json!(ev.rv.to_string())),
                        );
                        Some((EventType::Deleted, Arc::new(last)))
                    }
                    (false, false) => None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventType, prev: Option<Value>, obj: Value) -> HistEvent {
        HistEvent {
            rv: 7,
            kind,
            key: "n/x".into(),
            object: Arc::new(obj),
            prev: prev.map(Arc::new),
            size: 0,
        }
    }

    fn app_a() -> Filter {
        Filter {
            namespace: None,
            labels: kube_codegen_apimachinery::labels::Selector::parse("app=a").unwrap_or_default(),
            fields: FieldSelector::default(),
            shard: None,
        }
    }

    #[test]
    fn selector_transitions() {
        let filter = app_a();
        let a = json!({"metadata": {"name": "x", "labels": {"app": "a"}, "resourceVersion": "6"}});
        let b = json!({"metadata": {"name": "x", "labels": {"app": "b"}, "resourceVersion": "7"}});
        let leave = filter.event(&ev(EventType::Modified, Some(a.clone()), b.clone()));
        let Some((kind, obj)) = leave else {
            panic!("leaving the selector must be an event")
        };
        assert_eq!(kind, EventType::Deleted);
        assert_eq!(object::resource_version(&obj), "7");
        let enter = filter.event(&ev(EventType::Modified, Some(b.clone()), a.clone()));
        assert_eq!(enter.map(|(k, _)| k), Some(EventType::Added));
        assert!(
            filter
                .event(&ev(EventType::Modified, Some(b.clone()), b.clone()))
                .is_none()
        );
        assert!(
            filter
                .event(&ev(EventType::Added, None, b.clone()))
                .is_none()
        );
        // A delete is judged by the object as it was before.
        let gone = filter.event(&ev(EventType::Deleted, Some(a.clone()), b));
        assert_eq!(gone.map(|(k, _)| k), Some(EventType::Deleted));
    }

    /// kube-apiserver selects on Go structs: an unset boolean is `false`, an unset count `0`.
    #[test]
    fn unset_fields_select_as_go_zero_values() {
        let term = |path: &str, value: &str| FieldSelector {
            terms: vec![FieldTerm {
                label: path.into(),
                path: path.into(),
                value: value.into(),
                negate: false,
            }],
        };
        let bare = json!({"metadata": {"name": "x"}, "spec": {}, "status": {}});
        assert!(term("spec.hostNetwork", "false").matches(&bare));
        assert!(!term("spec.hostNetwork", "true").matches(&bare));
        assert!(term("status.succeeded", "0").matches(&bare));
        assert!(term("spec.nodeName", "").matches(&bare));
        let set = json!({"spec": {"hostNetwork": true}, "status": {"succeeded": 2}});
        assert!(term("spec.hostNetwork", "true").matches(&set));
        assert!(term("status.succeeded", "2").matches(&set));
    }

    #[test]
    fn namespace_labels_and_fields_all_apply() {
        let mut f = app_a();
        f.namespace = Some("n".into());
        f.fields.terms.push(FieldTerm {
            label: "metadata.name".into(),
            path: "metadata.name".into(),
            value: "x".into(),
            negate: false,
        });
        let obj = |ns: &str, name: &str, app: &str| json!({"metadata": {"namespace": ns, "name": name, "labels": {"app": app}}});
        assert!(f.matches(&obj("n", "x", "a")));
        assert!(!f.matches(&obj("m", "x", "a")));
        assert!(!f.matches(&obj("n", "y", "a")));
        assert!(!f.matches(&obj("n", "x", "b")));
        assert!(f.has_selectors());
        assert!(!Filter::default().has_selectors());
    }
}
