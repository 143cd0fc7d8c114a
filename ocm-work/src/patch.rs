//! Two-way JSON merge patches (RFC 7386) between an object as it is and as it should be.

use serde_json::{Map, Value};

/// The JSON merge patch that turns `from` into `to`: changed and added fields carry their new
/// value, removed fields are `null`, nested objects are diffed recursively and everything else
/// (arrays included) is replaced whole. `None` when the two are equal.
///
/// ```
/// use serde_json::json;
/// let patch = ocm_work::patch::merge_diff(
///     &json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1]}),
///     &json!({"a": 1, "b": {"c": 5}, "e": [1, 2], "f": "new"}),
/// );
/// assert_eq!(patch, Some(json!({"b": {"c": 5, "d": null}, "e": [1, 2], "f": "new"})));
/// ```
///
/// Values of any depth are diffed level by level on a stack that grows as needed (the
/// patch's copies of deep values are made the same way).
pub fn merge_diff(from: &Value, to: &Value) -> Option<Value> {
    ocm_api::k8s::json::descend(|| merge_diff_level(from, to))
}

fn merge_diff_level(from: &Value, to: &Value) -> Option<Value> {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = Map::new();
            for (key, old) in a {
                match b.get(key) {
                    None => {
                        patch.insert(key.clone(), Value::Null);
                    }
                    Some(new) => {
                        if let Some(child) = merge_diff(old, new) {
                            patch.insert(key.clone(), child);
                        }
                    }
                }
            }
            for (key, new) in b {
                if !a.contains_key(key) {
                    patch.insert(key.clone(), ocm_api::k8s::json::clone_value(new));
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (a, b) if ocm_api::k8s::json::values_equal(a, b) => None,
        (_, b) => Some(ocm_api::k8s::json::clone_value(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_need_no_patch() {
        assert_eq!(merge_diff(&json!({"a": [1]}), &json!({"a": [1]})), None);
        assert_eq!(merge_diff(&json!(1), &json!(1)), None);
    }

    #[test]
    fn type_changes_replace() {
        assert_eq!(
            merge_diff(&json!({"a": {"b": 1}}), &json!({"a": 2})),
            Some(json!({"a": 2}))
        );
        assert_eq!(
            merge_diff(&json!({"a": 2}), &json!({"a": {"b": 1}})),
            Some(json!({"a": {"b": 1}}))
        );
    }
}
