//! Classifying Kubernetes API errors, like client-go's `apierrors.IsNotFound` and friends.
//!
//! ```
//! use ocm_work::api_errors::{is_not_found, reason};
//!
//! let status = kube::core::Status::failure("configmaps \"x\" not found", "NotFound").with_code(404);
//! let err = kube::Error::Api(Box::new(status));
//! assert!(is_not_found(&err));
//! assert_eq!(reason(&err), Some("NotFound"));
//! ```

/// `error` as people read it: an API error as the server's message (as Go's
/// `StatusError.Error()` gives it to upstream's controllers; see [`ocm_api::k8s::status`]),
/// never kube's `Debug` dump of the `Status`; any other error as kube displays it. The crate's
/// [`Error`](crate::Error) shows kube errors this way, and so does everything it writes into
/// conditions and Events.
///
/// ```
/// let status = kube::core::Status::failure(r#"namespaces "x" not found"#, "NotFound").with_code(404);
/// let err = kube::Error::Api(Box::new(status));
/// assert_eq!(ocm_work::api_errors::describe(&err), r#"namespaces "x" not found"#);
/// assert!(!err.to_string().starts_with("namespaces")); // kube's own Display: "ApiError: … (Status { … })"
/// ```
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => ocm_api::k8s::status::text(status),
        other => other.to_string(),
    }
}

/// The `reason` of an API error (`NotFound`, `AlreadyExists`, `Conflict`, …), if the error came
/// from the API server.
pub fn reason(error: &kube::Error) -> Option<&str> {
    match error {
        kube::Error::Api(status) => Some(status.reason.as_str()),
        _ => None,
    }
}

fn code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// The object (or its kind) does not exist: HTTP 404 or reason `NotFound`.
pub fn is_not_found(error: &kube::Error) -> bool {
    code(error) == Some(404) || reason(error) == Some("NotFound")
}

/// The object already exists (a create lost a race): HTTP 409 with reason `AlreadyExists`.
pub fn is_already_exists(error: &kube::Error) -> bool {
    reason(error) == Some("AlreadyExists")
}

/// The write was based on an outdated resourceVersion: HTTP 409 with reason `Conflict`.
pub fn is_conflict(error: &kube::Error) -> bool {
    reason(error) == Some("Conflict")
}

/// The request was refused by authorization: HTTP 403 or reason `Forbidden`.
pub fn is_forbidden(error: &kube::Error) -> bool {
    code(error) == Some(403) || reason(error) == Some("Forbidden")
}

/// The object is invalid: HTTP 422 or reason `Invalid`.
pub fn is_invalid(error: &kube::Error) -> bool {
    code(error) == Some(422) || reason(error) == Some("Invalid")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure("m", reason).with_code(code),
        ))
    }

    #[test]
    fn classifies_by_code_and_reason() {
        assert!(is_not_found(&api(404, "")));
        assert!(is_already_exists(&api(409, "AlreadyExists")));
        assert!(!is_conflict(&api(409, "AlreadyExists")));
        assert!(is_conflict(&api(409, "Conflict")));
        assert!(is_forbidden(&api(403, "")));
        assert!(is_invalid(&api(422, "")));
        assert!(!is_not_found(&api(500, "InternalError")));
    }
}
