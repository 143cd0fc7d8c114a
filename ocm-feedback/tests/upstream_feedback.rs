//! Upstream OCM's status feedback cases (`pkg/work/spoke/statusfeedback/reader_test.go`, the
//! status controller's feedback cases, and the integration examples), plus the value-typing
//! and message rules of the spec (§5).

use ocm_api::conditions::ConditionStatus;
use ocm_api::work::v1::{FeedbackRule, FeedbackValue, FieldValue, JsonPath};
use ocm_feedback::{
    CompiledRules, Error, Feedback, FeedbackPath, FeedbackReader, FeedbackTracker,
    WellKnownStatusTable, values_changed,
};
use serde_json::{Value, json};

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "test"},
        "status": {"readyReplicas": 1, "replicas": 2,
                   "conditions": [{"type": "Available", "status": "true"}]}
    })
}

fn deployment_multi_condition() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "test"},
        "status": {"readyReplicas": 1, "replicas": 2, "conditions": [
            {"type": "Cond1", "status": "true"},
            {"type": "Cond2", "status": "false"},
            {"type": "Cond3", "status": "true"}
        ]}
    })
}

fn deployment_unknown_group() -> Value {
    json!({
        "apiVersion": "extensions/v1", "kind": "Deployment", "metadata": {"name": "test"},
        "status": {"readyReplicas": 1, "replicas": 2, "conditions": [
            {"type": "Available", "status": "true"}, {"type": "Ready", "status": "true"}
        ]}
    })
}

fn job() -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "test"},
        "status": {"conditions": [{"status": "True", "type": "Complete"}], "succeeded": 1}
    })
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test"},
        "status": {"conditions": [{"status": "False", "type": "Ready"}], "phase": "Succeeded"}
    })
}

fn value(name: &str, field_value: FieldValue) -> FeedbackValue {
    FeedbackValue {
        name: name.into(),
        field_value,
    }
}

fn path(name: &str, p: &str) -> JsonPath {
    JsonPath::new(name, p)
}

/// The reader of upstream's unit test: maximum `JsonRaw` length 40.
fn reader(raw: bool) -> FeedbackReader<'static> {
    FeedbackReader::new()
        .max_json_raw_length(40)
        .raw_json_string(raw)
}

fn by_rule(raw: bool, object: &Value, rule: FeedbackRule) -> (Vec<FeedbackValue>, Vec<Error>) {
    reader(raw).values_by_rule(object, &rule)
}

#[test]
fn deployment_values() {
    let (values, errors) = by_rule(false, &deployment(), FeedbackRule::well_known_status());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![
            value("ReadyReplicas", FieldValue::integer(1)),
            value("Replicas", FieldValue::integer(2)),
        ]
    );
}

#[test]
fn deployment_jsonpaths_with_trailing_space() {
    let rule = FeedbackRule::json_paths([path(
        "available",
        r#".status.conditions[?(@.type=="Available")].status "#,
    )]);
    let (values, errors) = by_rule(false, &deployment(), rule);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(values, vec![value("available", FieldValue::string("true"))]);
}

#[test]
fn wrong_return_type_keeps_other_values() {
    let rule = FeedbackRule::json_paths([
        path("available", ".status.conditions"),
        path("replicas", ".status.replicas"),
    ]);
    let (values, errors) = by_rule(false, &deployment(), rule);
    assert_eq!(values, vec![value("replicas", FieldValue::integer(2))]);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "the type []interface {} of the value for available is not found"
    );
}

#[test]
fn mismatched_gvk() {
    let (values, errors) = by_rule(
        false,
        &deployment_unknown_group(),
        FeedbackRule::well_known_status(),
    );
    assert!(values.is_empty());
    assert_eq!(
        errors[0].to_string(),
        "cannot find the wellknown statuses for resource with gvk extensions/v1, Kind=Deployment"
    );
}

#[test]
fn wrong_version_set_for_jsonpaths() {
    let mut conditions = path("available", ".status.conditions");
    conditions.version = Some("v1beta1".into());
    let rule = FeedbackRule::json_paths([conditions, path("replicas", ".status.replicas")]);
    let (values, errors) = by_rule(false, &deployment(), rule);
    assert_eq!(values, vec![value("replicas", FieldValue::integer(2))]);
    assert_eq!(
        errors[0].to_string(),
        "version set in the path available is not matched for the related resource"
    );
}

#[test]
fn matching_version_and_empty_version_are_accepted() {
    let mut v1 = path("replicas", ".status.replicas");
    v1.version = Some("v1".into());
    let mut empty = path("ready", ".status.readyReplicas");
    empty.version = Some(String::new());
    let (values, errors) = by_rule(false, &deployment(), FeedbackRule::json_paths([v1, empty]));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(values.len(), 2);
}

#[test]
fn job_values() {
    let (values, errors) = by_rule(false, &job(), FeedbackRule::well_known_status());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![
            value("JobComplete", FieldValue::string("True")),
            value("JobSucceeded", FieldValue::integer(1)),
        ]
    );
}

#[test]
fn pod_values() {
    let (values, errors) = by_rule(false, &pod(), FeedbackRule::well_known_status());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![
            value("PodReady", FieldValue::string("False")),
            value("PodPhase", FieldValue::string("Succeeded")),
        ]
    );
}

#[test]
fn daemonset_values() {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
                    "status": {"numberReady": 2, "desiredNumberScheduled": 3, "numberAvailable": 1}});
    let (values, errors) = by_rule(false, &ds, FeedbackRule::well_known_status());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![
            value("NumberReady", FieldValue::integer(2)),
            value("DesiredNumberScheduled", FieldValue::integer(3)),
            value("NumberAvailable", FieldValue::integer(1)),
        ]
    );
}

#[test]
fn first_item_of_multiple_matches_when_raw_is_off() {
    let rule = FeedbackRule::json_paths([path(
        "type",
        r#".status.conditions[?(@.status=="true")].type "#,
    )]);
    let (values, errors) = by_rule(false, &deployment(), rule.clone());
    assert!(errors.is_empty());
    assert_eq!(values, vec![value("type", FieldValue::string("Available"))]);
    let (values, _) = by_rule(false, &deployment_multi_condition(), rule);
    assert_eq!(values, vec![value("type", FieldValue::string("Cond1"))]);
}

#[test]
fn raw_json_value_format() {
    let rule = FeedbackRule::json_paths([path("conditions", ".status.conditions")]);
    let (values, errors) = by_rule(true, &pod(), rule);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![value(
            "conditions",
            FieldValue::json_raw(r#"[{"status":"False","type":"Ready"}]"#)
        )]
    );
}

#[test]
fn raw_json_value_exceeding_max_length() {
    let rule = FeedbackRule::json_paths([path("status", ".status")]);
    let (values, errors) = by_rule(true, &pod(), rule);
    assert!(values.is_empty());
    assert_eq!(
        errors[0].to_string(),
        "the length of returned json raw string for name status is larger than the maximum length 40"
    );
}

#[test]
fn filtered_raw_json_value_lists_all_matches() {
    let rule = FeedbackRule::json_paths([path(
        "conditions",
        r#".status.conditions[?(@.status=="true")].type"#,
    )]);
    let (values, errors) = by_rule(true, &deployment_multi_condition(), rule);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values,
        vec![value(
            "conditions",
            FieldValue::json_raw(r#"["Cond1","Cond3"]"#)
        )]
    );
}

#[test]
fn integration_raw_json_example() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "status": {"conditions": [{"type": "Available", "status": "True",
                                   "lastTransitionTime": null, "lastUpdateTime": null}]}});
    let rule = FeedbackRule::json_paths([path("conditions", ".status.conditions")]);
    let (values, errors) = FeedbackReader::new()
        .raw_json_string(true)
        .values_by_rule(&deploy, &rule);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        values[0].field_value,
        FieldValue::json_raw(
            r#"[{"lastTransitionTime":null,"lastUpdateTime":null,"status":"True","type":"Available"}]"#
        )
    );
}

#[test]
fn status_controller_no_rules() {
    let feedback = FeedbackReader::new().read(&deployment(), &[]);
    assert!(feedback.values().is_empty());
    let condition = feedback.condition();
    assert_eq!(condition.type_, "StatusFeedbackSynced");
    assert_eq!(condition.status, ConditionStatus::True);
    assert_eq!(condition.reason, "NoStatusFeedbackSynced");
    assert_eq!(condition.message, "");
    assert_eq!(feedback, Feedback::no_rules());
    assert_eq!(feedback.to_result().values, None);
}

#[test]
fn status_controller_well_known_deployment() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "deploy1", "namespace": "ns1"},
        "status": {"readyReplicas": 2, "replicas": 3, "availableReplicas": 2}});
    let feedback = FeedbackReader::new().read(&deploy, &[FeedbackRule::well_known_status()]);
    assert_eq!(
        feedback.values(),
        &[
            value("ReadyReplicas", FieldValue::integer(2)),
            value("Replicas", FieldValue::integer(3)),
            value("AvailableReplicas", FieldValue::integer(2)),
        ]
    );
    let condition = feedback.condition();
    assert_eq!(condition.status, ConditionStatus::True);
    assert_eq!(condition.reason, "StatusFeedbackSynced");
    assert_eq!(condition.message, "");
}

#[test]
fn status_controller_wrong_json_path_keeps_partial_values() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "deploy1", "namespace": "ns1"},
        "status": {"replicas": 3, "conditions": {"status": "True"}}});
    let rules = [
        FeedbackRule::well_known_status(),
        FeedbackRule::json_paths([path("condition", ".status.conditions")]),
    ];
    let feedback = FeedbackReader::new().read(&deploy, &rules);
    assert_eq!(
        feedback.values(),
        &[value("Replicas", FieldValue::integer(3))]
    );
    let condition = feedback.condition();
    assert_eq!(condition.status, ConditionStatus::False);
    assert_eq!(condition.reason, "StatusFeedbackSyncFailed");
    assert_eq!(
        condition.message,
        "Sync status feedback failed with error the type map[string]interface {} of the value for condition is not found"
    );
}

#[test]
fn service_account_with_well_known_status_fails() {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}});
    let feedback = FeedbackReader::new().read(&sa, &[FeedbackRule::well_known_status()]);
    assert!(!feedback.is_synced());
    assert_eq!(
        feedback.condition().message,
        "Sync status feedback failed with error cannot find the wellknown statuses for resource with gvk /v1, Kind=ServiceAccount"
    );
}

#[test]
fn aggregate_messages_follow_kubernetes() {
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                     "status": {"f": 1.5, "list": []}});
    // Two errors in one rule: bracketed.
    let two = [FeedbackRule::json_paths([
        path("a", ".status.f"),
        path("b", ".status.list[0]"),
    ])];
    let feedback = FeedbackReader::new().read(&obj, &two);
    assert_eq!(
        feedback.error_message().as_deref(),
        Some(
            "[the type float64 of the value for a is not found, failed to find value for b with error: array index out of bounds: index 0, length 0]"
        )
    );
    // The same text twice: once, without brackets.
    let same = [
        FeedbackRule::json_paths([path("a", ".status.f")]),
        FeedbackRule::json_paths([path("a", ".status.f")]),
    ];
    let feedback = FeedbackReader::new().read(&obj, &same);
    assert_eq!(
        feedback.error_message().as_deref(),
        Some("the type float64 of the value for a is not found")
    );
    // Errors of several rules are flattened.
    let across = [
        FeedbackRule::json_paths([path("a", ".status.f"), path("a", ".status.f")]),
        FeedbackRule::json_paths([path("c", ".status[")]),
    ];
    let feedback = FeedbackReader::new().read(&obj, &across);
    assert_eq!(
        feedback.error_message().as_deref(),
        Some(
            "[the type float64 of the value for a is not found, failed to parse json path .status[ of c with error: unterminated array]"
        )
    );
    assert_eq!(feedback.errors().count(), 3);
}

#[test]
fn typing_rules() {
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
        "spec": {"int": 7, "neg": -3, "float": 1.5, "whole": 2.0, "exp": 1e3, "huge": 18446744073709551615u64,
                 "s": "x", "b": false, "n": null, "m": {"b": 1, "a": "<&>"}, "l": [1, "two", null]}});
    let read = |raw: bool, p: &str| {
        FeedbackPath::new("v", p).evaluate(
            &obj,
            ocm_feedback::ValueOptions::default()
                .raw_json_string(raw)
                .max_json_raw_length(1024),
        )
    };
    assert_eq!(read(false, ".spec.int"), Ok(Some(FieldValue::integer(7))));
    assert_eq!(read(false, ".spec.neg"), Ok(Some(FieldValue::integer(-3))));
    assert_eq!(read(false, ".spec.s"), Ok(Some(FieldValue::string("x"))));
    assert_eq!(read(false, ".spec.b"), Ok(Some(FieldValue::boolean(false))));
    assert_eq!(read(false, ".spec.n"), Ok(None));
    assert_eq!(read(false, ".spec.missing"), Ok(None));
    assert_eq!(read(false, ".spec.l[2]"), Ok(None));
    for (p, go_type) in [
        (".spec.float", "float64"),
        (".spec.whole", "float64"),
        (".spec.exp", "float64"),
        (".spec.huge", "float64"),
        (".spec.m", "map[string]interface {}"),
        (".spec.l", "[]interface {}"),
        ("1", "int"),
    ] {
        assert_eq!(
            read(false, p).unwrap_err().to_string(),
            format!("the type {go_type} of the value for v is not found"),
            "{p}"
        );
    }
    // With the gate: Go's JSON encoding.
    assert_eq!(
        read(true, ".spec.float"),
        Ok(Some(FieldValue::json_raw("1.5")))
    );
    assert_eq!(
        read(true, ".spec.whole"),
        Ok(Some(FieldValue::json_raw("2")))
    );
    assert_eq!(
        read(true, ".spec.exp"),
        Ok(Some(FieldValue::json_raw("1000")))
    );
    assert_eq!(
        read(true, ".spec.huge"),
        Ok(Some(FieldValue::json_raw("18446744073709552000")))
    );
    assert_eq!(
        read(true, ".spec.m"),
        Ok(Some(FieldValue::json_raw(
            r#"{"a":"\u003c\u0026\u003e","b":1}"#
        )))
    );
    assert_eq!(
        read(true, ".spec.l"),
        Ok(Some(FieldValue::json_raw(r#"[1,"two",null]"#)))
    );
    // Several matches, gate on: the list, even when it holds one null.
    assert_eq!(
        read(true, ".spec.l[*]"),
        Ok(Some(FieldValue::json_raw(r#"[1,"two",null]"#)))
    );
    // A single string match stays a string with the gate on.
    assert_eq!(
        read(true, ".spec.l[1]"),
        Ok(Some(FieldValue::string("two")))
    );
    // Literals: a quoted string is a string, `true` a boolean.
    assert_eq!(read(false, r#""lit""#), Ok(Some(FieldValue::string("lit"))));
    assert_eq!(read(false, "true"), Ok(Some(FieldValue::boolean(true))));
}

#[test]
fn evaluation_and_parse_errors_use_upstream_words() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "status": {"conditions": []}});
    let read = |p: &str| {
        FeedbackPath::new("x", p)
            .evaluate(&obj, ocm_feedback::ValueOptions::default())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        read(".status.conditions[0].type"),
        "failed to find value for x with error: array index out of bounds: index 0, length 0"
    );
    assert_eq!(
        read(".metadata[?(@.a)]"),
        "failed to find value for x with error: map[name:p] is not array or slice and cannot be filtered"
    );
    assert_eq!(
        read(".metadata.name[0]"),
        "failed to find value for x with error: string is not array or slice"
    );
    assert_eq!(
        read(r#".status.conditions[?(@.type=="a" && @.status=="b")]"#),
        r#"failed to parse json path .status.conditions[?(@.type=="a" && @.status=="b")] of x with error: unrecognized character in action: U+0026 '&'"#
    );
    assert_eq!(
        read(".status{"),
        "failed to parse json path .status{ of x with error: unrecognized character in action: U+007B '{'"
    );
    // `}{` inside a path starts a second action; only the first one's values count.
    assert_eq!(
        read(".status.conditions}{.metadata.name"),
        "the type []interface {} of the value for x is not found"
    );
}

#[test]
fn parse_errors_carry_position_in_the_path() {
    let p = FeedbackPath::new("x", r#".a[?(@.b=="c" && @.d)]"#);
    let err = p.template().unwrap_err();
    assert_eq!(err.position(), 14);
    assert_eq!(err.token(), "&");
    assert!(err.to_string().contains("at byte 14"), "{err}");
}

#[test]
fn missing_keys_and_empty_results_give_no_value() {
    let feedback = FeedbackReader::new().read(
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
        &[FeedbackRule::well_known_status()],
    );
    assert!(feedback.values().is_empty());
    assert!(feedback.is_synced());
    assert_eq!(feedback.condition().reason, "StatusFeedbackSynced");
}

#[test]
fn duplicate_names_are_kept() {
    let rules = [
        FeedbackRule::well_known_status(),
        FeedbackRule::json_paths([path("Replicas", ".spec.replicas")]),
    ];
    let mut deploy = deployment();
    deploy["spec"] = json!({"replicas": 5});
    let feedback = FeedbackReader::new().read(&deploy, &rules);
    let names: Vec<_> = feedback.values().iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["ReadyReplicas", "Replicas", "Replicas"]);
}

#[test]
fn compiled_rules_equal_one_shot_reads() {
    let rules = [
        FeedbackRule::well_known_status(),
        FeedbackRule::json_paths([
            path("bad", ".status["),
            path(
                "avail",
                r#".status.conditions[?(@.type=="Available")].status"#,
            ),
        ]),
    ];
    let compiled = CompiledRules::new(&rules);
    let reader = FeedbackReader::new();
    for object in [deployment(), deployment_multi_condition(), job(), pod()] {
        assert_eq!(
            reader.read(&object, &rules),
            reader.read_compiled(&object, &compiled)
        );
    }
}

#[test]
fn extended_well_known_table() {
    let mut table = WellKnownStatusTable::upstream();
    table.insert(
        "apps",
        "v1",
        "StatefulSet",
        vec![FeedbackPath::new("ReadyReplicas", ".status.readyReplicas")],
    );
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                     "status": {"readyReplicas": 4}});
    // Upstream does not know StatefulSets.
    assert!(
        !FeedbackReader::new()
            .read(&sts, &[FeedbackRule::well_known_status()])
            .is_synced()
    );
    let feedback = FeedbackReader::new()
        .with_well_known(&table)
        .read(&sts, &[FeedbackRule::well_known_status()]);
    assert_eq!(
        feedback.values(),
        &[value("ReadyReplicas", FieldValue::integer(4))]
    );
}

#[test]
fn tracker_reports_only_changes() {
    let ready = |n| vec![value("ReadyReplicas", FieldValue::integer(n))];
    assert!(!values_changed(None, &[]));
    assert!(!values_changed(Some(&[]), &[]));
    assert!(values_changed(None, &ready(1)));
    assert!(!values_changed(Some(&ready(1)), &ready(1)));

    let mut tracker = FeedbackTracker::<String>::new();
    assert_eq!(tracker.record("w/0", ready(2)), Some(ready(2).as_slice()));
    assert_eq!(tracker.record("w/0", ready(2)), None);
    assert_eq!(tracker.record("w/0", ready(3)), Some(ready(3).as_slice()));
    assert_eq!(tracker.recorded("w/0"), Some(ready(3).as_slice()));
    // Going back to no values is a change; staying there is not.
    assert_eq!(tracker.record("w/0", vec![]), Some(&[][..]));
    assert_eq!(tracker.record("w/0", vec![]), None);
    assert!(tracker.is_empty());
    // Seeding from an existing status suppresses the first report.
    tracker.seed("w/1".to_owned(), ready(1));
    assert_eq!(tracker.record("w/1", ready(1)), None);
    assert_eq!(tracker.len(), 1);
    assert_eq!(tracker.forget("w/1"), Some(ready(1)));
    // Order matters, as in upstream's deep comparison.
    let two = vec![
        value("a", FieldValue::integer(1)),
        value("b", FieldValue::integer(2)),
    ];
    let swapped = vec![two[1].clone(), two[0].clone()];
    tracker.seed("w/2".to_owned(), two);
    assert!(tracker.record("w/2", swapped).is_some());
}

#[test]
fn value_change_refreshes_the_condition_transition_time() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use ocm_api::work::v1::ManifestCondition;

    let t0 = Time("2026-01-01T00:00:00Z".parse().unwrap());
    let t1 = Time("2026-01-01T00:05:00Z".parse().unwrap());
    let t2 = Time("2026-01-01T00:10:00Z".parse().unwrap());
    let mut manifest: ManifestCondition = serde_json::from_value(json!({
        "resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                         "resource": "deployments", "name": "deploy1", "namespace": "ns1"},
        "conditions": []
    }))
    .unwrap();
    let reader = FeedbackReader::new();
    let rules = CompiledRules::new(&[FeedbackRule::well_known_status()]);
    let deploy = |ready: i64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "deploy1"},
               "status": {"readyReplicas": ready, "replicas": 3, "availableReplicas": ready}})
    };

    assert!(
        reader
            .read_compiled(&deploy(2), &rules)
            .apply_to(&mut manifest, &t0)
    );
    let synced = |m: &ManifestCondition| {
        m.conditions
            .iter()
            .find(|c| c.type_ == "StatusFeedbackSynced")
            .cloned()
            .unwrap()
    };
    assert_eq!(synced(&manifest).last_transition_time, t0);
    assert_eq!(synced(&manifest).reason, "StatusFeedbackSynced");

    // Same values: nothing changes, the transition time stays.
    assert!(
        !reader
            .read_compiled(&deploy(2), &rules)
            .apply_to(&mut manifest, &t1)
    );
    assert_eq!(synced(&manifest).last_transition_time, t0);

    // New values: the condition is re-added with a fresh transition time.
    assert!(
        reader
            .read_compiled(&deploy(3), &rules)
            .apply_to(&mut manifest, &t2)
    );
    assert_eq!(synced(&manifest).last_transition_time, t2);
    assert_eq!(
        manifest
            .status_feedbacks
            .as_ref()
            .unwrap()
            .get("ReadyReplicas"),
        Some(&FieldValue::integer(3))
    );
}
