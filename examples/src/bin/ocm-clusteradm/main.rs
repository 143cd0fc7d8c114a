//! `ocm-clusteradm`: clusteradm's hub commands for ManifestWorks, ManagedClusters,
//! ManagedClusterSets and Placements, so that OCM's walkthroughs can be followed as written
//! (replace `clusteradm` with `ocm-clusteradm`).
//!
//! ```text
//! ocm-clusteradm create work my-first-work -f nginx.yaml --clusters cluster1,cluster2
//! ocm-clusteradm create work my-first-work -f manifests/ --placement default/placement1 --overwrite
//! ocm-clusteradm get works my-first-work --cluster cluster1
//! ocm-clusteradm delete work my-first-work --cluster cluster1
//! ocm-clusteradm get clusters
//! ocm-clusteradm get clustersets -o table
//! ocm-clusteradm get placements -otable
//! ocm-clusteradm create clusterset example-clusterset
//! ocm-clusteradm clusterset set example-clusterset --clusters cluster1
//! ocm-clusteradm clusterset bind example-clusterset --namespace default
//! ```
//!
//! Verbs, flags, messages and output columns are clusteradm's. Differences, all deliberate:
//!
//! * siblings in trees are sorted by name (clusteradm walks Go maps, so its order changes from
//!   run to run);
//! * `get works` shows, under each resource, its conditions and status feedback values (the
//!   "detailed status" of the documentation); clusteradm shows `applied` or `not-applied`;
//! * `get works NAME` for a work that exists in none of the given clusters fails with the API
//!   server's NotFound message, as `kubectl get` does (clusteradm prints an empty tree);
//! * `get placements` lists every PlacementDecision of a placement (clusteradm shows the last
//!   one only) and keys decisions by namespace too;
//! * errors print as kubectl prints them (`Error from server (NotFound): ...`, `error: ...`)
//!   and every error, usage errors included, exits with code 1; a closed output pipe ends the
//!   command quietly;
//! * there is no `--dry-run`.
//!
//! As clusteradm does, `create work --placement NS/NAME` creates the work in the clusters the
//! Placement decided that do not have it yet; with `--overwrite` it also deletes the work from
//! the clusters the Placement no longer selects. A work that already exists in a still-selected
//! cluster is left as it is (use `--clusters` to update it).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use ocm_examples::errors;

mod cluster;
mod placement;
mod work;

/// Manage ManifestWorks, ManagedClusters, ManagedClusterSets and Placements on an OCM hub,
/// with clusteradm's commands and output.
#[derive(Parser, Debug)]
#[command(name = "ocm-clusteradm", version)]
struct Cli {
    /// Path to the hub's kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    context: Option<String>,

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
    /// Get information from the cluster.
    Get {
        #[command(subcommand)]
        what: GetWhat,
    },
    /// Delete a resource.
    Delete {
        #[command(subcommand)]
        what: DeleteWhat,
    },
    /// Clusterset options: set, bind and unbind.
    Clusterset {
        #[command(subcommand)]
        what: ClustersetWhat,
    },
}

/// `--cluster` and `--clusters`, as clusteradm's cluster option.
#[derive(Args, Debug, Clone, Default)]
struct ClusterOption {
    /// Name of the managed cluster.
    #[arg(short = 'c', long)]
    cluster: Option<String>,
    /// A list of the managed clusters (comma separated).
    #[arg(long, value_delimiter = ',', num_args = 1)]
    clusters: Vec<String>,
}

impl ClusterOption {
    /// Every named cluster, sorted and without duplicates.
    fn all(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .clusters
            .iter()
            .cloned()
            .chain(self.cluster.clone().filter(|c| !c.is_empty()))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn validate(&self, allow_unset: bool) -> Result<(), CliError> {
        if self.clusters.iter().any(String::is_empty) {
            return Err(CliError::msg("--clusters cannot be set as an empty value"));
        }
        if !allow_unset && self.all().is_empty() {
            return Err(CliError::msg(
                "either --cluster or --clusters needs to be set",
            ));
        }
        Ok(())
    }
}

/// Output formats of the `get` commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
enum Output {
    /// A tree (clusteradm's default).
    #[default]
    Tree,
    /// A table, as `kubectl get` prints.
    Table,
    /// The objects as YAML documents.
    Yaml,
}

#[derive(Subcommand, Debug)]
enum CreateWhat {
    /// Create a work using a file containing common kubernetes resource manifests, or a
    /// directory containing a set of manifest files.
    Work(work::CreateWork),
    /// Create a clusterset; by default the created cluster set is empty.
    Clusterset {
        /// The clusterset's name.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
enum GetWhat {
    /// Get manifestworks on a specified managed cluster, with the detailed status of each
    /// resource (conditions and feedback values).
    Works(work::GetWorks),
    /// Get the clusters, with their CPU, memory, Kubernetes version and more.
    Clusters {
        /// Only the clusters of this clusterset.
        #[arg(long)]
        clusterset: Option<String>,
        /// Output format.
        #[arg(short = 'o', long, value_enum, default_value_t)]
        output: Output,
        /// (none: clusteradm takes no argument)
        #[arg(hide = true)]
        args: Vec<String>,
    },
    /// Get the clustersets, with their bound namespaces and status.
    Clustersets {
        /// Output format.
        #[arg(short = 'o', long, value_enum, default_value_t)]
        output: Output,
        /// (none: clusteradm takes no argument)
        #[arg(hide = true)]
        args: Vec<String>,
    },
    /// Get the placements, with their status and selected clusters.
    Placements {
        /// Only this placement.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// The namespace to look up (default: all namespaces).
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Output format.
        #[arg(short = 'o', long, value_enum, default_value_t)]
        output: Output,
    },
}

#[derive(Subcommand, Debug)]
enum DeleteWhat {
    /// Delete a work in the specified clusters and wait until it is gone.
    Work(work::DeleteWork),
}

#[derive(Subcommand, Debug)]
enum ClustersetWhat {
    /// Set clusters or managed namespaces to a clusterset.
    Set {
        /// The clusterset's name.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// Names of the managed clusters to set to the clusterset (comma separated).
        #[arg(long, value_delimiter = ',', num_args = 1)]
        clusters: Vec<String>,
        /// Managed namespaces to add to the clusterset (comma separated).
        #[arg(long, value_delimiter = ',', num_args = 1)]
        namespaces: Vec<String>,
    },
    /// Bind a clusterset to a namespace to make it a "workspace namespace". The namespace
    /// shall not be a cluster namespace (the namespace of a registered managed cluster).
    Bind {
        /// The clusterset's name.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// Namespace to bind to the clusterset.
        #[arg(long, default_value = "default")]
        namespace: String,
    },
    /// Unbind a clusterset from a namespace.
    Unbind {
        /// The clusterset's name.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// Namespace to unbind from the clusterset.
        #[arg(long, default_value = "default")]
        namespace: String,
    },
}

/// What went wrong, printed as kubectl prints it.
#[derive(Debug)]
enum CliError {
    /// A usage or client-side problem: `error: <message>`.
    Message(String),
    /// An API or connection error.
    Kube(kube::Error),
}

impl CliError {
    fn msg(message: impl Into<String>) -> Self {
        Self::Message(message.into())
    }

    /// Names the server in errors that are not API errors (connection refused, TLS, ...).
    fn at_server(self, url: &str) -> Self {
        match self {
            Self::Kube(e) if !matches!(e, kube::Error::Api(_)) => Self::Message(format!(
                "cannot talk to the hub at {url}: {}",
                errors::describe(&e)
            )),
            other => other,
        }
    }

    fn render(&self) -> String {
        match self {
            Self::Message(m) => format!("error: {m}"),
            Self::Kube(e @ kube::Error::Api(_)) => errors::describe(e),
            Self::Kube(e) => format!("error: {}", errors::describe(e)),
        }
    }
}

impl From<kube::Error> for CliError {
    fn from(e: kube::Error) -> Self {
        Self::Kube(e)
    }
}

type Result<T, E = CliError> = std::result::Result<T, E>;

/// The first positional name (checked to exist before dispatching).
fn first(names: &[String]) -> &str {
    names.first().map(String::as_str).unwrap_or_default()
}

/// Exactly one positional name, with clusteradm's messages.
fn one_name(names: &[String], what: &str) -> Result<String> {
    match names {
        [] => Err(CliError::msg(format!(
            "the name of the {what} must be specified"
        ))),
        [one] => Ok(one.clone()),
        _ => Err(CliError::msg(format!("only one {what} can be specified"))),
    }
}

async fn client(cli: &Cli) -> Result<(Client, String)> {
    let options = KubeConfigOptions {
        context: cli.context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = match (&cli.kubeconfig, &cli.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| {
                CliError::msg(format!(
                    "cannot read kubeconfig {}: {}",
                    path.display(),
                    errors::with_causes(&e)
                ))
            })?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| {
                    CliError::msg(format!(
                        "invalid kubeconfig {}: {}",
                        path.display(),
                        errors::with_causes(&e)
                    ))
                })?
        }
        (None, Some(_)) => Config::from_kubeconfig(&options).await.map_err(|e| {
            CliError::msg(format!("invalid kubeconfig: {}", errors::with_causes(&e)))
        })?,
        (None, None) => Config::infer().await.map_err(|e| {
            CliError::msg(format!(
                "no kubeconfig found (use --kubeconfig or KUBECONFIG): {}",
                errors::with_causes(&e)
            ))
        })?,
    };
    let url = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| {
        CliError::msg(format!(
            "cannot build a client: {}",
            errors::with_causes(&e)
        ))
    })?;
    Ok((client, url))
}

/// clusteradm's hub check: the cluster must serve `managedclusters` in
/// `cluster.open-cluster-management.io/v1`.
async fn validate_hub(client: &Client) -> Result<()> {
    const NOT_A_HUB: &str = "hub oriented command should not running against non-hub cluster";
    match client
        .list_api_group_resources("cluster.open-cluster-management.io/v1")
        .await
    {
        Ok(list) if list.resources.iter().any(|r| r.name == "managedclusters") => Ok(()),
        Ok(_) => Err(CliError::msg(NOT_A_HUB)),
        Err(e) if errors::is_status(&e, 404) => Err(CliError::msg(NOT_A_HUB)),
        Err(e) => Err(e.into()),
    }
}

async fn run(cli: Cli) -> Result<()> {
    // Arguments that need no server are checked first, as clusteradm does.
    match &cli.command {
        Verb::Create {
            what: CreateWhat::Work(args),
        } => args.check()?,
        Verb::Create {
            what: CreateWhat::Clusterset { names },
        } => {
            if names.is_empty() {
                return Err(CliError::msg(
                    "the name of the clusterset must be specified",
                ));
            }
            if names.len() > 1 {
                return Err(CliError::msg("only one clusterset can be created"));
            }
        }
        Verb::Get {
            what: GetWhat::Works(args),
        } => args.check()?,
        Verb::Get {
            what: GetWhat::Clusters { args, .. } | GetWhat::Clustersets { args, .. },
        } if !args.is_empty() => return Err(CliError::msg("there should be no argument")),
        Verb::Get {
            what: GetWhat::Placements { names, .. },
        } if names.len() > 1 => {
            return Err(CliError::msg(
                "the number of placement name should be 0 or 1",
            ));
        }
        Verb::Delete {
            what: DeleteWhat::Work(args),
        } => args.check()?,
        Verb::Clusterset {
            what:
                ClustersetWhat::Set {
                    names,
                    clusters,
                    namespaces,
                },
        } => {
            one_name(names, "clusterset")?;
            if clusters.is_empty() && namespaces.is_empty() {
                return Err(CliError::msg(
                    "at least one cluster (--clusters) or namespace (--namespaces) must be specified",
                ));
            }
        }
        Verb::Clusterset {
            what:
                ClustersetWhat::Bind { names, namespace } | ClustersetWhat::Unbind { names, namespace },
        } => {
            one_name(names, "clusterset")?;
            if namespace.is_empty() {
                return Err(CliError::msg(
                    "namespace name must be specified in --namespace",
                ));
            }
        }
        _ => {}
    }
    let (client, url) = client(&cli).await?;
    dispatch(&client, cli.command)
        .await
        .map_err(|e| e.at_server(url.trim_end_matches('/')))
}

async fn dispatch(client: &Client, command: Verb) -> Result<()> {
    validate_hub(client).await?;
    match command {
        Verb::Create { what } => match what {
            CreateWhat::Work(args) => work::create(client, &args).await,
            CreateWhat::Clusterset { names } => {
                cluster::create_clusterset(client, first(&names)).await
            }
        },
        Verb::Get { what } => match what {
            GetWhat::Works(args) => work::get(client, &args).await,
            GetWhat::Clusters {
                clusterset, output, ..
            } => cluster::get_clusters(client, clusterset.as_deref(), output).await,
            GetWhat::Clustersets { output, .. } => cluster::get_clustersets(client, output).await,
            GetWhat::Placements {
                names,
                namespace,
                output,
            } => {
                placement::get(
                    client,
                    names.first().map(String::as_str),
                    namespace.as_deref(),
                    output,
                )
                .await
            }
        },
        Verb::Delete {
            what: DeleteWhat::Work(args),
        } => work::delete(client, &args).await,
        Verb::Clusterset { what } => match what {
            ClustersetWhat::Set {
                names,
                clusters,
                namespaces,
            } => cluster::set(client, first(&names), &clusters, &namespaces).await,
            ClustersetWhat::Bind { names, namespace } => {
                cluster::bind(client, first(&names), &namespace).await
            }
            ClustersetWhat::Unbind { names, namespace } => {
                cluster::unbind(client, first(&names), &namespace).await
            }
        },
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    // Logs only when asked for (RUST_LOG): the output is the command's.
    ocm_examples::logging::init("off");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // `--help` and `--version` succeed; every usage error exits with 1, as kubectl's.
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.render());
            ExitCode::FAILURE
        }
    }
}
