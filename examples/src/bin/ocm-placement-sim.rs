//! `ocm-placement-sim`: schedule Placements offline, from files, exactly as the hub controller
//! would, and print the outcome as one JSON document.
//!
//! ```text
//! kubectl get managedclusters,managedclustersets,placements,placementdecisions,addonplacementscores -A -o yaml > hub.yaml
//! kubectl get managedclustersetbindings -A -o yaml > bindings.yaml
//! ocm-placement-sim hub.yaml bindings.yaml --now 2026-01-01T00:00:00Z --explain
//! ocm-placement-sim fixtures/ --runs 20
//! ```
//!
//! Input: YAML or JSON files (`.json` files are read as JSON, everything else as YAML,
//! multi-document files included; `-` reads standard input) or directories of them
//! (`*.yaml`, `*.yml`, `*.json`; add `-R` to descend). `List` objects are expanded. Objects
//! of other kinds are ignored and counted in `ignoredObjects`. CRD defaults are applied as the
//! API server would have applied them.
//!
//! Output: `{"placements": [...], "ignoredObjects": {kind: count}}` with one entry per
//! Placement, sorted by namespace and name (see `ocm_placement::sim::render`); a placement the
//! controller would not schedule carries `skipped` (the reason) and one that cannot be
//! scheduled at all carries `error` instead of the scheduling fields. `--runs N`
//! repeats the scheduling call N times and adds `timing` (`scheduleMedianMs`,
//! `scheduleMinMs`); `--explain` adds the per-cluster filter and prioritizer breakdown.
//!
//! `--feature-gates` takes the scheduling gates of `ocm-hub-controller`, off by default:
//! `TopologySpread=true` honours `spec.spreadPolicy` (a constraint that stops the selection
//! short says so in the `PlacementSatisfied` message), `PlacementDecisionScore=true` orders
//! `selected` and the decisions as `spec.sortBy` says.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use k8s_openapi::jiff::Timestamp;
use ocm_api::constants::feature_gates as gate;
use ocm_examples::gates::FeatureGates;
use ocm_placement::Scheduler;
use ocm_placement::sim::{SimInput, render, render_explain, skip_reason};
use serde_json::{Value, json};

/// Schedule Placements offline from hub objects in YAML or JSON files.
#[derive(Parser, Debug)]
#[command(name = "ocm-placement-sim", version)]
struct Args {
    /// Files or directories with hub objects (`-` = standard input).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Descend into subdirectories.
    #[arg(short = 'R', long)]
    recursive: bool,

    /// The scheduling instant, RFC 3339 (default: now).
    #[arg(long)]
    now: Option<String>,

    /// Repeat each scheduling call this many times and report its median and minimum time.
    #[arg(long, value_name = "N")]
    runs: Option<usize>,

    /// Add the per-cluster filter and prioritizer breakdown.
    #[arg(long)]
    explain: bool,

    /// Scheduling feature gates of ocm-hub-controller, `Name=true|false,...`, off by default:
    /// TopologySpread (honour a Placement's spec.spreadPolicy) and PlacementDecisionScore
    /// (order decisions as spec.sortBy says).
    #[arg(long, default_value = "", value_name = "GATES")]
    feature_gates: String,
}

/// Files under `path` (the path itself when it is a file), sorted.
fn files(path: &Path, recursive: bool, top: bool, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.as_os_str() == "-" {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    if !top && !recursive {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            files(&entry, recursive, false, out)?;
        } else if entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(entry);
        }
    }
    Ok(())
}

fn load(input: &mut SimInput, path: &Path) -> Result<(), String> {
    if path.as_os_str() == "-" {
        let text = std::io::read_to_string(std::io::stdin())
            .map_err(|e| format!("standard input: {e}"))?;
        return input.add_yaml("-", &text).map_err(|e| e.to_string());
    }
    input.add_file(path).map_err(|e| e.to_string())
}

fn median_and_min(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let median = if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    };
    (median, samples[0])
}

fn run(args: Args) -> Result<Value, String> {
    let now: Timestamp = match &args.now {
        Some(text) => text
            .parse()
            .map_err(|e| format!("--now {text:?} is not an RFC 3339 time: {e}"))?,
        None => Timestamp::now(),
    };
    if args.runs == Some(0) {
        return Err("--runs must be at least 1".into());
    }
    let gates = FeatureGates::parse(
        &args.feature_gates,
        &[gate::TOPOLOGY_SPREAD, gate::PLACEMENT_DECISION_SCORE],
    )?;
    let scheduler = Scheduler::new()
        .with_topology_spread(gates.enabled(gate::TOPOLOGY_SPREAD))
        .with_decision_scores(gates.enabled(gate::PLACEMENT_DECISION_SCORE));
    let mut paths = Vec::new();
    for path in &args.paths {
        files(path, args.recursive, true, &mut paths)?;
    }
    let mut input = SimInput::new().with_scheduler(scheduler);
    for path in &paths {
        load(&mut input, path)?;
    }
    let snapshot = input.snapshot();
    let mut out = Vec::new();
    for placement in input.placements() {
        if let Some(reason) = skip_reason(&placement) {
            out.push(json!({
                "namespace": placement.metadata.namespace,
                "name": placement.metadata.name,
                "skipped": reason,
            }));
            continue;
        }
        // Like the controller, a placement that cannot be scheduled at all (for example an
        // eligible set with an invalid selector) gets no decisions; the others go on.
        let result = match input.schedule(&placement, &snapshot, now) {
            Ok(result) => result,
            Err(error) => {
                out.push(json!({
                    "namespace": placement.metadata.namespace,
                    "name": placement.metadata.name,
                    "error": error.to_string(),
                }));
                continue;
            }
        };
        let mut entry = render(&placement, &result, &snapshot, now);
        if let Some(runs) = args.runs {
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs {
                let start = Instant::now();
                let again = input.schedule(&placement, &snapshot, now);
                samples.push(start.elapsed().as_secs_f64() * 1000.0);
                std::hint::black_box(again.map_err(|e| e.to_string())?);
            }
            let (median, min) = median_and_min(samples);
            entry["timing"] =
                json!({"runs": runs, "scheduleMedianMs": median, "scheduleMinMs": min});
        }
        if args.explain {
            entry["explain"] = render_explain(&result);
        }
        out.push(entry);
    }
    Ok(json!({"placements": out, "ignoredObjects": input.ignored()}))
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(document) => match serde_json::to_string_pretty(&document) {
            Ok(text) => {
                ocm_examples::outln!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ocm-placement-sim: {e}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("ocm-placement-sim: {message}");
            ExitCode::FAILURE
        }
    }
}
