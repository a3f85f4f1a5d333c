//! Legacy discovery documents (`/api`, `/apis`, `/apis/<group>[/<version>]`) and `/version`,
//! computed from the registry on every request, so CRDs appear and disappear at once.

use serde_json::{Value, json};

use crate::semantics::resources::Registry;

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The Kubernetes minor version of the k8s-openapi feature in use.
pub(crate) fn minor() -> u32 {
    #[allow(unused_mut)]
    let mut m = 33;
    k8s_openapi::k8s_if_ge_1_34! { m = m.max(34); }
    k8s_openapi::k8s_if_ge_1_35! { m = m.max(35); }
    k8s_openapi::k8s_if_ge_1_36! { m = m.max(36); }
    k8s_openapi::k8s_if_ge_1_37! { m = m.max(37); }
    m
}

/// `/version`.
pub(crate) fn version() -> Value {
    let minor = minor();
    json!({
        "major": "1",
        "minor": minor.to_string(),
        "emulationMajor": "1",
        "emulationMinor": minor.to_string(),
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": (minor - 1).to_string(),
        "gitVersion": format!("v1.{minor}.0-kube-codegen-fake"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "n/a",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else if std::env::consts::ARCH == "aarch64" { "arm64" } else { std::env::consts::ARCH }),
    })
}

/// `/api`.
pub(crate) fn api_versions(server_address: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]})
}

fn group_doc(group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(json!({}));
    json!({"name": group, "versions": vs, "preferredVersion": preferred})
}

/// `/apis`.
pub(crate) fn api_group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg
        .groups()
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_doc(&g, &vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`, if served.
pub(crate) fn api_group(reg: &Registry, group: &str) -> Option<Value> {
    let (g, vs) = reg.groups().into_iter().find(|(g, _)| g == group)?;
    let mut doc = group_doc(&g, &vs);
    if let Value::Object(m) = &mut doc {
        m.insert("kind".into(), json!("APIGroup"));
        m.insert("apiVersion".into(), json!("v1"));
    }
    Some(doc)
}

/// `/api/v1` or `/apis/<group>/<version>`, if served.
pub(crate) fn api_resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut resources = reg.in_group_version(group, version);
    if resources.is_empty() {
        return None;
    }
    resources.sort_by(|a, b| a.plural.cmp(&b.plural));
    let mut out = Vec::new();
    for r in &resources {
        let mut e = json!({"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                           "kind": r.kind, "verbs": VERBS});
        if let Value::Object(m) = &mut e {
            if !r.short_names.is_empty() {
                m.insert("shortNames".into(), json!(r.short_names));
            }
            if !r.categories.is_empty() {
                m.insert("categories".into(), json!(r.categories));
            }
        }
        out.push(e);
        for sub in &r.subresources {
            out.push(json!({"name": format!("{}/{sub}", r.plural), "singularName": "",
                            "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch", "update"]}));
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::resources::builtins;

    #[test]
    fn documents() {
        let mut reg = Registry::default();
        for r in builtins() {
            reg.insert(r);
        }
        let core = api_resource_list(&reg, "", "v1").unwrap_or_default();
        assert_eq!(core["groupVersion"], "v1");
        let pods: Vec<&Value> = core["resources"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("pods")))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(pods.len(), 2);
        assert_eq!(pods[0]["shortNames"], json!(["po"]));
        assert_eq!(pods[1]["name"], "pods/status");
        let groups = api_group_list(&reg);
        assert_eq!(groups["groups"][0]["name"], "apps");
        assert!(api_group(&reg, "nope").is_none());
        assert_eq!(version()["major"], "1");
    }
}
