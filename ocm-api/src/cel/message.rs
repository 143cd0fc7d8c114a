//! Runtime errors in cel-go's words.
//!
//! The `cel` crate words its runtime errors in its own way (`No such key: missing`,
//! `Division by zero of Int(2)`, `found no matching overload for '_<_' applied to '(int,
//! string)'`). Upstream OCM evaluates with cel-go, and users read its messages in condition
//! messages, so [`EvalError`](crate::error::EvalError) displays every runtime error as cel-go
//! words the same failure:
//!
//! | the `cel` crate | cel-go |
//! |---|---|
//! | `No such key: k` | `no such key: k` |
//! | `Index out of bounds: Int(5)` | `index out of bounds: 5` |
//! | `Division by zero of …` / `Remainder by zero of …` | `division by zero` / `modulus by zero` |
//! | `Overflow from binary operator …` | `integer overflow`, `unsigned integer overflow`, `duration overflow` or `timestamp overflow`, by operand type |
//! | an arithmetic operator, a comparison, `-x` or `size` on a type that has no such operation | `no such overload: _+_` (the operator's function; `size`, `-_`, …) |
//! | the same on a type that has the operation, with an operand of another type | `no such overload` |
//! | `!x`, `x && y`, `x \|\| y`, `x ? a : b` on a value that is not a bool | `no such overload` |
//! | another function given arguments of types it has no overload for | `no such overload: f(int, string)` (the receiver first) |
//! | a list indexed by a value of another type | `unsupported index type 'string' in list`, `unsupported index value 1.5 in list` |
//! | `Error executing function 'f': message` | the function's message alone |
//! | `Undeclared reference to 'f'` | `undeclared reference to 'f' (in container '')` |
//!
//! Where the crate's error does not carry what cel-go's message names, its own message is
//! kept: selecting a field of a value that is not a map (cel-go: `no such key: field`; the
//! crate does not say which field), the messages of failed conversions (cel-go quotes Go's
//! parser, with the input), and a map literal that repeats a key (an error here, the last
//! value in cel-go).

use std::borrow::Cow;

use ::cel::{ExecutionError, Value};

/// `error` as cel-go words the same runtime failure (see the module docs).
pub fn runtime_message(error: &ExecutionError) -> Cow<'_, str> {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}").into(),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", go_value(index)).into()
        }
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(_, lhs, _) => match lhs {
            Value::UInt(_) => "unsigned integer overflow".into(),
            Value::Duration(_) => "duration overflow".into(),
            Value::Timestamp(_) => "timestamp overflow".into(),
            _ => "integer overflow".into(),
        },
        ExecutionError::UnsupportedBinaryOperator(operator, lhs, _) => {
            match operator_function(operator) {
                Some(function) => operator_overload(function, cel_type(lhs)),
                None => NO_SUCH_OVERLOAD.into(),
            }
        }
        ExecutionError::NoSuchOverload(overload) => {
            let types = overload.argument_types();
            match (overload.function(), types) {
                ("_[_]", [target, index]) if target == "list" => {
                    format!("unsupported index type '{}' in list", go_type(index)).into()
                }
                ("!_" | "_&&_" | "_||_" | "_==_" | "_!=_", _) => NO_SUCH_OVERLOAD.into(),
                // Selection of a field of a value that is not a map: the crate does not say
                // which field (cel-go: `no such key: <field>`).
                ("_._" | "_[_]", _) => error.to_string().into(),
                (function, [first, ..]) if trait_of(function).is_some() => {
                    operator_overload(function, first)
                }
                (function, types) => format!(
                    "no such overload: {function}({})",
                    types
                        .iter()
                        .map(|t| go_type(t))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
                .into(),
            }
        }
        ExecutionError::ValuesNotComparable(..) | ExecutionError::UnexpectedType { .. } => {
            NO_SUCH_OVERLOAD.into()
        }
        ExecutionError::UnsupportedIndex(index, Value::List(_)) => match index {
            Value::Float(f) => format!("unsupported index value {} in list", go_float(*f)).into(),
            other => format!("unsupported index type '{}' in list", cel_type(other)).into(),
        },
        ExecutionError::FunctionError { message, .. } => message.as_str().into(),
        ExecutionError::UndeclaredReference(name) => {
            format!("undeclared reference to '{name}' (in container '')").into()
        }
        other => other.to_string().into(),
    }
}

/// cel-go's message when an operation's arguments match none of its overloads.
const NO_SUCH_OVERLOAD: &str = "no such overload";

/// The function of the `cel` crate's name for a binary operator.
fn operator_function(operator: &str) -> Option<&'static str> {
    Some(match operator {
        "add" => "_+_",
        "sub" => "_-_",
        "mul" => "_*_",
        "div" => "_/_",
        "rem" => "_%_",
        _ => return None,
    })
}

/// The types that have the operation behind a function cel-go dispatches on its first
/// argument's type (its "traits"), or `None` for any other function.
fn trait_of(function: &str) -> Option<&'static [&'static str]> {
    const NUMBERS: &[&str] = &["int", "uint", "double"];
    Some(match function {
        "_+_" => &[
            "int",
            "uint",
            "double",
            "string",
            "bytes",
            "list",
            "google.protobuf.Duration",
            "google.protobuf.Timestamp",
        ],
        "_-_" => &[
            "int",
            "uint",
            "double",
            "google.protobuf.Duration",
            "google.protobuf.Timestamp",
        ],
        "_*_" | "_/_" => NUMBERS,
        "_%_" => &["int", "uint"],
        "-_" => &["int", "double"],
        "_<_" | "_<=_" | "_>_" | "_>=_" => &[
            "int",
            "uint",
            "double",
            "string",
            "bytes",
            "bool",
            "google.protobuf.Duration",
            "google.protobuf.Timestamp",
        ],
        "size" => &["string", "bytes", "list", "map"],
        _ => return None,
    })
}

/// cel-go's message for `function` applied to a first argument of type `first` (cel-go's
/// name) with arguments it has no overload for: the bare message when that type has the
/// operation (it refuses the other argument), else the message naming the function.
fn operator_overload(function: &str, first: &str) -> Cow<'static, str> {
    let first = go_type(first);
    match trait_of(function) {
        Some(types) if types.contains(&first.as_ref()) => NO_SUCH_OVERLOAD.into(),
        _ => format!("no such overload: {function}").into(),
    }
}

/// cel-go's name of the type of `value`.
fn cel_type(value: &Value) -> &'static str {
    match value {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Duration(_) => "google.protobuf.Duration",
        Value::Timestamp(_) => "google.protobuf.Timestamp",
        Value::Null => "null_type",
        Value::Function(..) | Value::Opaque(_) | Value::Struct(_) => "dyn",
    }
}

/// cel-go's name of the `cel` crate's type name `name`.
fn go_type(name: &str) -> Cow<'_, str> {
    match name {
        "float" => "double".into(),
        "null" => "null_type".into(),
        "duration" => "google.protobuf.Duration".into(),
        "timestamp" => "google.protobuf.Timestamp".into(),
        other => other.into(),
    }
}

/// `value` as Go's `%v` prints the cel-go value (for numbers, strings and booleans).
fn go_value(value: &Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => go_float(*f),
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// A float as Go's `%v` prints it: the shortest representation, with an exponent from 1e21
/// up and below 1e-4.
fn go_float(f: f64) -> String {
    let magnitude = f.abs();
    if f.is_finite() && magnitude != 0.0 && !(1e-4..1e21).contains(&magnitude) {
        let text = format!("{f:e}");
        // Rust writes `1e30` and `1.5e-7`; Go `1e+30` and `1.5e-07`.
        match text.split_once('e') {
            Some((mantissa, exponent)) => {
                let (sign, digits) = match exponent.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', exponent),
                };
                format!("{mantissa}e{sign}{digits:0>2}")
            }
            None => text,
        }
    } else if f.is_infinite() {
        if f > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else if f.is_nan() {
        "NaN".to_string()
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_does() {
        for (f, go) in [
            (1.5, "1.5"),
            (2.0, "2"),
            (0.0, "0"),
            (-0.25, "-0.25"),
            (1e30, "1e+30"),
            (1.5e-7, "1.5e-07"),
            (123456.0, "123456"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }
}
