//! The OCM `CustomResourceDefinition`s, generated from this crate's types.
//!
//! [`crds()`] returns every CRD that upstream OCM installs for the `work`, `cluster` and
//! `addon` API groups, with all served versions. The schemas are derived from the Rust types
//! (descriptions come from their doc comments) and normalised so that they are structurally
//! the same as upstream's: same properties, types, formats, `required` lists, defaults,
//! validation and `x-kubernetes-*` markers.
//!
//! The SIG-Multicluster CRDs OCM can also write to (ClusterProfile and PlacementDecision of
//! `multicluster.x-k8s.io`) are not among them: [`multicluster_crds()`] returns those.
//!
//! # Extended CRDs (our opt-ins)
//!
//! Some of the SDK's opt-ins (ManifestWorkReplicaSet rollback and feedback aggregation) read
//! and write fields upstream's ManifestWorkReplicaSet CRD does not have. [`crds()`] is
//! upstream's, exactly, and is what a hub should install by default. [`extended_crds()`] is
//! the same list with those fields in the ManifestWorkReplicaSet CRD
//! ([`REPLICA_SET_EXTENSIONS`] lists them with the opt-in each belongs to): install it to use
//! the opt-ins (`ocm-crdgen --extended`). A hub that serves upstream's CRD prunes the fields,
//! and [`missing_extensions`] tells a controller which of them an installed CRD lacks.
//!
//! ```
//! let crds = ocm_api::crds();
//! assert_eq!(crds.len(), 14);
//! let mw = crds
//!     .iter()
//!     .find(|c| c.metadata.name.as_deref() == Some("manifestworks.work.open-cluster-management.io"))
//!     .unwrap();
//! assert_eq!(mw.spec.scope, "Namespaced");
//! ```

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::CustomResourceExt;
use serde_json::Value;

use crate::{Error, Result};

/// How one generated CRD version differs from what kube's derive produces.
///
/// kube's derive marks `spec` as required at the root and every `Option` field as
/// `nullable`; upstream's generator does neither unless asked. Each kind states here what
/// upstream asks for.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fixups {
    /// Keep `required: [spec]` at the root of the schema.
    pub(crate) root_spec_required: bool,
    /// Property paths (from the root of the schema, through `properties` and `items`) whose
    /// schema is `nullable: true` upstream.
    pub(crate) nullable: &'static [&'static [&'static str]],
    /// Emit `subresources: {}` when the version has no subresource at all.
    pub(crate) empty_subresources: bool,
}

/// Generates the CRD of `K` and normalises it with `fixups`.
pub(crate) fn generate<K: CustomResourceExt>(fixups: Fixups) -> CustomResourceDefinition {
    let mut crd = K::crd();
    normalize(&mut crd, fixups);
    crd
}

/// Merges the per-version CRDs of one kind into one CRD whose storage version is `storage`.
pub(crate) fn merge(
    versions: Vec<CustomResourceDefinition>,
    storage: &str,
) -> Result<CustomResourceDefinition> {
    let name = versions
        .first()
        .and_then(|c| c.metadata.name.clone())
        .unwrap_or_default();
    kube::core::crd::merge_crds(versions, storage).map_err(|source| Error::CrdMerge {
        name,
        message: source.to_string(),
    })
}

/// Applies the structural normalisation described on [`Fixups`] to every version of `crd`.
pub(crate) fn normalize(crd: &mut CustomResourceDefinition, fixups: Fixups) {
    crd.spec.preserve_unknown_fields = Some(false);
    if crd.spec.names.list_kind.is_none() {
        crd.spec.names.list_kind = Some(format!("{}List", crd.spec.names.kind));
    }
    for version in &mut crd.spec.versions {
        if fixups.empty_subresources && version.subresources.is_none() {
            version.subresources = Some(Default::default());
        }
        let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        strip_nullable(&mut value);
        tidy_descriptions(&mut value);
        restore_int_or_string_types(&mut value);
        add_type_meta(&mut value);
        if !fixups.root_spec_required
            && let Some(obj) = value.as_object_mut()
        {
            let keep: Vec<Value> = obj
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter(|v| *v != "spec").cloned().collect())
                .unwrap_or_default();
            if keep.is_empty() {
                obj.remove("required");
            } else {
                obj.insert("required".into(), Value::Array(keep));
            }
        }
        for path in fixups.nullable {
            if let Some(node) = walk_mut(&mut value, path)
                && let Some(obj) = node.as_object_mut()
            {
                obj.insert("nullable".into(), Value::Bool(true));
            }
        }
        if let Ok(props) = serde_json::from_value::<JSONSchemaProps>(value) {
            *schema = props;
        }
    }
}

/// Adds the `apiVersion`, `kind` and `metadata` properties every Kubernetes object has, and
/// drops the schema title schemars puts at the root.
fn add_type_meta(root: &mut Value) {
    let Some(obj) = root.as_object_mut() else {
        return;
    };
    obj.remove("title");
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(props) = props.as_object_mut() else {
        return;
    };
    props.entry("apiVersion").or_insert_with(|| {
        serde_json::json!({
            "description": "The versioned schema of this representation of the object.",
            "type": "string",
        })
    });
    props.entry("kind").or_insert_with(|| {
        serde_json::json!({
            "description": "The REST resource this object represents, in CamelCase.",
            "type": "string",
        })
    });
    props
        .entry("metadata")
        .or_insert_with(|| serde_json::json!({ "type": "object" }));
}

fn strip_nullable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("nullable");
            for (key, child) in map.iter_mut() {
                // `default` and `enum` hold data, not schemas.
                if key != "default" && key != "enum" && key != "example" {
                    strip_nullable(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nullable),
        _ => {}
    }
}

/// Gives every `x-kubernetes-int-or-string` node the `anyOf: [integer, string]` that upstream's
/// generator writes. kube's structural rewrite empties the branches of such an `anyOf`, and
/// k8s-openapi's `IntOrString` schema has none at all.
fn restore_int_or_string_types(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
                map.insert(
                    "anyOf".into(),
                    serde_json::json!([{ "type": "integer" }, { "type": "string" }]),
                );
            }
            for (key, child) in map.iter_mut() {
                if key != "default" && key != "enum" && key != "example" {
                    restore_int_or_string_types(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(restore_int_or_string_types),
        _ => {}
    }
}

/// Turns the rustdoc-flavoured descriptions schemars takes from doc comments into plain
/// text for `kubectl explain`: rustdoc sections (`# Example` and everything after) are cut,
/// and intra-doc links (``[`Foo`]``, ``[`Foo`](crate::Foo)``) become plain code spans.
fn tidy_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = tidy_description(text);
            }
            for (key, child) in map.iter_mut() {
                if key != "default" && key != "enum" && key != "example" {
                    tidy_descriptions(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy_descriptions),
        _ => {}
    }
}

fn tidy_description(text: &str) -> String {
    let mut kept = Vec::new();
    for line in text.lines() {
        if line.starts_with("# ") {
            break;
        }
        kept.push(line);
    }
    let text = kept.join("\n");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.trim_end();
    while let Some(start) = rest.find("[`") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find("`]") else {
            out.push_str("[`");
            rest = &rest[start + 2..];
            continue;
        };
        let code = &after[..=end];
        let tail = &after[end + 2..];
        let target = tail
            .strip_prefix('(')
            .and_then(|t| t.find(')').map(|close| (&t[..close], &t[close + 1..])));
        match target {
            // A link to a web page stays a link.
            Some((url, _)) if url.contains("://") => {
                let len = 1 + end + 2 + 1 + url.len() + 1;
                out.push_str(&rest[start..start + len]);
                rest = &rest[start + len..];
            }
            Some((path, after_link)) if !path.contains(char::is_whitespace) => {
                out.push_str(code);
                rest = after_link;
            }
            _ => {
                out.push_str(code);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Follows `path` through `properties` (and `items` for arrays) from a schema node.
fn walk_mut<'a>(mut node: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    for segment in path {
        if node.get("items").is_some() && node.get("properties").is_none() {
            node = node.get_mut("items")?;
        }
        node = node.get_mut("properties")?.get_mut(*segment)?;
    }
    Some(node)
}

/// Every OCM `CustomResourceDefinition`: the `work`, `cluster` and `addon` groups, 14 in all,
/// each with all of its served versions, structurally equal to upstream's (the CRDs a hub
/// installs by default).
///
/// The list is ordered by group and then by name. Multi-version addon CRDs are merged, with
/// `v1alpha1` as the storage version, as upstream ships them.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut all = Vec::with_capacity(14);
    all.extend(crate::work::crds());
    all.extend(crate::cluster::crds());
    all.extend(crate::addon::crds());
    all.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    all
}

/// [`crds()`] with our extension fields ([`REPLICA_SET_EXTENSIONS`]) in the
/// ManifestWorkReplicaSet CRD: what a hub installs to use the opt-ins that need them
/// (ManifestWorkReplicaSet rollback and feedback aggregation). Every object valid under
/// [`crds()`] is valid under these.
///
/// ```
/// use ocm_api::crd::{REPLICA_SET_EXTENSIONS, crds, extended_crds, missing_extensions};
///
/// let name = |c: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition| {
///     c.metadata.name.as_deref() == Some("manifestworkreplicasets.work.open-cluster-management.io")
/// };
/// let upstream = crds().into_iter().find(name).unwrap();
/// let extended = extended_crds().into_iter().find(name).unwrap();
/// assert_eq!(missing_extensions(&upstream).len(), REPLICA_SET_EXTENSIONS.len());
/// assert!(missing_extensions(&extended).is_empty());
/// ```
pub fn extended_crds() -> Vec<CustomResourceDefinition> {
    let extended = crate::work::v1alpha1::extended_crd();
    crds()
        .into_iter()
        .map(|crd| {
            if crd.metadata.name == extended.metadata.name {
                extended.clone()
            } else {
                crd
            }
        })
        .collect()
}

/// An opt-in of the SDK that needs fields of the extended CRDs ([`extended_crds()`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum OptIn {
    /// ManifestWorkReplicaSet rollback (`ocm_work::replicaset::rollback`,
    /// `ocm-hub-controller --rollback`).
    Rollback,
    /// ManifestWorkReplicaSet feedback aggregation (`ocm_work::replicaset::feedback`,
    /// `ocm-hub-controller --feedback-aggregation`).
    FeedbackAggregation,
}

impl OptIn {
    /// The `ocm-hub-controller` flag that turns it on.
    pub fn flag(self) -> &'static str {
        match self {
            OptIn::Rollback => "--rollback",
            OptIn::FeedbackAggregation => "--feedback-aggregation",
        }
    }
}

impl std::fmt::Display for OptIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OptIn::Rollback => "rollback",
            OptIn::FeedbackAggregation => "feedback aggregation",
        })
    }
}

/// A field of our extended ManifestWorkReplicaSet CRD that upstream's does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionField {
    /// The field as users write it (`[]` marks the items of a list).
    pub field: &'static str,
    /// Its property path in the version's schema (list items are stepped into on the way).
    pub path: &'static [&'static str],
    /// The opt-in that reads or writes it.
    pub opt_in: OptIn,
}

/// The CRD version that carries the extension fields.
pub const REPLICA_SET_EXTENSIONS_VERSION: &str = "v1alpha1";

/// Every field the extended ManifestWorkReplicaSet CRD adds to upstream's, with its opt-in.
pub const REPLICA_SET_EXTENSIONS: &[ExtensionField] = &[
    ExtensionField {
        field: "spec.revisionHistoryLimit",
        path: &["spec", "revisionHistoryLimit"],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "spec.placementRefs[].rolloutStrategy.failureStrategy",
        path: &[
            "spec",
            "placementRefs",
            "rolloutStrategy",
            "failureStrategy",
        ],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "status.collisionCount",
        path: &["status", "collisionCount"],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "status.currentRevision",
        path: &["status", "currentRevision"],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "status.updateRevision",
        path: &["status", "updateRevision"],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "status.abortedTime",
        path: &["status", "abortedTime"],
        opt_in: OptIn::Rollback,
    },
    ExtensionField {
        field: "spec.feedbackAggregation",
        path: &["spec", "feedbackAggregation"],
        opt_in: OptIn::FeedbackAggregation,
    },
    ExtensionField {
        field: "status.feedbackAggregation",
        path: &["status", "feedbackAggregation"],
        opt_in: OptIn::FeedbackAggregation,
    },
];

/// The schema of `version` of `crd`, as JSON.
fn version_schema(crd: &CustomResourceDefinition, version: &str) -> Option<Value> {
    let schema = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == version)?
        .schema
        .as_ref()?
        .open_api_v3_schema
        .as_ref()?;
    serde_json::to_value(schema).ok()
}

/// The extension fields ([`REPLICA_SET_EXTENSIONS`]) that `crd`, an installed
/// ManifestWorkReplicaSet CRD, would prune from its `v1alpha1` objects: not in its schema, and
/// not under a node that keeps unknown fields. All of them when the version is missing.
pub fn missing_extensions(crd: &CustomResourceDefinition) -> Vec<&'static ExtensionField> {
    let Some(schema) = version_schema(crd, REPLICA_SET_EXTENSIONS_VERSION) else {
        return REPLICA_SET_EXTENSIONS.iter().collect();
    };
    REPLICA_SET_EXTENSIONS
        .iter()
        .filter(|f| !kept(&schema, f.path))
        .collect()
}

/// Whether an object field at `path` survives pruning under `schema`: every step is a
/// declared property, or the node it would be under keeps unknown fields.
fn kept(schema: &Value, path: &[&str]) -> bool {
    let preserves =
        |node: &Value| node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let mut node = schema;
    for segment in path {
        // A list's fields are its items'.
        if node.get("properties").is_none()
            && let Some(items) = node.get("items")
        {
            node = items;
        }
        match node.get("properties").and_then(|p| p.get(*segment)) {
            Some(child) => node = child,
            None => return preserves(node),
        }
    }
    true
}

/// Removes the extension fields from every version of the ManifestWorkReplicaSet CRD.
pub(crate) fn strip_extensions(crd: &mut CustomResourceDefinition) {
    for version in &mut crd.spec.versions {
        let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        for field in REPLICA_SET_EXTENSIONS {
            let Some((last, parent)) = field.path.split_last() else {
                continue;
            };
            if let Some(props) = walk_mut(&mut value, parent)
                .map(|node| {
                    if node.get("items").is_some() && node.get("properties").is_none() {
                        node.get_mut("items")
                    } else {
                        Some(node)
                    }
                })
                .and_then(|node| node?.get_mut("properties"))
                .and_then(Value::as_object_mut)
            {
                props.remove(*last);
            }
        }
        if let Ok(props) = serde_json::from_value::<JSONSchemaProps>(value) {
            *schema = props;
        }
    }
}

/// The SIG-Multicluster CRDs (`multicluster.x-k8s.io`: ClusterProfile and PlacementDecision),
/// generated from [`crate::multicluster`]'s types and structurally the same as
/// cluster-inventory-api's. Install them when the `ClusterProfile` or `SIGPlacementDecision`
/// outputs are on (upstream OCM's cluster manager installs the ClusterProfile CRD with its
/// gate).
///
/// ```
/// let names: Vec<String> = ocm_api::crd::multicluster_crds()
///     .into_iter()
///     .filter_map(|c| c.metadata.name)
///     .collect();
/// assert_eq!(names, ["clusterprofiles.multicluster.x-k8s.io", "placementdecisions.multicluster.x-k8s.io"]);
/// ```
pub fn multicluster_crds() -> Vec<CustomResourceDefinition> {
    crate::multicluster::crds()
}

/// Renders `crd` as YAML, the way `kubectl apply -f` expects it.
pub fn to_yaml(crd: &CustomResourceDefinition) -> Result<String> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    // Go through serde_json::Value so that maps come out in a stable order.
    let value = serde_json::to_value(crd).map_err(|source| Error::Serialize {
        what: format!("CustomResourceDefinition {name}"),
        source: Box::new(source),
    })?;
    serde_saphyr::to_string(&value).map_err(|source| Error::Serialize {
        what: format!("CustomResourceDefinition {name}"),
        source: Box::new(source),
    })
}

#[cfg(test)]
mod tests {
    use super::tidy_description;

    #[test]
    fn descriptions_lose_rustdoc_syntax() {
        assert_eq!(
            tidy_description("See [`Foo`] and [`Bar`](crate::x::Bar), or [`web`](https://a.b/c)."),
            "See `Foo` and `Bar`, or [`web`](https://a.b/c)."
        );
        assert_eq!(
            tidy_description("Intro.\n\nMore.\n\n# Example\n\n```\nlet x = 1;\n```"),
            "Intro.\n\nMore."
        );
        assert_eq!(tidy_description("Odd [`unclosed"), "Odd [`unclosed");
        assert_eq!(tidy_description("a [`b`] (c d)"), "a `b` (c d)");
    }
}
