//! Validation equal to upstream's hub admission webhooks for the `work` group.
//!
//! Upstream's webhooks stop at the first problem; these validators report every offending
//! field at once, each with upstream's message. What the webhooks check with the hub's
//! authorizer (the `execute-as` SubjectAccessReview for a ManifestWork's executor) needs a
//! cluster and is left to the controllers; the part that needs none (an executor subject of
//! type `ServiceAccount` without a service account) is checked here. Of the rules the API
//! server enforces from the CRD schema, only the CEL rule (whose message upstream defines) is
//! repeated here.

use std::collections::HashSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_json::Value;

use super::executor::ReplicaSetAdmission;
use super::v1::{
    ConditionRuleType, Manifest, ManifestWork, ManifestWorkExecutor, ManifestWorkSpec,
};
use super::v1alpha1::ManifestWorkReplicaSet;
use crate::Result;
use crate::constants::limits::MANIFEST_SIZE_LIMIT;
use crate::validation::FieldErrors;

impl ManifestWork {
    /// Checks the work as upstream's ManifestWork admission webhook does on create, with the
    /// default manifest size limit (500 KiB).
    ///
    /// Reports every offending field: an empty manifest list, manifests that are together
    /// larger than the limit, manifests without `kind` or `metadata.name`, with
    /// `metadata.generateName`, duplicated manifests, and an executor subject without a
    /// service account. It also applies the CRD's one CEL rule (a `CEL` condition rule needs a
    /// `condition`), which the API server checks before the webhook runs.
    pub fn validate(&self) -> Result<()> {
        self.validate_with_limit(MANIFEST_SIZE_LIMIT)
    }

    /// [`validate`](Self::validate) with another manifest size limit, in bytes (upstream's
    /// webhook flag `--manifestLimit`).
    pub fn validate_with_limit(&self, limit: usize) -> Result<()> {
        let mut errors = self.manifest_errors(limit);
        validate_executor(self.spec.executor.as_ref(), &mut errors);
        validate_condition_rules(&self.spec, "spec", &mut errors);
        errors.into_result(
            "ManifestWork",
            self.metadata.name.as_deref().unwrap_or_default(),
        )
    }

    /// Checks an update from `old` to `self` as upstream's webhook does: like
    /// [`validate_with_limit`](Self::validate_with_limit), except that the executor is only
    /// checked when it changed.
    pub fn validate_update(&self, old: &ManifestWork, limit: usize) -> Result<()> {
        let mut errors = self.manifest_errors(limit);
        if self.spec.executor != old.spec.executor {
            validate_executor(self.spec.executor.as_ref(), &mut errors);
        }
        validate_condition_rules(&self.spec, "spec", &mut errors);
        errors.into_result(
            "ManifestWork",
            self.metadata.name.as_deref().unwrap_or_default(),
        )
    }

    fn manifest_errors(&self, limit: usize) -> FieldErrors {
        let mut errors = FieldErrors::default();
        let manifests = self.manifests();
        if manifests.is_empty() {
            errors.push("spec.workload.manifests", "manifests should not be empty");
        } else {
            validate_manifests(manifests, limit, "spec.workload.manifests", &mut errors);
        }
        errors
    }
}

impl ManifestWorkReplicaSet {
    /// Checks the ManifestWorkReplicaSet as upstream's admission webhook does on create and
    /// update, with the default manifest size limit (500 KiB): the template's manifests must
    /// pass the same checks as a ManifestWork's (not empty, within the size limit, each a
    /// named object without `generateName`, no duplicates). Of the CRD's rules it applies the
    /// CEL one (a `CEL` condition rule needs a `condition`); the others (at least one placement
    /// reference, enums, patterns) are left to the API server.
    ///
    /// Our addition, on by default ([`ReplicaSetAdmission`]): the template's executor is
    /// checked as a ManifestWork's. The part that needs no cluster (a service account subject
    /// without a service account) is checked here; the `execute-as` permission of the
    /// requesting user needs the hub's authorizer: a webhook runs
    /// [`admit`](Self::admit), which does both. Upstream checks neither:
    /// [`validate_with`](Self::validate_with) with [`ReplicaSetAdmission::upstream`].
    pub fn validate(&self) -> Result<()> {
        self.validate_with(&ReplicaSetAdmission::default())
    }

    /// [`validate`](Self::validate) with another manifest size limit, in bytes.
    pub fn validate_with_limit(&self, limit: usize) -> Result<()> {
        self.validate_with(&ReplicaSetAdmission::default().manifest_limit(limit))
    }

    /// [`validate`](Self::validate) under `admission` (the manifest size limit, and whether
    /// the template's executor is checked).
    pub fn validate_with(&self, admission: &ReplicaSetAdmission) -> Result<()> {
        let mut errors = FieldErrors::default();
        validate_manifests(
            self.manifests(),
            admission.manifest_limit,
            "spec.manifestWorkTemplate.workload.manifests",
            &mut errors,
        );
        if let Some(template) = &self.spec.manifest_work_template {
            validate_condition_rules(template, "spec.manifestWorkTemplate", &mut errors);
        }
        if let Err(crate::Error::Invalid { errors: more, .. }) =
            self.executor_review(None, admission)
        {
            errors.0.extend(more.0);
        }
        errors.into_result(
            "ManifestWorkReplicaSet",
            self.metadata.name.as_deref().unwrap_or_default(),
        )
    }
}

/// The CEL rule of the CRD on every condition rule: a `CEL` rule must name its condition.
fn validate_condition_rules(spec: &ManifestWorkSpec, field: &str, errors: &mut FieldErrors) {
    for (i, config) in spec.manifest_configs.iter().flatten().enumerate() {
        for (j, rule) in config.condition_rules.iter().flatten().enumerate() {
            if rule.type_ == ConditionRuleType::Cel && rule.condition.is_empty() {
                errors.push(
                    format!("{field}.manifestConfigs[{i}].conditionRules[{j}]"),
                    "Condition is required for CEL rules",
                );
            }
        }
    }
}

/// Checks the executor the way the hub webhook does before its authorization check.
fn validate_executor(executor: Option<&ManifestWorkExecutor>, errors: &mut FieldErrors) {
    let Some(subject) = executor.and_then(|e| e.subject.as_ref()) else {
        return;
    };
    if subject.service_account.is_none() {
        errors.push(
            "spec.executor.subject.serviceAccount",
            "executor service account can not be nil",
        );
    }
}

/// The shared manifest-list check of upstream's webhooks (ManifestWork and
/// ManifestWorkReplicaSet): not empty, not larger than `limit`, every manifest a named
/// object without `generateName`, no two manifests for the same object. `field` is the path
/// of the list.
pub(crate) fn validate_manifests(
    manifests: &[Manifest],
    limit: usize,
    field: &str,
    errors: &mut FieldErrors,
) {
    if manifests.is_empty() {
        errors.push(field, "Workload manifests should not be empty");
        return;
    }
    let total = manifests_size(manifests);
    if total > limit {
        errors.push(
            field,
            format!("the size of manifests is {total} bytes which exceeds the {limit} limit"),
        );
    }
    let mut seen = HashSet::new();
    for (i, manifest) in manifests.iter().enumerate() {
        let path = format!("{field}[{i}]");
        if let Err(message) = check_manifest(manifest.as_value()) {
            errors.push(path, message);
            continue;
        }
        let identity = match ManifestIdentity::deserialize(manifest.as_value()) {
            Ok(identity) => identity,
            Err(e) => {
                errors.push(
                    path,
                    format!("failed to extract metadata from manifest at index {i}: {e}"),
                );
                continue;
            }
        };
        let api_version = identity.api_version.unwrap_or_default();
        let kind = identity.kind.unwrap_or_default();
        let namespace = identity.metadata.namespace.unwrap_or_default();
        let name = identity.metadata.name.unwrap_or_default();
        let key = format!("{api_version}/{kind}/{namespace}/{name}");
        if !seen.insert(key) {
            errors.push(
                path,
                format!(
                    "duplicate manifest for resource {namespace}/{name} with resource type {api_version}.{kind}"
                ),
            );
        }
    }
}

/// The identifying fields of a manifest, decoded with their Kubernetes types.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestIdentity {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: ObjectMeta,
}

/// One manifest must decode as a Kubernetes object with a `kind`, a `metadata.name` and no
/// `metadata.generateName`.
fn check_manifest(value: &Value) -> std::result::Result<(), String> {
    let kind = match value {
        Value::Object(map) => map.get("kind").and_then(Value::as_str).unwrap_or_default(),
        Value::Null => "",
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_json_type(other)
            ));
        }
    };
    if kind.is_empty() {
        return Err(format!("Object 'Kind' is missing in '{value}'"));
    }
    let metadata_str = |key: &str| {
        value
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if metadata_str("name").is_empty() {
        return Err("name must be set in manifest".to_string());
    }
    if !metadata_str("generateName").is_empty() {
        return Err("generateName must not be set in manifest".to_string());
    }
    Ok(())
}

fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The size upstream's webhook compares with its manifest limit: the protobuf size of the
/// manifests, i.e. for each manifest the length of its JSON encoding plus one tag byte plus
/// the varint length prefix.
///
/// The JSON length is the one of Go's encoder, as [`crate::k8s::gojson::push_value`] writes it
/// (compact, with `<`, `>`, `&`, U+2028 and U+2029 escaped as `\uXXXX`, floats in Go's form).
///
/// ```
/// use ocm_api::work::{manifests_size, v1::Manifest};
///
/// let m = Manifest::new(serde_json::json!({"kind": "A"}));
/// // `{"kind":"A"}` is 12 bytes, plus a tag byte and a one-byte length.
/// assert_eq!(manifests_size(&[m]), 14);
/// ```
pub fn manifests_size(manifests: &[Manifest]) -> usize {
    manifests
        .iter()
        .map(|m| {
            let len = crate::k8s::gojson::value(m.as_value()).len();
            len + 1 + varint_len(len)
        })
        .sum()
}

/// Number of bytes of `n` as a protobuf varint.
fn varint_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Error;
    use crate::validation::FieldError;

    fn work(manifests: Vec<Value>) -> ManifestWork {
        serde_json::from_value(json!({
            "apiVersion": "work.open-cluster-management.io/v1",
            "kind": "ManifestWork",
            "metadata": { "name": "w", "namespace": "cluster1" },
            "spec": { "workload": { "manifests": manifests } },
        }))
        .unwrap()
    }

    fn cm(namespace: &str, name: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "namespace": namespace, "name": name },
        })
    }

    fn errors(result: Result<()>) -> Vec<FieldError> {
        match result {
            Err(Error::Invalid { errors, .. }) => errors.0,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_work_passes() {
        work(vec![cm("ns1", "a"), cm("ns2", "a")])
            .validate()
            .unwrap();
    }

    #[test]
    fn empty_manifests_are_rejected() {
        let errs = errors(work(vec![]).validate());
        assert_eq!(
            errs,
            vec![FieldError::new(
                "spec.workload.manifests",
                "manifests should not be empty"
            )]
        );
        let mut w = work(vec![]);
        w.spec.workload = None;
        assert_eq!(errors(w.validate()).len(), 1);
    }

    #[test]
    fn every_bad_manifest_is_reported() {
        let w = work(vec![
            cm("ns", "a"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "ns"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "b", "generateName": "b-"}}),
            cm("ns", "a"),
            json!({"apiVersion": "v1", "metadata": {"name": "c"}}),
        ]);
        let errs = errors(w.validate());
        assert_eq!(
            errs,
            vec![
                FieldError::new("spec.workload.manifests[1]", "name must be set in manifest"),
                FieldError::new(
                    "spec.workload.manifests[2]",
                    "generateName must not be set in manifest"
                ),
                FieldError::new(
                    "spec.workload.manifests[3]",
                    "duplicate manifest for resource ns/a with resource type v1.ConfigMap"
                ),
                FieldError::new(
                    "spec.workload.manifests[4]",
                    r#"Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"c"}}'"#
                ),
            ]
        );
    }

    #[test]
    fn same_name_in_other_namespace_or_kind_is_not_a_duplicate() {
        let mut secret = cm("ns", "a");
        secret["kind"] = json!("Secret");
        work(vec![cm("ns", "a"), cm("other", "a"), secret])
            .validate()
            .unwrap();
    }

    #[test]
    fn bad_metadata_types_are_reported() {
        let w = work(vec![json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": ["not", "a", "map"]},
        })]);
        let errs = errors(w.validate());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.workload.manifests[0]");
        assert!(
            errs[0]
                .message
                .starts_with("failed to extract metadata from manifest at index 0: "),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn size_limit_uses_the_protobuf_size() {
        let big = |name: &str, bytes: usize| {
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"namespace": "ns", "name": name},
                "data": {"k": "x".repeat(bytes)},
            })
        };
        let w = work(vec![big("a", 300 * 1024), big("b", 200 * 1024)]);
        let size = manifests_size(w.manifests());
        assert!(size > MANIFEST_SIZE_LIMIT);
        let errs = errors(w.validate());
        assert_eq!(
            errs,
            vec![FieldError::new(
                "spec.workload.manifests",
                format!("the size of manifests is {size} bytes which exceeds the 512000 limit")
            )]
        );
        w.validate_with_limit(size).unwrap();
        assert!(w.validate_with_limit(size - 1).is_err());
    }

    #[test]
    fn size_counts_go_html_escapes_and_varint_prefix() {
        let m = Manifest::new(json!({"a": "<&>"}));
        // {"a":"\u003c\u0026\u003e"} = 26 bytes.
        assert_eq!(manifests_size(&[m]), 26 + 2);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(16_383), 2);
        assert_eq!(varint_len(16_384), 3);
    }

    fn mwrs(manifests: Value) -> ManifestWorkReplicaSet {
        serde_json::from_value(json!({
            "apiVersion": "work.open-cluster-management.io/v1alpha1",
            "kind": "ManifestWorkReplicaSet",
            "metadata": { "name": "rs", "namespace": "apps" },
            "spec": {
                "placementRefs": [{ "name": "p" }],
                "manifestWorkTemplate": { "workload": { "manifests": manifests } },
            },
        }))
        .unwrap()
    }

    #[test]
    fn replica_set_manifests_are_checked() {
        mwrs(json!([cm("ns", "a")])).validate().unwrap();
        let field = "spec.manifestWorkTemplate.workload.manifests";
        assert_eq!(
            errors(mwrs(json!([])).validate()),
            vec![FieldError::new(
                field,
                "Workload manifests should not be empty"
            )]
        );
        let mut no_template = mwrs(json!([]));
        no_template.spec.manifest_work_template = None;
        assert_eq!(
            errors(no_template.validate()),
            vec![FieldError::new(
                field,
                "Workload manifests should not be empty"
            )]
        );
        assert_eq!(
            errors(mwrs(json!([cm("ns", "a"), cm("ns", "a")])).validate()),
            vec![FieldError::new(
                format!("{field}[1]"),
                "duplicate manifest for resource ns/a with resource type v1.ConfigMap"
            )]
        );
        match mwrs(json!([cm("ns", "")])).validate() {
            Err(Error::Invalid { kind, name, .. }) => {
                assert_eq!(
                    (kind.as_str(), name.as_str()),
                    ("ManifestWorkReplicaSet", "rs")
                );
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    /// Our addition, on by default: the template's executor is checked as a work's. Upstream
    /// (and `ReplicaSetAdmission::upstream()`) checks no executor.
    #[test]
    fn replica_set_checks_the_executor_unless_told_to_act_as_upstream() {
        let mut rs = mwrs(json!([cm("ns", "a")]));
        if let Some(template) = rs.spec.manifest_work_template.as_mut() {
            template.executor =
                serde_json::from_value(json!({"subject": {"type": "ServiceAccount"}})).unwrap();
        }
        assert_eq!(
            errors(rs.validate()),
            vec![FieldError::new(
                "spec.manifestWorkTemplate.executor.subject.serviceAccount",
                "executor service account can not be nil"
            )]
        );
        rs.validate_with(&ReplicaSetAdmission::upstream()).unwrap();
    }

    #[test]
    fn cel_condition_rules_need_a_condition() {
        let config = json!([{
            "resourceIdentifier": { "resource": "configmaps", "name": "a", "namespace": "ns" },
            "conditionRules": [
                { "condition": "Complete", "type": "CEL", "celExpressions": ["true"] },
                { "condition": "", "type": "CEL", "celExpressions": ["true"] },
                { "condition": "", "type": "WellKnownConditions" }
            ]
        }]);
        let mut w = work(vec![cm("ns", "a")]);
        w.spec.manifest_configs = serde_json::from_value(config.clone()).unwrap();
        assert_eq!(
            errors(w.validate()),
            vec![FieldError::new(
                "spec.manifestConfigs[0].conditionRules[1]",
                "Condition is required for CEL rules"
            )]
        );
        let mut rs = mwrs(json!([cm("ns", "a")]));
        if let Some(template) = rs.spec.manifest_work_template.as_mut() {
            template.manifest_configs = serde_json::from_value(config).unwrap();
        }
        assert_eq!(
            errors(rs.validate()),
            vec![FieldError::new(
                "spec.manifestWorkTemplate.manifestConfigs[0].conditionRules[1]",
                "Condition is required for CEL rules"
            )]
        );
    }

    #[test]
    fn executor_without_service_account_is_rejected() {
        let mut w = work(vec![cm("ns", "a")]);
        w.spec.executor = Some(ManifestWorkExecutor::service_account("ns", "sa"));
        w.validate().unwrap();
        let old = w.clone();
        if let Some(subject) = w.spec.executor.as_mut().and_then(|e| e.subject.as_mut()) {
            subject.service_account = None;
        }
        assert_eq!(
            errors(w.validate()),
            vec![FieldError::new(
                "spec.executor.subject.serviceAccount",
                "executor service account can not be nil"
            )]
        );
        assert!(w.validate_update(&old, MANIFEST_SIZE_LIMIT).is_err());
        // Unchanged executor on update: not checked again.
        w.validate_update(&w.clone(), MANIFEST_SIZE_LIMIT).unwrap();
    }
}
