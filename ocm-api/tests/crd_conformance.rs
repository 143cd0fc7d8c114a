//! Structural conformance of our generated CRDs with upstream OCM's.
//!
//! Compares `ocm_api::crds()` field by field with the upstream CRD files in
//! `shared/reference/ocm-crds` (beside the repository; override with `OCM_REFERENCE_CRDS`).
//! Descriptions are ours and are not compared; everything else is: names, scope, versions,
//! subresources, printer columns, and at every schema level the properties, types, formats,
//! `required`, enums, defaults, constraints, `x-kubernetes-*` markers and CEL validations.
//!
//! Without the reference folder the tests report that they were skipped, except under
//! `CI=true`, where a missing folder fails the run.
//!
//! The SIG-Multicluster CRDs (`ocm_api::multicluster::crds()`) are compared the same way with
//! cluster-inventory-api's, kept (without their descriptions) in `tests/reference/`.
//!
//! `ocm_api::crds()`, what a hub installs by default, must equal upstream's: all 14, with no
//! difference at all. The extended CRDs (`ocm_api::crd::extended_crds()`, for our opt-ins)
//! may differ only by the fields listed one by one in [`ADDITIONS`], each with its reason
//! (and each in `ocm_api::crd::REPLICA_SET_EXTENSIONS`); every listed addition must be there.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

fn reference_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("OCM_REFERENCE_CRDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/ocm-crds")
        });
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "the upstream reference CRDs are missing at {} and CI=true: the conformance test must run in CI",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: upstream reference CRDs not found at {} (set OCM_REFERENCE_CRDS)",
        dir.display()
    );
    None
}

fn load_reference(dir: &std::path::Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("read reference dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read reference CRD");
        let value: Value = serde_saphyr::from_str(&text)
            .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
        let name = value["metadata"]["name"]
            .as_str()
            .expect("reference CRD has a name")
            .to_string();
        out.insert(name, value);
    }
    out
}

fn ours() -> BTreeMap<String, Value> {
    by_name(ocm_api::crds())
}

fn ours_extended() -> BTreeMap<String, Value> {
    by_name(ocm_api::crd::extended_crds())
}

fn by_name(
    crds: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>,
) -> BTreeMap<String, Value> {
    crds.into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().expect("generated CRD has a name");
            (name, serde_json::to_value(crd).expect("serialize CRD"))
        })
        .collect()
}

/// Keys whose values are free text and not compared.
const TEXT_KEYS: &[&str] = &["description"];
/// Keys whose array values are sets (order carries no meaning).
const SET_KEYS: &[&str] = &["required", "enum", "shortNames", "categories"];

/// Whether `path` names a schema's `properties` map (whose keys are property names, so a
/// property may be called `description`), not a property that is itself named `properties`.
fn is_property_map(path: &str) -> bool {
    match path.rsplit_once('.') {
        Some((parent, "properties")) => !is_property_map(parent),
        _ => false,
    }
}

fn diff(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, bv) in b {
                if TEXT_KEYS.contains(&key.as_str()) && !is_property_map(path) {
                    continue;
                }
                let child = format!("{path}.{key}");
                match a.get(key) {
                    None => out.push(format!(
                        "{child}: missing in ours (upstream: {})",
                        short(bv)
                    )),
                    Some(av) => diff(&child, av, bv, out),
                }
            }
            for (key, av) in a {
                if TEXT_KEYS.contains(&key.as_str()) && !is_property_map(path) {
                    continue;
                }
                if !b.contains_key(key) {
                    out.push(format!("{path}.{key}: extra in ours ({})", short(av)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            let last = path.rsplit('.').next().unwrap_or_default();
            if SET_KEYS.contains(&last) {
                let mut sa: Vec<String> = a.iter().map(Value::to_string).collect();
                let mut sb: Vec<String> = b.iter().map(Value::to_string).collect();
                sa.sort();
                sb.sort();
                if sa != sb {
                    out.push(format!("{path}: ours {sa:?} upstream {sb:?}"));
                }
                return;
            }
            if a.len() != b.len() {
                out.push(format!(
                    "{path}: {} items in ours, {} upstream (ours {}, upstream {})",
                    a.len(),
                    b.len(),
                    short(ours),
                    short(theirs)
                ));
                return;
            }
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), av, bv, out);
            }
        }
        (a, b) => {
            if a != b && !numbers_equal(a, b) {
                out.push(format!("{path}: ours {} upstream {}", short(a), short(b)));
            }
        }
    }
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// The schema of the first (only) served version, as `diff` names paths.
const V0: &str = "spec.versions[0].schema.openAPIV3Schema.properties";

/// Every addition of the extended CRDs to upstream's: (CRD, path of the added property, why).
/// The comparison of an extended CRD reports each as `<path>: extra in ours`; these, and only
/// these, are allowed there. The default CRDs have none.
const ADDITIONS: &[(&str, &str, &str)] = &[
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "spec.properties.revisionHistoryLimit",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "spec.properties.placementRefs.items.properties.rolloutStrategy.properties.failureStrategy",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "status.properties.collisionCount",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "status.properties.currentRevision",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "status.properties.updateRevision",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "status.properties.abortedTime",
        "rollback, from upstream's accepted proposal (enhancements #229)",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "spec.properties.feedbackAggregation",
        "feedback aggregation (ours, issue #16): which status-feedback values to aggregate",
    ),
    (
        "manifestworkreplicasets.work.open-cluster-management.io",
        "status.properties.feedbackAggregation",
        "feedback aggregation (ours, issue #16): the aggregates, rate-limited",
    ),
];

/// Splits `out` into the listed additions of CRD `name` (by index into [`ADDITIONS`]) and
/// the differences that are not listed.
fn split_additions(name: &str, out: Vec<String>) -> (Vec<usize>, Vec<String>) {
    let mut seen = Vec::new();
    let mut rest = Vec::new();
    for line in out {
        let listed = ADDITIONS.iter().position(|(crd, path, _)| {
            *crd == name && line.starts_with(&format!("{V0}.{path}: extra in ours"))
        });
        match listed {
            Some(i) => seen.push(i),
            None => rest.push(line),
        }
    }
    (seen, rest)
}

fn compare(name: &str) {
    let Some(dir) = reference_dir() else { return };
    let differences = differences(name, &load_reference(&dir), &ours(), &dir);
    assert!(
        differences.is_empty(),
        "{name}: {} structural difference(s) from upstream (the default CRDs must equal \
         upstream's; our fields belong in extended_crds()):\n  {}",
        differences.len(),
        differences.join("\n  ")
    );
}

/// The structural differences of our CRD `name` from upstream's.
fn differences(
    name: &str,
    reference: &BTreeMap<String, Value>,
    ours: &BTreeMap<String, Value>,
    dir: &std::path::Path,
) -> Vec<String> {
    let theirs = reference
        .get(name)
        .unwrap_or_else(|| panic!("no upstream CRD named {name} in {}", dir.display()));
    let mine = ours
        .get(name)
        .unwrap_or_else(|| panic!("no generated CRD named {name}"));
    let mut out = Vec::new();
    // Only the spec is compared: upstream files carry an empty status and no labels.
    diff("spec", &mine["spec"], &theirs["spec"], &mut out);
    out
}

/// Compares an extended CRD: only the listed [`ADDITIONS`] may differ, and all must be there.
fn compare_in(
    name: &str,
    reference: &BTreeMap<String, Value>,
    ours: &BTreeMap<String, Value>,
    dir: &std::path::Path,
) {
    let (seen, out) = split_additions(name, differences(name, reference, ours, dir));
    let gone: Vec<String> = ADDITIONS
        .iter()
        .enumerate()
        .filter(|(i, (crd, _, _))| *crd == name && !seen.contains(i))
        .map(|(_, (_, path, why))| format!("{path} ({why})"))
        .collect();
    assert!(
        gone.is_empty(),
        "{name}: listed additions no longer generated (remove them from ADDITIONS): {gone:?}"
    );
    if !out.is_empty() {
        panic!(
            "{name}: {} structural difference(s) from upstream:\n  {}",
            out.len(),
            out.join("\n  ")
        );
    }
}

#[test]
fn every_upstream_crd_is_generated_and_nothing_else() {
    let Some(dir) = reference_dir() else { return };
    let reference: Vec<String> = load_reference(&dir).into_keys().collect();
    let ours: Vec<String> = ours().into_keys().collect();
    assert_eq!(ours, reference);
    let extended: Vec<String> = ours_extended().into_keys().collect();
    assert_eq!(extended, reference);
}

/// The default CRDs, what a hub installs: 14 of 14 equal to upstream's.
#[test]
fn all_fourteen_default_crds_equal_upstreams() {
    let Some(dir) = reference_dir() else { return };
    let reference = load_reference(&dir);
    let ours = ours();
    let different: Vec<(String, usize)> = reference
        .keys()
        .map(|name| {
            (
                name.clone(),
                differences(name, &reference, &ours, &dir).len(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(reference.len(), 14);
    assert!(
        different.is_empty(),
        "{} of 14 CRDs equal upstream's; different: {different:?}",
        14 - different.len()
    );
}

/// The extended CRDs differ from upstream's by the listed fields exactly: the
/// ManifestWorkReplicaSet CRD carries every one, and every other CRD equals upstream's.
#[test]
fn extended_crds_add_exactly_the_listed_fields() {
    let Some(dir) = reference_dir() else { return };
    let reference = load_reference(&dir);
    let extended = ours_extended();
    for name in reference.keys() {
        compare_in(name, &reference, &extended, &dir);
    }
}

/// [`ADDITIONS`] and `ocm_api::crd::REPLICA_SET_EXTENSIONS` list the same fields.
#[test]
fn additions_are_the_listed_extension_fields() {
    let mut listed: Vec<String> = ADDITIONS
        .iter()
        .map(|(_, path, _)| path.replace(".properties.", ".").replace(".items", ""))
        .collect();
    let mut extensions: Vec<String> = ocm_api::crd::REPLICA_SET_EXTENSIONS
        .iter()
        .map(|f| f.path.join("."))
        .collect();
    listed.sort();
    extensions.sort();
    assert_eq!(listed, extensions);
}

macro_rules! conformance {
    ($($test:ident => $name:literal,)*) => {$(
        #[test]
        fn $test() {
            compare($name);
        }
    )*};
}

conformance! {
    manifestworks => "manifestworks.work.open-cluster-management.io",
    appliedmanifestworks => "appliedmanifestworks.work.open-cluster-management.io",
    manifestworkreplicasets => "manifestworkreplicasets.work.open-cluster-management.io",
    managedclusters => "managedclusters.cluster.open-cluster-management.io",
    managedclustersets => "managedclustersets.cluster.open-cluster-management.io",
    managedclustersetbindings => "managedclustersetbindings.cluster.open-cluster-management.io",
    clusterclaims => "clusterclaims.cluster.open-cluster-management.io",
    placements => "placements.cluster.open-cluster-management.io",
    placementdecisions => "placementdecisions.cluster.open-cluster-management.io",
    addonplacementscores => "addonplacementscores.cluster.open-cluster-management.io",
    clustermanagementaddons => "clustermanagementaddons.addon.open-cluster-management.io",
    managedclusteraddons => "managedclusteraddons.addon.open-cluster-management.io",
    addondeploymentconfigs => "addondeploymentconfigs.addon.open-cluster-management.io",
    addontemplates => "addontemplates.addon.open-cluster-management.io",
}

/// The structure of cluster-inventory-api's CRDs, kept in the repository.
fn multicluster_reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference/cluster-inventory-api")
}

fn ours_multicluster() -> BTreeMap<String, Value> {
    ocm_api::multicluster::crds()
        .into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().expect("generated CRD has a name");
            (name, serde_json::to_value(crd).expect("serialize CRD"))
        })
        .collect()
}

#[test]
fn every_cluster_inventory_crd_is_generated_and_nothing_else() {
    let reference: Vec<String> = load_reference(&multicluster_reference_dir())
        .into_keys()
        .collect();
    let ours: Vec<String> = ours_multicluster().into_keys().collect();
    assert_eq!(ours, reference);
}

#[test]
fn clusterprofiles() {
    let dir = multicluster_reference_dir();
    compare_in(
        "clusterprofiles.multicluster.x-k8s.io",
        &load_reference(&dir),
        &ours_multicluster(),
        &dir,
    );
}

#[test]
fn sig_placementdecisions() {
    let dir = multicluster_reference_dir();
    compare_in(
        "placementdecisions.multicluster.x-k8s.io",
        &load_reference(&dir),
        &ours_multicluster(),
        &dir,
    );
}

#[test]
fn additions_are_recognised_only_at_their_path() {
    let name = "manifestworkreplicasets.work.open-cluster-management.io";
    let out = vec![
        format!("{V0}.spec.properties.revisionHistoryLimit: extra in ours ({{}})"),
        format!("{V0}.spec.properties.revisionHistoryLimitX: extra in ours ({{}})"),
        format!("{V0}.status.properties.currentRevision: ours 1 upstream 2"),
    ];
    let (seen, rest) = split_additions(name, out);
    assert_eq!(seen.len(), 1);
    assert_eq!(rest.len(), 2, "{rest:?}");
    let (seen, rest) = split_additions(
        "manifestworks.work.open-cluster-management.io",
        vec![format!(
            "{V0}.spec.properties.revisionHistoryLimit: extra in ours ({{}})"
        )],
    );
    assert!(seen.is_empty());
    assert_eq!(rest.len(), 1);
}
