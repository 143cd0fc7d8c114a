//! Builders for the cluster-group objects an addon author writes most: [`Placement`],
//! [`ManagedClusterSetBinding`] and [`AddOnPlacementScore`] (our addition; upstream has no
//! builders for them).
//!
//! Each `build` checks the object as the hub would admit it (`validate`), so a mistake shows
//! up where the object is made, naming the field.
//!
//! ```
//! use ocm_api::cluster::builder::{AddOnPlacementScoreBuilder, PlacementBuilder, cluster_set_binding};
//!
//! let binding = cluster_set_binding("default", "apps")?;
//! assert_eq!(binding.metadata.name.as_deref(), Some("default"));
//!
//! let placement = PlacementBuilder::new("most-cpu", "apps")
//!     .cluster_sets(["default"])
//!     .number_of_clusters(1)
//!     .match_label("env", "prod")
//!     .addon_prioritizer("resource-usage-score", "cpuAvailable", 1)
//!     .build()?;
//! assert_eq!(placement.spec.number_of_clusters, Some(1));
//!
//! let score = AddOnPlacementScoreBuilder::new("resource-usage-score", "cluster1")
//!     .score("cpuAvailable", 12)
//!     .score("memAvailable", 4)
//!     .build()?;
//! assert_eq!(score.score("cpuAvailable"), Some(12));
//! # Ok::<(), ocm_api::Error>(())
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::Result;
use crate::cluster::v1alpha1::{
    AddOnPlacementScore, AddOnPlacementScoreItem, AddOnPlacementScoreStatus,
};
use crate::cluster::v1beta1::{
    AddOnScore, ClusterCelSelector, ClusterPredicate, ClusterSelector, DecisionStrategy,
    GroupStrategy, Placement, PlacementSpec, PrioritizerConfig, PrioritizerPolicy, ScoreCoordinate,
    ScoreCoordinateType, Toleration,
};
use crate::cluster::v1beta2::{ManagedClusterSetBinding, ManagedClusterSetBindingSpec};

/// A ManagedClusterSetBinding that binds the set `cluster_set` to `namespace` (the binding is
/// named after the set, as the hub requires).
pub fn cluster_set_binding(
    cluster_set: impl Into<String>,
    namespace: impl Into<String>,
) -> Result<ManagedClusterSetBinding> {
    let set = cluster_set.into();
    let binding = ManagedClusterSetBinding {
        metadata: ObjectMeta {
            name: Some(set.clone()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        spec: ManagedClusterSetBindingSpec {
            cluster_set: Some(set),
        },
        status: None,
    };
    binding.validate()?;
    Ok(binding)
}

/// Builds a [`Placement`].
#[derive(Clone, Debug)]
#[must_use]
pub struct PlacementBuilder {
    name: String,
    namespace: String,
    spec: PlacementSpec,
    labels: BTreeMap<String, String>,
}

impl PlacementBuilder {
    /// A placement `name` in `namespace` that selects every cluster of the sets bound there.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: namespace.into(),
            spec: PlacementSpec::default(),
            labels: BTreeMap::new(),
        }
    }

    /// Only clusters of these cluster sets (`spec.clusterSets`).
    pub fn cluster_sets<I, S>(mut self, sets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.spec.cluster_sets = Some(sets.into_iter().map(Into::into).collect());
        self
    }

    /// At most this many clusters (`spec.numberOfClusters`).
    pub fn number_of_clusters(mut self, n: i32) -> Self {
        self.spec.number_of_clusters = Some(n);
        self
    }

    /// Adds a predicate requiring the label `key=value` (one predicate per call; upstream ORs
    /// predicates).
    pub fn match_label(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.predicate(ClusterSelector {
            label_selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([(key.into(), value.into())])),
                match_expressions: None,
            }),
            ..ClusterSelector::default()
        })
    }

    /// Adds a predicate with CEL expressions (all must hold).
    pub fn cel<I, S>(self, expressions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.predicate(ClusterSelector {
            cel_selector: Some(ClusterCelSelector {
                cel_expressions: Some(expressions.into_iter().map(Into::into).collect()),
            }),
            ..ClusterSelector::default()
        })
    }

    /// Adds a predicate with any cluster selector.
    pub fn predicate(mut self, selector: ClusterSelector) -> Self {
        self.spec
            .predicates
            .get_or_insert_with(Vec::new)
            .push(ClusterPredicate {
                required_cluster_selector: Some(selector),
            });
        self
    }

    /// Adds an `AddOn` prioritizer reading `score_name` from the AddOnPlacementScore
    /// `resource_name`, with `weight`. The prioritizer mode stays upstream's default
    /// (`Additive`) unless [`Self::prioritizer_mode`] sets it.
    pub fn addon_prioritizer(
        self,
        resource_name: impl Into<String>,
        score_name: impl Into<String>,
        weight: i32,
    ) -> Self {
        self.prioritizer(
            ScoreCoordinate {
                type_: ScoreCoordinateType::AddOn,
                built_in: None,
                add_on: Some(AddOnScore {
                    resource_name: resource_name.into(),
                    score_name: score_name.into(),
                }),
            },
            weight,
        )
    }

    /// Adds a built-in prioritizer (`Balance`, `Steady`, `ResourceAllocatableCPU`,
    /// `ResourceAllocatableMemory`) with `weight`.
    pub fn builtin_prioritizer(self, name: impl Into<String>, weight: i32) -> Self {
        self.prioritizer(
            ScoreCoordinate {
                type_: ScoreCoordinateType::BuiltIn,
                built_in: Some(name.into()),
                add_on: None,
            },
            weight,
        )
    }

    fn prioritizer(mut self, coordinate: ScoreCoordinate, weight: i32) -> Self {
        self.spec
            .prioritizer_policy
            .get_or_insert_with(PrioritizerPolicy::default)
            .configurations
            .get_or_insert_with(Vec::new)
            .push(PrioritizerConfig {
                score_coordinate: coordinate,
                weight: Some(weight),
            });
        self
    }

    /// The prioritizer mode: `Additive` (upstream's default) or `Exact`.
    pub fn prioritizer_mode(mut self, mode: impl Into<String>) -> Self {
        self.spec
            .prioritizer_policy
            .get_or_insert_with(PrioritizerPolicy::default)
            .mode = Some(mode.into());
        self
    }

    /// Adds a toleration.
    pub fn toleration(mut self, toleration: Toleration) -> Self {
        self.spec
            .tolerations
            .get_or_insert_with(Vec::new)
            .push(toleration);
        self
    }

    /// Splits the decisions into groups of at most `n` clusters (or a percentage such as
    /// `"25%"`), `spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup`.
    pub fn clusters_per_decision_group(mut self, n: IntOrString) -> Self {
        self.spec
            .decision_strategy
            .get_or_insert_with(DecisionStrategy::default)
            .group_strategy
            .get_or_insert_with(GroupStrategy::default)
            .clusters_per_decision_group = Some(n);
        self
    }

    /// Adds a label to the placement.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the whole spec, replacing what the other methods set.
    pub fn spec(mut self, spec: PlacementSpec) -> Self {
        self.spec = spec;
        self
    }

    /// Builds the placement and checks it as the hub would.
    pub fn build(self) -> Result<Placement> {
        let placement = Placement {
            metadata: ObjectMeta {
                name: Some(self.name),
                namespace: Some(self.namespace),
                labels: (!self.labels.is_empty()).then_some(self.labels),
                ..ObjectMeta::default()
            },
            spec: self.spec,
            status: None,
        };
        placement.validate()?;
        Ok(placement)
    }
}

/// Builds an [`AddOnPlacementScore`] for one cluster.
#[derive(Clone, Debug)]
#[must_use]
pub struct AddOnPlacementScoreBuilder {
    name: String,
    cluster: String,
    scores: Vec<AddOnPlacementScoreItem>,
    valid_until: Option<Time>,
}

impl AddOnPlacementScoreBuilder {
    /// The score object `name` (a placement's `addOn.resourceName`) in the namespace of
    /// `cluster`.
    pub fn new(name: impl Into<String>, cluster: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            cluster: cluster.into(),
            scores: Vec::new(),
            valid_until: None,
        }
    }

    /// Adds (or replaces) the score `name`; it must lie in `-100..=100`.
    pub fn score(mut self, name: impl Into<String>, value: i32) -> Self {
        let name = name.into();
        self.scores.retain(|s| s.name != name);
        self.scores.push(AddOnPlacementScoreItem { name, value });
        self
    }

    /// After this time the placement scheduler ignores the scores.
    pub fn valid_until(mut self, time: jiff::Timestamp) -> Self {
        self.valid_until = Some(Time(time));
        self
    }

    /// Builds the object and checks the scores as the hub would.
    pub fn build(self) -> Result<AddOnPlacementScore> {
        let score = AddOnPlacementScore {
            metadata: ObjectMeta {
                name: Some(self.name),
                namespace: Some(self.cluster),
                ..ObjectMeta::default()
            },
            spec: Default::default(),
            status: Some(AddOnPlacementScoreStatus {
                conditions: None,
                scores: Some(self.scores),
                valid_until: self.valid_until,
            }),
        };
        score.validate()?;
        Ok(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_field() {
        let err = AddOnPlacementScoreBuilder::new("s", "c1")
            .score("cpu", 101)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("status.scores[0].value"), "{err}");
        let err = PlacementBuilder::new("p", "ns")
            .addon_prioritizer("s", "cpu", 11)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("weight"), "{err}");
        assert!(cluster_set_binding("", "ns").is_err());
    }

    #[test]
    fn placement_fields() {
        let p = PlacementBuilder::new("p", "ns")
            .cel(["cluster.metadata.labels['a'] == 'b'"])
            .builtin_prioritizer("Steady", 3)
            .prioritizer_mode("Exact")
            .clusters_per_decision_group(IntOrString::String("25%".into()))
            .label("team", "x")
            .build()
            .unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["spec"]["prioritizerPolicy"]["mode"], "Exact");
        assert_eq!(
            v["spec"]["prioritizerPolicy"]["configurations"][0]["scoreCoordinate"]["builtIn"],
            "Steady"
        );
        assert_eq!(
            v["spec"]["decisionStrategy"]["groupStrategy"]["clustersPerDecisionGroup"],
            "25%"
        );
        assert_eq!(v["metadata"]["labels"]["team"], "x");
        let replaced = AddOnPlacementScoreBuilder::new("s", "c")
            .score("a", 1)
            .score("a", 2)
            .build()
            .unwrap();
        assert_eq!(replaced.score("a"), Some(2));
    }
}
