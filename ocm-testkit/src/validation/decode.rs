//! Decoding request bodies the way kube-apiserver does, errors included.
//!
//! kube-apiserver turns a body into a Go object before it does anything else, and answers
//! `400 BadRequest` when that fails. This module reproduces the parts that decide whether a
//! body is accepted and what the answer says:
//!
//! - **type meta** ([`type_meta`]): for built-in kinds a missing `kind` or `apiVersion` is
//!   filled in from the URL (the JSON serializer defaults both from the endpoint's kind), a
//!   different one is refused with the scheme's error; custom resources are decoded as
//!   unstructured objects, which must name their `kind` (`Object 'Kind' is missing in …`) and
//!   whose `apiVersion` must be the URL's (`the API version in the data (…) does not match the
//!   expected API version (…)`);
//! - **typed decoding** ([`type_error`]): built-in kinds are decoded into their real types
//!   (k8s-openapi's structs), custom resources have their `metadata` decoded as `ObjectMeta`,
//!   and the first value of the wrong JSON type is reported with Go's `encoding/json` text,
//!   `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`;
//!   invalid base64 in `[]byte` fields and malformed quantities are reported as Go reports them;
//! - **syntax errors** ([`go_syntax_error`]): Go's scanner messages (`invalid character 'x'
//!   looking for beginning of value`, `unexpected end of JSON input`).
//!
//! Go keeps decoding after a type error and reports the first one, but stops at once when a
//! field's own decoder (a quantity, an int-or-string) fails; both rules are followed.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess};
use serde_json::Value;

use ocm_api::k8s::gojson;

use crate::api_error::ApiError;
use crate::storage::registry::{Gvr, ResourceInfo};

/// The scheme name kube-apiserver's errors name for built-in kinds.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// kube-apiserver's `summarizeData(body, 30)`: the body itself when it is an object
/// (cut at 30 bytes), otherwise its hex (cut likewise).
pub(crate) fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".into();
    }
    let cut = &body[..body.len().min(MAX)];
    let more = if body.len() > MAX { " ..." } else { "" };
    if body[0] == b'{' {
        format!("{}{more}", String::from_utf8_lossy(cut))
    } else {
        format!("{}{more}", ocm_api::k8s::digest::hex(cut))
    }
}

/// `transformDecodeError` without a kind in the data.
pub(crate) fn unrecognized(kind: &str, err: &str, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {err} ({})",
        summarize(body)
    ))
}

/// `transformDecodeError` with the kind the data named (or the URL's, defaulted).
pub(crate) fn cannot_handle(
    data_kind: &str,
    data_version: &str,
    kind: &str,
    err: &str,
) -> ApiError {
    ApiError::bad_request(format!(
        "{data_kind} in version {} cannot be handled as a {kind}: {err}",
        gojson::quote(data_version)
    ))
}

/// The Go package an internal type of a built-in group lives in (for conversion errors).
fn internal_package(group: &str) -> &str {
    match group {
        "" | "events.k8s.io" => "core",
        g => g.split('.').next().unwrap_or(g),
    }
}

/// What the body says about its own type, checked as kube-apiserver's decoder checks it
/// against the endpoint (`info` at `gvr`). `raw` is the body as sent (for messages).
///
/// Returns the kind and version the data is handled as (for later messages).
pub(crate) fn type_meta(
    info: &ResourceInfo,
    gvr: &Gvr,
    body: &Value,
    raw: &[u8],
    is_builtin_kind: impl Fn(&str, &str, &str) -> bool,
) -> Result<(String, String), ApiError> {
    let Some(obj) = body.as_object() else {
        return non_object_type_meta(info, gvr, body, raw);
    };
    check_type_meta_types(info, obj, raw)?;
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    // schema.FromAPIVersionAndKind: an unparsable apiVersion counts as none.
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [""] => (String::new(), String::new()),
        [v] => (String::new(), v.to_string()),
        [g, v] if !g.is_empty() => (g.to_string(), v.to_string()),
        _ => (String::new(), String::new()),
    };
    let url_api_version = gvr.api_version();
    if info.crd_name.is_some() {
        return custom_type_meta(info, api_version, kind, version, &url_api_version, raw);
    }
    builtin_type_meta(
        info,
        gvr,
        kind,
        group,
        version,
        &url_api_version,
        is_builtin_kind,
    )
}

/// [`type_meta`] of a body that is no JSON object: `null` is an empty object of a
/// built-in kind; anything else (and `null` for a custom resource) is refused.
fn non_object_type_meta(
    info: &ResourceInfo,
    gvr: &Gvr,
    body: &Value,
    raw: &[u8],
) -> Result<(String, String), ApiError> {
    let what = match body {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "null",
    };
    // `null` decodes as an empty object of a built-in kind; a custom resource names no kind.
    if what == "null" && info.crd_name.is_none() {
        return Ok((info.kind.clone(), gvr.version.clone()));
    }
    if what == "null" {
        return Err(unrecognized(
            &info.kind,
            &format!(
                "Object 'Kind' is missing in '{}'",
                String::from_utf8_lossy(raw)
            ),
            raw,
        ));
    }
    Err(unrecognized(
        &info.kind,
        &format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {what} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
        ),
        raw,
    ))
}

/// Refuse a body whose `apiVersion` or `kind` is there but neither a string nor null.
fn check_type_meta_types(
    info: &ResourceInfo,
    obj: &serde_json::Map<String, Value>,
    raw: &[u8],
) -> Result<(), ApiError> {
    for key in ["apiVersion", "kind"] {
        if let Some(v) = obj.get(key)
            && !v.is_string()
            && !v.is_null()
        {
            return Err(unrecognized(
                &info.kind,
                &format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{key} of type string",
                    go_value_kind(v)
                ),
                raw,
            ));
        }
    }
    Ok(())
}

/// [`type_meta`] for a custom resource, decoded unstructured: `kind` is required and
/// `apiVersion` must be the endpoint's (it is not defaulted).
fn custom_type_meta(
    info: &ResourceInfo,
    api_version: &str,
    kind: &str,
    version: String,
    url_api_version: &str,
    raw: &[u8],
) -> Result<(String, String), ApiError> {
    if kind.is_empty() {
        return Err(unrecognized(
            &info.kind,
            &format!(
                "Object 'Kind' is missing in '{}'",
                String::from_utf8_lossy(raw)
            ),
            raw,
        ));
    }
    if api_version != url_api_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({url_api_version})"
        )));
    }
    Ok((kind.to_string(), version))
}

/// [`type_meta`] for a built-in kind: the body's group, version and kind, defaulted from
/// the endpoint (gvkWithDefaults), must be the endpoint's; else the decoder's error.
fn builtin_type_meta(
    info: &ResourceInfo,
    gvr: &Gvr,
    kind: &str,
    mut group: String,
    mut version: String,
    url_api_version: &str,
    is_builtin_kind: impl Fn(&str, &str, &str) -> bool,
) -> Result<(String, String), ApiError> {
    // gvkWithDefaults against the endpoint's kind.
    let kind = if kind.is_empty() {
        info.kind.as_str()
    } else {
        kind
    };
    if version.is_empty() && group.is_empty() {
        group = gvr.group.clone();
        version = gvr.version.clone();
    }
    if version.is_empty() && group == gvr.group {
        version = gvr.version.clone();
    }
    if kind == info.kind && group == gvr.group && version == gvr.version {
        return Ok((kind.to_string(), version));
    }
    let data_gv = if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    };
    let err = if !is_builtin_kind(&group, &version, kind) {
        format!(
            "no kind {} is registered for version {} in scheme {}",
            gojson::quote(kind),
            gojson::quote(&data_gv),
            gojson::quote(LEGACY_SCHEME)
        )
    } else if kind == info.kind {
        // Another served version of the same kind decodes and converts, and is then refused.
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({data_gv}) does not match the expected API version ({url_api_version})"
        )));
    } else {
        format!(
            "converting ({version}.{kind}) to ({}.{}): unknown conversion",
            internal_package(&gvr.group),
            info.kind
        )
    };
    Err(cannot_handle(kind, &version, &info.kind, &err))
}

/// A JSON or merge patch whose result does not decode: kube-apiserver's patch handler
/// answers `422` with the patched object as the bad value of the field `patch`.
pub(crate) fn patch_type_error(patched: &Value, e: &TypeError) -> ApiError {
    let json = serde_json::to_string(patched).unwrap_or_default();
    ApiError::invalid(
        "",
        "",
        "",
        vec![crate::api_error::Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {}: {}", gojson::quote(&json), e.go),
            field: "patch".into(),
        }],
    )
}

/// A strategic merge patch whose result does not fit the kind's types: kube-apiserver converts
/// the merged map to the typed object and answers `422` with the patch (Go's `%+v` of it) as
/// the bad value of the field `patch` and the converter's error.
pub(crate) fn strategic_patch_type_error(patch: &Value, e: &TypeError) -> ApiError {
    ApiError::invalid(
        "",
        "",
        "",
        vec![crate::api_error::Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: {}",
                gojson::quote(&gojson::sprint_value(patch)),
                e.converter()
            ),
            field: "patch".into(),
        }],
    )
}

/// A server-side apply whose object does not fit the kind's types: the field manager's
/// typed conversion fails, and kube-apiserver answers with that plain error (500, no reason).
pub(crate) fn apply_type_error(
    info: &ResourceInfo,
    gvr: &Gvr,
    applied: &Value,
    e: &TypeError,
) -> ApiError {
    let meta = |k: &str| {
        applied
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({}/{}; {}/{}, Kind={}): {}",
            meta("namespace"),
            meta("name"),
            info.group,
            gvr.version,
            info.kind,
            e.smd()
        ),
    )
}

pub(crate) fn go_value_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// The first value a Go decoder would refuse while decoding an object into its type.
#[derive(Debug, Clone)]
pub(crate) struct TypeError {
    /// Go's error text, e.g. `json: cannot unmarshal number into Go struct field
    /// ConfigMap.data of type string`.
    pub(crate) go: String,
    /// The value's full path with map keys and list indices (`.data.a`), for
    /// server-side apply's messages.
    pub(crate) full_path: String,
    /// What server-side apply's typed conversion expected there.
    pub(crate) smd_expected: &'static str,
    /// The offending value.
    pub(crate) value: Value,
    /// The Go type the value was decoded into (`string`, `map[string]string`,
    /// `v1.ObjectMeta`); empty when the error is not about a type.
    pub(crate) go_type: String,
}

impl TypeError {
    /// The unstructured converter's wording, which a strategic merge patch's result gets
    /// (`cannot convert int64 to string`, `cannot restore map from string`).
    pub(crate) fn converter(&self) -> String {
        let t = self.go_type.as_str();
        let kind = match &self.value {
            Value::String(_) => "string",
            Value::Number(n) if n.is_f64() => "float64",
            Value::Number(_) => "int64",
            Value::Bool(_) => "bool",
            Value::Array(_) => "slice",
            Value::Object(_) => "map",
            Value::Null => "invalid",
        };
        let primitive = matches!(
            t,
            "string"
                | "bool"
                | "int"
                | "int8"
                | "int16"
                | "int32"
                | "int64"
                | "uint"
                | "uint8"
                | "uint16"
                | "uint32"
                | "uint64"
                | "float32"
                | "float64"
        );
        if t.starts_with("map[") {
            format!("cannot restore map from {kind}")
        } else if t.starts_with("[]") {
            format!("cannot restore slice from {kind}")
        } else if primitive {
            format!("cannot convert {} to {t}", go_type_name(&self.value))
        } else if t.contains('.')
            && !matches!(
                t,
                "resource.Quantity" | "intstr.IntOrString" | "v1.Time" | "v1.MicroTime"
            )
        {
            format!("cannot restore struct from: {kind}")
        } else {
            // Types that decode themselves (quantities, int-or-strings, times) give their own
            // decoder's error.
            self.go.clone()
        }
    }

    /// Server-side apply's wording (structured-merge-diff's typed conversion):
    /// `.data.a: expected string, got &value.valueUnstructured{Value:1}`.
    pub(crate) fn smd(&self) -> String {
        let got = match self.smd_expected {
            "numeric (int or float)" => go_type_name(&self.value).to_string(),
            _ => format!(
                "&value.valueUnstructured{{Value:{}}}",
                go_sharp_v(&self.value)
            ),
        };
        format!(
            "{}: expected {}, got {got}",
            self.full_path, self.smd_expected
        )
    }
}

fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

/// Go's `%#v` of a decoded JSON value (approximately).
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::String(s) => gojson::quote(s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "interface {}(nil)".into(),
        Value::Array(a) => format!(
            "[]interface {{}}{{{}}}",
            a.iter().map(go_sharp_v).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "map[string]interface {{}}{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", gojson::quote(k), go_sharp_v(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Check `obj` as kube-apiserver's decoder would: the whole object for built-in kinds
/// (their real types), `metadata` as `ObjectMeta` for custom resources.
pub(crate) fn type_error(info: &ResourceInfo, obj: &Value) -> Option<TypeError> {
    use k8s_openapi::api;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    if info.crd_name.is_some() {
        let meta = obj.get("metadata")?;
        return check::<ObjectMeta>(meta, false, ".metadata");
    }
    macro_rules! typed {
        ($t:ty) => {
            check::<$t>(obj, true, "")
        };
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Namespace") => typed!(api::core::v1::Namespace),
        ("", "ConfigMap") => typed!(api::core::v1::ConfigMap),
        ("", "Secret") => typed!(api::core::v1::Secret),
        ("", "ServiceAccount") => typed!(api::core::v1::ServiceAccount),
        ("", "Service") => typed!(api::core::v1::Service),
        ("", "Pod") => typed!(api::core::v1::Pod),
        ("", "Node") => typed!(api::core::v1::Node),
        ("", "Event") => typed!(api::core::v1::Event),
        ("", "PersistentVolumeClaim") => typed!(api::core::v1::PersistentVolumeClaim),
        ("", "Endpoints") => typed!(api::core::v1::Endpoints),
        ("", "ResourceQuota") => typed!(api::core::v1::ResourceQuota),
        ("", "ReplicationController") => typed!(api::core::v1::ReplicationController),
        ("apps", "Deployment") => typed!(api::apps::v1::Deployment),
        ("apps", "ReplicaSet") => typed!(api::apps::v1::ReplicaSet),
        ("apps", "StatefulSet") => typed!(api::apps::v1::StatefulSet),
        ("apps", "DaemonSet") => typed!(api::apps::v1::DaemonSet),
        ("batch", "Job") => typed!(api::batch::v1::Job),
        ("batch", "CronJob") => typed!(api::batch::v1::CronJob),
        ("rbac.authorization.k8s.io", "Role") => typed!(api::rbac::v1::Role),
        ("rbac.authorization.k8s.io", "ClusterRole") => typed!(api::rbac::v1::ClusterRole),
        ("rbac.authorization.k8s.io", "RoleBinding") => typed!(api::rbac::v1::RoleBinding),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            typed!(api::rbac::v1::ClusterRoleBinding)
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            typed!(apiext::CustomResourceDefinition)
        }
        ("coordination.k8s.io", "Lease") => typed!(api::coordination::v1::Lease),
        ("events.k8s.io", "Event") => typed!(api::events::v1::Event),
        ("policy", "PodDisruptionBudget") => typed!(api::policy::v1::PodDisruptionBudget),
        ("scheduling.k8s.io", "PriorityClass") => typed!(api::scheduling::v1::PriorityClass),
        ("networking.k8s.io", "Ingress") => typed!(api::networking::v1::Ingress),
        ("networking.k8s.io", "NetworkPolicy") => typed!(api::networking::v1::NetworkPolicy),
        ("authorization.k8s.io", "SubjectAccessReview") => {
            typed!(api::authorization::v1::SubjectAccessReview)
        }
        ("authorization.k8s.io", "LocalSubjectAccessReview") => {
            typed!(api::authorization::v1::LocalSubjectAccessReview)
        }
        ("authorization.k8s.io", "SelfSubjectAccessReview") => {
            typed!(api::authorization::v1::SelfSubjectAccessReview)
        }
        ("autoscaling", "Scale") => typed!(api::autoscaling::v1::Scale),
        // Every other metadata is at least an ObjectMeta.
        _ => check::<ObjectMeta>(obj.get("metadata")?, false, ".metadata"),
    }
}

/// Decode `v` into `T` with Go's rules; the first error Go would report.
fn check<T: DeserializeOwned>(v: &Value, root_resource: bool, base: &str) -> Option<TypeError> {
    let cx = RefCell::new(Ctx {
        structs: Vec::new(),
        fields: Vec::new(),
        full: if base.is_empty() {
            Vec::new()
        } else {
            vec![base.to_string()]
        },
        saved: None,
        fatal: None,
    });
    let de = De {
        v,
        cx: &cx,
        root: root_resource,
    };
    let _ = T::deserialize(de);
    let cx = cx.into_inner();
    cx.fatal.or(cx.saved)
}

struct Ctx {
    /// Names of the Go structs being decoded, innermost last.
    structs: Vec<&'static str>,
    /// Go's field stack: JSON names of struct fields only.
    fields: Vec<String>,
    /// The full path, with map keys and list indices.
    full: Vec<String>,
    /// The first type error (Go saves it and keeps decoding).
    saved: Option<TypeError>,
    /// An error that stopped decoding (Go returns it at once, over a saved one).
    fatal: Option<TypeError>,
}

impl Ctx {
    fn error(
        &self,
        value: &Value,
        value_desc: &str,
        go_type: &str,
        smd: &'static str,
    ) -> TypeError {
        let go = match (self.structs.last(), self.fields.is_empty()) {
            (Some(s), false) => format!(
                "json: cannot unmarshal {value_desc} into Go struct field {s}.{} of type {go_type}",
                self.fields.join(".")
            ),
            _ => format!("json: cannot unmarshal {value_desc} into Go value of type {go_type}"),
        };
        TypeError {
            go,
            full_path: self.full.concat(),
            smd_expected: smd,
            value: value.clone(),
            go_type: go_type.to_string(),
        }
    }

    fn plain(&self, value: &Value, text: String) -> TypeError {
        TypeError {
            go: text,
            full_path: self.full.concat(),
            smd_expected: "string",
            value: value.clone(),
            go_type: String::new(),
        }
    }
}

#[derive(Debug)]
struct DeErr(String);

impl fmt::Display for DeErr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeErr {}

impl de::Error for DeErr {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeErr(msg.to_string())
    }
}

fn stop<T>() -> Result<T, DeErr> {
    Err(DeErr("stopped".into()))
}

static NULL: Value = Value::Null;

/// A deserializer over a JSON value that behaves like Go's `encoding/json` decoder.
struct De<'v, 'c> {
    v: &'v Value,
    cx: &'c RefCell<Ctx>,
    /// The top level of a resource: `apiVersion` and `kind` were checked already.
    root: bool,
}

impl<'v, 'c> De<'v, 'c> {
    /// Save a type error (the first one wins) and go on.
    fn save(&self, value_desc: &str, go_type: &str, smd: &'static str) {
        let mut cx = self.cx.borrow_mut();
        if cx.saved.is_none() {
            let e = cx.error(self.v, value_desc, go_type, smd);
            cx.saved = Some(e);
        }
    }

    fn save_plain(&self, text: String) {
        let mut cx = self.cx.borrow_mut();
        if cx.saved.is_none() {
            let e = cx.plain(self.v, text);
            cx.saved = Some(e);
        }
    }

    fn fatal(&self, value_desc: &str, go_type: &str, smd: &'static str) -> DeErr {
        let mut cx = self.cx.borrow_mut();
        let e = cx.error(self.v, value_desc, go_type, smd);
        cx.fatal = Some(e);
        DeErr("fatal".into())
    }

    fn fatal_plain(&self, text: String) -> DeErr {
        let mut cx = self.cx.borrow_mut();
        let e = cx.plain(self.v, text);
        cx.fatal = Some(e);
        DeErr("fatal".into())
    }

    fn kind(&self) -> &'static str {
        go_value_kind(self.v)
    }

    fn int<'de, V: de::Visitor<'de>>(
        self,
        visitor: V,
        min: i128,
        max: i128,
        go: &str,
    ) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Null => visitor.visit_i64(0),
            Value::Number(n) => {
                let as_int = n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from));
                match as_int {
                    Some(i) if i >= min && i <= max => {
                        if i < 0 {
                            visitor.visit_i64(i as i64)
                        } else {
                            visitor.visit_u64(i as u64)
                        }
                    }
                    _ => {
                        self.save(&format!("number {n}"), go, "numeric (int or float)");
                        visitor.visit_i64(0)
                    }
                }
            }
            _ => {
                self.save(self.kind(), go, "numeric (int or float)");
                visitor.visit_i64(0)
            }
        }
    }

    fn map_access(self) -> Entries<'v, 'c> {
        let entries: Vec<(&'v str, &'v Value)> = match self.v {
            Value::Object(m) => m.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            _ => Vec::new(),
        };
        Entries {
            entries: entries.into_iter(),
            current: None,
            cx: self.cx,
            struct_fields: false,
        }
    }
}

fn expects<'de, V: de::Visitor<'de>>(visitor: &V) -> String {
    format!("{}", visitor as &dyn de::Expected)
}

/// Why a quantity string is refused, as `resource.ParseQuantity` words it (after the
/// whitespace trim of `Quantity.UnmarshalJSON`).
fn quantity_error(s: &str) -> Option<String> {
    use ocm_api::k8s::quantity::{Quantity, QuantityReason};
    match Quantity::parse(s.trim()) {
        // Beyond our 127 bits, but a quantity to Kubernetes.
        Err(ocm_api::Error::Quantity {
            reason: QuantityReason::OutOfRange,
            ..
        }) => None,
        Err(ocm_api::Error::Quantity { reason, .. }) => Some(reason.to_string()),
        Err(other) => Some(other.to_string()),
        Ok(_) => None,
    }
}

/// Where Go's base64 decoder stops on `s`, if it does.
fn base64_error(s: &str) -> Option<usize> {
    let bytes: Vec<(usize, u8)> = s
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b != b'\n' && *b != b'\r')
        .collect();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let mut i = 0;
    while i < bytes.len() {
        let quantum = &bytes[i..bytes.len().min(i + 4)];
        for (j, (pos, b)) in quantum.iter().enumerate() {
            if *b == b'=' {
                // Padding: only in the third or fourth place of the last quantum.
                if j < 2 {
                    return Some(*pos);
                }
                let rest = &bytes[i + j..];
                let pads = if j == 2 { 2 } else { 1 };
                if rest.len() < pads {
                    return Some(bytes.len());
                }
                if rest[..pads].iter().any(|(_, c)| *c != b'=') {
                    return Some(rest[1].0);
                }
                if rest.len() > pads {
                    return Some(rest[pads].0);
                }
                return None;
            }
            if !valid(*b) {
                return Some(*pos);
            }
        }
        if quantum.len() < 4 {
            return Some(quantum.first().map_or(0, |q| q.0));
        }
        i += 4;
    }
    None
}

impl<'de, 'v: 'de, 'c> de::Deserializer<'de> for De<'v, 'c> {
    type Error = DeErr;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        if expects(&visitor) == "IntOrString" {
            return match self.v {
                Value::String(s) => visitor.visit_str(s),
                Value::Number(n) => match n.as_i64() {
                    Some(i) if i32::try_from(i).is_ok() => visitor.visit_i64(i),
                    _ => Err(self.fatal(&format!("number {n}"), "int32", "string")),
                },
                Value::Null => visitor.visit_i64(0),
                _ => Err(self.fatal(self.kind(), "int32", "string")),
            };
        }
        match self.v {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or_default())
                }
            }
            Value::String(s) => visitor.visit_str(s),
            Value::Array(_) => self.deserialize_seq(visitor),
            Value::Object(_) => self.deserialize_map(visitor),
        }
    }

    fn deserialize_bool<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Null => visitor.visit_bool(false),
            _ => {
                self.save(self.kind(), "bool", "boolean");
                visitor.visit_bool(false)
            }
        }
    }

    fn deserialize_i8<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, i8::MIN.into(), i8::MAX.into(), "int8")
    }
    fn deserialize_i16<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, i16::MIN.into(), i16::MAX.into(), "int16")
    }
    fn deserialize_i32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, i32::MIN.into(), i32::MAX.into(), "int32")
    }
    fn deserialize_i64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, i64::MIN.into(), i64::MAX.into(), "int64")
    }
    fn deserialize_u8<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, 0, u8::MAX.into(), "uint8")
    }
    fn deserialize_u16<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, 0, u16::MAX.into(), "uint16")
    }
    fn deserialize_u32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, 0, u32::MAX.into(), "uint32")
    }
    fn deserialize_u64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.int(visitor, 0, u64::MAX.into(), "uint64")
    }

    fn deserialize_f32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Number(n) => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            Value::Null => visitor.visit_f64(0.0),
            _ => {
                self.save(self.kind(), "float64", "numeric (int or float)");
                visitor.visit_f64(0.0)
            }
        }
    }

    fn deserialize_char<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        let base64 = expects(&visitor) == "a base64-encoded string";
        let go = if base64 { "[]uint8" } else { "string" };
        match self.v {
            Value::String(s) => {
                if base64 {
                    if let Some(at) = base64_error(s) {
                        self.save_plain(format!("illegal base64 data at input byte {at}"));
                    }
                    return visitor.visit_str("");
                }
                visitor.visit_str(s)
            }
            Value::Null => visitor.visit_str(""),
            _ => {
                self.save(self.kind(), go, "string");
                visitor.visit_str("")
            }
        }
    }

    fn deserialize_string<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        match (name, self.v) {
            ("Quantity", Value::String(s)) => {
                if let Some(e) = quantity_error(s) {
                    return Err(self.fatal_plain(e));
                }
                visitor.visit_newtype_struct(self)
            }
            ("Quantity", Value::Number(_) | Value::Null) => visitor.visit_newtype_struct(self),
            ("Quantity", _) => {
                Err(self.fatal_plain(ocm_api::k8s::quantity::QuantityReason::Format.to_string()))
            }
            ("Time" | "MicroTime", v) if !v.is_string() && !v.is_null() => {
                Err(self.fatal(self.kind(), "string", "string"))
            }
            _ => visitor.visit_newtype_struct(self),
        }
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                cx: self.cx,
            }),
            Value::Null => visitor.visit_seq(Items {
                items: [].iter().enumerate(),
                cx: self.cx,
            }),
            _ => {
                let elem = probe(visitor, true);
                self.save(self.kind(), &format!("[]{elem}"), "list");
                stop()
            }
        }
    }

    fn deserialize_tuple<V: de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        match self.v {
            Value::Object(_) | Value::Null => visitor.visit_map(self.map_access()),
            _ => {
                let field = self.cx.borrow().fields.last().cloned().unwrap_or_default();
                let value = probe(visitor, false);
                let go = if value == "resource.Quantity"
                    && matches!(
                        field.as_str(),
                        "limits"
                            | "requests"
                            | "capacity"
                            | "allocatable"
                            | "hard"
                            | "used"
                            | "overhead"
                    ) {
                    "v1.ResourceList".to_string()
                } else {
                    format!("map[string]{value}")
                };
                self.save(self.kind(), &go, "map");
                stop()
            }
        }
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        let obj = match self.v {
            Value::Object(m) => Some(m),
            Value::Null => None,
            _ => {
                self.save(self.kind(), &format!("v1.{name}"), "map");
                None
            }
        };
        let mut entries: Vec<(&'v str, &'v Value)> = Vec::new();
        if let Some(m) = obj {
            for (k, v) in m {
                if self.root && (k == "apiVersion" || k == "kind") {
                    continue;
                }
                entries.push((k.as_str(), v));
            }
        }
        // Go leaves absent fields alone; serde would insist on required ones.
        for f in fields {
            if matches!(*f, "apiVersion" | "kind") {
                continue;
            }
            if obj.is_none_or(|m| !m.contains_key(*f)) {
                entries.push((f, &NULL));
            }
        }
        self.cx.borrow_mut().structs.push(name);
        let out = visitor.visit_map(Entries {
            entries: entries.into_iter(),
            current: None,
            cx: self.cx,
            struct_fields: true,
        });
        self.cx.borrow_mut().structs.pop();
        out
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_any(visitor)
    }

    fn deserialize_identifier<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        visitor.visit_unit()
    }
}

/// The entries of an object, as a struct's fields (pushed on Go's field stack) or a map's.
struct Entries<'v, 'c> {
    entries: std::vec::IntoIter<(&'v str, &'v Value)>,
    current: Option<(&'v str, &'v Value)>,
    cx: &'c RefCell<Ctx>,
    struct_fields: bool,
}

impl<'de, 'v: 'de, 'c> MapAccess<'de> for Entries<'v, 'c> {
    type Error = DeErr;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeErr> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.current = Some((k, v));
        seed.deserialize(k.into_deserializer()).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeErr> {
        let (k, v) = self.current.take().unwrap_or(("", &NULL));
        {
            let mut cx = self.cx.borrow_mut();
            if self.struct_fields {
                cx.fields.push(k.to_string());
            }
            cx.full.push(format!(".{k}"));
        }
        let out = seed.deserialize(De {
            v,
            cx: self.cx,
            root: false,
        });
        if out.is_ok() {
            let mut cx = self.cx.borrow_mut();
            if self.struct_fields {
                cx.fields.pop();
            }
            cx.full.pop();
        }
        out
    }
}

struct Items<'v, 'c> {
    items: std::iter::Enumerate<std::slice::Iter<'v, Value>>,
    cx: &'c RefCell<Ctx>,
}

impl<'de, 'v: 'de, 'c> SeqAccess<'de> for Items<'v, 'c> {
    type Error = DeErr;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeErr> {
        let Some((i, v)) = self.items.next() else {
            return Ok(None);
        };
        self.cx.borrow_mut().full.push(format!("[{i}]"));
        let out = seed.deserialize(De {
            v,
            cx: self.cx,
            root: false,
        });
        if out.is_ok() {
            self.cx.borrow_mut().full.pop();
        }
        out.map(Some)
    }
}

/// The Go type of the elements of a list (or the values of a map) a visitor decodes,
/// found by offering it one element and recording how it asks to decode it.
fn probe<'de, V: de::Visitor<'de>>(visitor: V, seq: bool) -> String {
    let found = RefCell::new(String::new());
    if seq {
        let _ = visitor.visit_seq(ProbeSeq {
            found: &found,
            done: false,
        });
    } else {
        let _ = visitor.visit_map(ProbeMap {
            found: &found,
            state: 0,
        });
    }
    let t = found.into_inner();
    if t.is_empty() {
        "interface {}".into()
    } else {
        t
    }
}

struct ProbeSeq<'f> {
    found: &'f RefCell<String>,
    done: bool,
}

impl<'de> SeqAccess<'de> for ProbeSeq<'_> {
    type Error = DeErr;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeErr> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        seed.deserialize(Probe { found: self.found }).map(Some)
    }
}

struct ProbeMap<'f> {
    found: &'f RefCell<String>,
    state: u8,
}

impl<'de> MapAccess<'de> for ProbeMap<'_> {
    type Error = DeErr;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeErr> {
        if self.state > 0 {
            return Ok(None);
        }
        self.state = 1;
        seed.deserialize("k".into_deserializer()).map(Some)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeErr> {
        seed.deserialize(Probe { found: self.found })
    }
}

/// A deserializer that only records the Go type it is asked for.
struct Probe<'f> {
    found: &'f RefCell<String>,
}

impl Probe<'_> {
    fn is<T>(&self, t: &str) -> Result<T, DeErr> {
        self.found.borrow_mut().push_str(t);
        stop()
    }
}

macro_rules! probe_as {
    ($($m:ident => $t:expr),* $(,)?) => {
        $(fn $m<V: de::Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DeErr> {
            self.is($t)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = DeErr;

    probe_as! {
        deserialize_bool => "bool",
        deserialize_i8 => "int8",
        deserialize_i16 => "int16",
        deserialize_i32 => "int32",
        deserialize_i64 => "int64",
        deserialize_u8 => "uint8",
        deserialize_u16 => "uint16",
        deserialize_u32 => "uint32",
        deserialize_u64 => "uint64",
        deserialize_f32 => "float32",
        deserialize_f64 => "float64",
        deserialize_char => "string",
        deserialize_string => "string",
        deserialize_bytes => "[]uint8",
        deserialize_byte_buf => "[]uint8",
        deserialize_unit => "interface {}",
        deserialize_identifier => "string",
        deserialize_ignored_any => "interface {}",
    }

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        if expects(&visitor) == "IntOrString" {
            return self.is("intstr.IntOrString");
        }
        self.is("interface {}")
    }

    fn deserialize_str<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        if expects(&visitor) == "a base64-encoded string" {
            return self.is("[]uint8");
        }
        self.is("string")
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        _v: V,
    ) -> Result<V::Value, DeErr> {
        self.is(&format!("v1.{name}"))
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        _v: V,
    ) -> Result<V::Value, DeErr> {
        self.is(match name {
            "Quantity" => "resource.Quantity",
            "RawExtension" => "runtime.RawExtension",
            "Time" => "v1.Time",
            "MicroTime" => "v1.MicroTime",
            other => return self.is(&format!("v1.{other}")),
        })
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.found.borrow_mut().push_str("[]");
        let _ = visitor.visit_seq(ProbeSeq {
            found: self.found,
            done: false,
        });
        stop()
    }

    fn deserialize_tuple<V: de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: de::Visitor<'de>>(
        self,
        _n: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeErr> {
        self.found.borrow_mut().push_str("map[string]");
        let _ = visitor.visit_map(ProbeMap {
            found: self.found,
            state: 0,
        });
        stop()
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.is(&format!("v1.{name}"))
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeErr> {
        self.deserialize_any(visitor)
    }
}

/// Go's `quoteChar`: how its scanner shows a byte in syntax errors.
/// Go's `quoteChar`: a character in single quotes, escaped as `strconv.Quote` escapes it.
fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        c => {
            let quoted = gojson::quote(&c.to_string());
            format!("'{}'", &quoted[1..quoted.len() - 1])
        }
    }
}

/// A value of a YAML document of any depth, deserialised level by level on a stack that
/// grows as needed.
struct DeepYaml(Value);

impl<'de> serde::Deserialize<'de> for DeepYaml {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::DeserializeSeed::deserialize(ocm_api::k8s::json::DeepValue, d).map(DeepYaml)
    }
}

/// The bracket JSON opens at the first place a value nests deeper than `limit` (in the
/// order its JSON is written), if it does.
fn first_too_deep(value: &Value, limit: usize) -> Option<char> {
    let mut pending = vec![(value, 1usize)];
    while let Some((v, depth)) = pending.pop() {
        let children: Vec<&Value> = match v {
            Value::Array(items) => items.iter().collect(),
            Value::Object(map) => map.values().collect(),
            _ => continue,
        };
        if depth > limit {
            return Some(if v.is_array() { '[' } else { '{' });
        }
        pending.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    None
}

/// A YAML request body as the JSON it converts to, read as kube-apiserver reads it: go-yaml
/// converts any depth it takes (its limit is 10,000 levels), then the JSON is decoded, which
/// refuses more than 10,000 levels (`couldn't get version/kind; json parse error: invalid
/// character '[' exceeded max depth`); YAML errors are go-yaml's where we know its words
/// (`yaml: document contains excessive aliasing` for alias bombs).
pub(crate) fn yaml_body(kind: &str, body: &[u8]) -> Result<Value, ApiError> {
    use ocm_api::k8s::json::MAX_NESTING_DEPTH;
    let text = std::str::from_utf8(body)
        .map_err(|_| unrecognized(kind, "yaml: invalid leading UTF-8 octet", body))?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let value = yaml_value(text).map_err(|message| unrecognized(kind, &message, body))?;
    if let Some(bracket) = first_too_deep(&value, MAX_NESTING_DEPTH) {
        ocm_api::k8s::json::drop_value(value);
        return Err(unrecognized(
            kind,
            &format!(
                "couldn't get version/kind; json parse error: invalid character {} exceeded max depth",
                quote_char(bracket)
            ),
            body,
        ));
    }
    Ok(value)
}

/// Parses one YAML document of any depth up to go-yaml's limit into JSON, level by level on
/// a stack that grows as needed; the error in go-yaml's words where we know them.
pub(crate) fn yaml_value(text: &str) -> Result<Value, String> {
    use ocm_api::k8s::json::MAX_NESTING_DEPTH;
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_NESTING_DEPTH + 1;
    budget.flow_nesting_limit = MAX_NESTING_DEPTH + 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    // Each level of a YAML parse takes tens of KiB of stack in a debug build.
    serde_saphyr::from_str_with_options::<DeepYaml>(text, options)
        .map(|d| d.0)
        .map_err(|e| {
            let e = match e.without_snippet() {
                serde_saphyr::Error::AliasError { error, .. } => error.without_snippet(),
                other => other,
            };
            match e {
                serde_saphyr::Error::Budget { breach, .. } => match breach {
                    serde_saphyr::budget::BudgetBreach::Depth { .. } => {
                        format!("yaml: exceeded max depth of {MAX_NESTING_DEPTH}")
                    }
                    _ => "yaml: document contains excessive aliasing".to_string(),
                },
                other => format!(
                    "yaml: {}",
                    other.to_string().lines().next().unwrap_or_default()
                ),
            }
        })
}

/// A JSON text as Go's `encoding/json` reads its strings: each byte that is not part of valid
/// UTF-8 becomes U+FFFD (the replacement character). Valid text is returned as it is.
pub(crate) fn go_utf8(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if std::str::from_utf8(text).is_ok() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for chunk in text.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push('\u{fffd}');
        }
    }
    std::borrow::Cow::Owned(out.into_bytes())
}

/// The error Go's `encoding/json` reports for a body that is not valid JSON, if it is not.
pub(crate) fn go_syntax_error(data: &[u8]) -> Option<String> {
    go_scan(data).err()
}

/// Scans a JSON text as Go's `encoding/json` scanner does: `Ok` with how deeply it nests, or
/// the scanner's error. Nesting deeper than Go's limit (10,000 levels) is an error at the
/// bracket that goes one level too far. The scan keeps its own stack of open brackets, so a
/// text of any depth is scanned without recursion.
pub(crate) fn go_scan(data: &[u8]) -> Result<usize, String> {
    let mut s = Scanner { data, pos: 0 };
    s.top()
}

struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
}

const EOF: &str = "unexpected end of JSON input";

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn bad(&self, context: &str) -> String {
        // Go's scanner works on bytes and shows the offending byte as the rune of its value
        // (so the first byte of `é` shows as `Ã`, and 0x81 as `\u0081`).
        let byte = self.data.get(self.pos).copied().unwrap_or(0);
        format!(
            "invalid character {} {context}",
            quote_char(char::from(byte))
        )
    }

    fn top(&mut self) -> Result<usize, String> {
        self.ws();
        let depth = self.value()?;
        self.ws();
        if self.pos < self.data.len() {
            return Err(self.bad("after top-level value"));
        }
        Ok(depth)
    }

    /// Opens an array or object at the current bracket, unless that goes past Go's limit.
    fn open(&mut self, open: &mut Vec<u8>, bracket: u8) -> Result<(), String> {
        if open.len() >= ocm_api::k8s::json::MAX_NESTING_DEPTH {
            return Err(self.bad("exceeded max depth"));
        }
        open.push(bracket);
        self.pos += 1;
        self.ws();
        Ok(())
    }

    /// An object key and its colon.
    fn key(&mut self) -> Result<(), String> {
        match self.peek() {
            None => return Err(EOF.into()),
            Some(b'"') => self.string()?,
            Some(_) => return Err(self.bad("looking for beginning of object key string")),
        }
        self.ws();
        match self.peek() {
            None => Err(EOF.into()),
            Some(b':') => {
                self.pos += 1;
                self.ws();
                Ok(())
            }
            Some(_) => Err(self.bad("after object key")),
        }
    }

    /// One whole value, arrays and objects included; returns how deeply it nests.
    fn value(&mut self) -> Result<usize, String> {
        let mut open: Vec<u8> = Vec::new();
        let mut deepest = 0;
        loop {
            // A value starts here.
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b @ (b'{' | b'[')) => {
                    self.open(&mut open, b)?;
                    deepest = deepest.max(open.len());
                    let close = if b == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        open.pop();
                    } else {
                        if b == b'{' {
                            self.key()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => self.string()?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal("true")?,
                Some(b'f') => self.literal("false")?,
                Some(b'n') => self.literal("null")?,
                Some(_) => return Err(self.bad("looking for beginning of value")),
            }
            // A value ended: close what it ends, until the next value starts.
            loop {
                let Some(&within) = open.last() else {
                    return Ok(deepest);
                };
                self.ws();
                match (within, self.peek()) {
                    (_, None) => return Err(EOF.into()),
                    (_, Some(b',')) => {
                        self.pos += 1;
                        self.ws();
                        if within == b'{' {
                            self.key()?;
                        }
                        break;
                    }
                    (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                        self.pos += 1;
                        open.pop();
                    }
                    (b'{', Some(_)) => return Err(self.bad("after object key:value pair")),
                    (_, Some(_)) => return Err(self.bad("after array element")),
                }
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        for (i, want) in word.bytes().enumerate() {
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b) if b == want => self.pos += 1,
                Some(_) => {
                    return Err(self.bad(&format!(
                        "in literal {word} (expecting {})",
                        quote_char(want as char)
                    )));
                }
            }
            let _ = i;
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        None => return Err(EOF.into()),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    None => return Err(EOF.into()),
                                    Some(c) if c.is_ascii_hexdigit() => self.pos += 1,
                                    Some(_) => {
                                        return Err(self.bad("in \\u hexadecimal character escape"));
                                    }
                                }
                            }
                        }
                        Some(_) => return Err(self.bad("in string escape code")),
                    }
                }
                Some(c) if c < 0x20 => return Err(self.bad("in string literal")),
                Some(_) => self.pos += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {}
                Some(_) => return Err(self.bad("in numeric literal")),
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {
                    self.digits();
                }
                Some(_) => return Err(self.bad("after decimal point in numeric literal")),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {
                    self.digits();
                }
                Some(_) => return Err(self.bad("in exponent of numeric literal")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(group: &str, kind: &str, crd: bool) -> ResourceInfo {
        let mut i = crate::storage::registry::Registry::with_builtins()
            .by_kind(group, kind)
            .map(|i| i.as_ref().clone())
            .unwrap_or_else(|| {
                let mut i = crate::storage::registry::Registry::with_builtins()
                    .by_kind("", "ConfigMap")
                    .map(|i| i.as_ref().clone())
                    .unwrap_or_else(|| unreachable!());
                i.group = group.into();
                i.kind = kind.into();
                i
            });
        if crd {
            i.crd_name = Some("x".into());
        }
        i
    }

    #[test]
    fn go_type_errors_name_struct_path_and_type() {
        let cm = info("", "ConfigMap", false);
        let e = type_error(&cm, &json!({"data": {"a": 1}})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        assert_eq!(
            e.smd(),
            ".data.a: expected string, got &value.valueUnstructured{Value:1}"
        );
        let e = type_error(&cm, &json!({"data": [1]})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
        );
        let e = type_error(&cm, &json!({"metadata": {"labels": {"a": true}}})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
        );
        let e = type_error(&cm, &json!({"metadata": "x"})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
        );
        assert!(
            type_error(
                &cm,
                &json!({"data": {"a": "b"}, "metadata": {"name": "x"}, "extra": 1})
            )
            .is_none()
        );
        assert!(type_error(&cm, &json!({"data": null, "metadata": {"labels": null}})).is_none());

        let dep = info("apps", "Deployment", false);
        let e = type_error(&dep, &json!({"spec": {"replicas": "3"}})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let e = type_error(
            &dep,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": 5}]}}}}),
        )
        .unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"
        );
        let e = type_error(
            &dep,
            &json!({"spec": {"template": {"spec": {"containers": {}}}}}),
        )
        .unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
        );
        let e = type_error(&dep, &json!({"spec": {"replicas": 1.5}})).unwrap();
        assert!(e.go.contains("number 1.5"), "{}", e.go);
        // The first type error wins.
        let e = type_error(
            &cm,
            &json!({"data": {"a": 1}, "metadata": {"labels": {"b": 2}}}),
        )
        .unwrap();
        assert!(e.go.contains("ConfigMap.data"), "{}", e.go);

        let secret = info("", "Secret", false);
        let e = type_error(&secret, &json!({"data": {"a": "!!!!"}})).unwrap();
        assert_eq!(e.go, "illegal base64 data at input byte 0");
        assert!(type_error(&secret, &json!({"data": {"a": "aGk="}})).is_none());
        let e = type_error(&secret, &json!({"data": {"a": 1}})).unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
        );

        let pod = info("", "Pod", false);
        let e = type_error(
            &pod,
            &json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]}}),
        )
        .unwrap();
        assert_eq!(
            e.go,
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
        assert!(type_error(
            &pod,
            &json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}})
        )
        .is_none());

        // `ParseQuantity` reads a missing number as zero: these decode (the old checker here
        // refused them), a suffix it does not know does not.
        for zero in [".", "-", "Ki", " 1. "] {
            assert!(
                type_error(
                    &pod,
                    &json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": zero}}}]}})
                )
                .is_none(),
                "{zero}"
            );
        }
        let e = type_error(
            &pod,
            &json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1e"}}}]}}),
        )
        .unwrap();
        assert_eq!(e.go, "unable to parse quantity's suffix");

        let cr = info("work.example.io", "Widget", true);
        let e = type_error(
            &cr,
            &json!({"metadata": {"labels": {"a": 1}}, "spec": {"x": 1}}),
        )
        .unwrap();
        assert_eq!(
            e.go,
            "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"
        );
        assert!(
            type_error(
                &cr,
                &json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": [1]}})
            )
            .is_none()
        );
    }

    #[test]
    fn type_meta_defaults_builtins_and_requires_kind_of_custom_resources() {
        let known = |g: &str, v: &str, k: &str| {
            crate::storage::registry::Registry::with_builtins()
                .by_kind(g, k)
                .is_some_and(|i| i.versions.iter().any(|x| x == v))
        };
        let cm = info("", "ConfigMap", false);
        let gvr = Gvr::new("", "v1", "configmaps");
        let body = json!({"metadata": {"name": "x"}});
        assert!(type_meta(&cm, &gvr, &body, b"{}", known).is_ok());
        let e = type_meta(
            &cm,
            &gvr,
            &json!({"apiVersion": "v2", "kind": "ConfigMap"}),
            b"{}",
            known,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        );
        let e = type_meta(
            &cm,
            &gvr,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
            b"{}",
            known,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Deployment in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion"
        );
        let cr = info("work.example.io", "Widget", true);
        let gvr = Gvr::new("work.example.io", "v1", "widgets");
        let raw = br#"{"apiVersion":"work.example.io/v1","metadata":{"name":"w"}}"#;
        let e =
            type_meta(&cr, &gvr, &serde_json::from_slice(raw).unwrap(), raw, known).unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{}' ({{\"apiVersion\":\"work.example.io ...)",
                std::str::from_utf8(raw).unwrap()
            )
        );
        let e = type_meta(&cr, &gvr, &json!({"kind": "Widget"}), b"{}", known).unwrap_err();
        assert_eq!(
            e.message,
            "the API version in the data () does not match the expected API version (work.example.io/v1)"
        );
    }

    #[test]
    fn syntax_errors_read_like_go() {
        assert_eq!(go_syntax_error(b"{\"a\":1}"), None);
        assert_eq!(go_syntax_error(b"{\"a\":"), Some(EOF.into()));
        assert_eq!(
            go_syntax_error(b"<xml/>").unwrap(),
            "invalid character '<' looking for beginning of value"
        );
        assert_eq!(
            go_syntax_error(b"{} x").unwrap(),
            "invalid character 'x' after top-level value"
        );
        assert_eq!(
            go_syntax_error(b"{\"a\" 1}").unwrap(),
            "invalid character '1' after object key"
        );
        assert_eq!(
            go_syntax_error(b"{\"a\":1 \"b\"}").unwrap(),
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(
            go_syntax_error(b"{a:1}").unwrap(),
            "invalid character 'a' looking for beginning of object key string"
        );
        assert_eq!(
            go_syntax_error(b"[tru]").unwrap(),
            "invalid character ']' in literal true (expecting 'e')"
        );
    }

    #[test]
    fn summaries_cut_and_hex() {
        assert_eq!(summarize(b""), "<empty>");
        assert_eq!(summarize(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(summarize(b"[1]"), "5b315d");
        assert_eq!(summarize(&[b'{'; 40]), format!("{} ...", "{".repeat(30)));
    }
}

#[cfg(test)]
mod yaml_tests {
    #[test]
    fn yaml_bodies_nest_as_deep_as_go_yaml_lets_them_on_a_small_stack() {
        let body = |n: usize| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: yn}}\ndata: {}{}\n",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let (ok, deep) = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let ok = super::yaml_body("ConfigMap", body(2_000).as_bytes())
                    .map(ocm_api::k8s::json::drop_value);
                let deep = super::yaml_body("ConfigMap", body(10_000).as_bytes())
                    .map(ocm_api::k8s::json::drop_value)
                    .unwrap_err();
                (ok.is_ok(), deep.message.clone())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(ok);
        assert!(
            deep.starts_with("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character '[' exceeded max depth ("),
            "{deep}"
        );
    }

    #[test]
    fn alias_bombs_are_go_yamls_excessive_aliasing() {
        let mut text =
            String::from("a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n");
        for (name, prev) in ["b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .zip(["a", "b", "c", "d", "e", "f", "g"])
        {
            text.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 9].join(",")
            ));
        }
        let e = super::yaml_body("ConfigMap", text.as_bytes()).unwrap_err();
        assert!(
            e.message.starts_with("the object provided is unrecognized (must be of type ConfigMap): yaml: document contains excessive aliasing (613a2026"),
            "{}",
            e.message
        );
    }
}
