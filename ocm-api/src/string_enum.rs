//! The shared shape of the CRD enums: every enum that holds a CRD string value keeps values
//! it does not know in an `Unknown(String)` variant, so that one value a newer OCM adds does
//! not make a whole list or watch fail to decode. The CRD schemas still list only the known
//! values (the `Unknown` variant is left out of the schema).

/// Implements `as_str`, `is_unknown`, `Display` and `From<&str>` for a CRD enum whose known
/// variants are listed with their wire values; the enum must have an `Unknown(String)`
/// variant. Its `JsonSchema` is the one derived for `$schema`, a private copy of the enum
/// without `Unknown`, so the CRD schemas list exactly the known values, as before.
macro_rules! string_enum {
    ($ty:ident, $schema:ident { $($variant:ident => $value:literal),+ $(,)? }) => {
        impl ::schemars::JsonSchema for $ty {
            fn inline_schema() -> bool {
                <$schema as ::schemars::JsonSchema>::inline_schema()
            }

            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                <$schema as ::schemars::JsonSchema>::schema_name()
            }

            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                <$schema as ::schemars::JsonSchema>::schema_id()
            }

            fn json_schema(generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                <$schema as ::schemars::JsonSchema>::json_schema(generator)
            }
        }

        impl $ty {
            /// The value as it is written in the object; an unknown value exactly as it was
            /// received.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)+
                    Self::Unknown(value) => value,
                }
            }

            /// Whether this is a value this version of the SDK does not know.
            pub fn is_unknown(&self) -> bool {
                matches!(self, Self::Unknown(_))
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $ty {
            /// The known variant written `value`, or `Unknown(value)`.
            fn from(value: &str) -> Self {
                match value {
                    $($value => Self::$variant,)+
                    other => Self::Unknown(other.to_owned()),
                }
            }
        }
    };
}

pub(crate) use string_enum;

#[cfg(test)]
mod tests {
    use crate::addon::{v1alpha1, v1beta1};
    use crate::cluster::v1::TaintEffect;
    use crate::cluster::v1alpha1::RolloutType;
    use crate::cluster::v1beta1::{
        ScoreCoordinateType, SortBy, TopologyKeyType, UnsatisfiableMaxSkewAction,
    };
    use crate::cluster::v1beta2::SelectorType;
    use crate::work::v1::{
        ConditionRuleType, ExecutorSubjectType, FeedbackScrapeType, FeedbackType,
        IgnoreFieldsCondition, PropagationPolicy, UpdateStrategyType, ValueType,
    };
    use crate::work::v1alpha1::CascadeDeletionPolicy;
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use std::fmt::{Debug, Display};

    /// Every known value decodes to a known variant whose `as_str`, `Display`, `From<&str>`
    /// and encoding agree with the wire value; an unknown value decodes to `Unknown` and is
    /// encoded back unchanged.
    fn check<T>(known: &[&str])
    where
        T: Serialize + DeserializeOwned + Debug + Display + PartialEq + for<'a> From<&'a str>,
        T: AsStr,
    {
        for &value in known {
            let decoded: T = serde_json::from_value(serde_json::json!(value)).unwrap();
            assert!(!decoded.is_unknown(), "{value} decoded as {decoded:?}");
            assert_eq!(decoded.as_str(), value);
            assert_eq!(decoded.to_string(), value);
            assert_eq!(T::from(value), decoded);
            assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
        }
        let decoded: T = serde_json::from_value(serde_json::json!("FromANewerOCM")).unwrap();
        assert!(decoded.is_unknown(), "{decoded:?}");
        assert_eq!(decoded.as_str(), "FromANewerOCM");
        assert_eq!(T::from("FromANewerOCM"), decoded);
        assert_eq!(serde_json::to_value(&decoded).unwrap(), "FromANewerOCM");
        // Not a string at all is still an error.
        assert!(serde_json::from_value::<T>(serde_json::json!(3)).is_err());
    }

    trait AsStr {
        fn as_str(&self) -> &str;
        fn is_unknown(&self) -> bool;
    }

    macro_rules! as_str {
        ($($ty:ty),+) => {$(
            impl AsStr for $ty {
                fn as_str(&self) -> &str {
                    <$ty>::as_str(self)
                }
                fn is_unknown(&self) -> bool {
                    <$ty>::is_unknown(self)
                }
            }
        )+};
    }

    as_str!(
        v1beta1::RegistrationType,
        v1alpha1::RegistrationType,
        v1alpha1::HubPermissionsBindingType,
        v1alpha1::KubeClientDriver,
        v1alpha1::HealthCheckMode,
        v1alpha1::InstallStrategyType,
        FeedbackType,
        ValueType,
        FeedbackScrapeType,
        ConditionRuleType,
        UpdateStrategyType,
        IgnoreFieldsCondition,
        PropagationPolicy,
        ExecutorSubjectType,
        TaintEffect,
        SelectorType,
        SortBy,
        ScoreCoordinateType,
        TopologyKeyType,
        UnsatisfiableMaxSkewAction,
        RolloutType,
        CascadeDeletionPolicy
    );

    #[test]
    fn known_values_keep_their_wire_form_and_unknown_ones_round_trip() {
        check::<v1beta1::RegistrationType>(&["kubeClient", "customSigner"]);
        check::<v1alpha1::RegistrationType>(&["KubeClient", "CustomSigner"]);
        check::<v1alpha1::HubPermissionsBindingType>(&["CurrentCluster", "SingleNamespace"]);
        check::<v1alpha1::KubeClientDriver>(&["csr", "token"]);
        check::<v1alpha1::HealthCheckMode>(&["Lease", "Customized"]);
        check::<v1alpha1::InstallStrategyType>(&["Manual", "Placements"]);
        check::<FeedbackType>(&["WellKnownStatus", "JSONPaths"]);
        check::<ValueType>(&["Integer", "String", "Boolean", "JsonRaw"]);
        check::<FeedbackScrapeType>(&["Poll", "Watch"]);
        check::<ConditionRuleType>(&["WellKnownConditions", "CEL"]);
        check::<UpdateStrategyType>(&["Update", "CreateOnly", "ServerSideApply", "ReadOnly"]);
        check::<IgnoreFieldsCondition>(&["OnSpokePresent", "OnSpokeChange"]);
        check::<PropagationPolicy>(&["Foreground", "Orphan", "SelectivelyOrphan"]);
        check::<ExecutorSubjectType>(&["ServiceAccount"]);
        check::<TaintEffect>(&["NoSelect", "PreferNoSelect", "NoSelectIfNew"]);
        check::<SelectorType>(&["ExclusiveClusterSetLabel", "LabelSelector"]);
        check::<SortBy>(&["ClusterName", "Score"]);
        check::<ScoreCoordinateType>(&["BuiltIn", "AddOn"]);
        check::<TopologyKeyType>(&["Label", "Claim"]);
        check::<UnsatisfiableMaxSkewAction>(&["DoNotSchedule", "ScheduleAnyway"]);
        check::<RolloutType>(&["All", "Progressive", "ProgressivePerGroup"]);
        check::<CascadeDeletionPolicy>(&["Background", "Foreground"]);
    }

    #[test]
    fn one_unknown_value_does_not_break_the_object() {
        let cluster: crate::cluster::v1::ManagedCluster =
            serde_json::from_value(serde_json::json!({
                "apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster",
                "metadata": { "name": "c1" },
                "spec": { "hubAcceptsClient": true, "taints": [
                    { "key": "a", "effect": "NoSelect", "timeAdded": null },
                    { "key": "b", "effect": "NoScheduleSoon", "timeAdded": null }
                ]}
            }))
            .unwrap();
        let taints = cluster.spec.taints.unwrap();
        assert_eq!(taints[0].effect, TaintEffect::NoSelect);
        assert_eq!(
            taints[1].effect,
            TaintEffect::Unknown("NoScheduleSoon".into())
        );
    }
}
