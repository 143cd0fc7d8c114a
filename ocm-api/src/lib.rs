//! ocm-api
