//! Trees drawn as `clusteradm get ...` draws them (its default output).
//!
//! Every node prints as `<name> value`; children hang below with `├── `, `└── `, `│   `.
//! Upstream builds its trees from Go maps, so the order of siblings changes from run to run;
//! [`Node::sorted`] gives a stable (alphabetical) order where upstream has a map, and
//! [`Node::child`] keeps insertion order where the data has an order of its own (conditions,
//! feedback values).

use std::fmt;

/// One node of a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    name: String,
    value: String,
    children: Vec<Node>,
}

impl Node {
    /// A node `<name> value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            children: Vec::new(),
        }
    }

    /// Appends `child` and returns `self`.
    #[must_use]
    pub fn with(mut self, child: Node) -> Self {
        self.children.push(child);
        self
    }

    /// Appends `child`.
    pub fn child(&mut self, child: Node) -> &mut Self {
        self.children.push(child);
        self
    }

    /// The child named `name`, appended (with an empty value) if there is none.
    pub fn entry(&mut self, name: &str) -> &mut Node {
        let index = match self.children.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.children.push(Node::new(name, ""));
                self.children.len() - 1
            }
        };
        &mut self.children[index]
    }

    /// Sorts the children of this node by name (not their descendants).
    #[must_use]
    pub fn sorted(mut self) -> Self {
        self.children.sort_by(|a, b| a.name.cmp(&b.name));
        self
    }

    /// Sorts the children by name, in place.
    pub fn sort(&mut self) {
        self.children.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The children, in order.
    pub fn children(&self) -> &[Node] {
        &self.children
    }

    fn label(&self) -> String {
        let text = format!("<{}> {}", self.name, self.value);
        text.trim_end().to_string()
    }

    fn render(&self, prefix: &str, out: &mut String) {
        let last_index = self.children.len().saturating_sub(1);
        for (i, child) in self.children.iter().enumerate() {
            let last = i == last_index;
            out.push_str(prefix);
            out.push_str(if last { "└── " } else { "├── " });
            out.push_str(&child.label());
            out.push('\n');
            let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
            child.render(&deeper, out);
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = self.label();
        out.push('\n');
        self.render("", &mut out);
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_like_gotree() {
        let tree = Node::new("ManagedClusterSet", "")
            .with(
                Node::new("default", "")
                    .with(Node::new("BoundNamespace", ""))
                    .with(Node::new("Status", "No ManagedCluster selected")),
            )
            .with(
                Node::new("global", "")
                    .with(Node::new("BoundNamespace", "default"))
                    .with(Node::new("Status", "1 ManagedClusters selected")),
            );
        assert_eq!(
            tree.to_string(),
            "<ManagedClusterSet>\n\
             ├── <default>\n\
             │   ├── <BoundNamespace>\n\
             │   └── <Status> No ManagedCluster selected\n\
             └── <global>\n    \
             ├── <BoundNamespace> default\n    \
             └── <Status> 1 ManagedClusters selected\n"
        );
    }

    #[test]
    fn entries_are_reused_and_sorting_is_by_name() {
        let mut root = Node::new("root", "");
        root.entry("b").child(Node::new("x", "1"));
        root.entry("a");
        root.entry("b").child(Node::new("y", "2"));
        let root = root.sorted();
        let names: Vec<&str> = root.children().iter().map(Node::name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(root.children()[1].children().len(), 2);
    }
}
