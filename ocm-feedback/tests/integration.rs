//! The ocm-feedback integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-feedback --test integration kubectl_differential::`.

mod deep_input;
mod kubectl_differential;
mod properties;
mod upstream_feedback;
