//! `ocm-score-provider` as a real process against a loopback fake hub.

use std::process::Command;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_testkit::FakeCluster;
use serde_json::json;

fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ocm-score-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[tokio::test]
async fn writes_a_normalised_score_once() {
    let dir = scratch("once");
    let hub = FakeCluster::new();
    ocm_testkit::install_crds(&hub).expect("CRDs");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "cluster1"}})).unwrap();
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let server = hub.serve_loopback().await.expect("loopback");
    let kubeconfig = dir.join("hub.kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let value_file = dir.join("value");
    std::fs::write(&value_file, "48 cores\n").unwrap();

    let exe = env!("CARGO_BIN_EXE_ocm-score-provider");
    let kc = kubeconfig.to_str().unwrap().to_string();
    let vf = value_file.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(exe)
            .args(["--hub-kubeconfig", &kc, "--cluster-name", "cluster1"])
            .args(["--score-name", "cpuAvailable", "--min", "0", "--max", "64"])
            .args(["--value-file", &vf, "--valid-for", "5m", "--once"])
            .output()
            .expect("run ocm-score-provider")
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client(), "cluster1");
    let score = api
        .get("resource-usage-score")
        .await
        .expect("score written");
    // 200 * 48 / 64 - 100 = 50
    assert_eq!(score.score("cpuAvailable"), Some(50));
    assert!(score.status.unwrap().valid_until.is_some());

    // A bad source is a clear error.
    let exe = env!("CARGO_BIN_EXE_ocm-score-provider");
    let kc = kubeconfig.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(exe)
            .args(["--hub-kubeconfig", &kc, "--cluster-name", "cluster1"])
            .args([
                "--score-name",
                "x",
                "--value-command",
                "echo not-a-number",
                "--once",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a number"));
    let _ = std::fs::remove_dir_all(dir);
}
