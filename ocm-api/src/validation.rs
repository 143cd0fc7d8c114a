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

/// All the fields of one object that failed validation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

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
