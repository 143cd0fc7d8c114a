//! The crate's error type.

use crate::api_error::ApiError;

/// Everything that can go wrong when driving a fake cluster from Rust.
///
/// Errors that a real API server would answer with a `Status` body are carried
/// as [`Error::Api`]; the HTTP front door turns them into exactly that body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The fake API server refused the operation, as kube-apiserver would.
    #[error("{0}")]
    Api(#[from] ApiError),

    /// A loopback listener could not be bound or served.
    #[error("loopback server I/O failed: {0}")]
    Io(#[from] std::io::Error),

    /// A value could not be converted to or from JSON.
    #[error("JSON conversion failed: {0}")]
    Json(#[from] serde_json::Error),

    /// A kube client or configuration could not be built.
    #[error("kube client setup failed: {0}")]
    Kube(#[source] Box<kube::Error>),

    /// A kubeconfig could not be built or written.
    #[error("kubeconfig failed: {0}")]
    Kubeconfig(String),

    /// An identity was asked for that the cluster does not have (or authentication is off).
    #[error("authentication: {0}")]
    Identity(String),

    /// A [`Fleet`](crate::Fleet) did not become ready.
    #[error("fleet: {0}")]
    Fleet(String),

    /// A loaded document has fields the server does not know (see
    /// [`FakeCluster::apply_yaml_with`](crate::FakeCluster::apply_yaml_with)).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    UnknownFields(Vec<crate::cluster::UnknownField>),
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(Box::new(e))
    }
}

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
