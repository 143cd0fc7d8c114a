//! The registration agent (lease, availability, ClusterClaims) against a fake hub, with the
//! hub's lease controller and inventory controller: a cluster whose agent stops renewing its
//! lease becomes unknown, then unreachable, and recovers when the agent comes back.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::ClusterClaim;
use ocm_placement::inventory::ClusterInventoryController;
use ocm_placement::inventory::lease::ClusterLeaseController;
use ocm_testkit::{FakeCluster, FakeHub};
use ocm_work::registration::RegistrationAgent;
use serde_json::json;

const START: &str = "2026-01-01T00:00:00Z";

struct Setup {
    fake: FakeHub,
    clock: Arc<ManualClock>,
    agent: RegistrationAgent,
    leases: ClusterLeaseController,
    inventory: ClusterInventoryController,
}

fn setup() -> Setup {
    let clock = Arc::new(ManualClock::new(START.parse().unwrap()));
    let fake = FakeHub::with_builder(
        FakeCluster::builder()
            .clock(clock.clone())
            .authentication(true),
        2,
    )
    .unwrap();
    let spoke = fake.cluster("cluster1").unwrap();
    ocm_testkit::install_crds(spoke).unwrap();
    // The agent acts with its own hub identity and upstream's registration RBAC.
    let hub_as_agent = fake
        .hub()
        .client_as(&FakeHub::agent_user("cluster1"))
        .unwrap();
    let agent =
        RegistrationAgent::new(hub_as_agent, spoke.client(), "cluster1").with_clock(clock.clone());
    let leases = ClusterLeaseController::new(fake.hub().client()).with_clock(clock.clone());
    let inventory = ClusterInventoryController::new(fake.hub().client()).with_clock(clock.clone());
    Setup {
        fake,
        clock,
        agent,
        leases,
        inventory,
    }
}

async fn cluster(s: &Setup, name: &str) -> ManagedCluster {
    Api::<ManagedCluster>::all(s.fake.hub().client())
        .get(name)
        .await
        .unwrap()
}

fn available(c: &ManagedCluster) -> (String, String, String) {
    let cond = c
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.type_ == "ManagedClusterConditionAvailable")
        .unwrap()
        .clone();
    (cond.status, cond.reason, cond.message)
}

fn taint_keys(c: &ManagedCluster) -> Vec<String> {
    c.taints().iter().map(|t| t.key.clone()).collect()
}

#[tokio::test]
async fn a_cluster_that_stops_renewing_its_lease_becomes_unknown_then_unreachable_and_recovers() {
    let s = setup();
    // No lease yet: the agent waits for the hub to create it.
    assert!(!s.agent.renew_lease().await.unwrap());
    let out = s.leases.reconcile_all().await.unwrap();
    assert_eq!(out.leases_created, 2);
    let leases: Api<Lease> = Api::namespaced(s.fake.hub().client(), "cluster1");
    let lease = leases.get("managed-cluster-lease").await.unwrap();
    assert_eq!(
        lease.metadata.labels.unwrap()["open-cluster-management.io/cluster-name"],
        "cluster1"
    );
    assert_eq!(
        lease.spec.as_ref().unwrap().holder_identity.as_deref(),
        Some("managed-cluster-lease")
    );

    // The agent renews every lease duration; the hub sees a fresh lease.
    s.clock.advance(Duration::from_secs(240));
    let every = s.agent.sync_once().await.unwrap();
    assert_eq!(every, Duration::from_secs(60));
    let renewed = leases.get("managed-cluster-lease").await.unwrap();
    assert_eq!(
        renewed.spec.unwrap().renew_time.unwrap().0,
        "2026-01-01T00:04:00Z".parse().unwrap()
    );
    s.clock.advance(Duration::from_secs(120));
    let out = s.leases.reconcile_all().await.unwrap();
    assert_eq!(out.marked_unknown, 1, "cluster2 has no agent");
    assert_eq!(
        available(&cluster(&s, "cluster1").await).0,
        "True",
        "cluster1 renewed 2 minutes ago"
    );
    assert_eq!(
        available(&cluster(&s, "cluster2").await),
        (
            "Unknown".into(),
            "ManagedClusterLeaseUpdateStopped".into(),
            "Registration agent stopped updating its lease.".into()
        )
    );

    // The agent stops; 5 lease durations later the hub marks the cluster unknown and warns.
    s.clock.advance(Duration::from_secs(300));
    let out = s.leases.reconcile_all().await.unwrap();
    assert_eq!(out.marked_unknown, 1);
    assert_eq!(available(&cluster(&s, "cluster1").await).0, "Unknown");
    assert_eq!(
        s.leases.reconcile_all().await.unwrap().marked_unknown,
        0,
        "already unknown"
    );
    let events: Api<Event> = Api::namespaced(s.fake.hub().client(), "cluster1");
    let warned = events.list(&ListParams::default()).await.unwrap().items;
    let event = warned
        .iter()
        .find(|e| e.reason.as_deref() == Some("AvailableUnknown"))
        .expect("an AvailableUnknown event");
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.note.as_deref(),
        Some(
            "The cluster1 is successfully imported. However, the connection check from the managed cluster to the hub cluster has failed"
        )
    );

    // The inventory controller taints it unreachable; the hub stamps the taint's time.
    s.inventory.reconcile_all().await.unwrap();
    let c = cluster(&s, "cluster1").await;
    assert_eq!(
        taint_keys(&c),
        ["cluster.open-cluster-management.io/unreachable"]
    );
    assert_eq!(
        c.taints()[0].time_added.as_ref().unwrap().0,
        "2026-01-01T00:11:00Z".parse().unwrap()
    );

    // The agent comes back: lease renewed, available again, taint gone.
    s.agent.sync_once().await.unwrap();
    assert_eq!(
        available(&cluster(&s, "cluster1").await),
        (
            "True".into(),
            "ManagedClusterAvailable".into(),
            "Managed cluster is available".into()
        )
    );
    assert_eq!(s.leases.reconcile_all().await.unwrap().marked_unknown, 0);
    s.inventory.reconcile_all().await.unwrap();
    assert!(taint_keys(&cluster(&s, "cluster1").await).is_empty());
}

#[tokio::test]
async fn cluster_claims_appear_on_the_managed_cluster() {
    let s = setup();
    let spoke = s.fake.cluster("cluster1").unwrap().client();
    let claims: Api<ClusterClaim> = Api::all(spoke);
    for (name, value, spoke_only) in [
        ("region.example.com", "eu-west", false),
        ("id.k8s.io", "abc-123", false),
        ("secret.example.com", "hidden", true),
    ] {
        let mut labels = json!({});
        if spoke_only {
            labels["open-cluster-management.io/spoke-only"] = json!("");
        }
        let claim: ClusterClaim = serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
            "metadata": {"name": name, "labels": labels}, "spec": {"value": value}}))
        .unwrap();
        claims.create(&PostParams::default(), &claim).await.unwrap();
    }
    let agent = s.agent.clone().with_lease(false);
    agent.sync_once().await.unwrap();
    let reported = cluster(&s, "cluster1")
        .await
        .status
        .unwrap()
        .cluster_claims
        .unwrap();
    let pairs: Vec<(String, String)> = reported
        .iter()
        .map(|c| (c.name.clone().unwrap(), c.value.clone().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("id.k8s.io".to_string(), "abc-123".to_string()),
            ("region.example.com".to_string(), "eu-west".to_string())
        ]
    );
    // The run loop follows claim changes.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    claims
        .delete("region.example.com", &Default::default())
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = cluster(&s, "cluster1")
            .await
            .status
            .unwrap()
            .cluster_claims
            .unwrap_or_default();
        if seen.len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen.len(), 1, "{seen:?}");
    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test]
async fn a_cluster_that_has_not_joined_reports_no_claims_and_no_lease_is_renewed_before_acceptance()
{
    let s = setup();
    let hub = s.fake.hub().client();
    // Take cluster1 back to "not joined, not accepted".
    Api::<ManagedCluster>::all(hub.clone())
        .patch_status(
            "cluster1",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"status": {"conditions": []}})),
        )
        .await
        .unwrap();
    let spoke = s.fake.cluster("cluster1").unwrap().client();
    let claim: ClusterClaim = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
        "metadata": {"name": "a"}, "spec": {"value": "b"}}))
    .unwrap();
    Api::<ClusterClaim>::all(spoke)
        .create(&PostParams::default(), &claim)
        .await
        .unwrap();
    s.agent.sync_once().await.unwrap();
    let c = cluster(&s, "cluster1").await;
    assert!(
        c.status
            .unwrap()
            .cluster_claims
            .is_none_or(|c| c.is_empty())
    );
    // Never accepted: the hub creates no lease either.
    assert_eq!(s.leases.reconcile_all().await.unwrap().leases_created, 1);
}
