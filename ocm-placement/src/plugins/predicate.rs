//! The `Predicate` filter: `spec.predicates[*].requiredClusterSelector`.
//!
//! A cluster passes when **any** predicate matches; a predicate matches when its label
//! selector (on `metadata.labels`), its claim selector (on the map of
//! `status.clusterClaims`, later duplicates winning) and all its CEL expressions match. No
//! predicates, or no candidate clusters, let everything through without validating anything.

use ocm_api::cluster::v1beta1::{ClusterPredicate, ClusterSelector};

use super::cel::{
    CelLimits, CelSelector, ClusterInput, ClusterReads, Escapes, NativeInput, ScoresInput,
};
use crate::selector::{CompiledSelector, SelectorSpec};
use crate::snapshot::{ClusterId, ClusterRef, Snapshot};

/// Plugin name, as reported in statuses and explanations.
pub const NAME: &str = "Predicate";

/// One predicate, validated and compiled.
#[derive(Debug)]
pub(crate) struct CompiledPredicate {
    labels: CompiledSelector,
    claims: CompiledSelector,
    cel: CelSelector,
}

/// Validates and compiles the label and claim parts of a selector (shared with decision
/// groups, which have no CEL).
pub(crate) fn selector_specs(
    label_selector: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    claim_expressions: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement],
) -> Result<(SelectorSpec, SelectorSpec), String> {
    let labels = SelectorSpec::from_label_selector(label_selector)?;
    let claims = SelectorSpec::parse(None, claim_expressions)?;
    Ok((labels, claims))
}

fn claim_expressions(
    selector: &ClusterSelector,
) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement] {
    selector
        .claim_selector
        .as_ref()
        .and_then(|c| c.match_expressions.as_deref())
        .unwrap_or_default()
}

/// Compiles the predicates; the error text is what upstream reports as the Misconfigured
/// message.
pub(crate) fn compile(
    predicates: &[ClusterPredicate],
    snapshot: &Snapshot,
) -> Result<Vec<CompiledPredicate>, String> {
    let empty = ClusterSelector::default();
    predicates
        .iter()
        .map(|p| {
            let selector = p.required_cluster_selector.as_ref().unwrap_or(&empty);
            let (labels, claims) = selector_specs(
                selector.label_selector.as_ref(),
                claim_expressions(selector),
            )?;
            let cel_sources = selector
                .cel_selector
                .as_ref()
                .and_then(|c| c.cel_expressions.as_deref())
                .unwrap_or_default();
            let cel = CelSelector::compile(cel_sources)?;
            Ok(CompiledPredicate {
                labels: labels.compile(&snapshot.symbols),
                claims: claims.compile(&snapshot.symbols),
                cel,
            })
        })
        .collect()
}

/// Evaluates compiled predicates over clusters; holds the CEL context for one placement.
pub(crate) struct PredicateEvaluator<'a> {
    predicates: &'a [CompiledPredicate],
    snapshot: &'a Snapshot,
    limits: CelLimits,
    cel_root: Option<cel::Context<'static, 'static>>,
    /// The parts of `managedCluster` the expressions read from the snapshot's cache, with
    /// their columns.
    cel_reads: ClusterReads,
    /// The interpreter's context and memo of native evaluations.
    escapes: Option<Escapes<'a>>,
    uses_scores: bool,
}

impl<'a> PredicateEvaluator<'a> {
    pub(crate) fn new(
        predicates: &'a [CompiledPredicate],
        snapshot: &'a Snapshot,
        limits: CelLimits,
    ) -> Self {
        let needs_cel = predicates.iter().any(|p| !p.cel.is_empty());
        let reads: std::collections::BTreeSet<_> =
            predicates.iter().flat_map(|p| p.cel.reads()).collect();
        PredicateEvaluator {
            cel_reads: ClusterReads::new(reads, &snapshot.cel_cache),
            predicates,
            snapshot,
            limits,
            cel_root: needs_cel.then(super::cel::root_context),
            escapes: predicates
                .iter()
                .any(|p| p.cel.has_native())
                .then(|| Escapes::new(super::cel::root_context())),
            uses_scores: predicates.iter().any(|p| p.cel.uses_scores()),
        }
    }

    /// Whether any predicate matches the cluster.
    #[inline]
    pub(crate) fn matches(&'a self, id: ClusterId) -> bool {
        let Some(entry) = self.snapshot.clusters.get(id.index()) else {
            return false;
        };
        for p in self.predicates {
            if !p.labels.matches(&entry.labels) || !p.claims.matches(&entry.claims) {
                continue;
            }
            if p.cel.is_empty() {
                return true;
            }
            let Some(root) = self.cel_root.as_ref() else {
                continue;
            };
            let source = ClusterRef {
                entry,
                symbols: &self.snapshot.symbols,
            };
            let input = ClusterInput {
                reads: &self.cel_reads,
                index: id.index(),
                source,
                scores: if self.uses_scores {
                    ScoresInput::Lazy {
                        snapshot: self.snapshot,
                        id,
                        value: std::sync::OnceLock::new(),
                    }
                } else {
                    ScoresInput::Value(None)
                },
            };
            let native = self.escapes.as_ref().map(|escapes| {
                (
                    NativeInput {
                        cluster: source,
                        entry,
                        id,
                        snapshot: self.snapshot,
                        reads: &self.cel_reads,
                    },
                    escapes,
                )
            });
            if p.cel.evaluate(root, &input, native, self.limits).0 {
                return true;
            }
        }
        false
    }
}
