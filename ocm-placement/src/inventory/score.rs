//! AddOnPlacementScores: normalising raw measurements into the `[-100, 100]` range placements
//! use, and writing them to the hub with a `validUntil`.
//!
//! [`normalize`] is the mapping OCM's documentation gives for score providers that know the
//! bounds of their measurement: `score = 200 * (x - min) / (max - min) - 100`, with values at
//! or above `max` scoring 100 and values at or below `min` scoring -100; the fraction is cut
//! toward zero, as the documented example provider converts its floating-point result to an
//! integer.
//!
//! ```
//! use ocm_placement::inventory::score::normalize;
//!
//! assert_eq!(normalize(50.0, 0.0, 100.0)?, 0);
//! assert_eq!(normalize(12.0, 0.0, 24.0)?, 0);
//! assert_eq!(normalize(1.0, 0.0, 3.0)?, -33); // -33.3… cut toward zero
//! assert_eq!(normalize(500.0, 0.0, 100.0)?, 100);
//! # Ok::<(), ocm_placement::Error>(())
//! ```

use ocm_api::cluster::v1alpha1::AddOnPlacementScoreItem;

use crate::Error;

/// The lowest valid score.
pub const MIN_SCORE: i32 = -100;
/// The highest valid score.
pub const MAX_SCORE: i32 = 100;

/// Maps the measurement `x`, known to lie in `[min, max]`, onto `[-100, 100]`.
///
/// `x >= max` gives 100 (checked first, so with `min == max` a value equal to both gives 100);
/// `x <= min` gives -100; otherwise `200 * (x - min) / (max - min) - 100` cut toward zero.
/// Non-finite inputs and `min > max` are errors.
pub fn normalize(x: f64, min: f64, max: f64) -> Result<i32, Error> {
    if !x.is_finite() || !min.is_finite() || !max.is_finite() {
        return Err(Error::InvalidScore(format!(
            "value {x}, min {min} and max {max} must be finite numbers"
        )));
    }
    if min > max {
        return Err(Error::InvalidScore(format!(
            "min {min} is greater than max {max}"
        )));
    }
    if x >= max {
        return Ok(MAX_SCORE);
    }
    if x <= min {
        return Ok(MIN_SCORE);
    }
    let score = 200.0 * (x - min) / (max - min) - 100.0;
    // In range by construction; the clamp only guards against rounding at the edges.
    let score = score
        .trunc()
        .clamp(f64::from(MIN_SCORE), f64::from(MAX_SCORE));
    // `score` is an integer in [-100, 100], so the conversion is exact.
    Ok(score as i32)
}

/// Merges `updates` into `current` (a list keyed by score name): existing names get the new
/// value, new names are appended, other scores are kept.
pub fn merge_scores(
    current: &[AddOnPlacementScoreItem],
    updates: &[AddOnPlacementScoreItem],
) -> Vec<AddOnPlacementScoreItem> {
    let mut out = current.to_vec();
    for u in updates {
        match out.iter_mut().find(|s| s.name == u.name) {
            Some(s) => s.value = u.value,
            None => out.push(u.clone()),
        }
    }
    out
}

#[cfg(feature = "controller")]
pub use writer::ScoreWriter;

#[cfg(feature = "controller")]
mod writer {
    use std::sync::Arc;
    use std::time::Duration;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use k8s_openapi::jiff::SignedDuration;
    use kube::Client;
    use kube::api::{Api, Patch, PatchParams, PostParams};
    use ocm_api::clock::{Clock, SystemClock};
    use ocm_api::cluster::v1alpha1::{AddOnPlacementScore, AddOnPlacementScoreItem};
    use serde_json::json;

    use super::merge_scores;
    use crate::error::{Error, kube_error};

    /// Writes AddOnPlacementScores for one managed cluster into its namespace on the hub.
    ///
    /// A write happens when a score changed, or when the stored `validUntil` is closer than
    /// half the validity period (so a periodic caller refreshes it well before it expires).
    #[derive(Clone)]
    pub struct ScoreWriter {
        hub: Client,
        cluster_name: String,
        resource_name: String,
        clock: Arc<dyn Clock>,
    }

    impl std::fmt::Debug for ScoreWriter {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ScoreWriter")
                .field("cluster_name", &self.cluster_name)
                .field("resource_name", &self.resource_name)
                .finish_non_exhaustive()
        }
    }

    impl ScoreWriter {
        /// A writer of the AddOnPlacementScore `resource_name` in namespace `cluster_name`.
        pub fn new(
            hub: Client,
            cluster_name: impl Into<String>,
            resource_name: impl Into<String>,
        ) -> Self {
            Self {
                hub,
                cluster_name: cluster_name.into(),
                resource_name: resource_name.into(),
                clock: Arc::new(SystemClock),
            }
        }

        /// Uses `clock` for `validUntil`.
        #[must_use]
        pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
            self.clock = clock;
            self
        }

        /// Creates the object if needed and sets `scores` (other score names are kept) with
        /// `validUntil = now + valid_for` (`None`: never expires). Returns the writes made.
        pub async fn write(
            &self,
            scores: &[AddOnPlacementScoreItem],
            valid_for: Option<Duration>,
        ) -> Result<usize, Error> {
            let api: Api<AddOnPlacementScore> =
                Api::namespaced(self.hub.clone(), &self.cluster_name);
            let (ns, name) = (&self.cluster_name, &self.resource_name);
            let mut writes = 0;
            let existing = match api
                .get_opt(name)
                .await
                .map_err(kube_error(format!("get AddOnPlacementScore {ns}/{name}")))?
            {
                Some(found) => found,
                None => {
                    let object = AddOnPlacementScore {
                        metadata: ObjectMeta {
                            name: Some(name.clone()),
                            namespace: Some(ns.clone()),
                            ..ObjectMeta::default()
                        },
                        spec: Default::default(),
                        status: None,
                    };
                    writes += 1;
                    api.create(&PostParams::default(), &object)
                        .await
                        .map_err(kube_error(format!(
                            "create AddOnPlacementScore {ns}/{name}"
                        )))?
                }
            };
            let status = existing.status.unwrap_or_default();
            let current = status.scores.unwrap_or_default();
            let merged = merge_scores(&current, scores);
            let now = self.clock.now_time().0;
            let valid_until = valid_for.map(|d| {
                let d = SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX);
                Time(now.saturating_add(d).unwrap_or(now))
            });
            let fresh = match (&status.valid_until, valid_for) {
                (None, None) => true,
                (Some(have), Some(d)) => {
                    let half = SignedDuration::try_from(d / 2).unwrap_or(SignedDuration::MAX);
                    have.0.duration_since(now) >= half
                }
                _ => false,
            };
            if merged == current && fresh {
                return Ok(writes);
            }
            let patch = json!({"status": {"scores": merged, "validUntil": valid_until}});
            api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_error(format!(
                    "update AddOnPlacementScore {ns}/{name}"
                )))?;
            Ok(writes + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_formula() {
        assert_eq!(normalize(0.0, 0.0, 100.0).ok(), Some(-100));
        assert_eq!(normalize(100.0, 0.0, 100.0).ok(), Some(100));
        assert_eq!(normalize(75.0, 0.0, 100.0).ok(), Some(50));
        assert_eq!(normalize(-5.0, 0.0, 100.0).ok(), Some(-100), "below min");
        assert_eq!(normalize(1e12, 0.0, 100.0).ok(), Some(100), "above max");
        assert_eq!(normalize(3.0, 2.0, 10.0).ok(), Some(-75));
    }

    #[test]
    fn truncates_toward_zero_on_both_sides() {
        // 200 * 1/3 - 100 = -33.33…; 200 * 2/3 - 100 = 33.33…; 200 * 0.999 - 100 = 99.8
        assert_eq!(normalize(1.0, 0.0, 3.0).ok(), Some(-33));
        assert_eq!(normalize(2.0, 0.0, 3.0).ok(), Some(33));
        assert_eq!(normalize(0.999, 0.0, 1.0).ok(), Some(99));
        assert_eq!(normalize(0.001, 0.0, 1.0).ok(), Some(-99));
    }

    #[test]
    fn equal_bounds_are_a_step() {
        assert_eq!(normalize(5.0, 5.0, 5.0).ok(), Some(100));
        assert_eq!(normalize(6.0, 5.0, 5.0).ok(), Some(100));
        assert_eq!(normalize(4.0, 5.0, 5.0).ok(), Some(-100));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(normalize(f64::NAN, 0.0, 1.0).is_err());
        assert!(normalize(1.0, 0.0, f64::INFINITY).is_err());
        assert!(normalize(1.0, 2.0, 1.0).is_err());
    }

    #[test]
    fn merge_keeps_other_scores() {
        let item = |n: &str, v| AddOnPlacementScoreItem {
            name: n.into(),
            value: v,
        };
        let merged = merge_scores(&[item("a", 1), item("b", 2)], &[item("b", 5), item("c", 3)]);
        assert_eq!(merged, [item("a", 1), item("b", 5), item("c", 3)]);
    }
}
