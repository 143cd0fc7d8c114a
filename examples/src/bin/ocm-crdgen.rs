//! `ocm-crdgen`: writes every OCM CustomResourceDefinition as YAML.
//!
//! ```text
//! ocm-crdgen                 # all CRDs to stdout, as one multi-document YAML stream
//! ocm-crdgen --out-dir crds  # one file per CRD: crds/<crd name>.yaml
//! ocm-crdgen --list          # just the CRD names
//! ocm-crdgen --multicluster  # also the SIG-Multicluster CRDs (ClusterProfile, PlacementDecision)
//! ocm-crdgen --extended      # with our opt-in fields in the ManifestWorkReplicaSet CRD
//! ```
//!
//! Pipe the output to `kubectl apply -f -` to install the OCM APIs on a hub. By default the
//! CRDs are upstream's, exactly. `--extended` adds the ManifestWorkReplicaSet fields of our
//! opt-ins (`ocm-hub-controller --rollback`: `spec.revisionHistoryLimit`,
//! `rolloutStrategy.failureStrategy` and four status fields; `--feedback-aggregation`:
//! `spec.feedbackAggregation` and `status.feedbackAggregation`), which a hub serving upstream's
//! CRD prunes. The `multicluster.x-k8s.io` CRDs (from cluster-inventory-api) are what
//! `ocm-hub-controller`'s `ClusterProfile` and `SIGPlacementDecision` gates write.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Write the OCM CustomResourceDefinitions (work, cluster and addon groups) as YAML.
#[derive(Parser, Debug)]
#[command(name = "ocm-crdgen", version)]
struct Args {
    /// Write one `<crd name>.yaml` file per CRD into this directory instead of stdout.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// Only print the CRD names, one per line.
    #[arg(long, conflicts_with = "out_dir")]
    list: bool,

    /// Also write the SIG-Multicluster CRDs (multicluster.x-k8s.io ClusterProfile and
    /// PlacementDecision), needed by ocm-hub-controller's ClusterProfile and
    /// SIGPlacementDecision feature gates.
    #[arg(long)]
    multicluster: bool,

    /// Write the ManifestWorkReplicaSet CRD with the fields of our opt-ins (ocm-hub-controller
    /// --rollback and --feedback-aggregation), which upstream's CRD does not have. Without
    /// it, every CRD is upstream's.
    #[arg(long)]
    extended: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-crdgen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let mut crds = if args.extended {
        ocm_api::crd::extended_crds()
    } else {
        ocm_api::crds()
    };
    if args.multicluster {
        crds.extend(ocm_api::crd::multicluster_crds());
    }
    if args.list {
        for crd in &crds {
            ocm_examples::outln!("{}", crd.metadata.name.as_deref().unwrap_or_default());
        }
        return Ok(());
    }
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for crd in &crds {
            let name = crd.metadata.name.as_deref().unwrap_or_default();
            let yaml = ocm_api::crd::to_yaml(crd).map_err(|e| e.to_string())?;
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, yaml)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        return Ok(());
    }
    for crd in &crds {
        let yaml = ocm_api::crd::to_yaml(crd).map_err(|e| e.to_string())?;
        // Ends the process quietly if the reader has gone (`ocm-crdgen | head`).
        ocm_examples::output::write_out(&format!("---\n{yaml}"));
    }
    Ok(())
}
