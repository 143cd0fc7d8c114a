//! The admission webhooks of an OCM hub, run inside the fake API server.
//!
//! A real hub runs upstream's registration and work webhook servers, which kube-apiserver
//! calls for every create and update of the OCM kinds. [`HubAdmission`] makes a fake cluster
//! behave the same way, in process and over loopback (it is on for [`FakeHub`](crate::FakeHub)'s
//! hub):
//!
//! | webhook (name as upstream registers it) | on | what it does |
//! |---|---|---|
//! | `managedclustermutators.admission.cluster.open-cluster-management.io` | ManagedCluster create, update | stamps each new or changed taint's `timeAdded` with the server's clock, refuses a client-set `timeAdded` on update (`It is not allowed to set TimeAdded of Taint "<keys>".`); adds the `cluster.open-cluster-management.io/clusterset: default` label when it is missing (the `DefaultClusterSet` feature gate, on by default) |
//! | `managedclustervalidators.admission.cluster.open-cluster-management.io` | ManagedCluster create, update | client config URLs must be `https` (and then the name a namespace name); accepting a cluster (`hubAcceptsClient: true`) needs `update` on `register.open-cluster-management.io` `managedclusters/accept` and a namespace that is not terminating; setting, changing or removing the cluster-set label needs `create` on `managedclustersets/join` of the old and the new set |
//! | `managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io` | ManagedClusterSetBinding create, update | the binding is named after its set; on create the user needs `create` on `managedclustersets/bind` of the set |
//! | `manifestworkvalidators.admission.work.open-cluster-management.io` | ManifestWork create, update | manifests not empty, within the size limit, named, without `generateName`, not duplicated; a changed executor needs the requesting user to have `execute-as` on `manifestworks` named `system:serviceaccount:<ns>:<name>` in the work's namespace |
//! | `manifestworkreplicasetvalidators.admission.work.open-cluster-management.io` (ours) | ManifestWorkReplicaSet create, update | on by default, our addition: a changed template executor needs the same `execute-as` as a ManifestWork's, in the replica set's namespace (`user <user> cannot manipulate the ManifestWorkReplicaSet with executor <ns>/<name> in namespace <ns>`); with [`HubAdmission::manifest_work_replica_sets`], also the template's manifests, as upstream's webhook server checks them |
//!
//! The checks are the ones of `ocm_api` ([`ManifestWork::validate_with_limit`],
//! [`ManagedCluster::set_taint_times`], …), reported the way a webhook denial comes back from
//! kube-apiserver: the webhook's status code (`400 BadRequest` or `403 Forbidden`) and its
//! first message, behind `admission webhook "<name>" denied the request: `. Authorization
//! checks are SubjectAccessReviews answered from the RBAC objects of the cluster for the
//! requesting user (with [authentication](crate::FakeClusterBuilder::authentication), or an
//! `Impersonate-User` header); requests without a user (the in-process administrator, direct
//! store writes) and `system:masters` are allowed, as they are on a real hub. Only writes of
//! the objects themselves are checked (status writes are not, as upstream's webhook rules
//! name no subresource).
//!
//! Upstream fidelity notes: the webhooks run after the CRD's schema validation, so schema
//! errors (`422`) come first; upstream's webhook server also has a ManifestWorkReplicaSet
//! validator, but the hub upstream deploys registers no webhook configuration for it, so its
//! manifest checks are off unless [`HubAdmission::manifest_work_replica_sets`] turns them on
//! (our opt-in). Upstream checks no ManifestWorkReplicaSet executor at all, so a user refused
//! a ManifestWork with a privileged executor gets the same work into every selected cluster
//! through a replica set, written by the hub controller. The fake hub closes that hole by
//! default, as users' hubs should (mount `ManifestWorkReplicaSet::admit` of `ocm_api` in a
//! validating webhook): [`HubAdmission::replica_set_executor_check`]`(false)` restores
//! upstream's behaviour exactly (`ocm_api::work::executor` has the details). Placements have
//! no webhook upstream: their CRD schema is all the checking they get, and the fake API server
//! applies it.
//!
//! [`ManifestWork::validate_with_limit`]: ocm_api::work::v1::ManifestWork::validate_with_limit
//! [`ManagedCluster::set_taint_times`]: ocm_api::cluster::v1::ManagedCluster::set_taint_times

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::storage::registry::{Gvr, ResourceInfo};
use crate::storage::store::{Inner, WriteOptions};
use crate::validation::auth::{Request, ResourceRequest, UserInfo};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::ManagedClusterSetBinding;
use ocm_api::constants::{groups, labels};
use ocm_api::validation::FieldErrors;
use ocm_api::work::executor::{EXECUTE_AS, ExecutorReview, ReplicaSetAdmission};
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;

/// Name of upstream's ManagedCluster mutating webhook.
pub const MANAGED_CLUSTER_MUTATOR: &str =
    "managedclustermutators.admission.cluster.open-cluster-management.io";
/// Name of upstream's ManagedCluster validating webhook.
pub const MANAGED_CLUSTER_VALIDATOR: &str =
    "managedclustervalidators.admission.cluster.open-cluster-management.io";
/// Name of upstream's ManagedClusterSetBinding validating webhook.
pub const CLUSTER_SET_BINDING_VALIDATOR: &str =
    "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io";
/// Name of upstream's ManifestWork validating webhook.
pub const MANIFEST_WORK_VALIDATOR: &str =
    "manifestworkvalidators.admission.work.open-cluster-management.io";
/// Name we give the ManifestWorkReplicaSet validator (upstream registers none; see
/// [`HubAdmission::replica_set_executor_check`] and
/// [`HubAdmission::manifest_work_replica_sets`]).
pub const MANIFEST_WORK_REPLICA_SET_VALIDATOR: &str =
    "manifestworkreplicasetvalidators.admission.work.open-cluster-management.io";

/// Which of the hub's admission webhooks run, and their settings (upstream's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HubAdmission {
    /// The ManifestWork manifest size limit in bytes (the work webhook's `--manifestLimit`,
    /// 500 KiB by default).
    pub manifest_limit: usize,
    /// The `NilExecutorValidating` hub feature gate (off by default): a work without an
    /// executor is checked as if it ran as `system:serviceaccount::klusterlet-work-sa`.
    pub nil_executor_validating: bool,
    /// The `DefaultClusterSet` hub feature gate (on by default): the mutating webhook puts
    /// clusters without a cluster-set label into `default`.
    pub default_cluster_set: bool,
    /// Our opt-in, off by default: validate ManifestWorkReplicaSets' manifests as upstream's
    /// webhook server would if a webhook configuration routed them to it (upstream's deployed
    /// hub has none).
    pub manifest_work_replica_sets: bool,
    /// Our addition, on by default: a ManifestWorkReplicaSet's template executor needs the
    /// requesting user's `execute-as`, as a ManifestWork's does (`ocm_api::work::executor`).
    /// Off: upstream's behaviour, no check.
    pub replica_set_executor_check: bool,
}

impl Default for HubAdmission {
    fn default() -> Self {
        Self {
            manifest_limit: ocm_api::constants::limits::MANIFEST_SIZE_LIMIT,
            nil_executor_validating: false,
            default_cluster_set: true,
            manifest_work_replica_sets: false,
            replica_set_executor_check: true,
        }
    }
}

impl HubAdmission {
    /// Upstream's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the manifest size limit, in bytes.
    pub fn manifest_limit(mut self, bytes: usize) -> Self {
        self.manifest_limit = bytes;
        self
    }

    /// Set the `NilExecutorValidating` feature gate.
    pub fn nil_executor_validating(mut self, on: bool) -> Self {
        self.nil_executor_validating = on;
        self
    }

    /// Set the `DefaultClusterSet` feature gate.
    pub fn default_cluster_set(mut self, on: bool) -> Self {
        self.default_cluster_set = on;
        self
    }

    /// Validate ManifestWorkReplicaSets' manifests too (our opt-in).
    pub fn manifest_work_replica_sets(mut self, on: bool) -> Self {
        self.manifest_work_replica_sets = on;
        self
    }

    /// Check a ManifestWorkReplicaSet's template executor as a ManifestWork's (on by default,
    /// our addition); `false` is upstream's behaviour.
    pub fn replica_set_executor_check(mut self, on: bool) -> Self {
        self.replica_set_executor_check = on;
        self
    }

    /// How `ocm_api` admits a ManifestWorkReplicaSet under these settings.
    pub fn replica_set_admission(&self) -> ReplicaSetAdmission {
        ReplicaSetAdmission::default()
            .manifest_limit(self.manifest_limit)
            .executor_check(self.replica_set_executor_check)
            .nil_executor_validating(self.nil_executor_validating)
    }
}

/// A webhook's denial as kube-apiserver returns it.
fn denied(webhook: &str, mut status: ApiError) -> ApiError {
    status.message = format!(
        "admission webhook \"{webhook}\" denied the request: {}",
        status.message
    );
    status
}

/// A webhook's `apierrors.NewBadRequest`.
fn bad_request(webhook: &str, message: impl Into<String>) -> ApiError {
    denied(webhook, ApiError::bad_request(message))
}

/// A webhook's `apierrors.NewForbidden(group/resource, name, err)`.
fn forbidden(webhook: &str, group: &str, resource: &str, name: &str, why: &str) -> ApiError {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let mut e = ApiError::forbidden(format!("{qualified} {name:?} is forbidden: {why}"));
    e.name = Some(name.to_string());
    e.group = Some(group.to_string()).filter(|g| !g.is_empty());
    e.kind = Some(resource.to_string());
    denied(webhook, e)
}

/// The messages of `errors` whose field is one the webhook checks (the others are the CRD's,
/// which the API server checked before).
fn webhook_messages(errors: &FieldErrors, fields: &[&str]) -> Vec<String> {
    errors
        .0
        .iter()
        .filter(|e| fields.iter().any(|f| e.field.starts_with(f)))
        .filter(|e| !e.field.contains("conditionRules"))
        .map(|e| e.message.clone())
        .collect()
}

fn field_errors(e: ocm_api::Error) -> FieldErrors {
    match e {
        ocm_api::Error::Invalid { errors, .. } => errors,
        other => {
            let mut errors = FieldErrors::default();
            errors.push("", other.to_string());
            errors
        }
    }
}

fn is(info: &ResourceInfo, group: &str, kind: &str) -> bool {
    info.group == group && info.kind == kind
}

impl Inner {
    /// A SubjectAccessReview for `user` (none: the administrator), answered from RBAC.
    #[allow(clippy::too_many_arguments)]
    fn review_allows(
        &self,
        user: Option<&UserInfo>,
        verb: &str,
        group: &str,
        resource: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> bool {
        let Some(user) = user else { return true };
        let req = Request {
            verb: verb.into(),
            resource: Some(ResourceRequest {
                gvr: Gvr::new(group, "", resource),
                subresource: subresource.into(),
                namespace: namespace.into(),
                name: name.into(),
            }),
            path: String::new(),
        };
        self.allows(user, &req)
    }

    /// The hub's mutating webhooks, before the object is validated.
    pub(crate) fn mutating_webhooks(
        &self,
        info: &ResourceInfo,
        obj: &mut Value,
        old: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        let Some(hub) = &self.config.hub_admission else {
            return Ok(());
        };
        if opts.subresource.is_some() || !is(info, groups::CLUSTER, "ManagedCluster") {
            return Ok(());
        }
        // An object that does not decode is left to the schema validation, which names the
        // field at fault.
        let Ok(mut cluster) = serde_json::from_value::<ManagedCluster>(obj.clone()) else {
            return Ok(());
        };
        let old: Option<ManagedCluster> = old.and_then(|o| serde_json::from_value(o.clone()).ok());
        let now = Time(self.config.clock.now());
        if !cluster.taints().is_empty() {
            if let Err(e) = cluster.set_taint_times(old.as_ref(), &now) {
                let messages = webhook_messages(&field_errors(e), &["spec.taints"]);
                return Err(bad_request(MANAGED_CLUSTER_MUTATOR, messages.join("\n")));
            }
            if let Ok(taints) = serde_json::to_value(&cluster.spec.taints) {
                obj["spec"]["taints"] = taints;
            }
        }
        if hub.default_cluster_set && cluster.set_default_cluster_set_label() {
            let meta = crate::storage::store::meta_mut(obj);
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if !labels.is_object() {
                *labels = json!({});
            }
            labels[labels::CLUSTER_SET] = json!(ocm_api::constants::cluster::DEFAULT_CLUSTER_SET);
        }
        Ok(())
    }

    /// The hub's validating webhooks, after the object passed the schema validation.
    pub(crate) fn validating_webhooks(
        &self,
        info: &ResourceInfo,
        obj: &Value,
        old: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        let Some(hub) = &self.config.hub_admission else {
            return Ok(());
        };
        if opts.subresource.is_some() {
            return Ok(());
        }
        let user = opts.user.as_ref();
        if is(info, groups::CLUSTER, "ManagedCluster") {
            self.validate_cluster(obj, old, user)
        } else if is(info, groups::CLUSTER, "ManagedClusterSetBinding") {
            self.validate_binding(obj, old, user)
        } else if is(info, groups::WORK, "ManifestWork") {
            self.validate_work(hub, obj, old, user)
        } else if is(info, groups::WORK, "ManifestWorkReplicaSet")
            && (hub.manifest_work_replica_sets || hub.replica_set_executor_check)
        {
            self.validate_replica_set(hub, obj, old, user)
        } else {
            Ok(())
        }
    }

    fn validate_cluster(
        &self,
        obj: &Value,
        old: Option<&Value>,
        user: Option<&UserInfo>,
    ) -> Result<(), ApiError> {
        const W: &str = MANAGED_CLUSTER_VALIDATOR;
        let cluster: ManagedCluster =
            serde_json::from_value(obj.clone()).map_err(|e| bad_request(W, e.to_string()))?;
        let old: Option<ManagedCluster> = old.and_then(|o| serde_json::from_value(o.clone()).ok());
        if let Err(e) = cluster.validate() {
            let messages = webhook_messages(
                &field_errors(e),
                &["metadata.name", "spec.managedClusterClientConfigs"],
            );
            if !messages.is_empty() {
                return Err(bad_request(W, messages.join("\n")));
            }
        }
        let name = cluster.metadata.name.as_deref().unwrap_or_default();
        let accepts = |c: &ManagedCluster| c.spec.hub_accepts_client.unwrap_or(false);
        let accepting = accepts(&cluster) && old.as_ref().is_none_or(|o| !accepts(o));
        if accepting {
            const ACCEPT: &str = "managedclusters/accept";
            let terminating = self.namespace_state(name).is_some_and(|ns| {
                ns.pointer("/status/phase")
                    .and_then(crate::storage::frozen::Frozen::as_str)
                    == Some("Terminating")
            });
            if terminating {
                return Err(forbidden(
                    W,
                    groups::CLUSTER,
                    ACCEPT,
                    name,
                    &format!("cluster namespace {name:?} is terminating"),
                ));
            }
            if !self.review_allows(
                user,
                "update",
                "register.open-cluster-management.io",
                "managedclusters",
                "accept",
                "",
                name,
            ) {
                let who = user.map(|u| u.name.as_str()).unwrap_or_default();
                return Err(forbidden(
                    W,
                    groups::CLUSTER,
                    ACCEPT,
                    name,
                    &format!("user {who:?} cannot update the HubAcceptsClient field"),
                ));
            }
        }
        let set_of = |c: Option<&ManagedCluster>| {
            c.and_then(|c| c.metadata.labels.as_ref())
                .and_then(|l| l.get(labels::CLUSTER_SET))
                .cloned()
                .unwrap_or_default()
        };
        let (before, after) = (set_of(old.as_ref()), set_of(Some(&cluster)));
        if before != after {
            for set in [&before, &after] {
                if set.is_empty() {
                    continue;
                }
                if !self.review_allows(
                    user,
                    "create",
                    groups::CLUSTER,
                    "managedclustersets",
                    "join",
                    "",
                    set,
                ) {
                    let who = user.map(|u| u.name.as_str()).unwrap_or_default();
                    return Err(forbidden(
                        W,
                        groups::CLUSTER,
                        "managedclustersets/join",
                        set,
                        &format!(
                            "user {who:?} cannot add/remove a ManagedCluster to/from ManagedClusterSet {set:?}"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_binding(
        &self,
        obj: &Value,
        old: Option<&Value>,
        user: Option<&UserInfo>,
    ) -> Result<(), ApiError> {
        const W: &str = CLUSTER_SET_BINDING_VALIDATOR;
        let binding: ManagedClusterSetBinding =
            serde_json::from_value(obj.clone()).map_err(|e| bad_request(W, e.to_string()))?;
        let set = binding.spec.cluster_set.clone().unwrap_or_default();
        if binding.metadata.name.as_deref().unwrap_or_default() != set {
            return Err(bad_request(W, ocm_api::cluster::BINDING_NAME_MISMATCH));
        }
        if old.is_some() {
            return Ok(());
        }
        if !self.review_allows(
            user,
            "create",
            groups::CLUSTER,
            "managedclustersets",
            "bind",
            "",
            &set,
        ) {
            let who = user.map(|u| u.name.as_str()).unwrap_or_default();
            // Upstream names the resource with the `apps` group (it takes `Resource` from
            // k8s.io/api/apps/v1beta1); kept.
            return Err(forbidden(
                W,
                "apps",
                "managedclustersets/bind",
                &set,
                &format!("user {who:?} is not allowed to bind cluster set {set:?}"),
            ));
        }
        Ok(())
    }

    fn validate_work(
        &self,
        hub: &HubAdmission,
        obj: &Value,
        old: Option<&Value>,
        user: Option<&UserInfo>,
    ) -> Result<(), ApiError> {
        const W: &str = MANIFEST_WORK_VALIDATOR;
        let work: ManifestWork =
            serde_json::from_value(obj.clone()).map_err(|e| bad_request(W, e.to_string()))?;
        let old: Option<ManifestWork> = old.and_then(|o| serde_json::from_value(o.clone()).ok());
        if let Err(e) = work.validate_with_limit(hub.manifest_limit) {
            let messages = webhook_messages(&field_errors(e), &["spec.workload"]);
            if let Some(first) = messages.into_iter().next() {
                return Err(bad_request(W, first));
            }
        }
        let review = work
            .executor_review(old.as_ref(), hub.nil_executor_validating)
            .map_err(|e| first_message(W, e))?;
        self.review_executor(W, review, user)
    }

    /// The ManifestWorkReplicaSet validator (ours, see the module docs): upstream's manifest
    /// checks when [`HubAdmission::manifest_work_replica_sets`] is on, then the executor check
    /// when [`HubAdmission::replica_set_executor_check`] is.
    fn validate_replica_set(
        &self,
        hub: &HubAdmission,
        obj: &Value,
        old: Option<&Value>,
        user: Option<&UserInfo>,
    ) -> Result<(), ApiError> {
        const W: &str = MANIFEST_WORK_REPLICA_SET_VALIDATOR;
        let rs: ManifestWorkReplicaSet =
            serde_json::from_value(obj.clone()).map_err(|e| bad_request(W, e.to_string()))?;
        let old: Option<ManifestWorkReplicaSet> =
            old.and_then(|o| serde_json::from_value(o.clone()).ok());
        let admission = hub.replica_set_admission();
        if hub.manifest_work_replica_sets
            && let Err(e) = rs.validate_with(&admission.clone().executor_check(false))
        {
            let messages = webhook_messages(&field_errors(e), &["spec.manifestWorkTemplate"]);
            if let Some(first) = messages.into_iter().next() {
                return Err(bad_request(W, first));
            }
        }
        let review = rs
            .executor_review(old.as_ref(), &admission)
            .map_err(|e| first_message(W, e))?;
        self.review_executor(W, review, user)
    }

    /// Asks the `execute-as` review (if any) for `user` and refuses as `webhook` when it is
    /// not allowed, with upstream's `400 BadRequest`.
    fn review_executor(
        &self,
        webhook: &str,
        review: Option<ExecutorReview>,
        user: Option<&UserInfo>,
    ) -> Result<(), ApiError> {
        let Some(review) = review else {
            return Ok(());
        };
        let attributes = review.resource_attributes();
        if self.review_allows(
            user,
            EXECUTE_AS,
            attributes.group.as_deref().unwrap_or_default(),
            attributes.resource.as_deref().unwrap_or_default(),
            "",
            &review.namespace,
            &review.subject_name(),
        ) {
            return Ok(());
        }
        let who = user.map(|u| u.name.as_str()).unwrap_or_default();
        Err(bad_request(webhook, review.denied_message(who)))
    }
}

/// The first field error of `e` as a webhook's `400 BadRequest`.
fn first_message(webhook: &str, e: ocm_api::Error) -> ApiError {
    let errors = field_errors(e);
    let message = errors
        .0
        .into_iter()
        .next()
        .map(|e| e.message)
        .unwrap_or_default();
    bad_request(webhook, message)
}
