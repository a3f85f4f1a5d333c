//! The built-in clientset (`kube_codegen_kubernetes`) against a real kube-apiserver v1.37.1 and
//! against its fake: for every built-in kind the server serves, a round trip through the
//! **generated typed client** — create, get, list, watch, delete (reviews: create; component
//! statuses: get and list) — table-driven over the discovery document, so that a served kind
//! without a typed client fails the test (`tests::builtin_objects::EXEMPT` lists the one
//! exception and why). The same table runs against the fake clientset
//! (`client::clientset::versioned::fake::Clientset`, every built-in kind registered).
//!
//! `expansions_against_a_real_apiserver` exercises the hand-written and tag-generated methods:
//! `bind`, `evict` (pods and policy/v1 evictions), `create_token`, `get_scale`/`update_scale`,
//! `rest_client()`. **Pod logs and exec are exempt where no kubelet exists**: a bare
//! kube-apiserver has no nodes, so no container ever runs — `get_logs` answers with an empty
//! log for an unscheduled pod and 404 for one bound to a node that does not exist (both
//! asserted), `stream_logs` with `follow` would wait for a container that never starts, and
//! exec/attach/port-forward have nothing to connect to; their request shapes are checked in
//! `builtin_requests.rs`.
//!
//! `registry_facts_match_discovery`: the generated registries (`RESOURCES`, from the input tree's
//! tags and kube-apiserver's REST storage) describe every served kind as the server does: kind,
//! scope, short names.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};
use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod, ServiceAccount};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    DeleteParams, GetParams, ListParams, LogParams, ObjectList, PostParams, WatchEvent, WatchParams,
};
use kube_codegen_kubernetes::Clientset;
use kube_codegen_kubernetes::apis::*;
use kube_codegen_runtime::api_status::is_not_found;
use kube_codegen_runtime::discovery::{DiscoveryClient, split_group_version};
use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::builtin_objects::{EXEMPT, Support, template};
use tests::e2e::{create_namespace, init_tracing, run_id};
use tokio::sync::OnceCell;

const LABEL: &str = "kube-codegen-round-trip=yes";
/// The namespace the fake's round trips use (the fake's differences are keyed on it).
const FAKE_NAMESPACE: &str = "rt-fake";
const WAIT: Duration = Duration::from_secs(30);

type Outcome = Result<String, String>;
type BoxFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;
type Run = for<'a> fn(&'a Clientset, &'a str, Value, Support) -> BoxFuture<'a>;

/// One typed client of the table.
struct Entry {
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    run: Run,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Waits on a watch for an event of `types` about `name`.
async fn event_for<K: kube::Resource>(
    watch: &mut kube_codegen_runtime::client::WatchStream<K>,
    types: &[&str],
    name: &str,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let next = tokio::time::timeout_at(deadline, watch.next())
            .await
            .map_err(|_| format!("no {types:?} event for {name} within {WAIT:?}"))?;
        let (t, obj) = match next {
            Some(Ok(WatchEvent::Added(o))) => ("ADDED", o),
            Some(Ok(WatchEvent::Modified(o))) => ("MODIFIED", o),
            Some(Ok(WatchEvent::Deleted(o))) => ("DELETED", o),
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            Some(Ok(WatchEvent::Error(e))) => return Err(format!("watch error: {e:?}")),
            Some(Err(e)) => return Err(format!("watch: {e}")),
            None => {
                return Err(format!(
                    "the watch ended before a {types:?} event for {name}"
                ));
            }
        };
        if types.contains(&t) && obj.meta().name.as_deref() == Some(name) {
            return Ok(());
        }
    }
}

/// The round trip of a client with every verb; `$client` is the typed client expression.
macro_rules! every_verb {
    ($client:expr, $obj:ident, $support:ident, $ty:ty) => {{
        let client = $client;
        let obj: $ty = serde_json::from_value($obj).map_err(|e| format!("the template: {e}"))?;
        match $support {
            Support::ReadOnly => {
                let list = client.list(&ListParams::default()).await.map_err(err)?;
                if let Some(name) = list.items.first().and_then(|o| o.metadata.name.clone()) {
                    client
                        .get(&name, &GetParams::default())
                        .await
                        .map_err(err)?;
                }
                Ok(format!(
                    "read-only: listed {} and got one",
                    list.items.len()
                ))
            }
            Support::CreateOnly => {
                Err("the template says create-only, the client has every verb".to_string())
            }
            Support::Full => {
                let lp = ListParams::default().labels(LABEL);
                let before = client.list(&lp).await.map_err(err)?;
                let rv = before.metadata.resource_version.clone().unwrap_or_default();
                let mut watch = client
                    .watch(&WatchParams::default().labels(LABEL).timeout(120), &rv)
                    .await
                    .map_err(err)?;
                let created = client
                    .create(&obj, &PostParams::default())
                    .await
                    .map_err(err)?;
                let name = created
                    .metadata
                    .name
                    .clone()
                    .ok_or("created without a name")?;
                let got = client
                    .get(&name, &GetParams::default())
                    .await
                    .map_err(err)?;
                if got.metadata.uid != created.metadata.uid {
                    return Err(format!("get {name}: another object"));
                }
                let listed = client.list(&lp).await.map_err(err)?;
                if !listed
                    .items
                    .iter()
                    .any(|o| o.metadata.name.as_deref() == Some(name.as_str()))
                {
                    return Err(format!("list does not show {name}"));
                }
                event_for(&mut watch, &["ADDED"], &name).await?;
                client
                    .delete(&name, &DeleteParams::default())
                    .await
                    .map_err(err)?;
                // Gone, or terminating behind finalizers that a bare kube-apiserver has no
                // controller to remove (namespaces, volume protection).
                let after = match client.get(&name, &GetParams::default()).await {
                    Err(e) if is_not_found(&e) => "deleted",
                    Ok(o) if o.metadata.deletion_timestamp.is_some() => "terminating",
                    Ok(_) => return Err(format!("{name} is still there after delete")),
                    Err(e) => return Err(err(e)),
                };
                event_for(&mut watch, &["DELETED", "MODIFIED"], &name).await?;
                Ok(format!("create/get/list/watch/delete: {after}"))
            }
        }
    }};
}

macro_rules! full {
    (ns, $g:literal, $v:literal, $r:literal, $gv:ident, $acc:ident, $($ty:ident)::+) => {{
        fn run<'a>(cs: &'a Clientset, ns: &'a str, obj: Value, support: Support) -> BoxFuture<'a> {
            Box::pin(async move { every_verb!(cs.$gv().$acc(ns), obj, support, $($ty)::+) })
        }
        Entry { group: $g, version: $v, resource: $r, run }
    }};
    (cl, $g:literal, $v:literal, $r:literal, $gv:ident, $acc:ident, $($ty:ident)::+) => {{
        fn run<'a>(cs: &'a Clientset, _ns: &'a str, obj: Value, support: Support) -> BoxFuture<'a> {
            Box::pin(async move { every_verb!(cs.$gv().$acc(), obj, support, $($ty)::+) })
        }
        Entry { group: $g, version: $v, resource: $r, run }
    }};
}

/// A `+genclient:noVerbs` client (policy/v1 `Eviction`): nothing to round-trip; its `evict`
/// expansion is exercised by `expansions_against_a_real_apiserver`.
macro_rules! no_verbs {
    (ns, $g:literal, $v:literal, $r:literal, $gv:ident, $acc:ident, $($ty:ident)::+) => {{
        fn run<'a>(
            cs: &'a Clientset,
            ns: &'a str,
            _obj: Value,
            _support: Support,
        ) -> BoxFuture<'a> {
            Box::pin(async move {
                let client = cs.$gv().$acc(ns);
                Ok(format!(
                    "no verbs (+genclient:noVerbs): {:?}",
                    client.namespace()
                ))
            })
        }
        Entry {
            group: $g,
            version: $v,
            resource: $r,
            run,
        }
    }};
}

/// A client with only `create` (reviews: the answer is computed, nothing is stored).
macro_rules! create_only {
    ($scope:ident, $g:literal, $v:literal, $r:literal, $gv:ident, $acc:ident, $($ty:ident)::+) => {{
        fn run<'a>(cs: &'a Clientset, ns: &'a str, obj: Value, support: Support) -> BoxFuture<'a> {
            Box::pin(async move {
                if support != Support::CreateOnly {
                    return Err("the client has only create".to_string());
                }
                let obj: $($ty)::+ = serde_json::from_value(obj).map_err(|e| format!("the template: {e}"))?;
                let answer = create_only!(@client $scope, cs, ns, $gv, $acc)
                    .create(&obj, &PostParams::default())
                    .await
                    .map_err(err)?;
                let status = serde_json::to_value(&answer).map_err(err)?["status"].clone();
                // kube-apiserver (and the fake) compute the answer.
                if status.is_null() {
                    return Err("the review has no status".into());
                }
                Ok(format!("create: status {status}"))
            })
        }
        Entry { group: $g, version: $v, resource: $r, run }
    }};
    (@client ns, $cs:ident, $ns:ident, $gv:ident, $acc:ident) => { $cs.$gv().$acc($ns) };
    (@client cl, $cs:ident, $ns:ident, $gv:ident, $acc:ident) => {{ let _ = $ns; $cs.$gv().$acc() }};
}

/// The typed client of every kind of the built-in clientset (kube-apiserver v1.37.1 serves the
/// GA ones by default; the fake serves them all).
fn table() -> Vec<Entry> {
    vec![
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "mutatingadmissionpolicies",
            admissionregistration_v1,
            mutating_admission_policies,
            admissionregistration::v1::MutatingAdmissionPolicy
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "mutatingadmissionpolicybindings",
            admissionregistration_v1,
            mutating_admission_policy_bindings,
            admissionregistration::v1::MutatingAdmissionPolicyBinding
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            admissionregistration_v1,
            mutating_webhook_configurations,
            admissionregistration::v1::MutatingWebhookConfiguration
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicies",
            admissionregistration_v1,
            validating_admission_policies,
            admissionregistration::v1::ValidatingAdmissionPolicy
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicybindings",
            admissionregistration_v1,
            validating_admission_policy_bindings,
            admissionregistration::v1::ValidatingAdmissionPolicyBinding
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            admissionregistration_v1,
            validating_webhook_configurations,
            admissionregistration::v1::ValidatingWebhookConfiguration
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1alpha1",
            "mutatingadmissionpolicies",
            admissionregistration_v1alpha1,
            mutating_admission_policies,
            admissionregistration::v1alpha1::MutatingAdmissionPolicy
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1alpha1",
            "mutatingadmissionpolicybindings",
            admissionregistration_v1alpha1,
            mutating_admission_policy_bindings,
            admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1beta1",
            "mutatingadmissionpolicies",
            admissionregistration_v1beta1,
            mutating_admission_policies,
            admissionregistration::v1beta1::MutatingAdmissionPolicy
        ),
        full!(
            cl,
            "admissionregistration.k8s.io",
            "v1beta1",
            "mutatingadmissionpolicybindings",
            admissionregistration_v1beta1,
            mutating_admission_policy_bindings,
            admissionregistration::v1beta1::MutatingAdmissionPolicyBinding
        ),
        full!(
            cl,
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            apiextensions_v1,
            custom_resource_definitions,
            apiextensions::v1::CustomResourceDefinition
        ),
        full!(
            cl,
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            apiregistration_v1,
            api_services,
            apiregistration::v1::APIService
        ),
        full!(
            cl,
            "internal.apiserver.k8s.io",
            "v1alpha1",
            "storageversions",
            internal_v1alpha1,
            storage_versions,
            apiserverinternal::v1alpha1::StorageVersion
        ),
        full!(
            ns,
            "apps",
            "v1",
            "controllerrevisions",
            apps_v1,
            controller_revisions,
            apps::v1::ControllerRevision
        ),
        full!(
            ns,
            "apps",
            "v1",
            "daemonsets",
            apps_v1,
            daemon_sets,
            apps::v1::DaemonSet
        ),
        full!(
            ns,
            "apps",
            "v1",
            "deployments",
            apps_v1,
            deployments,
            apps::v1::Deployment
        ),
        full!(
            ns,
            "apps",
            "v1",
            "replicasets",
            apps_v1,
            replica_sets,
            apps::v1::ReplicaSet
        ),
        full!(
            ns,
            "apps",
            "v1",
            "statefulsets",
            apps_v1,
            stateful_sets,
            apps::v1::StatefulSet
        ),
        create_only!(
            cl,
            "authentication.k8s.io",
            "v1",
            "selfsubjectreviews",
            authentication_v1,
            self_subject_reviews,
            authentication::v1::SelfSubjectReview
        ),
        create_only!(
            cl,
            "authentication.k8s.io",
            "v1",
            "tokenreviews",
            authentication_v1,
            token_reviews,
            authentication::v1::TokenReview
        ),
        create_only!(
            ns,
            "authorization.k8s.io",
            "v1",
            "localsubjectaccessreviews",
            authorization_v1,
            local_subject_access_reviews,
            authorization::v1::LocalSubjectAccessReview
        ),
        create_only!(
            cl,
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
            authorization_v1,
            self_subject_access_reviews,
            authorization::v1::SelfSubjectAccessReview
        ),
        create_only!(
            cl,
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
            authorization_v1,
            self_subject_rules_reviews,
            authorization::v1::SelfSubjectRulesReview
        ),
        create_only!(
            cl,
            "authorization.k8s.io",
            "v1",
            "subjectaccessreviews",
            authorization_v1,
            subject_access_reviews,
            authorization::v1::SubjectAccessReview
        ),
        full!(
            ns,
            "autoscaling",
            "v1",
            "horizontalpodautoscalers",
            autoscaling_v1,
            horizontal_pod_autoscalers,
            autoscaling::v1::HorizontalPodAutoscaler
        ),
        full!(
            ns,
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            autoscaling_v2,
            horizontal_pod_autoscalers,
            autoscaling::v2::HorizontalPodAutoscaler
        ),
        full!(
            ns,
            "batch",
            "v1",
            "cronjobs",
            batch_v1,
            cron_jobs,
            batch::v1::CronJob
        ),
        full!(ns, "batch", "v1", "jobs", batch_v1, jobs, batch::v1::Job),
        full!(
            cl,
            "certificates.k8s.io",
            "v1",
            "certificatesigningrequests",
            certificates_v1,
            certificate_signing_requests,
            certificates::v1::CertificateSigningRequest
        ),
        full!(
            cl,
            "certificates.k8s.io",
            "v1",
            "clustertrustbundles",
            certificates_v1,
            cluster_trust_bundles,
            certificates::v1::ClusterTrustBundle
        ),
        full!(
            ns,
            "certificates.k8s.io",
            "v1",
            "podcertificaterequests",
            certificates_v1,
            pod_certificate_requests,
            certificates::v1::PodCertificateRequest
        ),
        full!(
            cl,
            "certificates.k8s.io",
            "v1beta1",
            "clustertrustbundles",
            certificates_v1beta1,
            cluster_trust_bundles,
            certificates::v1beta1::ClusterTrustBundle
        ),
        full!(
            ns,
            "certificates.k8s.io",
            "v1beta1",
            "podcertificaterequests",
            certificates_v1beta1,
            pod_certificate_requests,
            certificates::v1beta1::PodCertificateRequest
        ),
        full!(
            ns,
            "coordination.k8s.io",
            "v1",
            "leases",
            coordination_v1,
            leases,
            coordination::v1::Lease
        ),
        full!(
            ns,
            "coordination.k8s.io",
            "v1alpha2",
            "leasecandidates",
            coordination_v1alpha2,
            lease_candidates,
            coordination::v1alpha2::LeaseCandidate
        ),
        full!(
            ns,
            "coordination.k8s.io",
            "v1beta1",
            "leasecandidates",
            coordination_v1beta1,
            lease_candidates,
            coordination::v1beta1::LeaseCandidate
        ),
        full!(
            cl,
            "",
            "v1",
            "componentstatuses",
            core_v1,
            component_statuses,
            core::v1::ComponentStatus
        ),
        full!(
            ns,
            "",
            "v1",
            "configmaps",
            core_v1,
            config_maps,
            core::v1::ConfigMap
        ),
        full!(
            ns,
            "",
            "v1",
            "endpoints",
            core_v1,
            endpoints,
            core::v1::Endpoints
        ),
        full!(ns, "", "v1", "events", core_v1, events, core::v1::Event),
        full!(
            ns,
            "",
            "v1",
            "limitranges",
            core_v1,
            limit_ranges,
            core::v1::LimitRange
        ),
        full!(
            cl,
            "",
            "v1",
            "namespaces",
            core_v1,
            namespaces,
            core::v1::Namespace
        ),
        full!(cl, "", "v1", "nodes", core_v1, nodes, core::v1::Node),
        full!(
            cl,
            "",
            "v1",
            "persistentvolumes",
            core_v1,
            persistent_volumes,
            core::v1::PersistentVolume
        ),
        full!(
            ns,
            "",
            "v1",
            "persistentvolumeclaims",
            core_v1,
            persistent_volume_claims,
            core::v1::PersistentVolumeClaim
        ),
        full!(ns, "", "v1", "pods", core_v1, pods, core::v1::Pod),
        full!(
            ns,
            "",
            "v1",
            "podtemplates",
            core_v1,
            pod_templates,
            core::v1::PodTemplate
        ),
        full!(
            ns,
            "",
            "v1",
            "replicationcontrollers",
            core_v1,
            replication_controllers,
            core::v1::ReplicationController
        ),
        full!(
            ns,
            "",
            "v1",
            "resourcequotas",
            core_v1,
            resource_quotas,
            core::v1::ResourceQuota
        ),
        full!(ns, "", "v1", "secrets", core_v1, secrets, core::v1::Secret),
        full!(
            ns,
            "",
            "v1",
            "services",
            core_v1,
            services,
            core::v1::Service
        ),
        full!(
            ns,
            "",
            "v1",
            "serviceaccounts",
            core_v1,
            service_accounts,
            core::v1::ServiceAccount
        ),
        full!(
            ns,
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            discovery_v1,
            endpoint_slices,
            discovery::v1::EndpointSlice
        ),
        full!(
            ns,
            "events.k8s.io",
            "v1",
            "events",
            events_v1,
            events,
            events::v1::Event
        ),
        full!(
            cl,
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "flowschemas",
            flowcontrol_v1,
            flow_schemas,
            flowcontrol::v1::FlowSchema
        ),
        full!(
            cl,
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "prioritylevelconfigurations",
            flowcontrol_v1,
            priority_level_configurations,
            flowcontrol::v1::PriorityLevelConfiguration
        ),
        full!(
            ns,
            "lifecycle.k8s.io",
            "v1alpha1",
            "evictions",
            lifecycle_v1alpha1,
            evictions,
            lifecycle::v1alpha1::Eviction
        ),
        full!(
            ns,
            "lifecycle.k8s.io",
            "v1alpha1",
            "evictionrequests",
            lifecycle_v1alpha1,
            eviction_requests,
            lifecycle::v1alpha1::EvictionRequest
        ),
        full!(
            cl,
            "networking.k8s.io",
            "v1",
            "ipaddresses",
            networking_v1,
            ip_addresses,
            networking::v1::IPAddress
        ),
        full!(
            ns,
            "networking.k8s.io",
            "v1",
            "ingresses",
            networking_v1,
            ingresses,
            networking::v1::Ingress
        ),
        full!(
            cl,
            "networking.k8s.io",
            "v1",
            "ingressclasses",
            networking_v1,
            ingress_classes,
            networking::v1::IngressClass
        ),
        full!(
            ns,
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            networking_v1,
            network_policies,
            networking::v1::NetworkPolicy
        ),
        full!(
            cl,
            "networking.k8s.io",
            "v1",
            "servicecidrs",
            networking_v1,
            service_cidrs,
            networking::v1::ServiceCIDR
        ),
        full!(
            cl,
            "node.k8s.io",
            "v1",
            "runtimeclasses",
            node_v1,
            runtime_classes,
            node::v1::RuntimeClass
        ),
        no_verbs!(
            ns,
            "policy",
            "v1",
            "evictions",
            policy_v1,
            evictions,
            policy::v1::Eviction
        ),
        full!(
            ns,
            "policy",
            "v1",
            "poddisruptionbudgets",
            policy_v1,
            pod_disruption_budgets,
            policy::v1::PodDisruptionBudget
        ),
        full!(
            cl,
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            rbac_v1,
            cluster_roles,
            rbac::v1::ClusterRole
        ),
        full!(
            cl,
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            rbac_v1,
            cluster_role_bindings,
            rbac::v1::ClusterRoleBinding
        ),
        full!(
            ns,
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            rbac_v1,
            roles,
            rbac::v1::Role
        ),
        full!(
            ns,
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            rbac_v1,
            role_bindings,
            rbac::v1::RoleBinding
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1",
            "deviceclasses",
            resource_v1,
            device_classes,
            resource::v1::DeviceClass
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1",
            "devicetaintrules",
            resource_v1,
            device_taint_rules,
            resource::v1::DeviceTaintRule
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1",
            "resourceclaims",
            resource_v1,
            resource_claims,
            resource::v1::ResourceClaim
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1",
            "resourceclaimtemplates",
            resource_v1,
            resource_claim_templates,
            resource::v1::ResourceClaimTemplate
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1",
            "resourceslices",
            resource_v1,
            resource_slices,
            resource::v1::ResourceSlice
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1alpha3",
            "devicetaintrules",
            resource_v1alpha3,
            device_taint_rules,
            resource::v1alpha3::DeviceTaintRule
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1alpha3",
            "resourcepoolstatusrequests",
            resource_v1alpha3,
            resource_pool_status_requests,
            resource::v1alpha3::ResourcePoolStatusRequest
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1beta1",
            "deviceclasses",
            resource_v1beta1,
            device_classes,
            resource::v1beta1::DeviceClass
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1beta1",
            "resourceclaims",
            resource_v1beta1,
            resource_claims,
            resource::v1beta1::ResourceClaim
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1beta1",
            "resourceclaimtemplates",
            resource_v1beta1,
            resource_claim_templates,
            resource::v1beta1::ResourceClaimTemplate
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1beta1",
            "resourceslices",
            resource_v1beta1,
            resource_slices,
            resource::v1beta1::ResourceSlice
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1beta2",
            "deviceclasses",
            resource_v1beta2,
            device_classes,
            resource::v1beta2::DeviceClass
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1beta2",
            "devicetaintrules",
            resource_v1beta2,
            device_taint_rules,
            resource::v1beta2::DeviceTaintRule
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1beta2",
            "resourceclaims",
            resource_v1beta2,
            resource_claims,
            resource::v1beta2::ResourceClaim
        ),
        full!(
            ns,
            "resource.k8s.io",
            "v1beta2",
            "resourceclaimtemplates",
            resource_v1beta2,
            resource_claim_templates,
            resource::v1beta2::ResourceClaimTemplate
        ),
        full!(
            cl,
            "resource.k8s.io",
            "v1beta2",
            "resourceslices",
            resource_v1beta2,
            resource_slices,
            resource::v1beta2::ResourceSlice
        ),
        full!(
            cl,
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            scheduling_v1,
            priority_classes,
            scheduling::v1::PriorityClass
        ),
        full!(
            ns,
            "scheduling.k8s.io",
            "v1alpha3",
            "compositepodgroups",
            scheduling_v1alpha3,
            composite_pod_groups,
            scheduling::v1alpha3::CompositePodGroup
        ),
        full!(
            ns,
            "scheduling.k8s.io",
            "v1alpha3",
            "podgroups",
            scheduling_v1alpha3,
            pod_groups,
            scheduling::v1alpha3::PodGroup
        ),
        full!(
            ns,
            "scheduling.k8s.io",
            "v1alpha3",
            "workloads",
            scheduling_v1alpha3,
            workloads,
            scheduling::v1alpha3::Workload
        ),
        full!(
            ns,
            "scheduling.k8s.io",
            "v1beta1",
            "podgroups",
            scheduling_v1beta1,
            pod_groups,
            scheduling::v1beta1::PodGroup
        ),
        full!(
            ns,
            "scheduling.k8s.io",
            "v1beta1",
            "workloads",
            scheduling_v1beta1,
            workloads,
            scheduling::v1beta1::Workload
        ),
        full!(
            cl,
            "storage.k8s.io",
            "v1",
            "csidrivers",
            storage_v1,
            csi_drivers,
            storage::v1::CSIDriver
        ),
        full!(
            cl,
            "storage.k8s.io",
            "v1",
            "csinodes",
            storage_v1,
            csi_nodes,
            storage::v1::CSINode
        ),
        full!(
            ns,
            "storage.k8s.io",
            "v1",
            "csistoragecapacities",
            storage_v1,
            csi_storage_capacities,
            storage::v1::CSIStorageCapacity
        ),
        full!(
            cl,
            "storage.k8s.io",
            "v1",
            "storageclasses",
            storage_v1,
            storage_classes,
            storage::v1::StorageClass
        ),
        full!(
            cl,
            "storage.k8s.io",
            "v1",
            "volumeattachments",
            storage_v1,
            volume_attachments,
            storage::v1::VolumeAttachment
        ),
        full!(
            cl,
            "storage.k8s.io",
            "v1",
            "volumeattributesclasses",
            storage_v1,
            volume_attributes_classes,
            storage::v1::VolumeAttributesClass
        ),
        full!(
            cl,
            "storagemigration.k8s.io",
            "v1",
            "storageversionmigrations",
            storagemigration_v1,
            storage_version_migrations,
            storagemigration::v1::StorageVersionMigration
        ),
        full!(
            cl,
            "storagemigration.k8s.io",
            "v1beta1",
            "storageversionmigrations",
            storagemigration_v1beta1,
            storage_version_migrations,
            storagemigration::v1beta1::StorageVersionMigration
        ),
    ]
}

/// Runs the table against `cs`, for every top-level resource `discovery` lists; returns the
/// failures. A served resource with neither an entry nor an exemption is a failure.
async fn round_trips(env: &str, cs: &Clientset, ns: &str) -> Vec<String> {
    let discovered = DiscoveryClient::new(cs.client().clone())
        .server_groups_and_resources()
        .await
        .unwrap_or_else(|e| panic!("[{env}] discovery: {e}"));
    let table = table();
    let mut jobs = Vec::new();
    let mut failures = Vec::new();
    for list in discovered.resources() {
        let (group, version) = split_group_version(&list.group_version);
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            if EXEMPT
                .iter()
                .any(|(g, res, _)| *g == group && *res == r.name)
            {
                continue;
            }
            let what = format!("{}/{} {}", group, version, r.name);
            let Some(entry) = table
                .iter()
                .find(|e| e.group == group && e.version == version && e.resource == r.name)
            else {
                failures.push(format!(
                    "[{env}] {what}: served, but no typed client in the table"
                ));
                continue;
            };
            let name = format!("rt-{}-{env}-{version}", run_id());
            let (support, obj) =
                match template(group, version, &r.name, &r.kind, r.namespaced, ns, &name) {
                    Some(t) => t,
                    // The fake does not validate built-in kinds beyond a handful: any object
                    // of the kind will do for the alpha and beta kinds kube-apiserver does not
                    // serve by default (and so the table has no template for).
                    None if env == "fake" => (
                        Support::Full,
                        json!({
                            "apiVersion": list.group_version, "kind": r.kind,
                            "metadata": {"name": name, "namespace": ns,
                                         "labels": {"kube-codegen-round-trip": "yes"}}
                        }),
                    ),
                    None => {
                        failures.push(format!("[{env}] {what}: no object template"));
                        continue;
                    }
                };
            let run = entry.run;
            jobs.push(async move { (what, run(cs, ns, obj, support).await) });
        }
    }
    let results: Vec<(String, Outcome)> = futures::stream::iter(jobs)
        .buffer_unordered(8)
        .collect()
        .await;
    let mut ran = 0;
    for (what, outcome) in results {
        ran += 1;
        match outcome {
            Ok(summary) => eprintln!("[{env}] {what}: {summary}"),
            Err(e) => failures.push(format!("[{env}] {what}: {e}")),
        }
    }
    if ran < 20 {
        failures.push(format!("[{env}] only {ran} kinds round-tripped"));
    }
    failures
}

static SERVER: OnceCell<Result<RealApiServer, String>> = OnceCell::const_new();

async fn real() -> &'static RealApiServer {
    let started = SERVER
        .get_or_init(|| async {
            init_tracing();
            RealApiServer::start()
                .await
                .map_err(|e| format!("starting kube-apiserver: {e}"))
        })
        .await;
    started.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_kind_round_trips_through_its_typed_client_real() {
    let server = real().await;
    let cs = Clientset::new(server.client().unwrap_or_else(|e| panic!("{e}")));
    let ns = format!("rt-{}", run_id());
    create_namespace(cs.client(), &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let failures = round_trips("real", &cs, &ns).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_kind_round_trips_through_the_fake_clientset() {
    let (cs, _handle) =
        kube_codegen_kubernetes::client::clientset::versioned::fake::Clientset::new([])
            .unwrap_or_else(|e| panic!("{e}"));
    create_namespace(cs.client(), FAKE_NAMESPACE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let failures = round_trips("fake", &cs, FAKE_NAMESPACE).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_facts_match_discovery() {
    let server = real().await;
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    let discovered = DiscoveryClient::new(client)
        .server_groups_and_resources()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let registry =
        kube_codegen_kubernetes::client::clientset::versioned::fake::Clientset::resources();
    let mut checked = 0;
    let mut failures = Vec::new();
    for list in discovered.resources() {
        let (group, version) = split_group_version(&list.group_version);
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            let Some(info) = registry
                .iter()
                .find(|i| i.group == group && i.version == version && i.plural == r.name)
            else {
                if !EXEMPT
                    .iter()
                    .any(|(g, res, _)| *g == group && *res == r.name)
                {
                    failures.push(format!(
                        "{group}/{version} {}: not in the generated registries",
                        r.name
                    ));
                }
                continue;
            };
            checked += 1;
            let real_short: BTreeSet<&str> =
                r.short_names.iter().flatten().map(String::as_str).collect();
            let ours: BTreeSet<&str> = info.short_names.iter().copied().collect();
            if (info.kind, info.namespaced, &ours) != (r.kind.as_str(), r.namespaced, &real_short) {
                failures.push(format!(
                    "{group}/{version} {}: ours (kind {}, namespaced {}, short names {ours:?}) vs the server's ({}, {}, {real_short:?})",
                    r.name, info.kind, info.namespaced, r.kind, r.namespaced
                ));
            }
        }
    }
    assert!(checked > 60, "only {checked} resources compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expansions_against_a_real_apiserver() {
    let server = real().await;
    let cs = Clientset::new(server.client().unwrap_or_else(|e| panic!("{e}")));
    let ns = format!("rt-{}-exp", run_id());
    create_namespace(cs.client(), &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pods = cs.core_v1().pods(&ns);
    let pod = |name: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    for n in ["logs", "bound", "evicted", "evicted-v1"] {
        pods.create(&pod(n), &PostParams::default())
            .await
            .unwrap_or_else(|e| panic!("{n}: {e}"));
    }

    // No kubelet, no container ever started: an unscheduled pod's log is empty.
    let logs = pods
        .get_logs("logs", &LogParams::default())
        .await
        .unwrap_or_else(|e| panic!("logs: {e}"));
    assert_eq!(logs, "");

    // bind: the pod gets its node.
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some("bound".into()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some("node-a".into()),
            ..ObjectReference::default()
        },
    };
    pods.bind(&binding, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let bound = pods
        .get("bound", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        bound.spec.and_then(|s| s.node_name).as_deref(),
        Some("node-a")
    );
    // Its log is on node-a's kubelet, which does not exist: kube-apiserver cannot find the
    // node and answers 404.
    let refused = pods
        .get_logs("bound", &LogParams::default())
        .await
        .unwrap_err();
    assert!(is_not_found(&refused), "{refused}");

    // evict (pods' EvictV1, and policy/v1's Evict with the eviction's namespace): an unbound
    // pod goes at once.
    let eviction = |name: &str| Eviction {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.clone()),
            ..ObjectMeta::default()
        },
        ..Eviction::default()
    };
    pods.evict(&eviction("evicted"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("evict: {e}"));
    cs.policy_v1()
        .evictions(&ns)
        .evict(&eviction("evicted-v1"), &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("policy/v1 evict: {e}"));
    for n in ["evicted", "evicted-v1"] {
        let gone = pods.get(n, &GetParams::default()).await.unwrap_err();
        assert!(is_not_found(&gone), "{n}: {gone}");
    }

    // create_token (from the CreateToken tag).
    let sas = cs.core_v1().service_accounts(&ns);
    let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": "builder"}}))
        .unwrap_or_else(|e| panic!("{e}"));
    sas.create(&sa, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let token = sas
        .create_token("builder", &request, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("create_token: {e}"));
    assert!(
        token
            .status
            .and_then(|s| s.token)
            .is_some_and(|t| t.len() > 20)
    );

    // get_scale / update_scale (from the GetScale/UpdateScale tags).
    let deployments = cs.apps_v1().deployments(&ns);
    let d: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    deployments
        .create(&d, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let scale: Scale = deployments
        .get_scale("web", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("get_scale: {e}"));
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    let bigger = Scale {
        spec: Some(ScaleSpec { replicas: Some(3) }),
        ..scale
    };
    let _: Scale = deployments
        .update_scale("web", &bigger, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("update_scale: {e}"));
    let web = deployments
        .get("web", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(web.spec.replicas, Some(3));

    // rest_client(): the seed's RESTClient example on this group-version.
    let listed: ObjectList<Pod> = cs
        .core_v1()
        .rest_client()
        .get()
        .namespace(&ns)
        .resource("pods")
        .list_params(&ListParams::default().limit(100))
        .send()
        .await
        .unwrap_or_else(|e| panic!("rest_client: {e}"));
    let names: BTreeSet<String> = listed
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["bound".to_string(), "logs".to_string()])
    );
}

/// kube-apiserver accepts reviews (TokenReview, SubjectAccessReview …) without a name and
/// answers with a computed status; so does the fake clientset's in-memory server (it once
/// stored them as objects and refused them without `metadata.name`).
#[tokio::test]
async fn fake_accepts_reviews_without_a_name() {
    let (cs, _handle) =
        kube_codegen_kubernetes::client::clientset::versioned::fake::Clientset::new([])
            .unwrap_or_else(|e| panic!("{e}"));
    let review: k8s_openapi::api::authentication::v1::TokenReview =
        serde_json::from_value(json!({"spec": {"token": "x"}})).unwrap_or_else(|e| panic!("{e}"));
    let answer = cs
        .authentication_v1()
        .token_reviews()
        .create(&review, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(answer.status.is_some(), "a review answers with a status");
}

/// Sends a raw JSON request: the status code and the body (the object, or the `Status`).
async fn raw_request(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    match client.request::<Value>(req).await {
        Ok(v) => (201, v),
        Err(kube::Error::Api(s)) => (
            s.code,
            serde_json::to_value(&s).unwrap_or_else(|e| panic!("{e}")),
        ),
        Err(e) => panic!("{method} {path}: {e}"),
    }
}

/// What of an answer must agree: times and the authorizer's reason are the server's own (the
/// fake allows everything and says so; RBAC allows `system:masters` and says nothing).
fn comparable(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
        for e in meta
            .get_mut("managedFields")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(e) = e.as_object_mut() {
                e.remove("time");
            }
        }
    }
    if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("reason");
    }
    // A validation message prints the request's managedFields, with their time.
    if let Some(m) = v.get("message").and_then(Value::as_str) {
        let re = regex_lite_time(m);
        v["message"] = json!(re);
        if let Some(causes) = v
            .pointer_mut("/details/causes")
            .and_then(Value::as_array_mut)
        {
            for c in causes {
                if let Some(m) = c.get("message").and_then(Value::as_str) {
                    c["message"] = json!(regex_lite_time(m));
                }
            }
        }
    }
    v
}

/// Blanks `"time":"<RFC 3339>"` in a message.
fn regex_lite_time(m: &str) -> String {
    let mut out = String::new();
    let mut rest = m;
    while let Some(i) = rest.find("\"time\":\"") {
        let start = i + "\"time\":\"".len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find('"').unwrap_or(rest.len());
        out.push('T');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The review kinds answer as kube-apiserver v1.37 does: the fake is served with the real
/// server's token (its user is the harness's `admin` in `system:masters`), and every request
/// goes to both; codes and bodies must agree but for times and the authorizer's reason. The
/// subjects are `admin`/`system:masters`, whom RBAC allows everything, as the fake does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_answer_as_the_real_server_does() {
    let server = real().await;
    let real_client = server.client().unwrap_or_else(|e| panic!("{e}"));
    let mut resources = Vec::new();
    resources.extend_from_slice(authentication::v1::RESOURCES);
    resources.extend_from_slice(authorization::v1::RESOURCES);
    let fake = kube_codegen_runtime::fake::FakeApiServer::with_resources(&resources)
        .unwrap_or_else(|e| panic!("{e}"));
    let served = fake
        .serve_with_token(([127, 0, 0, 1], 0).into(), server.token())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let fake_client = served.client().await.unwrap_or_else(|e| panic!("{e}"));

    const AUTHN: &str = "/apis/authentication.k8s.io/v1";
    const AUTHZ: &str = "/apis/authorization.k8s.io/v1";
    let local = format!("{AUTHZ}/namespaces/default/localsubjectaccessreviews");
    let token = server.token().to_string();
    let pods = |ns: &str| json!({"namespace": ns, "verb": "get", "resource": "pods"});
    let admin = |extra: Value| {
        let mut spec = json!({"user": "admin", "groups": ["system:masters"]});
        if let (Some(s), Value::Object(e)) = (spec.as_object_mut(), extra) {
            s.extend(e);
        }
        json!({"spec": spec})
    };
    let cases: Vec<(&str, String, Option<Value>)> = vec![
        // TokenReview
        (
            "POST",
            format!("{AUTHN}/tokenreviews"),
            Some(json!({"spec": {"token": token}})),
        ),
        (
            "POST",
            format!("{AUTHN}/tokenreviews"),
            Some(json!({"spec": {"token": "not-a-token"}})),
        ),
        (
            "POST",
            format!("{AUTHN}/tokenreviews"),
            Some(
                json!({"metadata": {"labels": {"a": "b"}}, "spec": {"token": token, "audiences": ["elsewhere"]}}),
            ),
        ),
        (
            "POST",
            format!("{AUTHN}/tokenreviews"),
            Some(
                json!({"spec": {"token": token, "audiences": ["https://kubernetes.default.svc"]}}),
            ),
        ),
        (
            "POST",
            format!("{AUTHN}/tokenreviews"),
            Some(json!({"spec": {}})),
        ),
        // SelfSubjectReview
        (
            "POST",
            format!("{AUTHN}/selfsubjectreviews"),
            Some(json!({})),
        ),
        // SubjectAccessReview
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(admin(
                json!({"resourceAttributes": {"verb": "list", "resource": "nodes"}}),
            )),
        ),
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(admin(
                json!({"nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            )),
        ),
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(json!({"spec": {"user": "someone"}})),
        ),
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(json!({"spec": {"resourceAttributes": pods("default")}})),
        ),
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(admin(
                json!({"resourceAttributes": pods("default"), "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            )),
        ),
        (
            "POST",
            format!("{AUTHZ}/subjectaccessreviews"),
            Some(json!({"metadata": {"labels": {"a": "b"}}, "spec": {}})),
        ),
        // SelfSubjectAccessReview
        (
            "POST",
            format!("{AUTHZ}/selfsubjectaccessreviews"),
            Some(json!({"spec": {"resourceAttributes": pods("default")}})),
        ),
        (
            "POST",
            format!("{AUTHZ}/selfsubjectaccessreviews"),
            Some(json!({"spec": {}})),
        ),
        // LocalSubjectAccessReview
        (
            "POST",
            local.clone(),
            Some(admin(json!({"resourceAttributes": pods("default")}))),
        ),
        (
            "POST",
            local.clone(),
            Some(admin(json!({"resourceAttributes": pods("other")}))),
        ),
        (
            "POST",
            local.clone(),
            Some(admin(
                json!({"nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            )),
        ),
        (
            "POST",
            local.clone(),
            Some(json!({"metadata": {"namespace": "default", "name": "x"}, "spec": {}})),
        ),
        (
            "POST",
            local.clone(),
            Some(
                json!({"metadata": {"namespace": "other"}, "spec": {"user": "admin", "resourceAttributes": pods("other")}}),
            ),
        ),
        // SelfSubjectRulesReview: the rules themselves are RBAC's (see below)
        (
            "POST",
            format!("{AUTHZ}/selfsubjectrulesreviews"),
            Some(json!({"spec": {}})),
        ),
        // Nothing is stored.
        ("GET", format!("{AUTHN}/tokenreviews"), None),
        ("GET", format!("{AUTHN}/tokenreviews?watch=true"), None),
        ("DELETE", format!("{AUTHZ}/subjectaccessreviews"), None),
        ("GET", format!("{AUTHN}/tokenreviews/x"), None),
        ("DELETE", format!("{AUTHN}/tokenreviews/x"), None),
        ("GET", format!("{AUTHZ}/watch/subjectaccessreviews"), None),
        (
            "GET",
            format!("{AUTHZ}/namespaces/default/localsubjectaccessreviews"),
            None,
        ),
    ];
    let mut failures = Vec::new();
    for (method, path, body) in cases {
        let (real_code, real_answer) = raw_request(&real_client, method, &path, body.clone()).await;
        let (fake_code, fake_answer) = raw_request(&fake_client, method, &path, body.clone()).await;
        let (real_answer, fake_answer) = (comparable(real_answer), comparable(fake_answer));
        if (real_code, &real_answer) != (fake_code, &fake_answer) {
            failures.push(format!(
                "{method} {path} {}:\n  real {real_code} {real_answer}\n  fake {fake_code} {fake_answer}",
                body.unwrap_or_default()
            ));
        }
    }
    // The rules review: kube-apiserver lists system:masters' rules (`*` and the public
    // ones), the fake only `*`; both complete.
    let body = Some(json!({"spec": {"namespace": "default"}}));
    let path = format!("{AUTHZ}/selfsubjectrulesreviews");
    let (_, r) = raw_request(&real_client, "POST", &path, body.clone()).await;
    let (_, f) = raw_request(&fake_client, "POST", &path, body).await;
    let star = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]});
    for (env, v) in [("real", &r), ("fake", &f)] {
        if v["status"]["incomplete"] != json!(false)
            || !v["status"]["resourceRules"]
                .as_array()
                .is_some_and(|a| a.contains(&star))
            || v["spec"] != json!({})
        {
            failures.push(format!("[{env}] selfsubjectrulesreview: {v}"));
        }
    }
    // Discovery: only `create`.
    for gv in [AUTHN, AUTHZ] {
        let (_, r) = raw_request(&real_client, "GET", gv, None).await;
        let (_, f) = raw_request(&fake_client, "GET", gv, None).await;
        if r["resources"] != f["resources"] {
            failures.push(format!("discovery {gv}:\n  real {r}\n  fake {f}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
