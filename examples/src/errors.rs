//! Error messages as a kubectl user reads them.
//!
//! `kube::Error`'s own `Display` for an API error includes a `Debug` dump of the `Status`.
//! [`describe`] prints what kubectl prints instead: `Error from server (NotFound):
//! manifestworks.work.open-cluster-management.io "w1" not found`, and for other errors the
//! error with its chain of causes.

/// The message kubectl would print for `error`.
///
/// ```
/// use kube::core::Status;
///
/// let status = Status::failure(r#"placements.cluster.open-cluster-management.io "p" not found"#, "NotFound")
///     .with_code(404);
/// let error = kube::Error::Api(Box::new(status));
/// assert_eq!(
///     ocm_examples::errors::describe(&error),
///     r#"Error from server (NotFound): placements.cluster.open-cluster-management.io "p" not found"#
/// );
/// ```
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => api_status(status),
        other => with_causes(other),
    }
}

/// `Error from server (<reason>): <message>`, as kubectl prints an API `Status`.
pub fn api_status(status: &kube::core::Status) -> String {
    let message = if status.message.is_empty() {
        format!("the server responded with status {}", status.code)
    } else {
        status.message.clone()
    };
    if status.reason.is_empty() {
        format!("Error from server: {message}")
    } else {
        format!("Error from server ({}): {message}", status.reason)
    }
}

/// `error` followed by each of its causes, `: `-separated, skipping a cause whose text the
/// previous message already contains.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// Whether `error` is an API error with HTTP status `code`.
pub fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_read_like_kubectl() {
        let status = kube::core::Status::failure("boom", "").with_code(500);
        assert_eq!(
            describe(&kube::Error::Api(Box::new(status))),
            "Error from server: boom"
        );
        let empty = kube::core::Status::failure("", "Forbidden").with_code(403);
        assert_eq!(
            api_status(&empty),
            "Error from server (Forbidden): the server responded with status 403"
        );
    }

    #[test]
    fn other_errors_carry_their_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = kube::Error::Service(Box::new(io));
        let text = describe(&error);
        assert!(text.contains("refused"), "{text}");
        assert!(!text.contains("Status {"), "{text}");
    }
}
