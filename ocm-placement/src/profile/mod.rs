//! SIG-Multicluster ClusterProfiles (KEP-4322) built from ManagedClusters, as upstream OCM's
//! registration hub does behind its `ClusterProfile` feature gate (off by default; here
//! `ocm-hub-controller --feature-gates ClusterProfile=true`). Consumers that read the
//! vendor-neutral inventory API (Kueue's MultiKueue, Argo CD and others) then see OCM's
//! clusters, their health, version and claims.
//!
//! The rules are upstream's (its `ClusterProfileLifecycleController` and
//! `ClusterProfileStatusController`):
//!
//! * **Where**: a ClusterProfile named after the cluster in every namespace that holds a
//!   ManagedClusterSetBinding whose `Bound` condition is `True` and whose `spec.clusterSet`
//!   names an existing set the cluster belongs to (by the set's selector, as the scheduler
//!   decides membership; a cluster in several such sets gets one profile). Clusters being
//!   deleted get none.
//! * **What is created**: labels `x-k8s.io/cluster-manager: open-cluster-management` and
//!   `open-cluster-management.io/cluster-name: <cluster>`, `spec.displayName: <cluster>`,
//!   `spec.clusterManager.name: open-cluster-management`.
//! * **When it is deleted**: a ClusterProfile carrying the cluster-manager label with OCM's
//!   name that is not wanted any more (its binding is gone or no longer bound, the cluster left
//!   the set or is being deleted). Profiles without that label are never deleted. Nothing is
//!   created or deleted in a namespace that is gone or terminating.
//! * **Status**, for every profile whose `spec.clusterManager.name` is OCM's, of the cluster
//!   named by its `open-cluster-management.io/cluster-name` label (or, without one, by its
//!   name): `version.kubernetes` from the cluster's `status.version.kubernetes`; `properties`
//!   from its `status.clusterClaims` (name and value, in order; no `lastObservedTime`); the
//!   conditions `ControlPlaneHealthy` (from `ManagedClusterConditionAvailable`) and `Joined`
//!   (from `ManagedClusterJoined`) with the source's status, reason and message, set with
//!   Kubernetes' set-condition rules (a condition the cluster does not have is left as it
//!   is). Other status fields (`accessProviders`, written by access plugins) are kept.
//! * **Labels**: `x-k8s.io/cluster-manager`, `multicluster.x-k8s.io/clusterset` (the
//!   cluster's `cluster.open-cluster-management.io/clusterset` label, `""` without one) and
//!   `open-cluster-management.io/cluster-name` are added or corrected; other labels are kept.
//!
//! Differences from upstream: one controller does both of upstream's, reconciling the whole
//! hub in one pass (so it also reacts to a cluster's label changes, which upstream's
//! lifecycle controller only sees at its resync); a new profile is created with all three
//! labels and gets its status in the same pass; it emits no `ClusterProfileStatusUpdated`
//! Event. A claim the ClusterProfile CRD refuses as a property (an empty or missing name or
//! value, a name over 253 or a value over 1024 characters, a name seen before) is left out
//! and reported by cluster and claim ([`ProfilePlan::skipped`]), where upstream's status write
//! fails as a whole and the profile keeps a stale health condition.
//!
//! # Example
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_placement::profile::profile_status;
//!
//! let cluster: ManagedCluster = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "cluster1"},
//!     "spec": {},
//!     "status": {
//!         "version": {"kubernetes": "v1.32.1"},
//!         "clusterClaims": [{"name": "platform.open-cluster-management.io", "value": "AWS"}],
//!         "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
//!             "reason": "ManagedClusterAvailable", "message": "Managed cluster is available",
//!             "lastTransitionTime": "2026-01-01T00:00:00Z"}]
//!     }
//! }))?;
//! let now = Time("2026-01-02T00:00:00Z".parse()?);
//! let (status, problems) = profile_status(None, &cluster, &now);
//! assert!(problems.is_empty());
//! assert_eq!(status.version.unwrap().kubernetes.as_deref(), Some("v1.32.1"));
//! assert_eq!(status.properties.unwrap()[0].value, "AWS");
//! let healthy = &status.conditions.unwrap()[0];
//! assert_eq!((healthy.type_.as_str(), healthy.status.as_str()), ("ControlPlaneHealthy", "True"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{cluster as c, labels as ocm_labels};
use ocm_api::multicluster::v1alpha1::{
    ClusterManager, ClusterProfile, ClusterProfileSpec, ClusterProfileStatus, ClusterVersion,
    Property,
};
use ocm_api::multicluster::{
    CONDITION_CONTROL_PLANE_HEALTHY, CONDITION_JOINED, OCM_CLUSTER_MANAGER, labels,
};
use serde_json::Value;

use crate::inventory::is_member;

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
mod controller;
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use controller::{ClusterProfileController, PROFILE_RESYNC_PERIOD, ProfileOutcome};

/// The longest property name the ClusterProfile CRD accepts, in characters.
pub const MAX_PROPERTY_NAME: usize = 253;
/// The longest property value the ClusterProfile CRD accepts, in characters.
pub const MAX_PROPERTY_VALUE: usize = 1024;

fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

/// Whether `profile` is labelled as OCM's (only those are deleted).
pub fn is_labelled_ours(profile: &ClusterProfile) -> bool {
    profile
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(labels::CLUSTER_MANAGER))
        .is_some_and(|v| v == OCM_CLUSTER_MANAGER)
}

/// The cluster a profile describes: its `open-cluster-management.io/cluster-name` label, or
/// its name.
pub fn cluster_of(profile: &ClusterProfile) -> &str {
    profile
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(ocm_labels::CLUSTER_NAME))
        .map_or_else(|| name_of(&profile.metadata), String::as_str)
}

/// For every namespace holding a ManagedClusterSetBinding, the clusters that get a
/// ClusterProfile there (see the [module docs](self)), and the sets that could not be
/// evaluated (with the reason).
pub fn desired_profiles(
    clusters: &[&ManagedCluster],
    sets: &[&ManagedClusterSet],
    bindings: &[&ManagedClusterSetBinding],
) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for binding in bindings {
        let namespace = binding.metadata.namespace.clone().unwrap_or_default();
        let wanted = out.entry(namespace.clone()).or_default();
        let bound = binding
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .is_some_and(|c| conditions::is_true(c, c::CONDITION_BOUND));
        if !bound {
            continue;
        }
        let set_name = binding.spec.cluster_set.as_deref().unwrap_or_default();
        let Some(set) = sets.iter().find(|s| name_of(&s.metadata) == set_name) else {
            continue;
        };
        // A set whose selector cannot be evaluated contributes no cluster (upstream gives
        // up on the set as a whole).
        let members: Result<Vec<&str>, _> = clusters
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| match is_member(set, c) {
                Ok(true) => Some(Ok(name_of(&c.metadata))),
                Ok(false) => None,
                Err(e) => Some(Err(e)),
            })
            .collect();
        match members {
            Ok(members) => wanted.extend(members.into_iter().map(str::to_string)),
            Err(e) => skipped.push(format!(
                "ManagedClusterSet {set_name} (bound in {namespace}): {e}"
            )),
        }
    }
    (out, skipped)
}

/// The labels OCM keeps on the profile of `cluster`.
pub fn required_labels(cluster: &ManagedCluster) -> BTreeMap<String, String> {
    let set = cluster
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(ocm_labels::CLUSTER_SET))
        .cloned()
        .unwrap_or_default();
    BTreeMap::from([
        (
            labels::CLUSTER_MANAGER.to_string(),
            OCM_CLUSTER_MANAGER.to_string(),
        ),
        (labels::CLUSTER_SET.to_string(), set),
        (
            ocm_labels::CLUSTER_NAME.to_string(),
            name_of(&cluster.metadata).to_string(),
        ),
    ])
}

/// A new ClusterProfile for `cluster` in `namespace`, as OCM creates it (no status).
pub fn new_profile(namespace: &str, cluster: &ManagedCluster) -> ClusterProfile {
    let name = name_of(&cluster.metadata);
    let mut profile = ClusterProfile::new(
        name,
        ClusterProfileSpec {
            display_name: Some(name.to_string()),
            cluster_manager: ClusterManager {
                name: OCM_CLUSTER_MANAGER.to_string(),
            },
        },
    );
    profile.metadata.namespace = Some(namespace.to_string());
    profile.metadata.labels = Some(required_labels(cluster));
    profile
}

/// Why a claim cannot be a ClusterProfile property, if it cannot.
fn property_problem(name: &str, value: &str, seen: &BTreeSet<&str>) -> Option<String> {
    let chars = |s: &str| s.chars().count();
    if name.is_empty() {
        Some("has no name".into())
    } else if chars(name) > MAX_PROPERTY_NAME {
        Some(format!(
            "has a name of {} characters (a property name has at most {MAX_PROPERTY_NAME})",
            chars(name)
        ))
    } else if value.is_empty() {
        Some("has no value (a property value has at least 1 character)".into())
    } else if chars(value) > MAX_PROPERTY_VALUE {
        Some(format!(
            "has a value of {} characters (a property value has at most {MAX_PROPERTY_VALUE})",
            chars(value)
        ))
    } else if seen.contains(name) {
        Some("is listed more than once (property names are unique)".into())
    } else {
        None
    }
}

/// The status of a ClusterProfile of `cluster`, starting from its `existing` status (see the
/// [module docs](self)); conditions that change status get `now` as their transition time.
/// Also returns the claims and conditions that could not be carried over, each described
/// with the cluster's name.
pub fn profile_status(
    existing: Option<&ClusterProfileStatus>,
    cluster: &ManagedCluster,
    now: &Time,
) -> (ClusterProfileStatus, Vec<String>) {
    let cluster_name = name_of(&cluster.metadata);
    let mut problems = Vec::new();
    let mut status = existing.cloned().unwrap_or_default();
    let source = cluster.status.as_ref();
    status.version = Some(ClusterVersion {
        kubernetes: source
            .and_then(|s| s.version.as_ref())
            .and_then(|v| v.kubernetes.clone())
            .filter(|k| !k.is_empty()),
    });

    let mut properties = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, claim) in source
        .and_then(|s| s.cluster_claims.as_deref())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let name = claim.name.as_deref().unwrap_or_default();
        let value = claim.value.as_deref().unwrap_or_default();
        match property_problem(name, value, &seen) {
            None => {
                seen.insert(name);
                properties.push(Property {
                    name: name.to_string(),
                    value: value.to_string(),
                    last_observed_time: None,
                });
            }
            Some(why) => problems.push(format!(
                "ManagedCluster {cluster_name}: status.clusterClaims[{i}] ({name:?}) {why}; \
                 it is left out of its ClusterProfiles' properties"
            )),
        }
    }
    status.properties = (!properties.is_empty()).then_some(properties);

    let mut conds = status.conditions.take().unwrap_or_default();
    let source_conditions = source
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    for (from, to) in [
        (c::CONDITION_AVAILABLE, CONDITION_CONTROL_PLANE_HEALTHY),
        (c::CONDITION_JOINED, CONDITION_JOINED),
    ] {
        let Some(found) = conditions::find(source_conditions, from) else {
            continue;
        };
        match ConditionStatus::parse(&found.status) {
            Some(state) => {
                conditions::set(
                    &mut conds,
                    NewCondition::new(to, state, found.reason.clone(), found.message.clone()),
                    now,
                );
            }
            None => problems.push(format!(
                "ManagedCluster {cluster_name}: condition {from} has status {:?} (not True, \
                 False or Unknown); {to} is left as it is",
                found.status
            )),
        }
    }
    status.conditions = (!conds.is_empty()).then_some(conds);
    (status, problems)
}

/// The JSON merge patch (RFC 7386) that turns `old` into `new`: changed members with their new
/// value, nested objects as patches of their own, removed members as `null`. `None` when they
/// are equal.
pub(crate) fn merge_patch(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = serde_json::Map::new();
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => {
                        if let Some(p) = merge_patch(av, bv) {
                            patch.insert(k.clone(), p);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), bv.clone());
                    }
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                patch.insert(k.clone(), Value::Null);
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (a, b) if a == b => None,
        (_, b) => Some(b.clone()),
    }
}

/// One write the ClusterProfile controller makes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProfileChange {
    /// Create this profile; its status (`status`, a merge patch of the status subresource)
    /// follows right after.
    Create {
        /// The profile to create.
        profile: Box<ClusterProfile>,
        /// Its first status.
        status: Value,
    },
    /// Delete the profile `namespace/name`.
    Delete {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Merge-patch the status of the profile `namespace/name`.
    Status {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The merge patch of `status`.
        patch: Value,
    },
    /// Merge-patch the labels of the profile `namespace/name`.
    Labels {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The labels to set.
        labels: BTreeMap<String, String>,
    },
}

impl ProfileChange {
    /// The namespace the change is in.
    pub fn namespace(&self) -> &str {
        match self {
            Self::Create { profile, .. } => {
                profile.metadata.namespace.as_deref().unwrap_or_default()
            }
            Self::Delete { namespace, .. }
            | Self::Status { namespace, .. }
            | Self::Labels { namespace, .. } => namespace,
        }
    }

    /// Whether it creates or deletes a profile (and so needs its namespace to be live).
    pub fn is_lifecycle(&self) -> bool {
        matches!(self, Self::Create { .. } | Self::Delete { .. })
    }
}

/// What a pass over the hub must write, and what it had to leave out.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ProfilePlan {
    /// The writes: creates and deletes by namespace and name, then status and label updates.
    pub changes: Vec<ProfileChange>,
    /// Objects (or parts of them) that could not be used, each with the reason.
    pub skipped: Vec<String>,
}

/// The writes that bring the hub's ClusterProfiles (`profiles`, all of them, OCM's or not) in
/// line with its clusters, sets and bindings at `now`.
pub fn plan(
    clusters: &[&ManagedCluster],
    sets: &[&ManagedClusterSet],
    bindings: &[&ManagedClusterSetBinding],
    profiles: &[&ClusterProfile],
    now: &Time,
) -> ProfilePlan {
    let (desired, mut skipped) = desired_profiles(clusters, sets, bindings);
    let cluster_named = |name: &str| {
        clusters
            .iter()
            .copied()
            .find(|c| name_of(&c.metadata) == name)
    };
    let mut changes = Vec::new();
    let mut namespaces: BTreeSet<&str> = desired.keys().map(String::as_str).collect();
    namespaces.extend(
        profiles
            .iter()
            .filter_map(|p| p.metadata.namespace.as_deref()),
    );
    let mut reported = BTreeSet::new();
    let mut report = |problems: Vec<String>, skipped: &mut Vec<String>| {
        for p in problems {
            if reported.insert(p.clone()) {
                skipped.push(p);
            }
        }
    };
    for namespace in namespaces {
        let wanted = desired.get(namespace).cloned().unwrap_or_default();
        let in_namespace: Vec<&ClusterProfile> = profiles
            .iter()
            .copied()
            .filter(|p| p.metadata.namespace.as_deref() == Some(namespace))
            .collect();
        let ours: BTreeSet<&str> = in_namespace
            .iter()
            .filter(|p| is_labelled_ours(p))
            .map(|p| name_of(&p.metadata))
            .collect();
        for cluster_name in wanted.iter().filter(|n| !ours.contains(n.as_str())) {
            let Some(cluster) = cluster_named(cluster_name) else {
                continue;
            };
            let profile = new_profile(namespace, cluster);
            let (status, problems) = profile_status(None, cluster, now);
            report(problems, &mut skipped);
            let status = serde_json::to_value(&status).unwrap_or(Value::Null);
            changes.push(ProfileChange::Create {
                profile: Box::new(profile),
                status,
            });
        }
        for name in ours.iter().filter(|n| !wanted.contains(**n)) {
            changes.push(ProfileChange::Delete {
                namespace: namespace.to_string(),
                name: name.to_string(),
            });
        }
    }
    let deleted: BTreeSet<(&str, &str)> = changes
        .iter()
        .filter_map(|c| match c {
            ProfileChange::Delete { namespace, name } => Some((namespace.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut updates = Vec::new();
    for profile in profiles {
        let namespace = profile.metadata.namespace.as_deref().unwrap_or_default();
        let name = name_of(&profile.metadata);
        if profile.spec.cluster_manager.name != OCM_CLUSTER_MANAGER
            || deleted.contains(&(namespace, name))
        {
            continue;
        }
        let Some(cluster) = cluster_named(cluster_of(profile)) else {
            continue;
        };
        let (writes, problems) = profile_updates(profile, cluster, now);
        report(problems, &mut skipped);
        updates.extend(writes);
    }
    changes.extend(updates);
    ProfilePlan { changes, skipped }
}

/// The writes that bring the OCM ClusterProfile `profile` of `cluster` up to date (its
/// status as a merge patch, its missing required labels), and the problems found on the way.
fn profile_updates(
    profile: &ClusterProfile,
    cluster: &ManagedCluster,
    now: &Time,
) -> (Vec<ProfileChange>, Vec<String>) {
    let namespace = profile.metadata.namespace.as_deref().unwrap_or_default();
    let name = name_of(&profile.metadata);
    let mut updates = Vec::new();
    let (status, problems) = profile_status(profile.status.as_ref(), cluster, now);
    let old =
        serde_json::to_value(profile.status.clone().unwrap_or_default()).unwrap_or(Value::Null);
    let new = serde_json::to_value(&status).unwrap_or(Value::Null);
    if let Some(patch) = merge_patch(&old, &new) {
        updates.push(ProfileChange::Status {
            namespace: namespace.to_string(),
            name: name.to_string(),
            patch,
        });
    }
    let have = profile.metadata.labels.clone().unwrap_or_default();
    let missing: BTreeMap<String, String> = required_labels(cluster)
        .into_iter()
        .filter(|(k, v)| have.get(k) != Some(v))
        .collect();
    if !missing.is_empty() {
        updates.push(ProfileChange::Labels {
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels: missing,
        });
    }
    (updates, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    fn cluster(name: &str, set: Option<&str>, status: Value) -> ManagedCluster {
        let mut labels = serde_json::Map::new();
        if let Some(s) = set {
            labels.insert(ocm_labels::CLUSTER_SET.into(), json!(s));
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels}, "spec": {}, "status": status
        }))
        .unwrap()
    }

    fn exclusive(name: &str) -> ManagedClusterSet {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
            "clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}))
        .unwrap()
    }

    fn binding(ns: &str, set: &str, bound: Option<&str>) -> ManagedClusterSetBinding {
        let mut b =
            json!({"metadata": {"name": set, "namespace": ns}, "spec": {"clusterSet": set}});
        if let Some(status) = bound {
            b["status"] = json!({"conditions": [{"type": "Bound", "status": status,
                "reason": "x", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        }
        serde_json::from_value(b).unwrap()
    }

    fn condition(type_: &str, status: &str, reason: &str) -> Value {
        json!({"type": type_, "status": status, "reason": reason, "message": format!("{reason}!"),
            "lastTransitionTime": "2025-12-01T00:00:00Z"})
    }

    #[test]
    fn profiles_go_where_a_bound_binding_brings_the_cluster() {
        let c1 = cluster("c1", Some("a"), json!({}));
        let c2 = cluster("c2", Some("b"), json!({}));
        let mut gone: ManagedCluster = cluster("c3", Some("a"), json!({}));
        gone.metadata.deletion_timestamp = Some(at("2026-01-01T00:00:00Z"));
        let everyone: ManagedClusterSet =
            serde_json::from_value(json!({"metadata": {"name": "all"},
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}}}))
            .unwrap();
        let broken: ManagedClusterSet =
            serde_json::from_value(json!({"metadata": {"name": "broken"},
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {
                "matchExpressions": [{"key": "x", "operator": "Near"}]}}}}))
            .unwrap();
        let (a, b) = (exclusive("a"), exclusive("b"));
        let bindings = [
            binding("ns1", "a", Some("True")),
            binding("ns1", "all", Some("True")),
            binding("ns2", "b", Some("False")),
            binding("ns3", "b", None),
            binding("ns4", "missing", Some("True")),
            binding("ns5", "broken", Some("True")),
            binding("ns6", "b", Some("True")),
        ];
        let (desired, skipped) = desired_profiles(
            &[&c1, &c2, &gone],
            &[&a, &b, &everyone, &broken],
            &bindings.iter().collect::<Vec<_>>(),
        );
        let list = |ns: &str| desired[ns].iter().cloned().collect::<Vec<_>>();
        // c1 through two sets, once; c3 is being deleted.
        assert_eq!(list("ns1"), ["c1", "c2"]);
        assert!(list("ns2").is_empty(), "not bound");
        assert!(list("ns3").is_empty(), "no Bound condition yet");
        assert!(list("ns4").is_empty(), "no such set");
        assert!(list("ns5").is_empty(), "selector cannot be evaluated");
        assert_eq!(list("ns6"), ["c2"]);
        assert_eq!(skipped.len(), 1);
        assert!(
            skipped[0].starts_with("ManagedClusterSet broken (bound in ns5): "),
            "{skipped:?}"
        );
    }

    #[test]
    fn status_copies_version_claims_and_health() {
        let c = cluster(
            "c1",
            Some("a"),
            json!({
                "version": {"kubernetes": "v1.31.0"},
                "clusterClaims": [{"name": "region", "value": "eu"}, {"name": "platform", "value": "AWS"}],
                "conditions": [
                    condition("ManagedClusterJoined", "True", "ManagedClusterJoined"),
                    condition("ManagedClusterConditionAvailable", "False", "ManagedClusterLeaseUpdateStopped"),
                    condition("HubAcceptedManagedCluster", "True", "HubClusterAdminAccepted")
                ]
            }),
        );
        let now = at("2026-01-02T00:00:00Z");
        let (status, problems) = profile_status(None, &c, &now);
        assert!(problems.is_empty());
        assert_eq!(
            serde_json::to_value(&status).unwrap(),
            json!({
                "conditions": [
                    {"type": "ControlPlaneHealthy", "status": "False",
                     "reason": "ManagedClusterLeaseUpdateStopped",
                     "message": "ManagedClusterLeaseUpdateStopped!",
                     "lastTransitionTime": "2026-01-02T00:00:00Z"},
                    {"type": "Joined", "status": "True", "reason": "ManagedClusterJoined",
                     "message": "ManagedClusterJoined!", "lastTransitionTime": "2026-01-02T00:00:00Z"}
                ],
                "version": {"kubernetes": "v1.31.0"},
                "properties": [{"name": "region", "value": "eu"}, {"name": "platform", "value": "AWS"}]
            })
        );

        // A later pass: the health changes (new transition time), Joined does not; fields
        // written by others (access providers, other conditions) stay.
        let mut existing = status;
        existing.access_providers = Some(vec![
            serde_json::from_value(
                json!({"name": "kubeconfig", "cluster": {"server": "https://c1:6443"}}),
            )
            .unwrap(),
        ]);
        let mut c = c;
        c.status.as_mut().unwrap().conditions.as_mut().unwrap()[1] =
            serde_json::from_value(condition(
                "ManagedClusterConditionAvailable",
                "True",
                "ManagedClusterAvailable",
            ))
            .unwrap();
        c.status.as_mut().unwrap().cluster_claims = None;
        let later = at("2026-01-03T00:00:00Z");
        let (status, _) = profile_status(Some(&existing), &c, &later);
        let conds = status.conditions.as_ref().unwrap();
        assert_eq!(conds[0].status, "True");
        assert_eq!(conds[0].last_transition_time, later);
        assert_eq!(conds[1].last_transition_time, now);
        assert_eq!(status.properties, None, "no claims left");
        assert_eq!(status.access_providers, existing.access_providers);
    }

    #[test]
    fn claims_a_property_cannot_hold_are_left_out_and_reported() {
        let long_name = "n".repeat(254);
        let long_value = "v".repeat(1025);
        let c = cluster(
            "c1",
            None,
            json!({
                "clusterClaims": [
                    {"name": "ok", "value": "1"},
                    {"name": "empty", "value": ""},
                    {"value": "nameless"},
                    {"name": long_name, "value": "x"},
                    {"name": "long", "value": long_value},
                    {"name": "ok", "value": "2"}
                ],
                "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "Maybe",
                    "reason": "Odd", "message": "", "lastTransitionTime": "2025-12-01T00:00:00Z"}]
            }),
        );
        let (status, problems) = profile_status(None, &c, &at("2026-01-01T00:00:00Z"));
        assert_eq!(
            status.properties.unwrap(),
            [Property {
                name: "ok".into(),
                value: "1".into(),
                last_observed_time: None
            }]
        );
        assert_eq!(status.conditions, None);
        assert_eq!(problems.len(), 6, "{problems:#?}");
        assert_eq!(
            problems[0],
            "ManagedCluster c1: status.clusterClaims[1] (\"empty\") has no value (a property \
             value has at least 1 character); it is left out of its ClusterProfiles' properties"
        );
        assert!(problems[1].contains("clusterClaims[2] (\"\") has no name"));
        assert!(
            problems[2].contains("has a name of 254 characters (a property name has at most 253)")
        );
        assert!(problems[3].contains("has a value of 1025 characters"));
        assert!(problems[4].contains("clusterClaims[5] (\"ok\") is listed more than once"));
        assert_eq!(
            problems[5],
            "ManagedCluster c1: condition ManagedClusterConditionAvailable has status \"Maybe\" \
             (not True, False or Unknown); ControlPlaneHealthy is left as it is"
        );
    }

    #[test]
    fn merge_patches_name_only_what_changed() {
        let old = json!({"a": 1, "b": {"x": 1, "y": 2}, "c": [1, 2], "gone": true});
        let new = json!({"a": 1, "b": {"x": 1, "y": 3}, "c": [1], "added": "z"});
        assert_eq!(
            merge_patch(&old, &new),
            Some(json!({"b": {"y": 3}, "c": [1], "added": "z", "gone": null}))
        );
        assert_eq!(merge_patch(&old, &old), None);
    }

    fn profile(
        ns: &str,
        name: &str,
        labels: Value,
        manager: &str,
        status: Value,
    ) -> ClusterProfile {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"clusterManager": {"name": manager}},
            "status": status
        }))
        .unwrap()
    }

    #[test]
    fn plan_creates_deletes_and_updates() {
        let now = at("2026-01-02T00:00:00Z");
        let c1 = cluster(
            "c1",
            Some("a"),
            json!({"version": {"kubernetes": "v1.31.0"}}),
        );
        let c2 = cluster(
            "c2",
            Some("a"),
            json!({"version": {"kubernetes": "v1.30.0"}}),
        );
        let a = exclusive("a");
        let bindings = [binding("ns1", "a", Some("True"))];
        let ours = json!({"x-k8s.io/cluster-manager": "open-cluster-management"});
        // c2's profile exists but is stale (no status, no clusterset label); c9's is ours and
        // not wanted; the foreign one (no label) and another manager's stay.
        let stale = profile("ns1", "c2", ours.clone(), OCM_CLUSTER_MANAGER, json!(null));
        let orphan = profile("ns1", "c9", ours.clone(), OCM_CLUSTER_MANAGER, json!(null));
        let foreign = profile("ns1", "c8", json!({}), "karmada", json!(null));
        let other_ns = profile(
            "elsewhere",
            "c7",
            ours.clone(),
            OCM_CLUSTER_MANAGER,
            json!(null),
        );
        // Unlabelled but OCM-managed, found by name: its status is kept up to date.
        let by_name = profile("ns2", "c1", json!({}), OCM_CLUSTER_MANAGER, json!(null));
        let planned = plan(
            &[&c1, &c2],
            &[&a],
            &bindings.iter().collect::<Vec<_>>(),
            &[&stale, &orphan, &foreign, &other_ns, &by_name],
            &now,
        );
        assert!(planned.skipped.is_empty());
        let summary: Vec<String> = planned
            .changes
            .iter()
            .map(|c| match c {
                ProfileChange::Create { profile, .. } => format!(
                    "create {}/{}",
                    profile.metadata.namespace.as_deref().unwrap(),
                    profile.metadata.name.as_deref().unwrap()
                ),
                ProfileChange::Delete { namespace, name } => format!("delete {namespace}/{name}"),
                ProfileChange::Status {
                    namespace, name, ..
                } => {
                    format!("status {namespace}/{name}")
                }
                ProfileChange::Labels {
                    namespace, name, ..
                } => {
                    format!("labels {namespace}/{name}")
                }
            })
            .collect();
        assert_eq!(
            summary,
            [
                "delete elsewhere/c7",
                "create ns1/c1",
                "delete ns1/c9",
                "status ns1/c2",
                "labels ns1/c2",
                "status ns2/c1",
                "labels ns2/c1"
            ]
        );
        let ProfileChange::Create { profile, status } = &planned.changes[1] else {
            unreachable!()
        };
        assert_eq!(
            serde_json::to_value(profile.as_ref()).unwrap(),
            json!({
                "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
                "metadata": {"name": "c1", "namespace": "ns1", "labels": {
                    "x-k8s.io/cluster-manager": "open-cluster-management",
                    "multicluster.x-k8s.io/clusterset": "a",
                    "open-cluster-management.io/cluster-name": "c1"}},
                "spec": {"displayName": "c1", "clusterManager": {"name": "open-cluster-management"}}
            })
        );
        assert_eq!(status, &json!({"version": {"kubernetes": "v1.31.0"}}));
        let ProfileChange::Labels { labels, .. } = &planned.changes[4] else {
            unreachable!()
        };
        assert_eq!(
            serde_json::to_value(labels).unwrap(),
            json!({"multicluster.x-k8s.io/clusterset": "a",
                   "open-cluster-management.io/cluster-name": "c2"})
        );
    }
}
