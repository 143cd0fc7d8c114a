//! Owner references between applied resources and their AppliedManifestWork, and the delete
//! options that decide whether a resource is owned at all.
//!
//! An applied resource owned by the work carries an owner reference to the work's
//! AppliedManifestWork, so deleting that record garbage-collects it. A resource the work must
//! leave behind on deletion (delete option `Orphan`, or `SelectivelyOrphan` with a matching
//! rule) gets a **removal marker** instead: the same reference with `-` appended to its uid,
//! which tells [`merge_owner_refs`] to strip the reference if present.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ocm_api::work::v1::{DeleteOption, PropagationPolicy};

/// The `apiVersion` of AppliedManifestWork owner references.
pub const APPLIED_MANIFEST_WORK_API_VERSION: &str = "work.open-cluster-management.io/v1";
/// The `kind` of AppliedManifestWork owner references.
pub const APPLIED_MANIFEST_WORK_KIND: &str = "AppliedManifestWork";

/// The owner reference to the AppliedManifestWork `name` with `uid` (no `controller`, no
/// `blockOwnerDeletion`, as upstream).
pub fn applied_manifest_work_ref(name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: APPLIED_MANIFEST_WORK_API_VERSION.to_string(),
        kind: APPLIED_MANIFEST_WORK_KIND.to_string(),
        name: name.to_string(),
        uid: uid.to_string(),
        block_owner_deletion: None,
        controller: None,
    }
}

/// The removal marker for `owner`: the same reference with `-` appended to the uid.
pub fn removal_marker(owner: &OwnerReference) -> OwnerReference {
    OwnerReference {
        uid: format!("{}-", owner.uid),
        ..owner.clone()
    }
}

/// Whether `reference` is a removal marker.
pub fn is_removal_marker(reference: &OwnerReference) -> bool {
    reference.uid.ends_with('-')
}

/// Whether the work owns the resource (group, resource, namespace, name) under its delete
/// option, i.e. whether deleting the work deletes the resource.
pub fn owned_by_the_work(
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    delete_option: Option<&DeleteOption>,
) -> bool {
    let Some(option) = delete_option else {
        return true;
    };
    match option.propagation_policy.as_ref() {
        None | Some(PropagationPolicy::Foreground) => true,
        Some(PropagationPolicy::Orphan) => false,
        // `SelectivelyOrphan`, and, as upstream, a policy this agent does not know: only the
        // resources the orphaning rules name are left.
        Some(_) => {
            let Some(selective) = &option.selectively_orphan else {
                return true;
            };
            !selective.orphaning_rules.iter().flatten().any(|rule| {
                rule.group.as_deref().unwrap_or("") == group
                    && rule.resource == resource
                    && rule.name == name
                    && rule.namespace.as_deref().unwrap_or("") == namespace
            })
        }
    }
}

fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Whether two owner references point at the same owner: equal name, kind and API group (uid
/// and version are not compared).
pub fn same_owner(a: &OwnerReference, b: &OwnerReference) -> bool {
    a.name == b.name && a.kind == b.kind && api_group(&a.api_version) == api_group(&b.api_version)
}

/// Merges `required` into `existing`: removal markers remove the matching reference, other
/// references are appended when missing and replaced when different. Returns the merged list
/// and whether it differs from `existing`.
pub fn merge_owner_refs(
    existing: &[OwnerReference],
    required: &[OwnerReference],
) -> (Vec<OwnerReference>, bool) {
    let mut merged = existing.to_vec();
    let mut changed = false;
    for want in required {
        let position = merged.iter().position(|have| same_owner(have, want));
        if is_removal_marker(want) {
            if let Some(i) = position {
                merged.remove(i);
                changed = true;
            }
            continue;
        }
        match position {
            None => {
                merged.push(want.clone());
                changed = true;
            }
            Some(i) if merged[i] != *want => {
                merged[i] = want.clone();
                changed = true;
            }
            Some(_) => {}
        }
    }
    (merged, changed)
}

/// The owner references to write when creating an object: removal markers are dropped.
pub fn for_create(required: &[OwnerReference]) -> Vec<OwnerReference> {
    required
        .iter()
        .filter(|r| !is_removal_marker(r))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{ResourceIdentifier, SelectivelyOrphan};

    fn option(policy: PropagationPolicy, rules: Option<Vec<ResourceIdentifier>>) -> DeleteOption {
        DeleteOption {
            propagation_policy: Some(policy),
            selectively_orphan: rules.map(|r| SelectivelyOrphan {
                orphaning_rules: Some(r),
            }),
            ttl_seconds_after_finished: None,
        }
    }

    #[test]
    fn delete_options_decide_ownership() {
        let owned =
            |o: Option<&DeleteOption>| owned_by_the_work("apps", "deployments", "ns", "web", o);
        assert!(owned(None));
        assert!(owned(Some(&option(PropagationPolicy::Foreground, None))));
        assert!(!owned(Some(&option(PropagationPolicy::Orphan, None))));
        assert!(owned(Some(&option(
            PropagationPolicy::SelectivelyOrphan,
            None
        ))));
        let rule = |name: &str| ResourceIdentifier {
            group: Some("apps".into()),
            resource: "deployments".into(),
            name: name.into(),
            namespace: Some("ns".into()),
        };
        assert!(!owned(Some(&option(
            PropagationPolicy::SelectivelyOrphan,
            Some(vec![rule("web")])
        ))));
        // Orphaning rules match exactly: no wildcards.
        assert!(owned(Some(&option(
            PropagationPolicy::SelectivelyOrphan,
            Some(vec![rule("*")])
        ))));
        assert!(owned(Some(&option(
            PropagationPolicy::SelectivelyOrphan,
            Some(vec![rule("other")])
        ))));
        // An unset policy means Foreground.
        let unset = DeleteOption {
            propagation_policy: None,
            selectively_orphan: None,
            ttl_seconds_after_finished: None,
        };
        assert!(owned(Some(&unset)));
    }

    #[test]
    fn an_unknown_policy_orphans_only_what_the_rules_name_as_upstream_does() {
        let owned =
            |o: Option<&DeleteOption>| owned_by_the_work("apps", "deployments", "ns", "web", o);
        let rule = |name: &str| ResourceIdentifier {
            group: Some("apps".into()),
            resource: "deployments".into(),
            name: name.into(),
            namespace: Some("ns".into()),
        };
        let unknown = || PropagationPolicy::from("OrphanOnFridays");
        assert!(owned(Some(&option(unknown(), None))));
        assert!(owned(Some(&option(unknown(), Some(vec![rule("other")])))));
        assert!(!owned(Some(&option(unknown(), Some(vec![rule("web")])))));
    }

    #[test]
    fn merge_adds_replaces_and_removes() {
        let amw = applied_manifest_work_ref("h-work", "uid-1");
        let other = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: "uid-rs".into(),
            ..Default::default()
        };
        let (merged, changed) =
            merge_owner_refs(std::slice::from_ref(&other), std::slice::from_ref(&amw));
        assert!(changed);
        assert_eq!(merged, vec![other.clone(), amw.clone()]);

        let (same, changed) = merge_owner_refs(&merged, std::slice::from_ref(&amw));
        assert!(!changed);
        assert_eq!(same, merged);

        // Same owner by name/kind/group (version differs) with another uid: replaced.
        let newer = OwnerReference {
            api_version: "work.open-cluster-management.io/v2".into(),
            uid: "uid-2".into(),
            ..amw.clone()
        };
        let (replaced, changed) = merge_owner_refs(&merged, std::slice::from_ref(&newer));
        assert!(changed);
        assert_eq!(replaced, vec![other.clone(), newer]);

        let (removed, changed) = merge_owner_refs(&merged, &[removal_marker(&amw)]);
        assert!(changed);
        assert_eq!(removed, vec![other.clone()]);
        let (_, changed) = merge_owner_refs(&removed, &[removal_marker(&amw)]);
        assert!(!changed);

        assert!(for_create(&[removal_marker(&amw), other.clone()]) == vec![other]);
    }
}
