//! Durations as upstream parses them: Go's `time.ParseDuration` and the rollout timeout rules.

use std::time::Duration;

use super::RolloutError;
use crate::k8s::gojson;

/// Parses a Go duration string (`"90s"`, `"1h30m"`, `"1.5h"`, `"300ms"`, `"0"`), as Go's
/// `time.ParseDuration` does, including its error messages and its arithmetic: the whole part
/// of each number must fit 63 bits, the fraction keeps the digits that fit (the rest are read
/// and ignored) and is scaled by the unit in `float64`, and the total must fit an `i64` of
/// nanoseconds. Negative durations are rejected (rollout times cannot be negative).
// Long on purpose: the parse follows Go's `time.ParseDuration` step by step (sign, whole part,
// fraction, unit, overflow checks in its order), so that every input gets Go's answer; kept in
// one piece to be read side by side with it.
pub fn parse_go_duration(input: &str) -> Result<Duration, RolloutError> {
    let invalid = || {
        RolloutError::Duration(format!(
            "time: invalid duration {}",
            gojson::time_quote(input)
        ))
    };
    const LIMIT: u64 = 1 << 63;
    let mut s = input.as_bytes();
    let mut negative = false;
    if let Some((&c, rest)) = s.split_first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        s = rest;
    }
    if s == b"0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0; // nanoseconds
    while let Some(&first) = s.first() {
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        // The whole part: [0-9]*, which must fit 63 bits.
        let (whole, rest) = leading_int(s).ok_or_else(invalid)?;
        let before_point = rest.len() != s.len();
        s = rest;
        // The fraction: (\.[0-9]*)?
        let mut fraction = (0u64, 1f64);
        let mut after_point = false;
        if let Some((&b'.', rest)) = s.split_first() {
            let (f, scale, rest_after) = leading_fraction(rest);
            after_point = rest_after.len() != rest.len();
            fraction = (f, scale);
            s = rest_after;
        }
        if !before_point && !after_point {
            // No digits at all, as in ".s".
            return Err(invalid());
        }
        // The unit: up to the next number.
        let unit_len = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(RolloutError::Duration(format!(
                "time: missing unit in duration {}",
                gojson::time_quote(input)
            )));
        }
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        let per_unit: u64 = match unit {
            b"ns" => 1,
            b"us" => 1_000,
            // U+00B5 (micro sign) and U+03BC (Greek small letter mu), as Go accepts both.
            [0xc2, 0xb5, b's'] | [0xce, 0xbc, b's'] => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => {
                return Err(RolloutError::Duration(format!(
                    "time: unknown unit {} in duration {}",
                    gojson::time_quote(&String::from_utf8_lossy(unit)),
                    gojson::time_quote(input)
                )));
            }
        };
        if whole > LIMIT / per_unit {
            return Err(invalid());
        }
        let mut value = whole * per_unit;
        let (f, scale) = fraction;
        if f > 0 {
            // Go computes the fraction in float64 (exact to the nanosecond for any unit) and
            // truncates it; the conversion saturates in Rust where Go's would be undefined, and
            // the value is at most one hour's worth of nanoseconds anyway.
            value = value.saturating_add((f as f64 * (per_unit as f64 / scale)) as u64);
            if value > LIMIT {
                return Err(invalid());
            }
        }
        total = total.saturating_add(value);
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        if total > 0 {
            return Err(RolloutError::Duration(format!(
                "negative duration \"{input}\" is not allowed"
            )));
        }
        return Ok(Duration::ZERO);
    }
    if total > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(Duration::from_nanos(total))
}

/// Go's `leadingInt`: the leading digits of `s` as a number, `None` past 2^63.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    const LIMIT: u64 = 1 << 63;
    let mut x: u64 = 0;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        if x > LIMIT / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > LIMIT {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Go's `leadingFraction`: the leading digits of `s` as `x / scale`, keeping the digits that
/// fit 63 bits and ignoring the rest (never an error).
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    const LIMIT: u64 = 1 << 63;
    let mut x: u64 = 0;
    let mut scale = 1f64;
    let mut overflow = false;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        i += 1;
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[i..])
}

/// Parses a `progressDeadline`: empty or `None` means no deadline (`Ok(None)`).
///
/// Upstream first checks the pattern `^(([0-9])+[h|m|s])|None$`, whose alternation binds
/// loosely: only a *prefix* of digits and a unit is checked (or a `None` suffix), then the
/// string goes through Go's duration parser. So `"0"`, `"2d"` and `"10g"` are invalid while
/// `"0s"`, `"90s"` and `"1h30m"` are valid.
pub fn parse_timeout(input: &str) -> Result<Option<Duration>, RolloutError> {
    if input.is_empty() || input == "None" {
        return Ok(None);
    }
    let digits = input.bytes().take_while(u8::is_ascii_digit).count();
    let prefix_ok = digits > 0
        && input
            .as_bytes()
            .get(digits)
            .is_some_and(|b| matches!(b, b'h' | b'm' | b's' | b'|'));
    if !prefix_ok && !input.ends_with("None") {
        return Err(RolloutError::InvalidTimeout(input.to_string()));
    }
    parse_go_duration(input).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let ok = |s: &str| parse_go_duration(s).unwrap();
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("0s"), Duration::ZERO);
        assert_eq!(ok("90s"), Duration::from_secs(90));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("300ms"), Duration::from_millis(300));
        assert_eq!(ok("1us"), Duration::from_micros(1));
        assert_eq!(ok("2h45m30.5s"), Duration::from_millis(9_930_500));
        assert_eq!(ok("+5m"), Duration::from_secs(300));
        let err = |s: &str| parse_go_duration(s).unwrap_err().to_string();
        assert_eq!(err(""), "time: invalid duration \"\"");
        assert_eq!(err("1"), "time: missing unit in duration \"1\"");
        assert_eq!(err("2d"), "time: unknown unit \"d\" in duration \"2d\"");
        assert_eq!(err("."), "time: invalid duration \".\"");
        assert_eq!(err("s"), "time: invalid duration \"s\"");
    }

    /// Issue #18.5: a fraction longer than fits keeps the digits that fit, as Go does.
    #[test]
    fn long_fractions_keep_what_fits() {
        let ok = |s: &str| parse_go_duration(s).unwrap();
        assert_eq!(
            ok(".9999999999999999999999999999991h"),
            Duration::from_secs(3600)
        );
        assert_eq!(ok("0.000000000000000000000000000001h"), Duration::ZERO);
        assert_eq!(
            ok(&format!("1.{}s", "5".repeat(10_000))),
            Duration::from_nanos(1_555_555_555)
        );
        assert_eq!(
            ok("2562047h47m16.854775807s"),
            Duration::from_nanos(i64::MAX as u64)
        );
        let err = |s: &str| parse_go_duration(s).unwrap_err().to_string();
        assert_eq!(
            err("2562047h47m16.854775808s"),
            "time: invalid duration \"2562047h47m16.854775808s\""
        );
        assert_eq!(
            err("9223372036854775808ns"),
            "time: invalid duration \"9223372036854775808ns\""
        );
        assert_eq!(
            err(&format!("{}s", "9".repeat(100))),
            format!("time: invalid duration \"{}s\"", "9".repeat(100))
        );
        assert_eq!(ok("1µs"), Duration::from_micros(1));
        assert_eq!(ok("1μs"), Duration::from_micros(1));
        assert_eq!(
            err("1µx"),
            "time: unknown unit \"\\xc2\\xb5x\" in duration \"1\\xc2\\xb5x\""
        );
        assert_eq!(
            err("1\"s"),
            "time: unknown unit \"\\\"s\" in duration \"1\\\"s\""
        );
        assert_eq!(err("-1s"), "negative duration \"-1s\" is not allowed");
        assert_eq!(ok("-0s"), Duration::ZERO);
        assert_eq!(err(".s"), "time: invalid duration \".s\"");
        // A point without digits after it is fine, as in Go.
        assert_eq!(ok("1.s"), Duration::from_secs(1));
    }

    /// A reference for one number and unit, in exact arithmetic: Go's result is within a
    /// nanosecond of it (Go truncates a float64 product).
    fn exact_nanos(whole: u64, fraction: &str, per_unit: u64) -> Option<u128> {
        let digits: String = fraction.chars().take(18).collect();
        let scale = 10u128.pow(u32::try_from(digits.len()).ok()?);
        let f: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        Some(u128::from(whole) * u128::from(per_unit) + f * u128::from(per_unit) / scale)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 1024, ..Default::default() })]

        /// Any text parses or fails: no panic, no overflow.
        #[test]
        fn never_panics(text in "[-+]?[0-9.hmsuµμn]{0,40}") {
            let _ = parse_go_duration(&text);
        }

        /// One number and unit: within a nanosecond of the exact value of the first 18
        /// fraction digits (Go keeps 18 digits unless they start small enough for a 19th,
        /// which only changes the result below a nanosecond).
        #[test]
        fn matches_the_exact_value(
            whole in 0u64..100_000,
            fraction in "[0-9]{0,40}",
            unit in proptest::sample::select(vec![("ns", 1u64), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000)]),
        ) {
            let text = if fraction.is_empty() {
                format!("{whole}{}", unit.0)
            } else {
                format!("{whole}.{fraction}{}", unit.0)
            };
            let parsed = parse_go_duration(&text).map(|d| d.as_nanos());
            let exact = exact_nanos(whole, &fraction, unit.1).unwrap();
            match parsed {
                Ok(nanos) => proptest::prop_assert!(nanos.abs_diff(exact) <= 1, "{text}: {nanos} vs {exact}"),
                Err(e) => proptest::prop_assert!(exact > i64::MAX as u128, "{text}: {e}"),
            }
        }
    }

    #[test]
    fn timeouts_check_only_a_prefix() {
        assert_eq!(parse_timeout("").unwrap(), None);
        assert_eq!(parse_timeout("None").unwrap(), None);
        assert_eq!(parse_timeout("0s").unwrap(), Some(Duration::ZERO));
        assert_eq!(parse_timeout("90s").unwrap(), Some(Duration::from_secs(90)));
        assert_eq!(
            parse_timeout("1h30m").unwrap(),
            Some(Duration::from_secs(5400))
        );
        for bad in ["0", "2d", "2d0s", "10g", "h1"] {
            assert_eq!(
                parse_timeout(bad).unwrap_err().to_string(),
                "invalid timeout format",
                "{bad}"
            );
        }
        // The prefix passes the pattern, the duration parser then rejects the rest.
        assert!(
            parse_timeout("1h2d")
                .unwrap_err()
                .to_string()
                .contains("unknown unit")
        );
        // A `None` suffix passes the pattern too.
        assert!(
            parse_timeout("xNone")
                .unwrap_err()
                .to_string()
                .starts_with("time:")
        );
    }
}
