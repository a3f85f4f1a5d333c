//! Field ownership beyond the apply merge itself: the upgrade from client-side to server-side
//! apply, atomic label selectors, and the request-level errors of apply and patch (names,
//! kinds).

use serde_json::{Value, json};

use super::{
    Env, Failure, GROUP, Outcome, Raw, VERSION, ensure, ensure_eq, ensure_status, get, raw,
};

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

/// `(manager, operation, subresource, fieldsV1)` of every `managedFields` entry.
fn entries(obj: &Value) -> Vec<(String, String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|es| {
            es.iter()
                .map(|e| {
                    let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
                    (
                        s("manager"),
                        s("operation"),
                        s("subresource"),
                        e["fieldsV1"].clone(),
                    )
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

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

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
        ensure_eq!(
            r.status,
            201,
            "create {name}: {}",
            String::from_utf8_lossy(&r.body)
        );
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
    ensure_eq!(
        r.status,
        200,
        "upgrade: {}",
        String::from_utf8_lossy(&r.body)
    );
    let v = r.json();
    ensure_eq!(v["data"], json!({"a": "10", "b": "2"}), "data");
    let got: Vec<(String, String)> = entries(&v).into_iter().map(|e| (e.0, e.1)).collect();
    ensure_eq!(
        got,
        vec![
            ("kubectl".to_string(), "Apply".to_string()),
            (
                "kubectl-client-side-apply".to_string(),
                "Update".to_string()
            )
        ],
        "entries after the upgrade"
    );
    ensure_eq!(
        fields_of(&v, "kubectl"),
        json!({"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:l": {}}}}),
        "the server-side applier owns what it applied"
    );
    // The client-side applier gives up only the conflicting field (its `"."` entries are an
    // intended difference, tests/CONFORMANCE.md).
    let csa = fields_of(&v, "kubectl-client-side-apply");
    ensure_eq!(
        (
            csa["f:data"].get("f:a").is_some(),
            csa["f:data"].get("f:b").is_some(),
            csa["f:metadata"]["f:annotations"]
                .get("f:kubectl.kubernetes.io/last-applied-configuration")
                .is_some()
        ),
        (false, true, true),
        "the client-side applier keeps the rest: {csa}"
    );
    // … and rewrites the annotation to what it applied.
    ensure_eq!(
        v["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        json!(
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"10\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"l\":\"1\"},\"name\":\"up\"}}\n"
        ),
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

pub(super) async fn atomic_label_selectors(env: &Env) -> Outcome {
    let ns = env.namespace("applysel").await?;
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

/// `(manager, fieldsV1, has a time)` of every `managedFields` entry, or `None` when the
/// object has none.
fn entries_with_times(obj: &Value) -> Option<Vec<(String, Value, bool)>> {
    obj["metadata"]["managedFields"].as_array().map(|es| {
        es.iter()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap_or("").to_string(),
                    e["fieldsV1"].clone(),
                    e.get("time").is_some(),
                )
            })
            .collect()
    })
}

/// Managed fields a request sets: kube-apiserver starts the writer's entry from them instead
/// of the live ones (an entry without a time keeps none), ignores them when they do not
/// decode, and clears them all for `[{}]` or `[]` — after which updates record nothing.
pub(super) async fn managed_fields_set_by_requests(env: &Env) -> Outcome {
    let ns = env.namespace("mfreq").await?;
    let base = cms(&ns);
    let entry = |manager: &str, operation: &str, key: &str| {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1",
               "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {format!("f:{key}"): {}}}})
    };
    let create = |name: &str, managed: Value| json!({"metadata": {"name": name, "managedFields": managed}, "data": {"k": "v"}});
    let patch = |cm: &str, data: Value, managed: Value| {
        let path = format!("{base}/{cm}?fieldManager=me");
        let mut body = json!({"data": data});
        if !managed.is_null() {
            body["metadata"] = json!({"managedFields": managed});
        }
        (path, body)
    };
    let made = |key: &str| json!({"f:data": {".": {}, format!("f:{key}"): {}}});
    let only = |key: &str| json!({"f:data": {format!("f:{key}"): {}}});

    // On a create, decodable entries are kept beside the creator's; others are dropped.
    let r = send(
        env,
        "POST",
        &format!("{base}?fieldManager=me"),
        JSON,
        create("given", json!([entry("x", "Update", "zz")])),
    )
    .await?;
    ensure_eq!(
        r.status,
        201,
        "create: {}",
        String::from_utf8_lossy(&r.body)
    );
    ensure_eq!(
        entries_with_times(&r.json()),
        Some(vec![
            ("x".into(), only("zz"), false),
            ("me".into(), made("k"), true)
        ]),
        "a create's given entries"
    );
    for (name, managed) in [
        ("empty", json!([])),
        ("zero", json!([{}])),
        ("bogus", json!([entry("x", "Bogus", "zz")])),
    ] {
        let r = send(
            env,
            "POST",
            &format!("{base}?fieldManager=me"),
            JSON,
            create(name, managed),
        )
        .await?;
        ensure_eq!(
            r.status,
            201,
            "create {name}: {}",
            String::from_utf8_lossy(&r.body)
        );
        ensure_eq!(
            entries_with_times(&r.json()),
            Some(vec![("me".into(), made("k"), true)]),
            "create {name}"
        );
    }

    // On an update, decodable entries replace the live ones.
    let (path, body) = patch(
        "given",
        json!({"k2": "v"}),
        json!([entry("y", "Apply", "k")]),
    );
    let r = send(env, "PATCH", &path, MERGE, body).await?;
    ensure_eq!(r.status, 200, "patch: {}", String::from_utf8_lossy(&r.body));
    ensure_eq!(
        entries_with_times(&r.json()),
        Some(vec![
            ("y".into(), only("k"), false),
            ("me".into(), only("k2"), true)
        ]),
        "an update's given entries"
    );
    // Entries that do not decode leave the live ones.
    let (path, body) = patch(
        "given",
        json!({"k3": "v"}),
        json!([entry("z", "Bogus", "k")]),
    );
    let r = send(env, "PATCH", &path, MERGE, body).await?;
    ensure_eq!(
        entries_with_times(&r.json()).map(|o| o.into_iter().map(|(m, _, _)| m).collect::<Vec<_>>()),
        Some(vec!["y".to_string(), "me".to_string()]),
        "undecodable entries are ignored"
    );
    // `[{}]` and `[]` clear them, and later updates record nothing.
    for (cm, reset) in [("given", json!([{}])), ("empty", json!([]))] {
        let (path, body) = patch(cm, json!({"k4": "v"}), reset.clone());
        let r = send(env, "PATCH", &path, MERGE, body).await?;
        ensure_eq!(
            r.status,
            200,
            "reset {reset}: {}",
            String::from_utf8_lossy(&r.body)
        );
        ensure_eq!(entries_with_times(&r.json()), None, "reset with {reset}");
        let (path, body) = patch(cm, json!({"k5": "v"}), Value::Null);
        let r = send(env, "PATCH", &path, MERGE, body).await?;
        ensure_eq!(
            entries_with_times(&r.json()),
            None,
            "an update after the reset with {reset}"
        );
    }
    Ok(())
}

/// Which fields an update owns (`"."` for the maps and lists it brings into existence, none
/// for an applier), `managedFields: [{}]` and `[]` clearing them (`[]` only on a built-in
/// kind: a custom resource's metadata drops an empty list before the server sees it), updates
/// not tracked afterwards, and the next apply handing everything there to
/// `before-first-apply`.
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
    ensure_eq!(
        r.status,
        201,
        "create: {}",
        String::from_utf8_lossy(&r.body)
    );
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
    ensure_eq!(
        w.status,
        201,
        "create widget: {}",
        String::from_utf8_lossy(&w.body)
    );
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
    let mut c = get(env, &format!("{}/c", cms(&ns))).await?.json();
    c["data"]["e"] = json!("1");
    let r = send(
        env,
        "PUT",
        &format!("{}/c?fieldManager=fifth", cms(&ns)),
        "application/json",
        c,
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "update: {}",
        String::from_utf8_lossy(&r.body)
    );
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
    ensure_eq!(
        r.status,
        200,
        "forced apply: {}",
        String::from_utf8_lossy(&r.body)
    );
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
    ensure_status!(
        r,
        400,
        "BadRequest",
        "metadata.managedFields must be nil",
        "apply with managedFields"
    );
    let r = send(
        env,
        "POST",
        &format!("{}?fieldManager=maker", cms(&ns)),
        "application/json",
        json!({"metadata": {"name": "d", "managedFields": [{}]}, "data": {"a": "1"}}),
    )
    .await?;
    ensure_eq!(
        entries(&r.json())
            .into_iter()
            .map(|e| e.0)
            .collect::<Vec<_>>(),
        vec!["maker"],
        "create with [{{}}]"
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
        (
            "application/strategic-merge-patch+json",
            json!({"metadata": {"name": "rn2"}}),
        ),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/metadata/name", "value": "rn2"}]),
        ),
        (
            APPLY,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rn2"}}),
        ),
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
        (
            format!("{}/new", cms(&ns)),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}),
            "new",
        ),
        (
            format!("{}/new", cms(&ns)),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            "new",
        ),
        (
            format!("{}/wn", widgets(&ns)),
            json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget", "spec": {"size": 1}}),
            "wn",
        ),
    ] {
        let r = send(env, "PATCH", &format!("{path}?fieldManager=a"), APPLY, body).await?;
        ensure_status!(
            r,
            400,
            "BadRequest",
            format!(
                "the name of the object ({name} based on URL) was undeterminable: name must be provided"
            ),
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
        (
            format!("{}/wn", widgets(&ns)),
            &*format!("{GROUP}/{VERSION}"),
            "Gadget",
        ),
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
        let gv = if api_version == "v1" {
            "/v1".to_string()
        } else {
            api_version.to_string()
        };
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

/// `(manager, operation, subresource)` of every `managedFields` entry, sorted.
fn owners(obj: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = entries(obj)
        .into_iter()
        .map(|(m, o, s, _)| (m, o, s))
        .collect();
    v.sort();
    v
}

/// A `managedFields` entry's `(manager, operation, subresource)`.
type Owner = (&'static str, &'static str, &'static str);

/// One request of [`scale_subresource_ownership`] and what follows it.
struct ScaleStep {
    what: &'static str,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Value,
    /// `(code, reason, message)`; a success has neither reason nor message.
    answer: (u16, &'static str, String),
    /// Then the object's replicas and its owners `(manager, operation, subresource)`.
    after: Option<(i64, Vec<Owner>)>,
}

/// Writes through `/scale` own the replicas alone, recorded with `subresource: scale`, and
/// are not tracked while nobody owns them; server-side apply of a `Scale` conflicts in the
/// `Scale`'s terms (`.spec.replicas`, an updater's version `autoscaling/v1`), with
/// `before-first-apply` when nobody owned the replicas; a custom resource's `Scale` cannot be
/// applied at all in kube-apiserver v1.37.
pub(super) async fn scale_subresource_ownership(env: &Env) -> Outcome {
    let ns = env.namespace("scaleown").await?;
    let deploy = format!("/apis/apps/v1/namespaces/{ns}/deployments/d");
    let updated = format!("/apis/apps/v1/namespaces/{ns}/deployments/e");
    let check = format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/checks/c");
    let deployment = |replicas: Option<i64>| {
        let mut spec = json!({"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}});
        if let Some(n) = replicas {
            spec["replicas"] = json!(n);
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})
    };
    let check_of = |spec: Value| json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "c"}, "spec": spec});
    let scale_of = |name: &str, spec: Option<Value>| {
        let mut s =
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name}});
        if let Some(spec) = spec {
            s["spec"] = spec;
        }
        s
    };
    let ok = |code: u16| (code, "", String::new());
    let conflict = |with: &str| {
        (
            409,
            "Conflict",
            format!("Apply failed with 1 conflict: conflict with {with}: .spec.replicas"),
        )
    };
    let cr_failure = |what: &str, name: &str| {
        (
            500,
            "",
            format!(
                "failed to {what} (/{name}; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1"
            ),
        )
    };
    let step = |what, method, path: String, content_type, body, answer, after| ScaleStep {
        what,
        method,
        path,
        content_type,
        body,
        answer,
        after,
    };
    let (d, e, c) = (deploy.as_str(), updated.as_str(), check.as_str());
    let mut created_by_update = deployment(Some(1));
    created_by_update["metadata"]["name"] = json!("e");
    let scale = |object: &str, manager: &str| format!("{object}/scale?fieldManager={manager}");
    let steps = vec![
        step("owner's apply", "PATCH", format!("{d}?fieldManager=owner"), APPLY, deployment(None), ok(201), None),
        // Nobody owns the defaulted replicas: they are `before-first-apply`'s.
        step("a Scale's first apply", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": 3}))),
            conflict(r#""before-first-apply" with subresource "scale" using autoscaling/v1"#), None),
        step("the same replicas", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": 1}))), ok(200),
            Some((1, vec![("before-first-apply", "Update", "scale"), ("hpa", "Apply", "scale"), ("owner", "Apply", "")]))),
        // An update through /scale takes the replicas from every other owner.
        step("a merge patch of the scale", "PATCH", scale(d, "m"), MERGE, json!({"spec": {"replicas": 2}}), ok(200),
            Some((2, vec![("m", "Update", "scale"), ("owner", "Apply", "")]))),
        step("apply over the scale's updater", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": 3}))),
            conflict(r#""m" with subresource "scale" using autoscaling/v1"#), None),
        step("a forced apply", "PATCH", format!("{}&force=true", scale(d, "hpa")), APPLY, scale_of("d", Some(json!({"replicas": 3}))), ok(200),
            Some((3, vec![("hpa", "Apply", "scale"), ("owner", "Apply", "")]))),
        // An empty `spec` is a field of the applier's own on the Scale: it keeps its entry,
        // replicas included, while the replicas drop to 0.
        step("an apply of an empty spec", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({}))), ok(200),
            Some((0, vec![("hpa", "Apply", "scale"), ("owner", "Apply", "")]))),
        step("the replicas applied again", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": 3}))), ok(200),
            Some((3, vec![("hpa", "Apply", "scale"), ("owner", "Apply", "")]))),
        // The object's own applier now conflicts with the Scale's, in the object's terms.
        step("the owner's apply of replicas", "PATCH", format!("{d}?fieldManager=owner"), APPLY, deployment(Some(1)),
            conflict(r#""hpa" with subresource "scale""#), None),
        // Once the conflicts pass: the name, the validation; the type first of all.
        step("a Scale of another name", "PATCH", scale(d, "hpa"), APPLY, scale_of("other", Some(json!({"replicas": 3}))),
            (400, "BadRequest", "the name of the object (other) does not match the name on the URL (d)".into()), None),
        step("negative replicas", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": -2}))),
            (422, "Invalid", "Scale.autoscaling \"d\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0".into()), None),
        step("an undeclared field", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", Some(json!({"replicas": 3, "bogus": 1}))),
            (500, "", "failed to create typed patch object (/d; autoscaling/v1, Kind=Scale): .spec.bogus: field not declared in schema".into()), None),
        step("force on a merge patch", "PATCH", format!("{}&force=true", scale(d, "m")), MERGE, json!({"spec": {"replicas": 4}}),
            (422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch".into()), None),
        // Giving the replicas up leaves the Scale without them: zero, and nobody owns them.
        step("an apply without replicas", "PATCH", scale(d, "hpa"), APPLY, scale_of("d", None), ok(200),
            Some((0, vec![("owner", "Apply", "")]))),
        // With nobody owning the replicas, an update through /scale is not tracked.
        step("a PUT of unowned replicas", "PUT", scale(d, "putter"), JSON,
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": ns}, "spec": {"replicas": 5}}), ok(200),
            Some((5, vec![("owner", "Apply", "")]))),
        // kube-apiserver's scale handler does not recognise an updater on its way back from
        // the Scale: one that keeps the replicas (here through a write of the same replicas)
        // has them in a second entry of its own, lost at the object's next write.
        step("an updater's create", "POST", format!("/apis/apps/v1/namespaces/{ns}/deployments?fieldManager=creator"), JSON,
            created_by_update, ok(201), None),
        step("the same replicas through the scale", "PATCH", scale(e, "kubectl"), MERGE, json!({"spec": {"replicas": 1}}), ok(200),
            Some((1, vec![("creator", "Update", ""), ("creator", "Update", "")]))),
        step("another updater's label", "PATCH", format!("{e}?fieldManager=labeller"), MERGE, json!({"metadata": {"labels": {"x": "y"}}}), ok(200),
            Some((1, vec![("creator", "Update", ""), ("labeller", "Update", "")]))),
        step("an apply of the replicas the creator lost", "PATCH", format!("{e}?fieldManager=applier"), APPLY,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "e"}, "spec": {"replicas": 4}}), ok(200),
            Some((4, vec![("applier", "Apply", ""), ("creator", "Update", ""), ("labeller", "Update", "")]))),
        // A custom resource's Scale; its replicas are defaulted: nobody owns them.
        step("the custom resource", "PATCH", format!("{c}?fieldManager=owner"), APPLY, check_of(json!({"mode": "fast"})), ok(201), None),
        step("a custom resource's first Scale apply", "PATCH", scale(c, "hpa"), APPLY, scale_of("c", Some(json!({"replicas": 1}))),
            cr_failure("create manager for existing fields: failed to convert live object", ""), None),
        step("a merge patch of unowned replicas", "PATCH", scale(c, "m"), MERGE, json!({"spec": {"replicas": 2}}), ok(200),
            Some((2, vec![("owner", "Apply", "")]))),
        step("the owner applies the replicas", "PATCH", format!("{c}?fieldManager=owner"), APPLY, check_of(json!({"mode": "fast", "replicas": 2})), ok(200), None),
        step("a merge patch of owned replicas", "PATCH", scale(c, "m"), MERGE, json!({"spec": {"replicas": 3}}), ok(200),
            Some((3, vec![("m", "Update", "scale"), ("owner", "Apply", "")]))),
        step("apply over the custom resource's scale updater", "PATCH", scale(c, "hpa"), APPLY, scale_of("c", Some(json!({"replicas": 4}))),
            conflict(r#""m" with subresource "scale" using autoscaling/v1"#), None),
        step("a forced apply of a custom resource's Scale", "PATCH", format!("{}&force=true", scale(c, "hpa")), APPLY, scale_of("c", Some(json!({"replicas": 4}))),
            cr_failure("convert new object", "c"), None),
        step("an apply that changes nothing", "PATCH", scale(c, "hpa"), APPLY, scale_of("c", None), ok(200),
            Some((3, vec![("m", "Update", "scale"), ("owner", "Apply", "")]))),
    ];
    for s in steps {
        let r = send(env, s.method, &s.path, s.content_type, s.body).await?;
        let want = (s.answer.0, s.answer.1.to_string(), s.answer.2);
        ensure_eq!(r.status(), want, "{}", s.what);
        let Some((replicas, want_owners)) = s.after else {
            continue;
        };
        // A `Scale`'s `spec.replicas` is `omitempty`.
        if s.path.contains("/scale?") {
            let spec = if replicas == 0 {
                json!({})
            } else {
                json!({"replicas": replicas})
            };
            ensure_eq!(r.json()["spec"], spec, "{}: the Scale", s.what);
        }
        let object = [d, e, c]
            .into_iter()
            .find(|o| s.path.starts_with(o))
            .unwrap_or(c);
        let obj = get(env, object).await?.json();
        ensure_eq!(
            obj["spec"]["replicas"],
            json!(replicas),
            "{}: replicas",
            s.what
        );
        let want_owners: Vec<(String, String, String)> = want_owners
            .into_iter()
            .map(|(m, o, sub)| (m.to_string(), o.to_string(), sub.to_string()))
            .collect();
        ensure_eq!(owners(&obj), want_owners, "{}: owners", s.what);
        // What a scale writer owns is the replicas alone, and its entry has no time.
        for (i, (manager, _, subresource, fields)) in entries(&obj).into_iter().enumerate() {
            if subresource == "scale" {
                let time = &obj["metadata"]["managedFields"][i]["time"];
                ensure_eq!(time, &Value::Null, "{}: {manager}'s time", s.what);
                ensure_eq!(
                    fields,
                    json!({"f:spec": {"f:replicas": {}}}),
                    "{}: {manager}'s fields",
                    s.what
                );
            }
        }
    }
    Ok(())
}
