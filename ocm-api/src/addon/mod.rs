//! The `addon.open-cluster-management.io` API group: addon registration and configuration.
//!
//! * [`ClusterManagementAddOn`](v1alpha1::ClusterManagementAddOn) (cluster-scoped, hub): an
//!   addon known to the hub, its supported configurations and how it is installed.
//! * [`ManagedClusterAddOn`](v1alpha1::ManagedClusterAddOn) (in a cluster's namespace on the
//!   hub): the addon enabled on one managed cluster, and its state there.
//! * [`AddOnDeploymentConfig`](v1alpha1::AddOnDeploymentConfig) (namespaced): deployment
//!   settings for an addon's agent.
//! * [`AddOnTemplate`](v1alpha1::AddOnTemplate) (cluster-scoped, v1alpha1 only): an addon
//!   defined entirely by data, its agent given as ManifestWork content.
//!
//! Upstream serves the first three in `v1alpha1` (the storage version) and `v1beta1`; both
//! are here, and [`crds()`](crate::crds) returns one merged CRD per kind. Types whose schema
//! is the same in both versions are defined once, in `v1alpha1`, and re-exported by
//! `v1beta1`.
//!
//! # Conversion
//!
//! `From` converts each multi-version kind (and its spec and status) between `v1alpha1` and
//! `v1beta1` the way upstream's conversion webhook does, including its lossy corners; the
//! [`conversion`] module describes the mapping.
//!
//! ```
//! use ocm_api::addon::{v1alpha1, v1beta1};
//!
//! let alpha: v1alpha1::ClusterManagementAddOn = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "addon.open-cluster-management.io/v1alpha1",
//!     "kind": "ClusterManagementAddOn",
//!     "metadata": { "name": "helloworld" },
//!     "spec": { "supportedConfigs": [{
//!         "group": "addon.open-cluster-management.io",
//!         "resource": "addondeploymentconfigs",
//!         "defaultConfig": { "namespace": "open-cluster-management", "name": "default" }
//!     }]}
//! }))?;
//! let beta = v1beta1::ClusterManagementAddOn::from(alpha);
//! let defaults = beta.spec.default_configs.unwrap_or_default();
//! assert_eq!(defaults[0].name, "default");
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! # Validation
//!
//! Upstream runs no validating admission webhook for the addon group (its addon webhook
//! only converts between versions); every rule lies in the CRD schemas, which
//! [`crds()`](crate::crds) reproduces. So these kinds have no `validate()` method.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate, merge};

pub mod conversion;
mod schema;
pub mod v1alpha1;
pub mod v1beta1;

/// Upstream's storage version of every addon kind.
const STORAGE_VERSION: &str = "v1alpha1";

/// The normalisation every addon kind needs: upstream keeps `spec` required at the root.
const FIXUPS: Fixups = Fixups {
    root_spec_required: true,
    nullable: &[],
    empty_subresources: false,
};

/// The CRDs of this group, multi-version kinds merged with v1alpha1 as the storage version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let mut out = Vec::with_capacity(4);
    out.push(generate::<v1alpha1::AddOnTemplate>(Fixups {
        empty_subresources: true,
        ..FIXUPS
    }));
    let pairs = [
        vec![
            generate::<v1alpha1::AddOnDeploymentConfig>(FIXUPS),
            generate::<v1beta1::AddOnDeploymentConfig>(FIXUPS),
        ],
        vec![
            generate::<v1alpha1::ManagedClusterAddOn>(FIXUPS),
            generate::<v1beta1::ManagedClusterAddOn>(FIXUPS),
        ],
        vec![
            generate::<v1alpha1::ClusterManagementAddOn>(FIXUPS),
            generate::<v1beta1::ClusterManagementAddOn>(FIXUPS),
        ],
    ];
    for versions in pairs {
        match merge(versions, STORAGE_VERSION) {
            Ok(crd) => out.push(crd),
            // The versions are generated from our own types; a failed merge is a bug here.
            Err(e) => panic!("{e}"),
        }
    }
    out
}
