//! Discovery documents: `/version`, `/api`, `/apis`, `/api/v1`, `/apis/{g}[/{v}]`,
//! in the legacy form and as aggregated discovery (`apidiscovery.k8s.io/v2`).

use serde_json::{Value, json};

use crate::storage::registry::{Registry, ResourceInfo};

/// Content type of aggregated discovery responses.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an Accept header asks for aggregated discovery.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.contains("as=APIGroupDiscoveryList") && accept.contains("g=apidiscovery.k8s.io")
}

/// The `/version` document.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// The legacy `/api` document.
pub(crate) fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    })
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(json!({}));
    json!({"name": name, "versions": vs, "preferredVersion": preferred})
}

/// The legacy `/apis` document.
pub(crate) fn group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg
        .groups()
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_doc(&g, &vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// The legacy `/apis/{group}` document.
pub(crate) fn group(reg: &Registry, name: &str) -> Option<Value> {
    reg.groups()
        .into_iter()
        .find(|(g, _)| g == name && !g.is_empty())
        .map(|(g, vs)| {
            let mut d = group_doc(&g, &vs);
            d["kind"] = json!("APIGroup");
            d["apiVersion"] = json!("v1");
            d
        })
}

fn subresource_verbs() -> Vec<&'static str> {
    vec!["get", "patch", "update"]
}

/// The legacy `/api/v1` or `/apis/{group}/{version}` document.
pub(crate) fn resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let infos: Vec<&std::sync::Arc<ResourceInfo>> = reg
        .iter()
        .filter(|i| i.group == group && i.versions.iter().any(|v| v == version))
        .collect();
    if infos.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for i in infos {
        let mut r = json!({
            "name": i.plural,
            "singularName": i.singular,
            "namespaced": i.namespaced,
            "kind": i.kind,
            "verbs": i.verbs,
        });
        if !i.short_names.is_empty() {
            r["shortNames"] = json!(i.short_names);
        }
        if !i.categories.is_empty() {
            r["categories"] = json!(i.categories);
        }
        resources.push(r);
        if i.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", i.plural),
                "singularName": "",
                "namespaced": i.namespaced,
                "kind": i.kind,
                "verbs": subresource_verbs(),
            }));
        }
        if i.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", i.plural),
                "singularName": "",
                "namespaced": i.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": subresource_verbs(),
            }));
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

/// Aggregated discovery for the core group (`/api`) or every other group (`/apis`).
pub(crate) fn aggregated(reg: &Registry, core: bool) -> Value {
    let mut items = Vec::new();
    for (g, versions) in reg.groups() {
        if g.is_empty() != core {
            continue;
        }
        let mut vdocs = Vec::new();
        for v in &versions {
            let mut resources = Vec::new();
            for i in reg
                .iter()
                .filter(|i| i.group == g && i.versions.iter().any(|x| x == v))
            {
                let kind = json!({"group": g, "version": v, "kind": i.kind});
                let mut r = json!({
                    "resource": i.plural,
                    "responseKind": kind,
                    "scope": if i.namespaced { "Namespaced" } else { "Cluster" },
                    "singularResource": i.singular,
                    "verbs": i.verbs,
                });
                if !i.short_names.is_empty() {
                    r["shortNames"] = json!(i.short_names);
                }
                if !i.categories.is_empty() {
                    r["categories"] = json!(i.categories);
                }
                let mut subs = Vec::new();
                if i.status_subresource {
                    subs.push(json!({
                        "subresource": "status",
                        "responseKind": kind,
                        "verbs": subresource_verbs(),
                    }));
                }
                if i.scale.is_some() {
                    subs.push(json!({
                        "subresource": "scale",
                        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                        "verbs": subresource_verbs(),
                    }));
                }
                if !subs.is_empty() {
                    r["subresources"] = json!(subs);
                }
                resources.push(r);
            }
            vdocs.push(json!({"version": v, "resources": resources, "freshness": "Current"}));
        }
        items.push(json!({"metadata": {"name": g}, "versions": vdocs}));
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}
