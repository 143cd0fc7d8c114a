//! `networking.k8s.io/v1`: Ingresses and NetworkPolicies.

use serde_json::{Value, json};

use super::field::{Bad, Errors, Path};
use super::{arr, format, get_i64, get_str, meta, set_default, spec_mut};

// ---------------------------------------------------------------------------------------
// NetworkPolicy
// ---------------------------------------------------------------------------------------

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
pub(crate) fn default_network_policy(np: &mut Value) {
    let Some(spec) = spec_mut(np) else { return };
    for dir in ["ingress", "egress"] {
        if let Some(rules) = spec.get_mut(dir).and_then(Value::as_array_mut) {
            for r in rules.iter_mut() {
                if let Some(ports) = r.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        set_default(p, "protocol", json!("TCP"));
                    }
                }
            }
        }
    }
    let no_types = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_types {
        let egress = spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty());
        let types = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec.insert("policyTypes".into(), types);
    }
}

/// `ValidateNetworkPolicyPort`.
fn validate_port(p: &Value, path: &Path, errs: &mut Errors) {
    if let Some(proto) = p.get("protocol").and_then(Value::as_str)
        && !matches!(proto, "TCP" | "UDP" | "SCTP")
    {
        errs.not_supported(
            &path.child("protocol"),
            Bad::str(proto),
            &["TCP", "UDP", "SCTP"],
        );
    }
    let end = get_i64(p, "endPort");
    match p.get("port").filter(|v| !v.is_null()) {
        Some(Value::String(name)) => {
            if let Some(e) = end {
                errs.invalid(
                    &path.child("endPort"),
                    Bad::Int(e),
                    "may not be specified when `port` is non-numeric",
                );
            }
            errs.invalid_each(&path.child("port"), name, format::port_name_errors(name));
        }
        Some(v) => {
            let port = v.as_i64().unwrap_or(0);
            for m in format::port_num_errors(port) {
                errs.invalid(&path.child("port"), Bad::Int(port), &m);
            }
            if let Some(e) = end {
                if e < port {
                    errs.invalid(
                        &path.child("endPort"),
                        Bad::Int(port),
                        "must be greater than or equal to `port`",
                    );
                }
                for m in format::port_num_errors(e) {
                    errs.invalid(&path.child("endPort"), Bad::Int(e), &m);
                }
            }
        }
        None => {
            if let Some(e) = end {
                errs.invalid(
                    &path.child("endPort"),
                    Bad::Int(e),
                    "may not be specified when `port` is not specified",
                );
            }
        }
    }
}

/// `ValidateIPBlock`.
fn validate_ip_block(b: &Value, path: &Path, errs: &mut Errors) {
    let cidr = get_str(b, "cidr");
    if cidr.is_empty() {
        errs.required(&path.child("cidr"), "");
        return;
    }
    format::cidr_errors(errs, &path.child("cidr"), cidr);
    let Some(net) = format::parse_cidr(cidr) else {
        return;
    };
    for (i, e) in arr(b, "except").iter().enumerate() {
        let e = e.as_str().unwrap_or_default();
        let ep = path.child("except").index(i);
        format::cidr_errors(errs, &ep, e);
        let Some(ex) = format::parse_cidr(e) else {
            continue;
        };
        if !net.contains(ex.network()) || net.prefix >= ex.prefix {
            errs.invalid(&ep, Bad::str(e), "must be a strict subset of `cidr`");
        }
    }
}

/// `ValidateNetworkPolicyPeer`.
fn validate_peer(peer: &Value, path: &Path, errs: &mut Errors) {
    let mut n = 0;
    for k in ["podSelector", "namespaceSelector"] {
        if let Some(s) = peer.get(k).filter(|v| !v.is_null()) {
            n += 1;
            meta::validate_label_selector(Some(s), &path.child(k), errs);
        }
    }
    let ip_block = peer.get("ipBlock").filter(|v| !v.is_null());
    if let Some(b) = ip_block {
        n += 1;
        validate_ip_block(b, &path.child("ipBlock"), errs);
    }
    if n == 0 {
        errs.required(path, "must specify a peer");
    } else if n > 1 && ip_block.is_some() {
        errs.forbidden(path, "may not specify both ipBlock and another peer");
    }
}

fn validate_network_policy_spec(np: &Value, errs: &mut Errors) {
    let spec = np.get("spec").unwrap_or(&Value::Null);
    let sp = Path::new("spec");
    let pod_selector = spec.get("podSelector").cloned().unwrap_or(json!({}));
    meta::validate_label_selector(Some(&pod_selector), &sp.child("podSelector"), errs);
    for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in arr(spec, dir).iter().enumerate() {
            let rp = sp.child(dir).index(i);
            for (j, p) in arr(rule, "ports").iter().enumerate() {
                validate_port(p, &rp.child("ports").index(j), errs);
            }
            for (j, p) in arr(rule, peers).iter().enumerate() {
                validate_peer(p, &rp.child(peers).index(j), errs);
            }
        }
    }
    let types = arr(spec, "policyTypes");
    if types.len() > 2 {
        errs.invalid(
            &sp.child("policyTypes"),
            Bad::json(spec.get("policyTypes").unwrap_or(&Value::Null)),
            "may not specify more than two policyTypes",
        );
        return;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if t != "Ingress" && t != "Egress" {
            errs.not_supported(
                &sp.child("policyTypes").index(i),
                Bad::str(t),
                &["Ingress", "Egress"],
            );
        }
    }
}

/// `ValidateNetworkPolicy`.
pub(crate) fn validate_network_policy(np: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(np, true, meta::dns_subdomain, errs);
    validate_network_policy_spec(np, errs);
}

/// `ValidateNetworkPolicyUpdate`.
pub(crate) fn validate_network_policy_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    validate_network_policy_spec(new, errs);
}

// ---------------------------------------------------------------------------------------
// Ingress
// ---------------------------------------------------------------------------------------

/// A new Ingress's status.
pub(crate) fn created_status() -> Value {
    json!({"loadBalancer": {}})
}

const INVALID_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const INVALID_SUFFIXES: &[&str] = &["/..", "/."];

/// `validateIngressBackend` (of `networking.k8s.io/v1`).
fn validate_backend(b: &Value, path: &Path, errs: &mut Errors) {
    let resource = b.get("resource").filter(|v| !v.is_null());
    let service = b.get("service").filter(|v| !v.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errs.invalid(
            path,
            Bad::str(""),
            "cannot set both resource and service backends",
        ),
        (Some(r), None) => typed_local_reference(r, &path.child("resource"), errs),
        (None, Some(s)) => {
            let name = get_str(s, "name");
            let np = path.child("service").child("name");
            if name.is_empty() {
                errs.required(&np, "");
            } else {
                errs.invalid_each(&np, name, meta::dns1035_label(name, false));
            }
            let port = s.get("port").unwrap_or(&Value::Null);
            let pname = get_str(port, "name");
            let pnum = get_i64(port, "number").unwrap_or(0);
            let pp = path.child("service").child("port");
            if !pname.is_empty() && pnum != 0 {
                errs.invalid(
                    path,
                    Bad::str(""),
                    "cannot set both port name & port number",
                );
            } else if !pname.is_empty() {
                errs.invalid_each(&pp.child("name"), pname, format::port_name_errors(pname));
            } else if pnum != 0 {
                for m in format::port_num_errors(pnum) {
                    errs.invalid(&pp.child("number"), Bad::Int(pnum), &m);
                }
            } else {
                errs.required(path, "port name or number is required");
            }
        }
        (None, None) => errs.invalid(
            path,
            Bad::str(""),
            "resource or service backend is required",
        ),
    }
}

/// `validateIngressTypedLocalObjectReference`.
fn typed_local_reference(r: &Value, path: &Path, errs: &mut Errors) {
    if let Some(g) = r.get("apiGroup").and_then(Value::as_str) {
        errs.invalid_each(
            &path.child("apiGroup"),
            g,
            ocm_api::k8s::names::dns1123_subdomain_errors(g),
        );
    }
    for (f, missing) in [("kind", "kind is required"), ("name", "name is required")] {
        let v = get_str(r, f);
        if v.is_empty() {
            errs.required(&path.child(f), missing);
        } else {
            errs.invalid_each(&path.child(f), v, format::path_segment_errors(v));
        }
    }
}

fn validate_http_path(p: &Value, path: &Path, errs: &mut Errors) {
    let Some(pt) = p.get("pathType").and_then(Value::as_str) else {
        errs.required(&path.child("pathType"), "pathType must be specified");
        return;
    };
    let v = get_str(p, "path");
    let pp = path.child("path");
    match pt {
        "Exact" | "Prefix" => {
            if !v.starts_with('/') {
                errs.invalid(&pp, Bad::str(v), "must be an absolute path");
            }
            if !v.is_empty() {
                for s in INVALID_SEQUENCES {
                    if v.contains(s) {
                        errs.invalid(&pp, Bad::str(v), &format!("must not contain '{s}'"));
                    }
                }
                for s in INVALID_SUFFIXES {
                    if v.ends_with(s) {
                        errs.invalid(&pp, Bad::str(v), &format!("cannot end with '{s}'"));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !v.is_empty() && !v.starts_with('/') {
                errs.invalid(&pp, Bad::str(v), "must be an absolute path");
            }
        }
        other => errs.not_supported(
            &path.child("pathType"),
            Bad::str(other),
            &["Exact", "ImplementationSpecific", "Prefix"],
        ),
    }
    validate_backend(
        p.get("backend").unwrap_or(&Value::Null),
        &path.child("backend"),
        errs,
    );
}

fn host_errors(host: &str, path: &Path, errs: &mut Errors) -> bool {
    if format::is_ip(host) {
        errs.invalid(
            path,
            Bad::str(host),
            "must be a DNS name, not an IP address",
        );
    }
    if host.contains('*') {
        errs.invalid_each(path, host, format::wildcard_subdomain_errors(host));
        true
    } else {
        errs.invalid_each(
            path,
            host,
            ocm_api::k8s::names::dns1123_subdomain_errors(host),
        );
        false
    }
}

fn validate_ingress_spec(ing: &Value, allow_invalid_secret: bool, errs: &mut Errors) {
    let spec = ing.get("spec").unwrap_or(&Value::Null);
    let sp = Path::new("spec");
    let rules = arr(spec, "rules");
    let default_backend = spec.get("defaultBackend").filter(|v| !v.is_null());
    if rules.is_empty() && default_backend.is_none() {
        errs.invalid(
            &sp,
            spec.get("rules")
                .filter(|r| !r.is_null())
                .map_or_else(Bad::null, Bad::json),
            "either `defaultBackend` or `rules` must be specified",
        );
    }
    if let Some(b) = default_backend {
        validate_backend(b, &sp.child("defaultBackend"), errs);
    }
    for (i, r) in rules.iter().enumerate() {
        let rp = sp.child("rules").index(i);
        let host = get_str(r, "host");
        if !host.is_empty() {
            host_errors(host, &rp.child("host"), errs);
        }
        if let Some(http) = r.get("http").filter(|v| !v.is_null()) {
            let hp = rp.child("http");
            let paths = arr(http, "paths");
            if paths.is_empty() {
                errs.required(&hp.child("paths"), "");
            }
            for (j, p) in paths.iter().enumerate() {
                validate_http_path(p, &hp.child("paths").index(j), errs);
            }
        }
    }
    for (i, t) in arr(spec, "tls").iter().enumerate() {
        let tp = sp.child("tls").index(i);
        for (j, h) in arr(t, "hosts").iter().enumerate() {
            let h = h.as_str().unwrap_or_default();
            let hp = tp.child("hosts").index(j);
            if h.contains('*') {
                errs.invalid_each(&hp, h, format::wildcard_subdomain_errors(h));
            } else {
                errs.invalid_each(&hp, h, ocm_api::k8s::names::dns1123_subdomain_errors(h));
            }
        }
        let secret = get_str(t, "secretName");
        if !allow_invalid_secret && !secret.is_empty() {
            errs.invalid_each(
                &tp.child("secretName"),
                secret,
                meta::dns_subdomain(secret, false),
            );
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        errs.invalid_each(
            &sp.child("ingressClassName"),
            class,
            meta::dns_subdomain(class, false),
        );
    }
}

/// `ValidateIngressCreate`.
pub(crate) fn validate_ingress(ing: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(ing, true, meta::dns_subdomain, errs);
    validate_ingress_spec(ing, false, errs);
    let class = ing
        .pointer("/metadata/annotations")
        .and_then(|a| a.get("kubernetes.io/ingress.class"))
        .and_then(Value::as_str);
    if let Some(c) = class
        && ing
            .pointer("/spec/ingressClassName")
            .is_some_and(|v| !v.is_null())
    {
        errs.invalid(
            &Path::new("annotations").child("kubernetes.io/ingress.class"),
            Bad::str(c),
            "can not be set when the class field is also set",
        );
    }
}

/// `ValidateIngressUpdate` (an old Ingress with an invalid TLS secret name may keep one).
pub(crate) fn validate_ingress_update(new: &Value, old: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta_update(new, old, errs);
    let allow = arr(old.get("spec").unwrap_or(&Value::Null), "tls")
        .iter()
        .any(|t| {
            let s = get_str(t, "secretName");
            !s.is_empty() && !meta::dns_subdomain(s, false).is_empty()
        });
    meta::validate_core_object_meta(new, true, meta::dns_subdomain, errs);
    validate_ingress_spec(new, allow, errs);
}
