//! ocm-work (under construction).
