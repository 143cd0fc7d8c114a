//! Object metadata validation, for every kind, as kube-apiserver v1.36 answers it.
//!
//! The first test replays the metadata cases of the conformance corpus (the answers a
//! real kube-apiserver v1.36.2 gave, recorded with their message cut at 160 characters)
//! and checks the fake gives the same status, reason and message; the others check the
//! same rules hold for other kinds (a ManifestWork, a Deployment) and on update, patch
//! and server-side apply, with the complete messages and causes.

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::core::Status;
use ocm_testkit::{FakeCluster, FakeHub};
use serde_json::{Value, json};

use crate::support::api_status as status;

fn dynamic(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

fn configmaps(client: kube::Client) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("", "v1", "ConfigMap"),
        "configmaps",
    );
    Api::namespaced_with(client, "default", &ar)
}

/// A cause as `field: message` (`reason`).
fn causes(s: &Status) -> Vec<String> {
    s.details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| format!("{}: {} ({})", c.field, c.message, c.reason))
                .collect()
        })
        .unwrap_or_default()
}

fn cm(name: &str, extra: Value) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    for (k, x) in extra.as_object().unwrap() {
        if k == "meta" {
            for (mk, mv) in x.as_object().unwrap() {
                v["metadata"][mk] = mv.clone();
            }
        } else {
            v[k] = x.clone();
        }
    }
    v
}

/// The metadata cases of `kube-apiserver-v1.36-answers.json`: the request's body and the
/// start of kube-apiserver's message (its first 160 characters, as recorded).
fn corpus() -> Vec<(&'static str, Value, &'static str)> {
    let a64 = "a".repeat(64);
    vec![
        (
            "label key \"bad key!\"",
            cm("bi-14", json!({"meta": {"labels": {"bad key!": "v"}}})),
            "ConfigMap \"bi-14\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and",
        ),
        (
            "label name 64 chars",
            cm("bi-15", json!({"meta": {"labels": {a64.clone(): "v"}}})),
            "ConfigMap \"bi-15\" is invalid: metadata.labels: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part must be no more than",
        ),
        (
            "label value 64 chars",
            cm("bi-16", json!({"meta": {"labels": {"k": "v".repeat(64)}}})),
            "ConfigMap \"bi-16\" is invalid: metadata.labels: Invalid value: \"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\": must be no more than 63 bytes",
        ),
        (
            "label value \"bad value!\"",
            cm("bi-17", json!({"meta": {"labels": {"k": "bad value!"}}})),
            "ConfigMap \"bi-17\" is invalid: metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_",
        ),
        (
            "prefix + 64-char name",
            cm(
                "bi-18",
                json!({"meta": {"labels": {format!("example.com/{a64}"): "v"}}}),
            ),
            "ConfigMap \"bi-18\" is invalid: metadata.labels: Invalid value: \"example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part must be ",
        ),
        (
            "label UPPER.example.com/k",
            cm(
                "bi-19",
                json!({"meta": {"labels": {"UPPER.example.com/k": "v"}}}),
            ),
            "ConfigMap \"bi-19\" is invalid: metadata.labels: Invalid value: \"UPPER.example.com/k\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alpha",
        ),
        (
            "label /k",
            cm("bi-20", json!({"meta": {"labels": {"/k": "v"}}})),
            "ConfigMap \"bi-20\" is invalid: metadata.labels: Invalid value: \"/k\": prefix part must be non-empty",
        ),
        (
            "label value -v",
            cm("bi-21", json!({"meta": {"labels": {"k": "-v"}}})),
            "ConfigMap \"bi-21\" is invalid: metadata.labels: Invalid value: \"-v\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'",
        ),
        (
            "label value é",
            cm("bi-22", json!({"meta": {"labels": {"k": "é"}}})),
            "ConfigMap \"bi-22\" is invalid: metadata.labels: Invalid value: \"é\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.',",
        ),
        (
            "annotations > 256 KiB",
            cm(
                "bi-23",
                json!({"meta": {"annotations": {"a": "x".repeat(256 * 1024 + 10)}}}),
            ),
            "ConfigMap \"bi-23\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
        (
            "finalizer \"bad finalizer\"",
            cm("bi-24", json!({"meta": {"finalizers": ["bad finalizer"]}})),
            "ConfigMap \"bi-24\" is invalid: [metadata.finalizers: Invalid value: \"bad finalizer\": name part must consist of alphanumeric characters, '-', '_' or '.', and must",
        ),
        (
            "ownerReference empty fields",
            cm(
                "bi-25",
                json!({"meta": {"ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}}),
            ),
            "ConfigMap \"bi-25\" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty, metadata.ownerReferences.kind: Invalid value: ",
        ),
        (
            "ConfigMap key ключ",
            cm("bi-26", json!({"data": {"ключ": "v"}})),
            "ConfigMap \"bi-26\" is invalid: data[ключ]: Invalid value: \"ключ\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  ",
        ),
        (
            "ConfigMap data > 1 MiB",
            cm(
                "bi-27",
                json!({"data": {"a": "x".repeat(1024 * 1024 + 100)}}),
            ),
            "ConfigMap \"bi-27\" is invalid: []: Too long: may not be more than 1048576 bytes",
        ),
        (
            "ConfigMap 1.2 MiB data in 3 keys (each < 1MiB)",
            cm(
                "bi-39",
                json!({"data": {"a": "x".repeat(400_000), "b": "x".repeat(400_000), "c": "x".repeat(400_000)}}),
            ),
            "ConfigMap \"bi-39\" is invalid: []: Too long: may not be more than 1048576 bytes",
        ),
    ]
}

/// kube-apiserver's message, cut as the corpus recorded it (160 characters).
fn cut(message: &str) -> String {
    message.chars().take(160).collect()
}

#[tokio::test]
async fn the_corpus_metadata_cases_are_answered_as_kube_apiserver_answers_them() {
    let cluster = FakeCluster::new();
    let api = configmaps(cluster.client());
    for (name, body, want) in corpus() {
        let err = status(
            api.create(&PostParams::default(), &dynamic(body))
                .await
                .expect_err(name),
        );
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"), "{name}");
        assert_eq!(cut(&err.message), want, "{name}");
    }
}

#[tokio::test]
async fn a_patch_that_makes_a_configmap_too_large_is_invalid() {
    // The corpus case `PATCH making object > 1.5 MiB`.
    let cluster = FakeCluster::new();
    let api = configmaps(cluster.client());
    api.create(
        &PostParams::default(),
        &dynamic(cm("target", json!({"data": {"a": "b"}}))),
    )
    .await
    .unwrap();
    let err = status(
        api.patch(
            "target",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"big": "x".repeat(1024 * 1024 + 600_000)}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "ConfigMap \"target\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );
    assert_eq!(
        causes(&err),
        // kube-apiserver checks the metadata four times on an update (the common fields,
        // the update rules, and the ConfigMap's own create and update rules) but the
        // data once: one cause.
        ["[]: Too long: may not be more than 1048576 bytes (FieldValueTooLong)"]
    );
}

#[tokio::test]
async fn full_messages_and_causes_of_metadata_errors() {
    let cluster = FakeCluster::new();
    let api = configmaps(cluster.client());
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(cm(
                "f",
                json!({"meta": {"finalizers": ["bad finalizer", "example.com/ok", "kubernetes"]}}),
            )),
        )
        .await
        .unwrap_err(),
    );
    let part = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    assert_eq!(
        err.message,
        format!(
            "ConfigMap \"f\" is invalid: [metadata.finalizers: Invalid value: \"bad finalizer\": {part}, metadata.finalizers[0]: Invalid value: \"bad finalizer\": name is neither a standard finalizer name nor is it fully qualified]"
        )
    );
    let d = err.details.unwrap();
    assert_eq!(
        (d.name.as_str(), d.kind.as_str(), d.group.as_str()),
        ("f", "ConfigMap", "")
    );
    assert_eq!(d.causes.len(), 2);
    assert_eq!(d.causes[0].reason, "FieldValueInvalid");
    assert_eq!(d.causes[0].field, "metadata.finalizers");
    assert_eq!(d.causes[1].field, "metadata.finalizers[0]");

    let owner = |n: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": n, "uid": n, "controller": true});
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(cm(
                "o",
                json!({"meta": {"ownerReferences": [owner("a"), owner("b"),
                {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]}}),
            )),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        causes(&err),
        [
            r#"metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"Deployment","name":"a","uid":"a","controller":true},{"apiVersion":"apps/v1","kind":"Deployment","name":"b","uid":"b","controller":true},{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}]: Only one reference can have Controller set to true. Found "true" in references for Deployment/a and Deployment/b (FieldValueInvalid)"#,
            r#"metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner (FieldValueInvalid)"#,
        ]
    );

    // Both finalizers that orphan and delete in the foreground.
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(cm(
                "both",
                json!({"meta": {"finalizers": ["orphan", "foregroundDeletion"]}}),
            )),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "ConfigMap \"both\" is invalid: metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set"
    );

    // A name and a generateName are checked with the kind's name rule.
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Bad-"}})),
        )
        .await
        .unwrap_err(),
    );
    let cs = causes(&err);
    assert!(
        cs[0].starts_with(
            "metadata.generateName: Invalid value: \"Bad-\": a lowercase RFC 1123 subdomain"
        ),
        "{cs:?}"
    );
    assert!(
        cs[1].starts_with("metadata.name: Invalid value: \"Bad-"),
        "{cs:?}"
    );

    // No name at all: reported with the other problems, not alone.
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"k": "-v"}}})),
        )
        .await
        .unwrap_err(),
    );
    assert!(
        err.message.starts_with("ConfigMap \"\" is invalid: [metadata.name: Required value: name or generateName is required, metadata.labels: Invalid value: \"-v\""),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn names_follow_each_kinds_rule() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let svc =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Service"), "services");
    let services: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &svc);
    // Services are DNS-1035 labels: no leading digit.
    let err = status(
        services
            .create(
                &PostParams::default(),
                &dynamic(
                    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"},
                                "spec": {"ports": [{"port": 80}]}}),
                ),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    );
    // Namespaces are DNS-1123 labels: no dots.
    let ns = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("", "v1", "Namespace"),
        "namespaces",
    );
    let namespaces: Api<DynamicObject> = Api::all_with(client.clone(), &ns);
    let err = status(
        namespaces
            .create(
                &PostParams::default(),
                &dynamic(
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}),
                ),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"
    );
    // RBAC names are path segments: `system:aggregate` is one, `a/b` is not.
    let role = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        "clusterroles",
    );
    let roles: Api<DynamicObject> = Api::all_with(client, &role);
    roles
        .create(
            &PostParams::default(),
            &dynamic(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                            "metadata": {"name": "system:Aggregate"}}),
            ),
        )
        .await
        .unwrap();
    let err = status(
        roles
            .create(
                &PostParams::default(),
                &dynamic(
                    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                "metadata": {"name": "a%b", "labels": {"k": "-"}}}),
                ),
            )
            .await
            .unwrap_err(),
    );
    assert!(
        err.message.starts_with("ClusterRole.rbac.authorization.k8s.io \"a%b\" is invalid: [metadata.name: Invalid value: \"a%b\": may not contain '%', metadata.labels: Invalid value: \"-\""),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn custom_resources_and_other_kinds_get_the_same_rules() {
    let fake = FakeHub::new(1).unwrap();
    let client = fake.hub().client();
    let mw = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("work.open-cluster-management.io", "v1", "ManifestWork"),
        "manifestworks",
    );
    let works: Api<DynamicObject> = Api::namespaced_with(client.clone(), "cluster1", &mw);
    let work = json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "w", "labels": {"bad key!": "v"}, "annotations": {"Example.COM/Key": "ok"}},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                                              "metadata": {"name": "c", "namespace": "default"}}]}}});
    let err = status(
        works
            .create(&PostParams::default(), &dynamic(work.clone()))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert!(
        err.message.starts_with("ManifestWork.work.open-cluster-management.io \"w\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist"),
        "{}",
        err.message
    );
    assert_eq!(
        err.details.unwrap().group,
        "work.open-cluster-management.io"
    );
    // Custom resources are not held to core's finalizer-name rule: a qualified name is all
    // they need, and `foo` is one.
    let mut ok = work.clone();
    ok["metadata"]["labels"] = json!({"app": "x"});
    ok["metadata"]["finalizers"] = json!(["foo"]);
    works
        .create(&PostParams::default(), &dynamic(ok))
        .await
        .unwrap();

    // A Deployment's metadata, checked before its spec.
    let dep = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps", "v1", "Deployment"),
        "deployments",
    );
    let deployments: Api<DynamicObject> = Api::namespaced_with(client, "default", &dep);
    let err = status(
        deployments
            .create(
                &PostParams::default(),
                &dynamic(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "d", "labels": {"k": "bad value!"}},
                    "spec": {"selector": {"matchLabels": {"app": "d"}},
                             "template": {"metadata": {"labels": {"app": "d"}},
                                          "spec": {"containers": [{"name": "c"}]}}}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        causes(&err),
        [
            "metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (FieldValueInvalid)",
            "spec.template.spec.containers[0].image: Required value (FieldValueRequired)",
        ]
    );
}

#[tokio::test]
async fn updates_patches_and_applies_are_validated_too() {
    let cluster = FakeCluster::new();
    let api = configmaps(cluster.client());
    let live = api
        .create(
            &PostParams::default(),
            &dynamic(cm("c", json!({"data": {"a": "b"}}))),
        )
        .await
        .unwrap();
    let bad_label = "metadata.labels: Invalid value: \"-v\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let want_message = format!("ConfigMap \"c\" is invalid: {bad_label}");

    // PUT.
    let mut replaced = serde_json::to_value(&live).unwrap();
    replaced["metadata"]["labels"] = json!({"k": "-v"});
    let err = status(
        api.replace("c", &PostParams::default(), &dynamic(replaced))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.message, want_message);
    // The common checks of every update, the update rules, and the ConfigMap's own create
    // and update rules each find the label: four causes, one line of message.
    assert_eq!(
        causes(&err),
        vec![format!("{bad_label} (FieldValueInvalid)"); 4]
    );

    // Merge, JSON and strategic merge patches.
    let patches = [
        Patch::Merge(json!({"metadata": {"labels": {"k": "-v"}}})),
        Patch::Json(
            serde_json::from_value(
                json!([{"op": "add", "path": "/metadata/labels", "value": {"k": "-v"}}]),
            )
            .unwrap(),
        ),
        Patch::Strategic(json!({"metadata": {"labels": {"k": "-v"}}})),
    ];
    for p in patches {
        let err = status(
            api.patch("c", &PatchParams::default(), &p)
                .await
                .unwrap_err(),
        );
        assert_eq!(
            (err.code, err.message.as_str()),
            (422, want_message.as_str())
        );
    }

    // Server-side apply, of an existing object and of a new one.
    for name in ["c", "new"] {
        let err = status(
            api.patch(
                name,
                &PatchParams::apply("tester").force(),
                &Patch::Apply(cm(name, json!({"meta": {"labels": {"k": "-v"}}}))),
            )
            .await
            .unwrap_err(),
        );
        assert_eq!(err.code, 422, "{name}");
        assert!(err.message.ends_with(bad_label), "{name}: {}", err.message);
    }

    // Nothing was stored.
    let now = api.get("c").await.unwrap();
    assert!(now.metadata.labels.is_none());
    assert!(api.get_opt("new").await.unwrap().is_none());
}

#[tokio::test]
async fn no_finalizer_may_be_added_to_an_object_being_deleted() {
    let cluster = FakeCluster::new();
    let api = configmaps(cluster.client());
    api.create(
        &PostParams::default(),
        &dynamic(cm(
            "d",
            json!({"meta": {"finalizers": ["example.com/keep"]}}),
        )),
    )
    .await
    .unwrap();
    api.delete("d", &Default::default()).await.unwrap();
    let err = status(
        api.patch(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/keep", "example.com/b", "example.com/a"]}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "ConfigMap \"d\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/a\", \"example.com/b\"}"
    );
    // Validation comes before the name is looked up: an invalid object that already
    // exists is invalid, not a conflict.
    let err = status(
        api.create(
            &PostParams::default(),
            &dynamic(cm("d", json!({"meta": {"labels": {"k": "-"}}}))),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 422);
}
