//! A hub that lost its state, as a running agent meets it: restarted empty (it counts resource
//! versions again from low numbers and knows nothing of the old works, but new works come
//! under the same names), or restored from an older backup (the same works, uids included,
//! at older resource versions and without what the agent wrote since). The hub answers a
//! watch resumed from a resource version it has not issued as kube-apiserver does: open and
//! silent (`future_watches_wait`). Each time the hub's works must be applied within seconds,
//! and what only the old works asked for removed, by uid.
//!
//! Each scenario runs twice: with a managed cluster of its own, and with the hub as its own
//! managed cluster (one API server for both, which then loses the managed cluster's state
//! too: AppliedManifestWorks and applied resources).

use crate::support;

use std::time::Duration;

use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeCluster;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use support::link::Link;
use support::*;

const WORKS: usize = 5;

fn names() -> Vec<String> {
    (0..WORKS).map(|i| format!("w{i}")).collect()
}

/// A work `name` with the ConfigMaps `<name>-<suffix>` for each of `suffixes`, holding `value`.
fn work(name: &str, suffixes: &[&str], value: &str) -> ManifestWork {
    let manifests: Vec<serde_json::Value> = suffixes
        .iter()
        .map(|s| configmap(&format!("{name}-{s}"), value))
        .collect();
    work_object(
        name,
        serde_json::json!({"workload": {"manifests": manifests}}),
    )
}

/// The running agent and what it talks to: `hub` through `link`, and the managed cluster
/// (`spoke`, or the hub itself through the same link when `shared`).
struct Setup {
    link: Link,
    spoke: Option<FakeCluster>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Setup {
    async fn start(hub: &FakeCluster, shared: bool) -> Self {
        let link = Link::new(hub);
        let spoke = if shared {
            None
        } else {
            let spoke = FakeCluster::new();
            install(&spoke.client(), &["default"]).await;
            Some(spoke)
        };
        let spoke_client = spoke.as_ref().map_or_else(|| link.client(), |s| s.client());
        // Upstream's intervals (status sync 10 s, resync 4 min): nothing here may wait for a
        // resync.
        let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL));
        let agent = WorkAgent::new(link.client(), spoke_client, config);
        let (stop, task) = start(agent);
        Self {
            link,
            spoke,
            stop,
            task,
        }
    }

    /// The managed cluster as it is now: `hub` when shared.
    fn spoke<'a>(&'a self, hub: &'a FakeCluster) -> &'a FakeCluster {
        self.spoke.as_ref().unwrap_or(hub)
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// A hub with the OCM CRDs and the cluster namespace (and `default` for a shared one), that
/// answers watches from the future as kube-apiserver does.
async fn new_hub(uid_seed: u64) -> FakeCluster {
    let hub = FakeCluster::builder()
        .uid_seed(uid_seed)
        .future_watches_wait(true)
        .build();
    install(&hub.client(), &[CLUSTER, "default"]).await;
    hub
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The hub restarts with no state and gets new works under the old names: they are applied,
/// and the ConfigMaps only the old works asked for are removed.
async fn restarted_empty(shared: bool) {
    let old_hub = new_hub(1).await;
    let setup = Setup::start(&old_hub, shared).await;
    for name in names() {
        create_work(&old_hub.client(), &work(&name, &["a", "old"], "v1")).await;
    }
    assert!(
        eventually(Duration::from_secs(30), || async {
            all_applied(&old_hub, &names())
        })
        .await,
        "the old hub's works are applied"
    );

    // A hub that knows nothing of the old works, at the same address; it has issued far
    // fewer resource versions than the old one.
    let new_hub = new_hub(2).await;
    for name in names() {
        create_work(&new_hub.client(), &work(&name, &["a", "new"], "v2")).await;
    }
    assert!(new_hub.store().resource_version() < old_hub.store().resource_version());
    setup.link.up(&new_hub);

    let expected: Vec<String> = sorted(
        names()
            .iter()
            .flat_map(|n| [format!("{n}-a"), format!("{n}-new")])
            .collect(),
    );
    let converged = eventually(Duration::from_secs(30), || async {
        let spoke = setup.spoke(&new_hub);
        sorted(configmap_names(spoke)) == expected
            && names()
                .iter()
                .all(|n| configmap_value(spoke, &format!("{n}-a")).as_deref() == Some("v2"))
            && all_applied(&new_hub, &names())
    })
    .await;
    let applied = names()
        .into_iter()
        .filter(|n| all_applied(&new_hub, std::slice::from_ref(n)))
        .count();
    assert!(
        converged,
        "{applied} of {WORKS} new works applied; ConfigMaps: {:?}",
        sorted(configmap_names(setup.spoke(&new_hub)))
    );
    setup.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_works_under_old_names_are_applied_after_the_hub_restarts_empty() {
    restarted_empty(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_works_are_applied_after_a_hub_that_is_its_own_managed_cluster_restarts_empty() {
    restarted_empty(true).await;
}

/// The hub is restored from a backup taken before the agent applied the works (and before
/// `w0` gained a second ConfigMap): the same works, uids included, without the agent's
/// finalizer and status, at older resource versions. The agent applies them again, and
/// removes the ConfigMap only the lost version of `w0` asked for.
async fn restored_from_backup(shared: bool) {
    let hub = new_hub(1).await;
    for name in names() {
        create_work(&hub.client(), &work(&name, &["a"], "v1")).await;
    }
    let backup = hub.store().snapshot();
    let setup = Setup::start(&hub, shared).await;
    assert!(
        eventually(Duration::from_secs(30), || async {
            all_applied(&hub, &names())
        })
        .await,
        "the works are applied"
    );
    let mut w0: ManifestWork = hub.get(CLUSTER, "w0").unwrap();
    w0.spec = work("w0", &["a", "extra"], "v1").spec;
    kube::Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .replace("w0", &Default::default(), &w0)
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(30), || async {
            configmap_names(setup.spoke(&hub)).contains(&"w0-extra".to_string())
                && all_applied(&hub, &names())
        })
        .await,
        "w0's second ConfigMap is applied"
    );

    // The restored hub: the backup, at the same address.
    let restored = FakeCluster::builder()
        .uid_seed(3)
        .future_watches_wait(true)
        .build();
    restored.store().restore(&backup).unwrap();
    assert!(restored.store().resource_version() < hub.store().resource_version());
    for name in names() {
        let work: ManifestWork = restored.get(CLUSTER, &name).unwrap();
        let before: ManifestWork = hub.get(CLUSTER, &name).unwrap();
        assert_eq!(
            work.metadata.uid, before.metadata.uid,
            "a backup keeps uids"
        );
        assert!(work.status.is_none() && work.metadata.finalizers.is_none());
    }
    setup.link.up(&restored);

    let expected: Vec<String> = sorted(names().iter().map(|n| format!("{n}-a")).collect());
    let converged = eventually(Duration::from_secs(30), || async {
        sorted(configmap_names(setup.spoke(&restored))) == expected
            && all_applied(&restored, &names())
    })
    .await;
    let applied = names()
        .into_iter()
        .filter(|n| all_applied(&restored, std::slice::from_ref(n)))
        .count();
    assert!(
        converged,
        "{applied} of {WORKS} restored works applied; ConfigMaps: {:?}",
        sorted(configmap_names(setup.spoke(&restored)))
    );
    setup.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_of_a_hub_restored_from_an_older_backup_are_applied_again() {
    restored_from_backup(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_of_a_hub_restored_from_a_backup_that_is_its_own_managed_cluster_are_applied_again() {
    restored_from_backup(true).await;
}
