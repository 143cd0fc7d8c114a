//! Services: their defaults, their cluster IPs and node ports, and their rules.
//!
//! Every fake cluster is a single-stack IPv4 cluster with kubeadm's service range,
//! `10.96.0.0/12`, and the default node port range, `30000-32767`. kube-apiserver picks
//! free addresses and ports at random; the fake picks the lowest free ones (addresses
//! from `10.96.1.0` up, past the range kube-apiserver keeps for static assignments), so
//! tests see the same values on every run. Addresses and ports are unique among the
//! Services of one fake cluster.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Map, Value, json};

use super::field::{Bad, Errors, Path, go_struct, json_str};
use super::pod;
use super::{arr, format, get_i64, get_str, meta, set_default, spec_mut};

/// The service IP range.
pub(crate) const SERVICE_CIDR: &str = "10.96.0.0/12";
const NETWORK: u32 = 0x0a60_0000;
const NETWORK_SIZE: u32 = 1 << 20;
/// The first address handed out when none is asked for.
const FIRST_DYNAMIC: u32 = 256;
/// The node port range.
pub(crate) const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

/// The cluster IPs and node ports the other Services of a cluster hold.
#[derive(Debug, Default, Clone)]
pub(crate) struct Allocations {
    ips: BTreeSet<Ipv4Addr>,
    node_ports: BTreeSet<i64>,
}

impl Allocations {
    /// What Services with these `spec`s hold (the object being written left out by the
    /// caller).
    pub(crate) fn of<'a>(specs: impl Iterator<Item = &'a Value>) -> Self {
        let mut out = Self::default();
        for spec in specs {
            out.add(spec);
        }
        out
    }

    fn add(&mut self, spec: &Value) {
        for ip in arr(spec, "clusterIPs") {
            if let Some(Ok(a)) = ip.as_str().map(str::parse::<Ipv4Addr>) {
                self.ips.insert(a);
            }
        }
        for p in arr(spec, "ports") {
            if let Some(n) = get_i64(p, "nodePort").filter(|n| *n != 0) {
                self.node_ports.insert(n);
            }
        }
        if let Some(n) = get_i64(spec, "healthCheckNodePort").filter(|n| *n != 0) {
            self.node_ports.insert(n);
        }
    }

    fn next_ip(&self) -> Option<Ipv4Addr> {
        (FIRST_DYNAMIC..NETWORK_SIZE - 1)
            .chain(1..FIRST_DYNAMIC)
            .map(|o| Ipv4Addr::from(NETWORK + o))
            .find(|ip| !self.ips.contains(ip))
    }

    fn next_port(&self, taken: &BTreeSet<i64>) -> Option<i64> {
        NODE_PORTS
            .clone()
            .find(|p| !self.node_ports.contains(p) && !taken.contains(p))
    }
}

// ---------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------

fn service_type(spec: &Value) -> &str {
    get_str(spec, "type")
}

/// `service.ExternallyAccessible`.
fn externally_accessible(spec: &Value) -> bool {
    matches!(service_type(spec), "LoadBalancer" | "NodePort")
        || (service_type(spec) == "ClusterIP" && !arr(spec, "externalIPs").is_empty())
}

/// `SetDefaults_Service`.
pub(crate) fn default_service(svc: &mut Value) {
    let Some(spec) = spec_mut(svc) else { return };
    set_default(spec, "sessionAffinity", json!("None"));
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    set_default(spec, "type", json!("ClusterIP"));
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
            let unset = match p.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty(),
                Some(v) => v.as_i64() == Some(0),
            };
            if unset {
                let port = p.get("port").cloned().unwrap_or(json!(0));
                p.insert("targetPort".into(), port);
            }
        }
    }
    let view = Value::Object(spec.clone());
    if externally_accessible(&view) {
        set_default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    let t = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if t == "LoadBalancer" {
        set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if matches!(t.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
}

// ---------------------------------------------------------------------------------------
// Allocation
// ---------------------------------------------------------------------------------------

fn needs_cluster_ip(spec: &Value) -> bool {
    service_type(spec) != "ExternalName"
}

fn needs_node_port(spec: &Value) -> bool {
    match service_type(spec) {
        "NodePort" => true,
        "LoadBalancer" => spec
            .get("allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

fn needs_health_check(spec: &Value) -> bool {
    service_type(spec) == "LoadBalancer" && get_str(spec, "externalTrafficPolicy") == "Local"
}

fn is_headless(spec: &Value) -> bool {
    let ips = arr(spec, "clusterIPs");
    ips.len() == 1 && ips[0].as_str() == Some("None")
}

fn strings(list: &[Value]) -> Vec<&str> {
    list.iter().filter_map(Value::as_str).collect()
}

fn string_list_json(list: &[Value]) -> String {
    let items: Vec<String> = strings(list).into_iter().map(json_str).collect();
    format!("[{}]", items.join(","))
}

/// Give a new Service its IP families, cluster IPs and node ports
/// (`allocateCreate`); an address or port that cannot be had is the error.
pub(crate) fn allocate_create(svc: &mut Value, taken: &Allocations, errs: &mut Errors) {
    let Some(spec) = spec_mut(svc) else { return };
    normalize_cluster_ips(spec, None);
    let view = Value::Object(spec.clone());
    if needs_cluster_ip(&view) {
        if !ip_families(spec, errs) {
            return;
        }
        allocate_cluster_ip(spec, taken, errs);
        if !errs.is_empty() {
            return;
        }
    }
    allocate_node_ports(spec, taken, errs);
}

/// `normalizeClusterIPs`: a client that sets only `clusterIP` (as older ones do) has
/// `clusterIPs` follow it; `clusterIP` is never inferred from `clusterIPs`.
fn normalize_cluster_ips(spec: &mut Map<String, Value>, old: Option<&Value>) {
    let ip = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ips_empty = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let Some(old) = old else {
        if !ip.is_empty() && ips_empty {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
        return;
    };
    if get_str(old, "clusterIP") == ip {
        return;
    }
    let same_ips = spec.get("clusterIPs") == old.get("clusterIPs");
    if !same_ips {
        return;
    }
    if ip.is_empty() {
        spec.remove("clusterIPs");
    } else if let Some(ips) = spec.get_mut("clusterIPs").and_then(Value::as_array_mut)
        && !ips.is_empty()
    {
        ips[0] = json!(ip);
    } else {
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

/// The IP families and family policy of a single-stack IPv4 cluster; false when the
/// request cannot be met (the error is in `errs`).
fn ip_families(spec: &mut Map<String, Value>, errs: &mut Errors) -> bool {
    let view = Value::Object(spec.clone());
    let headless_no_selector = is_headless(&view)
        && spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
    let policy = spec.get("ipFamilyPolicy").and_then(Value::as_str);
    if policy == Some("RequireDualStack") && !headless_no_selector {
        errs.invalid(
            &Path::new("spec").child("ipFamilyPolicy"),
            Bad::Json(json_str("RequireDualStack")),
            "this cluster is not configured for dual-stack services",
        );
        return false;
    }
    for (i, f) in arr(&view, "ipFamilies").iter().enumerate() {
        if f.as_str() == Some("IPv6") {
            errs.invalid(
                &Path::new("spec").child("ipFamilies").index(i),
                Bad::Json(json_str("IPv6")),
                "not configured on this cluster",
            );
            return false;
        }
    }
    if policy.is_none() {
        let p = if headless_no_selector {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.insert("ipFamilyPolicy".into(), json!(p));
    }
    if spec
        .get("ipFamilies")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert("ipFamilies".into(), json!(["IPv4"]));
    }
    true
}

fn allocate_cluster_ip(spec: &mut Map<String, Value>, taken: &Allocations, errs: &mut Errors) {
    let view = Value::Object(spec.clone());
    if is_headless(&view) {
        return;
    }
    let ips = arr(&view, "clusterIPs");
    if get_str(&view, "clusterIP").is_empty() && !ips.is_empty() {
        // `clusterIPs` without `clusterIP`: validation says so.
        return;
    }
    match ips.first().and_then(Value::as_str) {
        None => match taken.next_ip() {
            Some(ip) => {
                spec.insert("clusterIP".into(), json!(ip.to_string()));
                spec.insert("clusterIPs".into(), json!([ip.to_string()]));
            }
            None => errs.internal(
                &Path::new("spec").child("clusterIPs"),
                "failed to allocate a serviceIP: range is full",
            ),
        },
        Some(requested) => {
            let Ok(ip) = requested.parse::<Ipv4Addr>() else {
                // Not an address: validation reports it.
                return;
            };
            let range = format::parse_cidr(SERVICE_CIDR);
            let problem = if range.is_some_and(|r| !r.contains(IpAddr::V4(ip)))
                || u32::from(ip) == NETWORK
                || u32::from(ip) == NETWORK + NETWORK_SIZE - 1
            {
                Some(format!(
                    "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"
                ))
            } else if taken.ips.contains(&ip) {
                Some("provided IP is already allocated".to_string())
            } else {
                None
            };
            if let Some(p) = problem {
                errs.invalid(
                    &Path::new("spec").child("clusterIPs"),
                    Bad::Json(string_list_json(ips)),
                    &format!("failed to allocate IP {ip}: {p}"),
                );
            }
        }
    }
}

fn allocate_node_ports(spec: &mut Map<String, Value>, taken: &Allocations, errs: &mut Errors) {
    let view = Value::Object(spec.clone());
    let mut mine = BTreeSet::new();
    if needs_node_port(&view) {
        // Ports asked for first: they must be free and in range.
        for (i, p) in arr(&view, "ports").iter().enumerate() {
            let Some(n) = get_i64(p, "nodePort").filter(|n| *n != 0) else {
                continue;
            };
            if mine.contains(&n) {
                continue;
            }
            let problem = if !NODE_PORTS.contains(&n) {
                Some(format!(
                    "provided port is not in the valid range. The range of valid ports is {}-{}",
                    NODE_PORTS.start(),
                    NODE_PORTS.end()
                ))
            } else if taken.node_ports.contains(&n) {
                Some("provided port is already allocated".to_string())
            } else {
                None
            };
            match problem {
                Some(m) => errs.invalid(
                    &Path::new("spec").child("ports").index(i).child("nodePort"),
                    Bad::Int(n),
                    &m,
                ),
                None => {
                    mine.insert(n);
                }
            }
        }
        if !errs.is_empty() {
            return;
        }
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                    continue;
                }
                match taken.next_port(&mine) {
                    Some(n) => {
                        mine.insert(n);
                        p.insert("nodePort".into(), json!(n));
                    }
                    None => {
                        errs.internal(
                            &Path::new("spec").child("ports"),
                            "failed to allocate a nodePort: range is full",
                        );
                        return;
                    }
                }
            }
        }
    }
    if needs_health_check(&view)
        && get_i64(&view, "healthCheckNodePort").unwrap_or(0) == 0
        && let Some(n) = taken.next_port(&mine)
    {
        spec.insert("healthCheckNodePort".into(), json!(n));
    }
}

/// What a Service update keeps of its old allocations and gives up with its type
/// (`patchAllocatedValues`, `dropTypeDependentFields`), then what it allocates anew.
pub(crate) fn prepare_update(svc: &mut Value, old: &Value, taken: &Allocations, errs: &mut Errors) {
    let os = old.get("spec").cloned().unwrap_or(Value::Null);
    let Some(spec) = spec_mut(svc) else { return };
    let view = Value::Object(spec.clone());
    if needs_cluster_ip(&os) && needs_cluster_ip(&view) {
        for f in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            let missing = match spec.get(f) {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            if missing && let Some(v) = os.get(f) {
                spec.insert(f.into(), v.clone());
            }
        }
    }
    if needs_node_port(&os) && needs_node_port(&view) {
        let old_by_name: Vec<(&str, i64)> = arr(&os, "ports")
            .iter()
            .map(|p| (get_str(p, "name"), get_i64(p, "nodePort").unwrap_or(0)))
            .collect();
        let used: BTreeSet<i64> = arr(&view, "ports")
            .iter()
            .filter_map(|p| get_i64(p, "nodePort"))
            .filter(|n| *n != 0)
            .collect();
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                    continue;
                }
                let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
                if let Some((_, n)) = old_by_name.iter().find(|(o, _)| *o == name)
                    && *n != 0
                    && !used.contains(n)
                {
                    p.insert("nodePort".into(), json!(n));
                }
            }
        }
    }
    if needs_health_check(&os)
        && needs_health_check(&view)
        && get_i64(&view, "healthCheckNodePort").unwrap_or(0) == 0
        && let Some(v) = os.get("healthCheckNodePort")
    {
        spec.insert("healthCheckNodePort".into(), v.clone());
    }
    normalize_cluster_ips(spec, Some(&os));
    drop_type_dependent(spec, &os);
    let view = Value::Object(spec.clone());
    if needs_cluster_ip(&view) && !needs_cluster_ip(&os) {
        if !ip_families(spec, errs) {
            return;
        }
        allocate_cluster_ip(spec, taken, errs);
        if !errs.is_empty() {
            return;
        }
    }
    allocate_node_ports(spec, taken, errs);
}

/// Fields the new type does not use, dropped when the update left them as they were.
fn drop_type_dependent(spec: &mut Map<String, Value>, old: &Value) {
    let view = Value::Object(spec.clone());
    let same = |f: &str| view.get(f) == old.get(f);
    if needs_cluster_ip(old) && !needs_cluster_ip(&view) && same("clusterIPs") && same("clusterIP")
    {
        for f in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            spec.remove(f);
        }
    }
    let old_ports: Vec<i64> = arr(old, "ports")
        .iter()
        .map(|p| get_i64(p, "nodePort").unwrap_or(0))
        .collect();
    let new_ports: Vec<i64> = arr(&view, "ports")
        .iter()
        .map(|p| get_i64(p, "nodePort").unwrap_or(0))
        .collect();
    let same_node_ports = new_ports.iter().all(|n| *n == 0 || old_ports.contains(n));
    if needs_node_port(old)
        && !needs_node_port(&view)
        && same_node_ports
        && let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut)
    {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            p.remove("nodePort");
        }
    }
    if needs_health_check(old) && !needs_health_check(&view) && same("healthCheckNodePort") {
        spec.remove("healthCheckNodePort");
    }
    if service_type(old) == "LoadBalancer" && service_type(&view) != "LoadBalancer" {
        for f in ["allocateLoadBalancerNodePorts", "loadBalancerClass"] {
            if same(f) {
                spec.remove(f);
            }
        }
    }
    if externally_accessible(old) && !externally_accessible(&view) && same("externalTrafficPolicy")
    {
        spec.remove("externalTrafficPolicy");
    }
}

/// A new Service's status.
pub(crate) fn created_status() -> Value {
    json!({"loadBalancer": {}})
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/// The internal `core.ServicePort` Go writes for a duplicate (protocol, port) pair.
fn port_key_json(protocol: &str, port: i64) -> String {
    go_struct(&[
        ("Name", Some(json_str(""))),
        ("Protocol", Some(json_str(protocol))),
        ("AppProtocol", Some("null".into())),
        ("Port", Some(port.to_string())),
        ("TargetPort", Some("0".into())),
        ("NodePort", Some("0".into())),
    ])
}

fn validate_service_port(
    p: &Value,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &Path,
    errs: &mut Errors,
) {
    let name = get_str(p, "name");
    if require_name && name.is_empty() {
        errs.required(&path.child("name"), "");
    } else if !name.is_empty() {
        errs.invalid_each(
            &path.child("name"),
            name,
            ocm_api::k8s::names::dns1123_label_errors(name),
        );
        if !names.insert(name.to_string()) {
            errs.duplicate(&path.child("name"), Bad::str(name));
        }
    }
    let port = get_i64(p, "port").unwrap_or(0);
    for m in format::port_num_errors(port) {
        errs.invalid(&path.child("port"), Bad::Int(port), &m);
    }
    pod::validate_protocol(get_str(p, "protocol"), &path.child("protocol"), errs);
    pod::port_num_or_name(p.get("targetPort"), &path.child("targetPort"), errs);
    if let Some(ap) = p.get("appProtocol").and_then(Value::as_str) {
        errs.invalid_each(
            &path.child("appProtocol"),
            ap,
            ocm_api::k8s::names::label_key_errors(ap),
        );
    }
}

/// The cluster IPs of a service other than ExternalName: `clusterIPs` starting with
/// `clusterIP`, known IP families, valid IPs (at most one per family, as `ipFamilies` says).
fn validate_cluster_ip_fields(spec: &Value, errs: &mut Errors) {
    if service_type(spec) == "ExternalName" {
        return;
    }
    let sp = Path::new("spec");
    let ips_path = sp.child("clusterIPs");
    let ips = arr(spec, "clusterIPs");
    let ip = get_str(spec, "clusterIP");
    if !ip.is_empty() {
        if ips.is_empty() {
            errs.required(&ips_path, "");
        } else if ips[0].as_str() != Some(ip) {
            errs.invalid(
                &ips_path,
                Bad::Json(string_list_json(ips)),
                "first value must match `clusterIP`",
            );
        }
    } else if !ips.is_empty() {
        errs.invalid(
            &ips_path,
            Bad::Json(string_list_json(ips)),
            "must be empty when `clusterIP` is not specified",
        );
    }
    validate_ip_families(spec, &sp, errs);
    let mut invalid_ips = false;
    for (i, v) in ips.iter().enumerate() {
        let v = v.as_str().unwrap_or_default();
        if i == 0 && v == "None" {
            if ips.len() > 1 {
                invalid_ips = true;
                errs.invalid(
                    &ips_path,
                    Bad::Json(string_list_json(ips)),
                    "'None' must be the first and only value",
                );
            }
            continue;
        }
        let before = errs.len();
        format::ip_errors(errs, &ips_path.index(i), v);
        invalid_ips |= errs.len() > before;
    }
    if ips.len() > 2 {
        errs.invalid(
            &ips_path,
            Bad::Json(string_list_json(ips)),
            "may only hold up to 2 values",
        );
    }
    if invalid_ips {
        return;
    }
    if ips.len() > 1 {
        let v6 = ips
            .iter()
            .filter(|i| format::is_ipv6(i.as_str().unwrap_or_default()))
            .count();
        if v6 != 1 || ips.len() != 2 {
            errs.invalid(
                &ips_path,
                Bad::Json(string_list_json(ips)),
                "may specify no more than one IP for each IP family",
            );
        }
    }
    if !is_headless(spec) {
        let families = strings(arr(spec, "ipFamilies"));
        for (i, ip) in strings(ips).into_iter().enumerate() {
            let Some(f) = families.get(i) else { break };
            if *f == "IPv4" && format::is_ipv6(ip) {
                errs.invalid(
                    &ips_path.index(i),
                    Bad::str(ip),
                    &format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                );
            }
            if *f == "IPv6" && !format::is_ipv6(ip) {
                errs.invalid(
                    &ips_path.index(i),
                    Bad::str(ip),
                    &format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                );
            }
        }
    }
}

/// A service's `ipFamilies` (known and unique) and `ipFamilyPolicy` (known).
fn validate_ip_families(spec: &Value, sp: &Path, errs: &mut Errors) {
    let mut seen = BTreeSet::new();
    for (i, f) in arr(spec, "ipFamilies").iter().enumerate() {
        let f = f.as_str().unwrap_or_default();
        let fp = sp.child("ipFamilies").index(i);
        if f != "IPv4" && f != "IPv6" {
            errs.not_supported(&fp, Bad::Json(json_str(f)), &["IPv4", "IPv6"]);
        }
        if !seen.insert(f) {
            errs.duplicate(&fp, Bad::Json(json_str(f)));
        }
    }
    if let Some(p) = spec.get("ipFamilyPolicy").and_then(Value::as_str)
        && !matches!(p, "SingleStack" | "PreferDualStack" | "RequireDualStack")
    {
        errs.not_supported(
            &sp.child("ipFamilyPolicy"),
            Bad::Json(json_str(p)),
            &["PreferDualStack", "RequireDualStack", "SingleStack"],
        );
    }
}

fn validate_non_special_ip(ip: &str, path: &Path, errs: &mut Errors) {
    let Ok(addr) = ip.parse::<IpAddr>() else {
        return;
    };
    if addr.is_unspecified() {
        errs.invalid(
            path,
            Bad::str(ip),
            &format!("may not be unspecified ({ip})"),
        );
    }
    if addr.is_loopback() {
        errs.invalid(
            path,
            Bad::str(ip),
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        );
    }
    let link_local = match addr {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local {
        errs.invalid(
            path,
            Bad::str(ip),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        );
    }
    let link_local_multicast = match addr {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => (v6.segments()[0] & 0xff0f) == 0xff02,
    };
    if link_local_multicast {
        errs.invalid(
            path,
            Bad::str(ip),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        );
    }
}

/// `ValidateService`.
// Long on purpose: it follows kube-apiserver's ValidateService check by check, so that its
// causes come out in kube's order; kept whole, it can be read side by side with kube's.
pub(crate) fn validate_service(svc: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(svc, true, meta::dns1035_label, errs);
    let spec = svc.get("spec").unwrap_or(&Value::Null);
    let sp = Path::new("spec");
    let t = service_type(spec);
    let ports = arr(spec, "ports");
    let headless = is_headless(spec);
    if ports.is_empty() && !headless && t != "ExternalName" {
        errs.required(&sp.child("ports"), "");
    }
    match t {
        "LoadBalancer" => {
            for (i, p) in ports.iter().enumerate() {
                if get_i64(p, "port") == Some(10250) {
                    errs.invalid(
                        &sp.child("ports").index(i),
                        Bad::Int(10250),
                        "may not expose port 10250 externally since it is used by kubelet",
                    );
                }
            }
            if headless {
                errs.invalid(
                    &sp.child("clusterIPs").index(0),
                    Bad::str("None"),
                    "may not be set to 'None' for LoadBalancer services",
                );
            }
        }
        "NodePort" if headless => errs.invalid(
            &sp.child("clusterIPs").index(0),
            Bad::str("None"),
            "may not be set to 'None' for NodePort services",
        ),
        "ExternalName" => {
            if !arr(spec, "clusterIPs").is_empty() {
                errs.forbidden(
                    &sp.child("clusterIPs"),
                    "may not be set for ExternalName services",
                );
            }
            if !arr(spec, "ipFamilies").is_empty() {
                errs.forbidden(
                    &sp.child("ipFamilies"),
                    "may not be set for ExternalName services",
                );
            }
            if spec.get("ipFamilyPolicy").is_some_and(|p| !p.is_null()) {
                errs.forbidden(
                    &sp.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                );
            }
            let cname = get_str(spec, "externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errs.required(&sp.child("externalName"), "");
            } else {
                errs.invalid_each(
                    &sp.child("externalName"),
                    cname,
                    ocm_api::k8s::names::dns1123_subdomain_errors(cname),
                );
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        validate_service_port(
            p,
            ports.len() > 1,
            &mut names,
            &sp.child("ports").index(i),
            errs,
        );
    }
    if spec.get("selector").is_some_and(|s| !s.is_null()) {
        meta::validate_labels(spec.get("selector"), &sp.child("selector"), errs);
    }
    let affinity = get_str(spec, "sessionAffinity");
    match affinity {
        "" => errs.required(&sp.child("sessionAffinity"), ""),
        "ClientIP" | "None" => {}
        other => errs.not_supported(
            &sp.child("sessionAffinity"),
            Bad::str(other),
            &["ClientIP", "None"],
        ),
    }
    let config = spec.get("sessionAffinityConfig").filter(|c| !c.is_null());
    let cp = sp.child("sessionAffinityConfig");
    if affinity == "ClientIP" {
        let required = "when session affinity type is ClientIP";
        match config {
            None => errs.required(&cp, required),
            Some(c) => match c.get("clientIP").filter(|c| !c.is_null()) {
                None => errs.required(&cp.child("clientIP"), required),
                Some(ip) => match get_i64(ip, "timeoutSeconds") {
                    None => errs.required(&cp.child("clientIP").child("timeoutSeconds"), required),
                    Some(t) if t <= 0 || t > 86400 => errs.invalid(
                        &cp.child("clientIP").child("timeoutSeconds"),
                        Bad::Int(t),
                        "must be greater than 0 and less than 86400",
                    ),
                    Some(_) => {}
                },
            },
        }
    } else if affinity == "None" && config.is_some() {
        errs.forbidden(&cp, "must not be set when session affinity is None");
    }
    validate_cluster_ip_fields(spec, errs);
    for (i, ip) in arr(spec, "externalIPs").iter().enumerate() {
        let ip = ip.as_str().unwrap_or_default();
        let p = sp.child("externalIPs").index(i);
        let before = errs.len();
        format::ip_errors(errs, &p, ip);
        if errs.len() == before {
            validate_non_special_ip(ip, &p, errs);
        }
    }
    match t {
        "" => errs.required(&sp.child("type"), ""),
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName" => {}
        other => errs.not_supported(
            &sp.child("type"),
            Bad::str(other),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ),
    }
    if t == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if get_i64(p, "nodePort").unwrap_or(0) != 0 {
                errs.forbidden(
                    &sp.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                );
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let n = get_i64(p, "nodePort").unwrap_or(0);
        if n == 0 {
            continue;
        }
        if !node_ports.insert((get_str(p, "protocol"), n)) {
            errs.duplicate(&sp.child("ports").index(i).child("nodePort"), Bad::Int(n));
        }
    }
    let mut pairs = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let key = (get_str(p, "protocol"), get_i64(p, "port").unwrap_or(0));
        if !pairs.insert(key) {
            errs.duplicate(
                &sp.child("ports").index(i),
                Bad::Json(port_key_json(key.0, key.1)),
            );
        }
    }
    let ranges = arr(spec, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        let rp = sp.child("LoadBalancerSourceRanges");
        if t != "LoadBalancer" {
            errs.forbidden(&rp, "may only be used when `type` is 'LoadBalancer'");
        }
        for (i, r) in ranges.iter().enumerate() {
            format::cidr_errors(errs, &rp.index(i), r.as_str().unwrap_or_default().trim());
        }
    }
    if spec
        .get("allocateLoadBalancerNodePorts")
        .is_some_and(|a| !a.is_null())
        && t != "LoadBalancer"
    {
        errs.forbidden(
            &sp.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        );
    }
    if let Some(class) = spec.get("loadBalancerClass").and_then(Value::as_str) {
        if t == "LoadBalancer" {
            meta::validate_label_name(class, &sp.child("loadBalancerClass"), errs);
        } else {
            errs.forbidden(
                &sp.child("loadBalancerClass"),
                "may only be used when `type` is 'LoadBalancer'",
            );
        }
    }
    let etp = get_str(spec, "externalTrafficPolicy");
    if !externally_accessible(spec) {
        if !etp.is_empty() {
            errs.invalid(
                &sp.child("externalTrafficPolicy"),
                Bad::str(etp),
                "may only be set for externally-accessible services",
            );
        }
    } else if etp.is_empty() {
        errs.required(&sp.child("externalTrafficPolicy"), "");
    } else if etp != "Cluster" && etp != "Local" {
        errs.not_supported(
            &sp.child("externalTrafficPolicy"),
            Bad::str(etp),
            &["Cluster", "Local"],
        );
    }
    let hc = get_i64(spec, "healthCheckNodePort").unwrap_or(0);
    if !needs_health_check(spec) {
        if hc != 0 {
            errs.invalid(
                &sp.child("healthCheckNodePort"),
                Bad::Int(hc),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            );
        }
    } else if hc == 0 {
        errs.required(&sp.child("healthCheckNodePort"), "");
    } else {
        for m in format::port_num_errors(hc) {
            errs.invalid(&sp.child("healthCheckNodePort"), Bad::Int(hc), &m);
        }
    }
    match spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        None if matches!(t, "ClusterIP" | "NodePort" | "LoadBalancer") => {
            errs.required(&sp.child("internalTrafficPolicy"), "");
        }
        Some(p) if p != "Cluster" && p != "Local" => errs.not_supported(
            &sp.child("internalTrafficPolicy"),
            Bad::str(p),
            &["Cluster", "Local"],
        ),
        _ => {}
    }
}

/// `ValidateServiceUpdate`.
pub(crate) fn validate_service_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    let (ns, os) = (
        new.get("spec").unwrap_or(&Value::Null),
        old.get("spec").unwrap_or(&Value::Null),
    );
    let ips_path = Path::new("spec").child("clusterIPs");
    let external = service_type(ns) == "ExternalName" || service_type(os) == "ExternalName";
    if !(external || is_headless(ns) && is_headless(os)) {
        let (n, o) = (arr(ns, "clusterIPs"), arr(os, "clusterIPs"));
        let json = Bad::Json(string_list_json(n));
        if n.len() == o.len() {
            for (i, ip) in o.iter().enumerate() {
                if n.get(i) != Some(ip) {
                    errs.invalid(&ips_path.index(i), json.clone(), "may not change once set");
                }
            }
        } else if o.len() > n.len() {
            if n.is_empty() {
                errs.invalid(
                    &ips_path.index(0),
                    json.clone(),
                    "primary clusterIP can not be unset",
                );
            }
            if !n.is_empty() && n.first() != o.first() {
                errs.invalid(&ips_path.index(0), json, "may not change once set");
            }
        } else if !o.is_empty() && n.first() != o.first() {
            errs.invalid(&ips_path.index(0), json, "may not change once set");
        }
    }
    if !external && is_headless(ns) == is_headless(os) && !is_headless(ns) {
        let (n, o) = (arr(ns, "ipFamilies"), arr(os, "ipFamilies"));
        let fam = Path::new("spec").child("ipFamilies").index(0);
        if n.len() == o.len() {
            for (i, f) in o.iter().enumerate() {
                if n.get(i) != Some(f) {
                    errs.invalid(
                        &fam,
                        Bad::Json(string_list_json(n)),
                        "may not change once set",
                    );
                }
            }
        }
    }
    if service_type(os) == "LoadBalancer"
        && service_type(ns) == "LoadBalancer"
        && ns.get("loadBalancerClass") != os.get("loadBalancerClass")
    {
        errs.invalid(
            &Path::new("spec").child("loadBalancerClass"),
            ns.get("loadBalancerClass")
                .and_then(Value::as_str)
                .map_or_else(Bad::null, |c| Bad::Json(json_str(c))),
            "may not change once set",
        );
    }
    if needs_health_check(os)
        && needs_health_check(ns)
        && get_i64(ns, "healthCheckNodePort") != get_i64(os, "healthCheckNodePort")
    {
        errs.forbidden(
            &Path::new("spec").child("healthCheckNodePort"),
            "field is immutable",
        );
    }
    validate_service(new, errs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_ports_are_handed_out_in_order() {
        let mut a = json!({"metadata": {"name": "a", "namespace": "d"},
                           "spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        default_service(&mut a);
        let mut e = Errors::new();
        allocate_create(&mut a, &Allocations::default(), &mut e);
        assert!(e.is_empty());
        assert_eq!(a["spec"]["clusterIP"], "10.96.1.0");
        assert_eq!(a["spec"]["clusterIPs"], json!(["10.96.1.0"]));
        assert_eq!(a["spec"]["ports"][0]["nodePort"], 30000);
        assert_eq!(a["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(a["spec"]["ipFamilyPolicy"], "SingleStack");
        let taken = Allocations::of([&a["spec"]].into_iter());
        let mut b = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        default_service(&mut b);
        allocate_create(&mut b, &taken, &mut e);
        assert_eq!(b["spec"]["clusterIP"], "10.96.1.1");
        assert_eq!(b["spec"]["ports"][0]["nodePort"], 30001);
        let mut c = json!({"spec": {"clusterIP": "10.96.1.0", "ports": [{"port": 80}]}});
        default_service(&mut c);
        allocate_create(&mut c, &taken, &mut e);
        let causes = e.into_causes();
        assert_eq!(causes[0].field, "spec.clusterIPs");
        assert_eq!(
            causes[0].message,
            "Invalid value: [\"10.96.1.0\"]: failed to allocate IP 10.96.1.0: provided IP is already allocated"
        );
    }

    #[test]
    fn headless_services_keep_none() {
        let mut s = json!({"spec": {"clusterIP": "None", "selector": {"a": "b"}}});
        default_service(&mut s);
        let mut e = Errors::new();
        allocate_create(&mut s, &Allocations::default(), &mut e);
        assert_eq!(s["spec"]["clusterIPs"], json!(["None"]));
        assert_eq!(s["spec"]["ipFamilyPolicy"], "SingleStack");
        let mut s = json!({"spec": {"clusterIP": "None"}});
        default_service(&mut s);
        allocate_create(&mut s, &Allocations::default(), &mut e);
        assert_eq!(s["spec"]["ipFamilyPolicy"], "RequireDualStack");
        assert!(e.is_empty());
    }
}
