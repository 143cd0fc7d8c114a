//! Every OCM object example in the seed documents (`shared/seeds/*.txt`, beside the
//! repository) deserializes into its typed struct and serializes back to the same JSON.
//!
//! The seeds are documentation pages turned to text. Examples are found by their
//! `apiVersion:` line and read while the lines look like YAML. Some examples were damaged by
//! the conversion (indentation flattened, prose inside the block) or are deliberately elided
//! (`...`): those are not valid objects and are reported as skipped, with the reason. Every
//! intact OCM example must round-trip.

use std::path::PathBuf;

use serde_json::Value;

fn seeds_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("OCM_SEEDS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("seed documents missing at {} and CI=true", dir.display());
    }
    eprintln!(
        "SKIPPED: seed documents not found at {} (set OCM_SEEDS_DIR)",
        dir.display()
    );
    None
}

/// Cuts YAML examples out of a text page: `(first line number, text)`.
fn extract_examples(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let mut indent = line.len() - trimmed.len();
        let item = trimmed.strip_prefix("- ");
        let first = item.unwrap_or(trimmed);
        if !first.starts_with("apiVersion: ") || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        if item.is_some() {
            // A list item: the object's keys sit two columns further in.
            indent += 2;
        }
        let mut block = vec![first];
        let mut j = i + 1;
        while j < lines.len() {
            let next = lines[j];
            if next.trim().is_empty() {
                let continues = lines.get(j + 1).is_some_and(|l| {
                    l.len() > indent + 1 && l.get(..=indent).is_some_and(|p| p.trim().is_empty())
                });
                if continues {
                    block.push("");
                    j += 1;
                    continue;
                }
                break;
            }
            // Lines indented less than the example (or cut inside a multi-byte character)
            // end it.
            let (Some(margin), Some(body)) = (next.get(..indent), next.get(indent..)) else {
                break;
            };
            if !margin.trim().is_empty() || body.starts_with("---") {
                break;
            }
            let deeper = body.starts_with(' ');
            let key_like = body.split_once(':').is_some_and(|(k, rest)| {
                !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
                    && (rest.is_empty() || rest.starts_with(' '))
            });
            let numbered_prose = body
                .trim_start()
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            let bullet =
                body.trim_start().starts_with(['•', '*']) && !body.trim_start().starts_with("*:");
            // A second top-level `apiVersion:` starts the next object (documents written back
            // to back without `---`).
            let next_object = body.starts_with("apiVersion:");
            if numbered_prose
                || bullet
                || next_object
                || !(deeper || key_like || body.starts_with("- "))
            {
                break;
            }
            block.push(body);
            j += 1;
        }
        out.push((i + 1, block.join("\n")));
        i = j;
    }
    out
}

fn has_ellipsis(v: &Value) -> bool {
    match v {
        Value::String(s) => s.trim() == "..." || s.trim() == "…",
        Value::Array(a) => a.iter().any(has_ellipsis),
        Value::Object(m) => m.values().any(has_ellipsis),
        _ => false,
    }
}

/// The openAPI schema of `apiVersion`/`kind` in our generated CRDs.
fn schema_of(api_version: &str, kind: &str) -> Option<Value> {
    let (group, version) = api_version.split_once('/')?;
    let crd = ocm_api::crds()
        .into_iter()
        .find(|c| c.spec.group == group && c.spec.names.kind == kind)?;
    let version = crd.spec.versions.into_iter().find(|v| v.name == version)?;
    serde_json::to_value(version.schema?.open_api_v3_schema?).ok()
}

/// Drops the fields the API server would prune: those not in the schema, unless the schema
/// keeps unknown fields. Returns the paths it dropped.
fn prune(value: &mut Value, schema: &Value, path: &str, dropped: &mut Vec<String>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                map.retain(|k, _| {
                    let keep = props.contains_key(k) || path.is_empty() && k == "metadata";
                    if !keep {
                        dropped.push(format!("{path}.{k}"));
                    }
                    keep
                });
                for (k, v) in map.iter_mut() {
                    if let Some(child) = props.get(k) {
                        prune(v, child, &format!("{path}.{k}"), dropped);
                    }
                }
            } else if let Some(additional) =
                schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in map.iter_mut() {
                    prune(v, additional, &format!("{path}.{k}"), dropped);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune(item, item_schema, &format!("{path}[{i}]"), dropped);
                }
            }
        }
        _ => {}
    }
}

fn round_trip<T>(value: &Value) -> Result<(), String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("deserialize: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))?;
    if &back == value {
        Ok(())
    } else {
        Err(format!(
            "round trip changed the object:\n  in:  {value}\n  out: {back}"
        ))
    }
}

/// `Some(result)` for an OCM kind we type, `None` for anything else.
fn check(value: &Value) -> Option<Result<(), String>> {
    use ocm_api::{addon, cluster, work};
    let api_version = value.get("apiVersion")?.as_str()?;
    let kind = value.get("kind")?.as_str()?;
    Some(match (api_version, kind) {
        ("work.open-cluster-management.io/v1", "ManifestWork") => {
            round_trip::<work::v1::ManifestWork>(value)
        }
        ("work.open-cluster-management.io/v1", "AppliedManifestWork") => {
            round_trip::<work::v1::AppliedManifestWork>(value)
        }
        ("work.open-cluster-management.io/v1alpha1", "ManifestWorkReplicaSet") => {
            round_trip::<work::v1alpha1::ManifestWorkReplicaSet>(value)
        }
        ("cluster.open-cluster-management.io/v1", "ManagedCluster") => {
            round_trip::<cluster::v1::ManagedCluster>(value)
        }
        ("cluster.open-cluster-management.io/v1alpha1", "ClusterClaim") => {
            round_trip::<cluster::v1alpha1::ClusterClaim>(value)
        }
        ("cluster.open-cluster-management.io/v1alpha1", "AddOnPlacementScore") => {
            round_trip::<cluster::v1alpha1::AddOnPlacementScore>(value)
        }
        ("cluster.open-cluster-management.io/v1beta1", "Placement") => {
            round_trip::<cluster::v1beta1::Placement>(value)
        }
        ("cluster.open-cluster-management.io/v1beta1", "PlacementDecision") => {
            round_trip::<cluster::v1beta1::PlacementDecision>(value)
        }
        ("cluster.open-cluster-management.io/v1beta2", "ManagedClusterSet") => {
            round_trip::<cluster::v1beta2::ManagedClusterSet>(value)
        }
        ("cluster.open-cluster-management.io/v1beta2", "ManagedClusterSetBinding") => {
            round_trip::<cluster::v1beta2::ManagedClusterSetBinding>(value)
        }
        ("addon.open-cluster-management.io/v1alpha1", "ClusterManagementAddOn") => {
            round_trip::<addon::v1alpha1::ClusterManagementAddOn>(value)
        }
        ("addon.open-cluster-management.io/v1alpha1", "ManagedClusterAddOn") => {
            round_trip::<addon::v1alpha1::ManagedClusterAddOn>(value)
        }
        ("addon.open-cluster-management.io/v1alpha1", "AddOnDeploymentConfig") => {
            round_trip::<addon::v1alpha1::AddOnDeploymentConfig>(value)
        }
        ("addon.open-cluster-management.io/v1alpha1", "AddOnTemplate") => {
            round_trip::<addon::v1alpha1::AddOnTemplate>(value)
        }
        ("addon.open-cluster-management.io/v1beta1", "ClusterManagementAddOn") => {
            round_trip::<addon::v1beta1::ClusterManagementAddOn>(value)
        }
        ("addon.open-cluster-management.io/v1beta1", "ManagedClusterAddOn") => {
            round_trip::<addon::v1beta1::ManagedClusterAddOn>(value)
        }
        ("addon.open-cluster-management.io/v1beta1", "AddOnDeploymentConfig") => {
            round_trip::<addon::v1beta1::AddOnDeploymentConfig>(value)
        }
        _ => return None,
    })
}

#[test]
fn every_intact_seed_example_round_trips() {
    let Some(dir) = seeds_dir() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read seeds dir")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let (mut checked, mut skipped, mut failures) = (0usize, Vec::new(), Vec::new());
    let mut pruned = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read seed");
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        for (line, yaml) in extract_examples(&text) {
            let at = format!("{name}:{line}");
            let value: Value = match serde_saphyr::from_str(&yaml) {
                Ok(v) => v,
                Err(_) => {
                    skipped.push(format!(
                        "{at}: not valid YAML (damaged by the page conversion)"
                    ));
                    continue;
                }
            };
            let is_ocm = value
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| a.contains("open-cluster-management.io/"));
            if !is_ocm {
                continue;
            }
            if has_ellipsis(&value) {
                skipped.push(format!("{at}: elided example (`...`)"));
                continue;
            }
            if !value.get("metadata").is_some_and(Value::is_object) {
                skipped.push(format!("{at}: indentation lost in the page conversion"));
                continue;
            }
            let mut value = value;
            let (api_version, kind) = (
                value["apiVersion"].as_str().unwrap_or_default().to_string(),
                value["kind"].as_str().unwrap_or_default().to_string(),
            );
            if let Some(schema) = schema_of(&api_version, &kind) {
                let mut dropped = Vec::new();
                prune(&mut value, &schema, "", &mut dropped);
                if !dropped.is_empty() {
                    pruned.push(format!(
                        "{at}: the API server prunes {}",
                        dropped.join(", ")
                    ));
                }
            }
            match check(&value) {
                None => skipped.push(format!("{at}: not an OCM kind ({})", value["kind"])),
                Some(Ok(())) => checked += 1,
                Some(Err(e)) => failures.push(format!("{at}: {e}")),
            }
        }
    }
    eprintln!(
        "seed examples: {checked} round-tripped, {} skipped:",
        skipped.len()
    );
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    for p in &pruned {
        eprintln!("  note {p}");
    }
    assert!(
        failures.is_empty(),
        "{} seed example(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 15,
        "only {checked} seed examples were checked; the extractor is broken"
    );
}

#[test]
fn extractor_finds_nested_and_stops_at_prose() {
    let text = "Intro\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n\n  namespace: y\n  1. then do this\nmore prose\n  - apiVersion: v1\n    kind: Secret\n  • a bullet: point\napiVersion: v1\nkind: A\napiVersion: v1\nkind: B\n";
    let examples = extract_examples(text);
    assert_eq!(examples.len(), 4);
    assert_eq!(examples[1].1, "apiVersion: v1\nkind: Secret");
    assert_eq!(examples[3].1, "apiVersion: v1\nkind: B");
    assert_eq!(
        examples[0].1,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n\n  namespace: y"
    );
    assert_eq!(examples[1].0, 10);
}
