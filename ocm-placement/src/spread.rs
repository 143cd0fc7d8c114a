//! Topology spread: `spec.spreadPolicy.spreadConstraints`, **our addition** (off by default).
//!
//! The field has been in the Placement API since 2022, but upstream's scheduler ignores it, and
//! so does [`Scheduler`](crate::Scheduler) unless it is built with
//! [`Scheduler::with_topology_spread`](crate::Scheduler::with_topology_spread) (give that
//! scheduler to the controller's `PlacementController::with_scheduler` to use it there; the
//! binaries take it as `ocm-hub-controller --feature-gates TopologySpread=true` and
//! `ocm-placement-sim --feature-gates TopologySpread=true`, and the `placement-opt-ins`
//! example shows it). With the option on, the scheduler selects clusters so that they spread
//! over the values of a label or claim (the *topology domains*):
//!
//! * A constraint's domains are the values its `topologyKey` (a label when `topologyKeyType`
//!   is `Label`, a claim when it is `Claim`) takes among the feasible clusters (those that pass
//!   the predicates, the taints and the custom filters) that every `DoNotSchedule` constraint
//!   allows. The *skew* of a constraint is the largest number of selected clusters in one of
//!   its domains minus the smallest (a domain with none selected counts 0), as the API
//!   documents. `maxSkew` defaults to 1, `whenUnsatisfiable` to `ScheduleAnyway`.
//! * `whenUnsatisfiable: DoNotSchedule` is a hard rule: the selection never has a skew above
//!   `maxSkew`, even if that means selecting fewer clusters than `numberOfClusters` (or than
//!   the feasible clusters without it). Clusters without the topology key are not selected,
//!   as Kubernetes' pod topology spread leaves out nodes without the key.
//! * `ScheduleAnyway` is a preference: clusters that keep the skew within `maxSkew` come
//!   first; when none is left the one that exceeds it least is chosen, so the count is always
//!   reached. Clusters without the key can be selected and do not change its skew.
//! * Clusters are chosen one at a time: among those the hard constraints allow, the one that
//!   breaks the soft constraints least (compared in spec order, the first one mattering most,
//!   as the API says), then the highest total score of the prioritizers, then the name.
//!   `numberOfClusters` (default: every feasible cluster) is the count aimed at. With one hard
//!   constraint this reaches the largest count the constraint allows; with several hard
//!   constraints the greedy choice may stop short of the best possible count.
//! * When a hard constraint stops the selection short, the unscheduled count is the wanted
//!   count minus the selected one (also without `numberOfClusters`), and `PlacementSatisfied`
//!   is `False` with upstream's reason and message (`NotAllDecisionsScheduled`, `<n> cluster
//!   decisions unscheduled`; `NoManagedClusterMatched` when nothing could be selected)
//!   followed by `: ` and [`SpreadOutcome::message`], which names the constraint, the counts
//!   per domain and the clusters without the key.
//! * A constraint the CRD would reject (`maxSkew` below 1, an empty `topologyKey`, more than
//!   8 constraints), or one with a `topologyKeyType` or `whenUnsatisfiable` this SDK does not
//!   know, makes the placement misconfigured: `PlacementMisconfigured` says
//!   `TopologySpread:<field error>` and nothing is selected, as for upstream's other plugins.
//!
//! Without the option, or without constraints, nothing changes; the `Spread` built-in
//! prioritizer stays unknown (upstream's `incorrect builtin prioritizer: Spread`) either way:
//! the spread is not a score. [`ScheduleResult::spread`](crate::ScheduleResult::spread) reports
//! how each constraint ended up. Clusters sharing their domain in every constraint form a
//! group; each choice evaluates each distinct set of domain counts once and re-files only the
//! groups sharing a domain with the chosen cluster, so a key unique to every cluster stays
//! cheap while a constraint over few domains combined with such a key re-files many groups
//! per choice. A round also allocates, per constraint, one `u32` per string interned in the
//! snapshot (its domain table).
//!
//! # Example
//!
//! Six clusters over three zones, the three best-scored in zone `a`: without the option the
//! scheduler takes the three best, with it one per zone.
//!
//! ```
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_api::cluster::v1beta1::Placement;
//! use ocm_placement::{Scheduler, Snapshot};
//! use serde_json::json;
//!
//! let cluster = |name: &str, zone: &str, cpu: &str| -> ManagedCluster {
//!     serde_json::from_value(json!({
//!         "metadata": {"name": name, "labels": {
//!             "cluster.open-cluster-management.io/clusterset": "default", "zone": zone}},
//!         "spec": {},
//!         "status": {"allocatable": {"cpu": cpu}, "capacity": {"cpu": "64"}}
//!     }))
//!     .unwrap()
//! };
//! let mut builder = Snapshot::builder()
//!     .cluster_set(&serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": {}}))?)
//!     .binding(&serde_json::from_value(json!({
//!         "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}}))?);
//! for (name, zone, cpu) in [("a1", "a", "60"), ("a2", "a", "50"), ("a3", "a", "40"),
//!                           ("b1", "b", "30"), ("c1", "c", "20"), ("c2", "c", "10")] {
//!     builder.add_cluster(cluster(name, zone, cpu));
//! }
//! let snapshot = builder.build();
//! let placement: Placement = serde_json::from_value(json!({
//!     "metadata": {"name": "web", "namespace": "apps"},
//!     "spec": {
//!         "numberOfClusters": 3,
//!         "prioritizerPolicy": {"configurations": [
//!             {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
//!              "weight": 1}]},
//!         "spreadPolicy": {"spreadConstraints": [
//!             {"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 1,
//!              "whenUnsatisfiable": "DoNotSchedule"}]}
//!     }
//! }))?;
//! let now = jiff::Timestamp::from_second(1_700_000_000)?;
//!
//! let upstream = Scheduler::new().schedule(&placement, &snapshot, now)?;
//! assert_eq!(upstream.selected_names(), ["a1", "a2", "a3"]);
//!
//! let spread = Scheduler::new().with_topology_spread(true).schedule(&placement, &snapshot, now)?;
//! assert_eq!(spread.selected_names(), ["a1", "b1", "c1"]);
//! let outcome = spread.spread.as_ref().unwrap();
//! assert_eq!(outcome.constraints[0].skew, 0);
//! assert_eq!(spread.satisfied.reason, "AllDecisionsScheduled");
//!
//! // Five of six: zone `b` has one cluster, so no zone may have more than two.
//! let mut five = placement.clone();
//! five.spec.number_of_clusters = Some(6);
//! let r = Scheduler::new().with_topology_spread(true).schedule(&five, &snapshot, now)?;
//! assert_eq!(r.selected.len(), 5);
//! assert_eq!(r.satisfied.reason, "NotAllDecisionsScheduled");
//! assert_eq!(
//!     r.satisfied.message,
//!     "1 cluster decisions unscheduled: spreadConstraints[0] (Label \"zone\", maxSkew 1, \
//!      DoNotSchedule) allows 5 of 6 clusters: a=2, b=1, c=2"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeSet, HashMap};

use ocm_api::cluster::v1beta1::{
    Placement, SpreadConstraintsTerm, TopologyKeyType, UnsatisfiableMaxSkewAction,
};

use crate::result::ScoredCluster;
use crate::snapshot::{ClusterId, Snapshot};
use crate::symbols::{ABSENT, Sym};

/// Plugin name in statuses and messages.
pub const NAME: &str = "TopologySpread";

/// One constraint, with its key translated into the snapshot's symbols.
#[derive(Debug, Clone)]
struct Constraint {
    key: Sym,
    claim: bool,
    max_skew: i64,
    hard: bool,
    term: SpreadConstraintsTerm,
}

/// How one constraint ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConstraintReport {
    /// Position in `spreadConstraints`.
    pub index: usize,
    /// The constraint as written.
    pub term: SpreadConstraintsTerm,
    /// Selected clusters per domain (domain value, count), sorted by value.
    pub domains: Vec<(String, usize)>,
    /// Feasible clusters without the topology key.
    pub without_key: usize,
    /// The skew of the selection.
    pub skew: usize,
    /// Whether this hard constraint stopped the selection before the wanted count.
    pub limited: bool,
}

/// The outcome of a spread selection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SpreadOutcome {
    /// One report per constraint, in spec order.
    pub constraints: Vec<ConstraintReport>,
    /// How many clusters were wanted (`numberOfClusters`, or every feasible cluster).
    pub wanted: usize,
    /// How many were selected.
    pub selected: usize,
}

impl SpreadOutcome {
    /// Why fewer clusters than wanted were selected, when a hard constraint is the reason:
    /// `spreadConstraints[0] (Label "zone", maxSkew 1, DoNotSchedule) allows 4 of 6 clusters:
    /// a=2, b=2, c=0`.
    pub fn message(&self) -> Option<String> {
        let limiting: Vec<String> = self
            .constraints
            .iter()
            .filter(|c| c.limited)
            .map(|c| {
                // As the API spells it.
                let kind = c.term.topology_key_type.as_str();
                let shown: Vec<String> = c
                    .domains
                    .iter()
                    .take(MAX_DOMAINS_IN_MESSAGE)
                    .map(|(d, n)| format!("{d}={n}"))
                    .collect();
                let more = c.domains.len().saturating_sub(MAX_DOMAINS_IN_MESSAGE);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                let without = if c.without_key > 0 {
                    format!("; {} clusters without the key", c.without_key)
                } else {
                    String::new()
                };
                format!(
                    "spreadConstraints[{}] ({kind} {:?}, maxSkew {}, DoNotSchedule) allows {} of {} clusters: {}{more}{without}",
                    c.index,
                    c.term.topology_key,
                    c.term.max_skew.unwrap_or(1),
                    self.selected,
                    self.wanted,
                    shown.join(", ")
                )
            })
            .collect();
        (!limiting.is_empty()).then(|| limiting.join("; "))
    }
}

/// Most domains listed in a message.
const MAX_DOMAINS_IN_MESSAGE: usize = 10;

/// The constraints of `placement`, validated; an empty list when there are none. The error
/// is the Misconfigured message.
fn constraints(placement: &Placement, snapshot: &Snapshot) -> Result<Vec<Constraint>, String> {
    let terms = placement
        .spec
        .spread_policy
        .as_ref()
        .and_then(|s| s.spread_constraints.as_deref())
        .unwrap_or_default();
    if terms.len() > MAX_CONSTRAINTS {
        return Err(format!(
            "spreadConstraints: Too many: {}: must have at most {MAX_CONSTRAINTS} items",
            terms.len()
        ));
    }
    terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let max_skew = t.max_skew.unwrap_or(1);
            if max_skew < 1 {
                return Err(format!(
                    "spreadConstraints[{i}].maxSkew: Invalid value: {max_skew}: should be greater than or equal to 1"
                ));
            }
            if t.topology_key.is_empty() {
                return Err(format!(
                    "spreadConstraints[{i}].topologyKey: Required value"
                ));
            }
            // Values a newer OCM may add: a constraint this scheduler cannot honour is a
            // misconfiguration, in the Kubernetes field-error form.
            if t.topology_key_type.is_unknown() {
                return Err(format!(
                    "spreadConstraints[{i}].topologyKeyType: Unsupported value: \"{}\": supported values: \"Label\", \"Claim\"",
                    t.topology_key_type
                ));
            }
            if let Some(action) = t.when_unsatisfiable.as_ref().filter(|a| a.is_unknown()) {
                return Err(format!(
                    "spreadConstraints[{i}].whenUnsatisfiable: Unsupported value: \"{action}\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
                ));
            }
            Ok(Constraint {
                key: snapshot.symbols.lookup(&t.topology_key),
                claim: t.topology_key_type == TopologyKeyType::Claim,
                max_skew: i64::from(max_skew),
                hard: t.when_unsatisfiable == Some(UnsatisfiableMaxSkewAction::DoNotSchedule),
                term: t.clone(),
            })
        })
        .collect()
}

/// Counts of one constraint's domains, with the minimum and maximum kept up to date.
#[derive(Debug, Clone)]
struct Counts {
    counts: Vec<i64>,
    min: i64,
    at_min: usize,
    max: i64,
}

impl Counts {
    fn new(domains: usize) -> Self {
        Counts {
            counts: vec![0; domains],
            min: 0,
            at_min: domains,
            max: 0,
        }
    }

    /// The skew after one more cluster in `domain` (`None`: a cluster without the key).
    fn skew_after(&self, domain: Option<u32>) -> i64 {
        self.skew_after_count(domain.map(|d| self.count(d)))
    }

    /// The selected clusters in `domain`.
    fn count(&self, domain: u32) -> i64 {
        self.counts.get(domain as usize).copied().unwrap_or(0)
    }

    /// The skew after one more cluster in a domain that holds `count` (`None`: a cluster
    /// without the key).
    fn skew_after_count(&self, count: Option<i64>) -> i64 {
        let Some(c) = count else {
            return self.max - self.min;
        };
        let min = if c == self.min && self.at_min == 1 {
            self.min + 1
        } else {
            self.min
        };
        self.max.max(c + 1) - min
    }

    fn add(&mut self, domain: Option<u32>) {
        let Some(d) = domain else { return };
        let Some(slot) = self.counts.get_mut(d as usize) else {
            return;
        };
        let before = *slot;
        *slot += 1;
        self.max = self.max.max(*slot);
        if before == self.min {
            self.at_min -= 1;
            if self.at_min == 0 {
                self.min += 1;
                self.at_min = self.counts.iter().filter(|&&c| c == self.min).count();
            }
        }
    }

    fn skew(&self) -> i64 {
        self.max - self.min
    }
}

/// No position / no group.
const NONE: u32 = u32::MAX;

/// The clusters a selection may choose from, grouped by their domain in every constraint (a
/// group's clusters are interchangeable for the spread), each group a list in score order.
/// Flat arrays, so a key unique to every cluster costs no allocation per cluster.
struct Groups {
    /// Constraints per group.
    width: usize,
    /// Group `g`'s domains are `domains[g * width..(g + 1) * width]`.
    domains: Vec<Option<u32>>,
    /// Score position of each group's next cluster (`NONE`: exhausted).
    head: Vec<u32>,
    /// Score position of each group's last cluster.
    tail: Vec<u32>,
    /// Clusters left in each group.
    left: Vec<u32>,
    /// Per score position: the next position in the same group.
    next: Vec<u32>,
    /// Per score position: the cluster.
    cluster: Vec<ClusterId>,
    index: HashMap<Box<[Option<u32>]>, u32>,
}

impl Groups {
    fn new(width: usize, positions: usize) -> Self {
        Groups {
            width,
            domains: Vec::new(),
            head: Vec::new(),
            tail: Vec::new(),
            left: Vec::new(),
            next: vec![NONE; positions],
            cluster: vec![ClusterId(NONE); positions],
            index: HashMap::new(),
        }
    }

    fn len(&self) -> usize {
        self.head.len()
    }

    fn domains(&self, g: usize) -> &[Option<u32>] {
        self.domains
            .get(g * self.width..(g + 1) * self.width)
            .unwrap_or_default()
    }

    /// Appends the cluster at score position `pos` (positions must come in increasing order).
    fn push(&mut self, tuple: &[Option<u32>], pos: u32, cluster: ClusterId) {
        let Some(slot) = self.cluster.get_mut(pos as usize) else {
            return;
        };
        *slot = cluster;
        match self.index.get(tuple) {
            Some(&g) => {
                let g = g as usize;
                if let Some(last) = self.next.get_mut(self.tail[g] as usize) {
                    *last = pos;
                }
                self.tail[g] = pos;
                self.left[g] += 1;
            }
            None => {
                let g = u32::try_from(self.head.len()).unwrap_or(NONE);
                self.domains.extend_from_slice(tuple);
                self.head.push(pos);
                self.tail.push(pos);
                self.left.push(1);
                self.index.insert(tuple.into(), g);
            }
        }
    }

    /// The score position of group `g`'s next cluster.
    fn head(&self, g: usize) -> Option<u32> {
        self.head.get(g).copied().filter(|&p| p != NONE)
    }

    /// Takes group `g`'s next cluster.
    fn take(&mut self, g: usize) -> Option<ClusterId> {
        let pos = self.head(g)?;
        let id = self.cluster.get(pos as usize).copied()?;
        self.head[g] = self.next.get(pos as usize).copied().unwrap_or(NONE);
        self.left[g] -= 1;
        Some(id)
    }
}

/// The most constraints the CRD admits, and the width of a [`CountKey`].
const MAX_CONSTRAINTS: usize = 8;

/// What a group's next cluster would do depends only on the counts of its domains: groups
/// with the same counts are interchangeable but for their score. The count of each domain
/// (-1 without the key, and for unused slots).
type CountKey = [i64; MAX_CONSTRAINTS];

fn count_key(domains: &[Option<u32>], counts: &[Counts]) -> CountKey {
    let mut key = [-1; MAX_CONSTRAINTS];
    for ((slot, d), c) in key.iter_mut().zip(domains).zip(counts) {
        if let Some(d) = d {
            *slot = c.count(*d);
        }
    }
    key
}

/// Up to this many groups, [`plain_greedy`] evaluates every group at every choice; beyond,
/// [`greedy`] keeps them in buckets.
const PLAIN_GROUPS: usize = 64;

/// Where a cluster of a group whose domains hold `key` would leave the constraints: `None`
/// when it breaks a hard one, else how far it exceeds each soft one's `maxSkew`.
fn evaluate(
    constraints: &[Constraint],
    counts: &[Counts],
    key: &CountKey,
) -> Option<[i64; MAX_CONSTRAINTS]> {
    let mut violations = [0i64; MAX_CONSTRAINTS];
    for (i, c) in constraints.iter().enumerate() {
        let count = key.get(i).copied().filter(|&k| k >= 0);
        let skew = counts.get(i)?.skew_after_count(count);
        if c.hard {
            if skew > c.max_skew {
                return None;
            }
        } else if let Some(v) = violations.get_mut(i) {
            *v = (skew - c.max_skew).max(0);
        }
    }
    Some(violations)
}

/// Chooses clusters one at a time until `wanted` are selected or the hard constraints allow
/// none: among the groups' next clusters, the one that breaks the soft constraints least (in
/// spec order), then the first in score order. Evaluates every group at every choice, which
/// is the cheapest for a few groups.
fn plain_greedy(
    constraints: &[Constraint],
    groups: &mut Groups,
    counts: &mut [Counts],
    wanted: usize,
    selected: &mut Vec<ClusterId>,
) {
    while selected.len() < wanted {
        let mut best: Option<([i64; MAX_CONSTRAINTS], u32, usize)> = None;
        for g in 0..groups.len() {
            let Some(pos) = groups.head(g) else { continue };
            let key = count_key(groups.domains(g), counts);
            let Some(violations) = evaluate(constraints, counts, &key) else {
                continue;
            };
            if best.is_none_or(|(v, p, _)| (violations, pos) < (v, p)) {
                best = Some((violations, pos, g));
            }
        }
        let Some((_, _, g)) = best else { break };
        let Some(id) = groups.take(g) else { break };
        selected.push(id);
        for (i, c) in counts.iter_mut().enumerate() {
            c.add(groups.domains(g)[i]);
        }
    }
}

/// The groups in each domain, per constraint: one list of group numbers per constraint,
/// and the offsets at which each domain's groups start in it (the last offset is the end).
fn groups_by_domain(groups: &Groups, counts: &[Counts]) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let mut offsets: Vec<Vec<u32>> = counts.iter().map(|c| vec![0; c.counts.len() + 1]).collect();
    for g in 0..groups.len() {
        for (i, d) in groups.domains(g).iter().enumerate() {
            if let Some(o) = d.and_then(|d| offsets[i].get_mut(d as usize + 1)) {
                *o += 1;
            }
        }
    }
    for o in &mut offsets {
        for k in 1..o.len() {
            o[k] += o[k - 1];
        }
    }
    let mut in_domain: Vec<Vec<u32>> = offsets
        .iter()
        .map(|o| vec![0; o.last().copied().unwrap_or(0) as usize])
        .collect();
    let mut fill: Vec<Vec<u32>> = offsets.clone();
    for g in 0..groups.len() {
        for (i, d) in groups.domains(g).iter().enumerate() {
            let Some(at) = d.and_then(|d| fill[i].get_mut(d as usize)) else {
                continue;
            };
            if let Some(slot) = in_domain[i].get_mut(*at as usize) {
                *slot = g as u32;
            }
            *at += 1;
        }
    }
    (offsets, in_domain)
}

/// What [`plain_greedy`] does, for many groups. Groups are kept in buckets by [`CountKey`], each bucket ordered by the score position
/// of its groups' next cluster, so a choice evaluates each bucket once and re-files only the
/// groups that share a domain with the chosen cluster.
fn greedy(
    constraints: &[Constraint],
    groups: &mut Groups,
    counts: &mut [Counts],
    wanted: usize,
    selected: &mut Vec<ClusterId>,
) {
    let (offsets, in_domain) = groups_by_domain(groups, counts);
    let mut buckets: HashMap<CountKey, BTreeSet<(u32, u32)>> = HashMap::new();
    let mut keys: Vec<Option<CountKey>> = Vec::with_capacity(groups.len());
    for g in 0..groups.len() {
        match groups.head(g) {
            Some(pos) => {
                let key = count_key(groups.domains(g), counts);
                buckets.entry(key).or_default().insert((pos, g as u32));
                keys.push(Some(key));
            }
            None => keys.push(None),
        }
    }
    let mut seen = vec![false; groups.len()];
    let mut affected: Vec<usize> = Vec::new();
    while selected.len() < wanted {
        let mut best: Option<([i64; MAX_CONSTRAINTS], u32, usize)> = None;
        for (key, bucket) in &buckets {
            let Some(&(pos, g)) = bucket.first() else {
                continue;
            };
            let Some(violations) = evaluate(constraints, counts, key) else {
                continue;
            };
            if best.is_none_or(|(v, p, _)| (violations, pos) < (v, p)) {
                best = Some((violations, pos, g as usize));
            }
        }
        let Some((_, picked_pos, g)) = best else {
            break;
        };
        let Some(id) = groups.take(g) else { break };
        selected.push(id);
        for (i, c) in counts.iter_mut().enumerate() {
            c.add(groups.domains(g)[i]);
        }
        // Re-file the chosen group and every group whose domain counts changed.
        affected.clear();
        affected.push(g);
        seen[g] = true;
        for (i, d) in groups.domains(g).iter().enumerate() {
            let Some(d) = d else { continue };
            let (from, to) = (offsets[i][*d as usize], offsets[i][*d as usize + 1]);
            for &h in in_domain[i]
                .get(from as usize..to as usize)
                .unwrap_or_default()
            {
                let h = h as usize;
                if !seen[h] {
                    seen[h] = true;
                    affected.push(h);
                }
            }
        }
        for &h in &affected {
            seen[h] = false;
            let Some(old) = keys[h].take() else { continue };
            let old_pos = if h == g {
                picked_pos
            } else {
                groups.head(h).unwrap_or(NONE)
            };
            if let Some(bucket) = buckets.get_mut(&old) {
                bucket.remove(&(old_pos, h as u32));
                if bucket.is_empty() {
                    buckets.remove(&old);
                }
            }
            if let Some(pos) = groups.head(h) {
                let key = count_key(groups.domains(h), counts);
                buckets.entry(key).or_default().insert((pos, h as u32));
                keys[h] = Some(key);
            }
        }
    }
}

/// The selection, in the order the clusters were chosen, and how the constraints ended up.
pub(crate) struct Selection {
    pub(crate) selected: Vec<ClusterId>,
    pub(crate) outcome: SpreadOutcome,
}

/// Selects up to `wanted` of `scored` (sorted by total descending, then name) under the
/// placement's spread constraints. `Err` is a Misconfigured message; `Ok(None)` means there
/// are no constraints (the caller keeps upstream's prefix).
pub(crate) fn select(
    placement: &Placement,
    snapshot: &Snapshot,
    scored: &[ScoredCluster],
    wanted: usize,
) -> Result<Option<Selection>, String> {
    let constraints = constraints(placement, snapshot)?;
    if constraints.is_empty() {
        return Ok(None);
    }
    let Domains {
        mut groups,
        names: domain_names,
        without_key,
    } = group_by_domains(&constraints, snapshot, scored);
    let mut counts: Vec<Counts> = domain_names.iter().map(|d| Counts::new(d.len())).collect();
    let hard_any = constraints.iter().any(|c| c.hard);
    let available: usize = groups.left.iter().map(|&l| l as usize).sum();
    let mut selected = Vec::with_capacity(wanted.min(available));
    if !hard_any && wanted >= available {
        // Everything is selected; soft constraints would only decide the order, which nothing
        // downstream depends on (decisions are written in name order): keep the score order.
        selected.extend(scored.iter().map(|s| s.cluster));
        for g in 0..groups.len() {
            for _ in 0..groups.left[g] {
                for (i, c) in counts.iter_mut().enumerate() {
                    c.add(groups.domains(g)[i]);
                }
            }
        }
    } else if groups.len() <= PLAIN_GROUPS {
        plain_greedy(
            &constraints,
            &mut groups,
            &mut counts,
            wanted,
            &mut selected,
        );
    } else {
        greedy(
            &constraints,
            &mut groups,
            &mut counts,
            wanted,
            &mut selected,
        );
    }
    let stopped_short = selected.len() < wanted;
    let reports = reports(
        &constraints,
        snapshot,
        &groups,
        &domain_names,
        &without_key,
        &counts,
        stopped_short,
    );
    let outcome = SpreadOutcome {
        constraints: reports,
        wanted,
        selected: selected.len(),
    };
    Ok(Some(Selection { selected, outcome }))
}

/// The clusters the hard constraints allow, grouped by their tuple of domains (one per
/// constraint; domains numbered in order of first appearance, in score order); and per
/// constraint, its domains' values and how many clusters lack its key.
struct Domains {
    groups: Groups,
    names: Vec<Vec<Sym>>,
    without_key: Vec<usize>,
}

fn group_by_domains(
    constraints: &[Constraint],
    snapshot: &Snapshot,
    scored: &[ScoredCluster],
) -> Domains {
    let n = constraints.len();
    // Domains of every constraint, numbered in order of first appearance among the clusters
    // the hard constraints allow.
    // Domain ids by symbol: a flat table per constraint costs less than hashing every value.
    let mut domain_ids: Vec<Vec<u32>> = vec![vec![NONE; snapshot.symbols.len()]; n];
    let mut domain_names: Vec<Vec<Sym>> = vec![Vec::new(); n];
    let mut without_key = vec![0usize; n];
    let mut groups = Groups::new(n, scored.len());
    let mut values: Vec<Option<Sym>> = Vec::with_capacity(n);
    let mut tuple: Vec<Option<u32>> = Vec::with_capacity(n);
    for (pos, s) in scored.iter().enumerate() {
        let (Some(entry), Ok(pos)) = (snapshot.clusters.get(s.cluster.index()), u32::try_from(pos))
        else {
            continue;
        };
        values.clear();
        let mut allowed = true;
        for (i, c) in constraints.iter().enumerate() {
            let map = if c.claim {
                &entry.claims
            } else {
                &entry.labels
            };
            let value = if c.key == ABSENT {
                None
            } else {
                map.get(c.key)
            };
            if value.is_none() {
                without_key[i] += 1;
                allowed &= !c.hard;
            }
            values.push(value);
        }
        if !allowed {
            continue;
        }
        tuple.clear();
        for (i, v) in values.iter().enumerate() {
            tuple.push(v.and_then(|v| {
                let names = &mut domain_names[i];
                let slot = domain_ids[i].get_mut(v as usize)?;
                if *slot == NONE {
                    *slot = u32::try_from(names.len()).ok()?;
                    names.push(v);
                }
                Some(*slot)
            }));
        }
        groups.push(&tuple, pos, s.cluster);
    }
    Domains {
        groups,
        names: domain_names,
        without_key,
    }
}

/// Each constraint's report: its domains' counts, clusters without its key, its skew, and
/// (when the selection `stopped_short`) whether it is a hard constraint that stopped it, as
/// one a remaining cluster would break or one that left out clusters without its key.
fn reports(
    constraints: &[Constraint],
    snapshot: &Snapshot,
    groups: &Groups,
    domain_names: &[Vec<Sym>],
    without_key: &[usize],
    counts: &[Counts],
    stopped_short: bool,
) -> Vec<ConstraintReport> {
    let n = constraints.len();
    let mut limiting = vec![false; n];
    if stopped_short {
        for g in (0..groups.len()).filter(|&g| groups.head(g).is_some()) {
            for (i, c) in constraints.iter().enumerate() {
                if c.hard && counts[i].skew_after(groups.domains(g)[i]) > c.max_skew {
                    limiting[i] = true;
                }
            }
        }
        for (i, c) in constraints.iter().enumerate() {
            if c.hard && without_key[i] > 0 {
                limiting[i] = true;
            }
        }
    }
    constraints
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut domains: Vec<(String, usize)> = domain_names[i]
                .iter()
                .enumerate()
                .map(|(d, &sym)| {
                    let count = counts[i].counts.get(d).copied().unwrap_or(0);
                    (
                        snapshot.symbols.resolve(sym).to_string(),
                        usize::try_from(count).unwrap_or(0),
                    )
                })
                .collect();
            domains.sort();
            ConstraintReport {
                index: i,
                term: c.term.clone(),
                domains,
                without_key: without_key[i],
                skew: usize::try_from(counts[i].skew()).unwrap_or(0),
                limited: limiting[i],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The incremental minimum and maximum agree with counting from scratch.
        #[test]
        fn counts_track_skew(domains in 1..8usize, adds in proptest::collection::vec(proptest::option::of(0..8u32), 0..60)) {
            let mut counts = Counts::new(domains);
            let mut naive = vec![0i64; domains];
            for add in adds {
                let add = add.filter(|d| (*d as usize) < domains);
                let mut after = naive.clone();
                if let Some(d) = add {
                    after[d as usize] += 1;
                }
                let skew = |v: &[i64]| v.iter().max().unwrap() - v.iter().min().unwrap();
                prop_assert_eq!(counts.skew_after(add), skew(&after));
                counts.add(add);
                naive = after;
                prop_assert_eq!(counts.skew(), skew(&naive));
            }
        }
    }

    /// The rule, written plainly: evaluate every group at every choice (vectors, no keys).
    fn naive_greedy(
        constraints: &[Constraint],
        groups: &mut Groups,
        counts: &mut [Counts],
        wanted: usize,
    ) -> Vec<ClusterId> {
        let mut selected = Vec::new();
        while selected.len() < wanted {
            let mut best: Option<(Vec<i64>, u32, usize)> = None;
            for g in 0..groups.len() {
                let Some(pos) = groups.head(g) else { continue };
                let mut violations = Vec::new();
                let mut ok = true;
                for (i, c) in constraints.iter().enumerate() {
                    let skew = counts[i].skew_after(groups.domains(g)[i]);
                    if c.hard {
                        ok &= skew <= c.max_skew;
                        violations.push(0);
                    } else {
                        violations.push((skew - c.max_skew).max(0));
                    }
                }
                if ok
                    && best
                        .as_ref()
                        .is_none_or(|b| (&violations, pos) < (&b.0, b.1))
                {
                    best = Some((violations, pos, g));
                }
            }
            let Some((_, _, g)) = best else { break };
            selected.push(groups.take(g).unwrap());
            for (i, c) in counts.iter_mut().enumerate() {
                c.add(groups.domains(g)[i]);
            }
        }
        selected
    }

    proptest! {
        /// The bucketed and the plain greedy choose exactly what the reference loop chooses,
        /// in the same order.
        #[test]
        fn bucketed_greedy_is_the_plain_greedy(
            terms in proptest::collection::vec((1..5u32, 1..3i64, any::<bool>()), 1..5),
            clusters in proptest::collection::vec(proptest::collection::vec(proptest::option::weighted(0.85, 0..5u32), 4), 0..90),
            wanted in 0..100usize,
        ) {
            let constraints: Vec<Constraint> = terms
                .iter()
                .map(|&(_, max_skew, hard)| Constraint {
                    key: 0,
                    claim: false,
                    max_skew,
                    hard,
                    term: SpreadConstraintsTerm::default(),
                })
                .collect();
            let build = || {
                let mut groups = Groups::new(terms.len(), clusters.len());
                for (pos, values) in clusters.iter().enumerate() {
                    let tuple: Option<Vec<Option<u32>>> = terms
                        .iter()
                        .zip(values.iter().cycle())
                        .map(|(&(domains, _, hard), v)| match v.map(|v| v % domains) {
                            None if hard => None,
                            v => Some(v),
                        })
                        .collect();
                    if let Some(tuple) = tuple {
                        groups.push(&tuple, pos as u32, ClusterId(pos as u32));
                    }
                }
                groups
            };
            let counts: Vec<Counts> = terms.iter().map(|t| Counts::new(t.0 as usize)).collect();
            let mut fast = Vec::new();
            greedy(&constraints, &mut build(), &mut counts.clone(), wanted, &mut fast);
            let mut plain = Vec::new();
            plain_greedy(&constraints, &mut build(), &mut counts.clone(), wanted, &mut plain);
            let slow = naive_greedy(&constraints, &mut build(), &mut counts.clone(), wanted);
            prop_assert_eq!(&fast, &slow);
            prop_assert_eq!(&plain, &slow);
        }
    }

    #[test]
    fn message_lists_ten_domains_and_counts_the_rest() {
        let term: SpreadConstraintsTerm = serde_json::from_value(serde_json::json!({
            "topologyKey": "rack", "topologyKeyType": "Claim", "maxSkew": 2,
            "whenUnsatisfiable": "DoNotSchedule"}))
        .unwrap();
        let report = |limited| ConstraintReport {
            index: 1,
            term: term.clone(),
            domains: (0..12).map(|i| (format!("r{i:02}"), 1)).collect(),
            without_key: 3,
            skew: 1,
            limited,
        };
        let outcome = SpreadOutcome {
            constraints: vec![report(false), report(true)],
            wanted: 20,
            selected: 12,
        };
        assert_eq!(
            outcome.message().unwrap(),
            "spreadConstraints[1] (Claim \"rack\", maxSkew 2, DoNotSchedule) allows 12 of 20 \
             clusters: r00=1, r01=1, r02=1, r03=1, r04=1, r05=1, r06=1, r07=1, r08=1, r09=1 and 2 \
             more; 3 clusters without the key"
        );
        let fine = SpreadOutcome {
            constraints: vec![report(false)],
            wanted: 12,
            selected: 12,
        };
        assert_eq!(fine.message(), None);
    }
}
