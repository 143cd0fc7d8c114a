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

use ocm_api::k8s::labels::{self, Expression};

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
        Self::from_selector(&LabelSelector {
            match_labels: match_labels.cloned(),
            match_expressions: Some(expressions.to_vec()),
        })
    }

    /// Parses an optional `metav1.LabelSelector`; `None` gives the empty (match-all) spec.
    pub(crate) fn from_label_selector(selector: Option<&LabelSelector>) -> Result<Self, String> {
        match selector {
            None => Ok(SelectorSpec {
                requirements: Vec::new(),
            }),
            Some(s) => Self::from_selector(s),
        }
    }

    /// The requirements of kube's [`Selector`](labels::Selector) that
    /// [`ocm_api::k8s::labels::selector`] validates and builds.
    fn from_selector(selector: &LabelSelector) -> Result<Self, String> {
        let selector = labels::selector(selector).map_err(|e| e.to_string())?;
        let requirements = selector
            .into_iter()
            .map(|expression| match expression {
                Expression::Equal(key, value) => (key, Op::In, vec![value]),
                Expression::NotEqual(key, value) => (key, Op::NotIn, vec![value]),
                Expression::In(key, values) => (key, Op::In, values.into_iter().collect()),
                Expression::NotIn(key, values) => (key, Op::NotIn, values.into_iter().collect()),
                Expression::Exists(key) => (key, Op::Exists, Vec::new()),
                Expression::DoesNotExist(key) => (key, Op::DoesNotExist, Vec::new()),
            })
            .collect();
        Ok(SelectorSpec { requirements })
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
        use ocm_api::k8s::gojson;
        assert_eq!(gojson::quote("a\tb\"é\u{200b}"), "\"a\\tb\\\"é\\u200b\"");
        assert_eq!(
            gojson::string_array(&["<&>".to_string()]),
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
