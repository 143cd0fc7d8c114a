//! Property tests: the parser and evaluator never panic, Go-style rendering round-trips, and
//! on the subset both dialects share, results equal jsonpath-rust's (RFC 9535) results.
//!
//! Where the two dialects disagree by design (Kubernetes errors on out-of-range indexes and on
//! comparisons of different types, walks into strings with `*`), this crate reports an error
//! or a byte, and the case is left to the kubectl differential test, where kubectl is the
//! reference.

use jsonpath_rust::JsonPath as _;
use ocm_feedback::jsonpath::{Match, Template, go_json};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Short strings over characters that exercise every branch of the scanner.
const TEMPLATE_TEXT: &str = r#"[{}\[\]()?@$.*,:'"\\=!<>&|~ \t\nab01x_\-+é]{0,48}"#;

fn doc() -> Value {
    json!({
        "metadata": {"name": "n", "labels": {"a.b/c": "d"}},
        "spec": {"list": [{"a": 1, "b": "x"}, {"a": 2.5, "c": null}, null, "str", [1, 2]],
                 "m": {"a": 1, "b": {"a": [true]}}, "s": "abc", "n": null, "e": []},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    json_value_with_arrays(0)
}

/// [`json_value`] with arrays of at least `min_len` items.
fn json_value_with_arrays(min_len: usize) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(Value::from),
        prop_oneof![Just("x"), Just("y"), Just("")].prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), min_len..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![Just("a"), Just("b"), Just("c"), Just("list")].prop_map(String::from),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One step of a path in the shared subset, in Kubernetes syntax. RFC 9535 makes
/// `@.missing != 'x'` true while Kubernetes skips elements without the key, so `!=` is left
/// out of the differential property (`with_ne`).
fn step_with(with_ne: bool) -> impl Strategy<Value = String> {
    let ne = if with_ne { "!=" } else { "==" };
    let key = prop_oneof![Just("a"), Just("b"), Just("c"), Just("list")];
    prop_oneof![
        key.clone().prop_map(|k| format!(".{k}")),
        (-3i64..4).prop_map(|i| format!("[{i}]")),
        Just("[*]".to_owned()),
        Just(".*".to_owned()),
        (0i64..3, 0i64..4).prop_map(|(a, b)| format!("[{a}:{b}]")),
        (1i64..3).prop_map(|s| format!("[::{s}]")),
        (0i64..2, 0i64..3).prop_map(|(a, b)| format!("[{a},{b}]")),
        key.clone().prop_map(|k| format!("..{k}")),
        (
            key.clone(),
            prop_oneof![
                Just("=="),
                Just(ne),
                Just("<"),
                Just(">"),
                Just("<="),
                Just(">=")
            ],
            -2i64..4
        )
            .prop_map(|(k, op, v)| format!("[?(@.{k}{op}{v})]")),
        (
            key.clone(),
            prop_oneof![Just("=="), Just(ne)],
            prop_oneof![Just("x"), Just("y")]
        )
            .prop_map(|(k, op, v)| format!("[?(@.{k}{op}'{v}')]")),
        key.prop_map(|k| format!("[?(@.{k})]")),
    ]
}

fn step() -> impl Strategy<Value = String> {
    step_with(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parsing_never_panics(text in TEMPLATE_TEXT) {
        let _ = Template::parse(&text);
        let _ = Template::parse_path(&text);
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(text in "\\PC{0,64}") {
        let _ = Template::parse(&text);
    }

    #[test]
    fn parse_errors_point_into_the_input(text in TEMPLATE_TEXT) {
        if let Err(e) = Template::parse(&text) {
            prop_assert!(e.position() <= text.len(), "{e} for {text:?}");
        }
        if let Err(e) = Template::parse_path(&text) {
            prop_assert!(e.position() <= text.len(), "{e} for {text:?}");
        }
    }

    #[test]
    fn evaluation_never_panics(text in TEMPLATE_TEXT, data in json_value()) {
        if let Ok(t) = Template::parse(&text) {
            let _ = t.execute(&doc());
            let _ = t.execute(&data);
            let _ = t.clone().allow_missing_keys(false).execute(&data);
        }
    }

    #[test]
    fn structured_paths_never_panic(steps in prop::collection::vec(step(), 1..5), data in json_value()) {
        let path = steps.concat();
        let t = Template::parse_path(&path).unwrap();
        let _ = t.execute(&data);
        let wrapped = format!("{{range {path}}}[{{@}}]{{end}}");
        let _ = Template::parse(&wrapped).unwrap().execute(&data);
    }

    /// Arrays are never empty here: Kubernetes ends a `[*]` or slice step at the first empty
    /// array it meets (kubectl prints nothing for `{.x[*][*]}` on `[[], [1]]`), where RFC 9535
    /// goes on to the next array; the kubectl differential test covers empty arrays.
    #[test]
    fn agrees_with_jsonpath_rust_on_the_shared_subset(
        steps in prop::collection::vec(step_with(false), 1..4),
        data in json_value_with_arrays(1),
    ) {
        let path = steps.concat();
        let ours = Template::parse_path(&path).unwrap();
        let Ok(results) = ours.find_results(&data) else {
            // Kubernetes errors where RFC 9535 returns nothing; kubectl decides (other test).
            return Ok(());
        };
        let found: &[Match<'_>] = results.first().map_or(&[], Vec::as_slice);
        if found.iter().any(|m| matches!(m, Match::Byte(_))) {
            // `*` walks into strings in Kubernetes only.
            return Ok(());
        }
        let ours: Vec<Value> = found.iter().map(Match::to_json).collect();
        let rfc_path = format!("${path}");
        let theirs: Vec<Value> = match data.query(&rfc_path) {
            Ok(v) => v.into_iter().cloned().collect(),
            Err(e) => return Err(TestCaseError::fail(format!("jsonpath-rust rejected {rfc_path}: {e}"))),
        };
        if path.contains("..") {
            // Same values; the traversal orders of the two implementations may interleave
            // siblings differently.
            let mut a: Vec<String> = ours.iter().map(Value::to_string).collect();
            let mut b: Vec<String> = theirs.iter().map(Value::to_string).collect();
            a.sort();
            b.sort();
            prop_assert_eq!(a, b, "path {} on {}", path, data);
        } else {
            prop_assert_eq!(ours, theirs, "path {} on {}", path, data);
        }
    }

    #[test]
    fn go_json_round_trips(data in json_value(), f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let mut out = String::new();
        go_json(&mut out, &data);
        prop_assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), data);
        let number = json!(f);
        let mut out = String::new();
        go_json(&mut out, &number);
        prop_assert_eq!(out.parse::<f64>().unwrap(), f);
        let text = Match::Float(f).to_string();
        prop_assert_eq!(text.parse::<f64>().unwrap(), f);
    }
}
