//! Errors of this crate.

/// What can go wrong when scheduling a placement.
///
/// A misconfigured placement is not an error: it is a normal outcome reported through
/// [`ScheduleStatus`](crate::ScheduleStatus) and the `PlacementMisconfigured` condition. Errors
/// are inputs upstream cannot schedule at all (its controller returns an error and writes
/// nothing in that round).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `spec.numberOfClusters` is negative (upstream panics on it).
    #[error("spec.numberOfClusters must not be negative, got {0}")]
    NegativeNumberOfClusters(i32),
    /// An eligible cluster set's selector could not be evaluated.
    #[error("failed to get clusters from ClusterSet {name:?}: {message}")]
    ClusterSet {
        /// The set's name.
        name: String,
        /// Why its selector is invalid.
        message: String,
    },
    /// The placement has no name or namespace.
    #[error("the placement has no {0}")]
    MissingPlacementMetadata(&'static str),
}

/// What can go wrong in the hub controllers of this crate (placement, inventory, SIG
/// outputs, ClusterProfiles, score writer, cluster lease): the shared error of the crate's
/// I/O shell.
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControllerError {
    /// A Kubernetes API call failed.
    #[error("{action}: {source}")]
    Kube {
        /// What was being done.
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// Scheduling a placement failed.
    #[error("schedule placement {placement}: {source}")]
    Schedule {
        /// `namespace/name` of the placement.
        placement: String,
        /// The scheduler's error.
        #[source]
        source: crate::Error,
    },
    /// Several placements failed; each error is kept.
    #[error("{} placements failed; first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Several(Vec<ControllerError>),
}

/// Wraps a kube error with what was being done.
#[cfg(feature = "controller")]
pub(crate) fn kube_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> ControllerError {
    let action = action.into();
    move |source| ControllerError::Kube { action, source }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the inventory's pure functions ([`crate::inventory`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InventoryError {
    /// A cluster set's label selector cannot be evaluated.
    #[error("invalid label selector: {0}")]
    InvalidSelector(String),
    /// A cluster set's `selectorType` is one this SDK does not know (a newer OCM may add
    /// one); the message is upstream's.
    #[error("selectorType is not right: {0}")]
    UnknownSelectorType(String),
    /// A score's bounds or value cannot be normalised.
    #[error("cannot normalise score: {0}")]
    InvalidScore(String),
}

/// What can go wrong reading simulator input or scheduling it ([`crate::sim`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// An object in the input is malformed.
    #[error("{source_name}: {object}: {message}")]
    Object {
        /// Where the object came from (file and document).
        source_name: String,
        /// The object (`Kind namespace/name`, or its position when it has no name).
        object: String,
        /// What is wrong.
        message: String,
    },
    /// An input could not be read, or is not valid YAML or JSON.
    #[error("{source_name}: {message}")]
    Read {
        /// The file (and, for YAML, the document and its first line).
        source_name: String,
        /// What went wrong.
        message: String,
    },
    /// A placement could not be scheduled at all.
    #[error("schedule Placement {placement}: {source}")]
    Schedule {
        /// `namespace/name`.
        placement: String,
        /// The scheduler's error.
        #[source]
        source: crate::Error,
    },
}

/// What can go wrong reading a placement's decisions ([`crate::consumer`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConsumerError {
    /// The decisions of a placement could not be grouped (a bad group-index label).
    #[error("placement {placement}: {source}")]
    Decisions {
        /// `namespace/name` of the placement.
        placement: String,
        /// The grouping error.
        #[source]
        source: crate::rollout::RolloutError,
    },
    /// A Kubernetes API call failed.
    #[cfg(feature = "controller")]
    #[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
    #[error("{action}: {source}")]
    Kube {
        /// What was being done.
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
}
