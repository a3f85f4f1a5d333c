//! Field ownership beyond the apply merge itself: the upgrade from client-side to server-side
//! apply, atomic label selectors, and the request-level errors of apply and patch (names,
//! kinds).

use serde_json::{Value, json};

use super::{Env, Failure, GROUP, Outcome, Raw, VERSION, ensure_eq, ensure_status, get, raw};

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

fn owner(manager: &str, operation: &str, subresource: &str) -> (String, String, String) {
    (manager.into(), operation.into(), subresource.into())
}

/// `Apply failed with 1 conflict: conflict with …: .spec.replicas`, as a 409 `Status`.
fn replicas_conflict(with: &str) -> (u16, String, String) {
    (
        409,
        "Conflict".into(),
        format!("Apply failed with 1 conflict: conflict with {with}: .spec.replicas"),
    )
}

/// Writes through `/scale` own the replicas alone, recorded with `subresource: scale`;
/// server-side apply of a `Scale` conflicts in the `Scale`'s terms (`.spec.replicas`, an
/// updater's version `autoscaling/v1`), with `before-first-apply` when nobody owned the
/// replicas; a custom resource's `Scale` cannot be applied at all in kube-apiserver v1.37.
pub(super) async fn scale_subresource_ownership(env: &Env) -> Outcome {
    let ns = env.namespace("scaleown").await?;
    let deploy = format!("/apis/apps/v1/namespaces/{ns}/deployments/d");
    let scale = format!("{deploy}/scale");
    let applied = |replicas: Option<i64>| {
        let mut spec = json!({"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}});
        if let Some(n) = replicas {
            spec["replicas"] = json!(n);
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})
    };
    let scale_of = |name: &str, spec: Value| json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name}, "spec": spec});
    let r = send(
        env,
        "PATCH",
        &format!("{deploy}?fieldManager=owner"),
        APPLY,
        applied(None),
    )
    .await?;
    ensure_eq!(r.status, 201, "owner's apply: {:?}", r.json());
    let hpa = format!("{scale}?fieldManager=hpa");

    // Nobody owns the defaulted replicas: they are `before-first-apply`'s.
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("d", json!({"replicas": 3})),
    )
    .await?;
    ensure_eq!(
        r.status(),
        replicas_conflict(r#""before-first-apply" with subresource "scale" using autoscaling/v1"#),
        "a Scale's first apply"
    );
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("d", json!({"replicas": 1})),
    )
    .await?;
    ensure_eq!(r.status, 200, "the same replicas: {:?}", r.json());
    let d = get(env, &deploy).await?.json();
    ensure_eq!(
        owners(&d),
        vec![
            owner("before-first-apply", "Update", "scale"),
            owner("hpa", "Apply", "scale"),
            owner("owner", "Apply", ""),
        ],
        "owners after the first apply of the Scale"
    );
    ensure_eq!(
        fields_of(&d, "hpa"),
        json!({"f:spec": {"f:replicas": {}}}),
        "what the Scale's applier owns"
    );

    // An update through /scale takes the replicas from every other owner.
    let r = send(
        env,
        "PATCH",
        &format!("{scale}?fieldManager=m"),
        MERGE,
        json!({"spec": {"replicas": 2}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "merge patch of the scale: {:?}", r.json());
    let d = get(env, &deploy).await?.json();
    ensure_eq!(
        owners(&d),
        vec![owner("m", "Update", "scale"), owner("owner", "Apply", "")],
        "owners after an update through /scale"
    );
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("d", json!({"replicas": 3})),
    )
    .await?;
    ensure_eq!(
        r.status(),
        replicas_conflict(r#""m" with subresource "scale" using autoscaling/v1"#),
        "apply over the scale's updater"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{hpa}&force=true"),
        APPLY,
        scale_of("d", json!({"replicas": 3})),
    )
    .await?;
    ensure_eq!(r.status, 200, "forced apply: {:?}", r.json());
    ensure_eq!(
        r.json()["spec"],
        json!({"replicas": 3}),
        "forced apply's Scale"
    );
    // The object's own applier now conflicts with the Scale's, in the object's terms.
    let r = send(
        env,
        "PATCH",
        &format!("{deploy}?fieldManager=owner"),
        APPLY,
        applied(Some(1)),
    )
    .await?;
    ensure_eq!(
        r.status(),
        replicas_conflict(r#""hpa" with subresource "scale""#),
        "the owner's apply of replicas"
    );

    // Once the conflicts pass: the name, the validation, the type, `force` on other patches.
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("other", json!({"replicas": 3})),
    )
    .await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "the name of the object (other) does not match the name on the URL (d)",
        "a Scale of another name"
    );
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("d", json!({"replicas": -2})),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "Scale.autoscaling \"d\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0",
        "negative replicas"
    );
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        scale_of("d", json!({"replicas": 3, "bogus": 1})),
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        "failed to create typed patch object (/d; autoscaling/v1, Kind=Scale): .spec.bogus: field not declared in schema",
        "an undeclared field"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{scale}?fieldManager=m&force=true"),
        MERGE,
        json!({"spec": {"replicas": 4}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
        "force on a merge patch"
    );

    // Giving the replicas up leaves the Scale without them: zero.
    let r = send(
        env,
        "PATCH",
        &hpa,
        APPLY,
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "apply without replicas: {:?}", r.json());
    ensure_eq!(r.json()["spec"], json!({}), "a Scale of zero replicas");
    let d = get(env, &deploy).await?.json();
    ensure_eq!(d["spec"]["replicas"], json!(0), "replicas given up");
    ensure_eq!(
        owners(&d),
        vec![owner("owner", "Apply", "")],
        "owners after giving up"
    );
    let r = send(env, "PUT", &format!("{scale}?fieldManager=putter"), JSON, json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": ns}, "spec": {"replicas": 5}})).await?;
    ensure_eq!(r.status, 200, "PUT of the scale: {:?}", r.json());
    // With nobody owning the replicas, an update through /scale is not tracked.
    let d = get(env, &deploy).await?.json();
    ensure_eq!(d["spec"]["replicas"], json!(5), "replicas put");
    ensure_eq!(
        owners(&d),
        vec![owner("owner", "Apply", "")],
        "owners after a PUT of unowned replicas"
    );

    // A custom resource's Scale.
    let checks = format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/checks");
    let check = |spec: Value| json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Check", "metadata": {"name": "c"}, "spec": spec});
    let r = send(
        env,
        "PATCH",
        &format!("{checks}/c?fieldManager=owner"),
        APPLY,
        check(json!({"mode": "fast"})),
    )
    .await?;
    ensure_eq!(r.status, 201, "custom resource: {:?}", r.json());
    let cscale = format!("{checks}/c/scale");
    let convert = |what: &str, name: &str| {
        format!(
            "failed to {what} (/{name}; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1"
        )
    };
    // The replicas were defaulted: nobody owns them.
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=hpa"),
        APPLY,
        scale_of("c", json!({"replicas": 1})),
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        convert(
            "create manager for existing fields: failed to convert live object",
            ""
        ),
        "a custom resource's first Scale apply"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=m"),
        MERGE,
        json!({"spec": {"replicas": 2}}),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "merge patch of the custom resource's scale: {:?}",
        r.json()
    );
    let c = get(env, &format!("{checks}/c")).await?.json();
    ensure_eq!(c["spec"]["replicas"], json!(2), "custom resource replicas");
    ensure_eq!(
        owners(&c),
        vec![owner("owner", "Apply", "")],
        "an update of unowned replicas"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{checks}/c?fieldManager=owner"),
        APPLY,
        check(json!({"mode": "fast", "replicas": 2})),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "the owner applies the replicas: {:?}",
        r.json()
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=m"),
        MERGE,
        json!({"spec": {"replicas": 3}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "a second merge patch: {:?}", r.json());
    let c = get(env, &format!("{checks}/c")).await?.json();
    ensure_eq!(c["spec"]["replicas"], json!(3), "custom resource replicas");
    ensure_eq!(
        owners(&c),
        vec![owner("m", "Update", "scale"), owner("owner", "Apply", "")],
        "custom resource owners"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=hpa"),
        APPLY,
        scale_of("c", json!({"replicas": 4})),
    )
    .await?;
    ensure_eq!(
        r.status(),
        replicas_conflict(r#""m" with subresource "scale" using autoscaling/v1"#),
        "apply over the custom resource's scale updater"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=hpa&force=true"),
        APPLY,
        scale_of("c", json!({"replicas": 4})),
    )
    .await?;
    ensure_status!(
        r,
        500,
        "",
        convert("convert new object", "c"),
        "a forced apply of a custom resource's Scale"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{cscale}?fieldManager=hpa"),
        APPLY,
        scale_of("c", json!({})),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "an apply that changes nothing: {:?}",
        r.json()
    );
    let c2 = get(env, &format!("{checks}/c")).await?.json();
    ensure_eq!(owners(&c2), owners(&c), "nothing recorded");
    Ok(())
}
