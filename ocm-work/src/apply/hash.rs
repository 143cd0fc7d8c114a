//! The configuration hash of a manifest, compatible with upstream's.
//!
//! Upstream hashes the text Go's `fmt.Sprintf("%v", obj)` gives for an unstructured object
//! (`&{map[...]}`) with MD5. Reproducing that text exactly lets this agent take over objects a
//! Go agent applied without a spurious re-apply.

use serde_json::Value;

/// The lower-case hex MD5 of the Go `%v` rendering of `object`.
///
/// ```
/// use serde_json::json;
/// let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "test", "namespace": "default"}, "data": {"foo1": "bar1"}});
/// assert_eq!(ocm_work::apply::hash::config_hash(&cm), "4c07ba481d04e9c38e5ed3bf24139537");
/// ```
pub fn config_hash(object: &Value) -> String {
    ocm_api::k8s::digest::md5_hex(go_unstructured_string(object).as_bytes())
}

/// Go's `%v` rendering of a pointer to an unstructured object: `&{` + value + `}`.
pub fn go_unstructured_string(object: &Value) -> String {
    let mut out = String::from("&{");
    ocm_feedback::jsonpath::go_value(&mut out, object);
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_like_go_percent_v() {
        let v = json!({"b": [1, "x", null, true, {"z": 1.5}], "a": {}});
        assert_eq!(
            go_unstructured_string(&v),
            "&{map[a:map[] b:[1 x <nil> true map[z:1.5]]]}"
        );
    }

    #[test]
    fn upstream_vector() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test", "namespace": "default"}, "data": {"foo1": "bar1"}});
        assert_eq!(
            go_unstructured_string(&cm),
            "&{map[apiVersion:v1 data:map[foo1:bar1] kind:ConfigMap metadata:map[name:test namespace:default]]}"
        );
        assert_eq!(config_hash(&cm), "4c07ba481d04e9c38e5ed3bf24139537");
    }
}
