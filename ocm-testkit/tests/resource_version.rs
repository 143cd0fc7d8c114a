//! Requests from a resourceVersion the server has never issued (a client of a server that lost
//! its state): what lists and watches answer.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, VersionMatch, WatchEvent, WatchParams};
use kube::core::ObjectMeta;
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

async fn cluster_with_objects(n: usize) -> (FakeCluster, Api<ConfigMap>, u64) {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    for i in 0..n {
        api.create(&PostParams::default(), &cm(&format!("cm{i}")))
            .await
            .unwrap();
    }
    let current = cluster.store().resource_version();
    (cluster, api, current)
}

/// The first message of a watch from `rv`.
async fn first_event(
    api: &Api<ConfigMap>,
    params: &WatchParams,
    rv: &str,
) -> WatchEvent<ConfigMap> {
    let mut stream = api.watch(params, rv).await.unwrap().boxed();
    tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("an answer at once")
        .unwrap()
        .expect("one event")
}

#[tokio::test]
async fn a_plain_watch_from_a_version_never_issued_is_gone() {
    let (_cluster, api, current) = cluster_with_objects(2).await;
    let future = (current + 1000).to_string();
    match first_event(&api, &WatchParams::default(), &future).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert_eq!(
                e.message,
                format!("Too large resource version: {future}, current: {current}")
            );
        }
        other => panic!("expected 410, got {other:?}"),
    }
    // The current version itself is fine: the watch waits for what follows it.
    let mut stream = api
        .watch(&WatchParams::default(), &current.to_string())
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &cm("next"))
        .await
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Added(o)))) => assert_eq!(o.metadata.name.as_deref(), Some("next")),
        other => panic!("expected the new object, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_with_initial_events_from_a_version_never_issued_times_out_as_kube_apiserver() {
    let (_cluster, api, current) = cluster_with_objects(1).await;
    let future = current + 5;
    match first_event(&api, &WatchParams::streaming_lists(), &future.to_string()).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 504);
            assert_eq!(e.reason, "Timeout");
            assert_eq!(
                e.message,
                format!("Timeout: Too large resource version: {future}, current: {current}")
            );
        }
        other => panic!("expected 504, got {other:?}"),
    }
}

#[tokio::test]
async fn a_list_from_a_version_never_issued_times_out_as_kube_apiserver() {
    let (cluster, _api, current) = cluster_with_objects(1).await;
    let future = current + 7;
    // Raw, to see the Retry-After header and the cause.
    let response = tower::ServiceExt::oneshot(
        cluster.router(),
        http::Request::get(format!(
            "/api/v1/namespaces/default/configmaps?resourceVersion={future}&resourceVersionMatch=NotOlderThan"
        ))
        .body(axum::body::Body::empty())
        .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 504);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(
        status["message"],
        format!("Timeout: Too large resource version: {future}, current: {current}")
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Too large resource version"
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);

    // Through kube: NotOlderThan, Exact and the legacy form all get it; versions up to the
    // current one are served.
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    for params in [
        ListParams::default().at(&future.to_string()),
        ListParams::default()
            .at(&future.to_string())
            .matching(VersionMatch::Exact),
        ListParams::default()
            .at(&future.to_string())
            .matching(VersionMatch::NotOlderThan),
    ] {
        match api.list(&params).await {
            Err(kube::Error::Api(s)) => assert_eq!(s.code, 504, "{params:?}"),
            other => panic!("expected 504 for {params:?}, got {other:?}"),
        }
    }
    for rv in ["0".to_string(), current.to_string()] {
        let list = api
            .list(
                &ListParams::default()
                    .at(&rv)
                    .matching(VersionMatch::NotOlderThan),
            )
            .await
            .unwrap();
        assert_eq!(list.items.len(), 1);
    }
    match api.list(&ListParams::default().at("abc")).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 400);
            assert_eq!(
                s.message,
                "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
            );
        }
        other => panic!("expected 400, got {other:?}"),
    }
}

/// A server restarted with lost state: a watch resumed from a version of the old server (as
/// informers resume after a dropped connection) is gone, so its client lists again.
#[tokio::test]
async fn a_watch_resumed_against_a_server_that_lost_its_state_is_gone() {
    let (old, _, _) = cluster_with_objects(30).await;
    let new = FakeCluster::new();
    let new_api: Api<ConfigMap> = Api::default_namespaced(new.client());
    new_api
        .create(&PostParams::default(), &cm("fresh"))
        .await
        .unwrap();
    assert!(new.store().resource_version() < old.store().resource_version());
    let old_api: Api<ConfigMap> = Api::default_namespaced(old.client());
    let listed = old_api.list(&ListParams::default()).await.unwrap();
    let old_version = listed.metadata.resource_version.unwrap();
    match first_event(&new_api, &WatchParams::default(), &old_version).await {
        WatchEvent::Error(e) => assert_eq!(e.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn with_future_watches_wait_a_plain_watch_from_a_future_version_is_silent_until_reached() {
    let cluster = FakeCluster::builder().future_watches_wait(true).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &cm("first"))
        .await
        .unwrap();
    let current = cluster.store().resource_version();
    // Two versions ahead: nothing arrives while the store catches up.
    let wanted = current + 2;
    let mut stream = api
        .watch(&WatchParams::default(), &wanted.to_string())
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &cm("reaches-one"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("reaches-two"))
        .await
        .unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(1500), stream.try_next())
            .await
            .is_err(),
        "silent up to the version asked for"
    );
    // What follows that version is sent.
    api.create(&PostParams::default(), &cm("after"))
        .await
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Added(o)))) => {
            assert_eq!(o.metadata.name.as_deref(), Some("after"))
        }
        other => panic!("expected the object after the version, got {other:?}"),
    }
    // A watch with initial events still gets kube-apiserver's 504 at once.
    let future = (cluster.store().resource_version() + 10).to_string();
    match first_event(&api, &WatchParams::streaming_lists(), &future).await {
        WatchEvent::Error(e) => assert_eq!(e.code, 504),
        other => panic!("expected 504, got {other:?}"),
    }
}
