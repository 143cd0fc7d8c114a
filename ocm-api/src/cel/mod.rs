//! CEL with bounds: compile and evaluate user-supplied expressions without ever crashing.
//!
//! Placement CEL selectors, work condition rules and CRD validation rules are CEL expressions
//! written by users. The `cel` crate parses and evaluates them recursively, one or more stack
//! frames per level of the syntax tree, and in an unoptimised build a single level of
//! parentheses takes over 100 KiB of parser stack: thirty nested parentheses overflow a 2 MiB
//! thread. This module puts bounds around the crate, with the same limits (and messages) as
//! cel-go, which upstream OCM uses:
//!
//! 1. Before parsing, a scan of the source (literals and comments skipped) rejects expressions
//!    longer than [`Limits::code_points`], nested deeper than [`Limits::nesting`] or with
//!    longer chains of operators than [`Limits::recursion`] (see [`Limits`]).
//! 2. Parsing runs on a stack sized from what the scan measured: on the caller's stack when it
//!    has room, else on a new stack on the same thread (`stacker`), so it works in debug and
//!    release builds and on any thread (tokio workers have 2 MiB).
//! 3. After parsing, the depth of the syntax tree is measured without recursion and bounded by
//!    [`Limits::depth`]; evaluation (and any recursive walk of the tree, see
//!    [`Program::walk`]) runs on a stack sized from that depth in the same way.
//!
//! A rejected expression is a [`CompileError`] that displays in cel-go's format; a failed
//! evaluation an [`EvalError`] that displays in cel-go's words ([`runtime_message`]: `no such
//! key: missing`, not the `cel` crate's `No such key: missing`).
//!
//! Evaluation is metered too: [`Program::evaluate`] charges the work it does to a [`Budget`]
//! (upstream's defaults: 1,000,000 units per evaluation, 10,000,000 in all) and stops with
//! [`EvalError::CostLimit`] (`operation cancelled: actual cost limit exceeded`, cel-go's
//! message) or [`EvalError::BudgetExceeded`] (`CEL evaluation budget exceeded`, upstream's)
//! as soon as it passes either. The `cel` crate tracks no cost: the evaluated expression is a
//! copy with hidden charging calls before every loop (for all its iterations at once) and
//! around operands whose size drives the work; one unit is about one node evaluated, a string
//! is charged a unit per ten bytes read and a list or map a unit per entry (see the cost
//! module's source for the details). The units approximate cel-go's; they are not its exact
//! figures. One difference: a loop that ends early (`exists` finding its element first) is
//! charged in full, so `exists` over a list of a million elements passes the limit where
//! cel-go would not.
//!
//! # Limits and messages
//!
//! | Limit | Value | Message | Origin |
//! |---|---|---|---|
//! | [`Limits::code_points`] | 100,000 | `expression code point size exceeds limit: size: N, limit 100000` | cel-go's parser option `expressionSizeCodePointLimit` |
//! | [`Limits::nesting`] | 250 | `expression recursion limit exceeded: 250` | cel-go's parse listener (`maxRecursionDepth`) |
//! | [`Limits::recursion`] per kind | 250 | `expression recursion limit exceeded: 250` | cel-go's parse listener |
//! | [`Limits::recursion`] together | 250 | `max recursion depth exceeded` | cel-go's parse visitor |
//! | [`Limits::depth`] | 1,000 | `max recursion depth exceeded` | ours (the tree after macro expansion) |
//! | [`Budget::PER_CALL_LIMIT`] | 1,000,000 | `operation cancelled: actual cost limit exceeded` | upstream's `PerCallLimit`, cel-go's message |
//! | [`Budget::RUNTIME_COST_BUDGET`] | 10,000,000 | `CEL evaluation budget exceeded` | upstream's `RuntimeCELCostBudget` and message |
//!
//! The values are cel-go's, the counting is ours: cel-go counts the rules of its grammar as
//! its parser enters them, the scan counts brackets and operators, so the exact boundary can
//! differ by a few levels for expressions that mix kinds. Every message is reported without a
//! location, as `ERROR: <input>:-1:0: …`, as cel-go reports them.
//!
//! # Stack
//!
//! Measured per level (parenthesis, list, operator or field access): parsing needs up to about
//! 180 KiB in an unoptimised build and a tenth of that optimised; evaluation about 40 KiB and
//! 4 KiB. The largest expression the default limits accept therefore needs tens of MiB of
//! stack in a debug build: such stacks are only reserved (and then only touched as deep as the
//! expression goes) when the current stack is too small, so an ordinary expression evaluates
//! on the caller's stack with no overhead beyond a comparison.

mod cache;
mod convert;
mod cost;
pub(crate) mod k8s;
mod message;
mod program;
mod scan;

use std::sync::{Arc, OnceLock};

use ::cel::{Context, Env};

pub use self::cache::Cache;
pub use self::convert::{json_depth, json_to_val, json_to_value, value_to_val};
pub use self::cost::{COST_FUNCTION, LOOP_COST_FUNCTION};
pub use self::message::runtime_message;
pub use self::program::{Budget, Program, children};
pub use crate::error::{CelIssue, CompileError, EvalError};

/// The environment every CEL expression of the SDK compiles and runs in, built once: the
/// standard library with optional values, the `cel` crate's `strings`, `lists` and `math`
/// extensions, and Kubernetes' CEL libraries (see below). Each user adds its own variables
/// and functions to the [`Context`] it evaluates in (see [`context`]).
///
/// Kubernetes' libraries, with Kubernetes' names, types and errors:
///
/// * Semver: `semver(s)`, `semver(s, normalize)`, `isSemver(s)`, `isSemver(s, normalize)`;
///   on a semver `major()`, `minor()`, `patch()`, `isGreaterThan(v)`, `isLessThan(v)`,
///   `compareTo(v)`.
/// * Quantity: `quantity(s)`, `isQuantity(s)`, `sign(q)`; on a quantity `isGreaterThan(q)`,
///   `isLessThan(q)`, `compareTo(q)`, `asApproximateFloat()`, `asInteger()`, `isInteger()`,
///   `add(q | int)`, `sub(q | int)`.
/// * Lists: on a list `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)`.
/// * Regex: on a string `find(re)`, `findAll(re)`, `findAll(re, n)`.
/// * IP: `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `string(ip)`; on an IP `family()`,
///   `isUnspecified()`, `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()`,
///   `isGlobalUnicast()`.
/// * CIDR: `cidr(s)`, `isCIDR(s)`, `string(cidr)`; on a CIDR `containsIP(ip | s)`,
///   `containsCIDR(cidr | s)`, `ip()`, `prefixLength()`, `masked()`.
/// * URLs: `url(s)`, `isURL(s)`; on a URL `getScheme()`, `getHost()`, `getHostname()`,
///   `getPort()`, `getEscapedPath()`, `getQuery()`.
/// * Format: `format.named(name)` (an optional), `format.dns1123Label()`,
///   `format.dns1123Subdomain()`, `format.dns1035Label()`, `format.qualifiedName()`, their
///   `…Prefix()` variants, `format.labelValue()`, `format.uri()`, `format.uuid()`,
///   `format.byte()`, `format.date()`, `format.datetime()`; on a format `validate(s)` (an
///   optional list of problems).
///
/// cel-go's `ext.Strings`, which upstream also enables, comes from the `cel` crate's strings
/// extension, `string.format(list)` included. The crate's `lists` (`lists.range`, `slice`,
/// `flatten`, `sort`, …) and `math` (`math.greatest`, `math.ceil`, …) extensions are our
/// additions: upstream does not enable cel-go's counterparts.
pub fn environment() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The extensions declare distinct overloads; a failure would mean a name clash inside
        // the `cel` crate itself, in which case the environment simply lacks that extension.
        let _ = env.add_extension(::cel::extensions::strings);
        let _ = env.add_extension(::cel::extensions::lists);
        let _ = env.add_extension(::cel::extensions::math);
        // Same for the Kubernetes libraries: their overloads are distinct from the crate's
        // (the unit tests of each library check that every function is reachable).
        let _ = k8s::register(&mut env);
        let _ = extend_environment(&mut env);
        Arc::new(env)
    })
}

/// Declares on `env` what [`Program::evaluate`] needs besides the expression's own functions:
/// the hidden cost function (see [`Budget`]). The shared [`environment`] has it.
///
/// # Errors
///
/// It is declared already.
pub fn extend_environment(env: &mut Env) -> Result<(), ::cel::DeclarationError> {
    cost::register(env)
}

/// A root context on the shared [`environment`], to which a user adds its variables and
/// functions (build it once and evaluate in inner scopes where that matters).
pub fn context() -> Context<'static, 'static> {
    Context::with_env(Arc::clone(environment()))
}

/// Parses `source` in the shared [`environment`] with the default [`Limits`].
///
/// # Errors
///
/// See [`Program::parse`].
pub fn compile(source: &str) -> Result<Program, CompileError> {
    Program::parse(environment(), source, &Limits::default())
}

/// Bounds on the expressions [`Program::parse`] accepts (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Most code points in an expression (cel-go: 100,000).
    pub code_points: usize,
    /// Deepest nesting of brackets and conditionals (cel-go: 250).
    pub nesting: usize,
    /// Most chained operators on one path of the tree: arithmetic, relations and member
    /// accesses each, and all of them together (cel-go: 250).
    pub recursion: usize,
    /// Deepest syntax tree after macro expansion (ours: 1,000).
    pub depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            code_points: 100_000,
            nesting: 250,
            recursion: 250,
            depth: 1_000,
        }
    }
}

#[cfg(test)]
mod tests;
