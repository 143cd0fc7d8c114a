//! Server-side apply through kube's `PatchParams::apply`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

use crate::support::api_status as status_of;

#[tokio::test]
async fn apply_creates_tracks_managers_conflicts_and_forces() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                   "data": {"shared": "1", "mine": "a"}});
    // Create by apply.
    let out = api
        .patch("cfg", &PatchParams::apply("alpha"), &Patch::Apply(&a))
        .await
        .unwrap();
    assert_eq!(cluster.journal().entries().last().unwrap().status, 201);
    let mf = out.metadata.managed_fields.unwrap();
    assert_eq!(mf.len(), 1);
    assert_eq!(mf[0].manager.as_deref(), Some("alpha"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    assert_eq!(
        mf[0].fields_v1.as_ref().unwrap().0,
        json!({"f:data": {"f:mine": {}, "f:shared": {}}})
    );

    // Another manager changing an owned field conflicts, with the real message and causes.
    let b = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                   "data": {"shared": "2"}});
    let err = status_of(
        api.patch("cfg", &PatchParams::apply("beta"), &Patch::Apply(&b))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"alpha\": .data.shared"
    );
    let causes = err.details.unwrap().causes;
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".data.shared");

    // Forcing takes the field over.
    let out = api
        .patch(
            "cfg",
            &PatchParams::apply("beta").force(),
            &Patch::Apply(&b),
        )
        .await
        .unwrap();
    assert_eq!(out.data.as_ref().unwrap()["shared"], "2");
    let mf = out.metadata.managed_fields.unwrap();
    let alpha = mf
        .iter()
        .find(|m| m.manager.as_deref() == Some("alpha"))
        .unwrap();
    assert_eq!(
        alpha.fields_v1.as_ref().unwrap().0,
        json!({"f:data": {"f:mine": {}}})
    );

    // alpha drops `mine`: it is removed because nobody else owns it.
    let a2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                    "data": {}});
    let out = api
        .patch("cfg", &PatchParams::apply("alpha"), &Patch::Apply(&a2))
        .await
        .unwrap();
    assert_eq!(
        out.data.unwrap().into_iter().collect::<Vec<_>>(),
        vec![("shared".to_string(), "2".to_string())]
    );

    // An Update by someone else makes them an owner too: conflicts name the operation.
    let p = json!({"data": {"shared": "3"}});
    let edit = PatchParams {
        field_manager: Some("kubectl-edit".into()),
        ..Default::default()
    };
    api.patch("cfg", &edit, &Patch::Merge(&p)).await.unwrap();
    let err = status_of(
        api.patch("cfg", &PatchParams::apply("beta"), &Patch::Apply(&b))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.shared"
    );

    // dryRun=All changes nothing.
    let dry = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                     "data": {"dry": "run"}});
    let mut pp = PatchParams::apply("gamma");
    pp.dry_run = true;
    let out = api.patch("cfg", &pp, &Patch::Apply(&dry)).await.unwrap();
    assert_eq!(out.data.unwrap()["dry"], "run");
    assert!(
        !api.get("cfg")
            .await
            .unwrap()
            .data
            .unwrap()
            .contains_key("dry")
    );
}

#[tokio::test]
async fn apply_merges_containers_by_name() {
    let cluster = FakeCluster::new();
    let api: Api<Deployment> = Api::default_namespaced(cluster.client());
    let base = |containers: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"app": "d"}},
                        "template": {"metadata": {"labels": {"app": "d"}},
                                     "spec": {"containers": containers}}}})
    };
    let one = base(json!([{"name": "main", "image": "nginx:1"}]));
    api.patch("d", &PatchParams::apply("owner"), &Patch::Apply(&one))
        .await
        .unwrap();
    // A second manager adds a sidecar without touching the first container.
    let side = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}});
    let out = api
        .patch("d", &PatchParams::apply("sidecar"), &Patch::Apply(&side))
        .await
        .unwrap();
    let names: Vec<String> = out
        .spec
        .template
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, vec!["main", "side"]);
    // The sidecar manager changing main's image conflicts at the keyed path.
    let steal = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}});
    let err = status_of(
        api.patch("d", &PatchParams::apply("sidecar"), &Patch::Apply(&steal))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"owner\": .spec.template.spec.containers[name=\"main\"].image"
    );
    // Status written through /status is kept by main-resource applies and not owned by them.
    let st = json!({"status": {"replicas": 1}});
    api.patch_status("d", &PatchParams::default(), &Patch::Merge(&st))
        .await
        .unwrap();
    let again = api
        .patch("d", &PatchParams::apply("owner"), &Patch::Apply(&one))
        .await
        .unwrap();
    assert_eq!(again.status.unwrap().replicas, Some(1));
    let owner = again
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .find(|m| m.manager.as_deref() == Some("owner"))
        .unwrap();
    assert!(owner.fields_v1.unwrap().0.get("f:status").is_none());
    // Owner drops nothing but replicas stays; sidecar removes its container by applying none.
    let none = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
    let out = api
        .patch("d", &PatchParams::apply("sidecar"), &Patch::Apply(&none))
        .await
        .unwrap();
    let names: Vec<String> = out
        .spec
        .template
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, vec!["main"]);
}

#[tokio::test]
async fn create_then_apply_shares_and_conflicts_with_update_owner() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"k": "v"}})).unwrap();
    api.create(
        &PostParams {
            field_manager: Some("creator".into()),
            ..Default::default()
        },
        &cm,
    )
    .await
    .unwrap();
    // Same value: shared, no conflict.
    let same = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
    let out = api
        .patch("c", &PatchParams::apply("applier"), &Patch::Apply(&same))
        .await
        .unwrap();
    assert_eq!(out.metadata.managed_fields.unwrap().len(), 2);
}

#[tokio::test]
async fn container_ports_without_protocol_are_one_item() {
    let cluster = FakeCluster::new();
    let api: Api<Deployment> = Api::default_namespaced(cluster.client());
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "p"},
        "spec": {"selector": {"matchLabels": {"app": "p"}},
                 "template": {"metadata": {"labels": {"app": "p"}}, "spec": {"containers": [
                     {"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}}});
    api.patch("p", &PatchParams::apply("a"), &Patch::Apply(&d))
        .await
        .unwrap();
    let out = api
        .patch("p", &PatchParams::apply("b"), &Patch::Apply(&d))
        .await
        .unwrap();
    let c = &out.spec.template.spec.unwrap().containers[0];
    assert_eq!(c.ports.as_ref().unwrap().len(), 1);
    // Strategic merge by containerPort alone updates the same item.
    let p = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]}}}});
    let out = api
        .patch("p", &PatchParams::default(), &Patch::Strategic(&p))
        .await
        .unwrap();
    let ports = out.spec.template.spec.unwrap().containers[0]
        .ports
        .clone()
        .unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].name.as_deref(), Some("http"));
}

#[tokio::test]
async fn repeated_identical_apply_is_a_no_op() {
    let clock = std::sync::Arc::new(ocm_testkit::ManualClock::default());
    let cluster = FakeCluster::builder().clock(clock.clone()).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "same"}, "data": {"k": "v"}});
    let first = api
        .patch("same", &PatchParams::apply("m"), &Patch::Apply(&a))
        .await
        .unwrap();
    clock.advance(std::time::Duration::from_secs(60));
    let second = api
        .patch("same", &PatchParams::apply("m"), &Patch::Apply(&a))
        .await
        .unwrap();
    assert_eq!(
        first.metadata.resource_version,
        second.metadata.resource_version
    );
    assert_eq!(
        first.metadata.managed_fields,
        second.metadata.managed_fields
    );
}

const LISTS_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: boards.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: boards, singular: board, kind: Board}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              entries:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    value: {type: string}
                    weights:
                      type: array
                      x-kubernetes-list-type: map
                      x-kubernetes-list-map-keys: [zone]
                      items:
                        type: object
                        properties:
                          zone: {type: string}
                          weight: {type: integer}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
"#;

fn board(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Board", "metadata": {"name": "b"}, "spec": spec})
}

#[tokio::test]
async fn conflicts_inside_list_map_items_and_nested_items_transfer_with_force() {
    let cluster = FakeCluster::new();
    cluster.apply_yaml(LISTS_CRD).unwrap();
    let gvk = kube::api::GroupVersionKind::gvk("example.com", "v1", "Board");
    let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, "boards");
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(cluster.client(), "default", &ar);
    let a = board(json!({"entries": [
        {"name": "x", "value": "1", "weights": [{"zone": "z1", "weight": 1}]},
        {"name": "y", "value": "1"}]}));
    api.patch("b", &PatchParams::apply("alpha"), &Patch::Apply(&a))
        .await
        .unwrap();

    // beta changes x's value and a nested item's weight: two conflicts, keyed paths.
    let b = board(json!({"entries": [
        {"name": "x", "value": "2", "weights": [{"zone": "z1", "weight": 5}]}]}));
    let err = status_of(
        api.patch("b", &PatchParams::apply("beta"), &Patch::Apply(&b))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"alpha\":\n\
         - .spec.entries[name=\"x\"].value\n\
         - .spec.entries[name=\"x\"].weights[zone=\"z1\"].weight"
    );
    let causes: Vec<(String, String)> = err
        .details
        .unwrap()
        .causes
        .into_iter()
        .map(|c| (c.reason, c.field))
        .collect();
    assert_eq!(
        causes,
        vec![
            (
                "FieldManagerConflict".to_string(),
                ".spec.entries[name=\"x\"].value".to_string()
            ),
            (
                "FieldManagerConflict".to_string(),
                ".spec.entries[name=\"x\"].weights[zone=\"z1\"].weight".to_string()
            ),
        ]
    );

    // Forced: beta owns both fields now, alpha keeps the rest of the item.
    let out = api
        .patch("b", &PatchParams::apply("beta").force(), &Patch::Apply(&b))
        .await
        .unwrap();
    assert_eq!(out.data["spec"]["entries"][0]["value"], "2");
    assert_eq!(out.data["spec"]["entries"][0]["weights"][0]["weight"], 5);
    let fields = |m: &str| {
        out.metadata
            .managed_fields
            .clone()
            .unwrap()
            .into_iter()
            .find(|e| e.manager.as_deref() == Some(m))
            .unwrap()
            .fields_v1
            .unwrap()
            .0
    };
    let alpha_x = &fields("alpha")["f:spec"]["f:entries"]["k:{\"name\":\"x\"}"];
    assert!(alpha_x.get("f:value").is_none(), "{alpha_x}");
    assert!(alpha_x.get("f:name").is_some());
    let beta_x = &fields("beta")["f:spec"]["f:entries"]["k:{\"name\":\"x\"}"];
    assert!(beta_x.get("f:value").is_some(), "{beta_x}");

    // alpha re-applying its old values now conflicts with beta.
    let err = status_of(
        api.patch("b", &PatchParams::apply("alpha"), &Patch::Apply(&a))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"beta\":\n\
         - .spec.entries[name=\"x\"].value\n\
         - .spec.entries[name=\"x\"].weights[zone=\"z1\"].weight"
    );

    // beta dropping the item leaves it (alpha still owns its name and y untouched),
    // but the fields only beta owned go.
    let none = board(json!({}));
    let out = api
        .patch("b", &PatchParams::apply("beta"), &Patch::Apply(&none))
        .await
        .unwrap();
    let x = &out.data["spec"]["entries"][0];
    assert_eq!(x["name"], "x");
    assert!(x.get("value").is_none(), "{x}");
    assert_eq!(out.data["spec"]["entries"][1]["name"], "y");
}

#[tokio::test]
async fn update_managers_own_list_item_fields_they_change() {
    let cluster = FakeCluster::new();
    let api: Api<Deployment> = Api::default_namespaced(cluster.client());
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1"},
                                                      {"name": "side", "image": "busybox:1"}]}}}});
    api.patch("d", &PatchParams::apply("owner"), &Patch::Apply(&d))
        .await
        .unwrap();
    // kubectl set image (a strategic merge patch by another manager) takes main's image.
    let set_image = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}});
    api.patch(
        "d",
        &PatchParams {
            field_manager: Some("kubectl-set".into()),
            ..Default::default()
        },
        &Patch::Strategic(&set_image),
    )
    .await
    .unwrap();
    // The owner re-applying nginx:1 conflicts with the Update manager, named with its apiVersion.
    let err = status_of(
        api.patch("d", &PatchParams::apply("owner"), &Patch::Apply(&d))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-set\" using apps/v1: .spec.template.spec.containers[name=\"main\"].image"
    );
    // Applying the image kubectl-set chose is shared ownership, no conflict.
    let mut agree = d.clone();
    agree["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    api.patch("d", &PatchParams::apply("owner"), &Patch::Apply(&agree))
        .await
        .unwrap();
}

#[tokio::test]
async fn set_items_are_shared_and_removed_only_when_nobody_applies_them() {
    let cluster = FakeCluster::new();
    cluster.apply_yaml(LISTS_CRD).unwrap();
    let gvk = kube::api::GroupVersionKind::gvk("example.com", "v1", "Board");
    let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, "boards");
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(cluster.client(), "default", &ar);
    api.patch(
        "b",
        &PatchParams::apply("alpha"),
        &Patch::Apply(board(json!({"tags": ["a", "b"]}))),
    )
    .await
    .unwrap();
    let out = api
        .patch(
            "b",
            &PatchParams::apply("beta"),
            &Patch::Apply(board(json!({"tags": ["b", "c"]}))),
        )
        .await
        .unwrap();
    assert_eq!(out.data["spec"]["tags"], json!(["a", "b", "c"]));
    // alpha drops both of its tags: "a" goes, "b" stays (beta applies it too).
    let out = api
        .patch(
            "b",
            &PatchParams::apply("alpha"),
            &Patch::Apply(board(json!({"tags": []}))),
        )
        .await
        .unwrap();
    assert_eq!(out.data["spec"]["tags"], json!(["b", "c"]));
}
