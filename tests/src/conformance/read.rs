//! Get and list semantics.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, VersionMatch};
use kube::core::DynamicObject;
use serde_json::json;

use super::{Env, Failure, Outcome, dynamic, ensure, ensure_eq, expect_error, rv_of, widget};

fn labeled(name: &str, labels: serde_json::Value, color: &str) -> DynamicObject {
    dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"name": name, "labels": labels}, "spec": {"size": 1, "color": color}
    }))
}

fn names(list: &[DynamicObject]) -> BTreeSet<String> {
    list.iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub(super) async fn get_not_found_status(env: &Env) -> Outcome {
    let ns = env.namespace("notfound").await?;
    let s = expect_error(
        env.widgets(&ns).get("nope").await,
        404,
        "NotFound",
        "get of a missing widget",
    )?;
    ensure_eq!(
        s.message,
        format!("widgets.{} \"nope\" not found", super::GROUP),
        "message"
    );
    ensure_eq!(
        s.status,
        Some(kube::core::response::StatusSummary::Failure),
        "status"
    );
    let (name, group, kind, _) = super::details_of(&s);
    ensure_eq!(
        (name.as_str(), group.as_str(), kind.as_str()),
        ("nope", super::GROUP, "widgets"),
        "details"
    );
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let s = expect_error(cms.get("nope").await, 404, "NotFound", "configmap")?;
    ensure_eq!(s.message, "configmaps \"nope\" not found", "core message");
    Ok(())
}

pub(super) async fn list_label_selectors(env: &Env) -> Outcome {
    let ns = env.namespace("labels").await?;
    let api = env.widgets(&ns);
    for (name, labels) in [
        ("a", json!({"app": "web", "tier": "front", "rank": "5"})),
        ("b", json!({"app": "db", "tier": "back"})),
        ("c", json!({"app": "web"})),
        ("d", json!({})),
    ] {
        api.create(&PostParams::default(), &labeled(name, labels, "red"))
            .await?;
    }
    for (selector, want) in [
        ("app=web", set(&["a", "c"])),
        ("app==web", set(&["a", "c"])),
        ("app!=web", set(&["b", "d"])),
        ("app in (web,db)", set(&["a", "b", "c"])),
        ("app notin (web)", set(&["b", "d"])),
        ("tier", set(&["a", "b"])),
        ("!tier", set(&["c", "d"])),
        ("app=web,tier=front", set(&["a"])),
        ("rank>4", set(&["a"])),
        ("rank<4", set(&[])),
        ("app=nothing", set(&[])),
    ] {
        let got = api.list(&ListParams::default().labels(selector)).await?;
        ensure_eq!(names(&got.items), want, "labelSelector {selector:?}");
    }
    for bad in ["app in (web", "app=a b", "=x"] {
        expect_error(
            api.list(&ListParams::default().labels(bad)).await,
            400,
            "BadRequest",
            &format!("labelSelector {bad:?}"),
        )?;
    }
    Ok(())
}

pub(super) async fn list_field_selectors(env: &Env) -> Outcome {
    let ns = env.namespace("fields").await?;
    let other = env.namespace("fields2").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &labeled("a", json!({}), "red"))
        .await?;
    api.create(&PostParams::default(), &labeled("b", json!({}), "green"))
        .await?;
    env.widgets(&other)
        .create(&PostParams::default(), &labeled("a", json!({}), "red"))
        .await?;
    let got = api
        .list(&ListParams::default().fields("metadata.name=a"))
        .await?;
    ensure_eq!(names(&got.items), set(&["a"]), "metadata.name=a");
    let got = api
        .list(&ListParams::default().fields("metadata.name!=a"))
        .await?;
    ensure_eq!(names(&got.items), set(&["b"]), "metadata.name!=a");
    let all = env
        .all_widgets()
        .list(&ListParams::default().fields(&format!("metadata.namespace={other}")))
        .await?;
    ensure_eq!(names(&all.items), set(&["a"]), "metadata.namespace");
    ensure!(
        all.items
            .iter()
            .all(|o| o.metadata.namespace.as_deref() == Some(other.as_str())),
        "namespace filter"
    );
    let got = api
        .list(&ListParams::default().fields("spec.color=green"))
        .await?;
    ensure_eq!(
        names(&got.items),
        set(&["b"]),
        "selectable field spec.color"
    );
    let s = expect_error(
        api.list(&ListParams::default().fields("spec.size=1")).await,
        400,
        "BadRequest",
        "unsupported field",
    )?;
    ensure!(
        s.message.contains("field label not supported: spec.size"),
        "message: {}",
        s.message
    );
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let s = expect_error(
        cms.list(&ListParams::default().fields("data.x=1")).await,
        400,
        "BadRequest",
        "configmap field",
    )?;
    ensure!(
        s.message
            .contains("\"data.x\" is not a known field selector"),
        "message: {}",
        s.message
    );
    Ok(())
}

pub(super) async fn list_pagination_consistent(env: &Env) -> Outcome {
    let ns = env.namespace("pages").await?;
    let api = env.widgets(&ns);
    for i in 0..7 {
        api.create(&PostParams::default(), &widget(&format!("w{i}"), i))
            .await?;
    }
    let first = api.list(&ListParams::default().limit(3)).await?;
    ensure_eq!(first.items.len(), 3, "first page size");
    ensure_eq!(
        first.metadata.remaining_item_count,
        Some(4),
        "remainingItemCount"
    );
    let token = first
        .metadata
        .continue_
        .clone()
        .ok_or_else(|| Failure::new("no continue token"))?;
    let list_rv = first.metadata.resource_version.clone();
    // Writes after the first page must not show up in the following pages.
    api.create(&PostParams::default(), &widget("w9", 9)).await?;
    api.delete("w5", &Default::default()).await?;
    let mut seen = names(&first.items);
    let mut token = Some(token);
    let mut pages = 1;
    while let Some(t) = token {
        let page = api
            .list(&ListParams::default().limit(3).continue_token(&t))
            .await?;
        ensure_eq!(
            page.metadata.resource_version,
            list_rv,
            "every page has the first page's resourceVersion"
        );
        seen.extend(names(&page.items));
        token = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        pages += 1;
        ensure!(pages < 10, "pagination does not end");
    }
    ensure_eq!(
        seen,
        (0..7).map(|i| format!("w{i}")).collect::<BTreeSet<_>>(),
        "snapshot"
    );
    let now = api.list(&ListParams::default()).await?;
    ensure!(
        names(&now.items).contains("w9") && !names(&now.items).contains("w5"),
        "a fresh list sees the writes"
    );
    ensure!(
        now.metadata.continue_.is_none_or(|c| c.is_empty()),
        "no continue without limit"
    );
    expect_error(
        api.list(&ListParams::default().limit(3).continue_token("not-a-token"))
            .await,
        400,
        "",
        "garbage continue token",
    )?;
    Ok(())
}

pub(super) async fn list_all_namespaces(env: &Env) -> Outcome {
    let a = env.namespace("alla").await?;
    let b = env.namespace("allb").await?;
    env.widgets(&a)
        .create(&PostParams::default(), &widget("x", 1))
        .await?;
    env.widgets(&b)
        .create(&PostParams::default(), &widget("x", 1))
        .await?;
    let all = env.all_widgets().list(&ListParams::default()).await?;
    let found: BTreeSet<(String, String)> = all
        .items
        .iter()
        .filter(|o| o.metadata.name.as_deref() == Some("x"))
        .map(|o| {
            (
                o.metadata.namespace.clone().unwrap_or_default(),
                o.metadata.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    ensure!(
        found.contains(&(a.clone(), "x".into())) && found.contains(&(b.clone(), "x".into())),
        "both namespaces: {found:?}"
    );
    Ok(())
}

pub(super) async fn list_resource_version_semantics(env: &Env) -> Outcome {
    let ns = env.namespace("listrv").await?;
    let api = env.widgets(&ns);
    let a = api.create(&PostParams::default(), &widget("a", 1)).await?;
    let list = api.list(&ListParams::default()).await?;
    let list_rv: u64 = list
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    ensure!(
        list_rv >= rv_of(&a),
        "list resourceVersion {list_rv} < item's"
    );
    let at = list_rv.to_string();
    api.create(&PostParams::default(), &widget("b", 1)).await?;
    let exact = api
        .list(&ListParams::default().at(&at).matching(VersionMatch::Exact))
        .await?;
    ensure_eq!(names(&exact.items), set(&["a"]), "Exact read of the past");
    ensure_eq!(
        exact.metadata.resource_version.as_deref(),
        Some(at.as_str()),
        "Exact list resourceVersion"
    );
    let any = api.list(&ListParams::default().at("0")).await?;
    ensure_eq!(names(&any.items), set(&["a", "b"]), "resourceVersion=0");
    let newer = api
        .list(
            &ListParams::default()
                .at(&at)
                .matching(VersionMatch::NotOlderThan),
        )
        .await?;
    ensure_eq!(names(&newer.items), set(&["a", "b"]), "NotOlderThan");
    Ok(())
}

pub(super) async fn metadata_only_list(env: &Env) -> Outcome {
    let ns = env.namespace("meta").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("a", 1)).await?;
    let list = api.list_metadata(&ListParams::default()).await?;
    ensure_eq!(list.items.len(), 1, "items");
    let item = &list.items[0];
    ensure_eq!(item.metadata.name.as_deref(), Some("a"), "name");
    ensure!(item.metadata.uid.is_some(), "uid in metadata");
    let one = api.get_metadata("a").await?;
    ensure_eq!(one.metadata.name.as_deref(), Some("a"), "get_metadata");
    Ok(())
}
