//! KEP-5866's `shardSelector` on the in-memory server against kube-apiserver v1.37.1, with the
//! `ShardedListAndWatch` feature gate on (`--feature-gates=ShardedListAndWatch=true`, and the
//! builder's `sharded_list_and_watch(true)`) and off (the default of both).
//!
//! Both servers get the same requests. Uids are random, so the objects a uid range selects
//! differ between the servers: each answer is checked against the 64-bit FNV-1a hash of the
//! uids the server itself handed out (the test's own hash, from the `fnv` crate), and what is
//! compared is the status, the message, `metadata.shardInfo`, `remainingItemCount` and
//! whether the items are exactly the ones the hash selects. Namespace ranges hash names that
//! are the same on both servers, so their items are compared by name. CEL syntax errors carry
//! the parser's own text (cel-go's or the `cel` crate's) after `CEL parse error: `; the rest of
//! every message is compared word for word.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;
use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::informer::InformerOptions;
use kube_codegen_runtime::labels::Selector;
use kube_controller_runtime::sharding::{server_supports_shard_selector, uid_range_selector};
use serde_json::{Value, json};
use tests::apiserver::{Options, RealApiServer};
use tests::e2e::{init_tracing, run_id};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

const LOWER: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const UPPER: &str = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
const OUTER: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || (shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000'))";

/// Selectors kube-apiserver refuses, each for another reason.
const REFUSED: &[&str] = &[
    "garbage",
    "true",
    "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8')",
    "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object[\"metadata\"].uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange('x', '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000001')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x100000000000000000')",
    "shardRange(object.metadata.uid, '0xC000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x800000000000000g', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x', '0x10000000000000000')",
    "shardRange(object.metadata.uid, 0, 5)",
    "shardRange(object.metadata.uid, null, '0x8000000000000000')",
    "shardRange(object.metadata.uid, b'0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, ['0x0000000000000000'], '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') && shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')",
    "!shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "foo(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') ||",
];

fn fnv1a(s: &str) -> u128 {
    let mut h = fnv::FnvHasher::default();
    h.write(s.as_bytes());
    u128::from(h.finish())
}

/// The `[start, end)` ranges of one of the valid selectors above.
fn ranges(selector: &str) -> Vec<(u128, u128)> {
    const HALF: u128 = 1 << 63;
    const QUARTER: u128 = 1 << 62;
    const TOP: u128 = 1 << 64;
    match selector {
        LOWER => vec![(0, HALF)],
        UPPER => vec![(HALF, TOP)],
        OUTER => vec![(0, QUARTER), (3 * QUARTER, TOP)],
        _ => panic!("no ranges for {selector}"),
    }
}

fn selects(selector: &str, uid: &str) -> bool {
    let h = fnv1a(uid);
    ranges(selector).iter().any(|(a, b)| *a <= h && h < *b)
}

fn q(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

struct Answer {
    status: u16,
    body: Value,
    text: String,
}

async fn send(client: &kube::Client, method: &str, path: &str, body: Option<Value>) -> Answer {
    let req = ok(http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(kube::client::Body::from(
            body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        )));
    let resp = ok(client.send(req).await);
    let status = resp.status().as_u16();
    let bytes = ok(resp.into_body().collect().await).to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        text,
    }
}

/// A refusal as compared: status, reason, message (the CEL parser's own words cut).
fn refusal(a: &Answer) -> String {
    const PARSE: &str = "CEL parse error: ";
    let mut message = a.body["message"].as_str().unwrap_or("").to_string();
    if let Some(i) = message.find(PARSE) {
        message.truncate(i + PARSE.len());
        message.push('…');
    }
    format!(
        "{} {} reason={:?} {message}",
        a.status,
        a.body["status"].as_str().unwrap_or(""),
        a.body["reason"].as_str().unwrap_or("")
    )
}

fn names_uids(items: &Value) -> BTreeMap<String, String> {
    items
        .as_array()
        .map(|v| {
            v.iter()
                .map(|o| {
                    (
                        o["metadata"]["name"].as_str().unwrap_or("").to_string(),
                        o["metadata"]["uid"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A selected list as compared: status, shardInfo, remainingItemCount and whether the items
/// are the objects of `all` (name → uid) the selector's ranges select.
fn selected(a: &Answer, selector: &str, all: &BTreeMap<String, String>) -> String {
    let got: BTreeSet<String> = names_uids(&a.body["items"]).into_keys().collect();
    let want: BTreeSet<String> = all
        .iter()
        .filter(|(_, uid)| selects(selector, uid))
        .map(|(n, _)| n.clone())
        .collect();
    format!(
        "{} shardInfo={} remaining={} items-as-hashed={}",
        a.status,
        a.body["metadata"]["shardInfo"],
        a.body["metadata"]["remainingItemCount"],
        got == want
    )
}

/// The lines of a watch stream, read until the server ends it (`timeoutSeconds`).
fn events(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

async fn create_cm(client: &kube::Client, ns: &str, name: &str, run: &str) -> (String, String) {
    let a = send(
        client,
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"shard-run": run}}})),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.text);
    (
        name.to_string(),
        a.body["metadata"]["uid"].as_str().unwrap_or("").to_string(),
    )
}

async fn create_ns(client: &kube::Client, ns: &str) {
    let a = send(
        client,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.text);
}

/// The gate-on scenarios; step → answer as compared.
async fn gate_on(client: &kube::Client, run: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let ns = format!("shard-{run}");
    let ns2 = format!("shard2-{run}");
    create_ns(client, &ns).await;
    create_ns(client, &ns2).await;
    let mut all = BTreeMap::new();
    for i in 0..16 {
        let (n, u) = create_cm(client, &ns, &format!("c{i:02}"), run).await;
        all.insert(n, u);
    }
    create_cm(client, &ns2, "other", run).await;
    let base = format!("/api/v1/namespaces/{ns}/configmaps");

    for sel in [LOWER, UPPER, OUTER] {
        let a = send(
            client,
            "GET",
            &format!("{base}?shardSelector={}", q(sel)),
            None,
        )
        .await;
        out.insert(format!("list {sel}"), selected(&a, sel, &all));
    }
    // The two halves partition the objects.
    let mut both = BTreeSet::new();
    for sel in [LOWER, UPPER] {
        let a = send(
            client,
            "GET",
            &format!("{base}?shardSelector={}", q(sel)),
            None,
        )
        .await;
        both.extend(names_uids(&a.body["items"]).into_keys());
    }
    out.insert(
        "halves cover all".into(),
        (both.len() == all.len()).to_string(),
    );
    // Pages of a selected list (how many depends on the uids): no remainingItemCount, and
    // together exactly the selection.
    let mut paged = BTreeMap::new();
    let mut cont = String::new();
    let mut remaining = Vec::new();
    loop {
        let a = send(
            client,
            "GET",
            &format!("{base}?limit=3&shardSelector={}&continue={cont}", q(LOWER)),
            None,
        )
        .await;
        assert_eq!(a.status, 200, "{}", a.text);
        remaining.push(a.body["metadata"]["remainingItemCount"].clone());
        paged.extend(names_uids(&a.body["items"]));
        match a.body["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => cont = q(c),
            _ => break,
        }
    }
    out.insert(
        "paged lower half".into(),
        format!(
            "as-hashed={} no-remainingItemCount={}",
            paged.keys().cloned().collect::<BTreeSet<_>>()
                == all
                    .iter()
                    .filter(|(_, u)| selects(LOWER, u))
                    .map(|(n, _)| n.clone())
                    .collect(),
            remaining.iter().all(Value::is_null)
        ),
    );
    // Namespace ranges, across namespaces: names hash alike on both servers.
    for (lo, hi) in [
        ("0x0000000000000000", "0x8000000000000000"),
        ("0x8000000000000000", "0x10000000000000000"),
    ] {
        let sel = format!("shardRange(object.metadata.namespace, '{lo}', '{hi}')");
        let a = send(
            client,
            "GET",
            &format!(
                "/api/v1/configmaps?labelSelector=shard-run%3D{run}&shardSelector={}",
                q(&sel)
            ),
            None,
        )
        .await;
        let namespaces: BTreeSet<String> = a.body["items"]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|o| {
                        o["metadata"]["namespace"]
                            .as_str()
                            .unwrap_or("")
                            .replace(run, "RUN")
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.insert(
            format!("list namespaces {lo}-{hi}"),
            format!(
                "{} shardInfo={} namespaces={namespaces:?} items={}",
                a.status,
                a.body["metadata"]["shardInfo"],
                a.body["items"].as_array().map_or(0, Vec::len)
            ),
        );
    }
    for sel in REFUSED {
        let a = send(
            client,
            "GET",
            &format!("{base}?shardSelector={}", q(sel)),
            None,
        )
        .await;
        out.insert(format!("list refused {sel}"), refusal(&a));
    }
    let a = send(
        client,
        "GET",
        &format!("{base}?watch=true&shardSelector={}", q(REFUSED[0])),
        None,
    )
    .await;
    out.insert("watch refused".into(), refusal(&a));
    // A label selector's error comes before the shard selector's.
    let a = send(
        client,
        "GET",
        &format!("{base}?labelSelector=a%20b%20c&shardSelector=garbage"),
        None,
    )
    .await;
    // (The label parser's words differ between the servers, which is not this test's
    // subject: status and reason show which selector was refused.)
    out.insert(
        "bad label and shard selector".into(),
        format!("{} {}", a.status, a.body["reason"]),
    );

    // WatchList: the initial events are the selection, then the bookmark.
    let a = send(
        client,
        "GET",
        &format!(
            "{base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2&shardSelector={}",
            q(UPPER)
        ),
        None,
    )
    .await;
    let evs = events(&a.text);
    let added: BTreeSet<String> = evs
        .iter()
        .filter(|(t, _)| t == "ADDED")
        .map(|(_, n)| n.clone())
        .collect();
    let want: BTreeSet<String> = all
        .iter()
        .filter(|(_, u)| selects(UPPER, u))
        .map(|(n, _)| n.clone())
        .collect();
    out.insert(
        "watchlist upper half".into(),
        format!(
            "{} initial-as-hashed={} bookmark={}",
            a.status,
            added == want,
            evs.iter().any(|(t, _)| t == "BOOKMARK")
        ),
    );

    // A watch from now sees only the new objects its range selects.
    let list = send(client, "GET", &base, None).await;
    let rv = list.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let watcher = {
        let client = client.clone();
        let path = format!(
            "{base}?watch=true&resourceVersion={rv}&timeoutSeconds=3&shardSelector={}",
            q(LOWER)
        );
        tokio::spawn(async move { send(&client, "GET", &path, None).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut new = BTreeMap::new();
    for i in 0..12 {
        let (n, u) = create_cm(client, &ns, &format!("w{i:02}"), run).await;
        new.insert(n, u);
    }
    let a = ok(watcher.await);
    let seen: BTreeSet<String> = events(&a.text)
        .into_iter()
        .filter(|(t, _)| t == "ADDED")
        .map(|(_, n)| n)
        .collect();
    let want: BTreeSet<String> = new
        .iter()
        .filter(|(_, u)| selects(LOWER, u))
        .map(|(n, _)| n.clone())
        .collect();
    out.insert(
        "watch lower half".into(),
        format!("{} events-as-hashed={}", a.status, seen == want),
    );
    all.extend(new);

    // deletecollection takes the selector too and echoes it.
    let a = send(
        client,
        "DELETE",
        &format!("{base}?shardSelector={}", q(UPPER)),
        None,
    )
    .await;
    out.insert(
        "deletecollection upper half".into(),
        selected(&a, UPPER, &all),
    );
    let left = send(client, "GET", &base, None).await;
    let left: BTreeSet<String> = names_uids(&left.body["items"]).into_keys().collect();
    out.insert(
        "left after deletecollection".into(),
        (left
            == all
                .iter()
                .filter(|(_, u)| !selects(UPPER, u))
                .map(|(n, _)| n.clone())
                .collect())
        .to_string(),
    );
    let a = send(
        client,
        "DELETE",
        &format!("{base}?shardSelector=garbage"),
        None,
    )
    .await;
    out.insert("deletecollection refused".into(), refusal(&a));

    // Through the public interface: the probe, and an informer that caches one uid range.
    out.insert(
        "server_supports_shard_selector".into(),
        ok(server_supports_shard_selector(client, &base).await).to_string(),
    );
    out.insert(
        "informer range 1 of 2".into(),
        informer_range(client, &ns, run).await,
    );
    out
}

/// An informer with `shard_selector(uid_range_selector(1, 2))` on `ns`: does its cache hold
/// exactly the upper half, first after its sync and then after new objects arrive by watch?
async fn informer_range(client: &kube::Client, ns: &str, run: &str) -> String {
    let selector = ok(uid_range_selector(1, 2));
    assert_eq!(selector, UPPER);
    let factory = SharedInformerFactory::builder(client.clone())
        .options(
            InformerOptions::default()
                .namespace(ns)
                .shard_selector(selector.clone()),
        )
        .build();
    let lister = factory.lister_for::<ConfigMap>();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    let cached = || -> BTreeSet<String> {
        lister
            .list(&Selector::everything())
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect()
    };
    let list = send(
        client,
        "GET",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        None,
    )
    .await;
    let mut all = names_uids(&list.body["items"]);
    let want = |all: &BTreeMap<String, String>| -> BTreeSet<String> {
        all.iter()
            .filter(|(_, u)| selects(UPPER, u))
            .map(|(n, _)| n.clone())
            .collect()
    };
    let synced = cached() == want(&all);
    for i in 0..8 {
        let (n, u) = create_cm(client, ns, &format!("i{i:02}"), run).await;
        all.insert(n, u);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while cached() != want(&all) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let watched = cached() == want(&all);
    factory.shutdown().await;
    format!("after-sync-as-hashed={synced} after-watch-as-hashed={watched}")
}

/// The gate-off scenarios: the parameter is ignored, whatever it holds.
async fn gate_off(client: &kube::Client, run: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let ns = format!("shard-off-{run}");
    create_ns(client, &ns).await;
    for i in 0..6 {
        create_cm(client, &ns, &format!("c{i:02}"), run).await;
    }
    let base = format!("/api/v1/namespaces/{ns}/configmaps");
    for sel in [LOWER, REFUSED[0], REFUSED[2]] {
        let a = send(
            client,
            "GET",
            &format!("{base}?shardSelector={}", q(sel)),
            None,
        )
        .await;
        out.insert(
            format!("gate off: list {sel}"),
            format!(
                "{} items={} shardInfo={}",
                a.status,
                a.body["items"].as_array().map_or(0, Vec::len),
                a.body["metadata"]["shardInfo"]
            ),
        );
    }
    out.insert(
        "gate off: server_supports_shard_selector".into(),
        ok(server_supports_shard_selector(client, &base).await).to_string(),
    );
    let a = send(
        client,
        "GET",
        &format!("{base}?watch=true&timeoutSeconds=1&resourceVersion=0&shardSelector=garbage"),
        None,
    )
    .await;
    out.insert(
        "gate off: watch garbage".into(),
        format!("{} events={}", a.status, events(&a.text).len()),
    );
    out
}

fn compare(
    real: &BTreeMap<String, String>,
    fake: &BTreeMap<String, String>,
    table: &mut String,
) -> Vec<String> {
    let mut disagree = Vec::new();
    for (k, r) in real {
        let f = fake.get(k).cloned().unwrap_or_default();
        let same = *r == f;
        table.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            k.replace('|', "\\|"),
            r.replace('|', "\\|"),
            f.replace('|', "\\|"),
            if same { "yes" } else { "NO" }
        ));
        if !same {
            disagree.push(k.clone());
        }
    }
    disagree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_selector_answers_as_kube_apiserver() {
    init_tracing();
    let run = format!("s{}", run_id());
    let mut table =
        String::from("| step | kube-apiserver | in-memory | agree |\n|---|---|---|---|\n");
    let mut disagree = Vec::new();

    let real_answers = {
        let server = ok(RealApiServer::start_with(Options {
            extra_apiserver_args: vec!["--feature-gates=ShardedListAndWatch=true".into()],
            ..Options::default()
        })
        .await);
        gate_on(&ok(server.client()), &run).await
    };
    let fake = ok(FakeApiServer::builder()
        .sharded_list_and_watch(true)
        .build());
    let fake_answers = gate_on(&ok(fake.client()), &run).await;
    // Checks of our own: these hold on both servers, or the comparison below means little.
    for answers in [&real_answers, &fake_answers] {
        assert_eq!(answers["halves cover all"], "true");
        assert!(answers[&format!("list {LOWER}")].ends_with("items-as-hashed=true"));
        assert!(answers["watch lower half"].ends_with("events-as-hashed=true"));
        assert_eq!(answers["server_supports_shard_selector"], "true");
        assert_eq!(
            answers["informer range 1 of 2"],
            "after-sync-as-hashed=true after-watch-as-hashed=true"
        );
    }
    disagree.extend(compare(&real_answers, &fake_answers, &mut table));

    let real_off = {
        let server = ok(RealApiServer::start().await);
        gate_off(&ok(server.client()), &run).await
    };
    let fake_off = gate_off(&ok(FakeApiServer::new().client()), &run).await;
    assert!(real_off[&format!("gate off: list {LOWER}")].starts_with("200 items=6 "));
    assert_eq!(
        real_off["gate off: server_supports_shard_selector"],
        "false"
    );
    disagree.extend(compare(&real_off, &fake_off, &mut table));

    println!("{table}");
    assert!(
        disagree.is_empty(),
        "the servers disagree on {} steps: {disagree:?}:\n{table}",
        disagree.len()
    );
}
