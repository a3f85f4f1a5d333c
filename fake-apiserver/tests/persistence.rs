//! `--data-dir` / [`FakeApiServerBuilder::data_dir`]: the objects survive a restart with their
//! resourceVersions, the counter continues so watches resume, and a directory that is not ours
//! is refused without being touched.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube_fake_apiserver::{FakeApiServer, FakeError};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kube-fake-apiserver-{name}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "data": {"k": name}}))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn build(dir: &PathBuf) -> Result<FakeApiServer, FakeError> {
    FakeApiServer::builder().data_dir(dir).build()
}

#[tokio::test]
async fn a_restart_keeps_every_object_and_watches_resume() {
    let dir = scratch("restart");
    let first = build(&dir).unwrap_or_else(|e| panic!("first start: {e}"));
    let cms: Api<ConfigMap> =
        Api::namespaced(first.client().unwrap_or_else(|e| panic!("{e}")), "default");
    for i in 0..50 {
        cms.create(&PostParams::default(), &cm(&format!("c{i}")))
            .await
            .unwrap_or_else(|e| panic!("create: {e}"));
    }
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    first
        .handle()
        .add_value(crd)
        .unwrap_or_else(|e| panic!("CRD: {e}"));
    first
        .handle()
        .add_value(serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
                                      "metadata": {"name": "w", "namespace": "default"}, "spec": {"n": 1}}))
        .unwrap_or_else(|e| panic!("widget: {e}"));
    let before = cms
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let saved = first
        .save_snapshot(&dir)
        .unwrap_or_else(|e| panic!("save: {e}"));
    assert_eq!(saved.resource_version, first.resource_version());
    drop(first);

    let second = build(&dir).unwrap_or_else(|e| panic!("restart: {e}"));
    assert_eq!(second.resource_version(), saved.resource_version);
    let cms: Api<ConfigMap> =
        Api::namespaced(second.client().unwrap_or_else(|e| panic!("{e}")), "default");
    let after = cms
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let versions =
        |l: &kube::core::ObjectList<ConfigMap>| -> Vec<(Option<String>, Option<String>)> {
            l.items
                .iter()
                .map(|c| (c.metadata.name.clone(), c.metadata.resource_version.clone()))
                .collect()
        };
    assert_eq!(
        versions(&after),
        versions(&before),
        "every object, at its resourceVersion"
    );
    assert_eq!(after.items.len(), 50);
    // The CRD's resource is served again, with its object.
    let widgets = kube::core::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widget = second.handle().get_value(&widgets, "default", "w");
    assert_eq!(
        widget.map(|w| w["spec"]["n"].clone()),
        Some(serde_json::json!(1))
    );
    // A watch from the saved version resumes and sees the next write, whose version follows.
    let mut events = cms
        .watch(&WatchParams::default(), &saved.resource_version.to_string())
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"))
        .boxed();
    cms.create(&PostParams::default(), &cm("next"))
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
    let event = tokio::time::timeout(Duration::from_secs(5), events.next()).await;
    match event {
        Ok(Some(Ok(WatchEvent::Added(c)))) => {
            assert_eq!(c.metadata.name.as_deref(), Some("next"));
            let rv: u64 = c
                .metadata
                .resource_version
                .as_deref()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            assert_eq!(rv, saved.resource_version + 1);
        }
        other => panic!("expected the next write, got {other:?}"),
    }
    // One from before the snapshot is gone, as after a compaction.
    let old = cms
        .watch(&WatchParams::default(), "5")
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"))
        .boxed()
        .next()
        .await;
    assert!(
        matches!(old, Some(Ok(WatchEvent::Error(ref e))) if e.code == 410),
        "{old:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_that_is_not_ours_is_refused_and_left_alone() {
    let dir = scratch("foreign");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("notes.txt"), "mine").unwrap_or_else(|e| panic!("{e}"));
    let e = build(&dir).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        e.contains("not a kube-fake-apiserver data directory") && e.contains("notes.txt"),
        "{e}"
    );
    let saving = FakeApiServer::new().save_snapshot(&dir);
    assert!(
        matches!(saving, Err(FakeError::DataDir { .. })),
        "{saving:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt"))
            .ok()
            .as_deref(),
        Some("mine")
    );
    assert!(!dir.join("snapshot.json").exists());

    let corrupt = scratch("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(corrupt.join("snapshot.json"), "{\"kind\": \"Something\"}")
        .unwrap_or_else(|e| panic!("{e}"));
    let e = build(&corrupt)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("snapshot.json is not a snapshot"), "{e}");
    assert_eq!(
        std::fs::read_to_string(corrupt.join("snapshot.json"))
            .ok()
            .as_deref(),
        Some("{\"kind\": \"Something\"}"),
        "a corrupt snapshot is kept as it was"
    );
    // A new or empty directory starts fresh.
    let fresh = scratch("fresh");
    assert!(build(&fresh).is_ok());
    for d in [dir, corrupt] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[cfg(unix)]
#[test]
fn the_binary_saves_on_sigterm_and_restores_at_start() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let dir = scratch("binary");
    let kubeconfig = scratch("binary-kc");
    let start = || {
        let _ = std::fs::remove_file(&kubeconfig);
        let mut child = Command::new(env!("CARGO_BIN_EXE_kube-fake-apiserver"))
            .args(["--port", "0", "--data-dir"])
            .arg(&dir)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let mut url = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut url);
        }
        assert!(
            url.starts_with("https://"),
            "the server did not start: {url:?}"
        );
        child
    };
    let stop = |mut child: std::process::Child| {
        let pid = child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(killed.is_ok_and(|s| s.success()));
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status.code(), Some(0), "a clean stop exits 0");
    };
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let client = || {
        rt.block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig)
                .unwrap_or_else(|e| panic!("kubeconfig: {e}"));
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            kube::Client::try_from(config).unwrap_or_else(|e| panic!("{e}"))
        })
    };
    let child = start();
    let cms: Api<ConfigMap> = Api::namespaced(client(), "default");
    rt.block_on(async {
        for i in 0..20 {
            cms.create(&PostParams::default(), &cm(&format!("b{i}")))
                .await
                .unwrap_or_else(|e| panic!("create: {e}"));
        }
    });
    stop(child);
    let child = start();
    let cms: Api<ConfigMap> = Api::namespaced(client(), "default");
    let names: Vec<String> = rt.block_on(async {
        cms.list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    });
    assert_eq!(names.len(), 20, "{names:?}");
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&kubeconfig);
}
