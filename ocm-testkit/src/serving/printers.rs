//! The table columns kube-apiserver prints for built-in kinds (its `printers` package), for
//! the kinds a work agent typically applies: what `kubectl get deployment` shows as READY,
//! UP-TO-DATE and AVAILABLE, and so on. Priority-1 columns are the ones `-o wide` adds.
//!
//! Cells are typed as kube-apiserver types them (for example a Deployment's UP-TO-DATE is an
//! integer in a `string` column). Pod status follows kubectl's common cases (the phase, a
//! waiting or terminated container's reason, `Terminating`), not every rule of
//! kube-apiserver's printer.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::serving::table::{age_of, human_duration};

/// `metadata.name`'s description, as kube-apiserver sends it.
pub(crate) const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// `metadata.creationTimestamp`'s description, as kube-apiserver sends it.
pub(crate) const CREATION_TIMESTAMP_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One column of a built-in printer.
pub(crate) struct Col {
    pub(crate) name: &'static str,
    pub(crate) type_: &'static str,
    pub(crate) format: &'static str,
    pub(crate) description: &'static str,
    pub(crate) priority: i64,
}

const fn col(name: &'static str, type_: &'static str, description: &'static str) -> Col {
    Col {
        name,
        type_,
        format: "",
        description,
        priority: 0,
    }
}

const fn wide(name: &'static str, type_: &'static str, description: &'static str) -> Col {
    Col {
        name,
        type_,
        format: "",
        description,
        priority: 1,
    }
}

const NAME: Col = Col {
    name: "Name",
    type_: "string",
    format: "name",
    description: NAME_DOC,
    priority: 0,
};
const AGE: Col = col("Age", "string", CREATION_TIMESTAMP_DOC);
const CONTAINERS: Col = wide(
    "Containers",
    "string",
    "Names of each container in the template.",
);
const IMAGES: Col = wide(
    "Images",
    "string",
    "Images referenced by each container in the template.",
);
const SELECTOR: Col = wide("Selector", "string", "Label selector for the pods.");

/// A built-in kind's columns and how to fill a row.
pub(crate) struct Printer {
    pub(crate) columns: &'static [Col],
    pub(crate) cells: fn(&Value, Timestamp) -> Vec<Value>,
}

fn s<'a>(o: &'a Value, ptr: &str) -> &'a str {
    o.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn i(o: &Value, ptr: &str) -> i64 {
    o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn name(o: &Value) -> Value {
    o.pointer("/metadata/name").cloned().unwrap_or(Value::Null)
}

fn age(o: &Value, now: Timestamp) -> Value {
    json!(age_of(
        o.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str),
        now
    ))
}

fn none_if_empty(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` when empty.
fn format_labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    none_if_empty(pairs.join(","))
}

/// `metav1.FormatLabelSelector` ([`ocm_api::k8s::labels::format_selector`]).
fn format_selector(sel: Option<&Value>) -> String {
    match sel.map(|sel| serde_json::from_value(sel.clone())) {
        None => ocm_api::k8s::labels::format_selector(None),
        Some(Ok(sel)) => ocm_api::k8s::labels::format_selector(Some(&sel)),
        Some(Err(_)) => "<error>".to_string(),
    }
}

fn template_containers(o: &Value, ptr: &str) -> (String, String) {
    let containers = o
        .pointer(ptr)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = containers
        .iter()
        .map(|c| c.get("name").and_then(Value::as_str).unwrap_or_default())
        .collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.get("image").and_then(Value::as_str).unwrap_or_default())
        .collect();
    (names.join(","), images.join(","))
}

fn replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

const DEPLOYMENT: Printer = Printer {
    columns: &[
        NAME,
        col("Ready", "string", "Number of the pod with ready state"),
        col(
            "Up-to-date",
            "string",
            "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
        ),
        col(
            "Available",
            "string",
            "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    cells: |o, now| {
        let (c, im) = template_containers(o, "/spec/template/spec/containers");
        vec![
            name(o),
            json!(format!("{}/{}", i(o, "/status/readyReplicas"), replicas(o))),
            json!(i(o, "/status/updatedReplicas")),
            json!(i(o, "/status/availableReplicas")),
            age(o, now),
            json!(c),
            json!(im),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    },
};

const REPLICA_SET: Printer = Printer {
    columns: &[
        NAME,
        col("Desired", "integer", "Number of desired pods."),
        col("Current", "integer", "Number of actual replicas."),
        col(
            "Ready",
            "integer",
            "The number of ready replicas for this replica set.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    cells: |o, now| {
        let (c, im) = template_containers(o, "/spec/template/spec/containers");
        vec![
            name(o),
            json!(replicas(o)),
            json!(i(o, "/status/replicas")),
            json!(i(o, "/status/readyReplicas")),
            age(o, now),
            json!(c),
            json!(im),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    },
};

const STATEFUL_SET: Printer = Printer {
    columns: &[
        NAME,
        col("Ready", "string", "Number of the pod with ready state"),
        AGE,
        CONTAINERS,
        IMAGES,
    ],
    cells: |o, now| {
        let (c, im) = template_containers(o, "/spec/template/spec/containers");
        vec![
            name(o),
            json!(format!("{}/{}", i(o, "/status/readyReplicas"), replicas(o))),
            age(o, now),
            json!(c),
            json!(im),
        ]
    },
};

const DAEMON_SET: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Desired",
            "integer",
            "The total number of nodes that should be running the daemon pod.",
        ),
        col(
            "Current",
            "integer",
            "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
        ),
        col(
            "Ready",
            "integer",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
        ),
        col(
            "Up-to-date",
            "integer",
            "The total number of nodes that are running updated daemon pod.",
        ),
        col(
            "Available",
            "integer",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
        ),
        col(
            "Node Selector",
            "string",
            "The node selector of the pod template.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    cells: |o, now| {
        let (c, im) = template_containers(o, "/spec/template/spec/containers");
        vec![
            name(o),
            json!(i(o, "/status/desiredNumberScheduled")),
            json!(i(o, "/status/currentNumberScheduled")),
            json!(i(o, "/status/numberReady")),
            json!(i(o, "/status/updatedNumberScheduled")),
            json!(i(o, "/status/numberAvailable")),
            json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
            age(o, now),
            json!(c),
            json!(im),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    },
};

fn condition_true(o: &Value, type_: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| s(c, "/type") == type_ && s(c, "/status") == "True")
}

const JOB: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "Status of the job."),
        col("Completions", "string", "The completed job replicas."),
        col("Duration", "string", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    cells: |o, now| {
        let (c, im) = template_containers(o, "/spec/template/spec/containers");
        let status = if condition_true(o, "Complete") {
            "Complete"
        } else if condition_true(o, "Failed") {
            "Failed"
        } else if o.pointer("/metadata/deletionTimestamp").is_some() {
            "Terminating"
        } else if condition_true(o, "SuccessCriteriaMet") {
            "SuccessCriteriaMet"
        } else if condition_true(o, "FailureTarget") {
            "FailureTarget"
        } else if condition_true(o, "Suspended") {
            "Suspended"
        } else {
            "Running"
        };
        let succeeded = i(o, "/status/succeeded");
        let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
            Some(n) => format!("{succeeded}/{n}"),
            None => {
                let parallelism = o
                    .pointer("/spec/parallelism")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if parallelism > 1 {
                    format!("{succeeded}/1 of {parallelism}")
                } else {
                    format!("{succeeded}/1")
                }
            }
        };
        let start = o
            .pointer("/status/startTime")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok());
        let end = o
            .pointer("/status/completionTime")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok());
        let duration = match (start, end) {
            (None, _) => String::new(),
            (Some(st), None) => human_duration(now.as_second() - st.as_second()),
            (Some(st), Some(en)) => human_duration(en.as_second() - st.as_second()),
        };
        vec![
            name(o),
            json!(status),
            json!(completions),
            json!(duration),
            age(o, now),
            json!(c),
            json!(im),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    },
};

const POD: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        col(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
        ),
        col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        wide(
            "IP",
            "string",
            "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
        ),
        wide(
            "Node",
            "string",
            "NodeName is a request to schedule this pod onto a specific node.",
        ),
        wide(
            "Nominated Node",
            "string",
            "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.",
        ),
        wide(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness.",
        ),
    ],
    cells: |o, now| {
        let total = o
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let statuses = o
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ready = statuses
            .iter()
            .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
            .count();
        let restarts: i64 = statuses
            .iter()
            .map(|c| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0))
            .sum();
        let mut reason = match s(o, "/status/reason") {
            "" => s(o, "/status/phase").to_string(),
            r => r.to_string(),
        };
        for c in &statuses {
            let waiting = s(c, "/state/waiting/reason");
            let terminated = s(c, "/state/terminated/reason");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if !terminated.is_empty() {
                reason = terminated.to_string();
            }
        }
        if o.pointer("/metadata/deletionTimestamp").is_some() {
            reason = "Terminating".into();
        }
        let gates = o
            .pointer("/spec/readinessGates")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        vec![
            name(o),
            json!(format!("{ready}/{total}")),
            json!(reason),
            json!(restarts.to_string()),
            age(o, now),
            json!(none_if_empty(s(o, "/status/podIP").to_string())),
            json!(none_if_empty(s(o, "/spec/nodeName").to_string())),
            json!(none_if_empty(s(o, "/status/nominatedNodeName").to_string())),
            json!(if gates == 0 {
                "<none>".to_string()
            } else {
                format!("0/{gates}")
            }),
        ]
    },
};

const SERVICE: Printer = Printer {
    columns: &[
        NAME,
        col("Type", "string", "The type of the service."),
        col("Cluster-IP", "string", "The cluster IP of the service."),
        col("External-IP", "string", "The external IP of the service."),
        col("Port(s)", "string", "The ports of the service."),
        AGE,
        wide(
            "Selector",
            "string",
            "Route service traffic to pods with label keys and values matching this selector.",
        ),
    ],
    cells: |o, now| {
        let type_ = match s(o, "/spec/type") {
            "" => "ClusterIP",
            t => t,
        };
        let external = match type_ {
            "ExternalName" => s(o, "/spec/externalName").to_string(),
            "LoadBalancer" => {
                let ips: Vec<&str> = o
                    .pointer("/status/loadBalancer/ingress")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.get("ip").or(i.get("hostname")).and_then(Value::as_str))
                    .collect();
                if ips.is_empty() {
                    "<pending>".into()
                } else {
                    ips.join(",")
                }
            }
            _ => {
                let ips: Vec<&str> = o
                    .pointer("/spec/externalIPs")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                none_if_empty(ips.join(","))
            }
        };
        let ports: Vec<String> = o
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| {
                let proto = match s(p, "/protocol") {
                    "" => "TCP",
                    x => x,
                };
                match p.get("nodePort").and_then(Value::as_i64) {
                    Some(np) if np != 0 => format!("{}:{np}/{proto}", i(p, "/port")),
                    _ => format!("{}/{proto}", i(p, "/port")),
                }
            })
            .collect();
        vec![
            name(o),
            json!(type_),
            json!(none_if_empty(s(o, "/spec/clusterIP").to_string())),
            json!(external),
            json!(none_if_empty(ports.join(","))),
            age(o, now),
            json!(format_labels(o.pointer("/spec/selector"))),
        ]
    },
};

fn count(o: &Value, ptrs: &[&str]) -> i64 {
    ptrs.iter()
        .map(|p| {
            o.pointer(p)
                .and_then(Value::as_object)
                .map_or(0, |m| i64::try_from(m.len()).unwrap_or(0))
        })
        .sum()
}

const CONFIG_MAP: Printer = Printer {
    columns: &[
        NAME,
        col("Data", "string", "Data contains the configuration data."),
        AGE,
    ],
    cells: |o, now| {
        vec![
            name(o),
            json!(count(o, &["/data", "/binaryData"])),
            age(o, now),
        ]
    },
};

const SECRET: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Type",
            "string",
            "Used to facilitate programmatic handling of secret data.",
        ),
        col("Data", "string", "Data contains the secret data."),
        AGE,
    ],
    cells: |o, now| {
        let type_ = match s(o, "/type") {
            "" => "Opaque",
            t => t,
        };
        let mut keys: Vec<&String> = Vec::new();
        for p in ["/data", "/stringData"] {
            if let Some(m) = o.pointer(p).and_then(Value::as_object) {
                keys.extend(m.keys());
            }
        }
        keys.sort();
        keys.dedup();
        vec![name(o), json!(type_), json!(keys.len()), age(o, now)]
    },
};

const SERVICE_ACCOUNT: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Secrets",
            "string",
            "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
        ),
        AGE,
    ],
    cells: |o, now| {
        let n = o
            .pointer("/secrets")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        vec![name(o), json!(n), age(o, now)]
    },
};

const NAMESPACE: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "The status of the namespace"),
        AGE,
    ],
    cells: |o, now| vec![name(o), json!(s(o, "/status/phase")), age(o, now)],
};

/// Core `v1` Events: no Name column first, as `kubectl get events` shows them.
const EVENT: Printer = Printer {
    columns: &[
        col(
            "Last Seen",
            "string",
            "Time when last this event was observed.",
        ),
        col(
            "Type",
            "string",
            "Type of this event (Normal, Warning), new types could be added in the future.",
        ),
        col(
            "Reason",
            "string",
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        col("Object", "string", "The object that this event is about."),
        wide(
            "Subobject",
            "string",
            "The subobject of the object this event is about.",
        ),
        wide(
            "Source",
            "string",
            "The component reporting this event. Should be a short machine understandable string.",
        ),
        col(
            "Message",
            "string",
            "A human-readable description of the status of this operation.",
        ),
        wide(
            "First Seen",
            "string",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        ),
        wide(
            "Count",
            "string",
            "The number of times this event has occurred.",
        ),
        wide("Name", "string", NAME_DOC),
    ],
    cells: |o, now| {
        let first = [
            "/firstTimestamp",
            "/eventTime",
            "/metadata/creationTimestamp",
        ]
        .iter()
        .map(|p| s(o, p))
        .find(|t| !t.is_empty());
        let last = ["/series/lastObservedTime", "/lastTimestamp"]
            .iter()
            .map(|p| s(o, p))
            .find(|t| !t.is_empty())
            .or(first);
        let count = o
            .pointer("/series/count")
            .or(o.pointer("/count"))
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let source = {
            let component = match s(o, "/source/component") {
                "" => s(o, "/reportingComponent"),
                c => c,
            };
            let host = match s(o, "/source/host") {
                "" => s(o, "/reportingInstance"),
                h => h,
            };
            if host.is_empty() {
                component.to_string()
            } else {
                format!("{component}, {host}")
            }
        };
        vec![
            json!(age_of(last, now)),
            json!(s(o, "/type")),
            json!(s(o, "/reason")),
            json!(format!(
                "{}/{}",
                s(o, "/involvedObject/kind").to_ascii_lowercase(),
                s(o, "/involvedObject/name")
            )),
            json!(s(o, "/involvedObject/fieldPath")),
            json!(source),
            json!(s(o, "/message").trim()),
            json!(age_of(first, now)),
            json!(count),
            name(o),
        ]
    },
};

/// kube-apiserver's printer for a built-in kind, when we have it.
pub(crate) fn printer(group: &str, kind: &str) -> Option<&'static Printer> {
    Some(match (group, kind) {
        ("apps", "Deployment") => &DEPLOYMENT,
        ("apps", "ReplicaSet") => &REPLICA_SET,
        ("apps", "StatefulSet") => &STATEFUL_SET,
        ("apps", "DaemonSet") => &DAEMON_SET,
        ("batch", "Job") => &JOB,
        ("", "Pod") => &POD,
        ("", "Service") => &SERVICE,
        ("", "ConfigMap") => &CONFIG_MAP,
        ("", "Secret") => &SECRET,
        ("", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("", "Namespace") => &NAMESPACE,
        ("", "Event") | ("events.k8s.io", "Event") => &EVENT,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-01-01T00:10:00Z".parse().unwrap()
    }

    #[test]
    fn deployment_row_is_kubectls() {
        let d = json!({"metadata": {"name": "nginx", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"},
                                                     {"name": "side", "image": "busybox"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        assert_eq!(
            (DEPLOYMENT.cells)(&d, now()),
            vec![
                json!("nginx"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("10m"),
                json!("nginx,side"),
                json!("nginx:1.25,busybox"),
                json!("app=nginx")
            ]
        );
        // A new deployment without status: 0/1 ready.
        let fresh = json!({"metadata": {"name": "x"}, "spec": {}});
        assert_eq!((DEPLOYMENT.cells)(&fresh, now())[1], json!("0/1"));
        assert_eq!((DEPLOYMENT.cells)(&fresh, now())[4], json!("<unknown>"));
    }

    #[test]
    fn selectors_and_labels_format_as_kubectl() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["x", "y"]},
                                 {"key": "gone", "operator": "DoesNotExist"}]});
        // Sorted by key, as `LabelSelectorAsSelector` sorts the requirements.
        assert_eq!(format_selector(Some(&sel)), "a=1,b=2,env in (x,y),!gone");
        assert_eq!(format_labels(None), "<none>");
    }

    #[test]
    fn job_status_and_completions() {
        let j = json!({"metadata": {"name": "pi"}, "spec": {"completions": 1},
            "status": {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z",
                       "completionTime": "2026-01-01T00:00:07Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}});
        let cells = (JOB.cells)(&j, now());
        assert_eq!(
            &cells[1..4],
            &[json!("Complete"), json!("1/1"), json!("7s")]
        );
        let running = json!({"metadata": {"name": "pi"}, "spec": {"parallelism": 2}, "status": {}});
        let cells = (JOB.cells)(&running, now());
        assert_eq!(
            &cells[1..4],
            &[json!("Running"), json!("0/1 of 2"), json!("")]
        );
    }

    #[test]
    fn events_show_the_lowercased_object_and_no_name_first() {
        let e = json!({"metadata": {"name": "p.123", "creationTimestamp": "2026-01-01T00:09:00Z"},
            "type": "Normal", "reason": "DecisionCreate", "message": "Decision p-decision-1 is created with placement p in namespace ns ",
            "involvedObject": {"kind": "Placement", "name": "p"}, "reportingComponent": "placementController"});
        let cells = (EVENT.cells)(&e, now());
        assert_eq!(cells[0], json!("60s"));
        assert_eq!(cells[3], json!("placement/p"));
        assert_eq!(cells[5], json!("placementController"));
        assert_eq!(
            cells[6],
            json!("Decision p-decision-1 is created with placement p in namespace ns")
        );
        assert_eq!(cells[8], json!(1));
    }
}
