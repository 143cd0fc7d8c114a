//! What every command-line user expects of our binaries: `--help` opens with what the binary
//! does (and does nothing else), a closed output pipe (`| head`) ends the command quietly, and
//! logs carry no colour codes when they do not go to a terminal.

use crate::common;

use std::process::{Command, Stdio};

/// `(binary, start of its --help)`.
const HEADLINES: &[(&str, &str)] = &[
    (
        env!("CARGO_BIN_EXE_ocm-clusteradm"),
        "Manage ManifestWorks, ManagedClusters",
    ),
    (
        env!("CARGO_BIN_EXE_ocm-score-provider"),
        "Write an AddOnPlacementScore for one managed cluster",
    ),
    (
        env!("CARGO_BIN_EXE_quickstart"),
        "Run the OCM quickstart in one process",
    ),
    (
        env!("CARGO_BIN_EXE_ocm-placement-sim"),
        "Schedule Placements offline",
    ),
    (
        env!("CARGO_BIN_EXE_ocm-crdgen"),
        "Write the OCM CustomResourceDefinitions",
    ),
    (
        env!("CARGO_BIN_EXE_resource-usage-addon"),
        "The resource-usage-collect addon",
    ),
    (env!("CARGO_BIN_EXE_ocm-deploy"), "Print the manifests"),
];

#[test]
fn help_opens_with_what_the_binary_does() {
    for (binary, headline) in HEADLINES {
        let ran = common::run(binary, &["--help"]);
        assert!(ran.out().starts_with(headline), "{binary}:\n{}", ran.stdout);
        assert!(
            !ran.stdout
                .starts_with("Example binaries for the OCM Rust SDK"),
            "{binary} shows the package description"
        );
    }
}

/// Runs `binary args` with its standard output closed before it writes anything.
fn closed_stdout(binary: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(binary)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start binary");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/placement-sim/hub"
    );
    let cases: &[(&str, &[&str])] = &[
        (env!("CARGO_BIN_EXE_ocm-crdgen"), &[]),
        (env!("CARGO_BIN_EXE_ocm-crdgen"), &["--list"]),
        (
            env!("CARGO_BIN_EXE_ocm-placement-sim"),
            &[fixtures, "--now", "2026-01-01T00:00:00Z"],
        ),
        (env!("CARGO_BIN_EXE_quickstart"), &[]),
    ];
    for (binary, args) in cases {
        let (code, stderr) = closed_stdout(binary, args);
        assert_eq!(code, Some(0), "{binary} {args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{binary}: {stderr}"
        );
    }
    // Through a real shell pipeline, as a user types it.
    let script = format!(
        "set -o pipefail; {} | head -1",
        env!("CARGO_BIN_EXE_ocm-crdgen")
    );
    let ran = common::run("bash", &["-c", &script]);
    assert_eq!(ran.out(), "---\n");
    assert!(ran.stderr.is_empty(), "{}", ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_carry_no_colour_codes_off_a_terminal() {
    let dir = common::scratch("hygiene-logs");
    let hub = ocm_testkit::FakeHub::new(1).expect("fake hub");
    let server = hub.hub().serve_loopback().await.expect("loopback");
    let kubeconfig = dir.join("hub.kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let kc = kubeconfig.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        common::run(
            env!("CARGO_BIN_EXE_ocm-score-provider"),
            &[
                "--hub-kubeconfig",
                &kc,
                "--cluster-name",
                "cluster1",
                "--score-name",
                "cpu",
                "--raw",
                "--value",
                "3",
                "--once",
            ],
        )
    })
    .await
    .unwrap();
    assert!(out.ok(), "{}", out.stderr);
    assert!(
        out.stderr.contains("score round"),
        "no log line: {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains('\x1b'),
        "colour codes in {:?}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The same expectations for `ocm-fake-apiserver`, `ocm-hub-controller` and `ocm-work-agent`:
/// `--help` opens with the doc comment's headline (not the package description) and logs
/// written to files carry no colour codes (`ocm_examples::logging`).
#[test]
fn the_other_binaries_describe_themselves_and_log_without_colour() {
    for (binary, headline) in [
        (
            env!("CARGO_BIN_EXE_ocm-fake-apiserver"),
            "Serve a fake OCM hub",
        ),
        (
            env!("CARGO_BIN_EXE_ocm-hub-controller"),
            "Run the OCM hub controllers",
        ),
        (
            env!("CARGO_BIN_EXE_ocm-work-agent"),
            "Apply the hub's ManifestWorks",
        ),
    ] {
        let ran = common::run(binary, &["--help"]);
        assert!(ran.out().starts_with(headline), "{binary}:\n{}", ran.stdout);
    }
    if !common::kubectl_available() {
        return;
    }
    // Logs (standard error) go to files in the fleet's directory, not to a terminal.
    let fleet = common::Fleet::start("hygiene-other-logs", common::FleetOptions::new(1));
    std::thread::sleep(std::time::Duration::from_secs(1));
    for log in ["ocm-hub-controller.log", "agent-cluster1.log"] {
        let text = std::fs::read_to_string(fleet.dir.join(log)).unwrap_or_default();
        assert!(!text.is_empty(), "{log} is empty");
        assert!(!text.contains('\x1b'), "colour codes in {log}: {text:?}");
    }
}
