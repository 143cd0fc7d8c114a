//! What a controller binary needs to run on real clusters, for our example binaries and
//! yours:
//!
//! * [`shutdown`]: SIGTERM/SIGINT, and one shutdown signal every `run` of the SDK accepts;
//! * [`leader`]: leader election with a `coordination.k8s.io/v1` Lease (client-go's
//!   algorithm, upstream's flags and defaults);
//! * [`health`], [`metrics`], [`workqueue`] and [`server`]: `/healthz`, `/readyz` and
//!   `/metrics` (Prometheus text) on one address;
//! * [`reconcile`]: every controller's reconciler in kube-runtime's shape, to mount in a
//!   `Controller` of your own.
//!
//! `ocm-work-agent` and `ocm-hub-controller` (in `examples/`) put them together: the
//! controllers run under the election, the endpoints report readiness (a standby replica,
//! or the leader once its informers have listed) and the metrics, and SIGTERM stops the
//! controllers gracefully, then releases the Lease.
//!
//! # Why here
//!
//! `ocm-work` is the crate with I/O that both the work agent and the hub controllers
//! (ManifestWorkReplicaSet here, Placement and the cluster inventory in `ocm-placement`)
//! reach: `ocm-placement` cannot depend on `ocm-work`, so the runtime pieces live here and
//! `ocm-placement` only exposes a hook, its controller's `ScheduleObserver`, which a binary
//! connects to [`metrics::HubMetrics::scheduled`] with a closure
//! (`PlacementController::with_observer`), so that neither crate depends on the other.

pub mod health;
pub mod leader;
pub mod metrics;
pub mod reconcile;
pub mod server;
pub mod shutdown;
// The watches of the hub writers, the addon manager and the registration parts (their
// round loop is `ocm_api::rounds`).
#[cfg_attr(not(any(feature = "hub", feature = "registration")), allow(dead_code))]
pub(crate) mod watch;
pub mod workqueue;
