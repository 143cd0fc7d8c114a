//! Workload simulators report healthy status for workloads.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_testkit::FakeCluster;
use serde_json::json;

async fn eventually<F, Fut>(mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached in 2 s");
}

#[tokio::test]
async fn deployments_and_jobs_become_healthy() {
    let cluster = FakeCluster::new();
    let _sim = cluster.simulate_workloads();
    let deploys: Api<Deployment> = Api::default_namespaced(cluster.client());
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    deploys.create(&PostParams::default(), &d).await.unwrap();
    eventually(|| async {
        let d = deploys.get("web").await.unwrap();
        d.status.and_then(|s| s.available_replicas) == Some(3)
    })
    .await;
    // A spec change is observed again.
    let p = json!({"spec": {"replicas": 5}});
    deploys
        .patch("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    eventually(|| async {
        let d = deploys.get("web").await.unwrap();
        let s = d.status.unwrap_or_default();
        s.observed_generation == Some(2) && s.ready_replicas == Some(5)
    })
    .await;

    let jobs: Api<Job> = Api::default_namespaced(cluster.client());
    let j: Job = serde_json::from_value(json!({
        "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "c", "image": "busybox"}]}}}
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &j).await.unwrap();
    eventually(|| async {
        let j = jobs.get("once").await.unwrap();
        j.status.and_then(|s| s.succeeded) == Some(1)
    })
    .await;
}

#[tokio::test]
async fn pods_run() {
    use k8s_openapi::api::core::v1::Pod;
    let cluster = FakeCluster::new();
    let _sim = cluster.simulate_workloads();
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let p: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &p).await.unwrap();
    eventually(|| async {
        let p = pods.get("p").await.unwrap();
        let s = p.status.unwrap_or_default();
        s.phase.as_deref() == Some("Running")
            && s.container_statuses
                .is_some_and(|c| c.len() == 1 && c[0].ready)
            && s.conditions
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    })
    .await;
}
