//! `apps/v1`: Deployments, ReplicaSets, StatefulSets and DaemonSets.

use serde_json::{Value, json};

use super::field::{Bad, Errors, Path, go_struct, json_str};
use super::pod::{self, PodOpts};
use super::{format, get_i64, get_str, meta, obj_mut, set_default, spec_mut};

/// The annotation `apps/v1` keeps a DaemonSet's template generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

// ---------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------

fn default_template(spec: &mut serde_json::Map<String, Value>) {
    let pod = obj_mut(obj_mut(spec, "template"), "spec");
    pod::default_pod_spec(pod);
}

/// `SetDefaults_Deployment`.
pub(crate) fn default_deployment(d: &mut Value) {
    let Some(spec) = spec_mut(d) else { return };
    set_default(spec, "replicas", json!(1));
    let strategy = obj_mut(spec, "strategy");
    set_default(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let ru = obj_mut(strategy, "rollingUpdate");
        set_default(ru, "maxUnavailable", json!("25%"));
        set_default(ru, "maxSurge", json!("25%"));
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    set_default(spec, "progressDeadlineSeconds", json!(600));
    default_template(spec);
}

/// `SetDefaults_ReplicaSet`.
pub(crate) fn default_replicaset(rs: &mut Value) {
    let Some(spec) = spec_mut(rs) else { return };
    set_default(spec, "replicas", json!(1));
    default_template(spec);
}

/// `SetDefaults_StatefulSet` (with `MaxUnavailableStatefulSet`, on by default since 1.35).
pub(crate) fn default_statefulset(sts: &mut Value) {
    let Some(spec) = spec_mut(sts) else { return };
    set_default(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = obj_mut(spec, "updateStrategy");
    if strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        strategy.insert("type".into(), json!("RollingUpdate"));
        obj_mut(strategy, "rollingUpdate");
    }
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
        && strategy.get("rollingUpdate").is_some_and(|r| !r.is_null())
    {
        let ru = obj_mut(strategy, "rollingUpdate");
        set_default(ru, "partition", json!(0));
        set_default(ru, "maxUnavailable", json!(1));
    }
    let retention = obj_mut(spec, "persistentVolumeClaimRetentionPolicy");
    set_default(retention, "whenDeleted", json!("Retain"));
    set_default(retention, "whenScaled", json!("Retain"));
    set_default(spec, "replicas", json!(1));
    set_default(spec, "revisionHistoryLimit", json!(10));
    default_template(spec);
}

/// `SetDefaults_DaemonSet`.
pub(crate) fn default_daemonset(ds: &mut Value) {
    let Some(spec) = spec_mut(ds) else { return };
    let strategy = obj_mut(spec, "updateStrategy");
    set_default(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let ru = obj_mut(strategy, "rollingUpdate");
        set_default(ru, "maxUnavailable", json!(1));
        set_default(ru, "maxSurge", json!(0));
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    default_template(spec);
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

/// The status a new object of `kind` reads back with (its cleared status, with the fields
/// Go writes even when zero).
pub(crate) fn created_status(kind: &str) -> Option<Value> {
    Some(match kind {
        "Deployment" => json!({}),
        "ReplicaSet" => json!({"replicas": 0}),
        "StatefulSet" => json!({"availableReplicas": 0, "replicas": 0}),
        "DaemonSet" => json!({
            "currentNumberScheduled": 0, "desiredNumberScheduled": 0,
            "numberMisscheduled": 0, "numberReady": 0,
        }),
        _ => return None,
    })
}

fn set_template_generation(ds: &mut Value, generation: i64) {
    if let Some(root) = ds.as_object_mut() {
        let annotations = obj_mut(obj_mut(root, "metadata"), "annotations");
        annotations.insert(TEMPLATE_GENERATION.into(), json!(generation.to_string()));
    }
}

fn template_generation(ds: &Value) -> i64 {
    ds.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A new DaemonSet's template generation is 1.
pub(crate) fn prepare_daemonset_create(ds: &mut Value) {
    set_template_generation(ds, 1);
}

/// A DaemonSet's template generation goes up with each change of its template.
pub(crate) fn prepare_daemonset_update(ds: &mut Value, old: &Value) {
    let before = template_generation(old);
    let changed = ds.pointer("/spec/template") != old.pointer("/spec/template");
    set_template_generation(ds, if changed { before + 1 } else { before });
}

// ---------------------------------------------------------------------------------------
// Shared rules
// ---------------------------------------------------------------------------------------

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn nonneg(v: &Value, field: &str, path: &Path, errs: &mut Errors) {
    if let Some(n) = get_i64(v, field)
        && n < 0
    {
        errs.invalid(
            &path.child(field),
            Bad::Int(n),
            "must be greater than or equal to 0",
        );
    }
}

/// An `IntOrString` as Go writes it.
fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => json_str(s),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".into(),
    }
}

/// `ValidatePositiveIntOrPercent`.
fn positive_int_or_percent(v: Option<&Value>, path: &Path, errs: &mut Errors) {
    match v {
        Some(Value::String(s)) => {
            for m in format::percent_errors(s) {
                errs.invalid(path, Bad::Json(json_str(s)), &m);
            }
        }
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if n < 0 {
                errs.invalid(path, Bad::Int(n), "must be greater than or equal to 0");
            }
        }
        _ => {}
    }
}

/// `getIntOrPercentValue`.
fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::String(s)) => match s.strip_suffix('%') {
            Some(d) if format::percent_errors(s).is_empty() => d.parse().unwrap_or(0),
            _ => s.parse().unwrap_or(0),
        },
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// `IsNotMoreThan100Percent`.
fn not_more_than_100_percent(v: Option<&Value>, path: &Path, errs: &mut Errors) {
    if let Some(Value::String(s)) = v
        && format::percent_errors(s).is_empty()
        && int_or_percent_value(v) > 100
    {
        errs.invalid(
            path,
            Bad::Json(json_str(s)),
            "must not be greater than 100%",
        );
    }
}

/// The selector and template rules `ValidateDeploymentSpec` and `ValidateReplicaSetSpec`
/// share (`ValidatePodTemplateSpecForReplicaSet`), with `what` in the empty-selector
/// message (kube says "deployment" for both).
fn selector_and_template(spec: &Value, path: &Path, kind: &str, errs: &mut Errors) {
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.required(&path.child("selector"), ""),
        Some(sel) => {
            meta::validate_label_selector(Some(sel), &path.child("selector"), errs);
            if meta::selector_is_empty(sel) {
                errs.invalid(
                    &path.child("selector"),
                    Bad::Json(meta::selector_json(sel)),
                    "empty selector is invalid for deployment",
                );
            }
        }
    }
    if let Some(sel) = selector
        && !meta::selector_parses(sel)
    {
        errs.invalid(
            &path.child("selector"),
            Bad::Json(meta::selector_json(sel)),
            "invalid label selector",
        );
        return;
    }
    let tpath = path.child("template");
    let template = spec.get("template");
    template_labels_match(selector, template, &tpath, errs);
    pod::validate_pod_template(template, &tpath, PodOpts::default(), errs);
    restart_always_and_no_deadline(template, &tpath, kind, errs);
}

/// The template's labels must match the selector (a missing selector matches nothing; an
/// empty one everything, and is not checked).
fn template_labels_match(
    selector: Option<&Value>,
    template: Option<&Value>,
    tpath: &Path,
    errs: &mut Errors,
) {
    let labels = template.and_then(|t| t.pointer("/metadata/labels"));
    let matches = match selector {
        None => false,
        Some(sel) if meta::selector_is_empty(sel) => true,
        Some(sel) => meta::selector_matches(sel, labels),
    };
    if !matches {
        errs.invalid(
            &tpath.child("metadata").child("labels"),
            labels.map_or_else(Bad::null, Bad::json),
            "`selector` does not match template `labels`",
        );
    }
}

fn restart_always_and_no_deadline(
    template: Option<&Value>,
    tpath: &Path,
    kind: &str,
    errs: &mut Errors,
) {
    let pod = template.and_then(|t| t.get("spec")).unwrap_or(&Value::Null);
    let restart = get_str(pod, "restartPolicy");
    if restart != "Always" {
        errs.not_supported(
            &tpath.child("spec").child("restartPolicy"),
            Bad::str(restart),
            &["Always"],
        );
    }
    if pod
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.forbidden(
            &tpath.child("spec").child("activeDeadlineSeconds"),
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        );
    }
}

/// An internal apps strategy struct as Go writes it: `{"Type":...,"RollingUpdate":...}`.
fn strategy_json(strategy: &Value, rolling: &[(&str, &str)]) -> String {
    let ru = strategy
        .get("rollingUpdate")
        .filter(|r| !r.is_null())
        .map(|r| {
            let fields: Vec<(&str, Option<String>)> = rolling
                .iter()
                .map(|(go, json)| (*go, Some(int_or_string_or_null(r.get(*json)))))
                .collect();
            go_struct(&fields)
        })
        .unwrap_or_else(|| "null".into());
    go_struct(&[
        ("Type", Some(json_str(get_str(strategy, "type")))),
        ("RollingUpdate", Some(ru)),
    ])
}

fn int_or_string_or_null(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".into(),
        other => int_or_string(other),
    }
}

/// Semantic equality of two values, as apimachinery's `Semantic.DeepEqual` sees them: an
/// empty map or list equals a missing one.
fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    fn norm(v: Option<&Value>) -> Option<Value> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => {
                let m: serde_json::Map<String, Value> = m
                    .iter()
                    .filter_map(|(k, v)| norm(Some(v)).map(|v| (k.clone(), v)))
                    .collect();
                (!m.is_empty()).then_some(Value::Object(m))
            }
            Some(Value::Array(a)) if a.is_empty() => None,
            Some(Value::Array(a)) => Some(Value::Array(
                a.iter()
                    .map(|v| norm(Some(v)).unwrap_or(Value::Null))
                    .collect(),
            )),
            Some(other) => Some(other.clone()),
        }
    }
    norm(a) == norm(b)
}

/// In `apps/v1` a selector may not change (the strategies' `ValidateUpdate`).
fn selector_immutable(new: &Value, old: &Value, errs: &mut Errors) {
    let (n, o) = (spec(new).get("selector"), spec(old).get("selector"));
    if !semantic_eq(n, o) {
        errs.invalid(
            &Path::new("spec").child("selector"),
            Bad::Json(n.map_or_else(|| "null".to_string(), meta::selector_json)),
            "field is immutable",
        );
    }
}

fn collision_count_decremented(new: &Value, old: &Value, errs: &mut Errors) {
    let n = new
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64);
    let o = old
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64);
    let decremented = match (n, o) {
        (None, Some(_)) => true,
        (Some(n), Some(o)) => n < o,
        _ => false,
    };
    if decremented {
        errs.invalid(
            &Path::new("status").child("collisionCount"),
            Bad::Int(n.unwrap_or(0)),
            "cannot be decremented",
        );
    }
}

fn status(obj: &Value) -> &Value {
    obj.get("status").unwrap_or(&Value::Null)
}

fn status_int(obj: &Value, f: &str) -> i64 {
    get_i64(status(obj), f).unwrap_or(0)
}

fn status_nonneg(obj: &Value, fields: &[&str], errs: &mut Errors) {
    let path = Path::new("status");
    for f in fields {
        nonneg(status(obj), f, &path, errs);
    }
}

fn not_more_than(obj: &Value, field: &str, than: &str, detail: &str, errs: &mut Errors) {
    let v = status_int(obj, field);
    if v > status_int(obj, than) {
        errs.invalid(&Path::new("status").child(field), Bad::Int(v), detail);
    }
}

// ---------------------------------------------------------------------------------------
// Deployment
// ---------------------------------------------------------------------------------------

fn validate_deployment_spec(d: &Value, errs: &mut Errors) {
    let s = spec(d);
    let path = Path::new("spec");
    nonneg(s, "replicas", &path, errs);
    selector_and_template(s, &path, "ReplicaSet", errs);
    let strategy = s.get("strategy").unwrap_or(&Value::Null);
    let sp = path.child("strategy");
    match get_str(strategy, "type") {
        "Recreate" => {
            if strategy.get("rollingUpdate").is_some_and(|r| !r.is_null()) {
                errs.forbidden(
                    &sp.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                );
            }
        }
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
            None => errs.required(
                &sp.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            ),
            Some(ru) => {
                let rp = sp.child("rollingUpdate");
                let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                positive_int_or_percent(mu, &rp.child("maxUnavailable"), errs);
                positive_int_or_percent(ms, &rp.child("maxSurge"), errs);
                if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
                    errs.invalid(
                        &rp.child("maxUnavailable"),
                        Bad::Json(int_or_string(mu)),
                        "may not be 0 when `maxSurge` is 0",
                    );
                }
                not_more_than_100_percent(mu, &rp.child("maxUnavailable"), errs);
            }
        },
        _ => errs.not_supported(
            &sp,
            Bad::Json(strategy_json(
                strategy,
                &[
                    ("MaxUnavailable", "maxUnavailable"),
                    ("MaxSurge", "maxSurge"),
                ],
            )),
            &["Recreate", "RollingUpdate"],
        ),
    }
    nonneg(s, "minReadySeconds", &path, errs);
    nonneg(s, "revisionHistoryLimit", &path, errs);
    if let Some(pd) = get_i64(s, "progressDeadlineSeconds") {
        nonneg(s, "progressDeadlineSeconds", &path, errs);
        if pd <= get_i64(s, "minReadySeconds").unwrap_or(0) {
            errs.invalid(
                &path.child("progressDeadlineSeconds"),
                Bad::Int(pd),
                "must be greater than minReadySeconds",
            );
        }
    }
}

/// `ValidateDeployment`.
pub(crate) fn validate_deployment(d: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(d, true, meta::dns_subdomain, errs);
    validate_deployment_spec(d, errs);
}

/// `ValidateDeploymentUpdate`, and the strategy's immutable selector.
pub(crate) fn validate_deployment_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_deployment_spec(new, errs);
    selector_immutable(new, old, errs);
}

/// `ValidateDeploymentStatusUpdate`.
pub(crate) fn validate_deployment_status_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    status_nonneg(
        new,
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "collisionCount",
        ],
        errs,
    );
    let msg = "cannot be greater than status.replicas";
    not_more_than(new, "updatedReplicas", "replicas", msg, errs);
    not_more_than(new, "readyReplicas", "replicas", msg, errs);
    not_more_than(new, "availableReplicas", "replicas", msg, errs);
    not_more_than(
        new,
        "availableReplicas",
        "readyReplicas",
        "cannot be greater than readyReplicas",
        errs,
    );
    collision_count_decremented(new, old, errs);
}

// ---------------------------------------------------------------------------------------
// ReplicaSet
// ---------------------------------------------------------------------------------------

fn validate_replicaset_spec(rs: &Value, errs: &mut Errors) {
    let s = spec(rs);
    let path = Path::new("spec");
    nonneg(s, "replicas", &path, errs);
    nonneg(s, "minReadySeconds", &path, errs);
    selector_and_template(s, &path, "ReplicaSet", errs);
}

/// `ValidateReplicaSet`.
pub(crate) fn validate_replicaset(rs: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(rs, true, meta::dns_subdomain, errs);
    validate_replicaset_spec(rs, errs);
}

/// `ValidateReplicaSetUpdate`, and the strategy's immutable selector.
pub(crate) fn validate_replicaset_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_replicaset_spec(new, errs);
    selector_immutable(new, old, errs);
}

/// `ValidateReplicaSetStatusUpdate`.
pub(crate) fn validate_replicaset_status_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    status_nonneg(
        new,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        errs,
    );
    let msg = "cannot be greater than status.replicas";
    not_more_than(new, "fullyLabeledReplicas", "replicas", msg, errs);
    not_more_than(new, "readyReplicas", "replicas", msg, errs);
    not_more_than(new, "availableReplicas", "replicas", msg, errs);
    not_more_than(
        new,
        "availableReplicas",
        "readyReplicas",
        "cannot be greater than readyReplicas",
        errs,
    );
}

// ---------------------------------------------------------------------------------------
// StatefulSet
// ---------------------------------------------------------------------------------------

/// `ValidateStatefulSetSpec`.
fn validate_statefulset_spec(sts: &Value, errs: &mut Errors) {
    let s = spec(sts);
    let path = Path::new("spec");
    match get_str(s, "podManagementPolicy") {
        "" => errs.required(&path.child("podManagementPolicy"), ""),
        "OrderedReady" | "Parallel" => {}
        other => errs.invalid(
            &path.child("podManagementPolicy"),
            Bad::str(other),
            "must be 'OrderedReady' or 'Parallel'",
        ),
    }
    validate_update_strategy(s, &path, errs);
    if let Some(p) = s
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|p| !p.is_null())
    {
        let pp = path.child("persistentVolumeClaimRetentionPolicy");
        for f in ["whenDeleted", "whenScaled"] {
            let v = get_str(p, f);
            if v != "Retain" && v != "Delete" {
                errs.not_supported(&pp.child(f), Bad::str(v), &["Retain", "Delete"]);
            }
        }
    }
    nonneg(s, "replicas", &path, errs);
    nonneg(s, "minReadySeconds", &path, errs);
    if let Some(start) = s.pointer("/ordinals/start").and_then(Value::as_i64)
        && start < 0
    {
        errs.invalid(
            &path.child("ordinals.start"),
            Bad::Int(start),
            "must be greater than or equal to 0",
        );
    }
    let selector = s.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.required(&path.child("selector"), ""),
        Some(sel) => {
            meta::validate_label_selector(Some(sel), &path.child("selector"), errs);
            if meta::selector_is_empty(sel) {
                errs.invalid(
                    &path.child("selector"),
                    Bad::Json(meta::selector_json(sel)),
                    "empty selector is invalid for statefulset",
                );
            }
        }
    }
    let tpath = path.child("template");
    let template = s.get("template");
    if let Some(sel) = selector
        && !meta::selector_parses(sel)
    {
        errs.invalid(
            &path.child("selector"),
            Bad::Json(meta::selector_json(sel)),
            "",
        );
    } else {
        // kube-apiserver checks a StatefulSet's template labels and annotations, but not
        // its pod spec (a TODO in its validation).
        template_labels_match(selector, template, &tpath, errs);
        let m = template.and_then(|t| t.get("metadata"));
        meta::validate_labels(
            m.and_then(|m| m.get("labels")),
            &tpath.child("labels"),
            errs,
        );
        meta::validate_annotations(
            m.and_then(|m| m.get("annotations")),
            &tpath.child("annotations"),
            errs,
        );
    }
    restart_always_and_no_deadline(template, &tpath, "StatefulSet", errs);
}

/// A StatefulSet's `updateStrategy`: a known type, and rolling update settings only for
/// `RollingUpdate`, with a non-negative partition and a positive `maxUnavailable`.
fn validate_update_strategy(s: &Value, path: &Path, errs: &mut Errors) {
    let strategy = s.get("updateStrategy").unwrap_or(&Value::Null);
    let up = path.child("updateStrategy");
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match get_str(strategy, "type") {
        "" => errs.required(&up, ""),
        "OnDelete" => {
            if let Some(r) = rolling {
                errs.invalid(
                    &up.child("rollingUpdate"),
                    Bad::Json(rolling_update_struct(r)),
                    "only allowed for updateStrategy 'RollingUpdate'",
                );
            }
        }
        "RollingUpdate" => {
            if let Some(r) = rolling {
                let rp = up.child("rollingUpdate");
                nonneg(r, "partition", &rp, errs);
                if let Some(mu) = r.get("maxUnavailable").filter(|m| !m.is_null()) {
                    let mp = rp.child("maxUnavailable");
                    positive_int_or_percent(Some(mu), &mp, errs);
                    if int_or_percent_value(Some(mu)) == 0 {
                        errs.invalid(&mp, Bad::Json(int_or_string(Some(mu))), "cannot be 0");
                    }
                    not_more_than_100_percent(Some(mu), &mp, errs);
                }
            }
        }
        _ => errs.invalid(
            &up,
            Bad::Json(go_struct(&[
                ("Type", Some(json_str(get_str(strategy, "type")))),
                (
                    "RollingUpdate",
                    Some(rolling.map_or_else(|| "null".to_string(), rolling_update_struct)),
                ),
            ])),
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
    }
}

/// A rolling update's settings as kube prints the Go struct in its messages.
fn rolling_update_struct(r: &Value) -> String {
    go_struct(&[
        (
            "Partition",
            Some(get_i64(r, "partition").unwrap_or(0).to_string()),
        ),
        (
            "MaxUnavailable",
            Some(int_or_string_or_null(r.get("maxUnavailable"))),
        ),
    ])
}

/// `ValidateStatefulSet`.
pub(crate) fn validate_statefulset(sts: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(sts, true, meta::dns_label, errs);
    validate_statefulset_spec(sts, errs);
}

/// `ValidateStatefulSetUpdate`: only some spec fields may change.
pub(crate) fn validate_statefulset_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_statefulset_spec(new, errs);
    let mutable = [
        "replicas",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "ordinals",
        "persistentVolumeClaimRetentionPolicy",
    ];
    let strip = |s: &Value| {
        let mut s = s.clone();
        if let Some(m) = s.as_object_mut() {
            for f in mutable {
                m.remove(f);
            }
        }
        s
    };
    if !semantic_eq(Some(&strip(spec(new))), Some(&strip(spec(old)))) {
        errs.forbidden(
            &Path::new("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        );
    }
}

/// `ValidateStatefulSetStatusUpdate`.
pub(crate) fn validate_statefulset_status_update(new: &Value, old: &Value, errs: &mut Errors) {
    status_nonneg(
        new,
        &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ],
        errs,
    );
    let msg = "cannot be greater than status.replicas";
    for f in [
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        not_more_than(new, f, "replicas", msg, errs);
    }
    not_more_than(
        new,
        "availableReplicas",
        "readyReplicas",
        "cannot be greater than status.readyReplicas",
        errs,
    );
    meta::validate_core_object_meta_update(new, old, errs);
    collision_count_decremented(new, old, errs);
}

// ---------------------------------------------------------------------------------------
// DaemonSet
// ---------------------------------------------------------------------------------------

fn validate_daemonset_spec(ds: &Value, errs: &mut Errors) {
    let s = spec(ds);
    let path = Path::new("spec");
    let selector = s.get("selector").filter(|s| !s.is_null());
    meta::validate_label_selector(selector, &path.child("selector"), errs);
    let tpath = path.child("template");
    let template = s.get("template");
    if selector.is_none_or(meta::selector_parses) {
        let labels = template.and_then(|t| t.pointer("/metadata/labels"));
        let matches = match selector {
            None => false,
            Some(sel) if meta::selector_is_empty(sel) => true,
            Some(sel) => meta::selector_matches(sel, labels),
        };
        if !matches {
            errs.invalid(
                &tpath.child("metadata").child("labels"),
                labels.map_or_else(Bad::null, Bad::json),
                "`selector` does not match template `labels`",
            );
        }
    }
    if let Some(sel) = selector
        && meta::selector_is_empty(sel)
    {
        errs.invalid(
            &path.child("selector"),
            Bad::Json(meta::selector_json(sel)),
            "empty selector is invalid for daemonset",
        );
    }
    pod::validate_pod_template(template, &tpath, PodOpts::default(), errs);
    restart_always_and_no_deadline(template, &tpath, "DaemonSet", errs);
    nonneg(s, "minReadySeconds", &path, errs);
    let strategy = s.get("updateStrategy").unwrap_or(&Value::Null);
    let up = path.child("updateStrategy");
    match get_str(strategy, "type") {
        "OnDelete" => {}
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
            None => errs.required(&up.child("rollingUpdate"), ""),
            Some(ru) => {
                let rp = up.child("rollingUpdate");
                let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                positive_int_or_percent(mu, &rp.child("maxUnavailable"), errs);
                positive_int_or_percent(ms, &rp.child("maxSurge"), errs);
                not_more_than_100_percent(mu, &rp.child("maxUnavailable"), errs);
                not_more_than_100_percent(ms, &rp.child("maxSurge"), errs);
                let has_unavailable = int_or_percent_value(mu) != 0;
                let has_surge = int_or_percent_value(ms) != 0;
                if has_unavailable && has_surge {
                    errs.invalid(
                        &rp.child("maxSurge"),
                        Bad::Json(int_or_string(ms)),
                        "may not be set when maxUnavailable is non-zero",
                    );
                } else if !has_unavailable && !has_surge {
                    errs.required(
                        &rp.child("maxUnavailable"),
                        "cannot be 0 when maxSurge is 0",
                    );
                }
            }
        },
        _ => errs.not_supported(
            &up,
            Bad::Json(strategy_json(
                strategy,
                &[
                    ("MaxUnavailable", "maxUnavailable"),
                    ("MaxSurge", "maxSurge"),
                ],
            )),
            &["RollingUpdate", "OnDelete"],
        ),
    }
    nonneg(s, "revisionHistoryLimit", &path, errs);
}

/// `ValidateDaemonSet`.
pub(crate) fn validate_daemonset(ds: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(ds, true, meta::dns_subdomain, errs);
    validate_daemonset_spec(ds, errs);
}

/// `ValidateDaemonSetUpdate`, and the strategy's immutable selector.
pub(crate) fn validate_daemonset_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_daemonset_spec(new, errs);
    selector_immutable(new, old, errs);
}

/// `ValidateDaemonSetStatusUpdate`.
pub(crate) fn validate_daemonset_status_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    status_nonneg(
        new,
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ],
        errs,
    );
    collision_count_decremented(new, old, errs);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Value {
        json!({"metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}})
    }

    fn causes(v: &Value) -> Vec<String> {
        let mut e = Errors::new();
        validate_deployment(v, &mut e);
        e.into_causes()
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn a_defaulted_deployment_is_valid() {
        let mut d = deployment();
        default_deployment(&mut d);
        assert_eq!(causes(&d), Vec::<String>::new());
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    }

    #[test]
    fn a_deployment_without_selector_fails_twice() {
        let mut d = deployment();
        d["spec"].as_object_mut().unwrap().remove("selector");
        default_deployment(&mut d);
        assert_eq!(
            causes(&d),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`",
            ]
        );
    }

    #[test]
    fn strategies_print_as_internal_structs() {
        let mut d = deployment();
        d["spec"]["strategy"] = json!({"type": "Bogus"});
        default_deployment(&mut d);
        assert_eq!(
            causes(&d),
            [
                "spec.strategy: Unsupported value: {\"Type\":\"Bogus\",\"RollingUpdate\":null}: supported values: \"Recreate\", \"RollingUpdate\""
            ]
        );
    }
}
