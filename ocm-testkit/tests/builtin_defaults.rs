//! Built-in kinds read back with the defaults kube-apiserver v1.36 gives them, whichever
//! write made them (create, update, merge/JSON/strategic patch, server-side apply), and a
//! defaulted object round-trips: applying the same manifest again changes nothing.

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use ocm_testkit::{FakeCluster, settle_workloads};
use serde_json::{Value, json};

fn api(client: &kube::Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", kind), plural);
    Api::namespaced_with(client.clone(), "default", &ar)
}

fn obj(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

fn value(o: DynamicObject) -> Value {
    serde_json::to_value(o).unwrap()
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                                       "ports": [{"containerPort": 80}]}]}}}})
}

/// What every write of [`deployment`] must read back with.
fn assert_deployment_defaults(d: &Value) {
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["resources"], json!({}));
    assert_eq!(c["ports"][0]["protocol"], "TCP");
}

#[tokio::test]
async fn deployments_are_defaulted_on_every_write() {
    let cluster = FakeCluster::new();
    let deployments = api(&cluster.client(), "apps", "Deployment", "deployments");
    let created = value(
        deployments
            .create(&PostParams::default(), &obj(deployment("d")))
            .await
            .unwrap(),
    );
    assert_deployment_defaults(&created);
    // A new Deployment's status is empty, and present.
    assert_eq!(created["status"], json!({}));
    assert_eq!(created["metadata"]["generation"], 1);

    // PUT of the bare manifest: the defaults come back, and it changes nothing.
    let mut again = deployment("d");
    again["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let replaced = value(
        deployments
            .replace("d", &PostParams::default(), &obj(again))
            .await
            .unwrap(),
    );
    assert_deployment_defaults(&replaced);
    assert_eq!(
        replaced["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(replaced["metadata"]["generation"], 1);

    // A merge patch that removes a defaulted field: it is defaulted again.
    let patched = value(
        deployments
            .patch(
                "d",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 3, "revisionHistoryLimit": null}})),
            )
            .await
            .unwrap(),
    );
    assert_eq!(patched["spec"]["replicas"], 3);
    assert_eq!(patched["spec"]["revisionHistoryLimit"], 10);

    // A JSON patch, and a strategic merge patch.
    let patched = value(
        deployments
            .patch(
                "d",
                &PatchParams::default(),
                &Patch::Json::<()>(serde_json::from_value(json!([
                    {"op": "remove", "path": "/spec/replicas"},
                    {"op": "remove", "path": "/spec/template/spec/containers/0/imagePullPolicy"},
                    {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx"}
                ])).unwrap()),
            )
            .await
            .unwrap(),
    );
    assert_eq!(patched["spec"]["replicas"], 1);
    assert_eq!(
        patched["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
    let patched = value(
        deployments
            .patch(
                "d",
                &PatchParams::default(),
                &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                    {"name": "sidecar", "image": "busybox:1.36"}]}}}})),
            )
            .await
            .unwrap(),
    );
    let containers = patched["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(containers.len(), 2);
    for c in containers {
        assert_eq!(c["terminationMessagePolicy"], "File", "{c}");
    }

    // The workload simulator brings the defaulted Deployment to a healthy status.
    settle_workloads(cluster.store());
    let settled = value(deployments.get("d").await.unwrap());
    assert_eq!(settled["status"]["readyReplicas"], 1);
    assert_eq!(
        settled["status"]["observedGeneration"],
        settled["metadata"]["generation"]
    );
}

#[tokio::test]
async fn server_side_apply_defaults_and_round_trips() {
    let cluster = FakeCluster::new();
    let deployments = api(&cluster.client(), "apps", "Deployment", "deployments");
    let params = PatchParams::apply("tester");
    let first = value(
        deployments
            .patch("web", &params, &Patch::Apply(deployment("web")))
            .await
            .unwrap(),
    );
    assert_deployment_defaults(&first);
    // The applier owns what it applied, not the defaults.
    let managed = &first["metadata"]["managedFields"];
    assert_eq!(managed.as_array().unwrap().len(), 1);
    let fields = managed[0]["fieldsV1"].to_string();
    assert!(fields.contains("f:selector"), "{fields}");
    assert!(!fields.contains("f:replicas"), "{fields}");
    assert!(!fields.contains("f:progressDeadlineSeconds"), "{fields}");
    assert!(!fields.contains("f:status"), "{fields}");

    let second = value(
        deployments
            .patch("web", &params, &Patch::Apply(deployment("web")))
            .await
            .unwrap(),
    );
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    assert_eq!(
        second["metadata"]["managedFields"],
        first["metadata"]["managedFields"]
    );
    assert_eq!(second["metadata"]["generation"], 1);

    // A create by another manager (not an apply) owns the defaults it was given, as on a
    // real cluster, but not the status the server filled in.
    let created = value(
        deployments
            .create(&PostParams::default(), &obj(deployment("other")))
            .await
            .unwrap(),
    );
    let fields = created["metadata"]["managedFields"][0]["fieldsV1"].to_string();
    assert!(fields.contains("f:progressDeadlineSeconds"), "{fields}");
    assert!(!fields.contains("f:status"), "{fields}");
}

#[tokio::test]
async fn services_get_addresses_ports_and_defaults() {
    let cluster = FakeCluster::new();
    let services = api(&cluster.client(), "", "Service", "services");
    let svc = |name: &str, spec: Value| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec});
    let a = value(
        services
            .create(
                &PostParams::default(),
                &obj(svc(
                    "a",
                    json!({"selector": {"app": "a"}, "ports": [{"port": 80}]}),
                )),
            )
            .await
            .unwrap(),
    );
    assert_eq!(
        a["spec"],
        json!({
            "clusterIP": "10.96.1.0", "clusterIPs": ["10.96.1.0"],
            "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "selector": {"app": "a"}, "sessionAffinity": "None", "type": "ClusterIP",
        })
    );
    assert_eq!(a["status"], json!({"loadBalancer": {}}));

    let b = value(
        services
            .create(
                &PostParams::default(),
                &obj(svc("b", json!({"type": "NodePort", "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                                                     {"name": "https", "port": 443, "nodePort": 30000}]}))),
            )
            .await
            .unwrap(),
    );
    assert_eq!(b["spec"]["clusterIP"], "10.96.1.1");
    assert_eq!(
        b["spec"]["ports"][0]["nodePort"], 30001,
        "30000 was asked for by the other port"
    );
    assert_eq!(b["spec"]["ports"][0]["targetPort"], "http");
    assert_eq!(b["spec"]["ports"][1]["nodePort"], 30000);
    assert_eq!(b["spec"]["externalTrafficPolicy"], "Cluster");

    let headless = value(
        services
            .create(
                &PostParams::default(),
                &obj(svc(
                    "h",
                    json!({"clusterIP": "None", "selector": {"app": "h"}, "ports": [{"port": 80}]}),
                )),
            )
            .await
            .unwrap(),
    );
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "SingleStack");

    let lb = value(
        services
            .create(
                &PostParams::default(),
                &obj(svc("lb", json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 443}]}))),
            )
            .await
            .unwrap(),
    );
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb["spec"]["ports"][0]["nodePort"], 30002);
    assert_eq!(lb["spec"]["healthCheckNodePort"], 30003);

    let external = value(
        services
            .create(
                &PostParams::default(),
                &obj(svc(
                    "e",
                    json!({"type": "ExternalName", "externalName": "example.com"}),
                )),
            )
            .await
            .unwrap(),
    );
    assert!(external["spec"].get("clusterIP").is_none());
    assert!(external["spec"].get("ipFamilies").is_none());

    // A replace with the manifest, which has no address: the address stays.
    let mut again = svc(
        "a",
        json!({"selector": {"app": "a"}, "ports": [{"port": 80}]}),
    );
    again["metadata"]["resourceVersion"] = a["metadata"]["resourceVersion"].clone();
    let replaced = value(
        services
            .replace("a", &PostParams::default(), &obj(again))
            .await
            .unwrap(),
    );
    assert_eq!(replaced["spec"]["clusterIP"], "10.96.1.0");
    assert_eq!(
        replaced["metadata"]["resourceVersion"],
        a["metadata"]["resourceVersion"]
    );

    // NodePort to ClusterIP: the node ports go with the type.
    let b = value(
        services
            .patch(
                "b",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"type": "ClusterIP"}})),
            )
            .await
            .unwrap(),
    );
    assert!(
        b["spec"]["ports"][0].get("nodePort").is_none(),
        "{}",
        b["spec"]
    );
    assert!(b["spec"].get("externalTrafficPolicy").is_none());

    // Server-side apply twice: one address, no new resourceVersion.
    let params = PatchParams::apply("tester");
    let manifest = svc("applied", json!({"ports": [{"port": 8080}]}));
    let first = value(
        services
            .patch("applied", &params, &Patch::Apply(manifest.clone()))
            .await
            .unwrap(),
    );
    let second = value(
        services
            .patch("applied", &params, &Patch::Apply(manifest))
            .await
            .unwrap(),
    );
    assert_eq!(first["spec"]["clusterIP"], second["spec"]["clusterIP"]);
    assert_eq!(
        first["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn other_kinds_are_defaulted() {
    let cluster = FakeCluster::new();
    let client = cluster.client();

    let sts = api(&client, "apps", "StatefulSet", "statefulsets");
    let mut s = deployment("s");
    s["kind"] = json!("StatefulSet");
    let s = value(sts.create(&PostParams::default(), &obj(s)).await.unwrap());
    assert_eq!(s["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        s["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}})
    );
    assert_eq!(
        s["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(s["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(s["status"], json!({"availableReplicas": 0, "replicas": 0}));

    let ds = api(&client, "apps", "DaemonSet", "daemonsets");
    let mut d = deployment("ds");
    d["kind"] = json!("DaemonSet");
    let d = value(ds.create(&PostParams::default(), &obj(d)).await.unwrap());
    assert_eq!(
        d["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(
        d["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    let d = value(
        ds.patch(
            "ds",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        d["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "2"
    );

    let pods = api(&client, "", "Pod", "pods");
    let p = value(
        pods.create(
            &PostParams::default(),
            &obj(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                        "spec": {"containers": [{"name": "c", "image": "nginx",
                                                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        p["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "1", "memory": "1Gi"})
    );
    assert_eq!(p["spec"]["enableServiceLinks"], true);
    assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(
        p["status"],
        json!({"phase": "Pending", "qosClass": "Guaranteed"})
    );

    let secrets = api(&client, "", "Secret", "secrets");
    let s = value(
        secrets
            .create(
                &PostParams::default(),
                &obj(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"password": "hunter2"}})),
            )
            .await
            .unwrap(),
    );
    assert_eq!(s["data"], json!({"password": "aHVudGVyMg=="}));
    assert_eq!(s["type"], "Opaque");
    assert!(s.get("stringData").is_none());

    let claims = api(
        &client,
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
    );
    let c = value(
        claims
            .create(
                &PostParams::default(),
                &obj(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})),
            )
            .await
            .unwrap(),
    );
    assert_eq!(c["spec"]["volumeMode"], "Filesystem");
    assert_eq!(c["status"], json!({"phase": "Pending"}));

    let bindings = api(
        &client,
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
    );
    let b = value(
        bindings
            .create(
                &PostParams::default(),
                &obj(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
                            "roleRef": {"kind": "ClusterRole", "name": "view"},
                            "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]})),
            )
            .await
            .unwrap(),
    );
    assert_eq!(b["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(b["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(b["subjects"][1].get("apiGroup").is_none());

    let policies = api(
        &client,
        "networking.k8s.io",
        "NetworkPolicy",
        "networkpolicies",
    );
    let n = value(
        policies
            .create(
                &PostParams::default(),
                &obj(json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
                            "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}})),
            )
            .await
            .unwrap(),
    );
    assert_eq!(n["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(n["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");

    let jobs = api(&client, "batch", "CronJob", "cronjobs");
    let cj = value(
        jobs.create(
            &PostParams::default(),
            &obj(json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                        "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": {"spec": {
                            "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(
        cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
}

#[tokio::test]
async fn resource_quantities_read_back_in_canonical_form() {
    let cluster = FakeCluster::new();
    let deployments = api(&cluster.client(), "apps", "Deployment", "deployments");
    let mut d = deployment("q");
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({
        "limits": {"cpu": 1, "memory": "1024Mi"},
        "requests": {"cpu": "0.5", "memory": "128974848", "ephemeral-storage": "0.1m"},
    });
    let d = value(
        deployments
            .create(&PostParams::default(), &obj(d))
            .await
            .unwrap(),
    );
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "1", "memory": "1Gi"},
               "requests": {"cpu": "500m", "memory": "128974848", "ephemeral-storage": "1m"}})
    );
    // Applying the manifest as written again is no change.
    let params = PatchParams::apply("tester").force();
    let mut m = deployment("q");
    m["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"limits": {"cpu": 1, "memory": "1024Mi"}});
    let first = value(
        deployments
            .patch("q", &params, &Patch::Apply(m.clone()))
            .await
            .unwrap(),
    );
    let second = value(
        deployments
            .patch("q", &params, &Patch::Apply(m))
            .await
            .unwrap(),
    );
    assert_eq!(
        first["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );
    assert_eq!(
        second["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"],
        json!({"cpu": "1", "memory": "1Gi"})
    );
}
