//! Resource quantities as kube-apiserver stores them: decoding a `resource.Quantity`
//! and writing it back gives its canonical form (`"0.5"` reads back as `"500m"`,
//! `"1024Mi"` as `"1Gi"`, a bare number `1` as `"1"`), and `SetDefaults_ResourceList`
//! first rounds every resource list entry up to milli units.
//!
//! The canonical form is `resource.Quantity.CanonicalizeBytes`'s: a decimal value as
//! the shortest mantissa whose exponent is a multiple of 3 (with the SI suffix, or `eN`
//! when written that way), a binary value as a whole number of the largest power of 1024
//! that divides it (falling back to decimal below 1024 and for fractions). Values this
//! module cannot represent exactly (beyond 127 bits) are left as written.

use ocm_api::k8s::quantity::Quantity;
use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// An exact value `mantissa × 10^exponent`, and how it was written.
struct Exact {
    mantissa: i128,
    exponent: i32,
    format: Format,
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// `m / 10^n`, rounded away from zero; `None` on overflow.
fn scale_down_away(m: i128, n: u32) -> Option<i128> {
    let d = pow10(n)?;
    let q = m / d;
    Some(if m % d == 0 {
        q
    } else if m > 0 {
        q + 1
    } else {
        q - 1
    })
}

fn parse(s: &str) -> Option<Exact> {
    let s = s.trim();
    Quantity::parse(s).ok()?;
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let num_len = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    let (num, suffix) = body.split_at(num_len);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let mut mantissa: i128 = 0;
    for d in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(d - b'0'))?;
    }
    let mut exponent = -i32::try_from(frac.len()).ok()?;
    let format = match suffix {
        "" => Format::DecimalSi,
        "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
            exponent += match suffix {
                "n" => -9,
                "u" => -6,
                "m" => -3,
                "k" => 3,
                "M" => 6,
                "G" => 9,
                "T" => 12,
                "P" => 15,
                _ => 18,
            };
            Format::DecimalSi
        }
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let shift = match suffix {
                "Ki" => 10,
                "Mi" => 20,
                "Gi" => 30,
                "Ti" => 40,
                "Pi" => 50,
                _ => 60,
            };
            mantissa = mantissa.checked_mul(1i128.checked_shl(shift)?)?;
            if mantissa.leading_zeros() < 2 {
                return None;
            }
            Format::BinarySi
        }
        e => {
            let n: i32 = e.get(1..)?.parse().ok()?;
            exponent = exponent.checked_add(n)?;
            Format::DecimalExponent
        }
    };
    if negative {
        mantissa = -mantissa;
    }
    let mut q = Exact {
        mantissa,
        exponent,
        format,
    };
    // Values finer than nano are rounded up to it.
    if q.exponent < -9 {
        q.mantissa = scale_down_away(q.mantissa, u32::try_from(-9 - q.exponent).ok()?)?;
        q.exponent = -9;
    }
    // A binary value between 0 and 1 is decimal.
    if q.format == Format::BinarySi && q.exponent < 0 {
        let one = pow10(u32::try_from(-q.exponent).ok()?)?;
        if q.mantissa > 0 && q.mantissa < one {
            q.format = Format::DecimalSi;
        }
    }
    Some(q)
}

/// `RoundUp(-3)`: round away from zero to milli units.
fn round_to_milli(q: &mut Exact) -> Option<()> {
    if q.exponent < -3 {
        q.mantissa = scale_down_away(q.mantissa, u32::try_from(-3 - q.exponent).ok()?)?;
        q.exponent = -3;
    }
    Some(())
}

fn decimal_suffix(exponent: i32) -> Option<&'static str> {
    Some(match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

/// `CanonicalizeBytes`.
fn canonicalize(q: &Exact) -> Option<String> {
    if q.mantissa == 0 {
        return Some("0".into());
    }
    let mut format = q.format;
    let mut whole = None;
    if format == Format::BinarySi {
        // The value as a whole number, when it is one.
        let v = if q.exponent >= 0 {
            q.mantissa
                .checked_mul(pow10(u32::try_from(q.exponent).ok()?)?)
        } else {
            let d = pow10(u32::try_from(-q.exponent).ok()?)?;
            (q.mantissa % d == 0).then(|| q.mantissa / d)
        };
        match v {
            Some(v) if v.abs() >= 1024 => whole = Some(v),
            _ => format = Format::DecimalSi,
        }
    }
    if let Some(mut v) = whole {
        let mut count = 0;
        while v % 1024 == 0 && count < 6 {
            v /= 1024;
            count += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][count];
        return Some(format!("{v}{suffix}"));
    }
    let (mut m, mut e) = (q.mantissa, q.exponent);
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    match e % 3 {
        1 | -2 => {
            m = m.checked_mul(10)?;
            e -= 1;
        }
        2 | -1 => {
            m = m.checked_mul(100)?;
            e -= 2;
        }
        _ => {}
    }
    match format {
        Format::DecimalExponent if e == 0 => Some(m.to_string()),
        Format::DecimalExponent => Some(format!("{m}e{e}")),
        _ => Some(format!("{m}{}", decimal_suffix(e)?)),
    }
}

/// The canonical form of a quantity written as `v` (a string or a number), rounded up to
/// milli units when `milli`; `None` when it is not a quantity this module reads.
pub(crate) fn canonical(v: &Value, milli: bool) -> Option<String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let mut q = parse(&text)?;
    if milli {
        round_to_milli(&mut q)?;
    }
    canonicalize(&q)
}

/// Canonicalize every entry of a resource list (`SetDefaults_ResourceList`, then the
/// encoding).
pub(crate) fn canonical_resource_list(list: Option<&mut Value>) {
    let Some(m) = list.and_then(Value::as_object_mut) else {
        return;
    };
    for v in m.values_mut() {
        if let Some(c) = canonical(v, true) {
            *v = Value::String(c);
        }
    }
}

/// Canonicalize one quantity field.
pub(crate) fn canonical_field(v: Option<&mut Value>) {
    if let Some(v) = v
        && let Some(c) = canonical(v, false)
    {
        *v = Value::String(c);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn c(s: &str) -> String {
        canonical(&json!(s), true).unwrap()
    }

    #[test]
    fn canonical_forms() {
        for (input, want) in [
            ("500m", "500m"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1", "1"),
            ("100", "100"),
            ("1000", "1k"),
            ("1500", "1500"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("0.5Gi", "512Mi"),
            ("100Ki", "100Ki"),
            ("512", "512"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("12e2", "1200"),
            ("0.1m", "1m"),
            ("1.0001", "1001m"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("123Mi", "123Mi"),
            ("0", "0"),
            ("0Gi", "0"),
            ("2G", "2G"),
        ] {
            assert_eq!(c(input), want, "{input}");
        }
        assert_eq!(canonical(&json!(1), true).unwrap(), "1");
        assert_eq!(canonical(&json!(0.25), true).unwrap(), "250m");
        assert_eq!(canonical(&json!("0.1n"), false).unwrap(), "1n");
        assert!(canonical(&json!("1Xi"), true).is_none());
    }
}
