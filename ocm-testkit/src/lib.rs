//! Fake Kubernetes API servers for fast, faithful tests.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod admission;
pub mod api_error;
mod builtin;
pub mod clock;
mod cluster;
mod crd;
mod deletion;
mod discovery;
pub mod error;
pub mod fault;
mod fieldset;
pub mod http;
pub mod journal;
mod openapi;
pub mod patch;
mod query;
pub mod registry;
mod schema;
pub mod selector;
mod ssa;
pub mod store;
mod table;
mod uid;
pub mod watch;

pub use api_error::{ApiError, ApiStatus, Cause};
pub use clock::{Clock, ManualClock, SystemClock};
pub use cluster::{FakeCluster, FakeClusterBuilder, LoopbackServer};
pub use error::{Error, Result};
pub use fault::FaultRule;
pub use journal::{Journal, JournalEntry};
pub use patch::PatchKind;
pub use registry::{GroupResource, Gvr, PrinterColumn, Registry, ResourceInfo};
pub use selector::{FieldSelector, LabelSelector};
pub use store::{
    DeleteOptions, DeleteOutcome, ListOptions, ObjectKey, ObjectList, Propagation, Store,
    StoreConfig, WriteOptions,
};
pub use watch::{EventType, StoredEvent, Subscription, WatchOptions};
