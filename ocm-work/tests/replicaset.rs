//! The ManifestWorkReplicaSet controller against an in-process fake hub.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::Clock;
use ocm_api::cluster::v1alpha1::{
    FailureStrategy, MandatoryDecisionGroup, MandatoryDecisionGroups, RolloutConfig,
    RolloutProgressive, RolloutProgressivePerGroup, RolloutStrategy, RolloutType,
};
use ocm_api::conditions;
use ocm_api::constants::labels;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_api::work::v1alpha1::{
    CascadeDeletionPolicy, LocalPlacementReference, ManifestWorkReplicaSet,
    ManifestWorkReplicaSetSpec,
};
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::replicaset::{SuccessCriteria, rollback};
use serde_json::json;

use crate::support;

use support::replicaset::{Hub, NS, hub, placement, settle};

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:02}")).collect()
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

/// Upstream ocm#1703: when the placements select clusters but the hub refuses every
/// ManifestWork, `PlacementVerified` says `NotAsExpected` with the refusal as its message (the
/// same refusal for two clusters said once, as Go's error aggregate says it), not
/// `PlacementDecisionEmpty`; `ManifestworkApplied` follows it, and the reconcile returns the
/// error. Once the template is fixed the works are created and both turn `AsExpected`.
#[tokio::test]
async fn works_the_hub_refuses_are_not_as_expected_with_the_refusal_not_an_empty_placement() {
    let clusters = names("c", 2);
    let fake = ocm_testkit::FakeCluster::builder()
        .hub_admission(Some(ocm_testkit::webhook::HubAdmission::new()))
        .build();
    let client = fake.client();
    let namespaces: Vec<&str> = std::iter::once(NS)
        .chain(clusters.iter().map(String::as_str))
        .collect();
    support::install(&client, &namespaces).await;
    placement(&client, "p", &[("", clusters.clone())]).await;
    create_replica_set(&client, "mwrs", vec![placement_ref("p", all())]).await;
    // A manifest without a name: the replica set is accepted (upstream registers no webhook
    // for it), each ManifestWork made from it is refused by the work webhook.
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    api.patch(
        "mwrs",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"manifestWorkTemplate": {"workload": {"manifests": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}
            ]}}}}),
        ),
    )
    .await
    .unwrap();
    let controller = ReplicaSetController::new(client.clone());
    let mut error = None;
    for _ in 0..3 {
        let rs = api.get("mwrs").await.unwrap();
        if let Err(e) = controller.reconcile(&rs).await {
            error = Some(e.to_string());
        }
    }
    let refusal = "admission webhook \"manifestworkvalidators.admission.work.open-cluster-management.io\" \
                   denied the request: name must be set in manifest";
    let error = error.expect("the refusals are returned");
    assert!(error.contains(refusal), "{error}");
    assert!(works(&client).await.is_empty());
    let rs = api.get("mwrs").await.unwrap();
    assert_eq!(
        support::replicaset::condition_of(&rs, "PlacementVerified"),
        Some(("False".into(), "NotAsExpected".into(), refusal.into()))
    );
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("False", "NotAsExpected")
    );
    assert_eq!(totals(&rs)[0], 0);

    api.patch(
        "mwrs",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"manifestWorkTemplate": template()}})),
    )
    .await
    .unwrap();
    let rs = settle(&controller, &client, "mwrs").await;
    assert_eq!(works(&client).await.len(), 2);
    assert_eq!(
        support::replicaset::condition_of(&rs, "PlacementVerified"),
        Some(("True".into(), "AsExpected".into(), String::new())),
        "the refusal is gone with the fix"
    );
}

/// With no error, a placement that selects nothing is still `PlacementDecisionEmpty`.
#[tokio::test]
async fn a_placement_that_selects_nothing_is_still_placement_decision_empty() {
    let hub = hub(&names("c", 1)).await;
    placement(&hub.client, "p", &[("", Vec::<String>::new())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(
        condition(&rs, "PlacementVerified"),
        ("False", "PlacementDecisionEmpty")
    );
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("False", "PlacementDecisionEmpty")
    );
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
    let hub = hub::<&str>(&[]).await;
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
        c.message.contains("must be no more than 63 bytes"),
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

#[tokio::test(flavor = "current_thread")]
async fn a_rollout_waiting_for_progressing_says_so_once_and_names_the_opt_in() {
    let capture = support::logs::capture();
    let logs = capture.logs();

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

// ---- The rollback opt-in (`ReplicaSetController::with_rollback`) ----

/// The template with `data.v` set to `v`.
fn template_v(v: &str) -> ManifestWorkSpec {
    ManifestWorkSpec {
        workload: Some(ManifestsTemplate {
            manifests: Some(vec![Manifest::new(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "default"}, "data": {"v": v}
            }))]),
        }),
        ..Default::default()
    }
}

/// `data.v` of a work's ConfigMap.
fn work_v(work: &ManifestWork) -> String {
    work.spec.manifests()[0].as_value()["data"]["v"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Plays the work agent for every work not yet reported at its generation: applied and
/// available when `data.v` is not `failing`, else failed to apply.
async fn play_agent(hub: &Hub, failing: &str) {
    let now = hub.clock.now_time().0.to_string();
    for w in works(&hub.client).await {
        let generation = w.metadata.generation;
        let reported = w
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().all(|c| c.observed_generation == generation));
        if reported {
            continue;
        }
        if work_v(&w) == failing {
            set_work_conditions(&hub.client, &w, &[("Applied", "False")], &now).await;
        } else {
            set_work_conditions(
                &hub.client,
                &w,
                &[("Applied", "True"), ("Available", "True")],
                &now,
            )
            .await;
        }
    }
}

/// Progressive, one cluster at a time, one failure tolerated, a one-minute deadline.
fn progressive_one_by_one(failure_strategy: Option<FailureStrategy>) -> RolloutStrategy {
    RolloutStrategy {
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
        failure_strategy,
        ..Default::default()
    }
}

async fn set_template(client: &Client, name: &str, v: &str) {
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"manifestWorkTemplate": template_v(v)}})),
    )
    .await
    .expect("new template");
}

async fn revisions(client: &Client) -> Vec<ControllerRevision> {
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), NS);
    api.list(&ListParams::default()).await.unwrap().items
}

/// Rolls `v` out until `PlacementRolledOut` is `True` (every work succeeds), at most 10 rounds.
async fn roll_out_fine(
    hub: &Hub,
    controller: &ReplicaSetController,
    name: &str,
) -> ManifestWorkReplicaSet {
    for _ in 0..10 {
        let rs = settle(controller, &hub.client, name).await;
        if condition(&rs, "PlacementRolledOut").0 == "True" {
            return rs;
        }
        play_agent(hub, "none").await;
    }
    panic!("the rollout did not complete");
}

/// Rolls the current template out with every work failing, 4 rounds with the deadline
/// passing in each, then lets the works at other templates succeed.
async fn roll_out_failing(
    hub: &Hub,
    controller: &ReplicaSetController,
    name: &str,
    failing: &str,
) -> ManifestWorkReplicaSet {
    for _ in 0..4 {
        settle(controller, &hub.client, name).await;
        play_agent(hub, failing).await;
        hub.clock.advance(std::time::Duration::from_secs(120));
    }
    settle(controller, &hub.client, name).await;
    play_agent(hub, failing).await;
    settle(controller, &hub.client, name).await
}

/// Four clusters, `v1` rolled out everywhere, then `v2` rolled out and failing everywhere.
async fn failed_update(
    rollback: bool,
    failure_strategy: Option<FailureStrategy>,
) -> (
    Hub,
    ReplicaSetController,
    ManifestWorkReplicaSet,
    ManifestWorkReplicaSet,
) {
    let clusters = names("c", 4);
    // The rollback opt-in's fields are in the extended CRDs.
    let hub = support::replicaset::hub_extended(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(
        &hub.client,
        "mwrs",
        vec![placement_ref(
            "p1",
            progressive_one_by_one(failure_strategy),
        )],
    )
    .await;
    set_template(&hub.client, "mwrs", "1").await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_success_criteria(SuccessCriteria::AppliedAndAvailable)
        .with_rollback(rollback);
    let good = roll_out_fine(&hub, &controller, "mwrs").await;
    set_template(&hub.client, "mwrs", "2").await;
    let failed = roll_out_failing(&hub, &controller, "mwrs", "2").await;
    (hub, controller, good, failed)
}

#[tokio::test]
async fn rollback_puts_the_last_good_template_back_on_every_cluster() {
    let (hub, _controller, good, rs) = failed_update(true, Some(FailureStrategy::AbortAll)).await;

    // v1 reached every cluster: it became the current revision, recorded in the history.
    let good_status = good.status.clone().unwrap();
    let v1 = good_status
        .current_revision
        .clone()
        .expect("current revision");
    assert_eq!(good_status.update_revision.as_deref(), Some(v1.as_str()));
    assert_eq!(good_status.summary.as_ref().unwrap().updated, Some(4));
    assert_eq!(
        condition(&good, "Progressing"),
        ("True", "NewManifestWorkAvailable")
    );

    // v2 failed on two clusters (one more than maxFailures): aborted, v1 restored everywhere.
    let status = rs.status.clone().unwrap();
    let v2 = status.update_revision.clone().unwrap();
    assert_ne!(v1, v2);
    assert_eq!(status.current_revision.as_deref(), Some(v1.as_str()));
    assert!(status.aborted_time.is_some());
    assert_eq!(condition(&rs, "Progressing"), ("False", "RolloutAborted"));
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "RolloutDegraded")
    );
    assert_eq!(status.summary.as_ref().unwrap().updated, Some(0));
    let all = works(&hub.client).await;
    assert_eq!(all.len(), 4);
    for w in &all {
        assert_eq!(work_v(w), "1", "{:?}", w.namespace());
        assert_eq!(
            w.labels().get(rollback::CONTROLLER_HASH_LABEL),
            Some(&v1),
            "{:?}",
            w.namespace()
        );
    }
    // The spec still holds v2: an abort does not rewrite it.
    assert_eq!(
        work_v(&ManifestWork {
            metadata: Default::default(),
            spec: rs.spec.manifest_work_template.clone().unwrap(),
            status: None,
        }),
        "2"
    );
    let mut names: Vec<String> = revisions(&hub.client)
        .await
        .iter()
        .map(|r| r.name_any())
        .collect();
    names.sort();
    let mut want = vec![format!("mwrs-{v1}"), format!("mwrs-{v2}")];
    want.sort();
    assert_eq!(names, want);
}

#[tokio::test]
async fn without_the_rollback_opt_in_a_failed_rollout_stops_as_upstream_does() {
    // The same story, AbortAll written but the controller without the opt-in.
    let (hub, _controller, good, rs) = failed_update(false, Some(FailureStrategy::AbortAll)).await;
    for rs in [&good, &rs] {
        let status = rs.status.clone().unwrap();
        assert_eq!(status.current_revision, None);
        assert_eq!(status.update_revision, None);
        assert_eq!(status.aborted_time, None);
        assert_eq!(status.collision_count, None);
        assert_eq!(status.summary.as_ref().unwrap().updated, Some(0));
        assert!(conditions::find(status.conditions.as_deref().unwrap(), "Progressing").is_none());
    }
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "Progressing")
    );
    let versions: Vec<String> = works(&hub.client).await.iter().map(work_v).collect();
    assert_eq!(versions, ["2", "2", "1", "1"]);
    assert!(
        works(&hub.client)
            .await
            .iter()
            .all(|w| !w.labels().contains_key(rollback::CONTROLLER_HASH_LABEL))
    );
    assert!(revisions(&hub.client).await.is_empty());
}

#[tokio::test]
async fn with_rollback_but_no_failure_strategy_a_failed_rollout_stops_degraded() {
    let (hub, _controller, _good, rs) = failed_update(true, None).await;
    let status = rs.status.clone().unwrap();
    assert!(status.aborted_time.is_none());
    assert_ne!(status.current_revision, status.update_revision);
    let (st, reason) = condition(&rs, "Progressing");
    assert_eq!((st, reason), ("False", "ProgressDeadlineExceeded"));
    assert_eq!(
        condition(&rs, "PlacementRolledOut"),
        ("False", "RolloutDegraded")
    );
    let versions: Vec<String> = works(&hub.client).await.iter().map(work_v).collect();
    assert_eq!(versions, ["2", "2", "1", "1"]);
}

#[tokio::test]
async fn undo_rolls_an_old_revision_out_again_and_the_history_is_pruned() {
    let (hub, controller, good, rs) = failed_update(true, Some(FailureStrategy::AbortAll)).await;
    let v1 = good.status.unwrap().current_revision.unwrap();
    let v2 = rs.status.unwrap().update_revision.unwrap();
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.client.clone(), NS);
    api.patch(
        "mwrs",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"revisionHistoryLimit": 1}})),
    )
    .await
    .unwrap();

    // Undo: the spec goes back to v1; the abort is over, and as every cluster holds v1 the
    // rollout is complete at once.
    set_template(&hub.client, "mwrs", "1").await;
    let rs = settle(&controller, &hub.client, "mwrs").await;
    let status = rs.status.clone().unwrap();
    assert_eq!(status.update_revision.as_deref(), Some(v1.as_str()));
    assert_eq!(status.current_revision.as_deref(), Some(v1.as_str()));
    assert_eq!(status.aborted_time, None);
    assert_eq!(
        condition(&rs, "Progressing"),
        ("True", "NewManifestWorkAvailable")
    );
    assert_eq!(condition(&rs, "PlacementRolledOut"), ("True", "Complete"));

    let sorted_names = |revs: Vec<ControllerRevision>| {
        let mut names: Vec<String> = revs.iter().map(|r| r.name_any()).collect();
        names.sort();
        names
    };
    let want = |hashes: &[&String]| {
        let mut names: Vec<String> = hashes.iter().map(|h| format!("mwrs-{h}")).collect();
        names.sort();
        names
    };

    // A new template is a new revision.
    set_template(&hub.client, "mwrs", "3").await;
    let rs = settle(&controller, &hub.client, "mwrs").await;
    let v3 = rs.status.clone().unwrap().update_revision.unwrap();
    assert_eq!(
        condition(&rs, "Progressing"),
        ("True", "NewRevisionCreated")
    );
    assert_eq!(
        sorted_names(revisions(&hub.client).await),
        want(&[&v1, &v2, &v3])
    );

    // Another one: with a limit of 1, the oldest revision that is neither current nor
    // update (v2) goes.
    set_template(&hub.client, "mwrs", "4").await;
    let rs = settle(&controller, &hub.client, "mwrs").await;
    let v4 = rs.status.clone().unwrap().update_revision.unwrap();
    assert_eq!(
        sorted_names(revisions(&hub.client).await),
        want(&[&v1, &v3, &v4])
    );

    // Back to v3, found in the history: it is renumbered as the newest.
    set_template(&hub.client, "mwrs", "3").await;
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(
        rs.status.clone().unwrap().update_revision.as_deref(),
        Some(v3.as_str())
    );
    assert_eq!(condition(&rs, "Progressing"), ("True", "FoundNewRevision"));
    let numbers: BTreeMap<String, i64> = revisions(&hub.client)
        .await
        .iter()
        .map(|r| (r.name_any(), rollback::revision_number(r)))
        .collect();
    assert!(numbers[&format!("mwrs-{v3}")] > numbers[&format!("mwrs-{v4}")]);
}

/// More works than one page of the controller's listing (100): every pass sees all of them,
/// deploy, status counts and the finalizer's clean-up, and no listing of works asks for
/// everything at once.
#[tokio::test]
async fn works_over_several_list_pages_are_all_deployed_counted_and_removed() {
    let clusters = names("c", 250);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client, "mwrs").await;
    let created = works(&hub.client).await;
    assert_eq!(created.len(), 250);
    for work in &created {
        set_work_conditions(
            &hub.client,
            work,
            &[("Applied", "True"), ("Available", "True")],
            "2026-01-01T00:00:00Z",
        )
        .await;
    }
    let rs = settle(&controller, &hub.client, "mwrs").await;
    assert_eq!(totals(&rs), [250, 250, 250, 0, 0]);
    assert_eq!(
        condition(&rs, "ManifestworkApplied"),
        ("True", "AsExpected")
    );
    let listings: Vec<String> = hub
        .fake
        .journal()
        .entries()
        .into_iter()
        .filter(|e| {
            e.verb == "list"
                && e.resource.as_deref() == Some("manifestworks")
                && e.query.contains("manifestworkreplicaset")
        })
        .map(|e| e.query)
        .collect();
    assert!(
        listings.iter().any(|q| q.contains("continue=")),
        "{listings:?}"
    );
    assert!(
        listings.iter().all(|q| q.contains("limit=")),
        "{listings:?}"
    );

    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.client.clone(), NS);
    api.delete("mwrs", &DeleteParams::default()).await.unwrap();
    settle(&controller, &hub.client, "mwrs").await;
    assert!(works(&hub.client).await.is_empty());
    assert!(api.get_opt("mwrs").await.unwrap().is_none());
}

/// A work that holds the template but whose metadata someone changed is brought back in line
/// (the controller keeps no copy of a current work's spec, so it reads that work again to
/// patch it), and its spec stays the template.
#[tokio::test]
async fn a_current_work_with_edited_metadata_is_restored() {
    let clusters = names("c", 2);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client, "mwrs").await;
    let before = works(&hub.client).await;
    let edited = &before[0];
    let api: Api<ManifestWork> = Api::namespaced(hub.client.clone(), &edited.namespace().unwrap());
    api.patch(
        &edited.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"edited": "yes"}}})),
    )
    .await
    .unwrap();
    settle(&controller, &hub.client, "mwrs").await;
    let after = works(&hub.client).await;
    assert_eq!(after.len(), 2);
    assert!(
        after[0]
            .metadata
            .annotations
            .as_ref()
            .is_none_or(|a| !a.contains_key("edited")),
        "{:?}",
        after[0].metadata.annotations
    );
    assert_eq!(after[0].spec, template());
    assert_eq!(
        after[1].metadata.resource_version,
        before[1].metadata.resource_version
    );
}

/// On a real hub the controller's cache lags behind its own writes (a busy watch, one that
/// dropped and relists): it is handed the replica set as it was before it added its
/// finalizer. That is no conflict to report: the finalizer is added once, the works are
/// created in the same pass, and a second pass over the stale copy neither fails nor writes
/// the finalizer again. (It used to patch with the stale resourceVersion and fail with 409.)
#[tokio::test]
async fn a_replica_set_from_a_lagging_cache_is_reconciled_without_conflicts() {
    let clusters = names("c", 2);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let stale = support::replicaset::get_replica_set(&hub.client, "mwrs")
        .await
        .unwrap();
    assert!(stale.finalizers().is_empty());
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    hub.fake.journal().clear();

    controller.reconcile(&stale).await.expect("first pass");
    assert_eq!(works(&hub.client).await.len(), 2, "works in the same pass");
    controller
        .reconcile(&stale)
        .await
        .expect("a stale copy is no error");
    let conflicts = hub.fake.journal().count(|e| e.status == 409);
    assert_eq!(conflicts, 0);
    let finalizer_patches = hub.fake.journal().count(|e| {
        e.verb == "patch"
            && e.resource.as_deref() == Some("manifestworkreplicasets")
            && e.subresource.is_none()
            && e.status < 300
    });
    assert_eq!(finalizer_patches, 1);
    let rs = support::replicaset::get_replica_set(&hub.client, "mwrs")
        .await
        .unwrap();
    assert_eq!(
        rs.finalizers(),
        [ocm_api::constants::finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP]
    );
}

/// The stalled-rollout warning is said once per change of what it says, also when the
/// controller keeps being handed a copy of the replica set from before it wrote the
/// condition (a lagging cache, another replica's view): it used to compare with the
/// copy's condition and warn on every such pass.
#[tokio::test]
async fn a_stalled_rollout_is_logged_once_per_change_whatever_the_cached_copy_says() {
    let capture = support::logs::capture();
    let logs = capture.logs();

    let clusters = names("c", 3);
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
    let before_stall = settle(&controller, &hub.client, "mwrs").await;
    for w in works(&hub.client).await {
        set_work_conditions(
            &hub.client,
            &w,
            &[("Applied", "True"), ("Available", "True")],
            "2026-01-01T00:00:00Z",
        )
        .await;
    }
    // The stale copy has no stall message: every pass over it finds the stall "new".
    for _ in 0..4 {
        controller
            .reconcile(&before_stall)
            .await
            .expect("reconcile");
    }
    settle(&controller, &hub.client, "mwrs").await;
    let logged = logs.text();
    assert_eq!(
        logged.matches("rollout cannot advance").count(),
        1,
        "one line per change, not one per pass:\n{logged}"
    );

    // What it says changes (a third work is applied and stalls too once the rollout is
    // unblocked by hand): said again, once.
    let opt_in = controller
        .clone()
        .with_success_criteria(SuccessCriteria::AppliedAndAvailable);
    settle(&opt_in, &hub.client, "mwrs").await;
    assert_eq!(works(&hub.client).await.len(), 3);
    for w in works(&hub.client).await {
        set_work_conditions(
            &hub.client,
            &w,
            &[("Applied", "True"), ("Available", "True")],
            "2026-01-01T00:00:00Z",
        )
        .await;
    }
    let rs = settle(&controller, &hub.client, "mwrs").await;
    for _ in 0..3 {
        controller.reconcile(&rs).await.expect("reconcile");
    }
    let logged = logs.text();
    assert_eq!(
        logged.matches("rollout cannot advance").count(),
        2,
        "said again when the message changed:\n{logged}"
    );
}

/// A reconcile that keeps failing the same way (retried every 5 s) is logged once, and
/// again once it fails differently; the retries themselves go on.
#[tokio::test]
async fn a_failure_repeated_on_every_retry_is_logged_once_per_change() {
    let capture = support::logs::capture();
    let logs = capture.logs();
    let clusters = names("c", 1);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    hub.fake.inject(
        ocm_testkit::fault::FaultRule::new(500)
            .verb("list")
            .resource("placementdecisions"),
    );
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));
    // Three attempts: at once, after 5 s, after 10 s.
    let lists = || {
        hub.fake.journal().count(|e| {
            e.verb == "list"
                && e.resource.as_deref() == Some("placementdecisions")
                && e.status == 500
        })
    };
    for _ in 0..150 {
        if lists() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(lists() >= 3, "retried: {}", lists());
    let failures = |text: &str| {
        text.matches("ManifestWorkReplicaSet reconcile failed")
            .count()
    };
    assert_eq!(failures(&logs.text()), 1, "{}", logs.text());
    // A different failure is news.
    hub.fake.faults().clear();
    hub.fake.inject(
        ocm_testkit::fault::FaultRule::new(503)
            .verb("list")
            .resource("placementdecisions"),
    );
    for _ in 0..80 {
        if failures(&logs.text()) >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(failures(&logs.text()), 2, "{}", logs.text());
    let _ = stop.send(());
    task.await.unwrap();
}

fn fields_condition(rs: &ManifestWorkReplicaSet) -> Option<(String, String, String)> {
    support::replicaset::condition_of(rs, "OptInFieldsInstalled")
}

/// What the fake hid: on a hub serving upstream's CRD (the default), the opt-ins' fields are
/// pruned and rollback and feedback aggregation silently did nothing. The controller now says
/// so on every replica set it reconciles, logs it once, and does not write the pruned status
/// fields over and over. Without the opt-ins the condition goes away.
#[tokio::test]
async fn an_opt_in_whose_fields_the_installed_crd_prunes_says_so() {
    let capture = support::logs::capture();
    let logs = capture.logs();
    let clusters = names("c", 2);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    for name in ["one", "two"] {
        create_replica_set(&hub.client, name, vec![placement_ref("p1", all())]).await;
    }
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_rollback(true);
    for name in ["one", "two"] {
        let rs = settle(&controller, &hub.client, name).await;
        let (status, reason, message) = fields_condition(&rs).expect("the condition");
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "FieldsPruned")
        );
        assert!(
            message.contains("rollback (--rollback) needs spec.revisionHistoryLimit")
                && message.contains("ocm-crdgen --extended"),
            "{message}"
        );
        assert!(
            !message.contains("feedback"),
            "only the enabled opt-ins: {message}"
        );
        assert_eq!(rs.status.unwrap().update_revision, None, "pruned");
    }
    // Settled (the rollback's own Progressing condition moves once more, from
    // NewRevisionCreated to FoundNewRevision, as the revision it recorded is pruned):
    // reconciling again writes nothing (the pruned fields are not written in vain).
    for name in ["one", "two"] {
        let rs = support::replicaset::get_replica_set(&hub.client, name)
            .await
            .unwrap();
        controller.reconcile(&rs).await.unwrap();
    }
    hub.fake.journal().clear();
    for name in ["one", "two"] {
        let rs = support::replicaset::get_replica_set(&hub.client, name)
            .await
            .unwrap();
        controller.reconcile(&rs).await.unwrap();
    }
    let status_writes = hub
        .fake
        .journal()
        .count(|e| e.resource.as_deref() == Some("manifestworkreplicasets") && e.is_write());
    assert_eq!(status_writes, 0);
    let text = logs.text();
    assert_eq!(
        text.matches("prunes fields of enabled opt-ins").count(),
        1,
        "said once, not per replica set or pass:\n{text}"
    );

    // Both opt-ins: both named.
    let both = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_rollback(true)
        .with_feedback_aggregation(true);
    let rs = settle(&both, &hub.client, "one").await;
    let (_, _, message) = fields_condition(&rs).unwrap();
    assert!(
        message.contains("feedback aggregation (--feedback-aggregation) needs spec.feedbackAggregation, status.feedbackAggregation"),
        "{message}"
    );
    // No such opt-in: no condition.
    let plain = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let rs = settle(&plain, &hub.client, "one").await;
    assert_eq!(fields_condition(&rs), None);
}

/// With the extended CRD installed the condition says the fields are kept; a running
/// controller follows the installed CRD: upgraded from upstream's to the extended one, its
/// replica sets' condition turns True and rollback starts recording revisions.
#[tokio::test]
async fn a_running_controller_follows_the_installed_crd() {
    let clusters = names("c", 1);
    let hub = hub(&clusters).await;
    placement(&hub.client, "p1", &[("", clusters.clone())]).await;
    create_replica_set(&hub.client, "mwrs", vec![placement_ref("p1", all())]).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_rollback(true);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));
    let reason_becomes = |want: &'static str| {
        let client = hub.client.clone();
        async move {
            for _ in 0..200 {
                let rs = support::replicaset::get_replica_set(&client, "mwrs")
                    .await
                    .unwrap();
                if fields_condition(&rs).is_some_and(|(_, reason, _)| reason == want) {
                    return rs;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            panic!("the condition never became {want}");
        }
    };
    reason_becomes("FieldsPruned").await;

    // The extended CRD replaces upstream's (`ocm-crdgen --extended | kubectl apply -f -`).
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(hub.client.clone());
    let name = "manifestworkreplicasets.work.open-cluster-management.io";
    let mut extended = ocm_api::crd::extended_crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .unwrap();
    extended.metadata.resource_version = crds.get(name).await.unwrap().metadata.resource_version;
    crds.replace(name, &PostParams::default(), &extended)
        .await
        .unwrap();
    let rs = reason_becomes("FieldsInstalled").await;
    let (status, _, message) = fields_condition(&rs).unwrap();
    assert_eq!(status, "True");
    assert_eq!(
        message,
        "the installed ManifestWorkReplicaSet CRD keeps the fields of rollback"
    );
    for _ in 0..200 {
        let rs = support::replicaset::get_replica_set(&hub.client, "mwrs")
            .await
            .unwrap();
        if rs.status.and_then(|s| s.update_revision).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let rs = support::replicaset::get_replica_set(&hub.client, "mwrs")
        .await
        .unwrap();
    assert!(
        rs.status.unwrap().update_revision.is_some(),
        "rollback records revisions"
    );
    let _ = stop.send(());
    task.await.unwrap();
}
