//! Names upstream's addon manager gives to what it creates.

use ocm_api::constants::addon as ac;

/// `addon-<addon>-deploy`: the prefix of the deploy works (upstream's `DeployWorkNamePrefix`).
pub fn deploy_work_prefix(addon: &str) -> String {
    format!("{}{addon}{}", ac::DEPLOY_WORK_PREFIX, ac::DEPLOY_WORK_INFIX)
}

/// `addon-<addon>-deploy-<index>`: the name of the `index`-th deploy work.
pub fn deploy_work_name(addon: &str, index: usize) -> String {
    format!("{}-{index}", deploy_work_prefix(addon))
}

/// `addon-<addon>-pre-delete`: the pre-delete hook work (upstream's `PreDeleteHookWorkName`).
pub fn pre_delete_work_name(addon: &str) -> String {
    format!(
        "{}{addon}{}",
        ac::DEPLOY_WORK_PREFIX,
        ac::PRE_DELETE_WORK_INFIX
    )
}

/// `addon-<addon>-deploy-hosting-<addon namespace>`: the prefix of the deploy works on the
/// hosting cluster (upstream's `DeployHostingWorkNamePrefix`).
pub fn deploy_hosting_work_prefix(addon_namespace: &str, addon: &str) -> String {
    format!("{}-hosting-{addon_namespace}", deploy_work_prefix(addon))
}

/// `addon-<addon>-pre-delete-hosting-<addon namespace>`: the pre-delete hook work on the
/// hosting cluster (upstream's `PreDeleteHookHostingWorkName`).
pub fn pre_delete_hosting_work_name(addon_namespace: &str, addon: &str) -> String {
    format!("{}-hosting-{addon_namespace}", pre_delete_work_name(addon))
}

/// The agent's default hub user:
/// `system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>`.
pub fn default_user(cluster: &str, addon: &str, agent: &str) -> String {
    format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}:agent:{agent}")
}

/// The agent's default hub groups: one for the addon on this cluster, one for the addon.
pub fn default_groups(cluster: &str, addon: &str) -> Vec<String> {
    vec![
        format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}"),
        format!("system:open-cluster-management:addon:{addon}"),
    ]
}

/// `<addon>-hub-kubeconfig`: the Secret the registration agent writes the agent's hub
/// kubeconfig to, in the agent's install namespace.
pub fn hub_kubeconfig_secret(addon: &str) -> String {
    format!("{addon}-hub-kubeconfig")
}

/// `<addon>-<signer with / as ->-client-cert`: the Secret of a custom signer's certificate.
pub fn custom_signed_secret(addon: &str, signer: &str) -> String {
    format!("{addon}-{}-client-cert", signer.replace('/', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_names() {
        assert_eq!(
            deploy_work_name("helloworld", 0),
            "addon-helloworld-deploy-0"
        );
        assert_eq!(
            pre_delete_work_name("helloworld"),
            "addon-helloworld-pre-delete"
        );
        assert_eq!(hub_kubeconfig_secret("a"), "a-hub-kubeconfig");
        assert_eq!(custom_signed_secret("a", "x.io/s"), "a-x.io-s-client-cert");
    }
}
