//! Turning an AddOnDeploymentConfig into what an agent's manifests need (pure): template
//! variables, node placement, image registry mirrors, proxy settings, resource requirements
//! and the install namespace, with upstream's rules (addon-framework's `addonfactory` and the
//! template addon's decorators).
//!
//! ```
//! use ocm_api::addon::v1beta1::AddOnDeploymentConfig;
//! use ocm_work::addon::deployment_config::{DeploymentValues, override_image};
//!
//! let adc: AddOnDeploymentConfig = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "proxy", "namespace": "cluster1"},
//!     "spec": {
//!         "customizedVariables": [{"name": "LOG_LEVEL", "value": "debug"}],
//!         "nodePlacement": {"nodeSelector": {"role": "infra"}},
//!         "registries": [{"source": "quay.io/ocm", "mirror": "mirror.local/ocm"}],
//!         "proxyConfig": {"httpProxy": "http://10.0.109.153:3128", "noProxy": ".cluster.local"}
//!     }
//! }))?;
//! let values = DeploymentValues::from_config(&adc)?;
//! assert_eq!(values.variables["LOG_LEVEL"], "debug");
//! let mut deployment = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "agent", "namespace": "default"},
//!     "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "quay.io/ocm/agent:v1"}]}}}});
//! values.decorate_pod_template(&mut deployment)?;
//! let pod = &deployment["spec"]["template"]["spec"];
//! assert_eq!(pod["nodeSelector"]["role"], "infra");
//! assert_eq!(pod["containers"][0]["image"], "mirror.local/ocm/agent:v1");
//! assert_eq!(pod["containers"][0]["env"][0]["name"], "HTTP_PROXY");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceRequirements, Toleration};
use ocm_api::addon::v1beta1::{AddOnDeploymentConfig, ImageMirror, ProxyConfig};
use serde_json::{Value, json};

use super::agent::RenderError;

/// Upstream's `OverrideImage`: every mirror whose source prefixes `image` rewrites it (the
/// last match wins); a mirror without source replaces the whole registry path, keeping only
/// the image's last path segment.
pub fn override_image(registries: &[ImageMirror], image: &str) -> String {
    let mut out = image.to_string();
    for r in registries {
        let rewritten = override_directly(r.source.as_deref().unwrap_or(""), &r.mirror, image);
        if rewritten != image {
            out = rewritten;
        }
    }
    out
}

fn override_directly(source: &str, mirror: &str, image: &str) -> String {
    let source = source.strip_suffix('/').unwrap_or(source);
    let mirror = mirror.strip_suffix('/').unwrap_or(mirror);
    let last = image.rsplit('/').next().unwrap_or(image);
    if source.is_empty() {
        if mirror.is_empty() {
            return last.to_string();
        }
        return format!("{mirror}/{last}");
    }
    match image.strip_prefix(source) {
        Some(rest) => format!("{mirror}{rest}"),
        None => image.to_string(),
    }
}

/// The environment variables upstream sets for a proxy: `HTTP_PROXY`/`http_proxy`,
/// `HTTPS_PROXY`/`https_proxy`, `NO_PROXY`/`no_proxy`, for the fields that are set.
pub fn proxy_env(proxy: &ProxyConfig) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pair = |upper: &str, lower: &str, v: &Option<String>| {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            out.push((upper.to_string(), v.to_string()));
            out.push((lower.to_string(), v.to_string()));
        }
    };
    pair("HTTP_PROXY", "http_proxy", &proxy.http_proxy);
    pair("HTTPS_PROXY", "https_proxy", &proxy.https_proxy);
    pair("NO_PROXY", "no_proxy", &proxy.no_proxy);
    out
}

/// One `resourceRequirements` entry with its container selector split
/// (`{resource}:{name}:{container}`, `*` matching any non-empty text).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerRequirements {
    selector: [String; 3],
    /// The requirements for matching containers.
    pub resources: ResourceRequirements,
}

impl ContainerRequirements {
    /// Whether the container `container` of the `resource` (`deployments`, `daemonsets`, …)
    /// named `name` matches.
    pub fn matches(&self, resource: &str, name: &str, container: &str) -> bool {
        let id = format!("{resource}:{name}:{container}");
        let mut tokens = Vec::new();
        for (i, part) in self.selector.iter().enumerate() {
            if i > 0 {
                tokens.push(Token::Lit(":".into()));
            }
            if part == "*" {
                tokens.push(Token::Any);
            } else {
                tokens.push(Token::Lit(part.clone()));
            }
        }
        glob(&tokens, &id)
    }
}

enum Token {
    Lit(String),
    Any,
}

fn glob(tokens: &[Token], text: &str) -> bool {
    match tokens.split_first() {
        None => text.is_empty(),
        Some((Token::Lit(l), rest)) => text.strip_prefix(l.as_str()).is_some_and(|t| glob(rest, t)),
        Some((Token::Any, rest)) => (1..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .any(|i| glob(rest, &text[i..])),
    }
}

/// What an AddOnDeploymentConfig asks of the agent's manifests.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DeploymentValues {
    /// `customizedVariables`, name to value.
    pub variables: BTreeMap<String, String>,
    /// `nodePlacement.nodeSelector`, when node placement is set.
    pub node_selector: Option<BTreeMap<String, String>>,
    /// `nodePlacement.tolerations`, when node placement is set.
    pub tolerations: Option<Vec<Toleration>>,
    /// Whether `nodePlacement` is set at all.
    pub node_placement: bool,
    /// `registries`.
    pub registries: Option<Vec<ImageMirror>>,
    /// `proxyConfig`, when any of its fields is set.
    pub proxy: Option<ProxyConfig>,
    /// `agentInstallNamespace`, when not empty.
    pub install_namespace: Option<String>,
    /// `resourceRequirements`, in order (later entries win).
    pub resource_requirements: Vec<ContainerRequirements>,
}

impl DeploymentValues {
    /// The values of `config`. A malformed `containerID` is an error naming it.
    pub fn from_config(config: &AddOnDeploymentConfig) -> Result<Self, RenderError> {
        let spec = &config.spec;
        let mut out = Self {
            variables: spec
                .customized_variables
                .iter()
                .flatten()
                .map(|v| (v.name.clone(), v.value.clone().unwrap_or_default()))
                .collect(),
            ..Self::default()
        };
        if let Some(np) = &spec.node_placement {
            out.node_placement = true;
            out.node_selector = np.node_selector.clone();
            out.tolerations = np.tolerations.clone();
        }
        out.registries = spec.registries.clone();
        if let Some(p) = &spec.proxy_config {
            let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
            let ca = p.ca_bundle.as_ref().is_some_and(|c| !c.0.is_empty());
            if set(&p.http_proxy) || set(&p.https_proxy) || set(&p.no_proxy) || ca {
                out.proxy = Some(p.clone());
            }
        }
        out.install_namespace = spec
            .agent_install_namespace
            .clone()
            .filter(|n| !n.is_empty());
        for r in spec.resource_requirements.iter().flatten() {
            let parts: Vec<&str> = r.container_id.split(':').collect();
            let [a, b, c] = parts.as_slice() else {
                return Err(format!("invalid ContainerID: {}", r.container_id).into());
            };
            out.resource_requirements.push(ContainerRequirements {
                selector: [a.to_string(), b.to_string(), c.to_string()],
                resources: r.resources.clone(),
            });
        }
        Ok(out)
    }

    /// Decorates the pod template of a Deployment or DaemonSet manifest (other kinds are left
    /// alone): node selector and tolerations (upstream's quirk: tolerations only with a node
    /// selector), image mirrors, proxy environment variables, resource requirements.
    pub fn decorate_pod_template(&self, manifest: &mut Value) -> Result<(), RenderError> {
        let resource = match manifest.get("kind").and_then(Value::as_str) {
            Some("Deployment") => "deployments",
            Some("DaemonSet") => "daemonsets",
            _ => return Ok(()),
        };
        let name = manifest
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let Some(pod) = manifest.pointer_mut("/spec/template/spec") else {
            return Ok(());
        };
        let Some(pod) = pod.as_object_mut() else {
            return Err(format!("{resource} {name}: spec.template.spec is not an object").into());
        };
        if self.node_placement
            && let Some(selector) = &self.node_selector
        {
            pod.insert("nodeSelector".into(), json!(selector));
            match &self.tolerations {
                Some(t) => pod.insert("tolerations".into(), serde_json::to_value(t)?),
                None => pod.remove("tolerations"),
            };
        }
        let env: Vec<(String, String)> = self.proxy.as_ref().map(proxy_env).unwrap_or_default();
        if let Some(Value::Array(containers)) = pod.get_mut("containers") {
            for c in containers.iter_mut() {
                let Some(c) = c.as_object_mut() else { continue };
                if let (Some(regs), Some(Value::String(image))) = (&self.registries, c.get("image"))
                {
                    let new = override_image(regs, image);
                    c.insert("image".into(), Value::String(new));
                }
                if !env.is_empty() {
                    append_env(c, &env);
                }
                let container = c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if let Some(r) = self
                    .resource_requirements
                    .iter()
                    .rev()
                    .find(|r| r.matches(resource, &name, &container))
                {
                    c.insert("resources".into(), serde_json::to_value(&r.resources)?);
                }
            }
        }
        Ok(())
    }
}

/// Appends `name=value` environment variables to a container.
pub fn append_env(container: &mut serde_json::Map<String, Value>, vars: &[(String, String)]) {
    let env = container
        .entry("env")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !env.is_array() {
        *env = Value::Array(Vec::new());
    }
    if let Value::Array(list) = env {
        for (k, v) in vars {
            list.push(json!({"name": k, "value": v}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirror(source: Option<&str>, mirror: &str) -> ImageMirror {
        ImageMirror {
            mirror: mirror.into(),
            source: source.map(Into::into),
        }
    }

    #[test]
    fn image_overrides_follow_upstream() {
        let regs = [mirror(
            Some("quay.io/open-cluster-management/addon-agent"),
            "quay.io/ocm/addon-agent",
        )];
        assert_eq!(
            override_image(&regs, "quay.io/open-cluster-management/addon-agent:v1"),
            "quay.io/ocm/addon-agent:v1"
        );
        assert_eq!(override_image(&regs, "docker.io/x:v1"), "docker.io/x:v1");
        assert_eq!(
            override_image(&[mirror(None, "mirror.io/")], "a.io/b/c:v1"),
            "mirror.io/c:v1"
        );
        assert_eq!(override_image(&[mirror(None, "")], "a.io/b/c:v1"), "c:v1");
        let two = [
            mirror(Some("a.io"), "b.io"),
            mirror(Some("a.io/x"), "c.io/x"),
        ];
        assert_eq!(override_image(&two, "a.io/x/y"), "c.io/x/y");
    }

    #[test]
    fn resource_requirements_by_container_id() {
        let adc: AddOnDeploymentConfig = serde_json::from_value(json!({
            "metadata": {"name": "x"},
            "spec": {"resourceRequirements": [
                {"containerID": "*:*:*", "resources": {"limits": {"memory": "4Gi"}}},
                {"containerID": "deployments:agent:main", "resources": {"requests": {"cpu": "100m"}}}
            ]}
        }))
        .unwrap();
        let v = DeploymentValues::from_config(&adc).unwrap();
        let mut d = json!({"kind": "Deployment", "metadata": {"name": "agent"},
            "spec": {"template": {"spec": {"containers": [{"name": "main"}, {"name": "side"}]}}}});
        v.decorate_pod_template(&mut d).unwrap();
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({"requests": {"cpu": "100m"}})
        );
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["resources"],
            json!({"limits": {"memory": "4Gi"}})
        );
        assert!(v.resource_requirements[0].matches("daemonsets", "a:b", "c"));
        let bad: AddOnDeploymentConfig = serde_json::from_value(json!({
            "metadata": {"name": "x"}, "spec": {"resourceRequirements": [{"containerID": "a:b", "resources": {}}]}
        }))
        .unwrap();
        assert_eq!(
            DeploymentValues::from_config(&bad).unwrap_err().to_string(),
            "invalid ContainerID: a:b"
        );
    }

    #[test]
    fn tolerations_need_a_node_selector() {
        let with = |np: Value| {
            let adc: AddOnDeploymentConfig = serde_json::from_value(
                json!({"metadata": {"name": "x"}, "spec": {"nodePlacement": np}}),
            )
            .unwrap();
            let mut d = json!({"kind": "DaemonSet", "metadata": {"name": "a"},
                "spec": {"template": {"spec": {"tolerations": [{"key": "old"}], "containers": []}}}});
            DeploymentValues::from_config(&adc)
                .unwrap()
                .decorate_pod_template(&mut d)
                .unwrap();
            d["spec"]["template"]["spec"].clone()
        };
        let only_tolerations = with(json!({"tolerations": [{"key": "k", "operator": "Exists"}]}));
        assert_eq!(only_tolerations["tolerations"], json!([{"key": "old"}]));
        let both = with(
            json!({"nodeSelector": {"a": "b"}, "tolerations": [{"key": "k", "operator": "Exists"}]}),
        );
        assert_eq!(both["tolerations"][0]["key"], "k");
        assert_eq!(both["nodeSelector"], json!({"a": "b"}));
    }

    #[test]
    fn proxy_variables() {
        let p = ProxyConfig {
            http_proxy: Some("http://p:3128".into()),
            https_proxy: Some("https://p:3129".into()),
            no_proxy: None,
            ca_bundle: None,
        };
        let env = proxy_env(&p);
        assert_eq!(env.len(), 4);
        assert_eq!(
            env[2],
            ("HTTPS_PROXY".to_string(), "https://p:3129".to_string())
        );
    }
}
