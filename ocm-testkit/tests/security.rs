//! The loopback server's secrets and identities: tokens nobody can compute, files only their
//! owner reads, uids never handed out twice (issue #29).

use k8s_openapi::api::core::v1::ConfigMap;
use ocm_testkit::{FakeCluster, Identity};

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = Some("default".into());
    cm
}

#[test]
fn tokens_are_random_per_identity() {
    let a = Identity::new("alice", ["dev"]);
    let b = Identity::new("alice", ["dev"]);
    assert_ne!(
        a.token, b.token,
        "the same user and groups get different tokens"
    );
    assert!(a.token.starts_with("ocm-testkit-"));
    // 128 random bits, hex.
    assert_eq!(a.token.len(), "ocm-testkit-".len() + 32);
    // Two servers built the same way give their administrators different tokens.
    let one = FakeCluster::builder().authentication(true).build();
    let two = FakeCluster::builder().authentication(true).build();
    let admin = |c: &FakeCluster| {
        c.identities()
            .into_iter()
            .find(|i| i.user == "admin")
            .expect("an administrator")
            .token
    };
    assert_ne!(admin(&one), admin(&two));
}

#[test]
fn uids_differ_between_servers_unless_seeded() {
    let uid = |c: &FakeCluster| {
        c.create(&config_map("same"))
            .expect("create")
            .metadata
            .uid
            .expect("a uid")
    };
    // A server started again with its state lost hands out new uids.
    assert_ne!(uid(&FakeCluster::new()), uid(&FakeCluster::new()));
    // A seed makes them repeatable, for tests that want that.
    let seeded = || FakeCluster::builder().uid_seed(42).build();
    assert_eq!(uid(&seeded()), uid(&seeded()));
}

#[cfg(unix)]
#[tokio::test]
async fn kubeconfigs_and_saved_state_are_their_owners_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("ocm-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = FakeCluster::builder().authentication(true).build();
    cluster.create(&config_map("kept")).unwrap();
    let server = cluster.serve_loopback().await.unwrap();
    let kubeconfig = dir.join("admin.kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let state = dir.join("state.json");
    cluster.store().save(&state).unwrap();
    for path in [&kubeconfig, &state] {
        let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
