//! An API server's error answer (`metav1.Status`) as people read it.
//!
//! kube's `Display` of an API error (`kube::Error::Api`) appends a `Debug` dump of the whole
//! `Status` (`Status { status: Some(Failure), code: 403, … }`), which is not fit for a condition
//! message, an Event or a log line. [`text`] gives what Go's `StatusError.Error()` gives
//! upstream's controllers instead: the server's message.
//!
//! ```
//! use kube::core::Status;
//! use ocm_api::k8s::status;
//!
//! let forbidden = Status::failure(
//!     r#"manifestworks.work.open-cluster-management.io "w" is forbidden: User "u" cannot create resource "manifestworks""#,
//!     "Forbidden",
//! )
//! .with_code(403);
//! assert_eq!(
//!     status::text(&forbidden),
//!     r#"manifestworks.work.open-cluster-management.io "w" is forbidden: User "u" cannot create resource "manifestworks""#
//! );
//! // A Status without a message says what there is.
//! assert_eq!(status::text(&Status::failure("", "Conflict").with_code(409)), "Conflict (HTTP 409)");
//! assert_eq!(status::text(&Status::failure("", "").with_code(500)), "the server answered HTTP 500");
//! ```

use kube::core::Status;

/// The server's message; without one, its reason and HTTP code (see the [module docs](self)).
pub fn text(status: &Status) -> String {
    match (status.message.is_empty(), status.reason.is_empty()) {
        (false, _) => status.message.clone(),
        (true, false) => format!("{} (HTTP {})", status.reason, status.code),
        (true, true) => format!("the server answered HTTP {}", status.code),
    }
}
