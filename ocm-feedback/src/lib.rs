//! Kubernetes JSONPath and OCM ManifestWork status feedback, with kubectl's results.
//!
//! The OCM work agent reports values read from applied resources back to the hub ("status
//! feedback"). Users write the paths the way they test them, with `kubectl -o jsonpath`, so
//! this crate evaluates them exactly as kubectl does, and applies upstream OCM's rules on top:
//!
//! * [`jsonpath`]: the Kubernetes JSONPath dialect (templates, `range`/`end`, escaped dots,
//!   filters, slices, unions, recursive descent) with kubectl's values, ordering, output
//!   format and errors.
//! * [`FeedbackReader`]: `WellKnownStatus` and `JSONPaths` rules, typing of values to
//!   `Integer`/`String`/`Boolean` (and `JsonRaw` behind the `RawFeedbackJsonString` gate), the
//!   `StatusFeedbackSynced` condition, partial results when some rules fail.
//! * [`FeedbackTracker`]: reports values only when they changed since the last sync, and
//!   [`Feedback::apply_to`], which writes an outcome into a manifest's status entry with
//!   upstream's transition-time rule.
//! * [`lookup`] (our addition): reading the feedback of one resource back from a
//!   ManifestWork's status.
//!
//! Rules go in and [`StatusFeedbackResult`](ocm_api::work::v1::StatusFeedbackResult)s come out,
//! as `ocm_api` types. Nothing here does I/O: the caller fetches the live object.
//!
//! # Example
//!
//! ```
//! use ocm_api::work::v1::{FeedbackRule, FieldValue, JsonPath};
//! use ocm_feedback::{CompiledRules, FeedbackReader, FeedbackTracker};
//!
//! let deployment = serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web"}},
//!     "status": {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2,
//!                "conditions": [{"type": "Available", "status": "True"}]}
//! });
//! let rules = CompiledRules::new(&[
//!     FeedbackRule::well_known_status(),
//!     FeedbackRule::json_paths([
//!         JsonPath::new("available", r#".status.conditions[?(@.type=="Available")].status"#),
//!         JsonPath::new("app", r".metadata.labels.app\.kubernetes\.io/name"),
//!     ]),
//! ]);
//!
//! let feedback = FeedbackReader::new().read_compiled(&deployment, &rules);
//! let result = feedback.to_result();
//! assert_eq!(result.get("ReadyReplicas"), Some(&FieldValue::integer(2)));
//! assert_eq!(result.get("available"), Some(&FieldValue::string("True")));
//! assert_eq!(result.get("app"), Some(&FieldValue::string("web")));
//! assert_eq!(feedback.condition().reason, "StatusFeedbackSynced");
//!
//! // Only changed values need to be written back.
//! let mut tracker = FeedbackTracker::<String>::new();
//! assert!(tracker.record("cluster1/web-work/0", feedback.values().to_vec()).is_some());
//! assert!(tracker.record("cluster1/web-work/0", feedback.values().to_vec()).is_none());
//! ```
//!
//! # Fidelity
//!
//! Upstream-exact: the JSONPath dialect and its error texts (client-go's), the well-known
//! table (four kinds), value typing, the error messages, the aggregate condition message and
//! the condition reasons. Our additions: parse errors also carry a byte position and the
//! offending token ([`jsonpath::ParseError`]); paths are parsed once ([`CompiledRules`]);
//! the well-known table can be extended ([`WellKnownStatusTable::insert`]). Where the
//! JSONPath evaluator can differ from kubectl is listed in [`jsonpath`].
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod error;
pub mod jsonpath;
pub mod lookup;
mod rules;
mod tracker;
mod value;
mod wellknown;

pub use error::{Error, Result};
pub use rules::{CompiledRules, Feedback, FeedbackReader};
pub use tracker::{FeedbackTracker, values_changed};
pub use value::{ValueOptions, type_value};
pub use wellknown::{
    FeedbackPath, GroupVersionKind, WellKnownStatusResolver, WellKnownStatusTable,
};
