//! Label and field selectors with the full kube-apiserver grammar.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};
use crate::storage::frozen::Frozen;

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
    /// Parse the selector syntax of `?labelSelector=`, as apimachinery's `labels.Parse` does:
    /// the same tokens, the same grammar, the same checks of keys and values, and the same
    /// error messages (`400 BadRequest`).
    pub fn parse(input: &str) -> ApiResult<Self> {
        LabelParser::new(input)
            .parse()
            .map(|reqs| Self { reqs })
            .map_err(ApiError::bad_request)
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

/// A token of the label selector grammar, with the text it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// Something the lexer could not read; its text is the lexer's message.
    Error,
    End,
    OpenPar,
    ClosedPar,
    Comma,
    /// `!`
    Not,
    /// `=`
    Equals,
    /// `==`
    DoubleEquals,
    /// `!=`
    NotEquals,
    /// `>`
    Greater,
    /// `<`
    Less,
    In,
    NotIn,
    Identifier,
}

/// Where the parser is: `in` and `notin` are operators after a key, and plain words where a
/// key or a value is expected (`in in (in)` is a valid selector).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Operator,
    Values,
}

/// The symbols and words with a meaning of their own.
fn token_of(text: &[u8]) -> Option<Tok> {
    Some(match text {
        b"(" => Tok::OpenPar,
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::Not,
        b"=" => Tok::Equals,
        b"==" => Tok::DoubleEquals,
        b"!=" => Tok::NotEquals,
        b">" => Tok::Greater,
        b"<" => Tok::Less,
        b"in" => Tok::In,
        b"notin" => Tok::NotIn,
        _ => return None,
    })
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits a selector into tokens as apimachinery's lexer does (a NUL byte ends the input,
/// as it does there).
fn tokens(input: &str) -> Vec<(Tok, String)> {
    let s = input.as_bytes();
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let s = &s[..end];
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < s.len() && is_blank(s[i]) {
            i += 1;
        }
        if i >= s.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        let start = i;
        if is_symbol(s[i]) {
            // The longest run of symbols that is a token, extended one symbol at a time.
            let mut found: Option<(Tok, usize)> = None;
            while i < s.len() && is_symbol(s[i]) {
                i += 1;
                match token_of(&s[start..i]) {
                    Some(t) => found = Some((t, i)),
                    None if found.is_some() => {
                        i -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match found {
                Some((t, at)) => {
                    i = at;
                    out.push((t, text(&s[start..at])));
                }
                None => out.push((
                    Tok::Error,
                    format!("error expected: keyword found '{}'", text(&s[start..i])),
                )),
            }
        } else {
            while i < s.len() && !is_symbol(s[i]) && !is_blank(s[i]) {
                i += 1;
            }
            let word = &s[start..i];
            out.push((token_of(word).unwrap_or(Tok::Identifier), text(word)));
        }
    }
}

/// apimachinery's `field.Invalid` text for a string value.
fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!(
        "{field}: Invalid value: {}: {detail}",
        ocm_api::k8s::gojson::quote(value)
    )
}

/// apimachinery's aggregate of errors: one as it is, several in brackets.
fn aggregate(errors: Vec<String>) -> Option<String> {
    let mut unique: Vec<String> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}

/// The label selector parser: apimachinery's grammar and messages, written for the testkit.
struct LabelParser {
    items: Vec<(Tok, String)>,
    at: usize,
}

impl LabelParser {
    fn new(input: &str) -> Self {
        Self {
            items: tokens(input),
            at: 0,
        }
    }

    fn in_context(tok: Tok, context: Context) -> Tok {
        match (tok, context) {
            (Tok::In | Tok::NotIn, Context::Values) => Tok::Identifier,
            (t, _) => t,
        }
    }

    fn lookahead(&self, context: Context) -> (Tok, String) {
        let (t, l) = self.items[self.at.min(self.items.len() - 1)].clone();
        (Self::in_context(t, context), l)
    }

    fn consume(&mut self, context: Context) -> (Tok, String) {
        let item = self.lookahead(context);
        self.at = (self.at + 1).min(self.items.len() - 1);
        item
    }

    fn parse(mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Tok::Identifier | Tok::Not => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Tok::End => break,
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Tok::Identifier && t2 != Tok::Not {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{l}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Tok::End => break,
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(reqs)
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut absent = false;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Tok::Not {
            absent = true;
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let key_errors = ocm_api::k8s::names::label_key_errors(&lit);
        if !key_errors.is_empty() {
            return Err(invalid("<nil>", &lit, &key_errors.join("; ")));
        }
        let key = lit;
        let (next, _) = self.lookahead(Context::Values);
        if absent {
            return Ok(Requirement {
                key,
                op: Op::DoesNotExist,
            });
        }
        if matches!(next, Tok::End | Tok::Comma) {
            return Ok(Requirement {
                key,
                op: Op::Exists,
            });
        }
        let (op, lit) = self.consume(Context::Operator);
        let values = match op {
            Tok::In | Tok::NotIn => self.set()?,
            Tok::Equals | Tok::DoubleEquals | Tok::NotEquals | Tok::Greater | Tok::Less => {
                self.exact()?
            }
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        // What `NewRequirement` checks of the values, in its order.
        let mut errors = Vec::new();
        let mut number = None;
        if matches!(op, Tok::Greater | Tok::Less) {
            for (i, v) in values.iter().enumerate() {
                match v.parse::<i64>() {
                    Ok(n) => number = Some(n),
                    Err(_) => errors.push(invalid(
                        &format!("values[{i}]"),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )),
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let problems = ocm_api::k8s::names::label_value_errors(v);
            if !problems.is_empty() {
                errors.push(invalid(
                    &format!("values[{i}][{key}]"),
                    v,
                    &problems.join("; "),
                ));
            }
        }
        if let Some(e) = aggregate(errors) {
            return Err(e);
        }
        let one = || values.first().cloned().unwrap_or_default();
        let op = match op {
            Tok::In => Op::In(values.clone()),
            Tok::NotIn => Op::NotIn(values.clone()),
            Tok::NotEquals => Op::NotEq(one()),
            Tok::Greater => Op::Gt(number.unwrap_or_default()),
            Tok::Less => Op::Lt(number.unwrap_or_default()),
            _ => Op::Eq(one()),
        };
        Ok(Requirement { key, op })
    }

    /// `(a, b, c)`: a set of values, some possibly empty; sorted, without repeats.
    fn set(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        let mut set = std::collections::BTreeSet::new();
        match tok {
            Tok::Identifier | Tok::Comma => {
                self.identifiers(&mut set)?;
                if self.consume(Context::Values).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
            }
            Tok::ClosedPar => {
                self.consume(Context::Values);
                set.insert(String::new());
            }
            _ => return Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
        Ok(set.into_iter().collect())
    }

    fn identifiers(&mut self, set: &mut std::collections::BTreeSet<String>) -> Result<(), String> {
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Tok::Identifier => {
                    set.insert(lit);
                    let (t2, l2) = self.lookahead(Context::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(()),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    match self.lookahead(Context::Values).0 {
                        Tok::ClosedPar => {
                            set.insert(String::new());
                            return Ok(());
                        }
                        Tok::Comma => {
                            set.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<` (empty when none follows).
    fn exact(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.lookahead(Context::Values).0, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// A parsed field selector: `metadata.name=x,status.phase!=Running`.
///
/// The grammar is apimachinery's `fields.ParseSelector` (terms split at unescaped commas,
/// `!=`, `==` or `=` in each, `\\`, `\,` and `\=` escapes in values); which fields a
/// resource can be selected by is checked when it is listed or watched
/// ([`FieldSelector::check_fields`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

/// The field selectors each built-in kind takes besides `metadata.name` and
/// `metadata.namespace`, for the kinds with a conversion of their own (which answers
/// `field label not supported: <field>`). Every other kind takes just the two.
fn kind_fields(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    Some(match (group, kind) {
        ("", "Pod") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
            "spec.host",
        ],
        ("", "Node") => &["metadata.name", "spec.unschedulable"],
        ("", "ReplicationController") | ("apps", "ReplicaSet") => {
            &["metadata.name", "metadata.namespace", "status.replicas"]
        }
        ("", "Event") | ("events.k8s.io", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "metadata.namespace",
            "metadata.name",
        ],
        ("", "Namespace") => &["status.phase", "metadata.name"],
        ("", "Secret") => &["type", "metadata.namespace", "metadata.name"],
        ("", "Service") => &[
            "metadata.namespace",
            "metadata.name",
            "spec.clusterIP",
            "spec.type",
        ],
        ("batch", "Job") => &["metadata.name", "metadata.namespace", "status.successful"],
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &["metadata.name", "spec.signerName"]
        }
        _ => return None,
    })
}

/// Splits a field selector at the commas that are not escaped.
fn split_terms(input: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in input.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&input[start..i]);
            start = i + 1;
        }
    }
    terms.push(&input[start..]);
    terms
}

/// A selector value with its escapes taken out, or apimachinery's error for a bad one.
fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            match c {
                '\\' | ',' | '=' => out.push(c),
                other => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{other}"
                    ));
                }
            }
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    u32::from(c)
                ));
            }
            other => out.push(other),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".into());
    }
    Ok(out)
}

impl FieldSelector {
    /// Parse the syntax of `?fieldSelector=`, as apimachinery's `fields.ParseSelector` does
    /// (`400 BadRequest` with its message when it does not parse).
    pub fn parse(input: &str) -> ApiResult<Self> {
        let mut terms = split_terms(input);
        terms.sort_unstable();
        let mut reqs = Vec::new();
        for term in terms.into_iter().filter(|t| !t.is_empty()) {
            // The first operator from the left; at each place `!=`, then `==`, then `=`.
            let split = term.char_indices().find_map(|(i, _)| {
                let rest = &term[i..];
                ["!=", "==", "="]
                    .into_iter()
                    .find(|op| rest.starts_with(op))
                    .map(|op| (i, op))
            });
            let Some((at, op)) = split else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{term}'"
                )));
            };
            let value = unescape(&term[at + op.len()..]).map_err(ApiError::bad_request)?;
            reqs.push((term[..at].to_string(), op != "!=", value));
        }
        Ok(Self { reqs })
    }

    /// Checks that a resource can be selected by every field this selector names, as
    /// kube-apiserver's field label conversion does (`400 BadRequest` naming the first field
    /// it cannot select by). `custom` lists the `selectableFields` of a custom resource.
    pub fn check_fields(
        &self,
        info: &crate::storage::registry::ResourceInfo,
        custom: &[String],
    ) -> ApiResult<()> {
        let builtin = info
            .crd_name
            .is_none()
            .then(|| kind_fields(&info.group, &info.kind))
            .flatten();
        for (field, _, _) in &self.reqs {
            let known = match builtin {
                Some(fields) => fields.contains(&field.as_str()),
                None => {
                    matches!(field.as_str(), "metadata.name" | "metadata.namespace")
                        || custom.iter().any(|c| c == field)
                }
            };
            if known {
                continue;
            }
            if builtin.is_some() {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            let mut allowed = vec![
                "metadata.name".to_string(),
                "metadata.namespace".to_string(),
            ];
            allowed.extend(custom.iter().cloned());
            let quoted: Vec<String> = allowed
                .iter()
                .map(|f| ocm_api::k8s::gojson::quote(f))
                .collect();
            return Err(ApiError::bad_request(format!(
                "{} is not a known field selector: only {}",
                ocm_api::k8s::gojson::quote(field),
                quoted.join(", ")
            )));
        }
        Ok(())
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
