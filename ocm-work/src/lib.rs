//! The Open Cluster Management work agent, apply engine and ManifestWorkReplicaSet controller.
//!
//! * [`agent::WorkAgent`] applies the ManifestWorks of one managed cluster's namespace on the
//!   hub to that managed cluster, as a pipeline around a pure per-work plan ([`agent::plan`]):
//!   finalizers, the AppliedManifestWork record, the apply pass ([`apply`]: one applier per
//!   update strategy, Update, CreateOnly, ServerSideApply, ReadOnly, behind the
//!   [`apply::applier::Applier`] trait, so you can plug in your own), bookkeeping and garbage
//!   collection of removed manifests, resource availability, status feedback
//!   ([`ocm_feedback`]) and condition rules ([`rules`]) put together by the pure
//!   [`status::StatusBuilder`], executor authorization ([`executor`]) and the deletion flow
//!   with delete options (Foreground, Orphan, SelectivelyOrphan).
//! * [`replicaset::controller::ReplicaSetController`] fans a ManifestWorkReplicaSet out to the
//!   clusters its placements select, with the rollout engine of
//!   [`ocm_api::cluster::v1alpha1`].
//! * [`addon`] is the addon framework: implement [`addon::AgentAddon`] and the
//!   [`addon::AddonManager`] installs, configures, rolls out, health-checks and removes the
//!   addon on the clusters its ClusterManagementAddOn selects, with upstream's names and
//!   statuses; [`addon::guide`] walks from an empty crate to a passing test.
//! * [`fanout`] keeps one ManifestWork per cluster a Placement decides, with clean-up when
//!   the Placement goes; [`applier`] applies ManifestWorks skipping no-op updates;
//!   [`api_errors`] classifies API errors.
//! * [`registration`] is the part of upstream's registration agent that runs beside the work
//!   agent (opt-in): the cluster lease, the cluster's availability and ClusterClaims.
//! * The pure building blocks are public too: [`identity`] (hub hash, names), [`order`]
//!   (kind-ranked apply order), [`config`] (manifest config lookup with wildcards), [`owner`]
//!   (owner references and delete options), [`status`] (condition merging and aggregation,
//!   the status builder), the plan of each update strategy ([`apply::update`],
//!   [`apply::create_only`], [`apply::server_side`]), [`apply::hash`], [`patch`] (two-way
//!   JSON merge patches) and [`discovery`] (kind to resource resolution).
//!
//! * [`runtime`] is what binaries need on real clusters: graceful shutdown, leader election
//!   with a Lease, `/healthz`, `/readyz` and `/metrics`, and every reconciler in
//!   kube-runtime's shape.
//! * [`cache`] holds the agent's informers: ManifestWorks, AppliedManifestWorks and the applied
//!   resources, so a steady-state resync costs no request; they decode object by object, so an
//!   object the agent cannot decode is skipped and reported instead of stopping every list;
//!   [`executor::cache`] is the `ExecutorValidatingCaches` gate; [`apply::jq`] evaluates
//!   `ignoreFields` jq expressions.
//!
//! Behaviour is upstream's (names, condition types, reasons and messages, the quirks listed in
//! each module). Additions are opt-ins, for example
//! [`replicaset::SuccessCriteria::AppliedAndAvailable`]. Some differences are on by default
//! because they change no outcome for works upstream handles: applied resources are read from
//! informers instead of a GET per manifest ([`agent::AgentConfig::cached_reads`] turns it off);
//! a work the agent cannot decode is skipped and reported rather than stalling every work (see
//! [`agent`]), and so is every object the hub controllers, the fan-out, the addon manager and
//! the registration parts cannot decode (a ManifestWorkReplicaSet or ManagedClusterAddOn gets
//! a condition saying why: see [`replicaset::controller`] and [`addon`]); and retries after
//! errors are bounded to seconds
//! ([`cache::RETRY_BACKOFF_MAX`], [`agent::SYNC_RETRY_MAX`]) where upstream backs off for
//! minutes.
//!
//! # The I/O shell
//!
//! * **Errors.** [`Error`] (in `error.rs`) is the error of every controller and I/O helper of
//!   the crate; a failed API call keeps its `kube::Error` as the
//!   [`source`](std::error::Error::source) ([`Error::Kube`]). The per-manifest outcomes the
//!   agent writes into conditions ([`apply::engine::ApplyError`], [`executor::ExecutorError`],
//!   [`apply::jq::JqError`], [`discovery::UnknownKind`]) are values with upstream's message,
//!   cloned into status, and keep only the text of an API error.
//! * **Reads**, one object at a time: every list, watch and read of the hub controllers, the
//!   fan-out, the addon manager and the registration parts asks for raw JSON
//!   ([`ocm_api::k8s::object::RawObject`]) and decodes each object on its own, up to the API
//!   server's 10,000 nesting levels, on a stack grown for the deepest object read; one that
//!   does not decode is logged (once per resource version) and skipped, never a failed list.
//! * **Watches**, all through kube-runtime's `watcher` (restarted with its default backoff):
//!   - kube-runtime's `Controller`, one object per queue key:
//!     [`replicaset::controller::ReplicaSetController::run`] and the work agent
//!     ([`agent::WorkAgent::run`], a `Controller` fed by its own informers with
//!     `for_stream` and `reconcile_on`, hence the `unstable-runtime` feature);
//!   - [`cache::ObjectCache`], the agent's informers: a watcher of raw objects decoded one
//!     at a time, with a stale-watch check (see [`cache`]);
//!   - the executor cache's RBAC watch ([`executor::cache::CacheController`]), which reads
//!     each event, and the ManifestWorkReplicaSet gauge of [`runtime::metrics`] (a reflector);
//!   - one loop of the crate's own for the controllers that reconcile a whole set of objects
//!     per round, as their upstream counterparts do from an informer cache: run a round, then
//!     wait for a change (a burst of changes within a short settle time costs one round), the
//!     round's requeue time or the shutdown. [`addon::AddonManager::run`],
//!     [`fanout::PlacementFanout::run`] and [`registration::ClusterClaimReporter::run`] run on it;
//!   - [`registration::RegistrationAgent::run`] keeps a loop of its own, as it runs two kinds
//!     of round (the lease-timed registration round, and a claims-only round when a claim
//!     changes).
//!
//!   The other loops of the crate are timers, not watches (leader election, addon lease
//!   renewal and checks).
//! * **kube features**: `client`, `runtime` and `unstable-runtime` (no TLS stack: the
//!   binaries that build the `kube::Client` choose one).
//!
//! # Features
//!
//! Each product of the crate is a feature, so that a crate compiles only what it uses:
//!
//! | feature | modules | for |
//! |---|---|---|
//! | `agent` (default) | [`agent`], [`apply`], [`cache`], [`executor`], [`status`], [`rules`] | the work agent of a managed cluster (brings jq, CEL and the feedback extractor) |
//! | `hub` | [`applier`], [`replicaset`], [`fanout`] | writing ManifestWorks from the hub |
//! | `addon` | [`addon`] (and `hub`) | addon managers: `AgentAddon` and `AddonManager` |
//! | `registration` | [`registration`] | the cluster lease and ClusterClaims beside the work agent |
//! | `runtime` | [`runtime`] | on with any of the above: shutdown, leader election, health and metrics endpoints |
//! | `full` | all of the above | binaries that run several products |
//!
//! The pure building blocks ([`identity`], [`order`], [`config`], [`owner`], [`patch`],
//! [`discovery`], [`api_errors`]) and [`Error`] are always there. An addon crate takes
//! `ocm-work = { …, default-features = false, features = ["addon"] }`: 170 crates in its
//! dependency tree instead of 203 (`cargo tree -p ocm-work -e normal,build
//! --no-default-features --features addon`), without jq, CEL or the feedback extractor.
//! ocm-work does not depend on `ocm-placement`: a hub binary that runs both connects the
//! Placement controller to [`runtime::metrics::HubMetrics`] with a closure (see
//! `ocm_placement::controller::ScheduleObserver`).
//!
//! ```
//! use ocm_work::identity::{applied_manifest_work_name, hub_hash};
//!
//! let hash = hub_hash("https://hub.example.com:6443");
//! let name = applied_manifest_work_name(&hash, "hello-work-demo");
//! assert!(name.ends_with("-hello-work-demo"));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "addon")]
pub mod addon;
#[cfg(feature = "agent")]
pub mod agent;
pub mod api_errors;
#[cfg(feature = "hub")]
pub mod applier;
#[cfg(feature = "agent")]
pub mod apply;
#[cfg(feature = "agent")]
pub mod cache;
pub mod config;
pub mod discovery;
mod error;
#[cfg(feature = "agent")]
pub mod executor;
#[cfg(feature = "hub")]
pub mod fanout;
pub mod identity;
pub mod order;
pub mod owner;
pub mod patch;
// Shared by the hub writers, the addon framework and the registration parts: with only some
// of them compiled, some helpers go unused.
#[cfg_attr(not(all(feature = "hub", feature = "registration")), allow(dead_code))]
mod read;
#[cfg(feature = "registration")]
pub mod registration;
#[cfg(feature = "hub")]
pub mod replicaset;
#[cfg(feature = "agent")]
pub mod rules;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "agent")]
pub mod status;

pub use error::{Error, Result};
