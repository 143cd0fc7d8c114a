//! Workload simulators: stand-ins for the controllers a real cluster runs, so
//! that Deployments, StatefulSets, DaemonSets and Jobs report progress.
//!
//! A simulator watches the store and writes the `status` a healthy controller
//! would write once the workload has rolled out: every replica ready and
//! available, `observedGeneration` caught up, Jobs complete, Pods running with
//! every container ready.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::clock::format_time;
use crate::registry::Gvr;
use crate::store::{Store, WriteOptions};
use crate::watch::{EventType, WatchOptions};

/// The field manager simulators write status with.
pub const SIMULATOR_MANAGER: &str = "ocm-testkit-simulator";

fn workloads() -> [Gvr; 5] {
    [
        Gvr::new("", "v1", "pods"),
        Gvr::new("apps", "v1", "deployments"),
        Gvr::new("apps", "v1", "statefulsets"),
        Gvr::new("apps", "v1", "daemonsets"),
        Gvr::new("batch", "v1", "jobs"),
    ]
}

/// The status a healthy controller would report for `obj`, or `None` when the
/// object already reports it.
fn desired_status(resource: &str, obj: &Value, now: &str) -> Option<Value> {
    if resource == "pods" {
        return pod_status(obj, now);
    }
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let observed = obj
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    if observed == Some(generation) {
        return None;
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let cond = |t: &str, reason: &str, message: &str| {
        json!({"type": t, "status": "True", "reason": reason, "message": message,
               "lastUpdateTime": now, "lastTransitionTime": now})
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some(match resource {
        "deployments" => json!({
            "observedGeneration": generation,
            "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [
                cond("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                cond("Progressing", "NewReplicaSetAvailable",
                     &format!("ReplicaSet \"{name}\" has successfully progressed.")),
            ],
        }),
        "statefulsets" => json!({
            "observedGeneration": generation,
            "replicas": replicas, "readyReplicas": replicas, "currentReplicas": replicas,
            "updatedReplicas": replicas, "availableReplicas": replicas,
        }),
        "daemonsets" => json!({
            "observedGeneration": generation,
            "currentNumberScheduled": 1, "desiredNumberScheduled": 1, "numberAvailable": 1,
            "numberMisscheduled": 0, "numberReady": 1, "updatedNumberScheduled": 1,
        }),
        "jobs" => {
            if obj.pointer("/status/completionTime").is_some() {
                return None;
            }
            let completions = obj
                .pointer("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            json!({
                "startTime": now, "completionTime": now, "succeeded": completions,
                "ready": 0, "active": 0,
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
                     "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": now, "lastTransitionTime": now},
                    {"type": "Complete", "status": "True", "reason": "CompletionsReached",
                     "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": now, "lastTransitionTime": now},
                ],
            })
        }
        _ => return None,
    })
}

/// A Pod that was scheduled and whose containers all started and are ready.
fn pod_status(obj: &Value, now: &str) -> Option<Value> {
    if obj.pointer("/status/phase").is_some() {
        return None;
    }
    let cond = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    let containers: Vec<Value> = obj
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    json!({
                        "name": c.get("name").cloned().unwrap_or(Value::Null),
                        "image": c.get("image").cloned().unwrap_or(Value::Null),
                        "imageID": "",
                        "ready": true, "started": true, "restartCount": 0,
                        "state": {"running": {"startedAt": now}},
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(json!({
        "phase": "Running",
        "conditions": [cond("PodScheduled"), cond("Initialized"), cond("ContainersReady"), cond("Ready")],
        "containerStatuses": containers,
        "hostIP": "10.0.0.1", "podIP": "10.244.0.10", "startTime": now,
    }))
}

fn reconcile(store: &Store, gvr: &Gvr, obj: &Value) {
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return;
    }
    let now = format_time(store.now());
    let Some(status) = desired_status(&gvr.resource, obj, &now) else {
        return;
    };
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let opts = WriteOptions {
        field_manager: Some(SIMULATOR_MANAGER.into()),
        subresource: Some("status".into()),
        ..WriteOptions::default()
    };
    // The object may have changed or gone meanwhile; the next event retries.
    let _ = store.patch(
        gvr,
        ns,
        name,
        crate::PatchKind::Merge,
        &json!({"status": status}),
        &opts,
    );
}

/// Bring every workload in the store to its healthy status right now.
pub fn settle_workloads(store: &Store) {
    for gvr in workloads() {
        if let Ok(list) = store.list(&gvr, None, &Default::default()) {
            for obj in list.items {
                reconcile(store, &gvr, &obj);
            }
        }
    }
}

/// A running workload simulator; it stops when dropped.
#[derive(Debug)]
#[must_use = "the simulator stops when dropped"]
pub struct WorkloadSimulator {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WorkloadSimulator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WorkloadSimulator {
    /// Start simulating on `store` (inside a Tokio runtime). Workloads that already
    /// exist are settled at once; later ones as they are created or changed.
    pub fn start(store: Arc<Store>) -> Self {
        let mut streams = Vec::new();
        for gvr in workloads() {
            if let Ok(sub) = store.watch(&gvr, None, WatchOptions::default()) {
                let initial = futures::stream::iter(sub.initial.clone());
                let live = futures::stream::unfold(sub, |mut sub| async move {
                    let (t, o, _) = sub.next_event().await?;
                    Some(((t, o), sub))
                });
                let g = gvr.clone();
                streams.push(
                    initial
                        .chain(live)
                        .map(move |(t, o)| (g.clone(), t, o))
                        .boxed(),
                );
            }
        }
        let task = tokio::spawn(async move {
            let mut all = futures::stream::select_all(streams);
            while let Some((gvr, t, obj)) = all.next().await {
                if matches!(t, EventType::Added | EventType::Modified) {
                    reconcile(&store, &gvr, &obj);
                }
            }
        });
        Self { task }
    }
}
