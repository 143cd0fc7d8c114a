//! The ManifestWork builder against real files and directories.

use std::path::PathBuf;

use ocm_api::builder::ManifestWorkBuilder;
use ocm_api::work::v1::{DeleteOption, ManifestWorkExecutor, PropagationPolicy};

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ocm-api-builder-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SA: &str =
    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: my-sa\n  namespace: default\n";
const DEPLOY: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": "default"}, "spec": {"replicas": 2}}"#;

#[test]
fn directory_files_are_read_recursively_in_name_order() {
    let dir = scratch("dir");
    std::fs::create_dir_all(dir.join("b-nested")).unwrap();
    std::fs::write(dir.join("a.yaml"), SA).unwrap();
    std::fs::write(dir.join("b-nested/deploy.json"), DEPLOY).unwrap();
    std::fs::write(dir.join("c.yml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n").unwrap();
    std::fs::write(dir.join("README.md"), "not a manifest").unwrap();

    let work = ManifestWorkBuilder::new("w", "cluster1")
        .path(&dir)
        .unwrap()
        .label("app", "demo")
        .delete_option(DeleteOption {
            propagation_policy: Some(PropagationPolicy::Orphan),
            selectively_orphan: None,
            ttl_seconds_after_finished: None,
        })
        .executor(ManifestWorkExecutor::service_account("default", "deployer"))
        .build()
        .unwrap();
    let kinds: Vec<_> = work
        .spec
        .manifests()
        .iter()
        .map(|m| m.kind().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["ServiceAccount", "Deployment", "ConfigMap", "Secret"]
    );
    assert_eq!(work.metadata.labels.unwrap()["app"], "demo");
    assert_eq!(
        work.spec.delete_option.unwrap().propagation_policy,
        Some(PropagationPolicy::Orphan)
    );
    assert!(work.spec.executor.is_some());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn errors_name_the_file_and_document() {
    let dir = scratch("errors");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, format!("{SA}---\nmetadata:\n  name: nokind\n")).unwrap();
    let err = ManifestWorkBuilder::new("w", "c").path(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: document 2: object has no apiVersion", bad.display())
    );

    let missing = dir.join("missing.yaml");
    let err = ManifestWorkBuilder::new("w", "c")
        .path(&missing)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read {}", missing.display())),
        "{err}"
    );

    let malformed = dir.join("malformed.yaml");
    std::fs::write(
        &malformed,
        "apiVersion: v1\nkind: ConfigMap\ndata: {a: [1, 2\n",
    )
    .unwrap();
    let err = ManifestWorkBuilder::new("w", "c")
        .path(&malformed)
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "{}: document 1: (starting at line 1)",
            malformed.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_work_over_the_size_limit_is_rejected() {
    let big = "x".repeat(300 * 1024);
    let secret = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: default}}\nstringData:\n  blob: {big}\n"
        )
    };
    let err = ManifestWorkBuilder::new("w", "c")
        .yaml("one.yaml", &secret("a"))
        .unwrap()
        .yaml("two.yaml", &secret("b"))
        .unwrap()
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("the size of manifests is"), "{text}");
    assert!(text.contains("exceeds the 512000 limit"), "{text}");

    // The same work passes with a larger limit.
    ManifestWorkBuilder::new("w", "c")
        .yaml("one.yaml", &secret("a"))
        .unwrap()
        .yaml("two.yaml", &secret("b"))
        .unwrap()
        .size_limit(2 * 1024 * 1024)
        .build()
        .unwrap();
}
