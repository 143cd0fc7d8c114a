//! The `mwrs-rollback` example runs to completion: v1 rolls out, v2 fails on its first
//! cluster and is rolled back there. `ocm-hub-controller --rollback` records revisions.

use crate::common;

use std::process::Command;

use common::{Fleet, FleetOptions, kubectl, kubectl_available, kubectl_stdin, kubectl_until, run};

#[test]
fn mwrs_rollback_restores_v1_after_the_failed_v2() {
    let output = Command::new(env!("CARGO_BIN_EXE_mwrs-rollback"))
        .output()
        .expect("run mwrs-rollback");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "mwrs-rollback failed:\n{stdout}\n{stderr}"
    );
    let (v1_part, v2_part) = stdout.split_once("==> version v2").expect("a v2 section");
    // v1 goes out one cluster at a time and becomes the current revision.
    assert!(
        v1_part.contains("cluster1=v1 cluster2=- cluster3=-"),
        "{stdout}"
    );
    assert!(
        v1_part
            .contains("Progressing=True/NewManifestWorkAvailable PlacementRolledOut=True/Complete"),
        "{stdout}"
    );
    // v2 reaches cluster1 only, then v1 is back everywhere with the abort reported.
    assert!(
        v2_part.contains("cluster1=v2 cluster2=v1 cluster3=v1"),
        "{stdout}"
    );
    let last_round = v2_part.rsplit("  round ").next().unwrap_or_default();
    assert!(
        last_round.contains("cluster1=v1 cluster2=v1 cluster3=v1"),
        "{stdout}"
    );
    assert!(
        last_round
            .contains("Progressing=False/RolloutAborted PlacementRolledOut=False/RolloutDegraded"),
        "{stdout}"
    );
    assert!(!last_round.contains("aborted=-"), "{stdout}");
    // Two revisions in the history, v1's still the current one.
    let current = v1_part
        .rsplit("current=")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_default();
    assert!(
        stdout.contains("revision history (ControllerRevisions): "),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("app-{current}")), "{stdout}");
    assert!(
        last_round.contains(&format!("current={current} ")),
        "{stdout}"
    );
}

const REPLICA_SET: &str = r#"apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: web
  namespace: apps
spec:
  revisionHistoryLimit: 3
  placementRefs:
    - name: nowhere
      rolloutStrategy:
        type: Progressive
        failureStrategy: AbortAll
  manifestWorkTemplate:
    workload:
      manifests:
        - apiVersion: v1
          kind: ConfigMap
          metadata:
            name: web
            namespace: default
          data:
            version: v1
"#;

#[test]
fn the_hub_controller_says_what_rollback_does() {
    let help = run(env!("CARGO_BIN_EXE_ocm-hub-controller"), &["--help"]);
    assert!(help.out().contains("--rollback"), "{}", help.stdout);
    assert!(help.out().contains("revision history"), "{}", help.stdout);
}

/// `ocm-hub-controller --rollback` against `ocm-fake-apiserver`, read back with kubectl: the
/// replica set's template is recorded as a ControllerRevision it owns, and its hash is the
/// status's update revision.
#[test]
fn the_hub_controller_records_revisions_with_rollback_on() {
    if !kubectl_available() {
        return;
    }
    let mut options = FleetOptions::new(1).no_agents();
    // The opt-ins' fields are in the extended CRDs.
    options.server_args = vec!["--extended-crds".into()];
    options.hub_controller = Some(vec!["--rollback".into()]);
    let fleet = Fleet::start("mwrs-rollback-flag", options);
    kubectl_stdin(
        &fleet.hub,
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
    )
    .out();
    kubectl_stdin(&fleet.hub, &["apply", "-f", "-"], REPLICA_SET).out();
    let revision = kubectl_until(
        &fleet.hub,
        &[
            "get",
            "controllerrevisions",
            "-n",
            "apps",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the template's ControllerRevision",
        |out| out.starts_with("web-") && !out.contains(' '),
    );
    // The status names the revision by its template hash (the revision is `<name>-<hash>`).
    let hash = kubectl_until(
        &fleet.hub,
        &[
            "get",
            "manifestworkreplicaset",
            "web",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.updateRevision}",
        ],
        "the update revision in the status",
        |out| !out.is_empty(),
    );
    assert_eq!(revision.trim(), format!("web-{}", hash.trim()));
    let owner = kubectl(
        &fleet.hub,
        &[
            "get",
            "controllerrevision",
            revision.trim(),
            "-n",
            "apps",
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}",
        ],
    );
    assert_eq!(owner.out().trim(), "ManifestWorkReplicaSet/web");
}

/// `ocm-hub-controller --rollback` on a hub that serves upstream's CRD (the default): the
/// rollback fields are pruned, and the replica set says so instead of the opt-in silently
/// doing nothing.
#[test]
fn with_upstreams_crd_the_replica_set_says_the_rollback_fields_are_pruned() {
    if !kubectl_available() {
        return;
    }
    let mut options = FleetOptions::new(1).no_agents();
    options.hub_controller = Some(vec!["--rollback".into()]);
    let fleet = Fleet::start("mwrs-rollback-pruned", options);
    kubectl_stdin(
        &fleet.hub,
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
    )
    .out();
    // kubectl validates strictly: the rollback fields themselves are refused by upstream's
    // CRD, so the replica set carries none.
    let refused = kubectl_stdin(&fleet.hub, &["apply", "-f", "-"], REPLICA_SET);
    assert!(
        refused
            .stderr
            .contains("unknown field \"spec.revisionHistoryLimit\""),
        "{}",
        refused.stderr
    );
    let plain = "apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\n\
                 metadata:\n  name: web\n  namespace: apps\nspec:\n  placementRefs:\n  - name: all\n  \
                 manifestWorkTemplate:\n    workload:\n      manifests:\n      - apiVersion: v1\n        \
                 kind: ConfigMap\n        metadata:\n          name: web\n          namespace: default\n";
    kubectl_stdin(&fleet.hub, &["apply", "-f", "-"], plain).out();
    let reason = kubectl_until(
        &fleet.hub,
        &[
            "get",
            "manifestworkreplicaset",
            "web",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"OptInFieldsInstalled\")].reason}",
        ],
        "the OptInFieldsInstalled condition",
        |out| !out.is_empty(),
    );
    assert_eq!(reason, "FieldsPruned");
    let log = std::fs::read_to_string(fleet.dir.join("ocm-hub-controller.log")).unwrap_or_default();
    assert_eq!(
        log.matches("prunes fields of enabled opt-ins").count(),
        1,
        "{log}"
    );
}
