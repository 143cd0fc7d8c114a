//! The placement fan-out (one ManifestWork per decided cluster) and the work applier against an
//! in-process fake hub.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1beta1::ClustersTracker;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::constants::labels;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_placement::consumer::PlacementDecisionGetter;
use ocm_testkit::FakeHub;
use ocm_work::applier::WorkApplier;
use ocm_work::fanout::{PlacementFanout, Render, finalizer};
use serde_json::json;

use crate::support;

const NS: &str = "apps";

async fn setup(n: usize) -> (FakeHub, Client) {
    let hub = FakeHub::new(n).expect("hub");
    let client = hub.hub().client();
    hub.hub()
        .apply_yaml(&format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}}}\n---\n\
             apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
             metadata: {{name: web, namespace: {NS}}}\nspec: {{}}\n"
        ))
        .expect("fixtures");
    (hub, client)
}

/// Writes the placement's decisions as the scheduler would: one slice per group.
async fn decide(client: &Client, groups: &[(&str, &[&str])]) {
    let api: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    for old in api
        .list(&ListParams::default().labels(&format!("{}=web", labels::PLACEMENT)))
        .await
        .unwrap()
        .items
    {
        api.delete(&old.name_any(), &DeleteParams::default())
            .await
            .unwrap();
    }
    for (i, (group, clusters)) in groups.iter().enumerate() {
        let name = format!("web-decision-{}", i + 1);
        let mut pd = PlacementDecision::default();
        pd.metadata.name = Some(name.clone());
        pd.metadata.labels = Some(BTreeMap::from([
            (labels::PLACEMENT.to_string(), "web".to_string()),
            (labels::DECISION_GROUP_INDEX.to_string(), i.to_string()),
            (labels::DECISION_GROUP_NAME.to_string(), group.to_string()),
        ]));
        api.create(&PostParams::default(), &pd).await.unwrap();
        let decisions: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c, "reason": ""}))
            .collect();
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": decisions}})),
        )
        .await
        .unwrap();
    }
}

fn render_ok(image: &'static str) -> Arc<Render<'static>> {
    Arc::new(move |cluster: &str| {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "hello", "namespace": "default"},
            "data": {"cluster": cluster, "image": image}});
        Ok(ManifestWorkSpec {
            workload: Some(ManifestsTemplate {
                manifests: Some(vec![Manifest::new(cm)]),
            }),
            ..Default::default()
        })
    })
}

fn clusters_of(works: &BTreeMap<String, ManifestWork>) -> Vec<&str> {
    works.keys().map(String::as_str).collect()
}

#[tokio::test]
async fn tracker_reports_added_and_removed_clusters_from_the_hub() {
    let (_hub, client) = setup(3).await;
    let getter = PlacementDecisionGetter::new(client.clone());
    let mut tracker = ClustersTracker::new(NS, "web");
    decide(&client, &[("canary", &["cluster1"]), ("", &["cluster2"])]).await;
    let changes = getter.refresh(&mut tracker).await.unwrap();
    assert_eq!(
        changes.added.iter().collect::<Vec<_>>(),
        ["cluster1", "cluster2"]
    );
    assert!(changes.removed.is_empty());
    assert_eq!(tracker.group_indexes("canary"), [0]);

    decide(&client, &[("canary", &["cluster1", "cluster3"])]).await;
    let changes = getter.refresh(&mut tracker).await.unwrap();
    assert_eq!(changes.added.iter().collect::<Vec<_>>(), ["cluster3"]);
    assert_eq!(changes.removed.iter().collect::<Vec<_>>(), ["cluster2"]);
    assert!(getter.placement(NS, "web").await.unwrap().is_some());
    assert!(getter.placement(NS, "nope").await.unwrap().is_none());
}

#[tokio::test]
async fn one_work_per_decided_cluster_follows_the_decisions() {
    let (hub, client) = setup(3).await;
    let fanout = PlacementFanout::new(client.clone(), "hello", NS, "web", "hello-work").unwrap();
    decide(&client, &[("", &["cluster1", "cluster2"])]).await;
    let render = render_ok("v1");
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(out.applied, ["cluster1", "cluster2"]);
    let works = fanout.works().await.unwrap();
    assert_eq!(clusters_of(&works), ["cluster1", "cluster2"]);
    let cm = &works["cluster2"].spec.manifests()[0];
    assert_eq!(cm.as_value()["data"]["cluster"], "cluster2");

    // A second round with nothing changed writes nothing.
    let writes = hub.hub().journal().writes();
    fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(hub.hub().journal().writes(), writes);

    // The decisions move: cluster1's work goes, cluster3's comes.
    decide(&client, &[("", &["cluster2", "cluster3"])]).await;
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(out.deleted, ["cluster1"]);
    assert_eq!(
        clusters_of(&fanout.works().await.unwrap()),
        ["cluster2", "cluster3"]
    );

    // A changed render rolls through.
    fanout.reconcile(render_ok("v2").as_ref()).await.unwrap();
    for w in fanout.works().await.unwrap().values() {
        assert_eq!(w.spec.manifests()[0].as_value()["data"]["image"], "v2");
    }
}

#[tokio::test]
async fn a_failing_cluster_does_not_stop_the_others() {
    let (_hub, client) = setup(3).await;
    let fanout = PlacementFanout::new(client.clone(), "hello", NS, "web", "hello-work").unwrap();
    decide(&client, &[("", &["cluster1", "cluster2", "cluster3"])]).await;
    let ok = render_ok("v1");
    let render: Arc<Render<'static>> = Arc::new(move |cluster: &str| {
        if cluster == "cluster2" {
            Err("no image for cluster2".to_string())
        } else {
            ok(cluster)
        }
    });
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(out.applied, ["cluster1", "cluster3"]);
    assert_eq!(
        out.failed,
        [("cluster2".to_string(), "no image for cluster2".to_string())]
    );
    // An empty work is refused by the hub's rules, for that cluster only.
    let empty: Arc<Render<'static>> = Arc::new(|cluster: &str| {
        if cluster == "cluster3" {
            Ok(ManifestWorkSpec::default())
        } else {
            render_ok("v1")(cluster)
        }
    });
    let out = fanout.reconcile(empty.as_ref()).await.unwrap();
    assert_eq!(out.failed.len(), 1);
    assert_eq!(out.failed[0].0, "cluster3");
    assert!(out.failed[0].1.contains("manifests"), "{}", out.failed[0].1);
}

#[tokio::test]
async fn deleting_the_placement_deletes_every_work() {
    let (_hub, client) = setup(2).await;
    let fanout = PlacementFanout::new(client.clone(), "hello", NS, "web", "hello-work").unwrap();
    let other = PlacementFanout::new(client.clone(), "other", NS, "web", "other-work").unwrap();
    decide(&client, &[("", &["cluster1", "cluster2"])]).await;
    fanout.reconcile(render_ok("v1").as_ref()).await.unwrap();
    other.reconcile(render_ok("v1").as_ref()).await.unwrap();
    let placements: Api<Placement> = Api::namespaced(client.clone(), NS);
    let p = placements.get("web").await.unwrap();
    assert!(p.finalizers().contains(&finalizer("hello")));
    assert!(p.finalizers().contains(&finalizer("other")));

    placements
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    // The finalizers hold the placement until each fan-out cleaned up.
    assert!(placements.get_opt("web").await.unwrap().is_some());
    let out = fanout.reconcile(render_ok("v1").as_ref()).await.unwrap();
    assert!(out.placement_deleted);
    assert_eq!(out.deleted, ["cluster1", "cluster2"]);
    assert!(fanout.works().await.unwrap().is_empty());
    assert_eq!(
        other.works().await.unwrap().len(),
        2,
        "other fan-outs keep theirs"
    );
    assert!(placements.get_opt("web").await.unwrap().is_some());
    other.reconcile(render_ok("v1").as_ref()).await.unwrap();
    assert!(placements.get_opt("web").await.unwrap().is_none());
    assert!(other.works().await.unwrap().is_empty());
    // Reconciling a fan-out whose placement is gone is harmless.
    let again = fanout.reconcile(render_ok("v1").as_ref()).await.unwrap();
    assert!(again.placement_deleted && again.deleted.is_empty());
    assert!(!again.placement_missing, "it was deleted, not missing");
}

/// A fan-out of a Placement that was never there (a misspelt name) says so, rather than
/// reporting a deletion, and writes nothing; `run` logs it once.
#[tokio::test]
async fn a_missing_placement_is_reported_as_missing_not_deleted() {
    let (_hub, client) = setup(2).await;
    decide(&client, &[("", &["cluster1", "cluster2"])]).await;
    let typo = PlacementFanout::new(client.clone(), "hello", NS, "wbe", "hello-work").unwrap();
    let out = typo.reconcile(render_ok("v1").as_ref()).await.unwrap();
    assert!(out.placement_missing, "{out:?}");
    assert!(!out.placement_deleted, "{out:?}");
    assert!(out.applied.is_empty() && out.deleted.is_empty());
    assert!(typo.works().await.unwrap().is_empty());

    let runner = typo.clone();
    let warnings =
        support::warnings_while_running(Duration::from_millis(300), "not found", |shutdown| {
            runner.run(render_ok("v1"), Duration::from_millis(20), shutdown)
        })
        .await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("Placement apps/wbe not found"),
        "{}",
        warnings[0]
    );
}

#[tokio::test]
async fn invalid_names_are_refused() {
    let (_hub, client) = setup(1).await;
    let err = PlacementFanout::new(client, "Bad/Owner", NS, "web", "w").unwrap_err();
    assert!(err.to_string().contains("must be a label value"), "{err}");
}

/// The work the applier tests write: one ConfigMap, labelled `team: x`.
fn team_work() -> ManifestWork {
    ocm_api::builder::ManifestWorkBuilder::new("w", "cluster1")
        .yaml(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
        )
        .unwrap()
        .label("team", "x")
        .build()
        .unwrap()
}

#[tokio::test]
async fn applier_updates_and_deletes_and_skips_no_ops() {
    let (hub, client) = setup(1).await;
    let applier = WorkApplier::new(client.clone());
    let mut work = team_work();
    let created = applier.apply(&work).await.unwrap();
    assert_eq!(created.labels()["team"], "x");
    // Another applier (no cache) also sees the live work as equal and writes nothing.
    let writes = hub.hub().journal().writes();
    WorkApplier::new(client.clone()).apply(&work).await.unwrap();
    assert_eq!(hub.hub().journal().writes(), writes);
    // A label dropped by the applier goes; the spec change lands.
    work.metadata.labels = None;
    work.spec
        .workload
        .as_mut()
        .unwrap()
        .manifests
        .as_mut()
        .unwrap()[0]
        .as_value_mut()["data"] = json!({"k": "v"});
    let updated = applier.apply(&work).await.unwrap();
    assert!(updated.labels().get("team").is_none());
    assert_eq!(updated.spec.manifests()[0].as_value()["data"]["k"], "v");
    applier.delete("cluster1", "w").await.unwrap();
    applier.delete("cluster1", "w").await.unwrap();
    let api: Api<ManifestWork> = Api::namespaced(client, "cluster1");
    assert!(api.get_opt("w").await.unwrap().is_none());
    let err = applier.apply(&ManifestWork::default()).await.unwrap_err();
    assert!(
        err.to_string().contains("needs a name and a namespace"),
        "{err}"
    );
}

/// The applier writes as sdk-go's: a merge patch from the live work, guarded by its uid and
/// resourceVersion, that removes what the required work leaves out whoever set it; a write
/// refused with a conflict is an error naming the work, and the next apply lands.
#[tokio::test]
async fn applier_patches_from_the_live_work_as_upstream() {
    let (hub, client) = setup(1).await;
    let applier = WorkApplier::new(client.clone());
    let mut work = team_work();
    applier.apply(&work).await.unwrap();
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), "cluster1");
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"other": "y"}}})),
    )
    .await
    .unwrap();
    // The hub answers the next write with a conflict, as it would a stale resourceVersion.
    hub.hub().inject(
        ocm_testkit::FaultRule::new(409)
            .verb("patch")
            .resource("manifestworks")
            .times(1),
    );
    work.metadata.labels = Some(BTreeMap::from([("team".to_string(), "z".to_string())]));
    let err = applier.apply(&work).await.unwrap_err();
    assert!(
        err.to_string().contains("update ManifestWork cluster1/w"),
        "{err}"
    );
    let updated = applier.apply(&work).await.unwrap();
    assert_eq!(
        updated.labels(),
        &BTreeMap::from([("team".to_string(), "z".to_string())])
    );
    // An update (a merge patch), not an apply, written as the applier's field manager.
    let managers: Vec<_> = updated
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| (m.manager.clone(), m.operation.clone()))
        .collect();
    assert!(
        managers.contains(&(
            Some(ocm_work::applier::DEFAULT_FIELD_MANAGER.to_string()),
            Some("Update".to_string())
        )),
        "{managers:?}"
    );
}

#[tokio::test]
async fn run_follows_decision_changes() {
    let (_hub, client) = setup(2).await;
    let fanout = PlacementFanout::new(client.clone(), "hello", NS, "web", "hello-work").unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(fanout.clone().run(
        render_ok("v1"),
        Duration::from_secs(3600),
        async move {
            let _ = stopped.await;
        },
    ));
    decide(&client, &[("", &["cluster1"])]).await;
    let wait_for = |want: Vec<&'static str>| {
        let fanout = fanout.clone();
        async move {
            for _ in 0..200 {
                let works = fanout.works().await.unwrap();
                if clusters_of(&works) == want {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("works never became {want:?}");
        }
    };
    wait_for(vec!["cluster1"]).await;
    decide(&client, &[("", &["cluster2"])]).await;
    wait_for(vec!["cluster2"]).await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("run stops on shutdown")
        .unwrap();
}

/// The fan-out reads of its Placement only its finalizers and deletion: one that does not
/// decode as a whole (a `numberOfClusters` past int32, which the API server admits) is fanned
/// out, and cleaned up once deleted, all the same. A work of the fan-out that does not decode
/// (its status holds what this SDK's types reject) is named at WARN, left out of
/// `works()`, and still deleted once its cluster is no longer decided.
#[tokio::test]
async fn a_placement_or_work_that_does_not_decode_stops_nothing() {
    let (hub, client) = setup(3).await;
    let placements: Api<kube::core::DynamicObject> = Api::namespaced_with(
        client.clone(),
        NS,
        &kube::core::ApiResource::erase::<Placement>(&()),
    );
    placements
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 1_000_000_000_000_i64}})),
        )
        .await
        .expect("the API server admits it");
    let fanout = PlacementFanout::new(client.clone(), "hello", NS, "web", "hello-work").unwrap();
    decide(&client, &[("", &["cluster1", "cluster2"])]).await;
    let render = render_ok("v1");
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(out.applied, ["cluster1", "cluster2"]);

    // cluster2's work stops decoding: its status, written by a newer agent, holds a manifest
    // list that is a number (the hub's schema for work status is loosened as a newer release
    // could; status writes pass no admission webhook).
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = "manifestworks.work.open-cluster-management.io";
    let mut crd = serde_json::to_value(crds.get(name).await.unwrap()).unwrap();
    *crd.pointer_mut(
        "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/resourceStatus",
    )
    .unwrap() = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    crds.replace(
        name,
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    let works: Api<kube::core::DynamicObject> = Api::namespaced_with(
        client.clone(),
        "cluster2",
        &kube::core::ApiResource::erase::<ManifestWork>(&()),
    );
    works
        .patch_status(
            "hello-work",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"resourceStatus": {"manifests": 3}}})),
        )
        .await
        .unwrap();
    let capture = support::logs::capture();
    assert_eq!(clusters_of(&fanout.works().await.unwrap()), ["cluster1"]);
    decide(&client, &[("", &["cluster1", "cluster3"])]).await;
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert_eq!(out.applied, ["cluster1", "cluster3"]);
    assert_eq!(out.deleted, ["cluster2"]);
    // The work it could not read is named at WARN (once: it is logged per resource version).
    let warned: Vec<String> = capture
        .logs()
        .warnings()
        .into_iter()
        .filter(|l| l.contains("cluster2/hello-work"))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("status.resourceStatus.manifests"),
        "{}",
        warned[0]
    );
    drop(capture);

    // Deleted, the Placement's works go and its finalizer is removed.
    placements
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let out = fanout.reconcile(render.as_ref()).await.unwrap();
    assert!(out.placement_deleted);
    assert_eq!(out.deleted, ["cluster1", "cluster3"]);
    assert!(placements.get_opt("web").await.unwrap().is_none());
    drop(hub);
}
