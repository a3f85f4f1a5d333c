//! RBAC from markers, as controller-gen's `rbac` generator reads them: every
//! `// +kubebuilder:rbac:groups=…,resources=…,verbs=…[,resourceNames=…][,urls=…][,namespace=…]`
//! comment under a project's `src/` becomes a rule; rules without a namespace form one
//! ClusterRole, rules with one a Role in that namespace, each named after the project.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ScaffoldError;
use crate::error::{Error, Location, Pos};
use crate::tags::Tag;
use crate::tags::markers::{list, parse_args};

const MARKER: &str = "+kubebuilder:rbac:";

/// The verbs Kubernetes' authorizer knows (and `*`).
const VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "impersonate",
    "bind",
    "escalate",
    "use",
    "approve",
    "sign",
    "attest",
    "*",
];

/// One rule's identity: what it applies to. Rules with the same identity have their verbs
/// merged.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Target {
    groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    urls: Vec<String>,
}

/// Every `// +<marker>…` comment line of the Rust files under `src`, in file and line order:
/// where it is and the text after the marker.
pub(super) fn marker_lines(
    src: &Path,
    marker: &str,
) -> Result<Vec<(Location, String)>, ScaffoldError> {
    let mut out = Vec::new();
    for file in rust_files(src)? {
        let text =
            fs::read_to_string(&file).map_err(|e| Error::io(&file, "cannot read file", e))?;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let Some(comment) = trimmed.strip_prefix("//") else {
                continue;
            };
            let comment = comment.trim_start_matches('/').trim_start();
            let Some(args) = comment.strip_prefix(marker) else {
                continue;
            };
            let location = Location::new(
                file.clone(),
                Pos {
                    line: i + 1,
                    col: line.len() - trimmed.len() + 1,
                },
            );
            out.push((location, args.trim_end().to_string()));
        }
    }
    Ok(out)
}

/// The rules of every marker under `src`, by namespace (`""` for the ClusterRole).
fn rules(
    src: &Path,
) -> Result<BTreeMap<String, BTreeMap<Target, BTreeSet<String>>>, ScaffoldError> {
    let mut out: BTreeMap<String, BTreeMap<Target, BTreeSet<String>>> = BTreeMap::new();
    for (location, args) in marker_lines(src, MARKER)? {
        let (namespace, target, verbs) = parse_marker(&args, location)?;
        out.entry(namespace)
            .or_default()
            .entry(target)
            .or_default()
            .extend(verbs);
    }
    Ok(out)
}

fn parse_marker(
    args: &str,
    location: Location,
) -> Result<(String, Target, Vec<String>), ScaffoldError> {
    let tag = Tag {
        key: "kubebuilder:rbac".into(),
        value: Some(args.to_string()),
        location: location.clone(),
    };
    let fail = |message: String| {
        ScaffoldError::Generate(Error::at(
            location.clone(),
            format!("+kubebuilder:rbac: {message}"),
        ))
    };
    let mut namespace = String::new();
    let mut target = Target {
        groups: Vec::new(),
        resources: Vec::new(),
        resource_names: Vec::new(),
        urls: Vec::new(),
    };
    let mut verbs = Vec::new();
    let mut seen_groups = false;
    for (key, raw) in parse_args(&tag, args)? {
        let values = || list(&raw).map_err(|m| fail(format!("{key}: {m}")));
        match key.as_str() {
            "groups" => {
                seen_groups = true;
                // `groups=""` is the core group: one empty name.
                target.groups = if raw.trim() == "\"\"" {
                    vec![String::new()]
                } else {
                    values()?
                };
            }
            "resources" => target.resources = values()?,
            "resourceNames" => target.resource_names = values()?,
            "urls" => target.urls = values()?,
            "verbs" => verbs = values()?,
            "namespace" => namespace = crate::tags::markers::unquote(&raw).map_err(fail)?,
            other => {
                return Err(fail(format!(
                    "unknown argument {other:?} (expected groups, resources, resourceNames, urls, verbs, namespace)"
                )));
            }
        }
    }
    if verbs.is_empty() {
        return Err(fail(
            "verbs= is required (e.g. verbs=get;list;watch)".into(),
        ));
    }
    if let Some(bad) = verbs.iter().find(|v| !VERBS.contains(&v.as_str())) {
        return Err(fail(format!(
            "unknown verb {bad:?} (expected one of {})",
            VERBS.join(", ")
        )));
    }
    if target.urls.is_empty() {
        if !seen_groups {
            return Err(fail(
                "groups= is required (groups=\"\" for the core group)".into(),
            ));
        }
        if target.resources.is_empty() {
            return Err(fail("resources= is required".into()));
        }
    } else if !target.resources.is_empty() || !namespace.is_empty() {
        return Err(fail(
            "urls= (non-resource URLs) cannot be combined with resources= or namespace=".into(),
        ));
    }
    target.groups.sort();
    target.resources.sort();
    target.resource_names.sort();
    target.urls.sort();
    Ok((namespace, target, verbs))
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|e| Error::io(&d, "cannot read directory", e))?;
        for entry in entries {
            let path = entry
                .map_err(|e| Error::io(&d, "cannot read directory", e))?
                .path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn rule_value(target: &Target, verbs: &BTreeSet<String>) -> Value {
    let mut rule = serde_json::Map::new();
    if target.urls.is_empty() {
        rule.insert("apiGroups".into(), json!(target.groups));
        rule.insert("resources".into(), json!(target.resources));
        if !target.resource_names.is_empty() {
            rule.insert("resourceNames".into(), json!(target.resource_names));
        }
    } else {
        rule.insert("nonResourceURLs".into(), json!(target.urls));
    }
    rule.insert("verbs".into(), json!(verbs));
    Value::Object(rule)
}

/// The text of `deploy/role.yaml` for the project named `name` whose sources are under `src`:
/// a ClusterRole of the namespace-less rules, then a Role per namespace, as YAML documents.
pub(crate) fn role_yaml(name: &str, src: &Path) -> Result<String, ScaffoldError> {
    let by_namespace = rules(src)?;
    let mut docs = Vec::new();
    let cluster = by_namespace.get("").cloned().unwrap_or_default();
    docs.push(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": cluster.iter().map(|(t, v)| rule_value(t, v)).collect::<Vec<_>>(),
    }));
    for (namespace, rules) in by_namespace.iter().filter(|(ns, _)| !ns.is_empty()) {
        docs.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
            "rules": rules.iter().map(|(t, v)| rule_value(t, v)).collect::<Vec<_>>(),
        }));
    }
    let mut out = String::from(
        "# Generated by `kube-codegen manifests` from the +kubebuilder:rbac markers under src/.\n",
    );
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&crate::crd::yaml::to_yaml(doc));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn markers_become_merged_sorted_rules() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        write(
            dir.path(),
            "main.rs",
            "// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create\n\
             // +kubebuilder:rbac:groups=\"\",resources=events,verbs=create;patch\n",
        );
        write(
            dir.path(),
            "controller/a.rs",
            "    // +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=update;get\n\
             /// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,namespace=prod\n",
        );
        let yaml = role_yaml("op", dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            yaml,
            "# Generated by `kube-codegen manifests` from the +kubebuilder:rbac markers under src/.\n\
apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: op\nrules:\n\
- apiGroups:\n  - \"\"\n  resources:\n  - events\n  verbs:\n  - create\n  - patch\n\
- apiGroups:\n  - coordination.k8s.io\n  resources:\n  - leases\n  verbs:\n  - create\n  - get\n  - update\n\
---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: op\n  namespace: prod\nrules:\n\
- apiGroups:\n  - apps\n  resources:\n  - deployments\n  verbs:\n  - get\n"
        );
    }

    #[test]
    fn bad_markers_name_file_and_line() {
        for (marker, want) in [
            ("groups=apps,resources=deployments", "verbs= is required"),
            (
                "groups=apps,resources=deployments,verbs=get;fly",
                "unknown verb \"fly\"",
            ),
            ("resources=deployments,verbs=get", "groups= is required"),
            ("groups=apps,verbs=get", "resources= is required"),
            (
                "groups=apps,resources=x,verbs=get,color=red",
                "unknown argument \"color\"",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            write(
                dir.path(),
                "lib.rs",
                &format!("\n\n  // +kubebuilder:rbac:{marker}\n"),
            );
            let err = role_yaml("op", dir.path())
                .err()
                .unwrap_or_else(|| panic!("{marker} was accepted"))
                .to_string();
            assert!(
                err.contains("lib.rs:3:3: error: +kubebuilder:rbac:"),
                "{err}"
            );
            assert!(err.contains(want), "{marker}: {err}");
        }
    }
}
