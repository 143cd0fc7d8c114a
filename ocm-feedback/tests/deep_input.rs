//! Issue #17: JSONPath templates (feedback rules are user input) and documents nested far
//! beyond any real use parse, evaluate and render without overflowing the stack of a tokio
//! worker thread (2 MiB): an error or a result, never a crash.

use ocm_feedback::jsonpath::{Template, go_json};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Runs `f` on a thread with a tokio worker's stack.
fn on_worker_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no crash")
}

/// Parses `template` and, if it parses, evaluates and renders it against `data`.
fn run(template: String, data: Value) -> Result<String, String> {
    on_worker_stack(move || {
        let t = Template::parse(&template).map_err(|e| e.to_string())?;
        t.execute(&data).map_err(|e| e.to_string())
    })
}

/// A document `depth` levels of `{"a": …}` deep, built without recursion.
fn deep_document(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        let mut m = serde_json::Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

#[test]
fn ten_thousand_levels_of_template_nesting() {
    let n = 10_000;
    let data = json!({"a": {"b": [1, 2]}});
    let cases = [
        format!("{}.a{}", "{".repeat(n), "}".repeat(n)),
        format!("{{{}}}", "[".repeat(n)),
        format!("{{.a{}}}", "[0]".repeat(n)),
        format!("{{{}}}", ".a".repeat(n)),
        format!("{{{}}}", "..a".repeat(n)),
        format!("{{.a{}}}", "[?(@.b".repeat(n)),
        format!("{{.a{}{}}}", "[?(@.b".repeat(n), ")]".repeat(n)),
        format!("{{.a[{}]}}", "'a',".repeat(n)),
        format!("{{{}}}", "['".repeat(n)),
        format!("{{range .a}}{}{{end}}", "{range .b}".repeat(n)),
        format!("{{.a{}}}", "[*]".repeat(n)),
        format!("{{{}}}", "\\.".repeat(n)),
    ];
    for template in cases {
        let head: String = template.chars().take(30).collect();
        // A result or an error: what matters is that the thread survives.
        let _ = run(template, data.clone());
        let _ = head;
    }
    // Errors name the input position.
    let err = run(
        format!("{{.a{}{}}}", "[?(@.b".repeat(n), ")]".repeat(n)),
        data,
    )
    .unwrap_err();
    assert!(!err.is_empty());
}

#[test]
fn documents_ten_thousand_levels_deep() {
    // `..a` finds every level, each rendered whole: quadratic output, so less deep.
    for (template, depth) in [
        ("{.a.a.a}", 10_000),
        ("{..a}", 1_000),
        ("{.a}", 10_000),
        ("{$}", 10_000),
        ("{.*}", 10_000),
        ("{range .a}{.a}{end}", 10_000),
    ] {
        let (result, doc) = on_worker_stack(move || {
            let doc = deep_document(depth);
            let result = Template::parse(template)
                .map_err(|e| e.to_string())
                .and_then(|t| t.execute(&doc).map_err(|e| e.to_string()));
            (result.map(|s| s.len()), doc)
        });
        assert!(result.is_ok() || result.is_err(), "{template}");
        drop_deep(doc);
    }
    // Rendering a deep value as JSON, as raw feedback values are.
    let (rendered, doc) = on_worker_stack(|| {
        let doc = deep_document(10_000);
        let mut out = String::new();
        go_json(&mut out, &doc);
        (out.len(), doc)
    });
    assert!(rendered > 40_000);
    drop_deep(doc);
    // And as Go's `%v`, which upstream hashes.
    let (rendered, doc) = on_worker_stack(|| {
        let doc = deep_document(10_000);
        let mut out = String::new();
        ocm_feedback::jsonpath::go_value(&mut out, &doc);
        (out, doc)
    });
    assert!(rendered.starts_with("map[a:map[a:") && rendered.ends_with("]]"));
    drop_deep(doc);
}

/// Drops a document too deep for serde_json's recursive drop on a worker's stack (the
/// documents this crate gets are parsed with serde_json's limit of 128 levels).
fn drop_deep(doc: Value) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || drop(doc))
        .expect("thread")
        .join()
        .expect("dropped");
}

/// Pieces of templates that nest.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{", "}", "[", "]", "(", ")", "?", "@", ".", "..", "a", "*", ",", ":", "'", "\"", "\\",
        "==", "range ", "end", "$", "-1", " ",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any soup of template pieces repeated to thousands of levels parses or fails, and
    /// evaluates or fails, on a worker's stack.
    #[test]
    fn deep_soups_never_crash(pieces in prop::collection::vec(piece(), 1..12), repeat in 1usize..3_000) {
        let template = pieces.concat().repeat(repeat);
        let _ = run(template, json!({"a": [{"a": 1}, {"a": {"a": 2}}]}));
    }
}
