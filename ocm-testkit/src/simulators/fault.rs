//! Fault injection: make chosen requests fail the way a real server can.

use std::sync::Mutex;
use std::time::Duration;

use crate::api_error::ApiError;

/// A rule: requests that match get `error` instead of being served.
///
/// ```
/// use ocm_testkit::fault::FaultRule;
/// // The next two creates of configmaps fail with 500.
/// let rule = FaultRule::new(500).verb("create").resource("configmaps").times(2);
/// # let _ = rule;
/// ```
#[derive(Debug, Clone)]
pub struct FaultRule {
    verb: Option<String>,
    resource: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    remaining: Option<usize>,
    delay: Option<Duration>,
    error: Option<ApiError>,
    drop_watch_after: Option<usize>,
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        410 => "Expired",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}

impl FaultRule {
    /// Fail matching requests with this HTTP status and a generic message.
    pub fn new(code: u16) -> Self {
        let mut error = ApiError::new(code, reason_for(code), format!("injected fault ({code})"));
        if code == 429 {
            error.retry_after_seconds = Some(1);
        }
        Self {
            verb: None,
            resource: None,
            namespace: None,
            name: None,
            remaining: None,
            delay: None,
            error: Some(error),
            drop_watch_after: None,
        }
    }

    /// A rule that lets matching watches start, then closes each one's connection after
    /// `events` watch messages (events and bookmarks), as a dropped network connection or an
    /// API server restart would.
    /// Clients are expected to reconnect.
    pub fn drop_watch_after(events: usize) -> Self {
        Self {
            verb: Some("watch".into()),
            error: None,
            drop_watch_after: Some(events),
            ..Self::new(500)
        }
    }

    /// Only delay matching requests; they are then served normally.
    pub fn delay_only(delay: Duration) -> Self {
        Self {
            error: None,
            delay: Some(delay),
            ..Self::new(500)
        }
    }

    /// Fail with exactly this error.
    pub fn error(mut self, error: ApiError) -> Self {
        self.error = Some(error);
        self
    }

    /// Only requests with this verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`).
    pub fn verb(mut self, verb: impl Into<String>) -> Self {
        self.verb = Some(verb.into());
        self
    }

    /// Only requests for this plural resource (e.g. `configmaps`).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// Only requests in this namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Only requests for this object name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Fire only this many times (default: forever).
    pub fn times(mut self, n: usize) -> Self {
        self.remaining = Some(n);
        self
    }

    /// Wait this long before answering.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn matches(
        &self,
        verb: &str,
        resource: Option<&str>,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> bool {
        self.remaining != Some(0)
            && self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| Some(r) == resource)
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| Some(n) == namespace)
            && self.name.as_deref().is_none_or(|n| Some(n) == name)
    }
}

/// What a fault rule decided for one request.
#[derive(Debug, Clone, Default)]
pub(crate) struct FaultAction {
    pub(crate) delay: Option<Duration>,
    pub(crate) error: Option<ApiError>,
    pub(crate) drop_watch_after: Option<usize>,
}

/// The active fault rules of one fake cluster.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Vec<FaultRule>>,
}

impl Faults {
    /// Add a rule; rules are checked in the order added.
    pub fn add(&self, rule: FaultRule) {
        self.rules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rule);
    }

    /// Remove every rule.
    pub fn clear(&self) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub(crate) fn check(
        &self,
        verb: &str,
        resource: Option<&str>,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Option<FaultAction> {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        if rules.is_empty() {
            return None;
        }
        let rule = rules
            .iter_mut()
            .find(|r| r.matches(verb, resource, namespace, name))?;
        if let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
        Some(FaultAction {
            delay: rule.delay,
            error: rule.error.clone(),
            drop_watch_after: rule.drop_watch_after,
        })
    }
}
