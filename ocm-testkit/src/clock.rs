//! Injectable time source for timestamps written by the fake API server.

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

/// A source of "now" for creationTimestamp, deletionTimestamp and managedFields times.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when a test moves it.
///
/// ```
/// use ocm_testkit::{Clock, ManualClock};
/// let clock = ManualClock::new("2030-01-01T00:00:00Z".parse().unwrap());
/// clock.advance(std::time::Duration::from_secs(90));
/// assert_eq!(clock.now().to_string(), "2030-01-01T00:01:30Z");
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
}

impl ManualClock {
    /// A clock frozen at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Move the clock to `to` (backwards too, if a test wants that).
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }

    /// Move the clock forward by `by`.
    pub fn advance(&self, by: std::time::Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
        *now = now.saturating_add(by).unwrap_or(*now);
    }
}

impl Default for ManualClock {
    /// Frozen at 2025-01-01T00:00:00Z.
    fn default() -> Self {
        Self::new(Timestamp::from_second(1_735_689_600).unwrap_or(Timestamp::UNIX_EPOCH))
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Format an instant the way Kubernetes writes `metav1.Time` (RFC 3339, whole seconds, UTC).
pub(crate) fn format_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
