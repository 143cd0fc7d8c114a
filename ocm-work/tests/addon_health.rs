//! Addon health: work feedback probes with JSONPaths and a checker, the well-known workload
//! probers, no prober, and lease-based health.

use crate::addon_support;

use std::sync::Arc;

use addon_support::{Fleet, deployment, namespace};
use ocm_api::addon::v1beta1::{HealthCheckMode, ManagedClusterAddOn};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::work::v1::{FeedbackRule, JsonPath, Manifest, ResourceIdentifier};
use ocm_work::addon::lease::{LeaseHealthChecker, LeaseUpdater};
use ocm_work::addon::{
    AddonConfigs, AgentAddon, AgentAddonOptions, HealthProber, ProbeField, RenderError,
};
use serde_json::json;

struct Probed {
    name: &'static str,
    prober: HealthProber,
}

impl AgentAddon for Probed {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new(self.name).with_health_prober(self.prober.clone())
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        Ok(vec![
            namespace("probe-ns"),
            deployment("probe-ns", self.name, "agent:v1"),
        ])
    }
}

fn install(fleet: &Fleet, name: &str) {
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: {name}}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: {name}, namespace: cluster1}}\nspec: {{}}\n"
    ));
}

fn json_path_prober() -> HealthProber {
    let field = ProbeField::new(
        ResourceIdentifier::new("apps", "deployments", "probe-ns", "probed"),
        vec![FeedbackRule::json_paths([
            JsonPath::new("ready", ".status.readyReplicas"),
            JsonPath::new("image", ".spec.template.spec.containers[0].image"),
        ])],
    );
    HealthProber::work(vec![field], |results, _cluster, addon| {
        let values = results[0].feedback_result.values();
        let ready = values
            .iter()
            .find(|v| v.name == "ready")
            .and_then(|v| v.field_value.integer);
        let image = values
            .iter()
            .find(|v| v.name == "image")
            .and_then(|v| v.field_value.string.clone());
        match (ready, image.as_deref()) {
            (Some(r), Some("agent:v1")) if r >= 1 => Ok(()),
            _ => Err(format!(
                "{} has no ready replica",
                addon.metadata.name.as_deref().unwrap_or("")
            )),
        }
    })
}

#[tokio::test]
async fn json_path_probe_fields_and_a_checker_map_to_available() {
    let fleet = Fleet::new(1, |m| {
        m.with_addon(Arc::new(Probed {
            name: "probed",
            prober: json_path_prober(),
        }))
    })
    .await;
    install(&fleet, "probed");
    fleet.rounds(3).await;
    let work = fleet
        .work("cluster1", "addon-probed-deploy-0")
        .await
        .unwrap();
    let rules = work.spec.manifest_configs.unwrap()[0]
        .feedback_rules
        .clone()
        .unwrap();
    assert_eq!(rules[0].json_paths.as_ref().unwrap()[0].name, "ready");
    let c = fleet
        .condition("cluster1", "probed", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "ProbeAvailable")
    );
    let mca = fleet.mca("cluster1", "probed").await.unwrap();
    assert_eq!(
        mca.status.unwrap().health_check.unwrap().mode,
        Some(HealthCheckMode::Customized)
    );

    // The agent's pods go away on the managed cluster.
    let store = fleet.hub.cluster("cluster1").unwrap().store();
    store
        .patch(
            &ocm_testkit::Gvr::new("apps", "v1", "deployments"),
            "probe-ns",
            "probed",
            ocm_testkit::PatchKind::Merge,
            &json!({"status": {"readyReplicas": 0, "availableReplicas": 0}}),
            &ocm_testkit::WriteOptions::manager("test").subresource("status"),
        )
        .unwrap();
    fleet.rounds(2).await;
    let c = fleet
        .condition("cluster1", "probed", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ProbeUnavailable")
    );
    assert_eq!(
        c.message,
        "Probe addon unavailable with err probed has no ready replica"
    );
}

#[tokio::test]
async fn deployment_availability_and_none() {
    let fleet = Fleet::new(1, |m| {
        m.with_addon(Arc::new(Probed {
            name: "deploy",
            prober: HealthProber::DeploymentAvailability,
        }))
        .with_addon(Arc::new(Probed {
            name: "quiet",
            prober: HealthProber::None,
        }))
    })
    .await;
    install(&fleet, "deploy");
    install(&fleet, "quiet");
    fleet.rounds(3).await;
    let c = fleet
        .condition("cluster1", "deploy", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        ("True", "ProbeAvailable", "deploy add-on is available.")
    );
    let quiet = fleet
        .mca("cluster1", "quiet")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        quiet.health_check.unwrap().mode,
        Some(HealthCheckMode::Customized)
    );
    assert!(
        fleet
            .condition("cluster1", "quiet", "Available")
            .await
            .is_none()
    );
    assert_eq!(
        fleet.cond("cluster1", "quiet", "ManifestApplied").await.0,
        "True"
    );
}

#[tokio::test]
async fn lease_health() {
    let fleet = Fleet::new(1, |m| {
        m.with_addon(Arc::new(Probed {
            name: "leased",
            prober: HealthProber::Lease,
        }))
    })
    .await;
    install(&fleet, "leased");
    fleet.rounds(2).await;
    let mca = fleet.mca("cluster1", "leased").await.unwrap();
    assert_eq!(
        mca.status.unwrap().health_check.unwrap().mode,
        Some(HealthCheckMode::Lease)
    );
    assert!(
        fleet
            .condition("cluster1", "leased", "Available")
            .await
            .is_none(),
        "the manager leaves lease health alone"
    );

    let spoke = fleet.hub.cluster("cluster1").unwrap().client();
    let clock = Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap()));
    let checker = LeaseHealthChecker::new(fleet.client.clone(), spoke.clone(), "cluster1")
        .with_clock(clock.clone());
    checker.check_all().await.unwrap();
    let c = fleet
        .condition("cluster1", "leased", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("Unknown", "ManagedClusterAddOnLeaseNotFound")
    );
    assert_eq!(c.message, "The status of leased add-on is unknown.");

    // The agent renews its lease in the default install namespace.
    let updater = LeaseUpdater::new(spoke, "leased", "open-cluster-management-agent-addon")
        .with_clock(clock.clone());
    updater.renew_once().await.unwrap();
    assert_eq!(checker.check_all().await.unwrap(), 1);
    let c = fleet
        .condition("cluster1", "leased", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        (
            "True",
            "ManagedClusterAddOnLeaseUpdated",
            "leased add-on is available."
        )
    );
    clock.advance(std::time::Duration::from_secs(4 * 60));
    updater.renew_once().await.unwrap();
    assert_eq!(
        checker.check_all().await.unwrap(),
        0,
        "still fresh: nothing written"
    );

    // The agent stops renewing: five lease durations later the addon is unavailable.
    clock.advance(std::time::Duration::from_secs(5 * 60));
    checker.check_all().await.unwrap();
    let c = fleet
        .condition("cluster1", "leased", "Available")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        (
            "False",
            "ManagedClusterAddOnLeaseUpdateStopped",
            "leased add-on is not available."
        )
    );
}
