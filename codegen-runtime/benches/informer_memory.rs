//! Informer memory per cached object, for `scripts/bench-informer-memory.sh` (which runs this
//! beside client-go's informer and kube-rs's reflector and prints the table).
//!
//! Modes (one process each, so each heap is its own):
//!
//! * `serve configmaps N KUBECONFIG`: the in-memory API server on loopback, seeded with N ConfigMaps of
//!   1 KiB data (configuration text, different in each: see `common::config_text`), each created by
//!   server-side apply (so each has one managedFields entry); writes KUBECONFIG and serves until
//!   killed.
//! * `serve pods N KUBECONFIG`: the same with N Pods as a ReplicaSet makes them, applied by
//!   three field managers (controller, scheduler, kubelet), so three managedFields entries each.
//! * `ours KIND KUBECONFIG`, `ours-keep-managed-fields KIND KUBECONFIG`: a `SharedIndexInformer`
//!   of KIND (`configmaps` or `pods`) as a Manager makes it (managedFields dropped), or keeping
//!   managedFields, with the default options (objects kept compact: compressed JSON text,
//!   decoded on read); `ours-decoded …` and `ours-decoded-keep-managed-fields …` the same with
//!   `InformerOptions::compact(false)` (objects kept decoded).
//! * `ours-metadata KIND KUBECONFIG`: the metadata-only informer (`PartialObjectMeta<K>`).
//! * `kube-rs KIND KUBECONFIG`: kube-rs's `reflector` over its `watcher`.
//! * `breakdown KIND KUBECONFIG`: where one object's bytes go (decoded parts, store overhead)
//!   and what reads cost, decoded and compact.
//!
//! Each measuring mode prints `<mode> <objects> <heap bytes per object> <rss bytes per
//! object>`: the growth of live heap bytes (counted by the global allocator) and of VmRSS from
//! before the informer starts to after its cache has synced.

mod common;

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube_codegen_runtime::{InformerOptions, SharedIndexInformer};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Live heap bytes. `stats_alloc` already adds a realloc's growth to `bytes_allocated` (and its
/// shrinking to `bytes_deallocated`); `bytes_reallocated` is the same change again, so adding it
/// would count every buffer grown by realloc during a sync (a list page's text as it arrives)
/// as live forever, even after it is freed.
fn live_heap() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
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

/// A Pod as a Deployment's ReplicaSet makes it (or, `stateful`, as a StatefulSet does: its
/// name and index among its labels, so each Pod has a label set of its own), applied by three
/// field managers as on a real cluster: the controller (spec), the scheduler (the
/// `PodScheduled` condition) and the kubelet (the rest of the status), so each Pod carries
/// three managedFields entries.
async fn seed_pod(api: &Api<Pod>, i: usize, stateful: bool) -> Result<(), BoxError> {
    let (name, labels, owner) = if stateful {
        let name = format!("web-{i}");
        let labels = serde_json::json!({"app": "web", "tier": "frontend",
            "controller-revision-hash": "web-5d8f7c9b6",
            "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": i.to_string()});
        (name, labels, ("StatefulSet", "web"))
    } else {
        let labels =
            serde_json::json!({"app": "web", "pod-template-hash": "7d9c5b8f6", "tier": "frontend"});
        (
            format!("web-7d9c5b8f6-{i:06}"),
            labels,
            ("ReplicaSet", "web-7d9c5b8f6"),
        )
    };
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "default",
            "labels": labels,
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner.0,
                "name": owner.1, "uid": "8d2f1c1e-4b7a-4f8e-9a53-3c0f5a9e2b11",
                "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": common::pod_spec(i),
    });
    api.patch(
        &name,
        &PatchParams::apply("kube-controller-manager").force(),
        &Patch::Apply(pod),
    )
    .await?;
    let scheduled = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True",
                                   "lastTransitionTime": "2026-11-01T10:00:01Z"}]},
    });
    api.patch_status(
        &name,
        &PatchParams::apply("kube-scheduler").force(),
        &Patch::Apply(scheduled),
    )
    .await?;
    let running = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "status": {
            "phase": "Running", "hostIP": "10.0.0.17", "podIP": format!("10.244.{}.{}", i / 250 % 250, i % 250 + 2),
            "startTime": "2026-11-01T10:00:01Z", "qosClass": "Burstable",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-01T10:00:01Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example.com/team/web:1.24.3",
                "imageID": "registry.example.com/team/web@sha256:4f0c3b6a9d1e2f7a8b5c6d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
                "containerID": format!("containerd://{:064x}", i),
                "state": {"running": {"startedAt": "2026-11-01T10:00:03Z"}}}],
        },
    });
    api.patch_status(
        &name,
        &PatchParams::apply("kubelet").force(),
        &Patch::Apply(running),
    )
    .await?;
    Ok(())
}

async fn serve(kind: &str, n: usize, kubeconfig: &str) -> Result<(), BoxError> {
    let server = kube_codegen_runtime::fake::FakeApiServer::builder()
        .max_recorded_actions(0)
        .build()?;
    let local = server.client()?;
    match kind {
        "configmaps" => {
            let api: Api<ConfigMap> = Api::namespaced(local, "default");
            for i in 0..n {
                let data = common::config_text(i);
                let cm = serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i:06}"), "namespace": "default",
                                 "labels": {"app": "bench"}},
                    "data": {"payload": data},
                });
                api.patch(
                    &format!("cm-{i:06}"),
                    &PatchParams::apply("bench").force(),
                    &Patch::Apply(cm),
                )
                .await?;
            }
        }
        "pods" | "statefulset-pods" => {
            let api: Api<Pod> = Api::namespaced(local, "default");
            for i in 0..n {
                seed_pod(&api, i, kind == "statefulset-pods").await?;
            }
        }
        other => {
            return Err(
                format!("unknown kind {other:?} (configmaps, pods or statefulset-pods)").into(),
            );
        }
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

/// What a kind needs to be measured by every informer here.
trait Measured:
    kube_codegen_runtime::informer::CacheObject
    + kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl Measured for ConfigMap {}
impl Measured for Pod {}

async fn measure<K: Measured>(mode: &str, client: kube::Client) -> Result<(), BoxError>
where
    PartialObjectMeta<K>: kube_codegen_runtime::informer::InformerObject,
{
    // Warm the client (TLS, connection pool) before the baseline.
    let api: Api<K> = Api::namespaced(client.clone(), "default");
    let _ = api.get_opt("warm-up").await?;
    let (heap0, rss0) = (live_heap(), rss());
    let (count, keep): (usize, Box<dyn std::any::Any>) = match mode {
        "ours"
        | "ours-keep-managed-fields"
        | "ours-decoded"
        | "ours-decoded-keep-managed-fields" => {
            let options = if mode.ends_with("keep-managed-fields") {
                InformerOptions::default()
            } else {
                InformerOptions::default().strip_managed_fields()
            };
            let options = options.compact(!mode.starts_with("ours-decoded"));
            let informer = SharedIndexInformer::<K>::builder(client)
                .options(options)
                .build();
            let running = informer.start()?;
            informer.wait_for_sync().await?;
            (informer.store().len(), Box::new((informer, running)))
        }
        "ours-metadata" => {
            let informer = SharedIndexInformer::<PartialObjectMeta<K>>::builder(client)
                .options(InformerOptions::default().strip_managed_fields())
                .build();
            let running = informer.start()?;
            informer.wait_for_sync().await?;
            (informer.store().len(), Box::new((informer, running)))
        }
        "kube-rs" => {
            let (reader, writer) = kube::runtime::reflector::store::<K>();
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

/// Where one object's bytes go: decodes the first listed object `N` times and measures each
/// part by the live heap it frees when dropped, then the store's own overhead.
async fn breakdown<K: Measured>(plural: &str, client: kube::Client) -> Result<(), BoxError> {
    const N: usize = 2000;
    let req = http::Request::get(format!("/api/v1/namespaces/default/{plural}?limit=1"))
        .body(Vec::new())?;
    let text = client.request_text(req).await?;
    let list: serde_json::Value = serde_json::from_str(&text)?;
    let item = serde_json::to_string(&list["items"][0])?;
    let per = |d: i64| d as f64 / N as f64;
    let decode_all = || -> Result<Vec<K>, serde_json::Error> {
        (0..N).map(|_| serde_json::from_str::<K>(&item)).collect()
    };
    println!("{plural}: JSON of one object: {} B", item.len());
    println!(
        "size_of::<K>() = {} B (an Arc<K> adds 16)",
        std::mem::size_of::<K>()
    );
    println!(
        "size_of::<ObjectMeta>() = {} B",
        std::mem::size_of::<kube::api::ObjectMeta>()
    );
    let h0 = live_heap();
    let mut objs = decode_all()?;
    let h1 = live_heap();
    println!(
        "decoded object, heap beyond its inline size: {:.0} B",
        per(h1 - h0) - std::mem::size_of::<K>() as f64
    );
    let mf: Vec<_> = objs
        .iter_mut()
        .map(|o| o.meta_mut().managed_fields.take())
        .collect();
    let entries = mf.first().and_then(|m| m.as_ref()).map_or(0, |v| v.len());
    let spare = mf
        .first()
        .and_then(|m| m.as_ref())
        .map_or(0, |v| v.capacity() - v.len());
    let h2 = live_heap();
    drop(mf);
    let h3 = live_heap();
    println!(
        "  managedFields ({entries} entries, {spare} spare slots): {:.0} B",
        per(h2 - h3)
    );
    let fields: Vec<_> = objs
        .iter_mut()
        .map(|o| {
            let m = o.meta_mut();
            (
                m.labels.take(),
                m.annotations.take(),
                m.owner_references.take(),
            )
        })
        .collect();
    let h4 = live_heap();
    drop(fields);
    let h5 = live_heap();
    println!(
        "  labels + annotations + ownerReferences: {:.0} B",
        per(h4 - h5)
    );
    let strings: Vec<_> = objs
        .iter_mut()
        .map(|o| {
            let m = o.meta_mut();
            (
                m.uid.take(),
                m.resource_version.take(),
                m.generate_name.take(),
            )
        })
        .collect();
    let h6 = live_heap();
    drop(strings);
    let h7 = live_heap();
    println!(
        "  uid + resourceVersion + generateName: {:.0} B",
        per(h6 - h7)
    );
    drop(objs);
    let h8 = live_heap();
    println!(
        "  the rest (name, namespace, the kind's own fields): {:.0} B",
        per(h7 - h8) - std::mem::size_of::<K>() as f64
    );

    // The store around the objects: Arc headers, key strings, maps, the namespace index.
    let objs = decode_all()?;
    let objects_heap = live_heap() - h8;
    let store = kube_codegen_runtime::Store::from_objects(objs, [])?;
    let h9 = live_heap();
    let store_overhead = per(h9 - h8 - objects_heap);
    println!("store overhead per object (Arc, keys, maps, namespace index): {store_overhead:.0} B");
    drop(store);
    println!(
        "size_of::<Arc<dyn GenericObject>>() = {} B (one table entry)",
        std::mem::size_of::<std::sync::Arc<dyn kube_codegen_runtime::lister::GenericObject>>()
    );

    // What reads cost from a decoded and from a compact cache of the same objects.
    for compact in [false, true] {
        let informer = SharedIndexInformer::<K>::builder(client.clone())
            .options(
                InformerOptions::default()
                    .strip_managed_fields()
                    .compact(compact),
            )
            .build();
        let running = informer.start()?;
        informer.wait_for_sync().await?;
        let store = informer.store();
        let t = std::time::Instant::now();
        let all = store.list();
        let list_time = t.elapsed();
        let names: Vec<String> = all.iter().filter_map(|o| o.meta().name.clone()).collect();
        drop(all);
        let t = std::time::Instant::now();
        for n in &names {
            std::hint::black_box(store.get(Some("default"), n));
        }
        println!(
            "reads ({}): list of {} in {:?}, get {:?} per object",
            if compact { "compact" } else { "decoded" },
            names.len(),
            list_time,
            t.elapsed() / names.len().max(1) as u32
        );
        running.shutdown().await?;
    }
    Ok(())
}

async fn run(mode: &str, kind: &str, kubeconfig: &str) -> Result<(), BoxError> {
    let client = client(kubeconfig).await?;
    match (mode, kind) {
        ("breakdown", "configmaps") => breakdown::<ConfigMap>(kind, client).await,
        ("breakdown", "pods") => breakdown::<Pod>(kind, client).await,
        (_, "configmaps") => measure::<ConfigMap>(mode, client).await,
        (_, "pods") => measure::<Pod>(mode, client).await,
        _ => Err(format!("unknown kind {kind:?} (configmaps or pods)").into()),
    }
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
        [mode, kind, n, kc] if mode == "serve" => rt.block_on(serve(kind, n.parse()?, kc)),
        [mode, kind, kc] => rt.block_on(run(mode, kind, kc)),
        _ => Err("usage: informer_memory serve configmaps|pods|statefulset-pods N KUBECONFIG | ours|ours-keep-managed-fields|ours-metadata|kube-rs|breakdown configmaps|pods KUBECONFIG".into()),
    }
}
