//! ocm-testkit (under construction).
