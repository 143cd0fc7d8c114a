//! `create work`, `get works` and `delete work`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::builder::ManifestWorkBuilder;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::{labels, work as wc};
use ocm_api::work::v1::{
    FieldValue, Manifest, ManifestCondition, ManifestWork, ManifestWorkSpec, ManifestsTemplate,
};
use ocm_api::work::v1alpha1::{
    LocalPlacementReference, ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
};
use ocm_examples::outln;
use ocm_examples::table::Table;
use ocm_examples::tree::Node;

use super::{CliError, ClusterOption, Output, Result};
use crate::cluster::print_yaml;

/// `create work`.
#[derive(Args, Debug)]
pub struct CreateWork {
    /// The work's name.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    #[command(flatten)]
    clusters: ClusterOption,
    /// An existing placement, as NAMESPACE/NAME: the work goes to the clusters it decided.
    #[arg(long)]
    placement: Option<String>,
    /// Overwrite the existing work if it exists already (with --placement: also delete it
    /// from the clusters the placement no longer selects).
    #[arg(long)]
    overwrite: bool,
    /// Create a ManifestWorkReplicaSet for the placement instead of one work per cluster.
    #[arg(short = 'r', long)]
    replicaset: bool,
    /// Manifest files or directories (read recursively).
    #[arg(
        short = 'f',
        long = "filename",
        visible_alias = "file",
        value_name = "FILE"
    )]
    files: Vec<PathBuf>,
}

impl CreateWork {
    /// clusteradm's argument checks, in its order.
    pub fn check(&self) -> Result<()> {
        match self.names.as_slice() {
            [] => return Err(CliError::msg("work name must be specified")),
            [_] => {}
            _ => return Err(CliError::msg("only one work name can be specified")),
        }
        self.clusters.validate(true)?;
        let clusters = self.clusters.all();
        let placement = self.placement.as_deref().unwrap_or_default();
        if clusters.is_empty() && placement.is_empty() {
            return Err(CliError::msg("--clusters or --placement must be specified"));
        }
        if !clusters.is_empty() && !placement.is_empty() {
            return Err(CliError::msg(
                "--clusters and --placement can only specify one",
            ));
        }
        if !placement.is_empty() && placement.split('/').count() != 2 {
            return Err(CliError::msg(format!(
                "the name of the placement {placement} must be in the format of <namespace>/<name>"
            )));
        }
        if self.replicaset && placement.is_empty() {
            return Err(CliError::msg(
                "--placement must be specified when enable --replicaset",
            ));
        }
        if self.files.is_empty() {
            return Err(CliError::msg("manifest files must be specified"));
        }
        Ok(())
    }

    fn name(&self) -> &str {
        self.names.first().map(String::as_str).unwrap_or_default()
    }

    /// `(namespace, name)` of `--placement`.
    fn placement(&self) -> Option<(&str, &str)> {
        self.placement.as_deref().and_then(|p| p.split_once('/'))
    }
}

/// The manifests of `files`, checked as a work named `name` would be.
fn read_manifests(name: &str, files: &[PathBuf]) -> Result<Vec<Manifest>> {
    let work = ManifestWorkBuilder::new(name, "manifests")
        .paths(files)
        .and_then(ManifestWorkBuilder::build)
        .map_err(|e| CliError::msg(ocm_examples::errors::with_causes(&e)))?;
    Ok(work.spec.manifests().to_vec())
}

/// The clusters a placement decided, from its PlacementDecisions (found by label).
async fn decided_clusters(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<BTreeSet<String>> {
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), namespace);
    let list = decisions
        .list(&ListParams::default().labels(&format!("{}={name}", labels::PLACEMENT)))
        .await?;
    Ok(list
        .items
        .iter()
        .flat_map(|d| d.cluster_names())
        .map(str::to_string)
        .collect())
}

pub async fn create(client: &Client, args: &CreateWork) -> Result<()> {
    let name = args.name();
    let manifests = read_manifests(name, &args.files)?;
    // The namespaces that already have a work of this name.
    let existing: BTreeSet<String> = Api::<ManifestWork>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|w| w.metadata.name.as_deref() == Some(name))
        .filter_map(|w| w.metadata.namespace)
        .collect();
    let (added, deleted): (BTreeSet<String>, BTreeSet<String>) = match args.placement() {
        None => (args.clusters.all().into_iter().collect(), BTreeSet::new()),
        Some((namespace, placement)) => {
            Api::<Placement>::namespaced(client.clone(), namespace)
                .get(placement)
                .await?;
            let decided = decided_clusters(client, namespace, placement).await?;
            (
                decided.difference(&existing).cloned().collect(),
                existing.difference(&decided).cloned().collect(),
            )
        }
    };
    if args.replicaset {
        return apply_replica_set(client, args, manifests).await;
    }
    if args.overwrite {
        for cluster in &deleted {
            Api::<ManifestWork>::namespaced(client.clone(), cluster)
                .delete(name, &DeleteParams::default())
                .await?;
            outln!("delete work {name} in cluster {cluster}");
        }
    }
    for cluster in &added {
        let api: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
        match api.get_opt(name).await? {
            None => {
                let work = ManifestWork {
                    metadata: kube::api::ObjectMeta {
                        name: Some(name.to_string()),
                        namespace: Some(cluster.clone()),
                        ..Default::default()
                    },
                    spec: ManifestWorkSpec {
                        workload: Some(ManifestsTemplate {
                            manifests: Some(manifests.clone()),
                        }),
                        ..Default::default()
                    },
                    status: None,
                };
                api.create(&PostParams::default(), &work).await?;
                outln!("create work {name} in cluster {cluster}");
            }
            Some(_) if !args.overwrite => {
                outln!("work {name} in cluster {cluster} already exists");
            }
            Some(mut work) => {
                work.spec
                    .workload
                    .get_or_insert_with(Default::default)
                    .manifests = Some(manifests.clone());
                api.replace(name, &PostParams::default(), &work).await?;
                outln!("update work {name} in cluster {cluster}");
            }
        }
    }
    Ok(())
}

async fn apply_replica_set(
    client: &Client,
    args: &CreateWork,
    manifests: Vec<Manifest>,
) -> Result<()> {
    let name = args.name();
    let Some((namespace, placement)) = args.placement() else {
        return Err(CliError::msg(
            "--placement must be specified when enable --replicaset",
        ));
    };
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), namespace);
    let template = ManifestWorkSpec {
        workload: Some(ManifestsTemplate {
            manifests: Some(manifests),
        }),
        ..Default::default()
    };
    let refs = vec![LocalPlacementReference {
        name: placement.to_string(),
        ..Default::default()
    }];
    match api.get_opt(name).await? {
        None => {
            let set = ManifestWorkReplicaSet {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some(namespace.to_string()),
                    ..Default::default()
                },
                spec: ManifestWorkReplicaSetSpec {
                    manifest_work_template: Some(template),
                    placement_refs: refs,
                    ..Default::default()
                },
                status: None,
            };
            api.create(&PostParams::default(), &set).await?;
            outln!("create manifestworkreplicaset {name} in namespace {namespace}");
        }
        Some(_) if !args.overwrite => {
            outln!("manifestworkreplicaset {name} in namespace {namespace} already exists");
        }
        Some(mut set) => {
            set.spec
                .manifest_work_template
                .get_or_insert_with(Default::default)
                .workload = template.workload;
            set.spec.placement_refs = refs;
            api.replace(name, &PostParams::default(), &set).await?;
            outln!("update manifestworkreplicaset {name} in namespace {namespace}");
        }
    }
    Ok(())
}

/// `get works`.
#[derive(Args, Debug)]
pub struct GetWorks {
    /// Only this work.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    #[command(flatten)]
    clusters: ClusterOption,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t)]
    output: Output,
}

impl GetWorks {
    pub fn check(&self) -> Result<()> {
        if self.names.len() > 1 {
            return Err(CliError::msg("can only specify one manifestwork"));
        }
        self.clusters.validate(false)
    }
}

pub async fn get(client: &Client, args: &GetWorks) -> Result<()> {
    let name = args.names.first();
    let mut works = Vec::new();
    for cluster in args.clusters.all() {
        Api::<ManagedCluster>::all(client.clone())
            .get(&cluster)
            .await?;
        let api: Api<ManifestWork> = Api::namespaced(client.clone(), &cluster);
        let mut list = match name {
            Some(n) => api.get_opt(n).await?.into_iter().collect(),
            None => api.list(&ListParams::default()).await?.items,
        };
        list.sort_by_key(|w| w.name_any());
        works.extend(list);
    }
    if let (Some(n), true) = (name, works.is_empty()) {
        // What `kubectl get` says (clusteradm prints an empty tree).
        let status = kube::core::Status::failure(
            &format!("manifestworks.work.open-cluster-management.io \"{n}\" not found"),
            "NotFound",
        )
        .with_code(404);
        return Err(CliError::Kube(kube::Error::Api(Box::new(status))));
    }
    match args.output {
        Output::Tree => {
            let mut root = Node::new("ManifestWork", "");
            for work in &works {
                let cluster = work.namespace().unwrap_or_default();
                root.entry(&cluster).child(work_node(work));
            }
            ocm_examples::output::write_out(&root.sorted().to_string());
        }
        Output::Table => {
            let mut table = Table::new([
                "Name",
                "Cluster",
                "Number Of Manifests",
                "Applied",
                "Available",
            ]);
            for work in &works {
                table.row([
                    work.name_any(),
                    work.namespace().unwrap_or_default(),
                    work.spec.manifests().len().to_string(),
                    work_condition(work, wc::CONDITION_APPLIED),
                    work_condition(work, wc::CONDITION_AVAILABLE),
                ]);
            }
            ocm_examples::output::write_out(&table.to_string());
        }
        Output::Yaml => print_yaml(&works)?,
    }
    Ok(())
}

fn work_condition(work: &ManifestWork, type_: &str) -> String {
    work.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, type_))
        .map(|c| c.status.clone())
        .unwrap_or_default()
}

/// A work with clusteradm's fields, and each resource's conditions and feedback values.
fn work_node(work: &ManifestWork) -> Node {
    let mut node = Node::new(work.name_any(), "")
        .with(Node::new(
            "Applied",
            work_condition(work, wc::CONDITION_APPLIED),
        ))
        .with(Node::new(
            "Available",
            work_condition(work, wc::CONDITION_AVAILABLE),
        ))
        .with(Node::new(
            "Number of Manifests",
            work.spec.manifests().len().to_string(),
        ));
    let manifests = work
        .status
        .as_ref()
        .and_then(|s| s.resource_status.as_ref())
        .and_then(|r| r.manifests.as_deref())
        .unwrap_or_default();
    if !manifests.is_empty() {
        let mut resources = Node::new("Resources", "");
        for manifest in manifests {
            let meta = &manifest.resource_meta;
            let name = meta.name.clone().unwrap_or_default();
            let identifier = match meta.namespace.as_deref() {
                Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
                _ => name,
            };
            let resource = meta.resource.clone().unwrap_or_default();
            resources
                .entry(&resource)
                .child(manifest_node(&identifier, manifest));
        }
        let mut resources = resources.sorted();
        for i in 0..resources.children().len() {
            let name = resources.children()[i].name().to_string();
            resources.entry(&name).sort();
        }
        node.child(resources);
    }
    node.sorted()
}

fn manifest_node(identifier: &str, manifest: &ManifestCondition) -> Node {
    let applied = conditions::find(&manifest.conditions, wc::CONDITION_APPLIED);
    let summary = match applied.map(|c| c.status.as_str()) {
        None => "unknown",
        Some("True") => "applied",
        Some(_) => "not-applied",
    };
    let mut node = Node::new(identifier, summary);
    if !manifest.conditions.is_empty() {
        let mut conds = Node::new("Conditions", "");
        for c in &manifest.conditions {
            let detail = match (c.reason.is_empty(), c.message.is_empty()) {
                (true, true) => String::new(),
                (false, true) => format!(" ({})", c.reason),
                (true, false) => format!(" ({})", c.message),
                (false, false) => format!(" ({}: {})", c.reason, c.message),
            };
            conds.child(Node::new(&c.type_, format!("{}{detail}", c.status)));
        }
        node.child(conds);
    }
    let values = manifest
        .status_feedbacks
        .as_ref()
        .and_then(|f| f.values.as_deref())
        .unwrap_or_default();
    if !values.is_empty() {
        let mut feedback = Node::new("Feedback", "");
        for v in values {
            feedback.child(Node::new(&v.name, feedback_text(&v.field_value)));
        }
        node.child(feedback);
    }
    node
}

/// A feedback value as text: the integer, string, boolean or raw JSON it holds.
pub fn feedback_text(value: &FieldValue) -> String {
    value
        .integer
        .map(|i| i.to_string())
        .or_else(|| value.string.clone())
        .or_else(|| value.boolean.map(|b| b.to_string()))
        .or_else(|| value.json_raw.clone())
        .unwrap_or_default()
}

/// `delete work`.
#[derive(Args, Debug)]
pub struct DeleteWork {
    /// The work's name.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    #[command(flatten)]
    clusters: ClusterOption,
    /// Remove the work's finalizers if it does not go away by itself.
    #[arg(long)]
    force: bool,
}

impl DeleteWork {
    pub fn check(&self) -> Result<()> {
        match self.names.as_slice() {
            [] => return Err(CliError::msg("work name must be specified")),
            [_] => {}
            _ => return Err(CliError::msg("only one work name can be specified")),
        }
        self.clusters.validate(false)
    }
}

/// How long `delete work` waits for the work to be gone (clusteradm's timeout).
const DELETE_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn delete(client: &Client, args: &DeleteWork) -> Result<()> {
    let name = args.names.first().map(String::as_str).unwrap_or_default();
    let mut failures = Vec::new();
    for cluster in args.clusters.all() {
        if let Err(e) = delete_one(client, name, &cluster, args.force).await {
            failures.push(e);
        }
    }
    match failures.len() {
        0 => Ok(()),
        1 => Err(failures.remove(0)),
        _ => Err(CliError::msg(
            failures
                .iter()
                .map(|e| e.render().trim_start_matches("error: ").to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

async fn delete_one(client: &Client, name: &str, cluster: &str, force: bool) -> Result<()> {
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
    if api.get_opt(name).await?.is_none() {
        outln!("work {name} not found or is already deleted");
        return Ok(());
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(e) if ocm_examples::errors::is_status(&e, 404) => {}
        Err(e) => return Err(e.into()),
    }
    if force {
        match api.get_opt(name).await? {
            None => {
                outln!("work {name} is deleted");
                return Ok(());
            }
            Some(mut work) if !work.finalizers().is_empty() => {
                work.metadata.finalizers = Some(Vec::new());
                match api.replace(name, &PostParams::default(), &work).await {
                    Ok(_) => {}
                    Err(e) if ocm_examples::errors::is_status(&e, 404) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Some(_) => {}
        }
    }
    let deadline = Instant::now() + DELETE_TIMEOUT;
    loop {
        if api.get_opt(name).await?.is_none() {
            outln!("work {name} in cluster {cluster} is deleted");
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(CliError::msg(format!(
                "delete work {name} timeout, failed to delete"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
