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
