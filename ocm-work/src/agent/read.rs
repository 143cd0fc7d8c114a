//! Reading ManifestWorks (hub) and AppliedManifestWorks (managed cluster): from the agent's
//! informers once they are synced, else from the API servers, decoding object by object so
//! that one object the agent cannot decode is reported instead of failing every read.

use std::sync::Arc;

use kube::api::{Api, ListParams};
use kube::core::ApiResource;
use kube::{Resource, ResourceExt};
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};

use super::{KIND_APPLIED_MANIFEST_WORK, KIND_MANIFEST_WORK, WorkAgent, reconcile};
use crate::cache::{DecodeFailure, ObjectCache, RawObject};
use crate::{Error, Result};

/// The [`Error::Undecodable`] of `failure`, an object of `kind`.
pub(super) fn undecodable(kind: &str, failure: &DecodeFailure) -> Error {
    let object = if failure.namespace.is_empty() {
        failure.name.clone()
    } else {
        format!("{}/{}", failure.namespace, failure.name)
    };
    Error::Undecodable {
        kind: kind.to_string(),
        object,
        message: failure.error.clone(),
    }
}

/// GETs `name` as raw JSON and decodes it; a decode failure is an [`Error::Undecodable`] naming
/// the object and the field (a typed GET would log the whole body and say neither).
pub(super) async fn get_decoded<K: serde::de::DeserializeOwned>(
    api: &Api<RawObject>,
    kind: &str,
    name: &str,
) -> Result<Option<K>> {
    let Some(raw) = api
        .get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("get {kind} {name}"), e))?
    else {
        return Ok(None);
    };
    let namespace = raw.meta().namespace.clone().unwrap_or_default();
    raw.decode::<K>().map(Some).map_err(|error| {
        undecodable(
            kind,
            &DecodeFailure::new(namespace, name.to_string(), error),
        )
    })
}

/// Lists `api` as raw JSON and decodes each object on its own: the decoded objects, and the
/// failures.
pub(super) async fn list_decoded<K: serde::de::DeserializeOwned>(
    api: &Api<RawObject>,
    kind: &str,
) -> Result<(Vec<K>, Vec<DecodeFailure>)> {
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| Error::kube(format!("list {kind}s"), e))?;
    let mut objects = Vec::with_capacity(list.items.len());
    let mut failures = Vec::new();
    for raw in list.items {
        let meta = raw.meta().clone();
        match raw.decode::<K>() {
            Ok(object) => objects.push(object),
            Err(error) => failures.push(
                DecodeFailure::new(
                    meta.namespace.unwrap_or_default(),
                    meta.name.unwrap_or_default(),
                    error,
                )
                .at(meta.uid, meta.resource_version),
            ),
        }
    }
    Ok((objects, failures))
}

impl WorkAgent {
    pub(super) fn work_cache(&self) -> Option<&ObjectCache<ManifestWork>> {
        self.caches
            .get()
            .map(|c| &c.works)
            .filter(|c| c.is_synced())
    }

    pub(super) fn applied_cache(&self) -> Option<&ObjectCache<AppliedManifestWork>> {
        self.caches
            .get()
            .map(|c| &c.applied)
            .filter(|c| c.is_synced())
    }

    pub(super) fn remember_work(&self, work: &ManifestWork) {
        if let Some(c) = self.caches.get() {
            c.works.insert(work.clone());
        }
    }

    pub(super) fn remember_applied(&self, amw: &AppliedManifestWork) {
        if let Some(c) = self.caches.get() {
            c.applied.insert(amw.clone());
        }
    }

    /// Drops the informer's copy of the AppliedManifestWork `name`, which the managed cluster
    /// answered is gone (an informer that has not caught up with a cluster that lost its
    /// state, say): the next read asks the cluster.
    pub(super) fn forget_applied(&self, name: &str) {
        if let Some(c) = self.caches.get() {
            c.applied.remove("", name);
        }
    }

    /// The ManifestWork `name`: from the informer when synced, else from the hub. A work that
    /// exists but does not decode is an [`Error::Undecodable`].
    pub(super) async fn get_work(&self, name: &str) -> Result<Option<Arc<ManifestWork>>> {
        if let Some(cache) = self.work_cache() {
            if let Some(failure) = cache.undecodable_object(&self.config.cluster_name, name) {
                return Err(undecodable(KIND_MANIFEST_WORK, &failure));
            }
            return Ok(cache.get(&self.config.cluster_name, name));
        }
        get_decoded(&self.raw_works(), KIND_MANIFEST_WORK, name)
            .await
            .map(|w| w.map(Arc::new))
    }

    /// Whether the ManifestWork `name` exists on the hub, decodable or not.
    pub(super) async fn work_exists(&self, name: &str) -> Result<bool> {
        if let Some(cache) = self.work_cache() {
            return Ok(cache.get(&self.config.cluster_name, name).is_some()
                || cache
                    .undecodable_object(&self.config.cluster_name, name)
                    .is_some());
        }
        self.raw_works()
            .get_opt(name)
            .await
            .map(|w| w.is_some())
            .map_err(|e| Error::kube(format!("get ManifestWork {name}"), e))
    }

    /// The AppliedManifestWork `name`, read from the managed cluster (never from the
    /// informer).
    pub(super) async fn get_applied(&self, name: &str) -> Result<Option<AppliedManifestWork>> {
        get_decoded(&self.raw_applied_works(), KIND_APPLIED_MANIFEST_WORK, name).await
    }

    /// `work`, or the agent's informer copy of it when that is newer (it holds the agent's
    /// own last writes).
    pub(crate) fn freshest(&self, work: Arc<ManifestWork>) -> Arc<ManifestWork> {
        let Some(cache) = self.work_cache() else {
            return work;
        };
        match cache.get(
            work.metadata.namespace.as_deref().unwrap_or_default(),
            &work.name_any(),
        ) {
            Some(cached)
                if cached.metadata.uid == work.metadata.uid
                    && reconcile::newer(
                        cached.metadata.resource_version.as_deref(),
                        work.metadata.resource_version.as_deref(),
                    ) =>
            {
                cached
            }
            _ => work,
        }
    }

    pub(super) fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.config.cluster_name)
    }

    pub(super) fn applied_works(&self) -> Api<AppliedManifestWork> {
        Api::all(self.spoke.clone())
    }

    /// ManifestWorks as raw JSON, for reads that decode each object on its own.
    pub(super) fn raw_works(&self) -> Api<RawObject> {
        Api::namespaced_with(
            self.hub.clone(),
            &self.config.cluster_name,
            &ApiResource::erase::<ManifestWork>(&()),
        )
    }

    /// AppliedManifestWorks as raw JSON, for reads that decode each object on its own.
    pub(super) fn raw_applied_works(&self) -> Api<RawObject> {
        Api::all_with(
            self.spoke.clone(),
            &ApiResource::erase::<AppliedManifestWork>(&()),
        )
    }
}
