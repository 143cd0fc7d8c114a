//! Deleting applied resources on behalf of an AppliedManifestWork (upstream's
//! `DeleteAppliedResources`).

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use kube::core::ApiResource;
use ocm_api::work::v1::AppliedManifestResourceMeta;
use serde_json::json;

use crate::apply::reader::ObjectReader;
use crate::owner::{APPLIED_MANIFEST_WORK_API_VERSION, APPLIED_MANIFEST_WORK_KIND};
use crate::{Error, Result};

fn api_for(client: &Client, r: &AppliedManifestResourceMeta) -> Api<DynamicObject> {
    let group = r.group.clone().unwrap_or_default();
    let api_version = if group.is_empty() {
        r.version.clone()
    } else {
        format!("{group}/{}", r.version)
    };
    let ar = ApiResource {
        group,
        version: r.version.clone(),
        api_version,
        kind: String::new(),
        plural: r.resource.clone(),
    };
    match r.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Api::namespaced_with(client.clone(), ns, &ar),
        _ => Api::all_with(client.clone(), &ar),
    }
}

/// Deletes `resources` owned by the AppliedManifestWork with uid `owner_uid` and returns those
/// still pending (deleting but not gone yet, or not deletable right now), as upstream's
/// `DeleteAppliedResources` does:
///
/// * a resource that is gone, not owned by this AppliedManifestWork, or whose live uid is not
///   the recorded one (recreated by someone else, or no uid was recorded) is forgotten and
///   left alone;
/// * when another AppliedManifestWork also owns it, only this owner reference is removed;
/// * a resource already being deleted (finalizers, foreground deletion, a terminating
///   namespace) stays pending;
/// * otherwise it is deleted (`Background`, with the recorded uid as precondition) and stays
///   pending even when the server answered that it is gone: a later pass sees it gone (a GET
///   answering 404) and only then drops it. The caller keeps pending resources in
///   `appliedResources` and looks again later.
///
/// A resource that could not be read, released or deleted stays pending, with its error
/// returned.
pub async fn delete_applied_resources(
    client: &Client,
    resources: &[AppliedManifestResourceMeta],
    owner_uid: &str,
) -> (Vec<AppliedManifestResourceMeta>, Vec<Error>) {
    delete_applied_resources_with(client, resources, owner_uid, &|_| {}).await
}

/// [`delete_applied_resources`], telling `on_request` the verb of every request it sends
/// (`get`, `patch`, `delete`), for metrics.
pub async fn delete_applied_resources_with(
    client: &Client,
    resources: &[AppliedManifestResourceMeta],
    owner_uid: &str,
    on_request: &(dyn Fn(&'static str) + Send + Sync),
) -> (Vec<AppliedManifestResourceMeta>, Vec<Error>) {
    delete_through(
        &ObjectReader::new(client.clone()),
        resources,
        owner_uid,
        on_request,
    )
    .await
}

/// [`delete_applied_resources_with`] reading through `reader` (garbage collection always reads
/// fresh, never from an informer).
pub(crate) async fn delete_through(
    reader: &ObjectReader,
    resources: &[AppliedManifestResourceMeta],
    owner_uid: &str,
    on_request: &(dyn Fn(&'static str) + Send + Sync),
) -> (Vec<AppliedManifestResourceMeta>, Vec<Error>) {
    let mut pending = Vec::new();
    let mut errors = Vec::new();
    for resource in resources {
        let api = api_for(reader.client(), resource);
        let what = format!(
            "{}/{} {}",
            resource.resource,
            resource.namespace.as_deref().unwrap_or_default(),
            resource.name
        );
        on_request("get");
        let live = match reader.get_fresh(&api, &resource.name).await {
            Ok(Some(live)) => live,
            Ok(None) => continue,
            Err(e) => {
                errors.push(Error::kube(format!("get {what}"), e));
                pending.push(resource.clone());
                continue;
            }
        };
        let refs = live.metadata.owner_references.clone().unwrap_or_default();
        if !refs.iter().any(|r| r.uid == owner_uid) {
            continue;
        }
        let other_work_owner = refs.iter().any(|r| {
            r.uid != owner_uid
                && r.kind == APPLIED_MANIFEST_WORK_KIND
                && r.api_version == APPLIED_MANIFEST_WORK_API_VERSION
        });
        if other_work_owner {
            let kept: Vec<_> = refs.into_iter().filter(|r| r.uid != owner_uid).collect();
            let patch = json!({"metadata": {
                "uid": live.metadata.uid,
                "resourceVersion": live.metadata.resource_version,
                "ownerReferences": kept,
            }});
            on_request("patch");
            if let Err(e) = api
                .patch(
                    &resource.name,
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
            {
                errors.push(Error::kube(format!("release {what}"), e));
                pending.push(resource.clone());
            }
            continue;
        }
        // No recorded uid counts as a mismatch: the live object may be someone else's.
        if resource.uid.as_deref().unwrap_or_default()
            != live.metadata.uid.as_deref().unwrap_or_default()
        {
            continue;
        }
        if live.metadata.deletion_timestamp.is_some() {
            pending.push(resource.clone());
            continue;
        }
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            preconditions: resource.uid.as_ref().map(|uid| kube::api::Preconditions {
                uid: Some(uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        on_request("delete");
        match api.delete(&resource.name, &params).await {
            // Accepted: pending until a later pass sees it gone, whether the server still
            // returned the object (finalizers, graceful deletion) or a Status.
            Ok(_) => pending.push(resource.clone()),
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(e) => {
                errors.push(Error::kube(format!("delete {what}"), e));
                pending.push(resource.clone());
            }
        }
    }
    (pending, errors)
}

/// Entries of `previous` whose (group, resource, namespace, name) is not in `current`: the
/// version and uid do not count.
pub fn untracked(
    previous: &[AppliedManifestResourceMeta],
    current: &[AppliedManifestResourceMeta],
) -> Vec<AppliedManifestResourceMeta> {
    let key = |r: &AppliedManifestResourceMeta| {
        (
            r.group.clone().unwrap_or_default(),
            r.resource.clone(),
            r.namespace.clone().unwrap_or_default(),
            r.name.clone(),
        )
    };
    previous
        .iter()
        .filter(|p| !current.iter().any(|c| key(c) == key(p)))
        .cloned()
        .collect()
}

/// Sorts applied resources as upstream stores them: by group, version, resource, namespace,
/// name.
pub fn sort_applied(resources: &mut [AppliedManifestResourceMeta]) {
    resources.sort_by(|a, b| {
        let k = |r: &AppliedManifestResourceMeta| {
            (
                r.group.clone().unwrap_or_default(),
                r.version.clone(),
                r.resource.clone(),
                r.namespace.clone().unwrap_or_default(),
                r.name.clone(),
            )
        };
        k(a).cmp(&k(b))
    });
}

/// `Ok` when `errors` is empty.
pub(crate) fn into_result(errors: Vec<Error>) -> Result<()> {
    Error::aggregate(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(
        group: &str,
        version: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> AppliedManifestResourceMeta {
        AppliedManifestResourceMeta {
            group: (!group.is_empty()).then(|| group.into()),
            version: version.into(),
            resource: resource.into(),
            namespace: (!ns.is_empty()).then(|| ns.into()),
            name: name.into(),
            uid: Some(format!("uid-{name}")),
        }
    }

    #[test]
    fn untracked_ignores_version_and_uid() {
        let prev = vec![
            r("apps", "v1", "deployments", "d", "a"),
            r("", "v1", "configmaps", "d", "b"),
        ];
        let mut cur = vec![r("apps", "v1beta1", "deployments", "d", "a")];
        cur[0].uid = Some("other".into());
        assert_eq!(untracked(&prev, &cur), vec![prev[1].clone()]);
        assert!(untracked(&prev, &prev).is_empty());
    }

    #[test]
    fn sorting_is_by_group_version_resource_namespace_name() {
        let mut list = vec![
            r("apps", "v1", "deployments", "d", "a"),
            r("", "v1", "configmaps", "d", "b"),
            r("", "v1", "configmaps", "a", "z"),
        ];
        sort_applied(&mut list);
        let names: Vec<_> = list.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["z", "b", "a"]);
    }
}
