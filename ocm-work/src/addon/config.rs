//! Configuration resolution for addons (pure): spec hashes, the ClusterManagementAddOn's
//! default config references and install progressions, and which configurations each
//! ManagedClusterAddOn should run with, rolled out over the install strategy's placements.
//!
//! This is upstream's `cmainstallprogression`, `cmaconfig`, `addonconfiguration` (its
//! "configuration graph") and `addonconfig` controllers as functions:
//!
//! 1. [`default_config_references`] and [`install_progressions`] give the CMA status;
//!    [`fill_cma_spec_hashes`] fills in the spec hashes of the objects they name.
//! 2. [`plan`] places every ManagedClusterAddOn under the last install-strategy placement
//!    that selects its cluster (or under the defaults), computes its desired configurations
//!    (defaults, overridden per kind by the placement's, overridden per kind by the addon's
//!    own `spec.configs`), its rollout status, and runs the rollout engine per placement. The
//!    result says which addons get their new `configReferences` now (`Configured=True`),
//!    which wait (`Configured=False`), and each placement's progression condition.
//! 3. [`fill_addon_spec_hashes`] fills the spec hashes of the addon's own configurations and
//!    the observed generations.
//!
//! Precedence and quirks are upstream's: a ManagedClusterAddOn's own configs are not rolled
//! out (they apply at once); a kind named in a later placement replaces the whole kind.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use ocm_api::addon::v1alpha1::{InstallConfigReference, InstallProgression, PlacementStrategy};
use ocm_api::addon::v1beta1::{
    AddOnConfig, ClusterManagementAddOn, ConfigReference, ConfigSpecHash, DefaultConfigReference,
    ManagedClusterAddOn,
};
use ocm_api::cluster::v1alpha1::{
    ClusterRolloutStatus, GroupKey, RolloutError, RolloutHandler, RolloutProgressive,
    RolloutResult, RolloutStatus, RolloutStrategy, RolloutType,
};
use ocm_api::cluster::v1beta1::{ClustersTracker, DecisionClusters};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::addon as ac;
use serde_json::Value;

/// The spec hash of a configuration object (upstream's `GetSpecHash`): SHA-256, hex, of the
/// Go JSON encoding of every top-level field but `apiVersion`, `kind`, `metadata` and
/// `status`.
///
/// ```
/// let object = serde_json::json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"},
///     "spec": {"b": "<"}, "status": {}});
/// let hash = ocm_work::addon::config::spec_hash(&object);
/// assert_eq!(hash.len(), 64);
/// assert_eq!(hash, ocm_work::addon::config::spec_hash(&serde_json::json!({"spec": {"b": "<"}})));
/// ```
pub fn spec_hash(object: &Value) -> String {
    let mut fields = serde_json::Map::new();
    if let Value::Object(map) = object {
        for (k, v) in map {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
                fields.insert(k.clone(), v.clone());
            }
        }
    }
    let mut text = String::new();
    ocm_api::k8s::gojson::push_value(&mut text, &Value::Object(fields));
    ocm_api::k8s::digest::sha256_hex(text.as_bytes())
}

/// A configuration kind: `(group, resource)`, the group empty for the core group.
pub type Gr = (String, String);
/// A configuration object within its kind: `(namespace, name)`, empty namespace when
/// cluster-scoped.
pub type Referent = (String, String);

fn gr(group: &Option<String>, resource: &str) -> Gr {
    (group.clone().unwrap_or_default(), resource.to_string())
}

fn referent_of(d: &ConfigSpecHash) -> Referent {
    (d.namespace.clone().unwrap_or_default(), d.name.clone())
}

fn hash_of(d: &ConfigSpecHash) -> &str {
    d.spec_hash.as_deref().unwrap_or("")
}

/// Equal configs: same referent and spec hash (absent equal to empty).
fn same_spec_hash(a: Option<&ConfigSpecHash>, b: Option<&ConfigSpecHash>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => referent_of(a) == referent_of(b) && hash_of(a) == hash_of(b),
        _ => false,
    }
}

fn spec_hash_ref(referent: &Referent, hash: &str) -> ConfigSpecHash {
    ConfigSpecHash {
        namespace: (!referent.0.is_empty()).then(|| referent.0.clone()),
        name: referent.1.clone(),
        spec_hash: (!hash.is_empty()).then(|| hash.to_string()),
    }
}

fn usable_default(c: &AddOnConfig) -> bool {
    !c.name.is_empty() && c.name != ocm_api::constants::addon::RESERVED_NO_DEFAULT_CONFIG_NAME
}

/// Desired configurations by kind, each kind an ordered list of objects with spec hashes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DesiredConfigs(BTreeMap<Gr, Vec<(Referent, String)>>);

impl DesiredConfigs {
    fn len(&self) -> usize {
        self.0.values().map(Vec::len).sum()
    }

    fn position(&self, gr: &Gr, referent: &Referent) -> Option<usize> {
        self.0.get(gr)?.iter().position(|(r, _)| r == referent)
    }

    fn get(&self, gr: &Gr, referent: &Referent) -> Option<ConfigSpecHash> {
        let i = self.position(gr, referent)?;
        let (r, h) = &self.0.get(gr)?[i];
        Some(spec_hash_ref(r, h))
    }

    /// Replaces, per kind, the configs with `configs` (deduplicated).
    fn override_with(&mut self, configs: impl IntoIterator<Item = (Gr, Referent, String)>) {
        let mut overwritten = BTreeSet::new();
        for (gr, referent, hash) in configs {
            if overwritten.insert(gr.clone()) {
                self.0.insert(gr.clone(), Vec::new());
            }
            let list = self.0.entry(gr).or_default();
            if !list.iter().any(|(r, _)| *r == referent) {
                list.push((referent, hash));
            }
        }
    }

    /// The desired configs as `configReferences` entries (desired config only), in kind
    /// order.
    pub fn to_references(&self) -> Vec<ConfigReference> {
        let mut out = Vec::new();
        for ((group, resource), list) in &self.0 {
            for (referent, hash) in list {
                out.push(ConfigReference {
                    group: Some(group.clone()),
                    resource: resource.clone(),
                    last_observed_generation: None,
                    desired_config: Some(spec_hash_ref(referent, hash)),
                    last_applied_config: None,
                });
            }
        }
        out
    }
}

/// The CMA's `status.defaultConfigReferences` (upstream's `setDefaultConfigReference`): one
/// per usable default config, keeping the spec hash of an existing entry for the same object.
pub fn default_config_references(
    defaults: &[AddOnConfig],
    existing: &[DefaultConfigReference],
) -> Vec<DefaultConfigReference> {
    defaults
        .iter()
        .filter(|c| usable_default(c))
        .map(|c| {
            let referent = (c.namespace.clone().unwrap_or_default(), c.name.clone());
            let hash = existing
                .iter()
                .find(|e| {
                    gr(&e.group, &e.resource) == gr(&c.group, &c.resource)
                        && e.desired_config.as_ref().map(referent_of) == Some(referent.clone())
                })
                .and_then(|e| e.desired_config.as_ref())
                .map(|d| hash_of(d).to_string())
                .unwrap_or_default();
            DefaultConfigReference {
                group: Some(c.group.clone().unwrap_or_default()),
                resource: c.resource.clone(),
                desired_config: Some(spec_hash_ref(&referent, &hash)),
            }
        })
        .collect()
}

/// The CMA's `status.installProgressions` (upstream's `setInstallProgression`): one per
/// placement of the install strategy, with the defaults overridden per kind by the
/// placement's configs, keeping spec hashes, last applied / last known good configs and
/// conditions of an existing entry for the same placement and configs.
pub fn install_progressions(
    defaults: &[AddOnConfig],
    placements: &[PlacementStrategy],
    existing: &[InstallProgression],
) -> Vec<InstallProgression> {
    placements
        .iter()
        .map(|p| {
            let mut map: BTreeMap<Gr, Vec<Referent>> = BTreeMap::new();
            for c in defaults.iter().filter(|c| usable_default(c)) {
                let r = (c.namespace.clone().unwrap_or_default(), c.name.clone());
                let list = map.entry(gr(&c.group, &c.resource)).or_default();
                if !list.contains(&r) {
                    list.push(r);
                }
            }
            let mut overwritten = BTreeSet::new();
            for c in p.configs.iter().flatten() {
                let key = gr(&c.group, &c.resource);
                if overwritten.insert(key.clone()) {
                    map.insert(key.clone(), Vec::new());
                }
                let r = (c.namespace.clone().unwrap_or_default(), c.name.clone());
                let list = map.entry(key).or_default();
                if !list.contains(&r) {
                    list.push(r);
                }
            }
            let mut refs: Vec<InstallConfigReference> = map
                .iter()
                .flat_map(|((group, resource), list)| {
                    list.iter().map(move |r| InstallConfigReference {
                        group: Some(group.clone()),
                        resource: resource.clone(),
                        desired_config: Some(spec_hash_ref(r, "")),
                        last_applied_config: None,
                        last_known_good_config: None,
                    })
                })
                .collect();
            let mut conditions = None;
            let key = |c: &InstallConfigReference| {
                (
                    gr(&c.group, &c.resource),
                    c.desired_config.as_ref().map(referent_of),
                )
            };
            if let Some(old) = existing.iter().find(|e| {
                e.namespace == p.namespace
                    && e.name == p.name
                    && refs.iter().all(|n| {
                        e.config_references
                            .iter()
                            .flatten()
                            .any(|o| key(o) == key(n))
                    })
            }) {
                for n in &mut refs {
                    if let Some(o) = old
                        .config_references
                        .iter()
                        .flatten()
                        .find(|o| key(o) == key(n))
                    {
                        if let (Some(od), Some(nd)) = (&o.desired_config, &mut n.desired_config)
                            && !hash_of(od).is_empty()
                        {
                            nd.spec_hash = od.spec_hash.clone();
                        }
                        n.last_applied_config = o.last_applied_config.clone();
                        n.last_known_good_config = o.last_known_good_config.clone();
                    }
                }
                conditions = old.conditions.clone();
            }
            InstallProgression {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                config_references: Some(refs),
                conditions,
            }
        })
        .collect()
}

/// Fills the spec hashes of the CMA's default config references and install progressions
/// from `lookup(group, resource, namespace, name)` (upstream's `cmaConfigController`).
/// Objects `lookup` cannot find keep their hash.
pub fn fill_cma_spec_hashes(
    defaults: &mut [DefaultConfigReference],
    progressions: &mut [InstallProgression],
    lookup: &dyn Fn(&str, &str, &str, &str) -> Option<String>,
) {
    let fill = |group: &Option<String>, resource: &str, d: &mut Option<ConfigSpecHash>| {
        let Some(d) = d.as_mut().filter(|d| !d.name.is_empty()) else {
            return;
        };
        let ns = d.namespace.clone().unwrap_or_default();
        if let Some(h) = lookup(group.as_deref().unwrap_or(""), resource, &ns, &d.name) {
            d.spec_hash = (!h.is_empty()).then_some(h);
        }
    };
    for d in defaults.iter_mut() {
        fill(&d.group, &d.resource, &mut d.desired_config);
    }
    for p in progressions.iter_mut() {
        for c in p.config_references.iter_mut().flatten() {
            fill(&c.group, &c.resource, &mut c.desired_config);
        }
    }
}

/// Finds a configuration object by group, resource, namespace and name, answering with its
/// spec hash and `metadata.generation`.
pub type ObjectLookup<'a> = dyn Fn(&str, &str, &str, &str) -> Option<(String, Option<i64>)> + 'a;

/// Fills, for the configurations the ManagedClusterAddOn names in its own `spec.configs`, the
/// desired spec hash, and for every configuration the observed generation, from
/// `lookup(group, resource, namespace, name) -> (spec hash, generation)` (upstream's
/// `addonConfigController`).
pub fn fill_addon_spec_hashes(
    addon_configs: &[AddOnConfig],
    refs: &mut [ConfigReference],
    lookup: &ObjectLookup<'_>,
) {
    for r in refs.iter_mut() {
        let Some(d) = r.desired_config.as_mut() else {
            continue;
        };
        let group = r.group.clone().unwrap_or_default();
        let ns = d.namespace.clone().unwrap_or_default();
        let Some((hash, generation)) = lookup(&group, &r.resource, &ns, &d.name) else {
            continue;
        };
        r.last_observed_generation = generation;
        let named = addon_configs.iter().any(|c| {
            gr(&c.group, &c.resource) == (group.clone(), r.resource.clone())
                && c.namespace.clone().unwrap_or_default() == ns
                && c.name == d.name
        });
        if named {
            d.spec_hash = (!hash.is_empty()).then_some(hash);
        }
    }
}

/// One placement of the install strategy, as the plan needs it.
#[derive(Clone, Debug)]
pub struct PlacementInput {
    /// The strategy entry (`namespace`, `name`, configs, rollout strategy).
    pub strategy: PlacementStrategy,
    /// The placement's decided clusters by group.
    pub decisions: DecisionClusters,
    /// The placement's `clustersPerDecisionGroup`, the default `maxConcurrency` of a
    /// Progressive rollout.
    pub clusters_per_decision_group: Option<IntOrString>,
}

/// What to do to one ManagedClusterAddOn.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AddonConfigUpdate {
    /// Write these `configReferences` and set `Configured=True` (`ConfigurationsConfigured`).
    Configure(Vec<ConfigReference>),
    /// Its configurations wait for their turn: `Configured=False`
    /// (`ConfigurationsNotConfigured`).
    Wait,
    /// Rolled out: `Configured=True`.
    Done,
}

/// The outcome of [`plan`].
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ConfigPlan {
    /// Per ManagedClusterAddOn namespace (cluster), what to do.
    pub updates: BTreeMap<String, AddonConfigUpdate>,
    /// Per install-strategy placement (`namespace/name`), its progression condition and
    /// whether its configs completed (then their last applied and last known good configs
    /// are set to the desired ones).
    pub progressions: BTreeMap<(String, String), (NewCondition, bool)>,
    /// When a rollout wants to look again.
    pub requeue_after: Option<Duration>,
}

#[derive(Clone, Debug)]
struct Child<'a> {
    mca: &'a ManagedClusterAddOn,
    desired: DesiredConfigs,
    status: RolloutStatus,
    since: Option<Timestamp>,
}

struct Node<'a> {
    key: Option<(String, String)>,
    strategy: RolloutStrategy,
    groups: Option<DecisionClusters>,
    desired: DesiredConfigs,
    children: BTreeMap<String, Child<'a>>,
    clusters: BTreeSet<String>,
    configured: BTreeSet<String>,
    result: RolloutResult,
}

fn addon_own_configs(mca: &ManagedClusterAddOn) -> Vec<AddOnConfig> {
    mca.spec.configs.clone().unwrap_or_default()
}

impl<'a> Node<'a> {
    fn add(&mut self, mca: &'a ManagedClusterAddOn) {
        let mut desired = self.desired.clone();
        let own = addon_own_configs(mca);
        if !own.is_empty() {
            desired.override_with(own.iter().map(|c| {
                (
                    gr(&c.group, &c.resource),
                    (c.namespace.clone().unwrap_or_default(), c.name.clone()),
                    String::new(),
                )
            }));
            // Spec hashes of the addon's own configs come from its status.
            let refs = mca
                .status
                .as_ref()
                .and_then(|s| s.config_references.clone())
                .unwrap_or_default();
            for c in &own {
                let key = gr(&c.group, &c.resource);
                let referent = (c.namespace.clone().unwrap_or_default(), c.name.clone());
                let hash = refs.iter().find_map(|r| {
                    let d = r.desired_config.as_ref()?;
                    (gr(&r.group, &r.resource) == key && referent_of(d) == referent)
                        .then(|| hash_of(d).to_string())
                });
                if let (Some(hash), Some(i)) = (hash, desired.position(&key, &referent))
                    && let Some(list) = desired.0.get_mut(&key)
                {
                    list[i].1 = hash;
                }
            }
        }
        let (status, since) = rollout_status(mca, &desired);
        let cluster = mca.namespace().unwrap_or_default();
        self.children.insert(
            cluster,
            Child {
                mca,
                desired,
                status,
                since,
            },
        );
    }
}

/// The rollout status of one addon against its desired configs (upstream's
/// `setRolloutStatus`).
fn rollout_status(
    mca: &ManagedClusterAddOn,
    desired: &DesiredConfigs,
) -> (RolloutStatus, Option<Timestamp>) {
    let status = mca.status.clone().unwrap_or_default();
    let actual = status.config_references.unwrap_or_default();
    if actual.len() != desired.len() {
        return (RolloutStatus::ToApply, None);
    }
    let conds = status.conditions.unwrap_or_default();
    let progressing = conditions::find(&conds, ac::CONDITION_PROGRESSING);
    for a in &actual {
        let Some(ad) = a.desired_config.as_ref() else {
            return (RolloutStatus::ToApply, None);
        };
        let want = desired.get(&gr(&a.group, &a.resource), &referent_of(ad));
        let Some(want) = want else {
            return (RolloutStatus::ToApply, None);
        };
        if !same_spec_hash(Some(&want), Some(ad)) {
            return (RolloutStatus::ToApply, None);
        }
        if !same_spec_hash(a.last_applied_config.as_ref(), Some(ad)) {
            return match progressing.map(|c| c.reason.as_str()) {
                Some(ac::REASON_PROGRESSING_FAILED) => (
                    RolloutStatus::Failed,
                    progressing.map(|c| c.last_transition_time.0),
                ),
                Some(ac::REASON_PROGRESSING) => (
                    RolloutStatus::Progressing,
                    progressing.map(|c| c.last_transition_time.0),
                ),
                _ => (RolloutStatus::Progressing, None),
            };
        }
    }
    let since = progressing
        .filter(|c| c.reason == ac::REASON_PROGRESSING_COMPLETED)
        .map(|c| c.last_transition_time.0);
    (RolloutStatus::Succeeded, since)
}

/// Upstream's `desiredConfigsEqual`: the addon's desired configs equal the strategy's, kinds
/// the addon overrides itself counted by number only.
fn desired_equal(addon: &DesiredConfigs, strategy: &DesiredConfigs, own: &[AddOnConfig]) -> bool {
    let mut expected = strategy.clone();
    let mut overridden: BTreeMap<Gr, usize> = BTreeMap::new();
    for c in own {
        *overridden.entry(gr(&c.group, &c.resource)).or_default() += 1;
    }
    for (k, n) in &overridden {
        expected
            .0
            .insert(k.clone(), vec![(Referent::default(), String::new()); *n]);
    }
    if addon.0.len() != expected.0.len() {
        return false;
    }
    expected.0.iter().all(|(k, want)| match addon.0.get(k) {
        Some(have) if have.len() == want.len() => overridden.contains_key(k) || have == want,
        _ => false,
    })
}

/// Plans the configuration rollout of one addon (upstream's configuration graph). `cma`'s
/// status must already hold the default config references and install progressions.
///
/// The graph has a node per install strategy placement (a cluster belongs to the last
/// placement that selects it) and one for the clusters of no placement, which take the
/// default configs; each node rolls its clusters out with its strategy.
pub fn plan(
    cma: &ClusterManagementAddOn,
    addons: &[ManagedClusterAddOn],
    placements: &[PlacementInput],
    now: Timestamp,
) -> Result<ConfigPlan, RolloutError> {
    let cma_status = cma.status.clone().unwrap_or_default();
    let defaults_desired = default_desired(cma, &cma_status);

    let mut nodes: Vec<Node<'_>> = Vec::new();
    let strategy_type = cma
        .spec
        .install_strategy
        .as_ref()
        .map(|s| s.strategy_type())
        .unwrap_or_default();
    if strategy_type == ocm_api::addon::v1alpha1::InstallStrategyType::Placements {
        for progression in cma_status.install_progressions.iter().flatten() {
            let Some(input) = placements.iter().find(|p| {
                p.strategy.namespace == progression.namespace && p.strategy.name == progression.name
            }) else {
                continue;
            };
            let node = Node::of_placement(input, progression, &defaults_desired);
            // A cluster is configured by the last placement that selects it.
            for earlier in &mut nodes {
                for c in &node.clusters {
                    earlier.configured.remove(c);
                }
            }
            nodes.push(node);
        }
    }
    let mut defaults = Node {
        key: None,
        strategy: RolloutStrategy::default(),
        groups: None,
        desired: defaults_desired,
        children: BTreeMap::new(),
        clusters: BTreeSet::new(),
        configured: BTreeSet::new(),
        result: RolloutResult::default(),
    };
    for mca in addons {
        let cluster = mca.namespace().unwrap_or_default();
        match nodes
            .iter_mut()
            .rev()
            .find(|n| n.clusters.contains(&cluster))
        {
            Some(node) => node.add(mca),
            None => defaults.add(mca),
        }
    }

    for node in &mut nodes {
        node.roll_out(now)?;
    }
    defaults.roll_out_defaults();
    nodes.push(defaults);
    Ok(ConfigPlan::of_nodes(&nodes))
}

/// The default configs of `cma` (`spec.defaultConfigs`, each once), with the spec hashes its
/// status's `defaultConfigReferences` recorded.
fn default_desired(
    cma: &ClusterManagementAddOn,
    cma_status: &ocm_api::addon::v1beta1::ClusterManagementAddOnStatus,
) -> DesiredConfigs {
    let mut desired = DesiredConfigs::default();
    for c in cma
        .spec
        .default_configs
        .iter()
        .flatten()
        .filter(|c| usable_default(c))
    {
        let key = gr(&c.group, &c.resource);
        let referent = (c.namespace.clone().unwrap_or_default(), c.name.clone());
        if desired.position(&key, &referent).is_some() {
            continue;
        }
        desired
            .0
            .entry(key)
            .or_default()
            .push((referent, String::new()));
    }
    for d in cma_status.default_config_references.iter().flatten() {
        let Some(dc) = &d.desired_config else {
            continue;
        };
        let key = gr(&d.group, &d.resource);
        if let Some(i) = desired.position(&key, &referent_of(dc))
            && let Some(list) = desired.0.get_mut(&key)
        {
            list[i].1 = hash_of(dc).to_string();
        }
    }
    desired
}

impl<'a> Node<'a> {
    /// The node of one install strategy placement: the default configs overridden by the
    /// progression's, and the placement's rollout strategy (a Progressive one without
    /// `maxConcurrency` takes the placement's `clustersPerDecisionGroup`).
    fn of_placement(
        input: &PlacementInput,
        progression: &InstallProgression,
        defaults: &DesiredConfigs,
    ) -> Self {
        let mut desired = defaults.clone();
        let install_refs = progression.config_references.clone().unwrap_or_default();
        desired.override_with(install_refs.iter().filter_map(|c| {
            let d = c.desired_config.as_ref()?;
            Some((
                gr(&c.group, &c.resource),
                referent_of(d),
                hash_of(d).to_string(),
            ))
        }));
        let mut strategy = input.strategy.rollout_strategy.clone().unwrap_or_default();
        if strategy.type_ == Some(RolloutType::Progressive) {
            let mut progressive = strategy.progressive.clone().unwrap_or_default();
            let unset = match &progressive.max_concurrency {
                None => true,
                Some(IntOrString::Int(0)) => true,
                Some(IntOrString::String(s)) => s.is_empty(),
                Some(_) => false,
            };
            if unset {
                progressive = RolloutProgressive {
                    max_concurrency: input.clusters_per_decision_group.clone(),
                    ..progressive
                };
            }
            strategy.progressive = Some(progressive);
        }
        let tracker = ClustersTracker::with_groups(
            &input.strategy.namespace,
            &input.strategy.name,
            input.decisions.clone(),
        );
        let clusters = tracker.existing_cluster_groups_besides(&[]).clusters();
        Node {
            key: Some((
                input.strategy.namespace.clone(),
                input.strategy.name.clone(),
            )),
            strategy,
            groups: Some(input.decisions.clone()),
            desired,
            children: BTreeMap::new(),
            configured: clusters.clone(),
            clusters,
            result: RolloutResult::default(),
        }
    }

    /// Rolls the node's clusters out with its strategy, by decision group.
    fn roll_out(&mut self, now: Timestamp) -> Result<(), RolloutError> {
        let groups = self.groups.clone().unwrap_or_default();
        let to_group = groups.cluster_to_group();
        let statuses: Vec<ClusterRolloutStatus> = self
            .children
            .iter()
            .map(|(cluster, child)| {
                let key = to_group
                    .get(cluster)
                    .cloned()
                    .unwrap_or_else(|| GroupKey::new("", 0));
                let mut s = ClusterRolloutStatus::new(cluster, key, child.status);
                s.last_transition_time = child.since;
                s
            })
            .collect();
        self.result = RolloutHandler::new(&groups.to_cluster_groups()).rollout(
            &self.strategy,
            &statuses,
            now,
        )?;
        Ok(())
    }

    /// The default node rolls out every cluster not yet succeeded, at once.
    fn roll_out_defaults(&mut self) {
        let mut result = RolloutResult::default();
        for (cluster, child) in &self.children {
            if child.status != RolloutStatus::Succeeded {
                let mut s = ClusterRolloutStatus::new(cluster, GroupKey::new("", 0), child.status);
                s.last_transition_time = child.since;
                result.clusters_to_rollout.push(s);
            }
        }
        self.result = result;
    }

    /// The clusters the node's rollout configures now.
    fn rolling_out(&self) -> BTreeSet<&str> {
        self.result
            .clusters_to_rollout
            .iter()
            .map(|c| c.cluster_name.as_str())
            .collect()
    }

    /// The `Progressing` condition of a placement node's install progression, and whether
    /// it completed (upstream's counts and messages).
    fn progressing(&self) -> (NewCondition, bool) {
        let rollout = self.rolling_out();
        let counted = |status: RolloutStatus| {
            self.children
                .values()
                .filter(|c| c.status == status)
                .filter(|c| !rollout.contains(c.mca.namespace().unwrap_or_default().as_str()))
                .filter(|c| desired_equal(&c.desired, &self.desired, &addon_own_configs(c.mca)))
                .count()
        };
        let upgrading = self
            .children
            .keys()
            .filter(|c| rollout.contains(c.as_str()))
            .count();
        let done = counted(RolloutStatus::Succeeded);
        let failed = counted(RolloutStatus::Failed);
        let timeout = self.result.clusters_timeout.len();
        let total = self.clusters.len();
        let configured = self.configured.len();
        if (configured == 0 && done == 0) || done != configured {
            (
                NewCondition::new(
                    ac::CONDITION_PROGRESSING,
                    ConditionStatus::True,
                    ac::REASON_PROGRESSING,
                    format!(
                        "selected clusters {total}. configured addons {}/{configured} progressing..., {failed} failed {timeout} timeout.",
                        upgrading + done
                    ),
                ),
                false,
            )
        } else {
            (
                NewCondition::new(
                    ac::CONDITION_PROGRESSING,
                    ConditionStatus::False,
                    ac::REASON_PROGRESSING_COMPLETED,
                    format!(
                        "selected clusters {total}. configured addons {done}/{configured} completed with no errors, {failed} failed {timeout} timeout."
                    ),
                ),
                true,
            )
        }
    }
}

impl ConfigPlan {
    /// The plan of rolled-out `nodes`: clusters being rolled out are configured (the first
    /// node that rolls a cluster out wins), the others wait or are done; the earliest
    /// recheck; each placement node's progression.
    fn of_nodes(nodes: &[Node<'_>]) -> Self {
        let mut out = ConfigPlan::default();
        for node in nodes {
            let rollout = node.rolling_out();
            for (cluster, child) in &node.children {
                if rollout.contains(cluster.as_str()) {
                    out.updates.insert(
                        cluster.clone(),
                        AddonConfigUpdate::Configure(merge_config_references(
                            child.mca,
                            &child.desired,
                        )),
                    );
                }
            }
        }
        for node in nodes {
            for (cluster, child) in &node.children {
                if out.updates.contains_key(cluster) {
                    continue;
                }
                match child.status {
                    RolloutStatus::ToApply => {
                        out.updates.insert(cluster.clone(), AddonConfigUpdate::Wait);
                    }
                    RolloutStatus::Succeeded => {
                        out.updates.insert(cluster.clone(), AddonConfigUpdate::Done);
                    }
                    _ => {}
                }
            }
            if let Some(after) = node.result.recheck_after {
                out.requeue_after = Some(out.requeue_after.map_or(after, |d| d.min(after)));
            }
            if let Some(key) = &node.key {
                out.progressions.insert(key.clone(), node.progressing());
            }
        }
        out
    }
}

/// Upstream's `mergeAddonConfig`: existing references still desired keep their last applied
/// config and generation (their desired config updated); new ones are appended; kinds in
/// `(group, resource)` order.
pub fn merge_config_references(
    mca: &ManagedClusterAddOn,
    desired: &DesiredConfigs,
) -> Vec<ConfigReference> {
    let existing = mca
        .status
        .as_ref()
        .and_then(|s| s.config_references.clone())
        .unwrap_or_default();
    let mut merged: BTreeMap<Gr, Vec<ConfigReference>> = BTreeMap::new();
    for r in existing {
        let key = gr(&r.group, &r.resource);
        let list = merged.entry(key.clone()).or_default();
        let keep = r
            .desired_config
            .as_ref()
            .is_some_and(|d| desired.position(&key, &referent_of(d)).is_some());
        if keep {
            list.push(r);
        }
    }
    for (key, list) in &desired.0 {
        for (referent, hash) in list {
            let want = spec_hash_ref(referent, hash);
            let entries = merged.entry(key.clone()).or_default();
            match entries
                .iter_mut()
                .find(|r| r.desired_config.as_ref().map(referent_of).as_ref() == Some(referent))
            {
                Some(r) => r.desired_config = Some(want),
                None => entries.push(ConfigReference {
                    group: Some(key.0.clone()),
                    resource: key.1.clone(),
                    last_observed_generation: None,
                    desired_config: Some(want),
                    last_applied_config: None,
                }),
            }
        }
    }
    merged.into_values().flatten().collect()
}

/// Applies a planned update to an addon's status conditions and config references.
pub fn apply_update(
    status: &mut ocm_api::addon::v1beta1::ManagedClusterAddOnStatus,
    update: &AddonConfigUpdate,
    now: &Time,
) {
    let conds = status.conditions.get_or_insert_with(Vec::new);
    match update {
        AddonConfigUpdate::Configure(refs) => {
            status.config_references = Some(refs.clone());
            let conds = status.conditions.get_or_insert_with(Vec::new);
            conditions::set(conds, configured(true), now);
        }
        AddonConfigUpdate::Wait => {
            conditions::set(conds, configured(false), now);
        }
        AddonConfigUpdate::Done => {
            conditions::set(conds, configured(true), now);
        }
    }
}

fn configured(yes: bool) -> NewCondition {
    if yes {
        NewCondition::new(
            ac::CONDITION_CONFIGURED,
            ConditionStatus::True,
            ac::REASON_CONFIGURATIONS_CONFIGURED,
            ac::MESSAGE_CONFIGURATIONS_CONFIGURED,
        )
    } else {
        NewCondition::new(
            ac::CONDITION_CONFIGURED,
            ConditionStatus::False,
            ac::REASON_CONFIGURATIONS_NOT_CONFIGURED,
            ac::MESSAGE_CONFIGURATIONS_NOT_CONFIGURED,
        )
    }
}

/// Sets a placement's progression condition, and on completion its last applied and last
/// known good configs (upstream's `setAddOnInstallProgressionsAndLastApplied`).
pub fn apply_progression(
    progression: &mut InstallProgression,
    condition: &NewCondition,
    completed: bool,
    now: &Time,
) {
    if completed {
        for c in progression.config_references.iter_mut().flatten() {
            c.last_applied_config = c.desired_config.clone();
            c.last_known_good_config = c.desired_config.clone();
        }
    }
    conditions::set(
        progression.conditions.get_or_insert_with(Vec::new),
        condition.clone(),
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ADC: &str = "addondeploymentconfigs";
    const G: &str = "addon.open-cluster-management.io";

    fn cma(spec: Value, status: Value) -> ClusterManagementAddOn {
        serde_json::from_value(json!({"metadata": {"name": "a"}, "spec": spec, "status": status}))
            .unwrap()
    }

    fn mca(cluster: &str, spec: Value, status: Value) -> ManagedClusterAddOn {
        serde_json::from_value(json!({"metadata": {"name": "a", "namespace": cluster}, "spec": spec, "status": status})).unwrap()
    }

    fn decisions(clusters: &[&str]) -> DecisionClusters {
        let mut d = DecisionClusters::default();
        for c in clusters {
            d.insert(GroupKey::new("", 0), *c);
        }
        d
    }

    fn now() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn cma_status_from_defaults_and_placements() {
        let defaults: Vec<AddOnConfig> = serde_json::from_value(json!([
            {"group": G, "resource": ADC, "namespace": "ns", "name": "default"},
            {"group": G, "resource": "addontemplates", "name": "__reserved_no_default__"}
        ]))
        .unwrap();
        let refs = default_config_references(&defaults, &[]);
        assert_eq!(refs.len(), 1);
        let placements: Vec<PlacementStrategy> = serde_json::from_value(json!([
            {"namespace": "p", "name": "all"},
            {"namespace": "p", "name": "canary", "configs": [{"group": G, "resource": ADC, "namespace": "ns", "name": "canary"}]}
        ]))
        .unwrap();
        let mut progs = install_progressions(&defaults, &placements, &[]);
        assert_eq!(
            progs[0].config_references.as_ref().unwrap()[0]
                .desired_config
                .as_ref()
                .unwrap()
                .name,
            "default"
        );
        assert_eq!(
            progs[1].config_references.as_ref().unwrap()[0]
                .desired_config
                .as_ref()
                .unwrap()
                .name,
            "canary"
        );
        let mut refs = refs;
        fill_cma_spec_hashes(&mut refs, &mut progs, &|_, _, _, name| {
            Some(format!("h-{name}"))
        });
        assert_eq!(
            refs[0]
                .desired_config
                .as_ref()
                .unwrap()
                .spec_hash
                .as_deref(),
            Some("h-default")
        );
        // Hashes, last applied configs and conditions survive a recomputation.
        progs[1].config_references.as_mut().unwrap()[0].last_applied_config =
            progs[1].config_references.as_ref().unwrap()[0]
                .desired_config
                .clone();
        let again = install_progressions(&defaults, &placements, &progs);
        assert_eq!(again, progs);
        assert_eq!(default_config_references(&defaults, &refs), refs);
    }

    #[test]
    fn own_configs_override_placement_configs_override_defaults() {
        let c = cma(
            json!({"defaultConfigs": [{"group": G, "resource": ADC, "namespace": "ns", "name": "default"}],
                   "installStrategy": {"type": "Placements", "placements": [{"namespace": "p", "name": "all",
                        "configs": [{"group": G, "resource": ADC, "namespace": "ns", "name": "placement"}]}]}}),
            json!({"defaultConfigReferences": [{"group": G, "resource": ADC,
                        "desiredConfig": {"namespace": "ns", "name": "default", "specHash": "hd"}}],
                   "installProgressions": [{"namespace": "p", "name": "all", "configReferences": [
                        {"group": G, "resource": ADC, "desiredConfig": {"namespace": "ns", "name": "placement", "specHash": "hp"}}]}]}),
        );
        let addons = vec![
            mca("c1", json!({}), json!({})),
            mca(
                "c2",
                json!({"configs": [{"group": G, "resource": ADC, "namespace": "c2", "name": "own"}]}),
                json!({}),
            ),
            mca("c9", json!({}), json!({})),
        ];
        let input = PlacementInput {
            strategy: c.spec.install_strategy.clone().unwrap().placements.unwrap()[0].clone(),
            decisions: decisions(&["c1", "c2"]),
            clusters_per_decision_group: None,
        };
        let p = plan(&c, &addons, &[input], now()).unwrap();
        let name = |cluster: &str| match &p.updates[cluster] {
            AddonConfigUpdate::Configure(refs) => {
                let d = refs[0].desired_config.clone().unwrap();
                (d.name, d.spec_hash.unwrap_or_default())
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(name("c1"), ("placement".into(), "hp".into()));
        assert_eq!(name("c2"), ("own".into(), "".into()));
        assert_eq!(name("c9"), ("default".into(), "hd".into()));
        let (cond, completed) = &p.progressions[&("p".to_string(), "all".to_string())];
        assert!(!completed);
        assert_eq!(
            cond.message,
            "selected clusters 2. configured addons 2/2 progressing..., 0 failed 0 timeout."
        );
    }

    #[test]
    fn progressive_rollout_configures_a_batch_at_a_time() {
        let c = cma(
            json!({"installStrategy": {"type": "Placements", "placements": [{"namespace": "p", "name": "all",
                "configs": [{"group": G, "resource": ADC, "namespace": "ns", "name": "v2"}],
                "rolloutStrategy": {"type": "Progressive", "progressive": {"maxConcurrency": 1}}}]}}),
            json!({"installProgressions": [{"namespace": "p", "name": "all", "configReferences": [
                {"group": G, "resource": ADC, "desiredConfig": {"namespace": "ns", "name": "v2", "specHash": "h2"}}]}]}),
        );
        let done = |cluster: &str| {
            mca(
                cluster,
                json!({}),
                json!({
                "configReferences": [{"group": G, "resource": ADC,
                    "desiredConfig": {"namespace": "ns", "name": "v2", "specHash": "h2"},
                    "lastAppliedConfig": {"namespace": "ns", "name": "v2", "specHash": "h2"}}],
                "conditions": [{"type": "Progressing", "status": "False", "reason": "Completed", "message": "",
                                "lastTransitionTime": "2025-12-31T00:00:00Z"}]}),
            )
        };
        let input = PlacementInput {
            strategy: c.spec.install_strategy.clone().unwrap().placements.unwrap()[0].clone(),
            decisions: decisions(&["c1", "c2", "c3"]),
            clusters_per_decision_group: None,
        };
        let fresh = vec![
            mca("c1", json!({}), json!({})),
            mca("c2", json!({}), json!({})),
            mca("c3", json!({}), json!({})),
        ];
        let p = plan(&c, &fresh, std::slice::from_ref(&input), now()).unwrap();
        assert!(matches!(p.updates["c1"], AddonConfigUpdate::Configure(_)));
        assert_eq!(p.updates["c2"], AddonConfigUpdate::Wait);
        assert_eq!(p.updates["c3"], AddonConfigUpdate::Wait);
        let p = plan(
            &c,
            &[done("c1"), fresh[1].clone(), fresh[2].clone()],
            std::slice::from_ref(&input),
            now(),
        )
        .unwrap();
        assert_eq!(p.updates["c1"], AddonConfigUpdate::Done);
        assert!(matches!(p.updates["c2"], AddonConfigUpdate::Configure(_)));
        let p = plan(&c, &[done("c1"), done("c2"), done("c3")], &[input], now()).unwrap();
        let (cond, completed) = &p.progressions[&("p".to_string(), "all".to_string())];
        assert!(completed);
        assert_eq!(cond.reason, "Completed");
        assert_eq!(
            cond.message,
            "selected clusters 3. configured addons 3/3 completed with no errors, 0 failed 0 timeout."
        );
    }

    #[test]
    fn rollout_status_reads_last_applied_and_progressing() {
        let desired = DesiredConfigs(BTreeMap::from([(
            (G.to_string(), ADC.to_string()),
            vec![(("ns".to_string(), "x".to_string()), "h".to_string())],
        )]));
        let with = |last: Value, reason: &str| {
            mca(
                "c",
                json!({}),
                json!({"configReferences": [{"group": G, "resource": ADC,
                "desiredConfig": {"namespace": "ns", "name": "x", "specHash": "h"}, "lastAppliedConfig": last}],
                "conditions": [{"type": "Progressing", "status": "True", "reason": reason, "message": "",
                                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}),
            )
        };
        assert_eq!(
            rollout_status(&with(json!(null), "Failed"), &desired).0,
            RolloutStatus::Failed
        );
        assert_eq!(
            rollout_status(&with(json!(null), "Progressing"), &desired).0,
            RolloutStatus::Progressing
        );
        assert_eq!(
            rollout_status(
                &with(
                    json!({"namespace": "ns", "name": "x", "specHash": "h"}),
                    "Completed"
                ),
                &desired
            )
            .0,
            RolloutStatus::Succeeded
        );
        assert_eq!(
            rollout_status(&mca("c", json!({}), json!({})), &desired).0,
            RolloutStatus::ToApply
        );
    }

    #[test]
    fn addon_spec_hashes_only_for_own_configs() {
        let own: Vec<AddOnConfig> = serde_json::from_value(
            json!([{"group": G, "resource": ADC, "namespace": "c1", "name": "own"}]),
        )
        .unwrap();
        let mut refs: Vec<ConfigReference> = serde_json::from_value(json!([
            {"group": G, "resource": ADC, "desiredConfig": {"namespace": "c1", "name": "own"}},
            {"group": G, "resource": "x", "desiredConfig": {"name": "default", "specHash": "keep"}}
        ]))
        .unwrap();
        fill_addon_spec_hashes(&own, &mut refs, &|_, _, _, _| Some(("new".into(), Some(3))));
        assert_eq!(
            refs[0]
                .desired_config
                .as_ref()
                .unwrap()
                .spec_hash
                .as_deref(),
            Some("new")
        );
        assert_eq!(
            refs[1]
                .desired_config
                .as_ref()
                .unwrap()
                .spec_hash
                .as_deref(),
            Some("keep")
        );
        assert_eq!(refs[1].last_observed_generation, Some(3));
    }
}
