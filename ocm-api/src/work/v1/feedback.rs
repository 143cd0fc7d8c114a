//! Status feedback: the rules that say which values to read from an applied resource, and
//! the values the work agent reports back in the ManifestWork status.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A rule that selects status values of an applied resource to report back to the hub.
///
/// Listed in [`ManifestConfigOption::feedback_rules`](super::ManifestConfigOption::feedback_rules).
/// The values found are reported in
/// [`ManifestCondition::status_feedbacks`](super::ManifestCondition::status_feedbacks).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRule {
    /// Which kind of rule this is: a built-in set of values for well-known kinds, or
    /// user-supplied JSONPaths.
    #[serde(rename = "type")]
    pub type_: FeedbackType,

    /// The JSONPaths to evaluate when `type` is `JSONPaths`; merged by `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub json_paths: Option<Vec<JsonPath>>,
}

impl FeedbackRule {
    /// A rule reporting the built-in status values for the resource's kind.
    pub fn well_known_status() -> Self {
        Self {
            type_: FeedbackType::WellKnownStatus,
            json_paths: None,
        }
    }

    /// A rule reporting the values found at `paths`.
    pub fn json_paths(paths: impl IntoIterator<Item = JsonPath>) -> Self {
        Self {
            type_: FeedbackType::JsonPaths,
            json_paths: Some(paths.into_iter().collect()),
        }
    }
}

/// The kind of a [`FeedbackRule`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FeedbackType {
    /// `WellKnownStatus`: report the status fields the agent knows for common kinds (for
    /// example a Deployment's replica counts, a Job's completion counts).
    WellKnownStatus,
    /// `JSONPaths`: report the values found at the rule's JSONPaths.
    #[serde(rename = "JSONPaths")]
    JsonPaths,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `FeedbackType`: its known values only, with the same name and docs.
/// The kind of a [`FeedbackRule`].
#[derive(JsonSchema)]
#[schemars(rename = "FeedbackType")]
#[allow(dead_code)]
enum FeedbackTypeSchema {
    /// `WellKnownStatus`: report the status fields the agent knows for common kinds (for
    /// example a Deployment's replica counts, a Job's completion counts).
    WellKnownStatus,
    /// `JSONPaths`: report the values found at the rule's JSONPaths.
    #[serde(rename = "JSONPaths")]
    JsonPaths,
}

crate::string_enum::string_enum!(FeedbackType, FeedbackTypeSchema {
    WellKnownStatus => "WellKnownStatus",
    JsonPaths => "JSONPaths",
});

/// One named value to read from an applied resource with a Kubernetes JSONPath.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JsonPath {
    /// Name the value is reported under; unique within the rule.
    pub name: String,

    /// API version (the version part only, e.g. `v1`) the path applies to. When set and the
    /// live resource has another version, the agent reports an error instead of a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,

    /// Kubernetes JSONPath into the resource, without the surrounding braces, e.g.
    /// `.status.readyReplicas`.
    pub path: String,
}

impl JsonPath {
    /// A JSONPath named `name` evaluating `path`, for any version.
    pub fn new(name: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: None,
            path: path.into(),
        }
    }
}

/// The feedback values reported for one manifest.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusFeedbackResult {
    /// The values found, merged by `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub values: Option<Vec<FeedbackValue>>,
}

impl StatusFeedbackResult {
    /// The reported values (empty when there are none).
    pub fn values(&self) -> &[FeedbackValue] {
        self.values.as_deref().unwrap_or_default()
    }

    /// The value reported under `name`, if any.
    pub fn get(&self, name: &str) -> Option<&FieldValue> {
        self.values()
            .iter()
            .find(|v| v.name == name)
            .map(|v| &v.field_value)
    }
}

/// One named feedback value.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackValue {
    /// The name of the value: the JSONPath's name, or the well-known field name.
    pub name: String,

    /// The value and its type.
    pub field_value: FieldValue,
}

/// A typed feedback value: `type` says which one of the other fields is set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldValue {
    /// Which of `integer`, `string`, `boolean` or `jsonRaw` holds the value.
    #[serde(rename = "type")]
    pub type_: ValueType,

    /// The value when `type` is `Integer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer: Option<i64>,

    /// The value when `type` is `String`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,

    /// The value when `type` is `Boolean`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boolean: Option<bool>,

    /// The value when `type` is `JsonRaw`: a non-scalar value (object or list) encoded as
    /// JSON, at most 1024 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub json_raw: Option<String>,
}

impl FieldValue {
    /// An `Integer` value.
    pub fn integer(value: i64) -> Self {
        Self {
            type_: ValueType::Integer,
            integer: Some(value),
            string: None,
            boolean: None,
            json_raw: None,
        }
    }

    /// A `String` value.
    pub fn string(value: impl Into<String>) -> Self {
        Self {
            type_: ValueType::String,
            integer: None,
            string: Some(value.into()),
            boolean: None,
            json_raw: None,
        }
    }

    /// A `Boolean` value.
    pub fn boolean(value: bool) -> Self {
        Self {
            type_: ValueType::Boolean,
            integer: None,
            string: None,
            boolean: Some(value),
            json_raw: None,
        }
    }

    /// A `JsonRaw` value: `json` is already-encoded JSON text.
    pub fn json_raw(json: impl Into<String>) -> Self {
        Self {
            type_: ValueType::JsonRaw,
            integer: None,
            string: None,
            boolean: None,
            json_raw: Some(json.into()),
        }
    }
}

impl std::fmt::Display for FieldValue {
    /// The value as text, without its type: an integer in decimal, a string as is, a boolean
    /// as `true`/`false`, a `JsonRaw` value as its JSON text (our addition; upstream has no
    /// text form). A value whose `type` names a missing field, or is a type this SDK does not
    /// know, prints nothing.
    ///
    /// ```
    /// use ocm_api::work::v1::FieldValue;
    /// assert_eq!(FieldValue::integer(3).to_string(), "3");
    /// assert_eq!(FieldValue::string("True").to_string(), "True");
    /// assert_eq!(FieldValue::json_raw("[1,2]").to_string(), "[1,2]");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.type_ {
            ValueType::Integer => match self.integer {
                Some(i) => write!(f, "{i}"),
                None => Ok(()),
            },
            ValueType::String => f.write_str(self.string.as_deref().unwrap_or("")),
            ValueType::Boolean => match self.boolean {
                Some(b) => write!(f, "{b}"),
                None => Ok(()),
            },
            ValueType::JsonRaw => f.write_str(self.json_raw.as_deref().unwrap_or("")),
            ValueType::Unknown(_) => Ok(()),
        }
    }
}

/// The type of a [`FieldValue`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueType {
    /// A 64-bit signed integer, in `integer`.
    Integer,
    /// A string, in `string`.
    String,
    /// A boolean, in `boolean`.
    Boolean,
    /// A JSON-encoded object or list, in `jsonRaw`.
    JsonRaw,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `ValueType`: its known values only, with the same name and docs.
/// The type of a [`FieldValue`].
#[derive(JsonSchema)]
#[schemars(rename = "ValueType")]
#[allow(dead_code)]
enum ValueTypeSchema {
    /// A 64-bit signed integer, in `integer`.
    Integer,
    /// A string, in `string`.
    String,
    /// A boolean, in `boolean`.
    Boolean,
    /// A JSON-encoded object or list, in `jsonRaw`.
    JsonRaw,
}

crate::string_enum::string_enum!(ValueType, ValueTypeSchema {
    Integer => "Integer",
    String => "String",
    Boolean => "Boolean",
    JsonRaw => "JsonRaw",
});
