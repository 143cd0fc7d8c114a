//! The quickstart (README's first command) runs to completion and shows the whole flow.

use std::process::Command;

#[test]
fn quickstart_runs_the_whole_flow() {
    let output = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .output()
        .expect("run quickstart");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "quickstart failed:\n{stdout}\n{stderr}"
    );
    for expected in [
        "nginx-decision-1 -> cluster1, cluster2",
        "PlacementSatisfied=True (AllDecisionsScheduled: All cluster decisions scheduled)",
        "rollout complete (PlacementRolledOut=True)",
        "nginx:1.27",
        "cluster1: nginx-deployment deleted",
        "no ManifestWork left on the hub",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // Progressive with maxConcurrency 1: a round where only cluster1 has its work.
    let first_batch = stdout
        .split("round")
        .any(|round| round.contains("cluster1   nginx") && round.contains("cluster2   -"));
    assert!(first_batch, "no single-cluster batch shown:\n{stdout}");
    // cluster3 (env=dev) never gets the work.
    assert!(!stdout.contains("cluster3   nginx"), "{stdout}");
}
