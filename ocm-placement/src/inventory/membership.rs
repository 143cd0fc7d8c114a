//! Which managed clusters a ManagedClusterSet selects, and the status conditions of sets and
//! bindings (pure functions).
//!
//! Membership follows upstream's cluster-set selector: an `ExclusiveClusterSetLabel` set
//! selects the clusters whose `cluster.open-cluster-management.io/clusterset` label equals the
//! set's name; a `LabelSelector` set evaluates its label selector on cluster labels, where a
//! missing selector selects no cluster and an empty one selects every cluster.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{ManagedClusterSet, SelectorType};
use ocm_api::conditions::{ConditionStatus, NewCondition};
use ocm_api::constants::{cluster as c, labels};

use super::{InventoryError, name_of};

/// Whether `labels` satisfy `selector` with Kubernetes semantics (`matchLabels` and
/// `matchExpressions` ANDed; `NotIn` and `DoesNotExist` hold when the key is absent).
///
/// An unknown operator is an error, as it is for the API server.
pub fn selector_matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, InventoryError> {
    for (key, value) in selector.match_labels.iter().flatten() {
        if labels.get(key) != Some(value) {
            return Ok(false);
        }
    }
    for expr in selector.match_expressions.iter().flatten() {
        let found = labels.get(&expr.key);
        let values = expr.values.as_deref().unwrap_or_default();
        let ok = match expr.operator.as_str() {
            "In" => found.is_some_and(|v| values.contains(v)),
            "NotIn" => found.is_none_or(|v| !values.contains(v)),
            "Exists" => found.is_some(),
            "DoesNotExist" => found.is_none(),
            other => {
                return Err(InventoryError::InvalidSelector(format!(
                    "{other:?} is not a valid label selector operator"
                )));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `set` selects `cluster`.
pub fn is_member(
    set: &ManagedClusterSet,
    cluster: &ManagedCluster,
) -> Result<bool, InventoryError> {
    let empty = BTreeMap::new();
    let cluster_labels = cluster.metadata.labels.as_ref().unwrap_or(&empty);
    match set.selector_type() {
        SelectorType::ExclusiveClusterSetLabel => Ok(cluster_labels
            .get(labels::CLUSTER_SET)
            .is_some_and(|v| v == name_of(&set.metadata))),
        SelectorType::LabelSelector => {
            let selector = set
                .spec
                .cluster_selector
                .as_ref()
                .and_then(|s| s.label_selector.as_ref());
            match selector {
                None => Ok(false),
                Some(selector) => selector_matches(selector, cluster_labels),
            }
        }
        other => Err(InventoryError::UnknownSelectorType(other.to_string())),
    }
}

/// The names of the clusters `set` selects, in the order of `clusters`.
pub fn members<'a>(
    set: &ManagedClusterSet,
    clusters: impl IntoIterator<Item = &'a ManagedCluster>,
) -> Result<Vec<&'a str>, InventoryError> {
    let mut out = Vec::new();
    for cluster in clusters {
        if is_member(set, cluster)? {
            out.push(name_of(&cluster.metadata));
        }
    }
    Ok(out)
}

/// The `ClusterSetEmpty` condition for a set that selects `selected` clusters.
///
/// ```
/// use ocm_placement::inventory::cluster_set_empty_condition;
///
/// let none = cluster_set_empty_condition(0);
/// assert_eq!((none.status.as_str(), none.reason.as_str()), ("True", "NoClusterMatched"));
/// let two = cluster_set_empty_condition(2);
/// assert_eq!(two.message, "2 ManagedClusters selected");
/// ```
pub fn cluster_set_empty_condition(selected: usize) -> NewCondition {
    if selected == 0 {
        NewCondition::new(
            c::CONDITION_CLUSTER_SET_EMPTY,
            ConditionStatus::True,
            c::REASON_NO_CLUSTER_MATCHED,
            c::MESSAGE_NO_CLUSTER_MATCHED,
        )
    } else {
        NewCondition::new(
            c::CONDITION_CLUSTER_SET_EMPTY,
            ConditionStatus::False,
            c::REASON_CLUSTERS_SELECTED,
            format!("{selected} ManagedClusters selected"),
        )
    }
}

/// The `Bound` condition of a binding whose `spec.clusterSet` names a set that exists
/// (`set_exists`) or not.
pub fn bound_condition(set_exists: bool) -> NewCondition {
    if set_exists {
        NewCondition::new(
            c::CONDITION_BOUND,
            ConditionStatus::True,
            c::REASON_CLUSTER_SET_BOUND,
            "",
        )
    } else {
        NewCondition::new(
            c::CONDITION_BOUND,
            ConditionStatus::False,
            c::REASON_CLUSTER_SET_NOT_FOUND,
            "",
        )
    }
}
