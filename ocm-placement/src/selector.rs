//! Kubernetes label selectors, compiled against a snapshot's string table.
//!
//! Placement predicates, cluster-set label selectors and decision-group selectors all use
//! `metav1.LabelSelector` semantics: `matchLabels` and `matchExpressions` are ANDed, an empty
//! selector matches everything, `NotIn` and `DoesNotExist` match when the key is absent. Claim
//! selectors use the same semantics on the map of a cluster's claims. Compiling validates the
//! requirements the way Kubernetes does (key and value syntax, operator, value counts) and
//! returns the error text upstream reports.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::symbols::{ABSENT, Sym, SymMap, Symbols};

/// Operator of one compiled requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One requirement, with its strings translated into symbols.
#[derive(Debug, Clone)]
pub(crate) struct Requirement {
    key: Sym,
    op: Op,
    /// Values present in the snapshot; values nobody carries are dropped (they can never be
    /// equal to a cluster's value).
    values: Box<[Sym]>,
}

impl Requirement {
    #[inline]
    fn matches(&self, map: &SymMap) -> bool {
        let found = if self.key == ABSENT {
            None
        } else {
            map.get(self.key)
        };
        match self.op {
            Op::In => found.is_some_and(|v| self.values.contains(&v)),
            Op::NotIn => found.is_none_or(|v| !self.values.contains(&v)),
            Op::Exists => found.is_some(),
            Op::DoesNotExist => found.is_none(),
        }
    }
}

/// A validated label selector, ready to be matched against symbol maps.
#[derive(Debug, Clone)]
pub(crate) enum CompiledSelector {
    /// All requirements must hold; no requirement matches everything.
    All(Box<[Requirement]>),
}

impl CompiledSelector {
    /// The selector that matches every map.
    #[cfg(test)]
    pub(crate) fn everything() -> Self {
        CompiledSelector::All(Box::new([]))
    }

    /// Whether `map` satisfies the selector.
    #[inline]
    pub(crate) fn matches(&self, map: &SymMap) -> bool {
        match self {
            CompiledSelector::All(reqs) => reqs.iter().all(|r| r.matches(map)),
        }
    }
}

/// A selector in string form, validated but not yet tied to a string table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelectorSpec {
    requirements: Vec<(String, Op, Vec<String>)>,
}

impl SelectorSpec {
    /// Validates `matchLabels` and `matchExpressions` the way `LabelSelectorAsSelector` does.
    pub(crate) fn parse(
        match_labels: Option<&BTreeMap<String, String>>,
        expressions: &[LabelSelectorRequirement],
    ) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for (k, v) in match_labels.into_iter().flatten() {
            validate_requirement(k, Op::In, std::slice::from_ref(v))?;
            requirements.push((k.clone(), Op::In, vec![v.clone()]));
        }
        for expr in expressions {
            let op = match expr.operator.as_str() {
                "In" => Op::In,
                "NotIn" => Op::NotIn,
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                other => {
                    return Err(format!(
                        "{} is not a valid label selector operator",
                        go_quote(other)
                    ));
                }
            };
            let values = expr.values.clone().unwrap_or_default();
            validate_requirement(&expr.key, op, &values)?;
            requirements.push((expr.key.clone(), op, values));
        }
        Ok(SelectorSpec { requirements })
    }

    /// Parses an optional `metav1.LabelSelector`; `None` gives the empty (match-all) spec.
    pub(crate) fn from_label_selector(selector: Option<&LabelSelector>) -> Result<Self, String> {
        match selector {
            None => Ok(SelectorSpec {
                requirements: Vec::new(),
            }),
            Some(s) => Self::parse(
                s.match_labels.as_ref(),
                s.match_expressions.as_deref().unwrap_or_default(),
            ),
        }
    }

    /// Translates the spec into symbols of `symbols` (lookup only; nothing is added).
    pub(crate) fn compile(&self, symbols: &Symbols) -> CompiledSelector {
        let reqs = self
            .requirements
            .iter()
            .map(|(key, op, values)| {
                let mut syms: Vec<Sym> = values
                    .iter()
                    .map(|v| symbols.lookup(v))
                    .filter(|&s| s != ABSENT)
                    .collect();
                syms.sort_unstable();
                syms.dedup();
                Requirement {
                    key: symbols.lookup(key),
                    op: *op,
                    values: syms.into_boxed_slice(),
                }
            })
            .collect();
        CompiledSelector::All(reqs)
    }

    /// Matches plain string maps (used where no snapshot is at hand).
    #[cfg(test)]
    pub(crate) fn matches_str(&self, map: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|(key, op, values)| {
            let found = map.get(key);
            match op {
                Op::In => found.is_some_and(|v| values.contains(v)),
                Op::NotIn => found.is_none_or(|v| !values.contains(v)),
                Op::Exists => found.is_some(),
                Op::DoesNotExist => found.is_none(),
            }
        })
    }
}

fn validate_requirement(key: &str, op: Op, values: &[String]) -> Result<(), String> {
    let mut errors = Vec::new();
    let key_problems = label_key_errors(key);
    if !key_problems.is_empty() {
        errors.push(format!(
            "key: Invalid value: {}: {}",
            go_quote(key),
            key_problems.join("; ")
        ));
    }
    match op {
        Op::In | Op::NotIn if values.is_empty() => errors.push(format!(
            "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
            go_json_strings(values)
        )),
        Op::Exists | Op::DoesNotExist if !values.is_empty() => errors.push(format!(
            "values: Invalid value: {}: values set must be empty for exists and does not exist",
            go_json_strings(values)
        )),
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let problems = label_value_errors(v);
        if !problems.is_empty() {
            errors.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                go_quote(v),
                problems.join("; ")
            ));
        }
    }
    // `ErrorList.ToAggregate`: repeated messages once; one message alone, several in brackets.
    let mut unique: Vec<String> = Vec::with_capacity(errors.len());
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        0 => Ok(()),
        1 => Err(unique.remove(0)),
        _ => Err(format!("[{}]", unique.join(", "))),
    }
}

/// How apimachinery's field errors print a `[]string` bad value: as JSON (`encoding/json`,
/// which escapes `<`, `>`, `&`, U+2028 and U+2029). Requirement values are copied with
/// `append([]string(nil), ...)`, so an empty list is a nil slice and prints `null`.
fn go_json_strings(values: &[String]) -> String {
    if values.is_empty() {
        return "null".to_string();
    }
    let json = serde_json::to_string(values).unwrap_or_default();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `%q` of a string (`strconv.Quote`): printable characters as they are, the usual
/// backslash escapes, other characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint` for non-ASCII characters, close enough: not a control, format,
/// separator or private-use character.
fn go_printable(c: char) -> bool {
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c as u32,
            0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
            | 0x202a..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb
            | 0xe000..=0xf8ff | 0xf0000..=0x10ffff))
}

// apimachinery's messages (k8s.io/apimachinery/pkg/api/validate/content).
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// `RegexError`: the message, the examples and the pattern.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let mut out = format!("{message} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(pattern);
    out.push_str("')");
    out
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`
fn is_name_token(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Lowercase RFC 1123 subdomain pattern (no length check).
fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => {
                    (f.is_ascii_lowercase() || f.is_ascii_digit())
                        && (l.is_ascii_lowercase() || l.is_ascii_digit())
                        && b.iter()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                }
                _ => false,
            }
        })
}

/// `content.IsLabelKey`: what is wrong with a label key (`[prefix/]name`), in apimachinery's
/// order and words; empty when the key is valid.
pub(crate) fn label_key_errors(key: &str) -> Vec<String> {
    let name_error = || {
        regex_error(
            LABEL_KEY_MSG,
            LABEL_KEY_FMT,
            &["MyName", "my.name", "123-abc"],
        )
    };
    let mut errors = Vec::new();
    let mut parts = key.split('/');
    let (first, second, third) = (parts.next(), parts.next(), parts.next());
    let name = match (first, second, third) {
        (Some(name), None, _) => name,
        (Some(prefix), Some(name), None) => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errors.push(format!("prefix part {}", max_len_error(253)));
                }
                if !is_dns1123_subdomain(prefix) {
                    errors.push(format!(
                        "prefix part {}",
                        regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"])
                    ));
                }
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_error()
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len_error(63)));
    }
    if !is_name_token(name) {
        errors.push(format!("name part {}", name_error()));
    }
    errors
}

/// `content.IsLabelValue`: what is wrong with a label value; empty when it is valid.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !value.is_empty() && !is_name_token(value) {
        errors.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_string(),
            operator: op.to_string(),
            values: if values.is_empty() {
                None
            } else {
                Some(values.iter().map(|s| s.to_string()).collect())
            },
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn semantics_on_string_maps() {
        let labels = map(&[("cloud", "Amazon"), ("region", "us-east-1")]);
        let ok = |m: &[(&str, &str)], e: &[LabelSelectorRequirement]| {
            SelectorSpec::parse(Some(&map(m)), e).map(|s| s.matches_str(&labels))
        };
        assert_eq!(ok(&[("cloud", "Amazon")], &[]), Ok(true));
        assert_eq!(ok(&[("cloud", "Azure")], &[]), Ok(false));
        assert_eq!(
            ok(&[], &[req("cloud", "In", &["Azure", "Amazon"])]),
            Ok(true)
        );
        assert_eq!(ok(&[], &[req("cloud", "NotIn", &["Amazon"])]), Ok(false));
        assert_eq!(ok(&[], &[req("zone", "NotIn", &["a"])]), Ok(true));
        assert_eq!(ok(&[], &[req("zone", "DoesNotExist", &[])]), Ok(true));
        assert_eq!(ok(&[], &[req("region", "Exists", &[])]), Ok(true));
        assert_eq!(ok(&[], &[]), Ok(true));
    }

    #[test]
    fn validation_errors() {
        let e = |r: LabelSelectorRequirement| SelectorSpec::parse(None, &[r]).unwrap_err();
        assert!(e(req("k", "In", &[])).contains("values set can't be empty"));
        assert!(e(req("k", "Exists", &["v"])).contains("values set must be empty"));
        assert_eq!(
            e(req("k", "Equals", &["v"])),
            "\"Equals\" is not a valid label selector operator"
        );
        assert!(e(req("bad key", "Exists", &[])).starts_with("key: Invalid value: \"bad key\""));
        assert!(e(req("k", "In", &["bad value"])).contains("Invalid value: \"bad value\""));
        assert!(SelectorSpec::parse(Some(&map(&[("k", "-x")])), &[]).is_err());
    }

    /// Issue #15.6: apimachinery v0.36's messages, word for word: bad values as JSON (an
    /// empty `In` list is a nil slice, `null`), the example-and-regex suffix of label key and
    /// value errors, sizes in bytes, Go quoting.
    #[test]
    fn messages_are_apimachinerys() {
        let e = |r: LabelSelectorRequirement| SelectorSpec::parse(None, &[r]).unwrap_err();
        assert_eq!(
            e(req("k", "In", &[])),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            e(req("k", "NotIn", &[])),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            e(req("k", "Exists", &["1", "2"])),
            r#"values: Invalid value: ["1","2"]: values set must be empty for exists and does not exist"#
        );
        assert_eq!(
            e(req("k", "In", &["-1"])),
            "values[0][k]: Invalid value: \"-1\": a valid label must be an empty string or consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
             character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        assert_eq!(
            e(req("k", "In", &[&"x".repeat(64)])),
            format!(
                "values[0][k]: Invalid value: \"{}\": must be no more than 63 bytes",
                "x".repeat(64)
            )
        );
        assert_eq!(
            e(req("bad key", "Exists", &[])),
            "key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  \
             or 'my.name',  or '123-abc', regex used for validation is \
             '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            e(req("/k", "Exists", &[])),
            "key: Invalid value: \"/k\": prefix part must be non-empty"
        );
        assert_eq!(
            e(req("Ex.com/", "Exists", &[])),
            "key: Invalid value: \"Ex.com/\": prefix part a lowercase RFC 1123 subdomain must \
             consist of lower case alphanumeric characters, '-' or '.', and must start and end with \
             an alphanumeric character (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); name part must be \
             non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must \
             start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert!(e(req("a/b/c", "Exists", &[])).starts_with(
            "key: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric"
        ));
        assert!(e(req("a/b/c", "Exists", &[])).ends_with(
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ));
        assert_eq!(
            e(req("k", "Equals", &["v"])),
            "\"Equals\" is not a valid label selector operator"
        );
        // Several problems: in brackets, comma-separated.
        let both = e(req("k", "Exists", &["a b"]));
        assert!(both.starts_with("[values: Invalid value: [\"a b\"]: values set must be empty"));
        assert!(both.contains(", values[0][k]: Invalid value: \"a b\": a valid label"));
        assert!(both.ends_with("]"));
        // Go escapes in quoted and JSON values.
        assert_eq!(go_quote("a\tb\"é\u{200b}"), "\"a\\tb\\\"é\\u200b\"");
        assert_eq!(
            go_json_strings(&["<&>".to_string()]),
            r#"["\u003c\u0026\u003e"]"#
        );
    }

    /// Issue #17: selectors far beyond any real size validate, compile and match (or fail
    /// with upstream's message) on a thread with a tokio worker's stack.
    #[test]
    fn huge_selectors_never_crash() {
        let outcome = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let n = 10_000;
                let long = "a".repeat(n);
                let nested = format!("{}x{}", "(".repeat(n), ")".repeat(n));
                let mut errors = Vec::new();
                for r in [
                    req(&long, "Exists", &[]),
                    req(&nested, "Exists", &[]),
                    req(&format!("{}/k", "a.".repeat(n)), "Exists", &[]),
                    req("k", "In", &[long.as_str()]),
                    req("k", "In", &[nested.as_str()]),
                ] {
                    errors.push(SelectorSpec::parse(None, &[r]).unwrap_err());
                }
                let many: Vec<_> = (0..n)
                    .map(|i| req(&format!("k{i}"), "NotIn", &["v"]))
                    .collect();
                let wide = SelectorSpec::parse(None, &many).expect("valid");
                let values: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
                let refs: Vec<&str> = values.iter().map(String::as_str).collect();
                let in_many = SelectorSpec::parse(None, &[req("k", "In", &refs)]).expect("valid");
                let labels = map(&[("k", "v9999")]);
                (
                    errors,
                    wide.matches_str(&labels),
                    in_many.matches_str(&labels),
                )
            })
            .expect("thread")
            .join()
            .expect("no crash");
        let (errors, wide, in_many) = outcome;
        assert!(
            errors[0].starts_with("key: Invalid value: \"aaaa"),
            "{:.80}",
            errors[0]
        );
        assert!(errors[0].contains("name part must be no more than 63 bytes"));
        assert!(errors[1].contains("name part must be no more than 63 bytes"));
        assert!(errors[2].contains("prefix part"), "{:.80}", errors[2]);
        assert!(errors[3].contains("must be no more than 63 bytes"));
        assert!(wide && in_many);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Any keys, operators and values validate or fail; compiling and matching never panic.
        #[test]
        fn selectors_never_panic(
            key in "\\PC{0,80}",
            op in proptest::sample::select(vec!["In", "NotIn", "Exists", "DoesNotExist", "", "in"]),
            values in proptest::collection::vec("\\PC{0,70}", 0..4),
        ) {
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            if let Ok(spec) = SelectorSpec::parse(None, &[req(&key, op, &refs)]) {
                let mut syms = Symbols::default();
                let labels = SymMap::from_pairs(vec![(syms.intern(&key), syms.intern("v"))]);
                let _ = spec.compile(&syms).matches(&labels);
                let _ = spec.matches_str(&map(&[(key.as_str(), "v")]));
            }
        }
    }

    #[test]
    fn compiled_matches_like_strings() {
        let mut syms = Symbols::default();
        let pairs = vec![(syms.intern("cloud"), syms.intern("Amazon"))];
        let m = SymMap::from_pairs(pairs);
        let spec =
            SelectorSpec::parse(None, &[req("cloud", "In", &["Amazon", "Unknown"])]).unwrap();
        assert!(spec.compile(&syms).matches(&m));
        let spec = SelectorSpec::parse(None, &[req("nokey", "NotIn", &["x"])]).unwrap();
        assert!(spec.compile(&syms).matches(&m));
        let spec = SelectorSpec::parse(None, &[req("nokey", "In", &["x"])]).unwrap();
        assert!(!spec.compile(&syms).matches(&m));
        assert!(CompiledSelector::everything().matches(&m));
    }
}
