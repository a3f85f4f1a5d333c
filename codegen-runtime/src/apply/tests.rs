use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::TypedClient;

/// Objects and managedFields captured from kube-apiserver v1.37.1 by
/// `tests/tests/apply_real.rs`, with what each manager's extraction must be.
const CAPTURES: &str = include_str!("../../testdata/managed-fields.json");

#[derive(Deserialize)]
struct Capture {
    name: String,
    object: Value,
    extractions: Vec<Extraction>,
}

#[derive(Deserialize)]
struct Extraction {
    manager: String,
    subresource: String,
    expected: Value,
}

fn captures() -> Vec<Capture> {
    serde_json::from_str(CAPTURES).unwrap_or_else(|e| panic!("testdata: {e}"))
}

fn capture(name: &str) -> Capture {
    captures()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no capture {name}"))
}

#[test]
fn extracts_what_each_manager_owns_in_objects_from_kube_apiserver() {
    let captures = captures();
    assert!(captures.len() >= 10, "{} captures", captures.len());
    let mut checked = 0;
    for c in &captures {
        for e in &c.extractions {
            let got = extract_fields(&c.object, &e.manager, &e.subresource)
                .unwrap_or_else(|err| panic!("{}: {}: {err}", c.name, e.manager));
            assert_eq!(
                got, e.expected,
                "{}: manager {:?}, subresource {:?}",
                c.name, e.manager, e.subresource
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked} extractions");
}

#[test]
fn the_captures_cover_every_fields_v1_element_kind() {
    // Keyed items (one- and two-field keys), set values, leaves (atomic lists and maps, whole
    // atomic items), status entries, and an Update entry that extraction must skip.
    fn walk(set: &Value, seen: &mut BTreeMap<String, usize>) {
        for (key, child) in set.as_object().into_iter().flatten() {
            let kind = match key.split_once(':') {
                Some(("k", k)) => {
                    let n = serde_json::from_str::<Map<String, Value>>(k).unwrap().len();
                    format!("k{n}")
                }
                Some((prefix, _)) => prefix.to_string(),
                None => key.clone(),
            };
            let leaf = child.as_object().is_some_and(Map::is_empty);
            *seen
                .entry(if leaf { format!("{kind} leaf") } else { kind })
                .or_default() += 1;
            walk(child, seen);
        }
    }
    let mut seen = BTreeMap::new();
    let mut entries = BTreeMap::new();
    for c in captures() {
        for e in c.object["metadata"]["managedFields"].as_array().unwrap() {
            let key = format!(
                "{} {}",
                e["operation"],
                e["subresource"].as_str().unwrap_or("")
            );
            *entries.entry(key).or_insert(0) += 1;
            walk(&e["fieldsV1"], &mut seen);
        }
    }
    for kind in ["k1", "k2", "k1 leaf", "v leaf", "f leaf", "f", ". leaf"] {
        assert!(seen.contains_key(kind), "no {kind:?} element: {seen:?}");
    }
    for entry in ["\"Apply\" ", "\"Apply\" status", "\"Update\" "] {
        assert!(entries.contains_key(entry), "no {entry} entry: {entries:?}");
    }
}

#[test]
fn update_entries_defaults_and_other_managers_are_left_out() {
    let c = capture("builtin_deployment/merged");
    let bob = extract_fields(&c.object, "bob", "").unwrap();
    // The object has defaults nobody applied (imagePullPolicy, terminationMessagePath …).
    assert_eq!(
        c.object["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(
        bob["spec"]["template"]["spec"]["containers"],
        json!([
            {"name": "app", "ports": [{"containerPort": 9090, "protocol": "TCP"}],
             "env": [{"name": "B", "value": "2"}]},
            {"name": "sidecar", "image": "busybox:1"}
        ])
    );
    let c = capture("builtin_configmap/updated");
    assert_eq!(
        extract_fields(&c.object, "editor", "").unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c", "namespace": "apply-configmap"}}),
        "Update entries are not extracted"
    );
}

#[test]
fn status_is_extracted_per_subresource() {
    let c = capture("crd_status_subresource/applied");
    let main = extract_fields(&c.object, "ctrl", "").unwrap();
    let status = extract_fields(&c.object, "ctrl", "status").unwrap();
    assert_eq!(main["spec"], json!({"size": 1}));
    assert!(main.get("status").is_none(), "{main}");
    assert_eq!(status["status"]["phase"], "Ready");
    assert!(status.get("spec").is_none(), "{status}");
}

/// A hand-written apply configuration for ConfigMaps, shaped as generated ones are.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigMapAc {
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<MetaAc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaAc {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finalizers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner_references: Option<Vec<OwnerReference>>,
}

impl ApplyConfiguration for ConfigMapAc {
    type Object = ConfigMap;
    fn name(&self) -> Option<&str> {
        self.metadata.as_ref()?.name.as_deref()
    }
    fn namespace(&self) -> Option<&str> {
        self.metadata.as_ref()?.namespace.as_deref()
    }
    fn api_version(&self) -> Option<&str> {
        self.api_version.as_deref()
    }
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }
}

fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMapAc {
    ConfigMapAc {
        metadata: Some(MetaAc {
            name: Some(name.into()),
            ..MetaAc::default()
        }),
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..ConfigMapAc::default()
    }
}

#[test]
fn typed_extract_decodes_into_the_apply_configuration() {
    let c = capture("builtin_configmap/updated");
    let object: ConfigMap = serde_json::from_value(c.object).unwrap();
    let alice: ConfigMapAc = extract(&object, "alice", "").unwrap();
    assert_eq!(alice.api_version.as_deref(), Some("v1"));
    assert_eq!(alice.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(
        (alice.name(), alice.namespace()),
        (Some("c"), Some("apply-configmap"))
    );
    // b was taken by an update; a is still alice's.
    assert_eq!(
        alice.data,
        Some([("a".to_string(), "1".to_string())].into())
    );
    let meta = alice.metadata.clone().unwrap();
    assert_eq!(meta.finalizers, Some(vec!["example.com/alice".to_string()]));
    assert_eq!(
        meta.owner_references.unwrap()[0].uid,
        "00000000-0000-0000-0000-00000000000a"
    );
    // Nobody's fields: the identity only.
    let nobody: ConfigMapAc = extract(&object, "nobody", "").unwrap();
    assert_eq!(nobody.data, None);
    assert_eq!(nobody.metadata.unwrap().labels, None);
}

#[test]
fn extract_refuses_objects_without_managed_fields() {
    let mut object = ConfigMap::default();
    object.metadata.name = Some("c".into());
    let err = extract::<ConfigMapAc>(&object, "alice", "").unwrap_err();
    assert!(matches!(err, ExtractError::NoManagedFields { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "ConfigMap \"c\" has no metadata.managedFields (was it read from a cache that drops them?)"
    );
    let err = extract_fields(&json!([1]), "alice", "").unwrap_err();
    assert_eq!(
        err.to_string(),
        "the object is not a JSON object (found an array)"
    );
}

#[test]
fn malformed_managed_fields_are_errors_naming_the_entry() {
    let object = |fields_type: &str, fields: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": [
            {"manager": "alice", "operation": "Apply", "subresource": "status", "fieldsType": fields_type, "fieldsV1": fields}
        ]}})
    };
    let err = extract_fields(
        &object("FieldsV1", json!({"f:data": {"z:x": {}}})),
        "alice",
        "status",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "managedFields entry of manager \"alice\" (subresource \"status\"): fieldsV1 at f:data / z:x: \
         path element \"z:x\" has an unknown prefix \"z\" (expected f:, k:, v: or i:)"
    );
    let err = extract_fields(&object("FieldsV2", json!({})), "alice", "status").unwrap_err();
    assert!(
        err.to_string()
            .contains("fieldsType \"FieldsV2\" is not FieldsV1"),
        "{err}"
    );
    // Another manager's malformed entry does not matter.
    assert!(
        extract_fields(
            &object("FieldsV1", json!({"f:data": {"z:x": {}}})),
            "bob",
            ""
        )
        .is_ok()
    );
}

#[test]
fn a_value_that_does_not_decode_is_an_error_naming_the_type() {
    let object: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "c", "managedFields": [
            {"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:a": {}}}}]},
        "data": {"a": "1"}
    }))
    .unwrap();
    #[derive(Debug, Serialize, Deserialize)]
    struct Strict {
        data: BTreeMap<String, u32>,
    }
    impl ApplyConfiguration for Strict {
        type Object = ConfigMap;
        fn name(&self) -> Option<&str> {
            None
        }
        fn namespace(&self) -> Option<&str> {
            None
        }
        fn api_version(&self) -> Option<&str> {
            None
        }
        fn kind(&self) -> Option<&str> {
            None
        }
    }
    let err = extract::<Strict>(&object, "m", "").unwrap_err();
    assert!(matches!(err, ExtractError::Decode { .. }), "{err}");
    assert!(err.to_string().contains("Strict"), "{err}");
}

#[test]
fn conflicts_are_read_from_the_409_causes() {
    let status: kube::core::Status = serde_json::from_value(json!({
        "status": "Failure", "code": 409, "reason": "Conflict",
        "message": "Apply failed with 2 conflicts: …",
        "details": {"causes": [
            {"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.size"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"ed\\\"\\u00e9\" using v1", "field": ".data.b"},
            {"reason": "FieldValueInvalid", "message": "x", "field": ".y"}
        ]}
    }))
    .unwrap();
    let found = conflicts(&kube::Error::Api(Box::new(status)));
    assert_eq!(
        found
            .iter()
            .map(|c| (c.manager.as_str(), c.field.as_str()))
            .collect::<Vec<_>>(),
        [("alice", ".spec.size"), ("ed\"é", ".data.b")]
    );
    assert_eq!(found[1].message, "conflict with \"ed\\\"\\u00e9\" using v1");
    let not_found: kube::core::Status = serde_json::from_value(
        json!({"status": "Failure", "code": 404, "reason": "NotFound", "message": "x"}),
    )
    .unwrap();
    assert!(conflicts(&kube::Error::Api(Box::new(not_found))).is_empty());
}

#[test]
fn options_map_onto_patch_params() {
    let p = ApplyOptions::new("m").patch_params();
    assert_eq!(
        (p.field_manager.as_deref(), p.force, p.dry_run),
        (Some("m"), false, false)
    );
    let p = PatchParams::from(&ApplyOptions::new("m").force().dry_run());
    assert_eq!(
        (p.field_manager.as_deref(), p.force, p.dry_run),
        (Some("m"), true, true)
    );
}

/// One request the mock server saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: String,
    content_type: String,
    body: Value,
}

/// A `kube::Client` over a service that records requests and answers with the applied body
/// plus a resourceVersion.
fn mock() -> (kube::Client, Arc<Mutex<Vec<Seen>>>) {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let log = log.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let mut answer = body.clone();
            answer["metadata"]["resourceVersion"] = json!("42");
            log.lock().unwrap().push(Seen {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
                query: parts.uri.query().unwrap_or_default().to_string(),
                content_type: parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string(),
                body,
            });
            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(
                answer.to_string(),
            ))))
        }
    });
    (kube::Client::new(svc, "default"), seen)
}

#[tokio::test]
async fn typed_apply_sends_only_what_was_set() {
    let (client, seen) = mock();
    let cms = TypedClient::<ConfigMap>::new(client, Some("prod"));
    let stored = cms
        .apply(
            &cm("web", &[("mode", "fast")]),
            &ApplyOptions::new("ctrl").force(),
        )
        .await
        .unwrap();
    assert_eq!(stored.metadata.resource_version.as_deref(), Some("42"));
    assert_eq!(
        stored.data,
        Some([("mode".to_string(), "fast".to_string())].into())
    );
    let s = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", "/api/v1/namespaces/prod/configmaps/web")
    );
    assert_eq!(s.query, "&force=true&fieldManager=ctrl");
    assert_eq!(s.content_type, "application/apply-patch+yaml");
    assert_eq!(
        s.body,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
               "data": {"mode": "fast"}}),
        "only what was set, with apiVersion and kind filled in"
    );

    cms.apply_status(&cm("web", &[]), &ApplyOptions::new("ctrl").dry_run())
        .await
        .unwrap();
    let s = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(s.path, "/api/v1/namespaces/prod/configmaps/web/status");
    assert_eq!(s.query, "&dryRun=All&fieldManager=ctrl");
}

#[tokio::test]
async fn typed_apply_needs_a_name() {
    let (client, seen) = mock();
    let cms = TypedClient::<ConfigMap>::new(client, Some("prod"));
    let err = cms
        .apply(&ConfigMapAc::default(), &ApplyOptions::new("ctrl"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the ConfigMap apply configuration has no metadata.name"),
        "{err}"
    );
    assert!(seen.lock().unwrap().is_empty(), "nothing was sent");
}
