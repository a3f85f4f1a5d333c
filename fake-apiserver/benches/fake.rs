//! The fake API server: create, get, update and list per second over 10,000 objects, and one
//! watch fanned out to 10 watchers (events per second).
//!
//! Each figure through a `kube::Client` (HTTP semantics, JSON both ways) is reported beside the
//! same operation on the store through the test handle (`FakeHandle::add_value`, `get_value`,
//! `list_values`), which shows the cost of the request/response path.
//!
//! `cargo bench -p kube-codegen-runtime --features fake --bench fake`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube_fake_apiserver::{FakeApiServer, FakeHandle};
use serde_json::{Value, json};

const OBJECTS: usize = 10_000;
const WATCHERS: usize = 10;
const WATCH_EVENTS: usize = 1_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn cm_value(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "bench", "labels": {"app": "bench"}},
           "data": {"key": "value", "other": "0123456789abcdef"}})
}

/// A config map without a namespace (the request's namespace applies).
fn cm(name: &str) -> ConfigMap {
    let mut v = cm_value(name);
    v["metadata"].as_object_mut().map(|m| m.remove("namespace"));
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

fn cm_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps")
}

/// A server with `OBJECTS` config maps in namespace `bench`.
fn seeded(rt: &tokio::runtime::Runtime) -> (FakeApiServer, kube::Client, FakeHandle) {
    let _guard = rt.enter();
    let server = FakeApiServer::builder()
        .history_capacity(OBJECTS * 4)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let handle = server.handle();
    for i in 0..OBJECTS {
        handle
            .add_value(cm_value(&format!("cm-{i:05}")))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    handle
        .add_value(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench-new"}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
    (server, client, handle)
}

fn crud(c: &mut Criterion) {
    let rt = runtime();
    let (_server, client, handle) = seeded(&rt);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "bench");
    // Creates go to their own namespace, so that `bench` keeps exactly `OBJECTS` objects.
    let fresh: Api<ConfigMap> = Api::namespaced(client, "bench-new");
    let counter = Arc::new(AtomicU64::new(0));
    let mut g = c.benchmark_group("fake/10k");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));

    g.bench_function("create/client", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    fresh
                        .create(&PostParams::default(), &cm(&format!("new-{n}")))
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                }
                start.elapsed()
            })
        })
    });
    g.bench_function("create/store", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let mut v = cm_value(&format!("new-{n}"));
                v["metadata"]["namespace"] = json!("bench-new");
                handle.add_value(v).unwrap_or_else(|e| panic!("{e}"));
            }
            start.elapsed()
        })
    });
    g.bench_function("get/client", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let name = format!("cm-{:05}", i as usize % OBJECTS);
                    api.get(&name).await.unwrap_or_else(|e| panic!("{e}"));
                }
                start.elapsed()
            })
        })
    });
    let ar = cm_resource();
    g.bench_function("get/store", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters {
                let name = format!("cm-{:05}", i as usize % OBJECTS);
                std::hint::black_box(handle.get_value(&ar, "bench", &name));
            }
            start.elapsed()
        })
    });
    g.bench_function("get/store-typed", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters {
                let name = format!("cm-{:05}", i as usize % OBJECTS);
                std::hint::black_box(
                    handle
                        .get::<ConfigMap>("bench", &name)
                        .unwrap_or_else(|e| panic!("{e}")),
                );
            }
            start.elapsed()
        })
    });
    g.bench_function("update/client-put", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let name = format!("cm-{:05}", i as usize % OBJECTS);
                    let mut current = api.get(&name).await.unwrap_or_else(|e| panic!("{e}"));
                    if let Some(d) = current.data.as_mut() {
                        d.insert("counter".into(), i.to_string());
                    }
                    // Only the PUT is timed.
                    let start = Instant::now();
                    api.replace(&name, &PostParams::default(), &current)
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                    total += start.elapsed();
                }
                total
            })
        })
    });
    g.bench_function("update/client-merge-patch", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let name = format!("cm-{:05}", i as usize % OBJECTS);
                    api.patch(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"data": {"counter": format!("p{i}")}})),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                }
                start.elapsed()
            })
        })
    });
    g.finish();

    // Lists of the whole collection: one element is one listed object.
    let mut g = c.benchmark_group("fake/10k-list");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    let size = handle.list_values(&ar, Some("bench")).len();
    g.throughput(Throughput::Elements(size as u64));
    g.bench_function("list/client", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let l = api
                        .list(&ListParams::default())
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                    std::hint::black_box(l.items.len());
                }
                start.elapsed()
            })
        })
    });
    g.bench_function("list/client-paged-500", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let mut token: Option<String> = None;
                    loop {
                        let mut lp = ListParams::default().limit(500);
                        if let Some(t) = &token {
                            lp = lp.continue_token(t);
                        }
                        let page = api.list(&lp).await.unwrap_or_else(|e| panic!("{e}"));
                        token = page.metadata.continue_.filter(|c| !c.is_empty());
                        if token.is_none() {
                            break;
                        }
                    }
                }
                start.elapsed()
            })
        })
    });
    g.bench_function("list/store", |b| {
        b.iter(|| std::hint::black_box(handle.list_values(&ar, Some("bench")).len()))
    });
    g.finish();
}

fn watch_fanout(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("fake/watch");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements((WATCH_EVENTS * WATCHERS) as u64));
    let counter = Arc::new(AtomicU64::new(0));
    g.bench_function("1-writer-10-watchers", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let server = FakeApiServer::builder()
                        .history_capacity(WATCH_EVENTS * 2)
                        .build()
                        .unwrap_or_else(|e| panic!("{e}"));
                    let client = server.client().unwrap_or_else(|e| panic!("{e}"));
                    let api: Api<ConfigMap> = Api::namespaced(client, "default");
                    let rv = server.handle().resource_version().to_string();
                    let mut watchers = Vec::new();
                    for _ in 0..WATCHERS {
                        let stream = api
                            .watch(&WatchParams::default().timeout(60), &rv)
                            .await
                            .unwrap_or_else(|e| panic!("{e}"));
                        watchers.push(tokio::spawn(async move {
                            let mut stream = Box::pin(stream);
                            let mut seen = 0;
                            while seen < WATCH_EVENTS {
                                match stream.next().await {
                                    Some(Ok(WatchEvent::Added(_))) => seen += 1,
                                    Some(Ok(_)) => {}
                                    Some(Err(e)) => panic!("{e}"),
                                    None => break,
                                }
                            }
                            seen
                        }));
                    }
                    let handle = server.handle();
                    let start = Instant::now();
                    for _ in 0..WATCH_EVENTS {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        let mut v = cm_value(&format!("w-{n}"));
                        v["metadata"]["namespace"] = json!("default");
                        handle.add_value(v).unwrap_or_else(|e| panic!("{e}"));
                    }
                    for w in watchers {
                        let seen = w.await.unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(seen, WATCH_EVENTS);
                    }
                    total += start.elapsed();
                }
                total
            })
        })
    });
    g.finish();
}

criterion_group!(benches, crud, watch_fanout);
criterion_main!(benches);
