//! Label and field selectors with the full kube-apiserver grammar.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};
use crate::frozen::Frozen;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
}

impl Requirement {
    fn matches(&self, value: Option<&str>) -> bool {
        match (&self.op, value) {
            (Op::Eq(v), Some(x)) => x == v,
            (Op::Eq(_), None) => false,
            (Op::NotEq(v), Some(x)) => x != v,
            (Op::NotEq(_), None) => true,
            (Op::In(vs), Some(x)) => vs.iter().any(|v| v == x),
            (Op::In(_), None) => false,
            (Op::NotIn(vs), Some(x)) => !vs.iter().any(|v| v == x),
            (Op::NotIn(_), None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::DoesNotExist, v) => v.is_none(),
            (Op::Gt(n), Some(x)) => x.parse::<i64>().is_ok_and(|x| x > *n),
            (Op::Lt(n), Some(x)) => x.parse::<i64>().is_ok_and(|x| x < *n),
            (Op::Gt(_) | Op::Lt(_), None) => false,
        }
    }
}

/// A parsed label selector: `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    reqs: Vec<Requirement>,
}

impl LabelSelector {
    /// Parse the selector syntax of `?labelSelector=`.
    pub fn parse(input: &str) -> ApiResult<Self> {
        let mut p = Lexer {
            s: input.as_bytes(),
            i: 0,
        };
        let mut reqs = Vec::new();
        loop {
            p.skip_ws();
            if p.done() {
                break;
            }
            reqs.push(p.requirement(input)?);
            p.skip_ws();
            if p.done() {
                break;
            }
            if !p.eat(b',') {
                return Err(bad_selector(input, "expected ','"));
            }
        }
        Ok(Self { reqs })
    }

    /// True when the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// Build from a `metav1.LabelSelector` JSON value (`matchLabels`, `matchExpressions`),
    /// refused as `LabelSelectorAsSelector` refuses it.
    pub fn from_json(sel: &Value) -> ApiResult<Self> {
        use ocm_api::k8s::labels::{self, Expression};
        let selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
            serde_json::from_value(sel.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid label selector: {e}")))?;
        let selector =
            labels::selector(&selector).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let reqs = selector
            .into_iter()
            .map(|expression| match expression {
                Expression::Equal(key, value) => Requirement {
                    key,
                    op: Op::Eq(value),
                },
                Expression::NotEqual(key, value) => Requirement {
                    key,
                    op: Op::NotEq(value),
                },
                Expression::In(key, values) => Requirement {
                    key,
                    op: Op::In(values.into_iter().collect()),
                },
                Expression::NotIn(key, values) => Requirement {
                    key,
                    op: Op::NotIn(values.into_iter().collect()),
                },
                Expression::Exists(key) => Requirement {
                    key,
                    op: Op::Exists,
                },
                Expression::DoesNotExist(key) => Requirement {
                    key,
                    op: Op::DoesNotExist,
                },
            })
            .collect();
        Ok(Self { reqs })
    }

    /// Whether an object's `metadata.labels` match.
    pub fn matches_object(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        self.reqs
            .iter()
            .all(|r| r.matches(labels.and_then(|l| l.get(&r.key)).and_then(Value::as_str)))
    }

    /// Whether a stored (frozen) object matches.
    pub(crate) fn matches_frozen(&self, obj: &Frozen) -> bool {
        let labels = obj.pointer("/metadata/labels");
        self.reqs
            .iter()
            .all(|r| r.matches(labels.and_then(|l| l.get(&r.key)).and_then(Frozen::as_str)))
    }

    /// Whether a label map matches.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.reqs
            .iter()
            .all(|r| r.matches(labels.get(&r.key).map(String::as_str)))
    }
}

fn bad_selector(input: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unable to parse requirement: found '{input}', {why}"
    ))
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn word(&mut self) -> String {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    fn keyword(&mut self, kw: &str) -> bool {
        let end = self.i + kw.len();
        if self.s.get(self.i..end) == Some(kw.as_bytes())
            && self.s.get(end).is_none_or(|c| *c == b' ' || *c == b'(')
        {
            self.i = end;
            true
        } else {
            false
        }
    }
    fn values(&mut self, input: &str) -> ApiResult<Vec<String>> {
        self.skip_ws();
        if !self.eat(b'(') {
            return Err(bad_selector(input, "expected '('"));
        }
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            let w = self.word();
            self.skip_ws();
            out.push(w);
            if self.eat(b')') {
                break;
            }
            if !self.eat(b',') {
                return Err(bad_selector(input, "expected ',' or ')'"));
            }
        }
        Ok(out)
    }
    fn requirement(&mut self, input: &str) -> ApiResult<Requirement> {
        if self.eat(b'!') {
            self.skip_ws();
            let key = self.word();
            if key.is_empty() {
                return Err(bad_selector(input, "expected a key after '!'"));
            }
            return Ok(Requirement {
                key,
                op: Op::DoesNotExist,
            });
        }
        let key = self.word();
        if key.is_empty() {
            return Err(bad_selector(input, "expected a key"));
        }
        self.skip_ws();
        let op = match self.peek() {
            None | Some(b',') => Op::Exists,
            Some(b'=') => {
                self.i += 1;
                self.eat(b'=');
                self.skip_ws();
                Op::Eq(self.word())
            }
            Some(b'!') => {
                self.i += 1;
                if !self.eat(b'=') {
                    return Err(bad_selector(input, "expected '=' after '!'"));
                }
                self.skip_ws();
                Op::NotEq(self.word())
            }
            Some(b'>') | Some(b'<') => {
                let gt = self.peek() == Some(b'>');
                self.i += 1;
                self.skip_ws();
                let w = self.word();
                let n = w
                    .parse::<i64>()
                    .map_err(|_| bad_selector(input, "expected an integer"))?;
                if gt { Op::Gt(n) } else { Op::Lt(n) }
            }
            _ => {
                if self.keyword("notin") {
                    Op::NotIn(self.values(input)?)
                } else if self.keyword("in") {
                    Op::In(self.values(input)?)
                } else {
                    return Err(bad_selector(input, "unknown operator"));
                }
            }
        };
        Ok(Requirement { key, op })
    }
}

/// A parsed field selector: `metadata.name=x,status.phase!=Running`.
///
/// Any dotted path into the object is accepted (a superset of what the real
/// API server allows for a given kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parse the syntax of `?fieldSelector=`.
    pub fn parse(input: &str) -> ApiResult<Self> {
        let mut reqs = Vec::new();
        for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            reqs.push((field.trim().to_string(), eq, value.trim().to_string()));
        }
        Ok(Self { reqs })
    }

    /// True when the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// Whether an object matches.
    pub fn matches_object(&self, obj: &Value) -> bool {
        self.reqs.iter().all(|(field, eq, want)| {
            let mut cur = Some(obj);
            for seg in field.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            let have = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            };
            (have == *want) == *eq
        })
    }

    /// Whether a stored (frozen) object matches.
    pub(crate) fn matches_frozen(&self, obj: &Frozen) -> bool {
        self.reqs.iter().all(|(field, eq, want)| {
            let mut cur = Some(obj);
            for seg in field.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            let have = match cur {
                Some(Frozen::String(s)) => s.to_string(),
                Some(Frozen::Null) | None => String::new(),
                Some(v) => serde_json::to_string(v).unwrap_or_default(),
            };
            (have == *want) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// JSON selectors (Job selectors, aggregation rules) are checked as
    /// `LabelSelectorAsSelector` checks them: the unknown-operator message quotes the operator
    /// (it used to print `Some("Near")`), and a bad key no longer matches.
    #[test]
    fn json_selectors_are_checked_as_upstream() {
        let e = LabelSelector::from_json(
            &json!({"matchExpressions": [{"key": "a", "operator": "Near"}]}),
        )
        .unwrap_err();
        assert_eq!(e.message, "\"Near\" is not a valid label selector operator");
        let e = LabelSelector::from_json(
            &json!({"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}),
        )
        .unwrap_err();
        assert!(
            e.message.starts_with("key: Invalid value: \"bad key\""),
            "{}",
            e.message
        );
        let sel = LabelSelector::from_json(&json!({
            "matchLabels": {"a": "1"},
            "matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["x"]}]
        }))
        .unwrap();
        assert!(sel.matches_object(&obj(json!({"a": "1", "b": "y"}))));
        assert!(!sel.matches_object(&obj(json!({"a": "1", "b": "x"}))));
        assert!(!sel.matches_object(&obj(json!({"a": "2"}))));
    }

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_grammar() {
        let o = obj(json!({"app": "web", "tier": "front", "n": "5"}));
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, api)", true),
            ("app notin (web)", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("missing", false),
            ("missing!=x", true),
            ("app=web,tier=back", false),
            ("n>4,n<6", true),
            ("", true),
        ] {
            let s = LabelSelector::parse(sel).unwrap();
            assert_eq!(s.matches_object(&o), want, "{sel}");
        }
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("a=b,,").is_err());
    }

    #[test]
    fn field_selectors() {
        let o =
            json!({"metadata": {"name": "n", "namespace": "ns"}, "status": {"phase": "Running"}});
        assert!(
            FieldSelector::parse("metadata.name=n")
                .unwrap()
                .matches_object(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name!=n")
                .unwrap()
                .matches_object(&o)
        );
        assert!(
            FieldSelector::parse("status.phase==Running,metadata.namespace=ns")
                .unwrap()
                .matches_object(&o)
        );
    }
}
