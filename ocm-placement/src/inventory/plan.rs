//! One pass of the hub inventory controllers over a whole hub, as data.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use ocm_api::cluster::v1::{ManagedCluster, Taint};
use ocm_api::cluster::v1beta2::{
    ManagedClusterSelector, ManagedClusterSet, ManagedClusterSetBinding,
};
use ocm_api::conditions;

use super::{
    bound_condition, cluster_set_empty_condition, conditions_of, default_cluster_set,
    desired_health_taints, ensure_default_cluster_set_label, global_cluster_set, members, name_of,
    selector_to_restore,
};

/// Which inventory duties a pass performs. The default is upstream's hub with the
/// `DefaultClusterSet` feature gate on, minus the webhook's default cluster-set label.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InventoryOptions {
    /// Write each ManagedClusterSet's `ClusterSetEmpty` condition.
    pub cluster_set_status: bool,
    /// Write each ManagedClusterSetBinding's `Bound` condition.
    pub binding_status: bool,
    /// Create (and re-create) the `default` and `global` sets and revert changes to their
    /// selectors.
    pub well_known_sets: bool,
    /// Label clusters that have no (or an empty) cluster-set label into `default`, as
    /// upstream's mutating webhook does. Off by default: an addition of ours.
    pub label_default_cluster_set: bool,
    /// Keep the `unavailable` / `unreachable` taints in step with cluster health.
    pub health_taints: bool,
}

impl Default for InventoryOptions {
    fn default() -> Self {
        Self {
            cluster_set_status: true,
            binding_status: true,
            well_known_sets: true,
            label_default_cluster_set: false,
            health_taints: true,
        }
    }
}

impl InventoryOptions {
    /// Turns the default cluster-set label on or off.
    #[must_use]
    pub fn label_default_cluster_set(mut self, on: bool) -> Self {
        self.label_default_cluster_set = on;
        self
    }

    /// Turns the health taints on or off.
    #[must_use]
    pub fn health_taints(mut self, on: bool) -> Self {
        self.health_taints = on;
        self
    }

    /// Turns the well-known sets on or off.
    #[must_use]
    pub fn well_known_sets(mut self, on: bool) -> Self {
        self.well_known_sets = on;
        self
    }
}

/// One write the inventory controllers want made.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InventoryChange {
    /// Label the cluster into the `default` set.
    LabelClusterIntoDefaultSet {
        /// Cluster name.
        cluster: String,
    },
    /// Replace the cluster's `spec.taints`.
    SetClusterTaints {
        /// Cluster name.
        cluster: String,
        /// The new taint list.
        taints: Vec<Taint>,
        /// The `resourceVersion` the list was computed from, so that a concurrent change to
        /// the cluster makes the write fail instead of dropping someone else's taint.
        resource_version: Option<String>,
    },
    /// Create a well-known set.
    CreateSet(Box<ManagedClusterSet>),
    /// Restore a well-known set's `spec.clusterSelector`.
    RestoreSetSelector {
        /// Set name.
        set: String,
        /// The selector to write.
        selector: ManagedClusterSelector,
    },
    /// Write a set's status conditions.
    SetStatus {
        /// Set name.
        set: String,
        /// The full new condition list.
        conditions: Vec<Condition>,
    },
    /// Write a binding's status conditions.
    BindingStatus {
        /// Binding namespace.
        namespace: String,
        /// Binding name.
        name: String,
        /// The full new condition list.
        conditions: Vec<Condition>,
    },
}

/// The outcome of [`plan`]: the writes to make, in the order to make them, and the objects
/// that could not be evaluated.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct InventoryPlan {
    /// Writes, in order: cluster labels, cluster taints, set creations, selector restores,
    /// set statuses, binding statuses.
    pub changes: Vec<InventoryChange>,
    /// Objects that were skipped, with the reason (for example an invalid selector).
    pub errors: Vec<String>,
}

/// Computes every write one pass of the inventory controllers makes on a hub holding
/// `clusters`, `sets` and `bindings`, at `now`. Later steps see the effect of earlier ones (a
/// cluster labelled into `default` counts as its member; a re-created set makes its bindings
/// bound). An empty plan means the hub is up to date.
pub fn plan(
    clusters: &[ManagedCluster],
    sets: &[ManagedClusterSet],
    bindings: &[ManagedClusterSetBinding],
    options: &InventoryOptions,
    now: Timestamp,
) -> InventoryPlan {
    let now = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    let mut out = InventoryPlan::default();
    let clusters = plan_clusters(clusters, options, &now, &mut out);
    let sets = plan_well_known_sets(sets, options, &mut out);
    if options.cluster_set_status {
        plan_set_statuses(&sets, &clusters, &now, &mut out);
    }
    if options.binding_status {
        plan_binding_statuses(bindings, &sets, &now, &mut out);
    }
    out
}

/// Labels clusters into the `default` set and sets their health taints; the clusters as
/// they are after those writes.
fn plan_clusters(
    clusters: &[ManagedCluster],
    options: &InventoryOptions,
    now: &Time,
    out: &mut InventoryPlan,
) -> Vec<ManagedCluster> {
    let mut clusters: Vec<ManagedCluster> = clusters.to_vec();
    for cluster in &mut clusters {
        let mut relabelled = false;
        if options.label_default_cluster_set
            && cluster.metadata.deletion_timestamp.is_none()
            && ensure_default_cluster_set_label(cluster)
        {
            relabelled = true;
            out.changes
                .push(InventoryChange::LabelClusterIntoDefaultSet {
                    cluster: name_of(&cluster.metadata).to_string(),
                });
        }
        if options.health_taints
            && let Some(taints) = desired_health_taints(cluster, now)
        {
            out.changes.push(InventoryChange::SetClusterTaints {
                cluster: name_of(&cluster.metadata).to_string(),
                taints: taints.clone(),
                // The label write of this pass changes the version: no precondition then.
                resource_version: if relabelled {
                    None
                } else {
                    cluster.metadata.resource_version.clone()
                },
            });
            cluster.spec.taints = Some(taints);
        }
    }
    clusters
}

/// Creates the `default` and `global` sets when missing and restores their selectors; the
/// sets as they are after those writes.
fn plan_well_known_sets(
    sets: &[ManagedClusterSet],
    options: &InventoryOptions,
    out: &mut InventoryPlan,
) -> Vec<ManagedClusterSet> {
    let mut sets: Vec<ManagedClusterSet> = sets.to_vec();
    if options.well_known_sets {
        for wanted in [default_cluster_set(), global_cluster_set()] {
            let name = name_of(&wanted.metadata).to_string();
            match sets.iter_mut().find(|s| name_of(&s.metadata) == name) {
                None => {
                    out.changes
                        .push(InventoryChange::CreateSet(Box::new(wanted.clone())));
                    sets.push(wanted);
                }
                Some(set) => {
                    if set.metadata.deletion_timestamp.is_none()
                        && let Some(selector) = selector_to_restore(set)
                    {
                        out.changes.push(InventoryChange::RestoreSetSelector {
                            set: name,
                            selector: selector.clone(),
                        });
                        set.spec.cluster_selector = Some(selector);
                    }
                }
            }
        }
    }
    sets
}

/// Each set's `ClusterSetEmpty` condition.
fn plan_set_statuses(
    sets: &[ManagedClusterSet],
    clusters: &[ManagedCluster],
    now: &Time,
    out: &mut InventoryPlan,
) {
    for set in sets {
        if set.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = name_of(&set.metadata);
        let count = match members(set, clusters) {
            Ok(m) => m.len(),
            Err(e) => {
                out.errors.push(format!("ManagedClusterSet {name}: {e}"));
                continue;
            }
        };
        let current = conditions_of(set.status.as_ref().and_then(|s| s.conditions.as_ref()));
        let mut next = current.to_vec();
        if conditions::set(&mut next, cluster_set_empty_condition(count), now) {
            out.changes.push(InventoryChange::SetStatus {
                set: name.to_string(),
                conditions: next,
            });
        }
    }
}

/// Each binding's `Bound` condition.
fn plan_binding_statuses(
    bindings: &[ManagedClusterSetBinding],
    sets: &[ManagedClusterSet],
    now: &Time,
    out: &mut InventoryPlan,
) {
    let existing: BTreeSet<&str> = sets.iter().map(|s| name_of(&s.metadata)).collect();
    for binding in bindings {
        if binding.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let target = binding.spec.cluster_set.as_deref().unwrap_or_default();
        let bound = !target.is_empty() && existing.contains(target);
        let current = conditions_of(binding.status.as_ref().and_then(|s| s.conditions.as_ref()));
        let mut next = current.to_vec();
        if conditions::set(&mut next, bound_condition(bound), now) {
            out.changes.push(InventoryChange::BindingStatus {
                namespace: binding.metadata.namespace.clone().unwrap_or_default(),
                name: name_of(&binding.metadata).to_string(),
                conditions: next,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    fn cluster(name: &str, labels: serde_json::Value, available: &str) -> ManagedCluster {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"conditions": [{"type": "ManagedClusterConditionAvailable", "status": available,
                "reason": "R", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap()
    }

    fn set(name: &str, selector: serde_json::Value) -> ManagedClusterSet {
        serde_json::from_value(
            json!({"metadata": {"name": name}, "spec": {"clusterSelector": selector}}),
        )
        .unwrap()
    }

    fn apply_statuses(sets: &mut [ManagedClusterSet], plan: &InventoryPlan) {
        for change in &plan.changes {
            if let InventoryChange::SetStatus { set, conditions } = change {
                let s = sets
                    .iter_mut()
                    .find(|s| name_of(&s.metadata) == set)
                    .unwrap();
                s.status.get_or_insert_with(Default::default).conditions = Some(conditions.clone());
            }
        }
    }

    #[test]
    fn membership_counts_and_steady_state() {
        let clusters = [
            cluster(
                "a",
                json!({"cluster.open-cluster-management.io/clusterset": "prod", "env": "x"}),
                "True",
            ),
            cluster("b", json!({"env": "x"}), "True"),
        ];
        let mut sets = vec![
            default_cluster_set(),
            global_cluster_set(),
            set("prod", json!({"selectorType": "ExclusiveClusterSetLabel"})),
            set(
                "env",
                json!({"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"env": "x"}}}),
            ),
            set("nil", json!({"selectorType": "LabelSelector"})),
        ];
        let p = plan(&clusters, &sets, &[], &InventoryOptions::default(), now());
        let msg = |name: &str| {
            p.changes.iter().find_map(|c| match c {
                InventoryChange::SetStatus { set, conditions } if set == name => {
                    Some(conditions[0].message.clone())
                }
                _ => None,
            })
        };
        assert_eq!(
            msg("default").as_deref(),
            Some("No ManagedCluster selected")
        );
        assert_eq!(msg("global").as_deref(), Some("2 ManagedClusters selected"));
        assert_eq!(msg("prod").as_deref(), Some("1 ManagedClusters selected"));
        assert_eq!(msg("env").as_deref(), Some("2 ManagedClusters selected"));
        assert_eq!(msg("nil").as_deref(), Some("No ManagedCluster selected"));
        apply_statuses(&mut sets, &p);
        let again = plan(&clusters, &sets, &[], &InventoryOptions::default(), now());
        assert_eq!(again, InventoryPlan::default());
    }

    #[test]
    fn labelling_into_default_counts_in_the_same_pass() {
        let clusters = [cluster("a", json!({}), "True")];
        let sets = vec![default_cluster_set(), global_cluster_set()];
        let options = InventoryOptions::default().label_default_cluster_set(true);
        let p = plan(&clusters, &sets, &[], &options, now());
        assert!(
            matches!(&p.changes[0], InventoryChange::LabelClusterIntoDefaultSet { cluster } if cluster == "a")
        );
        assert!(p.changes.iter().any(|c| matches!(c,
            InventoryChange::SetStatus { set, conditions } if set == "default" && conditions[0].status == "False")));
    }

    #[test]
    fn bindings_are_bound_to_existing_or_recreated_sets() {
        let binding = |name: &str| -> ManagedClusterSetBinding {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
                "spec": {"clusterSet": name}}))
            .unwrap()
        };
        let p = plan(
            &[],
            &[],
            &[binding("global"), binding("missing")],
            &InventoryOptions::default(),
            now(),
        );
        let reasons: Vec<_> = p
            .changes
            .iter()
            .filter_map(|c| match c {
                InventoryChange::BindingStatus {
                    name, conditions, ..
                } => Some((name.as_str(), conditions[0].reason.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            reasons,
            [
                ("global", "ClusterSetBound"),
                ("missing", "ClusterSetNotFound")
            ]
        );
    }
}
