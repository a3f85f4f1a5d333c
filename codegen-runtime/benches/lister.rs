//! Lister reads: kube-codegen's namespace-indexed `Lister` beside kube-rs's reflector `Store`,
//! both holding the same 100 namespaces × 1,000 ConfigMaps.

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::{ObjectRef, store::Writer};
use kube::runtime::watcher::Event;
use kube_codegen_runtime::labels::Selector;
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::store::Store;

const NAMESPACES: usize = 100;
const PER_NAMESPACE: usize = 1_000;

fn fixtures() -> (
    Lister<ConfigMap>,
    kube::runtime::reflector::Store<ConfigMap>,
) {
    let objs = common::objects(NAMESPACES, PER_NAMESPACE);
    let cache = Store::from_objects(objs.clone(), []).unwrap_or_else(|e| panic!("{e}"));
    let mut writer = Writer::<ConfigMap>::new(());
    writer.apply_watcher_event(&Event::Init);
    for o in objs {
        writer.apply_watcher_event(&Event::InitApply(o));
    }
    writer.apply_watcher_event(&Event::InitDone);
    let store = writer.as_reader();
    assert_eq!(store.len(), cache.len());
    (Lister::for_resource(cache), store)
}

fn lister_get(c: &mut Criterion) {
    let (lister, store) = fixtures();
    let mut g = c.benchmark_group("lister get (hit), 100k objects");
    // `.ok()`: black-boxing the whole `Result<Arc<K>, kube::Error>` (a large value) would
    // measure a copy that code consuming the result in place never makes.
    g.bench_function("kube-codegen Lister::namespaced(ns).get(name)", |b| {
        b.iter(|| {
            black_box(
                lister
                    .namespaced(black_box("ns-42"))
                    .get(black_box("obj-512"))
                    .ok(),
            )
        })
    });
    g.bench_function("kube-codegen Store::get_by_key(\"ns/name\")", |b| {
        b.iter(|| black_box(lister.store().get_by_key(black_box("ns-42/obj-512"))))
    });
    g.bench_function("kube-rs Store::get(ObjectRef::new(name).within(ns))", |b| {
        b.iter(|| {
            let key = ObjectRef::<ConfigMap>::new(black_box("obj-512")).within(black_box("ns-42"));
            black_box(store.get(&key))
        })
    });
    let key = ObjectRef::<ConfigMap>::new("obj-512").within("ns-42");
    g.bench_function("kube-rs Store::get(prebuilt ObjectRef)", |b| {
        b.iter(|| black_box(store.get(black_box(&key))))
    });
    g.finish();
}

fn namespace_list(c: &mut Criterion) {
    let (lister, store) = fixtures();
    let everything = Selector::everything();
    let selector = Selector::parse("app=app-3,tier=back").unwrap_or_default();
    let kube_selector: kube::core::Selector =
        kube::core::Selector::from_iter([("app", "app-3"), ("tier", "back")]);
    let in_ns = |o: &ConfigMap| o.metadata.namespace.as_deref() == Some("ns-42");

    let mut g = c.benchmark_group("namespace list, 100 ns x 1,000 objects");
    g.throughput(Throughput::Elements(PER_NAMESPACE as u64));
    g.bench_function(
        "kube-codegen Lister::namespaced(ns).list(everything)",
        |b| b.iter(|| black_box(lister.namespaced(black_box("ns-42")).list(&everything))),
    );
    g.bench_function("kube-rs Store::state() filtered by namespace", |b| {
        b.iter(|| {
            black_box(
                store
                    .state()
                    .into_iter()
                    .filter(|o| in_ns(o))
                    .collect::<Vec<_>>(),
            )
        })
    });
    g.bench_function("kube-rs Store::state_filter(namespace)", |b| {
        b.iter(|| black_box(store.state_filter(|o| in_ns(o))))
    });
    g.bench_function(
        "kube-codegen Lister::namespaced(ns).list(app=app-3,tier=back)",
        |b| b.iter(|| black_box(lister.namespaced(black_box("ns-42")).list(&selector))),
    );
    g.bench_function("kube-rs Store::state_filter(namespace && selector)", |b| {
        use kube::core::SelectorExt;
        b.iter(|| {
            black_box(store.state_filter(|o| {
                in_ns(o)
                    && kube_selector
                        .matches(o.metadata.labels.as_ref().unwrap_or(&Default::default()))
            }))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("list all namespaces with selector, 100k objects");
    g.sample_size(20);
    g.bench_function("kube-codegen Lister::list(app=app-3,tier=back)", |b| {
        b.iter(|| black_box(lister.list(&selector)))
    });
    g.bench_function("kube-rs Store::state_filter_selector", |b| {
        b.iter(|| black_box(store.state_filter_selector(&kube_selector)))
    });
    g.finish();
}

criterion_group!(benches, lister_get, namespace_list);
criterion_main!(benches);
