//! The built-in definitions compiled into a walkable model of which fields exist where.
//!
//! kube-apiserver decodes a built-in object into its Go type, so a field the type lacks is
//! unknown wherever it appears. The model answers that question for any point of an object:
//! the fields of a struct, the values of a map, the items of a list (and, for associative
//! lists, the key fields server-side apply names items by), or a value decoded as raw JSON
//! (`RawExtension`, `FieldsV1`, a CRD's `JSON`) that may hold anything.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::definitions::{V2_PREFIX, builtins};

/// A point of the model.
pub(crate) type NodeId = usize;

/// What a point of an object may hold.
#[derive(Debug)]
pub(crate) enum Node {
    /// A struct: its fields by JSON name.
    Struct(HashMap<String, NodeId>),
    /// A map: the type of its values.
    Map(NodeId),
    /// A list: the type of its items, and the key fields of an associative list
    /// (`x-kubernetes-list-map-keys`, or the strategic-merge key of a list that merges).
    List {
        /// The items' type.
        items: NodeId,
        /// The key fields, for associative lists keyed by fields.
        keys: Option<Vec<String>>,
    },
    /// A string, number or boolean.
    Scalar,
    /// Raw JSON: anything goes.
    Any,
}

/// The compiled model.
#[derive(Debug, Default)]
pub(crate) struct Model {
    nodes: Vec<Node>,
    names: HashMap<String, NodeId>,
}

impl Model {
    /// The node `id` (`Any` for an id the model does not have).
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id).unwrap_or(&Node::Any)
    }

    /// The node of a definition.
    pub(crate) fn definition(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied()
    }

    /// Compile Swagger 2 definitions (references into `#/definitions/`).
    pub(crate) fn compile(definitions: &serde_json::Map<String, Value>) -> Self {
        let mut model = Model::default();
        for name in definitions.keys() {
            let id = model.nodes.len();
            model.nodes.push(Node::Any);
            model.names.insert(name.clone(), id);
        }
        for (name, schema) in definitions {
            let node = model.build(schema);
            if let Some(&id) = model.names.get(name) {
                model.nodes[id] = node;
            }
        }
        model
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The node of a property, item or value schema: the referenced definition's own node for
    /// a reference, a new node otherwise.
    fn id_of(&mut self, schema: &Value) -> NodeId {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return r
                .strip_prefix(V2_PREFIX)
                .and_then(|n| self.names.get(n).copied())
                .unwrap_or_else(|| self.push(Node::Any));
        }
        let node = self.build(schema);
        self.push(node)
    }

    fn build(&mut self, schema: &Value) -> Node {
        let ty = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object);
        match ty {
            "array" => {
                let items = match schema.get("items") {
                    Some(i) => self.id_of(i),
                    None => self.push(Node::Any),
                };
                Node::List {
                    items,
                    keys: list_keys(schema),
                }
            }
            "object" | "" => {
                if let Some(props) = properties {
                    let mut fields = HashMap::with_capacity(props.len());
                    for (k, v) in props {
                        let id = self.id_of(v);
                        fields.insert(k.clone(), id);
                    }
                    Node::Struct(fields)
                } else if let Some(values) =
                    schema.get("additionalProperties").filter(|a| a.is_object())
                {
                    Node::Map(self.id_of(values))
                } else {
                    Node::Any
                }
            }
            _ => Node::Scalar,
        }
    }
}

/// The key fields of an associative list, as server-side apply's schema conversion decides
/// them: `x-kubernetes-list-type: map` with its keys, else a strategic `merge` with a merge
/// key.
fn list_keys(schema: &Value) -> Option<Vec<String>> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("map") => return schema.get("x-kubernetes-list-map-keys").map(strings),
        Some(_) => return None,
        None => {}
    }
    let merges = schema
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str)
        .is_some_and(|s| s.split(',').any(|p| p == "merge"));
    if merges {
        return schema
            .get("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
            .map(|k| vec![k.to_string()]);
    }
    None
}

/// The model of the built-in definitions, compiled once per process.
pub(crate) fn builtin_model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| Model::compile(&builtins().definitions))
}
