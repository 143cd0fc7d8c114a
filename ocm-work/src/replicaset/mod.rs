//! The ManifestWorkReplicaSet controller's decisions, as pure functions.
//!
//! A ManifestWorkReplicaSet fans its `manifestWorkTemplate` out to every cluster its placements
//! select, one ManifestWork per cluster namespace, following each placement's rollout strategy.
//! This module holds the upstream-exact pieces the controller is built from:
//!
//! * [`owner_label`] and [`validate_owner_label`]: the `namespace.name` label that links works
//!   to their replica set, and the 63-character rule with upstream's message;
//! * [`build_work`]: the ManifestWork for one cluster;
//! * [`manifest_work_equal`]: whether a live work already matches what is wanted;
//! * [`cluster_rollout_status`]: a work's rollout status for the rollout engine, with the
//!   [`SuccessCriteria`] opt-in that fixes upstream's never-advancing progressive rollouts,
//!   and [`awaits_progressing`], which spots the works such a rollout waits for in vain;
//! * [`status`]: the summaries and conditions written to the replica set's status.
//!
//! Our addition, off by default: [`rollback`], the revision history and automatic abort of
//! upstream's accepted rollback proposal (`ReplicaSetController::with_rollback`), and
//! [`values`], per-cluster values resolved from each ManagedCluster into its work
//! (`ReplicaSetController::with_cluster_values`), and [`feedback`], chosen status-feedback
//! values aggregated across the works into the status
//! (`ReplicaSetController::with_feedback_aggregation`). The first and the last need fields of
//! the extended CRD (`ocm_api::crd::extended_crds`); [`fields`] tells, in a condition, when
//! the installed CRD prunes them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use ocm_api::cluster::v1alpha1::{ClusterRolloutStatus, GroupKey, RolloutStatus};
use ocm_api::conditions::{self, ConditionStatus};
use ocm_api::constants::{labels, work as wc};
use ocm_api::validation::names;
use ocm_api::work::v1::{ManifestWork, ManifestWorkSpec};
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use serde_json::Value;

pub mod controller;
pub mod feedback;
pub mod fields;
mod pages;
pub mod rollback;
pub mod status;
pub mod values;

/// The value of the `work.open-cluster-management.io/manifestworkreplicaset` label on the works
/// of a replica set: `<namespace>.<name>`.
pub fn owner_label(replica_set: &ManifestWorkReplicaSet) -> String {
    format!(
        "{}.{}",
        replica_set
            .metadata
            .namespace
            .as_deref()
            .unwrap_or_default(),
        replica_set.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Checks that `owner` is a valid label value; the error is upstream's
/// `InvalidManifestWorkName` condition message.
pub fn validate_owner_label(owner: &str) -> Result<(), String> {
    let errors = names::label_value_errors(owner);
    if errors.is_empty() {
        return Ok(());
    }
    Err(format!(
        "ManifestWork owner reference \"{owner}\" (namespace.name) is not a valid label value: {}; \
         recreate the ManifestWorkReplicaSet with a shorter namespace and/or name so the combined \
         length is at most 63 characters",
        errors.join("; ")
    ))
}

/// The ManifestWork of `replica_set` for `cluster`, fanned out for `placement`.
///
/// Labels are the replica set's plus the owner and placement labels. An existing work keeps its
/// `name`; a new one gets `generateName: <replica set name>` (the API server appends a random
/// suffix with no separator, as upstream).
pub fn build_work(
    replica_set: &ManifestWorkReplicaSet,
    name: Option<&str>,
    cluster: &str,
    placement: &str,
) -> ManifestWork {
    let spec = replica_set
        .spec
        .manifest_work_template
        .clone()
        .unwrap_or_default();
    build_work_with_spec(replica_set, spec, name, cluster, placement)
}

/// [`build_work`] with `spec` (the cluster's resolved template) instead of the replica set's.
pub(crate) fn build_work_with_spec(
    replica_set: &ManifestWorkReplicaSet,
    spec: ManifestWorkSpec,
    name: Option<&str>,
    cluster: &str,
    placement: &str,
) -> ManifestWork {
    let mut work_labels: BTreeMap<String, String> =
        replica_set.metadata.labels.clone().unwrap_or_default();
    work_labels.insert(
        labels::MANIFEST_WORK_REPLICA_SET.into(),
        owner_label(replica_set),
    );
    work_labels.insert(labels::PLACEMENT_NAME.into(), placement.into());
    let (name, generate_name) = match name {
        Some(n) if !n.is_empty() => (Some(n.to_string()), None),
        _ => (None, replica_set.metadata.name.clone()),
    };
    ManifestWork {
        metadata: ObjectMeta {
            name,
            generate_name,
            namespace: Some(cluster.to_string()),
            labels: Some(work_labels),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    }
}

/// Removes `metadata.creationTimestamp` and `spec.template.metadata.creationTimestamp` from a
/// manifest, the normalisation upstream applies before comparing templates. (A manifest may
/// nest as deep as the API server takes: copied level by level.)
fn normalized_manifest(manifest: &Value) -> Value {
    let mut m = ocm_api::k8s::json::clone_value(manifest);
    if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
    }
    if let Some(meta) = m
        .get_mut("spec")
        .and_then(|s| s.get_mut("template"))
        .and_then(|t| t.get_mut("metadata"))
        .and_then(Value::as_object_mut)
    {
        meta.remove("creationTimestamp");
    }
    m
}

/// Whether two ManifestWork specs are equal for the replica-set controller: manifests compared
/// after normalisation, absent lists equal to empty ones.
pub fn spec_equal(a: &ManifestWorkSpec, b: &ManifestWorkSpec) -> bool {
    let (a_manifests, b_manifests) = (a.manifests(), b.manifests());
    // Compared (and the copies dropped) level by level: manifests nest as deep as the API
    // server takes.
    let manifests_equal = a_manifests.len() == b_manifests.len()
        && a_manifests.iter().zip(b_manifests).all(|(x, y)| {
            let (x, y) = (
                normalized_manifest(x.as_value()),
                normalized_manifest(y.as_value()),
            );
            let equal = ocm_api::k8s::json::values_equal(&x, &y);
            ocm_api::k8s::json::drop_value(x);
            ocm_api::k8s::json::drop_value(y);
            equal
        });
    manifests_equal
        && a.delete_option == b.delete_option
        && a.manifest_configs.as_deref().unwrap_or_default()
            == b.manifest_configs.as_deref().unwrap_or_default()
        && a.executor == b.executor
}

/// Upstream's `ManifestWorkEqual`: equal specs, equal labels and annotations (absent equal to
/// empty), and equal owner references.
pub fn manifest_work_equal(required: &ManifestWork, live: &ManifestWork) -> bool {
    spec_equal(&required.spec, &live.spec) && metadata_equal(required, live)
}

/// The metadata part of [`manifest_work_equal`]: labels, annotations, owner references.
pub(crate) fn metadata_equal(required: &ManifestWork, live: &ManifestWork) -> bool {
    let map = |m: &Option<BTreeMap<String, String>>| m.clone().unwrap_or_default();
    map(&required.metadata.labels) == map(&live.metadata.labels)
        && map(&required.metadata.annotations) == map(&live.metadata.annotations)
        && required
            .metadata
            .owner_references
            .as_deref()
            .unwrap_or_default()
            == live
                .metadata
                .owner_references
                .as_deref()
                .unwrap_or_default()
}

/// How the controller decides that a cluster's work has rolled out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SuccessCriteria {
    /// Upstream's rule (the default): a work is `Succeeded` only when it has `Applied=True` and
    /// `Progressing=False` at its current generation.
    ///
    /// The work agent never sets `Progressing` by itself (only condition rules do), so with
    /// plain works every cluster stays `ToApply`: `All` still applies everywhere, but
    /// `Progressive` and `ProgressivePerGroup` never get past their first batch and
    /// `PlacementRolledOut` never becomes `Complete`. The controller says so (our addition) in
    /// the `PlacementRolledOut` message ([`status::stalled_rollout_message`]) and in one
    /// warning log line, naming [`SuccessCriteria::AppliedAndAvailable`].
    #[default]
    ProgressingCondition,
    /// Our opt-in: when a work has no `Progressing` condition at its current generation, it
    /// counts as `Succeeded` once `Applied` and `Available` are both `True` at that generation
    /// (the soak time `minSuccessTime` runs from `Available`'s transition), as `Progressing`
    /// while it is applied but not yet available (so `progressDeadline` applies), and as
    /// `Failed` when applying failed. Works that do carry a `Progressing` condition are judged
    /// by upstream's rule.
    AppliedAndAvailable,
}

/// Whether `work` is applied at its current generation but carries no `Progressing`
/// condition at all: with upstream's [`SuccessCriteria::ProgressingCondition`] such a work
/// stays `ToApply` forever, so a rollout waiting for it never advances. (A work whose
/// `Progressing` condition is only stale is still being reconciled, not stalled.)
pub fn awaits_progressing(work: &ManifestWork) -> bool {
    let generation = work.metadata.generation.unwrap_or(0);
    let conds = work_conditions(work);
    at_generation(conds, wc::CONDITION_APPLIED, generation).is_some_and(|c| c.status == "True")
        && conditions::find(conds, wc::CONDITION_PROGRESSING).is_none()
}

/// The work's conditions (none without a status).
fn work_conditions(work: &ManifestWork) -> &[Condition] {
    work.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

fn at_generation<'a>(
    conds: &'a [Condition],
    type_: &str,
    generation: i64,
) -> Option<&'a Condition> {
    conditions::find(conds, type_).filter(|c| c.observed_generation == Some(generation))
}

/// The rollout status of one cluster's work, for the rollout engine.
pub fn cluster_rollout_status(
    cluster: &str,
    group: GroupKey,
    work: &ManifestWork,
    criteria: SuccessCriteria,
) -> ClusterRolloutStatus {
    let generation = work.metadata.generation.unwrap_or(0);
    let conds = work_conditions(work);
    let status = |s: RolloutStatus, since: Option<&Condition>| {
        let mut out = ClusterRolloutStatus::new(cluster, group.clone(), s);
        out.last_transition_time = since.map(|c| c.last_transition_time.0);
        out
    };
    let to_apply = || ClusterRolloutStatus::new(cluster, group.clone(), RolloutStatus::ToApply);

    let applied = conditions::find(conds, wc::CONDITION_APPLIED);
    let applied_now = applied.filter(|c| c.observed_generation == Some(generation));
    let progressing = conditions::find(conds, wc::CONDITION_PROGRESSING);
    let progressing_now = progressing.filter(|c| c.observed_generation == Some(generation));
    let degraded = conditions::find(conds, wc::CONDITION_DEGRADED);

    if criteria == SuccessCriteria::AppliedAndAvailable && progressing_now.is_none() {
        let Some(applied) = applied_now else {
            return to_apply();
        };
        return match ConditionStatus::parse(&applied.status) {
            Some(ConditionStatus::False) => status(RolloutStatus::Failed, Some(applied)),
            Some(ConditionStatus::True) => {
                match at_generation(conds, wc::CONDITION_AVAILABLE, generation) {
                    Some(available) if available.status == "True" => {
                        status(RolloutStatus::Succeeded, Some(available))
                    }
                    _ => status(RolloutStatus::Progressing, Some(applied)),
                }
            }
            _ => to_apply(),
        };
    }

    let stale_degraded = degraded.is_some_and(|d| d.observed_generation != Some(generation));
    let (Some(_), Some(p)) = (applied_now.filter(|a| a.status == "True"), progressing_now) else {
        return to_apply();
    };
    if stale_degraded {
        return to_apply();
    }
    let degraded_true = degraded.is_some_and(|d| d.status == "True");
    match p.status.as_str() {
        "True" if degraded_true => status(RolloutStatus::Failed, degraded),
        "True" => status(RolloutStatus::Progressing, Some(p)),
        "False" => status(RolloutStatus::Succeeded, Some(p)),
        _ => status(RolloutStatus::Progressing, Some(p)),
    }
}

#[cfg(test)]
mod tests;
