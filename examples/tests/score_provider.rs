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

#[tokio::test]
async fn keeps_the_score_up_to_date_periodically() {
    let dir = scratch("periodic");
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
    std::fs::write(&value_file, "10").unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-score-provider"))
        .arg("--hub-kubeconfig")
        .arg(&kubeconfig)
        .args(["--cluster-name", "cluster1", "--score-name", "latency"])
        .args(["--resource-name", "net", "--min", "0", "--max", "20"])
        .arg("--value-file")
        .arg(&value_file)
        .args(["--interval", "100ms"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start ocm-score-provider");
    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client(), "cluster1");
    let wait_for = |want: i32| {
        let api = api.clone();
        async move {
            for _ in 0..100 {
                if let Ok(Some(s)) = api.get_opt("net").await
                    && s.score("latency") == Some(want)
                {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            false
        }
    };
    let first = wait_for(0).await;
    std::fs::write(&value_file, "15").unwrap();
    let second = wait_for(50).await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(first, "the first round writes 0 (10 of 0..20)");
    assert!(second, "a later round picks up the new value");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn writes_raw_scores_next_to_each_other() {
    let dir = scratch("raw");
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
    let run = |args: Vec<&'static str>| {
        let kc = kubeconfig.to_str().unwrap().to_string();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_ocm-score-provider"))
                .args([
                    "--hub-kubeconfig",
                    &kc,
                    "--cluster-name",
                    "cluster1",
                    "--once",
                ])
                .args(args)
                .output()
                .expect("run ocm-score-provider")
        })
    };
    // The documentation's scores: cpuAvailable 12 and memAvailable 4, as they are.
    for (name, value) in [("cpuAvailable", "12"), ("memAvailable", "4")] {
        let out = run(vec!["--score-name", name, "--raw", "--value", value])
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client(), "cluster1");
    let score = api
        .get("resource-usage-score")
        .await
        .expect("score written");
    assert_eq!(score.score("cpuAvailable"), Some(12));
    assert_eq!(score.score("memAvailable"), Some(4));

    // Out of range, or mixed with normalisation bounds: a clear error, nothing written.
    let out = run(vec![
        "--score-name",
        "cpuAvailable",
        "--raw",
        "--value",
        "250",
    ])
    .await
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("raw score 250 is outside the valid range [-100, 100]"),
        "{err}"
    );
    let out = run(vec![
        "--score-name",
        "x",
        "--raw",
        "--max",
        "5",
        "--value",
        "1",
    ])
    .await
    .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    let score = api.get("resource-usage-score").await.unwrap();
    assert_eq!(score.score("cpuAvailable"), Some(12));
    let _ = std::fs::remove_dir_all(dir);
}
