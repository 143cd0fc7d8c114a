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
/// These are [`crate::k8s::names`], the SDK's one implementation, under the path they have
/// always had here.
///
/// ```
/// use ocm_api::validation::names;
/// assert!(names::label_value_errors("ns.my-set").is_empty());
/// assert_eq!(names::label_value_errors(&"x".repeat(64))[0], "must be no more than 63 bytes");
/// assert!(names::dns1123_label_errors("Cluster1").len() == 1);
/// ```
pub mod names {
    pub use crate::k8s::names::{
        dns1123_label_errors, dns1123_subdomain_errors, is_dns1123_label, is_label_value,
        label_value_errors,
    };
}
