//! Apply configurations of the `meta/v1` types every object carries: client-go's
//! `applyconfigurations/meta/v1`. Generated apply configurations use these for `metadata` and
//! wherever an API type embeds an `OwnerReference`, a `Condition` or a `LabelSelector`.
//!
//! Like every apply configuration, each field is optional and serializes only when set; `with_*`
//! setters set scalars, append to lists and merge into maps.
//!
//! ```
//! use kube_codegen_runtime::apply::meta::{ConditionApplyConfiguration, ObjectMetaApplyConfiguration};
//!
//! let meta = ObjectMetaApplyConfiguration::default()
//!     .with_name("web")
//!     .with_labels([("app", "web")])
//!     .with_labels([("tier", "front")]);
//! assert_eq!(
//!     serde_json::to_value(&meta)?,
//!     serde_json::json!({"name": "web", "labels": {"app": "web", "tier": "front"}})
//! );
//! let ready = ConditionApplyConfiguration::default().with_type("Ready").with_status("True");
//! assert_eq!(serde_json::to_string(&ready)?, r#"{"type":"Ready","status":"True"}"#);
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

/// `with_<field>` setters for optional scalar fields: `with_x(value)` sets `x`.
macro_rules! setters {
    ($ty:ident { $($setter:ident($field:ident): $val:ty => $json:literal),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", $json, "`; the last call wins.")]
                #[must_use]
                pub fn $setter(mut self, value: impl Into<$val>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}

/// Appends `values` to the list in `slot`, creating it when unset.
pub(crate) fn append<T>(slot: &mut Option<Vec<T>>, values: impl IntoIterator<Item = T>) {
    slot.get_or_insert_with(Vec::new).extend(values);
}

/// Merges `entries` into the map in `slot` (later keys win), creating it when unset.
pub(crate) fn merge<K: Ord, V>(
    slot: &mut Option<BTreeMap<K, V>>,
    entries: impl IntoIterator<Item = (K, V)>,
) {
    slot.get_or_insert_with(BTreeMap::new).extend(entries);
}

/// `ObjectMeta`'s setters on a generated kind's apply configuration, as associated functions
/// that delegate to its `metadata` field (an `Option<ObjectMetaApplyConfiguration>`): written
/// once here instead of in every generated file. Used inside the kind's `impl` block, naming
/// the field and the setters to add (a kind whose own field would collide leaves one out):
///
/// ```
/// use kube_codegen_runtime::apply::meta::ObjectMetaApplyConfiguration;
///
/// #[derive(Default)]
/// struct WebApplyConfiguration {
///     metadata: Option<ObjectMetaApplyConfiguration>,
/// }
/// impl WebApplyConfiguration {
///     kube_codegen_runtime::object_meta_setters!(metadata: with_name with_labels);
/// }
/// let web = WebApplyConfiguration::default().with_name("web").with_labels([("app", "web")]);
/// assert_eq!(web.metadata.and_then(|m| m.name).as_deref(), Some("web"));
/// ```
///
/// The setters: `with_name`, `with_generate_name`, `with_namespace`, `with_uid`,
/// `with_resource_version`, `with_generation`, `with_deletion_grace_period_seconds`,
/// `with_creation_timestamp`, `with_deletion_timestamp`, `with_labels`, `with_annotations`,
/// `with_owner_references`, `with_finalizers` — each as on [`ObjectMetaApplyConfiguration`].
#[macro_export]
macro_rules! object_meta_setters {
    ($m:ident: $($setter:ident)*) => {
        $( $crate::__object_meta_setter!($m $setter); )*
    };
}

/// One setter of [`object_meta_setters!`](crate::object_meta_setters).
#[doc(hidden)]
#[macro_export]
macro_rules! __object_meta_setter {
    ($m:ident with_name) => { $crate::__object_meta_setter!(@value $m with_name "name" ::std::string::String); };
    ($m:ident with_generate_name) => { $crate::__object_meta_setter!(@value $m with_generate_name "generateName" ::std::string::String); };
    ($m:ident with_namespace) => { $crate::__object_meta_setter!(@value $m with_namespace "namespace" ::std::string::String); };
    ($m:ident with_uid) => { $crate::__object_meta_setter!(@value $m with_uid "uid" ::std::string::String); };
    ($m:ident with_resource_version) => { $crate::__object_meta_setter!(@value $m with_resource_version "resourceVersion" ::std::string::String); };
    ($m:ident with_generation) => { $crate::__object_meta_setter!(@value $m with_generation "generation" i64); };
    ($m:ident with_deletion_grace_period_seconds) => { $crate::__object_meta_setter!(@value $m with_deletion_grace_period_seconds "deletionGracePeriodSeconds" i64); };
    ($m:ident with_creation_timestamp) => { $crate::__object_meta_setter!(@value $m with_creation_timestamp "creationTimestamp" $crate::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time); };
    ($m:ident with_deletion_timestamp) => { $crate::__object_meta_setter!(@value $m with_deletion_timestamp "deletionTimestamp" $crate::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time); };
    ($m:ident with_labels) => { $crate::__object_meta_setter!(@map $m with_labels "labels"); };
    ($m:ident with_annotations) => { $crate::__object_meta_setter!(@map $m with_annotations "annotations"); };
    ($m:ident with_owner_references) => {
        /// Appends `values` to `metadata.ownerReferences`.
        #[must_use]
        pub fn with_owner_references(
            mut self,
            values: impl ::core::iter::IntoIterator<Item = $crate::apply::meta::OwnerReferenceApplyConfiguration>,
        ) -> Self {
            self.$m = ::core::option::Option::Some(self.$m.take().unwrap_or_default().with_owner_references(values));
            self
        }
    };
    ($m:ident with_finalizers) => {
        /// Appends `values` to `metadata.finalizers`.
        #[must_use]
        pub fn with_finalizers<S: ::core::convert::Into<::std::string::String>>(
            mut self,
            values: impl ::core::iter::IntoIterator<Item = S>,
        ) -> Self {
            self.$m = ::core::option::Option::Some(self.$m.take().unwrap_or_default().with_finalizers(values));
            self
        }
    };
    (@value $m:ident $setter:ident $json:literal $t:ty) => {
        #[doc = concat!("Sets `metadata.", $json, "`.")]
        #[must_use]
        pub fn $setter(mut self, value: impl ::core::convert::Into<$t>) -> Self {
            self.$m = ::core::option::Option::Some(self.$m.take().unwrap_or_default().$setter(value.into()));
            self
        }
    };
    (@map $m:ident $setter:ident $json:literal) => {
        #[doc = concat!("Merges `entries` into `metadata.", $json, "` (a later value for a key wins).")]
        #[must_use]
        pub fn $setter<K: ::core::convert::Into<::std::string::String>, V: ::core::convert::Into<::std::string::String>>(
            mut self,
            entries: impl ::core::iter::IntoIterator<Item = (K, V)>,
        ) -> Self {
            self.$m = ::core::option::Option::Some(self.$m.take().unwrap_or_default().$setter(entries));
            self
        }
    };
}

/// The apply configuration of `ObjectMeta` (client-go's `ObjectMetaApplyConfiguration`).
///
/// Server-side apply tracks `labels`, `annotations`, `finalizers` and `ownerReferences`; `name`
/// and `namespace` name the object; the rest is set by the server and only checked if given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetaApplyConfiguration {
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `generateName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// `namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `uid`: when given, the apply fails unless the object has this uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `resourceVersion`: when given, the apply is conditional on it (409 when stale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `generation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// `creationTimestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// `deletionTimestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    /// `deletionGracePeriodSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// `labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `annotations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `ownerReferences` (merged by `uid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReferenceApplyConfiguration>>,
    /// `finalizers` (a set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
}

impl ObjectMetaApplyConfiguration {
    /// Sets `name`.
    #[must_use]
    pub fn with_name(mut self, value: impl Into<String>) -> Self {
        self.name = Some(value.into());
        self
    }

    /// Sets `generateName`.
    #[must_use]
    pub fn with_generate_name(mut self, value: impl Into<String>) -> Self {
        self.generate_name = Some(value.into());
        self
    }

    /// Sets `namespace`.
    #[must_use]
    pub fn with_namespace(mut self, value: impl Into<String>) -> Self {
        self.namespace = Some(value.into());
        self
    }

    /// Sets `uid`.
    #[must_use]
    pub fn with_uid(mut self, value: impl Into<String>) -> Self {
        self.uid = Some(value.into());
        self
    }

    /// Sets `resourceVersion`.
    #[must_use]
    pub fn with_resource_version(mut self, value: impl Into<String>) -> Self {
        self.resource_version = Some(value.into());
        self
    }

    /// Sets `generation`.
    #[must_use]
    pub fn with_generation(mut self, value: i64) -> Self {
        self.generation = Some(value);
        self
    }

    /// Sets `creationTimestamp`.
    #[must_use]
    pub fn with_creation_timestamp(mut self, value: Time) -> Self {
        self.creation_timestamp = Some(value);
        self
    }

    /// Sets `deletionTimestamp`.
    #[must_use]
    pub fn with_deletion_timestamp(mut self, value: Time) -> Self {
        self.deletion_timestamp = Some(value);
        self
    }

    /// Sets `deletionGracePeriodSeconds`.
    #[must_use]
    pub fn with_deletion_grace_period_seconds(mut self, value: i64) -> Self {
        self.deletion_grace_period_seconds = Some(value);
        self
    }

    /// Merges `entries` into `labels` (a later value for a key wins).
    #[must_use]
    pub fn with_labels<K: Into<String>, V: Into<String>>(
        mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        merge(
            &mut self.labels,
            entries.into_iter().map(|(k, v)| (k.into(), v.into())),
        );
        self
    }

    /// Merges `entries` into `annotations` (a later value for a key wins).
    #[must_use]
    pub fn with_annotations<K: Into<String>, V: Into<String>>(
        mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        merge(
            &mut self.annotations,
            entries.into_iter().map(|(k, v)| (k.into(), v.into())),
        );
        self
    }

    /// Appends `values` to `ownerReferences`.
    #[must_use]
    pub fn with_owner_references(
        mut self,
        values: impl IntoIterator<Item = OwnerReferenceApplyConfiguration>,
    ) -> Self {
        append(&mut self.owner_references, values);
        self
    }

    /// Appends `values` to `finalizers`.
    #[must_use]
    pub fn with_finalizers<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
        append(&mut self.finalizers, values.into_iter().map(Into::into));
        self
    }
}

/// The apply configuration of an `OwnerReference`. Owner references are atomic items keyed
/// by `uid`: whoever lists one owns all of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReferenceApplyConfiguration {
    /// `apiVersion` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `name` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `uid` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `controller`: whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

setters!(OwnerReferenceApplyConfiguration {
    with_api_version(api_version): String => "apiVersion",
    with_kind(kind): String => "kind",
    with_name(name): String => "name",
    with_uid(uid): String => "uid",
    with_controller(controller): bool => "controller",
    with_block_owner_deletion(block_owner_deletion): bool => "blockOwnerDeletion",
});

impl OwnerReferenceApplyConfiguration {
    /// A controller reference to `owner` (`controller` and `blockOwnerDeletion` set), as
    /// client-go's `metav1.NewControllerRef`; `None` when the owner has no name or uid yet.
    pub fn controller_of<K: kube::Resource<DynamicType = ()>>(owner: &K) -> Option<Self> {
        let meta = owner.meta();
        Some(Self {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(K::kind(&()).into_owned()),
            name: Some(meta.name.clone()?),
            uid: Some(meta.uid.clone()?),
            controller: Some(true),
            block_owner_deletion: Some(true),
        })
    }
}

/// The apply configuration of a `Condition` (`metav1.Condition`). Conditions usually sit in a
/// list keyed by `type` (`+listType=map`, `+listMapKey=type`), so each manager owns the
/// conditions it applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionApplyConfiguration {
    /// `type`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `status`: `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `observedGeneration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `lastTransitionTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

setters!(ConditionApplyConfiguration {
    with_type(type_): String => "type",
    with_status(status): String => "status",
    with_observed_generation(observed_generation): i64 => "observedGeneration",
    with_last_transition_time(last_transition_time): Time => "lastTransitionTime",
    with_reason(reason): String => "reason",
    with_message(message): String => "message",
});

/// Every field of `condition`, to apply as it is (`observedGeneration` only when set): what a
/// controller that computed a whole condition applies.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
/// use kube_codegen_runtime::apply::meta::ConditionApplyConfiguration;
///
/// let ready = Condition {
///     type_: "Ready".into(),
///     status: "True".into(),
///     reason: "Synced".into(),
///     message: "ok".into(),
///     observed_generation: None,
///     last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
/// };
/// let ac = ConditionApplyConfiguration::from(&ready);
/// assert_eq!(
///     serde_json::to_value(&ac)?,
///     serde_json::json!({"type": "Ready", "status": "True", "reason": "Synced", "message": "ok",
///         "lastTransitionTime": "1970-01-01T00:00:00Z"})
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
impl From<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>
    for ConditionApplyConfiguration
{
    fn from(c: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition) -> Self {
        ConditionApplyConfiguration {
            type_: Some(c.type_.clone()),
            status: Some(c.status.clone()),
            observed_generation: c.observed_generation,
            last_transition_time: Some(c.last_transition_time.clone()),
            reason: Some(c.reason.clone()),
            message: Some(c.message.clone()),
        }
    }
}

/// The apply configuration of a `LabelSelector` (an atomic map: whoever sets it owns all of it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorApplyConfiguration {
    /// `matchLabels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// `matchExpressions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<LabelSelectorRequirementApplyConfiguration>>,
}

impl LabelSelectorApplyConfiguration {
    /// Merges `entries` into `matchLabels`.
    #[must_use]
    pub fn with_match_labels<K: Into<String>, V: Into<String>>(
        mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        merge(
            &mut self.match_labels,
            entries.into_iter().map(|(k, v)| (k.into(), v.into())),
        );
        self
    }

    /// Appends `values` to `matchExpressions`.
    #[must_use]
    pub fn with_match_expressions(
        mut self,
        values: impl IntoIterator<Item = LabelSelectorRequirementApplyConfiguration>,
    ) -> Self {
        append(&mut self.match_expressions, values);
        self
    }
}

/// The apply configuration of a `LabelSelectorRequirement`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirementApplyConfiguration {
    /// `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `operator`: `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

setters!(LabelSelectorRequirementApplyConfiguration {
    with_key(key): String => "key",
    with_operator(operator): String => "operator",
});

impl LabelSelectorRequirementApplyConfiguration {
    /// Appends `values` to `values`.
    #[must_use]
    pub fn with_values<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
        append(&mut self.values, values.into_iter().map(Into::into));
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unset_fields_are_not_serialized_and_setters_append_and_merge() {
        assert_eq!(
            serde_json::to_value(ObjectMetaApplyConfiguration::default()).unwrap(),
            json!({})
        );
        let meta = ObjectMetaApplyConfiguration::default()
            .with_namespace("ns")
            .with_annotations([("a", "1"), ("b", "1")])
            .with_annotations([("b", "2")])
            .with_finalizers(["x"])
            .with_finalizers(["y"])
            .with_owner_references([OwnerReferenceApplyConfiguration::default().with_uid("u1")])
            .with_owner_references([OwnerReferenceApplyConfiguration::default().with_uid("u2")]);
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            json!({"namespace": "ns", "annotations": {"a": "1", "b": "2"},
                   "finalizers": ["x", "y"], "ownerReferences": [{"uid": "u1"}, {"uid": "u2"}]})
        );
        // An explicitly empty list is kept: it claims the list with no items.
        let empty = ObjectMetaApplyConfiguration::default().with_finalizers(Vec::<String>::new());
        assert_eq!(
            serde_json::to_value(&empty).unwrap(),
            json!({"finalizers": []})
        );
    }

    #[test]
    fn every_field_round_trips_through_json() {
        let json = json!({
            "name": "n", "generateName": "g-", "namespace": "ns", "uid": "u", "resourceVersion": "7",
            "generation": 2, "creationTimestamp": "2026-01-02T03:04:05Z",
            "deletionTimestamp": "2026-01-02T03:04:06Z", "deletionGracePeriodSeconds": 30,
            "labels": {"a": "b"}, "annotations": {"c": "d"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "ou",
                                 "controller": true, "blockOwnerDeletion": false}],
            "finalizers": ["f"]
        });
        let meta: ObjectMetaApplyConfiguration = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&meta).unwrap(), json);
        let cond = json!({"type": "Ready", "status": "True", "observedGeneration": 3,
                          "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "R", "message": "m"});
        let c: ConditionApplyConfiguration = serde_json::from_value(cond.clone()).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), cond);
        let sel = json!({"matchLabels": {"a": "b"},
                         "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]});
        let s: LabelSelectorApplyConfiguration = serde_json::from_value(sel.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), sel);
        let built = LabelSelectorApplyConfiguration::default()
            .with_match_labels([("a", "b")])
            .with_match_expressions([LabelSelectorRequirementApplyConfiguration::default()
                .with_key("k")
                .with_operator("In")
                .with_values(["v"])]);
        assert_eq!(built, s);
    }

    #[test]
    fn a_controller_reference_names_the_owner() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let mut owner = ConfigMap::default();
        assert_eq!(
            OwnerReferenceApplyConfiguration::controller_of(&owner),
            None
        );
        owner.metadata.name = Some("o".into());
        owner.metadata.uid = Some("u".into());
        assert_eq!(
            serde_json::to_value(OwnerReferenceApplyConfiguration::controller_of(&owner)).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u",
                   "controller": true, "blockOwnerDeletion": true})
        );
    }
}
