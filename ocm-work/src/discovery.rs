//! Resolving a manifest's group, version and kind to the resource that serves it.
//!
//! The agent asks the managed cluster (discovery of one group-version) and caches the answer.
//! A kind the cache does not know triggers a fresh look-up, so CRDs installed by an earlier
//! manifest of the same work resolve on the next sync without a restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{self, Scope};

/// A resolved resource: how to address it and whether it is namespaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedResource {
    /// Group, version, kind and plural.
    pub api_resource: ApiResource,
    /// Whether objects of this kind live in namespaces.
    pub namespaced: bool,
}

/// A GVK → resource cache over one cluster's discovery.
#[derive(Clone)]
pub struct ResourceResolver {
    client: Client,
    cache: Arc<Mutex<HashMap<GroupVersionKind, ResolvedResource>>>,
}

impl std::fmt::Debug for ResourceResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceResolver").finish_non_exhaustive()
    }
}

/// Why a kind could not be resolved; the message is upstream's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the server doesn't have a resource type \"{kind}\"")]
pub struct UnknownKind {
    /// The kind.
    pub kind: String,
}

impl ResourceResolver {
    /// A resolver over `client`'s cluster.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            cache: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Resolves `gvk`, asking the cluster when the cache has no answer.
    pub async fn resolve(&self, gvk: &GroupVersionKind) -> Result<ResolvedResource, UnknownKind> {
        if let Some(hit) = self.lock().get(gvk).cloned() {
            return Ok(hit);
        }
        let unknown = || UnknownKind {
            kind: gvk.kind.clone(),
        };
        let (api_resource, caps) = discovery::pinned_kind(&self.client, gvk)
            .await
            .map_err(|_| unknown())?;
        let resolved = ResolvedResource {
            api_resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        self.lock().insert(gvk.clone(), resolved.clone());
        Ok(resolved)
    }

    /// Resolves the resource `plural` of `group`/`version` (what a manifest status entry
    /// without its kind names, as upstream's agent reads objects by resource), asking the
    /// cluster when the cache has no answer. The error names the resource.
    pub async fn resolve_resource(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<ResolvedResource, UnknownKind> {
        let cached = self
            .lock()
            .values()
            .find(|r| {
                r.api_resource.group == group
                    && r.api_resource.version == version
                    && r.api_resource.plural == plural
            })
            .cloned();
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let unknown = || UnknownKind {
            kind: plural.to_string(),
        };
        let gv = kube::core::GroupVersion::gv(group, version);
        let api_group = discovery::pinned_group(&self.client, &gv)
            .await
            .map_err(|_| unknown())?;
        let (api_resource, caps) = api_group
            .versioned_resources(version)
            .into_iter()
            .find(|(ar, _)| ar.plural == plural)
            .ok_or_else(unknown)?;
        let resolved = ResolvedResource {
            api_resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        let gvk = GroupVersionKind::gvk(group, version, &resolved.api_resource.kind);
        self.lock().insert(gvk, resolved.clone());
        Ok(resolved)
    }

    /// Forgets everything (for example after CRDs were removed).
    pub fn invalidate(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<GroupVersionKind, ResolvedResource>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}
