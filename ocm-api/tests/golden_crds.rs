//! Our generated CRDs, committed as golden files under `ocm-api/crds/`, so that every schema
//! change shows up in review.
//!
//! After an intended change, regenerate with
//! `OCM_UPDATE_GOLDEN=1 cargo test -p ocm-api --test integration golden_crds::`.

use std::path::PathBuf;

#[test]
fn generated_crds_match_the_committed_golden_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crds");
    let update = std::env::var_os("OCM_UPDATE_GOLDEN").is_some();
    let mut crds = ocm_api::crds();
    crds.extend(ocm_api::multicluster::crds());
    let mut expected_files = Vec::new();
    let mut stale = Vec::new();
    for crd in &crds {
        let name = crd.metadata.name.clone().expect("CRD has a name");
        let file = format!("{name}.yaml");
        let path = dir.join(&file);
        let yaml = ocm_api::crd::to_yaml(crd).expect("CRD renders as YAML");
        expected_files.push(file);
        if update {
            std::fs::create_dir_all(&dir).expect("create crds dir");
            std::fs::write(&path, &yaml).expect("write golden file");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(yaml.as_str()) {
            stale.push(name);
        }
    }
    if update {
        for entry in std::fs::read_dir(&dir).expect("read crds dir") {
            let path = entry.expect("dir entry").path();
            let file = path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default()
                .to_string();
            if !expected_files.contains(&file) {
                std::fs::remove_file(&path).expect("remove stale golden file");
            }
        }
        return;
    }
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|f| f.ends_with(".yaml"))
                .collect()
        })
        .unwrap_or_default();
    present.sort();
    let mut expected_sorted = expected_files.clone();
    expected_sorted.sort();
    assert!(
        stale.is_empty() && present == expected_sorted,
        "golden CRDs under {} are out of date (changed: {stale:?}; files present: {present:?}); \
         review the change and run `OCM_UPDATE_GOLDEN=1 cargo test -p ocm-api --test integration golden_crds::`",
        dir.display()
    );
}

#[test]
fn generated_crds_parse_back_as_custom_resource_definitions() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    for crd in ocm_api::crds() {
        let yaml = ocm_api::crd::to_yaml(&crd).expect("render");
        let back: CustomResourceDefinition = serde_saphyr::from_str(&yaml).expect("parse back");
        assert_eq!(back, crd);
    }
}
