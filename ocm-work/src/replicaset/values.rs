//! Per-cluster values (our addition, off by default): template variables in a
//! ManifestWorkReplicaSet's manifests, resolved from each selected ManagedCluster into its
//! ManifestWork.
//!
//! Upstream's controller copies `spec.manifestWorkTemplate` to every cluster unchanged, so a
//! value that differs per cluster (a region, an ID from a cluster claim) needs one replica set
//! per cluster or an addon; users ask for this upstream (open-cluster-management-io/api#353).
//! Turn it on with
//! [`ReplicaSetController::with_cluster_values`](super::controller::ReplicaSetController::with_cluster_values)
//! (`ocm-hub-controller --cluster-values`). With it off, the manifests reach the works byte
//! for byte as upstream's controller writes them.
//!
//! # Syntax
//!
//! The variables are written as OCM's addon templates write theirs (`{{CLUSTER_NAME}}`):
//!
//! | variable | value |
//! |---|---|
//! | `{{CLUSTER_NAME}}` | the cluster's name (its namespace on the hub) |
//! | `{{CLUSTER_LABEL:<key>}}` | the value of the cluster's label `<key>`, e.g. `{{CLUSTER_LABEL:region}}` |
//! | `{{CLUSTER_CLAIM:<name>}}` | the value of the cluster claim `<name>` in the ManagedCluster's status, e.g. `{{CLUSTER_CLAIM:id.k8s.io}}` |
//!
//! Spaces just inside the braces are allowed (`{{ CLUSTER_NAME }}`).
//!
//! * Only **string values** of the workload manifests are looked at: object keys, numbers and
//!   booleans are never changed, and a substituted value is always a string, so every
//!   manifest stays well-formed JSON whatever a label holds (no text templating of YAML).
//!   A string may hold several variables and other text (`"{{CLUSTER_NAME}}-cache"`).
//! * Only `{{` followed by `CLUSTER_` opens a variable. Anything else in double braces (a Helm
//!   or Go template in a ConfigMap, a Prometheus alert's `{{ $labels.instance }}`) passes
//!   through untouched. There is no escape for a literal `{{CLUSTER_...}}`.
//! * A malformed variable (unterminated, an unknown `CLUSTER_` name, an empty or invalid
//!   label key or claim name) and a label or claim the cluster does not have are errors
//!   ([`Error::ClusterValue`]) naming the variable, where it is and the cluster. The
//!   controller then writes no ManifestWork for that cluster (an existing one is left as it
//!   is), goes on with the other clusters, and reports the clusters in the replica set's
//!   [`CONDITION_CLUSTER_VALUES_RESOLVED`] condition.
//! * Every cluster the Placements select is resolved on each pass, so the condition names
//!   all failing clusters at once, including those a Progressive rollout has not reached
//!   yet. For the rollout such a cluster is a failure that holds no slot (the rollout
//!   engine's `TimeOut` status, as for a work past its `progressDeadline`): it counts
//!   against the strategy's `maxFailures`; within that the rollout goes on to the next
//!   clusters, past it the rollout stops (and with the rollback opt-in, rolls back).
//!
//! # Example
//!
//! ```
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_api::work::v1::{Manifest, ManifestWorkSpec, ManifestsTemplate};
//! use ocm_work::replicaset::values;
//! use serde_json::json;
//!
//! let cluster: ManagedCluster = serde_json::from_value(json!({
//!     "metadata": {"name": "east1", "labels": {"region": "us-east"}},
//!     "status": {"clusterClaims": [{"name": "id.k8s.io", "value": "a1b2"}]},
//! }))?;
//! let spec = ManifestWorkSpec {
//!     workload: Some(ManifestsTemplate { manifests: Some(vec![Manifest::new(json!({
//!         "apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": {"name": "{{CLUSTER_NAME}}-info", "namespace": "default"},
//!         "data": {"region": "{{CLUSTER_LABEL:region}}", "id": "{{ CLUSTER_CLAIM:id.k8s.io }}",
//!                  "alert": "{{ $labels.instance }}"},
//!     }))]) }),
//!     ..Default::default()
//! };
//! assert!(values::uses_variables(&spec));
//! let resolved = values::resolve(&spec, "east1", Some(&cluster))?;
//! let cm = resolved.manifests()[0].as_value();
//! assert_eq!(cm["metadata"]["name"], "east1-info");
//! assert_eq!(cm["data"], json!({"region": "us-east", "id": "a1b2", "alert": "{{ $labels.instance }}"}));
//!
//! // A label the cluster does not have: an error naming the variable and the cluster.
//! let mut west = cluster.clone();
//! west.metadata.labels = None;
//! let err = values::resolve(&spec, "west1", Some(&west)).unwrap_err();
//! assert!(err.to_string().contains("{{CLUSTER_LABEL:region}}"));
//! assert!(err.to_string().contains("west1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;

use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::k8s::names;
use ocm_api::work::v1::{Manifest, ManifestWorkSpec};
use serde_json::Value;

use crate::{Error, Result};

/// The condition a controller with per-cluster values writes on every replica set: `True`
/// (reason [`REASON_CLUSTER_VALUES_RESOLVED`]) when every cluster it tried got its values,
/// else `False` (reason [`REASON_CLUSTER_VALUES_INVALID`]) with the clusters and variables at
/// fault in the message.
pub const CONDITION_CLUSTER_VALUES_RESOLVED: &str = "ClusterValuesResolved";
/// Reason of `ClusterValuesResolved=True`.
pub const REASON_CLUSTER_VALUES_RESOLVED: &str = "AsExpected";
/// Reason of `ClusterValuesResolved=False`: some clusters got no ManifestWork.
pub const REASON_CLUSTER_VALUES_INVALID: &str = "ClusterValuesInvalid";
/// How many clusters the `ClusterValuesResolved=False` message names before it only counts.
pub const MAX_CLUSTERS_IN_MESSAGE: usize = 5;

const OPEN: &str = "{{";
const CLOSE: &str = "}}";
const PREFIX: &str = "CLUSTER_";

/// A template variable, parsed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Variable {
    /// `{{CLUSTER_NAME}}`.
    ClusterName,
    /// `{{CLUSTER_LABEL:<key>}}`.
    Label(String),
    /// `{{CLUSTER_CLAIM:<name>}}`.
    Claim(String),
}

impl Variable {
    /// Parses the text between the braces (already trimmed), or says why it is malformed.
    pub fn parse(inner: &str) -> std::result::Result<Self, String> {
        if inner == "CLUSTER_NAME" {
            return Ok(Self::ClusterName);
        }
        if let Some(key) = inner.strip_prefix("CLUSTER_LABEL:") {
            let errors = names::label_key_errors(key);
            if key.is_empty() {
                return Err("the label key is empty".into());
            }
            if !errors.is_empty() {
                return Err(format!(
                    "{key:?} is not a valid label key: {}",
                    errors.join("; ")
                ));
            }
            return Ok(Self::Label(key.to_string()));
        }
        if let Some(name) = inner.strip_prefix("CLUSTER_CLAIM:") {
            if name.is_empty() {
                return Err("the claim name is empty".into());
            }
            let errors = names::dns1123_subdomain_errors(name);
            if !errors.is_empty() {
                return Err(format!(
                    "{name:?} is not a valid claim name: {}",
                    errors.join("; ")
                ));
            }
            return Ok(Self::Claim(name.to_string()));
        }
        Err(
            "unknown variable: expected CLUSTER_NAME, CLUSTER_LABEL:<key> or \
             CLUSTER_CLAIM:<name>"
                .into(),
        )
    }

    /// The value for cluster `name` (whose ManagedCluster is `cluster`, if there is one).
    fn value<'a>(
        &self,
        name: &'a str,
        cluster: Option<&'a ManagedCluster>,
    ) -> std::result::Result<&'a str, String> {
        match self {
            Self::ClusterName => Ok(name),
            Self::Label(key) => {
                let cluster = cluster.ok_or_else(|| no_cluster(name))?;
                cluster
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(key))
                    .map(String::as_str)
                    .ok_or_else(|| format!("the ManagedCluster has no label {key:?}"))
            }
            Self::Claim(claim) => {
                let cluster = cluster.ok_or_else(|| no_cluster(name))?;
                cluster
                    .claim(claim)
                    .ok_or_else(|| format!("the ManagedCluster reports no cluster claim {claim:?}"))
            }
        }
    }
}

fn no_cluster(name: &str) -> String {
    format!("there is no ManagedCluster {name:?}")
}

/// Whether some string in the template's workload manifests holds `{{` followed by
/// `CLUSTER_` (a variable, perhaps malformed). When none does, [`resolve`] returns the
/// template unchanged and the controller needs no ManagedCluster.
pub fn uses_variables(spec: &ManifestWorkSpec) -> bool {
    spec.manifests()
        .iter()
        .any(|m| value_uses_variables(m.as_value()))
}

/// (Each level on a stack that grows as needed: manifests nest as deep as the API server
/// takes.)
fn value_uses_variables(value: &Value) -> bool {
    match value {
        Value::String(s) => opens_variable(s).is_some(),
        Value::Array(items) => {
            ocm_api::k8s::json::descend(|| items.iter().any(value_uses_variables))
        }
        Value::Object(map) => {
            ocm_api::k8s::json::descend(|| map.values().any(value_uses_variables))
        }
        _ => false,
    }
}

/// The byte offset of the first `{{` that opens a variable in `text`.
fn opens_variable(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(OPEN) {
        let start = from + at;
        if text[start + OPEN.len()..]
            .trim_start_matches(' ')
            .starts_with(PREFIX)
        {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

/// A variable that could not be resolved, before the cluster and place are added.
struct Unresolved {
    variable: String,
    problem: String,
}

/// Substitutes the variables of one string.
fn resolve_str<'a>(
    text: &'a str,
    name: &str,
    cluster: Option<&ManagedCluster>,
) -> std::result::Result<Cow<'a, str>, Unresolved> {
    let Some(first) = opens_variable(text) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    loop {
        // `rest` starts with a `{{` that opens a variable.
        let body = &rest[OPEN.len()..];
        let Some(end) = body.find(CLOSE) else {
            let shown: String = rest.chars().take(40).collect();
            return Err(Unresolved {
                variable: shown,
                problem: "the variable is not closed with }}".into(),
            });
        };
        let written = &rest[..OPEN.len() + end + CLOSE.len()];
        let variable =
            Variable::parse(body[..end].trim_matches(' ')).map_err(|problem| Unresolved {
                variable: written.to_string(),
                problem,
            })?;
        let value = variable
            .value(name, cluster)
            .map_err(|problem| Unresolved {
                variable: written.to_string(),
                problem,
            })?;
        out.push_str(value);
        rest = &rest[written.len()..];
        match opens_variable(rest) {
            Some(next) => {
                out.push_str(&rest[..next]);
                rest = &rest[next..];
            }
            None => {
                out.push_str(rest);
                return Ok(Cow::Owned(out));
            }
        }
    }
}

/// Substitutes in place every string under `value`; `path` is its JSON path, for errors.
/// (Each level on a stack that grows as needed.)
fn resolve_value(
    value: &mut Value,
    path: &mut String,
    name: &str,
    cluster: Option<&ManagedCluster>,
) -> std::result::Result<(), (String, Unresolved)> {
    ocm_api::k8s::json::descend(|| resolve_level(value, path, name, cluster))
}

fn resolve_level(
    value: &mut Value,
    path: &mut String,
    name: &str,
    cluster: Option<&ManagedCluster>,
) -> std::result::Result<(), (String, Unresolved)> {
    match value {
        Value::String(s) => {
            if let Cow::Owned(new) = resolve_str(s, name, cluster).map_err(|u| (path.clone(), u))? {
                *s = new;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                resolve_value(item, path, name, cluster)?;
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                resolve_value(item, path, name, cluster)?;
                path.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// `spec` with the variables of its workload manifests resolved for cluster `name`, whose
/// ManagedCluster is `cluster` (`None` when there is none: then only `{{CLUSTER_NAME}}`
/// resolves).
///
/// The first variable that is malformed or has no value gives [`Error::ClusterValue`]. A
/// template without variables comes back unchanged.
pub fn resolve(
    spec: &ManifestWorkSpec,
    name: &str,
    cluster: Option<&ManagedCluster>,
) -> Result<ManifestWorkSpec> {
    let mut out = spec.clone();
    let Some(manifests) = out.workload.as_mut().and_then(|w| w.manifests.as_mut()) else {
        return Ok(out);
    };
    for (i, manifest) in manifests.iter_mut().enumerate() {
        let mut path = String::new();
        if let Err((path, unresolved)) =
            resolve_value(manifest.as_value_mut(), &mut path, name, cluster)
        {
            return Err(Error::ClusterValue {
                cluster: name.to_string(),
                variable: unresolved.variable,
                location: location(i, &spec.manifests()[i], &path),
                problem: unresolved.problem,
            });
        }
    }
    Ok(out)
}

/// `manifest 0 (ConfigMap default/web) at data.region`.
fn location(index: usize, manifest: &Manifest, path: &str) -> String {
    let object = match (manifest.namespace(), manifest.name()) {
        (Some(ns), Some(n)) => format!("{ns}/{n}"),
        (None, Some(n)) => n.to_string(),
        _ => "?".to_string(),
    };
    format!(
        "manifest {index} ({} {object}) at {}",
        manifest.kind().unwrap_or("?"),
        if path.is_empty() { "." } else { path }
    )
}

/// The `ClusterValuesResolved=False` message for the clusters that got no work (sorted by
/// cluster): the first [`MAX_CLUSTERS_IN_MESSAGE`] errors, then how many more there are.
pub fn invalid_message(errors: &[&Error]) -> String {
    let shown: Vec<String> = errors
        .iter()
        .take(MAX_CLUSTERS_IN_MESSAGE)
        .map(ToString::to_string)
        .collect();
    let mut message = format!(
        "{} cluster{} got no ManifestWork: {}",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" },
        shown.join("; ")
    );
    if errors.len() > MAX_CLUSTERS_IN_MESSAGE {
        message.push_str(&format!(
            "; and {} more",
            errors.len() - MAX_CLUSTERS_IN_MESSAGE
        ));
    }
    message
}

/// Remembers, per ManagedCluster, a fingerprint of what the variables can read (its labels
/// and cluster claims), so the controller's ManagedCluster watch reconciles the replica sets
/// only when one of those changed, not on every status heartbeat or condition update.
#[derive(Debug, Default)]
pub(crate) struct ClusterInputs {
    seen: std::sync::Mutex<std::collections::HashMap<String, u64>>,
}

impl ClusterInputs {
    /// Whether `cluster`'s labels or claims differ from the last time it was seen (a cluster
    /// seen for the first time has changed). Records what it sees.
    pub(crate) fn changed(&self, cluster: &ManagedCluster) -> bool {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        cluster.metadata.labels.hash(&mut hasher);
        let claims = cluster
            .status
            .as_ref()
            .and_then(|s| s.cluster_claims.as_deref())
            .unwrap_or_default();
        for claim in claims {
            (&claim.name, &claim.value).hash(&mut hasher);
        }
        let fingerprint = hasher.finish();
        let name = cluster.metadata.name.clone().unwrap_or_default();
        // A poisoned lock only means another mapper call panicked; the map is still usable.
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(name, fingerprint) != Some(fingerprint)
    }
}

#[cfg(test)]
mod tests {
    use ocm_api::work::v1::ManifestsTemplate;
    use serde_json::json;

    use super::*;

    fn cluster() -> ManagedCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "east1", "labels": {"region": "us-east", "example.com/tier": "gold"}},
            "status": {"clusterClaims": [{"name": "id.k8s.io", "value": "a1b2"}]},
        }))
        .unwrap()
    }

    fn spec(manifest: Value) -> ManifestWorkSpec {
        ManifestWorkSpec {
            workload: Some(ManifestsTemplate {
                manifests: Some(vec![Manifest::new(manifest)]),
            }),
            ..Default::default()
        }
    }

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "web", "namespace": "default"}, "data": data})
    }

    fn resolve_one(text: &str) -> Result<Value> {
        let c = cluster();
        let s = resolve(&spec(cm(json!({"k": text}))), "east1", Some(&c))?;
        Ok(s.manifests()[0].as_value()["data"]["k"].clone())
    }

    fn error_of(text: &str) -> (String, String, String, String) {
        match resolve_one(text) {
            Err(Error::ClusterValue {
                cluster,
                variable,
                location,
                problem,
            }) => (cluster, variable, location, problem),
            other => panic!("{text}: expected a ClusterValue error, got {other:?}"),
        }
    }

    #[test]
    fn each_variable_resolves_inside_other_text() {
        assert_eq!(resolve_one("{{CLUSTER_NAME}}").unwrap(), "east1");
        assert_eq!(resolve_one("{{ CLUSTER_NAME }}").unwrap(), "east1");
        assert_eq!(
            resolve_one("r={{CLUSTER_LABEL:region}},t={{CLUSTER_LABEL:example.com/tier}}.")
                .unwrap(),
            "r=us-east,t=gold."
        );
        assert_eq!(
            resolve_one("{{CLUSTER_CLAIM:id.k8s.io}}{{CLUSTER_NAME}}").unwrap(),
            "a1b2east1"
        );
    }

    #[test]
    fn other_braces_and_non_strings_are_left_alone() {
        assert_eq!(
            resolve_one("{{ $labels.instance }} {{.Values.x}} {CLUSTER_NAME}").unwrap(),
            "{{ $labels.instance }} {{.Values.x}} {CLUSTER_NAME}"
        );
        let c = cluster();
        let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"{{CLUSTER_NAME}}": "x"}},
            "spec": {"replicas": 3, "paused": false, "template": {"spec": {"containers": [
                {"name": "c", "args": ["--id={{CLUSTER_CLAIM:id.k8s.io}}", "--v=2"]}]}}}});
        let out = resolve(&spec(manifest.clone()), "east1", Some(&c)).unwrap();
        let mut expected = manifest;
        expected["spec"]["template"]["spec"]["containers"][0]["args"][0] = json!("--id=a1b2");
        // Keys are never substituted; numbers and booleans stay as they are.
        assert_eq!(out.manifests()[0].as_value(), &expected);
    }

    #[test]
    fn a_value_with_json_or_yaml_syntax_stays_one_string() {
        let mut c = cluster();
        c.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("region".into(), "\"}, {\"x\": 1".into());
        let s = resolve(
            &spec(cm(json!({"k": "{{CLUSTER_LABEL:region}}"}))),
            "east1",
            Some(&c),
        )
        .unwrap();
        assert_eq!(
            s.manifests()[0].as_value()["data"],
            json!({"k": "\"}, {\"x\": 1"})
        );
    }

    #[test]
    fn a_template_without_variables_comes_back_unchanged() {
        let s = spec(cm(json!({"k": "{{ $labels.instance }}"})));
        assert!(!uses_variables(&s));
        assert_eq!(resolve(&s, "east1", None).unwrap(), s);
        assert!(uses_variables(&spec(cm(json!({"k": ["{{ CLUSTER_X"]})))));
    }

    #[test]
    fn a_missing_label_names_the_variable_the_place_and_the_cluster() {
        let (cluster, variable, location, problem) = error_of("x-{{CLUSTER_LABEL:zone}}");
        assert_eq!(cluster, "east1");
        assert_eq!(variable, "{{CLUSTER_LABEL:zone}}");
        assert_eq!(location, "manifest 0 (ConfigMap default/web) at data.k");
        assert_eq!(problem, "the ManagedCluster has no label \"zone\"");
        let err = resolve_one("{{CLUSTER_LABEL:zone}}").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cluster east1: {{CLUSTER_LABEL:zone}} in manifest 0 (ConfigMap default/web) at \
             data.k: the ManagedCluster has no label \"zone\""
        );
    }

    #[test]
    fn a_missing_claim_is_an_error() {
        let (_, variable, _, problem) = error_of("{{CLUSTER_CLAIM:region.example.com}}");
        assert_eq!(variable, "{{CLUSTER_CLAIM:region.example.com}}");
        assert_eq!(
            problem,
            "the ManagedCluster reports no cluster claim \"region.example.com\""
        );
    }

    #[test]
    fn without_a_managed_cluster_only_the_name_resolves() {
        let s = spec(cm(json!({"a": "{{CLUSTER_NAME}}"})));
        let out = resolve(&s, "gone", None).unwrap();
        assert_eq!(out.manifests()[0].as_value()["data"]["a"], "gone");
        let s = spec(cm(json!({"a": "{{CLUSTER_LABEL:region}}"})));
        let err = resolve(&s, "gone", None).unwrap_err().to_string();
        assert!(err.contains("there is no ManagedCluster \"gone\""), "{err}");
    }

    #[test]
    fn malformed_variables_are_errors() {
        let (_, variable, _, problem) = error_of("a {{CLUSTER_NAME b");
        assert_eq!(variable, "{{CLUSTER_NAME b");
        assert_eq!(problem, "the variable is not closed with }}");
        let (_, variable, _, problem) = error_of("{{CLUSTER_ZONE}}");
        assert_eq!(variable, "{{CLUSTER_ZONE}}");
        assert!(problem.starts_with("unknown variable"), "{problem}");
        let (_, _, _, problem) = error_of("{{CLUSTER_LABEL:}}");
        assert_eq!(problem, "the label key is empty");
        let (_, variable, _, problem) = error_of("{{CLUSTER_LABEL:bad key!}}");
        assert_eq!(variable, "{{CLUSTER_LABEL:bad key!}}");
        assert!(
            problem.starts_with("\"bad key!\" is not a valid label key"),
            "{problem}"
        );
        let (_, _, _, problem) = error_of("{{CLUSTER_CLAIM:}}");
        assert_eq!(problem, "the claim name is empty");
        let (_, _, _, problem) = error_of("{{CLUSTER_CLAIM:Not_A_Name}}");
        assert!(
            problem.starts_with("\"Not_A_Name\" is not a valid claim name"),
            "{problem}"
        );
    }

    #[test]
    fn the_message_lists_a_few_clusters_then_counts() {
        let errors: Vec<Error> = (0..7)
            .map(|i| Error::ClusterValue {
                cluster: format!("c{i}"),
                variable: "{{CLUSTER_NAME".into(),
                location: "manifest 0 (ConfigMap a) at data".into(),
                problem: "p".into(),
            })
            .collect();
        let refs: Vec<&Error> = errors.iter().collect();
        let m = invalid_message(&refs);
        assert!(
            m.starts_with("7 clusters got no ManifestWork: cluster c0: "),
            "{m}"
        );
        assert!(
            m.contains("cluster c4:") && !m.contains("cluster c5:"),
            "{m}"
        );
        assert!(m.ends_with("; and 2 more"), "{m}");
        assert!(invalid_message(&refs[..1]).starts_with("1 cluster got no ManifestWork: "));
    }

    #[test]
    fn only_label_and_claim_changes_count_as_changes_of_a_cluster() {
        let inputs = ClusterInputs::default();
        let mut c = cluster();
        assert!(inputs.changed(&c), "first sight");
        assert!(!inputs.changed(&c), "seen unchanged");

        // A heartbeat: conditions and resources change, labels and claims do not.
        c.status.as_mut().unwrap().conditions = Some(vec![]);
        c.metadata.resource_version = Some("42".into());
        assert!(!inputs.changed(&c));

        c.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("region".into(), "eu-central".into());
        assert!(inputs.changed(&c), "label value");
        assert!(!inputs.changed(&c));

        c.status.as_mut().unwrap().cluster_claims.as_mut().unwrap()[0].value = Some("c3d4".into());
        assert!(inputs.changed(&c), "claim value");

        let mut other = cluster();
        other.metadata.name = Some("west1".into());
        assert!(inputs.changed(&other), "another cluster is tracked apart");
    }
}
