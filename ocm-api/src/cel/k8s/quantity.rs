//! Kubernetes' `Quantity` library: `quantity(s)`, `isQuantity(s)`, `sign(q)`, and on a quantity
//! `isGreaterThan(q)`, `isLessThan(q)`, `compareTo(q)`, `asApproximateFloat()`,
//! `asInteger()`, `isInteger()`, `add(q | int)`, `sub(q | int)`.
//!
//! A quantity is held exactly as `mantissa × 10^exponent` (binary suffixes such as `Ki` give
//! exact decimals), so comparisons and sums are exact. Kubernetes uses arbitrary precision;
//! here the mantissa has 127 bits, and a sum that would not fit is an evaluation error.

use std::cmp::Ordering;

use cel::common::types::{INT_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{Env, ExecutionError};

use super::{boolean, int, int_arg, opaque_val, owned, string_arg, typed};
use crate::k8s::quantity::QuantityReason;

/// The CEL type of quantities.
pub(crate) static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

/// An exact decimal quantity, normalized (no trailing zeros in the mantissa; zero has
/// exponent 0), so derived equality is value equality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quantity {
    mantissa: i128,
    exponent: i32,
}

opaque_val!(Quantity, QUANTITY_TYPE);

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

fn digits(mut m: u128) -> i64 {
    let mut n = 0;
    while m > 0 {
        m /= 10;
        n += 1;
    }
    n
}

impl Quantity {
    fn new(mut mantissa: i128, mut exponent: i32) -> Quantity {
        if mantissa == 0 {
            return Quantity {
                mantissa: 0,
                exponent: 0,
            };
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent = exponent.saturating_add(1);
        }
        Quantity { mantissa, exponent }
    }

    /// An integer quantity.
    fn from_int(i: i64) -> Quantity {
        Quantity::new(i128::from(i), 0)
    }

    /// Parses a Kubernetes quantity string as `resource.ParseQuantity` does (the parser of
    /// [`crate::k8s::quantity`]), with its error texts.
    pub(crate) fn parse(s: &str) -> Result<Quantity, String> {
        match crate::k8s::quantity::Quantity::parse_reason(s) {
            Ok(q) => {
                let (mantissa, exponent) = q.parts();
                Ok(Quantity::new(mantissa, exponent))
            }
            Err(QuantityReason::OutOfRange) => {
                Err(format!("quantity {s:?} is out of the supported range"))
            }
            Err(reason) => Err(reason.to_string()),
        }
    }

    /// -1, 0 or 1.
    fn sign(&self) -> i64 {
        self.mantissa.signum() as i64
    }

    /// Exact ordering.
    pub(crate) fn compare(&self, other: &Quantity) -> Ordering {
        let by_sign = self.sign().cmp(&other.sign());
        if by_sign != Ordering::Equal || self.sign() == 0 {
            return by_sign;
        }
        let magnitude = compare_magnitude(self, other);
        if self.sign() < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    fn aligned(a: &Quantity, b: &Quantity) -> Option<(i128, i128, i32)> {
        let exponent = a.exponent.min(b.exponent);
        let scale = |q: &Quantity| -> Option<i128> {
            let shift = u32::try_from(i64::from(q.exponent) - i64::from(exponent)).ok()?;
            q.mantissa.checked_mul(pow10(shift)?)
        };
        Some((scale(a)?, scale(b)?, exponent))
    }

    fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let (a, b, e) = Quantity::aligned(self, other)?;
        Some(Quantity::new(a.checked_add(b)?, e))
    }

    fn checked_sub(&self, other: &Quantity) -> Option<Quantity> {
        let (a, b, e) = Quantity::aligned(self, other)?;
        Some(Quantity::new(a.checked_sub(b)?, e))
    }

    /// The value as an `i64`, when it is a whole number in range.
    fn as_i64(&self) -> Option<i64> {
        if self.exponent < 0 {
            return None;
        }
        let scaled = self
            .mantissa
            .checked_mul(pow10(u32::try_from(self.exponent).ok()?)?)?;
        i64::try_from(scaled).ok()
    }

    /// `mantissa × 10^exponent` as a float.
    fn approximate_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }
}

/// Compares the absolute values of two non-zero quantities of the same sign.
fn compare_magnitude(a: &Quantity, b: &Quantity) -> Ordering {
    let (ma, mb) = (a.mantissa.unsigned_abs(), b.mantissa.unsigned_abs());
    let size_a = digits(ma) + i64::from(a.exponent);
    let size_b = digits(mb) + i64::from(b.exponent);
    if size_a != size_b {
        return size_a.cmp(&size_b);
    }
    // Same order of magnitude: bring the one with the larger exponent down to the other's.
    let shift = |x: u128, by: i64| -> Option<u128> {
        10u128.checked_pow(u32::try_from(by).ok()?)?.checked_mul(x)
    };
    let by = i64::from(a.exponent) - i64::from(b.exponent);
    match by.cmp(&0) {
        Ordering::Equal => ma.cmp(&mb),
        // A product that overflows is larger than anything that fits.
        Ordering::Greater => shift(ma, by).map_or(Ordering::Greater, |x| x.cmp(&mb)),
        Ordering::Less => shift(mb, -by).map_or(Ordering::Less, |y| ma.cmp(&y)),
    }
}

fn to_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let text = string_arg("quantity", &args, 0)?;
    owned(Quantity::parse(text).map_err(|e| ExecutionError::function_error("quantity", e))?)
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(Quantity::parse(string_arg("isQuantity", &args, 0)?).is_ok())
}

fn q<'a>(
    function: &str,
    args: &'a [CowVal<'_, '_>],
    i: usize,
) -> Result<&'a Quantity, ExecutionError> {
    typed(function, args, i)
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(q("sign", &args, 0)?.sign())
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "isGreaterThan";
    boolean(q(f, &args, 0)?.compare(q(f, &args, 1)?) == Ordering::Greater)
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "isLessThan";
    boolean(q(f, &args, 0)?.compare(q(f, &args, 1)?) == Ordering::Less)
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "compareTo";
    int(q(f, &args, 0)?.compare(q(f, &args, 1)?) as i64)
}

fn approximate_float<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(cel::common::types::CelDouble::from(
        q("asApproximateFloat", &args, 0)?.approximate_f64(),
    ))
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "asInteger";
    int(q(f, &args, 0)?
        .as_i64()
        .ok_or_else(|| ExecutionError::function_error(f, "cannot convert value to integer"))?)
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(q("isInteger", &args, 0)?.as_i64().is_some())
}

fn operand(function: &str, args: &[CowVal<'_, '_>]) -> Result<Quantity, ExecutionError> {
    match q(function, args, 1) {
        Ok(x) => Ok(*x),
        Err(_) => int_arg(function, args, 1).map(Quantity::from_int),
    }
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "add";
    let sum = q(f, &args, 0)?
        .checked_add(&operand(f, &args)?)
        .ok_or_else(|| ExecutionError::function_error(f, "quantity out of the supported range"))?;
    owned(sum)
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "sub";
    let difference = q(f, &args, 0)?
        .checked_sub(&operand(f, &args)?)
        .ok_or_else(|| ExecutionError::function_error(f, "quantity out of the supported range"))?;
    owned(difference)
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let t = || QUANTITY_TYPE.to_owned();
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        to_quantity,
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    env.add_overload("sign", "quantity_sign", vec![t()], sign)?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        t(),
        vec![t()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "quantity_is_less_than", t(), vec![t()], less)?;
    env.add_member_overload(
        "compareTo",
        "quantity_compare_to",
        t(),
        vec![t()],
        compare_to,
    )?;
    env.add_member_overload(
        "asApproximateFloat",
        "quantity_get_float",
        t(),
        vec![],
        approximate_float,
    )?;
    env.add_member_overload("asInteger", "quantity_get_int", t(), vec![], as_integer)?;
    env.add_member_overload("isInteger", "quantity_is_integer", t(), vec![], is_integer)?;
    env.add_member_overload("add", "quantity_add", t(), vec![t()], add)?;
    env.add_member_overload("add", "quantity_add_int", t(), vec![INT_TYPE], add)?;
    env.add_member_overload("sub", "quantity_sub", t(), vec![t()], sub)?;
    env.add_member_overload("sub", "quantity_sub_int", t(), vec![INT_TYPE], sub)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, fails};
    use super::Quantity;

    #[test]
    fn parsing() {
        assert_eq!(Quantity::parse("1Ki"), Quantity::parse("1024"));
        assert_eq!(Quantity::parse("1.5"), Quantity::parse("1500m"));
        assert_eq!(Quantity::parse("1e3"), Quantity::parse("1k"));
        assert_eq!(Quantity::parse("1E"), Quantity::parse("1e18"));
        assert_eq!(Quantity::parse("+0.5Gi"), Quantity::parse("512Mi"));
        assert_eq!(Quantity::parse("0"), Quantity::parse("-0.000"));
        assert_eq!(Quantity::parse("1."), Quantity::parse("1"));
        assert_eq!(Quantity::parse(".5"), Quantity::parse("500m"));
        // As in Go, a bare sign, a bare dot and a missing number read as zero.
        for zero in ["-", ".", "Mi"] {
            assert_eq!(Quantity::parse(zero), Quantity::parse("0"), "{zero:?}");
        }
        // Finer than nano is rounded up to nano, as ParseQuantity does.
        assert_eq!(Quantity::parse("0.1n"), Quantity::parse("1n"));
        for bad in ["", "1..2", "1Kb", "1 Ki", "1e", "1e+", "abc", "1.2.3"] {
            assert!(Quantity::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Quantity::parse("1Kk"),
            Err("unable to parse quantity's suffix".to_string())
        );
    }

    #[test]
    fn comparisons() {
        check("quantity('50k').isGreaterThan(quantity('49999'))", true);
        check("quantity('1Gi').isLessThan(quantity('1G'))", false);
        check("quantity('1Gi').compareTo(quantity('1073741824'))", 0);
        check("quantity('-1').compareTo(quantity('-2'))", 1);
        check("quantity('100m').compareTo(quantity('0.1'))", 0);
        check("quantity('1e30').isGreaterThan(quantity('1Ei'))", true);
        check("quantity('1n').isGreaterThan(quantity('0'))", true);
        check("quantity('64Gi') == quantity('65536Mi')", true);
        check("sign(quantity('-5m'))", -1);
        check("sign(quantity('0'))", 0);
    }

    #[test]
    fn arithmetic_and_conversions() {
        check(
            "quantity('50k').add(quantity('20k')) == quantity('70k')",
            true,
        );
        check("quantity('50k').add(20) == quantity('50020')", true);
        check(
            "quantity('50.703k').sub(quantity('20k')) == quantity('30.703k')",
            true,
        );
        check("quantity('50k').sub(20000).asInteger()", 30000);
        check("quantity('50k').isInteger()", true);
        check(
            "quantity('9999999999999999999999999999999999999').isInteger()",
            false,
        );
        check("quantity('50m').isInteger()", false);
        check("quantity('1.5').asApproximateFloat()", 1.5);
        check("quantity('1Ki').asApproximateFloat()", 1024.0);
        check("isQuantity('20')", true);
        check("isQuantity('20Ki')", true);
        check("isQuantity('megabyte')", false);
        check("isQuantity('')", false);
    }

    #[test]
    fn bad_input() {
        check("quantity('Mi') == quantity('0')", true);
        fails("quantity('1Kb')", "quantities must match");
        fails("quantity('1Kk')", "suffix");
        fails(
            "quantity('50m').asInteger()",
            "cannot convert value to integer",
        );
        fails("quantity(1)", "");
        fails(
            "quantity('99999999999999999999999999999999999999').add(quantity('99999999999999999999999999999999999999'))",
            "range",
        );
        fails("quantity('1').add('x')", "");
    }
}
