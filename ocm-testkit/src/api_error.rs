//! Errors as kube-apiserver reports them: `metav1.Status` bodies.

use serde_json::{Value, json};

use crate::storage::registry::GroupResource;

/// One entry of `status.details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Machine-readable cause, e.g. `FieldValueRequired` or `FieldManagerConflict`.
    pub reason: String,
    /// Human-readable explanation.
    pub message: String,
    /// The field the cause is about, e.g. `metadata.name` or `.data.key`.
    pub field: String,
}

/// A failed API request, carrying everything a `metav1.Status` body holds.
///
/// Messages are worded as kube-apiserver words them, so assertions written
/// against a real cluster hold here too. The fields live in [`ApiStatus`]
/// (boxed, so results stay small) and are reached through `Deref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError(Box<ApiStatus>);

impl std::ops::Deref for ApiError {
    type Target = ApiStatus;
    fn deref(&self) -> &ApiStatus {
        &self.0
    }
}

impl std::ops::DerefMut for ApiError {
    fn deref_mut(&mut self) -> &mut ApiStatus {
        &mut self.0
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} {})", self.message, self.code, self.reason)
    }
}

impl std::error::Error for ApiError {}

/// The contents of an [`ApiError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiStatus {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.StatusReason`, e.g. `NotFound`.
    pub reason: String,
    /// The message kube-apiserver would write.
    pub message: String,
    /// `details.name`.
    pub name: Option<String>,
    /// `details.group`.
    pub group: Option<String>,
    /// `details.kind`: the resource (plural) for most reasons, the Kind for `Invalid`.
    pub kind: Option<String>,
    /// `details.causes`.
    pub causes: Vec<Cause>,
    /// `details.retryAfterSeconds`.
    pub retry_after_seconds: Option<u32>,
}

impl ApiError {
    /// An error with a code, reason and message and no details.
    pub fn new(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self(Box::new(ApiStatus {
            code,
            reason: reason.into(),
            message: message.into(),
            name: None,
            group: None,
            kind: None,
            causes: Vec::new(),
            retry_after_seconds: None,
        }))
    }

    fn with_target(mut self, gr: &GroupResource, name: &str) -> Self {
        self.name = Some(name.to_string()).filter(|n| !n.is_empty());
        self.group = Some(gr.group.clone()).filter(|g| !g.is_empty());
        self.kind = Some(gr.resource.clone());
        self
    }

    /// `404 NotFound`: `configmaps "x" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{gr} \"{name}\" not found")).with_target(gr, name)
    }

    /// `409 AlreadyExists`: `configmaps "x" already exists`.
    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{gr} \"{name}\" already exists"),
        )
        .with_target(gr, name)
    }

    /// `409 Conflict` for a stale resourceVersion.
    pub fn conflict(gr: &GroupResource, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {gr} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again"
            ),
        )
        .with_target(gr, name)
    }

    /// `409 Conflict` for a server-side apply that overrules other managers.
    pub fn apply_conflict(message: String, causes: Vec<Cause>) -> Self {
        let mut e = Self::new(409, "Conflict", message);
        e.causes = causes;
        e
    }

    /// `422 Invalid`: `ConfigMap "x" is invalid: field: reason`.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        // Each distinct cause once in the message, as kube-apiserver aggregates them.
        let mut parts: Vec<String> = Vec::with_capacity(causes.len());
        for c in &causes {
            let part = format!("{}: {}", c.field, c.message);
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
        let list = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{qualified} \"{name}\" is invalid: {list}"),
        );
        e.name = Some(name.to_string()).filter(|n| !n.is_empty());
        e.group = Some(group.to_string()).filter(|g| !g.is_empty());
        e.kind = Some(kind.to_string()).filter(|k| !k.is_empty());
        e.causes = causes;
        e
    }

    /// `400 BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `403 Forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// `405 MethodNotAllowed`.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// `410 Expired`, as a watch or continue token that is too old gets.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// `415 UnsupportedMediaType` for a PATCH whose content type is not a patch type the
    /// resource takes, worded as kube-apiserver words it (`strategic` is false for custom
    /// resources, which take no strategic merge patches).
    pub fn unsupported_patch_type(strategic: bool) -> Self {
        let types = if strategic {
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
        } else {
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        };
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {types}"
            ),
        )
    }

    /// `500 InternalError`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// The `metav1.Status` JSON body.
    pub fn to_status(&self) -> Value {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // A plain error has no reason, and `Status` leaves an empty one out.
        if self.reason.is_empty()
            && let Some(m) = body.as_object_mut()
        {
            m.remove("reason");
        }
        let mut details = serde_json::Map::new();
        if let Some(n) = &self.name {
            details.insert("name".into(), json!(n));
        }
        if let Some(g) = &self.group {
            details.insert("group".into(), json!(g));
        }
        if let Some(k) = &self.kind {
            details.insert("kind".into(), json!(k));
        }
        if !self.causes.is_empty() {
            let causes: Vec<Value> = self
                .causes
                .iter()
                .map(|c| {
                    let mut cause = json!({"reason": c.reason, "message": c.message});
                    if !c.field.is_empty() {
                        cause["field"] = json!(c.field);
                    }
                    cause
                })
                .collect();
            details.insert("causes".into(), Value::Array(causes));
        }
        if let Some(r) = self.retry_after_seconds {
            details.insert("retryAfterSeconds".into(), json!(r));
        }
        if !details.is_empty() {
            body["details"] = Value::Object(details);
        }
        body
    }
}

/// Shorthand for store operations.
pub type ApiResult<T> = std::result::Result<T, ApiError>;
