//! Each crate links its `tests/` files into one binary (`tests/integration.rs`, with
//! `autotests = false`), so a new test file that is not declared there would never be built or
//! run, silently. This suite checks every crate of the workspace for such a file.

use std::path::Path;

/// The workspace's crates that have integration tests.
const CRATES: [&str; 6] = [
    "ocm-api",
    "ocm-feedback",
    "ocm-placement",
    "ocm-testkit",
    "ocm-work",
    "examples",
];

#[test]
fn every_test_file_is_a_module_of_its_crates_integration_binary() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut missing = Vec::new();
    for krate in CRATES {
        let tests = workspace.join(krate).join("tests");
        let root = std::fs::read_to_string(tests.join("integration.rs"))
            .unwrap_or_else(|e| panic!("{krate}/tests/integration.rs: {e}"));
        let declared = |name: &str| {
            root.lines()
                .any(|line| line.trim() == format!("mod {name};"))
        };
        let entries = std::fs::read_dir(&tests).unwrap_or_else(|e| panic!("{krate}/tests: {e}"));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            // A file suite (`name.rs`) or a shared module (`name/mod.rs`).
            let name = if path.extension().is_some_and(|e| e == "rs") {
                path.file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_string)
            } else if path.join("mod.rs").is_file() {
                path.file_name()
                    .and_then(|s| s.to_str())
                    .map(str::to_string)
            } else {
                None
            };
            if let Some(name) = name.filter(|n| n != "integration" && !declared(n)) {
                missing.push(format!("{krate}/tests: `mod {name};`"));
            }
        }
        let manifest = std::fs::read_to_string(workspace.join(krate).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{krate}/Cargo.toml: {e}"));
        assert!(
            manifest.contains("autotests = false")
                && manifest.contains("path = \"tests/integration.rs\""),
            "{krate}/Cargo.toml must declare the one test target, tests/integration.rs"
        );
    }
    assert!(
        missing.is_empty(),
        "test files not declared in their crate's tests/integration.rs (never built):\n{}",
        missing.join("\n")
    );
}
