//! Kubernetes names, label keys and label values, checked as apimachinery checks them.
//!
//! The `*_errors` functions return what is wrong with a value, in apimachinery's words and
//! order (an empty list when the value is valid), so a caller can build the message the API
//! server or an upstream controller would give. The `is_*` predicates check only the pattern,
//! not the length, as a CRD `pattern` does.
//!
//! The wording is apimachinery v0.36's, the version upstream OCM is built with:
//! [`label_key_errors`] and [`label_value_errors`] come from its `validate/content` package
//! (lengths in "bytes"), [`dns1123_label_errors`] and [`dns1123_subdomain_errors`] from
//! `util/validation` (lengths in "characters").
//!
//! ```
//! use ocm_api::k8s::names;
//!
//! assert!(names::dns1123_label_errors("cluster-1").is_empty());
//! assert_eq!(names::dns1123_label_errors("a.b"), ["must not contain dots"]);
//! assert!(names::label_key_errors("example.com/my_key").is_empty());
//! assert_eq!(names::label_key_errors("/x"), ["prefix part must be non-empty"]);
//! assert_eq!(
//!     names::label_value_errors(&"x".repeat(64)),
//!     ["must be no more than 63 bytes"]
//! );
//! assert!(names::is_qualified_name("open-cluster-management.io/zone"));
//! ```

/// The longest DNS-1123 label, label value and label-key name part.
pub const MAX_LABEL_LENGTH: usize = 63;
/// The longest DNS-1123 subdomain (and label-key prefix).
pub const MAX_SUBDOMAIN_LENGTH: usize = 253;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// apimachinery's `RegexError`: the message, the examples (if any), then the pattern, in
/// the words (and spacing) every "does not match" error of the API server uses.
///
/// ```
/// use ocm_api::k8s::names::regex_error;
///
/// assert_eq!(
///     regex_error("must be lower case", "[a-z]+", &["abc", "x"]),
///     "must be lower case (e.g. 'abc',  or 'x', regex used for validation is '[a-z]+')"
/// );
/// assert_eq!(
///     regex_error("must be lower case", "[a-z]+", &[]),
///     "must be lower case (regex used for validation is '[a-z]+')"
/// );
/// ```
pub fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{pattern}')");
    }
    let mut out = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(pattern);
    out.push_str("')");
    out
}

/// `util/validation.MaxLenError`.
fn max_len_characters(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `validate/content.MaxLenError`.
fn max_len_bytes(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Whether `s` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (any length).
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            lower_alnum(first)
                && lower_alnum(last)
                && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// Whether `s` is dot-separated DNS-1123 labels (any length).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns1123_label)
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a label
/// key or qualified name, and a non-empty label value (any length).
pub fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Whether `s` is `[prefix/]name` with a DNS-1123 subdomain prefix and a
/// [qualified name part](is_qualified_name_part) (no length checks): the pattern of label
/// keys, taint keys and topology keys.
pub fn is_qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns1123_subdomain(prefix) && is_qualified_name_part(name),
        None => is_qualified_name_part(s),
    }
}

/// Whether `s` matches the label-value pattern (empty, or a qualified name part; any length).
pub fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_qualified_name_part(s)
}

/// `IsDNS1123Label` (namespace and cluster names): at most 63 characters of
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`; a valid subdomain is told it "must not contain dots".
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        out.push(max_len_characters(MAX_LABEL_LENGTH));
    }
    if !is_dns1123_label(value) {
        if is_dns1123_subdomain(value) {
            out.push("must not contain dots".to_string());
        } else {
            out.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    out
}

/// `IsDNS1035Label` (Service names): at most 63 characters of `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        out.push(max_len_characters(MAX_LABEL_LENGTH));
    }
    let b = value.as_bytes();
    let valid = is_dns1123_label(value) && b.first().is_some_and(u8::is_ascii_lowercase);
    if !valid {
        out.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    out
}

/// `IsDNS1123Subdomain` (most object names): at most 253 characters of dot-separated
/// DNS-1123 labels.
pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    subdomain_errors(value, max_len_characters)
}

fn subdomain_errors(value: &str, max_len: fn(usize) -> String) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > MAX_SUBDOMAIN_LENGTH {
        out.push(max_len(MAX_SUBDOMAIN_LENGTH));
    }
    if !is_dns1123_subdomain(value) {
        out.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    out
}

/// `IsLabelKey` (also `IsQualifiedName`): an optional DNS-1123 subdomain prefix and `/`, then
/// a name part of at most 63 bytes.
pub fn label_key_errors(key: &str) -> Vec<String> {
    let name_error = || {
        regex_error(
            LABEL_KEY_MSG,
            LABEL_KEY_FMT,
            &["MyName", "my.name", "123-abc"],
        )
    };
    let mut out = Vec::new();
    let mut parts = key.split('/');
    let name = match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => name,
        (Some(prefix), Some(name), None) => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else {
                out.extend(
                    subdomain_errors(prefix, max_len_bytes)
                        .into_iter()
                        .map(|problem| format!("prefix part {problem}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_error()
            )];
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else if name.len() > MAX_LABEL_LENGTH {
        out.push(format!("name part {}", max_len_bytes(MAX_LABEL_LENGTH)));
    }
    if !is_qualified_name_part(name) {
        out.push(format!("name part {}", name_error()));
    }
    out
}

/// `IsLabelValue` (`IsValidLabelValue`): empty, or at most 63 bytes of the label-value
/// alphabet, starting and ending with an alphanumeric character.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        out.push(max_len_bytes(MAX_LABEL_LENGTH));
    }
    if !is_label_value(value) {
        out.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values() {
        for ok in ["", "a", "My_Value.1-x", "12345"] {
            assert!(label_value_errors(ok).is_empty(), "{ok}");
        }
        let message = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        for bad in ["-a", "a-", "a b", "a/b", "_x"] {
            assert_eq!(label_value_errors(bad), [message], "{bad}");
        }
        assert_eq!(
            label_value_errors(&"a".repeat(64)),
            ["must be no more than 63 bytes"]
        );
        assert_eq!(label_value_errors(&format!("{}-", "a".repeat(64))).len(), 2);
    }

    #[test]
    fn dns1035_labels() {
        assert!(dns1035_label_errors("web-1").is_empty());
        assert_eq!(
            dns1035_label_errors("1web"),
            [
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            dns1035_label_errors(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
        assert_eq!(dns1035_label_errors("").len(), 1);
    }

    #[test]
    fn dns_names() {
        assert!(dns1123_label_errors("cluster-1").is_empty());
        assert_eq!(dns1123_label_errors("Cluster").len(), 1);
        assert_eq!(dns1123_label_errors("").len(), 1);
        assert!(dns1123_subdomain_errors("a.b-c.d").is_empty());
        assert_eq!(dns1123_subdomain_errors("a..b").len(), 1);
        assert_eq!(
            dns1123_subdomain_errors(&"a".repeat(254)),
            ["must be no more than 253 characters"]
        );
    }

    /// The copy that was in `ocm_api::validation` gave the pattern message for a name with
    /// dots; apimachinery's `IsDNS1123Label` (and the CEL format library's copy) says "must
    /// not contain dots" when the name is a valid subdomain.
    #[test]
    fn a_subdomain_is_not_a_label_because_of_its_dots() {
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert_eq!(
            dns1123_label_errors("a..b")[0],
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        );
    }

    #[test]
    fn label_keys() {
        for ok in ["a", "example.com/MyName", "my.name", "123-abc", "a.b/c_d"] {
            assert!(label_key_errors(ok).is_empty(), "{ok}");
            assert!(is_qualified_name(ok), "{ok}");
        }
        assert_eq!(label_key_errors("/a"), ["prefix part must be non-empty"]);
        assert_eq!(label_key_errors("a/")[0], "name part must be non-empty");
        assert!(label_key_errors("a/b/c")[0].starts_with("a valid label key must consist"));
        assert_eq!(
            label_key_errors(&format!("{}/a", "b".repeat(254)))[0],
            "prefix part must be no more than 253 bytes"
        );
        assert_eq!(
            label_key_errors(&"k".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        for bad in ["", "/a", "a/", "a/b/c", "-a", "A.B/c", "a..b/c"] {
            assert!(!is_qualified_name(bad), "{bad}");
        }
    }
}
