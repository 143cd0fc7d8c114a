//! The ocm-api integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-api --test integration golden_crds::`.

mod builder;
mod crd_conformance;
mod deep_yaml;
mod golden_crds;
mod roundtrip_addon;
mod roundtrip_cluster;
mod roundtrip_multicluster;
mod roundtrip_work;
mod seed_examples;
