//! What is checked on the way in: decoding request bodies, admission (defaulting, pruning,
//! the order of the steps), built-in kinds' validation, CRD schema and CEL rules, unknown
//! fields, the OCM hub's webhooks, authentication and RBAC.
//!
//! | file | what |
//! |---|---|
//! | `decode.rs` | request bodies (JSON, YAML) and Go's decode errors |
//! | `admission.rs` | the steps of a write, in order; CRD defaulting and pruning |
//! | `kinds/` | built-in kinds: defaults, strategies and validation (`kinds/meta.rs`: object metadata) |
//! | `custom.rs`, `format.rs`, `rules.rs` | custom resources against their CRD schema, string formats, CEL rules |
//! | [`field_validation`] | unknown and duplicate fields |
//! | [`webhook`] | the OCM hub's admission webhooks |
//! | [`auth`], `rbac.rs` | authentication, and authorization from RBAC objects |

pub(crate) mod admission;
pub mod auth;
pub(crate) mod custom;
pub(crate) mod decode;
pub mod field_validation;
pub(crate) mod format;
pub(crate) mod kinds;
pub(crate) mod rbac;
pub(crate) mod rules;
pub mod webhook;
