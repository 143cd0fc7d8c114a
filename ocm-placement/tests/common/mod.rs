//! Fixtures shared by the integration tests.
#![allow(dead_code, missing_docs)]

#[cfg(feature = "controller")]
pub use ocm_testkit::logs;

use jiff::Timestamp;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_placement::{ScheduleResult, Scheduler, Snapshot, SnapshotBuilder};
use serde_json::{Value, json};

pub const NS: &str = "ns1";
pub const SET: &str = "clusterset1";
pub const SET_LABEL: &str = "cluster.open-cluster-management.io/clusterset";

/// 2022-01-01T00:00:00Z, the fake clock of the upstream tests.
pub fn now() -> Timestamp {
    "2022-01-01T00:00:00Z".parse().unwrap()
}

pub fn secs(t: Timestamp, s: i64) -> Timestamp {
    t.checked_add(jiff::SignedDuration::from_secs(s)).unwrap()
}

/// A ManagedCluster built from JSON pieces.
#[derive(Clone)]
pub struct ClusterB {
    name: String,
    labels: serde_json::Map<String, Value>,
    claims: Vec<Value>,
    taints: Vec<Value>,
    allocatable: serde_json::Map<String, Value>,
    capacity: serde_json::Map<String, Value>,
    deleting: bool,
}

pub fn cluster(name: &str) -> ClusterB {
    ClusterB {
        name: name.to_string(),
        labels: serde_json::Map::new(),
        claims: vec![],
        taints: vec![],
        allocatable: serde_json::Map::new(),
        capacity: serde_json::Map::new(),
        deleting: false,
    }
}

/// A cluster in the default test set.
pub fn member(name: &str) -> ClusterB {
    cluster(name).label(SET_LABEL, SET)
}

impl ClusterB {
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.labels.insert(k.into(), v.into());
        self
    }
    pub fn claim(mut self, k: &str, v: &str) -> Self {
        self.claims.push(json!({"name": k, "value": v}));
        self
    }
    pub fn taint(mut self, key: &str, value: &str, effect: &str, added: Option<Timestamp>) -> Self {
        let mut t = json!({"key": key, "value": value, "effect": effect});
        if let Some(a) = added {
            t["timeAdded"] = json!(a.to_string());
        }
        self.taints.push(t);
        self
    }
    pub fn resource(mut self, name: &str, allocatable: &str, capacity: &str) -> Self {
        self.allocatable.insert(name.into(), allocatable.into());
        self.capacity.insert(name.into(), capacity.into());
        self
    }
    pub fn deleting(mut self) -> Self {
        self.deleting = true;
        self
    }
    pub fn build(&self) -> ManagedCluster {
        let mut meta = json!({"name": self.name, "labels": self.labels});
        if self.deleting {
            meta["deletionTimestamp"] = json!("2021-12-31T00:00:00Z");
            meta["finalizers"] = json!(["test"]);
        }
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": meta,
            "spec": {"hubAcceptsClient": true, "taints": self.taints},
            "status": {
                "clusterClaims": self.claims,
                "allocatable": self.allocatable,
                "capacity": self.capacity,
                "conditions": []
            }
        }))
        .unwrap()
    }
}

pub fn exclusive_set(name: &str) -> ManagedClusterSet {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
        "clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}))
    .unwrap()
}

pub fn set_without_selector(name: &str) -> ManagedClusterSet {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {}})).unwrap()
}

/// A LabelSelector set; `selector` `None` = nil label selector.
pub fn label_set(name: &str, selector: Option<Value>) -> ManagedClusterSet {
    let mut sel = json!({"selectorType": "LabelSelector"});
    if let Some(s) = selector {
        sel["labelSelector"] = s;
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"clusterSelector": sel}}))
        .unwrap()
}

pub fn binding(ns: &str, name: &str) -> ManagedClusterSetBinding {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns},
        "spec": {"clusterSet": name}}))
    .unwrap()
}

/// A binding whose name differs from `spec.clusterSet`.
pub fn binding_with_spec(ns: &str, name: &str, spec_set: &str) -> ManagedClusterSetBinding {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns},
        "spec": {"clusterSet": spec_set}}))
    .unwrap()
}

pub fn placement(name: &str, spec: Value) -> Placement {
    placement_in(NS, name, spec)
}

pub fn placement_in(ns: &str, name: &str, spec: Value) -> Placement {
    serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": {"name": name, "namespace": ns, "uid": "uid-1"},
        "spec": spec
    }))
    .unwrap()
}

/// A PlacementDecision; `placement` `None` = no placement label.
pub fn decision(
    ns: &str,
    name: &str,
    placement: Option<&str>,
    clusters: &[&str],
) -> PlacementDecision {
    let mut labels = serde_json::Map::new();
    if let Some(p) = placement {
        labels.insert(
            "cluster.open-cluster-management.io/placement".into(),
            p.into(),
        );
    }
    let decisions: Vec<Value> = clusters
        .iter()
        .map(|c| json!({"clusterName": c, "reason": ""}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "status": {"decisions": decisions}
    }))
    .unwrap()
}

pub fn addon_score(
    cluster: &str,
    name: &str,
    items: &[(&str, i32)],
    valid_until: Option<Timestamp>,
) -> AddOnPlacementScore {
    let scores: Vec<Value> = items
        .iter()
        .map(|(n, v)| json!({"name": n, "value": v}))
        .collect();
    let mut status = json!({"scores": scores});
    if let Some(v) = valid_until {
        status["validUntil"] = json!(v.to_string());
    }
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": cluster}, "status": status}),
    )
    .unwrap()
}

/// The usual hub: one exclusive set `clusterset1` bound in `ns1`, plus the given clusters.
pub fn hub(clusters: &[ClusterB]) -> SnapshotBuilder {
    let mut b = Snapshot::builder()
        .cluster_set(&exclusive_set(SET))
        .binding(&binding(NS, SET));
    for c in clusters {
        b.add_cluster(c.build());
    }
    b
}

pub fn schedule(p: &Placement, s: &Snapshot) -> ScheduleResult {
    Scheduler::new().schedule(p, s, now()).unwrap()
}

pub fn names(r: &ScheduleResult, ids: &[ocm_placement::ClusterId]) -> Vec<String> {
    ids.iter()
        .map(|id| r.cluster_name(*id).to_string())
        .collect()
}

pub fn selected(r: &ScheduleResult) -> Vec<String> {
    r.selected_names().into_iter().map(str::to_string).collect()
}

/// Selected names sorted (for set comparisons).
pub fn selected_set(r: &ScheduleResult) -> Vec<String> {
    let mut v = selected(r);
    v.sort();
    v
}

/// `(name, score)` of one prioritizer, sorted by cluster name, `None` entries left out.
pub fn prioritizer(r: &ScheduleResult, name: &str) -> Vec<(String, i64)> {
    let p = r
        .prioritizers
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no prioritizer {name}"));
    let mut out: Vec<(String, i64)> = r
        .feasible
        .iter()
        .zip(&p.scores)
        .filter_map(|(id, s)| s.map(|s| (r.cluster_name(*id).to_string(), s)))
        .collect();
    out.sort();
    out
}

/// `(group index, group name, PD names, cluster count)` per group.
pub fn groups(r: &ScheduleResult) -> Vec<(usize, String, Vec<String>, usize)> {
    r.groups
        .iter()
        .map(|g| {
            (
                g.index,
                g.name.clone(),
                g.decisions.clone(),
                g.clusters.len(),
            )
        })
        .collect()
}

/// Cluster names of each slice.
pub fn slices(r: &ScheduleResult) -> Vec<Vec<String>> {
    r.slices.iter().map(|s| names(r, &s.clusters)).collect()
}
