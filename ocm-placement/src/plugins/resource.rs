//! The `ResourceAllocatableCPU` and `ResourceAllocatableMemory` prioritizers.
//!
//! Only clusters reporting the resource in both `status.allocatable` and `status.capacity`
//! take part; the others get no score (0 in the sum). With `min` and `max` the extremes of the
//! allocatable values among the candidates: all equal → 100 each; otherwise
//! `trunc((ratio - 0.5) * 2.0 * 100.0)` with `ratio = (a - min) / (max - min)`, computed in
//! exactly this order (so 0.6 gives 19, not 20, like upstream).

/// Name of the CPU prioritizer.
pub const NAME_CPU: &str = "ResourceAllocatableCPU";
/// Name of the memory prioritizer.
pub const NAME_MEMORY: &str = "ResourceAllocatableMemory";

/// The score of an allocatable value given the extremes.
pub fn score(value: f64, min: f64, max: f64) -> i64 {
    if max == min {
        return 100;
    }
    let ratio = (value - min) / (max - min);
    ((ratio - 0.5) * 2.0 * 100.0) as i64
}

/// Scores aligned values (`None` = the cluster lacks the resource).
pub(crate) fn score_all(values: impl Iterator<Item = Option<f64>> + Clone) -> Vec<Option<i64>> {
    let (min, max) = values
        .clone()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    values.map(|v| v.map(|v| score(v, min, max))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_numbers() {
        let s = |v: &[Option<f64>]| score_all(v.iter().copied());
        assert_eq!(
            s(&[Some(20.0), Some(60.0), Some(100.0)]),
            vec![Some(-100), Some(0), Some(100)]
        );
        assert_eq!(s(&[Some(5.0), Some(5.0)]), vec![Some(100), Some(100)]);
        assert_eq!(s(&[Some(0.0), Some(0.0)]), vec![Some(100), Some(100)]);
        assert_eq!(s(&[None, None]), vec![None, None]);
        assert_eq!(
            s(&[Some(10.0), Some(6.0), Some(2.0)]),
            vec![Some(100), Some(0), Some(-100)]
        );
        // CPU 10/7/9 → 100, -100, 33; memory 50/90/80 → -100, 100, 50.
        assert_eq!(
            s(&[Some(10.0), Some(7.0), Some(9.0)]),
            vec![Some(100), Some(-100), Some(33)]
        );
        assert_eq!(
            s(&[Some(50.0), Some(90.0), Some(80.0)]),
            vec![Some(-100), Some(100), Some(50)]
        );
        // The float trap: 80 within 50..100 is 19, not 20.
        assert_eq!(score(80.0, 50.0, 100.0), 19);
    }
}
