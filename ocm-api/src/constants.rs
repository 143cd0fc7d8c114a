//! Every string and number upstream OCM defines once: labels, annotations, finalizers, taint
//! keys, condition types and reasons, feature-gate names, defaults and size limits.
//!
//! The other crates of the SDK use these constants rather than literals, so that a value is
//! spelt in exactly one place. Values are upstream-exact, including upstream's spelling quirks
//! (for example [`replicaset::CONDITION_MANIFESTWORK_APPLIED`] with a lower-case "w" and
//! [`placement::REASON_SUCCEED_CONFIGURED`]).

/// The API group names.
pub mod groups {
    /// `work.open-cluster-management.io`
    pub const WORK: &str = "work.open-cluster-management.io";
    /// `cluster.open-cluster-management.io`
    pub const CLUSTER: &str = "cluster.open-cluster-management.io";
    /// `addon.open-cluster-management.io`
    pub const ADDON: &str = "addon.open-cluster-management.io";
}

/// Labels set or read by OCM components.
pub mod labels {
    /// On a ManagedCluster: the exclusive ManagedClusterSet it belongs to.
    pub const CLUSTER_SET: &str = "cluster.open-cluster-management.io/clusterset";
    /// On a PlacementDecision: the name of the Placement that owns it.
    pub const PLACEMENT: &str = "cluster.open-cluster-management.io/placement";
    /// On a PlacementDecision: the decision group index, as a decimal string.
    pub const DECISION_GROUP_INDEX: &str =
        "cluster.open-cluster-management.io/decision-group-index";
    /// On a PlacementDecision: the decision group name (may be empty).
    pub const DECISION_GROUP_NAME: &str = "cluster.open-cluster-management.io/decision-group-name";
    /// The name of the managed cluster a resource belongs to.
    pub const CLUSTER_NAME: &str = "open-cluster-management.io/cluster-name";
    /// On a ManifestWork created by a ManifestWorkReplicaSet: `<namespace>.<name>` of the
    /// replica set.
    pub const MANIFEST_WORK_REPLICA_SET: &str =
        "work.open-cluster-management.io/manifestworkreplicaset";
    /// On a ManifestWork created by a ManifestWorkReplicaSet: the placement it was fanned out
    /// for.
    pub const PLACEMENT_NAME: &str = "work.open-cluster-management.io/placementname";
}

/// Annotations set or read by OCM components.
pub mod annotations {
    /// On a managed resource applied with ServerSideApply and `ignoreFields`: the hash of the
    /// applied manifest without the ignored fields.
    pub const CONFIG_SPEC_HASH: &str = "open-cluster-management.io/config-spec-hash";
    /// Defined by upstream as the hash of an applied object's spec, but unused by its agent.
    pub const OBJECT_SPEC_HASH: &str = "open-cluster-management.io/object-hash";
    /// On a Placement: `"true"` stops the scheduler from touching it.
    pub const EXPERIMENTAL_SCHEDULING_DISABLE: &str =
        "cluster.open-cluster-management.io/experimental-scheduling-disable";
    /// On the `default` ManagedClusterSet: `"false"` stops its controller from reverting
    /// changes to the cluster selector.
    pub const CLUSTER_SET_AUTO_UPDATE: &str = "cluster.open-cluster-management.io/autoupdate";
    /// On a ManagedCluster: image registry mirrors as JSON.
    pub const IMAGE_REGISTRIES: &str = "open-cluster-management.io/image-registries";
    /// On resources in a cluster namespace: the order (0 to 100) in which they are cleaned up.
    pub const CLEANUP_PRIORITY: &str = "open-cluster-management.io/cleanup-priority";
}

/// Finalizers.
pub mod finalizers {
    /// On a ManifestWork (hub): the work agent removes the applied resources before the work
    /// goes away.
    pub const MANIFEST_WORK_CLEANUP: &str =
        "cluster.open-cluster-management.io/manifest-work-cleanup";
    /// On an AppliedManifestWork (managed cluster): the agent deletes the applied resources
    /// before the record goes away.
    pub const APPLIED_MANIFEST_WORK_CLEANUP: &str =
        "cluster.open-cluster-management.io/applied-manifest-work-cleanup";
    /// On a ManifestWorkReplicaSet: its controller deletes the generated ManifestWorks first.
    pub const MANIFEST_WORK_REPLICA_SET_CLEANUP: &str =
        "work.open-cluster-management.io/manifest-work-cleanup";
    /// On a ManagedCluster: the hub removes the cluster's API resources first.
    pub const API_RESOURCE_CLEANUP: &str =
        "cluster.open-cluster-management.io/api-resource-cleanup";
}

/// Well-known ManagedCluster taints and their effects.
pub mod taints {
    /// Added (effect `NoSelect`, empty value) while the cluster's
    /// `ManagedClusterConditionAvailable` condition is `False`.
    pub const UNAVAILABLE: &str = "cluster.open-cluster-management.io/unavailable";
    /// Added (effect `NoSelect`, empty value) while the cluster's
    /// `ManagedClusterConditionAvailable` condition is `Unknown` or missing.
    pub const UNREACHABLE: &str = "cluster.open-cluster-management.io/unreachable";
    /// Taint effect: never selected unless tolerated; removed from existing decisions.
    pub const EFFECT_NO_SELECT: &str = "NoSelect";
    /// Taint effect: documented as "avoid", but upstream's scheduler ignores it.
    pub const EFFECT_PREFER_NO_SELECT: &str = "PreferNoSelect";
    /// Taint effect: not newly selected unless tolerated; kept where already decided.
    pub const EFFECT_NO_SELECT_IF_NEW: &str = "NoSelectIfNew";
}

/// ManifestWork condition types, reasons and messages (`work.open-cluster-management.io/v1`).
pub mod work {
    /// Condition type: the work (or a manifest) is being rolled out. Only condition rules set it.
    pub const CONDITION_PROGRESSING: &str = "Progressing";
    /// Condition type: the manifests were applied.
    pub const CONDITION_APPLIED: &str = "Applied";
    /// Condition type: the applied resources exist.
    pub const CONDITION_AVAILABLE: &str = "Available";
    /// Condition type: the work is degraded. Only condition rules set it.
    pub const CONDITION_DEGRADED: &str = "Degraded";
    /// Condition type: the work has completed. Set through condition rules.
    pub const CONDITION_COMPLETE: &str = "Complete";
    /// Condition type: the work is being deleted.
    pub const CONDITION_DELETING: &str = "Deleting";
    /// Manifest condition type: status feedback was collected.
    pub const CONDITION_STATUS_FEEDBACK_SYNCED: &str = "StatusFeedbackSynced";

    /// Reason defined upstream and unused by the agent.
    pub const REASON_MANIFESTS_COMPLETE: &str = "ManifestsComplete";
    /// Progressing reason defined upstream and never set by the agent.
    pub const REASON_APPLYING: &str = "Applying";
    /// Progressing reason defined upstream and never set by the agent.
    pub const REASON_COMPLETED: &str = "Completed";
    /// Progressing reason defined upstream and never set by the agent.
    pub const REASON_FAILED: &str = "Failed";

    /// Manifest `Applied=True`.
    pub const REASON_APPLIED_MANIFEST_COMPLETE: &str = "AppliedManifestComplete";
    /// Message of manifest `Applied=True`.
    pub const MESSAGE_APPLIED_MANIFEST_COMPLETE: &str = "Apply manifest complete";
    /// Manifest `Applied=False`.
    pub const REASON_APPLIED_MANIFEST_FAILED: &str = "AppliedManifestFailed";
    /// Prefix of the message of manifest `Applied=False`, followed by the error.
    pub const MESSAGE_APPLIED_MANIFEST_FAILED_PREFIX: &str = "Failed to apply manifest: ";
    /// Manifest `Applied=False` because `ignoreFields` could not be processed.
    pub const REASON_APPLIED_MANIFEST_SSA_IGNORE_FIELD_ERROR: &str =
        "AppliedManifestSSAIgnoreFieldError";
    /// Prefix of the message for [`REASON_APPLIED_MANIFEST_SSA_IGNORE_FIELD_ERROR`].
    pub const MESSAGE_IGNORE_FIELD_ERROR_PREFIX: &str = "Failed to process ignoreFields: ";
    /// Work `Applied=True`.
    pub const REASON_APPLIED_MANIFEST_WORK_COMPLETE: &str = "AppliedManifestWorkComplete";
    /// Message of work `Applied=True`.
    pub const MESSAGE_APPLIED_MANIFEST_WORK_COMPLETE: &str = "Apply manifest work complete";
    /// Work `Applied=False`.
    pub const REASON_APPLIED_MANIFEST_WORK_FAILED: &str = "AppliedManifestWorkFailed";
    /// Message of work `Applied=False`.
    pub const MESSAGE_APPLIED_MANIFEST_WORK_FAILED: &str = "Failed to apply manifest work";

    /// Manifest `Available=True`.
    pub const REASON_RESOURCE_AVAILABLE: &str = "ResourceAvailable";
    /// Message of manifest `Available=True`.
    pub const MESSAGE_RESOURCE_AVAILABLE: &str = "Resource is available";
    /// Manifest `Available=False` (the resource is gone).
    pub const REASON_RESOURCE_NOT_AVAILABLE: &str = "ResourceNotAvailable";
    /// Message of manifest `Available=False`.
    pub const MESSAGE_RESOURCE_NOT_AVAILABLE: &str = "Resource is not available";
    /// Manifest `Available=Unknown` because the resource could not be read.
    pub const REASON_FETCHING_RESOURCE_FAILED: &str = "FetchingResourceFailed";
    /// Prefix of the message for [`REASON_FETCHING_RESOURCE_FAILED`], followed by the error.
    pub const MESSAGE_FETCHING_RESOURCE_FAILED_PREFIX: &str = "Failed to fetch resource: ";
    /// Manifest `Available=Unknown` because resource, version or name is empty.
    pub const REASON_INCOMPLETE_RESOURCE_META: &str = "IncompleteResourceMeta";
    /// Message for [`REASON_INCOMPLETE_RESOURCE_META`].
    pub const MESSAGE_INCOMPLETE_RESOURCE_META: &str = "Resource meta is incomplete";

    /// Work `Available=True`.
    pub const REASON_RESOURCES_AVAILABLE: &str = "ResourcesAvailable";
    /// Message of work `Available=True`.
    pub const MESSAGE_RESOURCES_AVAILABLE: &str = "All resources are available";
    /// Work `Available=False`.
    pub const REASON_RESOURCES_NOT_AVAILABLE: &str = "ResourcesNotAvailable";
    /// Work `Available=Unknown`.
    pub const REASON_RESOURCES_STATUS_UNKNOWN: &str = "ResourcesStatusUnknown";
    /// Message of work `Available=Unknown` when no resource is available. Upstream's message
    /// ends with a space.
    pub const MESSAGE_NO_AVAILABLE_RESOURCE: &str = "cannot get any available resource ";

    /// `StatusFeedbackSynced=True` when there is nothing to collect.
    pub const REASON_NO_STATUS_FEEDBACK_SYNCED: &str = "NoStatusFeedbackSynced";
    /// `StatusFeedbackSynced=True` when values were collected.
    pub const REASON_STATUS_FEEDBACK_SYNCED: &str = "StatusFeedbackSynced";
    /// `StatusFeedbackSynced=False`.
    pub const REASON_STATUS_FEEDBACK_SYNC_FAILED: &str = "StatusFeedbackSyncFailed";
    /// Prefix of the `StatusFeedbackSyncFailed` message, followed by the aggregated errors.
    pub const MESSAGE_STATUS_FEEDBACK_SYNC_FAILED_PREFIX: &str =
        "Sync status feedback failed with error ";

    /// A condition rule was evaluated.
    pub const REASON_CONDITION_RULE_EVALUATED: &str = "ConditionRuleEvaluated";
    /// A condition rule has an unknown type.
    pub const REASON_CONDITION_RULE_INVALID: &str = "ConditionRuleInvalid";
    /// A condition rule's expression failed to compile or evaluate.
    pub const REASON_CONDITION_RULE_EXPRESSION_ERROR: &str = "ConditionRuleExpressionError";
    /// A condition rule could not be prepared.
    pub const REASON_CONDITION_RULE_INTERNAL_ERROR: &str = "ConditionRuleInternalError";
    /// Work conditions aggregated from manifest condition rules.
    pub const REASON_CONDITION_RULES_AGGREGATED: &str = "ConditionRulesAggregated";
    /// The prefix shared by every condition-rule reason; used to prune stale rule conditions.
    pub const CONDITION_RULE_REASON_PREFIX: &str = "ConditionRule";

    /// Work `Deleting=True`.
    pub const REASON_WORK_DELETING: &str = "WorkDeleting";
    /// Message of work `Deleting=True`.
    pub const MESSAGE_WORK_DELETING: &str = "ManifestWork is being deleted";

    /// The field manager the work agent uses for server-side apply unless configured.
    pub const DEFAULT_FIELD_MANAGER: &str = "work-agent";
}

/// ManifestWorkReplicaSet condition types and reasons.
pub mod replicaset {
    /// Condition type: the placements were found.
    pub const CONDITION_PLACEMENT_VERIFIED: &str = "PlacementVerified";
    /// Condition type: the rollout over the placements has finished.
    pub const CONDITION_PLACEMENT_ROLLED_OUT: &str = "PlacementRolledOut";
    /// Condition type: the generated works are applied. Upstream spells it with a lower-case "w".
    pub const CONDITION_MANIFESTWORK_APPLIED: &str = "ManifestworkApplied";

    /// A referenced placement has no PlacementDecision.
    pub const REASON_PLACEMENT_DECISION_NOT_FOUND: &str = "PlacementDecisionNotFound";
    /// The placements select no cluster.
    pub const REASON_PLACEMENT_DECISION_EMPTY: &str = "PlacementDecisionEmpty";
    /// Everything is as expected.
    pub const REASON_AS_EXPECTED: &str = "AsExpected";
    /// Works are still progressing.
    pub const REASON_PROCESSING: &str = "Processing";
    /// Something is not as expected.
    pub const REASON_NOT_AS_EXPECTED: &str = "NotAsExpected";
    /// The rollout is in progress.
    pub const REASON_PROGRESSING: &str = "Progressing";
    /// The rollout is complete.
    pub const REASON_COMPLETE: &str = "Complete";
    /// The generated ManifestWork name is invalid.
    pub const REASON_INVALID_MANIFEST_WORK_NAME: &str = "InvalidManifestWorkName";
}

/// ManagedCluster and ManagedClusterSet(Binding) condition types and reasons.
pub mod cluster {
    /// The cluster has joined the hub.
    pub const CONDITION_JOINED: &str = "ManagedClusterJoined";
    /// The hub accepted the cluster.
    pub const CONDITION_HUB_ACCEPTED: &str = "HubAcceptedManagedCluster";
    /// The hub denied the cluster.
    pub const CONDITION_HUB_DENIED: &str = "HubDeniedManagedCluster";
    /// The cluster's agent is reporting (drives the unavailable/unreachable taints).
    pub const CONDITION_AVAILABLE: &str = "ManagedClusterConditionAvailable";
    /// The cluster's clock is in sync with the hub's.
    pub const CONDITION_CLOCK_SYNCED: &str = "ManagedClusterConditionClockSynced";
    /// The cluster is being deleted.
    pub const CONDITION_DELETING: &str = "Deleting";
    /// `HubAcceptedManagedCluster=True`: a hub administrator accepted the cluster.
    pub const REASON_HUB_CLUSTER_ADMIN_ACCEPTED: &str = "HubClusterAdminAccepted";
    /// `ManagedClusterJoined=True`.
    pub const REASON_MANAGED_CLUSTER_JOINED: &str = "ManagedClusterJoined";
    /// `ManagedClusterConditionAvailable=True`: the agent renews its lease.
    pub const REASON_MANAGED_CLUSTER_AVAILABLE: &str = "ManagedClusterAvailable";
    /// Deleting: resources remain in the cluster namespace.
    pub const REASON_RESOURCE_REMAINING: &str = "ResourceRemaining";
    /// Deleting: nothing remains.
    pub const REASON_NO_RESOURCE: &str = "NoResource";
    /// Deleting: cleanup failed.
    pub const REASON_DELETING_ERROR: &str = "DeletingError";

    /// ManagedClusterSet condition type: the set selects no cluster.
    pub const CONDITION_CLUSTER_SET_EMPTY: &str = "ClusterSetEmpty";
    /// `ClusterSetEmpty=True`.
    pub const REASON_NO_CLUSTER_MATCHED: &str = "NoClusterMatched";
    /// Message of `ClusterSetEmpty=True`.
    pub const MESSAGE_NO_CLUSTER_MATCHED: &str = "No ManagedCluster selected";
    /// `ClusterSetEmpty=False`; the message is `<n> ManagedClusters selected`.
    pub const REASON_CLUSTERS_SELECTED: &str = "ClustersSelected";

    /// ManagedClusterSetBinding condition type.
    pub const CONDITION_BOUND: &str = "Bound";
    /// `Bound=True`: the set exists.
    pub const REASON_CLUSTER_SET_BOUND: &str = "ClusterSetBound";
    /// `Bound=False`: the set does not exist.
    pub const REASON_CLUSTER_SET_NOT_FOUND: &str = "ClusterSetNotFound";

    /// The exclusive-label set that clusters without a set label join.
    pub const DEFAULT_CLUSTER_SET: &str = "default";
    /// The label-selector set that selects every cluster.
    pub const GLOBAL_CLUSTER_SET: &str = "global";

    /// Resource name for CPU in `allocatable` and `capacity`.
    pub const RESOURCE_CPU: &str = "cpu";
    /// Resource name for memory in `allocatable` and `capacity`.
    pub const RESOURCE_MEMORY: &str = "memory";

    /// ClusterClaim names reserved by OCM; they are always reported to the hub, first.
    pub const RESERVED_CLAIM_NAMES: [&str; 4] = [
        "id.k8s.io",
        "kubeversion.open-cluster-management.io",
        "platform.open-cluster-management.io",
        "product.open-cluster-management.io",
    ];
    /// Label on a ClusterClaim that keeps it on the managed cluster (not reported to the hub).
    pub const CLAIM_SPOKE_ONLY_LABEL: &str = "open-cluster-management.io/spoke-only";
    /// How many non-reserved claims the registration agent reports by default.
    pub const DEFAULT_MAX_CUSTOM_CLAIMS: usize = 20;

    /// Default `spec.leaseDurationSeconds`.
    pub const DEFAULT_LEASE_DURATION_SECONDS: i32 = 60;
    /// Name of the `coordination.k8s.io/v1` Lease, in the cluster namespace on the hub, that a
    /// managed cluster's registration agent renews.
    pub const LEASE_NAME: &str = "managed-cluster-lease";
    /// The hub marks a cluster's availability unknown when its lease was not renewed for this
    /// many lease durations.
    pub const LEASE_DURATION_TIMES: i64 = 5;
    /// `ManagedClusterConditionAvailable=Unknown`: the lease was not renewed in time.
    pub const REASON_LEASE_UPDATE_STOPPED: &str = "ManagedClusterLeaseUpdateStopped";
    /// Message of [`REASON_LEASE_UPDATE_STOPPED`].
    pub const MESSAGE_LEASE_UPDATE_STOPPED: &str = "Registration agent stopped updating its lease.";
    /// Message of `ManagedClusterConditionAvailable=True` ([`REASON_MANAGED_CLUSTER_AVAILABLE`]).
    pub const MESSAGE_MANAGED_CLUSTER_AVAILABLE: &str = "Managed cluster is available";
    /// `ManagedClusterConditionAvailable=False`: the managed cluster's API server is not
    /// healthy.
    pub const REASON_KUBE_APISERVER_UNAVAILABLE: &str = "ManagedClusterKubeAPIServerUnavailable";
}

/// Placement condition types, reasons, messages and limits.
pub mod placement {
    /// Condition type: the placement selected the clusters it asked for.
    pub const CONDITION_SATISFIED: &str = "PlacementSatisfied";
    /// Condition type: the placement is misconfigured.
    pub const CONDITION_MISCONFIGURED: &str = "PlacementMisconfigured";

    /// No valid binding in the placement's namespace.
    pub const REASON_NO_BINDINGS: &str = "NoManagedClusterSetBindings";
    /// Message for [`REASON_NO_BINDINGS`].
    pub const MESSAGE_NO_BINDINGS: &str =
        "No valid ManagedClusterSetBindings found in placement namespace";
    /// None of `spec.clusterSets` is bound.
    pub const REASON_NO_INTERSECTION: &str = "NoIntersection";
    /// Every eligible set is empty.
    pub const REASON_ALL_SETS_EMPTY: &str = "AllManagedClusterSetsEmpty";
    /// Not every requested decision could be scheduled.
    pub const REASON_NOT_ALL_DECISIONS_SCHEDULED: &str = "NotAllDecisionsScheduled";
    /// No cluster matched.
    pub const REASON_NO_CLUSTER_MATCHED: &str = "NoManagedClusterMatched";
    /// Message for [`REASON_NO_CLUSTER_MATCHED`].
    pub const MESSAGE_NO_CLUSTER_MATCHED: &str =
        "No ManagedCluster matches any of the cluster predicate";
    /// Every requested decision was scheduled.
    pub const REASON_ALL_DECISIONS_SCHEDULED: &str = "AllDecisionsScheduled";
    /// Message for [`REASON_ALL_DECISIONS_SCHEDULED`].
    pub const MESSAGE_ALL_DECISIONS_SCHEDULED: &str = "All cluster decisions scheduled";
    /// `PlacementMisconfigured=True`.
    pub const REASON_MISCONFIGURED: &str = "Misconfigured";
    /// `PlacementMisconfigured=False`. Upstream's spelling.
    pub const REASON_SUCCEED_CONFIGURED: &str = "Succeedconfigured";
    /// Message of `PlacementMisconfigured=False`.
    pub const MESSAGE_SUCCEED_CONFIGURED: &str = "Placement configurations check pass";

    /// At most this many clusters go into one PlacementDecision.
    pub const MAX_CLUSTERS_PER_DECISION: usize = 100;
    /// PlacementDecision names are `<placement>-decision-<n>`.
    pub const DECISION_NAME_INFIX: &str = "-decision-";

    /// Prioritizer names.
    pub const PRIORITIZER_BALANCE: &str = "Balance";
    /// Prioritizer: keeps existing decisions.
    pub const PRIORITIZER_STEADY: &str = "Steady";
    /// Prioritizer: most allocatable CPU.
    pub const PRIORITIZER_RESOURCE_ALLOCATABLE_CPU: &str = "ResourceAllocatableCPU";
    /// Prioritizer: most allocatable memory.
    pub const PRIORITIZER_RESOURCE_ALLOCATABLE_MEMORY: &str = "ResourceAllocatableMemory";
    /// The minimum and maximum score a prioritizer or an AddOnPlacementScore can give.
    pub const SCORE_RANGE: (i64, i64) = (-100, 100);
}

/// Addon labels, annotations, names and condition types (`addon.open-cluster-management.io`).
pub mod addon {
    /// The namespace addon agents are installed in unless configured otherwise.
    pub const DEFAULT_AGENT_INSTALL_NAMESPACE: &str = "open-cluster-management-agent-addon";
    /// On a v1beta1 ManagedClusterAddOn converted from v1alpha1: the v1alpha1
    /// `spec.installNamespace`, which v1beta1 has no field for.
    pub const V1ALPHA1_INSTALL_NAMESPACE_ANNOTATION: &str =
        "addon.open-cluster-management.io/v1alpha1-install-namespace";
    /// The placeholder config name upstream's conversion uses for "no default config".
    pub const RESERVED_NO_DEFAULT_CONFIG_NAME: &str = "__reserved_no_default__";
    /// The signer of hub API client certificates for addon agents.
    pub const KUBE_API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";
    /// On a ClusterManagementAddOn: who manages the addon's lifecycle.
    pub const LIFECYCLE_ANNOTATION: &str = "addon.open-cluster-management.io/lifecycle";
    /// [`LIFECYCLE_ANNOTATION`] value: the addon manager installs the addon.
    pub const LIFECYCLE_ADDON_MANAGER: &str = "addon-manager";
    /// [`LIFECYCLE_ANNOTATION`] value: the addon manages itself.
    pub const LIFECYCLE_SELF: &str = "self";

    /// ManagedClusterAddOn condition: the addon agent is available.
    pub const CONDITION_AVAILABLE: &str = "Available";
    /// ManagedClusterAddOn condition: the addon is degraded.
    pub const CONDITION_DEGRADED: &str = "Degraded";
    /// ManagedClusterAddOn condition: the addon is being installed or upgraded.
    pub const CONDITION_PROGRESSING: &str = "Progressing";
    /// ManagedClusterAddOn condition: the addon's configs were applied.
    pub const CONDITION_CONFIGURED: &str = "Configured";
    /// ManagedClusterAddOn condition: the addon's manifests were applied.
    pub const CONDITION_MANIFEST_APPLIED: &str = "ManifestApplied";
    /// ManagedClusterAddOn condition: the addon's hook manifests completed.
    pub const CONDITION_HOOK_MANIFEST_COMPLETED: &str = "HookManifestCompleted";
    /// ManagedClusterAddOn condition: the addon's registration was applied.
    pub const CONDITION_REGISTRATION_APPLIED: &str = "RegistrationApplied";
    /// ManagedClusterAddOn condition: the addon's client certificate was rotated.
    pub const CONDITION_CLUSTER_CERTIFICATE_ROTATED: &str = "ClusterCertificateRotated";
    /// ManagedClusterAddOn condition: the hosted addon's manifests were applied.
    pub const CONDITION_HOSTING_MANIFEST_APPLIED: &str = "HostingManifestApplied";
    /// ManagedClusterAddOn condition: the hosting cluster is valid.
    pub const CONDITION_HOSTING_CLUSTER_VALIDITY: &str = "HostingClusterValidity";

    /// On a ManifestWork (and RBAC objects) of an addon: the addon's name.
    pub const ADDON_LABEL: &str = "open-cluster-management.io/addon-name";
    /// On a ManifestWork of an addon outside the addon's namespace (hosted mode): the
    /// namespace of its ManagedClusterAddOn.
    pub const ADDON_NAMESPACE_LABEL: &str = "open-cluster-management.io/addon-namespace";
    /// On a RoleBinding the template addon creates: the template addon's name.
    pub const ADDON_TEMPLATE_LABEL: &str = "open-cluster-management.io/addon-template-name";
    /// On a ManagedClusterAddOn: the hosting cluster (hosted mode).
    pub const HOSTING_CLUSTER_NAME_ANNOTATION: &str =
        "addon.open-cluster-management.io/hosting-cluster-name";
    /// On a manifest (annotation, or label, deprecated): a Job or Pod to run before the addon
    /// is removed.
    pub const PRE_DELETE_HOOK_ANNOTATION: &str =
        "addon.open-cluster-management.io/addon-pre-delete";
    /// On a manifest: leave the resource on the managed cluster when the addon is removed.
    pub const DELETION_ORPHAN_ANNOTATION: &str = "addon.open-cluster-management.io/deletion-orphan";
    /// On a manifest (hosted mode): where it is deployed.
    pub const HOSTED_MANIFEST_LOCATION_ANNOTATION: &str =
        "addon.open-cluster-management.io/hosted-manifest-location";
    /// [`HOSTED_MANIFEST_LOCATION_ANNOTATION`] value: on the managed cluster.
    pub const HOSTED_MANIFEST_LOCATION_MANAGED: &str = "managed";
    /// [`HOSTED_MANIFEST_LOCATION_ANNOTATION`] value: on the hosting cluster.
    pub const HOSTED_MANIFEST_LOCATION_HOSTING: &str = "hosting";
    /// [`HOSTED_MANIFEST_LOCATION_ANNOTATION`] value: nowhere.
    pub const HOSTED_MANIFEST_LOCATION_NONE: &str = "none";
    /// The addon is installed on the managed cluster (the install mode value).
    pub const INSTALL_MODE_DEFAULT: &str = "Default";
    /// The addon is installed on a hosting cluster (the install mode value).
    pub const INSTALL_MODE_HOSTED: &str = "Hosted";

    /// On a ManagedClusterAddOn: the pre-delete hook has to complete before it goes.
    pub const PRE_DELETE_HOOK_FINALIZER: &str = "addon.open-cluster-management.io/addon-pre-delete";
    /// On a ManagedClusterAddOn (hosted mode): the hosting pre-delete hook has to complete.
    pub const HOSTING_PRE_DELETE_HOOK_FINALIZER: &str =
        "addon.open-cluster-management.io/hosting-addon-pre-delete";
    /// On a ManagedClusterAddOn (hosted mode): the hosting works have to be removed.
    pub const HOSTING_MANIFEST_FINALIZER: &str =
        "addon.open-cluster-management.io/hosting-manifests-cleanup";
    /// Deprecated spellings of the three finalizers above, removed whenever one is set.
    pub const DEPRECATED_FINALIZERS: [&str; 3] = [
        "cluster.open-cluster-management.io/addon-pre-delete",
        "cluster.open-cluster-management.io/hosting-addon-pre-delete",
        "cluster.open-cluster-management.io/hosting-manifests-cleanup",
    ];

    /// Prefix of the deploy ManifestWorks: `addon-<name>-deploy-<n>`.
    pub const DEPLOY_WORK_PREFIX: &str = "addon-";
    /// Infix of the deploy ManifestWorks: `addon-<name>-deploy-<n>`.
    pub const DEPLOY_WORK_INFIX: &str = "-deploy";
    /// Infix of the pre-delete hook ManifestWork: `addon-<name>-pre-delete`.
    pub const PRE_DELETE_WORK_INFIX: &str = "-pre-delete";

    /// The API group and resource of AddOnDeploymentConfigs.
    pub const ADDON_DEPLOYMENT_CONFIG_RESOURCE: &str = "addondeploymentconfigs";
    /// The API group and resource of AddOnTemplates.
    pub const ADDON_TEMPLATE_RESOURCE: &str = "addontemplates";

    /// `ManifestApplied=False`: a ManifestWork could not be built or applied.
    pub const REASON_MANIFEST_WORK_APPLY_FAILED: &str = "ManifestWorkApplyFailed";
    /// `ManifestApplied=True`.
    pub const REASON_ADDON_MANIFEST_APPLIED: &str = "AddonManifestApplied";
    /// `ManifestApplied=False`: the work agent failed to apply the manifests.
    pub const REASON_ADDON_MANIFEST_APPLIED_FAILED: &str = "AddonManifestAppliedFailed";
    /// Message of `ManifestApplied=True`.
    pub const MESSAGE_MANIFESTS_APPLIED: &str = "manifests of addon are applied successfully";
    /// Message of `ManifestApplied=True` when there is nothing to deploy.
    pub const MESSAGE_NO_MANIFEST: &str = "no manifest need to apply";
    /// Message of `ManifestApplied=False` when the agent failed.
    pub const MESSAGE_MANIFESTS_APPLY_FAILED: &str = "failed to apply the manifests of addon";
    /// Prefix of the `ManifestWorkApplyFailed` message when applying a work failed.
    pub const MESSAGE_APPLY_WORK_FAILED_PREFIX: &str = "failed to apply manifestWork: ";
    /// Prefix of the `ManifestWorkApplyFailed` message when the addon's manifests failed.
    pub const MESSAGE_GET_MANIFESTS_FAILED_PREFIX: &str =
        "failed to get manifest from agent interface: ";
    /// Prefix of the `ManifestWorkApplyFailed` message when the works could not be built.
    pub const MESSAGE_BUILD_WORK_FAILED_PREFIX: &str = "failed to build manifestwork: ";

    /// `HookManifestCompleted=True`.
    pub const REASON_HOOK_MANIFEST_IS_COMPLETED: &str = "HookManifestIsCompleted";
    /// `HookManifestCompleted=False`.
    pub const REASON_HOOK_MANIFEST_IS_NOT_COMPLETED: &str = "HookManifestIsNotCompleted";

    /// `Available`: the addon's works are missing.
    pub const REASON_AVAILABLE_WORK_NOT_FOUND: &str = "WorkNotFound";
    /// `Available`: applying the works failed.
    pub const REASON_AVAILABLE_WORK_APPLY_FAILED: &str = "WorkApplyFailed";
    /// `Available`: the works are not applied yet.
    pub const REASON_AVAILABLE_WORK_NOT_APPLIED: &str = "WorkNotApplied";
    /// `Available=True`: the works are applied (no probe).
    pub const REASON_AVAILABLE_WORK_APPLIED: &str = "WorkApplied";
    /// `Available=Unknown`: no probe value yet.
    pub const REASON_AVAILABLE_NO_PROBE_RESULT: &str = "NoProbeResult";
    /// `Available=False`: the health checker refused the probe values.
    pub const REASON_AVAILABLE_PROBE_UNAVAILABLE: &str = "ProbeUnavailable";
    /// `Available=True`: the probe values are healthy.
    pub const REASON_AVAILABLE_PROBE_AVAILABLE: &str = "ProbeAvailable";
    /// `Available=False`: the addon's lease is no longer renewed.
    pub const REASON_AVAILABLE_LEASE_UPDATE_STOPPED: &str = "ManagedClusterAddOnLeaseUpdateStopped";
    /// `Available=Unknown`: the addon's lease does not exist.
    pub const REASON_AVAILABLE_LEASE_NOT_FOUND: &str = "ManagedClusterAddOnLeaseNotFound";
    /// `Available=True`: the addon's lease is renewed.
    pub const REASON_AVAILABLE_LEASE_UPDATED: &str = "ManagedClusterAddOnLeaseUpdated";

    /// `Progressing` reason: configurations are being rolled out.
    pub const REASON_PROGRESSING: &str = "Progressing";
    /// `Progressing` reason: the rollout completed.
    pub const REASON_PROGRESSING_COMPLETED: &str = "Completed";
    /// `Progressing` reason: the rollout failed.
    pub const REASON_PROGRESSING_FAILED: &str = "Failed";
    /// `Progressing` reason: waiting for canary clusters.
    pub const REASON_PROGRESSING_WAITING_FOR_CANARY: &str = "WaitingForCanary";
    /// `Progressing=False`: a configuration of an unsupported kind is named.
    pub const REASON_PROGRESSING_CONFIGURATION_UNSUPPORTED: &str = "ConfigurationUnsupported";
    /// `Progressing=False` while `ManifestApplied` is unset.
    pub const REASON_WAITING_FOR_MANIFEST_APPLIED: &str = "WaitingForManifestApplied";
    /// Message for [`REASON_WAITING_FOR_MANIFEST_APPLIED`].
    pub const MESSAGE_WAITING_FOR_MANIFEST_APPLIED: &str =
        "Waiting for ManagedClusterAddOn ManifestApplied condition";

    /// `Progressing=False` while a hosted addon's `HostingManifestApplied` is unset.
    pub const REASON_WAITING_FOR_HOSTING_MANIFEST_APPLIED: &str =
        "WaitingForHostingManifestApplied";
    /// Message for [`REASON_WAITING_FOR_HOSTING_MANIFEST_APPLIED`].
    pub const MESSAGE_WAITING_FOR_HOSTING_MANIFEST_APPLIED: &str =
        "Waiting for ManagedClusterAddOn HostingManifestApplied condition";
    /// `HostingClusterValidity=True`: the hosting cluster is a managed cluster of the hub.
    pub const REASON_HOSTING_CLUSTER_VALID: &str = "HostingClusterValid";
    /// `HostingClusterValidity=False`: the hosting cluster is not a managed cluster of the hub.
    pub const REASON_HOSTING_CLUSTER_INVALID: &str = "HostingClusterInvalid";

    /// `Configured=True`.
    pub const REASON_CONFIGURATIONS_CONFIGURED: &str = "ConfigurationsConfigured";
    /// Message of `Configured=True`.
    pub const MESSAGE_CONFIGURATIONS_CONFIGURED: &str = "Configurations configured";
    /// `Configured=False`: new configurations wait for their turn in the rollout.
    pub const REASON_CONFIGURATIONS_NOT_CONFIGURED: &str = "ConfigurationsNotConfigured";
    /// Message of `Configured=False`.
    pub const MESSAGE_CONFIGURATIONS_NOT_CONFIGURED: &str =
        "Configurations updated and not configured yet";

    /// `RegistrationApplied=True` with no registration.
    pub const REASON_REGISTRATION_NIL: &str = "NilRegistration";
    /// `RegistrationApplied=False`: the hub permissions could not be set.
    pub const REASON_REGISTRATION_SET_PERMISSION_FAILED: &str = "SetPermissionFailed";
    /// `RegistrationApplied=True`: the hub permissions are set.
    pub const REASON_REGISTRATION_SET_PERMISSION_APPLIED: &str = "SetPermissionApplied";
    /// `RegistrationApplied=False`: the agent's identity is not known yet.
    pub const REASON_REGISTRATION_PERMISSION_CONFIG_PENDING: &str = "PermissionConfigPending";
    /// Message of `RegistrationApplied=True`.
    pub const MESSAGE_REGISTRATION_CONFIGURED: &str =
        "Registration of the addon agent is configured";
    /// Message of `RegistrationApplied=False` with [`REASON_REGISTRATION_PERMISSION_CONFIG_PENDING`].
    pub const MESSAGE_REGISTRATION_SUBJECT_NOT_READY: &str = "registration subject not ready";
    /// Prefix of the `SetPermissionFailed` message.
    pub const MESSAGE_SET_PERMISSION_FAILED_PREFIX: &str =
        "Failed to set permission for hub agent: ";

    /// The lease an addon agent renews is valid this many lease durations.
    pub const LEASE_DURATION_TIMES: u32 = 5;
    /// The lease duration the registration agent assumes for addon leases, in seconds.
    pub const LEASE_DURATION_SECONDS: u32 = 60;

    /// Where a template addon's agent finds its hub kubeconfig.
    pub const TEMPLATE_HUB_KUBECONFIG_PATH: &str = "/managed/hub-kubeconfig/kubeconfig";
    /// Where a template addon's agent has its hub kubeconfig Secret mounted.
    pub const TEMPLATE_HUB_KUBECONFIG_MOUNT_PATH: &str = "/managed/hub-kubeconfig";
    /// Where the proxy CA bundle ConfigMap of a template addon is mounted.
    pub const TEMPLATE_PROXY_CA_MOUNT_PATH: &str = "/managed/proxy-ca";
    /// The key of the CA bundle in the proxy CA ConfigMap.
    pub const TEMPLATE_PROXY_CA_KEY: &str = "ca-bundle.crt";
}

/// Feature-gate names, all Alpha and off by default upstream.
pub mod feature_gates {
    /// Hub: a ManifestWork without executor is checked as the agent's own service account.
    pub const NIL_EXECUTOR_VALIDATING: &str = "NilExecutorValidating";
    /// Hub: enable the ManifestWorkReplicaSet controller.
    pub const MANIFEST_WORK_REPLICA_SET: &str = "ManifestWorkReplicaSet";
    /// Hub and agent: deliver works through CloudEvents.
    pub const CLOUD_EVENTS_DRIVERS: &str = "CloudEventsDrivers";
    /// Hub: delete completed works after `ttlSecondsAfterFinished`.
    pub const CLEAN_UP_COMPLETED_MANIFEST_WORK: &str = "CleanUpCompletedManifestWork";
    /// Agent: cache executor authorization results.
    pub const EXECUTOR_VALIDATING_CACHES: &str = "ExecutorValidatingCaches";
    /// Agent: allow `JsonRaw` feedback values.
    pub const RAW_FEEDBACK_JSON_STRING: &str = "RawFeedbackJsonString";
    /// Hub: create and maintain the `default` and `global` ManagedClusterSets.
    pub const DEFAULT_CLUSTER_SET: &str = "DefaultClusterSet";
    /// Hub: maintain a SIG-Multicluster ClusterProfile (`multicluster.x-k8s.io`) for every
    /// ManagedCluster in each namespace bound to one of its sets.
    pub const CLUSTER_PROFILE: &str = "ClusterProfile";
    /// Hub: mirror every PlacementDecision as a SIG-Multicluster PlacementDecision
    /// (`multicluster.x-k8s.io`, KEP-5313).
    pub const SIG_PLACEMENT_DECISION: &str = "SIGPlacementDecision";
    /// Hub, **ours** (no upstream gate): honour a Placement's `spec.spreadPolicy`, which
    /// upstream's scheduler ignores.
    pub const TOPOLOGY_SPREAD: &str = "TopologySpread";
    /// Hub, **ours** (no upstream gate; upstream's API has the fields but no controller for
    /// them): write prioritizer scores into PlacementDecisions, order them as `spec.sortBy`
    /// says, and rate-limit score-only updates by `spec.scoreRateLimit`, recorded in
    /// `status.lastScoreUpdateTime`.
    pub const PLACEMENT_DECISION_SCORE: &str = "PlacementDecisionScore";
}

/// Defaults and size limits.
pub mod limits {
    use std::time::Duration;

    /// The hub webhook's default limit on the total size of a ManifestWork's manifests, in
    /// bytes (500 KiB).
    pub const MANIFEST_SIZE_LIMIT: usize = 500 * 1024;
    /// The longest `jsonRaw` feedback value, in bytes (the agent's `--max-json-raw-length`).
    pub const MAX_JSON_RAW_LENGTH: usize = 1024;
    /// The agent's default `--status-sync-interval`: 10 s in upstream's code (its
    /// documentation says 30 s). Upstream advises not to go below about 5 s, which loads the
    /// managed cluster's API server.
    pub const STATUS_SYNC_INTERVAL: Duration = Duration::from_secs(10);
    /// The agent's default `--appliedmanifestwork-eviction-grace-period`.
    pub const APPLIED_MANIFEST_WORK_EVICTION_GRACE_PERIOD: Duration = Duration::from_secs(60 * 60);
    /// Condition-rule CEL cost budget for one manifest evaluation.
    pub const CONDITION_RULE_COST_BUDGET: u64 = 10_000_000;
    /// Condition-rule CEL cost limit for one expression.
    pub const CONDITION_RULE_EXPRESSION_COST_LIMIT: u64 = 1_000_000;
}
