//! What the REST strategies of built-in types do on create and update: initial status,
//! the commonly visible defaults, a few validations, and type-specific rules (Secret
//! `stringData`, Service cluster IPs, Namespace finalizers, Pod spec immutability).

use crate::semantics::str_at;
use base64::Engine;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, FieldError, go_quote};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::storage::object::{self, ensure_object};
use kube_codegen_apimachinery::validation;

fn set_default(m: &mut Map<String, Value>, key: &str, v: Value) {
    if !m.contains_key(key) || m.get(key).is_some_and(Value::is_null) {
        m.insert(key.to_string(), v);
    }
}

fn image_pull_policy(image: &str) -> &'static str {
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
fn default_pod_spec(spec: &mut Value) {
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
                if let Some(Value::Array(ports)) = c.get_mut("ports") {
                    for p in ports {
                        set_default(ensure_object(p), "protocol", json!("TCP"));
                    }
                }
            }
        }
    }
}

fn qos_class(spec: &Value) -> &'static str {
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
fn pod_spec_errors(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = |field: &str| {
        spec.and_then(|s| s.get(field))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (containers, init) = (list("containers"), list("initContainers"));
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let str_of = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let volumes: Vec<String> = list("volumes").iter().map(|v| str_of(v, "name")).collect();
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
    errs
}

/// `validateContainerPorts`: a container port is set and in range, a host port in range.
fn container_port_errors(c: &Value, at: &str) -> Vec<FieldError> {
    const RANGE: &str = "must be between 1 and 65535, inclusive";
    let mut errs = Vec::new();
    let ports = c.get("ports").and_then(Value::as_array);
    for (j, p) in ports.into_iter().flatten().enumerate() {
        let port_at = format!("{at}.ports[{j}]");
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
fn env_errors(c: &Value, at: &str) -> Vec<FieldError> {
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
fn volume_mount_errors(c: &Value, at: &str, volumes: &[String]) -> Vec<FieldError> {
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

/// kube-apiserver's `MaxSecretSize`: the bytes a ConfigMap's `data` and `binaryData`, or a
/// Secret's `data`, may hold together.
pub(crate) const MAX_DATA_SIZE: usize = 1024 * 1024;

/// The bytes a base64 value decodes to (three for every four symbols; newlines and padding
/// carry none). Values that do not decode were refused when the body was decoded.
fn decoded_len(v: &Value) -> usize {
    let s = v.as_str().unwrap_or("");
    s.bytes()
        .filter(|b| !matches!(b, b'\n' | b'\r' | b'='))
        .count()
        * 3
        / 4
}

/// `ValidateConfigMap`'s and `ValidateSecret`'s size rule: at most [`MAX_DATA_SIZE`] bytes of
/// data, reported on `[]` for a ConfigMap and on `data` for a Secret, as kube-apiserver does.
fn data_size_errors(kind: Builtin, obj: &Value) -> Vec<FieldError> {
    let values = |field: &str| {
        obj.get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
    };
    let (field, total) = match kind {
        Builtin::ConfigMap => (
            "[]",
            values("data")
                .map(|v| v.as_str().map_or(0, str::len))
                .sum::<usize>()
                + values("binaryData").map(decoded_len).sum::<usize>(),
        ),
        Builtin::Secret => ("data", values("data").map(decoded_len).sum()),
        _ => return Vec::new(),
    };
    if total > MAX_DATA_SIZE {
        vec![FieldError::too_long(field, MAX_DATA_SIZE)]
    } else {
        Vec::new()
    }
}

/// `ValidateConfigMap`'s and `ValidateSecret`'s key rules: every key of `data` (and a
/// ConfigMap's `binaryData`) is a config key, and a ConfigMap key is in one map only.
fn data_key_errors(kind: Builtin, obj: &Value) -> Vec<FieldError> {
    let keys = |field: &str| {
        obj.get(field)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let bad_keys = |field: &str, keys: &[String]| {
        keys.iter()
            .flat_map(|k| {
                validation::is_config_map_key(k)
                    .into_iter()
                    .map(move |msg| FieldError::invalid_str(format!("{field}[{k}]"), k, msg))
            })
            .collect::<Vec<_>>()
    };
    let data = keys("data");
    match kind {
        Builtin::ConfigMap => {
            let binary = keys("binaryData");
            let mut errs = Vec::new();
            for k in &data {
                errs.extend(bad_keys("data", std::slice::from_ref(k)));
                if binary.contains(k) {
                    errs.push(FieldError::invalid_str(
                        format!("data[{k}]"),
                        k,
                        "duplicate of key present in binaryData",
                    ));
                }
            }
            errs.extend(bad_keys("binaryData", &binary));
            errs
        }
        Builtin::Secret => bad_keys("data", &data),
        _ => Vec::new(),
    }
}

/// `ValidateSecret`'s rules for the well-known secret types: the keys (or annotation) each
/// needs, and docker configurations that are JSON objects.
fn secret_type_errors(obj: &Value) -> Vec<FieldError> {
    let data = obj.get("data").and_then(Value::as_object);
    let has = |key: &str| data.is_some_and(|d| d.contains_key(key));
    let bytes = |key: &str| {
        data.and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            .unwrap_or_default()
    };
    let required = |key: &str| FieldError::required(format!("data[{key}]"), "");
    let docker_config = |key: &str| {
        if !has(key) {
            return vec![required(key)];
        }
        let raw = bytes(key);
        let problem = match serde_json::from_slice::<Value>(&raw) {
            Err(e) => Some(crate::error::go_json_error(&e, &raw)),
            Ok(Value::Object(_)) => None,
            Ok(other) => Some(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                match other {
                    Value::Array(_) => "array",
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "bool",
                    _ => "null",
                }
            )),
        };
        // `null` unmarshals into a map without error in Go.
        let problem = problem.filter(|_| raw.trim_ascii() != b"null");
        problem
            .map(|p| {
                vec![FieldError::invalid(
                    format!("data[{key}]"),
                    go_quote("<secret contents redacted>"),
                    p,
                )]
            })
            .unwrap_or_default()
    };
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let named = obj
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if named {
                Vec::new()
            } else {
                vec![FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                )]
            }
        }
        "kubernetes.io/dockercfg" => docker_config(".dockercfg"),
        "kubernetes.io/dockerconfigjson" => docker_config(".dockerconfigjson"),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            vec![required("username"), required("password")]
        }
        "kubernetes.io/ssh-auth" if bytes("ssh-privatekey").is_empty() => {
            vec![required("ssh-privatekey")]
        }
        "kubernetes.io/tls" => ["tls.crt", "tls.key"]
            .into_iter()
            .filter(|k| !has(k))
            .map(required)
            .collect(),
        _ => Vec::new(),
    }
}

/// `SetDefaults_Pod`: a container's limits are its requests where it asks for none (Pods
/// only, not templates).
fn default_pod_requests(spec: &mut Value) {
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

/// apps/v1's rule that a workload's selector never changes.
fn selector_update_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let (before, after) = (old.pointer("/spec/selector"), new.pointer("/spec/selector"));
    if before == after {
        return Vec::new();
    }
    let value = after.map_or_else(|| "null".to_string(), Value::to_string);
    vec![FieldError::invalid(
        "spec.selector",
        value,
        "field is immutable",
    )]
}

fn secret_string_data(res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let m = ensure_object(obj);
    if let Some(Value::Object(sd)) = m.remove("stringData") {
        let data = ensure_object(m.entry("data").or_insert_with(|| json!({})));
        for (k, v) in sd {
            let s = v.as_str().unwrap_or("").as_bytes().to_vec();
            data.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(s)),
            );
        }
    }
    if let Some(Value::Object(data)) = m.get("data") {
        for v in data.values() {
            let problem = match v.as_str() {
                None => Some(0),
                Some(s) => crate::semantics::formats::go_base64_error(s),
            }
            .map(|at| format!("illegal base64 data at input byte {at}"));
            if let Some(problem) = problem {
                return Err(ApiError::bad_request(format!(
                    "{} in version \"{}\" cannot be handled as a {}: {problem}",
                    res.kind, res.version, res.kind
                )));
            }
        }
    }
    set_default(m, "type", json!("Opaque"));
    Ok(())
}

fn service_defaults(st: &mut State, obj: &mut Value, old: Option<&Value>) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    let is_external_name = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for p in ports {
            let p = ensure_object(p);
            set_default(p, "protocol", json!("TCP"));
            // `SetDefaults_Service`: a target port of 0 or "" is no target port.
            if matches!(p.get("targetPort"), Some(t) if *t == json!(0) || *t == json!("")) {
                p.remove("targetPort");
            }
            if let Some(port) = p.get("port").cloned() {
                set_default(p, "targetPort", port);
            }
        }
    }
    if is_external_name {
        return;
    }
    set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    let have_ip = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if !have_ip {
        let previous = old.and_then(|o| o.pointer("/spec/clusterIP")).cloned();
        let ip = match previous {
            Some(ip) => ip,
            None => {
                let n = st.next_cluster_ip;
                st.next_cluster_ip += 1;
                json!(format!("10.0.{}.{}", (n / 254) % 256, n % 254 + 1))
            }
        };
        spec.insert("clusterIP".into(), ip);
    }
    let ip = spec.get("clusterIP").cloned().unwrap_or(json!("None"));
    set_default(spec, "clusterIPs", json!([ip]));
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
}

fn deployment_like_defaults(obj: &mut Value, kind: Builtin) {
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    if matches!(
        kind,
        Builtin::Deployment
            | Builtin::ReplicaSet
            | Builtin::StatefulSet
            | Builtin::ReplicationController
    ) {
        set_default(spec, "replicas", json!(1));
    }
    if kind == Builtin::ReplicationController {
        // An RC's selector and template labels default to each other.
        let template_labels = spec
            .get("template")
            .and_then(|t| t.pointer("/metadata/labels"))
            .cloned();
        if spec.get("selector").is_none_or(Value::is_null)
            && let Some(l) = template_labels
        {
            spec.insert("selector".into(), l);
        }
        set_default(spec, "minReadySeconds", json!(0));
    } else {
        set_default(spec, "revisionHistoryLimit", json!(10));
    }
    // A strategy given without a type (Go clients send `strategy: {}`) is defaulted inside.
    let strategy = |spec: &mut Map<String, Value>, key: &str, rolling: Value| {
        let st = ensure_object(spec.entry(key).or_insert_with(|| json!({})));
        set_default(st, "type", json!("RollingUpdate"));
        if st.get("type") == Some(&json!("RollingUpdate")) {
            let ru = ensure_object(st.entry("rollingUpdate").or_insert_with(|| json!({})));
            if let Value::Object(d) = rolling {
                for (k, v) in d {
                    set_default(ru, &k, v);
                }
            }
        }
    };
    match kind {
        Builtin::Deployment => {
            set_default(spec, "progressDeadlineSeconds", json!(600));
            strategy(
                spec,
                "strategy",
                json!({"maxUnavailable": "25%", "maxSurge": "25%"}),
            );
        }
        Builtin::StatefulSet => {
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            strategy(spec, "updateStrategy", json!({"partition": 0}));
        }
        Builtin::DaemonSet => {
            strategy(
                spec,
                "updateStrategy",
                json!({"maxUnavailable": 1, "maxSurge": 0}),
            );
        }
        _ => {}
    }
    if let Some(template_spec) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
        default_pod_spec(template_spec);
    }
}

/// A workload's spec as `ValidateDeploymentSpec` and its siblings check it, in their order:
/// replicas, selector, template labels against the selector, the pod template (whose restart
/// policy must be `Always`), then a Deployment's strategy.
fn workload_errors(obj: &Value, kind: Builtin) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if kind != Builtin::DaemonSet
        && let Some(n) = obj.pointer("/spec/replicas").and_then(Value::as_i64)
        && n < 0
    {
        errs.push(FieldError::invalid(
            "spec.replicas",
            n.to_string(),
            NONNEGATIVE,
        ));
    }
    let selector = obj.pointer("/spec/selector");
    let have = object::string_map(obj.pointer("/spec/template/metadata/labels"));
    // A missing selector selects nothing, so no template matches it either.
    let matches = match selector {
        None => {
            errs.push(FieldError::required("spec.selector", ""));
            false
        }
        Some(sel) => {
            let want = if kind == Builtin::ReplicationController {
                object::string_map(Some(sel))
            } else {
                object::string_map(sel.get("matchLabels"))
            };
            want.iter().all(|(k, v)| have.get(k) == Some(v))
        }
    };
    if !matches {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            serde_json::to_string(&have).unwrap_or_default(),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(pod_spec_errors(
        obj.pointer("/spec/template/spec"),
        "spec.template.spec",
    ));
    let policy = str_at(obj, "/spec/template/spec/restartPolicy");
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if kind == Builtin::Deployment {
        errs.extend(deployment_strategy_errors(obj.pointer("/spec/strategy")));
    }
    errs
}

const NONNEGATIVE: &str = "must be greater than or equal to 0";

/// `ValidateDeploymentStrategy` with `ValidateRollingUpdateDeployment`.
fn deployment_strategy_errors(strategy: Option<&Value>) -> Vec<FieldError> {
    let rolling = strategy.and_then(|s| s.get("rollingUpdate"));
    match strategy.map(|s| str_at(s, "/type")).unwrap_or("") {
        "Recreate" if rolling.is_some() => vec![FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" => rolling.map(rolling_update_errors).unwrap_or_default(),
        other => {
            // Go prints the internal struct: `{"Type":"Blue","RollingUpdate":null}`.
            let ru = rolling.map_or_else(
                || "null".to_string(),
                |r| {
                    let field = |k: &str| r.get(k).map_or_else(|| "null".into(), Value::to_string);
                    format!(
                        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                        field("maxUnavailable"),
                        field("maxSurge")
                    )
                },
            );
            vec![FieldError {
                field: "spec.strategy".into(),
                kind: crate::error::FieldErrorKind::NotSupported(
                    format!("{{\"Type\":{},\"RollingUpdate\":{ru}}}", go_quote(other)),
                    vec![go_quote("Recreate"), go_quote("RollingUpdate")],
                ),
                detail: String::new(),
            }]
        }
    }
}

/// A rolling update's `maxUnavailable` and `maxSurge`: non-negative numbers or percentages,
/// not both zero, `maxUnavailable` at most 100%.
fn rolling_update_errors(ru: &Value) -> Vec<FieldError> {
    const AT: &str = "spec.strategy.rollingUpdate";
    let mut errs = Vec::new();
    // The value as Go renders an IntOrString, and as a number (a percentage's number).
    let value = |k: &str| {
        ru.get(k).map(|v| match v {
            Value::String(s) => (
                go_quote(s),
                s.strip_suffix('%').and_then(|n| n.parse::<i64>().ok()),
                true,
            ),
            other => (other.to_string(), other.as_i64(), false),
        })
    };
    for key in ["maxUnavailable", "maxSurge"] {
        let Some((shown, number, percent)) = value(key) else {
            continue;
        };
        let field = format!("{AT}.{key}");
        if percent && number.is_none_or(|n| n < 0) {
            errs.push(FieldError::invalid(
                field,
                shown,
                validation::regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    "[0-9]+%",
                    &["1%", "93%"],
                ),
            ));
        } else if !percent && number.is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid(field, shown, NONNEGATIVE));
        }
    }
    let zero = |k: &str| value(k).is_none_or(|(_, n, _)| n == Some(0));
    if zero("maxUnavailable")
        && zero("maxSurge")
        && let Some((shown, ..)) = value("maxUnavailable")
    {
        errs.push(FieldError::invalid(
            format!("{AT}.maxUnavailable"),
            shown,
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    if let Some((shown, Some(n), true)) = value("maxUnavailable")
        && n > 100
    {
        errs.push(FieldError::invalid(
            format!("{AT}.maxUnavailable"),
            shown,
            "must not be greater than 100%",
        ));
    }
    errs
}

/// `ValidateConfigMapUpdate`'s and `ValidateSecretUpdate`'s rule for an object created with
/// `immutable: true`: `immutable` may not be unset and `fields` may not change.
fn immutable_data_errors(old: &Value, new: &Value, fields: &[&str]) -> Vec<FieldError> {
    const WHY: &str = "field is immutable when `immutable` is set";
    let mut errs = Vec::new();
    if old.get("immutable") != Some(&json!(true)) {
        return errs;
    }
    if new.get("immutable") != Some(&json!(true)) {
        errs.push(FieldError::forbidden("immutable", WHY));
    }
    for field in fields {
        if old.get(*field) != new.get(*field) {
            errs.push(FieldError::forbidden(*field, WHY));
        }
    }
    errs
}

/// The port rules and `type` of `ValidateService` (kube-apiserver reports ports first).
fn service_spec_errors(spec: &Value) -> Vec<FieldError> {
    const RANGE: &str = "must be between 1 and 65535, inclusive";
    let mut errs = Vec::new();
    let in_range = |v: i64| (1..=65535).contains(&v);
    if let Some(ports) = spec.get("ports").and_then(Value::as_array) {
        for (i, p) in ports.iter().enumerate() {
            if let Some(port) = p.get("port").and_then(Value::as_i64)
                && !in_range(port)
            {
                errs.push(FieldError::invalid(
                    format!("spec.ports[{i}].port"),
                    port.to_string(),
                    RANGE,
                ));
            }
            if let Some(target) = p.get("targetPort").and_then(Value::as_i64)
                && !in_range(target)
            {
                errs.push(FieldError::invalid(
                    format!("spec.ports[{i}].targetPort"),
                    target.to_string(),
                    RANGE,
                ));
            }
        }
    }
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if let Some(t) = spec.get("type").and_then(Value::as_str)
        && !TYPES.contains(&t)
    {
        errs.push(FieldError::not_supported("spec.type", t, TYPES));
    }
    errs
}

/// The built-in PriorityClasses kube-apiserver creates at start.
fn system_priority(class: &str) -> Option<i64> {
    match class {
        "system-node-critical" => Some(2_000_001_000),
        "system-cluster-critical" => Some(2_000_000_000),
        _ => None,
    }
}

/// The mutating admission plugins kube-apiserver runs on a new Pod by default: `Priority`
/// (`spec.priority` and `spec.preemptionPolicy` from the PriorityClass — the fake stores
/// none, so only the built-in `system-*` classes and no class resolve) and
/// `DefaultTolerationSeconds` (NoExecute tolerations of not-ready and unreachable nodes for
/// 300 s, unless the pod tolerates them already).
fn pod_admission(res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let name = object::name(obj).to_string();
    let forbidden = |why: String| ApiError::forbidden(&res.group, &res.plural, &name, &why);
    let class = str_at(obj, "/spec/priorityClassName").to_string();
    let priority = if class.is_empty() {
        0
    } else {
        system_priority(&class)
            .ok_or_else(|| forbidden(format!("no PriorityClass with name {class} was found")))?
    };
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
    const PREEMPT: &str = "PreemptLowerPriority";
    if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
        && given != PREEMPT
    {
        return Err(forbidden(format!(
            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {PREEMPT} from the given PriorityClass name"
        )));
    }
    spec.insert("priority".into(), json!(priority));
    spec.insert("preemptionPolicy".into(), json!(PREEMPT));
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
    Ok(())
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

/// `SetDefaults_Job` (the labels copied from the template are what a read returns, as
/// kube-apiserver defaults the stored object again when it decodes it).
fn job_defaults(obj: &mut Value) {
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let unset = |m: &Map<String, Value>, k: &str| m.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_default(spec, "podReplacementPolicy", json!(replacement));
    set_default(spec, "manualSelector", json!(false));
    if let Some(Value::Object(labels)) = template_labels
        && !labels.is_empty()
    {
        let meta = object::meta_mut(obj);
        if meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        {
            meta.insert("labels".into(), Value::Object(labels));
        }
    }
}

/// The Job strategy's `generateSelector`: unless `spec.manualSelector`, the pod template gets
/// the job-name and controller-uid labels and the selector the controller-uid one.
fn job_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let name = object::name(obj).to_string();
    let uid = object::uid(obj).to_string();
    let generated = [
        ("job-name", &name),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("batch.kubernetes.io/controller-uid", &uid),
    ];
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    let template = ensure_object(spec.entry("template").or_insert_with(|| json!({})));
    let meta = ensure_object(template.entry("metadata").or_insert_with(|| json!({})));
    let labels = ensure_object(meta.entry("labels").or_insert_with(|| json!({})));
    for (k, v) in generated {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    let labels = labels.clone();
    let selector = ensure_object(spec.entry("selector").or_insert_with(|| json!({})));
    let match_labels = ensure_object(selector.entry("matchLabels").or_insert_with(|| json!({})));
    match_labels
        .entry("batch.kubernetes.io/controller-uid")
        .or_insert_with(|| json!(uid));
    // The job's own labels come from the template's when it has none (`SetDefaults_Job`).
    let meta = object::meta_mut(obj);
    if meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), Value::Object(labels));
    }
}

/// A Job's pods may only restart `OnFailure` or `Never`.
fn job_restart_policy_errors(obj: &Value) -> Vec<FieldError> {
    const FIELD: &str = "spec.template.spec.restartPolicy";
    const DETAIL: &str = "valid values: \"OnFailure\", \"Never\"";
    match str_at(obj, "/spec/template/spec/restartPolicy") {
        "OnFailure" | "Never" => Vec::new(),
        "" | "Always" => vec![FieldError::required(FIELD, DETAIL)],
        other => vec![FieldError::not_supported(
            FIELD,
            other,
            &["OnFailure", "Never"],
        )],
    }
}

/// `PrepareForCreate` + defaulting + `Validate` of a built-in type (for Pods and Jobs only
/// the defaults; [`admit_create`] does the rest).
pub(crate) fn prepare_create(st: &mut State, res: &Resource, obj: &mut Value) -> ApiResult<()> {
    let Some(kind) = res.builtin else {
        return Ok(());
    };
    match kind {
        Builtin::Namespace => {
            let name = object::name(obj).to_string();
            let labels = ensure_object(
                object::meta_mut(obj)
                    .entry("labels")
                    .or_insert_with(|| json!({})),
            );
            labels.insert("kubernetes.io/metadata.name".into(), json!(name));
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
        Builtin::Pod => {
            if let Some(spec) = ensure_object(obj).get_mut("spec") {
                default_pod_spec(spec);
                // `SetDefaults_Pod`, not for templates.
                set_default(ensure_object(spec), "enableServiceLinks", json!(true));
                default_pod_requests(spec);
            }
        }
        Builtin::Service => {
            service_defaults(st, obj, None);
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
            errs.extend(service_spec_errors(&spec));
            res.invalid_if_any(obj, errs)?;
            ensure_object(obj).insert("status".into(), json!({"loadBalancer": {}}));
        }
        Builtin::Secret => {
            secret_string_data(res, obj)?;
            let mut errs = data_key_errors(kind, obj);
            errs.extend(data_size_errors(kind, obj));
            errs.extend(secret_type_errors(obj));
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::ConfigMap => {
            let mut errs = data_key_errors(kind, obj);
            errs.extend(data_size_errors(kind, obj));
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::StatefulSet | Builtin::DaemonSet => {
            deployment_like_defaults(obj, kind);
            res.invalid_if_any(obj, workload_errors(obj, kind))?;
            ensure_object(obj).insert("status".into(), json!({}));
        }
        Builtin::ReplicationController => {
            deployment_like_defaults(obj, kind);
            res.invalid_if_any(obj, workload_errors(obj, kind))?;
            ensure_object(obj).insert("status".into(), json!({"replicas": 0}));
        }
        Builtin::Job => {
            if let Some(ts) = obj.pointer_mut("/spec/template/spec") {
                default_pod_spec(ts);
            }
            job_defaults(obj);
        }
        Builtin::Node => {
            ensure_object(obj).remove("status");
        }
        Builtin::Crd => {
            crate::semantics::crd::default(obj);
            let errs = crate::semantics::crd::validate(obj);
            res.invalid_if_any(obj, errs)?;
            let status = crate::semantics::crd::initial_status(obj);
            ensure_object(obj).insert("status".into(), status);
        }
        Builtin::MutatingWebhookConfiguration | Builtin::ValidatingWebhookConfiguration => {
            webhook_defaults(obj, kind == Builtin::MutatingWebhookConfiguration);
        }
        Builtin::ValidatingAdmissionPolicy => {
            crate::semantics::admission::policy::policy_defaults(obj);
            let errs = crate::semantics::admission::policy::validate_policy(obj);
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::ValidatingAdmissionPolicyBinding => {
            crate::semantics::admission::policy::binding_defaults(obj);
            let errs = crate::semantics::admission::policy::validate_binding(obj);
            res.invalid_if_any(obj, errs)?;
        }
        Builtin::Endpoints
        | Builtin::CoreEvent
        | Builtin::ServiceAccount
        | Builtin::EndpointSlice
        | Builtin::Event
        | Builtin::Lease
        | Builtin::LeaseCandidate => {}
    }
    Ok(())
}

/// What kube-apiserver does to a new object after its managed fields are recorded: mutating
/// admission, then the strategy's `PrepareForCreate` and `Validate`, for the kinds where
/// these set fields (a Pod's priority and tolerations, a Job's generated selector) — the
/// creator does not own those.
pub(crate) fn admit_create(res: &Resource, obj: &mut Value) -> ApiResult<()> {
    match res.builtin {
        Some(Builtin::Pod) => {
            pod_admission(res, obj)?;
            let errs = pod_spec_errors(obj.get("spec"), "spec");
            res.invalid_if_any(obj, errs)?;
            let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
            ensure_object(obj).insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        Some(Builtin::Job) => {
            job_selector(obj);
            let mut errs =
                pod_spec_errors(obj.pointer("/spec/template/spec"), "spec.template.spec");
            errs.extend(job_restart_policy_errors(obj));
            res.invalid_if_any(obj, errs)?;
            ensure_object(obj).insert("status".into(), json!({}));
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
            let name = object::name(new).to_string();
            let labels = ensure_object(
                object::meta_mut(new)
                    .entry("labels")
                    .or_insert_with(|| json!({})),
            );
            labels.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
        Builtin::Pod => {
            if let Some(spec) = ensure_object(new).get_mut("spec") {
                default_pod_spec(spec);
                default_pod_requests(spec);
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
            if strip_images(old.get("spec")) != strip_images(new.get("spec")) {
                res.invalid_if_any(
                    new,
                    vec![FieldError::forbidden(
                        "spec",
                        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
                    )],
                )?;
            }
        }
        Builtin::Service => {
            service_defaults(st, new, Some(old));
            res.invalid_if_any(
                new,
                service_spec_errors(new.get("spec").unwrap_or(&Value::Null)),
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
            secret_string_data(res, new)?;
            let mut errs = Vec::new();
            if old.get("type") != new.get("type") {
                let v = new
                    .get("type")
                    .map(crate::semantics::validation::render)
                    .unwrap_or_default();
                errs.push(FieldError::invalid("type", v, "field is immutable"));
            }
            errs.extend(immutable_data_errors(old, new, &["data"]));
            errs.extend(data_key_errors(kind, new));
            errs.extend(data_size_errors(kind, new));
            errs.extend(secret_type_errors(new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::ConfigMap => {
            let mut errs = immutable_data_errors(old, new, &["data", "binaryData"]);
            errs.extend(data_key_errors(kind, new));
            errs.extend(data_size_errors(kind, new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::StatefulSet | Builtin::DaemonSet => {
            deployment_like_defaults(new, kind);
            let mut errs = workload_errors(new, kind);
            errs.extend(selector_update_errors(old, new));
            res.invalid_if_any(new, errs)?;
        }
        Builtin::ReplicationController => {
            deployment_like_defaults(new, kind);
            res.invalid_if_any(new, workload_errors(new, kind))?;
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
        Builtin::MutatingWebhookConfiguration | Builtin::ValidatingWebhookConfiguration => {
            webhook_defaults(new, kind == Builtin::MutatingWebhookConfiguration);
        }
        Builtin::ValidatingAdmissionPolicy => {
            crate::semantics::admission::policy::policy_defaults(new);
            let errs = crate::semantics::admission::policy::validate_policy(new);
            res.invalid_if_any(new, errs)?;
        }
        Builtin::ValidatingAdmissionPolicyBinding => {
            crate::semantics::admission::policy::binding_defaults(new);
            let errs = crate::semantics::admission::policy::validate_binding(new);
            res.invalid_if_any(new, errs)?;
        }
        _ => {}
    }
    Ok(())
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
        let mut st = State::new(Config::default());
        let mut s =
            json!({"metadata": {"name": "s"}, "stringData": {"a": "hello"}, "data": {"b": "aGk="}});
        let r = res("Secret");
        assert!(prepare_create(&mut st, &r, &mut s).is_ok());
        assert_eq!(
            s,
            json!({"metadata": {"name": "s"}, "data": {"a": "aGVsbG8=", "b": "aGk="}, "type": "Opaque"})
        );
        let mut bad = json!({"metadata": {"name": "s"}, "data": {"b": "!!"}});
        assert_eq!(
            prepare_create(&mut st, &r, &mut bad).map_err(|e| e.code),
            Err(400)
        );
    }

    #[test]
    fn services_get_cluster_ips() {
        let mut st = State::new(Config::default());
        let r = res("Service");
        let mut s = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
        assert!(prepare_create(&mut st, &r, &mut s).is_ok());
        assert_eq!(s["spec"]["clusterIP"], "10.0.0.2");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(s["spec"]["type"], "ClusterIP");
        let mut none = json!({"metadata": {"name": "s"}, "spec": {}});
        assert_eq!(
            prepare_create(&mut st, &r, &mut none).map_err(|e| e.code),
            Err(422)
        );
        let mut upd = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 81}]}});
        assert!(prepare_update(&mut st, &r, &s, &mut upd).is_ok());
        assert_eq!(upd["spec"]["clusterIP"], "10.0.0.2");
    }

    #[test]
    fn pods_get_defaults_and_status() {
        let mut st = State::new(Config::default());
        let r = res("Pod");
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        assert!(prepare_create(&mut st, &r, &mut p).is_ok());
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert!(p.get("status").is_none(), "status comes with admission");
        assert!(admit_create(&r, &mut p).is_ok());
        assert_eq!(p["status"]["phase"], "Pending");
        assert_eq!(p["status"]["qosClass"], "BestEffort");
        assert_eq!(p["spec"]["priority"], 0);
        assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], "Always");
        let mut q = json!({"metadata": {"name": "p"}, "spec": {}});
        assert!(prepare_create(&mut st, &r, &mut q).is_ok());
        assert_eq!(admit_create(&r, &mut q).map_err(|e| e.code), Err(422));
        let mut r5 = json!({"metadata": {"name": "p"}, "spec": {"priority": 5,
            "containers": [{"name": "c", "image": "nginx"}]}});
        assert_eq!(admit_create(&r, &mut r5).map_err(|e| e.code), Err(403));
        assert_eq!(pod_grace_period(&p, None), None);
        let bound = json!({"spec": {"nodeName": "n"}, "status": {"phase": "Running"}});
        assert_eq!(pod_grace_period(&bound, None), Some(30));
        assert_eq!(pod_grace_period(&bound, Some(0)), None);
    }
}
