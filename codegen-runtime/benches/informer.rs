//! Informer initial sync: kube-codegen's `SharedIndexInformer` beside kube-rs's
//! `watcher` + `reflector`, both listing the same pre-rendered pages (500 objects each, as both
//! request) from an in-process `tower::Service`, until the cache reports ready.

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use http::{Request, Response};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube_codegen_runtime::informer::SharedIndexInformer;

const PAGE: usize = 500;

/// Pages keyed by their offset, rendered once.
fn render_pages(objs: &[ConfigMap]) -> Arc<Vec<Bytes>> {
    let pages = objs
        .chunks(PAGE)
        .enumerate()
        .map(|(i, chunk)| {
            let end = (i + 1) * PAGE;
            let mut meta = serde_json::json!({ "resourceVersion": "100" });
            if end < objs.len() {
                meta["continue"] = serde_json::json!(end.to_string());
            }
            let body = serde_json::json!({ "apiVersion": "v1", "kind": "ConfigMapList", "metadata": meta, "items": chunk });
            Bytes::from(body.to_string())
        })
        .collect();
    Arc::new(pages)
}

fn client(pages: Arc<Vec<Bytes>>) -> kube::Client {
    let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
        let pages = pages.clone();
        async move {
            let query = req.uri().query().unwrap_or("");
            let param = |k: &str| {
                query
                    .split('&')
                    .find_map(|p| p.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
                    .map(String::from)
            };
            let body: UnsyncBoxBody<Bytes, Infallible> =
                if param("watch").as_deref() == Some("true") {
                    // A watch that stays open and quiet.
                    StreamBody::new(futures::stream::pending::<Result<Frame<Bytes>, Infallible>>())
                        .boxed_unsync()
                } else {
                    let offset: usize = param("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
                    let page = pages.get(offset / PAGE).cloned().unwrap_or_default();
                    Full::new(page).boxed_unsync()
                };
            Ok::<_, Infallible>(Response::new(body))
        }
    });
    kube::Client::new(svc, "default")
}

async fn ours(pages: Arc<Vec<Bytes>>) -> Duration {
    let informer = SharedIndexInformer::<ConfigMap>::new(client(pages));
    let start = Instant::now();
    let running = informer.start().unwrap_or_else(|e| panic!("{e}"));
    informer
        .wait_for_sync()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let elapsed = start.elapsed();
    let _ = running.shutdown().await;
    elapsed
}

async fn kube_reflector(pages: Arc<Vec<Bytes>>) -> Duration {
    let api = kube::Api::<ConfigMap>::all(client(pages));
    let (reader, writer) = reflector::store();
    let start = Instant::now();
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer);
    let task = tokio::spawn(stream.for_each(|_| futures::future::ready(())));
    reader
        .wait_until_ready()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let elapsed = start.elapsed();
    task.abort();
    elapsed
}

fn initial_sync(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    for n in [10_000usize, 100_000] {
        let pages = render_pages(&common::objects(n / 1_000, 1_000));
        let mut g = c.benchmark_group(format!("informer initial sync {n}"));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(10);
        g.bench_function(
            BenchmarkId::new("kube-codegen SharedIndexInformer", n),
            |b| b.iter_custom(|iters| (0..iters).map(|_| rt.block_on(ours(pages.clone()))).sum()),
        );
        g.bench_function(BenchmarkId::new("kube-rs watcher + reflector", n), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| rt.block_on(kube_reflector(pages.clone())))
                    .sum()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, initial_sync);
criterion_main!(benches);
