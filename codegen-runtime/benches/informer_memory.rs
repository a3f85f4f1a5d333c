//! Informer memory per cached object, for `scripts/bench-informer-memory.sh` (which runs this
//! beside client-go's informer and kube-rs's reflector and prints the table).
//!
//! Modes (one process each, so each heap is its own):
//!
//! * `serve N KUBECONFIG`: the in-memory API server on loopback, seeded with N ConfigMaps of
//!   1 KiB data, each created by server-side apply (so each has one managedFields entry);
//!   writes KUBECONFIG and serves until killed.
//! * `ours KUBECONFIG`, `ours-keep-managed-fields KUBECONFIG`: a `SharedIndexInformer` of
//!   ConfigMaps as a Manager makes it (managedFields dropped), or keeping managedFields.
//! * `ours-metadata KUBECONFIG`: the metadata-only informer (`PartialObjectMeta<ConfigMap>`).
//! * `kube-rs KUBECONFIG`: kube-rs's `reflector` over its `watcher`.
//!
//! Each measuring mode prints `<mode> <objects> <heap bytes per object> <rss bytes per
//! object>`: the growth of live heap bytes (counted by the global allocator) and of VmRSS from
//! before the informer starts to after its cache has synced.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube_codegen_runtime::{InformerOptions, SharedIndexInformer};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn live_heap() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64 + s.bytes_reallocated as i64
}

fn rss() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

async fn client(kubeconfig: &str) -> Result<kube::Client, BoxError> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await?;
    Ok(kube::Client::try_from(config)?)
}

async fn serve(n: usize, kubeconfig: &str) -> Result<(), BoxError> {
    let server = kube_codegen_runtime::fake::FakeApiServer::builder()
        .max_recorded_actions(0)
        .build()?;
    let local = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(local, "default");
    let data = "x".repeat(1024);
    for i in 0..n {
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:05}"), "namespace": "default",
                         "labels": {"app": "bench"}},
            "data": {"payload": data},
        });
        api.patch(
            &format!("cm-{i:05}"),
            &PatchParams::apply("bench").force(),
            &Patch::Apply(cm),
        )
        .await?;
    }
    let served = server
        .serve(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await?;
    served.write_kubeconfig(kubeconfig)?;
    println!("{}", served.url());
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

async fn measure(mode: &str, kubeconfig: &str) -> Result<(), BoxError> {
    let client = client(kubeconfig).await?;
    // Warm the client (TLS, connection pool) before the baseline.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let _ = api.get_opt("warm-up").await?;
    let (heap0, rss0) = (live_heap(), rss());
    let (count, keep): (usize, Box<dyn std::any::Any>) = match mode {
        "ours" | "ours-keep-managed-fields" => {
            let options = if mode == "ours" {
                InformerOptions::default().strip_managed_fields()
            } else {
                InformerOptions::default()
            };
            let informer = SharedIndexInformer::<ConfigMap>::builder(client)
                .options(options)
                .build();
            let running = informer.start()?;
            informer.wait_for_sync().await?;
            (informer.store().len(), Box::new((informer, running)))
        }
        "ours-metadata" => {
            let informer = SharedIndexInformer::<PartialObjectMeta<ConfigMap>>::builder(client)
                .options(InformerOptions::default().strip_managed_fields())
                .build();
            let running = informer.start()?;
            informer.wait_for_sync().await?;
            (informer.store().len(), Box::new((informer, running)))
        }
        "kube-rs" => {
            let (reader, writer) = kube::runtime::reflector::store::<ConfigMap>();
            let stream = kube::runtime::reflector(
                writer,
                kube::runtime::watcher(api, kube::runtime::watcher::Config::default()),
            );
            let task = tokio::spawn(stream.for_each(|_| async {}));
            reader.wait_until_ready().await?;
            (reader.state().len(), Box::new((reader, task)))
        }
        other => return Err(format!("unknown mode {other:?}").into()),
    };
    // Let in-flight work (the first watch, handler tasks) settle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (heap1, rss1) = (live_heap(), rss());
    let per = |d: i64| d / count.max(1) as i64;
    println!("{mode} {count} {} {}", per(heap1 - heap0), per(rss1 - rss0));
    drop(keep);
    Ok(())
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    match args.as_slice() {
        [mode, n, kc] if mode == "serve" => rt.block_on(serve(n.parse()?, kc)),
        [mode, kc] => rt.block_on(measure(mode, kc)),
        _ => Err("usage: informer_memory serve N KUBECONFIG | ours|ours-keep-managed-fields|ours-metadata|kube-rs KUBECONFIG".into()),
    }
}
