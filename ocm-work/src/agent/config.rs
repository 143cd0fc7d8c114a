//! The agent's settings ([`AgentConfig`]), as upstream's flags.

use std::time::Duration;

use ocm_api::constants::limits;

use crate::identity::agent_id;

/// The agent's settings, as upstream's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The managed cluster's name; the agent handles the works in this hub namespace.
    pub cluster_name: String,
    /// The hub hash ([`crate::identity::hub_hash`] of the hub's API server address).
    pub hub_hash: String,
    /// The agent id (defaults to the hub hash).
    pub agent_id: String,
    /// How often status and feedback are refreshed (upstream's `--status-sync-interval`,
    /// default 10 s; upstream advises against going much lower on large fleets).
    pub status_sync_interval: Duration,
    /// How often every work is applied again even if unchanged (upstream: about 4 to 6 min).
    pub resync_interval: Duration,
    /// Allow `JsonRaw` feedback values (feature gate `RawFeedbackJsonString`).
    pub raw_feedback_json_string: bool,
    /// The longest `jsonRaw` value (upstream's `--max-json-raw-length`).
    pub max_json_raw_length: usize,
    /// How long an AppliedManifestWork whose ManifestWork is gone (or that belongs to another
    /// hub) is kept before it is deleted with its resources (upstream's
    /// `--appliedmanifestwork-eviction-grace-period`, default 60 min; 100 years or more
    /// disables eviction).
    pub eviction_grace_period: Duration,
    /// How many resources with `feedbackScrapeType: Watch` may have an informer (upstream's
    /// `--max-feedback-watch`, default 50); beyond it their feedback is polled.
    pub max_feedback_watch: usize,
    /// Whether the apply pass and the status refresh read applied resources from informers on
    /// the managed cluster (one per resource and namespace, started on first use) instead of
    /// a GET per manifest. On by default: it is what makes a steady-state resync cheap. It
    /// changes no outcome, only when a change made by someone else is seen (at most one watch
    /// round trip later, as with upstream's informer reads); writes refused because a cached
    /// copy was stale are retried against the server. Upstream's agent GETs instead; turn this
    /// off to match its request pattern. Only used once the caches are started
    /// ([`WorkAgent::start_caches`](super::WorkAgent::start_caches), which
    /// [`WorkAgent::run`](super::WorkAgent::run) calls).
    pub cached_reads: bool,
    /// The most informers started for cached reads (beyond it, reads are GETs).
    pub max_object_informers: usize,
    /// Cache executor permission checks and re-check them when RBAC changes (feature gate
    /// `ExecutorValidatingCaches`, off by default as upstream).
    pub executor_validating_caches: bool,
}

impl AgentConfig {
    /// Settings for `cluster_name` under the hub with hash `hub_hash`, upstream's defaults
    /// otherwise.
    pub fn new(cluster_name: impl Into<String>, hub_hash: impl Into<String>) -> Self {
        let hub_hash = hub_hash.into();
        Self {
            cluster_name: cluster_name.into(),
            agent_id: agent_id(None, &hub_hash),
            hub_hash,
            status_sync_interval: limits::STATUS_SYNC_INTERVAL,
            resync_interval: Duration::from_secs(240),
            raw_feedback_json_string: false,
            max_json_raw_length: limits::MAX_JSON_RAW_LENGTH,
            eviction_grace_period: limits::APPLIED_MANIFEST_WORK_EVICTION_GRACE_PERIOD,
            max_feedback_watch: 50,
            cached_reads: true,
            max_object_informers: 500,
            executor_validating_caches: false,
        }
    }

    /// Turns the `ExecutorValidatingCaches` gate on or off.
    #[must_use]
    pub fn executor_validating_caches(mut self, enabled: bool) -> Self {
        self.executor_validating_caches = enabled;
        self
    }

    /// Sets how many resources may have a feedback watch.
    #[must_use]
    pub fn max_feedback_watch(mut self, max: usize) -> Self {
        self.max_feedback_watch = max;
        self
    }

    /// Turns cached reads of applied resources on or off (see [`AgentConfig::cached_reads`]).
    #[must_use]
    pub fn cached_reads(mut self, enabled: bool) -> Self {
        self.cached_reads = enabled;
        self
    }

    /// Sets the agent id (empty means the hub hash).
    #[must_use]
    pub fn agent_id(mut self, id: &str) -> Self {
        self.agent_id = agent_id(Some(id), &self.hub_hash);
        self
    }

    /// Sets the status sync interval.
    #[must_use]
    pub fn status_sync_interval(mut self, interval: Duration) -> Self {
        self.status_sync_interval = interval;
        self
    }

    /// Sets the full re-apply interval.
    #[must_use]
    pub fn resync_interval(mut self, interval: Duration) -> Self {
        self.resync_interval = interval;
        self
    }

    /// Sets the eviction grace period of unmanaged AppliedManifestWorks.
    #[must_use]
    pub fn eviction_grace_period(mut self, grace: Duration) -> Self {
        self.eviction_grace_period = grace;
        self
    }

    /// Enables `JsonRaw` feedback values.
    #[must_use]
    pub fn raw_feedback_json_string(mut self, enabled: bool) -> Self {
        self.raw_feedback_json_string = enabled;
        self
    }
}
