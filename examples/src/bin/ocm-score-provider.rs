//! `ocm-score-provider`: a customised score provider for Placement's AddOn prioritizer.
//!
//! ```text
//! ocm-score-provider --hub-kubeconfig hub.kubeconfig --cluster-name cluster1 \
//!     --score-name cpuAvailable --min 0 --max 64 --value-command 'nproc' --interval 60s
//! ocm-score-provider --hub-kubeconfig hub.kubeconfig --cluster-name cluster1 \
//!     --score-name latency --value-file /run/latency --min 0 --max 500 --once
//! ocm-score-provider --hub-kubeconfig hub.kubeconfig --cluster-name cluster1 \
//!     --score-name cpuAvailable --raw --value 12 --once
//! ```
//!
//! Each round reads a raw measurement (a fixed `--value`, the first number in
//! `--value-file`, or the first number `--value-command` prints), maps it onto the score range
//! with `200 * (x - min) / (max - min) - 100` (at or above `--max` scores 100, at or below
//! `--min` scores -100, the fraction cut toward zero), and writes it into the
//! AddOnPlacementScore `--resource-name` in the cluster's namespace on the hub with
//! `validUntil = now + --valid-for`. A round writes only when the score changed or
//! `validUntil` is within half of `--valid-for` of expiring.
//!
//! With `--raw` the measurement is written as the score itself (the fraction cut toward zero),
//! for providers that compute their score already, like the documentation's
//! `cpuAvailable: 12`; it must lie in the valid range `[-100, 100]`.
//!
//! Placements use it with a prioritizer such as
//! `{"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "resource-usage-score",
//! "scoreName": "cpuAvailable"}}, "weight": 1}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use ocm_api::cluster::v1alpha1::AddOnPlacementScoreItem;
use ocm_placement::inventory::score::{MAX_SCORE, MIN_SCORE, ScoreWriter, normalize};

/// Write an AddOnPlacementScore for one managed cluster, periodically: a measurement
/// normalised to [-100, 100], or (--raw) a score written as it is.
#[derive(Parser, Debug)]
#[command(name = "ocm-score-provider", version)]
#[command(group(ArgGroup::new("source").required(true).args(["value", "value_file", "value_command"])))]
struct Args {
    /// Kubeconfig of the hub.
    #[arg(long, value_name = "FILE")]
    hub_kubeconfig: PathBuf,

    /// The managed cluster: the score is written in this hub namespace.
    #[arg(long)]
    cluster_name: String,

    /// The score's name inside the AddOnPlacementScore (a placement's `addOn.scoreName`).
    #[arg(long)]
    score_name: String,

    /// The AddOnPlacementScore object's name (a placement's `addOn.resourceName`).
    #[arg(long, default_value = "resource-usage-score")]
    resource_name: String,

    /// The raw value that maps to -100.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    min: f64,

    /// The raw value that maps to 100.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    max: f64,

    /// Write the value as the score, without normalising it (it must lie in [-100, 100]).
    #[arg(long, conflicts_with_all = ["min", "max"])]
    raw: bool,

    /// A fixed raw value.
    #[arg(long, allow_negative_numbers = true)]
    value: Option<f64>,

    /// A file whose first number is the raw value (read every round).
    #[arg(long, value_name = "FILE")]
    value_file: Option<PathBuf>,

    /// A shell command whose output's first number is the raw value (run every round).
    #[arg(long, value_name = "COMMAND")]
    value_command: Option<String>,

    /// How long a written score stays valid (Go duration syntax; 0 = never expires).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    valid_for: Duration,

    /// Time between rounds (Go duration syntax).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    interval: Duration,

    /// Write once and exit.
    #[arg(long)]
    once: bool,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    ocm_api::cluster::v1alpha1::duration::parse_go_duration(s).map_err(|e| e.to_string())
}

/// The first number in `text`.
fn first_number(text: &str, source: &str) -> Result<f64, String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .find(|w| !w.is_empty())
        .ok_or_else(|| format!("{source} produced no value"))?
        .parse::<f64>()
        .map_err(|e| format!("{source}: not a number: {e}"))
}

async fn read_value(args: &Args) -> Result<f64, String> {
    if let Some(v) = args.value {
        return Ok(v);
    }
    if let Some(path) = &args.value_file {
        let text = tokio::fs::read_to_string(path)
            .await
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        return first_number(&text, &path.display().to_string());
    }
    if let Some(command) = &args.value_command {
        let out = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .output()
            .await
            .map_err(|e| format!("cannot run {command:?}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{command:?} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        return first_number(&String::from_utf8_lossy(&out.stdout), command);
    }
    Err("no value source given".into())
}

/// `value` as a score written as it is: cut toward zero, within `[-100, 100]`.
fn raw_score(value: f64) -> Result<i32, String> {
    if !value.is_finite() {
        return Err(format!("raw score {value} is not a finite number"));
    }
    let score = value.trunc();
    if score < f64::from(MIN_SCORE) || score > f64::from(MAX_SCORE) {
        return Err(format!(
            "raw score {value} is outside the valid range [{MIN_SCORE}, {MAX_SCORE}]; \
             normalise it with --min and --max instead of --raw"
        ));
    }
    // An integer within [-100, 100], so the conversion is exact.
    Ok(score as i32)
}

async fn round(args: &Args, writer: &ScoreWriter) -> Result<(), String> {
    let raw = read_value(args).await?;
    let score = if args.raw {
        raw_score(raw)?
    } else {
        normalize(raw, args.min, args.max).map_err(|e| e.to_string())?
    };
    let valid_for = (!args.valid_for.is_zero()).then_some(args.valid_for);
    let item = AddOnPlacementScoreItem {
        name: args.score_name.clone(),
        value: score,
    };
    let writes = writer
        .write(&[item], valid_for)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(
        cluster = %args.cluster_name,
        score_name = %args.score_name,
        raw,
        score,
        writes,
        "score round"
    );
    Ok(())
}

async fn run(args: Args) -> Result<(), String> {
    if args.min > args.max {
        return Err(format!(
            "--min {} is greater than --max {}",
            args.min, args.max
        ));
    }
    let path = &args.hub_kubeconfig;
    let kubeconfig = Kubeconfig::read_from(path)
        .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?;
    let hub = Client::try_from(config).map_err(|e| format!("cannot build the hub client: {e}"))?;
    let writer = ScoreWriter::new(hub, &args.cluster_name, &args.resource_name);
    if args.once {
        return round(&args, &writer).await;
    }
    let mut ticker = tokio::time::interval(args.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                if let Err(error) = round(&args, &writer).await {
                    tracing::warn!(%error, "score round failed");
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    ocm_examples::logging::init("info");
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-score-provider: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::raw_score;

    #[test]
    fn raw_scores_are_cut_toward_zero_and_range_checked() {
        assert_eq!(raw_score(12.0), Ok(12));
        assert_eq!(raw_score(-3.9), Ok(-3));
        assert_eq!(raw_score(100.4), Ok(100));
        assert!(
            raw_score(101.0)
                .unwrap_err()
                .contains("outside the valid range [-100, 100]")
        );
        assert!(raw_score(-101.0).is_err());
        assert!(
            raw_score(f64::NAN)
                .unwrap_err()
                .contains("not a finite number")
        );
    }
}
