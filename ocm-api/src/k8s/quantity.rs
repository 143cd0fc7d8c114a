//! Resource quantities (`"500m"`, `"64Gi"`, `"1e3"`), parsed as Kubernetes parses them.
//!
//! [`Quantity::parse`] follows apimachinery's `resource.ParseQuantity` step by step: the same
//! accepted forms (a bare sign, `"."` and a missing number all read as zero, as in Go), the
//! same three error messages, the same fast path (an `int64` mantissa and a scale no finer
//! than nano) and the same slow path (an exact decimal rounded up to nano, binary values capped
//! at 2^63-1). [`Quantity::approximate_f64`] is `AsApproximateFloat64`: the mantissa as a
//! float times Go's `math.Pow10(exponent)`, which is what the placement resource prioritizers
//! score with, to the last bit.
//!
//! ```
//! use ocm_api::k8s::quantity::Quantity;
//!
//! assert_eq!(Quantity::parse("64Gi")?.approximate_f64(), 68_719_476_736.0);
//! assert_eq!(Quantity::parse("500m")?.approximate_f64(), 0.5);
//! // Kubernetes keeps 300 × 10⁻³ and multiplies by Go's 10⁻³: 0.3, not 3 × 0.1.
//! assert_eq!(Quantity::parse("300m")?.approximate_f64(), 0.3);
//! // Values finer than nano are rounded up to it.
//! assert_eq!(Quantity::parse("0.1n")?.approximate_f64(), 1e-9);
//! assert_eq!(
//!     Quantity::parse("1Xi").unwrap_err().to_string(),
//!     "quantity \"1Xi\": quantities must match the regular expression \
//!      '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
//! );
//! # Ok::<(), ocm_api::Error>(())
//! ```
//!
//! The one limit: Kubernetes keeps slow-path values in arbitrary precision, this type in 127
//! bits. A value with more than 38 significant digits is refused with
//! [`QuantityReason::OutOfRange`]; a large value whose nano form would not fit (Go rescales
//! every slow-path value to nano) is kept exactly at its own scale, where
//! [`approximate_f64`](Quantity::approximate_f64) may differ from Go's in the last bit.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// Why a string is not a quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuantityReason {
    /// Go's `ErrFormatWrong`: the string does not have the shape of a quantity.
    Format,
    /// Go's `ErrNumeric`: the number does not parse.
    Numeric,
    /// Go's `ErrSuffix`: the suffix is not a known one.
    Suffix,
    /// The value needs more than 127 bits (Kubernetes would accept it).
    OutOfRange,
}

impl fmt::Display for QuantityReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantityReason::Format => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            QuantityReason::Numeric => "unable to parse numeric part of quantity",
            QuantityReason::Suffix => "unable to parse quantity's suffix",
            QuantityReason::OutOfRange => "the value is out of the supported range",
        })
    }
}

/// A parsed quantity, held as Kubernetes holds it: `mantissa × 10^exponent`, unnormalized
/// (`"300m"` is 300 × 10⁻³), which is what [`approximate_f64`](Self::approximate_f64)
/// depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
}

/// How a suffix scales the number (`quantitySuffixer.interpret`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// The pieces `parseQuantityString` cuts a quantity into.
struct Pieces<'a> {
    positive: bool,
    /// The sign, digits and fraction as written (for the slow path).
    value: &'a str,
    /// The integer digits without leading zeros (`"0"` when there are none).
    num: &'a str,
    /// The fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

fn digits_end(s: &str, from: usize) -> usize {
    s.as_bytes()[from..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .map_or(s.len(), |n| from + n)
}

/// `parseQuantityString`.
fn pieces(s: &str) -> Result<Pieces<'_>, QuantityReason> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while bytes.get(pos) == Some(&b'0') {
        pos += 1;
    }
    let zero = Pieces {
        positive,
        value: "0",
        num: "0",
        denom: "",
        suffix: "",
    };
    if pos >= s.len() {
        return Ok(zero);
    }
    let num_end = digits_end(s, pos);
    let num = if num_end == pos {
        "0"
    } else {
        &s[pos..num_end]
    };
    pos = num_end;
    let mut denom = "";
    if bytes.get(pos) == Some(&b'.') {
        let denom_end = digits_end(s, pos + 1);
        denom = &s[pos + 1..denom_end];
        pos = denom_end;
    }
    let value = &s[..pos];
    let suffix = &s[pos..];
    let letters = suffix
        .bytes()
        .take_while(|b| b"eEinumkKMGTP".contains(b))
        .count();
    let tail = &suffix[letters..];
    let tail = tail.strip_prefix(['-', '+']).unwrap_or(tail);
    if !tail.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityReason::Format);
    }
    Ok(Pieces {
        positive,
        value,
        num,
        denom,
        suffix,
    })
}

/// `quantitySuffixer.interpret`: base, exponent and format of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |e| Some((10, e, Format::DecimalSi));
    let binary = |e| Some((2, e, Format::BinarySi));
    match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E']).filter(|e| !e.is_empty())?;
            // Go parses an int64 and keeps its low 32 bits.
            let parsed: i64 = exponent.parse().ok()?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

const NANO_SCALE: i64 = 9;

impl Quantity {
    /// Parses `s` as `resource.ParseQuantity` does (no surrounding whitespace: trim first
    /// where Kubernetes does, as its JSON decoding does).
    pub fn parse(s: &str) -> crate::Result<Quantity> {
        Quantity::parse_reason(s).map_err(|reason| Error::Quantity {
            value: s.to_string(),
            reason,
        })
    }

    /// [`parse`](Self::parse), with only the reason on failure.
    pub(crate) fn parse_reason(s: &str) -> Result<Quantity, QuantityReason> {
        if s.is_empty() {
            return Err(QuantityReason::Format);
        }
        let p = pieces(s)?;
        let (base, exponent, format) = interpret(p.suffix).ok_or(QuantityReason::Suffix)?;
        let digits = p.num.len() + p.denom.len();
        let denom_len = i32::try_from(p.denom.len()).unwrap_or(i32::MAX);
        // The fast path: an int64 mantissa and a scale no finer than nano.
        let (precision, scale, multiplier) = match format {
            Format::DecimalSi | Format::DecimalExponent => (
                18 - i64::try_from(digits).unwrap_or(i64::MAX),
                exponent,
                1i64,
            ),
            Format::BinarySi => {
                // Go computes this precision with a float32.
                let bits_as_digits = (exponent as f32 * 3.0 / 10.0) as i64;
                let precision =
                    15 - i64::try_from(p.num.len()).unwrap_or(i64::MAX) - bits_as_digits - 1;
                (precision, 0, 1i64 << exponent)
            }
        };
        let fast = format != Format::BinarySi || p.denom.is_empty();
        if fast && precision >= 0 {
            let scale = scale.saturating_sub(denom_len);
            if i64::from(scale) >= -NANO_SCALE {
                let shifted = format!("{}{}", p.num, p.denom);
                let value: i64 = shifted.parse().map_err(|_| QuantityReason::Numeric)?;
                if let Some(result) = value.checked_mul(multiplier) {
                    let result = if p.positive { result } else { -result };
                    return Ok(Quantity {
                        mantissa: i128::from(result),
                        exponent: scale,
                    });
                }
            }
        }
        Quantity::slow_path(&p, base, exponent, format)
    }

    /// The `inf.Dec` path of `ParseQuantity`.
    fn slow_path(
        p: &Pieces<'_>,
        base: u32,
        exponent: i32,
        format: Format,
    ) -> Result<Quantity, QuantityReason> {
        let value = p.value.strip_prefix(['-', '+']).unwrap_or(p.value);
        let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(QuantityReason::Numeric);
        }
        let all_digits = format!("{whole}{fraction}");
        let all_digits = all_digits.trim_start_matches('0');
        let mut unscaled: i128 = if all_digits.is_empty() {
            0
        } else {
            all_digits.parse().map_err(|_| QuantityReason::OutOfRange)?
        };
        // `inf.Dec` scale: the value is unscaled × 10^-scale.
        let mut scale = i64::try_from(fraction.len()).map_err(|_| QuantityReason::OutOfRange)?;
        if base == 10 {
            scale -= i64::from(exponent);
        } else {
            let factor = 1i128
                .checked_shl(u32::try_from(exponent).map_err(|_| QuantityReason::OutOfRange)?)
                .ok_or(QuantityReason::OutOfRange)?;
            unscaled = unscaled
                .checked_mul(factor)
                .ok_or(QuantityReason::OutOfRange)?;
        }
        if unscaled != 0 {
            // Round to nano, away from zero (the magnitude is rounded; the sign comes back
            // afterwards).
            if scale > NANO_SCALE {
                let drop = scale - NANO_SCALE;
                unscaled = match u32::try_from(drop).ok().and_then(|d| 10i128.checked_pow(d)) {
                    Some(divisor) => {
                        let quotient = unscaled / divisor;
                        if unscaled % divisor == 0 {
                            quotient
                        } else {
                            quotient + 1
                        }
                    }
                    None => 1,
                };
                scale = NANO_SCALE;
            } else {
                // Go rescales to nano too, which changes the representation but not the
                // value; where that would not fit in 127 bits, the value is kept exactly at
                // its own scale instead.
                let scaled = u32::try_from(NANO_SCALE - scale)
                    .ok()
                    .and_then(|up| 10i128.checked_pow(up))
                    .and_then(|factor| unscaled.checked_mul(factor));
                if let Some(scaled) = scaled {
                    unscaled = scaled;
                    scale = NANO_SCALE;
                }
            }
        }
        if format == Format::BinarySi {
            // Capped at 2^63-1, held with scale 0.
            let max = i128::from(i64::MAX);
            let over = match u32::try_from(scale) {
                Ok(s) => 10i128
                    .checked_pow(s)
                    .and_then(|f| max.checked_mul(f))
                    .is_some_and(|m| unscaled > m),
                Err(_) => false,
            };
            if over {
                unscaled = max;
                scale = 0;
            }
        }
        if !p.positive {
            unscaled = -unscaled;
        }
        Ok(Quantity {
            mantissa: unscaled,
            exponent: i32::try_from(-scale).map_err(|_| QuantityReason::OutOfRange)?,
        })
    }

    /// The value as `(mantissa, exponent)`, `mantissa × 10^exponent`, unnormalized.
    #[cfg_attr(not(feature = "cel"), allow(dead_code))]
    pub(crate) fn parts(&self) -> (i128, i32) {
        (self.mantissa, self.exponent)
    }

    /// `AsApproximateFloat64`: the mantissa as a float times Go's `math.Pow10(exponent)`.
    pub fn approximate_f64(&self) -> f64 {
        let base = self.mantissa as f64;
        if self.exponent == 0 {
            base
        } else {
            base * go_pow10(self.exponent)
        }
    }
}

impl FromStr for Quantity {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Quantity> {
        Quantity::parse(s)
    }
}

/// The float Kubernetes reads from a quantity string as it arrives in an object (for example
/// a `status.allocatable` value): the whitespace trimmed as `Quantity.UnmarshalJSON` trims it,
/// then [`Quantity::parse`] and [`Quantity::approximate_f64`]. `None` when the string is not a
/// quantity.
///
/// ```
/// assert_eq!(ocm_api::k8s::quantity::approximate_f64(" 4 "), Some(4.0));
/// assert_eq!(ocm_api::k8s::quantity::approximate_f64("four"), None);
/// ```
pub fn approximate_f64(s: &str) -> Option<f64> {
    Quantity::parse(s.trim()).ok().map(|q| q.approximate_f64())
}

/// `10^n` exactly as Go's `math.Pow10` computes it.
fn go_pow10(n: i32) -> f64 {
    const SMALL: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POSITIVE_32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEGATIVE_32: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    let magnitude = n.unsigned_abs() as usize;
    if (0..=308).contains(&n) {
        POSITIVE_32[magnitude / 32] * SMALL[magnitude % 32]
    } else if (-323..0).contains(&n) {
        NEGATIVE_32[magnitude / 32] / SMALL[magnitude % 32]
    } else if n > 0 {
        f64::INFINITY
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(s: &str) -> Option<f64> {
        Quantity::parse(s).ok().map(|q| q.approximate_f64())
    }

    fn reason(s: &str) -> QuantityReason {
        match Quantity::parse(s) {
            Err(Error::Quantity { reason, .. }) => reason,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn common_forms() {
        assert_eq!(approx("16"), Some(16.0));
        assert_eq!(approx("64Gi"), Some(64.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(approx("500m"), Some(0.5));
        assert_eq!(approx("1.5"), Some(1.5));
        assert_eq!(approx("2k"), Some(2000.0));
        assert_eq!(approx("1e3"), Some(1000.0));
        assert_eq!(approx("-3"), Some(-3.0));
        assert_eq!(approx("1000m"), Some(1.0));
        assert_eq!(approx("1.5Gi"), Some(1_610_612_736.0));
        assert_eq!(approx("0"), Some(0.0));
    }

    /// Go reads a bare sign, a lone dot and a missing number as zero.
    #[test]
    fn go_zero_forms() {
        for s in ["-", "+", ".", "000", "Ki", "-.m", "e3"] {
            assert_eq!(approx(s), Some(0.0), "{s}");
        }
    }

    #[test]
    fn errors_are_gos() {
        assert_eq!(reason(""), QuantityReason::Format);
        assert_eq!(reason("abc"), QuantityReason::Format);
        assert_eq!(reason("1Xi"), QuantityReason::Format);
        assert_eq!(reason("1.2.3"), QuantityReason::Format);
        assert_eq!(reason("1e"), QuantityReason::Suffix);
        assert_eq!(reason("1kk"), QuantityReason::Suffix);
        assert_eq!(reason("1Ki3"), QuantityReason::Suffix);
        assert_eq!(
            QuantityReason::Suffix.to_string(),
            "unable to parse quantity's suffix"
        );
    }

    /// Kubernetes keeps the mantissa and scale as written: `300m` is 300 × 10⁻³, and Go's
    /// `Pow10(-3)` is `1 / 1e3`. The CEL library's quantity normalizes to 3 × 10⁻¹ first,
    /// which gives 0.30000000000000004; the scheduler's copy, now this one, gave 0.3.
    #[test]
    fn the_float_keeps_the_written_scale() {
        assert_eq!(approx("300m"), Some(0.3));
        assert_ne!(3.0 * go_pow10(-1), 0.3);
        // `0.3` is written as 3 × 10⁻¹, so Kubernetes gives the float the CEL copy gives.
        assert_eq!(approx("0.3"), Some(0.30000000000000004));
        // A multiplication by the rounded 10⁻³, not a division by 10³.
        assert_eq!(approx("700m"), Some(0.7000000000000001));
    }

    /// The slow path rounds up to nano and computes the float from the rounded decimal.
    /// The scheduler's old copy parsed such strings as correctly rounded floats (1e-10 for
    /// `0.1n`); Kubernetes gives 1e-9.
    #[test]
    fn finer_than_nano_rounds_up() {
        assert_eq!(approx("0.1n"), Some(1e-9));
        assert_eq!(approx("-0.1n"), Some(-1e-9));
        assert_eq!(approx("1.0000000001"), Some(1_000_000_001.0 * go_pow10(-9)));
        // More than 18 digits leaves the int64 fast path.
        assert_eq!(
            approx("1234567890123456789"),
            Some(1_234_567_890_123_456_789_000_000_000f64 * go_pow10(-9))
        );
    }

    #[test]
    fn binary_values_are_capped() {
        assert_eq!(approx("16Ei"), Some(i64::MAX as f64));
        assert_eq!(approx("7Ei"), Some(7.0 * (1u64 << 60) as f64));
    }

    #[test]
    fn go_pow10_matches_gos_tables() {
        assert_eq!(go_pow10(0), 1.0);
        assert_eq!(go_pow10(-3), 1.0 / 1e3);
        assert_eq!(go_pow10(40), 1e32 * 1e8);
        assert_eq!(go_pow10(-40), 1e-32 / 1e8);
        assert_eq!(go_pow10(400), f64::INFINITY);
        assert_eq!(go_pow10(-400), 0.0);
    }
}
