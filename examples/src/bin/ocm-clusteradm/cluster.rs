//! `get clusters`, `get clustersets`, `create clusterset` and `clusterset set|bind|unbind`.

use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{
    ManagedClusterSet, ManagedClusterSetBinding, ManagedClusterSetBindingSpec,
    ManagedNamespaceConfig,
};
use ocm_api::conditions;
use ocm_api::constants::{cluster as cc, labels};
use ocm_api::k8s::gojson::sprint_strings as go_list;
use ocm_examples::output::write_out;
use ocm_examples::table::Table;
use ocm_examples::tree::Node;
use ocm_examples::{errors, outln};
use serde::Serialize;

use super::{CliError, Output, Result};

/// Prints `objects` as YAML documents separated by `---`.
pub fn print_yaml<T: Serialize>(objects: &[T]) -> Result<()> {
    let mut out = String::new();
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let yaml = serde_saphyr::to_string(object)
            .map_err(|e| CliError::msg(format!("cannot write YAML: {e}")))?;
        out.push_str(&yaml);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    write_out(&out);
    Ok(())
}

/// clusteradm's fields of a cluster: accepted, available, version, cpu, memory, clusterset.
struct ClusterFields {
    accepted: String,
    available: String,
    version: String,
    cpu: String,
    memory: String,
    clusterset: String,
}

fn fields(cluster: &ManagedCluster) -> ClusterFields {
    let status = cluster.status.as_ref();
    let capacity = |name: &str| {
        status
            .and_then(|s| s.capacity.as_ref())
            .and_then(|c| c.get(name))
            .map(|q| q.0.clone())
            .unwrap_or_default()
    };
    ClusterFields {
        accepted: cluster.spec.hub_accepts_client.unwrap_or(false).to_string(),
        available: status
            .and_then(|s| s.conditions.as_deref())
            .and_then(|c| conditions::find(c, cc::CONDITION_AVAILABLE))
            .map(|c| c.status.clone())
            .unwrap_or_default(),
        version: status
            .and_then(|s| s.version.as_ref())
            .and_then(|v| v.kubernetes.clone())
            .unwrap_or_default(),
        cpu: capacity(cc::RESOURCE_CPU),
        memory: capacity(cc::RESOURCE_MEMORY),
        clusterset: cluster
            .labels()
            .get(labels::CLUSTER_SET)
            .cloned()
            .unwrap_or_default(),
    }
}

pub async fn get_clusters(client: &Client, clusterset: Option<&str>, output: Output) -> Result<()> {
    let mut params = ListParams::default();
    if let Some(set) = clusterset.filter(|s| !s.is_empty()) {
        Api::<ManagedClusterSet>::all(client.clone())
            .get(set)
            .await?;
        params = params.labels(&format!("{}={set}", labels::CLUSTER_SET));
    }
    let mut clusters = Api::<ManagedCluster>::all(client.clone())
        .list(&params)
        .await?
        .items;
    clusters.sort_by_key(|c| c.name_any());
    match output {
        Output::Tree => {
            let mut root = Node::new("ManagedCluster", "");
            for cluster in &clusters {
                let f = fields(cluster);
                root.child(
                    Node::new(cluster.name_any(), "")
                        .with(Node::new("Accepted", f.accepted))
                        .with(Node::new("Available", f.available))
                        .with(Node::new("ClusterSet", f.clusterset))
                        .with(Node::new("KubernetesVersion", f.version))
                        .with(
                            Node::new("Capacity", "")
                                .with(Node::new("Cpu", f.cpu))
                                .with(Node::new("Memory", f.memory)),
                        )
                        .sorted(),
                );
            }
            write_out(&root.to_string());
        }
        Output::Table => {
            let mut table = Table::new([
                "Name",
                "Accepted",
                "Available",
                "ClusterSet",
                "CPU",
                "Memory",
                "Kubernetes Version",
            ]);
            for cluster in &clusters {
                let f = fields(cluster);
                table.row([
                    cluster.name_any(),
                    f.accepted,
                    f.available,
                    f.clusterset,
                    f.cpu,
                    f.memory,
                    f.version,
                ]);
            }
            write_out(&table.to_string());
        }
        Output::Yaml => print_yaml(&clusters)?,
    }
    Ok(())
}

pub async fn get_clustersets(client: &Client, output: Output) -> Result<()> {
    let mut sets = Api::<ManagedClusterSet>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items;
    sets.sort_by_key(|s| s.name_any());
    if output == Output::Yaml {
        return print_yaml(&sets);
    }
    let mut bindings = Api::<ManagedClusterSetBinding>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items;
    bindings.sort_by_key(|b| (b.namespace().unwrap_or_default(), b.name_any()));
    let mut bound: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for binding in &bindings {
        let set = binding.spec.cluster_set.clone().unwrap_or_default();
        bound
            .entry(set)
            .or_default()
            .push(binding.namespace().unwrap_or_default());
    }
    let status = |set: &ManagedClusterSet| {
        set.status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .and_then(|c| conditions::find(c, cc::CONDITION_CLUSTER_SET_EMPTY))
            .map(|c| c.message.clone())
            .unwrap_or_default()
    };
    let managed_namespaces = |set: &ManagedClusterSet| -> Vec<String> {
        set.spec
            .managed_namespaces
            .iter()
            .flatten()
            .map(|n| n.name.clone())
            .collect()
    };
    let bound_namespaces = |set: &ManagedClusterSet| {
        bound
            .get(&set.name_any())
            .map(|v| v.join(","))
            .unwrap_or_default()
    };
    match output {
        Output::Tree => {
            let mut clusters = Api::<ManagedCluster>::all(client.clone())
                .list(&ListParams::default())
                .await?
                .items;
            clusters.sort_by_key(|c| c.name_any());
            let mut root = Node::new("ManagedClusterSet", "");
            for set in &sets {
                let members = ocm_placement::inventory::members(set, &clusters).map_err(|e| {
                    CliError::msg(format!(
                        "failed to list cluster in clusterset {}: {}",
                        set.name_any(),
                        errors::with_causes(&e)
                    ))
                })?;
                root.child(
                    Node::new(set.name_any(), "")
                        .with(Node::new("BoundNamespace", bound_namespaces(set)))
                        .with(Node::new("Status", status(set)))
                        .with(Node::new("Clusters", go_list(&members)))
                        .with(Node::new(
                            "ManagedNamespaces",
                            go_list(&managed_namespaces(set)),
                        ))
                        .sorted(),
                );
            }
            write_out(&root.to_string());
        }
        Output::Table => {
            let mut table =
                Table::new(["Name", "Bound Namespaces", "Status", "Managed Namespaces"]);
            for set in &sets {
                table.row([
                    set.name_any(),
                    bound_namespaces(set),
                    status(set),
                    managed_namespaces(set).join(","),
                ]);
            }
            write_out(&table.to_string());
        }
        Output::Yaml => {}
    }
    Ok(())
}

pub async fn create_clusterset(client: &Client, name: &str) -> Result<()> {
    let api: Api<ManagedClusterSet> = Api::all(client.clone());
    if api.get_opt(name).await?.is_some() {
        outln!("Clusterset {name} is already created");
        return Ok(());
    }
    let set = ManagedClusterSet {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        spec: Default::default(),
        status: None,
    };
    api.create(&PostParams::default(), &set).await?;
    outln!("Clusterset {name} is created");
    Ok(())
}

pub async fn set(
    client: &Client,
    name: &str,
    clusters: &[String],
    namespaces: &[String],
) -> Result<()> {
    let sets: Api<ManagedClusterSet> = Api::all(client.clone());
    let mut clusterset = sets.get(name).await?;
    let api: Api<ManagedCluster> = Api::all(client.clone());
    for cluster_name in clusters {
        let mut cluster = api.get(cluster_name).await?;
        let labels_map = cluster.metadata.labels.get_or_insert_with(Default::default);
        let previous = labels_map
            .get(labels::CLUSTER_SET)
            .cloned()
            .unwrap_or_default();
        if previous == name {
            outln!("Cluster {cluster_name} is already in Clusterset {name}");
            continue;
        }
        labels_map.insert(labels::CLUSTER_SET.to_string(), name.to_string());
        api.replace(cluster_name, &PostParams::default(), &cluster)
            .await?;
        if previous.is_empty() {
            outln!("Cluster {cluster_name} is set to Clusterset {name}");
        } else {
            outln!(
                "Cluster {cluster_name} is set, from ClusterSet {previous} to Clusterset {name}"
            );
        }
    }
    if namespaces.is_empty() {
        return Ok(());
    }
    outln!("Processing managed namespaces: {}", go_list(namespaces));
    let managed = clusterset
        .spec
        .managed_namespaces
        .get_or_insert_with(Vec::new);
    let mut added = Vec::new();
    let mut already = Vec::new();
    for namespace in namespaces.iter().map(|n| n.trim()) {
        if namespace.is_empty() {
            eprintln!("Warning: Empty namespace name provided, skipping");
            continue;
        }
        if managed.iter().any(|m| m.name == namespace) {
            already.push(namespace.to_string());
            outln!("Managed namespace {namespace} already exists in Clusterset {name}");
            continue;
        }
        managed.push(ManagedNamespaceConfig {
            name: namespace.to_string(),
        });
        added.push(namespace.to_string());
    }
    if !added.is_empty() {
        let updated = sets
            .replace(name, &PostParams::default(), &clusterset)
            .await
            .map_err(|e| {
                CliError::msg(format!(
                    "failed to update clusterset with managed namespaces: {}",
                    errors::describe(&e)
                ))
            })?;
        outln!("\nSuccessfully updated Clusterset {name}");
        outln!(
            "Added {} managed namespace(s): {}",
            added.len(),
            added.join(", ")
        );
        outln!(
            "Total managed namespaces in clusterset: {}",
            updated.spec.managed_namespaces.map_or(0, |m| m.len())
        );
    } else if !already.is_empty() {
        outln!("\nAll specified namespaces already exist in Clusterset {name}");
    } else {
        outln!("\nNo changes made to Clusterset {name}");
    }
    Ok(())
}

pub async fn bind(client: &Client, name: &str, namespace: &str) -> Result<()> {
    Api::<ManagedClusterSet>::all(client.clone())
        .get(name)
        .await?;
    let binding = ManagedClusterSetBinding {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        },
        spec: ManagedClusterSetBindingSpec {
            cluster_set: Some(name.to_string()),
        },
        status: None,
    };
    let api: Api<ManagedClusterSetBinding> = Api::namespaced(client.clone(), namespace);
    match api.create(&PostParams::default(), &binding).await {
        Ok(_) => outln!("Clusterset {name} is bound to Namespace {namespace}"),
        Err(e) if errors::is_status(&e, 409) => {
            outln!("Clusterset {name} is already bound to Namespace {namespace}");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

pub async fn unbind(client: &Client, name: &str, namespace: &str) -> Result<()> {
    Api::<ManagedClusterSet>::all(client.clone())
        .get(name)
        .await?;
    let api: Api<ManagedClusterSetBinding> = Api::namespaced(client.clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(e) if errors::is_status(&e, 404) => {}
        Err(e) => return Err(e.into()),
    }
    outln!("Clusterset {name} is unbind from namespace {namespace}");
    Ok(())
}
