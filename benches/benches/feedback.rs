//! Status feedback benchmarks (run with `cargo bench -p ocm-benches --bench feedback`).
//!
//! Targets (release, one core): a compiled `.status.readyReplicas` on a Deployment at 2 million
//! evaluations per second or more (< 500 ns each); the full `WellKnownStatus` rule set for a
//! Deployment (values typed, condition built) < 2 µs; a filter expression on a list of 20
//! conditions < 1 µs.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ocm_api::work::v1::{FeedbackRule, JsonPath};
use ocm_feedback::jsonpath::Template;
use ocm_feedback::{CompiledRules, FeedbackReader, FeedbackTracker};
use serde_json::Value;

fn object(text: &str) -> Value {
    serde_json::from_str(text).expect("corpus object")
}

fn deployment() -> Value {
    object(include_str!(
        "../../ocm-feedback/tests/corpus/deployment.json"
    ))
}

fn deployment_with_20_conditions() -> Value {
    object(include_str!(
        "../../ocm-feedback/tests/corpus/deployment20.json"
    ))
}

fn jsonpath(c: &mut Criterion) {
    let deploy = deployment();
    let ready = Template::parse_path(".status.readyReplicas").expect("path");
    c.bench_function(
        "jsonpath/compiled .status.readyReplicas (find_results)",
        |b| {
            b.iter(|| {
                black_box(&ready)
                    .find_results(black_box(&deploy))
                    .map(|r| r.len())
            })
        },
    );
    c.bench_function("jsonpath/compiled .status.readyReplicas (execute)", |b| {
        b.iter(|| black_box(&ready).execute(black_box(&deploy)))
    });

    let many = deployment_with_20_conditions();
    let filter =
        Template::parse_path(r#".status.conditions[?(@.type=="Available")].status"#).expect("path");
    assert_eq!(filter.execute(&many).expect("filter"), "True");
    c.bench_function("jsonpath/filter on 20 conditions (find_results)", |b| {
        b.iter(|| {
            black_box(&filter)
                .find_results(black_box(&many))
                .map(|r| r.len())
        })
    });

    let index = Template::parse_path(".status.conditions[19].status").expect("path");
    c.bench_function("jsonpath/index into 20 conditions (find_results)", |b| {
        b.iter(|| {
            black_box(&index)
                .find_results(black_box(&many))
                .map(|r| r.len())
        })
    });

    c.bench_function("jsonpath/parse filter path", |b| {
        b.iter(|| {
            Template::parse_path(black_box(
                r#".status.conditions[?(@.type=="Available")].status"#,
            ))
        })
    });
}

fn rules(c: &mut Criterion) {
    let deploy = deployment();
    let reader = FeedbackReader::new();
    let well_known = CompiledRules::new(&[FeedbackRule::well_known_status()]);
    assert_eq!(reader.read_compiled(&deploy, &well_known).values().len(), 3);
    c.bench_function(
        "rules/WellKnownStatus Deployment (values + condition)",
        |b| {
            b.iter(|| {
                let feedback = reader.read_compiled(black_box(&deploy), black_box(&well_known));
                black_box(feedback.condition());
                feedback
            })
        },
    );

    let many = deployment_with_20_conditions();
    let mixed = CompiledRules::new(&[
        FeedbackRule::well_known_status(),
        FeedbackRule::json_paths([
            JsonPath::new(
                "available",
                r#".status.conditions[?(@.type=="Available")].status"#,
            ),
            JsonPath::new("app", r".metadata.labels.app\.kubernetes\.io/name"),
        ]),
    ]);
    c.bench_function("rules/WellKnownStatus + 2 JSONPaths, 20 conditions", |b| {
        b.iter(|| reader.read_compiled(black_box(&many), black_box(&mixed)))
    });

    let values = reader.read_compiled(&deploy, &well_known).values().to_vec();
    let mut tracker = FeedbackTracker::<String>::new();
    tracker.seed("cluster1/work/0".to_owned(), values.clone());
    c.bench_function("tracker/unchanged values", |b| {
        b.iter(|| {
            tracker
                .record(black_box("cluster1/work/0"), black_box(values.clone()))
                .is_some()
        })
    });
}

criterion_group!(benches, jsonpath, rules);
criterion_main!(benches);
