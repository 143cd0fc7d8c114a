//! A request's options (`ListOptions`, `CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`), decoded and validated as kube-apiserver's handlers do it, with its
//! answers: `400 BadRequest` for a parameter that does not decode (Go's `strconv` errors),
//! `422 Invalid` naming `<Kind>Options.meta.k8s.io` and the fields for options that decode
//! but break a rule.

use serde_json::Value;

use crate::api_error::{ApiError, Cause};
use crate::serving::query::Query;

/// The longest field manager name kube-apiserver takes.
pub const MAX_FIELD_MANAGER_BYTES: usize = 128;

/// How a bad value is shown in a field error: strings and `null` quoted, numbers and
/// booleans as they are, lists and maps as JSON (apimachinery's `field.Error`).
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => ocm_api::k8s::gojson::quote(s),
        Value::Null => "\"null\"".into(),
        other => ocm_api::k8s::gojson::value(other),
    }
}

/// `field.Invalid`.
pub(crate) fn invalid(field: &str, value: &Value, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {}: {detail}", shown(value)),
        field: field.into(),
    }
}

/// `field.NotSupported`: the value, then the supported ones, each quoted.
pub(crate) fn not_supported(field: &str, value: &Value, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported
        .iter()
        .map(|s| ocm_api::k8s::gojson::quote(s))
        .collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {}",
            shown(value),
            list.join(", ")
        ),
        field: field.into(),
    }
}

/// `field.Forbidden`.
pub(crate) fn forbidden(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    }
}

/// `field.Required`.
pub(crate) fn required(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: format!("Required value: {detail}"),
        field: field.into(),
    }
}

/// `field.TooLong` for a string of at most `max` bytes.
pub(crate) fn too_long(field: &str, max: usize) -> Cause {
    Cause {
        reason: "FieldValueTooLong".into(),
        message: format!("Too long: may not be more than {max} bytes"),
        field: field.into(),
    }
}

/// `422 Invalid` for options of `kind` (`ListOptions`, `CreateOptions`, ...).
fn refuse(kind: &str, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(kind, "meta.k8s.io", "", causes))
    }
}

/// Go's `strconv.ParseUint` error for a resource version that is not a number.
pub(crate) fn parse_uint_error(value: &str) -> Option<String> {
    let quoted = ocm_api::k8s::gojson::quote(value);
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!(
            "strconv.ParseUint: parsing {quoted}: invalid syntax"
        ));
    }
    value
        .parse::<u64>()
        .err()
        .map(|_| format!("strconv.ParseUint: parsing {quoted}: value out of range"))
}

/// A `resourceVersion` parameter, parsed as the storage layer parses it: `None` when it is
/// empty (any version), else the number, else the field error the storage layer raises
/// (`resourceVersion: Invalid value: "abc": strconv.ParseUint: ...`).
pub(crate) fn resource_version(value: Option<&str>) -> Result<Option<u64>, String> {
    match value.filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => match parse_uint_error(v) {
            Some(e) => Err(format!(
                "resourceVersion: Invalid value: {}: {e}",
                ocm_api::k8s::gojson::quote(v)
            )),
            None => Ok(v.parse().ok()),
        },
    }
}

/// A `resourceVersion` that does not parse, as a list answers it (`400`).
pub(crate) fn list_resource_version(value: Option<&str>) -> Result<Option<u64>, ApiError> {
    resource_version(value)
        .map_err(|e| ApiError::bad_request(format!("invalid resource version: {e}")))
}

/// A `resourceVersion` that does not parse, as a get or a watch answers it: the storage
/// layer's error, passed on as a `500` without a reason.
pub(crate) fn read_resource_version(value: Option<&str>) -> Result<Option<u64>, ApiError> {
    resource_version(value).map_err(|e| ApiError::new(500, "", e))
}

/// `ValidateListOptions`: the rules on `resourceVersionMatch` and `sendInitialEvents`, with
/// the WatchList defaulting kube-apiserver applies first (a watch that names no version and
/// no initial events gets both).
pub(crate) fn validate_list(query: &Query, watch: bool) -> Result<(), ApiError> {
    let rv = query.get("resourceVersion").unwrap_or_default();
    let cont = query.get("continue").unwrap_or_default();
    let mut matched = query.get("resourceVersionMatch").unwrap_or_default();
    let mut initial = query
        .get("sendInitialEvents")
        .map(|_| query.flag("sendInitialEvents"));
    if watch && initial.is_none() && matched.is_empty() && (rv.is_empty() || rv == "0") {
        initial = Some(true);
        matched = "NotOlderThan";
    }
    let field = "resourceVersionMatch";
    let mut causes = Vec::new();
    if watch {
        if initial.is_some() && matched != "NotOlderThan" {
            causes.push(forbidden(
                field,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matched.is_empty() {
            if initial.is_none() {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matched != "NotOlderThan" {
                causes.push(not_supported(
                    field,
                    &Value::String(matched.into()),
                    &["NotOlderThan"],
                ));
            }
            if !cont.is_empty() {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        return refuse("ListOptions", causes);
    }
    if !matched.is_empty() {
        if rv.is_empty() {
            causes.push(forbidden(
                field,
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !cont.is_empty() {
            causes.push(forbidden(
                field,
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if matched != "Exact" && matched != "NotOlderThan" {
            causes.push(not_supported(
                field,
                &Value::String(matched.into()),
                &["Exact", "NotOlderThan", ""],
            ));
        }
        if matched == "Exact" && rv == "0" {
            causes.push(forbidden(
                field,
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if query.get("sendInitialEvents").is_some() {
        causes.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    refuse("ListOptions", causes)
}

/// The `dryRun` rule (`ValidateDryRun`): only `All`.
fn dry_run_causes(values: &[&str], causes: &mut Vec<Cause>) {
    if values.iter().any(|v| *v != "All") {
        let shown = Value::Array(values.iter().map(|v| Value::String((*v).into())).collect());
        causes.push(not_supported("dryRun", &shown, &["All"]));
    }
}

/// The `fieldManager` rules (`ValidateFieldManager`): at most 128 bytes, printable.
fn field_manager_causes(manager: &str, causes: &mut Vec<Cause>) {
    if manager.len() > MAX_FIELD_MANAGER_BYTES {
        causes.push(too_long("fieldManager", MAX_FIELD_MANAGER_BYTES));
    }
    for (i, c) in manager.char_indices() {
        if !ocm_api::k8s::gojson::is_print(c) {
            causes.push(invalid(
                "fieldManager",
                &Value::String(manager.into()),
                &format!("invalid character U+{:04X} (at position {i})", u32::from(c)),
            ));
        }
    }
}

/// The `fieldValidation` rule (`ValidateFieldValidation`).
fn field_validation_causes(directive: &str, causes: &mut Vec<Cause>) {
    if !matches!(directive, "" | "Ignore" | "Strict" | "Warn") {
        causes.push(not_supported(
            "fieldValidation",
            &Value::String(directive.into()),
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
}

/// What a write is: the options kind it validates and the patch rules that apply.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Write {
    /// POST: `CreateOptions`.
    Create,
    /// PUT: `UpdateOptions`.
    Update,
    /// PATCH other than apply: `PatchOptions`, `force` forbidden.
    Patch,
    /// Server-side apply: `PatchOptions`, `fieldManager` required.
    Apply,
}

/// `ValidateCreateOptions`, `ValidateUpdateOptions` and `ValidatePatchOptions`, in their
/// order: `422` naming the options kind, with nothing written.
pub(crate) fn validate_write(query: &Query, write: Write) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let manager = query.get("fieldManager").unwrap_or_default();
    match write {
        Write::Patch if query.get("force").is_some() => {
            causes.push(forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        Write::Apply if manager.is_empty() => {
            causes.push(required("fieldManager", "is required for apply patch"));
        }
        _ => {}
    }
    field_manager_causes(manager, &mut causes);
    dry_run_causes(&query.get_all("dryRun"), &mut causes);
    field_validation_causes(
        query.get("fieldValidation").unwrap_or_default(),
        &mut causes,
    );
    let kind = match write {
        Write::Create => "CreateOptions",
        Write::Update => "UpdateOptions",
        Write::Patch | Write::Apply => "PatchOptions",
    };
    refuse(kind, causes)
}

/// `ValidateDeleteOptions` of options decoded from the query and the body: the propagation
/// policy, its conflict with `orphanDependents`, and `dryRun`.
pub(crate) fn validate_delete(
    policy: Option<&str>,
    orphan_dependents: Option<bool>,
    dry_run: &[&str],
) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if let (Some(_), Some(p)) = (orphan_dependents, policy) {
        causes.push(invalid(
            "propagationPolicy",
            &Value::String(p.into()),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(p) = policy
        && !matches!(p, "Foreground" | "Background" | "Orphan")
    {
        causes.push(not_supported(
            "propagationPolicy",
            &Value::String(p.into()),
            &["Foreground", "Background", "Orphan", "nil"],
        ));
    }
    dry_run_causes(dry_run, &mut causes);
    refuse("DeleteOptions", causes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<(), ApiError>) -> String {
        r.unwrap_err().message.clone()
    }

    #[test]
    fn list_options_as_kube_apiserver_validates_them() {
        let q = |s: &str| Query::parse(Some(s));
        assert!(validate_list(&q("resourceVersion=5&resourceVersionMatch=Exact"), false).is_ok());
        assert_eq!(
            message(validate_list(
                &q("resourceVersion=1&resourceVersionMatch=Bogus"),
                false
            )),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        );
        assert_eq!(
            message(validate_list(&q("resourceVersionMatch=Exact"), false)),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        // A watch without a version is defaulted to a watch list first.
        assert!(validate_list(&q("watch=1"), true).is_ok());
        assert_eq!(
            message(validate_list(
                &q("watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan"),
                true
            )),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
        );
        assert!(
            validate_list(
                &q("sendInitialEvents=true&resourceVersionMatch=NotOlderThan"),
                true
            )
            .is_ok()
        );
    }

    #[test]
    fn resource_versions_parse_as_the_storage_layer_parses_them() {
        assert_eq!(resource_version(Some("")), Ok(None));
        assert_eq!(resource_version(Some("42")), Ok(Some(42)));
        assert_eq!(
            resource_version(Some("-1")).unwrap_err(),
            "resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax"
        );
        assert_eq!(
            resource_version(Some("99999999999999999999999")).unwrap_err(),
            "resourceVersion: Invalid value: \"99999999999999999999999\": strconv.ParseUint: parsing \"99999999999999999999999\": value out of range"
        );
        let e = read_resource_version(Some("abc")).unwrap_err();
        assert_eq!((e.code, e.reason.as_str()), (500, ""));
    }

    #[test]
    fn write_options_as_kube_apiserver_validates_them() {
        let q = |s: &str| Query::parse(Some(s));
        assert!(validate_write(&q("fieldManager=m&dryRun=All"), Write::Create).is_ok());
        assert_eq!(
            message(validate_write(&q("dryRun=Sometimes"), Write::Create)),
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Sometimes\"]: supported values: \"All\""
        );
        assert_eq!(
            message(validate_write(
                &q(&format!("fieldManager={}", "m".repeat(129))),
                Write::Update
            )),
            "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
        );
        assert_eq!(
            message(validate_write(&q("force=true"), Write::Patch)),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        assert_eq!(
            message(validate_write(&q("force=true"), Write::Apply)),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        assert!(
            message(validate_write(&q("fieldManager=a%01b"), Write::Create)).ends_with(
                "fieldManager: Invalid value: \"a\\x01b\": invalid character U+0001 (at position 1)"
            )
        );
        assert_eq!(
            message(validate_write(&q("fieldValidation=Bogus"), Write::Create)),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        );
    }

    #[test]
    fn delete_options_as_kube_apiserver_validates_them() {
        assert!(validate_delete(Some("Orphan"), None, &[]).is_ok());
        assert_eq!(
            message(validate_delete(Some("Bogus"), None, &[])),
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
        assert_eq!(
            message(validate_delete(Some("Orphan"), Some(true), &[])),
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set"
        );
    }
}
