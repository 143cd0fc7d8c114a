//! CronJob schedules, checked as `cron.ParseStandard` (robfig/cron v3, the parser
//! kube-apiserver validates with) checks them: five fields or a descriptor, with its
//! error messages.

/// The bounds of one field, and the names it accepts.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// Go's `strconv.Atoi` error for `s`.
fn atoi_error(s: &str) -> String {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let reason = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        "value out of range"
    } else {
        "invalid syntax"
    };
    format!(
        "strconv.Atoi: parsing {}: {reason}",
        ocm_api::k8s::gojson::quote(s)
    )
}

/// `mustParseInt`.
fn parse_int(expr: &str) -> Result<u64, String> {
    let n: i64 = expr
        .parse()
        .map_err(|_| format!("failed to parse int from {expr}: {}", atoi_error(expr)))?;
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    u64::try_from(n).map_err(|_| format!("failed to parse int from {expr}: {}", atoi_error(expr)))
}

/// `parseIntOrName`.
fn int_or_name(expr: &str, b: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    if let Some((_, v)) = b.names.iter().find(|(n, _)| *n == lower) {
        return Ok(*v);
    }
    parse_int(expr)
}

/// `getRange`.
fn range(expr: &str, b: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end);
    if low_high[0] == "*" || low_high[0] == "?" {
        start = b.min;
        end = b.max;
    } else {
        start = int_or_name(low_high[0], b)?;
        end = match low_high.len() {
            1 => start,
            2 => int_or_name(low_high[1], b)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let s = parse_int(range_and_step[1])?;
            if single {
                end = b.max;
            }
            s
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// `getField`.
fn field(f: &str, b: &Bounds) -> Result<(), String> {
    for expr in f.split(',').filter(|e| !e.is_empty()) {
        range(expr, b)?;
    }
    Ok(())
}

/// Go's `time.ParseDuration`, for `@every`: whether it parses, or its error.
fn parse_duration(s: &str) -> Result<(), String> {
    let orig = s;
    let invalid = || {
        format!(
            "time: invalid duration {}",
            ocm_api::k8s::gojson::time_quote(orig)
        )
    };
    let mut rest = s.strip_prefix(['-', '+']).unwrap_or(s);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if digits == 0 || rest[..digits] == *"." {
            return Err(invalid());
        }
        rest = &rest[digits..];
        let unit_len = rest
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                ocm_api::k8s::gojson::time_quote(orig)
            ));
        }
        let unit = &rest[..unit_len];
        if !matches!(unit, "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                ocm_api::k8s::gojson::time_quote(unit),
                ocm_api::k8s::gojson::time_quote(orig)
            ));
        }
        rest = &rest[unit_len..];
    }
    Ok(())
}

/// `cron.ParseStandard`'s error for `spec`, if any.
pub(crate) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // The location is looked up by the CronJob controller; the rest must parse.
        match spec.find(' ') {
            Some(i) => spec = spec[i..].trim(),
            None => return Err("provided bad location: missing schedule".into()),
        }
    }
    if let Some(d) = spec.strip_prefix('@') {
        return match d {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ => match spec.strip_prefix("@every ") {
                Some(dur) => {
                    parse_duration(dur).map_err(|e| format!("failed to parse duration {spec}: {e}"))
                }
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (f, b) in fields.iter().zip([&MINUTES, &HOURS, &DOM, &MONTHS, &DOW]) {
        field(f, b)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        for ok in [
            "*/5 * * * *",
            "0 0 * * sun",
            "0 9-17 * JAN-MAR 1-5",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
        ] {
            assert_eq!(parse_standard(ok), Ok(()), "{ok}");
        }
        assert_eq!(
            parse_standard("bogus"),
            Err("expected exactly 5 fields, found 1: [bogus]".into())
        );
        assert_eq!(
            parse_standard("61 * * * *"),
            Err("end of range (61) above maximum (59): 61".into())
        );
        assert_eq!(
            parse_standard("* * 0 * *"),
            Err("beginning of range (0) below minimum (1): 0".into())
        );
        assert_eq!(
            parse_standard("x * * * *"),
            Err("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax".into())
        );
        assert_eq!(
            parse_standard("@often"),
            Err("unrecognized descriptor: @often".into())
        );
        assert_eq!(
            parse_standard("*/0 * * * *"),
            Err("step of range should be a positive number: */0".into())
        );
    }
}
