//! ocm-placement (under construction).
