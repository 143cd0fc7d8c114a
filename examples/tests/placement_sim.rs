//! `ocm-placement-sim` as a process on the fixture files under
//! `tests/fixtures/placement-sim/`: a kubectl-style List, a multi-document YAML file and a
//! JSON List, with the output checked field by field; plus the error cases.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/placement-sim")
        .join(path)
}

/// Runs the simulator; returns (success, stdout, stderr).
fn sim(args: &[&str], paths: &[PathBuf]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ocm-placement-sim"))
        .args(paths)
        .args(args)
        .output()
        .expect("run ocm-placement-sim");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn placements(stdout: &str) -> (Vec<Value>, Value) {
    let doc: Value = serde_json::from_str(stdout).expect("one JSON document");
    let list = doc["placements"].as_array().expect("placements").clone();
    (list, doc["ignoredObjects"].clone())
}

fn find<'a>(list: &'a [Value], name: &str) -> &'a Value {
    list.iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("placement {name}"))
}

#[test]
fn schedules_every_placement_of_the_fixtures() {
    let (ok, stdout, stderr) = sim(&["--now", "2026-01-01T00:05:00Z"], &[fixture("hub")]);
    assert!(ok, "{stderr}");
    let (list, ignored) = placements(&stdout);
    assert_eq!(ignored, json!({"ConfigMap": 1}));
    let names: Vec<&str> = list.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["addon", "all", "paused", "tolerating", "top-cpu"],
        "sorted"
    );

    // Defaults: the set without spec is ExclusiveClusterSetLabel, the prioritizer without
    // type is BuiltIn with weight 1, and the default prioritizers apply in Additive mode.
    let all = find(&list, "all");
    assert_eq!(
        all["selected"],
        json!(["c1", "c2"]),
        "c3 is tainted unreachable"
    );
    assert_eq!(all["scores"], json!({"c1": 100, "c2": 100}));
    assert_eq!(all["numberOfSelectedClusters"], 2);
    assert_eq!(all["requeueAfterSeconds"], Value::Null);
    assert_eq!(
        all["decisionGroups"],
        json!([
            {"decisionGroupIndex": 0, "decisionGroupName": "", "decisions": ["all-decision-1"], "clusterCount": 1},
            {"decisionGroupIndex": 1, "decisionGroupName": "", "decisions": ["all-decision-2"], "clusterCount": 1}
        ])
    );
    assert_eq!(
        all["placementDecisions"][1],
        json!({"name": "all-decision-2", "decisions": ["c2"], "labels": {
            "cluster.open-cluster-management.io/placement": "all",
            "cluster.open-cluster-management.io/decision-group-index": "1",
            "cluster.open-cluster-management.io/decision-group-name": ""}})
    );
    assert_eq!(
        all["conditions"],
        json!([
            {"type": "PlacementMisconfigured", "status": "False", "reason": "Succeedconfigured",
             "message": "Placement configurations check pass"},
            {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled",
             "message": "All cluster decisions scheduled"}
        ])
    );

    let top = find(&list, "top-cpu");
    assert_eq!(top["selected"], json!(["c2"]));
    assert_eq!(top["scores"], json!({"c1": -100, "c2": 100}));

    let addon = find(&list, "addon");
    assert_eq!(addon["selected"], json!(["c1"]));
    assert_eq!(
        addon["scores"],
        json!({"c1": 160, "c2": -40}),
        "weight 2 × AddOn score"
    );

    // c3 was decided before it became unreachable at 00:00; tolerated for 600 s.
    let tolerating = find(&list, "tolerating");
    assert_eq!(tolerating["selected"], json!(["c1", "c3"]));
    assert_eq!(tolerating["requeueAfterSeconds"], json!(300.0));
    assert_eq!(
        tolerating["placementDecisions"][0]["name"],
        "tolerating-decision-1"
    );

    assert_eq!(
        find(&list, "paused")["skipped"],
        "scheduling is disabled by annotation"
    );
    assert!(all.get("timing").is_none() && all.get("explain").is_none());
}

#[test]
fn the_toleration_runs_out_later() {
    let (ok, stdout, stderr) = sim(&["--now", "2026-01-01T00:10:01Z"], &[fixture("hub")]);
    assert!(ok, "{stderr}");
    let (list, _) = placements(&stdout);
    let tolerating = find(&list, "tolerating");
    assert_eq!(tolerating["selected"], json!(["c1"]));
    assert_eq!(tolerating["requeueAfterSeconds"], Value::Null);
}

#[test]
fn runs_and_explain_add_timing_and_breakdown() {
    let files = [
        fixture("hub/placements.yaml"),
        fixture("hub/clusters.yaml"),
        fixture("hub/scores.json"),
    ];
    let (ok, stdout, stderr) = sim(
        &["--now", "2026-01-01T00:05:00Z", "--runs", "5", "--explain"],
        &files,
    );
    assert!(ok, "{stderr}");
    let (list, _) = placements(&stdout);
    let all = find(&list, "all");
    let timing = &all["timing"];
    assert_eq!(timing["runs"], 5);
    let median = timing["scheduleMedianMs"].as_f64().unwrap();
    let min = timing["scheduleMinMs"].as_f64().unwrap();
    assert!(min >= 0.0 && min <= median, "{timing}");
    let explain = &all["explain"];
    assert_eq!(
        explain["filters"],
        json!([
            {"filters": "Predicate", "survivors": ["c1", "c2", "c3"]},
            {"filters": "Predicate,TaintToleration", "survivors": ["c1", "c2"]}
        ])
    );
    assert_eq!(
        explain["clusters"][2],
        json!({"cluster": "c3", "outcome": "FilteredOut", "filter": "TaintToleration"})
    );
    assert_eq!(
        explain["clusters"][0]["prioritizers"],
        json!([{"name": "Balance", "weight": 1, "score": 100}, {"name": "Steady", "weight": 1, "score": 0}])
    );
    // Same input, same decisions, whichever order the files come in.
    let (_, again, _) = sim(&["--now", "2026-01-01T00:05:00Z"], &[fixture("hub")]);
    let (again, _) = placements(&again);
    assert_eq!(
        find(&again, "addon")["selected"],
        find(&list, "addon")["selected"]
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let (ok, stdout, stderr) = sim(
        &["--now", "2026-01-01T00:00:00Z"],
        &[fixture("bad/missing-name.yaml")],
    );
    assert!(!ok);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("missing-name.yaml (document 2, line 6): Placement: has no metadata.name"),
        "{stderr}"
    );

    let (ok, _, stderr) = sim(&[], &[fixture("bad/malformed.yaml")]);
    assert!(!ok);
    assert!(
        stderr.contains("malformed.yaml (document 1, line 1): Placement apps/broken: invalid type"),
        "{stderr}"
    );

    let (ok, _, stderr) = sim(&["--now", "yesterday"], &[fixture("hub")]);
    assert!(!ok);
    assert!(
        stderr.contains("--now \"yesterday\" is not an RFC 3339 time"),
        "{stderr}"
    );

    let (ok, _, stderr) = sim(&[], &[fixture("does-not-exist.yaml")]);
    assert!(!ok);
    assert!(stderr.contains("does-not-exist.yaml"), "{stderr}");
}

#[test]
fn a_placement_that_cannot_be_scheduled_reports_its_error_and_the_others_go_on() {
    let (ok, stdout, stderr) = sim(
        &["--now", "2026-01-01T00:00:00Z"],
        &[fixture("invalid-set")],
    );
    assert!(ok, "{stderr}");
    let (list, _) = placements(&stdout);
    assert_eq!(list[0]["namespace"], "a");
    let error = list[0]["error"].as_str().expect("error");
    assert!(
        error.contains("failed to get clusters from ClusterSet \"broken\""),
        "{error}"
    );
    assert_eq!(list[1]["namespace"], "b");
    assert_eq!(list[1]["selected"], json!(["c1"]));
}

#[test]
fn reads_standard_input() {
    use std::io::Write;
    let yaml = std::fs::read_to_string(fixture("invalid-set/hub.yaml")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-placement-sim"))
        .args(["-", "--now", "2026-01-01T00:00:00Z"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(yaml.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let (list, _) = placements(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(list.len(), 2);
}
