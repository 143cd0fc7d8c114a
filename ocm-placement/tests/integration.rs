//! The ocm-placement integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-placement --test integration scenarios::`.

mod common;

mod controller;
mod decisions;
mod deep_cel;
mod inventory;
mod plugins;
mod profile;
mod properties;
mod scenarios;
mod schedule;
mod scores;
mod sig;
mod spread;
