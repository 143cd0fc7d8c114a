//! The ocm-examples integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-examples --test integration seeds_placement::`.

mod common;

mod agent_process;
mod binaries_e2e;
mod cli_hygiene;
mod clusteradm_cli;
mod deploy;
mod fake_apiserver;
mod hub_feature_gates;
mod hub_kubectl;
mod mwrs_opt_ins;
mod mwrs_rollback;
mod placement_opt_ins;
mod placement_sim;
mod quickstart;
mod resource_usage_addon;
mod score_provider;
mod seeds_cluster_attributes;
mod seeds_clusterset;
mod seeds_deploy;
mod seeds_manifestwork;
mod seeds_placement;
mod seeds_replicaset;
mod test_layout;
