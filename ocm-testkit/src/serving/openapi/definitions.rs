//! The schemas of the built-in kinds, as kube-apiserver publishes them.
//!
//! They come from k8s-openapi's `schemars` implementations (the Kubernetes API's own
//! descriptions and field types, named as kube-apiserver names its definitions, e.g.
//! `io.k8s.api.apps.v1.DeploymentSpec`), turned into Swagger 2 `definitions` the way
//! kube-apiserver writes them:
//!
//! - references point into `#/definitions/` and keep their `description` beside the `$ref`;
//! - the types that JSON Schema cannot name exactly take kube-apiserver's published forms:
//!   `IntOrString` is a string of format `int-or-string`, `Quantity` a string, and the
//!   free-form values of CustomResourceDefinitions (`JSON`, `JSONSchemaPropsOr…`) carry no
//!   type at all;
//! - list, map and patch semantics and the `required` lists follow [`super::semantics`];
//! - every served kind (and its `…List`) carries `x-kubernetes-group-version-kind`.
//!
//! The definitions are built once per process, on first use, and shared by every fake
//! cluster.

use std::collections::HashMap;
use std::sync::OnceLock;

use k8s_openapi::api;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use super::semantics::{FIELDS, REQUIRED};

/// Where Swagger 2 documents keep their definitions.
pub(crate) const V2_PREFIX: &str = "#/definitions/";

/// The standard description of `apiVersion` (kube-apiserver's `TypeMeta`).
pub(crate) const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";

/// The standard description of `kind` (kube-apiserver's `TypeMeta`).
pub(crate) const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The standard description of an object's `metadata`.
pub(crate) const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The standard description of a list's `metadata`.
pub(crate) const LIST_METADATA_DESCRIPTION: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// `ObjectMeta`'s definition name.
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `ListMeta`'s definition name.
pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// `Status`'s definition name.
pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
/// `DeleteOptions`' definition name.
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
/// `Patch`'s definition name.
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
/// `autoscaling/v1` `Scale`'s definition name.
pub(crate) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// Definition names by group, version and kind (nested, so that lookups by `&str` need no
/// allocation).
type KindIndex = HashMap<String, HashMap<String, HashMap<String, String>>>;

/// The built-in definitions.
#[derive(Debug)]
pub(crate) struct Builtins {
    /// Swagger 2 definitions by name (references into `#/definitions/`).
    pub(crate) definitions: Map<String, Value>,
    /// The definition of each built-in kind (and of its list kind).
    kinds: KindIndex,
}

impl Builtins {
    /// The definition name of a built-in kind.
    pub(crate) fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.kinds
            .get(group)?
            .get(version)?
            .get(kind)
            .map(String::as_str)
    }
}

/// The process-wide built-in definitions.
pub(crate) fn builtins() -> &'static Builtins {
    static BUILTINS: OnceLock<Builtins> = OnceLock::new();
    BUILTINS.get_or_init(generate)
}

struct Collector {
    generator: SchemaGenerator,
    kinds: Vec<((String, String, String), String)>,
}

impl Collector {
    fn kind<T: JsonSchema>(&mut self, group: &str, version: &str, kind: &str) {
        self.generator.subschema_for::<T>();
        self.kinds.push((
            (group.to_string(), version.to_string(), kind.to_string()),
            T::schema_name().into_owned(),
        ));
    }

    fn support<T: JsonSchema>(&mut self) {
        self.generator.subschema_for::<T>();
    }
}

/// Generate the built-in definitions: collect the schemas of the built-in kinds, publish
/// them as Swagger 2 definitions, add list definitions and index them all by kind.
fn generate() -> Builtins {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/definitions".into();
    settings.meta_schema = None;
    let mut c = Collector {
        generator: settings.into_generator(),
        kinds: Vec::new(),
    };
    c.builtin_kinds();
    let raw = c.generator.take_definitions(true);
    let mut definitions = Map::new();
    for (name, schema) in raw {
        let published = publish(&name, schema);
        definitions.insert(name, published);
    }
    let kinds = index_kinds(&mut definitions, c.kinds);
    if let Some(Value::Object(status)) = definitions.get_mut(STATUS) {
        status.insert(
            "x-kubernetes-group-version-kind".into(),
            gvk("", "v1", "Status"),
        );
    }
    Builtins { definitions, kinds }
}

impl Collector {
    /// Collect the schema of every built-in kind and of what their operations refer to.
    fn builtin_kinds(&mut self) {
        let c = self;
        // Every kind in `crate::storage::builtin`'s table (a test checks that none is missing), plus the
        // scale subresource's kind.
        c.kind::<api::core::v1::Namespace>("", "v1", "Namespace");
        c.kind::<api::core::v1::ConfigMap>("", "v1", "ConfigMap");
        c.kind::<api::core::v1::Secret>("", "v1", "Secret");
        c.kind::<api::core::v1::ServiceAccount>("", "v1", "ServiceAccount");
        c.kind::<api::core::v1::Service>("", "v1", "Service");
        c.kind::<api::core::v1::Pod>("", "v1", "Pod");
        c.kind::<api::core::v1::Node>("", "v1", "Node");
        c.kind::<api::core::v1::Event>("", "v1", "Event");
        c.kind::<api::core::v1::PersistentVolumeClaim>("", "v1", "PersistentVolumeClaim");
        c.kind::<api::core::v1::Endpoints>("", "v1", "Endpoints");
        c.kind::<api::core::v1::ResourceQuota>("", "v1", "ResourceQuota");
        c.kind::<api::apps::v1::Deployment>("apps", "v1", "Deployment");
        c.kind::<api::apps::v1::ReplicaSet>("apps", "v1", "ReplicaSet");
        c.kind::<api::apps::v1::StatefulSet>("apps", "v1", "StatefulSet");
        c.kind::<api::apps::v1::DaemonSet>("apps", "v1", "DaemonSet");
        c.kind::<api::apps::v1::ControllerRevision>("apps", "v1", "ControllerRevision");
        c.kind::<api::batch::v1::Job>("batch", "v1", "Job");
        c.kind::<api::batch::v1::CronJob>("batch", "v1", "CronJob");
        let rbac = "rbac.authorization.k8s.io";
        c.kind::<api::rbac::v1::Role>(rbac, "v1", "Role");
        c.kind::<api::rbac::v1::ClusterRole>(rbac, "v1", "ClusterRole");
        c.kind::<api::rbac::v1::RoleBinding>(rbac, "v1", "RoleBinding");
        c.kind::<api::rbac::v1::ClusterRoleBinding>(rbac, "v1", "ClusterRoleBinding");
        c.kind::<apiext::CustomResourceDefinition>(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        );
        c.kind::<api::coordination::v1::Lease>("coordination.k8s.io", "v1", "Lease");
        c.kind::<api::events::v1::Event>("events.k8s.io", "v1", "Event");
        c.kind::<api::policy::v1::PodDisruptionBudget>("policy", "v1", "PodDisruptionBudget");
        c.kind::<api::scheduling::v1::PriorityClass>("scheduling.k8s.io", "v1", "PriorityClass");
        c.kind::<api::networking::v1::Ingress>("networking.k8s.io", "v1", "Ingress");
        c.kind::<api::networking::v1::NetworkPolicy>("networking.k8s.io", "v1", "NetworkPolicy");
        let authz = "authorization.k8s.io";
        c.kind::<api::authorization::v1::SubjectAccessReview>(authz, "v1", "SubjectAccessReview");
        c.kind::<api::authorization::v1::LocalSubjectAccessReview>(
            authz,
            "v1",
            "LocalSubjectAccessReview",
        );
        c.kind::<api::authorization::v1::SelfSubjectAccessReview>(
            authz,
            "v1",
            "SelfSubjectAccessReview",
        );
        c.kind::<api::autoscaling::v1::Scale>("autoscaling", "v1", "Scale");
        // What every resource's operations and custom resources refer to.
        c.support::<meta::ObjectMeta>();
        c.support::<meta::ListMeta>();
        c.support::<meta::Status>();
        c.support::<meta::DeleteOptions>();
        c.support::<meta::Patch>();
    }
}

/// Mark each collected kind's definition with its group, version and kind, add the
/// definitions of their lists, and index both by group, version and kind.
fn index_kinds(
    definitions: &mut Map<String, Value>,
    collected: Vec<((String, String, String), String)>,
) -> KindIndex {
    let mut kinds = KindIndex::new();
    let mut index = |group: &str, version: &str, kind: String, name: String| {
        kinds
            .entry(group.to_string())
            .or_default()
            .entry(version.to_string())
            .or_default()
            .insert(kind, name);
    };
    for ((group, version, kind), name) in collected {
        if let Some(Value::Object(def)) = definitions.get_mut(&name) {
            def.insert(
                "x-kubernetes-group-version-kind".into(),
                gvk(&group, &version, &kind),
            );
        }
        // Scale and the access reviews have no lists.
        let listed = !(group.starts_with("authorization.") || group == "autoscaling");
        if listed {
            let list_name = format!("{name}List");
            let list = list_definition(&name, &group, &version, &kind);
            definitions.insert(list_name.clone(), list);
            index(&group, &version, format!("{kind}List"), list_name);
        }
        index(&group, &version, kind, name);
    }
    kinds
}

/// `x-kubernetes-group-version-kind` as definitions carry it (a list of one).
pub(crate) fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "kind": kind, "version": version}])
}

/// The `…List` definition of a kind, as kube-apiserver publishes list kinds.
pub(crate) fn list_definition(item: &str, group: &str, version: &str, kind: &str) -> Value {
    let plural_hint = format!("{kind} objects");
    json!({
        "description": format!("{kind}List is a list of {plural_hint}."),
        "properties": {
            "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
            "items": {
                "description": format!("Items is the list of {plural_hint}."),
                "items": {"$ref": format!("{V2_PREFIX}{item}")},
                "type": "array",
            },
            "kind": {"description": KIND_DESCRIPTION, "type": "string"},
            "metadata": {
                "$ref": format!("{V2_PREFIX}{LIST_META}"),
                "description": LIST_METADATA_DESCRIPTION,
            },
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": gvk(group, version, &format!("{kind}List")),
    })
}

/// One definition as kube-apiserver publishes it in Swagger 2.
fn publish(name: &str, mut schema: Value) -> Value {
    let description = schema.get("description").cloned();
    let with_description = |mut v: Value| {
        if let (Some(d), Some(m)) = (&description, v.as_object_mut()) {
            m.insert("description".into(), d.clone());
        }
        v
    };
    match name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
            return with_description(json!({"format": "int-or-string", "type": "string"}));
        }
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            return with_description(json!({"type": "string"}));
        }
        _ => {}
    }
    if schema.get("oneOf").is_some()
        || name == "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
    {
        // The free-form values of CustomResourceDefinitions.
        return with_description(json!({}));
    }
    let Some(def) = schema.as_object_mut() else {
        return schema;
    };
    let top_level = def
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| {
            p.contains_key("apiVersion") && p.contains_key("kind") && p.contains_key("metadata")
        });
    match REQUIRED.iter().find(|(d, _)| *d == name) {
        Some((_, required)) => {
            if required.is_empty() {
                def.remove("required");
            } else {
                def.insert("required".into(), json!(required));
            }
        }
        None if top_level => {
            if let Some(Value::Array(req)) = def.get_mut("required") {
                req.retain(|r| r != "metadata");
                if req.is_empty() {
                    def.remove("required");
                }
            }
        }
        None => {}
    }
    for (_, property, semantics) in FIELDS.iter().filter(|(d, _, _)| *d == name) {
        let target = if property.is_empty() {
            Some(&mut *def)
        } else {
            def.get_mut("properties")
                .and_then(|p| p.get_mut(*property))
                .and_then(Value::as_object_mut)
        };
        if let Some(target) = target {
            for (k, v) in semantics.extensions() {
                target.insert(k.into(), v);
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    out.push(r.to_string());
                }
                m.values().for_each(|c| refs(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
            _ => {}
        }
    }

    #[test]
    fn every_builtin_kind_has_a_definition() {
        let b = builtins();
        for info in crate::storage::builtin::builtin_resources() {
            for v in &info.versions {
                let name = b.kind(&info.group, v, &info.kind);
                assert!(
                    name.is_some(),
                    "no definition for {}/{v} {}",
                    info.group,
                    info.kind
                );
                assert!(b.definitions.contains_key(name.unwrap_or_default()));
            }
        }
    }

    #[test]
    fn every_reference_resolves() {
        let b = builtins();
        let mut all = Vec::new();
        refs(&Value::Object(b.definitions.clone()), &mut all);
        assert!(!all.is_empty());
        for r in all {
            let name = r.strip_prefix(V2_PREFIX).unwrap_or_else(|| panic!("{r}"));
            assert!(b.definitions.contains_key(name), "{r} does not resolve");
        }
    }

    #[test]
    fn published_forms_follow_kube_apiserver() {
        let d = &builtins().definitions;
        let deployment = &d["io.k8s.api.apps.v1.Deployment"];
        assert!(deployment.get("required").is_none(), "{deployment}");
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        assert_eq!(
            d["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["selector"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"
        );
        let containers = &d["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        let ports = &d["io.k8s.api.core.v1.ServiceSpec"]["properties"]["ports"];
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            json!(["port", "protocol"])
        );
        assert_eq!(
            d["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"],
            "int-or-string"
        );
        assert_eq!(
            d["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"],
            "string"
        );
        assert_eq!(
            d["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]["x-kubernetes-map-type"],
            "atomic"
        );
        assert!(
            d["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"]
                .get("type")
                .is_none()
        );
        assert_eq!(
            d["io.k8s.api.core.v1.ConfigMapKeySelector"]["required"],
            json!(["key"])
        );
        assert_eq!(
            d["io.k8s.api.apps.v1.DeploymentList"]["required"],
            json!(["items"])
        );
    }
}
