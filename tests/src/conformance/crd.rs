//! Custom resources under their CRD's structural schema: value validations and their
//! field-error reasons, list types, CEL rules (with transition rules), structural-schema checks
//! of the CRD itself, defaults applied on read, the scale subresource and printer columns.

use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{
    Env, Failure, GROUP, Outcome, VERSION, causes, ensure, ensure_eq, ensure_status, install_crd,
    raw,
};

fn checks_path(ns: &str) -> String {
    format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/checks")
}

fn check(name: &str, spec: Value) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check",
        "metadata": {"name": name}, "spec": spec}),
    )
    .unwrap_or_default()
}

async fn post(env: &Env, path: &str, body: Vec<u8>) -> Result<super::Raw, Failure> {
    raw(
        &env.client,
        "POST",
        path,
        Some("application/json"),
        None,
        Some(body),
    )
    .await
}

pub(super) async fn schema_validation_reasons(env: &Env) -> Outcome {
    let ns = env.namespace("reasons").await?;
    let body = check(
        "bad",
        json!({"replicas": "x", "minReplicas": 5, "mode": "odd", "email": "nope", "when": "yesterday",
               "code": "ABCDEF", "ratio": 0.7, "tags": ["a", "a", "b", "c"],
               "items": [{"name": "x"}, {"name": "x", "value": 1}],
               "labels": {"a": "1", "b": "2", "c": "3"}, "name": "bad"}),
    );
    let r = post(env, &checks_path(&ns), body).await?;
    ensure_eq!(
        r.status().1,
        "Invalid",
        "reason of {}",
        String::from_utf8_lossy(&r.body)
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueTooMany",
                "spec.tags",
                "Too many: 4: must have at most 3 items"
            ),
            (
                "FieldValueTypeInvalid",
                "spec.when",
                "Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\""
            ),
            (
                "FieldValueInvalid",
                "spec.ratio",
                "Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5"
            ),
            (
                "FieldValueTypeInvalid",
                "spec.replicas",
                "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
            ),
            (
                "FieldValueTooLong",
                "spec.code",
                "Too long: may not be more than 5 bytes"
            ),
            (
                "FieldValueTypeInvalid",
                "spec.email",
                "Invalid value: \"nope\": spec.email in body must be of type email: \"nope\""
            ),
            (
                "FieldValueTooMany",
                "spec.labels",
                "Too many: 3: must have at most 2 items"
            ),
            (
                "FieldValueNotSupported",
                "spec.mode",
                "Unsupported value: \"odd\": supported values: \"fast\", \"slow\""
            ),
            (
                "FieldValueInvalid",
                ".spec.replicas",
                "Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64"
            ),
            (
                "FieldValueDuplicate",
                "spec.items[1]",
                "Duplicate value: {\"name\":\"x\"}"
            ),
            (
                "FieldValueDuplicate",
                "spec.tags[1]",
                "Duplicate value: \"a\""
            ),
            (
                "FieldValueInvalid",
                "<nil>",
                "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
            ),
        ]),
        "causes"
    );
    // A pattern is checked once the length fits; bounds name their limit.
    let r = post(
        env,
        &checks_path(&ns),
        check("pat", json!({"code": "AB1", "replicas": 11})),
    )
    .await?;
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueInvalid",
                "spec.code",
                "Invalid value: \"AB1\": spec.code in body should match '^[a-z]{3}$'"
            ),
            (
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ),
        ]),
        "pattern and maximum"
    );
    Ok(())
}

pub(super) async fn cel_rules(env: &Env) -> Outcome {
    let ns = env.namespace("cel").await?;
    let r = post(
        env,
        &checks_path(&ns),
        check(
            "cel",
            json!({"replicas": 2, "minReplicas": 5, "name": "bad", "mode": "fast", "size": 3}),
        ),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "Check.{GROUP} \"cel\" is invalid: [spec.replicas: Forbidden: replicas must be at least minReplicas, spec.name: Invalid value: \"bad\": must start with n-]"
        ),
        "rules with reason and fieldPath"
    );
    let r = post(
        env,
        &checks_path(&ns),
        check(
            "ok",
            json!({"replicas": 2, "name": "n-1", "mode": "fast", "size": 3}),
        ),
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "valid check: {}",
        String::from_utf8_lossy(&r.body)
    );
    // Transition rules see oldSelf.
    let r = raw(
        &env.client,
        "PATCH",
        &format!("{}/ok", checks_path(&ns)),
        Some("application/merge-patch+json"),
        None,
        Some(br#"{"spec":{"mode":"slow","size":1}}"#.to_vec()),
    )
    .await?;
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueInvalid",
                "spec",
                "Invalid value: mode is immutable"
            ),
            (
                "FieldValueInvalid",
                "spec.size",
                "Invalid value: 1: size may only grow"
            ),
        ]),
        "transition rules"
    );
    let r = raw(
        &env.client,
        "PATCH",
        &format!("{}/ok", checks_path(&ns)),
        Some("application/merge-patch+json"),
        None,
        Some(br#"{"spec":{"size":5}}"#.to_vec()),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "growing is allowed: {}",
        String::from_utf8_lossy(&r.body)
    );
    Ok(())
}

fn bad_crd(name: &str, spec_schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{name}s.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"kind": "Bad", "plural": format!("{name}s")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}}}]}})
}

pub(super) async fn crd_structural_schema_checks(env: &Env) -> Outcome {
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let send = |body: Value| async move {
        raw(
            &env.client,
            "POST",
            path,
            Some("application/json"),
            None,
            Some(serde_json::to_vec(&body).unwrap_or_default()),
        )
        .await
    };
    let base = "spec.validation.openAPIV3Schema.properties[spec]";
    // Not structural: types missing, list-type map without keys or over scalars.
    let r = send(bad_crd(
        "nonstructurals",
        json!({"type": "object", "properties": {
            "y": {"properties": {"z": {"type": "string"}}},
            "l": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "string"}}}}),
    ))
    .await?;
    ensure_eq!(
        r.status,
        422,
        "non-structural schema: {}",
        String::from_utf8_lossy(&r.body)
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueRequired",
                &format!("{base}.properties[y].type"),
                "Required value: must not be empty for specified object fields"
            ),
            (
                "FieldValueRequired",
                &format!("{base}.properties[l].x-kubernetes-list-map-keys"),
                "Required value: must not be empty if x-kubernetes-list-type is map"
            ),
            (
                "FieldValueInvalid",
                &format!("{base}.properties[l].items.type"),
                "Invalid value: \"string\": must be object if parent array's x-kubernetes-list-type is map"
            ),
        ]),
        "structural checks"
    );
    // Structural: defaults must fit, rules must compile.
    let r = send(bad_crd(
        "defaults",
        json!({"type": "object", "properties": {"d": {"type": "string", "default": 5}}}),
    ))
    .await?;
    ensure_eq!(
        r.causes(),
        causes(&[(
            "FieldValueTypeInvalid",
            &format!("{base}.properties[d].default"),
            "Invalid value: \"integer\":  in body must be of type string: \"integer\""
        )]),
        "defaults are validated"
    );
    let r = send(bad_crd(
        "rules",
        json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.x >"}],
               "properties": {"x": {"type": "integer"}}}),
    ))
    .await?;
    let got = r.causes();
    ensure_eq!(got.len(), 1, "one compile error: {got:?}");
    let want_field = format!("{base}.x-kubernetes-validations[0].rule");
    ensure_eq!(
        (got[0].0.as_str(), got[0].1.as_str()),
        ("FieldValueInvalid", want_field.as_str()),
        "compile error cause"
    );
    ensure!(
        got[0].2.starts_with(
            "Invalid value: {\"Rule\":\"self.x \\u003e\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>'"
        ),
        "compile error message: {}",
        got[0].2
    );
    Ok(())
}

pub(super) async fn crd_defaults_on_read(env: &Env) -> Outcome {
    let name = format!("defaulteds.{GROUP}");
    let schema = |with_default: bool| {
        let mut color = json!({"type": "string"});
        if with_default {
            color["default"] = json!("red");
        }
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"}, "color": color}}}})
    };
    let crd = |with_default: bool| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"group": GROUP, "scope": "Namespaced",
                "names": {"kind": "Defaulted", "plural": "defaulteds"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": schema(with_default)}}]}})
    };
    install_crd(&env.client, crd(false), env.ctx.timeout).await?;
    let ns = env.namespace("readdefault").await?;
    let path = format!("/apis/{GROUP}/v1/namespaces/{ns}/defaulteds");
    let body = serde_json::to_vec(
        &json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Defaulted",
        "metadata": {"name": "d"}, "spec": {"size": 1}}),
    )?;
    let r = post(env, &path, body).await?;
    let created = r.json();
    ensure_eq!(
        created["spec"].get("color"),
        None,
        "no default yet: {created:?}"
    );
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    crds.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": schema(true)}}]}}),
        ),
    )
    .await?;
    // The stored object was written without the field; reads default it once the server
    // serves the new schema.
    let deadline = Instant::now() + env.ctx.timeout;
    loop {
        let r = raw(&env.client, "GET", &format!("{path}/d"), None, None, None).await?;
        if r.json()["spec"]["color"] == json!("red") {
            break;
        }
        if Instant::now() > deadline {
            return Err(Failure::new(format!(
                "the default never appeared on read: {:?}",
                r.json()
            )));
        }
        env.pause(Duration::from_millis(100)).await;
    }
    let r = raw(&env.client, "GET", &path, None, None, None).await?;
    ensure_eq!(
        r.json()["items"][0]["spec"]["color"],
        json!("red"),
        "lists default too"
    );
    let _ = crds.delete(&name, &DeleteParams::default()).await;
    Ok(())
}

pub(super) async fn scale_subresource(env: &Env) -> Outcome {
    let ns = env.namespace("scale").await?;
    let r = post(env, &checks_path(&ns), check("s", json!({"replicas": 2}))).await?;
    ensure_eq!(
        r.status,
        201,
        "create: {}",
        String::from_utf8_lossy(&r.body)
    );
    let scale_path = format!("{}/s/scale", checks_path(&ns));
    let r = raw(&env.client, "GET", &scale_path, None, None, None).await?;
    let s = r.json();
    ensure_eq!(
        (
            s["kind"].clone(),
            s["apiVersion"].clone(),
            s["spec"].clone(),
            s["status"].clone()
        ),
        (
            json!("Scale"),
            json!("autoscaling/v1"),
            json!({"replicas": 2}),
            json!({"replicas": 0})
        ),
        "custom resource scale"
    );
    ensure_eq!(s["metadata"]["name"], json!("s"), "scale metadata");
    // The custom resource handler refuses other verbs on scale naming the verb and the
    // resource, and answers a subresource it does not serve as the object not found (the
    // object exists).
    let refused =
        |verb: &str| format!("{verb} is not supported on resources of kind \"checks.{GROUP}\"");
    let unserved = format!("{}/s/nothing", checks_path(&ns));
    let not_found = format!("checks.{GROUP} \"s\" not found");
    for (method, path, code, reason, message) in [
        (
            "POST",
            &scale_path,
            405,
            "MethodNotAllowed",
            refused("create"),
        ),
        (
            "DELETE",
            &scale_path,
            405,
            "MethodNotAllowed",
            refused("delete"),
        ),
        ("GET", &unserved, 404, "NotFound", not_found.clone()),
        ("POST", &unserved, 404, "NotFound", not_found.clone()),
    ] {
        let body = (method != "GET").then(|| b"{}".to_vec());
        let r = raw(
            &env.client,
            method,
            path,
            Some("application/json"),
            None,
            body,
        )
        .await?;
        ensure_status!(r, code, reason, message, "{method} {path}");
    }
    let r = raw(
        &env.client,
        "PUT",
        &scale_path,
        Some("application/json"),
        None,
        Some(serde_json::to_vec(
            &json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "s", "namespace": ns}, "spec": {"replicas": 20}}),
        )?),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "Check.{GROUP} \"s\" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"
        ),
        "scaling validates the object"
    );
    let r = raw(
        &env.client,
        "PATCH",
        &scale_path,
        Some("application/merge-patch+json"),
        None,
        Some(br#"{"spec":{"replicas":4}}"#.to_vec()),
    )
    .await?;
    ensure_eq!(r.json()["spec"]["replicas"], json!(4), "patched scale");
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/s", checks_path(&ns)),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(r.json()["spec"]["replicas"], json!(4), "the object follows");
    // Built-in workloads.
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x", "tier": "y"}},
            "template": {"metadata": {"labels": {"app": "x", "tier": "y"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let dpath = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let r = post(env, &dpath, serde_json::to_vec(&deploy)?).await?;
    ensure_eq!(
        r.status,
        201,
        "deployment: {}",
        String::from_utf8_lossy(&r.body)
    );
    let r = raw(
        &env.client,
        "PATCH",
        &format!("{dpath}/d/scale"),
        Some("application/merge-patch+json"),
        None,
        Some(br#"{"spec":{"replicas":5}}"#.to_vec()),
    )
    .await?;
    ensure_eq!(
        (r.json()["spec"].clone(), r.json()["status"].clone()),
        (
            json!({"replicas": 5}),
            json!({"replicas": 0, "selector": "app=x,tier=y"})
        ),
        "deployment scale"
    );
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
        "spec": {"replicas": 1, "selector": {"app": "r"},
            "template": {"metadata": {"labels": {"app": "r"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let rpath = format!("/api/v1/namespaces/{ns}/replicationcontrollers");
    let r = post(env, &rpath, serde_json::to_vec(&rc)?).await?;
    ensure_eq!(r.status, 201, "rc: {}", String::from_utf8_lossy(&r.body));
    let r = raw(
        &env.client,
        "GET",
        &format!("{rpath}/rc/scale"),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(
        (r.json()["spec"].clone(), r.json()["status"].clone()),
        (
            json!({"replicas": 1}),
            json!({"replicas": 0, "selector": "app=r"})
        ),
        "replication controller scale"
    );
    Ok(())
}

pub(super) async fn printer_columns(env: &Env) -> Outcome {
    let ns = env.namespace("printer").await?;
    let r = post(
        env,
        &checks_path(&ns),
        check(
            "tbl",
            json!({"replicas": 2, "items": [{"name": "a"}, {"name": "b"}], "mode": "fast"}),
        ),
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "create: {}",
        String::from_utf8_lossy(&r.body)
    );
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/tbl", checks_path(&ns)),
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None,
    )
    .await?;
    let t = r.json();
    let columns: Vec<(Value, Value, Value)> = t["columnDefinitions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| (c["name"].clone(), c["type"].clone(), c["priority"].clone()))
                .collect()
        })
        .unwrap_or_default();
    ensure_eq!(
        columns,
        vec![
            (json!("Name"), json!("string"), json!(0)),
            (json!("Replicas"), json!("integer"), json!(0)),
            (json!("Names"), json!("string"), json!(0)),
            (json!("Created"), json!("date"), json!(0)),
            (json!("Mode"), json!("string"), json!(1)),
        ],
        "columns"
    );
    ensure_eq!(
        t["columnDefinitions"][2]["description"],
        json!("Custom resource definition column (in JSONPath format): .spec.items[*].name"),
        "a column without description"
    );
    let cells: Vec<Value> = t["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure_eq!(cells.len(), 5, "cells: {cells:?}");
    ensure_eq!(
        cells[0..3].to_vec(),
        vec![json!("tbl"), json!(2), json!("a")],
        "cells: {cells:?}"
    );
    let age = cells[3].as_str().unwrap_or("");
    ensure!(
        age.ends_with('s') && age.trim_end_matches('s').parse::<u64>().is_ok(),
        "a date column is shown as an age: {age:?}"
    );
    ensure_eq!(cells[4], json!("fast"), "wide column");
    // Built-in tables show ages too.
    let r = raw(
        &env.client,
        "GET",
        &format!("/api/v1/namespaces/{ns}"),
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None,
    )
    .await?;
    let t = r.json();
    let last = t["rows"][0]["cells"]
        .as_array()
        .and_then(|c| c.last().cloned())
        .unwrap_or(Value::Null);
    ensure!(
        last.as_str()
            .is_some_and(|a| a.ends_with('s') || a.ends_with('m')),
        "namespace age: {last}"
    );
    let _ = PostParams::default();
    Ok(())
}
