//! The Placement conditions `PlacementSatisfied` and `PlacementMisconfigured`.

use ocm_api::conditions::{ConditionStatus, NewCondition};
use ocm_api::constants::placement as p;

use crate::result::{ScheduleStatus, StatusCode};

/// What the satisfied condition depends on.
#[derive(Debug, Clone, Default)]
pub(crate) struct SatisfiedInputs<'a> {
    pub(crate) spec_cluster_sets: &'a [String],
    pub(crate) eligible_sets: &'a [String],
    pub(crate) valid_bindings: usize,
    pub(crate) available: usize,
    pub(crate) selected: usize,
    pub(crate) unscheduled: i64,
}

/// `PlacementSatisfied`: the first matching rule of upstream's table wins.
pub(crate) fn satisfied(inputs: &SatisfiedInputs<'_>, status: &ScheduleStatus) -> NewCondition {
    let t = p::CONDITION_SATISFIED;
    let f = ConditionStatus::False;
    if inputs.valid_bindings == 0 {
        return NewCondition::new(t, f, p::REASON_NO_BINDINGS, p::MESSAGE_NO_BINDINGS);
    }
    if inputs.eligible_sets.is_empty() {
        return NewCondition::new(
            t,
            f,
            p::REASON_NO_INTERSECTION,
            format!(
                "None of ManagedClusterSets [{}] is bound to placement namespace",
                inputs.spec_cluster_sets.join(",")
            ),
        );
    }
    if inputs.available == 0 {
        return NewCondition::new(
            t,
            f,
            p::REASON_ALL_SETS_EMPTY,
            format!(
                "All ManagedClusterSets [{}] have no member ManagedCluster",
                inputs.eligible_sets.join(",")
            ),
        );
    }
    if status.code == StatusCode::Error {
        return NewCondition::new(
            t,
            f,
            p::REASON_NOT_ALL_DECISIONS_SCHEDULED,
            status.message.clone(),
        );
    }
    if inputs.selected == 0 {
        return NewCondition::new(
            t,
            f,
            p::REASON_NO_CLUSTER_MATCHED,
            p::MESSAGE_NO_CLUSTER_MATCHED,
        );
    }
    if inputs.unscheduled == 0 {
        return NewCondition::new(
            t,
            ConditionStatus::True,
            p::REASON_ALL_DECISIONS_SCHEDULED,
            p::MESSAGE_ALL_DECISIONS_SCHEDULED,
        );
    }
    NewCondition::new(
        t,
        f,
        p::REASON_NOT_ALL_DECISIONS_SCHEDULED,
        format!("{} cluster decisions unscheduled", inputs.unscheduled),
    )
}

/// `PlacementMisconfigured`.
pub(crate) fn misconfigured(status: &ScheduleStatus) -> NewCondition {
    let t = p::CONDITION_MISCONFIGURED;
    if status.code == StatusCode::Misconfigured {
        NewCondition::new(
            t,
            ConditionStatus::True,
            p::REASON_MISCONFIGURED,
            format!("{}:{}", status.plugin, status.message),
        )
    } else {
        NewCondition::new(
            t,
            ConditionStatus::False,
            p::REASON_SUCCEED_CONFIGURED,
            p::MESSAGE_SUCCEED_CONFIGURED,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(
        bindings: usize,
        eligible: &'a [String],
        available: usize,
        selected: usize,
        unscheduled: i64,
    ) -> SatisfiedInputs<'a> {
        SatisfiedInputs {
            spec_cluster_sets: &[],
            eligible_sets: eligible,
            valid_bindings: bindings,
            available,
            selected,
            unscheduled,
        }
    }

    #[test]
    fn satisfied_rules_in_priority_order() {
        let ok = ScheduleStatus::success();
        let sets = vec!["a".to_string(), "b".to_string()];
        let c = satisfied(&inputs(0, &[], 0, 0, 5), &ok);
        assert_eq!(
            (c.reason.as_str(), c.status),
            ("NoManagedClusterSetBindings", ConditionStatus::False)
        );
        assert_eq!(
            c.message,
            "No valid ManagedClusterSetBindings found in placement namespace"
        );
        let spec = vec!["x".to_string(), "y".to_string()];
        let mut i = inputs(1, &[], 0, 0, 0);
        i.spec_cluster_sets = &spec;
        let c = satisfied(&i, &ok);
        assert_eq!(c.reason, "NoIntersection");
        assert_eq!(
            c.message,
            "None of ManagedClusterSets [x,y] is bound to placement namespace"
        );
        let c = satisfied(&inputs(1, &sets, 0, 0, 0), &ok);
        assert_eq!(c.reason, "AllManagedClusterSetsEmpty");
        assert_eq!(
            c.message,
            "All ManagedClusterSets [a,b] have no member ManagedCluster"
        );
        let err = ScheduleStatus {
            code: StatusCode::Error,
            plugin: String::new(),
            message: "boom".into(),
        };
        let c = satisfied(&inputs(1, &sets, 3, 0, 0), &err);
        assert_eq!(
            (c.reason.as_str(), c.message.as_str()),
            ("NotAllDecisionsScheduled", "boom")
        );
        let c = satisfied(&inputs(1, &sets, 3, 0, 0), &ok);
        assert_eq!(c.reason, "NoManagedClusterMatched");
        assert_eq!(
            c.message,
            "No ManagedCluster matches any of the cluster predicate"
        );
        let c = satisfied(&inputs(1, &sets, 3, 3, 0), &ok);
        assert_eq!(
            (c.reason.as_str(), c.status),
            ("AllDecisionsScheduled", ConditionStatus::True)
        );
        assert_eq!(c.message, "All cluster decisions scheduled");
        let c = satisfied(&inputs(1, &sets, 3, 3, 2), &ok);
        assert_eq!(
            (c.reason.as_str(), c.message.as_str()),
            (
                "NotAllDecisionsScheduled",
                "2 cluster decisions unscheduled"
            )
        );
    }

    #[test]
    fn misconfigured_condition() {
        let c = misconfigured(&ScheduleStatus::success());
        assert_eq!(
            (c.status, c.reason.as_str(), c.message.as_str()),
            (
                ConditionStatus::False,
                "Succeedconfigured",
                "Placement configurations check pass"
            )
        );
        let err = ScheduleStatus {
            code: StatusCode::Error,
            plugin: String::new(),
            message: "x".into(),
        };
        assert_eq!(misconfigured(&err).status, ConditionStatus::False);
        let m = ScheduleStatus {
            code: StatusCode::Misconfigured,
            plugin: "TaintToleration".into(),
            message: "bad".into(),
        };
        let c = misconfigured(&m);
        assert_eq!(
            (c.status, c.reason.as_str(), c.message.as_str()),
            (
                ConditionStatus::True,
                "Misconfigured",
                "TaintToleration:bad"
            )
        );
    }
}
