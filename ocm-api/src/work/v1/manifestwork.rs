//! ManifestWork: a set of Kubernetes objects the hub asks one managed cluster to apply.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Manifest, ManifestConfigOption, ManifestWorkStatus};

/// The desired state of a [`ManifestWork`]: the manifests to apply and how to apply,
/// watch and delete them.
#[derive(
    CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema,
)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1",
    kind = "ManifestWork",
    doc = r#"A set of Kubernetes objects the hub asks one managed cluster to apply.

A ManifestWork lives on the hub in the namespace of a managed cluster (the namespace is
named after the cluster). The work agent of that cluster applies every manifest, keeps
them in the declared state, reports their status back (conditions and, on request,
feedback values), and deletes them when the ManifestWork is deleted (subject to
`spec.deleteOption`).

# Rust API

The desired state is [`ManifestWorkSpec`], the observed state [`ManifestWorkStatus`];
[`ManifestWork::manifests`] lists the embedded objects as [`Manifest`]s and
[`ManifestWork::validate`] applies upstream's admission checks. To assemble a ManifestWork
from YAML files, see [`ManifestWorkBuilder`](crate::builder::ManifestWorkBuilder).

# Example

```
use ocm_api::work::v1::{
    FeedbackRule, JsonPath, Manifest, ManifestConfigOption, ManifestWork, ManifestWorkSpec,
    ManifestsTemplate, ResourceIdentifier,
};

let mut work = ManifestWork::new(
    "web",
    ManifestWorkSpec {
        workload: Some(ManifestsTemplate {
            manifests: Some(vec![Manifest::new(serde_json::json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": { "name": "web", "namespace": "default" },
                "spec": { "replicas": 2 },
            }))]),
        }),
        manifest_configs: Some(vec![ManifestConfigOption {
            feedback_rules: Some(vec![FeedbackRule::json_paths([JsonPath::new(
                "ready",
                ".status.readyReplicas",
            )])]),
            ..ManifestConfigOption::new(ResourceIdentifier::new(
                "apps",
                "deployments",
                "default",
                "web",
            ))
        }]),
        ..Default::default()
    },
);
// The namespace of a ManifestWork is the name of the target cluster.
work.metadata.namespace = Some("cluster1".into());

assert_eq!(work.manifests().len(), 1);
assert_eq!(work.manifests()[0].kind(), Some("Deployment"));
work.validate()?;

let json = serde_json::to_value(&work)?;
assert_eq!(json["spec"]["workload"]["manifests"][0]["spec"]["replicas"], 2);
# Ok::<(), Box<dyn std::error::Error>>(())
```
"#,
    plural = "manifestworks",
    namespaced,
    status = "ManifestWorkStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkSpec {
    /// The objects to apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<ManifestsTemplate>,

    /// What happens to the applied resources when the ManifestWork is deleted (or a manifest
    /// is removed from it). Absent means `Foreground` for every resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_option: Option<DeleteOption>,

    /// Per-resource settings: update strategy, status feedback and condition rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_configs: Option<Vec<ManifestConfigOption>>,

    /// The identity the agent applies the manifests as. Absent means the agent's own
    /// identity, without authorization checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<ManifestWorkExecutor>,
}

impl ManifestWorkSpec {
    /// The manifests of the workload (empty when there are none).
    pub fn manifests(&self) -> &[Manifest] {
        self.workload
            .as_ref()
            .map(ManifestsTemplate::manifests)
            .unwrap_or_default()
    }
}

impl ManifestWork {
    /// The manifests of the workload (empty when there are none).
    pub fn manifests(&self) -> &[Manifest] {
        self.spec.manifests()
    }
}

/// The list of objects a ManifestWork applies.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestsTemplate {
    /// The objects, each a complete Kubernetes object with `apiVersion`, `kind` and
    /// `metadata`. Their position in the list is their `ordinal` in the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifests: Option<Vec<Manifest>>,
}

impl ManifestsTemplate {
    /// The manifests (empty when there are none).
    pub fn manifests(&self) -> &[Manifest] {
        self.manifests.as_deref().unwrap_or_default()
    }
}

impl FromIterator<Manifest> for ManifestsTemplate {
    fn from_iter<I: IntoIterator<Item = Manifest>>(iter: I) -> Self {
        Self {
            manifests: Some(iter.into_iter().collect()),
        }
    }
}

/// What happens to the applied resources when they leave the ManifestWork.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOption {
    /// `Foreground` (the default) deletes the resources; `Orphan` leaves all of them on the
    /// managed cluster; `SelectivelyOrphan` leaves only those listed in
    /// `selectivelyOrphans`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Foreground"))]
    pub propagation_policy: Option<PropagationPolicy>,

    /// The resources to leave behind when the policy is `SelectivelyOrphan`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "selectivelyOrphans"
    )]
    pub selectively_orphan: Option<SelectivelyOrphan>,

    /// Seconds after the ManifestWork became `Complete` at which the hub deletes it
    /// (only with the `CleanUpCompletedManifestWork` feature). Absent means never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i64>,
}

/// How the resources of a deleted ManifestWork are treated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PropagationPolicy {
    /// Delete every resource, waiting for their dependents (the default).
    #[default]
    Foreground,
    /// Leave every resource on the managed cluster.
    Orphan,
    /// Leave the resources listed in the orphaning rules; delete the others.
    SelectivelyOrphan,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `PropagationPolicy`: its known values only, with the same name and docs.
/// How the resources of a deleted ManifestWork are treated.
#[derive(JsonSchema)]
#[schemars(rename = "PropagationPolicy")]
#[allow(dead_code)]
enum PropagationPolicySchema {
    /// Delete every resource, waiting for their dependents (the default).
    Foreground,
    /// Leave every resource on the managed cluster.
    Orphan,
    /// Leave the resources listed in the orphaning rules; delete the others.
    SelectivelyOrphan,
}

crate::string_enum::string_enum!(PropagationPolicy, PropagationPolicySchema {
    Foreground => "Foreground",
    Orphan => "Orphan",
    SelectivelyOrphan => "SelectivelyOrphan",
});

/// The resources to orphan under the `SelectivelyOrphan` policy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectivelyOrphan {
    /// The resources to leave on the managed cluster. Names and namespaces are matched
    /// literally (no wildcards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphaning_rules: Option<Vec<OrphaningRule>>,
}

/// A resource to orphan; the same shape as [`ResourceIdentifier`].
pub type OrphaningRule = ResourceIdentifier;

/// Identifies a resource by group, plural resource name, namespace and name.
///
/// In [`ManifestConfigOption`], `name` and `namespace` may contain `*` wildcards.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// API group; empty or absent for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,

    /// Plural resource name, e.g. `deployments`.
    pub resource: String,

    /// Name of the resource.
    pub name: String,

    /// Namespace; empty or absent for cluster-scoped resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ResourceIdentifier {
    /// An identifier for `group`/`resource` named `name` in `namespace` (pass `""` for the
    /// core group or a cluster-scoped resource; empty strings are kept, as upstream writes
    /// them).
    pub fn new(
        group: impl Into<String>,
        resource: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            group: Some(group.into()),
            resource: resource.into(),
            name: name.into(),
            namespace: Some(namespace.into()),
        }
    }

    /// The group, `""` when absent.
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or_default()
    }

    /// The namespace, `""` when absent.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }
}

/// The identity the work agent uses to apply a ManifestWork's manifests.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkExecutor {
    /// The subject the agent acts as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<ManifestWorkExecutorSubject>,
}

impl ManifestWorkExecutor {
    /// An executor acting as the service account `namespace`/`name` of the managed cluster.
    pub fn service_account(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            subject: Some(ManifestWorkExecutorSubject {
                type_: ExecutorSubjectType::ServiceAccount,
                service_account: Some(ManifestWorkSubjectServiceAccount {
                    namespace: namespace.into(),
                    name: name.into(),
                }),
            }),
        }
    }
}

/// The subject of a [`ManifestWorkExecutor`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkExecutorSubject {
    /// The kind of subject; only `ServiceAccount` exists.
    #[serde(rename = "type")]
    pub type_: ExecutorSubjectType,

    /// The service account, when `type` is `ServiceAccount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ManifestWorkSubjectServiceAccount>,
}

/// The kind of a [`ManifestWorkExecutorSubject`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExecutorSubjectType {
    /// A service account on the managed cluster.
    #[default]
    ServiceAccount,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `ExecutorSubjectType`: its known values only, with the same name and docs.
/// The kind of a [`ManifestWorkExecutorSubject`].
#[derive(JsonSchema)]
#[schemars(rename = "ExecutorSubjectType")]
#[allow(dead_code)]
enum ExecutorSubjectTypeSchema {
    /// A service account on the managed cluster.
    ServiceAccount,
}

crate::string_enum::string_enum!(ExecutorSubjectType, ExecutorSubjectTypeSchema {
    ServiceAccount => "ServiceAccount",
});

/// A service account on the managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkSubjectServiceAccount {
    /// Namespace of the service account (a DNS subdomain).
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub namespace: String,

    /// Name of the service account (a DNS subdomain).
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub name: String,
}

/// The pattern the API enforces on executor service account names and namespaces.
const DNS_SUBDOMAIN_PATTERN: &str =
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$";
