//! What kube-apiserver publishes about built-in fields beyond their types.
//!
//! k8s-openapi's schemas (the source of [`super::definitions`]) describe fields and types, but
//! not how lists and maps merge, which strategic-merge-patch directive a field has, nor
//! exactly which fields kube-apiserver lists as `required`. kubectl reads all of that from the
//! OpenAPI documents: client-side `kubectl apply` computes its three-way strategic merge patch
//! from `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`, server-side apply and
//! unknown-field paths follow `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`, and
//! client-side validation refuses objects that lack a `required` field. These tables hold those
//! facts for the definitions the fake serves, as kube-apiserver v1.28 publishes them (with a
//! few later fields); fields added since have no entry and publish no list semantics.

/// The extensions of one property (or, with an empty property name, of a definition).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Semantics {
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub(crate) list_type: Option<&'static str>,
    /// `x-kubernetes-list-map-keys`.
    pub(crate) list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type`: `atomic` or `granular`.
    pub(crate) map_type: Option<&'static str>,
    /// `x-kubernetes-patch-strategy`: `merge`, `retainKeys` or `merge,retainKeys`.
    pub(crate) patch_strategy: Option<&'static str>,
    /// `x-kubernetes-patch-merge-key`.
    pub(crate) patch_merge_key: Option<&'static str>,
}

impl Semantics {
    const NONE: Self = Self {
        list_type: None,
        list_map_keys: &[],
        map_type: None,
        patch_strategy: None,
        patch_merge_key: None,
    };

    /// The extensions as OpenAPI keys and JSON values.
    pub(crate) fn extensions(&self) -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::Value;
        let mut out = Vec::new();
        if !self.list_map_keys.is_empty() {
            out.push((
                "x-kubernetes-list-map-keys",
                Value::from(self.list_map_keys.to_vec()),
            ));
        }
        if let Some(t) = self.list_type {
            out.push(("x-kubernetes-list-type", Value::from(t)));
        }
        if let Some(t) = self.map_type {
            out.push(("x-kubernetes-map-type", Value::from(t)));
        }
        if let Some(k) = self.patch_merge_key {
            out.push(("x-kubernetes-patch-merge-key", Value::from(k)));
        }
        if let Some(s) = self.patch_strategy {
            out.push(("x-kubernetes-patch-strategy", Value::from(s)));
        }
        out
    }
}

use Semantics as S;

/// `(definition, property, extensions)`; an empty property stands for the definition itself.
pub(crate) const FIELDS: &[(&str, &str, Semantics)] = &[
    (
        "io.k8s.api.apps.v1.DaemonSetStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.apps.v1.DeploymentSpec",
        "strategy",
        S {
            patch_strategy: Some("retainKeys"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.apps.v1.DeploymentStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.apps.v1.ReplicaSetStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.CronJobStatus",
        "active",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.JobStatus",
        "conditions",
        S {
            list_type: Some("atomic"),
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.PodFailurePolicy",
        "rules",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "values",
        S {
            list_type: Some("set"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyRule",
        "onPodConditions",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.UncountedTerminatedPods",
        "failed",
        S {
            list_type: Some("set"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.batch.v1.UncountedTerminatedPods",
        "succeeded",
        S {
            list_type: Some("set"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ConfigMapKeySelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.Container",
        "env",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.Container",
        "ports",
        S {
            list_type: Some("map"),
            list_map_keys: &["containerPort", "protocol"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("containerPort"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.Container",
        "resizePolicy",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.Container",
        "volumeDevices",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("devicePath"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.Container",
        "volumeMounts",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("mountPath"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EndpointAddress",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EndpointPort",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "env",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "ports",
        S {
            list_type: Some("map"),
            list_map_keys: &["containerPort", "protocol"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("containerPort"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "resizePolicy",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeDevices",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("devicePath"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeMounts",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("mountPath"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.LoadBalancerIngress",
        "ports",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.LocalObjectReference",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NamespaceStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NodeSelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NodeSelectorTerm",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NodeSpec",
        "podCIDRs",
        S {
            patch_strategy: Some("merge"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NodeStatus",
        "addresses",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.NodeStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ObjectFieldSelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ObjectReference",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "allocatedResourceStatuses",
        S {
            map_type: Some("granular"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodAffinityTerm",
        "matchLabelKeys",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodAffinityTerm",
        "mismatchLabelKeys",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "containers",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "ephemeralContainers",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "hostAliases",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("ip"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "imagePullSecrets",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "initContainers",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "nodeSelector",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "resourceClaims",
        S {
            list_type: Some("map"),
            list_map_keys: &["name"],
            patch_strategy: Some("merge,retainKeys"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "schedulingGates",
        S {
            list_type: Some("map"),
            list_map_keys: &["name"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "topologySpreadConstraints",
        S {
            list_type: Some("map"),
            list_map_keys: &["topologyKey", "whenUnsatisfiable"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("topologyKey"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "volumes",
        S {
            patch_strategy: Some("merge,retainKeys"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodStatus",
        "conditions",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodStatus",
        "hostIPs",
        S {
            list_type: Some("atomic"),
            patch_strategy: Some("merge"),
            patch_merge_key: Some("ip"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodStatus",
        "podIPs",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("ip"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.PodStatus",
        "resourceClaimStatuses",
        S {
            list_type: Some("map"),
            list_map_keys: &["name"],
            patch_strategy: Some("merge,retainKeys"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ResourceFieldSelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        S {
            list_type: Some("map"),
            list_map_keys: &["name"],
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ScopeSelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.SecretKeySelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceAccount",
        "secrets",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("name"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "clusterIPs",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ipFamilies",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ports",
        S {
            list_type: Some("map"),
            list_map_keys: &["port", "protocol"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("port"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "selector",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.ServiceStatus",
        "conditions",
        S {
            list_type: Some("map"),
            list_map_keys: &["type"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.TopologySpreadConstraint",
        "matchLabelKeys",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.core.v1.TypedLocalObjectReference",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.networking.v1.HTTPIngressRuleValue",
        "paths",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.networking.v1.IngressLoadBalancerIngress",
        "ports",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.networking.v1.IngressSpec",
        "rules",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.networking.v1.IngressSpec",
        "tls",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.networking.v1.IngressTLS",
        "hosts",
        S {
            list_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.policy.v1.PodDisruptionBudgetSpec",
        "selector",
        S {
            patch_strategy: Some("replace"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
        "conditions",
        S {
            list_type: Some("map"),
            list_map_keys: &["type"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("type"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.rbac.v1.RoleRef",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.api.rbac.v1.Subject",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus",
        "conditions",
        S {
            list_type: Some("map"),
            list_map_keys: &["type"],
            ..S::NONE
        },
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        "x-kubernetes-validations",
        S {
            list_type: Some("map"),
            list_map_keys: &["rule"],
            patch_strategy: Some("merge"),
            patch_merge_key: Some("rule"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "finalizers",
        S {
            patch_strategy: Some("merge"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
        S {
            patch_strategy: Some("merge"),
            patch_merge_key: Some("uid"),
            ..S::NONE
        },
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
        "",
        S {
            map_type: Some("atomic"),
            ..S::NONE
        },
    ),
];

/// Definitions whose `required` list kube-apiserver publishes differently from what
/// k8s-openapi's schema says (k8s-openapi requires every field its Rust type does not wrap in
/// an `Option`; kube-apiserver requires what the Go type does not mark `omitempty`). Other
/// top-level kinds drop `metadata` from their required fields, as kube-apiserver never
/// requires it there.
pub(crate) const REQUIRED: &[(&str, &[&str])] = &[
    ("io.k8s.api.apps.v1.ControllerRevision", &["revision"]),
    ("io.k8s.api.apps.v1.DaemonSet", &[]),
    ("io.k8s.api.apps.v1.DaemonSetCondition", &["status", "type"]),
    ("io.k8s.api.apps.v1.Deployment", &[]),
    (
        "io.k8s.api.apps.v1.DeploymentCondition",
        &["status", "type"],
    ),
    ("io.k8s.api.apps.v1.ReplicaSet", &[]),
    (
        "io.k8s.api.apps.v1.ReplicaSetCondition",
        &["status", "type"],
    ),
    ("io.k8s.api.apps.v1.StatefulSet", &[]),
    (
        "io.k8s.api.apps.v1.StatefulSetCondition",
        &["status", "type"],
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetSpec",
        &["selector", "serviceName", "template"],
    ),
    ("io.k8s.api.batch.v1.CronJob", &[]),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern",
        &["status", "type"],
    ),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyRule",
        &["action", "onPodConditions"],
    ),
    ("io.k8s.api.core.v1.ConfigMapEnvSource", &[]),
    ("io.k8s.api.core.v1.ConfigMapKeySelector", &["key"]),
    ("io.k8s.api.core.v1.ConfigMapProjection", &[]),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", &[]),
    ("io.k8s.api.core.v1.Event", &["involvedObject", "metadata"]),
    ("io.k8s.api.core.v1.HostAlias", &[]),
    ("io.k8s.api.core.v1.HostIP", &[]),
    ("io.k8s.api.core.v1.LocalObjectReference", &[]),
    ("io.k8s.api.core.v1.PodIP", &[]),
    ("io.k8s.api.core.v1.SecretEnvSource", &[]),
    ("io.k8s.api.core.v1.SecretKeySelector", &["key"]),
    ("io.k8s.api.core.v1.SecretProjection", &[]),
    ("io.k8s.api.events.v1.Event", &["eventTime"]),
    (
        "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
        &[
            "currentHealthy",
            "desiredHealthy",
            "disruptionsAllowed",
            "expectedPods",
        ],
    ),
    ("io.k8s.api.rbac.v1.RoleRef", &["apiGroup", "kind", "name"]),
    ("io.k8s.api.scheduling.v1.PriorityClass", &["value"]),
];
