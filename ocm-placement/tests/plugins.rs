//! Spec §16.5 and §16.6: plugin tests (predicate, taint toleration, balance, steady,
//! resource, addon) and the CEL/cluster-matching helpers, through the scheduler.

use crate::common;

use common::*;
use ocm_placement::{Outcome, Scheduler, StatusCode};
use serde_json::{Value, json};

fn predicate_clusters() -> Vec<ClusterB> {
    vec![
        member("cluster1")
            .label("cloud", "Amazon")
            .label("region", "us-east-1")
            .claim("cloud", "Amazon"),
        member("cluster2")
            .label("cloud", "Azure")
            .claim("region", "us-east-1")
            .claim("cloud", "Azure"),
        member("cluster3")
            .label("cloud", "Google")
            .claim("cloud", "Google"),
    ]
}

fn run_predicates(predicates: Value) -> (Vec<String>, StatusCode, String) {
    let snap = hub(&predicate_clusters())
        .addon_score(&addon_score(
            "cluster1",
            "test-addon",
            &[("test-score", 90)],
            None,
        ))
        .addon_score(&addon_score(
            "cluster2",
            "test-addon",
            &[("test-score", 70)],
            None,
        ))
        .build();
    let r = schedule(&placement("p", json!({"predicates": predicates})), &snap);
    (selected_set(&r), r.status.code, r.status.message.clone())
}

fn sel(label: Value) -> Value {
    json!({"requiredClusterSelector": label})
}

#[test]
fn predicate_match_with_label_claim_both_and_or() {
    let ok = |p: Value| run_predicates(p).0;
    assert_eq!(
        ok(json!([sel(
            json!({"labelSelector": {"matchLabels": {"cloud": "Amazon"}}})
        )])),
        ["cluster1"]
    );
    assert_eq!(
        ok(json!([sel(
            json!({"claimSelector": {"matchExpressions": [{"key": "cloud", "operator": "In", "values": ["Amazon"]}]}})
        )])),
        ["cluster1"]
    );
    // Both parts of one selector are ANDed.
    assert_eq!(
        ok(json!([sel(
            json!({"labelSelector": {"matchLabels": {"cloud": "Amazon"}},
            "claimSelector": {"matchExpressions": [{"key": "cloud", "operator": "In", "values": ["Azure"]}]}})
        )])),
        Vec::<String>::new()
    );
    // Predicates are ORed.
    assert_eq!(
        ok(json!([
            sel(json!({"labelSelector": {"matchLabels": {"cloud": "Amazon"}}})),
            sel(
                json!({"claimSelector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["us-east-1"]}]}})
            )
        ])),
        ["cluster1", "cluster2"]
    );
    // Claim NotIn matches when the claim is absent.
    assert_eq!(
        ok(json!([sel(
            json!({"claimSelector": {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["us-east-1"]}]}})
        )])),
        ["cluster1", "cluster3"]
    );
    // A predicate without requiredClusterSelector matches everything.
    assert_eq!(ok(json!([{}])), ["cluster1", "cluster2", "cluster3"]);
}

#[test]
fn predicate_cel_expressions() {
    let cel = |exprs: Value| {
        run_predicates(json!([sel(
            json!({"celSelector": {"celExpressions": exprs}})
        )]))
    };
    assert_eq!(
        cel(json!([
            "managedCluster.metadata.labels[\"region\"] == \"us-east-1\""
        ]))
        .0,
        ["cluster1"]
    );
    assert_eq!(
        cel(json!(["managedCluster.status.clusterClaims.exists(c, c.name == \"cloud\" && c.value == \"Amazon\")"])).0,
        ["cluster1"]
    );
    assert_eq!(
        cel(json!(["managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)"])).0,
        ["cluster1"]
    );
    assert_eq!(
        cel(json!([
            "managedCluster.metadata.name.startsWith('cluster')",
            "managedCluster.metadata.labels['cloud'] != 'Google'"
        ]))
        .0,
        ["cluster1", "cluster2"]
    );
    // CEL with other selectors.
    let (s, _, _) = run_predicates(json!([sel(json!({
        "labelSelector": {"matchLabels": {"cloud": "Azure"}},
        "celSelector": {"celExpressions": ["managedCluster.metadata.name == 'cluster2'"]}}))]));
    assert_eq!(s, ["cluster2"]);
    // Invalid expression: Misconfigured, nothing selected.
    let (s, code, message) = cel(json!(["invalid.expression"]));
    assert!(s.is_empty());
    assert_eq!(code, StatusCode::Misconfigured);
    assert!(message.starts_with("compilation failed: "), "{message}");
    // Empty expression list matches.
    assert_eq!(cel(json!([])).0, ["cluster1", "cluster2", "cluster3"]);
}

#[test]
fn predicate_cel_kubernetes_libraries() {
    let clusters = vec![
        member("cluster1")
            .label("version", "1.29.4")
            .claim("ip", "10.0.3.7"),
        member("cluster2")
            .label("version", "1.31.0")
            .claim("ip", "192.168.1.2"),
        member("cluster3").label("version", "not-a-version"),
    ];
    let snap = hub(&clusters).build();
    let run = |exprs: Value| {
        let p = placement(
            "p",
            json!({"predicates": [sel(json!({"celSelector": {"celExpressions": exprs}}))]}),
        );
        let r = schedule(&p, &snap);
        assert_eq!(r.status.code, StatusCode::Success);
        selected_set(&r)
    };
    // A version that does not parse is an evaluation error: no match, not misconfigured.
    assert_eq!(
        run(json!([
            "semver(managedCluster.metadata.labels['version']).isGreaterThan(semver('1.30.0'))"
        ])),
        ["cluster2"]
    );
    assert_eq!(
        run(json!([
            "managedCluster.status.clusterClaims.exists(c, c.name == 'ip' && cidr('10.0.0.0/16').containsIP(c.value))"
        ])),
        ["cluster1"]
    );
    assert_eq!(
        run(json!([
            "quantity('64Gi').isGreaterThan(quantity('60G'))",
            "[3, 1].max() == 3"
        ])),
        ["cluster1", "cluster2", "cluster3"]
    );
}

#[test]
fn predicate_cel_url_and_format_libraries() {
    let clusters = vec![
        member("cluster1")
            .label("version", "1.29.4")
            .claim("apiserver", "https://api.c1.example.com:6443/"),
        member("cluster2")
            .label("version", "1.31.0")
            .claim("apiserver", "api.c2.example.com"),
        member("cluster3").label("version", "not-a-version"),
    ];
    let snap = hub(&clusters).build();
    let run = |exprs: Value| {
        let p = placement(
            "p",
            json!({"predicates": [sel(json!({"celSelector": {"celExpressions": exprs}}))]}),
        );
        let r = schedule(&p, &snap);
        assert_eq!(r.status.code, StatusCode::Success, "{}", r.status.message);
        selected_set(&r)
    };
    // cluster2's claim is neither an absolute URI nor an absolute path: `url()` fails, so no
    // match. (With a port, `api.c2.example.com:6443`, Go would read a scheme and accept it.)
    assert_eq!(
        run(json!([
            "managedCluster.status.clusterClaims.exists(c, c.name == 'apiserver' && url(c.value).getPort() == '6443')"
        ])),
        ["cluster1"]
    );
    assert_eq!(
        run(json!([
            "managedCluster.status.clusterClaims.exists(c, c.name == 'apiserver' && !isURL(c.value))"
        ])),
        ["cluster2"]
    );
    assert_eq!(
        run(json!([
            "!format.dns1035Label().validate(managedCluster.metadata.labels['version']).hasValue()"
        ])),
        ["cluster3"]
    );
    assert_eq!(
        run(json!([
            "format.named('dns1123Subdomain').value().validate(managedCluster.metadata.labels['version']) == optional.none()",
            "'%s-%d'.format([managedCluster.metadata.name, 2]) == 'cluster2-2'"
        ])),
        ["cluster2"]
    );
}

#[test]
fn predicate_errors_are_misconfigured_but_not_without_candidates() {
    let bad = json!([sel(
        json!({"labelSelector": {"matchExpressions": [{"key": "k", "operator": "In"}]}})
    )]);
    let (_, code, message) = run_predicates(bad.clone());
    assert_eq!(code, StatusCode::Misconfigured);
    assert!(message.contains("values set can't be empty"), "{message}");
    // No candidate clusters: nothing is validated.
    let r = schedule(
        &placement("p", json!({"predicates": bad})),
        &hub(&[]).build(),
    );
    assert_eq!(r.status.code, StatusCode::Success);
    // Bad toleration with no survivors: not validated either.
    let p = placement(
        "p",
        json!({
        "predicates": [sel(json!({"labelSelector": {"matchLabels": {"none": "x"}}}))],
        "tolerations": [{"operator": "Equal"}]}),
    );
    let r = schedule(&p, &hub(&predicate_clusters()).build());
    assert_eq!(r.status.code, StatusCode::Success);
}

#[test]
fn toleration_seconds_requeue() {
    let c = |n: &str, added: i64| {
        member(n).taint("key1", "value1", "NoSelect", Some(secs(now(), added)))
    };
    let clusters = [c("cluster1", -8), c("cluster2", -9), c("cluster3", -10)];
    let p = placement(
        "p",
        json!({"tolerations": [{"key": "key1", "operator": "Exists", "tolerationSeconds": 10}]}),
    );
    // No decisions yet: the first two are kept, no requeue.
    let r = schedule(&p, &hub(&clusters).build());
    assert_eq!(selected_set(&r), ["cluster1", "cluster2"]);
    assert_eq!(r.requeue_after, None);
    // With cluster1 and cluster2 decided: requeue at now + 1 s.
    let snap = hub(&clusters)
        .placement_decision(&decision(
            NS,
            "p-decision-1",
            Some("p"),
            &["cluster1", "cluster2"],
        ))
        .build();
    let r = schedule(&p, &snap);
    assert_eq!(r.requeue_after, Some(std::time::Duration::from_secs(1)));
    assert_eq!(r.requeue_at, Some(secs(now(), 1)));
}

#[test]
fn taint_without_time_added_is_never_tolerated_for_finite_seconds() {
    let snap = hub(&[member("c1").taint("key1", "", "NoSelect", None)]).build();
    let p = placement(
        "p",
        json!({"tolerations": [{"key": "key1", "operator": "Exists", "tolerationSeconds": 100000}]}),
    );
    assert!(schedule(&p, &snap).selected.is_empty());
    let p = placement(
        "p",
        json!({"tolerations": [{"key": "key1", "operator": "Exists"}]}),
    );
    assert_eq!(selected(&schedule(&p, &snap)), ["c1"]);
}

/// A taint effect a newer OCM may add decodes, and is compared as a string as upstream does:
/// the cluster is left out unless a toleration without effect, or with that effect, matches.
#[test]
fn a_taint_effect_this_sdk_does_not_know_must_be_tolerated() {
    let now = Some(now());
    let snap = hub(&[
        member("c1").taint("key1", "", "NoSelectSoon", now),
        member("c2"),
    ])
    .build();
    assert_eq!(
        selected(&schedule(&placement("p", json!({})), &snap)),
        ["c2"]
    );
    let tolerate = |effect: Option<&str>| {
        let mut t = json!({"key": "key1", "operator": "Exists"});
        if let Some(e) = effect {
            t["effect"] = json!(e);
        }
        selected(&schedule(
            &placement("p", json!({"tolerations": [t]})),
            &snap,
        ))
    };
    assert_eq!(tolerate(None), ["c1", "c2"]);
    assert_eq!(tolerate(Some("NoSelectSoon")), ["c1", "c2"]);
    assert_eq!(tolerate(Some("NoSelect")), ["c2"]);
}

#[test]
fn balance_plugin_cases() {
    let clusters = [member("cluster1"), member("cluster2"), member("cluster3")];
    let bal = |snap| prioritizer(&schedule(&placement("p", json!({})), &snap), "Balance");
    let v = |a, b, c| {
        vec![
            ("cluster1".to_string(), a),
            ("cluster2".to_string(), b),
            ("cluster3".to_string(), c),
        ]
    };
    assert_eq!(bal(hub(&clusters).build()), v(100, 100, 100));
    assert_eq!(
        bal(hub(&clusters)
            .placement_decision(&decision(NS, "p-decision-1", Some("p"), &["cluster1"]))
            .build()),
        v(100, 100, 100)
    );
    assert_eq!(
        bal(hub(&clusters)
            .placement_decision(&decision(NS, "o-decision-1", Some("o"), &["cluster1"]))
            .build()),
        v(-100, 100, 100)
    );
    // Same placement name in another namespace counts.
    assert_eq!(
        bal(hub(&clusters)
            .placement_decision(&decision("ns2", "p-decision-1", Some("p"), &["cluster1"]))
            .build()),
        v(-100, 100, 100)
    );
    assert_eq!(
        bal(hub(&clusters)
            .placement_decision(&decision(
                NS,
                "o-decision-1",
                Some("o"),
                &["cluster1", "cluster2"]
            ))
            .placement_decision(&decision(
                NS,
                "q-decision-1",
                Some("q"),
                &["cluster1", "cluster3"]
            ))
            .build()),
        v(-100, 0, 0)
    );
    // Names of clusters that no longer exist still raise the maximum.
    assert_eq!(
        bal(hub(&clusters)
            .placement_decision(&decision(
                NS,
                "o-decision-1",
                Some("o"),
                &["gone", "gone", "cluster1"]
            ))
            .build()),
        v(0, 100, 100)
    );
}

#[test]
fn steady_plugin_cases() {
    let clusters = [member("cluster1"), member("cluster2"), member("cluster3")];
    let st = |snap| prioritizer(&schedule(&placement("p", json!({})), &snap), "Steady");
    let v = |a, b, c| {
        vec![
            ("cluster1".to_string(), a),
            ("cluster2".to_string(), b),
            ("cluster3".to_string(), c),
        ]
    };
    assert_eq!(st(hub(&clusters).build()), v(0, 0, 0));
    assert_eq!(
        st(hub(&clusters)
            .placement_decision(&decision(NS, "p-decision-1", Some("p"), &["cluster1"]))
            .build()),
        v(100, 0, 0)
    );
    assert_eq!(
        st(hub(&clusters)
            .placement_decision(&decision(NS, "p-decision-1", Some("p"), &["cluster1"]))
            .placement_decision(&decision(NS, "p-decision-2", Some("p"), &["cluster3"]))
            .build()),
        v(100, 0, 100)
    );
}

#[test]
fn resource_plugin_cases() {
    let exact = |name: &str| {
        json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": 1}]}})
    };
    let mem = |a: &str, b: &str, c: &str| {
        hub(&[
            member("cluster1").resource("memory", a, "100"),
            member("cluster2").resource("memory", b, "100"),
            member("cluster3").resource("memory", c, "100"),
        ])
        .build()
    };
    let v = |a, b, c| {
        vec![
            ("cluster1".to_string(), a),
            ("cluster2".to_string(), b),
            ("cluster3".to_string(), c),
        ]
    };
    let p = placement("p", exact("ResourceAllocatableMemory"));
    assert_eq!(
        prioritizer(
            &schedule(&p, &mem("20", "60", "100")),
            "ResourceAllocatableMemory"
        ),
        v(-100, 0, 100)
    );
    assert_eq!(
        prioritizer(
            &schedule(&p, &mem("60", "60", "60")),
            "ResourceAllocatableMemory"
        ),
        v(100, 100, 100)
    );
    assert_eq!(
        prioritizer(
            &schedule(&p, &mem("0", "0", "0")),
            "ResourceAllocatableMemory"
        ),
        v(100, 100, 100)
    );
    let none = hub(&[member("cluster1"), member("cluster2")]).build();
    assert!(prioritizer(&schedule(&p, &none), "ResourceAllocatableMemory").is_empty());
    // Allocatable without capacity does not count.
    let half = hub(&[member("cluster1")]).build();
    assert!(prioritizer(&schedule(&p, &half), "ResourceAllocatableMemory").is_empty());
    let cpu = hub(&[
        member("cluster1").resource("cpu", "10", "10"),
        member("cluster2").resource("cpu", "6", "10"),
        member("cluster3").resource("cpu", "2", "10"),
    ])
    .build();
    let p = placement("p", exact("ResourceAllocatableCPU"));
    assert_eq!(
        prioritizer(&schedule(&p, &cpu), "ResourceAllocatableCPU"),
        v(100, 0, -100)
    );
}

#[test]
fn addon_plugin_cases() {
    let clusters = [member("cluster1"), member("cluster2"), member("cluster3")];
    let p = placement(
        "p",
        json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "test", "scoreName": "score1"}}, "weight": 1}]}}),
    );
    let v = |a, b, c| {
        vec![
            ("cluster1".to_string(), a),
            ("cluster2".to_string(), b),
            ("cluster3".to_string(), c),
        ]
    };
    let name = "AddOn/test/score1";
    let r = schedule(&p, &hub(&clusters).build());
    assert_eq!(prioritizer(&r, name), v(0, 0, 0));
    let future = Some(secs(now(), 10));
    let past = Some(secs(now(), -10));
    let r = schedule(
        &p,
        &hub(&clusters)
            .addon_score(&addon_score("cluster1", "test", &[("score1", 30)], future))
            .build(),
    );
    assert_eq!(prioritizer(&r, name), v(30, 0, 0));
    let snap = hub(&clusters)
        .addon_score(&addon_score("cluster1", "test", &[("score1", 30)], past))
        .addon_score(&addon_score("cluster2", "test", &[("score1", 40)], future))
        .addon_score(&addon_score("cluster3", "test", &[("score1", 50)], None))
        .build();
    let r = schedule(&p, &snap);
    assert_eq!(prioritizer(&r, name), v(0, 40, 50));
    assert_eq!(r.status.code, StatusCode::Warning);
    assert_eq!(r.status.plugin, name);
    assert_eq!(
        r.status.message,
        "AddOnPlacementScores cluster1/test expired"
    );
    // A warning still selects and is not misconfigured.
    assert_eq!(r.misconfigured.reason, "Succeedconfigured");
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    let snap = hub(&clusters)
        .addon_score(&addon_score("cluster1", "test", &[("score1", 30)], future))
        .addon_score(&addon_score("cluster2", "test", &[("score1", 40)], future))
        .addon_score(&addon_score(
            "cluster3",
            "test",
            &[("other", 1), ("score1", 50)],
            future,
        ))
        .build();
    assert_eq!(prioritizer(&schedule(&p, &snap), name), v(30, 40, 50));
    // validUntil exactly now is not expired (strictly after).
    let snap = hub(&clusters)
        .addon_score(&addon_score(
            "cluster1",
            "test",
            &[("score1", 30)],
            Some(now()),
        ))
        .build();
    assert_eq!(prioritizer(&schedule(&p, &snap), name), v(30, 0, 0));
}

#[test]
fn cel_cost_budget_is_enforced() {
    let snap = hub(&predicate_clusters()).build();
    let p = placement(
        "p",
        json!({"predicates": [sel(json!({"celSelector": {"celExpressions": ["true", "true", "true"]}}))]}),
    );
    let r = Scheduler::new().schedule(&p, &snap, now()).unwrap();
    assert_eq!(r.selected.len(), 3);
    let tight = ocm_placement::plugins::CelLimits::default()
        .per_expression(1_000_000)
        .per_cluster_budget(2);
    let r = Scheduler::new()
        .with_cel_limits(tight)
        .schedule(&p, &snap, now())
        .unwrap();
    assert!(r.selected.is_empty());
    assert_eq!(r.status.code, StatusCode::Success);
}

#[test]
fn explain_reports_filters_and_scores() {
    let snap = hub(&[
        member("a").label("env", "prod"),
        member("b").label("env", "dev"),
        member("c")
            .label("env", "prod")
            .taint("k", "", "NoSelect", Some(now())),
    ])
    .build();
    let p = placement(
        "p",
        json!({"predicates": [sel(json!({"labelSelector": {"matchLabels": {"env": "prod"}}}))]}),
    );
    let r = schedule(&p, &snap);
    let ex = r.explain();
    assert_eq!(ex.len(), 3);
    match &ex[0].outcome {
        Outcome::Scored {
            total,
            rank,
            selected,
            scores,
        } => {
            assert_eq!((*total, *rank, *selected), (100, 0, true));
            assert_eq!(scores.len(), 2);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        ex[1].outcome,
        Outcome::FilteredOut {
            filter: "Predicate".into()
        }
    );
    assert_eq!(
        ex[2].outcome,
        Outcome::FilteredOut {
            filter: "TaintToleration".into()
        }
    );
}

struct OnlyEven;
impl ocm_placement::plugins::Filter for OnlyEven {
    fn name(&self) -> &str {
        "OnlyEven"
    }
    fn keep(
        &self,
        _: &ocm_placement::plugins::PluginContext<'_>,
        c: &ocm_placement::plugins::ClusterView<'_>,
    ) -> bool {
        c.name().ends_with(['0', '2', '4', '6', '8'])
    }
}

struct ByClaim;
impl ocm_placement::plugins::Prioritizer for ByClaim {
    fn name(&self) -> &str {
        "ByClaim"
    }
    fn default_weight(&self) -> i32 {
        2
    }
    fn score(
        &self,
        _: &ocm_placement::plugins::PluginContext<'_>,
        c: &ocm_placement::plugins::ClusterView<'_>,
    ) -> Option<i64> {
        c.claim("rank").and_then(|v| v.parse().ok())
    }
}

#[test]
fn custom_filter_and_prioritizer() {
    let snap = hub(&[
        member("c1").claim("rank", "90"),
        member("c2").claim("rank", "10"),
        member("c4").claim("rank", "50"),
    ])
    .build();
    let scheduler = Scheduler::new()
        .with_filter(OnlyEven)
        .with_prioritizer(ByClaim);
    let r = scheduler
        .schedule(
            &placement("p", json!({"numberOfClusters": 1})),
            &snap,
            now(),
        )
        .unwrap();
    assert_eq!(
        r.filter_records.last().unwrap().name,
        "Predicate,TaintToleration,OnlyEven"
    );
    assert_eq!(selected(&r), ["c4"]);
    assert_eq!(
        prioritizer(&r, "ByClaim"),
        [("c2".to_string(), 10), ("c4".to_string(), 50)]
    );
    assert_eq!(
        r.explain()[0].outcome,
        Outcome::FilteredOut {
            filter: "OnlyEven".into()
        }
    );
    // Exact mode without the custom prioritizer configured: not run.
    let p = placement("p", json!({"prioritizerPolicy": {"mode": "Exact"}}));
    assert!(
        scheduler
            .schedule(&p, &snap, now())
            .unwrap()
            .prioritizers
            .is_empty()
    );
    // Configured by name in Exact mode.
    let p = placement(
        "p",
        json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [
        {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ByClaim"}, "weight": 1}]}}),
    );
    assert_eq!(
        scheduler
            .schedule(&p, &snap, now())
            .unwrap()
            .prioritizers
            .len(),
        1
    );
}

#[test]
fn snapshot_addon_score_view_and_last_object_wins() {
    let snap = hub(&[member("cluster1")])
        .addon_score(&addon_score("cluster1", "demo", &[("a", 1)], None))
        .addon_score(&addon_score(
            "cluster1",
            "demo",
            &[("a", 2), ("b", 3)],
            Some(now()),
        ))
        .addon_score(&addon_score("nocluster", "demo", &[("a", 9)], None))
        .build();
    let id = snap.cluster_id("cluster1").unwrap();
    let view = snap.addon_score(id, "demo").unwrap();
    assert_eq!(view.scores, [("a", 2), ("b", 3)]);
    assert_eq!(view.valid_until, Some(now()));
    assert!(snap.addon_score(id, "other").is_none());
}
