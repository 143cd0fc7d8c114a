//! Writing ManifestWorks from the hub: the one way every hub-side writer of this crate (the
//! [`WorkApplier`] the fan-out and the addon manager use, and the ManifestWorkReplicaSet
//! controller) creates and updates a work, as sdk-go's `WorkApplier` does.
//!
//! [`WorkApplier::apply`] creates a work that does not exist and otherwise brings the live work
//! in line with the required one. Like sdk-go it writes nothing when the live work already
//! equals the required one ([`manifest_work_equal`]: spec, labels, annotations and owner
//! references) or when the same required work was applied before and the live work's
//! generation has not moved since (a cache keyed by namespace and name, holding a hash of the
//! required work and the generation it produced).
//!
//! An update is sdk-go's: a JSON merge patch from the live work's view (labels, annotations,
//! owner references and spec) to the required one's, guarded by the live work's uid and
//! resourceVersion, so it never writes over a change it has not seen (the server answers 409
//! and the next reconcile applies again) and never lands on a work recreated meanwhile. Labels
//! and annotations the required work leaves out are removed, whoever set them, as upstream's
//! patch removes them.
//!
//! The live work and the answer of the write are read as raw JSON and decoded on their own
//! (see `crate::read`), so a work whose manifests nest deeper than `serde_json`'s 128 levels
//! is applied like any other. A live work that does not decode is patched from its stored
//! JSON; the answer is then an [`Error::Undecodable`] when the work as written still does not
//! decode (a status field, say).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ocm_api::builder::ManifestWorkBuilder;
//! use ocm_work::applier::WorkApplier;
//!
//! let hub = ocm_testkit::FakeHub::new(1)?;
//! let applier = WorkApplier::new(hub.hub().client());
//! let work = ManifestWorkBuilder::new("hello", "cluster1")
//!     .yaml("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\n")?
//!     .build()?;
//! applier.apply(&work).await?;
//! let writes = hub.hub().journal().writes();
//! applier.apply(&work).await?; // unchanged: no write
//! assert_eq!(hub.hub().journal().writes(), writes);
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use ocm_api::k8s::object::RawObject;
use ocm_api::work::v1::ManifestWork;
use serde_json::{Value, json};

use crate::api_errors::is_not_found;
use crate::patch::merge_diff;
use crate::read::{self, Decoder};
use crate::replicaset::manifest_work_equal;
use crate::{Error, Result};

const KIND: &str = "ManifestWork";

/// The field manager [`WorkApplier`] writes with unless told otherwise (our name; sdk-go's
/// merge patches carry no field manager of their own).
pub const DEFAULT_FIELD_MANAGER: &str = "ocm-work-applier";

#[derive(Clone, Debug, PartialEq, Eq)]
struct Applied {
    hash: String,
    generation: Option<i64>,
}

/// Applies ManifestWorks on the hub, skipping no-op updates.
#[derive(Clone)]
pub struct WorkApplier {
    client: Client,
    field_manager: String,
    cache: Arc<Mutex<HashMap<(String, String), Applied>>>,
    decoder: Decoder,
}

impl std::fmt::Debug for WorkApplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkApplier")
            .field("field_manager", &self.field_manager)
            .finish_non_exhaustive()
    }
}

impl WorkApplier {
    /// An applier writing through `client` as [`DEFAULT_FIELD_MANAGER`].
    pub fn new(client: Client) -> Self {
        Self {
            client,
            field_manager: DEFAULT_FIELD_MANAGER.to_string(),
            cache: Arc::default(),
            decoder: Decoder::default(),
        }
    }

    /// Decodes with `decoder` (the caller's: it learns how deep the works are).
    #[must_use]
    pub(crate) fn with_decoder(mut self, decoder: Decoder) -> Self {
        self.decoder = decoder;
        self
    }

    /// Writes as `field_manager` instead.
    #[must_use]
    pub fn with_field_manager(mut self, field_manager: impl Into<String>) -> Self {
        self.field_manager = field_manager.into();
        self
    }

    /// Creates `required` or brings the live work in line with it; returns the work as the
    /// hub holds it afterwards. `required` must have a name and a namespace.
    pub async fn apply(&self, required: &ManifestWork) -> Result<ManifestWork> {
        self.decoder.stacked(self.apply_work(required)).await
    }

    async fn apply_work(&self, required: &ManifestWork) -> Result<ManifestWork> {
        let (namespace, name) = identity(required)?;
        let api = read::api::<ManifestWork>(&self.client, Some(&namespace));
        let manager = Some(self.field_manager.as_str());
        let mut created_meanwhile = false;
        let raw = loop {
            match self.decoder.get_raw(&api, KIND, &name).await? {
                Some(raw) => break raw,
                None if !created_meanwhile => match create(&api, required, manager).await? {
                    Some(written) => {
                        let written: ManifestWork = self.decoder.answer(KIND, written).await?;
                        tracing::debug!(%namespace, %name, "created ManifestWork");
                        self.cache_put(
                            (namespace, name),
                            required_hash(required),
                            written.metadata.generation,
                        );
                        return Ok(written);
                    }
                    // Created by someone else since the read: patch that one.
                    None => created_meanwhile = true,
                },
                None => {
                    return Err(Error::InvalidObject {
                        object: format!("ManifestWork {namespace}/{name}"),
                        message: "it was created and deleted again while being applied".into(),
                    });
                }
            }
        };
        let hash = required_hash(required);
        let key = (namespace.clone(), name.clone());
        let (live_meta, live_view, live) = match self.decoder.decode::<ManifestWork>(KIND, &raw) {
            Ok(live) => {
                let cached = self.cache_get(&key);
                if cached
                    .is_some_and(|c| c.hash == hash && c.generation == live.metadata.generation)
                    || manifest_work_equal(required, &live)
                {
                    self.cache_put(key, hash, live.metadata.generation);
                    return Ok(live);
                }
                (live.metadata.clone(), work_view(&live), Some(live))
            }
            // A live work that does not decode is patched from its stored JSON.
            Err(_) => (
                raw.meta().clone(),
                stored_view(&raw, &namespace, &name)?,
                None,
            ),
        };
        let written = patch_toward(&api, &live_meta, live_view, required, manager).await?;
        let written: ManifestWork = match (written, live) {
            (Some(written), _) => self.decoder.answer(KIND, written).await?,
            // Equal as JSON although not as typed values: nothing to write.
            (None, Some(live)) => live,
            (None, None) => self.decoder.answer(KIND, raw).await?,
        };
        tracing::debug!(%namespace, %name, "updated ManifestWork");
        self.cache_put(key, hash, written.metadata.generation);
        Ok(written)
    }

    /// Deletes a work; a work that is already gone is not an error.
    pub async fn delete(&self, namespace: &str, name: &str) -> Result<()> {
        let api = read::api::<ManifestWork>(&self.client, Some(namespace));
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                return Err(Error::kube(
                    format!("delete ManifestWork {namespace}/{name}"),
                    e,
                ));
            }
        }
        if let Ok(mut cache) = self.cache.lock() {
            cache.remove(&(namespace.to_string(), name.to_string()));
        }
        Ok(())
    }

    fn cache_get(&self, key: &(String, String)) -> Option<Applied> {
        self.cache.lock().ok().and_then(|c| c.get(key).cloned())
    }

    fn cache_put(&self, key: (String, String), hash: String, generation: Option<i64>) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, Applied { hash, generation });
        }
    }
}

fn identity(work: &ManifestWork) -> Result<(String, String)> {
    let name = work.metadata.name.clone().unwrap_or_default();
    let namespace = work.namespace().unwrap_or_default();
    if name.is_empty() || namespace.is_empty() {
        return Err(Error::InvalidObject {
            object: format!("ManifestWork {namespace}/{name}"),
            message: "a work to apply needs a name and a namespace".into(),
        });
    }
    Ok((namespace, name))
}

/// What the hub writers compare and patch of a work (sdk-go's view): its labels, annotations,
/// owner references and spec.
pub(crate) fn work_view(work: &ManifestWork) -> Value {
    json!({
        "metadata": {
            "labels": work.metadata.labels,
            "annotations": work.metadata.annotations,
            "ownerReferences": work.metadata.owner_references,
        },
        "spec": work.spec,
    })
}

/// The [`work_view`] of a stored work that does not decode, read from its JSON.
pub(crate) fn stored_view(raw: &RawObject, namespace: &str, name: &str) -> Result<Value> {
    let value = raw.to_value().map_err(|message| Error::InvalidObject {
        object: format!("ManifestWork {namespace}/{name}"),
        message,
    })?;
    let view = json!({
        "metadata": {
            "labels": value.pointer("/metadata/labels"),
            "annotations": value.pointer("/metadata/annotations"),
            "ownerReferences": value.pointer("/metadata/ownerReferences"),
        },
        "spec": value.get("spec"),
    });
    ocm_api::k8s::json::drop_value(value);
    Ok(view)
}

/// Creates `required`; `None` when a work of its name already exists (409), which the caller
/// patches or leaves to its next reconcile.
pub(crate) async fn create(
    api: &Api<RawObject>,
    required: &ManifestWork,
    field_manager: Option<&str>,
) -> Result<Option<RawObject>> {
    let namespace = required.namespace().unwrap_or_default();
    let body = read::to_raw(required, || format!("ManifestWork in {namespace}"))?;
    let params = PostParams {
        field_manager: field_manager.map(str::to_string),
        ..PostParams::default()
    };
    match api.create(&params, &body).await {
        Ok(written) => Ok(Some(written)),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
        Err(e) => Err(Error::kube(
            format!("create ManifestWork in {namespace}"),
            e,
        )),
    }
}

/// Brings the live work (its metadata and [`work_view`]) in line with `required`, as sdk-go's
/// `WorkApplier` does: the JSON merge patch from the live view to the required one, guarded by
/// the live uid and resourceVersion. `None` when the views are equal (nothing is sent).
pub(crate) async fn patch_toward(
    api: &Api<RawObject>,
    live: &ObjectMeta,
    live_view: Value,
    required: &ManifestWork,
    field_manager: Option<&str>,
) -> Result<Option<RawObject>> {
    let wanted = work_view(required);
    let patch = merge_diff(&live_view, &wanted);
    ocm_api::k8s::json::drop_value(wanted);
    ocm_api::k8s::json::drop_value(live_view);
    let Some(mut patch) = patch else {
        return Ok(None);
    };
    patch["metadata"]["uid"] = json!(live.uid);
    patch["metadata"]["resourceVersion"] = json!(live.resource_version);
    let namespace = live.namespace.clone().unwrap_or_default();
    let name = live.name.clone().unwrap_or_default();
    let params = PatchParams {
        field_manager: field_manager.map(str::to_string),
        ..PatchParams::default()
    };
    let sent = api
        .patch(&name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("update ManifestWork {namespace}/{name}"), e));
    ocm_api::k8s::json::drop_value(patch);
    sent.map(Some)
}

/// What the applier writes, which its cache hashes.
fn apply_body(work: &ManifestWork) -> Value {
    let mut metadata = json!({
        "name": work.metadata.name,
        "namespace": work.metadata.namespace,
    });
    if let Some(l) = &work.metadata.labels {
        metadata["labels"] = json!(l);
    }
    if let Some(a) = &work.metadata.annotations {
        metadata["annotations"] = json!(a);
    }
    if let Some(o) = &work.metadata.owner_references {
        metadata["ownerReferences"] = json!(o);
    }
    json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": metadata,
        "spec": work.spec,
    })
}

/// A hash of what the applier writes (sdk-go hashes the required object the same way, with
/// MD5 over its JSON).
fn required_hash(work: &ManifestWork) -> String {
    let mut text = String::new();
    ocm_api::k8s::gojson::push_value(&mut text, &apply_body(work));
    ocm_api::k8s::digest::md5_hex(text.as_bytes())
}
