//! Topology spread (`spec.spreadPolicy.spreadConstraints`), our opt-in addition: the
//! scheduler's rules and messages, and the Placement controller against the fake hub with the
//! option on and off.

use crate::common;

use common::*;
use ocm_api::conditions::ConditionStatus;
use ocm_placement::{Outcome, Scheduler, Snapshot};
use serde_json::{Value, json};

fn spread(p: &ocm_api::cluster::v1beta1::Placement, s: &Snapshot) -> ocm_placement::ScheduleResult {
    Scheduler::new()
        .with_topology_spread(true)
        .schedule(p, s, now())
        .unwrap()
}

fn zones(list: &[(&str, Option<&str>)]) -> Snapshot {
    let clusters: Vec<ClusterB> = list
        .iter()
        .map(|(name, zone)| {
            let c = member(name);
            match zone {
                Some(z) => c.label("zone", z),
                None => c,
            }
        })
        .collect();
    hub(&clusters).build()
}

fn zone_placement(
    number: Option<i32>,
    max_skew: i32,
    when: &str,
) -> ocm_api::cluster::v1beta1::Placement {
    let mut spec = json!({"spreadPolicy": {"spreadConstraints": [
        {"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": max_skew, "whenUnsatisfiable": when}]}});
    if let Some(n) = number {
        spec["numberOfClusters"] = json!(n);
    }
    placement("p", spec)
}

/// Zone `b` has one cluster, so with maxSkew 1 no zone may hold more than two: five of six,
/// and `PlacementSatisfied` says which constraint stopped the selection and how the zones
/// ended up, after upstream's message.
#[test]
fn do_not_schedule_stops_short_and_says_why() {
    let snap = zones(&[
        ("a1", Some("a")),
        ("a2", Some("a")),
        ("a3", Some("a")),
        ("b1", Some("b")),
        ("c1", Some("c")),
        ("c2", Some("c")),
    ]);
    let r = spread(&zone_placement(None, 1, "DoNotSchedule"), &snap);
    assert_eq!(selected_set(&r), ["a1", "a2", "b1", "c1", "c2"]);
    assert_eq!(r.unscheduled, 1);
    assert_eq!(r.satisfied.status, ConditionStatus::False);
    assert_eq!(r.satisfied.reason, "NotAllDecisionsScheduled");
    assert_eq!(
        r.satisfied.message,
        "1 cluster decisions unscheduled: spreadConstraints[0] (Label \"zone\", maxSkew 1, \
         DoNotSchedule) allows 5 of 6 clusters: a=2, b=1, c=2"
    );
    assert_eq!(r.misconfigured.reason, "Succeedconfigured");
    let outcome = r.spread.as_ref().unwrap();
    assert_eq!(outcome.constraints[0].skew, 1);
    assert!(outcome.constraints[0].limited);
    // The status counts what was selected; the decisions hold it.
    let st = r.placement_status(None, now());
    assert_eq!(st.number_of_selected_clusters, Some(5));
    assert_eq!(slices(&r), [vec!["a1", "a2", "b1", "c1", "c2"]]);

    // maxSkew 2 lets zone a have all three.
    let r = spread(&zone_placement(None, 2, "DoNotSchedule"), &snap);
    assert_eq!(r.selected.len(), 6);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    assert_eq!(r.unscheduled, 0);

    // With numberOfClusters upstream's count is kept: 7 wanted, 5 allowed.
    let r = spread(&zone_placement(Some(7), 1, "DoNotSchedule"), &snap);
    assert_eq!(r.unscheduled, 2);
    assert_eq!(
        r.satisfied.message,
        "2 cluster decisions unscheduled: spreadConstraints[0] (Label \"zone\", maxSkew 1, \
         DoNotSchedule) allows 5 of 6 clusters: a=2, b=1, c=2"
    );
}

/// `ScheduleAnyway` (the default) always reaches the count, least-skewed first.
#[test]
fn schedule_anyway_reaches_the_count_least_skewed_first() {
    let snap = zones(&[
        ("a1", Some("a")),
        ("a2", Some("a")),
        ("a3", Some("a")),
        ("b1", Some("b")),
        ("c1", Some("c")),
    ]);
    let p = placement(
        "p",
        json!({"numberOfClusters": 4, "spreadPolicy": {"spreadConstraints": [
            {"topologyKey": "zone", "topologyKeyType": "Label"}]}}),
    );
    let r = spread(&p, &snap);
    // One per zone first (skew 0), then the fourth breaks maxSkew 1 least: skew 1.
    assert_eq!(selected(&r), ["a1", "b1", "c1", "a2"]);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    let r = spread(&zone_placement(None, 1, "ScheduleAnyway"), &snap);
    assert_eq!(r.selected.len(), 5);
    assert_eq!(r.spread.as_ref().unwrap().constraints[0].skew, 2);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
}

/// Clusters without the key: never selected under `DoNotSchedule` (and counted in the
/// message), selectable under `ScheduleAnyway` without changing the skew.
#[test]
fn clusters_without_the_key() {
    let snap = zones(&[
        ("a1", Some("a")),
        ("b1", Some("b")),
        ("n1", None),
        ("n2", None),
    ]);
    let r = spread(&zone_placement(None, 1, "DoNotSchedule"), &snap);
    assert_eq!(selected_set(&r), ["a1", "b1"]);
    assert_eq!(
        r.satisfied.message,
        "2 cluster decisions unscheduled: spreadConstraints[0] (Label \"zone\", maxSkew 1, \
         DoNotSchedule) allows 2 of 4 clusters: a=1, b=1; 2 clusters without the key"
    );
    assert_eq!(r.spread.as_ref().unwrap().constraints[0].without_key, 2);

    let r = spread(&zone_placement(Some(3), 1, "ScheduleAnyway"), &snap);
    assert_eq!(selected(&r), ["a1", "b1", "n1"]);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");

    // Nobody has the key: nothing can be selected.
    let snap = zones(&[("n1", None), ("n2", None)]);
    let r = spread(&zone_placement(None, 1, "DoNotSchedule"), &snap);
    assert!(r.selected.is_empty());
    assert_eq!(r.satisfied.reason, "NoManagedClusterMatched");
    assert_eq!(
        r.satisfied.message,
        "No ManagedCluster matches any of the cluster predicate: spreadConstraints[0] (Label \
         \"zone\", maxSkew 1, DoNotSchedule) allows 0 of 2 clusters: ; 2 clusters without the key"
    );
}

/// The spread is combined with the prioritizers: inside what the constraints allow, the
/// best-scored clusters win; a `Claim` key reads cluster claims, not labels.
#[test]
fn prioritizers_choose_inside_claim_domains() {
    let c = |name: &str, region: &str, cpu: &str| {
        member(name)
            .claim("region", region)
            .label("region", "label-is-ignored")
            .resource("cpu", cpu, "64")
    };
    let snap = hub(&[
        c("e1", "east", "10"),
        c("e2", "east", "60"),
        c("e3", "east", "50"),
        c("w1", "west", "20"),
        c("w2", "west", "30"),
    ])
    .build();
    let p = placement(
        "p",
        json!({"numberOfClusters": 4,
            "prioritizerPolicy": {"mode": "Exact", "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}, "weight": 1}]},
            "spreadPolicy": {"spreadConstraints": [
                {"topologyKey": "region", "topologyKeyType": "Claim", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}}),
    );
    let upstream = schedule(&p, &snap);
    assert_eq!(selected(&upstream), ["e2", "e3", "w2", "w1"]);
    let r = spread(&p, &snap);
    assert_eq!(selected_set(&r), ["e2", "e3", "w1", "w2"]);
    let p = placement(
        "p",
        json!({"numberOfClusters": 3,
            "prioritizerPolicy": {"mode": "Exact", "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}, "weight": 1}]},
            "spreadPolicy": {"spreadConstraints": [
                {"topologyKey": "region", "topologyKeyType": "Claim", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}}),
    );
    assert_eq!(selected(&schedule(&p, &snap)), ["e2", "e3", "w2"]);
    assert_eq!(selected(&spread(&p, &snap)), ["e2", "w2", "e3"]);
    let domains = &spread(&p, &snap).spread.unwrap().constraints[0].domains;
    assert_eq!(domains, &[("east".to_string(), 2), ("west".to_string(), 1)]);
}

/// Soft constraints count in spec order: the first one matters most.
#[test]
fn soft_constraints_follow_spec_order() {
    let c =
        |name: &str, zone: &str, rack: &str| member(name).label("zone", zone).label("rack", rack);
    let snap = hub(&[c("x1", "a", "r1"), c("x2", "a", "r2"), c("x3", "b", "r1")]).build();
    let terms = |first: &str, second: &str| {
        placement(
            "p",
            json!({"numberOfClusters": 2, "spreadPolicy": {"spreadConstraints": [
                {"topologyKey": first, "topologyKeyType": "Label", "maxSkew": 1},
                {"topologyKey": second, "topologyKeyType": "Label", "maxSkew": 1}]}}),
        )
    };
    // x1 first (name order); then zone first wants x3 (zone b), rack first wants x2 (r2).
    assert_eq!(
        selected(&spread(&terms("zone", "rack"), &snap)),
        ["x1", "x3"]
    );
    assert_eq!(
        selected(&spread(&terms("rack", "zone"), &snap)),
        ["x1", "x2"]
    );
}

/// Constraints the CRD rejects (a client that skips validation, a stale object) make the
/// placement misconfigured instead of panicking; upstream's scheduler ignores them.
#[test]
fn invalid_constraints_are_misconfigured() {
    let snap = zones(&[("a1", Some("a"))]);
    let r = spread(&zone_placement(None, 0, "DoNotSchedule"), &snap);
    assert_eq!(r.misconfigured.status, ConditionStatus::True);
    assert_eq!(
        r.misconfigured.message,
        "TopologySpread:spreadConstraints[0].maxSkew: Invalid value: 0: should be greater than \
         or equal to 1"
    );
    assert!(r.selected.is_empty());
    let p = placement(
        "p",
        json!({"spreadPolicy": {"spreadConstraints": [{"topologyKey": "", "topologyKeyType": "Claim"}]}}),
    );
    let r = spread(&p, &snap);
    assert_eq!(
        r.misconfigured.message,
        "TopologySpread:spreadConstraints[0].topologyKey: Required value"
    );
    let nine: Vec<Value> = (0..9)
        .map(|i| json!({"topologyKey": format!("k{i}"), "topologyKeyType": "Label"}))
        .collect();
    let r = spread(
        &placement("p", json!({"spreadPolicy": {"spreadConstraints": nine}})),
        &snap,
    );
    assert_eq!(
        r.misconfigured.message,
        "TopologySpread:spreadConstraints: Too many: 9: must have at most 8 items"
    );
    // Off: upstream ignores the field entirely.
    let r = schedule(&zone_placement(None, 0, "DoNotSchedule"), &snap);
    assert_eq!(r.misconfigured.reason, "Succeedconfigured");
    assert_eq!(selected(&r), ["a1"]);
}

/// A `topologyKeyType` or `whenUnsatisfiable` a newer OCM may add decodes (the Placement is
/// not lost) and makes the placement misconfigured, naming the value.
#[test]
fn values_this_sdk_does_not_know_are_misconfigured() {
    let snap = zones(&[("a1", Some("a"))]);
    let p = placement(
        "p",
        json!({"spreadPolicy": {"spreadConstraints": [
            {"topologyKey": "zone", "topologyKeyType": "Property"}]}}),
    );
    let r = spread(&p, &snap);
    assert_eq!(r.misconfigured.status, ConditionStatus::True);
    assert_eq!(
        r.misconfigured.message,
        "TopologySpread:spreadConstraints[0].topologyKeyType: Unsupported value: \"Property\": \
         supported values: \"Label\", \"Claim\""
    );
    assert!(r.selected.is_empty());
    let r = spread(&zone_placement(None, 1, "ScheduleLater"), &snap);
    assert_eq!(
        r.misconfigured.message,
        "TopologySpread:spreadConstraints[0].whenUnsatisfiable: Unsupported value: \
         \"ScheduleLater\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
    );
    assert!(r.selected.is_empty());
}

/// Decision groups and `explain` work on a spread selection, which is not a prefix of the
/// score order.
#[test]
fn groups_and_explain_follow_the_spread_selection() {
    let snap = zones(&[
        ("a1", Some("a")),
        ("a2", Some("a")),
        ("b1", Some("b")),
        ("b2", Some("b")),
    ]);
    let p = placement(
        "p",
        json!({"numberOfClusters": 2,
            "spreadPolicy": {"spreadConstraints": [
                {"topologyKey": "zone", "topologyKeyType": "Label", "whenUnsatisfiable": "DoNotSchedule"}]},
            "decisionStrategy": {"groupStrategy": {"decisionGroups": [
                {"groupName": "zone-b", "groupClusterSelector": {"labelSelector": {"matchLabels": {"zone": "b"}}}}]}}}),
    );
    let r = spread(&p, &snap);
    assert_eq!(selected(&r), ["a1", "b1"]);
    assert_eq!(slices(&r), [vec!["b1"], vec!["a1"]]);
    let chosen: Vec<(String, bool)> = r
        .explain()
        .into_iter()
        .map(|e| match e.outcome {
            Outcome::Scored { selected, .. } => (e.name, selected),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        chosen,
        [
            ("a1".to_string(), true),
            ("a2".to_string(), false),
            ("b1".to_string(), true),
            ("b2".to_string(), false)
        ]
    );
}

/// Domains come from the feasible clusters: a zone whose clusters the predicates or taints
/// leave out does not hold the others back.
#[test]
fn domains_are_those_of_feasible_clusters() {
    let snap = hub(&[
        member("a1").label("zone", "a"),
        member("a2").label("zone", "a"),
        member("b1").label("zone", "b").label("env", "dev"),
        member("c1")
            .label("zone", "c")
            .taint("maintenance", "", "NoSelect", None),
    ])
    .build();
    let p = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchExpressions": [
                {"key": "env", "operator": "DoesNotExist"}]}}}],
            "spreadPolicy": {"spreadConstraints": [
                {"topologyKey": "zone", "topologyKeyType": "Label", "whenUnsatisfiable": "DoNotSchedule"}]}}),
    );
    let r = spread(&p, &snap);
    assert_eq!(selected_set(&r), ["a1", "a2"]);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
}

#[cfg(feature = "controller")]
mod controller {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
    use kube::{Client, Resource};
    use ocm_api::cluster::v1::ManagedCluster;
    use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
    use ocm_api::conditions;
    use ocm_placement::Scheduler;
    use ocm_placement::controller::PlacementController;
    use ocm_testkit::{FakeCluster, FaultRule};

    use super::*;

    const NS: &str = "apps";

    async fn create<K>(client: &Client, value: Value)
    where
        K: Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let object: K = serde_json::from_value(value).expect("valid object");
        Api::<K>::all(client.clone())
            .create(&PostParams::default(), &object)
            .await
            .expect("create");
    }

    async fn create_in<K>(client: &Client, value: Value)
    where
        K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let object: K = serde_json::from_value(value).expect("valid object");
        Api::<K>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &object)
            .await
            .expect("create");
    }

    /// A fake hub with the OCM CRDs, the `default` set bound to `apps`, clusters with a
    /// `zone` label (or none), and a placement `p` with `spec`.
    async fn hub(clusters: &[(&str, Option<&str>)], spec: Value) -> (FakeCluster, Client) {
        let cluster = FakeCluster::new();
        let client = cluster.client();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in ocm_api::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("install CRD");
        }
        create::<Namespace>(&client, json!({"metadata": {"name": NS}})).await;
        create::<ocm_api::cluster::v1beta2::ManagedClusterSet>(&client, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": "default"},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
        }))
        .await;
        create_in::<ocm_api::cluster::v1beta2::ManagedClusterSetBinding>(&client, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}
        }))
        .await;
        for (name, zone) in clusters {
            let mut labels = json!({"cluster.open-cluster-management.io/clusterset": "default"});
            if let Some(z) = zone {
                labels["zone"] = json!(z);
            }
            create::<ManagedCluster>(
                &client,
                json!({
                    "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                    "metadata": {"name": name, "labels": labels}, "spec": {}
                }),
            )
            .await;
        }
        create_in::<Placement>(
            &client,
            json!({
                "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
                "metadata": {"name": "p", "namespace": NS}, "spec": spec
            }),
        )
        .await;
        (cluster, client)
    }

    async fn decided(client: &Client) -> Vec<String> {
        let api: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
        let mut out: Vec<String> = api
            .list(&ListParams::default().labels("cluster.open-cluster-management.io/placement=p"))
            .await
            .unwrap()
            .items
            .into_iter()
            .flat_map(|pd| pd.status.unwrap_or_default().decisions)
            .map(|d| d.cluster_name)
            .collect();
        out.sort();
        out
    }

    async fn satisfied(client: &Client) -> (String, String, String) {
        let p: Placement = Api::namespaced(client.clone(), NS).get("p").await.unwrap();
        let conds = p.status.and_then(|s| s.conditions).unwrap_or_default();
        let c = conditions::find(&conds, "PlacementSatisfied").expect("PlacementSatisfied");
        (c.status.clone(), c.reason.clone(), c.message.clone())
    }

    const SIX: [(&str, Option<&str>); 6] = [
        ("a1", Some("a")),
        ("a2", Some("a")),
        ("a3", Some("a")),
        ("b1", Some("b")),
        ("c1", Some("c")),
        ("c2", Some("c")),
    ];

    fn hard_zone_spec() -> Value {
        json!({"spreadPolicy": {"spreadConstraints": [
            {"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 1,
             "whenUnsatisfiable": "DoNotSchedule"}]}})
    }

    /// The controller with `Scheduler::with_topology_spread(true)` writes the spread
    /// decisions and the reason in the Placement status, then nothing more; the default
    /// controller ignores the constraints as upstream does.
    #[tokio::test]
    async fn the_controller_spreads_only_when_opted_in() {
        let (_hub, client) = hub(&SIX, hard_zone_spec()).await;
        let controller = PlacementController::new(client.clone())
            .with_scheduler(Scheduler::new().with_topology_spread(true));
        controller.reconcile_all().await.expect("reconcile");
        assert_eq!(decided(&client).await, ["a1", "a2", "b1", "c1", "c2"]);
        assert_eq!(
            satisfied(&client).await,
            (
                "False".to_string(),
                "NotAllDecisionsScheduled".to_string(),
                "1 cluster decisions unscheduled: spreadConstraints[0] (Label \"zone\", maxSkew \
                 1, DoNotSchedule) allows 5 of 6 clusters: a=2, b=1, c=2"
                    .to_string()
            )
        );
        let p: Placement = Api::namespaced(client.clone(), NS).get("p").await.unwrap();
        assert_eq!(p.status.unwrap().number_of_selected_clusters, Some(5));
        let again = controller.reconcile_all().await.expect("reconcile");
        assert_eq!(again.writes, 0, "steady state writes nothing");

        // Upstream's behaviour on the same hub: every cluster, all scheduled.
        let (_hub, client) = hub(&SIX, hard_zone_spec()).await;
        PlacementController::new(client.clone())
            .reconcile_all()
            .await
            .expect("reconcile");
        assert_eq!(decided(&client).await, ["a1", "a2", "a3", "b1", "c1", "c2"]);
        assert_eq!(
            satisfied(&client).await,
            (
                "True".to_string(),
                "AllDecisionsScheduled".to_string(),
                "All cluster decisions scheduled".to_string()
            )
        );
    }

    /// The run loop, with every write to the hub slowed down, re-spreads when a cluster
    /// loses its zone label.
    #[tokio::test]
    async fn the_run_loop_respreads_when_a_zone_label_goes() {
        let mut spec = hard_zone_spec();
        spec["numberOfClusters"] = json!(3);
        let (hub, client) = hub(
            &[
                ("a1", Some("a")),
                ("a2", Some("a")),
                ("b1", Some("b")),
                ("c1", Some("c")),
            ],
            spec,
        )
        .await;
        for verb in ["create", "patch", "update"] {
            hub.inject(FaultRule::delay_only(Duration::from_millis(30)).verb(verb));
        }
        let controller = PlacementController::new(client.clone())
            .with_scheduler(Scheduler::new().with_topology_spread(true));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(controller.run(async move {
            let _ = stopped.await;
        }));
        let wait_for = |want: Vec<&'static str>| {
            let client = client.clone();
            async move {
                let mut found = Vec::new();
                for _ in 0..200 {
                    found = decided(&client).await;
                    if found == want {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                panic!("decisions {found:?}, want {want:?}");
            }
        };
        wait_for(vec!["a1", "b1", "c1"]).await;
        Api::<ManagedCluster>::all(client.clone())
            .patch(
                "b1",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"zone": null}}})),
            )
            .await
            .unwrap();
        // b1 is left out; zone a may now hold two (a=2, c=1).
        wait_for(vec!["a1", "a2", "c1"]).await;
        let _ = stop.send(());
        task.await.unwrap();
    }
}
