//! Kubernetes' `Regex` library, members of a string: `find(re)` (the first match, or `""`),
//! `findAll(re)` and `findAll(re, n)` (at most `n` matches; `n < 0` means all, `0` none).
//!
//! Patterns use the `regex` crate's syntax, which matches the RE2 syntax Kubernetes uses for
//! the constructs found in practice. A pattern that does not compile is the evaluation error
//! `Illegal regex: …`. Compiled patterns are kept in a small cache, since an expression is
//! evaluated once per cluster with the same pattern.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::types::{CelList, CelString, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

use super::{int_arg, owned, string, string_arg};

/// How many compiled patterns the cache keeps before starting over.
const CACHE_LIMIT: usize = 64;

fn compiled(function: &str, pattern: &str) -> Result<Arc<regex::Regex>, ExecutionError> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(re) = cache.get(pattern) {
        return Ok(Arc::clone(re));
    }
    let re = regex::Regex::new(pattern)
        .map(Arc::new)
        .map_err(|e| ExecutionError::function_error(function, format!("Illegal regex: {e}")))?;
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(pattern.to_string(), Arc::clone(&re));
    Ok(re)
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let text = string_arg("find", &args, 0)?;
    let re = compiled("find", string_arg("find", &args, 1)?)?;
    string(
        re.find(text)
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
    )
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let f = "findAll";
    let text = string_arg(f, &args, 0)?;
    let re = compiled(f, string_arg(f, &args, 1)?)?;
    let limit = if args.len() > 2 {
        int_arg(f, &args, 2)?
    } else {
        -1
    };
    let matches = re
        .find_iter(text)
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>);
    let items: Vec<Box<dyn Val>> = match usize::try_from(limit) {
        Ok(n) => matches.take(n).collect(),
        Err(_) => matches.collect(),
    };
    owned(CelList::from(items))
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    env.add_member_overload(
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use cel::Value;

    use super::super::test_support::{check, eval, fails};

    fn strings(items: &[&str]) -> Value {
        Value::List(std::sync::Arc::new(
            items.iter().map(|s| Value::from(s.to_string())).collect(),
        ))
    }

    #[test]
    fn find_and_find_all() {
        check("'abc 123'.find('[0-9]+')", "123");
        check("'abc'.find('[0-9]+')", "");
        assert_eq!(
            eval("'123 abc 456'.findAll('[0-9]+')"),
            Ok(strings(&["123", "456"]))
        );
        assert_eq!(
            eval("'123 abc 456'.findAll('[0-9]+', 1)"),
            Ok(strings(&["123"]))
        );
        assert_eq!(eval("'123 abc 456'.findAll('[0-9]+', 0)"), Ok(strings(&[])));
        assert_eq!(
            eval("'123 abc 456'.findAll('[0-9]+', -1)"),
            Ok(strings(&["123", "456"]))
        );
        check("'v1.30.2'.find('[0-9]+\\\\.[0-9]+') == '1.30'", true);
    }

    #[test]
    fn bad_input() {
        fails("'abc'.find('[')", "Illegal regex");
        fails("'abc'.findAll('(', 2)", "Illegal regex");
        fails("'abc'.find(1)", "");
        fails("'abc'.findAll('a', 'b')", "");
    }
}
