//! Injectable time source for timestamps written by the fake API server.

use jiff::Timestamp;

pub use ocm_api::clock::{Clock, ManualClock, SystemClock};

/// Format an instant the way Kubernetes writes `metav1.Time` (RFC 3339, whole seconds, UTC).
pub(crate) fn format_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
