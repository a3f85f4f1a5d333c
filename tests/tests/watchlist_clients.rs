//! WatchList with real clients against the in-memory server: a client-go v0.37 informer
//! (`tests/clients/go/informer`, built from the Go module proxy) and kube-rs's watcher with
//! `streaming_lists()`. Each syncs from one watch with `sendInitialEvents=true` and no LIST;
//! when that watch is cut, it resumes from the last resourceVersion it saw, without a relist.
//! The server's request log is the witness.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::PostParams;
use kube::runtime::watcher;
use kube_codegen_runtime::fake::{Action, FakeApiServer, WatchReaction};
use serde_json::json;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `go` from PATH, `/usr/local/go`, or where `scripts/build-kube-apiserver.sh` installs it.
fn go_binary() -> PathBuf {
    if Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return PathBuf::from("go");
    }
    let local = PathBuf::from("/usr/local/go/bin/go");
    if local.is_file() {
        return local;
    }
    let cache = std::env::var_os("KUBE_CODEGEN_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/kube-codegen")))
        .unwrap_or_default();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path().join("bin/go"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("no Go toolchain: run scripts/build-kube-apiserver.sh, which installs one")
    })
}

fn go_informer() -> PathBuf {
    let bin = root().join("target/client-go-informer");
    let out = Command::new(go_binary())
        .args(["build", "-o"])
        .arg(&bin)
        .arg("./informer")
        .current_dir(root().join("tests/clients/go"))
        .env("GOFLAGS", "-mod=mod")
        .output()
        .unwrap_or_else(|e| panic!("go build: {e}"));
    assert!(
        out.status.success(),
        "go build ./informer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap_or_else(|e| panic!("{e}"))
}

fn param<'a>(a: &'a Action, key: &str) -> Option<&'a str> {
    a.query_param(key)
}

/// The first watch carrying `sendInitialEvents=true` is cut after the initial objects and one
/// more event (bookmarks do not count): the client must resume by itself.
fn cut_the_first_watch_list(server: &FakeApiServer, initial: usize) {
    let cut = Arc::new(AtomicBool::new(false));
    server
        .handle()
        .prepend_watch_reactor("configmaps", move |a: &Action| {
            if param(a, "sendInitialEvents") == Some("true") && !cut.swap(true, Ordering::SeqCst) {
                WatchReaction::CutAfter(initial + 1)
            } else {
                WatchReaction::PassThrough
            }
        });
}

/// The request log for ConfigMaps in `ns`: no LIST, exactly one WatchList with the options
/// client-go and kube-rs send, then watches that resume at a version at or after `resumed_at`
/// without initial events.
fn assert_one_watch_list_then_resumes(server: &FakeApiServer, ns: &str, resumed_at: u64) {
    let actions: Vec<Action> = server
        .handle()
        .actions()
        .into_iter()
        .filter(|a| a.resource == "configmaps" && a.namespace.as_deref() == Some(ns))
        .filter(|a| a.verb == "list" || a.verb == "watch")
        .collect();
    let lists = actions.iter().filter(|a| a.verb == "list").count();
    assert_eq!(lists, 0, "no LIST: {actions:#?}");
    let watch_lists: Vec<&Action> = actions
        .iter()
        .filter(|a| param(a, "sendInitialEvents") == Some("true"))
        .collect();
    assert_eq!(watch_lists.len(), 1, "one WatchList: {actions:#?}");
    let first = watch_lists[0];
    assert_eq!(
        param(first, "resourceVersionMatch"),
        Some("NotOlderThan"),
        "{first:?}"
    );
    assert_eq!(
        param(first, "allowWatchBookmarks"),
        Some("true"),
        "{first:?}"
    );
    let resumed: Vec<&Action> = actions
        .iter()
        .filter(|a| a.verb == "watch" && param(a, "sendInitialEvents").is_none())
        .collect();
    assert!(!resumed.is_empty(), "no resumed watch: {actions:#?}");
    let from: u64 = param(resumed[0], "resourceVersion")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("the resumed watch has a resourceVersion: {resumed:?}"));
    assert!(
        from >= resumed_at,
        "resumed from {from}, the cut came after {resumed_at}"
    );
}

async fn create(api: &Api<ConfigMap>, name: &str) -> u64 {
    let cm = api
        .create(&PostParams::default(), &configmap(name))
        .await
        .unwrap_or_else(|e| panic!("create {name}: {e}"));
    cm.metadata
        .resource_version
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} has a resourceVersion"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_go_informer_syncs_by_watch_list_and_resumes_without_relist() {
    let bin = tokio::task::spawn_blocking(go_informer)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let server = FakeApiServer::new();
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = dir.path().join("kubeconfig");
    served
        .write_kubeconfig(&kubeconfig)
        .unwrap_or_else(|e| panic!("{e}"));
    let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
    let ns = "go-informer";
    let nss: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": ns}}))
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await
    .unwrap_or_else(|e| panic!("namespace: {e}"));
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    for i in 0..3 {
        create(&api, &format!("c{i}")).await;
    }
    cut_the_first_watch_list(&server, 3);
    let mut child = Command::new(&bin)
        .args([ns, "after-cut"])
        .env("KUBECONFIG", &kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
    assert_eq!(
        line.ok().flatten().as_deref(),
        Some("synced 3"),
        "the informer syncs the three ConfigMaps"
    );
    // The event that ends the cut watch, then one only a resumed watch can bring.
    let cut_at = create(&api, "live").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    create(&api, "after-cut").await;
    let line = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
    assert_eq!(line.ok().flatten().as_deref(), Some("seen after-cut"));
    let status = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        status.status.success(),
        "informer: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert_one_watch_list_then_resumes(&server, ns, cut_at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_streaming_watcher_syncs_by_watch_list_and_resumes_without_relist() {
    use watcher::Event;
    let server = FakeApiServer::new();
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let client = served.client().await.unwrap_or_else(|e| panic!("{e}"));
    let ns = "default";
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    for i in 0..3 {
        create(&api, &format!("c{i}")).await;
    }
    cut_the_first_watch_list(&server, 3);
    let mut stream = Box::pin(watcher::watcher(
        api.clone(),
        watcher::Config::default().streaming_lists(),
    ));
    let mut initial = Vec::new();
    let mut cut_at = 0;
    let mut synced = false;
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .unwrap_or_else(|_| panic!("the watcher stalled"))
            .unwrap_or_else(|| panic!("the watcher ended"))
            .unwrap_or_else(|e| panic!("watcher: {e}"));
        match e {
            Event::InitApply(o) => initial.push(o.metadata.name.unwrap_or_default()),
            Event::InitDone => {
                synced = true;
                initial.sort();
                assert_eq!(initial, ["c0", "c1", "c2"]);
                cut_at = create(&api, "live").await;
            }
            Event::Apply(o) if o.metadata.name.as_deref() == Some("live") => {
                create(&api, "after-cut").await;
            }
            Event::Apply(o) if o.metadata.name.as_deref() == Some("after-cut") => break,
            Event::Init if synced => panic!("a relist after the cut"),
            _ => {}
        }
    }
    assert_one_watch_list_then_resumes(&server, ns, cut_at);
}
