//! An agent whose informers cannot list a resource says so at WARN, naming the resource and
//! the cluster, once per run of failures.

use crate::support;

use std::sync::Arc;

use ocm_testkit::{FakeCluster, FaultRule};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use support::*;

/// A `MakeWriter` collecting log output in memory.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Logs {
    fn warnings(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains("WARN"))
            .map(str::to_string)
            .collect()
    }
}

// One thread: every task the agent spawns logs to this test's subscriber.
#[tokio::test(flavor = "current_thread")]
async fn an_informer_that_cannot_list_warns_naming_the_resource_and_the_cluster() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // The managed cluster lacks the AppliedManifestWork CRD at first, and refuses to list
    // ConfigMaps.
    let hub = FakeCluster::new();
    install(&hub.client(), &[CLUSTER]).await;
    let spoke = FakeCluster::new();
    spoke.inject(FaultRule::new(403).verb("list").resource("configmaps"));
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let (stop, task) = start(agent);
    create_work(&hub.client(), &one_configmap_work("w", "v")).await;
    let about = |resource: &str| -> Vec<String> {
        logs.warnings()
            .into_iter()
            .filter(|l| l.contains("cannot list or watch") && l.contains(resource))
            .collect()
    };
    let seen = eventually(10, || async { !about("/appliedmanifestworks").is_empty() }).await;
    assert!(seen, "{:#?}", logs.warnings());
    // The CRDs arrive: the work is applied (the agent reads ConfigMaps one by one when their
    // informer cannot list them).
    install(&spoke.client(), &["default"]).await;
    let seen = eventually(20, || async {
        !about("/configmaps").is_empty() && configmap_value(&spoke, "w").is_some()
    })
    .await;
    assert!(seen, "{:#?}", logs.warnings());
    // Let the informers retry a few times: still one warning each.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    for resource in ["/appliedmanifestworks", "/configmaps"] {
        let lines = about(resource);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(lines[0].contains("cluster=cluster1"), "{}", lines[0]);
    }
    let _ = stop.send(());
    let _ = task.await;
}
