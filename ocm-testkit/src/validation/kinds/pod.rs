//! Pod specs, alone (Pods) or in templates (Deployments, Jobs, ...): the defaults
//! `SetDefaults_PodSpec` and friends give them and the rules `ValidatePodSpec` checks.

use std::collections::{BTreeMap, BTreeSet};

use ocm_api::k8s::names;
use serde_json::{Map, Value, json};

use super::field::{Bad, Errors, Path};
use super::format;
use super::meta;
use super::quantity;
use super::{arr, get_i64, get_str, obj_mut, set_default};

// ---------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------

/// The defaults kube-apiserver gives a pod spec (inside a template or a Pod).
pub(crate) fn default_pod_spec(pod: &mut Map<String, Value>) {
    set_default(pod, "dnsPolicy", json!("ClusterFirst"));
    set_default(pod, "restartPolicy", json!("Always"));
    let host_network = pod.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    set_default(pod, "securityContext", json!({}));
    set_default(pod, "terminationGracePeriodSeconds", json!(30));
    set_default(pod, "schedulerName", json!("default-scheduler"));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        if let Some(cs) = pod.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c, host_network && list != "ephemeralContainers");
            }
        }
    }
    if let Some(vs) = pod.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
    quantity::canonical_resource_list(pod.get_mut("overhead"));
}

/// What `SetDefaults_Pod` adds for a Pod (not a template): requests from limits, and
/// `enableServiceLinks`.
pub(crate) fn default_pod_only(pod: &mut Map<String, Value>) {
    for list in ["containers", "initContainers"] {
        if let Some(cs) = pod.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                    continue;
                };
                let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else {
                    continue;
                };
                let requests = obj_mut(res, "requests");
                for (k, v) in limits {
                    requests.entry(k).or_insert(v);
                }
            }
        }
    }
    set_default(pod, "enableServiceLinks", json!(true));
}

/// `Always` for images tagged `latest` or not tagged at all (`parsers.ParseImageName`
/// reads a missing tag as `latest` unless there is a digest), `IfNotPresent` otherwise.
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

fn default_http_get(h: &mut Map<String, Value>) {
    set_default(h, "path", json!("/"));
    set_default(h, "scheme", json!("HTTP"));
}

fn default_handler(p: &mut Map<String, Value>) {
    if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
        default_http_get(h);
    }
    if let Some(g) = p.get_mut("grpc").and_then(Value::as_object_mut) {
        set_default(g, "service", json!(""));
    }
}

fn default_probe(p: &mut Map<String, Value>) {
    for (k, v) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if p.get(k)
            .is_none_or(|x| x.is_null() || x.as_i64() == Some(0))
        {
            p.insert(k.into(), json!(v));
        }
    }
    default_handler(p);
}

fn default_field_ref(f: &mut Map<String, Value>) {
    set_default(f, "apiVersion", json!("v1"));
}

fn default_container(c: &mut Map<String, Value>, host_network: bool) {
    let image = get_str_map(c, "image").to_string();
    set_default(c, "imagePullPolicy", json!(pull_policy(&image)));
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    set_default(c, "resources", json!({}));
    if let Some(res) = c.get_mut("resources") {
        quantity::canonical_resource_list(res.get_mut("limits"));
        quantity::canonical_resource_list(res.get_mut("requests"));
    }
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
            if host_network && p.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0 {
                let cp = p.get("containerPort").cloned().unwrap_or(json!(0));
                p.insert("hostPort".into(), cp);
            }
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for e in env.iter_mut() {
            if let Some(f) = e
                .pointer_mut("/valueFrom/fieldRef")
                .and_then(Value::as_object_mut)
            {
                default_field_ref(f);
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            default_probe(p);
        }
    }
    if let Some(l) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for h in ["postStart", "preStop"] {
            if let Some(h) = l.get_mut(h).and_then(Value::as_object_mut) {
                default_handler(h);
            }
        }
    }
}

fn get_str_map<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn default_downward_items(items: Option<&mut Value>) {
    if let Some(items) = items.and_then(Value::as_array_mut) {
        for it in items.iter_mut() {
            if let Some(f) = it.get_mut("fieldRef").and_then(Value::as_object_mut) {
                default_field_ref(f);
            }
        }
    }
}

fn default_volume(v: &mut Map<String, Value>) {
    if !v.iter().any(|(k, x)| k != "name" && !x.is_null()) {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            set_default(s, "defaultMode", json!(420));
        }
    }
    if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        set_default(h, "type", json!(""));
    }
    if let Some(e) = v.get_mut("emptyDir") {
        quantity::canonical_field(e.get_mut("sizeLimit"));
    }
    if let Some(d) = v.get_mut("downwardAPI").and_then(Value::as_object_mut) {
        default_downward_items(d.get_mut("items"));
    }
    if let Some(sources) = v
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut)
    {
        for s in sources.iter_mut() {
            if let Some(t) = s
                .get_mut("serviceAccountToken")
                .and_then(Value::as_object_mut)
            {
                set_default(t, "expirationSeconds", json!(3600));
            }
            if let Some(d) = s.get_mut("downwardAPI") {
                default_downward_items(d.get_mut("items"));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/// The options `ValidatePodSpec` depends on.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PodOpts {
    /// The spec is a Pod's own, not a template's (`ResourceIsPod`).
    pub(crate) resource_is_pod: bool,
}

/// `ValidatePodTemplateSpec` of the template at `path`.
pub(crate) fn validate_pod_template(
    template: Option<&Value>,
    path: &Path,
    opts: PodOpts,
    errs: &mut Errors,
) {
    let empty = json!({});
    let t = template.filter(|t| !t.is_null()).unwrap_or(&empty);
    let m = t.get("metadata");
    meta::validate_labels(m.and_then(|m| m.get("labels")), &path.child("labels"), errs);
    meta::validate_annotations(
        m.and_then(|m| m.get("annotations")),
        &path.child("annotations"),
        errs,
    );
    let spec = t.get("spec").unwrap_or(&empty);
    validate_pod_spec(spec, &path.child("spec"), opts, errs);
    if !arr(spec, "ephemeralContainers").is_empty() {
        errs.forbidden(
            &path.child("spec").child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        );
    }
}

/// The volumes that validated, by name (`ValidateVolumes`' map): what mounts may refer to.
type Volumes = BTreeMap<String, bool>;

/// `ValidatePodSpec`.
// Long on purpose: it follows kube-apiserver's ValidatePodSpec field by field, so that its
// causes come out in kube's order; kept whole, it can be read side by side with kube's.
pub(crate) fn validate_pod_spec(spec: &Value, path: &Path, opts: PodOpts, errs: &mut Errors) {
    let grace = get_i64(spec, "terminationGracePeriodSeconds");
    if grace.is_none() {
        errs.required(&path.child("terminationGracePeriodSeconds"), "");
    }
    let volumes = validate_volumes(arr(spec, "volumes"), &path.child("volumes"), errs);
    let restart = get_str(spec, "restartPolicy");
    let claims: BTreeSet<&str> = arr(spec, "resourceClaims")
        .iter()
        .map(|c| get_str(c, "name"))
        .filter(|n| !n.is_empty())
        .collect();
    validate_containers(
        arr(spec, "containers"),
        &volumes,
        &claims,
        grace,
        &path.child("containers"),
        errs,
    );
    validate_init_containers(
        arr(spec, "initContainers"),
        arr(spec, "containers"),
        &volumes,
        &claims,
        grace,
        &path.child("initContainers"),
        errs,
    );
    validate_host_network(spec, path, opts, errs);
    match restart {
        "Always" | "OnFailure" | "Never" => {}
        "" => errs.required(&path.child("restartPolicy"), ""),
        other => errs.not_supported(
            &path.child("restartPolicy"),
            Bad::str(other),
            &["Always", "OnFailure", "Never"],
        ),
    }
    let dns = get_str(spec, "dnsPolicy");
    match dns {
        "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        "" => errs.required(&path.child("dnsPolicy"), ""),
        other => errs.not_supported(
            &path.child("dnsPolicy"),
            Bad::str(other),
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        ),
    }
    meta::validate_labels(spec.get("nodeSelector"), &path.child("nodeSelector"), errs);
    validate_pod_security_context(
        spec.get("securityContext"),
        &path.child("securityContext"),
        errs,
    );
    for (i, s) in arr(spec, "imagePullSecrets").iter().enumerate() {
        if s.as_object().is_some_and(|m| m.keys().any(|k| k != "name")) {
            errs.invalid(
                &path.child("imagePullSecrets").index(i),
                Bad::Json(format!(
                    "{{\"name\":{}}}",
                    super::field::json_str(get_str(s, "name"))
                )),
                "only name may be set",
            );
        }
    }
    validate_affinity(spec.get("affinity"), &path.child("affinity"), errs);
    validate_dns_config(spec, &path.child("dnsConfig"), errs);
    for (i, g) in arr(spec, "readinessGates").iter().enumerate() {
        let t = get_str(g, "conditionType");
        errs.invalid_each(
            &path.child("readinessGates").index(i).child("conditionType"),
            t,
            names::label_key_errors(t),
        );
    }
    let mut gates = BTreeSet::new();
    for (i, g) in arr(spec, "schedulingGates").iter().enumerate() {
        let n = get_str(g, "name");
        let p = path.child("schedulingGates").index(i);
        errs.invalid_each(&p, n, names::label_key_errors(n));
        if !gates.insert(n) {
            errs.duplicate(&p, Bad::str(n));
        }
    }
    validate_topology_spread(
        arr(spec, "topologySpreadConstraints"),
        &path.child("topologySpreadConstraints"),
        errs,
    );
    if let Some(sa) = spec.get("serviceAccountName").and_then(Value::as_str)
        && !sa.is_empty()
    {
        errs.invalid_each(
            &path.child("serviceAccountName"),
            sa,
            meta::dns_subdomain(sa, false),
        );
    }
    if let Some(n) = spec.get("nodeName").and_then(Value::as_str)
        && !n.is_empty()
    {
        errs.invalid_each(&path.child("nodeName"), n, meta::dns_subdomain(n, false));
    }
    if let Some(d) = get_i64(spec, "activeDeadlineSeconds")
        && !(1..=i64::from(i32::MAX)).contains(&d)
    {
        errs.invalid(
            &path.child("activeDeadlineSeconds"),
            Bad::Int(d),
            &format::inclusive_range(1, i64::from(i32::MAX)),
        );
    }
    for f in ["hostname", "subdomain"] {
        if let Some(h) = spec.get(f).and_then(Value::as_str)
            && !h.is_empty()
        {
            errs.invalid_each(&path.child(f), h, names::dns1123_label_errors(h));
        }
    }
    validate_tolerations(arr(spec, "tolerations"), &path.child("tolerations"), errs);
    for (i, a) in arr(spec, "hostAliases").iter().enumerate() {
        let p = path.child("hostAliases").index(i);
        format::ip_errors(errs, &p.child("ip"), get_str(a, "ip"));
        for (j, h) in arr(a, "hostnames").iter().enumerate() {
            let h = h.as_str().unwrap_or_default();
            errs.invalid_each(
                &p.child("hostnames").index(j),
                h,
                names::dns1123_subdomain_errors(h),
            );
        }
    }
    if let Some(pc) = spec.get("priorityClassName").and_then(Value::as_str)
        && !pc.is_empty()
    {
        errs.invalid_each(
            &path.child("priorityClassName"),
            pc,
            meta::dns_subdomain(pc, false),
        );
    }
    if let Some(rc) = spec.get("runtimeClassName").and_then(Value::as_str) {
        errs.invalid_each(
            &path.child("runtimeClassName"),
            rc,
            meta::dns_subdomain(rc, false),
        );
    }
    if let Some(pp) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        match pp {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.required(&path.child("preemptionPolicy"), ""),
            other => errs.not_supported(
                &path.child("preemptionPolicy"),
                Bad::Json(super::field::json_str(other)),
                &["PreemptLowerPriority", "Never"],
            ),
        }
    }
    if let Some(os) = spec.get("os").filter(|o| !o.is_null()) {
        let name = get_str(os, "name");
        if name.is_empty() {
            errs.required(&path.child("os").child("name"), "cannot be empty");
        } else if name != "linux" && name != "windows" {
            errs.not_supported(&path.child("os"), Bad::str(name), &["linux", "windows"]);
        }
    }
}

/// `validateContainers`: at least one, each valid, names unique.
fn validate_containers(
    containers: &[Value],
    volumes: &Volumes,
    claims: &BTreeSet<&str>,
    grace: Option<i64>,
    path: &Path,
    errs: &mut Errors,
) {
    if containers.is_empty() {
        errs.required(path, "");
        return;
    }
    let mut seen = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = path.index(i);
        validate_container_common(c, volumes, claims, &p, errs);
        let name = get_str(c, "name");
        if !seen.insert(name) {
            errs.duplicate(&p.child("name"), Bad::str(name));
        }
        validate_lifecycle_and_probes(c, grace, &p, errs);
        if c.get("restartPolicy").is_some_and(|r| !r.is_null()) {
            errs.forbidden(
                &p.child("restartPolicy"),
                "may not be set for non-init containers",
            );
        }
    }
    host_port_conflicts(containers, path, errs);
}

/// A container's lifecycle hooks and its liveness, readiness and startup probes (regular
/// containers, and init containers that restart as sidecars).
fn validate_lifecycle_and_probes(c: &Value, grace: Option<i64>, p: &Path, errs: &mut Errors) {
    if let Some(l) = c.get("lifecycle").filter(|l| !l.is_null()) {
        validate_lifecycle(l, grace, &p.child("lifecycle"), errs);
    }
    for (field, probe) in [
        ("livenessProbe", Probe::Liveness),
        ("readinessProbe", Probe::Readiness),
        ("startupProbe", Probe::Startup),
    ] {
        validate_probe(c.get(field), grace, probe, &p.child(field), errs);
    }
}

/// `validateInitContainers`.
fn validate_init_containers(
    inits: &[Value],
    regular: &[Value],
    volumes: &Volumes,
    claims: &BTreeSet<&str>,
    grace: Option<i64>,
    path: &Path,
    errs: &mut Errors,
) {
    let mut names: BTreeSet<&str> = regular.iter().map(|c| get_str(c, "name")).collect();
    for (i, c) in inits.iter().enumerate() {
        let p = path.index(i);
        validate_container_common(c, volumes, claims, &p, errs);
        let mut restart_always = false;
        if let Some(r) = c.get("restartPolicy").and_then(Value::as_str) {
            if r == "Always" {
                restart_always = true;
            } else {
                errs.not_supported(&p.child("restartPolicy"), Bad::str(r), &["Always"]);
            }
        }
        let name = get_str(c, "name");
        if names.contains(name) {
            errs.duplicate(&p.child("name"), Bad::str(name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        host_port_conflicts(std::slice::from_ref(c), path, errs);
        if restart_always {
            validate_lifecycle_and_probes(c, grace, &p, errs);
        } else {
            for f in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if c.get(f).is_some_and(|v| !v.is_null()) {
                    errs.forbidden(
                        &p.child(f),
                        "may not be set for init containers without restartPolicy=Always",
                    );
                }
            }
        }
        if !arr(c, "resizePolicy").is_empty() {
            errs.invalid(
                &p.child("resizePolicy"),
                Bad::json(c.get("resizePolicy").unwrap_or(&Value::Null)),
                "must not be set for init containers",
            );
        }
    }
}

/// `checkHostPortConflicts`.
fn host_port_conflicts(containers: &[Value], path: &Path, errs: &mut Errors) {
    let mut seen = BTreeSet::new();
    for (ci, c) in containers.iter().enumerate() {
        for (pi, p) in arr(c, "ports").iter().enumerate() {
            let hp = get_i64(p, "hostPort").unwrap_or(0);
            if hp == 0 {
                continue;
            }
            let key = format!("{}/{}/{hp}", get_str(p, "protocol"), get_str(p, "hostIP"));
            if !seen.insert(key.clone()) {
                errs.duplicate(
                    &path.index(ci).child("ports").index(pi).child("hostPort"),
                    Bad::Str(key),
                );
            }
        }
    }
}

/// `validateContainerCommon`.
fn validate_container_common(
    c: &Value,
    volumes: &Volumes,
    claims: &BTreeSet<&str>,
    path: &Path,
    errs: &mut Errors,
) {
    let name = get_str(c, "name");
    if name.is_empty() {
        errs.required(&path.child("name"), "");
    } else {
        errs.invalid_each(&path.child("name"), name, names::dns1123_label_errors(name));
    }
    if get_str(c, "image").is_empty() {
        errs.required(&path.child("image"), "");
    }
    match get_str(c, "terminationMessagePolicy") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.required(&path.child("terminationMessagePolicy"), ""),
        other => errs.not_supported(
            &path.child("terminationMessagePolicy"),
            Bad::str(other),
            &["File", "FallbackToLogsOnError"],
        ),
    }
    validate_container_ports(arr(c, "ports"), &path.child("ports"), errs);
    validate_env(arr(c, "env"), &path.child("env"), errs);
    validate_env_from(arr(c, "envFrom"), &path.child("envFrom"), errs);
    let device_names: BTreeMap<&str, &str> = arr(c, "volumeDevices")
        .iter()
        .map(|d| (get_str(d, "name"), get_str(d, "devicePath")))
        .collect();
    let mount_names: BTreeMap<&str, &str> = arr(c, "volumeMounts")
        .iter()
        .map(|m| (get_str(m, "name"), get_str(m, "mountPath")))
        .collect();
    validate_volume_mounts(c, volumes, &device_names, &path.child("volumeMounts"), errs);
    validate_volume_devices(c, volumes, &mount_names, &path.child("volumeDevices"), errs);
    match get_str(c, "imagePullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.required(&path.child("imagePullPolicy"), ""),
        other => errs.not_supported(
            &path.child("imagePullPolicy"),
            Bad::str(other),
            &["Always", "IfNotPresent", "Never"],
        ),
    }
    validate_resources(c.get("resources"), claims, &path.child("resources"), errs);
    validate_security_context(
        c.get("securityContext"),
        &path.child("securityContext"),
        errs,
    );
}

fn validate_container_ports(ports: &[Value], path: &Path, errs: &mut Errors) {
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let ip = path.index(i);
        let name = get_str(p, "name");
        if !name.is_empty() {
            let problems = format::port_name_errors(name);
            if !problems.is_empty() {
                errs.invalid_each(&ip.child("name"), name, problems);
            } else if !names.insert(name) {
                errs.duplicate(&ip.child("name"), Bad::str(name));
            }
        }
        match get_i64(p, "containerPort").unwrap_or(0) {
            0 => errs.required(&ip.child("containerPort"), ""),
            cp => {
                for m in format::port_num_errors(cp) {
                    errs.invalid(&ip.child("containerPort"), Bad::Int(cp), &m);
                }
            }
        }
        let hp = get_i64(p, "hostPort").unwrap_or(0);
        if hp != 0 {
            for m in format::port_num_errors(hp) {
                errs.invalid(&ip.child("hostPort"), Bad::Int(hp), &m);
            }
        }
        validate_protocol(get_str(p, "protocol"), &ip.child("protocol"), errs);
    }
}

/// A port protocol: required, one of `SCTP`, `TCP`, `UDP`.
pub(crate) fn validate_protocol(protocol: &str, path: &Path, errs: &mut Errors) {
    match protocol {
        "TCP" | "UDP" | "SCTP" => {}
        "" => errs.required(path, ""),
        other => errs.not_supported(path, Bad::str(other), &["SCTP", "TCP", "UDP"]),
    }
}

const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

const VOLUME_FIELD_PATHS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

fn validate_env(env: &[Value], path: &Path, errs: &mut Errors) {
    for (i, e) in env.iter().enumerate() {
        let ip = path.index(i);
        let name = get_str(e, "name");
        if name.is_empty() {
            errs.required(&ip.child("name"), "");
        } else {
            errs.invalid_each(&ip.child("name"), name, format::env_var_name_errors(name));
        }
        let Some(from) = e.get("valueFrom").filter(|v| !v.is_null()) else {
            continue;
        };
        let fp = ip.child("valueFrom");
        let mut sources = 0;
        if let Some(f) = from.get("fieldRef").filter(|v| !v.is_null()) {
            sources += 1;
            validate_object_field_selector(f, ENV_FIELD_PATHS, &fp.child("fieldRef"), errs);
        }
        if let Some(r) = from.get("resourceFieldRef").filter(|v| !v.is_null()) {
            sources += 1;
            validate_resource_field_selector(r, false, &fp.child("resourceFieldRef"), errs);
        }
        for (k, kind) in [("configMapKeyRef", "configMap"), ("secretKeyRef", "secret")] {
            if let Some(r) = from.get(k).filter(|v| !v.is_null()) {
                sources += 1;
                let _ = kind;
                let kp = fp.child(k);
                let n = get_str(r, "name");
                errs.invalid_each(&kp.child("name"), n, meta::dns_subdomain(n, false));
                let key = get_str(r, "key");
                if key.is_empty() {
                    errs.required(&kp.child("key"), "");
                } else {
                    errs.invalid_each(&kp.child("key"), key, format::config_key_errors(key));
                }
            }
        }
        if sources == 0 {
            errs.invalid(
                &fp,
                Bad::str(""),
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            );
        } else if !get_str(e, "value").is_empty() {
            errs.invalid(
                &fp,
                Bad::str(""),
                "may not be specified when `value` is not empty",
            );
        } else if sources > 1 {
            errs.invalid(
                &fp,
                Bad::str(""),
                "may not have more than one field specified at a time",
            );
        }
    }
}

fn validate_object_field_selector(f: &Value, allowed: &[&str], path: &Path, errs: &mut Errors) {
    if get_str(f, "apiVersion").is_empty() {
        errs.required(&path.child("apiVersion"), "");
        return;
    }
    let fp = get_str(f, "fieldPath");
    if fp.is_empty() {
        errs.required(&path.child("fieldPath"), "");
        return;
    }
    // `metadata.labels['key']` and `metadata.annotations['key']`.
    if let Some((base, rest)) = fp.split_once("['")
        && let Some(key) = rest.strip_suffix("']")
    {
        match base {
            "metadata.annotations" => {
                let k = key.to_lowercase();
                errs.invalid_each(path, &k, names::label_key_errors(&k));
            }
            "metadata.labels" => errs.invalid_each(path, key, names::label_key_errors(key)),
            _ => errs.invalid(path, Bad::str(base), "does not support subscript"),
        }
        return;
    }
    if !allowed.contains(&fp) {
        let mut sorted: Vec<&str> = allowed.to_vec();
        sorted.sort_unstable();
        errs.not_supported(&path.child("fieldPath"), Bad::str(fp), &sorted);
    }
}

fn validate_resource_field_selector(r: &Value, volume: bool, path: &Path, errs: &mut Errors) {
    let res = get_str(r, "resource");
    if volume && get_str(r, "containerName").is_empty() {
        errs.required(&path.child("containerName"), "");
    } else if res.is_empty() {
        errs.required(&path.child("resource"), "");
    } else if !RESOURCE_FIELD_PATHS.contains(&res)
        && !res.starts_with("requests.hugepages-")
        && !res.starts_with("limits.hugepages-")
    {
        errs.not_supported(&path.child("resource"), Bad::str(res), RESOURCE_FIELD_PATHS);
    }
}

fn validate_env_from(from: &[Value], path: &Path, errs: &mut Errors) {
    for (i, e) in from.iter().enumerate() {
        let ip = path.index(i);
        let prefix = get_str(e, "prefix");
        if !prefix.is_empty() {
            errs.invalid_each(
                &ip.child("prefix"),
                prefix,
                format::env_var_name_errors(prefix),
            );
        }
        let mut sources = 0;
        for k in ["configMapRef", "secretRef"] {
            if let Some(r) = e.get(k).filter(|v| !v.is_null()) {
                sources += 1;
                let n = get_str(r, "name");
                if n.is_empty() {
                    errs.required(&ip.child(k).child("name"), "");
                } else {
                    errs.invalid_each(&ip.child(k).child("name"), n, meta::dns_subdomain(n, true));
                }
            }
        }
        if sources == 0 {
            errs.invalid(
                path,
                Bad::str(""),
                "must specify one of: `configMapRef` or `secretRef`",
            );
        } else if sources > 1 {
            errs.invalid(
                path,
                Bad::str(""),
                "may not have more than one field specified at a time",
            );
        }
    }
}

/// `validateLocalDescendingPath`.
fn local_descending_path(p: &str, path: &Path, errs: &mut Errors) {
    if p.starts_with('/') {
        errs.invalid(path, Bad::str(p), "must be a relative path");
    }
    no_backsteps(p, path, errs);
}

/// `validatePathNoBacksteps`.
fn no_backsteps(p: &str, path: &Path, errs: &mut Errors) {
    if p.split(['/', '\\']).any(|s| s == "..") {
        errs.invalid(path, Bad::str(p), "must not contain '..'");
    }
}

/// `ValidateLocalNonReservedPath`.
fn local_non_reserved_path(p: &str, path: &Path, errs: &mut Errors) {
    local_descending_path(p, path, errs);
    if p.starts_with("..") && !p.starts_with("../") {
        errs.invalid(path, Bad::str(p), "must not start with '..'");
    }
}

fn validate_volume_mounts(
    c: &Value,
    volumes: &Volumes,
    devices: &BTreeMap<&str, &str>,
    path: &Path,
    errs: &mut Errors,
) {
    let privileged = c
        .pointer("/securityContext/privileged")
        .and_then(Value::as_bool)
        == Some(true);
    let mut points = BTreeSet::new();
    for (i, m) in arr(c, "volumeMounts").iter().enumerate() {
        let ip = path.index(i);
        let name = get_str(m, "name");
        let mount = get_str(m, "mountPath");
        if name.is_empty() {
            errs.required(&ip.child("name"), "");
        }
        if !volumes.contains_key(name) {
            errs.not_found(&ip.child("name"), Bad::str(name), "");
        }
        if mount.is_empty() {
            errs.required(&ip.child("mountPath"), "");
        }
        if !points.insert(mount) {
            errs.invalid(&ip.child("mountPath"), Bad::str(mount), "must be unique");
        }
        if devices.contains_key(name) {
            errs.invalid(
                &ip.child("name"),
                Bad::str(name),
                "must not already exist in volumeDevices",
            );
        }
        if devices.values().any(|d| *d == mount) {
            errs.invalid(
                &ip.child("mountPath"),
                Bad::str(mount),
                "must not already exist as a path in volumeDevices",
            );
        }
        let sub = get_str(m, "subPath");
        if !sub.is_empty() {
            local_descending_path(sub, &path.child("subPath"), errs);
        }
        let expr = get_str(m, "subPathExpr");
        if !expr.is_empty() {
            if !sub.is_empty() {
                errs.invalid(
                    &ip.child("subPathExpr"),
                    Bad::str(expr),
                    "subPathExpr and subPath are mutually exclusive",
                );
            }
            local_descending_path(expr, &path.child("subPathExpr"), errs);
        }
        if let Some(mp) = m.get("mountPropagation").and_then(Value::as_str) {
            let pp = path.child("mountPropagation");
            if !matches!(mp, "Bidirectional" | "HostToContainer" | "None") {
                errs.not_supported(
                    &pp,
                    Bad::str(mp),
                    &["Bidirectional", "HostToContainer", "None"],
                );
            }
            if mp == "Bidirectional" && !privileged {
                errs.forbidden(
                    &pp,
                    "Bidirectional mount propagation is available only to privileged containers",
                );
            }
        }
        if let Some(rro) = m.get("recursiveReadOnly").and_then(Value::as_str) {
            let rp = path.child("recursiveReadOnly");
            match rro {
                "Disabled" => {}
                "Enabled" | "IfPossible" => {
                    if m.get("readOnly").and_then(Value::as_bool) != Some(true) {
                        errs.forbidden(&rp, "may only be specified when readOnly is true");
                    }
                    if m.get("mountPropagation")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p != "None")
                    {
                        errs.forbidden(
                            &rp,
                            "may only be specified when mountPropagation is None or not specified",
                        );
                    }
                }
                other => {
                    errs.not_supported(&rp, Bad::str(other), &["Disabled", "Enabled", "IfPossible"])
                }
            }
        }
    }
}

fn validate_volume_devices(
    c: &Value,
    volumes: &Volumes,
    mounts: &BTreeMap<&str, &str>,
    path: &Path,
    errs: &mut Errors,
) {
    let mut paths = BTreeSet::new();
    let mut names = BTreeSet::new();
    for (i, d) in arr(c, "volumeDevices").iter().enumerate() {
        let ip = path.index(i);
        let name = get_str(d, "name");
        let dev = get_str(d, "devicePath");
        if name.is_empty() {
            errs.required(&ip.child("name"), "");
        }
        if names.contains(name) {
            errs.invalid(&ip.child("name"), Bad::str(name), "must be unique");
        }
        match volumes.get(name) {
            Some(false) => errs.invalid(
                &ip.child("name"),
                Bad::str(name),
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            ),
            None => errs.not_found(&ip.child("name"), Bad::str(name), ""),
            Some(true) => {}
        }
        if dev.is_empty() {
            errs.required(&ip.child("devicePath"), "");
        }
        if paths.contains(dev) {
            errs.invalid(&ip.child("devicePath"), Bad::str(dev), "must be unique");
        }
        if !dev.is_empty() && dev.split(['/', '\\']).any(|s| s == "..") {
            errs.invalid(
                &ip.child("devicePath"),
                Bad::str(dev),
                "can not contain backsteps ('..')",
            );
        } else {
            paths.insert(dev);
        }
        if mounts.contains_key(name) {
            errs.invalid(
                &ip.child("name"),
                Bad::str(name),
                "must not already exist in volumeMounts",
            );
        }
        if mounts.values().any(|m| *m == dev) {
            errs.invalid(
                &ip.child("devicePath"),
                Bad::str(dev),
                "must not already exist as a path in volumeMounts",
            );
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
}

/// The volume source fields, in the order `validateVolumeSource` looks at them, with the
/// path each reports its own errors at.
const VOLUME_SOURCES: &[(&str, &str)] = &[
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephfs"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwardAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

/// `ValidateVolumes`: the volumes that are valid, by name, with whether each is a claim.
fn validate_volumes(volumes: &[Value], path: &Path, errs: &mut Errors) -> Volumes {
    let mut ok = Volumes::new();
    for (i, v) in volumes.iter().enumerate() {
        let ip = path.index(i);
        let mut el = Errors::new();
        validate_volume_source(v, &ip, &mut el);
        let name = get_str(v, "name");
        if name.is_empty() {
            el.required(&ip.child("name"), "");
        } else {
            el.invalid_each(&ip.child("name"), name, names::dns1123_label_errors(name));
        }
        if ok.contains_key(name) {
            el.duplicate(&ip.child("name"), Bad::str(name));
        }
        if el.is_empty() {
            let claim = v.get("persistentVolumeClaim").is_some_and(|x| !x.is_null())
                || v.get("ephemeral").is_some_and(|x| !x.is_null());
            ok.insert(name.to_string(), claim);
        } else {
            errs.extend(el);
        }
    }
    ok
}

fn file_mode(mode: Option<i64>, path: &Path, errs: &mut Errors) {
    if let Some(m) = mode
        && !(0..=0o777).contains(&m)
    {
        errs.invalid(
            path,
            Bad::Int(m),
            "must be a number between 0 and 0777 (octal), both inclusive",
        );
    }
}

fn key_to_path(kp: &Value, path: &Path, errs: &mut Errors) {
    if get_str(kp, "key").is_empty() {
        errs.required(&path.child("key"), "");
    }
    let p = get_str(kp, "path");
    if p.is_empty() {
        errs.required(&path.child("path"), "");
    }
    local_non_reserved_path(p, &path.child("path"), errs);
    file_mode(get_i64(kp, "mode"), &path.child("mode"), errs);
}

/// `validateVolumeSource`: exactly one source, and that source's fields.
fn validate_volume_source(v: &Value, path: &Path, errs: &mut Errors) {
    let mut count = 0;
    for (key, at) in VOLUME_SOURCES {
        let Some(src) = v.get(*key).filter(|s| !s.is_null()) else {
            continue;
        };
        if count > 0 {
            // kube's message keeps its typo for this one source.
            let named = if *key == "downwardAPI" {
                "downwarAPI"
            } else {
                key
            };
            errs.forbidden(
                &path.child(named),
                "may not specify more than 1 volume type",
            );
            continue;
        }
        count += 1;
        validate_source_fields(key, src, &path.child(at), errs);
    }
    if count == 0 {
        errs.required(path, "must specify a volume type");
    }
}

/// The fields of the volume source `key` (`src`, at `sp`), each source as kube checks it.
fn validate_source_fields(key: &str, src: &Value, sp: &Path, errs: &mut Errors) {
    match key {
        "emptyDir" => {
            if let Some(l) = src.get("sizeLimit").and_then(Value::as_str)
                && ocm_api::k8s::quantity::approximate_f64(l).is_some_and(|q| q < 0.0)
            {
                errs.forbidden(
                    &sp.child("sizeLimit"),
                    "SizeLimit field must be a valid resource quantity",
                );
            }
        }
        "hostPath" => validate_host_path_source(src, sp, errs),
        "secret" | "configMap" => {
            let name_key = if key == "secret" {
                "secretName"
            } else {
                "name"
            };
            if get_str(src, name_key).is_empty() {
                errs.required(&sp.child(name_key), "");
            }
            file_mode(get_i64(src, "defaultMode"), &sp.child("defaultMode"), errs);
            for (j, kp) in arr(src, "items").iter().enumerate() {
                key_to_path(kp, &sp.child("items").index(j), errs);
            }
        }
        "persistentVolumeClaim" if get_str(src, "claimName").is_empty() => {
            errs.required(&sp.child("claimName"), "");
        }
        "nfs" => {
            let p = get_str(src, "path");
            if get_str(src, "server").is_empty() {
                errs.required(&sp.child("server"), "");
            }
            if p.is_empty() {
                errs.required(&sp.child("path"), "");
            }
            if !p.starts_with('/') {
                errs.invalid(&sp.child("path"), Bad::str(p), "must be an absolute path");
            }
        }
        "downwardAPI" => {
            file_mode(get_i64(src, "defaultMode"), &sp.child("defaultMode"), errs);
            for f in arr(src, "items") {
                downward_api_file(f, sp, errs);
            }
        }
        "projected" => {
            file_mode(get_i64(src, "defaultMode"), &sp.child("defaultMode"), errs);
            validate_projection(src, sp, errs);
        }
        "csi" => {
            let d = get_str(src, "driver");
            let dp = sp.child("driver");
            if d.is_empty() {
                errs.required(&dp, "");
            }
            if d.len() > 63 {
                errs.too_long(&dp, 63);
            }
            errs.invalid_each(&dp, d, names::dns1123_subdomain_errors(&d.to_lowercase()));
        }
        "ephemeral" if src.get("volumeClaimTemplate").is_none_or(Value::is_null) => {
            errs.required(&sp.child("volumeClaimTemplate"), "");
        }
        _ => {}
    }
}

/// A `hostPath` source: a path without backsteps, and a known type.
fn validate_host_path_source(src: &Value, sp: &Path, errs: &mut Errors) {
    let p = get_str(src, "path");
    if p.is_empty() {
        errs.required(&sp.child("path"), "");
    } else {
        no_backsteps(p, &sp.child("path"), errs);
        if let Some(t) = src.get("type").and_then(Value::as_str)
            && !matches!(
                t,
                "" | "DirectoryOrCreate"
                    | "Directory"
                    | "FileOrCreate"
                    | "File"
                    | "Socket"
                    | "CharDevice"
                    | "BlockDevice"
            )
        {
            errs.not_supported(
                &sp.child("type"),
                Bad::Json(super::field::json_str(t)),
                &[
                    "",
                    "BlockDevice",
                    "CharDevice",
                    "Directory",
                    "DirectoryOrCreate",
                    "File",
                    "FileOrCreate",
                    "Socket",
                ],
            );
        }
    }
}

fn downward_api_file(f: &Value, path: &Path, errs: &mut Errors) {
    let p = get_str(f, "path");
    if p.is_empty() {
        errs.required(&path.child("path"), "");
    }
    local_non_reserved_path(p, &path.child("path"), errs);
    if let Some(fr) = f.get("fieldRef").filter(|v| !v.is_null()) {
        validate_object_field_selector(fr, VOLUME_FIELD_PATHS, &path.child("fieldRef"), errs);
        if f.get("resourceFieldRef").is_some_and(|v| !v.is_null()) {
            errs.invalid(
                path,
                Bad::str("resource"),
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            );
        }
    } else if let Some(r) = f.get("resourceFieldRef").filter(|v| !v.is_null()) {
        validate_resource_field_selector(r, true, &path.child("resourceFieldRef"), errs);
    } else {
        errs.required(path, "one of fieldRef and resourceFieldRef is required");
    }
    file_mode(get_i64(f, "mode"), &path.child("mode"), errs);
}

fn validate_projection(src: &Value, path: &Path, errs: &mut Errors) {
    let mut all_paths = BTreeSet::new();
    for (i, s) in arr(src, "sources").iter().enumerate() {
        let sp = path.child("sources").index(i);
        let mut n = 0;
        for k in ["secret", "configMap"] {
            if let Some(x) = s.get(k).filter(|v| !v.is_null()) {
                n += 1;
                let pp = sp.child(k);
                let name = get_str(x, "name");
                if name.is_empty() {
                    errs.required(&pp.child("name"), "");
                }
                for (j, kp) in arr(x, "items").iter().enumerate() {
                    key_to_path(kp, &pp.child("items").index(j), errs);
                    let p = get_str(kp, "path");
                    if !p.is_empty() && !all_paths.insert(p.to_string()) {
                        errs.invalid(path, Bad::str(name), "conflicting duplicate paths");
                    }
                }
            }
        }
        if let Some(x) = s.get("downwardAPI").filter(|v| !v.is_null()) {
            n += 1;
            let pp = sp.child("downwardAPI");
            for f in arr(x, "items") {
                downward_api_file(f, &pp, errs);
                let p = get_str(f, "path");
                if !p.is_empty() && !all_paths.insert(p.to_string()) {
                    errs.invalid(path, Bad::str(p), "conflicting duplicate paths");
                }
            }
        }
        if let Some(x) = s.get("serviceAccountToken").filter(|v| !v.is_null()) {
            n += 1;
            let pp = sp.child("serviceAccountToken");
            let exp = get_i64(x, "expirationSeconds").unwrap_or(0);
            if exp < 600 {
                errs.invalid(
                    &pp.child("expirationSeconds"),
                    Bad::Int(exp),
                    "may not specify a duration less than 10 minutes",
                );
            }
            if exp > 1 << 32 {
                errs.invalid(
                    &pp.child("expirationSeconds"),
                    Bad::Int(exp),
                    "may not specify a duration larger than 2^32 seconds",
                );
            }
            let p = get_str(x, "path");
            if p.is_empty() {
                errs.required(&path.child("path"), "");
            } else {
                local_non_reserved_path(p, &path.child("path"), errs);
            }
        }
        if n > 1 {
            errs.forbidden(&sp, "may not specify more than 1 volume type");
        }
    }
}

/// The names a container may request without a domain (`IsStandardResourceName`).
fn is_standard_resource(name: &str) -> bool {
    matches!(
        name,
        "cpu"
            | "memory"
            | "ephemeral-storage"
            | "requests.cpu"
            | "requests.memory"
            | "requests.ephemeral-storage"
            | "limits.cpu"
            | "limits.memory"
            | "limits.ephemeral-storage"
            | "pods"
            | "services"
            | "replicationcontrollers"
            | "resourcequotas"
            | "secrets"
            | "persistentvolumeclaims"
            | "configmaps"
            | "services.nodeports"
            | "services.loadbalancers"
            | "requests.storage"
            | "storage"
    ) || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with("requests.")
        && names::label_key_errors(&format!("requests.{name}")).is_empty()
}

fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !name.starts_with("hugepages-")
}

/// `validateContainerResourceName`.
fn container_resource_name(name: &str, path: &Path, errs: &mut Errors) {
    let problems = names::label_key_errors(name);
    if !problems.is_empty() {
        errs.invalid_each(path, name, problems);
    } else if !name.contains('/') && !is_standard_resource(name) {
        errs.invalid(
            path,
            Bad::str(name),
            "must be a standard resource type or fully qualified",
        );
    }
    if !name.contains('/') {
        if !matches!(name, "cpu" | "memory" | "ephemeral-storage")
            && !name.starts_with("hugepages-")
        {
            errs.invalid(
                path,
                Bad::str(name),
                "must be a standard resource for containers",
            );
        }
    } else if !is_native_resource(name) && !is_extended_resource(name) {
        errs.invalid(
            path,
            Bad::str(name),
            "doesn't follow extended resource name standard",
        );
    }
}

fn quantity_of(v: &Value) -> (String, Option<f64>) {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let q = ocm_api::k8s::quantity::approximate_f64(&s);
    (s, q)
}

/// `ValidateResourceQuantityValue`.
fn resource_quantity(name: &str, v: &Value, path: &Path, errs: &mut Errors) {
    let (s, q) = quantity_of(v);
    let Some(q) = q else { return };
    if q < 0.0 {
        errs.invalid(
            path,
            Bad::Str(s.clone()),
            "must be greater than or equal to 0",
        );
    }
    if is_extended_resource(name) && q.fract() != 0.0 {
        errs.invalid(
            path,
            Bad::Json(super::field::json_str(&s)),
            "must be an integer",
        );
    }
}

/// `ValidateResourceRequirements`.
fn validate_resources(
    res: Option<&Value>,
    claims: &BTreeSet<&str>,
    path: &Path,
    errs: &mut Errors,
) {
    let Some(res) = res.filter(|r| !r.is_null()) else {
        return;
    };
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let limits = res.get("limits").and_then(Value::as_object);
    let mut has_cpu_mem = false;
    let mut has_huge = false;
    for (name, q) in limits.into_iter().flatten() {
        let p = lim_path.key(name);
        container_resource_name(name, &p, errs);
        resource_quantity(name, q, &p, errs);
        has_cpu_mem |= matches!(name.as_str(), "cpu" | "memory");
        has_huge |= name.starts_with("hugepages-");
    }
    for (name, q) in res
        .get("requests")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let p = req_path.key(name);
        container_resource_name(name, &p, errs);
        resource_quantity(name, q, &p, errs);
        let (req_s, req_q) = quantity_of(q);
        match limits.and_then(|l| l.get(name)) {
            Some(l) => {
                let (lim_s, lim_q) = quantity_of(l);
                if let (Some(r), Some(lq)) = (req_q, lim_q) {
                    if r != lq && !overcommit_allowed(name) {
                        errs.invalid(
                            &req_path,
                            Bad::Str(req_s),
                            &format!("must be equal to {name} limit of {lim_s}"),
                        );
                    } else if r > lq {
                        errs.invalid(
                            &req_path,
                            Bad::Str(req_s),
                            &format!("must be less than or equal to {name} limit of {lim_s}"),
                        );
                    }
                }
            }
            None if !overcommit_allowed(name) => errs.required(
                &lim_path,
                "Limit must be set for non overcommitable resources",
            ),
            None => {}
        }
        has_cpu_mem |= matches!(name.as_str(), "cpu" | "memory");
        has_huge |= name.starts_with("hugepages-");
    }
    if !has_cpu_mem && has_huge {
        errs.forbidden(path, "HugePages require cpu or memory");
    }
    let mut seen = BTreeSet::new();
    for (i, c) in arr(res, "claims").iter().enumerate() {
        let p = path.child("claims").index(i);
        let n = get_str(c, "name");
        if n.is_empty() {
            errs.required(&p, "");
            continue;
        }
        if !seen.insert(n) {
            errs.duplicate(&p, Bad::str(n));
        }
        if !claims.contains(n) {
            let detail = if claims.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".to_string()
            } else {
                let all: Vec<&str> = claims.iter().copied().collect();
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    all.join(", ")
                )
            };
            errs.not_found(&p, Bad::str(n), &detail);
        }
    }
}

fn id_range(v: Option<i64>, path: &Path, errs: &mut Errors) {
    if let Some(id) = v
        && !(0..=i64::from(i32::MAX)).contains(&id)
    {
        errs.invalid(
            path,
            Bad::Int(id),
            &format::inclusive_range(0, i64::from(i32::MAX)),
        );
    }
}

fn validate_seccomp(sc: &Value, path: &Path, errs: &mut Errors) {
    let Some(p) = sc.get("seccompProfile").filter(|p| !p.is_null()) else {
        return;
    };
    let pp = path.child("seccompProfile");
    let t = get_str(p, "type");
    match t {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => errs.required(
            &pp.child("type"),
            "type is required when seccompProfile is set",
        ),
        other => errs.not_supported(
            &pp.child("type"),
            Bad::str(other),
            &["Localhost", "RuntimeDefault", "Unconfined"],
        ),
    }
    let local = p.get("localhostProfile").and_then(Value::as_str);
    if t == "Localhost" && local.is_none_or(str::is_empty) {
        errs.required(
            &pp.child("localhostProfile"),
            "must be set when seccomp type is Localhost",
        );
    }
    if t != "Localhost"
        && let Some(l) = local
    {
        errs.invalid(
            &pp.child("localhostProfile"),
            Bad::str(l),
            "can only be set when seccomp type is Localhost",
        );
    }
}

fn validate_pod_security_context(sc: Option<&Value>, path: &Path, errs: &mut Errors) {
    let Some(sc) = sc.filter(|s| !s.is_null()) else {
        return;
    };
    id_range(get_i64(sc, "fsGroup"), &path.child("fsGroup"), errs);
    id_range(get_i64(sc, "runAsUser"), &path.child("runAsUser"), errs);
    id_range(get_i64(sc, "runAsGroup"), &path.child("runAsGroup"), errs);
    for (i, g) in arr(sc, "supplementalGroups").iter().enumerate() {
        id_range(g.as_i64(), &path.child("supplementalGroups").index(i), errs);
    }
    if let Some(p) = sc.get("fsGroupChangePolicy").and_then(Value::as_str)
        && p != "OnRootMismatch"
        && p != "Always"
    {
        errs.not_supported(
            &path.child("fsGroupChangePolicy"),
            Bad::Json(super::field::json_str(p)),
            &["Always", "OnRootMismatch"],
        );
    }
    validate_seccomp(sc, path, errs);
}

fn validate_security_context(sc: Option<&Value>, path: &Path, errs: &mut Errors) {
    let Some(sc) = sc.filter(|s| !s.is_null()) else {
        return;
    };
    id_range(get_i64(sc, "runAsUser"), &path.child("runAsUser"), errs);
    id_range(get_i64(sc, "runAsGroup"), &path.child("runAsGroup"), errs);
    if let Some(pm) = sc.get("procMount").and_then(Value::as_str)
        && pm != "Default"
        && pm != "Unmasked"
    {
        errs.not_supported(
            &path.child("procMount"),
            Bad::str(pm),
            &["Default", "Unmasked"],
        );
    }
    validate_seccomp(sc, path, errs);
    if sc.get("allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false)
        && sc.get("privileged").and_then(Value::as_bool) == Some(true)
    {
        errs.invalid(
            path,
            Bad::json(sc),
            "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
        );
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    Liveness,
    Readiness,
    Startup,
}

fn validate_probe(
    probe: Option<&Value>,
    grace: Option<i64>,
    kind: Probe,
    path: &Path,
    errs: &mut Errors,
) {
    let Some(p) = probe.filter(|p| !p.is_null()) else {
        return;
    };
    validate_handler(p, grace, false, path, errs);
    for f in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(v) = get_i64(p, f)
            && v < 0
        {
            errs.invalid(
                &path.child(f),
                Bad::Int(v),
                "must be greater than or equal to 0",
            );
        }
    }
    if let Some(t) = get_i64(p, "terminationGracePeriodSeconds")
        && t <= 0
    {
        errs.invalid(
            &path.child("terminationGracePeriodSeconds"),
            Bad::Int(t),
            "must be greater than 0",
        );
    }
    match kind {
        Probe::Liveness | Probe::Startup => {
            let s = get_i64(p, "successThreshold").unwrap_or(0);
            if s != 1 {
                errs.invalid(&path.child("successThreshold"), Bad::Int(s), "must be 1");
            }
        }
        Probe::Readiness => {
            if let Some(t) = get_i64(p, "terminationGracePeriodSeconds") {
                errs.invalid(
                    &path.child("terminationGracePeriodSeconds"),
                    Bad::Int(t),
                    "must not be set for readinessProbes",
                );
            }
        }
    }
}

fn validate_lifecycle(l: &Value, grace: Option<i64>, path: &Path, errs: &mut Errors) {
    for h in ["postStart", "preStop"] {
        if let Some(x) = l.get(h).filter(|v| !v.is_null()) {
            validate_handler(x, grace, true, &path.child(h), errs);
        }
    }
}

/// `ValidatePortNumOrName` of an `IntOrString` port.
pub(crate) fn port_num_or_name(port: Option<&Value>, path: &Path, errs: &mut Errors) {
    match port {
        Some(Value::String(s)) => errs.invalid_each(path, s, format::port_name_errors(s)),
        Some(v) => {
            let n = v.as_i64().unwrap_or(0);
            for m in format::port_num_errors(n) {
                errs.invalid(path, Bad::Int(n), &m);
            }
        }
        None => {
            for m in format::port_num_errors(0) {
                errs.invalid(path, Bad::Int(0), &m);
            }
        }
    }
}

fn validate_handler(
    h: &Value,
    grace: Option<i64>,
    lifecycle: bool,
    path: &Path,
    errs: &mut Errors,
) {
    let kinds: &[&str] = if lifecycle {
        &["exec", "httpGet", "tcpSocket", "sleep"]
    } else {
        &["exec", "httpGet", "tcpSocket", "grpc"]
    };
    let mut n = 0;
    for k in kinds {
        let Some(x) = h.get(*k).filter(|v| !v.is_null()) else {
            continue;
        };
        let p = path.child(k);
        if n > 0 {
            errs.forbidden(&p, "may not specify more than 1 handler type");
            continue;
        }
        n += 1;
        match *k {
            "exec" if arr(x, "command").is_empty() => {
                errs.required(&p.child("command"), "");
            }
            "httpGet" => {
                if get_str(x, "path").is_empty() {
                    errs.required(&p.child("path"), "");
                }
                port_num_or_name(x.get("port"), &p.child("port"), errs);
                let scheme = get_str(x, "scheme");
                if scheme != "HTTP" && scheme != "HTTPS" {
                    errs.not_supported(&p.child("scheme"), Bad::str(scheme), &["HTTP", "HTTPS"]);
                }
                for hdr in arr(x, "httpHeaders") {
                    let name = get_str(hdr, "name");
                    errs.invalid_each(
                        &p.child("httpHeaders"),
                        name,
                        format::http_header_name_errors(name),
                    );
                }
            }
            "tcpSocket" => port_num_or_name(x.get("port"), &p.child("port"), errs),
            "grpc" => {
                let port = get_i64(x, "port").unwrap_or(0);
                for m in format::port_num_errors(port) {
                    errs.invalid(&p.child("port"), Bad::Int(port), &m);
                }
            }
            "sleep" => {
                let s = get_i64(x, "seconds").unwrap_or(0);
                let g = grace.unwrap_or(30);
                if s < 0 || s > g {
                    errs.invalid(
                        &p,
                        Bad::Int(s),
                        &format!(
                            "must be non-negative and less than terminationGracePeriodSeconds ({g})"
                        ),
                    );
                }
            }
            _ => {}
        }
    }
    if n == 0 {
        errs.required(path, "must specify a handler type");
    }
}

fn validate_host_network(spec: &Value, path: &Path, opts: PodOpts, errs: &mut Errors) {
    if spec.get("hostNetwork").and_then(Value::as_bool) != Some(true) {
        return;
    }
    for (i, c) in arr(spec, "containers").iter().enumerate() {
        for (j, p) in arr(c, "ports").iter().enumerate() {
            let hp = get_i64(p, "hostPort").unwrap_or(0);
            let cp = get_i64(p, "containerPort").unwrap_or(0);
            if (opts.resource_is_pod || hp != 0) && hp != cp {
                errs.invalid(
                    &path
                        .child("containers")
                        .index(i)
                        .child("ports")
                        .index(j)
                        .child("hostPort"),
                    Bad::Int(hp),
                    "must match `containerPort` when `hostNetwork` is true",
                );
            }
        }
    }
}

fn validate_dns_config(spec: &Value, path: &Path, errs: &mut Errors) {
    let policy = get_str(spec, "dnsPolicy");
    let cfg = spec.get("dnsConfig").filter(|c| !c.is_null());
    if policy == "None" {
        match cfg {
            None => {
                errs.required(path, "must provide `dnsConfig` when `dnsPolicy` is None");
                return;
            }
            Some(c) if arr(c, "nameservers").is_empty() => {
                errs.required(
                    &path.child("nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                );
                return;
            }
            _ => {}
        }
    }
    let Some(cfg) = cfg else { return };
    let ns = arr(cfg, "nameservers");
    if ns.len() > 3 {
        errs.invalid(
            &path.child("nameservers"),
            Bad::json(cfg.get("nameservers").unwrap_or(&Value::Null)),
            "must not have more than 3 nameservers",
        );
    }
    for (i, n) in ns.iter().enumerate() {
        format::ip_errors(
            errs,
            &path.child("nameservers").index(i),
            n.as_str().unwrap_or_default(),
        );
    }
    let searches = arr(cfg, "searches");
    if searches.len() > 32 {
        errs.invalid(
            &path.child("searches"),
            Bad::json(cfg.get("searches").unwrap_or(&Value::Null)),
            "must not have more than 32 search paths",
        );
    }
    for (i, o) in arr(cfg, "options").iter().enumerate() {
        if get_str(o, "name").is_empty() {
            errs.required(&path.child("options").index(i), "must not be empty");
        }
    }
}

fn validate_tolerations(tolerations: &[Value], path: &Path, errs: &mut Errors) {
    for (i, t) in tolerations.iter().enumerate() {
        let p = path.index(i);
        let key = get_str(t, "key");
        let op = get_str(t, "operator");
        let effect = get_str(t, "effect");
        if !key.is_empty() {
            meta::validate_label_name(key, &p.child("key"), errs);
        }
        if key.is_empty() && op != "Exists" {
            errs.invalid(
                &p.child("operator"),
                Bad::str(op),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            );
        }
        if t.get("tolerationSeconds").is_some_and(|s| !s.is_null()) && effect != "NoExecute" {
            errs.invalid(
                &p.child("effect"),
                Bad::str(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            );
        }
        match op {
            "Equal" | "" => {
                let value = get_str(t, "value");
                let problems = names::label_value_errors(value);
                if !problems.is_empty() {
                    errs.invalid(&p.child("operator"), Bad::str(value), &problems.join(";"));
                }
            }
            "Exists" => {
                if !get_str(t, "value").is_empty() {
                    errs.invalid(
                        &p.child("operator"),
                        Bad::json(t),
                        "value must be empty when `operator` is 'Exists'",
                    );
                }
            }
            other => {
                errs.not_supported(&p.child("operator"), Bad::str(other), &["Equal", "Exists"])
            }
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
        {
            errs.not_supported(
                &p.child("effect"),
                Bad::str(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            );
        }
    }
}

fn validate_affinity(affinity: Option<&Value>, path: &Path, errs: &mut Errors) {
    let Some(a) = affinity.filter(|a| !a.is_null()) else {
        return;
    };
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(pa) = a.get(kind).filter(|v| !v.is_null()) else {
            continue;
        };
        let kp = path.child(kind);
        let required = "requiredDuringSchedulingIgnoredDuringExecution";
        for (i, term) in arr(pa, required).iter().enumerate() {
            pod_affinity_term(term, &kp.child(required).index(i), errs);
        }
        let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
        for (i, w) in arr(pa, preferred).iter().enumerate() {
            let wp = kp.child(preferred).index(i);
            let weight = get_i64(w, "weight").unwrap_or(0);
            if !(1..=100).contains(&weight) {
                errs.invalid(
                    &wp.child("weight"),
                    Bad::Int(weight),
                    "must be in the range 1-100",
                );
            }
            pod_affinity_term(
                w.get("podAffinityTerm").unwrap_or(&Value::Null),
                &wp.child("podAffinityTerm"),
                errs,
            );
        }
    }
}

fn pod_affinity_term(term: &Value, path: &Path, errs: &mut Errors) {
    meta::validate_label_selector(
        term.get("labelSelector"),
        &path.child("labelSelector"),
        errs,
    );
    meta::validate_label_selector(
        term.get("namespaceSelector"),
        &path.child("namespaceSelector"),
        errs,
    );
    for (i, ns) in arr(term, "namespaces").iter().enumerate() {
        let ns = ns.as_str().unwrap_or_default();
        errs.invalid_each(
            &path.child("namespaces").index(i),
            ns,
            names::dns1123_label_errors(ns),
        );
    }
    let key = get_str(term, "topologyKey");
    if key.is_empty() {
        errs.required(&path.child("topologyKey"), "can not be empty");
    } else {
        meta::validate_label_name(key, &path.child("topologyKey"), errs);
    }
}

fn validate_topology_spread(constraints: &[Value], path: &Path, errs: &mut Errors) {
    for (i, c) in constraints.iter().enumerate() {
        let p = path.index(i);
        let skew = get_i64(c, "maxSkew").unwrap_or(0);
        if skew <= 0 {
            errs.invalid(
                &p.child("maxSkew"),
                Bad::Int(skew),
                "must be greater than zero",
            );
        }
        let key = get_str(c, "topologyKey");
        if key.is_empty() {
            errs.required(&p.child("topologyKey"), "can not be empty");
        }
        let when = get_str(c, "whenUnsatisfiable");
        if when != "DoNotSchedule" && when != "ScheduleAnyway" {
            errs.not_supported(
                &p.child("whenUnsatisfiable"),
                Bad::str(when),
                &["DoNotSchedule", "ScheduleAnyway"],
            );
        }
        if constraints[i + 1..]
            .iter()
            .any(|o| get_str(o, "topologyKey") == key && get_str(o, "whenUnsatisfiable") == when)
        {
            errs.duplicate(
                &p.child("{topologyKey, whenUnsatisfiable}"),
                Bad::Str(format!("{{{key}, {when}}}")),
            );
        }
        if let Some(min) = get_i64(c, "minDomains") {
            if min <= 0 {
                errs.invalid(
                    &p.child("minDomains"),
                    Bad::Int(min),
                    "must be greater than zero",
                );
            }
            if when != "DoNotSchedule" {
                errs.invalid(
                    &p.child("minDomains"),
                    Bad::Int(min),
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
                    ),
                );
            }
        }
        meta::validate_label_selector(c.get("labelSelector"), &p.child("labelSelector"), errs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.25"), "IfNotPresent");
        assert_eq!(pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn a_volume_without_a_source_is_an_empty_dir() {
        let mut pod =
            json!({"containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v"}]});
        default_pod_spec(pod.as_object_mut().unwrap());
        assert_eq!(pod["volumes"][0]["emptyDir"], json!({}));
        let mut e = Errors::new();
        validate_pod_spec(&pod, &Path::new("spec"), PodOpts::default(), &mut e);
        assert!(e.is_empty(), "{:?}", e);
    }

    #[test]
    fn mounts_of_unknown_volumes_are_not_found() {
        let mut pod = json!({"containers": [{"name": "c", "image": "i",
            "volumeMounts": [{"name": "missing", "mountPath": "/x"}]}]});
        default_pod_spec(pod.as_object_mut().unwrap());
        let mut e = Errors::new();
        validate_pod_spec(&pod, &Path::new("spec"), PodOpts::default(), &mut e);
        let c = e.into_causes();
        assert_eq!(c[0].field, "spec.containers[0].volumeMounts[0].name");
        assert_eq!(c[0].message, "Not found: \"missing\"");
    }
}
