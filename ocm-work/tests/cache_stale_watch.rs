//! A cache whose API server lost its state: kube-apiserver keeps a watch resumed from a
//! resource version it has not issued open and silent (the testkit's `future_watches_wait`
//! emulates it), so without the safeguard the cache never sees the server's objects; with it
//! (`ObjectCache::spawn_with_check`), the cache notices that the server's version went back and
//! lists again.
//!
//! The "restore" is a client whose requests go to cluster A, then to cluster B (fresh, lower
//! versions); A closes the cache's watch after one event, as a restarting server would, and
//! the watch resumes against B.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::core::ApiResource;
use kube::runtime::watcher;
use ocm_testkit::{FakeCluster, FaultRule};
use ocm_work::cache::{CacheEntry, ObjectCache, RawObject};
use serde_json::json;
use tower::ServiceExt;

async fn create(cluster: &FakeCluster, name: &str) {
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default"}}))
            .unwrap();
    Api::<ConfigMap>::namespaced(cluster.client(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
}

/// A client talking to `a` until `to_b` is set, then to `b`.
fn switching_client(a: &FakeCluster, b: &FakeCluster, to_b: Arc<AtomicBool>) -> kube::Client {
    let (a, b) = (a.router(), b.router());
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let router = if to_b.load(Ordering::SeqCst) {
            b.clone()
        } else {
            a.clone()
        };
        async move { router.oneshot(req).await }
    });
    kube::Client::new(service, "default")
}

fn names(cache: &ObjectCache<RawObject>) -> Vec<String> {
    cache.list().iter().map(|o| o.name().to_string()).collect()
}

/// Lists A, switches to B, and returns the cache once its watch has resumed against B.
async fn restored(check: Option<Duration>) -> (FakeCluster, ObjectCache<RawObject>) {
    let a = FakeCluster::new();
    for i in 0..30 {
        create(&a, &format!("a{i:02}")).await;
    }
    let b = FakeCluster::builder().future_watches_wait(true).build();
    create(&b, "b-only").await;
    let to_b = Arc::new(AtomicBool::new(false));
    let client = switching_client(&a, &b, to_b.clone());
    let api =
        Api::<RawObject>::namespaced_with(client, "default", &ApiResource::erase::<ConfigMap>(&()));
    let cache = ObjectCache::spawn_with_check(
        api,
        watcher::Config::default(),
        |raw: RawObject| Ok(Some(raw)),
        check,
    );
    assert!(cache.wait_synced(Duration::from_secs(10)).await);
    assert_eq!(cache.len(), 30);
    // The watch that follows the list is open on A.
    let watching = || {
        a.journal()
            .count(|e| e.verb == "watch" && e.resource.as_deref() == Some("configmaps"))
            > 0
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !watching() {
        assert!(Instant::now() < deadline, "the watch on A");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A's watch closes after its next event; the watcher then resumes from that event's
    // version, against B.
    a.faults()
        .add(FaultRule::drop_watch_after(1).resource("configmaps"));
    to_b.store(true, Ordering::SeqCst);
    create(&a, "a-last").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !names(&cache).contains(&"a-last".to_string()) {
        assert!(Instant::now() < deadline, "A's last event");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (b, cache)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_check_a_resumed_watch_on_a_restored_server_stays_silent() {
    let (b, cache) = restored(None).await;
    create(&b, "b-later").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The watch waits for B to reach A's version: the cache still holds A's objects.
    let names = names(&cache);
    assert_eq!(names.len(), 31, "{names:?}");
    assert!(!names.contains(&"b-only".to_string()));
    assert!(!names.contains(&"b-later".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_notices_the_server_went_back_and_lists_again() {
    let (b, cache) = restored(Some(Duration::from_millis(500))).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(&cache) != ["b-only"] {
        assert!(
            Instant::now() < deadline,
            "the cache lists B again: {:?}",
            names(&cache)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And watches B from then on.
    create(&b, "b-later").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(&cache) != ["b-later", "b-only"] {
        assert!(Instant::now() < deadline, "{:?}", names(&cache));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A watch that fails has the server checked as soon as it answers, not at the next period
/// (an hour here). The server behind the link is replaced by a restored one: the cut resets
/// the open watch, the watch resumes against the restored server, which keeps it open and
/// silent, and the cache lists that server within seconds anyway. It counts as not synced
/// until that list completes, and the server's answers count as contact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_watch_has_the_server_checked_at_once() {
    let a = FakeCluster::new();
    for i in 0..30 {
        create(&a, &format!("a{i:02}")).await;
    }
    let b = FakeCluster::builder().future_watches_wait(true).build();
    create(&b, "b-only").await;
    let link = crate::support::link::Link::new(&a);
    let api = Api::<RawObject>::namespaced_with(
        link.client(),
        "default",
        &ApiResource::erase::<ConfigMap>(&()),
    );
    let cache = ObjectCache::spawn_with_check(
        api,
        watcher::Config::default(),
        |raw: RawObject| Ok(Some(raw)),
        Some(Duration::from_secs(3600)),
    );
    assert!(cache.wait_synced(Duration::from_secs(10)).await);
    let listed = cache.last_heard().expect("the list is contact");
    assert_eq!(cache.len(), 30);
    // The watch that follows the list is open on A (the cut resets it).
    let deadline = Instant::now() + Duration::from_secs(10);
    while a
        .journal()
        .count(|e| e.verb == "watch" && e.resource.as_deref() == Some("configmaps"))
        == 0
    {
        assert!(Instant::now() < deadline, "the watch on A");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    link.up(&b);
    let deadline = Instant::now() + Duration::from_secs(10);
    while names(&cache) != ["b-only"] || !cache.is_synced() {
        assert!(
            Instant::now() < deadline,
            "the cache lists B again: {:?}",
            names(&cache)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cache.last_heard().is_some_and(|t| t > listed));
}
