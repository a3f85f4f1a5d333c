//! Legacy discovery documents (`/api`, `/apis`, `/apis/<group>[/<version>]`) and `/version`,
//! computed from the registry on every request, so CRDs appear and disappear at once.

use serde_json::{Value, json};

use crate::semantics::resources::{Registry, Resource};

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
                           "kind": r.kind, "verbs": r.verbs(false)});
        if let Value::Object(m) = &mut e {
            if !r.short_names.is_empty() {
                m.insert("shortNames".into(), json!(r.short_names));
            }
            if !r.categories.is_empty() {
                m.insert("categories".into(), json!(r.categories));
            }
        }
        out.push(e);
        for sub in subresources(r) {
            let mut e = json!({"name": format!("{}/{}", r.plural, sub.name), "singularName": "",
                               "namespaced": r.namespaced, "kind": sub.kind.2, "verbs": sub.verbs});
            // A kind of another group names its group and version.
            if sub.kind.0 != r.group
                && let Value::Object(m) = &mut e
            {
                m.insert("group".into(), json!(sub.kind.0));
                m.insert("version".into(), json!(sub.kind.1));
            }
            out.push(e);
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

/// A subresource as discovery lists it.
struct Subresource {
    name: String,
    /// The group, version and kind it takes and returns.
    kind: (String, String, String),
    verbs: Vec<&'static str>,
}

/// The subresources a resource serves, built-ins' sorted by name: besides `status` and
/// `scale`, a Namespace's `finalize` (update only) and a Pod's `binding` and `eviction`
/// (create only).
fn subresources(r: &Resource) -> Vec<Subresource> {
    use crate::semantics::resources::Builtin;
    let own = || (r.group.clone(), r.version.clone(), r.kind.clone());
    let mut subs: Vec<Subresource> = r
        .served_subresources()
        .iter()
        .map(|s| Subresource {
            name: s.clone(),
            kind: if s == "scale" {
                ("autoscaling".into(), "v1".into(), "Scale".into())
            } else {
                own()
            },
            verbs: vec!["get", "patch", "update"],
        })
        .collect();
    if r.builtin == Some(Builtin::Namespace) {
        subs.push(Subresource {
            name: "finalize".into(),
            kind: own(),
            verbs: vec!["update"],
        });
    }
    if r.builtin == Some(Builtin::Pod) {
        subs.push(Subresource {
            name: "binding".into(),
            kind: (String::new(), "v1".into(), "Binding".into()),
            verbs: vec!["create"],
        });
        subs.push(Subresource {
            name: "eviction".into(),
            kind: ("policy".into(), "v1".into(), "Eviction".into()),
            verbs: vec!["create"],
        });
        subs.push(Subresource {
            name: "log".into(),
            kind: own(),
            verbs: vec!["get"],
        });
        for (name, kind) in [
            ("attach", "PodAttachOptions"),
            ("exec", "PodExecOptions"),
            ("portforward", "PodPortForwardOptions"),
        ] {
            subs.push(Subresource {
                name: name.into(),
                kind: (String::new(), "v1".into(), kind.into()),
                verbs: vec!["create", "get"],
            });
        }
    }
    if !r.is_custom() {
        subs.sort_by(|a, b| a.name.cmp(&b.name));
    }
    subs
}

/// The `Accept` alternative and `Content-Type` of aggregated discovery.
pub(crate) const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header asks for aggregated discovery (v2) before anything else.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| {
        let params: Vec<&str> = first.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

fn aggregated_resource(r: &Resource) -> Value {
    let core = r.group.is_empty();
    let kind_of = |group: &str, version: &str, kind: &str| {
        if core && group.is_empty() {
            json!({"group": "", "version": "", "kind": kind})
        } else {
            json!({"group": group, "version": version, "kind": kind})
        }
    };
    if r.is_create_only() {
        // kube-apiserver leaves the response kind of its virtual resources group-less.
        return json!({
            "resource": r.plural,
            "responseKind": {"group": "", "version": "", "kind": r.kind},
            "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": r.singular,
            "verbs": r.verbs(true),
        });
    }
    let mut e = json!({
        "resource": r.plural,
        "responseKind": kind_of(&r.group, &r.version, &r.kind),
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs(true),
    });
    if let Value::Object(m) = &mut e {
        if !r.short_names.is_empty() {
            m.insert("shortNames".into(), json!(r.short_names));
        }
        if !r.categories.is_empty() {
            m.insert("categories".into(), json!(r.categories));
        }
        let subs: Vec<Value> = subresources(r)
            .into_iter()
            .map(|sub| {
                let (g, v, k) = &sub.kind;
                json!({"subresource": sub.name, "responseKind": kind_of(g, v, k), "verbs": sub.verbs})
            })
            .collect();
        if !subs.is_empty() {
            m.insert("subresources".into(), Value::Array(subs));
        }
    }
    e
}

/// Aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`): of the core group
/// for `/api`, of the others for `/apis`.
pub(crate) fn aggregated(reg: &Registry, core: bool) -> Value {
    let items: Vec<Value> = reg
        .groups()
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let mut rs = reg.in_group_version(&g, v);
                    rs.sort_by(|a, b| a.plural.cmp(&b.plural));
                    let resources: Vec<Value> = rs.iter().map(|r| aggregated_resource(r)).collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if core { json!({}) } else { json!({"name": g}) };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
           "metadata": {}, "items": items})
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
        let names: Vec<&str> = pods.iter().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "pods",
                "pods/attach",
                "pods/binding",
                "pods/eviction",
                "pods/exec",
                "pods/log",
                "pods/portforward",
                "pods/status"
            ]
        );
        assert_eq!(pods[0]["shortNames"], json!(["po"]));
        assert_eq!(
            (pods[3]["group"].clone(), pods[3]["kind"].clone()),
            (json!("policy"), json!("Eviction"))
        );
        assert!(
            pods[2].get("group").is_none(),
            "Binding is of the core group"
        );
        assert_eq!(
            (pods[4]["kind"].clone(), pods[4]["verbs"].clone()),
            (json!("PodExecOptions"), json!(["create", "get"]))
        );
        let groups = api_group_list(&reg);
        assert_eq!(groups["groups"][0]["name"], "apps");
        assert!(api_group(&reg, "nope").is_none());
        assert_eq!(version()["major"], "1");
        let agg = aggregated(&reg, false);
        assert_eq!(agg["items"][0]["metadata"]["name"], "apps");
        let deploy = agg["items"][0]["versions"][0]["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["resource"] == "deployments").cloned())
            .unwrap_or_default();
        assert_eq!(
            deploy["subresources"][0],
            json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]})
        );
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated("application/json"));
    }
}
