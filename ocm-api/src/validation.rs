//! Validation equal to upstream OCM's admission webhooks.

use std::fmt;

/// One field that failed validation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldError {
    /// Path of the field, e.g. `spec.workload.manifests[2]`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FieldError {
    /// A field error for `field` (a path such as `spec.workload.manifests[2]`).
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// All the fields of one object that failed validation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    /// Adds an error for `field`.
    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    /// Whether no field failed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Turns the collected errors into `Err(Error::Invalid)` for the object `kind`/`name`, or
    /// `Ok(())` when there are none.
    pub fn into_result(self, kind: &str, name: &str) -> crate::Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(crate::Error::Invalid {
                kind: kind.to_string(),
                name: name.to_string(),
                errors: self,
            })
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", e.field, e.message)?;
        }
        Ok(())
    }
}

/// Kubernetes' name and label checks, with the API server's messages, in its order.
///
/// ```
/// use ocm_api::validation::names;
/// assert!(names::label_value_errors("ns.my-set").is_empty());
/// assert_eq!(names::label_value_errors(&"x".repeat(64))[0], "must be no more than 63 characters");
/// assert!(names::dns1123_label_errors("Cluster1").len() == 1);
/// ```
pub mod names {
    const LABEL_VALUE_MESSAGE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    const DNS1123_LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const DNS1123_SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    fn max_len(value: &str, max: usize, out: &mut Vec<String>) {
        if value.len() > max {
            out.push(format!("must be no more than {max} characters"));
        }
    }

    fn lower_alnum(c: char) -> bool {
        c.is_ascii_lowercase() || c.is_ascii_digit()
    }

    /// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
    pub fn is_dns1123_label(s: &str) -> bool {
        s.starts_with(lower_alnum)
            && s.ends_with(lower_alnum)
            && s.chars().all(|c| lower_alnum(c) || c == '-')
    }

    /// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`
    pub fn is_label_value(s: &str) -> bool {
        s.is_empty()
            || (s.starts_with(|c: char| c.is_ascii_alphanumeric())
                && s.ends_with(|c: char| c.is_ascii_alphanumeric())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
    }

    /// `IsValidLabelValue`: at most 63 characters of the label-value alphabet.
    pub fn label_value_errors(value: &str) -> Vec<String> {
        let mut out = Vec::new();
        max_len(value, 63, &mut out);
        if !is_label_value(value) {
            out.push(LABEL_VALUE_MESSAGE.to_string());
        }
        out
    }

    /// `IsDNS1123Label` (namespace names, cluster names): at most 63 characters.
    pub fn dns1123_label_errors(value: &str) -> Vec<String> {
        let mut out = Vec::new();
        max_len(value, 63, &mut out);
        if !is_dns1123_label(value) {
            out.push(DNS1123_LABEL_MESSAGE.to_string());
        }
        out
    }

    /// `IsDNS1123Subdomain` (most object names): at most 253 characters.
    pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
        let mut out = Vec::new();
        max_len(value, 253, &mut out);
        if value.is_empty() || !value.split('.').all(is_dns1123_label) {
            out.push(DNS1123_SUBDOMAIN_MESSAGE.to_string());
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
            for bad in ["-a", "a-", "a b", "a/b", "_x"] {
                assert_eq!(
                    label_value_errors(bad),
                    vec![LABEL_VALUE_MESSAGE.to_string()],
                    "{bad}"
                );
            }
            assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
            assert_eq!(label_value_errors(&format!("{}-", "a".repeat(64))).len(), 2);
        }

        #[test]
        fn dns_names() {
            assert!(dns1123_label_errors("cluster-1").is_empty());
            assert_eq!(dns1123_label_errors("Cluster").len(), 1);
            assert_eq!(dns1123_label_errors("").len(), 1);
            assert!(dns1123_subdomain_errors("a.b-c.d").is_empty());
            assert_eq!(dns1123_subdomain_errors("a..b").len(), 1);
            assert_eq!(dns1123_subdomain_errors(&"a".repeat(254)).len(), 1);
        }
    }
}
