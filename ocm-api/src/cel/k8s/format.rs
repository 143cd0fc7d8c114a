//! Kubernetes' `Format` library: named string formats and their validation.
//!
//! * `format.dns1123Label()`, `format.dns1123Subdomain()`, `format.dns1035Label()`,
//!   `format.qualifiedName()`, `format.dns1123LabelPrefix()`,
//!   `format.dns1123SubdomainPrefix()`, `format.dns1035LabelPrefix()`, `format.labelValue()`,
//!   `format.uri()`, `format.uuid()`, `format.byte()`, `format.date()`, `format.datetime()`:
//!   the format of that name.
//! * `format.named(name)`: `optional.of(format)` for one of the names above, else
//!   `optional.none()`.
//! * `<format>.validate(s)`: `optional.none()` when `s` is valid, else `optional.of(list)` of
//!   the problems, worded as Kubernetes' validation words them. The name formats are
//!   [`crate::k8s::names`]' checks: `qualifiedName` is a label key and `labelValue` a label
//!   value, both measured in bytes as apimachinery's `validate/content` package does.
//!
//! The `…Prefix` formats check a name prefix (as for `generateName`): a trailing `-` is
//! allowed, by Kubernetes' own trick of replacing the last two characters with `a`. `uri`
//! accepts what `url()` accepts; `uuid` takes 32 hex digits with optional dashes in the usual
//! places; `byte` is padded standard base64 (not empty); `date` is `YYYY-MM-DD` of a real day;
//! `datetime` is such a date, `T` (any case), `hh:mm:ss`, optional fraction, and `Z` or a
//! `±hh:mm` offset.

use std::sync::LazyLock;

use cel::common::types::{CelList, CelOptional, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};
use regex::Regex;

use super::{opaque_val, owned, string_arg, typed};
use crate::k8s::names;

/// The CEL type of named formats.
pub(crate) static FORMAT_TYPE: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// One of the named formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Dns1123Label,
    Dns1123Subdomain,
    Dns1035Label,
    QualifiedName,
    Dns1123LabelPrefix,
    Dns1123SubdomainPrefix,
    Dns1035LabelPrefix,
    LabelValue,
    Uri,
    Uuid,
    Byte,
    Date,
    DateTime,
}

opaque_val!(Format, FORMAT_TYPE);

/// Every format with its CEL name.
const FORMATS: [(&str, Format); 13] = [
    ("dns1123Label", Format::Dns1123Label),
    ("dns1123Subdomain", Format::Dns1123Subdomain),
    ("dns1035Label", Format::Dns1035Label),
    ("qualifiedName", Format::QualifiedName),
    ("dns1123LabelPrefix", Format::Dns1123LabelPrefix),
    ("dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix),
    ("dns1035LabelPrefix", Format::Dns1035LabelPrefix),
    ("labelValue", Format::LabelValue),
    ("uri", Format::Uri),
    ("uuid", Format::Uuid),
    ("byte", Format::Byte),
    ("date", Format::Date),
    ("datetime", Format::DateTime),
];

/// A whole-string regex. Only built from this module's constant patterns, which a test
/// checks all compile; were one not to, nothing would match it.
type Pattern = LazyLock<Option<Regex>>;

fn anchored(pattern: &str) -> Option<Regex> {
    Regex::new(&format!("^(?:{pattern})$")).ok()
}

fn matches(pattern: &Pattern, s: &str) -> bool {
    pattern.as_ref().is_some_and(|re| re.is_match(s))
}

static UUID: Pattern = LazyLock::new(|| {
    anchored("(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
});
static BASE64: Pattern = LazyLock::new(|| {
    anchored("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
});
static TIME: Pattern = LazyLock::new(|| {
    anchored("([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
});

/// Kubernetes' handling of a name prefix: a trailing dash (after at least one other
/// character) is replaced, together with the byte before it, by `a`. When that byte is part
/// of a multi-byte character, the character's remaining bytes become NULs, so that the result
/// has the byte length Kubernetes' would have and is just as invalid.
fn mask_trailing_dash(s: &str) -> String {
    if s.len() < 2 || !s.ends_with('-') {
        return s.to_owned();
    }
    let cut = s.len() - 2;
    let mut boundary = cut;
    while !s.is_char_boundary(boundary) {
        boundary -= 1;
    }
    format!("{}{}a", &s[..boundary], "\0".repeat(cut - boundary))
}

/// `YYYY-MM-DD` naming a day that exists.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
    {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (s[0..4].parse(), s[5..7].parse(), s[8..10].parse())
    else {
        return false;
    };
    jiff::civil::Date::new(year, month, day).is_ok()
}

fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    TIME.as_ref()
        .and_then(|re| re.captures(time))
        .is_some_and(|c| {
            let field = |i: usize| c.get(i).map_or("", |m| m.as_str());
            field(1) <= "23" && field(2) <= "59" && field(3) <= "59"
        })
}

impl Format {
    /// The problems with `s`; empty when it is valid.
    pub(crate) fn validate(self, s: &str) -> Vec<String> {
        let single = |ok: bool, problem: &str| {
            if ok {
                Vec::new()
            } else {
                vec![problem.to_owned()]
            }
        };
        match self {
            Format::Dns1123Label => names::dns1123_label_errors(s),
            Format::Dns1123Subdomain => names::dns1123_subdomain_errors(s),
            Format::Dns1035Label => names::dns1035_label_errors(s),
            Format::QualifiedName => names::label_key_errors(s),
            Format::Dns1123LabelPrefix => names::dns1123_label_errors(&mask_trailing_dash(s)),
            Format::Dns1123SubdomainPrefix => {
                names::dns1123_subdomain_errors(&mask_trailing_dash(s))
            }
            Format::Dns1035LabelPrefix => names::dns1035_label_errors(&mask_trailing_dash(s)),
            Format::LabelValue => names::label_value_errors(s),
            Format::Uri => match super::url::parse_request_uri(s) {
                Ok(()) => Vec::new(),
                Err(e) => vec![e],
            },
            Format::Uuid => single(matches(&UUID, s), "does not match the UUID format"),
            Format::Byte => single(matches(&BASE64, s), "invalid base64"),
            Format::Date => single(is_date(s), "invalid date"),
            Format::DateTime => single(is_date_time(s), "invalid datetime"),
        }
    }
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let name = string_arg("format.named", &args, 0)?;
    let found = FORMATS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    owned(match found {
        Some(f) => CelOptional::of(Box::new(f)),
        None => CelOptional::none(),
    })
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let format: Format = *typed("validate", &args, 0)?;
    let problems = format.validate(string_arg("validate", &args, 1)?);
    if problems.is_empty() {
        return owned(CelOptional::none());
    }
    let items: Vec<Box<dyn Val>> = problems
        .into_iter()
        .map(|p| Box::new(CelString::from(p)) as Box<dyn Val>)
        .collect();
    owned(CelOptional::of(Box::new(CelList::from(items))))
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    macro_rules! constant {
        ($name:literal, $format:expr) => {
            env.add_overload(
                concat!("format.", $name),
                concat!("format.", $name),
                vec![],
                |_args: Vec<CowVal<'_, '_>>| owned($format),
            )?;
        };
    }
    constant!("dns1123Label", Format::Dns1123Label);
    constant!("dns1123Subdomain", Format::Dns1123Subdomain);
    constant!("dns1035Label", Format::Dns1035Label);
    constant!("qualifiedName", Format::QualifiedName);
    constant!("dns1123LabelPrefix", Format::Dns1123LabelPrefix);
    constant!("dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix);
    constant!("dns1035LabelPrefix", Format::Dns1035LabelPrefix);
    constant!("labelValue", Format::LabelValue);
    constant!("uri", Format::Uri);
    constant!("uuid", Format::Uuid);
    constant!("byte", Format::Byte);
    constant!("date", Format::Date);
    constant!("datetime", Format::DateTime);
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    env.add_member_overload(
        "validate",
        "format-validate",
        FORMAT_TYPE.to_owned(),
        vec![STRING_TYPE],
        validate,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, fails};
    use super::{FORMATS, Format, mask_trailing_dash};

    #[test]
    fn every_name_resolves_to_its_format() {
        for (name, _) in FORMATS {
            check(&format!("format.named('{name}').hasValue()"), true);
            check(
                &format!("format.named('{name}').value() == format.{name}()"),
                true,
            );
        }
        check("format.named('nope').hasValue()", false);
        check("format.dns1123Label() == format.dns1035Label()", false);
    }

    #[test]
    fn names_and_labels() {
        check(
            "format.dns1123Label().validate('my-name').hasValue()",
            false,
        );
        check(
            "format.dns1123Label().validate('123-abc').hasValue()",
            false,
        );
        check(
            "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
            true,
        );
        check(
            "format.dns1123Label().validate('My_Name').value()[0].startsWith(\
             'a lowercase RFC 1123 label must consist of')",
            true,
        );
        check(
            &format!(
                "format.dns1123Label().validate('{}').value() == \
                 ['must be no more than 63 characters']",
                "a".repeat(64)
            ),
            true,
        );
        check(
            "format.dns1123Subdomain().validate('example.com').hasValue()",
            false,
        );
        check(
            "format.dns1123Subdomain().validate('-x.com').hasValue()",
            true,
        );
        check(
            "format.dns1035Label().validate('abc-123').hasValue()",
            false,
        );
        check("format.dns1035Label().validate('123-abc').hasValue()", true);
        check(
            "format.dns1123LabelPrefix().validate('my-name-').hasValue()",
            false,
        );
        check(
            "format.dns1123Label().validate('my-name-').hasValue()",
            true,
        );
        check(
            "format.dns1035LabelPrefix().validate('a-').hasValue()",
            false,
        );
        check(
            "format.dns1123SubdomainPrefix().validate('web.').hasValue()",
            true,
        );
        check("format.labelValue().validate('').hasValue()", false);
        check(
            "format.labelValue().validate('My_Value.1').hasValue()",
            false,
        );
        check("format.labelValue().validate('-bad').hasValue()", true);
    }

    #[test]
    fn messages_are_apimachinerys_exactly() {
        check(
            "format.labelValue().validate('-bad').value() == ['a valid label must be an empty \
             string or consist of alphanumeric characters, \\'-\\', \\'_\\' or \\'.\\', and must \
             start and end with an alphanumeric character (e.g. \\'MyValue\\',  or \
             \\'my_value\\',  or \\'12345\\', regex used for validation is \
             \\'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\\')']",
            true,
        );
        check(
            &format!(
                "format.qualifiedName().validate('{}').value() == \
                 ['name part must be no more than 63 bytes']",
                "a".repeat(64)
            ),
            true,
        );
    }

    #[test]
    fn qualified_names() {
        check(
            "format.qualifiedName().validate('MyName').hasValue()",
            false,
        );
        check(
            "format.qualifiedName().validate('example.com/MyName').hasValue()",
            false,
        );
        check(
            "format.qualifiedName().validate('/MyName').value() == ['prefix part must be non-empty']",
            true,
        );
        check(
            "format.qualifiedName().validate('example.com/').value()[0] == \
             'name part must be non-empty'",
            true,
        );
        check(
            "format.qualifiedName().validate('a/b/c').value()[0].startsWith('a valid label key ')",
            true,
        );
        check(
            "format.qualifiedName().validate('Bad_Prefix/x').value()[0].startsWith('prefix part ')",
            true,
        );
    }

    #[test]
    fn other_formats() {
        check(
            "format.uri().validate('https://example.com/x').hasValue()",
            false,
        );
        check("format.uri().validate('/x').hasValue()", false);
        check("format.uri().validate('x').hasValue()", true);
        check(
            "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
            false,
        );
        check(
            "format.uuid().validate('123E4567E89B12D3A456426614174000').hasValue()",
            false,
        );
        check(
            "format.uuid().validate('not-a-uuid').value() == ['does not match the UUID format']",
            true,
        );
        check("format.byte().validate('aGVsbG8=').hasValue()", false);
        check(
            "format.byte().validate('aGVsbG8').value() == ['invalid base64']",
            true,
        );
        check("format.byte().validate('').hasValue()", true);
        check("format.date().validate('2024-02-29').hasValue()", false);
        check(
            "format.date().validate('2023-02-29').value() == ['invalid date']",
            true,
        );
        check("format.date().validate('2024-2-1').hasValue()", true);
        check(
            "format.datetime().validate('2024-01-02T03:04:05Z').hasValue()",
            false,
        );
        check(
            "format.datetime().validate('2024-01-02t03:04:05.123+02:00').hasValue()",
            false,
        );
        check(
            "format.datetime().validate('2024-01-02T24:00:00Z').value() == ['invalid datetime']",
            true,
        );
        check("format.datetime().validate('2024-01-02').hasValue()", true);
        check(
            "format.datetime().validate('2024-01-02T03:04:05').hasValue()",
            true,
        );
    }

    #[test]
    fn every_pattern_compiles() {
        for pattern in [&super::UUID, &super::BASE64, &super::TIME] {
            assert!(pattern.is_some());
        }
    }

    #[test]
    fn prefixes_mask_the_trailing_dash_like_kubernetes() {
        assert_eq!(mask_trailing_dash("abc-"), "aba");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("ab"), "ab");
        assert_eq!(mask_trailing_dash("é-"), "\0a");
        assert!(Format::Dns1123LabelPrefix.validate("é-").len() == 1);
        assert!(Format::Dns1123LabelPrefix.validate("-").len() == 1);
    }

    /// `string.format(list)` comes from the `cel` crate's strings extension (cel-go's
    /// `ext.Strings`, which Kubernetes enables); it must coexist with `format.*` here.
    #[test]
    fn string_format_still_works() {
        check(
            "'%s is %d, %.2f, %x, %X, %o, %b, %e'.format(['a', 5, 3.14159, 255, 255, 8, 5, 1234.5])",
            "a is 5, 3.14, ff, FF, 10, 101, 1.234500e+03",
        );
        check(
            "'%.3e|%f|%s'.format([0.000123, 2, [1, 'x']])",
            "1.230e-04|2.000000|[1, x]",
        );
        check("'100%% %s'.format([true])", "100% true");
        fails("'%d'.format(['x'])", "decimal clause");
        fails("'%s %s'.format(['a'])", "out of range");
        fails("'%q'.format([1])", "unrecognized formatting clause");
    }

    #[test]
    fn bad_input() {
        fails("format.named(1)", "");
        fails("format.named('nope').value()", "");
        fails("format.dns1123Label().validate(1)", "");
        fails("'x'.validate('y')", "");
    }
}
