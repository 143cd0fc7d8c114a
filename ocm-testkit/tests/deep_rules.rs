//! CRD validation rules (`x-kubernetes-validations`) nested deep: a rule within the CEL limits
//! is enforced, one beyond them is skipped (kube-apiserver would have refused the CRD); no
//! write crashes, on a thread with the stack of a tokio worker.

use ocm_testkit::{FakeCluster, Gvr, WriteOptions};
use serde_json::{Value, json};

fn crd(rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "x-kubernetes-validations": rules,
                        "properties": {"name": {"type": "string"}}
                    }}
                }}
            }]
        }
    })
}

fn on_worker_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no crash")
}

#[test]
fn deep_rules_never_crash_a_write() {
    on_worker_stack(|| {
        let c = FakeCluster::new();
        let nest = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
        let rules = vec![
            json!({"rule": nest(30, "self.name != 'bad'"), "message": "name must not be bad"}),
            json!({"rule": nest(10_000, "self.name != 'worse'"), "message": "never checked"}),
            json!({"rule": format!("self.name{}", ".size()".repeat(10_000)), "message": "never checked"}),
        ];
        let gvr_crd = Gvr::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
        c.store()
            .create(&gvr_crd, "", crd(rules), &WriteOptions::default())
            .expect("CRD");
        let gvr = Gvr::new("example.com", "v1", "gadgets");
        let gadget = |name: &str, spec_name: &str| {
            json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                   "metadata": {"name": name}, "spec": {"name": spec_name}})
        };
        let opts = WriteOptions::default();
        let err = c
            .store()
            .create(&gvr, "default", gadget("a", "bad"), &opts)
            .expect_err("the 30-level rule is enforced");
        assert_eq!(err.code, 422);
        assert!(
            err.message.contains("name must not be bad"),
            "{}",
            err.message
        );
        c.store()
            .create(&gvr, "default", gadget("b", "worse"), &opts)
            .expect("the 10,000-level rules are skipped");
    });
}

#[test]
fn expensive_rules_stop_at_the_cost_limit() {
    let c = FakeCluster::new();
    let rule = "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, self.name != '')))";
    let gvr_crd = Gvr::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    c.store()
        .create(
            &gvr_crd,
            "",
            crd(vec![json!({"rule": rule})]),
            &WriteOptions::default(),
        )
        .expect("CRD");
    let gvr = Gvr::new("example.com", "v1", "gadgets");
    let err = c
        .store()
        .create(
            &gvr,
            "default",
            json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                   "metadata": {"name": "a"}, "spec": {"name": "x"}}),
            &WriteOptions::default(),
        )
        .expect_err("refused");
    assert_eq!(err.code, 422);
    assert!(
        err.message
            .contains(&format!("call cost exceeds limit for rule: {rule}")),
        "{}",
        err.message
    );
}

#[test]
fn yaml_nested_ten_thousand_levels_is_a_bad_request() {
    let n = 10_000;
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata:\n";
    for text in [
        format!("{head}  k: {}1{}\n", "[".repeat(n), "]".repeat(n)),
        format!("{head}  k: {}1{}\n", "{a: ".repeat(n), "}".repeat(n)),
        {
            let mut text = String::from(head);
            for i in 0..n {
                text.push_str(&" ".repeat(2 + i));
                text.push_str("a:\n");
            }
            text
        },
    ] {
        let message = on_worker_stack(move || {
            let c = FakeCluster::new();
            c.apply_yaml(&text).map(|_| ()).unwrap_err().to_string()
        });
        assert!(message.contains("invalid YAML: "), "{message:.200}");
    }
}
