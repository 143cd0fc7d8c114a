//! Typing a JSONPath result into a feedback [`FieldValue`], with upstream OCM's rules.

use ocm_api::work::v1::FieldValue;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::jsonpath::{Match, render};

/// How values that are not a single integer, string or boolean are reported.
///
/// The default is upstream's: the `RawFeedbackJsonString` gate off and a 1024-byte limit.
///
/// ```
/// let options = ocm_feedback::ValueOptions::default()
///     .raw_json_string(true)
///     .max_json_raw_length(4096);
/// assert!(options.raw_json_string);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValueOptions {
    /// The `RawFeedbackJsonString` feature gate: report floats, maps, lists and multiple
    /// matches as `JsonRaw` instead of failing.
    pub raw_json_string: bool,
    /// The longest `JsonRaw` value, in bytes (the agent's `--max-json-raw-length`).
    pub max_json_raw_length: usize,
}

impl Default for ValueOptions {
    fn default() -> Self {
        Self {
            raw_json_string: false,
            max_json_raw_length: ocm_api::constants::limits::MAX_JSON_RAW_LENGTH,
        }
    }
}

ocm_api::setters!(ValueOptions {
    /// With the `RawFeedbackJsonString` feature gate on (`true`) or off.
    raw_json_string: bool,
    /// With this many bytes as the longest `JsonRaw` value.
    max_json_raw_length: usize,
});

/// Types the results of one feedback path evaluation (`results` as returned by
/// [`Template::find_results`](crate::jsonpath::Template::find_results)).
///
/// Upstream's rules:
/// * nothing found, or a null ⇒ no value (`Ok(None)`);
/// * only the first list of results counts; with several matches and the gate off, the first
///   match is typed; with the gate on, all matches of the first list are encoded as a JSON
///   list;
/// * an integer that fits in `i64` ⇒ `Integer`; a string ⇒ `String`; a boolean ⇒ `Boolean`;
/// * anything else (floats, also integral ones like `2.0`; maps; lists) ⇒ `JsonRaw` with Go's
///   JSON encoding when the gate is on (an error when longer than the maximum), otherwise the
///   error `the type <go type> of the value for <name> is not found`.
pub fn type_value(
    name: &str,
    results: &[Vec<Match<'_>>],
    options: ValueOptions,
) -> Result<Option<FieldValue>> {
    let Some(first) = results.first() else {
        return Ok(None);
    };
    let Some(head) = first.first() else {
        return Ok(None);
    };
    if (results.len() == 1 && first.len() == 1) || !options.raw_json_string {
        return type_single(name, head, options);
    }
    let mut json = String::from("[");
    for (i, value) in first.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        render::go_json_match(&mut json, value);
    }
    json.push(']');
    raw(name, json, options).map(Some)
}

/// Types one found document value (the fast path for plain field chains).
pub(crate) fn type_json(
    name: &str,
    value: &Value,
    options: ValueOptions,
) -> Result<Option<FieldValue>> {
    type_single(name, &Match::Json(value), options)
}

fn type_single(name: &str, value: &Match<'_>, options: ValueOptions) -> Result<Option<FieldValue>> {
    match *value {
        Match::Json(Value::Null) | Match::Nil => return Ok(None),
        Match::Json(Value::Number(n)) if n.is_i64() => {
            if let Some(i) = n.as_i64() {
                return Ok(Some(FieldValue::integer(i)));
            }
        }
        Match::Json(Value::String(s)) => return Ok(Some(FieldValue::string(s.as_str()))),
        Match::Text(s) => return Ok(Some(FieldValue::string(s))),
        Match::Json(&Value::Bool(b)) | Match::Bool(b) => return Ok(Some(FieldValue::boolean(b))),
        _ => {}
    }
    if !options.raw_json_string {
        return Err(Error::UnsupportedType {
            name: name.to_owned(),
            go_type: value.go_type_name(),
        });
    }
    let mut json = String::new();
    render::go_json_match(&mut json, value);
    raw(name, json, options).map(Some)
}

fn raw(name: &str, json: String, options: ValueOptions) -> Result<FieldValue> {
    if json.len() > options.max_json_raw_length {
        return Err(Error::JsonRawTooLong {
            name: name.to_owned(),
            max: options.max_json_raw_length,
        });
    }
    Ok(FieldValue::json_raw(json))
}
