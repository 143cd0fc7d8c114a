//! The store and what it does to objects: resource versions, watches, deletion and garbage
//! collection, patches and server-side apply, selectors, the served resources (built-in kinds,
//! CRDs and their conversion) and persistence.
//!
//! | file | what |
//! |---|---|
//! | [`store`], `frozen.rs`, `uid.rs` | the in-memory store, its compact object form, uids |
//! | [`watch`] | watch events, history and subscriptions |
//! | `deletion.rs` | finalizers, `deletionTimestamp`, garbage collection, namespaces |
//! | [`patch`], `ssa.rs`, `fieldset.rs`, `schema.rs` | patches, server-side apply, field sets, list and map semantics |
//! | [`selector`] | label and field selectors |
//! | [`registry`], `builtin.rs`, `crd.rs`, `conversion.rs`, `scale.rs` | the resources served and their subresources |
//! | [`journal`], [`limits`], `persist.rs` | the request journal, size limits, saving to disk |

pub(crate) mod builtin;
pub(crate) mod conversion;
pub(crate) mod crd;
pub(crate) mod deletion;
pub(crate) mod fieldset;
pub(crate) mod frozen;
pub mod journal;
pub mod limits;
pub mod patch;
pub(crate) mod persist;
pub mod registry;
pub(crate) mod scale;
pub(crate) mod schema;
pub mod selector;
pub(crate) mod ssa;
pub mod store;
pub(crate) mod uid;
pub mod watch;
