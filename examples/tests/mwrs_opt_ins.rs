//! The `mwrs-opt-ins` example runs to completion (per-cluster values and feedback
//! aggregation), and `ocm-hub-controller --cluster-values --feedback-aggregation` does both
//! against `ocm-fake-apiserver`, read back with kubectl.

use crate::common;

use std::process::Command;

use common::{Fleet, FleetOptions, kubectl_available, run};

#[test]
fn mwrs_opt_ins_resolves_values_per_cluster_and_aggregates_feedback() {
    let output = Command::new(env!("CARGO_BIN_EXE_mwrs-opt-ins"))
        .output()
        .expect("run mwrs-opt-ins");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "mwrs-opt-ins failed:\n{stdout}\n{stderr}"
    );
    let (before, after) = stdout
        .split_once("==> label cluster3")
        .expect("a labelling section");
    // Each cluster gets its own values; the unlabelled one gets nothing and is named.
    assert!(
        before.contains(
            "cluster1: CLUSTER=cluster1,REGION=us-east  cluster2: CLUSTER=cluster2,REGION=us-west  cluster3: -"
        ),
        "{stdout}"
    );
    assert!(
        before.contains(
            "ClusterValuesResolved=False/ClusterValuesInvalid 1 cluster got no ManifestWork: \
             cluster cluster3: {{CLUSTER_LABEL:region}}"
        ),
        "{stdout}"
    );
    assert!(
        before.contains("region: reported by 2 [1×us-east, 1×us-west]"),
        "{stdout}"
    );
    // Once labelled, it follows, and the aggregates count it.
    assert!(
        after.contains("cluster3: CLUSTER=cluster3,REGION=eu-central"),
        "{stdout}"
    );
    assert!(
        after.contains("ClusterValuesResolved=True/AsExpected"),
        "{stdout}"
    );
    assert!(
        after.contains("ReadyReplicas: reported by 3 [3×2] min=2 max=2 sum=6"),
        "{stdout}"
    );
    assert!(
        after.contains("ManifestWorks in: cluster1, cluster2, cluster3"),
        "{stdout}"
    );
}

#[test]
fn the_hub_controller_says_what_the_two_opt_ins_do() {
    let help = run(env!("CARGO_BIN_EXE_ocm-hub-controller"), &["--help"]);
    let out = help.out();
    assert!(out.contains("--cluster-values"), "{out}");
    assert!(out.contains("{{CLUSTER_LABEL:<key>}}"), "{out}");
    assert!(out.contains("--feedback-aggregation"), "{out}");
    assert!(out.contains("spec.feedbackAggregation"), "{out}");
}

const REPLICA_SET: &str = r#"apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: web
  namespace: apps
spec:
  placementRefs:
    - name: all
  feedbackAggregation:
    interval: 5s
    values:
      - resourceIdentifier: {resource: configmaps, namespace: default, name: web}
        name: region
  manifestWorkTemplate:
    workload:
      manifests:
        - apiVersion: v1
          kind: ConfigMap
          metadata:
            name: web
            namespace: default
          data:
            cluster: "{{CLUSTER_NAME}}"
            region: "{{CLUSTER_LABEL:region}}"
"#;

/// `ocm-hub-controller --cluster-values --feedback-aggregation` against `ocm-fake-apiserver`:
/// the labelled cluster's work carries its region, the other cluster is named in the
/// condition, and the (empty) aggregate is written.
#[test]
fn the_hub_controller_resolves_values_and_aggregates_with_the_flags() {
    if !kubectl_available() {
        return;
    }
    let mut options = FleetOptions::new(2).no_agents();
    // The opt-ins' fields are in the extended CRDs.
    options.server_args = vec!["--extended-crds".into()];
    options.hub_controller = Some(vec![
        "--cluster-values".into(),
        "--feedback-aggregation".into(),
    ]);
    let fleet = Fleet::start("mwrs-opt-ins-flags", options);
    fleet.kubectl(&["create", "namespace", "apps"]).out();
    fleet
        .clusteradm(&["clusterset", "bind", "global", "--namespace", "apps"])
        .out();
    fleet
        .kubectl(&["label", "managedcluster", "cluster1", "region=east"])
        .out();
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
         metadata:\n  name: all\n  namespace: apps\nspec: {}\n",
        )
        .out();
    fleet.apply(REPLICA_SET).out();
    fleet.hub_until(
        &[
            "get",
            "manifestworks",
            "-n",
            "cluster1",
            "-o",
            "jsonpath={.items[0].spec.workload.manifests[0].data}",
        ],
        "cluster1's work with its values",
        |out| out.contains(r#""cluster":"cluster1""#) && out.contains(r#""region":"east""#),
    );
    let message = fleet.hub_until(
        &[
            "get",
            "manifestworkreplicaset",
            "web",
            "-n",
            "apps",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="ClusterValuesResolved")].message}"#,
        ],
        "the ClusterValuesResolved message",
        |out| out.contains("cluster2"),
    );
    assert!(
        message.contains("{{CLUSTER_LABEL:region}}") && message.contains("no label \"region\""),
        "{message}"
    );
    assert_eq!(
        fleet
            .kubectl(&["get", "manifestworks", "-n", "cluster2", "-o", "name"])
            .out()
            .trim(),
        ""
    );
    fleet.hub_until(
        &[
            "get",
            "manifestworkreplicaset",
            "web",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.feedbackAggregation.values[0].name}",
        ],
        "the feedback aggregate",
        |out| out == "region",
    );
}
