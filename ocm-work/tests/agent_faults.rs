//! The running agent under injected faults on both clusters while works are created, updated
//! and deleted: it converges, loses nothing and applies nothing twice.
//!
//! Faults come in bursts from the testkit's fault rules, cycling over: 429 and 500 on every
//! verb, 409 on patches, 1 s of latency, dropped watches (the agent's connections cut) with the
//! history compacted (so the resumed watches get `410 Gone` and list again) and watches that
//! drop after one event, and 410 on watch requests. Run with `--nocapture` for the figures.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use ocm_testkit::{
    DeleteOptions, EventType, FakeCluster, FaultRule, Gvr, PatchKind, WatchOptions, WriteOptions,
};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::json;
use support::link::Link;
use support::*;

/// What each work should have on the managed cluster once converged: ConfigMap → value.
type Expected = BTreeMap<String, BTreeMap<String, String>>;

fn work_of(name: &str, configmaps: &BTreeMap<String, String>) -> ManifestWork {
    let manifests: Vec<serde_json::Value> =
        configmaps.iter().map(|(cm, v)| configmap(cm, v)).collect();
    work_object(name, json!({"workload": {"manifests": manifests}}))
}

/// One burst of faults, by step number: alternately on the hub and the managed cluster.
/// `link` carries the agent's connections to that cluster; cutting it drops every open watch.
fn burst(step: usize, clusters: [(&FakeCluster, &Link); 2]) -> &'static str {
    let (cluster, link) = clusters[step % 2];
    match (step / 2) % 6 {
        0 => {
            cluster.inject(FaultRule::new(429).times(12));
            "429 on every verb"
        }
        1 => {
            cluster.inject(FaultRule::new(500).times(12));
            "500 on every verb"
        }
        2 => {
            cluster.inject(FaultRule::new(409).verb("patch").times(8));
            "409 on patches"
        }
        3 => {
            cluster.inject(FaultRule::delay_only(Duration::from_secs(1)).times(8));
            "1 s latency"
        }
        4 => {
            // Open watches drop and cannot resume: a change none of them sees moves the
            // store past them, the history is compacted, so they get 410 Gone and list again;
            // the next watches drop after one event.
            let bump = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"generateName": "bump-", "namespace": "elsewhere"}});
            let _ = cluster.store().create(
                &Gvr::new("", "v1", "configmaps"),
                "elsewhere",
                bump,
                &WriteOptions::manager("test"),
            );
            cluster.store().compact();
            cluster.inject(FaultRule::drop_watch_after(1).times(6));
            link.up(cluster);
            "dropped watches, 410 on resume"
        }
        _ => {
            cluster.inject(FaultRule::new(410).verb("watch").times(4));
            link.up(cluster);
            "dropped watches, 410 on watch requests"
        }
    }
}

/// What is not converged yet (empty when everything is).
fn not_converged(
    hub: &FakeCluster,
    spoke: &FakeCluster,
    expected: &Expected,
    removed: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, configmaps) in expected {
        match stored_work(hub, name) {
            None => problems.push(format!("work {name} missing")),
            Some(w) => {
                let manifests = w
                    .status
                    .as_ref()
                    .and_then(|s| s.resource_status.as_ref())
                    .and_then(|r| r.manifests.as_ref())
                    .map_or(0, Vec::len);
                if !condition_true(&w, "Applied")
                    || !condition_true(&w, "Available")
                    || manifests != configmaps.len()
                {
                    problems.push(format!(
                        "work {name}: conditions {:?}, {manifests} manifest statuses",
                        w.status
                            .as_ref()
                            .and_then(|s| s.conditions.as_ref())
                            .map(|c| c
                                .iter()
                                .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
                                .collect::<Vec<_>>())
                    ));
                }
            }
        }
    }
    let wanted: BTreeMap<String, String> = expected
        .values()
        .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
        .collect();
    let present: BTreeMap<String, String> = configmap_names(spoke)
        .into_iter()
        .filter_map(|n| configmap_value(spoke, &n).map(|v| (n, v)))
        .collect();
    if present != wanted {
        problems.push(format!("ConfigMaps {present:?}, wanted {wanted:?}"));
    }
    for name in removed {
        if stored_work(hub, name).is_some() {
            problems.push(format!("removed work {name} still on the hub"));
        }
    }
    let records: Vec<AppliedManifestWork> = spoke.list(None).unwrap_or_default();
    if records.len() != expected.len() {
        problems.push(format!(
            "{} AppliedManifestWorks: {:?}",
            records.len(),
            records
                .iter()
                .map(|r| r.spec.manifest_work_name.clone())
                .collect::<Vec<_>>()
        ));
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_faults_on_both_clusters_the_agent_converges_and_applies_nothing_twice() {
    let (hub, spoke) = clusters().await;
    let config =
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)).status_sync_interval(Duration::from_secs(1));
    let (hub_link, spoke_link) = (Link::new(&hub), Link::new(&spoke));
    let agent = WorkAgent::new(hub_link.client(), spoke_link.client(), config);
    let (stop, task) = start(agent);
    // Every ConfigMap creation and deletion, from the managed cluster's store itself.
    let mut changes = spoke
        .store()
        .watch(
            &Gvr::new("", "v1", "configmaps"),
            Some("default"),
            WatchOptions::default(),
        )
        .unwrap();
    let history = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(EventType, String)>::new()));
    let recorder = history.clone();
    let watching = tokio::spawn(async move {
        while let Some((event, object, _)) = changes.next_event().await {
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            recorder.lock().unwrap().push((event, name));
        }
    });
    let started = Instant::now();
    hub.journal().clear();
    spoke.journal().clear();

    // The chaos: a burst every 400 ms for 10 s.
    let (chaos_hub, chaos_spoke) = (hub.clone(), spoke.clone());
    let chaos = tokio::spawn(async move {
        let mut kinds = BTreeMap::<&str, usize>::new();
        for step in 0..25 {
            let clusters = [(&chaos_hub, &hub_link), (&chaos_spoke, &spoke_link)];
            *kinds.entry(burst(step, clusters)).or_default() += 1;
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        kinds
    });

    // Works change meanwhile. The test writes to the hub's store directly: its own writes are
    // neither faulted nor journaled, so the journals count the agent's requests only.
    let store = hub.store().clone();
    let gvr = Gvr::of::<ManifestWork>();
    let opts = WriteOptions::manager("test");
    let mut expected = Expected::new();
    let mut removed = Vec::new();
    for i in 0..20 {
        let name = format!("w{i}");
        let configmaps: BTreeMap<String, String> = (0..2)
            .map(|m| (format!("w{i}-{m}"), "v1".to_string()))
            .collect();
        let work = serde_json::to_value(work_of(&name, &configmaps)).unwrap();
        store.create(&gvr, CLUSTER, work, &opts).unwrap();
        expected.insert(name, configmaps);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Updates: new values for ten works, half of them also drop a manifest.
    for i in 0..10 {
        let name = format!("w{i}");
        let mut configmaps: BTreeMap<String, String> = (0..2)
            .map(|m| (format!("w{i}-{m}"), "v2".to_string()))
            .collect();
        if i % 2 == 0 {
            configmaps.remove(&format!("w{i}-1"));
        }
        let spec = serde_json::to_value(work_of(&name, &configmaps).spec).unwrap();
        store
            .patch(
                &gvr,
                CLUSTER,
                &name,
                PatchKind::Merge,
                &json!({"spec": spec}),
                &opts,
            )
            .unwrap();
        expected.insert(name, configmaps);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Deletes (the agent's finalizer keeps each work until its resources are gone).
    for i in 15..20 {
        let name = format!("w{i}");
        store
            .delete(&gvr, CLUSTER, &name, &DeleteOptions::default())
            .unwrap();
        expected.remove(&name);
        removed.push(name);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // And a few more works.
    for i in 20..25 {
        let name = format!("w{i}");
        let configmaps: BTreeMap<String, String> = [(format!("w{i}-0"), "v1".to_string())]
            .into_iter()
            .collect();
        let work = serde_json::to_value(work_of(&name, &configmaps)).unwrap();
        store.create(&gvr, CLUSTER, work, &opts).unwrap();
        expected.insert(name, configmaps);
    }
    let last_change = Instant::now();
    let kinds = chaos.await.unwrap();
    // Faults stop; whatever burst is left unfired is dropped.
    hub.faults().clear();
    spoke.faults().clear();
    let faults_over = Instant::now();
    let ok = eventually(Duration::from_secs(40), || async {
        not_converged(&hub, &spoke, &expected, &removed).is_empty()
    })
    .await;
    let done = Instant::now();
    assert!(
        ok,
        "not converged: {:#?}",
        not_converged(&hub, &spoke, &expected, &removed)
    );

    // Nothing applied twice: no ConfigMap was created (or deleted) twice, and every
    // successful create the agent sent made one of them. (A work deleted or changed before
    // the agent first saw it, which the faults can cause, is never applied at all.)
    let changes = history.lock().unwrap().clone();
    let count_of = |kind: EventType| {
        let mut by_name = BTreeMap::<String, usize>::new();
        for (t, name) in &changes {
            if *t == kind {
                *by_name.entry(name.clone()).or_default() += 1;
            }
        }
        by_name
    };
    let added = count_of(EventType::Added);
    let deleted = count_of(EventType::Deleted);
    assert!(added.values().all(|n| *n == 1), "created twice: {added:?}");
    assert!(
        deleted.values().all(|n| *n == 1),
        "deleted twice: {deleted:?}"
    );
    let journal = spoke.journal().entries();
    let created = |resource: &str| {
        journal
            .iter()
            .filter(|e| e.verb == "create" && e.status == 201)
            .filter(|e| e.resource.as_deref() == Some(resource))
            .count()
    };
    assert_eq!(
        created("configmaps"),
        added.len(),
        "each create made one ConfigMap"
    );
    let records: Vec<AppliedManifestWork> = spoke.list(None).unwrap();
    assert!(
        created("appliedmanifestworks") <= 25 && created("appliedmanifestworks") >= records.len()
    );
    let mut writes = BTreeMap::<String, usize>::new();
    for e in &journal {
        if e.resource.as_deref() == Some("configmaps")
            && matches!(e.verb.as_str(), "update" | "patch" | "delete")
            && (200..300).contains(&e.status)
        {
            let key = format!("{} {}", e.verb, e.name.as_deref().unwrap_or_default());
            *writes.entry(key).or_default() += 1;
        }
    }
    let twice: Vec<_> = writes.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written more than once: {twice:?}");
    let count = |c: &FakeCluster, code: u16| c.journal().count(|e| e.status == code);
    let lists = |c: &FakeCluster| c.journal().count(|e| e.verb == "list");
    let figures = |c: &FakeCluster| {
        format!(
            "{} requests ({} writes, {} lists); answered 429: {}, 500: {}, 409: {}, 410: {}",
            c.journal().entries().len(),
            c.journal().writes(),
            lists(c),
            count(c, 429),
            count(c, 500),
            count(c, 409),
            count(c, 410),
        )
    };
    println!(
        "faults: {kinds:?}\n\
         converged {:?} after the last change, {:?} after the faults stopped, {:?} in all\n\
         hub: {}\nspoke: {}",
        done - last_change,
        done - faults_over,
        done - started,
        figures(&hub),
        figures(&spoke),
    );
    watching.abort();
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}
