//! Kubernetes' `Lists` library, members of a list: `isSorted()`, `sum()`, `min()`, `max()`,
//! `indexOf(x)`, `lastIndexOf(x)`.
//!
//! `isSorted`, `min` and `max` need comparable elements, `sum` addable ones (an element that is
//! not is an evaluation error). `min`/`max` of an empty list is the error `min called on empty
//! list`. `sum` of an empty list is the int `0` (Kubernetes knows the element type from type
//! checking and gives that type's zero; a list without elements carries no type here).
//! `indexOf`/`lastIndexOf` give `-1` when the element is absent.

use std::cmp::Ordering;

use cel::common::types::{CelInt, CelList, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

use super::{arg, boolean, int};

fn items<'a, 'v>(
    function: &str,
    args: &'a [CowVal<'_, 'v>],
) -> Result<&'a [Box<dyn Val + 'v>], ExecutionError> {
    let value = arg(function, args, 0)?;
    value
        .downcast_ref::<CelList<'_>>()
        .map(|l| l.inner())
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("expected a list, got {}", value.get_type().name()),
            )
        })
}

fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("values of type {} are not comparable", a.get_type().name()),
            )
        })?
        .compare(b)
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = items("isSorted", &args)?;
    for pair in list.windows(2) {
        if let [a, b] = pair
            && compare("isSorted", a.as_ref(), b.as_ref())? == Ordering::Greater
        {
            return boolean(false);
        }
    }
    // A single element must still be comparable.
    if let Some(only) = list.first()
        && only.as_comparer().is_none()
    {
        return Err(ExecutionError::function_error(
            "isSorted",
            format!(
                "values of type {} are not comparable",
                only.get_type().name()
            ),
        ));
    }
    boolean(true)
}

fn extreme<'b, 'v>(
    function: &str,
    args: &[CowVal<'b, 'v>],
    replace_when: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = items(function, args)?;
    let mut best: Option<&(dyn Val + 'v)> = None;
    for item in list {
        let item = item.as_ref();
        best = Some(match best {
            None => {
                if item.as_comparer().is_none() {
                    return Err(ExecutionError::function_error(
                        function,
                        format!(
                            "values of type {} are not comparable",
                            item.get_type().name()
                        ),
                    ));
                }
                item
            }
            Some(current) => {
                if compare(function, current, item)? == replace_when {
                    item
                } else {
                    current
                }
            }
        });
    }
    best.map(|v| CowVal::Owned(v.clone_as_boxed()))
        .ok_or_else(|| {
            ExecutionError::function_error(function, format!("{function} called on empty list"))
        })
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("min", &args, Ordering::Greater)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("max", &args, Ordering::Less)
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = items("sum", &args)?;
    let Some((first, rest)) = list.split_first() else {
        return Ok(CowVal::Owned(Box::new(CelInt::from(0))));
    };
    let mut total: Box<dyn Val + 'v> = first.clone_as_boxed();
    for item in rest {
        let next = total
            .as_adder()
            .ok_or_else(|| {
                ExecutionError::function_error(
                    "sum",
                    format!("values of type {} cannot be added", total.get_type().name()),
                )
            })?
            .add(item.as_ref())?
            .into_owned();
        total = next;
    }
    if total.as_adder().is_none() {
        return Err(ExecutionError::function_error(
            "sum",
            format!("values of type {} cannot be added", total.get_type().name()),
        ));
    }
    Ok(CowVal::Owned(total))
}

fn position<'b, 'v>(
    function: &str,
    args: &[CowVal<'b, 'v>],
    from_end: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = items(function, args)?;
    let needle = arg(function, args, 1)?;
    let found = if from_end {
        list.iter().rposition(|x| x.equals(needle))
    } else {
        list.iter().position(|x| x.equals(needle))
    };
    int(found.and_then(|i| i64::try_from(i).ok()).unwrap_or(-1))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("indexOf", &args, false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("lastIndexOf", &args, true)
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, fails};

    #[test]
    fn sorted_sum_min_max() {
        check("[1, 2, 3].isSorted()", true);
        check("[1, 3, 2].isSorted()", false);
        check("['a', 'b', 'b'].isSorted()", true);
        check("[].isSorted()", true);
        check("[1, 2, 3].sum()", 6);
        check("[1.5, 2.0].sum()", 3.5);
        check("[].sum()", 0);
        check("[3, 1, 2].min()", 1);
        check("[3, 1, 2].max()", 3);
        check("['b', 'c', 'a'].max()", "c");
    }

    #[test]
    fn positions() {
        check("[1, 2, 2, 3].indexOf(2)", 1);
        check("[1, 2, 2, 3].lastIndexOf(2)", 2);
        check("[1, 2].indexOf(4)", -1);
        check("['a'].lastIndexOf('b')", -1);
        // The strings extension's `indexOf` still works on strings.
        check("'abc'.indexOf('c')", 2);
    }

    #[test]
    fn bad_input() {
        fails("[].min()", "min called on empty list");
        fails("[].max()", "max called on empty list");
        fails("[{'a': 1}, {'b': 2}].min()", "not comparable");
        fails("[1, 'a'].isSorted()", "");
        fails("[{'a': 1}].sum()", "cannot be added");
        fails("[1, 'a'].sum()", "");
    }
}
