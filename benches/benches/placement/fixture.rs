//! The hub the placement benchmarks schedule against, as plain JSON objects (what `kubectl get
//! -o json` prints), so that the same fixture can be written to files and read by other
//! implementations (upstream's Go scheduler, measured side by side) and by
//! `ocm-placement-sim`.
//!
//! `n` clusters `cluster-000000`, … with seven labels, four claims, allocatable and capacity,
//! and taints on some (one in ten under maintenance, one in 97 unreachable, one in 13 with a
//! `PreferNoSelect` GPU taint); two AddOnPlacementScores per cluster; two cluster sets (the
//! `default` exclusive one and a `global` label-selector one) both bound in the placements'
//! namespace; PlacementDecisions of another placement over a tenth of the clusters, and of one
//! of ours over a two-hundredth; and the placements of [`placements`].
//!
//! Every time in it is fixed: taints were added at [`TAINT_TIME`], the tolerations that expire
//! do so ten years later, the scores are valid until 2099. Any instant in 2026 to 2035
//! therefore gives the same decisions; the benchmarks schedule at [`now`].

use serde_json::{Value, json};

/// The placements' namespace.
pub const NS: &str = "bench";

/// When the taints were added.
pub const TAINT_TIME: &str = "2026-01-01T00:00:00Z";

/// The instant the benchmarks schedule at.
pub fn now() -> jiff::Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("timestamp")
}

/// Ten years, in seconds: tolerations that expire, but not while the fixture is in use.
const TEN_YEARS: i64 = 315_360_000;

const ENVS: [&str; 4] = ["prod", "staging", "dev", "test"];
const CLOUDS: [&str; 3] = ["Amazon", "Azure", "Google"];
const VENDORS: [&str; 5] = ["OpenShift", "OpenShift", "OpenShift", "EKS", "AKS"];

/// The name of cluster `i`.
pub fn cluster_name(i: usize) -> String {
    format!("cluster-{i:06}")
}

/// ManagedCluster `i`.
pub fn cluster(i: usize) -> Value {
    let name = cluster_name(i);
    let mut taints = vec![];
    if i.is_multiple_of(10) {
        taints.push(
            json!({"key": "maintenance", "value": "planned", "effect": "NoSelect",
            "timeAdded": TAINT_TIME}),
        );
    }
    if i.is_multiple_of(97) {
        taints.push(
            json!({"key": "cluster.open-cluster-management.io/unreachable",
            "effect": "NoSelect", "timeAdded": TAINT_TIME}),
        );
    }
    if i.is_multiple_of(13) {
        taints.push(
            json!({"key": "gpu", "value": "true", "effect": "PreferNoSelect",
            "timeAdded": TAINT_TIME}),
        );
    }
    let cloud = CLOUDS[i % 3];
    let region = format!("region-{}", i % 12);
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": {
            "cluster.open-cluster-management.io/clusterset": "default",
            "open-cluster-management.io/cluster-name": name,
            "env": ENVS[i % 4], "cloud": cloud, "region": region,
            "vendor": VENDORS[i % 5],
            "version": format!("1.{}.{}", 28 + i % 4, i % 7)}},
        "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 60, "taints": taints},
        "status": {
            "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
                "reason": "ManagedClusterAvailable", "message": "Managed cluster is available",
                "lastTransitionTime": "2025-12-01T00:00:00Z"}],
            "clusterClaims": [
                {"name": "id.k8s.io", "value": format!("id-{i}")},
                {"name": "platform.open-cluster-management.io", "value": cloud},
                {"name": "region.open-cluster-management.io", "value": region},
                {"name": "kubeversion.open-cluster-management.io",
                 "value": format!("v1.{}.0", 28 + i % 4)}],
            "allocatable": {"cpu": format!("{}", 4 + i % 60),
                            "memory": format!("{}Gi", 8 + i % 250)},
            "capacity": {"cpu": "64", "memory": "256Gi"},
            "version": {"kubernetes": format!("v1.{}.0", 28 + i % 4)}
        }
    })
}

/// The AddOnPlacementScore `demo` of cluster `i` (scores `demo` and `cpu`).
pub fn score(i: usize) -> Value {
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
        "kind": "AddOnPlacementScore",
        "metadata": {"name": "demo", "namespace": cluster_name(i)},
        "status": {"scores": [{"name": "demo", "value": (i * 37 % 201) as i32 - 100},
                              {"name": "cpu", "value": (i % 100) as i32}],
                   "validUntil": "2099-01-01T00:00:00Z"}
    })
}

/// The cluster sets and their bindings in [`NS`].
pub fn sets_and_bindings() -> Vec<Value> {
    vec![
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSet", "metadata": {"name": "default"},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSet", "metadata": {"name": "global"},
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSetBinding", "metadata": {"name": "default", "namespace": NS},
            "spec": {"clusterSet": "default"}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSetBinding", "metadata": {"name": "global", "namespace": NS},
            "spec": {"clusterSet": "global"}}),
    ]
}

fn decision(namespace: &str, placement: &str, index: usize, clusters: &[usize]) -> Value {
    let decisions: Vec<Value> = clusters
        .iter()
        .map(|&i| json!({"clusterName": cluster_name(i), "reason": ""}))
        .collect();
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "PlacementDecision",
        "metadata": {"name": format!("{placement}-decision-{index}"), "namespace": namespace,
            "labels": {"cluster.open-cluster-management.io/placement": placement,
                       "cluster.open-cluster-management.io/decision-group-index": "0",
                       "cluster.open-cluster-management.io/decision-group-name": ""}},
        "status": {"decisions": decisions}
    })
}

/// PlacementDecisions: another placement's over a tenth of the clusters (for Balance), and
/// `claim`'s own over a two-hundredth (for Steady and the decided-cluster taint rules).
pub fn decisions(n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let other: Vec<usize> = (0..n).step_by(10).collect();
    for (k, chunk) in other.chunks(100).enumerate() {
        out.push(decision("elsewhere", "other", k + 1, chunk));
    }
    let own: Vec<usize> = (3..n).step_by(200).collect();
    for (k, chunk) in own.chunks(100).enumerate() {
        out.push(decision(NS, "claim", k + 1, chunk));
    }
    out
}

/// The tolerations most placements carry: maintenance (expiring in ten years) and a GPU
/// taint nobody has.
fn tolerations() -> Value {
    json!([{"key": "maintenance", "operator": "Exists", "tolerationSeconds": TEN_YEARS},
           {"key": "gpu", "operator": "Equal", "value": "true"}])
}

/// The prioritizers of the CEL placements: the defaults plus the AddOn score `demo/demo`.
fn addon_prioritizers() -> Value {
    json!({"mode": "Additive", "configurations": [
        {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}},
         "weight": 1}]})
}

/// A placement with CEL expressions (and an optional label selector) in one predicate.
fn cel(name: &str, expressions: &[&str], labels: Option<Value>) -> (String, Value) {
    let mut selector = json!({"celSelector": {"celExpressions": expressions}});
    if let Some(l) = labels {
        selector["labelSelector"] = l;
    }
    placement(
        name,
        json!({
            "predicates": [{"requiredClusterSelector": selector}],
            "tolerations": tolerations(),
            "prioritizerPolicy": addon_prioritizers()
        }),
    )
}

fn placement(name: &str, spec: Value) -> (String, Value) {
    (
        name.to_string(),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
               "metadata": {"name": name, "namespace": NS}, "spec": spec}),
    )
}

/// Whether a placement of [`placements`] has CEL expressions.
pub fn is_cel(name: &str) -> bool {
    name.starts_with("cel-")
}

/// The placements, by name: four without CEL (label selector; claim selector; two predicates
/// with decision groups; no predicate) and eight with (a label; a claim `exists`; both, ORed;
/// semver; quantity; AddOn scores; three expressions; a label selector and an expression).
pub fn placements() -> Vec<(String, Value)> {
    vec![
        placement(
            "label",
            json!({
                "predicates": [{"requiredClusterSelector": {"labelSelector": {
                    "matchLabels": {"vendor": "OpenShift"},
                    "matchExpressions": [{"key": "env", "operator": "In",
                                          "values": ["prod", "staging", "dev"]}]}}}],
                "tolerations": tolerations(),
                "prioritizerPolicy": {"mode": "Additive", "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"},
                     "weight": 1},
                    {"scoreCoordinate": {"type": "AddOn",
                                         "addOn": {"resourceName": "demo", "scoreName": "demo"}},
                     "weight": 2}]}
            }),
        ),
        placement(
            "claim",
            json!({
                "numberOfClusters": 100,
                "predicates": [{"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
                    {"key": "platform.open-cluster-management.io", "operator": "In",
                     "values": ["Amazon", "Azure"]},
                    {"key": "region.open-cluster-management.io", "operator": "NotIn",
                     "values": ["region-0", "region-1"]},
                    {"key": "id.k8s.io", "operator": "Exists"}]}}}],
                "tolerations": [{"key": "maintenance", "operator": "Exists"}],
                "prioritizerPolicy": {"mode": "Additive", "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                     "weight": 1},
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Steady"}, "weight": 3}]}
            }),
        ),
        placement(
            "two-predicates",
            json!({
                "clusterSets": ["default"],
                "numberOfClusters": 500,
                "predicates": [
                    {"requiredClusterSelector": {
                        "labelSelector": {"matchLabels": {"env": "prod"}},
                        "claimSelector": {"matchExpressions": [
                            {"key": "platform.open-cluster-management.io", "operator": "In",
                             "values": ["Google"]}]}}},
                    {"requiredClusterSelector": {"labelSelector": {"matchExpressions": [
                        {"key": "region", "operator": "In", "values": ["region-1", "region-2"]}]}}}],
                "tolerations": tolerations(),
                "prioritizerPolicy": {"mode": "Exact", "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 1},
                    {"scoreCoordinate": {"type": "AddOn",
                                         "addOn": {"resourceName": "demo", "scoreName": "cpu"}},
                     "weight": 3}]},
                "decisionStrategy": {"groupStrategy": {
                    "clustersPerDecisionGroup": "25%",
                    "decisionGroups": [{"groupName": "prod", "groupClusterSelector": {
                        "labelSelector": {"matchLabels": {"env": "prod"}}}}]}}
            }),
        ),
        placement(
            "all",
            json!({
                "numberOfClusters": 1000,
                "tolerations": [{"key": "cluster.open-cluster-management.io/unreachable",
                                 "operator": "Exists"}]
            }),
        ),
        cel(
            "cel-label",
            &[r#"managedCluster.metadata.labels["env"] == "prod""#],
            None,
        ),
        cel(
            "cel-claim",
            &[
                r#"managedCluster.status.clusterClaims.exists(c, c.name == "platform.open-cluster-management.io" && c.value == "Azure")"#,
            ],
            None,
        ),
        cel(
            "cel-or",
            &[
                r#"managedCluster.metadata.labels["env"] == "prod" || managedCluster.status.clusterClaims.exists(c, c.name == "platform.open-cluster-management.io" && c.value == "Azure")"#,
            ],
            None,
        ),
        cel(
            "cel-semver",
            &[
                r#"semver(managedCluster.metadata.labels["version"]).isGreaterThan(semver("1.29.3"))"#,
            ],
            None,
        ),
        cel(
            "cel-quantity",
            &[
                r#"quantity(managedCluster.status.allocatable["memory"]).isGreaterThan(quantity("128Gi"))"#,
            ],
            None,
        ),
        cel(
            "cel-scores",
            &[r#"managedCluster.scores("demo").filter(s, s.name == "demo").all(e, e.value > 0)"#],
            None,
        ),
        cel(
            "cel-multi",
            &[
                "managedCluster.metadata.labels['cloud'] in ['Amazon', 'Azure']",
                "!managedCluster.metadata.name.endsWith('7')",
                "managedCluster.status.clusterClaims.map(c, c.name).size() >= 3",
            ],
            None,
        ),
        cel(
            "cel-with-labels",
            &[
                r#"managedCluster.status.clusterClaims.exists(c, c.name == "region.open-cluster-management.io" && c.value.endsWith("-1"))"#,
            ],
            Some(json!({"matchLabels": {"vendor": "OpenShift"}})),
        ),
    ]
}

/// Every object of the hub of `n` clusters (placements included), in the order a `List`
/// holds them: clusters, scores, sets and bindings, decisions, placements.
pub fn objects(n: usize) -> impl Iterator<Item = Value> {
    (0..n)
        .map(cluster)
        .chain((0..n).map(score))
        .chain(sets_and_bindings())
        .chain(decisions(n))
        .chain(placements().into_iter().map(|(_, p)| p))
}
