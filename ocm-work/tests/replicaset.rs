//! The ManifestWorkReplicaSet controller against an in-process fake hub.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::{Clock, ManualClock};
use ocm_api::cluster::v1alpha1::{
    MandatoryDecisionGroup, MandatoryDecisionGroups, RolloutConfig, RolloutProgressive,
    RolloutProgressivePerGroup, RolloutStrategy, RolloutType,
};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::labels;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_api::work::v1alpha1::{
    CascadeDeletionPolicy, LocalPlacementReference, ManifestWorkReplicaSet,
    ManifestWorkReplicaSetSpec,
};
use ocm_testkit::FakeCluster;
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::json;

const NS: &str = "ocm-ns";

struct Hub {
    _cluster: FakeCluster,
    client: Client,
    clock: Arc<ManualClock>,
}

async fn hub(clusters: &[String]) -> Hub {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in std::iter::once(NS.to_string()).chain(clusters.iter().cloned()) {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
    }
    Hub {
        _cluster: cluster,
        client,
        clock: Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap())),
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:02}")).collect()
}

/// A placement whose decisions are `groups` (name, clusters), written as the scheduler would.
async fn placement(client: &Client, name: &str, groups: &[(&str, Vec<String>)]) {
    let placements: Api<Placement> = Api::namespaced(client.clone(), NS);
    let mut p = Placement::default();
    p.metadata.name = Some(name.into());
    if placements.get_opt(name).await.unwrap().is_none() {
        placements
            .create(&PostParams::default(), &p)
            .await
            .expect("create placement");
    }
    let total: usize = groups.iter().map(|(_, c)| c.len()).sum();
    let decision_groups: Vec<_> = groups
        .iter()
        .enumerate()
        .map(|(i, (group, clusters))| {
            json!({
                "decisionGroupIndex": i, "decisionGroupName": group,
                "decisions": [format!("{name}-decision-{}", i + 1)], "clusterCount": clusters.len()
            })
        })
        .collect();
    placements
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"numberOfSelectedClusters": total, "decisionGroups": decision_groups}})),
        )
        .await
        .expect("placement status");
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    let existing = decisions
        .list(&ListParams::default().labels(&format!("{}={name}", labels::PLACEMENT)))
        .await
        .unwrap();
    for pd in existing.items {
        decisions
            .delete(&pd.name_any(), &DeleteParams::default())
            .await
            .unwrap();
    }
    for (i, (group, clusters)) in groups.iter().enumerate() {
        let pd_name = format!("{name}-decision-{}", i + 1);
        let mut pd = PlacementDecision::default();
        pd.metadata.name = Some(pd_name.clone());
        pd.metadata.labels = Some(BTreeMap::from([
            (labels::PLACEMENT.to_string(), name.to_string()),
            (labels::DECISION_GROUP_INDEX.to_string(), i.to_string()),
            (labels::DECISION_GROUP_NAME.to_string(), group.to_string()),
        ]));
        decisions
            .create(&PostParams::default(), &pd)
            .await
            .expect("create decision");
        let list: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c, "reason": ""}))
            .collect();
        decisions
            .patch_status(
                &pd_name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"decisions": list}})),
            )
            .await
            .expect("decision status");
    }
}

fn template() -> ManifestWorkSpec {
    ManifestWorkSpec {
        workload: Some(ManifestsTemplate {
            manifests: Some(vec![Manifest::new(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "default"}, "data": {"v": "1"}
            }))]),
        }),
        ..Default::default()
    }
}

async fn create_replica_set(client: &Client, name: &str, refs: Vec<LocalPlacementReference>) {
    let rs = ManifestWorkReplicaSet {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: ManifestWorkReplicaSetSpec {
            manifest_work_template: Some(template()),
            placement_refs: refs,
            ..Default::default()
        },
        status: None,
    };
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    api.create(&PostParams::default(), &rs)
        .await
        .expect("create replica set");
}

fn placement_ref(name: &str, strategy: RolloutStrategy) -> LocalPlacementReference {
    LocalPlacementReference {
        name: name.into(),
        rollout_strategy: Some(strategy),
    }
}

fn all() -> RolloutStrategy {
    RolloutStrategy {
        type_: Some(RolloutType::All),
        ..Default::default()
    }
}

/// Reconciles until the controller asks for nothing more (or 10 rounds).
async fn settle(
    controller: &ReplicaSetController,
    client: &Client,
    name: &str,
) -> ManifestWorkReplicaSet {
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    for _ in 0..10 {
        let Some(rs) = api.get_opt(name).await.unwrap() else {
            return ManifestWorkReplicaSet::new(name, Default::default());
        };
        let outcome = controller.reconcile(&rs).await.expect("reconcile");
        if outcome.requeue_after != Some(std::time::Duration::ZERO) {
            break;
        }
    }
    api.get_opt(name)
        .await
        .unwrap()
        .unwrap_or_else(|| ManifestWorkReplicaSet::new(name, Default::default()))
}

async fn works(client: &Client) -> Vec<ManifestWork> {
    let api: Api<ManifestWork> = Api::all(client.clone());
    let mut items = api.list(&ListParams::default()).await.unwrap().items;
    items.sort_by_key(|w| w.namespace());
    items
}

/// Plays the work agent: writes conditions at the work's generation.
async fn set_work_conditions(
    client: &Client,
    work: &ManifestWork,
    conds: &[(&str, &str)],
    now: &str,
) {
    let generation = work.metadata.generation.unwrap_or(0);
    let list: Vec<_> = conds
        .iter()
        .map(|(t, s)| json!({"type": t, "status": s, "reason": "Test", "message": "", "observedGeneration": generation, "lastTransitionTime": now}))
        .collect();
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), &work.namespace().unwrap());
    api.patch_status(
        &work.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": list}})),
    )
    .await
    .expect("work status");
}

fn condition<'a>(rs: &'a ManifestWorkReplicaSet, type_: &str) -> (&'a str, &'a str) {
    let c = conditions::find(
        rs.status.as_ref().unwrap().conditions.as_deref().unwrap(),
        type_,
    )
    .expect(type_);
    (c.status.as_str(), c.reason.as_str())
}

fn totals(rs: &ManifestWorkReplicaSet) -> [i64; 5] {
    let s = rs.status.as_ref().unwrap().summary.as_ref().unwrap();
    [s.total, s.applied, s.available, s.progressing, s.degraded].map(|v| v.unwrap_or(-1))
}

#[tokio::test]
async fn all_strategy_fans_out_and_reports_status() {
    let clusters = names("c", 3);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());

    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert!(
        rs.finalizers()
            .contains(&"work.open-cluster-management.io/manifest-work-cleanup".to_string())
    );
    let created = works(&hub.client).await;
    assert_eq!(created.len(), 3);
    for (work, cluster) in created.iter().zip(&clusters) {
        assert_eq!(work.namespace().as_deref(), Some(cluster.as_str()));
        assert!(
            work.name_any().starts_with("mwrs"),
            "generateName: {}",
            work.name_any()
        );
        assert_eq!(
            work.labels()[labels::MANIFEST_WORK_REPLICA_SET],
            "ocm-ns.mwrs"
        );
        assert_eq!(work.labels()[labels::PLACEMENT_NAME], "p1");
        assert_eq!(work.spec, template());
    }
    assert_eq!(totals(&rs), [3, 0, 0, 0, 0]);
    assert_eq!(condition(&rs, "PlacementVerified"), ("True", "AsExpected"));
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("False", "NotAsExpected")
    );
    let summary = &rs
        .status
        .as_ref()
        .unwrap()
        .placements_summary
        .as_ref()
        .unwrap()[0];
    assert_eq!(
        summary.available_decision_groups.as_deref(),
        Some("1 (3 / 3 clusters applied)")
    );

    for w in &created {
        set_work_conditions(
            &hub.client,
            w,
            &[("Applied", "True"), ("Available", "True")],
            "2026-01-01T00:00:00Z",
        )
        .await;
    }
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(totals(&rs), [3, 3, 3, 0, 0]);
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("True", "AsExpected")
    );
    // Upstream's trap: without a Progressing condition the rollout never completes.
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
    // Same names on the next pass: no duplicate works.
    assert_eq!(works(&hub.client).await.len(), 3);

    // The opt-in criterion completes it.
    let opt_in = controller
        .clone()
        .with_success_criteria(SuccessCriteria::AppliedAndAvailable);
    let rs = settle(&opt_in, &hub.client, "mwrs").await;
    assert_eq!(condition(&rs, "PlacementRolledOut"), ("True", "Complete"));
}

#[tokio::test]
async fn progressive_rollout_advances_batch_by_batch_with_the_opt_in() {
    let clusters = names("c", 6);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    let strategy = RolloutStrategy {
        type_: Some(RolloutType::Progressive),
        progressive: Some(RolloutProgressive {
            max_concurrency: Some(IntOrString::Int(2)),
            ..Default::default()
        }),
        ..Default::default()
    };
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", strategy)]).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_success_criteria(SuccessCriteria::AppliedAndAvailable);

    let mut seen = Vec::new();
    for _ in 0..4 {
        let rs = settle(&controller, &hub.client, "mwrs").await;
        let current = works(&hub.client).await;
        seen.push(current.len());
        if condition(&rs, "PlacementRolledOut").0 == "True" {
            break;
        }
        for w in &current {
            set_work_conditions(
                &hub.client,
                w,
                &[("Applied", "True"), ("Available", "True")],
                "2026-01-01T00:00:00Z",
            )
            .await;
        }
    }
    assert_eq!(seen, [2, 4, 6, 6]);
}

#[tokio::test]
async fn a_failing_cluster_stops_a_progressive_rollout_at_max_failures() {
    let clusters = names("c", 5);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    let strategy = RolloutStrategy {
        type_: Some(RolloutType::Progressive),
        progressive: Some(RolloutProgressive {
            max_concurrency: Some(IntOrString::Int(1)),
            config: RolloutConfig {
                max_failures: Some(IntOrString::Int(1)),
                progress_deadline: Some("1m".into()),
                ..Default::default()
            },
            ..Default::default()
        }),
        ..Default::default()
    };
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", strategy)]).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_success_criteria(SuccessCriteria::AppliedAndAvailable);

    // Every cluster fails to apply. A failed cluster holds its slot until the progress
    // deadline passes; then it counts as a failure. One failure is tolerated, the second
    // one stops the rollout.
    let mut seen = Vec::new();
    for _ in 0..4 {
        settle(&controller, &hub.client, "mwrs").await;
        let current = works(&hub.client).await;
        seen.push(current.len());
        let now = hub.clock.now_time().0.to_string();
        for w in &current {
            if w.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_none()
            {
                set_work_conditions(&hub.client, w, &[("Applied", "False")], &now).await;
            }
        }
        hub.clock.advance(std::time::Duration::from_secs(120));
    }
    assert_eq!(seen, [1, 2, 2, 2]);
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
}

#[tokio::test]
async fn a_placement_change_moves_works() {
    let clusters = names("c", 3);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters[..2].to_vec())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client, "mwrs").await;
    let before: Vec<_> = works(&hub.client)
        .await
        .iter()
        .map(|w| w.namespace().unwrap())
        .collect();
    assert_eq!(before, ["c00", "c01"]);

    placement(&hub.client, "p1", &[("", clusters[1..].to_vec())]).await;
    let rs = settle(&controller, &hub.client, "mwrs").await;
    let after: Vec<_> = works(&hub.client)
        .await
        .iter()
        .map(|w| w.namespace().unwrap())
        .collect();
    assert_eq!(after, ["c01", "c02"]);
    assert_eq!(totals(&rs)[0], 2);
}

#[tokio::test]
async fn a_missing_placement_is_reported_and_nothing_is_created() {
    let hub = hub(&names("c", 1)).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("nope", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(
        condition(&rs, "PlacementVerified"),
        ("False", "PlacementDecisionNotFound")
    );
    assert!(works(&hub.client).await.is_empty());
}

#[tokio::test]
async fn deletion_removes_works_then_the_finalizer() {
    let clusters = names("c", 2);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.client.clone(), NS);
    let mut rs = api.get("mwrs").await.unwrap();
    rs.spec.cascade_deletion_policy = Some(CascadeDeletionPolicy::Background);
    api.replace("mwrs", &PostParams::default(), &rs)
        .await
        .unwrap();
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(works(&hub.client).await.len(), 2);

    api.delete("mwrs", &DeleteParams::default()).await.unwrap();
    let rs = api.get("mwrs").await.expect("kept by its finalizer");
    assert!(rs.metadata.deletion_timestamp.is_some());
    controller.reconcile(&rs).await.unwrap();
    assert!(works(&hub.client).await.is_empty());
    assert!(
        api.get_opt("mwrs").await.unwrap().is_none(),
        "finalizer removed, object gone"
    );
}

#[tokio::test]
async fn an_owner_label_over_63_characters_is_reported() {
    let hub = hub(&[]).await;
    let long = "x".repeat(60);
    create_replica_set(&hub.client, &long, vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let rs = settle(&controller, &hub.client, &long).await;
    let c = conditions::find(
        rs.status.as_ref().unwrap().conditions.as_deref().unwrap(),
        "ManifestworkApplied",
    )
    .unwrap();
    assert_eq!(c.reason, "InvalidManifestWorkName");
    assert!(
        c.message.contains("must be no more than 63 characters"),
        "{}",
        c.message
    );
}

/// The documented three-placement example reaches the summaries the documentation shows.
#[tokio::test]
async fn the_documented_three_placement_example_reaches_its_summaries() {
    let all_clusters = names("a", 10);
    let progressive_clusters = names("p", 30);
    let per_group_clusters = names("g", 20);
    let every: Vec<String> = all_clusters
        .iter()
        .chain(&progressive_clusters)
        .chain(&per_group_clusters)
        .cloned()
        .collect();
    let hub = hub(&every).await;
    placement(
        &hub.client,
        "placement-rollout-all",
        &[("", all_clusters.clone())],
    )
    .await;
    placement(
        &hub.client,
        "placement-rollout-progressive",
        &[
            ("prod-canary-west", progressive_clusters[..10].to_vec()),
            ("prod-canary-east", progressive_clusters[10..20].to_vec()),
            ("prod", progressive_clusters[20..].to_vec()),
        ],
    )
    .await;
    placement(
        &hub.client,
        "placement-rollout-progressive-per-group",
        &(0..4)
            .map(|g| ("", per_group_clusters[g * 5..(g + 1) * 5].to_vec()))
            .collect::<Vec<_>>(),
    )
    .await;
    let group = |name: &str| MandatoryDecisionGroup {
        group_name: Some(name.into()),
        group_index: None,
    };
    create_replica_set(
        &hub.client,
        "mwrset-cronjob",
        vec![
            placement_ref("placement-rollout-all", all()),
            placement_ref(
                "placement-rollout-progressive",
                RolloutStrategy {
                    type_: Some(RolloutType::Progressive),
                    progressive: Some(RolloutProgressive {
                        config: RolloutConfig {
                            min_success_time: Some("5m".into()),
                            progress_deadline: Some("10m".into()),
                            max_failures: Some(IntOrString::String("5%".into())),
                        },
                        mandatory_decision_groups: MandatoryDecisionGroups {
                            mandatory_decision_groups: Some(vec![
                                group("prod-canary-west"),
                                group("prod-canary-east"),
                            ]),
                        },
                        max_concurrency: None,
                    }),
                    ..Default::default()
                },
            ),
            placement_ref(
                "placement-rollout-progressive-per-group",
                RolloutStrategy {
                    type_: Some(RolloutType::ProgressivePerGroup),
                    progressive_per_group: Some(RolloutProgressivePerGroup {
                        config: RolloutConfig {
                            progress_deadline: Some("10m".into()),
                            max_failures: Some(IntOrString::Int(2)),
                            ..Default::default()
                        },
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
        ],
    )
    .await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());

    // Upstream's rules: every work is applied and available as soon as it exists; the works
    // of the first two per-group decision groups and of `prod-canary-west` also carry
    // Progressing=False from a condition rule, so they count as succeeded. Everything else
    // stays `ToApply`, which holds each rollout where the documentation shows it.
    // `prod-canary-west` finished long enough ago to be past its 5 minute soak.
    let finished_groups: Vec<String> = per_group_clusters[..10]
        .iter()
        .chain(&progressive_clusters[..10])
        .cloned()
        .collect();
    let mut rs = settle(&controller, &hub.client, "mwrset-cronjob").await;
    for _ in 0..5 {
        for w in works(&hub.client).await {
            let cluster = w.namespace().unwrap();
            let mut conds = vec![("Applied", "True"), ("Available", "True")];
            if finished_groups.contains(&cluster) {
                conds.push(("Progressing", "False"));
            }
            set_work_conditions(&hub.client, &w, &conds, "2026-01-01T00:00:00Z").await;
        }
        hub.clock.advance(std::time::Duration::from_secs(180));
        rs = settle(&controller, &hub.client, "mwrset-cronjob").await;
    }
    let status = rs.status.as_ref().unwrap();
    let placements: Vec<_> = status
        .placements_summary
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| {
            let s = p.summary.as_ref().unwrap();
            (
                p.name.clone().unwrap(),
                p.available_decision_groups.clone().unwrap(),
                [s.total, s.applied, s.available, s.progressing, s.degraded].map(Option::unwrap),
            )
        })
        .collect();
    assert_eq!(
        placements,
        vec![
            (
                "placement-rollout-all".to_string(),
                "1 (10 / 10 clusters applied)".to_string(),
                [10, 10, 10, 0, 0]
            ),
            (
                "placement-rollout-progressive".to_string(),
                "3 (20 / 30 clusters applied)".to_string(),
                [20, 20, 20, 0, 0]
            ),
            (
                "placement-rollout-progressive-per-group".to_string(),
                "4 (15 / 20 clusters applied)".to_string(),
                [15, 15, 15, 0, 0]
            ),
        ]
    );
    assert_eq!(totals(&rs), [45, 45, 45, 0, 0]);
    assert_eq!(condition(&rs, "PlacementVerified"), ("True", "AsExpected"));
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("True", "AsExpected")
    );
    // Upstream writes no messages; ours says why the rollout is stuck (25 of the 45 works
    // have no Progressing condition) and names the opt-in.
    for c in status.conditions.as_ref().unwrap() {
        if c.type_ == "PlacementRolledOut" {
            assert_eq!(
                c.message,
                ocm_work::replicaset::status::stalled_rollout_message(25, 45)
            );
        } else {
            assert!(c.message.is_empty(), "{c:?}");
        }
    }
    // desiredTotal: the clusters each placement selected, and their sum.
    let desired: Vec<i64> = status
        .placements_summary
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| p.summary.as_ref().unwrap().desired_total.unwrap())
        .collect();
    assert_eq!(desired, [10, 30, 20]);
    assert_eq!(status.summary.as_ref().unwrap().desired_total, Some(60));
}

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
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_rollout_waiting_for_progressing_says_so_once_and_names_the_opt_in() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let clusters = names("c", 4);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    let strategy = RolloutStrategy {
        type_: Some(RolloutType::Progressive),
        progressive: Some(RolloutProgressive {
            max_concurrency: Some(IntOrString::Int(2)),
            ..Default::default()
        }),
        ..Default::default()
    };
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", strategy)]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());

    // The first batch is created; nothing is applied yet, so nothing is said.
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(works(&hub.client).await.len(), 2);
    let message = |rs: &ManifestWorkReplicaSet| {
        conditions::find(
            rs.status.as_ref().unwrap().conditions.as_deref().unwrap(),
            "PlacementRolledOut",
        )
        .unwrap()
        .message
        .clone()
    };
    assert_eq!(message(&rs), "");
    assert_eq!(
        rs.status
            .as_ref()
            .unwrap()
            .summary
            .as_ref()
            .unwrap()
            .desired_total,
        Some(4)
    );

    // The agent applies both works; they never report Progressing. The rollout is stuck.
    for w in works(&hub.client).await {
        set_work_conditions(
            &hub.client,
            &w,
            &[("Applied", "True"), ("Available", "True")],
            "2026-01-01T00:00:00Z",
        )
        .await;
    }
    for _ in 0..3 {
        settle(&controller, &hub.client, "mwrs").await;
    }
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(
        works(&hub.client).await.len(),
        2,
        "the rollout did not advance"
    );
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
    let text = message(&rs);
    assert_eq!(
        text,
        ocm_work::replicaset::status::stalled_rollout_message(2, 2)
    );
    assert!(
        text.contains("SuccessCriteria::AppliedAndAvailable")
            && text.contains("--success-criteria applied-and-available"),
        "{text}"
    );
    let logged = logs.text();
    assert_eq!(
        logged.matches("rollout cannot advance").count(),
        1,
        "one log line for the stuck state, not one per reconcile:\n{logged}"
    );
    assert!(
        logged.contains("WARN")
            && logged.contains("ocm-ns/mwrs")
            && logged.contains("SuccessCriteria::AppliedAndAvailable"),
        "{logged}"
    );

    // With the opt-in the rollout advances and the message goes away.
    let opt_in = controller.with_success_criteria(SuccessCriteria::AppliedAndAvailable);
    let rs = settle(&opt_in, &hub.client, "mwrs").await;
    assert_eq!(works(&hub.client).await.len(), 4);
    assert_eq!(message(&rs), "");
}

#[tokio::test]
async fn the_run_loop_fans_out_and_follows_decision_changes() {
    let clusters = names("c", 3);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters[..1].to_vec())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let wait_for = |expected: Vec<&'static str>| {
        let client = hub.client.clone();
        async move {
            for _ in 0..100 {
                let now: Vec<String> = works(&client)
                    .await
                    .iter()
                    .map(|w| w.namespace().unwrap())
                    .collect();
                if now == expected {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            panic!("works never became {expected:?}");
        }
    };
    wait_for(vec!["c00"]).await;
    // A PlacementDecision change reaches the controller through its watch.
    placement(&hub.client, "p1", &[("", clusters[1..].to_vec())]).await;
    wait_for(vec!["c01", "c02"]).await;
    let _ = stop.send(());
    task.await.unwrap();
}
