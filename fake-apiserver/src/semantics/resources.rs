//! The resources the fake serves: built-ins from k8s-openapi, generated kinds
//! ([`ResourceInfo`]), and custom resources registered by creating a CRD.

use kube_codegen_apimachinery::validation::NameRule;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{ApiError, ApiResult, FakeError, FieldError};
use crate::storage::object;
use kube_codegen_apimachinery::resource::ResourceInfo;

/// The built-in kinds whose server-side behaviour the fake knows (defaults, deletion, field
/// selectors). `None` on a [`Resource`] means a custom resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    Namespace,
    Pod,
    Service,
    Endpoints,
    ConfigMap,
    Secret,
    CoreEvent,
    ServiceAccount,
    Node,
    Deployment,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    HorizontalPodAutoscaler,
    PodDisruptionBudget,
    Ingress,
    NetworkPolicy,
    PriorityClass,
    EndpointSlice,
    Event,
    Lease,
    LeaseCandidate,
    Crd,
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

/// What a CRD says about one served version of a custom resource.
#[derive(Debug, Clone, Default)]
pub(crate) struct CustomInfo {
    /// `metadata.name` of the CRD.
    pub(crate) crd_name: String,
    /// `schema.openAPIV3Schema` of this version.
    pub(crate) schema: Option<Value>,
    /// `additionalPrinterColumns` of this version.
    pub(crate) printer_columns: Vec<Value>,
    /// Field selector labels from `selectableFields` (`spec.color`).
    pub(crate) selectable_fields: Vec<String>,
    /// The compiled `x-kubernetes-validations` of the schema, if it has any.
    pub(crate) cel: Option<crate::semantics::cel::Rules>,
    /// Whether the schema declares defaults (applied again when objects are read).
    pub(crate) has_defaults: bool,
    /// The scale subresource's paths, if it has one.
    pub(crate) scale: Option<ScalePaths>,
    /// The storage version's `openAPIV3Schema` when this version is not the storage version:
    /// an object written through this version is pruned by it too, as converting it to the
    /// storage version does.
    pub(crate) storage_schema: Option<Value>,
    /// The warning every request to this version gets when it is `deprecated`.
    pub(crate) deprecation_warning: Option<String>,
}

/// The JSON paths of a custom resource's scale subresource (`.spec.replicas`, …).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScalePaths {
    pub(crate) spec_replicas: String,
    pub(crate) status_replicas: String,
    pub(crate) label_selector: String,
}

/// One served resource at one version.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) list_kind: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) namespaced: bool,
    pub(crate) subresources: Vec<String>,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    pub(crate) builtin: Option<Builtin>,
    pub(crate) custom: Option<Arc<CustomInfo>>,
}

impl Resource {
    /// The 422 Invalid for `obj`, one of this resource's objects, when there are `errors`;
    /// `Ok` when there are none.
    pub(crate) fn invalid_if_any(&self, obj: &Value, errors: Vec<FieldError>) -> ApiResult<()> {
        ApiError::invalid_if_any(&self.group, &self.kind, object::name(obj), errors)
    }

    /// The `Warning` a request to this resource gets: a deprecated custom resource version's
    /// `deprecationWarning`, or `<group>/<version> <Kind> is deprecated`; for the one deprecated
    /// built-in kind served, what its Go type's lifecycle methods make kube-apiserver say.
    pub(crate) fn deprecation_warning(&self) -> Option<String> {
        if self.builtin == Some(Builtin::Endpoints) {
            return Some(
                "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
                    .into(),
            );
        }
        self.custom.as_ref()?.deprecation_warning.clone()
    }

    /// An object as read: with the schema's defaults applied when the CRD declares any.
    pub(crate) fn read_view<'a>(&self, obj: &'a Value) -> std::borrow::Cow<'a, Value> {
        match self.custom.as_ref() {
            Some(c) if c.has_defaults => {
                let mut v = obj.clone();
                if let Some(schema) = c.schema.as_ref() {
                    crate::semantics::schema::default_on_read(&mut v, schema);
                }
                std::borrow::Cow::Owned(v)
            }
            _ => std::borrow::Cow::Borrowed(obj),
        }
    }

    /// `group/version`, or `version` for the core group.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The storage key shared by all versions: `plural.group`.
    pub(crate) fn store_key(&self) -> String {
        crate::error::qualified(&self.group, &self.plural)
    }

    pub(crate) fn is_custom(&self) -> bool {
        self.builtin.is_none()
    }

    /// Whether the resource is one of kube-apiserver's virtual resources (the review kinds):
    /// computed on `POST` to the collection, never stored, with no other verb, no object path
    /// and no subresource, whatever a generated registry lists for it.
    pub(crate) fn is_create_only(&self) -> bool {
        crate::semantics::review::ReviewKind::of(self).is_some()
    }

    /// The subresources served: none for a create-only resource.
    pub(crate) fn served_subresources(&self) -> &[String] {
        if self.is_create_only() {
            &[]
        } else {
            &self.subresources
        }
    }

    /// The verbs discovery lists for the resource, in the order kube-apiserver's legacy
    /// (`aggregated` false) or aggregated discovery lists them.
    pub(crate) fn verbs(&self, aggregated: bool) -> &'static [&'static str] {
        if self.is_create_only() {
            return &["create"];
        }
        if self.builtin == Some(Builtin::Namespace) {
            return &[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ];
        }
        match (aggregated, self.is_custom()) {
            // The apiextensions server's order.
            (true, true) => &[
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ],
            _ => &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        }
    }

    pub(crate) fn has_status(&self) -> bool {
        self.subresources.iter().any(|s| s == "status")
    }

    /// `AllowCreateOnUpdate` of the type's REST strategy.
    pub(crate) fn allow_create_on_update(&self) -> bool {
        matches!(
            self.builtin,
            Some(Builtin::Endpoints | Builtin::Lease | Builtin::CoreEvent | Builtin::Event)
        )
    }

    /// `AllowUnconditionalUpdate`: a PUT without `metadata.resourceVersion` overwrites.
    pub(crate) fn allow_unconditional_update(&self) -> bool {
        !matches!(self.builtin, None | Some(Builtin::Crd | Builtin::Lease))
    }

    /// `ReturnDeletedObject`: DELETE answers with the object rather than a success Status.
    pub(crate) fn returns_deleted_object(&self) -> bool {
        matches!(
            self.builtin,
            Some(
                Builtin::Crd
                    | Builtin::Namespace
                    | Builtin::Pod
                    | Builtin::Service
                    | Builtin::ServiceAccount
            )
        )
    }

    /// Whether the type sets `metadata.generation` and bumps it on spec changes.
    pub(crate) fn tracks_generation(&self) -> bool {
        matches!(
            self.builtin,
            None | Some(
                Builtin::Crd
                    | Builtin::MutatingWebhookConfiguration
                    | Builtin::ValidatingWebhookConfiguration
                    | Builtin::ValidatingAdmissionPolicy
                    | Builtin::ValidatingAdmissionPolicyBinding
                    | Builtin::Deployment
                    | Builtin::ReplicaSet
                    | Builtin::ReplicationController
                    | Builtin::StatefulSet
                    | Builtin::DaemonSet
                    | Builtin::Job
                    | Builtin::Pod
                    | Builtin::CronJob
                    | Builtin::HorizontalPodAutoscaler
                    | Builtin::PodDisruptionBudget
                    | Builtin::Ingress
                    | Builtin::NetworkPolicy
                    | Builtin::EndpointSlice
            )
        )
    }

    /// Whether strategic merge patch is served (built-in types only, as in Kubernetes).
    pub(crate) fn supports_strategic_merge(&self) -> bool {
        self.builtin.is_some()
    }

    pub(crate) fn name_rule(&self) -> NameRule {
        match self.builtin {
            Some(Builtin::Namespace) => NameRule::Label1123,
            Some(Builtin::Service) => NameRule::Label1035,
            Some(Builtin::LeaseCandidate) => NameRule::ConfigMapKey,
            Some(
                Builtin::Role
                | Builtin::ClusterRole
                | Builtin::RoleBinding
                | Builtin::ClusterRoleBinding,
            ) => NameRule::PathSegment,
            _ => NameRule::Subdomain,
        }
    }

    /// Field selector labels this resource accepts beyond `metadata.name` and
    /// `metadata.namespace`, mapped to the JSON path they read.
    pub(crate) fn extra_field_labels(&self) -> Vec<(String, String)> {
        let same = |labels: &[&str]| -> Vec<(String, String)> {
            labels
                .iter()
                .map(|l| (l.to_string(), l.to_string()))
                .collect()
        };
        match self.builtin {
            Some(Builtin::Pod) => {
                let mut v = same(&[
                    "spec.nodeName",
                    "spec.restartPolicy",
                    "spec.schedulerName",
                    "spec.serviceAccountName",
                    "spec.hostNetwork",
                    "status.phase",
                    "status.podIP",
                    "status.podIPs",
                    "status.nominatedNodeName",
                ]);
                // Old v1 clients' name for the node.
                v.push(("spec.host".into(), "spec.nodeName".into()));
                v
            }
            Some(Builtin::Secret) => same(&["type"]),
            Some(Builtin::Namespace) => same(&["status.phase"]),
            Some(Builtin::Node) => same(&["spec.unschedulable"]),
            Some(Builtin::ReplicationController) => same(&["status.replicas"]),
            Some(Builtin::Service) => same(&["spec.clusterIP", "spec.type"]),
            // `status.successful` selects on the count of succeeded pods.
            Some(Builtin::Job) => vec![("status.successful".into(), "status.succeeded".into())],
            Some(Builtin::CoreEvent) => {
                let mut v = same(&[
                    "involvedObject.kind",
                    "involvedObject.namespace",
                    "involvedObject.name",
                    "involvedObject.uid",
                    "involvedObject.apiVersion",
                    "involvedObject.resourceVersion",
                    "involvedObject.fieldPath",
                    "reason",
                    "reportingComponent",
                    "type",
                ]);
                v.push(("source".into(), "source.component".into()));
                v
            }
            Some(Builtin::Event) => same(&[
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "regarding.resourceVersion",
                "regarding.fieldPath",
                "reason",
                "reportingController",
                "type",
            ]),
            None => self
                .custom
                .as_ref()
                .map(|c| {
                    c.selectable_fields
                        .iter()
                        .map(|f| (f.clone(), f.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The error for an unsupported field selector label, worded as the type's conversion
    /// function words it.
    pub(crate) fn field_label_error(&self, label: &str) -> String {
        match self.builtin {
            // The kinds with their own label conversion in their API group's scheme.
            None
            | Some(
                Builtin::Pod
                | Builtin::Node
                | Builtin::CoreEvent
                | Builtin::Event
                | Builtin::Secret
                | Builtin::Namespace
                | Builtin::Service
                | Builtin::ReplicationController,
            ) => format!("field label not supported: {label}"),
            Some(Builtin::Job) => format!(
                "field label {} not supported for {}",
                crate::error::go_quote(label),
                self.kind
            ),
            _ => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                crate::error::go_quote(label)
            ),
        }
    }

    /// From a generated registry entry.
    pub(crate) fn from_info(info: &ResourceInfo) -> Result<Self, FakeError> {
        if info.plural.is_empty() || info.kind.is_empty() || info.version.is_empty() {
            return Err(FakeError::InvalidResource(format!(
                "{info:?}: kind, version and plural are required"
            )));
        }
        let builtin = builtin_by_gvk(info.group, info.version, info.kind);
        Ok(Resource {
            group: info.group.to_string(),
            version: info.version.to_string(),
            kind: info.kind.to_string(),
            list_kind: if info.list_kind.is_empty() {
                format!("{}List", info.kind)
            } else {
                info.list_kind.to_string()
            },
            plural: info.plural.to_string(),
            singular: if info.singular.is_empty() {
                info.kind.to_lowercase()
            } else {
                info.singular.to_string()
            },
            namespaced: info.namespaced,
            subresources: info.subresources.iter().map(|s| s.to_string()).collect(),
            short_names: info.short_names.iter().map(|s| s.to_string()).collect(),
            categories: Vec::new(),
            builtin,
            custom: None,
        })
    }
}

fn builtin_by_gvk(group: &str, version: &str, kind: &str) -> Option<Builtin> {
    builtins()
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
        .and_then(|r| r.builtin)
}

fn builtin<K: k8s_openapi::Resource>(
    b: Builtin,
    namespaced: bool,
    subresources: &[&str],
    short_names: &[&str],
    all: bool,
) -> Resource {
    Resource {
        group: K::GROUP.to_string(),
        version: K::VERSION.to_string(),
        kind: K::KIND.to_string(),
        list_kind: format!("{}List", K::KIND),
        plural: K::URL_PATH_SEGMENT.to_string(),
        singular: K::KIND.to_lowercase(),
        namespaced,
        subresources: subresources.iter().map(|s| s.to_string()).collect(),
        short_names: short_names.iter().map(|s| s.to_string()).collect(),
        categories: if all {
            vec!["all".to_string()]
        } else {
            Vec::new()
        },
        builtin: Some(b),
        custom: None,
    }
}

/// The built-in resources every fake serves.
pub(crate) fn builtins() -> Vec<Resource> {
    use k8s_openapi::api::{
        admissionregistration, apps, autoscaling, batch, coordination, core, discovery, events,
        networking, policy, rbac, scheduling,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    vec![
        builtin::<core::v1::Namespace>(Builtin::Namespace, false, &["status"], &["ns"], false),
        builtin::<core::v1::Pod>(Builtin::Pod, true, &["status"], &["po"], true),
        builtin::<core::v1::Service>(Builtin::Service, true, &["status"], &["svc"], true),
        builtin::<core::v1::Endpoints>(Builtin::Endpoints, true, &[], &["ep"], false),
        builtin::<core::v1::ConfigMap>(Builtin::ConfigMap, true, &[], &["cm"], false),
        builtin::<core::v1::Secret>(Builtin::Secret, true, &[], &[], false),
        builtin::<core::v1::Event>(Builtin::CoreEvent, true, &[], &["ev"], false),
        builtin::<core::v1::ServiceAccount>(Builtin::ServiceAccount, true, &[], &["sa"], false),
        builtin::<core::v1::Node>(Builtin::Node, false, &["status"], &["no"], false),
        builtin::<core::v1::ReplicationController>(
            Builtin::ReplicationController,
            true,
            &["status", "scale"],
            &["rc"],
            true,
        ),
        builtin::<apps::v1::Deployment>(
            Builtin::Deployment,
            true,
            &["status", "scale"],
            &["deploy"],
            true,
        ),
        builtin::<apps::v1::ReplicaSet>(
            Builtin::ReplicaSet,
            true,
            &["status", "scale"],
            &["rs"],
            true,
        ),
        builtin::<apps::v1::StatefulSet>(
            Builtin::StatefulSet,
            true,
            &["status", "scale"],
            &["sts"],
            true,
        ),
        builtin::<apps::v1::DaemonSet>(Builtin::DaemonSet, true, &["status"], &["ds"], true),
        builtin::<batch::v1::Job>(Builtin::Job, true, &["status"], &[], true),
        builtin::<batch::v1::CronJob>(Builtin::CronJob, true, &["status"], &["cj"], true),
        builtin::<autoscaling::v2::HorizontalPodAutoscaler>(
            Builtin::HorizontalPodAutoscaler,
            true,
            &["status"],
            &["hpa"],
            true,
        ),
        builtin::<policy::v1::PodDisruptionBudget>(
            Builtin::PodDisruptionBudget,
            true,
            &["status"],
            &["pdb"],
            false,
        ),
        builtin::<networking::v1::Ingress>(Builtin::Ingress, true, &["status"], &["ing"], false),
        builtin::<networking::v1::NetworkPolicy>(
            Builtin::NetworkPolicy,
            true,
            &[],
            &["netpol"],
            false,
        ),
        builtin::<scheduling::v1::PriorityClass>(
            Builtin::PriorityClass,
            false,
            &[],
            &["pc"],
            false,
        ),
        builtin::<discovery::v1::EndpointSlice>(Builtin::EndpointSlice, true, &[], &[], false),
        builtin::<events::v1::Event>(Builtin::Event, true, &[], &["ev"], false),
        builtin::<coordination::v1::Lease>(Builtin::Lease, true, &[], &[], false),
        builtin::<apiext::CustomResourceDefinition>(
            Builtin::Crd,
            false,
            &["status"],
            &["crd", "crds"],
            false,
        ),
        builtin::<admissionregistration::v1::MutatingWebhookConfiguration>(
            Builtin::MutatingWebhookConfiguration,
            false,
            &[],
            &[],
            false,
        ),
        builtin::<admissionregistration::v1::ValidatingWebhookConfiguration>(
            Builtin::ValidatingWebhookConfiguration,
            false,
            &[],
            &[],
            false,
        ),
        builtin::<admissionregistration::v1::ValidatingAdmissionPolicy>(
            Builtin::ValidatingAdmissionPolicy,
            false,
            &["status"],
            &[],
            false,
        ),
        builtin::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(
            Builtin::ValidatingAdmissionPolicyBinding,
            false,
            &[],
            &[],
            false,
        ),
        builtin::<rbac::v1::Role>(Builtin::Role, true, &[], &[], false),
        builtin::<rbac::v1::ClusterRole>(Builtin::ClusterRole, false, &[], &[], false),
        builtin::<rbac::v1::RoleBinding>(Builtin::RoleBinding, true, &[], &[], false),
        builtin::<rbac::v1::ClusterRoleBinding>(
            Builtin::ClusterRoleBinding,
            false,
            &[],
            &[],
            false,
        ),
    ]
}

/// `coordination.k8s.io/v1beta1` `leasecandidates`: served only with coordinated leader
/// election (kube-apiserver needs `--runtime-config=coordination.k8s.io/v1beta1=true`).
pub(crate) fn lease_candidates() -> Resource {
    builtin::<k8s_openapi::api::coordination::v1beta1::LeaseCandidate>(
        Builtin::LeaseCandidate,
        true,
        &[],
        &[],
        false,
    )
}

/// Groups in the order the real server lists them in discovery; other groups follow sorted.
const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// Whether `group` is one the API server itself serves (core or a built-in group): those
/// answer unknown paths with a JSON `Status`, other groups with a plain-text
/// `404 page not found`.
pub(crate) fn is_builtin_group(group: &str) -> bool {
    group.is_empty() || GROUP_ORDER.contains(&group) || builtins().iter().any(|r| r.group == group)
}

/// The etcd key of an object, as `StorageError`s print it.
pub(crate) fn storage_key(res: &Resource, namespace: &str, name: &str) -> String {
    let prefix = if res.is_custom() {
        format!("/registry/{}/{}", res.group, res.plural)
    } else {
        format!("/registry/{}", res.plural)
    };
    if namespace.is_empty() {
        format!("{prefix}/{name}")
    } else {
        format!("{prefix}/{namespace}/{name}")
    }
}

/// Compares versions by Kubernetes' priority (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1`
/// > anything else, which sorts alphabetically): `Less` means higher priority.
pub(crate) fn version_priority(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: u64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (level, n) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        Some((major, level, n.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some((ma, la, na)), Some((mb, lb, nb))) => {
            // GA first, then beta, then alpha; within a level, higher numbers first.
            lb.cmp(&la).then(mb.cmp(&ma)).then(nb.cmp(&na))
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// All served resources, by group, version and plural.
#[derive(Debug, Default, Clone)]
pub(crate) struct Registry {
    by_path: BTreeMap<(String, String, String), Arc<Resource>>,
    /// Bumped on every change, for caches of documents derived from the registry.
    generation: u64,
}

impl Registry {
    /// A number that changes whenever the served resources do.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn insert(&mut self, r: Resource) {
        self.generation += 1;
        self.by_path.insert(
            (r.group.clone(), r.version.clone(), r.plural.clone()),
            Arc::new(r),
        );
    }

    pub(crate) fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// The resource serving `kind` at `apiVersion`.
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<Resource>> {
        let (group, version) = split_api_version(api_version);
        self.by_path
            .values()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    /// Any served version of `plural.group`.
    pub(crate) fn any_version(&self, group: &str, plural: &str) -> Option<Arc<Resource>> {
        self.versions_of(group, plural).into_iter().next()
    }

    /// All served versions of `plural.group`, highest priority first.
    pub(crate) fn versions_of(&self, group: &str, plural: &str) -> Vec<Arc<Resource>> {
        let mut v: Vec<Arc<Resource>> = self
            .by_path
            .values()
            .filter(|r| r.group == group && r.plural == plural)
            .cloned()
            .collect();
        v.sort_by(|a, b| version_priority(&a.version, &b.version));
        v
    }

    /// Removes every version of `plural.group`.
    pub(crate) fn remove_all_versions(&mut self, group: &str, plural: &str) {
        self.generation += 1;
        self.by_path
            .retain(|(g, _, p), _| !(g == group && p == plural));
    }

    /// Served groups in discovery order, each with its versions by priority.
    pub(crate) fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (g, v, _) in self.by_path.keys() {
            let versions = groups.entry(g.clone()).or_default();
            if !versions.contains(v) {
                versions.push(v.clone());
            }
        }
        let mut out: Vec<(String, Vec<String>)> = groups
            .into_iter()
            .map(|(g, mut vs)| {
                vs.sort_by(|a, b| version_priority(a, b));
                (g, vs)
            })
            .collect();
        out.sort_by(|(a, _), (b, _)| {
            let pa = GROUP_ORDER.iter().position(|g| g == a);
            let pb = GROUP_ORDER.iter().position(|g| g == b);
            match (pa, pb) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => a.cmp(b),
            }
        });
        out
    }

    /// The resources of one group-version, sorted by plural.
    pub(crate) fn in_group_version(&self, group: &str, version: &str) -> Vec<Arc<Resource>> {
        self.by_path
            .values()
            .filter(|r| r.group == group && r.version == version)
            .cloned()
            .collect()
    }

    /// Every served resource.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<Resource>> {
        self.by_path.values()
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority_is_kubernetes_order() {
        let mut v = vec![
            "v1alpha1", "v2beta1", "v1", "foo", "v1beta2", "v2", "v1beta1", "v10",
        ];
        v.sort_by(|a, b| version_priority(a, b));
        assert_eq!(
            v,
            vec![
                "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }

    /// A Job's `status.successful` selects on its count of succeeded pods.
    #[test]
    fn job_successful_reads_succeeded() {
        let all = builtins();
        let labels = all
            .iter()
            .find(|r| r.kind == "Job")
            .map(Resource::extra_field_labels)
            .unwrap_or_default();
        assert_eq!(
            labels,
            vec![(
                "status.successful".to_string(),
                "status.succeeded".to_string()
            )]
        );
    }

    #[test]
    fn builtins_carry_their_gvr() {
        let all = builtins();
        let cm = all
            .iter()
            .find(|r| r.kind == "ConfigMap")
            .map(|r| (r.group.as_str(), r.plural.as_str()));
        assert_eq!(cm, Some(("", "configmaps")));
        let crd = all.iter().find(|r| r.builtin == Some(Builtin::Crd));
        assert_eq!(
            crd.map(|r| r.store_key()),
            Some("customresourcedefinitions.apiextensions.k8s.io".into())
        );
    }
}
