//! The error type of `ocm-work`.

use ocm_api::cluster::v1alpha1::RolloutError;

/// Everything that can go wrong in `ocm-work`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Kubernetes API call failed. Shown as `<action>: <the server's message>` (see
    /// [`crate::api_errors::describe`]); the kube error stays available as the source.
    #[error("{action}: {}", crate::api_errors::describe(source))]
    Kube {
        /// What was being done, e.g. `create ManifestWork cluster1/mwrs-x`.
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },

    /// A rollout could not be computed for a placement.
    #[error("placement {placement}: {source}")]
    Rollout {
        /// `namespace/name` of the placement.
        placement: String,
        /// The rollout engine's error.
        #[source]
        source: RolloutError,
    },

    /// An object is not usable as it is (for example it has no name).
    #[error("{object}: {message}")]
    InvalidObject {
        /// Kind and name of the object.
        object: String,
        /// What is wrong.
        message: String,
    },

    /// An object on an API server does not decode as the type the agent expects (a field or
    /// enum value from a newer release, a changed schema, a label that is not a string). Only
    /// that object is skipped; everything else is still handled.
    #[error("{kind} {object} cannot be decoded: {message}")]
    Undecodable {
        /// The object's kind.
        kind: String,
        /// `namespace/name` (or `name` when cluster-scoped).
        object: String,
        /// The decode error, naming the field at fault.
        message: String,
    },

    /// A value could not be serialised.
    #[error("cannot serialize {what}: {source}")]
    Serialize {
        /// What was being serialised.
        what: String,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },

    /// A ManifestWorkReplicaSet template variable cannot be resolved for a cluster (the
    /// per-cluster values opt-in, `replicaset::values`): it is malformed, or names a label or
    /// claim the cluster does not have.
    #[error("cluster {cluster}: {variable} in {location}: {problem}")]
    ClusterValue {
        /// The cluster's name.
        cluster: String,
        /// The variable as written, e.g. `{{CLUSTER_LABEL:region}}`.
        variable: String,
        /// Where it is: the manifest (index, kind and name) and the JSON path in it.
        location: String,
        /// What is wrong.
        problem: String,
    },

    /// A step failed; `context` names it in upstream's words (for example `failed to delete
    /// manifestwork cluster1/w for removed placement`), `source` is the failure.
    #[error("{context}: {source}")]
    Context {
        /// What was being done, as upstream says it.
        context: String,
        /// The failure.
        #[source]
        source: Box<Error>,
    },

    /// Several independent steps failed; each error is kept.
    #[error("{}", join(.0))]
    Aggregate(Vec<Error>),

    /// Settings that cannot work (for example leader election durations in the wrong order).
    #[error("{0}")]
    Config(String),

    /// A server (health and metrics endpoints) could not start or failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn join(errors: &[Error]) -> String {
    match errors {
        [one] => one.to_string(),
        many => format!(
            "[{}]",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

// Not every feature set uses both helpers.
#[cfg_attr(not(all(feature = "agent", feature = "hub")), allow(dead_code))]
impl Error {
    /// Wraps a kube error with what was being done.
    pub(crate) fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Self::Kube {
            action: action.into(),
            source,
        }
    }

    /// The error as upstream's Go code words it: an API error is the server's message alone
    /// (Go's `StatusError`), a rollout error the rollout engine's message. Everything else is
    /// its `Display`.
    #[cfg(feature = "hub")]
    fn go_text(&self) -> String {
        match self {
            Self::Kube { source, .. } => crate::api_errors::describe(source),
            Self::Rollout { source, .. } => source.to_string(),
            Self::Context { context, source } => format!("{context}: {}", source.go_text()),
            other => other.to_string(),
        }
    }

    /// `errors` joined as Go's `utilerrors.NewAggregate(errs).Error()` joins them: nested
    /// aggregates flattened, repeated messages kept once, one message bare and several as
    /// `[first, second]`. The text upstream puts in a condition's message.
    #[cfg(feature = "hub")]
    pub(crate) fn go_aggregate_text(errors: &[Error]) -> String {
        fn visit<'a>(errors: &'a [Error], out: &mut Vec<&'a Error>) {
            for error in errors {
                match error {
                    Error::Aggregate(inner) => visit(inner, out),
                    one => out.push(one),
                }
            }
        }
        let mut flat = Vec::new();
        visit(errors, &mut flat);
        let mut seen: Vec<String> = Vec::new();
        for error in flat {
            let text = error.go_text();
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        match seen.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        }
    }

    /// `Ok(())` for no errors, the error for one, an [`Error::Aggregate`] for several.
    pub(crate) fn aggregate(mut errors: Vec<Error>) -> Result<()> {
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(Self::Aggregate(errors)),
        }
    }
}

/// The result type of `ocm-work`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The condition text follows Go's error aggregate: API errors as the server's message
    /// alone, nested lists flattened, repeats said once, one message bare, several bracketed.
    #[cfg(feature = "hub")]
    #[test]
    fn go_aggregate_text_reads_as_upstreams_condition_message() {
        let refused = |name: &str| {
            let status = kube::core::Status::failure(
                &format!("admission webhook \"w\" denied the request: {name}"),
                "BadRequest",
            )
            .with_code(400);
            Error::kube(
                format!("create ManifestWork c/{name}"),
                kube::Error::Api(Box::new(status)),
            )
        };
        assert_eq!(Error::go_aggregate_text(&[]), "");
        assert_eq!(
            Error::go_aggregate_text(&[refused("a")]),
            "admission webhook \"w\" denied the request: a"
        );
        assert_eq!(
            Error::go_aggregate_text(&[refused("a"), refused("a")]),
            "admission webhook \"w\" denied the request: a"
        );
        assert_eq!(
            Error::go_aggregate_text(&[
                refused("a"),
                Error::Aggregate(vec![refused("b"), refused("a")]),
                Error::Config("bad".into()),
            ]),
            "[admission webhook \"w\" denied the request: a, \
             admission webhook \"w\" denied the request: b, bad]"
        );
        let stale = Error::Context {
            context: "failed to delete manifestwork c/w for removed placement".into(),
            source: Box::new(refused("w")),
        };
        assert_eq!(
            Error::go_aggregate_text(&[stale]),
            "failed to delete manifestwork c/w for removed placement: \
             admission webhook \"w\" denied the request: w"
        );
    }

    /// An API error shows as what was being done and the server's message: not kube's
    /// `Display`, which ends in a `Debug` dump of the whole `Status`.
    #[test]
    fn kube_errors_show_the_servers_message() {
        let status = kube::core::Status::failure(
            r#"manifestworks.work.open-cluster-management.io "w" is forbidden: User "u" cannot create resource "manifestworks""#,
            "Forbidden",
        )
        .with_code(403);
        let error = Error::kube(
            "create ManifestWork cluster1/w",
            kube::Error::Api(Box::new(status)),
        );
        assert_eq!(
            error.to_string(),
            r#"create ManifestWork cluster1/w: manifestworks.work.open-cluster-management.io "w" is forbidden: User "u" cannot create resource "manifestworks""#
        );
        assert!(
            std::error::Error::source(&error).is_some(),
            "the kube error stays the source"
        );
    }
}
