//! The operations of each served resource, in Swagger 2 form (`paths`).
//!
//! Every path carries what clients read from it: the operation's
//! `x-kubernetes-group-version-kind` (kubectl finds a kind's schema and decides whether a kind
//! takes `fieldValidation` through it), the query parameters each verb accepts (among them
//! `fieldValidation` on every write), the media types a PATCH consumes (strategic merge patch
//! for built-in kinds only, which tells client-side `kubectl apply` which patch to compute),
//! and the schemas of request and response bodies. Operation ids and tags are formed as
//! kube-apiserver forms them (`readAppsV1NamespacedDeployment`, `apps_v1`).

use serde_json::{Map, Value, json};

use super::definitions::{DELETE_OPTIONS, PATCH, SCALE, STATUS, V2_PREFIX};
use crate::storage::registry::ResourceInfo;

/// The Go-style name of a group in operation ids (`apps` → `Apps`,
/// `rbac.authorization.k8s.io` → `RbacAuthorization`, `` → `Core`).
fn group_title(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    let trimmed = group.strip_suffix(".k8s.io").unwrap_or(group);
    trimmed
        .split(['.', '-'])
        .filter(|p| !p.is_empty())
        .map(capitalize)
        .collect()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The tag of a group version (`apps_v1`, `core_v1`, `rbacAuthorization_v1`).
fn tag(group: &str, version: &str) -> String {
    let title = group_title(group);
    let mut c = title.chars();
    let lower: String = match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    };
    format!("{lower}_{version}")
}

/// The URL prefix of a group version (`/api/v1`, `/apis/apps/v1`).
pub(crate) fn gv_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({"description": description, "in": "query", "name": name, "type": ty, "uniqueItems": true})
}

fn dry_run() -> Value {
    query(
        "dryRun",
        "string",
        "Set to All to run every stage of the request without persisting the result.",
    )
}

fn field_manager() -> Value {
    query(
        "fieldManager",
        "string",
        "The name of the actor making the change, recorded in managedFields.",
    )
}

fn field_validation() -> Value {
    query(
        "fieldValidation",
        "string",
        "What to do about unknown or duplicate fields in the request body: Ignore drops them silently, Warn (the default) drops them and answers with a Warning header for each, Strict refuses the request.",
    )
}

fn list_parameters(deleting: bool) -> Vec<Value> {
    let mut out = vec![];
    if !deleting {
        out.push(query(
            "allowWatchBookmarks",
            "boolean",
            "Ask for BOOKMARK events in a watch.",
        ));
    }
    out.push(query(
        "continue",
        "string",
        "The continue token of the previous page of a paginated list.",
    ));
    if deleting {
        out.push(dry_run());
    }
    out.push(query(
        "fieldSelector",
        "string",
        "Select objects by their fields.",
    ));
    if deleting {
        out.push(query(
            "gracePeriodSeconds",
            "integer",
            "Seconds before the objects are deleted.",
        ));
    }
    out.push(query(
        "labelSelector",
        "string",
        "Select objects by their labels.",
    ));
    out.push(query(
        "limit",
        "integer",
        "The largest number of objects to return in one page.",
    ));
    if deleting {
        out.push(query(
            "orphanDependents",
            "boolean",
            "Deprecated: whether dependents are orphaned; use propagationPolicy.",
        ));
        out.push(query(
            "propagationPolicy",
            "string",
            "How dependents are garbage collected: Orphan, Background or Foreground.",
        ));
    }
    out.push(query(
        "resourceVersion",
        "string",
        "Which version of the state to serve.",
    ));
    out.push(query(
        "resourceVersionMatch",
        "string",
        "How resourceVersion applies: Exact or NotOlderThan.",
    ));
    out.push(query(
        "sendInitialEvents",
        "boolean",
        "Start a watch with the current objects as ADDED events.",
    ));
    out.push(query(
        "timeoutSeconds",
        "integer",
        "How long the call may last.",
    ));
    if !deleting {
        out.push(query(
            "watch",
            "boolean",
            "Watch for changes instead of listing.",
        ));
    }
    out
}

fn body(schema: &str, required: bool) -> Value {
    json!({"in": "body", "name": "body", "required": required, "schema": {"$ref": format!("{V2_PREFIX}{schema}")}})
}

fn delete_parameters() -> Vec<Value> {
    vec![
        body(DELETE_OPTIONS, false),
        dry_run(),
        query(
            "gracePeriodSeconds",
            "integer",
            "Seconds before the object is deleted.",
        ),
        query(
            "orphanDependents",
            "boolean",
            "Deprecated: whether dependents are orphaned; use propagationPolicy.",
        ),
        query(
            "propagationPolicy",
            "string",
            "How dependents are garbage collected: Orphan, Background or Foreground.",
        ),
    ]
}

fn write_parameters(schema: &str, patch: bool) -> Vec<Value> {
    let mut out = vec![
        body(if patch { PATCH } else { schema }, true),
        dry_run(),
        field_manager(),
        field_validation(),
    ];
    if patch {
        out.push(query(
            "force",
            "boolean",
            "Force an apply request to take fields other managers own.",
        ));
    }
    out
}

fn response(description: &str, schema: Option<&str>) -> Value {
    match schema {
        Some(s) => {
            json!({"description": description, "schema": {"$ref": format!("{V2_PREFIX}{s}")}})
        }
        None => json!({"description": description}),
    }
}

/// What one operation is about.
struct Op<'a> {
    /// `x-kubernetes-action`.
    action: &'static str,
    /// The verb of its operation id (`read`, `list`, `create`, `replace`, `patch`, …).
    id_verb: &'static str,
    description: String,
    /// The kind the operation is about, for its GVK extension.
    gvk: (&'a str, &'a str, &'a str),
    parameters: Vec<Value>,
    consumes: Vec<&'static str>,
    responses: Vec<(&'static str, &'static str, Option<String>)>,
}

/// The names that go into every operation id of a resource version.
struct Names<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    namespaced: bool,
}

impl Names<'_> {
    fn operation_id(&self, verb: &str, all_namespaces: bool, sub: &str) -> String {
        format!(
            "{verb}{}{}{}{}{}{}",
            group_title(self.group),
            capitalize(self.version),
            if self.namespaced && !all_namespaces {
                "Namespaced"
            } else {
                ""
            },
            self.kind,
            capitalize(sub),
            if all_namespaces {
                "ForAllNamespaces"
            } else {
                ""
            },
        )
    }
}

fn operation(names: &Names<'_>, op: Op<'_>, all_namespaces: bool, sub: &str) -> Value {
    let mut responses = Map::new();
    for (code, description, schema) in op.responses {
        responses.insert(code.into(), response(description, schema.as_deref()));
    }
    responses.insert("401".into(), response("Unauthorized", None));
    let mut o = json!({
        "consumes": op.consumes,
        "description": op.description,
        "operationId": names.operation_id(op.id_verb, all_namespaces, sub),
        "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
        "responses": responses,
        "schemes": ["https"],
        "tags": [tag(names.group, names.version)],
        "x-kubernetes-action": op.action,
        "x-kubernetes-group-version-kind": {"group": op.gvk.0, "kind": op.gvk.2, "version": op.gvk.1},
    });
    if !op.parameters.is_empty() {
        o["parameters"] = Value::Array(op.parameters);
    }
    o
}

fn path_parameter(name: &str, description: &str) -> Value {
    json!({"description": description, "in": "path", "name": name, "required": true, "type": "string", "uniqueItems": true})
}

fn pretty() -> Value {
    query(
        "pretty",
        "string",
        "If 'true', the output is pretty printed.",
    )
}

/// Add the paths of `info` in `version` to `out`: `kind` and `list` name the definitions of
/// the kind and its list (`None` for kinds without one).
pub(crate) fn resource_paths(
    info: &ResourceInfo,
    version: &str,
    kind: &str,
    list: Option<&str>,
    out: &mut Map<String, Value>,
) {
    let group = info.group.as_str();
    let paths = ResourcePaths {
        info,
        names: Names {
            group,
            version,
            kind: &info.kind,
            namespaced: info.namespaced,
        },
        gvk: (group, version, info.kind.as_str()),
        kind,
        list,
        article: if info.kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        },
    };
    let prefix = gv_prefix(group, version);
    let collection = if info.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", info.plural)
    } else {
        format!("{prefix}/{}", info.plural)
    };

    // The collection.
    let mut item = paths.collection_operations();
    if !item.is_empty() {
        let mut parameters = Vec::new();
        if info.namespaced {
            parameters.push(namespace_parameter());
        }
        parameters.push(pretty());
        item.insert("parameters".into(), Value::Array(parameters));
        out.insert(collection.clone(), Value::Object(item));
    }

    // Every namespace at once.
    if info.namespaced && paths.can("list") {
        let mut item = Map::new();
        item.insert("get".into(), paths.list_operation(true));
        item.insert("parameters".into(), json!([pretty()]));
        out.insert(format!("{prefix}/{}", info.plural), Value::Object(item));
    }

    // One object, and its subresources.
    let gvk = paths.gvk;
    let mut subresources: Vec<(&str, (&str, &str, &str), &str)> = vec![("", gvk, kind)];
    if info.status_subresource {
        subresources.push(("status", gvk, kind));
    }
    if info.scale.is_some() {
        subresources.push(("scale", ("autoscaling", "v1", "Scale"), SCALE));
    }
    for (sub, sub_gvk, schema) in subresources {
        let mut item = paths.object_operations(sub, sub_gvk, schema);
        if item.is_empty() {
            continue;
        }
        let what = if sub == "scale" { "Scale" } else { &info.kind };
        let mut parameters = vec![path_parameter("name", &format!("name of the {what}"))];
        if info.namespaced {
            parameters.push(namespace_parameter());
        }
        parameters.push(pretty());
        item.insert("parameters".into(), Value::Array(parameters));
        let path = if sub.is_empty() {
            format!("{collection}/{{name}}")
        } else {
            format!("{collection}/{{name}}/{sub}")
        };
        out.insert(path, Value::Object(item));
    }
}

/// The `namespace` path parameter.
fn namespace_parameter() -> Value {
    path_parameter(
        "namespace",
        "object name and auth scope, such as for teams and projects",
    )
}

/// A resource version whose paths are being written: what its operations share.
struct ResourcePaths<'a> {
    info: &'a ResourceInfo,
    names: Names<'a>,
    gvk: (&'a str, &'a str, &'a str),
    /// The definition of the kind.
    kind: &'a str,
    /// The definition of the kind's list, if it has one.
    list: Option<&'a str>,
    /// `a` or `an`, before the kind's name.
    article: &'static str,
}

impl ResourcePaths<'_> {
    /// Whether the resource serves `verb`.
    fn can(&self, verb: &str) -> bool {
        self.info.verbs.iter().any(|v| v == verb)
    }

    /// The patch types the resource takes (strategic merge for built-in kinds only).
    fn patch_types(&self) -> Vec<&'static str> {
        let mut types = vec![
            "application/json-patch+json",
            "application/merge-patch+json",
        ];
        if self.info.crd_name.is_none() {
            types.push("application/strategic-merge-patch+json");
        }
        types.push("application/apply-patch+yaml");
        types
    }

    /// The list (or watch) operation, of one namespace or of all of them.
    fn list_operation(&self, all_namespaces: bool) -> Value {
        operation(
            &self.names,
            Op {
                action: "list",
                id_verb: "list",
                description: format!("list or watch objects of kind {}", self.info.kind),
                gvk: self.gvk,
                parameters: list_parameters(false),
                consumes: vec!["*/*"],
                responses: vec![("200", "OK", self.list.map(str::to_string))],
            },
            all_namespaces,
            "",
        )
    }

    /// The operations on the collection the resource serves: list, create, delete all.
    fn collection_operations(&self) -> Map<String, Value> {
        let (info, kind) = (self.info, self.kind);
        let mut item = Map::new();
        if self.can("list") {
            item.insert("get".into(), self.list_operation(false));
        }
        if self.can("create") {
            item.insert(
                "post".into(),
                operation(
                    &self.names,
                    Op {
                        action: "post",
                        id_verb: "create",
                        description: format!("create {} {}", self.article, info.kind),
                        gvk: self.gvk,
                        parameters: write_parameters(kind, false),
                        consumes: vec!["*/*"],
                        responses: vec![
                            ("200", "OK", Some(kind.to_string())),
                            ("201", "Created", Some(kind.to_string())),
                            ("202", "Accepted", Some(kind.to_string())),
                        ],
                    },
                    false,
                    "",
                ),
            );
        }
        if self.can("deletecollection") {
            let mut parameters = vec![body(DELETE_OPTIONS, false)];
            parameters.extend(list_parameters(true));
            item.insert(
                "delete".into(),
                operation(
                    &self.names,
                    Op {
                        action: "deletecollection",
                        id_verb: "deleteCollection",
                        description: format!("delete collection of {}", info.kind),
                        gvk: self.gvk,
                        parameters,
                        consumes: vec!["*/*"],
                        responses: vec![("200", "OK", Some(STATUS.to_string()))],
                    },
                    false,
                    "",
                ),
            );
        }
        item
    }

    /// The operations the resource serves on one object (`sub` empty) or on its
    /// subresource `sub` of kind `sub_gvk` (definition `schema`): read, replace, patch,
    /// and for the object itself delete.
    fn object_operations(
        &self,
        sub: &str,
        sub_gvk: (&str, &str, &str),
        schema: &str,
    ) -> Map<String, Value> {
        let info = self.info;
        let mut item = Map::new();
        let of = if sub.is_empty() {
            String::new()
        } else {
            format!(" {sub} of")
        };
        if self.can("get") {
            item.insert(
                "get".into(),
                operation(
                    &self.names,
                    Op {
                        action: "get",
                        id_verb: "read",
                        description: format!("read{of} the specified {}", info.kind),
                        gvk: sub_gvk,
                        parameters: Vec::new(),
                        consumes: vec!["*/*"],
                        responses: vec![("200", "OK", Some(schema.to_string()))],
                    },
                    false,
                    sub,
                ),
            );
        }
        if self.can("update") {
            item.insert(
                "put".into(),
                operation(
                    &self.names,
                    Op {
                        action: "put",
                        id_verb: "replace",
                        description: format!("replace{of} the specified {}", info.kind),
                        gvk: sub_gvk,
                        parameters: write_parameters(schema, false),
                        consumes: vec!["*/*"],
                        responses: vec![
                            ("200", "OK", Some(schema.to_string())),
                            ("201", "Created", Some(schema.to_string())),
                        ],
                    },
                    false,
                    sub,
                ),
            );
        }
        if self.can("patch") {
            item.insert(
                "patch".into(),
                operation(
                    &self.names,
                    Op {
                        action: "patch",
                        id_verb: "patch",
                        description: format!("partially update{of} the specified {}", info.kind),
                        gvk: sub_gvk,
                        parameters: write_parameters(schema, true),
                        consumes: self.patch_types(),
                        responses: vec![
                            ("200", "OK", Some(schema.to_string())),
                            ("201", "Created", Some(schema.to_string())),
                        ],
                    },
                    false,
                    sub,
                ),
            );
        }
        if sub.is_empty() && self.can("delete") {
            item.insert(
                "delete".into(),
                operation(
                    &self.names,
                    Op {
                        action: "delete",
                        id_verb: "delete",
                        description: format!("delete {} {}", self.article, info.kind),
                        gvk: self.gvk,
                        parameters: delete_parameters(),
                        consumes: vec!["*/*"],
                        responses: vec![
                            ("200", "OK", Some(STATUS.to_string())),
                            ("202", "Accepted", Some(STATUS.to_string())),
                        ],
                    },
                    false,
                    sub,
                ),
            );
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_and_tags_are_formed_as_kube_apiserver_forms_them() {
        assert_eq!(group_title(""), "Core");
        assert_eq!(
            group_title("rbac.authorization.k8s.io"),
            "RbacAuthorization"
        );
        assert_eq!(
            group_title("work.open-cluster-management.io"),
            "WorkOpenClusterManagementIo"
        );
        assert_eq!(tag("apps", "v1"), "apps_v1");
        assert_eq!(tag("cert-manager.io", "v1"), "certManagerIo_v1");
        let n = Names {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            namespaced: true,
        };
        assert_eq!(
            n.operation_id("read", false, "status"),
            "readAppsV1NamespacedDeploymentStatus"
        );
        assert_eq!(
            n.operation_id("list", true, ""),
            "listAppsV1DeploymentForAllNamespaces"
        );
    }
}
