//! Who the work agent is: the hub hash, the agent id and AppliedManifestWork names.

/// The hub hash: the lower-case hex SHA-256 of the hub's API server address, exactly as written
/// in the hub kubeconfig (scheme and port included), e.g. `https://hub.example.com:6443`.
///
/// It keeps works from two hubs apart on one managed cluster.
///
/// ```
/// let hash = ocm_work::identity::hub_hash("https://hub.example.com:6443");
/// assert_eq!(hash.len(), 64);
/// assert!(hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
/// ```
pub fn hub_hash(hub_host: &str) -> String {
    ocm_api::k8s::digest::sha256_hex(hub_host.as_bytes())
}

/// The agent id: the configured one, or the hub hash when none is configured.
pub fn agent_id(configured: Option<&str>, hub_hash: &str) -> String {
    match configured {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => hub_hash.to_string(),
    }
}

/// The name of the AppliedManifestWork that records the work `work_name`:
/// `<hub hash>-<work name>`.
pub fn applied_manifest_work_name(hub_hash: &str, work_name: &str) -> String {
    format!("{hub_hash}-{work_name}")
}

/// The work name an AppliedManifestWork records, if `applied_name` belongs to `hub_hash`.
pub fn work_name_of<'a>(hub_hash: &str, applied_name: &'a str) -> Option<&'a str> {
    applied_name
        .strip_prefix(hub_hash)
        .and_then(|rest| rest.strip_prefix('-'))
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_hash_is_sha256_hex() {
        // SHA-256 of the empty string, a well-known vector.
        assert_eq!(
            hub_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hub_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn agent_id_defaults_to_hub_hash() {
        assert_eq!(agent_id(None, "h"), "h");
        assert_eq!(agent_id(Some(""), "h"), "h");
        assert_eq!(agent_id(Some("agent-1"), "h"), "agent-1");
    }

    #[test]
    fn applied_names_round_trip() {
        let name = applied_manifest_work_name("abc", "my-work");
        assert_eq!(name, "abc-my-work");
        assert_eq!(work_name_of("abc", &name), Some("my-work"));
        assert_eq!(work_name_of("abd", &name), None);
        assert_eq!(work_name_of("abc", "abc-"), None);
    }
}
