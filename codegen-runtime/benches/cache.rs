//! Filling the informer's store from a list: kube-codegen's `Writer::replace` beside kube-rs's
//! `Writer::apply_watcher_event` (Init, InitApply × n, InitDone), the lock choice, and what
//! reads cost from a decoded store and from a compact one (`InformerOptions::compact`: each
//! read decodes the object's JSON).
//!
//! The writer is private to the runtime's informer, so the bench compiles the store module
//! itself, exactly as the runtime does.

mod common;

#[allow(dead_code, unused_imports)]
#[path = "../src/store.rs"]
mod store;

use std::hint::black_box;
use std::sync::Arc;

use ahash::AHashMap;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;

fn kube_fill(events: &[Event<ConfigMap>]) -> Writer<ConfigMap> {
    let mut w = Writer::<ConfigMap>::new(());
    for e in events {
        w.apply_watcher_event(e);
    }
    w
}

fn init_events(objs: &[ConfigMap]) -> Vec<Event<ConfigMap>> {
    let mut events = Vec::with_capacity(objs.len() + 2);
    events.push(Event::Init);
    events.extend(objs.iter().cloned().map(Event::InitApply));
    events.push(Event::InitDone);
    events
}

fn fill(c: &mut Criterion) {
    for n in [10_000usize, 100_000] {
        let objs = common::objects(n / 1_000, 1_000);
        let events = init_events(&objs);
        let mut g = c.benchmark_group(format!("cache fill {n}"));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(10);
        // Both sides pay one clone per object inside the measurement: kube's writer clones each
        // event's object into an Arc; ours clones the input Vec.
        g.bench_function(
            BenchmarkId::new("kube-codegen Writer::replace (clone input)", n),
            |b| {
                b.iter_batched(
                    || (),
                    |()| {
                        let cache = store::Writer::<ConfigMap>::new();
                        let diff = cache.replace(objs.clone(), "1");
                        (cache, diff)
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        // What the informer does: the list's objects are moved in, never cloned.
        g.bench_function(
            BenchmarkId::new("kube-codegen Writer::replace (owned input)", n),
            |b| {
                b.iter_batched(
                    || objs.clone(),
                    |v| {
                        let cache = store::Writer::<ConfigMap>::new();
                        let diff = cache.replace(v, "1");
                        (cache, diff)
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        g.bench_function(
            BenchmarkId::new("kube-rs Writer::apply_watcher_event", n),
            |b| b.iter_batched(|| (), |()| kube_fill(&events), BatchSize::PerIteration),
        );
        g.finish();
    }
}

fn relist(c: &mut Criterion) {
    let n = 10_000usize;
    let objs = common::objects(n / 1_000, 1_000);
    let events = init_events(&objs);
    let mut g = c.benchmark_group(format!("relist into a full cache {n}"));
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(20);
    g.bench_function("kube-codegen Writer::replace (diff for handlers)", |b| {
        b.iter_batched(
            || {
                let cache = store::Writer::<ConfigMap>::new();
                cache.replace(objs.clone(), "1");
                (cache, objs.clone())
            },
            |(cache, v)| {
                let diff = cache.replace(v, "2");
                (cache, diff)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("kube-rs Writer re-Init", |b| {
        b.iter_batched(
            || kube_fill(&events),
            |mut w| {
                for e in &events {
                    w.apply_watcher_event(e);
                }
                w
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn lock_choice(c: &mut Criterion) {
    let map: AHashMap<Arc<str>, Arc<u64>> = (0..100_000u64)
        .map(|i| (Arc::from(format!("ns/obj-{i}")), Arc::new(i)))
        .collect();
    let pl = parking_lot::RwLock::new(map.clone());
    let st = std::sync::RwLock::new(map);
    let mut g = c.benchmark_group("read lock + get, 100k map");
    g.bench_function("parking_lot::RwLock", |b| {
        b.iter(|| black_box(pl.read().get(black_box("ns/obj-4242")).cloned()))
    });
    g.bench_function("std::sync::RwLock", |b| {
        b.iter(|| {
            black_box(
                st.read()
                    .ok()
                    .and_then(|m| m.get(black_box("ns/obj-4242")).cloned()),
            )
        })
    });
    g.finish();
}

/// `Store::get` and `Store::list_namespace` over 10,000 ConfigMaps, kept decoded or compact.
fn reads(c: &mut Criterion) {
    let objs = common::objects(10, 1_000);
    let decoded = store::Writer::<ConfigMap>::new();
    decoded.replace(objs.clone(), "1");
    let codec = Arc::new(store::Codec::new(true));
    let reader = codec.clone();
    let expand: store::Expand = Arc::new(move |c: &store::Compact| {
        let text = reader.text(c)?;
        Ok(serde_json::from_str::<ConfigMap>(&text).map(|o| Arc::new(o) as store::Obj)?)
    });
    let compact = store::RawWriter::compact(expand);
    let incoming = objs
        .iter()
        .map(|o| {
            let text = serde_json::to_string(o).unwrap_or_else(|e| panic!("{e}"));
            match codec.compact(&text) {
                Some(c) => store::Incoming::compact(c, None),
                None => store::Incoming::full(Arc::new(o.clone())),
            }
        })
        .collect();
    compact.replace(incoming, "1".into());
    let stores = [
        ("decoded", decoded.store()),
        ("compact", compact.store::<ConfigMap>()),
    ];
    let mut g = c.benchmark_group("store reads, 10k ConfigMaps");
    for (label, s) in &stores {
        g.bench_function(format!("get ({label})"), |b| {
            b.iter(|| black_box(s.get(Some(black_box("ns-3")), black_box("obj-421"))))
        });
        g.bench_function(format!("list_namespace of 1,000 ({label})"), |b| {
            b.iter(|| black_box(s.list_namespace(black_box("ns-3"))))
        });
    }
    g.finish();
}

criterion_group!(benches, fill, relist, lock_choice, reads);
criterion_main!(benches);
