//! The ocm-testkit integration tests, linked into one test binary instead of one per file
//! (each link of a debug test binary costs time and hundreds of megabytes of disk).
//! Each module below is one suite, a file of this directory; run one suite by
//! naming it as the filter: `cargo test -p ocm-testkit --test integration crud::`.

mod async_gc;
mod auth;
mod batch;
mod builtin_defaults;
mod builtin_validation;
mod conformance;
mod conversion;
mod crd;
mod crud;
mod deep_bodies;
mod deep_rules;
mod deep_selectors;
mod deletion;
mod events;
mod field_validation;
mod http;
mod kubectl;
mod kubectl_openapi;
mod malformed;
mod metadata_validation;
mod ocm;
mod openapi;
mod persist;
mod rbac;
mod resource_version;
mod scale;
mod security;
mod simulate;
mod ssa;
mod support;
mod table;
mod validation;
mod watch;
mod webhook;
