//! Custom resources beyond one fixed schema: value types (integers, int-or-string, `int32`,
//! embedded resources), several served versions (deprecation, pruning to the storage version,
//! subresources and columns per version), changes to a CRD (what may not change, stored
//! versions), validation ratcheting after a schema tightens, and CEL transition rules that
//! correlate list-map items by key or set `optionalOldSelf`.

use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams};
use serde_json::{Value, json};

use super::{Env, Failure, GROUP, Outcome, Raw, causes, ensure, ensure_eq, install_crd, raw};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd(plural: &str, kind: &str, versions: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural}, "versions": versions}})
}

fn version(name: &str, storage: bool, spec: Value) -> Value {
    json!({"name": name, "served": true, "storage": storage,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}})
}

fn object(version: &str, kind: &str, name: &str, spec: Value) -> Option<Vec<u8>> {
    serde_json::to_vec(
        &json!({"apiVersion": format!("{GROUP}/{version}"), "kind": kind,
        "metadata": {"name": name}, "spec": spec}),
    )
    .ok()
}

async fn send(
    env: &Env,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Vec<u8>>,
) -> Result<Raw, Failure> {
    raw(&env.client, method, path, Some(content_type), None, body).await
}

async fn merge(env: &Env, path: &str, patch: Value) -> Result<Raw, Failure> {
    send(
        env,
        "PATCH",
        path,
        "application/merge-patch+json",
        serde_json::to_vec(&patch).ok(),
    )
    .await
}

fn body(r: &Raw) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

async fn delete_crd(env: &Env, plural: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let _ = crds
        .delete(&format!("{plural}.{GROUP}"), &DeleteParams::default())
        .await;
}

/// Replaces the CRD with `change` applied to its current state.
async fn change_crd(env: &Env, plural: &str, change: impl Fn(&mut Value)) -> Result<Raw, Failure> {
    let path = format!("{CRDS}/{plural}.{GROUP}");
    let mut current = raw(&env.client, "GET", &path, None, None, None)
        .await?
        .json();
    change(&mut current);
    send(
        env,
        "PUT",
        &path,
        "application/json",
        serde_json::to_vec(&current).ok(),
    )
    .await
}

const NOT_CHECKED: (&str, &str, &str) = (
    "FieldValueInvalid",
    "<nil>",
    "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
);

pub(super) async fn crd_value_types(env: &Env) -> Outcome {
    let spec = json!({"type": "object", "properties": {
        "n": {"type": "integer"},
        "c": {"type": "integer", "x-kubernetes-validations": [{"rule": "self != 7", "message": "not seven"}]},
        "f": {"type": "number"},
        "ios": {"x-kubernetes-int-or-string": true},
        "small": {"type": "integer", "format": "int32"},
        "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true}}});
    install_crd(
        &env.client,
        crd(
            "valuetypes",
            "ValueType",
            json!([version("v1", true, spec)]),
        ),
        env.ctx.timeout,
    )
    .await?;
    let ns = env.namespace("valuetypes").await?;
    let path = format!("/apis/{GROUP}/v1/namespaces/{ns}/valuetypes");
    let create = |name: &'static str, spec: Value| {
        let path = path.clone();
        async move {
            send(
                env,
                "POST",
                &path,
                "application/json",
                object("v1", "ValueType", name, spec),
            )
            .await
        }
    };
    // Whole numbers come back as integers, whatever the field's type and however they were
    // written (a field with CEL rules is not sent a float: kube-apiserver's CEL sees a float64
    // there); an embedded object's null creationTimestamp is dropped.
    let r = create(
        "ok",
        json!({"n": 3.0, "f": 2, "ios": "50%", "small": 2147483647,
            "emb": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "x", "creationTimestamp": null}}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "create: {}", body(&r));
    ensure_eq!(
        r.json()["spec"],
        json!({"n": 3, "f": 2, "ios": "50%", "small": 2147483647,
            "emb": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}}),
        "stored values"
    );
    ensure!(
        !body(&r).contains("3.0") && !body(&r).contains("2.0"),
        "integers written as floats: {}",
        body(&r)
    );
    let r = merge(
        env,
        &format!("{path}/ok"),
        json!({"spec": {"f": 4.0, "ios": 8}}),
    )
    .await?;
    ensure_eq!(
        (
            r.json()["spec"]["f"].clone(),
            r.json()["spec"]["ios"].clone()
        ),
        (json!(4), json!(8)),
        "patched numbers: {}",
        body(&r)
    );
    // int-or-string takes integers and strings only.
    for (name, value, ty) in [
        ("bool", json!(true), "boolean"),
        ("float", json!(1.5), "number"),
    ] {
        let r = create(name, json!({"ios": value})).await?;
        ensure_eq!(r.status, 422, "int-or-string {ty}: {}", body(&r));
        let message = format!(
            "Invalid value: \"{ty}\": spec.ios in body must be of type integer,string: \"{ty}\""
        );
        ensure_eq!(
            r.causes(),
            causes(&[
                ("FieldValueTypeInvalid", "spec.ios", message.as_str()),
                NOT_CHECKED
            ]),
            "int-or-string {ty}"
        );
    }
    // An int32 out of range: reported without a field, and CEL rules still run.
    let r = create("big", json!({"small": 2147483648_i64, "c": 7})).await?;
    ensure_eq!(r.status, 422, "int32 overflow: {}", body(&r));
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueInvalid",
                "<nil>",
                "Invalid value: \"\": Checked value must be of type integer with format int32 in spec.small"
            ),
            ("FieldValueInvalid", "spec.c", "Invalid value: 7: not seven"),
        ]),
        "int32 overflow"
    );
    let r = create("low", json!({"small": -2147483649_i64})).await?;
    ensure_eq!(
        r.causes(),
        causes(&[(
            "FieldValueInvalid",
            "<nil>",
            "Invalid value: \"\": Checked value must be of type integer with format int32 in spec.small"
        )]),
        "int32 underflow"
    );
    delete_crd(env, "valuetypes").await;
    Ok(())
}

/// The two-version CRD of `crd_served_versions`: `v1` stores, `v2` is served and deprecated;
/// their schemas differ (`a` only in v1, `b` only in v2, `x` bounded only in v1).
fn multi_crd() -> Value {
    let replicas = json!({"type": "integer", "maximum": 10,
        "x-kubernetes-validations": [{"rule": "self != 7", "message": "not seven"}]});
    let spec = |own: &str, x: Value| json!({"type": "object", "properties": {own: {"type": "string"}, "x": x, "replicas": replicas}});
    let with = |mut v: Value, column: &str| {
        v["subresources"] = json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas"}});
        v["schema"]["openAPIV3Schema"]["properties"]["status"] =
            json!({"type": "object", "properties": {"replicas": {"type": "integer"}}});
        v["additionalPrinterColumns"] = json!([{"name": column.to_uppercase(), "type": "string",
            "jsonPath": format!(".spec.{column}")}]);
        v
    };
    let v1 = with(
        version(
            "v1",
            true,
            spec("a", json!({"type": "string", "maxLength": 10})),
        ),
        "a",
    );
    let mut v2 = with(
        version("v2", false, spec("b", json!({"type": "string"}))),
        "b",
    );
    v2["deprecated"] = json!(true);
    crd("multis", "Multi", json!([v1, v2]))
}

pub(super) async fn crd_served_versions(env: &Env) -> Outcome {
    install_crd(&env.client, multi_crd(), env.ctx.timeout).await?;
    let ns = env.namespace("multis").await?;
    let at = |v: &str| format!("/apis/{GROUP}/{v}/namespaces/{ns}/multis");
    let deprecated = format!("{GROUP}/v2 Multi is deprecated");
    // Written through v2: pruned and validated by v2's schema, then pruned by the storage
    // version's (b is not in v1) without a warning; every request to v2 warns.
    let r = send(
        env,
        "POST",
        &at("v2"),
        "application/json",
        object(
            "v2",
            "Multi",
            "m",
            json!({"a": "1", "b": "2", "x": "0123456789abc", "replicas": 1}),
        ),
    )
    .await?;
    ensure_eq!(r.status, 201, "create through v2: {}", body(&r));
    let mut warnings = r.warnings();
    warnings.sort();
    ensure_eq!(
        warnings,
        vec![deprecated.clone(), "unknown field \"spec.a\"".to_string()],
        "warnings of a write through v2"
    );
    ensure_eq!(
        (r.json()["apiVersion"].clone(), r.json()["spec"].clone()),
        (
            json!(format!("{GROUP}/v2")),
            json!({"x": "0123456789abc", "replicas": 1})
        ),
        "pruned to the storage version's schema"
    );
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/m", at("v1")),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(
        (r.json()["spec"].clone(), r.warnings()),
        (json!({"x": "0123456789abc", "replicas": 1}), Vec::new()),
        "read through v1"
    );
    // Columns per version.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    for (v, column) in [("v1", "A"), ("v2", "B")] {
        let r = raw(
            &env.client,
            "GET",
            &format!("{}/m", at(v)),
            None,
            Some(table),
            None,
        )
        .await?;
        let t = r.json();
        let names: Vec<Value> = t["columnDefinitions"]
            .as_array()
            .map(|cs| cs.iter().map(|c| c["name"].clone()).collect())
            .unwrap_or_default();
        ensure_eq!(
            (names, t["rows"][0]["cells"].clone()),
            (vec![json!("Name"), json!(column)], json!(["m", null])),
            "table through {v}"
        );
    }
    // OpenAPI per version.
    let r = raw(
        &env.client,
        "GET",
        &format!("/openapi/v3/apis/{GROUP}/v2"),
        None,
        None,
        None,
    )
    .await?;
    let reversed: Vec<&str> = GROUP.rsplit('.').collect();
    let def = format!("{}.v2.Multi", reversed.join("."));
    let mut props: Vec<String> =
        r.json()["components"]["schemas"][&def]["properties"]["spec"]["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
    props.sort();
    ensure_eq!(
        props,
        vec!["b", "replicas", "x"],
        "OpenAPI v3 of v2 ({def})"
    );
    // Status and scale through the version that is not stored.
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/m/status", at("v2")),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(r.status, 200, "status through v2: {}", body(&r));
    ensure_eq!(r.warnings(), vec![deprecated.clone()], "status warns");
    let r = merge(
        env,
        &format!("{}/m/status", at("v2")),
        json!({"status": {"replicas": 3}}),
    )
    .await?;
    ensure_eq!(
        (r.status, r.json()["status"].clone()),
        (200, json!({"replicas": 3})),
        "status patch through v2: {}",
        body(&r)
    );
    let r = merge(
        env,
        &format!("{}/m/scale", at("v2")),
        json!({"spec": {"replicas": 4}}),
    )
    .await?;
    ensure_eq!(
        (
            r.status,
            r.json()["spec"].clone(),
            r.json()["status"].clone()
        ),
        (200, json!({"replicas": 4}), json!({"replicas": 3})),
        "scale through v2: {}",
        body(&r)
    );
    // Scaling is checked against the schema and its rules, through either version.
    let scale_v1 = format!("{}/m/scale", at("v1"));
    let r = merge(env, &scale_v1, json!({"spec": {"replicas": 20}})).await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[(
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: 20: spec.replicas in body should be less than or equal to 10"
            )])
        ),
        "scale past the maximum: {}",
        body(&r)
    );
    let r = merge(env, &scale_v1, json!({"spec": {"replicas": 7}})).await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[(
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: 7: not seven"
            )])
        ),
        "scale against a rule: {}",
        body(&r)
    );
    let r = merge(env, &scale_v1, json!({"spec": {"replicas": 5}})).await?;
    ensure_eq!(
        (r.status, r.json()["spec"].clone()),
        (200, json!({"replicas": 5})),
        "scale through v1 after v2: {}",
        body(&r)
    );
    delete_crd(env, "multis").await;
    Ok(())
}

pub(super) async fn crd_update_rules(env: &Env) -> Outcome {
    let mut c = multi_crd();
    c["metadata"]["name"] = json!(format!("changes.{GROUP}"));
    c["spec"]["names"] = json!({"kind": "Change", "plural": "changes"});
    install_crd(&env.client, c, env.ctx.timeout).await?;
    let r = change_crd(env, "changes", |c| c["spec"]["scope"] = json!("Cluster")).await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[(
                "FieldValueInvalid",
                "spec.scope",
                "Invalid value: \"Cluster\": field is immutable"
            )])
        ),
        "scope change: {}",
        body(&r)
    );
    let stored_v1 = "Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions";
    let r = change_crd(env, "changes", |c| {
        let mut v2 = c["spec"]["versions"][1].clone();
        v2["storage"] = json!(true);
        c["spec"]["versions"] = json!([v2]);
    })
    .await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[("FieldValueInvalid", "status.storedVersions[0]", stored_v1)])
        ),
        "dropping the stored version: {}",
        body(&r)
    );
    let r = change_crd(env, "changes", |c| {
        c["spec"]["versions"][0]["storage"] = json!(false)
    })
    .await?;
    let got = r.causes();
    ensure!(
        r.status == 422
            && got.len() == 1
            && got[0].0 == "FieldValueInvalid"
            && got[0].1 == "spec.versions"
            && got[0]
                .2
                .ends_with(": must have exactly one version marked as storage version"),
        "no storage version: {}",
        body(&r)
    );
    // A new storage version joins status.storedVersions; the old one must stay served until
    // the status drops it.
    let r = change_crd(env, "changes", |c| {
        c["spec"]["versions"][0]["storage"] = json!(false);
        c["spec"]["versions"][1]["storage"] = json!(true);
    })
    .await?;
    ensure_eq!(
        (r.status, r.json()["status"]["storedVersions"].clone()),
        (200, json!(["v1", "v2"])),
        "storage moved to v2: {}",
        body(&r)
    );
    let r = change_crd(env, "changes", |c| {
        let v2 = c["spec"]["versions"][1].clone();
        c["spec"]["versions"] = json!([v2]);
    })
    .await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[("FieldValueInvalid", "status.storedVersions[0]", stored_v1)])
        ),
        "dropping v1 while stored: {}",
        body(&r)
    );
    delete_crd(env, "changes").await;
    Ok(())
}

pub(super) async fn crd_validation_ratcheting(env: &Env) -> Outcome {
    let schema = |tight: bool| {
        let mut x = json!({"type": "string"});
        let mut l = json!({"type": "array", "items": {"type": "string"}});
        if tight {
            x["maxLength"] = json!(10);
            l["maxItems"] = json!(2);
        }
        json!({"type": "object", "properties": {"x": x, "l": l, "y": {"type": "string"}}})
    };
    install_crd(
        &env.client,
        crd(
            "ratchets",
            "Ratchet",
            json!([version("v1", true, schema(false))]),
        ),
        env.ctx.timeout,
    )
    .await?;
    let ns = env.namespace("ratchets").await?;
    let path = format!("/apis/{GROUP}/v1/namespaces/{ns}/ratchets");
    let long = json!({"x": "0123456789abc", "l": ["a", "b", "c"]});
    let r = send(
        env,
        "POST",
        &path,
        "application/json",
        object("v1", "Ratchet", "old", long.clone()),
    )
    .await?;
    ensure_eq!(r.status, 201, "create: {}", body(&r));
    let r = change_crd(env, "ratchets", |c| {
        c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = schema(true)
    })
    .await?;
    ensure_eq!(r.status, 200, "tightening the schema: {}", body(&r));
    // Wait until the server validates with the tighter schema.
    let deadline = Instant::now() + env.ctx.timeout;
    loop {
        let r = send(
            env,
            "POST",
            &format!("{path}?dryRun=All"),
            "application/json",
            object("v1", "Ratchet", "new", long.clone()),
        )
        .await?;
        if r.status == 422 {
            ensure_eq!(
                r.causes(),
                causes(&[
                    (
                        "FieldValueTooLong",
                        "spec.x",
                        "Too long: may not be more than 10 bytes"
                    ),
                    (
                        "FieldValueTooMany",
                        "spec.l",
                        "Too many: 3: must have at most 2 items"
                    ),
                ]),
                "new objects get the tighter schema"
            );
            break;
        }
        if Instant::now() > deadline {
            return Err(Failure::new(format!(
                "the tighter schema never applied: {}",
                body(&r)
            )));
        }
        env.pause(Duration::from_millis(100)).await;
    }
    // Values an update leaves alone are not checked again; changed ones are.
    let r = merge(env, &format!("{path}/old"), json!({"spec": {"y": "new"}})).await?;
    ensure_eq!(r.status, 200, "an unrelated update: {}", body(&r));
    let r = merge(
        env,
        &format!("{path}/old"),
        json!({"spec": {"x": "0123456789abcd"}}),
    )
    .await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[(
                "FieldValueTooLong",
                "spec.x",
                "Too long: may not be more than 10 bytes"
            )])
        ),
        "a changed value: {}",
        body(&r)
    );
    delete_crd(env, "ratchets").await;
    Ok(())
}

pub(super) async fn cel_transition_correlation(env: &Env) -> Outcome {
    let spec = json!({"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"],
                "properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v may only grow"}]}},
        "o": {"type": "string", "x-kubernetes-validations": [{
            "rule": "!oldSelf.hasValue() || self == oldSelf.value()",
            "message": "o is immutable", "optionalOldSelf": true}]}}});
    install_crd(
        &env.client,
        crd(
            "transitions",
            "Transition",
            json!([version("v1", true, spec)]),
        ),
        env.ctx.timeout,
    )
    .await?;
    let ns = env.namespace("transitions").await?;
    let path = format!("/apis/{GROUP}/v1/namespaces/{ns}/transitions");
    // optionalOldSelf: the rule runs on create too, with no old value.
    let r = send(
        env,
        "POST",
        &path,
        "application/json",
        object(
            "v1",
            "Transition",
            "t",
            json!({"o": "x", "items": [{"k": "a", "v": 1}, {"k": "b", "v": 5}]}),
        ),
    )
    .await?;
    ensure_eq!(r.status, 201, "create: {}", body(&r));
    let item = format!("{path}/t");
    let r = merge(env, &item, json!({"spec": {"o": "y"}})).await?;
    ensure_eq!(
        r.causes(),
        causes(&[(
            "FieldValueInvalid",
            "spec.o",
            "Invalid value: \"y\": o is immutable"
        )]),
        "optionalOldSelf on update: {}",
        body(&r)
    );
    // Items are matched with their old state by key, not by index; new items have none.
    let r = merge(
        env,
        &item,
        json!({"spec": {"items": [{"k": "c", "v": 0}, {"k": "b", "v": 5}, {"k": "a", "v": 1}]}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "reordered with a new item: {}", body(&r));
    let r = merge(
        env,
        &item,
        json!({"spec": {"items": [{"k": "b", "v": 4}, {"k": "a", "v": 2}, {"k": "c", "v": 0}]}}),
    )
    .await?;
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[(
                "FieldValueInvalid",
                "spec.items[0]",
                "Invalid value: v may only grow"
            )])
        ),
        "an item that shrank: {}",
        body(&r)
    );
    // A rule far over the cost budget is refused when the CRD is created.
    let costly = json!({"type": "object", "properties": {"m": {"type": "array",
        "items": {"type": "array", "items": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, self.all(z, z.all(w, w.contains(y)))))"}]}}});
    let c = crd("costlies", "Costly", json!([version("v1", true, costly)]));
    let r = send(
        env,
        "POST",
        CRDS,
        "application/json",
        serde_json::to_vec(&c).ok(),
    )
    .await?;
    let rule = "spec.validation.openAPIV3Schema.properties[spec].properties[m].x-kubernetes-validations[0].rule";
    let hint = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";
    let per_rule =
        format!("Forbidden: estimated rule cost exceeds budget by factor of more than 100x {hint}");
    let total = format!(
        "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {hint}"
    );
    ensure_eq!(
        (r.status, r.causes()),
        (
            422,
            causes(&[
                ("FieldValueForbidden", rule, per_rule.as_str()),
                (
                    "FieldValueForbidden",
                    rule,
                    "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
                ),
                (
                    "FieldValueForbidden",
                    "spec.validation.openAPIV3Schema",
                    total.as_str()
                ),
            ])
        ),
        "cost estimate: {}",
        body(&r)
    );
    delete_crd(env, "transitions").await;
    Ok(())
}
