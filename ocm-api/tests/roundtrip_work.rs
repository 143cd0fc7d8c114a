//! Lossless round-trips of the work group's kinds (ManifestWork, AppliedManifestWork,
//! ManifestWorkReplicaSet): every object below deserializes into the typed struct and
//! serializes back to the same JSON, with absent optional fields left absent.
//!
//! The first part embeds every ManifestWork and ManifestWorkReplicaSet YAML example of the
//! upstream documentation in `shared/seeds` (seed 001 repeats examples of seed 000; seeds 002
//! and 003 hold `my-first-work` and a status fragment with their indentation lost, restored
//! here). Documentation examples elide parts with `...`; [`fill_elisions`] removes those
//! placeholders (or puts an empty value where a field is required) before the round trip.

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use ocm_api::cluster::v1alpha1::{RolloutStrategy, RolloutType};
use ocm_api::work::v1::{
    AppliedManifestWork, ConditionRuleType, ExecutorSubjectType, FeedbackScrapeType, FeedbackType,
    FieldValue, IgnoreFieldsCondition, ManifestWork, PropagationPolicy, UpdateStrategyType,
    ValueType,
};
use ocm_api::work::v1alpha1::{CascadeDeletionPolicy, ManifestWorkReplicaSet};

/// Deserializes `original` as `T`, serializes it back and compares.
fn roundtrip<T: DeserializeOwned + Serialize>(original: Value) -> T {
    let typed: T = serde_json::from_value(original.clone()).expect("deserialize");
    let back = serde_json::to_value(&typed).expect("serialize");
    assert_eq!(back, original);
    typed
}

/// Parses a documentation example and fills its `...` elisions.
fn seed(yaml: &str) -> Value {
    // An elision on a line of its own is not valid YAML inside a mapping: drop the line (the
    // key it belonged to, if any, is then null and dropped below).
    let yaml: String = yaml
        .lines()
        .filter(|line| line.trim() != "...")
        .map(|line| format!("{line}\n"))
        .collect();
    let mut value: Value = serde_saphyr::from_str(&yaml).expect("parse YAML");
    fill_elisions(&mut value);
    value
}

/// Replaces the documentation's `...` placeholders: fields the typed structs require get an
/// empty value, the others are dropped.
fn fill_elisions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let elided: Vec<String> = map
                .iter()
                .filter(|(_, v)| v.is_null() || v.as_str().is_some_and(|s| s.trim() == "..."))
                .map(|(k, _)| k.clone())
                .collect();
            for key in elided {
                match key.as_str() {
                    "conditions" => {
                        map.insert(key, json!([]));
                    }
                    "metadata" | "spec" => {
                        map.insert(key, json!({}));
                    }
                    "resourceMeta" => {
                        map.insert(key, json!({ "ordinal": 0 }));
                    }
                    _ => {
                        map.remove(&key);
                    }
                }
            }
            map.values_mut().for_each(fill_elisions);
        }
        Value::Array(items) => items.iter_mut().for_each(fill_elisions),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Documentation examples (shared/seeds).
// ---------------------------------------------------------------------------------------------

const MW_DEPLOYMENT: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: <target managed cluster>
  name: hello-work-demo
spec:
  workload:
    manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: hello
          namespace: default
        spec:
          selector:
            matchLabels:
              app: hello
          template:
            metadata:
              labels:
                app: hello
            spec:
              containers:
                - name: hello
                  image: quay.io/asmacdo/busybox
                  command:
                    ["sh", "-c", 'echo "Hello, Kubernetes!" && sleep 3600']
"##;

const MW_STATUS: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: ...
spec: ...
status:
  conditions:
    - lastTransitionTime: "2021-06-15T02:26:02Z"
      message: Apply manifest work complete
      reason: AppliedManifestWorkComplete
      status: "True"
      type: Applied
    - lastTransitionTime: "2021-06-15T02:26:02Z"
      message: All resources are available
      reason: ResourcesAvailable
      status: "True"
      type: Available
  resourceStatus:
    manifests:
      - conditions:
          - lastTransitionTime: "2021-06-15T02:26:02Z"
            message: Apply manifest complete
            reason: AppliedManifestComplete
            status: "True"
            type: Applied
          - lastTransitionTime: "2021-06-15T02:26:02Z"
            message: Resource is available
            reason: ResourceAvailable
            status: "True"
            type: Available
        resourceMeta:
          group: apps
          kind: Deployment
          name: hello
          namespace: default
          ordinal: 0
          resource: deployments
          version: v1
"##;

const MW_FEEDBACK_RULES: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: ...
spec:
  workload: ...
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: hello
      feedbackRules:
        - type: WellKnownStatus
        - type: JSONPaths
          jsonPaths:
            - name: isAvailable
              path: '.status.conditions[?(@.type=="Available")].status'
"##;

const MW_FEEDBACK_STATUS: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: ...
spec: ...
status:
  resourceStatus:
    manifests:
    - conditions: ...
      resourceMeta: ...
      statusFeedback:
        values:
        - fieldValue:
            integer: 1
            type: Integer
          name: ReadyReplicas
        - fieldValue:
            integer: 1
            type: Integer
          name: Replicas
        - fieldValue:
            integer: 1
            type: Integer
          name: AvailableReplicas
        - fieldValue:
            string: "True"
            type: String
          name: isAvailable
"##;

const MW_DELETE_ORPHAN: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: ...
spec:
  workload: ...
  deleteOption:
    propagationPolicy: Orphan
"##;

const MW_SELECTIVELY_ORPHAN: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  name: selective-delete-work
spec:
  workload: ...
  deleteOption:
    propagationPolicy: SelectivelyOrphan
    selectivelyOrphans:
      orphaningRules:
      - group: ""
        resource: services
        namespace: default
        name: helloworld
"##;

const MW_SSA: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: <target managed cluster>
  name: hello-work-demo
spec:
  workload: ...
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: hello
      updateStrategy:
        type: ServerSideApply
"##;

const MW_SSA_FIELD_MANAGER: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: <target managed cluster>
  name: hello-work-replica-patch
spec:
  workload:
    manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: hello
          namespace: default
        spec:
          replicas: 3
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: hello
      updateStrategy:
        type: ServerSideApply
        serverSideApply:
          force: true
          fieldManager: work-agent-another
"##;

const MW_AGGREGATED_CLUSTERROLE: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: permission-set
spec:
  workload:
    manifests:
      - apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: open-cluster-management:klusterlet-work:my-role
          labels:
            open-cluster-management.io/aggregate-to-work: "true"  # with this label, the clusterRole will be selected to aggregate
        rules:
          # Allow agent to managed machines
          - apiGroups: ["cluster.x-k8s.io"]
            resources: ["machines"]
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
"##;

const MW_CLUSTERROLE_AND_BINDING: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: permission-set
spec:
  workload:
    manifests:
      - apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: open-cluster-management:klusterlet-work:my-role
        rules:
          # Allow agent to managed machines
          - apiGroups: ["cluster.x-k8s.io"]
            resources: ["machines"]
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
      - apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: open-cluster-management:klusterlet-work:my-binding
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: ClusterRole
          name: open-cluster-management:klusterlet-work:my-role
        subjects:
          - kind: ServiceAccount
            name: klusterlet-work-sa
            namespace: open-cluster-management-agent
"##;

const MW_JOB: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: exmaple-job
spec:
  workload:
    manifests:
      - apiVersion: batch/v1
        kind: Job
        metadata:
          name: pi
          namespace: default
        spec:
          template:
            spec:
              containers:
              - name: pi
                image: perl:5.34.0
                command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
              restartPolicy: Never
          backoffLimit: 4
"##;

const MW_JOB_MANUAL_SELECTOR: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: exmaple-job-1
spec:
  workload:
    manifests:
      - apiVersion: batch/v1
        kind: Job
        metadata:
          name: pi
          namespace: default
        spec:
          manualSelector: true
          selector:
            matchLabels:
              job: pi
          template:
            metadata:
              labels:
                job: pi
            spec:
              containers:
              - name: pi
                image: perl:5.34.0
                command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
              restartPolicy: Never
          backoffLimit: 4
"##;

const MW_JOB_SSA: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: exmaple-job
spec:
  manifestConfigs:
    - resourceIdentifier:
        group: batch
        resource: jobs
        namespace: default
        name: pi
      updateStrategy:
        type: ServerSideApply
  workload:
    manifests:
      - apiVersion: batch/v1
        kind: Job
        metadata:
          name: pi
          namespace: default
        spec:
          template:
            spec:
              containers:
              - name: pi
                image: perl:5.34.0
                command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
              restartPolicy: Never
          backoffLimit: 4
"##;

const MW_EXECUTOR: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: example-manifestwork
spec:
  executor:
    subject:
      type: ServiceAccount
      serviceAccount:
        namespace: default
        name: executor1
  workload:
    manifests:
      - apiVersion: v1
        data:
          a: b
        kind: ConfigMap
        metadata:
          namespace: default
          name: test
"##;

const MWRS_CRONJOB: &str = r##"apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: mwrset-cronjob
  namespace: ocm-ns
spec:
  placementRefs:
    - name: placement-rollout-all # Name of a created Placement
      rolloutStrategy:
        rolloutType: All
    - name: placement-rollout-progressive # Name of a created Placement
      rolloutStrategy:
        rolloutType: Progressive
        progressive:
          minSuccessTime: 5m
          progressDeadline: 10m
          maxFailures: 5%
          mandatoryDecisionGroups:
          - groupName: "prod-canary-west"
          - groupName: "prod-canary-east"
    - name: placement-rollout-progressive-per-group # Name of a created Placement
      rolloutStrategy:
        rolloutType: ProgressivePerGroup
        progressivePerGroup:
          progressDeadline: 10m
          maxFailures: 2
  manifestWorkTemplate:
    deleteOption:
      propagationPolicy: SelectivelyOrphan
      selectivelyOrphans:
        orphaningRules:
          - group: ''
            name: ocm-ns
            namespace: ''
            resource: Namespace
    manifestConfigs:
      - feedbackRules:
          - jsonPaths:
              - name: lastScheduleTime
                path: .status.lastScheduleTime
              - name: lastSuccessfulTime
                path: .status.lastSuccessfulTime
            type: JSONPaths
        resourceIdentifier:
          group: batch
          name: sync-cronjob
          namespace: ocm-ns
          resource: cronjobs
    workload:
      manifests:
        - kind: Namespace
          apiVersion: v1
          metadata:
            name: ocm-ns
        - kind: CronJob
          apiVersion: batch/v1
          metadata:
            name: sync-cronjob
            namespace: ocm-ns
          spec:
            schedule: '* * * * *'
            concurrencyPolicy: Allow
            suspend: false
            jobTemplate:
              spec:
                backoffLimit: 2
                template:
                  spec:
                    containers:
                      - name: hello
                        image: 'quay.io/prometheus/busybox:latest'
                        args:
                          - /bin/sh
                          - '-c'
                          - date; echo Hello from the Kubernetes cluster
"##;

const MWRS_STATUS: &str = r##"apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: mwrset-cronjob
  namespace: ocm-ns
spec:
  placementRefs:
    - name: placement-rollout-all
      ...
    - name: placement-rollout-progressive
      ...
    - name: placement-rollout-progressive-per-group
      ...
  manifestWorkTemplate:
     ...
status:
 conditions:
   - lastTransitionTime: '2023-04-27T02:30:54Z'
     message: ''
     reason: AsExpected
     status: 'True'
     type: PlacementVerified
   - lastTransitionTime: '2023-04-27T02:30:54Z'
     message: ''
     reason: Progressing
     status: 'False'
     type: PlacementRolledOut
   - lastTransitionTime: '2023-04-27T02:30:54Z'
     message: ''
     reason: AsExpected
     status: 'True'
     type: ManifestworkApplied
 placementSummary:
 - name: placement-rollout-all
   availableDecisionGroups: 1 (10 / 10 clusters applied)
   summary:
     applied: 10
     available: 10
     progressing: 0
     degraded: 0
     total: 10
 - name: placement-rollout-progressive
   availableDecisionGroups: 3 (20 / 30 clusters applied)
   summary:
     applied: 20
     available: 20
     progressing: 0
     degraded: 0
     total: 20
 - name: placement-rollout-progressive-per-group
   availableDecisionGroups: 4 (15 / 20 clusters applied)
   summary:
     applied: 15
     available: 15
     progressing: 0
     degraded: 0
     total: 15
 summary:
   applied: 45
   available: 45
   progressing: 0
   degraded: 0
   total: 45
"##;

/// `my-first-work` from seeds 002 and 003 (indentation restored).
const MW_MY_FIRST_WORK: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: my-first-work
spec:
  workload:
    manifests:
    - apiVersion: v1
      kind: ServiceAccount
      metadata:
        namespace: default
        name: my-sa
    - apiVersion: apps/v1
      kind: Deployment
      metadata:
        namespace: default
        name: nginx-deployment
        labels:
          app: nginx
      spec:
        replicas: 3
        selector:
          matchLabels:
            app: nginx
        template:
          metadata:
            labels:
              app: nginx
          spec:
            serviceAccountName: my-sa
            containers:
            - name: nginx
              image: nginx:1.14.2
              ports:
              - containerPort: 80
"##;

/// The per-resource status fragment of seeds 002 and 003 (indentation restored), as the
/// `status` of a ManifestWork.
const MW_MY_FIRST_WORK_STATUS: &str = r##"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: my-first-work
spec: {}
status:
  resourceStatus:
    manifests:
    - conditions:
      - lastTransitionTime: "2021-11-25T10:17:43Z"
        message: Apply manifest complete
        reason: AppliedManifestComplete
        status: "True"
        type: Applied
      - lastTransitionTime: "2021-11-25T10:17:43Z"
        message: Resource is available
        reason: ResourceAvailable
        status: "True"
        type: Available
      resourceMeta:
        group: apps
        kind: Deployment
        name: nginx-deployment
        namespace: default
        ordinal: 1
        resource: deployments
        version: v1
"##;

#[test]
fn every_documented_manifest_work_round_trips() {
    for (name, yaml) in [
        ("MW_DEPLOYMENT", MW_DEPLOYMENT),
        ("MW_STATUS", MW_STATUS),
        ("MW_FEEDBACK_RULES", MW_FEEDBACK_RULES),
        ("MW_FEEDBACK_STATUS", MW_FEEDBACK_STATUS),
        ("MW_DELETE_ORPHAN", MW_DELETE_ORPHAN),
        ("MW_SELECTIVELY_ORPHAN", MW_SELECTIVELY_ORPHAN),
        ("MW_SSA", MW_SSA),
        ("MW_SSA_FIELD_MANAGER", MW_SSA_FIELD_MANAGER),
        ("MW_AGGREGATED_CLUSTERROLE", MW_AGGREGATED_CLUSTERROLE),
        ("MW_CLUSTERROLE_AND_BINDING", MW_CLUSTERROLE_AND_BINDING),
        ("MW_JOB", MW_JOB),
        ("MW_JOB_MANUAL_SELECTOR", MW_JOB_MANUAL_SELECTOR),
        ("MW_JOB_SSA", MW_JOB_SSA),
        ("MW_EXECUTOR", MW_EXECUTOR),
        ("MW_MY_FIRST_WORK", MW_MY_FIRST_WORK),
        ("MW_MY_FIRST_WORK_STATUS", MW_MY_FIRST_WORK_STATUS),
    ] {
        let original = seed(yaml);
        let typed: ManifestWork =
            serde_json::from_value(original.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = serde_json::to_value(&typed).expect("serialize");
        assert_eq!(back, original, "{name}");
    }
}

#[test]
fn documented_examples_read_as_typed_values() {
    let work: ManifestWork = roundtrip(seed(MW_FEEDBACK_STATUS));
    let status = work.status.expect("status");
    let feedback = status.manifests()[0]
        .status_feedbacks
        .as_ref()
        .expect("feedback");
    assert_eq!(feedback.get("ReadyReplicas"), Some(&FieldValue::integer(1)));
    assert_eq!(
        feedback.get("isAvailable"),
        Some(&FieldValue::string("True"))
    );
    assert_eq!(feedback.values().len(), 4);

    let work: ManifestWork = roundtrip(seed(MW_FEEDBACK_RULES));
    let configs = work.spec.manifest_configs.expect("configs");
    let rules = configs[0].feedback_rules.as_ref().expect("rules");
    assert_eq!(rules[0].type_, FeedbackType::WellKnownStatus);
    assert_eq!(rules[1].type_, FeedbackType::JsonPaths);
    let paths = rules[1].json_paths.as_ref().expect("paths");
    assert_eq!(
        paths[0].path,
        r#".status.conditions[?(@.type=="Available")].status"#
    );

    let work: ManifestWork = roundtrip(seed(MW_SELECTIVELY_ORPHAN));
    let delete = work.spec.delete_option.expect("deleteOption");
    assert_eq!(
        delete.propagation_policy,
        Some(PropagationPolicy::SelectivelyOrphan)
    );
    let rule = &delete
        .selectively_orphan
        .expect("selectivelyOrphans")
        .orphaning_rules
        .expect("rules")[0];
    // The empty core group is kept as written.
    assert_eq!(rule.group.as_deref(), Some(""));
    assert_eq!(rule.resource, "services");

    let work: ManifestWork = roundtrip(seed(MW_EXECUTOR));
    let subject = work.spec.executor.and_then(|e| e.subject).expect("subject");
    assert_eq!(subject.type_, ExecutorSubjectType::ServiceAccount);
    assert_eq!(subject.service_account.expect("sa").name, "executor1");

    let work: ManifestWork = roundtrip(seed(MW_MY_FIRST_WORK));
    let kinds: Vec<_> = work.manifests().iter().filter_map(|m| m.kind()).collect();
    assert_eq!(kinds, ["ServiceAccount", "Deployment"]);
    work.validate().expect("valid");
}

#[test]
fn documented_replica_set_with_status_round_trips() {
    let rs: ManifestWorkReplicaSet = roundtrip(seed(MWRS_STATUS));
    let status = rs.status.expect("status");
    assert_eq!(status.summary.as_ref().and_then(|s| s.applied), Some(45));
    assert_eq!(
        status
            .placements_summary
            .as_ref()
            .expect("placements")
            .len(),
        3
    );
    assert_eq!(
        status
            .condition("PlacementRolledOut")
            .map(|c| c.reason.as_str()),
        Some("Progressing")
    );
}

/// The documented ManifestWorkReplicaSet spells the strategy field `rolloutType`; the real
/// field is `type`, so the API server prunes `rolloutType` (the schema preserves no unknown
/// fields). Deserializing drops it in the same way; everything else round-trips.
#[test]
fn documented_replica_set_round_trips_as_the_api_server_stores_it() {
    let mut stored = seed(MWRS_CRONJOB);
    for placement in stored["spec"]["placementRefs"]
        .as_array_mut()
        .expect("refs")
    {
        placement["rolloutStrategy"]
            .as_object_mut()
            .expect("strategy")
            .remove("rolloutType");
    }
    let original: ManifestWorkReplicaSet =
        serde_json::from_value(seed(MWRS_CRONJOB)).expect("deserialize");
    assert_eq!(serde_json::to_value(&original).expect("serialize"), stored);

    let rs: ManifestWorkReplicaSet = roundtrip(stored);
    let refs = &rs.spec.placement_refs;
    assert_eq!(refs.len(), 3);
    let strategy = refs[1].rollout_strategy.as_ref().expect("strategy");
    // Without `type` the strategy in effect is `All`, as upstream defaults it.
    assert_eq!(strategy.rollout_type(), RolloutType::All);
    assert_eq!(rs.manifests().len(), 2);
    assert_eq!(rs.spec.cascade_deletion_policy, None);
    rs.validate().expect("valid");
}

// ---------------------------------------------------------------------------------------------
// Every field.
// ---------------------------------------------------------------------------------------------

fn condition(type_: &str, status: &str, reason: &str, generation: Option<i64>) -> Value {
    let mut c = json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": "",
        "lastTransitionTime": "2026-01-02T03:04:05Z",
    });
    if let Some(g) = generation {
        c["observedGeneration"] = json!(g);
    }
    c
}

fn full_spec() -> Value {
    json!({
        "workload": { "manifests": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": { "name": "web", "namespace": "default", "labels": { "app": "web" } },
                "spec": {
                    "replicas": 2,
                    "selector": { "matchLabels": { "app": "web" } },
                    "template": {
                        "metadata": { "labels": { "app": "web" } },
                        "spec": { "containers": [{ "name": "web", "image": "nginx:1.27", "resources": {} }] }
                    }
                }
            },
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": { "name": "cfg", "namespace": "default" },
                "data": { "a": "1", "float": "1.5" }
            },
            {
                "apiVersion": "example.com/v1alpha1",
                "kind": "Widget",
                "metadata": { "name": "w" },
                "spec": { "unknownToUs": { "nested": [1, 2.5, true, null, "x"] }, "empty": {} }
            }
        ]},
        "deleteOption": {
            "propagationPolicy": "SelectivelyOrphan",
            "selectivelyOrphans": { "orphaningRules": [
                { "group": "", "resource": "configmaps", "namespace": "default", "name": "cfg" },
                { "resource": "widgets", "name": "w" }
            ]},
            "ttlSecondsAfterFinished": 3600
        },
        "manifestConfigs": [
            {
                "resourceIdentifier": { "group": "apps", "resource": "deployments", "namespace": "*", "name": "web-*" },
                "feedbackRules": [
                    { "type": "WellKnownStatus" },
                    { "type": "JSONPaths", "jsonPaths": [
                        { "name": "ready", "version": "v1", "path": ".status.readyReplicas" },
                        { "name": "conditions", "path": ".status.conditions" }
                    ]}
                ],
                "updateStrategy": {
                    "type": "ServerSideApply",
                    "serverSideApply": {
                        "force": false,
                        "fieldManager": "work-agent-web",
                        "ignoreFields": [
                            {
                                "condition": "OnSpokeChange",
                                "jsonPaths": [".spec.replicas"],
                                "jsonPointers": ["/metadata/annotations/example.com~1note"],
                                "jqPathExpressions": [".spec.template.metadata.annotations"]
                            },
                            { "condition": "OnSpokePresent", "jsonPaths": [".metadata.labels.team"] }
                        ]
                    }
                },
                "conditionRules": [
                    {
                        "condition": "Complete",
                        "type": "CEL",
                        "celExpressions": ["object.status.readyReplicas == object.spec.replicas"],
                        "message": "all replicas ready",
                        "messageExpression": "'ready: ' + string(object.status.readyReplicas)"
                    },
                    { "condition": "Available", "type": "WellKnownConditions" }
                ],
                "feedbackScrapeType": "Watch"
            },
            {
                "resourceIdentifier": { "group": "", "resource": "configmaps", "namespace": "default", "name": "cfg" },
                "updateStrategy": { "type": "CreateOnly" },
                "feedbackScrapeType": "Poll"
            },
            {
                "resourceIdentifier": { "group": "example.com", "resource": "widgets", "name": "w" },
                "updateStrategy": { "type": "ReadOnly" }
            },
            {
                "resourceIdentifier": { "resource": "secrets", "namespace": "default", "name": "s" },
                "updateStrategy": { "type": "Update" }
            }
        ],
        "executor": { "subject": {
            "type": "ServiceAccount",
            "serviceAccount": { "namespace": "default", "name": "deployer" }
        }}
    })
}

fn full_status() -> Value {
    json!({
        "conditions": [
            condition("Applied", "True", "AppliedManifestWorkComplete", Some(3)),
            condition("Available", "True", "ResourcesAvailable", Some(3)),
            condition("Complete", "False", "ConditionRulesAggregated", Some(3))
        ],
        "resourceStatus": { "manifests": [
            {
                "resourceMeta": {
                    "ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                    "resource": "deployments", "name": "web", "namespace": "default"
                },
                "statusFeedback": { "values": [
                    { "name": "ready", "fieldValue": { "type": "Integer", "integer": 2 } },
                    { "name": "phase", "fieldValue": { "type": "String", "string": "Running" } },
                    { "name": "paused", "fieldValue": { "type": "Boolean", "boolean": false } },
                    { "name": "conditions", "fieldValue": { "type": "JsonRaw", "jsonRaw": "[{\"type\":\"Available\"}]" } }
                ]},
                "conditions": [
                    condition("Applied", "True", "AppliedManifestComplete", Some(3)),
                    condition("Available", "True", "ResourceAvailable", None),
                    condition("StatusFeedbackSynced", "True", "StatusFeedbackSynced", None)
                ]
            },
            {
                "resourceMeta": {
                    "ordinal": 1, "group": "", "version": "v1", "kind": "ConfigMap",
                    "resource": "configmaps", "name": "cfg", "namespace": "default"
                },
                "conditions": []
            },
            {
                "resourceMeta": { "ordinal": 2 },
                "statusFeedback": {},
                "conditions": [condition("Applied", "False", "AppliedManifestFailed", Some(3))]
            }
        ]}
    })
}

#[test]
fn manifest_work_with_every_field_round_trips() {
    let work: ManifestWork = roundtrip(json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {
            "name": "web",
            "namespace": "cluster1",
            "labels": { "app": "web" },
            "annotations": { "example.com/owner": "team-a" },
            "finalizers": ["cluster.open-cluster-management.io/manifest-work-cleanup"],
            "generation": 3,
            "resourceVersion": "12345",
            "uid": "0b0c4a57-9f5c-4c16-9d44-1f4f5c2c7d10",
            "creationTimestamp": "2026-01-02T03:04:05Z"
        },
        "spec": full_spec(),
        "status": full_status()
    }));

    let configs = work.spec.manifest_configs.as_deref().expect("configs");
    let ssa = configs[0].update_strategy.as_ref().expect("strategy");
    assert_eq!(ssa.type_, UpdateStrategyType::ServerSideApply);
    let ignore = ssa
        .server_side_apply
        .as_ref()
        .and_then(|s| s.ignore_fields.as_deref())
        .expect("ignore");
    assert_eq!(ignore[0].condition, IgnoreFieldsCondition::OnSpokeChange);
    let rules = configs[0].condition_rules.as_deref().expect("rules");
    assert_eq!(rules[0].type_, ConditionRuleType::Cel);
    assert_eq!(
        configs[0].feedback_scrape_type,
        Some(FeedbackScrapeType::Watch)
    );
    assert_eq!(work.manifests()[2].group(), Some("example.com"));
    let status = work.status.as_ref().expect("status");
    let values = status.manifests()[0]
        .status_feedbacks
        .as_ref()
        .expect("feedback")
        .values();
    let types: Vec<_> = values.iter().map(|v| v.field_value.type_.clone()).collect();
    assert_eq!(
        types,
        [
            ValueType::Integer,
            ValueType::String,
            ValueType::Boolean,
            ValueType::JsonRaw
        ]
    );
    assert!(status.condition("Applied").is_some());
    work.validate().expect("valid");
}

#[test]
fn minimal_objects_stay_minimal() {
    roundtrip::<ManifestWork>(json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": { "name": "empty", "namespace": "cluster1" },
        "spec": {}
    }));
    roundtrip::<ManifestWork>(json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": { "name": "nearly-empty", "namespace": "cluster1" },
        "spec": {
            "workload": {},
            "deleteOption": {},
            "manifestConfigs": [{ "resourceIdentifier": { "resource": "configmaps", "name": "a" } }],
            "executor": {}
        },
        "status": { "resourceStatus": {} }
    }));
    roundtrip::<ManifestWorkReplicaSet>(json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1",
        "kind": "ManifestWorkReplicaSet",
        "metadata": { "name": "empty", "namespace": "apps" },
        "spec": { "placementRefs": [{ "name": "p" }] }
    }));
}

#[test]
fn manifest_work_replica_set_with_every_field_round_trips() {
    let summary = |n: i64| {
        json!({
            "total": n, "progressing": 0, "available": n, "degraded": 0, "applied": n,
            "desiredTotal": 0, "updated": 0
        })
    };
    let rs: ManifestWorkReplicaSet = roundtrip(json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1",
        "kind": "ManifestWorkReplicaSet",
        "metadata": {
            "name": "web",
            "namespace": "apps",
            "finalizers": ["work.open-cluster-management.io/manifest-work-cleanup"],
            "generation": 2
        },
        "spec": {
            "manifestWorkTemplate": full_spec(),
            "placementRefs": [
                {
                    "name": "all",
                    "rolloutStrategy": {
                        "type": "All",
                        "all": { "minSuccessTime": "0", "progressDeadline": "None", "maxFailures": 0 }
                    }
                },
                {
                    "name": "progressive",
                    "rolloutStrategy": {
                        "type": "Progressive",
                        "progressive": {
                            "minSuccessTime": "5m",
                            "progressDeadline": "10m",
                            "maxFailures": "5%",
                            "mandatoryDecisionGroups": [
                                { "groupName": "canary" },
                                { "groupIndex": 1 },
                                { "groupName": "both", "groupIndex": 2 }
                            ],
                            "maxConcurrency": "25%"
                        }
                    }
                },
                {
                    "name": "per-group",
                    "rolloutStrategy": {
                        "type": "ProgressivePerGroup",
                        "progressivePerGroup": {
                            "progressDeadline": "1h",
                            "maxFailures": 2,
                            "mandatoryDecisionGroups": [{ "groupName": "canary" }]
                        }
                    }
                },
                { "name": "defaults" }
            ],
            "cascadeDeletionPolicy": "Foreground"
        },
        "status": {
            "conditions": [
                condition("PlacementVerified", "True", "AsExpected", Some(2)),
                condition("PlacementRolledOut", "False", "Progressing", Some(2)),
                condition("ManifestworkApplied", "True", "AsExpected", Some(2))
            ],
            "summary": summary(6),
            "placementSummary": [
                { "name": "all", "availableDecisionGroups": "1 (3 / 3 clusters applied)", "summary": summary(3) },
                { "name": "progressive", "availableDecisionGroups": "1 (2 / 4 clusters applied)", "summary": summary(2) },
                { "name": "per-group", "availableDecisionGroups": "0 (1 / 2 clusters applied)", "summary": summary(1) },
                { "name": "defaults" }
            ]
        }
    }));
    assert_eq!(
        rs.spec.cascade_deletion_policy,
        Some(CascadeDeletionPolicy::Foreground)
    );
    let strategy: &RolloutStrategy = rs.spec.placement_refs[1]
        .rollout_strategy
        .as_ref()
        .expect("strategy");
    assert_eq!(strategy.rollout_type(), RolloutType::Progressive);
    assert_eq!(strategy.mandatory_decision_groups().len(), 3);
    assert_eq!(rs.spec.placement_refs[3].rollout_strategy, None);
    rs.validate().expect("valid");
}

#[test]
fn applied_manifest_work_round_trips() {
    roundtrip::<AppliedManifestWork>(json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "AppliedManifestWork",
        "metadata": {
            "name": "ed59251487ad4e4465fa2990b36a1cc398b83e63b59fa16b83591f5afdc3dd6d-my-first-work",
            "finalizers": ["cluster.open-cluster-management.io/applied-manifest-work-cleanup"]
        },
        "spec": {
            "hubHash": "ed59251487ad4e4465fa2990b36a1cc398b83e63b59fa16b83591f5afdc3dd6d",
            "agentID": "cluster1-agent",
            "manifestWorkName": "my-first-work"
        },
        "status": {
            "appliedResources": [
                { "group": "", "version": "v1", "resource": "serviceaccounts", "namespace": "default", "name": "my-sa", "uid": "6c1b3f7e-1f2a-4c55-9a4c-0d6a2b9e8f01" },
                { "group": "apps", "version": "v1", "resource": "deployments", "namespace": "default", "name": "nginx-deployment", "uid": "b2f0c4d2-5e6a-47e1-8f3b-2a9d7c1e4b55" },
                { "version": "v1", "resource": "namespaces", "name": "apps" }
            ],
            "evictionStartTime": "2026-01-02T03:04:05Z"
        }
    }));
}

/// An enum value a newer OCM may send is kept (one new value must not break a list or a
/// watch) and written back unchanged; a value of the wrong JSON type is still an error.
#[test]
fn unknown_enum_values_are_kept_and_round_trip() {
    use ocm_api::work::v1::{ManifestWorkSpec, PropagationPolicy};
    let mut spec = full_spec();
    spec["deleteOption"]["propagationPolicy"] = json!("Background");
    let decoded = serde_json::from_value::<ManifestWorkSpec>(spec.clone()).unwrap();
    let policy = decoded
        .delete_option
        .as_ref()
        .and_then(|d| d.propagation_policy.clone())
        .unwrap();
    assert_eq!(policy, PropagationPolicy::Unknown("Background".into()));
    assert_eq!(serde_json::to_value(&decoded).unwrap(), spec);
    spec["deleteOption"]["propagationPolicy"] = json!(3);
    assert!(serde_json::from_value::<ManifestWorkSpec>(spec).is_err());
}

// ---------------------------------------------------------------------------------------------
// Any combination of present and absent fields.
// ---------------------------------------------------------------------------------------------

mod generated {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::roundtrip;
    use ocm_api::work::v1::ManifestWork;
    use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;

    /// A JSON object with the fields that are present.
    fn object(fields: Vec<(&str, Option<Value>)>) -> Value {
        let map: Map<String, Value> = fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect();
        Value::Object(map)
    }

    fn text() -> impl Strategy<Value = Value> {
        "[a-z*.-]{0,8}".prop_map(Value::from)
    }

    fn list<S: Strategy<Value = Value>>(item: S) -> impl Strategy<Value = Value> {
        prop::collection::vec(item, 0..3).prop_map(Value::from)
    }

    fn one_of(values: &'static [&'static str]) -> impl Strategy<Value = Value> {
        prop::sample::select(values).prop_map(Value::from)
    }

    fn resource_identifier() -> impl Strategy<Value = Value> {
        (
            prop::option::of(text()),
            text(),
            text(),
            prop::option::of(text()),
        )
            .prop_map(|(group, resource, name, namespace)| {
                object(vec![
                    ("group", group),
                    ("resource", Some(resource)),
                    ("name", Some(name)),
                    ("namespace", namespace),
                ])
            })
    }

    fn feedback_rule() -> impl Strategy<Value = Value> {
        let path = (text(), prop::option::of(text()), text()).prop_map(|(name, version, path)| {
            object(vec![
                ("name", Some(name)),
                ("version", version),
                ("path", Some(path)),
            ])
        });
        (
            one_of(&["WellKnownStatus", "JSONPaths"]),
            prop::option::of(list(path)),
        )
            .prop_map(|(t, paths)| object(vec![("type", Some(t)), ("jsonPaths", paths)]))
    }

    fn update_strategy() -> impl Strategy<Value = Value> {
        let ignore = (
            one_of(&["OnSpokePresent", "OnSpokeChange"]),
            prop::option::of(list(text())),
            prop::option::of(list(text())),
            prop::option::of(list(text())),
        )
            .prop_map(|(condition, paths, pointers, jq)| {
                object(vec![
                    ("condition", Some(condition)),
                    ("jsonPaths", paths),
                    ("jsonPointers", pointers),
                    ("jqPathExpressions", jq),
                ])
            });
        let ssa = (
            prop::option::of(any::<bool>().prop_map(Value::from)),
            prop::option::of(text()),
            prop::option::of(list(ignore)),
        )
            .prop_map(|(force, manager, ignore)| {
                object(vec![
                    ("force", force),
                    ("fieldManager", manager),
                    ("ignoreFields", ignore),
                ])
            });
        (
            one_of(&["Update", "CreateOnly", "ServerSideApply", "ReadOnly"]),
            prop::option::of(ssa),
        )
            .prop_map(|(t, ssa)| object(vec![("type", Some(t)), ("serverSideApply", ssa)]))
    }

    fn condition_rule() -> impl Strategy<Value = Value> {
        (
            text(),
            one_of(&["WellKnownConditions", "CEL"]),
            prop::option::of(list(text())),
            prop::option::of(text()),
            prop::option::of(text()),
        )
            .prop_map(|(condition, t, cel, message, expr)| {
                object(vec![
                    ("condition", Some(condition)),
                    ("type", Some(t)),
                    ("celExpressions", cel),
                    ("message", message),
                    ("messageExpression", expr),
                ])
            })
    }

    fn manifest_config() -> impl Strategy<Value = Value> {
        (
            resource_identifier(),
            prop::option::of(list(feedback_rule())),
            prop::option::of(update_strategy()),
            prop::option::of(list(condition_rule())),
            prop::option::of(one_of(&["Poll", "Watch"])),
        )
            .prop_map(|(id, feedback, update, conditions, scrape)| {
                object(vec![
                    ("resourceIdentifier", Some(id)),
                    ("feedbackRules", feedback),
                    ("updateStrategy", update),
                    ("conditionRules", conditions),
                    ("feedbackScrapeType", scrape),
                ])
            })
    }

    fn spec() -> impl Strategy<Value = Value> {
        let manifest = (text(), text()).prop_map(|(name, value)| {
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": { "name": name },
                "data": { "k": value },
            })
        });
        let workload = prop::option::of(list(manifest))
            .prop_map(|manifests| object(vec![("manifests", manifests)]));
        let delete = (
            prop::option::of(one_of(&["Foreground", "Orphan", "SelectivelyOrphan"])),
            prop::option::of(
                prop::option::of(list(resource_identifier()))
                    .prop_map(|rules| object(vec![("orphaningRules", rules)])),
            ),
            prop::option::of(any::<i64>().prop_map(Value::from)),
        )
            .prop_map(|(policy, orphans, ttl)| {
                object(vec![
                    ("propagationPolicy", policy),
                    ("selectivelyOrphans", orphans),
                    ("ttlSecondsAfterFinished", ttl),
                ])
            });
        let service_account = (text(), text())
            .prop_map(|(namespace, name)| json!({ "namespace": namespace, "name": name }));
        let executor = prop::option::of(prop::option::of(service_account).prop_map(|sa| {
            object(vec![
                ("type", Some(json!("ServiceAccount"))),
                ("serviceAccount", sa),
            ])
        }))
        .prop_map(|subject| object(vec![("subject", subject)]));
        (
            prop::option::of(workload),
            prop::option::of(delete),
            prop::option::of(list(manifest_config())),
            prop::option::of(executor),
        )
            .prop_map(|(workload, delete, configs, executor)| {
                object(vec![
                    ("workload", workload),
                    ("deleteOption", delete),
                    ("manifestConfigs", configs),
                    ("executor", executor),
                ])
            })
    }

    fn field_value() -> impl Strategy<Value = Value> {
        (
            one_of(&["Integer", "String", "Boolean", "JsonRaw"]),
            prop::option::of(any::<i64>().prop_map(Value::from)),
            prop::option::of(text()),
            prop::option::of(any::<bool>().prop_map(Value::from)),
            prop::option::of(text()),
        )
            .prop_map(|(t, integer, string, boolean, raw)| {
                object(vec![
                    ("type", Some(t)),
                    ("integer", integer),
                    ("string", string),
                    ("boolean", boolean),
                    ("jsonRaw", raw),
                ])
            })
    }

    fn status() -> impl Strategy<Value = Value> {
        let meta = (
            any::<i32>(),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
        )
            .prop_map(|(ordinal, group, kind, namespace)| {
                object(vec![
                    ("ordinal", Some(ordinal.into())),
                    ("group", group),
                    ("version", Some(json!("v1"))),
                    ("kind", kind),
                    ("namespace", namespace),
                ])
            });
        let value = (text(), field_value())
            .prop_map(|(name, value)| json!({ "name": name, "fieldValue": value }));
        let feedback =
            prop::option::of(list(value)).prop_map(|values| object(vec![("values", values)]));
        let manifest = (meta, prop::option::of(feedback)).prop_map(|(meta, feedback)| {
            object(vec![
                ("resourceMeta", Some(meta)),
                ("statusFeedback", feedback),
                ("conditions", Some(json!([]))),
            ])
        });
        let resource_status = prop::option::of(list(manifest))
            .prop_map(|manifests| object(vec![("manifests", manifests)]));
        prop::option::of(resource_status).prop_map(|rs| object(vec![("resourceStatus", rs)]))
    }

    fn summary() -> impl Strategy<Value = Value> {
        prop::collection::vec(prop::option::of(0i64..1000), 7).prop_map(|counts| {
            let keys = [
                "total",
                "progressing",
                "available",
                "degraded",
                "applied",
                "desiredTotal",
                "updated",
            ];
            object(
                keys.iter()
                    .zip(counts)
                    .map(|(k, v)| (*k, v.map(Value::from)))
                    .collect(),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn any_manifest_work_round_trips(spec in spec(), status in prop::option::of(status())) {
            roundtrip::<ManifestWork>(object(vec![
                ("apiVersion", Some(json!("work.open-cluster-management.io/v1"))),
                ("kind", Some(json!("ManifestWork"))),
                ("metadata", Some(json!({ "name": "w", "namespace": "c" }))),
                ("spec", Some(spec)),
                ("status", status),
            ]));
        }

        #[test]
        fn any_manifest_work_replica_set_round_trips(
            template in prop::option::of(spec()),
            policy in prop::option::of(one_of(&["Background", "Foreground"])),
            summary in prop::option::of(summary()),
            placements in prop::option::of(list(
                (prop::option::of(text()), prop::option::of(text()), prop::option::of(summary()))
                    .prop_map(|(name, groups, summary)| object(vec![
                        ("name", name),
                        ("availableDecisionGroups", groups),
                        ("summary", summary),
                    ])),
            )),
        ) {
            roundtrip::<ManifestWorkReplicaSet>(json!({
                "apiVersion": "work.open-cluster-management.io/v1alpha1",
                "kind": "ManifestWorkReplicaSet",
                "metadata": { "name": "rs", "namespace": "apps" },
                "spec": object(vec![
                    ("manifestWorkTemplate", template),
                    ("placementRefs", Some(json!([{ "name": "p" }]))),
                    ("cascadeDeletionPolicy", policy),
                ]),
                "status": object(vec![("summary", summary), ("placementSummary", placements)]),
            }));
        }
    }
}
