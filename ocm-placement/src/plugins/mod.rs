//! Filters and prioritizers: the built-in ones and the traits for custom ones.
//!
//! The scheduler runs the built-in filters `Predicate` then `TaintToleration`, then every
//! custom [`Filter`] in registration order; then it scores the survivors with the prioritizers
//! the placement's `prioritizerPolicy` enables (built-in `Balance`, `Steady`,
//! `ResourceAllocatableCPU`, `ResourceAllocatableMemory`, `AddOn/<resource>/<score>`, and any
//! custom [`Prioritizer`] registered under a built-in name of its own).
//!
//! Custom plugins are our addition (upstream has a fixed plugin set). They see a cluster through
//! [`ClusterView`] and the placement and hub through [`PluginContext`].

pub mod addon;
pub mod balance;
pub(crate) mod cel;
pub mod predicate;
pub mod resource;
pub mod steady;
pub mod taint_toleration;

pub use self::cel::CelLimits;

use jiff::Timestamp;
use ocm_api::cluster::v1::{ManagedCluster, Taint};
use ocm_api::cluster::v1beta1::Placement;

use crate::snapshot::{ClusterId, Snapshot};

/// Outcome of a custom plugin's check of a placement.
pub type PluginResult<T = ()> = std::result::Result<T, String>;

/// A custom filter: drops clusters a placement must not select.
///
/// ```
/// use ocm_placement::plugins::{ClusterView, Filter, PluginContext};
///
/// /// Keeps only clusters labelled `tier=gold`.
/// struct GoldOnly;
///
/// impl Filter for GoldOnly {
///     fn name(&self) -> &str {
///         "GoldOnly"
///     }
///     fn keep(&self, _ctx: &PluginContext<'_>, cluster: &ClusterView<'_>) -> bool {
///         cluster.label("tier") == Some("gold")
///     }
/// }
/// let scheduler = ocm_placement::Scheduler::new().with_filter(GoldOnly);
/// # let _ = scheduler;
/// ```
pub trait Filter: Send + Sync {
    /// The name reported in filter records and explanations.
    fn name(&self) -> &str;

    /// Checks the placement once before any cluster is examined. An error marks the placement
    /// misconfigured (`PlacementMisconfigured` with `<name>:<message>`), like a built-in filter.
    fn validate(&self, _placement: &Placement) -> PluginResult {
        Ok(())
    }

    /// Whether `cluster` survives this filter.
    fn keep(&self, ctx: &PluginContext<'_>, cluster: &ClusterView<'_>) -> bool;
}

/// A custom prioritizer: scores clusters; the scheduler multiplies the score by the weight.
///
/// A custom prioritizer is enabled like a built-in one, by a `prioritizerPolicy` configuration
/// with `scoreCoordinate: {type: BuiltIn, builtIn: <name>}` and a non-zero weight, or, in
/// `Additive` mode, by a non-zero [`default_weight`](Prioritizer::default_weight). Built-in
/// names take precedence over custom ones.
///
/// ```
/// use ocm_placement::plugins::{ClusterView, PluginContext, Prioritizer};
///
/// /// Prefers clusters with more claims.
/// struct ManyClaims;
///
/// impl Prioritizer for ManyClaims {
///     fn name(&self) -> &str {
///         "ManyClaims"
///     }
///     fn score(&self, _ctx: &PluginContext<'_>, cluster: &ClusterView<'_>) -> Option<i64> {
///         Some((cluster.claims().count() as i64 * 10).min(100))
///     }
/// }
/// let scheduler = ocm_placement::Scheduler::new().with_prioritizer(ManyClaims);
/// # let _ = scheduler;
/// ```
pub trait Prioritizer: Send + Sync {
    /// The built-in name that enables this prioritizer, also reported in results.
    fn name(&self) -> &str;

    /// Weight in `Additive` mode when the placement does not configure this prioritizer
    /// (0, the default, leaves it off unless configured).
    fn default_weight(&self) -> i32 {
        0
    }

    /// Score of one cluster, conventionally in `-100..=100`; `None` leaves no entry (counts 0).
    fn score(&self, ctx: &PluginContext<'_>, cluster: &ClusterView<'_>) -> Option<i64>;
}

/// What a plugin may read besides the cluster: the placement, the time and the hub snapshot.
#[derive(Debug, Clone, Copy)]
pub struct PluginContext<'a> {
    pub(crate) placement: &'a Placement,
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) now: Timestamp,
}

impl<'a> PluginContext<'a> {
    /// The placement being scheduled.
    pub fn placement(&self) -> &'a Placement {
        self.placement
    }

    /// The hub snapshot.
    pub fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    /// The time the scheduler was given.
    pub fn now(&self) -> Timestamp {
        self.now
    }
}

/// Read access to one cluster of the snapshot.
#[derive(Debug, Clone, Copy)]
pub struct ClusterView<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) id: ClusterId,
}

impl<'a> ClusterView<'a> {
    /// The cluster's id in the snapshot.
    pub fn id(&self) -> ClusterId {
        self.id
    }

    /// The cluster name.
    pub fn name(&self) -> &'a str {
        self.snapshot.cluster_name(self.id)
    }

    fn entry(&self) -> Option<&'a crate::snapshot::ClusterEntry> {
        self.snapshot.clusters.get(self.id.index())
    }

    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        let sym = self.snapshot.symbols.lookup(key);
        self.entry()?
            .labels
            .get(sym)
            .map(|v| self.snapshot.symbols.resolve(v))
    }

    /// The labels, ordered by an internal key order.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let symbols = &self.snapshot.symbols;
        self.entry()
            .into_iter()
            .flat_map(|e| e.labels.pairs().iter())
            .map(move |&(k, v)| (symbols.resolve(k), symbols.resolve(v)))
    }

    /// The value of a cluster claim (the last one wins for repeated names).
    pub fn claim(&self, name: &str) -> Option<&'a str> {
        let sym = self.snapshot.symbols.lookup(name);
        self.entry()?
            .claims
            .get(sym)
            .map(|v| self.snapshot.symbols.resolve(v))
    }

    /// The cluster claims as a map.
    pub fn claims(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let symbols = &self.snapshot.symbols;
        self.entry()
            .into_iter()
            .flat_map(|e| e.claims.pairs().iter())
            .map(move |&(k, v)| (symbols.resolve(k), symbols.resolve(v)))
    }

    /// The cluster's taints.
    pub fn taints(&self) -> &'a [Taint] {
        self.managed_cluster().map_or(&[], |c| c.taints())
    }

    /// Allocatable CPU as a float, when both allocatable and capacity report it.
    pub fn allocatable_cpu(&self) -> Option<f64> {
        self.entry()?.cpu
    }

    /// Allocatable memory in bytes, when both allocatable and capacity report it.
    pub fn allocatable_memory(&self) -> Option<f64> {
        self.entry()?.memory
    }

    /// The full ManagedCluster object.
    pub fn managed_cluster(&self) -> Option<&'a ManagedCluster> {
        self.snapshot.managed_cluster(self.id)
    }
}
