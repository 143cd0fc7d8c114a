//! A parsed template, ready to evaluate many times.

use std::fmt;

use serde_json::Value;

use super::ast::Node;
use super::error::{EvalError, ParseError};
use super::eval::{Evaluator, stream, streamable};
use super::matches::Match;
use super::parser::parse_template;
use super::render;

/// A parsed Kubernetes JSONPath template (the dialect of `kubectl -o jsonpath=…`).
///
/// Parse once, evaluate many times: a `Template` holds no evaluation state and is `Send +
/// Sync`. Missing map keys yield nothing rather than an error by default, as in kubectl and
/// in OCM status feedback; see [`allow_missing_keys`](Self::allow_missing_keys).
///
/// ```
/// use ocm_feedback::jsonpath::Template;
///
/// let deployment = serde_json::json!({"status": {"readyReplicas": 2, "replicas": 3}});
/// let t = Template::parse("{.status.readyReplicas}/{.status.replicas} ready")?;
/// assert_eq!(t.execute(&deployment)?, "2/3 ready");
///
/// // OCM feedback paths are written without braces.
/// let p = Template::parse_path(".status.replicas")?;
/// assert_eq!(p.execute(&deployment)?, "3");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    source: Box<str>,
    nodes: Vec<Node>,
    /// The keys of a template that is one action made only of `.field` steps.
    fields: Option<Box<[Box<str>]>>,
    allow_missing_keys: bool,
}

impl Template {
    /// Parses a template as kubectl does: text with `{…}` actions (text outside braces is
    /// printed as is).
    pub fn parse(template: &str) -> Result<Self, ParseError> {
        let nodes = parse_template(template)?;
        Ok(Self::from_nodes(template, nodes))
    }

    /// Parses a path the way OCM does for status feedback: `path` is wrapped in `{…}` first,
    /// so `.status.replicas` and `$.status.replicas` both work. Error positions refer to
    /// `path`.
    pub fn parse_path(path: &str) -> Result<Self, ParseError> {
        let wrapped = format!("{{{path}}}");
        let nodes = parse_template(&wrapped).map_err(|e| e.shifted(0, 1, path.len()))?;
        Ok(Self::from_nodes(&wrapped, nodes))
    }

    fn from_nodes(source: &str, nodes: Vec<Node>) -> Self {
        let fields = match nodes.as_slice() {
            [Node::List(steps)] if steps.iter().all(|n| matches!(n, Node::Field(_))) => Some(
                steps
                    .iter()
                    .filter_map(|n| match n {
                        Node::Field(name) => Some(name.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        };
        Self {
            source: source.into(),
            nodes,
            fields,
            allow_missing_keys: true,
        }
    }

    /// Whether a missing map key yields nothing (`true`, the default, as kubectl's
    /// `--allow-missing-template-keys` and OCM) or the error `<key> is not found`.
    #[must_use]
    pub fn allow_missing_keys(mut self, allow: bool) -> Self {
        self.allow_missing_keys = allow;
        self
    }

    /// The template text (for a path parsed with [`parse_path`](Self::parse_path), with the
    /// braces added).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the template: one list of values per top-level piece (each text and each
    /// action, with `range` bodies repeated per element), as client-go's `FindResults`.
    pub fn find_results<'a>(&'a self, data: &'a Value) -> Result<Vec<Vec<Match<'a>>>, EvalError> {
        if let Some(found) = self.lookup(data) {
            return Ok(vec![found.map(Match::Json).into_iter().collect()]);
        }
        if self.allow_missing_keys
            && let Some(steps) = streamable(&self.nodes)
        {
            let mut out = Vec::new();
            if stream(steps, Match::Json(data), &mut out).is_ok() {
                return Ok(vec![out]);
            }
        }
        Evaluator::new(self.allow_missing_keys).find_results(&self.nodes, 0, Match::Json(data))
    }

    /// For a template that is a plain chain of fields, the value it selects without building
    /// result lists (`Some(None)` when a key is missing); `None` for any other template.
    pub(crate) fn lookup<'a>(&self, data: &'a Value) -> Option<Option<&'a Value>> {
        let fields = self.fields.as_ref().filter(|_| self.allow_missing_keys)?;
        let mut current = data;
        for name in fields.iter() {
            match current {
                Value::Object(map) => match map.get(&**name) {
                    Some(v) => current = v,
                    None => return Some(None),
                },
                _ => return Some(None),
            }
        }
        Some(Some(current))
    }

    /// Evaluates the template and renders the results exactly as `kubectl -o jsonpath=…`
    /// prints them: values of one action separated by spaces, strings raw, maps and lists as
    /// compact JSON with sorted keys.
    pub fn execute(&self, data: &Value) -> Result<String, EvalError> {
        let results = self.find_results(data)?;
        let mut out = String::new();
        for list in &results {
            for (i, value) in list.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                render::text(&mut out, value);
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for Template {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..4).prop_map(Value::from),
            prop_oneof![Just("x"), Just("y")].prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![Just("a"), Just("b")].prop_map(String::from),
                    inner,
                    0..3
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn step() -> impl Strategy<Value = String> {
        prop_oneof![
            prop_oneof![Just(".a"), Just(".b")].prop_map(String::from),
            (-3i64..4).prop_map(|i| format!("[{i}]")),
            Just("[*]".to_owned()),
            (-1i64..3, -1i64..4).prop_map(|(a, b)| format!("[{a}:{b}]")),
            (0i64..3).prop_map(|s| format!("[::{s}]")),
            (
                prop_oneof![Just("=="), Just("!="), Just("<"), Just(">=")],
                -1i64..3
            )
                .prop_map(|(op, v)| format!("[?(@.a{op}{v})]")),
            Just("[?(@.b=='x')]".to_owned()),
            Just("[?(@.a)]".to_owned()),
            Just("[?(@.a==@.b)]".to_owned()),
        ]
    }

    #[test]
    fn shareable_between_threads() {
        fn check<T: Send + Sync>() {}
        check::<Template>();
        check::<crate::CompiledRules>();
        check::<crate::FeedbackReader<'static>>();
        check::<crate::Feedback>();
    }

    #[test]
    fn negative_zero_decodes_like_go() {
        // Go decodes `-0` (the only way Go's encoder writes a negative zero) as the integer 0.
        let zero: Value = serde_json::from_str("-0").unwrap();
        let t = Template::parse("{@}").unwrap();
        assert_eq!(t.execute(&zero).unwrap(), "0");
        assert_eq!(Match::Json(&zero).go_type_name(), "int64");
    }

    proptest! {
        /// The depth-first fast path gives exactly what the step-by-step evaluator gives.
        #[test]
        fn fast_paths_equal_the_general_evaluator(
            steps in prop::collection::vec(step(), 1..5),
            data in json_value(),
        ) {
            let t = Template::parse_path(&steps.concat()).unwrap();
            let general = Evaluator::new(true).find_results(&t.nodes, 0, Match::Json(&data));
            prop_assert_eq!(t.find_results(&data), general);
        }
    }
}
