//! SIG-Multicluster PlacementDecisions (KEP-5313): every OCM PlacementDecision mirrored as a
//! `multicluster.x-k8s.io/v1alpha1` PlacementDecision, so that consumers that read the
//! vendor-neutral API (Argo CD and others) see OCM's decisions. Upstream OCM does this behind
//! its `SIGPlacementDecision` feature gate (off by default); so does the hub controller here
//! (`ocm-hub-controller --feature-gates SIGPlacementDecision=true`).
//!
//! What is written follows upstream's controller:
//!
//! * one SIG PlacementDecision per OCM PlacementDecision, with the same namespace and name, so
//!   the SIG slices are the OCM slices (at most 100 clusters each);
//! * `decisions[i].clusterProfileRef.name` is the i-th `clusterName` (the order is kept: name
//!   order, or score order with `sortBy: Score` and the `PlacementDecisionScore` option), with
//!   no `namespace` (which the API reads as the decision's own: the namespace where OCM's
//!   ClusterProfile controller publishes the profiles of the clusters bound there); `reason`
//!   is copied when it is not empty;
//! * `schedulerName: open-cluster-management`, and the labels
//!   `x-k8s.io/cluster-manager: open-cluster-management`, `multicluster.x-k8s.io/placement-key`
//!   and `multicluster.x-k8s.io/decision-key` set to the Placement's name (from the OCM
//!   decision's `cluster.open-cluster-management.io/placement` label), and
//!   `multicluster.x-k8s.io/decision-index` set to its decision-group index (upstream's
//!   choice: the slices of one group share an index);
//! * a SIG PlacementDecision without the cluster-manager label is someone else's and is never
//!   touched, even when its name matches; ours are updated (labels replaced) when their
//!   decisions, scheduler name or labels differ, and deleted once their OCM PlacementDecision
//!   is gone, which happens when the Placement is deleted (its decisions are owned by it).
//!
//! Differences from upstream's controller: it is driven by a watch of both kinds and
//! reconciles them all in one pass (so a SIG decision left behind while the controller was
//! off is deleted at the next start), it emits no Events (upstream's
//! `SIGPlacementDecisionCreated`/`Updated` go to its operator's recorder), and an OCM decision
//! with more than 100 clusters, which the SIG CRD refuses, is reported by name and skipped
//! instead of failing on every retry.
//!
//! # Example
//!
//! ```
//! use ocm_api::cluster::v1beta1::PlacementDecision;
//! use ocm_placement::sig::sig_placement_decision;
//!
//! let ocm: PlacementDecision = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-decision-1", "namespace": "apps", "labels": {
//!         "cluster.open-cluster-management.io/placement": "web",
//!         "cluster.open-cluster-management.io/decision-group-index": "0",
//!         "cluster.open-cluster-management.io/decision-group-name": ""}},
//!     "status": {"decisions": [{"clusterName": "cluster1", "reason": ""}]}
//! }))?;
//! let sig = sig_placement_decision(&ocm)?;
//! assert_eq!(sig.cluster_names().collect::<Vec<_>>(), ["cluster1"]);
//! assert_eq!(sig.spec.scheduler_name.as_deref(), Some("open-cluster-management"));
//! assert_eq!(sig.metadata.labels.as_ref().unwrap()["multicluster.x-k8s.io/decision-key"], "web");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ocm_api::cluster::v1beta1::PlacementDecision;
use ocm_api::constants::labels as ocm_labels;
use ocm_api::multicluster::v1alpha1::{
    ClusterDecision, ClusterProfileReference, PlacementDecision as SigPlacementDecision,
    PlacementDecisionFields,
};
use ocm_api::multicluster::{MAX_DECISIONS_PER_SLICE, OCM_CLUSTER_MANAGER, labels};

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
mod controller;
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use controller::{SIG_RESYNC_PERIOD, SigOutcome, SigPlacementDecisionController};

/// The `schedulerName` (and cluster-manager label value) OCM writes.
pub const SCHEDULER_NAME: &str = OCM_CLUSTER_MANAGER;

/// `namespace/name` of an object's metadata.
fn key(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// Whether `decision` was written by OCM (it carries the cluster-manager label with OCM's
/// name); only those are updated or deleted.
pub fn is_ours(decision: &SigPlacementDecision) -> bool {
    decision
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(labels::CLUSTER_MANAGER))
        .is_some_and(|v| v == OCM_CLUSTER_MANAGER)
}

/// The SIG PlacementDecision that mirrors `ocm` (see the [module docs](self)). An OCM decision
/// with more clusters than a SIG slice may hold is an error naming it.
pub fn sig_placement_decision(ocm: &PlacementDecision) -> Result<SigPlacementDecision, String> {
    let (namespace, name) = key(&ocm.metadata);
    let source = ocm.status.as_ref().map(|s| s.decisions.as_slice());
    let source = source.unwrap_or_default();
    if source.len() > MAX_DECISIONS_PER_SLICE {
        return Err(format!(
            "PlacementDecision {namespace}/{name} lists {} clusters; a SIG-Multicluster \
             PlacementDecision holds at most {MAX_DECISIONS_PER_SLICE}",
            source.len()
        ));
    }
    let ocm_labels_of = ocm.metadata.labels.clone().unwrap_or_default();
    let mut out_labels = BTreeMap::from([(
        labels::CLUSTER_MANAGER.to_string(),
        SCHEDULER_NAME.to_string(),
    )]);
    if let Some(placement) = ocm_labels_of.get(ocm_labels::PLACEMENT) {
        out_labels.insert(labels::PLACEMENT_KEY.to_string(), placement.clone());
        out_labels.insert(labels::DECISION_KEY.to_string(), placement.clone());
    }
    if let Some(index) = ocm_labels_of.get(ocm_labels::DECISION_GROUP_INDEX) {
        out_labels.insert(labels::DECISION_INDEX.to_string(), index.clone());
    }
    let decisions = source
        .iter()
        .map(|d| ClusterDecision {
            cluster_profile_ref: ClusterProfileReference {
                name: d.cluster_name.clone(),
                namespace: None,
            },
            reason: Some(d.reason.clone()).filter(|r| !r.is_empty()),
        })
        .collect();
    let mut sig = SigPlacementDecision::new(
        &name,
        PlacementDecisionFields {
            decisions,
            scheduler_name: Some(SCHEDULER_NAME.to_string()),
        },
    );
    sig.metadata.namespace = Some(namespace);
    sig.metadata.labels = Some(out_labels);
    Ok(sig)
}

/// Whether `existing` already says what `desired` says: same scheduler name, same decisions
/// in the same order, and every desired label present with its value (extra labels are
/// tolerated, as upstream's comparison does).
pub fn up_to_date(existing: &SigPlacementDecision, desired: &SigPlacementDecision) -> bool {
    let have = existing.metadata.labels.clone().unwrap_or_default();
    existing.spec == desired.spec
        && desired
            .metadata
            .labels
            .iter()
            .flatten()
            .all(|(k, v)| have.get(k) == Some(v))
}

/// One write the SIG PlacementDecision controller makes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SigChange {
    /// Create this decision.
    Create(Box<SigPlacementDecision>),
    /// Replace the existing decision (same name and resourceVersion) with this one.
    Update(Box<SigPlacementDecision>),
    /// Delete our decision `namespace/name`, whose OCM decision is gone.
    Delete {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

/// What a pass over the hub must write, and what it had to leave out.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SigPlan {
    /// The writes, in order: creates and updates by namespace and name, then deletes.
    pub changes: Vec<SigChange>,
    /// OCM decisions that cannot be mirrored, each with the reason.
    pub skipped: Vec<String>,
}

/// The writes that make the SIG PlacementDecisions (`sig`, all of them, ours or not) mirror the
/// OCM PlacementDecisions `ocm`.
pub fn plan(ocm: &[&PlacementDecision], sig: &[&SigPlacementDecision]) -> SigPlan {
    let existing: BTreeMap<(String, String), &SigPlacementDecision> =
        sig.iter().map(|d| (key(&d.metadata), *d)).collect();
    let mut out = SigPlan::default();
    let mut mirrored = BTreeSet::new();
    let mut sources: Vec<&PlacementDecision> = ocm.to_vec();
    sources.sort_by_key(|d| key(&d.metadata));
    for source in sources {
        let id = key(&source.metadata);
        mirrored.insert(id.clone());
        let desired = match sig_placement_decision(source) {
            Ok(d) => d,
            Err(reason) => {
                out.skipped.push(reason);
                continue;
            }
        };
        match existing.get(&id) {
            None => out.changes.push(SigChange::Create(Box::new(desired))),
            Some(have) if !is_ours(have) => {}
            Some(have) if up_to_date(have, &desired) => {}
            Some(have) => {
                let mut updated = (*have).clone();
                updated.metadata.labels = desired.metadata.labels;
                updated.spec = desired.spec;
                out.changes.push(SigChange::Update(Box::new(updated)));
            }
        }
    }
    for (id, have) in &existing {
        if !mirrored.contains(id) && is_ours(have) {
            out.changes.push(SigChange::Delete {
                namespace: id.0.clone(),
                name: id.1.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ocm(name: &str, placement: Option<&str>, clusters: &[(&str, &str)]) -> PlacementDecision {
        let mut labels = serde_json::Map::new();
        if let Some(p) = placement {
            labels.insert(ocm_labels::PLACEMENT.into(), json!(p));
            labels.insert(ocm_labels::DECISION_GROUP_INDEX.into(), json!("1"));
            labels.insert(ocm_labels::DECISION_GROUP_NAME.into(), json!("canary"));
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns1", "labels": labels},
            "status": {"decisions": clusters.iter()
                .map(|(c, r)| json!({"clusterName": c, "reason": r})).collect::<Vec<_>>()}
        }))
        .unwrap()
    }

    fn sig(name: &str, manager: Option<&str>, clusters: &[&str]) -> SigPlacementDecision {
        let mut labels = serde_json::Map::new();
        if let Some(m) = manager {
            labels.insert(labels::CLUSTER_MANAGER.into(), json!(m));
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns1", "labels": labels, "resourceVersion": "7"},
            "decisions": clusters.iter()
                .map(|c| json!({"clusterProfileRef": {"name": c}})).collect::<Vec<_>>(),
            "schedulerName": manager
        }))
        .unwrap()
    }

    #[test]
    fn a_decision_is_mirrored_with_upstreams_labels() {
        let source = ocm("p-decision-2", Some("p"), &[("c2", ""), ("c1", "best")]);
        let out = sig_placement_decision(&source).unwrap();
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!({
                "apiVersion": "multicluster.x-k8s.io/v1alpha1",
                "kind": "PlacementDecision",
                "metadata": {"name": "p-decision-2", "namespace": "ns1", "labels": {
                    "x-k8s.io/cluster-manager": "open-cluster-management",
                    "multicluster.x-k8s.io/placement-key": "p",
                    "multicluster.x-k8s.io/decision-key": "p",
                    "multicluster.x-k8s.io/decision-index": "1"}},
                "decisions": [
                    {"clusterProfileRef": {"name": "c2"}},
                    {"clusterProfileRef": {"name": "c1"}, "reason": "best"}
                ],
                "schedulerName": "open-cluster-management"
            })
        );
        // Without the placement labels only the cluster-manager label is set.
        let bare = sig_placement_decision(&ocm("x", None, &[])).unwrap();
        assert_eq!(
            bare.metadata.labels.unwrap().keys().collect::<Vec<_>>(),
            ["x-k8s.io/cluster-manager"]
        );
        assert!(bare.spec.decisions.is_empty());
    }

    #[test]
    fn more_than_a_hundred_clusters_cannot_be_mirrored() {
        let names: Vec<String> = (0..101).map(|i| format!("c{i}")).collect();
        let list: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
        let err = sig_placement_decision(&ocm("big", Some("p"), &list)).unwrap_err();
        assert_eq!(
            err,
            "PlacementDecision ns1/big lists 101 clusters; a SIG-Multicluster PlacementDecision \
             holds at most 100"
        );
        let source = ocm("big", Some("p"), &list);
        let planned = plan(&[&source], &[]);
        assert!(planned.changes.is_empty());
        assert_eq!(planned.skipped, [err]);
    }

    #[test]
    fn plan_creates_updates_and_deletes_only_ours() {
        let a = ocm("a", Some("p"), &[("c1", "")]);
        let b = ocm("b", Some("p"), &[("c2", "")]);
        let c = ocm("c", Some("p"), &[("c3", "")]);
        let d = ocm("d", Some("p"), &[("c4", "")]);
        let same_b = sig_placement_decision(&b).unwrap();
        let stale_c = sig("c", Some(OCM_CLUSTER_MANAGER), &["old"]);
        let foreign_d = sig("d", Some("karmada"), &["x"]);
        let orphan = sig("e", Some(OCM_CLUSTER_MANAGER), &["c5"]);
        let foreign_orphan = sig("f", None, &["c6"]);
        let planned = plan(
            &[&d, &c, &b, &a],
            &[&same_b, &stale_c, &foreign_d, &orphan, &foreign_orphan],
        );
        assert!(planned.skipped.is_empty());
        let summary: Vec<String> = planned
            .changes
            .iter()
            .map(|c| match c {
                SigChange::Create(d) => format!("create {}", d.metadata.name.as_deref().unwrap()),
                SigChange::Update(d) => format!(
                    "update {} at {}",
                    d.metadata.name.as_deref().unwrap(),
                    d.metadata.resource_version.as_deref().unwrap()
                ),
                SigChange::Delete { name, .. } => format!("delete {name}"),
            })
            .collect();
        assert_eq!(summary, ["create a", "update c at 7", "delete e"]);
        let SigChange::Update(updated) = &planned.changes[1] else {
            unreachable!()
        };
        assert_eq!(updated.cluster_names().collect::<Vec<_>>(), ["c3"]);
        assert_eq!(
            updated.metadata.labels.as_ref().unwrap()[labels::DECISION_KEY],
            "p"
        );
    }

    #[test]
    fn extra_labels_on_ours_are_tolerated_but_a_changed_order_is_not() {
        let source = ocm("a", Some("p"), &[("c1", ""), ("c2", "")]);
        let mut have = sig_placement_decision(&source).unwrap();
        have.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("team".into(), "x".into());
        assert!(up_to_date(&have, &sig_placement_decision(&source).unwrap()));
        let reordered = ocm("a", Some("p"), &[("c2", ""), ("c1", "")]);
        assert!(!up_to_date(
            &have,
            &sig_placement_decision(&reordered).unwrap()
        ));
    }
}
