//! Kubernetes' `Semver` library: `semver(s)`, `semver(s, normalize)`, `isSemver(s)`,
//! `isSemver(s, normalize)`, and on a semver `major()`, `minor()`, `patch()`,
//! `isGreaterThan(v)`, `isLessThan(v)`, `compareTo(v)`.
//!
//! Parsing follows Semantic Versioning 2.0 strictly (as the Go library Kubernetes uses does):
//! exactly `MAJOR.MINOR.PATCH`, no leading zeros in numeric parts, optional `-prerelease` and
//! `+build` of dot-separated `[0-9A-Za-z-]` identifiers. With `normalize = true` a leading `v`
//! is dropped, leading zeros are removed, and a missing minor or patch becomes `0` (a
//! shortened version may not carry prerelease or build data). Ordering ignores build data.

use std::cmp::Ordering;

use cel::common::types::{BOOL_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{Env, ExecutionError};

use super::{bool_arg, boolean, int, opaque_val, owned, string_arg, typed};

/// The CEL type of semantic versions.
pub(crate) static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");

/// One prerelease identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PreId {
    Numeric(u64),
    Alpha(String),
}

impl PreId {
    fn cmp(&self, other: &PreId) -> Ordering {
        match (self, other) {
            (PreId::Numeric(a), PreId::Numeric(b)) => a.cmp(b),
            (PreId::Numeric(_), PreId::Alpha(_)) => Ordering::Less,
            (PreId::Alpha(_), PreId::Numeric(_)) => Ordering::Greater,
            (PreId::Alpha(a), PreId::Alpha(b)) => a.cmp(b),
        }
    }
}

/// A semantic version.
#[derive(Debug, Clone)]
pub(crate) struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreId>,
}

impl PartialEq for Semver {
    /// Versions are equal when they order equal (build data does not count), as in Kubernetes.
    fn eq(&self, other: &Self) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

opaque_val!(Semver, SEMVER_TYPE);

impl Semver {
    /// Semantic-versioning precedence.
    pub(crate) fn compare(&self, other: &Semver) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let o = a.cmp(b);
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }

    /// Parses a version strictly.
    pub(crate) fn parse(s: &str) -> Result<Semver, String> {
        if s.is_empty() {
            return Err("Version string empty".into());
        }
        let mut parts = s.splitn(3, '.');
        let (Some(major), Some(minor), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err("No Major.Minor.Patch elements found".into());
        };
        let major = number(major, "major")?;
        let minor = number(minor, "minor")?;
        let patch_end = rest.find(['+', '-']).unwrap_or(rest.len());
        let patch = number(&rest[..patch_end], "patch")?;
        let mut tail = &rest[patch_end..];
        let mut pre = Vec::new();
        if let Some(p) = tail.strip_prefix('-') {
            let end = p.find('+').unwrap_or(p.len());
            for id in p[..end].split('.') {
                pre.push(prerelease(id)?);
            }
            tail = &p[end..];
        }
        // Build data is validated but plays no part in ordering or equality.
        if let Some(b) = tail.strip_prefix('+') {
            for id in b.split('.') {
                if id.is_empty() {
                    return Err("Build meta data is empty".into());
                }
                if !alphanumeric(id) {
                    return Err(format!(
                        "Invalid character(s) found in build meta data {id:?}"
                    ));
                }
            }
        }
        Ok(Semver {
            major,
            minor,
            patch,
            pre,
        })
    }

    /// Parses a version after normalizing it (see the module documentation).
    pub(crate) fn parse_normalized(s: &str) -> Result<Semver, String> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s
            .splitn(3, '.')
            .map(|p| {
                if p.len() > 1 {
                    let trimmed = p.trim_start_matches('0');
                    if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                        trimmed.to_string()
                    } else {
                        format!("0{trimmed}")
                    }
                } else {
                    p.to_string()
                }
            })
            .collect();
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0".to_string());
        }
        Semver::parse(&parts.join("."))
    }
}

fn number(s: &str, which: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {which} number {s:?}"
        ));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{which} number must not contain leading zeroes {s:?}"
        ));
    }
    s.parse()
        .map_err(|_| format!("{which} number {s:?} is out of range"))
}

fn prerelease(id: &str) -> Result<PreId, String> {
    if id.is_empty() {
        return Err("Prerelease is empty".into());
    }
    if id.bytes().all(|b| b.is_ascii_digit()) {
        if id.len() > 1 && id.starts_with('0') {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {id:?}"
            ));
        }
        return id
            .parse()
            .map(PreId::Numeric)
            .map_err(|_| format!("PreRelease number {id:?} is out of range"));
    }
    if !alphanumeric(id) {
        return Err(format!("Invalid character(s) found in prerelease {id:?}"));
    }
    Ok(PreId::Alpha(id.to_string()))
}

fn alphanumeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn parse_with(args: &[CowVal<'_, '_>], function: &str) -> Result<Semver, ExecutionError> {
    let text = string_arg(function, args, 0)?;
    let normalize = if args.len() > 1 {
        bool_arg(function, args, 1)?
    } else {
        false
    };
    let parsed = if normalize {
        Semver::parse_normalized(text)
    } else {
        Semver::parse(text)
    };
    parsed.map_err(|e| ExecutionError::function_error(function, e))
}

fn to_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(parse_with(&args, "semver")?)
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    // Arguments of the wrong type are still an error; only parse failures give `false`.
    string_arg("isSemver", &args, 0)?;
    if args.len() > 1 {
        bool_arg("isSemver", &args, 1)?;
    }
    boolean(parse_with(&args, "isSemver").is_ok())
}

fn pair<'a>(
    function: &str,
    args: &'a [CowVal<'_, '_>],
) -> Result<(&'a Semver, &'a Semver), ExecutionError> {
    Ok((typed(function, args, 0)?, typed(function, args, 1)?))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = pair("isGreaterThan", &args)?;
    boolean(a.compare(b) == Ordering::Greater)
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = pair("isLessThan", &args)?;
    boolean(a.compare(b) == Ordering::Less)
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = pair("compareTo", &args)?;
    int(a.compare(b) as i64)
}

fn component(
    function: &str,
    args: &[CowVal<'_, '_>],
    pick: fn(&Semver) -> u64,
) -> Result<i64, ExecutionError> {
    let v: &Semver = typed(function, args, 0)?;
    i64::try_from(pick(v))
        .map_err(|_| ExecutionError::function_error(function, "value out of int range"))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(component("major", &args, |v| v.major)?)
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(component("minor", &args, |v| v.minor)?)
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    int(component("patch", &args, |v| v.patch)?)
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let s = || SEMVER_TYPE.to_owned();
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver,
    )?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver,
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "semver_is_greater_than",
        s(),
        vec![s()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "semver_is_less_than", s(), vec![s()], less)?;
    env.add_member_overload("compareTo", "semver_compare_to", s(), vec![s()], compare_to)?;
    env.add_member_overload("major", "semver_major", s(), vec![], major)?;
    env.add_member_overload("minor", "semver_minor", s(), vec![], minor)?;
    env.add_member_overload("patch", "semver_patch", s(), vec![], patch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, fails};

    #[test]
    fn parse_and_compare() {
        check("semver('1.30.0').isLessThan(semver('1.31.0'))", true);
        check("semver('1.2.3').compareTo(semver('1.2.3'))", 0);
        check("semver('1.2.3').compareTo(semver('2.0.0'))", -1);
        check("semver('1.2.3').compareTo(semver('0.1.2'))", 1);
        check("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", true);
        check(
            "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
            true,
        );
        check("semver('1.0.0-2').isLessThan(semver('1.0.0-10'))", true);
        check(
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
            true,
        );
        check("semver('1.0.0+a') == semver('1.0.0+b')", true);
        check("semver('1.2.3').isGreaterThan(semver('1.2.3'))", false);
        check(
            "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2",
            true,
        );
        check("semver('1.2.3').patch()", 3);
    }

    #[test]
    fn normalization() {
        check("semver('v1.0', true) == semver('1.0.0')", true);
        check("semver('01.01.01', true).minor()", 1);
        check("semver('1', true).major()", 1);
        check("isSemver('v1.0', true)", true);
        check("isSemver('v1.0')", false);
        fails("semver('1.0-rc1', true)", "short version");
    }

    #[test]
    fn bad_input() {
        check("isSemver('1.0.0')", true);
        check("isSemver('hello')", false);
        check("isSemver('01.0.0')", false);
        check("isSemver('1.0.0-')", false);
        check("isSemver('1.0.0-01')", false);
        check("isSemver('1.0.0+')", false);
        check("isSemver('')", false);
        fails("semver('200K')", "semver");
        fails("semver('1.2')", "No Major.Minor.Patch");
        fails("semver('99999999999999999999.0.0')", "out of range");
        fails("semver(1)", "");
        fails("semver('1.0.0').isLessThan(1)", "");
    }
}
