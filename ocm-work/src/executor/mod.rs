//! Executor authorization: before applying a manifest of a work that names an executor, the
//! agent checks that the executor's ServiceAccount may do it on the managed cluster.
//!
//! Upstream's rules: one SubjectAccessReview per verb, in order `create`, `update`, `patch`,
//! `get`, and `delete` when the work owns the resource; the first denial stops. For RBAC kinds
//! (roles, role bindings and their cluster variants) a dry-run create impersonating the
//! ServiceAccount also checks for permission escalation. A denial is reported on that manifest
//! only, as `not allowed to apply the resource <group> <resource>, <namespace> <name>, will try
//! again in 1m0s`, and the work is retried after a minute.
//!
//! Not done yet: upstream's `ExecutorValidatingCaches` cache of review results.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use ocm_api::work::v1::ManifestWorkExecutor;
use serde_json::Value;

/// How long the agent waits before retrying a denied manifest.
pub const NOT_ALLOWED_REQUEUE: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a manifest may not be applied as the executor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorError {
    /// The executor is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The executor is not allowed to apply the resource (retried after a minute).
    #[error("{0}, will try again in 1m0s")]
    NotAllowed(String),
    /// A review could not be made.
    #[error("{0}")]
    Api(String),
}

/// What is about to be applied.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// API group (`""` for the core group).
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: &'a str,
    /// Object name.
    pub name: &'a str,
    /// Whether the work owns the resource (it may then also delete it).
    pub owned: bool,
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const RBAC_RESOURCES: [&str; 4] = [
    "roles",
    "rolebindings",
    "clusterroles",
    "clusterrolebindings",
];

/// Checks executors against the managed cluster's authorization.
#[derive(Clone)]
pub struct ExecutorValidator {
    client: Client,
}

impl std::fmt::Debug for ExecutorValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorValidator").finish_non_exhaustive()
    }
}

impl ExecutorValidator {
    /// A validator asking the cluster behind `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Checks that `executor` may apply `object` as `target`. No executor: allowed.
    pub async fn validate(
        &self,
        executor: Option<&ManifestWorkExecutor>,
        target: Target<'_>,
        object: &Value,
    ) -> Result<(), ExecutorError> {
        let Some(executor) = executor else {
            return Ok(());
        };
        let Some(subject) = &executor.subject else {
            return Err(ExecutorError::Invalid(
                "the executor service account is nil".into(),
            ));
        };
        let Some(sa) = &subject.service_account else {
            return Err(ExecutorError::Invalid(
                "the executor service account is nil".into(),
            ));
        };
        let user = format!("system:serviceaccount:{}:{}", sa.namespace, sa.name);
        let denied = || {
            format!(
                "not allowed to apply the resource {} {}, {} {}",
                target.group, target.resource, target.namespace, target.name
            )
        };
        let mut verbs = vec!["create", "update", "patch", "get"];
        if target.owned {
            verbs.push("delete");
        }
        let reviews: Api<SubjectAccessReview> = Api::all(self.client.clone());
        for verb in verbs {
            let review = SubjectAccessReview {
                spec: SubjectAccessReviewSpec {
                    user: Some(user.clone()),
                    groups: Some(vec![
                        "system:serviceaccounts".into(),
                        "system:authenticated".into(),
                        format!("system:serviceaccounts:{}", sa.namespace),
                    ]),
                    resource_attributes: Some(ResourceAttributes {
                        group: Some(target.group.into()),
                        version: Some(target.version.into()),
                        resource: Some(target.resource.into()),
                        namespace: Some(target.namespace.into()),
                        name: Some(target.name.into()),
                        verb: Some(verb.into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            };
            let answer = reviews
                .create(&PostParams::default(), &review)
                .await
                .map_err(|e| ExecutorError::Api(e.to_string()))?;
            if !answer.status.is_some_and(|s| s.allowed) {
                return Err(ExecutorError::NotAllowed(denied()));
            }
        }
        if target.group == RBAC_GROUP && RBAC_RESOURCES.contains(&target.resource) {
            self.check_escalation(&user, target, object)
                .await
                .map_err(|e| match e {
                    Escalation::Denied => ExecutorError::NotAllowed(format!(
                        "{}, error: permission escalation",
                        denied()
                    )),
                    Escalation::Failed(m) => ExecutorError::Api(m),
                })?;
        }
        Ok(())
    }

    /// A dry-run create of `object` impersonating `user`: 403 means the executor would
    /// escalate its permissions; 409 (already exists) passes.
    async fn check_escalation(
        &self,
        user: &str,
        target: Target<'_>,
        object: &Value,
    ) -> Result<(), Escalation> {
        let base = format!("/apis/{}/{}", target.group, target.version);
        let path = if target.namespace.is_empty() {
            format!("{base}/{}?dryRun=All", target.resource)
        } else {
            format!(
                "{base}/namespaces/{}/{}?dryRun=All",
                target.namespace, target.resource
            )
        };
        let body = serde_json::to_vec(object).map_err(|e| Escalation::Failed(e.to_string()))?;
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("Impersonate-User", user)
            .body(body)
            .map_err(|e| Escalation::Failed(e.to_string()))?;
        match self.client.request::<Value>(request).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 403 => Err(Escalation::Denied),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(e) => Err(Escalation::Failed(e.to_string())),
        }
    }
}

enum Escalation {
    Denied,
    Failed(String),
}
