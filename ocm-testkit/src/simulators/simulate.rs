//! Workload simulators: stand-ins for the controllers a real cluster runs, so
//! that Deployments, StatefulSets, DaemonSets and Jobs report progress.
//!
//! A simulator watches the store and writes the `status` a healthy controller
//! would write once the workload has rolled out: every replica ready and
//! available, `observedGeneration` caught up, Jobs complete, Pods running with
//! every container ready.
//!
//! Started with [`WorkloadSimulator::start_with_pods`]
//! ([`FakeCluster::simulate_workloads_with_pods`](crate::FakeCluster::simulate_workloads_with_pods)),
//! it also plays the Deployment and ReplicaSet controllers, so that `kubectl get pod` lists a
//! Deployment's Pods: each Deployment gets a ReplicaSet `<deployment>-<pod-template-hash>` for
//! its current template (older ones scaled to 0), and each ReplicaSet as many Pods
//! `<replicaset>-<5 characters>` as it wants, re-created when deleted, all owned as kube's
//! controllers own them (so deleting the Deployment collects them). The rollout is at once
//! (no surge, no unavailability). The `pod-template-hash` has kube's shape (its alphabet and
//! length) but not kube's value, which hashes Go's printout of the template.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::clock::format_time;
use crate::storage::registry::Gvr;
use crate::storage::store::{DeleteOptions, Store, WriteOptions};
use crate::storage::watch::EventType;

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
/// object already reports it. `replica_set` is the name of a Deployment's current
/// ReplicaSet, when the simulator runs them.
fn desired_status(
    resource: &str,
    obj: &Value,
    now: &str,
    replica_set: Option<&str>,
) -> Option<Value> {
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
    let name = replica_set.unwrap_or_else(|| {
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    });
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
    // A new Pod reads back `Pending` (with its QoS class): that is the one to start.
    let phase = obj.pointer("/status/phase").and_then(Value::as_str);
    if phase.is_some_and(|p| p != "Pending") {
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
    // A merge patch: the QoS class the Pod was created with stays.
    Some(json!({
        "phase": "Running",
        "conditions": [cond("PodScheduled"), cond("Initialized"), cond("ContainersReady"), cond("Ready")],
        "containerStatuses": containers,
        "hostIP": "10.0.0.1", "podIP": "10.244.0.10", "startTime": now,
    }))
}

fn reconcile(store: &Store, gvr: &Gvr, obj: &Value, pods: bool) {
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return;
    }
    let replica_set = if pods && gvr.resource == "deployments" {
        sync_deployment(store, obj)
    } else {
        None
    };
    let now = format_time(store.now());
    let Some(status) = desired_status(&gvr.resource, obj, &now, replica_set.as_deref()) else {
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
                reconcile(store, &gvr, &obj, false);
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
        Self::spawn(store, false)
    }

    /// [`start`](Self::start), and also run Deployments' Pods through ReplicaSets, as
    /// kube's Deployment and ReplicaSet controllers do (see the [module](self) docs).
    pub fn start_with_pods(store: Arc<Store>) -> Self {
        Self::spawn(store, true)
    }

    fn spawn(store: Arc<Store>, pods: bool) -> Self {
        let gvrs = workloads();
        let (initial, mut changes) = store.watch_resources(&gvrs);
        let task = tokio::spawn(async move {
            for (gvr, obj) in initial {
                reconcile(&store, &gvr, &obj, pods);
            }
            while let Some(ev) = changes.recv().await {
                let Some(gvr) = gvrs.iter().find(|g| {
                    g.group == ev.group_resource.group && g.resource == ev.group_resource.resource
                }) else {
                    continue;
                };
                match ev.event_type {
                    EventType::Added | EventType::Modified => {
                        reconcile(&store, gvr, &ev.object, pods);
                    }
                    // A ReplicaSet replaces the Pods it loses.
                    EventType::Deleted if pods && gvr.resource == "pods" => {
                        replace_pod(&store, &ev.object);
                    }
                    _ => {}
                }
            }
        });
        Self { task }
    }
}

/// The label kube's Deployment controller puts on its ReplicaSets and their Pods.
const POD_TEMPLATE_HASH: &str = "pod-template-hash";

fn str_at<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// The uid of the controller among `obj`'s owners.
fn controller_uid(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))?
        .get("uid")?
        .as_str()
}

fn controller_ref(kind: &str, owner: &Value) -> Value {
    json!([{
        "apiVersion": "apps/v1", "kind": kind,
        "name": str_at(owner, "/metadata/name"), "uid": str_at(owner, "/metadata/uid"),
        "controller": true, "blockOwnerDeletion": true,
    }])
}

/// `v` as JSON with every object's keys sorted, so that a template hashes the same however
/// its keys were ordered.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A `pod-template-hash` in kube's shape: the FNV-32a hash of the template, its decimal
/// digits written in kube's `SafeEncodeString` alphabet.
pub(crate) fn pod_template_hash(template: &Value) -> String {
    const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut text = String::new();
    canonical(template, &mut text);
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.to_string()
        .bytes()
        .map(|b| char::from(SAFE[usize::from(b) % SAFE.len()]))
        .collect()
}

fn replica_sets() -> Gvr {
    Gvr::new("apps", "v1", "replicasets")
}

fn pods_gvr() -> Gvr {
    Gvr::new("", "v1", "pods")
}

fn write_options() -> WriteOptions {
    WriteOptions {
        field_manager: Some(SIMULATOR_MANAGER.into()),
        ..WriteOptions::default()
    }
}

fn replicas_of(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(0)
}

/// Sets `spec.replicas` of the ReplicaSet `rs` to `replicas`; returns it as it is now.
fn scale(store: &Store, rs: Arc<Value>, replicas: i64) -> Arc<Value> {
    if rs.pointer("/spec/replicas").and_then(Value::as_i64) == Some(replicas) {
        return rs;
    }
    let patched = store.patch(
        &replica_sets(),
        str_at(&rs, "/metadata/namespace"),
        str_at(&rs, "/metadata/name"),
        crate::PatchKind::Merge,
        &json!({"spec": {"replicas": replicas}}),
        &write_options(),
    );
    match patched {
        Ok((now, _)) => Arc::new(now),
        Err(e) => {
            tracing::debug!(error = %e, "simulator: cannot scale a ReplicaSet");
            rs
        }
    }
}

/// The Deployment controller, at once: the ReplicaSet of `deploy`'s current template with
/// its replicas, older ones scaled to 0, and the Pods of each. Returns the current
/// ReplicaSet's name, or `None` when the Deployment has no template or it cannot be made.
fn sync_deployment(store: &Store, deploy: &Value) -> Option<String> {
    let ns = str_at(deploy, "/metadata/namespace");
    let name = str_at(deploy, "/metadata/name");
    let uid = str_at(deploy, "/metadata/uid");
    let template = deploy.pointer("/spec/template")?;
    let replicas = replicas_of(deploy);
    let hash = pod_template_hash(template);
    let rs_name = format!("{name}-{hash}");
    let owned: Vec<Arc<Value>> = store
        .list(&replica_sets(), Some(ns), &Default::default())
        .ok()?
        .items
        .into_iter()
        .filter(|rs| controller_uid(rs) == Some(uid))
        .collect();
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(POD_TEMPLATE_HASH.into(), json!(hash));
    let current = match owned
        .iter()
        .find(|rs| str_at(rs, "/metadata/name") == rs_name)
    {
        Some(rs) => scale(store, rs.clone(), replicas),
        None => {
            let mut selector = deploy
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut match_labels = selector
                .get("matchLabels")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            match_labels.insert(POD_TEMPLATE_HASH.into(), json!(hash));
            selector.insert("matchLabels".into(), Value::Object(match_labels));
            let mut pod_template = template.clone();
            if let Some(meta) = pod_template
                .as_object_mut()
                .map(|t| t.entry("metadata").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
            {
                meta.insert("labels".into(), Value::Object(labels.clone()));
            }
            let rs = json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name, "namespace": ns, "labels": labels,
                    "ownerReferences": controller_ref("Deployment", deploy),
                },
                "spec": {"replicas": replicas, "selector": selector, "template": pod_template},
            });
            match store.create(&replica_sets(), ns, rs, &write_options()) {
                Ok(rs) => Arc::new(rs),
                Err(e) => {
                    tracing::debug!(error = %e, deployment = name, "simulator: cannot create a ReplicaSet");
                    return None;
                }
            }
        }
    };
    for old in owned
        .into_iter()
        .filter(|rs| str_at(rs, "/metadata/name") != rs_name)
    {
        let old = scale(store, old, 0);
        sync_replica_set(store, &old);
    }
    sync_replica_set(store, &current);
    Some(rs_name)
}

/// The ReplicaSet controller, at once: as many Pods as `rs` wants (new ones from its
/// template, extra ones deleted), and its status.
fn sync_replica_set(store: &Store, rs: &Value) {
    if rs.pointer("/metadata/deletionTimestamp").is_some() {
        return;
    }
    let ns = str_at(rs, "/metadata/namespace");
    let name = str_at(rs, "/metadata/name");
    let uid = str_at(rs, "/metadata/uid");
    let want = usize::try_from(replicas_of(rs)).unwrap_or(0);
    let Ok(list) = store.list(&pods_gvr(), Some(ns), &Default::default()) else {
        return;
    };
    let mine: Vec<Arc<Value>> = list
        .items
        .into_iter()
        .filter(|p| {
            controller_uid(p) == Some(uid) && p.pointer("/metadata/deletionTimestamp").is_none()
        })
        .collect();
    for extra in mine.iter().skip(want) {
        let _ = store.delete(
            &pods_gvr(),
            ns,
            str_at(extra, "/metadata/name"),
            &DeleteOptions::default(),
        );
    }
    let mut have = mine.len().min(want);
    for _ in mine.len()..want {
        let mut meta = rs
            .pointer("/spec/template/metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        meta.insert("generateName".into(), json!(format!("{name}-")));
        meta.insert("namespace".into(), json!(ns));
        meta.insert("ownerReferences".into(), controller_ref("ReplicaSet", rs));
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": rs.pointer("/spec/template/spec").cloned().unwrap_or_else(|| json!({})),
        });
        if let Err(e) = store.create(&pods_gvr(), ns, pod, &write_options()) {
            tracing::debug!(error = %e, replicaset = name, "simulator: cannot create a Pod");
            break;
        }
        have += 1;
    }
    let n = have;
    let generation = rs
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let status = json!({
        "replicas": n, "fullyLabeledReplicas": n, "readyReplicas": n,
        "availableReplicas": n, "observedGeneration": generation,
    });
    let same = [
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ]
    .iter()
    .all(|k| rs.pointer(&format!("/status/{k}")) == status.get(*k));
    if !same {
        let opts = WriteOptions {
            subresource: Some("status".into()),
            ..write_options()
        };
        let _ = store.patch(
            &replica_sets(),
            ns,
            name,
            crate::PatchKind::Merge,
            &json!({"status": status}),
            &opts,
        );
    }
}

/// A Pod of a ReplicaSet was deleted: the ReplicaSet makes a new one.
fn replace_pod(store: &Store, pod: &Value) {
    let Some(owner) = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|refs| {
            refs.iter().find(|r| {
                r.get("controller").and_then(Value::as_bool) == Some(true)
                    && r.get("kind").and_then(Value::as_str) == Some("ReplicaSet")
            })
        })
    else {
        return;
    };
    let ns = str_at(pod, "/metadata/namespace");
    if let Ok(rs) = store.get(&replica_sets(), ns, str_at(owner, "/name"))
        && Some(str_at(&rs, "/metadata/uid")) == owner.get("uid").and_then(Value::as_str)
    {
        sync_replica_set(store, &rs);
    }
}
