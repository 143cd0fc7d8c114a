//! The OpenAPI string `format`s kube-apiserver checks in custom resources
//! (kube-openapi's default format registry). Formats outside the registry
//! (`int32`, `int64`, `float`, …) are accepted unchecked, as upstream does.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

macro_rules! pattern {
    ($name:ident, $p:expr) => {
        fn $name(s: &str) -> bool {
            static CELL: OnceLock<Option<Regex>> = OnceLock::new();
            re(&CELL, $p).is_none_or(|r| r.is_match(s))
        }
    };
}

pattern!(
    uuid,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
pattern!(
    uuid3,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
pattern!(
    uuid4,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
pattern!(
    uuid5,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
pattern!(
    base64,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
pattern!(
    hostname_shape,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
);
pattern!(
    time_of_day,
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
pattern!(hexcolor, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
pattern!(
    rgbcolor,
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
);
pattern!(ssn, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$");
pattern!(bson_object_id, r"^[0-9a-fA-F]{24}$");
pattern!(email_shape, r"^(?:[^<>]*<)?[^\s@<>]+@[^\s@<>]+(?:>)?$");
pattern!(request_uri, r"^(?:[a-zA-Z][a-zA-Z0-9+.\-]*:|/)[^\s]*$");

/// Whether `s` is valid for `format`.
pub(crate) fn valid(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => date_time(s),
        "date" => date(s),
        "duration" => duration(s),
        "byte" => base64(s),
        "uuid" => uuid(s),
        "uuid3" => uuid3(s),
        "uuid4" => uuid4(s),
        "uuid5" => uuid5(s),
        "ipv4" => ipv4(s),
        "ipv6" => s.contains(':') && ip(s),
        "cidr" => cidr(s),
        "mac" => mac(s),
        "hostname" => hostname(s),
        "email" => email_shape(s),
        "uri" => request_uri(s),
        "bsonobjectid" => bson_object_id(s),
        "hexcolor" => hexcolor(s),
        "rgbcolor" => rgbcolor(s),
        "ssn" => s.len() <= 11 && ssn(s),
        "isbn" => isbn10(s) || isbn13(s),
        "isbn10" => isbn10(s),
        "isbn13" => isbn13(s),
        "creditcard" => luhn(s),
        _ => true,
    }
}

fn date(s: &str) -> bool {
    s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok()
}

/// A date, `T`, and a time of day with an optional fraction and a zone (`Z` or `±hh:mm`).
fn date_time(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(day), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !date(day) || !time_of_day(time) {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        time.get(r)
            .and_then(|x| x.parse::<u32>().ok())
            .unwrap_or(99)
    };
    num(0..2) <= 23 && num(3..5) <= 59 && num(6..8) <= 59
}

/// Go's `time.ParseDuration` forms, or any `<n><unit>` run with the long unit
/// names kube-openapi also accepts (`3 days`, `1w`).
fn duration(s: &str) -> bool {
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(r) = re(&CELL, r"(\d+)\s*([A-Za-zµ]+)") else {
        return true;
    };
    const SHORT: &[&str] = &[
        "ns", "us", "µs", "ms", "s", "sec", "m", "min", "h", "hr", "d", "w", "wk",
    ];
    const LONG: &[&str] = &[
        "nanosecond",
        "microsecond",
        "millisecond",
        "second",
        "minute",
        "hour",
        "day",
        "week",
    ];
    r.captures_iter(s).any(|c| {
        let unit = c
            .get(2)
            .map(|m| m.as_str().to_lowercase())
            .unwrap_or_default();
        SHORT.contains(&unit.as_str()) || LONG.iter().any(|l| unit.starts_with(l))
    })
}

/// IPv4 with leading zeros tolerated, as kube-apiserver's sloppy parser does.
fn ipv4_sloppy(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

fn ip(s: &str) -> bool {
    ipv4_sloppy(s).is_some() || s.parse::<Ipv6Addr>().is_ok()
}

fn ipv4(s: &str) -> bool {
    s.contains('.') && ip(s)
}

fn cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if ipv4_sloppy(addr).is_some() {
        bits <= 32
    } else {
        addr.parse::<Ipv6Addr>().is_ok() && bits <= 128
    }
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx…`/`xx-xx…`, or `xxxx.xxxx…`.
fn mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    for sep in [':', '-'] {
        let parts: Vec<&str> = s.split(sep).collect();
        if matches!(parts.len(), 6 | 8 | 20) && parts.iter().all(|p| hex(p, 2)) {
            return true;
        }
    }
    let parts: Vec<&str> = s.split('.').collect();
    matches!(parts.len(), 3 | 4 | 10) && parts.iter().all(|p| hex(p, 4))
}

fn hostname(s: &str) -> bool {
    s.len() <= 255 && s.split('.').all(|p| p.len() <= 63) && hostname_shape(s)
}

fn isbn10(s: &str) -> bool {
    let d: Vec<char> = s.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if d.len() != 10 {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in d.iter().enumerate() {
        let v = match (i, c) {
            (9, 'X') => 10,
            (_, c) => match c.to_digit(10) {
                Some(v) => v,
                None => return false,
            },
        };
        sum += v * (10 - i as u32);
    }
    sum.is_multiple_of(11)
}

fn isbn13(s: &str) -> bool {
    let d: Vec<u32> = s
        .chars()
        .filter(|c| *c != '-' && *c != ' ')
        .map(|c| c.to_digit(10))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if d.len() != 13 {
        return false;
    }
    let sum: u32 = d
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 2 == 0 { *v } else { v * 3 })
        .sum();
    sum.is_multiple_of(10)
}

fn luhn(s: &str) -> bool {
    let digits: Option<Vec<u32>> = s
        .chars()
        .filter(|c| *c != '-' && *c != ' ')
        .map(|c| c.to_digit(10))
        .collect();
    let Some(d) = digits.filter(|d| (13..=19).contains(&d.len())) else {
        return false;
    };
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, v)| {
            if i % 2 == 1 {
                let x = v * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                *v
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::valid;

    #[test]
    fn formats() {
        for (f, good, bad) in [
            (
                "date-time",
                "2024-02-29T10:20:30.5Z",
                "2024-02-30T10:20:30Z",
            ),
            (
                "date-time",
                "2024-01-01T00:00:00+02:00",
                "2024-01-01 00:00:00Z",
            ),
            ("date", "2024-02-29", "2023-02-29"),
            ("duration", "1h30m", "soon"),
            ("duration", "3 days", "12"),
            ("byte", "aGVsbG8=", "hello!"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("ipv4", "010.0.0.1", "1.2.3"),
            ("ipv6", "fe80::1", "1.2.3.4"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
            ("hostname", "example.com", "-bad-.com"),
            ("email", "a@example.com", "not an email"),
            ("uri", "https://example.com/x", "example.com"),
            ("isbn", "0-306-40615-2", "0-306-40615-3"),
            ("creditcard", "4111 1111 1111 1111", "4111 1111 1111 1112"),
        ] {
            assert!(valid(f, good), "{f} should accept {good}");
            assert!(!valid(f, bad), "{f} should refuse {bad}");
        }
        assert!(valid("int32", "anything"));
    }
}
