//! Acceptance: the Placement user scenarios (User Scenarios §2 "Distribute workload with
//! placement selected managed clusters", §3 "Extend the multicluster scheduling capabilities
//! with placement", §5 "Integration with Argo CD" and §7 "Migrate workload with placement"),
//! followed as written with `ocm-clusteradm` (for `clusteradm`), `ocm-score-provider` (for the
//! resource-usage-collect addon's scores) and the real kubectl against `ocm-fake-apiserver` +
//! `ocm-hub-controller` (+ `ocm-work-agent` where works are deployed). Each scenario has its
//! own fleet of two managed clusters, so they run in parallel.
//!
//! The documentation's `clusteradm get clusters` and `get clustersets` print tables: they
//! come from clusteradm releases before its tree output (the default since 2022). We check
//! both: the default tree, and `-o table` against the documentation's table.
//!
//! | scenario, step | the documentation says the user sees | test |
//! |---|---|---|
//! | §2 `clusteradm get clusters` | `cluster1 true True default <cpu> <memory> <version>`, same for cluster2 | [`distribute_workload_with_placement`] |
//! | §2 `clusteradm get clustersets` | `default` with `2 ManagedClusters selected`, no bound namespace | same |
//! | §2 `clusteradm clusterset bind default --namespace default` | `default default 2 ManagedClusters selected` | same |
//! | §2 `kubectl apply` placement1 (numberOfClusters 2, clusterSets default) | a PlacementDecision `placement1-decision-1` labelled with the placement, owned by it, deciding cluster1 and cluster2 | same |
//! | §2 `clusteradm create work my-first-work -f work.yaml --placement default/placement1` | `kubectl get manifestwork -A`: the work in cluster1 and cluster2 | same |
//! | §2 `kubectl patch placement placement1 … numberOfClusters 1`, then `create work … --overwrite` | `kubectl get manifestwork -A`: only cluster1 | same |
//! | §3 AddOnPlacementScores (`kubectl get addonplacementscore -A`, `-oyaml`) | `resource-usage-score` in cluster1 and cluster2 with `cpuAvailable 12`, `memAvailable 4` | [`extend_scheduling_with_addon_placement_scores`] |
//! | §3 placement1 with the `AddOn` prioritizer, numberOfClusters 1 | `kubectl describe placementdecision … \| grep Status -A 3`: `Cluster Name: cluster1` | same |
//! | §3 the scores with `-o=jsonpath='{range .items[*]}…'` | `cluster1  [{"name":"cpuAvailable","value":12},{"name":"memAvailable","value":4}]` | same |
//! | §3 the placement's Events | `DecisionCreate`, `DecisionUpdate`, `ScoreUpdate cluster1:12 cluster2:12` | same (as `events.k8s.io` Events); through `kubectl describe placement … \| grep Events -A 10`: `placement_events_in_kubectl_describe` |
//! | §5 ConfigMap `ocm-placement-generator`, Role and RoleBinding for `argocd-applicationset-controller` | the controller may get and list PlacementDecisions in `argocd` | [`argocd_finds_the_decisions_by_label`] |
//! | §5 `clusteradm clusterset bind global --namespace argocd` | a ManagedClusterSetBinding in `argocd` | same |
//! | §5 placement `guestbook-app-placement` (numberOfClusters 10) | the generator's lookup (label `cluster.open-cluster-management.io/placement`, list key `decisions`, match key `clusterName`) finds cluster1 and cluster2 | same |
//! | §5 the ApplicationSet and Applications | Argo CD's own objects | out of scope (Argo CD is not part of OCM) |
//! | §7 `kubectl patch placement … numberOfClusters 1`, `clusteradm get placements -otable` | `guestbook-app-placement False Succeedconfigured [cluster1]` | [`migrate_workload_with_placement`] |
//! | §7 cluster1 goes down (`docker pause`) | `AVAILABLE Unknown`; the `cluster.open-cluster-management.io/unreachable` NoSelect taint with `timeAdded`; `[cluster2]` | same (cluster1's `ManagedClusterConditionAvailable` is set to Unknown, as the hub does when the lease stops); the `kubectl get managedcluster` columns: `managed_cluster_printer_columns` |
//! | §7 `tolerationSeconds: 300` | the application stays on cluster1 for 5 minutes | same: it stays; a copy with `tolerationSeconds: 2` moves when its toleration expires |
//! | §7 cluster1 back, `kubectl patch managedcluster cluster2 … maintenance` | `managedcluster…/cluster2 patched`; `[cluster1]` | same; the `timeAdded` the hub's webhook stamps on the manual taint: `manual_taint_gets_time_added` |

use crate::common;

use common::{Fleet, FleetOptions, cell, cells};

const WORK: &str = r#"apiVersion: v1
kind: ServiceAccount
metadata:
  namespace: default
  name: my-sa
---
apiVersion: apps/v1
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
"#;

/// The documentation's first steps of §2 and §3: two clusters in the `default` set, which is
/// bound to the `default` namespace.
fn check_clusters_and_bind_default(fleet: &Fleet) {
    // $ clusteradm get clusters (a tree today; the documentation's table with -o table)
    let tree = fleet.clusteradm(&["get", "clusters"]);
    for expected in [
        "<ManagedCluster>\n├── <cluster1>\n│   ├── <Accepted> true\n│   ├── <Available> True\n",
        "└── <cluster2>\n",
        "<ClusterSet> default",
    ] {
        assert!(
            tree.out().contains(expected),
            "missing {expected:?} in:\n{}",
            tree.stdout
        );
    }
    let table = fleet.clusteradm(&["get", "clusters", "-o", "table"]);
    let rows = cells(table.out());
    assert_eq!(
        table
            .stdout
            .lines()
            .next()
            .unwrap()
            .split("   ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>(),
        [
            "NAME",
            "ACCEPTED",
            "AVAILABLE",
            "CLUSTERSET",
            "CPU",
            "MEMORY",
            "KUBERNETES VERSION"
        ]
    );
    for (row, name) in rows[1..].iter().zip(["cluster1", "cluster2"]) {
        assert_eq!(row[..4], [name, "true", "True", "default"]);
        assert_eq!(row.len(), 7, "cpu, memory and version are shown: {row:?}");
        assert!(row[6].starts_with('v'), "{row:?}");
    }
    // $ clusteradm get clustersets
    let sets = fleet.clusteradm(&["get", "clustersets", "-o", "table"]);
    assert_eq!(cell(sets.out(), "default", "BOUND NAMESPACES"), "");
    assert_eq!(
        cell(&sets.stdout, "default", "STATUS"),
        "2 ManagedClusters selected"
    );
    // clusteradm clusterset bind default --namespace default
    let ran = fleet.clusteradm(&["clusterset", "bind", "default", "--namespace", "default"]);
    assert_eq!(
        ran.out(),
        "Clusterset default is bound to Namespace default\n"
    );
    let sets = fleet.clusteradm(&["get", "clustersets", "-o", "table"]);
    assert_eq!(cell(sets.out(), "default", "BOUND NAMESPACES"), "default");
    assert_eq!(
        cell(&sets.stdout, "default", "STATUS"),
        "2 ManagedClusters selected"
    );
    let tree = fleet.clusteradm(&["get", "clustersets"]);
    assert!(
        tree.out().contains("├── <default>\n│   ├── <BoundNamespace> default\n│   ├── <Clusters> [cluster1 cluster2]\n"),
        "{}",
        tree.stdout
    );
}

fn wait_decided(fleet: &Fleet, namespace: &str, placement: &str, expected: &str) {
    let selector = format!("cluster.open-cluster-management.io/placement={placement}");
    fleet.hub_until(
        &[
            "get",
            "placementdecision",
            "-n",
            namespace,
            "-l",
            &selector,
            "-o",
            "jsonpath={.items[*].status.decisions[*].clusterName}",
        ],
        &format!("{placement} deciding {expected:?}"),
        |out| out == expected,
    );
}

#[test]
fn distribute_workload_with_placement() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-distribute", FleetOptions::new(2));
    check_clusters_and_bind_default(&fleet);

    let ran = fleet.apply(
        "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement1
  namespace: default
spec:
  numberOfClusters: 2
  clusterSets:
    - default
",
    );
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/placement1 created"
    );
    wait_decided(&fleet, "default", "placement1", "cluster1 cluster2");

    // What happens behind the scene: the PlacementDecision, found by label.
    let yaml = fleet.kubectl(&[
        "get",
        "placementdecision",
        "-n",
        "default",
        "-l",
        "cluster.open-cluster-management.io/placement=placement1",
        "-oyaml",
    ]);
    let doc: serde_json::Value = serde_saphyr::from_str(yaml.out()).expect("YAML");
    assert_eq!(doc["kind"], "List");
    let item = &doc["items"][0];
    assert_eq!(item["kind"], "PlacementDecision");
    assert_eq!(item["metadata"]["name"], "placement1-decision-1");
    assert_eq!(
        item["metadata"]["labels"]["cluster.open-cluster-management.io/placement"],
        "placement1"
    );
    let owner = &item["metadata"]["ownerReferences"][0];
    assert_eq!(
        (
            owner["kind"].as_str(),
            owner["name"].as_str(),
            owner["controller"].as_bool(),
            owner["blockOwnerDeletion"].as_bool()
        ),
        (
            Some("Placement"),
            Some("placement1"),
            Some(true),
            Some(true)
        )
    );
    assert_eq!(
        item["status"]["decisions"],
        serde_json::json!([{"clusterName": "cluster1", "reason": ""}, {"clusterName": "cluster2", "reason": ""}])
    );

    // clusteradm create work my-first-work -f work.yaml --placement default/placement1
    let work = fleet.file("work.yaml", WORK);
    let ran = fleet.clusteradm(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &work,
        "--placement",
        "default/placement1",
    ]);
    assert_eq!(
        ran.out(),
        "create work my-first-work in cluster cluster1\ncreate work my-first-work in cluster cluster2\n"
    );
    let rows = cells(fleet.kubectl(&["get", "manifestwork", "-A"]).out());
    assert_eq!(rows[0], ["NAMESPACE", "NAME", "AGE"]);
    assert_eq!(
        rows[1..]
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect::<Vec<_>>(),
        [("cluster1", "my-first-work"), ("cluster2", "my-first-work")]
    );
    for cluster in ["cluster1", "cluster2"] {
        fleet.spoke_until(
            cluster,
            &[
                "get",
                "deployment",
                "nginx-deployment",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ],
            "nginx on both clusters",
            |o| o == "3",
        );
    }

    // Select only one cluster, and reschedule the work.
    let ran = fleet.kubectl(&[
        "patch",
        "placement",
        "placement1",
        "-n",
        "default",
        "--patch",
        r#"{"spec": {"clusterSets": ["default"],"numberOfClusters": 1}}"#,
        "--type=merge",
    ]);
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/placement1 patched"
    );
    wait_decided(&fleet, "default", "placement1", "cluster1");
    let ran = fleet.clusteradm(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &work,
        "--placement",
        "default/placement1",
        "--overwrite",
    ]);
    assert_eq!(ran.out(), "delete work my-first-work in cluster cluster2\n");
    // "now it's only deployed to cluster1"
    let listed = fleet.hub_until(
        &["get", "manifestwork", "-A"],
        "the work in cluster1 only",
        |out| cells(out).len() == 2,
    );
    let rows = cells(&listed);
    assert_eq!(rows[1][..2], ["cluster1", "my-first-work"]);
    // ... and its resources leave cluster2.
    fleet.spoke_until(
        "cluster2",
        &[
            "get",
            "deployment",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "nginx gone from cluster2",
        str::is_empty,
    );
}

/// Writes the resource-usage-collect addon's scores for both clusters with
/// `ocm-score-provider`, as the documentation shows them.
fn write_scores(fleet: &Fleet) {
    for cluster in ["cluster1", "cluster2"] {
        for (name, value) in [("cpuAvailable", "12"), ("memAvailable", "4")] {
            let ran = common::run(
                env!("CARGO_BIN_EXE_ocm-score-provider"),
                &[
                    "--hub-kubeconfig",
                    fleet.hub.to_str().unwrap(),
                    "--cluster-name",
                    cluster,
                    "--score-name",
                    name,
                    "--raw",
                    "--value",
                    value,
                    "--once",
                ],
            );
            assert!(ran.ok(), "{}", ran.stderr);
        }
    }
}

const SCORED_PLACEMENT: &str = "apiVersion: cluster.open-cluster-management.io/v1beta1
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
";

#[test]
fn extend_scheduling_with_addon_placement_scores() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-scores", FleetOptions::new(2).no_agents());
    check_clusters_and_bind_default(&fleet);
    write_scores(&fleet);

    // $ kubectl get addonplacementscore -A
    let rows = cells(fleet.kubectl(&["get", "addonplacementscore", "-A"]).out());
    assert_eq!(rows[0], ["NAMESPACE", "NAME", "AGE"]);
    assert_eq!(
        rows[1..]
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect::<Vec<_>>(),
        [
            ("cluster1", "resource-usage-score"),
            ("cluster2", "resource-usage-score")
        ]
    );
    // $ kubectl get addonplacementscore -n cluster1 resource-usage-score -oyaml
    let yaml = fleet.kubectl(&[
        "get",
        "addonplacementscore",
        "-n",
        "cluster1",
        "resource-usage-score",
        "-oyaml",
    ]);
    let doc: serde_json::Value = serde_saphyr::from_str(yaml.out()).expect("YAML");
    assert_eq!(
        doc["apiVersion"],
        "cluster.open-cluster-management.io/v1alpha1"
    );
    assert_eq!(
        doc["status"]["scores"],
        serde_json::json!([{"name": "cpuAvailable", "value": 12}, {"name": "memAvailable", "value": 4}])
    );

    // Select 1 cluster with the highest cpuAvailable score.
    let ran = fleet.apply(SCORED_PLACEMENT);
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/placement1 created"
    );
    wait_decided(&fleet, "default", "placement1", "cluster1");
    // $ kubectl describe placementdecision -n default | grep Status -A 3
    let described = fleet.kubectl(&["describe", "placementdecision", "-n", "default"]);
    let text = described.out();
    let at = text.find("Status:").expect("a Status section");
    let section: Vec<&str> = text[at..].lines().take(4).map(str::trim_end).collect();
    assert_eq!(section[0], "Status:");
    assert_eq!(section[1].trim(), "Decisions:");
    assert_eq!(
        section[2].split_whitespace().collect::<Vec<_>>(),
        ["Cluster", "Name:", "cluster1"]
    );
    assert_eq!(section[3].trim(), "Reason:");

    // The scores and the cluster scores the placement computed from them.
    let scores = fleet.kubectl(&[
        "get",
        "addonplacementscore",
        "-A",
        r#"-o=jsonpath={range .items[*]}{.metadata.namespace}{"\t"}{.status.scores}{"\n"}{end}"#,
    ]);
    assert_eq!(
        scores.out(),
        "cluster1\t[{\"name\":\"cpuAvailable\",\"value\":12},{\"name\":\"memAvailable\",\"value\":4}]\n\
         cluster2\t[{\"name\":\"cpuAvailable\",\"value\":12},{\"name\":\"memAvailable\",\"value\":4}]\n"
    );
    let events = fleet.hub_until(
        &["get", "events.events.k8s.io", "-n", "default", "-o", "jsonpath={range .items[*]}{.type} {.reason} {.reportingController}: {.note}{\"\\n\"}{end}"],
        "the placement's Events",
        |out| out.contains("ScoreUpdate"),
    );
    for expected in [
        "Normal DecisionCreate placement-controller: Decision placement1-decision-1 is created with placement placement1 in namespace default",
        "Normal DecisionUpdate placement-controller: Decision placement1-decision-1 is updated with placement placement1 in namespace default",
        "Normal ScoreUpdate placement-controller: cluster1:12 cluster2:12",
    ] {
        assert!(
            events.lines().any(|l| l.trim_end() == expected),
            "missing {expected:?} in:\n{events}"
        );
    }
}

/// (core v1 Events for `kubectl describe`): `kubectl describe placement -n default
/// placement1 | grep Events -A 10` shows the three Events. The documentation's `From` column
/// reads `placementController` (an older upstream); current upstream reports
/// `placement-controller`, which is what we check.
#[test]
fn placement_events_in_kubectl_describe() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-scores-events", FleetOptions::new(2).no_agents());
    fleet
        .clusteradm(&["clusterset", "bind", "default", "--namespace", "default"])
        .out();
    write_scores(&fleet);
    fleet.apply(SCORED_PLACEMENT).out();
    wait_decided(&fleet, "default", "placement1", "cluster1");
    let described = fleet.hub_until(
        &["describe", "placement", "-n", "default", "placement1"],
        "Events in describe",
        |out| out.contains("ScoreUpdate"),
    );
    let at = described.find("Events:").expect("an Events section");
    let lines: Vec<&str> = described[at..].lines().take(11).collect();
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["Type", "Reason", "Age", "From", "Message"]
    );
    let find = |reason: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(reason))
            .unwrap_or_else(|| panic!("no {reason} in:\n{described}"))
            .to_string()
    };
    assert!(find("DecisionCreate").ends_with("placement-controller  Decision placement1-decision-1 is created with placement placement1 in namespace default"));
    assert!(find("DecisionUpdate").ends_with("placement-controller  Decision placement1-decision-1 is updated with placement placement1 in namespace default"));
    assert!(find("ScoreUpdate").ends_with("placement-controller  cluster1:12 cluster2:12"));
    assert!(find("ScoreUpdate").starts_with("  Normal"));
}

/// A SubjectAccessReview: may `user` `verb` `resource` in `namespace`?
fn allowed(
    fleet: &Fleet,
    user: &str,
    groups: &[&str],
    verb: &str,
    group: &str,
    resource: &str,
    namespace: &str,
) -> bool {
    let review = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": groups,
                 "resourceAttributes": {"namespace": namespace, "verb": verb, "group": group, "resource": resource}}
    });
    let file = fleet.file("review.json", &review.to_string());
    fleet
        .kubectl(&["create", "-f", &file, "-o", "jsonpath={.status.allowed}"])
        .out()
        == "true"
}

#[test]
fn argocd_finds_the_decisions_by_label() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-argocd", FleetOptions::new(2).no_agents());
    // Argo CD is installed in `argocd` (its namespace stands in for it).
    fleet.kubectl(&["create", "namespace", "argocd"]).out();
    // 3. The Cluster Decision Resource generator's configuration.
    let ran = fleet.apply(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: ocm-placement-generator
  namespace: argocd
data:
  apiVersion: cluster.open-cluster-management.io/v1beta1
  kind: placementdecisions
  statusListKey: decisions
  matchKey: clusterName
",
    );
    assert_eq!(
        ran.out().trim(),
        "configmap/ocm-placement-generator created"
    );
    // 4. Argo CD may read PlacementDecisions.
    let controller = "system:serviceaccount:argocd:argocd-applicationset-controller";
    let groups = [
        "system:serviceaccounts",
        "system:serviceaccounts:argocd",
        "system:authenticated",
    ];
    let group = "cluster.open-cluster-management.io";
    assert!(!allowed(
        &fleet,
        controller,
        &groups,
        "list",
        group,
        "placementdecisions",
        "argocd"
    ));
    let ran = fleet.apply(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: ocm-placement-consumer
  namespace: argocd
rules:
- apiGroups: [\"cluster.open-cluster-management.io\"]
  resources: [\"placementdecisions\"]
  verbs: [\"get\", \"list\"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: ocm-placement-consumer:argocd
  namespace: argocd
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: ocm-placement-consumer
subjects:
- kind: ServiceAccount
  namespace: argocd
  name: argocd-applicationset-controller
",
    );
    assert_eq!(
        ran.out().trim(),
        "role.rbac.authorization.k8s.io/ocm-placement-consumer created\nrolebinding.rbac.authorization.k8s.io/ocm-placement-consumer:argocd created"
    );
    for verb in ["get", "list"] {
        assert!(
            allowed(
                &fleet,
                controller,
                &groups,
                verb,
                group,
                "placementdecisions",
                "argocd"
            ),
            "{verb}"
        );
    }
    assert!(!allowed(
        &fleet,
        controller,
        &groups,
        "list",
        group,
        "placementdecisions",
        "default"
    ));
    // 5. clusteradm clusterset bind global --namespace argocd
    let ran = fleet.clusteradm(&["clusterset", "bind", "global", "--namespace", "argocd"]);
    assert_eq!(
        ran.out(),
        "Clusterset global is bound to Namespace argocd\n"
    );
    fleet.hub_until(
        &[
            "get",
            "managedclustersetbinding",
            "global",
            "-n",
            "argocd",
            "-o",
            "jsonpath={.spec.clusterSet} {.status.conditions[?(@.type==\"Bound\")].status}",
        ],
        "the binding bound",
        |out| out == "global True",
    );
    // 6. A placement in argocd.
    let ran = fleet.apply(
        "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: guestbook-app-placement
  namespace: argocd
spec:
  numberOfClusters: 10
",
    );
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/guestbook-app-placement created"
    );
    // 7. The generator finds the decisions by the placement label and reads
    // `decisions[*].clusterName`, one Application per cluster.
    wait_decided(
        &fleet,
        "argocd",
        "guestbook-app-placement",
        "cluster1 cluster2",
    );
    let doc: serde_json::Value = serde_json::from_str(
        fleet
            .kubectl(&[
                "get",
                "placementdecisions",
                "-n",
                "argocd",
                "-l",
                "cluster.open-cluster-management.io/placement=guestbook-app-placement",
                "-o",
                "json",
            ])
            .out(),
    )
    .unwrap();
    let clusters: Vec<&str> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["status"]["decisions"].as_array().unwrap().iter())
        .map(|d| d["clusterName"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["cluster1", "cluster2"]);
    assert_eq!(
        doc["items"][0]["apiVersion"],
        "cluster.open-cluster-management.io/v1beta1"
    );
}

/// Sets cluster1's availability as the hub does from its lease: `Unknown` when the agent
/// stops renewing it (`docker pause`), `True` when it is back.
fn set_available(fleet: &Fleet, cluster: &str, status: &str) {
    let (reason, message) = match status {
        "True" => ("ManagedClusterAvailable", "Managed cluster is available"),
        _ => (
            "ManagedClusterLeaseUpdateStopped",
            "Registration agent stopped updating its lease.",
        ),
    };
    let current = fleet.kubectl(&["get", "managedcluster", cluster, "-o", "json"]);
    let mut mc: serde_json::Value = serde_json::from_str(current.out()).unwrap();
    let conditions = mc["status"]["conditions"].as_array_mut().unwrap();
    for c in conditions.iter_mut() {
        if c["type"] == "ManagedClusterConditionAvailable" {
            c["status"] = status.into();
            c["reason"] = reason.into();
            c["message"] = message.into();
            c["lastTransitionTime"] = "2026-01-01T00:00:00Z".into();
        }
    }
    let patch = serde_json::json!({"status": {"conditions": conditions}}).to_string();
    fleet
        .kubectl(&[
            "patch",
            "managedcluster",
            cluster,
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch,
        ])
        .out();
}

fn placements_table(fleet: &Fleet, expected: &str) -> String {
    fleet.clusteradm_until(&["get", "placements", "-otable"], expected, |out| {
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == expected)
    })
}

#[test]
fn migrate_workload_with_placement() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-migrate", FleetOptions::new(2).no_agents());
    // The Argo CD environment: global bound to argocd, the placement selecting both clusters.
    fleet.kubectl(&["create", "namespace", "argocd"]).out();
    fleet
        .clusteradm(&["clusterset", "bind", "global", "--namespace", "argocd"])
        .out();
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: guestbook-app-placement
  namespace: argocd
spec:
  numberOfClusters: 10
",
        )
        .out();
    wait_decided(
        &fleet,
        "argocd",
        "guestbook-app-placement",
        "cluster1 cluster2",
    );

    // $ kubectl patch placement -n argocd guestbook-app-placement --patch '{"spec": {"numberOfClusters": 1}}' --type=merge
    let ran = fleet.kubectl(&[
        "patch",
        "placement",
        "-n",
        "argocd",
        "guestbook-app-placement",
        "--patch",
        r#"{"spec": {"numberOfClusters": 1}}"#,
        "--type=merge",
    ]);
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/guestbook-app-placement patched"
    );
    // $ clusteradm get placements -otable
    let table = placements_table(
        &fleet,
        "guestbook-app-placement False Succeedconfigured [cluster1]",
    );
    assert_eq!(
        table
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["NAME", "STATUS", "REASON", "SELETEDCLUSTERS"]
    );

    // cluster1 goes down: Unknown, the unreachable taint, and the placement moves to cluster2.
    set_available(&fleet, "cluster1", "Unknown");
    assert_eq!(
        fleet.kubectl(&["get", "managedcluster", "cluster1", "-o", r#"jsonpath={.status.conditions[?(@.type=="ManagedClusterConditionAvailable")].status}"#]).out(),
        "Unknown"
    );
    placements_table(
        &fleet,
        "guestbook-app-placement False Succeedconfigured [cluster2]",
    );
    let yaml = fleet.kubectl(&["get", "managedcluster", "cluster1", "-oyaml"]);
    let mc: serde_json::Value = serde_saphyr::from_str(yaml.out()).unwrap();
    assert_eq!(
        mc["metadata"]["labels"]["cluster.open-cluster-management.io/clusterset"],
        "default"
    );
    let taint = &mc["spec"]["taints"][0];
    assert_eq!(taint["effect"], "NoSelect");
    assert_eq!(
        taint["key"],
        "cluster.open-cluster-management.io/unreachable"
    );
    assert!(
        taint["value"].as_str().unwrap_or_default().is_empty(),
        "{taint}"
    );
    assert!(
        taint["timeAdded"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{taint}"
    );

    // cluster1 is back: available again, the taint goes, and the placement stays where it is.
    set_available(&fleet, "cluster1", "True");
    fleet.hub_until(
        &[
            "get",
            "managedcluster",
            "cluster1",
            "-o",
            "jsonpath={.spec.taints}",
        ],
        "the taint removed",
        |o| o.is_empty() || o == "[]",
    );
    // Maintenance on cluster2: a manual NoSelect taint repels the application to cluster1.
    let ran = fleet.kubectl(&[
        "patch",
        "managedcluster",
        "cluster2",
        "-p",
        r#"{"spec":{"taints":[{"effect":"NoSelect","key":"maintenance"}]}}"#,
        "--type=merge",
    ]);
    assert_eq!(
        ran.out().trim(),
        "managedcluster.cluster.open-cluster-management.io/cluster2 patched"
    );
    placements_table(
        &fleet,
        "guestbook-app-placement False Succeedconfigured [cluster1]",
    );

    // tolerationSeconds: the documentation's placement tolerates the unreachable taint for
    // 300 seconds; a copy with 2 seconds (on both clusters) shows what happens when the time
    // is up.
    fleet
        .kubectl(&[
            "patch",
            "managedcluster",
            "cluster2",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/taints"}]"#,
        ])
        .out();
    let tolerating = |name: &str, clusters: u32, seconds: u32| {
        format!(
            "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: {name}
  namespace: argocd
spec:
  numberOfClusters: {clusters}
  tolerations:
    - key: cluster.open-cluster-management.io/unreachable
      operator: Exists
      tolerationSeconds: {seconds}
"
        )
    };
    let ran = fleet.apply(&tolerating("guestbook-app-placement", 1, 300));
    assert_eq!(
        ran.out().trim(),
        "placement.cluster.open-cluster-management.io/guestbook-app-placement configured"
    );
    // (It selects both clusters, so that it starts on cluster1 too.)
    fleet
        .apply(&tolerating("guestbook-app-placement-short", 2, 2))
        .out();
    wait_decided(
        &fleet,
        "argocd",
        "guestbook-app-placement-short",
        "cluster1 cluster2",
    );
    set_available(&fleet, "cluster1", "Unknown");
    fleet.hub_until(
        &[
            "get",
            "managedcluster",
            "cluster1",
            "-o",
            "jsonpath={.spec.taints[*].key}",
        ],
        "the unreachable taint",
        |o| o == "cluster.open-cluster-management.io/unreachable",
    );
    // When the short toleration runs out, that placement moves; the documentation's one
    // keeps tolerating cluster1 (for 5 minutes).
    placements_table(
        &fleet,
        "guestbook-app-placement-short False Succeedconfigured [cluster2]",
    );
    placements_table(
        &fleet,
        "guestbook-app-placement False Succeedconfigured [cluster1]",
    );
}

/// (printer columns of the OCM CRDs): `kubectl get managedcluster` shows
/// `NAME HUB ACCEPTED MANAGED CLUSTER URLS JOINED AVAILABLE AGE`, with `Unknown` for a
/// paused cluster.
#[test]
fn managed_cluster_printer_columns() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-migrate-columns", FleetOptions::new(2).no_agents());
    set_available(&fleet, "cluster1", "Unknown");
    let table = fleet.kubectl(&["get", "managedcluster"]);
    let table = table.out();
    assert_eq!(
        table
            .lines()
            .next()
            .unwrap()
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>(),
        [
            "NAME",
            "HUB ACCEPTED",
            "MANAGED CLUSTER URLS",
            "JOINED",
            "AVAILABLE",
            "AGE"
        ]
    );
    assert_eq!(cell(table, "cluster1", "HUB ACCEPTED"), "true");
    assert_eq!(cell(table, "cluster1", "JOINED"), "True");
    assert_eq!(cell(table, "cluster1", "AVAILABLE"), "Unknown");
    assert_eq!(cell(table, "cluster2", "AVAILABLE"), "True");
}

/// (the hub's ManagedCluster webhook): a taint added by hand gets its `timeAdded`.
#[test]
fn manual_taint_gets_time_added() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-migrate-webhook", FleetOptions::new(2).no_agents());
    fleet
        .kubectl(&[
            "patch",
            "managedcluster",
            "cluster2",
            "-p",
            r#"{"spec":{"taints":[{"effect":"NoSelect","key":"maintenance"}]}}"#,
            "--type=merge",
        ])
        .out();
    let added = fleet.kubectl(&[
        "get",
        "managedcluster",
        "cluster2",
        "-o",
        "jsonpath={.spec.taints[0].timeAdded}",
    ]);
    assert!(added.out().ends_with('Z'), "timeAdded: {:?}", added.stdout);
}
