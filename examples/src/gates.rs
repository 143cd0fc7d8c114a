//! `--feature-gates Name=true,Other=false`, as upstream's binaries take their feature gates
//! (Kubernetes' component-base syntax), for the binaries whose gates are all off by default.
//!
//! ```
//! use ocm_examples::gates::FeatureGates;
//!
//! let known = ["TopologySpread", "ClusterProfile"];
//! let gates = FeatureGates::parse("TopologySpread=true, ClusterProfile=false", &known)?;
//! assert!(gates.enabled("TopologySpread"));
//! assert!(!gates.enabled("ClusterProfile"));
//! assert!(FeatureGates::parse("Nope=true", &known).unwrap_err().contains("unknown feature gate"));
//! # Ok::<(), String>(())
//! ```

/// Parsed feature gates: each named gate with its value; unnamed ones are off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates(Vec<(String, bool)>);

impl FeatureGates {
    /// Parses `text` (`Name=true|false`, comma-separated, spaces allowed around the parts);
    /// every name must be one of `known`. The last value given for a gate wins.
    pub fn parse(text: &str, known: &[&str]) -> Result<Self, String> {
        let mut gates = Vec::new();
        for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("feature gate {:?} is not Name=true|false", pair.trim()))?;
            let name = name.trim();
            let value = value.trim().parse::<bool>().map_err(|_| {
                format!(
                    "feature gate {name}: {:?} is not true or false",
                    value.trim()
                )
            })?;
            if !known.contains(&name) {
                return Err(format!(
                    "unknown feature gate {name:?} (known: {})",
                    known.join(", ")
                ));
            }
            gates.retain(|(n, _): &(String, bool)| n != name);
            gates.push((name.to_string(), value));
        }
        Ok(Self(gates))
    }

    /// Whether the gate `name` is on.
    pub fn enabled(&self, name: &str) -> bool {
        self.0.iter().any(|(n, v)| n == name && *v)
    }

    /// The gates that are on, in the order given.
    pub fn enabled_names(&self) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(_, v)| *v)
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_like_component_base() {
        let known = ["A", "B"];
        assert_eq!(FeatureGates::parse("", &known), Ok(FeatureGates::default()));
        let gates = FeatureGates::parse("A=true,B=true,A=false", &known).unwrap();
        assert_eq!(gates.enabled_names(), ["B"]);
        assert!(!gates.enabled("A"));
        assert_eq!(
            FeatureGates::parse("A", &known).unwrap_err(),
            "feature gate \"A\" is not Name=true|false"
        );
        assert_eq!(
            FeatureGates::parse("A=yes", &known).unwrap_err(),
            "feature gate A: \"yes\" is not true or false"
        );
        assert_eq!(
            FeatureGates::parse("C=true", &known).unwrap_err(),
            "unknown feature gate \"C\" (known: A, B)"
        );
    }
}
