//! The `addon` API group.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The CRDs of this group.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![]
}
