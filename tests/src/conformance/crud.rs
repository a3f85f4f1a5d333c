//! Update, status, delete and dry-run semantics.

use either::Either;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent,
    WatchParams,
};
use serde_json::json;

use super::{Env, Failure, Outcome, dynamic, ensure, ensure_eq, expect_error, rv_of, widget};

const LOCK_MSG: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

pub(super) async fn update_optimistic_concurrency(env: &Env) -> Outcome {
    let ns = env.namespace("occ").await?;
    let api = env.widgets(&ns);
    let v1 = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let mut first = v1.clone();
    first.data["spec"]["size"] = json!(2);
    let v2 = api.replace("w", &PostParams::default(), &first).await?;
    ensure!(rv_of(&v2) > rv_of(&v1), "update bumps resourceVersion");
    let mut stale = v1.clone();
    stale.data["spec"]["size"] = json!(3);
    let s = expect_error(
        api.replace("w", &PostParams::default(), &stale).await,
        409,
        "Conflict",
        "update with a stale resourceVersion",
    )?;
    ensure_eq!(
        s.message,
        format!(
            "Operation cannot be fulfilled on widgets.{} \"w\": {LOCK_MSG}",
            super::GROUP
        ),
        "message"
    );
    let now = api.get("w").await?;
    ensure_eq!(
        now.data["spec"]["size"],
        json!(2),
        "the stale write was refused"
    );
    // A UID in the body is a precondition too.
    let mut other_uid = now.clone();
    other_uid.metadata.uid = Some("00000000-0000-0000-0000-000000000001".into());
    let s = expect_error(
        api.replace("w", &PostParams::default(), &other_uid).await,
        409,
        "Conflict",
        "update with another uid",
    )?;
    ensure!(
        s.message.contains("Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000001, UID in object meta: "),
        "message: {}",
        s.message
    );
    Ok(())
}

pub(super) async fn update_generation_semantics(env: &Env) -> Outcome {
    let ns = env.namespace("gen").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    ensure_eq!(w.metadata.generation, Some(1), "initial generation");
    let mut labels = w.clone();
    labels
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("x".into(), "y".into());
    let w = api.replace("w", &PostParams::default(), &labels).await?;
    ensure_eq!(
        w.metadata.generation,
        Some(1),
        "metadata change keeps generation"
    );
    let mut spec = w.clone();
    spec.data["spec"]["size"] = json!(5);
    let w = api.replace("w", &PostParams::default(), &spec).await?;
    ensure_eq!(
        w.metadata.generation,
        Some(2),
        "spec change bumps generation"
    );
    let mut status = w.clone();
    status.data["status"] = json!({"phase": "Ready"});
    let w = api
        .replace_status("w", &PostParams::default(), &status)
        .await?;
    ensure_eq!(
        w.metadata.generation,
        Some(2),
        "status change keeps generation"
    );
    Ok(())
}

pub(super) async fn deployment_generation_counts_annotations(env: &Env) -> Outcome {
    let ns = env.namespace("depgen").await?;
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), &ns);
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))?;
    let d = api.create(&PostParams::default(), &d).await?;
    ensure_eq!(d.metadata.generation, Some(1), "initial generation");
    let patch = |v: serde_json::Value| Patch::Merge(v);
    let d = api
        .patch(
            "web",
            &PatchParams::default(),
            &patch(json!({"metadata": {"labels": {"tier": "front"}}})),
        )
        .await?;
    ensure_eq!(d.metadata.generation, Some(1), "a label change keeps it");
    let d = api
        .patch(
            "web",
            &PatchParams::default(),
            &patch(json!({"metadata": {"annotations": {"note": "x"}}})),
        )
        .await?;
    ensure_eq!(
        d.metadata.generation,
        Some(2),
        "an annotation change bumps a Deployment's generation"
    );
    let d = api
        .patch(
            "web",
            &PatchParams::default(),
            &patch(
                json!({"spec": {"template": {"metadata": {"annotations": {"restartedAt": "t"}}}}}),
            ),
        )
        .await?;
    ensure_eq!(
        d.metadata.generation,
        Some(3),
        "a pod-template change bumps it"
    );
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "c"}}))?;
    cms.create(&PostParams::default(), &cm).await?;
    let cm = cms
        .patch(
            "c",
            &PatchParams::default(),
            &patch(json!({"metadata": {"annotations": {"note": "x"}}})),
        )
        .await?;
    ensure!(
        cm.metadata.generation.is_none(),
        "ConfigMaps have no generation"
    );
    Ok(())
}

pub(super) async fn update_without_resource_version(env: &Env) -> Outcome {
    let ns = env.namespace("norv").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let mut body = w.clone();
    body.metadata.resource_version = None;
    let s = expect_error(
        api.replace("w", &PostParams::default(), &body).await,
        422,
        "Invalid",
        "custom resource PUT without resourceVersion",
    )?;
    ensure!(
        s.message.contains(
            "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
        ),
        "message: {}",
        s.message
    );
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"a": "1"}}))?;
    let created = cms.create(&PostParams::default(), &cm).await?;
    let cm2: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"a": "2"}}))?;
    let updated = cms.replace("c", &PostParams::default(), &cm2).await?;
    ensure!(rv_of(&updated) > rv_of(&created), "unconditional update");
    ensure_eq!(
        updated.data.and_then(|d| d.get("a").cloned()),
        Some("2".to_string()),
        "value"
    );
    Ok(())
}

pub(super) async fn update_noop_keeps_resource_version(env: &Env) -> Outcome {
    let ns = env.namespace("noop").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let same = api.replace("w", &PostParams::default(), &w).await?;
    ensure_eq!(
        same.metadata.resource_version,
        w.metadata.resource_version,
        "no-op update"
    );
    let patched = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 1}})),
        )
        .await?;
    ensure_eq!(
        patched.metadata.resource_version,
        w.metadata.resource_version,
        "no-op patch"
    );
    Ok(())
}

pub(super) async fn update_missing_object(env: &Env) -> Outcome {
    let ns = env.namespace("missing").await?;
    let api = env.widgets(&ns);
    let w = widget("ghost", 1);
    expect_error(
        api.replace("ghost", &PostParams::default(), &w).await,
        404,
        "NotFound",
        "PUT of a missing widget",
    )?;
    expect_error(
        api.patch(
            "ghost",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await,
        404,
        "NotFound",
        "merge patch of a missing widget",
    )?;
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), &ns);
    let lease: Lease = serde_json::from_value(
        json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}),
    )?;
    let created = leases.replace("l", &PostParams::default(), &lease).await?;
    ensure!(
        created.metadata.uid.is_some(),
        "a Lease PUT creates (AllowCreateOnUpdate)"
    );
    Ok(())
}

pub(super) async fn update_name_mismatch(env: &Env) -> Outcome {
    let ns = env.namespace("namemismatch").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let mut other = w.clone();
    other.metadata.name = Some("other".into());
    let s = expect_error(
        api.replace("w", &PostParams::default(), &other).await,
        400,
        "BadRequest",
        "PUT with another name",
    )?;
    ensure_eq!(
        s.message,
        "the name of the object (other) does not match the name on the URL (w)",
        "message"
    );
    Ok(())
}

pub(super) async fn status_subresource(env: &Env) -> Outcome {
    let ns = env.namespace("status").await?;
    let api = env.widgets(&ns);
    let mut body = widget("w", 1);
    body.data["status"] = json!({"phase": "Ignored"});
    let w = api.create(&PostParams::default(), &body).await?;
    ensure!(
        w.data.get("status").is_none(),
        "status dropped on create: {}",
        w.data
    );
    let mut with_status = w.clone();
    with_status.data["status"] = json!({"phase": "Ready", "observedGeneration": 1});
    with_status.data["spec"]["size"] = json!(9);
    let w = api
        .replace_status("w", &PostParams::default(), &with_status)
        .await?;
    ensure_eq!(w.data["status"]["phase"], json!("Ready"), "status written");
    ensure_eq!(w.data["spec"]["size"], json!(1), "/status ignores spec");
    let mut main = w.clone();
    main.data["status"] = json!({"phase": "Hacked"});
    main.data["spec"]["size"] = json!(2);
    let w = api.replace("w", &PostParams::default(), &main).await?;
    ensure_eq!(
        w.data["status"]["phase"],
        json!("Ready"),
        "main endpoint ignores status"
    );
    ensure_eq!(
        w.data["spec"]["size"],
        json!(2),
        "main endpoint writes spec"
    );
    let got = api.get_status("w").await?;
    ensure_eq!(got.data["status"]["phase"], json!("Ready"), "GET /status");
    Ok(())
}

pub(super) async fn finalizers_and_deletion_timestamp(env: &Env) -> Outcome {
    let ns = env.namespace("finalizers").await?;
    let api = env.widgets(&ns);
    let mut body = widget("w", 1);
    body.metadata.finalizers = Some(vec!["conformance.kube-codegen.dev/hold".into()]);
    let w = api.create(&PostParams::default(), &body).await?;
    let start = w.metadata.resource_version.clone().unwrap_or_default();
    let deleted = api.delete("w", &DeleteParams::default()).await?;
    let pending = match deleted {
        Either::Left(obj) => obj,
        Either::Right(s) => return Err(Failure::new(format!("expected the object, got {s:?}"))),
    };
    ensure!(
        pending.metadata.deletion_timestamp.is_some(),
        "deletionTimestamp set"
    );
    ensure_eq!(
        pending.metadata.deletion_grace_period_seconds,
        Some(0),
        "deletionGracePeriodSeconds"
    );
    ensure_eq!(
        pending.metadata.generation,
        Some(2),
        "generation bumped by deletion"
    );
    let still = api.get("w").await?;
    ensure!(still.metadata.deletion_timestamp.is_some(), "still there");
    // No new finalizers while deleting.
    let mut more = still.clone();
    more.metadata
        .finalizers
        .get_or_insert_with(Vec::new)
        .push("conformance.kube-codegen.dev/more".into());
    expect_error(
        api.replace("w", &PostParams::default(), &more).await,
        422,
        "Invalid",
        "adding a finalizer while deleting",
    )?;
    // A second delete changes nothing.
    api.delete("w", &DeleteParams::default()).await?;
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await?;
    expect_error(
        api.get("w").await,
        404,
        "NotFound",
        "gone after the last finalizer",
    )?;
    // Watchers saw MODIFIED (deletionTimestamp) and then DELETED.
    let wp = WatchParams::default().timeout(5);
    let mut stream = api.watch(&wp, &start).await?.boxed();
    let mut kinds = Vec::new();
    while let Some(e) = stream.try_next().await? {
        match e {
            WatchEvent::Added(_) => kinds.push("ADDED"),
            WatchEvent::Modified(_) => kinds.push("MODIFIED"),
            WatchEvent::Deleted(_) => {
                kinds.push("DELETED");
                break;
            }
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(s) => return Err(Failure::new(format!("watch error {s:?}"))),
        }
    }
    ensure!(
        kinds.first() == Some(&"MODIFIED") && kinds.last() == Some(&"DELETED"),
        "events after the finalizer was set: {kinds:?}"
    );
    Ok(())
}

pub(super) async fn delete_preconditions(env: &Env) -> Outcome {
    let ns = env.namespace("precond").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let bad_uid = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("00000000-0000-0000-0000-000000000000".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let s = expect_error(
        api.delete("w", &bad_uid).await,
        409,
        "Conflict",
        "uid precondition",
    )?;
    ensure!(
        s.message.contains("the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record"),
        "message: {}",
        s.message
    );
    let bad_rv = DeleteParams {
        preconditions: Some(Preconditions {
            uid: None,
            resource_version: Some("1".into()),
        }),
        ..DeleteParams::default()
    };
    expect_error(
        api.delete("w", &bad_rv).await,
        409,
        "Conflict",
        "resourceVersion precondition",
    )?;
    let good = DeleteParams {
        preconditions: Some(Preconditions {
            uid: w.metadata.uid.clone(),
            resource_version: w.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    api.delete("w", &good).await?;
    expect_error(api.get("w").await, 404, "NotFound", "deleted")?;
    expect_error(
        api.delete("w", &DeleteParams::default()).await,
        404,
        "NotFound",
        "delete of a missing object",
    )?;
    Ok(())
}

pub(super) async fn delete_response_shapes(env: &Env) -> Outcome {
    let ns = env.namespace("delshape").await?;
    let api = env.widgets(&ns);
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    match api.delete("w", &DeleteParams::default()).await? {
        Either::Right(s) => {
            let (name, group, kind, uid) = super::details_of(&s);
            ensure_eq!(
                (name.as_str(), group.as_str(), kind.as_str(), Some(uid)),
                ("w", super::GROUP, "widgets", w.metadata.uid.clone()),
                "Status details of a deleted widget"
            );
        }
        Either::Left(obj) => {
            return Err(Failure::new(format!(
                "widget delete returned the object {:?}",
                obj.metadata.name
            )));
        }
    }
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "c"}}))?;
    let cm = cms.create(&PostParams::default(), &cm).await?;
    match cms.delete("c", &DeleteParams::default()).await? {
        Either::Right(s) => {
            let (name, _, kind, uid) = super::details_of(&s);
            ensure_eq!(
                (name.as_str(), kind.as_str(), Some(uid)),
                ("c", "configmaps", cm.metadata.uid.clone()),
                "Status details"
            );
        }
        Either::Left(obj) => {
            return Err(Failure::new(format!(
                "configmap delete returned the object {:?}",
                obj.metadata.name
            )));
        }
    }
    // Services are among the types that answer with the deleted object.
    let svcs: Api<Service> = Api::namespaced(env.client.clone(), &ns);
    let svc: Service = serde_json::from_value(
        json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}),
    )?;
    let svc = svcs.create(&PostParams::default(), &svc).await?;
    match svcs.delete("s", &DeleteParams::default()).await? {
        Either::Left(obj) => ensure_eq!(obj.metadata.uid, svc.metadata.uid, "deleted service"),
        Either::Right(s) => {
            return Err(Failure::new(format!("service delete returned {s:?}")));
        }
    }
    Ok(())
}

pub(super) async fn delete_collection(env: &Env) -> Outcome {
    let ns = env.namespace("delcoll").await?;
    let api = env.widgets(&ns);
    for (name, tier) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let o = dynamic(json!({
            "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
            "metadata": {"name": name, "labels": {"tier": tier}}, "spec": {"size": 1}
        }));
        api.create(&PostParams::default(), &o).await?;
    }
    let out = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("tier=x"),
        )
        .await?;
    let Either::Left(list) = &out else {
        return Err(Failure::new(format!(
            "deletecollection answered {out:?}, not the list of deleted widgets"
        )));
    };
    let mut deleted: Vec<String> = list
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    deleted.sort();
    ensure_eq!(deleted, vec!["a", "b"], "deleted items");
    let left = api.list(&ListParams::default()).await?;
    let left: Vec<String> = left
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    ensure_eq!(left, vec!["c"], "remaining");
    Ok(())
}

pub(super) async fn dry_run(env: &Env) -> Outcome {
    let ns = env.namespace("dryrun").await?;
    let api = env.widgets(&ns);
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let got = api.create(&dry, &widget("w", 1)).await?;
    ensure_eq!(got.metadata.name.as_deref(), Some("w"), "dry-run answer");
    expect_error(api.get("w").await, 404, "NotFound", "nothing stored")?;
    let w = api.create(&PostParams::default(), &widget("w", 1)).await?;
    let patched = api
        .patch(
            "w",
            &PatchParams::default().dry_run(),
            &Patch::Merge(json!({"spec": {"size": 7}})),
        )
        .await?;
    ensure_eq!(
        patched.data["spec"]["size"],
        json!(7),
        "dry-run patch answer"
    );
    let now = api.get("w").await?;
    ensure_eq!(now.data["spec"]["size"], json!(1), "patch not stored");
    ensure_eq!(
        now.metadata.resource_version,
        w.metadata.resource_version,
        "rv"
    );
    let dp = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    api.delete("w", &dp).await?;
    api.get("w").await?;
    Ok(())
}

pub(super) async fn delete_propagation_policy(env: &Env) -> Outcome {
    use kube::api::PropagationPolicy;
    let ns = env.namespace("propagation").await?;
    let api = env.widgets(&ns);
    for (name, policy, finalizer) in [
        ("orphaned", PropagationPolicy::Orphan, Some("orphan")),
        (
            "foreground",
            PropagationPolicy::Foreground,
            Some("foregroundDeletion"),
        ),
        ("background", PropagationPolicy::Background, None),
    ] {
        api.create(&PostParams::default(), &widget(name, 1)).await?;
        let dp = DeleteParams {
            propagation_policy: Some(policy),
            ..DeleteParams::default()
        };
        api.delete(name, &dp).await?;
        // Without a garbage collector the GC finalizer stays, and so does the object.
        if let Some(f) = finalizer {
            let o = api.get(name).await?;
            ensure!(
                o.metadata.deletion_timestamp.is_some(),
                "{name}: deletionTimestamp"
            );
            ensure_eq!(
                o.metadata.finalizers.clone().unwrap_or_default(),
                vec![f.to_string()],
                "{name}: finalizers"
            );
            api.patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"finalizers": null}})),
            )
            .await?;
        }
        expect_error(api.get(name).await, 404, "NotFound", name)?;
    }
    Ok(())
}
