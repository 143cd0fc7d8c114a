//! The agent's work queue: which works to sync, and when.
//!
//! [`WorkAgent::run`](super::WorkAgent::run) keeps one small queue of work names instead of a
//! kube `Controller`. Its rules are those of kube's controller (default configuration) that
//! the agent relied on:
//!
//! - a name is queued at most once; queued again, it keeps the earlier of its two times;
//! - a work is synced by at most one sync at a time; one queued while its sync runs is synced
//!   again right after (at the earlier of its queued time and the requeue the sync asks for);
//! - syncs of different works run concurrently, without a limit (kube's default);
//! - the requeue a sync asks for counts from the end of that sync;
//! - a forgotten name (a deleted work) leaves the queue, and a sync of it under way asks for
//!   no requeue;
//! - once the stop token is cancelled, no sync starts; the syncs under way finish, then
//!   [`WorkQueue::run`] returns.
//!
//! The syncs run inside the future of [`WorkQueue::run`] (like kube's runner), so the queue
//! costs a few maps and no task per work; each sync's future is boxed while it runs, so an
//! idle queue holds nothing of its size.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A queue of work names, shared by the feeds that add to it (informer listeners) and the one
/// loop that drains it ([`WorkQueue::run`]).
#[derive(Clone, Default)]
pub(super) struct WorkQueue {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Notify,
}

/// What a running work asks for once its sync ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterRun {
    /// Only what the sync itself asks for.
    Requeue,
    /// Queued while running: sync again no later than this.
    Again(Instant),
    /// Forgotten while running: nothing, whatever the sync asks for.
    Forgotten,
}

#[derive(Default)]
struct State {
    /// The waiting works (none of them running) and when each is due.
    due: HashMap<Arc<str>, Instant>,
    /// The same entries ordered by time.
    order: BTreeSet<(Instant, Arc<str>)>,
    /// The works whose sync is under way.
    running: HashMap<Arc<str>, AfterRun>,
}

impl State {
    fn schedule(&mut self, name: &str, at: Instant) {
        if let Some(after) = self.running.get_mut(name) {
            *after = match *after {
                AfterRun::Again(earlier) => AfterRun::Again(earlier.min(at)),
                AfterRun::Requeue | AfterRun::Forgotten => AfterRun::Again(at),
            };
            return;
        }
        let key = match self.due.get_key_value(name) {
            Some((_, due)) if *due <= at => return,
            Some((key, due)) => {
                let (key, old) = (key.clone(), *due);
                self.order.remove(&(old, key.clone()));
                key
            }
            None => Arc::from(name),
        };
        self.due.insert(key.clone(), at);
        self.order.insert((at, key));
    }

    fn forget(&mut self, name: &str) {
        if let Some(after) = self.running.get_mut(name) {
            *after = AfterRun::Forgotten;
        }
        if let Some((key, at)) = self.due.remove_entry(name) {
            self.order.remove(&(at, key));
        }
    }

    /// Takes the works due at `now` out of the waiting set and marks them running.
    fn start_due(&mut self, now: Instant) -> Vec<Arc<str>> {
        let mut started = Vec::new();
        while let Some((at, _)) = self.order.first() {
            if *at > now {
                break;
            }
            let Some((_, name)) = self.order.pop_first() else {
                break;
            };
            self.due.remove(&name);
            self.running.insert(name.clone(), AfterRun::Requeue);
            started.push(name);
        }
        started
    }

    /// Records the end of `name`'s sync, which asked to run again at `requeue` (if any).
    fn finish(&mut self, name: &str, requeue: Option<Instant>) {
        let next = match self.running.remove(name) {
            Some(AfterRun::Forgotten) => None,
            Some(AfterRun::Again(at)) => Some(requeue.map_or(at, |r| r.min(at))),
            Some(AfterRun::Requeue) | None => requeue,
        };
        if let Some(at) = next {
            self.schedule(name, at);
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.order.first().map(|(at, _)| *at)
    }
}

impl WorkQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `name` to be synced now.
    pub(super) fn add(&self, name: &str) {
        self.lock().schedule(name, Instant::now());
        self.shared.wake.notify_one();
    }

    /// Forgets `name`: it leaves the queue, and a sync of it under way asks for no requeue.
    pub(super) fn forget(&self, name: &str) {
        self.lock().forget(name);
    }

    /// Syncs the queued works with `sync` until `stop` is cancelled, then waits for the syncs
    /// under way. `sync` returns when to sync that work again (counted from its end), if ever.
    pub(super) async fn run<F, Fut>(&self, stop: &CancellationToken, mut sync: F)
    where
        F: FnMut(Arc<str>) -> Fut,
        Fut: Future<Output = Option<Duration>>,
    {
        let mut in_flight = FuturesUnordered::new();
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        loop {
            if stop.is_cancelled() {
                break;
            }
            let next = {
                let mut state = self.lock();
                for name in state.start_due(Instant::now()) {
                    let syncing = sync(name.clone());
                    // Boxed: the set keeps a stub the size of its future type for as long as
                    // it lives, and a sync's future is large (over 10 KiB for the agent's);
                    // boxed, it takes that room only while the sync runs.
                    in_flight.push(Box::pin(async move { (name, syncing.await) }));
                }
                state.next_due()
            };
            if let Some(at) = next {
                timer.as_mut().reset(at);
            }
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                Some((name, after)) = in_flight.next(), if !in_flight.is_empty() => {
                    self.finished(&name, after);
                }
                () = self.shared.wake.notified() => {}
                () = &mut timer, if next.is_some() => {}
            }
        }
        while let Some((name, after)) = in_flight.next().await {
            self.finished(&name, after);
        }
    }

    fn finished(&self, name: &str, after: Option<Duration>) {
        let requeue = after.map(|after| {
            let now = Instant::now();
            now.checked_add(after).unwrap_or_else(|| far_future(now))
        });
        self.lock().finish(name, requeue);
    }
}

/// About 30 years from `now`, as tokio's own "never".
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(86_400 * 365 * 30)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    type Log = Arc<Mutex<Vec<(String, Duration)>>>;

    /// Runs `queue` with a sync that logs each start (name, time since `t0`), takes `busy`, and
    /// asks for the requeue `requeue(name)`; returns the log, the stop token and the task.
    fn spawn_queue(
        queue: &WorkQueue,
        busy: Duration,
        requeue: impl Fn(&str) -> Option<Duration> + Send + Sync + 'static,
    ) -> (Log, CancellationToken, tokio::task::JoinHandle<()>) {
        let log: Log = Arc::default();
        let stop = CancellationToken::new();
        let t0 = Instant::now();
        let task = {
            let queue = queue.clone();
            let log = log.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                queue
                    .run(&stop, |name| {
                        let log = log.clone();
                        let after = requeue(&name);
                        async move {
                            log.lock().unwrap().push((name.to_string(), t0.elapsed()));
                            tokio::time::sleep(busy).await;
                            after
                        }
                    })
                    .await;
            })
        };
        (log, stop, task)
    }

    /// When each logged sync started, in whole seconds.
    fn times(log: &Log) -> Vec<u64> {
        log.lock()
            .unwrap()
            .iter()
            .map(|(_, t)| t.as_secs())
            .collect()
    }

    fn names(log: &Log) -> Vec<String> {
        log.lock().unwrap().iter().map(|(n, _)| n.clone()).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_name_queued_twice_before_it_starts_syncs_once() {
        let queue = WorkQueue::default();
        queue.add("a");
        queue.add("a");
        queue.add("b");
        let (log, stop, task) = spawn_queue(&queue, Duration::from_millis(10), |_| None);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut seen = names(&log);
        seen.sort();
        assert_eq!(seen, ["a", "b"]);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_work_queued_while_its_sync_runs_is_synced_once_after_it_not_beside_it() {
        let queue = WorkQueue::default();
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let starts = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let task = {
            let (queue, stop) = (queue.clone(), stop.clone());
            let (running, most, starts) = (running.clone(), most.clone(), starts.clone());
            tokio::spawn(async move {
                queue
                    .run(&stop, |_| {
                        let (running, most, starts) =
                            (running.clone(), most.clone(), starts.clone());
                        async move {
                            starts.fetch_add(1, Ordering::SeqCst);
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            running.fetch_sub(1, Ordering::SeqCst);
                            None
                        }
                    })
                    .await;
            })
        };
        queue.add("a");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(starts.load(Ordering::SeqCst), 1);
        // Three triggers while the first sync runs: one more sync, after the first.
        queue.add("a");
        queue.add("a");
        tokio::time::sleep(Duration::from_millis(100)).await;
        queue.add("a");
        assert_eq!(
            starts.load(Ordering::SeqCst),
            1,
            "no second sync beside the first"
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(starts.load(Ordering::SeqCst), 2);
        assert_eq!(most.load(Ordering::SeqCst), 1);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn different_works_sync_concurrently() {
        let queue = WorkQueue::default();
        for name in ["a", "b", "c"] {
            queue.add(name);
        }
        let (log, stop, task) = spawn_queue(&queue, Duration::from_secs(10), |_| None);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(names(&log).len(), 3, "all three started before any ended");
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_requeue_counts_from_the_end_of_the_sync() {
        let queue = WorkQueue::default();
        queue.add("a");
        let (log, stop, task) = spawn_queue(&queue, Duration::from_secs(2), |_| {
            Some(Duration::from_secs(10))
        });
        tokio::time::sleep(Duration::from_secs(40)).await;
        // Starts at 0, ends at 2, again at 12, ends at 14, again at 24, then 36.
        assert_eq!(times(&log), [0, 12, 24, 36]);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_trigger_brings_a_requeue_forward_and_a_later_one_does_not_delay_it() {
        let queue = WorkQueue::default();
        queue.add("a");
        let (log, stop, task) =
            spawn_queue(&queue, Duration::ZERO, |_| Some(Duration::from_secs(30)));
        tokio::time::sleep(Duration::from_secs(5)).await;
        queue.add("a");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(times(&log), [0, 5]);
        // The requeue of the second sync (at 35 s) is not pushed back by a longer one, and
        // nothing runs in between.
        tokio::time::sleep(Duration::from_secs(29)).await;
        assert_eq!(names(&log).len(), 2);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(times(&log), [0, 5, 35]);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_forgotten_work_leaves_the_queue_and_its_running_sync_asks_for_nothing() {
        let queue = WorkQueue::default();
        queue.add("gone");
        let (log, stop, task) = spawn_queue(&queue, Duration::from_secs(1), |_| {
            Some(Duration::from_secs(5))
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Forgotten while its sync runs: that sync's requeue is dropped.
        queue.forget("gone");
        // Forgotten while waiting: never synced.
        {
            let mut state = queue.lock();
            state.schedule("later", Instant::now() + Duration::from_secs(3));
        }
        queue.forget("later");
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(names(&log), ["gone"]);
        {
            let state = queue.lock();
            assert!(state.due.is_empty() && state.order.is_empty() && state.running.is_empty());
        }
        // Added again (a work re-created under the same name): synced again.
        queue.add("gone");
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(names(&log), ["gone", "gone"]);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_starts_nothing_new_and_waits_for_the_syncs_under_way() {
        let queue = WorkQueue::default();
        let finished = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let task = {
            let (queue, stop, finished) = (queue.clone(), stop.clone(), finished.clone());
            tokio::spawn(async move {
                queue
                    .run(&stop, |_| {
                        let finished = finished.clone();
                        async move {
                            tokio::time::sleep(Duration::from_secs(10)).await;
                            finished.fetch_add(1, Ordering::SeqCst);
                            Some(Duration::ZERO)
                        }
                    })
                    .await;
            })
        };
        queue.add("a");
        tokio::time::sleep(Duration::from_secs(1)).await;
        stop.cancel();
        queue.add("b");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!task.is_finished(), "run waits for the sync under way");
        task.await.unwrap();
        assert_eq!(
            finished.load(Ordering::SeqCst),
            1,
            "a ended; b never started"
        );
        // Nothing ran after the stop, even though a asked to run again at once.
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(finished.load(Ordering::SeqCst), 1);
    }
}
