//! Deployment manifests for `ocm-work-agent` (on a managed cluster) and `ocm-hub-controller`
//! (on a hub), printed by the `ocm-deploy` binary.
//!
//! Each set is a Namespace, the CRDs the component serves or reads, a ServiceAccount, RBAC
//! and a Deployment whose probes use the component's `/healthz` and `/readyz`:
//!
//! * the agent gets upstream's klusterlet work agent permissions on its managed cluster:
//!   [`AGENT_RULES`] (its AppliedManifestWorks, SubjectAccessReviews and impersonation for
//!   `executor` subjects), [`AGENT_EXECUTION_RULES`] (kinds a ManifestWork commonly carries
//!   that the `admin` role does not cover) and the built-in `admin` ClusterRole bound
//!   cluster-wide, so that it can apply what the hub sends; [`AGENT_NAMESPACE_RULES`] in its
//!   own namespace for the leader election Lease. Its hub permissions are the ones upstream's
//!   registration gives every agent of a cluster (ManifestWorks of the cluster namespace,
//!   their status and events), bound to the identity in the hub kubeconfig the Deployment
//!   mounts from the Secret `hub-kubeconfig-secret` (key `kubeconfig`), as upstream's;
//! * the hub controller gets [`HUB_RULES`]: the requests its Placement, cluster inventory
//!   and ManifestWorkReplicaSet controllers send, no more, and [`HUB_NAMESPACE_RULES`] for
//!   its Lease.
//!
//! The rules list the verbs our code calls (each with the reason); `examples/tests/deploy.rs`
//! runs both binaries with exactly these permissions against fake clusters that enforce
//! RBAC and checks that no request is refused.
//!
//! # Running the agent against a real hub
//!
//! The image: `podman build -t <registry>/ocm-rs:<tag> -f Containerfile .` at the top of the
//! repository (static binaries, non-root), pushed where the clusters can pull it.
//!
//! * **With upstream's registration** (an upstream Go hub, the cluster joined with
//!   `clusteradm join`): the hub's registration controller already gives the cluster's agents
//!   their hub permissions (the `open-cluster-management:managedcluster:work` ClusterRole,
//!   bound in the cluster namespace to the group `system:open-cluster-management:<cluster>`),
//!   and the klusterlet's registration agent keeps the hub kubeconfig, whose client
//!   certificate is in that group, in the Secret `hub-kubeconfig-secret` of
//!   `open-cluster-management-agent`. `ocm-deploy agent --cluster-name <cluster> --image …
//!   --no-crds | kubectl apply -f -` on the managed cluster runs our agent with that Secret
//!   (the klusterlet installed the AppliedManifestWork CRD already). Run it *instead of*
//!   upstream's work agent for that cluster, never next to it: both would apply the same
//!   ManifestWorks into the same AppliedManifestWorks (same hub hash, same names).
//! * **With our hub controller** (no registration): `ocm-deploy hub --image … | kubectl
//!   apply -f -` on the hub. For each cluster, create its ManagedCluster and namespace, grant
//!   its agent what upstream's registration would (the ClusterRole above, bound in the
//!   cluster namespace to the agent's user or group), and put a kubeconfig for that user into
//!   the managed cluster's `hub-kubeconfig-secret`: `kubectl -n open-cluster-management-agent
//!   create secret generic hub-kubeconfig-secret --from-file=kubeconfig=hub.kubeconfig`.
//!   Then `ocm-deploy agent --cluster-name <cluster> --image … | kubectl apply -f -`.
//!
//! In a pod the Lease lives in the pod's namespace (read from its service account); with
//! `--replicas 2` or more, one replica acts and the others stand by (`/readyz` answers `ok`
//! on all of them; the `leader_election_master_status` series says which one leads).

use serde_json::{Value, json};

/// One RBAC rule and why the component needs it.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// API groups (`""` is the core group).
    pub api_groups: &'static [&'static str],
    /// Resources, with `/subresource` where it applies.
    pub resources: &'static [&'static str],
    /// Verbs.
    pub verbs: &'static [&'static str],
    /// What calls it.
    pub why: &'static str,
}

impl Rule {
    fn to_json(self) -> Value {
        json!({"apiGroups": self.api_groups, "resources": self.resources, "verbs": self.verbs})
    }
}

const WORK: &str = "work.open-cluster-management.io";
const CLUSTER: &str = "cluster.open-cluster-management.io";

/// The work agent's own permissions on its managed cluster (upstream's
/// `open-cluster-management:klusterlet-work:agent`).
pub const AGENT_RULES: &[Rule] = &[
    Rule {
        api_groups: &[WORK],
        resources: &["appliedmanifestworks"],
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
        why: "the AppliedManifestWork of each ManifestWork: informer, create, owner and finalizer updates, eviction",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["appliedmanifestworks/status"],
        verbs: &["patch", "update"],
        why: "status.appliedResources",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["appliedmanifestworks/finalizers"],
        verbs: &["update"],
        why: "owner references with blockOwnerDeletion on applied resources",
    },
    Rule {
        api_groups: &["authorization.k8s.io"],
        resources: &["subjectaccessreviews"],
        verbs: &["create"],
        why: "checks of a ManifestWork's executor before applying as it",
    },
    Rule {
        api_groups: &[""],
        resources: &["serviceaccounts"],
        verbs: &["impersonate"],
        why: "applying as a ManifestWork's executor ServiceAccount",
    },
];

/// What the agent may apply besides the `admin` ClusterRole (upstream's
/// `open-cluster-management:klusterlet-work:execution`).
pub const AGENT_EXECUTION_RULES: &[Rule] = &[
    Rule {
        api_groups: &["apiextensions.k8s.io"],
        resources: &["customresourcedefinitions"],
        verbs: &["get", "list", "watch", "create", "delete", "update"],
        why: "CRDs in ManifestWorks",
    },
    Rule {
        api_groups: &[""],
        resources: &["namespaces"],
        verbs: &["create", "update", "patch", "delete"],
        why: "Namespaces in ManifestWorks",
    },
    Rule {
        api_groups: &["rbac.authorization.k8s.io"],
        resources: &["clusterrolebindings", "rolebindings"],
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
        why: "RBAC in ManifestWorks",
    },
    Rule {
        api_groups: &["rbac.authorization.k8s.io"],
        resources: &["clusterroles", "roles"],
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete", "escalate", "bind",
        ],
        why: "RBAC in ManifestWorks (escalate and bind: roles granting what the agent lacks)",
    },
    Rule {
        api_groups: &["scheduling.k8s.io"],
        resources: &["priorityclasses"],
        verbs: &[
            "get", "list", "watch", "create", "patch", "update", "delete",
        ],
        why: "PriorityClasses in ManifestWorks",
    },
    Rule {
        api_groups: &["admissionregistration.k8s.io"],
        resources: &[
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ],
        verbs: &["get", "list", "watch", "create", "update", "patch"],
        why: "webhook configurations in ManifestWorks",
    },
];

/// The agent's permissions in its own namespace.
pub const AGENT_NAMESPACE_RULES: &[Rule] = &[Rule {
    api_groups: &["coordination.k8s.io"],
    resources: &["leases"],
    verbs: &["get", "create", "update"],
    why: "leader election (work-agent-lock)",
}];

/// The hub controller's permissions on the hub.
pub const HUB_RULES: &[Rule] = &[
    Rule {
        api_groups: &[CLUSTER],
        resources: &["managedclusters"],
        verbs: &["get", "list", "watch", "patch"],
        why: "placement inputs; the inventory controller labels clusters with their ManagedClusterSet",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &["managedclustersets"],
        verbs: &["get", "list", "watch", "create", "update"],
        why: "placement inputs; the inventory controller creates the default and global sets",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &[
            "managedclustersets/status",
            "managedclustersetbindings/status",
        ],
        verbs: &["patch", "update"],
        why: "the inventory controller's set and binding conditions",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &[
            "managedclustersetbindings",
            "addonplacementscores",
            "placements",
        ],
        verbs: &["get", "list", "watch"],
        why: "placement inputs",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &["placements/status"],
        verbs: &["patch", "update"],
        why: "Placement conditions and numberOfSelectedClusters",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &["placementdecisions"],
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
        why: "the Placement controller's decisions",
    },
    Rule {
        api_groups: &[CLUSTER],
        resources: &["placementdecisions/status"],
        verbs: &["patch", "update"],
        why: "the decisions' status",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["manifestworkreplicasets"],
        verbs: &["get", "list", "watch", "update", "patch"],
        why: "the ManifestWorkReplicaSet controller (its finalizer) and the rollout metrics",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["manifestworkreplicasets/finalizers"],
        verbs: &["update"],
        why: "ControllerRevisions owned by a ManifestWorkReplicaSet with blockOwnerDeletion \
              (--rollback)",
    },
    Rule {
        api_groups: &["apps"],
        resources: &["controllerrevisions"],
        verbs: &["get", "list", "create", "patch", "delete"],
        why: "the template history of ManifestWorkReplicaSet rollback (--rollback)",
    },
    Rule {
        api_groups: &["apiextensions.k8s.io"],
        resources: &["customresourcedefinitions"],
        verbs: &["get", "list", "watch"],
        why: "whether the installed ManifestWorkReplicaSet CRD keeps the fields of --rollback \
              and --feedback-aggregation (the OptInFieldsInstalled condition)",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["manifestworkreplicasets/status"],
        verbs: &["patch", "update"],
        why: "ManifestWorkReplicaSet conditions and summary",
    },
    Rule {
        api_groups: &[WORK],
        resources: &["manifestworks"],
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
        why: "the ManifestWorks a ManifestWorkReplicaSet places in cluster namespaces",
    },
    Rule {
        api_groups: &["events.k8s.io"],
        resources: &["events"],
        verbs: &["create", "patch", "update"],
        why: "the Placement controller's decision Events",
    },
];

/// The hub controller's permissions in its own namespace.
pub const HUB_NAMESPACE_RULES: &[Rule] = &[Rule {
    api_groups: &["coordination.k8s.io"],
    resources: &["leases"],
    verbs: &["get", "create", "update"],
    why: "leader election (ocm-hub-controller-lock)",
}];

/// Settings of the agent's manifests.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The managed cluster's name on the hub (`--cluster-name`).
    pub cluster_name: String,
    /// Namespace of the agent (upstream's `open-cluster-management-agent`).
    pub namespace: String,
    /// The container image holding `/usr/local/bin/ocm-work-agent` (see `Containerfile`).
    pub image: String,
    /// Replicas; more than one elect a leader.
    pub replicas: u32,
    /// Include the AppliedManifestWork CRD.
    pub crds: bool,
}

impl AgentOptions {
    /// Defaults for the agent of `cluster_name`.
    pub fn new(cluster_name: impl Into<String>) -> Self {
        Self {
            cluster_name: cluster_name.into(),
            namespace: "open-cluster-management-agent".into(),
            image: DEFAULT_IMAGE.into(),
            replicas: 1,
            crds: true,
        }
    }
}

/// Settings of the hub controller's manifests.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HubOptions {
    /// Namespace of the controller (upstream's `open-cluster-management-hub`).
    pub namespace: String,
    /// The container image holding `/usr/local/bin/ocm-hub-controller`.
    pub image: String,
    /// Replicas; more than one elect a leader.
    pub replicas: u32,
    /// Include the hub's CRDs (every OCM CRD but AppliedManifestWork).
    pub crds: bool,
}

impl Default for HubOptions {
    fn default() -> Self {
        Self {
            namespace: "open-cluster-management-hub".into(),
            image: DEFAULT_IMAGE.into(),
            replicas: 1,
            crds: true,
        }
    }
}

/// The image the manifests name unless told otherwise (build it with the `Containerfile`).
pub const DEFAULT_IMAGE: &str = "localhost/ocm-rs:latest";
/// The agent's ServiceAccount (upstream's name).
pub const AGENT_SERVICE_ACCOUNT: &str = "klusterlet-work-sa";
/// The hub controller's ServiceAccount.
pub const HUB_SERVICE_ACCOUNT: &str = "ocm-hub-controller-sa";
/// The Secret with the agent's hub kubeconfig (key `kubeconfig`), upstream's name.
pub const HUB_KUBECONFIG_SECRET: &str = "hub-kubeconfig-secret";
/// The port of `/healthz`, `/readyz` and `/metrics`.
pub const ENDPOINTS_PORT: u16 = 8080;

fn cluster_role(name: &str, rules: &[Rule]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules.iter().map(|r| r.to_json()).collect::<Vec<_>>()})
}

fn role(name: &str, namespace: &str, rules: &[Rule]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules.iter().map(|r| r.to_json()).collect::<Vec<_>>()})
}

fn subject(service_account: &str, namespace: &str) -> Value {
    json!({"kind": "ServiceAccount", "name": service_account, "namespace": namespace})
}

fn cluster_role_binding(name: &str, role: &str, subject: &Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject]})
}

fn role_binding(name: &str, namespace: &str, subject: &Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [subject]})
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn service_account(name: &str, namespace: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace}})
}

/// A Deployment running `binary` with `args`, the endpoints on [`ENDPOINTS_PORT`] as probes,
/// non-root with a read-only root filesystem.
fn deployment(
    name: &str,
    namespace: &str,
    service_account: &str,
    image: &str,
    replicas: u32,
    args: Vec<String>,
    volumes: (Vec<Value>, Vec<Value>),
) -> Value {
    let probe = |path: &str| {
        json!({"httpGet": {"path": path, "port": "endpoints"},
            "initialDelaySeconds": 2, "periodSeconds": 10})
    };
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "serviceAccountName": service_account,
                    "securityContext": {"runAsNonRoot": true,
                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [{
                        "name": name,
                        "image": image,
                        "command": [format!("/usr/local/bin/{name}")],
                        "args": args,
                        "env": [{"name": "RUST_LOG", "value": "info"}],
                        "ports": [{"name": "endpoints", "containerPort": ENDPOINTS_PORT}],
                        "livenessProbe": probe("/healthz"),
                        "readinessProbe": probe("/readyz"),
                        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "runAsNonRoot": true,
                            "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": volumes.0,
                    }],
                    "volumes": volumes.1,
                }
            }
        }
    })
}

fn crds(keep: impl Fn(&str) -> bool) -> Vec<Value> {
    ocm_api::crds()
        .into_iter()
        .filter(|c| keep(&c.spec.names.kind))
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect()
}

/// The agent's ClusterRoles' names.
pub fn agent_role_names() -> [&'static str; 2] {
    [
        "open-cluster-management:ocm-rs-work:agent",
        "open-cluster-management:ocm-rs-work:execution",
    ]
}

/// The managed cluster's manifests for `ocm-work-agent`.
pub fn agent_manifests(options: &AgentOptions) -> Vec<Value> {
    let ns = options.namespace.as_str();
    let sa = subject(AGENT_SERVICE_ACCOUNT, ns);
    let [agent_role, execution_role] = agent_role_names();
    let mut out = vec![namespace(ns)];
    if options.crds {
        out.extend(crds(|kind| kind == "AppliedManifestWork"));
    }
    out.extend([
        service_account(AGENT_SERVICE_ACCOUNT, ns),
        cluster_role(agent_role, AGENT_RULES),
        cluster_role(execution_role, AGENT_EXECUTION_RULES),
        cluster_role_binding(agent_role, agent_role, &sa),
        cluster_role_binding(execution_role, execution_role, &sa),
        // As upstream: the built-in admin role, cluster-wide, for the namespaced kinds works
        // carry.
        cluster_role_binding(
            "open-cluster-management:ocm-rs-work:execution-admin",
            "admin",
            &sa,
        ),
        role(
            "open-cluster-management:ocm-rs-work:agent",
            ns,
            AGENT_NAMESPACE_RULES,
        ),
        role_binding("open-cluster-management:ocm-rs-work:agent", ns, &sa),
        deployment(
            "ocm-work-agent",
            ns,
            AGENT_SERVICE_ACCOUNT,
            &options.image,
            options.replicas,
            vec![
                format!("--cluster-name={}", options.cluster_name),
                "--hub-kubeconfig=/spoke/hub-kubeconfig/kubeconfig".into(),
                format!("--endpoints-address=:{ENDPOINTS_PORT}"),
                "--log-format=json".into(),
            ],
            (
                vec![
                    json!({"name": "hub-kubeconfig", "mountPath": "/spoke/hub-kubeconfig",
                    "readOnly": true}),
                ],
                vec![json!({"name": "hub-kubeconfig",
                    "secret": {"secretName": HUB_KUBECONFIG_SECRET}})],
            ),
        ),
    ]);
    out
}

/// The hub's manifests for `ocm-hub-controller`.
pub fn hub_manifests(options: &HubOptions) -> Vec<Value> {
    let ns = options.namespace.as_str();
    let sa = subject(HUB_SERVICE_ACCOUNT, ns);
    let name = "open-cluster-management:ocm-rs-hub:controller";
    let mut out = vec![namespace(ns)];
    if options.crds {
        out.extend(crds(|kind| kind != "AppliedManifestWork"));
    }
    out.extend([
        service_account(HUB_SERVICE_ACCOUNT, ns),
        cluster_role(name, HUB_RULES),
        cluster_role_binding(name, name, &sa),
        role(name, ns, HUB_NAMESPACE_RULES),
        role_binding(name, ns, &sa),
        deployment(
            "ocm-hub-controller",
            ns,
            HUB_SERVICE_ACCOUNT,
            &options.image,
            options.replicas,
            vec![
                format!("--endpoints-address=:{ENDPOINTS_PORT}"),
                "--log-format=json".into(),
            ],
            (vec![], vec![]),
        ),
    ]);
    out
}

/// Objects as one multi-document YAML stream.
pub fn to_yaml(objects: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    for object in objects {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(object).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(objects: &[Value]) -> Vec<String> {
        objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn the_agent_gets_upstreams_roles_and_a_probed_deployment() {
        let objects = agent_manifests(&AgentOptions::new("cluster1"));
        let kinds = kinds(&objects);
        assert_eq!(kinds[0], "Namespace");
        assert_eq!(kinds[1], "CustomResourceDefinition");
        assert_eq!(kinds.last().map(String::as_str), Some("Deployment"));
        let deployment = objects.last().unwrap();
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
        assert!(
            container["args"]
                .as_array()
                .unwrap()
                .contains(&json!("--cluster-name=cluster1"))
        );
        assert_eq!(container["securityContext"]["runAsNonRoot"], true);
        let admin = objects
            .iter()
            .find(|o| o["roleRef"]["name"] == "admin")
            .expect("the admin binding");
        assert_eq!(admin["kind"], "ClusterRoleBinding");
        let without = agent_manifests(&AgentOptions {
            crds: false,
            ..AgentOptions::new("c")
        });
        assert!(
            !without
                .iter()
                .any(|o| o["kind"] == "CustomResourceDefinition")
        );
    }

    #[test]
    fn the_hub_gets_every_crd_but_appliedmanifestwork() {
        let objects = hub_manifests(&HubOptions::default());
        let crds: Vec<_> = objects
            .iter()
            .filter(|o| o["kind"] == "CustomResourceDefinition")
            .map(|o| o["spec"]["names"]["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(crds.len(), ocm_api::crds().len() - 1);
        assert!(!crds.contains(&"AppliedManifestWork"));
        assert!(crds.contains(&"ManifestWork"));
        let yaml = to_yaml(&objects).unwrap();
        assert!(yaml.starts_with("---\n"));
        assert!(yaml.contains("ocm-hub-controller-sa"));
    }
}
