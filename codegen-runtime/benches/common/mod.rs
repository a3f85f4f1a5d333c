//! Fixtures shared by the benchmarks.
#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;

/// A ConfigMap of typical controller-cache size: name, namespace, resourceVersion, uid, two
/// labels, one annotation and a little data.
pub fn config_map(ns: &str, name: &str, i: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(ns.to_string()),
            resource_version: Some(format!("{}", 1000 + i)),
            uid: Some(format!("00000000-0000-0000-0000-{i:012}")),
            labels: Some(BTreeMap::from([
                ("app".to_string(), format!("app-{}", i % 10)),
                (
                    "tier".to_string(),
                    if i.is_multiple_of(2) { "front" } else { "back" }.to_string(),
                ),
            ])),
            annotations: Some(BTreeMap::from([(
                "owner".to_string(),
                "team-a".to_string(),
            )])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("key".to_string(), format!("value-{i}"))])),
        ..Default::default()
    }
}

/// `namespaces × per_namespace` ConfigMaps named `ns-<n>/obj-<i>`.
pub fn objects(namespaces: usize, per_namespace: usize) -> Vec<ConfigMap> {
    let mut v = Vec::with_capacity(namespaces * per_namespace);
    for n in 0..namespaces {
        let ns = format!("ns-{n}");
        for i in 0..per_namespace {
            v.push(config_map(&ns, &format!("obj-{i}"), n * per_namespace + i));
        }
    }
    v
}

/// 1 KiB of configuration text, different in each ConfigMap: `section.key = value` lines whose
/// keys come from a small vocabulary (as a config file's do) and whose values are numbers, host
/// names, paths, flags and 16-hex-digit tokens drawn at random (seeded by `i`), so the data is
/// neither one repeated byte nor the same in every object: about as compressible as real
/// configuration, where a store's compression cannot lean on copies of one text.
pub fn config_text(i: usize) -> String {
    use std::fmt::Write;
    const SECTIONS: [&str; 8] = [
        "server", "database", "cache", "auth", "logging", "metrics", "queue", "features",
    ];
    const KEYS: [&str; 14] = [
        "host",
        "port",
        "timeout_ms",
        "max_connections",
        "retries",
        "pool_size",
        "enabled",
        "endpoint",
        "token_ttl",
        "level",
        "path",
        "replicas",
        "batch_size",
        "region",
    ];
    const ENVS: [&str; 3] = ["prod", "staging", "dev"];
    let mut rng = fastrand::Rng::with_seed(i as u64);
    let mut text = String::with_capacity(1100);
    while text.len() < 1024 {
        let section = SECTIONS[rng.usize(..SECTIONS.len())];
        let key = KEYS[rng.usize(..KEYS.len())];
        let _ = match rng.u8(..5) {
            0 => writeln!(text, "{section}.{key} = {}", rng.u32(1..100_000)),
            1 => writeln!(
                text,
                "{section}.{key} = {section}-{}.{}.svc.cluster.local",
                rng.u16(..1000),
                ENVS[rng.usize(..ENVS.len())]
            ),
            2 => writeln!(text, "{section}.{key} = {}", rng.bool()),
            3 => writeln!(text, "{section}.{key} = {:016x}", rng.u64(..)),
            _ => writeln!(text, "{section}.{key} = /var/lib/{section}/{}", rng.u32(..)),
        };
    }
    text.truncate(1024);
    text
}

/// The labels the read benchmarks select on: `shard` (100 values, 1% each) and `half`
/// (`a`/`b`, 50% each), beside labels every object shares.
fn bench_labels(i: usize, shared: serde_json::Value) -> serde_json::Value {
    let mut labels = shared;
    labels["shard"] = format!("s-{}", i % 100).into();
    labels["half"] = if i.is_multiple_of(2) { "a" } else { "b" }.into();
    labels
}

/// A ConfigMap as the API server sends it: 1 KiB of configuration text, labels, and one
/// managedFields entry (server-side apply).
pub fn config_map_json(i: usize) -> String {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": format!("settings-{i:06}"), "namespace": "default",
            "uid": format!("6f1c2a4e-0000-4000-8000-{i:012}"),
            "resourceVersion": format!("{}", 1000 + i),
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "labels": bench_labels(i, serde_json::json!({"app.kubernetes.io/name": "settings", "app.kubernetes.io/part-of": "shop"})),
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                "time": "2026-11-01T10:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:config.ini": {}}, "f:metadata": {"f:labels": {
                    "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/part-of": {}, "f:shard": {}, "f:half": {}}}}}],
        },
        "data": {"config.ini": config_text(i)},
    })
    .to_string()
}

/// The spec of a Pod as a ReplicaSet makes it (one container with probes, env, resources and
/// the service-account volume), on node `node-{i % 100}`.
pub fn pod_spec(i: usize) -> serde_json::Value {
    serde_json::json!({
        "containers": [{
            "name": "web", "image": "registry.example.com/team/web:1.24.3",
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10},
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "nodeName": format!("node-{:03}", i % 100),
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
    })
}

/// A Pod as a ReplicaSet makes it, scheduled and running, with three managedFields entries
/// (controller, scheduler, kubelet).
pub fn pod_json(i: usize) -> String {
    let name = format!("web-7d9c5b8f6-{i:06}");
    let mf = |manager: &str, fields: serde_json::Value| {
        serde_json::json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
            "time": "2026-11-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields})
    };
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "default",
            "generateName": "web-7d9c5b8f6-",
            "uid": format!("8d2f1c1e-0000-4000-8000-{i:012}"),
            "resourceVersion": format!("{}", 5000 + i),
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "labels": bench_labels(i, serde_json::json!({"app": "web", "pod-template-hash": "7d9c5b8f6", "tier": "frontend"})),
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": "web-7d9c5b8f6", "uid": "8d2f1c1e-4b7a-4f8e-9a53-3c0f5a9e2b11",
                "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                mf("kube-controller-manager", serde_json::json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:ownerReferences": {}}, "f:spec": {"f:containers": {}}})),
                mf("kube-scheduler", serde_json::json!({"f:status": {"f:conditions": {}}})),
                mf("kubelet", serde_json::json!({"f:status": {"f:containerStatuses": {}, "f:podIP": {}, "f:phase": {}}})),
            ],
        },
        "spec": pod_spec(i),
        "status": {
            "phase": "Running", "podIP": format!("10.0.{}.{}", i / 250 % 250, i % 250),
            "hostIP": format!("192.168.0.{}", i % 100), "qosClass": "Burstable",
            "startTime": "2026-11-01T10:00:01Z",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-01T10:00:01Z"},
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-01T10:00:01Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-01T10:00:03Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T10:00:03Z"}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example.com/team/web:1.24.3",
                "imageID": "registry.example.com/team/web@sha256:0f3c0c5b1e7e4b7f9c2d8a6e5f4b3a2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a",
                "containerID": format!("containerd://{:064x}", i),
                "state": {"running": {"startedAt": "2026-11-01T10:00:02Z"}}}],
        },
    })
    .to_string()
}
