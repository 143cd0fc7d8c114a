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
        "cluster2: nginx-deployment deleted",
        "no ManifestWork left on the hub",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // Progressive with maxConcurrency 1: a round where only cluster1 has its work.
    let rounds: Vec<&str> = stdout.split("  round ").skip(1).collect();
    let first_batch = rounds
        .iter()
        .any(|round| round.contains("cluster1   nginx") && round.contains("cluster2   -"));
    assert!(first_batch, "no single-cluster batch shown:\n{stdout}");
    // cluster3 (env=dev) never gets the work, and so is not said to lose it.
    assert!(!stdout.contains("cluster3   nginx"), "{stdout}");
    assert!(!stdout.contains("cluster3: nginx-deployment"), "{stdout}");

    // Every table: feedback under its own heading, named as the rules name the values, no
    // column name twice, every row as wide as the header, and no round repeats the previous.
    let mut previous = String::new();
    for round in &rounds {
        let body = round.split("  rollout complete").next().unwrap_or(round);
        let table: Vec<&str> = body
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert!(
            table[0].trim_start().starts_with("STATUS FEEDBACK"),
            "{body}"
        );
        let header: Vec<&str> = table[1].split_whitespace().collect();
        assert_eq!(
            header,
            [
                "CLUSTER",
                "WORK",
                "APPLIED",
                "AVAILABLE",
                "ReadyReplicas",
                "AvailableReplicas",
                "image"
            ]
        );
        let feedback_at = table[1].find("ReadyReplicas").unwrap();
        assert_eq!(
            table[0].find("STATUS FEEDBACK").unwrap(),
            feedback_at,
            "{body}"
        );
        for row in &table[2..] {
            assert_eq!(
                row.split_whitespace().count(),
                header.len(),
                "unaligned row {row:?}"
            );
            let cell = row.get(feedback_at..).unwrap_or_default();
            assert!(
                !cell.starts_with(' '),
                "row {row:?} not aligned with the header"
            );
        }
        let rows = table[2..].join("\n");
        assert_ne!(
            rows, previous,
            "a round repeats the previous one:\n{stdout}"
        );
        previous = rows;
    }
}

#[test]
fn quickstart_help_describes_it_without_running_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .arg("--help")
        .output()
        .expect("run quickstart --help");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(
        stdout.starts_with("Run the OCM quickstart in one process"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("==>"),
        "--help started the demo:\n{stdout}"
    );
}
