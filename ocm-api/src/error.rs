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
