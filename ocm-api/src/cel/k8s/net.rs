//! Kubernetes' `IP` and `CIDR` libraries.
//!
//! * `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `string(ip)`, and on an IP `family()`,
//!   `isUnspecified()`, `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()`,
//!   `isGlobalUnicast()`.
//! * `cidr(s)`, `isCIDR(s)`, `string(cidr)`, and on a CIDR `containsIP(ip | string)`,
//!   `containsCIDR(cidr | string)`, `ip()`, `prefixLength()`, `masked()`.
//!
//! Like Kubernetes, addresses with a zone (`fe80::1%eth0`) and IPv4-mapped IPv6 addresses
//! (`::ffff:1.2.3.4`) are rejected; IPv4 octets may not have leading zeros. A CIDR keeps the
//! address as written (`10.1.2.3/8` stays that; `masked()` gives `10.0.0.0/8`).

use std::net::IpAddr;

use cel::common::types::{CelString, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{Env, ExecutionError};

use super::{arg, boolean, int, opaque_val, owned, string, string_arg, typed};

/// The CEL type of IP addresses.
pub(crate) static IP_TYPE: Type = Type::new_unspecified_type("net.IP");
/// The CEL type of CIDR prefixes.
pub(crate) static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

/// An IP address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ip(IpAddr);

opaque_val!(Ip, IP_TYPE);

/// A CIDR prefix: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr {
    addr: IpAddr,
    bits: u8,
}

opaque_val!(Cidr, CIDR_TYPE);

/// Parses an address the way Kubernetes' CEL library does.
pub(crate) fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    if raw.contains('%') {
        return Err(format!("IP address {raw:?} with zone value is not allowed"));
    }
    let addr: IpAddr = raw.parse().map_err(|e| {
        format!("IP Address {raw:?} parse error during conversion from string: {e}")
    })?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
    }
    Ok(addr)
}

/// Parses a CIDR the way Kubernetes' CEL library does.
pub(crate) fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let err = |why: &str| {
        format!("network address parse error during conversion from string: {raw:?}: {why}")
    };
    let (address, bits) = raw.split_once('/').ok_or_else(|| err("no '/'"))?;
    if raw.contains('%') {
        return Err(err("zones are not allowed"));
    }
    let addr: IpAddr = address.parse().map_err(|e| err(&format!("{e}")))?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
    }
    let leading_zero = bits.len() > 1 && bits.starts_with('0');
    if bits.is_empty() || leading_zero || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("bad bits"));
    }
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let bits: u8 = bits
        .parse()
        .ok()
        .filter(|b| *b <= max)
        .ok_or_else(|| err("prefix length out of range"))?;
    Ok(Cidr { addr, bits })
}

fn as_bits(addr: IpAddr) -> (u128, u8) {
    match addr {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

fn from_bits(value: u128, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::from(u32::try_from(value).unwrap_or(0).to_be_bytes())
    } else {
        IpAddr::from(value.to_be_bytes())
    }
}

impl Cidr {
    /// The address with the bits past the prefix cleared.
    fn masked_addr(&self, bits: u8) -> u128 {
        let (value, width) = as_bits(self.addr);
        let host = u32::from(width.saturating_sub(bits));
        if host >= 128 {
            0
        } else {
            value & !((1u128 << host) - 1)
        }
    }

    fn masked(&self) -> Cidr {
        Cidr {
            addr: from_bits(self.masked_addr(self.bits), self.addr.is_ipv4()),
            bits: self.bits,
        }
    }

    fn contains_ip(&self, ip: IpAddr) -> bool {
        if ip.is_ipv4() != self.addr.is_ipv4() {
            return false;
        }
        let probe = Cidr {
            addr: ip,
            bits: self.bits,
        };
        probe.masked_addr(self.bits) == self.masked_addr(self.bits)
    }

    fn contains_cidr(&self, other: &Cidr) -> bool {
        other.addr.is_ipv4() == self.addr.is_ipv4()
            && self.bits <= other.bits
            && other.masked_addr(self.bits) == self.masked_addr(self.bits)
    }
}

fn format_cidr(c: &Cidr) -> String {
    format!("{}/{}", c.addr, c.bits)
}

fn failed(function: &str, e: String) -> ExecutionError {
    ExecutionError::function_error(function, e)
}

fn to_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let raw = string_arg("ip", &args, 0)?;
    owned(Ip(parse_ip(raw).map_err(|e| failed("ip", e))?))
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(parse_ip(string_arg("isIP", &args, 0)?).is_ok())
}

fn is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "ip.isCanonical";
    let raw = string_arg(f, &args, 0)?;
    let addr = parse_ip(raw).map_err(|e| failed(f, e))?;
    boolean(addr.to_string() == raw)
}

fn ip_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let ip: &Ip = typed("string", &args, 0)?;
    string(ip.0.to_string())
}

fn ip_of(function: &str, args: &[CowVal<'_, '_>]) -> Result<IpAddr, ExecutionError> {
    typed::<Ip>(function, args, 0).map(|ip| ip.0)
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(if ip_of("family", &args)?.is_ipv4() {
        4
    } else {
        6
    })
}

fn is_unspecified<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(ip_of("isUnspecified", &args)?.is_unspecified())
}

fn is_loopback<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(ip_of("isLoopback", &args)?.is_loopback())
}

fn link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
        IpAddr::V6(a) => a.segments()[0] == 0xff02,
    }
}

fn link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[..2] == [169, 254],
        IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(link_local_multicast(ip_of("isLinkLocalMulticast", &args)?))
}

fn is_link_local_unicast<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(link_local_unicast(ip_of("isLinkLocalUnicast", &args)?))
}

fn is_global_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let addr = ip_of("isGlobalUnicast", &args)?;
    let broadcast = matches!(addr, IpAddr::V4(a) if a.is_broadcast());
    boolean(
        !addr.is_unspecified()
            && !broadcast
            && !addr.is_loopback()
            && !addr.is_multicast()
            && !link_local_unicast(addr),
    )
}

fn to_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let raw = string_arg("cidr", &args, 0)?;
    owned(parse_cidr(raw).map_err(|e| failed("cidr", e))?)
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(parse_cidr(string_arg("isCIDR", &args, 0)?).is_ok())
}

fn cidr_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(format_cidr(typed::<Cidr>("string", &args, 0)?))
}

fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "containsIP";
    let cidr: &Cidr = typed(f, &args, 0)?;
    let ip = match arg(f, &args, 1)?.downcast_ref::<CelString<'_>>() {
        Some(s) => parse_ip(s.inner()).map_err(|e| failed(f, e))?,
        None => typed::<Ip>(f, &args, 1)?.0,
    };
    boolean(cidr.contains_ip(ip))
}

fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "containsCIDR";
    let cidr: &Cidr = typed(f, &args, 0)?;
    let other = match arg(f, &args, 1)?.downcast_ref::<CelString<'_>>() {
        Some(s) => parse_cidr(s.inner()).map_err(|e| failed(f, e))?,
        None => *typed::<Cidr>(f, &args, 1)?,
    };
    boolean(cidr.contains_cidr(&other))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(Ip(typed::<Cidr>("ip", &args, 0)?.addr))
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(i64::from(typed::<Cidr>("prefixLength", &args, 0)?.bits))
}

fn masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(typed::<Cidr>("masked", &args, 0)?.masked())
}

/// Registers both libraries.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let ip = || IP_TYPE.to_owned();
    let cidr = || CIDR_TYPE.to_owned();
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        is_canonical,
    )?;
    env.add_overload("string", "ip_to_string", vec![ip()], ip_to_string)?;
    env.add_member_overload("family", "ip_family", ip(), vec![], family)?;
    env.add_member_overload(
        "isUnspecified",
        "ip_is_unspecified",
        ip(),
        vec![],
        is_unspecified,
    )?;
    env.add_member_overload("isLoopback", "ip_is_loopback", ip(), vec![], is_loopback)?;
    env.add_member_overload(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        ip(),
        vec![],
        is_link_local_multicast,
    )?;
    env.add_member_overload(
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        ip(),
        vec![],
        is_link_local_unicast,
    )?;
    env.add_member_overload(
        "isGlobalUnicast",
        "ip_is_global_unicast",
        ip(),
        vec![],
        is_global_unicast,
    )?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![cidr()], cidr_to_string)?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        cidr(),
        vec![STRING_TYPE],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        cidr(),
        vec![ip()],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        cidr(),
        vec![STRING_TYPE],
        contains_cidr,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        cidr(),
        vec![cidr()],
        contains_cidr,
    )?;
    env.add_member_overload("ip", "cidr_ip", cidr(), vec![], cidr_ip)?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        cidr(),
        vec![],
        prefix_length,
    )?;
    env.add_member_overload("masked", "cidr_masked", cidr(), vec![], masked)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, fails};

    #[test]
    fn addresses() {
        check("isIP('192.168.0.1')", true);
        check("isIP('2001:db8::1')", true);
        check("isIP('192.168.0.256')", false);
        check("isIP('01.2.3.4')", false);
        check("isIP('::ffff:1.2.3.4')", false);
        check("isIP('fe80::1%eth0')", false);
        check("ip('192.168.0.1').family()", 4);
        check("ip('::1').family()", 6);
        check("ip('::1').isLoopback()", true);
        check("ip('127.0.0.5').isLoopback()", true);
        check("ip('0.0.0.0').isUnspecified()", true);
        check("ip('224.0.0.1').isLinkLocalMulticast()", true);
        check("ip('ff02::1').isLinkLocalMulticast()", true);
        check("ip('169.254.1.1').isLinkLocalUnicast()", true);
        check("ip('fe80::1').isLinkLocalUnicast()", true);
        check("ip('8.8.8.8').isGlobalUnicast()", true);
        check("ip('255.255.255.255').isGlobalUnicast()", false);
        check("ip('2001:db8::1').isGlobalUnicast()", true);
        check("string(ip('2001:DB8:0:0:0:0:0:1'))", "2001:db8::1");
        check("ip.isCanonical('2001:db8::1')", true);
        check("ip.isCanonical('2001:DB8::1')", false);
        check("ip('10.0.0.1') == ip('10.0.0.1')", true);
        check("ip('10.0.0.1') == ip('10.0.0.2')", false);
    }

    #[test]
    fn prefixes() {
        check("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true);
        check("cidr('192.168.0.0/24').containsIP('192.168.1.1')", false);
        check("cidr('192.168.0.0/24').containsIP('::1')", false);
        check(
            "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')",
            true,
        );
        check(
            "cidr('192.168.10.0/24').containsCIDR(cidr('192.168.0.0/16'))",
            false,
        );
        check("cidr('2001:db8::/32').containsIP('2001:db8::1')", true);
        check("cidr('0.0.0.0/0').containsIP('1.2.3.4')", true);
        check(
            "cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24')",
            true,
        );
        check("string(cidr('192.168.1.5/24').masked())", "192.168.1.0/24");
        check("string(cidr('192.168.1.5/24'))", "192.168.1.5/24");
        check("cidr('192.168.1.5/24').ip() == ip('192.168.1.5')", true);
        check("cidr('2001:db8::/32').prefixLength()", 32);
        check("isCIDR('10.0.0.0/8')", true);
        check("isCIDR('10.0.0.0/33')", false);
        check("isCIDR('10.0.0.0/08')", false);
        check("isCIDR('10.0.0.0')", false);
        check("isCIDR('::ffff:1.2.3.4/120')", false);
    }

    #[test]
    fn bad_input() {
        fails("ip('not an ip')", "parse error");
        fails("ip('::ffff:1.2.3.4')", "IPv4-mapped");
        fails("ip('fe80::1%eth0')", "zone");
        fails("cidr('10.0.0.0')", "network address parse error");
        fails("cidr('10.0.0.0/8').containsIP('x')", "parse error");
        fails("cidr('10.0.0.0/8').containsCIDR('x')", "network address");
        fails("ip.isCanonical('x')", "parse error");
        fails("ip(1)", "");
        fails("ip('1.2.3.4').family(1)", "");
    }
}
