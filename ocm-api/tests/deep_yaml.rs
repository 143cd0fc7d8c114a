//! Issue #17: YAML and JSON manifests nested far beyond any real object are errors naming the
//! source and document, never a crash, on a thread with a tokio worker's stack.

use ocm_api::builder::ManifestWorkBuilder;

fn on_worker_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no crash")
}

fn load(text: String) -> Result<usize, String> {
    on_worker_stack(move || {
        ManifestWorkBuilder::new("w", "cluster1")
            .yaml("deep.yaml", &text)
            .map(|b| b.len())
            .map_err(|e| e.to_string())
    })
}

#[test]
fn ten_thousand_levels_of_yaml_and_json_are_errors() {
    let n = 10_000;
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n";
    let cases = [
        // Flow sequences and mappings.
        format!("{head}  k: {}1{}\n", "[".repeat(n), "]".repeat(n)),
        format!("{head}  k: {}1{}\n", "{a: ".repeat(n), "}".repeat(n)),
        // JSON (a YAML flow document).
        format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"x\"}}, \"data\": {}1{}}}",
            "{\"a\": ".repeat(n),
            "}".repeat(n)
        ),
        // Block mappings and sequences, indented ever deeper.
        {
            let mut text = String::from(head);
            for i in 0..n {
                text.push_str(&" ".repeat(2 + i));
                text.push_str("a:\n");
            }
            text
        },
        {
            let mut text = String::from(head);
            text.push_str("  k:\n");
            for i in 0..n {
                text.push_str(&" ".repeat(2 + i));
                text.push_str("-\n");
            }
            text
        },
        // Unclosed brackets.
        format!("{head}  k: {}\n", "[".repeat(n)),
    ];
    for text in cases {
        let err = load(text).unwrap_err();
        assert!(err.starts_with("deep.yaml: document 1: "), "{err:.200}");
    }
    // Within the parser's budget, nesting is fine.
    let ok = format!("{head}  k: {}1{}\n", "[".repeat(20), "]".repeat(20));
    assert_eq!(load(ok), Ok(1));
}
