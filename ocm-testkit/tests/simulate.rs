//! Workload simulators report healthy status for workloads.

use ocm_testkit::wait::wait_for;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_testkit::FakeCluster;
use serde_json::json;

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
    wait_for("the simulated workload", Duration::from_secs(2), || async {
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
    wait_for("the simulated workload", Duration::from_secs(2), || async {
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
    wait_for("the simulated workload", Duration::from_secs(2), || async {
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
    wait_for("the simulated workload", Duration::from_secs(2), || async {
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

/// With pods, a Deployment runs its Pods through a ReplicaSet named after the template's
/// hash; a changed template rolls to a new ReplicaSet (the old one scaled to 0), a deleted
/// Pod is replaced, and deleting the Deployment collects its ReplicaSets and Pods.
#[tokio::test]
async fn deployments_run_pods_through_replica_sets() {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{DeleteParams, ListParams};
    let cluster = FakeCluster::new();
    let _sim = cluster.simulate_workloads_with_pods();
    let deploys: Api<Deployment> = Api::default_namespaced(cluster.client());
    let sets: Api<ReplicaSet> = Api::default_namespaced(cluster.client());
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    deploys.create(&PostParams::default(), &d).await.unwrap();
    let running = |n: usize| {
        let pods = pods.clone();
        async move {
            let list = pods.list(&ListParams::default()).await.unwrap();
            let up: Vec<Pod> = list
                .items
                .into_iter()
                .filter(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                })
                .collect();
            (up.len() == n).then_some(up)
        }
    };
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        running(3).await.is_some()
    })
    .await;
    let first = sets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(first.len(), 1);
    let rs = &first[0];
    let rs_name = rs.metadata.name.clone().unwrap();
    let hash = rs.metadata.labels.as_ref().unwrap()["pod-template-hash"].clone();
    assert_eq!(rs_name, format!("web-{hash}"));
    assert!(
        hash.chars()
            .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
            && hash.len() <= 10,
        "{hash}"
    );
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Deployment", "web")
    );
    assert_eq!(owner.controller, Some(true));
    let up = running(3).await.unwrap();
    for p in &up {
        let name = p.metadata.name.as_deref().unwrap();
        assert!(name.starts_with(&format!("{rs_name}-")), "{name}");
        assert_eq!(name.len(), rs_name.len() + 6, "{name}");
        assert_eq!(p.metadata.labels.as_ref().unwrap()["app"], "web");
        assert_eq!(
            p.metadata.owner_references.as_ref().unwrap()[0].name,
            rs_name
        );
    }
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        let d = deploys.get("web").await.unwrap();
        let message = d.status.and_then(|s| s.conditions).and_then(|cs| {
            cs.into_iter()
                .find(|c| c.type_.as_deref() == Some("Progressing"))
                .and_then(|c| c.message)
        });
        message
            == Some(format!(
                "ReplicaSet \"{rs_name}\" has successfully progressed."
            ))
    })
    .await;

    // A deleted Pod is replaced.
    let gone = up[0].metadata.name.clone().unwrap();
    pods.delete(&gone, &DeleteParams::default()).await.unwrap();
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        running(3)
            .await
            .is_some_and(|up| up.iter().all(|p| p.metadata.name.as_ref() != Some(&gone)))
    })
    .await;

    // Scaling down removes Pods; a new template rolls to a new ReplicaSet.
    let p = json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}});
    deploys
        .patch("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        running(2).await.is_some_and(|up| {
            up.iter()
                .all(|p| p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some("nginx:2"))
        })
    })
    .await;
    let all = sets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), 2);
    let old = all
        .iter()
        .find(|r| r.metadata.name.as_ref() == Some(&rs_name))
        .unwrap();
    assert_eq!(old.spec.replicas, Some(0));

    // Deleting the Deployment collects everything it owns.
    deploys
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        sets.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
            && pods
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .is_empty()
    })
    .await;
}

/// Without pods (the default), a Deployment gets no ReplicaSet and no Pods.
#[tokio::test]
async fn deployments_run_no_pods_by_default() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::ListParams;
    let cluster = FakeCluster::new();
    let _sim = cluster.simulate_workloads();
    let deploys: Api<Deployment> = Api::default_namespaced(cluster.client());
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    deploys.create(&PostParams::default(), &d).await.unwrap();
    wait_for("the simulated workload", Duration::from_secs(2), || async {
        let d = deploys.get("web").await.unwrap();
        d.status.and_then(|s| s.ready_replicas) == Some(2)
    })
    .await;
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    assert!(
        pods.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
