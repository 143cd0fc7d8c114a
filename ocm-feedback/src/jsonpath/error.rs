//! Errors of the JSONPath parser and evaluator.
//!
//! The `Display` text of [`EvalError`] and [`ParseError::message`] are the texts
//! `k8s.io/client-go/util/jsonpath` produces, because OCM puts them into condition messages.

/// A JSONPath template could not be parsed.
///
/// [`message`](Self::message) is client-go's error text; the `Display` form adds where the
/// problem is: the byte offset into the template and the offending token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at byte {position}, near {token:?})")]
pub struct ParseError {
    message: String,
    position: usize,
    token: String,
}

impl ParseError {
    pub(crate) fn new(
        message: impl Into<String>,
        position: usize,
        token: impl Into<String>,
    ) -> Self {
        Self {
            message: message.into(),
            position,
            token: token.into(),
        }
    }

    /// The error text exactly as client-go (and so kubectl and OCM) words it, for example
    /// `unrecognized character in action: U+0026 '&'`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Byte offset in the template where the offending token starts.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The offending token (empty when the template ended too early).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Re-bases the position of an error found while parsing a piece of the template that
    /// the parser rebuilt (a union member, a quoted key, a filter operand).
    pub(crate) fn shifted(mut self, origin: usize, prefix: usize, limit: usize) -> Self {
        self.position = (origin + self.position.saturating_sub(prefix)).min(limit);
        self
    }
}

/// Evaluating a parsed JSONPath against a document failed.
///
/// These are the cases where kubectl fails instead of printing nothing. The `Display` texts are
/// client-go's.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An index or slice bound lies outside the list.
    #[error("array index out of bounds: index {index}, length {length}")]
    IndexOutOfBounds {
        /// The offending index (for an end bound, the last index it would select).
        index: i64,
        /// The length of the list.
        length: usize,
    },
    /// A slice starts after it ends.
    #[error("starting index {start} is greater than ending index {end}")]
    StartAfterEnd {
        /// The resolved start index.
        start: i64,
        /// The resolved end index.
        end: i64,
    },
    /// A slice step of zero or less.
    #[error("step must be > 0")]
    StepNotPositive,
    /// An index or slice was applied to something that is not a list.
    #[error("{go_type} is not array or slice")]
    NotAList {
        /// The Go type name of the value, e.g. `map[string]interface {}`.
        go_type: &'static str,
    },
    /// A filter was applied to something that is not a list.
    #[error("{value} is not array or slice and cannot be filtered")]
    NotFilterable {
        /// The value as Go's `%v` prints it.
        value: String,
    },
    /// A filter operand selected more than one value.
    #[error("can only compare one element at a time")]
    AmbiguousOperand,
    /// A filter compared values of different types (for example a string and a number, or an
    /// integer and a float).
    #[error("incompatible types for comparison")]
    IncompatibleTypes,
    /// A filter compared a value that cannot be compared (null, object, list), or ordered
    /// booleans.
    #[error("invalid type for comparison")]
    InvalidComparisonType,
    /// A filter operator made of `!<>=` characters that is none of the six operators.
    #[error("unrecognized filter operator {0}")]
    UnknownOperator(String),
    /// A bare word other than `range`, `end`, `true` or `false`.
    #[error("unrecognized identifier {0}")]
    UnknownIdentifier(String),
    /// `end` outside a `range`.
    #[error("not in range, nothing to end")]
    EndWithoutRange,
    /// A key was missing and missing keys are not allowed.
    #[error("{0} is not found")]
    KeyNotFound(String),
    /// An index, slice or filter was applied to the null value `range` yields for a JSON null.
    /// kubectl panics here; this crate reports an error instead.
    #[error("reflect: call of reflect.Value.Type on zero Value")]
    NilValue,
    /// The template nests `range` blocks deeper than this crate allows.
    #[error("range blocks nested too deeply")]
    TooDeep,
}
