//! Hub RBAC for an addon's agent (addon-framework's `RBACPermissionBuilder` and the template
//! addon's `hubPermissions`): what the manager creates on the hub so that the identity in
//! `status.registrations` may read and write what the agent needs there.
//!
//! The subjects are taken from the addon's `kubeClient` registration (user and groups, leaving
//! out `system:authenticated`), as upstream's `BuildSubjectsFromRegistration` does. While the
//! registration has no subject yet, `RegistrationApplied` is `False` with reason
//! `PermissionConfigPending`.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::addon::v1beta1::{ManagedClusterAddOn, RegistrationType};
use ocm_api::constants::{addon as ac, groups};

use crate::{Error, Result};

/// One piece of hub RBAC for the agent.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HubPermission {
    /// The Role, created in the cluster's namespace (owned by the ManagedClusterAddOn), and a
    /// RoleBinding of the same name to the agent's subjects (upstream's
    /// `BindKubeClientRole`).
    KubeClientRole(Role),
    /// The ClusterRole, and a ClusterRoleBinding of the same name to the agent's subjects
    /// (upstream's `BindKubeClientClusterRole`).
    KubeClientClusterRole(ClusterRole),
    /// A RoleBinding in the cluster's namespace to an existing ClusterRole, named
    /// `open-cluster-management:<addon>:clusterrole:agent`, owned by the ManagedClusterAddOn
    /// (the template addon's `CurrentCluster` permission).
    CurrentCluster {
        /// The ClusterRole.
        cluster_role: String,
    },
    /// A RoleBinding in `namespace` to `role_ref`, named
    /// `open-cluster-management:<addon>:<kind in lower case>:agent` (the template addon's
    /// `SingleNamespace` permission; not owned, as it lives in another namespace).
    SingleNamespace {
        /// The hub namespace.
        namespace: String,
        /// The Role or ClusterRole.
        role_ref: RoleRef,
    },
}

/// The agent's subjects from the addon's `kubeClient` registration; empty while it has none.
pub fn subjects(addon: &ManagedClusterAddOn) -> Vec<Subject> {
    let Some(subject) = addon
        .status
        .as_ref()
        .and_then(|s| s.registrations.as_ref())
        .and_then(|r| r.iter().find(|r| r.type_ == RegistrationType::KubeClient))
        .and_then(|r| r.kube_client.as_ref())
        .and_then(|k| k.subject.as_ref())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(user) = subject.user.as_deref().filter(|u| !u.is_empty()) {
        out.push(subject_of("User", user));
    }
    for g in subject.groups.iter().flatten() {
        if g != "system:authenticated" {
            out.push(subject_of("Group", g));
        }
    }
    out
}

fn subject_of(kind: &str, name: &str) -> Subject {
    Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
        namespace: None,
    }
}

fn addon_owner(addon: &ManagedClusterAddOn) -> OwnerReference {
    OwnerReference {
        api_version: format!("{}/v1beta1", groups::ADDON),
        kind: "ManagedClusterAddOn".into(),
        name: addon.name_any(),
        uid: addon.metadata.uid.clone().unwrap_or_default(),
        block_owner_deletion: Some(true),
        controller: None,
    }
}

/// A reference to a Role or ClusterRole. Built through serde because `apiGroup` is a plain
/// string in some Kubernetes versions of k8s-openapi and optional in others.
pub fn role_ref(kind: &str, name: &str) -> RoleRef {
    serde_json::from_value(serde_json::json!({
        "apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name,
    }))
    .unwrap_or_default()
}

/// The RBAC objects one permission stands for, for `addon` on `cluster` with `subjects`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RbacObjects {
    /// Roles to ensure.
    pub roles: Vec<Role>,
    /// RoleBindings to ensure.
    pub role_bindings: Vec<RoleBinding>,
    /// ClusterRoles to ensure.
    pub cluster_roles: Vec<ClusterRole>,
    /// ClusterRoleBindings to ensure.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
}

impl HubPermission {
    /// The objects this permission creates (pure).
    pub fn objects(
        &self,
        cluster: &str,
        addon: &ManagedClusterAddOn,
        subjects: &[Subject],
    ) -> RbacObjects {
        let mut out = RbacObjects::default();
        let name = addon.name_any();
        match self {
            Self::KubeClientRole(role) => {
                let role_name = role.name_any();
                let mut r = role.clone();
                r.metadata.namespace = Some(cluster.into());
                r.metadata.owner_references = Some(vec![addon_owner(addon)]);
                out.roles.push(r);
                out.role_bindings.push(RoleBinding {
                    metadata: ObjectMeta {
                        name: Some(role_name.clone()),
                        namespace: Some(cluster.into()),
                        owner_references: Some(vec![addon_owner(addon)]),
                        ..ObjectMeta::default()
                    },
                    role_ref: role_ref("Role", &role_name),
                    subjects: Some(subjects.to_vec()),
                });
            }
            Self::KubeClientClusterRole(role) => {
                let role_name = role.name_any();
                out.cluster_roles.push(role.clone());
                out.cluster_role_bindings.push(ClusterRoleBinding {
                    metadata: ObjectMeta {
                        name: Some(role_name.clone()),
                        ..ObjectMeta::default()
                    },
                    role_ref: role_ref("ClusterRole", &role_name),
                    subjects: Some(subjects.to_vec()),
                });
            }
            Self::CurrentCluster { cluster_role } => {
                out.role_bindings.push(template_binding(
                    &name,
                    cluster,
                    role_ref("ClusterRole", cluster_role),
                    subjects,
                    Some(addon_owner(addon)),
                ));
            }
            Self::SingleNamespace {
                namespace,
                role_ref,
            } => {
                out.role_bindings.push(template_binding(
                    &name,
                    namespace,
                    role_ref.clone(),
                    subjects,
                    None,
                ));
            }
        }
        out
    }
}

fn template_binding(
    addon: &str,
    namespace: &str,
    role_ref: RoleRef,
    subjects: &[Subject],
    owner: Option<OwnerReference>,
) -> RoleBinding {
    RoleBinding {
        metadata: ObjectMeta {
            name: Some(format!(
                "open-cluster-management:{addon}:{}:agent",
                role_ref.kind.to_lowercase()
            )),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([
                (ac::ADDON_LABEL.to_string(), addon.to_string()),
                (ac::ADDON_TEMPLATE_LABEL.to_string(), String::new()),
            ])),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        role_ref,
        subjects: Some(subjects.to_vec()),
    }
}

/// Server-side applies the objects of `permissions` on the hub, as `field_manager`.
pub async fn apply(
    client: &Client,
    field_manager: &str,
    cluster: &str,
    addon: &ManagedClusterAddOn,
    permissions: &[HubPermission],
    subjects: &[Subject],
) -> Result<()> {
    let params = PatchParams::apply(field_manager).force();
    for p in permissions {
        let objects = p.objects(cluster, addon, subjects);
        for r in objects.roles {
            let ns = r.namespace().unwrap_or_default();
            let api: Api<Role> = Api::namespaced(client.clone(), &ns);
            let body = with_type(&r, "Role")?;
            api.patch(&r.name_any(), &params, &Patch::Apply(&body))
                .await
                .map_err(|e| Error::kube(format!("apply Role {ns}/{}", r.name_any()), e))?;
        }
        for b in objects.role_bindings {
            let ns = b.namespace().unwrap_or_default();
            let api: Api<RoleBinding> = Api::namespaced(client.clone(), &ns);
            let body = with_type(&b, "RoleBinding")?;
            api.patch(&b.name_any(), &params, &Patch::Apply(&body))
                .await
                .map_err(|e| Error::kube(format!("apply RoleBinding {ns}/{}", b.name_any()), e))?;
        }
        for r in objects.cluster_roles {
            let api: Api<ClusterRole> = Api::all(client.clone());
            let body = with_type(&r, "ClusterRole")?;
            api.patch(&r.name_any(), &params, &Patch::Apply(&body))
                .await
                .map_err(|e| Error::kube(format!("apply ClusterRole {}", r.name_any()), e))?;
        }
        for b in objects.cluster_role_bindings {
            let api: Api<ClusterRoleBinding> = Api::all(client.clone());
            let body = with_type(&b, "ClusterRoleBinding")?;
            api.patch(&b.name_any(), &params, &Patch::Apply(&body))
                .await
                .map_err(|e| {
                    Error::kube(format!("apply ClusterRoleBinding {}", b.name_any()), e)
                })?;
        }
    }
    Ok(())
}

fn with_type<T: serde::Serialize>(object: &T, kind: &str) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(object).map_err(|source| Error::Serialize {
        what: kind.to_string(),
        source,
    })?;
    v["apiVersion"] = "rbac.authorization.k8s.io/v1".into();
    v["kind"] = kind.into();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn addon(registrations: serde_json::Value) -> ManagedClusterAddOn {
        serde_json::from_value(
            json!({"metadata": {"name": "hello", "namespace": "c1", "uid": "u"},
            "spec": {}, "status": {"registrations": registrations}}),
        )
        .unwrap()
    }

    #[test]
    fn subjects_from_the_kube_client_registration() {
        let a = addon(
            json!([{"type": "kubeClient", "kubeClient": {"subject": {"user": "u",
            "groups": ["g", "system:authenticated"]}}}]),
        );
        let s = subjects(&a);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].kind.as_str(), s[0].name.as_str()), ("User", "u"));
        assert_eq!((s[1].kind.as_str(), s[1].name.as_str()), ("Group", "g"));
        assert!(subjects(&addon(json!([]))).is_empty());
    }

    #[test]
    fn template_bindings_are_named_as_upstream() {
        let a = addon(json!([]));
        let s = vec![subject_of("User", "u")];
        let o = HubPermission::CurrentCluster {
            cluster_role: "viewer".into(),
        }
        .objects("c1", &a, &s);
        let b = &o.role_bindings[0];
        assert_eq!(
            b.metadata.name.as_deref(),
            Some("open-cluster-management:hello:clusterrole:agent")
        );
        assert_eq!(b.metadata.namespace.as_deref(), Some("c1"));
        assert!(b.metadata.owner_references.is_some());
        let o = HubPermission::SingleNamespace {
            namespace: "shared".into(),
            role_ref: role_ref("Role", "r"),
        }
        .objects("c1", &a, &s);
        assert_eq!(
            o.role_bindings[0].metadata.name.as_deref(),
            Some("open-cluster-management:hello:role:agent")
        );
        assert!(o.role_bindings[0].metadata.owner_references.is_none());
        let role: Role = serde_json::from_value(
            json!({"metadata": {"name": "open-cluster-management:hello:agent"}}),
        )
        .unwrap();
        let o = HubPermission::KubeClientRole(role).objects("c1", &a, &s);
        assert_eq!(o.roles[0].metadata.namespace.as_deref(), Some("c1"));
        assert_eq!(
            o.role_bindings[0].role_ref.name,
            "open-cluster-management:hello:agent"
        );
    }
}
