//! The `ServerSideApply` strategy: server-side apply with the configured field manager and
//! `force`, `ignoreFields`, and the configuration-hash annotation.
//!
//! Without `ignoreFields` the manifest is applied as it is (null `creationTimestamp`s and
//! `managedFields` removed) on every apply pass, as upstream does; the server makes an
//! identical apply a no-op. With `ignoreFields`, the fields listed under `OnSpokePresent` (JSON
//! paths of plain fields, JSON pointers and jq path expressions, see [`super::jq`]) are removed
//! from the manifest, the result is hashed ([`super::hash::config_hash`]) and the hash stored
//! in the `open-cluster-management.io/config-spec-hash` annotation:
//!
//! * a missing object is applied whole (ignored fields included), with the annotation;
//! * an object whose annotation holds the same hash is left alone (only the work's owner
//!   reference is set): the fields the manifest ignores keep what the managed cluster has;
//! * any other object gets the manifest without the ignored fields.
//!
//! [`ServerSideApplyPlan`] makes those decisions without I/O; [`ServerSideApplier`] carries
//! them out.

use futures::future::BoxFuture;
use kube::api::{Patch, PatchParams};
use ocm_api::constants::{annotations, work as wc};
use ocm_api::work::v1::{IgnoreField, IgnoreFieldsCondition, ServerSideApplyConfig};
use serde_json::{Value, json};

use super::applier::{Applier, ApplyRequest};
use super::engine::ApplyError;
use super::hash::config_hash;
use super::metadata::remove_null_creation_timestamps;

/// What `ServerSideApply` sends for one manifest, decided before the live object is read.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSideApplyPlan {
    /// The field manager (`work-agent` unless configured).
    pub field_manager: String,
    /// Whether conflicts with other field managers are forced.
    pub force: bool,
    /// The manifest to apply when the object is missing (or when nothing is ignored).
    manifest: Value,
    /// With `ignoreFields`: the manifest without the ignored fields, and its hash.
    ignored: Option<(Value, String)>,
}

/// What to do once the live object is known (see [`ServerSideApplyPlan::decide`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerSideApplyStep<'a> {
    /// Server-side apply this object.
    Apply(&'a Value),
    /// The object already carries the manifest's hash: only set the work's owner reference;
    /// should that fail, apply this object instead.
    KeepLive {
        /// What to apply when the owner reference cannot be set from the (maybe stale) copy.
        fallback: &'a Value,
    },
}

impl ServerSideApplyPlan {
    /// Prepares the apply of `manifest` (without `metadata.uid`) with `config`: cleans it and,
    /// with `ignoreFields`, removes the ignored fields and computes the hash. Fails when an
    /// `ignoreFields` entry cannot be processed (a JSON pointer or jq error). A jq expression
    /// may run for up to a second: call this off the async threads when the config has some
    /// ([`ServerSideApplyPlan::runs_jq`]).
    pub fn new(mut manifest: Value, config: &ServerSideApplyConfig) -> Result<Self, ApplyError> {
        remove_null_creation_timestamps(&mut manifest);
        if let Some(m) = manifest.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        let field_manager = config
            .field_manager
            .clone()
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| wc::DEFAULT_FIELD_MANAGER.to_string());
        let force = config.force.unwrap_or(false);
        let ignore = config.ignore_fields.as_deref().unwrap_or_default();
        if ignore.is_empty() {
            return Ok(Self {
                field_manager,
                force,
                manifest,
                ignored: None,
            });
        }
        let mut required = remove_ignored_fields(manifest.clone(), ignore)?;
        let hash = config_hash(&required);
        for object in [&mut required, &mut manifest] {
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                if let Some(map) = annotations.as_object_mut() {
                    map.insert(
                        annotations::CONFIG_SPEC_HASH.into(),
                        Value::String(hash.clone()),
                    );
                }
            }
        }
        Ok(Self {
            field_manager,
            force,
            manifest,
            ignored: Some((required, hash)),
        })
    }

    /// Whether preparing `config` runs jq expressions (so [`ServerSideApplyPlan::new`] may
    /// block for up to a second per expression); the first one, when it does.
    pub fn runs_jq(config: &ServerSideApplyConfig) -> Option<&str> {
        config
            .ignore_fields
            .iter()
            .flatten()
            .filter(|f| f.condition == IgnoreFieldsCondition::OnSpokePresent)
            .flat_map(|f| f.jq_path_expressions.iter().flatten())
            .map(String::as_str)
            .next()
    }

    /// Whether the decision needs the live object (only with `ignoreFields`; otherwise the
    /// manifest is applied without reading).
    pub fn needs_live(&self) -> bool {
        self.ignored.is_some()
    }

    /// The configuration hash, with `ignoreFields`.
    pub fn hash(&self) -> Option<&str> {
        self.ignored.as_ref().map(|(_, hash)| hash.as_str())
    }

    /// The patch parameters: apply with the field manager, forced when configured.
    pub fn params(&self) -> PatchParams {
        let params = PatchParams::apply(&self.field_manager);
        if self.force { params.force() } else { params }
    }

    /// What to send given the `live` object (only looked at with `ignoreFields`).
    pub fn decide(&self, live: Option<&Value>) -> ServerSideApplyStep<'_> {
        let Some((required, hash)) = &self.ignored else {
            return ServerSideApplyStep::Apply(&self.manifest);
        };
        let Some(live) = live else {
            return ServerSideApplyStep::Apply(&self.manifest);
        };
        let same = live
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(annotations::CONFIG_SPEC_HASH))
            .and_then(Value::as_str)
            == Some(hash.as_str());
        if same {
            ServerSideApplyStep::KeepLive { fallback: required }
        } else {
            ServerSideApplyStep::Apply(required)
        }
    }
}

/// `manifest` without the fields the `OnSpokePresent` entries of `ignore` name: their JSON
/// paths, JSON pointers and jq path expressions, in that order per entry.
pub fn remove_ignored_fields(
    mut manifest: Value,
    ignore: &[IgnoreField],
) -> Result<Value, ApplyError> {
    for field in ignore
        .iter()
        .filter(|f| f.condition == IgnoreFieldsCondition::OnSpokePresent)
    {
        for path in field.json_paths.iter().flatten() {
            remove_json_path(&mut manifest, path);
        }
        for pointer in field.json_pointers.iter().flatten() {
            remove_json_pointer(&mut manifest, pointer)?;
        }
        for expr in field.jq_path_expressions.iter().flatten() {
            delete_jq_paths(&mut manifest, expr)?;
        }
    }
    Ok(manifest)
}

/// Removes the field a Kubernetes JSONPath names from `object`, as upstream's work agent does:
/// the path is split on `.`, its last segment is the key to delete, and the rest (the parent
/// path, filters and indexes included) is evaluated as a kubectl JSONPath with missing keys
/// allowed; the key is deleted from every map it yields. Hence, as upstream: a path ending in a
/// filter or an index removes nothing (its "parent" does not parse), a dot inside a filter's
/// literal breaks the split, and a path that does not parse removes nothing (upstream logs the
/// parse error; so does this, at debug level).
fn remove_json_path(object: &mut Value, path: &str) {
    let last = path.rsplit('.').next().unwrap_or(path);
    let parent = path.strip_suffix(&format!(".{last}")).unwrap_or(path);
    let template = match ocm_feedback::jsonpath::Template::parse(&format!("{{{parent}}}")) {
        Ok(template) => template.allow_missing_keys(true),
        Err(error) => {
            tracing::debug!(path, parent, %error, "ignoreFields JSONPath does not parse; nothing removed");
            return;
        }
    };
    // The maps the parent path selects, by address: found with shared borrows, then deleted
    // from in one mutable walk of the object.
    let targets: std::collections::HashSet<usize> = match template.find_results(object) {
        Ok(results) => results
            .iter()
            .flatten()
            .filter_map(|m| m.as_json())
            .filter(|v| v.is_object())
            .map(|v| std::ptr::from_ref(v) as usize)
            .collect(),
        Err(error) => {
            tracing::debug!(path, parent, %error, "ignoreFields JSONPath failed; nothing removed");
            return;
        }
    };
    if targets.is_empty() {
        return;
    }
    let mut stack: Vec<&mut Value> = vec![object];
    while let Some(node) = stack.pop() {
        let address = std::ptr::from_ref::<Value>(node) as usize;
        if targets.contains(&address)
            && let Some(map) = node.as_object_mut()
        {
            map.remove(last);
        }
        match node {
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn remove_json_pointer(object: &mut Value, pointer: &str) -> Result<(), ApplyError> {
    if object.pointer(pointer).is_none() {
        return Ok(());
    }
    let patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": pointer}])).map_err(|e| {
            ApplyError::IgnoreField(format!("JSON Pointer error in '{pointer}': {e}"))
        })?;
    json_patch::patch(object, &patch)
        .map_err(|e| ApplyError::IgnoreField(format!("JSON Pointer error in '{pointer}': {e}")))
}

/// `del(<expr>)` on `object`; messages quote the expression, cut so that the condition stays
/// within the API's limit.
fn delete_jq_paths(object: &mut Value, expr: &str) -> Result<(), ApplyError> {
    super::jq::delete_paths(object, expr).map_err(|e| {
        ApplyError::IgnoreField(format!(
            "JQ expression error in '{}': {e}",
            super::jq::quoted(expr)
        ))
    })
}

/// The `ServerSideApply` strategy (see the [module docs](self)). A conflict with another field
/// manager is [`ApplyError::Conflict`] (reported on the manifest, not retried before the next
/// resync, as upstream).
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerSideApplier;

impl ServerSideApplier {
    /// [`ServerSideApplyPlan::new`], off the async threads when jq expressions run.
    async fn plan(
        manifest: Value,
        config: ServerSideApplyConfig,
    ) -> Result<ServerSideApplyPlan, ApplyError> {
        let Some(first_jq) = ServerSideApplyPlan::runs_jq(&config).map(str::to_string) else {
            return ServerSideApplyPlan::new(manifest, &config);
        };
        match tokio::task::spawn_blocking(move || ServerSideApplyPlan::new(manifest, &config)).await
        {
            Ok(plan) => plan,
            Err(e) => Err(ApplyError::IgnoreField(format!(
                "JQ expression error in '{}': jq expression execution cancelled: {e}",
                super::jq::quoted(&first_jq)
            ))),
        }
    }
}

impl Applier for ServerSideApplier {
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move {
            let config = request
                .config
                .and_then(|c| c.update_strategy.as_ref())
                .and_then(|s| s.server_side_apply.clone())
                .unwrap_or_default();
            let plan = Self::plan(request.required.clone(), config).await?;
            let object = match plan.decide(None) {
                ServerSideApplyStep::Apply(object) if !plan.needs_live() => object,
                _ => {
                    let live = request.read(false).await?.0;
                    match (plan.decide(live.as_deref()), live.as_deref()) {
                        (ServerSideApplyStep::KeepLive { fallback }, Some(live)) => {
                            match request.set_owner(live).await {
                                Ok(v) => return Ok(v),
                                // The cached copy may be stale: apply for real.
                                Err(_) => fallback,
                            }
                        }
                        (ServerSideApplyStep::KeepLive { fallback: object }, None)
                        | (ServerSideApplyStep::Apply(object), _) => object,
                    }
                }
            };
            request.count("apply");
            let applied = match request
                .api()
                .patch(request.name(), &plan.params(), &Patch::Apply(object))
                .await
            {
                Ok(obj) => request.written(&obj)?,
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    return Err(ApplyError::Conflict(status.message.clone()));
                }
                Err(e) => return Err(e.into()),
            };
            request.set_owner(&applied).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::IgnoreField;

    #[test]
    fn json_paths_and_pointers_remove_fields() {
        let mut obj = json!({"spec": {"replicas": 3, "template": {"a": 1}}, "metadata": {"labels": {"x": "y", "z": "w"}}});
        remove_json_path(&mut obj, ".spec.replicas");
        remove_json_path(&mut obj, ".metadata.labels.x");
        // Upstream does not strip braces: the parent `{.metadata.labels` does not parse.
        remove_json_path(&mut obj, "{.metadata.labels.z}");
        remove_json_path(&mut obj, ".spec.missing.deep");
        remove_json_path(&mut obj, ".spec.containers[0]");
        assert_eq!(
            obj,
            json!({"spec": {"template": {"a": 1}}, "metadata": {"labels": {"z": "w"}}})
        );
        remove_json_pointer(&mut obj, "/spec/template/a").unwrap();
        remove_json_pointer(&mut obj, "/not/there").unwrap();
        assert_eq!(obj["spec"]["template"], json!({}));
    }

    fn containers() -> Value {
        json!({"spec": {"name": "name1", "replicas": 1, "containers": [
            {"name": "container1", "image": "test", "env": [{"name": "A", "value": "1"}]},
            {"name": "container2", "image": "test", "env": [{"name": "B", "value": "2"}]}
        ]}})
    }

    /// Upstream's cases (server_side_apply_test.go, TestRemoveFieldByJSONPath) and the
    /// filter forms its algorithm allows.
    #[test]
    fn json_paths_with_filters_and_indexes_remove_as_upstream() {
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.replicas");
        remove_json_path(&mut obj, ".spec.containers");
        assert_eq!(obj, json!({"spec": {"name": "name1"}}));

        // A filter selects the element whose key is removed.
        let mut obj = containers();
        remove_json_path(
            &mut obj,
            r#".spec.containers[?(@.name=="container1")].image"#,
        );
        assert_eq!(
            obj["spec"]["containers"][0],
            json!({"name": "container1", "env": [{"name": "A", "value": "1"}]})
        );
        assert_eq!(obj["spec"]["containers"][1]["image"], "test");

        // The issue's example: the env of one container only.
        let mut obj = containers();
        remove_json_path(&mut obj, r#".spec.containers[?(@.name=="container2")].env"#);
        assert!(obj["spec"]["containers"][1].get("env").is_none());
        assert_eq!(obj["spec"]["containers"][0]["env"][0]["name"], "A");

        // Indexes and wildcards in the parent path.
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.containers[1].image");
        assert_eq!(obj["spec"]["containers"][0]["image"], "test");
        assert!(obj["spec"]["containers"][1].get("image").is_none());
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.containers[*].image");
        assert!(
            obj["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c.get("image").is_none())
        );

        // A path ending in a filter removes nothing (no list element is ever removed), and
        // neither does one that does not parse.
        for path in [
            r#".spec.containers[?(@.name=="container1")]"#,
            r#".spec.containers[?(@.name=="container1")].env[?(@.name=="A")]"#,
            ".spec.containers[",
            "spec.replicas",
        ] {
            let mut obj = containers();
            remove_json_path(&mut obj, path);
            assert_eq!(obj, containers(), "{path}");
        }

        // The split on `.` means a key holding a dot cannot be named.
        let annotated = json!({"metadata": {"annotations": {"example.com/x": "1"}}});
        let mut obj = annotated.clone();
        remove_json_path(&mut obj, ".metadata.annotations.example.com/x");
        assert_eq!(obj, annotated);
    }

    fn ignore(condition: IgnoreFieldsCondition, paths: &[&str]) -> IgnoreField {
        serde_json::from_value(json!({
            "condition": condition,
            "jsonPaths": paths,
        }))
        .unwrap()
    }

    fn deployment(replicas: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": null,
                "managedFields": [{"manager": "x"}]},
            "spec": {"replicas": replicas, "template": {"metadata": {"creationTimestamp": null}}}})
    }

    #[test]
    fn without_ignore_fields_the_cleaned_manifest_is_applied_unread() {
        let config = ServerSideApplyConfig {
            force: Some(true),
            field_manager: Some(String::new()),
            ignore_fields: None,
        };
        let plan = ServerSideApplyPlan::new(deployment(3), &config).unwrap();
        assert!(!plan.needs_live());
        assert_eq!(plan.field_manager, "work-agent");
        assert!(plan.force && plan.params().force);
        let ServerSideApplyStep::Apply(object) = plan.decide(None) else {
            panic!("expected an apply")
        };
        assert!(object["metadata"].get("creationTimestamp").is_none());
        assert!(object["metadata"].get("managedFields").is_none());
        assert!(
            object["spec"]["template"]["metadata"]
                .get("creationTimestamp")
                .is_none()
        );
        assert_eq!(
            plan.decide(Some(&json!({}))),
            ServerSideApplyStep::Apply(object)
        );
    }

    #[test]
    fn ignore_fields_hash_decides_between_keeping_and_applying() {
        let config = ServerSideApplyConfig {
            ignore_fields: Some(vec![ignore(
                IgnoreFieldsCondition::OnSpokePresent,
                &[".spec.replicas"],
            )]),
            ..ServerSideApplyConfig::default()
        };
        let plan = ServerSideApplyPlan::new(deployment(3), &config).unwrap();
        assert!(plan.needs_live());
        let hash = plan.hash().unwrap().to_string();
        // The replicas do not take part in the hash.
        let other = ServerSideApplyPlan::new(deployment(5), &config).unwrap();
        assert_eq!(other.hash(), Some(hash.as_str()));

        // Missing: the whole manifest, annotated.
        let ServerSideApplyStep::Apply(whole) = plan.decide(None) else {
            panic!("expected an apply")
        };
        assert_eq!(whole["spec"]["replicas"], 3);
        assert_eq!(
            whole["metadata"]["annotations"][annotations::CONFIG_SPEC_HASH],
            hash
        );
        // Same hash: the live object is kept (its replicas too).
        let mut live = whole.clone();
        live["spec"]["replicas"] = json!(7);
        let ServerSideApplyStep::KeepLive { fallback } = plan.decide(Some(&live)) else {
            panic!("expected to keep the live object")
        };
        assert!(fallback["spec"].get("replicas").is_none());
        // Another hash: the manifest without the ignored fields.
        live["metadata"]["annotations"][annotations::CONFIG_SPEC_HASH] = json!("other");
        let ServerSideApplyStep::Apply(partial) = plan.decide(Some(&live)) else {
            panic!("expected an apply")
        };
        assert!(partial["spec"].get("replicas").is_none());
        assert_eq!(
            partial["metadata"]["annotations"][annotations::CONFIG_SPEC_HASH],
            hash
        );

        // OnSpokeChange fields stay in the hash.
        let change = ServerSideApplyConfig {
            ignore_fields: Some(vec![ignore(
                IgnoreFieldsCondition::OnSpokeChange,
                &[".spec.replicas"],
            )]),
            ..ServerSideApplyConfig::default()
        };
        let a = ServerSideApplyPlan::new(deployment(3), &change).unwrap();
        let b = ServerSideApplyPlan::new(deployment(5), &change).unwrap();
        assert_ne!(a.hash(), b.hash());
        assert_eq!(ServerSideApplyPlan::runs_jq(&change), None);
    }

    #[test]
    fn bad_pointers_and_jq_expressions_are_ignore_field_errors() {
        let config: ServerSideApplyConfig = serde_json::from_value(json!({
            "ignoreFields": [{"condition": "OnSpokePresent", "jsonPointers": [""]}]
        }))
        .unwrap();
        let err = ServerSideApplyPlan::new(deployment(1), &config).unwrap_err();
        assert!(
            matches!(&err, ApplyError::IgnoreField(m) if m.starts_with("JSON Pointer error in '':")),
            "{err}"
        );
        let config: ServerSideApplyConfig = serde_json::from_value(json!({
            "ignoreFields": [{"condition": "OnSpokePresent", "jqPathExpressions": [".spec["]}]
        }))
        .unwrap();
        assert_eq!(ServerSideApplyPlan::runs_jq(&config), Some(".spec["));
        let err = ServerSideApplyPlan::new(deployment(1), &config).unwrap_err();
        assert!(
            matches!(&err, ApplyError::IgnoreField(m) if m.starts_with("JQ expression error in '.spec[': ")),
            "{err}"
        );
    }
}
