//! `ocm-work`: create, list and delete ManifestWorks on a hub, like `clusteradm`.
//!
//! ```text
//! ocm-work create work my-first-work -f nginx.yaml --clusters cluster1,cluster2
//! ocm-work create work my-first-work -f manifests/ --placement default/placement1 --overwrite
//! ocm-work get works --cluster cluster1
//! ocm-work get works my-first-work --cluster cluster1
//! ocm-work delete work my-first-work --cluster cluster1
//! ```
//!
//! With `--placement NAMESPACE/NAME`, the PlacementDecisions of that Placement are read and one
//! ManifestWork is created in the namespace of every decided cluster.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, ResourceExt};
use ocm_api::builder::ManifestWorkBuilder;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::labels;
use ocm_api::work::v1::ManifestWork;

/// Create, list and delete ManifestWorks on an OCM hub.
#[derive(Parser, Debug)]
#[command(name = "ocm-work", version, about)]
struct Cli {
    /// Kubeconfig of the hub (default: KUBECONFIG or ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    #[command(subcommand)]
    command: Verb,
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Create a resource.
    Create {
        #[command(subcommand)]
        what: CreateWhat,
    },
    /// Show resources.
    Get {
        #[command(subcommand)]
        what: GetWhat,
    },
    /// Delete a resource.
    Delete {
        #[command(subcommand)]
        what: DeleteWhat,
    },
}

#[derive(Subcommand, Debug)]
enum CreateWhat {
    /// Create a ManifestWork from manifest files or directories.
    Work {
        /// Name of the ManifestWork.
        name: String,
        /// Manifest files or directories (YAML or JSON; directories are read recursively).
        #[arg(short = 'f', long = "file", required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Clusters to create the work for, comma separated.
        #[arg(
            long,
            value_delimiter = ',',
            conflicts_with = "placement",
            required_unless_present = "placement"
        )]
        clusters: Vec<String>,
        /// A Placement (`NAMESPACE/NAME`) whose decided clusters get the work.
        #[arg(long)]
        placement: Option<String>,
        /// Replace an existing work of the same name.
        #[arg(long)]
        overwrite: bool,
    },
}

#[derive(Subcommand, Debug)]
enum GetWhat {
    /// Show ManifestWorks of a cluster, with their conditions and feedback values.
    Works {
        /// Only this work.
        name: Option<String>,
        /// The cluster.
        #[arg(long)]
        cluster: String,
    },
}

#[derive(Subcommand, Debug)]
enum DeleteWhat {
    /// Delete a ManifestWork.
    Work {
        /// Name of the ManifestWork.
        name: String,
        /// The cluster.
        #[arg(long)]
        cluster: String,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-work: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn client(kubeconfig: Option<&PathBuf>) -> Result<Client, String> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?
        }
        None => Config::infer()
            .await
            .map_err(|e| format!("no kubeconfig found: {e}"))?,
    };
    Client::try_from(config).map_err(|e| format!("cannot build a client: {e}"))
}

async fn run(cli: Cli) -> Result<(), String> {
    let client = client(cli.kubeconfig.as_ref()).await?;
    match cli.command {
        Verb::Create {
            what:
                CreateWhat::Work {
                    name,
                    files,
                    clusters,
                    placement,
                    overwrite,
                },
        } => {
            let clusters = match placement {
                Some(p) => decided_clusters(&client, &p).await?,
                None => clusters,
            };
            if clusters.is_empty() {
                return Err("no cluster to create the work for".into());
            }
            for cluster in clusters {
                create_work(&client, &name, &files, &cluster, overwrite).await?;
            }
            Ok(())
        }
        Verb::Get {
            what: GetWhat::Works { name, cluster },
        } => get_works(&client, name.as_deref(), &cluster).await,
        Verb::Delete {
            what: DeleteWhat::Work { name, cluster },
        } => {
            let api: Api<ManifestWork> = Api::namespaced(client, &cluster);
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {
                    println!("ManifestWork {cluster}/{name} deleted");
                    Ok(())
                }
                Err(kube::Error::Api(s)) if s.code == 404 => Err(format!(
                    "ManifestWork {name} not found in cluster {cluster}"
                )),
                Err(e) => Err(format!("cannot delete ManifestWork {cluster}/{name}: {e}")),
            }
        }
    }
}

async fn decided_clusters(client: &Client, placement: &str) -> Result<Vec<String>, String> {
    let (namespace, name) = placement
        .split_once('/')
        .filter(|(ns, n)| !ns.is_empty() && !n.is_empty())
        .ok_or_else(|| format!("--placement must be NAMESPACE/NAME, got {placement:?}"))?;
    let placements: Api<Placement> = Api::namespaced(client.clone(), namespace);
    if placements
        .get_opt(name)
        .await
        .map_err(|e| format!("cannot read Placement {placement}: {e}"))?
        .is_none()
    {
        return Err(format!("Placement {placement} not found"));
    }
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), namespace);
    let list = decisions
        .list(&ListParams::default().labels(&format!("{}={name}", labels::PLACEMENT)))
        .await
        .map_err(|e| format!("cannot list the decisions of Placement {placement}: {e}"))?;
    let mut clusters: Vec<String> = list
        .items
        .iter()
        .flat_map(|d| d.cluster_names())
        .map(str::to_string)
        .collect();
    clusters.sort();
    clusters.dedup();
    if clusters.is_empty() {
        return Err(format!(
            "Placement {placement} has not selected any cluster"
        ));
    }
    Ok(clusters)
}

async fn create_work(
    client: &Client,
    name: &str,
    files: &[PathBuf],
    cluster: &str,
    overwrite: bool,
) -> Result<(), String> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces
        .get_opt(cluster)
        .await
        .map_err(|e| format!("cannot read namespace {cluster}: {e}"))?
        .is_none()
    {
        return Err(format!(
            "cluster namespace {cluster} not found on the hub: is {cluster} a registered managed cluster?"
        ));
    }
    let work = ManifestWorkBuilder::new(name, cluster)
        .paths(files)
        .and_then(|b| b.build())
        .map_err(|e| e.to_string())?;
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
    match api
        .get_opt(name)
        .await
        .map_err(|e| format!("cannot read ManifestWork {cluster}/{name}: {e}"))?
    {
        Some(existing) if overwrite => {
            let mut updated = existing;
            updated.spec = work.spec;
            api.replace(name, &PostParams::default(), &updated)
                .await
                .map_err(|e| format!("cannot update ManifestWork {cluster}/{name}: {e}"))?;
            println!("ManifestWork {cluster}/{name} updated");
        }
        Some(_) => {
            return Err(format!(
                "ManifestWork {cluster}/{name} already exists; use --overwrite to replace it"
            ));
        }
        None => {
            api.create(&PostParams::default(), &work)
                .await
                .map_err(|e| format!("cannot create ManifestWork {cluster}/{name}: {e}"))?;
            println!("ManifestWork {cluster}/{name} created");
        }
    }
    Ok(())
}

async fn get_works(client: &Client, name: Option<&str>, cluster: &str) -> Result<(), String> {
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
    let works = match name {
        Some(n) => vec![
            api.get_opt(n)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("ManifestWork {n} not found in cluster {cluster}"))?,
        ],
        None => {
            api.list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?
                .items
        }
    };
    println!(
        "{:<24} {:<10} {:<10} {:<10} FEEDBACK",
        "NAME", "APPLIED", "AVAILABLE", "DELETING"
    );
    for w in works {
        let conds = w
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        let status =
            |t: &str| conditions::find(&conds, t).map_or("-".to_string(), |c| c.status.clone());
        let feedback: Vec<String> = w
            .status
            .iter()
            .flat_map(|s| s.resource_status.iter())
            .flat_map(|r| r.manifests.iter().flatten())
            .flat_map(|m| {
                let kind = m.resource_meta.kind.clone().unwrap_or_default();
                let obj = m.resource_meta.name.clone().unwrap_or_default();
                m.status_feedbacks
                    .iter()
                    .flat_map(|f| f.values.iter().flatten())
                    .map(move |v| {
                        let f = &v.field_value;
                        let value = f
                            .integer
                            .map(|i| i.to_string())
                            .or_else(|| f.string.clone())
                            .or_else(|| f.boolean.map(|b| b.to_string()))
                            .or_else(|| f.json_raw.clone())
                            .unwrap_or_default();
                        format!("{kind}/{obj}.{}={value}", v.name)
                    })
            })
            .collect();
        println!(
            "{:<24} {:<10} {:<10} {:<10} {}",
            w.name_any(),
            status("Applied"),
            status("Available"),
            status("Deleting"),
            if feedback.is_empty() {
                "-".to_string()
            } else {
                feedback.join(" ")
            }
        );
    }
    Ok(())
}
