//! The health and metrics endpoints (`ocm_work::runtime::server`) of a work agent under
//! leader election, over real HTTP: `/healthz`, `/readyz` (not ready while the informers have
//! not listed, ready once they have, and ready as a standby), `/metrics` with the expected
//! series.

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use ocm_testkit::FaultRule;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::runtime::health::{Health, leader_ready, leader_ready_with};
use ocm_work::runtime::leader::{LeaderElectionConfig, LeaderElector, WORK_AGENT_LEASE};
use ocm_work::runtime::metrics::Metrics;
use ocm_work::runtime::server::EndpointServer;
use ocm_work::runtime::shutdown::Shutdown;
use serde_json::json;
use support::{CLUSTER, HUB_URL, all_applied, clusters, configmap, create_work, work_object};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request; the status code, the headers and the body.
async fn http(addr: SocketAddr, method: &str, path: &str, accept: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

async fn eventually_status(addr: SocketAddr, path: &str, want: u16) -> (u16, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _, body) = http(addr, "GET", path, "*/*").await;
        if status == want || tokio::time::Instant::now() > deadline {
            return (status, body);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The value of the sample `series` (name and labels exactly), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_metrics_answer_with_the_expected_series() {
    let (hub, spoke) = clusters().await;
    // The hub refuses lists for now: the agent's informers cannot list.
    hub.inject(FaultRule::new(503).verb("list").resource("manifestworks"));
    let metrics = Metrics::new();
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    )
    .with_metrics(metrics.agent());
    let elector = LeaderElector::new(
        spoke.client(),
        LeaderElectionConfig::new("default", WORK_AGENT_LEASE).durations(
            Duration::from_secs(2),
            Duration::from_millis(1500),
            Duration::from_millis(100),
        ),
    );
    metrics.leader(WORK_AGENT_LEASE, elector.state());
    let health = Health::new();
    let synced = agent.clone();
    health.readiness_check(
        "informers",
        leader_ready(
            Some(elector.state()),
            move || synced.caches_synced(),
            "the ManifestWork and AppliedManifestWork informers",
        ),
    );
    let server = EndpointServer::bind("127.0.0.1:0".parse().unwrap(), health, metrics.clone())
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let serving = tokio::spawn(server.run(shutdown.cancelled()));
    let election = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            elector
                .run(&shutdown, |leading| agent.run(leading.cancelled()))
                .await
        })
    };

    let (status, _, body) = http(addr, "GET", "/healthz", "*/*").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, body) = eventually_status(addr, "/readyz", 503).await;
    assert_eq!(
        status, 503,
        "not ready while leading without listed informers: {body}"
    );
    assert!(
        body.contains("[-]informers failed: the ManifestWork and AppliedManifestWork informers have not listed yet"),
        "{body}"
    );

    hub.faults().clear();
    let (status, body) = eventually_status(addr, "/readyz", 200).await;
    assert_eq!((status, body.as_str()), (200, "ok"), "ready once listed");

    let manifests: Vec<_> = (0..3).map(|i| configmap(&format!("m-{i}"), "v")).collect();
    create_work(
        &hub.client(),
        &work_object(
            "observed",
            json!({"workload": {"manifests": manifests},
                "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "m-0"},
                    "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "v", "path": ".data.k"}]}]}]}),
        ),
    )
    .await;
    assert!(
        support::eventually(Duration::from_secs(20), || async {
            all_applied(&hub, &["observed".to_string()])
        })
        .await
    );

    // A reconcile is counted when it returns, which is after its status write: wait until the
    // finalizer pass and the apply pass have both been counted.
    assert!(
        support::eventually(Duration::from_secs(20), || async {
            let (_, _, text) = http(addr, "GET", "/metrics", "text/plain").await;
            sample(
                &text,
                "ocm_reconcile_total{controller=\"manifestwork\",result=\"success\"}",
            )
            .is_some_and(|n| n >= 2.0)
        })
        .await
    );
    let (status, head, text) = http(addr, "GET", "/metrics", "text/plain").await;
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert_eq!(
        sample(
            &text,
            "leader_election_master_status{name=\"work-agent-lock\"}"
        ),
        Some(1.0)
    );
    // Every create the engine sent reached the managed cluster (its journal agrees).
    let creates = spoke
        .journal()
        .count(|e| e.verb == "create" && e.resource.as_deref() == Some("configmaps"));
    assert!(creates >= 3);
    assert_eq!(
        sample(&text, "ocm_work_apply_requests_total{verb=\"create\"}"),
        Some(creates as f64),
        "{text}"
    );
    assert!(
        sample(
            &text,
            "ocm_reconcile_total{controller=\"manifestwork\",result=\"success\"}"
        )
        .is_some_and(|n| n >= 2.0),
        "the finalizer pass and the apply pass: {text}"
    );
    assert!(sample(&text, "workqueue_adds_total{name=\"manifestwork\"}").is_some_and(|n| n >= 1.0));
    assert!(sample(&text, "workqueue_depth{name=\"manifestwork\"}").is_some());
    assert!(
        sample(
            &text,
            "workqueue_queue_duration_seconds_count{name=\"manifestwork\"}"
        )
        .is_some_and(|n| n >= 1.0)
    );
    assert!(
        sample(
            &text,
            "workqueue_work_duration_seconds_count{name=\"manifestwork\"}"
        )
        .is_some_and(|n| n >= 1.0)
    );
    assert!(
        sample(
            &text,
            "ocm_work_feedback_scrapes_total{scrape_type=\"Poll\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(text.contains("# TYPE ocm_reconcile_duration_seconds histogram"));

    let (status, head, body) = http(addr, "GET", "/metrics", "application/openmetrics-text").await;
    assert_eq!(status, 200);
    assert!(head.contains("application/openmetrics-text"));
    assert!(body.ends_with("# EOF\n"));
    assert_eq!(http(addr, "GET", "/nope", "*/*").await.0, 404);
    assert_eq!(http(addr, "POST", "/metrics", "*/*").await.0, 405);

    shutdown.cancel();
    election.await.unwrap().unwrap();
    serving.await.unwrap();
}

#[tokio::test]
async fn a_standby_replica_is_ready() {
    let (_hub, spoke) = clusters().await;
    // Another replica holds the Lease and keeps renewing.
    let other = LeaderElector::new(
        spoke.client(),
        LeaderElectionConfig::new("default", WORK_AGENT_LEASE)
            .identity("other")
            .durations(
                Duration::from_secs(2),
                Duration::from_millis(1500),
                Duration::from_millis(100),
            ),
    );
    let stop = Shutdown::new();
    let other_stop = stop.clone();
    let other_task = tokio::spawn(async move {
        other
            .run(
                &other_stop,
                |leading| async move { leading.cancelled().await },
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let me = LeaderElector::new(
        spoke.client(),
        LeaderElectionConfig::new("default", WORK_AGENT_LEASE).durations(
            Duration::from_secs(2),
            Duration::from_millis(1500),
            Duration::from_millis(100),
        ),
    );
    let health = Health::new();
    health.readiness_check(
        "informers",
        leader_ready(Some(me.state()), || false, "informers"),
    );
    let metrics = Metrics::new();
    metrics.leader(WORK_AGENT_LEASE, me.state());
    let server = EndpointServer::bind("127.0.0.1:0".parse().unwrap(), health, metrics)
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(stop.cancelled()));
    let me_stop = stop.clone();
    let me_task = tokio::spawn(async move {
        me.run(&me_stop, |leading| async move { leading.cancelled().await })
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _, body) = http(addr, "GET", "/readyz", "*/*").await;
    assert_eq!((status, body.as_str()), (200, "ok"), "a standby is ready");
    let (_, _, text) = http(addr, "GET", "/metrics", "*/*").await;
    assert_eq!(
        sample(
            &text,
            "leader_election_master_status{name=\"work-agent-lock\"}"
        ),
        Some(0.0)
    );
    stop.cancel();
    other_task.await.unwrap().unwrap();
    me_task.await.unwrap().unwrap();
}

/// `/readyz` of an agent whose hub stops answering (the link to it cut: connections refused,
/// open watches reset): ready while the hub answers, not ready once it has been silent for
/// longer than the resync period (2 s here; the agent's informers check their server every
/// half period), ready again as soon as it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_while_the_hub_does_not_answer_and_recovers_when_it_does() {
    let (hub, spoke) = clusters().await;
    let link = support::link::Link::new(&hub);
    const RESYNC: Duration = Duration::from_secs(2);
    let agent = WorkAgent::new(
        link.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)).resync_interval(RESYNC),
    );
    let health = Health::new();
    let probed = agent.clone();
    health.readiness_check(
        "informers",
        leader_ready_with(None, move || probed.readiness()),
    );
    let server = EndpointServer::bind("127.0.0.1:0".parse().unwrap(), health, Metrics::new())
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let serving = tokio::spawn(server.run(shutdown.cancelled()));
    let (stop, task) = support::start(agent.clone());

    let (status, body) = eventually_status(addr, "/readyz", 200).await;
    assert_eq!((status, body.as_str()), (200, "ok"), "ready once listed");
    // An idle hub that answers keeps the agent ready past several resync periods.
    tokio::time::sleep(RESYNC * 3).await;
    let (status, _, body) = http(addr, "GET", "/readyz", "*/*").await;
    assert_eq!(
        (status, body.as_str()),
        (200, "ok"),
        "an idle hub is no silent hub"
    );

    link.down();
    let down = tokio::time::Instant::now();
    let (status, body) = eventually_status(addr, "/readyz", 503).await;
    let silent = down.elapsed();
    assert_eq!(
        status, 503,
        "not ready while the hub does not answer: {body}"
    );
    assert!(
        body.contains("[-]informers failed: the hub has not answered the agent's informers for"),
        "{body}"
    );
    assert!(
        body.contains("longer than the resync period (2s)"),
        "{body}"
    );
    assert!(
        silent >= RESYNC / 2,
        "not before a resync period of silence: {silent:?}"
    );
    assert!(agent.readiness().is_err() && !agent.caches_synced());

    link.up(&hub);
    let (status, body) = eventually_status(addr, "/readyz", 200).await;
    assert_eq!(
        (status, body.as_str()),
        (200, "ok"),
        "ready again once the hub answers"
    );

    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    shutdown.cancel();
    serving.await.unwrap();
}
