//! ocm-feedback (under construction).
