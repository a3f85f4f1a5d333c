//! Field ownership beyond the apply merge itself: the `"."` entries of an updater's field set,
//! resetting `managedFields`, the upgrade from client-side to server-side apply, ownership
//! through `/scale`, atomic label selectors, and the request-level errors of apply and patch
//! (names, kinds).

use serde_json::{Value, json};

use super::{Env, Failure, GROUP, Outcome, Raw, VERSION, ensure, ensure_eq, ensure_status, raw};

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn widgets(ns: &str) -> String {
    format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/widgets")
}

async fn send(env: &Env, method: &str, path: &str, ct: &str, body: Value) -> Result<Raw, Failure> {
    let bytes = serde_json::to_vec(&body)?;
    raw(&env.client, method, path, Some(ct), None, Some(bytes)).await
}

async fn get(env: &Env, path: &str) -> Result<Value, Failure> {
    let r = raw(&env.client, "GET", path, None, None, None).await?;
    ensure_eq!(r.status, 200, "GET {path}: {}", String::from_utf8_lossy(&r.body));
    Ok(r.json())
}

/// `(manager, operation, subresource, fieldsV1)` of every `managedFields` entry.
fn entries(obj: &Value) -> Vec<(String, String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|es| {
            es.iter()
                .map(|e| {
                    let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
                    (s("manager"), s("operation"), s("subresource"), e["fieldsV1"].clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fields_of(obj: &Value, manager: &str) -> Value {
    entries(obj)
        .into_iter()
        .find(|e| e.0 == manager)
        .map(|e| e.3)
        .unwrap_or(Value::Null)
}

const MERGE: &str = "application/merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

pub(super) async fn update_field_sets_and_reset(env: &Env) -> Outcome {
    let ns = env.namespace("mfsets").await?;
    // An updater owns a map or list it brought into existence ("."), besides its items.
    let r = send(
        env,
        "POST",
        &format!("{}?fieldManager=maker", cms(&ns)),
        "application/json",
        json!({"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"a": "1"}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "create: {}", String::from_utf8_lossy(&r.body));
    ensure_eq!(
        fields_of(&r.json(), "maker"),
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}),
        "a creator's fields"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/c?fieldManager=editor", cms(&ns)),
        MERGE,
        json!({"metadata": {"labels": {"b": "1"}, "annotations": {"n": "1"}}, "data": {"b": "1"}}),
    )
    .await?;
    ensure_eq!(
        fields_of(&r.json(), "editor"),
        json!({"f:data": {"f:b": {}}, "f:metadata": {"f:annotations": {".": {}, "f:n": {}}, "f:labels": {"f:b": {}}}}),
        "an editor adding to existing maps owns only its keys"
    );
    let w = send(
        env,
        "POST",
        &format!("{}?fieldManager=maker", widgets(&ns)),
        "application/json",
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"size": 1, "color": "red", "tags": ["a"], "parts": [{"name": "p", "count": 1}]}}),
    )
    .await?;
    ensure_eq!(w.status, 201, "create widget: {}", String::from_utf8_lossy(&w.body));
    ensure_eq!(
        fields_of(&w.json(), "maker"),
        json!({"f:spec": {".": {}, "f:color": {}, "f:parts": {".": {}, "k:{\"name\":\"p\"}": {".": {}, "f:count": {}, "f:name": {}}},
                          "f:size": {}, "f:tags": {".": {}, "v:\"a\"": {}}}}),
        "a custom resource's creator"
    );
    // An applier's set has no "." for maps and lists, only for keyed items.
    let a = send(
        env,
        "PATCH",
        &format!("{}/w2?fieldManager=applier", widgets(&ns)),
        APPLY,
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget", "metadata": {"name": "w2", "labels": {"a": "1"}},
               "spec": {"size": 1, "tags": ["a"], "parts": [{"name": "p", "count": 1}]}}),
    )
    .await?;
    ensure_eq!(
        fields_of(&a.json(), "applier"),
        json!({"f:metadata": {"f:labels": {"f:a": {}}},
               "f:spec": {"f:parts": {"k:{\"name\":\"p\"}": {".": {}, "f:count": {}, "f:name": {}}}, "f:size": {}, "f:tags": {"v:\"a\"": {}}}}),
        "an applier's fields"
    );

    // `managedFields: [{}]` clears them all; so does `[]` for a built-in kind, while a custom
    // resource's metadata drops an empty list before the server sees it.
    let r = send(
        env,
        "PATCH",
        &format!("{}/w?fieldManager=third", widgets(&ns)),
        MERGE,
        json!({"metadata": {"managedFields": []}, "spec": {"size": 2}}),
    )
    .await?;
    let managers: Vec<String> = entries(&r.json()).into_iter().map(|e| e.0).collect();
    ensure_eq!(managers, vec!["maker", "third"], "[] on a custom resource");
    let r = send(
        env,
        "PATCH",
        &format!("{}/w?fieldManager=fourth", widgets(&ns)),
        MERGE,
        json!({"metadata": {"managedFields": [{}]}, "spec": {"size": 3}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "reset: {}", String::from_utf8_lossy(&r.body));
    ensure!(
        r.json()["metadata"].get("managedFields").is_none(),
        "[{{}}] clears managedFields: {}",
        r.json()["metadata"]
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/c?fieldManager=fourth", cms(&ns)),
        MERGE,
        json!({"metadata": {"managedFields": []}, "data": {"d": "1"}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "reset: {}", String::from_utf8_lossy(&r.body));
    ensure!(
        r.json()["metadata"].get("managedFields").is_none(),
        "[] clears a built-in object's managedFields: {}",
        r.json()["metadata"]
    );
    // An object without managedFields stays without them through updates …
    let mut c = get(env, &format!("{}/c", cms(&ns))).await?;
    c["data"]["e"] = json!("1");
    let r = send(env, "PUT", &format!("{}/c?fieldManager=fifth", cms(&ns)), "application/json", c).await?;
    ensure_eq!(r.status, 200, "update: {}", String::from_utf8_lossy(&r.body));
    ensure!(
        r.json()["metadata"].get("managedFields").is_none(),
        "an update does not start tracking: {}",
        r.json()["metadata"]
    );
    // … until an apply, which hands everything there to "before-first-apply".
    let r = send(
        env,
        "PATCH",
        &format!("{}/c?fieldManager=applier", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}}),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a",
        "apply to an object without managedFields"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/c?fieldManager=applier&force=true", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "forced apply: {}", String::from_utf8_lossy(&r.body));
    let got: Vec<(String, String)> = entries(&r.json()).into_iter().map(|e| (e.0, e.1)).collect();
    ensure_eq!(
        got,
        vec![
            ("applier".to_string(), "Apply".to_string()),
            ("before-first-apply".to_string(), "Update".to_string())
        ],
        "entries after the first apply"
    );
    ensure_eq!(
        fields_of(&r.json(), "before-first-apply"),
        json!({"f:data": {".": {}, "f:b": {}, "f:d": {}, "f:e": {}},
               "f:metadata": {"f:annotations": {".": {}, "f:n": {}}, "f:labels": {".": {}, "f:a": {}, "f:b": {}}}}),
        "before-first-apply owns the rest"
    );
    // Apply may not carry managedFields at all; a create may, and `[{}]` there is ignored.
    let r = send(
        env,
        "PATCH",
        &format!("{}/c?fieldManager=applier", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": [{}]}}),
    )
    .await?;
    ensure_status!(r, 400, "BadRequest", "metadata.managedFields must be nil", "apply with managedFields");
    let r = send(
        env,
        "POST",
        &format!("{}?fieldManager=maker", cms(&ns)),
        "application/json",
        json!({"metadata": {"name": "d", "managedFields": [{}]}, "data": {"a": "1"}}),
    )
    .await?;
    ensure_eq!(
        entries(&r.json()).into_iter().map(|e| e.0).collect::<Vec<_>>(),
        vec!["maker"],
        "create with [{{}}]"
    );
    Ok(())
}

pub(super) async fn client_side_apply_upgrade(env: &Env) -> Outcome {
    let ns = env.namespace("csaupgrade").await?;
    let last = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","data":{{"a":"1","b":"2"}},"kind":"ConfigMap","metadata":{{"annotations":{{}},"labels":{{"l":"1"}},"name":"{name}","namespace":"{ns}"}}}}"#
        )
    };
    for name in ["up", "other"] {
        // What `kubectl apply` (client-side) creates.
        let r = send(
            env,
            "POST",
            &format!("{}?fieldManager=kubectl-client-side-apply", cms(&ns)),
            "application/json",
            json!({"metadata": {"name": name, "labels": {"l": "1"},
                                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last(name)}},
                   "data": {"a": "1", "b": "2"}}),
        )
        .await?;
        ensure_eq!(r.status, 201, "create {name}: {}", String::from_utf8_lossy(&r.body));
    }
    // `kubectl apply --server-side` (manager "kubectl") takes over what the last-applied
    // configuration says the client-side applier set, without a conflict …
    let r = send(
        env,
        "PATCH",
        &format!("{}/up?fieldManager=kubectl", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "up", "labels": {"l": "1"}}, "data": {"a": "10", "b": "2"}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "upgrade: {}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    ensure_eq!(v["data"], json!({"a": "10", "b": "2"}), "data");
    ensure_eq!(
        entries(&v)
            .into_iter()
            .map(|e| (e.0, e.1, e.3))
            .collect::<Vec<_>>(),
        vec![
            (
                "kubectl".to_string(),
                "Apply".to_string(),
                json!({"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:l": {}}}})
            ),
            (
                "kubectl-client-side-apply".to_string(),
                "Update".to_string(),
                json!({"f:data": {".": {}, "f:b": {}}, "f:metadata": {"f:annotations": {".": {},
                       "f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}, "f:l": {}}}})
            )
        ],
        "ownership after the upgrade"
    );
    // … and rewrites the annotation to what it applied.
    ensure_eq!(
        v["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        json!("{\"apiVersion\":\"v1\",\"data\":{\"a\":\"10\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"l\":\"1\"},\"name\":\"up\"}}\n"),
        "last-applied annotation"
    );
    // A field the live object no longer has as last applied is not taken over.
    let r = send(
        env,
        "PATCH",
        &format!("{}/up?fieldManager=editor", cms(&ns)),
        MERGE,
        json!({"data": {"b": "3"}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "edit");
    let r = send(
        env,
        "PATCH",
        &format!("{}/up?fieldManager=kubectl", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "up"}, "data": {"a": "10", "b": "4"}}),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.b",
        "a field changed since the last client-side apply"
    );
    // Any other manager conflicts.
    let r = send(
        env,
        "PATCH",
        &format!("{}/other?fieldManager=someone", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}, "data": {"a": "10"}}),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a",
        "another manager"
    );
    Ok(())
}

pub(super) async fn apply_scale_and_atomic_selectors(env: &Env) -> Outcome {
    let ns = env.namespace("applyscale").await?;
    let deps = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let r = send(
        env,
        "PATCH",
        &format!("{deps}/d?fieldManager=owner"),
        APPLY,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "apply: {}", String::from_utf8_lossy(&r.body));
    ensure_eq!(
        fields_of(&r.json(), "owner")["f:spec"]["f:selector"],
        json!({}),
        "a label selector is owned whole"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{deps}/d/scale?fieldManager=scaler"),
        APPLY,
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": 5}}),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 1 conflict: conflict with \"owner\": .spec.replicas",
        "apply through /scale"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{deps}/d?fieldManager=other"),
        APPLY,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"app": "d", "x": "y"}}}}),
    )
    .await?;
    ensure_status!(
        r,
        409,
        "Conflict",
        "Apply failed with 1 conflict: conflict with \"owner\": .spec.selector",
        "another selector"
    );
    Ok(())
}

pub(super) async fn patch_name_and_kind_errors(env: &Env) -> Outcome {
    let ns = env.namespace("patchname").await?;
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"name": "rn"}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "create");
    let rename = "the name of the object (rn2) does not match the name on the URL (rn)";
    for (ct, body) in [
        (MERGE, json!({"metadata": {"name": "rn2"}})),
        ("application/strategic-merge-patch+json", json!({"metadata": {"name": "rn2"}})),
        ("application/json-patch+json", json!([{"op": "replace", "path": "/metadata/name", "value": "rn2"}])),
        (APPLY, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rn2"}})),
    ] {
        let path = format!("{}/rn?fieldManager=a", cms(&ns));
        let r = send(env, "PATCH", &path, ct, body).await?;
        ensure_status!(r, 400, "BadRequest", rename, "rename by {ct}");
    }
    let r = send(
        env,
        "PATCH",
        &format!("{}/w?fieldManager=a", widgets(&ns)),
        MERGE,
        json!({"metadata": {"name": "w2"}}),
    )
    .await?;
    ensure_eq!(r.status, 404, "merge patch of a missing object");
    for (path, body, name) in [
        (format!("{}/new", cms(&ns)), json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}), "new"),
        (format!("{}/new", cms(&ns)), json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}), "new"),
        (format!("{}/wn", widgets(&ns)), json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget", "spec": {"size": 1}}), "wn"),
    ] {
        let r = send(env, "PATCH", &format!("{path}?fieldManager=a"), APPLY, body).await?;
        ensure_status!(
            r,
            400,
            "BadRequest",
            format!("the name of the object ({name} based on URL) was undeterminable: name must be provided"),
            "apply without a name creating {path}"
        );
    }
    let r = send(
        env,
        "PATCH",
        &format!("{}/rn?fieldManager=a", cms(&ns)),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}),
    )
    .await?;
    ensure_eq!(
        (r.status, r.json()["metadata"]["name"].clone()),
        (200, json!("rn")),
        "apply without a name to an existing object"
    );
    for (path, api_version, kind) in [
        (format!("{}/rn", cms(&ns)), "v1", "Secret"),
        (format!("{}/rn", cms(&ns)), "apps/v1", "ConfigMap"),
        (format!("{}/none", cms(&ns)), "v1", "Secret"),
        (format!("{}/wn", widgets(&ns)), &*format!("{GROUP}/{VERSION}"), "Gadget"),
    ] {
        let name = path.rsplit('/').next().unwrap_or_default().to_string();
        let r = send(
            env,
            "PATCH",
            &format!("{path}?fieldManager=a"),
            APPLY,
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}),
        )
        .await?;
        let gv = if api_version == "v1" { "/v1".to_string() } else { api_version.to_string() };
        ensure_status!(
            r,
            400,
            "BadRequest",
            format!("invalid object type: {gv}, Kind={kind}"),
            "apply of a {kind} to {path}"
        );
    }
    Ok(())
}
