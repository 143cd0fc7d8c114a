//! The error type of `ocm-api`.

use std::path::PathBuf;

use crate::validation::FieldErrors;

/// Everything that can go wrong in `ocm-api`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An object failed validation; every offending field is listed.
    #[error("{kind} {name:?} is invalid: {errors}")]
    Invalid {
        /// Kind of the object, e.g. `ManifestWork`.
        kind: String,
        /// Name of the object (may be empty when the object has none yet).
        name: String,
        /// The fields at fault.
        errors: FieldErrors,
    },

    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A YAML or JSON document could not be parsed.
    #[error("{source_name}: document {document}: {message}")]
    Parse {
        /// The file (or other source) the document came from.
        source_name: String,
        /// 1-based index of the document within the source.
        document: usize,
        /// What the parser said.
        message: String,
    },

    /// A document parsed, but is not a Kubernetes object (for example it lacks `kind`).
    #[error("{source_name}: document {document}: {message}")]
    NotAnObject {
        /// The file (or other source) the document came from.
        source_name: String,
        /// 1-based index of the document within the source.
        document: usize,
        /// What is missing or wrong.
        message: String,
    },

    /// A label selector is not valid; the message is the API server's.
    #[error("{message}")]
    InvalidLabelSelector {
        /// What is wrong, in apimachinery's words.
        message: String,
    },

    /// A string is not a Kubernetes resource quantity.
    #[error("quantity {value:?}: {reason}")]
    Quantity {
        /// The string as given.
        value: String,
        /// Why it is refused; its `Display` is Kubernetes' message.
        reason: crate::k8s::quantity::QuantityReason,
    },

    /// A value could not be serialised.
    #[error("cannot serialize {what}: {source}")]
    Serialize {
        /// What was being serialised.
        what: String,
        /// The serialiser's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The per-version CRDs of one kind could not be merged.
    #[error("cannot merge the versions of CRD {name}: {message}")]
    CrdMerge {
        /// The CRD name.
        name: String,
        /// What kube's merge reported.
        message: String,
    },
    /// A manifest has no kind or version, so it cannot be placed in a work.
    #[error("manifest {index}: {message}")]
    ManifestKey {
        /// 0-based index of the manifest.
        index: usize,
        /// What is missing.
        message: String,
    },

    /// One manifest alone is larger than a ManifestWork may be.
    #[error(
        "manifest {manifest} is {size} bytes, more than the {limit}-byte limit of one ManifestWork"
    )]
    ManifestTooLarge {
        /// `apiVersion kind namespace/name` of the manifest.
        manifest: String,
        /// Its size in bytes, as the hub measures it.
        size: usize,
        /// The limit.
        limit: usize,
    },
}

/// The result type of `ocm-api`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One problem of a CEL expression and where it is (see [`CompileError`]).
#[cfg(feature = "cel")]
#[cfg_attr(docsrs, doc(cfg(feature = "cel")))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CelIssue {
    /// 1-based line, or -1 when the problem has no location (cel-go's `NoLocation`).
    pub line: i64,
    /// 1-based column in code points, or 0 when the problem has no location.
    pub column: i64,
    /// What is wrong, e.g. `Syntax error: mismatched input '<EOF>' expecting …`.
    pub message: String,
}

/// A CEL expression that does not compile: its syntax errors, or a limit it exceeds.
///
/// It displays as cel-go does: one `ERROR: <input>:LINE:COLUMN: message` line per issue
/// (sorted by position, at most 100, then `N more errors were truncated`), each followed by
/// the source line and a caret line under the column, ` | `-prefixed. Issues without a
/// location show as `ERROR: <input>:-1:0: …` without source lines, and source lines longer
/// than 16,384 bytes are left out, as cel-go leaves them out.
#[cfg(feature = "cel")]
#[cfg_attr(docsrs, doc(cfg(feature = "cel")))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    source: std::sync::Arc<str>,
    issues: Vec<CelIssue>,
    /// Issues beyond the reported ones.
    truncated: usize,
}

#[cfg(feature = "cel")]
impl CompileError {
    /// Most issues reported (cel-go's `maxErrorsToReport`).
    pub const MAX_ISSUES: usize = 100;
    /// Longest source line shown under an issue, in bytes (cel-go's `maxSnippetLength`).
    pub const MAX_SNIPPET: usize = 16_384;

    pub(crate) fn new(source: std::sync::Arc<str>, mut issues: Vec<CelIssue>, more: usize) -> Self {
        issues.sort_by_key(|i| (i.line, i.column));
        let truncated = more + issues.len().saturating_sub(Self::MAX_ISSUES);
        issues.truncate(Self::MAX_ISSUES);
        CompileError {
            source,
            issues,
            truncated,
        }
    }

    /// An issue without location (a limit the whole expression exceeds).
    pub(crate) fn unlocated(source: std::sync::Arc<str>, message: String) -> Self {
        Self::new(
            source,
            vec![CelIssue {
                line: -1,
                column: 0,
                message,
            }],
            0,
        )
    }

    /// The errors of the `cel` crate's parser.
    pub(crate) fn from_parse(source: std::sync::Arc<str>, errors: ::cel::ParseErrors) -> Self {
        let issues = errors
            .errors
            .into_iter()
            .map(|e| {
                // An error without a position is an internal one of the parser, whose text is
                // then in its source.
                let message = match (&e.source, e.msg.as_str()) {
                    (Some(inner), "UNKNOWN") => inner.to_string(),
                    _ => e.msg,
                };
                let (line, column) = if e.pos.0 >= 1 && e.pos.1 >= 1 {
                    (e.pos.0 as i64, e.pos.1 as i64)
                } else {
                    (-1, 0)
                };
                CelIssue {
                    line,
                    column,
                    message,
                }
            })
            .collect();
        Self::new(source, issues, 0)
    }

    /// The issues, sorted by position.
    pub fn issues(&self) -> &[CelIssue] {
        &self.issues
    }

    /// The expression that failed.
    pub fn source(&self) -> &str {
        &self.source
    }
}

#[cfg(feature = "cel")]
impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, issue) in self.issues.iter().enumerate() {
            if n > 0 {
                f.write_str("\n")?;
            }
            write!(
                f,
                "ERROR: <input>:{}:{}: {}",
                issue.line, issue.column, issue.message
            )?;
            let snippet = usize::try_from(issue.line - 1)
                .ok()
                .and_then(|l| self.source.split('\n').nth(l))
                .map(|l| l.strip_suffix('\r').unwrap_or(l));
            if let Some(snippet) = snippet.filter(|s| s.len() <= Self::MAX_SNIPPET) {
                let snippet = snippet.replace('\t', " ");
                write!(f, "\n | {snippet}\n | ")?;
                let mut chars = snippet.chars();
                for _ in 1..issue.column {
                    match chars.next() {
                        Some(c) if c.len_utf8() > 1 => f.write_str("\u{ff0e}")?,
                        Some(_) => f.write_str(".")?,
                        None => break,
                    }
                }
                match chars.next() {
                    Some(c) if c.len_utf8() > 1 => f.write_str("\u{ff3e}")?,
                    _ => f.write_str("^")?,
                }
            }
        }
        if self.truncated > 0 {
            write!(f, "\n{} more errors were truncated", self.truncated)?;
        }
        Ok(())
    }
}

#[cfg(feature = "cel")]
impl std::error::Error for CompileError {}

/// A CEL evaluation that failed or ran out of cost (see [`crate::cel::Budget`]).
#[cfg(feature = "cel")]
#[cfg_attr(docsrs, doc(cfg(feature = "cel")))]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// What the expression failed with (a missing key, no matching overload, …), displayed
    /// in cel-go's words ([`crate::cel::runtime_message`]).
    #[error("{}", crate::cel::runtime_message(.0))]
    Execution(#[source] ::cel::ExecutionError),
    /// The evaluation passed the per-evaluation cost limit (cel-go's `CostLimit`, upstream's
    /// `PerCallLimit`); cel-go's message.
    #[error("operation cancelled: actual cost limit exceeded")]
    CostLimit,
    /// The evaluation passed what was left of its budget (upstream's `RuntimeCELCostBudget`);
    /// upstream's message.
    #[error("CEL evaluation budget exceeded")]
    BudgetExceeded,
}
