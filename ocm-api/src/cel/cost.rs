//! Runtime cost: what an evaluation spends, charged as it goes, and the budget that stops it.
//!
//! The `cel` crate tracks no cost, so an evaluated expression is a rewritten copy of the
//! parsed one with calls to two hidden functions (the `@` keeps users from writing them),
//! which charge the evaluation's meter and hand their first argument back; once the meter
//! passes its limit they fail, and so does the evaluation:
//!
//! * `@ocm_cost_each(range, weight)` around the range of every comprehension (`all`,
//!   `exists`, `exists_one`, `map`, `filter`, …) charges, before the first iteration, one
//!   `weight` (the nodes the loop condition and step evaluate) per element of the range, and
//!   one unit per element for walking it. A loop is thus paid in full before it runs, one
//!   call per loop rather than per iteration: a nested runaway stops before its inner loops
//!   start. The price is that a loop that ends early (`exists` finding its element first) is
//!   charged as if it ran to the end; this only matters for ranges of hundreds of thousands
//!   of elements (ours: cel-go charges the iterations run).
//! * `@ocm_cost(value, 0)` around the operands of calls whose work grows with the size of
//!   their operands (string functions, `+`, comparisons, `in`, list functions, conversions,
//!   the Kubernetes libraries) charges the operand's size: a string or bytes value one unit
//!   per ten bytes (cel-go's string traversal factor), a list or map one unit per entry.
//!   Operands that are literals are not charged, nor is anything where a literal bounds the
//!   work (a comparison with a literal, `startsWith`/`endsWith` of one).
//!
//! The nodes outside any loop are charged once, before the evaluation starts. One unit is
//! about one node evaluated, as with cel-go's costs, so upstream's limits (1,000,000 per
//! expression, 10,000,000 per budget) bound an evaluation to well under a second in an
//! optimised build. The counts differ from cel-go's in detail: cel-go's estimator charges
//! each function by its own formula.

use std::cell::Cell;

use cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue, operators};
use cel::common::types::{CelBytes, CelInt, CelList, CelMap, CelString};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

use super::program::children;

/// Name of the hidden function charging an operand's size.
pub const COST_FUNCTION: &str = "@ocm_cost";

/// Name of the hidden function charging a loop before it runs.
pub const LOOP_COST_FUNCTION: &str = "@ocm_cost_each";

/// The meter of the evaluation running on this thread.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Meter {
    /// Units spent.
    pub(crate) used: u64,
    /// Units the evaluation may spend.
    pub(crate) limit: u64,
    /// Whether the limit was passed (an error the expression absorbed still counts).
    pub(crate) exceeded: bool,
}

thread_local! {
    static METER: Cell<Option<Meter>> = const { Cell::new(None) };
}

/// Runs `f` with `meter` as this thread's meter and returns the meter as `f` left it (the
/// previous one, if any, is restored, even if `f` unwinds).
pub(crate) fn metered<R>(meter: Meter, f: impl FnOnce() -> R) -> (R, Meter) {
    struct Restore(Option<Meter>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            METER.with(|m| m.set(previous));
        }
    }
    let _restore = Restore(METER.with(|m| m.replace(Some(meter))));
    let result = f();
    let left = METER.with(|m| m.get()).unwrap_or_default();
    (result, left)
}

/// Charges `units` to this thread's meter; an error once it passes its limit.
fn charge(units: u64) -> Result<(), ExecutionError> {
    METER.with(|m| {
        let Some(mut meter) = m.get() else {
            // Not evaluated through a metered evaluation: nothing to charge.
            return Ok(());
        };
        if meter.exceeded {
            // Past the limit already (the expression absorbed the first failure): fail again
            // without counting, so the cost reported is where the limit was passed.
            return Err(ExecutionError::function_error(
                COST_FUNCTION,
                "actual cost limit exceeded",
            ));
        }
        meter.used = meter.used.saturating_add(units);
        let over = meter.used > meter.limit;
        if over {
            // Reported as just past the limit, as cel-go stops right after passing it (one
            // charge can be a whole loop's).
            meter.used = meter.limit.saturating_add(1);
            meter.exceeded = true;
        }
        m.set(Some(meter));
        if over {
            Err(ExecutionError::function_error(
                COST_FUNCTION,
                "actual cost limit exceeded",
            ))
        } else {
            Ok(())
        }
    })
}

/// Units a value of this size costs to traverse.
fn size_units(value: &dyn Val) -> u64 {
    let len = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    if let Some(s) = value.downcast_ref::<CelString<'_>>() {
        len(s.inner().len()).div_ceil(10)
    } else if let Some(b) = value.downcast_ref::<CelBytes<'_>>() {
        len(b.inner().len()).div_ceil(10)
    } else if let Some(l) = value.downcast_ref::<CelList<'_>>() {
        len(l.inner().len())
    } else if let Some(m) = value.downcast_ref::<CelMap<'_>>() {
        len(m.inner().len())
    } else {
        0
    }
}

/// `@ocm_cost(value, weight)`: charges `weight` plus the size of `value`, returns `value`.
fn cost_function<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut args = args.into_iter();
    let (Some(value), Some(weight)) = (args.next(), args.next()) else {
        return Err(ExecutionError::invalid_argument_count(2, 0));
    };
    let weight = weight
        .downcast_ref::<CelInt>()
        .map_or(0, |w| u64::try_from(*w.inner()).unwrap_or(0));
    charge(weight.saturating_add(size_units(value.as_ref())))?;
    Ok(value)
}

/// `@ocm_cost_each(range, weight)`: charges `weight` plus one unit per element of `range`,
/// returns `range`.
fn loop_cost_function<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut args = args.into_iter();
    let (Some(range), Some(weight)) = (args.next(), args.next()) else {
        return Err(ExecutionError::invalid_argument_count(2, 0));
    };
    let weight = weight
        .downcast_ref::<CelInt>()
        .map_or(0, |w| u64::try_from(*w.inner()).unwrap_or(0));
    let elements = if let Some(l) = range.downcast_ref::<CelList<'_>>() {
        l.inner().len()
    } else if let Some(m) = range.downcast_ref::<CelMap<'_>>() {
        m.inner().len()
    } else {
        0
    };
    let elements = u64::try_from(elements).unwrap_or(u64::MAX);
    charge(elements.saturating_mul(weight.saturating_add(1)))?;
    Ok(range)
}

/// Declares the hidden cost functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    use cel::common::types::{DYN_TYPE, INT_TYPE};
    env.add_overload(
        COST_FUNCTION,
        "ocm_cost_dyn_int",
        vec![DYN_TYPE, INT_TYPE],
        cost_function,
    )?;
    env.add_overload(
        LOOP_COST_FUNCTION,
        "ocm_cost_each_dyn_int",
        vec![DYN_TYPE, INT_TYPE],
        loop_cost_function,
    )
}

/// Functions whose work does not grow with the size of their operands (or that the
/// interpreter evaluates itself, lazily).
const FLAT: &[&str] = &[
    operators::CONDITIONAL,
    operators::LOGICAL_AND,
    operators::LOGICAL_OR,
    operators::LOGICAL_NOT,
    operators::NOT_STRICTLY_FALSE,
    operators::NEGATE,
    operators::SUBSTRACT,
    operators::MULTIPLY,
    operators::DIVIDE,
    operators::MODULO,
    operators::INDEX,
    operators::OPT_INDEX,
    operators::OPT_SELECT,
    COST_FUNCTION,
    LOOP_COST_FUNCTION,
    "int",
    "uint",
    "double",
    "bool",
    "type",
    "dyn",
    "hasValue",
    "value",
    "orValue",
    "or",
    "of",
    "none",
    "ofNonZeroValue",
    "scores",
];

/// Functions whose work a literal operand bounds.
const BOUNDED_BY_A_LITERAL: &[&str] = &[
    operators::EQUALS,
    operators::NOT_EQUALS,
    operators::LESS,
    operators::LESS_EQUALS,
    operators::GREATER,
    operators::GREATER_EQUALS,
    "startsWith",
    "endsWith",
];

/// Prefixes of namespaced functions: a call's target that names one is no operand.
const NAMESPACES: &[&str] = &["optional", "math", "lists", "ip", "format", "strings"];

/// The instrumented copy of `e` (see the module documentation), the units charged once per
/// evaluation before it starts, and whether the copy charges anything itself.
pub(crate) fn instrument(e: &IdedExpr) -> (IdedExpr, u64, bool) {
    let mut out = e.clone();
    let mut charges = false;
    instrument_in_place(&mut out, &mut charges);
    (out, nodes(e), charges)
}

fn literal(e: &IdedExpr) -> bool {
    matches!(e.expr, Expr::Literal(_))
}

/// Wraps `e` in `function(e, weight)`.
fn wrap_with(e: &mut IdedExpr, function: &str, weight: u64) {
    let id = e.id;
    let inner = std::mem::take(e);
    *e = IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: function.to_string(),
            target: None,
            args: vec![
                inner,
                IdedExpr {
                    id,
                    expr: Expr::Literal(LiteralValue::Int(
                        i64::try_from(weight).unwrap_or(i64::MAX).into(),
                    )),
                },
            ],
        }),
    };
}

fn instrument_in_place(e: &mut IdedExpr, charges: &mut bool) {
    // Children first: the weights are those of the expression as written.
    match &mut e.expr {
        Expr::Comprehension(c) => {
            let weight = nodes(&c.loop_cond)
                .saturating_add(nodes(&c.loop_step))
                .saturating_add(1);
            for x in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                instrument_in_place(x, charges);
            }
            wrap_with(&mut c.iter_range, LOOP_COST_FUNCTION, weight);
            *charges = true;
        }
        Expr::Call(call) => {
            let sized = !FLAT.contains(&call.func_name.as_str());
            let bounded = BOUNDED_BY_A_LITERAL.contains(&call.func_name.as_str())
                && (call.target.as_deref().is_some_and(literal) || call.args.iter().any(literal));
            if let Some(t) = &mut call.target {
                instrument_in_place(t, charges);
            }
            for a in &mut call.args {
                instrument_in_place(a, charges);
            }
            if sized && !bounded {
                if let Some(t) = &mut call.target {
                    let namespace =
                        matches!(&t.expr, Expr::Ident(n) if NAMESPACES.contains(&n.as_str()));
                    if !literal(t) && !namespace {
                        wrap_with(t, COST_FUNCTION, 0);
                        *charges = true;
                    }
                }
                for a in &mut call.args {
                    if !literal(a) {
                        wrap_with(a, COST_FUNCTION, 0);
                        *charges = true;
                    }
                }
            }
        }
        _ => {
            for child in children_mut(e) {
                instrument_in_place(child, charges);
            }
        }
    }
}

/// The direct subexpressions of `e`, mutably.
fn children_mut(e: &mut IdedExpr) -> Vec<&mut IdedExpr> {
    use cel::common::ast::EntryExpr;
    let mut out: Vec<&mut IdedExpr> = Vec::new();
    match &mut e.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => {}
        Expr::Call(call) => {
            if let Some(t) = call.target.as_deref_mut() {
                out.push(t);
            }
            out.extend(call.args.iter_mut());
        }
        Expr::Comprehension(c) => out.extend([
            &mut c.iter_range,
            &mut c.accu_init,
            &mut c.loop_cond,
            &mut c.loop_step,
            &mut c.result,
        ]),
        Expr::List(l) => out.extend(l.elements.iter_mut()),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(me) => {
                        out.push(&mut me.key);
                        out.push(&mut me.value);
                    }
                    EntryExpr::StructField(f) => out.push(&mut f.value),
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &mut s.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(me) => {
                        out.push(&mut me.key);
                        out.push(&mut me.value);
                    }
                    EntryExpr::StructField(f) => out.push(&mut f.value),
                }
            }
        }
        Expr::Select(s) => out.push(&mut s.operand),
    }
    out
}

/// Nodes of `e` evaluated once per evaluation of `e`: all but those in the loop condition and
/// step of the comprehensions it contains (charged per iteration).
pub(crate) fn nodes(e: &IdedExpr) -> u64 {
    let mut count = 0u64;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        count = count.saturating_add(1);
        match &e.expr {
            Expr::Comprehension(c) => stack.extend([&c.iter_range, &c.accu_init, &c.result]),
            _ => stack.extend(children(e)),
        }
    }
    count
}
