//! An injectable source of "now".
//!
//! Every time-dependent decision in the SDK (condition transition times, toleration expiry,
//! rollout deadlines and soak times, score validity) takes its time from a [`Clock`], so tests
//! can freeze and move time with [`ManualClock`] while production uses [`SystemClock`].
//!
//! ```
//! use ocm_api::clock::{Clock, ManualClock};
//!
//! let clock = ManualClock::new("2030-01-01T00:00:00Z".parse().unwrap());
//! clock.advance(std::time::Duration::from_secs(90));
//! assert_eq!(clock.now().to_string(), "2030-01-01T00:01:30Z");
//! ```

use std::sync::Mutex;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// A source of the current instant.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;

    /// The current instant as a Kubernetes `metav1.Time`, truncated to whole seconds as the
    /// API server stores it.
    fn now_time(&self) -> Time {
        let now = self.now();
        Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
    }
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to.
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

    /// Moves the clock to `to` (backwards too).
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }

    /// Moves the clock forward by `by` (saturating at the largest instant).
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

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::default();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(std::time::Duration::from_millis(1500));
        assert_eq!(clock.now().as_millisecond() - t0.as_millisecond(), 1500);
        assert_eq!(clock.now_time().0.as_second(), t0.as_second() + 1);
        clock.set(t0);
        assert_eq!(clock.now(), t0);
        let shared: std::sync::Arc<dyn Clock> = std::sync::Arc::new(ManualClock::new(t0));
        assert_eq!(shared.now(), t0);
    }

    #[test]
    fn system_clock_is_recent() {
        assert!(SystemClock.now().as_second() > 1_700_000_000);
    }
}
