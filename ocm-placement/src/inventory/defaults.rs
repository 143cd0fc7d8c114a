//! The well-known `default` and `global` ManagedClusterSets and the default cluster-set label
//! (pure functions).
//!
//! Upstream's hub (feature gate `DefaultClusterSet`) keeps two sets alive: `default`, an
//! `ExclusiveClusterSetLabel` set, and `global`, a `LabelSelector` set with the empty selector
//! (every cluster). Both are re-created when deleted, and a change to their
//! `spec.clusterSelector` is reverted unless the set carries the annotation
//! `cluster.open-cluster-management.io/autoupdate: "false"`. Upstream's ManagedCluster
//! mutating webhook also puts clusters without a cluster-set label into `default`;
//! [`ensure_default_cluster_set_label`] does the same to an object in memory.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{
    ManagedClusterSelector, ManagedClusterSet, ManagedClusterSetSpec, SelectorType,
};
use ocm_api::constants::{annotations, cluster as c, labels};

/// The `spec.clusterSelector` of the well-known set `name` (`default` or `global`).
pub fn well_known_selector(name: &str) -> Option<ManagedClusterSelector> {
    match name {
        c::DEFAULT_CLUSTER_SET => Some(ManagedClusterSelector {
            selector_type: SelectorType::ExclusiveClusterSetLabel,
            label_selector: None,
        }),
        c::GLOBAL_CLUSTER_SET => Some(ManagedClusterSelector {
            selector_type: SelectorType::LabelSelector,
            label_selector: Some(LabelSelector::default()),
        }),
        _ => None,
    }
}

fn well_known(name: &str, selector: ManagedClusterSelector) -> ManagedClusterSet {
    ManagedClusterSet {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        spec: ManagedClusterSetSpec {
            cluster_selector: Some(selector),
            managed_namespaces: None,
        },
        status: None,
    }
}

/// The `default` set: `ExclusiveClusterSetLabel`.
pub fn default_cluster_set() -> ManagedClusterSet {
    well_known(
        c::DEFAULT_CLUSTER_SET,
        ManagedClusterSelector {
            selector_type: SelectorType::ExclusiveClusterSetLabel,
            label_selector: None,
        },
    )
}

/// The `global` set: `LabelSelector` with the empty selector, so every cluster.
pub fn global_cluster_set() -> ManagedClusterSet {
    well_known(
        c::GLOBAL_CLUSTER_SET,
        ManagedClusterSelector {
            selector_type: SelectorType::LabelSelector,
            label_selector: Some(LabelSelector::default()),
        },
    )
}

/// Whether the set opted out of having its selector reverted (annotation
/// `cluster.open-cluster-management.io/autoupdate: "false"`).
pub fn auto_update_disabled(set: &ManagedClusterSet) -> bool {
    set.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::CLUSTER_SET_AUTO_UPDATE))
        .is_some_and(|v| v == "false")
}

/// For a well-known set whose `spec.clusterSelector` was changed, the selector to restore;
/// `None` when the set is not well-known, is unchanged, or opted out of auto-update.
///
/// A selector that is absent counts as the CRD default (`ExclusiveClusterSetLabel`), as the
/// API server would have filled it in.
///
/// ```
/// use ocm_placement::inventory::{global_cluster_set, selector_to_restore};
///
/// let mut global = global_cluster_set();
/// assert_eq!(selector_to_restore(&global), None);
/// global.spec.cluster_selector = None;
/// assert!(selector_to_restore(&global).is_some());
/// ```
pub fn selector_to_restore(set: &ManagedClusterSet) -> Option<ManagedClusterSelector> {
    let name = set.metadata.name.as_deref()?;
    let want = well_known_selector(name)?;
    if auto_update_disabled(set) {
        return None;
    }
    let have = set.spec.cluster_selector.clone().unwrap_or_default();
    (have != want).then_some(want)
}

/// Puts `cluster` into the `default` set the way upstream's mutating webhook does: the label
/// `cluster.open-cluster-management.io/clusterset: default` is set when the cluster has no
/// such label or an empty one. Reports whether the cluster changed.
///
/// ```
/// use ocm_placement::inventory::ensure_default_cluster_set_label;
/// use ocm_api::cluster::v1::ManagedCluster;
///
/// let mut cluster = ManagedCluster::default();
/// assert!(ensure_default_cluster_set_label(&mut cluster));
/// assert_eq!(cluster.metadata.labels.as_ref().unwrap()["cluster.open-cluster-management.io/clusterset"], "default");
/// assert!(!ensure_default_cluster_set_label(&mut cluster));
/// ```
pub fn ensure_default_cluster_set_label(cluster: &mut ManagedCluster) -> bool {
    let labels_map = cluster.metadata.labels.get_or_insert_with(BTreeMap::new);
    match labels_map.get(labels::CLUSTER_SET) {
        Some(v) if !v.is_empty() => false,
        _ => {
            labels_map.insert(
                labels::CLUSTER_SET.to_string(),
                c::DEFAULT_CLUSTER_SET.to_string(),
            );
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_set_reverts_unless_opted_out() {
        let mut set = default_cluster_set();
        assert_eq!(selector_to_restore(&set), None);
        set.spec.cluster_selector = None;
        assert_eq!(selector_to_restore(&set), None, "absent = CRD default");
        set.spec.cluster_selector = Some(ManagedClusterSelector {
            selector_type: SelectorType::LabelSelector,
            label_selector: Some(LabelSelector::default()),
        });
        assert_eq!(selector_to_restore(&set), well_known_selector("default"));
        set.metadata.annotations = Some(
            [(
                annotations::CLUSTER_SET_AUTO_UPDATE.to_string(),
                "false".to_string(),
            )]
            .into(),
        );
        assert_eq!(selector_to_restore(&set), None);
    }

    #[test]
    fn other_sets_are_not_touched() {
        let mut set = global_cluster_set();
        set.metadata.name = Some("prod".into());
        set.spec.cluster_selector = None;
        assert_eq!(selector_to_restore(&set), None);
    }

    #[test]
    fn empty_label_is_replaced_but_a_set_label_kept() {
        let mut cluster = ManagedCluster::default();
        cluster.metadata.labels = Some([(labels::CLUSTER_SET.to_string(), String::new())].into());
        assert!(ensure_default_cluster_set_label(&mut cluster));
        cluster.metadata.labels = Some([(labels::CLUSTER_SET.to_string(), "prod".into())].into());
        assert!(!ensure_default_cluster_set_label(&mut cluster));
    }
}
