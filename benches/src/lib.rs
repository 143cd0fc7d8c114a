//! Criterion benchmarks for the OCM Rust SDK live in `benches/`; this library is empty.
