//! Record and replay (`FakeApiServerBuilder::record`/`replay`, `--record`/`--replay`) and the
//! watch fault harness (`kube_fake_apiserver::faults`), through a `kube::Client`.

use std::path::PathBuf;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube_fake_apiserver::record::{Body, Record};
use kube_fake_apiserver::{FakeApiServer, FakeError};
use serde_json::json;

/// A fresh directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "kube-fake-record-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cm(name: &str, mode: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"mode": mode}})).unwrap()
}

/// What a client sees of one run: answers as JSON, and a watch's events.
#[derive(Debug, PartialEq)]
struct Seen {
    answers: Vec<serde_json::Value>,
    events: Vec<(String, Option<String>, Option<String>)>,
}

/// The same requests against any server: a watch, writes, reads, a conflict.
async fn session(client: kube::Client) -> Seen {
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let mut answers = Vec::new();
    let listed = cms.list(&ListParams::default()).await.unwrap();
    let rv = listed.metadata.resource_version.clone().unwrap();
    answers.push(serde_json::to_value(&listed).unwrap());
    let mut watch = cms
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let a = cms
        .create(&PostParams::default(), &cm("a", "fast"))
        .await
        .unwrap();
    answers.push(serde_json::to_value(&a).unwrap());
    let patched = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"mode": "slow"}})),
        )
        .await
        .unwrap();
    answers.push(serde_json::to_value(&patched).unwrap());
    let conflict = cms.create(&PostParams::default(), &cm("a", "x")).await;
    match conflict {
        Err(kube::Error::Api(s)) => {
            answers.push(json!({"code": s.code, "reason": s.reason, "message": s.message}))
        }
        other => panic!("expected 409, got {other:?}"),
    }
    answers.push(serde_json::to_value(cms.get("a").await.unwrap()).unwrap());
    let mut events = Vec::new();
    while events.len() < 2 {
        match watch.try_next().await.unwrap() {
            Some(WatchEvent::Added(o)) => events.push((
                "ADDED".into(),
                o.metadata.resource_version,
                o.data.and_then(|d| d.get("mode").cloned()),
            )),
            Some(WatchEvent::Modified(o)) => events.push((
                "MODIFIED".into(),
                o.metadata.resource_version,
                o.data.and_then(|d| d.get("mode").cloned()),
            )),
            other => panic!("unexpected {other:?}"),
        }
    }
    Seen { answers, events }
}

#[tokio::test]
async fn a_recorded_run_replays_the_same_answers_and_events() {
    let dir = Scratch::new("roundtrip");
    let file = dir.path("run.jsonl");
    let server = FakeApiServer::builder().record(&file).build().unwrap();
    let recorded = session(server.client().unwrap()).await;
    drop(server);

    // The file: a header, then whole JSON lines, the watch's events among them.
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert!(matches!(&records[0], Record::Header { version: 1, .. }));
    let exchanges = records
        .iter()
        .filter(|r| matches!(r, Record::Exchange { .. }))
        .count();
    assert_eq!(
        exchanges, 6,
        "list, watch, create, patch, create (409), get"
    );
    let watch_events: Vec<&Body> = records
        .iter()
        .filter_map(|r| match r {
            Record::Event { event, .. } => Some(event),
            _ => None,
        })
        .collect();
    assert_eq!(watch_events.len(), 2);
    assert!(matches!(watch_events[0], Body::Json(v) if v["type"] == "ADDED"));
    // The patch was the second write: its event waits for two writes on replay.
    let Record::Event { writes_before, .. } = records
        .iter()
        .rev()
        .find(|r| matches!(r, Record::Event { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    assert!(*writes_before >= 2, "{writes_before}");

    let replay = FakeApiServer::builder()
        .replay(&file)
        .replay_wait(Duration::from_secs(2))
        .build()
        .unwrap();
    let replayed = session(replay.client().unwrap()).await;
    assert_eq!(replayed, recorded);
    let handle = replay.handle();
    assert!(
        handle.replay_misses().is_empty(),
        "{:?}",
        handle.replay_misses()
    );

    // Beyond the recording: a GET repeats its last answer, a write the recording has no more
    // answers for is a 500 naming it.
    let cms: Api<ConfigMap> = Api::default_namespaced(replay.client().unwrap());
    let again = cms.get("a").await.unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), recorded.answers[4]);
    match cms.delete("a", &Default::default()).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (500, "InternalError"));
            assert!(
                s.message.contains(
                    "no recorded answer left for DELETE /api/v1/namespaces/default/configmaps/a"
                ),
                "{}",
                s.message
            );
        }
        other => panic!("expected a 500, got {other:?}"),
    }
    assert_eq!(handle.replay_misses().len(), 1);
}

#[tokio::test]
async fn a_dropped_connection_is_recorded_and_replayed() {
    let dir = Scratch::new("dropped");
    let file = dir.path("run.jsonl");
    let server = FakeApiServer::builder().record(&file).build().unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().unwrap());
    cms.create(&PostParams::default(), &cm("a", "fast"))
        .await
        .unwrap();
    let mut watch = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        watch.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
    server.handle().faults().drop_connections("configmaps");
    let cut = watch.try_next().await;
    assert!(
        cut.is_err(),
        "a dropped connection is an error to the client: {cut:?}"
    );
    drop(watch);
    drop(server);
    let text = std::fs::read_to_string(&file).unwrap();
    let last: Record = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert!(
        matches!(last, Record::End { dropped: true, .. }),
        "{last:?}"
    );

    let replay = FakeApiServer::builder().replay(&file).build().unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(replay.client().unwrap());
    cms.create(&PostParams::default(), &cm("a", "fast"))
        .await
        .unwrap();
    let mut watch = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        watch.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
    assert!(watch.try_next().await.is_err());
}

#[test]
fn a_bad_recording_fails_the_build_naming_file_and_line() {
    let dir = Scratch::new("bad");
    let file = dir.path("run.jsonl");
    std::fs::write(
        &file,
        "{\"kind\":\"header\",\"format\":\"kube-fake-apiserver/record\",\"version\":1}\n{\"kind\":\"exchange\",\"id\":1}\n",
    )
    .unwrap();
    match FakeApiServer::builder().replay(&file).build() {
        Err(e @ FakeError::Recording { line: Some(2), .. }) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!(
                    "recording {}, line 2: missing field",
                    file.display()
                )),
                "{msg}"
            );
        }
        other => panic!("expected a recording error, got {other:?}"),
    }
    let missing = dir.path("missing.jsonl");
    assert!(matches!(
        FakeApiServer::builder().replay(&missing).build(),
        Err(FakeError::Recording { line: None, .. })
    ));
    // And where nothing can be written.
    assert!(matches!(
        FakeApiServer::builder()
            .record(dir.path("no/such/dir/run.jsonl"))
            .build(),
        Err(FakeError::Recording { line: None, .. })
    ));
}

#[test]
fn the_binary_names_a_bad_recording() {
    let dir = Scratch::new("bin");
    let file = dir.path("run.jsonl");
    std::fs::write(&file, "not json\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-fake-apiserver"))
        .args(["--port", "0", "--replay"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "recording {}, line 1: expected ident",
            file.display()
        )),
        "{stderr}"
    );
}

/// A watch from the start, its first (initial) event read.
async fn watching(
    server: &FakeApiServer,
) -> (
    Api<ConfigMap>,
    futures::stream::BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>>,
) {
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().unwrap());
    cms.create(&PostParams::default(), &cm("a", "fast"))
        .await
        .unwrap();
    let mut watch = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        watch.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
    (cms, watch)
}

#[tokio::test]
async fn an_expired_watch_gets_the_410_kube_apiserver_sends() {
    let server = FakeApiServer::new();
    let (_cms, mut watch) = watching(&server).await;
    let rv = server.resource_version();
    server.handle().faults().expire("configmaps");
    match watch.try_next().await.unwrap() {
        Some(WatchEvent::Error(s)) => {
            assert_eq!(
                (s.code, s.reason.as_str(), s.is_failure()),
                (410, "Expired", true)
            );
            assert_eq!(s.message, format!("too old resource version: {rv} ({rv})"));
        }
        other => panic!("expected a 410, got {other:?}"),
    }
    assert!(
        watch.try_next().await.unwrap().is_none(),
        "the stream ends after the 410"
    );
}

#[tokio::test]
async fn held_events_go_out_one_step_at_a_time_and_per_resource() {
    let server = FakeApiServer::new();
    let faults = server.handle().faults();
    let (cms, mut watch) = watching(&server).await;
    faults.hold("configmaps");
    for i in 0..3 {
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"step": i.to_string()}})),
        )
        .await
        .unwrap();
    }
    let waited = tokio::time::timeout(Duration::from_millis(100), watch.try_next()).await;
    assert!(waited.is_err(), "held: nothing arrives");
    faults.step("configmaps", 1);
    let step = |e: Option<WatchEvent<ConfigMap>>| match e {
        Some(WatchEvent::Modified(o)) => o.data.unwrap()["step"].clone(),
        other => panic!("expected an event, got {other:?}"),
    };
    assert_eq!(step(watch.try_next().await.unwrap()), "0");
    let waited = tokio::time::timeout(Duration::from_millis(100), watch.try_next()).await;
    assert!(waited.is_err(), "one step, one event");
    faults.release("configmaps");
    assert_eq!(step(watch.try_next().await.unwrap()), "1");
    assert_eq!(step(watch.try_next().await.unwrap()), "2");
}

#[tokio::test(start_paused = true)]
async fn a_slow_watcher_gets_each_event_late() {
    let server = FakeApiServer::new();
    let faults = server.handle().faults();
    let (cms, mut watch) = watching(&server).await;
    faults.slow("configmaps", Duration::from_secs(3));
    let start = tokio::time::Instant::now();
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"mode": "slow"}})),
    )
    .await
    .unwrap();
    assert!(matches!(
        watch.try_next().await.unwrap(),
        Some(WatchEvent::Modified(_))
    ));
    assert!(
        start.elapsed() >= Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[cfg(unix)]
#[test]
fn the_binary_records_and_replays_over_https() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let dir = Scratch::new("binary");
    let file = dir.path("run.jsonl");
    let kubeconfig = dir.path("kc.yaml");
    let start = |flag: &str| {
        let _ = std::fs::remove_file(&kubeconfig);
        let mut child = Command::new(env!("CARGO_BIN_EXE_kube-fake-apiserver"))
            .args(["--port", "0", flag])
            .arg(&file)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut url = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut url);
        }
        assert!(url.starts_with("https://"), "not started: {url:?}");
        child
    };
    let stop = |mut child: std::process::Child| {
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(child.wait().unwrap().code(), Some(0));
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let run = || {
        rt.block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            let cms: Api<ConfigMap> =
                Api::default_namespaced(kube::Client::try_from(config).unwrap());
            let created = cms
                .create(&PostParams::default(), &cm("a", "fast"))
                .await
                .unwrap();
            let got = cms.get("a").await.unwrap();
            (created.metadata.uid, got.metadata.resource_version)
        })
    };
    let child = start("--record");
    let recorded = run();
    stop(child);
    let text = std::fs::read_to_string(&file).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Record>(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    let child = start("--replay");
    let replayed = run();
    stop(child);
    assert!(recorded.0.is_some());
    assert_eq!(
        replayed, recorded,
        "the same uid and resourceVersion from the replay"
    );
}

#[tokio::test]
async fn a_watch_the_server_ended_ends_in_the_replay_too() {
    let dir = Scratch::new("ended");
    let file = dir.path("run.jsonl");
    let server = FakeApiServer::builder().record(&file).build().unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().unwrap());
    let watch = || async {
        let events = cms
            .watch(&WatchParams::default().timeout(1), "0")
            .await
            .unwrap();
        events.try_collect::<Vec<_>>().await.unwrap().len()
    };
    assert_eq!(
        watch().await,
        0,
        "nothing happened: the watch times out empty"
    );
    drop(server);
    let text = std::fs::read_to_string(&file).unwrap();
    let last: Record = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert!(
        matches!(last, Record::End { dropped: false, .. }),
        "{last:?}"
    );

    let replay = FakeApiServer::builder().replay(&file).build().unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(replay.client().unwrap());
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        cms.watch(&WatchParams::default().timeout(1), "0")
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .len()
    })
    .await;
    assert_eq!(
        ended.ok(),
        Some(0),
        "the replayed watch ends as the recorded one did"
    );
}
