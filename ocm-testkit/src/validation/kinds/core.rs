//! Core kinds other than Services: ConfigMaps, Secrets, ServiceAccounts, Namespaces,
//! PersistentVolumeClaims and Pods.

use serde_json::{Map, Value, json};

use super::field::{Bad, Errors, Path, json_str};
use super::pod::{self, PodOpts};
use super::{arr, format, get_i64, get_str, meta, obj_mut, quantity, set_default, spec_mut};

/// `core.MaxSecretSize`: the most data a ConfigMap or a Secret may hold (1 MiB).
pub(crate) const MAX_SECRET_SIZE: usize = 1024 * 1024;

fn sorted_keys(m: Option<&Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = m
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// How many bytes a base64 text decodes to.
fn decoded_len(b64: &str) -> usize {
    let trimmed = b64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

// ---------------------------------------------------------------------------------------
// ConfigMap
// ---------------------------------------------------------------------------------------

/// `ValidateConfigMap`.
pub(crate) fn validate_configmap(cm: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(cm, true, meta::dns_subdomain, errs);
    let data = cm.get("data");
    let binary = cm.get("binaryData").and_then(Value::as_object);
    let mut total = 0usize;
    for k in sorted_keys(data) {
        let p = Path::new("data").key(k);
        errs.invalid_each(&p, k, format::config_key_errors(k));
        if binary.is_some_and(|b| b.contains_key(k)) {
            errs.invalid(&p, Bad::str(k), "duplicate of key present in binaryData");
        }
        total += data
            .and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .map_or(0, str::len);
    }
    for k in sorted_keys(cm.get("binaryData")) {
        errs.invalid_each(
            &Path::new("binaryData").key(k),
            k,
            format::config_key_errors(k),
        );
        total += binary
            .and_then(|b| b.get(k))
            .and_then(Value::as_str)
            .map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        errs.too_long(&Path::whole_object(), MAX_SECRET_SIZE);
    }
}

fn immutable_data_rules(new: &Value, old: &Value, fields: &[&str], errs: &mut Errors) {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return;
    }
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.forbidden(
            &Path::new("immutable"),
            "field is immutable when `immutable` is set",
        );
    }
    for f in fields {
        let norm = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
        if norm(new.get(*f)) != norm(old.get(*f)) {
            errs.forbidden(&Path::new(f), "field is immutable when `immutable` is set");
        }
    }
}

/// `ValidateConfigMapUpdate`.
pub(crate) fn validate_configmap_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    immutable_data_rules(new, old, &["data", "binaryData"], errs);
    validate_configmap(new, errs);
}

// ---------------------------------------------------------------------------------------
// Secret
// ---------------------------------------------------------------------------------------

/// Standard base64 with padding, as Go's `encoding/json` writes `[]byte`.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A Secret as decoding gives it: `stringData` merged into `data` (and dropped, it is
/// write-only), and `type` defaulted to `Opaque`.
pub(crate) fn default_secret(secret: &mut Value) {
    let Some(root) = secret.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(strings)) = root.remove("stringData") {
        let data = obj_mut(root, "data");
        for (k, v) in strings {
            let text = v.as_str().unwrap_or_default();
            data.insert(k, json!(base64(text.as_bytes())));
        }
    }
    set_default(root, "type", json!("Opaque"));
}

/// `ValidateSecret`.
pub(crate) fn validate_secret(secret: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(secret, true, meta::dns_subdomain, errs);
    let data_path = Path::new("data");
    let data = secret.get("data");
    let mut total = 0usize;
    for k in sorted_keys(data) {
        errs.invalid_each(&data_path.key(k), k, format::config_key_errors(k));
        total += data
            .and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        errs.too_long(&data_path, MAX_SECRET_SIZE);
    }
    let has = |k: &str| data.and_then(|d| d.get(k)).is_some();
    let json_key = |k: &str, errs: &mut Errors| {
        let Some(v) = data.and_then(|d| d.get(k)).and_then(Value::as_str) else {
            errs.required(&data_path.key(k), "");
            return;
        };
        let bytes = decode_base64(v);
        if let Err(e) = serde_json::from_slice::<Map<String, Value>>(&bytes) {
            errs.invalid(
                &data_path.key(k),
                Bad::str("<secret contents redacted>"),
                &go_json_error(&bytes, &e),
            );
        }
    };
    match get_str(secret, "type") {
        "kubernetes.io/service-account-token" => {
            let name = secret
                .pointer("/metadata/annotations")
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name.is_empty() {
                errs.required(
                    &Path::new("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                );
            }
        }
        "kubernetes.io/dockercfg" => json_key(".dockercfg", errs),
        "kubernetes.io/dockerconfigjson" => json_key(".dockerconfigjson", errs),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errs.required(&data_path.key("username"), "");
            errs.required(&data_path.key("password"), "");
        }
        "kubernetes.io/ssh-auth" => {
            let empty = data
                .and_then(|d| d.get("ssh-privatekey"))
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if empty {
                errs.required(&data_path.key("ssh-privatekey"), "");
            }
        }
        "kubernetes.io/tls" => {
            for k in ["tls.crt", "tls.key"] {
                if !has(k) {
                    errs.required(&data_path.key(k), "");
                }
            }
        }
        _ => {}
    }
}

fn decode_base64(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut buf = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((buf >> bits) & 0xff) as u8);
        }
    }
    out
}

/// The start of Go's `encoding/json` error for a document that is not a JSON object.
fn go_json_error(bytes: &[u8], e: &serde_json::Error) -> String {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => "unexpected end of JSON input".into(),
        Some(b)
            if !matches!(
                b,
                b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            ) =>
        {
            format!(
                "invalid character '{}' looking for beginning of value",
                char::from(*b)
            )
        }
        Some(b'{') if e.is_eof() => "unexpected end of JSON input".into(),
        Some(b'{') => e.to_string(),
        Some(_) => "json: cannot unmarshal into Go value of type map[string]interface {}".into(),
    }
}

/// `ValidateSecretUpdate`.
pub(crate) fn validate_secret_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    let (nt, ot) = (get_str(new, "type"), get_str(old, "type"));
    if nt != ot {
        errs.invalid(
            &Path::new("type"),
            Bad::Json(json_str(nt)),
            "field is immutable",
        );
    }
    immutable_data_rules(new, old, &["data"], errs);
    validate_secret(new, errs);
}

// ---------------------------------------------------------------------------------------
// ServiceAccount, Namespace
// ---------------------------------------------------------------------------------------

/// `ValidateServiceAccount`.
pub(crate) fn validate_service_account(sa: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(sa, true, meta::dns_subdomain, errs);
}

/// `ValidateServiceAccountUpdate`.
pub(crate) fn validate_service_account_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_service_account(new, errs);
}

/// `ValidateNamespace`.
pub(crate) fn validate_namespace(ns: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(ns, false, meta::dns_label, errs);
    let path = Path::new("spec").child("finalizers");
    for f in arr(ns.get("spec").unwrap_or(&Value::Null), "finalizers") {
        let f = f.as_str().unwrap_or_default();
        errs.invalid_each(&path, f, ocm_api::k8s::names::label_key_errors(f));
        if !f.contains('/') && !matches!(f, "kubernetes" | "orphan" | "foregroundDeletion") {
            errs.invalid(
                &path,
                Bad::str(f),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

/// `ValidateNamespaceUpdate`.
pub(crate) fn validate_namespace_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
}

// ---------------------------------------------------------------------------------------
// PersistentVolumeClaim
// ---------------------------------------------------------------------------------------

/// `SetDefaults_PersistentVolumeClaim`: `volumeMode: Filesystem`.
pub(crate) fn default_pvc(pvc: &mut Value) {
    if let Some(spec) = spec_mut(pvc) {
        set_default(spec, "volumeMode", json!("Filesystem"));
        if let Some(res) = spec.get_mut("resources") {
            quantity::canonical_resource_list(res.get_mut("requests"));
            quantity::canonical_resource_list(res.get_mut("limits"));
        }
    }
}

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// `ValidatePersistentVolumeClaimSpec`.
pub(crate) fn validate_pvc_spec(spec: &Value, path: &Path, errs: &mut Errors) {
    let modes = arr(spec, "accessModes");
    if modes.is_empty() {
        errs.required(
            &path.child("accessModes"),
            "at least 1 access mode is required",
        );
    }
    meta::validate_label_selector(spec.get("selector"), &path.child("selector"), errs);
    let (mut rwop, mut other) = (false, false);
    for m in modes {
        let m = m.as_str().unwrap_or_default();
        if !ACCESS_MODES.contains(&m) {
            errs.not_supported(&path.child("accessModes"), Bad::str(m), ACCESS_MODES);
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.forbidden(
            &path.child("accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        );
    }
    let storage_path = path.child("resources").key("storage");
    match spec.pointer("/resources/requests/storage") {
        None | Some(Value::Null) => errs.required(&storage_path, ""),
        Some(q) => {
            let s = q
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| q.to_string());
            if ocm_api::k8s::quantity::approximate_f64(&s).is_some_and(|v| v <= 0.0) {
                errs.invalid(&storage_path, Bad::Str(s), "must be greater than zero");
            }
        }
    }
    if let Some(sc) = spec.get("storageClassName").and_then(Value::as_str)
        && !sc.is_empty()
    {
        errs.invalid_each(
            &path.child("storageClassName"),
            sc,
            meta::dns_subdomain(sc, false),
        );
    }
    if let Some(vm) = spec.get("volumeMode").and_then(Value::as_str)
        && vm != "Block"
        && vm != "Filesystem"
    {
        errs.not_supported(
            &path.child("volumeMode"),
            Bad::str(vm),
            &["Block", "Filesystem"],
        );
    }
    for (f, namespaced) in [("dataSource", false), ("dataSourceRef", true)] {
        let Some(ds) = spec.get(f).filter(|d| !d.is_null()) else {
            continue;
        };
        let dp = path.child(f);
        if get_str(ds, "name").is_empty() {
            errs.required(&dp.child("name"), "");
        }
        let kind = get_str(ds, "kind");
        if kind.is_empty() {
            errs.required(&dp.child("kind"), "");
        }
        let group = get_str(ds, "apiGroup");
        if group.is_empty() && kind != "PersistentVolumeClaim" {
            errs.invalid(
                &dp,
                Bad::str(kind),
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            );
        }
        if !group.is_empty() {
            errs.invalid_each(
                &dp.child("apiGroup"),
                group,
                ocm_api::k8s::names::dns1123_subdomain_errors(group),
            );
        }
        if namespaced
            && let Some(ns) = ds.get("namespace").and_then(Value::as_str)
            && !ns.is_empty()
        {
            errs.invalid_each(&dp.child("namespace"), ns, meta::dns_label(ns, false));
        }
    }
}

/// `ValidatePersistentVolumeClaim`.
pub(crate) fn validate_pvc(pvc: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(pvc, true, meta::dns_subdomain, errs);
    validate_pvc_spec(
        pvc.get("spec").unwrap_or(&Value::Null),
        &Path::new("spec"),
        errs,
    );
}

/// `ValidatePersistentVolumeClaimUpdate`.
pub(crate) fn validate_pvc_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_pvc(new, errs);
    let empty = json!({});
    let (ns, os) = (
        new.get("spec").unwrap_or(&empty),
        old.get("spec").unwrap_or(&empty),
    );
    let mut n = ns.clone();
    let mut o = os.clone();
    if get_str(os, "volumeName").is_empty()
        && let Some(m) = o.as_object_mut()
    {
        match ns.get("volumeName") {
            Some(v) => m.insert("volumeName".into(), v.clone()),
            None => m.remove("volumeName"),
        };
    }
    if os.get("storageClassName").is_none_or(Value::is_null)
        && let (Some(m), Some(v)) = (o.as_object_mut(), ns.get("storageClassName"))
    {
        m.insert("storageClassName".into(), v.clone());
    }
    let bound = new.pointer("/status/phase").and_then(Value::as_str) == Some("Bound");
    if bound
        && let Some(req) = n
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
    {
        match os.pointer("/resources/requests/storage") {
            Some(v) => req.insert("storage".into(), v.clone()),
            None => req.remove("storage"),
        };
    }
    for s in [&mut n, &mut o] {
        if let Some(m) = s.as_object_mut() {
            m.remove("volumeAttributesClassName");
        }
    }
    if n != o {
        errs.forbidden(
            &Path::new("spec"),
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                spec_diff(&o, &n)
            ),
        );
    }
    let size = |s: &Value| {
        s.pointer("/resources/requests/storage")
            .and_then(Value::as_str)
            .and_then(ocm_api::k8s::quantity::approximate_f64)
            .unwrap_or(0.0)
    };
    let status_size = old
        .pointer("/status/capacity/storage")
        .and_then(Value::as_str)
        .and_then(ocm_api::k8s::quantity::approximate_f64)
        .unwrap_or(0.0);
    if size(ns) < size(os) && size(ns) <= status_size {
        errs.forbidden(
            &Path::new("spec")
                .child("resources")
                .child("requests")
                .child("storage"),
            "field can not be less than status.capacity",
        );
    }
    if ns.get("volumeMode") != os.get("volumeMode") {
        errs.invalid(
            &Path::new("volumeMode"),
            Bad::Json(
                ns.get("volumeMode")
                    .and_then(Value::as_str)
                    .map_or_else(|| "null".to_string(), json_str),
            ),
            "field is immutable",
        );
    }
}

/// The difference of two specs, for messages kube-apiserver words with Go's `cmp.Diff`
/// (whose exact output is deliberately unstable; this lists the changed fields).
pub(crate) fn spec_diff(old: &Value, new: &Value) -> String {
    let mut lines = Vec::new();
    diff_into("", old, new, &mut lines);
    lines.join("\n")
}

fn diff_into(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff_into(
                    &p,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (a, b) if a != b => {
            out.push(format!("  - {path}: {a}"));
            out.push(format!("  + {path}: {b}"));
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------------------

/// `SetDefaults_Pod` and `SetDefaults_PodSpec`.
pub(crate) fn default_pod(p: &mut Value) {
    if let Some(spec) = spec_mut(p) {
        pod::default_pod_spec(spec);
        pod::default_pod_only(spec);
    }
}

fn quantity(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_str)
        .and_then(ocm_api::k8s::quantity::approximate_f64)
        .or_else(|| v.and_then(Value::as_f64))
        .unwrap_or(0.0)
}

/// The QoS class of a pod spec (`qos.ComputePodQOS`, for CPU and memory).
fn qos_class(spec: &Value) -> &'static str {
    let mut requests = [0.0f64; 2];
    let mut limits = [0.0f64; 2];
    let mut guaranteed = true;
    let containers = arr(spec, "containers")
        .iter()
        .chain(arr(spec, "initContainers"));
    for c in containers {
        for (i, r) in ["cpu", "memory"].iter().enumerate() {
            let req = quantity(c.pointer(&format!("/resources/requests/{r}")));
            let lim = quantity(c.pointer(&format!("/resources/limits/{r}")));
            requests[i] += req;
            limits[i] += lim;
            if lim == 0.0 || req != lim {
                guaranteed = false;
            }
        }
    }
    if requests == [0.0, 0.0] && limits == [0.0, 0.0] {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A new Pod's status: `Pending`, with its QoS class.
pub(crate) fn created_pod_status(p: &Value) -> Value {
    let qos = qos_class(p.get("spec").unwrap_or(&Value::Null));
    json!({"phase": "Pending", "qosClass": qos})
}

fn validate_pod_metadata_and_spec(p: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(p, true, meta::dns_subdomain, errs);
    let empty = json!({});
    let spec = p.get("spec").unwrap_or(&empty);
    let spec_path = Path::new("spec");
    pod::validate_pod_spec(
        spec,
        &spec_path,
        PodOpts {
            resource_is_pod: true,
        },
        errs,
    );
    if get_str(spec, "serviceAccountName").is_empty() {
        for (vi, v) in arr(spec, "volumes").iter().enumerate() {
            for (si, s) in v
                .pointer("/projected/sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                if s.get("serviceAccountToken").is_some_and(|t| !t.is_null()) {
                    errs.forbidden(
                        &spec_path
                            .child("volumes")
                            .index(vi)
                            .child("projected")
                            .child("sources")
                            .index(si)
                            .child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    );
                }
            }
        }
    }
    for list in ["containers", "initContainers"] {
        for (i, c) in arr(spec, list).iter().enumerate() {
            let image = get_str(c, "image");
            if image.trim() != image {
                errs.invalid(
                    &spec_path.child(list).index(i).child("image"),
                    Bad::str(image),
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
}

/// `ValidatePodCreate`.
pub(crate) fn validate_pod(p: &Value, errs: &mut Errors) {
    validate_pod_metadata_and_spec(p, errs);
    let empty = json!({});
    let spec = p.get("spec").unwrap_or(&empty);
    if !arr(spec, "ephemeralContainers").is_empty() {
        errs.forbidden(
            &Path::new("spec").child("ephemeralContainers"),
            "cannot be set on create",
        );
    }
    if !get_str(spec, "nodeName").is_empty() && !arr(spec, "schedulingGates").is_empty() {
        errs.forbidden(
            &Path::new("spec").child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        );
    }
}

const UPDATABLE_POD_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative),`spec.containers[*].resources` (for CPU/memory only)";

/// `ValidatePodUpdate`.
pub(crate) fn validate_pod_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_pod_metadata_and_spec(new, errs);
    let empty = json!({});
    let (ns, os) = (
        new.get("spec").unwrap_or(&empty),
        old.get("spec").unwrap_or(&empty),
    );
    let spec_path = Path::new("spec");
    for list in ["containers", "initContainers"] {
        let (a, b) = (arr(ns, list), arr(os, list));
        if a.len() != b.len() {
            errs.forbidden(
                &spec_path.child(list),
                "pod updates may not add or remove containers",
            );
            return;
        }
        for (i, c) in a.iter().enumerate() {
            let image = get_str(c, "image");
            if image.is_empty() {
                errs.required(&spec_path.child(list).index(i).child("image"), "");
            }
            if image.trim() != image {
                errs.invalid(
                    &spec_path.child(list).index(i).child("image"),
                    Bad::str(image),
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
    let ads = spec_path.child("activeDeadlineSeconds");
    match (
        get_i64(ns, "activeDeadlineSeconds"),
        get_i64(os, "activeDeadlineSeconds"),
    ) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.invalid(
                &ads,
                Bad::Int(n),
                &format::inclusive_range(0, i64::from(i32::MAX)),
            );
            return;
        }
        (Some(n), Some(o)) if o < n => {
            errs.invalid(
                &ads,
                Bad::Int(n),
                "must be less than or equal to previous value",
            );
            return;
        }
        (None, Some(_)) => errs.invalid(
            &ads,
            Bad::null(),
            "must not update from a positive integer to nil value",
        ),
        _ => {}
    }
    let old_tolerations = arr(os, "tolerations");
    let new_tolerations = arr(ns, "tolerations");
    let strip = |t: &Value| {
        let mut t = t.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
        }
        t
    };
    if old_tolerations
        .iter()
        .any(|o| !new_tolerations.iter().any(|n| strip(n) == strip(o)))
    {
        errs.forbidden(
            &spec_path.child("tolerations"),
            "existing toleration can not be modified except its tolerationSeconds",
        );
    }
    if ns == os {
        return;
    }
    // Put back what an update may change, then compare.
    let munged = munged_pod_spec(ns, os);
    if &munged != os {
        errs.forbidden(
            &spec_path,
            &format!(
                "pod updates may not change fields other than {UPDATABLE_POD_FIELDS}\n{}",
                spec_diff(os, &munged)
            ),
        );
    }
}

/// The new pod spec `ns` with the fields a pod update may change put back to their old
/// values in `os` (so that any difference left is a forbidden change).
fn munged_pod_spec(ns: &Value, os: &Value) -> Value {
    let mut munged = ns.clone();
    if let Some(m) = munged.as_object_mut() {
        for list in ["containers", "initContainers"] {
            if let Some(cs) = m.get_mut(list).and_then(Value::as_array_mut) {
                for (i, c) in cs.iter_mut().enumerate() {
                    let old_c = &arr(os, list)[i];
                    if let Some(cm) = c.as_object_mut() {
                        match old_c.get("image") {
                            Some(v) => cm.insert("image".into(), v.clone()),
                            None => cm.remove("image"),
                        };
                        if list == "containers" {
                            munge_resources(cm, old_c);
                        }
                    }
                }
            }
        }
        for f in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
            match os.get(f) {
                Some(v) => m.insert(f.into(), v.clone()),
                None => m.remove(f),
            };
        }
        if get_i64(os, "terminationGracePeriodSeconds").is_some_and(|g| g < 0)
            && get_i64(ns, "terminationGracePeriodSeconds") == Some(1)
            && let Some(v) = os.get("terminationGracePeriodSeconds")
        {
            m.insert("terminationGracePeriodSeconds".into(), v.clone());
        }
    }
    munged
}

/// CPU and memory of a container's resources may change; put the old ones back.
fn munge_resources(c: &mut Map<String, Value>, old: &Value) {
    let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    for kind in ["limits", "requests"] {
        let Some(old_list) = old
            .pointer(&format!("/resources/{kind}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let list = obj_mut(res, kind);
        for r in ["cpu", "memory"] {
            match old_list.get(r) {
                Some(v) => list.insert(r.into(), v.clone()),
                None => list.remove(r),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_becomes_data() {
        let mut s = json!({"stringData": {"a": "hello", "b": ""}, "data": {"c": "eA=="}});
        default_secret(&mut s);
        assert_eq!(
            s,
            json!({"data": {"a": "aGVsbG8=", "b": "", "c": "eA=="}, "type": "Opaque"})
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(decode_base64("aGVsbG8="), b"hello");
    }

    #[test]
    fn qos_classes() {
        assert_eq!(qos_class(&json!({"containers": [{}]})), "BestEffort");
        let g = json!({"containers": [{"resources": {
            "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}}]});
        assert_eq!(qos_class(&g), "Guaranteed");
        let b = json!({"containers": [{"resources": {"requests": {"cpu": "100m"}}}]});
        assert_eq!(qos_class(&b), "Burstable");
    }
}
