//! Every deliberate difference from upstream OCM, in one place.
//!
//! The SDK's rule is fidelity first: names, condition types, reasons and messages, defaults
//! and quirks are upstream's. Where it behaves otherwise, it is listed here (and in the docs of
//! the item concerned), in three groups:
//!
//! * **on by default**: differences that change no outcome for input upstream handles, or that
//!   turn an upstream crash, stall or unbounded cost into a clear error;
//! * **opt-ins**: additions you switch on; with them off, behaviour is upstream's;
//! * **known gaps**: upstream behaviour not (or only approximately) reproduced.
//!
//! Paths are written out (`ocm_work::agent::AgentConfig`) because they span the crates of the
//! SDK; follow them in the docs of each crate.
//!
//! # On by default
//!
//! ## Work agent (`ocm_work::agent`)
//!
//! * Applied resources are read from informers rather than with one GET per manifest
//!   (`AgentConfig::cached_reads` turns this off). A sync whose inputs are all unchanged since
//!   its last complete, error-free pass (same work, AppliedManifestWork and resource versions,
//!   with the status read at exactly those versions) writes nothing.
//! * A ManifestWork or AppliedManifestWork that does not decode (written by a newer OCM, or by
//!   hand) is skipped, logged once per resourceVersion and reported with a Warning Event
//!   (reason `ManifestWorkDecodeFailed`); every other work keeps converging. Upstream's informer
//!   fails as a whole and syncs no work while such an object exists.
//! * Resources an apply pass created but failed to record in the AppliedManifestWork (its
//!   status write failed) are remembered by the running agent, so a work that drops them
//!   before a record succeeds still gets them deleted; upstream's agent leaves them behind.
//! * Retries after errors are bounded to seconds (`ocm_work::agent::SYNC_RETRY_MAX`,
//!   `ocm_work::cache::RETRY_BACKOFF_MAX`) where upstream backs off for minutes.
//! * Condition and feedback messages longer than the API's 32,768-byte limit are cut and end in
//!   ` ... (truncated)`; upstream writes them whole and the status write fails.
//! * CEL condition rules run under cel-go's size limits and a cost budget (`ocm_api::cel`), and
//!   jq `ignoreFields` expressions under depth, step and time limits. Deeply nested input to
//!   the JSONPath, jq and CEL parsers gets an error, never a stack overflow (tested at 10,000
//!   levels).
//!
//! ## Enum values a newer OCM may send (`ocm_api`)
//!
//! Every enum that holds a CRD string value (update strategies, feedback and condition rule
//! types, delete propagation policies, taint effects, score coordinate types, …) keeps a
//! value it does not know in its `Unknown(String)` variant and writes it back unchanged, so
//! one new value does not make a list or a watch fail; the generated CRDs list only the known
//! values. Upstream's Go strings behave the same way until a consumer looks at them; where
//! our consumers do, they act as follows:
//!
//! * the work agent reports a manifest whose update strategy has no applier as not applied
//!   (`Failed to apply manifest: no applier for the update strategy <type>`), and reports a
//!   condition rule of an unknown type as upstream does (`ConditionRuleInvalid`, `unrecognized
//!   condition rule type <type>`); an unknown delete propagation policy orphans only what the
//!   orphaning rules name, as upstream's;
//! * a feedback rule of an unknown type makes `StatusFeedbackSynced` `False` with
//!   `unrecognized feedback rule type <type>` (upstream reads nothing and reports no error);
//! * the work agent refuses an executor subject of any type but `ServiceAccount`, as upstream's
//!   agent does (`only support ServiceAccount type for the executor`);
//! * the scheduler reports an unknown score coordinate type as `PlacementMisconfigured`
//!   (`incorrect score coordinate type: <type>`; upstream treats every type but `BuiltIn` as
//!   `AddOn`), an unknown cluster set selector type with upstream's `selectorType is not
//!   right` error, and treats an unknown taint effect like upstream's string comparison (it
//!   must be tolerated).
//!
//! ## Placement (`ocm_placement`)
//!
//! * The controller reschedules every placement on any change (upstream fans events out to the
//!   affected placements; unchanged placements cause no write, so the result is the same);
//!   AddOnPlacementScore expiry triggers a reschedule at once (upstream waits for its 10-minute
//!   resync); `DecisionDelete` Events are emitted only for deletes that succeeded.
//! * Orders upstream takes from Go map iteration (clusters of equal score, for example) are
//!   deterministic.
//! * A negative `spec.numberOfClusters`, which the CRD admits, makes `PlacementMisconfigured`
//!   `True` (`Misconfigured`, `:spec.numberOfClusters must not be negative, got <n>`) and
//!   selects no cluster; upstream's scheduler panics on it and the placement never gets a
//!   status.
//!
//! ## Hub controllers (`ocm_placement`, `ocm_work::replicaset`)
//!
//! * A warning a steady-state pass would repeat (a reconcile failing the same way on every
//!   retry, an object skipped on every pass, a stalled rollout) is logged once, and again only
//!   when what it says changes (`ocm_api::repeats`); upstream's controllers log on every pass.
//!
//! ## ManifestWorkReplicaSet (`ocm_work::replicaset`)
//!
//! * A progressive rollout that cannot advance because its works report no `Progressing`
//!   condition says so in its `PlacementRolledOut` message, and the controller logs one warning
//!   naming the opt-in below. Upstream's message is empty and the rollout silently stalls.
//! * `summary.desiredTotal` is the number of clusters the placements selected (upstream never
//!   writes it).
//! * Admission closes a hole upstream leaves open: a ManifestWorkReplicaSet whose template
//!   names an executor takes the same `execute-as` permission as a ManifestWork with that
//!   executor (asked in the replica set's namespace, refused with the ManifestWork's message
//!   naming the `ManifestWorkReplicaSet`). Upstream checks no replica set executor, so a user
//!   refused the ManifestWork gets it into every selected cluster through a replica set, written
//!   by the hub controller. On by default in `ManifestWorkReplicaSet::validate` / `admit`
//!   (`ocm_api::work::executor`; `ReplicaSetAdmission::upstream()` turns it off) and on the
//!   fake hub (`ocm_testkit::HubAdmission::replica_set_executor_check(false)` turns it off).
//!
//! ## Feedback (`ocm_feedback`)
//!
//! * JSONPath parse errors also carry a byte position and the offending token; paths are
//!   compiled once; the well-known status table can be extended.
//!
//! ## CLI (`ocm-clusteradm`, examples crate)
//!
//! * Trees are sorted by name; `get works` shows per-resource conditions and feedback values;
//!   `get placements` lists every PlacementDecision slice; errors print as kubectl prints them
//!   and exit with code 1; there is no `--dry-run`.
//!
//! ## Fake API server (`ocm_testkit`)
//!
//! * Garbage collection and namespace clean-up run synchronously inside the delete, so tests
//!   need no polling; a watch from a resourceVersion the server never issued gets `410 Gone` at
//!   once (kube-apiserver waits); `continue` tokens page through the current state; field
//!   selectors accept any field path; namespaces need not exist unless strict namespaces are
//!   on; without authentication (the default) every request is served as an administrator.
//!   The crate docs list the rest.
//!
//! # Opt-ins
//!
//! * `ocm_work::replicaset::SuccessCriteria::AppliedAndAvailable`
//!   (`ocm-hub-controller --success-criteria applied-and-available`): a work with no
//!   `Progressing` condition counts as rolled out once Applied and Available at its
//!   generation, so progressive rollouts advance without a condition rule (works that carry
//!   `Progressing` are judged by upstream's rule).
//! * `ocm_work::replicaset::controller::ReplicaSetController::with_rollback` (module
//!   `ocm_work::replicaset::rollback`): ManifestWorkReplicaSet rollback as upstream's accepted
//!   proposal (enhancements #229) describes it, which upstream's controller does not implement
//!   yet. The template's revisions are kept as ControllerRevisions (pruned to
//!   `spec.revisionHistoryLimit`, default 10), works carry the
//!   `work.open-cluster-management.io/controller-hash` label, the status gets
//!   `currentRevision`, `updateRevision`, `collisionCount`, `abortedTime`, `summary.updated`
//!   and a `Progressing` condition, a `maxFailures` breach is `PlacementRolledOut=False/
//!   RolloutDegraded`, and with `rolloutStrategy.failureStrategy: AbortAll` a breach restores
//!   the current revision on every cluster at once. These spec and status fields are in our
//!   extended ManifestWorkReplicaSet CRD only (`ocm_api::crd::extended_crds`, `ocm-crdgen
//!   --extended`; `failureStrategy` not in the shared rollout strategy of other CRDs): the
//!   default CRDs are upstream's, and on a hub serving them the controller reports the
//!   pruned fields in the `OptInFieldsInstalled` condition; the revision hash is FNV-1a over canonical JSON, so its values differ from
//!   the proposal's Go hash.
//! * `ocm_work::replicaset::controller::ReplicaSetController::with_cluster_values` (module
//!   `ocm_work::replicaset::values`; `ocm-hub-controller --cluster-values`): per-cluster
//!   values in a ManifestWorkReplicaSet's manifests, which users ask upstream for
//!   (open-cluster-management-io/api#353). `{{CLUSTER_NAME}}`, `{{CLUSTER_LABEL:<key>}}` and
//!   `{{CLUSTER_CLAIM:<name>}}` in string values are resolved from each selected
//!   ManagedCluster, and the controller watches ManagedClusters so a label or claim change
//!   reaches the work. A malformed variable or a missing label or claim leaves that cluster
//!   without a (new or updated) work, and the `ClusterValuesResolved=False/
//!   ClusterValuesInvalid` condition (ours) names the cluster and the variable. With the
//!   opt-in off, manifests are copied unchanged as upstream's controller does.
//! * `ocm_work::replicaset::controller::ReplicaSetController::with_feedback_aggregation`
//!   (module `ocm_work::replicaset::feedback`; `ocm-hub-controller --feedback-aggregation`):
//!   the status-feedback values a ManifestWorkReplicaSet names in `spec.feedbackAggregation`
//!   (ours) are aggregated across its works (works being deleted left out) into
//!   `status.feedbackAggregation` (ours): per value, the number of works reporting it, counts
//!   per distinct value (at most 20) and min, max and sum of the integers. The aggregates are
//!   written only when they change and at most once per `spec.feedbackAggregation.interval`
//!   (default `1m`); the `FeedbackAggregated` condition (ours) reports an interval that does
//!   not parse. Both fields are in our extended ManifestWorkReplicaSet CRD only (see rollback
//!   above).
//! * `ocm_placement::plugins::Filter` and `ocm_placement::plugins::Prioritizer`: custom
//!   scheduler plugins (upstream's plugin set is fixed); `ScheduleResult::explain` for why a
//!   cluster was or was not chosen.
//! * `ocm_placement::Scheduler::with_topology_spread` (module `ocm_placement::spread`; give
//!   the scheduler to `PlacementController::with_scheduler`; `ocm-hub-controller` and
//!   `ocm-placement-sim --feature-gates TopologySpread=true`, a gate of ours): honours
//!   `spec.spreadPolicy.spreadConstraints`, which upstream's scheduler ignores. Selection keeps
//!   each `DoNotSchedule` constraint's skew within `maxSkew` (selecting fewer clusters if need
//!   be, and saying why in `PlacementSatisfied`) and prefers the least skew for
//!   `ScheduleAnyway`, within the prioritizers' order and `numberOfClusters`.
//! * `ocm_placement::Scheduler::with_decision_scores` (module `ocm_placement::decisions`;
//!   `--feature-gates PlacementDecisionScore=true`, a gate of ours): implements the API fields
//!   upstream's scheduler leaves unread and unwritten, as the accepted "placement score
//!   visibility" proposal describes them: `ClusterDecision.score` (the total prioritizer score,
//!   for every placement), `spec.sortBy: Score` (decisions, and the groups cut by
//!   `clustersPerDecisionGroup`, best first, ties by name), `spec.scoreRateLimit` (a change of
//!   scores or order alone is written at most once per limit, default `1m`) and
//!   `status.lastScoreUpdateTime` (when a changed score was last written). An invalid
//!   `scoreRateLimit` sets `PlacementMisconfigured` and the default is used.
//! * `ocm_placement::sig` (upstream's `SIGPlacementDecision` gate, off by default there too):
//!   SIG-Multicluster PlacementDecisions mirroring OCM's, as upstream's controller writes them.
//!   Differences: one pass reconciles every decision from watches of both kinds (a mirror left
//!   behind while the controller was off is deleted at its next start), no
//!   `SIGPlacementDecisionCreated`/`Updated` Events, and an OCM decision over 100 clusters
//!   (the SIG CRD's limit) is reported and skipped instead of failing its writes forever.
//! * `ocm_placement::profile` (upstream's `ClusterProfile` gate): SIG-Multicluster
//!   ClusterProfiles of the ManagedClusters in every namespace a Bound binding brings them to,
//!   as upstream's two registration-hub controllers write them. Differences: one controller
//!   reconciling the whole hub (it also follows a cluster's label changes, which upstream's
//!   lifecycle controller sees only at its resync), a new profile carries all three labels and
//!   gets its status in the same pass, no `ClusterProfileStatusUpdated` Event, and a claim the
//!   CRD refuses as a property (empty, too long, a repeated name) is left out and reported
//!   where upstream's whole status write fails and leaves the health condition stale.
//! * `ocm_work::apply::applier::Appliers` (given to `ocm_work::agent::WorkAgent::with_appliers`):
//!   custom appliers per update strategy or per group and kind (upstream's four appliers are
//!   fixed); the default registry holds upstream's four.
//! * `ocm_work::fanout::PlacementFanout`: one ManifestWork per decided cluster, cleaned up with
//!   a label and a finalizer on the Placement (works live in cluster namespaces, so no
//!   ownerReference is possible).
//! * `ocm_work::addon`: `TemplateAddon::strict_variables` (an unresolved `{{VARIABLE}}` is an
//!   error instead of the empty string) and `AddonManager::ensure_cluster_management_addons`
//!   (creates the ClusterManagementAddOn when missing).
//! * `ocm_feedback::lookup`, `Display`/JSON for feedback values, the builders of
//!   `ocm_api::cluster::builder`, the injectable `ocm_api::clock`: conveniences with no
//!   upstream counterpart.
//! * The `cel` feature's `lists` and `math` extensions in the shared CEL environment (upstream
//!   enables only cel-go's strings extension besides the Kubernetes libraries).
//! * `ocm_testkit`: authentication, RBAC and impersonation (`FakeClusterBuilder::authentication`),
//!   HTTPS with a fixed test CA, fault injection (`ocm_testkit::fault`).
//!
//! # Known gaps
//!
//! * CEL cost is an estimate computed by this SDK, not cel-go's exact cost model, so an
//!   expression near the limit may be accepted or rejected where upstream decides otherwise.
//! * The testkit's CRD validation rules run CEL's standard library and the strings, lists and
//!   math extensions, not the Kubernetes CEL libraries and not with kube-apiserver's cost
//!   limits.
//! * `ocm-deploy hub` grants the hub controller the permissions of its default controllers
//!   only: running it with the `SIGPlacementDecision` or `ClusterProfile` gate also needs
//!   RBAC for `placementdecisions` / `clusterprofiles` of `multicluster.x-k8s.io` (and `get`
//!   on namespaces), and `--install-crds` or `ocm-crdgen --multicluster` for their CRDs.
//! * Resource quantities (`ocm_api::k8s::quantity`) keep the values Kubernetes keeps in
//!   arbitrary precision in 127 bits: a quantity of more than about 38 significant digits is
//!   refused (the scheduler then treats the resource as absent) where Kubernetes accepts it.
//! * The addon framework has no registration (CSR) side, no Helm or Go-template factories, no
//!   cloudevents transport and no addon webhooks; the addon manager reads and writes the
//!   `v1beta1` addon API only.
