//! The built-in kinds every fake cluster serves, and their list semantics.

use crate::storage::registry::{ResourceInfo, ScaleSubresource};

struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    generation: bool,
    short: &'static [&'static str],
    all: bool,
    verbs: Option<&'static [&'static str]>,
}

#[allow(clippy::too_many_arguments)]
const fn b(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    generation: bool,
    short: &'static [&'static str],
) -> Builtin {
    Builtin {
        group,
        version,
        kind,
        plural,
        namespaced,
        status,
        generation,
        short,
        all: false,
        verbs: None,
    }
}

const fn all(mut x: Builtin) -> Builtin {
    x.all = true;
    x
}

const BUILTINS: &[Builtin] = &[
    b(
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        true,
        false,
        &["ns"],
    ),
    b(
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        true,
        false,
        false,
        &["cm"],
    ),
    b("", "v1", "Secret", "secrets", true, false, false, &[]),
    b(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        false,
        false,
        &["sa"],
    ),
    all(b(
        "",
        "v1",
        "Service",
        "services",
        true,
        true,
        false,
        &["svc"],
    )),
    all(b("", "v1", "Pod", "pods", true, true, true, &["po"])),
    b("", "v1", "Node", "nodes", false, true, false, &["no"]),
    b("", "v1", "Event", "events", true, false, false, &["ev"]),
    b(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        true,
        false,
        &["pvc"],
    ),
    b(
        "",
        "v1",
        "Endpoints",
        "endpoints",
        true,
        false,
        false,
        &["ep"],
    ),
    all(b(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        true,
        true,
        &["deploy"],
    )),
    all(b(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        true,
        true,
        &["rs"],
    )),
    all(b(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        true,
        true,
        &["sts"],
    )),
    all(b(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        true,
        true,
        true,
        &["ds"],
    )),
    // Kept by workload controllers as their revision history (and by the
    // ManifestWorkReplicaSet controller's rollback opt-in).
    b(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        false,
        false,
        &[],
    ),
    all(b("batch", "v1", "Job", "jobs", true, true, true, &[])),
    all(b(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        true,
        true,
        &["cj"],
    )),
    b(
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        false,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        false,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        false,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        false,
        false,
        &[],
    ),
    b(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        true,
        true,
        &["crd", "crds"],
    ),
    b(
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        false,
        false,
        &[],
    ),
    b(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        false,
        false,
        &["ev"],
    ),
    b(
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        true,
        true,
        false,
        &["quota"],
    ),
    b(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
        true,
        &["pdb"],
    ),
    b(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        false,
        false,
        &["pc"],
    ),
    b(
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        true,
        true,
        true,
        &["ing"],
    ),
    b(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        false,
        true,
        &["netpol"],
    ),
    review("SubjectAccessReview", "subjectaccessreviews", false),
    review(
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
    ),
    review("SelfSubjectAccessReview", "selfsubjectaccessreviews", false),
];

/// An authorization review kind: create-only, answered rather than stored.
const fn review(kind: &'static str, plural: &'static str, namespaced: bool) -> Builtin {
    Builtin {
        verbs: Some(&["create"]),
        ..b(
            "authorization.k8s.io",
            "v1",
            kind,
            plural,
            namespaced,
            false,
            false,
            &[],
        )
    }
}

/// The built-in resources, as registry entries.
pub(crate) fn builtin_resources() -> Vec<ResourceInfo> {
    BUILTINS
        .iter()
        .map(|x| {
            let mut info = ResourceInfo::new(x.group, x.version, x.kind, x.plural, x.namespaced);
            info.status_subresource = x.status;
            info.tracks_generation = x.generation;
            info.short_names = x.short.iter().map(|s| s.to_string()).collect();
            if x.all {
                info.categories = vec!["all".to_string()];
            }
            if let Some(verbs) = x.verbs {
                info.verbs = verbs.iter().map(|s| s.to_string()).collect();
            }
            info.scale = (x.group == "apps"
                && matches!(x.plural, "deployments" | "replicasets" | "statefulsets"))
            .then(|| ScaleSubresource::new(".spec.replicas", ".status.replicas"));
            info
        })
        .collect()
}

/// Merge keys of built-in list fields, by the field's name and its parent's name.
///
/// This is the table that stands in for the OpenAPI `x-kubernetes-list-map-keys`
/// (and `patchMergeKey`) of core kinds. `None` means "atomic" (replace as a whole).
pub(crate) fn builtin_list_keys(
    parent: Option<&str>,
    field: &str,
) -> Option<&'static [&'static str]> {
    match (parent, field) {
        (_, "containers" | "initContainers" | "ephemeralContainers") => Some(&["name"]),
        (Some("containers" | "initContainers" | "ephemeralContainers"), "ports") => {
            Some(&["containerPort", "protocol"])
        }
        (Some("spec"), "ports") => Some(&["port", "protocol"]),
        (_, "env") => Some(&["name"]),
        (_, "volumes") => Some(&["name"]),
        (_, "volumeMounts") => Some(&["mountPath"]),
        (_, "volumeDevices") => Some(&["devicePath"]),
        (_, "conditions") => Some(&["type"]),
        (_, "imagePullSecrets") => Some(&["name"]),
        (_, "hostAliases") => Some(&["ip"]),
        (_, "topologySpreadConstraints") => Some(&["topologyKey", "whenUnsatisfiable"]),
        (_, "resourceClaims") => Some(&["name"]),
        (Some("metadata"), "ownerReferences") => Some(&["uid"]),
        _ => None,
    }
}

/// Whether a built-in list field is a set of scalars (merged by value).
pub(crate) fn builtin_is_set(parent: Option<&str>, field: &str) -> bool {
    matches!((parent, field), (Some("metadata"), "finalizers"))
}
