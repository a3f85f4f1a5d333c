//! The limits kube-apiserver puts on what one request can make it do: JSON patch size and
//! copies, the types a patch may give a built-in object's fields, data and object sizes, and
//! YAML alias expansion.

use serde_json::{Value, json};

use super::{Env, Outcome, causes, ensure, ensure_eq, ensure_status, raw};

fn configmaps(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

async fn send(
    env: &Env,
    method: &str,
    path: &str,
    ct: &str,
    body: &Value,
) -> Result<super::Raw, super::Failure> {
    raw(
        &env.client,
        method,
        path,
        Some(ct),
        None,
        Some(serde_json::to_vec(body)?),
    )
    .await
}

pub(super) async fn json_patch_limits(env: &Env) -> Outcome {
    let ns = env.namespace("jplimits").await?;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "bomb", "finalizers": ["example.com/hold"]}, "data": {"k": "v"}});
    let created = send(env, "POST", &configmaps(&ns), "application/json", &cm).await?;
    ensure_eq!(created.status, 201, "create: {}", created.json());
    let path = format!("{}/bomb", configmaps(&ns));
    let test = json!({"op": "test", "path": "/data/k", "value": "v"});
    let r = send(
        env,
        "PATCH",
        &path,
        "application/json-patch+json",
        &Value::Array(vec![test; 10_001]),
    )
    .await?;
    ensure_status!(
        r,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
        "10,001 operations"
    );
    // Each copy appends the list to itself: 40 of them would be 2^40 entries.
    let double =
        json!({"op": "copy", "from": "/metadata/finalizers", "path": "/metadata/finalizers/-"});
    let r = send(
        env,
        "PATCH",
        &path,
        "application/json-patch+json",
        &Value::Array(vec![double; 40]),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        "a copy bomb"
    );
    let release = json!({"metadata": {"finalizers": null}});
    let r = send(
        env,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &release,
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "the object is untouched and patchable: {}",
        r.json()
    );
    Ok(())
}

pub(super) async fn patches_decode_as_the_built_in_type(env: &Env) -> Outcome {
    let ns = env.namespace("ptypes").await?;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typed"}, "data": {"k": "v"}});
    let created = send(env, "POST", &configmaps(&ns), "application/json", &cm).await?;
    ensure_eq!(created.status, 201, "create: {}", created.json());
    let path = format!("{}/typed", configmaps(&ns));
    let go = "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string";
    for (ct, body) in [
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/data", "value": "str"}]),
        ),
        ("application/merge-patch+json", json!({"data": "str"})),
    ] {
        let r = send(env, "PATCH", &path, ct, &body).await?;
        let (code, reason, message) = r.status();
        ensure_eq!((code, reason.as_str()), (422, "Invalid"), "{ct}: {message}");
        ensure!(
            message.starts_with(" \"\" is invalid: patch: Invalid value: \"{")
                && message.ends_with(go),
            "{ct}: {message}"
        );
        let c = r.causes();
        ensure_eq!(c.len(), 1, "{ct}: {c:?}");
        ensure_eq!(
            (c[0].0.as_str(), c[0].1.as_str()),
            ("FieldValueInvalid", "patch"),
            "{ct}"
        );
    }
    for (body, detail) in [
        (
            json!({"data": "str"}),
            "Invalid value: \"map[data:str]\": cannot restore map from string",
        ),
        (
            json!({"data": {"k": 5}}),
            "Invalid value: \"map[data:map[k:5]]\": cannot convert int64 to string",
        ),
    ] {
        let r = send(
            env,
            "PATCH",
            &path,
            "application/strategic-merge-patch+json",
            &body,
        )
        .await?;
        ensure_status!(
            r,
            422,
            "Invalid",
            format!(" \"\" is invalid: patch: {detail}"),
            "strategic merge {body}"
        );
        ensure_eq!(
            r.causes(),
            causes(&[("FieldValueInvalid", "patch", detail)]),
            "{body}"
        );
    }
    for (data, detail) in [
        (json!("str"), ".data: expected map, got &{str}"),
        (
            json!({"k": 5}),
            ".data.k: expected string, got &value.valueUnstructured{Value:5}",
        ),
        (json!(["x"]), ".data: expected map, got &{[x]}"),
    ] {
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typed"}, "data": data});
        let r = send(
            env,
            "PATCH",
            &format!("{path}?fieldManager=limits&force=true"),
            "application/apply-patch+yaml",
            &config,
        )
        .await?;
        ensure_status!(
            r,
            500,
            "",
            format!("failed to create typed patch object (/typed; /v1, Kind=ConfigMap): {detail}"),
            "apply of data {data}"
        );
    }
    let r = raw(&env.client, "GET", &path, None, None, None).await?;
    ensure_eq!(r.json()["data"], json!({"k": "v"}), "nothing was stored");
    Ok(())
}

/// A `[]byte` field (a ConfigMap's `binaryData`) holds base64 as Go's decoder reads it: every
/// write path refuses anything else with Go's `illegal base64 data at input byte N`, and what
/// is stored reads back as Go encodes the bytes.
pub(super) async fn byte_fields_decode_as_base64(env: &Env) -> Outcome {
    let ns = env.namespace("b64").await?;
    let cm = |name: &str, v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "binaryData": {"k": v}});
    let handled = |at: usize| {
        format!(
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: illegal base64 data at input byte {at}"
        )
    };
    for (i, (bad, at)) in [
        ("!!", 0),
        ("aGk", 0),
        ("aGk=x", 4),
        ("aG k=", 2),
        ("a===", 1),
    ]
    .into_iter()
    .enumerate()
    {
        let r = send(
            env,
            "POST",
            &configmaps(&ns),
            "application/json",
            &cm(&format!("bad{i}"), bad),
        )
        .await?;
        ensure_status!(r, 400, "BadRequest", handled(at), "create with {bad:?}");
    }
    let created = send(
        env,
        "POST",
        &configmaps(&ns),
        "application/json",
        &cm("b", "a\nGk="),
    )
    .await?;
    ensure_eq!(created.status, 201, "create: {}", created.json());
    ensure_eq!(
        created.json()["binaryData"],
        json!({"k": "aGk="}),
        "stored as Go encodes it"
    );
    let path = format!("{}/b", configmaps(&ns));
    let r = send(env, "PUT", &path, "application/json", &cm("b", "ab!")).await?;
    ensure_status!(r, 400, "BadRequest", handled(2), "update");
    for (ct, body) in [
        (
            "application/json-patch+json",
            json!([{"op": "add", "path": "/binaryData/x", "value": "ab!"}]),
        ),
        (
            "application/merge-patch+json",
            json!({"binaryData": {"x": "ab!"}}),
        ),
    ] {
        let r = send(env, "PATCH", &path, ct, &body).await?;
        let (code, reason, message) = r.status();
        ensure_eq!((code, reason.as_str()), (422, "Invalid"), "{ct}: {message}");
        ensure!(
            message.starts_with(" \"\" is invalid: patch: Invalid value: \"{")
                && message.ends_with("illegal base64 data at input byte 2"),
            "{ct}: {message}"
        );
    }
    let detail = "Invalid value: \"map[binaryData:map[x:ab!]]\": error decoding from json: illegal base64 data at input byte 2";
    let r = send(
        env,
        "PATCH",
        &path,
        "application/strategic-merge-patch+json",
        &json!({"binaryData": {"x": "ab!"}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(" \"\" is invalid: patch: {detail}"),
        "strategic merge"
    );
    for name in ["b", "fresh"] {
        let r = send(
            env,
            "PATCH",
            &format!("{}/{name}?fieldManager=limits&force=true", configmaps(&ns)),
            "application/apply-patch+yaml",
            &cm(name, "ab!"),
        )
        .await?;
        ensure_status!(
            r,
            500,
            "",
            format!(
                "failed to convert new object (/{name}; /v1, Kind=ConfigMap) to proper version: unable to convert unstructured object to /v1, Kind=ConfigMap: error decoding from json: illegal base64 data at input byte 2"
            ),
            "apply to {name}"
        );
    }
    let r = raw(&env.client, "GET", &path, None, None, None).await?;
    ensure_eq!(
        r.json()["binaryData"],
        json!({"k": "aGk="}),
        "nothing was stored"
    );
    Ok(())
}

pub(super) async fn data_and_object_size_limits(env: &Env) -> Outcome {
    let ns = env.namespace("sizes").await?;
    let mib = 1024 * 1024;
    let cm = |name: &str, data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    let too_long = "Too long: may not be more than 1048576 bytes";
    let r = send(
        env,
        "POST",
        &configmaps(&ns),
        "application/json",
        &cm("big", json!({"k": "x".repeat(mib + 1)})),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!("ConfigMap \"big\" is invalid: []: {too_long}"),
        "ConfigMap data"
    );
    ensure_eq!(
        r.causes(),
        causes(&[("FieldValueTooLong", "[]", too_long)]),
        "ConfigMap causes"
    );
    let r = send(
        env,
        "POST",
        &configmaps(&ns),
        "application/json",
        &cm("fits", json!({"k": "x".repeat(mib - 100)})),
    )
    .await?;
    ensure_eq!(r.status, 201, "just under the limit");
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"},
                        "stringData": {"k": "x".repeat(mib + 1)}});
    let r = send(
        env,
        "POST",
        &format!("/api/v1/namespaces/{ns}/secrets"),
        "application/json",
        &secret,
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!("Secret \"big\" is invalid: data: {too_long}"),
        "Secret data"
    );
    // Under the data limit, over what etcd takes in one request.
    let finalizers: Vec<String> = (0..9000)
        .map(|i| format!("example.com/f{i:05}{}", "x".repeat(50)))
        .collect();
    let mut huge = cm("huge", json!({"k": "x".repeat(1_000_000)}));
    huge["metadata"]["annotations"] = json!({"a": "x".repeat(250 * 1024)});
    huge["metadata"]["finalizers"] = json!(finalizers);
    let r = send(env, "POST", &configmaps(&ns), "application/json", &huge).await?;
    ensure_status!(
        r,
        500,
        "",
        "etcdserver: request is too large",
        "an object over etcd's request limit"
    );
    Ok(())
}

pub(super) async fn yaml_alias_expansion_is_bounded(env: &Env) -> Outcome {
    let ns = env.namespace("yamlalias").await?;
    let mut y = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aliases\nx:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..=8 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        y.push_str(&format!("  l{i}: &l{i} [{refs}]\n"));
    }
    let r = raw(
        &env.client,
        "POST",
        &configmaps(&ns),
        Some("application/yaml"),
        None,
        Some(y.into_bytes()),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): yaml: document contains excessive aliasing (61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)",
        "a YAML alias tower"
    );
    Ok(())
}
