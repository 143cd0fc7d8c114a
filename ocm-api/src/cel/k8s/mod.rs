//! Kubernetes' CEL libraries, as upstream enables them for placement CEL selectors and work
//! condition rules (and kube-apiserver for CRD validation rules).
//!
//! Upstream builds its environment on `k8s.io/apiserver`'s libraries (`Lists`, `Regex`, `URLs`,
//! `Quantity`, `IP`, `CIDR`, `Format`, `Semver`); each has a submodule here (`lists`, `regex`,
//! `url`, `quantity`, `net` for IP and CIDR, `format`, `semver`). They are registered as typed
//! overloads on the shared [`Env`](cel::Env), with Kubernetes' names, argument types and
//! error behaviour: a value of the wrong kind or a string that does not parse is an evaluation
//! error (so the expression does not match), never a panic.

pub(crate) mod format;
pub(crate) mod lists;
pub(crate) mod net;
pub(crate) mod quantity;
pub(crate) mod regex;
pub(crate) mod semver;
pub(crate) mod url;

use cel::common::types::{CelBool, CelInt, CelString};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

/// Registers every library of this module on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    semver::register(env)?;
    quantity::register(env)?;
    lists::register(env)?;
    net::register(env)?;
    regex::register(env)?;
    url::register(env)?;
    format::register(env)?;
    Ok(())
}

/// The argument at `index`, or an error naming the function.
pub(crate) fn arg<'a, 'b, 'v>(
    function: &str,
    args: &'a [CowVal<'b, 'v>],
    index: usize,
) -> Result<&'a (dyn Val + 'v), ExecutionError> {
    args.get(index)
        .map(|a| a.as_ref())
        .ok_or_else(|| ExecutionError::function_error(function, "missing argument"))
}

/// The argument at `index` as a value of type `T`.
pub(crate) fn typed<'a, T: cel::common::value::StaticVal + 'static>(
    function: &str,
    args: &'a [CowVal<'_, '_>],
    index: usize,
) -> Result<&'a T, ExecutionError> {
    let value = arg(function, args, index)?;
    value.downcast_ref::<T>().ok_or_else(|| {
        ExecutionError::function_error(
            function,
            format!(
                "no such overload for argument of type {}",
                value.get_type().name()
            ),
        )
    })
}

/// The argument at `index` as a string.
pub(crate) fn string_arg<'a>(
    function: &str,
    args: &'a [CowVal<'_, '_>],
    index: usize,
) -> Result<&'a str, ExecutionError> {
    let value = arg(function, args, index)?;
    value
        .downcast_ref::<CelString<'_>>()
        .map(|s| s.inner())
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("expected a string, got {}", value.get_type().name()),
            )
        })
}

/// The argument at `index` as a bool.
pub(crate) fn bool_arg(
    function: &str,
    args: &[CowVal<'_, '_>],
    index: usize,
) -> Result<bool, ExecutionError> {
    let value = arg(function, args, index)?;
    value
        .downcast_ref::<CelBool>()
        .map(|b| *b.inner())
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("expected a bool, got {}", value.get_type().name()),
            )
        })
}

/// The argument at `index` as an int.
pub(crate) fn int_arg(
    function: &str,
    args: &[CowVal<'_, '_>],
    index: usize,
) -> Result<i64, ExecutionError> {
    let value = arg(function, args, index)?;
    value
        .downcast_ref::<CelInt>()
        .map(|i| *i.inner())
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("expected an int, got {}", value.get_type().name()),
            )
        })
}

/// A result value.
pub(crate) fn owned<'b, 'v>(value: impl Val + 'static) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(CowVal::Owned(Box::new(value)))
}

/// A bool result.
pub(crate) fn boolean<'b, 'v>(b: bool) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(CelBool::from(b))
}

/// An int result.
pub(crate) fn int<'b, 'v>(i: i64) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(CelInt::from(i))
}

/// A string result.
pub(crate) fn string<'b, 'v>(s: String) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(CelString::from(s))
}

/// Implements [`Val`] for an opaque Kubernetes type with value equality.
macro_rules! opaque_val {
    ($ty:ty, $cel_type:expr) => {
        impl cel::common::value::Val for $ty {
            fn get_type(&self) -> &cel::common::types::Type {
                <Self as cel::common::value::Val>::cel_type()
            }

            fn cel_type() -> &'static cel::common::types::Type {
                &$cel_type
            }

            fn equals(&self, other: &dyn cel::common::value::Val) -> bool {
                other.downcast_ref::<$ty>().is_some_and(|o| o == self)
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }

            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }

        impl cel::common::value::StaticVal for $ty {}
    };
}
pub(crate) use opaque_val;

#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use cel::{Context, Value};

    /// Evaluates a constant expression in the shared environment.
    pub(crate) fn eval(source: &str) -> Result<Value, String> {
        let program = super::super::environment()
            .compile(source)
            .map_err(|e| format!("compile: {e}"))?;
        let ctx = Context::with_env(Arc::clone(super::super::environment()));
        program.execute(&ctx).map_err(|e| e.to_string())
    }

    /// Asserts that `source` evaluates to `expected`.
    #[track_caller]
    pub(crate) fn check(source: &str, expected: impl Into<Value>) {
        assert_eq!(eval(source), Ok(expected.into()), "{source}");
    }

    /// Asserts that `source` fails at evaluation with a message containing `needle`.
    #[track_caller]
    pub(crate) fn fails(source: &str, needle: &str) {
        match eval(source) {
            Err(e) => assert!(e.contains(needle), "{source}: {e}"),
            Ok(v) => panic!("{source} gave {v:?}"),
        }
    }
}
