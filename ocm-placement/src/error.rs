//! The error of this crate: one [`Error`] for the scheduler, the inventory functions, the
//! simulator, the decision consumer and every hub controller.
//!
//! A misconfigured placement is not an error: it is a normal outcome reported through
//! [`ScheduleStatus`](crate::ScheduleStatus) and the `PlacementMisconfigured` condition. The
//! scheduling variants are inputs upstream cannot schedule at all (its controller returns an
//! error and writes nothing in that round).
//!
//! The former per-module names ([`ControllerError`], [`ConsumerError`],
//! [`inventory::InventoryError`](crate::inventory::InventoryError) and
//! [`sim::SimError`](crate::sim::SimError)) are aliases of [`Error`], so code written against
//! them keeps compiling and can match every variant.
//!
//! ```
//! use ocm_placement::Error;
//! use ocm_placement::inventory::score::normalize;
//!
//! let error = normalize(5.0, 10.0, 1.0).unwrap_err();
//! assert!(matches!(error, Error::InvalidScore(_)));
//! assert!(error.to_string().starts_with("cannot normalise score: "));
//! ```

/// What can go wrong in this crate. Each variant says which part of the crate returns it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Scheduler: an eligible cluster set's selector could not be evaluated.
    #[error("failed to get clusters from ClusterSet {name:?}: {message}")]
    ClusterSet {
        /// The set's name.
        name: String,
        /// Why its selector is invalid.
        message: String,
    },
    /// Scheduler: the placement has no name or namespace.
    #[error("the placement has no {0}")]
    MissingPlacementMetadata(&'static str),

    /// Inventory ([`crate::inventory`]): a cluster set's label selector cannot be evaluated.
    #[error("invalid label selector: {0}")]
    InvalidSelector(String),
    /// Inventory: a cluster set's `selectorType` is one this SDK does not know (a newer OCM
    /// may add one); the message is upstream's.
    #[error("selectorType is not right: {0}")]
    UnknownSelectorType(String),
    /// Inventory: a score's bounds or value cannot be normalised.
    #[error("cannot normalise score: {0}")]
    InvalidScore(String),

    /// Simulator ([`crate::sim`]): an object in the input is malformed.
    #[error("{source_name}: {object}: {message}")]
    Object {
        /// Where the object came from (file and document).
        source_name: String,
        /// The object (`Kind namespace/name`, or its position when it has no name).
        object: String,
        /// What is wrong.
        message: String,
    },
    /// Simulator: an input could not be read, or is not valid YAML or JSON.
    #[error("{source_name}: {message}")]
    Read {
        /// The file (and, for YAML, the document and its first line).
        source_name: String,
        /// What went wrong.
        message: String,
    },

    /// Consumer ([`crate::consumer`]): the decisions of a placement could not be grouped (a
    /// bad group-index label).
    #[error("placement {placement}: {source}")]
    Decisions {
        /// `namespace/name` of the placement.
        placement: String,
        /// The grouping error.
        #[source]
        source: ocm_api::cluster::v1alpha1::RolloutError,
    },

    /// Controllers and simulator: a placement could not be scheduled at all.
    #[error("schedule placement {placement}: {source}")]
    Schedule {
        /// `namespace/name` of the placement.
        placement: String,
        /// The scheduler's error (one of the scheduler variants above).
        #[source]
        source: Box<Error>,
    },
    /// Controllers and consumer: a Kubernetes API call failed. Shown as `<action>: <the
    /// server's message>` ([`ocm_api::k8s::status::text`]), not kube's `Debug` dump of the
    /// `Status`; the kube error stays available as the source.
    #[cfg(feature = "controller")]
    #[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
    #[error("{action}: {}", describe_kube(source))]
    Kube {
        /// What was being done.
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// Controllers: several objects failed in one round; each error is kept.
    #[error("{} placements failed; first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Several(Vec<Error>),
}

impl Error {
    /// Wraps a scheduler error of `placement` (`namespace/name`) in [`Error::Schedule`].
    pub(crate) fn schedule(placement: impl Into<String>, source: Error) -> Self {
        Error::Schedule {
            placement: placement.into(),
            source: Box::new(source),
        }
    }
}

/// A kube error as people read it: an API error as the server's message.
#[cfg(feature = "controller")]
pub(crate) fn describe_kube(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => ocm_api::k8s::status::text(status),
        other => other.to_string(),
    }
}

/// Wraps a kube error with what was being done.
#[cfg(feature = "controller")]
pub(crate) fn kube_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let action = action.into();
    move |source| Error::Kube { action, source }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The hub controllers' error: an alias of [`Error`] (its [`Error::Kube`],
/// [`Error::Schedule`] and [`Error::Several`] variants).
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub type ControllerError = Error;

/// The decision consumer's error: an alias of [`Error`] (its [`Error::Decisions`] and
/// [`Error::Kube`] variants).
pub type ConsumerError = Error;

/// The inventory functions' error: an alias of [`Error`] (its [`Error::InvalidSelector`],
/// [`Error::UnknownSelectorType`] and [`Error::InvalidScore`] variants).
pub type InventoryError = Error;

/// The simulator's error: an alias of [`Error`] (its [`Error::Object`], [`Error::Read`] and
/// [`Error::Schedule`] variants).
pub type SimError = Error;
