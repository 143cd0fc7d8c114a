//! Code shared by the example binaries and their tests.
//!
//! * [`resource_usage`]: the "resource-usage-collect" addon of the OCM documentation, built on
//!   [`ocm_work::addon`]: the hub side (an [`AgentAddon`](ocm_work::addon::AgentAddon)) and
//!   the agent that scores its managed cluster.

pub mod resource_usage;
