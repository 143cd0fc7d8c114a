//! `get placements`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::{labels, placement as pc};
use ocm_api::k8s::gojson::sprint_strings as go_list;
use ocm_examples::output::write_out;
use ocm_examples::table::Table;
use ocm_examples::tree::Node;

use super::{Output, Result};
use crate::cluster::print_yaml;

/// `true`, `false` or `unknown` for a placement condition, as clusteradm's tree shows it.
fn condition_word(placement: &Placement, type_: &str) -> &'static str {
    match placement
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, type_))
        .map(|c| c.status.as_str())
    {
        None => "unknown",
        Some("True") => "true",
        Some(_) => "false",
    }
}

pub async fn get(
    client: &Client,
    name: Option<&str>,
    namespace: Option<&str>,
    output: Output,
) -> Result<()> {
    let namespace = namespace.filter(|n| !n.is_empty());
    if let Some(ns) = namespace {
        Api::<Namespace>::all(client.clone()).get(ns).await?;
    }
    let (placements, decisions): (Api<Placement>, Api<PlacementDecision>) = match namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
        ),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    let mut list: Vec<Placement> = placements
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|p| name.is_none_or(|n| p.metadata.name.as_deref() == Some(n)))
        .collect();
    list.sort_by_key(|p| (p.namespace().unwrap_or_default(), p.name_any()));
    if output == Output::Yaml {
        return print_yaml(&list);
    }
    let mut decision_list = decisions.list(&ListParams::default()).await?.items;
    decision_list.sort_by_key(|d| (d.namespace().unwrap_or_default(), d.name_any()));
    // (namespace, placement) -> decided clusters, over every PlacementDecision of it.
    let mut selected: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for decision in &decision_list {
        let Some(placement) = decision.labels().get(labels::PLACEMENT) else {
            continue;
        };
        selected
            .entry((decision.namespace().unwrap_or_default(), placement.clone()))
            .or_default()
            .extend(decision.cluster_names().map(str::to_string));
    }
    let clusters_of =
        |p: &Placement| selected.get(&(p.namespace().unwrap_or_default(), p.name_any()));
    match output {
        Output::Tree => {
            let mut root = Node::new("Placement", "");
            for p in &list {
                let decision = match clusters_of(p) {
                    Some(clusters) => go_list(clusters),
                    None => go_list(&["NoClusterSelected"]),
                };
                let number = p
                    .status
                    .as_ref()
                    .and_then(|s| s.number_of_selected_clusters)
                    .unwrap_or(0);
                root.child(
                    Node::new(p.name_any(), "")
                        .with(Node::new(
                            "ClusterSet",
                            go_list(p.spec.cluster_sets.as_deref().unwrap_or_default()),
                        ))
                        .with(Node::new("Namespace", p.namespace().unwrap_or_default()))
                        .with(Node::new("PlacementDecision", decision))
                        .with(
                            Node::new("Status", "")
                                .with(
                                    Node::new("Conditions", "")
                                        .with(Node::new(
                                            "PlacementConditionMisconfigured",
                                            condition_word(p, pc::CONDITION_MISCONFIGURED),
                                        ))
                                        .with(Node::new(
                                            "PlacementConditionSatisfied",
                                            condition_word(p, pc::CONDITION_SATISFIED),
                                        )),
                                )
                                .with(Node::new("NumberOfSelectedClusters", number.to_string())),
                        ),
                );
            }
            write_out(&root.to_string());
        }
        Output::Table => {
            // clusteradm's column name, typo included.
            let mut table = Table::new(["Name", "Status", "Reason", "SeletedClusters"]);
            for p in &list {
                // clusteradm reports the placement's first condition.
                let first = p
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_deref())
                    .and_then(<[_]>::first);
                let clusters = clusters_of(p).cloned().unwrap_or_default();
                table.row([
                    p.name_any(),
                    first.map(|c| c.status.clone()).unwrap_or_default(),
                    first.map(|c| c.reason.clone()).unwrap_or_default(),
                    go_list(&clusters),
                ]);
            }
            write_out(&table.to_string());
        }
        Output::Yaml => {}
    }
    Ok(())
}
