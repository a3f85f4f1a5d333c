//! Filling the informer's store from a list: kube-codegen's `Writer::replace` beside kube-rs's
//! `Writer::apply_watcher_event` (Init, InitApply × n, InitDone), the lock choice, and what
//! reads cost from a decoded store and from a compact one (`InformerOptions::compact`: each
//! object read decodes its JSON; a label-selector list decodes only the objects that match).
//!
//! The writer is private to the runtime's informer, so the bench compiles the store module
//! itself, exactly as the runtime does.

mod common;

// What `src/store.rs` reaches as `crate::labels`.
use kube_codegen_runtime::labels;

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

/// How the informer reads a compact entry back (`informer/mod.rs`): decompress, decode the
/// text into `K`, then the metadata transform that drops managedFields.
fn expand_for<K>(codec: Arc<store::Codec>) -> store::Expand
where
    K: kube::Resource + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    Arc::new(move |c: &store::Compact| {
        codec.read(c, |text| {
            let mut obj: K = serde_json::from_str(text)?;
            let _resource_version = obj.meta().resource_version.clone();
            obj.meta_mut().managed_fields = None;
            Ok(Arc::new(obj) as store::Obj)
        })
    })
}

fn shard_index<K: kube::Resource>(o: &K) -> Vec<String> {
    o.meta()
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| *k == "shard")
        .map(|(_, v)| v.clone())
        .collect()
}

/// A decoded and a compact store of the same 10,000 objects (`json(i)`), each with an index on
/// the `shard` label, as the informer fills them (managedFields dropped).
fn stores<K>(json: fn(usize) -> String) -> [(&'static str, store::Store<K>); 2]
where
    K: kube::Resource + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let texts: Vec<String> = (0..10_000).map(json).collect();
    let index = || {
        let f: store::IndexFunc<K> = Arc::new(shard_index::<K>);
        vec![("shard".to_string(), store::raw_index_func(f))]
    };
    let decoded = store::RawWriter::new();
    decoded
        .add_indexers(index())
        .unwrap_or_else(|e| panic!("{e}"));
    let objs = texts
        .iter()
        .map(|t| {
            let mut o: K = serde_json::from_str(t).unwrap_or_else(|e| panic!("{e}"));
            o.meta_mut().managed_fields = None;
            store::Incoming::full(Arc::new(o))
        })
        .collect();
    decoded.replace(objs, "1".into());
    let codec = Arc::new(store::Codec::new(true));
    let compact = store::RawWriter::compact(expand_for::<K>(codec.clone()));
    compact
        .add_indexers(index())
        .unwrap_or_else(|e| panic!("{e}"));
    let incoming = texts
        .iter()
        .map(|t| {
            // The informer has each object decoded when it makes it compact.
            let o: K = serde_json::from_str(t).unwrap_or_else(|e| panic!("{e}"));
            let c = codec
                .compact(t, o.meta().labels.as_ref())
                .unwrap_or_else(|| panic!("not compact: {t}"));
            store::Incoming::compact(c, None)
        })
        .collect();
    compact.replace(incoming, "1".into());
    [("decoded", decoded.store()), ("compact", compact.store())]
}

/// Store reads over 10,000 objects kept decoded or compact: `get`, a list of all, label-selector
/// lists matching 1% and 50% (as `Lister::list` makes them), and an index list of 1%.
fn reads_of<K>(c: &mut Criterion, kind: &str, json: fn(usize) -> String, name: &str)
where
    K: kube::Resource + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let one_percent: kube_codegen_runtime::Selector =
        "shard=s-7".parse().unwrap_or_else(|e| panic!("{e}"));
    let half: kube_codegen_runtime::Selector = "half=a".parse().unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group(format!("store reads, 10k {kind}"));
    g.sample_size(10);
    for (label, s) in &stores::<K>(json) {
        assert_eq!(s.len(), 10_000);
        g.bench_function(format!("get ({label})"), |b| {
            b.iter(|| black_box(s.get(Some(black_box("default")), black_box(name))))
        });
        g.bench_function(format!("list all ({label})"), |b| {
            b.iter(|| black_box(s.list()))
        });
        for (what, selector) in [("1%", &one_percent), ("50%", &half)] {
            g.bench_function(format!("selector list {what} ({label})"), |b| {
                b.iter(|| black_box(s.list_selected(None, selector)))
            });
        }
        g.bench_function(format!("index list 1% ({label})"), |b| {
            b.iter(|| black_box(s.by_index("shard", black_box("s-7"))))
        });
    }
    g.finish();
}

fn reads(c: &mut Criterion) {
    reads_of::<ConfigMap>(c, "ConfigMaps", common::config_map_json, "settings-000421");
    reads_of::<k8s_openapi::api::core::v1::Pod>(
        c,
        "Pods",
        common::pod_json,
        "web-7d9c5b8f6-000421",
    );
}

criterion_group!(benches, fill, relist, lock_choice, reads);
criterion_main!(benches);
