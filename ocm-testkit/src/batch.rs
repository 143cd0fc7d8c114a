//! `batch/v1` Jobs as kube-apiserver treats them.
//!
//! Three things happen to a Job on its way into a real cluster, and all three
//! matter to controllers that re-apply Jobs (the OCM work agent is one):
//!
//! 1. **Defaulting**, on every write: `completions`/`parallelism` 1,
//!    `backoffLimit` 6, `completionMode: NonIndexed`, `suspend: false`,
//!    `manualSelector: false`, `podReplacementPolicy`, the Job's labels copied
//!    from its pod template when it has none, and the pod-spec defaults of the
//!    template (`dnsPolicy`, `restartPolicy`, `schedulerName`, container
//!    `imagePullPolicy`, port `protocol`, probe timings, volume modes, …).
//! 2. **Selector generation**, on create, unless `spec.manualSelector` is true:
//!    `spec.selector.matchLabels` gets `batch.kubernetes.io/controller-uid`, and
//!    the pod template gets `batch.kubernetes.io/controller-uid`,
//!    `controller-uid`, `batch.kubernetes.io/job-name` and `job-name`.
//! 3. **Validation**: the selector must exist and match the template labels,
//!    and on update `spec.selector`, `spec.template` (except scheduling
//!    directives of a suspended Job that never started), `spec.completions`
//!    (except for Indexed Jobs scaled together with `parallelism`),
//!    `spec.completionMode`, `spec.podFailurePolicy`,
//!    `spec.backoffLimitPerIndex`, `spec.managedBy` and `spec.successPolicy`
//!    are immutable.
//!
//! CronJobs get their defaults too (`concurrencyPolicy: Allow`, `suspend: false`,
//! history limits 3 and 1, and the pod-spec defaults of their Job template).
//!
//! Error values are printed as kube-apiserver prints them (Go syntax for label
//! maps and selectors, quoted `"null"` for absent pointers), except the pod
//! template, which kube-apiserver prints as a Go struct dump and we print as
//! JSON.

use serde_json::{Map, Value, json};

use crate::api_error::Cause;
use crate::selector::LabelSelector;

/// The label the generated selector uses.
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The unprefixed form kept for older clients.
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
/// The Job's name on its pods.
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// The unprefixed form kept for older clients.
const LEGACY_JOB_NAME: &str = "job-name";

fn obj_mut<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let v = m
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if v.is_null() {
        *v = Value::Object(Map::new());
    }
    v.as_object_mut()
}

fn set_default(m: &mut Map<String, Value>, key: &str, value: Value) {
    match m.get(key) {
        None | Some(Value::Null) => {
            m.insert(key.to_string(), value);
        }
        Some(Value::String(s)) if s.is_empty() && value.is_string() => {
            m.insert(key.to_string(), value);
        }
        _ => {}
    }
}

/// Apply the defaults of `batch/v1` Job (and of its pod template).
pub(crate) fn default_job(job: &mut Value) {
    let Some(root) = job.as_object_mut() else {
        return;
    };
    let template_labels = root
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = template_labels
        && let Some(meta) = obj_mut(root, "metadata")
        && meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), labels);
    }
    let Some(spec) = obj_mut(root, "spec") else {
        return;
    };
    let unset = |m: &Map<String, Value>, k: &str| m.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_default(spec, "podReplacementPolicy", json!(replacement));
    set_default(spec, "manualSelector", json!(false));
    if let Some(rules) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
    {
        for rule in rules {
            if let Some(patterns) = rule
                .get_mut("onPodConditions")
                .and_then(Value::as_array_mut)
            {
                for p in patterns.iter_mut().filter_map(Value::as_object_mut) {
                    set_default(p, "status", json!("True"));
                }
            }
        }
    }
    if let Some(pod) = obj_mut(spec, "template").and_then(|t| obj_mut(t, "spec")) {
        default_pod_spec(pod);
    }
}

/// Apply the defaults of `batch/v1` CronJob (and of its Job template's pod spec).
pub(crate) fn default_cronjob(cronjob: &mut Value) {
    let Some(spec) = cronjob.as_object_mut().and_then(|r| obj_mut(r, "spec")) else {
        return;
    };
    set_default(spec, "concurrencyPolicy", json!("Allow"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "successfulJobsHistoryLimit", json!(3));
    set_default(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(pod) = obj_mut(spec, "jobTemplate")
        .and_then(|t| obj_mut(t, "spec"))
        .and_then(|s| obj_mut(s, "template"))
        .and_then(|t| obj_mut(t, "spec"))
    {
        default_pod_spec(pod);
    }
}

/// The defaults kube-apiserver gives a pod spec (inside a template or a Pod).
pub(crate) fn default_pod_spec(pod: &mut Map<String, Value>) {
    set_default(pod, "dnsPolicy", json!("ClusterFirst"));
    set_default(pod, "restartPolicy", json!("Always"));
    set_default(pod, "schedulerName", json!("default-scheduler"));
    set_default(pod, "securityContext", json!({}));
    set_default(pod, "terminationGracePeriodSeconds", json!(30));
    for list in ["initContainers", "containers"] {
        if let Some(cs) = pod.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
    if let Some(vs) = pod.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
}

/// `Always` for images tagged `latest` or not tagged at all, `IfNotPresent` otherwise.
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

fn default_probe(p: &mut Map<String, Value>) {
    set_default(p, "timeoutSeconds", json!(1));
    set_default(p, "periodSeconds", json!(10));
    set_default(p, "successThreshold", json!(1));
    set_default(p, "failureThreshold", json!(3));
    if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
        set_default(h, "path", json!("/"));
        set_default(h, "scheme", json!("HTTP"));
    }
}

fn default_container(c: &mut Map<String, Value>) {
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    set_default(c, "imagePullPolicy", json!(pull_policy(&image)));
    set_default(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for e in env.iter_mut() {
            if let Some(f) = e
                .pointer_mut("/valueFrom/fieldRef")
                .and_then(Value::as_object_mut)
            {
                set_default(f, "apiVersion", json!("v1"));
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            default_probe(p);
        }
    }
}

fn default_volume(v: &mut Map<String, Value>) {
    let has_source = v.keys().any(|k| k != "name");
    if !has_source {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            set_default(s, "defaultMode", json!(420));
        }
    }
}

/// Give a new Job its generated selector and pod labels, unless it asked for a
/// manual selector.
pub(crate) fn generate_selector(job: &mut Value) {
    if job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let uid = job
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(spec) = job.as_object_mut().and_then(|r| obj_mut(r, "spec")) else {
        return;
    };
    if let Some(labels) = obj_mut(spec, "template")
        .and_then(|t| obj_mut(t, "metadata"))
        .and_then(|m| obj_mut(m, "labels"))
    {
        for (key, value) in [
            (LEGACY_JOB_NAME, &name),
            (JOB_NAME, &name),
            (LEGACY_CONTROLLER_UID, &uid),
            (CONTROLLER_UID, &uid),
        ] {
            labels
                .entry(key.to_string())
                .or_insert_with(|| json!(value));
        }
    }
    if let Some(match_labels) = obj_mut(spec, "selector").and_then(|s| obj_mut(s, "matchLabels")) {
        match_labels
            .entry(CONTROLLER_UID.to_string())
            .or_insert_with(|| json!(uid));
    }
}

/// A label map as Go's `%#v` prints a `map[string]string`.
fn go_string_map(m: Option<&Value>) -> String {
    match m.and_then(Value::as_object) {
        None => "map[string]string(nil)".into(),
        Some(m) => {
            let mut pairs: Vec<(&String, String)> = m
                .iter()
                .map(|(k, v)| {
                    (
                        k,
                        ocm_api::k8s::gojson::quote(v.as_str().unwrap_or_default()),
                    )
                })
                .collect();
            pairs.sort();
            let body: Vec<String> = pairs
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", ocm_api::k8s::gojson::quote(k)))
                .collect();
            format!("map[string]string{{{}}}", body.join(", "))
        }
    }
}

/// A label selector as Go's `%#v` prints a `v1.LabelSelector`.
fn go_label_selector(sel: &Value) -> String {
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let s = |k: &str| {
                        ocm_api::k8s::gojson::quote(
                            e.get(k).and_then(Value::as_str).unwrap_or_default(),
                        )
                    };
                    let values = match e.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => format!(
                            "[]string{{{}}}",
                            vs.iter()
                                .map(|v| ocm_api::k8s::gojson::quote(
                                    v.as_str().unwrap_or_default()
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        s("key"),
                        s("operator")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(sel.get("matchLabels"))
    )
}

/// How a field error prints the value it is about, as kube-apiserver does.
fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "\"null\"".into(),
        Some(Value::String(s)) => ocm_api::k8s::gojson::quote(s),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(other) => other.to_string(),
    }
}

fn invalid(field: &str, value: String, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {detail}"),
        field: field.into(),
    }
}

fn required(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: if detail.is_empty() {
            "Required value".into()
        } else {
            format!("Required value: {detail}")
        },
        field: field.into(),
    }
}

fn immutable(field: &str, value: String) -> Cause {
    invalid(field, value, "field is immutable")
}

/// The template labels a generated selector requires.
fn check_generated_labels(job: &Value, prefixed: bool, out: &mut Vec<Cause>) {
    if job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let Some(selector) = job.pointer("/spec/selector").filter(|s| !s.is_null()) else {
        return;
    };
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let uid = job
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if uid.is_empty() {
        out.push(required("metadata.uid", ""));
    }
    let labels = job.pointer("/spec/template/metadata/labels");
    let mut expected = vec![(LEGACY_CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name)];
    if prefixed {
        expected.extend([(CONTROLLER_UID, uid), (JOB_NAME, name)]);
    }
    for (key, want) in &expected {
        let field = format!("spec.template.metadata.labels[{key}]");
        match labels.and_then(|l| l.get(*key)).and_then(Value::as_str) {
            None => out.push(required(&field, &format!("must be '{want}'"))),
            Some(v) if v != *want => out.push(invalid(
                &field,
                go_string_map(labels),
                &format!("must be '{want}'"),
            )),
            Some(_) => {}
        }
    }
    let set: std::collections::BTreeMap<String, String> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Ok(sel) = LabelSelector::from_json(selector)
        && !sel.matches(&set)
    {
        out.push(invalid(
            "spec.selector",
            go_label_selector(selector),
            "`selector` not auto-generated",
        ));
    }
}

fn nonnegative(spec: &Value, field: &str, out: &mut Vec<Cause>) {
    if let Some(n) = spec.get(field).and_then(Value::as_i64)
        && n < 0
    {
        out.push(invalid(
            &format!("spec.{field}"),
            n.to_string(),
            "must be greater than or equal to 0",
        ));
    }
}

/// What kube-apiserver checks on the spec of any Job it stores (`ValidateJobSpec`).
fn check_spec(job: &Value, out: &mut Vec<Cause>) {
    let empty = json!({});
    let spec = job.get("spec").unwrap_or(&empty);
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        nonnegative(spec, f, out);
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    match mode {
        None | Some("NonIndexed") => {
            for f in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if let Some(v) = spec.get(f).filter(|v| !v.is_null()) {
                    out.push(invalid(
                        &format!("spec.{f}"),
                        shown(Some(v)),
                        "requires indexed completion mode",
                    ));
                }
            }
        }
        Some("Indexed") => {
            if spec.get("completions").is_none_or(Value::is_null) {
                out.push(required(
                    "spec.completions",
                    "when completion mode is Indexed",
                ));
            }
        }
        Some(other) => out.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"NonIndexed\", \"Indexed\"",
                ocm_api::k8s::gojson::quote(other)
            ),
            field: "spec.completionMode".into(),
        }),
    }
    if let Some(p) = spec.get("podReplacementPolicy").and_then(Value::as_str)
        && p != "Failed"
        && p != "TerminatingOrFailed"
    {
        out.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"Failed\", \"TerminatingOrFailed\"",
                ocm_api::k8s::gojson::quote(p)
            ),
            field: "spec.podReplacementPolicy".into(),
        });
    }
    let restart = spec
        .pointer("/template/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match restart {
        "" | "Always" => out.push(required(
            "spec.template.spec.restartPolicy",
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if spec.get("podFailurePolicy").is_some_and(|p| !p.is_null()) => {
            out.push(invalid(
                "spec.template.spec.restartPolicy",
                ocm_api::k8s::gojson::quote(restart),
                "only \"Never\" is supported when podFailurePolicy is specified",
            ))
        }
        "OnFailure" | "Never" => {}
        other => out.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"OnFailure\", \"Never\"",
                ocm_api::k8s::gojson::quote(other)
            ),
            field: "spec.template.spec.restartPolicy".into(),
        }),
    }
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            out.push(required("spec.selector", ""));
            // A nil selector matches nothing, so the template never matches it.
            out.push(invalid(
                "spec.template.metadata.labels",
                go_string_map(spec.pointer("/template/metadata/labels")),
                "`selector` does not match template `labels`",
            ));
        }
        Some(sel) => {
            let labels: std::collections::BTreeMap<String, String> = spec
                .pointer("/template/metadata/labels")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            if let Ok(s) = LabelSelector::from_json(sel)
                && !s.matches(&labels)
            {
                out.push(invalid(
                    "spec.template.metadata.labels",
                    go_string_map(spec.pointer("/template/metadata/labels")),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
}

/// Causes for a new Job (after defaulting and selector generation).
pub(crate) fn validate_create(job: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    check_generated_labels(job, true, &mut out);
    check_spec(job, &mut out);
    out
}

/// Remove the template parts a suspended Job that never started may change.
fn scheduling_free(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(meta) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("labels");
        meta.remove("annotations");
    }
    if let Some(pod) = t.get_mut("spec").and_then(Value::as_object_mut) {
        for f in ["nodeSelector", "tolerations", "schedulingGates"] {
            pod.remove(f);
        }
        // Node affinity may change; the other affinity kinds may not.
        let mut affinity = pod.remove("affinity").unwrap_or(Value::Null);
        if let Some(a) = affinity.as_object_mut() {
            a.remove("nodeAffinity");
            if a.is_empty() {
                affinity = Value::Null;
            }
        }
        if !affinity.is_null() {
            pod.insert("affinity".into(), affinity);
        }
    }
    t
}

/// Causes for an update of `old` to `job` (both defaulted).
pub(crate) fn validate_update(job: &Value, old: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let old_labels = old.pointer("/spec/template/metadata/labels");
    let prefixed = old_labels.is_some_and(|l| l.get(JOB_NAME).is_some())
        && old_labels.is_some_and(|l| l.get(CONTROLLER_UID).is_some());
    check_generated_labels(job, prefixed, &mut out);
    check_spec(job, &mut out);
    // The update rules run the spec checks a second time, as kube-apiserver
    // does: the causes repeat, the message lists each once.
    check_spec(job, &mut out);
    let empty = json!({});
    let spec = job.get("spec").unwrap_or(&empty);
    let old_spec = old.get("spec").unwrap_or(&empty);
    let get = |s: &Value, f: &str| s.get(f).filter(|v| !v.is_null()).cloned();
    // completions
    let (nc, oc) = (get(spec, "completions"), get(old_spec, "completions"));
    if nc != oc {
        let indexed = spec.get("completionMode").and_then(Value::as_str) == Some("Indexed");
        if !indexed {
            out.push(immutable("spec.completions", shown(nc.as_ref())));
        } else if let Some(n) = &nc
            && Some(n) != get(spec, "parallelism").as_ref()
        {
            out.push(invalid(
                "spec.completions",
                shown(Some(n)),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    // selector
    let (ns, os) = (get(spec, "selector"), get(old_spec, "selector"));
    if ns != os {
        let value = match &ns {
            Some(s) => go_label_selector(s),
            None => "\"null\"".into(),
        };
        out.push(immutable("spec.selector", value));
    }
    // template
    let nt = get(spec, "template").unwrap_or_else(|| json!({}));
    let ot = get(old_spec, "template").unwrap_or_else(|| json!({}));
    let suspended = old_spec.get("suspend").and_then(Value::as_bool) == Some(true);
    let not_started = old.pointer("/status/startTime").is_none_or(Value::is_null);
    let same = if suspended && not_started {
        scheduling_free(&nt) == scheduling_free(&ot)
    } else {
        nt == ot
    };
    if !same {
        out.push(immutable("spec.template", nt.to_string()));
    }
    for f in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        let (n, o) = (get(spec, f), get(old_spec, f));
        if n != o {
            out.push(immutable(&format!("spec.{f}"), shown(n.as_ref())));
        }
    }
    out
}
