//! Waiting in tests for what controllers do in the background.
//!
//! Controllers and agents run as tasks: a test changes something, then waits until the
//! effect shows. [`eventually`] polls a check until it holds or a timeout passes and says
//! which; [`wait_for`] does the same and fails the test, naming what it waited for. Both use
//! tokio's clock, so they follow a paused clock (`tokio::time::pause`) as the controllers do.
//!
//! ```
//! use std::time::Duration;
//!
//! use ocm_testkit::{FakeCluster, Gvr};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cluster = FakeCluster::new();
//! let store = cluster.store().clone();
//! let configmaps = Gvr::new("", "v1", "configmaps");
//! tokio::spawn({
//!     let store = store.clone();
//!     let configmaps = configmaps.clone();
//!     async move {
//!         tokio::time::sleep(Duration::from_millis(50)).await;
//!         let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
//!                         "metadata": {"name": "late", "namespace": "default"}});
//!         store.create(&configmaps, "default", cm, &Default::default()).unwrap();
//!     }
//! });
//! ocm_testkit::wait::wait_for("ConfigMap default/late", Duration::from_secs(5), async || {
//!     store.get(&configmaps, "default", "late").is_ok()
//! })
//! .await;
//! assert!(!ocm_testkit::wait::eventually(Duration::from_millis(100), async || false).await);
//! # }
//! ```

use std::time::Duration;

/// How often [`eventually`] and [`wait_for`] run their check.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Runs `check` every [`POLL_INTERVAL`] until it returns `true` (then `true`) or `timeout`
/// has passed (then `false`). The check runs at least once.
pub async fn eventually(timeout: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// [`eventually`], failing the test when `check` does not hold within `timeout`.
///
/// # Panics
///
/// With `timed out after {timeout:?} waiting for {what}` when the check never held.
pub async fn wait_for(what: &str, timeout: Duration, check: impl AsyncFnMut() -> bool) {
    if !eventually(timeout, check).await {
        panic!("timed out after {timeout:?} waiting for {what}");
    }
}
