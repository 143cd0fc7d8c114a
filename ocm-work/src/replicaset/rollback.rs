//! Rollback of a ManifestWorkReplicaSet's template (our addition, off by default), as
//! upstream's accepted proposal describes it (open-cluster-management-io/enhancements #229,
//! "Support Rollback for ManifestWorkReplicaSet"). Upstream's controller does not implement it
//! yet; its API fields are not in upstream's CRD yet either: install the extended CRDs
//! (`ocm_api::crd::extended_crds`, `ocm-crdgen --extended`), or the hub prunes them and the
//! controller says so in [`super::fields`]' `OptInFieldsInstalled` condition.
//!
//! Turn it on with [`ReplicaSetController::with_rollback`](super::controller::ReplicaSetController::with_rollback).
//! With it on, the controller:
//!
//! * keeps a revision history of `spec.manifestWorkTemplate` as `apps/v1` ControllerRevisions
//!   in the replica set's namespace, named `<replica set>-<hash>` ([`template_hash`],
//!   [`revision_name`]), labelled with the owner label and [`CONTROLLER_HASH_LABEL`], owned by
//!   the replica set, and pruned to `spec.revisionHistoryLimit` (default
//!   [`DEFAULT_REVISION_HISTORY_LIMIT`]) besides the current and update revisions
//!   ([`revisions_to_prune`]);
//! * labels each generated ManifestWork with [`CONTROLLER_HASH_LABEL`];
//! * writes `status.updateRevision` (the hash of the template in the spec),
//!   `status.currentRevision` (the last revision that succeeded on every selected cluster),
//!   `status.collisionCount`, `status.abortedTime` and `summary.updated` (clusters whose work
//!   holds the update revision and succeeded), and a `Progressing` condition
//!   ([`CONDITION_PROGRESSING`], reasons `NewRevisionCreated`, `FoundNewRevision`,
//!   `NewManifestWorkAvailable`, `ProgressDeadlineExceeded`, `RolloutAborted`);
//! * reports a rollout that breaches `maxFailures` as `PlacementRolledOut=False` with reason
//!   [`REASON_ROLLOUT_DEGRADED`] (upstream says `Progressing`);
//! * when a placement's `rolloutStrategy.failureStrategy` is `AbortAll` and its rollout breaches
//!   `maxFailures`, aborts: sets `status.abortedTime` and puts the current revision's template
//!   back on every cluster of every placement at once (the spec is left as it is). A new
//!   template in the spec (for example the old one, an "undo") starts a new rollout and clears
//!   `abortedTime`. With no current revision yet (the very first rollout failed), there is
//!   nothing to go back to: the rollout only stops, as upstream's does, and the `Progressing`
//!   message says so.
//!
//! Differences from the proposal, all deliberate: the hash is FNV-1a (32 bits) over a
//! canonical JSON form of the template (sorted keys, manifests normalised as the controller
//! compares them), so its values differ from Go's `DeepHashObject`; while aborted, the
//! `ManifestworkApplied` counts are taken against the restored template.
//!
//! # Example
//!
//! ```
//! use ocm_api::work::v1::ManifestWorkSpec;
//! use ocm_work::replicaset::rollback::{revision_name, template_hash};
//!
//! let template = ManifestWorkSpec::default();
//! let hash = template_hash(&template, None);
//! // Stable, and a collision count gives another name.
//! assert_eq!(hash, template_hash(&template, None));
//! assert_ne!(hash, template_hash(&template, Some(1)));
//! assert_eq!(revision_name("web", &hash), format!("web-{hash}"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use ocm_api::cluster::v1alpha1::{FailureStrategy, RolloutResult, RolloutStrategy};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{labels, replicaset as rc};
use ocm_api::work::v1::ManifestWorkSpec;
use ocm_api::work::v1alpha1::{ManifestWorkReplicaSet, ManifestWorkReplicaSetStatus};
use serde_json::{Value, json};

use super::{normalized_manifest, owner_label};

/// The label that carries a template revision's hash, on ControllerRevisions and on the
/// generated ManifestWorks (the proposal's name).
pub const CONTROLLER_HASH_LABEL: &str = "work.open-cluster-management.io/controller-hash";

/// `spec.revisionHistoryLimit` when unset (the proposal's default).
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// The condition type that tells how the rollout of the update revision goes.
pub const CONDITION_PROGRESSING: &str = "Progressing";
/// `Progressing=True`: the update revision was just recorded for the first time.
pub const REASON_NEW_REVISION_CREATED: &str = "NewRevisionCreated";
/// `Progressing=True`: the update revision was already in the history (an undo).
pub const REASON_FOUND_NEW_REVISION: &str = "FoundNewRevision";
/// `Progressing=True`: the update revision succeeded on every selected cluster.
pub const REASON_NEW_MANIFEST_WORK_AVAILABLE: &str = "NewManifestWorkAvailable";
/// `Progressing=False`: the rollout breached `maxFailures`.
pub const REASON_PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// `Progressing=False`: the rollout was aborted and the current revision restored.
pub const REASON_ROLLOUT_ABORTED: &str = "RolloutAborted";
/// `PlacementRolledOut=False`: the rollout breached `maxFailures` (or was aborted).
pub const REASON_ROLLOUT_DEGRADED: &str = "RolloutDegraded";

/// The key of the template in a revision's `data`.
const DATA_TEMPLATE: &str = "manifestWorkTemplate";

/// Writes `v` as JSON with object keys sorted, so equal values give equal bytes (each level
/// on a stack that grows as needed: templates nest as deep as the API server takes).
fn canonical(v: &Value, out: &mut Vec<u8>) {
    ocm_api::k8s::json::descend(|| canonical_level(v, out));
}

fn canonical_level(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push(b'{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(v, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// FNV-1a, 32 bits.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Kubernetes' `SafeEncodeString`: each character mapped onto an alphabet without vowels
/// (and without characters that read alike), so a hash never spells a word.
fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

/// The hash naming a template revision: FNV-1a over the template's canonical JSON (manifests
/// normalised as the controller compares them), then the collision count (little-endian, as
/// the proposal does), printed in decimal and safe-encoded.
pub fn template_hash(template: &ManifestWorkSpec, collision_count: Option<i32>) -> String {
    let mut value = serde_json::to_value(template).unwrap_or(Value::Null);
    if let Some(manifests) = value
        .get_mut("workload")
        .and_then(|w| w.get_mut("manifests"))
        .and_then(Value::as_array_mut)
    {
        for m in manifests.iter_mut() {
            *m = normalized_manifest(m);
        }
    }
    let mut bytes = Vec::new();
    canonical(&value, &mut bytes);
    if let Some(count) = collision_count {
        // The proposal writes the 32-bit count into an 8-byte buffer.
        let mut buf = [0u8; 8];
        buf[..4].copy_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&buf);
    }
    safe_encode(&fnv1a32(&bytes).to_string())
}

/// The name of the ControllerRevision holding revision `hash` of `replica_set_name`.
pub fn revision_name(replica_set_name: &str, hash: &str) -> String {
    format!("{replica_set_name}-{hash}")
}

/// The ControllerRevision recording `template` as revision `hash` (number `revision`) of
/// `replica_set`, owned by it. (Built through JSON: the Rust type's shape differs between
/// the Kubernetes versions k8s-openapi supports.)
pub fn build_revision(
    replica_set: &ManifestWorkReplicaSet,
    template: &ManifestWorkSpec,
    hash: &str,
    revision: i64,
) -> Result<ControllerRevision, String> {
    let name = replica_set.metadata.name.clone().unwrap_or_default();
    let owner = replica_set.metadata.uid.as_ref().map(|uid| {
        json!([{
            "apiVersion": "work.open-cluster-management.io/v1alpha1",
            "kind": "ManifestWorkReplicaSet",
            "name": name,
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }])
    });
    let value = json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(&name, hash),
            "namespace": replica_set.metadata.namespace,
            "labels": {
                labels::MANIFEST_WORK_REPLICA_SET: owner_label(replica_set),
                CONTROLLER_HASH_LABEL: hash,
            },
            "ownerReferences": owner,
        },
        "data": {
            DATA_TEMPLATE: template,
            "generation": replica_set.metadata.generation,
        },
        "revision": revision,
    });
    serde_json::from_value(value)
        .map_err(|e| format!("ControllerRevision {}: {e}", revision_name(&name, hash)))
}

/// A revision's number (0 when it has none).
pub fn revision_number(revision: &ControllerRevision) -> i64 {
    serde_json::to_value(revision)
        .ok()
        .and_then(|v| v.get("revision").and_then(Value::as_i64))
        .unwrap_or(0)
}

/// The template a ControllerRevision holds; the error names the revision and what is wrong.
pub fn revision_template(revision: &ControllerRevision) -> Result<ManifestWorkSpec, String> {
    let name = revision.metadata.name.as_deref().unwrap_or_default();
    let value = serde_json::to_value(revision)
        .ok()
        .and_then(|v| v.get("data").and_then(|d| d.get(DATA_TEMPLATE)).cloned())
        .ok_or_else(|| format!("ControllerRevision {name}: data.{DATA_TEMPLATE} is missing"))?;
    serde_json::from_value(value).map_err(|e| {
        format!("ControllerRevision {name}: data.{DATA_TEMPLATE} is not a ManifestWork spec: {e}")
    })
}

/// The names of the revisions to delete so that at most `limit` (negative counts as 0) are
/// left besides those named in `keep`: the lowest revision numbers go first.
pub fn revisions_to_prune(
    revisions: &[ControllerRevision],
    keep: &[&str],
    limit: i32,
) -> Vec<String> {
    let mut old: Vec<(i64, String)> = revisions
        .iter()
        .filter_map(|r| {
            let name = r.metadata.name.clone()?;
            (!keep.contains(&name.as_str())).then_some((revision_number(r), name))
        })
        .collect();
    old.sort();
    let limit = usize::try_from(limit).unwrap_or(0);
    let excess = old.len().saturating_sub(limit);
    old.into_iter().take(excess).map(|(_, n)| n).collect()
}

/// What the controller rolls out this round, from the revision history (crate-internal).
#[derive(Clone, Debug)]
pub(crate) struct RollbackPlan {
    /// The hash of the template in the spec.
    pub(crate) update: String,
    /// The current revision, when there is one other than the update revision, with its
    /// template.
    pub(crate) current: Option<(String, ManifestWorkSpec)>,
    /// The rollout of the update revision was aborted: the current one is restored.
    pub(crate) aborted: bool,
    /// The `Progressing` reason while the update revision rolls out.
    pub(crate) progress_reason: &'static str,
}

impl RollbackPlan {
    /// The replica set as the deploy step should see it: the template being rolled out
    /// (the current one, everywhere at once, when aborted) and the hash label for its works.
    pub(crate) fn effective(&self, replica_set: &ManifestWorkReplicaSet) -> ManifestWorkReplicaSet {
        let mut rs = replica_set.clone();
        let hash = match (&self.current, self.aborted) {
            (Some((hash, template)), true) => {
                rs.spec.manifest_work_template = Some(template.clone());
                for r in &mut rs.spec.placement_refs {
                    r.rollout_strategy = None;
                }
                hash.clone()
            }
            _ => self.update.clone(),
        };
        rs.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(CONTROLLER_HASH_LABEL.into(), hash);
        rs
    }

    /// Writes the rollback fields and conditions after the deploy step saw the rollouts
    /// (`breached`: some placement breached `maxFailures`; `abort`: one with `AbortAll`).
    /// Returns whether to reconcile again at once (an abort just started).
    pub(crate) fn finish(
        &self,
        breached: bool,
        abort: bool,
        status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
    ) -> bool {
        let now_time = Time(now);
        let conds = status.conditions.get_or_insert_with(Vec::new);
        let degraded = |conds: &mut Vec<Condition>, message: String| {
            conditions::set(
                conds,
                NewCondition::new(
                    rc::CONDITION_PLACEMENT_ROLLED_OUT,
                    ConditionStatus::False,
                    REASON_ROLLOUT_DEGRADED,
                    message,
                ),
                &now_time,
            );
        };
        let progressing = |conds: &mut Vec<Condition>, st, reason: &str, message: String| {
            conditions::set(
                conds,
                NewCondition::new(CONDITION_PROGRESSING, st, reason, message),
                &now_time,
            );
        };
        let update = &self.update;
        if self.aborted
            && let Some((current, _)) = &self.current
        {
            let message = format!(
                "the rollout of revision {update} was aborted; revision {current} is restored \
                 on every cluster"
            );
            progressing(
                conds,
                ConditionStatus::False,
                REASON_ROLLOUT_ABORTED,
                message.clone(),
            );
            degraded(conds, message);
            return false;
        }
        if abort && let Some((current, _)) = &self.current {
            status.aborted_time = Some(now_time.clone());
            let message = format!(
                "the rollout of revision {update} failed on more clusters than maxFailures \
                 allows; aborting: restoring revision {current} on every cluster"
            );
            progressing(
                conds,
                ConditionStatus::False,
                REASON_PROGRESS_DEADLINE_EXCEEDED,
                message.clone(),
            );
            degraded(conds, message);
            return true;
        }
        if breached {
            let mut message = format!(
                "the rollout of revision {update} failed on more clusters than maxFailures \
                 allows and stopped"
            );
            if abort {
                message.push_str(
                    "; failureStrategy is AbortAll but there is no earlier revision that \
                     reached every cluster to restore, so the works are left as they are",
                );
            }
            progressing(
                conds,
                ConditionStatus::False,
                REASON_PROGRESS_DEADLINE_EXCEEDED,
                message.clone(),
            );
            degraded(conds, message);
            return false;
        }
        if conditions::is_true(conds, rc::CONDITION_PLACEMENT_ROLLED_OUT) {
            status.current_revision = Some(update.clone());
            progressing(
                conds,
                ConditionStatus::True,
                REASON_NEW_MANIFEST_WORK_AVAILABLE,
                format!("revision {update} succeeded on every selected cluster"),
            );
        } else {
            progressing(
                conds,
                ConditionStatus::True,
                self.progress_reason,
                format!("rolling out revision {update}"),
            );
        }
        false
    }
}

/// Whether a placement's rollout calls for an abort: its strategy says `AbortAll` and the
/// rollout breached `maxFailures`.
pub fn abort_wanted(strategy: &RolloutStrategy, result: &RolloutResult) -> bool {
    result.max_failure_breach && strategy.failure_strategy == Some(FailureStrategy::AbortAll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{Manifest, ManifestsTemplate};

    fn template(image: &str) -> ManifestWorkSpec {
        ManifestWorkSpec {
            workload: Some(ManifestsTemplate {
                manifests: Some(vec![Manifest::new(json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cm", "namespace": "default"},
                    "data": {"image": image, "a": "1"},
                }))]),
            }),
            ..Default::default()
        }
    }

    fn rs() -> ManifestWorkReplicaSet {
        let mut rs = ManifestWorkReplicaSet::new("web", Default::default());
        rs.metadata.namespace = Some("ns".into());
        rs.metadata.uid = Some("u1".into());
        rs.metadata.generation = Some(3);
        rs
    }

    #[test]
    fn the_hash_follows_the_template_not_its_key_order_or_timestamps() {
        let a = template("v1");
        let mut b = ManifestWorkSpec {
            workload: Some(ManifestsTemplate {
                manifests: Some(vec![Manifest::new(json!({
                    "data": {"a": "1", "image": "v1"},
                    "metadata": {"namespace": "default", "name": "cm", "creationTimestamp": null},
                    "kind": "ConfigMap", "apiVersion": "v1",
                }))]),
            }),
            ..Default::default()
        };
        assert_eq!(template_hash(&a, None), template_hash(&b, None));
        b = template("v2");
        assert_ne!(template_hash(&a, None), template_hash(&b, None));
        assert_ne!(template_hash(&a, None), template_hash(&a, Some(0)));
        let h = template_hash(&a, None);
        assert!(
            h.bytes()
                .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)),
            "{h}"
        );
    }

    #[test]
    fn a_revision_holds_its_template_and_is_owned_by_the_replica_set() {
        let t = template("v1");
        let rev = build_revision(&rs(), &t, "abc", 4).unwrap();
        assert_eq!(rev.metadata.name.as_deref(), Some("web-abc"));
        assert_eq!(rev.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(revision_number(&rev), 4);
        let labels = rev.metadata.labels.clone().unwrap();
        assert_eq!(labels[CONTROLLER_HASH_LABEL], "abc");
        assert_eq!(labels[labels::MANIFEST_WORK_REPLICA_SET], "ns.web");
        let owner = &rev.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("u1", Some(true)));
        assert_eq!(revision_template(&rev).unwrap(), t);
    }

    #[test]
    fn a_broken_revision_is_an_error_naming_it() {
        let rev = build_revision(&rs(), &template("v1"), "abc", 1).unwrap();
        let mut value = serde_json::to_value(&rev).unwrap();
        value["data"] = json!({"manifestWorkTemplate": {"workload": 5}});
        let broken: ControllerRevision = serde_json::from_value(value.clone()).unwrap();
        let e = revision_template(&broken).unwrap_err();
        assert!(
            e.starts_with("ControllerRevision web-abc: data.manifestWorkTemplate"),
            "{e}"
        );
        value["data"] = json!({});
        let broken: ControllerRevision = serde_json::from_value(value).unwrap();
        let e = revision_template(&broken).unwrap_err();
        assert!(e.contains("is missing"), "{e}");
    }

    #[test]
    fn pruning_keeps_the_limit_and_the_live_revisions() {
        let revs: Vec<ControllerRevision> = (1..=5)
            .map(|i| {
                build_revision(&rs(), &template(&format!("v{i}")), &format!("h{i}"), i).unwrap()
            })
            .collect();
        // h1 is current and h5 the update: of h2..h4, keep the newest one.
        assert_eq!(
            revisions_to_prune(&revs, &["web-h1", "web-h5"], 1),
            ["web-h2", "web-h3"]
        );
        assert!(revisions_to_prune(&revs, &["web-h1"], 10).is_empty());
        assert_eq!(revisions_to_prune(&revs, &[], -3).len(), 5);
    }

    #[test]
    fn only_abort_all_with_a_breach_aborts() {
        let mut breach = RolloutResult::default();
        breach.max_failure_breach = true;
        let mut strategy = RolloutStrategy::default();
        assert!(!abort_wanted(&strategy, &breach));
        strategy.failure_strategy = Some(FailureStrategy::AbortAll);
        assert!(abort_wanted(&strategy, &breach));
        assert!(!abort_wanted(&strategy, &RolloutResult::default()));
        strategy.failure_strategy = Some(FailureStrategy::Unknown("Later".into()));
        assert!(!abort_wanted(&strategy, &breach));
    }
}
