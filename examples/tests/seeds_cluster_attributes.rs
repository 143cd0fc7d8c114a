//! Acceptance: User Scenarios §4 "Extending managed clusters with custom attributes" (labels
//! and ClusterClaims) and §9 "Register a cluster to hub through proxy server" (its add-on
//! part: an `AddOnDeploymentConfig` with proxy settings referenced from a
//! `ManagedClusterAddOn`), followed with the real kubectl against `ocm-fake-apiserver` +
//! `ocm-hub-controller` + `ocm-work-agent`, and `resource-usage-addon manager` as the add-on
//! manager (the documentation's `my-addon` is any add-on; ours is `resource-usage-collect`).
//!
//! | step | the documentation says the user sees | test |
//! |---|---|---|
//! | §4 labelling a ManagedCluster (`<domain name>/<label name>: <value>`) | placements can select on it | [`labels_extend_the_cluster_model`] |
//! | §4 a ClusterClaim `id.open-cluster-management.io` applied on the managed cluster | `status.clusterClaims` of the ManagedCluster on the hub has it, and later updates | `cluster_claims_are_reported_to_the_hub` |
//! | §9 the `AddOnDeploymentConfig` `addon-proxy-settings`, as written | (the documentation's `caBundle: LS0tLS...LS0tCg==` is a placeholder) | [`addon_proxy_settings_reach_the_agent`]: rejected as kube-apiserver rejects it (`must be of type byte`); with a real bundle it is accepted |
//! | §9 the `ManagedClusterAddOn` referencing it in `spec.configs` | the add-on manager fetches the settings and propagates them to the managed cluster, for example as environment variables by using ManifestWork | same: `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` (and lower-case) in the agent's Deployment, in its ManifestWork and on cluster1; the ManagedClusterAddOn reports the config it uses |
//! | §9 `kubectl -n default describe svc kubernetes \| grep IP:` on the managed cluster | the API server's service IP, for `noProxy` | out of scope: the fake managed clusters serve no `kubernetes` Service |

use crate::common;

use common::{Fleet, FleetOptions};

#[test]
fn labels_extend_the_cluster_model() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-labels", FleetOptions::new(2).no_agents());
    let ran = fleet.kubectl(&[
        "label",
        "managedcluster",
        "cluster2",
        "example.com/region=east",
    ]);
    assert_eq!(
        ran.out().trim(),
        "managedcluster.cluster.open-cluster-management.io/cluster2 labeled"
    );
    fleet
        .clusteradm(&["clusterset", "bind", "default", "--namespace", "default"])
        .out();
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: east
  namespace: default
spec:
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            example.com/region: east
",
        )
        .out();
    fleet.hub_until(
        &[
            "get",
            "placementdecision",
            "-n",
            "default",
            "-l",
            "cluster.open-cluster-management.io/placement=east",
            "-o",
            "jsonpath={.items[*].status.decisions[*].clusterName}",
        ],
        "the labelled cluster selected",
        |out| out == "cluster2",
    );
}

/// (the ClusterClaim reporter of the fake managed clusters): a claim applied on the
/// managed cluster shows up in the ManagedCluster's status on the hub, and so do its updates;
/// placements can select on it.
#[test]
fn cluster_claims_are_reported_to_the_hub() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-claims", FleetOptions::new(1).no_agents());
    let claim = |value: &str| {
        format!(
            "apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata:
  name: id.open-cluster-management.io
spec:
  value: {value}
"
        )
    };
    fleet
        .apply_on("cluster1", &claim("95f91f25-d7a2-4fc3-9237-2ef633d8451c"))
        .out();
    let claims =
        "jsonpath={.status.clusterClaims[?(@.name==\"id.open-cluster-management.io\")].value}";
    fleet.hub_until(
        &["get", "managedcluster", "cluster1", "-o", claims],
        "the claim on the hub",
        |out| out == "95f91f25-d7a2-4fc3-9237-2ef633d8451c",
    );
    fleet.apply_on("cluster1", &claim("another-id")).out();
    fleet.hub_until(
        &["get", "managedcluster", "cluster1", "-o", claims],
        "the updated claim",
        |out| out == "another-id",
    );
    fleet
        .clusteradm(&["clusterset", "bind", "default", "--namespace", "default"])
        .out();
    fleet
        .apply(
            "apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: by-claim
  namespace: default
spec:
  predicates:
    - requiredClusterSelector:
        claimSelector:
          matchExpressions:
            - key: id.open-cluster-management.io
              operator: In
              values: [another-id]
",
        )
        .out();
    fleet.hub_until(
        &[
            "get",
            "placementdecision",
            "-n",
            "default",
            "-l",
            "cluster.open-cluster-management.io/placement=by-claim",
            "-o",
            "jsonpath={.items[*].status.decisions[*].clusterName}",
        ],
        "the claimed cluster selected",
        |out| out == "cluster1",
    );
}

const PROXY_CONFIG: &str = r#"apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata:
  name: addon-proxy-settings
  namespace: cluster1
spec:
  proxyConfig:
    httpProxy: "http://10.0.109.153:3128"
    httpsProxy: "https://10.0.109.153:3129"
    noProxy: ".cluster.local,.svc,10.96.0.1"
    caBundle: LS0tLS...LS0tCg==
"#;

#[test]
fn addon_proxy_settings_reach_the_agent() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-addon-proxy", FleetOptions::new(1));
    // The add-on is installed on the hub: its ClusterManagementAddOn and its manager.
    fleet
        .apply(
            "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata:
  name: resource-usage-collect
spec:
  supportedConfigs:
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
",
        )
        .out();
    let log = std::fs::File::create(fleet.dir.join("addon-manager.log")).unwrap();
    let manager = std::process::Command::new(env!("CARGO_BIN_EXE_resource-usage-addon"))
        .arg("manager")
        .arg("--hub-kubeconfig")
        .arg(&fleet.hub)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start the add-on manager");
    let _manager = common::Running(manager);

    // As written, the placeholder CA bundle is not base64: rejected, as kube-apiserver does.
    let ran = fleet.apply(PROXY_CONFIG);
    assert!(
        ran.err()
            .contains("spec.proxyConfig.caBundle in body must be of type byte"),
        "{}",
        ran.stderr
    );
    // With a CA bundle (base64 of a PEM certificate) it is accepted.
    let bundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";
    let ran = fleet.apply(&PROXY_CONFIG.replace("LS0tLS...LS0tCg==", bundle));
    assert_eq!(
        ran.out().trim(),
        "addondeploymentconfig.addon.open-cluster-management.io/addon-proxy-settings created"
    );
    // The ManagedClusterAddOn references it in spec.configs.
    let ran = fleet.apply(
        "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata:
  name: resource-usage-collect
  namespace: cluster1
spec:
  installNamespace: open-cluster-management-agent-addon
  configs:
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
    name: addon-proxy-settings
    namespace: cluster1
",
    );
    assert_eq!(
        ran.out().trim(),
        "managedclusteraddon.addon.open-cluster-management.io/resource-usage-collect created"
    );

    // The add-on manager reports the config it uses ...
    fleet.hub_until(
        &["get", "managedclusteraddon", "-n", "cluster1", "resource-usage-collect", "-o", "jsonpath={.status.configReferences[0].desiredConfig.name}/{.status.configReferences[0].desiredConfig.namespace} {.status.conditions[?(@.type==\"Configured\")].status}"],
        "the config in use",
        |out| out == "addon-proxy-settings/cluster1 True",
    );
    // ... and propagates the proxy settings as environment variables, by a ManifestWork.
    let env_path =
        "jsonpath={range .spec.template.spec.containers[0].env[*]}{.name}={.value}{\"\\n\"}{end}";
    let expected = [
        "HTTP_PROXY=http://10.0.109.153:3128",
        "http_proxy=http://10.0.109.153:3128",
        "HTTPS_PROXY=https://10.0.109.153:3129",
        "https_proxy=https://10.0.109.153:3129",
        "NO_PROXY=.cluster.local,.svc,10.96.0.1",
        "no_proxy=.cluster.local,.svc,10.96.0.1",
    ];
    let work = fleet.hub_until(
        &["get", "manifestwork", "-n", "cluster1", "addon-resource-usage-collect-deploy-0", "-o",
          "jsonpath={range .spec.workload.manifests[?(@.kind==\"Deployment\")].spec.template.spec.containers[0].env[*]}{.name}={.value}{\"\\n\"}{end}"],
        "the agent's ManifestWork",
        |out| out.contains("HTTP_PROXY"),
    );
    for line in expected {
        assert!(
            work.lines().any(|l| l == line),
            "missing {line} in:\n{work}"
        );
    }
    let env = fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "-n",
            "open-cluster-management-agent-addon",
            "resource-usage-collect-agent",
            "-o",
            env_path,
        ],
        "the agent's Deployment on cluster1",
        |out| out.contains("HTTP_PROXY"),
    );
    for line in expected {
        assert!(env.lines().any(|l| l == line), "missing {line} in:\n{env}");
    }
}
