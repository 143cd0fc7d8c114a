//! The one loop of the crate's whole-round controllers: run a round, then wait for a change,
//! the round's requeue time or the shutdown.
//!
//! Most controllers of this crate reconcile one object per key through kube-runtime's
//! `Controller` (the ManifestWorkReplicaSet controller, the work agent). Some reconcile a
//! whole set of objects in each round instead, as their upstream counterparts do from one
//! informer cache: the addon manager ([`crate::addon::manager`]), a fan-out
//! ([`crate::fanout`]) and the ClusterClaim reporter ([`crate::registration`]). They watch
//! through kube-runtime ([`changes`]: a `watcher` with kube-runtime's default backoff, so a
//! watch that fails is retried with a growing delay instead of at once) and are driven by
//! [`run_rounds`]. The watches read raw objects, which they never decode: an object that does
//! not decode (or nests deeper than `serde_json`'s 128 levels) is a change like any other, and
//! the round reads each object on its own (`crate::read`). The steps:
//!
//! 1. run a round, which says how long to wait at most before the next one;
//! 2. wait until a watch reports a change, that time passes, or `shutdown` completes (then
//!    stop; also when every watch stream has ended);
//! 3. after a change, wait `settle` more while draining further changes, so a burst of
//!    changes costs one round; then go to 1.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};
use ocm_api::k8s::object::RawObject;

/// One item per change of the objects `api` and `config` select, from a kube-runtime
/// `watcher` of raw objects (see the [module docs](self)) restarted with its default backoff
/// after an error.
pub(crate) fn changes(api: Api<RawObject>, config: watcher::Config) -> BoxStream<'static, ()> {
    watcher(api, config).default_backoff().map(|_| ()).boxed()
}

/// Runs `round` until `shutdown` completes (or every stream of `changes` has ended), as the
/// [module docs](self) say. `round` returns how long to wait at most before the next round.
pub(crate) async fn run_rounds<F, Fut>(
    changes: Vec<BoxStream<'static, ()>>,
    settle: Duration,
    shutdown: impl Future<Output = ()>,
    mut round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Duration>,
{
    let mut events = futures::stream::select_all(changes);
    if events.is_empty() {
        // Nothing to watch: only the requeue times and the shutdown count.
        events.push(futures::stream::pending().boxed());
    }
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let wait = round().await;
        tokio::select! {
            _ = &mut shutdown => return,
            _ = tokio::time::sleep(wait) => {}
            next = events.next() => {
                if next.is_none() {
                    return;
                }
                let batch = tokio::time::sleep(settle);
                tokio::pin!(batch);
                loop {
                    tokio::select! {
                        _ = &mut batch => break,
                        _ = &mut shutdown => return,
                        more = events.next() => if more.is_none() { return },
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn channel() -> (
        tokio::sync::mpsc::UnboundedSender<()>,
        BoxStream<'static, ()>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stream =
            futures::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|()| ((), rx)) },
            )
            .boxed();
        (tx, stream)
    }

    /// Waits (in real time, at most 10 s) until `rounds` reaches `n`.
    async fn reach(rounds: &AtomicUsize, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while rounds.load(Ordering::SeqCst) < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} rounds, expected {n}",
                rounds.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A burst of changes costs one round; the requeue time and the shutdown are kept.
    #[tokio::test]
    async fn bursts_coalesce_and_requeues_and_shutdown_are_kept() {
        let (tx, stream) = channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let rounds = Arc::new(AtomicUsize::new(0));
        let counter = rounds.clone();
        // Rounds ask to run again after 2 s; changes settle for 300 ms.
        let task = tokio::spawn(run_rounds(
            vec![stream],
            Duration::from_millis(300),
            async {
                let _ = stopped.await;
            },
            move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Duration::from_secs(2)
                }
            },
        ));
        reach(&rounds, 1).await;
        for _ in 0..6 {
            tx.send(()).unwrap();
        }
        reach(&rounds, 2).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 2, "one round for the burst");
        reach(&rounds, 3).await; // the requeue time
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("stops at shutdown")
            .unwrap();
    }

    /// When every watch has ended there is nothing left to wait for.
    #[tokio::test]
    async fn ends_with_its_streams() {
        let (tx, stream) = channel();
        drop(tx);
        let run = run_rounds(
            vec![stream],
            Duration::ZERO,
            std::future::pending(),
            || async { Duration::from_secs(3600) },
        );
        tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .expect("ends with its streams");
    }
}
