//! The ocm-work integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-work --test integration agent_recovery::`.

mod addon_support;
mod support;

mod addon_config;
mod addon_health;
mod addon_hosted;
mod addon_install;
mod addon_lifecycle;
mod addon_run;
mod addon_template;
mod addon_undecodable;
mod agent;
mod agent_custom_applier;
mod agent_deep_work;
mod agent_deletion;
mod agent_endpoints;
mod agent_faults;
mod agent_hub_lost_state;
mod agent_leader_election;
mod agent_logs;
mod agent_recovery;
mod agent_shutdown;
mod agent_undecodable;
mod apply_idempotent;
mod cache_stale_watch;
mod claims;
mod deep_input;
mod executor_cache;
mod fanout;
mod fleet;
mod interop;
mod leader_election;
mod registration;
mod replicaset;
mod replicaset_feedback;
mod replicaset_undecodable;
mod replicaset_values;
mod runtime_reconcilers;
