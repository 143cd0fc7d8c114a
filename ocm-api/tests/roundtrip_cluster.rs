//! Lossless JSON round-trips of the `cluster.open-cluster-management.io` kinds.
//!
//! Every object here deserializes into its typed struct and serializes back to exactly the same
//! JSON (absent fields stay absent). The YAML examples are the cluster-group examples of the
//! OCM documentation in `shared/seeds` (re-indented where the text extraction flattened them);
//! the JSON objects cover every field of every kind.

use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::{AddOnPlacementScore, ClusterClaim, RolloutStrategy};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn roundtrip<T: DeserializeOwned + Serialize>(original: Value) -> T {
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("deserialize {original}: {e}"));
    let back = serde_json::to_value(&typed).expect("serialize");
    assert_eq!(back, original);
    typed
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).expect("valid YAML")
}

// ---------------------------------------------------------------------------------------------
// Examples from the OCM documentation (shared/seeds).
// ---------------------------------------------------------------------------------------------

#[test]
fn seed_addonplacementscore_default() {
    let score: AddOnPlacementScore = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata:
  name: default
  namespace: cluster1
status:
  conditions:
  - lastTransitionTime: "2021-10-28T08:31:39Z"
    message: AddOnPlacementScore updated successfully
    reason: AddOnPlacementScoreUpdated
    status: "True"
    type: AddOnPlacementScoreUpdated
  validUntil: "2021-10-29T18:31:39Z"
  scores:
  - name: "cpuAvailable"
    value: 66
  - name: "memAvailable"
    value: 55
"#,
    ));
    assert_eq!(score.score("cpuAvailable"), Some(66));
    assert_eq!(score.score("gpuAvailable"), None);
}

#[test]
fn seed_addonplacementscore_from_kubectl() {
    roundtrip::<AddOnPlacementScore>(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata:
  creationTimestamp: "2022-08-08T06:46:04Z"
  generation: 1
  name: resource-usage-score
  namespace: cluster1
  resourceVersion: "3907"
  uid: 6c4280e4-38be-4d45-9c73-c18c84799781
status:
  scores:
  - name: cpuAvailable
    value: 12
  - name: memAvailable
    value: 4
"#,
    ));
}

#[test]
fn seed_placements() {
    let examples = [
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement
  namespace: ns1
spec:
  numberOfClusters: 3
  prioritizerPolicy:
    mode: Exact
    configurations:
    - scoreCoordinate:
        type: AddOn
        addOn:
          resourceName: default
          scoreName: cpuAvailable
      weight: 1
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement1
  namespace: default
spec:
  numberOfClusters: 1
  clusterSets:
  - default
  prioritizerPolicy:
    mode: Exact
    configurations:
    - scoreCoordinate:
        type: AddOn
        addOn:
          resourceName: resource-usage-score
          scoreName: cpuAvailable
      weight: 1
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement1
  namespace: default
spec:
  numberOfClusters: 2
  clusterSets:
  - default
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: guestbook-app-placement
  namespace: argocd
spec:
  numberOfClusters: 10
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: guestbook-app-placement
  namespace: argocd
spec:
  numberOfClusters: 1
  tolerations:
  - key: cluster.open-cluster-management.io/unreachable
    operator: Exists
    tolerationSeconds: 300
"#,
    ];
    for text in examples {
        let placement: Placement = roundtrip(yaml(text));
        placement
            .validate()
            .expect("documentation example is valid");
    }
}

#[test]
fn seed_placementdecision_from_kubectl() {
    let decision: PlacementDecision = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  creationTimestamp: "2022-07-06T15:03:12Z"
  generation: 1
  labels:
    cluster.open-cluster-management.io/placement: placement1
  name: placement1-decision-1
  namespace: default
  ownerReferences:
  - apiVersion: cluster.open-cluster-management.io/v1beta1
    blockOwnerDeletion: true
    controller: true
    kind: Placement
    name: placement1
    uid: aa339f57-0eb7-4260-8d4d-f30c1379fd35
  resourceVersion: "47679"
  uid: 9f948619-1647-429d-894d-81e11dd8bcf1
status:
  decisions:
  - clusterName: cluster1
    reason: ""
  - clusterName: cluster2
    reason: ""
"#,
    ));
    assert_eq!(
        decision.cluster_names().collect::<Vec<_>>(),
        ["cluster1", "cluster2"]
    );
}

#[test]
fn seed_clusterclaim() {
    let claim: ClusterClaim = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata:
  name: id.open-cluster-management.io
spec:
  value: 95f91f25-d7a2-4fc3-9237-2ef633d8451c
"#,
    ));
    assert_eq!(
        claim.spec.value.as_deref(),
        Some("95f91f25-d7a2-4fc3-9237-2ef633d8451c")
    );
}

#[test]
fn seed_managedclusters() {
    // The documentation elides `metadata` and `spec` with `...`; they are filled in minimally.
    let cluster: ManagedCluster = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster1
spec: {}
status:
  clusterClaims:
  - name: id.open-cluster-management.io
    value: 95f91f25-d7a2-4fc3-9237-2ef633d8451c
"#,
    ));
    assert_eq!(
        cluster.claim("id.open-cluster-management.io"),
        Some("95f91f25-d7a2-4fc3-9237-2ef633d8451c")
    );

    let cluster: ManagedCluster = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster1
  labels:
    cluster.open-cluster-management.io/clusterset: default
spec:
  hubAcceptsClient: true
  taints:
  - effect: NoSelect
    key: cluster.open-cluster-management.io/unreachable
    timeAdded: "2023-11-13T16:26:16Z"
"#,
    ));
    assert_eq!(cluster.taints().len(), 1);

    // From `kubectl patch managedcluster cluster2 -p '{"spec":{"taints":[...]}}'`.
    roundtrip::<ManagedCluster>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": { "name": "cluster2" },
        "spec": { "taints": [{ "effect": "NoSelect", "key": "maintenance" }] }
    }));
}

#[test]
fn seed_managedclustersets_and_binding() {
    let sets = [
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: example-clusterset
spec:
  clusterSelector:
    selectorType: ExclusiveClusterSetLabel
status:
  conditions:
  - lastTransitionTime: "2022-02-21T09:24:38Z"
    message: 1 ManagedClusters selected
    reason: ClustersSelected
    status: "False"
    type: ClusterSetEmpty
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: example-openshift-clusterset
spec:
  clusterSelector:
    labelSelector:
      matchLabels:
        vendor: OpenShift
    selectorType: LabelSelector
status:
  conditions:
  - lastTransitionTime: "2022-06-20T08:23:28Z"
    message: 1 ManagedClusters selected
    reason: ClustersSelected
    status: "False"
    type: ClusterSetEmpty
"#,
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: global
spec:
  clusterSelector:
    labelSelector: {}
    selectorType: LabelSelector
status:
  conditions:
  - lastTransitionTime: "2022-06-20T08:23:28Z"
    message: 1 ManagedClusters selected
    reason: ClustersSelected
    status: "False"
    type: ClusterSetEmpty
"#,
    ];
    for text in sets {
        let set: ManagedClusterSet = roundtrip(yaml(text));
        set.validate().expect("documentation example is valid");
    }

    let binding: ManagedClusterSetBinding = roundtrip(yaml(
        r#"
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata:
  name: example-clusterset
  namespace: default
spec:
  clusterSet: example-clusterset
status:
  conditions:
  - lastTransitionTime: "2022-12-19T09:55:10Z"
    message: ""
    reason: ClusterSetBound
    status: "True"
    type: Bound
"#,
    ));
    binding.validate().expect("documentation example is valid");
}

// ---------------------------------------------------------------------------------------------
// Every field of every kind.
// ---------------------------------------------------------------------------------------------

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": format!("{type_} is {status}"),
        "lastTransitionTime": "2024-05-01T10:00:00Z",
        "observedGeneration": 3
    })
}

#[test]
fn managedcluster_every_field() {
    let cluster: ManagedCluster = roundtrip(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {
            "name": "cluster1",
            "labels": { "cluster.open-cluster-management.io/clusterset": "default", "vendor": "Kind" },
            "finalizers": ["cluster.open-cluster-management.io/api-resource-cleanup"]
        },
        "spec": {
            "hubAcceptsClient": true,
            "leaseDurationSeconds": 60,
            "managedClusterClientConfigs": [
                { "url": "https://cluster1-control-plane:6443", "caBundle": "Y2EtZGF0YQ==" },
                { "url": "https://10.0.0.1:6443" }
            ],
            "taints": [
                {
                    "key": "cluster.open-cluster-management.io/unreachable",
                    "effect": "NoSelect",
                    "timeAdded": "2024-05-01T10:00:00Z"
                },
                { "key": "gpu", "value": "nvidia", "effect": "PreferNoSelect" },
                { "key": "maintenance", "value": "", "effect": "NoSelectIfNew" }
            ]
        },
        "status": {
            "conditions": [
                condition("HubAcceptedManagedCluster", "True", "HubClusterAdminAccepted"),
                condition("ManagedClusterJoined", "True", "ManagedClusterJoined"),
                condition("ManagedClusterConditionAvailable", "True", "ManagedClusterAvailable")
            ],
            "capacity": { "cpu": "8", "memory": "32Gi", "pods": "110" },
            "allocatable": { "cpu": "7500m", "memory": "30Gi" },
            "version": { "kubernetes": "v1.30.2" },
            "clusterClaims": [
                { "name": "id.k8s.io", "value": "cluster1" },
                { "name": "platform.open-cluster-management.io", "value": "Kind" }
            ],
            "managedNamespaces": [{
                "name": "team-a",
                "clusterSet": "default",
                "conditions": [condition("NamespaceAvailable", "True", "NamespaceApplied")]
            }]
        }
    }));
    assert_eq!(
        cluster
            .condition("ManagedClusterConditionAvailable")
            .map(|c| c.status.as_str()),
        Some("True")
    );
    assert!(cluster.is_available());
    cluster.validate().expect("valid");

    // Nothing but the required parts.
    roundtrip::<ManagedCluster>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": { "name": "bare" },
        "spec": {}
    }));
}

#[test]
fn placement_every_field() {
    let placement: Placement = roundtrip(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": { "name": "everything", "namespace": "apps" },
        "spec": {
            "clusterSets": ["prod", "staging"],
            "numberOfClusters": 5,
            "predicates": [
                {
                    "requiredClusterSelector": {
                        "labelSelector": {
                            "matchLabels": { "vendor": "OpenShift" },
                            "matchExpressions": [
                                { "key": "env", "operator": "In", "values": ["prod", "qa"] },
                                { "key": "deprecated", "operator": "DoesNotExist" }
                            ]
                        },
                        "claimSelector": {
                            "matchExpressions": [
                                { "key": "platform.open-cluster-management.io", "operator": "In", "values": ["AWS"] }
                            ]
                        },
                        "celSelector": {
                            "celExpressions": ["managedCluster.metadata.labels[\"version\"] >= \"4.14\""]
                        }
                    }
                },
                {}
            ],
            "prioritizerPolicy": {
                "mode": "Additive",
                "configurations": [
                    { "scoreCoordinate": { "type": "BuiltIn", "builtIn": "ResourceAllocatableMemory" }, "weight": 2 },
                    { "scoreCoordinate": { "type": "BuiltIn", "builtIn": "Steady" }, "weight": 0 },
                    { "scoreCoordinate": { "type": "AddOn", "addOn": { "resourceName": "default", "scoreName": "cpuAvailable" } } }
                ]
            },
            "spreadPolicy": {
                "spreadConstraints": [
                    { "topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 2, "whenUnsatisfiable": "DoNotSchedule" },
                    { "topologyKey": "region.open-cluster-management.io", "topologyKeyType": "Claim" }
                ]
            },
            "tolerations": [
                { "key": "gpu", "operator": "Equal", "value": "nvidia", "effect": "NoSelect" },
                { "key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists", "tolerationSeconds": 300 },
                { "operator": "Exists", "effect": "NoSelectIfNew" }
            ],
            "decisionStrategy": {
                "groupStrategy": {
                    "clustersPerDecisionGroup": "25%",
                    "decisionGroups": [
                        {
                            "groupName": "canary",
                            "groupClusterSelector": {
                                "labelSelector": { "matchLabels": { "canary": "true" } },
                                "claimSelector": { "matchExpressions": [{ "key": "id.k8s.io", "operator": "Exists" }] }
                            }
                        },
                        { "groupName": "prod-east", "groupClusterSelector": {} }
                    ]
                }
            },
            "sortBy": "Score",
            "scoreRateLimit": "5m"
        },
        "status": {
            "numberOfSelectedClusters": 3,
            "decisionGroups": [
                { "decisionGroupIndex": 0, "decisionGroupName": "canary", "decisions": ["everything-decision-1"], "clusterCount": 1 },
                { "decisionGroupIndex": 1, "decisionGroupName": "", "decisions": ["everything-decision-2", "everything-decision-3"], "clusterCount": 2 }
            ],
            "conditions": [
                condition("PlacementSatisfied", "True", "AllDecisionsScheduled"),
                condition("PlacementMisconfigured", "False", "Succeedconfigured")
            ],
            "lastScoreUpdateTime": "2024-05-01T10:05:00Z"
        }
    }));
    placement.validate().expect("valid");
    let weights: Vec<i32> = placement
        .spec
        .prioritizer_policy
        .iter()
        .flat_map(|p| p.configurations.iter().flatten())
        .map(|c| c.effective_weight())
        .collect();
    assert_eq!(weights, [2, 0, 1]);
    assert_eq!(
        placement
            .condition("PlacementSatisfied")
            .map(|c| c.reason.as_str()),
        Some("AllDecisionsScheduled")
    );

    // clustersPerDecisionGroup as an integer stays an integer.
    roundtrip::<Placement>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": { "name": "int-groups", "namespace": "apps" },
        "spec": { "decisionStrategy": { "groupStrategy": { "clustersPerDecisionGroup": 10 } } }
    }));
}

#[test]
fn placementdecision_every_field() {
    roundtrip::<PlacementDecision>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "PlacementDecision",
        "metadata": {
            "name": "everything-decision-1",
            "namespace": "apps",
            "labels": {
                "cluster.open-cluster-management.io/placement": "everything",
                "cluster.open-cluster-management.io/decision-group-index": "0",
                "cluster.open-cluster-management.io/decision-group-name": "canary"
            }
        },
        "status": {
            "decisions": [
                { "clusterName": "cluster1", "reason": "", "score": 87 },
                { "clusterName": "cluster2", "reason": "selected" }
            ]
        }
    }));
    // A fresh decision object has no status at all.
    roundtrip::<PlacementDecision>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "PlacementDecision",
        "metadata": { "name": "fresh", "namespace": "apps" }
    }));
}

#[test]
fn addonplacementscore_every_field() {
    roundtrip::<AddOnPlacementScore>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
        "kind": "AddOnPlacementScore",
        "metadata": { "name": "default", "namespace": "cluster1" },
        "status": {
            "conditions": [condition("AddOnPlacementScoreUpdated", "True", "Updated")],
            "scores": [{ "name": "cpuAvailable", "value": -100 }, { "name": "memAvailable", "value": 100 }],
            "validUntil": "2024-05-02T10:00:00Z"
        }
    }));
    roundtrip::<AddOnPlacementScore>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
        "kind": "AddOnPlacementScore",
        "metadata": { "name": "empty", "namespace": "cluster1" }
    }));
}

#[test]
fn clusterclaim_every_field() {
    roundtrip::<ClusterClaim>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
        "kind": "ClusterClaim",
        "metadata": { "name": "platform.open-cluster-management.io" },
        "spec": { "value": "AWS" }
    }));
    roundtrip::<ClusterClaim>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
        "kind": "ClusterClaim",
        "metadata": { "name": "empty" },
        "spec": {}
    }));
}

#[test]
fn managedclusterset_every_field() {
    let set: ManagedClusterSet = roundtrip(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": { "name": "prod" },
        "spec": {
            "clusterSelector": {
                "selectorType": "LabelSelector",
                "labelSelector": {
                    "matchLabels": { "env": "prod" },
                    "matchExpressions": [{ "key": "region", "operator": "NotIn", "values": ["cn"] }]
                }
            },
            "managedNamespaces": [{ "name": "team-a" }, { "name": "team-b" }]
        },
        "status": { "conditions": [condition("ClusterSetEmpty", "False", "ClustersSelected")] }
    }));
    set.validate().expect("valid");
    roundtrip::<ManagedClusterSet>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": { "name": "bare" },
        "spec": {}
    }));
}

#[test]
fn managedclustersetbinding_every_field() {
    roundtrip::<ManagedClusterSetBinding>(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": { "name": "prod", "namespace": "apps" },
        "spec": { "clusterSet": "prod" },
        "status": { "conditions": [condition("Bound", "False", "ClusterSetNotFound")] }
    }));
}

#[test]
fn rollout_strategy_every_field() {
    for value in [
        json!({ "type": "All", "all": { "minSuccessTime": "0", "progressDeadline": "None", "maxFailures": 0 } }),
        json!({
            "type": "Progressive",
            "progressive": {
                "minSuccessTime": "5m",
                "progressDeadline": "10m",
                "maxFailures": "10%",
                "maxConcurrency": 2,
                "mandatoryDecisionGroups": [{ "groupName": "canary" }, { "groupIndex": 1 }]
            }
        }),
        json!({
            "type": "ProgressivePerGroup",
            "progressivePerGroup": {
                "maxFailures": 1,
                "mandatoryDecisionGroups": [{ "groupName": "canary", "groupIndex": 0 }]
            }
        }),
        json!({}),
    ] {
        roundtrip::<RolloutStrategy>(value);
    }
}

#[test]
fn objects_without_spec_read_as_default_spec() {
    // Upstream does not require `spec` for these kinds. Such objects read as the default spec
    // and are written back with `spec: {}`, as upstream's Go clients write them.
    let bare = |api_version: &str, kind: &str| json!({ "apiVersion": api_version, "kind": kind, "metadata": { "name": "x" } });
    let with_empty_spec = |mut v: Value| {
        v["spec"] = json!({});
        v
    };
    let v1 = "cluster.open-cluster-management.io/v1";
    let v1alpha1 = "cluster.open-cluster-management.io/v1alpha1";
    let v1beta2 = "cluster.open-cluster-management.io/v1beta2";

    let c: ManagedCluster = serde_json::from_value(bare(v1, "ManagedCluster")).unwrap();
    assert_eq!(
        serde_json::to_value(&c).unwrap(),
        with_empty_spec(bare(v1, "ManagedCluster"))
    );
    let c: ClusterClaim = serde_json::from_value(bare(v1alpha1, "ClusterClaim")).unwrap();
    assert_eq!(
        serde_json::to_value(&c).unwrap(),
        with_empty_spec(bare(v1alpha1, "ClusterClaim"))
    );
    let s: ManagedClusterSet = serde_json::from_value(bare(v1beta2, "ManagedClusterSet")).unwrap();
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        with_empty_spec(bare(v1beta2, "ManagedClusterSet"))
    );
    let mut null_spec = bare(v1beta2, "ManagedClusterSetBinding");
    null_spec["spec"] = Value::Null;
    let b: ManagedClusterSetBinding = serde_json::from_value(null_spec).unwrap();
    assert_eq!(b.spec.cluster_set, None);

    // A Placement must have a spec, as the CRD requires.
    assert!(
        serde_json::from_value::<Placement>(bare(
            "cluster.open-cluster-management.io/v1beta1",
            "Placement"
        ))
        .is_err()
    );
}

#[test]
fn seed_rollout_strategies_from_manifestworkreplicaset_example() {
    // The ManifestWorkReplicaSet page writes the strategy type as `rolloutType`, a name the API
    // does not have: the API server prunes it (so the strategy defaults to `All`), and so do we.
    // Everything else in these strategies round-trips.
    let strategies = yaml(
        r#"
- rolloutType: All
- rolloutType: Progressive
  progressive:
    minSuccessTime: 5m
    progressDeadline: 10m
    maxFailures: 5%
    mandatoryDecisionGroups:
    - groupName: "prod-canary-west"
    - groupName: "prod-canary-east"
- rolloutType: ProgressivePerGroup
  progressivePerGroup:
    progressDeadline: 10m
    maxFailures: 2
"#,
    );
    for mut original in strategies.as_array().cloned().unwrap_or_default() {
        let typed: RolloutStrategy = serde_json::from_value(original.clone()).unwrap();
        assert_eq!(
            typed.rollout_type(),
            ocm_api::cluster::v1alpha1::RolloutType::All
        );
        if let Some(obj) = original.as_object_mut() {
            obj.remove("rolloutType");
        }
        assert_eq!(serde_json::to_value(&typed).unwrap(), original);
    }
}
