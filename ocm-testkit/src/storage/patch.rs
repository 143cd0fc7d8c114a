//! JSON patch, JSON merge patch and strategic merge patch.

use serde_json::{Map, Value};

use crate::api_error::{ApiError, ApiResult};
use crate::storage::fieldset::{item_key, position};
use crate::storage::schema::{ListKind, Shape};

/// The kinds of PATCH bodies, by their content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchKind {
    /// Recognize a PATCH content type.
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        Some(match base {
            "application/json-patch+json" => PatchKind::Json,
            "application/merge-patch+json" => PatchKind::Merge,
            "application/strategic-merge-patch+json" => PatchKind::Strategic,
            "application/apply-patch+yaml" => PatchKind::Apply,
            _ => return None,
        })
    }
}

/// A failed JSON patch: kube-apiserver answers `422` with apimachinery's generic message and
/// the patch library's error as the cause (`NewGenericServerResponse`).
fn patch_failed(text: String) -> ApiError {
    let mut e = ApiError::new(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    );
    e.causes.push(crate::api_error::Cause {
        reason: "UnexpectedServerResponse".into(),
        message: text,
        field: String::new(),
    });
    e
}

/// Apply an RFC 6902 JSON patch to a copy of `doc`, with kube-apiserver's limits: at most
/// [`MAX_JSON_PATCH_OPERATIONS`](crate::storage::limits::MAX_JSON_PATCH_OPERATIONS) operations
/// (`413` past it) and at most
/// [`JSON_PATCH_MAX_COPY_BYTES`](crate::storage::limits::JSON_PATCH_MAX_COPY_BYTES) copied by `copy`
/// operations in all, checked before each copy is made, so a patch that doubles the object
/// with every operation stops early instead of exhausting memory.
pub(crate) fn json_patch(doc: &Value, patch: &Value) -> ApiResult<Value> {
    use crate::storage::limits::{JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, json_size};
    let Some(ops) = patch.as_array() else {
        let what = match patch {
            Value::Object(_) => "object",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            _ => "null",
        };
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {what} into Go value of type jsonpatch.Patch"
        )));
    };
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(crate::storage::limits::request_too_large(&format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut out = doc.clone();
    let mut copied = 0usize;
    for op in ops {
        let op: json_patch::PatchOperation =
            serde_json::from_value(op.clone()).map_err(|e| patch_failed(e.to_string()))?;
        if let json_patch::PatchOperation::Copy(c) = &op
            && let Some(from) = out.pointer(c.from.as_str())
        {
            copied += json_size(from);
            if copied > JSON_PATCH_MAX_COPY_BYTES {
                return Err(patch_failed(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}"
                )));
            }
        }
        json_patch::patch(&mut out, std::slice::from_ref(&op))
            .map_err(|e| patch_failed(e.to_string()))?;
    }
    Ok(out)
}

/// Apply an RFC 7386 JSON merge patch to a copy of `doc`.
pub(crate) fn merge_patch(doc: &Value, patch: &Value) -> Value {
    let mut out = doc.clone();
    json_patch::merge(&mut out, patch);
    out
}

/// Apply a strategic merge patch to a copy of `doc`, merging lists by the
/// built-in merge keys and honouring `$patch` (`replace`, `delete`; another value is
/// apimachinery's error, which kube-apiserver passes on as a `500`),
/// `$deleteFromPrimitiveList/…`, `$retainKeys` and (by ignoring it) `$setElementOrder/…`.
pub(crate) fn strategic_merge(doc: &Value, patch: &Value, shape: &Shape<'_>) -> ApiResult<Value> {
    let mut out = doc.clone();
    smp(&mut out, patch, shape, 0)?;
    Ok(out)
}

fn strip_directives(v: &Value) -> Value {
    ocm_api::k8s::json::descend(|| match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_directives).collect()),
        other => other.clone(),
    })
}

/// apimachinery's `ErrBadPatchType`, for a `$patch` it does not know.
fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> ApiError {
    let shown = match directive {
        Value::String(s) => s.clone(),
        other => format!(
            "%!s({}={})",
            match other {
                Value::Bool(_) => "bool",
                Value::Number(n) if n.is_f64() => "float64",
                Value::Number(_) => "int64",
                Value::Null => "<nil>",
                Value::Array(_) => "[]interface {}",
                _ => "map[string]interface {}",
            },
            ocm_api::k8s::gojson::sprint_value(other)
        ),
    };
    ApiError::new(
        500,
        "",
        format!(
            "unknown patch type: {shown} in map: {}",
            ocm_api::k8s::gojson::sprint_value(&Value::Object(map.clone()))
        ),
    )
}

fn smp(target: &mut Value, patch: &Value, shape: &Shape<'_>, depth: usize) -> ApiResult<()> {
    ocm_api::k8s::json::descend(|| smp_level(target, patch, shape, depth))
}

fn smp_level(target: &mut Value, patch: &Value, shape: &Shape<'_>, depth: usize) -> ApiResult<()> {
    let Value::Object(pm) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    match pm.get("$patch") {
        None => {}
        Some(Value::String(d)) if d == "replace" => {
            *target = strip_directives(patch);
            return Ok(());
        }
        Some(Value::String(d)) if d == "delete" => {
            *target = Value::Object(Map::new());
            return Ok(());
        }
        Some(other) => return Err(bad_patch_type(other, pm)),
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(tm) = target.as_object_mut() else {
        return Ok(());
    };
    if let Some(Value::Array(keep)) = pm.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        tm.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, pv) in pm {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Value::Array(del)) = (tm.get_mut(field), pv) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        let cs = shape.field(k, depth == 0);
        match pv {
            Value::Null => {
                tm.remove(k);
            }
            Value::Object(_) => {
                let entry = tm.entry(k.clone()).or_insert(Value::Null);
                smp(entry, pv, &cs, depth + 1)?;
            }
            Value::Array(items) => {
                let merged = match (tm.get(k), cs.list_kind()) {
                    (Some(Value::Array(cur)), ListKind::Map(keys)) if !keys.is_empty() => {
                        let is = cs.items();
                        let mut out = cur.clone();
                        for item in items {
                            // Strategic merge identifies items by the first key only (patchMergeKey).
                            let at =
                                item_key(item, &keys[..1]).and_then(|key| position(&out, &key));
                            let directive = match item.get("$patch") {
                                None => None,
                                Some(Value::String(d)) if d == "delete" || d == "replace" => {
                                    Some(d.as_str())
                                }
                                Some(other) => {
                                    let map = item.as_object().cloned().unwrap_or_default();
                                    return Err(bad_patch_type(other, &map));
                                }
                            };
                            match (at, directive == Some("delete")) {
                                (Some(i), true) => {
                                    out.remove(i);
                                }
                                (None, true) => {}
                                (Some(i), false) => smp(&mut out[i], item, &is, depth + 1)?,
                                (None, false) => out.push(strip_directives(item)),
                            }
                        }
                        Value::Array(out)
                    }
                    (Some(Value::Array(cur)), ListKind::Set) => {
                        let mut out = cur.clone();
                        for item in items {
                            if !out.contains(item) {
                                out.push(item.clone());
                            }
                        }
                        Value::Array(out)
                    }
                    _ => strip_directives(pv),
                };
                tm.insert(k.clone(), merged);
            }
            other => {
                tm.insert(k.clone(), other.clone());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_containers_by_name() {
        let doc = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
        ]}}}});
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "b", "image": "b:2"}, {"name": "a", "$patch": "delete"}, {"name": "c", "image": "c:1"}]
        }}}});
        let out = strategic_merge(&doc, &patch, &Shape::root(None)).unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}])
        );
    }
}
