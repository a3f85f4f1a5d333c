//! What the REST strategies of built-in types do on create and update: initial status,
//! the commonly visible defaults, a few validations, and type-specific rules (Secret
//! `stringData`, Service cluster IPs, Namespace finalizers, Pod spec immutability).
//!
//! This module holds the strategies ([`prepare_create`], [`admit_create`], [`prepare_update`]),
//! which pick the rules of a kind; the rules live with their kinds: [`pod`], [`workload`]
//! (and Jobs), [`data`] (ConfigMaps and Secrets), [`node`], [`rbac`], [`scheduling`]
//! (PriorityClasses) and [`service`].

use serde_json::{Map, Value, json};

use crate::error::{ApiResult, FieldError};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object::{self, ensure_object};

mod autoscaling;
mod cronjob;
mod data;
mod networking;
mod node;
mod pod;
mod policy;
mod rbac;
mod scheduling;
mod service;
mod workload;

pub(crate) use pod::pod_grace_period;
pub(crate) use scheduling::system_priority_classes;

fn set_default(m: &mut Map<String, Value>, key: &str, v: Value) {
    if !m.contains_key(key) || m.get(key).is_some_and(Value::is_null) {
        m.insert(key.to_string(), v);
    }
}

fn ensure_array(v: &mut Value) -> &mut Vec<Value> {
    if !v.is_array() {
        *v = json!([]);
    }
    match v {
        Value::Array(a) => a,
        _ => unreachable!("just made an array"),
    }
}

/// `PrepareForCreate` + defaulting + `Validate` of a built-in type (for Pods and Jobs only
/// the defaults; [`admit_create`] does the rest).
pub(crate) fn prepare_create(res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let Some(kind) = res.builtin else {
        return Ok(());
    };
    match kind {
        // `SetDefaults_Namespace`: the creator owns the label.
        Builtin::Namespace => name_label(obj),
        Builtin::Pod => {
            if let Some(spec) = ensure_object(obj).get_mut("spec") {
                pod::default_pod(spec);
            }
        }
        Builtin::Service => {
            service::service_defaults(obj);
            let spec = obj.get("spec").cloned().unwrap_or(json!({}));
            let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
            let external = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
            let no_ports = spec
                .get("ports")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            let mut errs = Vec::new();
            if no_ports && !headless && !external {
                errs.push(FieldError::required("spec.ports", ""));
            }
            errs.extend(service::service_spec_errors(&spec));
            res.invalid_if_any(obj, errs)?;
            ensure_object(obj).insert("status".into(), json!({"loadBalancer": {}}));
        }
        Builtin::Secret => {
            data::secret_string_data(res, obj)?;
            let mut errs = data::data_key_errors(kind, obj);
            errs.extend(data::data_size_errors(kind, obj));
            errs.extend(data::secret_type_errors(obj));
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::ConfigMap => {
            let mut errs = data::data_key_errors(kind, obj);
            errs.extend(data::data_size_errors(kind, obj));
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::StatefulSet | Builtin::DaemonSet => {
            workload::deployment_like_defaults(obj, kind);
            if kind == Builtin::DaemonSet {
                workload::set_template_generation(obj, 1);
            }
            res.invalid_if_any(obj, workload::workload_errors(obj, kind))?;
            ensure_object(obj).insert("status".into(), json!({}));
        }
        Builtin::ReplicationController => {
            workload::deployment_like_defaults(obj, kind);
            res.invalid_if_any(obj, workload::workload_errors(obj, kind))?;
            ensure_object(obj).insert("status".into(), json!({"replicas": 0}));
        }
        Builtin::Job => {
            if let Some(ts) = obj.pointer_mut("/spec/template/spec") {
                pod::default_pod_spec(ts);
            }
            workload::job_defaults(obj);
        }
        Builtin::Node => {
            ensure_object(obj).remove("status");
            node::node_defaults(obj);
        }
        Builtin::CronJob => {
            cronjob::cronjob_defaults(obj);
            res.invalid_if_any(obj, cronjob::cronjob_errors(obj, None))?;
            ensure_object(obj).insert("status".into(), json!({}));
        }
        Builtin::HorizontalPodAutoscaler => {
            autoscaling::hpa_defaults(obj);
            res.invalid_if_any(obj, autoscaling::hpa_errors(obj))?;
            ensure_object(obj).insert("status".into(), autoscaling::initial_status());
        }
        Builtin::PodDisruptionBudget => {
            res.invalid_if_any(obj, policy::pdb_errors(obj))?;
            ensure_object(obj).insert("status".into(), policy::initial_status());
        }
        Builtin::Ingress => {
            res.invalid_if_any(obj, networking::ingress_errors(obj))?;
            ensure_object(obj).insert("status".into(), networking::ingress_initial_status());
        }
        Builtin::NetworkPolicy => {
            networking::network_policy_defaults(obj);
            res.invalid_if_any(obj, networking::network_policy_errors(obj))?;
        }
        Builtin::PriorityClass => {
            scheduling::prepare_create(obj);
            // `ValidatePriorityClass` starts with `ValidateObjectMeta`: one 422 lists both.
            let meta = crate::semantics::validation::object_meta_errors(
                obj,
                res.name_rule(),
                res.namespaced,
                true,
            );
            res.invalid_if_any(obj, scheduling::errors(obj, meta))?;
        }
        Builtin::Crd => {
            crate::semantics::crd::default(obj);
            let errs = crate::semantics::crd::validate(obj);
            res.invalid_if_any(obj, errs)?;
            let status = crate::semantics::crd::initial_status(obj);
            ensure_object(obj).insert("status".into(), status);
        }
        Builtin::MutatingWebhookConfiguration
        | Builtin::ValidatingWebhookConfiguration
        | Builtin::ValidatingAdmissionPolicy
        | Builtin::ValidatingAdmissionPolicyBinding => admission_configuration(res, kind, obj)?,
        Builtin::Role | Builtin::ClusterRole => {
            res.invalid_if_any(obj, rbac::role_errors(obj, res.namespaced))?;
            rbac::rules_as_stored(obj);
        }
        Builtin::RoleBinding | Builtin::ClusterRoleBinding => {
            rbac::binding_defaults(obj);
            res.invalid_if_any(obj, rbac::binding_errors(obj, res.namespaced))?;
        }
        Builtin::Endpoints => service::endpoints_defaults(obj),
        Builtin::EndpointSlice => service::endpoint_slice_defaults(obj),
        Builtin::CoreEvent
        | Builtin::ServiceAccount
        | Builtin::Event
        | Builtin::Lease
        | Builtin::LeaseCandidate => {}
    }
    Ok(())
}

/// What kube-apiserver's REST storage allocates for a new object once the field manager has
/// recorded its writer's fields, so the writer does not own them: a Service's cluster IPs and
/// IP families.
pub(crate) fn allocate(st: &mut State, res: &Resource, obj: &mut Value) {
    if res.builtin == Some(Builtin::Service) {
        service::allocate_cluster_ips(st, obj, None);
    }
}

/// kube-apiserver's validating admission plugins that check a valid object against others
/// (after the strategy's validation): the `Priority` plugin allows one default PriorityClass.
/// `old` is the stored object of an update.
pub(crate) fn validating_admission(
    st: &State,
    res: &Resource,
    obj: &Value,
    old: Option<&Value>,
) -> ApiResult<()> {
    match res.builtin {
        Some(Builtin::PriorityClass) => scheduling::admit_class(st, res, obj, old),
        _ => Ok(()),
    }
}

/// What kube-apiserver's REST storage refuses to delete whatever the request: a system
/// PriorityClass.
pub(crate) fn check_delete(res: &Resource, name: &str) -> ApiResult<()> {
    scheduling::check_delete(res, name)
}

/// What kube-apiserver does to a new object after its managed fields are recorded: mutating
/// admission, then the strategy's `PrepareForCreate` and `Validate`, for the kinds where
/// these set fields (a Pod's priority and tolerations, a Job's generated selector, a
/// Namespace's `kubernetes` finalizer) — the creator does not own those.
pub(crate) fn admit_create(st: &State, res: &Resource, obj: &mut Value) -> ApiResult<()> {
    match res.builtin {
        Some(Builtin::Pod) => {
            pod::pod_admission(st, res, obj)?;
            let errs = pod::pod_spec_errors(obj.get("spec"), "spec");
            res.invalid_if_any(obj, errs)?;
            let qos = pod::qos_class(obj.get("spec").unwrap_or(&Value::Null));
            ensure_object(obj).insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        Some(Builtin::Namespace) => {
            let spec = ensure_object(
                ensure_object(obj)
                    .entry("spec")
                    .or_insert_with(|| json!({})),
            );
            // `PrepareForCreate`: every new namespace has the `kubernetes` finalizer, last if
            // it came with others.
            let finalizers = ensure_array(spec.entry("finalizers").or_insert_with(|| json!([])));
            if !finalizers.contains(&json!("kubernetes")) {
                finalizers.push(json!("kubernetes"));
            }
            ensure_object(obj).insert("status".into(), json!({"phase": "Active"}));
        }
        Some(Builtin::Node) => node::add_not_ready_taint(obj),
        Some(Builtin::Job) => {
            workload::job_selector(obj);
            let mut errs =
                pod::pod_spec_errors(obj.pointer("/spec/template/spec"), "spec.template.spec");
            errs.extend(workload::job_restart_policy_errors(obj));
            res.invalid_if_any(obj, errs)?;
            ensure_object(obj).insert("status".into(), json!({}));
        }
        _ => {}
    }
    Ok(())
}

/// A Namespace's `kubernetes.io/metadata.name` label, its name, on create and update.
fn name_label(obj: &mut Value) {
    let name = object::name(obj).to_string();
    let labels = ensure_object(
        object::meta_mut(obj)
            .entry("labels")
            .or_insert_with(|| json!({})),
    );
    labels.insert("kubernetes.io/metadata.name".into(), json!(name));
}

/// The admission configuration kinds' defaults and validation, the same on create and update.
fn admission_configuration(res: &Resource, kind: Builtin, obj: &mut Value) -> ApiResult<()> {
    use crate::semantics::admission::policy;
    match kind {
        Builtin::MutatingWebhookConfiguration | Builtin::ValidatingWebhookConfiguration => {
            webhook_defaults(obj, kind == Builtin::MutatingWebhookConfiguration);
        }
        Builtin::ValidatingAdmissionPolicy => {
            policy::policy_defaults(obj);
            let errs = policy::validate_policy(obj);
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::ValidatingAdmissionPolicyBinding => {
            policy::binding_defaults(obj);
            let errs = policy::validate_binding(obj);
            res.invalid_if_any(obj, errs)?;
        }
        _ => {}
    }
    Ok(())
}

/// The defaults kube-apiserver gives every webhook of a Mutating- or
/// ValidatingWebhookConfiguration (`admissionregistration/v1` `SetDefaults_*`).
fn webhook_defaults(obj: &mut Value, mutating: bool) {
    let Some(Value::Array(hooks)) = obj.get_mut("webhooks") else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        for (field, default) in [
            ("failurePolicy", json!("Fail")),
            ("matchPolicy", json!("Equivalent")),
            ("namespaceSelector", json!({})),
            ("objectSelector", json!({})),
            ("timeoutSeconds", json!(10)),
        ] {
            hook.entry(field).or_insert(default);
        }
        if mutating {
            hook.entry("reinvocationPolicy").or_insert(json!("Never"));
        }
        if let Some(Value::Array(rules)) = hook.get_mut("rules") {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert(json!("*"));
            }
        }
        if let Some(Value::Object(svc)) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
        {
            svc.entry("port").or_insert(json!(443));
        }
    }
}

/// `PrepareForUpdate` + defaulting + `ValidateUpdate` of a built-in type (main resource).
/// What decoding a write to a built-in object's `status` subresource defaults: a Node's
/// allocatable resources.
pub(crate) fn prepare_status_update(res: &Resource, new: &mut Value) {
    if res.builtin == Some(Builtin::Node) {
        node::node_defaults(new);
    }
}

pub(crate) fn prepare_update(
    st: &mut State,
    res: &Resource,
    old: &Value,
    new: &mut Value,
) -> ApiResult<()> {
    let Some(kind) = res.builtin else {
        return Ok(());
    };
    match kind {
        Builtin::Namespace => {
            // Spec finalizers change only through the finalize subresource.
            if let Some(f) = old.pointer("/spec/finalizers").cloned() {
                let spec = ensure_object(
                    ensure_object(new)
                        .entry("spec")
                        .or_insert_with(|| json!({})),
                );
                spec.insert("finalizers".into(), f);
            }
            name_label(new);
        }
        Builtin::Pod => {
            pod::pod_update_admission(old, new);
            if let Some(spec) = ensure_object(new).get_mut("spec") {
                pod::default_pod(spec);
            }
            let strip_images = |spec: Option<&Value>| {
                let mut s = spec.cloned().unwrap_or(Value::Null);
                for list in ["containers", "initContainers"] {
                    if let Some(Value::Array(cs)) = s.get_mut(list) {
                        for c in cs {
                            if let Some(m) = c.as_object_mut() {
                                m.remove("image");
                            }
                        }
                    }
                }
                if let Some(m) = s.as_object_mut() {
                    m.remove("activeDeadlineSeconds");
                    m.remove("tolerations");
                    m.remove("terminationGracePeriodSeconds");
                }
                s
            };
            let mut errs = Vec::new();
            if !pod::only_added_tolerations(
                old.pointer("/spec/tolerations"),
                new.pointer("/spec/tolerations"),
            ) {
                errs.push(FieldError::forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                ));
            }
            if strip_images(old.get("spec")) != strip_images(new.get("spec")) {
                errs.push(FieldError::forbidden(
                    "spec",
                    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
                ));
            }
            res.invalid_if_any(new, errs)?;
        }
        Builtin::Service => {
            service::service_defaults(new);
            service::allocate_cluster_ips(st, new, Some(old));
            res.invalid_if_any(
                new,
                service::service_spec_errors(new.get("spec").unwrap_or(&Value::Null)),
            )?;
            if old.pointer("/spec/clusterIP") != new.pointer("/spec/clusterIP") {
                let v = format!(
                    "[{}]",
                    new.pointer("/spec/clusterIP")
                        .map(crate::semantics::validation::render)
                        .unwrap_or_default()
                );
                res.invalid_if_any(
                    new,
                    vec![FieldError::invalid(
                        "spec.clusterIPs[0]",
                        v,
                        "may not change once set",
                    )],
                )?;
            }
        }
        Builtin::Secret => {
            data::secret_string_data(res, new)?;
            let mut errs = Vec::new();
            if old.get("type") != new.get("type") {
                let v = new
                    .get("type")
                    .map(crate::semantics::validation::render)
                    .unwrap_or_default();
                errs.push(FieldError::invalid("type", v, "field is immutable"));
            }
            errs.extend(data::immutable_data_errors(old, new, &["data"]));
            errs.extend(data::data_key_errors(kind, new));
            errs.extend(data::data_size_errors(kind, new));
            errs.extend(data::secret_type_errors(new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::ConfigMap => {
            let mut errs = data::immutable_data_errors(old, new, &["data", "binaryData"]);
            errs.extend(data::data_key_errors(kind, new));
            errs.extend(data::data_size_errors(kind, new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::StatefulSet | Builtin::DaemonSet => {
            workload::deployment_like_defaults(new, kind);
            if kind == Builtin::DaemonSet {
                // A changed template is the next template generation.
                let was = workload::template_generation(old);
                let changed = old.pointer("/spec/template") != new.pointer("/spec/template");
                workload::set_template_generation(new, if changed { was + 1 } else { was });
            }
            let mut errs = workload::workload_errors(new, kind);
            errs.extend(workload::selector_update_errors(old, new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::ReplicationController => {
            workload::deployment_like_defaults(new, kind);
            res.invalid_if_any(new, workload::workload_errors(new, kind))?;
        }
        Builtin::Crd => {
            crate::semantics::crd::default(new);
            crate::semantics::crd::extend_stored_versions(new);
            let mut errs = crate::semantics::crd::validate(new);
            errs.extend(crate::semantics::crd::stored_version_errors(new));
            for (field, ptr) in [
                ("spec.group", "/spec/group"),
                ("spec.names.plural", "/spec/names/plural"),
                ("spec.scope", "/spec/scope"),
            ] {
                if old.pointer(ptr) != new.pointer(ptr) {
                    let v = new
                        .pointer(ptr)
                        .map(crate::semantics::validation::render)
                        .unwrap_or_default();
                    errs.push(FieldError::invalid(field, v, "field is immutable"));
                }
            }
            res.invalid_if_any(new, errs)?;
        }
        Builtin::MutatingWebhookConfiguration
        | Builtin::ValidatingWebhookConfiguration
        | Builtin::ValidatingAdmissionPolicy
        | Builtin::ValidatingAdmissionPolicyBinding => admission_configuration(res, kind, new)?,
        Builtin::Role | Builtin::ClusterRole => {
            res.invalid_if_any(new, rbac::role_errors(new, res.namespaced))?;
            rbac::rules_as_stored(new);
        }
        Builtin::RoleBinding | Builtin::ClusterRoleBinding => {
            rbac::binding_defaults(new);
            let mut errs = rbac::binding_errors(new, res.namespaced);
            errs.extend(rbac::role_ref_update_errors(old, new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::CronJob => {
            cronjob::cronjob_defaults(new);
            res.invalid_if_any(new, cronjob::cronjob_errors(new, Some(old)))?;
        }
        Builtin::HorizontalPodAutoscaler => {
            autoscaling::hpa_defaults(new);
            res.invalid_if_any(new, autoscaling::hpa_errors(new))?;
        }
        Builtin::PodDisruptionBudget => res.invalid_if_any(new, policy::pdb_errors(new))?,
        Builtin::Ingress => res.invalid_if_any(new, networking::ingress_errors(new))?,
        Builtin::NetworkPolicy => {
            networking::network_policy_defaults(new);
            res.invalid_if_any(new, networking::network_policy_errors(new))?;
        }
        Builtin::PriorityClass => {
            scheduling::default(new);
            res.invalid_if_any(new, scheduling::update_errors(old, new))?;
        }
        Builtin::Endpoints => service::endpoints_defaults(new),
        Builtin::EndpointSlice => service::endpoint_slice_defaults(new),
        Builtin::Node => node::node_defaults(new),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::semantics::resources::builtins;

    fn res(kind: &str) -> Resource {
        builtins()
            .into_iter()
            .find(|r| r.kind == kind && (r.group.is_empty() || r.group == "apps"))
            .unwrap_or_else(|| panic!("no {kind}"))
    }

    #[test]
    fn secrets_merge_string_data() {
        let mut s =
            json!({"metadata": {"name": "s"}, "stringData": {"a": "hello"}, "data": {"b": "aGk="}});
        let r = res("Secret");
        assert!(prepare_create(&r, &mut s).is_ok());
        assert_eq!(
            s,
            json!({"metadata": {"name": "s"}, "data": {"a": "aGVsbG8=", "b": "aGk="}, "type": "Opaque"})
        );
        let mut bad = json!({"metadata": {"name": "s"}, "data": {"b": "!!"}});
        assert_eq!(prepare_create(&r, &mut bad).map_err(|e| e.code), Err(400));
    }

    #[test]
    fn services_get_cluster_ips() {
        let mut st = State::new(Config::default());
        let r = res("Service");
        let mut s = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
        assert!(prepare_create(&r, &mut s).is_ok());
        assert_eq!(s["spec"].get("clusterIP"), None, "allocated when stored");
        allocate(&mut st, &r, &mut s);
        assert_eq!(s["spec"]["clusterIP"], "10.0.0.2");
        assert_eq!(s["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(s["spec"]["type"], "ClusterIP");
        let mut none = json!({"metadata": {"name": "s"}, "spec": {}});
        assert_eq!(prepare_create(&r, &mut none).map_err(|e| e.code), Err(422));
        let mut upd = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 81}]}});
        assert!(prepare_update(&mut st, &r, &s, &mut upd).is_ok());
        assert_eq!(upd["spec"]["clusterIP"], "10.0.0.2");
    }

    #[test]
    fn pods_get_defaults_and_status() {
        let st = State::new(Config::default());
        let r = res("Pod");
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        assert!(prepare_create(&r, &mut p).is_ok());
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert!(p.get("status").is_none(), "status comes with admission");
        assert!(admit_create(&st, &r, &mut p).is_ok());
        assert_eq!(p["status"]["phase"], "Pending");
        assert_eq!(p["status"]["qosClass"], "BestEffort");
        assert_eq!(p["spec"]["priority"], 0);
        assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], "Always");
        let mut q = json!({"metadata": {"name": "p"}, "spec": {}});
        assert!(prepare_create(&r, &mut q).is_ok());
        assert_eq!(admit_create(&st, &r, &mut q).map_err(|e| e.code), Err(422));
        let mut r5 = json!({"metadata": {"name": "p"}, "spec": {"priority": 5,
            "containers": [{"name": "c", "image": "nginx"}]}});
        assert_eq!(admit_create(&st, &r, &mut r5).map_err(|e| e.code), Err(403));
        assert_eq!(pod_grace_period(&p, None), None);
        let bound = json!({"spec": {"nodeName": "n"}, "status": {"phase": "Running"}});
        assert_eq!(pod_grace_period(&bound, None), Some(30));
        assert_eq!(pod_grace_period(&bound, Some(0)), None);
    }
}
