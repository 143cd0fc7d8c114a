//! Applying ManifestWorks from a hub controller, skipping writes that would change nothing
//! (sdk-go's `WorkApplier`).
//!
//! [`WorkApplier::apply`] creates a work that does not exist and otherwise brings the live work
//! in line with the required one. Like sdk-go it writes nothing when the live work already
//! equals the required one ([`manifest_work_equal`]: spec, labels, annotations and owner
//! references) or when the same required work was applied before and the live work's
//! generation has not moved since (a cache keyed by namespace and name, holding a hash of the
//! required work and the generation it produced).
//!
//! Writes are server-side apply with a field manager (default [`DEFAULT_FIELD_MANAGER`]) and
//! `force`, where sdk-go sends a JSON merge patch computed from the live object: the fields
//! written are the same (labels, annotations, owner references and spec), and server-side
//! apply also removes labels and annotations an earlier apply of the same manager set and this
//! one drops, while keeping those other writers set. This difference is ours.
//!
//! The live work and the answer of the write are read as raw JSON and decoded on their own
//! (see `crate::read`), so a work whose manifests nest deeper than `serde_json`'s 128 levels
//! is applied like any other. A live work that does not decode is applied over (server-side
//! apply needs no copy of it); the answer is then an [`Error::Undecodable`] when the work as
//! written still does not decode (a status field, say).
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

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::work::v1::ManifestWork;
use serde_json::{Value, json};

use crate::api_errors::is_not_found;
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
        let raw = self.decoder.get_raw(&api, KIND, &name).await?;
        let exists = raw.is_some();
        // A live work that does not decode is applied over.
        let live = raw.and_then(|raw| self.decoder.decode::<ManifestWork>(KIND, &raw).ok());
        let hash = required_hash(required);
        if let Some(live) = &live {
            let key = (namespace.clone(), name.clone());
            let cached = self.cache_get(&key);
            if cached.is_some_and(|c| c.hash == hash && c.generation == live.metadata.generation) {
                return Ok(live.clone());
            }
            if manifest_work_equal(required, live) {
                self.cache_put(key, hash, live.metadata.generation);
                return Ok(live.clone());
            }
        }
        let body = apply_body(required);
        let params = PatchParams::apply(&self.field_manager).force();
        let written = api
            .patch(&name, &params, &Patch::Apply(&body))
            .await
            .map_err(|e| Error::kube(format!("apply ManifestWork {namespace}/{name}"), e))?;
        ocm_api::k8s::json::drop_value(body);
        let written: ManifestWork = self.decoder.answer(KIND, written).await?;
        tracing::debug!(%namespace, %name, created = !exists, "applied ManifestWork");
        self.cache_put((namespace, name), hash, written.metadata.generation);
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

/// The fields the applier owns.
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
