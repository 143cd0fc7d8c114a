//! The one round-based watch loop of the SDK's whole-set controllers (feature `rounds`).
//!
//! Some controllers reconcile a whole set of objects in each round, as their upstream
//! counterparts do from one informer cache: the Placement, inventory, cluster lease,
//! ClusterProfile and SIG PlacementDecision controllers of `ocm-placement`, and the addon
//! manager, fan-out and ClusterClaim reporter of `ocm-work`. They all run on
//! [`run_rounds`], which lives here because it is the one crate below both. The watches that
//! feed it (kube-runtime `watcher`s or reflectors) stay with each crate; the loop only sees one
//! item per change.
//!
//! The steps:
//!
//! 1. run a round; it says ([`Round`]) how long to wait at most before the next one, and
//!    whether it failed;
//! 2. wait until a watch reports a change, that time passes, or `shutdown` completes (then
//!    stop; also when every watch stream has ended);
//! 3. after a change, wait [`RoundLoop::settle`] more while draining further changes, so a
//!    burst of changes costs one round; then go to 1.
//!
//! A round that fails is run again after a backoff that starts at [`RETRY_MIN`] and doubles
//! up to [`RETRY_MAX`], sooner if a change comes; the first round that succeeds resets it.
//!
//! ```
//! use std::time::Duration;
//! use ocm_api::rounds::{Round, RoundLoop};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut rounds = 0;
//! // No watches: only the requeue times and the shutdown count.
//! let shutdown = tokio::time::sleep(Duration::from_millis(50));
//! RoundLoop::new()
//!     .run(Vec::new(), shutdown, || {
//!         rounds += 1;
//!         async { Round::after(Duration::from_millis(10)) }
//!     })
//!     .await;
//! assert!(rounds >= 2);
//! # }
//! ```

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;

/// The first wait before a failed round is run again.
pub const RETRY_MIN: Duration = Duration::from_millis(100);

/// The longest wait between two failed rounds.
pub const RETRY_MAX: Duration = Duration::from_secs(60);

/// What one round asks of the loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Round {
    /// Run again after this long at the latest (and at the latest after the loop's resync
    /// period, when it has one).
    pub requeue_after: Option<Duration>,
    /// The round failed: run again after the loop's backoff, or sooner as
    /// [`Round::requeue_after`] says.
    pub retry: bool,
}

impl Round {
    /// A round that succeeded and asks to run again after `wait`.
    pub fn after(wait: Duration) -> Self {
        Self {
            requeue_after: Some(wait),
            retry: false,
        }
    }

    /// A round that succeeded and asks to run again after `wait`, if anything.
    pub fn requeue(wait: Option<Duration>) -> Self {
        Self {
            requeue_after: wait,
            retry: false,
        }
    }

    /// A round that failed: run again after the loop's backoff.
    pub fn failed() -> Self {
        Self {
            requeue_after: None,
            retry: true,
        }
    }

    /// This round, marked as failed (`retry`) or not.
    #[must_use]
    pub fn retry(mut self, retry: bool) -> Self {
        self.retry = retry;
        self
    }
}

impl From<Duration> for Round {
    fn from(wait: Duration) -> Self {
        Self::after(wait)
    }
}

/// The settings of [`run_rounds`]: how long a burst of changes settles, and the resync period.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct RoundLoop {
    /// After a change, how long further changes are drained before the next round.
    pub settle: Duration,
    /// The longest wait between two rounds, whatever a round asks (`None`: as long as it
    /// asks; a round that asks nothing then waits for a change).
    pub resync: Option<Duration>,
}

impl Default for RoundLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl RoundLoop {
    /// No settling and no resync period.
    pub fn new() -> Self {
        Self {
            settle: Duration::ZERO,
            resync: None,
        }
    }

    /// Drains further changes for `settle` after a change before the next round.
    #[must_use]
    pub fn settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Runs a round at least every `resync`.
    #[must_use]
    pub fn resync(mut self, resync: Duration) -> Self {
        self.resync = Some(resync);
        self
    }

    /// How long to wait after `round`, with the backoff of failed rounds in `backoff`.
    fn wait(&self, round: Round, backoff: &mut Duration) -> Duration {
        let mut wait = round.requeue_after.unwrap_or(Duration::MAX);
        if let Some(resync) = self.resync {
            wait = wait.min(resync);
        }
        if round.retry {
            wait = wait.min(*backoff);
            *backoff = (*backoff * 2).min(RETRY_MAX);
        } else {
            *backoff = RETRY_MIN;
        }
        wait
    }

    /// Runs `round` until `shutdown` completes (or every stream of `changes` has ended), as
    /// the [module docs](self) say.
    pub async fn run<F, Fut, R>(
        self,
        changes: Vec<BoxStream<'static, ()>>,
        shutdown: impl Future<Output = ()>,
        mut round: F,
    ) where
        F: FnMut() -> Fut,
        Fut: Future<Output = R>,
        R: Into<Round>,
    {
        let mut events = futures::stream::select_all(changes);
        if events.is_empty() {
            // Nothing to watch: only the requeue times and the shutdown count.
            events.push(futures::stream::pending().boxed());
        }
        let mut shutdown = std::pin::pin!(shutdown);
        let mut backoff = RETRY_MIN;
        loop {
            let wait = self.wait(round().await.into(), &mut backoff);
            let sleep = async {
                if wait == Duration::MAX {
                    std::future::pending::<()>().await;
                } else {
                    tokio::time::sleep(wait).await;
                }
            };
            tokio::select! {
                () = &mut shutdown => return,
                () = sleep => {}
                next = events.next() => {
                    if next.is_none() {
                        return;
                    }
                    let batch = tokio::time::sleep(self.settle);
                    tokio::pin!(batch);
                    loop {
                        tokio::select! {
                            () = &mut batch => break,
                            () = &mut shutdown => return,
                            more = events.next() => if more.is_none() { return },
                        }
                    }
                }
            }
        }
    }
}

/// [`RoundLoop::run`] with `settle` and no resync period: the rounds say when to run again.
pub async fn run_rounds<F, Fut, R>(
    changes: Vec<BoxStream<'static, ()>>,
    settle: Duration,
    shutdown: impl Future<Output = ()>,
    round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = R>,
    R: Into<Round>,
{
    RoundLoop::new()
        .settle(settle)
        .run(changes, shutdown, round)
        .await;
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

    /// Failed rounds back off from `RETRY_MIN`, doubling up to `RETRY_MAX`, capped by the
    /// round's own requeue and the resync period; a success resets the backoff.
    #[test]
    fn failed_rounds_back_off_and_a_success_resets() {
        let settings = RoundLoop::new().resync(Duration::from_secs(30));
        let mut backoff = RETRY_MIN;
        let waits: Vec<Duration> = (0..4)
            .map(|_| settings.wait(Round::failed(), &mut backoff))
            .collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800].map(Duration::from_millis).to_vec()
        );
        for _ in 0..20 {
            settings.wait(Round::failed(), &mut backoff);
        }
        assert_eq!(backoff, RETRY_MAX);
        assert_eq!(
            settings.wait(Round::failed(), &mut backoff),
            Duration::from_secs(30),
            "the resync period caps the backoff"
        );
        assert_eq!(
            settings.wait(Round::after(Duration::from_secs(5)), &mut backoff),
            Duration::from_secs(5)
        );
        assert_eq!(backoff, RETRY_MIN, "a success resets the backoff");
        assert_eq!(
            settings.wait(Round::default(), &mut backoff),
            Duration::from_secs(30),
            "a round that asks nothing waits for the resync period"
        );
        assert_eq!(
            RoundLoop::new().wait(Round::default(), &mut backoff),
            Duration::MAX,
            "or for a change, without one"
        );
    }

    /// The loop waits for a change when rounds ask nothing and there is no resync period.
    #[tokio::test(start_paused = true)]
    async fn without_a_resync_period_a_quiet_round_waits_for_a_change() {
        let (tx, stream) = channel();
        let rounds = Arc::new(AtomicUsize::new(0));
        let counter = rounds.clone();
        let task =
            tokio::spawn(
                RoundLoop::new().run(vec![stream], std::future::pending(), move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                    async { Round::default() }
                }),
            );
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 1);
        tx.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 2);
        task.abort();
    }
}
