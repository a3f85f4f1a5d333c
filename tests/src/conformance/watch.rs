//! Watch semantics.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::DynamicObject;
use serde_json::json;

use super::{Env, Failure, Outcome, dynamic, ensure, ensure_eq, widget};

/// `(type, namespace/name)` of an event; bookmarks and errors as `("BOOKMARK", rv)` /
/// `("ERROR", code)`.
fn describe(e: &WatchEvent<DynamicObject>) -> (String, String) {
    let key = |o: &DynamicObject| {
        format!(
            "{}/{}",
            o.metadata.namespace.clone().unwrap_or_default(),
            o.metadata.name.clone().unwrap_or_default()
        )
    };
    match e {
        WatchEvent::Added(o) => ("ADDED".into(), key(o)),
        WatchEvent::Modified(o) => ("MODIFIED".into(), key(o)),
        WatchEvent::Deleted(o) => ("DELETED".into(), key(o)),
        WatchEvent::Bookmark(b) => ("BOOKMARK".into(), b.metadata.resource_version.clone()),
        WatchEvent::Error(s) => ("ERROR".into(), s.code.to_string()),
    }
}

/// Reads events until `want` non-bookmark events arrived, the stream ended, or `timeout`.
async fn collect(
    api: &Api<DynamicObject>,
    wp: &WatchParams,
    rv: &str,
    want: usize,
    timeout: Duration,
    keep_bookmarks: bool,
) -> Result<Vec<WatchEvent<DynamicObject>>, Failure> {
    let stream = api.watch(wp, rv).await?;
    let mut stream = Box::pin(stream);
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    let mut counted = 0;
    while counted < want {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.next()).await {
            Ok(Some(Ok(e))) => {
                let bookmark = matches!(e, WatchEvent::Bookmark(_));
                if !bookmark {
                    counted += 1;
                }
                if !bookmark || keep_bookmarks {
                    out.push(e);
                }
            }
            Ok(Some(Err(e))) => return Err(e.into()),
            Ok(None) | Err(_) => break,
        }
    }
    Ok(out)
}

async fn current_rv(api: &Api<DynamicObject>) -> Result<String, Failure> {
    Ok(api
        .list(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default())
}

pub(super) async fn watch_from_resource_version(env: &Env) -> Outcome {
    let ns = env.namespace("watchrv").await?;
    let api = env.widgets(&ns);
    let a = api.create(&PostParams::default(), &widget("a", 1)).await?;
    api.create(&PostParams::default(), &widget("b", 1)).await?;
    let from = a.metadata.resource_version.clone().unwrap_or_default();
    let writer = api.clone();
    let write = async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer
            .patch(
                "b",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"size": 2}})),
            )
            .await
    };
    let wp = WatchParams::default().timeout(10);
    let (events, written) =
        tokio::join!(collect(&api, &wp, &from, 2, env.ctx.timeout, false), write);
    written?;
    let got: Vec<(String, String)> = events?.iter().map(describe).collect();
    ensure_eq!(
        got,
        vec![
            ("ADDED".to_string(), format!("{ns}/b")),
            ("MODIFIED".to_string(), format!("{ns}/b"))
        ],
        "events after {from}"
    );
    Ok(())
}

pub(super) async fn watch_initial_events(env: &Env) -> Outcome {
    let ns = env.namespace("watchinit").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("a", 1)).await?;
    api.create(&PostParams::default(), &widget("b", 1)).await?;
    let wp = WatchParams::default().timeout(5);
    let mut got: Vec<(String, String)> = collect(&api, &wp, "", 2, env.ctx.timeout, false)
        .await?
        .iter()
        .map(describe)
        .collect();
    got.sort();
    ensure_eq!(
        got,
        vec![
            ("ADDED".to_string(), format!("{ns}/a")),
            ("ADDED".to_string(), format!("{ns}/b"))
        ],
        "synthetic ADDED events"
    );
    let got: Vec<(String, String)> = collect(&api, &wp, "0", 2, env.ctx.timeout, false)
        .await?
        .iter()
        .map(describe)
        .collect();
    ensure_eq!(
        got.len(),
        2,
        "resourceVersion=0 also starts with the current objects"
    );
    Ok(())
}

pub(super) async fn watch_send_initial_events(env: &Env) -> Outcome {
    let ns = env.namespace("watchsie").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("a", 1)).await?;
    let wp = WatchParams {
        timeout: Some(10),
        ..WatchParams::streaming_lists()
    };
    let stream = api.watch(&wp, "").await?;
    let mut stream = Box::pin(stream);
    let mut added = Vec::new();
    let deadline = Instant::now() + env.ctx.timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.next()).await {
            Ok(Some(Ok(WatchEvent::Added(o)))) => added.push(o.metadata.name.unwrap_or_default()),
            Ok(Some(Ok(WatchEvent::Bookmark(b)))) => {
                if b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str)
                    == Some("true")
                {
                    // kube-apiserver v1.37.1 sets this one annotation only: KEP-3157's
                    // `k8s.io/initial-events-list-blueprint` is not in this release.
                    ensure_eq!(
                        b.metadata.annotations.keys().collect::<Vec<_>>(),
                        vec!["k8s.io/initial-events-end"],
                        "the end bookmark's annotations"
                    );
                    ensure!(
                        b.metadata.resource_version.parse::<u64>().is_ok(),
                        "bookmark resourceVersion {:?}",
                        b.metadata.resource_version
                    );
                    break;
                }
            }
            Ok(Some(Ok(other))) => {
                return Err(Failure::new(format!(
                    "unexpected event {:?}",
                    describe(&other)
                )));
            }
            Ok(Some(Err(e))) => return Err(e.into()),
            Ok(None) | Err(_) => {
                return Err(Failure::new("no initial-events-end bookmark"));
            }
        }
    }
    ensure_eq!(added, vec!["a".to_string()], "initial events");
    Ok(())
}

pub(super) async fn watch_too_old(env: &Env) -> Outcome {
    let ns = env.namespace("watchold").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("a", 1)).await?;
    let wp = WatchParams::default().timeout(5);
    let events = collect(&api, &wp, "1", 1, env.ctx.timeout, false).await?;
    match events.first() {
        Some(WatchEvent::Error(s)) => {
            ensure_eq!((s.code, s.reason.as_str()), (410, "Expired"), "status");
            ensure!(
                s.message.contains("too old resource version"),
                "message: {}",
                s.message
            );
        }
        other => {
            return Err(Failure::new(format!(
                "expected an ERROR event, got {:?}",
                other.map(describe)
            )));
        }
    }
    Ok(())
}

pub(super) async fn watch_timeout(env: &Env) -> Outcome {
    let ns = env.namespace("watchtimeout").await?;
    let api = env.widgets(&ns);
    let rv = current_rv(&api).await?;
    let wp = WatchParams::default().timeout(1);
    let started = Instant::now();
    let stream = api.watch(&wp, &rv).await?;
    let mut stream = Box::pin(stream);
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(e) = stream.next().await {
            if e.is_err() {
                break;
            }
        }
    })
    .await;
    ensure!(
        ended.is_ok(),
        "the stream did not end after timeoutSeconds=1"
    );
    ensure!(
        started.elapsed() >= Duration::from_millis(900),
        "ended too early: {:?}",
        started.elapsed()
    );
    Ok(())
}

pub(super) async fn watch_selector_transitions(env: &Env) -> Outcome {
    let ns = env.namespace("watchsel").await?;
    let api = env.widgets(&ns);
    let rv = current_rv(&api).await?;
    let writer = api.clone();
    let av = format!("{}/{}", super::GROUP, super::VERSION);
    let write = async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mk = |name: &str, app: &str| {
            dynamic(json!({"apiVersion": av, "kind": "Widget",
                "metadata": {"name": name, "labels": {"app": app}}, "spec": {"size": 1}}))
        };
        writer.create(&PostParams::default(), &mk("y", "b")).await?;
        writer.create(&PostParams::default(), &mk("x", "a")).await?;
        let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
        writer
            .patch("x", &PatchParams::default(), &relabel("b"))
            .await?;
        writer
            .patch("x", &PatchParams::default(), &relabel("a"))
            .await?;
        writer
            .patch(
                "x",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"size": 2}})),
            )
            .await?;
        Ok::<(), kube::Error>(())
    };
    let wp = WatchParams::default().timeout(10).labels("app=a");
    let (events, written) = tokio::join!(collect(&api, &wp, &rv, 4, env.ctx.timeout, false), write);
    written?;
    let got: Vec<(String, String)> = events?.iter().map(describe).collect();
    let x = format!("{ns}/x");
    ensure_eq!(
        got,
        vec![
            ("ADDED".to_string(), x.clone()),
            ("DELETED".to_string(), x.clone()),
            ("ADDED".to_string(), x.clone()),
            ("MODIFIED".to_string(), x)
        ],
        "events through the selector"
    );
    Ok(())
}

pub(super) async fn watch_all_namespaces(env: &Env) -> Outcome {
    let a = env.namespace("watchalla").await?;
    let b = env.namespace("watchallb").await?;
    let all = env.all_widgets();
    let rv = current_rv(&all).await?;
    let (wa, wb) = (env.widgets(&a), env.widgets(&b));
    let write = async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        wa.create(&PostParams::default(), &widget("w", 1)).await?;
        wb.create(&PostParams::default(), &widget("w", 1)).await?;
        Ok::<(), kube::Error>(())
    };
    let wp = WatchParams::default().timeout(10).fields("metadata.name=w");
    let (events, written) = tokio::join!(collect(&all, &wp, &rv, 2, env.ctx.timeout, false), write);
    written?;
    let mut got: Vec<(String, String)> = events?.iter().map(describe).collect();
    got.sort();
    ensure_eq!(
        got,
        vec![
            ("ADDED".to_string(), format!("{a}/w")),
            ("ADDED".to_string(), format!("{b}/w"))
        ],
        "events from both namespaces"
    );
    Ok(())
}

pub(super) async fn watch_as_table(env: &Env) -> Outcome {
    let ns = env.namespace("watchtable").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("a", 3)).await?;
    let path = format!(
        "/apis/{}/{}/namespaces/{ns}/widgets?watch=1&timeoutSeconds=1",
        super::GROUP,
        super::VERSION
    );
    let r = super::raw(
        &env.client,
        "GET",
        &path,
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None,
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "watch as Table: {}",
        String::from_utf8_lossy(&r.body)
    );
    let events: Vec<serde_json::Value> = r
        .body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(serde_json::from_slice)
        .collect::<Result<_, _>>()?;
    ensure_eq!(events.len(), 1, "one event: {events:?}");
    let e = &events[0];
    ensure_eq!(e["type"], json!("ADDED"), "type");
    let t = &e["object"];
    ensure_eq!(
        (t["kind"].clone(), t["apiVersion"].clone()),
        (json!("Table"), json!("meta.k8s.io/v1")),
        "a Table per event"
    );
    let columns: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    ensure_eq!(columns, vec!["Name", "Size"], "columns");
    let row = &t["rows"][0];
    ensure_eq!(
        (row["cells"][0].clone(), row["cells"][1].clone()),
        (json!("a"), json!(3)),
        "cells"
    );
    ensure_eq!(
        row["object"]["kind"],
        json!("PartialObjectMetadata"),
        "the row's object"
    );
    ensure!(
        t["metadata"]["resourceVersion"].is_string(),
        "the Table's resourceVersion: {t}"
    );

    // A second object and a watch that lists both, then bookmarks the end of the list: the
    // column definitions come with the first event only, later Tables carry `null`, and the
    // bookmark is a one-row Table of the bookmark's metadata.
    api.create(&PostParams::default(), &widget("b", 4)).await?;
    let lines = |body: &[u8]| -> Result<Vec<serde_json::Value>, serde_json::Error> {
        body.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(serde_json::from_slice)
            .collect()
    };
    let r = super::raw(
        &env.client,
        "GET",
        &format!(
            "{path}&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        ),
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None,
    )
    .await?;
    ensure_eq!(r.status, 200, "watch list as Table");
    let events = lines(&r.body)?;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    ensure_eq!(
        kinds,
        vec!["ADDED", "ADDED", "BOOKMARK"],
        "events: {events:?}"
    );
    let headed: Vec<bool> = events
        .iter()
        .map(|e| e["object"]["columnDefinitions"].is_array())
        .collect();
    ensure_eq!(
        headed,
        vec![true, false, false],
        "which Tables have columns"
    );
    ensure!(
        events[1]["object"]
            .as_object()
            .is_some_and(|t| t.get("columnDefinitions") == Some(&serde_json::Value::Null)),
        "a later Table's columnDefinitions is null: {}",
        events[1]["object"]
    );
    let mark = &events[2]["object"];
    ensure_eq!(
        (mark["kind"].clone(), mark["rows"][0]["cells"][0].clone()),
        (json!("Table"), json!("")),
        "a bookmark as Table: {mark}"
    );
    ensure_eq!(
        (
            mark["rows"][0]["object"]["kind"].clone(),
            mark["rows"][0]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"]
                .clone()
        ),
        (json!("PartialObjectMetadata"), json!("true")),
        "the bookmark's row: {mark}"
    );

    // includeObject=None keeps each row's `object`, empty.
    let r = super::raw(
        &env.client,
        "GET",
        &format!("{path}&includeObject=None"),
        None,
        Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None,
    )
    .await?;
    let events = lines(&r.body)?;
    let objects: Vec<Option<&serde_json::Value>> = events
        .iter()
        .filter_map(|e| e["object"]["rows"][0].as_object())
        .map(|row| row.get("object"))
        .collect();
    ensure_eq!(
        objects,
        vec![Some(&serde_json::Value::Null); 2],
        "rows of includeObject=None: {events:?}"
    );

    Ok(())
}
