//! Executor authorization: before applying a manifest of a work that names an executor, the
//! agent checks that the executor's ServiceAccount may do it on the managed cluster.
//!
//! Upstream's rules: the executor's subject must be of type `ServiceAccount` (`only support
//! ServiceAccount type for the executor`) and name one (`the executor service account is
//! nil`); then one SubjectAccessReview per verb, in order `create`, `update`, `patch`,
//! `get`, and `delete` when the work owns the resource; the first denial stops. For RBAC kinds
//! (roles, role bindings and their cluster variants) a dry-run create impersonating the
//! ServiceAccount also checks for permission escalation. A denial is reported on that manifest
//! only, as `not allowed to apply the resource <group> <resource>, <namespace> <name>, will try
//! again in 1m0s`, and the work is retried after a minute.
//!
//! With a [`cache::ExecutorCache`] ([`ExecutorValidator::with_cache`], upstream's
//! `ExecutorValidatingCaches` feature gate) the answers of the reviews are remembered per
//! executor and resource, and [`cache::CacheController`] keeps them current by watching the
//! managed cluster's RBAC objects. The escalation check is never cached.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use ocm_api::work::v1::{ExecutorSubjectType, ManifestWorkExecutor};
use serde_json::Value;

pub mod cache;

use cache::{Dimension, ExecutorCache, executor_key};

/// Upstream's error for an executor whose subject is not of type `ServiceAccount`.
const ONLY_SERVICE_ACCOUNTS: &str = "only support ServiceAccount type for the executor";

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
///
/// Clones share the cache given to [`with_cache`](Self::with_cache).
#[derive(Clone)]
pub struct ExecutorValidator {
    client: Client,
    cache: Option<ExecutorCache>,
}

impl std::fmt::Debug for ExecutorValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorValidator")
            .field("cached", &self.cache.is_some())
            .finish_non_exhaustive()
    }
}

/// The message of a denial by the reviews (without the retry suffix).
fn denied_message(target: &Target<'_>) -> String {
    format!(
        "not allowed to apply the resource {} {}, {} {}",
        target.group, target.resource, target.namespace, target.name
    )
}

impl ExecutorValidator {
    /// A validator asking the cluster behind `client`, without a cache.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            cache: None,
        }
    }

    /// Remembers the answers of the SubjectAccessReviews in `cache` (upstream's
    /// `ExecutorValidatingCaches` gate): a known answer is used without asking the cluster, an
    /// unknown one is asked for and stored (allowed or denied; failed reviews are not stored).
    /// The escalation check of RBAC objects always runs live. Run a
    /// [`cache::CacheController`] over the same cache to follow RBAC changes.
    pub fn with_cache(mut self, cache: ExecutorCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The cache, when there is one.
    pub fn cache(&self) -> Option<&ExecutorCache> {
        self.cache.as_ref()
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
        // Upstream's basic check: the subject must be of type ServiceAccount (a missing
        // subject has an empty type there), and name a service account.
        let subject = executor
            .subject
            .as_ref()
            .filter(|s| s.type_ == ExecutorSubjectType::ServiceAccount)
            .ok_or_else(|| ExecutorError::Invalid(ONLY_SERVICE_ACCOUNTS.into()))?;
        let Some(sa) = &subject.service_account else {
            return Err(ExecutorError::Invalid(
                "the executor service account is nil".into(),
            ));
        };
        match &self.cache {
            None => {
                self.check_subject_access_reviews(&sa.namespace, &sa.name, target)
                    .await?
            }
            Some(cache) => {
                self.cached_reviews(cache, &sa.namespace, &sa.name, target)
                    .await?
            }
        }
        if target.group == RBAC_GROUP && RBAC_RESOURCES.contains(&target.resource) {
            let user = format!("system:serviceaccount:{}:{}", sa.namespace, sa.name);
            self.check_escalation(&user, target, object)
                .await
                .map_err(|e| match e {
                    Escalation::Denied => ExecutorError::NotAllowed(format!(
                        "{}, error: permission escalation",
                        denied_message(&target)
                    )),
                    Escalation::Failed(m) => ExecutorError::Api(m),
                })?;
        }
        Ok(())
    }

    /// The reviews through `cache`: a known answer is used, an unknown one is asked for and
    /// stored unless the controller saw an RBAC change while the reviews ran.
    async fn cached_reviews(
        &self,
        cache: &ExecutorCache,
        sa_namespace: &str,
        sa_name: &str,
        target: Target<'_>,
    ) -> Result<(), ExecutorError> {
        let key = executor_key(sa_namespace, sa_name);
        let dimension = Dimension::from_target(&target);
        match cache.lookup(&key, &dimension) {
            Some(true) => Ok(()),
            Some(false) => Err(ExecutorError::NotAllowed(denied_message(&target))),
            None => {
                let epoch = cache.epoch();
                let result = self
                    .check_subject_access_reviews(sa_namespace, sa_name, target)
                    .await;
                let answer = match &result {
                    Ok(()) => Some(true),
                    Err(ExecutorError::NotAllowed(_)) => Some(false),
                    Err(_) => None,
                };
                if let Some(allowed) = answer {
                    cache.insert_unless_changed(&key, dimension, allowed, epoch);
                }
                result
            }
        }
    }

    /// Runs the SubjectAccessReviews for the ServiceAccount `sa_namespace`/`sa_name` and
    /// `target`, always asking the cluster: `create`, `update`, `patch`, `get`, and `delete`
    /// when `target.owned`, stopping at the first denial ([`ExecutorError::NotAllowed`]). A
    /// review the cluster does not answer is an [`ExecutorError::Api`].
    pub async fn check_subject_access_reviews(
        &self,
        sa_namespace: &str,
        sa_name: &str,
        target: Target<'_>,
    ) -> Result<(), ExecutorError> {
        let user = format!("system:serviceaccount:{sa_namespace}:{sa_name}");
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
                        format!("system:serviceaccounts:{sa_namespace}"),
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
                return Err(ExecutorError::NotAllowed(denied_message(&target)));
            }
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
