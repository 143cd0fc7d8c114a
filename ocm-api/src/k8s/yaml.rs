//! YAML document streams and `List` expansion: the one rule every reader of manifests in the
//! SDK follows (the [`ManifestWorkBuilder`](crate::builder::ManifestWorkBuilder), the
//! testkit's `apply_yaml` and the placement simulator).
//!
//! **Documents.** A stream is split at document markers, as `kubectl apply -f` splits it:
//!
//! * a line that is `---`, or `---` followed by a space or a tab, starts a new document; text
//!   after the marker on the same line (`--- a: 1`) belongs to the new document, unless it is a
//!   comment;
//! * a line that is `...` ends the current document;
//! * a document whose lines are all blank or comments is skipped, and is not counted: documents
//!   are numbered from 1 among the others, and every error names that number;
//! * a document that parses to null (`~`, `null`) is empty as well, and is skipped.
//!
//! Splitting is lazy ([`documents`] is an iterator of slices of the input), so a reader holds
//! one document's tree at a time.
//!
//! **Lists.** An object whose `kind` ends in `List` (`List`, `ConfigMapList`, ...) stands for
//! its `items`, in order, whatever its `apiVersion` (kubectl flattens every list type, and
//! `kubectl get -o yaml` prints a `v1` `List`). Items that are lists are expanded in turn; null
//! items are skipped; absent or null `items` is an empty list, any other non-list `items` an
//! error. Everything else must be an object (a mapping).
//!
//! ```
//! use ocm_api::k8s::yaml;
//!
//! let text = "# leading comment\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n--- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n";
//! let docs: Vec<_> = yaml::documents(text).map(|d| (d.index, d.line)).collect();
//! assert_eq!(docs, [(1, 3), (2, 8)]);
//! let objects = yaml::objects(text)?;
//! assert_eq!(objects.len(), 2);
//! assert_eq!(objects[1]["kind"], "Secret");
//!
//! let err = yaml::objects("kind: A\n---\n[1]\n").unwrap_err();
//! assert_eq!(err.to_string(), "document 2 (line 3): expected an object (a mapping), found a list");
//! # Ok::<(), yaml::StreamError>(())
//! ```

use serde_json::{Map, Value};

/// One non-empty document of a YAML stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Document<'a> {
    /// 1-based number among the stream's non-empty documents.
    pub index: usize,
    /// 1-based line of the input the document's text starts on.
    pub line: usize,
    /// The document's text (a slice of the input).
    pub text: &'a str,
}

/// The non-empty documents of a YAML stream, in order (see the [module docs](self)).
pub fn documents(text: &str) -> Documents<'_> {
    Documents {
        text,
        pos: 0,
        line: 1,
        index: 0,
    }
}

/// Iterator returned by [`documents`].
#[derive(Debug, Clone)]
pub struct Documents<'a> {
    text: &'a str,
    /// Byte offset of the next unread line.
    pos: usize,
    /// 1-based number of the line at `pos`.
    line: usize,
    /// Non-empty documents returned so far.
    index: usize,
}

/// How a line of a stream delimits documents.
#[derive(Clone, Copy)]
enum Marker {
    /// Not a marker.
    None,
    /// `---`, with the byte offset in the line of what follows it when that is content.
    Start(Option<usize>),
    /// `...`.
    End,
}

fn marker(raw: &str) -> Marker {
    let line = raw.strip_suffix('\n').unwrap_or(raw);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line == "..." {
        return Marker::End;
    }
    let Some(rest) = line.strip_prefix("---") else {
        return Marker::None;
    };
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return Marker::None;
    }
    let content = rest.trim_start_matches([' ', '\t']);
    if content.is_empty() || content.starts_with('#') {
        Marker::Start(None)
    } else {
        Marker::Start(Some(line.len() - content.len()))
    }
}

/// Whether `text` has something other than blank lines and comments.
fn has_content(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#')
    })
}

impl<'a> Documents<'a> {
    /// The line at the read position, without consuming it.
    fn peek(&self) -> Option<&'a str> {
        let rest = &self.text[self.pos..];
        rest.split_inclusive('\n').next()
    }

    fn consume(&mut self, raw: &str) {
        self.pos += raw.len();
        self.line += 1;
    }
}

impl<'a> Iterator for Documents<'a> {
    type Item = Document<'a>;

    fn next(&mut self) -> Option<Document<'a>> {
        while let Some(first) = self.peek() {
            let (start, first_line) = match marker(first) {
                // A `---` line opens the document; content after it belongs to it.
                Marker::Start(content) => {
                    let at = (self.pos, self.line);
                    self.consume(first);
                    match content {
                        Some(offset) => (at.0 + offset, at.1),
                        None => (self.pos, self.line),
                    }
                }
                _ => (self.pos, self.line),
            };
            let mut end = self.text.len();
            while let Some(raw) = self.peek() {
                match marker(raw) {
                    Marker::None => self.consume(raw),
                    Marker::Start(_) => {
                        // The next document's opening line: read again by the next call.
                        end = self.pos;
                        break;
                    }
                    Marker::End => {
                        end = self.pos;
                        self.consume(raw);
                        break;
                    }
                }
            }
            let text = &self.text[start..end];
            if has_content(text) {
                self.index += 1;
                return Some(Document {
                    index: self.index,
                    line: first_line,
                    text,
                });
            }
        }
        None
    }
}

/// Whether an object of kind `kind` is a list that stands for its `items`.
pub fn is_list_kind(kind: &str) -> bool {
    kind.ends_with("List")
}

/// What one document, or one list item, is under the rule of this module (a closed set).
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// Null: nothing.
    Empty,
    /// An object to read.
    Object(Map<String, Value>),
    /// A list's items, to read in turn.
    List(Vec<Value>),
}

/// Why a document or list item is not an [`Entry`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// The value is a scalar or a sequence.
    #[error("expected an object (a mapping), found {found}")]
    NotAnObject {
        /// What was found, as [`value_type`] names it.
        found: &'static str,
    },
    /// A list's `items` is not a list.
    #[error("{kind} items must be a list, found {found}")]
    ItemsNotAList {
        /// The list's kind.
        kind: String,
        /// What `items` holds, as [`value_type`] names it.
        found: &'static str,
    },
}

/// Classifies one decoded document or list item.
pub fn entry(value: Value) -> Result<Entry, EntryError> {
    let mut object = match value {
        Value::Null => return Ok(Entry::Empty),
        Value::Object(object) => object,
        other => {
            return Err(EntryError::NotAnObject {
                found: value_type(&other),
            });
        }
    };
    let kind = match object.get("kind") {
        Some(Value::String(kind)) if is_list_kind(kind) => kind,
        _ => return Ok(Entry::Object(object)),
    };
    match object.get("items") {
        None | Some(Value::Null) => Ok(Entry::List(Vec::new())),
        Some(Value::Array(_)) => match object.remove("items") {
            Some(Value::Array(items)) => Ok(Entry::List(items)),
            _ => Ok(Entry::List(Vec::new())),
        },
        Some(other) => Err(EntryError::ItemsNotAList {
            kind: kind.clone(),
            found: value_type(other),
        }),
    }
}

/// A JSON value's type as error messages name it: `null`, `a boolean`, `a number`, `a string`,
/// `a list`, `a mapping`.
pub fn value_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Why [`objects`] failed: the document (and list item) at fault and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("document {document} (line {line}): {at}{message}")]
#[non_exhaustive]
pub struct StreamError {
    /// 1-based number of the document.
    pub document: usize,
    /// 1-based line the document starts on.
    pub line: usize,
    /// Where in the document, as `items[0]: items[2]: ` (empty for the document itself).
    pub at: String,
    /// What the parser said, or an [`EntryError`]'s message.
    pub message: String,
}

/// Every object of a YAML (or JSON) stream, lists expanded, in order.
pub fn objects(text: &str) -> Result<Vec<Map<String, Value>>, StreamError> {
    let mut out = Vec::new();
    for doc in documents(text) {
        let error = |at: &str, message: String| StreamError {
            document: doc.index,
            line: doc.line,
            at: at.to_string(),
            message,
        };
        let value: Value =
            serde_saphyr::from_str(doc.text).map_err(|e| error("", e.to_string()))?;
        expand(
            value,
            "",
            &mut |at, e| error(at, e.to_string()),
            &mut |_, o| {
                out.push(o);
                Ok(())
            },
        )?;
    }
    Ok(out)
}

/// Reads `value` (a decoded document) under the rule, giving each object to `each` with its
/// position: empty for the document itself, `items[i]: ` (repeated for nested lists) for a
/// list item. The first error, from `error` or from `each`, stops the walk.
pub fn expand<E>(
    value: Value,
    at: &str,
    error: &mut impl FnMut(&str, EntryError) -> E,
    each: &mut impl FnMut(&str, Map<String, Value>) -> Result<(), E>,
) -> Result<(), E> {
    match entry(value) {
        Ok(Entry::Empty) => Ok(()),
        Ok(Entry::Object(object)) => each(at, object),
        Ok(Entry::List(items)) => {
            for (i, item) in items.into_iter().enumerate() {
                expand(item, &format!("{at}items[{i}]: "), error, each)?;
            }
            Ok(())
        }
        Err(e) => Err(error(at, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn docs(text: &str) -> Vec<(usize, usize, &str)> {
        documents(text).map(|d| (d.index, d.line, d.text)).collect()
    }

    #[test]
    fn documents_split_at_markers_and_skip_empty_ones() {
        // The builder's old vectors.
        assert_eq!(
            docs("# c\n---\na: 1\n---\n\n---\nb: 2\n...\n"),
            [(1, 3, "a: 1\n"), (2, 7, "b: 2\n")]
        );
        // The simulator's old vectors.
        let d = docs("# head\n---\na: 1\n---\n\n--- b: 2\n...\n---\nc: 3\n");
        let trimmed: Vec<_> = d.iter().map(|(n, l, t)| (*n, *l, t.trim())).collect();
        assert_eq!(trimmed, [(1, 3, "a: 1"), (2, 6, "b: 2"), (3, 9, "c: 3")]);
    }

    #[test]
    fn markers_need_a_blank_after_them() {
        assert_eq!(docs("---x: 1\n"), [(1, 1, "---x: 1\n")]);
        assert_eq!(docs("---\ta: 1\n"), [(1, 1, "a: 1\n")]);
        assert_eq!(docs("--- # note\na: 1\n"), [(1, 2, "a: 1\n")]);
        assert_eq!(
            docs("a: 1\r\n---\r\nb: 2"),
            [(1, 1, "a: 1\r\n"), (2, 3, "b: 2")]
        );
        assert_eq!(docs("a: |\n  ---\n"), [(1, 1, "a: |\n  ---\n")]);
        assert!(docs("").is_empty());
        assert!(docs("---\n# only\n...\n---\n").is_empty());
    }

    #[test]
    fn lists_of_any_list_kind_are_expanded() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- null\n- apiVersion: v1\n  kind: SecretList\n  items: [{apiVersion: v1, kind: Secret, metadata: {name: b}}]\n---\nkind: List\nitems: null\n---\n~\n---\n{kind: ConfigMapList}\n";
        let objects = objects(text).unwrap();
        let kinds: Vec<_> = objects.iter().map(|o| o["kind"].clone()).collect();
        assert_eq!(kinds, [json!("ConfigMap"), json!("Secret")]);
        // `items` on an object that is not a list kind is an ordinary field.
        let objects = super::objects("kind: Placement\nitems: [1]\n").unwrap();
        assert_eq!(objects[0]["items"], json!([1]));
    }

    #[test]
    fn errors_name_the_document_and_the_item() {
        let err = objects("a: 1\n---\n\n---\nkind: List\nitems:\n- {}\n- 3\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "document 2 (line 5): items[1]: expected an object (a mapping), found a number"
        );
        let err = objects("kind: SecretList\nitems: {}\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "document 1 (line 1): SecretList items must be a list, found a mapping"
        );
        let err = objects("a: 1\n---\nkey: [unclosed\n").unwrap_err();
        assert_eq!((err.document, err.line, err.at.as_str()), (2, 3, ""));
        assert_eq!(
            entry(json!("x")),
            Err(EntryError::NotAnObject { found: "a string" })
        );
    }
}
