//! Which prioritizers a placement enables, and with which weights.
//!
//! Defaults (the `Additive` base) are `Balance` and `Steady` with weight 1. `Exact` uses only
//! the configured entries; `Additive` (or an empty mode) overrides the defaults with them.
//! Entries are keyed by their whole score coordinate: a later plain `BuiltIn` entry with the same
//! name overrides an earlier one, while every coordinate that carries an `addOn` is a key of its
//! own (upstream keys by a struct holding a pointer), so two identical AddOn entries both count.
//! A weight of 0 disables the prioritizer (an unknown built-in name with weight 0 is ignored).
//! A score coordinate type this SDK does not know makes the placement Misconfigured
//! (`incorrect score coordinate type: <type>`).

use std::sync::Arc;

use ocm_api::cluster::v1beta1::{
    PRIORITIZER_MODE_ADDITIVE, PRIORITIZER_MODE_EXACT, PrioritizerPolicy, ScoreCoordinateType,
};

use crate::plugins::{Prioritizer, addon, balance, resource, steady};

/// A prioritizer the placement enables.
#[derive(Clone)]
pub(crate) enum Kind {
    Balance,
    Steady,
    Cpu,
    Memory,
    AddOn { resource: String, score: String },
    Custom(Arc<dyn Prioritizer>),
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Kind {
    pub(crate) fn name(&self) -> String {
        match self {
            Kind::Balance => balance::NAME.to_string(),
            Kind::Steady => steady::NAME.to_string(),
            Kind::Cpu => resource::NAME_CPU.to_string(),
            Kind::Memory => resource::NAME_MEMORY.to_string(),
            Kind::AddOn { resource, score } => addon::name(resource, score),
            Kind::Custom(p) => p.name().to_string(),
        }
    }
}

/// An enabled prioritizer with its weight.
#[derive(Debug, Clone)]
pub(crate) struct Enabled {
    pub(crate) kind: Kind,
    pub(crate) weight: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    /// A coordinate without `addOn`: compared by value.
    Plain(ScoreCoordinateType, Option<String>),
    /// A coordinate with `addOn`: unique.
    Unique(usize),
}

/// Resolves the placement's prioritizer policy. The error text is the Misconfigured message
/// (plugin name empty).
pub(crate) fn enabled(
    policy: Option<&PrioritizerPolicy>,
    custom: &[Arc<dyn Prioritizer>],
) -> Result<Vec<Enabled>, String> {
    let mode = policy.and_then(|p| p.mode.as_deref()).unwrap_or_default();
    let mut weights: Vec<(Key, Option<ocm_api::cluster::v1beta1::AddOnScore>, i32)> = Vec::new();
    match mode {
        PRIORITIZER_MODE_EXACT => {}
        "" | PRIORITIZER_MODE_ADDITIVE => {
            for name in [balance::NAME, steady::NAME] {
                weights.push((
                    Key::Plain(ScoreCoordinateType::BuiltIn, Some(name.to_string())),
                    None,
                    1,
                ));
            }
            for p in custom {
                if p.default_weight() != 0 && !is_builtin_name(p.name()) {
                    let key = Key::Plain(ScoreCoordinateType::BuiltIn, Some(p.name().to_string()));
                    upsert(&mut weights, key, None, p.default_weight());
                }
            }
        }
        other => return Err(format!("incorrect prioritizer policy mode: {other}")),
    }
    let configs = policy
        .and_then(|p| p.configurations.as_deref())
        .unwrap_or_default();
    for (i, config) in configs.iter().enumerate() {
        let c = &config.score_coordinate;
        let key = match &c.add_on {
            Some(_) => Key::Unique(i),
            None => Key::Plain(c.type_.clone(), c.built_in.clone()),
        };
        upsert(
            &mut weights,
            key,
            c.add_on.clone(),
            config.effective_weight(),
        );
    }

    let mut out = Vec::new();
    for (key, add_on, weight) in weights {
        if weight == 0 {
            continue;
        }
        let (type_, built_in) = match &key {
            Key::Plain(t, b) => (t.clone(), b.clone().unwrap_or_default()),
            Key::Unique(i) => {
                let c = &configs[*i].score_coordinate;
                (c.type_.clone(), c.built_in.clone().unwrap_or_default())
            }
        };
        let kind = match type_ {
            ScoreCoordinateType::BuiltIn => match built_in.as_str() {
                balance::NAME => Kind::Balance,
                steady::NAME => Kind::Steady,
                resource::NAME_CPU => Kind::Cpu,
                resource::NAME_MEMORY => Kind::Memory,
                name => match custom.iter().find(|p| p.name() == name) {
                    Some(p) => Kind::Custom(Arc::clone(p)),
                    None => return Err(format!("incorrect builtin prioritizer: {name}")),
                },
            },
            ScoreCoordinateType::AddOn => match add_on {
                Some(a) => Kind::AddOn {
                    resource: a.resource_name,
                    score: a.score_name,
                },
                None => return Err("addOn should not be empty".to_string()),
            },
            // A type this scheduler does not know (a newer OCM may add one). Upstream treats
            // every type but `BuiltIn` as `AddOn`; here the placement is Misconfigured.
            other => return Err(format!("incorrect score coordinate type: {other}")),
        };
        out.push(Enabled { kind, weight });
    }
    Ok(out)
}

fn is_builtin_name(name: &str) -> bool {
    [
        balance::NAME,
        steady::NAME,
        resource::NAME_CPU,
        resource::NAME_MEMORY,
    ]
    .contains(&name)
}

fn upsert(
    weights: &mut Vec<(Key, Option<ocm_api::cluster::v1beta1::AddOnScore>, i32)>,
    key: Key,
    add_on: Option<ocm_api::cluster::v1beta1::AddOnScore>,
    weight: i32,
) {
    match weights.iter_mut().find(|(k, _, _)| *k == key) {
        Some(entry) => entry.2 = weight,
        None => weights.push((key, add_on, weight)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::cluster::v1beta1::{AddOnScore, PrioritizerConfig, ScoreCoordinate};

    fn builtin(name: &str, weight: Option<i32>) -> PrioritizerConfig {
        PrioritizerConfig {
            score_coordinate: ScoreCoordinate {
                type_: ScoreCoordinateType::BuiltIn,
                built_in: Some(name.to_string()),
                add_on: None,
            },
            weight,
        }
    }

    fn addon_cfg(res: &str, score: &str, weight: i32) -> PrioritizerConfig {
        PrioritizerConfig {
            score_coordinate: ScoreCoordinate {
                type_: ScoreCoordinateType::AddOn,
                built_in: None,
                add_on: Some(AddOnScore {
                    resource_name: res.into(),
                    score_name: score.into(),
                }),
            },
            weight: Some(weight),
        }
    }

    fn policy(mode: Option<&str>, configs: Vec<PrioritizerConfig>) -> PrioritizerPolicy {
        PrioritizerPolicy {
            mode: mode.map(str::to_string),
            configurations: Some(configs),
        }
    }

    fn summary(r: Result<Vec<Enabled>, String>) -> Result<Vec<(String, i32)>, String> {
        r.map(|v| v.into_iter().map(|e| (e.kind.name(), e.weight)).collect())
    }

    #[test]
    fn defaults_additive_and_exact() {
        let s = |p: Option<PrioritizerPolicy>| summary(enabled(p.as_ref(), &[]));
        let d = Ok(vec![("Balance".to_string(), 1), ("Steady".to_string(), 1)]);
        assert_eq!(s(None), d);
        assert_eq!(s(Some(policy(Some(""), vec![]))), d);
        assert_eq!(s(Some(policy(Some("Additive"), vec![]))), d);
        assert_eq!(s(Some(policy(Some("Exact"), vec![]))), Ok(vec![]));
        assert_eq!(
            s(Some(policy(
                Some("Exact"),
                vec![
                    builtin("Balance", Some(3)),
                    builtin("ResourceAllocatableMemory", None)
                ]
            ))),
            Ok(vec![
                ("Balance".to_string(), 3),
                ("ResourceAllocatableMemory".to_string(), 1)
            ])
        );
        assert_eq!(
            s(Some(policy(None, vec![builtin("Steady", Some(0))]))),
            Ok(vec![("Balance".to_string(), 1)])
        );
        assert_eq!(
            s(Some(policy(Some("Other"), vec![]))),
            Err("incorrect prioritizer policy mode: Other".into())
        );
    }

    #[test]
    fn builtin_errors_and_duplicates() {
        let s = |p: PrioritizerPolicy| summary(enabled(Some(&p), &[]));
        assert_eq!(
            s(policy(None, vec![builtin("Spread", Some(1))])),
            Err("incorrect builtin prioritizer: Spread".into())
        );
        // Unknown name with weight 0 is silently ignored.
        assert!(s(policy(None, vec![builtin("Spread", Some(0))])).is_ok());
        // Later BuiltIn duplicate overrides.
        assert_eq!(
            s(policy(
                Some("Exact"),
                vec![builtin("Balance", Some(2)), builtin("Balance", Some(5))]
            )),
            Ok(vec![("Balance".to_string(), 5)])
        );
        // Identical AddOn coordinates are distinct keys: both run.
        assert_eq!(
            s(policy(
                Some("Exact"),
                vec![addon_cfg("demo", "demo", 1), addon_cfg("demo", "demo", 2)]
            )),
            Ok(vec![
                ("AddOn/demo/demo".to_string(), 1),
                ("AddOn/demo/demo".to_string(), 2)
            ])
        );
        let mut missing = addon_cfg("a", "b", 1);
        missing.score_coordinate.add_on = None;
        assert_eq!(
            s(policy(Some("Exact"), vec![missing])),
            Err("addOn should not be empty".into())
        );
    }

    #[test]
    fn a_score_coordinate_type_this_sdk_does_not_know_is_a_misconfiguration() {
        let s = |p: PrioritizerPolicy| summary(enabled(Some(&p), &[]));
        let mut newer = addon_cfg("demo", "demo", 1);
        newer.score_coordinate.type_ = ScoreCoordinateType::from("Metric");
        assert_eq!(
            s(policy(None, vec![newer.clone()])),
            Err("incorrect score coordinate type: Metric".into())
        );
        // Disabled (weight 0), it is ignored like any other disabled entry.
        newer.weight = Some(0);
        assert!(s(policy(None, vec![newer])).is_ok());
    }
}
