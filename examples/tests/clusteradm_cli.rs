//! `ocm-clusteradm` end to end: the binary against the testkit's loopback hub, checked
//! against clusteradm's messages, output columns and exit codes.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{Ran, cells, clusteradm, scratch};
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_api::cluster::v1beta1::PlacementDecision;
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::{FakeCluster, FakeHub, LoopbackServer};
use serde_json::json;

/// A hub with two clusters on loopback, its kubeconfig and a scratch directory.
struct Hub {
    fake: FakeHub,
    _server: LoopbackServer,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

impl Hub {
    async fn start(test: &str) -> Self {
        let dir = scratch(test);
        let fake = FakeHub::with_builder(FakeCluster::builder().strict_namespaces(true), 2)
            .expect("fake hub");
        let server = fake.hub().serve_loopback().await.expect("loopback");
        let kubeconfig = dir.join("hub.kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Self {
            fake,
            _server: server,
            kubeconfig,
            dir,
        }
    }

    fn run(&self, args: &[&str]) -> Ran {
        clusteradm(&self.kubeconfig, args)
    }

    fn client(&self) -> kube::Client {
        self.fake.hub().client()
    }

    fn apply(&self, yaml: &str) {
        self.fake.hub().apply_yaml(yaml).expect("apply");
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write file");
        path.to_str().expect("utf-8").to_string()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const MANIFESTS: &str = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {namespace: default, name: my-sa}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: cfg}\n";

async fn decide(hub: &Hub, placement: &str, clusters: &[&str]) {
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.client(), "default");
    let name = format!("{placement}-decision-1");
    if decisions.get_opt(&name).await.unwrap().is_none() {
        let pd: PlacementDecision = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default",
                "labels": {"cluster.open-cluster-management.io/placement": placement}}
        }))
        .unwrap();
        decisions.create(&PostParams::default(), &pd).await.unwrap();
    }
    let list: Vec<_> = clusters
        .iter()
        .map(|c| json!({"clusterName": c, "reason": ""}))
        .collect();
    decisions
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": list}})),
        )
        .await
        .unwrap();
}

async fn work_namespaces(hub: &Hub, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Api::<ManifestWork>::all(hub.client())
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|w| w.metadata.name.as_deref() == Some(name))
        .filter_map(|w| w.metadata.namespace)
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_work_argument_errors_name_the_flags_and_exit_1() {
    let hub = Hub::start("cli-args").await;
    let file = hub.file("m.yaml", MANIFESTS);
    let cases: &[(&[&str], &str)] = &[
        (
            &["create", "work", "-f", &file, "--clusters", "cluster1"],
            "error: work name must be specified",
        ),
        (
            &[
                "create",
                "work",
                "a",
                "b",
                "-f",
                &file,
                "--clusters",
                "cluster1",
            ],
            "error: only one work name can be specified",
        ),
        (
            &["create", "work", "w", "-f", &file],
            "error: --clusters or --placement must be specified",
        ),
        (
            &[
                "create",
                "work",
                "w",
                "-f",
                &file,
                "--clusters",
                "cluster1",
                "--placement",
                "default/p",
            ],
            "error: --clusters and --placement can only specify one",
        ),
        (
            &["create", "work", "w", "-f", &file, "--placement", "p"],
            "error: the name of the placement p must be in the format of <namespace>/<name>",
        ),
        (
            &["create", "work", "w", "--clusters", "cluster1"],
            "error: manifest files must be specified",
        ),
        (
            &[
                "create",
                "work",
                "w",
                "-f",
                &file,
                "--clusters",
                "cluster1,,cluster2",
            ],
            "error: --clusters cannot be set as an empty value",
        ),
        (
            &[
                "create",
                "work",
                "w",
                "-f",
                &file,
                "--clusters",
                "cluster1",
                "-r",
            ],
            "error: --placement must be specified when enable --replicaset",
        ),
        (
            &["get", "works"],
            "error: either --cluster or --clusters needs to be set",
        ),
        (
            &["get", "clusters", "extra"],
            "error: there should be no argument",
        ),
        (
            &["clusterset", "bind", "--namespace", "default"],
            "error: the name of the clusterset must be specified",
        ),
        (
            &["create", "clusterset"],
            "error: the name of the clusterset must be specified",
        ),
        (
            &["clusterset", "set", "default"],
            "error: at least one cluster (--clusters) or namespace (--namespaces) must be specified",
        ),
    ];
    for (args, expected) in cases {
        let ran = hub.run(args);
        assert_eq!(ran.err().trim(), *expected, "{args:?}");
        assert!(ran.stdout.is_empty(), "{args:?}: {}", ran.stdout);
    }
    // A missing file and a bad manifest name the file.
    let ran = hub.run(&[
        "create",
        "work",
        "w",
        "-f",
        "/nonexistent.yaml",
        "--clusters",
        "cluster1",
    ]);
    assert!(
        ran.err().starts_with("error: ") && ran.stderr.contains("/nonexistent.yaml"),
        "{}",
        ran.stderr
    );
    let bad = hub.file("bad.yaml", "kind: ConfigMap\nmetadata: {name: x}\n");
    let ran = hub.run(&["create", "work", "w", "-f", &bad, "--clusters", "cluster1"]);
    assert!(
        ran.err().contains("bad.yaml") && ran.stderr.contains("apiVersion"),
        "{}",
        ran.stderr
    );
    // Usage errors exit with 1 too, as kubectl's; --help succeeds and says what the tool is.
    let ran = hub.run(&["get", "nothing"]);
    assert_eq!(ran.code, Some(1), "{ran:?}");
    let help = common::run(env!("CARGO_BIN_EXE_ocm-clusteradm"), &["--help"]);
    assert!(
        help.out().starts_with(
            "Manage ManifestWorks, ManagedClusters, ManagedClusterSets and Placements on an OCM hub"
        ),
        "{}",
        help.stdout
    );
    assert!(work_namespaces(&hub, "w").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_work_by_clusters_then_overwrite() {
    let hub = Hub::start("cli-clusters").await;
    let file = hub.file("m.yaml", MANIFESTS);
    let ran = hub.run(&[
        "create",
        "work",
        "w1",
        "-f",
        &file,
        "--clusters",
        "cluster2,cluster1",
    ]);
    assert_eq!(
        ran.out(),
        "create work w1 in cluster cluster1\ncreate work w1 in cluster cluster2\n"
    );
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), "cluster1");
    assert_eq!(works.get("w1").await.unwrap().spec.manifests().len(), 2);
    // Again without --overwrite: clusteradm says so and succeeds.
    let ran = hub.run(&["create", "work", "w1", "-f", &file, "-c", "cluster1"]);
    assert_eq!(ran.out(), "work w1 in cluster cluster1 already exists\n");
    // With --overwrite the manifests are replaced.
    let one = hub.file(
        "one.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: only}\n",
    );
    let ran = hub.run(&[
        "create",
        "work",
        "w1",
        "-f",
        &one,
        "--clusters",
        "cluster1",
        "--overwrite",
    ]);
    assert_eq!(ran.out(), "update work w1 in cluster cluster1\n");
    assert_eq!(works.get("w1").await.unwrap().spec.manifests().len(), 1);
    // A directory is read recursively.
    let dir = hub.dir.join("manifests/nested");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.yaml"), MANIFESTS).unwrap();
    let ran = hub.run(&[
        "create",
        "work",
        "w2",
        "-f",
        hub.dir.join("manifests").to_str().unwrap(),
        "--clusters",
        "cluster1",
    ]);
    assert_eq!(ran.out(), "create work w2 in cluster cluster1\n");
    assert_eq!(works.get("w2").await.unwrap().spec.manifests().len(), 2);
    // A cluster without a namespace: the API server's message, as kubectl prints it.
    let ran = hub.run(&["create", "work", "w1", "-f", &file, "--clusters", "nowhere"]);
    let err = ran.err();
    assert!(err.starts_with("Error from server (NotFound): "), "{err}");
    assert!(
        err.contains("\"nowhere\" not found") && !err.contains("Status {"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_work_by_placement_follows_the_decisions_and_overwrite_removes_dropped_clusters() {
    let hub = Hub::start("cli-placement").await;
    let file = hub.file("m.yaml", MANIFESTS);
    let ran = hub.run(&[
        "create",
        "work",
        "w",
        "-f",
        &file,
        "--placement",
        "default/missing",
    ]);
    assert_eq!(
        ran.err().trim(),
        "Error from server (NotFound): placements.cluster.open-cluster-management.io \"missing\" not found"
    );
    hub.apply("apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: placement1, namespace: default}\nspec: {}\n");
    decide(&hub, "placement1", &["cluster1", "cluster2"]).await;
    let ran = hub.run(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &file,
        "--placement",
        "default/placement1",
    ]);
    assert_eq!(
        ran.out(),
        "create work my-first-work in cluster cluster1\ncreate work my-first-work in cluster cluster2\n"
    );
    assert_eq!(
        work_namespaces(&hub, "my-first-work").await,
        ["cluster1", "cluster2"]
    );

    // The placement now selects cluster1 only. Without --overwrite nothing is removed.
    decide(&hub, "placement1", &["cluster1"]).await;
    let ran = hub.run(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &file,
        "--placement",
        "default/placement1",
    ]);
    assert_eq!(ran.out(), "");
    assert_eq!(
        work_namespaces(&hub, "my-first-work").await,
        ["cluster1", "cluster2"]
    );
    // With --overwrite the work of the dropped cluster is deleted, as clusteradm does.
    let ran = hub.run(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &file,
        "--placement",
        "default/placement1",
        "--overwrite",
    ]);
    assert_eq!(ran.out(), "delete work my-first-work in cluster cluster2\n");
    assert_eq!(work_namespaces(&hub, "my-first-work").await, ["cluster1"]);
    // Back to both: the work is created again where it is missing.
    decide(&hub, "placement1", &["cluster1", "cluster2"]).await;
    let ran = hub.run(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &file,
        "--placement",
        "default/placement1",
        "--overwrite",
    ]);
    assert_eq!(ran.out(), "create work my-first-work in cluster cluster2\n");

    // --replicaset creates a ManifestWorkReplicaSet for the placement instead.
    let ran = hub.run(&[
        "create",
        "work",
        "rs",
        "-f",
        &file,
        "--placement",
        "default/placement1",
        "-r",
    ]);
    assert_eq!(
        ran.out(),
        "create manifestworkreplicaset rs in namespace default\n"
    );
    let ran = hub.run(&[
        "create",
        "work",
        "rs",
        "-f",
        &file,
        "--placement",
        "default/placement1",
        "-r",
    ]);
    assert_eq!(
        ran.out(),
        "manifestworkreplicaset rs in namespace default already exists\n"
    );
    let ran = hub.run(&[
        "create",
        "work",
        "rs",
        "-f",
        &file,
        "--placement",
        "default/placement1",
        "-r",
        "--overwrite",
    ]);
    assert_eq!(
        ran.out(),
        "update manifestworkreplicaset rs in namespace default\n"
    );
    let rs: Api<ocm_api::work::v1alpha1::ManifestWorkReplicaSet> =
        Api::namespaced(hub.client(), "default");
    let rs = rs.get("rs").await.unwrap();
    assert_eq!(rs.spec.placement_refs[0].name, "placement1");
    assert_eq!(rs.manifests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_works_shows_the_detailed_status_per_resource() {
    let hub = Hub::start("cli-get-works").await;
    let file = hub.file("m.yaml", MANIFESTS);
    hub.run(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &file,
        "--clusters",
        "cluster1",
    ])
    .out();
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), "cluster1");
    let cond = |t: &str, reason: &str, message: &str| {
        json!({"type": t, "status": "True", "reason": reason, "message": message,
               "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1})
    };
    let status = json!({"status": {
        "conditions": [cond("Applied", "AppliedManifestWorkComplete", "Apply manifest work complete"),
                       cond("Available", "ResourcesAvailable", "All resources are available")],
        "resourceStatus": {"manifests": [
            {"resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "ServiceAccount",
                "resource": "serviceaccounts", "name": "my-sa", "namespace": "default"},
             "conditions": [cond("Applied", "AppliedManifestComplete", "Apply manifest complete"),
                            cond("Available", "ResourceAvailable", "Resource is available")]},
            {"resourceMeta": {"ordinal": 1, "group": "", "version": "v1", "kind": "ConfigMap",
                "resource": "configmaps", "name": "cfg", "namespace": "default"},
             "conditions": [cond("Applied", "AppliedManifestComplete", "Apply manifest complete")],
             "statusFeedback": {"values": [
                {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": 3}},
                {"name": "isAvailable", "fieldValue": {"type": "String", "string": "True"}}]}}
        ]}
    }});
    works
        .patch_status(
            "my-first-work",
            &PatchParams::default(),
            &Patch::Merge(status),
        )
        .await
        .unwrap();
    let ran = hub.run(&["get", "works", "my-first-work", "--cluster", "cluster1"]);
    assert_eq!(
        ran.out(),
        "<ManifestWork>
└── <cluster1>
    └── <my-first-work>
        ├── <Applied> True
        ├── <Available> True
        ├── <Number of Manifests> 2
        └── <Resources>
            ├── <configmaps>
            │   └── <default/cfg> applied
            │       ├── <Conditions>
            │       │   └── <Applied> True (AppliedManifestComplete: Apply manifest complete)
            │       └── <Feedback>
            │           ├── <ReadyReplicas> 3
            │           └── <isAvailable> True
            └── <serviceaccounts>
                └── <default/my-sa> applied
                    └── <Conditions>
                        ├── <Applied> True (AppliedManifestComplete: Apply manifest complete)
                        └── <Available> True (ResourceAvailable: Resource is available)
"
    );
    let ran = hub.run(&["get", "works", "--clusters", "cluster1", "-o", "table"]);
    assert_eq!(
        ran.out(),
        "NAME            CLUSTER    NUMBER OF MANIFESTS   APPLIED   AVAILABLE\n\
         my-first-work   cluster1   2                     True      True\n"
    );
    let ran = hub.run(&["get", "works", "--cluster", "cluster1", "-o", "yaml"]);
    assert!(
        ran.out().contains("kind: ManifestWork") && ran.stdout.contains("name: my-first-work"),
        "{}",
        ran.stdout
    );
    // A cluster with no works prints the bare tree; an unknown cluster or work is an error.
    assert_eq!(
        hub.run(&["get", "works", "--cluster", "cluster2"]).out(),
        "<ManifestWork>\n"
    );
    let ran = hub.run(&["get", "works", "--cluster", "nowhere"]);
    assert_eq!(
        ran.err().trim(),
        "Error from server (NotFound): managedclusters.cluster.open-cluster-management.io \"nowhere\" not found"
    );
    let ran = hub.run(&["get", "works", "gone", "--cluster", "cluster1"]);
    assert_eq!(
        ran.err().trim(),
        "Error from server (NotFound): manifestworks.work.open-cluster-management.io \"gone\" not found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_work_waits_until_it_is_gone() {
    let hub = Hub::start("cli-delete").await;
    let file = hub.file("m.yaml", MANIFESTS);
    hub.run(&[
        "create",
        "work",
        "w",
        "-f",
        &file,
        "--clusters",
        "cluster1,cluster2",
    ])
    .out();
    let ran = hub.run(&["delete", "work", "w", "--cluster", "cluster1"]);
    assert_eq!(ran.out(), "work w in cluster cluster1 is deleted\n");
    let ran = hub.run(&["delete", "work", "w", "--cluster", "cluster1"]);
    assert_eq!(ran.out(), "work w not found or is already deleted\n");
    // A finalizer nobody removes: --force takes it off.
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), "cluster2");
    works
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
        )
        .await
        .unwrap();
    let ran = hub.run(&["delete", "work", "w", "--cluster", "cluster2", "--force"]);
    assert_eq!(ran.out(), "work w in cluster cluster2 is deleted\n");
    assert!(work_namespaces(&hub, "w").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_clustersets_and_placements() {
    let hub = Hub::start("cli-sets").await;
    let ran = hub.run(&["get", "clusters", "-o", "table"]);
    assert_eq!(
        ran.out(),
        "NAME       ACCEPTED   AVAILABLE   CLUSTERSET   CPU   MEMORY   KUBERNETES VERSION\n\
         cluster1   true       True        default      8     32Gi     v1.33.0\n\
         cluster2   true       True        default      8     32Gi     v1.33.0\n"
    );
    let ran = hub.run(&["get", "clusters"]);
    assert!(ran.out().starts_with("<ManagedCluster>\n├── <cluster1>\n│   ├── <Accepted> true\n│   ├── <Available> True\n│   ├── <Capacity>\n│   │   ├── <Cpu> 8\n│   │   └── <Memory> 32Gi\n"), "{}", ran.stdout);
    assert_eq!(
        hub.run(&["create", "clusterset", "example-clusterset"])
            .out(),
        "Clusterset example-clusterset is created\n"
    );
    assert_eq!(
        hub.run(&["create", "clusterset", "example-clusterset"])
            .out(),
        "Clusterset example-clusterset is already created\n"
    );
    let ran = hub.run(&[
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
    let ran = hub.run(&[
        "clusterset",
        "set",
        "example-clusterset",
        "--clusters",
        "cluster1",
    ]);
    assert_eq!(
        ran.out(),
        "Cluster cluster1 is already in Clusterset example-clusterset\n"
    );
    let ran = hub.run(&[
        "get",
        "clusters",
        "--clusterset",
        "example-clusterset",
        "-o",
        "table",
    ]);
    assert_eq!(
        cells(ran.out())
            .iter()
            .skip(1)
            .map(|r| r[0].clone())
            .collect::<Vec<_>>(),
        ["cluster1"]
    );
    let ran = hub.run(&["clusterset", "set", "nope", "--clusters", "cluster1"]);
    assert!(
        ran.err().starts_with("Error from server (NotFound): "),
        "{}",
        ran.stderr
    );
    let ran = hub.run(&[
        "clusterset",
        "set",
        "example-clusterset",
        "--clusters",
        "nowhere",
    ]);
    assert!(
        ran.err().contains("\"nowhere\" not found"),
        "{}",
        ran.stderr
    );

    hub.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n");
    let ran = hub.run(&[
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
    let ran = hub.run(&[
        "clusterset",
        "bind",
        "example-clusterset",
        "--namespace",
        "default",
    ]);
    assert_eq!(
        ran.out(),
        "Clusterset example-clusterset is already bound to Namespace default\n"
    );
    let ran = hub.run(&["get", "clustersets", "-o", "table"]);
    let table = cells(ran.out());
    assert_eq!(
        ran.stdout.lines().next().unwrap(),
        "NAME                 BOUND NAMESPACES   STATUS   MANAGED NAMESPACES"
    );
    assert_eq!(table[2][..2], ["example-clusterset", "default"]);
    let ran = hub.run(&["get", "clustersets"]);
    assert!(ran.out().contains("├── <example-clusterset>\n│   ├── <BoundNamespace> default\n│   ├── <Clusters> [cluster1]\n"), "{}", ran.stdout);
    let ran = hub.run(&[
        "clusterset",
        "set",
        "example-clusterset",
        "--namespaces",
        "team-a,team-a",
    ]);
    assert!(
        ran.out().contains(
            "Added 1 managed namespace(s): team-a\nTotal managed namespaces in clusterset: 1\n"
        ),
        "{}",
        ran.stdout
    );
    let ran = hub.run(&[
        "clusterset",
        "unbind",
        "example-clusterset",
        "--namespace",
        "default",
    ]);
    assert_eq!(
        ran.out(),
        "Clusterset example-clusterset is unbind from namespace default\n"
    );

    // Placements: status and reason of the first condition, and the decided clusters.
    hub.apply("apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: placement1, namespace: default}\nspec: {clusterSets: [default]}\n");
    decide(&hub, "placement1", &["cluster2"]).await;
    let placements: Api<ocm_api::cluster::v1beta1::Placement> =
        Api::namespaced(hub.client(), "default");
    placements
        .patch_status("placement1", &PatchParams::default(), &Patch::Merge(json!({"status": {
            "numberOfSelectedClusters": 1,
            "conditions": [
                {"type": "PlacementMisconfigured", "status": "False", "reason": "Succeedconfigured", "message": "Placement configurations check pass", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled", "message": "All cluster decisions scheduled", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})))
        .await
        .unwrap();
    let ran = hub.run(&["get", "placements", "-otable"]);
    assert_eq!(
        ran.out(),
        "NAME         STATUS   REASON              SELETEDCLUSTERS\nplacement1   False    Succeedconfigured   [cluster2]\n"
    );
    let ran = hub.run(&["get", "placements", "placement1", "-n", "default"]);
    assert_eq!(
        ran.out(),
        "<Placement>
└── <placement1>
    ├── <ClusterSet> [default]
    ├── <Namespace> default
    ├── <PlacementDecision> [cluster2]
    └── <Status>
        ├── <Conditions>
        │   ├── <PlacementConditionMisconfigured> false
        │   └── <PlacementConditionSatisfied> true
        └── <NumberOfSelectedClusters> 1
"
    );
    let ran = hub.run(&["get", "placements", "-n", "nowhere"]);
    assert!(
        ran.err()
            .starts_with("Error from server (NotFound): namespaces"),
        "{}",
        ran.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_pipes_unreachable_servers_and_non_hubs() {
    let hub = Hub::start("cli-pipes").await;
    let file = hub.file("m.yaml", MANIFESTS);
    let names: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    for name in &names {
        hub.run(&[
            "create",
            "work",
            name,
            "-f",
            &file,
            "--clusters",
            "cluster1",
        ])
        .out();
    }
    // The reader goes away before anything is written (`... | true`), and after the first
    // line (`... | head -1`): no panic, exit code 0.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-clusteradm"))
        .args([
            "--kubeconfig",
            hub.kubeconfig.to_str().unwrap(),
            "get",
            "works",
            "--cluster",
            "cluster1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = format!(
        "set -o pipefail; {} --kubeconfig {} get works --cluster cluster1 | head -1",
        env!("CARGO_BIN_EXE_ocm-clusteradm"),
        hub.kubeconfig.display()
    );
    let ran = common::run("bash", &["-c", &script]);
    assert_eq!(ran.out(), "<ManifestWork>\n");
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);

    // A server that is not there: one line, no Debug dump.
    let dead = hub.dir.join("dead.kubeconfig");
    let text = std::fs::read_to_string(&hub.kubeconfig).unwrap();
    let port = hub._server.addr().port().to_string();
    std::fs::write(&dead, text.replace(&port, "1")).unwrap();
    let ran = clusteradm(&dead, &["get", "clusters"]);
    let err = ran.err();
    assert!(
        err.starts_with("error: ") && err.lines().count() == 1,
        "{err}"
    );
    assert!(
        !err.contains("Status {") && !err.contains("panicked"),
        "{err}"
    );

    // A cluster without the OCM APIs is not a hub.
    let plain = FakeCluster::new();
    let server = plain.serve_loopback().await.unwrap();
    let kubeconfig = hub.dir.join("plain.kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let ran = clusteradm(&kubeconfig, &["get", "clusters"]);
    assert_eq!(
        ran.err().trim(),
        "error: hub oriented command should not running against non-hub cluster"
    );
}
