//! Patch and server-side apply semantics.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{Env, Outcome, ensure, ensure_eq, expect_error, widget};

/// Lists whose strategic-merge key and server-side-apply list type differ from a guess by
/// field name: a Service's ports merge by `port` alone in a strategic merge patch (so a patch
/// of port 80 with another protocol changes the TCP entry), while apply keys them by port and
/// protocol; a webhook configuration's `webhooks` are keyed by name for apply; a
/// ServiceAccount's `imagePullSecrets` are atomic for apply.
pub(super) async fn builtin_list_types(env: &Env) -> Outcome {
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use k8s_openapi::api::core::v1::{Service, ServiceAccount};
    let ns = env.namespace("listtypes").await?;
    let svcs: Api<Service> = Api::namespaced(env.client.clone(), &ns);
    let svc: Service = serde_json::from_value(json!({"metadata": {"name": "s"},
        "spec": {"ports": [{"name": "web", "port": 80}, {"name": "alt", "port": 81}]}}))?;
    svcs.create(&PostParams::default(), &svc).await?;
    let patched = svcs
        .patch(
            "s",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"ports": [{"name": "dns", "port": 80, "protocol": "UDP"}]}}),
            ),
        )
        .await?;
    let ports = serde_json::to_value(patched.spec.map(|s| s.ports))?;
    ensure_eq!(
        ports,
        json!([{"name": "dns", "port": 80, "protocol": "UDP", "targetPort": 80},
               {"name": "alt", "port": 81, "protocol": "TCP", "targetPort": 81}]),
        "a strategic merge patch merges a Service's ports by port"
    );
    let apply = PatchParams::apply("owner");
    let applied = svcs
        .patch(
            "s2",
            &apply,
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s2"},
                "spec": {"ports": [{"name": "dns-udp", "port": 53, "protocol": "UDP"},
                                   {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}}),
            ),
        )
        .await?;
    let fields =
        |mf: Option<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry>>| {
            mf.and_then(|m| {
                m.into_iter()
                    .find(|e| e.manager.as_deref() == Some("owner"))
            })
            .and_then(|e| e.fields_v1)
            .map(|f| f.0)
            .unwrap_or_default()
        };
    let keys: Vec<String> = fields(applied.metadata.managed_fields)["f:spec"]["f:ports"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    ensure_eq!(
        keys,
        vec![
            r#"k:{"port":53,"protocol":"TCP"}"#.to_string(),
            r#"k:{"port":53,"protocol":"UDP"}"#.to_string()
        ],
        "apply keys a Service's ports by port and protocol"
    );
    let hooks: Api<ValidatingWebhookConfiguration> = Api::all(env.client.clone());
    let name = format!("{ns}-hooks");
    let hook = |n: &str| {
        json!({"name": n, "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "clientConfig": {"url": "https://hooks.example.com/v"}, "rules": []})
    };
    let applied = hooks
        .patch(
            &name,
            &apply,
            &Patch::Apply(json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
                "webhooks": [hook("a.example.com"), hook("b.example.com")]})),
        )
        .await?;
    let webhooks = fields(applied.metadata.managed_fields)["f:webhooks"].clone();
    ensure!(
        webhooks.get(r#"k:{"name":"a.example.com"}"#).is_some(),
        "apply keys webhooks by name: {webhooks}"
    );
    hooks.delete(&name, &Default::default()).await?;
    let sas: Api<ServiceAccount> = Api::namespaced(env.client.clone(), &ns);
    let applied = sas
        .patch(
            "robot",
            &apply,
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"},
                "imagePullSecrets": [{"name": "a"}, {"name": "b"}]}),
            ),
        )
        .await?;
    ensure_eq!(
        fields(applied.metadata.managed_fields),
        json!({"f:imagePullSecrets": {}}),
        "a ServiceAccount's imagePullSecrets are atomic"
    );
    Ok(())
}

pub(super) async fn merge_patch(env: &Env) -> Outcome {
    let ns = env.namespace("merge").await?;
    let api = env.widgets(&ns);
    let mut body = widget("w", 1);
    body.data["spec"]["note"] = json!("hello");
    body.data["spec"]["tags"] = json!(["a", "b"]);
    api.create(&PostParams::default(), &body).await?;
    let w = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"l": "1"}}, "spec": {"size": 2, "note": null, "tags": ["c"]}})),
        )
        .await?;
    ensure_eq!(w.data["spec"]["size"], json!(2), "size");
    ensure!(
        w.data["spec"].get("note").is_none(),
        "null deletes: {}",
        w.data
    );
    ensure_eq!(w.data["spec"]["tags"], json!(["c"]), "lists are replaced");
    ensure_eq!(
        w.metadata.labels.unwrap_or_default().get("l").cloned(),
        Some("1".to_string()),
        "labels"
    );
    ensure_eq!(w.metadata.generation, Some(2), "generation");
    Ok(())
}

pub(super) async fn json_patch(env: &Env) -> Outcome {
    let ns = env.namespace("jsonpatch").await?;
    let api = env.widgets(&ns);
    let mut body = widget("w", 1);
    body.data["spec"]["tags"] = json!(["a"]);
    api.create(&PostParams::default(), &body).await?;
    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/size", "value": 1},
        {"op": "replace", "path": "/spec/size", "value": 4},
        {"op": "add", "path": "/spec/tags/-", "value": "b"},
        {"op": "add", "path": "/spec/note", "value": "n"},
        {"op": "remove", "path": "/spec/tags/0"}
    ]))?;
    let w = api
        .patch("w", &PatchParams::default(), &Patch::Json::<()>(ops))
        .await?;
    ensure_eq!(w.data["spec"]["size"], json!(4), "replace");
    ensure_eq!(w.data["spec"]["tags"], json!(["b"]), "add/remove");
    ensure_eq!(w.data["spec"]["note"], json!("n"), "add");
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/size", "value": 99}]))?;
    expect_error(
        api.patch("w", &PatchParams::default(), &Patch::Json::<()>(failing))
            .await,
        422,
        "",
        "failed test operation",
    )?;
    let missing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": "/spec/nothing"}]))?;
    expect_error(
        api.patch("w", &PatchParams::default(), &Patch::Json::<()>(missing))
            .await,
        422,
        "",
        "remove of a missing path",
    )?;
    Ok(())
}

fn deployment(name: &str) -> Result<Deployment, serde_json::Error> {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "a", "image": "registry.example/a:1", "env": [{"name": "X", "value": "1"}]},
                    {"name": "b", "image": "registry.example/b:1"}
                ]}
            }
        }
    }))
}

pub(super) async fn strategic_merge_patch(env: &Env) -> Outcome {
    let ns = env.namespace("smp").await?;
    let deps: Api<Deployment> = Api::namespaced(env.client.clone(), &ns);
    deps.create(&PostParams::default(), &deployment("d")?)
        .await?;
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "registry.example/a:2", "env": [{"name": "Y", "value": "2"}]}
    ]}}}});
    let d = deps
        .patch("d", &PatchParams::default(), &Patch::Strategic(patch))
        .await?;
    let v = serde_json::to_value(&d)?;
    let containers = &v["spec"]["template"]["spec"]["containers"];
    ensure_eq!(
        containers.as_array().map(Vec::len),
        Some(2),
        "containers merged by name: {containers}"
    );
    ensure_eq!(
        containers[0]["image"],
        json!("registry.example/a:2"),
        "image"
    );
    ensure_eq!(
        containers[0]["env"],
        json!([{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}]),
        "env merged by name (patch items first, as the API server orders them)"
    );
    let del = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "$patch": "delete"}]}}}});
    let d = deps
        .patch("d", &PatchParams::default(), &Patch::Strategic(del))
        .await?;
    let v = serde_json::to_value(&d)?;
    ensure_eq!(
        v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "$patch: delete"
    );
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}))?;
    cms.create(&PostParams::default(), &cm).await?;
    let c = cms
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"a": null, "c": "3"}})),
        )
        .await?;
    ensure_eq!(
        c.data.unwrap_or_default().into_iter().collect::<Vec<_>>(),
        vec![
            ("b".to_string(), "2".to_string()),
            ("c".to_string(), "3".to_string())
        ],
        "configmap data"
    );
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("w", 1)).await?;
    let s = expect_error(
        api.patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"size": 2}})),
        )
        .await,
        415,
        "UnsupportedMediaType",
        "strategic merge patch of a custom resource",
    )?;
    ensure!(
        s.message.contains("application/merge-patch+json"),
        "message: {}",
        s.message
    );
    Ok(())
}

fn managers(obj: &kube::core::DynamicObject) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = obj
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

pub(super) async fn server_side_apply(env: &Env) -> Outcome {
    let ns = env.namespace("ssa").await?;
    let api = env.widgets(&ns);
    let av = format!("{}/{}", super::GROUP, super::VERSION);
    let alice = PatchParams::apply("alice");
    let cfg = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w", "labels": {"owner": "alice"}},
                     "spec": {"size": 1, "note": "from alice"}});
    let w = api.patch("w", &alice, &Patch::Apply(&cfg)).await?;
    ensure_eq!(w.metadata.generation, Some(1), "apply creates");
    ensure_eq!(
        managers(&w),
        vec![("alice".to_string(), "Apply".to_string())],
        "managedFields"
    );
    // Another manager applies a different field: both are kept.
    let bob = PatchParams::apply("bob");
    let cfg_b = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w"},
                       "spec": {"size": 1, "tags": ["x"]}});
    let w = api.patch("w", &bob, &Patch::Apply(&cfg_b)).await?;
    ensure_eq!(
        w.data["spec"]["note"],
        json!("from alice"),
        "alice's field kept"
    );
    ensure_eq!(w.data["spec"]["tags"], json!(["x"]), "bob's field");
    // Alice stops applying `note`: it is removed.
    let cfg2 = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w", "labels": {"owner": "alice"}},
                      "spec": {"size": 1}});
    let w = api.patch("w", &alice, &Patch::Apply(&cfg2)).await?;
    ensure!(
        w.data["spec"].get("note").is_none(),
        "dropped field removed: {}",
        w.data
    );
    ensure_eq!(
        w.data["spec"]["tags"],
        json!(["x"]),
        "bob's field still there"
    );
    // Bob wants another size: a conflict with alice, unless forced.
    let cfg_b2 = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w"},
                        "spec": {"size": 5, "tags": ["x"]}});
    let s = expect_error(
        api.patch("w", &bob, &Patch::Apply(&cfg_b2)).await,
        409,
        "Conflict",
        "conflicting apply",
    )?;
    ensure!(
        s.message.contains("conflict with \"alice\"") && s.message.contains(".spec.size"),
        "message: {}",
        s.message
    );
    let w = api
        .patch("w", &bob.clone().force(), &Patch::Apply(&cfg_b2))
        .await?;
    ensure_eq!(w.data["spec"]["size"], json!(5), "forced");
    // Keyed lists merge by key across managers.
    let parts_a = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w", "labels": {"owner": "alice"}},
                         "spec": {"parts": [{"name": "p1", "count": 1}]}});
    api.patch("w", &alice, &Patch::Apply(&parts_a)).await?;
    let parts_b = json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "w"},
                         "spec": {"size": 5, "tags": ["x"], "parts": [{"name": "p2", "count": 2}]}});
    let w = api.patch("w", &bob, &Patch::Apply(&parts_b)).await?;
    let mut names: Vec<String> = w.data["spec"]["parts"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    ensure_eq!(names, vec!["p1", "p2"], "map-list items of both managers");
    // Apply needs a field manager.
    let s = expect_error(
        api.patch("w", &PatchParams::default(), &Patch::Apply(&cfg2))
            .await,
        422,
        "Invalid",
        "apply without fieldManager",
    )?;
    ensure!(
        s.message
            .contains("fieldManager: Required value: is required for apply patch"),
        "message: {}",
        s.message
    );
    // Built-ins too, and a later update takes ownership of what it changes.
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    cms.patch("c", &PatchParams::apply("alice"), &Patch::Apply(&cm))
        .await?;
    let c = cms
        .patch(
            "c",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await?;
    let owners: Vec<String> = c
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    ensure!(
        owners.iter().any(|o| o == "editor"),
        "the editor owns what it changed: {owners:?}"
    );
    let s = expect_error(
        cms.patch("c", &PatchParams::apply("alice"), &Patch::Apply(&cm))
            .await,
        409,
        "Conflict",
        "re-applying the old value",
    )?;
    ensure!(
        s.message.contains("\"editor\"") && s.message.contains(".data.a"),
        "message: {}",
        s.message
    );
    Ok(())
}

pub(super) async fn patch_status_subresource(env: &Env) -> Outcome {
    let ns = env.namespace("patchstatus").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("w", 1)).await?;
    let w = api
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}, "spec": {"size": 50}})),
        )
        .await?;
    ensure_eq!(w.data["status"]["phase"], json!("Ready"), "status patched");
    ensure_eq!(w.data["spec"]["size"], json!(1), "spec untouched");
    ensure_eq!(w.metadata.generation, Some(1), "generation untouched");
    let w = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Other"}})),
        )
        .await?;
    ensure_eq!(
        w.data["status"]["phase"],
        json!("Ready"),
        "main patch ignores status"
    );
    let applied = api
        .patch_status(
            "w",
            &PatchParams::apply("ctrl").force(),
            &Patch::Apply(
                json!({"apiVersion": format!("{}/{}", super::GROUP, super::VERSION),
                                 "kind": "Widget", "status": {"observedGeneration": 1}}),
            ),
        )
        .await?;
    ensure_eq!(
        applied.data["status"]["observedGeneration"],
        json!(1),
        "status apply"
    );
    Ok(())
}
