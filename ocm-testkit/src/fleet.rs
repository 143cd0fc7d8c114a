//! A whole test fleet in one call: a fake hub, N fake managed clusters with the CRDs they
//! need and workload simulators, an agent per cluster and the hub controllers, with one
//! shutdown handle and a readiness wait.
//!
//! The testkit does not depend on the crates whose components it runs (that would turn the
//! dependency direction around), so the components are given as closures: one that starts a
//! cluster's agent from a [`FleetCluster`], one per hub controller. With the work agent and
//! the hub controllers of this project, the setup a test needs is:
//!
//! ```ignore
//! use ocm_testkit::Fleet;
//! use ocm_work::agent::{AgentConfig, WorkAgent};
//!
//! let fleet = Fleet::builder(3)
//!     .agents(|c| WorkAgent::new(c.hub, c.spoke, AgentConfig::new(&c.name, "hub-hash")).run(c.shutdown))
//!     .hub_controller(|hub, stop| ocm_placement::controller::PlacementController::new(hub).run(stop))
//!     .hub_controller(|hub, stop| ocm_work::replicaset::controller::ReplicaSetController::new(hub).run(stop))
//!     .start()?;
//! fleet.wait_ready(std::time::Duration::from_secs(10)).await?;
//! // ... create Placements and ManifestWorkReplicaSets through fleet.hub_client() ...
//! fleet.shutdown().await;
//! ```
//!
//! Readiness: [`Fleet::wait_ready`] returns once every component has opened a watch on the
//! hub (for an agent: a watch in its cluster namespace), so that nothing a test writes next is
//! missed, and fails naming the components that did not. Components that end by themselves
//! before shutdown are reported by [`Fleet::finished`].
//!
//! A runnable example (with a stand-in agent that only watches its namespace):
//!
//! ```
//! use kube::api::{Api, WatchParams};
//! use ocm_testkit::Fleet;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fleet = Fleet::builder(2)
//!     .agents(|c| async move {
//!         let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(c.hub, &c.name);
//!         let _watch = api.watch(&WatchParams::default(), "0").await;
//!         c.shutdown.await;
//!     })
//!     .start()?;
//! fleet.wait_ready(std::time::Duration::from_secs(5)).await?;
//! assert_eq!(fleet.hub().cluster_names(), ["cluster1", "cluster2"]);
//! fleet.shutdown().await;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::cluster::{FakeCluster, FakeClusterBuilder};
use crate::error::{Error, Result};
use crate::ocm::FakeHub;
use crate::simulate::WorkloadSimulator;

/// A future that completes when the fleet shuts down. It is `Send + Sync + Unpin`, so it
/// can be handed to any component's `run(shutdown)`.
#[derive(Clone, Debug)]
#[must_use = "a shutdown signal does nothing unless awaited"]
pub struct Shutdown {
    state: Arc<ShutdownState>,
}

#[derive(Debug, Default)]
struct ShutdownState {
    stopped: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl ShutdownState {
    fn trigger(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *self.wakers.lock().unwrap_or_else(|e| e.into_inner()));
        for w in wakers {
            w.wake();
        }
    }
}

impl Future for Shutdown {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.state.stopped.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let mut wakers = self.state.wakers.lock().unwrap_or_else(|e| e.into_inner());
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        drop(wakers);
        if self.state.stopped.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// What a cluster's agent is started with.
#[derive(Clone)]
#[non_exhaustive]
pub struct FleetCluster {
    /// The managed cluster's name (`cluster1`, …), also its namespace on the hub.
    pub name: String,
    /// A client of the hub: as the cluster's agent identity with
    /// [authentication](FleetBuilder::authentication); as the administrator otherwise, then one
    /// client shared by every agent.
    pub hub: kube::Client,
    /// A client of the managed cluster.
    pub spoke: kube::Client,
    /// The managed cluster itself.
    pub cluster: FakeCluster,
    /// Completes when the fleet shuts down.
    pub shutdown: Shutdown,
}

impl std::fmt::Debug for FleetCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetCluster")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

type AgentStarter =
    Box<dyn Fn(FleetCluster) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;
type HubStarter =
    Box<dyn Fn(kube::Client, Shutdown) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Configures a [`Fleet`]; see the [module](self) docs.
#[must_use = "a fleet builder does nothing until `start` is called"]
pub struct FleetBuilder {
    clusters: usize,
    builder: FakeClusterBuilder,
    authentication: bool,
    simulators: bool,
    agents: Option<AgentStarter>,
    hub_controllers: Vec<HubStarter>,
}

impl std::fmt::Debug for FleetBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetBuilder")
            .field("clusters", &self.clusters)
            .field("authentication", &self.authentication)
            .field("simulators", &self.simulators)
            .field("agents", &self.agents.is_some())
            .field("hub_controllers", &self.hub_controllers.len())
            .finish_non_exhaustive()
    }
}

impl FleetBuilder {
    /// Build the hub and every managed cluster from `builder` (clock, uid seed, watch
    /// history, …).
    pub fn cluster_builder(mut self, builder: FakeClusterBuilder) -> Self {
        self.builder = builder;
        self
    }

    /// Turn authentication and RBAC on: each agent then talks to the hub as its cluster's
    /// agent identity, with upstream's hub RBAC; hub controllers as the administrator.
    pub fn authentication(mut self, on: bool) -> Self {
        self.authentication = on;
        self
    }

    /// Run workload simulators on the managed clusters (on by default), so that Deployments,
    /// StatefulSets, DaemonSets and Jobs report progress.
    pub fn simulate_workloads(mut self, on: bool) -> Self {
        self.simulators = on;
        self
    }

    /// Start one agent per managed cluster with `start`.
    pub fn agents<F, Fut>(mut self, start: F) -> Self
    where
        F: Fn(FleetCluster) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.agents = Some(Box::new(move |c| Box::pin(start(c))));
        self
    }

    /// Start a hub controller with `start(hub client, shutdown)`.
    pub fn hub_controller<F, Fut>(mut self, start: F) -> Self
    where
        F: Fn(kube::Client, Shutdown) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.hub_controllers
            .push(Box::new(move |hub, stop| Box::pin(start(hub, stop))));
        self
    }

    /// Build the hub and clusters and spawn every component (needs a Tokio runtime).
    pub fn start(self) -> Result<Fleet> {
        let builder = self.builder.authentication(self.authentication);
        let hub = FakeHub::with_builder(builder, self.clusters)?;
        let shutdown = Arc::new(ShutdownState::default());
        let signal = || Shutdown {
            state: shutdown.clone(),
        };
        let mut simulators = Vec::new();
        let mut components = Vec::new();
        if let Some(start) = &self.agents {
            let flags: Vec<(String, Arc<AtomicBool>)> = hub
                .clusters()
                .map(|(name, _)| (name.to_string(), Arc::new(AtomicBool::new(false))))
                .collect();
            // Without authentication every agent acts as the administrator, so they share one
            // client of the hub (a kube client costs a request buffer of several KiB); with it,
            // each has its own identity and client.
            let shared = (!self.authentication).then(|| {
                hub.hub()
                    .client_watching_namespaces(flags.iter().cloned().collect())
            });
            for ((name, cluster), (_, watched)) in hub.clusters().zip(flags) {
                if self.simulators {
                    simulators.push(cluster.simulate_workloads());
                }
                let client = match &shared {
                    Some(client) => client.clone(),
                    None => {
                        let token = hub.hub().identity(&FakeHub::agent_user(name))?.token;
                        hub.hub()
                            .client_watching(Some(&token), Some(name), watched.clone())
                    }
                };
                let task = tokio::spawn(start(FleetCluster {
                    name: name.to_string(),
                    hub: client,
                    spoke: cluster.client(),
                    cluster: cluster.clone(),
                    shutdown: signal(),
                }));
                components.push(Component {
                    name: format!("agent of {name}"),
                    watched,
                    task,
                });
            }
        } else if self.simulators {
            for (_, cluster) in hub.clusters() {
                simulators.push(cluster.simulate_workloads());
            }
        }
        for (i, start) in self.hub_controllers.iter().enumerate() {
            let watched = Arc::new(AtomicBool::new(false));
            let admin = if self.authentication {
                Some(hub.hub().identity("admin")?.token)
            } else {
                None
            };
            let client = hub
                .hub()
                .client_watching(admin.as_deref(), None, watched.clone());
            let task = tokio::spawn(start(client, signal()));
            components.push(Component {
                name: format!("hub controller #{}", i + 1),
                watched,
                task,
            });
        }
        Ok(Fleet {
            hub,
            simulators,
            components,
            shutdown,
        })
    }
}

#[derive(Debug)]
struct Component {
    name: String,
    watched: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

/// A running fleet: the hub, its managed clusters, their simulators and the components.
/// Dropping it stops the components at once; [`shutdown`](Self::shutdown) lets them finish.
#[derive(Debug)]
#[must_use = "the fleet stops when dropped"]
pub struct Fleet {
    hub: FakeHub,
    simulators: Vec<WorkloadSimulator>,
    components: Vec<Component>,
    shutdown: Arc<ShutdownState>,
}

impl Fleet {
    /// A fleet of `clusters` managed clusters (`cluster1`…), workload simulators on, no
    /// components until [`FleetBuilder::agents`] and [`FleetBuilder::hub_controller`] add
    /// them.
    pub fn builder(clusters: usize) -> FleetBuilder {
        FleetBuilder {
            clusters,
            builder: FakeCluster::builder(),
            authentication: false,
            simulators: true,
            agents: None,
            hub_controllers: Vec::new(),
        }
    }

    /// The fake hub and its managed clusters.
    pub fn hub(&self) -> &FakeHub {
        &self.hub
    }

    /// An administrator's client of the hub.
    pub fn hub_client(&self) -> kube::Client {
        self.hub.hub().client()
    }

    /// A managed cluster by name.
    pub fn cluster(&self, name: &str) -> Option<&FakeCluster> {
        self.hub.cluster(name)
    }

    /// Waits until every component has opened a watch on the hub (an agent: in its cluster
    /// namespace). An error names the components that did not within `timeout`, or that
    /// ended.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let ended: Vec<&str> = self
                .components
                .iter()
                .filter(|c| c.task.is_finished())
                .map(|c| c.name.as_str())
                .collect();
            if !ended.is_empty() {
                return Err(Error::Fleet(format!(
                    "components ended before they were ready: {}",
                    ended.join(", ")
                )));
            }
            let waiting: Vec<&str> = self
                .components
                .iter()
                .filter(|c| !c.watched.load(Ordering::SeqCst))
                .map(|c| c.name.as_str())
                .collect();
            if waiting.is_empty() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Fleet(format!(
                    "not ready after {timeout:?} (no watch on the hub yet): {}",
                    waiting.join(", ")
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The components whose tasks have ended (before shutdown, a sign of trouble).
    pub fn finished(&self) -> Vec<String> {
        self.components
            .iter()
            .filter(|c| c.task.is_finished())
            .map(|c| c.name.clone())
            .collect()
    }

    /// Signals every component to stop, waits for them (5 s at most each, then aborts
    /// it) and stops the simulators.
    pub async fn shutdown(mut self) {
        self.shutdown.trigger();
        for c in self.components.drain(..) {
            let abort = c.task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), c.task)
                .await
                .is_err()
            {
                tracing::warn!(component = %c.name, "did not stop within 5s; aborted");
                abort.abort();
            }
        }
        self.simulators.clear();
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.shutdown.trigger();
        for c in &self.components {
            c.task.abort();
        }
    }
}
