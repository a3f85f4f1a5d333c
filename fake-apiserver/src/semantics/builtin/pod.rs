//! Pods and pod templates: defaults, `ValidatePodSpec`'s container rules, the QoS class, the
//! admission plugins kube-apiserver runs on a new Pod, and graceful deletion.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::semantics::str_at;
use crate::storage::object::{self, ensure_object};
use kube_codegen_apimachinery::validation;

use super::{ensure_array, set_default};

pub(super) fn image_pull_policy(image: &str) -> &'static str {
    let tail = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') {
        return "IfNotPresent";
    }
    match tail.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// Defaults of a pod spec (also used for pod templates).
pub(super) fn default_pod_spec(spec: &mut Value) {
    let m = ensure_object(spec);
    set_default(m, "restartPolicy", json!("Always"));
    set_default(m, "dnsPolicy", json!("ClusterFirst"));
    set_default(m, "schedulerName", json!("default-scheduler"));
    set_default(m, "terminationGracePeriodSeconds", json!(30));
    set_default(m, "securityContext", json!({}));
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = m.get_mut(list) {
            for c in cs {
                let c = ensure_object(c);
                let image = c
                    .get("image")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                set_default(c, "imagePullPolicy", json!(image_pull_policy(&image)));
                set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
                set_default(c, "terminationMessagePolicy", json!("File"));
                set_default(c, "resources", json!({}));
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    if let Some(Value::Object(p)) = c.get_mut(probe) {
                        default_probe(p);
                    }
                }
                if let Some(Value::Array(ports)) = c.get_mut("ports") {
                    for p in ports {
                        set_default(ensure_object(p), "protocol", json!("TCP"));
                    }
                }
                if let Some(Value::Array(env)) = c.get_mut("env") {
                    for e in env {
                        default_field_ref(e.pointer_mut("/valueFrom/fieldRef"));
                    }
                }
            }
        }
    }
    if let Some(Value::Array(volumes)) = m.get_mut("volumes") {
        for v in volumes {
            if let Some(Value::Array(items)) = v.pointer_mut("/downwardAPI/items") {
                items
                    .iter_mut()
                    .for_each(|i| default_field_ref(i.get_mut("fieldRef")));
            }
            if let Some(Value::Array(sources)) = v.pointer_mut("/projected/sources") {
                for s in sources {
                    if let Some(Value::Array(items)) = s.pointer_mut("/downwardAPI/items") {
                        items
                            .iter_mut()
                            .for_each(|i| default_field_ref(i.get_mut("fieldRef")));
                    }
                }
            }
        }
    }
}

/// `SetDefaults_ObjectFieldSelector`: a field reference reads the `v1` Pod.
fn default_field_ref(field_ref: Option<&mut Value>) {
    if let Some(Value::Object(r)) = field_ref {
        set_default(r, "apiVersion", json!("v1"));
    }
}

/// `SetDefaults_Probe` and `SetDefaults_HTTPGetAction`.
fn default_probe(p: &mut Map<String, Value>) {
    set_default(p, "timeoutSeconds", json!(1));
    set_default(p, "periodSeconds", json!(10));
    set_default(p, "successThreshold", json!(1));
    set_default(p, "failureThreshold", json!(3));
    if let Some(Value::Object(get)) = p.get_mut("httpGet") {
        // Go's defaults test for the empty string, which absent and `null` decode to.
        for (key, default) in [("path", "/"), ("scheme", "HTTP")] {
            if get
                .get(key)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                get.insert(key.into(), json!(default));
            }
        }
    }
}

pub(super) fn qos_class(spec: &Value) -> &'static str {
    let containers = spec
        .get("containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let requests = c.pointer("/resources/requests").and_then(Value::as_object);
        let limits = c.pointer("/resources/limits").and_then(Value::as_object);
        if requests.is_some_and(|r| !r.is_empty()) || limits.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        let full = |r: &str| limits.and_then(|l| l.get(r)).is_some();
        let same = |r: &str| {
            let req = requests.and_then(|q| q.get(r));
            req.is_none() || req == limits.and_then(|l| l.get(r))
        };
        if !(full("cpu") && full("memory") && same("cpu") && same("memory")) {
            guaranteed = false;
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// `ValidatePodSpec`'s container rules the fake keeps: at least one container; each
/// container's name (required, a DNS label, unique: an init container's also among the
/// containers') and image.
pub(super) fn pod_spec_errors(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = |field: &str| {
        spec.and_then(|s| s.get(field))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (containers, init) = (list("containers"), list("initContainers"));
    let str_of = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    // `ValidateVolumes` first: a volume with a bad or repeated name is refused, and mounts of
    // it are not found.
    let mut volumes: Vec<String> = Vec::new();
    for (i, v) in list("volumes").iter().enumerate() {
        let at = format!("{path}.volumes[{i}].name");
        let name = str_of(v, "name");
        let mut bad = if name.is_empty() {
            vec![FieldError::required(&at, "")]
        } else {
            validation::is_dns1123_label(&name)
                .into_iter()
                .map(|msg| FieldError::invalid_str(&at, &name, msg))
                .collect()
        };
        if volumes.contains(&name) {
            bad.push(FieldError::duplicate(&at, go_quote(&name)));
        }
        if bad.is_empty() {
            volumes.push(name);
        } else {
            errs.extend(bad);
        }
    }
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let mut check = |field: &str, cs: &[Value], names: &mut std::collections::HashSet<String>| {
        for (i, c) in cs.iter().enumerate() {
            let at = format!("{path}.{field}[{i}]");
            let name = str_of(c, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{at}.name"), ""));
            } else {
                errs.extend(
                    validation::is_dns1123_label(&name)
                        .into_iter()
                        .map(|msg| FieldError::invalid_str(format!("{at}.name"), &name, msg)),
                );
            }
            if !names.insert(name.clone()) {
                errs.push(FieldError::duplicate(format!("{at}.name"), go_quote(&name)));
            }
            if str_of(c, "image").is_empty() {
                errs.push(FieldError::required(format!("{at}.image"), ""));
            }
            errs.extend(container_port_errors(c, &at));
            errs.extend(env_errors(c, &at));
            errs.extend(volume_mount_errors(c, &at, &volumes));
        }
    };
    let mut names = std::collections::HashSet::new();
    check("containers", &containers, &mut names);
    check("initContainers", &init, &mut names);
    let policy = spec
        .and_then(|s| s.get("restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or("Always");
    if !matches!(policy, "Always" | "OnFailure" | "Never") {
        errs.push(FieldError::not_supported(
            format!("{path}.restartPolicy"),
            policy,
            &["Always", "OnFailure", "Never"],
        ));
    }
    errs.extend(pod_scheduling_errors(spec, path));
    errs
}

/// What `ValidatePodSpec` checks after the restart policy, in its order, of the rules kept
/// here: the node selector's keys and values (`ValidateLabels`), the pod security context's
/// user and group ids, and a `dnsConfig` when `dnsPolicy` is `None`.
fn pod_scheduling_errors(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(spec) = spec else { return errs };
    errs.extend(crate::semantics::validation::label_map_errors(
        spec.get("nodeSelector"),
        &format!("{path}.nodeSelector"),
    ));
    // `validatePodSpecSecurityContext`: ids are 0 to 2^31 - 1.
    let context = spec.get("securityContext");
    for field in ["fsGroup", "runAsUser", "runAsGroup"] {
        if let Some(id) = context.and_then(|c| c.get(field)).and_then(Value::as_i64)
            && !(0..=i64::from(i32::MAX)).contains(&id)
        {
            errs.push(FieldError::invalid(
                format!("{path}.securityContext.{field}"),
                id.to_string(),
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    if spec.get("dnsPolicy").and_then(Value::as_str) == Some("None")
        && spec.get("dnsConfig").is_none_or(Value::is_null)
    {
        errs.push(FieldError::required(
            format!("{path}.dnsConfig"),
            "must provide `dnsConfig` when `dnsPolicy` is None",
        ));
    }
    errs
}

/// `validateContainerPorts`: a container port is set and in range, a host port in range.
pub(super) fn container_port_errors(c: &Value, at: &str) -> Vec<FieldError> {
    const RANGE: &str = "must be between 1 and 65535, inclusive";
    let mut errs = Vec::new();
    let ports = c.get("ports").and_then(Value::as_array);
    let mut names = std::collections::HashSet::new();
    for (j, p) in ports.into_iter().flatten().enumerate() {
        let port_at = format!("{at}.ports[{j}]");
        // A name must be a port name, and unique among the container's ports.
        if let Some(name) = p
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            let msgs = validation::is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(
                    msgs.into_iter()
                        .map(|msg| FieldError::invalid_str(format!("{port_at}.name"), name, msg)),
                );
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(
                    format!("{port_at}.name"),
                    go_quote(name),
                ));
            }
        }
        match p.get("containerPort").and_then(Value::as_i64).unwrap_or(0) {
            0 => errs.push(FieldError::required(format!("{port_at}.containerPort"), "")),
            n if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                format!("{port_at}.containerPort"),
                n.to_string(),
                RANGE,
            )),
            _ => {}
        }
        match p.get("hostPort").and_then(Value::as_i64).unwrap_or(0) {
            0 => {}
            n if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                format!("{port_at}.hostPort"),
                n.to_string(),
                RANGE,
            )),
            _ => {}
        }
    }
    errs
}

/// `ValidateEnv`'s names: required, printable ASCII without `=`.
pub(super) fn env_errors(c: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let env = c.get("env").and_then(Value::as_array);
    for (j, e) in env.into_iter().flatten().enumerate() {
        let field = format!("{at}.env[{j}].name");
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else if !name
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'=')
        {
            errs.push(FieldError::invalid_str(
                field,
                name,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
    }
    errs
}

/// `ValidateVolumeMounts`: a mount names one of the pod's volumes.
pub(super) fn volume_mount_errors(c: &Value, at: &str, volumes: &[String]) -> Vec<FieldError> {
    let mounts = c.get("volumeMounts").and_then(Value::as_array);
    mounts
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(j, m)| {
            let name = m.get("name").and_then(Value::as_str).unwrap_or("");
            (!volumes.iter().any(|v| v == name))
                .then(|| FieldError::not_found(format!("{at}.volumeMounts[{j}].name"), name))
        })
        .collect()
}

/// `SetDefaults_Pod`: a container's limits are its requests where it asks for none (Pods
/// only, not templates).
pub(super) fn default_pod_requests(spec: &mut Value) {
    for list in ["containers", "initContainers"] {
        let Some(Value::Array(cs)) = spec.get_mut(list) else {
            continue;
        };
        for c in cs {
            let Some(limits) = c
                .pointer("/resources/limits")
                .and_then(Value::as_object)
                .cloned()
            else {
                continue;
            };
            let resources = ensure_object(
                ensure_object(c)
                    .entry("resources")
                    .or_insert_with(|| json!({})),
            );
            let requests = ensure_object(resources.entry("requests").or_insert_with(|| json!({})));
            for (k, v) in limits {
                requests.entry(k).or_insert(v);
            }
        }
    }
}

/// The mutating admission plugins kube-apiserver runs on a new Pod by default: `Priority`
/// (`spec.priorityClassName`, `spec.priority` and `spec.preemptionPolicy` from the pod's
/// PriorityClass, or from the global default class when it names none) and
/// `DefaultTolerationSeconds` (NoExecute tolerations of not-ready and unreachable nodes for
/// 300 s, unless the pod tolerates them already).
pub(super) fn pod_admission(st: &State, res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let name = object::name(obj).to_string();
    let forbidden = |why: String| ApiError::forbidden(&res.group, &res.plural, &name, &why);
    let (class, priority, policy) =
        super::scheduling::resolve(st, str_at(obj, "/spec/priorityClassName"))
            .map_err(forbidden)?;
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if let Some(given) = spec.get("priority").and_then(Value::as_i64)
        && given != priority
    {
        return Err(forbidden(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        )));
    }
    if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
        && given != policy
    {
        return Err(forbidden(format!(
            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
        )));
    }
    if !class.is_empty() {
        spec.insert("priorityClassName".into(), json!(class));
    }
    spec.insert("priority".into(), json!(priority));
    spec.insert("preemptionPolicy".into(), json!(policy));
    default_toleration_seconds(spec);
    Ok(())
}

/// The defaults of a pod's spec, on create and on update: a template's
/// ([`default_pod_spec`]), `SetDefaults_Pod`'s `enableServiceLinks`, and the requests of
/// containers with limits only.
pub(crate) fn default_pod(spec: &mut Value) {
    default_pod_spec(spec);
    if let Some(m) = spec.as_object_mut() {
        super::set_default(m, "enableServiceLinks", json!(true));
    }
    default_pod_requests(spec);
}

/// The admission plugins an update of a pod passes: `Priority` keeps the priority and
/// preemption policy it set at creation when the new spec leaves them out, and
/// `DefaultTolerationSeconds` adds its tolerations again, as on create.
pub(super) fn pod_update_admission(old: &Value, new: &mut Value) {
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["priority", "preemptionPolicy"] {
        if let Some(v) = old.pointer(&format!("/spec/{field}"))
            && !spec.contains_key(field)
        {
            spec.insert(field.into(), v.clone());
        }
    }
    default_toleration_seconds(spec);
}

/// Whether every toleration of `old` is still in `new`, its `tolerationSeconds` aside
/// (`validateOnlyAddedTolerations`): an update may add tolerations, not change or drop one.
pub(super) fn only_added_tolerations(old: Option<&Value>, new: Option<&Value>) -> bool {
    // As Go compares the structs: an empty field is an absent one.
    let key = |t: &Value| -> Value {
        let mut t = t.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
            m.retain(|_, v| !(v.is_null() || v.as_str() == Some("")));
        }
        t
    };
    let list = |v: Option<&Value>| -> Vec<Value> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().map(key).collect())
            .unwrap_or_default()
    };
    let new = list(new);
    list(old).iter().all(|t| new.contains(t))
}

/// `DefaultTolerationSeconds`: a pod tolerates a not-ready and an unreachable node for 300
/// seconds unless it says otherwise.
fn default_toleration_seconds(spec: &mut Map<String, Value>) {
    let tolerations = ensure_array(spec.entry("tolerations").or_insert_with(|| json!([])));
    let tolerates = |key: &str| {
        tolerations.iter().any(|t| {
            let k = t.get("key").and_then(Value::as_str).unwrap_or("");
            let e = t.get("effect").and_then(Value::as_str).unwrap_or("");
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        })
    };
    let missing: Vec<&str> = [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    .into_iter()
    .filter(|k| !tolerates(k))
    .collect();
    for key in missing {
        tolerations.push(json!({
            "key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300
        }));
    }
}

/// Pods that are bound to a node and not finished are deleted gracefully: the grace period
/// to use, or `None` for an immediate delete.
pub(crate) fn pod_grace_period(obj: &Value, requested: Option<i64>) -> Option<i64> {
    let node = str_at(obj, "/spec/nodeName");
    let phase = str_at(obj, "/status/phase");
    if node.is_empty() || matches!(phase, "Succeeded" | "Failed") {
        return None;
    }
    let grace = requested
        .or_else(|| {
            obj.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
        })
        .unwrap_or(30);
    (grace > 0).then_some(grace)
}
