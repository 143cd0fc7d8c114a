//! ocm-testkit benchmarks: in-process start, GET throughput, large lists, watch delivery.
//!
//! Run with `cargo bench -p ocm-benches --bench testkit`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use ocm_testkit::{FakeCluster, Gvr, ListOptions, WriteOptions};
use serde_json::json;
use tower::ServiceExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn cm(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "bench"}},
           "data": {"key": "value", "other": "another value"}})
}

fn start(c: &mut Criterion) {
    let rt = runtime();
    let _guard = rt.enter();
    c.bench_function("testkit/in_process_start (cluster + client)", |b| {
        b.iter(|| {
            let cluster = FakeCluster::new();
            black_box(cluster.client());
            cluster
        })
    });
}

fn get_throughput(c: &mut Criterion) {
    // One core, as a test drives a fake cluster: the client's buffer task and the caller share
    // a thread, so a request costs no cross-thread wake-up.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let cluster = FakeCluster::new();
    let gvr = Gvr::new("", "v1", "configmaps");
    cluster
        .store()
        .create(&gvr, "default", cm("x"), &WriteOptions::default())
        .expect("seed object");
    let api: Api<ConfigMap> = {
        let _g = rt.enter();
        Api::default_namespaced(cluster.client())
    };
    let mut group = c.benchmark_group("testkit/get");
    group.throughput(Throughput::Elements(1));
    group.bench_function("typed Api<ConfigMap>::get, in-process", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(api.get("x").await.expect("get"));
                }
                start.elapsed()
            })
        })
    });
    let loopback = {
        let _g = rt.enter();
        rt.block_on(cluster.serve_loopback()).expect("loopback")
    };
    let remote: Api<ConfigMap> = {
        let _g = rt.enter();
        Api::default_namespaced(loopback.client().expect("loopback client"))
    };
    group.bench_function("typed Api<ConfigMap>::get, loopback HTTP", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(remote.get("x").await.expect("get"));
                }
                start.elapsed()
            })
        })
    });
    let router = cluster.router();
    group.bench_function(
        "HTTP get through the Router (server side only, no decode)",
        |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let req = http::Request::get("/api/v1/namespaces/default/configmaps/x")
                            .body(axum::body::Body::empty())
                            .expect("request");
                        let resp = router.clone().oneshot(req).await.expect("response");
                        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
                            .await
                            .expect("body");
                        black_box(bytes);
                    }
                    start.elapsed()
                })
            })
        },
    );
    group.bench_function("store get (direct)", |b| {
        b.iter(|| black_box(cluster.store().get(&gvr, "default", "x").expect("get")))
    });
    group.finish();
}

fn list_10k(c: &mut Criterion) {
    let rt = runtime();
    let cluster = FakeCluster::new();
    let gvr = Gvr::new("", "v1", "configmaps");
    for i in 0..10_000 {
        cluster
            .store()
            .create(
                &gvr,
                "default",
                cm(&format!("cm-{i:05}")),
                &WriteOptions::default(),
            )
            .expect("seed object");
    }
    let api: Api<ConfigMap> = {
        let _g = rt.enter();
        Api::default_namespaced(cluster.client())
    };
    let mut group = c.benchmark_group("testkit/list_10k");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("typed Api<ConfigMap>::list, in-process", |b| {
        b.iter(|| {
            let list = rt.block_on(api.list(&ListParams::default())).expect("list");
            assert_eq!(list.items.len(), 10_000);
            list
        })
    });
    let router = cluster.router();
    group.bench_function(
        "HTTP list through the Router (server side only, no decode)",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    let req = http::Request::get("/api/v1/namespaces/default/configmaps")
                        .body(axum::body::Body::empty())
                        .expect("request");
                    let resp = router.clone().oneshot(req).await.expect("response");
                    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
                        .await
                        .expect("body");
                    black_box(bytes)
                })
            })
        },
    );
    group.bench_function("store list (direct)", |b| {
        b.iter(|| {
            black_box(
                cluster
                    .store()
                    .list(&gvr, Some("default"), &ListOptions::default())
                    .expect("list"),
            )
        })
    });
    group.finish();
}

fn watch_delivery(c: &mut Criterion) {
    let rt = runtime();
    let cluster = FakeCluster::new();
    let gvr = Gvr::new("", "v1", "configmaps");
    let api: Api<ConfigMap> = {
        let _g = rt.enter();
        Api::default_namespaced(cluster.client())
    };
    let mut stream = rt
        .block_on(api.watch(&WatchParams::default(), "0"))
        .expect("watch")
        .boxed();
    let mut n = 0u64;
    c.bench_function(
        "testkit/watch (store write -> typed event, in-process)",
        |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        n += 1;
                        let start = Instant::now();
                        cluster
                            .store()
                            .create(
                                &gvr,
                                "default",
                                cm(&format!("w-{n}")),
                                &WriteOptions::default(),
                            )
                            .expect("create");
                        loop {
                            match stream.try_next().await.expect("stream").expect("event") {
                                WatchEvent::Added(o) => {
                                    black_box(o);
                                    break;
                                }
                                WatchEvent::Bookmark(_) => {}
                                other => panic!("unexpected {other:?}"),
                            }
                        }
                        total += start.elapsed();
                    }
                    total
                })
            })
        },
    );
}

/// Watch delivery latency percentiles (criterion reports central tendency only).
fn watch_percentiles(_c: &mut Criterion) {
    let rt = runtime();
    let cluster = FakeCluster::new();
    let gvr = Gvr::new("", "v1", "configmaps");
    let api: Api<ConfigMap> = {
        let _g = rt.enter();
        Api::default_namespaced(cluster.client())
    };
    let mut samples = rt.block_on(async {
        let mut stream = api
            .watch(&WatchParams::default(), "0")
            .await
            .expect("watch")
            .boxed();
        let mut samples = Vec::with_capacity(10_000);
        for i in 0..10_000 {
            let start = Instant::now();
            cluster
                .store()
                .create(
                    &gvr,
                    "default",
                    cm(&format!("p-{i}")),
                    &WriteOptions::default(),
                )
                .expect("create");
            loop {
                match stream.try_next().await.expect("stream").expect("event") {
                    WatchEvent::Added(_) => break,
                    WatchEvent::Bookmark(_) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
            samples.push(start.elapsed());
        }
        samples
    });
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
    println!(
        "testkit/watch delivery over 10k events: p50 {:?}, p99 {:?}, max {:?}",
        pct(0.50),
        pct(0.99),
        samples[samples.len() - 1]
    );
}

fn loopback_start(c: &mut Criterion) {
    let rt = runtime();
    c.bench_function("testkit/loopback_start (cluster + bind + serve)", |b| {
        b.iter(|| {
            rt.block_on(async {
                let cluster = FakeCluster::new();
                let server = cluster.serve_loopback().await.expect("serve");
                black_box(server.url())
            })
        })
    });
}

use ocm_benches::resident_bytes;

fn hub_1000(c: &mut Criterion) {
    // Memory is not something criterion measures: report the resident-size growth of one
    // hub with 1,000 registered clusters (each its own fake cluster store) once.
    if let Some(before) = resident_bytes() {
        let hub = ocm_testkit::FakeHub::new(1000).expect("hub");
        let after = resident_bytes().unwrap_or(before);
        eprintln!(
            "testkit/hub/FakeHub::new(1000): resident memory grew by {:.1} MiB (target < 200 MB)",
            after.saturating_sub(before) as f64 / (1024.0 * 1024.0)
        );
        drop(hub);
    }
    let mut group = c.benchmark_group("testkit/hub");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function(
        "FakeHub::new(1000) (OCM CRDs + 1000 registered clusters)",
        |b| b.iter(|| black_box(ocm_testkit::FakeHub::new(1000).expect("hub"))),
    );
    group.finish();
}

criterion_group!(
    benches,
    hub_1000,
    start,
    loopback_start,
    get_throughput,
    list_10k,
    watch_delivery,
    watch_percentiles
);
criterion_main!(benches);
