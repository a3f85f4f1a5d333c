//! The crddemo controller (under a Manager, its informers the runtime's) against a recorded
//! run of the walkthrough, replayed by the in-memory server: the controller's log — its
//! reconcile lines, without timestamps — is the same against the replay as against the live
//! server.
//!
//! The log is captured with a thread-local subscriber, so this file holds one test: tracing
//! caches a call site's interest process-wide, and a test on another thread without the
//! subscriber would hide some of its lines.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use example_crddemo::embedded::{DEMO_NAME, run_demo, wait_controller_idle};
use example_crddemo::pkg::client::clientset::versioned::{Clientset, fake};
use kube_codegen_runtime::fake::{Controller as ServerController, FakeApiServer};

/// A fresh directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("crddemo-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Log lines, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The controller's reconcile lines (what it reconciled and what it wrote), in order,
    /// normalised: without timestamps (the subscriber writes none) and without the manager's
    /// identity, which is new for each run.
    fn reconcile_lines(&self) -> Vec<String> {
        const KEPT: [&str; 9] = [
            "Mydemo deleted:",
            "reconcile start",
            "reconcile end",
            "Successfully synced",
            "sync failed",
            "created Service",
            "corrected Service",
            "created EndpointSlice",
            "updated EndpointSlice",
        ];
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains("example_crddemo::controller"))
            .filter(|l| KEPT.iter().any(|k| l.contains(k)))
            .map(|l| {
                l.split(' ')
                    .filter(|field| !field.starts_with("identity="))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }
}

/// The walkthrough (create, port 8080 → 9090, delete) with the controller, as `crddemo
/// --embedded --demo` runs it, against `server`; returns the log.
async fn walkthrough(server: &FakeApiServer) -> Captured {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .with_env_filter("info,kube_client=warn,kube_runtime=warn")
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let client = server.client().unwrap();
    let clientset = Clientset::new(client.clone());
    let (mgr, controller) = common::one_worker_controller(client, "replay");
    let (lister, queue) = (controller.mydemos().clone(), controller.queue().clone());
    mgr.add(controller).unwrap();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let elected = mgr.clone();
    let demo = tokio::spawn(async move {
        elected.elected().await;
        run_demo(&clientset, "default").await.unwrap();
        wait_controller_idle(&lister, &queue, "default", DEMO_NAME)
            .await
            .unwrap();
        let _ = done_tx.send(());
    });
    mgr.start(async move {
        let _ = done_rx.await;
    })
    .await
    .unwrap();
    demo.await.unwrap();
    captured
}

#[tokio::test]
async fn a_replayed_walkthrough_logs_the_same_reconciles() {
    let dir = Scratch::new("replay");
    let file = dir.0.join("walkthrough.jsonl");
    let live = FakeApiServer::builder()
        .resources(&fake::Clientset::resources())
        .with_controllers([
            ServerController::GarbageCollector,
            ServerController::Namespace,
        ])
        .record(&file)
        .build()
        .unwrap();
    let recorded = walkthrough(&live).await.reconcile_lines();
    drop(live);
    assert!(
        recorded.iter().any(|l| l.contains("created Service"))
            && recorded.iter().any(|l| l.contains("updated EndpointSlice")),
        "the live run reconciled the walkthrough:\n{}",
        recorded.join("\n")
    );

    let replay = FakeApiServer::builder().replay(&file).build().unwrap();
    let replayed = walkthrough(&replay).await.reconcile_lines();
    assert_eq!(
        replayed.join("\n"),
        recorded.join("\n"),
        "the replayed run's reconcile log differs"
    );
    // Only requests the recording cannot hold: kube-runtime's event recorder names an Event
    // by the time it made it, so the PATCH that counts a repeated Event names another one
    // in each run (the recorder logs the 500 and the sync goes on, as for any Event failure).
    let misses = replay.handle().replay_misses();
    assert!(
        misses.iter().all(|m| m
            .starts_with("PATCH /apis/events.k8s.io/v1/namespaces/default/events/example-mydemo.")),
        "{misses:#?}"
    );
}
