//! The CRDs of the `crd` generator: every generated manifest is structural (what kube-apiserver
//! demands of a v1 CRD), `K::crd()` returns exactly the YAML on disk, and objects serialized
//! from Rust values validate against their schema — while values that break a marker do not.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use kube::CustomResourceExt;
use serde_json::{Value, json};

use tests::crds::{crd_files, example_crd_file, workspace_root};

fn read_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_crd(path: &Path) -> CustomResourceDefinition {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Numbers compare by value (`1` and `1.0` are the same `minimum`).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

// ---------------------------------------------------------------------------------------------
// Structural schemas.

const ALLOWED: &[&str] = &[
    "type",
    "format",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "default",
    "nullable",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "pattern",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Keywords a value validation inside `anyOf`/`oneOf`/`allOf`/`not` may not carry.
const FORBIDDEN_NESTED: &[&str] = &[
    "type",
    "description",
    "default",
    "additionalProperties",
    "nullable",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

fn is_int_or_string_any_of(node: &Value) -> bool {
    node.get("anyOf") == Some(&json!([{"type": "integer"}, {"type": "string"}]))
}

/// Checks one schema node (and everything under it); problems are pushed as `path: cause`.
fn check_node(node: &Value, path: &str, root: bool, problems: &mut Vec<String>) {
    let Some(obj) = node.as_object() else {
        problems.push(format!("{path}: not an object"));
        return;
    };
    for k in obj.keys() {
        if !ALLOWED.contains(&k.as_str()) {
            problems.push(format!(
                "{path}: keyword {k:?} is not allowed in a structural schema"
            ));
        }
    }
    let flag = |k: &str| obj.get(k) == Some(&Value::Bool(true));
    let int_or_string = flag("x-kubernetes-int-or-string");
    let preserve = flag("x-kubernetes-preserve-unknown-fields");
    let ty = obj.get("type").and_then(Value::as_str);
    match ty {
        None if !(int_or_string || preserve) => {
            problems.push(format!("{path}: has no type"));
        }
        Some(t) if !["object", "array", "string", "integer", "number", "boolean"].contains(&t) => {
            problems.push(format!("{path}: unknown type {t:?}"));
        }
        _ => {}
    }
    if int_or_string {
        if ty.is_some() {
            problems.push(format!("{path}: int-or-string with a type"));
        }
        if obj.contains_key("anyOf") && !is_int_or_string_any_of(node) {
            problems.push(format!("{path}: int-or-string with an unexpected anyOf"));
        }
        if preserve {
            problems.push(format!(
                "{path}: int-or-string that preserves unknown fields"
            ));
        }
    }
    if obj.contains_key("properties") && obj.contains_key("additionalProperties") {
        problems.push(format!(
            "{path}: properties and additionalProperties together"
        ));
    }
    if root && obj.contains_key("additionalProperties") {
        problems.push(format!("{path}: additionalProperties at the root"));
    }
    if root && ty != Some("object") {
        problems.push(format!("{path}: the root must be an object"));
    }
    if (obj.contains_key("properties") || obj.contains_key("additionalProperties"))
        && ty != Some("object")
    {
        problems.push(format!("{path}: properties on a non-object"));
    }
    if ty == Some("array") && !obj.contains_key("items") {
        problems.push(format!("{path}: an array without items"));
    }
    if obj.contains_key("items") && ty != Some("array") {
        problems.push(format!("{path}: items on a non-array"));
    }
    if flag("uniqueItems") {
        problems.push(format!("{path}: uniqueItems: true is forbidden"));
    }
    if obj.contains_key("x-kubernetes-map-type") && ty != Some("object") {
        problems.push(format!("{path}: x-kubernetes-map-type on a non-object"));
    }
    if flag("x-kubernetes-embedded-resource") && ty != Some("object") {
        problems.push(format!("{path}: an embedded resource must be an object"));
    }
    if let Some(lt) = obj.get("x-kubernetes-list-type").and_then(Value::as_str) {
        if ty != Some("array") {
            problems.push(format!("{path}: x-kubernetes-list-type on a non-array"));
        }
        let items = obj.get("items").cloned().unwrap_or_default();
        match lt {
            "map" => {
                let keys = obj
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if keys.is_empty() {
                    problems.push(format!("{path}: list-type map without keys"));
                }
                let required = items
                    .get("required")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for k in keys {
                    let prop = &items["properties"][k.as_str().unwrap_or_default()];
                    if prop.is_null() {
                        problems.push(format!("{path}: list-map key {k} is not a property"));
                    }
                    if !required.contains(&k) && prop.get("default").is_none() {
                        problems.push(format!(
                            "{path}: list-map key {k} is neither required nor defaulted"
                        ));
                    }
                }
            }
            "set" => {
                if items.get("type").and_then(Value::as_str) == Some("object") {
                    problems.push(format!("{path}: a set of objects"));
                }
            }
            "atomic" => {}
            other => problems.push(format!("{path}: unknown list type {other}")),
        }
    } else if obj.contains_key("x-kubernetes-list-map-keys") {
        problems.push(format!("{path}: list-map keys without list-type map"));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            let child = format!("{path}.properties.{k}");
            if root && k == "metadata" {
                if v != &json!({"type": "object"}) {
                    problems.push(format!("{child}: metadata may only be `type: object`"));
                }
                continue;
            }
            check_node(v, &child, false, problems);
        }
        if let Some(req) = obj.get("required").and_then(Value::as_array) {
            for r in req {
                if !props.contains_key(r.as_str().unwrap_or_default()) {
                    problems.push(format!("{path}: required {r} is not a property"));
                }
            }
        }
    }
    if let Some(items) = obj.get("items") {
        check_node(items, &format!("{path}.items"), false, problems);
    }
    if let Some(ap) = obj.get("additionalProperties") {
        check_node(ap, &format!("{path}.additionalProperties"), false, problems);
    }
    for junctor in ["anyOf", "oneOf", "allOf"] {
        let Some(branches) = obj.get(junctor).and_then(Value::as_array) else {
            continue;
        };
        if junctor == "anyOf" && int_or_string {
            continue;
        }
        for (i, b) in branches.iter().enumerate() {
            check_nested(b, obj, &format!("{path}.{junctor}[{i}]"), problems);
        }
    }
    if let Some(not) = obj.get("not") {
        check_nested(not, obj, &format!("{path}.not"), problems);
    }
}

/// A value validation under a junctor: no generics or extensions, and only fields the outer
/// schema specifies.
fn check_nested(
    node: &Value,
    outer: &serde_json::Map<String, Value>,
    path: &str,
    problems: &mut Vec<String>,
) {
    let Some(obj) = node.as_object() else {
        problems.push(format!("{path}: not an object"));
        return;
    };
    for k in FORBIDDEN_NESTED {
        if obj.contains_key(*k) {
            problems.push(format!("{path}: {k} is forbidden under a junctor"));
        }
    }
    let outer_props = outer.get("properties").and_then(Value::as_object);
    let mentioned = obj
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(
            obj.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_else(Vec::new),
        );
    for k in mentioned {
        if k == "metadata" {
            problems.push(format!("{path}: metadata in a nested context"));
        }
        if !outer_props.is_some_and(|p| p.contains_key(&k)) {
            problems.push(format!("{path}: {k} is not specified outside the junctor"));
        }
    }
}

fn is_protected(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

#[test]
fn every_generated_crd_is_structural_and_well_formed() {
    let files = crd_files();
    assert!(
        files.len() >= 25,
        "expected the example's and every fixture's CRDs, found {files:?}"
    );
    assert!(files.contains(&example_crd_file()));
    let mut problems = Vec::new();
    for file in &files {
        let name = file
            .strip_prefix(workspace_root())
            .unwrap_or(file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if !text.starts_with(tests::crds::YAML_MARKER) {
            problems.push(format!(
                "{name}: not generated (no {:?} line)",
                tests::crds::YAML_MARKER
            ));
        }
        let crd = read_yaml(file);
        assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1", "{name}");
        assert_eq!(crd["kind"], "CustomResourceDefinition", "{name}");
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let plural = spec["names"]["plural"].as_str().unwrap_or_default();
        assert_eq!(
            crd["metadata"]["name"].as_str(),
            Some(format!("{plural}.{group}").as_str()),
            "{name}: metadata.name is <plural>.<group>"
        );
        assert!(group.contains('.'), "{name}: group {group:?} needs a dot");
        assert_eq!(
            spec["names"]["listKind"].as_str().map(String::from),
            spec["names"]["kind"].as_str().map(|k| format!("{k}List")),
            "{name}"
        );
        let approval = &crd["metadata"]["annotations"]["api-approved.kubernetes.io"];
        if is_protected(group) {
            let v = approval.as_str().unwrap_or_default();
            assert!(
                v.starts_with("unapproved") || v.starts_with("https://"),
                "{name}: protected group {group} needs the approval annotation, found {approval}"
            );
        } else {
            assert!(
                approval.is_null(),
                "{name}: approval annotation outside k8s.io"
            );
        }
        let versions = spec["versions"].as_array().cloned().unwrap_or_default();
        assert!(!versions.is_empty(), "{name}: no versions");
        let storage = versions
            .iter()
            .filter(|v| v["storage"] == Value::Bool(true))
            .count();
        assert_eq!(storage, 1, "{name}: exactly one storage version");
        let names: BTreeSet<&str> = versions.iter().filter_map(|v| v["name"].as_str()).collect();
        assert_eq!(names.len(), versions.len(), "{name}: duplicate versions");
        for v in &versions {
            let vname = v["name"].as_str().unwrap_or_default();
            let schema = &v["schema"]["openAPIV3Schema"];
            check_node(schema, &format!("{name}:{vname}"), true, &mut problems);
            for col in v["additionalPrinterColumns"]
                .as_array()
                .into_iter()
                .flatten()
            {
                assert!(
                    col["jsonPath"].as_str().is_some_and(|p| p.starts_with('.')),
                    "{name}: printer column {col}"
                );
            }
        }
    }
    assert!(
        problems.is_empty(),
        "not structural:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_structural_check_catches_what_the_apiserver_rejects() {
    let mut problems = Vec::new();
    check_node(
        &json!({
            "type": "object",
            "properties": {
                "a": {"description": "no type"},
                "b": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
                "c": {"$ref": "#/definitions/c"},
                "d": {"type": "array"},
                "e": {"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"type": "object", "required": ["y"]}]},
                "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
            },
        }),
        "t",
        true,
        &mut problems,
    );
    let text = problems.join("\n");
    for expected in [
        "t.properties.a: has no type",
        "t.properties.b: properties and additionalProperties together",
        "t.properties.c: keyword \"$ref\"",
        "t.properties.d: an array without items",
        "t.properties.e.oneOf[0]: type is forbidden under a junctor",
        "t.properties.e.oneOf[0]: y is not specified outside the junctor",
        "t.properties.metadata: metadata may only be `type: object`",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} not found in:\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// `crd()` is the YAML.

/// `crd()`, `crd_name()`, `shortnames()` of a kind, and its version.
type CrdFns = (
    fn() -> CustomResourceDefinition,
    fn() -> &'static str,
    fn() -> &'static [&'static str],
    &'static str,
);

macro_rules! kinds {
    ($($path:path => $version:literal),* $(,)?) => {
        vec![$((
            <$path as CustomResourceExt>::crd as fn() -> CustomResourceDefinition,
            <$path as CustomResourceExt>::crd_name as fn() -> &'static str,
            <$path as CustomResourceExt>::shortnames as fn() -> &'static [&'static str],
            $version,
        )),*]
    };
}

fn all_kinds() -> Vec<(CrdFns, String)> {
    use tests::fixtures::*;
    let kinds: Vec<CrdFns> = kinds![
        example_crddemo::pkg::apis::crddemo::v1::Mydemo => "v1",
        example_eru::pkg::apis::mtsre::v1::Eru => "v1",
        mixed_case::apis::example::v1::TestType => "v1",
        mixed_case::apis::example::v1::ClusterTestType => "v1",
        apiserver::apis::example3_io::v1::TestType => "v1",
        crd::apis::example::v1::TestType => "v1",
        crd::apis::example::v1::ClusterTestType => "v1",
        crd::apis::example2::v1::TestType => "v1",
        crd::apis::extensions::v1::TestType => "v1",
        crd_schema::apis::schema::v1::Sample => "v1",
        crd_schema::apis::schema::v1beta1::Sample => "v1beta1",
        crd_schema::apis::schema::v1::ClusterSample => "v1",
        hyphen_group::apis::example::v1::TestType => "v1",
        hyphen_group::apis::example::v1::ClusterTestType => "v1",
        multiversion::apis::multi::v1::Widget => "v1",
        multiversion::apis::multi::v1beta1::Widget => "v1beta1",
        multiversion::apis::multi::v1::Gadget => "v1",
        naming::apis::naming::v1::NetworkAttachmentDefinition => "v1",
        naming::apis::naming::v1::Endpoints => "v1",
        naming::apis::naming::v1::Policy => "v1",
        naming::apis::naming::v1::Gateway => "v1",
        naming::apis::naming::v1::Bus => "v1",
        naming::apis::naming::v1::Box => "v1",
        naming::apis::naming::v1::Leaf => "v1",
        naming::apis::naming::v1::DNSEndpoint => "v1",
        single::apis::api::v1::TestType => "v1",
        single::apis::api::v1::ClusterTestType => "v1",
        verbs::apis::verbs::v1::OnlyVerbsType => "v1",
        verbs::apis::verbs::v1::SkipVerbsType => "v1",
        verbs::apis::verbs::v1::ReadonlyType => "v1",
        verbs::apis::verbs::v1::NoVerbsType => "v1",
        verbs::apis::verbs::v1::NoStatusType => "v1",
        verbs::apis::verbs::v1::StatuslessType => "v1",
    ];
    kinds.into_iter().map(|k| (k, k.1().to_string())).collect()
}

#[test]
fn crd_fn_returns_exactly_the_yaml() {
    let files = crd_files();
    let mut covered = BTreeSet::new();
    for ((crd, name, short, _version), crd_name) in all_kinds() {
        let from_fn = crd();
        assert_eq!(from_fn.metadata.name.as_deref(), Some(name()));
        assert_eq!(
            from_fn.spec.names.short_names.clone().unwrap_or_default(),
            short().iter().map(|s| s.to_string()).collect::<Vec<_>>()
        );
        // Fixtures reuse groups, so several files may carry this name: one must be `crd()`.
        let candidates: Vec<&PathBuf> = files
            .iter()
            .filter(|f| read_yaml(f)["metadata"]["name"] == crd_name.as_str())
            .collect();
        assert!(!candidates.is_empty(), "no file for {crd_name}");
        let matching: Vec<&&PathBuf> = candidates
            .iter()
            .filter(|f| {
                let typed = read_crd(f);
                let json = serde_json::to_value(&typed).unwrap();
                typed == from_fn && same_json(&json, &read_yaml(f))
            })
            .collect();
        assert!(
            !matching.is_empty(),
            "{crd_name}: crd() differs from every file named so: {candidates:?}\n{}",
            serde_json::to_string_pretty(&from_fn).unwrap()
        );
        covered.extend(matching.into_iter().map(|f| (*f).clone()));
    }
    let uncovered: Vec<&PathBuf> = files.iter().filter(|f| !covered.contains(*f)).collect();
    assert!(
        uncovered.is_empty(),
        "CRD files no kind returns: {uncovered:?}"
    );
}

#[test]
fn register_short_names_follow_the_resource_marker() {
    use tests::fixtures::crd_schema::apis::schema::v1::RESOURCES;
    let sample = RESOURCES.iter().find(|r| r.kind == "Sample").unwrap();
    assert_eq!(sample.short_names, ["smp", "smps"]);
    let cluster = RESOURCES
        .iter()
        .find(|r| r.kind == "ClusterSample")
        .unwrap();
    assert!(
        !cluster.namespaced,
        "scope=Cluster from +kubebuilder:resource"
    );
    assert_eq!(cluster.singular, "clustersample");
    assert_eq!(
        <tests::fixtures::crd_schema::apis::schema::v1::Sample as CustomResourceExt>::api_resource(
        )
        .version,
        "v1"
    );
}

// ---------------------------------------------------------------------------------------------
// Instances validate.

/// The OpenAPI v3 schema as a JSON Schema (draft 4, whose boolean `exclusiveMinimum` OpenAPI
/// 3.0 shares): `nullable: true` becomes a `null` type; Kubernetes extensions are ignored by the
/// validator.
fn to_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = match k.as_str() {
                    "properties" => Value::Object(
                        v.as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), to_json_schema(v)))
                            .collect(),
                    ),
                    "items" | "additionalProperties" | "not" => to_json_schema(v),
                    "anyOf" | "oneOf" | "allOf" => Value::Array(
                        v.as_array()
                            .into_iter()
                            .flatten()
                            .map(to_json_schema)
                            .collect(),
                    ),
                    _ => v.clone(),
                };
                out.insert(k.clone(), v);
            }
            if out.remove("nullable") == Some(Value::Bool(true))
                && let Some(Value::String(t)) = out.get("type").cloned()
            {
                out.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn validator(file: &Path, version: &str) -> jsonschema::Validator {
    validator_of(&read_yaml(file), version, &file.display().to_string())
}

/// The validator of `version` of a CRD document; `what` names it in panics.
fn validator_of(crd: &Value, version: &str, what: &str) -> jsonschema::Validator {
    let file = Path::new(what);
    let v = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{}: no version {version}", file.display()));
    let schema = to_json_schema(&v["schema"]["openAPIV3Schema"]);
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn ready(status: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: "ServiceCreated".into(),
        message: String::new(),
        last_transition_time: Time(Default::default()),
        observed_generation: Some(1),
    }
}

#[test]
fn mydemo_instances_validate_and_markers_reject() {
    use example_crddemo::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec, MydemoStatus};
    let v = validator(&example_crd_file(), "v1");
    let demo = |ip: &str, port: i32| Mydemo {
        metadata: ObjectMeta {
            name: Some("example-mydemo".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: MydemoSpec {
            ip: ip.into(),
            port,
        },
        status: Some(MydemoStatus {
            observed_generation: Some(1),
            conditions: vec![ready("True")],
            service_name: Some("example-mydemo".into()),
        }),
    };
    for (ip, port) in [
        ("127.0.0.1", 8080),
        ("10.1.2.3", 1),
        ("::1", 65535),
        ("2001:db8::42", 443),
        ("::ffff:192.0.2.1", 80),
        ("64:ff9b::198.51.100.7", 80),
    ] {
        let value = serde_json::to_value(demo(ip, port)).unwrap();
        assert_eq!(errors(&v, &value), Vec::<String>::new(), "{ip}:{port}");
    }
    for (ip, port, field) in [
        ("127.0.0.1", 0, "/spec/port"),
        ("127.0.0.1", 65536, "/spec/port"),
        ("127.0.0.1", -1, "/spec/port"),
        ("not-an-ip", 80, "/spec/ip"),
        ("256.1.1.1", 80, "/spec/ip"),
        ("::ffff:256.0.2.1", 80, "/spec/ip"),
        ("", 80, "/spec/ip"),
    ] {
        let value = serde_json::to_value(demo(ip, port)).unwrap();
        let errs = errors(&v, &value);
        assert!(
            errs.iter().any(|e| e.starts_with(field)),
            "{ip}:{port} must fail at {field}: {errs:?}"
        );
    }
    let mut bad_condition = demo("127.0.0.1", 80);
    if let Some(s) = bad_condition.status.as_mut() {
        s.conditions = vec![ready("Maybe")];
    }
    let errs = errors(&v, &serde_json::to_value(bad_condition).unwrap());
    assert!(
        errs.iter()
            .any(|e| e.starts_with("/status/conditions/0/status")),
        "{errs:?}"
    );
    let missing_spec =
        json!({"apiVersion": "crddemo.k8s.io/v1", "kind": "Mydemo", "metadata": {"name": "x"}});
    assert!(!v.is_valid(&missing_spec), "spec is required");
}

/// A kind's `Default` value as the API would store it: the CRD name and version, the CRD
/// (`crd()`, the same document as the YAML), and the value with apiVersion, kind and a name.
fn default_instance<K>() -> (&'static str, CustomResourceDefinition, Value)
where
    K: Default + serde::Serialize + CustomResourceExt + kube::Resource<DynamicType = ()>,
{
    let mut value = serde_json::to_value(K::default()).unwrap();
    value["apiVersion"] = K::api_version(&()).into();
    value["kind"] = K::kind(&()).into();
    value["metadata"]["name"] = "instance".into();
    (K::crd_name(), K::crd(), value)
}

macro_rules! default_instances {
    ($($path:path),* $(,)?) => {
        vec![$((stringify!($path), default_instance::<$path>())),*]
    };
}

/// Every fixture kind with a `Default` (all but the crd_schema samples, which have their own
/// tests below, and Mydemo, whose empty ip and port 0 the markers rightly refuse): its Rust
/// value, serialized, satisfies its own CRD's schema.
#[test]
fn every_kinds_rust_value_validates_against_its_crd() {
    use tests::fixtures::*;
    let all = default_instances![
        mixed_case::apis::example::v1::TestType,
        mixed_case::apis::example::v1::ClusterTestType,
        apiserver::apis::example3_io::v1::TestType,
        crd::apis::example::v1::TestType,
        crd::apis::example::v1::ClusterTestType,
        crd::apis::example2::v1::TestType,
        crd::apis::extensions::v1::TestType,
        hyphen_group::apis::example::v1::TestType,
        hyphen_group::apis::example::v1::ClusterTestType,
        multiversion::apis::multi::v1::Widget,
        multiversion::apis::multi::v1beta1::Widget,
        multiversion::apis::multi::v1::Gadget,
        naming::apis::naming::v1::NetworkAttachmentDefinition,
        naming::apis::naming::v1::Endpoints,
        naming::apis::naming::v1::Policy,
        naming::apis::naming::v1::Gateway,
        naming::apis::naming::v1::Bus,
        naming::apis::naming::v1::Box,
        naming::apis::naming::v1::Leaf,
        naming::apis::naming::v1::DNSEndpoint,
        single::apis::api::v1::TestType,
        single::apis::api::v1::ClusterTestType,
        verbs::apis::verbs::v1::OnlyVerbsType,
        verbs::apis::verbs::v1::SkipVerbsType,
        verbs::apis::verbs::v1::ReadonlyType,
        verbs::apis::verbs::v1::NoVerbsType,
        verbs::apis::verbs::v1::NoStatusType,
        verbs::apis::verbs::v1::StatuslessType,
    ];
    let mut problems = Vec::new();
    for (path, (crd_name, crd, value)) in &all {
        let version = value["apiVersion"]
            .as_str()
            .and_then(|av| av.rsplit('/').next())
            .unwrap_or_default()
            .to_string();
        let v = validator_of(&serde_json::to_value(crd).unwrap(), &version, crd_name);
        for e in errors(&v, value) {
            problems.push(format!("{path} ({crd_name} {version}): {e}"));
        }
        // A value the schema must refuse, so that the check above can fail: `spec` a string.
        let mut broken = value.clone();
        broken["spec"] = "not an object".into();
        if v.is_valid(&broken) {
            problems.push(format!("{path}: a string spec passed the schema"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A change that breaks one marker of a `Sample`.
type Breaker = Box<dyn Fn(&mut tests::fixtures::crd_schema::apis::schema::v1::Sample)>;

fn sample_value() -> tests::fixtures::crd_schema::apis::schema::v1::Sample {
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use tests::fixtures::crd_schema::apis::schema::v1::*;
    Sample {
        metadata: ObjectMeta {
            name: Some("s".into()),
            ..Default::default()
        },
        spec: SampleSpec {
            replicas: 3,
            big: -5_000_000_000,
            tiny: -8,
            short: 300,
            small: 200,
            port: 8443,
            unsigned: 4_000_000_000,
            huge: 1 << 40,
            index: 7,
            ratio: 0.75,
            weight: 1.5,
            enabled: true,
            initial: 'k',
            name: "web-1".into(),
            host: "example.com".into(),
            pull_policy: "Always".into(),
            comment: None,
            timeout_seconds: Some(30),
            owner: Some("team-a".into()),
            note: String::new(),
            args: vec!["--verbose".into()],
            tags: ["a".to_string(), "b".to_string()].into(),
            rgb: [255, 128, 0],
            labels: [("app".to_string(), "web".to_string())].into(),
            limits: [("memory".to_string(), Quantity("64Mi".into()))].into(),
            endpoint: Endpoint {
                host: "db".into(),
                port: 5432,
            },
            ports: vec![NamedPort {
                name: "http".into(),
                port: 80,
            }],
            fallback: Box::new(Endpoint {
                host: "db2".into(),
                port: 5433,
            }),
            location: Location {
                region: "eu".into(),
                zone: Some("eu-1a".into()),
            },
            custom: "x".into(),
            cache: "never sent".into(),
            memory: Quantity("1Gi".into()),
            max_surge: IntOrString::String("25%".into()),
            max_unavailable: "1".into(),
            start_time: Some(Time(Default::default())),
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            config: json!({"anything": [1, "two"]}),
            template: None,
            extensions: Default::default(),
            mode: Mode::ReadWrite,
            source: Source::Git {
                url: "https://example.com/repo.git".into(),
                revision: None,
            },
            shape: Shape::Rect(Rect {
                width: 2.0,
                height: 3.0,
            }),
            action: Action::Scale { replicas: 2 },
            size: Size::Human("1Gi".into()),
            wrapped: Wrapper { value: 42 },
            percent: Percent(99),
            range: Range { min: 1, max: 2 },
            aliases: Some(vec!["w".into()]),
        },
        status: Some(SampleStatus {
            replicas: 3,
            selector: "app=web".into(),
            phase: Some(Phase::Running),
            conditions: vec![ready("False")],
        }),
    }
}

#[test]
fn every_schema_feature_validates_rust_values() {
    let file =
        workspace_root().join("tests/fixtures/crd_schema/crd/samples.schema.example.com.yaml");
    let v = validator(&file, "v1");
    let value = serde_json::to_value(sample_value()).unwrap();
    assert_eq!(errors(&v, &value), Vec::<String>::new());

    // Other variants of the enums validate too.
    use tests::fixtures::crd_schema::apis::schema::v1::*;
    for (source, shape, action, size) in [
        (
            Source::Image("nginx".into()),
            Shape::Point,
            Action::Restart,
            Size::Bytes(1024),
        ),
        (
            Source::InlineFiles([("a".to_string(), "b".to_string())].into()),
            Shape::Circle { radius: 1.0 },
            Action::Notify {
                channel: "#ops".into(),
            },
            Size::Bytes(0),
        ),
    ] {
        let mut s = sample_value();
        s.spec.source = source;
        s.spec.shape = shape;
        s.spec.action = action;
        s.spec.size = size;
        s.spec.mode = Mode::Admin;
        s.spec.comment = Some("hi".into());
        let value = serde_json::to_value(s).unwrap();
        assert_eq!(errors(&v, &value), Vec::<String>::new());
    }

    // Each marker rejects what it should.
    let cases: Vec<(&str, Breaker)> = vec![
        ("/spec/replicas", Box::new(|s| s.spec.replicas = 101)),
        ("/spec/ratio", Box::new(|s| s.spec.ratio = 0.0)),
        ("/spec/ratio", Box::new(|s| s.spec.ratio = 0.3)),
        (
            "/spec/name",
            Box::new(|s| s.spec.name = "Not_A_Label".into()),
        ),
        ("/spec/name", Box::new(|s| s.spec.name = String::new())),
        (
            "/spec/host",
            Box::new(|s| s.spec.host = "not a host!".into()),
        ),
        (
            "/spec/pullPolicy",
            Box::new(|s| s.spec.pull_policy = "Sometimes".into()),
        ),
        ("/spec/args", Box::new(|s| s.spec.args.clear())),
        (
            "/spec/args",
            Box::new(|s| s.spec.args = vec!["a".into(); 6]),
        ),
        ("/spec/labels", Box::new(|s| s.spec.labels.clear())),
        (
            "/spec/endpoint/port",
            Box::new(|s| s.spec.endpoint.port = 0),
        ),
        ("/spec/percent", Box::new(|s| s.spec.percent = Percent(101))),
        (
            "/spec/memory",
            Box::new(|s| s.spec.memory.0 = "lots".into()),
        ),
        ("/spec", Box::new(|s| s.spec.owner = None)),
    ];
    for (field, break_it) in cases {
        let mut s = sample_value();
        break_it(&mut s);
        let errs = errors(&v, &serde_json::to_value(s).unwrap());
        assert!(
            errs.iter().any(|e| e.starts_with(field)),
            "expected an error at {field}: {errs:?}"
        );
    }
    // Two variants at once break the externally tagged enum's oneOf.
    let mut value = serde_json::to_value(sample_value()).unwrap();
    value["spec"]["source"]["image"] = json!("nginx");
    assert!(!v.is_valid(&value));
}

#[test]
fn older_versions_keep_their_own_schema() {
    let file =
        workspace_root().join("tests/fixtures/crd_schema/crd/samples.schema.example.com.yaml");
    let beta = validator(&file, "v1beta1");
    use tests::fixtures::crd_schema::apis::schema::v1beta1::{Sample, SampleSpec};
    let ok = Sample {
        spec: SampleSpec { replicas: 2 },
        ..Default::default()
    };
    assert!(beta.is_valid(&serde_json::to_value(ok).unwrap()));
    let bad = Sample {
        spec: SampleSpec { replicas: -1 },
        ..Default::default()
    };
    assert!(!beta.is_valid(&serde_json::to_value(bad).unwrap()));
    let crd = read_yaml(&file);
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions[0]["name"], "v1");
    assert_eq!(versions[0]["storage"], true);
    assert_eq!(versions[1]["name"], "v1beta1");
    assert_eq!(versions[1]["storage"], false);
    assert_eq!(versions[1]["deprecated"], true);
}

// ---------------------------------------------------------------------------------------------
// The other front doors.

/// The v1beta1 package of the schema fixture again, its generated code (with `crd: true`)
/// expanded by the proc macro.
#[allow(dead_code, missing_docs)]
mod macro_package {
    include!("../fixtures/crd_schema/pkg/apis/schema/v1beta1/types.rs");

    kube_codegen_macros::generate_package! {
        apis_dir: "fixtures/crd_schema/pkg/apis",
        group: "schema",
        version: "v1beta1",
        crd: true,
    }
}

#[test]
fn the_proc_macro_implements_the_same_crd() {
    let file =
        workspace_root().join("tests/fixtures/crd_schema/crd/samples.schema.example.com.yaml");
    // The macro expanded only v1beta1, yet the CRD holds every version of the group.
    assert_eq!(
        <macro_package::Sample as CustomResourceExt>::crd(),
        read_crd(&file)
    );
    assert_eq!(
        <macro_package::Sample as CustomResourceExt>::api_resource().api_version,
        "schema.example.com/v1beta1"
    );
}

#[test]
fn the_builder_writes_the_same_manifests() {
    let root = workspace_root();
    let out = tempfile::tempdir().unwrap();
    let written = kube_codegen::Builder::new()
        .apis_dir(root.join("tests/fixtures/crd_schema/pkg/apis"))
        .groups("schema:v1beta1,v1")
        .header_file(root.join("scripts/boilerplate.rs.txt"))
        .generators([kube_codegen::Generator::Crd])
        .crd_dir(out.path().join("manifests"))
        .emit_rerun_if_changed(false)
        .out_dir(out.path())
        .compile()
        .unwrap();
    let mut yaml: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    yaml.sort();
    assert_eq!(yaml.len(), 2, "{written:?}");
    for p in yaml {
        let name = p.file_name().unwrap();
        let golden = root.join("tests/fixtures/crd_schema/crd").join(name);
        assert_eq!(
            std::fs::read_to_string(p).unwrap(),
            std::fs::read_to_string(&golden).unwrap(),
            "{}",
            golden.display()
        );
    }
}
