//! The `execute-as` check of a work's executor at admission: the SubjectAccessReview the hub's
//! ManifestWork webhook makes for the requesting user, and the same check for a
//! ManifestWorkReplicaSet's template (our addition, on by default).
//!
//! A ManifestWork whose `spec.executor` names a service account makes the work agent apply its
//! manifests as that account. Upstream's hub webhook therefore lets a user create or change
//! such a work only when the user may `execute-as` that account: it asks the hub's authorizer
//! with a SubjectAccessReview (verb `execute-as`, group `work.open-cluster-management.io`,
//! resource `manifestworks`, name `system:serviceaccount:<namespace>:<name>`, in the work's
//! namespace), and refuses with `user <user> cannot manipulate the Manifestwork with executor
//! <namespace>/<name> in namespace <namespace>`.
//!
//! # The ManifestWorkReplicaSet gap (our difference)
//!
//! Upstream checks nothing of the kind for a ManifestWorkReplicaSet: the hub controller, which
//! may create works with any executor, writes the template's executor into every selected
//! cluster, so a user refused the ManifestWork gets the same work through a replica set.
//! [`ReplicaSetAdmission`] closes the gap, on by default: creating a replica set whose
//! template names an executor (or changing it) takes the same `execute-as` permission, asked
//! in the replica set's namespace (the namespace whose ManagedClusterSetBindings decide which
//! clusters it reaches), and is refused with the same message naming the
//! `ManifestWorkReplicaSet`. [`ReplicaSetAdmission::upstream`] turns it off, for upstream's
//! behaviour exactly.
//!
//! The review needs the hub, so this module builds it and reads its answer; the asking is done
//! by an [`AccessReviewer`] the caller provides (a webhook server creates the
//! SubjectAccessReview with its client; the SDK's fake hub answers from its RBAC objects).
//!
//! ```
//! use k8s_openapi::api::authentication::v1::UserInfo;
//! use ocm_api::work::executor::{AccessReviewer, ReplicaSetAdmission};
//! use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
//!
//! /// An authorizer that allows nobody (a webhook would ask the hub).
//! struct Nobody;
//! impl AccessReviewer for Nobody {
//!     async fn allowed(
//!         &self,
//!         _review: k8s_openapi::api::authorization::v1::SubjectAccessReview,
//!     ) -> Result<bool, String> {
//!         Ok(false)
//!     }
//! }
//!
//! let rs: ManifestWorkReplicaSet = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web", "namespace": "apps"},
//!     "spec": {
//!         "placementRefs": [{"name": "all"}],
//!         "manifestWorkTemplate": {
//!             "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
//!                 "metadata": {"name": "web", "namespace": "default"}}]},
//!             "executor": {"subject": {"type": "ServiceAccount",
//!                 "serviceAccount": {"namespace": "kube-system", "name": "privileged"}}},
//!         },
//!     },
//! }))?;
//! let alice = UserInfo { username: Some("alice".into()), ..Default::default() };
//! # futures_lite(async {
//! let refused = rs.admit(None, &alice, &ReplicaSetAdmission::default(), &Nobody).await;
//! assert!(refused.unwrap_err().to_string().contains(
//!     "user alice cannot manipulate the ManifestWorkReplicaSet with executor \
//!      kube-system/privileged in namespace apps"
//! ));
//! // Upstream's behaviour: no executor check.
//! rs.admit(None, &alice, &ReplicaSetAdmission::upstream(), &Nobody).await.unwrap();
//! # });
//! # fn futures_lite(f: impl std::future::Future<Output = ()>) {
//! #     let waker = std::task::Waker::noop();
//! #     let mut cx = std::task::Context::from_waker(&waker);
//! #     let mut f = std::pin::pin!(f);
//! #     assert!(f.as_mut().poll(&mut cx).is_ready());
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::future::Future;

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};

use super::v1::{ExecutorSubjectType, ManifestWork, ManifestWorkExecutor};
use super::v1alpha1::ManifestWorkReplicaSet;
use crate::Result;
use crate::constants::limits::MANIFEST_SIZE_LIMIT;
use crate::validation::FieldErrors;

/// The executor upstream's webhook reviews for a work without one when the hub's
/// `NilExecutorValidating` feature gate is on: the work agent's own service account.
pub const DEFAULT_EXECUTOR: (&str, &str) = ("", "klusterlet-work-sa");

/// The verb of the review.
pub const EXECUTE_AS: &str = "execute-as";

/// One `execute-as` review to make before admitting an object.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutorReview {
    /// The kind as the denial names it (`Manifestwork`, upstream's spelling, or
    /// `ManifestWorkReplicaSet`).
    pub kind: &'static str,
    /// The namespace the permission is asked in (the object's).
    pub namespace: String,
    /// The executor's service account namespace.
    pub service_account_namespace: String,
    /// The executor's service account name.
    pub service_account_name: String,
}

impl ExecutorReview {
    /// The resource name the review asks about:
    /// `system:serviceaccount:<namespace>:<name>`.
    pub fn subject_name(&self) -> String {
        format!(
            "system:serviceaccount:{}:{}",
            self.service_account_namespace, self.service_account_name
        )
    }

    /// The resource the permission is asked for (what an RBAC rule must allow).
    pub fn resource_attributes(&self) -> ResourceAttributes {
        ResourceAttributes {
            group: Some(super::GROUP.to_string()),
            resource: Some("manifestworks".to_string()),
            verb: Some(EXECUTE_AS.to_string()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.subject_name()),
            ..ResourceAttributes::default()
        }
    }

    /// The SubjectAccessReview to create for `user` (the admission request's user, with its
    /// uid, groups and extra), as upstream's webhook makes it.
    pub fn access_review(&self, user: &UserInfo) -> SubjectAccessReview {
        SubjectAccessReview {
            metadata: Default::default(),
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                uid: user.uid.clone(),
                groups: user.groups.clone(),
                extra: user.extra.clone(),
                resource_attributes: Some(self.resource_attributes()),
                ..SubjectAccessReviewSpec::default()
            },
            status: None,
        }
    }

    /// The message of the refusal for the user named `user`.
    pub fn denied_message(&self, user: &str) -> String {
        format!(
            "user {user} cannot manipulate the {} with executor {}/{} in namespace {}",
            self.kind, self.service_account_namespace, self.service_account_name, self.namespace
        )
    }
}

/// Asks the hub's authorizer a SubjectAccessReview: `Ok(status.allowed)`, or why it could not
/// be asked (the refusal then carries that text, as upstream's webhook does).
pub trait AccessReviewer {
    /// Whether `review` is allowed.
    fn allowed(
        &self,
        review: SubjectAccessReview,
    ) -> impl Future<Output = std::result::Result<bool, String>> + Send;
}

/// How a ManifestWorkReplicaSet is admitted: upstream's webhook checks (the template's
/// manifests) and, our addition on by default, the `execute-as` check of the template's
/// executor (see the [module](self) docs).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplicaSetAdmission {
    /// The manifest size limit in bytes (500 KiB by default).
    pub manifest_limit: usize,
    /// Check the template's executor as a ManifestWork's (on by default; off is upstream's
    /// behaviour).
    pub executor_check: bool,
    /// The hub's `NilExecutorValidating` feature gate (off by default): a template without an
    /// executor is reviewed as running as [`DEFAULT_EXECUTOR`].
    pub nil_executor_validating: bool,
}

impl Default for ReplicaSetAdmission {
    fn default() -> Self {
        Self {
            manifest_limit: MANIFEST_SIZE_LIMIT,
            executor_check: true,
            nil_executor_validating: false,
        }
    }
}

impl ReplicaSetAdmission {
    /// Upstream's admission exactly: no executor check.
    pub fn upstream() -> Self {
        Self {
            executor_check: false,
            ..Self::default()
        }
    }

    /// Turns the executor check on or off.
    #[must_use]
    pub fn executor_check(mut self, on: bool) -> Self {
        self.executor_check = on;
        self
    }

    /// Sets the manifest size limit, in bytes.
    #[must_use]
    pub fn manifest_limit(mut self, bytes: usize) -> Self {
        self.manifest_limit = bytes;
        self
    }

    /// Sets the `NilExecutorValidating` feature gate.
    #[must_use]
    pub fn nil_executor_validating(mut self, on: bool) -> Self {
        self.nil_executor_validating = on;
        self
    }
}

/// The review of `executor` on an object in `namespace`: `None` when there is nothing to
/// review (no executor, and the gate off). `field` is the executor's path, for errors.
fn review_of(
    kind: &'static str,
    namespace: &str,
    executor: Option<&ManifestWorkExecutor>,
    nil_executor_validating: bool,
    field: &str,
) -> std::result::Result<Option<ExecutorReview>, (String, String)> {
    let subject = executor.and_then(|e| e.subject.as_ref());
    let (sa_namespace, sa_name) = match subject {
        None if !nil_executor_validating => return Ok(None),
        None => (
            DEFAULT_EXECUTOR.0.to_string(),
            DEFAULT_EXECUTOR.1.to_string(),
        ),
        Some(s) => match (&s.type_, &s.service_account) {
            (ExecutorSubjectType::ServiceAccount, None) => {
                return Err((
                    format!("{field}.subject.serviceAccount"),
                    "executor service account can not be nil".to_string(),
                ));
            }
            // A subject type this SDK does not know, with no service account: there is
            // nobody to review (upstream's webhook would dereference nil).
            (other, None) => {
                return Err((
                    format!("{field}.subject.type"),
                    format!("executor subject type {other} is not supported"),
                ));
            }
            (_, Some(sa)) => (sa.namespace.clone(), sa.name.clone()),
        },
    };
    Ok(Some(ExecutorReview {
        kind,
        namespace: namespace.to_string(),
        service_account_namespace: sa_namespace,
        service_account_name: sa_name,
    }))
}

fn invalid(kind: &str, name: &str, (field, message): (String, String)) -> crate::Error {
    let mut errors = FieldErrors::default();
    errors.push(field, message);
    crate::Error::Invalid {
        kind: kind.to_string(),
        name: name.to_string(),
        errors,
    }
}

impl ManifestWork {
    /// The `execute-as` review upstream's ManifestWork webhook makes before admitting this
    /// work (created, or updated from `old`): `None` when there is none to make (no executor
    /// and the `NilExecutorValidating` gate off, or an update that keeps the executor). An
    /// executor subject without a service account is an error, with upstream's message.
    pub fn executor_review(
        &self,
        old: Option<&ManifestWork>,
        nil_executor_validating: bool,
    ) -> Result<Option<ExecutorReview>> {
        if old.is_some_and(|o| o.spec.executor == self.spec.executor) {
            return Ok(None);
        }
        review_of(
            "Manifestwork",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.spec.executor.as_ref(),
            nil_executor_validating,
            "spec.executor",
        )
        .map_err(|e| {
            invalid(
                "ManifestWork",
                self.metadata.name.as_deref().unwrap_or_default(),
                e,
            )
        })
    }
}

impl ManifestWorkReplicaSet {
    /// The `execute-as` review that admitting this replica set (created, or updated from
    /// `old`) takes under `admission`: the template's executor reviewed as a ManifestWork's,
    /// in the replica set's namespace. `None` when there is none to make: the check is off
    /// ([`ReplicaSetAdmission::upstream`]), the template has no executor (and the
    /// `NilExecutorValidating` gate is off), or an update keeps the executor.
    pub fn executor_review(
        &self,
        old: Option<&ManifestWorkReplicaSet>,
        admission: &ReplicaSetAdmission,
    ) -> Result<Option<ExecutorReview>> {
        if !admission.executor_check {
            return Ok(None);
        }
        let executor = |rs: &ManifestWorkReplicaSet| {
            rs.spec
                .manifest_work_template
                .as_ref()
                .and_then(|t| t.executor.clone())
        };
        if old.is_some_and(|o| executor(o) == executor(self)) {
            return Ok(None);
        }
        review_of(
            "ManifestWorkReplicaSet",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            executor(self).as_ref(),
            admission.nil_executor_validating,
            "spec.manifestWorkTemplate.executor",
        )
        .map_err(|e| {
            invalid(
                "ManifestWorkReplicaSet",
                self.metadata.name.as_deref().unwrap_or_default(),
                e,
            )
        })
    }

    /// Everything a validating webhook for ManifestWorkReplicaSets checks, as ours runs it:
    /// [`validate_with`](Self::validate_with) under `admission`, then the `execute-as` review
    /// of the template's executor for `user` (the admission request's user), asked through
    /// `reviewer`. A refusal is an [`Error::Invalid`](crate::Error::Invalid) whose message is
    /// upstream's ManifestWork refusal naming the replica set; a review that could not be
    /// asked refuses with the reviewer's error text.
    pub async fn admit<R: AccessReviewer>(
        &self,
        old: Option<&ManifestWorkReplicaSet>,
        user: &UserInfo,
        admission: &ReplicaSetAdmission,
        reviewer: &R,
    ) -> Result<()> {
        self.validate_with(admission)?;
        let Some(review) = self.executor_review(old, admission)? else {
            return Ok(());
        };
        let name = self.metadata.name.as_deref().unwrap_or_default();
        let field = "spec.manifestWorkTemplate.executor".to_string();
        match reviewer.allowed(review.access_review(user)).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                let who = user.username.as_deref().unwrap_or_default();
                Err(invalid(
                    "ManifestWorkReplicaSet",
                    name,
                    (field, review.denied_message(who)),
                ))
            }
            Err(message) => Err(invalid("ManifestWorkReplicaSet", name, (field, message))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Error;

    fn rs(executor: serde_json::Value) -> ManifestWorkReplicaSet {
        serde_json::from_value(json!({
            "metadata": {"name": "rs", "namespace": "apps"},
            "spec": {
                "placementRefs": [{"name": "p"}],
                "manifestWorkTemplate": {
                    "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "a", "namespace": "default"}}]},
                    "executor": executor,
                },
            },
        }))
        .unwrap()
    }

    fn sa(namespace: &str, name: &str) -> serde_json::Value {
        json!({"subject": {"type": "ServiceAccount",
            "serviceAccount": {"namespace": namespace, "name": name}}})
    }

    #[test]
    fn a_replica_set_executor_is_reviewed_in_its_namespace_like_a_work() {
        let review = rs(sa("kube-system", "privileged"))
            .executor_review(None, &ReplicaSetAdmission::default())
            .unwrap()
            .unwrap();
        let attrs = review.resource_attributes();
        assert_eq!(attrs.verb.as_deref(), Some("execute-as"));
        assert_eq!(
            attrs.group.as_deref(),
            Some("work.open-cluster-management.io")
        );
        assert_eq!(attrs.resource.as_deref(), Some("manifestworks"));
        assert_eq!(attrs.namespace.as_deref(), Some("apps"));
        assert_eq!(
            attrs.name.as_deref(),
            Some("system:serviceaccount:kube-system:privileged")
        );
        assert_eq!(
            review.denied_message("alice"),
            "user alice cannot manipulate the ManifestWorkReplicaSet with executor \
             kube-system/privileged in namespace apps"
        );
        let user = UserInfo {
            username: Some("alice".into()),
            uid: Some("u1".into()),
            groups: Some(vec!["devs".into()]),
            ..Default::default()
        };
        let sar = review.access_review(&user);
        assert_eq!(sar.spec.user.as_deref(), Some("alice"));
        assert_eq!(sar.spec.uid.as_deref(), Some("u1"));
        assert_eq!(sar.spec.groups, Some(vec!["devs".to_string()]));
    }

    #[test]
    fn nothing_to_review_when_off_absent_or_unchanged() {
        let with = rs(sa("ns", "sa"));
        assert_eq!(
            with.executor_review(None, &ReplicaSetAdmission::upstream())
                .unwrap(),
            None
        );
        assert_eq!(
            with.executor_review(Some(&with.clone()), &ReplicaSetAdmission::default())
                .unwrap(),
            None
        );
        let without = rs(serde_json::Value::Null);
        assert_eq!(
            without
                .executor_review(None, &ReplicaSetAdmission::default())
                .unwrap(),
            None
        );
        // The gate reviews the agent's own account for a template without an executor.
        let review = without
            .executor_review(
                None,
                &ReplicaSetAdmission::default().nil_executor_validating(true),
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            review.subject_name(),
            "system:serviceaccount::klusterlet-work-sa"
        );
        // Changed on update: reviewed.
        assert!(
            with.executor_review(Some(&without), &ReplicaSetAdmission::default())
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_subject_without_a_service_account_is_refused() {
        let bad = rs(json!({"subject": {"type": "ServiceAccount"}}));
        match bad.executor_review(None, &ReplicaSetAdmission::default()) {
            Err(Error::Invalid { errors, .. }) => {
                assert_eq!(
                    errors.0[0].field,
                    "spec.manifestWorkTemplate.executor.subject.serviceAccount"
                );
                assert_eq!(
                    errors.0[0].message,
                    "executor service account can not be nil"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_work_executor_is_reviewed_with_upstreams_message() {
        let work: ManifestWork = serde_json::from_value(json!({
            "metadata": {"name": "w", "namespace": "cluster1"},
            "spec": {"executor": sa("ns", "sa")},
        }))
        .unwrap();
        let review = work.executor_review(None, false).unwrap().unwrap();
        assert_eq!(
            review.denied_message("bob"),
            "user bob cannot manipulate the Manifestwork with executor ns/sa in namespace cluster1"
        );
        assert_eq!(work.executor_review(Some(&work), false).unwrap(), None);
    }
}
