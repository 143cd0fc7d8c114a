//! `addon.open-cluster-management.io/v1beta1`: AddOnDeploymentConfig, ManagedClusterAddOn and
//! ClusterManagementAddOn.
//!
//! Upstream serves v1beta1 next to v1alpha1 and stores v1alpha1. Types whose schema is the same
//! in both versions are re-exported from [`super::v1alpha1`].

mod addondeploymentconfig;
pub use addondeploymentconfig::*;

mod managedclusteraddon;
pub use managedclusteraddon::*;

mod clustermanagementaddon;
pub use clustermanagementaddon::*;
