//! Per-resource configuration of a ManifestWork: how a resource is updated, which status
//! values are fed back and which conditions are derived from it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{FeedbackRule, ResourceIdentifier};

/// Configuration for the manifests that match one resource identifier.
///
/// In `resourceIdentifier`, `name` and `namespace` may contain `*` wildcards. When several
/// entries match a manifest, the agent takes each setting from the first entry that sets it,
/// except `feedbackScrapeType`, which comes from the last matching entry (an upstream quirk).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestConfigOption {
    /// Which resource(s) this configuration applies to.
    pub resource_identifier: ResourceIdentifier,

    /// Status values to read from the resource and report in the ManifestWork status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_rules: Option<Vec<FeedbackRule>>,

    /// How the agent applies the resource; absent means `Update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<UpdateStrategy>,

    /// Rules deriving manifest conditions (such as `Complete` or `Available`) from the
    /// resource, merged by `condition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["condition"]))]
    pub condition_rules: Option<Vec<ConditionRule>>,

    /// How feedback values are collected: by periodic polling (`Poll`, the default) or by
    /// watching the resource (`Watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Poll"))]
    pub feedback_scrape_type: Option<FeedbackScrapeType>,
}

impl ManifestConfigOption {
    /// A configuration for `resource_identifier` that sets nothing yet.
    pub fn new(resource_identifier: ResourceIdentifier) -> Self {
        Self {
            resource_identifier,
            feedback_rules: None,
            update_strategy: None,
            condition_rules: None,
            feedback_scrape_type: None,
        }
    }
}

/// How feedback values are collected.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FeedbackScrapeType {
    /// Re-read the resource periodically (the default).
    #[default]
    Poll,
    /// Watch the resource and report changes as they happen.
    Watch,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `FeedbackScrapeType`: its known values only, with the same name and docs.
/// How feedback values are collected.
#[derive(JsonSchema)]
#[schemars(rename = "FeedbackScrapeType")]
#[allow(dead_code)]
enum FeedbackScrapeTypeSchema {
    /// Re-read the resource periodically (the default).
    Poll,
    /// Watch the resource and report changes as they happen.
    Watch,
}

crate::string_enum::string_enum!(FeedbackScrapeType, FeedbackScrapeTypeSchema {
    Poll => "Poll",
    Watch => "Watch",
});

/// A rule that sets one manifest condition from the state of the applied resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "self.type != 'CEL' || self.condition != \"\"",
    "message": "Condition is required for CEL rules",
}]))]
pub struct ConditionRule {
    /// The condition type this rule sets on the manifest, e.g. `Complete`. With
    /// `WellKnownConditions` it also selects the built-in rule (together with the kind of the
    /// live object). Conditions set by rules are aggregated into a work-level condition of
    /// the same type.
    pub condition: String,

    /// How the condition is computed: built-in rules for common kinds, or CEL expressions.
    #[serde(rename = "type")]
    pub type_: ConditionRuleType,

    /// CEL expressions evaluated when `type` is `CEL`; the condition is `True` when all of
    /// them evaluate to true. The resource is available as `object`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cel_expressions: Option<Vec<String>>,

    /// A fixed message for the condition, used when `messageExpression` is absent or yields
    /// an empty string. Without either, the message is `Manifest is <condition>` or
    /// `Manifest is not <condition>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,

    /// A CEL expression producing the condition's message; it sees `object` (the live
    /// resource) and `result` (the evaluated status as a boolean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
}

/// The kind of a [`ConditionRule`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConditionRuleType {
    /// `WellKnownConditions`: the agent's built-in rule for the live object's kind and the
    /// rule's `condition` (upstream has `Complete` for Jobs and Pods). Without a built-in
    /// rule no condition is set.
    WellKnownConditions,
    /// `CEL`: the rule's own CEL expressions.
    #[serde(rename = "CEL")]
    Cel,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `ConditionRuleType`: its known values only, with the same name and docs.
/// The kind of a [`ConditionRule`].
#[derive(JsonSchema)]
#[schemars(rename = "ConditionRuleType")]
#[allow(dead_code)]
enum ConditionRuleTypeSchema {
    /// `WellKnownConditions`: the agent's built-in rule for the live object's kind and the
    /// rule's `condition` (upstream has `Complete` for Jobs and Pods). Without a built-in
    /// rule no condition is set.
    WellKnownConditions,
    /// `CEL`: the rule's own CEL expressions.
    #[serde(rename = "CEL")]
    Cel,
}

crate::string_enum::string_enum!(ConditionRuleType, ConditionRuleTypeSchema {
    WellKnownConditions => "WellKnownConditions",
    Cel => "CEL",
});

/// How the agent applies a resource to the managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategy {
    /// The strategy; `Update` by default.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "Update"))]
    pub type_: UpdateStrategyType,

    /// Server-side apply settings; only used when `type` is `ServerSideApply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<ServerSideApplyConfig>,
}

impl UpdateStrategy {
    /// A strategy of type `type_` with no server-side apply settings.
    pub fn new(type_: UpdateStrategyType) -> Self {
        Self {
            type_,
            server_side_apply: None,
        }
    }
}

/// The strategy of an [`UpdateStrategy`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UpdateStrategyType {
    /// Create the resource, and update it whenever it differs from the manifest (the
    /// default).
    #[default]
    Update,
    /// Create the resource if it does not exist; never update it afterwards. A resource
    /// that already exists is adopted as is (it gets the work as owner).
    CreateOnly,
    /// Apply the manifest with Kubernetes server-side apply.
    ServerSideApply,
    /// Never create or change the resource; only read it (for feedback and condition rules).
    /// The manifest counts as applied even when the resource does not exist.
    ReadOnly,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `UpdateStrategyType`: its known values only, with the same name and docs.
/// The strategy of an [`UpdateStrategy`].
#[derive(JsonSchema)]
#[schemars(rename = "UpdateStrategyType")]
#[allow(dead_code)]
enum UpdateStrategyTypeSchema {
    /// Create the resource, and update it whenever it differs from the manifest (the
    /// default).
    Update,
    /// Create the resource if it does not exist; never update it afterwards. A resource
    /// that already exists is adopted as is (it gets the work as owner).
    CreateOnly,
    /// Apply the manifest with Kubernetes server-side apply.
    ServerSideApply,
    /// Never create or change the resource; only read it (for feedback and condition rules).
    /// The manifest counts as applied even when the resource does not exist.
    ReadOnly,
}

crate::string_enum::string_enum!(UpdateStrategyType, UpdateStrategyTypeSchema {
    Update => "Update",
    CreateOnly => "CreateOnly",
    ServerSideApply => "ServerSideApply",
    ReadOnly => "ReadOnly",
});

/// Server-side apply settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerSideApplyConfig {
    /// Take ownership of fields other field managers own instead of failing on conflicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,

    /// The field manager the agent applies with; it must start with `work-agent` and
    /// defaults to `work-agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "work-agent", "pattern" = "^work-agent"))]
    pub field_manager: Option<String>,

    /// Fields the agent leaves alone when they differ on the managed cluster, at most one
    /// entry per `condition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["condition"]))]
    pub ignore_fields: Option<Vec<IgnoreField>>,
}

/// Fields of a resource that server-side apply leaves alone under a condition.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnoreField {
    /// When the fields are ignored; `OnSpokePresent` by default.
    #[schemars(extend("default" = "OnSpokePresent"))]
    pub condition: IgnoreFieldsCondition,

    /// Kubernetes JSONPaths of the fields, e.g. `.spec.replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_paths: Option<Vec<String>>,

    /// RFC 6901 JSON pointers of the fields, e.g. `/spec/replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_pointers: Option<Vec<String>>,

    /// jq path expressions selecting the fields, e.g. `.spec.replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jq_path_expressions: Option<Vec<String>>,
}

/// When an [`IgnoreField`] applies.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IgnoreFieldsCondition {
    /// The fields are sent only when the resource is created; later changes to them, on the
    /// hub or on the managed cluster, are never applied (the default).
    #[default]
    OnSpokePresent,
    /// Changes made on the managed cluster survive as long as the manifest on the hub is
    /// unchanged (the agent skips the apply); once the manifest changes, the whole resource,
    /// these fields included, is applied again.
    OnSpokeChange,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `IgnoreFieldsCondition`: its known values only, with the same name and docs.
/// When an [`IgnoreField`] applies.
#[derive(JsonSchema)]
#[schemars(rename = "IgnoreFieldsCondition")]
#[allow(dead_code)]
enum IgnoreFieldsConditionSchema {
    /// The fields are sent only when the resource is created; later changes to them, on the
    /// hub or on the managed cluster, are never applied (the default).
    OnSpokePresent,
    /// Changes made on the managed cluster survive as long as the manifest on the hub is
    /// unchanged (the agent skips the apply); once the manifest changes, the whole resource,
    /// these fields included, is applied again.
    OnSpokeChange,
}

crate::string_enum::string_enum!(IgnoreFieldsCondition, IgnoreFieldsConditionSchema {
    OnSpokePresent => "OnSpokePresent",
    OnSpokeChange => "OnSpokeChange",
});
