//! Applying manifests to the managed cluster: the engine, the appliers (one per update
//! strategy, behind the [`applier::Applier`] trait), the one reader of live objects, and the
//! pure decisions the appliers carry out.
//!
//! * [`engine`]: the [`engine::ApplyEngine`] decodes a work's manifests, resolves their kinds
//!   and configs once per sync, checks executors and hands each manifest to its applier;
//! * [`applier`]: the [`applier::Applier`] trait, the [`applier::ApplyRequest`] an applier
//!   gets and the [`applier::Appliers`] registry, where custom appliers are plugged in per
//!   strategy or per kind;
//! * one module per update strategy, each with its pure plan and its applier:
//!   [`update`] (`Update`: create, leave alone, or replace), [`create_only`] (`CreateOnly`),
//!   [`server_side`] (`ServerSideApply` with `ignoreFields` and the configuration hash) and
//!   [`read_only`] (`ReadOnly`);
//! * [`reader`]: the [`reader::ObjectReader`] every path reads live objects through (informer
//!   or GET, write-through of the agent's own writes, request counting);
//! * [`metadata`]: label and annotation merging with `key-` removal instructions, owner
//!   references, and the clean-up done before a create;
//! * [`hash`]: the configuration hash `ServerSideApply` with `ignoreFields` stores in the
//!   `open-cluster-management.io/config-spec-hash` annotation, byte-compatible with upstream's;
//! * [`jq`]: the jq path expressions of `ignoreFields`.
//!
//! The plans are pure functions of the required manifest, the owner reference and the live
//! object; planning against the object a planned write leaves behind plans no further write
//! (a property test checks it for generated manifests, live objects and strategies).

pub mod applier;
pub mod create_only;
pub mod engine;
pub mod hash;
pub mod jq;
pub mod metadata;
pub mod read_only;
pub mod reader;
pub mod server_side;
pub mod update;
