//! Acceptance: "Deploy Kubernetes resources to the managed clusters" (User Scenarios §1, also
//! published on its own), followed as written with `ocm-clusteradm` (for `clusteradm`) and
//! the real kubectl, against `ocm-fake-apiserver` + `ocm-hub-controller` + one
//! `ocm-work-agent` per managed cluster.
//!
//! | step | the documentation says the user sees | test |
//! |---|---|---|
//! | `clusteradm create work my-first-work -f <file> --clusters cluster1` | a ManifestWork `my-first-work` in namespace `cluster1` | [`deploy_resources_to_the_managed_clusters`] |
//! | `kubectl get manifestwork -A` | `NAMESPACE NAME AGE` / `cluster1 my-first-work …` | same |
//! | `kubectl get deployment` on cluster1 | `nginx-deployment`, 3 of 3 ready | same (ready replicas read with `-o jsonpath`); the `READY UP-TO-DATE AVAILABLE` columns: `deploy_printer_columns_on_the_managed_cluster` |
//! | `kubectl get sa my-sa` on cluster1 | `my-sa` | same; the `SECRETS` column: `deploy_printer_columns_on_the_managed_cluster` |
//! | `.status.conditions` | `Applied` and `Available` true | same |
//! | `.status.resourceStatus` | per resource `Applied`/`Available` (`AppliedManifestComplete`, `ResourceAvailable`) and `resourceMeta` (the Deployment at ordinal 1) | same |
//! | `clusteradm get works my-first-work --cluster cluster1` | the detailed status | same |
//! | `kubectl --context kind-cluster1 get pod` | three `nginx-deployment-…` pods `Running` | `deploy_pods_and_contexts_named_after_clusters` |
//! | `kubectl get appliedmanifestwork` on cluster1 | `<hub hash>-my-first-work`, the same record after an update | [`deploy_resources_to_the_managed_clusters`] |
//! | `clusteradm create work … --overwrite` | the change reaches cluster1 | same |
//! | finalizers | `cluster.open-cluster-management.io/manifest-work-cleanup` on the ManifestWork, `cluster.open-cluster-management.io/applied-manifest-work-cleanup` on the AppliedManifestWork | same |
//! | a resource held in `Terminating` | ManifestWork and AppliedManifestWork stay until it is gone | same |
//! | `kubectl delete manifestwork my-first-work -n cluster1` | the resources are removed from cluster1 | same |
//! | `kubectl apply -f` the ManifestWork (the second way) | the same result | same |
//! | troubleshooting: `kubectl get crd …` | the ManifestWork CRD on the hub, the AppliedManifestWork CRD on the cluster | same |
//! | `kubectl -n open-cluster-management-agent get pod` | the agents' pods | out of scope: our agents are processes, not pods |

use crate::common;

use common::{Fleet, FleetOptions, cells};

/// The documentation's sample manifests.
const SAMPLE: &str = r#"apiVersion: v1
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

/// The documentation's ManifestWork, for `kubectl apply`.
const MANIFEST_WORK: &str = r#"apiVersion: work.open-cluster-management.io/v1
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
"#;

fn work_jsonpath(fleet: &Fleet, path: &str) -> String {
    fleet
        .kubectl(&[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "my-first-work",
            "-o",
            &format!("jsonpath={path}"),
        ])
        .out()
        .to_string()
}

#[test]
fn deploy_resources_to_the_managed_clusters() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-deploy", FleetOptions::new(1));
    let sample = fleet.file("sample.yaml", SAMPLE);

    // clusteradm create work my-first-work -f <file> --clusters <cluster name>
    let ran = fleet.clusteradm(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &sample,
        "--clusters",
        "cluster1",
    ]);
    assert_eq!(ran.out(), "create work my-first-work in cluster cluster1\n");

    // $ kubectl get manifestwork -A
    let table = fleet.kubectl(&["get", "manifestwork", "-A"]);
    let rows = cells(table.out());
    assert_eq!(rows[0], ["NAMESPACE", "NAME", "AGE"]);
    assert_eq!(rows[1][..2], ["cluster1", "my-first-work"]);

    // The service account and the deployment reach cluster1, and the deployment becomes ready.
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "nginx-deployment",
            "-o",
            "jsonpath={.status.readyReplicas}/{.spec.replicas}",
        ],
        "nginx-deployment 3/3 on cluster1",
        |out| out == "3/3",
    );
    let deployments = fleet.kubectl_on("cluster1", &["get", "deployment"]);
    assert_eq!(cells(deployments.out())[1][0], "nginx-deployment");
    let sa = fleet.kubectl_on("cluster1", &["get", "sa", "my-sa"]);
    assert_eq!(cells(sa.out())[1][0], "my-sa");

    // The aggregated conditions: Applied and Available.
    fleet.hub_until(
        &["get", "manifestwork", "-n", "cluster1", "my-first-work", "-o",
          r#"jsonpath={.status.conditions[?(@.type=="Applied")].status} {.status.conditions[?(@.type=="Available")].status}"#],
        "Applied and Available",
        |out| out == "True True",
    );
    // Per resource: conditions and resourceMeta, as in the documentation.
    let deployment = r#"{.status.resourceStatus.manifests[?(@.resourceMeta.kind=="Deployment")]"#;
    let meta = work_jsonpath(
        &fleet,
        &format!(
            "{deployment}.resourceMeta.group}} {deployment}.resourceMeta.kind}} {deployment}.resourceMeta.name}} {deployment}.resourceMeta.namespace}} {deployment}.resourceMeta.ordinal}} {deployment}.resourceMeta.resource}} {deployment}.resourceMeta.version}}"
        ),
    );
    assert_eq!(
        meta,
        "apps Deployment nginx-deployment default 1 deployments v1"
    );
    let conds = work_jsonpath(
        &fleet,
        &format!(
            r#"{deployment}.conditions[?(@.type=="Applied")].reason}} {deployment}.conditions[?(@.type=="Applied")].message}}|{deployment}.conditions[?(@.type=="Available")].reason}} {deployment}.conditions[?(@.type=="Available")].message}}"#
        ),
    );
    assert_eq!(
        conds,
        "AppliedManifestComplete Apply manifest complete|ResourceAvailable Resource is available"
    );

    // clusteradm get works my-first-work --cluster <cluster name>: the detailed status.
    let tree = fleet.clusteradm(&["get", "works", "my-first-work", "--cluster", "cluster1"]);
    let tree = tree.out();
    for expected in [
        "<ManifestWork>\n└── <cluster1>\n    └── <my-first-work>\n",
        "├── <Applied> True\n",
        "├── <Available> True\n",
        "├── <Number of Manifests> 2\n",
        "<deployments>",
        "<default/nginx-deployment> applied",
        "<serviceaccounts>",
        "<default/my-sa> applied",
        "<Applied> True (AppliedManifestComplete: Apply manifest complete)",
        "<Available> True (ResourceAvailable: Resource is available)",
    ] {
        assert!(tree.contains(expected), "missing {expected:?} in:\n{tree}");
    }

    // $ kubectl --context kind-cluster1 get appliedmanifestwork: <hash>-my-first-work
    let applied = fleet.kubectl_on(
        "cluster1",
        &[
            "get",
            "appliedmanifestwork",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    );
    let applied_name = applied.out().to_string();
    let (hash, name) = applied_name.split_once('-').expect("<hash>-<work name>");
    assert_eq!(name, "my-first-work");
    assert_eq!(hash.len(), 64, "{applied_name}");
    assert!(
        hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{applied_name}"
    );

    // Updating: change the manifests and apply them with --overwrite.
    let updated = fleet.file(
        "sample.yaml",
        &SAMPLE
            .replace("nginx:1.14.2", "nginx:1.27")
            .replace("replicas: 3", "replicas: 2"),
    );
    let ran = fleet.clusteradm(&[
        "create",
        "work",
        "my-first-work",
        "-f",
        &updated,
        "--clusters",
        "cluster1",
        "--overwrite",
    ]);
    assert_eq!(ran.out(), "update work my-first-work in cluster cluster1\n");
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "nginx-deployment",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas}",
        ],
        "the update on cluster1",
        |out| out == "nginx:1.27 2",
    );
    // The same AppliedManifestWork records the updated work.
    let applied = fleet.kubectl_on(
        "cluster1",
        &[
            "get",
            "appliedmanifestwork",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    );
    assert_eq!(applied.out(), applied_name);

    // Deleting: the finalizers the documentation names protect both records.
    assert_eq!(
        work_jsonpath(&fleet, "{.metadata.finalizers}"),
        r#"["cluster.open-cluster-management.io/manifest-work-cleanup"]"#
    );
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "appliedmanifestwork",
                    &applied_name,
                    "-o",
                    "jsonpath={.metadata.finalizers}"
                ]
            )
            .out(),
        r#"["cluster.open-cluster-management.io/applied-manifest-work-cleanup"]"#
    );
    // A deployed resource held in Terminating (a finalizer of its own) keeps both records.
    fleet
        .kubectl_on(
            "cluster1",
            &[
                "patch",
                "deployment",
                "nginx-deployment",
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
            ],
        )
        .out();
    // kubectl delete manifestwork my-first-work -n <cluster name>
    fleet
        .kubectl(&[
            "delete",
            "manifestwork",
            "my-first-work",
            "-n",
            "cluster1",
            "--wait=false",
        ])
        .out();
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "nginx-deployment",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ],
        "nginx-deployment Terminating",
        |out| !out.is_empty(),
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        !work_jsonpath(&fleet, "{.metadata.deletionTimestamp}").is_empty(),
        "the ManifestWork stays while a resource is Terminating"
    );
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "appliedmanifestwork",
                    "-o",
                    "jsonpath={.items[*].metadata.name}"
                ]
            )
            .out(),
        applied_name,
        "the AppliedManifestWork stays while a resource is Terminating"
    );
    // Once the resource is gone, so are both records.
    fleet
        .kubectl_on(
            "cluster1",
            &[
                "patch",
                "deployment",
                "nginx-deployment",
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ],
        )
        .out();
    fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-A",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the ManifestWork gone",
        str::is_empty,
    );
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "appliedmanifestwork",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the AppliedManifestWork gone",
        str::is_empty,
    );
    let gone = fleet.kubectl_on("cluster1", &["get", "sa", "my-sa"]);
    assert!(gone.err().contains("NotFound"), "{}", gone.stderr);

    // The second way: kubectl apply -f with the ManifestWork itself.
    let ran = fleet.apply(MANIFEST_WORK);
    assert_eq!(
        ran.out().trim(),
        "manifestwork.work.open-cluster-management.io/my-first-work created"
    );
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "nginx-deployment",
            "-o",
            "jsonpath={.status.readyReplicas}",
        ],
        "nginx-deployment from kubectl apply",
        |out| out == "3",
    );
    fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "my-first-work",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Applied")].status}"#,
        ],
        "Applied",
        |out| out == "True",
    );

    // Troubleshooting: the CRDs are installed where the documentation says.
    let crd = fleet.kubectl(&[
        "get",
        "crd",
        "manifestworks.work.open-cluster-management.io",
    ]);
    assert_eq!(
        cells(crd.out())[1][0],
        "manifestworks.work.open-cluster-management.io"
    );
    let crd = fleet.kubectl_on(
        "cluster1",
        &[
            "get",
            "crd",
            "appliedmanifestworks.work.open-cluster-management.io",
        ],
    );
    assert_eq!(
        cells(crd.out())[1][0],
        "appliedmanifestworks.work.open-cluster-management.io"
    );
}

/// (printer columns for built-in kinds): `kubectl get deployment` shows
/// `READY UP-TO-DATE AVAILABLE AGE` with `3/3 3 3`, `kubectl get sa` shows `SECRETS`.
#[test]
fn deploy_printer_columns_on_the_managed_cluster() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-deploy-columns", FleetOptions::new(1));
    let sample = fleet.file("sample.yaml", SAMPLE);
    fleet
        .clusteradm(&[
            "create",
            "work",
            "my-first-work",
            "-f",
            &sample,
            "--clusters",
            "cluster1",
        ])
        .out();
    let out = fleet.spoke_until(
        "cluster1",
        &["get", "deployment"],
        "nginx-deployment 3/3",
        |out| out.contains("3/3"),
    );
    let rows = cells(&out);
    assert_eq!(rows[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(rows[1][..4], ["nginx-deployment", "3/3", "3", "3"]);
    let sa = fleet.kubectl_on("cluster1", &["get", "sa", "my-sa"]);
    let rows = cells(sa.out());
    assert_eq!(rows[0], ["NAME", "SECRETS", "AGE"]);
    assert_eq!(rows[1][0], "my-sa");
}

/// (a context per kubeconfig named after its cluster, and the pods a Deployment
/// runs): `kubectl --context <cluster> get pod` lists three `nginx-deployment-…` pods,
/// `1/1 Running`, and `kubectl get manifestwork -A --context <hub>` works on the hub.
#[test]
fn deploy_pods_and_contexts_named_after_clusters() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-deploy-pods", FleetOptions::new(1));
    let sample = fleet.file("sample.yaml", SAMPLE);
    fleet
        .clusteradm(&[
            "create",
            "work",
            "my-first-work",
            "-f",
            &sample,
            "--clusters",
            "cluster1",
        ])
        .out();
    let hub_context = common::kubectl(&fleet.hub, &["config", "current-context"]);
    assert_eq!(hub_context.out().trim(), "hub");
    let works = fleet.kubectl(&["get", "manifestwork", "-A", "--context", "hub"]);
    assert_eq!(cells(works.out())[1][..2], ["cluster1", "my-first-work"]);
    let pods = fleet.spoke_until(
        "cluster1",
        &["--context", "cluster1", "get", "pod"],
        "three nginx pods",
        |out| out.lines().filter(|l| l.contains("Running")).count() == 3,
    );
    let rows = cells(&pods);
    assert_eq!(rows[0], ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    for row in &rows[1..] {
        assert!(row[0].starts_with("nginx-deployment-"), "{pods}");
        assert_eq!(row[1..3], ["1/1", "Running"]);
    }
}
