//! Bounded compilation and evaluation: the pre-parse scan, parsing on a stack of known size, the
//! post-parse depth check, and evaluation on a stack deep enough for the expression.

use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, SourceInfo};
use cel::{Context, Env, Value};

use super::Limits;
use super::cost::{self, Meter};
use super::scan::{self, Shape};
use crate::error::{CelIssue, CompileError, EvalError};

/// Stack a parse needs per level of bracket nesting, and per chained operator, with a margin
/// (measured: a debug build needs up to about 180 KiB per nested parenthesis and 4 KiB per
/// operator; an optimised one up to 20 KiB and 1 KiB).
#[cfg(debug_assertions)]
const PARSE_STACK_PER_NESTING: usize = 320 << 10;
#[cfg(not(debug_assertions))]
const PARSE_STACK_PER_NESTING: usize = 48 << 10;
#[cfg(debug_assertions)]
const PARSE_STACK_PER_LEVEL: usize = 16 << 10;
#[cfg(not(debug_assertions))]
const PARSE_STACK_PER_LEVEL: usize = 4 << 10;
/// Stack any parse may need besides the levels: reporting and recovering from syntax errors
/// takes up to 3 MiB in a debug build.
#[cfg(debug_assertions)]
const PARSE_STACK_BASE: usize = 8 << 20;
#[cfg(not(debug_assertions))]
const PARSE_STACK_BASE: usize = 256 << 10;

/// Stack an evaluation (or one of our walkers) needs per level of the syntax tree, with a
/// margin (measured: a debug build needs up to about 40 KiB per level; an optimised one up to
/// 3 KiB).
#[cfg(debug_assertions)]
pub(crate) const EVAL_STACK_PER_LEVEL: usize = 64 << 10;
#[cfg(not(debug_assertions))]
pub(crate) const EVAL_STACK_PER_LEVEL: usize = 8 << 10;

/// Stack kept free besides the levels: for the functions the expression calls (regular
/// expressions, formatting, JSON) and the caller's own frames.
const STACK_BASE: usize = 512 << 10;

/// Runs `f` with at least `need` bytes of stack: on the current stack when it has that much
/// left, else on a new one (on the same thread) of `need` plus a margin.
#[inline]
pub(crate) fn with_stack<R>(need: usize, f: impl FnOnce() -> R) -> R {
    let need = need.saturating_add(STACK_BASE);
    stacker::maybe_grow(need, need.saturating_add(1 << 20), f)
}

/// The stack an evaluation of a tree `depth` levels deep needs (see [`with_stack`]).
pub(crate) fn eval_stack(depth: usize) -> usize {
    depth.saturating_mul(EVAL_STACK_PER_LEVEL)
}

/// A parsed expression, bounded by the [`Limits`] it was compiled with.
///
/// It is what the `cel` crate's parser produced, macros expanded, plus what evaluating it
/// needs: its depth (so evaluation runs on a stack deep enough in any build and on any thread)
/// and its source (for positions and upstream-format error messages).
#[derive(Debug, Clone)]
pub struct Program {
    source: Arc<str>,
    expression: IdedExpr,
    /// The expression with its cost charges (see the cost module): what is evaluated.
    executable: IdedExpr,
    /// Units charged once per evaluation.
    base_cost: u64,
    /// Whether the executable expression charges anything itself (else no meter is needed).
    charges: bool,
    source_info: Arc<SourceInfo>,
    /// Depth of the executable expression.
    depth: usize,
    limits: Limits,
}

/// What evaluations may spend (see the [module documentation](super) for what costs what): a
/// total shared by the evaluations it is passed to, and a limit for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    remaining: u64,
    per_evaluation: u64,
}

impl Budget {
    /// Upstream's budget for the expressions of one manifest's condition rules or one
    /// placement predicate for one cluster (`RuntimeCELCostBudget` of `k8s.io/apiserver`).
    pub const RUNTIME_COST_BUDGET: u64 = 10_000_000;
    /// Upstream's limit for one evaluation (`PerCallLimit` of `k8s.io/apiserver`).
    pub const PER_CALL_LIMIT: u64 = 1_000_000;

    /// A budget of `total` units, each evaluation limited to `per_evaluation`.
    pub fn new(total: u64, per_evaluation: u64) -> Self {
        Budget {
            remaining: total,
            per_evaluation,
        }
    }

    /// What is left.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The limit of one evaluation.
    pub fn per_evaluation(&self) -> u64 {
        self.per_evaluation
    }

    /// Takes `units` off what is left (saturating at zero).
    pub fn spend(&mut self, units: u64) {
        self.remaining = self.remaining.saturating_sub(units);
    }
}

impl Default for Budget {
    /// Upstream's: [`Budget::RUNTIME_COST_BUDGET`] in all, [`Budget::PER_CALL_LIMIT`] each.
    fn default() -> Self {
        Budget::new(Self::RUNTIME_COST_BUDGET, Self::PER_CALL_LIMIT)
    }
}

impl Program {
    /// Parses `source` with the parser (and macros) of `env`, within `limits`.
    ///
    /// # Errors
    ///
    /// The syntax errors of `source`, or the limit it exceeds, in upstream's format (see
    /// [`CompileError`]).
    pub fn parse(env: &Env, source: &str, limits: &Limits) -> Result<Program, CompileError> {
        let source: Arc<str> = Arc::from(source);
        let shape = scan::scan(&source, limits)
            .map_err(|e| CompileError::unlocated(Arc::clone(&source), e.to_string()))?;
        let need = parse_stack(&shape);
        let parser = env
            .parser()
            // The scan bounds nesting; the crate's own check (which counts the same brackets
            // and conditionals) stays as a backstop above it.
            .max_recursion_depth(
                u16::try_from(limits.nesting.saturating_mul(2)).unwrap_or(u16::MAX - 1),
            );
        let parsed = with_stack(need, || parser.parse_with_source_info(&source));
        let (expression, source_info) =
            parsed.map_err(|errors| CompileError::from_parse(Arc::clone(&source), errors))?;
        let mut program = Program {
            source,
            expression,
            executable: IdedExpr::default(),
            base_cost: 0,
            charges: false,
            source_info: Arc::new(source_info),
            depth: 0,
            limits: *limits,
        };
        program.check_depth()?;
        program.prepare()?;
        Ok(program)
    }

    /// The source the program was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The expression, macros expanded (and rewritten by [`Program::rewrite`], if it was).
    pub fn expression(&self) -> &IdedExpr {
        &self.expression
    }

    /// How many levels deep the expression is.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The expression [`Program::evaluate`] runs: [`Program::expression`] with the hidden cost
    /// charges around loop ranges and sized operands (see [`Budget`] and the
    /// [module documentation](super)), for evaluators of their own that must charge what this
    /// one charges.
    pub fn executable(&self) -> &IdedExpr {
        &self.executable
    }

    /// Units [`Program::evaluate`] charges once, before evaluating: the nodes outside loops.
    pub fn base_cost(&self) -> u64 {
        self.base_cost
    }

    /// Whether [`Program::executable`] charges anything itself (when it does not, an
    /// evaluation costs exactly [`Program::base_cost`]).
    pub fn charges(&self) -> bool {
        self.charges
    }

    /// Runs `f` with a stack deep enough to walk or evaluate [`Program::executable`]
    /// recursively (on the current stack when it has room, as [`Program::evaluate`] does).
    pub fn with_stack<R>(&self, f: impl FnOnce() -> R) -> R {
        with_stack(eval_stack(self.depth), f)
    }

    /// The 1-based line and column (in code points) where the node `id` was written; `None`
    /// for a node the parser did not place (a node added by a rewrite).
    pub fn position(&self, id: u64) -> Option<(usize, usize)> {
        let (start, _) = self.source_info.offset_for(id)?;
        let start = usize::try_from(start).ok()?;
        let before = self.source.get(..start)?;
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..)?.chars().count() + 1;
        Some((line, column))
    }

    /// An error at the node `id`, in upstream's format.
    pub fn error_at(&self, id: u64, message: impl Into<String>) -> CompileError {
        let (line, column) = self.position(id).map_or((-1, 0), |(l, c)| {
            (
                i64::try_from(l).unwrap_or(i64::MAX),
                i64::try_from(c).unwrap_or(i64::MAX),
            )
        });
        CompileError::new(
            Arc::clone(&self.source),
            vec![CelIssue {
                line,
                column,
                message: message.into(),
            }],
            0,
        )
    }

    /// Runs `f` on the expression with a stack deep enough for walking it recursively, then
    /// checks the depth of the result again (a rewrite may have deepened it).
    ///
    /// # Errors
    ///
    /// The rewritten expression is deeper than the limits allow.
    pub fn rewrite<R>(&mut self, f: impl FnOnce(&mut IdedExpr) -> R) -> Result<R, CompileError> {
        let result = self.walk_mut(f);
        self.check_depth()?;
        self.prepare()?;
        Ok(result)
    }

    /// Builds the executable expression (the cost charges added) and checks its depth.
    fn prepare(&mut self) -> Result<(), CompileError> {
        let (executable, base_cost, charges) = self.walk(cost::instrument);
        let depth = depth(&executable);
        // The charges deepen the tree by at most one level per operand: within twice the
        // limit, the stack is sized for it.
        if depth > self.limits.depth.saturating_mul(2) {
            return Err(CompileError::unlocated(
                Arc::clone(&self.source),
                "max recursion depth exceeded".to_string(),
            ));
        }
        self.executable = executable;
        self.base_cost = base_cost;
        self.charges = charges;
        self.depth = self.depth.max(depth);
        Ok(())
    }

    /// Runs `f` on the expression with a stack deep enough for walking it recursively.
    pub fn walk<R>(&self, f: impl FnOnce(&IdedExpr) -> R) -> R {
        with_stack(eval_stack(self.depth), || f(&self.expression))
    }

    fn walk_mut<R>(&mut self, f: impl FnOnce(&mut IdedExpr) -> R) -> R {
        let need = eval_stack(self.depth);
        let expression = &mut self.expression;
        with_stack(need, || f(expression))
    }

    fn check_depth(&mut self) -> Result<(), CompileError> {
        let depth = depth(&self.expression);
        if depth > self.limits.depth {
            return Err(CompileError::unlocated(
                Arc::clone(&self.source),
                "max recursion depth exceeded".to_string(),
            ));
        }
        self.depth = depth;
        Ok(())
    }

    /// Evaluates the expression in `ctx`, on a stack deep enough for it, charging its cost to
    /// `budget`: the evaluation stops as soon as it passes the per-evaluation limit or what is
    /// left of the budget.
    ///
    /// `ctx` must be built on an environment that has the cost function: the shared
    /// [`environment`](super::environment) or one passed to
    /// [`extend_environment`](super::extend_environment).
    ///
    /// # Errors
    ///
    /// What the evaluation fails with; [`EvalError::CostLimit`] past the per-evaluation limit,
    /// [`EvalError::BudgetExceeded`] past what was left of the budget.
    #[inline]
    pub fn evaluate(&self, ctx: &Context<'_, '_>, budget: &mut Budget) -> Result<Value, EvalError> {
        let by_budget = budget.remaining < budget.per_evaluation;
        if !self.charges && self.base_cost <= budget.remaining.min(budget.per_evaluation) {
            // The common case, kept short: nothing charges beyond the nodes, paid here.
            budget.remaining -= self.base_cost;
            return with_stack(eval_stack(self.depth), || {
                Value::resolve(&self.executable, ctx)
            })
            .map_err(EvalError::Execution);
        }
        let (result, cost) =
            self.evaluate_with_limit(ctx, budget.remaining.min(budget.per_evaluation));
        budget.spend(cost);
        match result {
            Err(EvalError::CostLimit) if by_budget => Err(EvalError::BudgetExceeded),
            other => other,
        }
    }

    /// Evaluates the expression in `ctx`, on a stack deep enough for it, within `limit` units
    /// of cost; returns the result and the units spent (at most just past `limit`).
    ///
    /// # Errors
    ///
    /// What the evaluation fails with; [`EvalError::CostLimit`] past `limit`, even where the
    /// expression absorbed the failing step (`… || true`).
    pub fn evaluate_with_limit(
        &self,
        ctx: &Context<'_, '_>,
        limit: u64,
    ) -> (Result<Value, EvalError>, u64) {
        if self.base_cost > limit {
            return (Err(EvalError::CostLimit), self.base_cost);
        }
        if !self.charges {
            // Nothing can charge beyond the nodes, paid above: no meter to keep.
            let result = with_stack(eval_stack(self.depth), || {
                Value::resolve(&self.executable, ctx)
            });
            return (result.map_err(EvalError::Execution), self.base_cost);
        }
        let meter = Meter {
            used: self.base_cost,
            limit,
            exceeded: false,
        };
        let (result, meter) = cost::metered(meter, || {
            with_stack(eval_stack(self.depth), || {
                Value::resolve(&self.executable, ctx)
            })
        });
        let result = if meter.exceeded {
            Err(EvalError::CostLimit)
        } else {
            result.map_err(EvalError::Execution)
        };
        (result, meter.used)
    }
}

/// The stack parsing an expression of `shape` needs.
fn parse_stack(shape: &Shape) -> usize {
    shape
        .nesting
        .saturating_mul(PARSE_STACK_PER_NESTING)
        .saturating_add(PARSE_STACK_BASE)
        .saturating_add(shape.levels.saturating_mul(PARSE_STACK_PER_LEVEL))
}

/// The direct subexpressions of `e` (a call's target and arguments, a comprehension's five
/// parts, list and map elements, struct fields, a selection's operand), for walks over an
/// expression tree.
pub fn children(e: &IdedExpr) -> impl Iterator<Item = &IdedExpr> {
    let mut out: Vec<&IdedExpr> = Vec::new();
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => {}
        Expr::Call(call) => {
            out.extend(call.target.as_deref());
            out.extend(call.args.iter());
        }
        Expr::Comprehension(c) => out.extend([
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]),
        Expr::List(l) => out.extend(l.elements.iter()),
        Expr::Map(m) => {
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => out.extend([&me.key, &me.value]),
                    EntryExpr::StructField(f) => out.push(&f.value),
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => out.extend([&me.key, &me.value]),
                    EntryExpr::StructField(f) => out.push(&f.value),
                }
            }
        }
        Expr::Select(s) => out.push(&s.operand),
    }
    out.into_iter()
}

/// The depth of `e` (a leaf is one level), computed without recursion.
pub(crate) fn depth(e: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(e, 1usize)];
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(children(e).map(|c| (c, d + 1)));
    }
    deepest
}

/// Names an expression may use as free identifiers besides its variables: the type names of
/// the standard library.
const TYPE_IDENTIFIERS: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
    "timestamp",
    "duration",
    "optional_type",
];

/// Prefixes of namespaced functions (`optional.of`, `math.ceil`, `lists.range`, `format.uri`,
/// `strings.quote`), which an expression names like identifiers.
const FUNCTION_NAMESPACES: &[&str] = &["optional", "math", "lists", "ip", "format", "strings"];

impl Program {
    /// Checks that every identifier the expression uses is one of `variables`, a variable of
    /// an enclosing comprehension, a type name, a function namespace or a hidden name (one
    /// starting with `@`, which only rewrites produce); the first other one is cel-go's
    /// checker error, `undeclared reference to 'NAME' (in container '')`, at its position.
    ///
    /// # Errors
    ///
    /// The first undeclared reference, in source order.
    pub fn check_references(&self, variables: &[&str]) -> Result<(), CompileError> {
        let unknown = self.walk(|e| {
            let mut unknown = Vec::new();
            free_identifiers(e, variables, &mut Vec::new(), &mut unknown);
            unknown
        });
        let first = unknown
            .into_iter()
            .min_by_key(|(_, id)| self.position(*id).unwrap_or((usize::MAX, usize::MAX)));
        match first {
            Some((name, id)) => Err(self.error_at(
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            )),
            None => Ok(()),
        }
    }
}

/// Collects the identifiers of `e` that are neither bound by an enclosing comprehension nor
/// known, with their node ids.
fn free_identifiers(
    e: &IdedExpr,
    variables: &[&str],
    bound: &mut Vec<String>,
    out: &mut Vec<(String, u64)>,
) {
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => {}
        Expr::Ident(name) => {
            if !variables.contains(&name.as_str())
                && !name.starts_with('@')
                && !TYPE_IDENTIFIERS.contains(&name.as_str())
                && !bound.iter().any(|b| b == name)
            {
                out.push((name.clone(), e.id));
            }
        }
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                // `optional.of(…)`, `math.ceil(…)`: a namespace, not a variable.
                let namespace = matches!(&t.expr, Expr::Ident(n)
                    if FUNCTION_NAMESPACES.contains(&n.as_str()) && !bound.iter().any(|b| b == n));
                if !namespace {
                    free_identifiers(t, variables, bound, out);
                }
            }
            for a in &call.args {
                free_identifiers(a, variables, bound, out);
            }
        }
        Expr::Comprehension(c) => {
            free_identifiers(&c.iter_range, variables, bound, out);
            free_identifiers(&c.accu_init, variables, bound, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2.clone());
            }
            bound.push(c.accu_var.clone());
            free_identifiers(&c.loop_cond, variables, bound, out);
            free_identifiers(&c.loop_step, variables, bound, out);
            free_identifiers(&c.result, variables, bound, out);
            bound.truncate(depth);
        }
        _ => {
            for child in children(e) {
                free_identifiers(child, variables, bound, out);
            }
        }
    }
}
