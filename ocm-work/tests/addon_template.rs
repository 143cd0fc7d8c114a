//! Template addons: an AddOnTemplate running as an addon with no Rust code, its variables,
//! registration and hub permissions, and a template with an undefined variable.

use crate::addon_support;

use addon_support::{Fleet, NS};
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, PostParams};
use serde_json::json;

fn template(addon: &str, args: &str) -> String {
    template_with(addon, args, "")
}

/// `permissions` is YAML for `registration[0].kubeClient` (e.g. its `hubPermissions`).
fn template_with(addon: &str, args: &str, permissions: &str) -> String {
    let kube_client = if permissions.is_empty() {
        "{}".to_string()
    } else {
        permissions.to_string()
    };
    format!(
        r#"apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {{name: {addon}-v1}}
spec:
  addonName: {addon}
  agentSpec:
    workload:
      manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {addon}-agent, namespace: default}}
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: {addon}}}}}
          template:
            metadata: {{labels: {{app: {addon}}}}}
            spec:
              serviceAccountName: {addon}-sa
              containers:
              - name: agent
                image: quay.io/open-cluster-management/addon-examples:latest
                args: [{args}]
      - apiVersion: v1
        kind: ServiceAccount
        metadata: {{name: {addon}-sa, namespace: default}}
      - apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {{name: {addon}-agent}}
        roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}
        subjects: [{{kind: ServiceAccount, name: {addon}-sa, namespace: default}}]
  registration:
  - type: KubeClient
    kubeClient: {kube_client}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {addon}-hub-reader}}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: addon.open-cluster-management.io/v1beta1
kind: ClusterManagementAddOn
metadata: {{name: {addon}}}
spec:
  defaultConfigs:
  - {{group: addon.open-cluster-management.io, resource: addontemplates, name: {addon}-v1}}
  - {{group: addon.open-cluster-management.io, resource: addondeploymentconfigs, namespace: {NS}, name: {addon}-config}}
---
apiVersion: addon.open-cluster-management.io/v1beta1
kind: AddOnDeploymentConfig
metadata: {{name: {addon}-config, namespace: {NS}}}
spec:
  agentInstallNamespace: {addon}-agents
  customizedVariables:
  - {{name: LOG_LEVEL, value: "4"}}
  nodePlacement:
    nodeSelector: {{node-role.kubernetes.io/infra: ""}}
---
apiVersion: addon.open-cluster-management.io/v1beta1
kind: ManagedClusterAddOn
metadata: {{name: {addon}, namespace: cluster1}}
spec: {{}}
"#
    )
}

async fn can(
    fleet: &Fleet,
    user: &str,
    groups: &[&str],
    ns: &str,
    verb: &str,
    resource: &str,
) -> bool {
    let api: Api<SubjectAccessReview> = Api::all(fleet.client.clone());
    let review: SubjectAccessReview = serde_json::from_value(json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": groups,
                 "resourceAttributes": {"namespace": ns, "verb": verb, "group": "", "resource": resource}}
    }))
    .unwrap();
    api.create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap()
        .allowed
}

#[tokio::test]
async fn a_template_runs_as_an_addon() {
    let fleet = Fleet::new(2, |m| m.with_templates(true)).await;
    fleet.apply(&template(
        "hello-template",
        r#""--cluster={{CLUSTER_NAME}}", "--v={{LOG_LEVEL}}", "--hub={{HUB_KUBECONFIG}}""#,
    ));

    fleet.rounds(3).await;
    assert_eq!(
        fleet
            .cond("cluster1", "hello-template", "RegistrationApplied")
            .await,
        ("True".into(), "SetPermissionApplied".into())
    );
    let st = fleet
        .mca("cluster1", "hello-template")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(st.namespace.as_deref(), Some("hello-template-agents"));
    let user = "system:open-cluster-management:cluster:cluster1:addon:hello-template:agent:hello-template-agent";
    let reg = serde_json::to_value(&st.registrations).unwrap();
    assert_eq!(reg[0]["type"], "kubeClient");
    assert_eq!(reg[0]["kubeClient"]["subject"]["user"], user);
    assert_eq!(st.supported_configs.unwrap().len(), 2);

    // The rendered agent.
    let d = fleet
        .spoke_object(
            "cluster1",
            "apps",
            "v1",
            "deployments",
            "hello-template-agents",
            "hello-template-agent",
        )
        .expect("agent deployment in the configured namespace");
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["args"],
        json!([
            "--cluster=cluster1",
            "--v=4",
            "--hub=/managed/hub-kubeconfig/kubeconfig"
        ])
    );
    assert_eq!(
        pod["nodeSelector"],
        json!({"node-role.kubernetes.io/infra": ""})
    );
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "hello-template-hub-kubeconfig"
    );
    let env: Vec<&str> = pod["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(env, ["HUB_KUBECONFIG", "CLUSTER_NAME", "INSTALL_NAMESPACE"]);
    let crb = fleet
        .spoke_object(
            "cluster1",
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "",
            "hello-template-agent",
        )
        .unwrap();
    assert_eq!(crb["subjects"][0]["namespace"], "hello-template-agents");
    assert_eq!(
        fleet.cond("cluster1", "hello-template", "Available").await,
        ("True".into(), "ProbeAvailable".into())
    );
    assert_eq!(
        fleet
            .cond("cluster1", "hello-template", "Progressing")
            .await,
        ("False".into(), "Completed".into())
    );
    // The template's own cluster is not touched: no addon there.
    assert!(fleet.works("cluster2").await.is_empty());
}

/// The template's `CurrentCluster` hub permission, under upstream's RoleBinding name
/// `open-cluster-management:<addon>:clusterrole:agent`.
#[tokio::test]
async fn template_hub_permissions_bind_the_agent_in_its_cluster_namespace() {
    let fleet = Fleet::new(2, |m| m.with_templates(true)).await;
    fleet.apply(&template_with(
        "hello-template",
        r#""--v=1""#,
        "{hubPermissions: [{type: CurrentCluster, currentCluster: {clusterRoleName: hello-template-hub-reader}}]}",
    ));
    // First round: the registrations are written, the binding waits for the agent's identity.
    fleet.round().await;
    let c = fleet
        .condition("cluster1", "hello-template", "RegistrationApplied")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        (
            "False",
            "PermissionConfigPending",
            "registration subject not ready"
        )
    );
    fleet.rounds(2).await;
    assert_eq!(
        fleet
            .cond("cluster1", "hello-template", "RegistrationApplied")
            .await,
        ("True".into(), "SetPermissionApplied".into())
    );
    let binding = Api::<RoleBinding>::namespaced(fleet.client.clone(), "cluster1")
        .get("open-cluster-management:hello-template:clusterrole:agent")
        .await
        .unwrap();
    assert_eq!(
        binding.metadata.labels.as_ref().unwrap()["open-cluster-management.io/addon-name"],
        "hello-template"
    );
    assert_eq!(
        binding.metadata.owner_references.as_ref().unwrap()[0].kind,
        "ManagedClusterAddOn"
    );
    let user = "system:open-cluster-management:cluster:cluster1:addon:hello-template:agent:hello-template-agent";
    assert!(can(&fleet, user, &[], "cluster1", "list", "configmaps").await);
    assert!(!can(&fleet, user, &[], "cluster2", "list", "configmaps").await);
}

#[tokio::test]
async fn an_undefined_variable_becomes_a_condition_with_strict_variables() {
    let fleet = Fleet::new(1, |m| {
        m.with_templates(true).with_strict_template_variables(true)
    })
    .await;
    fleet.apply(&template("good", r#""--v={{LOG_LEVEL}}""#));
    fleet.apply(&template("bad", r#""--zone={{ZONE}}""#));
    let out = fleet.rounds(4).await;
    assert!(out["good"].failed.is_empty(), "{:?}", out["good"].failed);
    assert_eq!(out["bad"].failed.len(), 1);
    let c = fleet
        .condition("cluster1", "bad", "ManifestApplied")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ManifestWorkApplyFailed")
    );
    assert_eq!(
        c.message,
        "failed to get manifest from agent interface: manifest 0 (Deployment bad-agent) of addon template bad-v1 uses undefined variables: {{ZONE}}"
    );
    assert!(fleet.work("cluster1", "addon-bad-deploy-0").await.is_none());
    assert_eq!(fleet.cond("cluster1", "good", "Available").await.0, "True");
}

#[tokio::test]
async fn without_strict_variables_an_undefined_variable_is_empty_as_upstream() {
    let fleet = Fleet::new(1, |m| m.with_templates(true)).await;
    fleet.apply(&template("lax", r#""--zone={{ZONE}}""#));
    fleet.rounds(4).await;
    let d = fleet
        .spoke_object(
            "cluster1",
            "apps",
            "v1",
            "deployments",
            "lax-agents",
            "lax-agent",
        )
        .unwrap();
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["--zone="])
    );
}
