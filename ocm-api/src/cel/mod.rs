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
//! A rejected expression is a [`CompileError`] that displays in cel-go's format.
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

mod program;
mod scan;

pub use self::program::Program;
pub use crate::error::{CelIssue, CompileError};

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
