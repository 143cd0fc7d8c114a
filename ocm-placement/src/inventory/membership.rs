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

use super::name_of;
use crate::Error;

/// Whether `labels` satisfy `selector` with Kubernetes semantics (`matchLabels` and
/// `matchExpressions` ANDed; `NotIn` and `DoesNotExist` hold when the key is absent).
///
/// A selector the API server would refuse (an unknown operator, a bad label key or value, a
/// wrong number of values) is an error with upstream's message, as
/// `LabelSelectorAsSelector` gives it to upstream's cluster-set controller.
pub fn selector_matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, Error> {
    ocm_api::k8s::labels::matches(selector, labels)
        .map_err(|e| Error::InvalidSelector(e.to_string()))
}

/// Whether `set` selects `cluster`.
pub fn is_member(set: &ManagedClusterSet, cluster: &ManagedCluster) -> Result<bool, Error> {
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
        other => Err(Error::UnknownSelectorType(other.to_string())),
    }
}

/// The names of the clusters `set` selects, in the order of `clusters`.
pub fn members<'a>(
    set: &ManagedClusterSet,
    clusters: impl IntoIterator<Item = &'a ManagedCluster>,
) -> Result<Vec<&'a str>, Error> {
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

#[cfg(test)]
mod selector_tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    use super::*;

    fn one(key: &str, operator: &str, values: Option<Vec<String>>) -> LabelSelector {
        LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: operator.into(),
                values,
            }]),
        }
    }

    /// Upstream's cluster-set controller goes through `LabelSelectorAsSelector`, which refuses
    /// a bad key or a missing value list; this copy used to match on them.
    #[test]
    fn invalid_selectors_are_refused_as_upstream_refuses_them() {
        let labels = BTreeMap::from([("env".to_string(), "prod".to_string())]);
        let err = selector_matches(&one("bad key", "Exists", None), &labels).unwrap_err();
        assert!(
            err.to_string().contains("key: Invalid value: \"bad key\""),
            "{err}"
        );
        let err = selector_matches(&one("env", "In", None), &labels).unwrap_err();
        assert!(
            err.to_string().contains("values set can't be empty"),
            "{err}"
        );
        let err = selector_matches(&one("env", "Near", None), &labels).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"Near\" is not a valid label selector operator"),
            "{err}"
        );
        assert!(selector_matches(&one("env", "In", Some(vec!["prod".into()])), &labels).unwrap());
        assert!(
            !selector_matches(&one("env", "NotIn", Some(vec!["prod".into()])), &labels).unwrap()
        );
    }
}
