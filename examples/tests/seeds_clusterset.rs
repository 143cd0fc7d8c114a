//! Acceptance: the ManagedClusterSet concept page, followed as written with `ocm-clusteradm`
//! (for `clusteradm`) and the real kubectl against `ocm-fake-apiserver` + `ocm-hub-controller`.
//!
//! The documentation's hub has one cluster, `managed1`; ours is `cluster1`. Its first
//! listing shows `default` empty, from a hub where the cluster joined before the
//! `DefaultClusterSet` feature put it there; with the feature on, as upstream ships it (and as
//! the "Default ManagedClusterSet" section says), cluster1 starts in `default`, so `default`
//! lists it until it is moved.
//!
//! | step | the documentation says the user sees | test |
//! |---|---|---|
//! | `clusteradm create clusterset example-clusterset`, `get clustersets` | a tree with `default`, `example-clusterset` (`No ManagedCluster selected`) and `global` (`1 ManagedClusters selected`), each with `BoundNamespace` and `Status` | [`operate_cluster_sets_with_clusteradm`] |
//! | `clusteradm clusterset set example-clusterset --clusters managed1` | `example-clusterset`: `1 ManagedClusters selected` | same |
//! | `clusteradm clusterset bind example-clusterset --namespace default` | `example-clusterset`: `BoundNamespace default` | same |
//! | `kubectl get managedclusterset example-clusterset -o yaml` | v1beta2, `selectorType: ExclusiveClusterSetLabel`, `ClusterSetEmpty` False / `ClustersSelected` / `1 ManagedClusters selected` | same |
//! | a `LabelSelector` set (`vendor: OpenShift`) | `ClusterSetEmpty` False, `1 ManagedClusters selected` | same |
//! | `kubectl get managedclustersetbinding example-clusterset -n default -oyaml` | `clusterSet: example-clusterset`, `Bound` True / `ClusterSetBound` | same |
//! | Default ManagedClusterSet | a cluster that names no set is added to `default`; `clusterset set` moves it | `a_cluster_naming_no_set_joins_default` |
//! | Global ManagedClusterSet | `labelSelector: {}`, `selectorType: LabelSelector`, every cluster selected | same |
//! | adding a cluster needs `managedclusters` update and `managedclustersets/join` | without them the hub refuses; with the documented ClusterRole it accepts | `joining_a_set_needs_the_join_permission` |
//! | binding needs `managedclustersets/bind` | without it the hub refuses; with the documented ClusterRole it accepts | `binding_a_set_needs_the_bind_permission` |

use crate::common;

use common::{Fleet, FleetOptions, kubectl_stdin};

/// The `<Status>` of `set` in a `clusteradm get clustersets` tree.
fn status_of(tree: &str, set: &str) -> String {
    let at = tree
        .find(&format!("── <{set}>\n"))
        .unwrap_or_else(|| panic!("no {set} in:\n{tree}"));
    let rest = &tree[at..];
    let line = rest
        .lines()
        .skip(1)
        .take(4)
        .find(|l| l.contains("<Status>"))
        .unwrap_or_else(|| panic!("no Status for {set} in:\n{tree}"));
    line.split("<Status>")
        .nth(1)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn bound_of(tree: &str, set: &str) -> String {
    let at = tree.find(&format!("── <{set}>\n")).expect("set in tree");
    let line = tree[at..]
        .lines()
        .skip(1)
        .take(4)
        .find(|l| l.contains("<BoundNamespace>"))
        .expect("BoundNamespace");
    line.split("<BoundNamespace>")
        .nth(1)
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn operate_cluster_sets_with_clusteradm() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-clusterset", FleetOptions::new(1).no_agents());

    // $ clusteradm create clusterset example-clusterset
    let ran = fleet.clusteradm(&["create", "clusterset", "example-clusterset"]);
    assert_eq!(ran.out(), "Clusterset example-clusterset is created\n");
    // $ clusteradm get clustersets
    let tree = fleet.clusteradm_until(&["get", "clustersets"], "the new set reported empty", |t| {
        t.contains("<example-clusterset>")
            && status_of(t, "example-clusterset") == "No ManagedCluster selected"
    });
    assert!(
        tree.starts_with("<ManagedClusterSet>\n├── <default>\n"),
        "{tree}"
    );
    assert_eq!(status_of(&tree, "global"), "1 ManagedClusters selected");
    assert_eq!(status_of(&tree, "default"), "1 ManagedClusters selected");
    assert_eq!(bound_of(&tree, "example-clusterset"), "");

    // $ clusteradm clusterset set example-clusterset --clusters managed1
    let ran = fleet.clusteradm(&[
        "clusterset",
        "set",
        "example-clusterset",
        "--clusters",
        "cluster1",
    ]);
    assert_eq!(
        ran.out(),
        "Cluster cluster1 is set, from ClusterSet default to Clusterset example-clusterset\n"
    );
    let tree = fleet.clusteradm_until(
        &["get", "clustersets"],
        "cluster1 in example-clusterset",
        |t| {
            status_of(t, "example-clusterset") == "1 ManagedClusters selected"
                && status_of(t, "default") == "No ManagedCluster selected"
        },
    );
    assert_eq!(status_of(&tree, "global"), "1 ManagedClusters selected");
    assert!(tree.contains("│   ├── <Clusters> [cluster1]\n"), "{tree}");

    // $ clusteradm clusterset bind example-clusterset --namespace default
    let ran = fleet.clusteradm(&[
        "clusterset",
        "bind",
        "example-clusterset",
        "--namespace",
        "default",
    ]);
    assert_eq!(
        ran.out(),
        "Clusterset example-clusterset is bound to Namespace default\n"
    );
    let tree = fleet.clusteradm(&["get", "clustersets"]);
    assert_eq!(bound_of(tree.out(), "example-clusterset"), "default");
    assert_eq!(bound_of(&tree.stdout, "default"), "");
    assert_eq!(bound_of(&tree.stdout, "global"), "");

    // $ kubectl get managedclusterset example-clusterset -o yaml
    let yaml = fleet.kubectl(&[
        "get",
        "managedclusterset",
        "example-clusterset",
        "-o",
        "yaml",
    ]);
    let set: serde_json::Value = serde_saphyr::from_str(yaml.out()).unwrap();
    assert_eq!(
        set["apiVersion"],
        "cluster.open-cluster-management.io/v1beta2"
    );
    assert_eq!(
        set["spec"]["clusterSelector"]["selectorType"],
        "ExclusiveClusterSetLabel"
    );
    let empty = &set["status"]["conditions"][0];
    assert_eq!(
        (
            &empty["type"],
            &empty["status"],
            &empty["reason"],
            &empty["message"]
        ),
        (
            &"ClusterSetEmpty".into(),
            &"False".into(),
            &"ClustersSelected".into(),
            &"1 ManagedClusters selected".into()
        )
    );

    // A LabelSelector set, as the second example.
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: example-openshift-clusterset
spec:
  clusterSelector:
    labelSelector:
      matchLabels:
        vendor: OpenShift
    selectorType: LabelSelector
",
        )
        .out();
    fleet.hub_until(
        &[
            "get",
            "managedclusterset",
            "example-openshift-clusterset",
            "-o",
            "jsonpath={.status.conditions[0].reason}: {.status.conditions[0].message}",
        ],
        "the empty LabelSelector set",
        |out| out == "NoClusterMatched: No ManagedCluster selected",
    );
    fleet
        .kubectl(&["label", "managedcluster", "cluster1", "vendor=OpenShift"])
        .out();
    fleet.hub_until(
        &["get", "managedclusterset", "example-openshift-clusterset", "-o", "jsonpath={.status.conditions[0].type} {.status.conditions[0].status} {.status.conditions[0].reason}: {.status.conditions[0].message}"],
        "the LabelSelector set selecting cluster1",
        |out| out == "ClusterSetEmpty False ClustersSelected: 1 ManagedClusters selected",
    );

    // $ kubectl get managedclustersetbinding example-clusterset -n default -oyaml
    let yaml = fleet.kubectl(&[
        "get",
        "managedclustersetbinding",
        "example-clusterset",
        "-n",
        "default",
        "-oyaml",
    ]);
    let binding: serde_json::Value = serde_saphyr::from_str(yaml.out()).unwrap();
    assert_eq!(
        binding["apiVersion"],
        "cluster.open-cluster-management.io/v1beta2"
    );
    assert_eq!(binding["spec"]["clusterSet"], "example-clusterset");
    let bound = &binding["status"]["conditions"][0];
    assert_eq!(
        (
            &bound["type"],
            &bound["status"],
            &bound["reason"],
            &bound["message"]
        ),
        (
            &"Bound".into(),
            &"True".into(),
            &"ClusterSetBound".into(),
            &"".into()
        )
    );

    // Global ManagedClusterSet: every cluster.
    let yaml = fleet.kubectl(&["get", "managedclusterset", "global", "-o", "yaml"]);
    let global: serde_json::Value = serde_saphyr::from_str(yaml.out()).unwrap();
    assert_eq!(
        global["spec"]["clusterSelector"]["selectorType"],
        "LabelSelector"
    );
    assert_eq!(
        global["spec"]["clusterSelector"]["labelSelector"],
        serde_json::json!({})
    );
    fleet.hub_until(
        &["get", "managedclusterset", "global", "-o", "jsonpath={.status.conditions[0].type} {.status.conditions[0].status} {.status.conditions[0].message}"],
        "global selecting every cluster",
        |out| out == "ClusterSetEmpty False 1 ManagedClusters selected",
    );
}

/// (the hub's ManagedCluster mutating webhook): a cluster registered without a
/// cluster-set label is put into `default`; `clusteradm clusterset set` moves it.
#[test]
fn a_cluster_naming_no_set_joins_default() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-clusterset-default", FleetOptions::new(1).no_agents());
    fleet
        .clusteradm(&["create", "clusterset", "example-clusterset"])
        .out();
    // Default ManagedClusterSet: a cluster that names no set lands in `default`.
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster-new
spec:
  hubAcceptsClient: true
",
        )
        .out();
    fleet.hub_until(
        &[
            "get",
            "managedcluster",
            "cluster-new",
            "-o",
            "jsonpath={.metadata.labels.cluster\\.open-cluster-management\\.io/clusterset}",
        ],
        "cluster-new in default",
        |out| out == "default",
    );
    // clusteradm clusterset set target-clusterset --clusters cluster-name
    let ran = fleet.clusteradm(&[
        "clusterset",
        "set",
        "example-clusterset",
        "--clusters",
        "cluster-new",
    ]);
    assert_eq!(
        ran.out(),
        "Cluster cluster-new is set, from ClusterSet default to Clusterset example-clusterset\n"
    );
    fleet.clusteradm_until(
        &["get", "clustersets", "-o", "table"],
        "cluster-new in example-clusterset",
        |t| common::cell(t, "example-clusterset", "STATUS") == "1 ManagedClusters selected",
    );
}

/// The documentation's ClusterRole for adding clusters to a set, bound to `alice`.
const JOIN_ROLE: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: clusterset-join
rules:
  - apiGroups:
      - cluster.open-cluster-management.io
    resources:
      - managedclusters
    verbs:
      - update
  - apiGroups:
      - cluster.open-cluster-management.io
    resources:
      - managedclustersets/join
    verbs:
      - create
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: clusterset-join-alice
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: clusterset-join
subjects:
  - kind: User
    apiGroup: rbac.authorization.k8s.io
    name: alice
";

/// The documentation's ClusterRole for binding sets, bound to `alice`.
const BIND_ROLE: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: clusterset-bind
rules:
  - apiGroups:
      - cluster.open-cluster-management.io
    resources:
      - managedclustersets/bind
    verbs:
      - create
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: clusterset-bind-alice
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: clusterset-bind
subjects:
  - kind: User
    apiGroup: rbac.authorization.k8s.io
    name: alice
";

/// `alice` may read clusters and sets and manage bindings, nothing else.
const ALICE_BASICS: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: alice-basics
rules:
  - apiGroups: [cluster.open-cluster-management.io]
    resources: [managedclusters, managedclustersets]
    verbs: [get, list, watch, patch]
  - apiGroups: [cluster.open-cluster-management.io]
    resources: [managedclustersetbindings]
    verbs: [get, list, create, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: alice-basics
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: alice-basics
subjects:
  - kind: User
    apiGroup: rbac.authorization.k8s.io
    name: alice
";

fn authenticated_fleet(test: &str) -> Fleet {
    let mut options = FleetOptions::new(1).no_agents();
    options.server_args = vec!["--authentication".into()];
    let fleet = Fleet::start(test, options);
    fleet
        .clusteradm(&["create", "clusterset", "example-clusterset"])
        .out();
    fleet.apply(ALICE_BASICS).out();
    fleet
}

/// (the hub's ManagedCluster validating webhook): moving a cluster into a set
/// needs `managedclustersets/join` on the set.
#[test]
fn joining_a_set_needs_the_join_permission() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = authenticated_fleet("seeds-clusterset-join");
    let label = [
        "--as",
        "alice",
        "label",
        "managedcluster",
        "cluster1",
        "cluster.open-cluster-management.io/clusterset=example-clusterset",
        "--overwrite",
    ];
    let denied = fleet.kubectl(&label);
    assert!(
        denied.err().contains(
            "user \"alice\" cannot add/remove a ManagedCluster to/from ManagedClusterSet"
        ),
        "{}",
        denied.stderr
    );
    fleet.apply(JOIN_ROLE).out();
    let ran = fleet.kubectl(&label);
    assert_eq!(
        ran.out().trim(),
        "managedcluster.cluster.open-cluster-management.io/cluster1 labeled"
    );
}

/// (the hub's ManagedClusterSetBinding validating webhook): binding a set to a
/// namespace needs `managedclustersets/bind` on the set.
#[test]
fn binding_a_set_needs_the_bind_permission() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = authenticated_fleet("seeds-clusterset-bind");
    let binding = "apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata:
  name: example-clusterset
  namespace: default
spec:
  clusterSet: example-clusterset
";
    let denied = kubectl_stdin(&fleet.hub, &["--as", "alice", "create", "-f", "-"], binding);
    assert!(
        denied
            .err()
            .contains("user \"alice\" is not allowed to bind cluster set \"example-clusterset\""),
        "{}",
        denied.stderr
    );
    fleet.apply(BIND_ROLE).out();
    let ran = kubectl_stdin(&fleet.hub, &["--as", "alice", "create", "-f", "-"], binding);
    assert_eq!(
        ran.out().trim(),
        "managedclustersetbinding.cluster.open-cluster-management.io/example-clusterset created"
    );
}
