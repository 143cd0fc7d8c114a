//! The pure core of leader election: what a candidate does with the Lease it just read.
//!
//! The rules are client-go's (`tryAcquireOrRenew` with a Lease lock), so our replicas and
//! client-go ones can share a Lease:
//!
//! * a Lease that does not exist is created with us as holder;
//! * a Lease held by someone else is left alone while it is *valid*: its record (holder,
//!   renew time, acquire time, duration, transitions) changed less than `leaseDuration` ago,
//!   **as measured by our own monotonic clock** from the moment we first saw that record;
//! * a Lease with no holder (released), or whose record has not changed for
//!   `leaseDuration`, or held by us, is taken: our holder identity, a fresh `renewTime`, the
//!   `acquireTime` and `leaseTransitions` kept when we already held it, else `acquireTime` now
//!   and one more transition.
//!
//! Times written into the Lease (`renewTime`, `acquireTime`) are for people and other
//! tools; no decision compares them with our clock, so clocks that disagree between nodes
//! (skew) change nothing: a holder whose `renewTime` looks an hour old to us still holds the
//! Lease as long as it keeps changing it, and one whose `renewTime` lies in our future loses
//! it once it stops.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// The Lease record as last seen, and when (by our monotonic clock) it was first seen so.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    /// The record.
    pub spec: LeaseSpec,
    /// When we first saw this record.
    pub at: Instant,
}

/// What to do after reading the Lease.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// No Lease: create it with this spec.
    Create(LeaseSpec),
    /// Write this spec (renew ours, or take a released or expired one), with the read
    /// resourceVersion as precondition.
    Update(LeaseSpec),
    /// Someone else holds a valid Lease: try again later. `expires_in` is how long it stays
    /// valid if its holder stops renewing now.
    Held {
        /// The holder.
        holder: String,
        /// How long until it could be taken, at the earliest.
        expires_in: Duration,
    },
}

/// Records that `current` (the Lease's spec as read at `now`, or `None` when there is no Lease)
/// was seen, keeping the first time it was seen unchanged.
pub fn observe(
    previous: Option<Observed>,
    current: Option<&LeaseSpec>,
    now: Instant,
) -> Option<Observed> {
    let current = current?;
    match previous {
        Some(seen) if same_record(&seen.spec, current) => Some(seen),
        _ => Some(Observed {
            spec: current.clone(),
            at: now,
        }),
    }
}

/// Two records are the same when every field client-go's record has is equal.
fn same_record(a: &LeaseSpec, b: &LeaseSpec) -> bool {
    a.holder_identity == b.holder_identity
        && a.lease_duration_seconds == b.lease_duration_seconds
        && a.acquire_time == b.acquire_time
        && a.renew_time == b.renew_time
        && a.lease_transitions == b.lease_transitions
}

/// What `identity` does with the Lease whose record is `observed` (`None`: there is none), at
/// `now` (monotonic) and `wall` (the time written into the Lease).
pub fn decide(
    identity: &str,
    observed: Option<&Observed>,
    lease_duration: Duration,
    now: Instant,
    wall: Timestamp,
) -> Decision {
    let duration_seconds = i32::try_from(lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
    let Some(observed) = observed else {
        return Decision::Create(LeaseSpec {
            holder_identity: Some(identity.to_string()),
            lease_duration_seconds: Some(duration_seconds),
            acquire_time: Some(MicroTime(wall)),
            renew_time: Some(MicroTime(wall)),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        });
    };
    let spec = &observed.spec;
    let holder = spec.holder_identity.clone().unwrap_or_default();
    let ours = holder == identity;
    if !holder.is_empty() && !ours {
        let valid_until = observed.at + lease_duration;
        if valid_until > now {
            return Decision::Held {
                holder,
                expires_in: valid_until - now,
            };
        }
    }
    let transitions = spec.lease_transitions.unwrap_or(0);
    let (acquire_time, transitions) = if ours {
        (
            spec.acquire_time.clone().or(Some(MicroTime(wall))),
            transitions,
        )
    } else {
        (Some(MicroTime(wall)), transitions.saturating_add(1))
    };
    Decision::Update(LeaseSpec {
        holder_identity: Some(identity.to_string()),
        lease_duration_seconds: Some(duration_seconds),
        acquire_time,
        renew_time: Some(MicroTime(wall)),
        lease_transitions: Some(transitions),
        // Fields we do not manage (coordinated leader election) are kept as they are.
        strategy: spec.strategy.clone(),
        preferred_holder: spec.preferred_holder.clone(),
    })
}

/// The record a holder writes when it steps down: no holder, a one-second duration, the
/// transitions kept (client-go's release), so any candidate takes it at once.
pub fn released(observed: &LeaseSpec, wall: Timestamp) -> LeaseSpec {
    LeaseSpec {
        holder_identity: None,
        lease_duration_seconds: Some(1),
        acquire_time: Some(MicroTime(wall)),
        renew_time: Some(MicroTime(wall)),
        lease_transitions: observed.lease_transitions,
        strategy: observed.strategy.clone(),
        preferred_holder: observed.preferred_holder.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(15);

    fn wall(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn held_by(holder: &str, renewed: &str, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(15),
            acquire_time: Some(MicroTime(wall("2026-01-01T00:00:00Z"))),
            renew_time: Some(MicroTime(wall(renewed))),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn no_lease_is_created_with_us_as_holder() {
        let now = Instant::now();
        let Decision::Create(spec) = decide("me", None, LEASE, now, wall("2026-05-01T10:00:00Z"))
        else {
            panic!("create");
        };
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        assert_eq!(spec.lease_duration_seconds, Some(15));
        assert_eq!(spec.lease_transitions, Some(0));
        assert_eq!(spec.acquire_time, spec.renew_time);
    }

    #[test]
    fn a_lease_renewed_by_its_holder_is_never_taken_however_old_its_times_look() {
        // The holder's clock is an hour behind ours: its renewTime always looks stale.
        let start = Instant::now();
        let mut seen = None;
        for (i, renewed) in [
            "2026-05-01T09:00:00Z",
            "2026-05-01T09:00:10Z",
            "2026-05-01T09:00:20Z",
        ]
        .iter()
        .enumerate()
        {
            let now = start + Duration::from_secs(10 * i as u64);
            seen = observe(seen, Some(&held_by("other", renewed, 3)), now);
            let decision = decide(
                "me",
                seen.as_ref(),
                LEASE,
                now,
                wall("2026-05-01T10:00:00Z"),
            );
            assert!(
                matches!(decision, Decision::Held { ref holder, .. } if holder == "other"),
                "{decision:?}"
            );
        }
    }

    #[test]
    fn a_holder_that_stops_renewing_loses_the_lease_after_the_duration_even_if_its_clock_is_ahead()
    {
        // The holder's clock is an hour ahead: its renewTime lies in our future.
        let start = Instant::now();
        let record = held_by("other", "2026-05-01T11:00:00Z", 3);
        let seen = observe(None, Some(&record), start);
        // Re-reading the same record does not restart the wait.
        let seen = observe(seen, Some(&record), start + Duration::from_secs(10));
        let at_14s = decide(
            "me",
            seen.as_ref(),
            LEASE,
            start + Duration::from_secs(14),
            wall("2026-05-01T10:00:14Z"),
        );
        assert_eq!(
            at_14s,
            Decision::Held {
                holder: "other".into(),
                expires_in: Duration::from_secs(1)
            }
        );
        let Decision::Update(taken) = decide(
            "me",
            seen.as_ref(),
            LEASE,
            start + Duration::from_secs(15),
            wall("2026-05-01T10:00:15Z"),
        ) else {
            panic!("taken");
        };
        assert_eq!(taken.holder_identity.as_deref(), Some("me"));
        assert_eq!(taken.lease_transitions, Some(4), "one more transition");
        assert_eq!(
            taken.acquire_time,
            Some(MicroTime(wall("2026-05-01T10:00:15Z")))
        );
    }

    #[test]
    fn renewing_our_own_lease_keeps_acquire_time_and_transitions() {
        let now = Instant::now();
        let ours = held_by("me", "2026-05-01T10:00:00Z", 2);
        let seen = observe(None, Some(&ours), now);
        let Decision::Update(renewed) = decide(
            "me",
            seen.as_ref(),
            LEASE,
            now,
            wall("2026-05-01T10:00:05Z"),
        ) else {
            panic!("renew");
        };
        assert_eq!(renewed.acquire_time, ours.acquire_time);
        assert_eq!(renewed.lease_transitions, Some(2));
        assert_eq!(
            renewed.renew_time,
            Some(MicroTime(wall("2026-05-01T10:00:05Z")))
        );
    }

    #[test]
    fn a_released_lease_is_taken_at_once() {
        let now = Instant::now();
        let other = held_by("other", "2026-05-01T10:00:00Z", 5);
        let release = released(&other, wall("2026-05-01T10:00:01Z"));
        assert_eq!(release.holder_identity, None);
        assert_eq!(release.lease_duration_seconds, Some(1));
        assert_eq!(release.lease_transitions, Some(5));
        let seen = observe(None, Some(&release), now);
        let Decision::Update(taken) = decide(
            "me",
            seen.as_ref(),
            LEASE,
            now,
            wall("2026-05-01T10:00:02Z"),
        ) else {
            panic!("taken");
        };
        assert_eq!(taken.holder_identity.as_deref(), Some("me"));
        assert_eq!(taken.lease_transitions, Some(6));
    }

    #[test]
    fn coordinated_election_fields_are_kept() {
        let now = Instant::now();
        let mut ours = held_by("me", "2026-05-01T10:00:00Z", 0);
        ours.strategy = Some("OldestEmulationVersion".into());
        ours.preferred_holder = Some("someone".into());
        let seen = observe(None, Some(&ours), now);
        let Decision::Update(renewed) = decide(
            "me",
            seen.as_ref(),
            LEASE,
            now,
            wall("2026-05-01T10:00:05Z"),
        ) else {
            panic!("renew");
        };
        assert_eq!(renewed.strategy, ours.strategy);
        assert_eq!(renewed.preferred_holder, ours.preferred_holder);
    }
}
