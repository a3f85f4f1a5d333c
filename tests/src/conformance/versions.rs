//! resourceVersion semantics of reads: GET and LIST at a version (`0`, `Exact`,
//! `NotOlderThan`, none for a consistent read), the option combinations refused, a version the
//! server has not reached (it waits for it, then answers 504 with a `Retry-After`), and what
//! `resourceVersion=0` does to `limit` and `continue`.

use serde_json::{Value, json};

use super::{Env, Failure, Outcome, Raw, causes, ensure, ensure_eq, ensure_status, get, raw};

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

async fn create(env: &Env, ns: &str, name: &str) -> Result<u64, Failure> {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let r = raw(
        &env.client,
        "POST",
        &cms(ns),
        Some("application/json"),
        None,
        Some(serde_json::to_vec(&body)?),
    )
    .await?;
    ensure_eq!(r.status, 201, "create {name}: {}", r.json());
    rv_in(&r.json()["metadata"])
}

fn rv_in(meta: &Value) -> Result<u64, Failure> {
    meta["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Failure::new(format!("no numeric resourceVersion in {meta}")))
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The 504 a read at a version the server has not reached ends with.
fn ensure_too_large(r: &Raw, want: u64, what: &str) -> Outcome {
    let (code, reason, message) = r.status();
    ensure_eq!(
        (code, reason.as_str()),
        (504, "Timeout"),
        "{what}: {message}"
    );
    ensure!(
        message.starts_with(&format!(
            "Timeout: Too large resource version: {want}, current: "
        )),
        "{what}: message {message}"
    );
    let details = &r.json()["details"];
    ensure_eq!(
        details,
        &json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}),
        "{what}: details"
    );
    ensure_eq!(
        r.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1"),
        "{what}: Retry-After"
    );
    Ok(())
}

/// GET at a version: `0` and any reached version read the present (the watch cache's
/// not-older-than), `resourceVersionMatch` means nothing to a GET, a bad version is the
/// cache's 500 without a reason.
pub(super) async fn get_at_resource_version(env: &Env) -> Outcome {
    let ns = env.namespace("getrv").await?;
    let first = create(env, &ns, "a").await?;
    let path = format!("{}/a", cms(&ns));
    let update = json!({"data": {"k": "v"}});
    let r = raw(
        &env.client,
        "PATCH",
        &path,
        Some("application/merge-patch+json"),
        None,
        Some(serde_json::to_vec(&update)?),
    )
    .await?;
    ensure_eq!(r.status, 200, "patch: {}", r.json());
    let now = rv_in(&r.json()["metadata"])?;
    for q in [
        "resourceVersion=0".to_string(),
        format!("resourceVersion={first}"),
        "resourceVersion=1".to_string(),
        format!("resourceVersion={now}"),
        format!("resourceVersion={first}&resourceVersionMatch=Exact"),
        "resourceVersionMatch=NotOlderThan".to_string(),
    ] {
        let r = get(env, &format!("{path}?{q}")).await?;
        ensure_eq!(r.status, 200, "GET ?{q}: {}", r.json());
        ensure_eq!(
            rv_in(&r.json()["metadata"])?,
            now,
            "GET ?{q} reads the latest version"
        );
    }
    let r = get(env, &format!("{path}?resourceVersion=abc")).await?;
    ensure_status!(
        r,
        500,
        "",
        "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
        "GET resourceVersion=abc"
    );
    Ok(())
}

/// A version the server has not reached: a read waits for it (a write that reaches it during
/// the wait lets the read through), then answers 504 `Timeout` with a
/// `ResourceVersionTooLarge` cause and `Retry-After: 1`; a WatchList says so in an ERROR
/// event of a 200 stream; a plain watch from there just waits for events.
pub(super) async fn future_resource_version(env: &Env) -> Outcome {
    let ns = env.namespace("futurerv").await?;
    let rv = create(env, &ns, "a").await?;
    // Reached by a write while the read waits.
    let next = rv + 1;
    let path = format!("{}/a", cms(&ns));
    let at_next = format!("{path}?resourceVersion={next}");
    let waiting = get(env, &at_next);
    let writing = async {
        env.pause(std::time::Duration::from_millis(300)).await;
        create(env, &ns, "b").await
    };
    let (r, written) = futures::join!(waiting, writing);
    let (r, written) = (r?, written?);
    ensure!(written >= next, "the write reached {next}");
    ensure_eq!(
        r.status,
        200,
        "GET at a version reached while it waits: {}",
        r.json()
    );
    let far = written + 1_000_000;
    // A client built from a kubeconfig (kube's `default_retry`) retries a 504 with backoff
    // for minutes; the in-process client does not. Each read gets a few server waits: the
    // answer is checked where it arrives (the WatchList below checks the same Status on
    // every client).
    for (what, path) in [
        ("GET", format!("{path}?resourceVersion={far}")),
        ("LIST", format!("{}?resourceVersion={far}", cms(&ns))),
    ] {
        let limit = std::time::Duration::from_secs(8);
        if let Ok(r) = tokio::time::timeout(limit, get(env, &path)).await {
            ensure_too_large(&r?, far, what)?;
        }
    }
    let r = get(
        env,
        &format!(
            "{}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion={far}&timeoutSeconds=10",
            cms(&ns)
        ),
    )
    .await?;
    ensure_eq!(r.status, 200, "WatchList from the future opens");
    let body = String::from_utf8_lossy(&r.body).to_string();
    let events: Vec<Value> = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    ensure_eq!(events.len(), 1, "one event: {body}");
    ensure_eq!(events[0]["type"], json!("ERROR"), "an ERROR event: {body}");
    let status = Raw {
        status: events[0]["object"]["code"].as_u64().unwrap_or(0) as u16,
        headers: {
            let mut h = http::HeaderMap::new();
            h.insert("retry-after", http::HeaderValue::from_static("1"));
            h
        },
        body: serde_json::to_vec(&events[0]["object"])?,
    };
    ensure_too_large(&status, far, "WatchList ERROR event")?;
    // A plain watch from the future waits for events and ends at its timeout, empty.
    let r = get(
        env,
        &format!(
            "{}?watch=1&resourceVersion={far}&timeoutSeconds=1",
            cms(&ns)
        ),
    )
    .await?;
    ensure_eq!(r.status, 200, "watch from the future");
    ensure!(
        r.body.iter().all(u8::is_ascii_whitespace),
        "no events: {}",
        String::from_utf8_lossy(&r.body)
    );
    Ok(())
}

/// `limit` and `continue` against resourceVersion: `0` ignores the limit (the watch cache has
/// no pages), even on a continued list; a version without a match but with a limit is read
/// exactly; `NotOlderThan` pages the present; a version beside a continue token is refused
/// with 400, a match beside it with 422.
pub(super) async fn resource_version_limit_and_continue(env: &Env) -> Outcome {
    let ns = env.namespace("rvlimit").await?;
    let first = create(env, &ns, "c1").await?;
    create(env, &ns, "c2").await?;
    create(env, &ns, "c3").await?;
    let list = |q: String| {
        let path = format!("{}?{q}", cms(&ns));
        async move { get(env, &path).await }
    };
    for q in [
        "resourceVersion=0&limit=1",
        "resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=1",
    ] {
        let r = list(q.into()).await?;
        let v = r.json();
        ensure_eq!(r.status, 200, "{q}: {v}");
        ensure_eq!(
            names(&v),
            vec!["c1", "c2", "c3"],
            "{q}: the limit is ignored"
        );
        ensure!(
            v["metadata"].get("continue").is_none(),
            "{q}: no continue: {v}"
        );
        ensure!(
            v["metadata"].get("remainingItemCount").is_none(),
            "{q}: no remainingItemCount: {v}"
        );
    }
    // A version and a limit without a match: the list as it was at that version.
    for q in [
        format!("resourceVersion={first}&limit=1"),
        format!("resourceVersion={first}&resourceVersionMatch=Exact&limit=1"),
    ] {
        let r = list(q.clone()).await?;
        let v = r.json();
        ensure_eq!(r.status, 200, "{q}: {v}");
        ensure_eq!(names(&v), vec!["c1"], "{q}: read at {first}");
        ensure_eq!(rv_in(&v["metadata"])?, first, "{q}: list resourceVersion");
        ensure!(
            v["metadata"].get("continue").is_none(),
            "{q}: no continue: {v}"
        );
    }
    // NotOlderThan with a limit: pages of the present.
    let q = format!("resourceVersion={first}&resourceVersionMatch=NotOlderThan&limit=1");
    let r = list(q.clone()).await?;
    let v = r.json();
    ensure_eq!(names(&v), vec!["c1"], "{q}");
    ensure!(rv_in(&v["metadata"])? > first, "{q}: the present: {v}");
    ensure_eq!(v["metadata"]["remainingItemCount"], json!(2), "{q}");
    let token = v["metadata"]["continue"]
        .as_str()
        .ok_or_else(|| Failure::new(format!("{q}: no continue: {v}")))?
        .to_string();
    let r = list(format!("limit=1&continue={token}&resourceVersion={first}")).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "specifying resource version is not allowed when using continue",
        "continue with a resourceVersion"
    );
    let r = list(format!(
        "limit=1&continue={token}&resourceVersion={first}&resourceVersionMatch=NotOlderThan"
    ))
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
        "continue with a match"
    );
    let r = list(format!(
        "limit=1&continue={token}&resourceVersionMatch=Exact"
    ))
    .await?;
    ensure_eq!(r.status, 422, "continue with Exact and no version");
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueForbidden",
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
            ),
            (
                "FieldValueForbidden",
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided"
            ),
        ]),
        "continue with Exact and no version"
    );
    let r = list("resourceVersion=0&resourceVersionMatch=Exact".into()).await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        "Exact at 0"
    );
    let r = list("resourceVersion=-1".into()).await?;
    ensure_status!(
        r,
        400,
        "BadRequest",
        "invalid resource version: resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax",
        "resourceVersion=-1"
    );
    // `resourceVersion=0` beside a continue token: the rest, whole.
    let r = list(format!("limit=1&continue={token}&resourceVersion=0")).await?;
    let v = r.json();
    ensure_eq!(r.status, 200, "continue at 0: {v}");
    ensure_eq!(
        names(&v),
        vec!["c2", "c3"],
        "continue at 0 ignores the limit"
    );
    ensure!(
        v["metadata"].get("continue").is_none(),
        "continue at 0: {v}"
    );
    // The token alone: the next page of the snapshot.
    let r = list(format!("limit=1&continue={token}")).await?;
    let v = r.json();
    ensure_eq!(names(&v), vec!["c2"], "continue");
    ensure_eq!(v["metadata"]["remainingItemCount"], json!(1), "continue");
    Ok(())
}
