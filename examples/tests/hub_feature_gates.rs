//! The placement opt-ins as the binaries take them (#16): `ocm-hub-controller
//! --feature-gates` (TopologySpread, PlacementDecisionScore, SIGPlacementDecision,
//! ClusterProfile) against `ocm-fake-apiserver`, read back with kubectl as a user would, and
//! the same setup with every gate off giving upstream's result; `ocm-placement-sim
//! --feature-gates`; `ocm-crdgen --multicluster`.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Fleet, FleetOptions, kubectl, kubectl_available, kubectl_stdin, kubectl_until, run};

const ALL_GATES: &str =
    "TopologySpread=true,PlacementDecisionScore=true,SIGPlacementDecision=true,ClusterProfile=true";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/placement-sim-spread/hub.yaml")
}

#[test]
fn the_hub_controller_explains_its_gates_and_refuses_unknown_ones() {
    let help = run(env!("CARGO_BIN_EXE_ocm-hub-controller"), &["--help"]);
    for gate in [
        "--feature-gates",
        "TopologySpread",
        "PlacementDecisionScore",
        "SIGPlacementDecision",
        "ClusterProfile",
    ] {
        assert!(
            help.out().contains(gate),
            "{gate} missing:\n{}",
            help.stdout
        );
    }
    // Refused before anything else (no kubeconfig needed).
    let bad = run(
        env!("CARGO_BIN_EXE_ocm-hub-controller"),
        &["--feature-gates", "Spread=true"],
    );
    assert_eq!(
        bad.err().trim(),
        "ocm-hub-controller: unknown feature gate \"Spread\" (known: TopologySpread, \
         PlacementDecisionScore, SIGPlacementDecision, ClusterProfile)"
    );
    let bad = run(
        env!("CARGO_BIN_EXE_ocm-hub-controller"),
        &["--feature-gates", "TopologySpread=on"],
    );
    assert!(
        bad.err()
            .contains("TopologySpread: \"on\" is not true or false")
    );
}

#[test]
fn crdgen_writes_the_multicluster_crds_when_asked() {
    let crdgen = env!("CARGO_BIN_EXE_ocm-crdgen");
    let plain = run(crdgen, &["--list"]);
    assert!(!plain.out().contains("multicluster.x-k8s.io"));
    let with = run(crdgen, &["--list", "--multicluster"]);
    let names: Vec<&str> = with.out().lines().collect();
    assert_eq!(names.len(), 16);
    assert!(names.contains(&"clusterprofiles.multicluster.x-k8s.io"));
    assert!(names.contains(&"placementdecisions.multicluster.x-k8s.io"));
}

/// By default `ocm-crdgen` writes upstream's CRDs exactly; `--extended` adds our opt-ins'
/// fields to the ManifestWorkReplicaSet CRD and changes nothing else.
#[test]
fn crdgen_writes_upstreams_crds_unless_asked_for_the_extended_ones() {
    let crdgen = env!("CARGO_BIN_EXE_ocm-crdgen");
    let plain = run(crdgen, &[]);
    let extended = run(crdgen, &["--extended"]);
    for field in [
        "revisionHistoryLimit",
        "failureStrategy",
        "feedbackAggregation",
        "updateRevision",
    ] {
        assert!(!plain.out().contains(field), "{field} in the default CRDs");
        assert!(
            extended.out().contains(field),
            "{field} missing with --extended"
        );
    }
    let documents = |text: &str| -> Vec<String> {
        text.split("---\n")
            .filter(|d| !d.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    let (plain, extended) = (documents(plain.out()), documents(extended.out()));
    assert_eq!(plain.len(), 14);
    assert_eq!(extended.len(), 14);
    let changed: Vec<&String> = plain
        .iter()
        .zip(&extended)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert_eq!(changed.len(), 1);
    assert!(changed[0].contains("name: manifestworkreplicasets.work.open-cluster-management.io"));
}

/// `(selected in order)` of the only placement of the simulator's output.
fn simulated(gates: &str) -> (Vec<String>, String) {
    let fixture = fixture();
    let ran = run(
        env!("CARGO_BIN_EXE_ocm-placement-sim"),
        &[
            fixture.to_str().unwrap(),
            "--now",
            "2026-01-01T00:00:00Z",
            "--feature-gates",
            gates,
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(ran.out()).expect("JSON");
    let placement = &doc["placements"][0];
    let selected = placement["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let satisfied = placement["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PlacementSatisfied")
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    (selected, satisfied)
}

#[test]
fn the_simulator_takes_the_scheduling_gates() {
    // Upstream: the three best clusters (two in `east`), in name order.
    assert_eq!(
        simulated(""),
        (
            vec!["cluster1".into(), "cluster2".into(), "cluster3".into()],
            "AllDecisionsScheduled".into()
        )
    );
    // Spread: one per region, still in name order.
    assert_eq!(
        simulated("TopologySpread=true").0,
        ["cluster1", "cluster3", "cluster4"]
    );
    // Spread and score order: best first.
    assert_eq!(
        simulated("TopologySpread=true,PlacementDecisionScore=true").0,
        ["cluster1", "cluster3", "cluster4"]
    );
    assert_eq!(
        simulated("PlacementDecisionScore=true").0,
        ["cluster1", "cluster2", "cluster3"]
    );
    let bad = run(
        env!("CARGO_BIN_EXE_ocm-placement-sim"),
        &[
            fixture().to_str().unwrap(),
            "--feature-gates",
            "ClusterProfile=true",
        ],
    );
    assert!(
        bad.err()
            .contains("unknown feature gate \"ClusterProfile\" (known: TopologySpread, PlacementDecisionScore)"),
        "{}",
        bad.stderr
    );
}

/// The fixture's objects on the fleet's hub: regions as cluster labels, the scores, the
/// binding and the Placement (the fleet's clusters already exist).
fn set_up(hub: &Path) {
    kubectl_stdin(
        hub,
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
    )
    .out();
    for (cluster, region, score) in [
        ("cluster1", "east", 90),
        ("cluster2", "east", 80),
        ("cluster3", "west", 30),
        ("cluster4", "north", 10),
    ] {
        kubectl(
            hub,
            &[
                "label",
                "managedcluster",
                cluster,
                &format!("region={region}"),
            ],
        )
        .out();
        kubectl_stdin(
            hub,
            &["apply", "-f", "-"],
            &format!(
                "apiVersion: cluster.open-cluster-management.io/v1alpha1\nkind: AddOnPlacementScore\n\
                 metadata:\n  name: usage\n  namespace: {cluster}\n"
            ),
        )
        .out();
        kubectl(
            hub,
            &[
                "patch",
                "addonplacementscore",
                "usage",
                "-n",
                cluster,
                "--subresource=status",
                "--type=merge",
                "-p",
                &format!(r#"{{"status":{{"scores":[{{"name":"cpu","value":{score}}}]}}}}"#),
            ],
        )
        .out();
    }
    let objects = std::fs::read_to_string(fixture()).expect("fixture");
    let wanted: Vec<&str> = objects
        .split("\n---\n")
        .filter(|doc| {
            doc.contains("kind: ManagedClusterSetBinding") || doc.contains("kind: Placement\n")
        })
        .collect();
    kubectl_stdin(hub, &["apply", "-f", "-"], &wanted.join("\n---\n")).out();
}

const DECISIONS: &[&str] = &[
    "get",
    "placementdecisions.cluster.open-cluster-management.io",
    "spread-decision-1",
    "-n",
    "apps",
    "-o",
    "jsonpath={range .status.decisions[*]}{.clusterName}:{.score} {end}",
];

#[test]
fn the_hub_controller_gates_spread_score_and_publish_the_standard_outputs() {
    if !kubectl_available() {
        return;
    }
    let mut options = FleetOptions::new(4).no_agents();
    options.hub_controller = Some(vec![
        "--install-crds".into(),
        "--feature-gates".into(),
        ALL_GATES.into(),
    ]);
    let fleet = Fleet::start("hub-gates-on", options);
    set_up(&fleet.hub);
    // One cluster per region, best first, with their scores.
    kubectl_until(
        &fleet.hub,
        DECISIONS,
        "spread and scored decisions",
        |out| out == "cluster1:90 cluster3:30 cluster4:10",
    );
    let updated = kubectl(
        &fleet.hub,
        &[
            "get",
            "placement",
            "spread",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.lastScoreUpdateTime}",
        ],
    );
    assert!(
        !updated.out().trim().is_empty(),
        "lastScoreUpdateTime is set"
    );
    // The SIG-Multicluster PlacementDecision mirrors it, in the same order.
    kubectl_until(
        &fleet.hub,
        &[
            "get",
            "placementdecisions.multicluster.x-k8s.io",
            "spread-decision-1",
            "-n",
            "apps",
            "-o",
            "jsonpath={.schedulerName} {.metadata.labels.multicluster\\.x-k8s\\.io/decision-key}: {.decisions[*].clusterProfileRef.name}",
        ],
        "the SIG PlacementDecision",
        |out| out == "open-cluster-management spread: cluster1 cluster3 cluster4",
    );
    // Every cluster bound to `apps` has its ClusterProfile there, with its health.
    kubectl_until(
        &fleet.hub,
        &[
            "get",
            "clusterprofiles",
            "-n",
            "apps",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the ClusterProfiles",
        |out| out == "cluster1 cluster2 cluster3 cluster4",
    );
    kubectl_until(
        &fleet.hub,
        &[
            "get",
            "clusterprofile",
            "cluster3",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"ControlPlaneHealthy\")].status} {.metadata.labels.multicluster\\.x-k8s\\.io/clusterset}",
        ],
        "a healthy ClusterProfile",
        |out| out == "True default",
    );
}

#[test]
fn with_every_gate_off_the_hub_controller_behaves_as_upstream() {
    if !kubectl_available() {
        return;
    }
    let fleet = Fleet::start("hub-gates-off", FleetOptions::new(4).no_agents());
    set_up(&fleet.hub);
    // The three best clusters (spreadPolicy ignored), in name order, without scores.
    kubectl_until(&fleet.hub, DECISIONS, "upstream's decisions", |out| {
        out == "cluster1: cluster2: cluster3:"
    });
    let updated = kubectl(
        &fleet.hub,
        &[
            "get",
            "placement",
            "spread",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.lastScoreUpdateTime}",
        ],
    );
    assert_eq!(updated.out().trim(), "");
    // No SIG-Multicluster API at all: its CRDs are not installed.
    let profiles = kubectl(&fleet.hub, &["get", "clusterprofiles", "-A"]);
    assert!(!profiles.ok(), "{}", profiles.stdout);
    assert!(
        profiles
            .stderr
            .contains("the server doesn't have a resource type"),
        "{}",
        profiles.stderr
    );
}
