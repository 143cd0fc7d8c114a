//! Validation of the `cluster` kinds, equal to what upstream's hub admits, and the hub's
//! ManagedCluster mutations (taint times, default cluster-set label).
//!
//! Upstream checks these objects in two places: the registration hub's admission webhooks
//! (ManagedCluster, ManagedClusterSetBinding) and the OpenAPI schema of the CRDs (patterns,
//! lengths, ranges, list sizes, duplicate list-map keys). Each `validate` method here checks
//! both, collecting every offending field. Checks that need the API server (RBAC
//! SubjectAccessReviews for accepting clusters, joining and binding sets; a terminating cluster
//! namespace) are not done here.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;

use crate::Result;
use crate::cluster::v1::ManagedCluster;
use crate::cluster::v1alpha1::{AddOnPlacementScore, ClusterClaim, RolloutConfig, RolloutStrategy};
use crate::cluster::v1beta1::{Placement, Toleration};
use crate::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use crate::k8s::names::{is_qualified_name, is_qualified_name_part};
use crate::validation::{FieldErrors, names};

/// Upstream's message when a ManagedClusterSetBinding is not named after its set.
pub const BINDING_NAME_MISMATCH: &str =
    "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet";

/// The scheduler's message for a toleration with an empty key and an operator other than
/// `Exists`.
pub const TOLERATION_EMPTY_KEY_NEEDS_EXISTS: &str = "If the key is empty, operator must be Exists.";

/// The scheduler's message for a toleration with operator `Exists` and a value.
pub const TOLERATION_EXISTS_WITHOUT_VALUE: &str =
    "If the operator is Exists, the value should be empty.";

// ---------------------------------------------------------------------------------------------
// ManagedCluster
// ---------------------------------------------------------------------------------------------

impl ManagedCluster {
    /// Checks the cluster as the hub admits it on create and update.
    ///
    /// * every `spec.managedClusterClientConfigs[i].url` must be an `https` URL
    ///   (`url "<url>" is invalid in client configs`);
    /// * `metadata.name` must be a valid namespace name (`metadata.name format is not correct:
    ///   …`). Upstream quirk, kept: the webhook only reports a bad name when the cluster also
    ///   has client configs;
    /// * the CRD's constraints on taints (key pattern and length, value length) and on the
    ///   status's cluster claims and managed namespaces.
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        self.collect_errors(&mut errors);
        errors.into_result("ManagedCluster", &self.name_any())
    }

    /// Checks an update from `old` to `self`: [`validate`](Self::validate), plus the rule of
    /// the hub's mutating webhook that clients may not set or change the `timeAdded` of a
    /// taint (see [`set_taint_times`](Self::set_taint_times)).
    pub fn validate_update(&self, old: &ManagedCluster) -> Result<()> {
        let mut errors = FieldErrors::default();
        self.collect_errors(&mut errors);
        let mut probe = self.clone();
        let epoch = Time(jiff::Timestamp::UNIX_EPOCH);
        if let Err(crate::Error::Invalid { errors: e, .. }) =
            probe.set_taint_times(Some(old), &epoch)
        {
            errors.0.extend(e.0);
        }
        errors.into_result("ManagedCluster", &self.name_any())
    }

    /// Stamps `timeAdded` on the taints the way the hub's mutating webhook does.
    ///
    /// On create (`old` is `None`) every taint gets `now`, whatever the client sent. On update
    /// a taint whose key is new, or whose value or effect changed, gets `now`, and must not
    /// come with a `timeAdded` of its own; a taint that did not change must keep its old
    /// `timeAdded` exactly. Offending taints are reported together on `spec.taints` with
    /// upstream's message `It is not allowed to set TimeAdded of Taint "<k1,k2>".`; the taints
    /// that were fine are stamped anyway.
    pub fn set_taint_times(&mut self, old: Option<&ManagedCluster>, now: &Time) -> Result<()> {
        let name = self.name_any();
        let mut invalid = Vec::new();
        for taint in self.spec.taints.iter_mut().flatten() {
            let Some(old) = old else {
                taint.time_added = Some(now.clone());
                continue;
            };
            let original = old.taints().iter().find(|t| t.key == taint.key);
            match original {
                Some(o)
                    if o.value.as_deref().unwrap_or_default()
                        == taint.value.as_deref().unwrap_or_default()
                        && o.effect == taint.effect =>
                {
                    if o.time_added != taint.time_added {
                        invalid.push(taint.key.clone());
                    }
                }
                _ => {
                    if taint.time_added.is_some() {
                        invalid.push(taint.key.clone());
                    } else {
                        taint.time_added = Some(now.clone());
                    }
                }
            }
        }
        let mut errors = FieldErrors::default();
        if !invalid.is_empty() {
            errors.push(
                "spec.taints",
                format!(
                    "It is not allowed to set TimeAdded of Taint {:?}.",
                    invalid.join(",")
                ),
            );
        }
        errors.into_result("ManagedCluster", &name)
    }

    /// Adds the label `cluster.open-cluster-management.io/clusterset: default` when the cluster
    /// has no such label or an empty one, as the hub's mutating webhook does while the
    /// `DefaultClusterSet` feature gate is on. Returns whether the label was added.
    pub fn set_default_cluster_set_label(&mut self) -> bool {
        use crate::constants::{cluster::DEFAULT_CLUSTER_SET, labels::CLUSTER_SET};
        let labels = self.metadata.labels.get_or_insert_with(Default::default);
        if labels.get(CLUSTER_SET).is_some_and(|v| !v.is_empty()) {
            return false;
        }
        labels.insert(CLUSTER_SET.to_string(), DEFAULT_CLUSTER_SET.to_string());
        true
    }

    fn collect_errors(&self, errors: &mut FieldErrors) {
        let configs = self
            .spec
            .managed_cluster_client_configs
            .as_deref()
            .unwrap_or_default();
        if !configs.is_empty() {
            let name = self.metadata.name.as_deref().unwrap_or_default();
            let problems = names::dns1123_label_errors(name);
            if !problems.is_empty() {
                errors.push(
                    "metadata.name",
                    format!(
                        "metadata.name format is not correct: {}",
                        problems.join(",")
                    ),
                );
            }
        }
        for (i, config) in configs.iter().enumerate() {
            if !is_https_url(&config.url) {
                errors.push(
                    format!("spec.managedClusterClientConfigs[{i}].url"),
                    format!("url {:?} is invalid in client configs", config.url),
                );
            }
        }
        for (i, taint) in self.taints().iter().enumerate() {
            let path = format!("spec.taints[{i}]");
            check_max_len(errors, &format!("{path}.key"), &taint.key, 316);
            check_pattern(
                errors,
                &format!("{path}.key"),
                &taint.key,
                is_qualified_name(&taint.key),
                crate::cluster::v1::TAINT_KEY_PATTERN,
            );
            if let Some(value) = &taint.value {
                check_max_len(errors, &format!("{path}.value"), value, 1024);
            }
        }
        let Some(status) = &self.status else { return };
        for (i, claim) in status.cluster_claims.iter().flatten().enumerate() {
            let path = format!("status.clusterClaims[{i}]");
            if let Some(name) = &claim.name {
                check_len(errors, &format!("{path}.name"), name, 1, 253);
            }
            if let Some(value) = &claim.value {
                check_len(errors, &format!("{path}.value"), value, 1, 1024);
            }
        }
        let mut seen = BTreeSet::new();
        for (i, ns) in status.managed_namespaces.iter().flatten().enumerate() {
            let path = format!("status.managedNamespaces[{i}]");
            check_namespace_name(errors, &format!("{path}.name"), &ns.name);
            if !seen.insert((ns.cluster_set.as_str(), ns.name.as_str())) {
                errors.push(
                    path,
                    format!(
                        "Duplicate value: {{\"clusterSet\":{:?},\"name\":{:?}}}",
                        ns.cluster_set, ns.name
                    ),
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ManagedClusterSet and ManagedClusterSetBinding
// ---------------------------------------------------------------------------------------------

impl ManagedClusterSet {
    /// Checks the set against the CRD's constraints: managed namespace names are DNS labels of
    /// at most 63 characters, each listed once. (Upstream has no webhook for cluster sets.)
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        let mut seen = BTreeSet::new();
        for (i, ns) in self.spec.managed_namespaces.iter().flatten().enumerate() {
            let path = format!("spec.managedNamespaces[{i}]");
            check_namespace_name(&mut errors, &format!("{path}.name"), &ns.name);
            if !seen.insert(ns.name.as_str()) {
                errors.push(path, format!("Duplicate value: {{\"name\":{:?}}}", ns.name));
            }
        }
        errors.into_result("ManagedClusterSet", &self.name_any())
    }
}

impl ManagedClusterSetBinding {
    /// Checks the binding as the hub admits it on create and update: it must be named after
    /// the set it binds (upstream's message [`BINDING_NAME_MISMATCH`], on `spec.clusterSet`),
    /// and `spec.clusterSet` may not be empty.
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        let set = self.spec.cluster_set.as_deref().unwrap_or_default();
        if let Some(value) = &self.spec.cluster_set {
            check_len(&mut errors, "spec.clusterSet", value, 1, usize::MAX);
        }
        if self.metadata.name.as_deref().unwrap_or_default() != set {
            errors.push("spec.clusterSet", BINDING_NAME_MISMATCH);
        }
        errors.into_result("ManagedClusterSetBinding", &self.name_any())
    }
}

// ---------------------------------------------------------------------------------------------
// ClusterClaim and AddOnPlacementScore
// ---------------------------------------------------------------------------------------------

impl ClusterClaim {
    /// Checks the claim against the CRD: `spec.value` is 1 to 1024 characters.
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        if let Some(value) = &self.spec.value {
            check_len(&mut errors, "spec.value", value, 1, 1024);
        }
        errors.into_result("ClusterClaim", &self.name_any())
    }
}

impl AddOnPlacementScore {
    /// Checks the scores against the CRD: each value is within -100..=100 and each name is
    /// listed once.
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        let mut seen = BTreeSet::new();
        let scores = self.status.iter().flat_map(|s| s.scores.iter().flatten());
        for (i, score) in scores.enumerate() {
            let path = format!("status.scores[{i}]");
            check_range(
                &mut errors,
                &format!("{path}.value"),
                score.value.into(),
                -100,
                100,
            );
            if !seen.insert(score.name.as_str()) {
                errors.push(
                    path,
                    format!("Duplicate value: {{\"name\":{:?}}}", score.name),
                );
            }
        }
        errors.into_result("AddOnPlacementScore", &self.name_any())
    }
}

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

impl Placement {
    /// Checks the placement against the CRD's constraints, which is all the admission upstream
    /// does for Placements: prioritizer weights within -10..=10; toleration keys (pattern,
    /// ≤ 316 characters) and values (≤ 1024); at most 8 spread constraints, each with a valid
    /// topology key and `maxSkew` ≥ 1; decision group names; the `clustersPerDecisionGroup`
    /// and `scoreRateLimit` patterns.
    ///
    /// Semantic mistakes the scheduler reports in the `PlacementMisconfigured` condition
    /// instead (see [`Toleration::check`]) are not rejected here, as upstream admits them.
    pub fn validate(&self) -> Result<()> {
        let mut errors = FieldErrors::default();
        let spec = &self.spec;
        if let Some(policy) = &spec.prioritizer_policy {
            for (i, config) in policy.configurations.iter().flatten().enumerate() {
                if let Some(weight) = config.weight {
                    check_range(
                        &mut errors,
                        &format!("spec.prioritizerPolicy.configurations[{i}].weight"),
                        weight.into(),
                        -10,
                        10,
                    );
                }
            }
        }
        for (i, toleration) in spec.tolerations.iter().flatten().enumerate() {
            let path = format!("spec.tolerations[{i}]");
            if let Some(key) = &toleration.key {
                check_max_len(&mut errors, &format!("{path}.key"), key, 316);
                check_pattern(
                    &mut errors,
                    &format!("{path}.key"),
                    key,
                    is_qualified_name(key),
                    crate::cluster::v1::TAINT_KEY_PATTERN,
                );
            }
            if let Some(value) = &toleration.value {
                check_max_len(&mut errors, &format!("{path}.value"), value, 1024);
            }
        }
        if let Some(spread) = &spec.spread_policy {
            check_spread_policy(&mut errors, spread);
        }
        if let Some(group) = spec
            .decision_strategy
            .as_ref()
            .and_then(|d| d.group_strategy.as_ref())
        {
            for (i, g) in group.decision_groups.iter().flatten().enumerate() {
                check_pattern(
                    &mut errors,
                    &format!("spec.decisionStrategy.groupStrategy.decisionGroups[{i}].groupName"),
                    &g.group_name,
                    is_decision_group_name(&g.group_name),
                    super::v1beta1::DECISION_GROUP_NAME_PATTERN,
                );
            }
            if let Some(IntOrString::String(s)) = &group.clusters_per_decision_group {
                check_pattern(
                    &mut errors,
                    "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup",
                    s,
                    is_clusters_per_group(s),
                    super::v1beta1::CLUSTERS_PER_DECISION_GROUP_PATTERN,
                );
            }
        }
        if let Some(limit) = &spec.score_rate_limit {
            check_pattern(
                &mut errors,
                "spec.scoreRateLimit",
                limit,
                is_score_rate_limit(limit),
                super::v1beta1::SCORE_RATE_LIMIT_PATTERN,
            );
        }
        errors.into_result("Placement", &self.name_any())
    }
}

/// The CRD's constraints on a spread policy: at most 8 constraints, each with a qualified
/// `topologyKey` of at most 316 characters and a `maxSkew` of at least 1.
fn check_spread_policy(errors: &mut FieldErrors, spread: &super::v1beta1::SpreadPolicy) {
    let terms = spread.spread_constraints.as_deref().unwrap_or_default();
    if terms.len() > 8 {
        errors.push(
            "spec.spreadPolicy.spreadConstraints",
            format!("must have at most 8 items, has {}", terms.len()),
        );
    }
    for (i, term) in terms.iter().enumerate() {
        let path = format!("spec.spreadPolicy.spreadConstraints[{i}]");
        check_max_len(
            errors,
            &format!("{path}.topologyKey"),
            &term.topology_key,
            316,
        );
        check_pattern(
            errors,
            &format!("{path}.topologyKey"),
            &term.topology_key,
            is_qualified_name(&term.topology_key),
            super::v1beta1::TOPOLOGY_KEY_PATTERN,
        );
        if let Some(skew) = term.max_skew {
            check_range(errors, &format!("{path}.maxSkew"), skew.into(), 1, i64::MAX);
        }
    }
}

impl Toleration {
    /// The scheduler's sanity check of one toleration, with upstream's messages: an empty key
    /// needs operator `Exists` ([`TOLERATION_EMPTY_KEY_NEEDS_EXISTS`]; an absent operator does
    /// not count as `Exists`), and operator `Exists` takes no value
    /// ([`TOLERATION_EXISTS_WITHOUT_VALUE`]).
    ///
    /// The API server admits such tolerations; the upstream scheduler then marks the
    /// Placement `PlacementMisconfigured`.
    pub fn check(&self) -> std::result::Result<(), &'static str> {
        let exists = self.operator.as_deref() == Some(super::v1beta1::TOLERATION_OP_EXISTS);
        if self.key.as_deref().unwrap_or_default().is_empty() && !exists {
            return Err(TOLERATION_EMPTY_KEY_NEEDS_EXISTS);
        }
        if exists && !self.value.as_deref().unwrap_or_default().is_empty() {
            return Err(TOLERATION_EXISTS_WITHOUT_VALUE);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Rollout strategy (embedded in other kinds' CRDs)
// ---------------------------------------------------------------------------------------------

impl RolloutStrategy {
    /// Checks the strategy against the schema upstream embeds it with, reporting fields under
    /// `path` (e.g. `spec.placementRefs[0].rolloutStrategy`): the `maxFailures` and
    /// `maxConcurrency` patterns and the `progressDeadline` pattern.
    pub fn collect_errors(&self, path: &str, errors: &mut FieldErrors) {
        if let Some(all) = &self.all {
            all.config.collect_errors(&format!("{path}.all"), errors);
        }
        if let Some(p) = &self.progressive_per_group {
            p.config
                .collect_errors(&format!("{path}.progressivePerGroup"), errors);
        }
        if let Some(p) = &self.progressive {
            let path = format!("{path}.progressive");
            p.config.collect_errors(&path, errors);
            if let Some(IntOrString::String(s)) = &p.max_concurrency {
                check_pattern(
                    errors,
                    &format!("{path}.maxConcurrency"),
                    s,
                    is_rollout_count(s),
                    super::v1alpha1::ROLLOUT_COUNT_PATTERN,
                );
            }
        }
    }
}

impl RolloutConfig {
    /// Checks the `maxFailures` and `progressDeadline` patterns, reporting fields under `path`.
    pub fn collect_errors(&self, path: &str, errors: &mut FieldErrors) {
        if let Some(IntOrString::String(s)) = &self.max_failures {
            check_pattern(
                errors,
                &format!("{path}.maxFailures"),
                s,
                is_rollout_count(s),
                super::v1alpha1::ROLLOUT_COUNT_PATTERN,
            );
        }
        if let Some(deadline) = &self.progress_deadline {
            check_pattern(
                errors,
                &format!("{path}.progressDeadline"),
                deadline,
                is_progress_deadline(deadline),
                super::v1alpha1::PROGRESS_DEADLINE_PATTERN,
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checks, with the API server's wording.
// ---------------------------------------------------------------------------------------------

fn check_max_len(errors: &mut FieldErrors, path: &str, value: &str, max: usize) {
    check_len(errors, path, value, 0, max);
}

fn check_len(errors: &mut FieldErrors, path: &str, value: &str, min: usize, max: usize) {
    let len = value.chars().count();
    if len < min {
        errors.push(path, format!("should be at least {min} chars long"));
    }
    if len > max {
        errors.push(path, format!("should be at most {max} chars long"));
    }
}

fn check_range(errors: &mut FieldErrors, path: &str, value: i64, min: i64, max: i64) {
    if value < min {
        errors.push(
            path,
            format!("Invalid value: {value}: should be greater than or equal to {min}"),
        );
    }
    if value > max {
        errors.push(
            path,
            format!("Invalid value: {value}: should be less than or equal to {max}"),
        );
    }
}

fn check_pattern(errors: &mut FieldErrors, path: &str, value: &str, ok: bool, pattern: &str) {
    if !ok {
        errors.push(
            path,
            format!("Invalid value: {value:?}: should match '{pattern}'"),
        );
    }
}

fn check_namespace_name(errors: &mut FieldErrors, path: &str, name: &str) {
    check_max_len(errors, path, name, 63);
    check_pattern(
        errors,
        path,
        name,
        names::is_dns1123_label(name),
        crate::cluster::v1::MANAGED_NAMESPACE_NAME_PATTERN,
    );
}

// ---------------------------------------------------------------------------------------------
// Matchers for the CRD patterns (the crate has no regex engine).
// ---------------------------------------------------------------------------------------------

/// `^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$`
fn is_decision_group_name(s: &str) -> bool {
    let len = s.chars().count();
    (2..=63).contains(&len) && is_qualified_name_part(s)
}

/// `^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$`
fn is_clusters_per_group(s: &str) -> bool {
    let positive =
        |d: &str| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()) && !d.starts_with('0');
    match s.strip_suffix('%') {
        Some(p) => p == "100" || (positive(p) && p.len() <= 2),
        None => positive(s),
    }
}

/// `^((100|[0-9]{1,2})%|[0-9]+)$`
fn is_rollout_count(s: &str) -> bool {
    let digits = |d: &str| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit());
    match s.strip_suffix('%') {
        Some(p) => p == "100" || (digits(p) && p.len() <= 2),
        None => digits(s),
    }
}

/// `^(([0-9])+[h|m|s])|None$`. As upstream writes it, the alternation is not grouped: the
/// value either starts with digits followed by one of `h`, `|`, `m`, `s`, or ends with `None`.
fn is_progress_deadline(s: &str) -> bool {
    let rest = s.trim_start_matches(|c: char| c.is_ascii_digit());
    let starts = rest.len() < s.len() && rest.starts_with(['h', '|', 'm', 's']);
    starts || s.ends_with("None")
}

/// `^[0-9]+[hms]$`
fn is_score_rate_limit(s: &str) -> bool {
    s.strip_suffix(['h', 'm', 's'])
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

/// Go's `url.Parse` plus an `https` scheme, as the hub webhook checks client config URLs.
fn is_https_url(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_ascii_control()) {
        return false;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("https") {
        return false;
    }
    // Invalid percent-escapes make url.Parse fail, except in the query, which it keeps raw.
    let (before_fragment, fragment) = s.split_once('#').unwrap_or((s, ""));
    let before_query = before_fragment.split('?').next().unwrap_or_default();
    if !valid_escapes(before_query) || !valid_escapes(fragment) {
        return false;
    }
    // An authority's port must be numeric, and a host may not contain spaces.
    if let Some(authority) = rest.strip_prefix("//") {
        let authority = authority.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if host_port.contains(' ') {
            return false;
        }
        let port = if let Some(after) = host_port.strip_prefix('[') {
            match after.split_once(']') {
                Some((_, tail)) => tail.strip_prefix(':'),
                None => return false,
            }
        } else {
            host_port.rsplit_once(':').map(|(_, p)| p)
        };
        if let Some(port) = port
            && !port.chars().all(|c| c.is_ascii_digit())
        {
            return false;
        }
    }
    true
}

/// Whether every `%` in `s` starts a two-digit hexadecimal escape.
fn valid_escapes(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().enumerate().all(|(i, b)| {
        *b != b'%'
            || (bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors_of(result: Result<()>) -> Vec<(String, String)> {
        match result {
            Ok(()) => Vec::new(),
            Err(crate::Error::Invalid { errors, .. }) => {
                errors.0.into_iter().map(|e| (e.field, e.message)).collect()
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }

    fn cluster(value: serde_json::Value) -> ManagedCluster {
        serde_json::from_value(value).unwrap()
    }

    fn time(s: &str) -> Time {
        serde_json::from_value(json!(s)).unwrap()
    }

    #[test]
    fn patterns() {
        for ok in [
            "a",
            "gpu",
            "cluster.open-cluster-management.io/unreachable",
            "A_b.c-D",
            "x.y/Z",
        ] {
            assert!(is_qualified_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "Prefix/a", "a/b/c", "/a", "a/", "a b"] {
            assert!(!is_qualified_name(bad), "{bad}");
        }
        for ok in ["1", "100%", "1%", "99%", "25"] {
            assert!(is_clusters_per_group(ok), "{ok}");
        }
        for bad in ["0", "0%", "101%", "01", "abc", "%"] {
            assert!(!is_clusters_per_group(bad), "{bad}");
        }
        for ok in ["0", "0%", "100%", "09%", "123"] {
            assert!(is_rollout_count(ok), "{ok}");
        }
        for bad in ["101%", "-1", "1.5", ""] {
            assert!(!is_rollout_count(bad), "{bad}");
        }
        for ok in ["None", "10m", "1h", "30s", "5mextra", "xNone"] {
            assert!(is_progress_deadline(ok), "{ok}");
        }
        for bad in ["", "m", "10", "10d", "none"] {
            assert!(!is_progress_deadline(bad), "{bad}");
        }
        assert!(
            is_score_rate_limit("1m") && !is_score_rate_limit("m") && !is_score_rate_limit("1d")
        );
        assert!(is_decision_group_name("ab") && !is_decision_group_name("a"));
        assert!(!is_decision_group_name(&"a".repeat(64)));
        for ok in [
            "https://a:6443",
            "HTTPS://a",
            "https://[::1]:443/x",
            "https:opaque",
        ] {
            assert!(is_https_url(ok), "{ok}");
        }
        for bad in [
            "",
            "http://a",
            "a",
            "https://a:port",
            "https://a b",
            "https://a/%zz",
            "https://a/#%g0",
            "https://a\n",
        ] {
            assert!(!is_https_url(bad), "{bad}");
        }
    }

    #[test]
    fn managed_cluster_urls_and_name() {
        let c = cluster(json!({
            "metadata": { "name": "Cluster_1" },
            "spec": { "managedClusterClientConfigs": [
                { "url": "https://ok:6443" }, { "url": "http://plain" }, { "url": "" }
            ]}
        }));
        assert_eq!(
            errors_of(c.validate()),
            [
                (
                    "metadata.name".to_string(),
                    format!(
                        "metadata.name format is not correct: {}",
                        names::dns1123_label_errors("Cluster_1").join(",")
                    )
                ),
                (
                    "spec.managedClusterClientConfigs[1].url".to_string(),
                    "url \"http://plain\" is invalid in client configs".to_string()
                ),
                (
                    "spec.managedClusterClientConfigs[2].url".to_string(),
                    "url \"\" is invalid in client configs".to_string()
                ),
            ]
        );
        // Upstream quirk: without client configs the name is not checked.
        let c = cluster(json!({ "metadata": { "name": "Cluster_1" }, "spec": {} }));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn managed_cluster_schema_constraints() {
        let c = cluster(json!({
            "metadata": { "name": "c1" },
            "spec": { "taints": [
                { "key": "bad key", "effect": "NoSelect" },
                { "key": "ok", "value": "v".repeat(1025), "effect": "NoSelect" }
            ]},
            "status": {
                "clusterClaims": [{ "name": "", "value": "x" }],
                "managedNamespaces": [
                    { "name": "ns", "clusterSet": "s" },
                    { "name": "ns", "clusterSet": "s" }
                ]
            }
        }));
        let fields: Vec<String> = errors_of(c.validate()).into_iter().map(|e| e.0).collect();
        assert_eq!(
            fields,
            [
                "spec.taints[0].key",
                "spec.taints[1].value",
                "status.clusterClaims[0].name",
                "status.managedNamespaces[1]"
            ]
        );
    }

    #[test]
    fn taint_times_on_create_are_stamped() {
        let now = time("2024-05-01T10:00:00Z");
        let mut c = cluster(json!({
            "metadata": { "name": "c1" },
            "spec": { "taints": [
                { "key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z" },
                { "key": "b", "effect": "NoSelect" }
            ]}
        }));
        c.set_taint_times(None, &now).unwrap();
        assert!(
            c.taints()
                .iter()
                .all(|t| t.time_added.as_ref() == Some(&now))
        );
    }

    #[test]
    fn taint_times_on_update() {
        let now = time("2024-05-01T10:00:00Z");
        let old = cluster(json!({
            "metadata": { "name": "c1" },
            "spec": { "taints": [
                { "key": "keep", "effect": "NoSelect", "timeAdded": "2024-01-01T00:00:00Z" },
                { "key": "change", "value": "1", "effect": "NoSelect", "timeAdded": "2024-01-01T00:00:00Z" }
            ]}
        }));
        // Unchanged taint keeps its time; changed and new taints are stamped.
        let mut new = cluster(json!({
            "metadata": { "name": "c1" },
            "spec": { "taints": [
                { "key": "keep", "effect": "NoSelect", "timeAdded": "2024-01-01T00:00:00Z" },
                { "key": "change", "value": "2", "effect": "NoSelect" },
                { "key": "new", "effect": "NoSelectIfNew" }
            ]}
        }));
        assert!(new.validate_update(&old).is_ok());
        new.set_taint_times(Some(&old), &now).unwrap();
        let times: Vec<_> = new.taints().iter().map(|t| t.time_added.clone()).collect();
        assert_eq!(
            times,
            [
                Some(time("2024-01-01T00:00:00Z")),
                Some(now.clone()),
                Some(now.clone())
            ]
        );

        // Setting a time on a new taint, or altering an unchanged taint's, is rejected.
        let mut bad = cluster(json!({
            "metadata": { "name": "c1" },
            "spec": { "taints": [
                { "key": "keep", "effect": "NoSelect" },
                { "key": "new", "effect": "NoSelect", "timeAdded": "2024-05-01T00:00:00Z" }
            ]}
        }));
        let expected = vec![(
            "spec.taints".to_string(),
            "It is not allowed to set TimeAdded of Taint \"keep,new\".".to_string(),
        )];
        assert_eq!(errors_of(bad.validate_update(&old)), expected);
        assert_eq!(errors_of(bad.set_taint_times(Some(&old), &now)), expected);
    }

    #[test]
    fn default_cluster_set_label() {
        let key = crate::constants::labels::CLUSTER_SET;
        let mut c = cluster(json!({ "metadata": { "name": "c1" }, "spec": {} }));
        assert!(c.set_default_cluster_set_label());
        assert_eq!(c.labels().get(key).map(String::as_str), Some("default"));
        let mut c =
            cluster(json!({ "metadata": { "name": "c1", "labels": { key: "" } }, "spec": {} }));
        assert!(c.set_default_cluster_set_label());
        let mut c =
            cluster(json!({ "metadata": { "name": "c1", "labels": { key: "prod" } }, "spec": {} }));
        assert!(!c.set_default_cluster_set_label());
        assert_eq!(c.labels().get(key).map(String::as_str), Some("prod"));
    }

    #[test]
    fn binding_must_be_named_after_its_set() {
        let b: ManagedClusterSetBinding = serde_json::from_value(json!({
            "metadata": { "name": "prod", "namespace": "apps" },
            "spec": { "clusterSet": "staging" }
        }))
        .unwrap();
        assert_eq!(
            errors_of(b.validate()),
            [(
                "spec.clusterSet".to_string(),
                BINDING_NAME_MISMATCH.to_string()
            )]
        );
        let b: ManagedClusterSetBinding = serde_json::from_value(json!({
            "metadata": { "name": "prod", "namespace": "apps" },
            "spec": {}
        }))
        .unwrap();
        assert_eq!(errors_of(b.validate()).len(), 1);
    }

    #[test]
    fn cluster_set_namespaces() {
        let s: ManagedClusterSet = serde_json::from_value(json!({
            "metadata": { "name": "s" },
            "spec": { "managedNamespaces": [{ "name": "Team" }, { "name": "a" }, { "name": "a" }] }
        }))
        .unwrap();
        let fields: Vec<String> = errors_of(s.validate()).into_iter().map(|e| e.0).collect();
        assert_eq!(
            fields,
            [
                "spec.managedNamespaces[0].name",
                "spec.managedNamespaces[2]"
            ]
        );
    }

    #[test]
    fn claims_and_scores() {
        let c: ClusterClaim =
            serde_json::from_value(json!({ "metadata": { "name": "c" }, "spec": { "value": "" } }))
                .unwrap();
        assert_eq!(errors_of(c.validate())[0].0, "spec.value");
        let s: AddOnPlacementScore = serde_json::from_value(json!({
            "metadata": { "name": "s", "namespace": "c1" },
            "status": { "scores": [{ "name": "a", "value": 101 }, { "name": "a", "value": 1 }] }
        }))
        .unwrap();
        let fields: Vec<String> = errors_of(s.validate()).into_iter().map(|e| e.0).collect();
        assert_eq!(fields, ["status.scores[0].value", "status.scores[1]"]);
    }

    #[test]
    fn placement_collects_every_error() {
        let p: Placement = serde_json::from_value(json!({
            "metadata": { "name": "p", "namespace": "ns" },
            "spec": {
                "prioritizerPolicy": { "configurations": [
                    { "scoreCoordinate": { "type": "BuiltIn", "builtIn": "Balance" }, "weight": 11 },
                    { "scoreCoordinate": { "type": "BuiltIn", "builtIn": "Steady" }, "weight": -10 }
                ]},
                "tolerations": [{ "key": "a/b/c", "operator": "Exists" }, { "value": "v".repeat(1025) }],
                "spreadPolicy": { "spreadConstraints": [
                    { "topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 0 }
                ]},
                "decisionStrategy": { "groupStrategy": {
                    "clustersPerDecisionGroup": "0%",
                    "decisionGroups": [{ "groupName": "x", "groupClusterSelector": {} }]
                }},
                "scoreRateLimit": "1d"
            }
        }))
        .unwrap();
        let errors = errors_of(p.validate());
        let fields: Vec<&str> = errors.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.prioritizerPolicy.configurations[0].weight",
                "spec.tolerations[0].key",
                "spec.tolerations[1].value",
                "spec.spreadPolicy.spreadConstraints[0].maxSkew",
                "spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName",
                "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup",
                "spec.scoreRateLimit",
            ]
        );
        assert_eq!(
            errors[0].1,
            "Invalid value: 11: should be less than or equal to 10"
        );
    }

    #[test]
    fn toleration_check_messages() {
        let t = |v: serde_json::Value| serde_json::from_value::<Toleration>(v).unwrap().check();
        assert_eq!(t(json!({})), Err(TOLERATION_EMPTY_KEY_NEEDS_EXISTS));
        assert_eq!(
            t(json!({ "operator": "Equal" })),
            Err(TOLERATION_EMPTY_KEY_NEEDS_EXISTS)
        );
        assert_eq!(t(json!({ "operator": "Exists" })), Ok(()));
        assert_eq!(
            t(json!({ "key": "a", "operator": "Exists", "value": "x" })),
            Err(TOLERATION_EXISTS_WITHOUT_VALUE)
        );
        assert_eq!(t(json!({ "key": "a", "value": "x" })), Ok(()));
    }

    #[test]
    fn rollout_patterns() {
        let s: RolloutStrategy = serde_json::from_value(json!({
            "type": "Progressive",
            "all": { "maxFailures": "150%" },
            "progressive": { "maxConcurrency": "abc", "progressDeadline": "10d" }
        }))
        .unwrap();
        let mut errors = FieldErrors::default();
        s.collect_errors("spec.placementRefs[0].rolloutStrategy", &mut errors);
        let fields: Vec<String> = errors.0.into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            [
                "spec.placementRefs[0].rolloutStrategy.all.maxFailures",
                "spec.placementRefs[0].rolloutStrategy.progressive.progressDeadline",
                "spec.placementRefs[0].rolloutStrategy.progressive.maxConcurrency",
            ]
        );
    }
}
