//! jq path expressions for `ServerSideApply` `ignoreFields[].jqPathExpressions`.
//!
//! Upstream removes what a jq path expression selects by running `del(<expr>)` with gojq against
//! the manifest, with a one second timeout, and requires the result to be exactly one JSON
//! object. [`delete_paths`] does the same with [jaq](https://github.com/01mf02/jaq), a jq
//! interpreter written in Rust:
//!
//! 1. the expression is parsed on its own, so that text such as `.a), (.b` cannot escape the
//!    `del(…)` it is meant to sit in;
//! 2. `path(<expr>)` is evaluated against the object; every output is one selected path;
//! 3. the selected paths are removed all at once, with jq's `delpaths` rules: removing a whole
//!    entry wins over removing something inside it, array indices and slices refer to the array
//!    as it was before any removal (so `del(.[0], .[1])` removes the first two elements), and
//!    paths through missing keys, `null` or out-of-range indices remove nothing.
//!
//! Deleting `.` itself leaves `null`, which is not an object and so is an error, as upstream.
//!
//! # Builtins
//!
//! The whole jaq standard library is available (`select`, `test`, `startswith`, `to_entries`,
//! `paths`, …), with three changes that keep the agent's process out of reach: `env` yields
//! `{}`, `$ENV` is undefined, and `debug` and `stderr` print nothing. `input`, `inputs` and
//! module imports are not available.
//!
//! # Time and resource limits
//!
//! * **Structure** ([`MAX_STRUCTURE`], 1,000; ours). jaq parses and compiles recursively, so an
//!   expression with more than 1,000 brackets (string interpolations included), keywords and
//!   operators is refused before it is parsed ([`JqError::Parse`], `expression has more than
//!   1000 brackets, keywords and operators`); plain field paths (`.a.b.c`), names and literals
//!   do not count. Ten thousand nested parentheses, pipes, `del(`s or `if`s are thus an error
//!   on any thread, never a stack overflow.
//!
//! jaq evaluates synchronously and has no cancellation of its own, so the evaluation runs on a
//! dedicated thread (1 GiB of stack reserved, touched only as deep as the evaluation goes) and
//! is bounded in four more ways:
//!
//! * **Deadline** ([`TIMEOUT`], one second). jaq clones its evaluation context on practically
//!   every step it takes (each pipe, comma, function call and tail-recursive iteration), and the
//!   context carries this module's guard, whose `Clone` checks the clock. Past the deadline the
//!   guard unwinds the evaluation (with [`std::panic::resume_unwind`], which does not run the
//!   panic hook, so nothing is printed) and [`JqError::Timeout`] is returned. jaq's `range`
//!   loops inside Rust, so it is replaced by a version that steps the guard for every number.
//!   This relies on unwinding: a build with `panic = "abort"` would abort instead.
//! * **Steps** (ours). The same guard counts the steps: at most 2,000,000 divided by the
//!   expression's array and object constructors (at least two), so about a million steps for
//!   most path expressions (`.. | select(…)` over some 25,000 nodes). jaq drops and prints
//!   values recursively, and values only deepen as the evaluation steps, so this keeps every
//!   value it can build within what the thread's stack can drop; runaway programs such as
//!   `def f: f; f`, `repeat(.)` or `last(range(infinite))` usually stop here first
//!   ([`JqError::Execution`], `expression takes more than N steps`). `fromjson` refuses texts
//!   nested more than 10,000 levels deep for the same reason.
//! * **Stack** (32 MiB of the thread's stack for the evaluation itself). The guard measures
//!   how deep the thread's stack is; deep non-tail recursion such as `def f: [f]; f` fails
//!   with [`JqError::Execution`] (`expression recursion is too deep`) instead of overflowing.
//! * **Backstop**. A single builtin operation that runs long inside Rust without stepping the
//!   interpreter (sorting a huge array, say) cannot be interrupted. The caller then still gets
//!   [`JqError::Timeout`] a quarter second after the deadline, and the worker thread is left to
//!   finish that operation in the background (its result is discarded).
//!
//! Not bounded: memory. An expression that builds a huge value in one operation (`"x" * 1e12`)
//! can still exhaust memory, which aborts the process, as it would for any Rust allocation
//! failure.
//!
//! An expression may select at most [`MAX_PATHS`] distinct paths.
//!
//! [`delete_paths`] blocks its caller until the result or the backstop; async callers with
//! many or expensive expressions may prefer `tokio::task::spawn_blocking`.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jaq_core::box_iter::box_once;
use jaq_core::compile::Undefined;
use jaq_core::data::{DataT, HasLut};
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::native::{Fun, v};
use jaq_core::{Compiler, Ctx, Cv, Exn, Native, ValXs, Vars};
use jaq_json::{Num, Val};
use serde_json::Value;

/// How long one expression may run, as upstream's one second.
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// The most distinct paths one expression may select.
pub const MAX_PATHS: usize = 1_000_000;

/// Extra time the caller waits for the worker thread beyond [`TIMEOUT`].
const BACKSTOP_GRACE: Duration = Duration::from_millis(250);

/// Stack size of the worker thread (reserved virtual memory; only used pages are committed).
/// Besides the evaluation's [`EVAL_STACK_LIMIT`], it holds the recursion of dropping (or
/// printing) the deepest value an evaluation can build, [`MAX_VALUE_DEPTH`] levels (about
/// 220 bytes a level in a debug build).
const WORKER_STACK: usize = 1 << 30;

/// How deep a value the step limit lets an evaluation build (see [`step_limit`]).
const MAX_VALUE_DEPTH: u64 = 2_000_000;

/// How deep a JSON text `fromjson` accepts.
const MAX_FROMJSON_DEPTH: usize = 10_000;

/// How much of the worker's stack the evaluation may use; the rest is headroom for unwinding.
const EVAL_STACK_LIMIT: usize = 32 << 20;

/// The most brackets (string interpolations included), keywords and operators one
/// expression may contain; plain field paths, names and literals do not count (see the
/// [module documentation](self)).
pub const MAX_STRUCTURE: usize = 1_000;

/// The guard reads the clock on every this many context clones.
const CLOCK_EVERY: u32 = 256;

/// Longest error message kept from jaq; values in messages can be whole objects.
const MAX_MESSAGE: usize = 256;

/// Why a jq path expression could not be applied.
///
/// The texts follow upstream's; the engine reports them as
/// `JQ expression error in '<expr>': <this error>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JqError {
    /// The expression is not valid jq syntax.
    #[error("failed to parse jq expression: {0}")]
    Parse(String),
    /// The expression parses but names an unknown filter or variable.
    #[error("failed to compile jq expression: {0}")]
    Compile(String),
    /// The evaluation produced no value. `del(…)` always produces one, so [`delete_paths`]
    /// never returns this; it is kept so that callers can match upstream's full set of causes.
    #[error("jq expression did not return any data")]
    NoData,
    /// The evaluation did not finish within [`TIMEOUT`].
    #[error("jq expression execution timed out after 1s")]
    Timeout,
    /// The expression raised an error (a jq `error`, indexing a string, a non-path expression
    /// such as `1`, too deep recursion, too many paths, …).
    #[error("jq expression returned error: {0}")]
    Execution(String),
    /// The evaluation produced more than one value. Like [`JqError::NoData`], never returned
    /// by [`delete_paths`].
    #[error("jq expression returned multiple objects")]
    MultipleObjects,
    /// The result is not a JSON object, e.g. after deleting `.` itself.
    #[error("jq expression result is not a valid object")]
    NotAnObject,
}

/// Removes from `object` everything the jq path expression `expr` selects, as `del(<expr>)`
/// would.
///
/// `expr` is a jq path expression such as `.spec.replicas` or
/// `.spec.template.spec.containers[] | select(.name == "istio-proxy")`. On success `object` is
/// the input less the selected parts; selecting nothing is not an error. On error `object` is
/// left unchanged. See the [module documentation](self) for the exact semantics and limits.
///
/// # Errors
///
/// * [`JqError::Parse`]: `expr` is not valid jq;
/// * [`JqError::Compile`]: it calls an unknown filter or uses an unknown variable;
/// * [`JqError::Execution`]: evaluating it raised an error, for example because it is not a
///   path expression (`1`, `.a | length`) or indexes a string;
/// * [`JqError::Timeout`]: it ran for more than [`TIMEOUT`];
/// * [`JqError::NotAnObject`]: the result is not a JSON object (`expr` is `.`, or `object`
///   was not an object to begin with).
///
/// # Example
///
/// ```
/// use ocm_work::apply::jq::{JqError, delete_paths};
/// use serde_json::json;
///
/// let mut deployment = json!({
///     "spec": {
///         "replicas": 3,
///         "template": {"spec": {"containers": [
///             {"name": "app", "image": "app:v1"},
///             {"name": "istio-proxy", "image": "proxy:v1"},
///         ]}},
///     },
/// });
/// delete_paths(&mut deployment, ".spec.replicas")?;
/// delete_paths(
///     &mut deployment,
///     r#".spec.template.spec.containers[] | select(.name == "istio-proxy")"#,
/// )?;
/// assert_eq!(
///     deployment,
///     json!({"spec": {"template": {"spec": {"containers": [
///         {"name": "app", "image": "app:v1"},
///     ]}}}}),
/// );
///
/// let err = delete_paths(&mut deployment, ".spec[").unwrap_err();
/// assert!(err.to_string().starts_with("failed to parse jq expression: "));
/// assert_eq!(delete_paths(&mut deployment, "."), Err(JqError::NotAnObject));
/// # Ok::<(), JqError>(())
/// ```
pub fn delete_paths(object: &mut Value, expr: &str) -> Result<(), JqError> {
    delete_paths_within(object, expr, TIMEOUT)
}

/// [`delete_paths`] with its time limit as a parameter (tests of what runs within the
/// limits use a long one, so a loaded machine cannot turn them into timeouts).
fn delete_paths_within(object: &mut Value, expr: &str, timeout: Duration) -> Result<(), JqError> {
    let steps = step_limit(check_structure(expr)?);
    let deadline = Instant::now() + timeout;
    let input = object.clone();
    let code = expr.to_owned();
    let (sender, receiver) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("jq-path-expression".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            // The receiver is gone if the caller has given up; nothing to report then.
            let _ = sender.send(worker(input, &code, deadline, steps));
        })
        .map_err(|e| JqError::Execution(format!("cannot start the jq evaluation thread: {e}")))?;
    let wait = deadline.saturating_duration_since(Instant::now()) + BACKSTOP_GRACE;
    match receiver.recv_timeout(wait) {
        Ok(Ok(result)) => {
            *object = result;
            Ok(())
        }
        Ok(Err(e)) => Err(e),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(JqError::Timeout),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(JqError::Execution(
            "the jq evaluation thread ended without a result".into(),
        )),
    }
}

/// Runs on the worker thread: evaluates, then deletes, catching the guard's unwinding and any
/// panic from the interpreter.
fn worker(mut object: Value, expr: &str, deadline: Instant, steps: u64) -> Result<Value, JqError> {
    let budget = Budget {
        deadline,
        stack_base: stack_address(),
        ticks: Cell::new(0),
        steps_left: Cell::new(steps),
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| select_paths(&object, expr, &budget)));
    let paths = match outcome {
        Ok(paths) => paths?,
        Err(payload) => {
            return Err(match payload.downcast_ref::<Abort>() {
                Some(Abort::Timeout) => JqError::Timeout,
                Some(Abort::TooDeep) => {
                    JqError::Execution("expression recursion is too deep".into())
                }
                Some(Abort::Steps) => {
                    JqError::Execution(format!("expression takes more than {steps} steps"))
                }
                None => JqError::Execution("the jq interpreter failed".into()),
            });
        }
    };
    if Instant::now() >= deadline {
        return Err(JqError::Timeout);
    }
    if paths.iter().any(Vec::is_empty) {
        // `del(.)`: the whole input goes, leaving null.
        return Err(JqError::NotAnObject);
    }
    if !object.is_object() {
        return Err(JqError::NotAnObject);
    }
    let paths: Vec<&[Seg]> = paths.iter().map(Vec::as_slice).collect();
    delete_in(&mut object, &paths).map_err(JqError::Execution)?;
    Ok(object)
}

/// Rejects an expression with more than [`MAX_STRUCTURE`] brackets (string interpolations
/// `\(…)` included), keywords and operators, read without recursion (string literals and
/// comments skipped, interpolations inside strings counted).
///
/// jaq parses, compiles and evaluates recursively, about one level per such construct; past a
/// few thousand levels even the worker's 64 MiB stack overflows (measured in a debug build,
/// where 3,000 levels of any one kind still fit). Field accesses (`.a.b.c`), names and literals
/// do not count, so long plain paths are fine. Our limit: upstream (gojq) has none of its own.
///
/// Returns how many `[` and `{` the expression has: each evaluation step can nest a value at
/// most that much deeper (see [`step_limit`]).
fn check_structure(expr: &str) -> Result<u64, JqError> {
    const KEYWORDS: &[&[u8]] = &[
        b"if", b"then", b"elif", b"else", b"try", b"catch", b"reduce", b"foreach", b"def",
        b"label", b"as", b"and", b"or",
    ];
    let bytes = expr.as_bytes();
    let mut count = 0usize;
    let mut constructors = 0u64;
    // Each open interpolation: how many parentheses are open inside it.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        i += 1;
        if in_string {
            match c {
                b'\\' if bytes.get(i) == Some(&b'(') => {
                    i += 1;
                    count += 1;
                    interpolations.push(0);
                    in_string = false;
                }
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'#' => {
                while bytes.get(i).is_some_and(|&b| b != b'\n') {
                    i += 1;
                }
            }
            b'(' => {
                count += 1;
                if let Some(open) = interpolations.last_mut() {
                    *open += 1;
                }
            }
            b')' => match interpolations.last_mut() {
                // The end of an interpolation: back inside its string.
                Some(0) => {
                    interpolations.pop();
                    in_string = true;
                }
                Some(open) => *open -= 1,
                None => {}
            },
            b'[' | b'{' => {
                count += 1;
                constructors += 1;
            }
            b'|' | b',' | b'/' | b'=' | b'+' | b'-' | b'*' | b'%' | b'<' | b'>' | b'!' | b'?'
            | b';' | b':' => count += 1,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'@' => {
                let start = i - 1;
                while bytes
                    .get(i)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b':')
                {
                    i += 1;
                }
                if KEYWORDS.contains(&&bytes[start..i]) {
                    count += 1;
                }
            }
            _ => {}
        }
        if count > MAX_STRUCTURE {
            return Err(JqError::Parse(format!(
                "expression has more than {MAX_STRUCTURE} brackets, keywords and operators"
            )));
        }
    }
    Ok(constructors)
}

/// The most evaluation steps an expression with `constructors` array and object constructors
/// may take (our limit; upstream has only its one second).
///
/// A value jaq builds is dropped (and printed) recursively, so a value nested deeper than the
/// worker's stack can hold would overflow it. Values deepen only as the evaluation steps: by at
/// most the expression's constructors per step, or two (a native such as `to_entries`), so
/// this many steps keep every value within [`MAX_VALUE_DEPTH`] levels. Each step is a clone of
/// the evaluation context (a pipe, a call, an iteration), so the limit is about a million steps
/// for expressions with two constructors or fewer: `.. | select(…)` over some 25,000 nodes.
fn step_limit(constructors: u64) -> u64 {
    MAX_VALUE_DEPTH / constructors.max(2)
}

// ---------------------------------------------------------------------------------------------
// Evaluation guard.

/// Why the guard stopped an evaluation; carried as the unwinding payload.
#[derive(Debug)]
enum Abort {
    Timeout,
    TooDeep,
    Steps,
}

/// Limits of one evaluation, shared by every copy of the guard.
struct Budget {
    deadline: Instant,
    stack_base: usize,
    ticks: Cell<u32>,
    /// Evaluation steps left (see [`step_limit`]).
    steps_left: Cell<u64>,
}

impl Budget {
    /// Called on every evaluation step; unwinds when a limit is exceeded.
    fn tick(&self) {
        if self.stack_base.abs_diff(stack_address()) > EVAL_STACK_LIMIT {
            resume_unwind(Box::new(Abort::TooDeep));
        }
        let left = self.steps_left.get();
        if left == 0 {
            resume_unwind(Box::new(Abort::Steps));
        }
        self.steps_left.set(left - 1);
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        if ticks.is_multiple_of(CLOCK_EVERY) && Instant::now() >= self.deadline {
            resume_unwind(Box::new(Abort::Timeout));
        }
    }
}

/// An address in the current stack frame, to measure how deep the stack is.
#[inline(never)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// jaq data kind whose global data is the [`Guard`].
struct Guarded;

impl DataT for Guarded {
    type V<'a> = Val;
    type Data<'a> = Guard<'a>;
}

/// jaq's global data: the lookup table, plus the budget checked whenever jaq copies it.
struct Guard<'a> {
    lut: &'a jaq_core::Lut<Guarded>,
    budget: &'a Budget,
}

impl Clone for Guard<'_> {
    fn clone(&self) -> Self {
        self.budget.tick();
        Self {
            lut: self.lut,
            budget: self.budget,
        }
    }
}

impl<'a> HasLut<'a, Guarded> for Guard<'a> {
    fn lut(&self) -> &'a jaq_core::Lut<Guarded> {
        self.lut
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing, compiling and running `path(<expr>)`.

/// One step of a selected path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    /// An object key.
    Key(String),
    /// An array index; negative counts from the end.
    Index(i64),
    /// An array slice `[start:end]`; bounds as written (negative counts from the end).
    Slice(Option<i64>, Option<i64>),
}

/// Evaluates `path(<expr>)` against `object` and returns the distinct selected paths.
fn select_paths(object: &Value, expr: &str, budget: &Budget) -> Result<Vec<Vec<Seg>>, JqError> {
    // Parse the expression alone first: it must be one complete jq program, and errors are
    // then reported at offsets within it.
    let arena = Arena::default();
    Loader::new([])
        .load(
            &arena,
            File {
                code: expr,
                path: (),
            },
        )
        .map_err(|errs| JqError::Parse(describe_load_errors(expr, &errs)))?;

    // The newline ends a trailing comment before the closing parenthesis.
    let code = format!("path({expr}\n)");
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let modules = Loader::new(defs)
        .load(
            &arena,
            File {
                code: &code,
                path: (),
            },
        )
        .map_err(|errs| JqError::Parse(describe_load_errors(&code, &errs)))?;
    let filter = Compiler::default()
        .with_funs(builtins())
        .compile(modules)
        .map_err(|errs| {
            let names: Vec<String> = errs
                .iter()
                .flat_map(|(_, undefined)| undefined.iter())
                .map(|(name, kind)| match kind {
                    Undefined::Filter(arity) => format!("undefined filter {name}/{arity}"),
                    other => format!("undefined {} {name}", other.as_str()),
                })
                .collect();
            JqError::Compile(names.join("; "))
        })?;

    let guard = Guard {
        lut: &filter.lut,
        budget,
    };
    let input = to_val(object);
    let mut paths = BTreeSet::new();
    for output in filter
        .id
        .run((Ctx::<Guarded>::new(guard, Vars::new([])), input))
    {
        if Instant::now() >= budget.deadline {
            return Err(JqError::Timeout);
        }
        let path = output.map_err(|exn| match exn.get_err() {
            Ok(err) => JqError::Execution(error_message(err)),
            Err(_) => JqError::Execution("halt is not supported".into()),
        })?;
        let segs = match &path {
            Val::Arr(segs) => segs.iter().map(to_seg).collect::<Result<Vec<_>, _>>(),
            other => Err(format!("invalid path {}", truncate(other.to_string()))),
        }
        .map_err(JqError::Execution)?;
        paths.insert(segs);
        if paths.len() > MAX_PATHS {
            return Err(JqError::Execution(format!(
                "expression selects more than {MAX_PATHS} paths"
            )));
        }
    }
    Ok(paths.into_iter().collect())
}

/// The native filters: jaq's core, standard and JSON libraries, with the filters that would
/// reach outside the evaluation (`env`, `debug`, `stderr`) made inert, and `range` replaced by
/// a version that steps the guard for every number it yields.
fn builtins() -> impl Iterator<Item = Fun<Guarded>> {
    let replacements: [Fun<Guarded>; 5] = [
        (
            "env",
            v(0),
            Native::new(|_| box_once(Ok(Val::obj(Default::default())))),
        ),
        (
            "debug_empty",
            v(0),
            Native::new(|_| Box::new(std::iter::empty())),
        ),
        (
            "stderr_empty",
            v(0),
            Native::new(|_| Box::new(std::iter::empty())),
        ),
        ("range", v(3), Native::new(|cv| guarded_range(cv))),
        ("fromjson", v(0), Native::new(|cv| guarded_fromjson(&cv.1))),
    ];
    jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .filter(|(name, ..)| {
            !["env", "debug_empty", "stderr_empty", "range", "fromjson"].contains(name)
        })
        .chain(replacements)
}

/// `range($from; $upto; $by)`: `$from`, `$from + $by`, … while short of `$upto` (in the
/// direction of `$by`; for a zero step: until equal to `$upto`).
///
/// jaq's own `range` loops inside Rust without stepping the interpreter, so that
/// `last(range(infinite))` could never be interrupted; this one calls [`Budget::tick`] for
/// every value.
fn guarded_range<'a>(mut cv: Cv<'a, Guarded>) -> ValXs<'a, <Guarded as DataT>::V<'a>> {
    use std::cmp::Ordering;
    // Arguments come off the context last first.
    let by = cv.0.pop_var();
    let upto = cv.0.pop_var();
    let from = cv.0.pop_var();
    let budget = cv.0.data().budget;
    let direction = by
        .partial_cmp(&Val::from(0usize))
        .unwrap_or(Ordering::Equal);
    let mut next = Some(Ok(from));
    Box::new(std::iter::from_fn(move || {
        budget.tick();
        let current = match next.take()? {
            Ok(current) => current,
            Err(err) => return Some(Err(err)),
        };
        let more = match direction {
            Ordering::Greater => current < upto,
            Ordering::Less => current > upto,
            Ordering::Equal => current != upto,
        };
        if !more {
            return None;
        }
        next = Some((current.clone() + by.clone()).map_err(Exn::from));
        Some(Ok(current))
    }))
}

/// `fromjson`, refusing texts nested deeper than [`MAX_FROMJSON_DEPTH`] (jaq's parser
/// recurses per level).
fn guarded_fromjson<'a>(input: &Val) -> ValXs<'a, Val> {
    let text = match input.try_as_utf8_bytes_owned() {
        Ok(text) => text,
        Err(e) => return box_once(Err(Exn::from(e))),
    };
    if ocm_api::k8s::json::nesting_depth(&text) > MAX_FROMJSON_DEPTH {
        return box_once(Err(Exn::from(jaq_core::Error::str(format!(
            "cannot parse JSON nested more than {MAX_FROMJSON_DEPTH} levels deep"
        )))));
    }
    let values: Vec<_> = jaq_json::read::parse_many(&text)
        .map(|r| {
            r.map_err(|e| {
                Exn::from(jaq_core::Error::str(format!(
                    "cannot parse {} as JSON: {e}",
                    truncate(input.to_string())
                )))
            })
        })
        .collect();
    Box::new(values.into_iter())
}

/// A readable description of jaq's load (lex, parse or import) errors.
fn describe_load_errors<P>(code: &str, errs: &load::Errors<&str, P>) -> String {
    let at = |found: &str| {
        let offset = load::span(code, found).start;
        if found.is_empty() {
            format!("at end of input (offset {offset})")
        } else {
            let near: String = found.chars().take(20).collect();
            format!("at offset {offset} near {near:?}")
        }
    };
    let mut messages = Vec::new();
    for (_, err) in errs {
        match err {
            load::Error::Io(imports) => {
                for (path, why) in imports {
                    messages.push(format!("cannot import {path:?}: {why}"));
                }
            }
            load::Error::Lex(lexes) => {
                for (expected, found) in lexes {
                    messages.push(match expected {
                        load::lex::Expect::Delim(open) => {
                            format!("expected a delimiter closing {open:?} {}", at(found))
                        }
                        load::lex::Expect::Token => format!("unexpected input {}", at(found)),
                        other => format!("expected {} {}", other.as_str(), at(found)),
                    });
                }
            }
            load::Error::Parse(parses) => {
                for (expected, found) in parses {
                    messages.push(match expected {
                        load::parse::Expect::Nothing => {
                            format!("unexpected input {}", at(found))
                        }
                        other => format!("expected {} {}", other.as_str(), at(found)),
                    });
                }
            }
        }
    }
    if messages.is_empty() {
        messages.push("invalid expression".into());
    }
    messages.join("; ")
}

/// The message of a jq runtime error: a raised string as is, anything else as jaq prints it.
fn error_message(err: jaq_core::Error<Val>) -> String {
    truncate(match err.into_val() {
        Val::TStr(text) => String::from_utf8_lossy(&text).into_owned(),
        other => other.to_string(),
    })
}

/// Longest expression quoted whole in an error message.
const MAX_QUOTED: usize = 1_024;

/// `expr` as error messages quote it: whole, or its first [`MAX_QUOTED`] bytes and `...` when
/// longer (our addition, so that a condition quoting it stays within the API's 32,768 bytes).
pub(crate) fn quoted(expr: &str) -> std::borrow::Cow<'_, str> {
    if expr.len() <= MAX_QUOTED {
        return std::borrow::Cow::Borrowed(expr);
    }
    let mut end = MAX_QUOTED;
    while !expr.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}...", &expr[..end]))
}

/// Cuts `text` to [`MAX_MESSAGE`] bytes (on a character boundary).
fn truncate(mut text: String) -> String {
    if text.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// Converts a JSON value to jaq's value.
fn to_val(value: &Value) -> Val {
    match value {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Val::Num(Num::from_integral(i))
            } else if let Some(u) = n.as_u64() {
                Val::Num(Num::from_integral(u))
            } else {
                Val::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Val::utf8_str(s.clone()),
        Value::Array(items) => items.iter().map(to_val).collect(),
        Value::Object(map) => Val::obj(
            map.iter()
                .map(|(k, v)| (Val::utf8_str(k.clone()), to_val(v)))
                .collect(),
        ),
    }
}

/// Converts one element of a path produced by jq's `path(…)`.
fn to_seg(value: &Val) -> Result<Seg, String> {
    match value {
        Val::TStr(key) => Ok(Seg::Key(String::from_utf8_lossy(key).into_owned())),
        Val::Num(n) => Ok(Seg::Index(num_to_i64(n, f64::floor))),
        Val::Obj(map) => {
            let bound = |name: &str, round: fn(f64) -> f64| match map
                .get(&Val::utf8_str(name.to_owned()))
            {
                None | Some(Val::Null) => Ok(None),
                Some(Val::Num(n)) => Ok(Some(num_to_i64(n, round))),
                Some(other) => Err(format!(
                    "invalid slice bound {name} {}",
                    truncate(other.to_string())
                )),
            };
            Ok(Seg::Slice(
                bound("start", f64::floor)?,
                bound("end", f64::ceil)?,
            ))
        }
        other => Err(format!(
            "invalid path element {}",
            truncate(other.to_string())
        )),
    }
}

/// A jq number as an index; fractions are rounded with `round`, out-of-range values saturate
/// (and then select nothing).
fn num_to_i64(n: &Num, round: fn(f64) -> f64) -> i64 {
    let float = match n {
        Num::Int(i) => return i64::try_from(*i).unwrap_or(i64::MAX),
        Num::BigInt(i) => i.to_string().parse::<f64>().unwrap_or(f64::NAN),
        Num::Float(f) => *f,
        Num::Dec(text) => text.parse::<f64>().unwrap_or(f64::NAN),
    };
    if float.is_nan() {
        // No element has index NaN.
        i64::MAX
    } else {
        // `as` saturates at the i64 bounds.
        round(float) as i64
    }
}

// ---------------------------------------------------------------------------------------------
// Deleting the selected paths.

/// Where a slice `[start:end]` lies in an array of `len` elements.
fn slice_range(start: Option<i64>, end: Option<i64>, len: usize) -> std::ops::Range<usize> {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |bound: i64| {
        let absolute = if bound < 0 {
            bound.saturating_add(len_i)
        } else {
            bound
        };
        usize::try_from(absolute.clamp(0, len_i)).unwrap_or(len)
    };
    let start = start.map_or(0, clamp);
    let end = end.map_or(len, clamp).max(start);
    start..end
}

/// Where index `index` lies in an array of `len` elements, if inside it.
fn array_index(index: i64, len: usize) -> Option<usize> {
    let len_i = i64::try_from(len).ok()?;
    let absolute = if index < 0 {
        index.checked_add(len_i)?
    } else {
        index
    };
    usize::try_from(absolute).ok().filter(|i| *i < len)
}

/// The jq type name of a JSON value, for error messages.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Removes every (non-empty) path in `paths` from `value`, jq's `delpaths` style: all paths
/// refer to `value` as it was before any removal.
fn delete_in(value: &mut Value, paths: &[&[Seg]]) -> Result<(), String> {
    if value.is_null() {
        // Nothing below null to delete.
        return Ok(());
    }
    let mut whole: BTreeSet<&Seg> = BTreeSet::new();
    let mut nested: BTreeMap<&Seg, Vec<&[Seg]>> = BTreeMap::new();
    for path in paths {
        match path.split_first() {
            Some((first, [])) => {
                whole.insert(first);
            }
            Some((first, rest)) => nested.entry(first).or_default().push(rest),
            None => {}
        }
    }
    // Deleting an entry outright makes deletions inside it moot.
    nested.retain(|seg, _| !whole.contains(seg));

    match value {
        Value::Object(map) => {
            for (seg, rest) in &nested {
                let Seg::Key(key) = seg else {
                    return Err(format!("cannot index object with {}", describe_seg(seg)));
                };
                if let Some(child) = map.get_mut(key) {
                    delete_in(child, rest)?;
                }
            }
            for seg in whole {
                let Seg::Key(key) = seg else {
                    return Err(format!("cannot delete {} of object", describe_seg(seg)));
                };
                map.remove(key);
            }
            Ok(())
        }
        Value::Array(items) => {
            // Inside single elements first (array positions stay put), then inside slices,
            // from the last slice backwards, then whole elements.
            let mut slices = Vec::new();
            for (seg, rest) in &nested {
                match seg {
                    Seg::Index(index) => {
                        if let Some(i) = array_index(*index, items.len()) {
                            delete_in(&mut items[i], rest)?;
                        }
                    }
                    Seg::Slice(start, end) => {
                        slices.push((slice_range(*start, *end, items.len()), rest));
                    }
                    Seg::Key(key) => {
                        return Err(format!("cannot index array with {key:?}"));
                    }
                }
            }
            slices.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
            for (range, rest) in slices {
                let range = range.start.min(items.len())..range.end.min(items.len());
                let mut part = Value::Array(items[range.clone()].to_vec());
                delete_in(&mut part, rest)?;
                if let Value::Array(part) = part {
                    items.splice(range, part);
                }
            }
            let mut doomed = BTreeSet::new();
            for seg in whole {
                match seg {
                    Seg::Index(index) => doomed.extend(array_index(*index, items.len())),
                    Seg::Slice(start, end) => doomed.extend(slice_range(*start, *end, items.len())),
                    Seg::Key(key) => return Err(format!("cannot delete field {key:?} of array")),
                }
            }
            let mut position = 0;
            items.retain(|_| {
                let keep = !doomed.contains(&position);
                position += 1;
                keep
            });
            Ok(())
        }
        other => Err(format!("cannot delete fields of {}", type_name(other))),
    }
}

/// A path step for error messages.
fn describe_seg(seg: &Seg) -> String {
    match seg {
        Seg::Key(key) => format!("field {key:?}"),
        Seg::Index(index) => format!("index {index}"),
        Seg::Slice(start, end) => {
            let bound = |b: &Option<i64>| b.map(|b| b.to_string()).unwrap_or_default();
            format!("slice [{}:{}]", bound(start), bound(end))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 3,
                "template": {"spec": {"containers": [
                    {
                        "name": "app",
                        "image": "app:v1",
                        "env": [
                            {"name": "JAVA_OPTS", "value": "-Xmx1g"},
                            {"name": "LOG_LEVEL", "value": "info"},
                        ],
                    },
                    {"name": "istio-proxy", "image": "proxy:v1", "env": []},
                    {
                        "name": "sidecar",
                        "image": "sidecar:v1",
                        "env": [{"name": "JAVA_OPTS", "value": "-Xmx64m"}],
                    },
                ]}},
            },
        })
    }

    /// Applies `expr` to `input` and returns the result.
    fn del(input: Value, expr: &str) -> Result<Value, JqError> {
        let mut object = input;
        delete_paths(&mut object, expr).map(|()| object)
    }

    #[test]
    fn deletes_a_field() {
        let out = del(deployment(), ".spec.replicas").unwrap();
        let mut expected = deployment();
        expected["spec"].as_object_mut().unwrap().remove("replicas");
        assert_eq!(out, expected);
    }

    #[test]
    fn deleting_a_missing_field_changes_nothing() {
        assert_eq!(del(deployment(), ".spec.paused").unwrap(), deployment());
        assert_eq!(
            del(deployment(), ".status.conditions[0].reason").unwrap(),
            deployment()
        );
        assert_eq!(
            del(deployment(), ".spec.template.spec.containers[7]").unwrap(),
            deployment()
        );
    }

    #[test]
    fn deletes_selected_containers() {
        let out = del(
            deployment(),
            r#".spec.template.spec.containers[] | select(.name == "istio-proxy")"#,
        )
        .unwrap();
        let names: Vec<_> = out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["app", "sidecar"]);
    }

    #[test]
    fn deletes_selected_env_entries_in_every_container() {
        let out = del(
            deployment(),
            r#".spec.template.spec.containers[].env[] | select(.name == "JAVA_OPTS")"#,
        )
        .unwrap();
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            containers[0]["env"],
            json!([{"name": "LOG_LEVEL", "value": "info"}])
        );
        assert_eq!(containers[2]["env"], json!([]));
        assert_eq!(
            containers[1],
            deployment()["spec"]["template"]["spec"]["containers"][1]
        );
    }

    #[test]
    fn iterating_a_missing_list_fails_unless_optional() {
        let input = json!({"spec": {"containers": [
            {"name": "a", "env": [{"name": "JAVA_OPTS"}, {"name": "X"}]},
            {"name": "b"},
        ]}});
        // As in jq, `.env[]` on a container without `env` iterates over null: an error.
        let strict = r#".spec.containers[].env[] | select(.name == "JAVA_OPTS")"#;
        assert!(matches!(
            del(input.clone(), strict),
            Err(JqError::Execution(_))
        ));
        let optional = r#".spec.containers[].env[]? | select(.name == "JAVA_OPTS")"#;
        assert_eq!(
            del(input, optional).unwrap(),
            json!({"spec": {"containers": [
                {"name": "a", "env": [{"name": "X"}]},
                {"name": "b"},
            ]}})
        );
    }

    #[test]
    fn deletes_a_field_of_selected_elements() {
        let out = del(
            deployment(),
            r#".spec.template.spec.containers[] | select(.name == "app") | .image"#,
        )
        .unwrap();
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers[0].get("image"), None);
        assert_eq!(containers[1]["image"], "proxy:v1");
    }

    #[test]
    fn combined_expressions() {
        let out = del(
            deployment(),
            r#".spec.replicas, .metadata.namespace, (.spec.template.spec.containers[] | select(.name | startswith("istio")))"#,
        )
        .unwrap();
        assert_eq!(out["spec"].get("replicas"), None);
        assert_eq!(out["metadata"], json!({"name": "web"}));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn regex_and_local_definitions_work() {
        let out = del(
            deployment(),
            r#"def containers: .spec.template.spec.containers[]; containers | select(.image | test("^(proxy|sidecar):"))"#,
        )
        .unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([deployment()["spec"]["template"]["spec"]["containers"][0]])
        );
    }

    #[test]
    fn array_positions_refer_to_the_original_array() {
        let input = json!({"a": [0, 1, 2, 3, 4, 5]});
        assert_eq!(
            del(input.clone(), ".a[0], .a[1]").unwrap(),
            json!({"a": [2, 3, 4, 5]})
        );
        assert_eq!(
            del(input.clone(), ".a[-1], .a[0]").unwrap(),
            json!({"a": [1, 2, 3, 4]})
        );
        assert_eq!(
            del(input.clone(), ".a[1:3]").unwrap(),
            json!({"a": [0, 3, 4, 5]})
        );
        assert_eq!(
            del(input.clone(), ".a[4:], .a[0]").unwrap(),
            json!({"a": [1, 2, 3]})
        );
        assert_eq!(
            del(input, ".a[] | select(. % 2 == 0)").unwrap(),
            json!({"a": [1, 3, 5]})
        );
        let nested = json!({"a": [{"x": 1, "y": 2}, {"x": 3}, {"x": 4}]});
        assert_eq!(
            del(nested, ".a[1:][0].x, .a[0]").unwrap(),
            json!({"a": [{}, {"x": 4}]})
        );
    }

    #[test]
    fn deleting_an_entry_and_something_inside_it() {
        let input = json!({"a": {"b": {"c": 1}}, "d": 2});
        assert_eq!(del(input, ".a.b.c, .a, .a.b").unwrap(), json!({"d": 2}));
    }

    #[test]
    fn selecting_nothing_keeps_the_object() {
        assert_eq!(del(deployment(), "empty").unwrap(), deployment());
        assert_eq!(
            del(
                deployment(),
                r#".spec.template.spec.containers[] | select(.name == "none")"#
            )
            .unwrap(),
            deployment()
        );
    }

    #[test]
    fn recursive_descent() {
        let input = json!({"a": {"secret": 1, "b": [{"secret": 2, "keep": 3}]}, "secret": 4});
        assert_eq!(
            del(input, r#".. | objects | select(has("secret")) | .secret"#).unwrap(),
            json!({"a": {"b": [{"keep": 3}]}})
        );
    }

    #[test]
    fn invalid_syntax_is_a_parse_error() {
        for expr in [
            ".spec[",
            ".spec.replicas)",
            "(.a",
            ".a |",
            "",
            ".a), (.b",
            "\"abc",
        ] {
            let err = del(deployment(), expr).unwrap_err();
            assert!(matches!(err, JqError::Parse(_)), "{expr:?}: {err:?}");
            assert!(
                err.to_string()
                    .starts_with("failed to parse jq expression: "),
                "{err}"
            );
        }
    }

    #[test]
    fn unknown_names_are_compile_errors() {
        let err = del(deployment(), ".spec | nosuchfilter").unwrap_err();
        assert_eq!(
            err.to_string(),
            "failed to compile jq expression: undefined filter nosuchfilter/0"
        );
        let err = del(deployment(), "$ENV.HOME").unwrap_err();
        assert_eq!(
            err.to_string(),
            "failed to compile jq expression: undefined variable $ENV"
        );
    }

    #[test]
    fn a_trailing_comment_is_fine() {
        let out = del(deployment(), ".spec.replicas # the HPA owns this").unwrap();
        assert_eq!(out["spec"].get("replicas"), None);
    }

    #[test]
    fn deleting_the_whole_object_is_not_an_object() {
        let err = del(deployment(), ".").unwrap_err();
        assert_eq!(err, JqError::NotAnObject);
        assert_eq!(
            err.to_string(),
            "jq expression result is not a valid object"
        );
        assert_eq!(del(json!([1, 2]), ".[0]"), Err(JqError::NotAnObject));
    }

    #[test]
    fn runtime_errors_are_reported() {
        let err = del(deployment(), ".kind.foo").unwrap_err();
        assert!(matches!(err, JqError::Execution(_)), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("jq expression returned error: ")
        );

        // Not a path expression.
        let err = del(deployment(), "1").unwrap_err();
        assert!(matches!(err, JqError::Execution(_)), "{err:?}");
        assert!(err.to_string().len() < 400, "{err}");

        let err = del(deployment(), r#"error("custom failure")"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "jq expression returned error: custom failure"
        );

        let err = del(deployment(), "halt").unwrap_err();
        assert!(matches!(err, JqError::Execution(_)), "{err:?}");
    }

    #[test]
    fn the_object_is_unchanged_after_an_error() {
        let mut object = deployment();
        assert!(delete_paths(&mut object, ".spec.replicas, .kind.foo").is_err());
        assert_eq!(object, deployment());
    }

    #[test]
    fn process_access_is_inert() {
        // `env` is empty, so nothing is selected; `debug`/`stderr` print nothing.
        assert_eq!(
            del(deployment(), ".spec[env | keys[]]").unwrap(),
            deployment()
        );
        let out = del(deployment(), ".spec.replicas | debug | stderr").unwrap();
        assert_eq!(out["spec"].get("replicas"), None);
    }

    /// Expressions that would run forever without the guard.
    const RUNAWAY: [&str; 5] = [
        "def f: f; f",
        "last(repeat(.))",
        "def f: .a, f; f",
        ".spec | select(last(range(infinite)) > 0)",
        ".spec | select([range(1e12)] | length > 0)",
    ];

    #[test]
    fn runaway_expressions_stop() {
        // In parallel, so that the test takes about one second at most. Whichever comes
        // first stops them: the step limit (about a million steps here) or the deadline.
        let runs: Vec<_> = RUNAWAY
            .iter()
            .map(|expr| {
                std::thread::spawn(move || {
                    let started = Instant::now();
                    (expr, del(deployment(), expr), started.elapsed())
                })
            })
            .collect();
        let steps = JqError::Execution(format!(
            "expression takes more than {} steps",
            step_limit(0)
        ));
        for run in runs {
            let (expr, result, took) = run.join().unwrap();
            let err = result.unwrap_err();
            assert!(err == JqError::Timeout || err == steps, "{expr}: {err}");
            // The backstop bounds it anyway; generous for loaded machines.
            assert!(took < 3 * TIMEOUT, "{expr}: {took:?}");
        }
        assert_eq!(
            JqError::Timeout.to_string(),
            "jq expression execution timed out after 1s"
        );
    }

    #[test]
    fn values_cannot_grow_deeper_than_the_worker_can_drop() {
        // Each would build a value millions of levels deep (dropping it recursively would
        // overflow any stack): the step limit, scaled by the constructors, stops them first.
        for expr in [
            "(.a | reduce range(100000000) as $x (.; [.]) | length) as $y | .a",
            "(.a | reduce range(100000000) as $x (.; [[[[[[[[[[.]]]]]]]]]]) | tojson | length) as $y | .a",
            "(.a | {x: .} | reduce range(100000000) as $x (.; to_entries) | length) as $y | .a",
            "(.a | [limit(100000000; repeat([.]))] | length) as $y | .a",
        ] {
            let err = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || del(json!({"a": 1}), expr))
                .expect("thread")
                .join()
                .expect("no crash")
                .unwrap_err();
            assert!(
                matches!(&err, JqError::Execution(m) if m.starts_with("expression takes more than"))
                    || err == JqError::Timeout,
                "{expr}: {err}"
            );
        }
        // `fromjson` refuses texts nested deeper than it can parse.
        let err = del(
            json!({"a": 1}),
            r#"(.a | ("[" * 100000) | fromjson) as $x | .a"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            JqError::Execution("cannot parse JSON nested more than 10000 levels deep".into())
        );
        assert_eq!(
            del(
                json!({"a": 1, "b": 2}),
                r#"select("[[1]]" | fromjson | .[0][0] == 1) | .a"#
            ),
            Ok(json!({"b": 2}))
        );
    }

    #[test]
    fn the_guard_stops_the_evaluation_itself() {
        // Not just the caller's backstop: the worker returns on its own past its deadline.
        let runs: Vec<_> = RUNAWAY
            .iter()
            .map(|expr| {
                let (sender, receiver) = mpsc::channel();
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn(move || {
                        let deadline = Instant::now() + Duration::from_millis(100);
                        let _ = sender.send(worker(deployment(), expr, deadline, u64::MAX));
                    })
                    .unwrap();
                (expr, receiver)
            })
            .collect();
        for (expr, receiver) in runs {
            let result = receiver
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("{expr}: the evaluation did not stop"));
            assert_eq!(result, Err(JqError::Timeout), "{expr}");
        }
    }

    #[test]
    fn deep_recursion_is_an_error_not_a_crash() {
        let err = del(deployment(), "def f: [f]; .spec | select(f | length > 0)").unwrap_err();
        assert_eq!(
            err,
            JqError::Execution("expression recursion is too deep".into())
        );
    }

    #[test]
    fn numbers_survive_the_round_trip() {
        let input = json!({
            "big": u64::MAX,
            "neg": i64::MIN,
            "float": 1.5,
            "drop": true,
        });
        let out = del(input, ".drop").unwrap();
        assert_eq!(out, json!({"big": u64::MAX, "neg": i64::MIN, "float": 1.5}));
    }

    /// Ten thousand levels of every construct that nests, each an error on a thread with a
    /// tokio worker's stack, never a crash.
    #[test]
    fn deep_expressions_are_errors_not_crashes() {
        let n = 10_000;
        let cases = [
            format!("{}.a{}", "(".repeat(n), ")".repeat(n)),
            format!(".a | {}.{} | empty", "[".repeat(n), "]".repeat(n)),
            format!(".a | {}1{} | empty", "{a:".repeat(n), "}".repeat(n)),
            format!(".a{}", " | .".repeat(n)),
            format!("{}.a{}", "del(".repeat(n), ")".repeat(n)),
            format!("{}.a{}", "if true then ".repeat(n), " else . end".repeat(n)),
            format!("{}.a", "try ".repeat(n)),
            format!(".a | {}1 | empty", "-".repeat(n)),
            format!(".a | 1{} | empty", " + 1".repeat(n)),
            format!(".a{}", " // .a".repeat(n)),
            format!(".a{}", ", .a".repeat(n)),
            format!("{}.a", ". as $x | ".repeat(n)),
            format!("{}.a{}", "def f: ".repeat(n), ";".repeat(n)),
            format!(".a | \"{}x{}\" | empty", "\\(\"".repeat(n), "\")".repeat(n)),
            format!("{}.a{}", "reduce . as $x (.; ".repeat(n), ")".repeat(n)),
            format!("{}.a", "label $f | ".repeat(n)),
            format!(".a | select(true{})", " and true".repeat(n)),
            format!("{}.a", "(".repeat(n)),
            format!(".a{}", "[.a".repeat(n)),
        ];
        for expr in cases {
            let head: String = expr.chars().take(30).collect();
            let result = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || del(json!({"a": 1}), &expr))
                .expect("thread")
                .join()
                .expect("no crash");
            assert_eq!(
                result,
                Err(JqError::Parse(
                    "expression has more than 1000 brackets, keywords and operators".into()
                )),
                "{head}"
            );
        }
        // Within the limit, deep expressions run (on the worker's stack). The time limit is
        // lifted: what is checked here is depth, and a debug build on a busy machine can take
        // more than a second for these.
        let n = 300;
        for expr in [
            format!("{}.a{}", "(".repeat(n), ")".repeat(n)),
            format!(".a{}", " | .".repeat(n)),
            format!("{}.a", "try ".repeat(n)),
            format!(".c{}", "[0]".repeat(500)),
            format!("{}.d", ".c".repeat(10_000)),
        ] {
            let head: String = expr.chars().take(30).collect();
            let mut object = json!({"a": 1, "b": 2});
            let result = delete_paths_within(&mut object, &expr, Duration::from_secs(60));
            assert!(result.is_ok(), "{head}: {result:?}");
        }
        // Literals and comments do not count.
        let quoted = format!(
            "(.a | select(. != \"{}\")) # {}",
            "(".repeat(5_000),
            "[".repeat(5_000)
        );
        assert_eq!(del(json!({"a": 1}), &quoted), Ok(json!({})));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// Any soup of jq tokens, repeated to deep nesting, is a result or an error: never a
        /// panic or a stack overflow.
        #[test]
        fn token_soups_never_crash(
            tokens in proptest::collection::vec(proptest::sample::select(vec![
                "(", ")", "[", "]", "{", "}", "|", ",", "//", "=", "+", "-", "?", ".", "..",
                ".a", "$x", "as", "if", "then", "else", "end", "try", "reduce", "def f:", ";",
                "\"", "\\(", "#", "\n", "1", "del(", "select(", "@base64",
            ]), 0..16),
            repeat in 1usize..80,
        ) {
            let expr = tokens.concat().repeat(repeat);
            let _ = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || del(json!({"a": 1}), &expr))
                .expect("thread")
                .join()
                .expect("no crash");
        }
    }

    #[test]
    fn long_expressions_are_quoted_short() {
        assert_eq!(quoted(".a"), ".a");
        let long = format!(".a{}", "é".repeat(1_000));
        let q = quoted(&long);
        assert!(
            q.len() <= MAX_QUOTED + 3 && q.ends_with("...") && long.starts_with(&q[..q.len() - 3])
        );
    }

    #[test]
    fn error_texts_match_upstream() {
        assert_eq!(
            JqError::Parse("x".into()).to_string(),
            "failed to parse jq expression: x"
        );
        assert_eq!(
            JqError::Compile("x".into()).to_string(),
            "failed to compile jq expression: x"
        );
        assert_eq!(
            JqError::NoData.to_string(),
            "jq expression did not return any data"
        );
        assert_eq!(
            JqError::Execution("x".into()).to_string(),
            "jq expression returned error: x"
        );
        assert_eq!(
            JqError::MultipleObjects.to_string(),
            "jq expression returned multiple objects"
        );
    }
}
