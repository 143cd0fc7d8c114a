//! The crate's error type.
//!
//! The `Display` texts of the feedback variants are upstream OCM's, word for word, because they
//! end up in the `StatusFeedbackSynced` condition message.

use crate::jsonpath::{EvalError, ParseError};

/// Errors of status feedback evaluation.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `WellKnownStatus` rule was applied to a kind that has no well-known values.
    /// `gvk` is rendered as Go does: `apps/v1, Kind=Deployment`, `/v1, Kind=ServiceAccount`.
    #[error("cannot find the wellknown statuses for resource with gvk {gvk}")]
    UnknownWellKnownKind {
        /// The resource's group, version and kind, Go-formatted.
        gvk: String,
    },
    /// A rule's `type` is one this SDK does not know (a newer OCM may send one); upstream's
    /// agent reads nothing for such a rule and reports no error.
    #[error("unrecognized feedback rule type {type_}")]
    UnknownRuleType {
        /// The type as written in the rule.
        type_: String,
    },
    /// A JSONPath names a `version` other than the resource's.
    #[error("version set in the path {name} is not matched for the related resource")]
    VersionMismatch {
        /// The name of the JSONPath.
        name: String,
    },
    /// A feedback path does not parse.
    #[error("failed to parse json path {path} of {name} with error: {}", source.message())]
    Parse {
        /// The name of the JSONPath.
        name: String,
        /// The path as written.
        path: String,
        /// What is wrong with it, and where.
        #[source]
        source: ParseError,
    },
    /// Evaluating a feedback path failed (index out of range, filter on a non-list, …).
    #[error("failed to find value for {name} with error: {source}")]
    Eval {
        /// The name of the JSONPath.
        name: String,
        /// The evaluation error.
        #[source]
        source: EvalError,
    },
    /// The value found is not an integer, string or boolean, and the `RawFeedbackJsonString`
    /// gate is off.
    #[error("the type {go_type} of the value for {name} is not found")]
    UnsupportedType {
        /// The name of the JSONPath.
        name: String,
        /// Go's name of the value's type, e.g. `float64` or `map[string]interface {}`.
        go_type: &'static str,
    },
    /// The JSON encoding of a value is longer than the configured maximum.
    #[error(
        "the length of returned json raw string for name {name} is larger than the maximum length {max}"
    )]
    JsonRawTooLong {
        /// The name of the JSONPath.
        name: String,
        /// The maximum length in bytes.
        max: usize,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
