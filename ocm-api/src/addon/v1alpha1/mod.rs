//! `addon.open-cluster-management.io/v1alpha1`: AddOnDeploymentConfig, ManagedClusterAddOn,
//! ClusterManagementAddOn and AddOnTemplate.
//!
//! v1alpha1 is the storage version of every addon kind. AddOnTemplate exists only in this
//! version.

mod addondeploymentconfig;
pub use addondeploymentconfig::*;

mod config;
pub use config::*;

mod managedclusteraddon;
pub use managedclusteraddon::*;

mod clustermanagementaddon;
pub use clustermanagementaddon::*;

mod addontemplate;
pub use addontemplate::*;
