//! The RBAC kinds (`rbac.authorization.k8s.io/v1`): their defaults and `ValidateRole`,
//! `ValidateClusterRole`, `ValidateRoleBinding` and `ValidateClusterRoleBinding`, with
//! kube-apiserver's wording. The in-memory server stores these objects and authorizes nothing
//! by them, as kube-apiserver does for a client in `system:masters`.

use serde_json::{Value, json};

use crate::error::FieldError;
use kube_codegen_apimachinery::validation::is_path_segment_name;

/// The group of the kinds, the only `roleRef.apiGroup` a binding may name.
const GROUP: &str = "rbac.authorization.k8s.io";

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn list_len(v: &Value, key: &str) -> usize {
    v.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`: the
/// role reference's group, and each subject's group by its kind.
pub(super) fn binding_defaults(obj: &mut Value) {
    // `roleRef` is not a pointer in Go: an object without one gets the defaulted group.
    if let Some(m) = obj.as_object_mut()
        && !m.get("roleRef").is_some_and(Value::is_object)
    {
        m.insert("roleRef".into(), json!({}));
    }
    if let Some(role_ref) = obj.get_mut("roleRef").and_then(Value::as_object_mut)
        && role_ref
            .get("apiGroup")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        role_ref.insert("apiGroup".into(), json!(GROUP));
    }
    if let Some(Value::Array(subjects)) = obj.get_mut("subjects") {
        for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
            let unset = s
                .get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            // A service account's group is "", which Go leaves out (`omitempty`).
            if unset
                && matches!(
                    s.get("kind").and_then(Value::as_str),
                    Some("User" | "Group")
                )
            {
                s.insert("apiGroup".into(), json!(GROUP));
            }
        }
    }
}

/// The rules of a Role (`namespaced`) or ClusterRole, and a ClusterRole's aggregation rule.
/// kube-apiserver v1.37 checks a rule's `verbs` by the type's declarative validation
/// (`+k8s:required`), whose errors follow the hand-written ones.
pub(super) fn role_errors(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = obj.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errs.extend(policy_rule_errors(rule, namespaced, &format!("rules[{i}]")));
    }
    if !namespaced
        && let Some(agg) = obj.get("aggregationRule").filter(|a| !a.is_null())
        && list_len(agg, "clusterRoleSelectors") == 0
    {
        errs.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        if list_len(rule, "verbs") == 0 {
            errs.push(FieldError::required(format!("rules[{i}].verbs"), ""));
        }
    }
    errs
}

/// A Role's or ClusterRole's `rules` as kube-apiserver stores them: Go's field has no
/// `omitempty`, and an empty list comes back from storage as `null`.
pub(super) fn rules_as_stored(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut()
        && m.get("rules")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        m.insert("rules".into(), Value::Null);
    }
}

/// `ValidatePolicyRule`.
fn policy_rule_errors(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_len(rule, "nonResourceURLs") > 0 {
        let urls = render_strings(rule.get("nonResourceURLs"));
        if namespaced {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                urls.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| list_len(rule, k) > 0)
        {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if list_len(rule, "apiGroups") == 0 {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_len(rule, "resources") == 0 {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// A list of strings as a field error prints it: JSON.
fn render_strings(v: Option<&Value>) -> String {
    v.map_or_else(|| "null".to_string(), Value::to_string)
}

/// The role reference and subjects of a RoleBinding (`namespaced`) or ClusterRoleBinding.
pub(super) fn binding_errors(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // kube-apiserver v1.37 checks required names by declarative validation (`+k8s:required`),
    // whose errors follow the hand-written ones.
    let mut declarative = Vec::new();
    let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
    let group = text(role_ref, "apiGroup");
    if group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[GROUP],
        ));
    }
    let kind = text(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = text(role_ref, "name");
    if name.is_empty() {
        declarative.push(FieldError::required("roleRef.name", ""));
    } else {
        errs.extend(
            is_path_segment_name(name, false)
                .into_iter()
                .map(|m| FieldError::invalid_str("roleRef.name", name, m)),
        );
    }
    if let Some(Value::Array(subjects)) = obj.get("subjects") {
        for (i, s) in subjects.iter().enumerate() {
            let path = format!("subjects[{i}]");
            errs.extend(subject_errors(s, namespaced, &path));
            if text(s, "name").is_empty() {
                declarative.push(FieldError::required(format!("{path}.name"), ""));
            }
        }
    }
    errs.extend(declarative);
    errs
}

/// `ValidateRoleBindingSubject`.
fn subject_errors(s: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(s, "name");
    let group = text(s, "apiGroup");
    match text(s, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                errs.extend(
                    kube_codegen_apimachinery::validation::is_dns1123_subdomain(name)
                        .into_iter()
                        .map(|m| FieldError::invalid_str(format!("{path}.name"), name, m)),
                );
            }
            if !group.is_empty() {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && text(s, "namespace").is_empty() {
                errs.push(FieldError::required(format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    group,
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// The role a binding grants never changes. kube-apiserver v1.37 says so by declarative
/// validation (`+k8s:immutable`), printing the internal `RoleRef` with Go's field names.
pub(super) fn role_ref_update_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let (o, n) = (old.get("roleRef"), new.get("roleRef"));
    if o == n {
        return Vec::new();
    }
    let n = n.unwrap_or(&Value::Null);
    let value = json!({"APIGroup": text(n, "apiGroup"), "Kind": text(n, "kind"),
                       "Name": text(n, "name")});
    vec![FieldError::invalid(
        "roleRef",
        value.to_string(),
        "field is immutable",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn subjects_get_their_kinds_group() {
        let mut b = json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [
            {"kind": "ServiceAccount", "name": "sa"}, {"kind": "User", "name": "u"},
            {"kind": "Group", "name": "g", "apiGroup": "x"}, {"kind": "Other", "name": "o"}]});
        binding_defaults(&mut b);
        assert_eq!(b["roleRef"]["apiGroup"], GROUP);
        let groups: Vec<_> = b["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s.get("apiGroup").cloned())
            .collect();
        assert_eq!(
            groups,
            vec![None, Some(json!(GROUP)), Some(json!("x")), None]
        );
        assert_eq!(
            strings(binding_errors(&b, true)),
            vec![
                "subjects[2].apiGroup: Unsupported value: \"x\": supported values: \"rbac.authorization.k8s.io\"",
                "subjects[3].kind: Unsupported value: \"Other\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
            ]
        );
    }

    #[test]
    fn rules_need_verbs_and_resources() {
        let role = json!({"rules": [{"apiGroups": [""]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert_eq!(
            strings(role_errors(&role, true)),
            vec![
                "rules[0].resources: Required value: resource rules must supply at least one resource",
                "rules[1].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs",
                "rules[0].verbs: Required value",
            ]
        );
        assert!(role_errors(&role, false).len() == 2);
    }
}
