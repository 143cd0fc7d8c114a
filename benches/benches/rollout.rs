//! The rollout engine (`ocm_api::cluster::v1alpha1::RolloutHandler`): one step over 10,000
//! clusters (target < 5 ms).
//!
//! Run with `cargo bench -p ocm-benches --bench rollout`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use ocm_api::cluster::v1alpha1::{
    ClusterGroups, ClusterRolloutStatus, GroupKey, MandatoryDecisionGroup, MandatoryDecisionGroups,
    RolloutConfig, RolloutHandler, RolloutProgressive, RolloutProgressivePerGroup, RolloutStatus,
    RolloutStrategy, RolloutType,
};

const CLUSTERS: usize = 10_000;
const GROUPS: usize = 10;

fn setup() -> (ClusterGroups, Vec<ClusterRolloutStatus>, Timestamp) {
    let now: Timestamp = "2026-01-01T12:00:00Z".parse().expect("timestamp");
    let mut groups = ClusterGroups::default();
    let mut statuses = Vec::new();
    for i in 0..CLUSTERS {
        let group = i % GROUPS;
        let key = GroupKey::new(if group == 0 { "canary" } else { "" }, group as i32);
        let name = format!("cluster-{i:05}");
        groups.insert(key.clone(), name.clone());
        // Half of the clusters have a status: most succeeded long ago, some in progress,
        // a few failed.
        if i % 2 == 0 {
            let status = match i % 50 {
                0 => RolloutStatus::Failed,
                2 | 4 => RolloutStatus::Progressing,
                _ => RolloutStatus::Succeeded,
            };
            let since = now
                .checked_sub(SignedDuration::from_secs((i % 600) as i64))
                .expect("time");
            statuses.push(ClusterRolloutStatus::new(name, key, status).since(since));
        }
    }
    (groups, statuses, now)
}

fn config() -> RolloutConfig {
    RolloutConfig {
        min_success_time: Some("1m".into()),
        progress_deadline: Some("10m".into()),
        max_failures: Some(IntOrString::String("5%".into())),
    }
}

fn bench(c: &mut Criterion) {
    let (groups, statuses, now) = setup();
    let handler = RolloutHandler::new(&groups);
    let canary = MandatoryDecisionGroups {
        mandatory_decision_groups: Some(vec![MandatoryDecisionGroup {
            group_name: Some("canary".into()),
            group_index: None,
        }]),
    };
    let strategies = [
        (
            "all",
            RolloutStrategy {
                type_: Some(RolloutType::All),
                ..Default::default()
            },
        ),
        (
            "progressive",
            RolloutStrategy {
                type_: Some(RolloutType::Progressive),
                progressive: Some(RolloutProgressive {
                    config: config(),
                    mandatory_decision_groups: canary.clone(),
                    max_concurrency: Some(IntOrString::String("10%".into())),
                }),
                ..Default::default()
            },
        ),
        (
            "progressive_per_group",
            RolloutStrategy {
                type_: Some(RolloutType::ProgressivePerGroup),
                progressive_per_group: Some(RolloutProgressivePerGroup {
                    config: config(),
                    mandatory_decision_groups: canary,
                }),
                ..Default::default()
            },
        ),
    ];
    let mut group = c.benchmark_group("rollout_step_10k_clusters");
    for (name, strategy) in &strategies {
        group.bench_function(*name, |b| {
            b.iter(|| {
                handler
                    .rollout(black_box(strategy), black_box(&statuses), now)
                    .expect("rollout")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
