//! Placement scheduler benchmarks (run with `cargo bench -p ocm-benches --bench placement`).
//!
//! Targets (release, one core): a placement with a label selector, tolerations and Additive
//! prioritizers including an AddOn score over 10 000 clusters < 2.5 ms and over 100 000
//! clusters < 30 ms; with a CEL selector over 10 000 clusters < 50 ms; snapshot memory
//! < 2 KiB per cluster (printed once, measured by `Snapshot::heap_bytes`; the growth of the
//! resident memory while building it, objects included, and after the first CEL schedule is
//! printed too).
//!
//! Topology spread (our opt-in, `Scheduler::with_topology_spread`) is measured against the
//! same placement without it on 10 000 clusters: `cargo bench -p ocm-benches --bench
//! placement -- spread`. So are scores in decisions (`Scheduler::with_decision_scores` with
//! `sortBy: Score`): `cargo bench -p ocm-benches --bench placement -- decisions`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ocm_api::cluster::v1beta1::Placement;
use ocm_placement::{Scheduler, Snapshot, SnapshotBuilder};
use serde_json::json;

const NS: &str = "bench";

fn now() -> jiff::Timestamp {
    "2024-01-01T00:00:00Z".parse().expect("timestamp")
}

/// A hub of `n` clusters: six labels, two claims, resources, an AddOn score each, a taint on
/// one cluster in ten (most tolerated), and other placements' decisions for Balance.
fn hub(n: usize) -> SnapshotBuilder {
    let envs = ["prod", "staging", "dev", "test"];
    let clouds = ["Amazon", "Azure", "Google"];
    let mut b = Snapshot::builder()
        .cluster_set(
            &serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": {}}))
                .expect("set"),
        )
        .binding(
            &serde_json::from_value(json!({"metadata": {"name": "default", "namespace": NS},
            "spec": {"clusterSet": "default"}}))
            .expect("binding"),
        );
    for i in 0..n {
        let name = format!("cluster-{i:06}");
        let mut taints = vec![];
        if i % 10 == 0 {
            taints.push(
                json!({"key": "maintenance", "value": "planned", "effect": "NoSelect",
                "timeAdded": "2023-12-31T23:00:00Z"}),
            );
        }
        if i % 97 == 0 {
            taints.push(json!({"key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect",
                "timeAdded": "2023-12-31T23:00:00Z"}));
        }
        let cluster: ocm_api::cluster::v1::ManagedCluster = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "cluster.open-cluster-management.io/clusterset": "default",
                "open-cluster-management.io/cluster-name": name,
                "env": envs[i % 4], "cloud": clouds[i % 3], "region": format!("region-{}", i % 12),
                "vendor": "OpenShift"}},
            "spec": {"hubAcceptsClient": true, "taints": taints},
            "status": {
                "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
                    "reason": "ManagedClusterAvailable", "message": "ok",
                    "lastTransitionTime": "2023-12-01T00:00:00Z"}],
                "clusterClaims": [{"name": "id.k8s.io", "value": format!("id-{i}")},
                                  {"name": "platform.open-cluster-management.io", "value": clouds[i % 3]}],
                "allocatable": {"cpu": format!("{}", 4 + i % 60), "memory": format!("{}Gi", 8 + i % 250)},
                "capacity": {"cpu": "64", "memory": "256Gi"},
                "version": {"kubernetes": "v1.30.0"}
            }
        }))
        .expect("cluster");
        b.add_cluster(cluster);
        let score = serde_json::from_value(json!({
            "metadata": {"name": "demo", "namespace": format!("cluster-{i:06}")},
            "status": {"scores": [{"name": "demo", "value": (i * 37 % 201) as i32 - 100}],
                       "validUntil": "2024-01-02T00:00:00Z"}
        }))
        .expect("score");
        b.add_addon_score(&score);
    }
    // Other placements' decisions over a tenth of the clusters.
    for (k, chunk) in (0..n)
        .step_by(10)
        .collect::<Vec<_>>()
        .chunks(100)
        .enumerate()
    {
        let decisions: Vec<_> = chunk
            .iter()
            .map(|i| json!({"clusterName": format!("cluster-{i:06}"), "reason": ""}))
            .collect();
        let pd = serde_json::from_value(json!({
            "metadata": {"name": format!("other-decision-{}", k + 1), "namespace": "elsewhere",
                "labels": {"cluster.open-cluster-management.io/placement": "other"}},
            "status": {"decisions": decisions}
        }))
        .expect("decision");
        b.add_placement_decision(&pd);
    }
    b
}

fn labelled_placement() -> Placement {
    serde_json::from_value(json!({
        "metadata": {"name": "bench", "namespace": NS},
        "spec": {
            "predicates": [{"requiredClusterSelector": {"labelSelector": {
                "matchLabels": {"vendor": "OpenShift"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging", "dev"]}]}}}],
            "tolerations": [{"key": "maintenance", "operator": "Exists", "tolerationSeconds": 7200},
                            {"key": "gpu", "operator": "Equal", "value": "true"}],
            "prioritizerPolicy": {"mode": "Additive", "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1},
                {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 2}]}
        }
    }))
    .expect("placement")
}

fn cel_placement() -> Placement {
    serde_json::from_value(json!({
        "metadata": {"name": "bench-cel", "namespace": NS},
        "spec": {
            "predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": [
                "managedCluster.metadata.labels[\"env\"] == \"prod\" || managedCluster.status.clusterClaims.exists(c, c.name == \"platform.open-cluster-management.io\" && c.value == \"Azure\")"]}}}],
            "tolerations": [{"key": "maintenance", "operator": "Exists"}],
            "prioritizerPolicy": {"mode": "Additive", "configurations": [
                {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1}]}
        }
    }))
    .expect("placement")
}

fn bench(c: &mut Criterion) {
    let scheduler = Scheduler::new();
    let mut group = c.benchmark_group("placement");
    group.sample_size(20);
    for &n in &[10_000usize, 100_000] {
        let before = ocm_benches::resident_bytes();
        let snapshot = hub(n).build();
        let after = ocm_benches::resident_bytes();
        eprintln!(
            "snapshot of {n} clusters: {} bytes per cluster (index and string table, excluding shared ManagedCluster objects)",
            snapshot.heap_bytes() / n
        );
        if let (Some(before), Some(after)) = (before, after) {
            eprintln!(
                "  resident memory grew by {} bytes per cluster building it (ManagedCluster objects, AddOn scores and decisions included)",
                after.saturating_sub(before) / n as u64
            );
        }
        let p = labelled_placement();
        let r = scheduler.schedule(&p, &snapshot, now()).expect("schedule");
        eprintln!(
            "  label placement selects {} clusters in {} slices",
            r.selected.len(),
            r.slices.len()
        );
        group.bench_function(
            format!("schedule_label_tolerations_additive_addon/{n}"),
            |b| {
                b.iter(|| {
                    black_box(
                        scheduler
                            .schedule(black_box(&p), &snapshot, now())
                            .expect("schedule"),
                    )
                })
            },
        );
        if n == 10_000 {
            let p = cel_placement();
            let before = ocm_benches::resident_bytes();
            let r = scheduler.schedule(&p, &snapshot, now()).expect("schedule");
            let after = ocm_benches::resident_bytes();
            eprintln!("  CEL placement selects {} clusters", r.selected.len());
            if let (Some(before), Some(after)) = (before, after) {
                eprintln!(
                    "  its first schedule grew resident memory by {} bytes per cluster (the CEL value cache)",
                    after.saturating_sub(before) / n as u64
                );
            }
            group.bench_function(format!("schedule_cel/{n}"), |b| {
                b.iter(|| {
                    black_box(
                        scheduler
                            .schedule(black_box(&p), &snapshot, now())
                            .expect("schedule"),
                    )
                })
            });
            // First CEL schedule on a fresh snapshot: includes converting every candidate to
            // its (then cached) CEL form.
            group.bench_function(format!("schedule_cel_cold/{n}"), |b| {
                b.iter_batched_ref(
                    || hub(n).build(),
                    |fresh| black_box(scheduler.schedule(&p, fresh, now()).expect("schedule")),
                    criterion::BatchSize::PerIteration,
                )
            });
            // Single-expression variants: a constant, a label lookup, a claim comprehension.
            for (label, expr) in [
                ("true", "true"),
                (
                    "label",
                    "managedCluster.metadata.labels[\"env\"] == \"prod\"",
                ),
                (
                    "exists",
                    "managedCluster.status.clusterClaims.exists(c, c.name == \"platform.open-cluster-management.io\" && c.value == \"Azure\")",
                ),
            ] {
                let p: Placement = serde_json::from_value(json!({"metadata": {"name": "x", "namespace": NS},
                    "spec": {"predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": [expr]}}}]}})).expect("p");
                group.bench_function(format!("schedule_cel_{label}/{n}"), |b| {
                    b.iter(|| {
                        black_box(
                            scheduler
                                .schedule(black_box(&p), &snapshot, now())
                                .expect("schedule"),
                        )
                    })
                });
            }
            group.bench_function(format!("snapshot_build/{n}"), |b| {
                b.iter_batched(
                    || hub(n),
                    |builder| black_box(builder.build()),
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

/// The labelled placement choosing 1 000 clusters, with `spread` as its spread constraints.
fn top_1000(spread: Option<serde_json::Value>) -> Placement {
    let mut p = labelled_placement();
    p.spec.number_of_clusters = Some(1000);
    if let Some(terms) = spread {
        p.spec.spread_policy = Some(
            serde_json::from_value(json!({ "spreadConstraints": terms })).expect("spread policy"),
        );
    }
    p
}

/// Topology spread overhead on 10 000 clusters: the same placement (label selector,
/// tolerations, two prioritizers, 1 000 clusters wanted) without spread, with a hard spread
/// over 12 regions and a soft one over 3 clouds, and with a hard spread over a key unique to
/// each cluster (the worst case: one domain per cluster).
fn spread_bench(c: &mut Criterion) {
    let n = 10_000;
    let snapshot = hub(n).build();
    let upstream = Scheduler::new();
    let spread = Scheduler::new().with_topology_spread(true);
    let regions = top_1000(Some(json!([
        {"topologyKey": "region", "topologyKeyType": "Label", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"},
        {"topologyKey": "platform.open-cluster-management.io", "topologyKeyType": "Claim", "maxSkew": 1}
    ])));
    let unique = top_1000(Some(json!([
        {"topologyKey": "open-cluster-management.io/cluster-name", "topologyKeyType": "Label",
         "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}
    ])));
    let plain = top_1000(None);
    for (label, p) in [("regions", &regions), ("unique", &unique)] {
        let r = spread.schedule(p, &snapshot, now()).expect("schedule");
        let outcome = r.spread.as_ref().expect("spread outcome");
        eprintln!(
            "  spread over {label}: {} of {} selected, skews {:?}",
            outcome.selected,
            outcome.wanted,
            outcome
                .constraints
                .iter()
                .map(|c| c.skew)
                .collect::<Vec<_>>()
        );
    }
    let mut group = c.benchmark_group("placement");
    group.sample_size(20);
    for (name, scheduler, p) in [
        ("schedule_top1000_no_spread", &upstream, &plain),
        ("schedule_top1000_spread_regions_clouds", &spread, &regions),
        ("schedule_top1000_spread_unique_key", &spread, &unique),
    ] {
        group.bench_function(format!("{name}/{n}"), |b| {
            b.iter(|| {
                black_box(
                    scheduler
                        .schedule(black_box(p), &snapshot, now())
                        .expect("schedule"),
                )
            })
        });
    }
    group.finish();
}

/// Scores in decisions on 10 000 clusters: scheduling the labelled placement (`sortBy:
/// Score`) and building the PlacementDecisions the controller writes, upstream (name order,
/// no scores) and with `Scheduler::with_decision_scores` (score order, scores written).
fn scores_bench(c: &mut Criterion) {
    let n = 10_000;
    let snapshot = hub(n).build();
    let mut p = labelled_placement();
    p.spec.sort_by = Some(ocm_api::cluster::v1beta1::SortBy::Score);
    let upstream = Scheduler::new();
    let scored = Scheduler::new().with_decision_scores(true);
    let r = scored.schedule(&p, &snapshot, now()).expect("schedule");
    eprintln!(
        "  scored decisions: {} clusters in {} PlacementDecisions",
        r.selected.len(),
        r.slices.len()
    );
    let mut group = c.benchmark_group("placement");
    group.sample_size(20);
    for (name, scheduler) in [
        ("decisions_upstream", &upstream),
        ("decisions_scored_sort_by_score", &scored),
    ] {
        group.bench_function(format!("{name}/{n}"), |b| {
            b.iter(|| {
                let r = scheduler
                    .schedule(black_box(&p), &snapshot, now())
                    .expect("schedule");
                black_box(r.placement_decisions(&p, &snapshot))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, spread_bench, scores_bench);
criterion_main!(benches);
