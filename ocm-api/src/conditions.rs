//! Condition helpers with the semantics of Kubernetes' `meta.SetStatusCondition` family.
//!
//! Every OCM status carries `metav1.Condition` lists. The rules are upstream's:
//!
//! * setting a condition whose type is not present appends it, with `lastTransitionTime` taken
//!   from the new condition or, when it has none, from `now`;
//! * setting a condition whose type is present updates reason, message and observedGeneration,
//!   and changes `lastTransitionTime` **only when the status changes**;
//! * a change report (`true`) lets callers skip writes when nothing changed.
//!
//! Time is passed in, never read: these helpers are deterministic.
//!
//! ```
//! use ocm_api::conditions::{self, ConditionStatus, NewCondition};
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//!
//! let t0 = Time("2026-01-01T00:00:00Z".parse().unwrap());
//! let t1 = Time("2026-01-01T00:05:00Z".parse().unwrap());
//! let mut list = Vec::new();
//!
//! let applied = NewCondition::new("Applied", ConditionStatus::True, "AppliedManifestWorkComplete", "Apply manifest work complete");
//! assert!(conditions::set(&mut list, applied.clone(), &t0));
//! // Same condition again: nothing changes, not even the transition time.
//! assert!(!conditions::set(&mut list, applied, &t1));
//! assert_eq!(list[0].last_transition_time, t0);
//!
//! // A new status moves the transition time.
//! let failed = NewCondition::new("Applied", ConditionStatus::False, "AppliedManifestWorkFailed", "Failed to apply manifest work");
//! assert!(conditions::set(&mut list, failed, &t1));
//! assert_eq!(list[0].last_transition_time, t1);
//! assert!(conditions::is_false(&list, "Applied"));
//! ```

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// The status of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// `True`
    True,
    /// `False`
    False,
    /// `Unknown`
    Unknown,
}

impl ConditionStatus {
    /// The wire form: `True`, `False` or `Unknown`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }

    /// Parses the wire form; anything else is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "True" => Some(Self::True),
            "False" => Some(Self::False),
            "Unknown" => Some(Self::Unknown),
            _ => None,
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(value: bool) -> Self {
        if value { Self::True } else { Self::False }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A condition to set: everything but the transition time, which [`set`] manages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewCondition {
    /// Condition type, e.g. `Applied`.
    pub type_: String,
    /// Condition status.
    pub status: ConditionStatus,
    /// CamelCase reason.
    pub reason: String,
    /// Human-readable message; may be empty.
    pub message: String,
    /// The generation the condition was computed from, if any.
    pub observed_generation: Option<i64>,
    /// An explicit transition time; when `None`, [`set`] uses `now` on a transition.
    pub last_transition_time: Option<Time>,
}

impl NewCondition {
    /// A condition with the given type, status, reason and message.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
            observed_generation: None,
            last_transition_time: None,
        }
    }

    /// Sets the observed generation.
    #[must_use]
    pub fn observed_generation(mut self, generation: i64) -> Self {
        self.observed_generation = Some(generation);
        self
    }

    /// Sets an explicit transition time.
    #[must_use]
    pub fn last_transition_time(mut self, time: Time) -> Self {
        self.last_transition_time = Some(time);
        self
    }

    /// The full condition, with `now` as its transition time unless one was given.
    pub fn into_condition(self, now: &Time) -> Condition {
        Condition {
            last_transition_time: self.last_transition_time.unwrap_or_else(|| now.clone()),
            message: self.message,
            observed_generation: self.observed_generation,
            reason: self.reason,
            status: self.status.as_str().to_string(),
            type_: self.type_,
        }
    }
}

/// Sets `new` in `conditions` with `meta.SetStatusCondition` semantics and reports whether
/// anything changed.
pub fn set(conditions: &mut Vec<Condition>, new: NewCondition, now: &Time) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(new.into_condition(now));
        return true;
    };
    let mut changed = false;
    if existing.status != new.status.as_str() {
        existing.status = new.status.as_str().to_string();
        existing.last_transition_time = new.last_transition_time.unwrap_or_else(|| now.clone());
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Removes the condition of type `type_`; reports whether one was removed.
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// The condition of type `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The status of the condition of type `type_`, if present and well-formed.
pub fn status(conditions: &[Condition], type_: &str) -> Option<ConditionStatus> {
    find(conditions, type_).and_then(|c| ConditionStatus::parse(&c.status))
}

/// Whether the condition of type `type_` is present with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    status(conditions, type_) == Some(ConditionStatus::True)
}

/// Whether the condition of type `type_` is present with status `False`.
pub fn is_false(conditions: &[Condition], type_: &str) -> bool {
    status(conditions, type_) == Some(ConditionStatus::False)
}

/// Whether the condition of type `type_` is present with the given status.
pub fn is_present_and_equal(
    conditions: &[Condition],
    type_: &str,
    expected: ConditionStatus,
) -> bool {
    status(conditions, type_) == Some(expected)
}

/// Whether two condition lists are equal ignoring transition times and order, the comparison
/// controllers use to decide whether a status write is needed.
pub fn equal_ignoring_time(a: &[Condition], b: &[Condition]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| {
            find(b, &x.type_).is_some_and(|y| {
                x.status == y.status
                    && x.reason == y.reason
                    && x.message == y.message
                    && x.observed_generation == y.observed_generation
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    #[test]
    fn adds_missing_condition_with_now() {
        let mut list = vec![];
        let now = t("2026-01-01T00:00:00Z");
        assert!(set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R", "m").observed_generation(3),
            &now
        ));
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].last_transition_time, now);
        assert_eq!(list[0].observed_generation, Some(3));
        assert_eq!(list[0].status, "True");
    }

    #[test]
    fn explicit_transition_time_is_kept() {
        let mut list = vec![];
        let given = t("2025-06-01T00:00:00Z");
        set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R", "m")
                .last_transition_time(given.clone()),
            &t("2026-01-01T00:00:00Z"),
        );
        assert_eq!(list[0].last_transition_time, given);
    }

    #[test]
    fn reason_message_generation_change_keeps_time() {
        let t0 = t("2026-01-01T00:00:00Z");
        let t1 = t("2026-01-02T00:00:00Z");
        let mut list = vec![];
        set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R", "m"),
            &t0,
        );
        assert!(set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R2", "m2").observed_generation(2),
            &t1
        ));
        assert_eq!(list[0].last_transition_time, t0);
        assert_eq!(list[0].reason, "R2");
        assert_eq!(list[0].message, "m2");
        assert_eq!(list[0].observed_generation, Some(2));
    }

    #[test]
    fn status_change_moves_time_and_unchanged_reports_false() {
        let t0 = t("2026-01-01T00:00:00Z");
        let t1 = t("2026-01-02T00:00:00Z");
        let mut list = vec![];
        set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R", "m"),
            &t0,
        );
        assert!(!set(
            &mut list,
            NewCondition::new("A", ConditionStatus::True, "R", "m"),
            &t1
        ));
        assert!(set(
            &mut list,
            NewCondition::new("A", ConditionStatus::Unknown, "R", "m"),
            &t1
        ));
        assert_eq!(list[0].last_transition_time, t1);
        assert_eq!(status(&list, "A"), Some(ConditionStatus::Unknown));
    }

    #[test]
    fn remove_find_and_compare() {
        let now = t("2026-01-01T00:00:00Z");
        let mut a = vec![];
        set(
            &mut a,
            NewCondition::new("A", ConditionStatus::True, "R", ""),
            &now,
        );
        set(
            &mut a,
            NewCondition::new("B", ConditionStatus::False, "R", ""),
            &now,
        );
        let mut b = a.clone();
        b.reverse();
        b[0].last_transition_time = t("2027-01-01T00:00:00Z");
        assert!(equal_ignoring_time(&a, &b));
        assert!(is_true(&a, "A") && is_false(&a, "B") && !is_true(&a, "C"));
        assert!(is_present_and_equal(&a, "B", ConditionStatus::False));
        assert!(remove(&mut a, "A"));
        assert!(!remove(&mut a, "A"));
        assert!(find(&a, "A").is_none());
        assert!(!equal_ignoring_time(&a, &b));
    }
}
