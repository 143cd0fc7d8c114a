//! What the syncers of one ManagedClusterAddOn share as they run, one after another.
//!
//! Upstream's addon-framework hands each syncer of its deploy controller the addon object
//! and lets it change the status and finalizers in place; an error of one syncer is kept
//! and the others still run. [`AddonSync`] is that object here: the status and finalizers
//! being built, and the errors met so far. The chain's inputs that no syncer changes (the
//! addon, its options, the cluster, the resolved configs) are a [`DeployContext`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ocm_api::addon::v1beta1::{ManagedClusterAddOn, ManagedClusterAddOnStatus};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::conditions;
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::Manifest;
use ocm_api::work::v1::ManifestConfigOption;

use crate::Error;
use crate::addon::agent::{AddonConfigs, AgentAddon, AgentAddonOptions};

/// What the deploy syncers of one ManagedClusterAddOn work from.
pub(super) struct DeployContext<'a> {
    pub(super) addon: &'a dyn AgentAddon,
    pub(super) options: &'a AgentAddonOptions,
    pub(super) cluster: &'a ManagedCluster,
    /// The addon, with the status the syncers before the deploy chain wrote.
    pub(super) mca: &'a ManagedClusterAddOn,
    pub(super) configs: &'a AddonConfigs,
    /// The hosting cluster, for an addon in hosted mode.
    pub(super) hosting: Option<String>,
    pub(super) now: &'a Time,
}

impl DeployContext<'_> {
    /// How errors name the addon: `ManagedClusterAddOn <cluster>/<name>`.
    pub(super) fn object(&self) -> String {
        use kube::ResourceExt;
        format!(
            "ManagedClusterAddOn {}/{}",
            self.mca.namespace().unwrap_or_default(),
            self.mca.name_any()
        )
    }
}

/// The addon's manifests as the addon rendered them, and the manifest configs its works
/// carry (the addon's probe rules and its extra configs).
pub(super) struct Rendered {
    pub(super) manifests: Vec<Manifest>,
    pub(super) configs: Vec<ManifestConfigOption>,
}

/// The status, finalizers and errors the syncers of one ManagedClusterAddOn build.
pub(super) struct AddonSync {
    pub(super) status: ManagedClusterAddOnStatus,
    pub(super) finalizers: Vec<String>,
    pub(super) errors: Vec<Error>,
}

impl AddonSync {
    /// Starts from the addon's finalizers and `status`.
    pub(super) fn new(mca: &ManagedClusterAddOn, status: ManagedClusterAddOnStatus) -> Self {
        Self {
            status,
            finalizers: mca.metadata.finalizers.clone().unwrap_or_default(),
            errors: Vec::new(),
        }
    }

    /// The status conditions, created empty when there are none.
    pub(super) fn conditions(&mut self) -> &mut Vec<Condition> {
        self.status.conditions.get_or_insert_with(Vec::new)
    }

    /// Whether the condition `type_` is present and `True`.
    pub(super) fn is_true(&self, type_: &str) -> bool {
        self.status
            .conditions
            .as_deref()
            .is_some_and(|c| conditions::is_true(c, type_))
    }

    /// Whether the condition `type_` is present, whatever its status.
    pub(super) fn has_condition(&self, type_: &str) -> bool {
        self.status
            .conditions
            .as_deref()
            .is_some_and(|c| conditions::find(c, type_).is_some())
    }

    pub(super) fn has_finalizer(&self, f: &str) -> bool {
        self.finalizers.iter().any(|x| x == f)
    }

    /// Adds `f` (dropping deprecated spellings); whether the list changed.
    pub(super) fn add_finalizer(&mut self, f: &str) -> bool {
        add_finalizer(&mut self.finalizers, f)
    }

    /// Removes `f` (and deprecated spellings); whether the list changed.
    pub(super) fn remove_finalizer(&mut self, f: &str) -> bool {
        remove_finalizer(&mut self.finalizers, f)
    }

    /// Keeps `e`; the chain goes on.
    pub(super) fn fail(&mut self, e: Error) {
        self.errors.push(e);
    }

    /// The addon as the syncers so far left it (for callbacks that read its status).
    pub(super) fn current(&self, mca: &ManagedClusterAddOn) -> ManagedClusterAddOn {
        let mut current = mca.clone();
        current.status = Some(self.status.clone());
        current
    }
}

fn add_finalizer(finalizers: &mut Vec<String>, f: &str) -> bool {
    let before = finalizers.clone();
    finalizers.retain(|x| !ac::DEPRECATED_FINALIZERS.contains(&x.as_str()));
    if !finalizers.iter().any(|x| x == f) {
        finalizers.push(f.to_string());
    }
    *finalizers != before
}

fn remove_finalizer(finalizers: &mut Vec<String>, f: &str) -> bool {
    let before = finalizers.len();
    finalizers.retain(|x| x != f && !ac::DEPRECATED_FINALIZERS.contains(&x.as_str()));
    finalizers.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizers_drop_deprecated_spellings() {
        let mut f = vec![
            "cluster.open-cluster-management.io/addon-pre-delete".to_string(),
            "x".to_string(),
        ];
        assert!(add_finalizer(&mut f, ac::PRE_DELETE_HOOK_FINALIZER));
        assert_eq!(f, ["x", ac::PRE_DELETE_HOOK_FINALIZER]);
        assert!(!add_finalizer(&mut f, ac::PRE_DELETE_HOOK_FINALIZER));
        assert!(remove_finalizer(&mut f, ac::PRE_DELETE_HOOK_FINALIZER));
        assert_eq!(f, ["x"]);
    }
}
