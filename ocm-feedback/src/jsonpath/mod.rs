//! Kubernetes-dialect JSONPath, with kubectl's results.
//!
//! This is the language of `kubectl get -o jsonpath=…` and of OCM feedback paths, as
//! implemented by `k8s.io/client-go/util/jsonpath`; it is not RFC 9535. The differences that
//! matter in practice:
//!
//! * Templates mix text and `{…}` actions: `{.metadata.name}{"\t"}{.status.phase}`, with
//!   `{range …}…{end}` loops.
//! * Dots inside keys must be escaped: `.metadata.labels.app\.kubernetes\.io/name`. A quoted
//!   key `['a.b']` is split at its dots (kubectl prints nothing for it).
//! * An index or slice outside the list is an error, not an empty result; so is indexing or
//!   filtering something that is not a list, and comparing values of different types
//!   (a string with a number, an integer with a float).
//! * Filters support one comparison (`==`, `!=`, `<`, `>`, `<=`, `>=`) or an existence test;
//!   `&&`, `||`, regular expressions and functions are rejected.
//! * Results are printed the Go way: a float `2.0` in the document prints as `2` once it is a
//!   float, `1e21` as `1e+21`, maps and lists as compact JSON with sorted keys.
//!
//! [`Template`] parses once and evaluates many times; [`Template::execute`] renders like
//! kubectl, [`Template::find_results`] returns the values.
//!
//! # Where this differs from kubectl
//!
//! * `*` over a map and `..` visit keys in sorted order; kubectl uses Go's random map order,
//!   so it prints the same values in an order that varies from run to run.
//! * kubectl panics on an index or slice applied inside `range` to a JSON null element; here
//!   that is [`EvalError::NilValue`].
//! * Character classes outside ASCII (letters and digits starting names and numbers, and
//!   which characters error messages quote) approximate Go's Unicode tables.
//! * A `\x` or octal escape in a quoted string that does not form UTF-8 becomes U+FFFD.
//! * Pieces rebuilt by the parser (union members, quoted keys, filter operands) may nest 24
//!   deep and `range` blocks 64 deep; beyond that parsing or evaluation fails.
//! * Numbers are classified from the `serde_json::Value` the caller parsed: integers that fit
//!   in `i64` are Go `int64`s, everything else a `float64`, and `-0` the integer 0, all as Go
//!   decodes JSON. This crate turns on `serde_json`'s `float_roundtrip` feature so that floats
//!   are parsed exactly, as Go parses them.
//!
//! Parse errors keep client-go's wording in [`ParseError::message`] and add the byte position
//! and the offending token. The kubectl differential test (`tests/kubectl_differential.rs`)
//! checks output and error texts against kubectl on a corpus of more than 500 cases.

mod ast;
mod error;
mod eval;
mod matches;
mod parser;
pub(crate) mod render;
mod template;

pub use error::{EvalError, ParseError};
pub use matches::Match;
pub use ocm_api::k8s::gojson::push_value as go_json;
pub use render::go_value;
pub use template::Template;
