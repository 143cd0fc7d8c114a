//! Watches through kube's `watcher`, default and streaming lists, plus raw watch semantics.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::core::ObjectMeta;
use kube::runtime::watcher::{self, Event};
use ocm_testkit::FakeCluster;

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

async fn run_watcher(config: watcher::Config) {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &cm("before"))
        .await
        .unwrap();
    let mut stream = watcher::watcher(api.clone(), config).boxed();
    let mut initial = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
            .await
            .expect("watcher stalled")
            .unwrap()
            .unwrap();
        match ev {
            Event::Init => {}
            Event::InitApply(o) => initial.push(o.metadata.name.unwrap()),
            Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(initial, vec!["before".to_string()]);
    api.create(&PostParams::default(), &cm("after"))
        .await
        .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("watcher stalled")
        .unwrap()
        .unwrap();
    match ev {
        Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some("after")),
        other => panic!("unexpected {other:?}"),
    }
    api.delete("after", &Default::default()).await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("watcher stalled")
        .unwrap()
        .unwrap();
    assert!(matches!(ev, Event::Delete(o) if o.metadata.name.as_deref() == Some("after")));
}

#[tokio::test]
async fn kube_watcher_list_then_watch() {
    run_watcher(watcher::Config::default()).await;
}

#[tokio::test]
async fn kube_watcher_streaming_lists() {
    run_watcher(watcher::Config::default().streaming_lists()).await;
}

#[tokio::test]
async fn watch_from_resource_version_selectors_and_gone() {
    let cluster = FakeCluster::builder().watch_history(5).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let first = api.create(&PostParams::default(), &cm("a")).await.unwrap();
    let rv = first.metadata.resource_version.unwrap();
    api.create(&PostParams::default(), &cm("b")).await.unwrap();

    // Replay strictly after `rv`: only `b`.
    let mut s = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match s.try_next().await.unwrap().unwrap() {
        WatchEvent::Added(o) => assert_eq!(o.metadata.name.as_deref(), Some("b")),
        other => panic!("unexpected {other:?}"),
    }

    // A label selector turns "stops matching" into DELETED.
    let mut labeled = cm("c");
    labeled.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
    let c = api.create(&PostParams::default(), &labeled).await.unwrap();
    let mut sel = api
        .watch(
            &WatchParams::default().labels("app=x"),
            &c.metadata.resource_version.unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let p = serde_json::json!({"metadata": {"labels": {"app": "y"}}});
    api.patch("c", &Default::default(), &kube::api::Patch::Merge(&p))
        .await
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), sel.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    {
        WatchEvent::Deleted(o) => assert_eq!(o.metadata.name.as_deref(), Some("c")),
        other => panic!("unexpected {other:?}"),
    }

    // Push `rv` out of the retained history: 410 Gone as an ERROR event.
    for i in 0..10 {
        api.create(&PostParams::default(), &cm(&format!("z{i}")))
            .await
            .unwrap();
    }
    let mut old = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match old.try_next().await.unwrap().unwrap() {
        WatchEvent::Error(e) => assert_eq!(e.code, 410),
        other => panic!("unexpected {other:?}"),
    }

    // timeoutSeconds ends the stream.
    let list = api.list(&ListParams::default()).await.unwrap();
    let mut timed = api
        .watch(
            &WatchParams::default().timeout(1),
            &list.metadata.resource_version.unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let end = tokio::time::timeout(Duration::from_secs(5), timed.try_next())
        .await
        .unwrap();
    assert!(end.unwrap().is_none());
}

#[tokio::test]
async fn streaming_list_ends_with_initial_events_bookmark() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &cm("a")).await.unwrap();
    let wp = WatchParams::streaming_lists();
    let mut s = api.watch(&wp, "0").await.unwrap().boxed();
    assert!(matches!(
        s.try_next().await.unwrap().unwrap(),
        WatchEvent::Added(_)
    ));
    match s.try_next().await.unwrap().unwrap() {
        WatchEvent::Bookmark(b) => {
            assert_eq!(
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn dropped_watch_connections_end_the_stream_and_watchers_recover() {
    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams, WatchEvent, WatchParams};
    use kube::runtime::{WatchStreamExt, watcher};
    use ocm_testkit::{FakeCluster, FaultRule};

    let cluster = FakeCluster::new();
    cluster.inject(FaultRule::drop_watch_after(1).resource("configmaps"));
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let cm = |name: &str| -> ConfigMap {
        serde_json::from_value(
            serde_json::json!({"metadata": {"name": name, "namespace": "default"}}),
        )
        .unwrap()
    };
    api.create(&PostParams::default(), &cm("a")).await.unwrap();
    api.create(&PostParams::default(), &cm("b")).await.unwrap();

    // A raw watch from the beginning gets one event, then the connection closes.
    let events: Vec<_> = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .try_collect::<Vec<WatchEvent<ConfigMap>>>()
        .await
        .unwrap();
    assert_eq!(events.len(), 1);

    // kube's watcher reconnects and still sees every object.
    let mut seen = std::collections::BTreeSet::new();
    let stream = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    let mut stream =
        std::pin::pin!(stream.take_until(tokio::time::sleep(std::time::Duration::from_secs(10))));
    api.create(&PostParams::default(), &cm("c")).await.unwrap();
    while let Some(Ok(obj)) = stream.next().await {
        seen.insert(obj.metadata.name.unwrap_or_default());
        if seen.len() == 3 {
            break;
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
}

#[tokio::test]
async fn watch_history_expires_by_age_on_the_cluster_clock() {
    let clock = std::sync::Arc::new(ocm_testkit::ManualClock::default());
    let cluster = FakeCluster::builder()
        .clock(clock.clone())
        .watch_history_age(Duration::from_secs(60))
        .build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let first = api.create(&PostParams::default(), &cm("a")).await.unwrap();
    let rv = first.metadata.resource_version.unwrap();
    api.create(&PostParams::default(), &cm("a2")).await.unwrap();
    clock.advance(Duration::from_secs(30));
    let second = api.create(&PostParams::default(), &cm("b")).await.unwrap();
    let rv2 = second.metadata.resource_version.unwrap();

    // Within the window: replayed.
    let mut s = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    for want in ["a2", "b"] {
        match s.try_next().await.unwrap().unwrap() {
            WatchEvent::Added(o) => assert_eq!(o.metadata.name.as_deref(), Some(want)),
            other => panic!("unexpected {other:?}"),
        }
    }

    // 45 s later the events of t=0 (75 s old) are gone, with no write in between,
    // so a watch that needs `a2` gets 410; `b` (45 s old) is still there.
    clock.advance(Duration::from_secs(45));
    let mut gone = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match gone.try_next().await.unwrap().unwrap() {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("unexpected {other:?}"),
    }
    let mut kept = api
        .watch(&WatchParams::default().timeout(1), &rv2)
        .await
        .unwrap()
        .boxed();
    let next = tokio::time::timeout(Duration::from_secs(5), kept.try_next())
        .await
        .unwrap()
        .unwrap();
    assert!(next.is_none(), "nothing after rv2, and no 410: {next:?}");
}

/// The next event of a kube-runtime watcher stream (errors included), within 5 s.
async fn next_event(
    stream: &mut (impl futures::Stream<Item = Result<Event<ConfigMap>, watcher::Error>> + Unpin),
) -> Result<Event<ConfigMap>, watcher::Error> {
    tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("watcher stalled")
        .expect("watcher ended")
}

/// Consumes a watcher's list (`Init` to `InitDone`) and returns the listed names.
async fn listed(
    stream: &mut (impl futures::Stream<Item = Result<Event<ConfigMap>, watcher::Error>> + Unpin),
) -> Vec<String> {
    let mut names = Vec::new();
    loop {
        match next_event(stream).await.unwrap() {
            Event::Init => names.clear(),
            Event::InitApply(o) => names.push(o.metadata.name.unwrap()),
            Event::InitDone => return names,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_watcher_that_fell_behind_its_resources_history_gets_410_and_lists_again() {
    let cluster = FakeCluster::builder().watch_history(3).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &cm("a")).await.unwrap();
    let mut stream = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    assert_eq!(listed(&mut stream).await, ["a"]);
    // The watcher's watch starts (from the listed version) only when it is polled again: four
    // configmap changes meanwhile push that version out of the three kept for configmaps.
    for name in ["b", "c", "d", "e"] {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    match next_event(&mut stream).await {
        Err(error) => assert!(
            error.to_string().contains("too old resource version"),
            "{error}"
        ),
        Ok(other) => panic!("expected 410 Gone, got {other:?}"),
    }
    // kube-runtime's watcher lists again and is complete.
    assert_eq!(listed(&mut stream).await, ["a", "b", "c", "d", "e"]);
    api.create(&PostParams::default(), &cm("f")).await.unwrap();
    match next_event(&mut stream).await.unwrap() {
        Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some("f")),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn the_watch_history_is_kept_per_resource() {
    use k8s_openapi::api::core::v1::Secret;
    let cluster = FakeCluster::builder().watch_history(3).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &cm("a")).await.unwrap();
    let mut stream = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    assert_eq!(listed(&mut stream).await, ["a"]);
    // Many changes of another resource do not push configmaps' history out.
    for i in 0..10 {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(format!("s{i}")),
                ..Default::default()
            },
            ..Default::default()
        };
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
    }
    api.create(&PostParams::default(), &cm("z")).await.unwrap();
    match next_event(&mut stream).await.unwrap() {
        Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some("z")),
        other => panic!("expected the watch to resume, got {other:?}"),
    }
}
