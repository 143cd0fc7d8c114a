//! Acceptance: the ManifestWork concept page ("Work Distribution / ManifestWork", published
//! twice, in its current and an older version), followed as written with the real kubectl
//! against `ocm-fake-apiserver` + `ocm-work-agent`. The documentation leaves the cluster
//! namespace open (`<target managed cluster>`); we use `cluster1`. Each group of steps has its
//! own fleet of one managed cluster.
//!
//! | step | the documentation says the user sees | test |
//! |---|---|---|
//! | `hello-work-demo` (a Deployment) | `Applied` (`AppliedManifestWorkComplete`, `Apply manifest work complete`) and `Available` (`ResourcesAvailable`, `All resources are available`); per manifest `AppliedManifestComplete` / `Apply manifest complete`, `ResourceAvailable` / `Resource is available`, `resourceMeta` `apps/v1 deployments Deployment default/hello`, ordinal 0 | [`status_tracking_and_feedback`] |
//! | feedback rules `WellKnownStatus` and the JSONPath `isAvailable` | `ReadyReplicas 1`, `Replicas 1`, `AvailableReplicas 1` (Integer), `isAvailable "True"` (String) | same |
//! | `deleteOption: Orphan` | the resources stay after the ManifestWork is deleted | [`delete_options`] |
//! | `SelectivelyOrphan` (the Service `default/helloworld`) | the Service stays, the Deployment goes | same |
//! | two ManifestWorks with the same Deployment, one deleted | the Deployment stays, owned by the other | [`resource_race_and_server_side_apply`] |
//! | `ServerSideApply`, then `hello-work-replica-patch` (force, field manager `work-agent-another`, `replicas: 3`) | the second work owns `replicas` | same |
//! | `hello-work-demo` updated with another `replicas` | a conflict condition; the manifest is not updated | same |
//! | `permission-set` (an aggregated ClusterRole; a ClusterRole and its ClusterRoleBinding for `klusterlet-work-sa`) | applied to the cluster | [`permissions_and_immutable_fields`] |
//! | the Job `pi` without `spec.selector` | `AppliedManifestFailed` | same: it applies once and fails at the agent's next full apply (its periodic resync; the test restarts the agent to get there now) |
//! | fix 1: `manualSelector: true` with our own labels (`exmaple-job-1`) | applied | same |
//! | fix 2: `updateStrategy: ServerSideApply` | applied, also at every later apply | same |
//! | executor `default/executor1` without permission on the managed cluster | not applied | [`dynamic_identity_authorization`] |
//! | permission granted on the managed cluster | applied | same |
//! | a hub user without `execute-as` on `system:serviceaccount:default:executor1` | the hub refuses the ManifestWork; with the documented Role it accepts it | `execute_as_is_checked_on_the_hub` |

use crate::common;

use common::{Fleet, FleetOptions};

const HELLO: &str = r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
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
"#;

const FEEDBACK: &str = r#"  manifestConfigs:
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
"#;

fn jsonpath(fleet: &Fleet, work: &str, path: &str) -> String {
    fleet
        .kubectl(&[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            work,
            "-o",
            &format!("jsonpath={path}"),
        ])
        .out()
        .to_string()
}

fn applied(fleet: &Fleet, work: &str, expected: &str) -> String {
    fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            work,
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Applied")].status}"#,
        ],
        &format!("{work} Applied={expected}"),
        |out| out == expected,
    )
}

fn condition(fleet: &Fleet, work: &str, type_: &str) -> (String, String, String) {
    let value: serde_json::Value = serde_json::from_str(&jsonpath(
        fleet,
        work,
        &format!(r#"{{.status.conditions[?(@.type=="{type_}")]}}"#),
    ))
    .unwrap_or_default();
    let s = |k: &str| value[k].as_str().unwrap_or_default().to_string();
    (s("status"), s("reason"), s("message"))
}

#[test]
fn status_tracking_and_feedback() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-mw-status", FleetOptions::new(1));
    fleet.apply(HELLO).out();
    applied(&fleet, "hello-work-demo", "True");
    fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "hello-work-demo",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Available")].status}"#,
        ],
        "Available",
        |o| o == "True",
    );
    assert_eq!(
        condition(&fleet, "hello-work-demo", "Applied"),
        (
            "True".into(),
            "AppliedManifestWorkComplete".into(),
            "Apply manifest work complete".into()
        )
    );
    assert_eq!(
        condition(&fleet, "hello-work-demo", "Available"),
        (
            "True".into(),
            "ResourcesAvailable".into(),
            "All resources are available".into()
        )
    );
    let manifest: serde_json::Value = serde_json::from_str(&jsonpath(
        &fleet,
        "hello-work-demo",
        "{.status.resourceStatus.manifests[0]}",
    ))
    .unwrap();
    assert_eq!(
        manifest["resourceMeta"],
        serde_json::json!({"group": "apps", "kind": "Deployment", "name": "hello", "namespace": "default",
                           "ordinal": 0, "resource": "deployments", "version": "v1"})
    );
    let cond = |t: &str| {
        let c = manifest["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == t)
            .unwrap();
        (
            c["status"].clone(),
            c["reason"].clone(),
            c["message"].clone(),
        )
    };
    assert_eq!(
        cond("Applied"),
        (
            "True".into(),
            "AppliedManifestComplete".into(),
            "Apply manifest complete".into()
        )
    );
    assert_eq!(
        cond("Available"),
        (
            "True".into(),
            "ResourceAvailable".into(),
            "Resource is available".into()
        )
    );

    // Fine-grained field values: the feedback rules.
    fleet.apply(&format!("{HELLO}{FEEDBACK}")).out();
    let values = fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "hello-work-demo",
            "-o",
            "jsonpath={.status.resourceStatus.manifests[0].statusFeedback.values}",
        ],
        "the feedback values",
        |out| out.contains("isAvailable"),
    );
    let values: serde_json::Value = serde_json::from_str(&values).unwrap();
    assert_eq!(
        values,
        serde_json::json!([
            {"fieldValue": {"integer": 1, "type": "Integer"}, "name": "ReadyReplicas"},
            {"fieldValue": {"integer": 1, "type": "Integer"}, "name": "Replicas"},
            {"fieldValue": {"integer": 1, "type": "Integer"}, "name": "AvailableReplicas"},
            {"fieldValue": {"string": "True", "type": "String"}, "name": "isAvailable"},
        ])
    );
}

#[test]
fn delete_options() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-mw-delete", FleetOptions::new(1));
    // Orphan: the resources stay.
    let orphan = HELLO.replace("name: hello-work-demo", "name: orphan-work")
        + "  deleteOption:\n    propagationPolicy: Orphan\n";
    fleet.apply(&orphan).out();
    applied(&fleet, "orphan-work", "True");
    fleet
        .kubectl(&["delete", "manifestwork", "-n", "cluster1", "orphan-work"])
        .out();
    fleet.hub_until(
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "orphan-work gone",
        str::is_empty,
    );
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "deployment",
                    "hello",
                    "-o",
                    "jsonpath={.metadata.name}"
                ]
            )
            .out(),
        "hello",
        "an orphaned resource stays"
    );
    fleet
        .kubectl_on("cluster1", &["delete", "deployment", "hello"])
        .out();

    // SelectivelyOrphan: the Service helloworld stays, the Deployment goes.
    let selective = r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: selective-delete-work
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
      - apiVersion: v1
        kind: Service
        metadata:
          name: helloworld
          namespace: default
        spec:
          selector:
            app: hello
          ports:
            - port: 80
  deleteOption:
    propagationPolicy: SelectivelyOrphan
    selectivelyOrphans:
      orphaningRules:
      - group: ""
        resource: services
        namespace: default
        name: helloworld
"#;
    fleet.apply(selective).out();
    applied(&fleet, "selective-delete-work", "True");
    fleet
        .kubectl(&[
            "delete",
            "manifestwork",
            "-n",
            "cluster1",
            "selective-delete-work",
        ])
        .out();
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "the Deployment removed",
        str::is_empty,
    );
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "service",
                    "helloworld",
                    "-o",
                    "jsonpath={.metadata.name}"
                ]
            )
            .out(),
        "helloworld",
        "the selectively orphaned Service stays"
    );
}

#[test]
fn resource_race_and_server_side_apply() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start("seeds-mw-race", FleetOptions::new(1));
    // Two works with the same Deployment; deleting one keeps it, the other still owns it.
    fleet.apply(HELLO).out();
    fleet
        .apply(&HELLO.replace("name: hello-work-demo", "name: hello-work-twin"))
        .out();
    applied(&fleet, "hello-work-demo", "True");
    applied(&fleet, "hello-work-twin", "True");
    fleet
        .kubectl(&[
            "delete",
            "manifestwork",
            "-n",
            "cluster1",
            "hello-work-twin",
        ])
        .out();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let owners = fleet.kubectl_on(
        "cluster1",
        &[
            "get",
            "deployment",
            "hello",
            "-o",
            "jsonpath={.metadata.ownerReferences[*].kind}",
        ],
    );
    assert_eq!(
        owners.out(),
        "AppliedManifestWork",
        "the Deployment stays, owned by the remaining work"
    );
    fleet
        .kubectl(&[
            "delete",
            "manifestwork",
            "-n",
            "cluster1",
            "hello-work-demo",
        ])
        .out();
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "hello removed",
        str::is_empty,
    );

    // 1. hello-work-demo with ServerSideApply.
    let ssa = format!(
        "{HELLO}  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: hello
      updateStrategy:
        type: ServerSideApply
"
    );
    fleet.apply(&ssa).out();
    applied(&fleet, "hello-work-demo", "True");
    // 2. Another work, ServerSideApply with field manager work-agent-another, owns replicas.
    let patch = r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
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
"#;
    fleet.apply(patch).out();
    applied(&fleet, "hello-work-replica-patch", "True");
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "deployment",
            "hello",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        "replicas 3",
        |o| o == "3",
    );
    let managers = fleet.kubectl_on(
        "cluster1",
        &[
            "get",
            "deployment",
            "hello",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ],
    );
    assert!(
        managers.out().split(' ').any(|m| m == "work-agent-another"),
        "{}",
        managers.stdout
    );
    assert!(
        managers.stdout.split(' ').any(|m| m == "work-agent"),
        "{}",
        managers.stdout
    );
    // 3. hello-work-demo now sets another replicas value: a conflict, and no update.
    fleet
        .apply(&ssa.replace(
            "        spec:\n          selector:",
            "        spec:\n          replicas: 2\n          selector:",
        ))
        .out();
    applied(&fleet, "hello-work-demo", "False");
    let message = jsonpath(
        &fleet,
        "hello-work-demo",
        r#"{.status.resourceStatus.manifests[0].conditions[?(@.type=="Applied")].message}"#,
    );
    assert!(
        message.contains("conflict")
            && message.contains("work-agent-another")
            && message.contains(".spec.replicas"),
        "{message}"
    );
    assert_eq!(
        jsonpath(
            &fleet,
            "hello-work-demo",
            r#"{.status.resourceStatus.manifests[0].conditions[?(@.type=="Applied")].reason}"#
        ),
        "AppliedManifestFailed"
    );
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "deployment",
                    "hello",
                    "-o",
                    "jsonpath={.spec.replicas}"
                ]
            )
            .out(),
        "3"
    );
}

const JOB: &str = r#"apiVersion: work.open-cluster-management.io/v1
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
"#;

#[test]
fn permissions_and_immutable_fields() {
    if !common::kubectl_available() {
        return;
    }
    let mut fleet = Fleet::start("seeds-mw-job", FleetOptions::new(1));
    // Permission setting: an aggregated ClusterRole, and a ClusterRole bound to
    // klusterlet-work-sa, both delivered by ManifestWorks.
    let option1 = r#"apiVersion: work.open-cluster-management.io/v1
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
"#;
    fleet.apply(option1).out();
    applied(&fleet, "permission-set", "True");
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &[
                    "get",
                    "clusterrole",
                    "open-cluster-management:klusterlet-work:my-role",
                    "-o",
                    "jsonpath={.metadata.labels.open-cluster-management\\.io/aggregate-to-work}"
                ]
            )
            .out(),
        "true"
    );
    let option2 = r#"apiVersion: work.open-cluster-management.io/v1
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
"#;
    fleet.apply(option2).out();
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "clusterrolebinding",
            "open-cluster-management:klusterlet-work:my-binding",
            "-o",
            "jsonpath={.subjects[0].name}/{.roleRef.name}",
        ],
        "the ClusterRoleBinding",
        |o| o == "klusterlet-work-sa/open-cluster-management:klusterlet-work:my-role",
    );

    // The Job without spec.selector: applied once, then the agent's next full apply updates
    // it without the selector and labels the API server defaulted, which are immutable.
    fleet.apply(JOB).out();
    applied(&fleet, "exmaple-job", "True");
    fleet.spoke_until(
        "cluster1",
        &[
            "get",
            "job",
            "pi",
            "-o",
            "jsonpath={.spec.selector.matchLabels}",
        ],
        "the defaulted selector",
        |o| o.contains("controller-uid"),
    );
    // Fix 1 and fix 2 go next to it, with the same Job name in their own works.
    let manual = r#"apiVersion: work.open-cluster-management.io/v1
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
          name: pi-manual
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
"#;
    fleet.apply(manual).out();
    applied(&fleet, "exmaple-job-1", "True");
    let ssa = JOB
        .replace("name: exmaple-job\n", "name: exmaple-job-ssa\n")
        .replace("name: pi\n", "name: pi-ssa\n")
        .replace(
            "spec:\n  workload:",
            "spec:\n  manifestConfigs:\n    - resourceIdentifier:\n        group: batch\n        resource: jobs\n        namespace: default\n        name: pi-ssa\n      updateStrategy:\n        type: ServerSideApply\n  workload:",
        );
    fleet.apply(&ssa).out();
    applied(&fleet, "exmaple-job-ssa", "True");
    fleet.spoke_until(
        "cluster1",
        &["get", "job", "pi-ssa", "-o", "jsonpath={.status.succeeded}"],
        "pi-ssa run",
        |o| o == "1",
    );
    fleet.spoke_until(
        "cluster1",
        &["get", "job", "pi", "-o", "jsonpath={.status.succeeded}"],
        "pi run",
        |o| o == "1",
    );

    // The agent's next full apply (its resync, or a restart): the plain Job fails.
    fleet.stop_agent("cluster1");
    fleet.start_agent("cluster1", &[]);
    applied(&fleet, "exmaple-job", "False");
    let (status, reason, _) = condition(&fleet, "exmaple-job", "Applied");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AppliedManifestWorkFailed")
    );
    let manifest = jsonpath(
        &fleet,
        "exmaple-job",
        r#"{.status.resourceStatus.manifests[0].conditions[?(@.type=="Applied")].reason}: {.status.resourceStatus.manifests[0].conditions[?(@.type=="Applied")].message}"#,
    );
    assert!(
        manifest.starts_with("AppliedManifestFailed: "),
        "{manifest}"
    );
    assert!(
        manifest.contains("field is immutable") || manifest.contains("spec.selector"),
        "{manifest}"
    );
    // Both fixes keep applying.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(applied(&fleet, "exmaple-job-1", "True"), "True");
    assert_eq!(applied(&fleet, "exmaple-job-ssa", "True"), "True");
}

const EXECUTOR_WORK: &str = r#"apiVersion: work.open-cluster-management.io/v1
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
"#;

#[test]
fn dynamic_identity_authorization() {
    if !common::kubectl_available() {
        return;
    }
    let fleet = Fleet::start(
        "seeds-mw-executor",
        FleetOptions::new(1).agent_args(&["--feature-gates", "ExecutorValidatingCaches=true"]),
    );
    // executor1 has no permission on the managed cluster: nothing is applied.
    fleet.apply(EXECUTOR_WORK).out();
    applied(&fleet, "example-manifestwork", "False");
    let message = jsonpath(
        &fleet,
        "example-manifestwork",
        r#"{.status.resourceStatus.manifests[0].conditions[?(@.type=="Applied")].message}"#,
    );
    assert!(
        message.contains("not allowed to apply the resource"),
        "{message}"
    );
    let missing = fleet.kubectl_on("cluster1", &["get", "configmap", "test"]);
    assert!(missing.err().contains("NotFound"), "{}", missing.stderr);
    // The cluster admin grants executor1 the ConfigMaps of `default`.
    fleet
        .apply_on(
            "cluster1",
            "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: executor1-configmaps
  namespace: default
rules:
- apiGroups: [\"\"]
  resources: [\"configmaps\"]
  verbs: [\"get\", \"list\", \"watch\", \"create\", \"update\", \"patch\", \"delete\"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: executor1-configmaps
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: executor1-configmaps
subjects:
- kind: ServiceAccount
  name: executor1
  namespace: default
",
        )
        .out();
    // The agent tries again (within a minute, as upstream) and the ConfigMap is applied.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let ran = fleet.kubectl(&[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "example-manifestwork",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Applied")].status}"#,
        ]);
        if ran.out() == "True" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not applied after the grant"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert_eq!(
        fleet
            .kubectl_on(
                "cluster1",
                &["get", "configmap", "test", "-o", "jsonpath={.data.a}"]
            )
            .out(),
        "b"
    );
}

/// (the hub's ManifestWork validating webhook): a hub user may name an executor only
/// with `execute-as` on it.
#[test]
fn execute_as_is_checked_on_the_hub() {
    if !common::kubectl_available() {
        return;
    }
    let mut options = FleetOptions::new(1).no_agents();
    options.server_args = vec!["--authentication".into()];
    let fleet = Fleet::start("seeds-mw-execute-as", options);
    fleet
        .apply(
            "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: alice-works
  namespace: cluster1
rules:
- apiGroups: [work.open-cluster-management.io]
  resources: [manifestworks]
  verbs: [get, list, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-works
  namespace: cluster1
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: alice-works
subjects:
- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: alice
",
        )
        .out();
    let denied = common::kubectl_stdin(
        &fleet.hub,
        &["--as", "alice", "create", "-f", "-"],
        EXECUTOR_WORK,
    );
    assert!(
        denied
            .err()
            .contains("user alice cannot manipulate the Manifestwork with executor default/executor1 in namespace cluster1"),
        "{}",
        denied.stderr
    );
    // The documentation's Role, bound to alice.
    fleet
        .apply(
            "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cluster1-executor1
  namespace: cluster1
rules:
- apiGroups:
  - work.open-cluster-management.io
  resources:
  - manifestworks
  verbs:
  - execute-as
  resourceNames:
  - system:serviceaccount:default:executor1
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster1-executor1
  namespace: cluster1
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: cluster1-executor1
subjects:
- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: alice
",
        )
        .out();
    let ran = common::kubectl_stdin(
        &fleet.hub,
        &["--as", "alice", "create", "-f", "-"],
        EXECUTOR_WORK,
    );
    assert_eq!(
        ran.out().trim(),
        "manifestwork.work.open-cluster-management.io/example-manifestwork created"
    );
}
