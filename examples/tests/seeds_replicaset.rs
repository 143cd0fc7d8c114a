//! Acceptance: the ManifestWorkReplicaSet concept page ("Work Distribution /
//! ManifestWorkReplicaSet"): its example, `mwrset-cronjob` with three placements and three
//! rollout strategies, applied as written with the real kubectl against `ocm-fake-apiserver`
//! + `ocm-hub-controller` (upstream's success criterion) + one `ocm-work-agent` per cluster.
//!
//! The documentation names the three placements but does not show them; ours select seven
//! clusters: `placement-rollout-all` two, `placement-rollout-progressive` three (one in each
//! of its mandatory decision groups `prod-canary-west` and `prod-canary-east`, one in the rest)
//! and `placement-rollout-progressive-per-group` two (one per decision group). The
//! documentation's figures come from a larger fleet (10, 30 and 20 clusters); the shape is
//! the same.
//!
//! | step | the documentation says the user sees | test |
//! |---|---|---|
//! | the example applied with `kubectl apply` | accepted | same: kubectl's strict field validation rejects the example's `rolloutType` (the field is `type` since OCM v0.13), as a current kube-apiserver does; with `type` it is accepted |
//! | the CronJob on the managed clusters | created | its pod template sets no `restartPolicy`, so the pods default to `Always`, which a Job's pods may not use: a kube-apiserver rejects the CronJob (checked on a managed cluster directly); the rollout below runs with `restartPolicy: OnFailure` added |
//! | the rollout | one ManifestWork per rolled-out cluster, in the cluster's namespace | [`the_documented_replica_set_rolls_out_and_reports_its_summaries`] |
//! | `placementSummary` | per placement `availableDecisionGroups: "<groups> (<applied> / <selected> clusters applied)"` and `applied / available / progressing / degraded / total` | same: `1 (2 / 2 …)`; `3 (1 / 3 …)` and `2 (1 / 2 …)`, as upstream rolls out the first mandatory group, and then the first group, and waits there: its works never report `Progressing` |
//! | `summary` | the sums (`total` 4 here), and `desiredTotal` the selected clusters (7; our addition, upstream leaves it 0) | same |
//! | conditions | `PlacementVerified` True `AsExpected`, `PlacementRolledOut` False `Progressing`, `ManifestworkApplied` True `AsExpected` | same; `PlacementRolledOut` also says why it cannot advance and names the opt-in (our addition; upstream writes no message) |
//! | enabling the feature in the ClusterManager | the hub runs the ManifestWorkReplicaSet controller | out of scope: `ocm-hub-controller` always runs it |

use crate::common;

use common::{Fleet, FleetOptions};

const REPLICA_SET: &str = r#"apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: mwrset-cronjob
  namespace: ocm-ns
spec:
  placementRefs:
    - name: placement-rollout-all # Name of a created Placement
      rolloutStrategy:
        rolloutType: All
    - name: placement-rollout-progressive # Name of a created Placement
      rolloutStrategy:
        rolloutType: Progressive
        progressive:
          minSuccessTime: 5m
          progressDeadline: 10m
          maxFailures: 5%
          mandatoryDecisionGroups:
          - groupName: "prod-canary-west"
          - groupName: "prod-canary-east"
    - name: placement-rollout-progressive-per-group # Name of a created Placement
      rolloutStrategy:
        rolloutType: ProgressivePerGroup
        progressivePerGroup:
          progressDeadline: 10m
          maxFailures: 2
  manifestWorkTemplate:
    deleteOption:
      propagationPolicy: SelectivelyOrphan
      selectivelyOrphans:
        orphaningRules:
          - group: ''
            name: ocm-ns
            namespace: ''
            resource: Namespace
    manifestConfigs:
      - feedbackRules:
          - jsonPaths:
              - name: lastScheduleTime
                path: .status.lastScheduleTime
              - name: lastSuccessfulTime
                path: .status.lastSuccessfulTime
            type: JSONPaths
        resourceIdentifier:
          group: batch
          name: sync-cronjob
          namespace: ocm-ns
          resource: cronjobs
    workload:
      manifests:
        - kind: Namespace
          apiVersion: v1
          metadata:
            name: ocm-ns
        - kind: CronJob
          apiVersion: batch/v1
          metadata:
            name: sync-cronjob
            namespace: ocm-ns
          spec:
            schedule: '* * * * *'
            concurrencyPolicy: Allow
            suspend: false
            jobTemplate:
              spec:
                backoffLimit: 2
                template:
                  spec:
                    containers:
                      - name: hello
                        image: 'quay.io/prometheus/busybox:latest'
                        args:
                          - /bin/sh
                          - '-c'
                          - date; echo Hello from the Kubernetes cluster
"#;

const PLACEMENTS: &str = "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement-rollout-all
  namespace: ocm-ns
spec:
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            rollout: all
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement-rollout-progressive
  namespace: ocm-ns
spec:
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            rollout: progressive
  decisionStrategy:
    groupStrategy:
      decisionGroups:
        - groupName: prod-canary-west
          groupClusterSelector:
            labelSelector:
              matchLabels:
                region: west
        - groupName: prod-canary-east
          groupClusterSelector:
            labelSelector:
              matchLabels:
                region: east
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement-rollout-progressive-per-group
  namespace: ocm-ns
spec:
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            rollout: per-group
  decisionStrategy:
    groupStrategy:
      clustersPerDecisionGroup: 1
";

#[test]
fn the_documented_replica_set_rolls_out_and_reports_its_summaries() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-mwrs", FleetOptions::new(7));
    fleet.kubectl(&["create", "namespace", "ocm-ns"]).out();
    fleet
        .clusteradm(&["clusterset", "bind", "global", "--namespace", "ocm-ns"])
        .out();
    for (cluster, labels) in [
        ("cluster1", &["rollout=all"][..]),
        ("cluster2", &["rollout=all"]),
        ("cluster3", &["rollout=progressive", "region=west"]),
        ("cluster4", &["rollout=progressive", "region=east"]),
        ("cluster5", &["rollout=progressive"]),
        ("cluster6", &["rollout=per-group"]),
        ("cluster7", &["rollout=per-group"]),
    ] {
        let mut args = vec!["label", "managedcluster", cluster];
        args.extend_from_slice(labels);
        fleet.kubectl(&args).out();
    }
    fleet.apply(PLACEMENTS).out();
    fleet.hub_until(
        &["get", "placement", "-n", "ocm-ns", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.numberOfSelectedClusters}/{.status.decisionGroups[*].decisionGroupName} {end}"],
        "the three placements scheduled",
        |out| {
            out == "placement-rollout-all=2/ placement-rollout-progressive=3/prod-canary-west prod-canary-east  placement-rollout-progressive-per-group=2/"
        },
    );

    // As written, the example names the strategy's type `rolloutType`, the field's name
    // before OCM v0.13 (now `type`): kubectl's strict field validation rejects it, as a current
    // kube-apiserver does.
    let ran = fleet.apply(REPLICA_SET);
    let err = ran.err();
    assert!(
        err.contains(r#"strict decoding error: unknown field "spec.placementRefs[0].rolloutStrategy.rolloutType""#),
        "{err}"
    );
    // The example's CronJob sets no `restartPolicy` for its pods: they default to `Always`,
    // which a Job's pods may not use, so a managed cluster's API server refuses it.
    let cronjob = REPLICA_SET
        .split_once("        - kind: CronJob\n")
        .map(|(_, rest)| {
            rest.lines()
                .map(|l| l.strip_prefix("          ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .expect("the example's CronJob")
        .replace("namespace: ocm-ns", "namespace: default");
    let ran = fleet.apply_on("cluster7", &format!("kind: CronJob\n{cronjob}\n"));
    assert_eq!(
        ran.err().trim(),
        r#"The CronJob "sync-cronjob" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#
    );
    // With the field's current name, and a restart policy a Job's pods may use, the example
    // is accepted.
    let ran = fleet.apply(&REPLICA_SET.replace("rolloutType:", "type:").replace(
        "                    containers:\n",
        "                    restartPolicy: OnFailure\n                    containers:\n",
    ));
    assert_eq!(
        ran.out().trim(),
        "manifestworkreplicaset.work.open-cluster-management.io/mwrset-cronjob created"
    );

    // One work per rolled-out cluster, named after the replica set, labelled with its owner.
    let works = fleet.hub_until(
        &["get", "manifestwork", "-A", "-l", "work.open-cluster-management.io/manifestworkreplicaset=ocm-ns.mwrset-cronjob", "-o", "jsonpath={range .items[*]}{.metadata.namespace}:{.metadata.labels.work\\.open-cluster-management\\.io/placementname} {end}"],
        "the works of the rolled-out clusters",
        |out| out.split_whitespace().count() == 4,
    );
    assert_eq!(
        works.split_whitespace().collect::<Vec<_>>(),
        [
            "cluster1:placement-rollout-all",
            "cluster2:placement-rollout-all",
            "cluster3:placement-rollout-progressive",
            "cluster6:placement-rollout-progressive-per-group",
        ]
    );
    let names = fleet.kubectl(&[
        "get",
        "manifestwork",
        "-n",
        "cluster1",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert!(
        names.out().starts_with("mwrset-cronjob"),
        "{}",
        names.stdout
    );
    fleet.spoke_until(
        "cluster3",
        &[
            "get",
            "cronjob",
            "-n",
            "ocm-ns",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the CronJob on cluster3",
        |o| o == "sync-cronjob",
    );

    // The status once every work is applied and available.
    let status = fleet.hub_until(
        &[
            "get",
            "manifestworkreplicaset",
            "-n",
            "ocm-ns",
            "mwrset-cronjob",
            "-o",
            "jsonpath={.status}",
        ],
        "the summaries",
        |out| {
            serde_json::from_str::<serde_json::Value>(out)
                .is_ok_and(|s| s["summary"]["available"] == 4 && s["summary"]["applied"] == 4)
        },
    );
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let summaries: Vec<(String, String, [i64; 5])> = status["placementSummary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = &p["summary"];
            let n = |k: &str| s[k].as_i64().unwrap();
            (
                p["name"].as_str().unwrap().to_string(),
                p["availableDecisionGroups"].as_str().unwrap().to_string(),
                [
                    n("applied"),
                    n("available"),
                    n("progressing"),
                    n("degraded"),
                    n("total"),
                ],
            )
        })
        .collect();
    assert_eq!(
        summaries,
        [
            (
                "placement-rollout-all".to_string(),
                "1 (2 / 2 clusters applied)".to_string(),
                [2, 2, 0, 0, 2]
            ),
            (
                "placement-rollout-progressive".to_string(),
                "3 (1 / 3 clusters applied)".to_string(),
                [1, 1, 0, 0, 1]
            ),
            (
                "placement-rollout-progressive-per-group".to_string(),
                "2 (1 / 2 clusters applied)".to_string(),
                [1, 1, 0, 0, 1]
            ),
        ]
    );
    let summary = &status["summary"];
    assert_eq!(
        ["applied", "available", "progressing", "degraded", "total"]
            .map(|k| summary[k].as_i64().unwrap()),
        [4, 4, 0, 0, 4]
    );
    assert_eq!(summary["desiredTotal"], 7);
    let desired: Vec<i64> = status["placementSummary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["summary"]["desiredTotal"].as_i64().unwrap())
        .collect();
    assert_eq!(desired, [2, 3, 2]);

    let condition = |t: &str| {
        let c = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == t)
            .unwrap_or_else(|| panic!("no {t}"));
        (
            c["status"].as_str().unwrap().to_string(),
            c["reason"].as_str().unwrap().to_string(),
            c["message"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        condition("PlacementVerified"),
        ("True".into(), "AsExpected".into(), String::new())
    );
    assert_eq!(
        condition("ManifestworkApplied"),
        ("True".into(), "AsExpected".into(), String::new())
    );
    let (rolled, reason, message) = condition("PlacementRolledOut");
    assert_eq!((rolled.as_str(), reason.as_str()), ("False", "Progressing"));
    assert!(
        message.starts_with("4 of 4 ManifestWorks are applied but report no Progressing condition, so the rollout cannot advance")
            && message.contains("SuccessCriteria::AppliedAndAvailable (ocm-hub-controller --success-criteria applied-and-available)"),
        "{message}"
    );
    let log = std::fs::read_to_string(fleet.dir.join("ocm-hub-controller.log")).unwrap_or_default();
    assert!(
        log.contains("rollout cannot advance"),
        "no log line in:\n{log}"
    );
}
