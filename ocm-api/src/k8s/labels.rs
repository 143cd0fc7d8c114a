//! Label selectors: a `metav1.LabelSelector` checked as `LabelSelectorAsSelector` checks it,
//! turned into kube's own [`Selector`].
//!
//! Matching is kube-core's ([`SelectorExt::matches`]): `matchLabels` and `matchExpressions`
//! ANDed, `NotIn` and `DoesNotExist` true when the key is absent, an empty selector matching
//! everything. What kube-core does not do is reject what the API server rejects, with its
//! words; [`selector`] does: label key and value syntax, the operator, and the value counts
//! (`In`/`NotIn` need values, `Exists`/`DoesNotExist` take none), each error as apimachinery
//! prints it and several in brackets as `ErrorList.ToAggregate` joins them.
//!
//! ```
//! use std::collections::BTreeMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
//! use kube::core::SelectorExt;
//! use ocm_api::k8s::labels;
//!
//! let mut selector = LabelSelector {
//!     match_labels: Some(BTreeMap::from([("cloud".into(), "Amazon".into())])),
//!     match_expressions: Some(vec![LabelSelectorRequirement {
//!         key: "zone".into(),
//!         operator: "NotIn".into(),
//!         values: Some(vec!["a".into()]),
//!     }]),
//! };
//! let labels = BTreeMap::from([("cloud".to_string(), "Amazon".to_string())]);
//! assert!(labels::selector(&selector)?.matches(&labels));
//!
//! selector.match_expressions.as_mut().unwrap()[0].operator = "Near".into();
//! assert_eq!(
//!     labels::selector(&selector).unwrap_err().to_string(),
//!     "\"Near\" is not a valid label selector operator"
//! );
//! # Ok::<(), ocm_api::Error>(())
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
pub use kube::core::{Expression, Selector, SelectorExt};

use super::{gojson, names};
use crate::Error;

/// The operator of one requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// `LabelSelectorAsSelector`, with kube's [`Selector`] as the result: `matchLabels` become
/// [`Expression::Equal`], `matchExpressions` the matching expression. An invalid selector is
/// [`Error::InvalidLabelSelector`] with upstream's message.
///
/// Unlike upstream, an absent selector is the caller's business (upstream's
/// `LabelSelectorAsSelector(nil)` selects nothing; several OCM fields read an absent selector
/// as "everything").
pub fn selector(selector: &LabelSelector) -> crate::Result<Selector> {
    let invalid = |message: String| Error::InvalidLabelSelector { message };
    let mut expressions = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        check_requirement(key, Operator::Equals, std::slice::from_ref(value)).map_err(invalid)?;
        expressions.push(Expression::Equal(key.clone(), value.clone()));
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let operator = match requirement.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => {
                return Err(invalid(format!(
                    "{} is not a valid label selector operator",
                    gojson::quote(other)
                )));
            }
        };
        let values = requirement.values.as_deref().unwrap_or_default();
        check_requirement(&requirement.key, operator, values).map_err(invalid)?;
        let key = requirement.key.clone();
        let set = || values.iter().cloned().collect();
        expressions.push(match operator {
            Operator::In | Operator::Equals => Expression::In(key, set()),
            Operator::NotIn => Expression::NotIn(key, set()),
            Operator::Exists => Expression::Exists(key),
            Operator::DoesNotExist => Expression::DoesNotExist(key),
        });
    }
    Ok(expressions.into_iter().collect())
}

/// Whether `labels` satisfy `selector` ([`selector`], then kube-core's matching).
pub fn matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> crate::Result<bool> {
    Ok(self::selector(selector)?.matches(labels))
}

/// The text of kube's `labels.Selector.String()` for the selector [`selector`] builds, as
/// `LabelSelectorAsSelector` builds it: requirements sorted by key (`k=v`, `k in (a,b)`,
/// `k notin (a,b)`, `k`, `!k`, the values of a set sorted), joined with commas. This is a scale
/// subresource's `status.selector`. An invalid selector is [`selector`]'s error.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
/// use ocm_api::k8s::labels;
///
/// let selector = LabelSelector {
///     match_labels: Some(BTreeMap::from([("b".into(), "2".into()), ("a".into(), "1".into())])),
///     match_expressions: Some(vec![
///         LabelSelectorRequirement { key: "t".into(), operator: "In".into(), values: Some(vec!["y".into(), "x".into()]) },
///         LabelSelectorRequirement { key: "g".into(), operator: "DoesNotExist".into(), values: None },
///     ]),
/// };
/// assert_eq!(labels::selector_string(&selector)?, "a=1,b=2,!g,t in (x,y)");
/// assert_eq!(labels::format_selector(Some(&selector)), "a=1,b=2,!g,t in (x,y)");
/// assert_eq!(labels::format_selector(None), "<none>");
/// # Ok::<(), ocm_api::Error>(())
/// ```
pub fn selector_string(selector: &LabelSelector) -> crate::Result<String> {
    let mut expressions: Vec<Expression> = self::selector(selector)?.into_iter().collect();
    // Go sorts with `sort.Sort(ByKey(...))`; a stable sort keeps one order for equal keys.
    expressions.sort_by(|a, b| expression_key(a).cmp(expression_key(b)));
    Ok(expressions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(","))
}

/// `metav1.FormatLabelSelector`, what kubectl prints in a SELECTOR column: the
/// [`selector_string`], `<none>` when that is empty (or the selector is absent), `<error>`
/// when the selector is invalid.
pub fn format_selector(selector: Option<&LabelSelector>) -> String {
    match selector.map(selector_string) {
        None => "<none>".to_string(),
        Some(Ok(text)) if text.is_empty() => "<none>".to_string(),
        Some(Ok(text)) => text,
        Some(Err(_)) => "<error>".to_string(),
    }
}

fn expression_key(expression: &Expression) -> &str {
    match expression {
        Expression::In(key, _)
        | Expression::NotIn(key, _)
        | Expression::Equal(key, _)
        | Expression::NotEqual(key, _)
        | Expression::Exists(key)
        | Expression::DoesNotExist(key) => key,
    }
}

/// `labels.NewRequirement`'s checks, aggregated as `ErrorList.ToAggregate` prints them.
fn check_requirement(key: &str, operator: Operator, values: &[String]) -> Result<(), String> {
    let mut errors = Vec::new();
    let key_problems = names::label_key_errors(key);
    if !key_problems.is_empty() {
        errors.push(format!(
            "key: Invalid value: {}: {}",
            gojson::quote(key),
            key_problems.join("; ")
        ));
    }
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => errors.push(format!(
            "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
            bad_values(values)
        )),
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errors.push(format!(
            "values: Invalid value: {}: values set must be empty for exists and does not exist",
            bad_values(values)
        )),
        _ => {}
    }
    for (i, value) in values.iter().enumerate() {
        let problems = names::label_value_errors(value);
        if !problems.is_empty() {
            errors.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                gojson::quote(value),
                problems.join("; ")
            ));
        }
    }
    // `ErrorList.ToAggregate`: repeated messages once; one message alone, several in brackets.
    let mut unique: Vec<String> = Vec::with_capacity(errors.len());
    for error in errors {
        if !unique.contains(&error) {
            unique.push(error);
        }
    }
    match unique.len() {
        0 => Ok(()),
        1 => Err(unique.remove(0)),
        _ => Err(format!("[{}]", unique.join(", "))),
    }
}

/// How a field error prints a `[]string` bad value: as JSON. Requirement values are copied
/// with `append([]string(nil), ...)`, so an empty list is a nil slice and prints `null`.
fn bad_values(values: &[String]) -> String {
    if values.is_empty() {
        "null".to_string()
    } else {
        gojson::string_array(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn expression(key: &str, operator: &str, values: Option<&[&str]>) -> LabelSelector {
        LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: operator.into(),
                values: values.map(|v| v.iter().map(|s| s.to_string()).collect()),
            }]),
        }
    }

    fn message(selector: &LabelSelector) -> String {
        self::selector(selector).unwrap_err().to_string()
    }

    #[test]
    fn semantics() {
        let labels = BTreeMap::from([("cloud".to_string(), "Amazon".to_string())]);
        let check = |s: &LabelSelector| matches(s, &labels).unwrap();
        assert!(check(&LabelSelector::default()));
        assert!(check(&expression(
            "cloud",
            "In",
            Some(&["Amazon", "Google"])
        )));
        assert!(!check(&expression("cloud", "NotIn", Some(&["Amazon"]))));
        assert!(check(&expression("zone", "NotIn", Some(&["a"]))));
        assert!(check(&expression("zone", "DoesNotExist", None)));
        assert!(!check(&expression("zone", "Exists", None)));
        let by_label = LabelSelector {
            match_labels: Some(BTreeMap::from([("cloud".into(), "Google".into())])),
            match_expressions: None,
        };
        assert!(!check(&by_label));
    }

    #[test]
    fn upstream_messages() {
        assert_eq!(
            message(&expression("k", "In", None)),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            message(&expression("k", "Exists", Some(&["v"]))),
            r#"values: Invalid value: ["v"]: values set must be empty for exists and does not exist"#
        );
        assert!(message(&expression("a b", "Exists", None)).starts_with(
            "key: Invalid value: \"a b\": name part must consist of alphanumeric characters"
        ));
        let both = message(&expression("-k", "In", Some(&["-v"])));
        assert!(both.starts_with("[key: Invalid value: \"-k\""), "{both}");
        assert!(
            both.contains(", values[0][-k]: Invalid value: \"-v\": a valid label"),
            "{both}"
        );
        assert_eq!(
            message(&expression("k", "exists", None)),
            "\"exists\" is not a valid label selector operator"
        );
    }
}
