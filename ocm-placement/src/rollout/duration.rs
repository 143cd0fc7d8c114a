//! Durations as upstream parses them: Go's `time.ParseDuration` and the rollout timeout rules.

use std::time::Duration;

use super::RolloutError;

/// Parses a Go duration string (`"90s"`, `"1h30m"`, `"1.5h"`, `"300ms"`, `"0"`), as Go's
/// `time.ParseDuration` does, including its error messages. Negative durations are rejected
/// (rollout times cannot be negative).
pub fn parse_go_duration(input: &str) -> Result<Duration, RolloutError> {
    let invalid = || RolloutError::Duration(format!("time: invalid duration \"{input}\""));
    let mut s = input;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0; // nanoseconds
    while !s.is_empty() {
        // The number: digits, optionally a fraction.
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, rest) = s.split_at(int_len);
        let mut rest = rest;
        let mut frac_part = "";
        if let Some(after_dot) = rest.strip_prefix('.') {
            let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &after_dot[..frac_len];
            rest = &after_dot[frac_len..];
        } else if int_len == 0 {
            return Err(invalid());
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        // The unit.
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(rest.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(RolloutError::Duration(format!(
                "time: missing unit in duration \"{input}\""
            )));
        }
        let unit = &rest[..unit_len];
        let per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(RolloutError::Duration(format!(
                    "time: unknown unit \"{unit}\" in duration \"{input}\""
                )));
            }
        };
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| invalid())?
        };
        let mut value = whole.checked_mul(per_unit).ok_or_else(invalid)?;
        if !frac_part.is_empty() {
            let mut scale = 1u128;
            let mut frac: u128 = 0;
            for digit in frac_part.bytes().take(30) {
                frac = frac * 10 + u128::from(digit - b'0');
                scale *= 10;
            }
            value += frac * per_unit / scale;
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        if total > i64::MAX as u128 {
            return Err(invalid());
        }
        s = &rest[unit_len..];
    }
    if negative && total > 0 {
        return Err(RolloutError::Duration(format!(
            "negative duration \"{input}\" is not allowed"
        )));
    }
    let secs = (total / 1_000_000_000) as u64;
    let nanos = (total % 1_000_000_000) as u32;
    Ok(Duration::new(secs, nanos))
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
