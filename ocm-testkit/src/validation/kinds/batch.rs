//! `batch/v1` Jobs and CronJobs as kube-apiserver treats them.
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
//! 3. **Validation**: the metadata, the pod template, the selector (it must exist
//!    and match the template labels), and on update `spec.selector`,
//!    `spec.template` (except scheduling directives of a suspended Job that never
//!    started), `spec.completions` (except for Indexed Jobs scaled together with
//!    `parallelism`), `spec.completionMode`, `spec.podFailurePolicy`,
//!    `spec.backoffLimitPerIndex`, `spec.managedBy` and `spec.successPolicy`
//!    are immutable.
//!
//! CronJobs get their defaults too (`concurrencyPolicy: Allow`, `suspend: false`,
//! history limits 3 and 1, and the pod-spec defaults of their Job template), and
//! their rules: a schedule `cron.ParseStandard` reads, a concurrency policy, a Job
//! template whose selector is left to the controller, a name of at most 52 characters.
//!
//! Error values are printed as kube-apiserver v1.36 prints them (Go's JSON), except a
//! whole pod template, which kube-apiserver prints as the JSON of its internal Go
//! struct (Go field names, every zero value) and we print as the JSON of the object.

use serde_json::{Map, Value, json};

use super::field::{Bad, Errors, Path};
use super::pod::{self, PodOpts};
use super::{cron, get_str, meta, obj_mut, set_default};

/// The label the generated selector uses.
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The unprefixed form kept for older clients.
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
/// The Job's name on its pods.
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// The unprefixed form kept for older clients.
const LEGACY_JOB_NAME: &str = "job-name";

fn unset(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_none_or(Value::is_null)
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
    if let Some(labels) = template_labels {
        let meta = obj_mut(root, "metadata");
        if meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        {
            meta.insert("labels".into(), labels);
        }
    }
    let spec = obj_mut(root, "spec");
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
    pod::default_pod_spec(obj_mut(obj_mut(spec, "template"), "spec"));
}

/// Apply the defaults of `batch/v1` CronJob (and of its Job template's pod spec).
pub(crate) fn default_cronjob(cronjob: &mut Value) {
    let Some(root) = cronjob.as_object_mut() else {
        return;
    };
    let spec = obj_mut(root, "spec");
    set_default(spec, "concurrencyPolicy", json!("Allow"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "successfulJobsHistoryLimit", json!(3));
    set_default(spec, "failedJobsHistoryLimit", json!(1));
    let template = obj_mut(obj_mut(obj_mut(spec, "jobTemplate"), "spec"), "template");
    pod::default_pod_spec(obj_mut(template, "spec"));
}

/// A new Job: its generated selector and pod labels, then the defaults reading it back
/// gives (its labels now come from the template's generated ones).
pub(crate) fn prepare_job_create(job: &mut Value) {
    generate_selector(job);
    default_job(job);
}

/// Give a new Job its generated selector and pod labels, unless it asked for a
/// manual selector.
fn generate_selector(job: &mut Value) {
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
    let Some(root) = job.as_object_mut() else {
        return;
    };
    let spec = obj_mut(root, "spec");
    let labels = obj_mut(obj_mut(obj_mut(spec, "template"), "metadata"), "labels");
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
    obj_mut(obj_mut(spec, "selector"), "matchLabels")
        .entry(CONTROLLER_UID.to_string())
        .or_insert_with(|| json!(uid));
}

fn nullable(v: Option<&Value>) -> Bad {
    match v {
        None | Some(Value::Null) => Bad::null(),
        Some(Value::String(s)) => Bad::Str(s.clone()),
        Some(Value::Number(n)) => n.as_i64().map_or_else(|| Bad::json(&json!(n)), Bad::Int),
        Some(other) => Bad::json(other),
    }
}

fn selector_bad(sel: Option<&Value>) -> Bad {
    match sel {
        None | Some(Value::Null) => Bad::null(),
        Some(s) => Bad::Json(meta::selector_json(s)),
    }
}

fn labels_bad(labels: Option<&Value>) -> Bad {
    labels
        .filter(|l| !l.is_null())
        .map_or_else(Bad::null, Bad::json)
}

/// The template labels a generated selector requires (`validateGeneratedSelector`).
fn check_generated_labels(job: &Value, prefixed: bool, errs: &mut Errors) {
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
        errs.required(&Path::new("metadata").child("uid"), "");
    }
    let labels = job.pointer("/spec/template/metadata/labels");
    let mut expected = vec![(LEGACY_CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name)];
    if prefixed {
        expected.extend([(CONTROLLER_UID, uid), (JOB_NAME, name)]);
    }
    let labels_path = Path::new("spec")
        .child("template")
        .child("metadata")
        .child("labels");
    for (key, want) in &expected {
        let field = labels_path.key(key);
        match labels.and_then(|l| l.get(*key)).and_then(Value::as_str) {
            None => errs.required(&field, &format!("must be '{want}'")),
            Some(v) if v != *want => {
                errs.invalid(&field, labels_bad(labels), &format!("must be '{want}'"))
            }
            Some(_) => {}
        }
    }
    let set: Map<String, Value> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    if !meta::selector_matches(selector, Some(&Value::Object(set)))
        && meta::selector_parses(selector)
    {
        errs.invalid(
            &Path::new("spec").child("selector"),
            selector_bad(Some(selector)),
            "`selector` not auto-generated",
        );
    }
}

fn nonnegative(spec: &Value, field: &str, path: &Path, errs: &mut Errors) {
    if let Some(n) = spec.get(field).and_then(Value::as_i64)
        && n < 0
    {
        errs.invalid(
            &path.child(field),
            Bad::Int(n),
            "must be greater than or equal to 0",
        );
    }
}

/// `validateJobSpec`: what a Job's spec and a CronJob's Job template share.
fn check_job_spec(spec: &Value, path: &Path, errs: &mut Errors) {
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        nonnegative(spec, f, path, errs);
    }
    match spec.get("completionMode").and_then(Value::as_str) {
        None | Some("NonIndexed") => {
            for f in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if let Some(v) = spec.get(f).filter(|v| !v.is_null()) {
                    errs.invalid(
                        &path.child(f),
                        nullable(Some(v)),
                        "requires indexed completion mode",
                    );
                }
            }
        }
        Some("Indexed") => {
            if spec.get("completions").is_none_or(Value::is_null) {
                errs.required(
                    &path.child("completions"),
                    "when completion mode is Indexed",
                );
            }
        }
        Some(other) => errs.not_supported(
            &path.child("completionMode"),
            Bad::str(other),
            &["NonIndexed", "Indexed"],
        ),
    }
    if let Some(p) = spec.get("podReplacementPolicy").and_then(Value::as_str)
        && p != "Failed"
        && p != "TerminatingOrFailed"
    {
        errs.not_supported(
            &path.child("podReplacementPolicy"),
            Bad::str(p),
            &["Failed", "TerminatingOrFailed"],
        );
    }
    let template_path = path.child("template");
    pod::validate_pod_template(
        spec.get("template"),
        &template_path,
        PodOpts::default(),
        errs,
    );
    let restart_path = template_path.child("spec").child("restartPolicy");
    let restart = spec
        .pointer("/template/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match restart {
        "" | "Always" => errs.required(&restart_path, "valid values: \"OnFailure\", \"Never\""),
        "OnFailure" if spec.get("podFailurePolicy").is_some_and(|p| !p.is_null()) => errs.invalid(
            &restart_path,
            Bad::str(restart),
            "only \"Never\" is supported when podFailurePolicy is specified",
        ),
        "OnFailure" | "Never" => {}
        other => errs.not_supported(&restart_path, Bad::str(other), &["OnFailure", "Never"]),
    }
}

/// `ValidateJobSpec`: the shared rules, then the selector.
fn check_spec(job: &Value, errs: &mut Errors) {
    let empty = json!({});
    let spec = job.get("spec").unwrap_or(&empty);
    let path = Path::new("spec");
    check_job_spec(spec, &path, errs);
    let labels = spec.pointer("/template/metadata/labels");
    let labels_path = path.child("template").child("metadata").child("labels");
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            errs.required(&path.child("selector"), "");
            // A nil selector matches nothing, so the template never matches it.
            errs.invalid(
                &labels_path,
                labels_bad(labels),
                "`selector` does not match template `labels`",
            );
        }
        Some(sel) => {
            meta::validate_label_selector(Some(sel), &path.child("selector"), errs);
            if meta::selector_parses(sel)
                && !meta::selector_is_empty(sel)
                && !meta::selector_matches(sel, labels)
            {
                errs.invalid(
                    &labels_path,
                    labels_bad(labels),
                    "`selector` does not match template `labels`",
                );
            }
        }
    }
}

/// `ValidateJob` (a new Job, after defaulting and selector generation).
pub(crate) fn validate_job(job: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(job, true, meta::dns_subdomain, errs);
    check_generated_labels(job, true, errs);
    check_spec(job, errs);
    indexed_hostname(job, errs);
}

/// An Indexed Job's pods are named `<job>-<index>`: that must be a DNS label.
fn indexed_hostname(job: &Value, errs: &mut Errors) {
    let indexed = job.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    let completions = job
        .pointer("/spec/completions")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !indexed || completions <= 0 {
        return;
    }
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let host = format!("{name}-{}", completions - 1);
    if !ocm_api::k8s::names::dns1123_label_errors(&host).is_empty() {
        errs.invalid(
            &Path::new("metadata").child("name"),
            Bad::str(name),
            &format!("will not able to create pod with invalid DNS label: {host}"),
        );
    }
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

/// The strategy's `ValidateUpdate`: `ValidateJob`, then `ValidateJobUpdate` (which
/// checks the spec again: its causes repeat, the message lists each once).
pub(crate) fn validate_job_update(job: &Value, old: &Value, errs: &mut Errors) {
    let old_labels = old.pointer("/spec/template/metadata/labels");
    let prefixed = old_labels.is_some_and(|l| l.get(JOB_NAME).is_some())
        && old_labels.is_some_and(|l| l.get(CONTROLLER_UID).is_some());
    meta::validate_core_object_meta(job, true, meta::dns_subdomain, errs);
    check_generated_labels(job, prefixed, errs);
    check_spec(job, errs);
    meta::validate_core_object_meta_update(job, old, errs);
    check_spec(job, errs);
    let empty = json!({});
    let spec = job.get("spec").unwrap_or(&empty);
    let old_spec = old.get("spec").unwrap_or(&empty);
    let get = |s: &Value, f: &str| s.get(f).filter(|v| !v.is_null()).cloned();
    let sp = Path::new("spec");
    // completions
    let (nc, oc) = (get(spec, "completions"), get(old_spec, "completions"));
    if nc != oc {
        let indexed = spec.get("completionMode").and_then(Value::as_str) == Some("Indexed");
        if !indexed {
            errs.invalid(
                &sp.child("completions"),
                nullable(nc.as_ref()),
                "field is immutable",
            );
        } else if let Some(n) = &nc
            && Some(n) != get(spec, "parallelism").as_ref()
        {
            errs.invalid(
                &sp.child("completions"),
                nullable(Some(n)),
                "can only be modified in tandem with spec.parallelism",
            );
        }
    }
    // selector
    let (ns, os) = (get(spec, "selector"), get(old_spec, "selector"));
    if ns != os {
        errs.invalid(
            &sp.child("selector"),
            selector_bad(ns.as_ref()),
            "field is immutable",
        );
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
        errs.invalid(&sp.child("template"), Bad::json(&nt), "field is immutable");
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
            errs.invalid(&sp.child(f), nullable(n.as_ref()), "field is immutable");
        }
    }
}

// ---------------------------------------------------------------------------------------
// CronJob
// ---------------------------------------------------------------------------------------

/// The longest CronJob name: its Jobs add an 11-character suffix to it.
const MAX_CRONJOB_NAME: usize = 52;

fn validate_cronjob_spec(cj: &Value, old: Option<&Value>, errs: &mut Errors) {
    let empty = json!({});
    let spec = cj.get("spec").unwrap_or(&empty);
    let path = Path::new("spec");
    let schedule = get_str(spec, "schedule");
    let sched_path = path.child("schedule");
    if schedule.is_empty() {
        errs.required(&sched_path, "");
    } else {
        if let Err(e) = cron::parse_standard(schedule) {
            errs.invalid(&sched_path, Bad::str(schedule), &e);
        }
        let allow_tz = old
            .and_then(|o| o.pointer("/spec/schedule"))
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("TZ"));
        let has_time_zone = spec.get("timeZone").is_some_and(|t| !t.is_null());
        if allow_tz && schedule.contains("TZ") && has_time_zone {
            errs.invalid(
                &sched_path,
                Bad::str(schedule),
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            );
        } else if !allow_tz && schedule.contains("TZ") {
            errs.invalid(
                &sched_path,
                Bad::str(schedule),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            );
        }
    }
    nonnegative(spec, "startingDeadlineSeconds", &path, errs);
    let tz = spec.get("timeZone").and_then(Value::as_str);
    let old_tz = old
        .and_then(|o| o.pointer("/spec/timeZone"))
        .and_then(Value::as_str);
    if let Some(tz) = tz
        && (old.is_none() || old_tz != Some(tz))
    {
        validate_time_zone(tz, &path.child("timeZone"), errs);
    }
    let cp = path.child("concurrencyPolicy");
    match get_str(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.required(&cp, ""),
        other => errs.not_supported(&cp, Bad::str(other), &["Allow", "Forbid", "Replace"]),
    }
    let tp = path.child("jobTemplate");
    let template_spec = spec.pointer("/jobTemplate/spec").unwrap_or(&empty);
    check_job_spec(template_spec, &tp.child("spec"), errs);
    if let Some(sel) = template_spec.get("selector").filter(|s| !s.is_null()) {
        errs.invalid(
            &tp.child("spec").child("selector"),
            selector_bad(Some(sel)),
            "`selector` will be auto-generated",
        );
    }
    if template_spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.not_supported(
            &tp.child("spec").child("manualSelector"),
            Bad::Bool(true),
            &["nil", "false"],
        );
    }
    nonnegative(spec, "successfulJobsHistoryLimit", &path, errs);
    nonnegative(spec, "failedJobsHistoryLimit", &path, errs);
}

/// `validateTimeZone`, without the time zone database: an explicit, well-formed name.
fn validate_time_zone(tz: &str, path: &Path, errs: &mut Errors) {
    let bad = Bad::Json(super::field::json_str(tz));
    if tz.is_empty() {
        errs.invalid(path, bad, "timeZone must be nil or non-empty string");
        return;
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && !p.is_empty()
            && p.len() <= 14
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'))
    };
    if !tz.split('/').all(part_ok) {
        errs.invalid(path, bad, &format!("unknown time zone {tz}"));
        return;
    }
    if tz.eq_ignore_ascii_case("Local") {
        errs.invalid(
            path,
            bad,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        );
    }
}

/// `ValidateCronJobCreate`.
pub(crate) fn validate_cronjob(cj: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(cj, true, meta::dns_subdomain, errs);
    validate_cronjob_spec(cj, None, errs);
    let name = cj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.len() > MAX_CRONJOB_NAME {
        errs.invalid(
            &Path::new("metadata").child("name"),
            Bad::str(name),
            "must be no more than 52 characters",
        );
    }
}

/// `ValidateCronJobUpdate`.
pub(crate) fn validate_cronjob_update(cj: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(cj, old, errs);
    validate_cronjob_spec(cj, Some(old), errs);
}
