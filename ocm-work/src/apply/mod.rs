//! Planning how one manifest is applied: the pure half of the update strategies.
//!
//! The I/O half (reading the live object, writing the result) lives with the agent; here are
//! the decisions upstream's appliers make, as functions of the required manifest and the live
//! object:
//!
//! * [`metadata`]: label and annotation merging with `key-` removal instructions, and the
//!   clean-up done before a create;
//! * [`update`]: the `Update` strategy: create, leave alone, or replace;
//! * [`hash`]: the configuration hash `ServerSideApply` with `ignoreFields` stores in the
//!   `open-cluster-management.io/config-spec-hash` annotation, byte-compatible with upstream's.

pub mod engine;
pub mod hash;
pub mod jq;
pub mod metadata;
pub mod update;
