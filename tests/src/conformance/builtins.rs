//! Built-in kinds' own rules: immutable ConfigMaps and Secrets, how Go's types store empty
//! maps, the defaults and admission a Pod and a Job get, Service validation, the field
//! selectors each kind supports and the bodies `/scale` takes.

use serde_json::{Value, json};

use super::{Env, Failure, Outcome, Raw, causes, ensure, ensure_eq, ensure_status, get, raw};

async fn send(env: &Env, method: &str, path: &str, ct: &str, body: Value) -> Result<Raw, Failure> {
    raw(
        &env.client,
        method,
        path,
        Some(ct),
        None,
        Some(serde_json::to_vec(&body)?),
    )
    .await
}

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";

/// `fieldsV1` of every managedFields entry.
fn managed(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|es| es.iter().map(|e| e["fieldsV1"].clone()).collect())
        .unwrap_or_default()
}

pub(super) async fn configmap_and_secret_rules(env: &Env) -> Outcome {
    let ns = env.namespace("cmsecret").await?;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    const WHY: &str = "Forbidden: field is immutable when `immutable` is set";

    // An immutable ConfigMap: data, binaryData and the flag itself are frozen; metadata is not.
    let r = send(
        env,
        "POST",
        &cms,
        JSON,
        json!({"metadata": {"name": "im"}, "data": {"a": "b"}, "immutable": true}),
    )
    .await?;
    ensure_eq!(r.status, 201, "immutable ConfigMap created: {:?}", r.json());
    let r = send(
        env,
        "PUT",
        &format!("{cms}/im"),
        JSON,
        json!({"metadata": {"name": "im"}, "data": {"a": "c"}, "binaryData": {"b": "YQ=="}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!("ConfigMap \"im\" is invalid: [immutable: {WHY}, data: {WHY}, binaryData: {WHY}]"),
        "update of an immutable ConfigMap"
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            ("FieldValueForbidden", "immutable", WHY),
            ("FieldValueForbidden", "data", WHY),
            ("FieldValueForbidden", "binaryData", WHY),
        ]),
        "causes"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cms}/im"),
        MERGE,
        json!({"immutable": false}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!("ConfigMap \"im\" is invalid: immutable: {WHY}"),
        "unsetting immutable"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cms}/im"),
        MERGE,
        json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "labels of an immutable ConfigMap: {:?}",
        r.json()
    );

    // An immutable Secret, and a Secret's type, which never changes.
    let r = send(
        env,
        "POST",
        &secrets,
        JSON,
        json!({"metadata": {"name": "is"}, "data": {"a": "YQ=="}, "immutable": true}),
    )
    .await?;
    ensure_eq!(r.status, 201, "immutable Secret created: {:?}", r.json());
    let r = send(
        env,
        "PUT",
        &format!("{secrets}/is"),
        JSON,
        json!({"metadata": {"name": "is"}, "type": "x", "stringData": {"a": "b"}, "immutable": true}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "Secret \"is\" is invalid: [type: Invalid value: \"x\": field is immutable, data: {WHY}]"
        ),
        "update of an immutable Secret"
    );

    // Base64 that does not decode: 400 in a create or update body, 422 through a patch.
    let r = send(
        env,
        "POST",
        &secrets,
        JSON,
        json!({"metadata": {"name": "bad"}, "data": {"a": "!!!"}}),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0",
        "bad base64 on create"
    );
    let r = send(
        env,
        "POST",
        &secrets,
        JSON,
        json!({"metadata": {"name": "s1"}, "data": {"a": "YQ=="}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "secret created: {:?}", r.json());
    for (ct, body) in [
        (MERGE, json!({"data": {"b": "!!!"}})),
        (
            JSON_PATCH,
            json!([{"op": "add", "path": "/data/b", "value": "!!!"}]),
        ),
    ] {
        let r = send(env, "PATCH", &format!("{secrets}/s1"), ct, body).await?;
        let (code, reason, message) = r.status();
        ensure!(
            code == 422
                && reason == "Invalid"
                && message.starts_with(" \"\" is invalid: patch: Invalid value: ")
                && message.ends_with("\": illegal base64 data at input byte 0"),
            "bad base64 through a {ct} patch: {code} {reason} {message}"
        );
    }

    // Go's types do not encode an empty map: the last key removed takes the map with it, and a
    // manager that owns nothing any more has no managedFields entry.
    let r = send(
        env,
        "POST",
        &cms,
        JSON,
        json!({"metadata": {"name": "em", "labels": {"l": "v"}, "annotations": {"an": "v"}},
               "data": {"a": "b"}, "binaryData": {"x": "YQ=="}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "created: {:?}", r.json());
    let r = send(
        env,
        "PATCH",
        &format!("{cms}/em"),
        MERGE,
        json!({"metadata": {"labels": {"l": null}, "annotations": {"an": null}},
               "data": {"a": null}, "binaryData": {"x": null}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 200, "patched: {v:?}");
    for ptr in [
        "/data",
        "/binaryData",
        "/metadata/labels",
        "/metadata/annotations",
        "/metadata/managedFields",
    ] {
        ensure!(v.pointer(ptr).is_none(), "{ptr} is gone: {v}");
    }
    let r = send(
        env,
        "POST",
        &cms,
        JSON,
        json!({"metadata": {"name": "em2", "labels": {}, "finalizers": [], "ownerReferences": []},
               "data": {"k": "v"}, "binaryData": {}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 201, "created with empty maps: {v:?}");
    for ptr in [
        "/binaryData",
        "/metadata/labels",
        "/metadata/finalizers",
        "/metadata/ownerReferences",
    ] {
        ensure!(v.pointer(ptr).is_none(), "{ptr} is not stored: {v}");
    }
    let owned = managed(&v);
    ensure!(
        owned.len() == 1
            && owned[0]["f:data"].get("f:k").is_some()
            && owned[0].get("f:binaryData").is_none()
            && owned[0].get("f:metadata").is_none(),
        "managed fields of a create with empty maps: {owned:?}"
    );
    Ok(())
}

/// Defaults of workloads as their creator sees them, and what the creator owns: probes'
/// periods and thresholds, a StatefulSet's claim retention and claim templates (whole
/// PersistentVolumeClaims), a DaemonSet's template generation annotation (one more for each
/// template change), and a Service whose cluster IPs the creator does not own.
pub(super) async fn workload_defaults_and_owners(env: &Env) -> Outcome {
    let ns = env.namespace("wldefaults").await?;
    let apps = format!("/apis/apps/v1/namespaces/{ns}");
    let labels = json!({"app": "x"});
    let template = json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c",
        "image": "registry.example/c:1", "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]}});
    let fields = |v: &Value| v["metadata"]["managedFields"][0]["fieldsV1"].clone();

    let r = send(env, "POST", &format!("{apps}/statefulsets"), JSON, json!({"metadata": {"name": "ss"},
        "spec": {"serviceName": "s", "selector": {"matchLabels": labels}, "template": template,
                 "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}]}})).await?;
    ensure_eq!(
        r.status,
        201,
        "statefulset: {}",
        String::from_utf8_lossy(&r.body)
    );
    let v = r.json();
    ensure_eq!(
        v["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
        "claim retention"
    );
    ensure_eq!(
        v["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}),
        "update strategy"
    );
    let claim = &v["spec"]["volumeClaimTemplates"][0];
    ensure_eq!(
        (
            &claim["apiVersion"],
            &claim["kind"],
            &claim["spec"]["volumeMode"],
            &claim["status"]
        ),
        (
            &json!("v1"),
            &json!("PersistentVolumeClaim"),
            &json!("Filesystem"),
            &json!({"phase": "Pending"})
        ),
        "a claim template"
    );
    let probe = &v["spec"]["template"]["spec"]["containers"][0]["readinessProbe"];
    ensure_eq!(
        probe,
        &json!({"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "timeoutSeconds": 1,
                "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}),
        "a probe"
    );
    ensure_eq!(
        fields(&v)["f:spec"]["f:persistentVolumeClaimRetentionPolicy"],
        json!({".": {}, "f:whenDeleted": {}, "f:whenScaled": {}}),
        "the creator owns the defaults"
    );

    let ds = json!({"metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": labels}, "template": template}});
    let r = send(env, "POST", &format!("{apps}/daemonsets"), JSON, ds).await?;
    ensure_eq!(
        r.status,
        201,
        "daemonset: {}",
        String::from_utf8_lossy(&r.body)
    );
    let generation = |v: &Value| {
        v["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone()
    };
    ensure_eq!(
        generation(&r.json()),
        json!("1"),
        "a new DaemonSet's template generation"
    );
    ensure_eq!(
        fields(&r.json())["f:metadata"],
        json!({"f:annotations": {".": {}, "f:deprecated.daemonset.template.generation": {}}}),
        "the creator owns the annotation"
    );
    let path = format!("{apps}/daemonsets/ds");
    let r = send(
        env,
        "PATCH",
        &path,
        MERGE,
        json!({"spec": {"minReadySeconds": 5}}),
    )
    .await?;
    ensure_eq!(
        generation(&r.json()),
        json!("1"),
        "a change outside the template"
    );
    let r = send(
        env,
        "PATCH",
        &path,
        MERGE,
        json!({"spec": {"template": {"metadata": {"annotations": {"x": "1"}}}}}),
    )
    .await?;
    ensure_eq!(generation(&r.json()), json!("2"), "a template change");

    let r = send(
        env,
        "POST",
        &format!("/api/v1/namespaces/{ns}/services"),
        JSON,
        json!({"metadata": {"name": "s"}, "spec": {"selector": labels, "ports": [{"port": 80}]}}),
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "service: {}",
        String::from_utf8_lossy(&r.body)
    );
    let owned = fields(&r.json())["f:spec"]
        .as_object()
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    ensure_eq!(
        owned,
        vec![
            "f:internalTrafficPolicy",
            "f:ports",
            "f:selector",
            "f:sessionAffinity",
            "f:type"
        ],
        "a Service's creator does not own its allocated cluster IPs"
    );
    Ok(())
}

pub(super) async fn pod_and_job_defaults(env: &Env) -> Outcome {
    let ns = env.namespace("poddefaults").await?;
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let container = json!([{"name": "c", "image": "registry.example/c:1"}]);

    // Defaults (`enableServiceLinks`) and what the Priority and DefaultTolerationSeconds
    // admission plugins add, which the creator does not own.
    let r = send(
        env,
        "POST",
        &pods,
        JSON,
        json!({"metadata": {"name": "p"}, "spec": {"containers": container}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 201, "pod created: {v:?}");
    let spec = &v["spec"];
    ensure_eq!(
        spec["enableServiceLinks"],
        json!(true),
        "enableServiceLinks"
    );
    ensure_eq!(spec["priority"], json!(0), "priority");
    ensure_eq!(
        spec["preemptionPolicy"],
        json!("PreemptLowerPriority"),
        "preemptionPolicy"
    );
    let toleration = |key: &str| json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
    ensure_eq!(
        spec["tolerations"],
        json!([
            toleration("node.kubernetes.io/not-ready"),
            toleration("node.kubernetes.io/unreachable")
        ]),
        "default tolerations"
    );
    let owned = managed(&v);
    ensure_eq!(owned.len(), 1, "one manager: {owned:?}");
    let owned_spec = &owned[0]["f:spec"];
    for f in ["f:enableServiceLinks", "f:restartPolicy"] {
        ensure!(owned_spec.get(f).is_some(), "{f} owned: {owned_spec}");
    }
    for f in ["f:priority", "f:preemptionPolicy", "f:tolerations"] {
        ensure!(owned_spec.get(f).is_none(), "{f} not owned: {owned_spec}");
    }
    ensure!(owned[0].get("f:status").is_none(), "status not owned");

    // A toleration of every taint covers both; a system class gives its priority.
    let r = send(
        env,
        "POST",
        &pods,
        JSON,
        json!({"metadata": {"name": "crit"}, "spec": {"containers": container,
               "priorityClassName": "system-cluster-critical",
               "tolerations": [{"operator": "Exists"}]}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 201, "critical pod: {v:?}");
    ensure_eq!(
        v["spec"]["priority"],
        json!(2_000_000_000),
        "system priority"
    );
    ensure_eq!(
        v["spec"]["tolerations"],
        json!([{"operator": "Exists"}]),
        "tolerations kept"
    );
    for (name, extra, message) in [
        (
            "given",
            json!({"priority": 5}),
            "pods \"given\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name",
        ),
        (
            "noclass",
            json!({"priorityClassName": "nope"}),
            "pods \"noclass\" is forbidden: no PriorityClass with name nope was found",
        ),
    ] {
        let mut spec = json!({"containers": container});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        let r = send(
            env,
            "POST",
            &pods,
            JSON,
            json!({"metadata": {"name": name}, "spec": spec}),
        )
        .await?;
        ensure_status!(r, 403, "Forbidden", message, "pod {name}");
    }

    // A Job: its defaults, and the selector and labels generated from its uid.
    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    let r = send(
        env,
        "POST",
        &jobs,
        JSON,
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": container}}}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 201, "job created: {v:?}");
    let uid = v["metadata"]["uid"].as_str().unwrap_or("").to_string();
    ensure!(!uid.is_empty(), "uid: {v}");
    let spec = &v["spec"];
    for (field, want) in [
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("manualSelector", json!(false)),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
    ] {
        ensure_eq!(spec[field], want, "job spec.{field}");
    }
    let labels = json!({
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid, "job-name": "j"
    });
    ensure_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        "job selector"
    );
    ensure_eq!(
        spec["template"]["metadata"]["labels"],
        labels,
        "template labels"
    );
    ensure_eq!(v["metadata"]["labels"], labels, "job labels");
    let owned = managed(&v);
    ensure!(
        owned.len() == 1
            && owned[0].get("f:metadata").is_none()
            && owned[0]["f:spec"].get("f:selector").is_none()
            && owned[0]["f:spec"]["f:template"].get("f:metadata").is_none()
            && owned[0]["f:spec"].get("f:backoffLimit").is_some(),
        "the generated selector and labels are not the creator's: {owned:?}"
    );
    let r = send(
        env,
        "POST",
        &jobs,
        JSON,
        json!({"metadata": {"name": "j2"}, "spec": {"template": {"spec": {"containers": container}}}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "Job.batch \"j2\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
        "a job whose pods restart Always"
    );
    Ok(())
}

pub(super) async fn service_validation(env: &Env) -> Outcome {
    let ns = env.namespace("svcval").await?;
    let svcs = format!("/api/v1/namespaces/{ns}/services");
    const RANGE: &str = "must be between 1 and 65535, inclusive";
    let r = send(
        env,
        "POST",
        &svcs,
        JSON,
        json!({"metadata": {"name": "s"}, "spec": {"type": "Bogus", "ports": [{"port": 70000}]}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "Service \"s\" is invalid: [spec.ports[0].port: Invalid value: 70000: {RANGE}, spec.ports[0].targetPort: Invalid value: 70000: {RANGE}, spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"]"
        ),
        "port out of range and unknown type"
    );
    // A target port of 0 is no target port: the port is the default.
    let r = send(
        env,
        "POST",
        &svcs,
        JSON,
        json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": 0}]}}),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 201, "valid service: {v:?}");
    ensure_eq!(
        v["spec"]["ports"][0]["targetPort"],
        json!(80),
        "target port"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{svcs}/s"),
        MERGE,
        json!({"spec": {"ports": [{"port": 0}]}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "Service \"s\" is invalid: [spec.ports[0].port: Invalid value: 0: {RANGE}, spec.ports[0].targetPort: Invalid value: 0: {RANGE}]"
        ),
        "update to port 0"
    );
    Ok(())
}

pub(super) async fn builtin_field_selectors(env: &Env) -> Outcome {
    let ns = env.namespace("fieldsel").await?;
    let known = |label: &str| {
        format!(
            "\"{label}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        )
    };
    let not_supported = |label: &str| format!("field label not supported: {label}");
    let cases: Vec<(String, Option<String>)> = vec![
        // Terms are sorted before their labels are checked.
        (
            format!("/api/v1/namespaces/{ns}/pods?fieldSelector=spec.nodeName%3Dx,z%3D1,b%3D1"),
            Some(not_supported("b")),
        ),
        (
            format!("/api/v1/namespaces/{ns}/pods?fieldSelector=spec.host%3Dx,status.podIPs%3D1"),
            None,
        ),
        (
            format!("/api/v1/namespaces/{ns}/pods?fieldSelector=z%3D1,b"),
            Some("invalid selector: 'z=1,b'; can't understand 'b'".into()),
        ),
        (
            format!(
                "/api/v1/namespaces/{ns}/services?fieldSelector=spec.clusterIP%3D1,spec.type%3DClusterIP"
            ),
            None,
        ),
        (
            format!("/api/v1/namespaces/{ns}/services?fieldSelector=status.replicas%3D1"),
            Some(not_supported("status.replicas")),
        ),
        (
            format!(
                "/api/v1/namespaces/{ns}/replicationcontrollers?fieldSelector=status.replicas%3D1"
            ),
            None,
        ),
        (
            "/api/v1/namespaces?fieldSelector=a%3D1".into(),
            Some(not_supported("a")),
        ),
        (
            format!("/apis/apps/v1/namespaces/{ns}/replicasets?fieldSelector=status.replicas%3D1"),
            Some(known("status.replicas")),
        ),
        (
            format!("/apis/apps/v1/namespaces/{ns}/deployments?fieldSelector=status.replicas%3D1"),
            Some(known("status.replicas")),
        ),
        (
            format!("/apis/batch/v1/namespaces/{ns}/jobs?fieldSelector=status.successful%3D1"),
            None,
        ),
        (
            format!("/apis/batch/v1/namespaces/{ns}/jobs?fieldSelector=spec.completions%3D1"),
            Some("field label \"spec.completions\" not supported for Job".into()),
        ),
        (
            format!("/api/v1/namespaces/{ns}/configmaps?fieldSelector=spec.unschedulable%3Dtrue"),
            Some(known("spec.unschedulable")),
        ),
    ];
    for (path, want) in cases {
        let r = get(env, &path).await?;
        match want {
            None => ensure_eq!(r.status, 200, "{path}: {:?}", r.json()),
            Some(message) => ensure_status!(r, 400, "BadRequest", message, "{path}"),
        }
    }
    Ok(())
}

pub(super) async fn scale_subresource_bodies(env: &Env) -> Outcome {
    let ns = env.namespace("scalebody").await?;
    let deploys = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let deploy = |name: &str| {
        json!({"metadata": {"name": name}, "spec": {"replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}}})
    };
    let r = send(env, "POST", &deploys, JSON, deploy("d")).await?;
    ensure_eq!(r.status, 201, "deployment: {:?}", r.json());
    let scale = format!("{deploys}/d/scale");
    // A JSON patch applies to the Scale, not to the Deployment.
    let r = send(
        env,
        "PATCH",
        &scale,
        JSON_PATCH,
        json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
    )
    .await?;
    let v = r.json();
    ensure_eq!(r.status, 200, "JSON patch of the scale: {v:?}");
    ensure_eq!(v["kind"], json!("Scale"), "kind");
    ensure_eq!(v["spec"], json!({"replicas": 3}), "scale spec");
    ensure_eq!(v["status"]["selector"], json!("a=b"), "scale selector");
    let r = send(
        env,
        "PATCH",
        &scale,
        JSON_PATCH,
        json!([{"op": "add", "path": "/spec/paused", "value": true}]),
    )
    .await?;
    ensure_eq!(r.status, 200, "a field the Scale lacks: {:?}", r.json());
    let d = get(env, &format!("{deploys}/d")).await?.json();
    ensure_eq!(d["spec"]["replicas"], json!(3), "deployment replicas");
    ensure!(d["spec"].get("paused").is_none(), "not paused: {d}");
    // A Scale body must name the object of the URL.
    let body = |name: Value, namespace: &str| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": name, "namespace": namespace}, "spec": {"replicas": 2}})
    };
    for (b, message) in [
        (
            body(json!("other"), &ns),
            "the name of the object (other) does not match the name on the URL (d)",
        ),
        (
            body(json!(""), &ns),
            "the name of the object (d based on URL) was undeterminable: name must be provided",
        ),
        (
            body(json!("d"), "elsewhere"),
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    ] {
        let r = send(env, "PUT", &scale, JSON, b).await?;
        ensure_status!(r, 400, "BadRequest", message, "scale PUT");
    }
    // The same checks for the object itself.
    let mut unnamed = deploy("");
    unnamed["metadata"] = json!({});
    let r = send(env, "PUT", &format!("{deploys}/d"), JSON, unnamed).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the name of the object (d based on URL) was undeterminable: name must be provided",
        "PUT without a name"
    );
    let mut moved = deploy("d");
    moved["metadata"]["namespace"] = json!("elsewhere");
    let r = send(env, "PUT", &format!("{deploys}/d"), JSON, moved).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
        "PUT into another namespace"
    );
    let d = get(env, &format!("{deploys}/d")).await?.json();
    ensure_eq!(d["spec"]["replicas"], json!(3), "replicas unchanged");
    Ok(())
}

/// One request that kube-apiserver refuses with 422: its body and the `(reason, field,
/// message)` causes it answers with (a single cause where Go's map order would shuffle them).
struct Refused {
    what: &'static str,
    method: &'static str,
    path: String,
    body: Value,
    causes: Vec<(&'static str, String, String)>,
}

/// Built-in kinds' key, type, finalizer, container and selector rules, and the defaults that
/// go with them: ConfigMap and Secret keys, the keys each Secret type needs, finalizer names,
/// container names, a workload's immutable selector, a Namespace's `kubernetes` finalizer and
/// a Pod's requests taken from its limits.
pub(super) async fn builtin_keys_types_and_names(env: &Env) -> Outcome {
    let ns = env.namespace("keys").await?;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    const KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    let invalid = |field: &str, value: &str, why: &str| {
        (
            "FieldValueInvalid",
            field.to_string(),
            format!("Invalid value: \"{value}\": {why}"),
        )
    };
    let required = |field: &str| {
        (
            "FieldValueRequired",
            field.to_string(),
            "Required value".to_string(),
        )
    };
    let duplicate = |field: &str, value: &str| {
        (
            "FieldValueDuplicate",
            field.to_string(),
            format!("Duplicate value: \"{value}\""),
        )
    };
    let secret = |name: &str, ty: &str, data: Value| json!({"metadata": {"name": name}, "type": ty, "data": data});
    let pod = |name: &str, init: Value, containers: Value| json!({"metadata": {"name": name}, "spec": {"initContainers": init, "containers": containers}});
    let c = |name: &str| json!({"name": name, "image": "x"});
    let refused = vec![
        Refused {
            what: "a ConfigMap key with a space",
            method: "POST",
            path: cms.clone(),
            body: json!({"metadata": {"name": "k1"}, "data": {"bad key!": "x"}}),
            causes: vec![invalid("data[bad key!]", "bad key!", KEY)],
        },
        Refused {
            what: "a ConfigMap key starting with ..",
            method: "POST",
            path: cms.clone(),
            body: json!({"metadata": {"name": "k2"}, "binaryData": {"..x": "eA=="}}),
            causes: vec![invalid("binaryData[..x]", "..x", "must not start with '..'")],
        },
        Refused {
            what: "a key in both data and binaryData",
            method: "POST",
            path: cms.clone(),
            body: json!({"metadata": {"name": "k3"}, "data": {"a": "x"}, "binaryData": {"a": "eA=="}}),
            causes: vec![invalid("data[a]", "a", "duplicate of key present in binaryData")],
        },
        Refused {
            what: "a Secret key with a space",
            method: "POST",
            path: secrets.clone(),
            body: json!({"metadata": {"name": "s0"}, "stringData": {"bad key!": "x"}}),
            causes: vec![invalid("data[bad key!]", "bad key!", KEY)],
        },
        Refused {
            what: "a TLS Secret without its keys",
            method: "POST",
            path: secrets.clone(),
            body: secret("s1", "kubernetes.io/tls", json!({})),
            causes: vec![required("data[tls.crt]"), required("data[tls.key]")],
        },
        Refused {
            what: "a basic-auth Secret with neither username nor password",
            method: "POST",
            path: secrets.clone(),
            body: secret("s2", "kubernetes.io/basic-auth", json!({})),
            causes: vec![required("data[username]"), required("data[password]")],
        },
        Refused {
            what: "an ssh-auth Secret with an empty key",
            method: "POST",
            path: secrets.clone(),
            body: secret("s3", "kubernetes.io/ssh-auth", json!({"ssh-privatekey": ""})),
            causes: vec![required("data[ssh-privatekey]")],
        },
        Refused {
            what: "a service-account-token Secret without its annotation",
            method: "POST",
            path: secrets.clone(),
            body: secret("s4", "kubernetes.io/service-account-token", json!({})),
            causes: vec![required(
                "metadata.annotations[kubernetes.io/service-account.name]",
            )],
        },
        Refused {
            what: "a dockerconfigjson Secret whose configuration is not JSON",
            method: "POST",
            path: secrets.clone(),
            // "not json"
            body: secret("s5", "kubernetes.io/dockerconfigjson", json!({".dockerconfigjson": "bm90IGpzb24="})),
            causes: vec![invalid(
                "data[.dockerconfigjson]",
                "<secret contents redacted>",
                "invalid character 'o' in literal null (expecting 'u')",
            )],
        },
        Refused {
            what: "a dockerconfigjson Secret whose configuration is a JSON array",
            method: "POST",
            path: secrets.clone(),
            body: secret("s6", "kubernetes.io/dockerconfigjson", json!({".dockerconfigjson": "W10="})),
            causes: vec![invalid(
                "data[.dockerconfigjson]",
                "<secret contents redacted>",
                "json: cannot unmarshal array into Go value of type map[string]interface {}",
            )],
        },
        Refused {
            what: "a dockercfg Secret without its key",
            method: "POST",
            path: secrets.clone(),
            body: secret("s7", "kubernetes.io/dockercfg", json!({})),
            causes: vec![required("data[.dockercfg]")],
        },
        Refused {
            what: "finalizers: a bad qualified name, orphan with foregroundDeletion, an unqualified name",
            method: "POST",
            path: cms.clone(),
            body: json!({"metadata": {"name": "f1", "finalizers": ["bad!", "orphan", "foregroundDeletion", "example.com/ok"]}}),
            causes: vec![
                invalid(
                    "metadata.finalizers",
                    "bad!",
                    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                ),
                (
                    "FieldValueInvalid",
                    "metadata.finalizers".to_string(),
                    r#"Invalid value: ["bad!","orphan","foregroundDeletion","example.com/ok"]: finalizer orphan and foregroundDeletion cannot be both set"#.to_string(),
                ),
                invalid(
                    "metadata.finalizers[0]",
                    "bad!",
                    "name is neither a standard finalizer name nor is it fully qualified",
                ),
            ],
        },
        Refused {
            what: "containers sharing a name, and an init container named as a container",
            method: "POST",
            path: pods.clone(),
            body: pod("p1", json!([c("a"), c("i"), c("i")]), json!([c("a"), c("a")])),
            causes: vec![
                duplicate("spec.containers[1].name", "a"),
                duplicate("spec.initContainers[0].name", "a"),
                duplicate("spec.initContainers[2].name", "i"),
            ],
        },
        Refused {
            what: "a container name that is not a DNS label",
            method: "POST",
            path: pods.clone(),
            body: pod("p2", json!([]), json!([c("Bad_Name")])),
            causes: vec![invalid(
                "spec.containers[0].name",
                "Bad_Name",
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            )],
        },
    ];
    for r in &refused {
        let got = send(env, r.method, &r.path, JSON, r.body.clone()).await?;
        ensure_eq!(got.status, 422, "{}: {:?}", r.what, got.json());
        ensure_eq!(got.json()["reason"], "Invalid", "{}", r.what);
        let want: Vec<(&str, &str, &str)> = r
            .causes
            .iter()
            .map(|(a, b, c)| (*a, b.as_str(), c.as_str()))
            .collect();
        ensure_eq!(got.causes(), causes(&want), "{}", r.what);
    }

    // What the same rules let through: an empty TLS pair, a basic-auth password alone, other
    // Secret types, standard and qualified finalizers.
    for (name, body) in [
        (
            "ok1",
            secret(
                "ok1",
                "kubernetes.io/tls",
                json!({"tls.crt": "", "tls.key": ""}),
            ),
        ),
        (
            "ok2",
            json!({"metadata": {"name": "ok2"}, "type": "kubernetes.io/basic-auth", "stringData": {"password": ""}}),
        ),
        ("ok3", secret("ok3", "example.com/own", json!({}))),
        (
            "ok4",
            secret(
                "ok4",
                "kubernetes.io/dockerconfigjson",
                json!({".dockerconfigjson": "bnVsbA=="}),
            ),
        ),
    ] {
        let got = send(env, "POST", &secrets, JSON, body).await?;
        ensure_eq!(got.status, 201, "Secret {name}: {:?}", got.json());
    }
    let got = send(
        env,
        "POST",
        &cms,
        JSON,
        json!({"metadata": {"name": "ok", "finalizers": ["kubernetes", "orphan", "example.com/x"]}, "data": {"a.b_c-D": "x"}}),
    )
    .await?;
    ensure_eq!(
        got.status,
        201,
        "standard and qualified finalizers: {:?}",
        got.json()
    );
    let got = send(
        env,
        "PATCH",
        &format!("{cms}/ok"),
        MERGE,
        json!({"metadata": {"finalizers": null}}),
    )
    .await?;
    ensure_eq!(got.status, 200, "finalizers removed: {:?}", got.json());

    // An update is held to the same type rules: a TLS Secret may not lose its key.
    let got = send(
        env,
        "PUT",
        &format!("{secrets}/ok1"),
        JSON,
        secret("ok1", "kubernetes.io/tls", json!({"tls.crt": ""})),
    )
    .await?;
    ensure_eq!(
        got.status,
        422,
        "TLS Secret losing tls.key: {:?}",
        got.json()
    );
    ensure_eq!(
        got.causes(),
        causes(&[("FieldValueRequired", "data[tls.key]", "Required value")]),
        "causes"
    );

    // A Deployment's selector never changes.
    let labels = json!({"app": "a"});
    let got = send(
        env,
        "POST",
        &deployments,
        JSON,
        json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": {"app": "a", "tier": "t"}}, "spec": {"containers": [c("c")]}}}}),
    )
    .await?;
    ensure_eq!(got.status, 201, "Deployment: {:?}", got.json());
    let got = send(
        env,
        "PATCH",
        &format!("{deployments}/d"),
        MERGE,
        json!({"spec": {"selector": {"matchLabels": {"tier": "t"}}}}),
    )
    .await?;
    ensure_status!(
        got,
        422,
        "Invalid",
        r#"Deployment.apps "d" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"a","tier":"t"}}: field is immutable"#,
        "changing a Deployment's selector"
    );

    // Defaults: a new Namespace always has the `kubernetes` finalizer (after others), and a
    // Pod's limits are its requests where it names none.
    let name = format!("{ns}-fin");
    let got = send(
        env,
        "POST",
        "/api/v1/namespaces",
        JSON,
        json!({"metadata": {"name": name}, "spec": {"finalizers": ["example.com/x"]}}),
    )
    .await?;
    ensure_eq!(got.status, 201, "Namespace: {:?}", got.json());
    ensure_eq!(
        got.json()["spec"]["finalizers"],
        json!(["example.com/x", "kubernetes"]),
        "Namespace finalizers"
    );
    // The creator owns the finalizer list it sent, whole (an atomic list), not the
    // `kubernetes` finalizer the server adds.
    ensure_eq!(
        got.json()["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"],
        json!({"f:finalizers": {}}),
        "the Namespace creator's spec fields"
    );
    let mut limited = c("l");
    limited["resources"] =
        json!({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"memory": "1Mi"}});
    let got = send(
        env,
        "POST",
        &pods,
        JSON,
        pod("p3", json!([]), json!([limited])),
    )
    .await?;
    ensure_eq!(got.status, 201, "Pod with limits: {:?}", got.json());
    ensure_eq!(
        got.json()["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2", "memory": "1Mi"}}),
        "requests from limits"
    );
    ensure_eq!(got.json()["status"]["qosClass"], "Burstable", "qosClass");
    Ok(())
}

/// Workload and Pod spec rules, each answered with kube-apiserver's message (causes in its
/// order): replicas, a missing or mismatched selector, a template's restart policy, Deployment
/// strategies; a Pod's restart policy, ports, environment names and volume mounts. And the
/// Pod field selector `spec.hostNetwork`, which reads `false` when the field is unset.
pub(super) async fn workload_and_pod_spec_rules(env: &Env) -> Outcome {
    let ns = env.namespace("specrules").await?;
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let container = json!([{"name": "c", "image": "x"}]);
    let deployment = |name: &str, spec: Value| {
        let mut d = json!({"metadata": {"name": name}, "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": container}},
        }});
        if let (Some(d), Value::Object(extra)) = (d["spec"].as_object_mut(), spec) {
            d.extend(extra);
        }
        d
    };
    let mut no_selector = deployment("n", json!({}));
    no_selector["spec"]
        .as_object_mut()
        .map(|s| s.remove("selector"));
    let mut mismatched = deployment("m", json!({}));
    mismatched["spec"]["template"]["metadata"]["labels"] = json!({"a": "c", "z": "y"});
    let mut never = deployment("rp", json!({}));
    never["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    let mut replica_set = deployment("w", json!({"replicas": -1}));
    replica_set["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    const NOT_MATCHING: &str = "`selector` does not match template `labels`";
    let cases: Vec<(&str, String, Value, String)> = vec![
        (
            "no selector",
            deployments.clone(),
            no_selector,
            format!(r#"Deployment.apps "n" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {{"a":"b"}}: {NOT_MATCHING}]"#),
        ),
        (
            "template labels not matching",
            deployments.clone(),
            mismatched,
            format!(r#"Deployment.apps "m" is invalid: spec.template.metadata.labels: Invalid value: {{"a":"c","z":"y"}}: {NOT_MATCHING}"#),
        ),
        (
            "negative replicas",
            deployments.clone(),
            deployment("r", json!({"replicas": -1})),
            r#"Deployment.apps "r" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#.into(),
        ),
        (
            "a template that does not restart",
            deployments.clone(),
            never,
            r#"Deployment.apps "rp" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#.into(),
        ),
        (
            "Recreate with rollingUpdate",
            deployments.clone(),
            deployment("rc", json!({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}})),
            "Deployment.apps \"rc\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'".into(),
        ),
        (
            "no surge and no unavailability",
            deployments.clone(),
            deployment("z", json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}})),
            "Deployment.apps \"z\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when `maxSurge` is 0".into(),
        ),
        (
            "an unknown strategy",
            deployments.clone(),
            deployment("t", json!({"strategy": {"type": "Blue"}})),
            r#"Deployment.apps "t" is invalid: spec.strategy: Unsupported value: {"Type":"Blue","RollingUpdate":null}: supported values: "Recreate", "RollingUpdate""#.into(),
        ),
        (
            "a negative surge and over 100% unavailable",
            deployments.clone(),
            deployment("s", json!({"strategy": {"rollingUpdate": {"maxSurge": -1, "maxUnavailable": "150%"}}})),
            r#"Deployment.apps "s" is invalid: [spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0, spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%]"#.into(),
        ),
        (
            "a ReplicaSet's replicas and restart policy",
            format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            replica_set,
            r#"ReplicaSet.apps "w" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"]"#.into(),
        ),
        (
            "a Pod's ports, environment, mounts and restart policy",
            pods.clone(),
            json!({"metadata": {"name": "q"}, "spec": {
                "restartPolicy": "Sometimes",
                "volumes": [{"name": "v", "emptyDir": {}}],
                "containers": [{"name": "c", "image": "x",
                    "ports": [{"containerPort": 0}, {"containerPort": 80, "hostPort": 70000}],
                    "env": [{"name": ""}, {"name": "A=B"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/x"}, {"name": "w", "mountPath": "/y"}]}],
            }}),
            r#"Pod "q" is invalid: [spec.containers[0].ports[0].containerPort: Required value, spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[0].env[0].name: Required value, spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '=', spec.containers[0].volumeMounts[1].name: Not found: "w", spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]"#.into(),
        ),
    ];
    for (what, path, body, message) in cases {
        let r = send(env, "POST", &path, JSON, body).await?;
        ensure_status!(r, 422, "Invalid", message, "{what}");
    }

    let r = send(
        env,
        "POST",
        &pods,
        JSON,
        json!({"metadata": {"name": "h"}, "spec": {"containers": container}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "Pod h: {:?}", r.json());
    for (value, want) in [("false", 1), ("true", 0)] {
        let r = get(
            env,
            &format!("{pods}?fieldSelector=spec.hostNetwork%3D{value}"),
        )
        .await?;
        let n = r.json()["items"].as_array().map_or(0, Vec::len);
        ensure_eq!((r.status, n), (200, want), "spec.hostNetwork={value}");
    }
    Ok(())
}

/// A pod's `binding` (what a scheduler calls) and `eviction` (what `kubectl drain` calls):
/// their effects, errors and discovery entries.
pub(super) async fn pod_binding_and_eviction(env: &Env) -> Outcome {
    let ns = env.namespace("bind").await?;
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let pod = |name: &str| json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let binding = |name: &str, kind: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": name, "annotations": {"scheduled-by": "test"}},
        "target": {"kind": kind, "name": node}})
    };
    let eviction = |name: &str, options: Value| {
        json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name}, "deleteOptions": options})
    };
    let success = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    for name in ["p", "q"] {
        let r = send(env, "POST", &pods, JSON, pod(name)).await?;
        ensure_eq!(r.status, 201, "pod {name} created: {:?}", r.json());
    }

    // Binding: the node, the binding's annotations and PodScheduled, once.
    let r = send(
        env,
        "POST",
        &format!("{pods}/p/binding"),
        JSON,
        binding("p", "Node", "n1"),
    )
    .await?;
    ensure_eq!((r.status, r.json()), (201, success.clone()), "bound");
    let bound = get(env, &format!("{pods}/p")).await?.json();
    let scheduled = bound["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
        .map(|c| c["status"].clone());
    ensure_eq!(
        (
            bound["spec"]["nodeName"].clone(),
            bound["metadata"]["annotations"]["scheduled-by"].clone(),
            scheduled
        ),
        (json!("n1"), json!("test"), Some(json!("True"))),
        "the bound pod: {bound}"
    );
    let r = send(
        env,
        "POST",
        &format!("{pods}/p/binding"),
        JSON,
        binding("p", "Node", "n2"),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"",
        "bound twice"
    );
    ensure_eq!(
        r.json()["details"],
        json!({"name": "p", "kind": "pods/binding"}),
        "the conflict's details"
    );
    let r = send(
        env,
        "POST",
        &format!("{pods}/q/binding"),
        JSON,
        binding("other", "Node", "n1"),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "name in URL does not match name in Binding object",
        "a binding of another name"
    );
    // kube-apiserver reports a bad target as a 500 without a reason.
    let r = send(
        env,
        "POST",
        &format!("{pods}/q/binding"),
        JSON,
        binding("q", "Pod", "n1"),
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        "target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\"",
        "a binding to a Pod"
    );
    let r = send(
        env,
        "POST",
        &format!("{pods}/nope/binding"),
        JSON,
        binding("nope", "Node", "n1"),
    )
    .await?;
    ensure_status!(
        r,
        404,
        "NotFound",
        "pods \"nope\" not found",
        "binding a missing pod"
    );

    // Eviction: DisruptionTarget, then a delete (graceful for the bound pod).
    let r = send(
        env,
        "POST",
        &format!("{pods}/p/eviction"),
        JSON,
        eviction("p", json!(null)),
    )
    .await?;
    ensure_eq!((r.status, r.json()), (201, success.clone()), "evicted");
    let evicted = get(env, &format!("{pods}/p")).await?.json();
    let disruption = evicted["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionTarget"))
        .map(|c| {
            (
                c["status"].clone(),
                c["reason"].clone(),
                c["message"].clone(),
            )
        });
    ensure_eq!(
        (
            evicted["metadata"]["deletionTimestamp"].is_string(),
            evicted["metadata"]["deletionGracePeriodSeconds"].clone(),
            disruption
        ),
        (
            true,
            json!(30),
            Some((
                json!("True"),
                json!("EvictionByEvictionAPI"),
                json!("Eviction API: evicting")
            ))
        ),
        "the evicted pod: {evicted}"
    );
    let r = send(
        env,
        "POST",
        &format!("{pods}/q/eviction?dryRun=All"),
        JSON,
        eviction("q", json!(null)),
    )
    .await?;
    ensure_eq!(r.status, 201, "a dry-run eviction");
    ensure_eq!(
        get(env, &format!("{pods}/q")).await?.status,
        200,
        "still there after a dry run"
    );
    let r = send(
        env,
        "POST",
        &format!("{pods}/q/eviction"),
        JSON,
        eviction("q", json!({"gracePeriodSeconds": 0})),
    )
    .await?;
    ensure_eq!(r.status, 201, "evicted at once");
    ensure_eq!(get(env, &format!("{pods}/q")).await?.status, 404, "gone");
    let r = send(
        env,
        "POST",
        &format!("{pods}/p/eviction"),
        JSON,
        eviction("other", json!(null)),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "name in URL does not match name in Eviction object",
        "an eviction of another name"
    );

    // Only POST; other subresources do not take one.
    let not_allowed = "the server does not allow this method on the requested resource";
    let r = get(env, &format!("{pods}/p/binding")).await?;
    ensure_status!(r, 405, "MethodNotAllowed", not_allowed, "GET of a binding");
    let r = send(env, "POST", &format!("{pods}/p/status"), JSON, json!({})).await?;
    ensure_status!(r, 405, "MethodNotAllowed", not_allowed, "POST of a status");
    let r = send(env, "POST", &format!("{pods}/p/nothing"), JSON, json!({})).await?;
    ensure_eq!(r.status, 404, "POST of an unknown subresource");

    let list = get(env, "/api/v1").await?.json();
    let entries: Vec<Value> = list["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["name"] == "pods/binding" || r["name"] == "pods/eviction")
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    ensure_eq!(
        entries,
        vec![
            json!({"name": "pods/binding", "singularName": "", "namespaced": true, "kind": "Binding", "verbs": ["create"]}),
            json!({"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}),
        ],
        "discovery"
    );
    Ok(())
}

/// A pod's `log`, `exec`, `attach` and `portforward` with no kubelet to ask: kube-apiserver
/// checks the options, the pod and the container, then answers an unscheduled pod's log as
/// empty (204) and its connections as impossible (no host), and looks a scheduled pod's node
/// up.
pub(super) async fn pod_log(env: &Env) -> Outcome {
    let ns = env.namespace("podlog").await?;
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    for (name, containers) in [("one", vec!["a"]), ("two", vec!["a", "b"])] {
        let containers: Vec<Value> = containers
            .iter()
            .map(|c| json!({"name": c, "image": "busybox"}))
            .collect();
        let r = send(
            env,
            "POST",
            &pods,
            JSON,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                   "spec": {"containers": containers}}),
        )
        .await?;
        ensure_eq!(r.status, 201, "create pod {name}");
    }
    let log = |q: &str| format!("{pods}/{q}");
    let r = get(env, &log("one/log")).await?;
    ensure_eq!(
        (r.status, r.body.len()),
        (204, 0),
        "an unscheduled pod's log is empty"
    );
    let r = get(env, &log("two/log?container=b")).await?;
    ensure_eq!(r.status, 204, "a named container's log");
    let r = get(env, &log("one/log?container=x")).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "container x is not valid for pod one",
        "unknown container"
    );
    let r = get(env, &log("two/log")).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "a container name must be specified for pod two, choose one of: [a b]",
        "several containers and none named"
    );
    let r = get(env, &log("one/log?tailLines=-1&limitBytes=0")).await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "PodLogOptions \"one\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]",
        "bad options"
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueInvalid",
                "limitBytes",
                "Invalid value: 0: must be greater than 0"
            ),
            (
                "FieldValueInvalid",
                "tailLines",
                "Invalid value: -1: must be greater than or equal to 0"
            ),
        ]),
        "bad options' causes"
    );
    let r = get(
        env,
        &log("one/log?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z"),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "PodLogOptions \"one\" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        "sinceSeconds and sinceTime"
    );
    let r = get(env, &log("missing/log")).await?;
    ensure_status!(
        r,
        404,
        "NotFound",
        "pods \"missing\" not found",
        "a missing pod's log"
    );
    // exec, attach and portforward end where kube-apiserver would proxy to the kubelet.
    let no_host = "pod one does not have a host assigned";
    let connects: [(&str, &str, u16, &str, &str); 8] = [
        (
            "GET",
            "one/exec?command=ls&stdout=true",
            400,
            "BadRequest",
            no_host,
        ),
        (
            "POST",
            "one/exec?command=ls&stdout=true",
            400,
            "BadRequest",
            no_host,
        ),
        ("POST", "one/attach?stdout=true", 400, "BadRequest", no_host),
        (
            "GET",
            "one/portforward?ports=80",
            400,
            "BadRequest",
            no_host,
        ),
        (
            "POST",
            "one/exec?command=ls&container=x",
            400,
            "BadRequest",
            "container x is not valid for pod one",
        ),
        (
            "GET",
            "two/attach?stdout=true",
            400,
            "BadRequest",
            "a container name must be specified for pod two, choose one of: [a b]",
        ),
        (
            "POST",
            "missing/exec?command=ls",
            404,
            "NotFound",
            "pods \"missing\" not found",
        ),
        (
            "PUT",
            "one/exec",
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
    ];
    for (method, path, code, reason, message) in connects {
        let r = raw(&env.client, method, &log(path), None, None, None).await?;
        ensure_status!(r, code, reason, message, "{method} {path}");
    }
    let r = send(
        env,
        "POST",
        &log("one/binding"),
        JSON,
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "one"},
               "target": {"kind": "Node", "name": "nowhere"}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "bind pod one");
    let r = get(env, &log("one/log")).await?;
    ensure_status!(
        r,
        404,
        "NotFound",
        "pods \"nowhere\" not found",
        "the log of a pod bound to a node that does not exist"
    );
    let r = get(env, &log("one/exec?command=ls&stdout=true")).await?;
    ensure_status!(
        r,
        404,
        "NotFound",
        "pods \"nowhere\" not found",
        "exec in a pod bound to a node that does not exist"
    );
    Ok(())
}
