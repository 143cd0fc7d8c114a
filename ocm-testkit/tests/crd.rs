//! CRDs registered at run time: discovery, dynamic CRUD, status subresource,
//! schema defaulting and pruning, list-map merge semantics in apply.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::discovery::{Discovery, Scope};
use ocm_testkit::FakeCluster;
use serde_json::json;

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "default": 3},
                            "color": {"type": "string"},
                            "parts": {"type": "array", "x-kubernetes-list-type": "map",
                                      "x-kubernetes-list-map-keys": ["id"],
                                      "items": {"type": "object", "properties": {
                                          "id": {"type": "string"}, "qty": {"type": "integer"}}}},
                            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                        }},
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
                    }
                }}
            }]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn crd_is_served_at_once_with_schema_and_status() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &widget_crd())
        .await
        .unwrap();
    let established = crds.get("widgets.example.com").await.unwrap();
    let conds = established.status.unwrap().conditions.unwrap();
    assert!(
        conds
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );

    // Discovery, legacy and aggregated, both see it.
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    for discovery in [
        Discovery::new(client.clone()).run().await.unwrap(),
        Discovery::new(client.clone())
            .run_aggregated()
            .await
            .unwrap(),
    ] {
        let (ar, caps) = discovery.resolve_gvk(&gvk).expect("widget discovered");
        assert_eq!(ar.plural, "widgets");
        assert_eq!(caps.scope, Scope::Namespaced);
    }

    let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let obj = DynamicObject::new("w1", &ar).data(json!({
        "spec": {"color": "red", "unknown": "pruned", "free": {"any": {"thing": 1}}},
        "status": {"ready": true},
        "junk": 1
    }));
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(created.data["spec"]["size"], 3, "defaulted");
    assert!(created.data["spec"].get("unknown").is_none(), "pruned");
    assert!(created.data.get("junk").is_none(), "pruned");
    assert_eq!(created.data["spec"]["free"]["any"]["thing"], 1, "preserved");
    assert!(
        created.data.get("status").is_none(),
        "status ignored on create"
    );
    assert_eq!(created.metadata.generation, Some(1));

    // Schema validation: a wrong type is a 422 worded like kube-apiserver's.
    let bad = DynamicObject::new("bad", &ar).data(json!({"spec": {"size": "big"}}));
    let err = api.create(&PostParams::default(), &bad).await.unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("expected a Status")
    };
    assert_eq!(s.code, 422);
    assert_eq!(
        s.message,
        "Widget.example.com \"bad\" is invalid: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
    );

    // fieldValidation=Strict turns silent pruning into an error.
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..PatchParams::default()
    };
    let err = api
        .patch("w1", &strict, &Patch::Merge(json!({"spec": {"bogus": 1}})))
        .await
        .unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("expected a Status")
    };
    assert_eq!(s.code, 422);
    assert!(
        s.message
            .ends_with("strict decoding error: unknown field \"spec.bogus\""),
        "{}",
        s.message
    );
    // Server-side apply refuses such a field whatever fieldValidation says: the field
    // manager's typed conversion fails before any pruning.
    let unknown = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                         "metadata": {"name": "strict"}, "spec": {"bogus": 1}});
    let mut strict = PatchParams::apply("strict");
    strict.field_validation = Some(kube::api::ValidationDirective::Strict);
    let err = api
        .patch("strict", &strict, &Patch::Apply(&unknown))
        .await
        .unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("expected a Status")
    };
    assert_eq!(s.code, 500);
    assert_eq!(
        s.message,
        "failed to create typed patch object (/strict; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema"
    );

    let st = json!({"status": {"ready": true}});
    let out = api
        .patch_status("w1", &PatchParams::default(), &Patch::Merge(&st))
        .await
        .unwrap();
    assert_eq!(out.data["status"]["ready"], true);
    assert_eq!(out.metadata.generation, Some(1));

    // Apply with list-map semantics from the schema.
    let a = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
                   "spec": {"parts": [{"id": "a", "qty": 1}]}});
    api.patch("w2", &PatchParams::apply("one"), &Patch::Apply(&a))
        .await
        .unwrap();
    let b = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
                   "spec": {"parts": [{"id": "b", "qty": 2}]}});
    let out = api
        .patch("w2", &PatchParams::apply("two"), &Patch::Apply(&b))
        .await
        .unwrap();
    assert_eq!(
        out.data["spec"]["parts"],
        json!([{"id": "a", "qty": 1}, {"id": "b", "qty": 2}])
    );

    // Deleting the CRD stops serving it and drops its objects.
    crds.delete("widgets.example.com", &Default::default())
        .await
        .unwrap();
    let err = api.get("w1").await.unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 404));
    let d = Discovery::new(client).run().await.unwrap();
    assert!(d.resolve_gvk(&gvk).is_none());
}
