//! Splitting a manifest set across several ManifestWorks (sdk-go's `WorkBuilder`).
//!
//! The hub refuses a ManifestWork whose manifests exceed its size limit (500 KiB by default).
//! [`WorkSplitter`] fills works up to 80 % of the limit, as sdk-go does, so that a later update
//! of a manifest still fits:
//!
//! 1. each existing work keeps the manifests it already holds that are still wanted (by
//!    apiVersion group, version, kind, namespace and name), with their new content;
//! 2. the new manifests, largest first, go into the existing work with the most room left,
//!    while they fit;
//! 3. what is left goes into new works, filled in order;
//! 4. existing works left empty are returned for deletion.
//!
//! Sizes are the protobuf sizes the hub measures ([`manifests_size`]).
//!
//! Our changes to sdk-go's algorithm, each avoiding a broken result: new manifests are ordered
//! by size and then by their position in the input (Go iterates a map, so its order is
//! random); a new work never takes the name of an existing one (sdk-go numbers new works from
//! the count of existing works, so after a deletion it could reuse a live name and overwrite
//! that work); a manifest larger than 80 % of the limit starts a work of its own instead of
//! leaving an empty work behind; and a manifest larger than the whole limit is an error
//! rather than a work the hub would refuse.
//!
//! ```
//! use ocm_api::work::split::{WorkSplitter, WorkTemplate};
//! use ocm_api::work::v1::Manifest;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let cm = |name: &str, bytes: usize| Manifest::new(serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"namespace": "default", "name": name},
//!     "data": {"blob": "x".repeat(bytes)}
//! }));
//! let manifests = vec![cm("a", 250), cm("b", 250), cm("c", 250)];
//! let meta = |i: usize| ObjectMeta {
//!     name: Some(format!("app-{i}")), namespace: Some("cluster1".into()), ..Default::default()
//! };
//! // A limit of 1000 bytes: 800 bytes per work, two manifests each.
//! let split = WorkSplitter::with_manifests_limit(1000)
//!     .split(&manifests, &meta, &WorkTemplate::default(), &[])?;
//! assert_eq!(split.apply.len(), 2);
//! assert_eq!(split.apply[0].spec.manifests().len(), 2);
//! assert!(split.delete.is_empty());
//! # Ok::<(), ocm_api::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::manifests_size;
use super::v1::{
    DeleteOption, Manifest, ManifestConfigOption, ManifestWork, ManifestWorkExecutor,
    ManifestWorkSpec, ManifestsTemplate,
};
use crate::constants::limits::MANIFEST_SIZE_LIMIT;
use crate::{Error, Result};

/// The share of the limit sdk-go fills a work up to.
pub const FILL_THRESHOLD: f64 = 0.8;

/// What every generated work carries besides its manifests and metadata.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct WorkTemplate {
    /// `spec.deleteOption` of every work.
    pub delete_option: Option<DeleteOption>,
    /// `spec.manifestConfigs` of every work.
    pub manifest_configs: Vec<ManifestConfigOption>,
    /// `spec.executor` of every work.
    pub executor: Option<ManifestWorkExecutor>,
    /// Annotations of every work (they replace those the metadata function gives).
    pub annotations: BTreeMap<String, String>,
}

/// The works to apply and those to delete.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SplitWorks {
    /// Works to create or update, new ones first.
    pub apply: Vec<ManifestWork>,
    /// Existing works that hold no wanted manifest any more.
    pub delete: Vec<ManifestWork>,
}

/// Splits manifests across works of bounded size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkSplitter {
    limit: usize,
    fill: usize,
}

impl Default for WorkSplitter {
    fn default() -> Self {
        Self::with_manifests_limit(MANIFEST_SIZE_LIMIT)
    }
}

/// The identity of a manifest across works: group/version, kind, namespace, name.
type ManifestKey = (String, String, String, String);

impl WorkSplitter {
    /// A splitter for the hub's default limit (500 KiB), filling works to 80 % of it.
    pub fn new() -> Self {
        Self::default()
    }

    /// A splitter for a hub whose limit is `bytes`; works are filled to 80 % of it.
    pub fn with_manifests_limit(bytes: usize) -> Self {
        Self {
            limit: bytes,
            fill: (bytes as f64 * FILL_THRESHOLD) as usize,
        }
    }

    /// The size a work is filled up to.
    pub fn fill_limit(&self) -> usize {
        self.fill
    }

    /// Splits `manifests` into works. `meta(i)` gives the metadata of the `i`-th work (its
    /// name must be unique per `i`); `existing` are the works built last time, whose names and
    /// manifest assignment are kept where possible.
    pub fn split(
        &self,
        manifests: &[Manifest],
        meta: &dyn Fn(usize) -> ObjectMeta,
        template: &WorkTemplate,
        existing: &[ManifestWork],
    ) -> Result<SplitWorks> {
        let (order, mut required) = self.required(manifests)?;

        let mut updated: Vec<(ManifestWork, usize)> = Vec::new();
        let mut used_names: BTreeSet<String> = BTreeSet::new();
        for work in existing {
            let name = work.metadata.name.clone().unwrap_or_default();
            used_names.insert(name.clone());
            let mut kept = Vec::new();
            for m in work.spec.manifests() {
                let Some(key) = manifest_key(m) else { continue };
                if let Some(new) = required.remove(&key) {
                    kept.push(new);
                }
            }
            let mut w = self.init_work(meta(0), template);
            w.metadata.name = Some(name);
            let size = manifests_size(&kept);
            set_manifests(&mut w, kept);
            updated.push((w, self.fill.saturating_sub(size)));
        }

        // New manifests, largest first (then in input order).
        let mut fresh: Vec<(usize, Manifest)> = order
            .iter()
            .filter_map(|k| required.remove(k))
            .map(|m| (manifests_size(std::slice::from_ref(&m)), m))
            .collect();
        fresh.sort_by_key(|(size, _)| std::cmp::Reverse(*size));
        let mut leftover = Vec::new();
        for (size, m) in fresh {
            let best = updated.iter_mut().filter(|(_, room)| *room > 0).fold(
                None::<&mut (ManifestWork, usize)>,
                |best, cand| match best {
                    Some(b) if b.1 >= cand.1 => Some(b),
                    _ => Some(cand),
                },
            );
            match best {
                Some((work, room)) if size < *room => {
                    push_manifest(work, m);
                    *room -= size;
                }
                _ => leftover.push((size, m)),
            }
        }

        let mut out = SplitWorks::default();
        let mut index = updated.len();
        let mut next_meta = |used: &mut BTreeSet<String>| loop {
            let m = meta(index);
            index += 1;
            let name = m.name.clone().unwrap_or_default();
            if used.insert(name) {
                return m;
            }
        };
        let mut current: Option<(ManifestWork, usize)> = None;
        for (size, m) in leftover {
            match current.as_mut() {
                Some((work, total)) if *total + size < self.fill => {
                    push_manifest(work, m);
                    *total += size;
                }
                _ => {
                    if let Some((done, _)) = current.take() {
                        out.apply.push(done);
                    }
                    let mut work = self.init_work(next_meta(&mut used_names), template);
                    push_manifest(&mut work, m);
                    current = Some((work, size));
                }
            }
        }
        if let Some((done, _)) = current {
            out.apply.push(done);
        }
        for (work, _) in updated {
            if work.spec.manifests().is_empty() {
                out.delete.push(work);
            } else {
                out.apply.push(work);
            }
        }
        Ok(out)
    }

    /// The wanted manifests by key, and the keys in input order; a later duplicate replaces
    /// an earlier one, in place. A manifest without a kind or version, or larger than the
    /// limit, is an error.
    fn required(
        &self,
        manifests: &[Manifest],
    ) -> Result<(Vec<ManifestKey>, BTreeMap<ManifestKey, Manifest>)> {
        let mut order: Vec<ManifestKey> = Vec::new();
        let mut required: BTreeMap<ManifestKey, Manifest> = BTreeMap::new();
        for (i, m) in manifests.iter().enumerate() {
            let key = manifest_key(m).ok_or_else(|| Error::ManifestKey {
                index: i,
                message: "got empty kind/version from object".into(),
            })?;
            let size = manifests_size(std::slice::from_ref(m));
            if size > self.limit {
                return Err(Error::ManifestTooLarge {
                    manifest: describe(&key),
                    size,
                    limit: self.limit,
                });
            }
            if required.insert(key.clone(), m.clone()).is_none() {
                order.push(key);
            }
        }
        Ok((order, required))
    }

    fn init_work(&self, mut meta: ObjectMeta, template: &WorkTemplate) -> ManifestWork {
        meta.annotations = (!template.annotations.is_empty()).then(|| template.annotations.clone());
        ManifestWork {
            metadata: meta,
            spec: ManifestWorkSpec {
                workload: Some(ManifestsTemplate {
                    manifests: Some(Vec::new()),
                }),
                delete_option: template.delete_option.clone(),
                manifest_configs: (!template.manifest_configs.is_empty())
                    .then(|| template.manifest_configs.clone()),
                executor: template.executor.clone(),
            },
            status: None,
        }
    }
}

fn set_manifests(work: &mut ManifestWork, manifests: Vec<Manifest>) {
    work.spec.workload = Some(ManifestsTemplate {
        manifests: Some(manifests),
    });
}

fn push_manifest(work: &mut ManifestWork, manifest: Manifest) {
    work.spec
        .workload
        .get_or_insert_with(ManifestsTemplate::default)
        .manifests
        .get_or_insert_with(Vec::new)
        .push(manifest);
}

fn manifest_key(m: &Manifest) -> Option<ManifestKey> {
    let api_version = m.api_version().unwrap_or("");
    let kind = m.kind().unwrap_or("");
    let (group, version) = match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    if kind.is_empty() || version.is_empty() {
        return None;
    }
    Some((
        format!("{group}/{version}"),
        kind.to_string(),
        m.namespace().unwrap_or("").to_string(),
        m.name().unwrap_or("").to_string(),
    ))
}

fn describe(key: &ManifestKey) -> String {
    let (gv, kind, ns, name) = key;
    let gv = gv.trim_start_matches('/');
    if ns.is_empty() {
        format!("{gv} {kind} {name}")
    } else {
        format!("{gv} {kind} {ns}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, bytes: usize) -> Manifest {
        Manifest::new(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": "ns", "name": name},
            "data": {"blob": "x".repeat(bytes)}
        }))
    }

    fn meta(i: usize) -> ObjectMeta {
        ObjectMeta {
            name: Some(format!("w-{i}")),
            namespace: Some("c".into()),
            ..ObjectMeta::default()
        }
    }

    fn names(works: &[ManifestWork]) -> Vec<Vec<String>> {
        works
            .iter()
            .map(|w| {
                std::iter::once(w.metadata.name.clone().unwrap())
                    .chain(
                        w.spec
                            .manifests()
                            .iter()
                            .map(|m| m.name().unwrap().to_string()),
                    )
                    .collect()
            })
            .collect()
    }

    #[test]
    fn everything_fits_in_one_work() {
        let s = WorkSplitter::new()
            .split(
                &[cm("a", 10), cm("b", 10)],
                &meta,
                &WorkTemplate::default(),
                &[],
            )
            .unwrap();
        assert_eq!(names(&s.apply), [["w-0", "a", "b"]]);
    }

    #[test]
    fn splits_largest_first_and_reuses_existing_works() {
        let splitter = WorkSplitter::with_manifests_limit(1000);
        let input = [cm("a", 200), cm("b", 400), cm("c", 300), cm("d", 100)];
        let first = splitter
            .split(&input, &meta, &WorkTemplate::default(), &[])
            .unwrap();
        // b (≈470) + c (≈370) > 800: c starts a new work; d fits after c.
        assert_eq!(
            names(&first.apply),
            [vec!["w-0", "b"], vec!["w-1", "c", "a"], vec!["w-2", "d"]]
        );
        for w in &first.apply {
            assert!(manifests_size(w.spec.manifests()) < splitter.fill_limit());
        }
        // Drop b: w-0 is deleted, the others keep their names and manifests.
        let second = splitter
            .split(
                &[cm("a", 200), cm("c", 300), cm("d", 100)],
                &meta,
                &WorkTemplate::default(),
                &first.apply,
            )
            .unwrap();
        assert_eq!(
            names(&second.apply),
            [vec!["w-1", "c", "a"], vec!["w-2", "d"]]
        );
        assert_eq!(names(&second.delete), [vec!["w-0"]]);
        // A new manifest goes into the existing work with the most room.
        let third = splitter
            .split(
                &[cm("a", 200), cm("c", 300), cm("d", 100), cm("e", 50)],
                &meta,
                &WorkTemplate::default(),
                &second.apply,
            )
            .unwrap();
        assert_eq!(
            names(&third.apply),
            [vec!["w-1", "c", "a"], vec!["w-2", "d", "e"]]
        );
    }

    #[test]
    fn new_works_never_take_an_existing_name() {
        let splitter = WorkSplitter::with_manifests_limit(1000);
        let existing = splitter
            .split(
                &[cm("a", 600)],
                &|i| meta(i + 1),
                &WorkTemplate::default(),
                &[],
            )
            .unwrap()
            .apply;
        assert_eq!(names(&existing), [["w-1", "a"]]);
        let s = splitter
            .split(
                &[cm("a", 600), cm("b", 600)],
                &meta,
                &WorkTemplate::default(),
                &existing,
            )
            .unwrap();
        assert_eq!(names(&s.apply), [vec!["w-2", "b"], vec!["w-1", "a"]]);
    }

    #[test]
    fn template_goes_on_every_work() {
        let template = WorkTemplate {
            annotations: BTreeMap::from([("k".to_string(), "v".to_string())]),
            delete_option: Some(DeleteOption {
                propagation_policy: Some(super::super::v1::PropagationPolicy::Orphan),
                selectively_orphan: None,
                ttl_seconds_after_finished: None,
            }),
            ..WorkTemplate::default()
        };
        let s = WorkSplitter::with_manifests_limit(1000)
            .split(&[cm("a", 600), cm("b", 600)], &meta, &template, &[])
            .unwrap();
        assert_eq!(s.apply.len(), 2);
        for w in &s.apply {
            assert_eq!(w.metadata.annotations.as_ref().unwrap()["k"], "v");
            assert!(w.spec.delete_option.is_some());
        }
    }

    #[test]
    fn bad_manifests_are_errors() {
        let err = WorkSplitter::with_manifests_limit(1000)
            .split(&[cm("big", 2000)], &meta, &WorkTemplate::default(), &[])
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("manifest v1 ConfigMap ns/big is "),
            "{err}"
        );
        let err = WorkSplitter::new()
            .split(
                &[Manifest::new(json!({"metadata": {"name": "x"}}))],
                &meta,
                &WorkTemplate::default(),
                &[],
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "manifest 0: got empty kind/version from object"
        );
    }
}
