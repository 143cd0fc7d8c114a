//! Issue #17: label and field selectors (query parameters, user input) of absurd depth and
//! size are errors or results, never a crash, on a thread with a tokio worker's stack.

use ocm_testkit::selector::{FieldSelector, LabelSelector};
use proptest::prelude::*;
use serde_json::json;

fn on_worker_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no crash")
}

#[test]
fn ten_thousand_levels_are_errors_naming_the_input() {
    let n = 10_000;
    // Each is refused where apimachinery's parser stops, with its message.
    for (input, want) in [
        (
            format!("a in {}b{}", "(".repeat(n), ")".repeat(n)),
            "unable to parse requirement: found '(', expected: ',', ')' or identifier",
        ),
        (
            format!("{}a", "!".repeat(n)),
            "unable to parse requirement: found '!', expected: identifier",
        ),
        (
            format!("a{}", "=".repeat(n)),
            "unable to parse requirement: found '==', expected: identifier",
        ),
        (
            format!("a notin ({})", "(b,".repeat(n)),
            "unable to parse requirement: found '(', expected: ',', ')' or identifier",
        ),
        (
            "(".repeat(n),
            "found '(', expected: !, identifier, or 'end of string'",
        ),
        (
            format!("a in (b{})", ",(".repeat(n)),
            "unable to parse requirement: found '(', expected: ',', or identifier",
        ),
    ] {
        let err = on_worker_stack({
            let input = input.clone();
            move || LabelSelector::parse(&input).map(|_| ()).unwrap_err()
        });
        assert_eq!(err.code, 400, "{}", &input[..30]);
        assert_eq!(err.message, want, "{}", &input[..30]);
    }
    // Wide is fine: ten thousand requirements.
    let wide = (0..n)
        .map(|i| format!("k{i}=v"))
        .collect::<Vec<_>>()
        .join(",");
    let selector = on_worker_stack(move || LabelSelector::parse(&wide).expect("parses"));
    assert!(!selector.matches_object(&json!({"metadata": {"labels": {"k0": "v"}}})));

    // Field selectors: deep paths select nothing, odd input is an error.
    let deep_path = format!("{}=x", vec!["a"; n].join("."));
    let field = on_worker_stack(move || FieldSelector::parse(&deep_path).expect("parses"));
    assert!(!field.matches_object(&json!({"a": {"a": "x"}})));
    let err = on_worker_stack(move || {
        FieldSelector::parse(&"(".repeat(n))
            .map(|_| ())
            .unwrap_err()
    });
    assert_eq!(err.code, 400);
    assert!(err.message.starts_with("invalid selector: '"));
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b.c/d", "=", "==", "!=", "!", "in", "notin", " ", "(", ")", ",", ">", "<", "1", "-",
        "_", "é", "\t",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any soup of selector pieces, repeated long, parses or fails; matching never panics.
    #[test]
    fn selector_soups_never_crash(pieces in prop::collection::vec(piece(), 1..10), repeat in 1usize..2_000) {
        let input = pieces.concat().repeat(repeat);
        on_worker_stack(move || {
            let object = json!({"metadata": {"name": "n", "labels": {"a": "1", "b.c/d": "x"}}});
            if let Ok(s) = LabelSelector::parse(&input) {
                let _ = s.matches_object(&object);
            }
            if let Ok(s) = FieldSelector::parse(&input) {
                let _ = s.matches_object(&object);
            }
        });
    }
}
