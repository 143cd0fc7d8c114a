//! The `TaintToleration` filter: a cluster passes when the placement tolerates every taint.
//!
//! Upstream rules, quirks included:
//!
//! * `PreferNoSelect` taints are always tolerated (the effect currently does nothing).
//! * `NoSelectIfNew` taints are tolerated for clusters already in this placement's decisions.
//! * Otherwise the first toleration that matches (effect empty or equal, key empty or equal,
//!   `Equal`/empty operator with equal values or `Exists`) and has not expired tolerates the
//!   taint. `tolerationSeconds` counts from the taint's `timeAdded`; the toleration holds while
//!   `now` is strictly before `timeAdded + tolerationSeconds` (an unset `timeAdded` is Go's
//!   zero time, so any finite `tolerationSeconds` has expired).
//! * Tolerations are validated first: an empty key needs operator `Exists`; `Exists` needs an
//!   empty value.

use ocm_api::cluster::v1::TaintEffect;
use ocm_api::cluster::v1beta1::{TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS, Toleration};

use crate::snapshot::CompactTaint;
use crate::symbols::{Sym, Symbols};

/// Plugin name, as reported in statuses and explanations.
pub const NAME: &str = "TaintToleration";

/// Upstream's messages for a toleration with an empty key and an operator other than
/// `Exists`, and for an `Exists` toleration that carries a value (defined once in `ocm-api`).
pub use ocm_api::cluster::{
    TOLERATION_EMPTY_KEY_NEEDS_EXISTS as MSG_EMPTY_KEY_NEEDS_EXISTS,
    TOLERATION_EXISTS_WITHOUT_VALUE as MSG_EXISTS_NEEDS_EMPTY_VALUE,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equal,
    Exists,
    /// An operator string upstream does not know: never matches.
    Other,
}

/// A toleration translated into symbols.
#[derive(Debug, Clone)]
pub(crate) struct CompiledToleration {
    /// `None` = empty key = every key.
    key: Option<Sym>,
    operator: Operator,
    value: Sym,
    /// `None` = every effect.
    effect: Option<TaintEffect>,
    /// Validity in nanoseconds (wrapping like Go's `time.Duration` arithmetic); `None` forever.
    seconds_nanos: Option<i64>,
}

/// Validates tolerations the way upstream does; the first failure wins.
pub(crate) fn validate(tolerations: &[Toleration]) -> Result<(), &'static str> {
    for t in tolerations {
        let key_empty = t.key.as_deref().unwrap_or_default().is_empty();
        let op = t.operator.as_deref().unwrap_or_default();
        if key_empty && op != TOLERATION_OP_EXISTS {
            return Err(MSG_EMPTY_KEY_NEEDS_EXISTS);
        }
        if op == TOLERATION_OP_EXISTS && !t.value.as_deref().unwrap_or_default().is_empty() {
            return Err(MSG_EXISTS_NEEDS_EMPTY_VALUE);
        }
    }
    Ok(())
}

/// Translates tolerations into the snapshot's symbols.
pub(crate) fn compile(tolerations: &[Toleration], symbols: &Symbols) -> Vec<CompiledToleration> {
    tolerations
        .iter()
        .map(|t| {
            let key = t.key.as_deref().unwrap_or_default();
            CompiledToleration {
                key: if key.is_empty() {
                    None
                } else {
                    Some(symbols.lookup(key))
                },
                operator: match t.operator.as_deref().unwrap_or_default() {
                    "" | TOLERATION_OP_EQUAL => Operator::Equal,
                    TOLERATION_OP_EXISTS => Operator::Exists,
                    _ => Operator::Other,
                },
                value: symbols.lookup(t.value.as_deref().unwrap_or_default()),
                effect: t.effect.clone(),
                // Go multiplies a time.Duration (int64 nanoseconds), which wraps on overflow.
                seconds_nanos: t.toleration_seconds.map(|s| s.wrapping_mul(1_000_000_000)),
            }
        })
        .collect()
}

/// Outcome of checking one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every taint is tolerated; `expires` is the earliest instant (ns since epoch) at which a
    /// time-limited toleration used for it runs out.
    Tolerated { expires: Option<i128> },
    /// The taint at this index is not tolerated.
    NotTolerated { taint: usize },
}

/// Checks a cluster's taints against compiled tolerations at `now` (ns since epoch).
#[inline]
pub(crate) fn check(
    taints: &[CompactTaint],
    tolerations: &[CompiledToleration],
    in_decisions: bool,
    now: i128,
) -> Verdict {
    let mut expires: Option<i128> = None;
    for (i, taint) in taints.iter().enumerate() {
        match taint.effect {
            TaintEffect::PreferNoSelect => continue,
            TaintEffect::NoSelectIfNew if in_decisions => continue,
            _ => {}
        }
        let mut tolerated = false;
        for t in tolerations {
            if t.effect.as_ref().is_some_and(|e| *e != taint.effect) {
                continue;
            }
            if t.key.is_some_and(|k| k != taint.key) {
                continue;
            }
            let matched = match t.operator {
                Operator::Equal => t.value == taint.value,
                Operator::Exists => true,
                Operator::Other => false,
            };
            if !matched {
                continue;
            }
            match t.seconds_nanos {
                None => {
                    tolerated = true;
                    break;
                }
                Some(nanos) => {
                    let deadline = taint.time_added + i128::from(nanos);
                    if now < deadline {
                        expires = Some(expires.map_or(deadline, |e| e.min(deadline)));
                        tolerated = true;
                        break;
                    }
                    // Expired: keep looking at the following tolerations.
                }
            }
        }
        if !tolerated {
            return Verdict::NotTolerated { taint: i };
        }
    }
    Verdict::Tolerated { expires }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::GO_ZERO_TIME_NANOS;

    const NOW: i128 = 1_640_995_200 * 1_000_000_000; // 2022-01-01T00:00:00Z
    const SEC: i128 = 1_000_000_000;

    struct Fixture {
        symbols: Symbols,
    }

    impl Fixture {
        fn new() -> Self {
            let mut symbols = Symbols::default();
            for s in ["", "key1", "key2", "value1", "value2"] {
                symbols.intern(s);
            }
            Fixture { symbols }
        }
        fn taint(&self, key: &str, value: &str, effect: TaintEffect, added: i128) -> CompactTaint {
            CompactTaint {
                key: self.symbols.lookup(key),
                value: self.symbols.lookup(value),
                effect,
                time_added: added,
                has_value: true,
                has_time: true,
            }
        }
    }

    fn tol(
        key: &str,
        op: &str,
        value: &str,
        effect: Option<TaintEffect>,
        secs: Option<i64>,
    ) -> Toleration {
        let opt = |s: &str| {
            if s.is_empty() {
                None
            } else {
                Some(s.to_string())
            }
        };
        Toleration {
            key: opt(key),
            operator: opt(op),
            value: opt(value),
            effect,
            toleration_seconds: secs,
        }
    }

    fn tolerated(
        f: &Fixture,
        taints: &[CompactTaint],
        tols: &[Toleration],
        in_decisions: bool,
    ) -> bool {
        let c = compile(tols, &f.symbols);
        matches!(
            check(taints, &c, in_decisions, NOW),
            Verdict::Tolerated { .. }
        )
    }

    use TaintEffect::{NoSelect, NoSelectIfNew, PreferNoSelect};

    #[test]
    fn no_select_matching() {
        let f = Fixture::new();
        let t = [f.taint("key1", "value1", NoSelect, NOW)];
        assert!(!tolerated(&f, &t, &[], false));
        assert!(tolerated(
            &f,
            &t,
            &[tol("key1", "Equal", "value1", None, None)],
            false
        ));
        assert!(!tolerated(
            &f,
            &t,
            &[tol("key1", "Equal", "", None, None)],
            false
        ));
        assert!(tolerated(
            &f,
            &t,
            &[tol("key1", "Exists", "", None, None)],
            false
        ));
        assert!(!tolerated(
            &f,
            &t,
            &[tol("key2", "Exists", "", None, None)],
            false
        ));
        // Empty operator means Equal.
        assert!(tolerated(
            &f,
            &t,
            &[tol("key1", "", "value1", None, None)],
            false
        ));
        // Unknown operator never matches.
        assert!(!tolerated(
            &f,
            &t,
            &[tol("key1", "Gt", "value1", None, None)],
            false
        ));
        // Empty key with Exists tolerates everything.
        assert!(tolerated(
            &f,
            &t,
            &[tol("", "Exists", "", None, None)],
            false
        ));
        let two = [
            f.taint("key1", "value2", NoSelect, NOW),
            f.taint("key2", "value1", NoSelect, NOW),
        ];
        assert!(!tolerated(
            &f,
            &two,
            &[tol("key1", "Equal", "value1", None, None)],
            false
        ));
    }

    #[test]
    fn validation_messages() {
        assert_eq!(
            validate(&[tol("", "Equal", "value1", None, None)]),
            Err(MSG_EMPTY_KEY_NEEDS_EXISTS)
        );
        assert_eq!(
            validate(&[tol("", "", "", None, None)]),
            Err(MSG_EMPTY_KEY_NEEDS_EXISTS)
        );
        assert_eq!(
            validate(&[tol("", "Exists", "value1", None, None)]),
            Err(MSG_EXISTS_NEEDS_EMPTY_VALUE)
        );
        assert_eq!(
            validate(&[tol("key1", "Exists", "value1", None, None)]),
            Err(MSG_EXISTS_NEEDS_EMPTY_VALUE)
        );
        assert_eq!(validate(&[tol("key1", "Exists", "", None, None)]), Ok(()));
        // The first failure wins.
        assert_eq!(
            validate(&[
                tol("k", "Exists", "v", None, None),
                tol("", "Equal", "", None, None)
            ]),
            Err(MSG_EXISTS_NEEDS_EMPTY_VALUE)
        );
    }

    #[test]
    fn no_select_if_new() {
        let f = Fixture::new();
        let t = [f.taint("key1", "value1", NoSelectIfNew, NOW)];
        let matching = [tol("key1", "Equal", "value1", None, None)];
        let other = [tol("key2", "Equal", "value1", None, None)];
        assert!(!tolerated(&f, &t, &[], false));
        assert!(tolerated(&f, &t, &[], true));
        assert!(tolerated(&f, &t, &matching, false));
        assert!(tolerated(&f, &t, &matching, true));
        assert!(!tolerated(&f, &t, &other, false));
        assert!(tolerated(&f, &t, &other, true));
        // In-decision clusters keep a NoSelectIfNew taint even with a mismatching effect/value.
        assert!(tolerated(
            &f,
            &t,
            &[tol("key1", "Equal", "value2", Some(NoSelect), None)],
            true
        ));
    }

    #[test]
    fn prefer_no_select_is_always_tolerated() {
        let f = Fixture::new();
        let t = [f.taint("key1", "value1", PreferNoSelect, NOW)];
        assert!(tolerated(&f, &t, &[], false));
        assert!(tolerated(
            &f,
            &t,
            &[tol("key1", "Equal", "value1", None, None)],
            false
        ));
        assert!(tolerated(
            &f,
            &t,
            &[tol("key2", "Equal", "value2", None, None)],
            false
        ));
    }

    #[test]
    fn effect_matching() {
        let f = Fixture::new();
        let ns = [f.taint("key1", "value1", NoSelect, NOW)];
        assert!(tolerated(
            &f,
            &ns,
            &[tol("key1", "Equal", "value1", None, None)],
            false
        ));
        assert!(!tolerated(
            &f,
            &ns,
            &[tol("key1", "Equal", "value1", Some(NoSelectIfNew), None)],
            false
        ));
        assert!(tolerated(
            &f,
            &ns,
            &[tol("key1", "Equal", "value1", Some(NoSelect), None)],
            false
        ));
        let nsin = [f.taint("key1", "value1", NoSelectIfNew, NOW)];
        assert!(tolerated(
            &f,
            &nsin,
            &[tol("key1", "Equal", "value1", None, None)],
            false
        ));
        assert!(tolerated(
            &f,
            &nsin,
            &[tol("key1", "Equal", "value1", Some(NoSelectIfNew), None)],
            false
        ));
        assert!(!tolerated(
            &f,
            &nsin,
            &[tol("key1", "Equal", "value2", Some(NoSelectIfNew), None)],
            false
        ));
    }

    #[test]
    fn toleration_seconds_boundary_and_expiry() {
        let f = Fixture::new();
        let tols = compile(&[tol("key1", "Exists", "", None, Some(10))], &f.symbols);
        let at = |added: i128| {
            check(
                &[f.taint("key1", "value1", NoSelect, added)],
                &tols,
                false,
                NOW,
            )
        };
        assert_eq!(
            at(NOW - 8 * SEC),
            Verdict::Tolerated {
                expires: Some(NOW + 2 * SEC)
            }
        );
        assert_eq!(
            at(NOW - 9 * SEC),
            Verdict::Tolerated {
                expires: Some(NOW + SEC)
            }
        );
        // At the deadline the toleration has expired.
        assert_eq!(at(NOW - 10 * SEC), Verdict::NotTolerated { taint: 0 });
        // Unset timeAdded is Go's zero time: long expired.
        assert_eq!(at(GO_ZERO_TIME_NANOS), Verdict::NotTolerated { taint: 0 });
        // Also applies to NoSelectIfNew taints of new clusters.
        let new = [f.taint("key1", "value1", NoSelectIfNew, NOW - 10 * SEC)];
        assert_eq!(
            check(&new, &tols, false, NOW),
            Verdict::NotTolerated { taint: 0 }
        );
        assert_eq!(
            check(&new, &tols, true, NOW),
            Verdict::Tolerated { expires: None }
        );
    }

    #[test]
    fn expired_toleration_falls_through_to_next() {
        let f = Fixture::new();
        let tols = compile(
            &[
                tol("key1", "Exists", "", None, Some(1)),
                tol("key1", "Exists", "", None, None),
            ],
            &f.symbols,
        );
        let t = [f.taint("key1", "value1", NoSelect, NOW - 5 * SEC)];
        assert_eq!(
            check(&t, &tols, false, NOW),
            Verdict::Tolerated { expires: None }
        );
    }
}
