//! Criterion benchmarks for the OCM Rust SDK live in `benches/`; this library holds what
//! several of them share.

/// Resident memory of this process, in bytes (Linux; `None` elsewhere).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
