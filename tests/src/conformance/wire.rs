//! What a client sees on the wire: field validation and its warnings, content negotiation,
//! request parameters and their errors, patch and apply shapes, metadata validation, malformed
//! requests, aggregated discovery and the OpenAPI documents.

use serde_json::{Value, json};

use super::{Env, Failure, GROUP, Outcome, VERSION, causes, ensure, ensure_eq, ensure_status, raw};

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn checks(ns: &str) -> String {
    format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/checks")
}

async fn send(
    env: &Env,
    method: &str,
    path: &str,
    ct: &str,
    body: impl Into<Vec<u8>>,
) -> Result<super::Raw, Failure> {
    raw(&env.client, method, path, Some(ct), None, Some(body.into())).await
}

pub(super) async fn field_validation_directives(env: &Env) -> Outcome {
    let ns = env.namespace("fieldval").await?;
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","bogus":1},"data":{"a":"b"},"extra":true,"data":{"c":"d"}}"#;
    let r = send(
        env,
        "POST",
        &format!("{}?fieldValidation=Strict", cms(&ns)),
        "application/json",
        cm,
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"metadata.bogus\", unknown field \"extra\", duplicate field \"data\"",
        "Strict on a built-in"
    );
    let r = send(
        env,
        "POST",
        &format!("{}?fieldValidation=Warn", cms(&ns)),
        "application/json",
        cm,
    )
    .await?;
    ensure_eq!(r.status, 201, "Warn creates");
    ensure_eq!(
        r.warnings(),
        vec![
            "unknown field \"metadata.bogus\"",
            "unknown field \"extra\"",
            "duplicate field \"data\""
        ],
        "Warn warns"
    );
    ensure_eq!(
        r.json()["data"],
        json!({"a": "b", "c": "d"}),
        "duplicate maps of a typed object merge"
    );
    ensure!(r.json().get("extra").is_none(), "dropped: {}", r.json());
    let r = send(
        env,
        "PUT",
        &format!("{}/a?fieldValidation=Ignore", cms(&ns)),
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"extra":1}"#,
    )
    .await?;
    ensure_eq!(
        (r.status, r.warnings()),
        (200, Vec::<String>::new()),
        "Ignore is silent"
    );
    let r = send(
        env,
        "POST",
        &format!("{}?fieldValidation=Bogus", cms(&ns)),
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}"#,
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
        "unknown directive"
    );
    let check = format!(
        r#"{{"apiVersion":"{GROUP}/{VERSION}","kind":"Check","metadata":{{"name":"a","bogus":1}},"spec":{{"replicas":1,"foo":1,"replicas":2}},"extra":true}}"#
    );
    let r = send(
        env,
        "POST",
        &format!("{}?fieldValidation=Strict", checks(&ns)),
        "application/json",
        check.clone(),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "Check in version \"v1\" cannot be handled as a Check: strict decoding error: duplicate field \"spec.replicas\", unknown field \"metadata.bogus\", unknown field \"extra\", unknown field \"spec.foo\"",
        "Strict on a custom resource"
    );
    let r = send(env, "POST", &checks(&ns), "application/json", check).await?;
    ensure_eq!(
        (r.status, r.warnings()),
        (
            201,
            vec![
                "duplicate field \"spec.replicas\"".to_string(),
                "unknown field \"metadata.bogus\"".into(),
                "unknown field \"extra\"".into(),
                "unknown field \"spec.foo\"".into()
            ]
        ),
        "Warn is the default"
    );
    // A patch is checked after it is applied: its shape is a 422 on `patch`.
    let r = send(
        env,
        "PATCH",
        &format!("{}/a?fieldValidation=Strict", cms(&ns)),
        "application/merge-patch+json",
        r#"{"data":{"a":"c"},"extra":1,"extra":2}"#,
    )
    .await?;
    ensure_eq!(
        (r.status, r.status().1),
        (422, "Invalid".to_string()),
        "strict patch"
    );
    let message = r.status().2;
    ensure!(
        message.starts_with(" \"\" is invalid: patch: Invalid value: \"{")
            && message.ends_with(
                "}\": strict decoding error: duplicate field \"extra\", unknown field \"extra\""
            ),
        "strict patch message: {message}"
    );
    Ok(())
}

pub(super) async fn content_negotiation(env: &Env) -> Outcome {
    let ns = env.namespace("negotiate").await?;
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  a: b\n",
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "a YAML body: {}",
        String::from_utf8_lossy(&r.body)
    );
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/yml", cms(&ns)),
        None,
        Some("application/yaml"),
        None,
    )
    .await?;
    ensure_eq!(r.content_type(), "application/yaml", "YAML response");
    let text = String::from_utf8_lossy(&r.body).to_string();
    ensure!(
        text.starts_with("apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n"),
        "YAML body: {text}"
    );
    let r = raw(&env.client, "GET", &cms(&ns), None, Some("text/html"), None).await?;
    ensure_status!(
        r,
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        "406 from a built-in"
    );
    let r = raw(
        &env.client,
        "GET",
        &checks(&ns),
        None,
        Some("text/html"),
        None,
    )
    .await?;
    ensure_status!(
        r,
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        "406 from the custom resource handler"
    );
    let r = send(env, "POST", &cms(&ns), "text/plain", "x").await?;
    ensure_status!(
        r,
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        "415"
    );
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t""#,
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":\"v1\",\"kind\":\"Con ...)",
        "truncated JSON"
    );
    Ok(())
}

pub(super) async fn list_and_watch_parameters(env: &Env) -> Outcome {
    let ns = env.namespace("params").await?;
    let get = |q: &str| {
        let path = format!("{}?{q}", cms(&ns));
        async move { raw(&env.client, "GET", &path, None, None, None).await }
    };
    let r = get("limit=abc").await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "strconv.ParseInt: parsing \"abc\": invalid syntax",
        "limit=abc"
    );
    let r = get("resourceVersion=abc").await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
        "list resourceVersion=abc"
    );
    let r = get("watch=true&resourceVersion=abc").await?;
    ensure_status!(
        r,
        500,
        "",
        "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
        "watch resourceVersion=abc"
    );
    let r = get("continue=garbage").await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value",
        "continue=garbage"
    );
    let r = get("resourceVersionMatch=Exact").await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        "match without version"
    );
    let r = get("resourceVersion=1&resourceVersionMatch=Bogus").await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
        "bad match"
    );
    let r = get("watch=true&sendInitialEvents=true").await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        "sendInitialEvents without match"
    );
    let r = get("sendInitialEvents=true").await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        "sendInitialEvents on a list"
    );
    Ok(())
}

pub(super) async fn patch_error_shapes(env: &Env) -> Outcome {
    let ns = env.namespace("patcherr").await?;
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"jp"},"data":{"a":"b"}}"#,
    )
    .await?;
    ensure_eq!(r.status, 201, "create");
    let path = format!("{}/jp", cms(&ns));
    let rejected = "the server rejected our request due to an error in our request";
    for (body, what) in [
        (
            r#"[{"op":"test","path":"/data/a","value":"zzz"}]"#,
            "failed test",
        ),
        (
            r#"[{"op":"remove","path":"/data/missing"}]"#,
            "missing path",
        ),
        (r#"[{"op":"bogus","path":"/data/a"}]"#, "unknown operation"),
    ] {
        let r = send(env, "PATCH", &path, "application/json-patch+json", body).await?;
        ensure_status!(r, 422, "Invalid", rejected, "{what}");
        ensure_eq!(
            r.causes(),
            Vec::<(String, String, String)>::new(),
            "{what}: no causes"
        );
    }
    let r = send(
        env,
        "PATCH",
        &path,
        "application/json-patch+json",
        r#"{"op":"add"}"#,
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        "JSON patch that is no list"
    );
    let r = send(env, "PATCH", &path, "application/merge-patch+json", "[1,2]").await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
        "merge patch that is no object"
    );
    // Bodies as kube-apiserver's decoding and patch library (`evanphx/json-patch` v4) read
    // them, not as the RFCs have it.
    let (json, merge, strategic) = (
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    );
    for ct in [json, merge, strategic] {
        let r = send(env, "PATCH", &path, ct, "{data:{a:null}}").await?;
        ensure_status!(
            r,
            400,
            "BadRequest",
            "invalid JSON patch",
            "{ct} that is no JSON"
        );
    }
    let refused: [(&str, &str, &str); 3] = [
        (
            strategic,
            r#""a""#,
            "json: cannot unmarshal string into Go value of type map[string]interface {}",
        ),
        (
            json,
            "[1,2]",
            "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
        ),
        (merge, "null", "Invalid JSON Patch"),
    ];
    for (ct, body, message) in refused {
        let r = send(env, "PATCH", &path, ct, body).await?;
        ensure_status!(r, 400, "BadRequest", message, "{ct} {body}");
    }
    let applied: [(&str, &str, Value); 5] = [
        (strategic, "null", json!({"a": "b"})),
        (json, "null", json!({"a": "b"})),
        // `add` without a value adds null, which a ConfigMap's data decodes as "".
        (
            json,
            r#"[{"op":"add","path":"/data/z"}]"#,
            json!({"a": "b", "z": ""}),
        ),
        // `replace` of a missing key adds it.
        (
            json,
            r#"[{"op":"replace","path":"/data/y","value":"1"}]"#,
            json!({"a": "b", "y": "1", "z": ""}),
        ),
        // A missing key tests equal to null.
        (
            json,
            r#"[{"op":"test","path":"/data/missing"}]"#,
            json!({"a": "b", "y": "1", "z": ""}),
        ),
    ];
    for (ct, body, data) in applied {
        let r = send(env, "PATCH", &path, ct, body).await?;
        ensure_eq!(
            r.status,
            200,
            "{ct} {body}: {}",
            String::from_utf8_lossy(&r.body)
        );
        ensure_eq!(r.json().get("data").cloned(), Some(data), "{ct} {body}");
    }
    Ok(())
}

pub(super) async fn apply_shapes_and_conflicts(env: &Env) -> Outcome {
    let ns = env.namespace("applyshape").await?;
    let cm = format!("{}/ap", cms(&ns));
    let apply = |path: String, manager: &'static str, body: Value, force: bool| async move {
        let q = if force { "&force=true" } else { "" };
        raw(
            &env.client,
            "PATCH",
            &format!("{path}?fieldManager={manager}{q}"),
            Some("application/apply-patch+yaml"),
            None,
            Some(serde_json::to_vec(&body).unwrap_or_default()),
        )
        .await
    };
    let r = apply(
        cm.clone(),
        "m",
        json!({"kind": "ConfigMap", "metadata": {"name": "ap"}}),
        false,
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "invalid object type: /, Kind=ConfigMap",
        "apply without apiVersion"
    );
    let r = apply(
        cm.clone(),
        "m",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ap"}, "data": {"a": "b"}, "extra": 1}),
        false,
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        format!(
            "failed to create typed patch object (/ap; /v1, Kind=ConfigMap): .extra: field not declared in schema"
        ),
        "apply of an undeclared field"
    );
    let r = apply(
        cm.clone(),
        "m",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ap", "managedFields": [{"manager": "x"}]}}),
        false,
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "metadata.managedFields must be nil",
        "apply with managedFields"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cm}?force=true"),
        "application/merge-patch+json",
        "{}",
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
        "force on a merge patch"
    );
    // Two managers on a custom resource: ownership follows the schema's list and map types.
    let check = format!("{}/ssa", checks(&ns));
    let r = apply(
        check.clone(),
        "alice",
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "ssa", "labels": {"a": "1"}},
               "spec": {"replicas": 2, "tags": ["x", "y"], "items": [{"name": "x", "value": 1}, {"name": "y", "value": 2}],
                        "settings": {"a": "1"}, "labels": {"k": "v"}}}),
        false,
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "alice creates: {}",
        String::from_utf8_lossy(&r.body)
    );
    ensure_eq!(
        r.json()["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {
            "f:items": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}, "f:value": {}}, "k:{\"name\":\"y\"}": {".": {}, "f:name": {}, "f:value": {}}},
            "f:labels": {"f:k": {}}, "f:replicas": {}, "f:settings": {}, "f:tags": {"v:\"x\"": {}, "v:\"y\"": {}}}}),
        "alice's fields"
    );
    let bob = json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "ssa"},
        "spec": {"replicas": 3, "tags": ["z"], "items": [{"name": "x", "value": 5}], "settings": {"b": "2"}, "labels": {"k": "w", "j": "u"}}});
    let r = apply(check.clone(), "bob", bob.clone(), false).await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 4 conflicts: conflicts with \"alice\":\n- .spec.replicas\n- .spec.settings\n- .spec.items[name=\"x\"].value\n- .spec.labels.k",
        "conflicts"
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldManagerConflict",
                ".spec.replicas",
                "conflict with \"alice\""
            ),
            (
                "FieldManagerConflict",
                ".spec.settings",
                "conflict with \"alice\""
            ),
            (
                "FieldManagerConflict",
                ".spec.items[name=\"x\"].value",
                "conflict with \"alice\""
            ),
            (
                "FieldManagerConflict",
                ".spec.labels.k",
                "conflict with \"alice\""
            ),
        ]),
        "conflict causes"
    );
    let r = apply(check.clone(), "bob", bob, true).await?;
    ensure_eq!(r.status, 200, "force: {}", String::from_utf8_lossy(&r.body));
    let r = apply(
        check.clone(),
        "alice",
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "ssa"},
               "spec": {"tags": ["x"], "items": [{"name": "y", "value": 2}]}}),
        false,
    )
    .await?;
    let v = r.json();
    ensure_eq!(
        v["spec"],
        json!({"items": [{"name": "x", "value": 5}, {"name": "y", "value": 2}], "labels": {"j": "u", "k": "w"},
               "minReplicas": 0, "replicas": 3, "settings": {"b": "2"}, "tags": ["x", "z"]}),
        "merged by key, sets unioned, atomic maps replaced"
    );
    // kube-apiserver orders entries by time in whole seconds before the manager's name, so
    // bob's force and alice's re-apply swap places when a second boundary falls between them:
    // compare the entries by manager.
    let mut managers: Vec<(Value, Value)> = v["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| (m["manager"].clone(), m["fieldsV1"].clone()))
                .collect()
        })
        .unwrap_or_default();
    managers.sort_by_key(|(m, _)| m.as_str().map(str::to_owned));
    ensure_eq!(
        managers,
        vec![
            (
                json!("alice"),
                json!({"f:spec": {"f:items": {"k:{\"name\":\"y\"}": {".": {}, "f:name": {}, "f:value": {}}}, "f:tags": {"v:\"x\"": {}}}})
            ),
            (
                json!("bob"),
                json!({"f:spec": {"f:items": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}, "f:value": {}}}, "f:labels": {"f:j": {}, "f:k": {}}, "f:replicas": {}, "f:settings": {}, "f:tags": {"v:\"z\"": {}}}})
            ),
        ],
        "ownership after force and re-apply"
    );
    let r = apply(
        check.clone(),
        "carol",
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "ssa"}, "spec": {"bar": 1}}),
        false,
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        format!(
            "failed to create typed patch object (/ssa; {GROUP}/{VERSION}, Kind=Check): .spec.bar: field not declared in schema"
        ),
        "a field the CRD schema does not declare"
    );
    Ok(())
}

pub(super) async fn metadata_validation(env: &Env) -> Outcome {
    let ns = env.namespace("metaval").await?;
    let post = |q: &'static str, body: Value| {
        let path = format!("{}?dryRun=All{q}", cms(&ns));
        async move {
            raw(
                &env.client,
                "POST",
                &path,
                Some("application/json"),
                None,
                Some(serde_json::to_vec(&body).unwrap_or_default()),
            )
            .await
        }
    };
    let r = post(
        "",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
        "ownerReferences": [{"apiVersion": "v1", "kind": "", "name": "", "uid": ""}]}}),
    )
    .await?;
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].kind",
                "Required value: must not be empty"
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].name",
                "Required value: must not be empty"
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].uid",
                "Required value: must not be empty"
            ),
        ]),
        "owner reference fields"
    );
    let r = post("", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "ownerReferences": [
        {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1", "controller": true},
        {"apiVersion": "v1", "kind": "Y", "name": "y", "uid": "2", "controller": true}]}})).await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ConfigMap \"a\" is invalid: metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"v1\",\"kind\":\"X\",\"name\":\"x\",\"uid\":\"1\",\"controller\":true},{\"apiVersion\":\"v1\",\"kind\":\"Y\",\"name\":\"y\",\"uid\":\"2\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for X/x and Y/y",
        "two controllers"
    );
    let r = post("&fieldManager=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})).await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes",
        "long field manager"
    );
    let r = post(
        "",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a.b_c"}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ConfigMap \"a.b_c\" is invalid: metadata.name: Invalid value: \"a.b_c\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "subdomain names"
    );
    let r = post("", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": "notamap"})).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string",
        "a type error"
    );
    let r = raw(&env.client, "POST", &format!("{}?dryRun=All", checks(&ns)), Some("application/json"), None,
        Some(serde_json::to_vec(&json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Check", "metadata": {"name": "a"}}))?)).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        format!(
            "the API version in the data ({GROUP}/v2) does not match the expected API version ({GROUP}/{VERSION})"
        ),
        "apiVersion of the body vs the URL"
    );
    Ok(())
}

pub(super) async fn malformed_requests(env: &Env) -> Outcome {
    let ns = env.namespace("malformed").await?;
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(3 * 1024 * 1024 + 10)
    );
    let r = send(env, "POST", &cms(&ns), "application/json", big).await?;
    ensure_status!(
        r,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
        "a body over 3 MiB"
    );
    let deep = "[".repeat(200);
    let r = send(env, "POST", &cms(&ns), "application/json", deep).await?;
    ensure_eq!(
        (r.status, r.status().1),
        (400, "BadRequest".to_string()),
        "deeply nested JSON"
    );
    ensure!(
        r.status()
            .2
            .contains("unexpected end of JSON input (5b5b5b5b"),
        "deep nesting message: {}",
        r.status().2
    );
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/%ff%fe", cms(&ns)),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(
        (r.status, r.status().1),
        (404, "NotFound".to_string()),
        "invalid UTF-8 in a path"
    );
    Ok(())
}

pub(super) async fn aggregated_discovery(env: &Env) -> Outcome {
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = raw(&env.client, "GET", "/apis", None, Some(accept), None).await?;
    ensure_eq!(
        r.content_type(),
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        "content type"
    );
    let doc = r.json();
    ensure_eq!(doc["kind"], json!("APIGroupDiscoveryList"), "kind");
    let group = doc["items"]
        .as_array()
        .and_then(|i| i.iter().find(|g| g["metadata"]["name"] == GROUP).cloned())
        .ok_or_else(|| Failure::new(format!("{GROUP} missing from aggregated discovery")))?;
    let checks = group["versions"][0]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == "checks").cloned())
        .unwrap_or(Value::Null);
    ensure_eq!(
        checks,
        json!({"resource": "checks", "responseKind": {"group": GROUP, "version": VERSION, "kind": "Check"},
               "scope": "Namespaced", "singularResource": "check",
               "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
               "subresources": [
                   {"subresource": "status", "responseKind": {"group": GROUP, "version": VERSION, "kind": "Check"}, "verbs": ["get", "patch", "update"]},
                   {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]}]}),
        "checks"
    );
    ensure_eq!(
        group["versions"][0]["freshness"],
        json!("Current"),
        "freshness"
    );
    let r = raw(&env.client, "GET", "/api", None, Some(accept), None).await?;
    let core = r.json();
    let cm = core["items"][0]["versions"][0]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == "configmaps").cloned())
        .unwrap_or(Value::Null);
    ensure_eq!(
        cm,
        json!({"resource": "configmaps", "responseKind": {"group": "", "version": "", "kind": "ConfigMap"},
               "scope": "Namespaced", "singularResource": "configmap",
               "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
               "shortNames": ["cm"]}),
        "core configmaps"
    );
    Ok(())
}

pub(super) async fn openapi_documents(env: &Env) -> Outcome {
    // kube-apiserver publishes a CRD's documents a moment after it is established.
    let gv = format!("apis/{GROUP}/{VERSION}");
    let def = format!("dev.kube-codegen.conformance.{VERSION}.Check");
    let deadline = std::time::Instant::now() + env.ctx.timeout;
    let (url, doc) = loop {
        let index = raw(&env.client, "GET", "/openapi/v3", None, None, None)
            .await?
            .json();
        if let Some(url) = index["paths"][&gv]["serverRelativeURL"].as_str() {
            let doc = raw(&env.client, "GET", url, None, None, None).await?.json();
            if doc["components"]["schemas"].get(&def).is_some() {
                break (url.to_string(), doc);
            }
        }
        if std::time::Instant::now() > deadline {
            return Err(Failure::new(format!(
                "{def} never appeared under /openapi/v3/{gv}"
            )));
        }
        env.pause(std::time::Duration::from_millis(200)).await;
    };
    ensure!(
        url.starts_with(&format!("/openapi/v3/{gv}?hash=")),
        "url {url}"
    );
    ensure_eq!(
        doc["components"]["schemas"][&def]["x-kubernetes-group-version-kind"],
        json!([{"group": GROUP, "kind": "Check", "version": VERSION}]),
        "the Check definition"
    );
    let patch = &doc["paths"]
        [format!("/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/checks/{{name}}")]["patch"];
    ensure_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": GROUP, "version": VERSION, "kind": "Check"}),
        "patch operation"
    );
    ensure!(
        patch["parameters"].as_array().is_some_and(|ps| ps
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")),
        "fieldValidation parameter: {patch}"
    );
    let r = raw(&env.client, "GET", "/openapi/v3/api/v1", None, None, None).await?;
    let core = r.json();
    ensure_eq!(
        core["components"]["schemas"]["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"],
        json!([{"group": "", "kind": "ConfigMap", "version": "v1"}]),
        "ConfigMap definition"
    );
    let r = raw(
        &env.client,
        "GET",
        "/openapi/v2",
        None,
        Some("application/json"),
        None,
    )
    .await?;
    let v2 = r.json();
    ensure_eq!(v2["swagger"], json!("2.0"), "v2");
    ensure!(
        v2["definitions"].get(&def).is_some(),
        "v2 has the Check definition"
    );
    Ok(())
}

/// KEP-5958's opt-out, `Accept: application/json;drop=metadata.managedFields`: kube-apiserver
/// v1.37.1 has neither the parameter nor its `ManagedFieldsOptOut` gate (started with the
/// gate, it exits with `unrecognized feature gate: ManagedFieldsOptOut`), and answers as if the
/// parameter were absent — objects with their `managedFields`, in JSON, on every verb — so the
/// in-memory server does the same. A client asking for the drop must strip them itself.
pub(super) async fn managed_fields_drop_parameter(env: &Env) -> Outcome {
    const DROP: &str = "application/json;drop=metadata.managedFields";
    let ns = env.namespace("mfdrop").await?;
    let apply = |path: String, body: String| async move {
        raw(
            &env.client,
            "PATCH",
            &format!("{path}?fieldManager=cf-drop"),
            Some("application/apply-patch+yaml"),
            Some(DROP),
            Some(body.into_bytes()),
        )
        .await
    };
    let has_managed_fields =
        |v: &Value| v.pointer("/metadata/managedFields/0/manager") == Some(&json!("cf-drop"));
    let cm = format!("{}/a", cms(&ns));
    let r = apply(
        cm.clone(),
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}"#.into(),
    )
    .await?;
    ensure_eq!(
        (r.status, r.content_type(), has_managed_fields(&r.json())),
        (201, "application/json".to_string(), true),
        "apply of a built-in answered with managedFields"
    );
    let check = format!("{}/a", checks(&ns));
    let r = apply(
        check.clone(),
        format!(r#"{{"apiVersion":"{GROUP}/{VERSION}","kind":"Check","metadata":{{"name":"a"}},"spec":{{"replicas":1}}}}"#),
    )
    .await?;
    ensure_eq!(
        (r.status, has_managed_fields(&r.json())),
        (201, true),
        "apply of a custom resource answered with managedFields"
    );
    for (object, list) in [(cm, cms(&ns)), (check, checks(&ns))] {
        for accept in [
            DROP,
            "application/json; drop=metadata.managedFields",
            "application/json;drop=bogus",
        ] {
            let r = raw(&env.client, "GET", &object, None, Some(accept), None).await?;
            ensure_eq!(
                (r.status, r.content_type(), has_managed_fields(&r.json())),
                (200, "application/json".to_string(), true),
                "GET {object} with Accept {accept}"
            );
            let r = raw(&env.client, "GET", &list, None, Some(accept), None).await?;
            let items = r.json()["items"].as_array().cloned().unwrap_or_default();
            ensure_eq!(
                (r.status, items.len(), items.iter().all(has_managed_fields)),
                (200, 1, true),
                "LIST {list} with Accept {accept}"
            );
        }
        let r = raw(
            &env.client,
            "GET",
            &format!("{list}?watch=1&timeoutSeconds=1"),
            None,
            Some(DROP),
            None,
        )
        .await?;
        let first: Value = r
            .body
            .split(|b| *b == b'\n')
            .next()
            .and_then(|l| serde_json::from_slice(l).ok())
            .unwrap_or(Value::Null);
        ensure_eq!(
            (
                r.status,
                first["type"].clone(),
                has_managed_fields(&first["object"])
            ),
            (200, json!("ADDED"), true),
            "WATCH {list} with the drop parameter"
        );
    }
    // Table and PartialObjectMetadata are chosen as before; the parameter changes nothing.
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/a", cms(&ns)),
        None,
        Some("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io;drop=metadata.managedFields"),
        None,
    )
    .await?;
    ensure_eq!(
        (
            r.status,
            r.json()["kind"].clone(),
            has_managed_fields(&r.json())
        ),
        (200, json!("PartialObjectMetadata"), true),
        "PartialObjectMetadata with the drop parameter"
    );
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/a", cms(&ns)),
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io;drop=metadata.managedFields"),
        None,
    )
    .await?;
    ensure_eq!(
        (r.status, r.json()["kind"].clone()),
        (200, json!("Table")),
        "Table with the drop parameter"
    );
    Ok(())
}

/// Request details kube-apiserver reads as Go decodes them: boolean parameters (only `0` and
/// `false` are false), `?watch` on an object's path (a GET), the removed `export` parameter,
/// a WatchList's end bookmark only with `allowWatchBookmarks`, an `Accept` whose only
/// representations are unknown, patches that change an object's UID or kind, and the
/// discovery documents' methods.
pub(super) async fn go_parameters_and_methods(env: &Env) -> Outcome {
    let ns = env.namespace("goparams").await?;
    let get = |path: String, accept: Option<&'static str>| {
        let client = env.client.clone();
        async move { raw(&client, "GET", &path, None, accept, None).await }
    };
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        r#"{"metadata":{"name":"a"}}"#,
    )
    .await?;
    ensure_eq!(r.status, 201, "ConfigMap a: {:?}", r.json());

    const NOT_ALLOWED: &str = "the server does not allow this method on the requested resource";
    for (method, path) in [
        ("POST", "/version"),
        ("DELETE", "/api/v1"),
        ("POST", "/api"),
        ("POST", "/apis/apps/v1"),
    ] {
        let r = raw(&env.client, method, path, None, None, None).await?;
        ensure_status!(r, 405, "MethodNotAllowed", NOT_ALLOWED, "{method} {path}");
    }

    let object = format!("{}/a", cms(&ns));
    let r = get(format!("{object}?export=true"), None).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the export parameter, deprecated since v1.14, is no longer supported",
        "GET with export"
    );
    for ok in [
        format!("{object}?export=false"),
        format!("{}?export=true", cms(&ns)),
    ] {
        let r = get(ok.clone(), None).await?;
        ensure_eq!(r.status, 200, "{ok}");
    }
    let r = get(format!("{object}?watch=1"), None).await?;
    ensure_eq!(
        (r.status, r.json()["kind"].clone()),
        (200, json!("ConfigMap")),
        "?watch on an object's path is a GET"
    );

    // Watches end after a second; a list answers at once.
    for (value, watch) in [
        ("", true),
        ("F", true),
        ("yes", true),
        ("0", false),
        ("FALSE", false),
    ] {
        let r = get(format!("{}?watch={value}&timeoutSeconds=1", cms(&ns)), None).await?;
        let body = String::from_utf8_lossy(&r.body).to_string();
        let got = body.contains(r#""type":"ADDED""#);
        ensure_eq!((r.status, got), (200, watch), "watch={value:?}: {body}");
    }
    let initial = format!(
        "{}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        cms(&ns)
    );
    for (bookmarks, want) in [("", false), ("&allowWatchBookmarks=true", true)] {
        let r = get(format!("{initial}{bookmarks}"), None).await?;
        let body = String::from_utf8_lossy(&r.body).to_string();
        ensure!(body.contains(r#""type":"ADDED""#), "initial events: {body}");
        ensure_eq!(
            body.contains("k8s.io/initial-events-end"),
            want,
            "end bookmark with {bookmarks:?}: {body}"
        );
    }

    let r = get(
        object.clone(),
        Some("application/json;as=Table;v=v1;g=bogus.example"),
    )
    .await?;
    ensure_status!(
        r,
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        "a Table of an unknown group"
    );

    let merge = "application/merge-patch+json";
    let r = send(env, "PATCH", &object, merge, r#"{"metadata":{"uid":"x"}}"#).await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        r#"ConfigMap "a" is invalid: metadata.uid: Invalid value: "x": field is immutable"#,
        "a patch of the UID"
    );
    let r = send(env, "PATCH", &object, merge, r#"{"kind":"Secret"}"#).await?;
    let (code, reason, message) = r.status();
    ensure_eq!(
        (code, reason.as_str()),
        (422, "Invalid"),
        "a patch of the kind: {message}"
    );
    ensure!(
        message.starts_with(r#" "" is invalid: patch: Invalid value: "{"#)
            && message
                .ends_with(r#"}": converting (v1.Secret) to (core.ConfigMap): unknown conversion"#),
        "a patch of the kind: {message}"
    );
    ensure_eq!(
        r.causes().first().map(|c| c.1.clone()),
        Some("patch".to_string()),
        "the cause's field"
    );
    Ok(())
}

/// A protobuf field: its key, then for `bytes` its length and the bytes (wire type 2), for a
/// number its varint (wire type 0).
enum Pb<'a> {
    Bytes(u32, &'a [u8]),
    Varint(u32, u64),
}

/// The protobuf encoding of `fields`, in order.
fn pb(fields: &[Pb<'_>]) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut out = Vec::new();
    for f in fields {
        match f {
            Pb::Bytes(n, b) => {
                varint(&mut out, u64::from(*n) << 3 | 2);
                varint(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Pb::Varint(n, v) => {
                varint(&mut out, u64::from(*n) << 3);
                varint(&mut out, *v);
            }
        }
    }
    out
}

/// kube-apiserver's protobuf envelope around `object` (the message of `api_version`/`kind`).
fn envelope(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
    let type_meta = pb(&[
        Pb::Bytes(1, api_version.as_bytes()),
        Pb::Bytes(2, kind.as_bytes()),
    ]);
    let mut out = b"k8s\x00".to_vec();
    out.extend(pb(&[Pb::Bytes(1, &type_meta), Pb::Bytes(2, object)]));
    out
}

/// A map entry of `map<string, string>`.
fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    pb(&[Pb::Bytes(1, key.as_bytes()), Pb::Bytes(2, value)])
}

pub(super) async fn protobuf_bodies(env: &Env) -> Outcome {
    const PB: &str = "application/vnd.kubernetes.protobuf";
    let ns = env.namespace("protobuf").await?;
    // ObjectMeta: name 1, labels 11; ConfigMap: metadata 1, data 2, binaryData 3, immutable 4.
    let meta = pb(&[Pb::Bytes(1, b"pb"), Pb::Bytes(11, &entry("app", b"web"))]);
    let cm = pb(&[
        Pb::Bytes(1, &meta),
        Pb::Bytes(2, &entry("a", b"1")),
        Pb::Bytes(2, &entry("b", b"")),
        Pb::Bytes(3, &entry("raw", &[0, 255])),
        Pb::Varint(4, 0),
    ]);
    let r = send(env, "POST", &cms(&ns), PB, envelope("v1", "ConfigMap", &cm)).await?;
    ensure_eq!(
        r.status,
        201,
        "create from protobuf: {}",
        String::from_utf8_lossy(&r.body)
    );
    let got = r.json();
    ensure_eq!(
        (
            &got["data"],
            &got["binaryData"],
            &got["immutable"],
            &got["metadata"]["labels"]
        ),
        (
            &json!({"a": "1", "b": ""}),
            &json!({"raw": "AP8="}),
            &json!(false),
            &json!({"app": "web"})
        ),
        "the ConfigMap stored from protobuf (an immutable sent as false through its pointer stays)"
    );
    let rv = got["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();

    // An update replaces the object: data goes, the resourceVersion must match.
    let meta = pb(&[Pb::Bytes(1, b"pb"), Pb::Bytes(6, rv.as_bytes())]);
    let r = send(
        env,
        "PUT",
        &format!("{}/pb", cms(&ns)),
        PB,
        envelope("v1", "ConfigMap", &pb(&[Pb::Bytes(1, &meta)])),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "update from protobuf: {}",
        String::from_utf8_lossy(&r.body)
    );
    ensure_eq!(
        (
            r.json().get("data").cloned(),
            r.json()["metadata"].get("labels").cloned()
        ),
        (None, None),
        "the update replaced data and labels"
    );
    let r = send(
        env,
        "PUT",
        &format!("{}/pb", cms(&ns)),
        PB,
        envelope("v1", "ConfigMap", &pb(&[Pb::Bytes(1, &meta)])),
    )
    .await?;
    ensure_eq!(r.status, 409, "a stale resourceVersion from protobuf");

    // Delete options from protobuf: a dry run leaves the object.
    let dry_run = pb(&[Pb::Bytes(5, b"All")]);
    let r = send(
        env,
        "DELETE",
        &format!("{}/pb", cms(&ns)),
        PB,
        envelope("v1", "DeleteOptions", &dry_run),
    )
    .await?;
    ensure_eq!(r.status, 200, "a dry-run delete from protobuf");
    let r = raw(
        &env.client,
        "GET",
        &format!("{}/pb", cms(&ns)),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(r.status, 200, "the dry run left the ConfigMap");

    // Bodies that do not decode, with kube-apiserver's words.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "no envelope",
            vec![1, 2, 3],
            "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (010203)",
        ),
        (
            "an empty envelope",
            b"k8s\x00".to_vec(),
            "the object provided is unrecognized (must be of type ConfigMap): empty body (6b387300)",
        ),
        (
            "an unknown kind",
            envelope("v1", "Nope", b""),
            "Nope in version \"v1\" cannot be handled as a ConfigMap: no kind \"Nope\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
        (
            "a message cut short",
            envelope("v1", "ConfigMap", &[0x0a, 0x05, b'a', b'b']),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: unexpected EOF",
        ),
        (
            "another kind",
            envelope(
                "v1",
                "Secret",
                &pb(&[Pb::Bytes(1, &pb(&[Pb::Bytes(1, b"s")]))]),
            ),
            "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion",
        ),
    ];
    for (what, body, message) in cases {
        let r = send(env, "POST", &cms(&ns), PB, body).await?;
        ensure_status!(r, 400, "BadRequest", message, "{what}");
    }
    let r = send(env, "DELETE", &format!("{}/pb", cms(&ns)), PB, vec![1, 2]).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        "delete options that are not protobuf"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/pb", cms(&ns)),
        PB,
        b"k8s\x00".to_vec(),
    )
    .await?;
    ensure_status!(
        r,
        415,
        "UnsupportedMediaType",
        "415: Unsupported Media Type",
        "a patch is never protobuf"
    );
    Ok(())
}

/// `labelSelector`s that do not parse, and some that do where a stricter parser would refuse
/// them: kube-apiserver answers with `labels.Parse`'s own words.
pub(super) async fn label_selector_errors(env: &Env) -> Outcome {
    let ns = env.namespace("selectors").await?;
    let cases: &[(&str, Option<&str>)] = &[
        (
            "a in (b",
            Some("unable to parse requirement: found '', expected: ',' or ')'"),
        ),
        ("a,", Some("found '', expected: identifier after ','")),
        ("a=b=c", Some("found '=', expected: ',' or 'end of string'")),
        (
            "(",
            Some("found '(', expected: !, identifier, or 'end of string'"),
        ),
        (
            "a in b",
            Some("unable to parse requirement: found 'b' expected: '('"),
        ),
        (
            "a b",
            Some("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ),
        (
            "a in (,=",
            Some("unable to parse requirement: found '=', expected: ',', or identifier"),
        ),
        (
            "a>b",
            Some(
                "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        ("a in ()", None),
        ("in in (in)", None),
        ("a in (b,,c)", None),
        ("a==", None),
    ];
    for (selector, message) in cases {
        let query: String = form_urlencoded::byte_serialize(selector.as_bytes()).collect();
        let r = raw(
            &env.client,
            "GET",
            &format!("{}?labelSelector={query}", cms(&ns)),
            None,
            None,
            None,
        )
        .await?;
        match message {
            Some(m) => ensure_status!(r, 400, "BadRequest", m, "labelSelector {selector:?}"),
            None => ensure_eq!(r.status, 200, "labelSelector {selector:?} is accepted"),
        }
    }
    Ok(())
}
