//! The scheduler: one placement, one snapshot, one instant in, a [`ScheduleResult`] out.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use ocm_api::cluster::v1beta1::{Placement, SortBy};
use ocm_api::conditions::ConditionStatus;

use crate::decisions::{self, DecisionGroup, DecisionSlice, build_groups, slice_groups};
use crate::error::{Error, Result};
use crate::plugins::taint_toleration::{self, Verdict};
use crate::plugins::{
    CelLimits, ClusterView, Filter, PluginContext, Prioritizer, addon, balance, predicate,
    resource, steady,
};
use crate::policy::{self, Kind};
use crate::result::{
    Eligibility, FilterRecord, PrioritizerScores, ScheduleResult, ScheduleStatus, ScoredCluster,
    StatusCode,
};
use crate::snapshot::{ClusterId, SetMembers, Snapshot};
use crate::spread::{self, SpreadOutcome};
use crate::status::{self, SatisfiedInputs};

/// Schedules placements against snapshots. Cheap to clone; holds only configuration and the
/// custom plugins.
#[derive(Clone, Default)]
pub struct Scheduler {
    filters: Vec<Arc<dyn Filter>>,
    prioritizers: Vec<Arc<dyn Prioritizer>>,
    cel_limits: CelLimits,
    topology_spread: bool,
    decision_scores: bool,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field(
                "filters",
                &self
                    .filters
                    .iter()
                    .map(|x| x.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .field(
                "prioritizers",
                &self
                    .prioritizers
                    .iter()
                    .map(|x| x.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .field("cel_limits", &self.cel_limits)
            .field("topology_spread", &self.topology_spread)
            .field("decision_scores", &self.decision_scores)
            .finish()
    }
}

/// Everything the pipeline learned before a status stopped it or it ran to completion.
struct Pipeline {
    filter_records: Vec<FilterRecord>,
    feasible: Vec<ClusterId>,
    prioritizers: Vec<PrioritizerScores>,
    scores: Vec<ScoredCluster>,
    selected: Vec<ClusterId>,
    requeue_at: Option<i128>,
    status: ScheduleStatus,
    spread: Option<SpreadOutcome>,
}

impl Scheduler {
    /// A scheduler with upstream's plugins and CEL limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a custom filter, run after the built-in ones in registration order.
    #[must_use]
    pub fn with_filter(mut self, filter: impl Filter + 'static) -> Self {
        self.filters.push(Arc::new(filter));
        self
    }

    /// Adds a custom prioritizer (see [`Prioritizer`] for how placements enable it).
    #[must_use]
    pub fn with_prioritizer(mut self, prioritizer: impl Prioritizer + 'static) -> Self {
        self.prioritizers.push(Arc::new(prioritizer));
        self
    }

    /// Replaces the CEL cost limits.
    #[must_use]
    pub fn with_cel_limits(mut self, limits: CelLimits) -> Self {
        self.cel_limits = limits;
        self
    }

    /// Honours `spec.spreadPolicy.spreadConstraints` (**our addition**, off by default:
    /// upstream's scheduler ignores the field). See [`crate::spread`] for the rules, the
    /// conditions it writes and an example.
    #[must_use]
    pub fn with_topology_spread(mut self, enabled: bool) -> Self {
        self.topology_spread = enabled;
        self
    }

    /// Writes prioritizer scores into the PlacementDecisions and honours `spec.sortBy` and
    /// `spec.scoreRateLimit` (**our addition**, off by default: upstream's API has the fields,
    /// its scheduler ignores them). See [`crate::decisions`] for the rules.
    #[must_use]
    pub fn with_decision_scores(mut self, enabled: bool) -> Self {
        self.decision_scores = enabled;
        self
    }

    /// Schedules `placement` against `snapshot` at `now`.
    ///
    /// Returns an error only for input upstream cannot schedule (an eligible cluster set
    /// whose selector is invalid); a misconfigured placement is a normal result with
    /// [`StatusCode::Misconfigured`]. That includes a negative `numberOfClusters`, which the
    /// CRD admits and upstream's scheduler panics on: here it selects nothing and says why in
    /// `PlacementMisconfigured` (our difference).
    pub fn schedule(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
        now: Timestamp,
    ) -> Result<ScheduleResult> {
        let name = placement
            .metadata
            .name
            .as_deref()
            .ok_or(Error::MissingPlacementMetadata("name"))?;
        let namespace = placement
            .metadata
            .namespace
            .as_deref()
            .ok_or(Error::MissingPlacementMetadata("namespace"))?;
        let spec_sets = placement.spec.cluster_sets.as_deref().unwrap_or_default();
        let (eligibility, candidates) = eligible_clusters(snapshot, namespace, spec_sets)?;
        let now_ns = now.as_nanosecond();
        let decided = snapshot.decided_clusters(namespace, name);
        let ctx = PluginContext {
            placement,
            snapshot,
            now,
        };

        let run = Run {
            ctx: &ctx,
            namespace,
            name,
            decided: &decided,
            now_ns,
        };
        let pipeline = self.run(&run, &candidates);

        let spread_message = pipeline.spread.as_ref().and_then(SpreadOutcome::message);
        let unscheduled = unscheduled(placement, &pipeline, spread_message.is_some());

        // Decision groups and slices.
        let (groups, slices, group_error) =
            self.decision_groups(placement, name, snapshot, &pipeline);
        let status = match group_error {
            Some(message) => ScheduleStatus::new(StatusCode::Misconfigured, "", message),
            None => pipeline.status,
        };

        let inputs = SatisfiedInputs {
            spec_cluster_sets: spec_sets,
            eligible_sets: &eligibility.cluster_sets,
            valid_bindings: eligibility.valid_bindings,
            available: candidates.len(),
            selected: pipeline.selected.len(),
            unscheduled,
        };
        let mut satisfied = status::satisfied(&inputs, &status);
        if let Some(message) = spread_message.filter(|_| satisfied.status != ConditionStatus::True)
        {
            satisfied.message = format!("{}: {message}", satisfied.message);
        }
        let mut misconfigured = status::misconfigured(&status);
        let score_rate_limit = self.score_rate_limit(placement, &status, &mut misconfigured);

        let (requeue_at, requeue_after) = requeue(pipeline.requeue_at, now_ns);

        Ok(ScheduleResult {
            names: Arc::clone(&snapshot.names),
            eligibility,
            candidates,
            filter_records: pipeline.filter_records,
            feasible: pipeline.feasible,
            prioritizers: pipeline.prioritizers,
            scores: pipeline.scores,
            selected: pipeline.selected,
            unscheduled,
            requeue_at,
            requeue_after,
            status,
            groups,
            slices,
            satisfied,
            misconfigured,
            spread: pipeline.spread,
            score_rate_limit,
        })
    }

    /// The decision groups of the selected clusters (ordered by score with `sortBy: Score`,
    /// our addition) and their PlacementDecision slices; a misconfigured group strategy's
    /// message.
    fn decision_groups(
        &self,
        placement: &Placement,
        name: &str,
        snapshot: &Snapshot,
        pipeline: &Pipeline,
    ) -> (Vec<DecisionGroup>, Vec<DecisionSlice>, Option<String>) {
        let strategy = placement
            .spec
            .decision_strategy
            .as_ref()
            .and_then(|d| d.group_strategy.as_ref());
        let by_score = self.decision_scores && placement.spec.sort_by == Some(SortBy::Score);
        let (groups, group_error) = if by_score {
            let ranked = decisions::score_order(&pipeline.selected, &pipeline.scores);
            build_groups(strategy, &ranked, snapshot, true)
        } else {
            build_groups(strategy, &pipeline.selected, snapshot, false)
        };
        let (groups, slices) = slice_groups(name, groups);
        (groups, slices, group_error)
    }

    /// With scores in decisions on (our addition), the placement's `scoreRateLimit`, or the
    /// default 1m when it does not parse (then said in `misconfigured`, unless the placement
    /// is misconfigured already).
    fn score_rate_limit(
        &self,
        placement: &Placement,
        status: &ScheduleStatus,
        misconfigured: &mut ocm_api::conditions::NewCondition,
    ) -> Option<Duration> {
        self.decision_scores.then(|| {
            let limit = placement.spec.score_rate_limit.as_deref();
            decisions::score_rate_limit(limit).unwrap_or_else(|message| {
                if status.code != StatusCode::Misconfigured {
                    *misconfigured = status::misconfigured(&ScheduleStatus::new(
                        StatusCode::Misconfigured,
                        "",
                        format!("{message}; the default 1m is used"),
                    ));
                }
                decisions::DEFAULT_SCORE_RATE_LIMIT
            })
        })
    }

    /// Runs the scheduling pipeline: the filters, then the prioritizers, then the selection
    /// (see the [module docs](self)). A stage that finds the placement misconfigured stops it,
    /// with what the earlier stages recorded kept.
    fn run(&self, run: &Run<'_>, candidates: &[ClusterId]) -> Pipeline {
        let mut out = Pipeline {
            filter_records: Vec::new(),
            feasible: Vec::new(),
            prioritizers: Vec::new(),
            scores: Vec::new(),
            selected: Vec::new(),
            requeue_at: None,
            status: ScheduleStatus::success(),
            spread: None,
        };
        if let Err(status) = self.run_stages(run, candidates, &mut out) {
            out.status = status;
        }
        out
    }

    fn run_stages(
        &self,
        run: &Run<'_>,
        candidates: &[ClusterId],
        out: &mut Pipeline,
    ) -> std::result::Result<(), ScheduleStatus> {
        let placement = run.ctx.placement;
        let snapshot = run.ctx.snapshot;
        if let Some(message) = negative_number_of_clusters(placement) {
            return Err(ScheduleStatus::new(StatusCode::Misconfigured, "", message));
        }

        // Filters: each records the clusters left after it, under the names so far.
        let mut survivors = self.predicate(run, candidates)?;
        let mut pipeline_name = predicate::NAME.to_string();
        out.record_filter(&pipeline_name, &survivors);
        let tolerations = placement.spec.tolerations.as_deref().unwrap_or_default();
        let compiled_tolerations = taint_toleration::compile(tolerations, &snapshot.symbols);
        if !survivors.is_empty() {
            taint_toleration::validate(tolerations).map_err(|message| {
                ScheduleStatus::new(StatusCode::Misconfigured, taint_toleration::NAME, message)
            })?;
            survivors.retain(|id| tolerated(run, &compiled_tolerations, *id));
        }
        pipeline_name.push(',');
        pipeline_name.push_str(taint_toleration::NAME);
        out.record_filter(&pipeline_name, &survivors);
        for filter in &self.filters {
            filter.validate(placement).map_err(|message| {
                ScheduleStatus::new(StatusCode::Misconfigured, filter.name(), message)
            })?;
            survivors.retain(|id| filter.keep(run.ctx, &ClusterView { snapshot, id: *id }));
            pipeline_name.push(',');
            pipeline_name.push_str(filter.name());
            out.record_filter(&pipeline_name, &survivors);
        }

        // Prioritizers, then the selection.
        let totals = self.prioritize(run, &survivors, out)?;
        // Sort by total descending, then name ascending (ids are in name order).
        let mut scored: Vec<ScoredCluster> = survivors
            .iter()
            .zip(&totals)
            .map(|(&cluster, &total)| ScoredCluster { cluster, total })
            .collect();
        sort_by_score(&mut scored);
        self.select(placement, snapshot, &scored, out)?;
        out.scores = scored;
        out.feasible = survivors;

        // Requeue: clusters of the existing decisions that are still tolerated.
        for id in run.decided {
            let Some(entry) = snapshot.clusters.get(id.index()) else {
                continue;
            };
            if let Verdict::Tolerated { expires: Some(at) } =
                taint_toleration::check(&entry.taints, &compiled_tolerations, true, run.now_ns)
            {
                out.requeue_at = Some(out.requeue_at.map_or(at, |r| r.min(at)));
            }
        }
        Ok(())
    }

    /// The candidates the placement's predicates select (all of them without predicates).
    fn predicate(
        &self,
        run: &Run<'_>,
        candidates: &[ClusterId],
    ) -> std::result::Result<Vec<ClusterId>, ScheduleStatus> {
        let snapshot = run.ctx.snapshot;
        let predicates = run
            .ctx
            .placement
            .spec
            .predicates
            .as_deref()
            .unwrap_or_default();
        if predicates.is_empty() || candidates.is_empty() {
            return Ok(candidates.to_vec());
        }
        let compiled = predicate::compile(predicates, snapshot).map_err(|message| {
            ScheduleStatus::new(StatusCode::Misconfigured, predicate::NAME, message)
        })?;
        let eval = predicate::PredicateEvaluator::new(&compiled, snapshot, self.cel_limits);
        Ok(candidates
            .iter()
            .copied()
            .filter(|id| eval.matches(*id))
            .collect())
    }

    /// Scores `survivors` with every enabled prioritizer, recording each one's scores in
    /// `out`; the weighted totals, in `survivors`' order.
    fn prioritize(
        &self,
        run: &Run<'_>,
        survivors: &[ClusterId],
        out: &mut Pipeline,
    ) -> std::result::Result<Vec<i64>, ScheduleStatus> {
        let (ctx, snapshot) = (run.ctx, run.ctx.snapshot);
        let enabled = policy::enabled(
            ctx.placement.spec.prioritizer_policy.as_ref(),
            &self.prioritizers,
        )
        .map_err(|message| ScheduleStatus::new(StatusCode::Misconfigured, "", message))?;
        let mut totals = vec![0i64; survivors.len()];
        for e in &enabled {
            let scores: Vec<Option<i64>> = match &e.kind {
                Kind::Balance => balance::score_all(snapshot, run.namespace, run.name, survivors),
                Kind::Steady => steady::score_all(run.decided, survivors),
                Kind::Cpu => resource::score_all(
                    survivors
                        .iter()
                        .map(|id| snapshot.clusters.get(id.index()).and_then(|c| c.cpu)),
                ),
                Kind::Memory => resource::score_all(
                    survivors
                        .iter()
                        .map(|id| snapshot.clusters.get(id.index()).and_then(|c| c.memory)),
                ),
                Kind::AddOn { resource, score } => {
                    let (scores, warning) =
                        addon::score_all(snapshot, resource, score, survivors, run.now_ns);
                    if let Some(message) = warning {
                        out.status =
                            ScheduleStatus::new(StatusCode::Warning, e.kind.name(), message);
                    }
                    scores
                }
                Kind::Custom(p) => survivors
                    .iter()
                    .map(|id| p.score(ctx, &ClusterView { snapshot, id: *id }))
                    .collect(),
            };
            let weight = i64::from(e.weight);
            for (total, s) in totals.iter_mut().zip(&scores) {
                if let Some(s) = s {
                    *total = total.wrapping_add(s.wrapping_mul(weight));
                }
            }
            out.prioritizers.push(PrioritizerScores {
                name: e.kind.name(),
                weight: e.weight,
                scores,
            });
        }
        Ok(totals)
    }

    /// Selects from the sorted `scored` clusters: the first `numberOfClusters` (all without
    /// it), or with topology spread on (our addition) what its constraints allow.
    fn select(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
        scored: &[ScoredCluster],
        out: &mut Pipeline,
    ) -> std::result::Result<(), ScheduleStatus> {
        let take = match placement.spec.number_of_clusters {
            None => scored.len(),
            Some(n) => usize::try_from(n).unwrap_or(0).min(scored.len()),
        };
        let spread = if self.topology_spread {
            spread::select(placement, snapshot, scored, take)
        } else {
            Ok(None)
        };
        match spread {
            Ok(Some(selection)) => {
                out.selected = selection.selected;
                out.spread = Some(selection.outcome);
            }
            Ok(None) => out.selected = scored[..take].iter().map(|s| s.cluster).collect(),
            Err(message) => {
                return Err(ScheduleStatus::new(
                    StatusCode::Misconfigured,
                    spread::NAME,
                    message,
                ));
            }
        }
        Ok(())
    }
}

/// What every stage of one scheduling run reads.
struct Run<'a> {
    ctx: &'a PluginContext<'a>,
    namespace: &'a str,
    name: &'a str,
    /// The clusters of the placement's existing decisions, sorted.
    decided: &'a [ClusterId],
    now_ns: i128,
}

impl Pipeline {
    /// Records the clusters left after the filters named `names`.
    fn record_filter(&mut self, names: &str, survivors: &[ClusterId]) {
        self.filter_records.push(FilterRecord {
            name: names.to_string(),
            clusters: survivors.to_vec(),
        });
    }
}

/// Whether cluster `id` tolerates its taints (a cluster of the existing decisions keeps
/// `NoSelect` taints it tolerated for their `tolerationSeconds`).
fn tolerated(
    run: &Run<'_>,
    tolerations: &[taint_toleration::CompiledToleration],
    id: ClusterId,
) -> bool {
    let Some(entry) = run.ctx.snapshot.clusters.get(id.index()) else {
        return false;
    };
    if entry.taints.is_empty() {
        return true;
    }
    let in_decisions = run.decided.binary_search(&id).is_ok();
    matches!(
        taint_toleration::check(&entry.taints, tolerations, in_decisions, run.now_ns),
        Verdict::Tolerated { .. }
    )
}

/// Sorts by total descending, then id (= name) ascending.
///
/// Totals are sums of a few weighted scores in [-100, 100], so they usually span a range not
/// much wider than the number of clusters: then a counting sort by total, which keeps the
/// input's (ascending) id order among equal totals, does it in linear time. Otherwise both are
/// packed into one integer key so the sort compares plain integers.
fn sort_by_score(scored: &mut [ScoredCluster]) {
    if scored.len() >= 64 && scored.is_sorted_by_key(|s| s.cluster) {
        let min = scored.iter().map(|s| s.total).min().unwrap_or(0);
        let max = scored.iter().map(|s| s.total).max().unwrap_or(0);
        let span = i128::from(max) - i128::from(min);
        if span < 4 * scored.len() as i128 + 1024 {
            counting_sort_by_score(scored, max, span as usize);
            return;
        }
    }
    sort_by_packed_key(scored);
}

/// [`sort_by_score`] for input in id order whose totals lie in `max - span ..= max`.
fn counting_sort_by_score(scored: &mut [ScoredCluster], max: i64, span: usize) {
    let slot = |total: i64| (i128::from(max) - i128::from(total)) as usize;
    // starts[k]: where the clusters of the k-th highest total start.
    let mut starts = vec![0usize; span + 2];
    for s in scored.iter() {
        starts[slot(s.total) + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let input = scored.to_vec();
    for s in input {
        let k = slot(s.total);
        scored[starts[k]] = s;
        starts[k] += 1;
    }
}

/// Packs total and id into one integer key so the sort compares plain integers.
fn sort_by_packed_key(scored: &mut [ScoredCluster]) {
    let mut keys: Vec<u128> = scored
        .iter()
        .map(|s| {
            // Larger totals first: order by (i64::MAX - total), which is never negative.
            let rank = (i128::from(i64::MAX) - i128::from(s.total)) as u128;
            (rank << 32) | u128::from(s.cluster.0)
        })
        .collect();
    keys.sort_unstable();
    for (slot, key) in scored.iter_mut().zip(keys) {
        let id = ClusterId((key & u128::from(u32::MAX)) as u32);
        let total = (i128::from(i64::MAX) - (key >> 32) as i128) as i64;
        *slot = ScoredCluster { cluster: id, total };
    }
}

/// The `PlacementMisconfigured` message (without the empty plugin name before its colon) of a
/// placement whose `spec.numberOfClusters` is negative, `None` otherwise.
///
/// The CRD sets no minimum, so the API server admits `-1`; upstream's scheduler then slices
/// its cluster list with a negative bound and panics on every attempt, leaving the status
/// empty. Ours selects no cluster and reports the field (our difference, listed in
/// `ocm_api::differences`).
pub(crate) fn negative_number_of_clusters(placement: &Placement) -> Option<String> {
    placement
        .spec
        .number_of_clusters
        .filter(|n| *n < 0)
        .map(|n| format!("spec.numberOfClusters must not be negative, got {n}"))
}

/// Whether the placement carries `cluster.open-cluster-management.io/experimental-scheduling-disable: "true"`:
/// upstream's controller then does nothing for it (no decisions, no status).
pub fn is_scheduling_disabled(placement: &Placement) -> bool {
    placement
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ocm_api::constants::annotations::EXPERIMENTAL_SCHEDULING_DISABLE))
        .is_some_and(|v| v == "true")
}

/// How many decisions are missing: `numberOfClusters` less the clusters selected (none when
/// it is unset or negative, which is misconfigured and said so by the pipeline). With
/// topology spread (our addition) and a hard constraint that left clusters out (`spread_left_out`),
/// those clusters count as missing too, also without `numberOfClusters`.
fn unscheduled(placement: &Placement, pipeline: &Pipeline, spread_left_out: bool) -> i64 {
    let number_of_clusters = placement
        .spec
        .number_of_clusters
        .filter(|n| *n >= 0)
        .map(i64::from);
    let missing = number_of_clusters.map_or(0, |n| n - pipeline.selected.len() as i64);
    match pipeline.spread.as_ref().filter(|_| spread_left_out) {
        Some(outcome) => missing.max(outcome.wanted as i64 - outcome.selected as i64),
        None => missing,
    }
}

/// When to schedule again (the pipeline's deadline in nanoseconds), as a time and as a delay
/// from `now_ns`.
fn requeue(deadline: Option<i128>, now_ns: i128) -> (Option<Timestamp>, Option<Duration>) {
    let at = deadline.and_then(|ns| Timestamp::from_nanosecond(ns).ok());
    let after = deadline.map(|deadline| {
        let nanos = u64::try_from(deadline.saturating_sub(now_ns).max(0)).unwrap_or(u64::MAX);
        Duration::from_nanos(nanos)
    });
    (at, after)
}

/// Valid bindings, eligible sets and the available clusters of a namespace.
fn eligible_clusters(
    snapshot: &Snapshot,
    namespace: &str,
    spec_sets: &[String],
) -> Result<(Eligibility, Vec<ClusterId>)> {
    let bound: Vec<&String> = snapshot
        .bindings
        .get(namespace)
        .into_iter()
        .flatten()
        .filter(|b| snapshot.sets.contains_key(b.as_str()))
        .collect();
    let mut eligible: Vec<String> = bound
        .iter()
        .filter(|b| spec_sets.is_empty() || spec_sets.contains(b))
        .map(|b| (*b).clone())
        .collect();
    eligible.sort();
    let mut member_lists = Vec::with_capacity(eligible.len());
    for set in &eligible {
        match snapshot.sets.get(set) {
            Some(SetMembers::Members(m)) => member_lists.push(m),
            Some(SetMembers::Invalid(message)) => {
                return Err(Error::ClusterSet {
                    name: set.clone(),
                    message: message.clone(),
                });
            }
            None => {}
        }
    }
    let candidates = match member_lists.as_slice() {
        [] => Vec::new(),
        [one] => (*one).clone(),
        many => {
            let mut seen = vec![false; snapshot.clusters.len()];
            for list in many {
                for id in list.iter() {
                    if let Some(s) = seen.get_mut(id.index()) {
                        *s = true;
                    }
                }
            }
            seen.iter()
                .enumerate()
                .filter(|(_, s)| **s)
                .filter_map(|(i, _)| u32::try_from(i).ok().map(ClusterId))
                .collect()
        }
    };
    Ok((
        Eligibility {
            valid_bindings: bound.len(),
            cluster_sets: eligible,
        },
        candidates,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Both sorts order like the comparator, for narrow and wide ranges of totals.
        #[test]
        fn sorts_match_the_comparator(
            totals in proptest::collection::vec(
                proptest::prop_oneof![-300i64..300, proptest::num::i64::ANY], 0..300),
        ) {
            let mut scored: Vec<ScoredCluster> = totals
                .iter()
                .enumerate()
                .map(|(i, &total)| ScoredCluster { cluster: ClusterId(i as u32), total })
                .collect();
            let mut expected = scored.clone();
            expected.sort_by(|a, b| b.total.cmp(&a.total).then(a.cluster.cmp(&b.cluster)));
            let mut packed = scored.clone();
            sort_by_packed_key(&mut packed);
            proptest::prop_assert_eq!(&packed, &expected);
            if let (Some(min), Some(max)) = (totals.iter().min(), totals.iter().max()) {
                let span = i128::from(*max) - i128::from(*min);
                if span < 100_000 {
                    let mut counted = scored.clone();
                    counting_sort_by_score(&mut counted, *max, span as usize);
                    proptest::prop_assert_eq!(&counted, &expected);
                }
            }
            sort_by_score(&mut scored);
            proptest::prop_assert_eq!(scored, expected);
        }
    }

    #[test]
    fn packed_sort_matches_comparator() {
        let totals = [0i64, -5, 7, 7, i64::MIN, i64::MAX, -5, 300];
        let mut scored: Vec<ScoredCluster> = totals
            .iter()
            .enumerate()
            .map(|(i, &total)| ScoredCluster {
                cluster: ClusterId(i as u32),
                total,
            })
            .collect();
        let mut expected = scored.clone();
        expected.sort_by(|a, b| b.total.cmp(&a.total).then(a.cluster.cmp(&b.cluster)));
        sort_by_score(&mut scored);
        assert_eq!(scored, expected);
    }
}
