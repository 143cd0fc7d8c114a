//! Built-in kinds are validated as kube-apiserver v1.36 validates them: each case sends a
//! request through the in-process client and checks the `422 Invalid` kube-apiserver
//! gives, message and causes.

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::core::Status;
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

use crate::support::api_status as status;

fn api(
    client: &kube::Client,
    group: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
) -> Api<DynamicObject> {
    let version = "v1";
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    if namespaced {
        Api::namespaced_with(client.clone(), "default", &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

fn causes(s: &Status) -> Vec<String> {
    s.details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect()
        })
        .unwrap_or_default()
}

async fn rejected(api: &Api<DynamicObject>, body: Value) -> Status {
    let obj: DynamicObject = serde_json::from_value(body).unwrap();
    let err = status(api.create(&PostParams::default(), &obj).await.unwrap_err());
    assert_eq!(
        (err.code, err.reason.as_str()),
        (422, "Invalid"),
        "{}",
        err.message
    );
    err
}

async fn created(api: &Api<DynamicObject>, body: Value) -> Value {
    let obj: DynamicObject = serde_json::from_value(body).unwrap();
    serde_json::to_value(api.create(&PostParams::default(), &obj).await.unwrap()).unwrap()
}

const DNS_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn deployment(f: impl FnOnce(&mut Value)) -> Value {
    let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}});
    f(&mut d);
    d
}

fn container(d: &mut Value) -> &mut Value {
    &mut d["spec"]["template"]["spec"]["containers"][0]
}

#[tokio::test]
async fn deployments() {
    let cluster = FakeCluster::new();
    let deployments = api(&cluster.client(), "apps", "Deployment", "deployments", true);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            deployment(|d| {
                d["spec"].as_object_mut().unwrap().remove("selector");
            }),
            vec![
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: {\"app\":\"d\"}: `selector` does not match template `labels`",
            ],
        ),
        (
            deployment(|d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"})),
            vec![
                "spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`",
            ],
        ),
        (
            deployment(|d| d["spec"]["selector"] = json!({})),
            vec!["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
        ),
        (
            deployment(|d| d["spec"]["template"]["spec"]["containers"] = json!([])),
            vec!["spec.template.spec.containers: Required value"],
        ),
        (
            deployment(|d| {
                container(d).as_object_mut().unwrap().remove("image");
            }),
            vec!["spec.template.spec.containers[0].image: Required value"],
        ),
        (
            deployment(|d| d["spec"]["replicas"] = json!(-1)),
            vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            deployment(|d| {
                let c = container(d).clone();
                d["spec"]["template"]["spec"]["containers"] = json!([c.clone(), c]);
            }),
            vec!["spec.template.spec.containers[1].name: Duplicate value: \"c\""],
        ),
        (
            deployment(|d| {
                container(d)["ports"] =
                    json!([{"containerPort": 70000}, {"containerPort": 80, "protocol": "ICMP"}])
            }),
            vec![
                "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.template.spec.containers[0].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
            ],
        ),
        (
            deployment(|d| d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
            vec![
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ],
        ),
        (
            deployment(|d| {
                container(d)["resources"] =
                    json!({"limits": {"cpu": "1"}, "requests": {"cpu": "2"}})
            }),
            vec![
                "spec.template.spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
            ],
        ),
        (
            deployment(|d| {
                container(d)["env"] = json!([{"name": "A=B", "value": "x"}, {"name": ""}])
            }),
            vec![
                "spec.template.spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='",
                "spec.template.spec.containers[0].env[1].name: Required value",
            ],
        ),
        (
            deployment(|d| {
                container(d)["volumeMounts"] = json!([{"name": "data", "mountPath": "/data"}])
            }),
            vec!["spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\""],
        ),
        (
            deployment(|d| {
                container(d)["livenessProbe"] =
                    json!({"httpGet": {"port": 8080}, "successThreshold": 2});
                container(d)["readinessProbe"] = json!({"periodSeconds": 5});
            }),
            vec![
                "spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
                "spec.template.spec.containers[0].readinessProbe: Required value: must specify a handler type",
            ],
        ),
        (
            deployment(
                |d| d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}),
            ),
            vec![
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
            ],
        ),
        (
            // A volume with errors is not one mounts may refer to, nor one a later volume
            // duplicates: kube-apiserver only remembers the valid ones.
            deployment(|d| {
                d["spec"]["template"]["spec"]["volumes"] = json!([
                {"name": "v", "emptyDir": {}}, {"name": "v", "configMap": {}}, {"name": "w", "secret": {}}, {"name": "w"}])
            }),
            vec![
                "spec.template.spec.volumes[1].configMap.name: Required value",
                "spec.template.spec.volumes[1].name: Duplicate value: \"v\"",
                "spec.template.spec.volumes[2].secret.secretName: Required value",
            ],
        ),
        (
            deployment(|d| d["spec"]["template"]["metadata"]["labels"]["bad key!"] = json!("x")),
            vec![
                "spec.template.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        ),
    ];
    for (body, want) in cases {
        let err = rejected(&deployments, body).await;
        assert_eq!(causes(&err), want);
        let parts: Vec<&str> = want.clone();
        let list = if parts.len() == 1 {
            parts[0].to_string()
        } else {
            format!("[{}]", parts.join(", "))
        };
        assert_eq!(
            err.message,
            format!("Deployment.apps \"d\" is invalid: {list}")
        );
        let d = err.details.unwrap();
        assert_eq!(
            (d.kind.as_str(), d.group.as_str(), d.name.as_str()),
            ("Deployment", "apps", "d")
        );
    }

    let err = rejected(
        &deployments,
        deployment(|d| container(d)["name"] = json!("C_1")),
    )
    .await;
    assert_eq!(
        causes(&err),
        [format!(
            "spec.template.spec.containers[0].name: Invalid value: \"C_1\": {DNS_LABEL}"
        )]
    );

    // Update: the selector may not change.
    created(&deployments, deployment(|_| {})).await;
    let err = status(
        deployments
            .patch(
                "d",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"spec": {"selector": {"matchLabels": {"app": "d", "tier": "web"}},
                    "template": {"metadata": {"labels": {"app": "d", "tier": "web"}}}}}),
                ),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Deployment.apps \"d\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"d\",\"tier\":\"web\"}}: field is immutable"
    );
}

#[tokio::test]
async fn other_workloads() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let sts = api(&client, "apps", "StatefulSet", "statefulsets", true);
    let mut s = deployment(|_| {});
    s["kind"] = json!("StatefulSet");
    s["metadata"]["name"] = json!("s.1");
    s["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("image");
    s["spec"]["podManagementPolicy"] = json!("Sometimes");
    let err = rejected(&sts, s).await;
    // A StatefulSet's name is a DNS label; its pod spec is not checked (kube-apiserver
    // leaves that out of StatefulSet validation), its policy is.
    assert_eq!(
        causes(&err),
        [
            "metadata.name: Invalid value: \"s.1\": must not contain dots",
            "spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'",
        ]
    );
    let mut s = deployment(|_| {});
    s["kind"] = json!("StatefulSet");
    s["metadata"]["name"] = json!("s");
    created(&sts, s).await;
    let err = status(
        sts.patch(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"serviceName": "other"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "StatefulSet.apps \"s\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    );

    let ds = api(&client, "apps", "DaemonSet", "daemonsets", true);
    let mut d = deployment(|_| {});
    d["kind"] = json!("DaemonSet");
    d["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}});
    let err = rejected(&ds, d).await;
    assert_eq!(
        causes(&err),
        [
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
        ]
    );

    let rs = api(&client, "apps", "ReplicaSet", "replicasets", true);
    let mut r = deployment(|_| {});
    r["kind"] = json!("ReplicaSet");
    r["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(10);
    let err = rejected(&rs, r).await;
    assert_eq!(
        causes(&err),
        [
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"
        ]
    );

    let jobs = api(&client, "batch", "Job", "jobs", true);
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"containers": [{"name": "c"}], "restartPolicy": "Never"}}}});
    let err = rejected(&jobs, job).await;
    assert_eq!(
        causes(&err),
        ["spec.template.spec.containers[0].image: Required value"]
    );

    let cronjobs = api(&client, "batch", "CronJob", "cronjobs", true);
    let cj = |schedule: &str| {
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
            "spec": {"schedule": schedule, "concurrencyPolicy": "Sometimes",
                     "jobTemplate": {"spec": {"template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}})
    };
    let err = rejected(&cronjobs, cj("61 * * * *")).await;
    assert_eq!(
        causes(&err),
        [
            "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61",
            "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
        ]
    );
    let err = rejected(&cronjobs, cj("every minute")).await;
    assert_eq!(
        causes(&err)[0],
        "spec.schedule: Invalid value: \"every minute\": expected exactly 5 fields, found 2: [every minute]"
    );
    let mut long = cj("* * * * *");
    long["spec"]["concurrencyPolicy"] = json!("Forbid");
    long["metadata"]["name"] = json!("c".repeat(53));
    let err = rejected(&cronjobs, long).await;
    assert_eq!(
        causes(&err),
        [format!(
            "metadata.name: Invalid value: \"{}\": must be no more than 52 characters",
            "c".repeat(53)
        )]
    );
    let mut tz = cj("TZ=UTC 0 * * * *");
    tz["spec"]["concurrencyPolicy"] = json!("Allow");
    let err = rejected(&cronjobs, tz).await;
    assert_eq!(
        causes(&err),
        [
            "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        ]
    );
}

#[tokio::test]
async fn pods() {
    let cluster = FakeCluster::new();
    let pods = api(&cluster.client(), "", "Pod", "pods", true);
    let err = rejected(
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": " nginx"}], "restartPolicy": "Sometimes",
                        "hostNetwork": true}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace",
        ]
    );
    created(
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    // Only images (and a few other fields) of a Pod may change.
    let err = status(
        pods.patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"containers": [{"name": "c", "image": "nginx:2", "workingDir": "/x"}]}})),
        )
        .await
        .unwrap_err(),
    );
    assert!(
        err.message.starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"),
        "{}",
        err.message
    );
    pods.patch(
        "p",
        &PatchParams::default(),
        &Patch::Strategic(json!({"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}})),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn services() {
    let cluster = FakeCluster::new();
    let services = api(&cluster.client(), "", "Service", "services", true);
    let svc = |spec: Value| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            svc(json!({"selector": {"app": "x"}})),
            vec!["spec.ports: Required value"],
        ),
        (
            // The target port defaults to the port, so it is out of range too.
            svc(json!({"ports": [{"port": 70000}]})),
            vec![
                "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            ],
        ),
        (
            svc(json!({"type": "Bogus", "ports": [{"port": 80}]})),
            vec![
                "spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            ],
        ),
        (
            svc(json!({"ports": [{"port": 80}, {"port": 81}]})),
            vec![
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
            ],
        ),
        (
            svc(json!({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]})),
            vec![
                "spec.ports[1]: Duplicate value: {\"Name\":\"\",\"Protocol\":\"TCP\",\"AppProtocol\":null,\"Port\":80,\"TargetPort\":0,\"NodePort\":0}",
            ],
        ),
        (
            svc(json!({"ports": [{"port": 80, "nodePort": 30080}]})),
            vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        ),
        (
            svc(
                json!({"ports": [{"port": 80, "targetPort": "HTTP"}], "sessionAffinity": "Sticky"}),
            ),
            vec![
                "spec.ports[0].targetPort: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ports[0].targetPort: Invalid value: \"HTTP\": must contain at least one letter (a-z)",
                "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"",
            ],
        ),
        (
            svc(json!({"clusterIP": "1.2.3.4", "ports": [{"port": 80}]})),
            vec![
                "spec.clusterIPs: Invalid value: [\"1.2.3.4\"]: failed to allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/12",
            ],
        ),
        (
            svc(json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]})),
            vec![
                "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
            ],
        ),
        (
            svc(json!({"type": "ExternalName"})),
            vec!["spec.externalName: Required value"],
        ),
    ];
    for (body, want) in cases {
        let err = rejected(&services, body).await;
        assert_eq!(causes(&err), want);
    }
    // Addresses are unique in a cluster.
    let first = created(&services, svc(json!({"ports": [{"port": 80}]}))).await;
    let ip = first["spec"]["clusterIP"].as_str().unwrap().to_string();
    let mut second = svc(json!({"clusterIP": ip, "ports": [{"port": 80}]}));
    second["metadata"]["name"] = json!("t");
    let err = rejected(&services, second).await;
    assert_eq!(
        causes(&err),
        [format!(
            "spec.clusterIPs: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
        )]
    );
    // And may not change.
    let err = status(
        services
            .patch(
                "s",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"clusterIP": "10.96.9.9"}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.9.9\"]: may not change once set"
    );
}

#[tokio::test]
async fn configs_accounts_namespaces_and_claims() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let cms = api(&client, "", "ConfigMap", "configmaps", true);
    let err = rejected(
        &cms,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
               "data": {"k": "v", "..": "x"}, "binaryData": {"k": "eA=="}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "data[..]: Invalid value: \"..\": must not be '..'",
            "data[k]: Invalid value: \"k\": duplicate of key present in binaryData",
        ]
    );
    let immutable = created(
        &cms,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"},
               "data": {"k": "v"}, "immutable": true}),
    )
    .await;
    assert_eq!(immutable["immutable"], true);
    let err = status(
        cms.patch(
            "frozen",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "w"}, "immutable": false})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        causes(&err),
        [
            "immutable: Forbidden: field is immutable when `immutable` is set",
            "data: Forbidden: field is immutable when `immutable` is set",
        ]
    );

    let secrets = api(&client, "", "Secret", "secrets", true);
    let err = rejected(
        &secrets,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
               "stringData": {"tls.crt": "x"}}),
    )
    .await;
    assert_eq!(causes(&err), ["data[tls.key]: Required value"]);
    let err = rejected(
        &secrets,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"},
               "stringData": {"a": "x".repeat(1024 * 1024 + 1)}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        ["data: Too long: may not be more than 1048576 bytes"]
    );

    let namespaces = api(&client, "", "Namespace", "namespaces", false);
    let err = rejected(
        &namespaces,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "finalizers": ["custom"]}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "metadata.finalizers[0]: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
        ]
    );

    let accounts = api(&client, "", "ServiceAccount", "serviceaccounts", true);
    let err = rejected(
        &accounts,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Robot"}}),
    )
    .await;
    assert!(
        causes(&err)[0]
            .starts_with("metadata.name: Invalid value: \"Robot\": a lowercase RFC 1123 subdomain")
    );

    let claims = api(
        &client,
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
    );
    let err = rejected(
        &claims,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
               "spec": {"accessModes": ["ReadWriteSometimes"]}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
            "spec.resources[storage]: Required value",
        ]
    );
    created(
        &claims,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    let err = status(
        claims
            .patch(
                "c",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"accessModes": ["ReadWriteMany"]}})),
            )
            .await
            .unwrap_err(),
    );
    assert!(
        err.message.starts_with("PersistentVolumeClaim \"c\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn rbac() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let roles = api(&client, "rbac.authorization.k8s.io", "Role", "roles", true);
    let err = rejected(
        &roles,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
               "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "rules[0].verbs: Required value: verbs must contain at least one value",
            "rules[1].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs",
        ]
    );
    let bindings = api(
        &client,
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
        true,
    );
    let err = rejected(
        &bindings,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
               "roleRef": {"kind": "Deployment", "name": "r"},
               "subjects": [{"kind": "Robot", "name": "x"}, {"kind": "ServiceAccount", "name": ""}]}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "roleRef.kind: Unsupported value: \"Deployment\": supported values: \"Role\", \"ClusterRole\"",
            "subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
            "subjects[1].name: Required value",
        ]
    );
    created(
        &bindings,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
               "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "User", "name": "u"}]}),
    )
    .await;
    let err = status(
        bindings
            .patch(
                "b",
                &PatchParams::default(),
                &Patch::Merge(json!({"roleRef": {"name": "edit"}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"ClusterRole\",\"Name\":\"edit\"}: cannot change roleRef"
    );
}

#[tokio::test]
async fn ingresses_and_network_policies() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let ingresses = api(&client, "networking.k8s.io", "Ingress", "ingresses", true);
    let err = rejected(
        &ingresses,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
               "spec": {"rules": [{"host": "10.0.0.1", "http": {"paths": [
                   {"path": "api", "pathType": "Prefix", "backend": {"service": {"name": "api", "port": {}}}},
                   {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                   {"path": "/x", "pathType": "Regex", "backend": {"service": {"name": "web", "port": {"name": "http"}}}}]}}]}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
            "spec.rules[0].http.paths[0].path: Invalid value: \"api\": must be an absolute path",
            "spec.rules[0].http.paths[0].backend: Required value: port name or number is required",
            "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified",
            "spec.rules[0].http.paths[2].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
        ]
    );
    let err = rejected(
        &ingresses,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}, "spec": {}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
    );

    let policies = api(
        &client,
        "networking.k8s.io",
        "NetworkPolicy",
        "networkpolicies",
        true,
    );
    let err = rejected(
        &policies,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
               "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80, "endPort": 70}, {"protocol": "ICMP"}],
                   "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}, "podSelector": {}}]}],
                   "policyTypes": ["Ingress", "Sideways"]}}),
    )
    .await;
    assert_eq!(
        causes(&err),
        [
            "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
            "spec.ingress[0].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
            "spec.ingress[0].from[0]: Required value: must specify a peer",
            "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"192.168.0.0/16\": must be a strict subset of `cidr`",
            "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
            "spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
        ]
    );
}
