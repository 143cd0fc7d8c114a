//! Kubernetes value semantics, written once for the whole SDK.
//!
//! Several parts of the SDK read the same kinds of Kubernetes values: the scheduler reads
//! quantities from `status.allocatable`, the webhooks and the label selectors check names and
//! label values, the work agent and the addon manager hash objects. Each of those rules lives
//! here, once, with the behaviour (and the error wording) of the Kubernetes code upstream OCM is
//! built with (apimachinery v0.36 at the time of writing), and every crate uses it from here.
//!
//! * [`digest`]: lower-case hex, and the hex SHA-256 and MD5 digests upstream uses for hub
//!   hashes, configuration hashes and cache keys.
//! * [`gojson`]: strings as Go's `%q` and `encoding/json` write them.
//! * [`json`]: JSON as deep as the API server takes it (10,000 levels), decoded, cloned,
//!   compared, serialised and dropped without overflowing a thread's stack.
//! * [`labels`]: label selectors, validated with the API server's messages and matched by
//!   kube-core's [`Selector`](kube::core::Selector).
//! * [`names`]: DNS-1123 labels and subdomains, label keys (qualified names) and label values,
//!   with apimachinery's messages.
//! * [`object`]: objects as an API server sends them ([`object::RawObject`]), decoded one at a
//!   time so that one object that does not decode is one failure, not a failed list.
//! * [`quantity`]: parsing resource quantities the way `resource.ParseQuantity` does, and
//!   `AsApproximateFloat64` to the last bit.
//! * [`status`]: an API server's error answer as people read it (its message, not kube's
//!   `Debug` dump of it).
//! * [`yaml`]: YAML document streams (markers, empty documents, document numbers in errors)
//!   and `List` expansion, as `kubectl apply -f` reads a file.
//!
//! The CEL library's `format` and `quantity` functions (the `cel` feature) follow the
//! kube-apiserver whose CEL environment they emulate, and keep their own wording.

pub mod digest;
pub mod gojson;
pub mod json;
pub mod labels;
pub mod names;
pub mod object;
pub mod quantity;
pub mod status;
pub mod yaml;
