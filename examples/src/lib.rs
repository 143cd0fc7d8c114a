//! Code shared by the example binaries and their tests.
//!
//! * [`resource_usage`]: the "resource-usage-collect" addon of the OCM documentation, built on
//!   [`ocm_work::addon`]: the hub side (an [`AgentAddon`](ocm_work::addon::AgentAddon)) and
//!   the agent that scores its managed cluster.
//! * [`deploy`]: the deployment manifests `ocm-deploy` prints.
//! * [`runtime`]: leader election flags and running controllers under the election, for
//!   `ocm-work-agent` and `ocm-hub-controller`; [`gates`]: the `--feature-gates` flag of
//!   `ocm-hub-controller` and `ocm-placement-sim`.
//! * Command-line plumbing: [`output`] (standard output that behaves on a closed pipe),
//!   [`logging`] (colour codes only on a terminal), [`errors`] (API errors as kubectl prints
//!   them), [`table`] and [`tree`] (kubectl's and clusteradm's layouts).
//!
//! ```
//! use ocm_examples::table::Table;
//!
//! let mut table = Table::new(["NAME", "ACCEPTED"]);
//! table.row(["cluster1", "true"]);
//! assert_eq!(table.to_string(), "NAME       ACCEPTED\ncluster1   true\n");
//! ```

pub mod demo;
pub mod deploy;
pub mod errors;
pub mod gates;
pub mod logging;
pub mod output;
pub mod resource_usage;
pub mod runtime;
pub mod table;
pub mod tree;
