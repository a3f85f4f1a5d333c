//! The schemas of the built-in kinds, from k8s-openapi's `schemars` implementations (the
//! Kubernetes API's own definitions, names and descriptions): what the OpenAPI documents
//! serve, and what unknown fields of built-in objects are found and pruned by.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::semantics::resources::Builtin;

/// The prefix of the meta/v1 definitions.
pub(crate) const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
/// The definition of `autoscaling/v1` `Scale`.
pub(crate) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The definitions of the built-in kinds and of the meta types operations refer to.
pub(crate) struct BuiltinSchemas {
    pub(crate) definitions: Map<String, Value>,
    /// Definition name of each built-in kind.
    pub(crate) names: HashMap<Builtin, String>,
    /// Descriptions of the `apiVersion`, `kind` and `metadata` fields (from `ConfigMap`).
    pub(crate) type_meta: Map<String, Value>,
}

pub(crate) fn gvk_ext(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "kind": kind, "version": version}])
}

pub(crate) fn builtin_schemas() -> &'static BuiltinSchemas {
    static CELL: OnceLock<BuiltinSchemas> = OnceLock::new();
    CELL.get_or_init(|| {
        use k8s_openapi::api::{
            admissionregistration, apps, autoscaling, batch, coordination, core, discovery, events,
            rbac,
        };
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
        use schemars::JsonSchema;

        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        let mut names = HashMap::new();
        let mut kinds: Vec<(String, &'static str, &'static str, &'static str)> = Vec::new();
        macro_rules! kind {
            ($b:expr, $t:ty) => {{
                generator.subschema_for::<$t>();
                let name = <$t as JsonSchema>::schema_name().into_owned();
                names.insert($b, name.clone());
                kinds.push((
                    name,
                    <$t as k8s_openapi::Resource>::GROUP,
                    <$t as k8s_openapi::Resource>::VERSION,
                    <$t as k8s_openapi::Resource>::KIND,
                ));
            }};
        }
        kind!(Builtin::Namespace, core::v1::Namespace);
        kind!(Builtin::Pod, core::v1::Pod);
        kind!(Builtin::Service, core::v1::Service);
        kind!(Builtin::Endpoints, core::v1::Endpoints);
        kind!(Builtin::ConfigMap, core::v1::ConfigMap);
        kind!(Builtin::Secret, core::v1::Secret);
        kind!(Builtin::CoreEvent, core::v1::Event);
        kind!(Builtin::ServiceAccount, core::v1::ServiceAccount);
        kind!(Builtin::Node, core::v1::Node);
        kind!(
            Builtin::ReplicationController,
            core::v1::ReplicationController
        );
        kind!(Builtin::Deployment, apps::v1::Deployment);
        kind!(Builtin::ReplicaSet, apps::v1::ReplicaSet);
        kind!(Builtin::StatefulSet, apps::v1::StatefulSet);
        kind!(Builtin::DaemonSet, apps::v1::DaemonSet);
        kind!(Builtin::Job, batch::v1::Job);
        kind!(Builtin::CronJob, batch::v1::CronJob);
        kind!(
            Builtin::HorizontalPodAutoscaler,
            autoscaling::v2::HorizontalPodAutoscaler
        );
        kind!(
            Builtin::PodDisruptionBudget,
            k8s_openapi::api::policy::v1::PodDisruptionBudget
        );
        kind!(Builtin::Ingress, k8s_openapi::api::networking::v1::Ingress);
        kind!(
            Builtin::NetworkPolicy,
            k8s_openapi::api::networking::v1::NetworkPolicy
        );
        kind!(
            Builtin::PriorityClass,
            k8s_openapi::api::scheduling::v1::PriorityClass
        );
        kind!(Builtin::EndpointSlice, discovery::v1::EndpointSlice);
        kind!(Builtin::Event, events::v1::Event);
        kind!(Builtin::Lease, coordination::v1::Lease);
        kind!(Builtin::Crd, apiext::CustomResourceDefinition);
        kind!(
            Builtin::MutatingWebhookConfiguration,
            admissionregistration::v1::MutatingWebhookConfiguration
        );
        kind!(
            Builtin::ValidatingWebhookConfiguration,
            admissionregistration::v1::ValidatingWebhookConfiguration
        );
        kind!(
            Builtin::ValidatingAdmissionPolicy,
            admissionregistration::v1::ValidatingAdmissionPolicy
        );
        kind!(
            Builtin::ValidatingAdmissionPolicyBinding,
            admissionregistration::v1::ValidatingAdmissionPolicyBinding
        );
        kind!(Builtin::Role, rbac::v1::Role);
        kind!(Builtin::ClusterRole, rbac::v1::ClusterRole);
        kind!(Builtin::RoleBinding, rbac::v1::RoleBinding);
        kind!(Builtin::ClusterRoleBinding, rbac::v1::ClusterRoleBinding);
        generator.subschema_for::<autoscaling::v1::Scale>();
        generator.subschema_for::<core::v1::Binding>();
        generator.subschema_for::<k8s_openapi::api::policy::v1::Eviction>();
        generator.subschema_for::<meta::Status>();
        generator.subschema_for::<meta::DeleteOptions>();
        generator.subschema_for::<meta::Patch>();
        generator.subschema_for::<meta::ListMeta>();
        generator.subschema_for::<meta::ObjectMeta>();
        let mut definitions = generator.take_definitions(true);
        add_openapi_extensions(&mut definitions);
        for (name, group, version, kind) in &kinds {
            if let Some(Value::Object(d)) = definitions.get_mut(name) {
                // k8s-openapi's structs make `metadata` required; the API does not.
                if let Some(Value::Array(req)) = d.get_mut("required") {
                    req.retain(|r| r != "metadata");
                    if req.is_empty() {
                        d.remove("required");
                    }
                }
                d.insert(
                    "x-kubernetes-group-version-kind".into(),
                    gvk_ext(group, version, kind),
                );
            }
        }
        if let Some(Value::Object(d)) = definitions.get_mut(SCALE) {
            d.insert(
                "x-kubernetes-group-version-kind".into(),
                gvk_ext("autoscaling", "v1", "Scale"),
            );
        }
        let type_meta = names
            .get(&Builtin::ConfigMap)
            .and_then(|n| definitions.get(n))
            .and_then(|d| d.get("properties"))
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter(|(k, _)| matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        BuiltinSchemas {
            definitions,
            names,
            type_meta,
        }
    })
}

/// The list and map extensions kube-apiserver v1.37.1's OpenAPI documents give the built-in
/// types' properties (written by `scripts/update-openapi-extensions.sh`): by definition name,
/// then property name (`""`: the type itself).
const OPENAPI_EXTENSIONS: &str = include_str!("builtin_openapi_extensions.json");

/// The slice, map and pointer fields of the built-in types that Go writes as `null` when they
/// are empty (their json tag has no `omitempty`): by definition name, the field names. Written
/// by `scripts/update-openapi-extensions.sh` from the Go types of kube-apiserver v1.37.1.
const GO_NULL_FIELDS: &str = include_str!("builtin_go_null_fields.json");

/// Whether Go writes `field` of the built-in type `definition` as `null` when it is empty
/// ([`GO_NULL_FIELDS`]).
pub(crate) fn go_writes_null(definition: &str, field: &str) -> bool {
    static CELL: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    CELL.get_or_init(|| serde_json::from_str(GO_NULL_FIELDS).unwrap_or_default())
        .get(definition)
        .is_some_and(|fields| fields.iter().any(|f| f == field))
}

/// How Go writes the bool, number and string fields of the built-in types: by definition
/// name, `omitempty` (left out when they hold their zero value) and `written` (always written,
/// so an object's zero value holds them); and its struct fields that are not pointers,
/// `structs`, with what Go writes for them when they hold their zero value. Written by
/// `scripts/update-openapi-extensions.sh` from the same Go types.
const GO_SCALAR_FIELDS: &str = include_str!("builtin_go_scalar_fields.json");

/// One type's scalar fields in [`GO_SCALAR_FIELDS`].
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct ScalarFields {
    /// Left out when zero.
    #[serde(default)]
    pub(crate) omitempty: Vec<String>,
    /// Always written, zero or not.
    #[serde(default)]
    pub(crate) written: Vec<String>,
    /// Struct fields that are not pointers, always written (`omitempty` does not leave a
    /// struct out), with their zero value as Go writes it: `{}` and its own always-written
    /// fields, or `null` for a time.
    #[serde(default)]
    pub(crate) structs: BTreeMap<String, serde_json::Value>,
}

/// The scalar fields of the built-in type `definition` ([`GO_SCALAR_FIELDS`]), if it has any.
pub(crate) fn go_scalar_fields(definition: &str) -> Option<&'static ScalarFields> {
    static CELL: OnceLock<HashMap<String, ScalarFields>> = OnceLock::new();
    CELL.get_or_init(|| serde_json::from_str(GO_SCALAR_FIELDS).unwrap_or_default())
        .get(definition)
}

/// Whether Go leaves `field` of the built-in type `definition` out when it holds its zero
/// value (`false`, `0`, `""`).
pub(crate) fn go_omits_zero(definition: &str, field: &str) -> bool {
    go_scalar_fields(definition).is_some_and(|f| f.omitempty.iter().any(|n| n == field))
}

/// Whether Go writes the bool, number or string `field` of the built-in type `definition`
/// even when it holds its zero value.
pub(crate) fn go_writes_zero(definition: &str, field: &str) -> bool {
    go_scalar_fields(definition).is_some_and(|f| f.written.iter().any(|n| n == field))
}

/// Adds [`OPENAPI_EXTENSIONS`] to k8s-openapi's schemas, which do not carry them: kubectl
/// reads `x-kubernetes-patch-merge-key` and `x-kubernetes-patch-strategy` from the served
/// documents to compute a strategic merge patch (without them a list of containers is
/// replaced whole, and `kubectl apply` of an unchanged Deployment reports it configured).
fn add_openapi_extensions(definitions: &mut serde_json::Map<String, Value>) {
    let extensions: serde_json::Map<String, Value> =
        serde_json::from_str(OPENAPI_EXTENSIONS).unwrap_or_default();
    for (name, properties) in extensions {
        let Some(Value::Object(def)) = definitions.get_mut(&name) else {
            continue;
        };
        for (property, ext) in properties.as_object().into_iter().flatten() {
            let target = if property.is_empty() {
                Some(&mut *def)
            } else {
                def.get_mut("properties")
                    .and_then(|p| p.get_mut(property))
                    .and_then(Value::as_object_mut)
            };
            if let (Some(target), Some(ext)) = (target, ext.as_object()) {
                target.extend(ext.clone());
            }
        }
    }
}

/// The name of `autoscaling/v1` `Scale`'s definition, which the scale subresource reads and
/// writes.
pub(crate) fn scale_definition() -> String {
    <k8s_openapi::api::autoscaling::v1::Scale as schemars::JsonSchema>::schema_name().into_owned()
}

/// The name of the definition of a pod's `binding` body (`v1` `Binding`), or with `eviction`
/// of its `eviction` body (`policy/v1` `Eviction`).
pub(crate) fn pod_subresource_definition(eviction: bool) -> String {
    use k8s_openapi::api::{core::v1::Binding, policy::v1::Eviction};
    use schemars::JsonSchema;
    if eviction {
        Eviction::schema_name().into_owned()
    } else {
        Binding::schema_name().into_owned()
    }
}

/// The definition name and the definitions for a built-in kind.
pub(crate) fn definition_of(b: Builtin) -> Option<&'static str> {
    builtin_schemas().names.get(&b).map(String::as_str)
}
