//! Reading feedback back from a ManifestWork's status (our addition): the values of one
//! resource, found by its resource identifier, and their JSON form.

use ocm_api::work::v1::{
    FeedbackValue, FieldValue, ManifestCondition, ManifestWork, ManifestWorkStatus,
    ResourceIdentifier, ValueType,
};
use serde_json::Value;

/// The status entry of the resource `identifier` names in a work's status: same group,
/// resource, namespace and name (an absent group or namespace equals an empty one).
pub fn manifest_condition<'a>(
    status: &'a ManifestWorkStatus,
    identifier: &ResourceIdentifier,
) -> Option<&'a ManifestCondition> {
    status.manifests().iter().find(|m| {
        let meta = &m.resource_meta;
        meta.group.as_deref().unwrap_or("") == identifier.group()
            && meta.resource.as_deref().unwrap_or("") == identifier.resource
            && meta.namespace.as_deref().unwrap_or("") == identifier.namespace()
            && meta.name.as_deref().unwrap_or("") == identifier.name
    })
}

/// The feedback values reported for one resource of `work` (empty when the work has no
/// status yet or no values for it).
///
/// ```
/// use ocm_api::work::v1::{FieldValue, ManifestWork, ResourceIdentifier};
///
/// let work: ManifestWork = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "w", "namespace": "cluster1"},
///     "spec": {},
///     "status": {"resourceStatus": {"manifests": [{
///         "resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
///                          "resource": "deployments", "namespace": "default", "name": "web"},
///         "statusFeedback": {"values": [
///             {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": 2}}]},
///         "conditions": []}]}}
/// }))?;
/// let id = ResourceIdentifier::new("apps", "deployments", "default", "web");
/// assert_eq!(ocm_feedback::lookup::feedback_value(&work, &id, "ReadyReplicas"),
///            Some(&FieldValue::integer(2)));
/// assert_eq!(ocm_feedback::lookup::feedback_json(&work, &id)["ReadyReplicas"], 2);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn feedback_values<'a>(
    work: &'a ManifestWork,
    identifier: &ResourceIdentifier,
) -> &'a [FeedbackValue] {
    work.status
        .as_ref()
        .and_then(|s| manifest_condition(s, identifier))
        .and_then(|m| m.status_feedbacks.as_ref())
        .map(|f| f.values())
        .unwrap_or_default()
}

/// One feedback value of one resource of `work`, by name.
pub fn feedback_value<'a>(
    work: &'a ManifestWork,
    identifier: &ResourceIdentifier,
    name: &str,
) -> Option<&'a FieldValue> {
    feedback_values(work, identifier)
        .iter()
        .find(|v| v.name == name)
        .map(|v| &v.field_value)
}

/// The feedback values of one resource as a JSON object, name to [`to_json`] value.
pub fn feedback_json(work: &ManifestWork, identifier: &ResourceIdentifier) -> Value {
    Value::Object(
        feedback_values(work, identifier)
            .iter()
            .map(|v| (v.name.clone(), to_json(&v.field_value)))
            .collect(),
    )
}

/// A feedback value as plain JSON: an integer as a number, a string as a string, a boolean as
/// a boolean, a `JsonRaw` value parsed (kept as a string when it is not valid JSON). A value
/// whose `type` names a missing field, or is a type this SDK does not know, is `null`.
///
/// ```
/// use ocm_api::work::v1::FieldValue;
/// use ocm_feedback::lookup::to_json;
/// assert_eq!(to_json(&FieldValue::integer(3)), serde_json::json!(3));
/// assert_eq!(to_json(&FieldValue::json_raw(r#"{"a":[1]}"#)), serde_json::json!({"a": [1]}));
/// ```
pub fn to_json(value: &FieldValue) -> Value {
    match &value.type_ {
        ValueType::Integer => value.integer.map_or(Value::Null, Value::from),
        ValueType::String => value.string.clone().map_or(Value::Null, Value::String),
        ValueType::Boolean => value.boolean.map_or(Value::Null, Value::Bool),
        ValueType::JsonRaw => match &value.json_raw {
            Some(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            None => Value::Null,
        },
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_of_a_type_this_sdk_does_not_know_reads_as_null() {
        let value: FieldValue =
            serde_json::from_value(json!({"type": "Float", "string": "1.5"})).unwrap();
        assert_eq!(value.type_.as_str(), "Float");
        assert_eq!(to_json(&value), Value::Null);
    }

    #[test]
    fn lookup_matches_every_identifier_field() {
        let work: ManifestWork = serde_json::from_value(json!({
            "metadata": {"name": "w", "namespace": "c"}, "spec": {},
            "status": {"resourceStatus": {"manifests": [
                {"resourceMeta": {"ordinal": 0, "resource": "configmaps", "name": "a", "namespace": "x"},
                 "statusFeedback": {"values": [{"name": "v", "fieldValue": {"type": "String", "string": "one"}}]},
                 "conditions": []},
                {"resourceMeta": {"ordinal": 1, "resource": "configmaps", "name": "a", "namespace": "y"},
                 "statusFeedback": {"values": [{"name": "v", "fieldValue": {"type": "Boolean", "boolean": true}}]},
                 "conditions": []}]}}
        }))
        .unwrap();
        let x = ResourceIdentifier::new("", "configmaps", "x", "a");
        let y = ResourceIdentifier::new("", "configmaps", "y", "a");
        let z = ResourceIdentifier::new("", "configmaps", "z", "a");
        assert_eq!(
            feedback_value(&work, &x, "v"),
            Some(&FieldValue::string("one"))
        );
        assert_eq!(feedback_json(&work, &y), json!({"v": true}));
        assert!(feedback_values(&work, &z).is_empty());
        assert_eq!(
            to_json(&FieldValue::json_raw("not json")),
            json!("not json")
        );
        let broken = FieldValue {
            integer: None,
            ..FieldValue::integer(1)
        };
        assert_eq!(to_json(&broken), Value::Null);
    }
}
