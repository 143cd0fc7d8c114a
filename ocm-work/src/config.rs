//! Finding the manifest config (update strategy, feedback rules, condition rules) that applies
//! to one resource of a work.
//!
//! Upstream's rules: a config matches a resource when group and resource are equal and the
//! namespace and name match with `*` wildcards. Configs are walked in order; the first matching
//! config with condition rules supplies the condition rules, the first with feedback rules the
//! feedback rules, the first with an update strategy the strategy, and the **last** matching
//! config decides the feedback scrape type. When nothing but the scrape type was found, there is
//! no config at all.

use ocm_api::work::v1::{ManifestConfigOption, ResourceIdentifier};

/// The identity of one applied resource, as the config lookup sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceRef<'a> {
    /// API group (`""` for the core group).
    pub group: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
    /// Namespace (`""` for cluster-scoped resources).
    pub namespace: &'a str,
    /// Object name.
    pub name: &'a str,
}

/// Whether `value` matches `pattern`: equal, or `*`, or the pattern with every `*` standing for
/// any run of characters (anchored at both ends; everything else literal).
///
/// ```
/// use ocm_work::config::wildcard_match;
/// assert!(wildcard_match("my*", "my-test"));
/// assert!(wildcard_match("*m*", "my-test"));
/// assert!(wildcard_match("*t", "my-test"));
/// assert!(!wildcard_match("*my", "my-test"));
/// ```
pub fn wildcard_match(pattern: &str, value: &str) -> bool {
    if pattern == value || pattern == "*" {
        return true;
    }
    if !pattern.contains('*') {
        return false;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return false,
    };
    let Some(mut remaining) = value.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

fn matches(id: &ResourceIdentifier, resource: &ResourceRef<'_>) -> bool {
    id.group.as_deref().unwrap_or("") == resource.group
        && id.resource == resource.resource
        && wildcard_match(id.namespace.as_deref().unwrap_or(""), resource.namespace)
        && wildcard_match(&id.name, resource.name)
}

/// The effective config for `resource`, merged from every matching entry of `configs`, or
/// `None` when no config sets feedback rules, condition rules or an update strategy for it.
pub fn find_manifest_config(
    resource: &ResourceRef<'_>,
    configs: &[ManifestConfigOption],
) -> Option<ManifestConfigOption> {
    let mut found = ManifestConfigOption::new(ResourceIdentifier {
        group: (!resource.group.is_empty()).then(|| resource.group.to_string()),
        resource: resource.resource.to_string(),
        name: resource.name.to_string(),
        namespace: (!resource.namespace.is_empty()).then(|| resource.namespace.to_string()),
    });
    for config in configs
        .iter()
        .filter(|c| matches(&c.resource_identifier, resource))
    {
        if found.condition_rules.is_none()
            && config
                .condition_rules
                .as_ref()
                .is_some_and(|r| !r.is_empty())
        {
            found.condition_rules = config.condition_rules.clone();
        }
        if found.feedback_rules.is_none()
            && config
                .feedback_rules
                .as_ref()
                .is_some_and(|r| !r.is_empty())
        {
            found.feedback_rules = config.feedback_rules.clone();
        }
        if found.update_strategy.is_none() && config.update_strategy.is_some() {
            found.update_strategy = config.update_strategy.clone();
        }
        found.feedback_scrape_type = config.feedback_scrape_type.clone();
    }
    let empty = found.condition_rules.is_none()
        && found.feedback_rules.is_none()
        && found.update_strategy.is_none();
    (!empty).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{
        FeedbackRule, FeedbackScrapeType, FeedbackType, UpdateStrategy, UpdateStrategyType,
    };

    fn id(group: &str, resource: &str, ns: &str, name: &str) -> ResourceIdentifier {
        ResourceIdentifier {
            group: (!group.is_empty()).then(|| group.to_string()),
            resource: resource.into(),
            name: name.into(),
            namespace: (!ns.is_empty()).then(|| ns.to_string()),
        }
    }

    fn res<'a>(ns: &'a str, name: &'a str) -> ResourceRef<'a> {
        ResourceRef {
            group: "apps",
            resource: "deployments",
            namespace: ns,
            name,
        }
    }

    #[test]
    fn wildcards() {
        for (p, v, want) in [
            ("my-test", "my-test", true),
            ("*", "anything", true),
            ("*", "", true),
            ("my*", "my-test", true),
            ("*m*", "my-test", true),
            ("*t", "my-test", true),
            ("*my", "my-test", false),
            ("m*t", "my-test", true),
            ("m*x*t", "my-test", false),
            ("a*a", "a", false),
            ("a**b", "ab", true),
            ("", "x", false),
            ("", "", true),
            ("x.y", "xzy", false),
        ] {
            assert_eq!(wildcard_match(p, v), want, "{p} vs {v}");
        }
    }

    #[test]
    fn first_rules_win_and_last_scrape_type_wins() {
        let feedback = |name: &str| FeedbackRule {
            type_: FeedbackType::JsonPaths,
            json_paths: Some(vec![ocm_api::work::v1::JsonPath {
                name: name.into(),
                version: None,
                path: ".status".into(),
            }]),
        };
        let mut a = ManifestConfigOption::new(id("apps", "deployments", "default", "web*"));
        a.feedback_rules = Some(vec![feedback("first")]);
        a.feedback_scrape_type = Some(FeedbackScrapeType::Watch);
        let mut b = ManifestConfigOption::new(id("apps", "deployments", "*", "*"));
        b.feedback_rules = Some(vec![feedback("second")]);
        b.update_strategy = Some(UpdateStrategy::new(UpdateStrategyType::ServerSideApply));
        let other = ManifestConfigOption::new(id("", "configmaps", "*", "*"));

        let got =
            find_manifest_config(&res("default", "web-1"), &[a.clone(), b.clone(), other]).unwrap();
        assert_eq!(
            got.feedback_rules.unwrap()[0].json_paths.as_ref().unwrap()[0].name,
            "first"
        );
        assert_eq!(
            got.update_strategy.unwrap().type_,
            UpdateStrategyType::ServerSideApply
        );
        // The last match (b) has no scrape type: it overwrites a's Watch.
        assert_eq!(got.feedback_scrape_type, None);
        assert_eq!(
            got.resource_identifier,
            id("apps", "deployments", "default", "web-1")
        );

        // Only `b` matches another namespace.
        let got = find_manifest_config(&res("other", "web-1"), &[a, b]).unwrap();
        assert_eq!(
            got.feedback_rules.unwrap()[0].json_paths.as_ref().unwrap()[0].name,
            "second"
        );
    }

    #[test]
    fn a_config_with_only_a_scrape_type_is_no_config() {
        let mut a = ManifestConfigOption::new(id("apps", "deployments", "*", "*"));
        a.feedback_scrape_type = Some(FeedbackScrapeType::Poll);
        assert!(find_manifest_config(&res("default", "x"), &[a]).is_none());
        assert!(find_manifest_config(&res("default", "x"), &[]).is_none());
    }
}
