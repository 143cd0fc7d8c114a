//! `ocm-deploy`'s manifests: they parse as the kinds they claim, kubectl applies them to fake
//! clusters, and `ocm-hub-controller` and `ocm-work-agent` run with exactly the permissions
//! they grant (the fake clusters enforce RBAC as kube-apiserver does): a Placement is
//! scheduled, a ManifestWorkReplicaSet rolls a ConfigMap out to the managed cluster and its
//! deletion removes it again, both elect a leader with their Lease, and no request of either
//! is refused.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Running, kubectl, kubectl_available, kubectl_stdin, scratch};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use ocm_testkit::{FakeCluster, FakeHub, Identity};

const HUB_NS: &str = "open-cluster-management-hub";
const AGENT_NS: &str = "open-cluster-management-agent";

fn documents(yaml: &str) -> Vec<serde_json::Value> {
    yaml.split("\n---\n")
        .map(|d| d.trim_start_matches("---\n"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

fn deploy(args: &[&str]) -> String {
    common::run(env!("CARGO_BIN_EXE_ocm-deploy"), args)
        .out()
        .to_string()
}

#[test]
fn the_manifests_parse_as_their_kinds() {
    for (args, deployment) in [
        (
            &["agent", "--cluster-name", "cluster1", "--replicas", "2"][..],
            "ocm-work-agent",
        ),
        (
            &["hub", "--image", "example.org/ocm-rs:1"][..],
            "ocm-hub-controller",
        ),
    ] {
        let objects = documents(&deploy(args));
        assert!(objects.len() > 5, "{objects:?}");
        for object in &objects {
            let kind = object["kind"].as_str().expect("kind");
            match kind {
                "Deployment" => {
                    let d: Deployment = serde_json::from_value(object.clone()).unwrap();
                    assert_eq!(d.metadata.name.as_deref(), Some(deployment));
                    let spec = d.spec;
                    let pod = spec.template.spec.unwrap();
                    let c = &pod.containers[0];
                    assert_eq!(
                        c.command.as_deref(),
                        Some(&[format!("/usr/local/bin/{deployment}")][..])
                    );
                    let ready = c
                        .readiness_probe
                        .as_ref()
                        .unwrap()
                        .http_get
                        .as_ref()
                        .unwrap();
                    assert_eq!(ready.path.as_deref(), Some("/readyz"));
                    let live = c
                        .liveness_probe
                        .as_ref()
                        .unwrap()
                        .http_get
                        .as_ref()
                        .unwrap();
                    assert_eq!(live.path.as_deref(), Some("/healthz"));
                    assert!(
                        c.args
                            .as_ref()
                            .unwrap()
                            .contains(&"--endpoints-address=:8080".into())
                    );
                    assert_eq!(pod.security_context.unwrap().run_as_non_root, Some(true));
                    if deployment == "ocm-work-agent" {
                        assert_eq!(spec.replicas, Some(2));
                    } else {
                        assert_eq!(c.image.as_deref(), Some("example.org/ocm-rs:1"));
                    }
                }
                "ClusterRole" => {
                    let role: ClusterRole = serde_json::from_value(object.clone()).unwrap();
                    for rule in role.rules.unwrap() {
                        assert!(!rule.verbs.contains(&"*".to_string()), "no wildcard verbs");
                        let resources = rule.resources.unwrap_or_default();
                        assert!(
                            !resources.contains(&"*".to_string()),
                            "no wildcard resources"
                        );
                    }
                }
                "Namespace"
                | "ServiceAccount"
                | "ClusterRoleBinding"
                | "Role"
                | "RoleBinding"
                | "CustomResourceDefinition" => {}
                other => panic!("unexpected kind {other}"),
            }
        }
    }
}

#[test]
fn the_containerfile_ships_what_the_deployments_run_as_non_root() {
    let recipe =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Containerfile")).unwrap();
    let stages: Vec<&str> = recipe.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 2, "multi-stage: {stages:?}");
    assert_eq!(
        stages[1], "FROM scratch",
        "only the static binaries in the image"
    );
    for binary in ["ocm-work-agent", "ocm-hub-controller"] {
        assert!(
            recipe.contains(&format!("--bin {binary}")),
            "{binary} built"
        );
        let yaml = if binary == "ocm-work-agent" {
            deploy(&["agent", "--cluster-name", "c"])
        } else {
            deploy(&["hub"])
        };
        let command = format!("/usr/local/bin/{binary}");
        assert!(yaml.contains(&command), "{command} in the Deployment");
    }
    assert!(
        recipe.contains(
            "COPY --from=build /out/ocm-work-agent /out/ocm-hub-controller /usr/local/bin/"
        )
    );
    assert!(recipe.lines().any(|l| l == "USER 65532:65532"), "non-root");
}

/// Applies `yaml` with kubectl as the administrator.
fn apply(kubeconfig: &Path, yaml: &str) {
    let ran = kubectl_stdin(kubeconfig, &["apply", "-f", "-"], yaml);
    ran.out();
}

/// Polls `check` for up to 60 s; on timeout, the refused requests say which permission
/// was missing.
#[track_caller]
fn wait_until(what: &str, clusters: [&FakeCluster; 2], mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; refused on the hub: {:?}; on the managed cluster: {:?}",
            refused(clusters[0]),
            refused(clusters[1])
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn refused(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.status == 401 || e.status == 403)
        .map(|e| format!("{} {} {}?{}", e.status, e.verb, e.path, e.query))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binaries_run_with_exactly_the_permissions_the_manifests_grant() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("deploy-rbac");
    let fake = FakeHub::with_builder(FakeCluster::builder().authentication(true), 1).unwrap();
    let hub = fake.hub();
    let spoke = fake.cluster("cluster1").unwrap();
    let hub_server = hub.serve_loopback().await.unwrap();
    let spoke_server = spoke.serve_loopback().await.unwrap();
    let (hub_admin, spoke_admin) = (dir.join("hub-admin"), dir.join("spoke-admin"));
    hub_server.write_kubeconfig(&hub_admin).unwrap();
    spoke_server.write_kubeconfig(&spoke_admin).unwrap();

    // kubectl validates client-side first, then applies for real.
    let hub_yaml = deploy(&["hub"]);
    kubectl_stdin(
        &hub_admin,
        &["apply", "--dry-run=client", "-f", "-"],
        &hub_yaml,
    )
    .out();
    apply(&hub_admin, &hub_yaml);
    let agent_yaml = deploy(&["agent", "--cluster-name", "cluster1"]);
    kubectl_stdin(
        &spoke_admin,
        &["apply", "--dry-run=client", "-f", "-"],
        &agent_yaml,
    )
    .out();
    apply(&spoke_admin, &agent_yaml);
    // A stand-in for kube's built-in `admin` ClusterRole (the fake cluster has only the
    // bootstrap roles discovery needs): what the test's ManifestWork carries.
    apply(
        &spoke_admin,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list, watch, create, update, patch, delete]\n",
    );

    // The pods' identities: the ServiceAccounts the manifests bind, and the agent's hub user
    // from registration.
    let hub_sa = Identity::service_account(HUB_NS, ocm_examples::deploy::HUB_SERVICE_ACCOUNT);
    let agent_sa = Identity::service_account(AGENT_NS, ocm_examples::deploy::AGENT_SERVICE_ACCOUNT);
    hub.add_identity(hub_sa.clone()).unwrap();
    spoke.add_identity(agent_sa.clone()).unwrap();
    let (hub_as_controller, hub_as_agent, spoke_as_agent) = (
        dir.join("hub-controller.kubeconfig"),
        dir.join("hub-agent.kubeconfig"),
        dir.join("spoke-agent.kubeconfig"),
    );
    hub_server
        .write_kubeconfig_as(&hub_sa.user, &hub_as_controller)
        .unwrap();
    hub_server
        .write_kubeconfig_as(&FakeHub::agent_user("cluster1"), &hub_as_agent)
        .unwrap();
    spoke_server
        .write_kubeconfig_as(&agent_sa.user, &spoke_as_agent)
        .unwrap();
    hub.journal().clear();
    spoke.journal().clear();

    let log = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let _controller = Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-hub-controller"))
            .arg("--kubeconfig")
            .arg(&hub_as_controller)
            // Outside a pod the Lease namespace is given (in a pod: the pod's namespace).
            .args(["--namespace", HUB_NS])
            .stdout(Stdio::null())
            .stderr(log("hub-controller.log"))
            .spawn()
            .unwrap(),
    );
    let _agent = Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
            .args(["--cluster-name", "cluster1", "--status-sync-interval", "1s"])
            .args(["--namespace", AGENT_NS])
            .arg("--hub-kubeconfig")
            .arg(&hub_as_agent)
            .arg("--spoke-kubeconfig")
            .arg(&spoke_as_agent)
            .stdout(Stdio::null())
            .stderr(log("agent.log"))
            .spawn()
            .unwrap(),
    );

    apply(
        &hub_admin,
        r#"apiVersion: v1
kind: Namespace
metadata:
  name: apps
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata:
  name: default
  namespace: apps
spec:
  clusterSet: default
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: all
  namespace: apps
spec: {}
---
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: demo
  namespace: apps
spec:
  placementRefs:
  - name: all
    rolloutStrategy:
      type: All
  manifestWorkTemplate:
    workload:
      manifests:
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: demo
          namespace: default
        data:
          k: v
"#,
    );
    let get = |kubeconfig: &Path, args: &[&str]| kubectl(kubeconfig, args);
    let both = [hub, spoke];
    wait_until("the ConfigMap on the managed cluster", both, || {
        get(&spoke_admin, &["get", "configmap", "demo", "-n", "default"]).ok()
    });
    wait_until(
        "the replica set counts the cluster as applied",
        both,
        || {
            get(
                &hub_admin,
                &[
                    "get",
                    "manifestworkreplicaset",
                    "demo",
                    "-n",
                    "apps",
                    "-o",
                    "jsonpath={.status.summary.applied}",
                ],
            )
            .stdout
                == "1"
        },
    );
    for (kubeconfig, ns, lease) in [
        (&hub_admin, HUB_NS, "ocm-hub-controller-lock"),
        (&spoke_admin, AGENT_NS, "work-agent-lock"),
    ] {
        wait_until("the Lease", both, || {
            get(kubeconfig, &["get", "lease", lease, "-n", ns]).ok()
        });
    }

    // Deletion: the replica set's works go, the agent deletes what it applied.
    get(
        &hub_admin,
        &[
            "delete",
            "manifestworkreplicaset",
            "demo",
            "-n",
            "apps",
            "--wait=false",
        ],
    )
    .out();
    wait_until("the ConfigMap deleted", both, || {
        !get(&spoke_admin, &["get", "configmap", "demo", "-n", "default"]).ok()
    });
    wait_until("no AppliedManifestWork left", both, || {
        get(&spoke_admin, &["get", "appliedmanifestworks", "-o", "name"])
            .stdout
            .trim()
            .is_empty()
    });
    wait_until("the replica set gone", both, || {
        !get(
            &hub_admin,
            &["get", "manifestworkreplicaset", "demo", "-n", "apps"],
        )
        .ok()
    });

    assert_eq!(refused(hub), Vec::<String>::new(), "refused on the hub");
    assert_eq!(
        refused(spoke),
        Vec::<String>::new(),
        "refused on the managed cluster"
    );
    let _ = std::fs::remove_dir_all(dir);
}
