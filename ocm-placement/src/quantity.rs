//! Approximate float values of Kubernetes quantities, as the resource prioritizers read them.
//!
//! Upstream converts `status.allocatable[r]` with `Quantity.AsApproximateFloat64`: the
//! quantity's integer mantissa times `10^exponent`. The prioritizer formulas are sensitive to the
//! last bit of the float (see the "float trap" in the spec), so the mantissa and exponent are
//! derived the way the Kubernetes parser derives them, and the power of ten is computed the way
//! Go's `math.Pow10` computes it.

/// Exact powers of ten representable as `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `10^n` computed like Go's `math.Pow10` for the small exponents quantities use.
fn pow10(n: i32) -> f64 {
    let idx = n.unsigned_abs() as usize;
    match POW10.get(idx) {
        Some(&p) if n >= 0 => p,
        Some(&p) => 1.0 / p,
        None => 10f64.powi(n),
    }
}

/// Parses a quantity string (`"16"`, `"64Gi"`, `"500m"`, `"1.5"`, `"2e3"`) into the float
/// Kubernetes' `AsApproximateFloat64` returns. Returns `None` for strings that are not
/// quantities.
pub fn approximate_f64(s: &str) -> Option<f64> {
    let s = s.trim();
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
        return None;
    }
    enum Suffix {
        Decimal(i32),
        Binary(u32),
    }
    let suffix = match suffix {
        "" => Suffix::Decimal(0),
        "n" => Suffix::Decimal(-9),
        "u" => Suffix::Decimal(-6),
        "m" => Suffix::Decimal(-3),
        "k" => Suffix::Decimal(3),
        "M" => Suffix::Decimal(6),
        "G" => Suffix::Decimal(9),
        "T" => Suffix::Decimal(12),
        "P" => Suffix::Decimal(15),
        "E" => Suffix::Decimal(18),
        "Ki" => Suffix::Binary(10),
        "Mi" => Suffix::Binary(20),
        "Gi" => Suffix::Binary(30),
        "Ti" => Suffix::Binary(40),
        "Pi" => Suffix::Binary(50),
        "Ei" => Suffix::Binary(60),
        other => {
            let exp = other.strip_prefix(['e', 'E'])?;
            Suffix::Decimal(exp.parse::<i32>().ok()?)
        }
    };
    let digits = format!("{int_part}{frac_part}");
    let frac_len = i32::try_from(frac_part.len()).ok()?;
    let value = match suffix {
        Suffix::Decimal(exp) => {
            let scale = exp - frac_len;
            match digits.parse::<i64>() {
                // The fast path of the Kubernetes parser: an int64 mantissa and a scale no
                // finer than nano.
                Ok(mantissa) if scale >= -9 => {
                    let base = mantissa as f64;
                    if scale == 0 {
                        base
                    } else {
                        base * pow10(scale)
                    }
                }
                _ => format!("{int_part}.{frac_part}e{exp}")
                    .parse::<f64>()
                    .ok()?,
            }
        }
        Suffix::Binary(shift) => {
            let multiplier = (1u64 << shift) as f64;
            if frac_part.is_empty() {
                match digits
                    .parse::<i64>()
                    .ok()
                    .and_then(|m| m.checked_mul(1i64 << shift))
                {
                    Some(exact) => exact as f64,
                    None => digits.parse::<f64>().ok()? * multiplier,
                }
            } else {
                format!("{int_part}.{frac_part}").parse::<f64>().ok()? * multiplier
            }
        }
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::approximate_f64;

    #[test]
    fn common_forms() {
        assert_eq!(approximate_f64("16"), Some(16.0));
        assert_eq!(
            approximate_f64("64Gi"),
            Some(64.0 * 1024.0 * 1024.0 * 1024.0)
        );
        assert_eq!(approximate_f64("500m"), Some(0.5));
        assert_eq!(approximate_f64("1.5"), Some(1.5));
        assert_eq!(approximate_f64("2k"), Some(2000.0));
        assert_eq!(approximate_f64("1e3"), Some(1000.0));
        assert_eq!(approximate_f64("-3"), Some(-3.0));
        assert_eq!(approximate_f64("1000m"), Some(1.0));
        assert_eq!(approximate_f64("abc"), None);
        assert_eq!(approximate_f64(""), None);
        assert_eq!(approximate_f64("1Xi"), None);
    }
}
