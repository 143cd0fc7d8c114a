//! Stand-ins for what a real cluster does beyond its API server: workload controllers
//! ([`simulate`]) and failures ([`fault`]).

pub mod fault;
pub mod simulate;
