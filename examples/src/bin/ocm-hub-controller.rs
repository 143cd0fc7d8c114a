//! `ocm-hub-controller`: the hub side of OCM work distribution.
//!
//! Runs, against one hub, the cluster inventory controller (cluster-set membership conditions,
//! binding conditions, the `default` and `global` sets, and the unavailable/unreachable taints
//! from cluster health), optionally the cluster lease controller (`--cluster-lease`), the
//! Placement controller (schedules every Placement and writes its
//! PlacementDecisions and status) and the ManifestWorkReplicaSet controller (fans each replica
//! set out to the clusters its placements select, following their rollout strategies).
//!
//! ```text
//! ocm-hub-controller --kubeconfig hub.kubeconfig --namespace default
//! ocm-hub-controller --kubeconfig hub.kubeconfig --namespace default --success-criteria applied-and-available
//! ```
//!
//! Point it at a real hub or at `ocm-fake-apiserver`. The OCM CRDs must be installed
//! (`ocm-crdgen | kubectl apply -f -`, or `--install-crds`). `--rollback` and
//! `--feedback-aggregation` need the extended ManifestWorkReplicaSet CRD (`ocm-crdgen
//! --extended`); on a hub that serves upstream's, every replica set says so in its
//! `OptInFieldsInstalled` condition (reading the CRD takes get, list and watch on
//! `customresourcedefinitions`).
//!
//! SIGTERM or SIGINT stops it gracefully. Replicas elect a leader with the Lease
//! `ocm-hub-controller-lock` on the hub, in `--namespace` (default: the pod's namespace): only
//! the holder runs the controllers, the others stand by and take over when it stops (at once
//! when it releases the Lease on shutdown, after the lease duration when it dies). Outside a
//! pod `--namespace` is required, as upstream's hub controllers require it (they refuse to
//! start with `namespace may not be empty`); `--disable-leader-election` runs one replica
//! without a Lease. Two replicas started the same way therefore never both act.
//! `--endpoints-address :8080` serves `/healthz`, `/readyz` and `/metrics` (placement schedule
//! durations, rollout progress of every ManifestWorkReplicaSet, leadership).
//! `--log-format json` writes one JSON object per line.
//!
//! `--feature-gates Name=true,...` turns on, all off by default (upstream's behaviour):
//!
//! * `TopologySpread` (ours): the Placement controller honours `spec.spreadPolicy`
//!   (`ocm_placement::spread`), which upstream's scheduler ignores;
//! * `PlacementDecisionScore` (ours): scores in PlacementDecisions, `spec.sortBy` and
//!   `spec.scoreRateLimit` (`ocm_placement::decisions`), API fields upstream does not implement;
//! * `SIGPlacementDecision` (upstream's gate): SIG-Multicluster PlacementDecisions mirroring
//!   OCM's (`ocm_placement::sig`);
//! * `ClusterProfile` (upstream's gate): SIG-Multicluster ClusterProfiles of the managed
//!   clusters in every namespace bound to their sets (`ocm_placement::profile`).
//!
//! The last two need the `multicluster.x-k8s.io` CRDs, which `--install-crds` installs with
//! them (`ocm-crdgen --multicluster` prints them), and, on a real hub, RBAC to manage
//! `clusterprofiles` / `placementdecisions` of that group (and to get namespaces).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, ValueEnum};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use ocm_api::constants::feature_gates as gate;
use ocm_examples::gates::FeatureGates;
use ocm_placement::Scheduler;
use ocm_placement::controller::PlacementController;
use ocm_placement::inventory::ClusterInventoryController;
use ocm_placement::profile::ClusterProfileController;
use ocm_placement::sig::SigPlacementDecisionController;
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;

/// When a cluster's ManifestWork counts as rolled out.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Criteria {
    /// Upstream: Applied=True and Progressing=False (Progressing comes only from condition
    /// rules, so plain works never complete a progressive rollout).
    Upstream,
    /// Opt-in: Applied=True and Available=True when the work has no Progressing condition.
    AppliedAndAvailable,
}

/// Run the OCM hub controllers (Placement and ManifestWorkReplicaSet) against a hub.
#[derive(Parser, Debug)]
#[command(name = "ocm-hub-controller", version)]
struct Args {
    /// Kubeconfig of the hub (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, env = "HUB_KUBECONFIG", value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    /// Context to use from the kubeconfig.
    #[arg(long)]
    context: Option<String>,

    /// When a cluster's work counts as rolled out for progressive rollouts.
    #[arg(long, value_enum, default_value = "upstream")]
    success_criteria: Criteria,

    /// Install (server-side apply) the OCM CRDs before starting: upstream's, with the
    /// ManifestWorkReplicaSet CRD extended by the fields of --rollback and
    /// --feedback-aggregation when either is on (`ocm-crdgen --extended`).
    #[arg(long)]
    install_crds: bool,

    /// Do not run the Placement controller (another scheduler writes the decisions).
    #[arg(long)]
    no_placement: bool,

    /// Do not run the ManifestWorkReplicaSet controller.
    #[arg(long)]
    no_replicaset: bool,

    /// ManifestWorkReplicaSet rollback (ours, from upstream's accepted proposal; off by
    /// default): keep a revision history of templates as ControllerRevisions (up to
    /// spec.revisionHistoryLimit) and, for a rollout whose failureStrategy is AbortAll, put the
    /// last good template back on every cluster once maxFailures is breached.
    #[arg(long)]
    rollback: bool,

    /// ManifestWorkReplicaSet per-cluster values (ours; off by default, when manifests pass
    /// through unchanged as upstream's): {{CLUSTER_NAME}}, {{CLUSTER_LABEL:<key>}} and
    /// {{CLUSTER_CLAIM:<name>}} in the template's string values are resolved from each
    /// selected ManagedCluster; a cluster missing a value gets no work and is named in the
    /// ClusterValuesResolved condition.
    #[arg(long)]
    cluster_values: bool,

    /// ManifestWorkReplicaSet feedback aggregation (ours; off by default): the status-feedback
    /// values a replica set names in spec.feedbackAggregation are aggregated across its works
    /// into status.feedbackAggregation (counts per value; min, max and sum of integers),
    /// written only on a change and at most once per spec.feedbackAggregation.interval.
    #[arg(long)]
    feedback_aggregation: bool,

    /// Do not run the cluster inventory controller (cluster-set conditions, bindings, the
    /// `default` and `global` sets, and the unavailable/unreachable taints).
    #[arg(long)]
    no_inventory: bool,

    #[command(flatten)]
    election: ocm_examples::runtime::LeaderElectionArgs,

    #[command(flatten)]
    endpoints: ocm_examples::runtime::EndpointArgs,

    #[command(flatten)]
    logs: ocm_examples::logging::LogArgs,
    /// Also run the cluster lease controller: create each accepted cluster's lease and mark
    /// the cluster `Available=Unknown` when its agent stops renewing it for 5 lease durations
    /// (run the agents with `ocm-work-agent --cluster-lease`).
    #[arg(long)]
    cluster_lease: bool,

    /// Feature gates, `Name=true|false,...`, all off by default: TopologySpread (honour a
    /// Placement's spec.spreadPolicy; ours), PlacementDecisionScore (scores in
    /// PlacementDecisions, spec.sortBy and spec.scoreRateLimit; ours), SIGPlacementDecision
    /// (mirror PlacementDecisions as multicluster.x-k8s.io PlacementDecisions) and
    /// ClusterProfile (multicluster.x-k8s.io ClusterProfiles of the managed clusters). The last
    /// two need their CRDs (installed with --install-crds).
    #[arg(long, default_value = "", value_name = "GATES")]
    feature_gates: String,
}

/// The gates `--feature-gates` takes.
const GATES: [&str; 4] = [
    gate::TOPOLOGY_SPREAD,
    gate::PLACEMENT_DECISION_SCORE,
    gate::SIG_PLACEMENT_DECISION,
    gate::CLUSTER_PROFILE,
];

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    args.logs.init();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-hub-controller: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn client(args: &Args) -> Result<Client, String> {
    let options = KubeConfigOptions {
        context: args.context.clone(),
        ..Default::default()
    };
    let config = match &args.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?
        }
        None => Config::infer()
            .await
            .map_err(|e| format!("no kubeconfig given and none found: {e}"))?,
    };
    Client::try_from(config).map_err(|e| format!("cannot build a client: {e}"))
}

async fn run(args: Args) -> Result<(), String> {
    let gates = FeatureGates::parse(&args.feature_gates, &GATES)?;
    // Leader election (#14): the controllers run only on the replica holding the Lease. Its
    // settings are checked before anything is written to the hub.
    let election = args
        .election
        .config(ocm_work::runtime::leader::HUB_CONTROLLER_LEASE)?;
    let client = client(&args).await?;
    if args.install_crds {
        let api: Api<CustomResourceDefinition> = Api::all(client.clone());
        // The multicluster.x-k8s.io CRD each SIG output needs, with its gate.
        let wanted = |crd: &CustomResourceDefinition| match crd.spec.names.kind.as_str() {
            "ClusterProfile" => gates.enabled(gate::CLUSTER_PROFILE),
            _ => gates.enabled(gate::SIG_PLACEMENT_DECISION),
        };
        let multicluster = ocm_api::crd::multicluster_crds().into_iter().filter(wanted);
        // The opt-ins that need fields of the extended ManifestWorkReplicaSet CRD get it.
        let ocm = if args.rollback || args.feedback_aggregation {
            ocm_api::crd::extended_crds()
        } else {
            ocm_api::crds()
        };
        for crd in ocm.into_iter().chain(multicluster) {
            let name = crd.metadata.name.clone().unwrap_or_default();
            api.patch(
                &name,
                &PatchParams::apply("ocm-hub-controller").force(),
                &Patch::Apply(&crd),
            )
            .await
            .map_err(|e| format!("cannot install CRD {name}: {e}"))?;
        }
        tracing::info!("installed the CRDs");
    }
    if !gates.enabled_names().is_empty() {
        tracing::info!(gates = ?gates.enabled_names(), "feature gates on");
    }
    let sig_outputs =
        gates.enabled(gate::SIG_PLACEMENT_DECISION) || gates.enabled(gate::CLUSTER_PROFILE);
    if args.no_placement && args.no_inventory && args.no_replicaset && !sig_outputs {
        return Err("every controller is disabled: nothing to run".into());
    }
    if args.no_placement {
        for scheduling in [gate::TOPOLOGY_SPREAD, gate::PLACEMENT_DECISION_SCORE] {
            if gates.enabled(scheduling) {
                tracing::warn!(
                    gate = scheduling,
                    "this gate changes the Placement controller, which --no-placement turns off"
                );
            }
        }
    }
    let elector = ocm_examples::runtime::elector(&client, election);
    let shutdown = ocm_work::runtime::shutdown::Shutdown::on_signals();
    // Endpoints (#14): /healthz, /readyz (a standby, or the leader once the informers of
    // every enabled controller have listed) and /metrics.
    let metrics = ocm_work::runtime::metrics::Metrics::new();
    let hub_metrics = metrics.hub();
    let health = ocm_work::runtime::health::Health::new();
    let synced = Synced::default();
    let enabled = synced.clone();
    let (no_placement, no_inventory, no_replicaset) =
        (args.no_placement, args.no_inventory, args.no_replicaset);
    let (sig_off, profile_off) = (
        !gates.enabled(gate::SIG_PLACEMENT_DECISION),
        !gates.enabled(gate::CLUSTER_PROFILE),
    );
    health.readiness_check(
        "leader",
        ocm_work::runtime::health::leader_ready(
            elector.as_ref().map(|e| e.state()),
            move || {
                (no_placement || enabled.placement.load(Ordering::SeqCst))
                    && (no_inventory || enabled.inventory.load(Ordering::SeqCst))
                    && (no_replicaset || enabled.replicaset.load(Ordering::SeqCst))
                    && (sig_off || enabled.sig.load(Ordering::SeqCst))
                    && (profile_off || enabled.profile.load(Ordering::SeqCst))
            },
            "the controllers' informers",
        ),
    );
    if let Some(elector) = &elector {
        metrics.leader(
            ocm_work::runtime::leader::HUB_CONTROLLER_LEASE,
            elector.state(),
        );
    }
    let endpoints_stop = ocm_work::runtime::shutdown::Shutdown::new();
    let rollouts = tokio::spawn(metrics.follow_replica_set_rollouts(client.clone()));
    let endpoints = args
        .endpoints
        .serve(health, metrics, &endpoints_stop)
        .await?;
    let result = ocm_examples::runtime::run_elected(elector.as_ref(), &shutdown, |leading| {
        run_controllers(
            &args,
            &gates,
            client.clone(),
            leading,
            hub_metrics,
            synced.clone(),
        )
    })
    .await;
    endpoints_stop.cancel();
    rollouts.abort();
    if let Some(task) = endpoints {
        let _ = task.await;
    }
    result
}

/// Whether each controller's informers have listed in the current leadership term.
#[derive(Clone, Default)]
struct Synced {
    placement: Arc<AtomicBool>,
    inventory: Arc<AtomicBool>,
    replicaset: Arc<AtomicBool>,
    sig: Arc<AtomicBool>,
    profile: Arc<AtomicBool>,
}

/// Runs the enabled controllers until `shutdown`, then waits for them to finish.
async fn run_controllers(
    args: &Args,
    gates: &FeatureGates,
    client: Client,
    shutdown: ocm_work::runtime::shutdown::Shutdown,
    metrics: ocm_work::runtime::metrics::HubMetrics,
    synced: Synced,
) {
    // A new term lists again: not ready until it has.
    for flag in [
        &synced.placement,
        &synced.inventory,
        &synced.replicaset,
        &synced.sig,
        &synced.profile,
    ] {
        flag.store(false, Ordering::SeqCst);
    }
    let mut tasks = Vec::new();
    if !args.no_placement {
        let scheduler = Scheduler::new()
            .with_topology_spread(gates.enabled(gate::TOPOLOGY_SPREAD))
            .with_decision_scores(gates.enabled(gate::PLACEMENT_DECISION_SCORE));
        let controller = PlacementController::new(client.clone())
            .with_scheduler(scheduler)
            .with_observer(Arc::new(
                move |namespace: &str, name: &str, elapsed, succeeded| {
                    metrics.scheduled(namespace, name, elapsed, succeeded)
                },
            ))
            .with_synced_flag(synced.placement.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!("placement controller started");
    }
    if gates.enabled(gate::SIG_PLACEMENT_DECISION) {
        let controller = SigPlacementDecisionController::new(client.clone())
            .with_synced_flag(synced.sig.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!("SIG PlacementDecision controller started");
    }
    if gates.enabled(gate::CLUSTER_PROFILE) {
        let controller =
            ClusterProfileController::new(client.clone()).with_synced_flag(synced.profile.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!("ClusterProfile controller started");
    }
    if !args.no_inventory {
        let controller = ClusterInventoryController::new(client.clone())
            .with_synced_flag(synced.inventory.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!("cluster inventory controller started");
    }
    if args.cluster_lease {
        let controller =
            ocm_placement::inventory::lease::ClusterLeaseController::new(client.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!("cluster lease controller started");
    }
    if !args.no_replicaset {
        let criteria = match args.success_criteria {
            Criteria::Upstream => SuccessCriteria::ProgressingCondition,
            Criteria::AppliedAndAvailable => SuccessCriteria::AppliedAndAvailable,
        };
        let controller = ReplicaSetController::new(client.clone())
            .with_success_criteria(criteria)
            .with_rollback(args.rollback)
            .with_cluster_values(args.cluster_values)
            .with_feedback_aggregation(args.feedback_aggregation)
            .with_synced_flag(synced.replicaset.clone());
        tasks.push(tokio::spawn(controller.run(shutdown.cancelled())));
        tracing::info!(
            ?criteria,
            rollback = args.rollback,
            cluster_values = args.cluster_values,
            feedback_aggregation = args.feedback_aggregation,
            "ManifestWorkReplicaSet controller started"
        );
    }
    for task in tasks {
        let _ = task.await;
    }
}
