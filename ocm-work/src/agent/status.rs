//! Refreshing a ManifestWork's status (upstream's available-status controller): every applied
//! resource is read (through the engine's [`ObjectReader`](crate::apply::reader::ObjectReader),
//! or its feedback informer when watched) and the pure [`StatusBuilder`] turns what was read
//! into each manifest's `Available`, `StatusFeedbackSynced` and condition-rule conditions and
//! feedback values, and the work's aggregated conditions. Resources with `feedbackScrapeType:
//! Watch` are registered with the [watch registry](super::watch).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::ResourceExt;
use kube::core::GroupVersionKind;
use ocm_api::work::v1::{
    FeedbackScrapeType, ManifestCondition, ManifestConfigOption, ManifestWork, ManifestWorkStatus,
};
use serde_json::Value;

use super::WorkAgent;
use super::watch::watch_key;
use crate::apply::engine::ManifestApply;
use crate::config::{ResourceRef, find_manifest_config};
use crate::discovery::ResolvedResource;
use crate::status::{Observed, StatusBuilder, with_every_field};

impl WorkAgent {
    /// Refreshes `status` from the live objects (see the [module docs](self)); `applied` are
    /// the results of this sync's apply pass, whose resolved kinds and manifest configs are
    /// reused (otherwise each manifest's kind and config are resolved from its status entry,
    /// once). Returns the resource version each manifest's resource was read at, by ordinal
    /// (absent when it was not found or not read).
    pub(super) async fn refresh_status(
        &self,
        work: &ManifestWork,
        builder: &StatusBuilder,
        status: &mut ManifestWorkStatus,
        applied: Option<&[ManifestApply]>,
    ) -> HashMap<i32, String> {
        let mut observed = HashMap::new();
        if !builder.begin_refresh(status) {
            return observed;
        }
        let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
        let work_name = work.name_any();
        let mut watched = HashSet::new();
        let manifests = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut());
        for (i, entry) in manifests.into_iter().flatten().enumerate() {
            // An apply pass's entries are its results, in the same order.
            let known = applied
                .and_then(|results| results.get(i))
                .filter(|r| with_every_field(&r.meta) == entry.resource_meta);
            let ordinal = entry.resource_meta.ordinal;
            let (key, version) = self
                .refresh_manifest(&work_name, entry, builder, known, configs)
                .await;
            if let Some(key) = key {
                watched.insert(key);
            }
            if let Some(version) = version {
                observed.insert(ordinal, version);
            }
        }
        self.retain_watches(&work_name, &watched);
        builder.aggregate(status);
        observed
    }

    /// Refreshes one manifest's entry; returns the watch key when its feedback is watched, and
    /// the resource version the resource was read at.
    async fn refresh_manifest(
        &self,
        work_name: &str,
        entry: &mut ManifestCondition,
        builder: &StatusBuilder,
        known: Option<&ManifestApply>,
        configs: &[ManifestConfigOption],
    ) -> (Option<String>, Option<String>) {
        let meta = &entry.resource_meta;
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let (group, version, kind, resource, namespace, name) = (
            s(&meta.group),
            s(&meta.version),
            s(&meta.kind),
            s(&meta.resource),
            s(&meta.namespace),
            s(&meta.name),
        );
        if resource.is_empty() || version.is_empty() || name.is_empty() {
            builder.refresh_manifest(entry, Observed::IncompleteMeta, None);
            return (None, None);
        }
        let key = watch_key(&group, &resource, &version, &namespace, &name);
        let resolved = self
            .resolve_entry(known, &group, &version, &kind, &resource)
            .await;
        let found;
        let config = match known {
            Some(r) => r.config.as_ref(),
            None => {
                found = find_manifest_config(
                    &ResourceRef {
                        group: &group,
                        resource: &resource,
                        namespace: &namespace,
                        name: &name,
                    },
                    configs,
                );
                found.as_ref()
            }
        };
        // The informers drop managedFields: rules that may read them get the object from the
        // API server.
        let whole = config.is_some_and(rules_may_read_managed_fields);
        let live = match &resolved {
            Ok(resolved) => {
                self.read_for_status(resolved, &namespace, &name, whole, &key)
                    .await
            }
            Err(e) => Err(e.clone()),
        };
        let live = match live {
            Ok(Some(live)) => live,
            Ok(None) => {
                builder.refresh_manifest(entry, Observed::Missing, None);
                return (self.is_watched(&key).then_some(key), None);
            }
            Err(e) => {
                builder.refresh_manifest(entry, Observed::Failed(&e), None);
                return (self.is_watched(&key).then_some(key), None);
            }
        };
        let watch = config
            .and_then(|c| c.feedback_scrape_type.as_ref())
            .is_some_and(|t| *t == FeedbackScrapeType::Watch);
        let watched = match (&resolved, watch) {
            (Ok(resolved), true) => self.register_watch(work_name, &key, resolved, &namespace),
            _ => false,
        };
        if let Some(metrics) = &self.metrics
            && config
                .and_then(|c| c.feedback_rules.as_ref())
                .is_some_and(|r| !r.is_empty())
        {
            metrics.feedback_scrape(if watched { "Watch" } else { "Poll" });
        }
        builder.refresh_manifest(entry, Observed::Found(&live), config);
        let version = live
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        (watched.then_some(key), version)
    }

    /// The resource of a status entry: the apply pass's when it resolved it; otherwise by
    /// kind, or (an entry without its kind, written by an agent that does not record it) by
    /// resource, as upstream reads every entry.
    async fn resolve_entry<'a>(
        &self,
        known: Option<&'a ManifestApply>,
        group: &str,
        version: &str,
        kind: &str,
        resource: &str,
    ) -> Result<Cow<'a, ResolvedResource>, String> {
        match known.and_then(|r| r.resolved.as_ref()) {
            Some(resolved) => Ok(Cow::Borrowed(resolved)),
            None if kind.is_empty() => self
                .engine
                .resolver()
                .resolve_resource(group, version, resource)
                .await
                .map(Cow::Owned)
                .map_err(|e| e.to_string()),
            None => self
                .engine
                .resolver()
                .resolve(&GroupVersionKind::gvk(group, version, kind))
                .await
                .map(Cow::Owned)
                .map_err(|e| e.to_string()),
        }
    }

    /// Reads a resource for its status: from the API server, whole, when its rules may read
    /// `managedFields` (`whole`, which the informers drop); otherwise through the reader, from
    /// an informer where there is one (the resource `key` watched or cached reads on).
    async fn read_for_status(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
        whole: bool,
        key: &str,
    ) -> Result<Option<Arc<Value>>, String> {
        let reader = self.engine.reader();
        if whole {
            reader
                .read(resolved, namespace, name, true)
                .await
                .map(|(live, _)| live)
                .map_err(|e| crate::api_errors::describe(&e))
        } else {
            reader
                .get_for_status(resolved, namespace, name, self.is_watched(key))
                .await
                .map_err(|e| crate::api_errors::describe(&e))
        }
    }

    pub(super) fn is_watched(&self, key: &str) -> bool {
        self.watches.is_watched(key)
    }

    /// Registers `work`'s interest in the resource `key`; false when the informer limit is
    /// reached (the resource is then polled, as upstream does silently) or caches are off.
    fn register_watch(
        &self,
        work: &str,
        key: &str,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> bool {
        let Some(caches) = self.caches.get() else {
            return false;
        };
        self.watches.register(
            &caches.objects,
            self.config.max_feedback_watch,
            work,
            key,
            resolved,
            namespace,
        )
    }

    /// Drops `work`'s watch registrations other than `keep`; informers nobody needs any more
    /// stop unless cached reads use them.
    pub(super) fn retain_watches(&self, work: &str, keep: &HashSet<String>) {
        let unused = self.watches.retain(work, keep);
        if !self.config.cached_reads
            && let Some(caches) = self.caches.get()
        {
            for informer in unused {
                caches.objects.stop(&informer);
            }
        }
    }

    /// The works watching the resource `key`.
    pub(super) fn watching_works(&self, key: &str) -> Vec<String> {
        self.watches.watching(key)
    }
}

/// The fields of `metadata` a rule may name and still be answered from an informer's copy
/// (which has no `managedFields`).
const CACHED_METADATA_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
];

/// Whether the JSONPath feedback rules or CEL condition rules of `config` might see
/// `metadata.managedFields`, which the agent's informers drop: a rule that names them, names
/// `metadata` (or the whole object) other than through one of its other fields, or uses a
/// JSONPath recursive descent or wildcard that may reach the object's own metadata
/// ([`jsonpath_wildcard_may_reach_metadata`]). Conservative: a rule it cannot rule out is read
/// from the API server, as upstream reads every object whole.
pub(super) fn rules_may_read_managed_fields(config: &ManifestConfigOption) -> bool {
    let paths = config
        .feedback_rules
        .iter()
        .flatten()
        .flat_map(|r| r.json_paths.iter().flatten())
        .any(|p| {
            let path = p.path.trim();
            let bare = path.trim_start_matches('{').trim_end_matches('}').trim();
            matches!(bare, "" | "." | "@" | "$") || text_may_read_managed_fields(path, false)
        });
    let cel = config
        .condition_rules
        .iter()
        .flatten()
        .flat_map(|r| {
            r.cel_expressions
                .iter()
                .flatten()
                .chain(r.message_expression.iter())
        })
        .any(|e| text_may_read_managed_fields(e, true));
    paths || cel
}

/// See [`rules_may_read_managed_fields`]; `cel` also looks at the CEL variable `object`.
fn text_may_read_managed_fields(text: &str, cel: bool) -> bool {
    if text.contains("managedFields") || (!cel && jsonpath_wildcard_may_reach_metadata(text)) {
        return true;
    }
    let followed_by_known_field = |rest: &str, known: &[&str]| {
        rest.strip_prefix('.').is_some_and(|rest| {
            known.iter().any(|field| {
                rest.strip_prefix(field).is_some_and(|after| {
                    !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
            })
        })
    };
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mentions = |word: &str, known: &[&str]| {
        text.match_indices(word).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let rest = &text[at + word.len()..];
            let whole_word = !before.is_some_and(identifier) && !rest.starts_with(identifier);
            whole_word && !followed_by_known_field(rest, known)
        })
    };
    if mentions("metadata", CACHED_METADATA_FIELDS) {
        return true;
    }
    // In CEL, `object` handed on whole (`object == ...`, `string(object)`, `object['x']`).
    cel && !text_only_names_object_children(text)
}

/// Whether a JSONPath's wildcard (`*`) or recursive descent (`..`) may reach the object's own
/// `metadata`: only when it comes before the path's first field name, or that name is
/// `metadata`. Below any other top-level field (`.status.conditions[*].type`,
/// `.spec..image`) there is no managedFields to see. (In CEL, `*` is multiplication and
/// there is no `..`, so CEL expressions are not asked.)
fn jsonpath_wildcard_may_reach_metadata(path: &str) -> bool {
    if !path.contains("..") && !path.contains('*') {
        return false;
    }
    let bare = path.trim().trim_start_matches('{').trim_start();
    let bare = bare.strip_prefix('$').unwrap_or(bare);
    // `[*]`, `['...']` or anything else at the root: cannot be ruled out.
    let Some(rest) = bare.strip_prefix('.') else {
        return true;
    };
    let field: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    field.is_empty() || field == "metadata"
}

/// Whether every `object` in `text` is followed by `.` (a child field).
fn text_only_names_object_children(text: &str) -> bool {
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices("object").all(|(at, _)| {
        let before = text[..at].chars().next_back();
        let rest = &text[at + "object".len()..];
        before.is_some_and(identifier) || rest.starts_with(identifier) || rest.starts_with('.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{ConditionRule, ConditionRuleType, FeedbackRule, JsonPath};

    fn config(paths: &[&str], cel: &[&str]) -> ManifestConfigOption {
        let mut config = ManifestConfigOption::new(Default::default());
        config.feedback_rules = Some(vec![
            FeedbackRule::well_known_status(),
            FeedbackRule::json_paths(paths.iter().map(|p| JsonPath::new("v", *p))),
        ]);
        config.condition_rules = Some(vec![ConditionRule {
            condition: "Ready".into(),
            type_: ConditionRuleType::Cel,
            cel_expressions: Some(cel.iter().map(|e| e.to_string()).collect()),
            message: None,
            message_expression: None,
        }]);
        config
    }

    #[test]
    fn rules_that_may_see_managed_fields_are_told_apart() {
        // Read from the informer's copy.
        for (paths, cel) in [
            (
                &[
                    ".status.readyReplicas",
                    "{.spec.template.spec.containers[0].image}",
                ][..],
                &[][..],
            ),
            (&[".metadata.labels.app", ".metadata.generation"], &[]),
            (
                &[],
                &["object.status.readyReplicas == object.spec.replicas"],
            ),
            (
                &[],
                &["has(object.metadata.annotations) && object.metadata.name != ''"],
            ),
            (
                &[".status.conditions[?(@.type==\"Available\")].status"],
                &[],
            ),
            // Wildcards and recursive descents below a field other than metadata.
            (
                &[
                    "{.status.containerStatuses[*].image}",
                    ".spec..image",
                    "$.status.conditions[*].type",
                ],
                &[],
            ),
            // CEL's `*` is multiplication.
            (
                &[],
                &["object.status.readyReplicas * 2 >= object.spec.replicas"],
            ),
        ] {
            assert!(
                !rules_may_read_managed_fields(&config(paths, cel)),
                "{paths:?} {cel:?}"
            );
        }
        // Read from the API server.
        for (paths, cel) in [
            (&[".metadata.managedFields[0].manager"][..], &[][..]),
            (&[".metadata"], &[]),
            (&["{.metadata}"], &[]),
            (&["{.metadata['labels']}"], &[]),
            (&["."], &[]),
            (&["{..manager}"], &[]),
            (&[".metadata.*"], &[]),
            (&["{.*}"], &[]),
            (&["[*]"], &[]),
            (&["{$..name}"], &[]),
            (&[".metadata..manager"], &[]),
            (&[], &["size(object.metadata) > 3"]),
            (&[], &["object.metadata.exists(k, k.startsWith('m'))"]),
            (&[], &["string(object).contains('kubectl')"]),
            (&[], &["object['metadata']['name'] == 'x'"]),
            (&[], &["object.metadata.managedFields.size() > 1"]),
        ] {
            assert!(
                rules_may_read_managed_fields(&config(paths, cel)),
                "{paths:?} {cel:?}"
            );
        }
        let mut message = config(&[], &[]);
        message.condition_rules.as_mut().unwrap()[0].message_expression =
            Some("string(object.metadata)".into());
        assert!(rules_may_read_managed_fields(&message));
        // No rules at all.
        assert!(!rules_may_read_managed_fields(&ManifestConfigOption::new(
            Default::default()
        )));
    }

    /// The informers drop managedFields; a watched rule that reads them still gets them.
    #[tokio::test]
    async fn a_watched_rule_reading_managed_fields_is_answered_from_the_server() {
        use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
        use kube::api::{Api, PostParams};
        use serde_json::json;
        use std::time::Duration;

        let (hub, spoke) = (
            ocm_testkit::FakeCluster::new(),
            ocm_testkit::FakeCluster::new(),
        );
        for (cluster, ns) in [(&hub, "cluster1"), (&spoke, "default")] {
            let crds: Api<
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
            > = Api::all(cluster.client());
            for crd in ocm_api::crds() {
                crds.create(&PostParams::default(), &crd).await.unwrap();
            }
            let namespace: Namespace =
                serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
            let _ = Api::<Namespace>::all(cluster.client())
                .create(&PostParams::default(), &namespace)
                .await;
        }
        let config = crate::agent::AgentConfig::new("cluster1", "hub")
            .status_sync_interval(Duration::from_secs(3600))
            .resync_interval(Duration::from_secs(3600));
        let agent = WorkAgent::new(hub.client(), spoke.client(), config);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(agent.run(async move {
            let _ = stopped.await;
        }));
        let work: ManifestWork = serde_json::from_value(json!({
            "metadata": {"name": "w", "namespace": "cluster1"},
            "spec": {
                "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cm", "namespace": "default"}, "data": {"k": "v"}}]},
                "manifestConfigs": [{
                    "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "cm"},
                    "feedbackScrapeType": "Watch",
                    "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [
                        {"name": "manager", "path": ".metadata.managedFields[0].manager"},
                        {"name": "value", "path": ".data.k"}]}]
                }]
            }
        }))
        .unwrap();
        let works = Api::<ManifestWork>::namespaced(hub.client(), "cluster1");
        works.create(&PostParams::default(), &work).await.unwrap();
        let feedback = |w: &ManifestWork| -> Vec<Option<String>> {
            let values = w
                .status
                .as_ref()
                .and_then(|s| s.resource_status.as_ref())
                .and_then(|r| r.manifests.as_ref())
                .and_then(|m| m.first())
                .and_then(|m| m.status_feedbacks.as_ref())
                .and_then(|f| f.values.clone())
                .unwrap_or_default();
            ["manager", "value"]
                .iter()
                .map(|name| {
                    values
                        .iter()
                        .find(|v| v.name == *name)
                        .and_then(|v| v.field_value.string.clone())
                })
                .collect()
        };
        let configmaps = Api::<ConfigMap>::namespaced(spoke.client(), "default");
        let mut last = Vec::new();
        for _ in 0..100 {
            if let Some(live) = configmaps.get_opt("cm").await.unwrap() {
                let manager = live.metadata.managed_fields.unwrap_or_default()[0]
                    .manager
                    .clone();
                assert!(manager.is_some(), "the server records a manager");
                last = feedback(&works.get("w").await.unwrap());
                if last == [manager, Some("v".into())] {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let live = configmaps.get("cm").await.unwrap();
        let manager = live.metadata.managed_fields.unwrap_or_default()[0]
            .manager
            .clone();
        assert_eq!(last, [manager, Some("v".into())]);
        let _ = stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
    }
}
