//! CRD schema validation beyond types: pattern, format, enum, bounds, lengths,
//! counts, required, x-kubernetes-validations (CEL), and ratcheting on update.

use ocm_testkit::{ApiError, FakeCluster, Gvr, WriteOptions};
use serde_json::{Value, json};

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.metadata.name.startsWith('g')"
          message: "name must start with g"
        properties:
          spec:
            type: object
            required: [name]
            minProperties: 1
            maxProperties: 6
            x-kubernetes-validations:
            - rule: "!has(self.minReplicas) || !has(self.replicas) || self.replicas >= self.minReplicas"
              messageExpression: "'replicas ' + string(self.replicas) + ' is below ' + string(self.minReplicas)"
              fieldPath: ".replicas"
            - rule: "self.name == oldSelf.name"
              message: "name is immutable"
              reason: FieldValueForbidden
            properties:
              name: {type: string, pattern: "^[a-z][a-z0-9-]*$", minLength: 2, maxLength: 10}
              replicas: {type: integer, minimum: 1, maximum: 10}
              minReplicas: {type: integer}
              ratio: {type: number, exclusiveMinimum: true, minimum: 0, exclusiveMaximum: true, maximum: 1}
              step: {type: integer, multipleOf: 5}
              mode: {type: string, enum: [fast, slow]}
              level: {type: integer, enum: [1, 2]}
              since: {type: string, format: date-time}
              address: {type: string, format: ipv4}
              count32: {type: integer, format: int32}
              tags:
                type: array
                minItems: 1
                maxItems: 2
                items: {type: string}
"#;

/// What kube-apiserver adds when a value of the wrong type or an unsupported enum value keeps
/// it from running a CRD's CEL rules.
const SKIPPED_RULES: &str = "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

fn gvr() -> Gvr {
    Gvr::new("example.com", "v1", "gadgets")
}

fn gadget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
}

fn cluster() -> FakeCluster {
    let c = FakeCluster::new();
    c.apply_yaml(CRD).unwrap();
    c
}

fn create(c: &FakeCluster, name: &str, spec: Value) -> Result<Value, ApiError> {
    c.store().create(
        &gvr(),
        "default",
        gadget(name, spec),
        &WriteOptions::default(),
    )
}

fn message(r: Result<Value, ApiError>) -> String {
    let e = r.expect_err("expected the write to be refused");
    assert_eq!(e.code, 422, "{}", e.message);
    assert_eq!(e.reason, "Invalid");
    e.message.clone()
}

#[test]
fn bounds_lengths_patterns_and_formats_use_kube_apiserver_messages() {
    let c = cluster();
    create(
        &c,
        "good",
        json!({"name": "ok", "replicas": 3, "since": "2024-05-01T10:00:00Z"}),
    )
    .unwrap();
    let cases = [
        (
            json!({"name": "ok", "replicas": 11}),
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
        ),
        (
            json!({"name": "ok", "replicas": 0}),
            "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
        ),
        (
            json!({"name": "ok", "ratio": 1}),
            "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1",
        ),
        (
            json!({"name": "ok", "ratio": 0}),
            "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0",
        ),
        (
            json!({"name": "ok", "step": 7}),
            "spec.step: Invalid value: 7: spec.step in body should be a multiple of 5",
        ),
        (
            json!({"name": "Bad"}),
            "spec.name: Invalid value: \"Bad\": spec.name in body should match '^[a-z][a-z0-9-]*$'",
        ),
        (
            json!({"name": "x"}),
            "spec.name: Invalid value: \"x\": spec.name in body should be at least 2 chars long",
        ),
        (
            json!({"name": "abcdefghijk"}),
            "spec.name: Too long: may not be more than 10 bytes",
        ),
        (
            json!({"name": "ok", "mode": "medium"}),
            // An unsupported enum value keeps the CEL rules from running, and kube-apiserver
            // says so.
            "[spec.mode: Unsupported value: \"medium\": supported values: \"fast\", \"slow\", SKIPPED]",
        ),
        (
            json!({"name": "ok", "level": 3}),
            "[spec.level: Unsupported value: 3: supported values: \"1\", \"2\", SKIPPED]",
        ),
        (
            json!({"name": "ok", "since": "yesterday"}),
            // A value of the wrong format is one of the wrong type: the CEL rules are skipped.
            "[spec.since: Invalid value: \"yesterday\": spec.since in body must be of type date-time: \"yesterday\", SKIPPED]",
        ),
        (
            json!({"name": "ok", "address": "300.1.1.1"}),
            "[spec.address: Invalid value: \"300.1.1.1\": spec.address in body must be of type ipv4: \"300.1.1.1\", SKIPPED]",
        ),
        (
            json!({"name": "ok", "tags": []}),
            "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items",
        ),
        (
            json!({"name": "ok", "tags": ["a", "b", "c"]}),
            "spec.tags: Too many: 3: must have at most 2 items",
        ),
        (json!({"replicas": 2}), "spec.name: Required value"),
        (
            json!({"name": "ok", "replicas": 1, "minReplicas": 1, "ratio": 0.5, "step": 5, "mode": "fast", "level": 1}),
            "spec: Too many: 7: must have at most 6 items",
        ),
    ];
    for (i, (spec, want)) in cases.into_iter().enumerate() {
        let got = message(create(&c, &format!("g{i}"), spec));
        let want = want.replace("SKIPPED", SKIPPED_RULES);
        assert_eq!(
            got,
            format!("Gadget.example.com \"g{i}\" is invalid: {want}")
        );
    }
    // int32/int64 formats are not range-checked by kube-apiserver either.
    create(
        &c,
        "gbig",
        json!({"name": "ok", "count32": 9_999_999_999_i64}),
    )
    .unwrap();
    // Several causes are listed together.
    let e = create(
        &c,
        "gmany",
        json!({"name": "ok", "replicas": 11, "mode": "x"}),
    )
    .unwrap_err();
    // Two structural causes, and the note that the CEL rules were skipped (the enum value).
    assert_eq!(e.causes.len(), 3);
    assert_eq!(e.causes[2].field, "<nil>");
    assert!(e.message.contains("is invalid: [spec."), "{}", e.message);
    assert!(
        e.message.contains("spec.replicas: Invalid value: 11"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("spec.mode: Unsupported value: \"x\""),
        "{}",
        e.message
    );
}

#[test]
fn cel_rules_messages_field_paths_reasons_and_transition_rules() {
    let c = cluster();
    // Root rule with a message.
    let got = message(create(&c, "other", json!({"name": "ok"})));
    assert_eq!(
        got,
        "Gadget.example.com \"other\" is invalid: <nil>: Invalid value: \"object\": name must start with g"
    );
    // messageExpression, reported at fieldPath.
    let got = message(create(
        &c,
        "gcel",
        json!({"name": "ok", "replicas": 2, "minReplicas": 3}),
    ));
    assert_eq!(
        got,
        "Gadget.example.com \"gcel\" is invalid: spec.replicas: Invalid value: \"object\": replicas 2 is below 3"
    );
    let e = create(
        &c,
        "gcel",
        json!({"name": "ok", "replicas": 2, "minReplicas": 3}),
    )
    .unwrap_err();
    assert_eq!(e.causes[0].reason, "FieldValueInvalid");
    assert_eq!(e.causes[0].field, "spec.replicas");

    // A transition rule runs on update only, with the reason it names.
    create(&c, "gt", json!({"name": "first"})).unwrap();
    let e = c
        .store()
        .update(
            &gvr(),
            "default",
            "gt",
            gadget("gt", json!({"name": "second"})),
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        "Gadget.example.com \"gt\" is invalid: spec: Forbidden: name is immutable"
    );
    assert_eq!(e.causes[0].reason, "FieldValueForbidden");
    c.store()
        .update(
            &gvr(),
            "default",
            "gt",
            gadget("gt", json!({"name": "first", "replicas": 4})),
            &WriteOptions::default(),
        )
        .unwrap();
}

#[test]
fn unchanged_invalid_values_ratchet_on_update() {
    let c = FakeCluster::new();
    // A loose schema first, then a tighter one: the stored object becomes invalid.
    c.apply_yaml(&CRD.replace("maximum: 10}", "maximum: 100}"))
        .unwrap();
    create(&c, "gold", json!({"name": "ok", "replicas": 50})).unwrap();
    c.apply_yaml(CRD).unwrap();
    // Changing another field is fine: the out-of-range replicas did not change.
    c.store()
        .update(
            &gvr(),
            "default",
            "gold",
            gadget(
                "gold",
                json!({"name": "ok", "replicas": 50, "mode": "slow"}),
            ),
            &WriteOptions::default(),
        )
        .unwrap();
    // Changing replicas to another out-of-range value is refused.
    let got = message(c.store().update(
        &gvr(),
        "default",
        "gold",
        gadget(
            "gold",
            json!({"name": "ok", "replicas": 60, "mode": "slow"}),
        ),
        &WriteOptions::default(),
    ));
    assert!(
        got.contains("spec.replicas in body should be less than or equal to 10"),
        "{got}"
    );
}
