//! The value formats apimachinery's `util/validation` checks beyond names: config keys,
//! port names and numbers, environment variable names, percentages, HTTP header names,
//! wildcard subdomains, IP addresses and CIDRs. Each returns apimachinery's messages in
//! its order (empty when the value is valid). Names, label keys and label values are in
//! [`ocm_api::k8s::names`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ocm_api::k8s::names;

use super::field::{Bad, Errors, Path};

use names::regex_error;

/// `hasChDirPrefix`.
fn chdir_prefix(value: &str) -> Option<&'static str> {
    match value {
        "." => Some("must not be '.'"),
        ".." => Some("must not be '..'"),
        v if v.starts_with("..") => Some("must not start with '..'"),
        _ => None,
    }
}

/// `IsConfigMapKey`: ConfigMap and Secret keys, key selectors.
pub(crate) fn config_key_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > names::MAX_SUBDOMAIN_LENGTH {
        out.push(format!(
            "must be no more than {} characters",
            names::MAX_SUBDOMAIN_LENGTH
        ));
    }
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        out.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if let Some(m) = chdir_prefix(value) {
        out.push(m.to_string());
    }
    out
}

/// `IsValidPortName`: a named port (IANA service name).
pub(crate) fn port_name_errors(port: &str) -> Vec<String> {
    let mut out = Vec::new();
    if port.len() > 15 {
        out.push("must be no more than 15 characters".to_string());
    }
    if port.is_empty()
        || !port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

/// `InclusiveRangeError`.
pub(crate) fn inclusive_range(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// `IsValidPortNum`.
pub(crate) fn port_num_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range(1, 65535)]
    }
}

/// `IsRelaxedEnvVarName` (the `RelaxedEnvironmentVariableValidation` rules, GA since
/// Kubernetes 1.34): printable ASCII other than `=`.
pub(crate) fn env_var_name_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.is_empty() {
        out.push("environment variable name must be non-empty".into());
    }
    if value.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        out.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .into(),
        );
    }
    out
}

/// `IsValidPercent`.
pub(crate) fn percent_errors(value: &str) -> Vec<String> {
    let digits = value.strip_suffix('%').unwrap_or("");
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        Vec::new()
    } else {
        vec![regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            "[0-9]+%",
            &["1%", "93%"],
        )]
    }
}

/// `IsHTTPHeaderName`.
pub(crate) fn http_header_name_errors(value: &str) -> Vec<String> {
    if !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        Vec::new()
    } else {
        vec![regex_error(
            "a valid HTTP header must consist of alphanumeric characters or '-'",
            "[-A-Za-z0-9]+",
            &["X-Header-Name"],
        )]
    }
}

/// `IsWildcardDNS1123Subdomain`: `*.` then a subdomain.
pub(crate) fn wildcard_subdomain_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > names::MAX_SUBDOMAIN_LENGTH {
        out.push(format!(
            "must be no more than {} characters",
            names::MAX_SUBDOMAIN_LENGTH
        ));
    }
    let ok = value
        .strip_prefix("*.")
        .is_some_and(names::is_dns1123_subdomain);
    if !ok {
        out.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    out
}

/// `IsValidPathSegmentName` (RBAC object names, Ingress backend references).
pub(crate) fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    path_segment_prefix_errors(name)
}

/// `IsValidPathSegmentPrefix`.
pub(crate) fn path_segment_prefix_errors(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for bad in ["/", "%"] {
        if name.contains(bad) {
            out.push(format!("may not contain '{bad}'"));
        }
    }
    out
}

/// Go's `net.ParseIP` after `ParseIPSloppy`'s leniency: IPv4 octets may carry leading
/// zeros (read as decimal).
fn parse_ip_sloppy(value: &str) -> Option<IpAddr> {
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Some(ip);
    }
    if value.contains(':') {
        // An IPv6 address whose trailing IPv4 part has leading zeros.
        let (head, tail) = value.rsplit_once(':')?;
        let v4 = parse_v4_sloppy(tail)?;
        return format!("{head}:{v4}")
            .parse::<Ipv6Addr>()
            .ok()
            .map(IpAddr::V6);
    }
    parse_v4_sloppy(value).map(IpAddr::V4)
}

fn parse_v4_sloppy(value: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = value.split('.');
    for o in &mut octets {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

/// Go's `net.IP.String()`: an IPv4-mapped address prints as IPv4.
fn go_ip_string(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// `IsValidIP` (strict): an IP address in canonical form.
pub(crate) fn ip_errors(errs: &mut Errors, path: &Path, value: &str) {
    let Some(ip) = parse_ip_sloppy(value) else {
        errs.invalid(
            path,
            Bad::str(value),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        );
        return;
    };
    let strict = value.parse::<IpAddr>();
    let before = errs.len();
    if strict.is_err() {
        errs.invalid(path, Bad::str(value), "must not have leading 0s");
    }
    if let IpAddr::V6(v6) = ip
        && v6.to_ipv4_mapped().is_some()
    {
        errs.invalid(
            path,
            Bad::str(value),
            "must not be an IPv4-mapped IPv6 address",
        );
    }
    if errs.len() > before {
        return;
    }
    let canonical = go_ip_string(ip);
    if value != canonical {
        errs.invalid(
            path,
            Bad::str(value),
            &format!(
                "must be in canonical form ({})",
                ocm_api::k8s::gojson::quote(&canonical)
            ),
        );
    }
}

/// Whether `value` is an IP address (`ParseIPSloppy`).
pub(crate) fn is_ip(value: &str) -> bool {
    parse_ip_sloppy(value).is_some()
}

/// Whether `value` is an IPv6 address (`netutils.IsIPv6String`).
pub(crate) fn is_ipv6(value: &str) -> bool {
    matches!(parse_ip_sloppy(value), Some(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none())
}

/// A parsed CIDR: its network address (masked) and prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr {
    /// The address as written.
    pub(crate) addr: IpAddr,
    /// The prefix length.
    pub(crate) prefix: u8,
}

impl Cidr {
    fn bits(&self) -> u32 {
        if self.addr.is_ipv4() { 32 } else { 128 }
    }

    fn as_u128(ip: IpAddr) -> u128 {
        match ip {
            IpAddr::V4(v4) => u128::from(u32::from(v4)),
            IpAddr::V6(v6) => u128::from(v6),
        }
    }

    fn mask(&self) -> u128 {
        let bits = self.bits();
        let host = bits - u32::from(self.prefix);
        let all = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        if host >= 128 {
            0
        } else {
            all & !((1u128 << host) - 1)
        }
    }

    /// The network address (host bits cleared).
    pub(crate) fn network(&self) -> IpAddr {
        let n = Self::as_u128(self.addr) & self.mask();
        match self.addr {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(u32::try_from(n).unwrap_or(0))),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(n)),
        }
    }

    /// Whether `ip` lies in this network.
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4()
            && Self::as_u128(ip) & self.mask() == Self::as_u128(self.addr) & self.mask()
    }
}

/// `netutils.ParseCIDRSloppy`.
pub(crate) fn parse_cidr(value: &str) -> Option<Cidr> {
    let (ip, prefix) = value.split_once('/')?;
    if prefix.is_empty() || prefix.len() > 3 || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix: u8 = prefix.parse().ok()?;
    let addr = parse_ip_sloppy(ip)?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (prefix <= max).then_some(Cidr { addr, prefix })
}

/// `IsValidCIDR` (strict): a CIDR in canonical form.
pub(crate) fn cidr_errors(errs: &mut Errors, path: &Path, value: &str) {
    let Some(cidr) = parse_cidr(value) else {
        errs.invalid(
            path,
            Bad::str(value),
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        );
        return;
    };
    let (ip, prefix) = value.split_once('/').unwrap_or((value, ""));
    let strict = ip.parse::<IpAddr>().is_ok() && !(prefix.len() > 1 && prefix.starts_with('0'));
    if !strict {
        errs.invalid(
            path,
            Bad::str(value),
            "must not have leading 0s in IP or prefix length",
        );
        return;
    }
    if let IpAddr::V6(v6) = cidr.addr
        && v6.to_ipv4_mapped().is_some()
    {
        errs.invalid(
            path,
            Bad::str(value),
            "must not have an IPv4-mapped IPv6 address",
        );
        return;
    }
    if cidr.network() != cidr.addr {
        errs.invalid(
            path,
            Bad::str(value),
            "must not have bits set beyond the prefix length",
        );
        return;
    }
    let canonical = format!("{}/{}", go_ip_string(cidr.network()), cidr.prefix);
    if value != canonical {
        errs.invalid(
            path,
            Bad::str(value),
            &format!(
                "must be in canonical form ({})",
                ocm_api::k8s::gojson::quote(&canonical)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_keys() {
        assert!(config_key_errors("key.name").is_empty());
        assert_eq!(
            config_key_errors("ключ"),
            [
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
            ]
        );
        assert_eq!(config_key_errors(".."), ["must not be '..'"]);
        assert_eq!(config_key_errors("..a"), ["must not start with '..'"]);
    }

    #[test]
    fn port_names() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("1234"),
            ["must contain at least one letter (a-z)"]
        );
        assert_eq!(port_name_errors("a--b").len(), 1);
        assert_eq!(port_name_errors("-http").len(), 1);
        assert_eq!(port_name_errors("HTTP").len(), 2);
    }

    #[test]
    fn ips_and_cidrs() {
        let p = Path::new("ip");
        let mut e = Errors::new();
        ip_errors(&mut e, &p, "10.0.0.1");
        ip_errors(&mut e, &p, "2001:db8::1");
        assert!(e.is_empty());
        ip_errors(&mut e, &p, "010.0.0.1");
        ip_errors(&mut e, &p, "nope");
        ip_errors(&mut e, &p, "2001:DB8::1");
        let causes: Vec<String> = e.into_causes().into_iter().map(|c| c.message).collect();
        assert_eq!(
            causes,
            [
                "Invalid value: \"010.0.0.1\": must not have leading 0s",
                "Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "Invalid value: \"2001:DB8::1\": must be in canonical form (\"2001:db8::1\")",
            ]
        );
        let mut e = Errors::new();
        cidr_errors(&mut e, &p, "10.0.0.0/8");
        assert!(e.is_empty());
        cidr_errors(&mut e, &p, "10.0.0.1/8");
        cidr_errors(&mut e, &p, "10.0.0.0");
        let causes: Vec<String> = e.into_causes().into_iter().map(|c| c.message).collect();
        assert_eq!(
            causes,
            [
                "Invalid value: \"10.0.0.1/8\": must not have bits set beyond the prefix length",
                "Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ]
        );
        let c = parse_cidr("10.96.0.0/12").unwrap();
        assert!(c.contains("10.100.1.1".parse().unwrap()));
        assert!(!c.contains("10.112.0.0".parse().unwrap()));
    }

    #[test]
    fn env_names_are_relaxed() {
        assert!(env_var_name_errors("1_A-b.c").is_empty());
        assert_eq!(env_var_name_errors("A=B").len(), 1);
        assert_eq!(env_var_name_errors("é").len(), 1);
    }
}
