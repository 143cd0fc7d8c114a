//! The `mwrs-rollback` example runs to completion: v1 rolls out, v2 fails on its first
//! cluster and is rolled back there.

use std::process::Command;

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
