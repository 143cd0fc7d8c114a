//! Process lifecycle: one shutdown signal for every `run`, started by SIGTERM or SIGINT.
//!
//! Every long-running `run` of the SDK ([`WorkAgent::run`](crate::agent::WorkAgent::run),
//! [`ReplicaSetController::run`](crate::replicaset::controller::ReplicaSetController::run),
//! `ocm_placement`'s `PlacementController::run` and `ClusterInventoryController::run`, the
//! addon manager's) takes its shutdown as `impl Future<Output = ()> + Send + 'static` (some
//! accept any future); none asks for `Sync`. [`Shutdown::cancelled`] is such a future, and so is
//! a [`CancellationToken`]'s `cancelled_owned()`, so one [`Shutdown`] stops them all.
//!
//! On shutdown a `run` stops starting new reconciles, lets the ones under way finish (so no
//! work is left half-applied: its resources, its AppliedManifestWork and its status are all
//! written, or none of the later ones is) and returns. The binaries then release their leader
//! lease ([`crate::runtime::leader`]) and exit.
//!
//! ```no_run
//! # async fn demo(agent: ocm_work::agent::WorkAgent) {
//! use ocm_work::runtime::shutdown::Shutdown;
//!
//! let shutdown = Shutdown::on_signals(); // SIGTERM (Kubernetes' stop signal) or SIGINT
//! agent.run(shutdown.cancelled()).await; // returns once in-flight syncs are done
//! # }
//! ```

use std::future::Future;

pub use tokio_util::sync::CancellationToken;

/// A shutdown signal shared by the tasks of a process: cancel it once, every holder sees it.
///
/// Cloning is cheap; all clones share the signal. [`Shutdown::child`] derives a signal that
/// is cancelled with this one but may also be cancelled on its own (for example to stop the
/// controllers of a replica that lost its leadership while the process keeps running).
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    /// A signal nobody has cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A signal cancelled at the first SIGTERM or SIGINT (Ctrl-C) the process receives (on
    /// non-Unix platforms: Ctrl-C). Needs a Tokio runtime.
    pub fn on_signals() -> Self {
        let shutdown = Self::new();
        let token = shutdown.token.clone();
        tokio::spawn(async move {
            let signal = wait_for_signal().await;
            tracing::info!(signal, "shutting down");
            token.cancel();
        });
        shutdown
    }

    /// Wraps an existing token.
    pub fn from_token(token: CancellationToken) -> Self {
        Self { token }
    }

    /// The underlying token.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// A signal cancelled with this one, or on its own.
    pub fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
        }
    }

    /// Starts the shutdown.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether the shutdown has started.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// A future that completes when the shutdown starts: what every `run` takes
    /// (`Send + Sync + 'static`).
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + Sync + use<> {
        self.token.clone().cancelled_owned()
    }
}

#[cfg(unix)]
async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        },
        _ => {
            // No signal handlers (a restricted sandbox): Ctrl-C only.
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

/// Turns any shutdown future into one that is `Send + Sync + 'static` (what kube's
/// `Controller::graceful_shutdown_on` wants), by awaiting it on a task of its own.
#[cfg(any(feature = "agent", feature = "hub"))]
pub(crate) fn sync_future(
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> (
    impl Future<Output = ()> + Send + Sync + 'static,
    CancellationToken,
) {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let watcher = tokio::spawn(async move {
        shutdown.await;
        cancel.cancel();
    });
    let done = token.clone();
    let future = async move {
        done.cancelled().await;
        watcher.abort();
    };
    (future, token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn assert_send_sync_static<F: Future<Output = ()> + Send + Sync + 'static>(_: &F) {}

    #[tokio::test]
    async fn clones_and_children_see_the_cancel() {
        let shutdown = Shutdown::new();
        let clone = shutdown.clone();
        let child = shutdown.child();
        let future = clone.cancelled();
        assert_send_sync_static(&future);
        assert!(!child.is_cancelled());
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(1), future)
            .await
            .expect("cancelled");
        assert!(child.is_cancelled());
        // A child cancelled on its own leaves the parent alone.
        let parent = Shutdown::new();
        let child = parent.child();
        child.cancel();
        assert!(!parent.is_cancelled());
    }

    #[tokio::test]
    async fn any_send_future_becomes_a_sync_one() {
        // A future holding a non-Sync value (a Cell) is Send but not Sync.
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let not_sync = async move {
            let cell = std::cell::Cell::new(0);
            let _ = rx.await;
            cell.set(1);
        };
        let (future, token) = sync_future(not_sync);
        assert_send_sync_static(&future);
        assert!(!token.is_cancelled());
        tx.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(1), future)
            .await
            .expect("completes after the original");
        assert!(token.is_cancelled());
    }
}
