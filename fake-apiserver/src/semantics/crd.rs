//! CustomResourceDefinitions: validation as the apiextensions API server does it (names,
//! versions, scope, the protected-group approval annotation), the status its controllers write
//! (accepted names, `NamesAccepted`, `Established`), and the resources a CRD serves.

use crate::semantics::str_at;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{FieldError, go_quote};
use crate::semantics::resources::{CustomInfo, Resource, ScalePaths};
use crate::storage::object;

/// The annotation protected groups need.
pub(crate) const APPROVAL_ANNOTATION: &str = "api-approved.kubernetes.io";
/// The finalizer the API server puts on a CRD being deleted until its objects are gone.
pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

/// Approval state of a protected group: `Some((approved, reason, message))`, or `None` when
/// the group is not protected.
fn approval(crd: &Value) -> Option<(bool, &'static str, String)> {
    let group = crd.pointer("/spec/group").and_then(Value::as_str)?;
    if !is_protected_group(group) {
        return None;
    }
    let annotation = object::meta(crd)
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(APPROVAL_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or("");
    Some(if annotation.is_empty() {
        (
            false,
            "MissingAnnotation",
            format!(
                "protected groups must have approval annotation {}, see https://github.com/kubernetes/enhancements/pull/1111",
                go_quote(APPROVAL_ANNOTATION)
            ),
        )
    } else if annotation.starts_with("unapproved") {
        (
            false,
            "UnapprovedAnnotation",
            format!("not approved: {}", go_quote(annotation)),
        )
    } else if annotation.starts_with("http://") || annotation.starts_with("https://") {
        (
            true,
            "ApprovedAnnotation",
            format!("approved in {annotation}"),
        )
    } else {
        (
            false,
            "InvalidAnnotation",
            format!(
                "protected groups must have approval annotation {} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111",
                go_quote(APPROVAL_ANNOTATION)
            ),
        )
    })
}

/// The `spec.group` and `spec.names.plural` of a CRD object (empty where missing).
pub(crate) fn group_plural(crd: &Value) -> (String, String) {
    (
        str_at(crd, "/spec/group").to_string(),
        str_at(crd, "/spec/names/plural").to_string(),
    )
}

/// Fills the defaults the API server fills (`listKind`, `singular`, `conversion`).
pub(crate) fn default(crd: &mut Value) {
    let kind = str_at(crd, "/spec/names/kind").to_string();
    if let Some(Value::Object(names)) = crd.pointer_mut("/spec/names") {
        if !kind.is_empty() && !names.contains_key("listKind") {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
        if !kind.is_empty() && !names.contains_key("singular") {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
    }
    if let Some(Value::Object(spec)) = crd.get_mut("spec")
        && !spec.contains_key("conversion")
    {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// Validation errors of a CRD (create or update).
pub(crate) fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = object::name(crd);
    let group = str_at(crd, "/spec/group");
    let plural = str_at(crd, "/spec/names/plural");
    let kind = str_at(crd, "/spec/names/kind");
    if name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid_str(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid_str(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    match str_at(crd, "/spec/scope") {
        "Namespaced" | "Cluster" => {}
        "" => errs.push(FieldError::required("spec.scope", "")),
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    if plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural", ""));
    } else if !crate::semantics::validation::is_dns1123_label(plural) {
        errs.push(FieldError::invalid_str(
            "spec.names.plural",
            plural,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    if kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind", ""));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(FieldError::invalid(
            "spec.versions",
            "[]apiextensions.CustomResourceDefinitionVersion(nil)",
            "must have exactly one version marked as storage version",
        ));
    } else {
        let storage = versions
            .iter()
            .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .count();
        if storage != 1 {
            errs.push(FieldError::invalid(
                "spec.versions",
                "[]apiextensions.CustomResourceDefinitionVersion{...}",
                "must have exactly one version marked as storage version",
            ));
        }
        for (i, v) in versions.iter().enumerate() {
            if str_at(v, "/name").is_empty() {
                errs.push(FieldError::required(format!("spec.versions[{i}].name"), ""));
            }
            if v.pointer("/schema/openAPIV3Schema").is_none() {
                errs.push(FieldError::required(
                    format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "schemas are required",
                ));
            }
        }
        // Identical schemas are reported once, at the path of the internal API's single
        // `spec.validation`; different ones per version.
        let schemas: Vec<&Value> = versions
            .iter()
            .filter_map(|v| v.pointer("/schema/openAPIV3Schema"))
            .collect();
        let all_same = schemas.windows(2).all(|w| w[0] == w[1]);
        for (i, v) in versions.iter().enumerate() {
            let Some(schema) = v.pointer("/schema/openAPIV3Schema") else {
                continue;
            };
            if all_same && i > 0 {
                break;
            }
            let path = if all_same {
                "spec.validation.openAPIV3Schema".to_string()
            } else {
                format!("spec.versions[{i}].schema.openAPIV3Schema")
            };
            let structural = structural_errors(schema, &path);
            if structural.is_empty() {
                errs.extend(default_errors(schema, &path));
                errs.extend(crate::semantics::cel::check_crd_schema(schema, &path));
            } else {
                errs.extend(structural);
            }
        }
    }
    if let Some((false, "MissingAnnotation", message)) = approval(crd) {
        let detail = message;
        errs.push(FieldError::required(
            format!("metadata.annotations[{APPROVAL_ANNOTATION}]"),
            detail,
        ));
    } else if let Some((false, "InvalidAnnotation", message)) = approval(crd) {
        let value = object::meta(crd)
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(APPROVAL_ANNOTATION))
            .and_then(Value::as_str)
            .unwrap_or("");
        errs.push(FieldError::invalid_str(
            format!("metadata.annotations[{APPROVAL_ANNOTATION}]"),
            value,
            message,
        ));
    }
    errs
}

fn is_true(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The structural-schema rules (and the value checks that come with them) for a schema node.
fn structural_node(node: &Value, path: &str, specified: bool, errs: &mut Vec<FieldError>) {
    let Some(m) = node.as_object() else {
        return;
    };
    let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
    let int_or_string = is_true(node, "x-kubernetes-int-or-string");
    let preserve = is_true(node, "x-kubernetes-preserve-unknown-fields");
    if ty.is_empty() && !int_or_string && !preserve {
        if path.ends_with("openAPIV3Schema") {
            errs.push(FieldError::required(
                format!("{path}.type"),
                "must not be empty at the root",
            ));
        } else if specified {
            errs.push(FieldError::required(
                format!("{path}.type"),
                "must not be empty for specified object fields",
            ));
        }
    }
    if let Some(p) = m.get("pattern").and_then(Value::as_str)
        && let Err(e) = regex::Regex::new(p)
    {
        let why = e.to_string();
        let why = why.lines().last().unwrap_or("").trim().to_string();
        errs.push(FieldError::invalid_str(
            format!("{path}.pattern"),
            p,
            format!("must be a valid regular expression, but isn't: {why}"),
        ));
    }
    if is_true(node, "uniqueItems") {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if m.get("additionalProperties").is_some_and(Value::is_object) && m.get("properties").is_some()
    {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    match m.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("map") => {
            let keys = m
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if keys.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.x-kubernetes-list-map-keys"),
                    "must not be empty if x-kubernetes-list-type is map",
                ));
            }
            let item_type = m
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if !item_type.is_empty() && item_type != "object" {
                errs.push(FieldError::invalid_str(
                    format!("{path}.items.type"),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            }
        }
        Some("set") => {
            let item_type = m
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let atomic = m
                .get("items")
                .and_then(|i| i.get("x-kubernetes-map-type"))
                .and_then(Value::as_str)
                == Some("atomic");
            if item_type == "object" && !atomic {
                errs.push(FieldError::invalid_str(
                    format!("{path}.items.x-kubernetes-map-type"),
                    "",
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
        }
        Some("atomic") | None => {}
        Some(other) => errs.push(FieldError::not_supported(
            format!("{path}.x-kubernetes-list-type"),
            other,
            &["atomic", "set", "map"],
        )),
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, child) in props {
            structural_node(child, &format!("{path}.properties[{k}]"), true, errs);
        }
    }
    if let Some(items) = m.get("items") {
        structural_node(items, &format!("{path}.items"), true, errs);
    }
    if let Some(ap) = m.get("additionalProperties").filter(|a| a.is_object()) {
        structural_node(ap, &format!("{path}.additionalProperties"), true, errs);
    }
}

/// Why a schema is not structural (empty when it is).
pub(crate) fn structural_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    structural_node(schema, path, false, &mut errs);
    errs
}

/// Defaults must be valid for their schema.
fn default_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    default_walk(schema, path, &mut errs);
    errs
}

fn default_walk(node: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(m) = node.as_object() else {
        return;
    };
    if let Some(d) = m.get("default") {
        let field = format!("{path}.default");
        for mut e in crate::semantics::schema::validate_value(d, node) {
            e.field = field.clone();
            errs.push(e);
        }
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, child) in props {
            default_walk(child, &format!("{path}.properties[{k}]"), errs);
        }
    }
    if let Some(items) = m.get("items") {
        default_walk(items, &format!("{path}.items"), errs);
    }
    if let Some(ap) = m.get("additionalProperties").filter(|a| a.is_object()) {
        default_walk(ap, &format!("{path}.additionalProperties"), errs);
    }
}

/// The status a freshly created CRD has in the create response (controllers fill it in a
/// moment later).
pub(crate) fn initial_status(crd: &Value) -> Value {
    let storage: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .filter_map(|v| v.get("name").cloned())
                .collect()
        })
        .unwrap_or_default();
    json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": storage})
}

/// The name of the version marked `storage`, if exactly one is.
fn storage_version(crd: &Value) -> Option<String> {
    let storage: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match storage.as_slice() {
        [one] => Some((*one).to_string()),
        _ => None,
    }
}

/// On an update, the storage version joins `status.storedVersions` (objects may be written
/// in it from now on), as the CRD strategy's `PrepareForUpdate` does.
pub(crate) fn extend_stored_versions(crd: &mut Value) {
    let Some(storage) = storage_version(crd) else {
        return;
    };
    let status = object::ensure_object(crd)
        .entry("status")
        .or_insert_with(|| json!({}));
    let Value::Object(status) = status else {
        return;
    };
    let stored = status
        .entry("storedVersions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = stored
        && !list.iter().any(|v| v.as_str() == Some(storage.as_str()))
    {
        list.push(Value::String(storage));
    }
}

/// Every version in `status.storedVersions` must stay in `spec.versions` until a storage
/// migration removes it from the status.
pub(crate) fn stored_version_errors(crd: &Value) -> Vec<FieldError> {
    let names: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    object::strings(crd.pointer("/status/storedVersions"))
        .iter()
        .enumerate()
        .filter(|(_, s)| !names.contains(&s.as_str()))
        .map(|(i, s)| {
            FieldError::invalid(
                format!("status.storedVersions[{i}]"),
                crate::error::go_quote(s),
                format!(
                    "missing from spec.versions; {s} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {s} and removes {s} from status.storedVersions"
                ),
            )
        })
        .collect()
}

fn condition(kind: &str, status: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": kind, "status": if status {"True"} else {"False"}, "lastTransitionTime": now,
           "reason": reason, "message": message})
}

/// The status after the naming and establishing controllers ran.
pub(crate) fn established_status(crd: &Value, now: &str) -> Value {
    let mut status = crd
        .get("status")
        .cloned()
        .unwrap_or_else(|| initial_status(crd));
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let mut conditions = vec![
        condition(
            "NamesAccepted",
            true,
            "NoConflicts",
            "no conflicts found",
            now,
        ),
        condition(
            "Established",
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
            now,
        ),
    ];
    if let Some((ok, reason, message)) = approval(crd) {
        conditions.push(condition(
            "KubernetesAPIApprovalPolicyConformant",
            ok,
            reason,
            &message,
            now,
        ));
    }
    if let Value::Object(s) = &mut status {
        s.insert("acceptedNames".into(), names);
        s.insert("conditions".into(), Value::Array(conditions));
    }
    status
}

/// The condition of a CRD being deleted.
pub(crate) fn terminating_condition(now: &str) -> Value {
    condition(
        "Terminating",
        true,
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
        now,
    )
}

/// The resources (one per served version) a CRD defines.
pub(crate) fn resources(crd: &Value) -> Vec<Resource> {
    let group = str_at(crd, "/spec/group").to_string();
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let kind = str_at(&names, "/kind").to_string();
    let plural = str_at(&names, "/plural").to_string();
    let list_kind = match str_at(&names, "/listKind") {
        "" => format!("{kind}List"),
        lk => lk.to_string(),
    };
    let singular = match str_at(&names, "/singular") {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    let short_names = object::strings(names.pointer("/shortNames"));
    let categories = object::strings(names.pointer("/categories"));
    let namespaced = str_at(crd, "/spec/scope") != "Cluster";
    let crd_name = object::name(crd).to_string();
    let storage = storage_version(crd);
    let converts_by_webhook = str_at(crd, "/spec/conversion/strategy") == "Webhook";
    let storage_schema = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("name").and_then(Value::as_str) == storage.as_deref())
        })
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .cloned();
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
                .map(|v| {
                    let mut subresources = Vec::new();
                    if v.pointer("/subresources/status").is_some() {
                        subresources.push("status".to_string());
                    }
                    let scale = v.pointer("/subresources/scale").map(|sc| ScalePaths {
                        spec_replicas: str_at(sc, "/specReplicasPath").to_string(),
                        status_replicas: str_at(sc, "/statusReplicasPath").to_string(),
                        label_selector: str_at(sc, "/labelSelectorPath").to_string(),
                    });
                    if scale.is_some() {
                        subresources.push("scale".to_string());
                    }
                    let schema = v.pointer("/schema/openAPIV3Schema").cloned();
                    let cel = schema
                        .as_ref()
                        .and_then(crate::semantics::cel::Rules::compile);
                    let selectable_fields = v
                        .get("selectableFields")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                                .map(|p| p.trim_start_matches('.').to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    Resource {
                        group: group.clone(),
                        version: str_at(v, "/name").to_string(),
                        kind: kind.clone(),
                        list_kind: list_kind.clone(),
                        plural: plural.clone(),
                        singular: singular.clone(),
                        namespaced,
                        subresources,
                        short_names: short_names.clone(),
                        categories: categories.clone(),
                        builtin: None,
                        custom: Some(Arc::new(CustomInfo {
                            crd_name: crd_name.clone(),
                            has_defaults: schema
                                .as_ref()
                                .is_some_and(crate::semantics::schema::has_defaults),
                            schema,
                            cel,
                            scale,
                            printer_columns: v
                                .get("additionalPrinterColumns")
                                .and_then(Value::as_array)
                                .cloned()
                                .unwrap_or_default(),
                            selectable_fields,
                            // With conversion `None` the versions share one shape and the
                            // storage schema prunes a write through another version; a
                            // conversion webhook's versions differ, and the write is pruned
                            // by the storage schema only once converted.
                            storage_schema: (storage.as_deref() != Some(str_at(v, "/name"))
                                && !converts_by_webhook)
                                .then(|| storage_schema.clone())
                                .flatten(),
                            deprecation_warning: (v.get("deprecated").and_then(Value::as_bool)
                                == Some(true))
                            .then(
                                || match v.get("deprecationWarning").and_then(Value::as_str) {
                                    Some(w) => w.to_string(),
                                    None => format!(
                                        "{group}/{} {kind} is deprecated",
                                        str_at(v, "/name")
                                    ),
                                },
                            ),
                        })),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(group: &str, annotations: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("mydemos.{group}"), "annotations": annotations},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"kind": "Mydemo", "plural": "mydemos", "shortNames": ["md"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                    "subresources": {"status": {}}}]}})
    }

    #[test]
    fn protected_groups_need_approval() {
        let errs = validate(&crd("crddemo.k8s.io", json!({})));
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
        );
        let ok = crd(
            "crddemo.k8s.io",
            json!({APPROVAL_ANNOTATION: "unapproved, testing"}),
        );
        assert!(validate(&ok).is_empty());
        let status = established_status(&ok, "t");
        assert_eq!(
            status["conditions"][2]["type"],
            "KubernetesAPIApprovalPolicyConformant"
        );
        assert_eq!(status["conditions"][2]["status"], "False");
        assert!(validate(&crd("example.com", json!({}))).is_empty());
    }

    #[test]
    fn served_versions_become_resources() {
        let mut c = crd("example.com", json!({}));
        default(&mut c);
        let rs = resources(&c);
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].list_kind, "MydemoList");
        assert_eq!(rs[0].singular, "mydemo");
        assert!(rs[0].has_status());
        assert_eq!(rs[0].short_names, vec!["md"]);
    }
}
